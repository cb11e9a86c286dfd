// SPDX-License-Identifier: Apache-2.0
// Record once, replay many (tools/replay.hpp), compiled for float and double: in
// a program only where it calls them.
#include "burtorch/tools/replay.hpp"

#include "burtorch/core/detail/recorder.hpp"
#include "burtorch/core/detail/state.hpp"
#include "burtorch/core/detail/sweep.hpp"
#include "burtorch/core/detail/views.hpp"

namespace burtorch {

template Replay replayable<float>(Tape<float>&, Mark, Value<float>) noexcept;
template Status set_value<float>(Tape<float>&, Value<float>, float) noexcept;
template Status set_values<float>(Tape<float>&, View, const float*) noexcept;
template Status replay<float>(Tape<float>&, const Replay&) noexcept;
template Status replay_forward<float>(Tape<float>&, const Replay&) noexcept;
template Replay replayable<double>(Tape<double>&, Mark, Value<double>) noexcept;
template Status set_value<double>(Tape<double>&, Value<double>, double) noexcept;
template Status set_values<double>(Tape<double>&, View, const double*) noexcept;
template Status replay<double>(Tape<double>&, const Replay&) noexcept;
template Status replay_forward<double>(Tape<double>&, const Replay&) noexcept;

}  // namespace burtorch

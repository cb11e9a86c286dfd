// SPDX-License-Identifier: Apache-2.0
// The deprecated members of libburtorch 0.2 (tape_deprecated.hpp), compiled
// for float and double, so that a 0.2 program that calls one with
// <burtorch/tape.hpp> alone still links. Removed in 0.4.
#include "burtorch/tape_deprecated.hpp"

#include "burtorch/core/state.hpp"
#include "burtorch/frozen.hpp"
#include "burtorch/inspect.hpp"
#include "burtorch/nn/losses.hpp"
#include "burtorch/replay.hpp"
#include "burtorch/tape.hpp"
#include "burtorch/views.hpp"

namespace burtorch {

template class detail::DeprecatedTapeMembers<float>;
template class detail::DeprecatedTapeMembers<double>;

}  // namespace burtorch

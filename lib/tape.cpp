// SPDX-License-Identifier: Apache-2.0
// The compiled core of libburtorch for float and double: Tape<T>'s
// out-of-line members (state, sweep), Recorder<T>'s, the recorders of
// core/views.hpp; status_name.
#include "burtorch/core/detail/recorder.hpp"
#include "burtorch/core/detail/state.hpp"
#include "burtorch/core/detail/sweep.hpp"
#include "burtorch/core/detail/views.hpp"

namespace burtorch {

template class Tape<float>;
template class Tape<double>;
template class Recorder<float>;
template class Recorder<double>;

template ViewList view_list<float>(Tape<float>&, const View*, std::size_t) noexcept;
template ViewList view_list_rows<float>(Tape<float>&, View, Index) noexcept;
template Value<float> reduce<float>(Tape<float>&, Op, const Value<float>*, std::size_t) noexcept;
template Value<float> reduce<float>(Tape<float>&, Op, View) noexcept;
template Value<float> inner_product<float>(Tape<float>&, const Value<float>*, const Value<float>*, std::size_t,
                                           const Value<float>*) noexcept;
template Value<float> inner_product<float>(Tape<float>&, View, View, const Value<float>*) noexcept;
template Value<float> inner_product<float>(Tape<float>&, Index, ViewList, const Value<float>*) noexcept;
template View matvec<float>(Tape<float>&, Index, Index, ViewList, Index) noexcept;
template View scale_shift<float>(Tape<float>&, Index, Index, Index, Index) noexcept;
template Index detail::matvec_descriptor<float>(Tape<float>&, Index, Index, ViewList, Index) noexcept;
template ViewList view_list<double>(Tape<double>&, const View*, std::size_t) noexcept;
template ViewList view_list_rows<double>(Tape<double>&, View, Index) noexcept;
template Value<double> reduce<double>(Tape<double>&, Op, const Value<double>*, std::size_t) noexcept;
template Value<double> reduce<double>(Tape<double>&, Op, View) noexcept;
template Value<double> inner_product<double>(Tape<double>&, const Value<double>*, const Value<double>*, std::size_t,
                                             const Value<double>*) noexcept;
template Value<double> inner_product<double>(Tape<double>&, View, View, const Value<double>*) noexcept;
template Value<double> inner_product<double>(Tape<double>&, Index, ViewList, const Value<double>*) noexcept;
template View matvec<double>(Tape<double>&, Index, Index, ViewList, Index) noexcept;
template View scale_shift<double>(Tape<double>&, Index, Index, Index, Index) noexcept;
template Index detail::matvec_descriptor<double>(Tape<double>&, Index, Index, ViewList, Index) noexcept;

const char* status_name(Status status) noexcept {
  const char* text = "unknown status";
  switch (status) {
    case Status::kOk:
      text = "ok";
      break;
    case Status::kCapacityExceeded:
      text = "capacity exceeded";
      break;
    case Status::kForeignValue:
      text = "value from another tape";
      break;
    case Status::kInvalidHandle:
      text = "invalid or discarded value";
      break;
    case Status::kInvalidArgument:
      text = "invalid argument";
      break;
    case Status::kIoError:
      text = "i/o error";
      break;
    case Status::kBadFormat:
      text = "bad format";
      break;
    case Status::kChecksumMismatch:
      text = "checksum mismatch";
      break;
    case Status::kTruncated:
      text = "truncated";
      break;
    case Status::kEmptyHandle:
      text = "empty value (default or from an empty list)";
      break;
    default:
      break;
  }
  return text;
}

}  // namespace burtorch

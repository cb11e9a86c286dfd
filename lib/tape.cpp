// SPDX-License-Identifier: Apache-2.0
// The compiled part of libburtorch: Tape<float> and Tape<double>.
#include "burtorch/detail/tape_impl.hpp"

namespace burtorch {

template class Tape<float>;
template class Tape<double>;

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

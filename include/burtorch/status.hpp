// Error values. Recording operations never fail loudly: they set a sticky
// status on the tape and return an invalid handle that later operations
// propagate. Calls that return a Status report their own outcome.
#ifndef BURTORCH_STATUS_HPP
#define BURTORCH_STATUS_HPP

#include <cstdint>

namespace burtorch {

enum class Status : std::uint8_t {
  kOk = 0,
  kCapacityExceeded = 1,  // node or argument-slot storage is full
  kForeignValue = 2,      // an operand was recorded on another tape
  kInvalidHandle = 3,     // an operand is invalid or was discarded by rewind
  kInvalidArgument = 4,   // bad call: empty list, bad mark, unusable buffer
  kIoError = 5,           // a byte stream failed to read or write
  kBadFormat = 6,         // checkpoint: wrong magic, version, type or size
  kChecksumMismatch = 7,  // checkpoint: payload does not match its CRC
  kTruncated = 8,         // checkpoint: stream ended early
  kEmptyHandle = 9,       // an operand is an empty handle: default-constructed,
                          // or the result of a call that had no tape to record
                          // on (an empty or null operand list)
};

// A short, stable, human-readable name ("ok", "capacity exceeded", ...).
const char* status_name(Status status) noexcept;

}  // namespace burtorch

#endif  // BURTORCH_STATUS_HPP

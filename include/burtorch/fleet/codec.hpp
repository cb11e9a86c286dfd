// SPDX-License-Identifier: Apache-2.0
/// @file
/// The update codec of a device fleet: a model update (a vector of FP32
/// numbers, e.g. the parameters after local training minus those before)
/// compressed into a frame that a receiver checks before it uses a byte.
/// Heap-free, no I/O: the caller owns the update, the error-feedback
/// residual, the frame buffer and the scratch; it runs on every target.
///
/// Codecs (docs/fleet.md):
///  - kRaw    every value as FP32 (4 n bytes);
///  - kTopK   the k values of largest magnitude, with their indices (gaps
///            between increasing indices as LEB128 varints, then k FP32);
///  - kRandK  k values at indices drawn from a seed the frame carries
///            (selection sampling; sender and receiver draw the same ones):
///            4 k bytes, no indices;
///  - kInt8   blocks of `block` values, each an FP32 scale s = max|x| / 127
///            (at most the largest FP32 s with s * 127 finite, so a block
///            holding +-FLT_MAX still decodes to finite values)
///            and one int8 q = round(x / s) per value (half away from zero):
///            |x - s q| <= s / 2 up to the rounding of the FP32 division and
///            product (a relative 2^-16 of s), n + 4 ceil(n / block) bytes.
/// With error feedback (a residual array per sender, zero at first) the
/// codec encodes c = update + residual and leaves in the residual what the
/// frame did not carry, c - decode(frame), so nothing is lost, only late.
///
/// Frame layout (little-endian), version 1:
///
///     offset  size  field
///          0     4  magic "BTFU"
///          4     1  version (1)
///          5     1  codec (0 raw, 1 topk, 2 randk, 3 int8)
///          6     2  block (int8: values per scale, >= 1; else 0)
///          8     4  count n (values of the update, >= 1)
///         12     4  kept k (values carried; raw and int8: n)
///         16     4  samples (the sender's sample count: its weight)
///         20     4  round
///         24     4  client
///         28     4  seed (randk: the index seed; else 0)
///         32     4  payload bytes
///         36     P  payload
///     36 + P     4  CRC-32 (as zlib.crc32) of bytes [0, 36 + P)
///
/// A receiver checks the whole frame (size, magic, version, codec, every
/// field, the CRC, every index and every value: finite, int8 q in [-127,
/// 127], scales s with s * 127 finite in FP32) before it writes anything:
/// a damaged frame is refused with a status and changes nothing. An
/// accepted frame decodes to finite values. What a receiver does for a
/// frame, accepted or refused, costs work bounded by the frame's size and
/// the receiver's capacity, never by a count the sender wrote: a frame
/// claiming more values than the receiver holds is refused from its header.
#ifndef BURTORCH_FLEET_CODEC_HPP
#define BURTORCH_FLEET_CODEC_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/status.hpp"

namespace burtorch {
namespace fleet {

/// How a frame carries an update.
enum class Codec : std::uint8_t {
  kRaw = 0,    ///< every value, FP32
  kTopK = 1,   ///< the k largest magnitudes and their indices
  kRandK = 2,  ///< k values at seeded random indices
  kInt8 = 3,   ///< int8 with an FP32 scale per block
};

constexpr std::uint8_t kFrameVersion = 1U;        ///< the version written and read
constexpr std::size_t kFrameHeaderBytes = 36U;    ///< header before the payload
constexpr std::size_t kFrameCrcBytes = 4U;        ///< CRC-32 after it
constexpr std::uint16_t kDefaultBlock = 64U;      ///< int8 values per scale
constexpr std::size_t kMaxVarintBytes = 5U;       ///< LEB128 of a 32-bit index gap

/// What the sender chooses.
struct EncodeOptions {
  Codec codec = Codec::kRaw;              ///< how the frame carries the update
  std::uint32_t kept = 0U;                ///< topk, randk: values carried (1 to n)
  std::uint16_t block = kDefaultBlock;    ///< int8: values per scale (>= 1)
  std::uint32_t samples = 0U;             ///< the sender's sample count (its weight)
  std::uint32_t round = 0U;               ///< round number, carried as is
  std::uint32_t client = 0U;              ///< sender id, carried as is
  std::uint32_t seed = 0U;                ///< randk: the index seed
};

/// A frame's header fields, as read.
struct FrameHeader {
  Codec codec = Codec::kRaw;         ///< the codec
  std::uint16_t block = 0U;          ///< int8: values per scale; else 0
  std::uint32_t count = 0U;          ///< n: values of the update
  std::uint32_t kept = 0U;           ///< values carried (raw and int8: n)
  std::uint32_t samples = 0U;        ///< the sender's sample count
  std::uint32_t round = 0U;          ///< round number
  std::uint32_t client = 0U;         ///< sender id
  std::uint32_t seed = 0U;           ///< randk: the index seed; else 0
  std::uint32_t payload_bytes = 0U;  ///< bytes between the header and the CRC
};

/// Bytes of the LEB128 varint of v (1 to 5).
constexpr std::size_t varint_bytes(std::uint32_t v) noexcept {
  std::size_t n = 1U;
  while (v >= 0x80U) {
    v >>= 7U;
    ++n;
  }
  return n;
}

/// The largest frame an update of n values can make with these options:
/// exact for raw, randk and int8, a bound for topk (every index gap at its
/// longest). 0 if the options are not valid for n, or the size does not fit
/// in 32 bits. Size the caller's frame buffer with it.
constexpr std::size_t max_frame_bytes(std::size_t n, const EncodeOptions& o) noexcept {
  const std::uint64_t fixed = kFrameHeaderBytes + kFrameCrcBytes;
  const std::uint64_t values = static_cast<std::uint64_t>(n);
  std::uint64_t payload = 0U;
  if ((n == 0U) || (values > 0xFFFFFFFFU)) {
    return 0U;
  }
  switch (o.codec) {
    case Codec::kRaw:
      payload = 4U * values;
      break;
    case Codec::kTopK:
      payload = ((o.kept == 0U) || (o.kept > values))
                    ? 0U
                    : (4U + varint_bytes(static_cast<std::uint32_t>(n - 1U))) * static_cast<std::uint64_t>(o.kept);
      break;
    case Codec::kRandK:
      payload = ((o.kept == 0U) || (o.kept > values)) ? 0U : 4U * static_cast<std::uint64_t>(o.kept);
      break;
    case Codec::kInt8:
      payload = (o.block == 0U) ? 0U : values + (4U * ((values + o.block - 1U) / o.block));
      break;
    default:
      payload = 0U;
      break;
  }
  return ((payload == 0U) || ((fixed + payload) > 0xFFFFFFFFU)) ? 0U : static_cast<std::size_t>(fixed + payload);
}

/// Encodes update[0, n) into frame[0, capacity) and sets *written to the
/// frame's size. With a residual (error feedback; nullptr: none) it encodes
/// c = update + residual and sets residual = c - decode(frame). topk needs
/// `scratch`, at least o.kept entries (the selection); the others take
/// nullptr. Ties in magnitude go to the lower index. Errors, with nothing
/// written (frame, residual and *written untouched): kInvalidArgument for
/// null pointers (topk's scratch included), n == 0 or above 2^32 - 1, a
/// non-finite update or residual value, or options not valid for n (kept 0
/// or above n for topk and randk, block 0 for int8, an unknown codec);
/// kCapacityExceeded if the frame does not fit in `capacity` or topk's
/// scratch is smaller than o.kept.
Status encode(const float* update, std::size_t n, float* residual, const EncodeOptions& o, std::uint8_t* frame,
              std::size_t capacity, std::size_t* written, std::uint32_t* scratch, std::size_t scratch_count) noexcept;

/// Checks a whole frame (every field, the CRC, every index and value) and
/// returns its header in *header; decodes nothing. kTruncated if `bytes`
/// is shorter than the header and CRC or than the size the header gives;
/// kBadFormat for a wrong magic, version, codec, field, index or value or
/// bytes after the frame; kChecksumMismatch for a wrong CRC;
/// kInvalidArgument for null pointers. *header untouched on error. Its work
/// is bounded by `bytes` (randk's values are checked without drawing their
/// indices).
Status check_frame(const std::uint8_t* frame, std::size_t bytes, FrameHeader* header) noexcept;

/// check_frame(), then the dense update: out[0, n) (zero where a sparse
/// frame carries nothing). kCapacityExceeded if n > capacity, decided
/// before any index is drawn. On any error nothing is written (out and
/// *header untouched). header may be nullptr.
Status decode(const std::uint8_t* frame, std::size_t bytes, float* out, std::size_t capacity,
              FrameHeader* header) noexcept;

/// check_frame(), then acc[i] += weight * value for each value the frame
/// carries (the others untouched): a server's weighted sum without a dense
/// buffer. The FP32 value is converted to T before the product. Errors as
/// decode(); nothing changed on error.
template <class T>
Status accumulate(const std::uint8_t* frame, std::size_t bytes, T weight, T* acc, std::size_t capacity,
                  FrameHeader* header) noexcept;

/// The indices randk draws: k of [0, n) in increasing order, from `seed`
/// (selection sampling over a SplitMix64 stream), into out[0, k). What
/// encode() and the receiver use; kInvalidArgument for k > n or n == 0.
Status randk_indices(std::uint32_t n, std::uint32_t k, std::uint32_t seed, std::uint32_t* out) noexcept;

/// The value an int8 frame carries for q at scale s: s * q in FP32, the
/// product the encoder's residual and every receiver compute.
inline float dequantize(float scale, std::int8_t q) noexcept { return scale * static_cast<float>(q); }

}  // namespace fleet
}  // namespace burtorch

#endif  // BURTORCH_FLEET_CODEC_HPP

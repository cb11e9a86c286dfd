// SPDX-License-Identifier: Apache-2.0
// The update codec's decoder (include/burtorch/fleet/codec.hpp; docs/fleet.md).
//
// The decoder never trusts a field: the frame's size must be the one its
// header gives, the CRC must match, and every field, index and value is
// checked in a first pass that writes nothing; only then does a second pass
// hand the values out. The first pass costs work bounded by the frame's
// size (randk's values are checked without drawing their indices); the
// second runs only for a frame whose count fits the receiver's capacity.
#include "burtorch/fleet/codec.hpp"

#include <cmath>

#include "burtorch/tools/checkpoint.hpp"
#include "fleet/wire.hpp"

namespace burtorch {
namespace fleet {
namespace {

// --- reading a frame ---------------------------------------------------------
// Each walk_*() walks the payload of a frame whose size and CRC were
// checked, calling visit(index, value) for each carried value in increasing
// index order; false at the first field, index or value that is not valid.
template <class Visit>
bool walk_raw(const std::uint8_t* p, const FrameHeader& h, Visit& visit) noexcept {
  const std::uint64_t n = h.count;
  if ((h.kept != n) || (h.block != 0U) || (h.seed != 0U) || (h.payload_bytes != (4U * n))) {
    return false;
  }
  for (std::uint32_t i = 0U; i < h.count; ++i) {
    wire::count_work();
    const float v = wire::get_f32(&p[4U * static_cast<std::size_t>(i)]);
    if (!wire::finite(v)) {
      return false;
    }
    visit(i, v);
  }
  return true;
}

// randk's fields and its k values, without drawing an index: the draw's
// length is the count the sender wrote (selection sampling always selects
// exactly k of n, so the draw cannot fail).
inline bool check_randk(const std::uint8_t* p, const FrameHeader& h) noexcept {
  const std::uint64_t k = h.kept;
  if ((k == 0U) || (k > h.count) || (h.block != 0U) || (h.payload_bytes != (4U * k))) {
    return false;
  }
  for (std::size_t j = 0U; j < h.kept; ++j) {
    wire::count_work();
    if (!wire::finite(wire::get_f32(&p[4U * j]))) {
      return false;
    }
  }
  return true;
}

template <class Visit>
bool walk_randk(const std::uint8_t* p, const FrameHeader& h, Visit& visit) noexcept {
  if (!check_randk(p, h)) {
    return false;
  }
  wire::RandkDraw draw(h.count, h.kept, h.seed);
  std::size_t j = 0U;
  for (std::uint32_t i = 0U; i < h.count; ++i) {
    if (!draw.next()) {
      continue;
    }
    const float v = wire::get_f32(&p[4U * j]);
    if (!wire::finite(v)) {
      return false;
    }
    visit(i, v);
    ++j;
  }
  return j == h.kept;
}

// An int8 block's scale at p: +0 (a block sent as zeros) or a normal float
// of at most kMaxScale, so that s * q is finite for every q (the encoder
// writes nothing else); false otherwise.
inline bool read_scale(const std::uint8_t* p, float* s) noexcept {
  const bool zero = wire::get_u32(p) == 0U;
  *s = wire::get_f32(p);
  return zero || ((*s >= FLT_MIN) && (*s <= wire::kMaxScale));
}

template <class Visit>
bool walk_int8(const std::uint8_t* p, const FrameHeader& h, Visit& visit) noexcept {
  const std::uint64_t n = h.count;
  if ((h.block == 0U) || (h.kept != n) || (h.seed != 0U)) {
    return false;
  }
  const std::uint64_t blocks = (n + h.block - 1U) / h.block;
  if (h.payload_bytes != (n + (4U * blocks))) {
    return false;
  }
  std::size_t at = 0U;
  float s = 0.0F;
  for (std::uint32_t i = 0U; i < h.count; ++i) {
    wire::count_work();
    if ((i % h.block) == 0U) {
      if (!read_scale(&p[at], &s)) {
        return false;
      }
      at += 4U;
    }
    const std::int8_t q = static_cast<std::int8_t>(p[at]);
    ++at;
    if (q < -127) {
      return false;
    }
    visit(i, dequantize(s, q));
  }
  return true;
}

// TopK's index gaps: every index below n and increasing, then exactly 4 k
// bytes of values; *values_at is where the values start.
inline bool check_topk_indices(const std::uint8_t* p, const FrameHeader& h, std::size_t* values_at) noexcept {
  const std::size_t size = h.payload_bytes;
  std::size_t at = 0U;
  std::uint64_t index = 0U;
  for (std::uint64_t j = 0U; j < h.kept; ++j) {
    wire::count_work();
    std::uint32_t gap = 0U;
    if (!wire::get_varint(p, size, &at, &gap)) {
      return false;
    }
    index = (j == 0U) ? gap : (index + 1U + gap);
    if (index >= h.count) {
      return false;
    }
  }
  *values_at = at;
  return (size - at) == (4U * static_cast<std::uint64_t>(h.kept));
}

template <class Visit>
bool walk_topk(const std::uint8_t* p, const FrameHeader& h, Visit& visit) noexcept {
  const std::uint64_t k = h.kept;
  std::size_t values = 0U;
  if ((k == 0U) || (k > h.count) || (h.block != 0U) || (h.seed != 0U) || !check_topk_indices(p, h, &values)) {
    return false;
  }
  std::size_t at = 0U;
  std::uint64_t index = 0U;
  for (std::uint64_t j = 0U; j < k; ++j) {
    wire::count_work();
    std::uint32_t gap = 0U;
    static_cast<void>(wire::get_varint(p, h.payload_bytes, &at, &gap));
    index = (j == 0U) ? gap : (index + 1U + gap);
    const float v = wire::get_f32(&p[values]);
    values += 4U;
    if (!wire::finite(v)) {
      return false;
    }
    visit(static_cast<std::uint32_t>(index), v);
  }
  return true;
}

template <class Visit>
bool walk(const std::uint8_t* frame, const FrameHeader& h, Visit& visit) noexcept {
  const std::uint8_t* p = &frame[kFrameHeaderBytes];
  switch (h.codec) {
    case Codec::kRaw:
      return walk_raw(p, h, visit);
    case Codec::kRandK:
      return walk_randk(p, h, visit);
    case Codec::kInt8:
      return walk_int8(p, h, visit);
    case Codec::kTopK:
      return walk_topk(p, h, visit);
    default:
      return false;
  }
}

struct Ignore {
  void operator()(std::uint32_t /*index*/, float /*value*/) const noexcept {}
};

// The first pass: every field, index and value, in work bounded by the
// payload (randk: its values, not its draw).
bool check_payload(const std::uint8_t* frame, const FrameHeader& h) noexcept {
  Ignore ignore;
  return (h.codec == Codec::kRandK) ? check_randk(&frame[kFrameHeaderBytes], h) : walk(frame, h, ignore);
}

// Checks size, magic, version, CRC and fields; fills *h.
Status read_frame(const std::uint8_t* frame, std::size_t bytes, FrameHeader* h) noexcept {
  if (frame == nullptr) {
    return Status::kInvalidArgument;
  }
  if (bytes < (kFrameHeaderBytes + kFrameCrcBytes)) {
    return Status::kTruncated;
  }
  if ((frame[0] != wire::kMagic[0]) || (frame[1] != wire::kMagic[1]) || (frame[2] != wire::kMagic[2]) || (frame[3] != wire::kMagic[3]) ||
      (frame[4] != kFrameVersion)) {
    return Status::kBadFormat;
  }
  const std::uint64_t payload = wire::get_u32(&frame[32]);
  const std::uint64_t total = kFrameHeaderBytes + payload + kFrameCrcBytes;
  if (bytes < total) {
    return Status::kTruncated;
  }
  if (bytes > total) {
    return Status::kBadFormat;
  }
  const std::size_t body = kFrameHeaderBytes + static_cast<std::size_t>(payload);
  if (crc32(0U, frame, body) != wire::get_u32(&frame[body])) {
    return Status::kChecksumMismatch;
  }
  if (frame[5] > static_cast<std::uint8_t>(Codec::kInt8)) {
    return Status::kBadFormat;
  }
  h->codec = static_cast<Codec>(frame[5]);
  h->block = wire::get_u16(&frame[6]);
  h->count = wire::get_u32(&frame[8]);
  h->kept = wire::get_u32(&frame[12]);
  h->samples = wire::get_u32(&frame[16]);
  h->round = wire::get_u32(&frame[20]);
  h->client = wire::get_u32(&frame[24]);
  h->seed = wire::get_u32(&frame[28]);
  h->payload_bytes = static_cast<std::uint32_t>(payload);
  if (h->count == 0U) {
    return Status::kBadFormat;
  }
  return check_payload(frame, *h) ? Status::kOk : Status::kBadFormat;
}

struct Store {
  float* out;
  void operator()(std::uint32_t i, float v) const noexcept { out[i] = v; }
};
template <class T>
struct Add {
  T* acc;
  T weight;
  void operator()(std::uint32_t i, float v) const noexcept { acc[i] += weight * static_cast<T>(v); }
};

}  // namespace

Status check_frame(const std::uint8_t* frame, std::size_t bytes, FrameHeader* header) noexcept {
  if (header == nullptr) {
    return Status::kInvalidArgument;
  }
  FrameHeader h;
  const Status s = read_frame(frame, bytes, &h);
  if (s == Status::kOk) {
    *header = h;
  }
  return s;
}

Status decode(const std::uint8_t* frame, std::size_t bytes, float* out, std::size_t capacity,
              FrameHeader* header) noexcept {
  if (out == nullptr) {
    return Status::kInvalidArgument;
  }
  FrameHeader h;
  const Status s = read_frame(frame, bytes, &h);
  if (s != Status::kOk) {
    return s;
  }
  if (h.count > capacity) {
    return Status::kCapacityExceeded;
  }
  for (std::size_t i = 0U; i < h.count; ++i) {
    wire::count_work();
    out[i] = 0.0F;
  }
  Store store{out};
  static_cast<void>(walk(frame, h, store));
  if (header != nullptr) {
    *header = h;
  }
  return Status::kOk;
}

template <class T>
Status accumulate(const std::uint8_t* frame, std::size_t bytes, T weight, T* acc, std::size_t capacity,
                  FrameHeader* header) noexcept {
  if (acc == nullptr) {
    return Status::kInvalidArgument;
  }
  FrameHeader h;
  const Status s = read_frame(frame, bytes, &h);
  if (s != Status::kOk) {
    return s;
  }
  if (h.count > capacity) {
    return Status::kCapacityExceeded;
  }
  Add<T> add{acc, weight};
  static_cast<void>(walk(frame, h, add));
  if (header != nullptr) {
    *header = h;
  }
  return Status::kOk;
}

template Status accumulate<float>(const std::uint8_t*, std::size_t, float, float*, std::size_t, FrameHeader*) noexcept;
template Status accumulate<double>(const std::uint8_t*, std::size_t, double, double*, std::size_t,
                                   FrameHeader*) noexcept;

}  // namespace fleet
}  // namespace burtorch

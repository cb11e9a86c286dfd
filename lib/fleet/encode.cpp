// SPDX-License-Identifier: Apache-2.0
// The update codec's encoder (include/burtorch/fleet/codec.hpp; docs/fleet.md).
//
// The encoder computes the frame's exact size before it writes a byte, so a
// frame that does not fit changes nothing: neither the frame buffer nor the
// error-feedback residual.
#include "burtorch/fleet/codec.hpp"

#include <cmath>

#include "burtorch/tools/checkpoint.hpp"
#include "fleet/wire.hpp"

namespace burtorch {
namespace fleet {
namespace {

// --- the values an encoder sends: c = update (+ residual) --------------------
struct Source {
  const float* update;
  const float* residual;
  float at(std::size_t i) const noexcept { return (residual != nullptr) ? (update[i] + residual[i]) : update[i]; }
};

// topk's order: larger magnitude first, then the lower index.
bool better(const Source& c, std::uint32_t a, std::uint32_t b) noexcept {
  const float ma = std::fabs(c.at(a));
  const float mb = std::fabs(c.at(b));
  return (ma > mb) || (!(ma < mb) && (a < b));
}

// Sifts heap[at] down a heap of `size` whose root is the *worst* kept index
// (the one every other beats).
void sift_worst(const Source& c, std::uint32_t* heap, std::size_t size, std::size_t at) noexcept {
  for (;;) {
    const std::size_t left = (2U * at) + 1U;
    if (left >= size) {
      return;
    }
    std::size_t worst = left;
    if (((left + 1U) < size) && better(c, heap[left], heap[left + 1U])) {
      worst = left + 1U;
    }
    if (!better(c, heap[at], heap[worst])) {
      return;
    }
    const std::uint32_t t = heap[at];
    heap[at] = heap[worst];
    heap[worst] = t;
    at = worst;
  }
}
// Sifts down a max-heap of indices (by index value), for the final sort.
void sift_largest(std::uint32_t* heap, std::size_t size, std::size_t at) noexcept {
  for (;;) {
    const std::size_t left = (2U * at) + 1U;
    if (left >= size) {
      return;
    }
    std::size_t top = left;
    if (((left + 1U) < size) && (heap[left + 1U] > heap[left])) {
      top = left + 1U;
    }
    if (heap[at] >= heap[top]) {
      return;
    }
    const std::uint32_t t = heap[at];
    heap[at] = heap[top];
    heap[top] = t;
    at = top;
  }
}
// The k best indices of c[0, n), in increasing order, into sel[0, k).
void select_topk(const Source& c, std::size_t n, std::uint32_t* sel, std::size_t k) noexcept {
  for (std::size_t i = 0U; i < k; ++i) {
    sel[i] = static_cast<std::uint32_t>(i);
  }
  for (std::size_t i = k / 2U; i-- > 0U;) {
    sift_worst(c, sel, k, i);
  }
  for (std::size_t i = k; i < n; ++i) {
    if (better(c, static_cast<std::uint32_t>(i), sel[0])) {
      sel[0] = static_cast<std::uint32_t>(i);
      sift_worst(c, sel, k, 0U);
    }
  }
  for (std::size_t i = k / 2U; i-- > 0U;) {
    sift_largest(sel, k, i);
  }
  for (std::size_t end = k; end > 1U; --end) {
    const std::uint32_t t = sel[0];
    sel[0] = sel[end - 1U];
    sel[end - 1U] = t;
    sift_largest(sel, end - 1U, 0U);
  }
}

std::size_t topk_index_bytes(const std::uint32_t* sel, std::size_t k) noexcept {
  std::size_t bytes = 0U;
  for (std::size_t j = 0U; j < k; ++j) {
    bytes += varint_bytes((j == 0U) ? sel[0] : (sel[j] - sel[j - 1U] - 1U));
  }
  return bytes;
}
}  // namespace

Status randk_indices(std::uint32_t n, std::uint32_t k, std::uint32_t seed, std::uint32_t* out) noexcept {
  if ((out == nullptr) || (n == 0U) || (k > n)) {
    return Status::kInvalidArgument;
  }
  wire::RandkDraw draw(n, k, seed);
  std::size_t j = 0U;
  for (std::uint32_t i = 0U; i < n; ++i) {
    if (draw.next()) {
      out[j] = i;
      ++j;
    }
  }
  return Status::kOk;
}

namespace {
// Every value of the update, the residual and their sum finite.
bool inputs_finite(const float* update, const float* residual, const Source& c, std::size_t n) noexcept {
  for (std::size_t i = 0U; i < n; ++i) {
    if (!wire::finite(update[i]) || ((residual != nullptr) && !wire::finite(residual[i])) || !wire::finite(c.at(i))) {
      return false;
    }
  }
  return true;
}

void write_header(std::uint8_t* frame, const EncodeOptions& o, std::size_t n, std::size_t k,
                  std::size_t payload) noexcept {
  frame[0] = wire::kMagic[0];
  frame[1] = wire::kMagic[1];
  frame[2] = wire::kMagic[2];
  frame[3] = wire::kMagic[3];
  frame[4] = kFrameVersion;
  frame[5] = static_cast<std::uint8_t>(o.codec);
  wire::put_u16(&frame[6], (o.codec == Codec::kInt8) ? o.block : static_cast<std::uint16_t>(0U));
  wire::put_u32(&frame[8], static_cast<std::uint32_t>(n));
  wire::put_u32(&frame[12], static_cast<std::uint32_t>(k));
  wire::put_u32(&frame[16], o.samples);
  wire::put_u32(&frame[20], o.round);
  wire::put_u32(&frame[24], o.client);
  wire::put_u32(&frame[28], (o.codec == Codec::kRandK) ? o.seed : 0U);
  wire::put_u32(&frame[32], static_cast<std::uint32_t>(payload));
}

// Each put_*() writes its codec's payload at p, then the residual: what was
// sent is taken out of c.
void put_topk(std::uint8_t* p, const Source& c, std::size_t n, const std::uint32_t* sel, std::size_t k,
              float* residual) noexcept {
  std::size_t at = 0U;
  for (std::size_t j = 0U; j < k; ++j) {
    at += wire::put_varint(&p[at], (j == 0U) ? sel[0] : (sel[j] - sel[j - 1U] - 1U));
  }
  for (std::size_t j = 0U; j < k; ++j) {
    wire::put_f32(&p[at + (4U * j)], c.at(sel[j]));
  }
  if (residual != nullptr) {
    std::size_t j = 0U;
    for (std::size_t i = 0U; i < n; ++i) {
      const bool sent = (j < k) && (sel[j] == i);
      residual[i] = sent ? 0.0F : c.at(i);
      j += sent ? 1U : 0U;
    }
  }
}

void put_randk(std::uint8_t* p, const Source& c, std::size_t n, const EncodeOptions& o, float* residual) noexcept {
  wire::RandkDraw draw(static_cast<std::uint32_t>(n), o.kept, o.seed);
  std::size_t j = 0U;
  for (std::size_t i = 0U; i < n; ++i) {
    const float v = c.at(i);
    const bool sent = draw.next();
    if (sent) {
      wire::put_f32(&p[4U * j], v);
      ++j;
    }
    if (residual != nullptr) {
      residual[i] = sent ? 0.0F : v;
    }
  }
}

// One int8 block, values [first, end): its scale, then a code per value;
// returns the bytes written.
std::size_t put_int8_block(std::uint8_t* p, const Source& c, std::size_t first, std::size_t end,
                           float* residual) noexcept {
  float top = 0.0F;
  for (std::size_t i = first; i < end; ++i) {
    const float m = std::fabs(c.at(i));
    top = (m > top) ? m : top;
  }
  const float s = wire::block_scale(top);
  wire::put_f32(p, s);
  std::size_t at = 4U;
  for (std::size_t i = first; i < end; ++i) {
    const float v = c.at(i);
    const std::int8_t q = wire::quantize(v, s);
    p[at] = static_cast<std::uint8_t>(q);
    ++at;
    if (residual != nullptr) {
      residual[i] = v - dequantize(s, q);
    }
  }
  return at;
}

void put_int8(std::uint8_t* p, const Source& c, std::size_t n, std::size_t block, float* residual) noexcept {
  std::size_t at = 0U;
  for (std::size_t first = 0U; first < n; first += block) {
    const std::size_t end = ((n - first) > block) ? (first + block) : n;
    at += put_int8_block(&p[at], c, first, end, residual);
  }
}

void put_raw(std::uint8_t* p, const Source& c, std::size_t n, float* residual) noexcept {
  for (std::size_t i = 0U; i < n; ++i) {
    wire::put_f32(&p[4U * i], c.at(i));
    if (residual != nullptr) {
      residual[i] = 0.0F;
    }
  }
}
}  // namespace

Status encode(const float* update, std::size_t n, float* residual, const EncodeOptions& o, std::uint8_t* frame,
              std::size_t capacity, std::size_t* written, std::uint32_t* scratch, std::size_t scratch_count) noexcept {
  if ((update == nullptr) || (frame == nullptr) || (written == nullptr) || (max_frame_bytes(n, o) == 0U)) {
    return Status::kInvalidArgument;
  }
  const Source c{update, residual};
  if (!inputs_finite(update, residual, c, n)) {
    return Status::kInvalidArgument;
  }
  // The exact size first: nothing is written unless the frame fits.
  const bool sparse = (o.codec == Codec::kTopK) || (o.codec == Codec::kRandK);
  const std::size_t k = sparse ? o.kept : n;
  std::size_t payload = max_frame_bytes(n, o) - (kFrameHeaderBytes + kFrameCrcBytes);
  if (o.codec == Codec::kTopK) {
    if (scratch == nullptr) {
      return Status::kInvalidArgument;
    }
    if (scratch_count < k) {
      return Status::kCapacityExceeded;
    }
    select_topk(c, n, scratch, k);
    payload = topk_index_bytes(scratch, k) + (4U * k);
  }
  const std::size_t total = kFrameHeaderBytes + payload + kFrameCrcBytes;
  if (total > capacity) {
    return Status::kCapacityExceeded;
  }
  write_header(frame, o, n, k, payload);
  std::uint8_t* p = &frame[kFrameHeaderBytes];
  switch (o.codec) {
    case Codec::kTopK:
      put_topk(p, c, n, scratch, k, residual);
      break;
    case Codec::kRandK:
      put_randk(p, c, n, o, residual);
      break;
    case Codec::kInt8:
      put_int8(p, c, n, o.block, residual);
      break;
    default:  // kRaw
      put_raw(p, c, n, residual);
      break;
  }
  wire::put_u32(&frame[kFrameHeaderBytes + payload], crc32(0U, frame, kFrameHeaderBytes + payload));
  *written = total;
  return Status::kOk;
}

}  // namespace fleet
}  // namespace burtorch

// SPDX-License-Identifier: Apache-2.0
// (Frames and vectors are static: the micro:bit's thread stack holds a few KB.)
// The update codec and the FedAvg server (burtorch/fleet/): frames byte for
// byte against an independent encoder (fuzz/make_frame_corpus.py: struct,
// zlib.crc32, numpy float32), topk's selection against a brute-force count,
// int8's error bound, error feedback losing nothing, every single-bit flip
// and truncation of every golden frame refused with nothing written, frames
// damaged behind a valid CRC refused, encoder errors changing nothing, and
// the weighted average against a direct sum. Heap-free: runs on the host and
// on Cortex-M under QEMU.
#include <burtorch/tools/checkpoint.hpp>
#include <burtorch/fleet/codec.hpp>
#include <burtorch/fleet/fedavg.hpp>

#include <cfloat>
#include <cmath>
#include <cstring>

#include "golden/fleet_frames_golden.hpp"
#include "harness.hpp"

namespace bt = burtorch;
namespace fl = burtorch::fleet;
namespace g = golden_fleet;

namespace {

float from_bits(std::uint32_t b) {
  float v = 0.0F;
  std::memcpy(&v, &b, sizeof(v));
  return v;
}
std::uint32_t to_bits(float v) {
  std::uint32_t b = 0U;
  std::memcpy(&b, &v, sizeof(b));
  return b;
}
void load(const std::uint32_t* bits, float* out, std::size_t n) {
  for (std::size_t i = 0U; i < n; ++i) {
    out[i] = from_bits(bits[i]);
  }
}
bool same_bits(const float* a, const std::uint32_t* b, std::size_t n) {
  for (std::size_t i = 0U; i < n; ++i) {
    if (to_bits(a[i]) != b[i]) {
      return false;
    }
  }
  return true;
}

fl::EncodeOptions options_of(const g::Case& c) {
  fl::EncodeOptions o;
  o.codec = static_cast<fl::Codec>(c.codec);
  o.kept = c.kept;
  o.block = c.block;
  o.samples = c.samples;
  o.round = c.round;
  o.client = c.client;
  o.seed = c.seed;
  return o;
}

// A small deterministic generator for the property tests (no libc rand).
struct Lcg {
  std::uint64_t s;
  std::uint32_t next() {
    s = (s * 6364136223846793005ULL) + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(s >> 33U);
  }
  // Magnitudes from 2^-20 to 2^10, both signs, some exact ties and zeros.
  float value() {
    const std::uint32_t r = next();
    if ((r % 11U) == 0U) {
      return 0.0F;
    }
    if ((r % 7U) == 0U) {
      return ((r & 1U) != 0U) ? 0.5F : -0.5F;
    }
    const float mantissa = 1.0F + (static_cast<float>(next() % 1000U) / 1000.0F);
    const int exponent = static_cast<int>(next() % 31U) - 20;
    const float v = std::ldexp(mantissa, exponent);
    return ((r & 2U) != 0U) ? v : -v;
  }
};

constexpr std::size_t kMaxFrame = 1024U;

void test_crc_check_value(bt_test::Context& t) {
  const char text[] = "123456789";
  BT_CHECK(t, bt::crc32(0U, text, 9U) == g::kCrcCheck);
  BT_CHECK(t, g::kCrcCheck == 0xCBF43926U);  // the published CRC-32 check value
}

void test_frames_match_reference_encoder(bt_test::Context& t) {
  float update[g::kN];
  load(g::kUpdate, update, g::kN);
  for (const g::Case& c : g::kCases) {
    float residual[g::kN];
    load(g::kResidual, residual, g::kN);
    static std::uint8_t frame[kMaxFrame];
    std::uint32_t scratch[g::kN];
    std::size_t written = 0U;
    const fl::EncodeOptions o = options_of(c);
    const bt::Status s =
        fl::encode(update, g::kN, c.with_residual ? residual : nullptr, o, frame, sizeof(frame), &written, scratch, g::kN);
    BT_CHECK(t, s == bt::Status::kOk);
    BT_CHECK(t, written == c.bytes);
    BT_CHECK(t, (written == c.bytes) && (std::memcmp(frame, c.frame, c.bytes) == 0));
    BT_CHECK(t, written <= fl::max_frame_bytes(g::kN, o));
    if (o.codec != fl::Codec::kTopK) {
      BT_CHECK(t, written == fl::max_frame_bytes(g::kN, o));
    }
    if (c.with_residual) {
      BT_CHECK(t, same_bits(residual, c.residual_after, g::kN));
    }
    // The reference's frame decodes to the reference's dense update.
    float out[g::kN];
    fl::FrameHeader h;
    BT_CHECK(t, fl::decode(c.frame, c.bytes, out, g::kN, &h) == bt::Status::kOk);
    BT_CHECK(t, same_bits(out, c.decoded, g::kN));
    BT_CHECK(t, (h.codec == o.codec) && (h.count == g::kN) && (h.samples == c.samples) && (h.round == c.round) &&
                    (h.client == c.client));
    if (!t.checks_failed_in_test) {
      continue;
    }
    bt_test::print("    in case ");
    bt_test::print(c.name);
    bt_test::print("\n");
    return;
  }
}

void test_randk_indices_match_reference(bt_test::Context& t) {
  for (const g::Draw& d : g::kDraws) {
    std::uint32_t got[12] = {};
    BT_CHECK(t, fl::randk_indices(d.n, d.k, d.seed, got) == bt::Status::kOk);
    bool same = true;
    for (std::uint32_t j = 0U; j < d.k; ++j) {
      same = same && (got[j] == d.indices[j]);
    }
    BT_CHECK(t, same);
  }
  std::uint32_t out[4];
  BT_CHECK(t, fl::randk_indices(3U, 4U, 1U, out) == bt::Status::kInvalidArgument);
  BT_CHECK(t, fl::randk_indices(0U, 0U, 1U, out) == bt::Status::kInvalidArgument);
}

// Index i is among the k kept iff fewer than k others beat it (larger
// magnitude, or equal magnitude and lower index): counted pair by pair.
void test_topk_selects_the_largest(bt_test::Context& t) {
  constexpr std::size_t kN = 97U;
  Lcg rng{7U};
  for (int trial = 0; trial < 40; ++trial) {
    static float x[kN];
    for (float& v : x) {
      v = rng.value();
    }
    const std::uint32_t k = 1U + (rng.next() % static_cast<std::uint32_t>(kN));
    fl::EncodeOptions o;
    o.codec = fl::Codec::kTopK;
    o.kept = k;
    static std::uint8_t frame[kMaxFrame];
    static std::uint32_t scratch[kN];
    std::size_t written = 0U;
    BT_CHECK(t, fl::encode(x, kN, nullptr, o, frame, sizeof(frame), &written, scratch, kN) == bt::Status::kOk);
    static float out[kN];
    BT_CHECK(t, fl::decode(frame, written, out, kN, nullptr) == bt::Status::kOk);
    bool right = true;
    std::uint32_t kept = 0U;
    for (std::size_t i = 0U; i < kN; ++i) {
      std::uint32_t beaten_by = 0U;
      for (std::size_t j = 0U; j < kN; ++j) {
        const double mi = std::fabs(static_cast<double>(x[i]));
        const double mj = std::fabs(static_cast<double>(x[j]));
        beaten_by += ((mj > mi) || ((mj == mi) && (j < i))) ? 1U : 0U;
      }
      const bool should = beaten_by < k;
      const bool got = to_bits(out[i]) == to_bits(x[i]);
      // A kept value comes back exactly; a dropped one as +0 (a kept zero is also 0).
      right = right && (should ? got : (to_bits(out[i]) == 0U));
      kept += should ? 1U : 0U;
    }
    BT_CHECK(t, right && (kept == k));
  }
}

// |x - s q| <= s/2 (1 + 2^-15) per value, s = max |x| / 127 of its block.
void test_int8_error_bound(bt_test::Context& t) {
  constexpr std::size_t kN = 200U;
  Lcg rng{11U};
  for (int trial = 0; trial < 20; ++trial) {
    static float x[kN];
    for (float& v : x) {
      v = rng.value();
    }
    fl::EncodeOptions o;
    o.codec = fl::Codec::kInt8;
    o.block = static_cast<std::uint16_t>(1U + (rng.next() % 70U));
    static std::uint8_t frame[kMaxFrame];
    std::size_t written = 0U;
    BT_CHECK(t, fl::encode(x, kN, nullptr, o, frame, sizeof(frame), &written, nullptr, 0U) == bt::Status::kOk);
    static float out[kN];
    BT_CHECK(t, fl::decode(frame, written, out, kN, nullptr) == bt::Status::kOk);
    bool within = true;
    for (std::size_t first = 0U; first < kN; first += o.block) {
      const std::size_t end = ((first + o.block) < kN) ? (first + o.block) : kN;
      double top = 0.0;
      for (std::size_t i = first; i < end; ++i) {
        top = (std::fabs(static_cast<double>(x[i])) > top) ? std::fabs(static_cast<double>(x[i])) : top;
      }
      const double s = top / 127.0;
      for (std::size_t i = first; i < end; ++i) {
        const double err = std::fabs(static_cast<double>(x[i]) - static_cast<double>(out[i]));
        within = within && (err <= (0.5 * s * (1.0 + std::ldexp(1.0, -15))));
      }
    }
    BT_CHECK(t, within);
    BT_CHECK(t, written == (fl::kFrameHeaderBytes + kN + (4U * ((kN + o.block - 1U) / o.block)) + fl::kFrameCrcBytes));
  }
}

// With error feedback nothing is lost, only late: after R rounds, the sum of
// what the frames carried plus the residual is the sum of the updates. The
// values are multiples of 1/64 below 2^10, so every float sum is exact.
void test_error_feedback_loses_nothing(bt_test::Context& t) {
  constexpr std::size_t kN = 50U;
  constexpr int kRounds = 12;
  const fl::Codec codecs[3] = {fl::Codec::kTopK, fl::Codec::kRandK, fl::Codec::kRaw};
  for (const fl::Codec codec : codecs) {
    Lcg rng{23U};
    float residual[kN] = {};
    double sent[kN] = {};
    double updates[kN] = {};
    for (int r = 0; r < kRounds; ++r) {
      static float u[kN];
      for (std::size_t i = 0U; i < kN; ++i) {
        u[i] = static_cast<float>(static_cast<int>(rng.next() % 129U) - 64) / 64.0F;
        updates[i] += static_cast<double>(u[i]);
      }
      fl::EncodeOptions o;
      o.codec = codec;
      o.kept = 5U;
      o.seed = static_cast<std::uint32_t>(r);
      o.round = static_cast<std::uint32_t>(r);
      static std::uint8_t frame[kMaxFrame];
      std::uint32_t scratch[5];
      std::size_t written = 0U;
      BT_CHECK(t, fl::encode(u, kN, residual, o, frame, sizeof(frame), &written, scratch, 5U) == bt::Status::kOk);
      static float out[kN];
      BT_CHECK(t, fl::decode(frame, written, out, kN, nullptr) == bt::Status::kOk);
      for (std::size_t i = 0U; i < kN; ++i) {
        sent[i] += static_cast<double>(out[i]);
      }
    }
    bool exact = true;
    double carried_late = 0.0;
    for (std::size_t i = 0U; i < kN; ++i) {
      exact = exact && ((sent[i] + static_cast<double>(residual[i])) == updates[i]);
      carried_late += std::fabs(static_cast<double>(residual[i]));
    }
    BT_CHECK(t, exact);
    // Sparse codecs keep something back; raw sends everything.
    BT_CHECK(t, (codec == fl::Codec::kRaw) ? (carried_late == 0.0) : (carried_late > 0.0));
  }
}

// Every single-bit flip and every truncation of every golden frame is
// refused, and the output keeps its sentinel.
void test_every_damage_refused(bt_test::Context& t) {
  for (const g::Case& c : g::kCases) {
    static std::uint8_t frame[kMaxFrame];
    std::memcpy(frame, c.frame, c.bytes);
    bool all_refused = true;
    bool untouched = true;
    for (std::size_t bit = 0U; bit < (8U * c.bytes); ++bit) {
      frame[bit / 8U] = static_cast<std::uint8_t>(frame[bit / 8U] ^ (1U << (bit % 8U)));
      float out[g::kN];
      for (float& v : out) {
        v = 12345.0F;
      }
      fl::FrameHeader h;
      h.round = 999U;
      const bt::Status s = fl::decode(frame, c.bytes, out, g::kN, &h);
      all_refused = all_refused && (s != bt::Status::kOk);
      for (const float v : out) {
        untouched = untouched && (v == 12345.0F);
      }
      untouched = untouched && (h.round == 999U);
      frame[bit / 8U] = static_cast<std::uint8_t>(frame[bit / 8U] ^ (1U << (bit % 8U)));
    }
    BT_CHECK(t, all_refused);
    BT_CHECK(t, untouched);
    bool truncations = true;
    for (std::size_t len = 0U; len < c.bytes; ++len) {
      float out[g::kN];
      truncations = truncations && (fl::decode(c.frame, len, out, g::kN, nullptr) == bt::Status::kTruncated);
    }
    BT_CHECK(t, truncations);
  }
}

void test_damaged_behind_valid_crc_refused(bt_test::Context& t) {
  for (const g::Damaged& d : g::kDamaged) {
    fl::FrameHeader h;
    const bt::Status s = fl::check_frame(d.frame, d.bytes, &h);
    BT_CHECK(t, s == bt::Status::kBadFormat);
    if (s != bt::Status::kBadFormat) {
      bt_test::print("    accepted: ");
      bt_test::print(d.what);
      bt_test::print("\n");
    }
    double acc[g::kN] = {};
    BT_CHECK(t, fl::accumulate<double>(d.frame, d.bytes, 2.0, acc, g::kN, nullptr) == bt::Status::kBadFormat);
    bool zero = true;
    for (const double v : acc) {
      zero = zero && (v == 0.0);
    }
    BT_CHECK(t, zero);
  }
}

void test_encoder_errors_change_nothing(bt_test::Context& t) {
  float update[g::kN];
  load(g::kUpdate, update, g::kN);
  float residual[g::kN];
  load(g::kResidual, residual, g::kN);
  static std::uint8_t frame[kMaxFrame];
  std::memset(frame, 0xA5, sizeof(frame));
  std::uint32_t scratch[g::kN];
  std::size_t written = 77U;
  fl::EncodeOptions o;
  o.codec = fl::Codec::kTopK;
  o.kept = 7U;
  const std::size_t need = g::kCases[2].bytes;  // TopKResidual
  // One byte short, a scratch too small, kept 0, kept > n, a NaN, block 0, an unknown codec.
  BT_CHECK(t, fl::encode(update, g::kN, residual, o, frame, need - 1U, &written, scratch, g::kN) ==
                  bt::Status::kCapacityExceeded);
  BT_CHECK(t, fl::encode(update, g::kN, residual, o, frame, sizeof(frame), &written, scratch, 6U) ==
                  bt::Status::kCapacityExceeded);
  o.kept = 0U;
  BT_CHECK(t, fl::encode(update, g::kN, residual, o, frame, sizeof(frame), &written, scratch, g::kN) ==
                  bt::Status::kInvalidArgument);
  o.kept = g::kN + 1U;
  BT_CHECK(t, fl::encode(update, g::kN, residual, o, frame, sizeof(frame), &written, scratch, g::kN + 1U) ==
                  bt::Status::kInvalidArgument);
  o.kept = 7U;
  const float saved = update[3];
  update[3] = std::nanf("");
  BT_CHECK(t, fl::encode(update, g::kN, residual, o, frame, sizeof(frame), &written, scratch, g::kN) ==
                  bt::Status::kInvalidArgument);
  update[3] = 3.0e38F;
  residual[3] = 3.0e38F;  // finite both, their sum is not
  BT_CHECK(t, fl::encode(update, g::kN, residual, o, frame, sizeof(frame), &written, scratch, g::kN) ==
                  bt::Status::kInvalidArgument);
  update[3] = saved;
  residual[3] = from_bits(g::kResidual[3]);
  o.codec = fl::Codec::kInt8;
  o.block = 0U;
  BT_CHECK(t, fl::encode(update, g::kN, residual, o, frame, sizeof(frame), &written, nullptr, 0U) ==
                  bt::Status::kInvalidArgument);
  o.codec = static_cast<fl::Codec>(9U);
  BT_CHECK(t, fl::encode(update, g::kN, residual, o, frame, sizeof(frame), &written, nullptr, 0U) ==
                  bt::Status::kInvalidArgument);
  BT_CHECK(t, fl::encode(update, 0U, residual, o, frame, sizeof(frame), &written, nullptr, 0U) ==
                  bt::Status::kInvalidArgument);
  bool frame_untouched = true;
  for (const std::uint8_t b : frame) {
    frame_untouched = frame_untouched && (b == 0xA5U);
  }
  BT_CHECK(t, frame_untouched);
  BT_CHECK(t, written == 77U);
  BT_CHECK(t, same_bits(residual, g::kResidual, g::kN));
  // Decoding into too small an array: refused, nothing written.
  float out[g::kN];
  for (float& v : out) {
    v = 1.0F;
  }
  BT_CHECK(t, fl::decode(g::kCases[0].frame, g::kCases[0].bytes, out, g::kN - 1U, nullptr) ==
                  bt::Status::kCapacityExceeded);
  BT_CHECK(t, out[0] == 1.0F);
  BT_CHECK(t, fl::decode(nullptr, 40U, out, g::kN, nullptr) == bt::Status::kInvalidArgument);
}

// The server's average: sum_c n_c u_c / sum_c n_c over the accepted frames,
// against the same sum written out over the reference's decoded updates; a
// damaged frame, one of another round and one of another length are refused
// and change nothing.
void test_fedavg_weighted_average(bt_test::Context& t) {
  double sum[g::kN];
  fl::FedAvg<double> avg(sum, g::kN);
  BT_CHECK(t, avg.add(g::kCases[0].frame, g::kCases[0].bytes) == bt::Status::kInvalidArgument);  // before begin
  BT_CHECK(t, avg.begin(g::kN, 3U) == bt::Status::kOk);
  double expect_num[g::kN] = {};
  double expect_den = 0.0;
  std::size_t accepted = 0U;
  for (const g::Case& c : g::kCases) {
    const bt::Status s = avg.add(c.frame, c.bytes);
    const bool round3 = c.round == 3U;
    BT_CHECK(t, s == (round3 ? bt::Status::kOk : bt::Status::kBadFormat));
    if (round3) {
      for (std::size_t i = 0U; i < g::kN; ++i) {
        expect_num[i] += static_cast<double>(c.samples) * static_cast<double>(from_bits(c.decoded[i]));
      }
      expect_den += static_cast<double>(c.samples);
      ++accepted;
    }
  }
  static std::uint8_t bad[kMaxFrame];
  std::memcpy(bad, g::kCases[0].frame, g::kCases[0].bytes);
  bad[50] = static_cast<std::uint8_t>(bad[50] ^ 0x10U);
  BT_CHECK(t, avg.add(bad, g::kCases[0].bytes) == bt::Status::kChecksumMismatch);
  // Another length: an update of 12 values for round 3.
  float small[12] = {1.0F};
  fl::EncodeOptions o;
  o.round = 3U;
  o.samples = 1000U;
  std::size_t written = 0U;
  BT_CHECK(t, fl::encode(small, 12U, nullptr, o, bad, sizeof(bad), &written, nullptr, 0U) == bt::Status::kOk);
  BT_CHECK(t, avg.add(bad, written) == bt::Status::kBadFormat);
  BT_CHECK(t, (avg.accepted() == accepted) && (avg.refused() == ((sizeof(g::kCases) / sizeof(g::kCases[0])) - accepted + 2U)));
  BT_CHECK(t, avg.samples() == static_cast<std::uint64_t>(expect_den));
  double mean[g::kN];
  BT_CHECK(t, avg.average(mean) == bt::Status::kOk);
  bool close = true;
  for (std::size_t i = 0U; i < g::kN; ++i) {
    const double want = expect_num[i] / expect_den;
    close = close && bt_test::near(mean[i], want, 1e-15, 1e-300);
  }
  BT_CHECK(t, close);
  fl::FedAvg<double> empty(sum, g::kN);
  BT_CHECK(t, empty.begin(g::kN, 0U) == bt::Status::kOk);
  BT_CHECK(t, empty.average(mean) == bt::Status::kInvalidArgument);
  BT_CHECK(t, empty.begin(g::kN + 1U, 0U) == bt::Status::kInvalidArgument);
}

// --- hostile frames: fields at their limits behind a valid CRC -------------
void put32(std::uint8_t* at, std::uint32_t v) {
  for (std::size_t i = 0U; i < 4U; ++i) {
    at[i] = static_cast<std::uint8_t>((v >> (8U * i)) & 0xFFU);
  }
}
// A frame of the layout in codec.hpp, written field by field here.
std::size_t hand_frame(std::uint8_t* f, std::uint8_t codec, std::uint16_t block, std::uint32_t count,
                       std::uint32_t kept, std::uint32_t seed, const std::uint8_t* payload, std::size_t bytes) {
  const std::uint8_t head[6] = {0x42U, 0x54U, 0x46U, 0x55U, 1U, codec};
  std::memcpy(f, head, sizeof(head));
  f[6] = static_cast<std::uint8_t>(block & 0xFFU);
  f[7] = static_cast<std::uint8_t>(block >> 8U);
  put32(&f[8], count);
  put32(&f[12], kept);
  put32(&f[16], 5U);  // samples
  put32(&f[20], 1U);  // round
  put32(&f[24], 2U);  // client
  put32(&f[28], seed);
  put32(&f[32], static_cast<std::uint32_t>(bytes));
  std::memcpy(&f[36], payload, bytes);
  put32(&f[36U + bytes], bt::crc32(0U, f, 36U + bytes));
  return 40U + bytes;
}

// An int8 scale s with s * 127 past FLT_MAX in FP32 is refused: the largest
// the old check allowed, fl(FLT_MAX / 127), decodes q = 127 to +inf. The
// float just below it decodes q = +-127 to finite values.
void test_int8_scale_limit(bt_test::Context& t) {
  const float over = FLT_MAX / 127.0F;
  BT_CHECK(t, !std::isfinite(over * 127.0F));  // the premise: fl(FLT_MAX / 127) * 127 overflows
  const float under = std::nextafter(over, 0.0F);
  BT_CHECK(t, std::isfinite(under * 127.0F));
  static std::uint8_t frame[64];
  std::uint8_t payload[6] = {};
  float out[2] = {7.0F, 7.0F};
  double sum[2] = {};
  fl::FedAvg<double> avg(sum, 2U);
  fl::FrameHeader h;
  for (const float s : {over, under}) {
    std::memcpy(payload, &s, sizeof(s));  // little-endian host and targets
    payload[4] = 127U;
    payload[5] = static_cast<std::uint8_t>(-127);
    const std::size_t bytes = hand_frame(frame, 3U, 2U, 2U, 2U, 0U, payload, sizeof(payload));
    const bool accept = (s == under);
    const bt::Status want = accept ? bt::Status::kOk : bt::Status::kBadFormat;
    BT_CHECK(t, fl::check_frame(frame, bytes, &h) == want);
    BT_CHECK(t, fl::decode(frame, bytes, out, 2U, nullptr) == want);
    BT_CHECK(t, avg.begin(2U, 1U) == bt::Status::kOk);
    BT_CHECK(t, avg.add(frame, bytes) == want);
    if (accept) {
      // s * 127 in double is exact (8 + 7 significant bits); rounded to FP32.
      const float top = static_cast<float>(static_cast<double>(s) * 127.0);
      BT_CHECK(t, std::isfinite(out[0]) && (out[0] == top) && (out[1] == -top));
      BT_CHECK(t, std::isfinite(sum[0]) && std::isfinite(sum[1]));
    } else {
      BT_CHECK(t, (out[0] == 7.0F) && (out[1] == 7.0F));
    }
  }
}

// Encoding +-FLT_MAX with int8 and error feedback: the frame is accepted and
// decodes to finite values, the residual stays finite (it is what the frame
// did not carry), and the next encode with that residual works.
void test_int8_flt_max_keeps_feedback(bt_test::Context& t) {
  float update[4] = {FLT_MAX, -FLT_MAX, 1.0F, 0.0F};
  float residual[4] = {};
  static std::uint8_t frame[64];
  std::size_t written = 0U;
  fl::EncodeOptions o;
  o.codec = fl::Codec::kInt8;
  o.block = 4U;
  for (int round = 0; round < 2; ++round) {
    BT_CHECK(t, fl::encode(update, 4U, residual, o, frame, sizeof(frame), &written, nullptr, 0U) == bt::Status::kOk);
    float out[4] = {};
    BT_CHECK(t, fl::decode(frame, written, out, 4U, nullptr) == bt::Status::kOk);
    bool finite = true;
    for (std::size_t i = 0U; i < 4U; ++i) {
      finite = finite && std::isfinite(out[i]) && std::isfinite(residual[i]);
    }
    BT_CHECK(t, finite);
    if (round == 0) {  // +-FLT_MAX arrive within a step of the largest scale
      BT_CHECK(t, (out[0] > 0.99F * FLT_MAX) && (out[1] < -0.99F * FLT_MAX));
    }
    update[0] = 0.0F;  // the next round: only the residual of the first
    update[1] = 0.0F;
  }
}

// Counts the sender writes do not decide the receiver's work: a 44-byte
// randk frame and a 49-byte topk frame claiming 2^32 - 1 values are refused
// by a receiver of 40 values (kCapacityExceeded; FedAvg: kBadFormat, another
// length) after reading their header, not after drawing 2^32 indices (ctest
// gives this test a time limit that 2^32 draws per call exceed). TopK with a
// null scratch is a null pointer: kInvalidArgument.
void test_hostile_counts(bt_test::Context& t) {
  static std::uint8_t randk[64];
  static std::uint8_t topk[64];
  const float one = 1.0F;
  std::uint8_t payload[9] = {};
  std::memcpy(payload, &one, sizeof(one));
  const std::size_t randk_bytes = hand_frame(randk, 2U, 0U, 0xFFFFFFFFU, 1U, 9U, payload, 4U);
  BT_CHECK(t, randk_bytes == 44U);
  // topk: one gap 0xFFFFFFFE (5 varint bytes), then the value.
  const std::uint8_t gap[5] = {0xFEU, 0xFFU, 0xFFU, 0xFFU, 0x0FU};
  std::memcpy(payload, gap, sizeof(gap));
  std::memcpy(&payload[5], &one, sizeof(one));
  const std::size_t topk_bytes = hand_frame(topk, 1U, 0U, 0xFFFFFFFFU, 1U, 0U, payload, 9U);
  BT_CHECK(t, topk_bytes == 49U);
  static float out[g::kN];
  static double sum[g::kN];
  fl::FedAvg<double> avg(sum, g::kN);
  fl::FrameHeader h;
  for (const std::uint8_t* f : {static_cast<const std::uint8_t*>(randk), static_cast<const std::uint8_t*>(topk)}) {
    const std::size_t bytes = (f == randk) ? randk_bytes : topk_bytes;
    BT_CHECK(t, fl::check_frame(f, bytes, &h) == bt::Status::kOk);
    BT_CHECK(t, h.count == 0xFFFFFFFFU);
    BT_CHECK(t, fl::decode(f, bytes, out, g::kN, nullptr) == bt::Status::kCapacityExceeded);
    BT_CHECK(t, fl::accumulate<double>(f, bytes, 1.0, sum, g::kN, nullptr) == bt::Status::kCapacityExceeded);
    BT_CHECK(t, avg.begin(g::kN, 1U) == bt::Status::kOk);
    BT_CHECK(t, avg.add(f, bytes) == bt::Status::kBadFormat);
    BT_CHECK(t, (avg.refused() == 1U) && (avg.samples() == 0U));
  }
  // The randk frame with a NaN for its one value: refused, also from its size alone.
  const float nan = std::nanf("");
  std::memcpy(payload, &nan, sizeof(nan));
  const std::size_t bad_bytes = hand_frame(randk, 2U, 0U, 0xFFFFFFFFU, 1U, 9U, payload, 4U);
  BT_CHECK(t, fl::check_frame(randk, bad_bytes, &h) == bt::Status::kBadFormat);
  // TopK with no scratch.
  static float update[g::kN];
  load(g::kUpdate, update, g::kN);
  static std::uint8_t frame[128];  // refused before a byte is written
  std::size_t written = 77U;
  fl::EncodeOptions o;
  o.codec = fl::Codec::kTopK;
  o.kept = 7U;
  BT_CHECK(t, fl::encode(update, g::kN, nullptr, o, frame, sizeof(frame), &written, nullptr, g::kN) ==
                  bt::Status::kInvalidArgument);
  BT_CHECK(t, written == 77U);
}

const bt_test::TestCase kCases[] = {
    {"int8_scale_limit", test_int8_scale_limit},
    {"int8_flt_max_keeps_feedback", test_int8_flt_max_keeps_feedback},
    {"hostile_counts", test_hostile_counts},
    {"crc_check_value", test_crc_check_value},
    {"frames_match_reference_encoder", test_frames_match_reference_encoder},
    {"randk_indices_match_reference", test_randk_indices_match_reference},
    {"topk_selects_the_largest", test_topk_selects_the_largest},
    {"int8_error_bound", test_int8_error_bound},
    {"error_feedback_loses_nothing", test_error_feedback_loses_nothing},
    {"every_damage_refused", test_every_damage_refused},
    {"damaged_behind_valid_crc_refused", test_damaged_behind_valid_crc_refused},
    {"encoder_errors_change_nothing", test_encoder_errors_change_nothing},
    {"fedavg_weighted_average", test_fedavg_weighted_average},
};

}  // namespace

BT_TEST_MAIN("fleet_codec", kCases)

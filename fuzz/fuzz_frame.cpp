// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the update-frame decoder (include/burtorch/fleet/
// codec.hpp; clang -fsanitize=fuzzer,address,undefined; built and run by
// tools/check.d/49-fuzz-frame.sh with BURTORCH_FLEET_WORK_PROBE). Seeds:
// fuzz/corpus-frame/, made by the independent Python encoder
// fuzz/make_frame_corpus.py.
//
// Every input is tried twice: as it is, and resealed (its last four bytes
// replaced by the CRC-32 of the others), so that mutations of the header
// and payload reach the checks behind the CRC instead of stopping at it.
// Each goes through check_frame, decode, accumulate<double> and
// FedAvg::add. Besides memory errors it traps (abort -> crash report) when
// an invariant breaks:
//  * all four agree on the status (decode may add kCapacityExceeded for a
//    frame longer than its buffer);
//  * on failure nothing was written: the output, the sum and the header
//    keep their canaries;
//  * on success every decoded value is finite, accumulate added exactly the
//    decoded values (weight 1 on a zero sum), and encoding the decoded
//    update again as raw FP32 gives a frame that decodes to the same bits;
//  * the work of each call (the steps of its loops over a frame's values,
//    counted through the codec's work probe) is at most the frame's size
//    for check_frame and for every refusal, and at most twice the frame's
//    size plus twice the receiver's capacity for an accepted decode: never
//    a count the sender wrote.
#include <burtorch/fleet/codec.hpp>
#include <burtorch/fleet/fedavg.hpp>
#include <burtorch/tools/checkpoint.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace bt = burtorch;
namespace fl = burtorch::fleet;

namespace {

constexpr std::size_t kCapacity = 4096U;
constexpr float kCanary = -1234.5F;
constexpr double kSumCanary = 98765.25;

void require(bool condition) {
  if (!condition) {
    std::abort();
  }
}

bool same_header(const fl::FrameHeader& a, const fl::FrameHeader& b) {
  return (a.codec == b.codec) && (a.block == b.block) && (a.count == b.count) && (a.kept == b.kept) &&
         (a.samples == b.samples) && (a.round == b.round) && (a.client == b.client) && (a.seed == b.seed) &&
         (a.payload_bytes == b.payload_bytes);
}

std::uint64_t g_work = 0U;

// The work a call may do: refusals and check_frame read the frame once;
// an accepted decode also writes and draws up to the receiver's capacity.
void require_work(std::size_t size, bool accepted) {
  const std::uint64_t bound = accepted ? ((2U * static_cast<std::uint64_t>(size)) + (2U * kCapacity))
                                       : static_cast<std::uint64_t>(size);
  require(g_work <= bound);
  g_work = 0U;
}

float g_out[kCapacity];
double g_sum[kCapacity];
float g_again[kCapacity];
std::uint8_t g_frame[fl::kFrameHeaderBytes + fl::kFrameCrcBytes + (4U * kCapacity)];
double g_server[kCapacity];
std::uint8_t g_resealed[1U << 16U];

void check_input(const std::uint8_t* data, std::size_t size) {
  g_work = 0U;
  fl::FrameHeader canary_header;
  canary_header.count = 0xDEADBEEFU;
  canary_header.seed = 0x5EEDU;

  fl::FrameHeader checked = canary_header;
  const bt::Status s_check = fl::check_frame(data, size, &checked);
  require_work(size, false);  // check_frame: the frame's size, accepted or not
  if (s_check != bt::Status::kOk) {
    require(same_header(checked, canary_header));
  }

  for (float& v : g_out) {
    v = kCanary;
  }
  fl::FrameHeader decoded_header = canary_header;
  const bt::Status s_decode = fl::decode(data, size, g_out, kCapacity, &decoded_header);
  require_work(size, s_decode == bt::Status::kOk);
  const bool too_long = (s_check == bt::Status::kOk) && (checked.count > kCapacity);
  require(s_decode == (too_long ? bt::Status::kCapacityExceeded : s_check));

  for (double& v : g_sum) {
    v = 0.0;
  }
  const bt::Status s_acc = fl::accumulate<double>(data, size, 1.0, g_sum, kCapacity, nullptr);
  require_work(size, s_acc == bt::Status::kOk);
  require(s_acc == s_decode);

  if (s_decode != bt::Status::kOk) {
    require(same_header(decoded_header, canary_header));
    for (std::size_t i = 0U; i < kCapacity; ++i) {
      require(std::memcmp(&g_out[i], &kCanary, sizeof(float)) == 0);
      require(g_sum[i] == 0.0);
    }
  } else {
    require(same_header(decoded_header, checked));
    const std::size_t n = checked.count;
    for (std::size_t i = 0U; i < n; ++i) {
      require(std::isfinite(g_out[i]));
      require(g_sum[i] == static_cast<double>(g_out[i]));
    }
    for (std::size_t i = n; i < kCapacity; ++i) {
      require(std::memcmp(&g_out[i], &kCanary, sizeof(float)) == 0);
    }
    // The decoded update, sent on as a raw frame, arrives with the same bits.
    fl::EncodeOptions o;
    o.codec = fl::Codec::kRaw;
    o.samples = checked.samples;
    o.round = checked.round;
    o.client = checked.client;
    std::size_t written = 0U;
    require(fl::encode(g_out, n, nullptr, o, g_frame, sizeof(g_frame), &written, nullptr, 0U) == bt::Status::kOk);
    require(written == fl::max_frame_bytes(n, o));
    require(fl::decode(g_frame, written, g_again, kCapacity, nullptr) == bt::Status::kOk);
    require(std::memcmp(g_again, g_out, n * sizeof(float)) == 0);
    g_work = 0U;
  }

  // The server: the same verdict, and a refused frame adds nothing.
  for (double& v : g_server) {
    v = kSumCanary;
  }
  fl::FedAvg<double> avg(g_server, kCapacity);
  const std::size_t n_round = ((s_check == bt::Status::kOk) && !too_long) ? checked.count : 1U;
  require(avg.begin(n_round, (s_check == bt::Status::kOk) ? checked.round : 0U) == bt::Status::kOk);
  const bt::Status s_add = avg.add(data, size);
  // check_frame, then (same length and round) accumulate: both bounds.
  require(g_work <= ((s_add == bt::Status::kOk) ? ((3U * static_cast<std::uint64_t>(size)) + (2U * kCapacity))
                                                : static_cast<std::uint64_t>(size)));
  require(s_add == (too_long ? bt::Status::kBadFormat : s_acc));  // another length than the round's
  require((avg.accepted() == ((s_add == bt::Status::kOk) ? 1U : 0U)) &&
          (avg.refused() == ((s_add == bt::Status::kOk) ? 0U : 1U)));
  if (s_add != bt::Status::kOk) {
    require(g_server[0] == 0.0);  // begin() zeroed it; nothing added
    require(avg.samples() == 0U);
  } else {
    for (std::size_t i = 0U; i < n_round; ++i) {
      require(g_server[i] == static_cast<double>(checked.samples) * static_cast<double>(g_out[i]));
      require(std::isfinite(g_server[i]));
    }
  }
}

}  // namespace

// The codec's work probe (lib/fleet/wire.hpp): one step of a loop over a
// frame's values.
namespace burtorch {
namespace fleet {
namespace wire {
void work_probe() noexcept { ++g_work; }
}  // namespace wire
}  // namespace fleet
}  // namespace burtorch

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  check_input(data, size);
  // Resealed: the same bytes with a CRC that matches them.
  if ((size >= (fl::kFrameHeaderBytes + fl::kFrameCrcBytes)) && (size <= sizeof(g_resealed))) {
    std::memcpy(g_resealed, data, size);
    const std::size_t body = size - fl::kFrameCrcBytes;
    const std::uint32_t crc = bt::crc32(0U, g_resealed, body);
    for (std::size_t i = 0U; i < 4U; ++i) {
      g_resealed[body + i] = static_cast<std::uint8_t>((crc >> (8U * i)) & 0xFFU);
    }
    check_input(g_resealed, size);
  }
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
// A device of a federated fleet (docs/fleet.md): fine-tunes the head of the
// pretrained CNN as burtorch-finetune does (its code, included), takes the
// update (fine-tuned minus pretrained head, FP32), encodes it with the
// library's codec (int8, one scale per block, error feedback) into a static
// frame buffer and writes the frame over the port as hex:
//
//   frame <hex bytes>
//   decoded <hex of the FP32 bits of each value, as this device decodes it>
//   codec flash/RAM: frame buffer B bytes, residual R bytes
//
// The host (tools/check.d/56-fleet-device.sh) decodes the frame with the
// same library, checks the bits are these, and adds it to a FedAvg round.
#define BURTORCH_FINETUNE_NO_MAIN 1
#include "finetune.cpp"

#include <burtorch/fleet/codec.hpp>

#include <cstring>

namespace {

namespace fl = burtorch::fleet;

constexpr fl::EncodeOptions make_options() {
  fl::EncodeOptions o{};
  o.codec = fl::Codec::kInt8;
  o.block = 64U;
  o.samples = static_cast<std::uint32_t>(kSteps) * static_cast<std::uint32_t>(kBatch);
  o.round = 1U;
  o.client = 7U;
  return o;
}
constexpr fl::EncodeOptions kOptions = make_options();
constexpr std::size_t kFrameBytes = fl::max_frame_bytes(kParameters, kOptions);
static_assert(kFrameBytes > 0U, "the int8 frame of the head");

float g_update[kParameters];
float g_residual[kParameters];  // error feedback: zero before the first round
std::uint8_t g_frame[kFrameBytes];
float g_decoded[kParameters];

void print_hex(const std::uint8_t* bytes, std::size_t n) {
  constexpr char kDigits[] = "0123456789abcdef";
  char pair[2];
  for (std::size_t i = 0U; i < n; ++i) {
    pair[0] = kDigits[bytes[i] >> 4U];
    pair[1] = kDigits[bytes[i] & 0x0FU];
    bt::port::write(pair, 2U);
  }
}

}  // namespace

int main() {
  using firmware::print;
  print("burtorch-fleet-device: fine-tunes the head (");
  firmware::print_unsigned(kPlan.parameters);
  print(" parameters) over the int8 backbone, then sends its update as an int8 frame\n");
  nn::Rng rng(1U);
  if (!g_head.create(g_tape, kHead, rng) || (g_head.weight != 0U)) {
    fail("head creation failed");
  }
  std::uint64_t ticks = 0U;
  const bool trained = finetune(kBackbones[0], &ticks);
  // The update: fine-tuned minus pretrained, weights then biases (the
  // head's parameter order on the tape).
  const float* w = g_tape.values() + g_head.weight;
  const std::size_t n_weights = sizeof(fm::kHeadWeight) / sizeof(float);
  for (std::size_t i = 0U; i < n_weights; ++i) {
    g_update[i] = w[i] - fm::kHeadWeight[i];
  }
  const float* b = g_tape.values() + g_head.bias;
  for (std::size_t i = 0U; i < fm::kClasses; ++i) {
    g_update[n_weights + i] = b[i] - fm::kHeadBias[i];
  }
  std::size_t written = 0U;
  bt::Status s = fl::encode(g_update, kParameters, g_residual, kOptions, g_frame, sizeof(g_frame), &written, nullptr,
                            0U);
  if (s == bt::Status::kOk) {
    s = fl::decode(g_frame, written, g_decoded, kParameters, nullptr);
  }
  if (s != bt::Status::kOk) {
    print("FAIL: the codec: ");
    print(bt::status_name(s));
    print("\n");
    bt::port::exit(1);
  }
  print("frame ");
  print_hex(g_frame, written);
  print("\ndecoded ");
  for (std::size_t i = 0U; i < kParameters; ++i) {
    std::uint32_t bits = 0U;
    static_assert(sizeof(bits) == sizeof(float), "FP32");
    std::memcpy(&bits, &g_decoded[i], sizeof(bits));
    const std::uint8_t word[4] = {static_cast<std::uint8_t>(bits >> 24U), static_cast<std::uint8_t>(bits >> 16U),
                                  static_cast<std::uint8_t>(bits >> 8U), static_cast<std::uint8_t>(bits)};
    print_hex(word, 4U);
    print((i + 1U < kParameters) ? "," : "\n");
  }
  print("codec buffers: frame ");
  firmware::print_unsigned(sizeof(g_frame));
  print(" bytes, residual ");
  firmware::print_unsigned(sizeof(g_residual));
  print(" bytes, update ");
  firmware::print_unsigned(sizeof(g_update));
  print(" bytes\n");
  print(trained ? "PASS: fine-tuned and sent its update\n" : "FAIL: fine-tuning missed its thresholds\n");
  bt::port::exit(trained ? 0 : 1);
}

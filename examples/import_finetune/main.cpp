// SPDX-License-Identifier: Apache-2.0
// Fine-tuning a model trained in PyTorch on data the device sees: the
// keyword-spotting-like Conv1d of train_and_export.py, imported with
// burtorch-import at build time (CMakeLists.txt: the convolution frozen in
// flash as int8, the head trained; on the host, everything trained).
//
// The device's sensor differs from the one the model was trained with (an
// offset per channel and the opposite polarity, as train_and_export.py's
// shift=True): the pretrained model misreads it. The data is made here,
// sample by sample from its index (nothing stored), by the same rule as
// the Python script's: class c is a wave of c + 1 periods per 16 steps,
// each channel a quarter period later, plus uniform noise. Trains with SGD
// in serial batches of 8 over 64 samples, measures accuracy on 128 other
// samples before and after, and prints
//   "accuracy before <a> after <b>", "loss <first> -> <last>", "plan <bytes> bytes"
// returning 0 if the accuracy after is at least 0.9 and above the one before.
#include <burtorch/port/port.hpp>
#include <burtorch/tools/stream.hpp>

#include <array>
#include <cstddef>
#include <cstdint>

#include "kws_model.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;
using Real = kws::Real;

namespace {

constexpr bt::Index kClasses = kws::kOutputSize;
constexpr bt::Index kChannels = 3U;
constexpr bt::Index kSteps = 16U;
static_assert(kws::kInputSize == (kChannels * kSteps), "the model takes 3 channels of 16 steps");
constexpr std::size_t kTrainSamples = 64U;
constexpr std::size_t kTestSamples = 128U;
constexpr std::size_t kBatch = 8U;
constexpr std::size_t kBatches = kTrainSamples / kBatch;
constexpr int kEpochs = 30;

constexpr nn::MemoryPlan kPlan = kws::Model::plan(nn::OptimizerKind::kSgd);
#ifdef IMPORT_FINETUNE_RAM_BUDGET
static_assert(kPlan.bytes + 4096U <= IMPORT_FINETUNE_RAM_BUDGET, "the training memory and a 4 KB stack fit the RAM budget");
#endif

// One period of sin(2 pi k / 16) by the Chebyshev recurrence (no libm).
struct Wave {
  std::array<Real, kSteps> s{};
  Wave() noexcept {
    const Real c = Real(0.92387953251128674);  // cos(2 pi / 16)
    s[0] = Real(0);
    s[1] = Real(0.38268343236508977);  // sin(2 pi / 16)
    for (bt::Index k = 2U; k < kSteps; ++k) {
      s[k] = (Real(2) * c * s[k - 1U]) - s[k - 2U];
    }
  }
};

// Sample `index` of the device's data: its class, its 48 values (ONNX
// layout: channel-major), from a 32-bit xorshift seeded by the index.
bt::Index make_sample(const Wave& wave, std::uint32_t index, std::array<Real, kws::kInputSize>& x) noexcept {
  std::uint32_t state = 2463534242U ^ (index * 2654435761U);
  const auto next = [&state]() noexcept {
    state ^= state << 13U;
    state ^= state >> 17U;
    state ^= state << 5U;
    return state;
  };
  static_cast<void>(next());
  const bt::Index label = static_cast<bt::Index>(next() % kClasses);
  constexpr std::array<Real, kChannels> kOffset = {Real(0.4), Real(-0.3), Real(0.2)};
  constexpr Real kGain = Real(-1.2);
  constexpr Real kNoise = Real(0.35);
  for (bt::Index ch = 0U; ch < kChannels; ++ch) {
    for (bt::Index t = 0U; t < kSteps; ++t) {
      const Real unit = static_cast<Real>(next() >> 8U) * Real(1.0F / 16777216.0F);  // [0, 1)
      const Real clean = wave.s[(((label + 1U) * t) + (4U * ch)) % kSteps];
      x[(ch * kSteps) + t] = (clean + (kNoise * ((Real(2) * unit) - Real(1))) + kOffset[ch]) * kGain;
    }
  }
  return label;
}

void print(const char* label, float value) {
  std::array<char, 24> text{};
  const std::size_t n = bt::format_float(value, text.data(), text.size(), 4);
  bt::port::write(label);
  bt::port::write(text.data(), n);
}

// The share of test samples (indices from 100000 on) classified right.
float accuracy(bt::Tape<Real>& tape, const kws::Model& model, const Wave& wave) noexcept {
  std::array<Real, kws::kInputSize> x{};
  std::array<Real, kws::kOutputSize> out{};
  std::size_t right = 0U;
  const bt::Mark start = tape.mark();
  for (std::size_t i = 0U; i < kTestSamples; ++i) {
    const bt::Index label = make_sample(wave, 100000U + static_cast<std::uint32_t>(i), x);
    if (kws::Model::outputs(tape, model.forward(tape, x.data()), out.data())) {
      bt::Index best = 0U;
      for (bt::Index k = 1U; k < kws::kOutputSize; ++k) {
        best = (out[k] > out[best]) ? k : best;
      }
      right += (best == label) ? 1U : 0U;
    }
    static_cast<void>(tape.rewind(start));
  }
  return static_cast<float>(right) / static_cast<float>(kTestSamples);
}

}  // namespace

int main() {
  static nn::TrainingMemory<Real, kPlan> memory;
  static const Wave wave;
  bt::Tape<Real>& tape = memory.tape;
  kws::Model model;
  if (!model.create(tape)) {
    bt::port::write("the model does not fit its tape\n");
    return 1;
  }
  nn::OptimizerOptions<Real> sgd;
  sgd.kind = nn::OptimizerKind::kSgd;
  sgd.lr = Real(0.1);
  nn::Optimizer<Real> optimizer = memory.optimizer(sgd);

  const float before = accuracy(tape, model, wave);
  Real first = Real(0);
  Real last = Real(0);
  std::array<Real, kws::kInputSize> x{};
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    Real sum = Real(0);
    for (std::size_t b = 0U; b < kTrainSamples; b += kBatch) {
      const Real loss = nn::serial_batch(tape, model.params(), kBatch, [&](bt::Tape<Real>& t, std::size_t i) {
        const bt::Index label = make_sample(wave, static_cast<std::uint32_t>(b + i), x);
        return model.loss(t, x.data(), label);
      });
      if ((optimizer.step(tape, model.params()) != bt::Status::kOk) || !(loss == loss)) {
        bt::port::write("training failed: ");
        bt::port::write(bt::status_name(tape.status()));
        bt::port::write("\n");
        return 1;
      }
      sum += loss;
    }
    const Real mean = sum / static_cast<Real>(kBatches);
    first = (epoch == 0) ? mean : first;
    last = mean;
  }
  const float after = accuracy(tape, model, wave);
  print("accuracy before ", before);
  print(" after ", after);
  bt::port::write("\n");
  print("loss ", static_cast<float>(first));
  print(" -> ", static_cast<float>(last));
  bt::port::write("\n");
  print("plan ", static_cast<float>(kPlan.bytes));
  print(" bytes, trained parameters ", static_cast<float>(kws::Model::kParameters));
  print(" of ", static_cast<float>(kws::Model::kModelParameters));
  bt::port::write("\n");
  return ((after >= 0.9F) && (after > before)) ? 0 : 1;
}

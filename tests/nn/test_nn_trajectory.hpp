// SPDX-License-Identifier: Apache-2.0
// The trajectory-parity setups shared by tests/nn/test_nn_trajectory.cpp and
// the exporter tests/nn/test_nn_export.cpp (whose output the PyTorch script
// tools/golden/nn/make_trajectory.py loads): models initialised by our
// PRNG, and the samples of every step, made from the generated default data
// (data/default_data.hpp) by a seeded Rng. Nothing is stored: sample k of a
// run is recomputed from the seeds.
#ifndef BURTORCH_TESTS_NN_TRAJECTORY_HPP
#define BURTORCH_TESTS_NN_TRAJECTORY_HPP

#include <burtorch/nn/nn.hpp>

#include <cstddef>
#include <cstdint>

#include "default_data.hpp"

namespace trajectory {

namespace nn = burtorch::nn;

constexpr int kSteps = 100;
constexpr std::uint64_t kInitSeed = 1234U;
constexpr std::uint64_t kDataSeed = 99U;

// MLP: vocabulary 27, context 16, embedding 64, hidden e; batches of 4.
constexpr std::size_t kMlpBatch = 4U;
constexpr std::size_t kContext = 16U;
constexpr std::size_t kNames = 4000U;
constexpr double kMlpSgdLr = 0.1;
constexpr double kMlpAdamLr = 0.01;
constexpr nn::MlpOptions mlp_config(burtorch::Index hidden) noexcept { return nn::MlpOptions{27U, 16U, 64U, hidden}; }

// One MLP sample: a random position of a random generated name.
inline void mlp_sample(nn::Rng& rng, std::uint8_t* context, std::uint8_t* target) noexcept {
  char word[default_data::kMaxNameLength + 1U];
  const std::size_t len = default_data::name(rng.below(static_cast<std::uint32_t>(kNames)), word);
  const std::size_t pos = rng.below(static_cast<std::uint32_t>(len + 1U));
  for (std::size_t k = 0U; k < kContext; ++k) {
    // context[k] is the character kContext - k places before pos (0: boundary)
    const std::size_t back = kContext - k;
    context[k] = (back <= pos) ? static_cast<std::uint8_t>(word[pos - back] - 'a' + 1) : std::uint8_t{0};
  }
  *target = (pos < len) ? static_cast<std::uint8_t>(word[pos] - 'a' + 1) : std::uint8_t{0};
}

// GPT: the paper's model (vocabulary 65 as tinyshakespeare's character set,
// block 8, width 24, 6 heads, 6 layers); batches of 2 windows of 9
// characters of a generated sentence.
constexpr std::size_t kGptBatch = 2U;
constexpr std::size_t kSentences = 2000U;
constexpr double kGptSgdLr = 0.1;
constexpr double kGptAdamLr = 0.001;
constexpr nn::GptOptions kGpt{65U, 8U, 24U, 6U, 6U, 1e-5};
constexpr const char kAlphabet[] = "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
static_assert(sizeof(kAlphabet) == 66U, "65 characters");

inline std::uint8_t token_of(char ch) noexcept {
  for (std::uint8_t i = 0U; i < 65U; ++i) {
    if (kAlphabet[i] == ch) {
      return i;
    }
  }
  return 1U;  // space
}

// tokens[0..9): a window of a random sentence (inputs 0..8, targets 1..9).
inline void gpt_sample(nn::Rng& rng, std::uint8_t* tokens) noexcept {
  char text[default_data::kMaxSentenceLength];
  std::size_t len = 0U;
  do {
    len = default_data::sentence(rng.below(static_cast<std::uint32_t>(kSentences)), text);
  } while (len < 10U);
  const std::size_t at = rng.below(static_cast<std::uint32_t>(len - 9U));
  for (std::size_t i = 0U; i < 9U; ++i) {
    tokens[i] = token_of(text[at + i]);
  }
}

}  // namespace trajectory

#endif  // BURTORCH_TESTS_NN_TRAJECTORY_HPP

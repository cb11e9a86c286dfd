// SPDX-License-Identifier: Apache-2.0
// The peer comparison's trainer: a 16-32-4 ReLU MLP, softmax cross-entropy,
// plain SGD (lr 0.1) in batches of 8, FP32, on 64 synthetic samples drawn
// at start-up (a 32-bit xorshift in float arithmetic; class = the group of
// inputs j % 4 with the largest sum). Built out of tree against an
// installed Cortex-M package (CMakeLists.txt here), as a user builds a
// firmware, twice: PEER_HANDWRITTEN=0 trains with libburtorch (nn::Linear,
// nn::cross_entropy, nn::serial_batch with SGD), PEER_HANDWRITTEN=1 with
// the plain loops of ../handwritten_mlp.hpp (the floor: no tape, no
// checks). Both start from the same weights and see the same samples.
// PEER_DEFAULTS=1 is the library's trainer written as the docs teach: the
// layers made by create(tape, options, rng) with the options' default
// initialisation, the losses printed with format_double (its samples are
// the next draws of the same generator).
//
// PEER_COMPILED=1 trains with a compiled step instead of the tape: the
// library's trainer's sample recorded on the build machine by
// peer_generate.cpp and emitted as C++ (burtorch/compile/emit.hpp,
// burtorch_compile_step: an in-tree build, bench/mcu/CMakeLists.txt), the
// same SGD step; the same losses as the library's trainer.
//
// Prints "peer steps <n> first <loss> last <loss>"; exits 0 if the loss
// went down. With PEER_TICKS=1 it also prints the calibration lines of
// ../icount.hpp and "peer ticks <ticks>" around the training steps, for
// turning into instructions per step under QEMU
// -icount (flash is measured on the PEER_TICKS=0 build).
#include <burtorch/port/port.hpp>
#include <burtorch/tools/stream.hpp>

#include <cstddef>
#include <cstdint>

#ifndef PEER_COMPILED
#define PEER_COMPILED 0
#endif
#if PEER_HANDWRITTEN
#include "handwritten_mlp.hpp"
#elif PEER_COMPILED
#include "peer_step.hpp"
#else
#include <burtorch/nn/linear.hpp>
#include <burtorch/nn/losses.hpp>
#include <burtorch/nn/optim.hpp>
#include <burtorch/nn/train.hpp>
#endif
#if PEER_TICKS
#include "icount.hpp"
#endif
#ifndef PEER_DEFAULTS
#define PEER_DEFAULTS 0
#endif

namespace bt = burtorch;

namespace {

constexpr std::size_t kIn = 16U;
constexpr std::size_t kHidden = 32U;
constexpr std::size_t kOut = 4U;
constexpr std::size_t kBatch = 8U;
constexpr std::size_t kSamples = 64U;
constexpr unsigned kSteps = 200U;
constexpr float kLr = 0.1F;
constexpr std::size_t kParams = (kIn * kHidden) + kHidden + (kHidden * kOut) + kOut;

float g_x[kSamples][kIn];
unsigned g_y[kSamples];

// Uniform in [-1, 1) from a 32-bit xorshift, in float arithmetic.
struct Draw {
  std::uint32_t state = 2463534242U;
  float operator()() noexcept {
    state ^= state << 13U;
    state ^= state >> 17U;
    state ^= state << 5U;
    return (static_cast<float>(state >> 8U) * (2.0F / 16777216.0F)) - 1.0F;
  }
};

// Initial weights (W1, b1, W2, b2 as nn::Linear lays them out): fan-in
// uniform, biases in [-0.1, 0.1).
void initial_weights(float* w, Draw& draw) {
  std::size_t k = 0U;
  const float bound1 = 0.61237244F;  // sqrt(6 / 16)
  const float bound2 = 0.4330127F;   // sqrt(6 / 32)
  for (std::size_t i = 0U; i < kIn * kHidden; ++i, ++k) {
    w[k] = bound1 * draw();
  }
  for (std::size_t i = 0U; i < kHidden; ++i, ++k) {
    w[k] = 0.1F * draw();
  }
  for (std::size_t i = 0U; i < kHidden * kOut; ++i, ++k) {
    w[k] = bound2 * draw();
  }
  for (std::size_t i = 0U; i < kOut; ++i, ++k) {
    w[k] = 0.1F * draw();
  }
}

void make_data(Draw& draw) {
  for (std::size_t i = 0U; i < kSamples; ++i) {
    float sums[kOut] = {};
    for (std::size_t k = 0U; k < kIn; ++k) {
      g_x[i][k] = draw();
      sums[k % kOut] += g_x[i][k];
    }
    unsigned best = 0U;
    for (unsigned c = 1U; c < kOut; ++c) {
      best = (sums[c] > sums[best]) ? c : best;
    }
    g_y[i] = best;
  }
}

std::size_t sample_index(unsigned step, std::size_t b) { return ((step * kBatch) + b) % kSamples; }

void print_float(const char* label, float v) {
#if PEER_DEFAULTS
  char text[32];
  const std::size_t n = bt::format_double(v, text, sizeof(text), 7);
#else
  char text[24];
  const std::size_t n = bt::format_float(v, text, sizeof(text), 7);
#endif
  bt::port::write(label);
  bt::port::write(text, n);
}

#if PEER_HANDWRITTEN
constexpr handwritten::Shape kShape{kIn, kHidden, kOut};
float g_w[kParams];
float g_g[kParams];
float g_work[handwritten::scratch(kShape)];
#elif PEER_COMPILED
// The sample's nodes (parameters first) and their gradients.
float g_v[peer_step::kNodes];
float g_g[peer_step::kNodes];
static_assert(peer_step::kParams == kParams, "the compiled step trains the same model");
#else
namespace nn = burtorch::nn;
constexpr nn::LinearOptions layer(std::size_t in, std::size_t out, nn::Activation act) noexcept {
  nn::LinearOptions o{};
  o.in = static_cast<bt::Index>(in);
  o.out = static_cast<bt::Index>(out);
  o.act = act;
  return o;
}
constexpr nn::LinearOptions kL1 = layer(kIn, kHidden, nn::Activation::kRelu);
constexpr nn::LinearOptions kL2 = layer(kHidden, kOut, nn::Activation::kIdentity);
// One sample after the parameters: its inputs, the two layers, the loss.
constexpr std::size_t kNodes = kParams + kIn + kHidden + kOut + nn::kCrossEntropyNodes;
constexpr std::size_t kSlots = nn::Linear<float>::view_slots(kL1) + nn::Linear<float>::view_slots(kL2);
bt::FixedTape<float, kNodes, kSlots, kParams> g_tape;
#if !PEER_DEFAULTS
float g_initial[kParams];
#endif
#endif

}  // namespace

int main() {
  Draw draw;
#if PEER_HANDWRITTEN
  initial_weights(g_w, draw);
#elif PEER_COMPILED
  initial_weights(&g_v[peer_step::kParamFirst], draw);
#elif !PEER_DEFAULTS
  initial_weights(g_initial, draw);
#endif
  make_data(draw);
#if PEER_TICKS
  icount::calibrate(100000U);
#endif
  float first = 0.0F;
  float last = 0.0F;
#if PEER_HANDWRITTEN
  handwritten::Mlp mlp(kShape, g_w, g_g, g_work);
  const float* xb[kBatch];
  unsigned yb[kBatch];
#elif PEER_COMPILED
  bool ok = true;
#else
  nn::Linear<float> l1;
  nn::Linear<float> l2;
#if PEER_DEFAULTS
  nn::Rng rng(1U);
  if (!l1.create(g_tape, kL1, rng) || !l2.create(g_tape, kL2, rng)) {
    return 1;
  }
#else
  if (!l1.create(g_tape, kL1, g_initial) || !l2.create(g_tape, kL2, &g_initial[nn::Linear<float>::parameters(kL1)])) {
    return 1;
  }
#endif
  nn::OptimizerOptions<float> sgd;
  sgd.lr = kLr;
  nn::Optimizer<float> opt(sgd);  // SGD: no state
  const bt::View params{0U, static_cast<bt::Index>(kParams)};
  unsigned step = 0U;
  const auto sample_loss = [&](bt::Tape<float>& tape, std::size_t b) {
    const std::size_t i = sample_index(step, b);
    const bt::Index in = static_cast<bt::Index>(tape.size());
    for (std::size_t k = 0U; k < kIn; ++k) {
      static_cast<void>(tape.input(g_x[i][k]));  // features: no gradient
    }
    const bt::View h = l1.forward<nn::Activation::kRelu>(tape, bt::View{in, static_cast<bt::Index>(kIn)});
    const bt::View z = l2.forward<nn::Activation::kIdentity>(tape, h);
    return nn::cross_entropy(tape, z, static_cast<bt::Index>(g_y[i]));
  };
#endif
#if PEER_TICKS
  const std::uint64_t t0 = bt::port::ticks();
#endif
#if PEER_HANDWRITTEN
  for (unsigned step = 0U; step < kSteps; ++step) {
    for (std::size_t b = 0U; b < kBatch; ++b) {
      xb[b] = g_x[sample_index(step, b)];
      yb[b] = g_y[sample_index(step, b)];
    }
    const float loss = mlp.step(xb, yb, kBatch, kLr);
#elif PEER_COMPILED
  for (unsigned step = 0U; step < kSteps; ++step) {
    float total = 0.0F;
    for (std::size_t b = 0U; b < kBatch; ++b) {
      const std::size_t i = sample_index(step, b);
      ok = ok && (peer_step::step(g_v, g_g, g_x[i], nullptr, static_cast<bt::Index>(g_y[i])) == bt::Status::kOk);
      total += g_v[peer_step::kLoss];
    }
    peer_step::sgd(g_v, g_g, kLr, 1.0F / static_cast<float>(kBatch));
    const float loss = ok ? (total / static_cast<float>(kBatch)) : 1e9F;
#else
  for (step = 0U; step < kSteps; ++step) {
    const float loss = nn::serial_batch<nn::OptimizerKind::kSgd>(g_tape, params, kBatch, sample_loss, opt);
#endif
    first = (step == 0U) ? loss : first;
    last = loss;
  }
#if PEER_TICKS
  const std::uint64_t t1 = bt::port::ticks();
  bt::port::write("peer ticks ");
  char text[24];
  bt::port::write(text, bt::format_unsigned(t1 - t0, text, sizeof(text)));
  bt::port::write("\n");
#endif
  bt::port::write("peer steps 200");
  print_float(" first ", first);
  print_float(" last ", last);
  bt::port::write("\n");
  return (last < first) ? 0 : 1;
}

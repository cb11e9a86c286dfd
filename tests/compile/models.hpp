// SPDX-License-Identifier: Apache-2.0
// The models whose training steps tests/compile compiles: recorded by the
// same code in the host generator (generate_steps.cpp, at build time) and
// in the test on the target (test_compiled_step.cpp), which checks that the
// two recordings have the same structure (compile::structure_digest) before
// it compares the compiled step with the tape's replay.
//   Xor       2-4-1, tanh hidden layer, linear output, MSE (the smallest
//             trainer, examples/tiny_xor_firmware)
//   Mlp       16-32-4, ReLU hidden layer, softmax cross-entropy (the
//             instruction-count trainer's small model, bench/mcu)
//   Random    a graph of every elementwise op of the core, on operands drawn
//             at random, closed by reductions and an inner product of lists
// No value decides what is recorded (libm differs between host and target):
// the graph of a seed is the same on every target.
#ifndef BURTORCH_TESTS_COMPILE_MODELS_HPP
#define BURTORCH_TESTS_COMPILE_MODELS_HPP

#include <burtorch/burtorch.hpp>
#include <burtorch/compile/emit.hpp>
#include <burtorch/nn/linear.hpp>
#include <burtorch/nn/losses.hpp>

#include <cstddef>
#include <cstdint>

namespace compile_models {

namespace bt = burtorch;
namespace nn = burtorch::nn;

// Uniform in [-bound, bound) from a 32-bit xorshift, in float arithmetic
// (exact: the same floats everywhere).
struct Draw {
  std::uint32_t state = 2463534242U;
  std::uint32_t next() noexcept {
    state ^= state << 13U;
    state ^= state >> 17U;
    state ^= state << 5U;
    return state;
  }
  float operator()(float bound) noexcept {
    const float unit = static_cast<float>(next() >> 8U) * (1.0F / 16777216.0F);  // [0, 1), exact
    return bound * ((2.0F * unit) - 1.0F);
  }
};

constexpr nn::LinearOptions layer(bt::Index in, bt::Index out, nn::Activation act) noexcept {
  nn::LinearOptions o{};
  o.in = in;
  o.out = out;
  o.act = act;
  return o;
}

// A model of two layers, inputs -> hidden (activation A) -> output (linear).
template <bt::Index In, bt::Index Hidden, bt::Index Out, nn::Activation A>
struct TwoLayers {
  static constexpr nn::LinearOptions kHidden = layer(In, Hidden, A);
  static constexpr nn::LinearOptions kOutput = layer(Hidden, Out, nn::Activation::kIdentity);
  static constexpr std::size_t kParams =
      nn::Linear<float>::parameters(kHidden) + nn::Linear<float>::parameters(kOutput);
  static constexpr std::size_t kNodes =
      kParams + In + nn::Linear<float>::nodes(kHidden) + nn::Linear<float>::nodes(kOutput) + Out + 2U;
  static constexpr std::size_t kSlots =
      nn::Linear<float>::view_slots(kHidden) + nn::Linear<float>::view_slots(kOutput) + 8U;
  nn::Linear<float> hidden;
  nn::Linear<float> output;
  bool create(bt::Tape<float>& tape, std::uint32_t seed) {
    float initial[kParams];
    Draw draw;
    draw.state ^= seed;
    for (float& w : initial) {
      w = draw(0.9F);
    }
    return hidden.create(tape, kHidden, initial) &&
           output.create(tape, kOutput, &initial[nn::Linear<float>::parameters(kHidden)]);
  }
  bt::View params() const { return bt::View{hidden.weight, static_cast<bt::Index>(kParams)}; }
  // The output view of one sample whose inputs x[0..In) are recorded first.
  bt::View forward(bt::Tape<float>& tape, const float* x) const {
    const bt::Index first = static_cast<bt::Index>(tape.size());
    for (bt::Index k = 0U; k < In; ++k) {
      static_cast<void>(tape.input(x[k]));
    }
    const bt::View h = hidden.template forward<A>(tape, bt::View{first, In});
    return output.template forward<nn::Activation::kIdentity>(tape, h);
  }
};

// XOR: MSE against one target.
struct Xor : TwoLayers<2U, 4U, 1U, nn::Activation::kTanh> {
  static constexpr const char* kName = "xor_step";
  bt::Value<float> loss(bt::Tape<float>& tape, const float* x, float y) const {
    return nn::mse(tape, forward(tape, x), &y);
  }
  // The step's spec for the loss recorded after mark m.
  bt::compile::StepSpec spec(bt::Mark m, bt::Value<float> loss) const {
    bt::compile::StepSpec s;
    s.name = kName;
    s.params = params();
    s.inputs = bt::View{m.nodes, 2U};
    s.targets = bt::View{loss.index() - 1U, 1U};  // mse: the difference, then the mean
    return s;
  }
};

// 16-32-4 ReLU MLP: cross-entropy against a class.
struct Mlp : TwoLayers<16U, 32U, 4U, nn::Activation::kRelu> {
  static constexpr const char* kName = "mlp_step";
  bt::Value<float> loss(bt::Tape<float>& tape, const float* x, bt::Index label) const {
    return nn::cross_entropy(tape, forward(tape, x), label);
  }
  bt::compile::StepSpec spec(bt::Mark m, bt::Value<float> loss) const {
    bt::compile::StepSpec s;
    s.name = kName;
    s.params = params();
    s.inputs = bt::View{m.nodes, 16U};
    s.class_loss = loss.index();
    return s;
  }
};

// A random graph over every elementwise op of the core.
struct Random {
  static constexpr bt::Index kParams = 5U;
  static constexpr bt::Index kInputs = 3U;
  static constexpr std::size_t kOps = 27U;  // the elementwise ops below
  static constexpr std::size_t kSteps = 30U;  // at least kOps: every op in every graph
  // At most five nodes per op (x's tanh, positive()'s three, the op), the closing reductions.
  static constexpr std::size_t kNodes = kParams + kInputs + (kSteps * 5U) + 16U;
  static constexpr std::size_t kSlots = (kSteps * 2U) + 64U;
  std::uint32_t seed = 1U;
  bool create(bt::Tape<float>& tape) const {
    Draw draw;
    draw.state ^= seed * 2654435761U;
    for (bt::Index k = 0U; k < kParams; ++k) {
      static_cast<void>(tape.param(draw(1.0F)));
    }
    return tape.status() == bt::Status::kOk;
  }
  bt::View params() const { return bt::View{0U, kParams}; }
  static bt::Value<float> positive(bt::Value<float> x) { return bt::sqr(bt::tanh(x)) + 0.5F; }
  // Op k of x and y (constants from the draw).
  static bt::Value<float> apply(std::size_t k, bt::Value<float> x, bt::Value<float> y, Draw& draw) {
    const float c = draw(2.0F);
    const bt::Value<float> t = bt::tanh(x);  // bounded operands for the ops that grow
    switch (k) {
      case 0U: return -x;
      case 1U: return x + c;
      case 2U: return c - x;
      case 3U: return c / positive(x);
      case 4U: return bt::relu(x);
      case 5U: return bt::tanh(y);
      case 6U: return bt::exp(t);
      case 7U: return bt::log(positive(x));
      case 8U: return bt::neg_log(positive(x));
      case 9U: return bt::sigmoid(x);
      case 10U: return bt::inv(positive(x));
      case 11U: return bt::sqr(t);
      case 12U: return bt::pow3(t);
      case 13U: return bt::sqrt(positive(x));
      case 14U: return bt::inv_sqrt(positive(x));
      case 15U: return x * c;
      case 16U: return x / (c + 3.0F);
      case 17U: return x + y;
      case 18U: return x - y;
      case 19U: return t * bt::tanh(y);
      case 20U: return x / positive(y);
      case 21U: return bt::mean(x, y);
      case 22U: return bt::add_squares(t, y);
      case 23U: return bt::mean_squares(t, y);
      case 24U: return bt::negative_mean(x, y);
      case 25U: return bt::relu(x - y);
      default: return bt::sigmoid(x * y);
    }
  }
  // One sample: the inputs x[0..kInputs), kSteps ops, then reductions.
  bt::Value<float> loss(bt::Tape<float>& tape, const float* x) const {
    Draw draw;
    draw.state ^= seed * 40503U;
    bt::Value<float> pool[kParams + kInputs + kSteps];
    std::size_t n = 0U;
    for (bt::Index k = 0U; k < kParams; ++k) {
      pool[n++] = bt::Value<float>(&tape, k);
    }
    for (bt::Index k = 0U; k < kInputs; ++k) {
      pool[n++] = tape.input(x[k]);
    }
    for (std::size_t s = 0U; s < kSteps; ++s) {
      const bt::Value<float> a = pool[draw.next() % n];
      const bt::Value<float> b = pool[draw.next() % n];
      pool[n++] = apply((s + seed) % kOps, a, b, draw);
    }
    // Reductions over lists of the last results and the parameters.
    const bt::Value<float>* tail = &pool[n - 6U];
    const bt::Value<float> parts[] = {
        bt::reduce_mean(tape, tail, 6U), bt::log_sum_exp(tape, tail, 6U), bt::variance(tape, tail, 6U),
        bt::inner_product(tape, &pool[0], &pool[n - kParams], kParams, nullptr),
        bt::reduce_sum_of_squares(tape, &pool[kParams], 8U)};
    return bt::reduce_sum(tape, parts, 5U);
  }
  bt::compile::StepSpec spec(bt::Mark m, const char* name) const {
    bt::compile::StepSpec s;
    s.name = name;
    s.params = params();
    s.inputs = bt::View{m.nodes, kInputs};
    return s;
  }
};

// The seeds of the random graphs (a step each: random_step_<seed>).
constexpr std::uint32_t kRandomSeeds[] = {1U, 2U, 3U, 4U, 5U, 6U};

}  // namespace compile_models

#endif  // BURTORCH_TESTS_COMPILE_MODELS_HPP

// SPDX-License-Identifier: Apache-2.0
// What a frozen backbone saves: one sample of a model whose backbone is
// frozen and whose head trains (FP32), recorded and differentiated in four
// ways, with the tape it needs:
//   full         every parameter on the tape, every gradient computed
//   stop         the same plus Tape::stop_gradient() after the backbone
//   flash        backbone as FrozenLinear layers (int8 arrays), no stop
//   flash-stop   the same plus Tape::stop_gradient()
// Instructions of the backward pass alone (docs/training.md, "Fine-tuning"):
//   valgrind --tool=callgrind --toggle-collect='burtorch::Tape<float>::backward*'
//     build/host/bench/bench_finetune --mode flash-stop --iterations 100
// divided by the iterations. The program also prints the tape's nodes,
// slots and bytes, the norm of the head's gradient (the same in the two
// on-tape modes, and in the two flash modes, whose backbone is int8) and
// the median wall time of one backward.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

constexpr bt::Index kIn = 32U;
constexpr bt::Index kHidden = 64U;
constexpr bt::Index kClasses = 8U;

enum class Mode { kFull, kStop, kFlash, kFlashStop };
const char* const kModeNames[] = {"full", "stop", "flash", "flash-stop"};

struct Model {
  nn::Linear<float> l1;
  nn::Linear<float> l2;
  nn::FrozenLinear<float> f1;
  nn::FrozenLinear<float> f2;
  nn::Linear<float> head;
  bool flash = false;
  bool stop = false;
};

nn::LinearOptions options(bt::Index in, bt::Index out, nn::Activation act) {
  nn::LinearOptions o;
  o.in = in;
  o.out = out;
  o.act = act;
  return o;
}

// The int8 backbone, exported from the on-tape one.
std::vector<std::int8_t> g_w1(static_cast<std::size_t>(kIn) * kHidden);
std::vector<std::int8_t> g_w2(static_cast<std::size_t>(kHidden) * kHidden);
std::vector<float> g_b1(kHidden);
std::vector<float> g_b2(kHidden);

bt::Value<float> sample_loss(bt::Tape<float>& tape, const Model& m, const float* x, bt::Index label) {
  const bt::View in = bt::record_view(tape, kIn, [&](bt::Index k) noexcept { return tape.leaf(x[k]); });
  const bt::View h = m.flash ? m.f2.forward(tape, m.f1.forward(tape, in)) : m.l2.forward(tape, m.l1.forward(tape, in));
  if (m.stop) {
    bt::stop_gradient(tape);
  }
  return nn::cross_entropy(tape, m.head.forward(tape, h), label);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode_name = "flash-stop";
  long iterations = 1000;
  constexpr const char* kUsage = "usage: bench_finetune [--mode full|stop|flash|flash-stop] [--iterations N]\n";
  for (int i = 1; i < argc; i += 2) {
    if ((std::strcmp(argv[i], "--help") == 0) || (std::strcmp(argv[i], "-h") == 0)) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if ((std::strcmp(argv[i], "--mode") == 0) && (i + 1 < argc)) {
      mode_name = argv[i + 1];
    } else if ((std::strcmp(argv[i], "--iterations") == 0) && (i + 1 < argc)) {
      iterations = std::atol(argv[i + 1]);
    } else {
      std::fputs(kUsage, stderr);
      return 2;
    }
  }
  int mode_index = -1;
  for (int k = 0; k < 4; ++k) {
    mode_index = (mode_name == kModeNames[k]) ? k : mode_index;
  }
  if ((mode_index < 0) || (iterations < 1)) {
    std::fprintf(stderr, "bench_finetune: bad --mode or --iterations\n");
    return 2;
  }
  const Mode mode = static_cast<Mode>(mode_index);
  const bool flash = (mode == Mode::kFlash) || (mode == Mode::kFlashStop);

  // Every mode builds the same backbone (same seed) to get the same numbers.
  const nn::LinearOptions o1 = options(kIn, kHidden, nn::Activation::kTanh);
  const nn::LinearOptions o2 = options(kHidden, kHidden, nn::Activation::kTanh);
  const nn::LinearOptions oh = options(kHidden, kClasses, nn::Activation::kIdentity);
  const std::size_t body_params = nn::Linear<float>::parameters(o1) + nn::Linear<float>::parameters(o2);
  const std::size_t head_params = nn::Linear<float>::parameters(oh);
  const std::size_t on_tape = flash ? head_params : (body_params + head_params);
  const std::size_t body_nodes = flash ? (2U * nn::FrozenLinear<float>::nodes(kHidden, nn::Activation::kTanh))
                                       : (nn::Linear<float>::nodes(o1) + nn::Linear<float>::nodes(o2));
  const std::size_t body_slots = flash ? (2U * nn::FrozenLinear<float>::view_slots())
                                       : (nn::Linear<float>::view_slots(o1) + nn::Linear<float>::view_slots(o2));
  const std::size_t sample_nodes = kIn + body_nodes + nn::Linear<float>::nodes(oh) + nn::kCrossEntropyNodes;
  const std::size_t slots = body_slots + nn::Linear<float>::view_slots(oh);
  // The exporter: a tape with the backbone on it (also the model of the
  // on-tape modes).
  const nn::MemoryPlan plan = nn::make_finetune_plan<float>(on_tape, head_params, sample_nodes, slots, nn::OptimizerKind::kSgd);
  const std::size_t source_bytes = bt::Tape<float>::bytes_required(body_params + head_params + sample_nodes, slots, body_params + head_params);
  std::vector<unsigned char> source_buffer(source_bytes + 64U);
  void* aligned = source_buffer.data() + ((64U - (reinterpret_cast<std::uintptr_t>(source_buffer.data()) % 64U)) % 64U);
  bt::Tape<float> source(aligned, source_bytes, body_params + head_params + sample_nodes, slots, body_params + head_params);
  nn::Rng rng(1U);
  Model src;
  if (!src.l1.create(source, o1, rng) || !src.l2.create(source, o2, rng) || !src.head.create(source, oh, rng)) {
    std::fprintf(stderr, "bench_finetune: the source model does not fit\n");
    return 1;
  }
  float s1 = 0.0F;
  float s2 = 0.0F;
  static_cast<void>(bt::quantize_i8(source.values() + src.l1.weight, g_w1.size(), g_w1.data(), &s1));
  static_cast<void>(bt::quantize_i8(source.values() + src.l2.weight, g_w2.size(), g_w2.data(), &s2));
  for (bt::Index k = 0U; k < kHidden; ++k) {
    g_b1[k] = source.values()[src.l1.bias + k];
    g_b2[k] = source.values()[src.l2.bias + k];
  }

  // The tape of this mode: exactly its plan.
  std::vector<unsigned char> buffer(plan.tape_bytes + 64U);
  void* at = buffer.data() + ((64U - (reinterpret_cast<std::uintptr_t>(buffer.data()) % 64U)) % 64U);
  bt::Tape<float> tape(at, plan.tape_bytes, plan.nodes, plan.slots, plan.parameters);
  Model m;
  m.flash = flash;
  m.stop = (mode == Mode::kStop) || (mode == Mode::kFlashStop);
  nn::Rng rng2(1U);
  if (!flash) {
    static_cast<void>(m.l1.create(tape, o1, rng2));
    static_cast<void>(m.l2.create(tape, o2, rng2));
  } else {
    m.f1 = nn::FrozenLinear<float>{{bt::frozen_i8(g_w1.data(), s1), kHidden, kIn}, {bt::frozen_f32(g_b1.data()), kHidden}, nn::Activation::kTanh};
    m.f2 = nn::FrozenLinear<float>{{bt::frozen_i8(g_w2.data(), s2), kHidden, kHidden}, {bt::frozen_f32(g_b2.data()), kHidden}, nn::Activation::kTanh};
  }
  static_cast<void>(m.head.create(tape, oh, rng2));
  std::memcpy(tape.values() + m.head.weight, source.values() + src.head.weight, head_params * sizeof(float));

  float x[kIn];
  for (bt::Index k = 0U; k < kIn; ++k) {
    x[k] = static_cast<float>(std::sin(0.37 * static_cast<double>(k)));
  }
  const bt::Mark start = tape.mark();
  std::vector<double> seconds;
  for (long it = 0; it < iterations; ++it) {
    tape.zero_grad(m.head.weight, static_cast<bt::Index>(head_params));
    const bt::Value<float> loss = sample_loss(tape, m, x, 3U);
    const double t0 = bench::now_seconds();
    const bt::Status s = tape.backward(loss);
    seconds.push_back(bench::now_seconds() - t0);
    if (s != bt::Status::kOk) {
      std::fprintf(stderr, "bench_finetune: %s\n", bt::status_name(s));
      return 1;
    }
    if (it + 1 < iterations) {
      static_cast<void>(tape.rewind(start));
    }
  }
  // The head's gradient: the same in every mode (int8 backbone: close).
  double norm = 0.0;
  for (std::size_t k = 0U; k < head_params; ++k) {
    const double g = static_cast<double>(tape.grad(m.head.weight + static_cast<bt::Index>(k)));
    norm += g * g;
  }
  std::printf("mode %s: parameters on the tape %zu (trainable %zu), nodes %zu, slots %zu, tape %zu bytes; "
              "head gradient norm %.9g; backward median %.3f us\n",
              mode_name.c_str(), plan.parameters, head_params, plan.nodes, plan.slots, plan.tape_bytes, std::sqrt(norm),
              bench::stats(seconds).median * 1e6);
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
// Fine-tuning end to end, as a product would do it:
//  1. "host": an MLP 2 -> H tanh -> H tanh -> 4 is trained in FP64 on task A
//     (four Gaussian blobs around the origin);
//  2. export: the backbone (both hidden layers) to int8 (per-tensor scale,
//     FP32 biases) or FP16 (weights and biases) arrays, the head to an FP32
//     checkpoint;
//  3. "device": an FP32 tape holds only the head (loaded from the
//     checkpoint); the backbone is two FrozenLinear layers over the arrays,
//     behind Tape::stop_gradient(). The data has shifted (task B: the blobs
//     rotated by 45 degrees and relabelled), so the pretrained model is
//     mostly wrong; SGD on the head alone brings the accuracy back.
// Checks: the pretrained model and its quantized backbones classify task A
// (>= 90 %); on task B the model is below 50 % before fine-tuning and at
// least 90 % after; the head trained on the tape (FP64, same arrays) equals
// an independent FP64 computation of the same training (features from the
// formats' definitions, softmax cross-entropy gradient and SGD written out
// here) to 1e-9, and the FP32 run ends within 1e-3 of it; a backbone kept
// on the tape behind stop_gradient trains the head with the bits of a run
// that sweeps the whole model and steps the head alone, and leaves the
// backbone unchanged.
// Frozen convolutions (nn::FrozenConv1d/2d) in FP32, FP16 and int8 equal a
// direct convolution and its transpose written out here; their plans are
// exact; misuse is refused with nothing recorded.
#include <burtorch/burtorch.hpp>
#include <burtorch/checkpoint.hpp>
#include <burtorch/frozen.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "harness.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

#ifndef BURTORCH_TEST_SMALL_TARGET
#define BURTORCH_TEST_SMALL_TARGET 0
#endif
// Smaller on a 16 KB Cortex-M0 (soft-float FP64 under emulation).
constexpr bt::Index kHidden = BURTORCH_TEST_SMALL_TARGET ? 8U : 16U;
constexpr bt::Index kIn = 2U;
constexpr bt::Index kClasses = 4U;
constexpr std::size_t kTrainA = BURTORCH_TEST_SMALL_TARGET ? 96U : 256U;
constexpr std::size_t kTrainB = BURTORCH_TEST_SMALL_TARGET ? 64U : 128U;
constexpr std::size_t kTest = BURTORCH_TEST_SMALL_TARGET ? 96U : 256U;
constexpr int kPretrainSteps = BURTORCH_TEST_SMALL_TARGET ? 100 : 150;
constexpr std::size_t kBatch = 16U;
constexpr int kTuneSteps = BURTORCH_TEST_SMALL_TARGET ? 60 : 80;
constexpr double kTuneLr = 0.5;

// --- data ----------------------------------------------------------------------
struct Sample {
  double x[kIn];
  bt::Index label;
};
// Task A: class c is a blob of radius 0.45 around 2 (cos, sin)(c * 90 deg).
// Task B: the same blobs rotated by 45 degrees, class c relabelled c + 2.
Sample draw(nn::Rng& rng, bool shifted) {
  const bt::Index c = rng.below(kClasses);
  const double angle = (1.5707963267948966 * static_cast<double>(c)) + (shifted ? 0.7853981633974483 : 0.0);
  Sample s{};
  s.x[0] = (2.0 * std::cos(angle)) + rng.normal(0.0, 0.45);
  s.x[1] = (2.0 * std::sin(angle)) + rng.normal(0.0, 0.45);
  s.label = shifted ? ((c + 2U) % kClasses) : c;
  return s;
}
// The data sets are not stored (16 KB of RAM): sample i of a set is drawn
// from its own seed whenever it is needed.
enum class Set : std::uint64_t { kPretrain = 1U, kTestA = 2U, kTune = 3U, kTestB = 4U };
Sample sample(Set set, std::size_t i) {
  nn::Rng rng((static_cast<std::uint64_t>(set) << 32U) + i);
  return draw(rng, (set == Set::kTune) || (set == Set::kTestB));
}

// --- 1. pretraining in FP64 ------------------------------------------------------
constexpr nn::LinearOptions layer(bt::Index in, bt::Index out, nn::Activation act) {
  nn::LinearOptions o;
  o.in = in;
  o.out = out;
  o.act = act;
  return o;
}
constexpr nn::LinearOptions kL1 = layer(kIn, kHidden, nn::Activation::kTanh);
constexpr nn::LinearOptions kL2 = layer(kHidden, kHidden, nn::Activation::kTanh);
constexpr nn::LinearOptions kL3 = layer(kHidden, kClasses, nn::Activation::kIdentity);
constexpr std::size_t kBodyParams = (static_cast<std::size_t>(kIn + 1U) * kHidden) + (static_cast<std::size_t>(kHidden + 1U) * kHidden);
constexpr std::size_t kHeadParams = static_cast<std::size_t>(kHidden + 1U) * kClasses;
constexpr std::size_t kSampleNodes = kIn + (4U * kHidden) + kClasses + nn::kCrossEntropyNodes;
constexpr std::size_t kSampleSlots = 3U * (3U + 4U);
constexpr nn::MemoryPlan kFullPlan =
    nn::make_plan<double>(kBodyParams + kHeadParams, kSampleNodes, kSampleSlots, nn::OptimizerKind::kAdam);
bt::FixedTape<double, kFullPlan.nodes, kFullPlan.slots, kFullPlan.parameters> g_full;

struct Mlp {
  nn::Linear<double> l1;
  nn::Linear<double> l2;
  nn::Linear<double> l3;
};
Mlp g_mlp;

bt::View mlp_logits(bt::Tape<double>& tape, const Mlp& m, const Sample& s, bool stop) {
  const bt::View x = tape.record_view(kIn, [&](bt::Index k) noexcept { return tape.leaf(s.x[k]); });
  const bt::View h = m.l2.forward(tape, m.l1.forward(tape, x));
  if (stop) {
    tape.stop_gradient();
  }
  return m.l3.forward(tape, h);
}

template <class T>
bt::Index argmax(const bt::Tape<T>& tape, bt::View logits) {
  bt::Index best = 0U;
  for (bt::Index k = 1U; k < logits.count; ++k) {
    best = (tape.value(logits.first + k) > tape.value(logits.first + best)) ? k : best;
  }
  return best;
}

double mlp_accuracy(Set set, std::size_t n) {
  std::size_t right = 0U;
  const bt::Mark m = g_full.mark();
  for (std::size_t i = 0U; i < n; ++i) {
    const Sample s = sample(set, i);
    right += (argmax(g_full, mlp_logits(g_full, g_mlp, s, false)) == s.label) ? 1U : 0U;
    static_cast<void>(g_full.rewind(m));
  }
  return static_cast<double>(right) / static_cast<double>(n);
}

double g_adam[kFullPlan.optimizer_bytes / sizeof(double)];

bool pretrain() {
  g_full.reset();
  nn::Rng rng(7U);
  const bool made = g_mlp.l1.create(g_full, kL1, rng) && g_mlp.l2.create(g_full, kL2, rng) && g_mlp.l3.create(g_full, kL3, rng);
  nn::OptimizerConfig<double> config;
  config.kind = nn::OptimizerKind::kAdam;
  config.lr = 0.02;
  nn::Optimizer<double> opt(config, g_adam);
  const bt::View all{g_mlp.l1.params().first, static_cast<bt::Index>(kBodyParams + kHeadParams)};
  for (int step = 0; made && (step < kPretrainSteps); ++step) {
    static_cast<void>(nn::serial_batch(g_full, all, kBatch, [&](bt::Tape<double>& tape, std::size_t i) {
      const Sample s = sample(Set::kPretrain, ((static_cast<std::size_t>(step) * kBatch) + i) % kTrainA);
      return nn::cross_entropy(tape, mlp_logits(tape, g_mlp, s, false), s.label);
    }));
    static_cast<void>(opt.step(g_full, all));
  }
  return made && (g_full.status() == bt::Status::kOk);
}

// --- 2. export -------------------------------------------------------------------
// What the host writes into the firmware's flash, per format.
struct Export {
  std::int8_t w1_i8[kIn * kHidden];
  std::int8_t w2_i8[kHidden * kHidden];
  float s1;
  float s2;
  float b1_f32[kHidden];
  float b2_f32[kHidden];
  std::uint16_t w1_f16[kIn * kHidden];
  std::uint16_t w2_f16[kHidden * kHidden];
  std::uint16_t b1_f16[kHidden];
  std::uint16_t b2_f16[kHidden];
  float head[kHeadParams];  // the pretrained head, as FP32 (checkpoint payload)
};
Export g_export;
std::uint8_t g_checkpoint[bt::checkpoint_overhead(1U) + (kHeadParams * sizeof(float))];
std::size_t g_checkpoint_size = 0U;

bool export_model() {
  const double* v = g_full.values();
  const nn::Linear<double>& l1 = g_mlp.l1;
  const nn::Linear<double>& l2 = g_mlp.l2;
  bool ok = (bt::quantize_i8(v + l1.weight, kIn * kHidden, g_export.w1_i8, &g_export.s1) == bt::Status::kOk) &&
            (bt::quantize_i8(v + l2.weight, kHidden * kHidden, g_export.w2_i8, &g_export.s2) == bt::Status::kOk) &&
            (bt::quantize_f16(v + l1.weight, kIn * kHidden, g_export.w1_f16) == bt::Status::kOk) &&
            (bt::quantize_f16(v + l2.weight, kHidden * kHidden, g_export.w2_f16) == bt::Status::kOk) &&
            (bt::quantize_f16(v + l1.bias, kHidden, g_export.b1_f16) == bt::Status::kOk) &&
            (bt::quantize_f16(v + l2.bias, kHidden, g_export.b2_f16) == bt::Status::kOk);
  for (bt::Index k = 0U; k < kHidden; ++k) {
    g_export.b1_f32[k] = static_cast<float>(v[l1.bias + k]);
    g_export.b2_f32[k] = static_cast<float>(v[l2.bias + k]);
  }
  for (std::size_t k = 0U; k < kHeadParams; ++k) {
    g_export.head[k] = static_cast<float>(v[g_mlp.l3.weight + k]);
  }
  // The head as an FP32 checkpoint (what a trainer's --save writes).
  bt::MemoryStream out{g_checkpoint, sizeof(g_checkpoint), 0U, 0U};
  const bt::Section section{g_export.head, sizeof(g_export.head), bt::kTagValues};
  ok = ok && (bt::save_checkpoint(bt::memory_sink(&out), bt::ScalarKind::kFloat32, &section, 1U) == bt::Status::kOk);
  g_checkpoint_size = out.size;
  return ok;
}

enum class Backbone : unsigned char { kInt8, kFp16 };

template <class T>
struct FrozenBody {
  nn::FrozenLinear<T> l1;
  nn::FrozenLinear<T> l2;
};
template <class T>
FrozenBody<T> frozen_body(Backbone b) {
  FrozenBody<T> f{};
  if (b == Backbone::kInt8) {
    f.l1 = nn::FrozenLinear<T>{{bt::frozen_i8(g_export.w1_i8, g_export.s1), kHidden, kIn},
                               {bt::frozen_f32(g_export.b1_f32), kHidden},
                               nn::Activation::kTanh};
    f.l2 = nn::FrozenLinear<T>{{bt::frozen_i8(g_export.w2_i8, g_export.s2), kHidden, kHidden},
                               {bt::frozen_f32(g_export.b2_f32), kHidden},
                               nn::Activation::kTanh};
  } else {
    f.l1 = nn::FrozenLinear<T>{{bt::frozen_f16(g_export.w1_f16), kHidden, kIn},
                               {bt::frozen_f16(g_export.b1_f16), kHidden},
                               nn::Activation::kTanh};
    f.l2 = nn::FrozenLinear<T>{{bt::frozen_f16(g_export.w2_f16), kHidden, kHidden},
                               {bt::frozen_f16(g_export.b2_f16), kHidden},
                               nn::Activation::kTanh};
  }
  return f;
}

// --- 3. the device: a tape of the head only ----------------------------------------
constexpr std::size_t kTuneNodes =
    kIn + (2U * nn::FrozenLinear<float>::nodes(kHidden, nn::Activation::kTanh)) + kClasses + nn::kCrossEntropyNodes;
constexpr std::size_t kTuneSlots = (2U * nn::FrozenLinear<float>::view_slots()) + nn::Linear<float>::view_slots(kL3);
constexpr nn::MemoryPlan kTunePlan =
    nn::make_finetune_plan<float>(kHeadParams, kHeadParams, kTuneNodes, kTuneSlots, nn::OptimizerKind::kSgd);
static_assert(kTunePlan.optimizer_bytes == 0U, "SGD: no state");
static_assert(kTunePlan.tape_bytes < kFullPlan.tape_bytes, "the frozen backbone takes no tape");
bt::FixedTape<float, kTunePlan.nodes, kTunePlan.slots, kTunePlan.parameters> g_device;
bt::FixedTape<double, kTunePlan.nodes, kTunePlan.slots, kTunePlan.parameters> g_device64;

template <class T>
bt::View tuned_logits(bt::Tape<T>& tape, const FrozenBody<T>& body, const nn::Linear<T>& head, const Sample& s) {
  const bt::View x = tape.record_view(kIn, [&](bt::Index k) noexcept { return tape.leaf(static_cast<T>(s.x[k])); });
  const bt::View h = body.l2.forward(tape, body.l1.forward(tape, x));
  tape.stop_gradient();  // the backbone passes no gradient on
  return head.forward(tape, h);
}

template <class T>
double tuned_accuracy(bt::Tape<T>& tape, const FrozenBody<T>& body, const nn::Linear<T>& head, Set set, std::size_t n) {
  std::size_t right = 0U;
  const bt::Mark m = tape.mark();
  for (std::size_t i = 0U; i < n; ++i) {
    const Sample s = sample(set, i);
    right += (argmax(tape, tuned_logits(tape, body, head, s)) == s.label) ? 1U : 0U;
    static_cast<void>(tape.rewind(m));
  }
  return static_cast<double>(right) / static_cast<double>(n);
}

// Creates the head on a device tape and sets it to the pretrained head:
// from the checkpoint on the FP32 tape, from the same floats on FP64.
template <class T>
bool make_head(bt::Tape<T>& tape, nn::Linear<T>* head);
template <>
bool make_head<float>(bt::Tape<float>& tape, nn::Linear<float>* head) {
  tape.reset();
  nn::Rng rng(1U);
  if (!head->create(tape, kL3, rng)) {
    return false;
  }
  bt::MemoryStream in{g_checkpoint, g_checkpoint_size, g_checkpoint_size, 0U};
  return bt::load_nodes(tape, head->weight, static_cast<bt::Index>(kHeadParams), false, bt::memory_source(&in)) ==
         bt::Status::kOk;
}
template <>
bool make_head<double>(bt::Tape<double>& tape, nn::Linear<double>* head) {
  tape.reset();
  nn::Rng rng(1U);
  const bool made = head->create(tape, kL3, rng);
  for (std::size_t k = 0U; made && (k < kHeadParams); ++k) {
    tape.values()[head->weight + k] = static_cast<double>(g_export.head[k]);
  }
  return made;
}

// SGD on the head alone: kTuneSteps batches of kBatch samples of task B.
template <class T>
bool fine_tune(bt::Tape<T>& tape, const FrozenBody<T>& body, const nn::Linear<T>& head) {
  nn::OptimizerConfig<T> config;
  config.lr = static_cast<T>(kTuneLr);
  nn::Optimizer<T> opt(config);
  bool ok = true;
  for (int step = 0; ok && (step < kTuneSteps); ++step) {
    const T loss = nn::serial_batch(tape, head.params(), kBatch, [&](bt::Tape<T>& t, std::size_t i) {
      const Sample s = sample(Set::kTune, ((static_cast<std::size_t>(step) * kBatch) + i) % kTrainB);
      return nn::cross_entropy(t, tuned_logits(t, body, head, s), s.label);
    });
    ok = std::isfinite(static_cast<double>(loss)) && (opt.step(tape, head.params()) == bt::Status::kOk);
  }
  return ok && (tape.status() == bt::Status::kOk);
}

// --- the independent FP64 reference of step 3 ------------------------------------------
[[gnu::noinline]] double to_double(int i) { return static_cast<double>(i); }
double ref_f16(std::uint16_t h) {
  const double sign = ((h & 0x8000U) != 0U) ? -1.0 : 1.0;
  const int e = (h >> 10) & 0x1F;
  const int m = h & 0x3FF;
  // The conversion in a function of its own: GCC 12 if-converts it on the
  // Cortex-M55 into a predicated "vcvtne.f64.s32", which the assembler rejects.
  const double significand = to_double((e == 0) ? m : (1024 + m));
  return sign * std::ldexp(significand, (e == 0) ? -24 : (e - 25));
}
double ref_w1(Backbone b, std::size_t k) {
  return (b == Backbone::kInt8) ? static_cast<double>(g_export.s1 * static_cast<float>(g_export.w1_i8[k])) : ref_f16(g_export.w1_f16[k]);
}
double ref_w2(Backbone b, std::size_t k) {
  return (b == Backbone::kInt8) ? static_cast<double>(g_export.s2 * static_cast<float>(g_export.w2_i8[k])) : ref_f16(g_export.w2_f16[k]);
}
double ref_b1(Backbone b, std::size_t k) {
  return (b == Backbone::kInt8) ? static_cast<double>(g_export.b1_f32[k]) : ref_f16(g_export.b1_f16[k]);
}
double ref_b2(Backbone b, std::size_t k) {
  return (b == Backbone::kInt8) ? static_cast<double>(g_export.b2_f32[k]) : ref_f16(g_export.b2_f16[k]);
}
// The backbone's features of a sample: tanh(W2 tanh(W1 x + b1) + b2).
void ref_features(Backbone b, const Sample& s, double* f) {
  double h[kHidden];
  for (bt::Index o = 0U; o < kHidden; ++o) {
    double z = ref_b1(b, o);
    for (bt::Index k = 0U; k < kIn; ++k) {
      z += ref_w1(b, (o * kIn) + k) * s.x[k];
    }
    h[o] = std::tanh(z);
  }
  for (bt::Index o = 0U; o < kHidden; ++o) {
    double z = ref_b2(b, o);
    for (bt::Index k = 0U; k < kHidden; ++k) {
      z += ref_w2(b, (o * kHidden) + k) * h[k];
    }
    f[o] = std::tanh(z);
  }
}
// The head [W3 (kClasses x kHidden), b3] trained by SGD on precomputed
// features: gradient of the mean softmax cross-entropy, written out.
double g_ref_head[kHeadParams];
void ref_fine_tune(Backbone b) {
  for (std::size_t k = 0U; k < kHeadParams; ++k) {
    g_ref_head[k] = static_cast<double>(g_export.head[k]);
  }
  double* w = g_ref_head;
  double* bias = g_ref_head + (kClasses * kHidden);
  for (int step = 0; step < kTuneSteps; ++step) {
    double grad[kHeadParams] = {};
    for (std::size_t i = 0U; i < kBatch; ++i) {
      const Sample s = sample(Set::kTune, ((static_cast<std::size_t>(step) * kBatch) + i) % kTrainB);
      double f[kHidden];
      ref_features(b, s, f);
      double z[kClasses];
      double top = -1e300;
      for (bt::Index c = 0U; c < kClasses; ++c) {
        z[c] = bias[c];
        for (bt::Index k = 0U; k < kHidden; ++k) {
          z[c] += w[(c * kHidden) + k] * f[k];
        }
        top = (z[c] > top) ? z[c] : top;
      }
      double sum = 0.0;
      for (bt::Index c = 0U; c < kClasses; ++c) {
        sum += std::exp(z[c] - top);
      }
      for (bt::Index c = 0U; c < kClasses; ++c) {
        const double dz = (std::exp(z[c] - top) / sum) - ((c == s.label) ? 1.0 : 0.0);
        for (bt::Index k = 0U; k < kHidden; ++k) {
          grad[(c * kHidden) + k] += dz * f[k];
        }
        grad[(kClasses * kHidden) + c] += dz;
      }
    }
    for (std::size_t k = 0U; k < kHeadParams; ++k) {
      g_ref_head[k] -= kTuneLr * (grad[k] / static_cast<double>(kBatch));
    }
  }
}

// --- the cases ---------------------------------------------------------------------------
bool g_ready = false;

void pretrain_and_export(bt_test::Context& t) {
  BT_CHECK(t, pretrain());
  const double acc_a = mlp_accuracy(Set::kTestA, kTest);
  const double acc_b = mlp_accuracy(Set::kTestB, kTest);
  bt_test::print("  pretrained FP64 model: task A ");
  bt_test::print_double(acc_a);
  bt_test::print(", shifted task B ");
  bt_test::print_double(acc_b);
  bt_test::print("\n");
  BT_CHECK(t, acc_a >= 0.9);
  BT_CHECK(t, acc_b < 0.5);
  BT_CHECK(t, export_model());
  g_ready = (t.checks_failed_in_test == 0);
}

void fine_tune_head(bt_test::Context& t, Backbone b, const char* name) {
  t.test_name = name;
  BT_CHECK(t, g_ready);
  if (!g_ready) {
    return;
  }
  // The device: FP32, the head on the tape, the backbone in "flash".
  const FrozenBody<float> body = frozen_body<float>(b);
  nn::Linear<float> head;
  BT_CHECK(t, make_head(g_device, &head));
  BT_CHECK(t, g_device.size() == kHeadParams);  // nothing but the head
  const double quantized_a = tuned_accuracy(g_device, body, head, Set::kTestA, kTest);
  const double before = tuned_accuracy(g_device, body, head, Set::kTestB, kTest);
  BT_CHECK(t, fine_tune(g_device, body, head));
  const double after = tuned_accuracy(g_device, body, head, Set::kTestB, kTest);
  bt_test::print("  ");
  bt_test::print(name);
  bt_test::print(": task A with the quantized backbone ");
  bt_test::print_double(quantized_a);
  bt_test::print(", task B before ");
  bt_test::print_double(before);
  bt_test::print(", after ");
  bt_test::print_double(after);
  bt_test::print("\n");
  BT_CHECK(t, quantized_a >= 0.9);
  BT_CHECK(t, before < 0.5);
  BT_CHECK(t, after >= 0.9);
  // The same training on an FP64 tape against the reference: 1e-9.
  const FrozenBody<double> body64 = frozen_body<double>(b);
  nn::Linear<double> head64;
  BT_CHECK(t, make_head(g_device64, &head64));
  BT_CHECK(t, fine_tune(g_device64, body64, head64));
  ref_fine_tune(b);
  double worst64 = 0.0;
  double worst32 = 0.0;
  for (std::size_t k = 0U; k < kHeadParams; ++k) {
    const double scale = 1.0 + std::fabs(g_ref_head[k]);
    worst64 = std::fmax(worst64, std::fabs(g_device64.value(head64.weight + static_cast<bt::Index>(k)) - g_ref_head[k]) / scale);
    worst32 = std::fmax(worst32, std::fabs(static_cast<double>(g_device.value(head.weight + static_cast<bt::Index>(k))) - g_ref_head[k]) / scale);
  }
  bt_test::print("  head vs reference after fine-tuning: FP64 ");
  bt_test::print_double(worst64);
  bt_test::print(", FP32 ");
  bt_test::print_double(worst32);
  bt_test::print("\n");
  BT_CHECK(t, worst64 <= 1e-9);
  BT_CHECK(t, worst32 <= 1e-3);
}

void fine_tune_int8_backbone(bt_test::Context& t) { fine_tune_head(t, Backbone::kInt8, "fine_tune_int8_backbone"); }
void fine_tune_fp16_backbone(bt_test::Context& t) { fine_tune_head(t, Backbone::kFp16, "fine_tune_fp16_backbone"); }

// The backbone kept on the tape, behind stop_gradient, and not stepped (the
// optimizer steps the head's view alone). The head's trajectory has the bits
// of a run that sweeps the whole model; the backbone's values do not move.
double g_body_before[kBodyParams];
double g_heads[2][kHeadParams];
double g_saved_head[kHeadParams];
void backbone_on_the_tape_behind_the_stop(bt_test::Context& t) {
  BT_CHECK(t, g_ready);
  if (!g_ready) {
    return;
  }
  constexpr int kSteps = 10;
  for (int run = 0; run < 2; ++run) {
    const bool stopped = (run == 1);
    // From the pretrained parameters (the tape holds them since pretrain()).
    const bt::View body{g_mlp.l1.params().first, static_cast<bt::Index>(kBodyParams)};
    const bt::View head = g_mlp.l3.params();
    std::memcpy(g_body_before, g_full.values() + body.first, sizeof(g_body_before));
    std::memcpy(g_saved_head, g_full.values() + head.first, sizeof(g_saved_head));
    g_full.zero_grad(body.first, body.count);
    nn::OptimizerConfig<double> config;
    config.lr = kTuneLr;
    nn::Optimizer<double> opt(config);
    for (int step = 0; step < kSteps; ++step) {
      static_cast<void>(nn::serial_batch(g_full, head, kBatch, [&](bt::Tape<double>& tape, std::size_t i) {
        const Sample s = sample(Set::kTune, ((static_cast<std::size_t>(step) * kBatch) + i) % kTrainB);
        return nn::cross_entropy(tape, mlp_logits(tape, g_mlp, s, stopped), s.label);
      }));
      BT_CHECK(t, opt.step(g_full, head) == bt::Status::kOk);
    }
    std::memcpy(g_heads[run], g_full.values() + head.first, sizeof(g_heads[run]));
    BT_CHECK(t, std::memcmp(g_body_before, g_full.values() + body.first, sizeof(g_body_before)) == 0);
    // Behind the stop the backbone is not swept: its gradients stay at 0;
    // swept, they move (and are simply not used).
    bool zero = true;
    for (bt::Index k = 0U; k < body.count; ++k) {
      zero = zero && (g_full.grad(body.first + k) == 0.0);  // BT-DEV-004
    }
    BT_CHECK(t, zero == stopped);
    std::memcpy(g_full.values() + head.first, g_saved_head, sizeof(g_saved_head));  // restore for the next run
  }
  BT_CHECK(t, std::memcmp(g_heads[0], g_heads[1], sizeof(g_heads[0])) == 0);
  BT_CHECK(t, std::memcmp(g_heads[0], g_saved_head, sizeof(g_saved_head)) != 0);  // the head did train
}


// --- frozen convolutions ------------------------------------------------------------
// nn::FrozenConv1d/2d against a direct convolution written out here: for
// every output position, channel and tap the dequantized weight (from the
// formats' definitions: scale * q, f16_to_float) times the input, zero
// outside it; the input gradients of sum(y * c) are the same loops
// transposed. FP64 tape, so only the summation order differs (1e-12).
struct ConvCase {
  bt::Index height, width, cin, cout, kh, kw, stride, pad, dilation;
  nn::Activation act;
};
constexpr std::size_t kConvMaxIn = 64U;
constexpr std::size_t kConvMaxOut = 48U;
constexpr std::size_t kConvMaxW = 96U;
constexpr std::size_t kConvNodes = 160U;
constexpr std::size_t kConvSlots = 320U;
alignas(64) unsigned char g_conv_arena[bt::Tape<double>::bytes_required(kConvNodes, kConvSlots)];

double conv_value(std::size_t i, double scale) {  // deterministic inputs, weights and root coefficients
  const double u = static_cast<double>((i * 37U + 11U) % 29U) / 29.0;
  return scale * (u - 0.45);
}

struct FrozenWeights {
  float f32[kConvMaxW];
  std::uint16_t f16[kConvMaxW];
  std::int8_t i8[kConvMaxW];
  float scale = 0.0F;
  float bias[8];
  double w[kConvMaxW];  // what the layer must use, per format
};

void conv_check(bt_test::Context& t, const ConvCase& k, bt::WeightFormat format, bool two_d) {
  const bt::Index cols = k.kh * k.kw * k.cin;
  const std::size_t n_w = static_cast<std::size_t>(k.cout) * cols;
  static FrozenWeights fw;
  for (std::size_t i = 0U; i < n_w; ++i) {
    fw.f32[i] = static_cast<float>(conv_value(i + 5U, 1.3));
  }
  BT_CHECK(t, bt::quantize_f16(fw.f32, n_w, fw.f16) == bt::Status::kOk);
  BT_CHECK(t, bt::quantize_i8(fw.f32, n_w, fw.i8, &fw.scale) == bt::Status::kOk);
  for (std::size_t i = 0U; i < n_w; ++i) {
    fw.w[i] = (format == bt::WeightFormat::kF32) ? static_cast<double>(fw.f32[i])
              : (format == bt::WeightFormat::kF16)
                  ? static_cast<double>(bt::f16_to_float(fw.f16[i]))
                  : static_cast<double>(fw.scale * static_cast<float>(fw.i8[i]));
  }
  for (bt::Index o = 0U; o < k.cout; ++o) {
    fw.bias[o] = static_cast<float>(conv_value(o + 40U, 0.8));
  }
  const bt::FrozenArray weights = (format == bt::WeightFormat::kF32)   ? bt::frozen_f32(fw.f32)
                                  : (format == bt::WeightFormat::kF16) ? bt::frozen_f16(fw.f16)
                                                                       : bt::frozen_i8(fw.i8, fw.scale);
  const bt::FrozenMatrix matrix{weights, k.cout, cols};
  const bt::FrozenVector bias{bt::frozen_f32(fw.bias), k.cout};
  nn::Conv2dOptions o2{};
  o2.in_channels = k.cin;
  o2.out_channels = k.cout;
  o2.kernel_h = k.kh;
  o2.kernel_w = k.kw;
  o2.stride_h = k.stride;
  o2.stride_w = k.stride;
  o2.padding_h = k.pad;
  o2.padding_w = k.pad;
  o2.dilation_h = k.dilation;
  o2.dilation_w = k.dilation;
  o2.act = k.act;
  nn::Conv1dOptions o1{};
  o1.in_channels = k.cin;
  o1.out_channels = k.cout;
  o1.kernel = k.kw;
  o1.stride = k.stride;
  o1.padding = k.pad;
  o1.dilation = k.dilation;
  o1.act = k.act;
  const nn::FrozenConv2d<double> c2{matrix, bias, o2};
  const nn::FrozenConv1d<double> c1{matrix, bias, o1};
  const nn::Size2d in{k.height, k.width};
  const nn::Size2d out = two_d ? nn::FrozenConv2d<double>::output_size(o2, in)
                               : nn::Size2d{1U, nn::FrozenConv1d<double>::output_length(o1, k.width)};
  const std::size_t n_in = static_cast<std::size_t>(k.height) * k.width * k.cin;
  const std::size_t n_out = static_cast<std::size_t>(out.height) * out.width * k.cout;
  BT_CHECK(t, (n_in <= kConvMaxIn) && (n_out <= kConvMaxOut) && (n_w <= kConvMaxW) && (n_out > 0U));

  bt::Tape<double> tape(g_conv_arena, sizeof(g_conv_arena), kConvNodes, kConvSlots);
  const bt::View x = tape.record_view(static_cast<bt::Index>(n_in),
                                      [&](bt::Index i) noexcept { return tape.leaf(conv_value(i, 2.0)); });
  const std::size_t nodes0 = tape.size();
  const std::size_t slots0 = tape.slots_used();
  const bt::View y = two_d ? c2.forward(tape, x, in) : c1.forward(tape, x, k.width);
  BT_CHECK(t, (tape.status() == bt::Status::kOk) && (y.count == n_out));
  const std::size_t plan_nodes = two_d ? nn::FrozenConv2d<double>::nodes(o2, in)
                                       : nn::FrozenConv1d<double>::nodes(o1, k.width);
  const std::size_t plan_slots = two_d ? nn::FrozenConv2d<double>::slots(o2, in)
                                       : nn::FrozenConv1d<double>::slots(o1, k.width);
  BT_CHECK(t, (tape.size() - nodes0) == plan_nodes);
  BT_CHECK(t, (tape.slots_used() - slots0) == plan_slots);
  bt::Value<double> root(&tape, y.first);
  root = root * conv_value(0U, 1.0);
  for (bt::Index i = 1U; i < y.count; ++i) {
    root = root + (bt::Value<double>(&tape, y.first + i) * conv_value(i, 1.0));
  }
  BT_CHECK(t, tape.backward(root) == bt::Status::kOk);

  // The direct convolution and its transpose.
  double want_y[kConvMaxOut] = {};
  double want_gx[kConvMaxIn] = {};
  for (bt::Index r = 0U; r < out.height; ++r) {
    for (bt::Index c = 0U; c < out.width; ++c) {
      for (bt::Index oc = 0U; oc < k.cout; ++oc) {
        const std::size_t at = ((static_cast<std::size_t>(r) * out.width) + c) * k.cout + oc;
        double sum = static_cast<double>(fw.bias[oc]);
        for (bt::Index i = 0U; i < (two_d ? k.kh : 1U); ++i) {
          for (bt::Index j = 0U; j < k.kw; ++j) {
            const long yy = two_d ? (static_cast<long>(r * k.stride) - static_cast<long>(k.pad) +
                                     static_cast<long>(i * k.dilation))
                                  : 0L;
            const long xx =
                static_cast<long>(c * k.stride) - static_cast<long>(k.pad) + static_cast<long>(j * k.dilation);
            if ((yy < 0) || (yy >= static_cast<long>(k.height)) || (xx < 0) || (xx >= static_cast<long>(k.width))) {
              continue;
            }
            for (bt::Index ch = 0U; ch < k.cin; ++ch) {
              const std::size_t xi = ((static_cast<std::size_t>(yy) * k.width) + static_cast<std::size_t>(xx)) * k.cin + ch;
              sum += fw.w[(static_cast<std::size_t>(oc) * cols) + ((i * k.kw + j) * k.cin) + ch] * conv_value(xi, 2.0);
            }
          }
        }
        const bool on = (k.act != nn::Activation::kRelu) || (sum > 0.0);
        want_y[at] = on ? sum : 0.0;
        const double g = on ? conv_value(at, 1.0) : 0.0;
        for (bt::Index i = 0U; i < (two_d ? k.kh : 1U); ++i) {
          for (bt::Index j = 0U; j < k.kw; ++j) {
            const long yy = two_d ? (static_cast<long>(r * k.stride) - static_cast<long>(k.pad) +
                                     static_cast<long>(i * k.dilation))
                                  : 0L;
            const long xx =
                static_cast<long>(c * k.stride) - static_cast<long>(k.pad) + static_cast<long>(j * k.dilation);
            if ((yy < 0) || (yy >= static_cast<long>(k.height)) || (xx < 0) || (xx >= static_cast<long>(k.width))) {
              continue;
            }
            for (bt::Index ch = 0U; ch < k.cin; ++ch) {
              const std::size_t xi = ((static_cast<std::size_t>(yy) * k.width) + static_cast<std::size_t>(xx)) * k.cin + ch;
              want_gx[xi] += g * fw.w[(static_cast<std::size_t>(oc) * cols) + ((i * k.kw + j) * k.cin) + ch];
            }
          }
        }
      }
    }
  }
  bool values = true;
  for (std::size_t i = 0U; i < n_out; ++i) {
    values = values && bt_test::near(tape.value(y.first + static_cast<bt::Index>(i)), want_y[i], 1e-12, 1e-12);
  }
  bool grads = true;
  for (std::size_t i = 0U; i < n_in; ++i) {
    grads = grads && bt_test::near(tape.grads()[x.first + i], want_gx[i], 1e-12, 1e-12);
  }
  BT_CHECK(t, values);
  BT_CHECK(t, grads);
}

constexpr bt::WeightFormat kFormats[3] = {bt::WeightFormat::kF32, bt::WeightFormat::kF16, bt::WeightFormat::kI8};

void frozen_conv2d_matches_direct(bt_test::Context& t) {
  const ConvCase cases[3] = {
      {5U, 4U, 2U, 3U, 3U, 3U, 2U, 1U, 1U, nn::Activation::kRelu},      // SmallCnn's geometry
      {3U, 3U, 1U, 2U, 2U, 2U, 2U, 2U, 1U, nn::Activation::kIdentity},  // padding wider than the kernel
      {5U, 5U, 1U, 2U, 2U, 2U, 1U, 0U, 2U, nn::Activation::kRelu},      // dilation
  };
  for (const ConvCase& k : cases) {
    for (bt::WeightFormat f : kFormats) {
      conv_check(t, k, f, true);
    }
  }
}

void frozen_conv1d_matches_direct(bt_test::Context& t) {
  const ConvCase cases[2] = {
      {1U, 9U, 2U, 3U, 1U, 3U, 2U, 1U, 1U, nn::Activation::kRelu},
      {1U, 7U, 3U, 2U, 1U, 3U, 1U, 2U, 2U, nn::Activation::kIdentity},
  };
  for (const ConvCase& k : cases) {
    for (bt::WeightFormat f : kFormats) {
      conv_check(t, k, f, false);
    }
  }
}

// Every refusal records nothing and leaves the documented status.
void frozen_conv_refuses(bt_test::Context& t) {
  static const float w[2U * 9U] = {};
  static const float b[3] = {};
  nn::Conv2dOptions o{};
  o.in_channels = 1U;
  o.out_channels = 2U;
  o.kernel_h = 3U;
  o.kernel_w = 3U;
  o.padding_h = 1U;
  o.padding_w = 1U;
  const nn::FrozenConv2d<double> good{{bt::frozen_f32(w), 2U, 9U}, {bt::frozen_f32(b), 2U}, o};
  struct Bad {
    nn::FrozenConv2d<double> layer;
    bt::Index count;     // input nodes given
    bool recorded;       // input on the tape
    std::size_t nodes;   // tape capacity
    bt::Status want;
  };
  nn::Conv2dOptions o3 = o;
  o3.out_channels = 3U;
  const Bad bad[] = {
      {{{bt::frozen_f32(w), 2U, 8U}, {bt::frozen_f32(b), 2U}, o}, 16U, true, 96U, bt::Status::kInvalidArgument},
      {{{bt::frozen_f32(w), 2U, 9U}, {bt::frozen_f32(b), 2U}, o3}, 16U, true, 96U, bt::Status::kInvalidArgument},
      {{{bt::frozen_f32(nullptr), 2U, 9U}, {bt::frozen_f32(b), 2U}, o}, 16U, true, 96U, bt::Status::kInvalidArgument},
      {{{bt::frozen_i8(nullptr, 1.0F), 2U, 9U}, {}, o}, 16U, true, 96U, bt::Status::kInvalidArgument},
      {{{bt::frozen_f32(w), 2U, 9U}, {bt::frozen_f32(b), 3U}, o}, 16U, true, 96U, bt::Status::kInvalidArgument},
      {{{bt::frozen_f32(w), 2U, 9U}, {bt::frozen_f32(nullptr), 2U}, o}, 16U, true, 96U, bt::Status::kInvalidArgument},
      {good, 15U, true, 96U, bt::Status::kInvalidArgument},
      {good, 16U, false, 96U, bt::Status::kInvalidHandle},
      {good, 16U, true, 40U, bt::Status::kCapacityExceeded},
  };
  for (const Bad& k : bad) {
    bt::Tape<double> tape(g_conv_arena, sizeof(g_conv_arena), k.nodes, kConvSlots);
    const bt::View x = tape.record_view(16U, [&](bt::Index i) noexcept { return tape.leaf(conv_value(i, 1.0)); });
    const bt::View in = k.recorded ? bt::View{x.first, k.count} : bt::View{x.first + 8U, k.count};
    const bt::View y = k.layer.forward(tape, in, nn::Size2d{4U, 4U});
    BT_CHECK(t, (y.count == 0U) && (tape.status() == k.want));
    BT_CHECK(t, (tape.size() == 16U) && (tape.slots_used() == 0U));
  }
  // The good layer works on the same tape size (the refusals are the layer's).
  bt::Tape<double> tape(g_conv_arena, sizeof(g_conv_arena), 96U, kConvSlots);
  const bt::View x = tape.record_view(16U, [&](bt::Index i) noexcept { return tape.leaf(conv_value(i, 1.0)); });
  BT_CHECK(t, good.forward(tape, x, nn::Size2d{4U, 4U}).count == 32U);
  BT_CHECK(t, tape.status() == bt::Status::kOk);
}

const bt_test::TestCase kCases[] = {
    {"pretrain_and_export", pretrain_and_export},
    {"fine_tune_int8_backbone", fine_tune_int8_backbone},
    {"fine_tune_fp16_backbone", fine_tune_fp16_backbone},
    {"backbone_on_the_tape_behind_the_stop", backbone_on_the_tape_behind_the_stop},
    {"frozen_conv2d_matches_direct", frozen_conv2d_matches_direct},
    {"frozen_conv1d_matches_direct", frozen_conv1d_matches_direct},
    {"frozen_conv_refuses", frozen_conv_refuses},
};

}  // namespace

BT_TEST_MAIN("finetune", kCases)

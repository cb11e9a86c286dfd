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
#include <burtorch/burtorch.hpp>
#include <burtorch/tools/checkpoint.hpp>
#include <burtorch/frozen/ops.hpp>
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
  const bt::View x = bt::record_view(tape, kIn, [&](bt::Index k) noexcept { return tape.leaf(s.x[k]); });
  const bt::View h = m.l2.forward(tape, m.l1.forward(tape, x));
  if (stop) {
    bt::stop_gradient(tape);
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
  nn::OptimizerOptions<double> config;
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
  const bt::View x = bt::record_view(tape, kIn, [&](bt::Index k) noexcept { return tape.leaf(static_cast<T>(s.x[k])); });
  const bt::View h = body.l2.forward(tape, body.l1.forward(tape, x));
  bt::stop_gradient(tape);  // the backbone passes no gradient on
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
  nn::OptimizerOptions<T> config;
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
    nn::OptimizerOptions<double> config;
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

const bt_test::TestCase kCases[] = {
    {"pretrain_and_export", pretrain_and_export},
    {"fine_tune_int8_backbone", fine_tune_int8_backbone},
    {"fine_tune_fp16_backbone", fine_tune_fp16_backbone},
    {"backbone_on_the_tape_behind_the_stop", backbone_on_the_tape_behind_the_stop},
};

}  // namespace

BT_TEST_MAIN("finetune", kCases)

// SPDX-License-Identifier: Apache-2.0
// Lane batches (nn::lane_batch): N samples per sweep on a tape of Lanes,
// the parameters shared from their own tape.
//  - Every lane op (lane_gather, pick, lane_matvec, lane_scale_shift)
//    against values and gradients worked out by hand.
//  - The MLP and the GPT-like model trained by lane batches against the
//    per-sample serial batch (nn::serial_batch, itself checked against
//    PyTorch by the nn suites): the same loss and every parameter's
//    gradient, FP64 and FP32, full and partial sweeps, within the tolerance
//    docs/training.md states (the lanes add a layer's terms in another
//    order than the vector kernels of one sample).
//  - The lane plans are exact; bad ids, targets, parameter ranges and
//    foreign parameters are refused with nothing recorded.
#include <burtorch/burtorch.hpp>
#include <burtorch/lanes/ops.hpp>  // a tape of Lanes: the lane ops and the tape's templates for it
#include <burtorch/lanes/lanes.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "golden.hpp"
#include "harness.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

// The lanes of this target's vector registers; 2 where it has none, so the
// lane code runs on every target.
constexpr std::size_t kN = (bt::kHardwareLanes > 1U) ? bt::kHardwareLanes : 2U;

}  // namespace

template class burtorch::Tape<bt::Lanes<double, kN>>;
template class burtorch::Tape<bt::Lanes<float, kN>>;

namespace {

#ifndef BURTORCH_TEST_SMALL_TARGET
#define BURTORCH_TEST_SMALL_TARGET 0
#endif

// Sizes: two layers of GPT blocks on 64-bit hosts, one on 32-bit targets
// (the M4 test's 256 KiB), a smaller model still on the micro:bit (16 KiB).
#if BURTORCH_TEST_SMALL_TARGET
constexpr nn::MlpOptions kMlp{7U, 2U, 3U, 4U};
constexpr nn::GptOptions kGpt{5U, 2U, 4U, 2U, 1U, 1e-5};
#elif UINTPTR_MAX > 0xFFFFFFFFU
constexpr nn::MlpOptions kMlp{11U, 3U, 4U, 9U};
constexpr nn::GptOptions kGpt{7U, 4U, 8U, 2U, 2U, 1e-5};
#else
constexpr nn::MlpOptions kMlp{11U, 3U, 4U, 9U};
constexpr nn::GptOptions kGpt{7U, 3U, 8U, 2U, 1U, 1e-5};
#endif
// Two full sweeps and a partial one.
constexpr std::size_t kBatch = (2U * kN) + 3U;

template <class T>
using L = bt::Lanes<T, kN>;

constexpr std::size_t max_of(std::size_t a, std::size_t b) { return (a > b) ? a : b; }

// Buffers: the parameter tape, a serial tape (parameters + one sample), the
// lane tape, each big enough for the largest case.
// The GPT-like model does not fit the micro:bit's 16 KiB: its cases are
// left out there.
constexpr bool kRunGpt = !BURTORCH_TEST_SMALL_TARGET;
constexpr std::size_t gpt_or_zero(std::size_t bytes) { return kRunGpt ? bytes : 0U; }
constexpr std::size_t kParamBytes = max_of(nn::MakemoreMlp<double>::lane_plan<kN>(kMlp, nn::OptimizerKind::kSgd).params.tape_bytes,
                                           gpt_or_zero(nn::Gpt<double>::lane_plan<kN>(kGpt, nn::OptimizerKind::kSgd).params.tape_bytes));
constexpr std::size_t kSerialBytes = max_of(nn::MakemoreMlp<double>::plan(kMlp, nn::OptimizerKind::kSgd).tape_bytes,
                                            gpt_or_zero(nn::Gpt<double>::plan(kGpt, nn::OptimizerKind::kSgd).tape_bytes));
constexpr std::size_t kLaneBytes = max_of(nn::MakemoreMlp<double>::lane_plan<kN>(kMlp, nn::OptimizerKind::kSgd).lane_tape_bytes,
                                          gpt_or_zero(nn::Gpt<double>::lane_plan<kN>(kGpt, nn::OptimizerKind::kSgd).lane_tape_bytes));
alignas(64) unsigned char g_params[kParamBytes];
alignas(64) unsigned char g_serial[kSerialBytes];
constexpr std::size_t kGuard = 64U;  // guard bytes after a lane tape (sized_tape)
alignas(64) unsigned char g_lanes[kLaneBytes + kGuard];
constexpr std::size_t kMaxParams = max_of(nn::MakemoreMlp<double>::parameters(kMlp), gpt_or_zero(nn::Gpt<double>::parameters(kGpt)));
double g_grads[kMaxParams];  // the serial batch's gradients
double g_start[kMaxParams];    // gpt_checkpointed's saved parameters
double g_stepped[kMaxParams];  // and their values after a step

// A lane tape of a plan's size (variant 0), one node less (1) or one slot
// less (2), at the start of g_lanes; the rest of g_lanes is filled with
// guard bytes (guard_intact).
struct SizedTape {
  std::size_t nodes = 0U;
  std::size_t slots = 0U;
  std::size_t bytes = 0U;
};
template <class T>
SizedTape sized_tape(bt_test::Context& t, const nn::LanePlan& plan, int variant) {
  SizedTape s;
  s.nodes = plan.sample_nodes - ((variant == 1) ? 1U : 0U);
  s.slots = plan.slots - ((variant == 2) ? 1U : 0U);
  s.bytes = bt::Tape<L<T>>::bytes_required(s.nodes, s.slots);
  BT_CHECK(t, s.bytes + kGuard <= sizeof(g_lanes));
  std::memset(g_lanes, 0xA5, sizeof(g_lanes));
  return s;
}
// Nothing written past the `bytes` a tape was given.
bool guard_intact(std::size_t bytes) {
  bool intact = true;
  for (std::size_t i = bytes; i < bytes + kGuard; ++i) {
    intact = intact && (g_lanes[i] == 0xA5U);
  }
  return intact;
}

// Deterministic sample i: context/tokens and targets from the index.
std::uint8_t token(std::size_t i, std::size_t k, std::uint32_t vocab) {
  return static_cast<std::uint8_t>(((i * 7U) + (k * 3U) + ((i * k) % 5U)) % vocab);
}

constexpr std::size_t kMaxLen = 8U;
std::uint8_t g_tokens[kBatch][kMaxLen + 1U];

void make_samples(std::uint32_t vocab, std::size_t length) {
  for (std::size_t i = 0U; i < kBatch; ++i) {
    for (std::size_t k = 0U; k <= length; ++k) {
      g_tokens[i][k] = token(i, k, vocab);
    }
  }
}

// The same, but the context positions before the last shared by every
// sample, as the padding before a word's start is: position 0 token 0, the
// others token 5 (a layer reads such positions as shared scalars).
void make_padded_samples(std::uint32_t vocab, std::size_t context) {
  make_samples(vocab, context);
  for (std::size_t i = 0U; i < kBatch; ++i) {
    for (std::size_t k = 0U; (k + 1U) < context; ++k) {
      g_tokens[i][k] = static_cast<std::uint8_t>((k == 0U) ? 0U : (5U % vocab));
    }
  }
}

// |a - b| <= rel * scale, scale the largest |gradient| (the terms' size).
template <class T>
constexpr double tolerance() {
  return (sizeof(T) == 8U) ? 1e-12 : 2e-5;
}

// Copies the parameters of `from` to `to` (both tapes hold the model first).
template <class T>
void copy_params(const bt::Tape<T>& from, bt::Tape<T>& to, std::size_t count) {
  std::memcpy(to.values(), from.values(), count * sizeof(T));
}

// Compares lane_batch's mean loss and gradients on `params` with the serial
// batch's (loss_serial, g_grads).
template <class T>
void compare(bt_test::Context& t, double loss_serial, T loss_lanes, const bt::Tape<T>& params, std::size_t count) {
  BT_CHECK(t, std::isfinite(static_cast<double>(loss_lanes)));
  BT_CHECK_NEAR(t, static_cast<double>(loss_lanes), loss_serial, tolerance<T>());
  bt_test::check_of_largest(t, params.grads(), g_grads, count, tolerance<T>());
}

// --- the MLP ---------------------------------------------------------------
template <class T>
void mlp_matches_serial(bt_test::Context& t, std::size_t batch, bool padded = false) {
  using Model = nn::MakemoreMlp<T>;
  constexpr nn::LanePlan kPlan = Model::template lane_plan<kN>(kMlp, nn::OptimizerKind::kSgd);
  constexpr nn::MemoryPlan kSerial = Model::plan(kMlp, nn::OptimizerKind::kSgd);
  if (padded) {
    make_padded_samples(kMlp.vocab, kMlp.context);
  } else {
    make_samples(kMlp.vocab, kMlp.context);
  }
  // The serial batch: the reference.
  bt::Tape<T> serial(g_serial, sizeof(g_serial), kSerial.nodes, kSerial.slots, kSerial.parameters);
  static Model model;
  nn::Rng rng(3U);
  BT_CHECK(t, model.create(serial, kMlp, rng));
  const double loss_serial = static_cast<double>(nn::serial_batch(serial, model.params(), batch, [&](bt::Tape<T>& tp, std::size_t i) {
    return model.loss(tp, &g_tokens[i][0], g_tokens[i][kMlp.context]);
  }));
  for (std::size_t i = 0U; i < kPlan.params.parameters; ++i) {
    g_grads[i] = static_cast<double>(serial.grads()[i]);
  }
  // The same model's parameters on a tape of their own, and a lane tape.
  bt::Tape<T> params(g_params, sizeof(g_params), kPlan.params.nodes, 0U, kPlan.params.parameters);
  static Model lane_model;
  nn::Rng rng2(3U);
  BT_CHECK(t, lane_model.create(params, kMlp, rng2));
  BT_CHECK(t, params.size() == kPlan.params.parameters);
  bt::Tape<L<T>> lanes(g_lanes, sizeof(g_lanes), kPlan.sample_nodes, kPlan.slots);
  const T loss_lanes = nn::lane_batch(params, lane_model.params(), lanes, batch,
                                      [&](bt::Tape<L<T>>& tp, const bt::LaneParams<T>& p, std::size_t first, std::size_t active) {
                                        const std::uint8_t* ctx[kN];
                                        std::uint8_t targets[kN];
                                        for (std::size_t l = 0U; l < kN; ++l) {
                                          const std::size_t i = first + ((l < active) ? l : 0U);
                                          ctx[l] = &g_tokens[i][0];
                                          targets[l] = g_tokens[i][kMlp.context];
                                        }
                                        return lane_model.loss(tp, p, ctx, targets);
                                      });
  BT_CHECK(t, lanes.status() == bt::Status::kOk);
  BT_CHECK(t, lanes.size() == 0U);  // rewound after every sweep
  compare(t, loss_serial, loss_lanes, params, kPlan.params.parameters);
}

void mlp_fp64(bt_test::Context& t) {
  mlp_matches_serial<double>(t, kBatch);
  mlp_matches_serial<double>(t, 1U);
  mlp_matches_serial<double>(t, kN);
  mlp_matches_serial<double>(t, kBatch, true);
}
void mlp_fp32(bt_test::Context& t) {
  mlp_matches_serial<float>(t, kBatch);
  mlp_matches_serial<float>(t, kN - 1U);
  mlp_matches_serial<float>(t, kBatch, true);
}

// --- the GPT-like model ------------------------------------------------------
template <class T>
void gpt_matches_serial(bt_test::Context& t, std::size_t batch) {
  using Model = nn::Gpt<T>;
  constexpr nn::LanePlan kPlan = Model::template lane_plan<kN>(kGpt, nn::OptimizerKind::kSgd);
  constexpr nn::MemoryPlan kSerial = Model::plan(kGpt, nn::OptimizerKind::kSgd);
  const bt::Index steps = kGpt.block;
  make_samples(kGpt.vocab, steps);
  bt::Tape<T> serial(g_serial, sizeof(g_serial), kSerial.nodes, kSerial.slots, kSerial.parameters);
  static Model model;
  nn::Rng rng(9U);
  BT_CHECK(t, model.create(serial, kGpt, rng));
  const double loss_serial = static_cast<double>(nn::serial_batch(serial, model.params(), batch, [&](bt::Tape<T>& tp, std::size_t i) {
    return model.loss(tp, &g_tokens[i][0], &g_tokens[i][1], steps);
  }));
  for (std::size_t i = 0U; i < kPlan.params.parameters; ++i) {
    g_grads[i] = static_cast<double>(serial.grads()[i]);
  }
  bt::Tape<T> params(g_params, sizeof(g_params), kPlan.params.nodes, 0U, kPlan.params.parameters);
  static Model lane_model;
  nn::Rng rng2(9U);
  BT_CHECK(t, lane_model.create(params, kGpt, rng2));
  bt::Tape<L<T>> lanes(g_lanes, sizeof(g_lanes), kPlan.sample_nodes, kPlan.slots);
  const T loss_lanes = nn::lane_batch(params, lane_model.params(), lanes, batch,
                                      [&](bt::Tape<L<T>>& tp, const bt::LaneParams<T>& p, std::size_t first, std::size_t active) {
                                        const std::uint8_t* in[kN];
                                        const std::uint8_t* out[kN];
                                        for (std::size_t l = 0U; l < kN; ++l) {
                                          const std::size_t i = first + ((l < active) ? l : 0U);
                                          in[l] = &g_tokens[i][0];
                                          out[l] = &g_tokens[i][1];
                                        }
                                        return lane_model.loss(tp, p, in, out, steps);
                                      });
  BT_CHECK(t, lanes.status() == bt::Status::kOk);
  compare(t, loss_serial, loss_lanes, params, kPlan.params.parameters);
}

// Gradient checkpointing (Gpt::lane_sweep through nn::lane_batch_sweeps)
// against lane_batch on the same lanes: bitwise the same loss, gradients
// and step (the same nodes in the same order, each block's gradient handed
// on exactly); its plan is exact (one node or slot less fails cleanly,
// nothing written past the buffer) and smaller; bad arguments are refused.
template <class T>
void gpt_checkpointed(bt_test::Context& t, std::size_t batch) {
  using Model = nn::Gpt<T>;
  constexpr nn::LanePlan kPlan = Model::template lane_plan<kN>(kGpt, nn::OptimizerKind::kSgd);
  constexpr nn::LanePlan kCheck = Model::template checkpoint_plan<kN>(kGpt, nn::OptimizerKind::kSgd);
  static_assert(kCheck.lane_tape_bytes < kPlan.lane_tape_bytes, "checkpointing saves memory");
  const bt::Index steps = kGpt.block;
  make_samples(kGpt.vocab, steps);
  bt::Tape<T> params(g_params, sizeof(g_params), kPlan.params.nodes, 0U, kPlan.params.parameters);
  static Model model;
  nn::Rng rng(9U);
  BT_CHECK(t, model.create(params, kGpt, rng));
  const std::size_t n = kPlan.params.parameters;
  // Saved as doubles (exact for float too, and one-to-one: equal bytes of
  // the doubles mean bitwise equal values), the gradients in g_grads: the
  // Cortex-M4's RAM holds no more.
  double* const start = g_start;
  double* const stepped = g_stepped;
  double* const grads = g_grads;
  const auto save = [n](const T* from, double* to) {
    for (std::size_t i = 0U; i < n; ++i) {
      to[i] = static_cast<double>(from[i]);
    }
  };
  const auto same = [n](const T* now, const double* saved) {
    bool equal = true;
    for (std::size_t i = 0U; i < n; ++i) {
      const double v = static_cast<double>(now[i]);
      equal = equal && (std::memcmp(&v, &saved[i], sizeof(double)) == 0);
    }
    return equal;
  };
  const auto restore = [n, &params, start]() {
    for (std::size_t i = 0U; i < n; ++i) {
      params.values()[i] = static_cast<T>(start[i]);
    }
  };
  save(params.values(), start);
  const auto lanes_of = [](std::size_t first, std::size_t active, const std::uint8_t** in, const std::uint8_t** out) {
    for (std::size_t l = 0U; l < kN; ++l) {
      const std::size_t i = first + ((l < active) ? l : 0U);
      in[l] = &g_tokens[i][0];
      out[l] = &g_tokens[i][1];
    }
  };
  const auto loss = [&](bt::Tape<L<T>>& tp, const bt::LaneParams<T>& p, std::size_t first, std::size_t active) {
    const std::uint8_t* in[kN];
    const std::uint8_t* out[kN];
    lanes_of(first, active, in, out);
    return model.loss(tp, p, in, out, steps);
  };
  bt::Index sweep_steps = steps;
  const auto sweep = [&](bt::Tape<L<T>>& tp, const bt::LaneParams<T>& p, std::size_t first, std::size_t active,
                         const L<T>& mask, L<T>* losses) {
    const std::uint8_t* in[kN];
    const std::uint8_t* out[kN];
    lanes_of(first, active, in, out);
    return model.lane_sweep(tp, p, in, out, sweep_steps, mask, losses);
  };
  // The reference: every block's graph on the lane tape.
  T reference = T(0);
  {
    bt::Tape<L<T>> lanes(g_lanes, sizeof(g_lanes), kPlan.sample_nodes, kPlan.slots);
    reference = nn::lane_batch(params, model.params(), lanes, batch, loss);
    BT_CHECK(t, std::isfinite(reference));
    save(params.grads(), grads);
    nn::OptimizerOptions<T> oc;
    oc.lr = T(0.1);
    nn::Optimizer<T> opt(oc);
    BT_CHECK(t, std::isfinite(nn::lane_batch(params, model.params(), lanes, batch, loss, opt)));
    save(params.values(), stepped);
    restore();
  }
  for (int variant = 0; variant < 3; ++variant) {
    const SizedTape size = sized_tape<T>(t, kCheck, variant);
    bt::Tape<L<T>> lanes(g_lanes, size.bytes, size.nodes, size.slots);
    const T got = nn::lane_batch_sweeps(params, model.params(), lanes, batch, sweep);
    if (variant == 0) {
      BT_CHECK(t, lanes.status() == bt::Status::kOk);
      BT_CHECK(t, std::memcmp(&got, &reference, sizeof(T)) == 0);
      BT_CHECK(t, same(params.grads(), grads));
      // The step: bitwise as lane_batch's.
      nn::OptimizerOptions<T> oc;
      oc.lr = T(0.1);
      nn::Optimizer<T> opt(oc);
      BT_CHECK(t, std::isfinite(nn::lane_batch_sweeps(params, model.params(), lanes, batch, sweep, opt)));
      BT_CHECK(t, same(params.values(), stepped));
      restore();
      BT_CHECK(t, lanes.size() == 0U);  // every sweep rewound
    } else {
      BT_CHECK(t, std::isnan(got));
      BT_CHECK(t, lanes.status() == bt::Status::kCapacityExceeded);
    }
    BT_CHECK(t, guard_intact(size.bytes));
  }
  // Bad arguments: refused on the lane tape, the parameters untouched.
  bt::Tape<L<T>> lanes(g_lanes, sizeof(g_lanes), kCheck.sample_nodes, kCheck.slots);
  sweep_steps = 0U;
  nn::OptimizerOptions<T> oc;
  nn::Optimizer<T> opt(oc);
  BT_CHECK(t, std::isnan(nn::lane_batch_sweeps(params, model.params(), lanes, batch, sweep, opt)));
  BT_CHECK(t, lanes.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, same(params.values(), start));
  lanes.reset();
  sweep_steps = steps;
  const std::uint8_t* in[kN];
  const std::uint8_t* out[kN];
  lanes_of(0U, kN, in, out);
  BT_CHECK(t, !model.template lane_sweep<kN>(lanes, bt::LaneParams<T>{}, in, out, steps, L<T>(T(1)), nullptr));
  BT_CHECK(t, lanes.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, lanes.size() == 0U);
  // A model whose create() failed (a width its heads do not divide): refused
  // before anything is recorded, whatever sizes it was given.
  lanes.reset();
  static Model refused;
  nn::GptOptions bad = kGpt;
  bad.width = 0x7FFFFFFFU;
  bt::Tape<T> scratch(g_serial, sizeof(g_serial), 4U, 0U, 4U);
  nn::Rng rng3(1U);
  BT_CHECK(t, !refused.create(scratch, bad, rng3));
  L<T> got_losses(T(0));
  BT_CHECK(t, !refused.template lane_sweep<kN>(lanes, bt::LaneParams<T>{}, in, out, steps, L<T>(T(1)), &got_losses));
  BT_CHECK(t, lanes.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, lanes.size() == 0U);
}

#if !BURTORCH_TEST_SMALL_TARGET
void gpt_fp64(bt_test::Context& t) {
  gpt_matches_serial<double>(t, kBatch);
  gpt_matches_serial<double>(t, 1U);
}
void gpt_fp32(bt_test::Context& t) { gpt_matches_serial<float>(t, kBatch); }
void gpt_checkpoints(bt_test::Context& t) {
  gpt_checkpointed<double>(t, kBatch);
  gpt_checkpointed<double>(t, kN - 1U);
  gpt_checkpointed<float>(t, kBatch);
}
#endif

// --- the optimizer step with the batch's 1/B folded in ------------------------
// lane_batch(..., opt) leaves the parameters bitwise as lane_batch() then
// opt.step() (SGD and Adam); a batch of no samples is refused before
// anything changes (also by serial_batch).
template <class T>
void lane_batch_step(bt_test::Context& t, nn::OptimizerKind kind) {
  using Model = nn::MakemoreMlp<T>;
  constexpr nn::LanePlan kPlan = Model::template lane_plan<kN>(kMlp, nn::OptimizerKind::kAdam);
  make_samples(kMlp.vocab, kMlp.context);
  static T params_copy[kMaxParams];
  // Adam's two moments per parameter, for each of the two runs (SGD keeps none).
  constexpr std::size_t kMoments = BURTORCH_TEST_SMALL_TARGET ? 1U : (2U * kMaxParams);
  static T moments[2U * kMoments];
  bt::Tape<T> params(g_params, sizeof(g_params), kPlan.params.nodes, 0U, kPlan.params.parameters);
  bt::Tape<L<T>> lanes(g_lanes, sizeof(g_lanes), kPlan.sample_nodes, kPlan.slots);
  static Model model;
  nn::OptimizerOptions<T> oc;
  oc.kind = kind;
  oc.lr = T(0.05);
  const auto loss = [&](bt::Tape<L<T>>& tp, const bt::LaneParams<T>& p, std::size_t first, std::size_t active) {
    const std::uint8_t* ctx[kN];
    std::uint8_t targets[kN];
    for (std::size_t l = 0U; l < kN; ++l) {
      const std::size_t i = first + ((l < active) ? l : 0U);
      ctx[l] = &g_tokens[i][0];
      targets[l] = g_tokens[i][kMlp.context];
    }
    return model.loss(tp, p, ctx, targets);
  };
  const std::size_t n = kPlan.params.parameters;
  for (int variant = 0; variant < 2; ++variant) {
    params.reset();
    nn::Rng rng(21U);
    BT_CHECK(t, model.create(params, kMlp, rng));
    nn::Optimizer<T> opt(oc, &moments[static_cast<std::size_t>(variant) * kMoments], kMoments);
    for (int step = 0; step < 3; ++step) {
      T l = T(0);
      if (variant == 0) {
        l = nn::lane_batch(params, model.params(), lanes, kBatch, loss);
        BT_CHECK(t, opt.step(params, model.params()) == bt::Status::kOk);
      } else {
        l = nn::lane_batch(params, model.params(), lanes, kBatch, loss, opt);
      }
      BT_CHECK(t, std::isfinite(l));
    }
    if (variant == 0) {
      std::memcpy(params_copy, params.values(), n * sizeof(T));
    } else {
      BT_CHECK(t, std::memcmp(params_copy, params.values(), n * sizeof(T)) == 0);
    }
  }
  // No samples: refused, the gradients and parameters untouched.
  params.grads()[0] = T(7);
  BT_CHECK(t, std::isnan(nn::lane_batch(params, model.params(), lanes, 0U, loss)));
  BT_CHECK(t, params.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, params.grads()[0] == T(7));
  BT_CHECK(t, std::memcmp(params_copy, params.values(), n * sizeof(T)) == 0);
  params.clear_status();
  BT_CHECK(t, std::isnan(nn::serial_batch(params, model.params(), 0U, [&](bt::Tape<T>& tp, std::size_t) {
    return tp.leaf(T(1));
  })));
  BT_CHECK(t, params.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, params.grads()[0] == T(7));
}

void batch_step_fold(bt_test::Context& t) {
#if BURTORCH_TEST_SMALL_TARGET
  // The micro:bit: FP32 SGD only (its 16 KiB hold no more moments).
  lane_batch_step<float>(t, nn::OptimizerKind::kSgd);
#else
  lane_batch_step<double>(t, nn::OptimizerKind::kSgd);
  lane_batch_step<double>(t, nn::OptimizerKind::kAdam);
  lane_batch_step<float>(t, nn::OptimizerKind::kAdam);
#endif
}

// --- the plans are exact -------------------------------------------------------
// A sweep records exactly the plan's nodes (mask included) and slots: a lane
// tape of the plan's size trains; one node or one slot less fails cleanly.
template <class Model, class Config, class LaneLoss>
void plan_exact(bt_test::Context& t, const Config& c, LaneLoss lane_loss) {
  using T = double;
  const nn::LanePlan plan = Model::template lane_plan<kN>(c, nn::OptimizerKind::kSgd);
  bt::Tape<T> params(g_params, sizeof(g_params), plan.params.nodes, 0U, plan.params.parameters);
  static Model model;
  nn::Rng rng(4U);
  BT_CHECK(t, model.create(params, c, rng));
  for (int variant = 0; variant < 3; ++variant) {
    const SizedTape size = sized_tape<T>(t, plan, variant);
    bt::Tape<L<T>> lanes(g_lanes, size.bytes, size.nodes, size.slots);
    std::size_t peak_nodes = 0U;
    std::size_t peak_slots = 0U;
    const T loss = nn::lane_batch(params, model.params(), lanes, kN + 1U,
                                  [&](bt::Tape<L<T>>& tp, const bt::LaneParams<T>& p, std::size_t first, std::size_t active) {
                                    const bt::Value<L<T>> v = lane_loss(model, tp, p, first, active);
                                    peak_nodes = tp.size() + 1U;  // and the mask's node
                                    peak_slots = tp.usage().slots + bt::Recorder<L<T>>::kConstantSlots;
                                    return v;
                                  });
    if (variant == 0) {
      BT_CHECK(t, std::isfinite(loss));
      BT_CHECK(t, lanes.status() == bt::Status::kOk);
      BT_CHECK(t, peak_nodes == plan.sample_nodes);
      BT_CHECK(t, peak_slots == plan.slots);
    } else {
      BT_CHECK(t, std::isnan(loss));
      BT_CHECK(t, lanes.status() == bt::Status::kCapacityExceeded);
    }
    BT_CHECK(t, guard_intact(size.bytes));
  }
}

void plans_exact(bt_test::Context& t) {
  make_samples(kMlp.vocab, kMlp.context);
  plan_exact<nn::MakemoreMlp<double>>(t, kMlp, [](const nn::MakemoreMlp<double>& m, bt::Tape<L<double>>& tp,
                                                  const bt::LaneParams<double>& p, std::size_t first, std::size_t active) {
    const std::uint8_t* ctx[kN];
    std::uint8_t targets[kN];
    for (std::size_t l = 0U; l < kN; ++l) {
      const std::size_t i = first + ((l < active) ? l : 0U);
      ctx[l] = &g_tokens[i][0];
      targets[l] = g_tokens[i][kMlp.context];
    }
    return m.loss(tp, p, ctx, targets);
  });
#if !BURTORCH_TEST_SMALL_TARGET
  make_samples(kGpt.vocab, kGpt.block);
  plan_exact<nn::Gpt<double>>(t, kGpt, [](const nn::Gpt<double>& m, bt::Tape<L<double>>& tp,
                                          const bt::LaneParams<double>& p, std::size_t first, std::size_t active) {
    const std::uint8_t* in[kN];
    const std::uint8_t* out[kN];
    for (std::size_t l = 0U; l < kN; ++l) {
      in[l] = &g_tokens[first + ((l < active) ? l : 0U)][0];
      out[l] = in[l] + 1;
    }
    return m.loss(tp, p, in, out, kGpt.block);
  });
#endif
}

// --- each op against values and gradients worked out by hand -----------------
// Dyadic values: every sum below is exact, so the checks are ==.
double dyadic(std::size_t i) { return static_cast<double>(static_cast<int>((i * 37U) % 23U) - 11) / 8.0; }

using LD = L<double>;
constexpr std::size_t kSmallNodes = BURTORCH_TEST_SMALL_TARGET ? 64U : 512U;
constexpr std::size_t kSmallSlots = BURTORCH_TEST_SMALL_TARGET ? 96U : 512U;
constexpr std::size_t kSharedMax = BURTORCH_TEST_SMALL_TARGET ? 128U : 2048U;
alignas(64) unsigned char g_small[bt::Tape<LD>::bytes_required(kSmallNodes, kSmallSlots)];
double g_pv[kSharedMax];
double g_pg[kSharedMax];

bt::LaneParams<double> shared(std::size_t count) {
  for (std::size_t i = 0U; i < count; ++i) {
    g_pv[i] = dyadic(i + 3U);
    g_pg[i] = 0.0;
  }
  bt::LaneParams<double> p;
  p.values = g_pv;
  p.grads = g_pg;
  p.count = static_cast<bt::Index>(count);
  return p;
}

LD lanes_of(std::size_t seed) {
  LD x(0.0);
  for (std::size_t l = 0U; l < kN; ++l) {
    x.lane[l] = dyadic((seed * 5U) + l);
  }
  return x;
}

// Embedding rows per lane: 3 rows of 2; lane l takes row l % 3 for the first
// gathered row and (l + 1) % 3 for the second. Root: the sum of all nodes.
void gather_by_hand(bt_test::Context& t) {
  const bt::LaneParams<double> p = shared(10U);  // the table at 4: rows 4-5, 6-7, 8-9
  bt::Tape<LD> tape(g_small, sizeof(g_small), kSmallNodes, kSmallSlots);
  bt::Index ids[2U * kN];
  for (std::size_t l = 0U; l < kN; ++l) {
    ids[l] = static_cast<bt::Index>(l % 3U);
    ids[kN + l] = static_cast<bt::Index>((l + 1U) % 3U);
  }
  const bt::View v = bt::lane_gather(tape, p, 4U, 3U, 2U, ids, 2U);
  BT_CHECK(t, v.count == 4U);
  bool values_ok = true;
  for (std::size_t q = 0U; q < 2U; ++q) {
    for (std::size_t e = 0U; e < 2U; ++e) {
      const LD got = tape.value(v.first + static_cast<bt::Index>((q * 2U) + e));
      for (std::size_t l = 0U; l < kN; ++l) {
        values_ok = values_ok && (got.lane[l] == g_pv[4U + (ids[(q * kN) + l] * 2U) + e]);
      }
    }
  }
  BT_CHECK(t, values_ok);
  BT_CHECK(t, tape.backward(bt::reduce(tape, bt::Op::kSumR, bt::View{v.first, v.count})) == bt::Status::kOk);
  bool grads_ok = true;
  for (std::size_t r = 0U; r < 3U; ++r) {
    double uses = 0.0;  // lanes that gathered row r, over both gathered rows
    for (std::size_t i = 0U; i < 2U * kN; ++i) {
      uses += (ids[i] == r) ? 1.0 : 0.0;
    }
    grads_ok = grads_ok && (g_pg[4U + (r * 2U)] == uses) && (g_pg[5U + (r * 2U)] == uses);
  }
  grads_ok = grads_ok && (g_pg[3] == 0.0) && (g_pg[0] == 0.0);
  BT_CHECK(t, grads_ok);
}

// pick: lane l of x[at[l]]; its gradient goes to that lane of that node only.
void pick_by_hand(bt_test::Context& t) {
  bt::Tape<LD> tape(g_small, sizeof(g_small), kSmallNodes, kSmallSlots);
  bt::Value<LD> x[3];
  for (std::size_t k = 0U; k < 3U; ++k) {
    x[k] = tape.leaf(lanes_of(k));
  }
  bt::Index at[kN];
  for (std::size_t l = 0U; l < kN; ++l) {
    at[l] = static_cast<bt::Index>((l * 2U) % 3U);
  }
  const bt::Value<LD> y = bt::pick(tape, bt::View{x[0].index(), 3U}, at);
  BT_CHECK(t, tape.backward(y) == bt::Status::kOk);
  bool ok = true;
  for (std::size_t l = 0U; l < kN; ++l) {
    ok = ok && (y.value().lane[l] == x[at[l]].value().lane[l]);
    for (std::size_t k = 0U; k < 3U; ++k) {
      ok = ok && (x[k].grad().lane[l] == ((at[l] == k) ? 1.0 : 0.0));
    }
  }
  BT_CHECK(t, ok);
}

// A layer over shared weights, wide enough for every path of the kernels
// (blocks of rows and of columns and their remainders, two runs), against
// plain loops; the root weighs output o by (o + 1).
void matvec_by_hand(bt_test::Context& t) {
  // Two full tiles, one register, and 15 = 8 + 4 + 2 + 1 columns: every
  // width of the weights' gradient.
  // (A core without vector registers has one-column registers: 3 more then.)
  constexpr std::size_t kIn = (2U * bt::detail::weight_tile<double>()) + bt::detail::register_columns<double>() +
                              ((bt::detail::register_columns<double>() > 1U) ? 15U : 3U);
  constexpr std::size_t kRows = 7U;
  constexpr std::size_t kFirstRun = 5U;
  static_assert((kRows * kIn) + kRows <= kSharedMax, "g_pv holds the weights and biases");
  const bt::LaneParams<double> p = shared((kRows * kIn) + kRows);
  bt::Tape<LD> tape(g_small, sizeof(g_small), kSmallNodes, kSmallSlots);
  bt::Index first = bt::kNoIndex;
  for (std::size_t k = 0U; k < kIn; ++k) {
    const bt::Value<LD> x = tape.leaf(lanes_of(k + 1U));
    first = (k == 0U) ? x.index() : first;
  }
  const bt::View runs[2] = {{first, static_cast<bt::Index>(kFirstRun)},
                            {first + static_cast<bt::Index>(kFirstRun), static_cast<bt::Index>(kIn - kFirstRun)}};
  const bt::ViewList list = bt::view_list(tape, runs, 2U);
  const bt::Index bias = static_cast<bt::Index>(kRows * kIn);
  const bt::View y = bt::lane_matvec(tape, p, 0U, static_cast<bt::Index>(kRows), list, bias);
  BT_CHECK(t, y.count == kRows);
  bt::Value<LD> weighted[kRows];
  for (std::size_t o = 0U; o < kRows; ++o) {
    weighted[o] = bt::Value<LD>(&tape, y.first + static_cast<bt::Index>(o)) * LD(static_cast<double>(o + 1U));
  }
  BT_CHECK(t, tape.backward(bt::reduce_sum(weighted, kRows)) == bt::Status::kOk);
  bool values_ok = true;
  bool x_grads_ok = true;
  for (std::size_t l = 0U; l < kN; ++l) {
    for (std::size_t o = 0U; o < kRows; ++o) {
      double sum = 0.0;
      for (std::size_t k = 0U; k < kIn; ++k) {
        sum += g_pv[(o * kIn) + k] * tape.value(first + static_cast<bt::Index>(k)).lane[l];
      }
      values_ok = values_ok && (tape.value(y.first + static_cast<bt::Index>(o)).lane[l] == (sum + g_pv[bias + o]));
    }
    for (std::size_t k = 0U; k < kIn; ++k) {
      double sum = 0.0;
      for (std::size_t o = 0U; o < kRows; ++o) {
        sum += g_pv[(o * kIn) + k] * static_cast<double>(o + 1U);
      }
      x_grads_ok = x_grads_ok && (tape.grad(first + static_cast<bt::Index>(k)).lane[l] == sum);
    }
  }
  bool w_grads_ok = true;
  for (std::size_t o = 0U; o < kRows; ++o) {
    for (std::size_t k = 0U; k < kIn; ++k) {
      double sum = 0.0;
      for (std::size_t l = 0U; l < kN; ++l) {
        sum += static_cast<double>(o + 1U) * tape.value(first + static_cast<bt::Index>(k)).lane[l];
      }
      w_grads_ok = w_grads_ok && (g_pg[(o * kIn) + k] == sum);
    }
    w_grads_ok = w_grads_ok && (g_pg[bias + o] == static_cast<double>((o + 1U) * kN));
  }
  BT_CHECK(t, values_ok);
  BT_CHECK(t, x_grads_ok);
  BT_CHECK(t, w_grads_ok);
}

// A layer over gathered embedding rows, some of which every lane takes from
// the same table row (read as shared scalars: the forward's inner products
// along the rows, the weights' gradient from the lanes' summed gradients,
// the row's gradient summed over the lanes), against plain loops. Gathered
// rows: A (every lane row 1), B (lane l row l % 3), C (every lane row 2), D
// (every lane row 1 again). Row width: four registers, one register and 3
// columns (every width of the shared path); more than 64 layer rows on
// 64-bit hosts (two blocks of rows). The root weighs output o by (o + 1)
// and adds every node of A once more (a second consumer of a shared row).
#if UINTPTR_MAX > 0xFFFFFFFFU
constexpr std::size_t kSharedRowsOut = 67U;
#else
constexpr std::size_t kSharedRowsOut = 3U;
#endif
constexpr std::size_t kSharedWidth = (5U * bt::detail::register_columns<double>()) + 3U;
constexpr std::size_t kSharedIn = 4U * kSharedWidth;
constexpr std::size_t kSharedTable = 3U * kSharedWidth;  // rows 0-2 at 0
constexpr std::size_t kSharedWeights = kSharedTable;      // then the weights, then the biases
constexpr std::size_t kSharedBias = kSharedWeights + (kSharedRowsOut * kSharedIn);
constexpr std::size_t kSharedCount = kSharedBias + kSharedRowsOut;
constexpr std::size_t kSharedNodes = kSharedIn + kSharedRowsOut + 1U + kSharedRowsOut + 4U;
#if BURTORCH_TEST_SMALL_TARGET
// The micro:bit's 16 KiB: the buffers of the cases above.
static_assert(kSharedCount <= kSharedMax, "the small case fits g_pv");
constexpr std::size_t kSharedSlots = kSmallSlots;
static_assert(kSharedNodes + 16U <= kSmallNodes, "the small case fits g_small");
double* const g_sv = g_pv;
double* const g_sg = g_pg;
unsigned char* const g_shared_tape = g_small;
constexpr std::size_t kSharedTapeBytes = sizeof(g_small);
#else
double g_sv[kSharedCount];
double g_sg[kSharedCount];
// Slots: the gathers, the list, the layer, and each weighting's constant.
constexpr std::size_t kSharedSlots = 256U + (kSharedRowsOut * (2U + (sizeof(LD) / sizeof(bt::Index))));
alignas(64) unsigned char g_shared_tape[bt::Tape<LD>::bytes_required(kSharedNodes + 16U, kSharedSlots)];
constexpr std::size_t kSharedTapeBytes = sizeof(g_shared_tape);
#endif

void shared_rows_by_hand(bt_test::Context& t) {
  for (std::size_t i = 0U; i < kSharedCount; ++i) {
    g_sv[i] = dyadic(i + 5U);
    g_sg[i] = 0.0;
  }
  const bt::LaneParams<double> p{g_sv, g_sg, static_cast<bt::Index>(kSharedCount)};
  bt::Tape<LD> tape(g_shared_tape, kSharedTapeBytes, kSharedNodes + 16U, kSharedSlots);
  bt::Index ids[4U][kN];
  for (std::size_t l = 0U; l < kN; ++l) {
    ids[0][l] = 1U;
    ids[1][l] = static_cast<bt::Index>(l % 3U);
    ids[2][l] = 2U;
    ids[3][l] = 1U;
  }
  bt::View rows[4];
  for (std::size_t q = 0U; q < 4U; ++q) {
    rows[q] = bt::lane_gather(tape, p, 0U, 3U, static_cast<bt::Index>(kSharedWidth), ids[q], 1U);
  }
  const bt::ViewList list = bt::view_list(tape, rows, 4U);
  const bt::View y = bt::lane_matvec(tape, p, static_cast<bt::Index>(kSharedWeights),
                                        static_cast<bt::Index>(kSharedRowsOut), list,
                                        static_cast<bt::Index>(kSharedBias));
  BT_CHECK(t, y.count == kSharedRowsOut);
  // A, C and D are marked shared (bits 0, 2, 3), B is not.
  const bt::Index head = y.first - 1U;
  const bt::Index d = bt::node_operands(tape, head).a;
  BT_CHECK(t, bt::node_op(tape, head) == bt::LaneOps::op<bt::rows::LaneMat>());
  BT_CHECK(t, bt::slot_at(tape, d + bt::detail::kMsUniform) == 0xDU);
  BT_CHECK(t, bt::slot_at(tape, d + bt::detail::kMsUniform + 1U) == 0U);
  bt::Value<LD> terms[kSharedRowsOut + 1U];
  for (std::size_t o = 0U; o < kSharedRowsOut; ++o) {
    terms[o] = bt::Value<LD>(&tape, y.first + static_cast<bt::Index>(o)) * LD(static_cast<double>(o + 1U));
  }
  terms[kSharedRowsOut] = bt::reduce(tape, bt::Op::kSumR, bt::View{rows[0].first, rows[0].count});
  BT_CHECK(t, tape.backward(bt::reduce_sum(terms, kSharedRowsOut + 1U)) == bt::Status::kOk);
  BT_CHECK(t, tape.status() == bt::Status::kOk);
  // x[l][k]: lane l's input k.
  const auto x_at = [&](std::size_t l, std::size_t k) {
    return g_sv[(ids[k / kSharedWidth][l] * kSharedWidth) + (k % kSharedWidth)];
  };
  bool values_ok = true;
  for (std::size_t l = 0U; l < kN; ++l) {
    for (std::size_t o = 0U; o < kSharedRowsOut; ++o) {
      double sum = g_sv[kSharedBias + o];
      for (std::size_t k = 0U; k < kSharedIn; ++k) {
        sum += g_sv[kSharedWeights + (o * kSharedIn) + k] * x_at(l, k);
      }
      values_ok = values_ok && (tape.value(y.first + static_cast<bt::Index>(o)).lane[l] == sum);
    }
  }
  BT_CHECK(t, values_ok);
  // The weights' gradient: sum over lanes of (o + 1) x[l][k].
  bool w_ok = true;
  for (std::size_t o = 0U; o < kSharedRowsOut; ++o) {
    for (std::size_t k = 0U; k < kSharedIn; ++k) {
      double sum = 0.0;
      for (std::size_t l = 0U; l < kN; ++l) {
        sum += static_cast<double>(o + 1U) * x_at(l, k);
      }
      w_ok = w_ok && (g_sg[kSharedWeights + (o * kSharedIn) + k] == sum);
    }
    w_ok = w_ok && (g_sg[kSharedBias + o] == static_cast<double>((o + 1U) * kN));
  }
  BT_CHECK(t, w_ok);
  // The table's gradient: per lane and gathered row q, input k's gradient
  // sum_o (o + 1) w[o][k] (+ 1 for A's second consumer) goes to that lane's row.
  bool table_ok = true;
  for (std::size_t r = 0U; r < 3U; ++r) {
    for (std::size_t e = 0U; e < kSharedWidth; ++e) {
      double want = 0.0;
      for (std::size_t q = 0U; q < 4U; ++q) {
        for (std::size_t l = 0U; l < kN; ++l) {
          if (ids[q][l] == r) {
            for (std::size_t o = 0U; o < kSharedRowsOut; ++o) {
              want += static_cast<double>(o + 1U) * g_sv[kSharedWeights + (o * kSharedIn) + (q * kSharedWidth) + e];
            }
            want += (q == 0U) ? 1.0 : 0.0;
          }
        }
      }
      table_ok = table_ok && (g_sg[(r * kSharedWidth) + e] == want);
    }
  }
  BT_CHECK(t, table_ok);
}

// A gathered row whose table row changed after the gather is read from the
// gathered values (the lanes' path), not from the table.
void shared_rows_changed_table(bt_test::Context& t) {
  for (std::size_t i = 0U; i < kSharedCount; ++i) {
    g_sv[i] = dyadic(i + 5U);
    g_sg[i] = 0.0;
  }
  const bt::LaneParams<double> p{g_sv, g_sg, static_cast<bt::Index>(kSharedCount)};
  bt::Tape<LD> tape(g_shared_tape, kSharedTapeBytes, kSharedNodes + 16U, kSharedSlots);
  bt::Index ids[kN];
  for (std::size_t l = 0U; l < kN; ++l) {
    ids[l] = 1U;
  }
  bt::View rows[4];
  for (std::size_t q = 0U; q < 4U; ++q) {
    rows[q] = bt::lane_gather(tape, p, 0U, 3U, static_cast<bt::Index>(kSharedWidth), ids, 1U);
  }
  double gathered[kSharedWidth];
  for (std::size_t e = 0U; e < kSharedWidth; ++e) {
    gathered[e] = g_sv[kSharedWidth + e];
    g_sv[kSharedWidth + e] += 0.5;  // the table moves on (an optimizer step, a user's edit)
  }
  const bt::View y = bt::lane_matvec(tape, p, static_cast<bt::Index>(kSharedWeights),
                                        static_cast<bt::Index>(kSharedRowsOut), bt::view_list(tape, rows, 4U),
                                        bt::kNoIndex);
  BT_CHECK(t, y.count == kSharedRowsOut);
  BT_CHECK(t, bt::slot_at(tape, bt::node_operands(tape, y.first - 1U).a + bt::detail::kMsUniform) == 0U);
  bool ok = true;
  for (std::size_t o = 0U; o < kSharedRowsOut; ++o) {
    double sum = 0.0;
    for (std::size_t k = 0U; k < kSharedIn; ++k) {
      sum += g_sv[kSharedWeights + (o * kSharedIn) + k] * gathered[k % kSharedWidth];
    }
    for (std::size_t l = 0U; l < kN; ++l) {
      ok = ok && (tape.value(y.first + static_cast<bt::Index>(o)).lane[l] == sum);
    }
  }
  BT_CHECK(t, ok);
}

// A layer over a list of inputs (Tape::input: no gradient wanted), given as
// rows by view_list_rows: the values by plain loops, the weights' gradient,
// and no gradient written to the inputs; view_list_rows refuses what does
// not split into whole rows.
void matvec_over_inputs(bt_test::Context& t) {
  constexpr std::size_t kIn = 6U;
  constexpr std::size_t kRows = 3U;
  const bt::LaneParams<double> p = shared(kRows * kIn);
  bt::Tape<LD> tape(g_small, sizeof(g_small), kSmallNodes, kSmallSlots);
  bt::Index first = bt::kNoIndex;
  for (std::size_t k = 0U; k < kIn; ++k) {
    const bt::Value<LD> x = tape.input(lanes_of(k + 2U));
    first = (k == 0U) ? x.index() : first;
  }
  const bt::View x{first, static_cast<bt::Index>(kIn)};
  BT_CHECK(t, bt::view_list_rows(tape, x, 4U).slot == bt::kNoIndex);  // 6 is no multiple of 4
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  tape.reset();
  for (std::size_t k = 0U; k < kIn; ++k) {
    static_cast<void>(tape.input(lanes_of(k + 2U)));
  }
  BT_CHECK(t, bt::view_list_rows(tape, bt::View{first, 7U}, 7U).slot == bt::kNoIndex);  // past the end
  BT_CHECK(t, tape.status() == bt::Status::kInvalidHandle);
  tape.reset();
  for (std::size_t k = 0U; k < kIn; ++k) {
    static_cast<void>(tape.input(lanes_of(k + 2U)));
  }
  const bt::ViewList list = bt::view_list_rows(tape, x, 2U);
  BT_CHECK(t, list.total == kIn);
  BT_CHECK(t, bt::slot_at(tape, list.slot) == (3U | 0x80000000U));  // three runs, all inputs
  const bt::View y = bt::lane_matvec(tape, p, 0U, static_cast<bt::Index>(kRows), list, bt::kNoIndex);
  BT_CHECK(t, y.count == kRows);
  BT_CHECK(t, tape.backward(bt::reduce(tape, bt::Op::kSumR, bt::View{y.first, y.count})) == bt::Status::kOk);
  bool ok = true;
  for (std::size_t l = 0U; l < kN; ++l) {
    for (std::size_t o = 0U; o < kRows; ++o) {
      double sum = 0.0;
      for (std::size_t k = 0U; k < kIn; ++k) {
        sum += g_pv[(o * kIn) + k] * lanes_of(k + 2U).lane[l];
      }
      ok = ok && (tape.value(y.first + static_cast<bt::Index>(o)).lane[l] == sum);
    }
    for (std::size_t k = 0U; k < kIn; ++k) {
      ok = ok && (tape.grad(first + static_cast<bt::Index>(k)).lane[l] == 0.0);
    }
  }
  for (std::size_t o = 0U; o < kRows; ++o) {
    for (std::size_t k = 0U; k < kIn; ++k) {
      double sum = 0.0;
      for (std::size_t l = 0U; l < kN; ++l) {
        sum += lanes_of(k + 2U).lane[l];
      }
      ok = ok && (g_pg[(o * kIn) + k] == sum);
    }
  }
  BT_CHECK(t, ok);
}

// lane_scale_shift: y = x * s + b per element; root: the sum.
void scale_shift_by_hand(bt_test::Context& t) {
  const bt::LaneParams<double> p = shared(8U);  // scale at 0..2, shift at 4..6
  bt::Tape<LD> tape(g_small, sizeof(g_small), kSmallNodes, kSmallSlots);
  bt::Value<LD> x[3];
  for (std::size_t k = 0U; k < 3U; ++k) {
    x[k] = tape.leaf(lanes_of(k + 7U));
  }
  const bt::View y = bt::lane_scale_shift(tape, p, 0U, x[0].index(), 4U, 3U);
  BT_CHECK(t, tape.backward(bt::reduce(tape, bt::Op::kSumR, bt::View{y.first, y.count})) == bt::Status::kOk);
  bool ok = true;
  for (std::size_t k = 0U; k < 3U; ++k) {
    double sum_x = 0.0;
    for (std::size_t l = 0U; l < kN; ++l) {
      ok = ok && (tape.value(y.first + static_cast<bt::Index>(k)).lane[l] == ((x[k].value().lane[l] * g_pv[k]) + g_pv[4U + k]));
      ok = ok && (x[k].grad().lane[l] == g_pv[k]);
      sum_x += x[k].value().lane[l];
    }
    ok = ok && (g_pg[k] == sum_x) && (g_pg[4U + k] == static_cast<double>(kN));
  }
  BT_CHECK(t, ok);
}

// --- misuse: refused, nothing recorded --------------------------------------------
void misuse(bt_test::Context& t) {
  const bt::LaneParams<double> p = shared(40U);
  bt::Tape<LD> tape(g_small, sizeof(g_small), kSmallNodes, kSmallSlots);
  const bt::Value<LD> x = tape.leaf(lanes_of(1U));
  static_cast<void>(tape.leaf(lanes_of(2U)));
  const std::size_t size = tape.size();
  const std::size_t slots = tape.usage().slots;
  bt::Index ids[kN] = {};
  // An id past the table.
  ids[kN - 1U] = 3U;
  BT_CHECK(t, bt::lane_gather(tape, p, 0U, 3U, 4U, ids, 1U).count == 0U);
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  tape.clear_status();
  ids[kN - 1U] = 0U;
  // A table past the shared parameters; no ids; an empty LaneParams.
  BT_CHECK(t, bt::lane_gather(tape, p, 30U, 3U, 4U, ids, 1U).count == 0U);
  BT_CHECK(t, bt::lane_gather(tape, p, 0U, 3U, 4U, nullptr, 1U).count == 0U);
  BT_CHECK(t, bt::lane_gather(tape, bt::LaneParams<double>{}, 0U, 3U, 4U, ids, 1U).count == 0U);
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  tape.clear_status();
  // Weights or biases past the shared parameters, zero rows, a bad list.
  const bt::View two{x.index(), 2U};
  const bt::ViewList list = bt::view_list(tape, &two, 1U);
  const std::size_t slots_with_list = tape.usage().slots;
  BT_CHECK(t, bt::lane_matvec(tape, p, 30U, 6U, list, bt::kNoIndex).count == 0U);
  BT_CHECK(t, bt::lane_matvec(tape, p, 0U, 2U, list, 39U).count == 0U);
  BT_CHECK(t, bt::lane_matvec(tape, p, 0U, 0U, list, bt::kNoIndex).count == 0U);
  BT_CHECK(t, bt::lane_matvec(tape, p, 0xFFFFFFF0U, 2U, list, bt::kNoIndex).count == 0U);
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  tape.clear_status();
  BT_CHECK(t, bt::lane_matvec(tape, p, 0U, 2U, bt::ViewList{}, bt::kNoIndex).count == 0U);
  BT_CHECK(t, tape.status() != bt::Status::kOk);
  tape.clear_status();
  // pick: a position past the run, no positions, a run not recorded.
  bt::Index at[kN] = {};
  at[0] = 2U;
  BT_CHECK(t, !bt::pick(tape, two, at).valid());
  BT_CHECK(t, !bt::pick(tape, two, nullptr).valid());
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  tape.clear_status();
  at[0] = 0U;
  BT_CHECK(t, !bt::pick(tape, bt::View{x.index(), 9U}, at).valid());
  BT_CHECK(t, tape.status() == bt::Status::kInvalidHandle);
  tape.clear_status();
  // lane_scale_shift past the shared parameters, or over nodes not recorded.
  BT_CHECK(t, bt::lane_scale_shift(tape, p, 39U, x.index(), 0U, 2U).count == 0U);
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  tape.clear_status();
  BT_CHECK(t, bt::lane_scale_shift(tape, p, 0U, x.index(), 4U, 3U).count == 0U);
  BT_CHECK(t, tape.status() == bt::Status::kInvalidHandle);
  tape.clear_status();
  BT_CHECK(t, tape.size() == size);
  BT_CHECK(t, tape.usage().slots == slots_with_list);
  BT_CHECK(t, slots_with_list == slots + 3U);
  // lane_batch with parameters not on the parameter tape: refused up front.
  bt::Tape<double> params(g_serial, sizeof(g_serial), 8U, 0U, 4U);
  for (int i = 0; i < 4; ++i) {
    static_cast<void>(params.param(1.0));
  }
  bool called = false;
  const double loss = nn::lane_batch(params, bt::View{2U, 9U}, tape, 3U,
                                     [&](bt::Tape<LD>& tp, const bt::LaneParams<double>&, std::size_t, std::size_t) {
                                       called = true;
                                       return tp.leaf(LD(1.0));
                                     });
  BT_CHECK(t, std::isnan(loss) && !called);
  BT_CHECK(t, params.status() == bt::Status::kInvalidArgument);
}

// --- exp and tanh of float lanes ---------------------------------------------------
// Against the correctly rounded values (computed in double): exp within 2
// ulp, tanh within 3 ulp (lane_functions.hpp); special values exact.
double ulps(float got, double want) {
  const float rounded = static_cast<float>(want);
  if (std::isnan(want)) {
    return std::isnan(got) ? 0.0 : 1e9;
  }
  if (std::isinf(rounded)) {
    return (got == rounded) ? 0.0 : 1e9;
  }
  int e = 0;
  static_cast<void>(std::frexp(rounded, &e));
  const double ulp = std::ldexp(1.0, ((rounded == 0.0F) || ((e - 24) < -149)) ? -149 : (e - 24));
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

// True if this target's vector unit flushes subnormal results to zero
// (Helium's floating-point vector instructions do): exp of x below about
// -87.3 is then 0 in float lanes.
bool vector_flushes_subnormals() {
  using V = bt::detail::VectorOf<float, kN>::Type;
  volatile float tiny = std::numeric_limits<float>::min();
  float in[kN];
  for (std::size_t l = 0U; l < kN; ++l) {
    in[l] = tiny;
  }
  V v;
  bt::detail::load_vector(v, in);
  v = v * 0.5F;
  bt::detail::store_vector(in, v);
  return in[0] == 0.0F;  // BT-DEV-004: exact test
}

// The lanes' selects and relu against the scalar ones, lane by lane, on
// values that include NaN, infinities and signed zeros.
void lane_selects(bt_test::Context& t) {
  using LF = bt::Lanes<float, kN>;
  using S = bt::ScalarOps<float>;
  const float pool[] = {0.0F, -0.0F, 1.5F, -2.25F, HUGE_VALF, -HUGE_VALF, std::numeric_limits<float>::quiet_NaN(),
                        3e-39F, -7.0F, 0.125F, 1e30F};
  constexpr std::size_t kPool = sizeof(pool) / sizeof(pool[0]);
  bool ok = true;
  const auto same = [](float a, float b) {
    return (std::isnan(a) && std::isnan(b)) || ((a == b) && (std::signbit(a) == std::signbit(b)));
  };
  for (std::size_t r = 0U; r < 40U; ++r) {
    LF a(0.0F);
    LF b(0.0F);
    LF x(0.0F);
    LF y(0.0F);
    for (std::size_t l = 0U; l < kN; ++l) {
      a.lane[l] = pool[((r * 3U) + l) % kPool];
      b.lane[l] = pool[((r * 7U) + (l * 5U) + 1U) % kPool];
      x.lane[l] = pool[((r * 11U) + (l * 2U) + 2U) % kPool];
      y.lane[l] = pool[((r * 13U) + l + 3U) % kPool];
    }
    const LF relu = LF::Ops::relu(a);
    const LF grad = LF::Ops::relu_grad(a, x);
    const LF top = LF::Ops::max(a, b);
    const LF sel = LF::Ops::select_greater(a, b, x, y);
    for (std::size_t l = 0U; l < kN; ++l) {
      ok = ok && same(relu.lane[l], S::relu(a.lane[l])) && same(grad.lane[l], S::relu_grad(a.lane[l], x.lane[l])) &&
           same(top.lane[l], S::max(a.lane[l], b.lane[l])) &&
           same(sel.lane[l], S::select_greater(a.lane[l], b.lane[l], x.lane[l], y.lane[l]));
    }
  }
  BT_CHECK(t, ok);
}

void float_functions(bt_test::Context& t) {
  using LF = bt::Lanes<float, kN>;
  const bool ftz = vector_flushes_subnormals();
  if (ftz) {
    bt_test::print("  this target's vector unit flushes subnormal results to zero\n");
  }
  double worst_exp = 0.0;
  double worst_tanh = 0.0;
  float worst_exp_at = 0.0F;
  float worst_tanh_at = 0.0F;
  // A sweep of the float line: -110 .. 110 in uneven steps, and small values.
  for (int i = 0; i < 4000; ++i) {
    LF x(0.0F);
    for (std::size_t l = 0U; l < kN; ++l) {
      const double u = (static_cast<double>((i * static_cast<int>(kN)) + static_cast<int>(l)) / (4000.0 * kN)) - 0.5;
      x.lane[l] = static_cast<float>((i % 2 == 0) ? (220.0 * u) : (u * std::ldexp(1.0, -(i % 40))));
    }
    const LF e = LF::Ops::exp(x);
    const LF h = LF::Ops::tanh(x);
    for (std::size_t l = 0U; l < kN; ++l) {
      const double want = std::exp(static_cast<double>(x.lane[l]));
      const bool flushed = ftz && (want < static_cast<double>(std::numeric_limits<float>::min())) && (e.lane[l] == 0.0F);
      const double ue = flushed ? 0.0 : ulps(e.lane[l], want);
      const double uh = ulps(h.lane[l], std::tanh(static_cast<double>(x.lane[l])));
      worst_exp_at = (ue > worst_exp) ? x.lane[l] : worst_exp_at;
      worst_exp = (ue > worst_exp) ? ue : worst_exp;
      worst_tanh_at = (uh > worst_tanh) ? x.lane[l] : worst_tanh_at;
      worst_tanh = (uh > worst_tanh) ? uh : worst_tanh;
    }
  }
  bt_test::print("  float lanes: exp within ");
  bt_test::print_double(worst_exp);
  bt_test::print(" ulp (at ");
  bt_test::print_double(static_cast<double>(worst_exp_at));
  bt_test::print("), tanh within ");
  bt_test::print_double(worst_tanh);
  bt_test::print(" ulp (at ");
  bt_test::print_double(static_cast<double>(worst_tanh_at));
  bt_test::print(")\n");
  BT_CHECK(t, worst_exp <= 2.0);
  BT_CHECK(t, worst_tanh <= 3.0);
  // Special values.
  LF s(0.0F);
  const float specials[] = {0.0F, -0.0F, HUGE_VALF, -HUGE_VALF, std::numeric_limits<float>::quiet_NaN(), 89.0F, -104.5F, 1e-30F};
  for (std::size_t l = 0U; l < kN; ++l) {
    s.lane[l] = specials[l % 8U];
  }
  const LF e = LF::Ops::exp(s);
  const LF h = LF::Ops::tanh(s);
  bool ok = true;
  for (std::size_t l = 0U; l < kN; ++l) {
    const float x = s.lane[l];
    const float want_e = std::exp(x);
    const float want_h = std::tanh(x);
    ok = ok && (std::isnan(x) ? (std::isnan(e.lane[l]) && std::isnan(h.lane[l]))
                              : ((e.lane[l] == want_e) && (h.lane[l] == want_h) &&
                                 (std::signbit(h.lane[l]) == std::signbit(want_h))));
  }
  BT_CHECK(t, ok);
}

const bt_test::TestCase kCases[] = {
    {"gather_by_hand", gather_by_hand},
    {"pick_by_hand", pick_by_hand},
    {"matvec_by_hand", matvec_by_hand},
    {"shared_rows_by_hand", shared_rows_by_hand},
    {"shared_rows_changed_table", shared_rows_changed_table},
    {"matvec_over_inputs", matvec_over_inputs},
    {"scale_shift_by_hand", scale_shift_by_hand},
    {"misuse", misuse},
    {"float_functions", float_functions},
    {"lane_selects", lane_selects},
    {"plans_exact", plans_exact},
    {"batch_step_fold", batch_step_fold},
    {"mlp_fp64", mlp_fp64},
    {"mlp_fp32", mlp_fp32},
#if !BURTORCH_TEST_SMALL_TARGET
    {"gpt_fp64", gpt_fp64},
    {"gpt_fp32", gpt_fp32},
    {"gpt_checkpoints", gpt_checkpoints},
#endif
};

}  // namespace

BT_TEST_MAIN("lanes", kCases)

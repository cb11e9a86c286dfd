// SPDX-License-Identifier: Apache-2.0
// Lane batches (nn::lane_batch): N samples per sweep on a tape of Lanes,
// the parameters shared from their own tape.
//  - Every lane op (gather_shared, pick, matvec_shared, scale_shift_shared)
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
#include <burtorch/detail/tape_impl.hpp>  // the tape's templates, for the lane types
#include <burtorch/lanes.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

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

#if BURTORCH_TEST_SMALL_TARGET
constexpr nn::MlpConfig kMlp{7U, 2U, 3U, 4U};
constexpr nn::GptConfig kGpt{5U, 2U, 4U, 2U, 1U, 1e-5};
#else
constexpr nn::MlpConfig kMlp{11U, 3U, 4U, 9U};
constexpr nn::GptConfig kGpt{7U, 4U, 8U, 2U, 2U, 1e-5};
#endif
// Two full sweeps and a partial one.
constexpr std::size_t kBatch = (2U * kN) + 3U;

template <class T>
using L = bt::Lanes<T, kN>;

constexpr std::size_t max_of(std::size_t a, std::size_t b) { return (a > b) ? a : b; }

// Buffers: the parameter tape, a serial tape (parameters + one sample), the
// lane tape, each big enough for the largest case.
constexpr std::size_t kParamBytes = max_of(nn::MakemoreMlp<double>::lane_plan<kN>(kMlp, nn::OptimizerKind::kSgd).params.tape_bytes,
                                           nn::Gpt<double>::lane_plan<kN>(kGpt, nn::OptimizerKind::kSgd).params.tape_bytes);
constexpr std::size_t kSerialBytes = max_of(nn::MakemoreMlp<double>::plan(kMlp, nn::OptimizerKind::kSgd).tape_bytes,
                                            nn::Gpt<double>::plan(kGpt, nn::OptimizerKind::kSgd).tape_bytes);
constexpr std::size_t kLaneBytes = max_of(nn::MakemoreMlp<double>::lane_plan<kN>(kMlp, nn::OptimizerKind::kSgd).lane_tape_bytes,
                                          nn::Gpt<double>::lane_plan<kN>(kGpt, nn::OptimizerKind::kSgd).lane_tape_bytes);
alignas(64) unsigned char g_params[kParamBytes];
alignas(64) unsigned char g_serial[kSerialBytes];
alignas(64) unsigned char g_lanes[kLaneBytes];
constexpr std::size_t kMaxParams = max_of(nn::MakemoreMlp<double>::parameters(kMlp), nn::Gpt<double>::parameters(kGpt));
double g_grads[kMaxParams];  // the serial batch's gradients

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
  double scale = 0.0;
  for (std::size_t i = 0U; i < count; ++i) {
    scale = (std::fabs(g_grads[i]) > scale) ? std::fabs(g_grads[i]) : scale;
  }
  BT_CHECK(t, scale > 0.0);
  std::size_t bad = 0U;
  for (std::size_t i = 0U; i < count; ++i) {
    const double g = static_cast<double>(params.grads()[i]);
    if (!(std::fabs(g - g_grads[i]) <= (tolerance<T>() * scale))) {
      ++bad;
    }
  }
  BT_CHECK(t, bad == 0U);
}

// --- the MLP ---------------------------------------------------------------
template <class T>
void mlp_matches_serial(bt_test::Context& t, std::size_t batch) {
  using Model = nn::MakemoreMlp<T>;
  constexpr nn::LanePlan kPlan = Model::template lane_plan<kN>(kMlp, nn::OptimizerKind::kSgd);
  constexpr nn::MemoryPlan kSerial = Model::plan(kMlp, nn::OptimizerKind::kSgd);
  make_samples(kMlp.vocab, kMlp.context);
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
                                      [&](bt::Tape<L<T>>& tp, const bt::SharedParams<T>& p, std::size_t first, std::size_t active) {
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
}
void mlp_fp32(bt_test::Context& t) {
  mlp_matches_serial<float>(t, kBatch);
  mlp_matches_serial<float>(t, kN - 1U);
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
                                      [&](bt::Tape<L<T>>& tp, const bt::SharedParams<T>& p, std::size_t first, std::size_t active) {
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

void gpt_fp64(bt_test::Context& t) {
  gpt_matches_serial<double>(t, kBatch);
  gpt_matches_serial<double>(t, 1U);
}
void gpt_fp32(bt_test::Context& t) { gpt_matches_serial<float>(t, kBatch); }

const bt_test::TestCase kCases[] = {
    {"mlp_fp64", mlp_fp64},
    {"mlp_fp32", mlp_fp32},
    {"gpt_fp64", gpt_fp64},
    {"gpt_fp32", gpt_fp32},
};

}  // namespace

BT_TEST_MAIN("lanes", kCases)

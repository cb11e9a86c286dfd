// SPDX-License-Identifier: Apache-2.0
// Trajectory parity with PyTorch: the MLP (e=4, e=64) and the GPT-like model,
// started from the same weights (our PRNG's, exported by test_nn_export and
// loaded by tools/golden/nn/make_trajectory.py) and fed the same samples in
// the same order, give the same mean loss at each of 100 SGD steps and 100
// Adam steps, FP64, to 1e-8 relative (tests/golden/test_nn_trajectory_golden.hpp).
// The same runs by lane batches (nn::lane_batch: the samples of a batch in
// the lanes of one sweep) stay on PyTorch's curves to the same tolerance.
// Host-sized (the FP64 tapes take a few MB); heap-free like every suite.
#include <burtorch/burtorch.hpp>
#include <burtorch/lanes/ops.hpp>  // a tape of Lanes: the lane ops and the tape's templates for it
#include <burtorch/lanes/lanes.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstdint>

#include "harness.hpp"
#include "test_nn_trajectory.hpp"
#include "golden/test_nn_trajectory_golden.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

constexpr double kTol = 1e-8;
constexpr nn::MemoryPlan kMlp64 = nn::MakemoreMlp<double>::plan(trajectory::mlp_config(64U), nn::OptimizerKind::kAdam);
constexpr nn::MemoryPlan kGptPlan = nn::Gpt<double>::plan(trajectory::kGpt, nn::OptimizerKind::kAdam);
constexpr std::size_t kTapeBytes = (kMlp64.tape_bytes > kGptPlan.tape_bytes) ? kMlp64.tape_bytes : kGptPlan.tape_bytes;
constexpr std::size_t kMoments = 2U * ((kMlp64.parameters > kGptPlan.parameters) ? kMlp64.parameters : kGptPlan.parameters);
alignas(64) unsigned char g_arena[kTapeBytes];
double g_moments[kMoments];

// Lane batches: this build's vector width (at least 2), the parameters on
// a tape of their own and N samples' graph on a tape of lanes.
constexpr std::size_t kLanes = (bt::kHardwareLanes > 1U) ? bt::kHardwareLanes : 2U;
using Lane = bt::Lanes<double, kLanes>;
constexpr nn::LanePlan kMlpLanes = nn::MakemoreMlp<double>::lane_plan<kLanes>(trajectory::mlp_config(64U), nn::OptimizerKind::kAdam);
constexpr nn::LanePlan kGptLanes = nn::Gpt<double>::lane_plan<kLanes>(trajectory::kGpt, nn::OptimizerKind::kAdam);
constexpr std::size_t kLaneBytes =
    (kMlpLanes.lane_tape_bytes > kGptLanes.lane_tape_bytes) ? kMlpLanes.lane_tape_bytes : kGptLanes.lane_tape_bytes;
alignas(64) unsigned char g_lane_arena[kLaneBytes];

nn::OptimizerOptions<double> optimizer(bool adam, double lr) {
  nn::OptimizerOptions<double> c;
  c.kind = adam ? nn::OptimizerKind::kAdam : nn::OptimizerKind::kSgd;
  c.lr = lr;
  return c;
}

// Compares the curve; prints the first step that differs.
void check_curve(bt_test::Context& t, const double* ours, const double* theirs, int n) {
  double worst = 0.0;
  int at = -1;
  for (int s = 0; s < n; ++s) {
    const double rel = std::fabs(ours[s] - theirs[s]) / std::fabs(theirs[s]);
    if (!(rel <= worst)) {
      worst = rel;
      at = s;
    }
  }
  bt_test::print("  ");
  bt_test::print(t.test_name);
  bt_test::print(": worst relative difference from PyTorch ");
  bt_test::print_double(worst);
  bt_test::print("\n");
  if (!(worst <= kTol)) {
    BT_CHECK_NEAR(t, ours[at], theirs[at], kTol);
  }
  BT_CHECK(t, worst <= kTol);
  // Training did something: the curve is not flat.
  BT_CHECK(t, std::fabs(ours[n - 1] - ours[0]) > 1e-3);
}

void mlp_run(bt_test::Context& t, bt::Index hidden, bool adam, long parameters, const double* golden, bool lanes = false) {
  const nn::MlpOptions c = trajectory::mlp_config(hidden);
  const nn::MemoryPlan plan = nn::MakemoreMlp<double>::plan(c, nn::OptimizerKind::kAdam);
  const nn::LanePlan lane_plan = nn::MakemoreMlp<double>::lane_plan<kLanes>(c, nn::OptimizerKind::kAdam);
  bt::Tape<Lane> lane_tape(g_lane_arena, sizeof(g_lane_arena), lane_plan.sample_nodes, lane_plan.slots);
  bt::Tape<double> tape(g_arena, sizeof(g_arena), plan.nodes, plan.slots, plan.parameters);
  static nn::MakemoreMlp<double> model;
  nn::Rng init(trajectory::kInitSeed);
  BT_CHECK(t, model.create(tape, c, init));
  BT_CHECK(t, static_cast<long>(model.params().count) == parameters);
  const bt::View params = model.params();
  nn::Optimizer<double> opt(optimizer(adam, adam ? trajectory::kMlpAdamLr : trajectory::kMlpSgdLr), g_moments);
  nn::Rng data(trajectory::kDataSeed);
  double losses[trajectory::kSteps];
  for (int s = 0; s < trajectory::kSteps; ++s) {
    std::uint8_t rows[trajectory::kMlpBatch][trajectory::kContext + 1U];
    for (auto& row : rows) {
      trajectory::mlp_sample(data, row, &row[trajectory::kContext]);
    }
    if (lanes) {
      losses[s] = nn::lane_batch(tape, params, lane_tape, trajectory::kMlpBatch,
                                 [&](bt::Tape<Lane>& lt, const bt::LaneParams<double>& p, std::size_t first, std::size_t active) {
                                   const std::uint8_t* contexts[kLanes];
                                   std::uint8_t targets[kLanes];
                                   for (std::size_t l = 0U; l < kLanes; ++l) {
                                     const std::size_t i = first + ((l < active) ? l : 0U);
                                     contexts[l] = rows[i];
                                     targets[l] = rows[i][trajectory::kContext];
                                   }
                                   return model.loss(lt, p, contexts, targets);
                                 });
    } else {
      losses[s] = nn::serial_batch(tape, params, trajectory::kMlpBatch, [&](bt::Tape<double>& tp, std::size_t i) {
        return model.loss(tp, rows[i], rows[i][trajectory::kContext]);
      });
    }
    BT_CHECK(t, opt.step(tape, params) == bt::Status::kOk);
  }
  BT_CHECK(t, tape.status() == bt::Status::kOk);
  BT_CHECK(t, lane_tape.status() == bt::Status::kOk);
  check_curve(t, losses, golden, trajectory::kSteps);
}

void gpt_run(bt_test::Context& t, bool adam, const double* golden, bool lanes = false) {
  bt::Tape<double> tape(g_arena, sizeof(g_arena), kGptPlan.nodes, kGptPlan.slots, kGptPlan.parameters);
  bt::Tape<Lane> lane_tape(g_lane_arena, sizeof(g_lane_arena), kGptLanes.sample_nodes, kGptLanes.slots);
  static nn::Gpt<double> model;
  nn::Rng init(trajectory::kInitSeed);
  BT_CHECK(t, model.create(tape, trajectory::kGpt, init));
  BT_CHECK(t, static_cast<long>(model.params().count) == golden::gpt_parameters);
  const bt::View params = model.params();
  nn::Optimizer<double> opt(optimizer(adam, adam ? trajectory::kGptAdamLr : trajectory::kGptSgdLr), g_moments);
  nn::Rng data(trajectory::kDataSeed);
  double losses[trajectory::kSteps];
  for (int s = 0; s < trajectory::kSteps; ++s) {
    std::uint8_t rows[trajectory::kGptBatch][9];
    for (auto& row : rows) {
      trajectory::gpt_sample(data, row);
    }
    if (lanes) {
      losses[s] = nn::lane_batch(tape, params, lane_tape, trajectory::kGptBatch,
                                 [&](bt::Tape<Lane>& lt, const bt::LaneParams<double>& p, std::size_t first, std::size_t active) {
                                   const std::uint8_t* in[kLanes];
                                   const std::uint8_t* out[kLanes];
                                   for (std::size_t l = 0U; l < kLanes; ++l) {
                                     in[l] = rows[first + ((l < active) ? l : 0U)];
                                     out[l] = in[l] + 1;
                                   }
                                   return model.loss(lt, p, in, out, 8U);
                                 });
    } else {
      losses[s] = nn::serial_batch(tape, params, trajectory::kGptBatch, [&](bt::Tape<double>& tp, std::size_t i) {
        return model.loss(tp, rows[i], rows[i] + 1, 8U);
      });
    }
    BT_CHECK(t, opt.step(tape, params) == bt::Status::kOk);
  }
  BT_CHECK(t, tape.status() == bt::Status::kOk);
  BT_CHECK(t, lane_tape.status() == bt::Status::kOk);
  check_curve(t, losses, golden, trajectory::kSteps);
}

void mlp4_sgd(bt_test::Context& t) { mlp_run(t, 4U, false, golden::mlp4_parameters, golden::mlp4_sgd); }
void mlp4_adam(bt_test::Context& t) { mlp_run(t, 4U, true, golden::mlp4_parameters, golden::mlp4_adam); }
void mlp64_sgd(bt_test::Context& t) { mlp_run(t, 64U, false, golden::mlp64_parameters, golden::mlp64_sgd); }
void mlp64_adam(bt_test::Context& t) { mlp_run(t, 64U, true, golden::mlp64_parameters, golden::mlp64_adam); }
void gpt_sgd(bt_test::Context& t) { gpt_run(t, false, golden::gpt_sgd); }
void gpt_adam(bt_test::Context& t) { gpt_run(t, true, golden::gpt_adam); }
void lanes_mlp4_sgd(bt_test::Context& t) { mlp_run(t, 4U, false, golden::mlp4_parameters, golden::mlp4_sgd, true); }
void lanes_mlp64_adam(bt_test::Context& t) { mlp_run(t, 64U, true, golden::mlp64_parameters, golden::mlp64_adam, true); }
void lanes_gpt_sgd(bt_test::Context& t) { gpt_run(t, false, golden::gpt_sgd, true); }
void lanes_gpt_adam(bt_test::Context& t) { gpt_run(t, true, golden::gpt_adam, true); }

const bt_test::TestCase kCases[] = {
    {"mlp4_sgd", mlp4_sgd},   {"mlp4_adam", mlp4_adam}, {"mlp64_sgd", mlp64_sgd},
    {"mlp64_adam", mlp64_adam}, {"gpt_sgd", gpt_sgd},   {"gpt_adam", gpt_adam},
    {"lanes_mlp4_sgd", lanes_mlp4_sgd}, {"lanes_mlp64_adam", lanes_mlp64_adam},
    {"lanes_gpt_sgd", lanes_gpt_sgd}, {"lanes_gpt_adam", lanes_gpt_adam},
};

}  // namespace

BT_TEST_MAIN("nn_trajectory", kCases)

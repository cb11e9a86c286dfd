// SPDX-License-Identifier: Apache-2.0
// Trajectory parity with PyTorch: the MLP (e=4, e=64) and the GPT-like model,
// started from the same weights (our PRNG's, exported by test_nn_export and
// loaded by tools/golden/nn/make_trajectory.py) and fed the same samples in
// the same order, give the same mean loss at each of 100 SGD steps and 100
// Adam steps, FP64, to 1e-8 relative (tests/test_nn_trajectory_golden.hpp).
// Host-sized (the FP64 tapes take a few MB); heap-free like every suite.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstdint>

#include "harness.hpp"
#include "test_nn_trajectory.hpp"
#include "test_nn_trajectory_golden.hpp"

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

nn::OptimizerConfig<double> optimizer(bool adam, double lr) {
  nn::OptimizerConfig<double> c;
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

void mlp_run(bt_test::Context& t, bt::Index hidden, bool adam, long parameters, const double* golden) {
  const nn::MlpConfig c = trajectory::mlp_config(hidden);
  const nn::MemoryPlan plan = nn::MakemoreMlp<double>::plan(c, nn::OptimizerKind::kAdam);
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
    losses[s] = nn::serial_batch(tape, params, trajectory::kMlpBatch, [&](bt::Tape<double>& tp, std::size_t i) {
      return model.loss(tp, rows[i], rows[i][trajectory::kContext]);
    });
    BT_CHECK(t, opt.step(tape, params) == bt::Status::kOk);
  }
  BT_CHECK(t, tape.status() == bt::Status::kOk);
  check_curve(t, losses, golden, trajectory::kSteps);
}

void gpt_run(bt_test::Context& t, bool adam, const double* golden) {
  bt::Tape<double> tape(g_arena, sizeof(g_arena), kGptPlan.nodes, kGptPlan.slots, kGptPlan.parameters);
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
    losses[s] = nn::serial_batch(tape, params, trajectory::kGptBatch, [&](bt::Tape<double>& tp, std::size_t i) {
      return model.loss(tp, rows[i], rows[i] + 1, 8U);
    });
    BT_CHECK(t, opt.step(tape, params) == bt::Status::kOk);
  }
  BT_CHECK(t, tape.status() == bt::Status::kOk);
  check_curve(t, losses, golden, trajectory::kSteps);
}

void mlp4_sgd(bt_test::Context& t) { mlp_run(t, 4U, false, golden::mlp4_parameters, golden::mlp4_sgd); }
void mlp4_adam(bt_test::Context& t) { mlp_run(t, 4U, true, golden::mlp4_parameters, golden::mlp4_adam); }
void mlp64_sgd(bt_test::Context& t) { mlp_run(t, 64U, false, golden::mlp64_parameters, golden::mlp64_sgd); }
void mlp64_adam(bt_test::Context& t) { mlp_run(t, 64U, true, golden::mlp64_parameters, golden::mlp64_adam); }
void gpt_sgd(bt_test::Context& t) { gpt_run(t, false, golden::gpt_sgd); }
void gpt_adam(bt_test::Context& t) { gpt_run(t, true, golden::gpt_adam); }

const bt_test::TestCase kCases[] = {
    {"mlp4_sgd", mlp4_sgd},   {"mlp4_adam", mlp4_adam}, {"mlp64_sgd", mlp64_sgd},
    {"mlp64_adam", mlp64_adam}, {"gpt_sgd", gpt_sgd},   {"gpt_adam", gpt_adam},
};

}  // namespace

BT_TEST_MAIN("nn_trajectory", kCases)

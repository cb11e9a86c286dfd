// SPDX-License-Identifier: Apache-2.0
// DP-SGD's batch (nn/dp.hpp) against the definition: each sample's gradient
// (computed alone, by a one-sample serial_batch) clipped to norm C by hand,
// summed, Gaussian noise of standard deviation sigma C drawn from a second
// generator with the same seed, divided by the batch size. Also: a clip
// bound no gradient reaches gives serial_batch's gradient; bad options are
// refused before anything changes. Heap-free.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>

#include "harness.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

constexpr std::size_t kBatch = 6U;
constexpr std::size_t kIn = 3U;
constexpr std::size_t kClasses = 4U;
alignas(64) unsigned char g_arena[12 * 1024];

const double kX[kBatch][kIn] = {{0.5, -1.0, 2.0},  {3.0, 0.25, -0.5}, {-2.0, 1.5, 0.0},
                                {0.1, 0.2, 0.3},   {-4.0, -3.0, 2.5}, {1.0, 1.0, -1.0}};
const bt::Index kY[kBatch] = {0U, 3U, 1U, 2U, 0U, 3U};

struct Setup {
  bt::Tape<double> tape{g_arena, sizeof(g_arena), 256U, 64U};
  nn::Linear<double> lin;
  bool ok = false;
  Setup() {
    nn::LinearOptions o;
    o.in = kIn;
    o.out = kClasses;
    nn::Rng rng(5U);
    ok = lin.create(tape, o, rng);
    // Larger weights so that some samples' gradients pass the clip bound.
    for (bt::Index i = 0U; i < lin.params().count; ++i) {
      tape.values()[lin.params().first + i] *= 3.0;
    }
  }
  bt::Value<double> loss(bt::Tape<double>& tp, std::size_t s) const {
    const bt::View x = bt::record_view(tp, kIn, [&](bt::Index i) noexcept { return tp.leaf(kX[s][i]); });
    return nn::cross_entropy(tp, lin.forward(tp, x), kY[s]);
  }
};

void dp_matches_definition(bt_test::Context& t) {
  Setup m;
  BT_CHECK(t, m.ok);
  const bt::View p = m.lin.params();
  const std::size_t n = p.count;
  // Each sample's gradient alone.
  double per_sample[kBatch][kClasses * (kIn + 1U)] = {};
  double norms[kBatch] = {};
  for (std::size_t s = 0U; s < kBatch; ++s) {
    static_cast<void>(nn::serial_batch(m.tape, p, 1U, [&](bt::Tape<double>& tp, std::size_t) { return m.loss(tp, s); }));
    double sq = 0.0;
    for (std::size_t i = 0U; i < n; ++i) {
      per_sample[s][i] = m.tape.grads()[p.first + i];
      sq += per_sample[s][i] * per_sample[s][i];
    }
    norms[s] = std::sqrt(sq);
  }
  // C between the smallest and largest norm: some clipped, some not.
  double lo = norms[0];
  double hi = norms[0];
  for (const double v : norms) {
    lo = (v < lo) ? v : lo;
    hi = (v > hi) ? v : hi;
  }
  BT_CHECK(t, hi > (1.5 * lo));
  nn::DpOptions<double> dp;
  dp.clip = 0.5 * (lo + hi);
  dp.noise = 0.7;
  std::size_t expect_clipped = 0U;
  double expect[kClasses * (kIn + 1U)] = {};
  nn::Rng oracle(99U);
  for (std::size_t i = 0U; i < n; ++i) {
    double sum = 0.0;
    for (std::size_t s = 0U; s < kBatch; ++s) {
      const double f = (norms[s] > dp.clip) ? (dp.clip / norms[s]) : 1.0;
      sum += f * per_sample[s][i];
    }
    expect[i] = (sum + (dp.noise * dp.clip * oracle.normal())) / static_cast<double>(kBatch);
  }
  for (const double v : norms) {
    expect_clipped += (v > dp.clip) ? 1U : 0U;
  }
  double sum_buffer[kClasses * (kIn + 1U)];
  nn::Rng rng(99U);
  std::size_t clipped = 0U;
  const double loss =
      nn::dp_serial_batch(m.tape, p, kBatch, [&](bt::Tape<double>& tp, std::size_t s) { return m.loss(tp, s); }, dp,
                          sum_buffer, rng, &clipped);
  BT_CHECK(t, std::isfinite(loss) && (m.tape.status() == bt::Status::kOk));
  BT_CHECK(t, (clipped == expect_clipped) && (clipped > 0U) && (clipped < kBatch));
  bool close = true;
  for (std::size_t i = 0U; i < n; ++i) {
    close = close && bt_test::near(m.tape.grads()[p.first + i], expect[i], 1e-13, 1e-15);
  }
  BT_CHECK(t, close);
  // The generator advanced by exactly n normals.
  BT_CHECK(t, rng.next_u64() == oracle.next_u64());
}

void dp_without_clipping_or_noise_is_the_serial_batch(bt_test::Context& t) {
  Setup m;
  const bt::View p = m.lin.params();
  const double plain = nn::serial_batch(m.tape, p, kBatch, [&](bt::Tape<double>& tp, std::size_t s) { return m.loss(tp, s); });
  double serial[kClasses * (kIn + 1U)];
  for (std::size_t i = 0U; i < p.count; ++i) {
    serial[i] = m.tape.grads()[p.first + i];
  }
  nn::DpOptions<double> dp;
  dp.clip = 1e30;
  dp.noise = 0.0;
  double sum_buffer[kClasses * (kIn + 1U)];
  nn::Rng rng(1U);
  std::size_t clipped = 99U;
  const double loss =
      nn::dp_serial_batch(m.tape, p, kBatch, [&](bt::Tape<double>& tp, std::size_t s) { return m.loss(tp, s); }, dp,
                          sum_buffer, rng, &clipped);
  BT_CHECK(t, bt_test::near(loss, plain, 1e-15, 0.0) && (clipped == 0U));
  bool close = true;
  for (std::size_t i = 0U; i < p.count; ++i) {
    close = close && bt_test::near(m.tape.grads()[p.first + i], serial[i], 1e-13, 1e-16);
  }
  BT_CHECK(t, close);
}

void dp_refuses_bad_options(bt_test::Context& t) {
  const nn::DpOptions<double> bad[4] = {{0.0, 1.0}, {-1.0, 1.0}, {1.0, -0.5}, {1.0, std::nan("")}};
  for (const nn::DpOptions<double>& dp : bad) {
    Setup m;
    const bt::View p = m.lin.params();
    m.tape.grads()[p.first] = 42.0;
    double sum_buffer[kClasses * (kIn + 1U)];
    nn::Rng rng(1U);
    const double loss =
        nn::dp_serial_batch(m.tape, p, kBatch, [&](bt::Tape<double>& tp, std::size_t s) { return m.loss(tp, s); }, dp,
                            sum_buffer, rng);
    BT_CHECK(t, std::isnan(loss) && (m.tape.status() == bt::Status::kInvalidArgument));
    BT_CHECK(t, m.tape.grads()[p.first] == 42.0);
  }
  Setup m;
  nn::Rng rng(1U);
  const double loss = nn::dp_serial_batch(
      m.tape, m.lin.params(), kBatch, [&](bt::Tape<double>& tp, std::size_t s) { return m.loss(tp, s); },
      nn::DpOptions<double>{}, static_cast<double*>(nullptr), rng);
  BT_CHECK(t, std::isnan(loss) && (m.tape.status() == bt::Status::kInvalidArgument));
}

const bt_test::TestCase kCases[] = {
    {"dp_matches_definition", dp_matches_definition},
    {"dp_without_clipping_or_noise_is_the_serial_batch", dp_without_clipping_or_noise_is_the_serial_batch},
    {"dp_refuses_bad_options", dp_refuses_bad_options},
};

}  // namespace

BT_TEST_MAIN("nn_dp", kCases)

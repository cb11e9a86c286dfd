// SPDX-License-Identifier: Apache-2.0
// ThreadSanitizer check (tools/check.d/36-gates-tsan.sh): several threads
// each train a small MLP on a tape of their own, at the same time. The
// library promises that two tapes share nothing, so
//   - TSan must report no data race (it aborts the program if it does), and
//   - every thread must end with exactly the parameters that the same
//     training gives when run alone on the main thread first (bit for bit:
//     no shared state, no cross-talk), and
//   - training must work: the loss falls to a small fraction of its start.
// Built with -fsanitize=thread against the library sources; uses only the
// core API (leaf/param, inner_product_with_bias, tanh, mark/rewind, backward,
// values()/grads()), not the nn layers.
#include <burtorch/burtorch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>

namespace bt = burtorch;

namespace {

constexpr std::size_t kInputs = 2U;
constexpr std::size_t kHidden = 8U;
constexpr std::size_t kParams = (kInputs + 1U) * kHidden + kHidden + 1U;  // 33
constexpr std::size_t kSamples = 16U;
constexpr int kEpochs = 1000;
constexpr double kRate = 0.5;
constexpr int kThreads = 4;

using Tape = bt::FixedTape<double, 256U, 256U>;

// A deterministic generator (xorshift64*), one per thread.
struct Rng {
  std::uint64_t state;
  double uniform() {  // [-1, 1)
    state ^= state >> 12U;
    state ^= state << 25U;
    state ^= state >> 27U;
    const std::uint64_t r = state * 2685821657736338717ULL;
    return static_cast<double>(r >> 11U) * (2.0 / 9007199254740992.0) - 1.0;
  }
};

// The target: a smooth function of two inputs on a fixed grid.
double target(double x0, double x1) { return 0.5 * std::sin(2.0 * x0) * std::cos(1.5 * x1); }

struct Result {
  double first_loss = 0.0;
  double last_loss = 0.0;
  double params[kParams] = {};
  bt::Status status = bt::Status::kOk;
};

// One full training run on a tape of its own (on this thread's stack), or,
// for the negative control, on `shared`.
void train(std::uint64_t seed, Result* out, Tape* shared) {
  Tape own;
  Tape& tape = (shared != nullptr) ? *shared : own;
  Rng rng{seed};
  bt::Value<double> p[kParams];
  for (std::size_t i = 0U; i < kParams; ++i) {
    p[i] = tape.param(0.5 * rng.uniform());
  }
  // Layout: hidden unit h has weights p[h*(kInputs+1) .. +kInputs) and bias
  // p[h*(kInputs+1)+kInputs]; then kHidden output weights and the output bias.
  const std::size_t out_w = kHidden * (kInputs + 1U);
  const bt::Mark after_params = tape.mark();
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    tape.zero_grad(0U, static_cast<bt::Index>(kParams));
    double loss_sum = 0.0;
    for (std::size_t s = 0U; s < kSamples; ++s) {
      const double x0 = -1.0 + 2.0 * static_cast<double>(s % 4U) / 3.0;
      const double x1 = -1.0 + 2.0 * static_cast<double>(s / 4U) / 3.0;
      const bt::Value<double> x[kInputs] = {tape.leaf(x0), tape.leaf(x1)};
      bt::Value<double> h[kHidden];
      for (std::size_t u = 0U; u < kHidden; ++u) {
        const std::size_t base = u * (kInputs + 1U);
        h[u] = bt::tanh(bt::inner_product_with_bias(&p[base], x, kInputs, p[base + kInputs]));
      }
      const bt::Value<double> y = bt::inner_product_with_bias(&p[out_w], h, kHidden, p[out_w + kHidden]);
      const bt::Value<double> err = y - target(x0, x1);
      const bt::Value<double> loss = err * err;
      if (tape.backward(loss) != bt::Status::kOk) {
        out->status = tape.status();
        return;
      }
      loss_sum += loss.value();
      static_cast<void>(tape.rewind(after_params));  // keeps the parameters and their gradients
    }
    double* v = tape.values();
    const double* g = tape.grads();
    for (std::size_t i = 0U; i < kParams; ++i) {
      v[i] -= kRate * g[i] / static_cast<double>(kSamples);
    }
    const double mean_loss = loss_sum / static_cast<double>(kSamples);
    if (epoch == 0) {
      out->first_loss = mean_loss;
    }
    out->last_loss = mean_loss;
  }
  for (std::size_t i = 0U; i < kParams; ++i) {
    out->params[i] = tape.values()[i];
  }
  out->status = tape.status();
}

// Each thread writes only its own result slot.
Result g_results[kThreads];
Result g_reference[kThreads];
// Only for --share-one-tape: the misuse TSan must catch.
Tape g_shared;

std::uint64_t seed_of(int t) {
  const std::uint64_t k = static_cast<std::uint64_t>(static_cast<unsigned>(t)) + 1U;
  return std::uint64_t{0x9E3779B97F4A7C15U} + (std::uint64_t{7919U} * k);
}

}  // namespace

// With --share-one-tape every thread records on one tape: a data race that
// TSan must report (the stage expects TSan's exit code then), showing that
// the clean run's silence means something.
int main(int argc, char** argv) {
  const bool share = (argc > 1) && (std::strcmp(argv[1], "--share-one-tape") == 0);
  int passed = 0;
  int failed = 0;
  auto check = [&](bool ok, const char* what, int t) {
    if (ok) {
      ++passed;
    } else {
      ++failed;
      std::printf("FAILED: thread %d: %s\n", t, what);
    }
  };
  // The reference: each seed trained alone, one after another.
  for (int t = 0; t < kThreads; ++t) {
    train(seed_of(t), &g_reference[t], nullptr);
  }
  // The same runs, all at once.
  std::thread workers[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    workers[t] = std::thread(train, seed_of(t), &g_results[t], share ? &g_shared : nullptr);
  }
  for (auto& w : workers) {
    w.join();
  }
  for (int t = 0; t < kThreads; ++t) {
    const Result& r = g_results[t];
    check(r.status == bt::Status::kOk, "tape status ok", t);
    check(std::isfinite(r.last_loss) && (r.last_loss < 0.2 * r.first_loss), "loss fell below 20% of its start", t);
    check(std::memcmp(r.params, g_reference[t].params, sizeof(r.params)) == 0,
          "parameters identical to the single-threaded run", t);
    check(r.last_loss == g_reference[t].last_loss, "final loss identical to the single-threaded run", t);
    std::printf("thread %d: loss %.6g -> %.6g over %d epochs\n", t, r.first_loss, r.last_loss, kEpochs);
  }
  // Different seeds must give different parameters (the comparison above
  // would be vacuous if every run were the same).
  check(std::memcmp(g_results[0].params, g_results[1].params, sizeof(g_results[0].params)) != 0,
        "different seeds train to different parameters", 0);
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

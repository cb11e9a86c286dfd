// SPDX-License-Identifier: Apache-2.0
// "SIMD registers as scalars" (burtorch/lanes/lanes.hpp): the tiny and small
// graphs recorded once on a tape of Lanes<double, N>, each lane a different
// sample (other inputs), so one build + backward + rewind computes N
// samples. Reports ns per sweep and per sample next to the scalar tape, and
// checks every lane against a scalar tape run on that lane's sample (to
// 1e-12 relative: bitwise unless the compiler fused multiply-adds in one of
// the two, docs/floating-point.md).
//
// Usage: bench_lanes [--runs R] [--iterations N] [--json] | --isa | --fma-peak
//   --isa       prints the selected vector kernels (burtorch/core/simd.hpp) and exits.
//   --fma-peak  measures this core's multiply-add peak in float (GMAC/s) with
//               register-only vector multiply-adds of the build's widest
//               registers (what tools/bench compares the lane batches with),
//               prints one JSON line and exits.
#include <burtorch/burtorch.hpp>
#include <burtorch/lanes/ops.hpp>  // a tape of Lanes: the lane ops and the tape's templates for it
#include <burtorch/lanes/lanes.hpp>
#include <burtorch/core/simd.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

#include "bench_util.hpp"
#include "graphs.hpp"
#include "burtorch/lanes/ops.hpp"  // a tape of Lanes: the lane ops and the tape's templates for it

namespace bt = burtorch;

template class burtorch::Tape<bt::Lanes<double, 2>>;
template class burtorch::Tape<bt::Lanes<double, 4>>;
template class burtorch::Tape<bt::Lanes<double, 8>>;

namespace {

volatile double g_sink = 0.0;

// Inputs of sample k (a, b): spread around the paper's values.
double input_a(std::size_t k) { return -41.0 + 0.5 * static_cast<double>(k); }
double input_b(std::size_t k) { return 2.0 + 0.25 * static_cast<double>(k); }

template <class S>
S lanes_of(double (*f)(std::size_t)) {
  S x;
  for (std::size_t k = 0U; k < S::kLanes; ++k) {
    x.lane[k] = f(k);
  }
  return x;
}

template <class S>
struct Graph {
  bool small;
  template <class Tp>
  auto build(Tp& tape, S a, S b) const {
    struct Out {
      bt::Value<S> a, b, g;
    };
    if (small) {
      const auto n = examples::small_graph(tape, a, b);
      return Out{n.a, n.b, n.g};
    }
    const auto n = examples::tiny_graph(tape, a, b);
    return Out{n.a, n.b, n.g};
  }
};

// Scalar reference for one sample.
bt::FixedTape<double, 64> g_scalar;

bool check_lane(bool small, double a, double b, double value, double ga, double gb) {
  g_scalar.reset();
  const Graph<bt::Lanes<double, 1>>* unused = nullptr;
  static_cast<void>(unused);
  double v = 0.0;
  double da = 0.0;
  double db = 0.0;
  if (small) {
    const auto n = examples::small_graph(g_scalar, a, b);
    static_cast<void>(g_scalar.backward(n.g));
    v = n.g.value();
    da = n.a.grad();
    db = n.b.grad();
  } else {
    const auto n = examples::tiny_graph(g_scalar, a, b);
    static_cast<void>(g_scalar.backward(n.g));
    v = n.g.value();
    da = n.a.grad();
    db = n.b.grad();
  }
  const auto close = [](double x, double y) { return std::fabs(x - y) <= 1e-12 * std::fabs(y); };
  return close(value, v) && close(ga, da) && close(gb, db);
}

struct Result {
  double sweep_ns;
  bool exact;
};

// flatten: the graph is built inline in the measured loop (as bench_graphs).
template <std::size_t N>
__attribute__((flatten)) Result run(bool small, long iterations, int runs) {
  using S = bt::Lanes<double, N>;
  static bt::FixedTape<S, 64> tape;
  tape.reset();
  const S a = lanes_of<S>(input_a);
  const S b = lanes_of<S>(input_b);
  const Graph<S> graph{small};
  // Correctness: every lane against the scalar tape.
  bool exact = true;
  {
    const auto n = graph.build(tape, a, b);
    exact = (tape.backward(n.g) == bt::Status::kOk);
    for (std::size_t k = 0U; k < N; ++k) {
      exact = exact && check_lane(small, a.lane[k], b.lane[k], n.g.value().lane[k], n.a.grad().lane[k],
                                  n.b.grad().lane[k]);
    }
    tape.reset();
  }
  std::vector<double> times;
  const bt::Mark start = tape.mark();
  double sink = 0.0;
  for (int r = 0; r <= runs; ++r) {  // run 0 warms up
    const double t0 = bench::now_seconds();
    for (long i = 0; i < iterations; ++i) {
      const auto n = graph.build(tape, a, b);
      static_cast<void>(tape.backward(n.g));
      sink += n.a.grad().lane[N - 1U];
      static_cast<void>(tape.rewind(start));
    }
    const double t1 = bench::now_seconds();
    if (r > 0) {
      times.push_back((t1 - t0) * 1e9 / static_cast<double>(iterations));
    }
  }
  g_sink = sink;
  return Result{bench::stats(times).median, exact};
}

__attribute__((flatten)) double run_scalar(bool small, long iterations, int runs) {
  g_scalar.reset();
  std::vector<double> times;
  const bt::Mark start = g_scalar.mark();
  double sink = 0.0;
  for (int r = 0; r <= runs; ++r) {
    const double t0 = bench::now_seconds();
    for (long i = 0; i < iterations; ++i) {
      if (small) {
        const auto n = examples::small_graph(g_scalar, -4.0, 2.0);
        static_cast<void>(g_scalar.backward(n.g));
        sink += n.a.grad();
      } else {
        const auto n = examples::tiny_graph(g_scalar, -41.0, 2.0);
        static_cast<void>(g_scalar.backward(n.g));
        sink += n.a.grad();
      }
      static_cast<void>(g_scalar.rewind(start));
    }
    const double t1 = bench::now_seconds();
    if (r > 0) {
      times.push_back((t1 - t0) * 1e9 / static_cast<double>(iterations));
    }
  }
  g_sink = sink;
  return bench::stats(times).median;
}

// The core's float multiply-add peak: 16 independent accumulators of the
// build's widest register (burtorch::kHardwareLanes floats; more chains than
// the FMA latency times the FMA units of current cores), register-only.
// Median of 9 runs, in 10^9 multiply-adds per second.
constexpr std::size_t kPeakWidth = (bt::kHardwareLanes > 1U) ? bt::kHardwareLanes : 1U;
using PeakVector = bt::detail::VectorOf<float, kPeakWidth>::Type;
constexpr int kPeakChains = 12;

// n rounds of a = a * x + y on twelve accumulators held in registers (no
// call inside the loop: a call would make the compiler keep them in memory).
__attribute__((noinline)) void fma_rounds(PeakVector* acc, const PeakVector& x_in, const PeakVector& y_in, long n) {
  const PeakVector x = x_in;
  const PeakVector y = y_in;
  PeakVector a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], a4 = acc[4], a5 = acc[5];
  PeakVector a6 = acc[6], a7 = acc[7], a8 = acc[8], a9 = acc[9], a10 = acc[10], a11 = acc[11];
  for (long i = 0; i < n; ++i) {
    a0 = (a0 * x) + y;
    a1 = (a1 * x) + y;
    a2 = (a2 * x) + y;
    a3 = (a3 * x) + y;
    a4 = (a4 * x) + y;
    a5 = (a5 * x) + y;
    a6 = (a6 * x) + y;
    a7 = (a7 * x) + y;
    a8 = (a8 * x) + y;
    a9 = (a9 * x) + y;
    a10 = (a10 * x) + y;
    a11 = (a11 * x) + y;
  }
  acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3, acc[4] = a4, acc[5] = a5;
  acc[6] = a6, acc[7] = a7, acc[8] = a8, acc[9] = a9, acc[10] = a10, acc[11] = a11;
}

__attribute__((noinline)) double fma_peak() {
  constexpr long kIterations = 20000000L;
  volatile float seed = 0.999999F;  // not a constant the compiler could fold
  const PeakVector x = PeakVector{} + seed;
  const PeakVector y = PeakVector{} + (1e-7F * seed);
  PeakVector acc[kPeakChains];
  for (int c = 0; c < kPeakChains; ++c) {
    acc[c] = PeakVector{} + (1.0F + (0.1F * static_cast<float>(c)));
  }
  std::vector<double> rates;
  for (int r = 0; r < 9; ++r) {
    const double t0 = bench::now_seconds();
    fma_rounds(acc, x, y, kIterations);
    const double t1 = bench::now_seconds();
    rates.push_back(static_cast<double>(kIterations) * kPeakChains * static_cast<double>(kPeakWidth) / (t1 - t0) / 1e9);
  }
  float lane[kPeakWidth];
  bt::detail::store_vector(lane, acc[0]);
  g_sink = static_cast<double>(lane[0]);
  return bench::stats(rates).median;
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Flags flags(argc, argv);
  const char* const usage = "bench_lanes [--runs R] [--iterations N] [--json] | --isa | --fma-peak";
  if (!flags.check({"--runs", "--iterations"}, {"--json", "--isa", "--fma-peak"}, usage)) {
    std::fprintf(stderr, "usage: %s\n", usage);
    return 2;
  }
  if (flags.has("--fma-peak")) {
    std::printf("{\"bench\":\"fma_peak\",\"lanes\":%zu,\"gmacs\":%.3f}\n", bt::kHardwareLanes, fma_peak());
    return 0;
  }
  if (flags.has("--isa")) {
    std::printf("float: %s, double: %s\n", bt::simd::isa_float(), bt::simd::isa_double());
    return 0;
  }
  const int runs = static_cast<int>(flags.get_long("--runs", 7));
  const long iterations = flags.get_long("--iterations", 20000);
  const bool json = flags.has("--json");
  bool all_exact = true;
  if (!json) {
    std::printf("Lanes<double, N> tapes: ns per sweep (N samples) and per sample; median of %d runs of %ld\n", runs,
                iterations);
  }
  for (int g = 0; g < 2; ++g) {
    const bool small = (g == 1);
    const char* name = small ? "small" : "tiny";
    const double scalar = run_scalar(small, iterations, runs);
    const Result r2 = run<2>(small, iterations, runs);
    const Result r4 = run<4>(small, iterations, runs);
    const Result r8 = run<8>(small, iterations, runs);
    all_exact = all_exact && r2.exact && r4.exact && r8.exact;
    if (json) {
      std::printf("{\"bench\":\"lanes\",\"graph\":\"%s\",\"scalar_ns\":%.3f,\"lanes2_sweep_ns\":%.3f,"
                  "\"lanes4_sweep_ns\":%.3f,\"lanes8_sweep_ns\":%.3f,\"exact\":%s}\n",
                  name, scalar, r2.sweep_ns, r4.sweep_ns, r8.sweep_ns,
                  (r2.exact && r4.exact && r8.exact) ? "true" : "false");
    } else {
      std::printf("  %-5s scalar: %7.1f ns/sample\n", name, scalar);
      const Result* rs[3] = {&r2, &r4, &r8};
      const std::size_t ns[3] = {2U, 4U, 8U};
      for (int k = 0; k < 3; ++k) {
        std::printf("  %-5s N=%zu:   %7.1f ns/sweep, %7.1f ns/sample (%.2fx the scalar tape's throughput)%s\n", name,
                    ns[k], rs[k]->sweep_ns, rs[k]->sweep_ns / static_cast<double>(ns[k]),
                    scalar * static_cast<double>(ns[k]) / rs[k]->sweep_ns, rs[k]->exact ? "" : "  LANES DIFFER");
      }
    }
  }
  return all_exact ? 0 : 1;
}

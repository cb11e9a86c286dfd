// The paper's tiny graph (Fig. 1, 1e5 iterations) and small graph (Fig. 2,
// 2e4 iterations) in FP64: build + backward + rewind per iteration. Prints
// the median of several runs in ns/iteration, plus bytes per node.
// Usage: bench_graphs [--runs N] [--csv]
#include <burtorch/burtorch.hpp>
#include <burtorch/port/port.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "graphs.hpp"

namespace bt = burtorch;

namespace {

bt::FixedTape<double, 64> g_tape;
volatile double g_sink = 0.0;

double now_ns() {
  return static_cast<double>(bt::port::ticks()) * 1e9 / static_cast<double>(bt::port::ticks_per_second());
}

template <class Build>
double run_ns_per_iteration(long iterations, Build build) {
  const bt::Mark start = g_tape.mark();
  double checksum = 0.0;
  const double t0 = now_ns();
  for (long i = 0; i < iterations; ++i) {
    checksum += build();
    static_cast<void>(g_tape.rewind(start));
  }
  const double t1 = now_ns();
  g_sink = checksum;
  return (t1 - t0) / static_cast<double>(iterations);
}

double tiny() {
  const auto n = examples::tiny_graph(g_tape, -41.0, 2.0);
  static_cast<void>(g_tape.backward(n.g));
  return n.a.grad();
}

double small() {
  const auto n = examples::small_graph(g_tape, -4.0, 2.0);
  static_cast<void>(g_tape.backward(n.g));
  return n.a.grad();
}

struct Result {
  double median;
  double p10;
  double p90;
};

template <class Build>
Result measure(int runs, long iterations, Build build) {
  double t[64];
  runs = std::min(runs, 64);
  static_cast<void>(run_ns_per_iteration(iterations / 10, build));  // warm-up
  for (int r = 0; r < runs; ++r) {
    t[r] = run_ns_per_iteration(iterations, build);
  }
  std::sort(t, t + runs);
  return Result{t[runs / 2], t[runs / 10], t[(runs * 9) / 10]};
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 21;
  bool csv = false;
  for (int i = 1; i < argc; ++i) {
    if ((std::strcmp(argv[i], "--runs") == 0) && (i + 1 < argc)) {
      runs = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--csv") == 0) {
      csv = true;
    } else {
      std::fprintf(stderr, "usage: bench_graphs [--runs N] [--csv]\n");
      return 2;
    }
  }
  if (runs < 1) {
    runs = 1;
  }
  const Result t = measure(runs, 100000, tiny);
  const std::size_t tiny_nodes = (static_cast<void>(examples::tiny_graph(g_tape, 1.0, 2.0)), g_tape.size());
  g_tape.reset();
  const Result s = measure(runs, 20000, small);
  const std::size_t small_nodes = (static_cast<void>(examples::small_graph(g_tape, 1.0, 2.0)), g_tape.size());
  const std::size_t small_slots = g_tape.slots_used();
  g_tape.reset();
  // Bytes per node: values, grads, op, two argument indices (+ name pointer).
  const double per_node = static_cast<double>(bt::Tape<double>::bytes_required(1024U, 0U)) / 1024.0;
  if (csv) {
    std::printf("graph,iterations,nodes,median_ns,p10_ns,p90_ns\n");
    std::printf("tiny,100000,%zu,%.2f,%.2f,%.2f\n", tiny_nodes, t.median, t.p10, t.p90);
    std::printf("small,20000,%zu,%.2f,%.2f,%.2f\n", small_nodes, s.median, s.p10, s.p90);
  } else {
    std::printf("FP64, build + backward + rewind, median of %d runs (p10..p90)\n", runs);
    std::printf("  tiny graph  (1e5 iterations, %2zu nodes):           %7.2f ns/iter (%.2f..%.2f)\n", tiny_nodes,
                t.median, t.p10, t.p90);
    std::printf("  small graph (2e4 iterations, %2zu nodes, %zu slots): %7.2f ns/iter (%.2f..%.2f)\n", small_nodes,
                small_slots, s.median, s.p10, s.p90);
    std::printf("  tape bytes per node (FP64, names %s): %.1f; per argument slot: 4\n",
                BURTORCH_CONFIG_PARAM_NAMES ? "on" : "off", per_node);
  }
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
// burtorch-demo: the two graphs of the paper, their gradients, the small
// graph as a Graphviz file, and the time of 100,000 tiny-graph iterations.
#include <burtorch/burtorch.hpp>
#include <burtorch/port/file.hpp>
#include <burtorch/port/port.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "graphs.hpp"

namespace bt = burtorch;

namespace {

bt::FixedTape<double, 64> g_tape;

double time_tiny_graph_ns(int iterations) {
  const bt::Mark start = g_tape.mark();
  double checksum = 0.0;
  const std::uint64_t t0 = bt::port::ticks();
  for (int i = 0; i < iterations; ++i) {
    const auto n = examples::tiny_graph(g_tape, -41.0, 2.0);
    static_cast<void>(g_tape.backward(n.g));
    checksum += n.a.grad();
    static_cast<void>(g_tape.rewind(start));
  }
  const std::uint64_t t1 = bt::port::ticks();
  if (checksum != -35.0 * iterations) {
    std::printf("tiny graph checksum mismatch: %.17g\n", checksum);
  }
  return (static_cast<double>(t1 - t0) * 1e9 / static_cast<double>(bt::port::ticks_per_second())) / iterations;
}

}  // namespace

int main(int argc, char** argv) {
  const char* dot_path = "small_graph.dot";
  constexpr const char* kUsage =
      "usage: burtorch-demo [--dot FILE]\n"
      "Builds the paper's two graphs, prints their values and gradients, and writes the small\n"
      "graph as Graphviz DOT to FILE (default small_graph.dot).\n";
  for (int i = 1; i < argc; ++i) {
    if ((std::strcmp(argv[i], "--help") == 0) || (std::strcmp(argv[i], "-h") == 0)) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if ((std::strcmp(argv[i], "--dot") == 0) && (i + 1 < argc)) {
      dot_path = argv[++i];
    } else {
      std::fputs(kUsage, stderr);
      return 2;
    }
  }

  std::printf("libburtorch demo: eager scalar reverse-mode autodiff on a caller-owned tape\n\n");
  std::printf("Tiny graph (paper Fig. 1): a=-41, b=2, c=a+b, d=a*b+b^3, e=c-d, f=e^2, g=f/2\n");
  const auto t = examples::tiny_graph(g_tape, -41.0, 2.0);
  if (g_tape.backward(t.g) != bt::Status::kOk) {
    std::printf("backward failed: %s\n", bt::status_name(g_tape.status()));
    return 1;
  }
  const bt::Value<double> nodes[] = {t.a, t.b, t.c, t.d, t.e, t.f, t.g};
  const char* names = "abcdefg";
  for (int i = 0; i < 7; ++i) {
    std::printf("  %c = %10g   dg/d%c = %g\n", names[i], nodes[i].value(), names[i], nodes[i].grad());
  }

  g_tape.reset();
  std::printf("\nSmall graph (paper Fig. 2, micrograd): a=-4, b=2\n");
  const auto s = examples::small_graph(g_tape, -4.0, 2.0);
  if (g_tape.backward(s.g) != bt::Status::kOk) {
    std::printf("backward failed: %s\n", bt::status_name(g_tape.status()));
    return 1;
  }
  std::printf("  g = %.17g\n  dg/da = %.17g\n  dg/db = %.17g\n", s.g.value(), s.a.grad(), s.b.grad());
  std::printf("  %zu nodes, %zu argument slots, tape buffer %zu bytes\n", g_tape.size(), g_tape.usage().slots,
              sizeof(g_tape));

  bt::port::FileWriter file;
  bt::Status st = file.open(dot_path, true);
  if (st == bt::Status::kOk) {
    st = bt::write_graphviz(g_tape, s.g, file.sink());
  }
  if (st == bt::Status::kOk) {
    st = file.commit();
  }
  if (st != bt::Status::kOk) {
    std::printf("could not write %s: %s\n", dot_path, bt::status_name(st));
    return 1;
  }
  std::printf("  wrote %s (render: dot -Tpng %s -o small_graph.png)\n", dot_path, dot_path);

  g_tape.reset();
  constexpr int kIterations = 100000;
  double runs[5];
  for (double& r : runs) {
    r = time_tiny_graph_ns(kIterations);
  }
  std::sort(runs, runs + 5);
  std::printf("\nTiny graph, %d iterations of build + backward + rewind (FP64):\n", kIterations);
  std::printf("  median of 5 runs: %.1f ns/iteration (best %.1f, worst %.1f)\n", runs[2], runs[0], runs[4]);
  return 0;
}

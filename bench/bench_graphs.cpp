// SPDX-License-Identifier: Apache-2.0
// The paper's tiny graph (Fig. 1, 1e5 iterations) and small graph (Fig. 2,
// 2e4 iterations) in FP64: build + backward + rewind per iteration. Prints
// the median and p10/p90 of several runs in ns/iteration, plus bytes per
// node.
//
// Usage: bench_graphs [--runs N] [--csv | --json] [--graph tiny|small|both]
//                     [--iterations N] [--count]
//   --json          one JSON line per graph (tools/bench).
//   --iterations N  overrides the paper's iteration count (smoke tests).
//   --count         no timing: runs the selected graph --iterations times
//                   once (for valgrind --tool=callgrind; tools/bench runs it
//                   at two counts and divides the difference).
//   --forward-only  build + rewind without backward: how the iteration's
//                   time splits between recording and the backward sweep
//                   (docs/performance.md).
//   --replay        record the graph once, then per iteration set the two
//                   leaves and replay it (Tape::replay: forward + backward),
//                   with every check of set() and replay() on.
#include <burtorch/burtorch.hpp>
#include <burtorch/port/port.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "bench_util.hpp"
#include "graphs.hpp"

namespace bt = burtorch;

namespace {

bt::FixedTape<double, 64> g_tape;
volatile double g_sink = 0.0;

double now_ns() {
  return static_cast<double>(bt::port::ticks()) * 1e9 / static_cast<double>(bt::port::ticks_per_second());
}

// flatten: the graph is built inline in the measured function, as a hot
// loop in an application would be (otherwise the struct of handles that
// tiny_graph() returns is stored to memory and read back each iteration).
__attribute__((flatten)) double tiny() {
  const auto n = examples::tiny_graph(g_tape, -41.0, 2.0);
  static_cast<void>(g_tape.backward(n.g));
  return n.a.grad();
}

__attribute__((flatten)) double small() {
  const auto n = examples::small_graph(g_tape, -4.0, 2.0);
  static_cast<void>(g_tape.backward(n.g));
  return n.a.grad();
}

// Replay: the graph recorded once (record_once), then per iteration the
// leaves' new values and a replay.
examples::TinyGraph<double> g_tiny_rec;
examples::SmallGraph<double> g_small_rec;
bt::Replay g_replay;

void record_once(bool tiny_graph) {
  g_tape.reset();
  const bt::Mark start = g_tape.mark();
  if (tiny_graph) {
    g_tiny_rec = examples::tiny_graph(g_tape, 1.0, 1.0);
    g_replay = bt::replayable(g_tape, start, g_tiny_rec.g);
  } else {
    g_small_rec = examples::small_graph(g_tape, 1.0, 1.0);
    g_replay = bt::replayable(g_tape, start, g_small_rec.g);
  }
}

__attribute__((flatten)) double tiny_replay() {
  static_cast<void>(bt::set_value(g_tape, g_tiny_rec.a, -41.0));
  static_cast<void>(bt::set_value(g_tape, g_tiny_rec.b, 2.0));
  static_cast<void>(bt::replay(g_tape, g_replay));
  return g_tiny_rec.a.grad();  // replay cleared the recording's gradients, its leaves' too
}

__attribute__((flatten)) double small_replay() {
  static_cast<void>(bt::set_value(g_tape, g_small_rec.a, -4.0));
  static_cast<void>(bt::set_value(g_tape, g_small_rec.b, 2.0));
  static_cast<void>(bt::replay(g_tape, g_replay));
  return g_small_rec.a.grad();
}

// The same graphs without backward: return the root's value.
__attribute__((flatten)) double tiny_forward() { return examples::tiny_graph(g_tape, -41.0, 2.0).g.value(); }

__attribute__((flatten)) double small_forward() { return examples::small_graph(g_tape, -4.0, 2.0).g.value(); }

// Runs `iterations` build + backward + rewind cycles; returns the checksum
// of dg/da (so nothing is optimized away).
template <class Build>
__attribute__((noinline)) double loop(long iterations, Build build) {
  const bt::Mark start = g_tape.mark();
  double checksum = 0.0;
  for (long i = 0; i < iterations; ++i) {
    checksum += build();
    static_cast<void>(g_tape.rewind(start));
  }
  return checksum;
}

// The replay loop: no rewind (the recording stays).
template <class Build>
__attribute__((noinline)) double replay_loop(long iterations, Build build) {
  double checksum = 0.0;
  for (long i = 0; i < iterations; ++i) {
    checksum += build();
  }
  return checksum;
}

template <class Build>
double run_ns_per_iteration(long iterations, Build build) {
  const double t0 = now_ns();
  g_sink = loop(iterations, build);
  const double t1 = now_ns();
  return (t1 - t0) / static_cast<double>(iterations);
}

struct Result {
  bench::Stats stats;
  std::vector<double> samples;  // ns/iteration of each run, in run order
};

template <class Build>
Result measure(int runs, long iterations, Build build) {
  Result out;
  static_cast<void>(run_ns_per_iteration(std::max(1L, iterations / 10), build));  // warm-up
  for (int r = 0; r < runs; ++r) {
    out.samples.push_back(run_ns_per_iteration(iterations, build));
  }
  out.stats = bench::stats(out.samples);
  return out;
}

void print_json(const char* graph, long iterations, std::size_t nodes, const Result& r) {
  std::printf("{\"bench\":\"%s\",\"impl\":\"burtorch\",\"iterations\":%ld,\"nodes\":%zu,\"runs\":%zu,"
              "\"median_ns\":%.3f,\"p10_ns\":%.3f,\"p90_ns\":%.3f",
              graph, iterations, nodes, r.samples.size(), r.stats.median, r.stats.p10, r.stats.p90);
  bench::end_json(r.samples, 3);
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Flags flags(argc, argv);
  const char* graph = flags.get("--graph", "both");
  const bool want_tiny = (std::strcmp(graph, "tiny") == 0) || (std::strcmp(graph, "both") == 0);
  const bool want_small = (std::strcmp(graph, "small") == 0) || (std::strcmp(graph, "both") == 0);
  const char* const usage =
      "bench_graphs [--runs N] [--csv | --json] [--graph tiny|small|both] [--iterations N] [--count] "
      "[--forward-only] [--replay]";
  if (!flags.check({"--runs", "--iterations", "--graph"}, {"--csv", "--json", "--count", "--forward-only", "--replay"},
                   usage) ||
      (!want_tiny && !want_small)) {
    std::fprintf(stderr, "usage: %s\n", usage);
    return 2;
  }
  int runs = static_cast<int>(flags.get_long("--runs", 21));
  const bool csv = flags.has("--csv");
  const bool json = flags.has("--json");
  const bool count_only = flags.has("--count");
  const bool forward_only = flags.has("--forward-only");
  const bool replay = flags.has("--replay");
  const long iterations = flags.get_long("--iterations", 0);  // 0: the paper's counts
  runs = std::max(runs, 1);
  const long tiny_iterations = (iterations > 0) ? iterations : 100000L;
  const long small_iterations = (iterations > 0) ? iterations : 20000L;

  // Correctness first: a benchmark of wrong numbers is worthless.
  // Paper Fig. 1 closed form: g = 612.5, dg/da = -35; Fig. 2: the README's values.
  const bool tiny_ok = forward_only ? (tiny_forward() == 612.5) : (tiny() == -35.0);
  g_tape.reset();
  const bool small_ok = forward_only ? (small_forward() == 24.70408163265306) : (small() == 138.83381924198252);
  g_tape.reset();
  if (replay) {
    // The same closed forms from a replay of a graph recorded at other values.
    record_once(true);
    const bool tiny_replay_ok = tiny_replay() == -35.0;
    record_once(false);
    const bool small_replay_ok = small_replay() == 138.83381924198252;
    g_tape.reset();
    if (!tiny_replay_ok || !small_replay_ok) {
      std::fprintf(stderr, "bench_graphs: wrong gradient from replay (tiny %s, small %s)\n",
                   tiny_replay_ok ? "ok" : "WRONG", small_replay_ok ? "ok" : "WRONG");
      return 1;
    }
    if (count_only) {
      double sum = 0.0;
      if (want_tiny) {
        record_once(true);
        sum += replay_loop(tiny_iterations, tiny_replay);
      }
      if (want_small) {
        record_once(false);
        sum += replay_loop(small_iterations, small_replay);
      }
      g_tape.reset();
      g_sink = sum;
      return 0;
    }
    std::fprintf(stderr, "bench_graphs: --replay only with --count (instruction counts)\n");
    return 2;
  }
  if (!tiny_ok || !small_ok) {
    std::fprintf(stderr, "bench_graphs: wrong gradient (tiny %s, small %s)\n", tiny_ok ? "ok" : "WRONG",
                 small_ok ? "ok" : "WRONG");
    return 1;
  }

  if (count_only) {
    double sum = 0.0;
    if (want_tiny) {
      sum += loop(tiny_iterations, forward_only ? tiny_forward : tiny);
      g_tape.reset();
    }
    if (want_small) {
      sum += loop(small_iterations, forward_only ? small_forward : small);
      g_tape.reset();
    }
    g_sink = sum;
    return 0;
  }

  Result t;
  Result s;
  std::size_t tiny_nodes = 0U;
  std::size_t small_nodes = 0U;
  std::size_t small_slots = 0U;
  if (want_tiny) {
    t = measure(runs, tiny_iterations, forward_only ? tiny_forward : tiny);
    tiny_nodes = (static_cast<void>(examples::tiny_graph(g_tape, 1.0, 2.0)), g_tape.size());
    g_tape.reset();
  }
  if (want_small) {
    s = measure(runs, small_iterations, forward_only ? small_forward : small);
    small_nodes = (static_cast<void>(examples::small_graph(g_tape, 1.0, 2.0)), g_tape.size());
    small_slots = g_tape.usage().slots;
    g_tape.reset();
  }
  // Bytes per node: values, grads, op, two argument indices (+ name pointer).
  const double per_node = static_cast<double>(bt::Tape<double>::bytes_required(1024U, 0U)) / 1024.0;
  if (json) {
    if (want_tiny) {
      print_json("tiny", tiny_iterations, tiny_nodes, t);
    }
    if (want_small) {
      print_json("small", small_iterations, small_nodes, s);
    }
  } else if (csv) {
    std::printf("graph,iterations,nodes,median_ns,p10_ns,p90_ns,runs\n");
    if (want_tiny) {
      std::printf("tiny,%ld,%zu,%.3f,%.3f,%.3f,%d\n", tiny_iterations, tiny_nodes, t.stats.median, t.stats.p10, t.stats.p90, runs);
    }
    if (want_small) {
      std::printf("small,%ld,%zu,%.3f,%.3f,%.3f,%d\n", small_iterations, small_nodes, s.stats.median, s.stats.p10, s.stats.p90, runs);
    }
  } else {
    std::printf("FP64, build + %srewind, median of %d runs (p10..p90)\n", forward_only ? "" : "backward + ", runs);
    if (want_tiny) {
      std::printf("  tiny graph  (%ld iterations, %2zu nodes):           %7.2f ns/iter (%.2f..%.2f)\n",
                  tiny_iterations, tiny_nodes, t.stats.median, t.stats.p10, t.stats.p90);
    }
    if (want_small) {
      std::printf("  small graph (%ld iterations, %2zu nodes, %zu slots): %7.2f ns/iter (%.2f..%.2f)\n",
                  small_iterations, small_nodes, small_slots, s.stats.median, s.stats.p10, s.stats.p90);
    }
    std::printf("  tape bytes per node (FP64, names %s): %.1f; per argument slot: 4\n",
                BURTORCH_CONFIG_PARAM_NAMES ? "on" : "off", per_node);
  }
  return 0;
}

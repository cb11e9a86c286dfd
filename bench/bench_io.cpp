// SPDX-License-Identifier: Apache-2.0
// Save and load of the small graph's values (paper Table 4): the first 7
// nodes of the small graph (FP64) written to a file as a checkpoint
// (burtorch/tools/checkpoint.hpp: header, one section, CRC-32) and read back,
// 5,000 iterations. No fsync (torch.save does not sync either).
//
// Usage: bench_io --file PATH [--iterations N] [--runs R]
// Prints READY, then one JSON line: save, load and save+load per iteration.
#include <burtorch/burtorch.hpp>
#include <burtorch/tools/checkpoint.hpp>
#include <burtorch/port/file.hpp>

#include <cstdio>
#include <vector>

#include "bench_util.hpp"
#include "graphs.hpp"

namespace bt = burtorch;

namespace {

bt::FixedTape<double, 64> g_tape;
constexpr bt::Index kValues = 7U;

bool save(const char* path) {
  bt::port::FileWriter w;
  return (w.open(path, false) == bt::Status::kOk) &&
         (bt::save_nodes(g_tape, 0U, kValues, false, w.sink()) == bt::Status::kOk);
}

bool load(const char* path) {
  bt::port::FileReader r;
  double scratch[kValues];
  return (r.open(path) == bt::Status::kOk) &&
         (bt::load_nodes(g_tape, 0U, kValues, false, r.source(), scratch, sizeof(scratch)) == bt::Status::kOk);
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Flags flags(argc, argv);
  const char* const usage = "bench_io --file PATH [--iterations N] [--runs R]";
  if (!flags.check({"--file", "--iterations", "--runs"}, {}, usage)) {
    std::fprintf(stderr, "usage: %s\n", usage);
    return 2;
  }
  const char* path = flags.get("--file", "bench_io.btck");
  const long iterations = flags.get_long("--iterations", 5000);
  const long runs = flags.get_long("--runs", 5);
  static_cast<void>(examples::small_graph(g_tape, -4.0, 2.0));
  const double expected = g_tape.value(6U);
  bench::ready();
  std::vector<double> save_us;
  std::vector<double> load_us;
  std::vector<double> both_us;
  for (long r = 0; r < runs; ++r) {
    double t_save = 0.0;
    double t_load = 0.0;
    for (long i = 0; i < iterations; ++i) {
      const double t0 = bench::now_seconds();
      const bool saved = save(path);
      const double t1 = bench::now_seconds();
      g_tape.values()[6] = 0.0;
      const bool loaded = load(path);
      const double t2 = bench::now_seconds();
      if (!saved || !loaded || (g_tape.value(6U) != expected)) {
        std::fprintf(stderr, "bench_io: save/load failed at iteration %ld\n", i);
        return 1;
      }
      t_save += t1 - t0;
      t_load += t2 - t1;
    }
    save_us.push_back(t_save * 1e6 / static_cast<double>(iterations));
    load_us.push_back(t_load * 1e6 / static_cast<double>(iterations));
    both_us.push_back((t_save + t_load) * 1e6 / static_cast<double>(iterations));
  }
  std::remove(path);
  const bench::Stats s = bench::stats(save_us);
  const bench::Stats l = bench::stats(load_us);
  const bench::Stats b = bench::stats(both_us);
  std::printf(
      "{\"bench\":\"io\",\"impl\":\"burtorch\",\"iterations\":%ld,\"runs\":%ld,\"values\":%u,"
      "\"save_us\":%.4f,\"load_us\":%.4f,\"median_us\":%.4f,\"p10_us\":%.4f,\"p90_us\":%.4f,\"file_bytes\":%zu",
      iterations, runs, kValues, s.median, l.median, b.median, b.p10, b.p90,
      static_cast<std::size_t>(bt::checkpoint_overhead(1U) + kValues * sizeof(double)));
  bench::end_json(both_us);
  return 0;
}

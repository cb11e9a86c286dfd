// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the benchmark programs (host only): wall clock through
// the port layer, order statistics, flag parsing, the data files of
// ../shared/data, and one JSON line per result for tools/bench.
#ifndef BURTORCH_BENCH_UTIL_HPP
#define BURTORCH_BENCH_UTIL_HPP

#include <burtorch/port/port.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace bench {

inline double now_seconds() {
  return static_cast<double>(burtorch::port::ticks()) / static_cast<double>(burtorch::port::ticks_per_second());
}

struct Stats {
  double median = 0.0;
  double p10 = 0.0;
  double p90 = 0.0;
  double mean = 0.0;
};

// Median and 10th/90th percentiles (nearest rank) of the samples.
inline Stats stats(std::vector<double> v) {
  Stats s;
  if (v.empty()) {
    return s;
  }
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  s.median = (n % 2U == 1U) ? v[n / 2U] : 0.5 * (v[n / 2U - 1U] + v[n / 2U]);
  s.p10 = v[(n - 1U) / 10U];
  s.p90 = v[((n - 1U) * 9U + 9U) / 10U];
  double sum = 0.0;
  for (double x : v) {
    sum += x;
  }
  s.mean = sum / static_cast<double>(n);
  return s;
}

// --name value flags; every flag must be known.
class Flags {
 public:
  Flags(int argc, char** argv) : argc_(argc), argv_(argv) {}
  bool has(const char* name) const {
    for (int i = 1; i < argc_; ++i) {
      if (std::strcmp(argv_[i], name) == 0) {
        return true;
      }
    }
    return false;
  }
  const char* get(const char* name, const char* fallback) const {
    for (int i = 1; i + 1 < argc_; ++i) {
      if (std::strcmp(argv_[i], name) == 0) {
        return argv_[i + 1];
      }
    }
    return fallback;
  }
  long get_long(const char* name, long fallback) const {
    const char* v = get(name, nullptr);
    return (v != nullptr) ? std::atol(v) : fallback;
  }
  double get_double(const char* name, double fallback) const {
    const char* v = get(name, nullptr);
    return (v != nullptr) ? std::atof(v) : fallback;
  }
  // Fails (returns false) if an argument is not one of `known` (flags with
  // a value) or `switches` (flags without one). --help or -h: prints
  // "usage: <usage>" on stdout and exits 0.
  bool check(const std::vector<std::string>& known, const std::vector<std::string>& switches,
             const char* usage) const {
    for (int i = 1; i < argc_; ++i) {
      const std::string a = argv_[i];
      if ((a == "--help") || (a == "-h")) {
        std::printf("usage: %s\n", usage);
        std::exit(0);
      }
      if (std::find(switches.begin(), switches.end(), a) != switches.end()) {
        continue;
      }
      if ((std::find(known.begin(), known.end(), a) != known.end()) && (i + 1 < argc_)) {
        ++i;
        continue;
      }
      std::fprintf(stderr, "unknown or incomplete flag: %s\n", a.c_str());
      return false;
    }
    return true;
  }

 private:
  int argc_;
  char** argv_;
};

inline bool read_file(const std::string& path, std::string& out) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return false;
  }
  // Reserve the file's size: no doubling growth, no second copy.
  if ((std::fseek(f, 0, SEEK_END) == 0)) {
    const long size = std::ftell(f);
    if (size > 0) {
      out.reserve(static_cast<std::size_t>(size));
    }
    std::rewind(f);
  }
  char buffer[65536];
  std::size_t n = 0U;
  while ((n = std::fread(buffer, 1U, sizeof(buffer), f)) > 0U) {
    out.append(buffer, n);
  }
  std::fclose(f);
  return true;
}

// xorshift64*: the benchmarks' own batch sampler (independent of the
// library's Rng so that both sides of a benchmark draw the same way).
class Sampler {
 public:
  explicit Sampler(std::uint64_t seed) : s_((seed == 0U) ? 0x9E3779B97F4A7C15ULL : seed) {}
  std::uint32_t below(std::uint32_t n) {
    s_ ^= s_ >> 12U;
    s_ ^= s_ << 25U;
    s_ ^= s_ >> 27U;
    return static_cast<std::uint32_t>(((s_ * 0x2545F4914F6CDD1DULL) >> 32U) % n);
  }

 private:
  std::uint64_t s_;
};

// Peak resident set size of this process in bytes (VmHWM of
// /proc/self/status: the high-water mark of this program's own memory,
// unlike the ru_maxrss a parent sees, which includes the parent's memory
// at fork time). 0 where /proc is missing.
inline std::size_t peak_rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) {
    return 0U;
  }
  char line[256];
  std::size_t kb = 0U;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, "VmHWM:", 6) == 0) {
      kb = static_cast<std::size_t>(std::strtoull(line + 6, nullptr, 10));
    }
  }
  std::fclose(f);
  return kb * 1024U;
}

// Ends a JSON object whose fields were printed: ,"peak_rss_bytes":N,
// "samples":[...]} and a newline (tools/bench pools the samples of all runs).
// Samples print as %.6g, or with `decimals` digits after the point if
// decimals >= 0.
inline void end_json(const std::vector<double>& samples, int decimals = -1) {
  std::printf(",\"peak_rss_bytes\":%zu,\"samples\":[", peak_rss_bytes());
  for (std::size_t i = 0U; i < samples.size(); ++i) {
    const char* comma = (i == 0U) ? "" : ",";
    if (decimals >= 0) {
      std::printf("%s%.*f", comma, decimals, samples[i]);
    } else {
      std::printf("%s%.6g", comma, samples[i]);
    }
  }
  std::printf("]}\n");
}

// Tells tools/bench that initialisation is over (it timestamps this line).
inline void ready() {
  std::printf("READY\n");
  std::fflush(stdout);
}

}  // namespace bench

#endif  // BURTORCH_BENCH_UTIL_HPP

// SPDX-License-Identifier: Apache-2.0
// A user's own program on burtorch::port_mpi (the package's `mpi`
// component): it averages its own arrays across the ranks of a job and
// checks what comes back. Built in the tree (ctest mpi_reduce_np*, label
// distributed) and against the installed package (tools/check.d/
// 55-distributed.sh: find_package(burtorch COMPONENTS mpi), and pkg-config
// burtorch-mpi). Checks, for FP32 and FP64 and array lengths from 1 to more
// than the ranks times a chunk:
//  * average() gives, on every rank, exactly the bits of the oracle: every
//    rank's array (each rank can make every rank's values) added in rank
//    order 0, 1, ..., N-1 and divided by N, computed here without MPI;
//  * average_at_root() (rank 0 gathers) gives the same bits;
//  * average() twice on the same input gives the same bits;
//  * average_mpi() (MPI_Allreduce: the library's order) is within epsilon
//    times the sum of the N values' magnitudes of the oracle (two orders of
//    N - 1 additions and a division by N differ by at most that);
//  * the bytes average() sends are average_bytes(), at most
//    2 (N - 1) ceil(n / N) values on every rank (about 2 n (N - 1) / N: rank
//    0's share does not grow with the job);
//  * broadcast() of FP32 and FP64 copies rank 0's array.
// Prints one line per rank and "N passed, N failed" on rank 0.
#include <burtorch/port/mpi.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

namespace bt = burtorch;
namespace mpi = burtorch::port::mpi;

namespace {

// Rank r's value i: a SplitMix64 draw, magnitudes over 2^-10 to 2^10.
double draw(int rank, std::size_t i) {
  std::uint64_t z = (static_cast<std::uint64_t>(rank) << 40U) ^ (i * 0x9E3779B97F4A7C15ULL) ^ 0xB5EEDULL;
  z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
  z ^= (z >> 31U);
  const double unit = static_cast<double>(z >> 11U) / 9007199254740992.0;  // [0, 1)
  const int exponent = static_cast<int>((z >> 3U) % 21U) - 10;
  return std::ldexp((unit * 2.0) - 1.0, exponent);
}

int g_passed = 0;
int g_failed = 0;
void check(bool ok, const char* what, int rank, std::size_t n) {
  if (ok) {
    ++g_passed;
  } else {
    ++g_failed;
    std::fprintf(stderr, "FAIL: rank %d, n %zu: %s\n", rank, n, what);
  }
}

template <class T>
void check_average(int rank, int ranks, std::size_t n) {
  std::vector<T> a(n);
  std::vector<T> b(n);
  std::vector<T> c(n);
  std::vector<T> again(n);
  std::vector<T> want(n);
  for (std::size_t i = 0U; i < n; ++i) {
    a[i] = static_cast<T>(draw(rank, i));
    T sum = static_cast<T>(draw(0, i));
    for (int q = 1; q < ranks; ++q) {
      sum += static_cast<T>(draw(q, i));
    }
    want[i] = sum / static_cast<T>(ranks);
  }
  b = a;
  c = a;
  again = a;
  const std::size_t root_scratch = n * static_cast<std::size_t>(ranks);
  std::vector<T> scratch(std::max(mpi::average_scratch(n, ranks), root_scratch));
  // Too small a scratch: refused before any message, data untouched.
  std::vector<T> copy = a;
  check(mpi::average(copy.data(), n, scratch.data(), mpi::average_scratch(n, ranks) - 1U) ==
            bt::Status::kCapacityExceeded && (copy == a),
        "a short scratch is refused", rank, n);
  const std::uint64_t before = mpi::bytes_sent();
  check(mpi::average(a.data(), n, scratch.data(), scratch.size()) == bt::Status::kOk, "average", rank, n);
  const std::uint64_t sent = mpi::bytes_sent() - before;
  check(sent == mpi::average_bytes(n, sizeof(T), ranks, rank), "bytes sent are average_bytes()", rank, n);
  const std::size_t chunk = (n + static_cast<std::size_t>(ranks) - 1U) / static_cast<std::size_t>(ranks);
  check(sent <= 2U * static_cast<std::size_t>(ranks - 1) * chunk * sizeof(T), "at most 2 (N - 1) ceil(n / N) values sent",
        rank, n);
  check(std::memcmp(a.data(), want.data(), n * sizeof(T)) == 0, "average is the rank-order oracle", rank, n);
  check(mpi::average(again.data(), n, scratch.data(), scratch.size()) == bt::Status::kOk &&
            (std::memcmp(again.data(), a.data(), n * sizeof(T)) == 0),
        "average twice: the same bits", rank, n);
  check(mpi::average_at_root(b.data(), n, scratch.data(), scratch.size()) == bt::Status::kOk &&
            (std::memcmp(b.data(), a.data(), n * sizeof(T)) == 0),
        "average_at_root: the same bits", rank, n);
  check(mpi::average_mpi(c.data(), n, scratch.data(), scratch.size()) == bt::Status::kOk, "average_mpi", rank, n);
  bool close = true;
  for (std::size_t i = 0U; i < n; ++i) {
    T magnitude = T(0);
    for (int q = 0; q < ranks; ++q) {
      magnitude += static_cast<T>(std::fabs(draw(q, i)));
    }
    const T bound = std::numeric_limits<T>::epsilon() * magnitude;
    close = close && (std::fabs(c[i] - want[i]) <= bound);
  }
  check(close, "average_mpi within epsilon times the magnitudes", rank, n);
}

template <class T>
void check_broadcast(int rank, std::size_t n) {
  std::vector<T> v(n, T(0));
  for (std::size_t i = 0U; i < n; ++i) {
    v[i] = (rank == 0) ? static_cast<T>(draw(0, i)) : T(0);
  }
  check(mpi::broadcast(v.data(), n) == bt::Status::kOk, "broadcast", rank, n);
  bool same = true;
  for (std::size_t i = 0U; i < n; ++i) {
    same = same && (v[i] == static_cast<T>(draw(0, i)));
  }
  check(same, "broadcast copies rank 0's array", rank, n);
}

}  // namespace

int main(int argc, char** argv) {
  if ((argc > 1) && ((std::strcmp(argv[1], "--help") == 0) || (std::strcmp(argv[1], "-h") == 0))) {
    std::printf("usage: mpirun -np N %s\n"
                "Averages FP32 and FP64 arrays over the job's ranks with burtorch::port_mpi and checks\n"
                "the results against a rank-order oracle; prints 'N passed, N failed' on rank 0.\n",
                argv[0]);
    return 0;
  }
  if (argc > 1) {
    std::fprintf(stderr, "mpi_reduce: unknown option '%s' (see --help)\n", argv[1]);
    return 2;
  }
  int rank = 0;
  int ranks = 1;
  if (mpi::init(&rank, &ranks) != bt::Status::kOk) {
    std::fprintf(stderr, "mpi_reduce: MPI did not start\n");
    return 2;
  }
  for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{5}, std::size_t{64},
                              std::size_t{1001}}) {
    check_average<float>(rank, ranks, n);
    check_average<double>(rank, ranks, n);
    check_broadcast<float>(rank, n);
    check_broadcast<double>(rank, n);
  }
  const std::uint64_t per_step = mpi::average_bytes(1001U, sizeof(double), ranks, rank);
  std::printf("mpi_reduce: rank %d of %d: %d checks, %d failed; average of 1001 FP64 values sends %llu bytes here\n",
              rank, ranks, g_passed + g_failed, g_failed, static_cast<unsigned long long>(per_step));
  std::fflush(stdout);
  // Every rank's verdict: the job fails if any rank did.
  double verdict[2] = {static_cast<double>(g_passed), static_cast<double>(g_failed)};
  double scratch[2] = {};
  const bool summed = mpi::average_mpi(verdict, 2U, scratch, 2U) == bt::Status::kOk;
  const long passed = std::lround(verdict[0] * ranks);
  const long failed = summed ? std::lround(verdict[1] * ranks) : 1L;
  if (rank == 0) {
    std::printf("%ld passed, %ld failed\n", passed, failed);
  }
  mpi::finalize();
  return (failed == 0L) ? 0 : 1;
}

// SPDX-License-Identifier: Apache-2.0
// burtorch::port_mpi: averaging arrays across MPI ranks in a fixed order
// (burtorch/port/mpi.hpp). Point-to-point messages only (but for
// average_mpi() and broadcast()), so the bytes each rank sends are the ones
// counted and the order of the additions is this file's, not the MPI
// library's choice of collective algorithm.
#include "burtorch/port/mpi.hpp"

// The C API only: Open MPI's C++ bindings are deprecated and need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdlib>
#include <ctime>

namespace burtorch {
namespace port {
namespace mpi {
namespace {

std::uint64_t g_bytes_sent = 0U;  // the port may keep state; the library may not
constexpr int kTagUp = 2801;
constexpr int kTagDown = 2802;
constexpr int kTagFrame = 2803;
constexpr int kTagScatter = 2804;
constexpr int kTagGather = 2805;
constexpr std::size_t kMaxCount = 0x7FFFFFFF;  // INT_MAX: an MPI count

template <class T>
MPI_Datatype type_of() noexcept;
template <>
MPI_Datatype type_of<double>() noexcept {
  return MPI_DOUBLE;
}
template <>
MPI_Datatype type_of<float>() noexcept {
  return MPI_FLOAT;
}

// The chunks of an array of n values over `ranks` ranks: chunk c is
// [first(c), first(c) + count(c)), ceil(n / ranks) values but the last
// ones (which may be empty).
struct Chunks {
  std::size_t n;
  std::size_t ranks;
  std::size_t size;  // ceil(n / ranks)
  std::size_t first(std::size_t c) const noexcept {
    const std::size_t at = c * size;
    return (at < n) ? at : n;
  }
  std::size_t count(std::size_t c) const noexcept {
    const std::size_t end = first(c) + size;
    return ((end < n) ? end : n) - first(c);
  }
};

Chunks chunks_of(std::size_t n, std::size_t ranks) noexcept { return Chunks{n, ranks, (n + ranks - 1U) / ranks}; }

// Checks the arguments, reads rank and size.
template <class T>
Status start(const T* data, std::size_t n, int* rank, int* size) noexcept {
  if ((data == nullptr) || (n == 0U) || (n > kMaxCount)) {
    return Status::kInvalidArgument;
  }
  if ((MPI_Comm_rank(MPI_COMM_WORLD, rank) != MPI_SUCCESS) || (MPI_Comm_size(MPI_COMM_WORLD, size) != MPI_SUCCESS)) {
    return Status::kIoError;
  }
  return Status::kOk;
}

// Reduce-scatter, then all-gather (see the header). Rank r keeps rank q's
// copy of chunk r in rows[q * size, ...) and the mean in result[0, n).
template <class T>
Status scatter_average(T* data, std::size_t n, T* scratch, std::size_t scratch_count) noexcept {
  int rank = 0;
  int size = 1;
  const Status started = start(data, n, &rank, &size);
  if (started != Status::kOk) {
    return started;
  }
  const std::size_t ranks = static_cast<std::size_t>(size);
  const std::size_t me = static_cast<std::size_t>(rank);
  const Chunks c = chunks_of(n, ranks);
  if ((scratch == nullptr) || (scratch_count < average_scratch(n, size))) {
    return Status::kCapacityExceeded;
  }
  const MPI_Datatype type = type_of<T>();
  T* rows = scratch;
  T* result = scratch + (ranks * c.size);
  const std::size_t mine = c.first(me);
  const std::size_t mine_count = c.count(me);
  for (std::size_t j = 0U; j < mine_count; ++j) {
    rows[(me * c.size) + j] = data[mine + j];
  }
  // Step s: my copy of chunk (r + s) to its rank; rank (r - s)'s copy of mine.
  for (std::size_t s = 1U; s < ranks; ++s) {
    const std::size_t to = (me + s) % ranks;
    const std::size_t from = (me + ranks - s) % ranks;
    if (MPI_Sendrecv(data + c.first(to), static_cast<int>(c.count(to)), type, static_cast<int>(to), kTagScatter,
                     rows + (from * c.size), static_cast<int>(mine_count), type, static_cast<int>(from), kTagScatter,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      return Status::kIoError;
    }
    g_bytes_sent += static_cast<std::uint64_t>(c.count(to)) * sizeof(T);
  }
  // Sum in rank order, then one division by N (exact for N = 1).
  const T divisor = static_cast<T>(size);
  for (std::size_t j = 0U; j < mine_count; ++j) {
    T sum = rows[j];
    for (std::size_t q = 1U; q < ranks; ++q) {
      sum += rows[(q * c.size) + j];
    }
    result[mine + j] = sum / divisor;
  }
  // Step s: my finished chunk to rank r + s; rank (r - s)'s from it.
  for (std::size_t s = 1U; s < ranks; ++s) {
    const std::size_t to = (me + s) % ranks;
    const std::size_t from = (me + ranks - s) % ranks;
    if (MPI_Sendrecv(result + mine, static_cast<int>(mine_count), type, static_cast<int>(to), kTagGather,
                     result + c.first(from), static_cast<int>(c.count(from)), type, static_cast<int>(from), kTagGather,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      return Status::kIoError;
    }
    g_bytes_sent += static_cast<std::uint64_t>(mine_count) * sizeof(T);
  }
  for (std::size_t i = 0U; i < n; ++i) {
    data[i] = result[i];
  }
  return Status::kOk;
}

template <class T>
Status mpi_average(T* data, std::size_t n, T* scratch, std::size_t scratch_count) noexcept {
  int rank = 0;
  int size = 1;
  const Status started = start(data, n, &rank, &size);
  if (started != Status::kOk) {
    return started;
  }
  if ((scratch == nullptr) || (scratch_count < n)) {
    return Status::kCapacityExceeded;
  }
  if (MPI_Allreduce(data, scratch, static_cast<int>(n), type_of<T>(), MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) {
    return Status::kIoError;
  }
  const T divisor = static_cast<T>(size);
  for (std::size_t i = 0U; i < n; ++i) {
    data[i] = scratch[i] / divisor;
  }
  return Status::kOk;
}

template <class T>
Status broadcast_impl(T* data, std::size_t n) noexcept {
  if ((data == nullptr) || (n == 0U) || (n > kMaxCount)) {
    return Status::kInvalidArgument;
  }
  return (MPI_Bcast(data, static_cast<int>(n), type_of<T>(), 0, MPI_COMM_WORLD) == MPI_SUCCESS) ? Status::kOk
                                                                                              : Status::kIoError;
}

// The former scheme: rank 0 gathers, adds in rank order, sends back.
template <class T>
Status average_impl(T* data, std::size_t n, T* scratch, std::size_t scratch_count) noexcept {
  int rank = 0;
  int size = 1;
  if ((data == nullptr) || (n == 0U) || (n > static_cast<std::size_t>(0x7FFFFFFF))) {
    return Status::kInvalidArgument;
  }
  if ((MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS) || (MPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS)) {
    return Status::kIoError;
  }
  const int count = static_cast<int>(n);
  const MPI_Datatype type = type_of<T>();
  const std::size_t ranks = static_cast<std::size_t>(size);
  const std::size_t needed = (rank == 0) ? ranks : 1U;
  if ((scratch == nullptr) || ((scratch_count / needed) < n)) {
    return Status::kCapacityExceeded;
  }
  if (rank != 0) {
    if (MPI_Send(data, count, type, 0, kTagUp, MPI_COMM_WORLD) != MPI_SUCCESS) {
      return Status::kIoError;
    }
    g_bytes_sent += static_cast<std::uint64_t>(n) * sizeof(T);
    // Into scratch: data is replaced only when the whole result has arrived.
    if (MPI_Recv(scratch, count, type, 0, kTagDown, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      return Status::kIoError;
    }
    for (std::size_t i = 0U; i < n; ++i) {
      data[i] = scratch[i];
    }
    return Status::kOk;
  }
  for (std::size_t i = 0U; i < n; ++i) {
    scratch[i] = data[i];
  }
  for (int r = 1; r < size; ++r) {
    T* row = scratch + (static_cast<std::size_t>(r) * n);
    if (MPI_Recv(row, count, type, r, kTagUp, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      return Status::kIoError;
    }
  }
  // Sum in rank order, then one division by N (exact for N = 1).
  const T divisor = static_cast<T>(size);
  for (std::size_t i = 0U; i < n; ++i) {
    T sum = scratch[i];
    for (std::size_t r = 1U; r < ranks; ++r) {
      sum += scratch[(r * n) + i];
    }
    scratch[i] = sum / divisor;
  }
  for (int r = 1; r < size; ++r) {
    if (MPI_Send(scratch, count, type, r, kTagDown, MPI_COMM_WORLD) != MPI_SUCCESS) {
      return Status::kIoError;
    }
    g_bytes_sent += static_cast<std::uint64_t>(n) * sizeof(T);
  }
  for (std::size_t i = 0U; i < n; ++i) {
    data[i] = scratch[i];
  }
  return Status::kOk;
}

}  // namespace

Status init(int* rank, int* size) noexcept {
  if ((rank == nullptr) || (size == nullptr)) {
    return Status::kInvalidArgument;
  }
  int r = 0;
  int s = 0;
  if ((MPI_Init(nullptr, nullptr) != MPI_SUCCESS) ||
      (MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) != MPI_SUCCESS) ||
      (MPI_Comm_rank(MPI_COMM_WORLD, &r) != MPI_SUCCESS) || (MPI_Comm_size(MPI_COMM_WORLD, &s) != MPI_SUCCESS)) {
    return Status::kIoError;
  }
  *rank = r;
  *size = s;
  return Status::kOk;
}

void finalize() noexcept {
  static_cast<void>(MPI_Barrier(MPI_COMM_WORLD));
  static_cast<void>(MPI_Finalize());
}

void abort(int code) noexcept {
  static_cast<void>(MPI_Abort(MPI_COMM_WORLD, code));
  std::_Exit(code);  // MPI_Abort does not return; if it did, still end
}

std::size_t average_scratch(std::size_t n, int ranks) noexcept {
  if ((n == 0U) || (ranks < 1)) {
    return 0U;
  }
  const std::size_t r = static_cast<std::size_t>(ranks);
  return n + (r * ((n + r - 1U) / r));
}

std::uint64_t average_bytes(std::size_t n, std::size_t value_bytes, int ranks, int rank) noexcept {
  if ((n == 0U) || (ranks < 1) || (rank < 0) || (rank >= ranks)) {
    return 0U;
  }
  const std::size_t r = static_cast<std::size_t>(ranks);
  const std::size_t me = static_cast<std::size_t>(rank);
  const Chunks c = chunks_of(n, r);
  std::uint64_t values = 0U;
  for (std::size_t q = 0U; q < r; ++q) {
    values += (q == me) ? 0U : (static_cast<std::uint64_t>(c.count(q)) + c.count(me));
  }
  return values * value_bytes;
}

Status average(double* data, std::size_t n, double* scratch, std::size_t scratch_count) noexcept {
  return scatter_average(data, n, scratch, scratch_count);
}

Status average(float* data, std::size_t n, float* scratch, std::size_t scratch_count) noexcept {
  return scatter_average(data, n, scratch, scratch_count);
}

Status average_at_root(double* data, std::size_t n, double* scratch, std::size_t scratch_count) noexcept {
  return average_impl(data, n, scratch, scratch_count);
}

Status average_at_root(float* data, std::size_t n, float* scratch, std::size_t scratch_count) noexcept {
  return average_impl(data, n, scratch, scratch_count);
}

Status average_mpi(double* data, std::size_t n, double* scratch, std::size_t scratch_count) noexcept {
  return mpi_average(data, n, scratch, scratch_count);
}

Status average_mpi(float* data, std::size_t n, float* scratch, std::size_t scratch_count) noexcept {
  return mpi_average(data, n, scratch, scratch_count);
}

Status broadcast(double* data, std::size_t n) noexcept { return broadcast_impl(data, n); }

Status broadcast(float* data, std::size_t n) noexcept { return broadcast_impl(data, n); }

Status send_bytes(const std::uint8_t* bytes, std::size_t size, int to) noexcept {
  int ranks = 0;
  if ((bytes == nullptr) || (size == 0U) || (size > static_cast<std::size_t>(0x7FFFFFFF)) ||
      (MPI_Comm_size(MPI_COMM_WORLD, &ranks) != MPI_SUCCESS) || (to < 0) || (to >= ranks)) {
    return Status::kInvalidArgument;
  }
  if (MPI_Send(bytes, static_cast<int>(size), MPI_BYTE, to, kTagFrame, MPI_COMM_WORLD) != MPI_SUCCESS) {
    return Status::kIoError;
  }
  g_bytes_sent += static_cast<std::uint64_t>(size);
  return Status::kOk;
}

Status receive_bytes(std::uint8_t* buffer, std::size_t capacity, int from, std::size_t* got) noexcept {
  MPI_Status st;
  int size = 0;
  if ((buffer == nullptr) || (got == nullptr) || (capacity == 0U)) {
    return Status::kInvalidArgument;
  }
  if ((MPI_Probe(from, kTagFrame, MPI_COMM_WORLD, &st) != MPI_SUCCESS) ||
      (MPI_Get_count(&st, MPI_BYTE, &size) != MPI_SUCCESS) || (size < 0)) {
    return Status::kIoError;
  }
  const int take = (static_cast<std::size_t>(size) > capacity) ? static_cast<int>(capacity) : size;
  if (static_cast<std::size_t>(size) > capacity) {
    // Consume the message so the sender is not left waiting; report it.
    static_cast<void>(MPI_Recv(buffer, take, MPI_BYTE, from, kTagFrame, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    return Status::kCapacityExceeded;
  }
  if (MPI_Recv(buffer, take, MPI_BYTE, from, kTagFrame, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
    return Status::kIoError;
  }
  *got = static_cast<std::size_t>(size);
  return Status::kOk;
}

Status receive_bytes_until(std::uint8_t* buffer, std::size_t capacity, int from, double deadline, std::size_t* got,
                           bool* arrived) noexcept {
  if ((buffer == nullptr) || (got == nullptr) || (arrived == nullptr) || (capacity == 0U)) {
    return Status::kInvalidArgument;
  }
  *arrived = false;
  int flag = 0;
  for (;;) {
    if (MPI_Iprobe(from, kTagFrame, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      return Status::kIoError;
    }
    if (flag != 0) {
      *arrived = true;
      return receive_bytes(buffer, capacity, from, got);
    }
    if (MPI_Wtime() >= deadline) {
      return Status::kOk;
    }
    const std::timespec pause{0, 1000000L};  // 1 ms between probes
    static_cast<void>(nanosleep(&pause, nullptr));
  }
}

double seconds() noexcept { return MPI_Wtime(); }

namespace {

template <class T>
Status reduce_in_order(void* context, T* data, std::size_t n) noexcept {
  Scratch<T>* const s = static_cast<Scratch<T>*>(context);
  return (s == nullptr) ? Status::kInvalidArgument : scatter_average(data, n, s->values, s->count);
}

template <class T>
Status reduce_by_mpi(void* context, T* data, std::size_t n) noexcept {
  Scratch<T>* const s = static_cast<Scratch<T>*>(context);
  return (s == nullptr) ? Status::kInvalidArgument : mpi_average(data, n, s->values, s->count);
}

template <class T>
fleet::Reducer<T> make_reducer(Scratch<T>* scratch, typename fleet::Reducer<T>::Average average) noexcept {
  fleet::Reducer<T> r;
  int rank = 0;
  int size = 0;
  if ((MPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS) && (MPI_Comm_size(MPI_COMM_WORLD, &size) == MPI_SUCCESS) &&
      (size > 0)) {
    r.average = average;
    r.context = scratch;
    r.rank = static_cast<std::size_t>(rank);
    r.ranks = static_cast<std::size_t>(size);
  }
  return r;
}

template <class T>
Status link_broadcast(void* context, T* data, std::size_t n) noexcept {
  static_cast<void>(context);
  return broadcast_impl(data, n);
}

Status link_send(void* context, const std::uint8_t* bytes, std::size_t size) noexcept {
  static_cast<void>(context);
  return send_bytes(bytes, size, 0);
}

Status link_receive(void* context, std::uint32_t client, std::uint8_t* buffer, std::size_t capacity, double deadline,
                    std::size_t* got, bool* arrived) noexcept {
  static_cast<void>(context);
  if ((arrived == nullptr) || (client > static_cast<std::uint32_t>(kMaxCount))) {
    return Status::kInvalidArgument;
  }
  const int from = static_cast<int>(client);
  if (deadline > 0.0) {
    return receive_bytes_until(buffer, capacity, from, deadline, got, arrived);
  }
  *arrived = true;
  return receive_bytes(buffer, capacity, from, got);
}

double link_seconds(void* context) noexcept {
  static_cast<void>(context);
  return MPI_Wtime();
}

}  // namespace

fleet::Reducer<double> reducer(Scratch<double>* scratch) noexcept {
  return make_reducer<double>(scratch, &reduce_in_order<double>);
}

fleet::Reducer<float> reducer(Scratch<float>* scratch) noexcept {
  return make_reducer<float>(scratch, &reduce_in_order<float>);
}

fleet::Reducer<double> allreduce_reducer(Scratch<double>* scratch) noexcept {
  return make_reducer<double>(scratch, &reduce_by_mpi<double>);
}

fleet::Reducer<float> allreduce_reducer(Scratch<float>* scratch) noexcept {
  return make_reducer<float>(scratch, &reduce_by_mpi<float>);
}

template <class T>
fleet::Link<T> link() noexcept {
  fleet::Link<T> l;
  l.broadcast = &link_broadcast<T>;
  l.send = &link_send;
  l.receive = &link_receive;
  l.seconds = &link_seconds;
  return l;
}

template fleet::Link<double> link<double>() noexcept;
template fleet::Link<float> link<float>() noexcept;

std::uint64_t bytes_sent() noexcept { return g_bytes_sent; }

}  // namespace mpi
}  // namespace port
}  // namespace burtorch

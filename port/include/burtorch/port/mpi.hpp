// SPDX-License-Identifier: Apache-2.0
/// @file
/// Data-parallel training over MPI (Open MPI): the one part of libburtorch
/// that moves bytes between processes or machines. Built as
/// burtorch::port_mpi when CMake finds MPI (BURTORCH_MPI, on by default at
/// the top level) and installed with the package:
/// find_package(burtorch COMPONENTS mpi) or pkg-config burtorch-mpi. The
/// library (include/, lib/) knows nothing of it. This header does not
/// include <mpi.h>.
///
/// Each rank trains on its slice of a global batch; after the local batch
/// average() replaces the caller's array (the gradients, with the mean
/// loss appended) by the mean over the ranks, in a fixed order: a
/// reduce-scatter then an all-gather. The array is cut into N chunks; rank
/// r receives chunk r of every other rank, adds the N copies in rank order
/// 0, 1, ..., N-1 and divides by N, then every rank receives every other
/// rank's finished chunk. Every rank gets the same bits, the same bits in
/// every run with the same N, and the same bits as rank 0 gathering every
/// array and adding in the same order (average_at_root(), the former
/// scheme). Each rank sends 2 (N - 1) / N of the array per step, whatever
/// N: rank 0's traffic no longer grows with the job (docs/fleet.md says how
/// the result compares with one process training on the whole batch).
#ifndef BURTORCH_PORT_MPI_HPP
#define BURTORCH_PORT_MPI_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/fleet/transport.hpp"
#include "burtorch/status.hpp"

namespace burtorch {
namespace port {
namespace mpi {

/// Starts MPI (MPI_Init) and sets *rank and *size of MPI_COMM_WORLD; errors
/// on the world communicator are returned, not fatal. kIoError if MPI
/// cannot start (nothing set).
Status init(int* rank, int* size) noexcept;

/// Ends MPI (MPI_Finalize) after a barrier.
void finalize() noexcept;

/// Ends every rank of the job at once (MPI_Abort) with exit status `code`.
[[noreturn]] void abort(int code) noexcept;

/// Values of scratch average() needs for n values over `ranks` ranks:
/// n + ranks * ceil(n / ranks) (the chunk copies and the result). 0 for
/// n == 0 or ranks < 1.
std::size_t average_scratch(std::size_t n, int ranks) noexcept;

/// Payload bytes one rank sends in one average() of n values of
/// `value_bytes` bytes each over `ranks` ranks: its chunks of the array to
/// the other ranks, then its finished chunk to each of them, about
/// 2 (ranks - 1) / ranks * n * value_bytes (what bytes_sent() counts).
std::uint64_t average_bytes(std::size_t n, std::size_t value_bytes, int ranks, int rank) noexcept;

/// Replaces data[0, n) on every rank by the mean over the ranks, added in
/// rank order (see the file comment). `scratch` holds average_scratch(n,
/// N) values. kInvalidArgument for n == 0 or above INT_MAX or a null array,
/// kCapacityExceeded if the scratch is too small (checked before any
/// message), kIoError if MPI reports an error; data is untouched on error.
Status average(double* data, std::size_t n, double* scratch, std::size_t scratch_count) noexcept;
/// The same in FP32.
Status average(float* data, std::size_t n, float* scratch, std::size_t scratch_count) noexcept;

/// The same mean by the former scheme: rank 0 gathers every rank's array,
/// adds them in rank order, divides by N and sends the result to each rank
/// (2 (N - 1) n values through rank 0). The same bits as average(); kept
/// to compare the two. `scratch` holds N * n values on rank 0, n on the
/// others. Errors as average().
Status average_at_root(double* data, std::size_t n, double* scratch, std::size_t scratch_count) noexcept;
/// The same in FP32.
Status average_at_root(float* data, std::size_t n, float* scratch, std::size_t scratch_count) noexcept;

/// The mean as the MPI library computes it (MPI_Allreduce with MPI_SUM,
/// then a division by N): its choice of algorithm, so the order of the
/// additions, and the bits, are the library's, not this port's. `scratch`
/// holds n values. Errors as average(). Not counted in bytes_sent().
Status average_mpi(double* data, std::size_t n, double* scratch, std::size_t scratch_count) noexcept;
/// The same in FP32.
Status average_mpi(float* data, std::size_t n, float* scratch, std::size_t scratch_count) noexcept;

/// Copies rank 0's data[0, n) to every rank (MPI_Bcast). kInvalidArgument
/// for a null array, n == 0 or above INT_MAX; kIoError if MPI fails.
Status broadcast(double* data, std::size_t n) noexcept;
/// The same in FP32.
Status broadcast(float* data, std::size_t n) noexcept;

/// Sends bytes[0, size) to rank `to` as one message. kInvalidArgument for a
/// null buffer, size 0 or above INT_MAX, or a rank outside the job.
Status send_bytes(const std::uint8_t* bytes, std::size_t size, int to) noexcept;

/// Receives the next message from rank `from` into buffer[0, capacity) and
/// sets *got to its size. kCapacityExceeded if it is longer than capacity
/// (the message is consumed, buffer holds its first capacity bytes).
Status receive_bytes(std::uint8_t* buffer, std::size_t capacity, int from, std::size_t* got) noexcept;

/// As receive_bytes(), but waits at most until `deadline` (seconds on the
/// clock of seconds()): *arrived is false, and kOk returned with nothing
/// received, if no message from `from` came by then (a client that never
/// sends). kInvalidArgument for a null pointer or capacity 0.
Status receive_bytes_until(std::uint8_t* buffer, std::size_t capacity, int from, double deadline, std::size_t* got,
                           bool* arrived) noexcept;

/// Seconds on MPI's wall clock (MPI_Wtime), for deadlines.
double seconds() noexcept;

/// A caller's scratch for a reducer: average_scratch(n, N) values for
/// reducer(), n for allreduce_reducer() (n: the longest array averaged;
/// nn::DataParallel averages P + 1).
template <class T>
struct Scratch {
  T* values = nullptr;     ///< the caller's array
  std::size_t count = 0U;  ///< its values
};

/// The transport of nn::DataParallel over MPI_COMM_WORLD: average() (the
/// reduce-scatter and all-gather in rank order), with the caller's scratch
/// (which must outlive the reducer), rank and size of the job. Call after
/// init(); a reducer whose average is null (refused by DataParallel) if
/// MPI cannot say the rank.
fleet::Reducer<double> reducer(Scratch<double>* scratch) noexcept;
/// The same in FP32.
fleet::Reducer<float> reducer(Scratch<float>* scratch) noexcept;
/// The same over average_mpi() (MPI_Allreduce: the MPI library's order).
fleet::Reducer<double> allreduce_reducer(Scratch<double>* scratch) noexcept;
/// The same in FP32.
fleet::Reducer<float> allreduce_reducer(Scratch<float>* scratch) noexcept;

/// The transport of fleet::FedServer and fleet::FedClient over
/// MPI_COMM_WORLD: rank 0 is the server, client c is rank c. broadcast()
/// from rank 0, send_bytes() to rank 0, receive_bytes() (with a deadline:
/// receive_bytes_until()) from rank c, seconds(). T is float or double.
template <class T>
fleet::Link<T> link() noexcept;

/// Payload bytes this rank has sent so far through average() (see
/// average_bytes()), average_at_root() (a non-root rank sends its array
/// once; rank 0 sends the result to each other rank) and send_bytes();
/// broadcast() and average_mpi() are not counted (MPI picks the algorithm).
std::uint64_t bytes_sent() noexcept;

}  // namespace mpi
}  // namespace port
}  // namespace burtorch

#endif  // BURTORCH_PORT_MPI_HPP

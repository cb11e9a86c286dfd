// SPDX-License-Identifier: Apache-2.0
/// @file
/// Data-parallel training over MPI (Open MPI): the one part of libburtorch
/// that moves bytes between processes or machines. Built as
/// burtorch::port_mpi only when CMake finds MPI; the library (include/,
/// lib/) knows nothing of it. This header does not include <mpi.h>.
///
/// Each rank trains on its slice of a global batch; after the local batch
/// average() replaces the caller's array (the gradients, with the mean
/// loss appended) by the mean over the ranks, in a fixed order: rank 0
/// gathers every rank's array, adds them in rank order 0, 1, ..., N-1 and
/// divides by N, then broadcasts the result. Every rank gets the same bits,
/// and the same bits in every run with the same N (docs/fleet.md says how
/// they compare with one process training on the whole batch).
#ifndef BURTORCH_PORT_MPI_HPP
#define BURTORCH_PORT_MPI_HPP

#include <cstddef>
#include <cstdint>

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

/// Replaces data[0, n) on every rank by the mean over the ranks, added in
/// rank order (see the file comment). `scratch` holds size * n values on
/// rank 0, n on the others. kInvalidArgument for n == 0 or above INT_MAX or
/// a null array, kCapacityExceeded if the scratch is too small (checked
/// before any message), kIoError if MPI reports an error; data is untouched
/// on error.
Status average(double* data, std::size_t n, double* scratch, std::size_t scratch_count) noexcept;
/// The same in FP32.
Status average(float* data, std::size_t n, float* scratch, std::size_t scratch_count) noexcept;

/// Copies rank 0's data[0, n) to every rank (MPI_Bcast). kInvalidArgument
/// for a null array, n == 0 or above INT_MAX; kIoError if MPI fails.
Status broadcast(double* data, std::size_t n) noexcept;

/// Sends bytes[0, size) to rank `to` as one message. kInvalidArgument for a
/// null buffer, size 0 or above INT_MAX, or a rank outside the job.
Status send_bytes(const std::uint8_t* bytes, std::size_t size, int to) noexcept;

/// Receives the next message from rank `from` into buffer[0, capacity) and
/// sets *got to its size. kCapacityExceeded if it is longer than capacity
/// (the message is consumed, buffer holds its first capacity bytes).
Status receive_bytes(std::uint8_t* buffer, std::size_t capacity, int from, std::size_t* got) noexcept;

/// Payload bytes this rank has sent so far through average() (a non-root
/// rank sends its array once; rank 0 sends the result to each other rank)
/// and send_bytes(); broadcast() is not counted (MPI picks its tree).
std::uint64_t bytes_sent() noexcept;

}  // namespace mpi
}  // namespace port
}  // namespace burtorch

#endif  // BURTORCH_PORT_MPI_HPP

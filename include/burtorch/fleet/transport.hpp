// SPDX-License-Identifier: Apache-2.0
/// @file
/// How the library's multi-process helpers reach other processes or
/// devices without knowing how: two structs of callbacks the caller fills
/// (from its port: `<burtorch/port/mpi.hpp>` makes both over MPI; a socket,
/// a UART or a radio can make them too). The library calls them and never
/// sees a transport; nothing here allocates or blocks by itself.
///
///  - Reducer<T>: the members of a data-parallel job (nn::DataParallel)
///    average an array, every member getting the same bits;
///  - Link<T>: a federated round's server and clients (fleet::FedServer,
///    fleet::FedClient) exchange the global parameters and update frames.
///
/// A callback returns a Status; anything but kOk is passed back to the
/// helper's caller as is (kIoError is what a transport should use for a
/// failed transfer).
#ifndef BURTORCH_FLEET_TRANSPORT_HPP
#define BURTORCH_FLEET_TRANSPORT_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/status.hpp"

namespace burtorch {
namespace fleet {

/// The members of a data-parallel job: member `rank` of `ranks`.
template <class T>
struct Reducer {
  /// Replaces data[0, n) on every member by the mean over the members,
  /// the same bits on each (the members call it together, each with its
  /// own array of the same n). Errors leave data untouched.
  using Average = Status (*)(void* context, T* data, std::size_t n) noexcept;
  Average average = nullptr;  ///< the reduction
  void* context = nullptr;    ///< passed to it as is (its scratch, a socket, ...)
  std::size_t rank = 0U;      ///< this member, 0 to ranks - 1
  std::size_t ranks = 1U;     ///< the job's members, >= 1
};

namespace detail {
/// The mean over one member: its array divided by one (exact).
template <class T>
Status mean_of_one(void* context, T* data, std::size_t n) noexcept {
  static_cast<void>(context);
  if ((data == nullptr) || (n == 0U)) {
    return Status::kInvalidArgument;
  }
  for (std::size_t i = 0U; i < n; ++i) {
    data[i] = data[i] / T(1);
  }
  return Status::kOk;
}
}  // namespace detail

/// The reducer of a job of one member: the mean of one array is the array.
/// What a program uses without a transport (the same code path as N ranks).
template <class T>
Reducer<T> single_reducer() noexcept {
  Reducer<T> r;
  r.average = &detail::mean_of_one<T>;
  return r;
}

/// A federated round's transport: the server (which owns the global
/// parameters) and its clients, numbered 1 to K.
template <class T>
struct Link {
  /// The global parameters: on the server, data[0, n) goes to every
  /// client; on a client, data[0, n) is replaced by the server's.
  using Broadcast = Status (*)(void* context, T* data, std::size_t n) noexcept;
  /// A client's frame, bytes[0, size), to the server.
  using Send = Status (*)(void* context, const std::uint8_t* bytes, std::size_t size) noexcept;
  /// The server: the next frame of client `client` into buffer[0,
  /// capacity), its size in *got. With deadline > 0 (seconds on
  /// seconds()'s clock) it waits no longer than that: *arrived false and
  /// kOk if nothing came; with deadline <= 0 it waits for the frame.
  /// kCapacityExceeded for a frame longer than capacity (consumed).
  using Receive = Status (*)(void* context, std::uint32_t client, std::uint8_t* buffer, std::size_t capacity,
                             double deadline, std::size_t* got, bool* arrived) noexcept;
  /// Seconds on the link's clock (for round deadlines).
  using Seconds = double (*)(void* context) noexcept;
  Broadcast broadcast = nullptr;  ///< server to clients: the parameters
  Send send = nullptr;            ///< client to server: a frame
  Receive receive = nullptr;      ///< the server's side of send
  Seconds seconds = nullptr;      ///< nullptr: no deadlines (a round waits for every client)
  void* context = nullptr;        ///< passed to each as is
};

}  // namespace fleet
}  // namespace burtorch

#endif  // BURTORCH_FLEET_TRANSPORT_HPP

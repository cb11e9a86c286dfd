// SPDX-License-Identifier: Apache-2.0
/// @file
/// Federated rounds (McMahan et al. 2017) for any model's parameters: a
/// client and a server that run the round protocol over a fleet::Link
/// (the caller's transport, `<burtorch/port/mpi.hpp>` or its own), the
/// update codec (fleet/codec.hpp) and FedAvg (fleet/fedavg.hpp). Heap-free:
/// every array is the caller's; the parameters are a plain array (a tape's
/// values from model.params(): tape.values() + params.first).
///
/// A round: the server broadcasts the global parameters; each client copies
/// them into its model, trains locally (a callback of the caller's), takes
/// its update (local minus global, in FP32), encodes it (error feedback
/// with a residual array) and sends the frame; the server checks and adds
/// each frame weighted by its sample count, closes the round at a deadline
/// if one is set (a client that sent nothing is counted as missing), and
/// adds the mean update to the global parameters.
///
///     // a client                                   // the server
///     fleet::FedClient<double> c(link, w, P, mem, options);   fleet::FedServer<double> s(link, w, P, mem);
///     c.round(r, samples, seed, train);             s.round(r, clients, deadline, &report);
#ifndef BURTORCH_FLEET_FEDERATED_HPP
#define BURTORCH_FLEET_FEDERATED_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/fleet/codec.hpp"
#include "burtorch/fleet/fedavg.hpp"
#include "burtorch/fleet/transport.hpp"
#include "burtorch/status.hpp"

namespace burtorch {
namespace fleet {

/// A client's arrays, for an update of n values with EncodeOptions o.
template <class T>
struct ClientMemory {
  T* global = nullptr;                 ///< n values: the server's parameters
  float* update = nullptr;             ///< n FP32: local minus global
  float* residual = nullptr;           ///< n FP32, zero at first; nullptr: no error feedback
  std::uint8_t* frame = nullptr;       ///< max_frame_bytes(n, o) bytes
  std::size_t frame_capacity = 0U;     ///< its size
  std::uint32_t* scratch = nullptr;    ///< topk: o.kept entries; else nullptr
  std::size_t scratch_count = 0U;      ///< its entries
};

/// Where a client's round stopped (FedClient::failed_at()).
enum class ClientStep : std::uint8_t { kNone, kArguments, kBroadcast, kTrain, kEncode, kSend };

/// One client of a federated job: its model's parameters params[0, n).
template <class T>
class FedClient {
 public:
  /// Keeps the link, the parameters, the arrays and the options (codec,
  /// kept, block and client id; samples, round and seed are per round).
  FedClient(const Link<T>& link, T* params, std::size_t n, const ClientMemory<T>& memory,
            const EncodeOptions& options) noexcept
      : link_(link), params_(params), n_(n), m_(memory), options_(options) {}

  /// One round: params = the server's parameters (the link's broadcast),
  /// `train()` (returns kOk, or a Status that ends the round), then the
  /// update params - global in FP32 encoded as round `round` with weight
  /// `samples` (randk's index seed `seed`) and sent. Returns the first
  /// error: kInvalidArgument for a null array or link callback or n == 0
  /// (before anything runs), the broadcast's, train()'s, encode's
  /// (nothing sent), the send's; failed_at() says which.
  template <class Train>
  Status round(std::uint32_t round, std::uint32_t samples, std::uint32_t seed, Train&& train) noexcept {
    T* const global = m_.global;
    failed_at_ = ClientStep::kArguments;
    if ((params_ == nullptr) || (global == nullptr) || (m_.update == nullptr) || (n_ == 0U) ||
        (link_.broadcast == nullptr) || (link_.send == nullptr)) {
      return Status::kInvalidArgument;
    }
    failed_at_ = ClientStep::kBroadcast;
    Status s = link_.broadcast(link_.context, global, n_);
    if (s != Status::kOk) {
      return s;
    }
    for (std::size_t i = 0U; i < n_; ++i) {
      params_[i] = global[i];
    }
    failed_at_ = ClientStep::kTrain;
    s = train();
    if (s != Status::kOk) {
      return s;
    }
    for (std::size_t i = 0U; i < n_; ++i) {
      m_.update[i] = static_cast<float>(params_[i] - global[i]);
    }
    EncodeOptions o = options_;
    o.samples = samples;
    o.round = round;
    o.seed = seed;
    std::size_t written = 0U;
    failed_at_ = ClientStep::kEncode;
    s = encode(m_.update, n_, m_.residual, o, m_.frame, m_.frame_capacity, &written, m_.scratch, m_.scratch_count);
    if (s != Status::kOk) {
      return s;
    }
    frame_bytes_ = written;
    failed_at_ = ClientStep::kSend;
    s = link_.send(link_.context, m_.frame, written);
    if (s == Status::kOk) {
      failed_at_ = ClientStep::kNone;
    }
    return s;
  }

  /// The size of the last frame round() encoded (0 before).
  std::size_t frame_bytes() const noexcept { return frame_bytes_; }
  /// The step the last round() stopped at; kNone if it completed.
  ClientStep failed_at() const noexcept { return failed_at_; }

 private:
  Link<T> link_;
  T* params_;
  std::size_t n_;
  ClientMemory<T> m_;
  EncodeOptions options_;
  std::size_t frame_bytes_ = 0U;
  ClientStep failed_at_ = ClientStep::kNone;
};

/// What a round of the server saw.
struct RoundReport {
  std::size_t accepted = 0U;     ///< frames added
  std::size_t refused = 0U;      ///< frames refused (checks, round, length, a receive error)
  std::size_t missing = 0U;      ///< clients that sent nothing before the deadline
  std::size_t late = 0U;         ///< frames of earlier rounds dropped
  std::uint64_t samples = 0U;    ///< the accepted frames' sample counts
  std::size_t bytes = 0U;        ///< bytes of the frames received for this round
  bool updated = false;          ///< the parameters moved (a frame was accepted)
};

/// One client's part of a round, as it happens (for a log): a late frame
/// dropped (frame_round its round), a client missing at the deadline, a
/// frame refused (status why).
enum class ClientEvent : std::uint8_t { kLate, kMissing, kRefused };
struct ClientNotice {
  ClientEvent event = ClientEvent::kRefused;  ///< what happened
  std::uint32_t client = 0U;                  ///< 1 to clients
  std::uint32_t frame_round = 0U;             ///< kLate: the frame's round
  Status status = Status::kOk;                ///< kRefused: why
};
/// Called for each notice; `context` as given to round().
using Notify = void (*)(void* context, const ClientNotice& notice) noexcept;

/// A server's arrays for n parameters.
template <class T>
struct ServerMemory {
  T* sum = nullptr;                 ///< n values: FedAvg's sum
  T* mean = nullptr;                ///< n values: the round's mean update
  std::uint8_t* frame = nullptr;    ///< the largest frame a client sends
  std::size_t frame_capacity = 0U;  ///< its size
};

/// The server of a federated job: the global parameters params[0, n).
template <class T>
class FedServer {
 public:
  FedServer(const Link<T>& link, T* params, std::size_t n, const ServerMemory<T>& memory) noexcept
      : link_(link), params_(params), n_(n), m_(memory), avg_(memory.sum, n) {}

  /// One round with clients 1 to `clients`: broadcasts params, receives
  /// one frame per client in client order (with deadline_seconds > 0, none
  /// after that many seconds on the link's clock from the broadcast: the
  /// round closes with the frames that arrived), drops frames of earlier
  /// rounds, adds the others to FedAvg (refused ones change nothing) and
  /// adds the mean update to params. `notify` (optional) hears of each
  /// late, missing or refused frame as it happens. *report says what the
  /// round saw. Returns kInvalidArgument for a null array, link callback
  /// or report, n == 0 or clients == 0 (before anything is sent; a
  /// deadline needs the link's clock), the broadcast's error; a client's
  /// receive error is a refusal, not the round's.
  Status round(std::uint32_t round, std::uint32_t clients, double deadline_seconds, RoundReport* report,
               Notify notify = nullptr, void* notify_context = nullptr) noexcept {
    const bool timed = deadline_seconds > 0.0;
    if ((report == nullptr) || (params_ == nullptr) || (m_.mean == nullptr) || (m_.frame == nullptr) ||
        (clients == 0U) || (link_.broadcast == nullptr) || (link_.receive == nullptr) ||
        (timed && (link_.seconds == nullptr)) || (avg_.begin(n_, round) != Status::kOk)) {
      return Status::kInvalidArgument;
    }
    *report = RoundReport{};
    const Status sent = link_.broadcast(link_.context, params_, n_);
    if (sent != Status::kOk) {
      return sent;
    }
    std::size_t failed = 0U;  // receive errors: FedAvg never saw those frames
    const double deadline = timed ? (link_.seconds(link_.context) + deadline_seconds) : 0.0;
    for (std::uint32_t c = 1U; c <= clients; ++c) {
      ClientNotice notice;
      notice.client = c;
      std::size_t got = 0U;
      bool arrived = true;
      Status s = Status::kOk;
      for (;;) {  // frames of earlier rounds that arrive late are dropped
        s = link_.receive(link_.context, c, m_.frame, m_.frame_capacity, deadline, &got, &arrived);
        FrameHeader h;
        if ((s != Status::kOk) || !arrived || (check_frame(m_.frame, got, &h) != Status::kOk) || (h.round >= round)) {
          break;
        }
        ++report->late;
        notice.event = ClientEvent::kLate;
        notice.frame_round = h.round;
        tell(notify, notify_context, notice);
      }
      if ((s == Status::kOk) && !arrived) {
        avg_.miss();
        notice.event = ClientEvent::kMissing;
        tell(notify, notify_context, notice);
        continue;
      }
      if (s == Status::kOk) {
        report->bytes += got;
        s = avg_.add(m_.frame, got);
      } else {
        ++failed;
      }
      if (s != Status::kOk) {
        notice.event = ClientEvent::kRefused;
        notice.status = s;
        tell(notify, notify_context, notice);
      }
    }
    report->accepted = avg_.accepted();
    report->refused = avg_.refused() + failed;
    report->missing = avg_.missing();
    report->samples = avg_.samples();
    if (avg_.accepted() > 0U) {
      static_cast<void>(avg_.average(m_.mean));
      for (std::size_t i = 0U; i < n_; ++i) {
        params_[i] += m_.mean[i];
      }
      report->updated = true;
    }
    return Status::kOk;
  }

 private:
  static void tell(Notify notify, void* context, const ClientNotice& notice) noexcept {
    if (notify != nullptr) {
      notify(context, notice);
    }
  }

  Link<T> link_;
  T* params_;
  std::size_t n_;
  ServerMemory<T> m_;
  FedAvg<T> avg_;
};

}  // namespace fleet
}  // namespace burtorch

#endif  // BURTORCH_FLEET_FEDERATED_HPP

// SPDX-License-Identifier: Apache-2.0
// The multi-process helpers without a transport, on every target: the
// members of a job simulated in turn in one process, through the same
// callbacks an MPI port or a socket fills (fleet/transport.hpp).
//  * nn::batch_slice covers a batch once, in order, slices within a sample;
//  * nn::DataParallel of one member is the serial batch and step, bit for
//    bit; of N members (the members simulated one after another: a first
//    pass captures what each sends, a second answers with the rank-order
//    mean) it ends with the same parameters on every member, equal bit for
//    bit to an oracle composed by hand from nn::serial_batch on each slice
//    (weighted by the slice's share when the batch does not split evenly),
//    and within the summation bound of one process on the whole batch;
//    a member whose sample fails still joins the reduction and no member
//    steps; bad arguments are refused before anything is sent;
//  * fleet::FedServer and fleet::FedClient over a loopback link: a round's
//    new parameters equal the FedAvg oracle computed by hand from each
//    client's FP32 update and sample count; a client that never sends is
//    counted at the deadline and the round closes with the others; a frame
//    of an earlier round is dropped; a damaged frame and a receive error
//    are refused and counted; bad arguments are refused.
// Heap-free.
#include <burtorch/burtorch.hpp>
#include <burtorch/fleet/federated.hpp>
#include <burtorch/nn/nn.hpp>
#include <burtorch/nn/parallel.hpp>

#include <cmath>
#include <cstring>
#include <new>

#include "harness.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;
namespace fl = burtorch::fleet;

namespace {

// --- data-parallel ------------------------------------------------------------

constexpr std::size_t kIn = 3U;
constexpr std::size_t kClasses = 4U;
constexpr std::size_t kParams = kClasses * (kIn + 1U);
constexpr std::size_t kSamples = 8U;
constexpr std::size_t kMaxRanks = 4U;
constexpr std::size_t kNodes = 64U;
constexpr std::size_t kSlots = 32U;
// Two tapes at once (a model and its twin) in static storage: the micro:bit
// has 16 KB of RAM and a 3 KB thread stack for everything this suite holds.
alignas(64) unsigned char g_arena[2][bt::Tape<double>::bytes_required(kNodes, kSlots) + 64U];

double input(std::size_t s, std::size_t i) { return std::sin(static_cast<double>((3U * s) + i) + 0.5) * 2.0; }
bt::Index label(std::size_t s) { return static_cast<bt::Index>((s * 5U) % kClasses); }

// A 3-4 linear classifier; `which` picks the arena (two twins at once).
struct Model {
  bt::Tape<double> tape;
  nn::Linear<double> lin;
  nn::Optimizer<double> opt;
  bool ok = false;
  explicit Model(std::size_t which)
      : tape(g_arena[which], sizeof(g_arena[which]), kNodes, kSlots), opt(sgd()) {
    nn::LinearOptions o;
    o.in = kIn;
    o.out = kClasses;
    nn::Rng rng(11U);
    ok = lin.create(tape, o, rng);
  }
  static nn::OptimizerOptions<double> sgd() {
    nn::OptimizerOptions<double> c;
    c.kind = nn::OptimizerKind::kSgd;
    c.lr = 0.5;
    return c;
  }
  bt::View params() const { return lin.params(); }
  double* values() { return tape.values() + lin.params().first; }
  double* grads() { return tape.grads() + lin.params().first; }
  bt::Value<double> loss(bt::Tape<double>& tp, std::size_t s) const {
    const bt::View x = bt::record_view(tp, kIn, [&](bt::Index i) noexcept { return tp.leaf(input(s, i)); });
    return nn::cross_entropy(tp, lin.forward(tp, x), label(s));
  }
};

void slices_cover_the_batch(bt_test::Context& t) {
  bool ok = true;
  for (std::size_t batch = 0U; batch <= 20U; ++batch) {
    for (std::size_t ranks = 1U; ranks <= 5U; ++ranks) {
      std::size_t next = 0U;
      for (std::size_t r = 0U; r < ranks; ++r) {
        const nn::Slice s = nn::batch_slice(batch, r, ranks);
        ok = ok && (s.first == next) && ((s.count == (batch / ranks)) || (s.count == ((batch / ranks) + 1U)));
        next = s.first + s.count;
      }
      ok = ok && (next == batch);
    }
  }
  BT_CHECK(t, ok);
  const nn::Slice outside = nn::batch_slice(10U, 3U, 3U);
  const nn::Slice none = nn::batch_slice(10U, 0U, 0U);
  BT_CHECK(t, (outside.count == 0U) && (none.count == 0U));
  static_assert(nn::batch_slice(8U, 1U, 2U).first == 4U, "a constant expression");
}

void one_member_is_the_serial_batch(bt_test::Context& t) {
  Model a(0U);
  Model b(1U);
  BT_CHECK(t, a.ok && b.ok);
  double buffer[nn::DataParallel<double>::buffer_values(kParams)];
  nn::DataParallel<double> dp(fl::single_reducer<double>(), kSamples, buffer, kParams + 1U);
  BT_CHECK(t, (dp.slice().first == 0U) && (dp.slice().count == kSamples));
  bool same = true;
  for (int step = 0; step < 3; ++step) {
    const double got = dp.step(a.tape, a.params(), [&](bt::Tape<double>& tp, std::size_t s) { return a.loss(tp, s); },
                               a.opt);
    const double want =
        nn::serial_batch(b.tape, b.params(), kSamples, [&](bt::Tape<double>& tp, std::size_t s) { return b.loss(tp, s); });
    same = same && (b.opt.step(b.tape, b.params()) == bt::Status::kOk) && (got == want) &&
           (std::memcmp(a.values(), b.values(), kParams * sizeof(double)) == 0);
  }
  BT_CHECK(t, same && (a.tape.status() == bt::Status::kOk));
}

// N members in turn: pass 1 captures each one's array, pass 2 checks it
// arrives again and answers with the rank-order mean.
struct Sim {
  std::size_t ranks = 1U;
  std::size_t n = 0U;
  bool answer = false;
  bool same_input = true;
  bool fail = false;  // the transport fails (kIoError)
  double rows[kMaxRanks][kParams + 1U] = {};
};
struct Member {
  Sim* sim;
  std::size_t rank;
};
bt::Status sim_average(void* context, double* data, std::size_t n) noexcept {
  Member* const m = static_cast<Member*>(context);
  Sim& s = *m->sim;
  if (s.fail) {
    return bt::Status::kIoError;
  }
  s.n = n;
  if (!s.answer) {
    std::memcpy(s.rows[m->rank], data, n * sizeof(double));
    return bt::Status::kOk;
  }
  s.same_input = s.same_input && (std::memcmp(s.rows[m->rank], data, n * sizeof(double)) == 0);
  for (std::size_t i = 0U; i < n; ++i) {
    double sum = s.rows[0][i];
    for (std::size_t q = 1U; q < s.ranks; ++q) {
      sum += s.rows[q][i];
    }
    data[i] = sum / static_cast<double>(s.ranks);
  }
  return bt::Status::kOk;
}
fl::Reducer<double> sim_reducer(Member* m, std::size_t ranks) {
  fl::Reducer<double> r;
  r.average = &sim_average;
  r.context = m;
  r.rank = m->rank;
  r.ranks = ranks;
  return r;
}

// `steps` data-parallel steps of `batch` samples on `ranks` simulated
// members against the hand-made oracle and one process; returns the
// largest parameter difference from one process.
// run_members' two models, off the stack (see g_arena).
alignas(Model) unsigned char g_models[2][sizeof(Model)];
Model& fresh_model(std::size_t which) { return *new (static_cast<void*>(g_models[which])) Model(which); }

double run_members(bt_test::Context& t, std::size_t ranks, std::size_t batch, int steps) {
  Model& m = fresh_model(0U);      // every member in turn (they start each step alike)
  Model& whole = fresh_model(1U);  // one process, the whole batch
  BT_CHECK(t, m.ok && whole.ok);
  Sim sim;
  sim.ranks = ranks;
  Member members[kMaxRanks];
  double buffers[kMaxRanks][kParams + 1U];
  double start[kParams];
  double after[kParams];
  double oracle[kParams];
  bool agree = true;
  bool match = true;
  double loss_gap = 0.0;
  for (int step = 0; step < steps; ++step) {
    std::memcpy(start, m.values(), sizeof(start));
    // The oracle: each slice's serial batch, weighted by its share, summed in rank order.
    double mean[kParams + 1U] = {};
    for (std::size_t r = 0U; r < ranks; ++r) {
      std::memcpy(m.values(), start, sizeof(start));
      const nn::Slice s = nn::batch_slice(batch, r, ranks);
      if (s.count == 0U) {
        m.tape.zero_grad(m.params().first, m.params().count);
      }
      const double l = (s.count == 0U) ? 0.0
                                       : nn::serial_batch(m.tape, m.params(), s.count, [&](bt::Tape<double>& tp,
                                                                                          std::size_t i) {
                                           return m.loss(tp, s.first + i);
                                         });
      const double w = static_cast<double>(s.count * ranks) / static_cast<double>(batch);
      const bool even = (s.count * ranks) == batch;
      for (std::size_t i = 0U; i <= kParams; ++i) {
        const double v = (i < kParams) ? m.grads()[i] : l;
        mean[i] = (r == 0U) ? (even ? v : v * w) : (mean[i] + (even ? v : v * w));
      }
    }
    std::memcpy(m.values(), start, sizeof(start));
    for (std::size_t i = 0U; i < kParams; ++i) {
      m.grads()[i] = mean[i] / static_cast<double>(ranks);
    }
    static_cast<void>(m.opt.step(m.tape, m.params()));
    std::memcpy(oracle, m.values(), sizeof(oracle));
    // Pass 1 and pass 2 through DataParallel.
    double losses[kMaxRanks] = {};
    for (int pass = 0; pass < 2; ++pass) {
      sim.answer = (pass == 1);
      for (std::size_t r = 0U; r < ranks; ++r) {
        members[r] = Member{&sim, r};
        nn::DataParallel<double> dp(sim_reducer(&members[r], ranks), batch, buffers[r], kParams + 1U);
        std::memcpy(m.values(), start, sizeof(start));
        losses[r] = dp.step(m.tape, m.params(), [&](bt::Tape<double>& tp, std::size_t i) { return m.loss(tp, i); },
                            m.opt);
        if (pass == 1) {
          agree = agree && ((r == 0U) || ((std::memcmp(after, m.values(), sizeof(after)) == 0) &&
                                          (losses[r] == losses[0])));
          std::memcpy(after, m.values(), sizeof(after));
        }
      }
    }
    match = match && sim.same_input && (sim.n == (kParams + 1U)) &&
            (std::memcmp(after, oracle, sizeof(after)) == 0);
    const double one = nn::serial_batch(whole.tape, whole.params(), batch,
                                        [&](bt::Tape<double>& tp, std::size_t i) { return whole.loss(tp, i); });
    static_cast<void>(whole.opt.step(whole.tape, whole.params()));
    loss_gap = std::fmax(loss_gap, std::fabs(losses[0] - one) / std::fabs(one));
  }
  BT_CHECK(t, agree);
  BT_CHECK(t, match);
  BT_CHECK(t, m.tape.status() == bt::Status::kOk);
  BT_CHECK(t, loss_gap <= 1e-14);
  double gap = 0.0;
  for (std::size_t i = 0U; i < kParams; ++i) {
    gap = std::fmax(gap, std::fabs(m.values()[i] - whole.values()[i]));
  }
  return gap;
}

void members_even(bt_test::Context& t) {
  // Within the summation bound (|g| < 1 here, 8 samples, 3 steps of lr 0.5): far below 1e-13.
  BT_CHECK(t, run_members(t, 2U, kSamples, 3) <= 1e-13);
  BT_CHECK(t, run_members(t, 4U, kSamples, 3) <= 1e-13);
}

void members_uneven(bt_test::Context& t) {
  // 7 samples over 3 members (2, 2, 3): each share weighted, still the global mean.
  BT_CHECK(t, run_members(t, 3U, 7U, 3) <= 1e-13);
  // More members than samples: a member with none adds zeros.
  BT_CHECK(t, run_members(t, 4U, 3U, 2) <= 1e-13);
}

void refusals_before_any_transfer(bt_test::Context& t) {
  Model m(0U);
  Sim sim;
  sim.ranks = 2U;
  Member member{&sim, 0U};
  double buffer[kParams + 1U];
  double loss = 1.0;
  m.grads()[0] = 42.0;
  nn::DataParallel<double> short_buffer(sim_reducer(&member, 2U), kSamples, buffer, kParams);
  BT_CHECK(t, short_buffer.average(m.tape, m.params(), &loss) == bt::Status::kCapacityExceeded);
  nn::DataParallel<double> dp(sim_reducer(&member, 2U), kSamples, buffer, kParams + 1U);
  BT_CHECK(t, dp.average(m.tape, m.params(), nullptr) == bt::Status::kInvalidArgument);
  BT_CHECK(t, dp.average(m.tape, bt::View{0U, 500U}, &loss) == bt::Status::kInvalidArgument);
  nn::DataParallel<double> no_batch(sim_reducer(&member, 2U), 0U, buffer, kParams + 1U);
  BT_CHECK(t, no_batch.average(m.tape, m.params(), &loss) == bt::Status::kInvalidArgument);
  fl::Reducer<double> outside = sim_reducer(&member, 2U);
  outside.rank = 2U;
  nn::DataParallel<double> stranger(outside, kSamples, buffer, kParams + 1U);
  BT_CHECK(t, stranger.average(m.tape, m.params(), &loss) == bt::Status::kInvalidArgument);
  fl::Reducer<double> empty;
  nn::DataParallel<double> no_transport(empty, kSamples, buffer, kParams + 1U);
  BT_CHECK(t, no_transport.average(m.tape, m.params(), &loss) == bt::Status::kInvalidArgument);
  BT_CHECK(t, (sim.n == 0U) && (m.grads()[0] == 42.0) && (loss == 1.0));  // nothing sent, nothing changed
  // A transport error: the gradients and the loss stay; step() records it.
  sim.fail = true;
  BT_CHECK(t, dp.average(m.tape, m.params(), &loss) == bt::Status::kIoError);
  BT_CHECK(t, (m.grads()[0] == 42.0) && (loss == 1.0));
  double before[kParams];
  std::memcpy(before, m.values(), sizeof(before));
  const double l = dp.step(m.tape, m.params(), [&](bt::Tape<double>& tp, std::size_t i) { return m.loss(tp, i); }, m.opt);
  BT_CHECK(t, std::isnan(l) && (m.tape.status() == bt::Status::kIoError));
  BT_CHECK(t, std::memcmp(before, m.values(), sizeof(before)) == 0);
}

void a_failed_sample_stops_every_member(bt_test::Context& t) {
  Model m(0U);
  Sim sim;
  sim.ranks = 2U;
  Member members[2] = {{&sim, 0U}, {&sim, 1U}};
  double buffers[2][kParams + 1U];
  double start[kParams];
  std::memcpy(start, m.values(), sizeof(start));
  double losses[2] = {};
  bt::Status status[2] = {};
  for (int pass = 0; pass < 2; ++pass) {
    sim.answer = (pass == 1);
    for (std::size_t r = 0U; r < 2U; ++r) {
      m.tape.clear_status();
      std::memcpy(m.values(), start, sizeof(start));
      nn::DataParallel<double> dp(sim_reducer(&members[r], 2U), kSamples, buffers[r], kParams + 1U);
      // Member 1's third sample fails (an out-of-range label).
      losses[r] = dp.step(
          m.tape, m.params(),
          [&](bt::Tape<double>& tp, std::size_t i) {
            const bt::View x = bt::record_view(tp, kIn, [&](bt::Index k) noexcept { return tp.leaf(input(i, k)); });
            return nn::cross_entropy(tp, m.lin.forward(tp, x), (i == 6U) ? static_cast<bt::Index>(kClasses) : label(i));
          },
          m.opt);
      status[r] = m.tape.status();
      if (pass == 1) {
        BT_CHECK(t, std::memcmp(start, m.values(), sizeof(start)) == 0);  // no member stepped
      }
    }
  }
  BT_CHECK(t, sim.n == (kParams + 1U));  // member 1 joined the reduction
  BT_CHECK(t, std::isnan(losses[0]) && (status[0] == bt::Status::kOk));
  BT_CHECK(t, std::isnan(losses[1]) && (status[1] == bt::Status::kInvalidArgument));
}

// --- federated rounds over a loopback link ------------------------------------

constexpr std::size_t kN = 12U;
constexpr std::uint32_t kClients = 3U;
constexpr std::size_t kFrame = fl::kFrameHeaderBytes + (4U * kN) + fl::kFrameCrcBytes;
const std::uint32_t kClientSamples[kClients] = {10U, 20U, 30U};

double delta(std::uint32_t c, std::size_t i, std::uint32_t round) {
  return static_cast<double>((static_cast<long>((i * 7U) + (c * 3U) + round) % 11L) - 5L) * 1e-3 *
         static_cast<double>(c + 1U);
}

struct Loop;
struct ClientSide {
  Loop* loop;
  std::uint32_t c;  // 0-based
};
struct Loop {
  double global[kN] = {};            // what the server broadcast last
  double params[kClients][kN] = {};  // each client's model
  double globals[kClients][kN] = {};
  float updates[kClients][kN] = {};
  float residuals[kClients][kN] = {};
  std::uint8_t frames[kClients][kFrame] = {};
  std::uint8_t mail[kClients][kFrame] = {};
  std::size_t mail_bytes[kClients] = {};
  std::uint8_t stale[kClients][kFrame] = {};  // the frame of the round before
  std::size_t stale_bytes[kClients] = {};
  ClientSide sides[kClients] = {};
  fl::FedClient<double>* clients[kClients] = {};
  std::uint32_t round = 0U;
  std::uint32_t silent = 0U;       // client that sends nothing (1-based; 0 none)
  std::uint32_t damage = 0U;       // client whose frame is damaged
  std::uint32_t replay = 0U;       // client whose previous frame arrives first
  std::uint32_t broken = 0U;       // client whose receive fails
  std::uint32_t notices[3] = {};   // kLate, kMissing, kRefused heard
  bt::Status refused_status = bt::Status::kOk;
};

bt::Status server_broadcast(void* context, double* data, std::size_t n) noexcept {
  std::memcpy(static_cast<Loop*>(context)->global, data, n * sizeof(double));
  return bt::Status::kOk;
}
bt::Status client_broadcast(void* context, double* data, std::size_t n) noexcept {
  std::memcpy(data, static_cast<ClientSide*>(context)->loop->global, n * sizeof(double));
  return bt::Status::kOk;
}
bt::Status client_send(void* context, const std::uint8_t* bytes, std::size_t size) noexcept {
  ClientSide* const side = static_cast<ClientSide*>(context);
  std::memcpy(side->loop->mail[side->c], bytes, size);
  side->loop->mail_bytes[side->c] = size;
  return bt::Status::kOk;
}
double loop_clock(void* context) noexcept {
  static_cast<void>(context);
  return 100.0;
}
// The server asks for client c's frame: the client runs its round now.
bt::Status server_receive(void* context, std::uint32_t client, std::uint8_t* buffer, std::size_t capacity,
                          double deadline, std::size_t* got, bool* arrived) noexcept {
  Loop& l = *static_cast<Loop*>(context);
  const std::uint32_t c = client - 1U;
  *arrived = true;
  if (client == l.broken) {
    return bt::Status::kIoError;
  }
  if ((client == l.replay) && (l.stale_bytes[c] > 0U)) {
    std::memcpy(buffer, l.stale[c], l.stale_bytes[c]);
    *got = l.stale_bytes[c];
    l.stale_bytes[c] = 0U;
    return bt::Status::kOk;
  }
  double* const p = l.params[c];
  const bt::Status s = l.clients[c]->round(l.round, kClientSamples[c], 7U, [p, c, &l]() {
    for (std::size_t i = 0U; i < kN; ++i) {
      p[i] += delta(c, i, l.round);
    }
    return bt::Status::kOk;
  });
  if ((s != bt::Status::kOk) || (client == l.silent)) {
    *arrived = !(deadline > 0.0);  // without a deadline a silent client would block
    return s;
  }
  std::memcpy(l.stale[c], l.mail[c], l.mail_bytes[c]);
  l.stale_bytes[c] = l.mail_bytes[c];
  if (client == l.damage) {
    l.mail[c][l.mail_bytes[c] / 2U] ^= 0x10U;
  }
  if (l.mail_bytes[c] > capacity) {
    return bt::Status::kCapacityExceeded;
  }
  std::memcpy(buffer, l.mail[c], l.mail_bytes[c]);
  *got = l.mail_bytes[c];
  return bt::Status::kOk;
}
void hear(void* context, const fl::ClientNotice& n) noexcept {
  Loop& l = *static_cast<Loop*>(context);
  ++l.notices[static_cast<std::size_t>(n.event)];
  l.refused_status = (n.event == fl::ClientEvent::kRefused) ? n.status : l.refused_status;
}

// A server, three raw clients with error feedback, the loopback between.
fl::FedClient<double> make_client(Loop& loop, std::uint32_t c) {
  loop.sides[c] = ClientSide{&loop, c};
  fl::Link<double> link;
  link.broadcast = &client_broadcast;
  link.send = &client_send;
  link.context = &loop.sides[c];
  fl::ClientMemory<double> m;
  m.global = loop.globals[c];
  m.update = loop.updates[c];
  m.residual = loop.residuals[c];
  m.frame = loop.frames[c];
  m.frame_capacity = kFrame;
  fl::EncodeOptions o;
  o.codec = fl::Codec::kRaw;
  o.client = c + 1U;
  return fl::FedClient<double>(link, loop.params[c], kN, m, o);
}
fl::Link<double> server_link_of(Loop& loop) {
  fl::Link<double> link;
  link.broadcast = &server_broadcast;
  link.receive = &server_receive;
  link.seconds = &loop_clock;
  link.context = &loop;
  return link;
}
struct Fleet {
  Loop loop;
  double server_params[kN] = {};
  double sum[kN] = {};
  double mean[kN] = {};
  std::uint8_t server_frame[kFrame] = {};
  fl::FedClient<double> clients[kClients] = {make_client(loop, 0U), make_client(loop, 1U), make_client(loop, 2U)};
  fl::Link<double> server_link = server_link_of(loop);
  fl::FedServer<double> server{server_link, server_params, kN, memory()};

  Fleet() {
    for (std::size_t i = 0U; i < kN; ++i) {
      server_params[i] = 0.1 * static_cast<double>(i);
    }
    for (std::uint32_t c = 0U; c < kClients; ++c) {
      loop.clients[c] = &clients[c];
    }
  }
  fl::ServerMemory<double> memory() {
    fl::ServerMemory<double> sm;
    sm.sum = sum;
    sm.mean = mean;
    sm.frame = server_frame;
    sm.frame_capacity = kFrame;
    return sm;
  }
  // Runs round r; `want` gets the FedAvg oracle over the clients in `sends`.
  fl::RoundReport round(std::uint32_t r, double deadline, const bool (&sends)[kClients], double (&want)[kN],
                        bt::Status* status) {
    double total = 0.0;
    double weighted[kN] = {};
    for (std::uint32_t c = 0U; c < kClients; ++c) {
      if (!sends[c]) {
        continue;
      }
      total += static_cast<double>(kClientSamples[c]);
      for (std::size_t i = 0U; i < kN; ++i) {
        const float u = static_cast<float>((server_params[i] + delta(c, i, r)) - server_params[i]);
        weighted[i] += static_cast<double>(kClientSamples[c]) * static_cast<double>(u);
      }
    }
    for (std::size_t i = 0U; i < kN; ++i) {
      want[i] = (total > 0.0) ? (server_params[i] + (weighted[i] / total)) : server_params[i];
    }
    loop.round = r;
    fl::RoundReport report;
    *status = server.round(r, kClients, deadline, &report, &hear, &loop);
    return report;
  }
};

// The fleets in static storage, made afresh by each case: two at once are
// 5.4 KB, more than the micro:bit's 3 KB thread stack.
alignas(Fleet) unsigned char g_fleets[2][sizeof(Fleet)];
Fleet& fresh_fleet(std::size_t k) { return *new (static_cast<void*>(g_fleets[k])) Fleet(); }

void rounds_are_fedavg(bt_test::Context& t) {
  Fleet& f = fresh_fleet(0U);
  const bool all[kClients] = {true, true, true};
  for (std::uint32_t r = 1U; r <= 3U; ++r) {
    double want[kN];
    bt::Status s = bt::Status::kIoError;
    const fl::RoundReport rep = f.round(r, 0.0, all, want, &s);
    BT_CHECK(t, (s == bt::Status::kOk) && (rep.accepted == kClients) && (rep.refused == 0U) && rep.updated);
    BT_CHECK(t, (rep.samples == 60U) && (rep.bytes == (kClients * kFrame)) && (rep.missing == 0U));
    BT_CHECK(t, std::memcmp(f.server_params, want, sizeof(want)) == 0);
    BT_CHECK(t, f.loop.clients[2]->frame_bytes() == kFrame);
    BT_CHECK(t, f.loop.clients[2]->failed_at() == fl::ClientStep::kNone);
  }
  BT_CHECK(t, (f.loop.notices[0] + f.loop.notices[1] + f.loop.notices[2]) == 0U);
}

void a_silent_client_is_counted_at_the_deadline(bt_test::Context& t) {
  Fleet& f = fresh_fleet(0U);
  f.loop.silent = 2U;
  const bool sends[kClients] = {true, false, true};
  double want[kN];
  bt::Status s = bt::Status::kIoError;
  const fl::RoundReport rep = f.round(1U, 5.0, sends, want, &s);
  BT_CHECK(t, (s == bt::Status::kOk) && (rep.accepted == 2U) && (rep.missing == 1U) && (rep.refused == 0U));
  BT_CHECK(t, (rep.samples == 40U) && (f.loop.notices[1] == 1U));
  BT_CHECK(t, std::memcmp(f.server_params, want, sizeof(want)) == 0);
}

void late_damaged_and_failed_frames(bt_test::Context& t) {
  Fleet& f = fresh_fleet(0U);
  const bool all[kClients] = {true, true, true};
  double want[kN];
  bt::Status s = bt::Status::kIoError;
  static_cast<void>(f.round(1U, 0.0, all, want, &s));
  // Round 2: client 3's round-1 frame arrives first (dropped), then its
  // own; client 1's frame is damaged (refused, nothing added).
  f.loop.replay = 3U;
  f.loop.damage = 1U;
  const bool two_and_three[kClients] = {false, true, true};
  const fl::RoundReport rep = f.round(2U, 0.0, two_and_three, want, &s);
  BT_CHECK(t, (s == bt::Status::kOk) && (rep.late == 1U) && (rep.accepted == 2U) && (rep.refused == 1U));
  BT_CHECK(t, (f.loop.notices[0] == 1U) && (f.loop.notices[2] == 1U));
  BT_CHECK(t, f.loop.refused_status == bt::Status::kChecksumMismatch);
  BT_CHECK(t, std::memcmp(f.server_params, want, sizeof(want)) == 0);
  // Another job: client 1's receive fails (refused, counted), the others count.
  Fleet& g = fresh_fleet(1U);
  g.loop.broken = 1U;
  const bool none[kClients] = {false, true, true};
  const fl::RoundReport rep3 = g.round(1U, 0.0, none, want, &s);
  BT_CHECK(t, (rep3.refused == 1U) && (rep3.accepted == 2U) && (g.loop.refused_status == bt::Status::kIoError));
  BT_CHECK(t, std::memcmp(g.server_params, want, sizeof(want)) == 0);
}

void round_refusals(bt_test::Context& t) {
  Fleet& f = fresh_fleet(0U);
  fl::RoundReport rep;
  const double before = f.server_params[3];
  BT_CHECK(t, f.server.round(1U, 0U, 0.0, &rep) == bt::Status::kInvalidArgument);
  BT_CHECK(t, f.server.round(1U, kClients, 0.0, nullptr) == bt::Status::kInvalidArgument);
  fl::Link<double> clock_less = f.server_link;
  clock_less.seconds = nullptr;  // a deadline needs the link's clock
  fl::FedServer<double> clockless(clock_less, f.server_params, kN, f.memory());
  BT_CHECK(t, clockless.round(1U, kClients, 1.0, &rep) == bt::Status::kInvalidArgument);
  BT_CHECK(t, (f.server_params[3] == before) && (f.loop.mail_bytes[0] == 0U));  // nothing ran
  // A client: topk without its scratch is refused by the encoder, nothing sent.
  fl::EncodeOptions o;
  o.codec = fl::Codec::kTopK;
  o.kept = 2U;
  fl::ClientMemory<double> m;
  m.global = f.loop.globals[0];
  m.update = f.loop.updates[0];
  m.frame = f.loop.frames[0];
  m.frame_capacity = kFrame;
  fl::Link<double> link;
  link.broadcast = &client_broadcast;
  link.send = &client_send;
  link.context = &f.loop.sides[0];
  fl::FedClient<double> c(link, f.loop.params[0], kN, m, o);
  BT_CHECK(t, c.round(1U, 1U, 1U, []() { return bt::Status::kOk; }) == bt::Status::kInvalidArgument);
  BT_CHECK(t, (c.failed_at() == fl::ClientStep::kEncode) && (f.loop.mail_bytes[0] == 0U));
  BT_CHECK(t, c.round(1U, 1U, 1U, []() { return bt::Status::kIoError; }) == bt::Status::kIoError);
  BT_CHECK(t, c.failed_at() == fl::ClientStep::kTrain);
  fl::Link<double> mute = link;
  mute.send = nullptr;
  fl::FedClient<double> d(mute, f.loop.params[0], kN, m, o);
  BT_CHECK(t, (d.round(1U, 1U, 1U, []() { return bt::Status::kOk; }) == bt::Status::kInvalidArgument) &&
                  (d.failed_at() == fl::ClientStep::kArguments));
}

const bt_test::TestCase kCases[] = {
    {"slices_cover_the_batch", slices_cover_the_batch},
    {"one_member_is_the_serial_batch", one_member_is_the_serial_batch},
    {"members_even", members_even},
    {"members_uneven", members_uneven},
    {"refusals_before_any_transfer", refusals_before_any_transfer},
    {"a_failed_sample_stops_every_member", a_failed_sample_stops_every_member},
    {"rounds_are_fedavg", rounds_are_fedavg},
    {"a_silent_client_is_counted_at_the_deadline", a_silent_client_is_counted_at_the_deadline},
    {"late_damaged_and_failed_frames", late_damaged_and_failed_frames},
    {"round_refusals", round_refusals},
};

}  // namespace

BT_TEST_MAIN("nn_parallel", kCases)

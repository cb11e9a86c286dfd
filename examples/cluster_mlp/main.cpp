// SPDX-License-Identifier: Apache-2.0
// A model of your own trained on a cluster, both ways, with the installed
// package only (find_package(burtorch COMPONENTS mpi)): an 8-16-1 MLP
// (Linear 8-16 tanh, Linear 16-1) regressing a smooth function of 8 inputs
// with the mean squared error, FP64.
//
//   mpirun -np N cluster_mlp                 data-parallel: every rank takes
//                                            its slice of each global batch
//                                            (nn::DataParallel over the MPI
//                                            port's reducer)
//   mpirun -np 1+K cluster_mlp --federated   rank 0 the server, ranks 1..K
//                                            clients with a shard each
//                                            (fleet::FedServer/FedClient
//                                            over the MPI port's link)
//   cluster_mlp --federated --clients K      the same rounds in one process,
//                                            over a link of this program's
//                                            own (a loopback): no MPI
//
// Rank 0 prints the run, the loss as it goes and the final parameters
// ("params" and 17 significant digits each), so runs can be compared: N
// ranks against one process (within the bound of docs/fleet.md), the
// federated job against the loopback (bit for bit).
#include <burtorch/burtorch.hpp>
#include <burtorch/fleet/federated.hpp>
#include <burtorch/nn/nn.hpp>
#include <burtorch/port/mpi.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace bt = burtorch;
namespace nn = burtorch::nn;
namespace fl = burtorch::fleet;
namespace mpi = burtorch::port::mpi;

namespace {

// --- the model and its data ----------------------------------------------------

constexpr std::size_t kIn = 8U;
constexpr std::size_t kHidden = 16U;
constexpr std::size_t kSamples = 256U;

constexpr nn::LinearOptions hidden_options() noexcept {
  nn::LinearOptions o{};
  o.in = kIn;
  o.out = kHidden;
  o.act = nn::Activation::kTanh;
  o.weight_init = nn::Init::fan_in_uniform(nn::kGainTanh);
  o.bias_init = nn::Init::zeros();
  return o;
}
constexpr nn::LinearOptions output_options() noexcept {
  nn::LinearOptions o{};
  o.in = kHidden;
  o.out = 1U;
  o.act = nn::Activation::kIdentity;
  o.weight_init = nn::Init::fan_in_uniform(1.0);
  o.bias_init = nn::Init::zeros();
  return o;
}
constexpr std::size_t kParams = nn::Linear<double>::parameters(hidden_options()) +
                                nn::Linear<double>::parameters(output_options());
constexpr nn::MemoryPlan kPlan = nn::make_plan<double>(
    kParams, kIn + nn::Linear<double>::nodes(hidden_options()) + nn::Linear<double>::nodes(output_options()) + 2U,
    nn::Linear<double>::view_slots(hidden_options()) + nn::Linear<double>::view_slots(output_options()),
    nn::OptimizerKind::kSgd);

struct Data {
  double x[kSamples][kIn];
  double y[kSamples];
  Data() {
    for (std::size_t i = 0U; i < kSamples; ++i) {
      double z = 0.0;
      for (std::size_t k = 0U; k < kIn; ++k) {
        x[i][k] = std::sin((0.37 * static_cast<double>(i)) + (1.3 * static_cast<double>(k)));
        z += x[i][k] * (static_cast<double>(k + 1U) / 8.0) * (((k % 2U) == 0U) ? 1.0 : -1.0);
      }
      y[i] = std::tanh(z);
    }
  }
};
const Data g_data;

struct Mlp {
  nn::TrainingMemory<double, kPlan> memory;
  nn::Linear<double> hidden;
  nn::Linear<double> output;
  bool create(std::uint64_t seed) {
    nn::Rng rng(seed);
    return hidden.create(memory.tape, hidden_options(), rng) && output.create(memory.tape, output_options(), rng);
  }
  bt::Tape<double>& tape() { return memory.tape; }
  bt::View params() const {
    const bt::View h = hidden.params();
    return bt::View{h.first, static_cast<bt::Index>(kParams)};
  }
  double* values() { return memory.tape.values() + params().first; }
  bt::Value<double> loss(bt::Tape<double>& tape, std::size_t i) const {
    const bt::View x = bt::record_view(tape, kIn, [&](bt::Index k) noexcept { return tape.leaf(g_data.x[i][k]); });
    return nn::mse(tape, output.forward(tape, hidden.forward(tape, x)), &g_data.y[i]);
  }
  double mean_loss() {  // over every sample, for the report
    const bt::Mark at = memory.tape.mark();
    double total = 0.0;
    for (std::size_t i = 0U; i < kSamples; ++i) {
      total += loss(memory.tape, i).value();
      static_cast<void>(memory.tape.rewind(at));
    }
    return total / static_cast<double>(kSamples);
  }
};

nn::OptimizerOptions<double> sgd(double lr) {
  nn::OptimizerOptions<double> o;
  o.kind = nn::OptimizerKind::kSgd;
  o.lr = lr;
  return o;
}

void print_params(Mlp& m) {
  std::printf("params");
  for (std::size_t i = 0U; i < kParams; ++i) {
    std::printf("%c%.17g", (i == 0U) ? ' ' : ',', m.values()[i]);
  }
  std::printf("\n");
}

[[noreturn]] void die(const char* what, bool with_mpi) {
  std::fprintf(stderr, "cluster_mlp: %s\n", what);
  if (with_mpi) {
    mpi::abort(2);  // every rank stops, none waits for this one
  }
  std::exit(2);
}

// --- data-parallel -------------------------------------------------------------

constexpr std::size_t kBatch = 32U;
constexpr long kSteps = 60;

int data_parallel(int rank, int ranks) {
  static Mlp m;
  if (!m.create(7U)) {
    die("the model does not fit its memory plan", true);
  }
  nn::Optimizer<double> opt = m.memory.optimizer(sgd(0.1));
  std::vector<double> scratch(mpi::average_scratch(kParams + 1U, ranks));
  mpi::Scratch<double> s;
  s.values = scratch.data();
  s.count = scratch.size();
  double buffer[nn::DataParallel<double>::buffer_values(kParams)];
  nn::DataParallel<double> dp(mpi::reducer(&s), kBatch, buffer, sizeof(buffer) / sizeof(buffer[0]));
  if (rank == 0) {
    std::printf("cluster_mlp: data-parallel, %d ranks, 8-16-1 MLP (%zu parameters), batch %zu (%zu samples on rank 0), "
                "%ld steps, FP64\n",
                ranks, kParams, kBatch, dp.slice().count, kSteps);
  }
  nn::Rng batches(42U);  // alike on every rank: the same global batches
  std::size_t picks[kBatch];
  double loss = 0.0;
  for (long step = 1; step <= kSteps; ++step) {
    for (std::size_t& p : picks) {
      p = batches.below(static_cast<std::uint32_t>(kSamples));
    }
    loss = dp.step(m.tape(), m.params(), [&](bt::Tape<double>& t, std::size_t i) { return m.loss(t, picks[i]); }, opt);
    if (!std::isfinite(loss)) {
      die("training failed or diverged", true);
    }
    if ((rank == 0) && ((step % 20) == 0)) {
      std::printf("step %ld batch loss %.17g\n", step, loss);
    }
  }
  if (rank == 0) {
    std::printf("loss over all samples %.17g\n", m.mean_loss());
    print_params(m);
  }
  return 0;
}

// --- federated -----------------------------------------------------------------

constexpr long kRounds = 8;
constexpr long kLocalSteps = 5;
constexpr std::size_t kLocalBatch = 8U;
constexpr std::size_t kFrameBytes = fl::kFrameHeaderBytes + (4U * kParams) + fl::kFrameCrcBytes;

// A client: its model, its shard (samples i with i mod K == c - 1), its arrays.
struct Client {
  Mlp m;
  nn::Optimizer<double> opt{m.memory.optimizer(sgd(0.1))};
  nn::Rng rng{0U};
  std::uint32_t id = 0U;
  std::uint32_t clients = 1U;
  double global[kParams] = {};
  float update[kParams] = {};
  float residual[kParams] = {};
  std::uint8_t frame[kFrameBytes] = {};
  bool start(std::uint32_t c, std::uint32_t k) {
    id = c;
    clients = k;
    rng = nn::Rng(100U + c);
    return m.create(7U);
  }
  std::uint32_t samples() const { return static_cast<std::uint32_t>((kSamples + clients - id) / clients); }
  bt::Status train() {  // local SGD steps on the shard
    for (long s = 0; s < kLocalSteps; ++s) {
      std::size_t picks[kLocalBatch];
      for (std::size_t& p : picks) {
        p = (static_cast<std::size_t>(rng.below(samples())) * clients) + id - 1U;
      }
      const double loss = nn::serial_batch(
          m.tape(), m.params(), kLocalBatch, [&](bt::Tape<double>& t, std::size_t i) { return m.loss(t, picks[i]); },
          opt);
      if (!std::isfinite(loss)) {
        return bt::Status::kInvalidArgument;
      }
    }
    return bt::Status::kOk;
  }
  fl::FedClient<double> make(const fl::Link<double>& link) {
    fl::ClientMemory<double> mem;
    mem.global = global;
    mem.update = update;
    mem.residual = residual;
    mem.frame = frame;
    mem.frame_capacity = sizeof(frame);
    fl::EncodeOptions o;
    o.codec = fl::Codec::kRaw;
    o.client = id;
    return fl::FedClient<double>(link, m.values(), kParams, mem, o);
  }
};

// The server: the global model and FedAvg's arrays.
struct Server {
  Mlp m;
  double sum[kParams] = {};
  double mean[kParams] = {};
  std::uint8_t frame[kFrameBytes] = {};
  fl::FedServer<double> make(const fl::Link<double>& link) {
    fl::ServerMemory<double> mem;
    mem.sum = sum;
    mem.mean = mean;
    mem.frame = frame;
    mem.frame_capacity = sizeof(frame);
    return fl::FedServer<double>(link, m.values(), kParams, mem);
  }
};

void print_round(long r, const fl::RoundReport& rep, Mlp& global) {
  std::printf("round %ld accepted %zu samples %llu loss %.17g\n", r, rep.accepted,
              static_cast<unsigned long long>(rep.samples), global.mean_loss());
}

// The server's rounds over `link` (`round`, if not null, is told each
// round's number first: the loopback's clients read it).
int serve(Server& s, const fl::Link<double>& link, std::uint32_t k, std::uint32_t* round, bool with_mpi) {
  std::printf("cluster_mlp: federated, %u clients, 8-16-1 MLP (%zu parameters), %ld rounds of %ld local steps of "
              "%zu samples, raw frames\n",
              k, kParams, kRounds, kLocalSteps, kLocalBatch);
  fl::FedServer<double> server = s.make(link);
  for (long r = 1; r <= kRounds; ++r) {
    if (round != nullptr) {
      *round = static_cast<std::uint32_t>(r);
    }
    fl::RoundReport rep;
    if (server.round(static_cast<std::uint32_t>(r), k, 0.0, &rep) != bt::Status::kOk) {
      die("a round failed", with_mpi);
    }
    print_round(r, rep, s.m);
  }
  print_params(s.m);
  return 0;
}

int federated_mpi(int rank, int ranks) {
  if (ranks < 2) {
    die("--federated needs a server and a client: mpirun -np 2 or more (or --clients K without MPI)", true);
  }
  const std::uint32_t k = static_cast<std::uint32_t>(ranks - 1);
  const fl::Link<double> link = mpi::link<double>();
  if (rank > 0) {
    static Client c;
    if (!c.start(static_cast<std::uint32_t>(rank), k)) {
      die("the model does not fit its memory plan", true);
    }
    fl::FedClient<double> me = c.make(link);
    for (long r = 1; r <= kRounds; ++r) {
      if (me.round(static_cast<std::uint32_t>(r), c.samples(), 0U, [&]() { return c.train(); }) != bt::Status::kOk) {
        die("a client's round failed", true);
      }
    }
    return 0;
  }
  static Server s;
  if (!s.m.create(7U)) {
    die("the model does not fit its memory plan", true);
  }
  return serve(s, link, k, nullptr, true);
}

// The same rounds in one process: a link of this program's own. The
// server's receive runs the client's round, whose send leaves the frame in
// a mailbox; the broadcast is a copy.
struct Loopback {
  std::vector<Client>* clients = nullptr;
  std::vector<fl::FedClient<double>>* sides = nullptr;
  const double* global = nullptr;
  std::uint32_t round = 0U;
  std::uint8_t mail[kFrameBytes] = {};
  std::size_t mail_bytes = 0U;
};
bt::Status to_clients(void* context, double* data, std::size_t n) noexcept {
  static_cast<Loopback*>(context)->global = data;  // the clients copy it when they run
  static_cast<void>(n);
  return bt::Status::kOk;
}
bt::Status from_server(void* context, double* data, std::size_t n) noexcept {
  std::memcpy(data, static_cast<Loopback*>(context)->global, n * sizeof(double));
  return bt::Status::kOk;
}
bt::Status post(void* context, const std::uint8_t* bytes, std::size_t size) noexcept {
  Loopback* const l = static_cast<Loopback*>(context);
  std::memcpy(l->mail, bytes, size);
  l->mail_bytes = size;
  return bt::Status::kOk;
}
bt::Status collect(void* context, std::uint32_t client, std::uint8_t* buffer, std::size_t capacity, double deadline,
                   std::size_t* got, bool* arrived) noexcept {
  static_cast<void>(deadline);
  Loopback* const l = static_cast<Loopback*>(context);
  Client& c = (*l->clients)[client - 1U];
  const bt::Status s = (*l->sides)[client - 1U].round(l->round, c.samples(), 0U, [&c]() { return c.train(); });
  if ((s != bt::Status::kOk) || (l->mail_bytes > capacity)) {
    return (s != bt::Status::kOk) ? s : bt::Status::kCapacityExceeded;
  }
  std::memcpy(buffer, l->mail, l->mail_bytes);
  *got = l->mail_bytes;
  *arrived = true;
  return bt::Status::kOk;
}

int federated_loopback(std::uint32_t k) {
  static Server s;
  std::vector<Client> clients(k);
  std::vector<fl::FedClient<double>> sides;
  Loopback loop;
  loop.clients = &clients;
  loop.sides = &sides;
  fl::Link<double> client_link;
  client_link.broadcast = &from_server;
  client_link.send = &post;
  client_link.context = &loop;
  for (std::uint32_t c = 1U; c <= k; ++c) {
    if (!clients[c - 1U].start(c, k)) {
      die("the model does not fit its memory plan", false);
    }
    sides.push_back(clients[c - 1U].make(client_link));
  }
  if (!s.m.create(7U)) {
    die("the model does not fit its memory plan", false);
  }
  fl::Link<double> server_link;
  server_link.broadcast = &to_clients;
  server_link.receive = &collect;
  server_link.context = &loop;
  return serve(s, server_link, k, &loop.round, false);
}

}  // namespace

int main(int argc, char** argv) {
  bool federated = false;
  long loopback_clients = 0;
  for (int i = 1; i < argc; ++i) {
    if ((std::strcmp(argv[i], "--help") == 0) || (std::strcmp(argv[i], "-h") == 0)) {
      std::printf("usage: mpirun -np N %s                data-parallel on N ranks\n"
                  "       mpirun -np 1+K %s --federated  rank 0 the server, K clients\n"
                  "       %s --federated --clients K     the same rounds in one process (no MPI)\n"
                  "An 8-16-1 MLP of the program's own on the installed libburtorch; rank 0 prints the\n"
                  "losses and the final parameters.\n",
                  argv[0], argv[0], argv[0]);
      return 0;
    }
    if (std::strcmp(argv[i], "--federated") == 0) {
      federated = true;
    } else if ((std::strcmp(argv[i], "--clients") == 0) && ((i + 1) < argc)) {
      char* end = nullptr;
      loopback_clients = std::strtol(argv[++i], &end, 10);
      if ((*end != '\0') || (loopback_clients < 1) || (loopback_clients > 64)) {
        die("bad value for --clients (want 1 to 64)", false);
      }
    } else {
      std::fprintf(stderr, "cluster_mlp: unknown option '%s' (see --help)\n", argv[i]);
      return 2;
    }
  }
  if (loopback_clients > 0) {
    if (!federated) {
      die("--clients goes with --federated", false);
    }
    return federated_loopback(static_cast<std::uint32_t>(loopback_clients));
  }
  int rank = 0;
  int ranks = 1;
  if (mpi::init(&rank, &ranks) != bt::Status::kOk) {
    die("MPI did not start", false);
  }
  const int status = federated ? federated_mpi(rank, ranks) : data_parallel(rank, ranks);
  std::fflush(stdout);
  mpi::finalize();
  return status;
}

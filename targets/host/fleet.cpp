// SPDX-License-Identifier: Apache-2.0
// burtorch-fleet: federated averaging (McMahan et al. 2017) of the makemore
// MLP over MPI ranks (docs/fleet.md). Rank 0 is the server; ranks 1..K are
// clients, each with a non-IID shard of the words (client c gets the words
// whose first letter's index is c - 1 modulo K). Each round the server
// broadcasts the global parameters; each client trains E local SGD steps on
// its shard, encodes its update (local minus global parameters, FP32) with
// the library's codec (fleet::encode, error feedback per client) and sends
// the frame; the server checks and adds each frame weighted by the client's
// sample count (fleet::FedAvg) and adds the mean update to the global model.
// With --round-deadline the server closes a round at its deadline with the
// frames that arrived (a client that never sends is counted, not waited for).
// --centralised trains the same model in one process on all the clients'
// data, K * B samples per step, for the same rounds * E steps: the baseline.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <burtorch/fleet/codec.hpp>
#include <burtorch/fleet/fedavg.hpp>
#include <burtorch/fleet/federated.hpp>

#include "default_data.hpp"
#include "trainer.hpp"

namespace {

namespace bt = burtorch;
namespace nn = burtorch::nn;
namespace fl = burtorch::fleet;

constexpr const char* kProgram = "burtorch-fleet";
constexpr const char* kUsage =
    "usage: mpirun -np 1+K burtorch-fleet [flags]   (rank 0 the server, K clients)\n"
    "       burtorch-fleet --centralised [flags]   (one process on all K clients' data)\n"
    "Federated averaging of the makemore MLP (vocabulary 27, context 16, FP64 training,\n"
    "FP32 updates) over non-IID shards of a word list split by first letter. Prints\n"
    "'round <r> val <loss> bytes <per client> accepted <a> refused <f>' per round.\n"
    "Exit status 2: bad flags, data or an MPI failure.\n"
    "  --rounds R         rounds (default 20)\n"
    "  --local-steps E    local SGD steps per round (default 5)\n"
    "  --batch B          samples per local step (default 16)\n"
    "  --hidden E         hidden width (default 32)\n"
    "  --lr X             local SGD learning rate (default 0.1)\n"
    "  --seed S           seed (default 42)\n"
    "  --data FILE        word list, one word per line (default: generated names)\n"
    "  --codec C          raw | topk | randk | int8 (default raw)\n"
    "  --keep P           topk, randk: percent of the values kept, 0.01 to 100 (default 10)\n"
    "  --block N          int8: values per scale (default 64)\n"
    "  --no-feedback      no error feedback (the residual is dropped)\n"
    "  --dp-clip C        DP-SGD in the local steps: each sample's gradient clipped to L2\n"
    "                     norm C (nn::dp_serial_batch; default off)\n"
    "  --dp-noise S       DP-SGD's noise multiplier sigma (default 0; needs --dp-clip)\n"
    "  --eval-samples N   validation samples evaluated per round (default 2000)\n"
    "  --csv FILE         round, val loss, bytes per client (default none)\n"
    "  --centralised      the baseline: no MPI, one process\n"
    "  --clients K        --centralised: the K of the federated run (default 3)\n"
    "  --damage R:C       client C damages one byte of its frame in round R (a test)\n"
    "  --round-deadline S the server closes each round S seconds after its broadcast with\n"
    "                     the frames that arrived, counting each client that sent none\n"
    "                     (default 0: wait for every client)\n"
    "  --silent R:C       client C sends no frame in round R (a test of the deadline)\n"
    "  --decode-frame HEX a device's frame (hex): checked, decoded, added to a FedAvg round;\n"
    "                     prints the decoded FP32 bits (no MPI, no training; frames of at\n"
    "                     most 2^24 values)\n"
    "  --help             this text\n";

constexpr std::size_t kContext = 16U;
constexpr std::uint8_t kBoundary = 0U;
constexpr std::size_t kDefaultWords = 8000U;

struct Flags {
  long rounds = 20;
  long local_steps = 5;
  long batch = 16;
  long hidden = 32;
  double lr = 0.1;
  long seed = 42;
  std::string data;
  fl::Codec codec = fl::Codec::kRaw;
  double keep = 10.0;
  long block = 64;
  bool feedback = true;
  double dp_clip = 0.0;  // 0: no DP-SGD
  double dp_noise = 0.0;
  long eval_samples = 2000;
  std::string csv;
  bool centralised = false;
  long clients = 3;
  long damage_round = -1;
  long damage_client = -1;
  double round_deadline = 0.0;  // 0: wait for every client
  long silent_round = -1;
  long silent_client = -1;
  std::string frame_hex;
};

struct Split {
  std::vector<std::uint8_t> contexts;
  std::vector<std::uint8_t> targets;
  std::size_t size() const { return targets.size(); }
};

void add_word(const std::string& w, Split& s) {
  std::uint8_t ctx[kContext] = {};
  for (std::size_t i = 0U; i <= w.size(); ++i) {
    const std::uint8_t y = (i < w.size()) ? static_cast<std::uint8_t>(w[i] - 'a' + 1) : kBoundary;
    s.contexts.insert(s.contexts.end(), ctx, ctx + kContext);
    s.targets.push_back(y);
    std::copy(ctx + 1, ctx + kContext, ctx);
    ctx[kContext - 1U] = y;
  }
}

std::vector<std::string> load_words(const Flags& f) {
  std::vector<std::string> words;
  if (f.data.empty()) {
    char buffer[default_data::kMaxNameLength + 1U];
    for (std::size_t i = 0U; i < kDefaultWords; ++i) {
      default_data::name(i, buffer);
      words.emplace_back(buffer);
    }
    return words;
  }
  std::string text;
  trainer::read_file(kProgram, f.data, trainer::kMaxDataBytes, text);
  std::size_t at = 0U;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    end = (end == std::string::npos) ? text.size() : end;
    std::string w = text.substr(at, end - at);
    at = end + 1U;
    if (!w.empty() && (w.back() == '\r')) {
      w.pop_back();
    }
    if (w.empty()) {
      continue;
    }
    for (char& ch : w) {
      ch = ((ch >= 'A') && (ch <= 'Z')) ? static_cast<char>(ch - 'A' + 'a') : ch;
      if ((ch < 'a') || (ch > 'z')) {
        trainer::fail(kProgram, "'" + f.data + "': '" + w + "' is not a word of letters a-z");
      }
    }
    words.push_back(w);
  }
  if (words.size() < 2U) {
    trainer::fail(kProgram, "'" + f.data + "' has fewer than 2 words");
  }
  return words;
}

Flags parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if ((flag == "--help") || (flag == "-h")) {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (flag == "--centralised") {
      f.centralised = true;
      continue;
    }
    if (flag == "--no-feedback") {
      f.feedback = false;
      continue;
    }
    if (i + 1 >= argc) {
      trainer::fail(kProgram, "unknown flag or missing value: '" + flag + "' (see --help)");
    }
    const char* v = argv[++i];
    if (flag == "--rounds") {
      f.rounds = trainer::parse_long(kProgram, "--rounds", v, 1, 100000L);
    } else if (flag == "--local-steps") {
      f.local_steps = trainer::parse_long(kProgram, "--local-steps", v, 1, 100000L);
    } else if (flag == "--batch") {
      f.batch = trainer::parse_long(kProgram, "--batch", v, 1, 100000L);
    } else if (flag == "--hidden") {
      f.hidden = trainer::parse_long(kProgram, "--hidden", v, 1, 4096L);
    } else if (flag == "--lr") {
      f.lr = trainer::parse_double(kProgram, "--lr", v);
    } else if (flag == "--seed") {
      f.seed = trainer::parse_long(kProgram, "--seed", v, 0, 0x7FFFFFFFL);
    } else if (flag == "--data") {
      f.data = v;
    } else if (flag == "--codec") {
      const std::string c = v;
      if (c == "raw") {
        f.codec = fl::Codec::kRaw;
      } else if (c == "topk") {
        f.codec = fl::Codec::kTopK;
      } else if (c == "randk") {
        f.codec = fl::Codec::kRandK;
      } else if (c == "int8") {
        f.codec = fl::Codec::kInt8;
      } else {
        trainer::fail(kProgram, "bad value for --codec: '" + c + "' (want raw, topk, randk or int8)");
      }
    } else if (flag == "--keep") {
      f.keep = trainer::parse_double(kProgram, "--keep", v);
      if (!(f.keep >= 0.01) || !(f.keep <= 100.0)) {
        trainer::fail(kProgram, std::string("bad value for --keep: '") + v + "' (want 0.01 to 100)");
      }
    } else if (flag == "--dp-clip") {
      f.dp_clip = trainer::parse_double(kProgram, "--dp-clip", v);
      if (!(f.dp_clip > 0.0) || !std::isfinite(f.dp_clip)) {
        trainer::fail(kProgram, std::string("bad value for --dp-clip: '") + v + "' (want a positive number)");
      }
    } else if (flag == "--dp-noise") {
      f.dp_noise = trainer::parse_double(kProgram, "--dp-noise", v);
      if (!(f.dp_noise >= 0.0) || !std::isfinite(f.dp_noise)) {
        trainer::fail(kProgram, std::string("bad value for --dp-noise: '") + v + "' (want a number >= 0)");
      }
    } else if (flag == "--block") {
      f.block = trainer::parse_long(kProgram, "--block", v, 1, 65535L);
    } else if (flag == "--eval-samples") {
      f.eval_samples = trainer::parse_long(kProgram, "--eval-samples", v, 1, 100000000L);
    } else if (flag == "--csv") {
      f.csv = v;
    } else if (flag == "--decode-frame") {
      f.frame_hex = v;
    } else if (flag == "--clients") {
      f.clients = trainer::parse_long(kProgram, "--clients", v, 1, 4096L);
    } else if (flag == "--round-deadline") {
      f.round_deadline = trainer::parse_double(kProgram, "--round-deadline", v);
      if (!(f.round_deadline >= 0.0) || !(f.round_deadline <= 86400.0)) {
        trainer::fail(kProgram, std::string("bad value for --round-deadline: '") + v + "' (want seconds, 0 to 86400)");
      }
    } else if (flag == "--silent") {
      const std::string d = v;
      const std::size_t colon = d.find(':');
      if (colon == std::string::npos) {
        trainer::fail(kProgram, "bad value for --silent: '" + d + "' (want ROUND:CLIENT)");
      }
      f.silent_round = trainer::parse_long(kProgram, "--silent", d.substr(0U, colon).c_str(), 1, 100000L);
      f.silent_client = trainer::parse_long(kProgram, "--silent", d.substr(colon + 1U).c_str(), 1, 4096L);
    } else if (flag == "--damage") {
      const std::string d = v;
      const std::size_t colon = d.find(':');
      if (colon == std::string::npos) {
        trainer::fail(kProgram, "bad value for --damage: '" + d + "' (want ROUND:CLIENT)");
      }
      f.damage_round = trainer::parse_long(kProgram, "--damage", d.substr(0U, colon).c_str(), 1, 100000L);
      f.damage_client = trainer::parse_long(kProgram, "--damage", d.substr(colon + 1U).c_str(), 1, 4096L);
    } else {
      trainer::fail(kProgram, "unknown flag: '" + flag + "' (see --help)");
    }
  }
  if ((f.dp_noise > 0.0) && (f.dp_clip == 0.0)) {
    trainer::fail(kProgram, "--dp-noise needs --dp-clip (the noise is sigma * C)");
  }
  return f;
}

// The model, its tape and the data every rank holds.
struct World {
  std::vector<std::string> words;
  Split val;
  std::vector<Split> shards;  // shards[c]: client c + 1's training samples
  Split all;                  // the union, for --centralised
};

World make_world(const Flags& f, std::size_t clients) {
  World w;
  w.words = load_words(f);
  nn::Rng split_rng(static_cast<std::uint64_t>(f.seed) ^ 0x5EEDULL);
  for (std::size_t i = w.words.size() - 1U; i > 0U; --i) {
    std::swap(w.words[i], w.words[split_rng.below(static_cast<std::uint32_t>(i + 1U))]);
  }
  const std::size_t n_train = (w.words.size() * 9U) / 10U;
  w.shards.resize(clients);
  for (std::size_t i = 0U; i < w.words.size(); ++i) {
    if (i >= n_train) {
      add_word(w.words[i], w.val);
      continue;
    }
    const std::size_t letter = static_cast<std::size_t>(w.words[i][0] - 'a');
    add_word(w.words[i], w.shards[letter % clients]);
    add_word(w.words[i], w.all);
  }
  return w;
}

using Model = nn::MakemoreMlp<double>;

double validation(Model& model, bt::Tape<double>& tape, const Split& val, std::size_t n_eval) {
  const bt::Mark at = tape.mark();
  double total = 0.0;
  for (std::size_t i = 0U; i < n_eval; ++i) {
    total += model.loss(tape, &val.contexts[i * kContext], val.targets[i]).value();
    static_cast<void>(tape.rewind(at));
  }
  return total / static_cast<double>(n_eval);
}

// `steps` SGD steps of `batch` samples drawn from `data` with `rng`; with
// --dp-clip, DP-SGD's clipped and noised batches (noise drawn from `noise`).
void local_steps(Model& model, bt::Tape<double>& tape, nn::Optimizer<double>& opt, const Split& data, long steps,
                 long batch, nn::Rng& rng, const Flags& f, nn::Rng& noise) {
  std::vector<std::uint32_t> picks(static_cast<std::size_t>(batch));
  std::vector<double> clipped_sum((f.dp_clip > 0.0) ? model.params().count : 0U);
  const auto limit = static_cast<std::uint32_t>(data.size());
  for (long s = 0; s < steps; ++s) {
    for (std::uint32_t& k : picks) {
      k = rng.below(limit);
    }
    const auto sample_loss = [&](bt::Tape<double>& tp, std::size_t i) {
      return model.loss(tp, &data.contexts[picks[i] * kContext], data.targets[picks[i]]);
    };
    double loss = 0.0;
    if (f.dp_clip > 0.0) {
      nn::DpOptions<double> dp;
      dp.clip = f.dp_clip;
      dp.noise = f.dp_noise;
      loss = nn::dp_serial_batch(tape, model.params(), picks.size(), sample_loss, dp, clipped_sum.data(), noise);
    } else {
      loss = nn::serial_batch(tape, model.params(), picks.size(), sample_loss);
    }
    if (!std::isfinite(loss) || (opt.step(tape, model.params()) != bt::Status::kOk)) {
      trainer::fail(kProgram, "local training failed: " + std::string(bt::status_name(tape.status())));
    }
  }
}

class Csv {
 public:
  explicit Csv(const std::string& path) : path_(path) {
    if (!path.empty()) {
      file_ = std::fopen(path.c_str(), "w");
      if ((file_ == nullptr) || (std::fprintf(file_, "round,val_loss,bytes_per_client\n") < 0)) {
        trainer::fail(kProgram, "cannot write --csv '" + path + "'");
      }
    }
  }
  void row(long round, double val, double bytes) {
    if ((file_ != nullptr) && (std::fprintf(file_, "%ld,%.9g,%.1f\n", round, val, bytes) < 0)) {
      trainer::fail(kProgram, "cannot write --csv '" + path_ + "'");
    }
  }
  void close() {
    if ((file_ != nullptr) && (std::fclose(file_) != 0)) {
      file_ = nullptr;
      trainer::fail(kProgram, "cannot write --csv '" + path_ + "'");
    }
    file_ = nullptr;
  }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

#if BURTORCH_TRAINER_MPI
// The MPI link with the tests' faults in transit: --damage R:C flips a bit
// of client C's frame in round R, --silent R:C drops it.
struct Transit {
  fl::Link<double> inner;
  const Flags& f;
  long rank;
  long round;
  std::vector<std::uint8_t> copy;  // a damaged frame
  static bt::Status send(void* context, const std::uint8_t* bytes, std::size_t size) noexcept {
    Transit* const t = static_cast<Transit*>(context);
    if ((t->round == t->f.silent_round) && (t->rank == t->f.silent_client)) {
      return bt::Status::kOk;  // this round's frame never leaves the client
    }
    if ((t->round == t->f.damage_round) && (t->rank == t->f.damage_client) && (size <= t->copy.size())) {
      std::copy(bytes, bytes + size, t->copy.begin());
      t->copy[size / 2U] = static_cast<std::uint8_t>(t->copy[size / 2U] ^ 0x10U);  // damaged in transit
      return t->inner.send(t->inner.context, t->copy.data(), size);
    }
    return t->inner.send(t->inner.context, bytes, size);
  }
};

// The server's log of a round's late, missing and refused frames.
void print_notice(void* context, const fl::ClientNotice& n) noexcept {
  const long r = *static_cast<const long*>(context);
  switch (n.event) {
    case fl::ClientEvent::kLate:
      std::printf("round %ld: dropped a late frame of client %u (round %u)\n", r, n.client, n.frame_round);
      break;
    case fl::ClientEvent::kMissing:
      std::printf("round %ld: client %u sent no frame before the deadline\n", r, n.client);
      break;
    default:
      std::printf("round %ld: refused the frame of client %u: %s\n", r, n.client, bt::status_name(n.status));
      break;
  }
}

std::string client_failure(fl::ClientStep step, bt::Status s, long r) {
  switch (step) {
    case fl::ClientStep::kBroadcast:
      return "round " + std::to_string(r) + ": the broadcast failed";
    case fl::ClientStep::kSend:
      return "sending the update failed";
    default:
      return "encoding the update failed: " + std::string(bt::status_name(s));
  }
}
#endif

int run(const Flags& f, int rank, int ranks) {
  const std::size_t clients = f.centralised ? static_cast<std::size_t>(f.clients) : static_cast<std::size_t>(ranks - 1);
  const World world = make_world(f, clients);
  for (std::size_t c = 0U; c < clients; ++c) {
    if (world.shards[c].size() == 0U) {
      trainer::fail(kProgram, "client " + std::to_string(c + 1U) + " has no words (fewer clients, or more data)");
    }
  }
  nn::MlpOptions config;
  config.hidden = static_cast<bt::Index>(f.hidden);
  const nn::MemoryPlan plan = Model::plan(config, nn::OptimizerKind::kSgd);
  trainer::Arena arena(kProgram, plan.tape_bytes);
  bt::Tape<double> tape(arena.data(), plan.tape_bytes, plan.nodes, plan.slots, plan.parameters);
  static Model model;
  trainer::create_model(kProgram, model, tape, config, static_cast<std::uint64_t>(f.seed));
  const bt::View params = model.params();
  const std::size_t n = params.count;
  double* w = tape.values() + params.first;
  nn::OptimizerOptions<double> oc;
  oc.kind = nn::OptimizerKind::kSgd;
  oc.lr = f.lr;
  nn::Optimizer<double> opt(oc, nullptr, 0U);
  const std::size_t n_eval = std::min(world.val.size(), static_cast<std::size_t>(f.eval_samples));

  fl::EncodeOptions eo;
  eo.codec = f.codec;
  eo.block = static_cast<std::uint16_t>(f.block);
  const double kept = std::ceil(static_cast<double>(n) * f.keep / 100.0);
  eo.kept = static_cast<std::uint32_t>(std::min(static_cast<double>(n), std::max(1.0, kept)));
  const std::size_t capacity = fl::max_frame_bytes(n, eo);
  if (capacity == 0U) {
    trainer::fail(kProgram, "the codec's options do not fit the model");
  }
  if (rank == 0) {
    std::printf("federated makemore MLP: hidden %ld, %zu parameters, %zu clients, %ld rounds of %ld local steps of "
                "%ld samples, lr %g\n",
                f.hidden, n, clients, f.rounds, f.local_steps, f.batch, f.lr);
    for (std::size_t c = 0U; c < clients; ++c) {
      std::printf("  client %zu: %zu samples (words starting with letters %zu mod %zu)\n", c + 1U,
                  world.shards[c].size(), c, clients);
    }
    std::printf("  validation: %zu samples; %s", n_eval,
                f.centralised ? "centralised baseline, one process" : "codec per --codec");
    if (f.dp_clip > 0.0) {
      std::printf("; DP-SGD: clip %g, noise multiplier %g", f.dp_clip, f.dp_noise);
    }
    std::printf("\n");
  }
  Csv csv(rank == 0 ? f.csv : std::string());

  nn::Rng noise(static_cast<std::uint64_t>(f.seed) + std::uint64_t{0xD9U} + static_cast<std::uint64_t>(static_cast<unsigned>(rank)));
  if (f.centralised) {
    nn::Rng rng(static_cast<std::uint64_t>(f.seed) + 1U);
    for (long r = 1; r <= f.rounds; ++r) {
      local_steps(model, tape, opt, world.all, f.local_steps, f.batch * static_cast<long>(clients), rng, f, noise);
      const double val = validation(model, tape, world.val, n_eval);
      std::printf("round %ld val %.9g bytes 0 accepted 0 refused 0\n", r, val);
      csv.row(r, val, 0.0);
    }
    csv.close();
    trainer::check_stdout(kProgram);
    return 0;
  }
#if BURTORCH_TRAINER_MPI
  // The round protocol is the library's (fleet::FedServer, fleet::FedClient)
  // over the MPI port's link; --damage and --silent act in transit (Transit).
  Transit transit{bt::port::mpi::link<double>(), f, rank, 0, std::vector<std::uint8_t>(capacity)};
  fl::Link<double> link = transit.inner;
  link.context = &transit;
  link.send = &Transit::send;
  std::vector<std::uint8_t> frame(capacity);
  if (rank > 0) {
    const std::size_t client = static_cast<std::size_t>(rank) - 1U;
    std::vector<double> global(n);
    std::vector<float> update(n, 0.0F);
    std::vector<float> residual(n, 0.0F);
    std::vector<std::uint32_t> scratch(eo.kept);
    fl::ClientMemory<double> memory;
    memory.global = global.data();
    memory.update = update.data();
    memory.residual = f.feedback ? residual.data() : nullptr;
    memory.frame = frame.data();
    memory.frame_capacity = frame.size();
    memory.scratch = scratch.data();
    memory.scratch_count = scratch.size();
    eo.client = static_cast<std::uint32_t>(rank);
    fl::FedClient<double> me(link, w, n, memory, eo);
    nn::Rng rng(static_cast<std::uint64_t>(f.seed) + 1U + client);
    const Split& shard = world.shards[client];
    for (long r = 1; r <= f.rounds; ++r) {
      transit.round = r;
      const std::uint32_t seed = static_cast<std::uint32_t>(
          (static_cast<std::uint64_t>(f.seed) * 1000003U) + (static_cast<std::uint64_t>(r) * 101U) +
          static_cast<std::uint64_t>(rank));
      const bt::Status s =
          me.round(static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(shard.size()), seed, [&]() {
            local_steps(model, tape, opt, shard, f.local_steps, f.batch, rng, f, noise);
            return bt::Status::kOk;
          });
      if (s != bt::Status::kOk) {
        trainer::fail(kProgram, client_failure(me.failed_at(), s, r));
      }
    }
    trainer::check_stdout(kProgram);
    return 0;
  }
  std::vector<double> sum(n);
  std::vector<double> mean(n);
  fl::ServerMemory<double> memory;
  memory.sum = sum.data();
  memory.mean = mean.data();
  memory.frame = frame.data();
  memory.frame_capacity = frame.size();
  fl::FedServer<double> server(link, w, n, memory);
  const bool timed = f.round_deadline > 0.0;
  for (long r = 1; r <= f.rounds; ++r) {
    fl::RoundReport report;
    const bt::Status s = server.round(static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(ranks - 1),
                                      f.round_deadline, &report, &print_notice, &r);
    if (s != bt::Status::kOk) {
      trainer::fail(kProgram, "round " + std::to_string(r) + ": the broadcast failed");
    }
    const double val = validation(model, tape, world.val, n_eval);
    const double per_client = static_cast<double>(report.bytes) / static_cast<double>(ranks - 1);
    std::printf("round %ld val %.9g bytes %.0f accepted %zu refused %zu", r, val, per_client, report.accepted,
                report.refused);
    if (timed) {
      std::printf(" missing %zu", report.missing);
    }
    std::printf("\n");
    csv.row(r, val, per_client);
    trainer::check_stdout(kProgram);
  }
  csv.close();
  trainer::check_stdout(kProgram);
  return 0;
#else
  trainer::fail(kProgram, "federated rounds need a build with MPI (burtorch::port_mpi); --centralised runs without");
#endif
}

// The value of one hex digit, or -1 (only 0-9, a-f, A-F: no sign, no
// space, no "0x", which strtoul would take).
int hex_digit(char c) {
  if ((c >= '0') && (c <= '9')) {
    return c - '0';
  }
  if ((c >= 'a') && (c <= 'f')) {
    return c - 'a' + 10;
  }
  if ((c >= 'A') && (c <= 'F')) {
    return c - 'A' + 10;
  }
  return -1;
}

// The most values --decode-frame decodes (a device's model; 2^24 values is
// 64 MiB of FP32): a frame claiming more is refused from its header, before
// anything is allocated for it.
constexpr std::uint32_t kMaxDecodeValues = 1U << 24U;

// --decode-frame: the host's side of a device's frame.
int decode_frame(const std::string& hex) {
  if ((hex.size() % 2U) != 0U) {
    trainer::fail(kProgram, "--decode-frame: an odd number of hex digits");
  }
  std::vector<std::uint8_t> bytes;
  for (std::size_t i = 0U; (i + 1U) < hex.size(); i += 2U) {
    const int high = hex_digit(hex[i]);
    const int low = hex_digit(hex[i + 1U]);
    if ((high < 0) || (low < 0)) {
      trainer::fail(kProgram, "--decode-frame: '" + hex.substr(i, 2U) + "' is not a hex byte");
    }
    bytes.push_back(static_cast<std::uint8_t>((high * 16) + low));
  }
  fl::FrameHeader h;
  bt::Status s = fl::check_frame(bytes.data(), bytes.size(), &h);
  if (s != bt::Status::kOk) {
    trainer::fail(kProgram, std::string("--decode-frame: the frame is refused: ") + bt::status_name(s));
  }
  if (h.count > kMaxDecodeValues) {
    trainer::fail(kProgram, "--decode-frame: the frame claims " + std::to_string(h.count) + " values, more than the " +
                                std::to_string(kMaxDecodeValues) + " this tool decodes");
  }
  std::vector<float> out(h.count);
  s = fl::decode(bytes.data(), bytes.size(), out.data(), out.size(), nullptr);
  std::vector<double> sum(h.count);
  std::vector<double> mean(h.count);
  fl::FedAvg<double> avg(sum.data(), sum.size());
  if ((s != bt::Status::kOk) || (avg.begin(h.count, h.round) != bt::Status::kOk) ||
      (avg.add(bytes.data(), bytes.size()) != bt::Status::kOk) || (avg.average(mean.data()) != bt::Status::kOk)) {
    trainer::fail(kProgram, "--decode-frame: decoding or the round failed");
  }
  std::printf("frame: %zu bytes, codec %u, %u values, %u samples, round %u, client %u\n", bytes.size(),
              static_cast<unsigned>(h.codec), h.count, h.samples, h.round, h.client);
  std::printf("decoded ");
  for (std::size_t i = 0U; i < out.size(); ++i) {
    std::uint32_t bits = 0U;
    std::memcpy(&bits, &out[i], sizeof(bits));
    std::printf("%08x%s", static_cast<unsigned>(bits), (i + 1U < out.size()) ? "," : "\n");
  }
  bool same = true;
  for (std::size_t i = 0U; i < out.size(); ++i) {
    same = same && (mean[i] == static_cast<double>(out[i]));
  }
  std::printf("round %u: accepted %zu frame(s), %llu samples; the round's mean is the frame's update: %s\n", h.round,
              avg.accepted(), static_cast<unsigned long long>(avg.samples()), same ? "yes" : "no");
  trainer::check_stdout(kProgram);
  return same ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Flags f = parse(argc, argv);
  if (!f.frame_hex.empty()) {
    try {
      return decode_frame(f.frame_hex);
    } catch (const std::bad_alloc&) {
      trainer::fail(kProgram, "--decode-frame: out of memory");
    }
  }
  int rank = 0;
  int ranks = 1;
  if (!f.centralised) {
    trainer::Options o;
    o.distributed = true;
    o.batch = 0;  // no batch to split: the clients train their own
    trainer::start_distributed(kProgram, o);  // MPI, one-line errors that stop every rank
    rank = o.rank;
    ranks = o.ranks;
    if (ranks < 2) {
      trainer::fail(kProgram, "needs a server and at least one client: mpirun -np 2 or more (or --centralised)");
    }
  }
  try {
    return run(f, rank, ranks);
  } catch (const std::bad_alloc&) {
    trainer::fail(kProgram, "out of memory");
  }
}

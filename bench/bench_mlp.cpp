// The paper's makemore MLP (Tables 5/6) in FP32: time per SGD step with
// serial batches (forward, backward, rewind per sample; then one update).
// Vocabulary 27, context 16, embedding 64, tanh hidden layer of width e,
// d = 1,755 + 1,052 e parameters. Data: a word list (names.txt) encoded as
// in makemore; without --data a small generated list is used (smoke tests).
//
// Usage: bench_mlp --hidden E --batch B [--steps N] [--warmup W]
//                  [--data FILE] [--lr X] [--seed S]
// Prints READY once data and model are initialised, then one JSON line.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

constexpr std::size_t kContext = 16U;

// The words as one token stream ".emma.olivia.ava." (0 = boundary, 1..26 =
// a..z). Every position p >= 1 is one makemore sample: target stream[p],
// context the (up to) 16 tokens before it back to the word's start, zero
// padded, exactly as makemore's (X, Y) rows. One byte per sample instead of
// 17: the data set does not dominate the program's memory.
struct Data {
  std::vector<std::uint8_t> stream;
  std::uint32_t samples() const { return static_cast<std::uint32_t>(stream.size() - 1U); }
  // Sample k (0-based): writes its context, returns its target.
  std::uint8_t sample(std::uint32_t k, std::uint8_t* context) const {
    const std::size_t p = static_cast<std::size_t>(k) + 1U;
    std::size_t start = p;  // first token of the word that p belongs to
    while ((start > 0U) && (stream[start - 1U] != 0U)) {
      --start;
    }
    for (std::size_t i = 0U; i < kContext; ++i) {
      const std::size_t back = kContext - i;  // context[i] is stream[p - back]
      context[i] = ((p >= back) && ((p - back) >= start)) ? stream[p - back] : 0U;
    }
    return stream[p];
  }
};

void add_word(const std::string& w, Data& d) {
  for (char c : w) {
    d.stream.push_back(static_cast<std::uint8_t>(c - 'a' + 1));
  }
  d.stream.push_back(0U);
}

bool load(const char* path, Data& d) {
  d.stream.push_back(0U);
  if (path == nullptr) {
    // A fixed pseudo-random word list (smoke runs without ../shared/data).
    bench::Sampler s(7U);
    for (int i = 0; i < 2000; ++i) {
      std::string w;
      const std::uint32_t len = 3U + s.below(6U);
      for (std::uint32_t k = 0U; k < len; ++k) {
        w.push_back(static_cast<char>('a' + s.below(26U)));
      }
      add_word(w, d);
    }
    return true;
  }
  std::string text;
  if (!bench::read_file(path, text)) {
    return false;
  }
  std::size_t at = 0U;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    end = (end == std::string::npos) ? text.size() : end;
    std::string w;
    for (std::size_t i = at; i < end; ++i) {
      const char c = text[i];
      if ((c >= 'a') && (c <= 'z')) {
        w.push_back(c);
      } else if ((c >= 'A') && (c <= 'Z')) {
        w.push_back(static_cast<char>(c - 'A' + 'a'));
      }
    }
    if (!w.empty()) {
      add_word(w, d);
    }
    at = end + 1U;
  }
  std::string().swap(text);
  d.stream.shrink_to_fit();
  return d.stream.size() > 1U;
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Flags flags(argc, argv);
  if (!flags.check({"--hidden", "--batch", "--steps", "--warmup", "--data", "--lr", "--seed"}, {})) {
    std::fprintf(stderr, "usage: bench_mlp --hidden E --batch B [--steps N] [--warmup W] [--data FILE] [--lr X]\n");
    return 2;
  }
  const double t_start = bench::now_seconds();
  const long hidden = flags.get_long("--hidden", 64);
  const long batch = flags.get_long("--batch", 1);
  const long steps = flags.get_long("--steps", 20);
  const long warmup = flags.get_long("--warmup", 2);
  const float lr = static_cast<float>(flags.get_double("--lr", 0.1));
  const std::uint64_t seed = static_cast<std::uint64_t>(flags.get_long("--seed", 1));
  const char* data_path = flags.get("--data", nullptr);
  if ((hidden < 1) || (batch < 1) || (steps < 1) || (warmup < 0)) {
    std::fprintf(stderr, "bench_mlp: bad sizes\n");
    return 2;
  }

  Data data;
  if (!load(data_path, data)) {
    std::fprintf(stderr, "bench_mlp: cannot read %s\n", (data_path != nullptr) ? data_path : "(generated)");
    return 1;
  }
  const std::uint32_t n_samples = data.samples();

  nn::MlpConfig config;
  config.hidden = static_cast<bt::Index>(hidden);
  const nn::MemoryPlan plan = nn::MakemoreMlp<float>::plan(config, nn::OptimizerKind::kSgd);
  // The tape's memory: one buffer of exactly the plan's size (32-byte aligned).
  std::unique_ptr<std::uint64_t[]> storage(new std::uint64_t[(plan.tape_bytes + 63U) / 8U]);
  void* buffer = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(storage.get()) + 31U) & ~std::uintptr_t{31U});
  bt::Tape<float> tape(buffer, plan.tape_bytes, plan.nodes, plan.slots, plan.parameters);
  nn::Rng rng(seed);
  static nn::MakemoreMlp<float> model;
  if (!model.create(tape, config, rng)) {
    std::fprintf(stderr, "bench_mlp: cannot create the model: %s\n", bt::status_name(tape.status()));
    return 1;
  }
  const bt::Index first = model.first_parameter();
  const std::size_t n = model.parameter_count();
  nn::OptimizerConfig<float> oc;
  oc.kind = nn::OptimizerKind::kSgd;
  oc.lr = lr;
  nn::Optimizer<float> opt(oc, nullptr, n);
  const double t_ready = bench::now_seconds();
  bench::ready();

  bench::Sampler sampler(seed + 1U);
  std::vector<std::uint32_t> picks(static_cast<std::size_t>(batch));
  std::vector<std::uint8_t> contexts(static_cast<std::size_t>(batch) * kContext);
  std::vector<std::uint8_t> targets(static_cast<std::size_t>(batch));
  std::vector<double> times;
  double first_loss = 0.0;
  double last_loss = 0.0;
  for (long step = 0; step < warmup + steps; ++step) {
    const double t0 = bench::now_seconds();
    for (std::size_t i = 0U; i < picks.size(); ++i) {
      picks[i] = sampler.below(n_samples);
      targets[i] = data.sample(picks[i], &contexts[i * kContext]);
    }
    const float loss = nn::serial_batch(tape, first, n, picks.size(), [&](bt::Tape<float>& tp, std::size_t i) {
      return model.loss(tp, &contexts[i * kContext], targets[i]);
    });
    opt.step(tape.values() + first, tape.grads() + first);
    const double t1 = bench::now_seconds();
    if (!std::isfinite(loss)) {
      std::fprintf(stderr, "bench_mlp: loss is not finite at step %ld (%s)\n", step, bt::status_name(tape.status()));
      return 1;
    }
    if (step == 0) {
      first_loss = static_cast<double>(loss);
    }
    last_loss = static_cast<double>(loss);
    if (step >= warmup) {
      times.push_back((t1 - t0) * 1e3);
    }
  }
  const bench::Stats s = bench::stats(times);
  std::printf(
      "{\"bench\":\"mlp\",\"impl\":\"burtorch\",\"e\":%ld,\"batch\":%ld,\"params\":%zu,\"steps\":%ld,"
      "\"median_ms\":%.6f,\"p10_ms\":%.6f,\"p90_ms\":%.6f,\"init_ms\":%.3f,\"tape_bytes\":%zu,"
      "\"first_loss\":%.5f,\"last_loss\":%.5f,\"data_samples\":%u",
      hidden, batch, n, steps, s.median, s.p10, s.p90, (t_ready - t_start) * 1e3, plan.tape_bytes, first_loss,
      last_loss, n_samples);
  bench::end_json(times);
  return 0;
}

// Shared pieces of the host trainers (burtorch-makemore, burtorch-gpt):
// command-line flags, the tape buffer, progress display, the loss CSV,
// checkpoints through burtorch/checkpoint.hpp. Host programs only: they may
// use the C library and the heap for data; the model state itself lives in
// one buffer sized by the model's memory plan.
#ifndef BURTORCH_TARGETS_HOST_TRAINER_HPP
#define BURTORCH_TARGETS_HOST_TRAINER_HPP

#include <burtorch/burtorch.hpp>
#include <burtorch/checkpoint.hpp>
#include <burtorch/nn/nn.hpp>
#include <burtorch/port/file.hpp>
#include <burtorch/port/plot.hpp>
#include <burtorch/port/port.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

namespace trainer {

namespace bt = burtorch;
namespace nn = burtorch::nn;

struct Options {
  long steps = 1000;
  long batch = 32;
  long hidden = 64;
  double lr = 0.1;
  bool lr_given = false;
  nn::OptimizerKind optimizer = nn::OptimizerKind::kSgd;
  std::uint64_t seed = 42U;
  std::string data;
  long print_every = 100;
  std::string save;
  std::string resume;
  std::string csv;
  std::string plot;
  long samples = 10;
  long eval_samples = 0;  // 0: the whole validation split
  double clip = 0.0;      // 0: no clipping
  bool fp32 = false;
};

inline const char* optimizer_name(nn::OptimizerKind k) {
  switch (k) {
    case nn::OptimizerKind::kMomentum:
      return "momentum";
    case nn::OptimizerKind::kAdam:
      return "adam";
    case nn::OptimizerKind::kAdamW:
      return "adamw";
    default:
      return "sgd";
  }
}

[[noreturn]] inline void fail(const char* program, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", program, message.c_str());
  std::exit(2);
}

inline long parse_long(const char* program, const char* flag, const char* text, long lo, long hi) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if ((end == text) || (*end != '\0') || (v < lo) || (v > hi)) {
    fail(program, std::string("bad value for ") + flag + ": '" + text + "' (want an integer in [" +
                      std::to_string(lo) + ", " + std::to_string(hi) + "])");
  }
  return v;
}

inline double parse_double(const char* program, const char* flag, const char* text) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if ((end == text) || (*end != '\0') || !(v >= 0.0) || (v > 1e6)) {
    fail(program, std::string("bad value for ") + flag + ": '" + text + "'");
  }
  return v;
}

// Parses argv into o; prints `usage` and exits 0 for --help; one-line error
// and exit 2 for anything else it does not know.
inline void parse(int argc, char** argv, Options& o, const char* program, const char* usage) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if ((flag == "--help") || (flag == "-h")) {
      std::fputs(usage, stdout);
      std::exit(0);
    }
    if (flag == "--fp32") {
      o.fp32 = true;
      continue;
    }
    if (i + 1 >= argc) {
      fail(program, "unknown flag or missing value: '" + flag + "' (see --help)");
    }
    const char* v = argv[++i];
    if (flag == "--steps") {
      o.steps = parse_long(program, "--steps", v, 0, 1000000000L);
    } else if (flag == "--batch") {
      o.batch = parse_long(program, "--batch", v, 1, 1000000L);
    } else if (flag == "--hidden") {
      o.hidden = parse_long(program, "--hidden", v, 1, 65536L);
    } else if (flag == "--lr") {
      o.lr = parse_double(program, "--lr", v);
      o.lr_given = true;
    } else if (flag == "--optimizer") {
      const std::string k = v;
      if (k == "sgd") {
        o.optimizer = nn::OptimizerKind::kSgd;
      } else if (k == "momentum") {
        o.optimizer = nn::OptimizerKind::kMomentum;
      } else if (k == "adam") {
        o.optimizer = nn::OptimizerKind::kAdam;
      } else if (k == "adamw") {
        o.optimizer = nn::OptimizerKind::kAdamW;
      } else {
        fail(program, "bad value for --optimizer: '" + k + "' (want sgd, momentum, adam or adamw)");
      }
    } else if (flag == "--seed") {
      o.seed = static_cast<std::uint64_t>(parse_long(program, "--seed", v, 0, 0x7FFFFFFFL));
    } else if (flag == "--data") {
      o.data = v;
    } else if (flag == "--print-every") {
      o.print_every = parse_long(program, "--print-every", v, 1, 1000000000L);
    } else if (flag == "--save") {
      o.save = v;
    } else if (flag == "--resume") {
      o.resume = v;
    } else if (flag == "--csv") {
      o.csv = v;
    } else if (flag == "--plot") {
      o.plot = v;
    } else if (flag == "--samples") {
      o.samples = parse_long(program, "--samples", v, 0, 100000L);
    } else if (flag == "--eval-samples") {
      o.eval_samples = parse_long(program, "--eval-samples", v, 0, 1000000000L);
    } else if (flag == "--clip") {
      o.clip = parse_double(program, "--clip", v);
    } else {
      fail(program, "unknown flag: '" + flag + "' (see --help)");
    }
  }
}

// Writes the matplotlib script that plots the loss CSV: next to the CSV by
// default (makemore_loss.csv -> makemore_loss.py, drawing makemore_loss.png),
// or at --plot FILE; --plot none (or --csv none) writes none.
inline void write_plot_script(const char* program, const Options& o, const std::string& csv_path) {
  if ((csv_path == "none") || (o.plot == "none")) {
    return;
  }
  const std::string stem = (csv_path.size() > 4U) && (csv_path.compare(csv_path.size() - 4U, 4U, ".csv") == 0)
                               ? csv_path.substr(0U, csv_path.size() - 4U)
                               : csv_path;
  const std::string script = o.plot.empty() ? (stem + ".py") : o.plot;
  const std::string png = o.plot.empty() ? (stem + ".png") : (o.plot + ".png");
  if (bt::port::write_loss_plot_script(csv_path.c_str(), png.c_str(), script.c_str()) != bt::Status::kOk) {
    fail(program, "cannot write '" + script + "'");
  }
}

inline bool read_file(const std::string& path, std::string& out) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return false;
  }
  char buffer[65536];
  std::size_t n = 0U;
  while ((n = std::fread(buffer, 1U, sizeof(buffer), f)) > 0U) {
    out.append(buffer, n);
  }
  const bool ok = std::ferror(f) == 0;
  std::fclose(f);
  return ok;
}

// The model's memory: one buffer aligned for the tape, sized by its plan.
class Arena {
 public:
  explicit Arena(std::size_t bytes) : storage_(bytes + 64U) {
    void* at = storage_.data();
    std::size_t space = storage_.size();
    data_ = std::align(64U, bytes, at, space);
  }
  void* data() { return data_; }

 private:
  std::vector<unsigned char> storage_;
  void* data_ = nullptr;
};

inline double seconds_now() {
  return static_cast<double>(bt::port::ticks()) / static_cast<double>(bt::port::ticks_per_second());
}

// Progress display on stderr (one updating line on a terminal) and the
// machine-readable "step <n> loss <x>" lines on stdout.
class Progress {
 public:
  Progress(const char* name, long total, long first_step, long batch)
      : name_(name), total_(total), first_(first_step), batch_(batch), tty_(isatty(2) != 0), t0_(seconds_now()) {}

  void report(long step, double mean_loss) {
    std::printf("step %ld loss %.10g\n", step, mean_loss);
    std::fflush(stdout);
    const double elapsed = seconds_now() - t0_;
    const double done = static_cast<double>(step - first_);
    const double rate = (elapsed > 0.0) ? (done * static_cast<double>(batch_) / elapsed) : 0.0;
    const double eta = (done > 0.0) ? (elapsed / done * static_cast<double>(total_ - step)) : 0.0;
    std::fprintf(stderr, "%s[%s] step %ld/%ld  loss %.4f  %.0f samples/s  ETA %.0fs%s", tty_ ? "\r" : "", name_, step,
                 total_, mean_loss, rate, eta, tty_ ? "   " : "\n");
    std::fflush(stderr);
  }
  void finish() {
    if (tty_) {
      std::fputc('\n', stderr);
    }
  }
  double elapsed() const { return seconds_now() - t0_; }

 private:
  const char* name_;
  long total_;
  long first_;
  long batch_;
  bool tty_;
  double t0_;
};

// The loss curve as CSV: "step,train_loss".
class Csv {
 public:
  bool open(const std::string& path, bool append) {
    if (path.empty()) {
      return true;
    }
    file_ = std::fopen(path.c_str(), append ? "a" : "w");
    if ((file_ != nullptr) && !append) {
      std::fprintf(file_, "step,train_loss\n");
    }
    return file_ != nullptr;
  }
  void row(long step, double loss) {
    if (file_ != nullptr) {
      std::fprintf(file_, "%ld,%.10g\n", step, loss);
      std::fflush(file_);
    }
  }
  ~Csv() {
    if (file_ != nullptr) {
      std::fclose(file_);
    }
  }

 private:
  std::FILE* file_ = nullptr;
};

// Trainer state saved in checkpoints besides parameters and moments.
struct Counters {
  std::uint64_t model_id = 0U;  // which model and configuration
  std::uint64_t step = 0U;
  std::uint64_t optimizer_steps = 0U;
  std::uint64_t seed = 0U;
  std::uint64_t rng[nn::Rng::kStateWords] = {};
};

constexpr std::uint32_t kTagCounters = bt::make_tag('T', 'R', 'N', 'R');
constexpr std::uint32_t kTagMoments = bt::make_tag('O', 'P', 'T', 'M');

// The checkpoint's sections: counters, parameters, optimizer moments (if any).
template <class T>
std::size_t checkpoint_sections(T* params, std::size_t n, nn::Optimizer<T>& opt, Counters& c, bt::Section* out) {
  out[0] = bt::Section{&c, sizeof(c), kTagCounters};
  out[1] = bt::Section{params, n * sizeof(T), bt::kTagValues};
  out[2] = bt::Section{opt.state(), opt.state_size() * sizeof(T), kTagMoments};
  return (opt.state_size() > 0U) ? 3U : 2U;
}

template <class T>
bt::Status save(const std::string& path, T* params, std::size_t n, nn::Optimizer<T>& opt, Counters& c) {
  bt::Section sections[3];
  const std::size_t count = checkpoint_sections(params, n, opt, c, sections);
  bt::port::FileWriter file;
  bt::Status s = file.open(path.c_str(), true);
  if (s == bt::Status::kOk) {
    s = bt::save_checkpoint(file.sink(), bt::ScalarKindOf<T>::value, sections, count);
  }
  if (s == bt::Status::kOk) {
    s = file.commit();
  }
  return s;
}

template <class T>
bt::Status load(const std::string& path, T* params, std::size_t n, nn::Optimizer<T>& opt, Counters& c) {
  bt::Section sections[3];
  const std::size_t count = checkpoint_sections(params, n, opt, c, sections);
  bt::port::FileReader file;
  bt::Status s = file.open(path.c_str());
  if (s == bt::Status::kOk) {
    s = bt::load_checkpoint(file.source(), bt::ScalarKindOf<T>::value, sections, count);
  }
  return s;
}

// --resume: loads parameters, optimizer state and counters, checks that the
// checkpoint belongs to this run (`counters` holds the expected model id and
// seed), restores the batch PRNG and returns the step to continue from.
template <class T>
long resume(const char* program, const Options& o, T* params, std::size_t n, nn::Optimizer<T>& opt,
            Counters& counters, nn::Rng& batch_rng, const char* mismatch) {
  const Counters want = counters;
  const bt::Status s = load(o.resume, params, n, opt, counters);
  if (s != bt::Status::kOk) {
    fail(program, "cannot resume from '" + o.resume + "': " + bt::status_name(s));
  }
  if ((counters.model_id != want.model_id) || (counters.seed != want.seed)) {
    fail(program, "'" + o.resume + "' was saved with another " + mismatch);
  }
  *opt.step_counter() = counters.optimizer_steps;
  std::copy(counters.rng, counters.rng + nn::Rng::kStateWords, batch_rng.state());
  const long step = static_cast<long>(counters.step);
  std::printf("  resumed from %s at step %ld\n", o.resume.c_str(), step);
  return step;
}

// The memory plan line both trainers print; `unit` is "sample" or "sequence".
inline void print_plan(const nn::MemoryPlan& plan, const char* unit) {
  std::printf("  memory plan: tape %zu nodes (%zu per %s), %zu slots, %zu bytes; optimizer %zu bytes; "
              "total %zu bytes\n",
              plan.nodes, plan.sample_nodes, unit, plan.slots, plan.tape_bytes, plan.optimizer_bytes, plan.bytes);
}

// Creates the model's parameters on the tape from --seed; a one-line error if not.
template <class T, class Model, class Config>
void create_model(const char* program, Model& model, bt::Tape<T>& tape, const Config& config, std::uint64_t seed) {
  nn::Rng init_rng(seed);
  if (!model.create(tape, config, init_rng)) {
    fail(program, std::string("cannot create the model: ") + bt::status_name(tape.status()));
  }
}

// --optimizer and --lr (default 0.001 for Adam/AdamW, 0.1 otherwise).
template <class T>
nn::OptimizerConfig<T> optimizer_config(const Options& o) {
  nn::OptimizerConfig<T> oc;
  oc.kind = o.optimizer;
  const bool adam = (o.optimizer == nn::OptimizerKind::kAdam) || (o.optimizer == nn::OptimizerKind::kAdamW);
  oc.lr = static_cast<T>(o.lr_given ? o.lr : (adam ? 0.001 : 0.1));
  return oc;
}

// What both trainers do between building the model and evaluating it: the
// optimizer and its moments, --resume, the loss CSV and its plot script,
// the step loop with progress lines, and --save.
template <class T>
class Session {
 public:
  // `model_id` tells checkpoints of different models apart; `mismatch`
  // names what differs when a checkpoint belongs to another run.
  Session(const char* program, const char* name, const char* default_csv, const Options& o, bt::Tape<T>& tape,
          bt::Index first, std::size_t n, std::uint64_t model_id, const char* mismatch)
      : program_(program),
        o_(o),
        tape_(tape),
        first_(first),
        n_(n),
        moments_(nn::state_per_parameter(o.optimizer) * n + 1U),
        opt_(optimizer_config<T>(o), moments_.data(), n),
        batch_rng_(o.seed + 1U) {
    counters_.model_id = model_id;
    counters_.seed = o.seed;
    if (!o.resume.empty()) {
      step_ = resume(program, o, tape.values() + first, n, opt_, counters_, batch_rng_, mismatch);
    }
    const std::string csv_path = o.csv.empty() ? std::string(default_csv) : o.csv;
    if ((csv_path != "none") && !csv_.open(csv_path, !o.resume.empty())) {
      fail(program, "cannot write '" + csv_path + "'");
    }
    write_plot_script(program, o, csv_path);
    progress_ = Progress(name, o.steps, step_, o.batch);
  }

  // Steps until --steps: each draws --batch indices below `limit`, runs the
  // serial batch of loss_of(tape, index), clips (--clip) and steps.
  template <class LossOf>
  void train(std::uint32_t limit, LossOf loss_of) {
    std::vector<std::uint32_t> batch(static_cast<std::size_t>(o_.batch));
    double since = 0.0;
    long count = 0;
    while (step_ < o_.steps) {
      for (std::uint32_t& b : batch) {
        b = batch_rng_.below(limit);
      }
      const T loss = nn::serial_batch(tape_, first_, n_, batch.size(),
                                      [&](bt::Tape<T>& tp, std::size_t i) { return loss_of(tp, batch[i]); });
      if (!std::isfinite(static_cast<double>(loss))) {
        fail(program_, std::string("training failed at step ") + std::to_string(step_) + ": " +
                           bt::status_name(tape_.status()));
      }
      if (o_.clip > 0.0) {
        static_cast<void>(nn::clip_gradient_norm(tape_.grads() + first_, n_, static_cast<T>(o_.clip)));
      }
      opt_.step(tape_.values() + first_, tape_.grads() + first_);
      ++step_;
      since += static_cast<double>(loss);
      ++count;
      if ((step_ % o_.print_every == 0) || (step_ == o_.steps)) {
        const double mean = since / static_cast<double>(count);
        progress_.report(step_, mean);
        csv_.row(step_, mean);
        since = 0.0;
        count = 0;
      }
    }
    progress_.finish();
  }

  double elapsed() const { return progress_.elapsed(); }

  // --save: parameters, optimizer state, step and batch PRNG.
  void save_if_asked() {
    if (o_.save.empty()) {
      return;
    }
    counters_.step = static_cast<std::uint64_t>(step_);
    counters_.optimizer_steps = opt_.steps();
    std::copy(batch_rng_.state(), batch_rng_.state() + nn::Rng::kStateWords, counters_.rng);
    const bt::Status s = save(o_.save, tape_.values() + first_, n_, opt_, counters_);
    if (s != bt::Status::kOk) {
      fail(program_, "cannot save '" + o_.save + "': " + bt::status_name(s));
    }
    std::printf("saved %s\n", o_.save.c_str());
  }

 private:
  const char* program_;
  const Options& o_;
  bt::Tape<T>& tape_;
  bt::Index first_;
  std::size_t n_;
  std::vector<T> moments_;
  nn::Optimizer<T> opt_;
  Counters counters_;
  nn::Rng batch_rng_;
  long step_ = 0;
  Csv csv_;
  Progress progress_{"", 0, 0, 0};
};

// Samples an index from softmax(logits[0..n)) with one uniform draw.
template <class T>
inline std::uint32_t sample_softmax(const T* logits, std::uint32_t n, nn::Rng& rng) {
  double top = static_cast<double>(logits[0]);
  for (std::uint32_t i = 1U; i < n; ++i) {
    top = (static_cast<double>(logits[i]) > top) ? static_cast<double>(logits[i]) : top;
  }
  std::vector<double> p(n);
  double total = 0.0;
  for (std::uint32_t i = 0U; i < n; ++i) {
    p[i] = std::exp(static_cast<double>(logits[i]) - top);
    total += p[i];
  }
  double u = rng.uniform() * total;
  for (std::uint32_t i = 0U; i < n; ++i) {
    u -= p[i];
    if (u < 0.0) {
      return i;
    }
  }
  return n - 1U;
}

}  // namespace trainer

#endif  // BURTORCH_TARGETS_HOST_TRAINER_HPP

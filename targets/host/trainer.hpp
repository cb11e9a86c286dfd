// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the host trainers (burtorch-makemore, burtorch-gpt,
// burtorch-cnn): command-line flags, the tape buffer, progress display, the
// loss CSV and its plot, checkpoints through burtorch/checkpoint.hpp. Every
// write, flush and close of an output is checked: a failure is one line
// naming the file and the reason, exit status 2. Host programs only: they may
// use the C library and the heap for data; the model state itself lives in
// one buffer sized by the model's memory plan.
#ifndef BURTORCH_TARGETS_HOST_TRAINER_HPP
#define BURTORCH_TARGETS_HOST_TRAINER_HPP

#include <burtorch/burtorch.hpp>
#include <burtorch/tools/checkpoint.hpp>
#include <burtorch/lanes/ops.hpp>  // a tape of Lanes: the lane ops and the tape's templates for it
#include <burtorch/lanes/lanes.hpp>
#include <burtorch/nn/nn.hpp>
#include <burtorch/port/file.hpp>
#include <burtorch/port/plot.hpp>
#include <burtorch/port/port.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <csignal>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

// --distributed: data-parallel training over MPI ranks, in builds that have
// burtorch::port_mpi (targets/host/CMakeLists.txt sets this to 1).
#ifndef BURTORCH_TRAINER_MPI
#define BURTORCH_TRAINER_MPI 0
#endif
#include <burtorch/nn/parallel.hpp>
#if BURTORCH_TRAINER_MPI
#include <burtorch/port/mpi.hpp>
#endif

namespace trainer {

namespace bt = burtorch;
namespace nn = burtorch::nn;

// Largest --steps (and the largest step a checkpoint may record).
constexpr long kMaxSteps = 1000000000L;
// --data files larger than this are refused (the trainers hold the text and
// its samples in memory).
constexpr std::size_t kMaxDataBytes = std::size_t{16} << 20U;

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
  std::string plot;      // none | svg | png | py | FILE ("": svg)
  long val_every = 0;    // 0: the validation loss at the end of the run only
  long samples = 10;
  long eval_samples = 0;  // 0: the whole validation split
  double clip = 0.0;      // 0: no clipping
  bool fp32 = false;
  // --lanes L (burtorch-makemore, burtorch-gpt and burtorch-cnn, which set
  // lanes_flag before parse(); the others refuse the flag): samples per
  // sweep; 0: not given (lane_count() chooses).
  bool lanes_flag = false;
  long lanes = 0;
  // --checkpoint on|off (burtorch-gpt, which sets checkpoint_flag before
  // parse()): lane batches with gradient checkpointing (the default).
  bool checkpoint_flag = false;
  bool checkpoint = true;
  // --export-header FILE (burtorch-cnn only: the program sets
  // export_header_flag before parse(); the others refuse the flag).
  bool export_header_flag = false;
  std::string export_header;
  // --distributed: this process is rank `rank` of `ranks` MPI ranks; each
  // trains on its slice of every --batch and the gradients are averaged.
  bool distributed = false;
  int rank = 0;
  int ranks = 1;
};

// In a --distributed run: ends every rank of the job with the status given
// (set by start_distributed()); nullptr otherwise.
inline void (*g_stop_all)(int) = nullptr;
// "rank R of N: " in a --distributed run, for the one-line errors.
inline char g_rank_text[48] = "";

// --lanes: the lane counts the trainers are compiled for.
constexpr long kLaneChoices[] = {1L, 2L, 4L, 8L, 16L, 32L};

// Samples per sweep: --lanes if given, else the target's vector width
// (burtorch::kHardwareLanes) for batches of more than one sample, 1 (the
// per-sample serial batch) otherwise.
inline long lane_count(const Options& o) {
  if (o.lanes > 0) {
    return o.lanes;
  }
  return (o.batch > 1) ? static_cast<long>(bt::kHardwareLanes) : 1L;
}

// The values --hidden accepts: [lo, hi], a multiple of `multiple`; `why`
// says where the limits come from.
struct HiddenRule {
  long lo;
  long hi;
  long multiple;
  const char* why;
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

// Bad flags, data, files or checkpoints: one line on stderr, exit status 2.
[[noreturn]] inline void fail(const char* program, const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s%s\n", program, g_rank_text, message.c_str());
  if (g_stop_all != nullptr) {
    g_stop_all(2);  // every rank stops, none waits for this one
  }
  std::exit(2);
}

// Training diverged (a non-finite loss or parameter): exit status 1.
[[noreturn]] inline void diverged(const char* program, const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s%s\n", program, g_rank_text, message.c_str());
  if (g_stop_all != nullptr) {
    g_stop_all(1);
  }
  std::exit(1);
}

inline long parse_long(const char* program, const char* flag, const char* text, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if ((end == text) || (*end != '\0') || (errno != 0) || (v < lo) || (v > hi)) {
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

inline long parse_hidden(const char* program, const char* text, const HiddenRule& rule) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if ((end == text) || (*end != '\0') || (errno != 0) || (v < rule.lo) || (v > rule.hi) ||
      ((v % rule.multiple) != 0)) {
    const std::string range = "[" + std::to_string(rule.lo) + ", " + std::to_string(rule.hi) + "]";
    fail(program, std::string("bad value for --hidden: '") + text + "' (want " +
                      ((rule.multiple > 1) ? "a multiple of " + std::to_string(rule.multiple) + " in "
                                           : std::string("an integer in ")) +
                      range + (((rule.why != nullptr) && (rule.why[0] != '\0')) ? std::string(": ") + rule.why : "") +
                      ")");
  }
  return v;
}

// Parses argv into o; prints `usage` and exits 0 for --help; one-line error
// and exit 2 for anything else it does not know or any value out of range.
inline void parse(int argc, char** argv, Options& o, const char* program, const char* usage,
                  const HiddenRule& hidden) {
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
    if (flag == "--distributed") {
      o.distributed = true;
      continue;
    }
    if (i + 1 >= argc) {
      fail(program, "unknown flag or missing value: '" + flag + "' (see --help)");
    }
    const char* v = argv[++i];
    if (flag == "--steps") {
      o.steps = parse_long(program, "--steps", v, 0, kMaxSteps);
    } else if (flag == "--batch") {
      o.batch = parse_long(program, "--batch", v, 1, 1000000L);
    } else if (flag == "--hidden") {
      o.hidden = parse_hidden(program, v, hidden);
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
      o.print_every = parse_long(program, "--print-every", v, 1, kMaxSteps);
    } else if (flag == "--save") {
      o.save = v;
    } else if (flag == "--resume") {
      o.resume = v;
    } else if (flag == "--csv") {
      o.csv = v;
    } else if (flag == "--plot") {
      o.plot = v;
    } else if (flag == "--val-every") {
      o.val_every = parse_long(program, "--val-every", v, 1, kMaxSteps);
    } else if (flag == "--samples") {
      o.samples = parse_long(program, "--samples", v, 0, 100000L);
    } else if (flag == "--eval-samples") {
      o.eval_samples = parse_long(program, "--eval-samples", v, 0, kMaxSteps);
    } else if (flag == "--clip") {
      o.clip = parse_double(program, "--clip", v);
    } else if (o.lanes_flag && (flag == "--lanes")) {
      o.lanes = parse_long(program, "--lanes", v, 1, 32);
      bool known = false;
      for (const long choice : kLaneChoices) {
        known = known || (choice == o.lanes);
      }
      if (!known) {
        fail(program, std::string("bad value for --lanes: '") + v + "' (want 1, 2, 4, 8, 16 or 32)");
      }
    } else if (o.checkpoint_flag && (flag == "--checkpoint")) {
      const std::string value(v);
      if ((value != "on") && (value != "off")) {
        fail(program, "bad value for --checkpoint: '" + value + "' (want on or off)");
      }
      o.checkpoint = (value == "on");
    } else if (o.export_header_flag && (flag == "--export-header")) {
      o.export_header = v;
    } else {
      fail(program, "unknown flag: '" + flag + "' (see --help)");
    }
  }
  if ((o.val_every > 0) && ((o.val_every % o.print_every) != 0)) {
    fail(program, "--val-every " + std::to_string(o.val_every) + " is not a multiple of --print-every " +
                      std::to_string(o.print_every) + " (the validation loss goes into the CSV's rows)");
  }
}

#if BURTORCH_TRAINER_MPI
// What a rank prints when the job is ended under it (mpirun sends SIGTERM
// to the ranks left when one fails or is killed): one line, exit status 2.
inline char g_stopped_line[160] = "";
inline std::size_t g_stopped_bytes = 0U;
extern "C" inline void on_stopped(int) {
  static_cast<void>(write(2, g_stopped_line, g_stopped_bytes));
  _exit(2);
}
[[noreturn]] inline void stop_all(int code) {
  std::fflush(nullptr);
  std::signal(SIGTERM, SIG_DFL);  // this rank's line is out; no second one
  bt::port::mpi::abort(code);
}
inline void finish_distributed() {
  std::fflush(nullptr);
  bt::port::mpi::finalize();
}
#endif

// --distributed: starts MPI, sets o.rank and o.ranks, and leaves the
// outputs (stdout, --csv, --plot, --save, --export-header, samples) to rank
// 0. The global batch must split evenly over the ranks. Without MPI in the
// build, one line and exit status 2.
inline void start_distributed(const char* program, Options& o) {
  if (!o.distributed) {
    return;
  }
#if BURTORCH_TRAINER_MPI
  int rank = 0;
  int size = 1;
  if (bt::port::mpi::init(&rank, &size) != bt::Status::kOk) {
    fail(program, "--distributed: MPI did not start");
  }
  o.rank = rank;
  o.ranks = size;
  std::snprintf(g_rank_text, sizeof(g_rank_text), "rank %d of %d: ", rank, size);
  const int length = std::snprintf(g_stopped_line, sizeof(g_stopped_line),
                                   "%s: rank %d of %d: stopped: another rank of the job failed\n", program, rank, size);
  g_stopped_bytes = (length > 0) ? std::min(static_cast<std::size_t>(length), sizeof(g_stopped_line) - 1U) : 0U;
  if (size > 1) {  // alone (no mpirun, or -np 1) an error ends only this process
    g_stop_all = &stop_all;
  }
  std::signal(SIGTERM, &on_stopped);
  std::atexit(&finish_distributed);
  if ((o.batch % size) != 0) {
    fail(program, "--batch " + std::to_string(o.batch) + " does not split over " + std::to_string(size) +
                      " ranks (want a multiple of the rank count)");
  }
  if (rank != 0) {
    o.csv = "none";
    o.plot = "none";
    o.save.clear();
    o.export_header.clear();
    o.samples = 0;
    if (std::freopen("/dev/null", "w", stdout) == nullptr) {
      fail(program, "cannot silence standard output");
    }
  }
#else
  fail(program, "--distributed needs a build with MPI (burtorch::port_mpi; see docs/fleet.md)");
#endif
}

// The reason an output failed: errno's text for an I/O error (the port's
// file writer leaves errno as the failing call set it), else the status.
inline std::string io_reason(bt::Status s, int error) {
  return ((s == bt::Status::kIoError) && (error != 0)) ? std::string(std::strerror(error))
                                                        : std::string(bt::status_name(s));
}

// errno of the first failed flush of standard output (flush_stdout()).
inline int stdout_error = 0;

// Flushes standard output, keeping the reason of a failure for check_stdout.
inline void flush_stdout() {
  errno = 0;
  if ((std::fflush(stdout) != 0) && (stdout_error == 0)) {
    stdout_error = errno;
  }
}

// Standard output (the step lines, the summary, samples) must reach its
// file: a failed write or flush is an error like any other output's, ended
// as fail() ends one (with --distributed: the rank prefix, and every rank
// stops; none is left waiting for this one).
inline void check_stdout(const char* program) {
  flush_stdout();
  if (std::ferror(stdout) != 0) {
    const int error = stdout_error;
    std::clearerr(stdout);  // fail() flushes again: let it not fail on the old error
    fail(program, std::string("cannot write standard output: ") +
                      ((error != 0) ? std::strerror(error) : "write error"));
  }
}

// --- files --------------------------------------------------------------------

// The loss CSV's path ("none": no CSV).
inline std::string csv_path(const Options& o, const char* default_csv) {
  return o.csv.empty() ? std::string(default_csv) : o.csv;
}

// What --plot asks for: none, an SVG or PNG drawn here at the end of the
// run, or the matplotlib script of before (written at the start).
enum class PlotKind { kNone, kSvg, kPng, kPy };
struct PlotTarget {
  PlotKind kind = PlotKind::kNone;
  std::string path;  // the plot, or the script
  std::string png;   // kPy: the PNG the script draws
};

inline bool has_suffix(const std::string& s, const char* suffix) {
  const std::size_t n = std::strlen(suffix);
  return (s.size() > n) && (s.compare(s.size() - n, n, suffix) == 0);
}

// --plot none|svg|png|py: that format next to the CSV (makemore_loss.csv ->
// makemore_loss.svg); --plot FILE: FILE, an SVG if it ends in .svg, a PNG
// if .png, else the matplotlib script (drawing FILE.png). None without a CSV.
inline PlotTarget plot_target(const Options& o, const std::string& csv) {
  PlotTarget t;
  if ((csv == "none") || (o.plot == "none")) {
    return t;
  }
  const std::string stem = has_suffix(csv, ".csv") ? csv.substr(0U, csv.size() - 4U) : csv;
  if (o.plot.empty() || (o.plot == "svg")) {
    t.kind = PlotKind::kSvg;
    t.path = stem + ".svg";
  } else if (o.plot == "png") {
    t.kind = PlotKind::kPng;
    t.path = stem + ".png";
  } else if (o.plot == "py") {
    t.kind = PlotKind::kPy;
    t.path = stem + ".py";
    t.png = stem + ".png";
  } else {
    t.path = o.plot;
    t.kind = has_suffix(o.plot, ".svg") ? PlotKind::kSvg : (has_suffix(o.plot, ".png") ? PlotKind::kPng : PlotKind::kPy);
    t.png = (t.kind == PlotKind::kPy) ? o.plot + ".png" : std::string();
  }
  return t;
}

// Writes the matplotlib script that plots the loss CSV (--plot py).
inline void write_plot_script(const char* program, const Options& o, const std::string& csv) {
  const PlotTarget plot = plot_target(o, csv);
  if (plot.kind != PlotKind::kPy) {
    return;
  }
  errno = 0;
  const bt::Status s = bt::port::write_loss_plot_script(csv.c_str(), plot.png.c_str(), plot.path.c_str());
  if (s != bt::Status::kOk) {
    fail(program, "cannot write --plot '" + plot.path + "': " + io_reason(s, errno));
  }
}

inline const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) {
    return "a directory";
  }
  if (S_ISFIFO(mode)) {
    return "a FIFO";
  }
  if (S_ISCHR(mode)) {
    return "a character device";
  }
  if (S_ISBLK(mode)) {
    return "a block device";
  }
  if (S_ISSOCK(mode)) {
    return "a socket";
  }
  if (S_ISLNK(mode)) {
    return "a symbolic link";
  }
  return "not a regular file";
}

// An input file (--data, --resume) must be a regular file: a device such as
// /dev/zero never ends, a FIFO blocks. `max_bytes` 0: no size limit.
inline void check_input(const char* program, const char* flag, const std::string& path, std::size_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    fail(program, std::string("cannot read ") + flag + " file '" + path + "': " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    fail(program, std::string(flag) + " '" + path + "' is " + file_kind(st.st_mode) + ", not a regular file");
  }
  if ((max_bytes > 0U) && (static_cast<std::uint64_t>(st.st_size) > max_bytes)) {
    fail(program, std::string(flag) + " '" + path + "' is " + std::to_string(st.st_size) + " bytes; at most " +
                      std::to_string(max_bytes) + " are read");
  }
}

// True if both paths name the same existing file (device and inode, so a
// hard link, a symbolic link or another spelling of the name counts).
inline bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {};
  struct stat sb {};
  return !a.empty() && !b.empty() && (::stat(a.c_str(), &sa) == 0) && (::stat(b.c_str(), &sb) == 0) &&
         (sa.st_dev == sb.st_dev) && (sa.st_ino == sb.st_ino);
}

// An output written atomically (a temporary file renamed over it: --save,
// --export-header): a regular file or a new name, not a symbolic link;
// FILE.tmp nothing but a stale regular file; the temporary file can be
// created (it is created and removed again now). `what` names the output.
inline void check_replaced_output(const char* program, const char* flag, const std::string& path, const char* what) {
  if (path.empty()) {
    return;
  }
  struct stat st {};
  if ((::lstat(path.c_str(), &st) == 0) && !S_ISREG(st.st_mode)) {
    fail(program, std::string(flag) + " '" + path + "' is " + file_kind(st.st_mode) + "; " + what +
                      " replaces only a regular file");
  }
  const std::string temp = path + ".tmp";
  if ((::lstat(temp.c_str(), &st) == 0) && !S_ISREG(st.st_mode)) {
    fail(program, "'" + temp + "' (the temporary file of " + flag + ") exists and is " + file_kind(st.st_mode) +
                      "; remove it");
  }
  bt::port::FileWriter probe;
  const bt::Status s = probe.open(path.c_str(), true);
  if (s != bt::Status::kOk) {
    fail(program, std::string("cannot write ") + flag + " '" + path + "' (creating '" + temp + "': " +
                      ((s == bt::Status::kIoError) ? std::strerror(errno) : bt::status_name(s)) + ")");
  }
}  // the probe's destructor removes the temporary file

// Every check of the command line's files, before anything is read, written
// or trained: inputs are regular files (--data at most kMaxDataBytes); no
// output (--csv, the plot script, --save) is an input (--save may be the
// --resume file: it is replaced atomically at the end); --save can be
// written (its temporary file is created and removed again now).
inline void check_files(const char* program, const Options& o, const char* default_csv) {
  if (!o.data.empty()) {
    check_input(program, "--data", o.data, kMaxDataBytes);
  }
  if (!o.resume.empty()) {
    check_input(program, "--resume", o.resume, 0U);
  }
  const std::string csv = csv_path(o, default_csv);
  struct Output {
    const char* flag;
    std::string path;
  };
  const PlotTarget plot = plot_target(o, csv);
  const Output outputs[4] = {{"--csv", (csv == "none") ? std::string() : csv},
                             {"--plot", plot.path},
                             {"--save", o.save},
                             {"--export-header", o.export_header}};
  for (const Output& out : outputs) {
    if (same_file(out.path, o.data)) {
      fail(program, std::string(out.flag) + " '" + out.path + "' is the --data file '" + o.data +
                        "'; refusing to overwrite the training data");
    }
    if ((std::strcmp(out.flag, "--save") != 0) && same_file(out.path, o.resume)) {
      fail(program, std::string(out.flag) + " '" + out.path + "' is the --resume checkpoint '" + o.resume +
                        "'; refusing to overwrite it");
    }
  }
  if ((plot.kind != PlotKind::kNone) && (same_file(plot.path, csv) || (plot.path == csv))) {
    fail(program, "--plot '" + plot.path + "' is the --csv file; write them apart");
  }
  check_replaced_output(program, "--plot", plot.path, "a plot");
  check_replaced_output(program, "--save", o.save, "a checkpoint");
  check_replaced_output(program, "--export-header", o.export_header, "a header");
}

// Reads the whole of a regular file of at most `max_bytes`.
inline void read_file(const char* program, const std::string& path, std::size_t max_bytes, std::string& out) {
  bt::port::FileReader file;
  const bt::Status s = file.open(path.c_str());
  if (s == bt::Status::kInvalidArgument) {
    fail(program, "--data '" + path + "' is not a regular file");
  }
  if (s != bt::Status::kOk) {
    fail(program, "cannot read data file '" + path + "'");
  }
  const bt::ByteSource source = file.source();
  char buffer[65536];
  for (;;) {
    std::size_t got = 0U;
    if (source.read(source.context, reinterpret_cast<std::uint8_t*>(buffer), sizeof(buffer), &got) !=
        bt::Status::kOk) {
      fail(program, "cannot read data file '" + path + "'");
    }
    if (got == 0U) {
      break;
    }
    if (got > (max_bytes - out.size())) {
      fail(program, "--data '" + path + "' has more than " + std::to_string(max_bytes) + " bytes");
    }
    out.append(buffer, got);
  }
}

// --- memory -------------------------------------------------------------------

// `count` value-initialised T from the heap, or a one-line error (never an
// exception): checked against the machine's memory first, then allocated
// without throwing.
template <class T>
std::unique_ptr<T[]> allocate(const char* program, std::size_t count, const char* what) {
  const std::size_t limit = static_cast<std::size_t>(-1) / sizeof(T);
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  const double physical = ((pages > 0) && (page_size > 0)) ? static_cast<double>(pages) * static_cast<double>(page_size) : 0.0;
  const double bytes = static_cast<double>(count) * static_cast<double>(sizeof(T));
  if ((count > limit) || ((physical > 0.0) && (bytes > physical))) {
    fail(program, std::string("the ") + what + " needs " + std::to_string(static_cast<unsigned long long>(bytes)) +
                      " bytes, more than this machine's " +
                      std::to_string(static_cast<unsigned long long>(physical)) + " bytes of memory");
  }
  std::unique_ptr<T[]> p(new (std::nothrow) T[(count > 0U) ? count : 1U]());
  if (p == nullptr) {
    fail(program, std::string("cannot allocate ") + std::to_string(count * sizeof(T)) + " bytes for the " + what);
  }
  return p;
}

// The model's memory: one buffer aligned for the tape, sized by its plan.
class Arena {
 public:
  Arena(const char* program, std::size_t bytes)
      : storage_(allocate<unsigned char>(program, bytes + 64U, "model's tape")) {
    void* at = storage_.get();
    std::size_t space = bytes + 64U;
    data_ = std::align(64U, bytes, at, space);
  }
  void* data() { return data_; }

 private:
  std::unique_ptr<unsigned char[]> storage_;
  void* data_ = nullptr;
};

inline double seconds_now() {
  return static_cast<double>(bt::port::ticks()) / static_cast<double>(bt::port::ticks_per_second());
}

// --- output -------------------------------------------------------------------

// The machine-readable "step <n> loss <x>" lines go to stdout, one per
// report. On a terminal, stderr also shows one progress line (step, loss,
// samples/s, ETA) that is rewritten in place and erased before anything else
// is printed, so it never runs into other lines; when stderr is not a
// terminal (a pipe, a log, CTest) nothing is printed for it: the step lines
// are the record.
class Progress {
 public:
  Progress(const char* name, long total, long first_step, long batch)
      : name_(name), total_(total), first_(first_step), batch_(batch), tty_(isatty(2) != 0), t0_(seconds_now()) {}

  void report(long step, double mean_loss) {
    erase();
    std::printf("step %ld loss %.10g\n", step, mean_loss);
    flush_stdout();
    if (!tty_) {
      return;
    }
    const double elapsed = seconds_now() - t0_;
    const double done = static_cast<double>(step - first_);
    const double rate = (elapsed > 0.0) ? (done * static_cast<double>(batch_) / elapsed) : 0.0;
    const double eta = (done > 0.0) ? (elapsed / done * static_cast<double>(total_ - step)) : 0.0;
    const int n = std::fprintf(stderr, "[%s] step %ld/%ld  loss %.4g  %.0f samples/s  ETA %.0f s", name_, step,
                               total_, mean_loss, rate, eta);
    shown_ = (n > 0) ? n : 0;
    std::fflush(stderr);
  }
  // Erases the progress line (call before printing anything else).
  void erase() {
    if (shown_ > 0) {
      std::fprintf(stderr, "\r%*s\r", shown_, "");
      std::fflush(stderr);
      shown_ = 0;
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
  int shown_ = 0;
};

// The loss curve as CSV: "step,train_loss,val_loss", then one row per step
// line; val_loss is empty but where the validation loss was measured
// (--val-every, and the run's last row). A new run truncates the file and
// writes the header. A resumed run keeps the header and the rows up to the
// step it resumes from, drops later rows (a run that went on past the
// checkpoint) and appends; a missing or empty file gets the header. A file
// that does not start with the header is not appended to (one with the
// header of earlier versions, "step,train_loss", is, in its two columns).
// Opening never waits: a FIFO without a reader is an error. Every write,
// flush and close is checked: the methods return "" or what went wrong.
class Csv {
 public:
  static constexpr const char* kHeader = "step,train_loss,val_loss";
  static constexpr const char* kHeaderTwoColumns = "step,train_loss";

  std::string open(const std::string& path, bool resumed, long resumed_step) {
    const int flags = O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (resumed ? 0 : O_TRUNC);
    const int fd = ::open(path.c_str(), resumed ? (flags & ~O_WRONLY) | O_RDWR : flags, 0644);
    if (fd < 0) {
      return std::strerror(errno);
    }
    static_cast<void>(::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK));
    file_ = ::fdopen(fd, resumed ? "r+" : "w");
    if (file_ == nullptr) {
      const int error = errno;
      static_cast<void>(::close(fd));
      return std::strerror(error);
    }
    struct stat st {};
    const bool regular = (::fstat(fd, &st) == 0) && S_ISREG(st.st_mode);
    bool header = !resumed;
    if (resumed && regular) {
      const std::string problem = keep_rows_up_to(resumed_step, header);
      if (!problem.empty()) {
        return problem;
      }
    }
    if (header) {
      errno = 0;
      if ((std::fprintf(file_, "%s\n", kHeader) < 0) || (std::fflush(file_) != 0)) {
        return failure();
      }
    }
    return std::string();
  }
  // A row; `val` nullptr: no validation loss at this step.
  std::string row(long step, double loss, const double* val) {
    if (file_ == nullptr) {
      return std::string();
    }
    errno = 0;
    int written = 0;
    if (!three_columns_) {
      written = std::fprintf(file_, "%ld,%.10g\n", step, loss);
    } else if (val != nullptr) {
      written = std::fprintf(file_, "%ld,%.10g,%.10g\n", step, loss, *val);
    } else {
      written = std::fprintf(file_, "%ld,%.10g,\n", step, loss);
    }
    if ((written < 0) || (std::fflush(file_) != 0)) {
      return failure();
    }
    return std::string();
  }
  // Closes the file (every byte reached it, or the reason it did not).
  std::string close() {
    if (file_ == nullptr) {
      return std::string();
    }
    std::FILE* file = file_;
    file_ = nullptr;
    errno = 0;
    const bool bad = std::ferror(file) != 0;
    if ((std::fclose(file) != 0) || bad) {
      return (errno != 0) ? std::string(std::strerror(errno)) : std::string("write error");
    }
    return std::string();
  }
  bool is_open() const { return file_ != nullptr; }
  long dropped() const { return dropped_; }
  ~Csv() {
    if (file_ != nullptr) {
      static_cast<void>(std::fclose(file_));
    }
  }

 private:
  std::string failure() const {
    return (errno != 0) ? std::string(std::strerror(errno)) : std::string("write error");
  }
  // Truncates after the last complete row whose step is <= `step`; sets
  // `header` if the file is empty (so it needs one).
  std::string keep_rows_up_to(long step, bool& header) {
    char line[256];
    long keep = 0;
    bool first = true;
    while (std::fgets(line, sizeof(line), file_) != nullptr) {
      const std::size_t len = std::strlen(line);
      if ((len == 0U) || (line[len - 1U] != '\n')) {
        break;  // a partial last line (or a line no trainer writes): cut here
      }
      if (first) {
        first = false;
        const bool two = std::strcmp(line, (std::string(kHeaderTwoColumns) + "\n").c_str()) == 0;
        if (!two && (std::strcmp(line, (std::string(kHeader) + "\n").c_str()) != 0)) {
          return std::string("it does not start with the header '") + kHeader + "'; refusing to append to it";
        }
        three_columns_ = !two;
      } else {
        char* end = nullptr;
        const long at = std::strtol(line, &end, 10);
        if ((end == line) || (*end != ',') || (at > step)) {
          dropped_ = 1;
          break;
        }
      }
      keep = std::ftell(file_);
    }
    while (std::fgets(line, sizeof(line), file_) != nullptr) {
      ++dropped_;
    }
    if ((keep < 0) || (std::fflush(file_) != 0) || (::ftruncate(::fileno(file_), keep) != 0) ||
        (std::fseek(file_, 0L, SEEK_END) != 0)) {
      return std::strerror(errno);
    }
    header = first;
    three_columns_ = three_columns_ || first;
    return std::string();
  }

  std::FILE* file_ = nullptr;
  bool three_columns_ = true;
  long dropped_ = 0;
};

// --- checkpoints ----------------------------------------------------------------

// Trainer state saved in checkpoints besides parameters and moments
// (section TRNR; docs/training.md). Layout 2 added `layout` and
// `vocabulary`; a layout-1 section is the first 8 words.
constexpr std::uint64_t kCountersLayout = 2U;
struct Counters {
  std::uint64_t model_id = 0U;  // which model and configuration
  std::uint64_t step = 0U;
  std::uint64_t optimizer_steps = 0U;
  std::uint64_t seed = 0U;
  std::uint64_t rng[nn::Rng::kStateWords] = {};
  std::uint64_t layout = kCountersLayout;
  std::uint64_t vocabulary[4] = {};  // bit c: byte value c is a token (ids in increasing byte order)
};
struct CountersLayout1 {
  std::uint64_t model_id;
  std::uint64_t step;
  std::uint64_t optimizer_steps;
  std::uint64_t seed;
  std::uint64_t rng[nn::Rng::kStateWords];
};
static_assert(sizeof(Counters) == 104U, "TRNR layout 2 is 13 words");
static_assert(sizeof(CountersLayout1) == 64U, "TRNR layout 1 is 8 words");

constexpr std::uint32_t kTagCounters = bt::make_tag('T', 'R', 'N', 'R');
constexpr std::uint32_t kTagMoments = bt::make_tag('O', 'P', 'T', 'M');

// A checkpoint's model id (Identity::model_id): the program's tag, the
// width (--hidden), the update rule, the precision and, from bit 36 on, the
// size of the data the model is shaped by (vocabulary or classes; 0: none).
template <class T>
std::uint64_t model_id(std::uint64_t tag, const Options& o, std::uint64_t data_size) {
  return tag + (static_cast<std::uint64_t>(o.hidden) * 16U) + static_cast<std::uint64_t>(o.optimizer) +
         ((sizeof(T) == 8U) ? 0x100000000ULL : 0U) + (data_size << 36U);
}

// What a checkpoint must match to be resumed by this run.
struct Identity {
  std::uint64_t model_id;             // model, configuration, optimizer, precision
  std::uint64_t vocabulary[4];        // the token set
  const char* mismatch;               // names what differs when model_id does
  const char* shape;                  // names what sets the sections' sizes
  std::string data_name;              // "'names.txt'" or "the generated names"
  bool layout1_resumable;             // a layout-1 checkpoint can be resumed (fixed vocabulary)
};

// The checkpoint's sections: counters, parameters, optimizer moments (if any).
template <class T>
std::size_t checkpoint_sections(T* params, std::size_t n, nn::Optimizer<T>& opt, void* counters,
                                std::size_t counter_bytes, bt::Section* out) {
  out[0] = bt::Section{counters, counter_bytes, kTagCounters};
  out[1] = bt::Section{params, n * sizeof(T), bt::kTagValues};
  out[2] = bt::Section{opt.state(), opt.state_size() * sizeof(T), kTagMoments};
  return (opt.state_size() > 0U) ? 3U : 2U;
}

template <class T>
bt::Status save(const std::string& path, T* params, std::size_t n, nn::Optimizer<T>& opt, Counters& c) {
  bt::Section sections[3];
  const std::size_t count = checkpoint_sections(params, n, opt, &c, sizeof(c), sections);
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

// Loads a checkpoint with the counters section of `counter_bytes` (layout 2
// or 1); `verify_only` checks it without writing anything.
template <class T>
bt::Status load(const std::string& path, T* params, std::size_t n, nn::Optimizer<T>& opt, void* counters,
                std::size_t counter_bytes, bool verify_only) {
  bt::Section sections[3];
  const std::size_t count = checkpoint_sections(params, n, opt, counters, counter_bytes, sections);
  bt::port::FileReader file;
  bt::Status s = file.open(path.c_str());
  if (s == bt::Status::kOk) {
    s = verify_only ? bt::verify_checkpoint(file.source(), bt::ScalarKindOf<T>::value, sections, count)
                    : bt::load_checkpoint(file.source(), bt::ScalarKindOf<T>::value, sections, count);
  }
  return s;
}

// The characters of a vocabulary bit set, printable ("\n" for newline).
inline std::string vocabulary_text(const std::uint64_t* bits, const std::uint64_t* only_not_in) {
  std::string out;
  for (int c = 0; c < 256; ++c) {
    const std::uint64_t bit = std::uint64_t{1} << static_cast<unsigned>(c % 64);
    const bool in = (bits[c / 64] & bit) != 0U;
    const bool excluded = (only_not_in != nullptr) && ((only_not_in[c / 64] & bit) != 0U);
    if (in && !excluded) {
      char text[8];
      if ((c >= 0x20) && (c < 0x7F)) {
        std::snprintf(text, sizeof(text), "%c", c);
      } else if (c == '\n') {
        std::snprintf(text, sizeof(text), "\\n");
      } else {
        std::snprintf(text, sizeof(text), "\\x%02X", static_cast<unsigned>(c));
      }
      out += text;
    }
  }
  return out;
}

// Checks what a loaded checkpoint holds before any of it is used: an
// impossible value is a bad checkpoint, whatever its CRC says. "" if fine.
template <class T>
std::string check_loaded(const Counters& c, const T* params, std::size_t n, nn::Optimizer<T>& opt,
                         nn::OptimizerKind kind) {
  if (c.layout != kCountersLayout) {
    return "unknown counters layout " + std::to_string(c.layout);
  }
  if (c.step > static_cast<std::uint64_t>(kMaxSteps)) {
    return "step counter " + std::to_string(c.step) + " is beyond the largest --steps, " + std::to_string(kMaxSteps);
  }
  if (c.optimizer_steps != c.step) {
    return "optimizer step counter " + std::to_string(c.optimizer_steps) + " differs from the step counter " +
           std::to_string(c.step);
  }
  bool rng_zero = true;
  for (std::uint64_t w : c.rng) {
    rng_zero = rng_zero && (w == 0U);
  }
  if (rng_zero) {
    return "the batch generator's state is all zero (xoshiro256** never leaves it)";
  }
  for (std::size_t i = 0U; i < n; ++i) {
    if (!std::isfinite(static_cast<double>(params[i]))) {
      return "parameter " + std::to_string(i) + " is not finite";
    }
  }
  const T* state = opt.state();
  const std::size_t words = opt.state_size();
  const bool adam = (kind == nn::OptimizerKind::kAdam) || (kind == nn::OptimizerKind::kAdamW);
  for (std::size_t i = 0U; i < words; ++i) {
    const bool second_moment = adam && (i >= opt.max_parameters());
    if (!std::isfinite(static_cast<double>(state[i])) || (second_moment && (state[i] < T(0)))) {
      return "optimizer state " + std::to_string(i) + " is " + (second_moment ? "not finite or negative" : "not finite");
    }
  }
  return std::string();
}

// --resume: loads parameters, optimizer state and counters, checks that the
// checkpoint belongs to this run (`id`) and that every loaded value is
// possible, restores the batch PRNG and returns the step to continue from.
template <class T>
long resume(const char* program, const Options& o, T* params, std::size_t n, nn::Optimizer<T>& opt,
            Counters& counters, nn::Rng& batch_rng, const Identity& id) {
  const std::string& path = o.resume;
  bt::Status s = load(path, params, n, opt, &counters, sizeof(counters), false);
  if (s == bt::Status::kBadFormat) {
    // A checkpoint written before the counters recorded the vocabulary?
    CountersLayout1 old{};
    if (load(path, params, n, opt, &old, sizeof(old), true) == bt::Status::kOk) {
      if (!id.layout1_resumable) {
        fail(program, "'" + path + "' was saved by an earlier version that did not record the text's characters, "
                      "so it cannot be checked against " + id.data_name + "; start a new run");
      }
      s = load(path, params, n, opt, &old, sizeof(old), false);
      counters.model_id = old.model_id;
      counters.step = old.step;
      counters.optimizer_steps = old.optimizer_steps;
      counters.seed = old.seed;
      std::copy(old.rng, old.rng + nn::Rng::kStateWords, counters.rng);
      counters.layout = kCountersLayout;
      std::copy(id.vocabulary, id.vocabulary + 4, counters.vocabulary);
    }
  }
  if (s == bt::Status::kInvalidArgument) {
    fail(program, "--resume '" + path + "' is not a regular file");
  }
  if (s == bt::Status::kBadFormat) {
    fail(program, "'" + path + "' is not a checkpoint of this model (bad format): it was saved with another " +
                      id.shape + ", or by another program");
  }
  if (s != bt::Status::kOk) {
    fail(program, "cannot resume from '" + path + "': " + bt::status_name(s));
  }
  if (counters.layout == kCountersLayout) {
    const std::uint64_t* want = id.vocabulary;
    if (!std::equal(want, want + 4, counters.vocabulary)) {
      const std::string only_ckpt = vocabulary_text(counters.vocabulary, want);
      const std::string only_data = vocabulary_text(want, counters.vocabulary);
      fail(program, "'" + path + "' was trained on other characters than " + id.data_name +
                        (only_ckpt.empty() ? std::string() : "; only in the checkpoint: '" + only_ckpt + "'") +
                        (only_data.empty() ? std::string() : "; only in the data: '" + only_data + "'"));
    }
  }
  if ((counters.model_id != id.model_id) || (counters.seed != o.seed)) {
    fail(program, "'" + path + "' was saved with another " + id.mismatch);
  }
  const std::string problem = check_loaded(counters, params, n, opt, o.optimizer);
  if (!problem.empty()) {
    fail(program, "bad checkpoint '" + path + "': " + problem);
  }
  const long step = static_cast<long>(counters.step);
  if (step > o.steps) {
    fail(program, "'" + path + "' is at step " + std::to_string(step) + ", past --steps " + std::to_string(o.steps) +
                      " (--steps is the step to train up to, counted from the start of training)");
  }
  *opt.step_counter() = counters.optimizer_steps;
  std::copy(counters.rng, counters.rng + nn::Rng::kStateWords, batch_rng.state());
  std::printf("  resumed from %s at step %ld; training to step %ld (%ld more)\n", path.c_str(), step, o.steps,
              o.steps - step);
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
nn::OptimizerOptions<T> optimizer_config(const Options& o) {
  nn::OptimizerOptions<T> oc;
  oc.kind = o.optimizer;
  const bool adam = (o.optimizer == nn::OptimizerKind::kAdam) || (o.optimizer == nn::OptimizerKind::kAdamW);
  oc.lr = static_cast<T>(o.lr_given ? o.lr : (adam ? 0.001 : 0.1));
  return oc;
}

inline const char* non_finite_name(double v) { return std::isnan(v) ? "NaN" : ((v > 0.0) ? "+inf" : "-inf"); }

// A number as the step lines print it (%.10g).
inline std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.10g", v);
  return text;
}

// What both trainers do between building the model and evaluating it: the
// optimizer and its moments, --resume, the loss CSV and its plot script,
// the step loop with progress lines, and --save.
template <class T>
class Session {
 public:
  Session(const char* program, const char* name, const char* default_csv, const Options& o, bt::Tape<T>& tape,
          bt::View params, const Identity& id)
      : program_(program),
        o_(o),
        tape_(tape),
        params_(params),
        first_(params.first),
        n_(params.count),
        moments_(allocate<T>(program, nn::state_per_parameter(o.optimizer) * n_ + 1U, "optimizer state")),
        opt_(optimizer_config<T>(o), moments_.get(), nn::state_per_parameter(o.optimizer) * n_),
        batch_rng_(o.seed + 1U) {
    counters_.model_id = id.model_id;
    counters_.seed = o.seed;
    std::copy(id.vocabulary, id.vocabulary + 4, counters_.vocabulary);
    if (!o.resume.empty()) {
      step_ = resume(program, o, tape.values() + first_, n_, opt_, counters_, batch_rng_, id);
    }
    first_step_ = step_;
    csv_path_ = csv_path(o, default_csv);
    plot_ = plot_target(o, csv_path_);
    plot_title_ = std::string(program) + ": loss (" + csv_path_.substr(csv_path_.rfind('/') + 1U) + ")";
    if (csv_path_ != "none") {
      const std::string problem = csv_.open(csv_path_, !o.resume.empty(), step_);
      if (!problem.empty()) {
        fail(program, "cannot write --csv '" + csv_path_ + "': " + problem);
      }
      if (csv_.dropped() > 0) {
        std::printf("  %s: dropped %ld rows after step %ld\n", csv_path_.c_str(), csv_.dropped(), step_);
      }
    }
    write_plot_script(program, o, csv_path_);
    progress_ = Progress(name, o.steps, step_, o.batch);
  }

  // The mean validation loss of the current parameters (forward only, on
  // the tape after the parameters); measured for the CSV's rows at the last
  // step and every --val-every steps.
  void set_validation(std::function<double()> validate) { validate_ = std::move(validate); }

  // The validation loss at the end of training (measured now unless the
  // last step's row already did).
  double validation_loss() {
    if (!validated_ || (validated_step_ != step_)) {
      val_ = validate_ ? validate_() : 0.0;
      validated_ = true;
      validated_step_ = step_;
    }
    return val_;
  }

  // Steps until --steps: each draws --batch indices below `limit`, runs the
  // serial batch of loss_of(tape, index), clips (--clip) and steps. A
  // non-finite loss or parameter ends the run (exit status 1) naming the
  // step (numbered from 1, as in the step lines).
  template <class LossOf>
  void train(std::uint32_t limit, LossOf loss_of) {
    train_batches(limit, [&](const std::vector<std::uint32_t>& batch) {
      return nn::serial_batch(tape_, params_, batch.size(),
                              [&](bt::Tape<T>& tp, std::size_t i) { return loss_of(tp, batch[i]); });
    });
  }

  // The same with lane batches (nn::lane_batch) on `lanes`: lane_loss_of(
  // lanes, p, indices) records the losses of the samples indices[0 .. N)
  // (the first `active` of them are the sweep's; the others repeat one).
  template <std::size_t N, class LaneLossOf>
  void train_lanes(std::uint32_t limit, bt::Tape<bt::Lanes<T, N>>& lanes, LaneLossOf lane_loss_of) {
    train_batches(limit, [&](const std::vector<std::uint32_t>& batch) {
      const T loss = nn::lane_batch(tape_, params_, lanes, batch.size(),
                                    [&](bt::Tape<bt::Lanes<T, N>>& lt, const bt::LaneParams<T>& p, std::size_t first,
                                        std::size_t active) {
                                      std::uint32_t indices[N];
                                      for (std::size_t l = 0U; l < N; ++l) {
                                        indices[l] = batch[first + ((l < active) ? l : 0U)];
                                      }
                                      return lane_loss_of(lt, p, indices);
                                    });
      if (lanes.status() != bt::Status::kOk) {
        progress_.erase();
        fail(program_, "training failed at step " + std::to_string(step_ + 1) + ": " + bt::status_name(lanes.status()));
      }
      return loss;
    });
  }

  // The same with sweeps that run their own backward (nn::lane_batch_sweeps,
  // gradient checkpointing): lane_sweep_of(lanes, p, indices, mask, losses)
  // as Gpt::lane_sweep.
  template <std::size_t N, class LaneSweepOf>
  void train_lane_sweeps(std::uint32_t limit, bt::Tape<bt::Lanes<T, N>>& lanes, LaneSweepOf lane_sweep_of) {
    train_batches(limit, [&](const std::vector<std::uint32_t>& batch) {
      const T loss = nn::lane_batch_sweeps(
          tape_, params_, lanes, batch.size(),
          [&](bt::Tape<bt::Lanes<T, N>>& lt, const bt::LaneParams<T>& p, std::size_t first, std::size_t active,
              const bt::Lanes<T, N>& mask, bt::Lanes<T, N>* losses) {
            std::uint32_t indices[N];
            for (std::size_t l = 0U; l < N; ++l) {
              indices[l] = batch[first + ((l < active) ? l : 0U)];
            }
            return lane_sweep_of(lt, p, indices, mask, losses);
          });
      if (lanes.status() != bt::Status::kOk) {
        progress_.erase();
        fail(program_, "training failed at step " + std::to_string(step_ + 1) + ": " + bt::status_name(lanes.status()));
      }
      return loss;
    });
  }

  // The step loop behind train() and train_lanes(): batch_loss(indices)
  // computes one batch's mean loss and the gradients of its parameters.
  template <class BatchLoss>
  void train_batches(std::uint32_t limit, BatchLoss batch_loss) {
    // --distributed: every rank draws the same global batch and trains on
    // its slice; the gradients and the loss are then averaged over the ranks
    // (nn::DataParallel over burtorch::port_mpi).
    const std::size_t global_batch = static_cast<std::size_t>(o_.batch);
    start_data_parallel(global_batch);
    const nn::Slice mine = data_parallel_ ? data_parallel_->slice() : nn::Slice{0U, global_batch};
    std::vector<std::uint32_t> global(global_batch);
    std::vector<std::uint32_t> batch(mine.count);
    double since = 0.0;
    long count = 0;
    while (step_ < o_.steps) {
      const long this_step = step_ + 1;
      for (std::uint32_t& b : global) {
        b = batch_rng_.below(limit);
      }
      std::copy(global.begin() + static_cast<std::ptrdiff_t>(mine.first),
                global.begin() + static_cast<std::ptrdiff_t>(mine.first + mine.count), batch.begin());
      T loss = batch_loss(batch);
      if (tape_.status() != bt::Status::kOk) {
        progress_.erase();
        fail(program_, "training failed at step " + std::to_string(this_step) + ": " +
                           bt::status_name(tape_.status()));
      }
      if (data_parallel_) {
        const bt::Status s = data_parallel_->average(tape_, params_, &loss);
        if (s != bt::Status::kOk) {
          progress_.erase();
          fail(program_, "averaging the gradients over the ranks failed at step " + std::to_string(this_step) + ": " +
                             bt::status_name(s));
        }
      }
      if (!std::isfinite(static_cast<double>(loss))) {
        progress_.erase();
        diverged(program_, "training diverged at step " + std::to_string(this_step) + ": the loss is " +
                               non_finite_name(static_cast<double>(loss)));
      }
      if (o_.clip > 0.0) {
        static_cast<void>(nn::clip_gradient_norm(tape_, params_, static_cast<T>(o_.clip)));
      }
      const bt::Status stepped = opt_.step(tape_, params_);
      if (stepped != bt::Status::kOk) {
        progress_.erase();
        fail(program_, "the optimizer step failed at step " + std::to_string(this_step) + ": " +
                           bt::status_name(stepped));
      }
      const T* w = tape_.values() + first_;
      for (std::size_t i = 0U; i < n_; ++i) {
        if (!std::isfinite(static_cast<double>(w[i]))) {
          progress_.erase();
          diverged(program_, "training diverged at step " + std::to_string(this_step) + ": parameter " +
                                 std::to_string(i) + " is " + non_finite_name(static_cast<double>(w[i])) +
                                 " after the optimizer step (the loss was " +
                                 number_text(static_cast<double>(loss)) + ")");
        }
      }
      step_ = this_step;
      since += static_cast<double>(loss);
      ++count;
      if ((step_ % o_.print_every == 0) || (step_ == o_.steps)) {
        const double mean = since / static_cast<double>(count);
        progress_.report(step_, mean);
        check_stdout(program_);
        const bool validate =
            validate_ && csv_.is_open() && ((step_ == o_.steps) || ((o_.val_every > 0) && (step_ % o_.val_every == 0)));
        const double val = validate ? validation_loss() : 0.0;
        const std::string problem = csv_.row(step_, mean, validate ? &val : nullptr);
        if (!problem.empty()) {
          progress_.erase();
          fail(program_, "cannot write --csv '" + csv_path_ + "': " + problem);
        }
        since = 0.0;
        count = 0;
      }
    }
    progress_.erase();
  }

  double elapsed() const { return progress_.elapsed(); }

  // --distributed: the data-parallel helper over MPI (its buffer holds the
  // gradients and the loss; the port's reducer its scratch).
  void start_data_parallel(std::size_t global_batch) {
#if BURTORCH_TRAINER_MPI
    if (!o_.distributed || data_parallel_) {
      return;
    }
    reduce_.assign(nn::DataParallel<T>::buffer_values(n_), T(0));
    scratch_.assign(bt::port::mpi::average_scratch(reduce_.size(), o_.ranks), T(0));
    mpi_scratch_.values = scratch_.data();
    mpi_scratch_.count = scratch_.size();
    data_parallel_.reset(new nn::DataParallel<T>(bt::port::mpi::reducer(&mpi_scratch_), global_batch, reduce_.data(),
                                                 reduce_.size()));
#else
    static_cast<void>(global_batch);
#endif
  }

  // Closes the CSV and draws its plot (--plot svg or png); one line and
  // exit status 2 if either fails. Returns the files written, for the
  // summary line ("" if none).
  std::string finish_outputs() {
    std::string written;
    if (csv_path_ == "none") {
      return written;
    }
    const std::string problem = csv_.close();
    if (!problem.empty()) {
      fail(program_, "cannot write --csv '" + csv_path_ + "': " + problem);
    }
    written = csv_path_;
    if ((plot_.kind == PlotKind::kSvg) || (plot_.kind == PlotKind::kPng)) {
      bt::port::CsvPlot plot;
      plot.title = plot_title_.c_str();
      plot.x_label = "step";
      plot.y_label = "mean loss";
      plot.has_mark = (first_step_ > 0);
      plot.mark = static_cast<double>(first_step_);
      plot.mark_label = "resumed";
      errno = 0;
      bt::Status s = bt::Status::kOk;
      if (plot_.kind == PlotKind::kSvg) {
        s = bt::port::write_csv_plot_svg(csv_path_.c_str(), plot_.path.c_str(), plot);
      } else {
        const std::unique_ptr<std::uint8_t[]> pixels =
            allocate<std::uint8_t>(program_, bt::port::kPlotPngBufferBytes, "plot's pixels");
        s = bt::port::write_csv_plot_png(csv_path_.c_str(), plot_.path.c_str(), plot, pixels.get(),
                                         bt::port::kPlotPngBufferBytes);
      }
      if (s != bt::Status::kOk) {
        fail(program_, "cannot write --plot '" + plot_.path + "': " + io_reason(s, errno));
      }
    }
    if (plot_.kind != PlotKind::kNone) {
      written += ", " + plot_.path;
    }
    return written;
  }

  // What the run did: "trained 400 steps in 1.23 s (5200 samples/s)", or
  // after --resume "resumed at step 200, trained 200 steps to step 400 in
  // ...", then "; wrote FILES" naming the CSV and its plot (finish_outputs()
  // writes them first).
  void print_summary() {
    const std::string written = finish_outputs();
    const std::string wrote = written.empty() ? std::string() : "; wrote " + written;
    const double seconds = elapsed();
    const long trained = step_ - first_step_;
    const double rate =
        (seconds > 0.0) ? static_cast<double>(trained) * static_cast<double>(o_.batch) / seconds : 0.0;
#if BURTORCH_TRAINER_MPI
    if (o_.distributed && (trained > 0)) {
      // Rank 0's measured bytes; the others send what average_bytes() says
      // (the chunks differ by at most one value): 2 (N - 1) / N of the array.
      const std::uint64_t sent = bt::port::mpi::bytes_sent() / static_cast<std::uint64_t>(trained);
      std::printf("distributed: %d ranks, %ld samples per rank per step, %.3f ms per step; bytes sent per step: "
                  "rank 0 %llu, each other rank %llu\n",
                  o_.ranks, o_.batch / o_.ranks, 1000.0 * seconds / static_cast<double>(trained),
                  static_cast<unsigned long long>(sent),
                  static_cast<unsigned long long>(
                      (o_.ranks > 1) ? bt::port::mpi::average_bytes(n_ + 1U, sizeof(T), o_.ranks, 1) : 0U));
    }
#endif
    if (o_.resume.empty()) {
      std::printf("trained %ld steps in %.2f s (%.0f samples/s)%s\n", trained, seconds, rate, wrote.c_str());
    } else {
      std::printf("resumed at step %ld, trained %ld steps to step %ld in %.2f s (%.0f samples/s)%s\n", first_step_,
                  trained, step_, seconds, rate, wrote.c_str());
    }
    check_stdout(program_);
  }

  // --save: parameters, optimizer state, step and batch PRNG.
  void save_if_asked() {
    if (o_.save.empty()) {
      return;
    }
    counters_.step = static_cast<std::uint64_t>(step_);
    counters_.optimizer_steps = opt_.steps();
    std::copy(batch_rng_.state(), batch_rng_.state() + nn::Rng::kStateWords, counters_.rng);
    errno = 0;
    const bt::Status s = save(o_.save, tape_.values() + first_, n_, opt_, counters_);
    if (s != bt::Status::kOk) {
      fail(program_, "cannot save '" + o_.save + "': " + io_reason(s, errno));
    }
    std::printf("saved %s\n", o_.save.c_str());
  }

 private:
  const char* program_;
  const Options& o_;
  bt::Tape<T>& tape_;
  bt::View params_;   // the model's parameters
  bt::Index first_;   // params_.first
  std::size_t n_;     // params_.count
  std::unique_ptr<T[]> moments_;
  nn::Optimizer<T> opt_;
  Counters counters_;
  nn::Rng batch_rng_;
  long step_ = 0;
  long first_step_ = 0;
  Csv csv_;
  std::string csv_path_;
  PlotTarget plot_;
  std::string plot_title_;
  std::function<double()> validate_;
  bool validated_ = false;
  long validated_step_ = 0;
  double val_ = 0.0;
  Progress progress_{"", 0, 0, 0};
  std::vector<T> reduce_;   // --distributed: gradients and loss
  std::vector<T> scratch_;  // --distributed: port_mpi's scratch
#if BURTORCH_TRAINER_MPI
  bt::port::mpi::Scratch<T> mpi_scratch_;
#endif
  std::unique_ptr<nn::DataParallel<T>> data_parallel_;
};

// A tape of N lanes for lane batches, in a buffer of its own, sized by a
// model's lane plan.
template <class T, std::size_t N>
class LaneTape {
 public:
  LaneTape(const char* program, const nn::LanePlan& plan)
      : arena_(program, plan.lane_tape_bytes), tape_(arena_.data(), plan.lane_tape_bytes, plan.sample_nodes, plan.slots) {}
  bt::Tape<bt::Lanes<T, N>>& tape() { return tape_; }

 private:
  Arena arena_;
  bt::Tape<bt::Lanes<T, N>> tape_;
};

// Calls f(std::integral_constant<std::size_t, N>{}) for N = lanes (one of
// kLaneChoices).
template <class F>
void with_lanes(long lanes, F&& f) {
  switch (lanes) {
    case 2:
      f(std::integral_constant<std::size_t, 2U>{});
      break;
    case 4:
      f(std::integral_constant<std::size_t, 4U>{});
      break;
    case 8:
      f(std::integral_constant<std::size_t, 8U>{});
      break;
    case 16:
      f(std::integral_constant<std::size_t, 16U>{});
      break;
    case 32:
      f(std::integral_constant<std::size_t, 32U>{});
      break;
    default:
      f(std::integral_constant<std::size_t, 1U>{});
      break;
  }
}

// The line both trainers print about how a batch runs.
inline void print_lanes(long lanes, const nn::LanePlan* plan) {
  if (lanes <= 1) {
    std::printf("  lanes 1: serial batches, one sample at a time (--lanes)\n");
  } else {
    std::printf("  lanes %ld: lane batches, %ld samples per sweep (--lanes); lane tape %zu nodes, %zu slots, %zu bytes\n",
                lanes, lanes, plan->sample_nodes, plan->slots, plan->lane_tape_bytes);
  }
}

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

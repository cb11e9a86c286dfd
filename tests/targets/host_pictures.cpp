// SPDX-License-Identifier: Apache-2.0
// Host only: pictures. `dot` renders the small graph (paper Fig. 2) that
// write_graphviz exports; python3 + matplotlib run the scripts of
// burtorch/port/plot.hpp. Each PNG must exist, carry the PNG signature and
// have the pixel size the script asks for.
// Usage: host_pictures dot WORK_DIR | host_pictures plots WORK_DIR
// "plots" exits 77 (CTest: skipped) when /usr/bin/python3 has no matplotlib.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <burtorch/burtorch.hpp>
#include <burtorch/port/file.hpp>
#include <burtorch/port/plot.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "graphs.hpp"
#include "harness.hpp"

namespace bt = burtorch;

namespace {

const char* g_work = ".";
constexpr const char* kPython = "/usr/bin/python3";

void path_in(char* out, std::size_t capacity, const char* name) {
  std::snprintf(out, capacity, "%s/%s", g_work, name);
}

int run(const char* command) {
  std::fflush(stdout);
  const int status = std::system(command);
  return (status == -1) ? -1 : WEXITSTATUS(status);
}

struct Png {
  long bytes;
  bool signature;
  unsigned long width;
  unsigned long height;
};

// Size, signature and the IHDR chunk's width and height (big-endian).
Png inspect_png(const char* path) {
  Png png{-1L, false, 0UL, 0UL};
  std::FILE* f = std::fopen(path, "rb");
  if (f == nullptr) {
    return png;
  }
  unsigned char head[24] = {};
  const std::size_t n = std::fread(head, 1U, sizeof(head), f);
  std::fseek(f, 0L, SEEK_END);
  png.bytes = std::ftell(f);
  std::fclose(f);
  static const unsigned char kSignature[8] = {0x89U, 'P', 'N', 'G', '\r', '\n', 0x1AU, '\n'};
  png.signature = (n == sizeof(head)) && (std::memcmp(head, kSignature, 8U) == 0) &&
                  (std::memcmp(&head[12], "IHDR", 4U) == 0);
  for (std::size_t i = 0U; i < 4U; ++i) {
    png.width = (png.width << 8U) | head[16U + i];
    png.height = (png.height << 8U) | head[20U + i];
  }
  return png;
}

// --- Graphviz ---------------------------------------------------------------

void small_graph_renders(bt_test::Context& t) {
  static bt::FixedTape<double, 64> tape;
  tape.reset();
  const auto s = examples::small_graph(tape, -4.0, 2.0);
  BT_CHECK(t, tape.backward(s.g) == bt::Status::kOk);
  char dot_path[512];
  char png_path[512];
  char command[1200];
  path_in(dot_path, sizeof(dot_path), "small_graph.dot");
  path_in(png_path, sizeof(png_path), "small_graph.png");
  static_cast<void>(::unlink(png_path));
  bt::port::FileWriter file;
  bt::Status st = file.open(dot_path, true);
  if (st == bt::Status::kOk) {
    st = bt::write_graphviz(tape, s.g, file.sink());
  }
  const bt::Status committed = file.commit();
  BT_CHECK(t, (st == bt::Status::kOk) && (committed == bt::Status::kOk));
  std::snprintf(command, sizeof(command), "dot -Tpng '%s' -o '%s'", dot_path, png_path);
  BT_CHECK(t, run(command) == 0);
  const Png png = inspect_png(png_path);
  BT_CHECK(t, png.bytes > 1000L);
  BT_CHECK(t, png.signature);
  // rankdir=LR over ~20 nodes: a wide picture.
  BT_CHECK(t, (png.width > png.height) && (png.height > 50UL));
}

// --- matplotlib -------------------------------------------------------------

bool run_script(const char* dir, const char* script) {
  char command[1200];
  std::snprintf(command, sizeof(command), "cd '%s' && %s '%s' >/dev/null", dir, kPython, script);
  return run(command) == 0;
}

// Runs `script` with runpy and evaluates the Python `condition` over its
// globals `g` (the embedded data, as Python parsed it).
bool python_agrees(const char* script, const char* condition) {
  char command[1600];
  std::snprintf(command, sizeof(command),
                "%s -c \"import math, runpy, sys; g = runpy.run_path('%s'); sys.exit(0 if (%s) else 1)\" >/dev/null",
                kPython, script, condition);
  return run(command) == 0;
}

void loss_curve(bt_test::Context& t) {
  char dir[512];
  path_in(dir, sizeof(dir), "plots");
  static_cast<void>(::mkdir(dir, 0755));
  char csv[600];
  std::snprintf(csv, sizeof(csv), "%s/loss.csv", dir);
  std::FILE* f = std::fopen(csv, "w");
  BT_CHECK(t, f != nullptr);
  if (f == nullptr) {
    return;
  }
  std::fprintf(f, "step,loss,ms_per_step\n");
  for (int i = 0; i < 200; ++i) {
    std::fprintf(f, "%d,%.17g,%d\n", i, 2.0 * std::exp(-i / 40.0) + 0.1, 3);
  }
  std::fclose(f);
  // Paths relative to WORK_DIR, as a trainer run from there would give them.
  BT_CHECK(t, ::chdir(g_work) == 0);
  static_cast<void>(::unlink("plots/loss.png"));
  BT_CHECK(t, bt::port::write_loss_plot_script("plots/loss.csv", "plots/loss.png", "plots/plot_loss.py") ==
                  bt::Status::kOk);
  // Run from the trainer's directory...
  BT_CHECK(t, run_script(".", "plots/plot_loss.py"));
  Png png = inspect_png("plots/loss.png");
  BT_CHECK(t, png.signature && (png.width == 800UL) && (png.height == 500UL) && (png.bytes > 5000L));
  // Only the loss column is drawn (not ms_per_step), from all 200 rows.
  BT_CHECK(t, python_agrees("plots/plot_loss.py",
                            "g['columns'] == [1] and len(g['rows']) == 200 and g['header'][1] == 'loss'"));
  BT_CHECK(t, !python_agrees("plots/plot_loss.py", "g['columns'] == [1, 2]"));  // the probe can fail
  // ...and from the script's own directory (the paths fall back to it).
  static_cast<void>(::unlink("plots/loss.png"));
  BT_CHECK(t, run_script("plots", "plot_loss.py"));
  png = inspect_png("plots/loss.png");
  BT_CHECK(t, png.signature && (png.width == 800UL) && (png.height == 500UL));
  // A CSV with no data column makes the script fail, not draw nothing.
  f = std::fopen("plots/empty.csv", "w");
  if (f != nullptr) {
    std::fprintf(f, "step\n1\n2\n");
    std::fclose(f);
  }
  BT_CHECK(t, bt::port::write_loss_plot_script("plots/empty.csv", "plots/empty.png", "plots/plot_empty.py") ==
                  bt::Status::kOk);
  char command[256];
  std::snprintf(command, sizeof(command), "%s plots/plot_empty.py >/dev/null 2>&1", kPython);
  BT_CHECK(t, run(command) != 0);
}

// d tanh(x)/dx by reverse mode, for the function plot.
double tanh_slope(double x) {
  static bt::FixedTape<double, 8> tape;
  tape.reset();
  const auto v = tape.leaf(x);
  static_cast<void>(tape.backward(bt::tanh(v)));
  return v.grad();
}

void function_and_line_plots(bt_test::Context& t) {
  BT_CHECK(t, ::chdir(g_work) == 0);
  static_cast<void>(::unlink("plots/tanh_slope.png"));
  // A title with a quote, a backslash and a newline must still be valid Python.
  const bt::port::PlotLabels labels{"d tanh(x)/dx: it's \\ reverse\nmode", "x", "slope"};
  BT_CHECK(t, bt::port::write_function_plot_script(&tanh_slope, -4.0, 4.0, 161U, labels, "plots/tanh_slope.png",
                                                   "plots/plot_tanh_slope.py") == bt::Status::kOk);
  BT_CHECK(t, run_script(".", "plots/plot_tanh_slope.py"));
  Png png = inspect_png("plots/tanh_slope.png");
  BT_CHECK(t, png.signature && (png.width == 800UL) && (png.height == 500UL));
  // The data as Python reads it: 161 points on [-4, 4], each y the closed
  // form 1 - tanh(x)^2 (Python's math.tanh); the title survives escaping.
  BT_CHECK(t, python_agrees("plots/plot_tanh_slope.py",
                            "len(g['X']) == 161 and g['X'][0] == -4 and g['X'][-1] == 4 and g['X'][80] == 0 and "
                            "all(abs(y - (1 - math.tanh(x) ** 2)) < 1e-15 for x, y in zip(g['X'], g['Y'])) and "
                            "g['TITLE'] == 'd tanh(x)/dx: it' + chr(39) + 's ' + chr(92) + ' reverse' + chr(10) + "
                            "'mode'"));

  const double x[5] = {0.0, 1.0, 2.0, 3.0, 4.0};
  const double y[5] = {1.0, NAN, 4.0, 9.0, INFINITY};  // gaps are allowed
  static_cast<void>(::unlink("plots/line.png"));
  BT_CHECK(t, bt::port::write_line_plot_script(x, y, 5U, bt::port::PlotLabels{nullptr, nullptr, nullptr},
                                               "plots/line.png", "plots/plot_line.py") == bt::Status::kOk);
  BT_CHECK(t, run_script(".", "plots/plot_line.py"));
  png = inspect_png("plots/line.png");
  BT_CHECK(t, png.signature && (png.width == 800UL) && (png.height == 500UL));
  BT_CHECK(t, python_agrees("plots/plot_line.py",
                            "g['X'] == [0, 1, 2, 3, 4] and g['Y'][0] == 1 and math.isnan(g['Y'][1]) and "
                            "g['Y'][3] == 9 and g['Y'][4] == math.inf and g['TITLE'] == ''"));
  BT_CHECK(t, bt::port::write_line_plot_script(x, y, 0U, labels, "plots/no.png", "plots/no.py") ==
                  bt::Status::kInvalidArgument);
}

void heatmap(bt_test::Context& t) {
  BT_CHECK(t, ::chdir(g_work) == 0);
  double m[4 * 6];
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 6; ++c) {
      m[(r * 6) + c] = std::sin(0.5 * r) * std::cos(0.7 * c);
    }
  }
  static_cast<void>(::unlink("plots/heatmap.png"));
  BT_CHECK(t, bt::port::write_heatmap_script(m, 4U, 6U, bt::port::PlotLabels{"sin(r/2) cos(0.7c)", "c", "r"},
                                             "plots/heatmap.png", "plots/plot_heatmap.py") == bt::Status::kOk);
  BT_CHECK(t, run_script(".", "plots/plot_heatmap.py"));
  const Png png = inspect_png("plots/heatmap.png");
  BT_CHECK(t, png.signature && (png.width == 700UL) && (png.height == 600UL));
  BT_CHECK(t, python_agrees("plots/plot_heatmap.py",
                            "len(g['DATA']) == 4 and all(len(row) == 6 for row in g['DATA']) and "
                            "all(abs(g['DATA'][r][c] - math.sin(0.5 * r) * math.cos(0.7 * c)) < 1e-15 "
                            "for r in range(4) for c in range(6))"));
  BT_CHECK(t, bt::port::write_heatmap_script(m, 0U, 6U, bt::port::PlotLabels{nullptr, nullptr, nullptr},
                                             "plots/no.png", "plots/no.py") == bt::Status::kInvalidArgument);
}

const bt_test::TestCase kDotCases[] = {{"small_graph_renders", small_graph_renders}};
const bt_test::TestCase kPlotCases[] = {
    {"loss_curve", loss_curve},
    {"function_and_line_plots", function_and_line_plots},
    {"heatmap", heatmap},
};

}  // namespace

int main(int argc, char** argv) {
  if ((argc != 3) || ((std::strcmp(argv[1], "dot") != 0) && (std::strcmp(argv[1], "plots") != 0))) {
    std::fprintf(stderr, "usage: host_pictures dot|plots WORK_DIR\n");
    return 2;
  }
  static_cast<void>(::mkdir(argv[2], 0755));
  static char work[512];
  if (::realpath(argv[2], work) == nullptr) {
    std::fprintf(stderr, "host_pictures: cannot resolve %s\n", argv[2]);
    return 2;
  }
  g_work = work;
  if (std::strcmp(argv[1], "dot") == 0) {
    return bt_test::run("pictures_dot", kDotCases, sizeof(kDotCases) / sizeof(kDotCases[0]));
  }
  char probe[128];
  std::snprintf(probe, sizeof(probe), "%s -c 'import matplotlib' >/dev/null 2>&1", kPython);
  if (run(probe) != 0) {
    std::printf("pictures_plots: %s has no matplotlib (Debian python3-matplotlib): skipped\n", kPython);
    return 77;
  }
  return bt_test::run("pictures_plots", kPlotCases, sizeof(kPlotCases) / sizeof(kPlotCases[0]));
}

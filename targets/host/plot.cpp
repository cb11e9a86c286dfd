// SPDX-License-Identifier: Apache-2.0
// burtorch-plot: draws the columns of a CSV file as a line plot, SVG or PNG,
// without Python (port::write_csv_plot_svg/png). tools/bench draws its plots
// with it; a trainer's loss CSV can be drawn again with it.
#include <burtorch/port/plot.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

namespace {

namespace bt = burtorch;

constexpr const char* kProgram = "burtorch-plot";
constexpr const char* kUsage =
    "usage: burtorch-plot [flags] CSV OUTPUT\n"
    "Draws the columns of CSV as a line plot into OUTPUT: SVG if it ends in .svg, PNG\n"
    "if .png (800 x 500). The CSV: a header row, then rows of numbers; column 1 is x,\n"
    "every other column a curve; columns NAME:lo and NAME:hi draw error bars on NAME.\n"
    "Exit status 2: bad flags, an unreadable CSV or an output that cannot be written.\n"
    "  --title T          title (default: the CSV's file name)\n"
    "  --x-label T        x axis label (default: the first column's name)\n"
    "  --y-label T        y axis label (default: none)\n"
    "  --x-scale S        linear (default), log or auto (log when every value is\n"
    "                     positive and the largest is at least 10 times the smallest)\n"
    "  --y-scale S        the same for y (default auto)\n"
    "  --markers          a dot on every point\n"
    "  --mark X           a dashed vertical line at x = X\n"
    "  --mark-label T     its label\n"
    "  --help             this text\n";

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", kProgram, message.c_str());
  std::exit(2);
}

bt::port::PlotScale scale_of(const char* flag, const std::string& v) {
  if (v == "linear") {
    return bt::port::PlotScale::kLinear;
  }
  if (v == "log") {
    return bt::port::PlotScale::kLog;
  }
  if (v == "auto") {
    return bt::port::PlotScale::kAuto;
  }
  fail(std::string("bad value for ") + flag + ": '" + v + "' (want linear, log or auto)");
}

bool ends_with(const std::string& s, const char* tail) {
  const std::size_t n = std::strlen(tail);
  return (s.size() > n) && (s.compare(s.size() - n, n, tail) == 0);
}

}  // namespace

int main(int argc, char** argv) {
  bt::port::CsvPlot plot;
  std::string title;
  std::string x_label;
  std::string y_label;
  std::string mark_label;
  std::string files[2];
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if ((flag == "--help") || (flag == "-h")) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (flag == "--markers") {
      plot.markers = true;
      continue;
    }
    if ((flag.size() > 1U) && (flag[0] == '-')) {
      if (i + 1 >= argc) {
        fail("unknown flag or missing value: '" + flag + "' (see --help)");
      }
      const std::string v = argv[++i];
      if (flag == "--title") {
        title = v;
      } else if (flag == "--x-label") {
        x_label = v;
      } else if (flag == "--y-label") {
        y_label = v;
      } else if (flag == "--x-scale") {
        plot.x_scale = scale_of("--x-scale", v);
      } else if (flag == "--y-scale") {
        plot.y_scale = scale_of("--y-scale", v);
      } else if (flag == "--mark") {
        char* end = nullptr;
        plot.mark = std::strtod(v.c_str(), &end);
        if ((end == v.c_str()) || (*end != '\0')) {
          fail("bad value for --mark: '" + v + "'");
        }
        plot.has_mark = true;
      } else if (flag == "--mark-label") {
        mark_label = v;
      } else {
        fail("unknown flag: '" + flag + "' (see --help)");
      }
      continue;
    }
    if (positional == 2) {
      fail("more than two files: '" + flag + "' (see --help)");
    }
    files[positional] = flag;
    ++positional;
  }
  if (positional != 2) {
    fail("want a CSV file and an output file (see --help)");
  }
  const bool png = ends_with(files[1], ".png");
  if (!png && !ends_with(files[1], ".svg")) {
    fail("'" + files[1] + "': the output's name must end in .svg or .png");
  }
  plot.title = title.empty() ? nullptr : title.c_str();
  plot.x_label = x_label.empty() ? nullptr : x_label.c_str();
  plot.y_label = y_label.empty() ? nullptr : y_label.c_str();
  plot.mark_label = mark_label.empty() ? nullptr : mark_label.c_str();
  errno = 0;
  bt::Status s = bt::Status::kOk;
  if (png) {
    const std::unique_ptr<std::uint8_t[]> pixels(new (std::nothrow) std::uint8_t[bt::port::kPlotPngBufferBytes]);
    if (pixels == nullptr) {
      fail("out of memory");
    }
    s = bt::port::write_csv_plot_png(files[0].c_str(), files[1].c_str(), plot, pixels.get(),
                                     bt::port::kPlotPngBufferBytes);
  } else {
    s = bt::port::write_csv_plot_svg(files[0].c_str(), files[1].c_str(), plot);
  }
  if (s == bt::Status::kBadFormat) {
    fail("'" + files[0] + "' is not a CSV this program plots (a header row, then rows of numbers; at most " +
         std::to_string(bt::port::kPlotMaxColumns) + " columns of lines up to " +
         std::to_string(bt::port::kPlotMaxLine) + " bytes)");
  }
  if (s != bt::Status::kOk) {
    const int error = errno;
    fail("cannot plot '" + files[0] + "' into '" + files[1] + "': " +
         (((s == bt::Status::kIoError) && (error != 0)) ? std::strerror(error) : bt::status_name(s)));
  }
  if ((std::printf("wrote %s\n", files[1].c_str()) < 0) || (std::fflush(stdout) != 0)) {
    fail(std::string("cannot write standard output: ") + std::strerror(errno));
  }
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
/// @file
/// Plots from C++ (POSIX port, host only). Drawn here, without Python: line
/// plots of the columns of a CSV file as SVG or PNG (write_csv_plot_svg,
/// write_csv_plot_png; the trainers' loss curves and tools/bench's plots).
/// As matplotlib scripts that a user (or a test) runs with `python3 SCRIPT`
/// to get a PNG: a loss curve from a CSV file, a line plot of sampled data or
/// of a function, and a heatmap of a matrix (the paper's generatePlot /
/// generateHeatMap).
///
/// Drawn plots: no heap (the CSV is read once per curve, the PNG's pixels
/// are the caller's buffer); every write, flush and close is checked.
///
/// Scripts are self-contained (Agg backend, no display needed). Data given as
/// arrays is embedded with 17 significant digits. Relative paths are used as
/// written when they resolve from the current directory; otherwise the script
/// falls back to the same file name next to itself, so both `python3
/// out/plot.py` and `cd out && python3 plot.py` work. Files are written
/// atomically (port::FileWriter). Images are 100 dpi: 800 x 500 pixels for
/// line plots, 700 x 600 for heatmaps.
#ifndef BURTORCH_PORT_PLOT_HPP
#define BURTORCH_PORT_PLOT_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/status.hpp"

namespace burtorch {
namespace port {

/// Text around a plot; any member may be nullptr (a default is used).
struct PlotLabels {
  const char* title;    ///< the plot's title
  const char* x_label;  ///< label of the x axis
  const char* y_label;  ///< label of the y axis
};

/// How an axis maps values: linear, log10, or kAuto (log10 when every value
/// is positive and the largest is at least 10 times the smallest).
enum class PlotScale : std::uint8_t {
  kLinear,  ///< values as they are
  kLog,     ///< log10 of the values; values <= 0 are left out
  kAuto     ///< kLog when every value is positive and max >= 10 * min, else kLinear
};

/// A line plot of a CSV file's columns (write_csv_plot_svg/png). The CSV:
/// a header row of column names (if its first cell is not a number), then
/// rows of numbers; column 1 is x, every other column a curve of the points
/// whose cells are numbers (an empty cell is no point; on a log axis, a
/// value <= 0 is no point). Columns named "NAME:lo" and "NAME:hi" are not
/// curves: they draw error bars on curve NAME. At most kPlotMaxColumns
/// columns and kPlotMaxCurves curves; lines at most kPlotMaxLine bytes.
struct CsvPlot {
  const char* title = nullptr;    ///< nullptr: the CSV file's name
  const char* x_label = nullptr;  ///< nullptr: the first column's name
  const char* y_label = nullptr;  ///< nullptr: none
  PlotScale x_scale = PlotScale::kLinear;  ///< the x axis
  PlotScale y_scale = PlotScale::kAuto;    ///< the y axis
  bool markers = false;      ///< a dot on every point (always on a curve of fewer than 2 points)
  bool has_mark = false;     ///< a dashed vertical line at x = mark (e.g. where a run resumed)
  double mark = 0.0;         ///< where the mark line is, with has_mark
  const char* mark_label = nullptr;  ///< text next to the mark line
};

constexpr std::size_t kPlotMaxColumns = 16U;  ///< columns a plotted CSV may have
constexpr std::size_t kPlotMaxCurves = 6U;    ///< curves one plot draws
constexpr std::size_t kPlotMaxLine = 1024U;   ///< bytes of one CSV line, newline included
constexpr std::size_t kPlotWidth = 800U;      ///< pixels (PNG) or user units (SVG)
constexpr std::size_t kPlotHeight = 500U;     ///< pixels (PNG) or user units (SVG)
/// Bytes of the pixel buffer write_csv_plot_png needs (one byte per pixel).
constexpr std::size_t kPlotPngBufferBytes = kPlotWidth * kPlotHeight;

/// Writes the plot of `csv_path` as SVG 1.1 to `svg_path` (atomically, as
/// port::FileWriter). Each curve is one `<polyline class="curve"
/// data-column="NAME">` with one "x,y" pair per point, in the CSV's order.
/// kIoError: a file cannot be read or written; kBadFormat: not such a CSV
/// (no data row, a line too long, too many columns, no curve).
Status write_csv_plot_svg(const char* csv_path, const char* svg_path, const CsvPlot& plot) noexcept;

/// The same picture as an 8-bit palette PNG of kPlotWidth x kPlotHeight
/// pixels, drawn into `pixels` (kPlotPngBufferBytes bytes, the caller's)
/// with a built-in bitmap font; compressed with deflate's fixed codes.
Status write_csv_plot_png(const char* csv_path, const char* png_path, const CsvPlot& plot, std::uint8_t* pixels,
                          std::size_t pixel_bytes) noexcept;

/// Loss curve from a CSV file the trainer writes (read when the script runs,
/// so the script can be written first). Row 1 may be a header. Column 1 is
/// the x axis (step); every column whose header contains "loss" is a line
/// (or, if none does, every other column). Non-numeric cells are skipped.
Status write_loss_plot_script(const char* csv_path, const char* png_path, const char* script_path) noexcept;

/// Line plot of y[i] against x[i], i < n (generatePlot).
Status write_line_plot_script(const double* x, const double* y, std::size_t n, const PlotLabels& labels,
                              const char* png_path, const char* script_path) noexcept;

/// Line plot of f on [from, to] sampled at n >= 2 evenly spaced points.
Status write_function_plot_script(double (*f)(double), double from, double to, std::size_t n,
                                  const PlotLabels& labels, const char* png_path, const char* script_path) noexcept;

/// Heatmap of a row-major rows x cols matrix with a colour bar
/// (generateHeatMap). Row 0 is drawn at the top.
Status write_heatmap_script(const double* values, std::size_t rows, std::size_t cols, const PlotLabels& labels,
                            const char* png_path, const char* script_path) noexcept;

}  // namespace port
}  // namespace burtorch

#endif  // BURTORCH_PORT_PLOT_HPP

// SPDX-License-Identifier: Apache-2.0
/// @file
/// Matplotlib scripts from C++ (POSIX port, host only): a loss curve from a
/// CSV file, a line plot of sampled data or of a function, and a heatmap of a
/// matrix -- the paper's generatePlot / generateHeatMap, as Python scripts
/// that a user (or a test) runs with `python3 SCRIPT` to get a PNG.
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

#include "burtorch/status.hpp"

namespace burtorch {
namespace port {

/// Text around a plot; any member may be nullptr (a default is used).
struct PlotLabels {
  const char* title;    ///< the plot's title
  const char* x_label;  ///< label of the x axis
  const char* y_label;  ///< label of the y axis
};

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

// SPDX-License-Identifier: Apache-2.0
// Line plots of a CSV file's columns as SVG or PNG, drawn without Python
// (port/include/burtorch/port/plot.hpp). One layout, two canvases: SvgCanvas
// writes SVG elements, PixelCanvas paints a caller's palette buffer that
// write_png() encodes (zlib stream of fixed-code deflate blocks whose only
// matches repeat the previous byte, after PNG's "Up" filter). No heap: the
// CSV is read again for every curve.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "burtorch/tools/checkpoint.hpp"  // crc32
#include "burtorch/port/file.hpp"
#include "burtorch/port/plot.hpp"
#include "plot_font.hpp"

namespace burtorch {
namespace port {
namespace {

// --- reading the CSV ---------------------------------------------------------

// The lines of a file, one at a time, without the line end.
class LineReader {
 public:
  explicit LineReader(const char* path) noexcept {
    status_ = file_.open(path);
    status_ = (status_ == Status::kInvalidArgument) ? Status::kIoError : status_;
    source_ = file_.source();
  }
  Status status() const noexcept { return status_; }
  const char* line() const noexcept { return line_; }
  // True with the next line in line(); false at the end or on an error
  // (status() tells which).
  bool next() noexcept {
    std::size_t length = 0U;
    bool any = false;
    while (status_ == Status::kOk) {
      if (at_ == got_) {
        if (ended_) {
          break;
        }
        std::size_t got = 0U;
        if (source_.read(source_.context, chunk_, sizeof(chunk_), &got) != Status::kOk) {
          status_ = Status::kIoError;
          break;
        }
        at_ = 0U;
        got_ = got;
        ended_ = (got == 0U);
        continue;
      }
      const char c = static_cast<char>(chunk_[at_]);
      ++at_;
      any = true;
      if (c == '\n') {
        break;
      }
      if (length + 1U >= kPlotMaxLine) {
        status_ = Status::kBadFormat;
        break;
      }
      line_[length] = c;
      ++length;
    }
    if ((length > 0U) && (line_[length - 1U] == '\r')) {
      --length;
    }
    line_[length] = '\0';
    return (status_ == Status::kOk) && any;
  }

 private:
  FileReader file_;
  ByteSource source_{};
  Status status_ = Status::kOk;
  std::uint8_t chunk_[4096] = {};
  std::size_t at_ = 0U;
  std::size_t got_ = 0U;
  bool ended_ = false;
  char line_[kPlotMaxLine + 1U] = {};
};

// A line split at its commas (in place).
struct Cells {
  char* cell[kPlotMaxColumns] = {};
  std::size_t count = 0U;
};

// False if the line has more than kPlotMaxColumns cells.
bool split(char* line, Cells& out) noexcept {
  out.count = 0U;
  char* at = line;
  for (;;) {
    if (out.count == kPlotMaxColumns) {
      return false;
    }
    out.cell[out.count] = at;
    ++out.count;
    char* comma = std::strchr(at, ',');
    if (comma == nullptr) {
      return true;
    }
    *comma = '\0';
    at = comma + 1;
  }
}

// The number in `text` (spaces around it allowed); false if it is not one
// (or is empty, or not finite).
bool number(const char* text, double& v) noexcept {
  while (*text == ' ') {
    ++text;
  }
  if (*text == '\0') {
    return false;
  }
  char* end = nullptr;
  v = std::strtod(text, &end);
  while ((end != nullptr) && (*end == ' ')) {
    ++end;
  }
  return (end != text) && (end != nullptr) && (*end == '\0') && std::isfinite(v);
}

constexpr std::size_t kNameBytes = 48U;

// What the first pass learns about the CSV.
struct Table {
  bool header = false;
  std::size_t columns = 0U;
  char names[kPlotMaxColumns][kNameBytes] = {};
  std::size_t curves = 0U;
  std::size_t curve_column[kPlotMaxCurves] = {};
  long lo_column[kPlotMaxCurves] = {};  // -1: no error bar
  long hi_column[kPlotMaxCurves] = {};
  std::size_t rows = 0U;                // data rows with a numeric x
};

bool ends_with(const char* s, const char* tail) noexcept {
  const std::size_t n = std::strlen(s);
  const std::size_t m = std::strlen(tail);
  return (n >= m) && (std::strcmp(&s[n - m], tail) == 0);
}

// The curve a "NAME:lo"/"NAME:hi" column belongs to, or -1.
long bar_owner(const Table& t, std::size_t column, const char* tail) {
  const char* name = t.names[column];
  if (!ends_with(name, tail)) {
    return -1;
  }
  const std::size_t stem = std::strlen(name) - std::strlen(tail);
  for (std::size_t c = 0U; c < t.curves; ++c) {
    const char* curve = t.names[t.curve_column[c]];
    if ((std::strlen(curve) == stem) && (std::strncmp(curve, name, stem) == 0)) {
      return static_cast<long>(c);
    }
  }
  return -1;
}

// Ranges of the values, all and positive only.
struct Range {
  double min = HUGE_VAL;
  double max = -HUGE_VAL;
  double min_positive = HUGE_VAL;
  bool all_positive = true;
  std::size_t count = 0U;
  void add(double v) noexcept {
    min = (v < min) ? v : min;
    max = (v > max) ? v : max;
    if (v > 0.0) {
      min_positive = (v < min_positive) ? v : min_positive;
    } else {
      all_positive = false;
    }
    ++count;
  }
};

// An axis: scale and the visible interval of (transformed) values.
struct Axis {
  bool log = false;
  double lo = 0.0;  // transformed (log10 when log)
  double hi = 1.0;
  bool valid(double v) const noexcept { return !log || (v > 0.0); }
  double map(double v) const noexcept { return log ? std::log10(v) : v; }
};

Axis choose_axis(const Range& r, PlotScale scale) noexcept {
  Axis a;
  a.log = (scale == PlotScale::kLog) ||
          ((scale == PlotScale::kAuto) && r.all_positive && (r.count > 0U) && (r.max >= 10.0 * r.min));
  double lo = a.log ? r.min_positive : r.min;
  double hi = r.max;
  if (!(lo <= hi) || (a.log && !(lo < HUGE_VAL))) {
    lo = a.log ? 1.0 : 0.0;
    hi = a.log ? 10.0 : 1.0;
  }
  a.lo = a.map(lo);
  a.hi = a.map(hi);
  if (a.hi - a.lo < 1e-12 * (std::fabs(a.hi) + 1.0)) {
    const double pad = a.log ? 0.5 : ((std::fabs(a.lo) > 0.0) ? 0.1 * std::fabs(a.lo) : 1.0);
    a.lo -= pad;
    a.hi += pad;
  } else {
    const double pad = 0.04 * (a.hi - a.lo);
    a.lo -= pad;
    a.hi += pad;
  }
  return a;
}

// --- ticks ------------------------------------------------------------------

constexpr std::size_t kMaxTicks = 24U;
struct Ticks {
  double at[kMaxTicks] = {};  // transformed positions
  char label[kMaxTicks][16] = {};
  std::size_t count = 0U;
  std::size_t widest = 0U;  // characters of the longest label
  void add(double pos, double value) noexcept {
    if (count == kMaxTicks) {
      return;
    }
    at[count] = pos;
    static_cast<void>(std::snprintf(label[count], sizeof(label[count]), "%.6g", value));
    const std::size_t n = std::strlen(label[count]);
    widest = (n > widest) ? n : widest;
    ++count;
  }
};

Ticks ticks_for(const Axis& a) noexcept {
  Ticks t;
  if (a.log) {
    const double first = std::ceil(a.lo - 1e-9);
    const double last = std::floor(a.hi + 1e-9);
    const double decades = last - first + 1.0;
    // 1, 2, 5 per decade when few decades are visible; every digit when
    // less than one is.
    const int per_decade = (decades >= 3.0) ? 1 : ((a.hi - a.lo >= 1.0) ? 3 : 9);
    static constexpr double kOne[] = {1.0};
    static constexpr double kThree[] = {1.0, 2.0, 5.0};
    static constexpr double kNine[] = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0};
    const double* digits = (per_decade == 1) ? kOne : ((per_decade == 3) ? kThree : kNine);
    const double step = (decades > 12.0) ? std::ceil(decades / 8.0) : 1.0;
    for (double d = std::floor(a.lo); (d <= a.hi) && (t.count < kMaxTicks); d += step) {
      for (int i = 0; i < per_decade; ++i) {
        const double value = digits[i] * std::pow(10.0, d);
        const double pos = std::log10(value);
        if ((pos >= a.lo) && (pos <= a.hi)) {
          t.add(pos, value);
        }
      }
    }
    return t;
  }
  const double raw = (a.hi - a.lo) / 6.0;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / magnitude;
  const double step = ((norm < 1.5) ? 1.0 : ((norm < 3.0) ? 2.0 : ((norm < 7.0) ? 5.0 : 10.0))) * magnitude;
  for (double k = std::ceil(a.lo / step); (k * step <= a.hi) && (t.count < kMaxTicks); k += 1.0) {
    const double v = k * step;
    t.add(v, (std::fabs(v) < step * 1e-9) ? 0.0 : v);
  }
  return t;
}

// --- colours -----------------------------------------------------------------

enum Colour : std::uint8_t {
  kBackground = 0U,
  kInk = 1U,
  kGrid = 2U,
  kMarkLine = 3U,
  kLegendBorder = 4U,
  kFirstCurve = 5U,
};
constexpr std::size_t kColours = kFirstCurve + kPlotMaxCurves;
constexpr std::uint8_t kRgb[kColours][3] = {
    {255U, 255U, 255U}, {34U, 34U, 34U},  {226U, 226U, 226U}, {110U, 110U, 110U}, {170U, 170U, 170U},
    {31U, 94U, 180U},   {214U, 104U, 0U}, {40U, 150U, 60U},   {200U, 40U, 40U},   {120U, 70U, 170U},
    {140U, 90U, 50U}};

// --- layout --------------------------------------------------------------------

constexpr double kCharWidth = 12.0;  // PNG: 5 x 7 glyphs drawn 2 x 2, one blank column
constexpr double kCharHeight = 14.0;

struct Layout {
  double left = 0.0;
  double top = 46.0;
  double width = 0.0;
  double height = 0.0;
  Axis x;
  Axis y;
  Ticks x_ticks;
  Ticks y_ticks;
  double px(double v) const noexcept { return left + (x.map(v) - x.lo) / (x.hi - x.lo) * width; }
  double py(double v) const noexcept { return top + height - (y.map(v) - y.lo) / (y.hi - y.lo) * height; }
  bool inside(double vx, double vy) const noexcept {
    const double a = x.map(vx);
    const double b = y.map(vy);
    return x.valid(vx) && y.valid(vy) && (a >= x.lo) && (a <= x.hi) && (b >= y.lo) && (b <= y.hi);
  }
};

// --- canvases -----------------------------------------------------------------

enum class Anchor : std::uint8_t { kStart, kMiddle, kEnd };

// SVG elements through a FileWriter; the first error is kept.
class SvgCanvas {
 public:
  explicit SvgCanvas(FileWriter& file) noexcept : sink_(file.sink()) {}
  Status status() const noexcept { return status_; }
  void raw(const char* s) noexcept {
    if (status_ == Status::kOk) {
      status_ = write_text(sink_, s);
    }
  }
  void num(double v) noexcept {
    char text[32];
    static_cast<void>(std::snprintf(text, sizeof(text), "%.1f", v));
    raw(text);
  }
  void colour(std::uint8_t c) noexcept {
    char text[8];
    static_cast<void>(std::snprintf(text, sizeof(text), "#%02x%02x%02x", kRgb[c][0], kRgb[c][1], kRgb[c][2]));
    raw(text);
  }
  void escaped(const char* s) noexcept {
    char piece[2] = {'\0', '\0'};
    for (const char* p = s; *p != '\0'; ++p) {
      switch (*p) {
        case '&': raw("&amp;"); break;
        case '<': raw("&lt;"); break;
        case '>': raw("&gt;"); break;
        case '"': raw("&quot;"); break;
        default:
          // XML 1.0 allows no control characters but tab, newline, return.
          piece[0] = (static_cast<unsigned char>(*p) < 0x20U) ? ' ' : *p;
          raw(piece);
          break;
      }
    }
  }
  void begin(const char* title) noexcept {
    raw("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"");
    num(static_cast<double>(kPlotWidth));
    raw("\" height=\"");
    num(static_cast<double>(kPlotHeight));
    raw("\" viewBox=\"0 0 ");
    num(static_cast<double>(kPlotWidth));
    raw(" ");
    num(static_cast<double>(kPlotHeight));
    raw("\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"13\">\n<title>");
    escaped(title);
    raw("</title>\n");
  }
  void end() noexcept { raw("</svg>\n"); }
  void fill_rect(double x, double y, double w, double h, std::uint8_t fill, std::uint8_t stroke) noexcept {
    rect(x, y, w, h, &fill, stroke);
  }
  void frame(double x, double y, double w, double h, std::uint8_t stroke) noexcept {
    rect(x, y, w, h, nullptr, stroke);
  }
  void line(double x0, double y0, double x1, double y1, std::uint8_t c, int width, bool dashed) noexcept {
    raw("<line x1=\"");
    num(x0);
    raw("\" y1=\"");
    num(y0);
    raw("\" x2=\"");
    num(x1);
    raw("\" y2=\"");
    num(y1);
    raw("\" stroke=\"");
    colour(c);
    raw("\" stroke-width=\"");
    num(static_cast<double>(width));
    raw(dashed ? "\" stroke-dasharray=\"6 4\"/>\n" : "\"/>\n");
  }
  void text(double x, double y, const char* s, Anchor anchor, bool vertical, bool large) noexcept {
    raw("<text x=\"");
    num(x);
    raw("\" y=\"");
    num(y + (large ? 6.0 : 5.0));  // the baseline, for text centred on y
    raw(anchor == Anchor::kStart ? "\"" : (anchor == Anchor::kMiddle ? "\" text-anchor=\"middle\"" : "\" text-anchor=\"end\""));
    if (large) {
      raw(" font-size=\"16\"");
    }
    if (vertical) {
      raw(" transform=\"rotate(-90 ");
      num(x);
      raw(" ");
      num(y);
      raw(")\"");
    }
    raw(" fill=\"");
    colour(kInk);
    raw("\">");
    escaped(s);
    raw("</text>\n");
  }
  void curve_begin(const char* name, std::uint8_t c) noexcept {
    raw("<polyline class=\"curve\" data-column=\"");
    escaped(name);
    raw("\" fill=\"none\" stroke=\"");
    colour(c);
    raw("\" stroke-width=\"2\" stroke-linejoin=\"round\" points=\"");
    first_ = true;
  }
  void curve_point(double x, double y) noexcept {
    if (!first_) {
      raw(" ");
    }
    first_ = false;
    num(x);
    raw(",");
    num(y);
  }
  void curve_end() noexcept { raw("\"/>\n"); }
  void dot(double x, double y, std::uint8_t c) noexcept {
    raw("<circle class=\"marker\" cx=\"");
    num(x);
    raw("\" cy=\"");
    num(y);
    raw("\" r=\"3.5\" fill=\"");
    colour(c);
    raw("\"/>\n");
  }

 private:
  // A rectangle, filled with *fill (nullptr: not filled).
  void rect(double x, double y, double w, double h, const std::uint8_t* fill, std::uint8_t stroke) noexcept {
    raw("<rect x=\"");
    num(x);
    raw("\" y=\"");
    num(y);
    raw("\" width=\"");
    num(w);
    raw("\" height=\"");
    num(h);
    raw("\" fill=\"");
    if (fill != nullptr) {
      colour(*fill);
    } else {
      raw("none");
    }
    raw("\" stroke=\"");
    colour(stroke);
    raw("\"/>\n");
  }

  ByteSink sink_;
  Status status_ = Status::kOk;
  bool first_ = true;
};

// Paints a kPlotWidth x kPlotHeight palette image.
class PixelCanvas {
 public:
  explicit PixelCanvas(std::uint8_t* pixels) noexcept : px_(pixels) {}
  Status status() const noexcept { return Status::kOk; }
  void begin(const char*) noexcept { std::memset(px_, kBackground, kPlotPngBufferBytes); }  // BT-DEV-010
  void end() noexcept {}
  void fill_rect(double x, double y, double w, double h, std::uint8_t fill, std::uint8_t stroke) noexcept {
    for (long r = at(y); r <= at(y + h); ++r) {
      for (long c = at(x); c <= at(x + w); ++c) {
        set(c, r, fill);
      }
    }
    frame(x, y, w, h, stroke);
  }
  void frame(double x, double y, double w, double h, std::uint8_t stroke) noexcept {
    line(x, y, x + w, y, stroke, 1, false);
    line(x, y + h, x + w, y + h, stroke, 1, false);
    line(x, y, x, y + h, stroke, 1, false);
    line(x + w, y, x + w, y + h, stroke, 1, false);
  }
  // Bresenham with a square pen of `width` pixels; dashes of 6 on, 4 off.
  void line(double x0, double y0, double x1, double y1, std::uint8_t c, int width, bool dashed) noexcept {
    long ax = at(x0);
    long ay = at(y0);
    const long bx = at(x1);
    const long by = at(y1);
    const long dx = std::labs(bx - ax);
    const long dy = -std::labs(by - ay);
    const long sx = (ax < bx) ? 1L : -1L;
    const long sy = (ay < by) ? 1L : -1L;
    long err = dx + dy;
    long n = 0;
    for (;;) {
      if (!dashed || ((n % 10L) < 6L)) {
        for (long i = 0; i < width; ++i) {
          for (long j = 0; j < width; ++j) {
            set(ax + i - (width - 1) / 2, ay + j - (width - 1) / 2, c);
          }
        }
      }
      ++n;
      if ((ax == bx) && (ay == by)) {
        break;
      }
      const long e2 = 2L * err;
      if (e2 >= dy) {
        err += dy;
        ax += sx;
      }
      if (e2 <= dx) {
        err += dx;
        ay += sy;
      }
    }
  }
  void text(double x, double y, const char* s, Anchor anchor, bool vertical, bool large) noexcept {
    static_cast<void>(large);
    const double length = static_cast<double>(std::strlen(s)) * kCharWidth;
    const double shift = (anchor == Anchor::kStart) ? 0.0 : ((anchor == Anchor::kMiddle) ? length / 2.0 : length);
    // u: where the next glyph starts along the text (upwards when vertical).
    double u = vertical ? (y + shift) : (x - shift);
    for (const char* p = s; *p != '\0'; ++p) {
      const char* g = font::glyph(*p);
      for (std::size_t row = 0U; row < font::kHeight; ++row) {
        for (std::size_t col = 0U; col < font::kWidth; ++col) {
          if (g[(row * font::kWidth) + col] != '#') {
            continue;
          }
          for (long i = 0; i < 2; ++i) {
            for (long j = 0; j < 2; ++j) {
              const long along = static_cast<long>(2U * col) + i;
              const long across = static_cast<long>(2U * row) + j - 7L;  // centred on y (or x)
              if (vertical) {  // reads upwards: along is -y, across is +x
                set(at(x) + across, at(u) - along, kInk);
              } else {
                set(at(u) + along, at(y) + across, kInk);
              }
            }
          }
        }
      }
      u += vertical ? -kCharWidth : kCharWidth;
    }
  }
  void curve_begin(const char*, std::uint8_t c) noexcept {
    colour_ = c;
    first_ = true;
  }
  void curve_point(double x, double y) noexcept {
    if (!first_) {
      line(last_x_, last_y_, x, y, colour_, 2, false);
    }
    first_ = false;
    last_x_ = x;
    last_y_ = y;
  }
  void curve_end() noexcept {
    if (!first_) {
      line(last_x_, last_y_, last_x_, last_y_, colour_, 2, false);
    }
  }
  void dot(double x, double y, std::uint8_t c) noexcept {
    for (long r = -3; r <= 3; ++r) {
      for (long q = -3; q <= 3; ++q) {
        if ((r * r) + (q * q) <= 10L) {
          set(at(x) + q, at(y) + r, c);
        }
      }
    }
  }

 private:
  // The pixel that covers v: pixel i spans [i, i + 1), as in SVG.
  static long at(double v) noexcept { return static_cast<long>(std::floor(v)); }
  void set(long x, long y, std::uint8_t c) noexcept {
    if ((x >= 0) && (y >= 0) && (x < static_cast<long>(kPlotWidth)) && (y < static_cast<long>(kPlotHeight))) {
      px_[(static_cast<std::size_t>(y) * kPlotWidth) + static_cast<std::size_t>(x)] = c;
    }
  }
  std::uint8_t* px_;
  std::uint8_t colour_ = kInk;
  bool first_ = true;
  double last_x_ = 0.0;
  double last_y_ = 0.0;
};

// --- the plot ----------------------------------------------------------------------

// Calls f(cells, first) for each line of the CSV that is not blank, `first`
// for the first of them (the header, if it has one).
template <class F>
Status each_row(const char* csv_path, F&& f) noexcept {
  LineReader in(csv_path);
  bool first = true;
  while (in.next()) {
    char line[kPlotMaxLine + 1U];
    std::memcpy(line, in.line(), std::strlen(in.line()) + 1U);  // BT-DEV-010
    Cells cells;
    if (!split(line, cells)) {
      return Status::kBadFormat;
    }
    if ((cells.count == 1U) && (cells.cell[0][0] == '\0')) {
      continue;  // a blank line
    }
    f(cells, first);
    first = false;
  }
  return in.status();
}

// The column names, the curves and their error-bar columns (first row).
void read_header(const Cells& cells, Table& t) noexcept {
  double x = 0.0;
  t.columns = cells.count;
  t.header = !number(cells.cell[0], x);
  for (std::size_t c = 0U; c < cells.count; ++c) {
    if (t.header) {
      static_cast<void>(std::snprintf(t.names[c], kNameBytes, "%s", cells.cell[c]));
    } else {
      static_cast<void>(std::snprintf(t.names[c], kNameBytes, "column %zu", c + 1U));
    }
  }
  for (std::size_t c = 1U; c < cells.count; ++c) {
    if (!ends_with(t.names[c], ":lo") && !ends_with(t.names[c], ":hi") && (t.curves < kPlotMaxCurves)) {
      t.curve_column[t.curves] = c;
      t.lo_column[t.curves] = -1;
      t.hi_column[t.curves] = -1;
      ++t.curves;
    }
  }
  for (std::size_t c = 1U; c < cells.count; ++c) {
    const long lo = bar_owner(t, c, ":lo");
    const long hi = bar_owner(t, c, ":hi");
    if (lo >= 0) {
      t.lo_column[lo] = static_cast<long>(c);
    }
    if (hi >= 0) {
      t.hi_column[hi] = static_cast<long>(c);
    }
  }
}

// The number in cell `column` of a row, if it has one.
bool cell_number(const Cells& cells, long column, double& v) noexcept {
  return (column >= 0) && (static_cast<std::size_t>(column) < cells.count) &&
         number(cells.cell[static_cast<std::size_t>(column)], v);
}

// Pass 1: header, curves, ranges.
Status scan(const char* csv_path, Table& t, Range& xr, Range& yr) noexcept {
  const Status s = each_row(csv_path, [&](const Cells& cells, bool first) {
    if (first) {
      read_header(cells, t);
      if (t.header) {
        return;
      }
    }
    double x = 0.0;
    if (!number(cells.cell[0], x)) {
      return;
    }
    ++t.rows;
    xr.add(x);
    for (std::size_t k = 0U; k < t.curves; ++k) {
      double v = 0.0;
      for (const long column : {static_cast<long>(t.curve_column[k]), t.lo_column[k], t.hi_column[k]}) {
        if (cell_number(cells, column, v)) {
          yr.add(v);
        }
      }
    }
  });
  if (s != Status::kOk) {
    return s;
  }
  return ((t.rows == 0U) || (t.curves == 0U)) ? Status::kBadFormat : Status::kOk;
}

// Calls f(x, y, lo_or_nan, hi_or_nan) for each point of curve k, in order.
template <class F>
Status each_point(const char* csv_path, const Table& t, std::size_t k, F&& f) noexcept {
  return each_row(csv_path, [&](const Cells& cells, bool first) {
    double x = 0.0;
    double y = 0.0;
    if ((first && t.header) || !number(cells.cell[0], x) ||
        !cell_number(cells, static_cast<long>(t.curve_column[k]), y)) {
      return;
    }
    double lo = NAN;
    double hi = NAN;
    static_cast<void>(cell_number(cells, t.lo_column[k], lo));
    static_cast<void>(cell_number(cells, t.hi_column[k], hi));
    f(x, y, lo, hi);
  });
}

const char* base_name(const char* path) noexcept {
  const char* slash = std::strrchr(path, '/');
  return (slash != nullptr) ? slash + 1 : path;
}

template <class Canvas>
Status draw(Canvas& canvas, const char* csv_path, const CsvPlot& plot) noexcept {
  Table t;
  Range xr;
  Range yr;
  const Status scanned = scan(csv_path, t, xr, yr);
  if (scanned != Status::kOk) {
    return scanned;
  }
  Layout l;
  l.x = choose_axis(xr, plot.x_scale);
  l.y = choose_axis(yr, plot.y_scale);
  l.x_ticks = ticks_for(l.x);
  l.y_ticks = ticks_for(l.y);
  const bool has_y_label = (plot.y_label != nullptr) && (plot.y_label[0] != '\0');
  l.left = 16.0 + (has_y_label ? kCharHeight + 10.0 : 0.0) + (static_cast<double>(l.y_ticks.widest) * kCharWidth) + 8.0;
  l.width = static_cast<double>(kPlotWidth) - l.left - 24.0;
  l.height = static_cast<double>(kPlotHeight) - l.top - 62.0;

  const char* title = (plot.title != nullptr) ? plot.title : base_name(csv_path);
  canvas.begin(title);
  canvas.fill_rect(0.0, 0.0, static_cast<double>(kPlotWidth) - 1.0, static_cast<double>(kPlotHeight) - 1.0,
                   kBackground, kBackground);
  for (std::size_t i = 0U; i < l.y_ticks.count; ++i) {
    const double y = l.top + l.height - (l.y_ticks.at[i] - l.y.lo) / (l.y.hi - l.y.lo) * l.height;
    canvas.line(l.left, y, l.left + l.width, y, kGrid, 1, false);
    canvas.line(l.left - 5.0, y, l.left, y, kInk, 1, false);
    canvas.text(l.left - 8.0, y, l.y_ticks.label[i], Anchor::kEnd, false, false);
  }
  for (std::size_t i = 0U; i < l.x_ticks.count; ++i) {
    const double x = l.left + (l.x_ticks.at[i] - l.x.lo) / (l.x.hi - l.x.lo) * l.width;
    canvas.line(x, l.top, x, l.top + l.height, kGrid, 1, false);
    canvas.line(x, l.top + l.height, x, l.top + l.height + 5.0, kInk, 1, false);
    canvas.text(x, l.top + l.height + 16.0, l.x_ticks.label[i], Anchor::kMiddle, false, false);
  }
  canvas.frame(l.left, l.top, l.width, l.height, kInk);
  canvas.text(static_cast<double>(kPlotWidth) / 2.0, 22.0, title, Anchor::kMiddle, false, true);
  canvas.text(l.left + l.width / 2.0, l.top + l.height + 42.0, (plot.x_label != nullptr) ? plot.x_label : t.names[0],
              Anchor::kMiddle, false, false);
  if (has_y_label) {
    canvas.text(18.0, l.top + l.height / 2.0, plot.y_label, Anchor::kMiddle, true, false);
  }
  if (plot.has_mark && l.x.valid(plot.mark) && (l.x.map(plot.mark) >= l.x.lo) && (l.x.map(plot.mark) <= l.x.hi)) {
    const double x = l.px(plot.mark);
    canvas.line(x, l.top, x, l.top + l.height, kMarkLine, 1, true);
    if (plot.mark_label != nullptr) {
      canvas.text(x + 5.0, l.top + 12.0, plot.mark_label, Anchor::kStart, false, false);
    }
  }

  // Curves: error bars, the line, markers. Points off a log axis are left out.
  std::size_t legend_columns = 0U;
  for (std::size_t k = 0U; k < t.curves; ++k) {
    const std::uint8_t c = static_cast<std::uint8_t>(kFirstCurve + k);
    const std::size_t n = std::strlen(t.names[t.curve_column[k]]);
    legend_columns = (n > legend_columns) ? n : legend_columns;
    Status s = each_point(csv_path, t, k, [&](double x, double, double lo, double hi) {
      if (l.inside(x, lo) && l.inside(x, hi)) {
        canvas.line(l.px(x), l.py(lo), l.px(x), l.py(hi), c, 1, false);
        canvas.line(l.px(x) - 3.0, l.py(lo), l.px(x) + 3.0, l.py(lo), c, 1, false);
        canvas.line(l.px(x) - 3.0, l.py(hi), l.px(x) + 3.0, l.py(hi), c, 1, false);
      }
    });
    canvas.curve_begin(t.names[t.curve_column[k]], c);
    std::size_t points = 0U;
    if (s == Status::kOk) {
      s = each_point(csv_path, t, k, [&](double x, double y, double, double) {
        if (l.x.valid(x) && l.y.valid(y)) {
          canvas.curve_point(l.px(x), l.py(y));
          ++points;
        }
      });
    }
    canvas.curve_end();
    if ((s == Status::kOk) && (plot.markers || (points < 2U))) {
      s = each_point(csv_path, t, k, [&](double x, double y, double, double) {
        if (l.x.valid(x) && l.y.valid(y)) {
          canvas.dot(l.px(x), l.py(y), c);
        }
      });
    }
    if (s != Status::kOk) {
      return s;
    }
  }

  // Legend, in the upper corner where the curves leave more room.
  const double legend_w = 44.0 + static_cast<double>(legend_columns) * kCharWidth;
  const double legend_h = 10.0 + 20.0 * static_cast<double>(t.curves);
  std::size_t in_right = 0U;
  std::size_t in_left = 0U;
  for (std::size_t k = 0U; k < t.curves; ++k) {
    const Status s = each_point(csv_path, t, k, [&](double x, double y, double, double) {
      if (l.x.valid(x) && l.y.valid(y) && (l.py(y) < l.top + legend_h + 12.0)) {
        in_right += (l.px(x) > l.left + l.width - legend_w - 12.0) ? 1U : 0U;
        in_left += (l.px(x) < l.left + legend_w + 12.0) ? 1U : 0U;
      }
    });
    if (s != Status::kOk) {
      return s;
    }
  }
  const double lx = (in_right <= in_left) ? (l.left + l.width - legend_w - 8.0) : (l.left + 8.0);
  const double ly = l.top + 8.0;
  canvas.fill_rect(lx, ly, legend_w, legend_h, kBackground, kLegendBorder);
  for (std::size_t k = 0U; k < t.curves; ++k) {
    const std::uint8_t c = static_cast<std::uint8_t>(kFirstCurve + k);
    const double y = ly + 15.0 + 20.0 * static_cast<double>(k);
    canvas.line(lx + 8.0, y, lx + 32.0, y, c, 2, false);
    canvas.text(lx + 38.0, y, t.names[t.curve_column[k]], Anchor::kStart, false, false);
  }
  canvas.end();
  return canvas.status();
}

// --- PNG -------------------------------------------------------------------------

// PNG chunks through a ByteSink: IDAT data is buffered and written in chunks
// as the buffer fills.
class PngWriter {
 public:
  explicit PngWriter(ByteSink sink) noexcept : sink_(sink) {}
  Status status() const noexcept { return status_; }
  void bytes(const std::uint8_t* data, std::size_t n) noexcept {
    if (status_ == Status::kOk) {
      status_ = sink_.write(sink_.context, data, n);
    }
  }
  void chunk(const char* type, const std::uint8_t* data, std::size_t n) noexcept {
    std::uint8_t head[8];
    be32(head, static_cast<std::uint32_t>(n));
    std::memcpy(&head[4], type, 4U);  // BT-DEV-010
    bytes(head, 8U);
    bytes(data, n);
    std::uint32_t crc = crc32(0U, type, 4U);
    crc = crc32(crc, data, n);
    std::uint8_t tail[4];
    be32(tail, crc);
    bytes(tail, 4U);
  }
  // The zlib stream: bits, least significant first.
  void bits(std::uint32_t value, unsigned count) noexcept {
    bit_buffer_ |= static_cast<std::uint64_t>(value) << bit_count_;
    bit_count_ += count;
    while (bit_count_ >= 8U) {
      put(static_cast<std::uint8_t>(bit_buffer_ & 0xFFU));
      bit_buffer_ >>= 8U;
      bit_count_ -= 8U;
    }
  }
  // A Huffman code: most significant bit first.
  void code(std::uint32_t value, unsigned length) noexcept {
    std::uint32_t reversed = 0U;
    for (unsigned i = 0U; i < length; ++i) {
      reversed = (reversed << 1U) | ((value >> i) & 1U);
    }
    bits(reversed, length);
  }
  void align() noexcept {
    if (bit_count_ > 0U) {
      bits(0U, 8U - bit_count_);
    }
  }
  void put(std::uint8_t b) noexcept {
    idat_[idat_used_] = b;
    ++idat_used_;
    if (idat_used_ == sizeof(idat_)) {
      flush_idat();
    }
  }
  void flush_idat() noexcept {
    if (idat_used_ > 0U) {
      chunk("IDAT", idat_, idat_used_);
      idat_used_ = 0U;
    }
  }
  static void be32(std::uint8_t* out, std::uint32_t v) noexcept {
    out[0] = static_cast<std::uint8_t>(v >> 24U);
    out[1] = static_cast<std::uint8_t>(v >> 16U);
    out[2] = static_cast<std::uint8_t>(v >> 8U);
    out[3] = static_cast<std::uint8_t>(v);
  }

 private:
  ByteSink sink_;
  Status status_ = Status::kOk;
  std::uint64_t bit_buffer_ = 0U;
  unsigned bit_count_ = 0U;
  std::uint8_t idat_[16384] = {};
  std::size_t idat_used_ = 0U;
};

// Deflate's fixed literal/length code of `symbol` (0..287).
void fixed_symbol(PngWriter& w, unsigned symbol) noexcept {
  if (symbol < 144U) {
    w.code(0x30U + symbol, 8U);
  } else if (symbol < 256U) {
    w.code(0x190U + (symbol - 144U), 9U);
  } else if (symbol < 280U) {
    w.code(symbol - 256U, 7U);
  } else {
    w.code(0xC0U + (symbol - 280U), 8U);
  }
}

// A match of `length` (3..258) bytes at distance 1.
void repeat_previous(PngWriter& w, unsigned length) noexcept {
  static constexpr unsigned kBase[29] = {3U,  4U,  5U,  6U,  7U,  8U,  9U,  10U,  11U,  13U,  15U,  17U,  19U,  23U, 27U,
                                         31U, 35U, 43U, 51U, 59U, 67U, 83U, 99U, 115U, 131U, 163U, 195U, 227U, 258U};
  static constexpr unsigned kExtra[29] = {0U, 0U, 0U, 0U, 0U, 0U, 0U, 0U, 1U, 1U, 1U, 1U, 2U, 2U, 2U,
                                          2U, 3U, 3U, 3U, 3U, 4U, 4U, 4U, 4U, 5U, 5U, 5U, 5U, 0U};
  unsigned i = 28U;
  while (kBase[i] > length) {
    --i;
  }
  fixed_symbol(w, 257U + i);
  w.bits(length - kBase[i], kExtra[i]);
  w.code(0U, 5U);  // distance code 0: distance 1
}

Status write_png(ByteSink sink, const std::uint8_t* px) noexcept {
  PngWriter w(sink);
  static constexpr std::uint8_t kSignature[8] = {0x89U, 'P', 'N', 'G', '\r', '\n', 0x1AU, '\n'};
  w.bytes(kSignature, 8U);
  std::uint8_t ihdr[13] = {};
  PngWriter::be32(ihdr, static_cast<std::uint32_t>(kPlotWidth));
  PngWriter::be32(&ihdr[4], static_cast<std::uint32_t>(kPlotHeight));
  ihdr[8] = 8U;  // bits per index
  ihdr[9] = 3U;  // palette
  w.chunk("IHDR", ihdr, sizeof(ihdr));
  std::uint8_t plte[kColours * 3U];
  for (std::size_t c = 0U; c < kColours; ++c) {
    for (std::size_t k = 0U; k < 3U; ++k) {
      plte[(c * 3U) + k] = kRgb[c][k];
    }
  }
  w.chunk("PLTE", plte, sizeof(plte));

  // zlib header (deflate, 32 KiB window, no dictionary), one final block of
  // fixed codes, the Adler-32 of the filtered rows.
  w.put(0x78U);
  w.put(0x01U);
  w.bits(1U, 1U);  // BFINAL
  w.bits(1U, 2U);  // BTYPE 01: fixed codes
  std::uint32_t a = 1U;
  std::uint32_t b = 0U;
  int previous = -1;
  unsigned run = 0U;
  const auto flush_run = [&]() {
    while (run >= 3U) {
      unsigned n = (run > 258U) ? 258U : run;
      if ((run > n) && (run - n < 3U)) {
        n -= 3U;  // leave at least 3 for the next match
      }
      repeat_previous(w, n);
      run -= n;
    }
    for (; run > 0U; --run) {
      fixed_symbol(w, static_cast<unsigned>(previous));
    }
  };
  const auto emit = [&](std::uint8_t byte) {
    a = (a + byte) % 65521U;
    b = (b + a) % 65521U;
    if (static_cast<int>(byte) == previous) {
      ++run;
      return;
    }
    flush_run();
    fixed_symbol(w, byte);
    previous = byte;
  };
  for (std::size_t r = 0U; r < kPlotHeight; ++r) {
    const std::uint8_t* row = &px[r * kPlotWidth];
    const std::uint8_t* above = (r > 0U) ? &px[(r - 1U) * kPlotWidth] : nullptr;
    emit(2U);  // filter "Up": each byte minus the one above it
    for (std::size_t c = 0U; c < kPlotWidth; ++c) {
      emit(static_cast<std::uint8_t>(row[c] - ((above != nullptr) ? above[c] : 0U)));
    }
  }
  flush_run();
  fixed_symbol(w, 256U);  // end of block
  w.align();
  std::uint8_t adler[4];
  PngWriter::be32(adler, (b << 16U) | a);
  for (const std::uint8_t byte : adler) {
    w.put(byte);
  }
  w.flush_idat();
  w.chunk("IEND", nullptr, 0U);
  return w.status();
}

}  // namespace

Status write_csv_plot_svg(const char* csv_path, const char* svg_path, const CsvPlot& plot) noexcept {
  if ((csv_path == nullptr) || (svg_path == nullptr)) {
    return Status::kInvalidArgument;
  }
  FileWriter file;
  const Status opened = file.open(svg_path, true);
  if (opened != Status::kOk) {
    return opened;
  }
  SvgCanvas canvas(file);
  const Status drawn = draw(canvas, csv_path, plot);
  if (drawn != Status::kOk) {
    return drawn;  // the destructor removes the temporary file
  }
  return file.commit();
}

Status write_csv_plot_png(const char* csv_path, const char* png_path, const CsvPlot& plot, std::uint8_t* pixels,
                          std::size_t pixel_bytes) noexcept {
  if ((csv_path == nullptr) || (png_path == nullptr) || (pixels == nullptr) || (pixel_bytes < kPlotPngBufferBytes)) {
    return Status::kInvalidArgument;
  }
  PixelCanvas canvas(pixels);
  const Status drawn = draw(canvas, csv_path, plot);
  if (drawn != Status::kOk) {
    return drawn;
  }
  FileWriter file;
  const Status opened = file.open(png_path, true);
  if (opened != Status::kOk) {
    return opened;
  }
  const Status written = write_png(file.sink(), pixels);
  return (written != Status::kOk) ? written : file.commit();
}

}  // namespace port
}  // namespace burtorch

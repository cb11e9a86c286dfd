// SPDX-License-Identifier: Apache-2.0
// An op of your own, added the way the library adds its extensions: rows
// with the members of a core row (kind, name, forward, backward side by
// side), gathered into an op family (burtorch/ext/extension.hpp) under one of
// the ids for programs (family::kFirstUser), and one function per op that
// records it. Nothing in the library changes; the tape reaches the rows'
// backward through the family the first recording registers.
//
// Prints, for loss = softsign(a * b) + hypot(a, b) at a few points, the
// gradient backward() computes and central finite differences of the loss
// ("point a b", "grad da db", "fd da db"); exits 1 if they differ by more
// than 1e-6 (relative) or the family is refused (tools/check.d runs it).
#include <burtorch/burtorch.hpp>
#include <burtorch/port/port.hpp>

#include <array>
#include <cmath>
#include <cstddef>

namespace bt = burtorch;

namespace my_ops {

/// softsign(x) = x / (1 + |x|); its derivative 1 / (1 + |x|)^2.
struct Softsign {
  static constexpr bt::OpKind kKind = bt::OpKind::kUnary;
  static constexpr const char* kName = "softsign";
  template <class T>
  static T forward(T x) noexcept {
    return x / (T(1) + std::fabs(x));
  }
  template <class T>
  static void backward(T g, T x, T /*out*/, T& dx) noexcept {
    const T d = T(1) + std::fabs(x);
    dx += g / (d * d);
  }
};

/// hypot(x, y) = sqrt(x^2 + y^2); its partial derivatives x / out and y / out.
struct Hypot {
  static constexpr bt::OpKind kKind = bt::OpKind::kBinary;
  static constexpr const char* kName = "hypot";
  template <class T>
  static T forward(T x, T y) noexcept {
    return std::sqrt((x * x) + (y * y));
  }
  template <class T>
  static void backward(T g, T x, T y, T out, T& dx, T& dy) noexcept {
    dx += g * (x / out);
    dy += g * (y / out);
  }
};

using Family = bt::OpFamily<bt::family::kFirstUser, Softsign, Hypot>;

template <class T>
bt::Value<T> softsign(bt::Value<T> x) noexcept {
  return Family::unary<Softsign>(x);
}
template <class T>
bt::Value<T> hypot(bt::Value<T> x, bt::Value<T> y) noexcept {
  return Family::binary<Hypot>(x, y);
}

}  // namespace my_ops

namespace {

void print_line(const char* label, double a, double b) {
  std::array<char, 32U> text{};
  bt::port::write(label);
  std::size_t n = bt::format_double(a, text.data(), text.size());
  bt::port::write(" ");
  bt::port::write(text.data(), n);
  n = bt::format_double(b, text.data(), text.size());
  bt::port::write(" ");
  bt::port::write(text.data(), n);
  bt::port::write("\n");
}

bt::Value<double> loss(bt::Value<double> a, bt::Value<double> b) {
  return my_ops::softsign(a * b) + my_ops::hypot(a, b);
}

// The loss at (a, b) on a fresh recording after the mark (rewound after).
double value_at(bt::Tape<double>& tape, bt::Mark m, double a, double b) {
  const double v = loss(tape.leaf(a), tape.leaf(b)).value();
  static_cast<void>(tape.rewind(m));
  return v;
}

bool close(double x, double y) { return std::fabs(x - y) <= 1e-6 * (1.0 + std::fabs(y)); }

}  // namespace

int main() {
  static bt::FixedTape<double, 64> tape;
  const bt::Mark start = tape.mark();
  const std::array<std::array<double, 2U>, 3U> points = {{{0.5, -1.5}, {-2.0, 0.25}, {3.0, 4.0}}};
  bool ok = true;
  for (const auto& p : points) {
    const bt::Value<double> a = tape.leaf(p[0]);
    const bt::Value<double> b = tape.leaf(p[1]);
    const bt::Value<double> y = loss(a, b);
    ok = ok && (tape.backward(y) == bt::Status::kOk);
    const double da = a.grad();
    const double db = b.grad();
    static_cast<void>(tape.rewind(start));
    const double h = 1e-6;
    const double fa = (value_at(tape, start, p[0] + h, p[1]) - value_at(tape, start, p[0] - h, p[1])) / (2.0 * h);
    const double fb = (value_at(tape, start, p[0], p[1] + h) - value_at(tape, start, p[0], p[1] - h)) / (2.0 * h);
    print_line("point", p[0], p[1]);
    print_line("grad", da, db);
    print_line("fd", fa, fb);
    ok = ok && close(da, fa) && close(db, fb);
  }
  // The family's rows answer to their names; the tape holds no error.
  ok = ok && (tape.status() == bt::Status::kOk) &&
       (my_ops::Family::name(my_ops::Family::op<my_ops::Hypot>())[0] == 'h');
  bt::port::write(ok ? "custom_op: ok\n" : "custom_op: FAILED\n");
  return ok ? 0 : 1;
}

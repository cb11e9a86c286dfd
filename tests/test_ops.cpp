// SPDX-License-Identifier: Apache-2.0
// Every op: forward value and gradient against closed forms, and the
// gradient against central finite differences of the op's own forward pass.
// FP64 to 1e-7 (finite differences) and 1e-13 (closed forms); FP32 against
// the FP64 closed forms to 2e-5.
#include <burtorch/burtorch.hpp>

#include <cmath>

#include "harness.hpp"

namespace bt = burtorch;

namespace {

constexpr double kFdRel = 1e-7;      // central differences, relative
constexpr double kFdAbs = 1e-9;      // floor for gradients near zero
constexpr double kExactRel = 1e-13;  // closed forms in FP64
constexpr double kFloatRel = 2e-5;   // FP32 against FP64 closed forms

#if defined(BURTORCH_TEST_SMALL_TARGET) && BURTORCH_TEST_SMALL_TARGET
constexpr std::size_t kTapeNodes = 128U;  // micro:bit, 16 KB RAM
#else
constexpr std::size_t kTapeNodes = 512U;
#endif
bt::FixedTape<double, kTapeNodes> g_tape64;
bt::FixedTape<float, kTapeNodes> g_tape32;

// --- one-argument ops ---------------------------------------------------------
template <class T>
using Unary = bt::Value<T> (*)(bt::Value<T>);

struct UnaryCase {
  const char* name;
  Unary<double> build64;
  Unary<float> build32;
  double (*f)(double);
  double (*df)(double);
  double points[4];
};

template <class T> bt::Value<T> u_neg(bt::Value<T> x) { return -x; }
template <class T> bt::Value<T> u_add_c(bt::Value<T> x) { return x + T(1.5); }
template <class T> bt::Value<T> u_c_add(bt::Value<T> x) { return T(1.5) + x; }
template <class T> bt::Value<T> u_sub_c(bt::Value<T> x) { return x - T(0.75); }
template <class T> bt::Value<T> u_c_sub(bt::Value<T> x) { return T(0.75) - x; }
template <class T> bt::Value<T> u_mul_c(bt::Value<T> x) { return x * T(-2.5); }
template <class T> bt::Value<T> u_c_mul(bt::Value<T> x) { return T(-2.5) * x; }
template <class T> bt::Value<T> u_div_c(bt::Value<T> x) { return x / T(3); }
template <class T> bt::Value<T> u_c_div(bt::Value<T> x) { return T(3) / x; }
template <class T> bt::Value<T> u_mul_by_const(bt::Value<T> x) { return bt::mul_by_const(x, T(0.125)); }
template <class T> bt::Value<T> u_relu(bt::Value<T> x) { return bt::relu(x); }
template <class T> bt::Value<T> u_tanh(bt::Value<T> x) { return bt::tanh(x); }
template <class T> bt::Value<T> u_exp(bt::Value<T> x) { return bt::exp(x); }
template <class T> bt::Value<T> u_log(bt::Value<T> x) { return bt::log(x); }
template <class T> bt::Value<T> u_neg_log(bt::Value<T> x) { return bt::neg_log(x); }
template <class T> bt::Value<T> u_sigmoid(bt::Value<T> x) { return bt::sigmoid(x); }
template <class T> bt::Value<T> u_inv(bt::Value<T> x) { return bt::inv(x); }
template <class T> bt::Value<T> u_sqr(bt::Value<T> x) { return bt::sqr(x); }
template <class T> bt::Value<T> u_pow3(bt::Value<T> x) { return bt::pow3(x); }
template <class T> bt::Value<T> u_sqrt(bt::Value<T> x) { return bt::sqrt(x); }
template <class T> bt::Value<T> u_inv_sqrt(bt::Value<T> x) { return bt::inv_sqrt(x); }
template <class T> bt::Value<T> u_compound(bt::Value<T> x) {
  bt::Value<T> y = x;
  y += T(2);
  y *= x;   // (x + 2) x
  y -= T(1);
  y /= T(4);  // ((x + 2) x - 1) / 4
  return y;
}

double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }

#define UNARY(name, f, df, p0, p1, p2, p3) \
  { #name, &u_##name<double>, &u_##name<float>, f, df, { p0, p1, p2, p3 } }

const UnaryCase kUnary[] = {
    UNARY(neg, [](double x) { return -x; }, [](double) { return -1.0; }, -2.0, -0.3, 0.7, 5.0),
    UNARY(add_c, [](double x) { return x + 1.5; }, [](double) { return 1.0; }, -2.0, -0.3, 0.7, 5.0),
    UNARY(c_add, [](double x) { return 1.5 + x; }, [](double) { return 1.0; }, -2.0, -0.3, 0.7, 5.0),
    UNARY(sub_c, [](double x) { return x - 0.75; }, [](double) { return 1.0; }, -2.0, -0.3, 0.7, 5.0),
    UNARY(c_sub, [](double x) { return 0.75 - x; }, [](double) { return -1.0; }, -2.0, -0.3, 0.7, 5.0),
    UNARY(mul_c, [](double x) { return x * -2.5; }, [](double) { return -2.5; }, -2.0, -0.3, 0.7, 5.0),
    UNARY(c_mul, [](double x) { return -2.5 * x; }, [](double) { return -2.5; }, -2.0, -0.3, 0.7, 5.0),
    UNARY(div_c, [](double x) { return x / 3.0; }, [](double) { return 1.0 / 3.0; }, -2.0, -0.3, 0.7, 5.0),
    UNARY(c_div, [](double x) { return 3.0 / x; }, [](double x) { return -3.0 / (x * x); }, -2.0, -0.3, 0.7, 5.0),
    UNARY(mul_by_const, [](double x) { return x * 0.125; }, [](double) { return 0.125; }, -2.0, -0.3, 0.7, 5.0),
    // relu: both sides of the kink.
    UNARY(relu, [](double x) { return x > 0.0 ? x : 0.0; }, [](double x) { return x > 0.0 ? 1.0 : 0.0; }, -2.0,
          -0.3, 0.7, 5.0),
    UNARY(tanh, [](double x) { return std::tanh(x); },
          [](double x) { return 1.0 / (std::cosh(x) * std::cosh(x)); }, -2.0, -0.3, 0.7, 3.0),
    UNARY(exp, [](double x) { return std::exp(x); }, [](double x) { return std::exp(x); }, -2.0, -0.3, 0.7, 3.0),
    // log: near zero, around one, large.
    UNARY(log, [](double x) { return std::log(x); }, [](double x) { return 1.0 / x; }, 0.05, 0.9, 1.1, 40.0),
    UNARY(neg_log, [](double x) { return -std::log(x); }, [](double x) { return -1.0 / x; }, 0.05, 0.9, 1.1, 40.0),
    UNARY(sigmoid, sigmoid_ref, [](double x) { return sigmoid_ref(x) * (1.0 - sigmoid_ref(x)); }, -4.0, -0.3,
          0.7, 6.0),
    UNARY(inv, [](double x) { return 1.0 / x; }, [](double x) { return -1.0 / (x * x); }, -2.0, -0.3, 0.7, 5.0),
    UNARY(sqr, [](double x) { return x * x; }, [](double x) { return 2.0 * x; }, -2.0, -0.3, 0.7, 5.0),
    UNARY(pow3, [](double x) { return x * x * x; }, [](double x) { return 3.0 * x * x; }, -2.0, -0.3, 0.7, 5.0),
    // sqrt: small argument (steep) and large.
    UNARY(sqrt, [](double x) { return std::sqrt(x); }, [](double x) { return 0.5 / std::sqrt(x); }, 0.01, 0.5,
          2.0, 90.0),
    UNARY(inv_sqrt, [](double x) { return 1.0 / std::sqrt(x); }, [](double x) { return -0.5 / (x * std::sqrt(x)); },
          0.01, 0.5, 2.0, 90.0),
    UNARY(compound, [](double x) { return ((x + 2.0) * x - 1.0) / 4.0; }, [](double x) { return (2.0 * x + 2.0) / 4.0; },
          -2.0, -0.3, 0.7, 5.0),
};

// Value of build(x) alone, recorded after a mark and discarded.
template <class T>
T forward_at(bt::Tape<T>& tape, bt::Value<T> (*build)(bt::Value<T>), T x) {
  const bt::Mark m = tape.mark();
  const T y = build(tape.leaf(x)).value();
  static_cast<void>(tape.rewind(m));
  return y;
}

void unary_fp64(bt_test::Context& t) {
  for (const UnaryCase& c : kUnary) {
    t.test_name = c.name;
    for (double x : c.points) {
      g_tape64.reset();
      auto leaf = g_tape64.leaf(x);
      auto y = c.build64(leaf);
      BT_CHECK(t, g_tape64.backward(y) == bt::Status::kOk);
      BT_CHECK_CLOSE(t, y.value(), c.f(x), kExactRel, 1e-300);
      BT_CHECK_CLOSE(t, leaf.grad(), c.df(x), kExactRel, 1e-300);
      // Central difference with a step scaled to x; cubic error ~ h^2.
      const double h = 1e-5 * (std::fabs(x) > 1.0 ? std::fabs(x) : 1.0) * (std::fabs(x) < 0.1 ? 0.1 : 1.0);
      const double fd = (forward_at(g_tape64, c.build64, x + h) - forward_at(g_tape64, c.build64, x - h)) / (2.0 * h);
      BT_CHECK_CLOSE(t, leaf.grad(), fd, kFdRel, kFdAbs);
    }
  }
  t.test_name = "unary_fp64";
}

void unary_fp32(bt_test::Context& t) {
  for (const UnaryCase& c : kUnary) {
    t.test_name = c.name;
    for (double x : c.points) {
      g_tape32.reset();
      auto leaf = g_tape32.leaf(static_cast<float>(x));
      auto y = c.build32(leaf);
      BT_CHECK(t, g_tape32.backward(y) == bt::Status::kOk);
      const double xf = static_cast<double>(static_cast<float>(x));
      BT_CHECK_CLOSE(t, static_cast<double>(y.value()), c.f(xf), kFloatRel, 1e-6);
      BT_CHECK_CLOSE(t, static_cast<double>(leaf.grad()), c.df(xf), kFloatRel, 1e-6);
    }
  }
  t.test_name = "unary_fp32";
}

// relu at exactly 0 has gradient 0 (PyTorch's convention); sqrt at 0 is
// +inf; log at 0 is -inf with gradient +inf: IEEE, no error status.
void edges(bt_test::Context& t) {
  g_tape64.reset();
  auto z = g_tape64.leaf(0.0);
  auto r = bt::relu(z);
  BT_CHECK(t, g_tape64.backward(r) == bt::Status::kOk);
  BT_CHECK(t, r.value() == 0.0);
  BT_CHECK(t, z.grad() == 0.0);
  g_tape64.reset();
  auto z2 = g_tape64.leaf(0.0);
  auto s = bt::sqrt(z2);
  BT_CHECK(t, g_tape64.backward(s) == bt::Status::kOk);
  BT_CHECK(t, s.value() == 0.0);
  BT_CHECK(t, std::isinf(z2.grad()) && z2.grad() > 0.0);
  g_tape64.reset();
  auto z3 = g_tape64.leaf(0.0);
  auto l = bt::log(z3);
  BT_CHECK(t, g_tape64.backward(l) == bt::Status::kOk);
  BT_CHECK(t, std::isinf(l.value()) && l.value() < 0.0);
  BT_CHECK(t, std::isinf(z3.grad()));
  BT_CHECK(t, g_tape64.status() == bt::Status::kOk);
  // Large |x|: sigmoid and tanh saturate without NaN.
  g_tape64.reset();
  auto big = g_tape64.leaf(-800.0);
  auto sg = bt::sigmoid(big);
  auto th = bt::tanh(big);
  BT_CHECK(t, g_tape64.backward(sg + th) == bt::Status::kOk);
  BT_CHECK(t, sg.value() == 0.0 && th.value() == -1.0);
  BT_CHECK(t, big.grad() == 0.0);
}

// --- two-argument ops ----------------------------------------------------------
template <class T>
using Binary = bt::Value<T> (*)(bt::Value<T>, bt::Value<T>);

struct BinaryCase {
  const char* name;
  Binary<double> build64;
  Binary<float> build32;
  double (*f)(double, double);
  double (*dfx)(double, double);
  double (*dfy)(double, double);
};

template <class T> bt::Value<T> b_add(bt::Value<T> x, bt::Value<T> y) { return x + y; }
template <class T> bt::Value<T> b_sub(bt::Value<T> x, bt::Value<T> y) { return x - y; }
template <class T> bt::Value<T> b_mul(bt::Value<T> x, bt::Value<T> y) { return x * y; }
template <class T> bt::Value<T> b_div(bt::Value<T> x, bt::Value<T> y) { return x / y; }
template <class T> bt::Value<T> b_mean(bt::Value<T> x, bt::Value<T> y) { return bt::mean(x, y); }
template <class T> bt::Value<T> b_add_squares(bt::Value<T> x, bt::Value<T> y) { return bt::add_squares(x, y); }
template <class T> bt::Value<T> b_mean_squares(bt::Value<T> x, bt::Value<T> y) { return bt::mean_squares(x, y); }
template <class T> bt::Value<T> b_negative_mean(bt::Value<T> x, bt::Value<T> y) { return bt::negative_mean(x, y); }
template <class T> bt::Value<T> b_same(bt::Value<T> x, bt::Value<T> y) {
  static_cast<void>(y);
  return x * x;  // both operands are one node: gradient must count twice
}

#define BINARY(name, f, fx, fy) \
  { #name, &b_##name<double>, &b_##name<float>, f, fx, fy }

const BinaryCase kBinary[] = {
    BINARY(add, [](double x, double y) { return x + y; }, [](double, double) { return 1.0; },
           [](double, double) { return 1.0; }),
    BINARY(sub, [](double x, double y) { return x - y; }, [](double, double) { return 1.0; },
           [](double, double) { return -1.0; }),
    BINARY(mul, [](double x, double y) { return x * y; }, [](double, double y) { return y; },
           [](double x, double) { return x; }),
    BINARY(div, [](double x, double y) { return x / y; }, [](double, double y) { return 1.0 / y; },
           [](double x, double y) { return -x / (y * y); }),
    BINARY(mean, [](double x, double y) { return 0.5 * (x + y); }, [](double, double) { return 0.5; },
           [](double, double) { return 0.5; }),
    BINARY(add_squares, [](double x, double y) { return x * x + y * y; }, [](double x, double) { return 2.0 * x; },
           [](double, double y) { return 2.0 * y; }),
    BINARY(mean_squares, [](double x, double y) { return 0.5 * (x * x + y * y); }, [](double x, double) { return x; },
           [](double, double y) { return y; }),
    BINARY(negative_mean, [](double x, double y) { return -0.5 * (x + y); }, [](double, double) { return -0.5; },
           [](double, double) { return -0.5; }),
    BINARY(same, [](double x, double) { return x * x; }, [](double x, double) { return 2.0 * x; },
           [](double, double) { return 0.0; }),
};

const double kPairs[][2] = {{-1.5, 0.4}, {2.0, -3.0}, {0.3, 0.7}, {7.0, 1.25}};

template <class T>
T forward_at2(bt::Tape<T>& tape, Binary<T> build, T x, T y) {
  const bt::Mark m = tape.mark();
  auto a = tape.leaf(x);
  auto b = tape.leaf(y);
  const T v = build(a, b).value();
  static_cast<void>(tape.rewind(m));
  return v;
}

void binary_fp64(bt_test::Context& t) {
  for (const BinaryCase& c : kBinary) {
    t.test_name = c.name;
    for (const auto& p : kPairs) {
      g_tape64.reset();
      auto x = g_tape64.leaf(p[0]);
      auto y = g_tape64.leaf(p[1]);
      auto out = c.build64(x, y);
      BT_CHECK(t, g_tape64.backward(out) == bt::Status::kOk);
      BT_CHECK_CLOSE(t, out.value(), c.f(p[0], p[1]), kExactRel, 1e-300);
      BT_CHECK_CLOSE(t, x.grad(), c.dfx(p[0], p[1]), kExactRel, 1e-300);
      BT_CHECK_CLOSE(t, y.grad(), c.dfy(p[0], p[1]), kExactRel, 1e-300);
      const double h = 1e-6;
      const double fdx = (forward_at2(g_tape64, c.build64, p[0] + h, p[1]) -
                          forward_at2(g_tape64, c.build64, p[0] - h, p[1])) / (2.0 * h);
      const double fdy = (forward_at2(g_tape64, c.build64, p[0], p[1] + h) -
                          forward_at2(g_tape64, c.build64, p[0], p[1] - h)) / (2.0 * h);
      BT_CHECK_CLOSE(t, x.grad(), fdx, kFdRel, kFdAbs);
      BT_CHECK_CLOSE(t, y.grad(), fdy, kFdRel, kFdAbs);
    }
  }
  t.test_name = "binary_fp64";
}

void binary_fp32(bt_test::Context& t) {
  for (const BinaryCase& c : kBinary) {
    t.test_name = c.name;
    for (const auto& p : kPairs) {
      g_tape32.reset();
      auto x = g_tape32.leaf(static_cast<float>(p[0]));
      auto y = g_tape32.leaf(static_cast<float>(p[1]));
      auto out = c.build32(x, y);
      BT_CHECK(t, g_tape32.backward(out) == bt::Status::kOk);
      const double xf = static_cast<double>(static_cast<float>(p[0]));
      const double yf = static_cast<double>(static_cast<float>(p[1]));
      BT_CHECK_CLOSE(t, static_cast<double>(out.value()), c.f(xf, yf), kFloatRel, 1e-6);
      BT_CHECK_CLOSE(t, static_cast<double>(x.grad()), c.dfx(xf, yf), kFloatRel, 1e-6);
      BT_CHECK_CLOSE(t, static_cast<double>(y.grad()), c.dfy(xf, yf), kFloatRel, 1e-6);
    }
  }
  t.test_name = "binary_fp32";
}

// --- varying arity ----------------------------------------------------------------
// Each case reduces xs[0..n) (and, for inner products, ws[0..n)).
constexpr std::size_t kMaxN = 11U;

template <class T>
using Reduce = bt::Value<T> (*)(const bt::Value<T>*, const bt::Value<T>*, std::size_t);

template <class T> bt::Value<T> r_sum(const bt::Value<T>* x, const bt::Value<T>*, std::size_t n) { return bt::reduce_sum(x, n); }
template <class T> bt::Value<T> r_sub(const bt::Value<T>* x, const bt::Value<T>*, std::size_t n) { return bt::reduce_sub(x, n); }
template <class T> bt::Value<T> r_mul(const bt::Value<T>* x, const bt::Value<T>*, std::size_t n) { return bt::reduce_mul(x, n); }
template <class T> bt::Value<T> r_mean(const bt::Value<T>* x, const bt::Value<T>*, std::size_t n) { return bt::reduce_mean(x, n); }
template <class T> bt::Value<T> r_sum_sq(const bt::Value<T>* x, const bt::Value<T>*, std::size_t n) { return bt::reduce_sum_of_squares(x, n); }
template <class T> bt::Value<T> r_mean_sq(const bt::Value<T>* x, const bt::Value<T>*, std::size_t n) { return bt::reduce_mean_squares(x, n); }
template <class T> bt::Value<T> r_neg_mean(const bt::Value<T>* x, const bt::Value<T>*, std::size_t n) { return bt::reduce_negative_mean(x, n); }
template <class T> bt::Value<T> r_var(const bt::Value<T>* x, const bt::Value<T>*, std::size_t n) { return bt::variance(x, n); }
template <class T> bt::Value<T> r_var_b(const bt::Value<T>* x, const bt::Value<T>*, std::size_t n) { return bt::variance_biased(x, n); }
// mean and mean of squares combined into one root: m + 3 * msq.
template <class T> bt::Value<T> r_mean_and_msq(const bt::Value<T>* x, const bt::Value<T>*, std::size_t n) {
  const auto both = bt::reduce_mean_and_mean_squares(x, n);
  return both.mean + T(3) * both.mean_squares;
}
template <class T> bt::Value<T> r_dot(const bt::Value<T>* x, const bt::Value<T>* w, std::size_t n) { return bt::inner_product(w, x, n); }
template <class T> bt::Value<T> r_dot_bias(const bt::Value<T>* x, const bt::Value<T>* w, std::size_t n) {
  // The bias is the last weight's node, reused: its gradient gets both paths.
  return bt::inner_product_with_bias(w, x, n, w[n - 1U]);
}

// Closed-form value and gradient (dx: d/dx_i, dw: d/dw_i) computed here in
// plain loops, independent of the library's kernels.
struct Closed {
  double value;
  double dx[kMaxN];
  double dw[kMaxN];
};
using ClosedForm = void (*)(const double* x, const double* w, std::size_t n, Closed* out);

double csum(const double* x, std::size_t n) {
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i) s += x[i];
  return s;
}
void c_sum(const double* x, const double*, std::size_t n, Closed* o) {
  o->value = csum(x, n);
  for (std::size_t i = 0; i < n; ++i) o->dx[i] = 1.0;
}
void c_sub(const double* x, const double*, std::size_t n, Closed* o) {
  o->value = 2.0 * x[0] - csum(x, n);
  o->dx[0] = 1.0;
  for (std::size_t i = 1; i < n; ++i) o->dx[i] = -1.0;
}
void c_mul(const double* x, const double*, std::size_t n, Closed* o) {
  o->value = 1.0;
  for (std::size_t i = 0; i < n; ++i) o->value *= x[i];
  for (std::size_t i = 0; i < n; ++i) {
    double p = 1.0;
    for (std::size_t j = 0; j < n; ++j) p *= (j == i) ? 1.0 : x[j];
    o->dx[i] = p;
  }
}
void c_mean(const double* x, const double*, std::size_t n, Closed* o) {
  o->value = csum(x, n) / static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) o->dx[i] = 1.0 / static_cast<double>(n);
}
void c_neg_mean(const double* x, const double*, std::size_t n, Closed* o) {
  o->value = -csum(x, n) / static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) o->dx[i] = -1.0 / static_cast<double>(n);
}
void c_sum_sq(const double* x, const double*, std::size_t n, Closed* o) {
  o->value = 0.0;
  for (std::size_t i = 0; i < n; ++i) { o->value += x[i] * x[i]; o->dx[i] = 2.0 * x[i]; }
}
void c_mean_sq(const double* x, const double*, std::size_t n, Closed* o) {
  c_sum_sq(x, nullptr, n, o);
  o->value /= static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) o->dx[i] /= static_cast<double>(n);
}
void c_var_common(const double* x, std::size_t n, double denominator, Closed* o) {
  const double m = csum(x, n) / static_cast<double>(n);
  o->value = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    o->value += (x[i] - m) * (x[i] - m) / denominator;
    o->dx[i] = 2.0 * (x[i] - m) / denominator;
  }
}
void c_var(const double* x, const double*, std::size_t n, Closed* o) { c_var_common(x, n, static_cast<double>(n) - 1.0, o); }
void c_var_b(const double* x, const double*, std::size_t n, Closed* o) { c_var_common(x, n, static_cast<double>(n), o); }
void c_mean_and_msq(const double* x, const double*, std::size_t n, Closed* o) {
  Closed a{};
  Closed b{};
  c_mean(x, nullptr, n, &a);
  c_mean_sq(x, nullptr, n, &b);
  o->value = a.value + 3.0 * b.value;
  for (std::size_t i = 0; i < n; ++i) o->dx[i] = a.dx[i] + 3.0 * b.dx[i];
}
void c_dot(const double* x, const double* w, std::size_t n, Closed* o) {
  o->value = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    o->value += w[i] * x[i];
    o->dx[i] = w[i];
    o->dw[i] = x[i];
  }
}
void c_dot_bias(const double* x, const double* w, std::size_t n, Closed* o) {
  c_dot(x, w, n, o);
  o->value += w[n - 1U];
  o->dw[n - 1U] += 1.0;
}

struct ReduceCase {
  const char* name;
  Reduce<double> build64;
  Reduce<float> build32;
  ClosedForm closed;
  bool uses_w;
  std::size_t min_n;
};

#define REDUCE(name, closed, uses_w, min_n) \
  { #name, &r_##name<double>, &r_##name<float>, closed, uses_w, min_n }

const ReduceCase kReduce[] = {
    REDUCE(sum, c_sum, false, 1U),       REDUCE(sub, c_sub, false, 1U),
    REDUCE(mul, c_mul, false, 1U),       REDUCE(mean, c_mean, false, 1U),
    REDUCE(sum_sq, c_sum_sq, false, 1U), REDUCE(mean_sq, c_mean_sq, false, 1U),
    REDUCE(neg_mean, c_neg_mean, false, 1U), REDUCE(var, c_var, false, 2U),
    REDUCE(var_b, c_var_b, false, 1U),   REDUCE(mean_and_msq, c_mean_and_msq, false, 1U),
    REDUCE(dot, c_dot, true, 1U),        REDUCE(dot_bias, c_dot_bias, true, 1U),
};

const std::size_t kLengths[] = {1U, 3U, 4U, 7U, 11U};

double input_x(std::size_t i) { return 0.37 * static_cast<double>(i) - 1.1 + 0.05 * static_cast<double>(i * i % 5U); }
double input_w(std::size_t i) { return 0.8 - 0.21 * static_cast<double>(i); }

// Layouts: 0 = x and w are consecutive leaves (range operands), 1 = x in
// reverse order (list operand), 2 = x interleaved with w (both lists),
// 3 = x and w are the same range (inner product of x with itself).
template <class T>
bt::Value<T> build_layout(bt::Tape<T>& tape, const ReduceCase& c, Reduce<T> build, int layout, const double* xv,
                          const double* wv, std::size_t n, bt::Value<T>* x, bt::Value<T>* w) {
  bt::Value<T> xs[kMaxN];
  bt::Value<T> ws[kMaxN];
  n = (n < kMaxN) ? n : kMaxN;
  if (layout == 2) {
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = tape.leaf(static_cast<T>(xv[i]));
      w[i] = tape.leaf(static_cast<T>(wv[i]));
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) x[i] = tape.leaf(static_cast<T>(xv[i]));
    for (std::size_t i = 0; i < n; ++i) w[i] = (layout == 3) ? x[i] : tape.leaf(static_cast<T>(wv[i]));
  }
  for (std::size_t i = 0; (i < n) && (i < kMaxN); ++i) {
    const std::size_t j = (layout == 1) ? (n - 1U - i) : i;
    xs[i] = x[j];
    ws[i] = w[j];
  }
  static_cast<void>(c);
  return build(xs, ws, n);
}

void reductions_fp64(bt_test::Context& t) {
  for (const ReduceCase& c : kReduce) {
    t.test_name = c.name;
    for (std::size_t n : kLengths) {
      if (n < c.min_n) continue;
      for (int layout = 0; layout < (c.uses_w ? 4 : 2); ++layout) {
        double xv[kMaxN];
        double wv[kMaxN];
        double xo[kMaxN];  // inputs in the order the op sees them
        double wo[kMaxN];
        for (std::size_t i = 0; i < n; ++i) {
          xv[i] = input_x(i);
          wv[i] = input_w(i);
        }
        for (std::size_t i = 0; i < n; ++i) {
          const std::size_t j = (layout == 1) ? (n - 1U - i) : i;
          xo[i] = xv[j];
          wo[i] = (layout == 3) ? xv[j] : wv[j];
        }
        Closed expect{};
        c.closed(xo, wo, n, &expect);
        g_tape64.reset();
        bt::Value<double> x[kMaxN];
        bt::Value<double> w[kMaxN];
        auto out = build_layout(g_tape64, c, c.build64, layout, xv, wv, n, x, w);
        BT_CHECK(t, g_tape64.backward(out) == bt::Status::kOk);
        BT_CHECK_CLOSE(t, out.value(), expect.value, kExactRel, 1e-14);
        for (std::size_t i = 0; i < n; ++i) {
          const std::size_t j = (layout == 1) ? (n - 1U - i) : i;  // op position of leaf x[j]
          double want_x = expect.dx[i];
          if (layout == 3) want_x += expect.dw[i];  // x and w are the same leaves
          BT_CHECK_CLOSE(t, x[j].grad(), want_x, kExactRel, 1e-14);
          if (c.uses_w && layout != 3) {
            BT_CHECK_CLOSE(t, w[j].grad(), expect.dw[i], kExactRel, 1e-14);
          }
          // Central difference on x[j] through the library's forward pass.
          const double h = 1e-6;
          double plus[kMaxN];
          double minus[kMaxN];
          for (std::size_t k = 0; k < n; ++k) plus[k] = minus[k] = xv[k];
          plus[j] += h;
          minus[j] -= h;
          bt::Value<double> px[kMaxN];
          bt::Value<double> pw[kMaxN];
          const bt::Mark m = g_tape64.mark();
          const double fp = build_layout(g_tape64, c, c.build64, layout, plus, wv, n, px, pw).value();
          static_cast<void>(g_tape64.rewind(m));
          const double fm = build_layout(g_tape64, c, c.build64, layout, minus, wv, n, px, pw).value();
          static_cast<void>(g_tape64.rewind(m));
          BT_CHECK_CLOSE(t, x[j].grad(), (fp - fm) / (2.0 * h), kFdRel, kFdAbs);
        }
        // Range layouts use no argument slots for operands (O(1) metadata).
        // (mean_and_msq's "3 *" stores its constant in sizeof(double)/4 slots.)
        if (layout == 0 && !c.uses_w) {
          const std::size_t constant_slots = (c.build64 == &r_mean_and_msq<double>) ? 2U : 0U;
          BT_CHECK(t, g_tape64.slots_used() == constant_slots);
        }
      }
    }
  }
  t.test_name = "reductions_fp64";
}

void reductions_fp32(bt_test::Context& t) {
  for (const ReduceCase& c : kReduce) {
    t.test_name = c.name;
    for (std::size_t n : kLengths) {
      if (n < c.min_n) continue;
      for (int layout = 0; layout < 2; ++layout) {
        double xv[kMaxN];
        double wv[kMaxN];
        double xo[kMaxN];
        double wo[kMaxN];
        for (std::size_t i = 0; i < n; ++i) {
          xv[i] = static_cast<double>(static_cast<float>(input_x(i)));
          wv[i] = static_cast<double>(static_cast<float>(input_w(i)));
        }
        for (std::size_t i = 0; i < n; ++i) {
          const std::size_t j = (layout == 1) ? (n - 1U - i) : i;
          xo[i] = xv[j];
          wo[i] = wv[j];
        }
        Closed expect{};
        c.closed(xo, wo, n, &expect);
        g_tape32.reset();
        bt::Value<float> x[kMaxN];
        bt::Value<float> w[kMaxN];
        auto out = build_layout(g_tape32, c, c.build32, layout, xv, wv, n, x, w);
        BT_CHECK(t, g_tape32.backward(out) == bt::Status::kOk);
        BT_CHECK_CLOSE(t, static_cast<double>(out.value()), expect.value, kFloatRel, 1e-5);
        for (std::size_t i = 0; i < n; ++i) {
          const std::size_t j = (layout == 1) ? (n - 1U - i) : i;
          BT_CHECK_CLOSE(t, static_cast<double>(x[j].grad()), expect.dx[i], kFloatRel, 1e-5);
        }
      }
    }
  }
  t.test_name = "reductions_fp32";
}

// reduce_mul with exact zeros: the partial derivative of the zero operand is
// the product of the others; with two zeros every partial is zero.
// Every elementwise op of op.hpp has a case above (so its gradient is checked
// against a closed form and finite differences, which also catches an op whose
// row has no case in the backward sweep's switch): the ops the cases record,
// read back from the tape, cover every unary, binary and constant row.
void every_elementwise_op(bt_test::Context& t) {
  bool seen[static_cast<std::size_t>(bt::Op::kCount)] = {};
  for (const UnaryCase& c : kUnary) {
    g_tape64.reset();
    const bt::Value<double> out = c.build64(g_tape64.leaf(0.5));
    seen[static_cast<std::size_t>(g_tape64.op(out.index()))] = true;
  }
  for (const BinaryCase& c : kBinary) {
    g_tape64.reset();
    auto x = g_tape64.leaf(0.5);
    const bt::Value<double> out = c.build64(x, g_tape64.leaf(2.0));
    seen[static_cast<std::size_t>(g_tape64.op(out.index()))] = true;
  }
  std::size_t elementwise = 0U;
  for (std::size_t k = 0U; k < static_cast<std::size_t>(bt::Op::kCount); ++k) {
    const bt::OpKind kind = bt::op_kind(static_cast<bt::Op>(k));
    if ((kind == bt::OpKind::kUnary) || (kind == bt::OpKind::kBinary) || (kind == bt::OpKind::kConstant)) {
      ++elementwise;
      t.test_name = bt::op_name(static_cast<bt::Op>(k));
      BT_CHECK(t, seen[k]);
    }
  }
  t.test_name = "every_elementwise_op";
  BT_CHECK(t, elementwise == 25U);  // the paper's elementwise set; update with a new row and its case
}

void product_with_zeros(bt_test::Context& t) {
  g_tape64.reset();
  bt::Value<double> x[4] = {g_tape64.leaf(2.0), g_tape64.leaf(0.0), g_tape64.leaf(-3.0), g_tape64.leaf(0.5)};
  auto p = bt::reduce_mul(x, 4U);
  BT_CHECK(t, g_tape64.backward(p) == bt::Status::kOk);
  BT_CHECK(t, p.value() == 0.0);
  BT_CHECK(t, x[0].grad() == 0.0);
  BT_CHECK(t, x[1].grad() == -3.0);
  BT_CHECK(t, x[2].grad() == 0.0);
  BT_CHECK(t, x[3].grad() == 0.0);
  g_tape64.reset();
  bt::Value<double> y[3] = {g_tape64.leaf(0.0), g_tape64.leaf(4.0), g_tape64.leaf(0.0)};
  auto q = bt::reduce_mul(y, 3U);
  BT_CHECK(t, g_tape64.backward(q) == bt::Status::kOk);
  BT_CHECK(t, y[0].grad() == 0.0 && y[1].grad() == 0.0 && y[2].grad() == 0.0);
}

// A repeated operand in a list counts once per occurrence.
void repeated_operands(bt_test::Context& t) {
  g_tape64.reset();
  auto a = g_tape64.leaf(1.5);
  auto b = g_tape64.leaf(-2.0);
  const bt::Value<double> xs[5] = {a, b, a, a, b};
  auto s = bt::reduce_sum_of_squares(xs, 5U);
  BT_CHECK(t, g_tape64.backward(s) == bt::Status::kOk);
  BT_CHECK(t, s.value() == 3.0 * 2.25 + 2.0 * 4.0);
  BT_CHECK(t, a.grad() == 3.0 * 2.0 * 1.5);
  BT_CHECK(t, b.grad() == 2.0 * 2.0 * -2.0);
  BT_CHECK(t, g_tape64.slots_used() == 5U);
}

const bt_test::TestCase kCases[] = {
    {"unary_fp64", unary_fp64},         {"unary_fp32", unary_fp32},
    {"edges", edges},                   {"binary_fp64", binary_fp64},
    {"binary_fp32", binary_fp32},       {"reductions_fp64", reductions_fp64},
    {"reductions_fp32", reductions_fp32}, {"product_with_zeros", product_with_zeros},
    {"repeated_operands", repeated_operands}, {"every_elementwise_op", every_elementwise_op},
};

}  // namespace

BT_TEST_MAIN("ops", kCases)

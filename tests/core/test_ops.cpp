// SPDX-License-Identifier: Apache-2.0
// Every op: forward value and gradient against closed forms, and the
// gradient against central finite differences of the op's own forward pass.
// FP64 to 1e-7 (finite differences) and 1e-13 (closed forms); FP32 against
// the FP64 closed forms to 2e-5.
#include <burtorch/burtorch.hpp>
#include <burtorch/lanes/lanes.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "burtorch/lanes/ops.hpp"  // a tape of Lanes: the lane ops and the tape's templates for it
#include "harness.hpp"

namespace bt = burtorch;

// The tape over four lanes (linked_ops_on_lanes).
template class burtorch::Tape<burtorch::Lanes<double, 4>>;

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
template <class T> bt::Value<T> u_gelu_tanh(bt::Value<T> x) { return bt::gelu_tanh(x); }
template <class T> bt::Value<T> u_silu(bt::Value<T> x) { return bt::silu(x); }
template <class T> bt::Value<T> u_abs(bt::Value<T> x) { return bt::abs(x); }
template <class T> bt::Value<T> u_leaky_relu(bt::Value<T> x) { return bt::leaky_relu(x); }
template <class T> bt::Value<T> u_leaky_relu_02(bt::Value<T> x) { return bt::leaky_relu(x, T(0.2)); }
template <class T> bt::Value<T> u_bce(bt::Value<T> x) { return bt::bce_with_logits(x, T(0.3)); }
template <class T> bt::Value<T> u_bce_1(bt::Value<T> x) { return bt::bce_with_logits(x, T(1)); }
template <class T> bt::Value<T> u_huber(bt::Value<T> x) { return bt::huber(x); }
template <class T> bt::Value<T> u_huber_07(bt::Value<T> x) { return bt::huber(x, T(0.7)); }
template <class T> bt::Value<T> u_compound(bt::Value<T> x) {
  bt::Value<T> y = x;
  y += T(2);
  y *= x;   // (x + 2) x
  y -= T(1);
  y /= T(4);  // ((x + 2) x - 1) / 4
  return y;
}

double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Closed forms of the ops beyond the paper's set, written from their
// definitions (not from the rows' arrangement).
const double kSqrt2OverPi = std::sqrt(2.0 / std::acos(-1.0));
double gelu_tanh_ref(double x) { return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x))); }
double gelu_tanh_grad_ref(double x) {
  const double t = std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * kSqrt2OverPi * (1.0 + 3.0 * 0.044715 * x * x);
}
// -[y log(sigmoid(x)) + (1 - y) log(1 - sigmoid(x))], with 1 - sigmoid(x) = sigmoid(-x).
double bce_ref(double x, double y) { return y * std::log1p(std::exp(-x)) + (1.0 - y) * std::log1p(std::exp(x)); }
double huber_ref(double d, double delta) {
  return std::fabs(d) < delta ? 0.5 * d * d : delta * (std::fabs(d) - 0.5 * delta);
}
double huber_grad_ref(double d, double delta) { return d > delta ? delta : (d < -delta ? -delta : d); }

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
    // The ops linked on use. Kinks (leaky_relu and abs at 0, huber at
    // |d| == delta) are tested exactly in linked_op_edges, not here: a
    // central difference straddling a kink is no oracle.
    UNARY(gelu_tanh, gelu_tanh_ref, gelu_tanh_grad_ref, -3.0, -0.75, 0.4, 2.5),
    UNARY(silu, [](double x) { return x * sigmoid_ref(x); },
          [](double x) { return sigmoid_ref(x) * (1.0 + x * (1.0 - sigmoid_ref(x))); }, -4.0, -0.3, 0.7, 6.0),
    UNARY(abs, [](double x) { return std::fabs(x); }, [](double x) { return x > 0.0 ? 1.0 : -1.0; }, -2.0, -0.3,
          0.7, 5.0),
    UNARY(leaky_relu, [](double x) { return x > 0.0 ? x : 0.01 * x; }, [](double x) { return x > 0.0 ? 1.0 : 0.01; },
          -2.0, -0.3, 0.7, 5.0),
    UNARY(leaky_relu_02, [](double x) { return x > 0.0 ? x : 0.2 * x; }, [](double x) { return x > 0.0 ? 1.0 : 0.2; },
          -2.0, -0.3, 0.7, 5.0),
    UNARY(bce, [](double x) { return bce_ref(x, 0.3); }, [](double x) { return sigmoid_ref(x) - 0.3; }, -4.0, -0.3,
          0.7, 6.0),
    UNARY(bce_1, [](double x) { return bce_ref(x, 1.0); }, [](double x) { return sigmoid_ref(x) - 1.0; }, -4.0, -0.3,
          0.7, 6.0),
    // huber: both branches and both signs.
    UNARY(huber, [](double x) { return huber_ref(x, 1.0); }, [](double x) { return huber_grad_ref(x, 1.0); }, -2.0,
          -0.3, 0.7, 5.0),
    UNARY(huber_07, [](double x) { return huber_ref(x, 0.7); }, [](double x) { return huber_grad_ref(x, 0.7); },
          -2.0, -0.3, 0.5, 5.0),
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
          BT_CHECK(t, g_tape64.usage().slots == constant_slots);
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
// Every elementwise op of core/op.hpp has a case above (so its gradient is checked
// against a closed form and finite differences, which also catches an op whose
// row has no case in the backward sweep's switch): the ops the cases record,
// read back from the tape, cover every unary, binary and constant row.
void every_elementwise_op(bt_test::Context& t) {
  constexpr std::size_t kCodes = 256U;  // an op code is one byte
  bool seen[kCodes] = {};
  for (const UnaryCase& c : kUnary) {
    g_tape64.reset();
    const bt::Value<double> out = c.build64(g_tape64.leaf(0.5));
    seen[static_cast<std::size_t>(bt::node_op(g_tape64, out.index()))] = true;
  }
  for (const BinaryCase& c : kBinary) {
    g_tape64.reset();
    auto x = g_tape64.leaf(0.5);
    const bt::Value<double> out = c.build64(x, g_tape64.leaf(2.0));
    seen[static_cast<std::size_t>(bt::node_op(g_tape64, out.index()))] = true;
  }
  std::size_t elementwise = 0U;
  const auto count = [&](std::size_t k, bt::OpKind kind, const char* name) {
    if ((kind == bt::OpKind::kUnary) || (kind == bt::OpKind::kBinary) || (kind == bt::OpKind::kConstant)) {
      ++elementwise;
      t.test_name = name;
      BT_CHECK(t, seen[k]);
    }
  };
  for (std::size_t k = 0U; k < static_cast<std::size_t>(bt::Op::kCount); ++k) {
    count(k, bt::op_kind(static_cast<bt::Op>(k)), bt::op_name(static_cast<bt::Op>(k)));
  }
  // The op families of ext/functions.hpp: every code of theirs.
  for (std::size_t k = static_cast<std::size_t>(bt::Op::kFirstExtension); k < kCodes; ++k) {
    const auto op = static_cast<bt::Op>(k);
    count(k, bt::PiecewiseOps::kind(op), bt::PiecewiseOps::name(op));
    count(k, bt::SmoothOps::kind(op), bt::SmoothOps::name(op));
  }
  t.test_name = "every_elementwise_op";
  BT_CHECK(t, elementwise == 31U);  // 25 of the paper's set, 6 of ext/functions.hpp; update with a new row and its case
}

// Reductions over no operands give PyTorch's values of nothing, with no
// error (torch.sum/prod of an empty tensor: 0 and 1; mean, var: NaN;
// logsumexp: -inf; the maximum of nothing, which PyTorch refuses: -inf),
// on the tape they are given, as a constant node that backward passes
// through; over a view of no nodes too. Without a tape (the handle-only
// forms) there is nothing to record on: an empty handle, as documented.
void empty_reductions(bt_test::Context& t) {
  g_tape64.reset();
  using V = bt::Value<double>;
  const V* none = nullptr;
  const double kNaN = std::numeric_limits<double>::quiet_NaN();
  const double kInf = std::numeric_limits<double>::infinity();
  const struct {
    const char* name;
    V (*fn)(bt::Tape<double>&, const V*, std::size_t);
    double want;
  } kCases[] = {
      {"sum", &bt::reduce_sum<double>, 0.0},
      {"sub", &bt::reduce_sub<double>, 0.0},
      {"mul", &bt::reduce_mul<double>, 1.0},
      {"mean", &bt::reduce_mean<double>, kNaN},
      {"sum_of_squares", &bt::reduce_sum_of_squares<double>, 0.0},
      {"mean_squares", &bt::reduce_mean_squares<double>, kNaN},
      {"negative_mean", &bt::reduce_negative_mean<double>, kNaN},
      {"variance", &bt::variance<double>, kNaN},
      {"variance_biased", &bt::variance_biased<double>, kNaN},
      {"log_sum_exp", &bt::log_sum_exp<double>, -kInf},
      {"max", &bt::reduce_max<double>, -kInf},
  };
  for (const auto& c : kCases) {
    t.test_name = c.name;
    const V x = g_tape64.leaf(2.0);
    const V e = c.fn(g_tape64, none, 0U);
    BT_CHECK(t, e.valid() && (g_tape64.status() == bt::Status::kOk));
    BT_CHECK(t, (e.value() == c.want) || (std::isnan(c.want) && std::isnan(e.value())));
    BT_CHECK(t, bt::node_op(g_tape64, e.index()) == bt::Op::kInput);  // a constant: no gradient
    // It takes part in a graph like any node: d(x * 3 + e)/dx = 3.
    const V y = std::isfinite(c.want) ? (x * 3.0 + e) : (x * 3.0);
    BT_CHECK(t, g_tape64.backward(y) == bt::Status::kOk);
    BT_CHECK(t, x.grad() == 3.0);
  }
  t.test_name = "empty_view";
  const V a = g_tape64.leaf(1.0);
  BT_CHECK(t, bt::reduce(g_tape64, bt::Op::kSumR, bt::View{a.index(), 0U}).value() == 0.0);
  BT_CHECK(t, std::isinf(bt::reduce_max(g_tape64, bt::View{a.index(), 0U}).value()));
  BT_CHECK(t, g_tape64.status() == bt::Status::kOk);
  t.test_name = "no_tape";
  BT_CHECK(t, bt::reduce_sum(none, 0U).tape() == nullptr);
  BT_CHECK(t, g_tape64.status() == bt::Status::kOk);
  t.test_name = "empty_reductions";
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
  BT_CHECK(t, g_tape64.usage().slots == 5U);
}

// --- the ops linked on use at their edges -------------------------------------
// Expected values are PyTorch 1.13's (torch.nn.functional.leaky_relu,
// gelu(approximate='tanh'), silu, abs, binary_cross_entropy_with_logits,
// huber_loss, max_pool1d) at these points, checked bit for bit where the
// bits are determined (signed zeros, NaN, infinities, exact values).
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// a and b are the same double: both NaN, or equal with the same sign.
bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::isnan(a) && std::isnan(b);
  }
  return (a == b) && (std::signbit(a) == std::signbit(b));  // exact by design
}

// The same gradient: as same(), but -0 and +0 are equal. A leaf's gradient
// accumulates from +0, so a contribution of -0 reads +0 (PyTorch assigns a
// leaf's first contribution and keeps -0, e.g. silu's at x = -1000).
bool same_grad(double a, double b) { return same(a, b) || ((a == 0.0) && (b == 0.0)); }  // exact by design

// build(x) at x: the value and d/dx, with backward from the op's node.
template <class T>
void value_and_grad(bt::Tape<T>& tape, bt::Value<T> (*build)(bt::Value<T>), T x, double* value, double* grad) {
  tape.reset();
  const bt::Value<T> leaf = tape.leaf(x);
  const bt::Value<T> y = build(leaf);
  const bool ok = tape.backward(y) == bt::Status::kOk;
  *value = ok ? static_cast<double>(y.value()) : -12345.0;
  *grad = ok ? static_cast<double>(leaf.grad()) : -12345.0;
}

struct EdgeCase {
  const char* name;
  Unary<double> build64;
  Unary<float> build32;
  double x;
  double value;  // PyTorch, float64
  double grad;
  bool fp32;     // the same value and gradient in float32 (else FP64 only)
};

template <class T> bt::Value<T> e_bce_0(bt::Value<T> x) { return bt::bce_with_logits(x, T(0)); }
template <class T> bt::Value<T> e_bce_nan(bt::Value<T> x) { return bt::bce_with_logits(x, std::numeric_limits<T>::quiet_NaN()); }
template <class T> bt::Value<T> e_huber_03(bt::Value<T> x) { return bt::huber(x, T(0.3)); }

#define EDGE(name, fn, x, value, grad, fp32) \
  { name, &fn<double>, &fn<float>, x, value, grad, fp32 }

const EdgeCase kEdges[] = {
    // leaky_relu: slope 0.01 at 0, at -0 (the value keeps the sign) and for NaN.
    EDGE("leaky_relu(0)", u_leaky_relu, 0.0, 0.0, 0.01, false),
    EDGE("leaky_relu(-0)", u_leaky_relu, -0.0, -0.0, 0.01, false),
    EDGE("leaky_relu(nan)", u_leaky_relu, kNaN, kNaN, 0.01, false),
    EDGE("leaky_relu(-1000)", u_leaky_relu, -1000.0, -10.0, 0.01, false),
    EDGE("leaky_relu(-inf)", u_leaky_relu, -kInf, -kInf, 0.01, false),
    EDGE("leaky_relu_0.2(0)", u_leaky_relu_02, 0.0, 0.0, 0.2, false),
    // gelu_tanh: 0, saturation, overflow of x^2 (PyTorch's derivative is NaN there).
    EDGE("gelu_tanh(0)", u_gelu_tanh, 0.0, 0.0, 0.5, true),
    EDGE("gelu_tanh(-0)", u_gelu_tanh, -0.0, -0.0, 0.5, true),
    EDGE("gelu_tanh(30)", u_gelu_tanh, 30.0, 30.0, 1.0, true),
    EDGE("gelu_tanh(-30)", u_gelu_tanh, -30.0, -0.0, 0.0, true),
    EDGE("gelu_tanh(1e200)", u_gelu_tanh, 1e200, 1e200, kNaN, false),
    EDGE("gelu_tanh(-1e200)", u_gelu_tanh, -1e200, -0.0, kNaN, false),
    EDGE("gelu_tanh(inf)", u_gelu_tanh, kInf, kInf, kNaN, true),
    EDGE("gelu_tanh(-inf)", u_gelu_tanh, -kInf, kNaN, kNaN, true),
    EDGE("gelu_tanh(nan)", u_gelu_tanh, kNaN, kNaN, kNaN, true),
    // silu.
    EDGE("silu(0)", u_silu, 0.0, 0.0, 0.5, true),
    EDGE("silu(-1000)", u_silu, -1000.0, -0.0, -0.0, true),
    EDGE("silu(1000)", u_silu, 1000.0, 1000.0, 1.0, true),
    EDGE("silu(1e200)", u_silu, 1e200, 1e200, 1.0, false),
    EDGE("silu(inf)", u_silu, kInf, kInf, kNaN, true),
    EDGE("silu(-inf)", u_silu, -kInf, kNaN, kNaN, true),
    EDGE("silu(nan)", u_silu, kNaN, kNaN, kNaN, true),
    // abs: derivative 0 at +-0 and for NaN (sign(NaN) is 0 in PyTorch).
    EDGE("abs(0)", u_abs, 0.0, 0.0, 0.0, true),
    EDGE("abs(-0)", u_abs, -0.0, 0.0, 0.0, true),
    EDGE("abs(nan)", u_abs, kNaN, kNaN, 0.0, true),
    EDGE("abs(-inf)", u_abs, -kInf, kInf, -1.0, true),
    // bce_with_logits(x, y).
    EDGE("bce(0, 0)", e_bce_0, 0.0, 0.6931471805599453, 0.5, false),
    EDGE("bce(-800, 0)", e_bce_0, -800.0, 0.0, 0.0, true),
    EDGE("bce(800, 0)", e_bce_0, 800.0, 800.0, 1.0, true),
    EDGE("bce(inf, 0)", e_bce_0, kInf, kInf, 1.0, true),
    EDGE("bce(-inf, 0)", e_bce_0, -kInf, kNaN, 0.0, true),
    EDGE("bce(inf, 1)", u_bce_1, kInf, kNaN, 0.0, true),
    EDGE("bce(-inf, 1)", u_bce_1, -kInf, kNaN, -1.0, true),
    EDGE("bce(nan, 0)", e_bce_0, kNaN, kNaN, kNaN, true),
    EDGE("bce(1, nan)", e_bce_nan, 1.0, kNaN, kNaN, true),
    // bce(40, 1): log(1 + exp(-40)) = 4.248354255291589e-18 (PyTorch 1.13
    // rounds it to 0 with log instead of log1p); derivative sigmoid(40) - 1 = 0.
    EDGE("bce(40, 1)", u_bce_1, 40.0, 4.248354255291589e-18, 0.0, false),
    // huber(d, delta): |d| == delta takes the linear branch, derivative d.
    EDGE("huber(0)", u_huber, 0.0, 0.0, 0.0, true),
    EDGE("huber(1)", u_huber, 1.0, 0.5, 1.0, true),
    EDGE("huber(-1)", u_huber, -1.0, 0.5, -1.0, true),
    EDGE("huber(2)", u_huber, 2.0, 1.5, 1.0, true),
    EDGE("huber(-2)", u_huber, -2.0, 1.5, -1.0, true),
    EDGE("huber(inf)", u_huber, kInf, kInf, 1.0, true),
    EDGE("huber(-inf)", u_huber, -kInf, kInf, -1.0, true),
    EDGE("huber(nan)", u_huber, kNaN, kNaN, kNaN, true),
    EDGE("huber_0.3(0.3)", e_huber_03, 0.3, 0.3 * (0.3 - 0.5 * 0.3), 0.3, false),
    EDGE("huber_0.3(-0.3)", e_huber_03, -0.3, 0.3 * (0.3 - 0.5 * 0.3), -0.3, false),
    EDGE("huber_0.3(0.7-0.4)", e_huber_03, 0.7 - 0.4, 0.5 * (0.7 - 0.4) * (0.7 - 0.4), 0.7 - 0.4, false),
};

void linked_op_edges(bt_test::Context& t) {
  for (const EdgeCase& c : kEdges) {
    t.test_name = c.name;
    double v = 0.0;
    double g = 0.0;
    value_and_grad(g_tape64, c.build64, c.x, &v, &g);
    BT_CHECK(t, same(v, c.value));
    BT_CHECK(t, same_grad(g, c.grad));
    if (c.fp32) {
      value_and_grad(g_tape32, c.build32, static_cast<float>(c.x), &v, &g);
      BT_CHECK(t, same(v, static_cast<double>(static_cast<float>(c.value))));
      BT_CHECK(t, same_grad(g, static_cast<double>(static_cast<float>(c.grad))));
    }
  }
  // FP32 slopes and deltas are the float constants (PyTorch converts them too).
  t.test_name = "leaky_relu_fp32(0)";
  double v = 0.0;
  double g = 0.0;
  value_and_grad(g_tape32, u_leaky_relu<float>, 0.0F, &v, &g);
  BT_CHECK(t, v == 0.0 && g == static_cast<double>(0.01F));
  t.test_name = "huber_0.3_fp32(0.3)";
  value_and_grad(g_tape32, e_huber_03<float>, 0.3F, &v, &g);
  BT_CHECK(t, v == static_cast<double>(0.3F * (0.3F - (0.5F * 0.3F))) && g == static_cast<double>(0.3F));
  // The stored constant reads back; the ops are named for Graphviz.
  t.test_name = "constants";
  g_tape64.reset();
  auto x = g_tape64.leaf(-1.5);
  const auto leaky = bt::leaky_relu(x, 0.125);
  const auto bce = bt::bce_with_logits(x, 0.75);
  const auto hub = bt::huber(x, 2.5);
  BT_CHECK(t, bt::node_constant(g_tape64, leaky.index()) == 0.125);
  BT_CHECK(t, bt::node_constant(g_tape64, bce.index()) == 0.75);
  BT_CHECK(t, bt::node_constant(g_tape64, hub.index()) == 2.5);
  BT_CHECK(t, std::isnan(bt::node_constant(g_tape64, bt::abs(x).index())));
  BT_CHECK(t, g_tape64.usage().slots == 3U * bt::Recorder<double>::kConstantSlots);
  BT_CHECK(t, std::strcmp(bt::SmoothOps::name(bt::SmoothOps::op<bt::rows::GeluTanh>()), "gelu_tanh") == 0);
  BT_CHECK(t, std::strcmp(bt::PiecewiseOps::name(bt::PiecewiseOps::op<bt::rows::MaxL>()), "max") == 0);
  BT_CHECK(t, bt::is_extension(bt::PiecewiseOps::op<bt::rows::MaxR>()) && !bt::is_extension(bt::Op::kScaleShift));
  BT_CHECK(t, bt::PiecewiseOps::kind(bt::PiecewiseOps::op<bt::rows::MaxL>()) == bt::OpKind::kListReduce);
}

// --- reduce_max --------------------------------------------------------------------
// max_pool1d over one window of these values (PyTorch 1.13, CPU): the
// value and which operand gets the gradient.
struct MaxCase {
  std::size_t n;
  double x[5];
  double value;
  std::size_t picked;
};
const MaxCase kMaxCases[] = {
    {4U, {1.0, 3.0, 3.0, 2.0}, 3.0, 1U},              // ties: the first
    {2U, {3.0, 3.0}, 3.0, 0U},
    {3U, {5.0, 1.0, 5.0}, 5.0, 0U},
    {3U, {kNaN, 1.0, 2.0}, kNaN, 0U},                 // NaN wins over numbers
    {5U, {1.0, kNaN, 3.0, kNaN, 2.0}, kNaN, 3U},      // ... and the last NaN wins
    {2U, {kNaN, kNaN}, kNaN, 1U},
    {3U, {-kInf, 2.0, kNaN}, kNaN, 2U},
    {3U, {-kInf, -kInf, -kInf}, -kInf, 0U},           // all -inf: the first
    {3U, {2.0, kInf, kInf}, kInf, 1U},
    {2U, {0.0, -0.0}, 0.0, 0U},                       // -0 == +0: a tie
    {2U, {-0.0, 0.0}, -0.0, 0U},
    {1U, {7.0}, 7.0, 0U},
    {5U, {-4.0, -3.0, -7.0, -3.0, -9.0}, -3.0, 1U},
};

// reduce_max over leaves with these values, operands in the given order:
// layout 0 a run (consecutive leaves, handles), 1 a list (the leaves made
// in reverse order), 2 the run through reduce_max(tape, View).
template <class T>
void check_max(bt_test::Context& t, bt::Tape<T>& tape, const MaxCase& c, int layout) {
  tape.reset();
  bt::Value<T> xs[5];
  if (layout == 1) {
    for (std::size_t k = c.n; k-- > 0U;) {
      xs[k] = tape.leaf(static_cast<T>(c.x[k]));
    }
  } else {
    for (std::size_t k = 0U; k < c.n; ++k) {
      xs[k] = tape.leaf(static_cast<T>(c.x[k]));
    }
  }
  const bt::Value<T> m = (layout == 2) ? bt::reduce_max(tape, bt::View{xs[0].index(), static_cast<bt::Index>(c.n)})
                                       : bt::reduce_max(xs, c.n);
  const bt::Op want = ((layout == 1) && (c.n > 1U)) ? bt::PiecewiseOps::op<bt::rows::MaxL>() : bt::PiecewiseOps::op<bt::rows::MaxR>();
  BT_CHECK(t, bt::node_op(tape, m.index()) == want);
  BT_CHECK(t, tape.usage().slots == ((want == bt::PiecewiseOps::op<bt::rows::MaxL>()) ? c.n : 0U));
  BT_CHECK(t, tape.backward(m * T(2.5)) == bt::Status::kOk);
  BT_CHECK(t, same(static_cast<double>(m.value()), static_cast<double>(static_cast<T>(c.value))));
  for (std::size_t k = 0U; k < c.n; ++k) {
    BT_CHECK(t, same(static_cast<double>(xs[k].grad()), (k == c.picked) ? 2.5 : 0.0));
  }
}

void reduce_max_cases(bt_test::Context& t) {
  t.test_name = "reduce_max";
  for (const MaxCase& c : kMaxCases) {
    for (int layout = 0; layout < 3; ++layout) {
      check_max(t, g_tape64, c, layout);
      check_max(t, g_tape32, c, layout);
    }
  }
  // A repeated operand is one operand per position: the first maximum
  // (position 0) gets the gradient once.
  t.test_name = "reduce_max_repeated";
  g_tape64.reset();
  auto a = g_tape64.leaf(3.0);
  auto b = g_tape64.leaf(1.0);
  const bt::Value<double> rep[4] = {b, a, b, a};
  auto m = bt::reduce_max(rep, 4U);
  BT_CHECK(t, g_tape64.backward(m) == bt::Status::kOk);
  BT_CHECK(t, m.value() == 3.0 && a.grad() == 1.0 && b.grad() == 0.0);
  // Forward and backward agree with max_pool1d over a sliding window of a
  // view (stride 1, width 3, read in place): each window's gradient goes to
  // its first maximum, and overlapping windows add up.
  t.test_name = "reduce_max_windows";
  g_tape64.reset();
  const double v[6] = {1.0, 4.0, 4.0, 0.5, 4.0, 2.0};
  bt::Value<double> xs[6];
  for (std::size_t k = 0U; k < 6U; ++k) {
    xs[k] = g_tape64.leaf(v[k]);
  }
  bt::Value<double> outs[4];
  for (bt::Index w = 0U; w < 4U; ++w) {
    outs[w] = bt::reduce_max(g_tape64, bt::View{xs[0].index() + w, 3U});
  }
  BT_CHECK(t, g_tape64.backward(bt::reduce_sum(outs, 4U)) == bt::Status::kOk);
  // windows [1 4 4] [4 4 .5] [4 .5 4] [.5 4 2]: picks 1, 1, 2, 4
  const double want[6] = {0.0, 2.0, 1.0, 0.0, 1.0, 0.0};
  for (std::size_t k = 0U; k < 6U; ++k) {
    BT_CHECK(t, xs[k].grad() == want[k]);
  }
}

// Misuse records nothing and reports as the other reductions do.
void reduce_max_misuse(bt_test::Context& t) {
  t.test_name = "reduce_max_misuse";
  g_tape64.reset();
  auto a = g_tape64.leaf(1.0);
  auto b = g_tape64.leaf(2.0);
  const bt::Value<double> ok[2] = {a, b};
  const std::size_t size = g_tape64.size();
  // No operand with a tape: nothing to report to, an empty handle.
  BT_CHECK(t, bt::reduce_max(static_cast<const bt::Value<double>*>(nullptr), 2U).tape() == nullptr);
  BT_CHECK(t, bt::reduce_max(ok, 0U).tape() == nullptr);
  BT_CHECK(t, g_tape64.status() == bt::Status::kOk && g_tape64.size() == size);
  // An empty handle among the operands.
  const bt::Value<double> holey[3] = {b, bt::Value<double>(), a};
  BT_CHECK(t, !bt::reduce_max(holey, 3U).valid());
  BT_CHECK(t, g_tape64.status() == bt::Status::kEmptyHandle);
  BT_CHECK(t, g_tape64.size() == size && g_tape64.usage().slots == 0U);
  // A run of no nodes; a run past the end.
  g_tape64.clear_status();
  BT_CHECK(t, !bt::reduce_max(g_tape64, bt::kNoView).valid());
  BT_CHECK(t, g_tape64.status() == bt::Status::kInvalidArgument);
  g_tape64.clear_status();
  BT_CHECK(t, !bt::reduce_max(g_tape64, bt::View{b.index(), 2U}).valid());
  BT_CHECK(t, g_tape64.status() == bt::Status::kInvalidHandle);
  BT_CHECK(t, g_tape64.size() == size && g_tape64.usage().slots == 0U);
  // The tape's own reduce and reduce_range take the core set only.
  g_tape64.clear_status();
  BT_CHECK(t, !bt::reduce(g_tape64, bt::PiecewiseOps::op<bt::rows::MaxR>(), ok, 2U).valid());
  BT_CHECK(t, g_tape64.status() == bt::Status::kInvalidArgument);
  g_tape64.clear_status();
  BT_CHECK(t, !bt::reduce(g_tape64, bt::PiecewiseOps::op<bt::rows::MaxR>(), bt::View{a.index(), 2U}).valid());
  BT_CHECK(t, g_tape64.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, g_tape64.size() == size && g_tape64.usage().slots == 0U);
  // Operands of two tapes.
  g_tape64.clear_status();
  g_tape32.reset();
  bt::FixedTape<double, 8> other;
  const bt::Value<double> mixed[2] = {a, other.leaf(5.0)};
  BT_CHECK(t, !bt::reduce_max(mixed, 2U).valid());
  BT_CHECK(t, g_tape64.status() == bt::Status::kForeignValue);
  BT_CHECK(t, g_tape64.size() == size && g_tape64.usage().slots == 0U);
  // A full tape: kCapacityExceeded, and a list's slots are given back.
  bt::FixedTape<double, 3, 8> small;
  const bt::Value<double> p = small.leaf(1.0);
  const bt::Value<double> q = small.leaf(2.0);
  const bt::Value<double> r = small.leaf(3.0);
  const bt::Value<double> list[3] = {r, p, q};
  BT_CHECK(t, !bt::reduce_max(list, 3U).valid());
  BT_CHECK(t, small.status() == bt::Status::kCapacityExceeded);
  BT_CHECK(t, small.size() == 3U && small.usage().slots == 0U);
}

// --- the ops linked on use on a tape of lanes ----------------------------------
// Lane i of every node holds exactly what a scalar tape holds for sample i.
using Lanes4 = bt::Lanes<double, 4>;
bt::FixedTape<Lanes4, 16, 16> g_lanes;

template <class T>
using Linked = bt::Value<T> (*)(bt::Value<T>);
template <class T> bt::Value<T> l_leaky(bt::Value<T> x) { return bt::leaky_relu(x, T(0.125)); }
template <class T> bt::Value<T> l_bce(bt::Value<T> x) { return bt::bce_with_logits(x, T(0.25)); }
template <class T> bt::Value<T> l_huber(bt::Value<T> x) { return bt::huber(x, T(0.5)); }

// Where the target fuses double multiply-adds (docs/floating-point.md: AArch64,
// ARMv7 VFPv4, Cortex-M7/M55, x86 with FMA), the lane type's code (compiled
// here) and the scalar tape's (compiled in the library) may fuse different
// products: their gradients may then differ in the last bits, more where a
// derivative cancels (gelu_tanh's at x = -3 on Cortex-M55: 50 units in the
// last place of the result).
#if defined(__FP_FAST_FMA) || (defined(__ARM_FEATURE_FMA) && defined(__ARM_FP) && ((__ARM_FP & 8) != 0))
constexpr double kLaneUlps = 1024.0;
#else
constexpr double kLaneUlps = 0.0;
#endif
bool same_or_close(double a, double b) {
  if (same(a, b) || (kLaneUlps == 0.0)) {  // exact by design
    return same(a, b);
  }
  const double scale = std::max(std::fabs(a), std::fabs(b));
  return std::isfinite(a) && std::isfinite(b) &&
         (std::fabs(a - b) <= (kLaneUlps * std::numeric_limits<double>::epsilon() * scale));
}

void linked_ops_on_lanes(bt_test::Context& t) {
  t.test_name = "linked_ops_on_lanes";
  const Linked<Lanes4> lane_ops[] = {u_gelu_tanh<Lanes4>, u_silu<Lanes4>, u_abs<Lanes4>, l_leaky<Lanes4>,
                                     l_bce<Lanes4>, l_huber<Lanes4>};
  const Linked<double> scalar_ops[] = {u_gelu_tanh<double>, u_silu<double>, u_abs<double>, l_leaky<double>,
                                       l_bce<double>, l_huber<double>};
  // Read-only data, not the stack: the micro:bit's 3 KiB stack also holds
  // the sweep of a tape of lanes below this frame.
  static constexpr double inputs[3][4] = {{0.0, -0.5, 0.5, kNaN}, {-0.0, 2.0, -3.0, 0.25}, {kInf, -kInf, 1e-3, -40.0}};
  for (std::size_t op = 0U; op < 6U; ++op) {
    for (const auto& in : inputs) {
      g_lanes.reset();
      const bt::Value<Lanes4> x = g_lanes.leaf(Lanes4::of(in));
      const bt::Value<Lanes4> y = lane_ops[op](x);
      BT_CHECK(t, g_lanes.backward(y) == bt::Status::kOk);
      for (std::size_t i = 0U; i < 4U; ++i) {
        double v = 0.0;
        double g = 0.0;
        value_and_grad(g_tape64, scalar_ops[op], in[i], &v, &g);
        BT_CHECK(t, same_or_close(y.value().lane[i], v));
        BT_CHECK(t, same_or_close(x.grad().lane[i], g));
      }
    }
  }
  // reduce_max: each lane picks its own operand (ties, NaN, -0).
  t.test_name = "reduce_max_on_lanes";
  static constexpr double ops[4][4] = {{1.0, kNaN, -0.0, 5.0}, {3.0, 1.0, 0.0, 5.0}, {3.0, kNaN, -1.0, 2.0}, {2.0, 0.0, 0.0, 9.0}};
  for (int layout = 0; layout < 2; ++layout) {
    g_lanes.reset();
    bt::Value<Lanes4> xs[4];
    for (std::size_t k = 0U; k < 4U; ++k) {
      xs[k] = g_lanes.leaf(Lanes4::of(ops[k]));
    }
    const bt::Value<Lanes4> list[4] = {xs[0], xs[2], xs[1], xs[3]};
    const bt::Value<Lanes4>* operands = (layout == 0) ? xs : list;
    const bt::Value<Lanes4> m = bt::reduce_max(operands, 4U);
    BT_CHECK(t, g_lanes.backward(m) == bt::Status::kOk);
    for (std::size_t i = 0U; i < 4U; ++i) {
      g_tape64.reset();
      bt::Value<double> s[4];
      for (std::size_t k = 0U; k < 4U; ++k) {
        s[k] = g_tape64.leaf(ops[k][i]);
      }
      const bt::Value<double> slist[4] = {s[0], s[2], s[1], s[3]};
      const bt::Value<double> sm = bt::reduce_max((layout == 0) ? s : slist, 4U);
      BT_CHECK(t, g_tape64.backward(sm) == bt::Status::kOk);
      BT_CHECK(t, same(m.value().lane[i], sm.value()));
      for (std::size_t k = 0U; k < 4U; ++k) {
        BT_CHECK(t, same(xs[k].grad().lane[i], s[k].grad()));
      }
    }
  }
}

const bt_test::TestCase kCases[] = {
    {"unary_fp64", unary_fp64},         {"unary_fp32", unary_fp32},
    {"edges", edges},                   {"binary_fp64", binary_fp64},
    {"binary_fp32", binary_fp32},       {"reductions_fp64", reductions_fp64},
    {"reductions_fp32", reductions_fp32}, {"empty_reductions", empty_reductions},
    {"product_with_zeros", product_with_zeros},
    {"repeated_operands", repeated_operands}, {"every_elementwise_op", every_elementwise_op},
    {"linked_op_edges", linked_op_edges},     {"reduce_max_cases", reduce_max_cases},
    {"reduce_max_misuse", reduce_max_misuse}, {"linked_ops_on_lanes", linked_ops_on_lanes},
};

}  // namespace

BT_TEST_MAIN("ops", kCases)

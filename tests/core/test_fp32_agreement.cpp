// SPDX-License-Identifier: Apache-2.0
// FP32 on every target: two small graphs recorded on a Tape<float>, their
// values and gradients checked against an FP64 oracle written out by hand
// here (closed-form derivatives, plain double arithmetic, no tape).
//
// Graph A uses only +, -, *, /, max (relu) and the tape's reductions and
// inner products: IEEE-754 rounds each of those exactly, so with the same
// operation order and no FMA contraction every target must produce the same
// bits. Graph B adds tanh, exp, log, sqrt, 1/sqrt and sigmoid, which come
// from each target's libm (glibc, newlib) and may differ in the last bits;
// sweep C evaluates each of those ops alone at 32 points.
//
// Besides the checks, the program prints every FP32 result as
//   fp32 <graph>.<quantity> <index> <hex bits>
// so tools/check.d/29-fp32-agreement.sh can compare x86-64, AArch64 and
// Cortex-M4 bit for bit (docs/floating-point.md states the tolerances and
// what is bit-identical).
#include <burtorch/burtorch.hpp>

#include <cmath>
#include <cstring>

#include "harness.hpp"

namespace bt = burtorch;

namespace {

constexpr std::size_t kIn = 8U;
constexpr std::size_t kHidden = 4U;

// FP32 results against the FP64 oracle: |f32 - f64| <= kAbs + kRel * |f64|.
// The graphs are small (sums of at most 8 products) and well conditioned,
// so a few FP32 roundings (2^-24 each) bound the error; the margin covers
// contraction and libm differences (observed: at most about 1e-7 of
// 1 + |f64| on every target, docs/floating-point.md).
constexpr double kRel = 2e-6;
constexpr double kAbs = 5e-7;

// Inputs: multiples of 1/64 in [-1, 1), exact in float and double alike, so
// every target and the oracle start from the same numbers.
struct Inputs {
  double x[kIn];
  double w[kHidden][kIn];
  double b[kHidden];
  double v[kHidden];
  double c;
  double t;
};

void make_inputs(Inputs& in, std::uint32_t seed, double scale) {
  std::uint32_t s = seed;
  auto next = [&s, scale]() {
    s = (s * 1664525U) + 1013904223U;
    const int k = static_cast<int>((s >> 24U) & 0x7FU) - 64;  // -64..63
    return scale * static_cast<double>(k) / 64.0;
  };
  for (double& x : in.x) {
    x = next();
  }
  for (auto& row : in.w) {
    for (double& w : row) {
      w = next();
    }
  }
  for (double& b : in.b) {
    b = next();
  }
  for (double& v : in.v) {
    v = next();
  }
  in.c = next();
  in.t = next();
}

// Everything one graph produces: forward values and every leaf gradient.
struct Results {
  double z[kHidden];
  double loss;
  double dx[kIn];
  double dw[kHidden][kIn];
  double db[kHidden];
  double dv[kHidden];
  double dc;
  double dt;
};

// The tape's side: leaves in a fixed order, so gradients are read back by
// index.
struct Leaves {
  bt::Value<float> x[kIn];
  bt::Value<float> w[kHidden][kIn];
  bt::Value<float> b[kHidden];
  bt::Value<float> v[kHidden];
  bt::Value<float> c;
  bt::Value<float> t;
};

bt::FixedTape<float, 256> g_tape;

void record_leaves(const Inputs& in, Leaves& l) {
  for (std::size_t j = 0U; j < kIn; ++j) {
    l.x[j] = g_tape.leaf(static_cast<float>(in.x[j]));
  }
  for (std::size_t i = 0U; i < kHidden; ++i) {
    for (std::size_t j = 0U; j < kIn; ++j) {
      l.w[i][j] = g_tape.param(static_cast<float>(in.w[i][j]));
    }
  }
  for (std::size_t i = 0U; i < kHidden; ++i) {
    l.b[i] = g_tape.param(static_cast<float>(in.b[i]));
  }
  for (std::size_t i = 0U; i < kHidden; ++i) {
    l.v[i] = g_tape.param(static_cast<float>(in.v[i]));
  }
  l.c = g_tape.param(static_cast<float>(in.c));
  l.t = g_tape.leaf(static_cast<float>(in.t));
}

void read_gradients(const Leaves& l, Results& r) {
  for (std::size_t j = 0U; j < kIn; ++j) {
    r.dx[j] = static_cast<double>(l.x[j].grad());
  }
  for (std::size_t i = 0U; i < kHidden; ++i) {
    for (std::size_t j = 0U; j < kIn; ++j) {
      r.dw[i][j] = static_cast<double>(l.w[i][j].grad());
    }
    r.db[i] = static_cast<double>(l.b[i].grad());
    r.dv[i] = static_cast<double>(l.v[i].grad());
  }
  r.dc = static_cast<double>(l.c.grad());
  r.dt = static_cast<double>(l.t.grad());
}

// dL/dz for every hidden unit, then the chain rule into W, b and x.
void back_through_layer(const Inputs& in, const double* dz, Results& r) {
  for (std::size_t j = 0U; j < kIn; ++j) {
    r.dx[j] = 0.0;
  }
  for (std::size_t i = 0U; i < kHidden; ++i) {
    r.db[i] = dz[i];
    for (std::size_t j = 0U; j < kIn; ++j) {
      r.dw[i][j] = dz[i] * in.x[j];
      r.dx[j] += dz[i] * in.w[i][j];
    }
  }
}

void layer_forward(const Inputs& in, double* z) {
  for (std::size_t i = 0U; i < kHidden; ++i) {
    double s = in.b[i];
    for (std::size_t j = 0U; j < kIn; ++j) {
      s += in.w[i][j] * in.x[j];
    }
    z[i] = s;
  }
}

// --- graph A: arithmetic only ----------------------------------------------
//   z = W x + b, h = relu(z), y = v.h + c, e = y - t, q = z0 / (1 + z1^2)
//   L = e^2 / 2 + mean(h) / 2 + var(h) / 4 + q
void graph_a_tape(const Inputs& in, Results& r) {
  g_tape.reset();
  Leaves l;
  record_leaves(in, l);
  bt::Value<float> z[kHidden];
  bt::Value<float> h[kHidden];
  for (std::size_t i = 0U; i < kHidden; ++i) {
    z[i] = bt::inner_product_with_bias(l.w[i], l.x, kIn, l.b[i]);
    h[i] = bt::relu(z[i]);
  }
  const auto y = bt::inner_product(l.v, h, kHidden) + l.c;
  const auto e = y - l.t;
  const auto q = z[0] / (bt::sqr(z[1]) + 1.0F);
  const auto loss = (bt::sqr(e) / 2.0F) + (bt::reduce_mean(h, kHidden) / 2.0F) +
                    (bt::variance(h, kHidden) / 4.0F) + q;
  static_cast<void>(g_tape.backward(loss));
  for (std::size_t i = 0U; i < kHidden; ++i) {
    r.z[i] = static_cast<double>(z[i].value());
  }
  r.loss = static_cast<double>(loss.value());
  read_gradients(l, r);
}

void graph_a_oracle(const Inputs& in, Results& r) {
  layer_forward(in, r.z);
  double h[kHidden];
  double y = in.c;
  double mean = 0.0;
  for (std::size_t i = 0U; i < kHidden; ++i) {
    h[i] = (r.z[i] > 0.0) ? r.z[i] : 0.0;
    y += in.v[i] * h[i];
    mean += h[i];
  }
  mean /= static_cast<double>(kHidden);
  double var = 0.0;
  for (double hi : h) {
    var += (hi - mean) * (hi - mean);
  }
  var /= static_cast<double>(kHidden - 1U);
  const double e = y - in.t;
  const double d = 1.0 + (r.z[1] * r.z[1]);
  r.loss = (e * e / 2.0) + (mean / 2.0) + (var / 4.0) + (r.z[0] / d);
  double dz[kHidden];
  for (std::size_t i = 0U; i < kHidden; ++i) {
    // d/dh_i of e^2/2, mean/2 and var/4 (the mean's share of var cancels).
    const double dh = (e * in.v[i]) + (0.5 / static_cast<double>(kHidden)) +
                      (0.25 * 2.0 * (h[i] - mean) / static_cast<double>(kHidden - 1U));
    dz[i] = (r.z[i] > 0.0) ? dh : 0.0;
  }
  dz[0] += 1.0 / d;
  dz[1] += -r.z[0] * 2.0 * r.z[1] / (d * d);
  back_through_layer(in, dz, r);
  for (std::size_t i = 0U; i < kHidden; ++i) {
    r.dv[i] = e * h[i];
  }
  r.dc = e;
  r.dt = -e;
}

// --- graph B: libm functions -------------------------------------------------
//   z = W x + b, h = tanh(z), y = v.h + c, p = sigmoid(y)
//   L = -log(p) + exp(-y^2 / 2) + log(1 + z2^2) + sqrt(1 + z3^2)
//       + 1 / sqrt(2 + z0^2)          (t is not used: its gradient stays 0)
void graph_b_tape(const Inputs& in, Results& r) {
  g_tape.reset();
  Leaves l;
  record_leaves(in, l);
  bt::Value<float> z[kHidden];
  bt::Value<float> h[kHidden];
  for (std::size_t i = 0U; i < kHidden; ++i) {
    z[i] = bt::inner_product_with_bias(l.w[i], l.x, kIn, l.b[i]);
    h[i] = bt::tanh(z[i]);
  }
  const auto y = bt::inner_product(l.v, h, kHidden) + l.c;
  const auto p = bt::sigmoid(y);
  const auto loss = bt::neg_log(p) + bt::exp(bt::sqr(y) * -0.5F) + bt::log(bt::sqr(z[2]) + 1.0F) +
                    bt::sqrt(bt::sqr(z[3]) + 1.0F) + bt::inv_sqrt(bt::sqr(z[0]) + 2.0F);
  static_cast<void>(g_tape.backward(loss));
  for (std::size_t i = 0U; i < kHidden; ++i) {
    r.z[i] = static_cast<double>(z[i].value());
  }
  r.loss = static_cast<double>(loss.value());
  read_gradients(l, r);
}

void graph_b_oracle(const Inputs& in, Results& r) {
  layer_forward(in, r.z);
  double h[kHidden];
  double y = in.c;
  for (std::size_t i = 0U; i < kHidden; ++i) {
    h[i] = std::tanh(r.z[i]);
    y += in.v[i] * h[i];
  }
  const double p = 1.0 / (1.0 + std::exp(-y));
  const double g = std::exp(-0.5 * y * y);
  const double s2 = 1.0 + (r.z[2] * r.z[2]);
  const double u3 = std::sqrt(1.0 + (r.z[3] * r.z[3]));
  const double w0 = 1.0 / std::sqrt(2.0 + (r.z[0] * r.z[0]));
  r.loss = -std::log(p) + g + std::log(s2) + u3 + w0;
  const double dy = (p - 1.0) - (y * g);
  double dz[kHidden];
  for (std::size_t i = 0U; i < kHidden; ++i) {
    dz[i] = dy * in.v[i] * (1.0 - (h[i] * h[i]));
    r.dv[i] = dy * h[i];
  }
  dz[2] += 2.0 * r.z[2] / s2;
  dz[3] += r.z[3] / u3;
  dz[0] += -r.z[0] * w0 * w0 * w0;
  back_through_layer(in, dz, r);
  r.dc = dy;
  r.dt = 0.0;
}

// --- checks and the bit dump -------------------------------------------------

void print_hex(std::uint32_t bits) {
  char text[9];
  for (std::size_t i = 0U; i < 8U; ++i) {
    const std::uint32_t nibble = (bits >> (28U - (4U * i))) & 0xFU;
    text[i] = "0123456789abcdef"[nibble];
  }
  text[8] = '\0';
  bt_test::print(text);
}

void dump(const char* graph, const char* quantity, const double* values, std::size_t n) {
  for (std::size_t i = 0U; i < n; ++i) {
    const float f = static_cast<float>(values[i]);  // exact: the value came from a float
    std::uint32_t bits = 0U;
    std::memcpy(&bits, &f, sizeof(bits));
    bt_test::print("fp32 ");
    bt_test::print(graph);
    bt_test::print(".");
    bt_test::print(quantity);
    bt_test::print(" ");
    bt_test::print_int(static_cast<long>(i));
    bt_test::print(" ");
    print_hex(bits);
    bt_test::print("\n");
  }
}

void compare(bt_test::Context& t, const char* graph, const Results& got, const Results& want) {
  double worst = 0.0;
  auto check = [&](const char* quantity, const double* g, const double* w, std::size_t n) {
    for (std::size_t i = 0U; i < n; ++i) {
      BT_CHECK_CLOSE(t, g[i], w[i], kRel, kAbs);
      const double err = std::fabs(g[i] - w[i]) / (1.0 + std::fabs(w[i]));
      worst = (err > worst) ? err : worst;
    }
    dump(graph, quantity, g, n);
  };
  check("z", got.z, want.z, kHidden);
  check("loss", &got.loss, &want.loss, 1U);
  check("dx", got.dx, want.dx, kIn);
  check("dw", &got.dw[0][0], &want.dw[0][0], kHidden * kIn);
  check("db", got.db, want.db, kHidden);
  check("dv", got.dv, want.dv, kHidden);
  check("dc", &got.dc, &want.dc, 1U);
  check("dt", &got.dt, &want.dt, 1U);
  bt_test::print("  graph ");
  bt_test::print(graph);
  bt_test::print(": max |f32 - f64| / (1 + |f64|) = ");
  bt_test::print_double(worst);
  bt_test::print("\n");
  // The oracle's own inputs are not degenerate: the gradients carry signal.
  BT_CHECK(t, std::fabs(want.dc) > 1e-3);
}

// Four input sets per graph: labels A1..A4 and B1..B4.
constexpr std::uint32_t kSeeds[4] = {12345U, 2024U, 4099U, 31337U};

void arithmetic_graph(bt_test::Context& t) {
  int active = 0;
  for (std::size_t k = 0U; k < 4U; ++k) {
    Inputs in{};
    make_inputs(in, kSeeds[k], 1.0);
    Results got{};
    Results want{};
    graph_a_tape(in, got);
    graph_a_oracle(in, want);
    BT_CHECK(t, g_tape.status() == bt::Status::kOk);
    for (double z : want.z) {
      active += (z > 0.0) ? 1 : 0;
    }
    const char label[3] = {'A', static_cast<char>('1' + k), '\0'};
    compare(t, label, got, want);
  }
  // relu is active on some units and not on others: both branches count.
  BT_CHECK(t, (active > 2) && (active < static_cast<int>(4U * kHidden) - 2));
}

void libm_graph(bt_test::Context& t) {
  for (std::size_t k = 0U; k < 4U; ++k) {
    Inputs in{};
    make_inputs(in, kSeeds[k] + 1U, 0.5);
    Results got{};
    Results want{};
    graph_b_tape(in, got);
    graph_b_oracle(in, want);
    BT_CHECK(t, g_tape.status() == bt::Status::kOk);
    const char label[3] = {'B', static_cast<char>('1' + k), '\0'};
    compare(t, label, got, want);
  }
}

// --- C: each libm-backed op alone, value and derivative at 32 points ----------
struct UnaryCase {
  const char* name;
  bt::Value<float> (*op)(bt::Value<float>);
  double (*f)(double);
  double (*df)(double);
  double lo;
  double hi;
};

double sigmoid64(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double dtanh64(double x) { return 1.0 - (std::tanh(x) * std::tanh(x)); }
double dexp64(double x) { return std::exp(x); }
double dlog64(double x) { return 1.0 / x; }
double dsigmoid64(double x) { return sigmoid64(x) * (1.0 - sigmoid64(x)); }
double sqrt64(double x) { return std::sqrt(x); }
double dsqrt64(double x) { return 0.5 / std::sqrt(x); }
double inv_sqrt64(double x) { return 1.0 / std::sqrt(x); }
double dinv_sqrt64(double x) { return -0.5 / (x * std::sqrt(x)); }
double tanh64(double x) { return std::tanh(x); }
double exp64(double x) { return std::exp(x); }
double log64(double x) { return std::log(x); }
bt::Value<float> tanh32(bt::Value<float> x) { return bt::tanh(x); }
bt::Value<float> exp32(bt::Value<float> x) { return bt::exp(x); }
bt::Value<float> log32(bt::Value<float> x) { return bt::log(x); }
bt::Value<float> sigmoid32(bt::Value<float> x) { return bt::sigmoid(x); }
bt::Value<float> sqrt32(bt::Value<float> x) { return bt::sqrt(x); }
bt::Value<float> inv_sqrt32(bt::Value<float> x) { return bt::inv_sqrt(x); }

const UnaryCase kUnary[] = {
    {"tanh", tanh32, tanh64, dtanh64, -6.0, 6.0},
    {"exp", exp32, exp64, dexp64, -8.0, 6.0},
    {"log", log32, log64, dlog64, 0.05, 20.0},
    {"sigmoid", sigmoid32, sigmoid64, dsigmoid64, -10.0, 10.0},
    {"sqrt", sqrt32, sqrt64, dsqrt64, 0.05, 20.0},
    {"inv_sqrt", inv_sqrt32, inv_sqrt64, dinv_sqrt64, 0.05, 20.0},
};

void libm_sweep(bt_test::Context& t) {
  constexpr std::size_t kPoints = 32U;
  for (const UnaryCase& u : kUnary) {
    double got_value[kPoints];
    double got_grad[kPoints];
    double worst = 0.0;
    for (std::size_t i = 0U; i < kPoints; ++i) {
      // The input is rounded to float first; the oracle starts from it.
      const float xf = static_cast<float>(u.lo + ((u.hi - u.lo) * static_cast<double>(i) / (kPoints - 1U)));
      const double x = static_cast<double>(xf);
      g_tape.reset();
      auto leaf = g_tape.leaf(xf);
      auto y = u.op(leaf);
      BT_CHECK(t, g_tape.backward(y) == bt::Status::kOk);
      got_value[i] = static_cast<double>(y.value());
      got_grad[i] = static_cast<double>(leaf.grad());
      BT_CHECK_CLOSE(t, got_value[i], u.f(x), kRel, kAbs);
      BT_CHECK_CLOSE(t, got_grad[i], u.df(x), kRel, kAbs);
      const double e1 = std::fabs(got_value[i] - u.f(x)) / (1.0 + std::fabs(u.f(x)));
      const double e2 = std::fabs(got_grad[i] - u.df(x)) / (1.0 + std::fabs(u.df(x)));
      worst = (e1 > worst) ? e1 : worst;
      worst = (e2 > worst) ? e2 : worst;
    }
    char label[16] = "C.";
    std::strncat(label, u.name, sizeof(label) - 3U);
    dump(label, "f", got_value, kPoints);
    dump(label, "df", got_grad, kPoints);
    bt_test::print("  ");
    bt_test::print(label);
    bt_test::print(": max |f32 - f64| / (1 + |f64|) = ");
    bt_test::print_double(worst);
    bt_test::print("\n");
  }
}

const bt_test::TestCase kCases[] = {
    {"arithmetic_graph", arithmetic_graph},
    {"libm_graph", libm_graph},
    {"libm_sweep", libm_sweep},
};

}  // namespace

BT_TEST_MAIN("fp32_agreement", kCases)

// SPDX-License-Identifier: Apache-2.0
// PyTorch golden data: random expression graphs over every op of the core,
// generated with their PyTorch float64 values and gradients by
// tools/golden/core/gen_core_golden.py into tests/golden/core_golden.hpp.
// Each graph's instruction program is replayed on a burtorch tape; the root
// value and every leaf gradient must match PyTorch.
//
// Tolerances, as |got - want| <= tol * max(1, |want|):
//   FP64  1e-12. The generator keeps only graphs whose float32 evaluation in
//         PyTorch stays within 1e-5 of float64, i.e. graphs that amplify
//         rounding errors by at most ~170 unit roundoffs; in FP64 that is
//         ~4e-14, so 1e-12 leaves room for a different summation order but
//         not for a wrong formula.
//   FP32  1e-4. Leaves and constants are rounded to float and every op runs
//         in float (unit roundoff 6e-8). PyTorch's own float32 run of each
//         kept graph is within 1e-5, so 1e-4 is a tenfold margin for our
//         different (unrolled) summation order; a wrong derivative misses
//         it by orders of magnitude.
// BURTORCH_TEST_SMALL_TARGET=1 (tiny MCUs) compiles only the first graphs;
// they still cover every instruction code.
#include <burtorch/burtorch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "golden/core_golden.hpp"
#include "harness.hpp"

namespace bt = burtorch;
namespace gc = golden_core;

namespace {

constexpr std::size_t kGraphCount = sizeof(gc::kGraphs) / sizeof(gc::kGraphs[0]);
// Nodes recorded before the graphs in the rewind variant.
constexpr std::size_t kPrefixNodes = 6U;

struct Stats {
  double max_error = 0.0;  // max |got - want| / max(1, |want|)
  long instructions = 0;
  long range_nodes = 0;    // reductions stored as (first, n)
  long list_nodes = 0;     // reductions stored as a list of slots
  long dot_rr = 0;
  long dot_rl = 0;
  long dot_ll = 0;
  long code_uses[gc::kCodeCount] = {};
};

void print_graph_context(std::size_t graph, const char* what, long index) {
  bt_test::print("    graph ");
  bt_test::print_int(static_cast<long>(graph));
  bt_test::print(", ");
  bt_test::print(what);
  if (index >= 0) {
    bt_test::print(" ");
    bt_test::print_int(index);
  }
  bt_test::print("\n");
}

// |got - want| <= tol * max(1, |want|), with the numbers printed on failure.
void check_close(bt_test::Context& t, Stats& s, double got, double want, double tol, std::size_t graph,
                 const char* what, long index) {
  const double scale = std::fmax(1.0, std::fabs(want));
  const double error = std::fabs(got - want) / scale;
  const bool ok = error <= tol;  // false for NaN
  if (!(error <= s.max_error)) {
    s.max_error = error;
  }
  bt_test::record(t, ok, "|got - want| <= tol * max(1, |want|)", __FILE__, __LINE__);
  if (!ok) {
    print_graph_context(graph, what, index);
    bt_test::print("    got ");
    bt_test::print_double(got);
    bt_test::print(", expected ");
    bt_test::print_double(want);
    bt_test::print("\n");
  }
}

enum class Kind { kSource, kUnary, kBinary, kConstant, kReduce, kDot };

Kind kind_of(gc::Code code) {
  switch (code) {
    case gc::kLeaf:
      return Kind::kSource;
    case gc::kAdd:
    case gc::kSub:
    case gc::kMul:
    case gc::kDiv:
    case gc::kAddAssign:
    case gc::kSubAssign:
    case gc::kMulAssign:
    case gc::kDivAssign:
    case gc::kMean2:
    case gc::kAddSquares:
    case gc::kMeanSquares:
    case gc::kNegativeMean:
      return Kind::kBinary;
    case gc::kAddC:
    case gc::kCAdd:
    case gc::kSubC:
    case gc::kCSub:
    case gc::kMulC:
    case gc::kCMul:
    case gc::kDivC:
    case gc::kCDiv:
    case gc::kAddAssignC:
    case gc::kSubAssignC:
    case gc::kMulAssignC:
    case gc::kDivAssignC:
    case gc::kMulByConst:
      return Kind::kConstant;
    case gc::kReduceSum:
    case gc::kReduceSub:
    case gc::kReduceMul:
    case gc::kReduceMean:
    case gc::kReduceSumOfSquares:
    case gc::kReduceMeanSquares:
    case gc::kReduceNegativeMean:
    case gc::kVariance:
    case gc::kVarianceBiased:
    case gc::kReduceMeanAndMeanSquares:
      return Kind::kReduce;
    case gc::kInnerProduct:
    case gc::kInnerProductWithBias:
      return Kind::kDot;
    default:
      return Kind::kUnary;
  }
}

bt::Op range_op_of(gc::Code code) {
  switch (code) {
    case gc::kReduceSum:
      return bt::Op::kSumR;
    case gc::kReduceSub:
      return bt::Op::kSubR;
    case gc::kReduceMul:
      return bt::Op::kProdR;
    case gc::kReduceMean:
      return bt::Op::kMeanR;
    case gc::kReduceSumOfSquares:
      return bt::Op::kSumSqR;
    case gc::kReduceMeanSquares:
      return bt::Op::kMeanSqR;
    case gc::kReduceNegativeMean:
      return bt::Op::kNegMeanR;
    case gc::kVariance:
      return bt::Op::kVarR;
    case gc::kVarianceBiased:
      return bt::Op::kVarBiasedR;
    default:
      return bt::Op::kCount;
  }
}

bt::Op list_op_of(bt::Op range_op) {
  return static_cast<bt::Op>(static_cast<std::uint8_t>(static_cast<std::uint8_t>(range_op) + 1U));
}

template <class T>
bool consecutive(const bt::Value<T>* xs, std::size_t n) {
  for (std::size_t i = 0U; i < n; ++i) {
    if (xs[i].index() != (xs[0].index() + static_cast<bt::Index>(i))) {
      return false;
    }
  }
  return true;
}

// Checks that a reduction node chose the range form exactly when its
// operands were consecutive nodes (O(1) metadata) and the list form otherwise.
template <class T>
void check_reduction_form(bt_test::Context& t, Stats& s, const bt::Tape<T>& tape, bt::Value<T> node,
                          bt::Op range_op, const bt::Value<T>* xs, std::size_t n) {
  const bool range = consecutive(xs, n);
  const bt::Op want = range ? range_op : list_op_of(range_op);
  BT_CHECK(t, bt::node_op(tape, node.index()) == want);
  if (range) {
    ++s.range_nodes;
  } else {
    ++s.list_nodes;
  }
}

template <class T>
void check_dot_form(bt_test::Context& t, Stats& s, const bt::Tape<T>& tape, bt::Value<T> node,
                    const bt::Value<T>* w, const bt::Value<T>* x, std::size_t n) {
  const bool wr = consecutive(w, n);
  const bool xr = consecutive(x, n);
  bt::Op want = bt::Op::kDotLL;
  if (wr && xr) {
    want = bt::Op::kDotRR;
    ++s.dot_rr;
  } else if (wr || xr) {
    want = bt::Op::kDotRL;  // a list-range pair is stored range first
    ++s.dot_rl;
  } else {
    ++s.dot_ll;
  }
  BT_CHECK(t, bt::node_op(tape, node.index()) == want);
}

// Replays graph k on `tape` (which may already hold older nodes), runs
// backward `backwards` times and compares with PyTorch: leaf gradients
// accumulate, so they must equal `backwards` times PyTorch's. Returns false
// if the graph could not run.
template <class T>
bool run_graph(bt_test::Context& t, Stats& s, bt::Tape<T>& tape, std::size_t k, double tol, int backwards) {
  const gc::Graph& g = gc::kGraphs[k];
  static bt::Value<T> reg[gc::kMaxRegisters];
  static bt::Value<T> leaf[gc::kMaxRegisters];
  static bt::Value<T> xs[gc::kMaxArity + 1U];
  static bt::Value<T> ys[gc::kMaxArity + 1U];
  std::size_t next = 0U;
  std::size_t leaves = 0U;
  for (std::size_t p = 0U; p < g.instructions; ++p) {
    const gc::Instr& ins = g.program[p];
    ++s.instructions;
    ++s.code_uses[ins.op];
    const std::size_t n = ins.n;
    // Operands must already exist (a malformed header fails here, not
    // out of bounds).
    const Kind kind = kind_of(ins.op);
    bool well_formed = (ins.op < gc::kCodeCount) && (next < gc::kMaxRegisters) && (n <= gc::kMaxArity);
    bt::Value<T> x;
    bt::Value<T> y;
    T c = T(0);
    if (kind == Kind::kSource) {
      well_formed = well_formed && (ins.a == leaves) && (ins.a < g.leaf_count);
    } else if ((kind == Kind::kReduce) || (kind == Kind::kDot)) {
      const bool bias = ins.op == gc::kInnerProductWithBias;
      const std::size_t last = (kind == Kind::kDot) ? (static_cast<std::size_t>(ins.b) + n + (bias ? 1U : 0U))
                                                    : (static_cast<std::size_t>(ins.a) + n);
      well_formed = well_formed && (n > 0U) && (g.operands != nullptr) && (last <= g.operand_count) &&
                    ((static_cast<std::size_t>(ins.a) + n) <= g.operand_count);
      for (std::size_t i = 0U; well_formed && (i < n + (bias ? 1U : 0U)); ++i) {
        const std::uint16_t ra = (bias && (i == n)) ? g.operands[ins.b + n] : g.operands[ins.a + i];
        const std::uint16_t rb = (kind == Kind::kDot) ? g.operands[ins.b + i] : std::uint16_t{0};
        well_formed = (ra < next) && (rb < next);
        if (well_formed) {
          xs[i] = reg[ra];
          ys[i] = reg[rb];
        }
      }
    } else {
      well_formed = well_formed && (ins.a < next);
      if (well_formed) {
        x = reg[ins.a];
      }
      if (kind == Kind::kBinary) {
        well_formed = well_formed && (ins.b < next);
        if (well_formed) {
          y = reg[ins.b];
        }
      } else if (kind == Kind::kConstant) {
        well_formed = well_formed && (g.constants != nullptr) && (ins.b < g.constant_count);
        if (well_formed) {
          c = static_cast<T>(g.constants[ins.b]);
        }
      }
    }
    if (!well_formed) {
      BT_CHECK(t, well_formed);
      print_graph_context(k, "malformed instruction", static_cast<long>(p));
      return false;
    }
    bt::Value<T> out;
    switch (ins.op) {
      case gc::kLeaf:
        out = tape.leaf(static_cast<T>(g.leaves[ins.a]));
        leaf[leaves++] = out;
        break;
      case gc::kAdd:
        out = x + y;
        break;
      case gc::kSub:
        out = x - y;
        break;
      case gc::kMul:
        out = x * y;
        break;
      case gc::kDiv:
        out = x / y;
        break;
      case gc::kAddC:
        out = x + c;
        break;
      case gc::kCAdd:
        out = c + x;
        break;
      case gc::kSubC:
        out = x - c;
        break;
      case gc::kCSub:
        out = c - x;
        break;
      case gc::kMulC:
        out = x * c;
        break;
      case gc::kCMul:
        out = c * x;
        break;
      case gc::kDivC:
        out = x / c;
        break;
      case gc::kCDiv:
        out = c / x;
        break;
      case gc::kNeg:
        out = -x;
        break;
      case gc::kAddAssign:
        out = x;
        out += y;
        break;
      case gc::kSubAssign:
        out = x;
        out -= y;
        break;
      case gc::kMulAssign:
        out = x;
        out *= y;
        break;
      case gc::kDivAssign:
        out = x;
        out /= y;
        break;
      case gc::kAddAssignC:
        out = x;
        out += c;
        break;
      case gc::kSubAssignC:
        out = x;
        out -= c;
        break;
      case gc::kMulAssignC:
        out = x;
        out *= c;
        break;
      case gc::kDivAssignC:
        out = x;
        out /= c;
        break;
      case gc::kRelu:
        out = bt::relu(x);
        break;
      case gc::kTanh:
        out = bt::tanh(x);
        break;
      case gc::kExp:
        out = bt::exp(x);
        break;
      case gc::kLog:
        out = bt::log(x);
        break;
      case gc::kNegLog:
        out = bt::neg_log(x);
        break;
      case gc::kSigmoid:
        out = bt::sigmoid(x);
        break;
      case gc::kInv:
        out = bt::inv(x);
        break;
      case gc::kSqr:
        out = bt::sqr(x);
        break;
      case gc::kPow3:
        out = bt::pow3(x);
        break;
      case gc::kSqrt:
        out = bt::sqrt(x);
        break;
      case gc::kInvSqrt:
        out = bt::inv_sqrt(x);
        break;
      case gc::kMulByConst:
        out = bt::mul_by_const(x, c);
        break;
      case gc::kMean2:
        out = bt::mean(x, y);
        break;
      case gc::kAddSquares:
        out = bt::add_squares(x, y);
        break;
      case gc::kMeanSquares:
        out = bt::mean_squares(x, y);
        break;
      case gc::kNegativeMean:
        out = bt::negative_mean(x, y);
        break;
      case gc::kReduceSum:
        out = bt::reduce_sum(xs, n);
        break;
      case gc::kReduceSub:
        out = bt::reduce_sub(xs, n);
        break;
      case gc::kReduceMul:
        out = bt::reduce_mul(xs, n);
        break;
      case gc::kReduceMean:
        out = bt::reduce_mean(xs, n);
        break;
      case gc::kReduceSumOfSquares:
        out = bt::reduce_sum_of_squares(xs, n);
        break;
      case gc::kReduceMeanSquares:
        out = bt::reduce_mean_squares(xs, n);
        break;
      case gc::kReduceNegativeMean:
        out = bt::reduce_negative_mean(xs, n);
        break;
      case gc::kVariance:
        out = bt::variance(xs, n);
        break;
      case gc::kVarianceBiased:
        out = bt::variance_biased(xs, n);
        break;
      case gc::kReduceMeanAndMeanSquares: {
        const bt::MeanAndMeanSquares<T> m = bt::reduce_mean_and_mean_squares(xs, n);
        check_reduction_form(t, s, tape, m.mean, bt::Op::kMeanR, xs, n);
        check_reduction_form(t, s, tape, m.mean_squares, bt::Op::kMeanSqR, xs, n);
        reg[next++] = m.mean;
        out = m.mean_squares;
        break;
      }
      case gc::kInnerProduct:
        out = bt::inner_product(xs, ys, n);
        check_dot_form(t, s, tape, out, xs, ys, n);
        break;
      case gc::kInnerProductWithBias:
        out = bt::inner_product_with_bias(xs, ys, n, xs[n]);
        check_dot_form(t, s, tape, out, xs, ys, n);
        break;
      default:
        BT_CHECK(t, ins.op < gc::kCodeCount);
        print_graph_context(k, "unknown instruction", static_cast<long>(p));
        return false;
    }
    const bt::Op range_op = range_op_of(ins.op);
    if (range_op != bt::Op::kCount) {
      check_reduction_form(t, s, tape, out, range_op, xs, n);
    }
    if (next >= gc::kMaxRegisters) {
      BT_CHECK(t, next < gc::kMaxRegisters);
      return false;
    }
    reg[next++] = out;
  }

  BT_CHECK(t, tape.status() == bt::Status::kOk);
  BT_CHECK(t, next == g.registers);
  BT_CHECK(t, leaves == g.leaf_count);
  if ((tape.status() != bt::Status::kOk) || (next != g.registers) || (leaves != g.leaf_count) || (next == 0U)) {
    print_graph_context(k, "did not record as expected", -1);
    return false;
  }
  const bt::Value<T> root = reg[next - 1U];
  for (int i = 0; i < backwards; ++i) {
    BT_CHECK(t, tape.backward(root) == bt::Status::kOk);
  }
  check_close(t, s, static_cast<double>(root.value()), g.root, tol, k, "root value", -1);
  for (std::size_t i = 0U; i < leaves; ++i) {
    check_close(t, s, static_cast<double>(leaf[i].grad()), static_cast<double>(backwards) * g.leaf_grads[i], tol,
                k, "gradient of leaf", static_cast<long>(i));
  }
  return true;
}

void report(const char* label, const Stats& s) {
  bt_test::print("  ");
  bt_test::print(label);
  bt_test::print(": ");
  bt_test::print_int(static_cast<long>(kGraphCount));
  bt_test::print(" graphs, ");
  bt_test::print_int(s.instructions);
  bt_test::print(" instructions, max |got-want|/max(1,|want|) = ");
  bt_test::print_double(s.max_error);
  bt_test::print("\n");
}

// Every instruction code and both storage forms of reductions and inner
// products were exercised (so a regenerated header cannot silently lose
// coverage).
void check_coverage(bt_test::Context& t, const Stats& s) {
  for (std::size_t c = 0U; c < static_cast<std::size_t>(gc::kCodeCount); ++c) {
    BT_CHECK(t, s.code_uses[c] > 0);
  }
  BT_CHECK(t, s.range_nodes > 0);
  BT_CHECK(t, s.list_nodes > 0);
  BT_CHECK(t, s.dot_rr > 0);
  BT_CHECK(t, s.dot_rl > 0);
  BT_CHECK(t, s.dot_ll > 0);
}

template <class T>
void all_graphs(bt_test::Context& t, const char* label, double tol) {
  static bt::FixedTape<T, gc::kMaxRegisters, gc::kMaxSlots> tape;
  Stats s;
  for (std::size_t k = 0U; k < kGraphCount; ++k) {
    tape.reset();
    static_cast<void>(run_graph(t, s, tape, k, tol, 1));
  }
  check_coverage(t, s);
  report(label, s);
}

void fp64_golden(bt_test::Context& t) { all_graphs<double>(t, "FP64", 1e-12); }
void fp32_golden(bt_test::Context& t) { all_graphs<float>(t, "FP32", 1e-4); }

// The same graphs recorded after a prefix of unrelated leaves and interior
// nodes, one after another with mark/rewind: node indices no longer equal
// register numbers, older interior nodes sit below every graph, and the
// prefix must keep its values and (zero) gradients. Each graph runs
// backward twice: leaf gradients accumulate to exactly twice PyTorch's
// (interior ones must not).
void fp64_golden_after_prefix_with_rewind(bt_test::Context& t) {
  static bt::FixedTape<double, gc::kMaxRegisters + kPrefixNodes, gc::kMaxSlots + 8U> tape;
  tape.reset();
  bt::Value<double> prefix[2];
  prefix[0] = tape.leaf(0.75);
  prefix[1] = tape.leaf(-1.5);
  const bt::Value<double> q = bt::tanh(prefix[0] * prefix[1]);
  const bt::Value<double> r = bt::reduce_sum(prefix, 2U);  // a range over the prefix
  const bt::Value<double> u = q + r;
  BT_CHECK(t, tape.size() <= kPrefixNodes);
  const bt::Mark m = tape.mark();
  Stats s;
  for (std::size_t k = 0U; k < kGraphCount; ++k) {
    static_cast<void>(run_graph(t, s, tape, k, 1e-12, 2));
    BT_CHECK(t, tape.rewind(m) == bt::Status::kOk);
    BT_CHECK(t, prefix[0].grad() == 0.0);
    BT_CHECK(t, prefix[1].grad() == 0.0);
  }
  BT_CHECK(t, tape.size() == static_cast<std::size_t>(m.nodes));
  BT_CHECK(t, prefix[0].value() == 0.75);
  BT_CHECK(t, u.value() == std::tanh(0.75 * -1.5) + (0.75 + -1.5));
  check_coverage(t, s);
  report("FP64 after prefix", s);
}

const bt_test::TestCase kCases[] = {
    {"fp64_golden", fp64_golden},
    {"fp32_golden", fp32_golden},
    {"fp64_golden_after_prefix_with_rewind", fp64_golden_after_prefix_with_rewind},
};

}  // namespace

BT_TEST_MAIN("golden", kCases)

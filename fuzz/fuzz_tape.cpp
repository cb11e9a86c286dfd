// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the tape's public API (clang -fsanitize=fuzzer,
// address,undefined; built and run by tools/check.d/47-fuzz-tape.sh).
//
// The input's bytes are a program: the scalar type (float or double), two
// tapes (each on a tiny, exact-size, larger, misaligned or null caller buffer
// with guard bytes around it), then a list of calls: leaves and parameters,
// every operator and function of core/ops.hpp (with values and plain numbers),
// reductions, inner products and log-sum-exp over range operands
// (consecutive nodes) and list operands, view lists (view_list,
// inner_product_views, dot_views, matvec, dot_ranges, scale_shift),
// marks and rewinds (valid, stale, of the other tape, hand-made), backward
// from any handle, zero_grad of all or a range, reset and clear_status, and
// bytes_required / the constructor at the limits of size_t and Index.
// Operands come from either tape, from earlier results (possibly discarded
// by a rewind), from out-of-range indices, or are default (empty) handles.
//
// A model of each tape predicts every call's outcome. After every call the
// target traps (abort -> crash report, "invariant broken [tag]") unless:
//  * no byte outside the caller's buffer changed (guard bytes; ASan also
//    poisons them);
//  * the status is sticky; a call that must fail fails with one of the
//    statuses the misuse allows, returns an invalid handle and adds no node
//    and no slot; a call that must succeed adds exactly the predicted nodes
//    and slots; size() and slots_used() change only so, or by rewind/reset;
//  * rewind accepts exactly the marks the model knows to be valid (stale
//    marks, marks of the other tape and hand-made marks are rejected and
//    change nothing);
//  * every node reads back, through the public accessors (op, arg_a, arg_b,
//    slot, constant), as the operation that was asked for, with operands
//    older than itself; its value agrees with an independent evaluation;
//    no call changes a recorded value or (except backward and zero_grad) a
//    gradient;
//  * after backward(root), the gradients agree with an independent
//    reverse-mode evaluation of the graph the root reaches, re-derived from
//    the public accessors; nodes the root does not reach get nothing (an
//    interior one holds 0, a leaf keeps its gradient).
//
// FUZZ_TAPE_SKIP (comma-separated) turns features off, to measure how fast
// one class of defect is found: stale-mark, reset-mark, foreign-mark, handmade-mark,
// empty, null, nonfinite, reduce-op, gradient, interior-name, zero-run.
#include <burtorch/tools/inspect.hpp>
#include <burtorch/core/ops.hpp>
#include <burtorch/core/tape.hpp>
#include <burtorch/core/views.hpp>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#if defined(__has_include)
#if __has_include(<sanitizer/asan_interface.h>)
#include <sanitizer/asan_interface.h>
#endif
#endif
#ifndef ASAN_POISON_MEMORY_REGION
#define ASAN_POISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#endif

namespace bt = burtorch;
using bt::Index;
using bt::Op;
using bt::Status;
using bt::Value;
using Wide = long double;

namespace {

constexpr Index kNo = bt::kNoIndex;
constexpr Index kMaxNodes = 64U;   // gradients are checked on every graph
constexpr Index kMaxSlots = 192U;
constexpr Index kMaxList = 64U;    // operands of one node (a row of matvec)
constexpr std::size_t kArena = 4096U;
constexpr std::size_t kLeft = 128U;  // guard bytes before the buffer
constexpr unsigned char kGuard = 0xA5U;
constexpr int kNone = -1;

// --- features (FUZZ_TAPE_SKIP) ----------------------------------------------
enum Feature : unsigned {
  kFStaleMark = 1U,
  kFForeignMark = 2U,
  kFHandmadeMark = 4U,
  kFEmpty = 8U,
  kFNull = 16U,
  kFNonfinite = 32U,
  kFReduceOp = 64U,
  kFGradient = 128U,
  kFName = 256U,
  kFResetMark = 512U,
  kFZeroRun = 1024U,
};
unsigned g_skip = 0U;
bool g_trace = false;  // FUZZ_TAPE_TRACE: print each call (reading a seed or a crash)
bool on(unsigned f) { return (g_skip & f) == 0U; }

[[noreturn]] void broken(const char* tag, const char* format, ...) {
  std::fprintf(stderr, "fuzz_tape: invariant broken [%s]: ", tag);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::abort();
}

constexpr std::uint32_t bit(Status s) { return 1U << static_cast<unsigned>(s); }
constexpr std::uint32_t kCap = bit(Status::kCapacityExceeded);
constexpr std::uint32_t kForeign = bit(Status::kForeignValue);
constexpr std::uint32_t kInvHandle = bit(Status::kInvalidHandle);
constexpr std::uint32_t kInvArg = bit(Status::kInvalidArgument);
constexpr std::uint32_t kEmpty = bit(Status::kEmptyHandle);
constexpr Index kMarkLevels = bt::kMarkLevels;
constexpr std::size_t kTooLarge = bt::kTooLarge;
static_assert(bt::kTooLarge == kTooLarge, "one sentinel");

// --- input ----------------------------------------------------------------------
struct Input {
  const std::uint8_t* data;
  std::size_t size;
  std::size_t at;
  std::uint8_t u8() { return (at < size) ? data[at++] : 0U; }
  bool more() const { return at < size; }
};

// --- guarded caller buffers -------------------------------------------------------
struct Guarded {
  alignas(64) unsigned char arena[kArena];
  std::size_t offset = 0U;
  std::size_t bytes = 0U;
  void arm(std::size_t off, std::size_t size) {
    ASAN_UNPOISON_MEMORY_REGION(arena, kArena);
    offset = off;
    bytes = size;
    std::memset(arena, kGuard, kArena);
    std::memset(&arena[off], 0x5A, size);  // stale garbage the tape must not trust
    poison();
  }
  void poison() {
    ASAN_POISON_MEMORY_REGION(arena, offset & ~static_cast<std::size_t>(7U));
    ASAN_POISON_MEMORY_REGION(&arena[offset + bytes], kArena - offset - bytes);
  }
  void check(int side, const char* after) {
    static unsigned char reference[kArena];
    if (reference[0] != kGuard) {
      std::memset(reference, kGuard, kArena);
    }
    ASAN_UNPOISON_MEMORY_REGION(arena, kArena);
    const std::size_t end = offset + bytes;
    if ((std::memcmp(arena, reference, offset) != 0) || (std::memcmp(&arena[end], reference, kArena - end) != 0)) {
      for (std::size_t i = 0U; i < kArena; ++i) {
        if (((i < offset) || (i >= end)) && (arena[i] != kGuard)) {
          broken("guard", "tape %d: byte %zd relative to its %zu-byte buffer changed after %s", side,
                 static_cast<std::ptrdiff_t>(i) - static_cast<std::ptrdiff_t>(offset), bytes, after);
        }
      }
    }
    poison();
  }
};
Guarded g_mem[3];  // the two tapes, and a scratch buffer for layouts that must be refused

// --- a node as the operation it computes ------------------------------------------
enum class Kind : std::uint8_t { kLeaf, kUnary, kBinary, kReduce, kLse, kDot };

struct Node {
  Op op = Op::kLeaf;
  Kind kind = Kind::kLeaf;
  Index a = kNo;  // unary / binary operands
  Index b = kNo;
  Wide c = 0;          // the plain number of a unary op with a constant
  bool has_c = false;  // c known (the model always; decoded: kMulConst/kDivConst)
  Op reduce_op = Op::kLeaf;  // R variant of a reduction
  Index nx = 0U;
  Index nw = 0U;
  Index xs[kMaxList];
  Index ws[kMaxList];
  Index bias = kNo;
  bool symmetric = false;  // inner product: w and x may be stored swapped
  const char* name = nullptr;
};

bool is_binary(Op op) { return (op >= Op::kAdd) && (op <= Op::kNegMean2); }
bool is_unary(Op op) { return ((op >= Op::kNeg) && (op <= Op::kInvSqrt)) || (op == Op::kMulConst) || (op == Op::kDivConst); }

struct ReducePair {
  Op r;
  Op l;
};
const ReducePair kReductions[] = {
    {Op::kSumR, Op::kSumL},       {Op::kSubR, Op::kSubL},         {Op::kProdR, Op::kProdL},
    {Op::kMeanR, Op::kMeanL},     {Op::kSumSqR, Op::kSumSqL},     {Op::kMeanSqR, Op::kMeanSqL},
    {Op::kNegMeanR, Op::kNegMeanL}, {Op::kVarR, Op::kVarL},       {Op::kVarBiasedR, Op::kVarBiasedL},
};
bool is_range_reduction(Op op) {
  for (const ReducePair& p : kReductions) {
    if (p.r == op) {
      return true;
    }
  }
  return false;
}
Op range_of(Op op, bool* found) {
  for (const ReducePair& p : kReductions) {
    if ((p.r == op) || (p.l == op)) {
      *found = true;
      return p.r;
    }
  }
  *found = false;
  return op;
}

// Reads node i back through the public accessors only. Returns nullptr if it
// is well formed (operands recorded before it), else what is wrong.
template <class T>
const char* decode(const bt::Tape<T>& tape, Index i, Node* out) {
  Node& n = *out;
  n = Node();
  n.op = bt::node_op(tape, i);
  n.name = bt::param_name(tape, i);
  const Index a = bt::node_operands(tape, i).a;
  const Index b = bt::node_operands(tape, i).b;
  auto slot = [&tape](Index k) { return bt::slot_at(tape, k); };
  auto run = [i](Index* list, Index* count, Index first, Index len) -> const char* {
    if ((first >= i) || (len > (i - first))) {
      return "operand run not older than the node";
    }
    if (len > (kMaxList - *count)) {
      return "operand list too long";
    }
    for (Index k = 0U; k < len; ++k) {
      list[(*count)++] = first + k;
    }
    return nullptr;
  };
  auto older = [i](Index k) { return k < i; };
  bool reduction = false;
  const Op r = range_of(n.op, &reduction);
  if ((n.op == Op::kLeaf) || (n.op == Op::kInput)) {  // kInput: a reduction's value of nothing
    n.kind = Kind::kLeaf;
    return nullptr;
  }
  if (is_binary(n.op)) {
    n.kind = Kind::kBinary;
    n.a = a;
    n.b = b;
    return (older(a) && older(b)) ? nullptr : "binary operand not older than the node";
  }
  if (is_unary(n.op)) {
    n.kind = Kind::kUnary;
    n.a = a;
    if ((n.op == Op::kMulConst) || (n.op == Op::kDivConst)) {
      n.c = static_cast<Wide>(bt::node_constant(tape, i));
      n.has_c = true;
    }
    return older(a) ? nullptr : "unary operand not older than the node";
  }
  if (reduction || (n.op == Op::kLogSumExpR) || (n.op == Op::kLogSumExpL)) {
    n.kind = reduction ? Kind::kReduce : Kind::kLse;
    n.reduce_op = r;
    const bool range = reduction ? (n.op == r) : (n.op == Op::kLogSumExpR);
    if ((b == 0U) || (b > kMaxList)) {
      return "bad operand count";
    }
    if (range) {
      return run(n.xs, &n.nx, a, b);
    }
    for (Index k = 0U; k < b; ++k) {
      const Index x = slot(a + k);
      if (!older(x) || ((a + k) < a)) {
        return "list operand not older than the node";
      }
      n.xs[n.nx++] = x;
    }
    return nullptr;
  }
  n.kind = Kind::kDot;
  const char* why = nullptr;
  if ((n.op == Op::kDotRR) || (n.op == Op::kDotRL) || (n.op == Op::kDotLL)) {
    n.symmetric = true;
    if ((b == 0U) || (b > kMaxList)) {
      return "bad inner product length";
    }
    const Index w = slot(a);
    const Index x = slot(a + 1U);
    n.bias = slot(a + 2U);
    if (n.op == Op::kDotLL) {
      for (Index k = 0U; k < b; ++k) {
        n.ws[n.nw++] = slot(w + k);
        if (!older(n.ws[k])) {
          return "list operand not older than the node";
        }
      }
    } else {
      why = run(n.ws, &n.nw, w, b);
    }
    if (n.op == Op::kDotRR) {
      why = (why != nullptr) ? why : run(n.xs, &n.nx, x, b);
    } else {
      for (Index k = 0U; k < b; ++k) {
        n.xs[n.nx++] = slot(x + k);
        if (!older(n.xs[k])) {
          return "list operand not older than the node";
        }
      }
    }
  } else if ((n.op == Op::kDotRV) || (n.op == Op::kMatRow)) {
    const Index w = slot(a);
    const Index list = slot(a + 1U);
    Index length = b;
    Index first_w = w;
    if (n.op == Op::kMatRow) {
      const Index bias_first = slot(a + 2U);
      length = slot(a + 3U);
      if ((length == 0U) || (length > kMaxList)) {
        return "bad row length";
      }
      first_w = w + (b * length);
      if ((static_cast<std::uint64_t>(w) + (static_cast<std::uint64_t>(b) * length)) >= i) {
        return "row weights not older than the node";
      }
      n.bias = (bias_first == kNo) ? kNo : (bias_first + b);
    } else {
      n.bias = slot(a + 2U);
    }
    if ((length == 0U) || (length > kMaxList)) {
      return "bad inner product length";
    }
    why = run(n.ws, &n.nw, first_w, length);
    const Index runs = (slot(list) == kNo) ? kNo : (slot(list) & ~bt::detail::kListOfInputs);  // the inputs flag aside
    if ((why == nullptr) && ((runs == 0U) || (runs > kMaxList))) {
      why = "bad view list";
    }
    for (Index k = 0U; (why == nullptr) && (k < runs); ++k) {
      why = run(n.xs, &n.nx, slot(list + 1U + (2U * k)), slot(list + 2U + (2U * k)));
    }
    if ((why == nullptr) && (n.nx != length)) {
      why = "view list length differs from the weights";
    }
  } else if (n.op == Op::kScaleShift) {
    const Index scale = slot(a) + b;
    const Index x = slot(a + 1U) + b;
    const Index shift = slot(a + 2U) + b;
    n.ws[n.nw++] = scale;
    n.xs[n.nx++] = x;
    n.bias = shift;
    if (!older(scale) || !older(x) || !older(shift)) {
      why = "scale/shift operand not older than the node";
    }
  } else {
    return "unknown op code";
  }
  if ((why == nullptr) && (n.bias != kNo) && !older(n.bias)) {
    why = "bias not older than the node";
  }
  return why;
}

bool same_list(const Index* a, Index na, const Index* b, Index nb) {
  if (na != nb) {
    return false;
  }
  for (Index k = 0U; k < na; ++k) {
    if (a[k] != b[k]) {
      return false;
    }
  }
  return true;
}

// The decoded node against the one asked for.
const char* same_node(const Node& want, const Node& got) {
  if (want.op != got.op) {
    return "op code";
  }
  if (((want.kind == Kind::kLeaf) || on(kFName)) && (want.name != got.name)) {
    return "name (a leaf's name() is what param() was given; other nodes have none)";
  }
  switch (want.kind) {
    case Kind::kLeaf:
      return nullptr;
    case Kind::kUnary:
      if (want.a != got.a) {
        return "operand";
      }
      if (got.has_c && !((want.c == got.c) || (std::isnan(want.c) && std::isnan(got.c)))) {
        return "constant";
      }
      return nullptr;
    case Kind::kBinary:
      return ((want.a == got.a) && (want.b == got.b)) ? nullptr : "operands";
    case Kind::kReduce:
    case Kind::kLse:
      return same_list(want.xs, want.nx, got.xs, got.nx) ? nullptr : "operand list";
    case Kind::kDot: {
      const bool direct = same_list(want.ws, want.nw, got.ws, got.nw) && same_list(want.xs, want.nx, got.xs, got.nx);
      const bool swapped = want.symmetric && same_list(want.ws, want.nw, got.xs, got.nx) &&
                           same_list(want.xs, want.nx, got.ws, got.nw);
      if (!direct && !swapped) {
        return "inner product operands";
      }
      return (want.bias == got.bias) ? nullptr : "bias";
    }
  }
  return nullptr;
}

// --- independent evaluation ---------------------------------------------------------
template <class T>
struct Limits {
  static constexpr Wide eps = static_cast<Wide>(std::numeric_limits<T>::epsilon());
  static constexpr Wide max = static_cast<Wide>(std::numeric_limits<T>::max());
  static constexpr Wide tiny = static_cast<Wide>(std::numeric_limits<T>::min()) * 1024;
  // Local derivatives and adjoints beyond these may overflow in T in one
  // order of evaluation and not in another: such nodes are not compared.
  static constexpr Wide big_d = (sizeof(T) == 4U) ? 1e6L : 1e60L;
  static constexpr Wide big_adj = (sizeof(T) == 4U) ? 1e30L : 1e250L;
};

bool finite(Wide x) { return std::isfinite(x); }

struct Forward {
  Wide v = 0;
  Wide bound = 0;  // sum of the magnitudes of the terms (rounding scale)
  bool nan_in = false;
  bool inf_in = false;
  bool pos_inf_in = false;
  bool all_neg_inf = true;
};

template <class T>
Forward forward(const bt::Tape<T>& tape, const Node& n) {
  Forward f;
  auto val = [&tape, &f](Index k) {
    const Wide x = static_cast<Wide>(tape.value(k));
    f.nan_in = f.nan_in || std::isnan(x);
    f.inf_in = f.inf_in || std::isinf(x);
    f.pos_inf_in = f.pos_inf_in || (std::isinf(x) && (x > 0));
    f.all_neg_inf = f.all_neg_inf && std::isinf(x) && (x < 0);
    return x;
  };
  const Wide c = n.c;
  if (n.kind == Kind::kUnary || n.kind == Kind::kBinary) {
    if (n.has_c) {
      f.nan_in = f.nan_in || std::isnan(c);
      f.inf_in = f.inf_in || std::isinf(c);
    }
  }
  switch (n.kind) {
    case Kind::kLeaf:
      break;
    case Kind::kUnary: {
      const Wide x = val(n.a);
      switch (n.op) {
        case Op::kNeg: f.v = -x; break;
        case Op::kAddConst: f.v = x + c; f.bound = std::fabs(x) + std::fabs(c); break;
        case Op::kConstSub: f.v = c - x; f.bound = std::fabs(x) + std::fabs(c); break;
        case Op::kConstDiv: f.v = c / x; break;
        case Op::kRelu: f.v = (x > 0) ? x : 0; break;
        case Op::kTanh: f.v = std::tanh(x); break;
        case Op::kExp: f.v = std::exp(x); break;
        case Op::kLog: f.v = std::log(x); break;
        case Op::kNegLog: f.v = -std::log(x); break;
        case Op::kSigmoid: f.v = 1 / (1 + std::exp(-x)); break;
        case Op::kInv: f.v = 1 / x; break;
        case Op::kSqr: f.v = x * x; break;
        case Op::kPow3: f.v = x * x * x; break;
        case Op::kSqrt: f.v = std::sqrt(x); break;
        case Op::kInvSqrt: f.v = 1 / std::sqrt(x); break;
        case Op::kMulConst: f.v = x * c; break;
        case Op::kDivConst: f.v = x / c; break;
        default: break;
      }
      f.bound = (f.bound > std::fabs(f.v)) ? f.bound : std::fabs(f.v);
      break;
    }
    case Kind::kBinary: {
      const Wide x = val(n.a);
      const Wide y = val(n.b);
      switch (n.op) {
        case Op::kAdd: f.v = x + y; f.bound = std::fabs(x) + std::fabs(y); break;
        case Op::kSub: f.v = x - y; f.bound = std::fabs(x) + std::fabs(y); break;
        case Op::kMul: f.v = x * y; f.bound = std::fabs(f.v); break;
        case Op::kDiv: f.v = x / y; f.bound = std::fabs(f.v); break;
        case Op::kMean2: f.v = (x + y) / 2; f.bound = (std::fabs(x) + std::fabs(y)) / 2; break;
        case Op::kAddSquares2: f.v = (x * x) + (y * y); f.bound = f.v; break;
        case Op::kMeanSquares2: f.v = ((x * x) + (y * y)) / 2; f.bound = f.v; break;
        case Op::kNegMean2: f.v = -(x + y) / 2; f.bound = (std::fabs(x) + std::fabs(y)) / 2; break;
        default: break;
      }
      break;
    }
    case Kind::kReduce: {
      const Wide count = static_cast<Wide>(n.nx);
      Wide sum = 0;
      Wide abs_sum = 0;
      Wide sq = 0;
      Wide prod = 1;
      for (Index k = 0U; k < n.nx; ++k) {
        const Wide x = val(n.xs[k]);
        sum += x;
        abs_sum += std::fabs(x);
        sq += x * x;
        prod *= x;
      }
      const Wide first = static_cast<Wide>(tape.value(n.xs[0]));
      switch (n.reduce_op) {
        case Op::kSumR: f.v = sum; f.bound = abs_sum; break;
        case Op::kSubR: f.v = first - (sum - first); f.bound = abs_sum; break;
        case Op::kProdR: {
          // In T the running product may overflow (then inf * 0 = NaN) or
          // lose its precision below the normal range: not compared then.
          f.v = prod;
          f.bound = std::fabs(prod);
          Wide p = 1;
          for (Index k = 0U; k < n.nx; ++k) {
            p *= static_cast<Wide>(tape.value(n.xs[k]));
            const Wide m = std::fabs(p);
            if ((m > (Limits<T>::max / 16)) || ((m != 0) && (m < Limits<T>::tiny))) {
              f.bound = std::numeric_limits<Wide>::infinity();
            }
          }
          break;
        }
        case Op::kMeanR: f.v = sum / count; f.bound = abs_sum / count; break;
        case Op::kSumSqR: f.v = sq; f.bound = sq; break;
        case Op::kMeanSqR: f.v = sq / count; f.bound = sq / count; break;
        case Op::kNegMeanR: f.v = -sum / count; f.bound = abs_sum / count; break;
        case Op::kVarR:
        case Op::kVarBiasedR: {
          // The mean rounds relative to the mean magnitude, not to itself.
          const Wide m = sum / count;
          const Wide mean_abs = abs_sum / count;
          Wide centered = 0;
          Wide scale = 0;
          for (Index k = 0U; k < n.nx; ++k) {
            const Wide d = static_cast<Wide>(tape.value(n.xs[k])) - m;
            centered += d * d;
            const Wide s = std::fabs(static_cast<Wide>(tape.value(n.xs[k]))) + mean_abs;
            scale += s * s;
          }
          const Wide denominator = (n.reduce_op == Op::kVarR) ? (count - 1) : count;
          f.v = centered / denominator;
          f.bound = scale / denominator;
          break;
        }
        default: break;
      }
      break;
    }
    case Kind::kLse: {
      Wide m = -std::numeric_limits<Wide>::infinity();
      for (Index k = 0U; k < n.nx; ++k) {
        const Wide x = val(n.xs[k]);
        m = (x > m) ? x : m;
      }
      if (!f.nan_in && !f.pos_inf_in && !f.all_neg_inf) {
        Wide s = 0;
        for (Index k = 0U; k < n.nx; ++k) {
          s += std::exp(static_cast<Wide>(tape.value(n.xs[k])) - m);
        }
        f.v = m + std::log(s);
        f.bound = std::fabs(m) + std::fabs(std::log(s)) + static_cast<Wide>(n.nx);
        f.inf_in = false;  // -inf operands add exp(-inf) = 0 exactly
      }
      break;
    }
    case Kind::kDot: {
      Wide s = 0;
      Wide bound = 0;
      for (Index k = 0U; k < n.nx; ++k) {
        const Wide w = val(n.ws[k]);
        const Wide x = val(n.xs[k]);
        s += w * x;
        bound += std::fabs(w * x);
      }
      if (n.bias != kNo) {
        const Wide b = val(n.bias);
        s += b;
        bound += std::fabs(b);
      }
      f.v = s;
      f.bound = bound;
      break;
    }
  }
  return f;
}

template <class T>
void check_value(const bt::Tape<T>& tape, Index i, const Node& n) {
  if (n.kind == Kind::kLeaf) {
    return;
  }
  const Forward f = forward(tape, n);
  if (!on(kFNonfinite) && (f.nan_in || f.inf_in)) {
    return;
  }
  const Wide got = static_cast<Wide>(tape.value(i));
  const char* what = nullptr;
  if (f.nan_in) {
    what = std::isnan(got) ? nullptr : "a NaN operand must give NaN";
  } else if ((n.kind == Kind::kLse) && f.pos_inf_in) {
    what = (std::isinf(got) && (got > 0)) ? nullptr : "log_sum_exp with a +inf operand must be +inf";
  } else if ((n.kind == Kind::kLse) && f.all_neg_inf) {
    what = (std::isinf(got) && (got < 0)) ? nullptr : "log_sum_exp of only -inf must be -inf";
  } else if (f.inf_in) {
    what = nullptr;  // not compared: overflowing terms may differ with order
  } else if (std::isnan(f.v)) {
    what = std::isnan(got) ? nullptr : "must be NaN";
  } else if (std::isinf(f.v)) {
    what = (got == f.v) ? nullptr : "must be infinite";
  } else if (!finite(f.bound) || (f.bound > (Limits<T>::max / 16))) {
    what = nullptr;  // overflow territory
  } else {
    const Wide tolerance = (512 * Limits<T>::eps * f.bound) + Limits<T>::tiny;
    what = (std::fabs(got - f.v) <= tolerance) ? nullptr : "differs from the independent evaluation";
  }
  if (what != nullptr) {
    if (g_trace) {
      for (Index k = 0U; k < n.nx; ++k) {
        std::fprintf(stderr, "  operand %u: w %u (%g) x %u (%g)\n", k, (k < n.nw) ? n.ws[k] : kNo,
                     (k < n.nw) ? static_cast<double>(tape.value(n.ws[k])) : 0.0, n.xs[k],
                     static_cast<double>(tape.value(n.xs[k])));
      }
      std::fprintf(stderr, "  bias %u a %u b %u; slots:", n.bias, bt::node_operands(tape, i).a, bt::node_operands(tape, i).b);
      for (Index k = 0U; k < tape.usage().slots; ++k) {
        std::fprintf(stderr, " %u", bt::slot_at(tape, k));
      }
      std::fprintf(stderr, "\n");
    }
    broken((n.kind == Kind::kLse) ? "lse" : (f.nan_in ? "nan-propagation" : "value"),
           "node %u (op %u): %s: got %.17Lg, expected %.17Lg", i, static_cast<unsigned>(n.op), what, got, f.v);
  }
}

// d(node)/d(operand) for each operand occurrence, from values only.
struct Partial {
  Index k;
  Wide d;
  Wide scale;  // magnitude the library's rounding of d is relative to
};

template <class T>
Index partials(const bt::Tape<T>& tape, Index i, const Node& n, Partial* out, bool* unstable) {
  Index count = 0U;
  auto v = [&tape, unstable](Index k) {
    const Wide x = static_cast<Wide>(tape.value(k));
    *unstable = *unstable || !finite(x);
    return x;
  };
  auto add = [&out, &count](Index k, Wide d) {
    out[count++] = Partial{k, d, std::fabs(d)};
  };
  const Wide self = v(i);
  switch (n.kind) {
    case Kind::kLeaf:
      break;
    case Kind::kUnary: {
      const Wide x = v(n.a);
      const Wide c = n.c;
      Wide d = 0;
      switch (n.op) {
        case Op::kNeg: d = -1; break;
        case Op::kAddConst: d = 1; break;
        case Op::kConstSub: d = -1; break;
        case Op::kConstDiv: d = -self / x; break;
        case Op::kRelu: d = (x > 0) ? 1 : 0; break;
        case Op::kTanh: d = 1 - (self * self); break;
        case Op::kExp: d = self; break;
        case Op::kLog: d = 1 / x; break;
        case Op::kNegLog: d = -1 / x; break;
        case Op::kSigmoid: d = self * (1 - self); break;
        case Op::kInv: d = -1 / (x * x); break;
        case Op::kSqr: d = 2 * x; break;
        case Op::kPow3: d = 3 * x * x; break;
        case Op::kSqrt: d = 0.5L / std::sqrt(x); break;
        case Op::kInvSqrt: d = -0.5L / (x * std::sqrt(x)); break;
        case Op::kMulConst: d = c; break;
        case Op::kDivConst: d = 1 / c; break;
        default: break;
      }
      add(n.a, d);
      if (n.op == Op::kTanh) {
        out[count - 1U].scale = 1 + (self * self);  // 1 - v * v cancels near saturation
      }
      break;
    }
    case Kind::kBinary: {
      const Wide x = v(n.a);
      const Wide y = v(n.b);
      switch (n.op) {
        case Op::kAdd: add(n.a, 1); add(n.b, 1); break;
        case Op::kSub: add(n.a, 1); add(n.b, -1); break;
        case Op::kMul: add(n.a, y); add(n.b, x); break;
        case Op::kDiv:
          // The library goes through 1 / y in T: with y subnormal that is
          // inf, and x * inf is NaN even where -x / y^2 is exactly 0.
          *unstable = *unstable || !std::isfinite(static_cast<T>(1 / y));
          add(n.a, 1 / y);
          add(n.b, -x / (y * y));
          break;
        case Op::kMean2: add(n.a, 0.5L); add(n.b, 0.5L); break;
        case Op::kAddSquares2: add(n.a, 2 * x); add(n.b, 2 * y); break;
        case Op::kMeanSquares2: add(n.a, x); add(n.b, y); break;
        case Op::kNegMean2: add(n.a, -0.5L); add(n.b, -0.5L); break;
        default: break;
      }
      break;
    }
    case Kind::kReduce: {
      const Wide count_n = static_cast<Wide>(n.nx);
      Wide sum = 0;
      Wide abs_sum = 0;
      for (Index k = 0U; k < n.nx; ++k) {
        sum += v(n.xs[k]);
        abs_sum += std::fabs(v(n.xs[k]));
      }
      const Wide m = sum / count_n;
      const Wide mean_abs = abs_sum / count_n;
      for (Index k = 0U; k < n.nx; ++k) {
        const Wide x = v(n.xs[k]);
        switch (n.reduce_op) {
          case Op::kSumR: add(n.xs[k], 1); break;
          case Op::kSubR: add(n.xs[k], (k == 0U) ? 1 : -1); break;
          case Op::kProdR: {
            // The library divides the product of the nonzero factors by
            // x: out of T's normal range that loses what we compare.
            // (A running product that passes below the normal range, e.g.
            // through a subnormal factor, keeps only a few digits.)
            Wide rest = 1;
            for (Index j = 0U; j < n.nx; ++j) {
              const Wide y = v(n.xs[j]);
              rest = (y == 0) ? rest : (rest * y);
              if ((std::fabs(rest) > (Limits<T>::max / 16)) || (std::fabs(rest) < Limits<T>::tiny)) {
                *unstable = true;
              }
            }
            Wide others = 1;
            for (Index j = 0U; j < n.nx; ++j) {
              others = (j == k) ? others : (others * v(n.xs[j]));
            }
            add(n.xs[k], others);
            break;
          }
          case Op::kMeanR: add(n.xs[k], 1 / count_n); break;
          case Op::kSumSqR: add(n.xs[k], 2 * x); break;
          case Op::kMeanSqR: add(n.xs[k], (2 * x) / count_n); break;
          case Op::kNegMeanR: add(n.xs[k], -1 / count_n); break;
          case Op::kVarR:
          case Op::kVarBiasedR: {
            const Wide denominator = (n.reduce_op == Op::kVarR) ? (count_n - 1) : count_n;
            add(n.xs[k], (2 * (x - m)) / denominator);
            // x - m may be exactly 0 here and not in T: the mean rounds
            // relative to the mean magnitude of the operands.
            out[count - 1U].scale = (2 * (std::fabs(x) + mean_abs)) / denominator;
            break;
          }
          default: break;
        }
      }
      break;
    }
    case Kind::kLse:
      for (Index k = 0U; k < n.nx; ++k) {
        const Wide x = v(n.xs[k]);
        add(n.xs[k], std::exp(x - self));
        // exp(x - out): x - out rounds by eps * (|x| + |out|) in T.
        out[count - 1U].scale = out[count - 1U].d * (1 + std::fabs(x) + std::fabs(self));
      }
      break;
    case Kind::kDot:
      for (Index k = 0U; k < n.nx; ++k) {
        add(n.ws[k], v(n.xs[k]));
        add(n.xs[k], v(n.ws[k]));
      }
      if (n.bias != kNo) {
        add(n.bias, 1);
      }
      break;
  }
  return count;
}

// --- the driver ------------------------------------------------------------------------
const char* const kNames[] = {nullptr, "w0", "w1", "bias"};

template <class T>
struct Driver {
  struct Side {
    bt::Tape<T>* tape = nullptr;
    alignas(bt::Tape<T>) unsigned char storage[sizeof(bt::Tape<T>)];
    Index nodes = 0U;
    Index slots = 0U;
    Index params = 0U;
    bool usable = false;
    Status status = Status::kOk;  // expected
    Index size = 0U;              // expected
    Index slots_used = 0U;        // expected
    Node shadow[kMaxNodes];
    T values[kMaxNodes];  // bits every node must keep
    T grads[kMaxNodes];
    std::uint32_t gen[kMaxNodes];  // times each index was recorded
    // Leaves: expected accumulated gradient and its error bound.
    Wide leaf_grad[kMaxNodes];
    Wide leaf_err[kMaxNodes];
    bool leaf_unknown[kMaxNodes];
    std::uint32_t cuts_since_reset = 0U;  // rewinds that discarded something
    std::uint32_t cut_clock = 0U;
  };
  struct Handle {
    Value<T> v;
    std::uint32_t gen = 0U;
    bool used = false;
  };
  struct MarkEntry {
    bt::Mark m;
    int side = 0;
    bool used = false;
    bool stale = false;
    bool stale_by_rewind = false;  // else only by reset
    std::uint32_t clock = 0U;  // side's cut_clock when taken
  };
  struct ListEntry {
    bt::ViewList list;
    int side = 0;
    bool used = false;
    bool stale = false;
    Index count = 0U;
    bt::View parts[4];
  };

  Side side[2];
  Handle pool[8];
  Index pool_next = 0U;
  MarkEntry marks[4];
  ListEntry lists[2];
  Input in{nullptr, 0U, 0U};
  Index step = 0U;
  const char* call = "";

  int side_of(const bt::Tape<T>* t) const {
    return (t == nullptr) ? kNone : ((t == side[0].tape) ? 0 : 1);
  }

  // --- set-up ---------------------------------------------------------------
  void configure(int s) {
    Side& sd = side[s];
    const std::uint8_t b0 = in.u8();
    const std::uint8_t b1 = in.u8();
    const std::uint8_t b2 = in.u8();
    const std::uint8_t b3 = in.u8();
    const std::uint8_t b4 = in.u8();
    sd.nodes = b0 % (kMaxNodes + 1U);
    sd.slots = b1 % (kMaxSlots + 1U);
    sd.params = (b2 % 8U <= sd.nodes) ? (b2 % 8U) : sd.nodes;
    if ((b2 & 0x80U) != 0U) {
      sd.params += 8U;  // a parameter region past the end: rejected
    }
    const std::size_t required = bt::Tape<T>::bytes_required(sd.nodes, sd.slots, sd.params);
    std::size_t bytes = (required == kTooLarge) ? 64U : required;
    std::size_t offset = kLeft;
    bool null_buffer = false;
    switch (b3 % 8U) {
      case 0U:  // tiny: short by 1..255 bytes (or empty)
        bytes = (bytes > b4) ? (bytes - 1U - (b4 % bytes)) : 0U;
        break;
      case 1U:  // misaligned by 1..31 bytes
        offset += 1U + (b4 % 31U);
        break;
      case 2U:  // larger than needed
        bytes += b4;
        break;
      case 3U:
        null_buffer = (b4 % 4U) == 0U;
        break;
      default:  // exact size
        break;
    }
    g_mem[s].arm(offset, bytes);
    void* buffer = null_buffer ? nullptr : static_cast<void*>(&g_mem[s].arena[offset]);
    const bool want_ok = !null_buffer && ((offset % bt::Tape<T>::kArrayAlign) == 0U) && (sd.params <= sd.nodes) &&
                         (required != kTooLarge) && (bytes >= required);
    sd.tape = new (sd.storage) bt::Tape<T>(buffer, bytes, sd.nodes, sd.slots, sd.params);
    sd.usable = want_ok;
    sd.status = want_ok ? Status::kOk : Status::kInvalidArgument;
    sd.size = 0U;
    sd.slots_used = 0U;
    sd.cuts_since_reset = 0U;
    sd.cut_clock = 0U;
    if (!want_ok) {
      sd.nodes = 0U;
      sd.slots = 0U;
      sd.params = 0U;
    }
    for (Index i = 0U; i < kMaxNodes; ++i) {
      sd.gen[i] = 0U;
    }
    if ((sd.tape->status() != sd.status) || (sd.tape->usage().node_capacity != sd.nodes) ||
        (sd.tape->usage().slot_capacity != sd.slots) || (sd.tape->usage().params != sd.params)) {
      broken("constructor", "tape %d (nodes %u slots %u params %u, %zu bytes at offset %zu, required %zu): status %s "
             "capacity %zu/%zu/%zu",
             s, b0 % (kMaxNodes + 1U), b1 % (kMaxSlots + 1U), sd.params, bytes, offset, required,
             bt::status_name(sd.tape->status()), sd.tape->usage().node_capacity, sd.tape->usage().slot_capacity,
             sd.tape->usage().params);
    }
    g_mem[s].check(s, "construction");
  }

  // bytes_required and the constructor at the limits of size_t and Index: a
  // layout either needs kTooLarge or at least the bytes of its arrays (never a
  // wrapped small number), and a buffer smaller than that is refused.
  void do_layout() {
    static const std::size_t counts[16] = {0U,
                                           1U,
                                           64U,
                                           65536U,
                                           (std::size_t{1} << 30U) + 16U,
                                           std::size_t{0x7FFFFFFFU},
                                           std::size_t{0xFFFFFFFEU},
                                           std::size_t{0xFFFFFFFFU},
                                           std::numeric_limits<std::size_t>::max() / 16U,
                                           std::numeric_limits<std::size_t>::max() / 8U,
                                           (std::numeric_limits<std::size_t>::max() / 4U) + 1U,
                                           std::numeric_limits<std::size_t>::max() / 2U,
                                           std::numeric_limits<std::size_t>::max() - 31U,
                                           std::numeric_limits<std::size_t>::max() - 1U,
                                           std::numeric_limits<std::size_t>::max(),
                                           3U};
    const std::uint8_t b = in.u8();
    const std::size_t nodes = counts[b % 16U];
    const std::size_t slots = counts[(b >> 4) % 16U];
    const std::uint8_t p = in.u8();
    const std::size_t params = ((p & 1U) != 0U) ? nodes : ((p & 2U) != 0U ? counts[(p >> 2) % 16U] : 0U);
    call = "bytes_required / Tape(huge)";
    const std::size_t required = bt::Tape<T>::bytes_required(nodes, slots, params);
    const bool addressable = (nodes < kNo) && (slots < kNo) && (params <= nodes);
    // What the arrays need at the least, in exact arithmetic.
    const Wide least = (static_cast<Wide>(nodes) * (2.0L * sizeof(T))) + (static_cast<Wide>(slots) * sizeof(Index));
    if (!addressable && (required != kTooLarge)) {
      broken("layout", "bytes_required(%zu, %zu, %zu) = %zu, not kTooLarge", nodes, slots, params, required);
    }
    if ((required != kTooLarge) && (static_cast<Wide>(required) < least)) {
      broken("layout", "bytes_required(%zu, %zu, %zu) = %zu wrapped (needs at least %.0Lf)", nodes, slots, params,
             required, least);
    }
    const std::size_t bytes = (p >> 6) * 512U;
    g_mem[2].arm(kLeft, bytes);
    bt::Tape<T> t(&g_mem[2].arena[kLeft], bytes, nodes, slots, params);
    const bool fits = (required != kTooLarge) && (bytes >= required);
    if ((t.status() == Status::kOk) != fits) {
      broken("layout", "Tape(%zu bytes, %zu, %zu, %zu): status %s, bytes_required %zu", bytes, nodes, slots, params,
             bt::status_name(t.status()), required);
    }
    if (t.status() == Status::kOk) {
      for (std::size_t k = 0U; (k < 8U) && (t.leaf(T(1)).valid()); ++k) {
      }
      const Value<T> x = t.leaf(T(2));
      static_cast<void>(bt::exp(x) + x);
    } else if (t.leaf(T(1)).valid() || (t.usage().node_capacity != 0U)) {
      broken("layout", "a refused tape records");
    }
    g_mem[2].check(2, call);
  }

  // --- invariants after every call ------------------------------------------------
  void check_side(int s) {
    Side& sd = side[s];
    bt::Tape<T>& t = *sd.tape;
    g_mem[s].check(s, call);
    if (t.status() != sd.status) {
      broken("status", "tape %d after %s: status %s, expected %s", s, call, bt::status_name(t.status()),
             bt::status_name(sd.status));
    }
    if ((t.size() != sd.size) || (t.usage().slots != sd.slots_used)) {
      broken("size", "tape %d after %s: size %zu slots %zu, expected %u and %u", s, call, t.size(), t.usage().slots,
             sd.size, sd.slots_used);
    }
    if ((t.usage().node_capacity != sd.nodes) || (t.usage().slot_capacity != sd.slots)) {
      broken("size", "tape %d after %s: capacity changed", s, call);
    }
    for (Index i = 0U; i < sd.size; ++i) {
      const T v = t.value(i);
      const T g = t.grad(i);
      if (std::memcmp(&v, &sd.values[i], sizeof(T)) != 0) {
        broken("value", "tape %d after %s: value of node %u changed", s, call, i);
      }
      if (std::memcmp(&g, &sd.grads[i], sizeof(T)) != 0) {
        broken("gradient", "tape %d after %s: gradient of node %u changed from %g to %g", s, call, i,
               static_cast<double>(sd.grads[i]), static_cast<double>(g));
      }
    }
  }
  void check_structure(int s) {
    Side& sd = side[s];
    for (Index i = 0U; i < sd.size; ++i) {
      Node got;
      const char* why = decode(*sd.tape, i, &got);
      if (why == nullptr) {
        why = same_node(sd.shadow[i], got);
      }
      if (why != nullptr) {
        broken("structure", "tape %d after %s: node %u (op %u) reads back wrong: %s", s, call, i,
               static_cast<unsigned>(bt::node_op(*sd.tape, i)), why);
      }
    }
  }
  void check_all() {
    check_side(0);
    check_side(1);
  }

  // --- operands ------------------------------------------------------------------
  struct Pick {
    Value<T> v;
    std::uint32_t gen = 0U;  // gen of the node when the handle was made
  };
  Pick fresh(int s, Index i) {
    Pick p;
    p.v = Value<T>(side[s].tape, i);
    p.gen = (i < kMaxNodes) ? side[s].gen[i] : 0U;
    return p;
  }
  Pick pick(int home, std::uint8_t sel) {
    const int other = 1 - home;
    const Index n = side[home].size;
    if (sel < 176U) {
      return fresh(home, (n == 0U) ? 0U : (n - 1U - (sel % n)));
    }
    if (sel < 196U) {
      const Index m = side[other].size;
      return fresh(other, (m == 0U) ? 0U : (m - 1U - (sel % m)));
    }
    if (sel < 220U) {
      const Handle& h = pool[sel % 8U];
      if (h.used) {
        Pick p;
        p.v = h.v;
        p.gen = h.gen;
        return p;
      }
      return fresh(home, (n == 0U) ? 0U : (n - 1U));
    }
    if (sel < 232U) {
      const Index k = sel % 4U;
      return fresh(home, (k == 3U) ? kNo : (n + k));
    }
    if ((sel < 240U) && on(kFEmpty)) {
      return Pick();
    }
    return fresh(home, (n == 0U) ? 0U : (sel % n));
  }
  void remember(Value<T> v) {
    const int s = side_of(v.tape());
    if ((s == kNone) || !v.valid() || (v.index() >= kMaxNodes)) {
      return;
    }
    Handle& h = pool[pool_next % 8U];
    pool_next++;
    h.v = v;
    h.gen = side[s].gen[v.index()];
    h.used = true;
  }

  // What an operand means for an op recorded on tape `s`.
  struct Outcome {
    std::uint32_t allowed = 0U;
    bool certain = false;  // must fail
    bool maybe = false;    // may fail (a discarded node's index recorded again)
    void must(std::uint32_t bits) {
      allowed |= bits;
      certain = true;
    }
    void may(std::uint32_t bits) {
      allowed |= bits;
      maybe = true;
    }
  };
  void operand(Outcome* o, int s, const Pick& p, std::uint32_t empty_bits) {
    const int owner = side_of(p.v.tape());
    if (owner == kNone) {
      o->must(empty_bits);
    } else if (owner != s) {
      o->must(kForeign);
    } else if (p.v.index() >= side[s].size) {
      o->must(kInvHandle);
    } else if ((p.v.index() < kMaxNodes) && (side[s].gen[p.v.index()] != p.gen)) {
      o->may(kInvHandle);  // documented: not detected; either is fine
    }
  }
  void capacity(Outcome* o, int s, Index nodes, std::size_t slots) {
    const Side& sd = side[s];
    if (sd.size < sd.params) {
      o->must(kInvArg);  // an interior node inside the parameter region: a misuse, not a full tape
    } else if (((sd.nodes - sd.size) < nodes) || ((sd.slots - sd.slots_used) < slots)) {
      o->must(kCap);
    } else {
      // room for the node
    }
  }
  bool recorded(int s, std::uint64_t first, std::uint64_t n) const {
    return (first < side[s].size) && (n <= (side[s].size - first));
  }

  // Appends a node to the model (after the tape has recorded it).
  void add_node(int s, const Node& want, bool trust_tape) {
    Side& sd = side[s];
    const Index i = sd.size;
    sd.size = i + 1U;
    sd.gen[i]++;
    Node got;
    const char* why = decode(*sd.tape, i, &got);
    if ((why == nullptr) && !trust_tape) {
      why = same_node(want, got);
    }
    if (why != nullptr) {
      broken("structure", "tape %d, %s: new node %u (op %u) reads back wrong: %s", s, call, i,
             static_cast<unsigned>(bt::node_op(*sd.tape, i)), why);
    }
    sd.shadow[i] = trust_tape ? got : want;
    check_value(*sd.tape, i, trust_tape ? got : want);
    sd.values[i] = sd.tape->value(i);
    sd.grads[i] = sd.tape->grad(i);
    if (want.kind == Kind::kLeaf) {
      if (sd.grads[i] != T(0)) {
        broken("gradient", "tape %d: new leaf %u has gradient %g", s, i, static_cast<double>(sd.grads[i]));
      }
      sd.leaf_grad[i] = 0;
      sd.leaf_err[i] = 0;
      sd.leaf_unknown[i] = want.op == Op::kInput;  // an input's gradient is not modelled
    }
  }

  // Checks a recording call's outcome on tape s (kNone: no tape) against the
  // model; on success adds the nodes `want[0..count)`.
  void settle(int s, const Outcome& o, Value<T> result, Index count, Index slots, const Node* want,
              bool trust_tape = false) {
    if (s == kNone) {
      if (result.valid()) {
        broken("status", "%s: a call with no tape returned a valid handle", call);
      }
      return;
    }
    Side& sd = side[s];
    bt::Tape<T>& t = *sd.tape;
    const bool failed = !result.valid();
    if (sd.status != Status::kOk) {
      if (!failed) {
        broken("status", "tape %d, %s: recorded after an error (sticky status %s)", s, call,
               bt::status_name(sd.status));
      }
      return;
    }
    if (failed) {
      if (!o.certain && !o.maybe) {
        broken("status", "tape %d, %s: failed (%s) though valid", s, call, bt::status_name(t.status()));
      }
      if ((t.status() == Status::kOk) || ((o.allowed & bit(t.status())) == 0U)) {
        broken((o.allowed == kEmpty) ? "empty-handle" : "status", "tape %d, %s: failed with status %s (allowed mask %#x)",
               s, call, bt::status_name(t.status()), o.allowed);
      }
      sd.status = t.status();
      return;
    }
    if (o.certain) {
      broken("status", "tape %d, %s: succeeded though it must fail (allowed mask %#x)", s, call, o.allowed);
    }
    if ((result.tape() != &t) || (result.index() != sd.size) || (t.size() != (sd.size + count)) ||
        (t.usage().slots != (sd.slots_used + slots))) {
      broken("size", "tape %d, %s: result %u, size %zu slots %zu; expected result %u, size %u slots %u", s, call,
             result.index(), t.size(), t.usage().slots, sd.size, sd.size + count, sd.slots_used + slots);
    }
    sd.slots_used += slots;
    for (Index k = 0U; k < count; ++k) {
      add_node(s, want[k], trust_tape);
    }
    remember(result);
  }

  // --- calls -------------------------------------------------------------------------
  T number() {
    const std::uint8_t b = in.u8();
    if (b < 224U) {
      return static_cast<T>(static_cast<int>(b) - 112) / T(16);
    }
    const T inf = std::numeric_limits<T>::infinity();
    const T specials[16] = {T(0),
                            -T(0),
                            T(1e-3),
                            T(1000),
                            T(1e20),
                            T(-1e20),
                            T(1e-20),
                            T(100),
                            T(-100),
                            T(88.5),
                            std::numeric_limits<T>::min(),
                            std::numeric_limits<T>::denorm_min(),
                            on(kFNonfinite) ? inf : T(0.5),
                            on(kFNonfinite) ? -inf : T(-0.5),
                            on(kFNonfinite) ? std::numeric_limits<T>::quiet_NaN() : T(2),
                            T(0.5)};
    return specials[b % 16U];
  }

  void do_leaf() {
    const std::uint8_t b = in.u8();
    const int s = ((b & 1U) != 0U) ? 1 : 0;
    const T x = number();
    Node want;
    want.name = ((b & 2U) != 0U) ? kNames[(b >> 2) % 4U] : nullptr;
    Outcome o;
    if (side[s].size >= side[s].nodes) {
      o.must(kCap);
    }
    call = "leaf/param";
    const Value<T> r = ((b & 2U) != 0U) ? side[s].tape->param(x, want.name) : side[s].tape->leaf(x);
    settle(s, o, r, 1U, 0U, &want);
    if (r.valid() && (std::memcmp(&side[s].values[r.index()], &x, sizeof(T)) != 0)) {
      broken("value", "tape %d: leaf %u does not hold its value", s, r.index());
    }
  }

  void do_unary() {
    const std::uint8_t f = in.u8();
    const int home = ((f & 0x80U) != 0U) ? 1 : 0;
    const Pick x = pick(home, in.u8());
    const T c = number();
    Node want;
    want.kind = Kind::kUnary;
    want.a = x.v.index();
    want.c = static_cast<Wide>(c);
    want.has_c = true;
    std::size_t slots = 0U;
    const std::size_t const_slots = (sizeof(T) + 3U) / 4U;
    Value<T> r;
    Value<T> y = x.v;
    switch (f % 26U) {
      case 0U: want.op = Op::kNeg; r = -x.v; call = "-x"; break;
      case 1U: want.op = Op::kAddConst; r = x.v + c; call = "x + c"; break;
      case 2U: want.op = Op::kAddConst; r = c + x.v; call = "c + x"; break;
      case 3U: want.op = Op::kAddConst; want.c = -want.c; r = x.v - c; call = "x - c"; break;
      case 4U: want.op = Op::kConstSub; r = c - x.v; call = "c - x"; break;
      case 5U: want.op = Op::kMulConst; slots = const_slots; r = x.v * c; call = "x * c"; break;
      case 6U: want.op = Op::kMulConst; slots = const_slots; r = c * x.v; call = "c * x"; break;
      case 7U: want.op = Op::kDivConst; slots = const_slots; r = x.v / c; call = "x / c"; break;
      case 8U: want.op = Op::kConstDiv; r = c / x.v; call = "c / x"; break;
      case 9U: want.op = Op::kMulConst; slots = const_slots; r = bt::mul_by_const(x.v, c); call = "mul_by_const"; break;
      case 10U: want.op = Op::kRelu; r = bt::relu(x.v); call = "relu"; break;
      case 11U: want.op = Op::kTanh; r = bt::tanh(x.v); call = "tanh"; break;
      case 12U: want.op = Op::kExp; r = bt::exp(x.v); call = "exp"; break;
      case 13U: want.op = Op::kLog; r = bt::log(x.v); call = "log"; break;
      case 14U: want.op = Op::kNegLog; r = bt::neg_log(x.v); call = "neg_log"; break;
      case 15U: want.op = Op::kSigmoid; r = bt::sigmoid(x.v); call = "sigmoid"; break;
      case 16U: want.op = Op::kInv; r = bt::inv(x.v); call = "inv"; break;
      case 17U: want.op = Op::kSqr; r = bt::sqr(x.v); call = "sqr"; break;
      case 18U: want.op = Op::kPow3; r = bt::pow3(x.v); call = "pow3"; break;
      case 19U: want.op = Op::kSqrt; r = bt::sqrt(x.v); call = "sqrt"; break;
      case 20U: want.op = Op::kInvSqrt; r = bt::inv_sqrt(x.v); call = "inv_sqrt"; break;
      case 21U: want.op = Op::kAddConst; y += c; r = y; call = "x += c"; break;
      case 22U: want.op = Op::kAddConst; want.c = -want.c; y -= c; r = y; call = "x -= c"; break;
      case 23U: want.op = Op::kMulConst; slots = const_slots; y *= c; r = y; call = "x *= c"; break;
      case 24U: want.op = Op::kDivConst; slots = const_slots; y /= c; r = y; call = "x /= c"; break;
      default: want.op = Op::kSqr; r = bt::sqr(x.v); call = "sqr"; break;
    }
    want.has_c = (want.op == Op::kAddConst) || (want.op == Op::kConstSub) || (want.op == Op::kConstDiv) ||
                 (want.op == Op::kMulConst) || (want.op == Op::kDivConst);
    const int s = side_of(x.v.tape());
    Outcome o;
    if (s != kNone) {
      operand(&o, s, x, kEmpty);
      capacity(&o, s, 1U, slots);
    }
    settle(s, o, r, 1U, static_cast<Index>(slots), &want);
  }

  void do_binary() {
    const std::uint8_t f = in.u8();
    const int home = ((f & 0x80U) != 0U) ? 1 : 0;
    const Pick x = pick(home, in.u8());
    const Pick y = pick(home, in.u8());
    Node want;
    want.kind = Kind::kBinary;
    want.a = x.v.index();
    want.b = y.v.index();
    Value<T> r;
    Value<T> acc = x.v;
    switch (f % 12U) {
      case 0U: want.op = Op::kAdd; r = x.v + y.v; call = "x + y"; break;
      case 1U: want.op = Op::kSub; r = x.v - y.v; call = "x - y"; break;
      case 2U: want.op = Op::kMul; r = x.v * y.v; call = "x * y"; break;
      case 3U: want.op = Op::kDiv; r = x.v / y.v; call = "x / y"; break;
      case 4U: want.op = Op::kMean2; r = bt::mean(x.v, y.v); call = "mean"; break;
      case 5U: want.op = Op::kAddSquares2; r = bt::add_squares(x.v, y.v); call = "add_squares"; break;
      case 6U: want.op = Op::kMeanSquares2; r = bt::mean_squares(x.v, y.v); call = "mean_squares"; break;
      case 7U: want.op = Op::kNegMean2; r = bt::negative_mean(x.v, y.v); call = "negative_mean"; break;
      case 8U: want.op = Op::kAdd; acc += y.v; r = acc; call = "x += y"; break;
      case 9U: want.op = Op::kSub; acc -= y.v; r = acc; call = "x -= y"; break;
      case 10U: want.op = Op::kMul; acc *= y.v; r = acc; call = "x *= y"; break;
      default: want.op = Op::kDiv; acc /= y.v; r = acc; call = "x /= y"; break;
    }
    // Recorded on x's tape, or on y's when x is empty.
    const int s = (x.v.tape() != nullptr) ? side_of(x.v.tape()) : side_of(y.v.tape());
    Outcome o;
    if (s != kNone) {
      operand(&o, s, x, kEmpty);
      operand(&o, s, y, kEmpty);
      capacity(&o, s, 1U, 0U);
    }
    settle(s, o, r, 1U, 0U, &want);
  }

  // A list of n handles: consecutive nodes of tape `home` (a range) or picks.
  Index make_list(int home, Pick* out, Index n_max) {
    const std::uint8_t mode = in.u8();
    const Index n = 1U + (mode % n_max);
    if ((mode & 0x80U) == 0U) {
      const Index size = side[home].size;
      const std::uint8_t back = in.u8();
      const Index start = (size >= n) ? (size - n - (back % (size - n + 1U))) : (back % 2U);
      for (Index k = 0U; k < n; ++k) {
        out[k] = fresh(home, start + k);
      }
      if ((back & 0x80U) != 0U) {  // one odd element: a list
        out[back % n] = pick(home, in.u8());
      }
    } else {
      for (Index k = 0U; k < n; ++k) {
        out[k] = pick(home, in.u8());
      }
    }
    return n;
  }
  static bool consecutive(const Pick* xs, Index n) {
    for (Index k = 0U; k < n; ++k) {
      if (xs[k].v.index() != (xs[0].v.index() + k)) {
        return false;
      }
    }
    return true;
  }
  static int first_side(const Driver& d, const Pick* xs, Index n) {
    for (Index k = 0U; k < n; ++k) {
      if (xs[k].v.tape() != nullptr) {
        return d.side_of(xs[k].v.tape());
      }
    }
    return kNone;
  }

  void do_reduce() {
    const std::uint8_t f = in.u8();
    const int home = ((f & 0x80U) != 0U) ? 1 : 0;
    Pick xs[16];
    Value<T> vs[16];
    const Index n = make_list(home, xs, 16U);
    for (Index k = 0U; k < n; ++k) {
      vs[k] = xs[k].v;
    }
    const bool direct = (f & 0x40U) != 0U;
    Op op = kReductions[f % 9U].r;
    const Value<T>* list = vs;
    std::size_t count = n;
    int s = first_side(*this, xs, n);
    Outcome o;
    if (direct) {  // Tape::reduce with any op code, null list or n == 0
      s = home;
      const std::uint8_t g = in.u8();
      if (on(kFReduceOp) && ((g & 0x7U) == 0U)) {
        op = static_cast<Op>(in.u8());
      }
      if (on(kFNull) && ((g & 0x38U) == 0x08U)) {
        list = nullptr;
      }
      if ((g & 0x38U) == 0x10U) {
        count = 0U;
      }
      // Tape::reduce takes every run reduction, log-sum-exp included; over
      // no operands (the list may then be null) it records the reduction's
      // value of nothing as a constant node (an input), no slots.
      const bool valid_op = is_range_reduction(op) || (op == Op::kLogSumExpR);
      if (valid_op && (count == 0U)) {
        Outcome oe;
        capacity(&oe, s, 1U, 0U);
        Node want0;
        want0.op = Op::kInput;
        want0.kind = Kind::kLeaf;
        call = "Tape::reduce over no operands";
        const Value<T> r0 = bt::reduce(*side[home].tape, op, list, count);
        settle(s, oe, r0, 1U, 0U, &want0);
        return;
      }
      if (!valid_op || (list == nullptr)) {
        o.must(kInvArg);
      }
    }
    bool found = false;
    const Op r_op = range_of(op, &found);
    Node want;
    want.kind = Kind::kReduce;
    want.reduce_op = r_op;
    want.nx = n;
    for (Index k = 0U; k < n; ++k) {
      want.xs[k] = xs[k].v.index();
    }
    const bool range = consecutive(xs, n);
    want.op = range ? r_op : kReductions[0].l;
    for (const ReducePair& p : kReductions) {
      if (p.r == r_op) {
        want.op = range ? p.r : p.l;
      }
    }
    if (op == Op::kLogSumExpR) {  // the log-sum-exp model (do_lse's)
      want.kind = Kind::kLse;
      want.op = range ? Op::kLogSumExpR : Op::kLogSumExpL;
    }
    if (s != kNone) {
      for (Index k = 0U; k < n; ++k) {
        operand(&o, s, xs[k], kEmpty);
      }
      capacity(&o, s, 1U, range ? 0U : n);
    }
    call = direct ? "Tape::reduce" : "reduce_*";
    Value<T> r;
    if (direct) {
      r = bt::reduce(*side[home].tape, op, list, count);
    } else {
      switch (f % 9U) {
        case 0U: r = bt::reduce_sum(vs, n); break;
        case 1U: r = bt::reduce_sub(vs, n); break;
        case 2U: r = bt::reduce_mul(vs, n); break;
        case 3U: r = bt::reduce_mean(vs, n); break;
        case 4U: r = bt::reduce_sum_of_squares(vs, n); break;
        case 5U: r = bt::reduce_mean_squares(vs, n); break;
        case 6U: r = bt::reduce_negative_mean(vs, n); break;
        case 7U: r = bt::variance(vs, n); break;
        default: r = bt::variance_biased(vs, n); break;
      }
    }
    settle(s, o, r, 1U, range ? 0U : n, &want);
  }

  void do_mean_and_mean_squares() {
    const std::uint8_t f = in.u8();
    const int home = ((f & 0x80U) != 0U) ? 1 : 0;
    Pick xs[16];
    Value<T> vs[16];
    const Index n = make_list(home, xs, 16U);
    for (Index k = 0U; k < n; ++k) {
      vs[k] = xs[k].v;
    }
    const int s = first_side(*this, xs, n);
    const bool range = consecutive(xs, n);
    Outcome o;
    if (s != kNone) {
      for (Index k = 0U; k < n; ++k) {
        operand(&o, s, xs[k], kEmpty);
      }
    }
    Node want[2];
    for (int j = 0; j < 2; ++j) {
      want[j].kind = Kind::kReduce;
      want[j].reduce_op = (j == 0) ? Op::kMeanR : Op::kMeanSqR;
      want[j].op = (j == 0) ? (range ? Op::kMeanR : Op::kMeanL) : (range ? Op::kMeanSqR : Op::kMeanSqL);
      want[j].nx = n;
      for (Index k = 0U; k < n; ++k) {
        want[j].xs[k] = xs[k].v.index();
      }
    }
    call = "reduce_mean_and_mean_squares";
    const bt::MeanAndMeanSquares<T> r = bt::reduce_mean_and_mean_squares(vs, n);
    if (s == kNone) {
      settle(s, o, r.mean, 1U, 0U, want);
      settle(s, o, r.mean_squares, 1U, 0U, want);
      return;
    }
    // Two calls: the first may succeed and the second fail (capacity).
    Outcome first = o;
    capacity(&first, s, 1U, range ? 0U : n);
    const Index before_size = side[s].size;
    const Index before_slots = side[s].slots_used;
    if (r.mean.valid() && !first.certain) {
      // Pretend the tape had only the first node to settle it.
      Outcome second = o;
      const Status status_before = side[s].status;
      static_cast<void>(status_before);
      if ((side[s].tape->size() != (before_size + (r.mean_squares.valid() ? 2U : 1U))) ||
          (side[s].tape->usage().slots !=
           (before_slots + ((range ? 0U : n) * (r.mean_squares.valid() ? 2U : 1U))))) {
        broken("size", "tape %d, %s: size %zu slots %zu", s, call, side[s].tape->size(), side[s].tape->usage().slots);
      }
      side[s].slots_used += range ? 0U : n;
      add_node(s, want[0], false);
      if (r.mean.index() != before_size) {
        broken("size", "tape %d, %s: mean is node %u", s, call, r.mean.index());
      }
      capacity(&second, s, 1U, range ? 0U : n);
      settle(s, second, r.mean_squares, 1U, range ? 0U : n, &want[1]);
    } else {
      settle(s, first, r.mean, 1U, range ? 0U : n, want);
      if (r.mean_squares.valid()) {
        broken("status", "tape %d, %s: second result valid after the first failed", s, call);
      }
    }
  }

  void do_dot() {
    const std::uint8_t f = in.u8();
    const int home = ((f & 0x80U) != 0U) ? 1 : 0;
    Pick ws[16];
    Pick xs[16];
    Value<T> wv[16];
    Value<T> xv[16];
    const Index n = make_list(home, ws, 16U);
    Index nx = make_list(home, xs, 16U);
    for (; nx < n; ++nx) {
      xs[nx] = pick(home, in.u8());
    }
    for (Index k = 0U; k < n; ++k) {
      wv[k] = ws[k].v;
      xv[k] = xs[k].v;
    }
    const bool with_bias = (f & 1U) != 0U;
    const Pick bias = with_bias ? pick(home, in.u8()) : Pick();
    const bool direct = (f & 0x40U) != 0U;
    int s = first_side(*this, ws, n);
    s = (s != kNone) ? s : first_side(*this, xs, n);
    Outcome o;
    const Value<T>* wp = wv;
    const Value<T>* xp = xv;
    if (direct) {
      s = home;
      const std::uint8_t g = in.u8();
      if (on(kFNull) && ((g & 3U) == 1U)) {
        wp = nullptr;
        o.must(kInvArg);
      }
      if (on(kFNull) && ((g & 3U) == 2U)) {
        xp = nullptr;
        o.must(kInvArg);
      }
    }
    const bool w_range = consecutive(ws, n);
    const bool x_range = consecutive(xs, n);
    Node want;
    want.kind = Kind::kDot;
    want.symmetric = true;
    want.op = (w_range && x_range) ? Op::kDotRR : ((w_range || x_range) ? Op::kDotRL : Op::kDotLL);
    want.nw = n;
    want.nx = n;
    for (Index k = 0U; k < n; ++k) {
      want.ws[k] = ws[k].v.index();
      want.xs[k] = xs[k].v.index();
    }
    want.bias = with_bias ? bias.v.index() : kNo;
    const Index slots = 3U + (w_range ? 0U : n) + (x_range ? 0U : n);
    if (s != kNone) {
      for (Index k = 0U; k < n; ++k) {
        operand(&o, s, ws[k], kEmpty);
        operand(&o, s, xs[k], kEmpty);
      }
      if (with_bias) {
        operand(&o, s, bias, kEmpty);
      }
      capacity(&o, s, 1U, slots);
    }
    call = direct ? "Tape::dot" : (with_bias ? "inner_product_with_bias" : "inner_product");
    Value<T> r;
    if (direct) {
      r = bt::inner_product(*side[home].tape, wp, xp, n, with_bias ? &bias.v : nullptr);
    } else if (with_bias) {
      r = bt::inner_product_with_bias(wv, xv, n, bias.v);
    } else {
      r = bt::inner_product(wv, xv, n);
    }
    settle(s, o, r, 1U, slots, &want);
  }

  void do_lse() {
    const std::uint8_t f = in.u8();
    const int home = ((f & 0x80U) != 0U) ? 1 : 0;
    Pick xs[16];
    Value<T> vs[16];
    const Index n = make_list(home, xs, 16U);
    for (Index k = 0U; k < n; ++k) {
      vs[k] = xs[k].v;
    }
    const bool direct = (f & 0x40U) != 0U;
    int s = first_side(*this, xs, n);
    Outcome o;
    const Value<T>* list = vs;
    if (direct) {
      s = home;
      if (on(kFNull) && ((f & 3U) == 1U)) {
        list = nullptr;
        o.must(kInvArg);
      }
    }
    const bool range = consecutive(xs, n);
    Node want;
    want.kind = Kind::kLse;
    want.op = range ? Op::kLogSumExpR : Op::kLogSumExpL;
    want.nx = n;
    for (Index k = 0U; k < n; ++k) {
      want.xs[k] = xs[k].v.index();
    }
    if (s != kNone) {
      for (Index k = 0U; k < n; ++k) {
        operand(&o, s, xs[k], kEmpty);
      }
      capacity(&o, s, 1U, range ? 0U : n);
    }
    call = direct ? "Tape::reduce(kLogSumExpR)" : "log_sum_exp";
    const Value<T> r = direct ? bt::reduce(*side[home].tape, Op::kLogSumExpR, list, n) : bt::log_sum_exp(vs, n);
    settle(s, o, r, 1U, range ? 0U : n, &want);
  }

  Index index_arg(int s, std::uint8_t b) const {
    const Index size = side[s].size;
    if (b < 240U) {
      return b % (size + 2U);
    }
    const Index specials[8] = {kNo, kNo - 1U, 0x80000000U, 0xFFFFFF00U, size, size + 1U, 0U, 0x7FFFFFFFU};
    return specials[b % 8U];
  }

  void do_segments() {
    const std::uint8_t f = in.u8();
    const int s = ((f & 0x80U) != 0U) ? 1 : 0;
    ListEntry& e = lists[(f >> 6) & 1U];
    Index count = 1U + (f % 4U);
    bt::View parts[4];
    Outcome o;
    std::uint64_t total = 0U;
    for (Index r = 0U; r < count; ++r) {
      const std::uint8_t a = in.u8();
      const std::uint8_t b = in.u8();
      parts[r].first = index_arg(s, a);
      parts[r].count = (b < 250U) ? (b % 6U) : kNo;
      if ((parts[r].count == 0U) || !recorded(s, parts[r].first, parts[r].count)) {
        o.must(kInvHandle);
      }
      total += parts[r].count;
    }
    const bt::View* pp = parts;
    if (on(kFNull) && ((f & 0x30U) == 0x10U)) {
      pp = nullptr;
      o.must(kInvArg);
    }
    if ((f & 0x30U) == 0x20U) {
      count = 0U;
      o.must(kInvArg);
    }
    if ((side[s].slots - side[s].slots_used) < (1U + (2U * count))) {
      o.must(kCap);
    }
    call = "Tape::view_list";
    Side& sd = side[s];
    const bt::ViewList list = bt::view_list(*sd.tape, pp, count);
    const bool failed = list.slot == kNo;
    if (sd.status != Status::kOk || o.certain) {
      if (!failed) {
        broken("status", "tape %d, %s: succeeded though it must fail", s, call);
      }
      if ((sd.status == Status::kOk) && ((o.allowed & bit(sd.tape->status())) == 0U)) {
        broken("status", "tape %d, %s: failed with %s (allowed mask %#x)", s, call,
               bt::status_name(sd.tape->status()), o.allowed);
      }
      sd.status = sd.tape->status();
      return;
    }
    if (failed || (list.slot != sd.slots_used) || (list.total != total)) {
      broken("status", "tape %d, %s: list {%u, %u}, expected {%u, %llu}", s, call, list.slot, list.total,
             sd.slots_used, static_cast<unsigned long long>(total));
    }
    sd.slots_used += 1U + (2U * count);
    e.list = list;
    e.side = s;
    e.used = true;
    e.stale = false;
    e.count = count;
    for (Index r = 0U; r < count; ++r) {
      e.parts[r] = parts[r];
    }
  }

  // A view list argument: a stored one (maybe stale or of the other tape)
  // or a made-up one. Sets `known` if the model knows what it holds on `s`.
  bt::ViewList list_arg(int s, std::uint8_t b, Outcome* o, ListEntry** known) {
    *known = nullptr;
    ListEntry& e = lists[b & 1U];
    if (((b & 0x0EU) == 0U) || !e.used) {  // made up
      bt::ViewList l;
      l.slot = ((b & 0x10U) != 0U) ? kNo : ((b >> 5) % (side[s].slots_used + 2U));
      l.total = (b >> 4) % 5U;
      if ((l.slot == kNo) || (l.total == 0U) || (l.slot >= side[s].slots_used)) {
        o->must(kInvArg);
      } else {
        o->may(kInvArg | kInvHandle);
      }
      return l;
    }
    if ((e.side != s) || e.stale) {
      o->may(kInvArg | kInvHandle);
      return e.list;
    }
    for (Index r = 0U; r < e.count; ++r) {
      if (!recorded(s, e.parts[r].first, e.parts[r].count)) {
        o->must(kInvHandle);
      }
    }
    *known = &e;
    return e.list;
  }
  // True if the slots at list.slot read as a list with a run of 0 nodes
  // (view_list() never stores one; a made-up, stale or foreign list may).
  bool zero_run(int s, bt::ViewList list) const {
    const bt::Tape<T>& t = *side[s].tape;
    const Index runs = (bt::slot_at(t, list.slot) == kNo) ? kNo : (bt::slot_at(t, list.slot) & ~bt::detail::kListOfInputs);
    for (Index r = 0U; (runs != kNo) && (r < runs) && (r < kMaxList); ++r) {
      if (bt::slot_at(t, list.slot + 2U + (2U * r)) == 0U) {
        return true;
      }
    }
    return false;
  }
  static void expand(const ListEntry& e, Node* n) {
    n->nx = 0U;
    for (Index r = 0U; r < e.count; ++r) {
      for (Index k = 0U; k < e.parts[r].count; ++k) {
        n->xs[n->nx++] = e.parts[r].first + k;
      }
    }
  }

  void do_dot_segments() {
    const std::uint8_t f = in.u8();
    const int home = ((f & 0x80U) != 0U) ? 1 : 0;
    const Pick w = pick(home, in.u8());
    const bool with_bias = (f & 1U) != 0U;
    const Pick bias = with_bias ? pick(home, in.u8()) : Pick();
    const bool direct = (f & 2U) != 0U;
    const Index w_first = direct ? index_arg(home, in.u8()) : w.v.index();
    const int s = direct ? home : side_of(w.v.tape());
    const std::uint8_t lb = in.u8();
    Outcome o;
    Node want;
    want.kind = Kind::kDot;
    want.op = Op::kDotRV;
    want.bias = with_bias ? bias.v.index() : kNo;
    bool trust = false;
    bt::ViewList list;
    if (s != kNone) {
      ListEntry* e = nullptr;
      list = list_arg(s, lb, &o, &e);
      trust = (e == nullptr);
      if (trust && zero_run(s, list)) {
        if (!on(kFZeroRun)) {
          return;
        }
        o.must(kInvArg | kInvHandle);  // a run of no nodes is no run
      }
      if (!direct) {
        operand(&o, s, w, kEmpty);
      }
      if (!recorded(s, w_first, list.total)) {
        o.must(kInvHandle);
      }
      if (with_bias) {
        operand(&o, s, bias, kEmpty);
      }
      capacity(&o, s, 1U, 3U);
      if (e != nullptr) {
        expand(*e, &want);
        want.nw = want.nx;
        for (Index k = 0U; k < want.nw; ++k) {
          want.ws[k] = w_first + k;
        }
      }
    } else {
      list = lists[lb & 1U].list;
    }
    call = direct ? "Tape::dot_views" : (with_bias ? "inner_product_views_with_bias" : "inner_product_views");
    Value<T> r;
    if (direct) {
      r = bt::inner_product(*side[home].tape, w_first, list, with_bias ? &bias.v : nullptr);
    } else if (with_bias) {
      r = bt::inner_product_views_with_bias(w.v, list, bias.v);
    } else {
      r = bt::inner_product_views(w.v, list);
    }
    settle(s, o, r, 1U, 3U, &want, trust);
  }

  void do_matvec() {
    const std::uint8_t f = in.u8();
    const int s = ((f & 0x80U) != 0U) ? 1 : 0;
    const Index w_first = index_arg(s, in.u8());
    const std::uint8_t rb = in.u8();
    const Index rows = (rb < 250U) ? (rb % 5U) : (kNo - (rb % 3U));
    const std::uint8_t bb = in.u8();
    const Index bias_first = ((bb & 1U) != 0U) ? kNo : index_arg(s, bb);
    Outcome o;
    ListEntry* e = nullptr;
    const bt::ViewList list = list_arg(s, in.u8(), &o, &e);
    if ((e == nullptr) && zero_run(s, list)) {
      if (!on(kFZeroRun)) {
        return;
      }
      o.must(kInvArg | kInvHandle);  // a run of no nodes is no run
    }
    if (rows == 0U) {
      o.must(kInvArg);
    }
    if (!recorded(s, w_first, static_cast<std::uint64_t>(rows) * list.total)) {
      o.must(kInvHandle);
    }
    if ((bias_first != kNo) && !recorded(s, bias_first, rows)) {
      o.must(kInvHandle);
    }
    capacity(&o, s, rows, 4U);
    static Node want[kMaxNodes];
    const Index count = (rows <= kMaxNodes) ? rows : 0U;
    for (Index row = 0U; (e != nullptr) && (row < count); ++row) {
      Node& n = want[row];
      n.kind = Kind::kDot;
      n.op = Op::kMatRow;
      expand(*e, &n);
      n.nw = n.nx;
      for (Index k = 0U; k < n.nw; ++k) {
        n.ws[k] = w_first + (row * list.total) + k;
      }
      n.bias = (bias_first == kNo) ? kNo : (bias_first + row);
    }
    call = "Tape::matvec";
    const bt::View rv = bt::matvec(*side[s].tape, w_first, rows, list, bias_first);
    const Value<T> r(side[s].tape, rv.first);  // the first row; kNoView gives an invalid handle
    if ((rv.first != kNo) && (rv.count != rows)) {
      broken("view", "Tape::matvec returned %u nodes for %u rows", static_cast<unsigned>(rv.count), static_cast<unsigned>(rows));
    }
    settle(s, o, r, count, 4U, want, e == nullptr);
  }

  void do_ranges() {
    const std::uint8_t f = in.u8();
    const int s = ((f & 0x80U) != 0U) ? 1 : 0;
    const Index a = index_arg(s, in.u8());
    const Index b = index_arg(s, in.u8());
    const std::uint8_t nb = in.u8();
    const Index n = (nb < 250U) ? (nb % 6U) : (kNo - (nb % 3U));
    Outcome o;
    if (n == 0U) {
      o.must(kInvArg);
    }
    if (!recorded(s, a, n) || !recorded(s, b, n)) {
      o.must(kInvHandle);
    }
    Node want[8];
    if ((f & 1U) == 0U) {  // dot_ranges
      const bool with_bias = (f & 2U) != 0U;
      const Pick bias = with_bias ? pick(s, in.u8()) : Pick();
      if (with_bias) {
        operand(&o, s, bias, kEmpty);
      }
      capacity(&o, s, 1U, 3U);
      want[0].kind = Kind::kDot;
      want[0].op = Op::kDotRR;
      want[0].nw = (n <= kMaxList) ? n : 0U;
      want[0].nx = want[0].nw;
      for (Index k = 0U; k < want[0].nw; ++k) {
        want[0].ws[k] = a + k;
        want[0].xs[k] = b + k;
      }
      want[0].bias = with_bias ? bias.v.index() : kNo;
      call = "Tape::dot_ranges";
      const Value<T> r = bt::inner_product(*side[s].tape, bt::View{a, n}, bt::View{b, n}, with_bias ? &bias.v : nullptr);
      settle(s, o, r, 1U, 3U, want);
    } else {  // scale_shift
      const Index c = index_arg(s, in.u8());
      if (!recorded(s, c, n)) {
        o.must(kInvHandle);
      }
      capacity(&o, s, n, 3U);
      const Index count = (n <= 8U) ? n : 0U;
      for (Index k = 0U; k < count; ++k) {
        want[k].kind = Kind::kDot;
        want[k].op = Op::kScaleShift;
        want[k].nw = 1U;
        want[k].nx = 1U;
        want[k].ws[0] = a + k;
        want[k].xs[0] = b + k;
        want[k].bias = c + k;
      }
      call = "Tape::scale_shift";
      const bt::View rv = bt::scale_shift(*side[s].tape, a, b, c, n);
      const Value<T> r(side[s].tape, rv.first);  // the first output; kNoView gives an invalid handle
      if ((rv.first != kNo) && (rv.count != n)) {
        broken("view", "Tape::scale_shift returned %u nodes for %u", static_cast<unsigned>(rv.count), static_cast<unsigned>(n));
      }
      settle(s, o, r, count, 3U, want);
    }
  }

  // --- marks ----------------------------------------------------------------------
  void do_mark() {
    const std::uint8_t f = in.u8();
    const int s = ((f & 0x80U) != 0U) ? 1 : 0;
    MarkEntry& e = marks[f % 4U];
    call = "mark";
    e.m = side[s].tape->mark();
    e.side = s;
    e.used = true;
    e.stale = false;
    e.stale_by_rewind = false;
    e.clock = side[s].cut_clock;
    if ((e.m.nodes != side[s].size) || (e.m.slots != side[s].slots_used)) {
      broken("size", "tape %d: mark {%u, %u} at size %u slots %u", s, e.m.nodes, e.m.slots, side[s].size,
             side[s].slots_used);
    }
  }

  void cut(int s, Index nodes, Index slots) {
    Side& sd = side[s];
    sd.size = nodes;
    sd.slots_used = slots;
    sd.cuts_since_reset++;
    sd.cut_clock++;
    for (MarkEntry& e : marks) {
      if (e.used && (e.side == s) && ((e.m.nodes > nodes) || (e.m.slots > slots))) {
        e.stale = true;
        e.stale_by_rewind = true;
      }
    }
    for (ListEntry& e : lists) {
      if (e.used && (e.side == s) && ((e.list.slot + 1U + (2U * e.count)) > slots)) {
        e.stale = true;
      }
    }
  }

  void do_rewind() {
    const std::uint8_t f = in.u8();
    const int s = ((f & 0x80U) != 0U) ? 1 : 0;
    Side& sd = side[s];
    bt::Mark m;
    bool valid = false;
    bool may_reject = false;
    const char* tag = "stale-mark";
    const MarkEntry& e = marks[f % 4U];
    if (((f & 0x60U) == 0x60U) || !e.used) {  // hand-made
      if (!on(kFHandmadeMark)) {
        return;
      }
      m = bt::Mark{};
      m.nodes = index_arg(s, in.u8());
      m.slots = in.u8() % (sd.slots_used + 2U);
      tag = "handmade-mark";
      call = "rewind(hand-made mark)";
    } else {
      m = e.m;
      if (e.side != s) {
        if (!on(kFForeignMark)) {
          return;
        }
        tag = "foreign-mark";
        call = "rewind(mark of the other tape)";
      } else if (e.stale) {
        if (!on(e.stale_by_rewind ? kFStaleMark : kFResetMark)) {
          return;
        }
        call = e.stale_by_rewind ? "rewind(mark a rewind made stale)" : "rewind(mark taken before reset)";
        tag = e.stale_by_rewind ? "stale-mark" : "reset-mark";
      } else {
        valid = true;
        call = "rewind(mark)";
        // The tape remembers kMarkLevels rewind targets: after more cuts
        // since the mark it may reject it (never accept a bad one).
        may_reject = (sd.cut_clock - e.clock) >= 1U && sd.cuts_since_reset > kMarkLevels;
      }
    }
    const Status got = sd.tape->rewind(m);
    if (valid && (got == Status::kOk)) {
      if ((m.nodes != sd.size) || (m.slots != sd.slots_used)) {
        cut(s, m.nodes, m.slots);
      }
      check_all();
      check_structure(s);
      return;
    }
    if (valid && !(may_reject && (got == Status::kInvalidArgument))) {
      broken("mark", "tape %d: rewind to a valid mark {%u, %u} at size %u slots %u gave %s", s, m.nodes, m.slots,
             sd.size, sd.slots_used, bt::status_name(got));
    }
    if (!valid && (got != Status::kInvalidArgument)) {
      broken(tag, "tape %d: %s {%u, %u} at size %u slots %u gave %s", s, call, m.nodes, m.slots, sd.size,
             sd.slots_used, bt::status_name(got));
    }
    check_all();
  }

  // --- backward and gradients ------------------------------------------------------------
  void do_backward() {
    const std::uint8_t f = in.u8();
    const int s = ((f & 0x80U) != 0U) ? 1 : 0;
    Side& sd = side[s];
    const Pick root = pick(s, in.u8());
    call = "backward";
    const Status got = sd.tape->backward(root.v);
    Outcome o;
    operand(&o, s, root, kEmpty);
    if (sd.status != Status::kOk) {
      if (got != sd.status) {
        broken("status", "tape %d: backward after an error returned %s, not the sticky %s", s,
               bt::status_name(got), bt::status_name(sd.status));
      }
      check_all();
      return;
    }
    if (got != Status::kOk) {
      if ((!o.certain && !o.maybe) || ((o.allowed & bit(got)) == 0U)) {
        broken("status", "tape %d: backward returned %s (allowed mask %#x)", s, bt::status_name(got), o.allowed);
      }
      check_all();
      return;
    }
    if (o.certain) {
      broken("status", "tape %d: backward from a bad root returned ok (allowed mask %#x)", s, o.allowed);
    }
    check_gradients(s, root.v.index());
    check_all();
    check_structure(s);
  }

  void check_gradients(int s, Index r) {
    Side& sd = side[s];
    const bt::Tape<T>& t = *sd.tape;
    static Wide adj[kMaxNodes];
    static Wide mag[kMaxNodes];
    static bool reach[kMaxNodes];
    static bool unsure[kMaxNodes];
    for (Index i = 0U; i <= r; ++i) {
      adj[i] = 0;
      mag[i] = 0;
      reach[i] = false;
      unsure[i] = false;
    }
    reach[r] = true;
    adj[r] = 1;
    mag[r] = 1;
    const Wide k_tol = (2048 + (64 * static_cast<Wide>(r))) * Limits<T>::eps;
    Partial parts[2U * kMaxList + 1U];
    for (Index i = r + 1U; i-- > 0U;) {
      if (!reach[i] || (bt::node_op(t, i) == Op::kLeaf)) {
        continue;
      }
      Node n;
      const char* why = decode(t, i, &n);
      if (why != nullptr) {
        broken("structure", "tape %d, backward: node %u: %s", s, i, why);
      }
      bool unstable = false;
      const Index count = partials(t, i, n, parts, &unstable);
      unsure[i] = unsure[i] || !finite(adj[i]) || (mag[i] > Limits<T>::big_adj);
      const bool certainly_zero = !unsure[i] && (mag[i] == 0);
      const bool maybe_zero = unsure[i] || (std::fabs(adj[i]) <= ((k_tol * mag[i]) + Limits<T>::tiny));
      for (Index p = 0U; p < count; ++p) {
        const Partial& q = parts[p];
        reach[q.k] = true;
        if (certainly_zero) {
          continue;  // the gradient of a node the root does not feed is 0: nothing flows
        }
        const bool wild = unstable || !finite(q.d) || (std::fabs(q.d) > Limits<T>::big_d);
        if (unsure[i] || wild) {
          if (wild && !maybe_zero) {
            unsure[q.k] = true;  // a non-finite or huge contribution: not compared
          } else if (wild || unsure[i]) {
            unsure[q.k] = true;
          }
          continue;
        }
        if ((q.d != 0) && (std::fabs(q.d) < Limits<T>::tiny)) {
          // A local derivative below T's normal range (softmax's exp(x - out)
          // of a far smaller operand): the library computes it in T, where it
          // keeps few digits or is 0, whatever the gradient it multiplies.
          unsure[q.k] = true;
          continue;
        }
        const Wide m = mag[i] * q.scale;
        if (m == 0) {
          continue;  // exactly 0 in T as well (a zero factor)
        }
        if (m < Limits<T>::tiny) {
          // Near or below T's normal range the library's term may round to
          // 0 (and that node then be skipped) or keep few digits; larger
          // local derivatives further down could magnify the difference.
          unsure[q.k] = true;
          continue;
        }
        adj[q.k] += adj[i] * q.d;
        mag[q.k] += m;
      }
    }
    if (g_trace) {
      for (Index i = 0U; i <= r; ++i) {
        Node n;
        static_cast<void>(decode(t, i, &n));
        std::fprintf(stderr, "  node %2u op %2u value %-12.6g grad %-12.6g expected %-12.6Lg (mag %.3Lg%s%s) operands",
                     i, static_cast<unsigned>(n.op), static_cast<double>(t.value(i)), static_cast<double>(t.grad(i)),
                     adj[i], mag[i], reach[i] ? "" : ", unreached", unsure[i] ? ", unsure" : "");
        for (Index k = 0U; k < n.nw; ++k) {
          std::fprintf(stderr, " w%u", n.ws[k]);
        }
        for (Index k = 0U; k < n.nx; ++k) {
          std::fprintf(stderr, " x%u", n.xs[k]);
        }
        if (n.kind == Kind::kUnary || n.kind == Kind::kBinary) {
          std::fprintf(stderr, " a%u b%u", n.a, n.b);
        }
        std::fprintf(stderr, "\n");
      }
    }
    for (Index i = 0U; i <= r; ++i) {
      unsure[i] = unsure[i] || !finite(adj[i]) || (mag[i] > Limits<T>::big_adj);
      const Wide got = static_cast<Wide>(t.grad(i));
      const Wide tol = (k_tol * mag[i]) + Limits<T>::tiny;
      if ((bt::node_op(t, i) == Op::kInput) && sd.leaf_unknown[i]) {
        continue;  // an input's gradient is not modelled
      }
      if (bt::node_op(t, i) == Op::kLeaf) {
        const Wide old = static_cast<Wide>(sd.grads[i]);
        if (!reach[i] || (mag[i] == 0 && !unsure[i])) {
          if (on(kFGradient) && !((got == old) || (std::isnan(got) && std::isnan(old)))) {
            broken("gradient", "tape %d, backward(%u): leaf %u the root does not depend on changed from %Lg to %Lg",
                   s, r, i, old, got);
          }
          continue;
        }
        if (unsure[i] || sd.leaf_unknown[i]) {
          sd.leaf_unknown[i] = true;
          continue;
        }
        sd.leaf_grad[i] += adj[i];
        sd.leaf_err[i] += tol;
        if (on(kFGradient) && !(std::fabs(got - sd.leaf_grad[i]) <= sd.leaf_err[i])) {
          broken("gradient", "tape %d, backward(%u): leaf %u has gradient %.17Lg, expected %.17Lg (+- %Lg)", s, r, i,
                 got, sd.leaf_grad[i], sd.leaf_err[i]);
        }
      } else if (i == r) {
        if (got != 1) {
          broken("gradient", "tape %d, backward(%u): the root's gradient is %Lg", s, r, got);
        }
      } else if (!reach[i]) {
        // (After backward from a leaf the library leaves interior gradients
        // of an earlier sweep in place: not compared then.)
        if (on(kFGradient) && (bt::node_op(t, r) != Op::kLeaf) && (got != 0)) {
          broken("gradient", "tape %d, backward(%u): node %u the root does not reach has gradient %Lg", s, r, i, got);
        }
      } else if (!unsure[i] && on(kFGradient) && !(std::fabs(got - adj[i]) <= tol)) {
        broken("gradient", "tape %d, backward(%u): node %u (op %u) has gradient %.17Lg, expected %.17Lg (+- %Lg)", s,
               r, i, static_cast<unsigned>(bt::node_op(t, i)), got, adj[i], tol);
      }
    }
    for (Index i = 0U; i < sd.size; ++i) {
      sd.grads[i] = t.grad(i);  // interior nodes past the root keep what they held: not promised
    }
  }

  void do_zero_grad() {
    const std::uint8_t f = in.u8();
    const int s = ((f & 0x80U) != 0U) ? 1 : 0;
    Side& sd = side[s];
    std::uint64_t first = 0U;
    std::uint64_t end = sd.size;
    if ((f & 1U) != 0U) {
      call = "zero_grad(first, count)";
      const Index a = index_arg(s, in.u8());
      const std::uint8_t cb = in.u8();
      const Index count = (cb < 240U) ? (cb % 8U) : (kNo - (cb % 4U));
      sd.tape->zero_grad(a, count);
      first = a;
      end = std::min<std::uint64_t>(static_cast<std::uint64_t>(a) + count, sd.size);
    } else {
      call = "zero_grad()";
      sd.tape->zero_grad();
    }
    for (std::uint64_t i = first; i < end; ++i) {
      sd.grads[i] = T(0);
      sd.leaf_grad[i] = 0;
      sd.leaf_err[i] = 0;
      sd.leaf_unknown[i] = bt::node_op(*sd.tape, static_cast<Index>(i)) == Op::kInput;
    }
    check_all();
  }

  void do_reset() {
    const std::uint8_t f = in.u8();
    const int s = ((f & 0x80U) != 0U) ? 1 : 0;
    Side& sd = side[s];
    if ((f & 1U) != 0U) {
      call = "clear_status";
      sd.tape->clear_status();
      if (sd.usable) {
        sd.status = Status::kOk;
      }
      check_all();
      return;
    }
    call = "reset";
    sd.tape->reset();
    if (sd.usable) {
      bool by_rewind[4];
      for (int k = 0; k < 4; ++k) {
        by_rewind[k] = marks[k].stale_by_rewind;
      }
      cut(s, 0U, 0U);
      for (int k = 0; k < 4; ++k) {
        marks[k].stale_by_rewind = by_rewind[k];
      }
      sd.cuts_since_reset = 0U;
      sd.status = Status::kOk;
      for (MarkEntry& e : marks) {
        if (e.used && (e.side == s)) {
          e.stale = true;  // documented: every earlier mark becomes stale
        }
      }
    }
    check_all();
  }

  void run(const std::uint8_t* data, std::size_t size) {
    in = Input{data, size, 1U};
    for (Handle& h : pool) {
      h = Handle();
    }
    for (MarkEntry& e : marks) {
      e = MarkEntry();
    }
    for (ListEntry& e : lists) {
      e = ListEntry();
    }
    pool_next = 0U;
    configure(0);
    configure(1);
    check_all();
    for (step = 0U; in.more() && (step < 256U); ++step) {
      switch (in.u8() % 21U) {
        case 0U:
        case 1U: do_leaf(); break;
        case 2U:
        case 3U: do_unary(); break;
        case 4U:
        case 5U: do_binary(); break;
        case 6U: do_reduce(); break;
        case 7U: do_mean_and_mean_squares(); break;
        case 8U: do_dot(); break;
        case 9U: do_lse(); break;
        case 10U: do_segments(); break;
        case 11U: do_dot_segments(); break;
        case 12U: do_matvec(); break;
        case 13U: do_ranges(); break;
        case 14U: do_mark(); break;
        case 15U:
        case 16U: do_rewind(); break;
        case 17U: do_backward(); break;
        case 18U: do_zero_grad(); break;
        case 19U: do_reset(); break;
        default: do_layout(); break;
      }
      check_all();
      if (g_trace) {
        std::fprintf(stderr, "%3u %-34s A: size %2u slots %3u %-22s B: size %2u slots %3u %s\n", step, call,
                     side[0].size, side[0].slots_used, bt::status_name(side[0].status), side[1].size,
                     side[1].slots_used, bt::status_name(side[1].status));
      }
      call = "";
    }
    check_structure(0);
    check_structure(1);
  }
};

Driver<float> g_float;
Driver<double> g_double;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  static_cast<void>(argc);
  static_cast<void>(argv);
  g_trace = std::getenv("FUZZ_TAPE_TRACE") != nullptr;
  const char* skip = std::getenv("FUZZ_TAPE_SKIP");
  if (skip != nullptr) {
    const struct {
      const char* name;
      unsigned bit;
    } names[] = {{"stale-mark", kFStaleMark}, {"foreign-mark", kFForeignMark}, {"handmade-mark", kFHandmadeMark},
                 {"empty", kFEmpty},          {"null", kFNull},                {"nonfinite", kFNonfinite},
                 {"reduce-op", kFReduceOp},   {"gradient", kFGradient},        {"interior-name", kFName},
                 {"reset-mark", kFResetMark}, {"zero-run", kFZeroRun}};
    for (const auto& n : names) {
      if (std::strstr(skip, n.name) != nullptr) {
        g_skip |= n.bit;
      }
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0U) {
    return 0;
  }
  if ((data[0] & 1U) != 0U) {
    g_double.run(data, size);
  } else {
    g_float.run(data, size);
  }
  return 0;
}

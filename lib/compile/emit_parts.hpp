// SPDX-License-Identifier: Apache-2.0
// The emitter's text and node model (lib/compile/emit.cpp): the op
// enumerators the generated code names, the writer over the caller's sink,
// and how the step sees a node (an input, a constant, a node, a target, the
// class loss) and a run of alike nodes. Private to the library.
#ifndef BURTORCH_LIB_COMPILE_EMIT_PARTS_HPP
#define BURTORCH_LIB_COMPILE_EMIT_PARTS_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/core/handles.hpp"
#include "burtorch/core/op.hpp"
#include "burtorch/index.hpp"
#include "burtorch/status.hpp"
#include "burtorch/tools/stream.hpp"

namespace burtorch {
namespace compile {
namespace emit_parts {

// The enumerators of the core ops, in code order (generated code names them).
constexpr const char* kOpNames[] = {
    "kLeaf",      "kInput",     "kAdd",         "kSub",         "kMul",       "kDiv",       "kMean2",
    "kAddSquares2", "kMeanSquares2", "kNegMean2", "kNeg",       "kAddConst",  "kConstSub",  "kConstDiv",
    "kRelu",      "kTanh",      "kExp",         "kLog",         "kNegLog",    "kSigmoid",   "kInv",
    "kSqr",       "kPow3",      "kSqrt",        "kInvSqrt",     "kMulConst",  "kDivConst",  "kSumR",
    "kSumL",      "kSubR",      "kSubL",        "kProdR",       "kProdL",     "kMeanR",     "kMeanL",
    "kSumSqR",    "kSumSqL",    "kMeanSqR",     "kMeanSqL",     "kNegMeanR",  "kNegMeanL",  "kVarR",
    "kVarL",      "kVarBiasedR", "kVarBiasedL", "kDotRR",       "kDotRL",     "kDotLL",     "kDotRV",
    "kLogSumExpR", "kLogSumExpL", "kMatRow",    "kScaleShift"};
static_assert(sizeof(kOpNames) / sizeof(kOpNames[0]) == static_cast<std::size_t>(Op::kCount),
              "a name for every core op");

// Text through the sink; the first error stays and stops the writing.
class Writer {
 public:
  explicit Writer(ByteSink sink) noexcept : sink_(sink) {}
  Status status() const noexcept { return status_; }
  Writer& put(const char* text) noexcept {
    if (status_ == Status::kOk) {
      status_ = write_text(sink_, text);
    }
    return *this;
  }
  Writer& num(std::uint64_t value) noexcept {
    char digits[24];
    const std::size_t n = format_unsigned(value, digits, sizeof(digits));
    if (status_ == Status::kOk) {
      status_ = write_bytes(sink_, digits, n);
    }
    return *this;
  }
  // An Index literal of the generated code.
  Writer& index(Index value) noexcept { return num(value).put("U"); }
  Writer& hex(std::uint64_t value) noexcept {
    char digits[20];
    std::size_t n = 0U;
    digits[n++] = '0';
    digits[n++] = 'x';
    for (int shift = 60; shift >= 0; shift -= 4) {
      const auto nibble = static_cast<unsigned>((value >> static_cast<unsigned>(shift)) & 0xFU);
      if ((nibble != 0U) || (n > 2U) || (shift == 0)) {
        digits[n++] = "0123456789abcdef"[nibble];
      }
    }
    if (status_ == Status::kOk) {
      status_ = write_bytes(sink_, digits, n);
    }
    return *this;
  }

 private:
  ByteSink sink_;
  Status status_ = Status::kOk;
};

// How the step treats a node after the mark.
enum class Kind : std::uint8_t { kInputNode, kConstant, kNode, kTarget, kClass };
struct Node {
  Kind kind;
  Op op;
  Index a;
  Index b;  // kTarget: the target's index; kClass: the logits' first node
};
// A run of alike nodes: node i0 + k has operands a + k * da, b + k * db.
struct Run {
  Index first;
  Index count;
  Node node;
  Index da;
  Index db;
};

inline bool in_view(View v, Index i) noexcept { return (v.count != 0U) && (i >= v.first) && ((i - v.first) < v.count); }

inline bool is_source(Op k) noexcept { return (k == Op::kLeaf) || (k == Op::kInput); }

inline bool identifier(const char* name) noexcept {
  bool ok = (name != nullptr) && (name[0] != '\0');
  for (std::size_t i = 0U; ok && (name[i] != '\0'); ++i) {
    const char c = name[i];
    const bool letter = ((c >= 'a') && (c <= 'z')) || ((c >= 'A') && (c <= 'Z')) || (c == '_');
    const bool digit = (c >= '0') && (c <= '9');
    ok = (i < 64U) && (letter || (digit && (i != 0U)));
  }
  return ok;
}


}  // namespace emit_parts
}  // namespace compile
}  // namespace burtorch

#endif  // BURTORCH_LIB_COMPILE_EMIT_PARTS_HPP

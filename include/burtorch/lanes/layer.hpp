// SPDX-License-Identifier: Apache-2.0
/// @file
/// Internal: the forward loops of a layer over shared weights on a tape of
/// Lanes (lanes/ops.hpp's lane_matvec: one sample per lane, the weights
/// read as shared scalars of an ordinary tape), and its descriptor.
/// lanes/layer_grad.hpp holds its backward, lanes/gather.hpp the loops of
/// the other lane ops.
///
/// A layer's matrix-vector product over L lanes is a small matrix product
/// with L columns: the forward pass keeps a block of rows in vector
/// registers and reads each weight once per L samples; the backward pass
/// forms the input's gradient W^T G the same way and the weights' gradient
/// G X^T from a transposed tile of the inputs, so that a weight's gradient
/// gets its L terms from one vector multiply-add per lane, in lane order,
/// with no horizontal sum per weight.
///
/// The loops run on generic vectors (lanes/vector.hpp), which every target
/// lowers to its own registers (AVX-512, AVX2, SSE2, Neon, Helium) or to
#ifndef BURTORCH_LANES_LAYER_HPP
#define BURTORCH_LANES_LAYER_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "burtorch/core/detail/math.hpp"
#include "burtorch/lanes/helium.hpp"
#include "burtorch/lanes/vector.hpp"
#include "burtorch/index.hpp"
#include "burtorch/lanes/lanes.hpp"


namespace burtorch {
namespace detail {

/// Argument slots a pointer takes.
constexpr Index kPointerSlots = static_cast<Index>((sizeof(void*) + sizeof(Index) - 1U) / sizeof(Index));
/// Stores the pointer p in slots [at, at + kPointerSlots) (BT-DEV-010).
template <class P>
inline void store_pointer(Index* slots, Index at, P* p) noexcept {
  std::memcpy(&slots[at], &p, sizeof(p));  // BT-DEV-010
}
/// The pointer store_pointer stored at slot `at`.
template <class P>
inline P* load_pointer(const Index* slots, Index at) noexcept {
  P* p = nullptr;
  std::memcpy(&p, &slots[at], sizeof(p));  // BT-DEV-010
  return p;
}

/// The shared parameters a lane op's descriptor names: values and
/// gradients of an ordinary tape (see LaneParams in core/tape.hpp).
template <class S>
struct ParamArrays {
  const S* values;  ///< values
  S* grads;         ///< gradients
};
/// Stores the two pointers at slot `at` (2 * kPointerSlots slots).
template <class S>
inline void store_params(Index* slots, Index at, const S* values, S* grads) noexcept {
  store_pointer(slots, at, values);
  store_pointer(slots, at + kPointerSlots, grads);
}
/// What store_params stored at slot `at`.
template <class S>
inline ParamArrays<S> load_params(const Index* slots, Index at) noexcept {
  return ParamArrays<S>{load_pointer<const S>(slots, at), load_pointer<S>(slots, at + kPointerSlots)};
}

// --- a layer over shared weights -------------------------------------------
// Descriptor of lane_matvec at slot d: the input's view list, its
// width n, the rows, the weights' and biases' offsets in the shared arrays
// (bias kNoIndex: none), then the shared arrays. Node `head` (op
// kLaneMat) is recorded just before the rows (kLaneMatRow, operand b =
// the row), so the sweep reaches it after every row: its backward runs the
// whole layer's backward at once.
constexpr Index kMsList = 0U;     ///< slot of the input's view list
constexpr Index kMsWidth = 1U;    ///< n: inputs per row
constexpr Index kMsRows = 2U;     ///< rows
constexpr Index kMsWeight = 3U;   ///< first weight (row-major rows x n)
constexpr Index kMsBias = 4U;     ///< first bias, or kNoIndex
constexpr Index kMsUniform = 5U;  ///< the runs every lane shares: two slots, bits 0-31 and 32-63 (below)
constexpr Index kMsParams = 7U;   ///< the shared arrays (store_params)
constexpr Index kMsSlots = kMsParams + (2U * kPointerSlots);  ///< slots of the descriptor

/// Bytes of one vector register of the target (kHardwareLanes floats; a
/// scalar register where there are none): the unit the blocks below are
/// sized in.
template <class S>
constexpr std::size_t register_bytes() noexcept {
  return ((kHardwareLanes * sizeof(float)) > sizeof(S)) ? (kHardwareLanes * sizeof(float)) : sizeof(S);
}
/// Vector registers of the target: 32 with AVX-512 and on AArch64, 8 on
/// Helium, 16 elsewhere (SSE2, AVX2, ARMv7 Neon; a core without vector
/// registers gets the same blocks in scalar registers). The blocks below keep
/// at most about half of them as accumulators, so nothing spills.
#if defined(__AVX512F__) || defined(__aarch64__)
constexpr std::size_t kVectorRegisters = 32U;
#elif defined(__ARM_FEATURE_MVE)
constexpr std::size_t kVectorRegisters = 8U;
#else
constexpr std::size_t kVectorRegisters = 16U;
#endif

/// Registers one vector of N values of S takes.
template <class S, std::size_t N>
constexpr std::size_t registers_of() noexcept {
  return ((N * sizeof(S)) + register_bytes<S>() - 1U) / register_bytes<S>();
}
/// The lanes a lane vector's part holds: one register's worth (all N lanes
/// where they fit in one register). A lane vector is registers_of<S, N>()
/// parts of part_lanes<S, N>() lanes; the loops below work part by part, so
/// every vector they hold is one register (a vector wider than a register
/// makes the compiler shuffle it through memory).
template <class S, std::size_t N>
constexpr std::size_t part_lanes() noexcept {
  return N / registers_of<S, N>();
}
/// Rows the forward product keeps in registers at once: at most half of the
/// registers as accumulators and at most 8 rows (8 with AVX-512 and AVX2, 4
/// on Helium), at least 1.
template <class S, std::size_t N>
constexpr Index matvec_block() noexcept {
  constexpr std::size_t kRows = (kVectorRegisters / 2U) / registers_of<S, N>();
  return static_cast<Index>((kRows > 8U) ? 8U : ((kRows > 1U) ? kRows : 1U));
}
/// Inputs whose gradients the input's backward keeps in registers at once:
/// half of the registers as accumulators (16 with AVX-512, 8 with AVX2), at
/// least 1.
template <class S, std::size_t N>
constexpr Index input_block() noexcept {
  return static_cast<Index>((((kVectorRegisters / 2U) / registers_of<S, N>()) > 1U)
                                ? ((kVectorRegisters / 2U) / registers_of<S, N>())
                                : 1U);
}

// --- inputs every lane shares ------------------------------------------------
// A run of a layer's input that is one embedding row every lane of the
// sweep gathered from the same table row (a context position all the
// samples share: mostly the padding before a word's start) holds the same
// vector in every lane. The layer reads such a run as shared scalars: the
// forward adds one inner product per row to every lane (the weights read
// along the row instead of once per lane), the weights' gradient adds (the
// row's gradient summed over the lanes) * x, and the run's gradient, which
// the gather sums over the lanes anyway, is formed once as W^T (the lanes'
// sums) and held in lane 0. The recorder marks such runs
// (lane_matvec, bit r of the descriptor's mask: run r); the first
// kUniformRuns runs of a list can be marked, the others take the lanes'
// path.
constexpr Index kUniformRuns = 64U;

/// True if run r is marked in `uniform`.
inline bool run_uniform(std::uint64_t uniform, Index r) noexcept {
  return (r < kUniformRuns) && (((uniform >> r) & 1U) != 0U);
}
/// Stores the mask at slots [at, at + 2).
inline void store_uniform(Index* slots, Index at, std::uint64_t uniform) noexcept {
  slots[at] = static_cast<Index>(uniform & 0xFFFFFFFFU);
  slots[at + 1U] = static_cast<Index>(uniform >> 32U);
}
/// The mask store_uniform stored at slot `at`.
inline std::uint64_t load_uniform(const Index* slots, Index at) noexcept {
  return static_cast<std::uint64_t>(slots[at]) | (static_cast<std::uint64_t>(slots[at + 1U]) << 32U);
}

/// A stretch of a layer's input: a marked run alone, or consecutive
/// unmarked runs whose nodes follow one another, as one (the loops below
/// tile it as one run).
struct Segment {
  Index first = 0U;      ///< first node
  Index count = 0U;      ///< nodes
  std::size_t k = 0U;    ///< its first column in the weights' rows
  Index run = 0U;        ///< its (first) run in the list
  bool uniform = false;  ///< a marked run
};
/// The segments of a view list (slots: runs, then a first/count pair per
/// run) in order.
class Segments {
 public:
  Segments(const Index* list, std::uint64_t uniform) noexcept : list_(list), uniform_(uniform) {}
  /// The next segment in s; false after the last.
  bool next(Segment& s) noexcept {
    const Index runs = list_views(list_);
    if (r_ >= runs) {
      return false;
    }
    s.first = first(r_);
    s.count = count(r_);
    s.k = k_;
    s.run = r_;
    s.uniform = run_uniform(uniform_, r_);
    ++r_;
    if (!s.uniform) {
      while ((r_ < runs) && !run_uniform(uniform_, r_) && (first(r_) == (s.first + s.count))) {
        s.count += count(r_);
        ++r_;
      }
    }
    k_ += s.count;
    return true;
  }

 private:
  Index first(Index r) const noexcept { return list_[1U + (2U * r)]; }
  Index count(Index r) const noexcept { return list_[2U + (2U * r)]; }
  const Index* list_;
  std::uint64_t uniform_;
  Index r_ = 0U;
  std::size_t k_ = 0U;
};

/// Columns of one register of S.
template <class S>
constexpr Index register_columns() noexcept {
  return static_cast<Index>(register_bytes<S>() / sizeof(S));
}

/// u[b] = sum over the marked runs of w[b * n + k + c] * x[c] for the kRows
/// rows from w, x the table row row_of(run) returns: a register of columns
/// per multiply-add, one horizontal sum per row.
template <Index kRows, class S, class RowOf>
inline void uniform_dots(const Index* list, std::uint64_t uniform, const RowOf& row_of, const S* w, std::size_t n,
                         S (&u)[kRows]) noexcept {
  constexpr Index kRegister = register_columns<S>();
  using R = typename VectorOf<S, kRegister>::Type;
  R acc[kRows] = {};
  S tail[kRows] = {};
  Segments walk(list, uniform);
  Segment s;
  while (walk.next(s)) {
    if (s.uniform) {
      const S* x = row_of(s.run);
      Index c = 0U;
      for (; (c + kRegister) <= s.count; c += kRegister) {
        R xv;
        load_vector(xv, &x[c]);
        for (Index b = 0U; b < kRows; ++b) {
          R wv;
          load_vector(wv, &w[(static_cast<std::size_t>(b) * n) + s.k + c]);
          acc[b] += wv * xv;
        }
      }
      for (; c < s.count; ++c) {
        for (Index b = 0U; b < kRows; ++b) {
          tail[b] += w[(static_cast<std::size_t>(b) * n) + s.k + c] * x[c];
        }
      }
    }
  }
  for (Index b = 0U; b < kRows; ++b) {
    S part[kRegister];  // BT-DEV-013
    store_vector(part, acc[b]);
    S sum = tail[b];
    for (Index i = 0U; i < kRegister; ++i) {
      sum += part[i];
    }
    u[b] = sum;
  }
}

/// acc[b] += sum_j w[b * n + j] x[j] for the kRows rows from w over the
/// `count` lane values from x, in j order.
template <Index kRows, class S, std::size_t N, class V, std::size_t kParts>
inline void matvec_segment(const Lanes<S, N>* x, Index count, const S* w, std::size_t n,
                           V (&acc)[kRows][kParts]) noexcept {
  constexpr std::size_t kWidth = part_lanes<S, N>();
  for (Index j = 0U; j < count; ++j) {
    V xj[kParts];
    for (std::size_t q = 0U; q < kParts; ++q) {
      load_vector(xj[q], &x[j].lane[q * kWidth]);
    }
    for (Index b = 0U; b < kRows; ++b) {
      const S wb = w[(static_cast<std::size_t>(b) * n) + j];
      for (std::size_t q = 0U; q < kParts; ++q) {
        acc[b][q] += wb * xj[q];
      }
    }
  }
}

/// out[b] = sum_k w[b * n + k] x[k] (+ bias[b]) for the kRows rows from w,
/// x the lane values of the runs of the view list `list` (slots: runs,
/// then a first/count pair per run); kRows * parts accumulators in
/// registers. In each lane the terms are added in k order and the bias
/// last, as one sample's inner product adds them; the runs marked in
/// `uniform` (table rows row_of(run)) add their inner products, computed
/// along the rows, before the bias.
template <Index kRows, class S, std::size_t N, class RowOf>
inline void matvec_rows(const Lanes<S, N>* v, const Index* list, std::uint64_t uniform, const RowOf& row_of,
                        const S* w, std::size_t n, const S* bias, Lanes<S, N>* out) noexcept {
  constexpr std::size_t kParts = registers_of<S, N>();
  constexpr std::size_t kWidth = part_lanes<S, N>();
  using V = typename VectorOf<S, kWidth>::Type;
  S shared[kRows] = {};  // the marked runs' terms, the same in every lane
  if (uniform != 0U) {
    uniform_dots<kRows>(list, uniform, row_of, w, n, shared);
  }
  if constexpr (kHelium<S, N>) {  // lanes/helium.hpp: the same sums, in Helium registers
    HeliumLanes<S, N>::template rows<kRows>(
        v, list, [uniform](Index /*first*/, Index r) noexcept { return run_uniform(uniform, r); }, w, n,
        (uniform != 0U) ? shared : nullptr, bias, out);
    return;
  }
  V acc[kRows][kParts] = {};
  Segments walk(list, uniform);
  Segment s;
  while (walk.next(s)) {
    if (!s.uniform) {
      matvec_segment<kRows>(&v[s.first], s.count, &w[s.k], n, acc);
    }
  }
  for (Index b = 0U; b < kRows; ++b) {
    for (std::size_t q = 0U; q < kParts; ++q) {
      if (uniform != 0U) {
        acc[b][q] += shared[b];
      }
      if (bias != nullptr) {
        acc[b][q] += bias[b];
      }
      store_vector(&out[b].lane[q * kWidth], acc[b][q]);
    }
  }
}

/// A layer's outputs out[o], o < rows, over the n inputs of `list` (the
/// runs marked in `uniform` read from row_of(run)):
/// matvec_rows in blocks of matvec_block() rows (the weights read once per
/// N samples), then row by row.
template <class S, std::size_t N, class RowOf>
void lanes_matvec(const Lanes<S, N>* v, const Index* list, std::uint64_t uniform, const RowOf& row_of, const S* w,
                  const S* bias, Index rows, Index n, Lanes<S, N>* out) noexcept {
  constexpr Index kBlock = matvec_block<S, N>();
  Index o = 0U;
  for (; (o + kBlock) <= rows; o += kBlock) {
    matvec_rows<kBlock>(v, list, uniform, row_of, &w[static_cast<std::size_t>(o) * n], n,
                        (bias != nullptr) ? &bias[o] : nullptr, &out[o]);
  }
  for (; o < rows; ++o) {
    matvec_rows<1U>(v, list, uniform, row_of, &w[static_cast<std::size_t>(o) * n], n,
                    (bias != nullptr) ? &bias[o] : nullptr, &out[o]);
  }
}

}  // namespace detail
}  // namespace burtorch

#endif  // BURTORCH_LANES_LAYER_HPP

// SPDX-License-Identifier: Apache-2.0
/// @file
/// Internal: the loops behind the lane ops (op.hpp: kGatherShared,
/// kPickLanes, kMatShared, kMatRowShared, kScaleShiftShared), the ops that
/// let a tape of Lanes (burtorch/lanes.hpp: one sample per lane) read the
/// parameters of an ordinary tape as shared scalars and add their gradients
/// to it, summed over the lanes.
///
/// A layer's matrix-vector product over L lanes is a small matrix product
/// with L columns: the forward pass keeps a block of rows in vector
/// registers and reads each weight once per L samples; the backward pass
/// forms the input's gradient W^T G the same way and the weights' gradient
/// G X^T from a transposed tile of the inputs, so that a weight's gradient
/// gets its L terms from one vector multiply-add per lane, in lane order,
/// with no horizontal sum per weight.
///
/// The loops run on generic vectors (detail/vector.hpp), which every target
/// lowers to its own registers (AVX-512, AVX2, SSE2, Neon, Helium) or to
/// scalar code.
#ifndef BURTORCH_DETAIL_LANE_MATH_HPP
#define BURTORCH_DETAIL_LANE_MATH_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "burtorch/detail/math.hpp"
#include "burtorch/detail/vector.hpp"
#include "burtorch/index.hpp"
#include "burtorch/lanes.hpp"

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
/// gradients of an ordinary tape (see SharedParams in tape.hpp).
template <class S>
struct SharedArrays {
  const S* values;  ///< values
  S* grads;         ///< gradients
};
/// Stores the two pointers at slot `at` (2 * kPointerSlots slots).
template <class S>
inline void store_shared(Index* slots, Index at, const S* values, S* grads) noexcept {
  store_pointer(slots, at, values);
  store_pointer(slots, at + kPointerSlots, grads);
}
/// What store_shared stored at slot `at`.
template <class S>
inline SharedArrays<S> load_shared(const Index* slots, Index at) noexcept {
  return SharedArrays<S>{load_pointer<const S>(slots, at), load_pointer<S>(slots, at + kPointerSlots)};
}

// --- a layer over shared weights -------------------------------------------
// Descriptor of Tape::matvec_shared at slot d: the input's view list, its
// width n, the rows, the weights' and biases' offsets in the shared arrays
// (bias kNoIndex: none), then the shared arrays. Node `head` (op
// kMatShared) is recorded just before the rows (kMatRowShared, operand b =
// the row), so the sweep reaches it after every row: its backward runs the
// whole layer's backward at once.
constexpr Index kMsList = 0U;     ///< slot of the input's view list
constexpr Index kMsWidth = 1U;    ///< n: inputs per row
constexpr Index kMsRows = 2U;     ///< rows
constexpr Index kMsWeight = 3U;   ///< first weight (row-major rows x n)
constexpr Index kMsBias = 4U;     ///< first bias, or kNoIndex
constexpr Index kMsUniform = 5U;  ///< the runs every lane shares: two slots, bits 0-31 and 32-63 (below)
constexpr Index kMsShared = 7U;   ///< the shared arrays (store_shared)
constexpr Index kMsSlots = kMsShared + (2U * kPointerSlots);  ///< slots of the descriptor

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
// (Tape::matvec_shared, bit r of the descriptor's mask: run r); the first
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
    const Index runs = list_runs(list_);
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

/// gx[c] += sum_o w[o * n + c] g[o] over rows o = top - 1 down to lo for
/// the kCols inputs from gx (w offset to their first column): the block's
/// rows in descending order (the order in which a sample's sweep reaches
/// them) summed in kCols * parts registers from zero, then added to gx.
/// (Starting the sums from gx instead made GCC copy gx to the stack with a
/// library memcpy first: 3 % of an MLP step.)
template <Index kCols, class S, std::size_t N>
inline void input_grad_cols(const Lanes<S, N>* g, const S* w, Index lo, Index top, std::size_t n,
                            Lanes<S, N>* gx) noexcept {
  constexpr std::size_t kParts = registers_of<S, N>();
  constexpr std::size_t kWidth = part_lanes<S, N>();
  using V = typename VectorOf<S, kWidth>::Type;
  V acc[kCols][kParts] = {};
  for (Index o = top; o-- > lo;) {
    V go[kParts];
    for (std::size_t q = 0U; q < kParts; ++q) {
      load_vector(go[q], &g[o].lane[q * kWidth]);
    }
    const S* wo = &w[static_cast<std::size_t>(o) * n];
    for (Index c = 0U; c < kCols; ++c) {
      for (std::size_t q = 0U; q < kParts; ++q) {
        acc[c][q] += wo[c] * go[q];
      }
    }
  }
  for (Index c = 0U; c < kCols; ++c) {
    for (std::size_t q = 0U; q < kParts; ++q) {
      V before;
      load_vector(before, &gx[c].lane[q * kWidth]);
      before += acc[c][q];
      store_vector(&gx[c].lane[q * kWidth], before);
    }
  }
}

/// Rows the input's gradient takes at a time (input_grad_cols over one
/// block of rows for every block of inputs): the block's rows are read a
/// register of columns after another, a few dozen sequential streams the
/// prefetchers follow (all rows at once, each read one line at a time at a
/// row's stride, stall on memory: 99 instead of 79 GMAC/s measured for a
/// 1024 x 1024 layer on AVX-512).
constexpr Index kInputRowBlock = 64U;

/// The input's gradient over the `count` inputs of one run (w offset to the
/// run's first column): blocks of kInputRowBlock rows from the last, each
/// over all inputs, input_grad_cols in blocks of input_block() inputs,
/// then one by one. Every gradient gets its rows in descending order, a
/// block's sum at a time.
template <class S, std::size_t N>
void lanes_matvec_input_grad(const Lanes<S, N>* g, const S* w, Index rows, Index n, Lanes<S, N>* gx,
                             Index count) noexcept {
  constexpr Index kBlock = input_block<S, N>();
  for (Index top = rows; top > 0U;) {
    const Index lo = (top > kInputRowBlock) ? (top - kInputRowBlock) : 0U;
    Index j = 0U;
    for (; (j + kBlock) <= count; j += kBlock) {
      input_grad_cols<kBlock>(g, &w[j], lo, top, n, &gx[j]);
    }
    for (; j < count; ++j) {
      input_grad_cols<1U>(g, &w[j], lo, top, n, &gx[j]);
    }
    top = lo;
  }
}

/// The weights' gradient is computed in tiles of kWeightRows rows by
/// kWeightParts registers of columns (below): two rows by eight registers
/// keep 16 sums and read each register of the transposed inputs once per 16
/// multiply-adds (4 x 4 measured 81, 2 x 8 92 GMAC/s for a 1024 x 1024 layer
/// with 16 float lanes on AVX-512).
constexpr Index kWeightRows = 2U;
/// Registers of columns in a tile: kWeightRows * this many accumulators
/// (16 with 32 registers, 8 with 16, 4 on Helium).
constexpr Index kWeightParts = static_cast<Index>(kVectorRegisters / 4U);
/// Columns of a tile.
template <class S>
constexpr Index weight_tile() noexcept {
  return kWeightParts * register_columns<S>();
}

/// tile[l][c] = lane l of x[c] for c < width, 0 for width <= c < kCols: the
/// inputs of a tile of columns transposed, lane l's values side by side.
template <Index kCols, class S, std::size_t N>
inline void transpose_inputs(const Lanes<S, N>* x, Index width, S (&tile)[N][kCols]) noexcept {
  for (Index c = 0U; c < kCols; ++c) {
    for (std::size_t l = 0U; l < N; ++l) {
      tile[l][c] = (c < width) ? x[c].lane[l] : S(0);
    }
  }
}

/// Adds one tile's terms to kRows rows of the weights' gradient from gw
/// (row stride n, the tile's first column): one register multiply-add per
/// row, register of columns and lane, the lanes in order; kRows * (kCols /
/// register) independent sums, straight from and to gw.
template <Index kRows, Index kCols, class S, std::size_t N>
inline void add_weight_tile(const Lanes<S, N>* g, const S (&tile)[N][kCols], S* gw, std::size_t n) noexcept {
  // A register of columns, or fewer where the tile is narrower (one column).
  constexpr Index kRegister = (kCols < register_columns<S>()) ? kCols : register_columns<S>();
  constexpr Index kParts = kCols / kRegister;
  using W = typename VectorOf<S, kRegister>::Type;
  W acc[kRows][kParts];
  for (Index r = 0U; r < kRows; ++r) {
    for (Index q = 0U; q < kParts; ++q) {
      load_vector(acc[r][q], &gw[(static_cast<std::size_t>(r) * n) + (static_cast<std::size_t>(q) * kRegister)]);
    }
  }
  for (std::size_t l = 0U; l < N; ++l) {
    W xl[kParts];
    for (Index q = 0U; q < kParts; ++q) {
      load_vector(xl[q], &tile[l][q * kRegister]);
    }
    for (Index r = 0U; r < kRows; ++r) {
      const S gl = g[r].lane[l];
      for (Index q = 0U; q < kParts; ++q) {
        acc[r][q] += gl * xl[q];
      }
    }
  }
  for (Index r = 0U; r < kRows; ++r) {
    for (Index q = 0U; q < kParts; ++q) {
      store_vector(&gw[(static_cast<std::size_t>(r) * n) + (static_cast<std::size_t>(q) * kRegister)], acc[r][q]);
    }
  }
}

/// One tile of kCols columns over all rows: pairs of rows (kWeightRows),
/// then the last row alone.
template <Index kCols, class S, std::size_t N>
inline void add_weight_tile_rows(const Lanes<S, N>* g, const S (&tile)[N][kCols], S* gw, Index rows,
                                 std::size_t n) noexcept {
  Index o = 0U;
  for (; (o + kWeightRows) <= rows; o += kWeightRows) {
    add_weight_tile<kWeightRows>(&g[o], tile, &gw[static_cast<std::size_t>(o) * n], n);
  }
  for (; o < rows; ++o) {
    add_weight_tile<1U>(&g[o], tile, &gw[static_cast<std::size_t>(o) * n], n);
  }
}

/// If at least kCols of the `count` columns are left from *j and kCols is
/// narrower than a register: one tile of kCols columns, *j moved past it.
template <Index kCols, class S, std::size_t N>
inline void weight_columns(const Lanes<S, N>* g, const Lanes<S, N>* x, Index rows, std::size_t n, S* gw, Index count,
                           Index& j) noexcept {
  if constexpr (kCols < register_columns<S>()) {
    if ((j + kCols) <= count) {
      S tile[N][kCols];  // BT-DEV-013
      transpose_inputs<kCols>(&x[j], kCols, tile);
      add_weight_tile_rows<kCols>(g, tile, &gw[j], rows, n);
      j += kCols;
    }
  }
}

/// gw[o * n + j] += sum_l g[o][l] x[j][l] over the `count` inputs of one run
/// (gw already offset to the run's first column): per tile of columns
/// (kWeightParts registers wide, then one register wide, then narrower),
/// the inputs transposed once, then every row's share
/// (add_weight_tile_rows). A row's columns are read and written once per
/// tile, in order.
template <class S, std::size_t N>
void lanes_matvec_weight_grad(const Lanes<S, N>* g, const Lanes<S, N>* x, Index rows, Index n, S* gw,
                              Index count) noexcept {
  constexpr Index kRegister = register_columns<S>();
  constexpr Index kTile = weight_tile<S>();
  S tile[N][kTile];  // BT-DEV-013: N * kTile values on the stack (8 KiB for 16 float lanes with AVX-512, 1 KiB for 8 with AVX2)
  S narrow[N][kRegister];  // BT-DEV-013: one register wide
  Index j = 0U;
  for (; (j + kTile) <= count; j += kTile) {
    transpose_inputs<kTile>(&x[j], kTile, tile);
    add_weight_tile_rows<kTile>(g, tile, &gw[j], rows, n);
  }
  for (; (j + kRegister) <= count; j += kRegister) {
    transpose_inputs<kRegister>(&x[j], kRegister, narrow);
    add_weight_tile_rows<kRegister>(g, narrow, &gw[j], rows, n);
  }
  // The last count % register columns: tiles of 8, 4, 2 and 1 columns
  // (half, quarter ... of a register), so a narrow layer (24 inputs) still
  // sums in vectors.
  weight_columns<8U>(g, x, rows, n, gw, count, j);
  weight_columns<4U>(g, x, rows, n, gw, count, j);
  weight_columns<2U>(g, x, rows, n, gw, count, j);
  weight_columns<1U>(g, x, rows, n, gw, count, j);
}

/// The marked runs' share of the backward for kCols columns of one run
/// (w and gw offset to them, x their values) over rows [lo, top), whose
/// gradients summed over the lanes are s[0 .. top - lo): gw[o][c] += s[o]
/// x[c], and sums[c] = sum_o w[o][c] s[o] (rows in descending order).
template <Index kCols, class S>
inline void uniform_columns(const S* s, const S* x, const S* w, Index lo, Index top, std::size_t n, S* gw,
                            S* sums) noexcept {
  constexpr std::size_t kRegister = (kCols < register_columns<S>()) ? kCols : register_columns<S>();
  constexpr std::size_t kParts = kCols / kRegister;
  using R = typename VectorOf<S, kRegister>::Type;
  R xv[kParts];
  R acc[kParts] = {};
  for (std::size_t q = 0U; q < kParts; ++q) {
    load_vector(xv[q], &x[q * kRegister]);
  }
  for (Index o = top; o-- > lo;) {
    const S so = s[o - lo];
    const S* wo = &w[static_cast<std::size_t>(o) * n];
    S* go = &gw[static_cast<std::size_t>(o) * n];
    for (std::size_t q = 0U; q < kParts; ++q) {
      R wq;
      load_vector(wq, &wo[q * kRegister]);
      acc[q] += so * wq;
      R gq;
      load_vector(gq, &go[q * kRegister]);
      gq += so * xv[q];
      store_vector(&go[q * kRegister], gq);
    }
  }
  for (std::size_t q = 0U; q < kParts; ++q) {
    store_vector(&sums[q * kRegister], acc[q]);
  }
}

/// The backward of the runs marked in `uniform` (w, gw: the layer's
/// weights and their gradients; g: the rows' gradients): per block of
/// kSharedRowBlock rows from the last, the rows' gradients summed over the
/// lanes (in lane order), then per marked run, four registers of columns
/// at a time (then one, then one column), the weights' gradient and the
/// run's gradient, added to lane 0 of its nodes.
/// Rows whose lane sums uniform_backward() keeps at a time: the input's
/// gradient's block where there are vector registers, 16 on a core without
/// (a small stack).
constexpr Index kSharedRowBlock = (kHardwareLanes > 1U) ? kInputRowBlock : 16U;

/// One marked run's share for rows [lo, top): four registers of columns at
/// a time, then one, then one column (x: the run's values, from lane 0).
template <class S, std::size_t N>
inline void uniform_run_backward(const Lanes<S, N>* v, Lanes<S, N>* grads, const Segment& seg, const S* s,
                                 const S* w, Index lo, Index top, std::size_t n, S* gw) noexcept {
  constexpr Index kRegister = register_columns<S>();
  constexpr Index kChunk = 4U * kRegister;
  Index c = 0U;
  while (c < seg.count) {
    const Index left = seg.count - c;
    const Index width = (left >= kChunk) ? kChunk : ((left >= kRegister) ? kRegister : 1U);
    S x[kChunk];     // BT-DEV-013
    S sums[kChunk];  // BT-DEV-013
    for (Index i = 0U; i < width; ++i) {
      x[i] = v[seg.first + c + i].lane[0];
    }
    const S* wc = &w[seg.k + c];
    S* gc = &gw[seg.k + c];
    if (width == kChunk) {
      uniform_columns<kChunk>(s, x, wc, lo, top, n, gc, sums);
    } else if (width == kRegister) {
      uniform_columns<kRegister>(s, x, wc, lo, top, n, gc, sums);
    } else {
      uniform_columns<1U>(s, x, wc, lo, top, n, gc, sums);
    }
    for (Index i = 0U; i < width; ++i) {
      grads[seg.first + c + i].lane[0] += sums[i];
    }
    c += width;
  }
}

template <class S, std::size_t N>
void uniform_backward(const Lanes<S, N>* v, Lanes<S, N>* grads, const Index* list, std::uint64_t uniform,
                      const Lanes<S, N>* g, const S* w, Index rows, std::size_t n, S* gw) noexcept {
  for (Index top = rows; top > 0U;) {
    const Index lo = (top > kSharedRowBlock) ? (top - kSharedRowBlock) : 0U;
    S s[kSharedRowBlock];  // BT-DEV-013
    for (Index o = lo; o < top; ++o) {
      S sum = g[o].lane[0];
      for (std::size_t l = 1U; l < N; ++l) {
        sum += g[o].lane[l];
      }
      s[o - lo] = sum;
    }
    Segments walk(list, uniform);
    Segment seg;
    while (walk.next(seg)) {
      if (seg.uniform) {
        uniform_run_backward(v, grads, seg, s, w, lo, top, n, gw);
      }
    }
    top = lo;
  }
}

/// The whole backward of a layer over shared weights (descriptor at slot
/// d; the rows' gradients are those of the `rows` nodes after `head`): the
/// biases' gradients (each lane's term in lane order), the input's and the
/// weights' gradients, segment by segment, then those of the marked runs.
template <class S, std::size_t N>
void lanes_matvec_backward(const Lanes<S, N>* v, Lanes<S, N>* grads, const Index* slots, Index d,
                           Index head) noexcept {
  const Index* list = &slots[slots[d + kMsList]];
  const Index n = slots[d + kMsWidth];
  const Index rows = slots[d + kMsRows];
  const SharedArrays<S> p = load_shared<S>(slots, d + kMsShared);
  const Lanes<S, N>* g = &grads[head + 1U];
  const Index bias = slots[d + kMsBias];
  if (bias != kNoIndex) {
    S* gb = &p.grads[bias];
    for (Index o = 0U; o < rows; ++o) {
      S acc = gb[o];
      for (std::size_t l = 0U; l < N; ++l) {
        acc += g[o].lane[l];
      }
      gb[o] = acc;
    }
  }
  const std::size_t weight = slots[d + kMsWeight];
  const std::uint64_t uniform = load_uniform(slots, d + kMsUniform);
  Segments walk(list, uniform);
  Segment s;
  // A list of inputs (Tape::input) gets no gradient (see view_list).
  const bool inputs = list_of_inputs(list);
  while (walk.next(s)) {
    if (!s.uniform) {
      if (!inputs) {
        lanes_matvec_input_grad(g, &p.values[weight + s.k], rows, n, &grads[s.first], s.count);
      }
      lanes_matvec_weight_grad(g, &v[s.first], rows, n, &p.grads[weight + s.k], s.count);
    }
  }
  if (uniform != 0U) {
    uniform_backward(v, grads, list, uniform, g, &p.values[weight], rows, n, &p.grads[weight]);
  }
}

// --- embedding rows chosen per lane ---------------------------------------
// Descriptor of Tape::gather_shared at slot d: the row width, the number of
// rows gathered, the shared arrays, then per gathered row p and lane l the
// offset of that lane's row in the shared arrays (slot d + kGsRows + p * N
// + l). Node b of the result is element b % width of row b / width.
constexpr Index kGsWidth = 0U;   ///< elements per row
constexpr Index kGsCount = 1U;   ///< rows gathered
constexpr Index kGsShared = 2U;  ///< the shared arrays
constexpr Index kGsRows = kGsShared + (2U * kPointerSlots);  ///< the rows' offsets, N per gathered row

/// Element e of gathered row p: lane l is the shared value at lane l's row.
template <class S, std::size_t N>
inline Lanes<S, N> lanes_gather_value(const S* values, const Index* offsets, Index e) noexcept {
  Lanes<S, N> out;
  for (std::size_t l = 0U; l < N; ++l) {
    out.lane[l] = values[offsets[l] + e];
  }
  return out;
}
/// Its backward: lane l's gradient goes to lane l's row, in lane order.
template <class S, std::size_t N>
inline void lanes_gather_backward(const Index* slots, Index d, Index b, const Lanes<S, N>& g) noexcept {
  const Index width = slots[d + kGsWidth];
  const Index row = (slots[d + kGsCount] == 1U) ? 0U : (b / width);  // one row: no division
  const Index e = b - (row * width);
  S* const grads = load_pointer<S>(slots, d + kGsShared + kPointerSlots);
  const Index* offsets = &slots[d + kGsRows + (row * static_cast<Index>(N))];
  for (std::size_t l = 0U; l < N; ++l) {
    grads[offsets[l] + e] += g.lane[l];
  }
}

// --- one element per lane: a cross-entropy's target ------------------------
// Descriptor of Tape::pick at slot d: the run's first node, then per lane
// the position in the run.
constexpr Index kPkFirst = 0U;  ///< the run's first node
constexpr Index kPkAt = 1U;     ///< the N positions

/// Lane l of x[at[l]] for each lane l.
template <class S, std::size_t N>
inline Lanes<S, N> lanes_pick_value(const Lanes<S, N>* v, Index first, const Index* at) noexcept {
  Lanes<S, N> out;
  for (std::size_t l = 0U; l < N; ++l) {
    out.lane[l] = v[first + at[l]].lane[l];
  }
  return out;
}
/// Its backward: lane l of the gradient goes to lane l of x[at[l]].
template <class S, std::size_t N>
inline void lanes_pick_backward(Lanes<S, N>* grads, const Index* slots, Index d, const Lanes<S, N>& g) noexcept {
  const Index first = slots[d + kPkFirst];
  for (std::size_t l = 0U; l < N; ++l) {
    grads[first + slots[d + kPkAt + static_cast<Index>(l)]].lane[l] += g.lane[l];
  }
}

// --- a layer norm's gain and bias, shared --------------------------------
// Descriptor of Tape::scale_shift_shared at slot d: the input run's first
// node, the gains' and biases' offsets in the shared arrays, the arrays.
constexpr Index kSsX = 0U;       ///< the input run's first node
constexpr Index kSsScale = 1U;   ///< first gain
constexpr Index kSsShift = 2U;   ///< first bias
constexpr Index kSsShared = 3U;  ///< the shared arrays
constexpr Index kSsSlots = kSsShared + (2U * kPointerSlots);  ///< slots of the descriptor

/// Element b: x[b] * scale[b] + shift[b] in every lane.
template <class S, std::size_t N>
inline Lanes<S, N> lanes_scale_shift_value(const Lanes<S, N>& x, S scale, S shift) noexcept {
  Lanes<S, N> out;
  for (std::size_t l = 0U; l < N; ++l) {
    out.lane[l] = (x.lane[l] * scale) + shift;
  }
  return out;
}
/// Its backward: the input's lanes get g * scale; the gain gets the lanes'
/// g * x and the bias the lanes' g, each summed in lane order.
template <class S, std::size_t N>
inline void lanes_scale_shift_backward(const Lanes<S, N>* v, Lanes<S, N>* grads, const Index* slots, Index d, Index b,
                                       const Lanes<S, N>& g) noexcept {
  const SharedArrays<S> p = load_shared<S>(slots, d + kSsShared);
  const Index x = slots[d + kSsX] + b;
  const Index scale = slots[d + kSsScale] + b;
  const Index shift = slots[d + kSsShift] + b;
  S* const shared_grads = p.grads;
  const S s = p.values[scale];
  S gs = shared_grads[scale];
  S gb = shared_grads[shift];
  for (std::size_t l = 0U; l < N; ++l) {
    gs += g.lane[l] * v[x].lane[l];
    gb += g.lane[l];
    grads[x].lane[l] += g.lane[l] * s;
  }
  shared_grads[scale] = gs;
  shared_grads[shift] = gb;
}

}  // namespace detail
}  // namespace burtorch

#endif  // BURTORCH_DETAIL_LANE_MATH_HPP

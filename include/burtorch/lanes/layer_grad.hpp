// SPDX-License-Identifier: Apache-2.0
/// @file
/// Internal: the backward of a layer over shared weights on a tape of Lanes
/// (lanes/ops.hpp's lane_matvec; its forward and descriptor are
/// lanes/layer.hpp): the input's gradient W^T G in blocks of inputs and
/// rows, the weights' gradient G X^T from transposed tiles of the inputs
/// (a weight's L terms from one vector multiply-add per lane, in lane
/// order, no horizontal sum per weight), the gradients of the views every
/// lane shares, then all of it per layer (lanes_matvec_backward).
#ifndef BURTORCH_LANES_LAYER_GRAD_HPP
#define BURTORCH_LANES_LAYER_GRAD_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/core/detail/math.hpp"
#include "burtorch/lanes/vector.hpp"
#include "burtorch/index.hpp"
#include "burtorch/lanes/lanes.hpp"
#include "burtorch/lanes/layer.hpp"

namespace burtorch {
namespace detail {

/// gx[c] += sum_o w[o * n + c] g[o] over rows o = top - 1 down to lo for
/// the kCols inputs from gx (w offset to their first column): the block's
/// rows in descending order (the order in which a sample's sweep reaches
/// them) summed in kCols * parts registers from zero, then added to gx.
/// (Starting the sums from gx instead made GCC copy gx to the stack with a
/// library memcpy first: 3 % of an MLP step.)
template <Index kCols, class S, std::size_t N>
inline void input_grad_cols(const Lanes<S, N>* g, const S* w, Index lo, Index top, std::size_t n,
                            Lanes<S, N>* gx) noexcept {
  if constexpr (kHelium<S, N>) {  // lanes/helium.hpp: the same sums, in Helium registers
    HeliumLanes<S, N>::template input_grad_cols<kCols>(g, w, lo, top, n, gx);
    return;
  }
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
  if constexpr (kHelium<S, N>) {  // lanes/helium.hpp: tiles of four columns transposed by one load
    HeliumLanes<S, N>::weight_grad(g, x, rows, n, gw, count);
    return;
  }
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
/// kLaneRowBlock rows from the last, the rows' gradients summed over the
/// lanes (in lane order), then per marked run, four registers of columns
/// at a time (then one, then one column), the weights' gradient and the
/// run's gradient, added to lane 0 of its nodes.
/// Rows whose lane sums uniform_backward() keeps at a time: the input's
/// gradient's block where there are vector registers, 16 on a core without
/// (a small stack).
constexpr Index kLaneRowBlock = (kHardwareLanes > 1U) ? kInputRowBlock : 16U;

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
    const Index lo = (top > kLaneRowBlock) ? (top - kLaneRowBlock) : 0U;
    S s[kLaneRowBlock];  // BT-DEV-013
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
  const ParamArrays<S> p = load_params<S>(slots, d + kMsParams);
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

}  // namespace detail
}  // namespace burtorch

#endif  // BURTORCH_LANES_LAYER_GRAD_HPP

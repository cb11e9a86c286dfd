// SPDX-License-Identifier: Apache-2.0
/// @file
/// Lane batches: the ops with which a tape of Lanes (lanes/lanes.hpp: lane l of
/// every node belongs to sample l) reads the parameters of an ordinary tape
/// as shared scalars, so that L samples run through one graph while the
/// weights are read once per L samples, and their backward adds the lanes'
/// gradients to the shared gradients, each lane's term in lane order. The
/// parameters, their gradients and the optimizer's state stay one copy
/// however many lanes run. An op family (ext/extension.hpp); the loops are in
/// lanes/ (layer.hpp, layer_grad.hpp, gather.hpp).
///
/// Errors as for core/views.hpp's recorders; a parameter range outside p
/// (64-bit checked), null arrays or an index out of range is
/// kInvalidArgument, nothing recorded. A tape of plain float or double does
/// not compile them.
#ifndef BURTORCH_LANES_OPS_HPP
#define BURTORCH_LANES_OPS_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/core/detail/recorder.hpp"
#include "burtorch/core/detail/state.hpp"
#include "burtorch/core/detail/sweep.hpp"
#include "burtorch/core/detail/views.hpp"
#include "burtorch/ext/extension.hpp"
#include "burtorch/index.hpp"
#include "burtorch/lanes/lanes.hpp"
#include "burtorch/lanes/conv.hpp"
#include "burtorch/lanes/gather.hpp"
#include "burtorch/lanes/layer.hpp"
#include "burtorch/lanes/layer_grad.hpp"
#include "burtorch/lanes/source.hpp"
#include "burtorch/core/record.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {

namespace rows {
/// @cond OP_ROWS
// clang-format off
/// Element b % width of gathered row b / width: in each lane the shared
/// value of that lane's row (an embedding row chosen per sample).
struct LaneGather {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "gather";
  static constexpr bool kRows = true;  // b = the element: one dispatch for a gather's nodes
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index b, T g) noexcept {
    detail::lanes_gather_backward<typename LaneTraits<T>::Scalar, LaneTraits<T>::kLanes>(s.slots, a, b, g);
  }
};
/// In each lane, the element of a view that lane chose (a cross-entropy's
/// target per sample).
struct LanePick {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "pick";
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index /*b*/, T g) noexcept {
    detail::lanes_pick_backward(s.g, s.slots, a, g);
  }
};
/// The head of a layer over shared weights, recorded just before its rows:
/// the sweep reaches it after every row, and its backward is the layer's
/// (input, weights and biases at once). Its value is 0.
struct LaneMat {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "lane_matvec";
  template <class T> static void backward(const detail::Arrays<T>& s, Index i, Index a, Index /*b*/, T /*g*/) noexcept {
    detail::lanes_matvec_backward(s.v, s.g, s.slots, a, i);
  }
};
/// Row b of a layer over shared weights. Its backward only marks the head
/// (node i - b - 1) as reached; the head does the work. (The rows of a
/// layer, of a gather and of a scale-shift are swept as one block: one
/// dispatch, then the row's backward per node.)
struct LaneMatRow {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "lane_matvec_row";
  static constexpr bool kRows = true;
  template <class T> static void backward(const detail::Arrays<T>& s, Index i, Index /*a*/, Index b, T /*g*/) noexcept {
    s.g[i - b - 1U] = T(1);
  }
};
/// Element b of x * scale + shift with shared gains and biases (a layer
/// norm's, on a tape of Lanes).
struct LaneScaleShift {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "lane_scale_shift";
  static constexpr bool kRows = true;
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index b, T g) noexcept {
    detail::lanes_scale_shift_backward(s.v, s.g, s.slots, a, b, g);
  }
};
/// The head of a convolution over shared weights (lane_conv), recorded
/// just before every position's rows; its backward is the whole layer's.
struct LaneConv {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "lane_conv";
  template <class T> static void backward(const detail::Arrays<T>& s, Index i, Index a, Index /*b*/, T /*g*/) noexcept {
    detail::lanes_conv_backward(s.v, s.g, s.slots, a, i);
  }
};
/// Row b (position b / C_out, channel b % C_out) of a convolution over
/// shared weights: marks the head (node i - b - 1) as reached, as
/// LaneMatRow does.
struct LaneConvRow {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "lane_conv_row";
  static constexpr bool kRows = true;
  template <class T> static void backward(const detail::Arrays<T>& s, Index i, Index /*a*/, Index b, T /*g*/) noexcept {
    s.g[i - b - 1U] = T(1);
  }
};
// clang-format on
/// @endcond
}  // namespace rows

/// The lane ops' family.
using LaneOps = OpFamily<family::kLanes, rows::LaneGather, rows::LanePick, rows::LaneMat, rows::LaneMatRow,
                         rows::LaneScaleShift, rows::LaneConv, rows::LaneConvRow>;

/// Argument slots of lane_matvec's descriptor.
constexpr Index kLaneMatSlots = detail::kMsSlots;
/// Argument slots of lane_conv's descriptor (the windows' view lists apart).
constexpr Index kLaneConvSlots = detail::kCsSlots;
/// Argument slots of lane_scale_shift's descriptor.
constexpr Index kLaneScaleShiftSlots = detail::kSsSlots;
/// Argument slots of lane_gather's descriptor for `count` rows on a tape
/// of Lanes of `lanes` lanes.
constexpr std::size_t gather_slots(std::size_t count, std::size_t lanes) noexcept {
  return detail::kGsRows + (count * lanes);
}
/// Argument slots of pick's descriptor on a tape of Lanes of `lanes` lanes.
constexpr Index pick_slots(std::size_t lanes) noexcept { return detail::kPkAt + static_cast<Index>(lanes); }

namespace detail {
/// The table row that the `count` nodes from `first` hold in every lane,
/// if they are one row of a lane_gather whose lanes all read that row and
/// still hold its values; else null (lane_matvec reads such a view as
/// shared scalars).
template <class T>
inline const typename LaneTraits<T>::Scalar* param_row(Tape<T>& tape, Index first, Index count) noexcept {
  using R = Recorder<T>;
  using S = typename LaneTraits<T>::Scalar;
  constexpr std::size_t kLanes = LaneTraits<T>::kLanes;
  const Index base = R::param_region(tape);
  const bool gathered = (first >= base) && (R::ops(tape)[first - base] == LaneOps::op<rows::LaneGather>());
  const std::uint64_t link = gathered ? R::links(tape)[first - base] : 0U;
  const auto g = static_cast<Index>(link);
  const auto element = static_cast<Index>(link >> 32U);
  const Index* const slots = R::slots(tape);
  const Index width = gathered ? slots[g + kGsWidth] : 0U;
  const S* row = nullptr;
  if (gathered && (width == count) && ((element % width) == 0U)) {
    const Index* offsets = &slots[g + kGsRows + ((element / width) * static_cast<Index>(kLanes))];
    bool same = true;
    for (std::size_t l = 1U; l < kLanes; ++l) {
      same = same && (offsets[l] == offsets[0]);
    }
    const S* at = &load_params<S>(slots, g + kGsParams).values[offsets[0]];
    const T* const v = R::values(tape);
    for (Index c = 0U; same && (c < count); ++c) {
      same = v[first + c].lane[0] == at[c];  // BT-DEV-004: exact test, the gathered value itself
    }
    row = same ? at : nullptr;
  }
  return row;
}
}  // namespace detail

/// A layer over shared weights: `rows` consecutive nodes, row o = sum_k
/// p[w_first + o * x.total + k] * x[k] (+ p[bias_first + o]; kNoIndex: no
/// bias), recorded after one head node whose backward computes the layer's
/// gradients at once (rows + 1 nodes, kLaneMatSlots slots). Returns the
/// rows (kNoView on error).
/// A view of x (one of the first 64) that is exactly one row of a
/// lane_gather whose lanes all read the same table row, its nodes still
/// holding that row's values, is the same vector in every lane: the layer
/// reads it as shared scalars (its inner products along the weights' rows,
/// its weights' gradient from the rows' gradients summed over the lanes)
/// and gives it its gradient summed over the lanes, in lane 0 (the gather
/// adds the lanes' sum to the table row either way). Losses and the shared
/// gradients are those of the lanes' path up to rounding.
template <class T>
inline View lane_matvec(Tape<T>& tape, const LaneParams<typename LaneTraits<T>::Scalar>& p, Index w_first,
                          Index rows, ViewList x, Index bias_first) noexcept {
  static_assert(LaneTraits<T>::kIsLanes, "lane_matvec records on a tape of Lanes");
  using R = Recorder<T>;
  using S = typename LaneTraits<T>::Scalar;
  if ((rows == 0U) || (rows >= (kNoIndex - 1U))) {
    static_cast<void>(R::fail(tape, Status::kInvalidArgument));
    return kNoView;
  }
  if (!R::list_valid(tape, x)) {
    return kNoView;
  }
  const std::uint64_t weights = static_cast<std::uint64_t>(rows) * x.total;
  const bool bias_ok = (bias_first == kNoIndex) || detail::params_cover(p, bias_first, rows);
  if (!detail::params_cover(p, w_first, weights) || !bias_ok) {
    static_cast<void>(R::fail(tape, Status::kInvalidArgument));
    return kNoView;
  }
  const Index d = R::reserve(tape, rows + 1U, detail::kMsSlots);  // the head and every row, or nothing
  if (d == kNoIndex) {
    return kNoView;
  }
  if (!LaneOps::enable(tape)) {
    R::release_slots(tape, d);
    return kNoView;
  }
  // The views every lane shares (see "inputs every lane shares" in
  // lanes/layer.hpp): row_of(r) is the table row view r holds in every
  // lane (param_row), or null.
  Index* const slots = R::slots(tape);
  const Index* list = &slots[x.slot];
  const auto row_of = [&tape, list](Index r) noexcept -> const S* {
    return detail::param_row(tape, list[1U + (2U * r)], list[2U + (2U * r)]);
  };
  std::uint64_t uniform = 0U;
  if constexpr (LaneTraits<T>::kLanes > 1U) {
    for (Index r = 0U; (r < detail::list_views(list)) && (r < detail::kUniformRuns); ++r) {
      uniform |= (row_of(r) != nullptr) ? (static_cast<std::uint64_t>(1U) << r) : 0U;
    }
  }
  slots[d + detail::kMsList] = x.slot;
  slots[d + detail::kMsWidth] = x.total;
  slots[d + detail::kMsRows] = rows;
  slots[d + detail::kMsWeight] = w_first;
  slots[d + detail::kMsBias] = bias_first;
  detail::store_uniform(slots, d + detail::kMsUniform, uniform);
  detail::store_params(slots, d + detail::kMsParams, p.values, p.grads);
  static_cast<void>(R::append(tape, LaneOps::op<rows::LaneMat>(), T(0), d, rows));  // the head: fits
  const auto first = static_cast<Index>(tape.size());
  constexpr Op kRow = LaneOps::op<rows::LaneMatRow>();
  for (Index o = 0U; o < rows; ++o) {
    static_cast<void>(R::append(tape, kRow, T(0), d, o));
  }
  T* const v = R::values(tape);
  detail::lanes_matvec(v, list, uniform, row_of, &p.values[w_first],
                       (bias_first != kNoIndex) ? &p.values[bias_first] : nullptr, rows, x.total, &v[first]);
  return View{first, rows};
}

/// A convolution over shared weights: `windows` output positions of
/// `rows` channels, recorded as one head node and then windows * rows
/// consecutive nodes (position after position, channels-last as a scalar
/// tape's convolution), kLaneConvSlots slots. Position w's row o =
/// sum_k p[w_first + o * n + k] * x_w[k] (+ p[bias_first + o]; kNoIndex: no
/// bias), x_w the w-th of `windows` view lists of n = first.total nodes
/// each, recorded one after another from `first` (view_list, nothing in
/// between). Runs that start at node `zeros` (kNoIndex: none) are zero
/// padding: their nodes must be zero in every lane; they are skipped. A
/// window whose list holds Tape::input nodes only gets no gradient. Returns
/// the rows (kNoView on error: kInvalidArgument for a bad range, list or
/// padding, nothing recorded).
template <class T>
inline View lane_conv(Tape<T>& tape, const LaneParams<typename LaneTraits<T>::Scalar>& p, Index w_first,
                        Index rows, ViewList first, Index windows, Index zeros, Index bias_first) noexcept {
  static_assert(LaneTraits<T>::kIsLanes, "lane_conv records on a tape of Lanes");
  using R = Recorder<T>;
  const std::uint64_t outputs = static_cast<std::uint64_t>(rows) * windows;
  const bool bias_ok = (bias_first == kNoIndex) || detail::params_cover(p, bias_first, rows);
  if ((outputs == 0U) || (outputs >= (kNoIndex - 1U)) || !bias_ok ||
      !detail::params_cover(p, w_first, static_cast<std::uint64_t>(rows) * first.total)) {
    static_cast<void>(R::fail(tape, Status::kInvalidArgument));
    return kNoView;
  }
  // Every window's list, one after another; the padding's nodes zero.
  Index list = first.slot;
  for (Index w = 0U; w < windows; ++w) {
    if ((list >= R::slots_used(tape)) || !R::list_valid(tape, ViewList{list, first.total})) {
      static_cast<void>(R::fail(tape, Status::kInvalidArgument));
      return kNoView;
    }
    const Index* at = &R::slots(tape)[list];
    for (Index r = 0U; r < detail::list_views(at); ++r) {
      for (Index k = 0U; (at[1U + (2U * r)] == zeros) && (k < at[2U + (2U * r)]); ++k) {
        if (!ScalarOps<T>::is_zero(R::values(tape)[zeros + k])) {
          static_cast<void>(R::fail(tape, Status::kInvalidArgument));
          return kNoView;
        }
      }
    }
    list = detail::next_list(R::slots(tape), list);
  }
  const Index d = R::reserve(tape, static_cast<Index>(outputs) + 1U, detail::kCsSlots);
  if (d == kNoIndex) {
    return kNoView;
  }
  if (!LaneOps::enable(tape)) {
    R::release_slots(tape, d);
    return kNoView;
  }
  Index* const slots = R::slots(tape);
  slots[d + detail::kCsList] = first.slot;
  slots[d + detail::kCsWindows] = windows;
  slots[d + detail::kCsRows] = rows;
  slots[d + detail::kCsWidth] = first.total;
  slots[d + detail::kCsWeight] = w_first;
  slots[d + detail::kCsBias] = bias_first;
  slots[d + detail::kCsZeros] = zeros;
  detail::store_params(slots, d + detail::kCsParams, p.values, p.grads);
  static_cast<void>(R::append(tape, LaneOps::op<rows::LaneConv>(), T(0), d, 0U));  // the head: fits
  const auto out = static_cast<Index>(tape.size());
  constexpr Op kRow = LaneOps::op<rows::LaneConvRow>();
  for (Index o = 0U; o < static_cast<Index>(outputs); ++o) {
    static_cast<void>(R::append(tape, kRow, T(0), d, o));
  }
  detail::lanes_conv(R::values(tape), slots, d, &R::values(tape)[out]);
  return View{out, static_cast<Index>(outputs)};
}

/// n consecutive nodes, node o = x[o] * p[scale_first + o] + p[shift_first
/// + o] in every lane (a layer norm's gain and bias); the input is the view
/// of n nodes from x_first. Returns the outputs (kNoView on error).
template <class T>
inline View lane_scale_shift(Tape<T>& tape, const LaneParams<typename LaneTraits<T>::Scalar>& p,
                               Index scale_first, Index x_first, Index shift_first, Index n) noexcept {
  static_assert(LaneTraits<T>::kIsLanes, "lane_scale_shift records on a tape of Lanes");
  using R = Recorder<T>;
  if (n == 0U) {
    static_cast<void>(R::fail(tape, Status::kInvalidArgument));
    return kNoView;
  }
  if (!R::recorded(tape, x_first, n)) {
    static_cast<void>(R::fail(tape, Status::kInvalidHandle));
    return kNoView;
  }
  if (!detail::params_cover(p, scale_first, n) || !detail::params_cover(p, shift_first, n)) {
    static_cast<void>(R::fail(tape, Status::kInvalidArgument));
    return kNoView;
  }
  const Index d = R::reserve(tape, n, detail::kSsSlots);
  if (d == kNoIndex) {
    return kNoView;
  }
  if (!LaneOps::enable(tape)) {
    R::release_slots(tape, d);
    return kNoView;
  }
  Index* const slots = R::slots(tape);
  slots[d + detail::kSsX] = x_first;
  slots[d + detail::kSsScale] = scale_first;
  slots[d + detail::kSsShift] = shift_first;
  detail::store_params(slots, d + detail::kSsParams, p.values, p.grads);
  constexpr Op kRow = LaneOps::op<rows::LaneScaleShift>();
  const auto first = static_cast<Index>(tape.size());
  const T* const v = R::values(tape);
  for (Index o = 0U; o < n; ++o) {
    static_cast<void>(R::append(
        tape, kRow, detail::lanes_scale_shift_value(v[x_first + o], p.values[scale_first + o], p.values[shift_first + o]),
        d, o));
  }
  return View{first, n};
}

/// Embedding rows chosen per lane: `count` * `width` consecutive nodes;
/// node q * width + e is, in lane l, p[table + rows[q * N + l] * width +
/// e] (rows: count * N row numbers, row-major by gathered row, each below
/// `table_rows`). Returns the nodes (kNoView on error).
template <class T>
inline View lane_gather(Tape<T>& tape, const LaneParams<typename LaneTraits<T>::Scalar>& p, Index table,
                          Index table_rows, Index width, const Index* rows, Index count) noexcept {
  static_assert(LaneTraits<T>::kIsLanes, "lane_gather records on a tape of Lanes");
  using R = Recorder<T>;
  using S = typename LaneTraits<T>::Scalar;
  constexpr std::uint64_t kLanes = LaneTraits<T>::kLanes;
  const std::uint64_t nodes = static_cast<std::uint64_t>(count) * width;
  const std::uint64_t slots_needed = detail::kGsRows + (static_cast<std::uint64_t>(count) * kLanes);
  if ((rows == nullptr) || (nodes == 0U) || (nodes >= kNoIndex) || (slots_needed >= kNoIndex) ||
      !detail::params_cover(p, table, static_cast<std::uint64_t>(table_rows) * width)) {
    static_cast<void>(R::fail(tape, Status::kInvalidArgument));
    return kNoView;
  }
  const std::size_t entries = static_cast<std::size_t>(count) * LaneTraits<T>::kLanes;
  for (std::size_t q = 0U; q < entries; ++q) {
    if (rows[q] >= table_rows) {
      static_cast<void>(R::fail(tape, Status::kInvalidArgument));
      return kNoView;
    }
  }
  const Index d = R::reserve(tape, static_cast<Index>(nodes), static_cast<Index>(slots_needed));
  if (d == kNoIndex) {
    return kNoView;
  }
  if (!LaneOps::enable(tape)) {
    R::release_slots(tape, d);
    return kNoView;
  }
  Index* const slots = R::slots(tape);
  slots[d + detail::kGsWidth] = width;
  slots[d + detail::kGsCount] = count;
  detail::store_params(slots, d + detail::kGsParams, p.values, p.grads);
  for (std::size_t q = 0U; q < entries; ++q) {
    slots[d + detail::kGsRows + static_cast<Index>(q)] = table + (rows[q] * width);
  }
  constexpr Op kRow = LaneOps::op<rows::LaneGather>();
  const auto first = static_cast<Index>(tape.size());
  for (Index q = 0U; q < count; ++q) {
    const Index* offsets = &slots[d + detail::kGsRows + (q * static_cast<Index>(kLanes))];
    for (Index e = 0U; e < width; ++e) {
      static_cast<void>(R::append(tape, kRow, detail::lanes_gather_value<S, LaneTraits<T>::kLanes>(p.values, offsets, e),
                                  d, (q * width) + e));
    }
  }
  return View{first, static_cast<Index>(nodes)};
}

/// One node whose lane l is lane l of node x.first + at[l] (at: N
/// positions, each below x.count): a cross-entropy's target per sample.
template <class T>
inline Value<T> pick(Tape<T>& tape, View x, const Index* at) noexcept {
  static_assert(LaneTraits<T>::kIsLanes, "pick records on a tape of Lanes");
  using R = Recorder<T>;
  if ((at == nullptr) || (x.count == 0U)) {
    return R::fail(tape, Status::kInvalidArgument);
  }
  if (!R::recorded(tape, x.first, x.count)) {
    return R::fail(tape, Status::kInvalidHandle);
  }
  for (std::size_t l = 0U; l < LaneTraits<T>::kLanes; ++l) {
    if (at[l] >= x.count) {
      return R::fail(tape, Status::kInvalidArgument);
    }
  }
  const Index d = R::reserve(tape, 1U, pick_slots(LaneTraits<T>::kLanes));
  if (d == kNoIndex) {
    return Value<T>(&tape, kNoIndex);
  }
  if (!LaneOps::enable(tape)) {
    R::release_slots(tape, d);
    return Value<T>(&tape, kNoIndex);
  }
  Index* const slots = R::slots(tape);
  slots[d + detail::kPkFirst] = x.first;
  for (std::size_t l = 0U; l < LaneTraits<T>::kLanes; ++l) {
    slots[d + detail::kPkAt + static_cast<Index>(l)] = at[l];
  }
  return R::push(tape, LaneOps::op<rows::LanePick>(), detail::lanes_pick_value(R::values(tape), x.first, &slots[d + detail::kPkAt]),
                 d, 0U);
}

}  // namespace burtorch

#endif  // BURTORCH_LANES_OPS_HPP

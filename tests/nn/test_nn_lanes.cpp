// SPDX-License-Identifier: Apache-2.0
// The layers of lane batches beyond the MLP's and the GPT's: Conv1d, Conv2d,
// AvgPool, MaxPool and the GRU on a tape of N lanes (one sample per lane,
// the parameters shared from their own tape), and the models built of them
// (nn::SmallCnn, nn::CharGru):
//  - against PyTorch (the golden cases of tests/golden/test_nn_conv_golden.hpp
//    and test_nn_gru_golden.hpp, made by tools/golden/nn/make_conv.py and
//    make_gru.py): lane 0 holds the golden input, the other lanes other
//    inputs, the root masked to lane 0: lane 0's values, the shared
//    parameters' gradients and lane 0's input gradients to the scalar
//    suites' tolerances (FP64 1e-10, FP32 1e-4 relative);
//  - against the scalar tape, bit for bit per lane where the scalar path is
//    exact: weights, inputs and the root's weights dyadic rationals with few
//    bits, so every product and sum is exact in any order: every lane's
//    values and input gradients equal a scalar tape's for that lane's
//    sample, and the shared gradients the sum of the samples' (FP64 and
//    FP32, convolutions with padding, stride and dilation, ReLU, both
//    poolings; a GRU step's hidden state, FP64: the same libm per lane);
//    elsewhere within the tolerance docs/floating-point.md states for lanes
//    (other lanes of the golden cases, the GRU over several steps);
//  - the models trained by lane batches against serial batches (loss and
//    every gradient, full and partial sweeps, FP64 and FP32), their lane
//    plans exact (a lane tape of exactly the plan works, one node or slot
//    less is refused with nothing written past it);
//  - misuse: parameters outside the shared arrays, padding that is not
//    zero, view lists that do not follow one another: refused, nothing
//    recorded.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "golden.hpp"
#include "harness.hpp"

#ifndef BURTORCH_TEST_SMALL_TARGET
#define BURTORCH_TEST_SMALL_TARGET 0
#endif
#include "golden/test_nn_conv_golden.hpp"
#include "golden/test_nn_gru_golden.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

// The lanes of this target's vector registers; 2 where it has none.
constexpr std::size_t kN = (bt::kHardwareLanes > 1U) ? bt::kHardwareLanes : 2U;
template <class T>
using L = bt::Lanes<T, kN>;

using bt_test::check_array;
using bt_test::Tol;

constexpr std::size_t max_of(std::size_t a, std::size_t b) { return (a > b) ? a : b; }

// --- buffers -------------------------------------------------------------------
#if BURTORCH_TEST_SMALL_TARGET
constexpr std::size_t kLayerNodes = 160U;
constexpr std::size_t kLayerSlots = 200U;
constexpr nn::CnnOptions kCnn{4U, 1U, 2U, 2U, 3U};
constexpr nn::CharGruOptions kGru{5U, 2U, 3U, 2U};
#else
constexpr std::size_t kLayerNodes = 512U;
constexpr std::size_t kLayerSlots = 768U;
constexpr nn::CnnOptions kCnn{8U, 2U, 4U, 6U, 3U};
constexpr nn::CharGruOptions kGru{7U, 3U, 5U, 4U};
#endif
constexpr std::size_t kParamNodes = BURTORCH_TEST_SMALL_TARGET ? 160U : 512U;
constexpr std::size_t kLaneBytes =
    max_of(max_of(bt::Tape<L<double>>::bytes_required(kLayerNodes, kLayerSlots),
                  nn::SmallCnn<double>::lane_plan<kN>(kCnn, nn::OptimizerKind::kSgd).lane_tape_bytes),
           nn::CharGru<double>::lane_plan<kN>(kGru, nn::OptimizerKind::kSgd).lane_tape_bytes);
constexpr std::size_t kScalarBytes =
    max_of(max_of(bt::Tape<double>::bytes_required(kLayerNodes, kLayerSlots),  // the most: no parameter region
                  nn::SmallCnn<double>::plan(kCnn, nn::OptimizerKind::kSgd).tape_bytes),
           nn::CharGru<double>::plan(kGru, nn::OptimizerKind::kSgd).tape_bytes);
constexpr std::size_t kParamBytes = bt::Tape<double>::bytes_required(kParamNodes, 0U, kParamNodes);
constexpr std::size_t kGuard = 64U;
alignas(64) unsigned char g_lanes[kLaneBytes + kGuard];
alignas(64) unsigned char g_scalar[kScalarBytes];
alignas(64) unsigned char g_params[kParamBytes];
double g_grads[kParamNodes];  // reference gradients (serial batches, scalar sums)

template <class T>
bt::Tape<T> param_tape() {
  return bt::Tape<T>(g_params, sizeof(g_params), kParamNodes, 0U, kParamNodes);
}
template <class T>
bt::Tape<L<T>> lane_tape() {
  return bt::Tape<L<T>>(g_lanes, sizeof(g_lanes), kLayerNodes, kLayerSlots);
}

// Lane l of an input: the golden value in lane 0, in lane l > 0 the value
// of element (i + 3 l) % n scaled by 1 - l / 16 (other inputs, same size).
double lane_input(const double* v, std::size_t n, std::size_t i, std::size_t l) {
  return (l == 0U) ? v[i] : (v[(i + (3U * l)) % n] * (1.0 - (static_cast<double>(l) / 16.0)));
}
template <class T>
bt::View lane_leaves(bt::Tape<L<T>>& tape, const double* v, std::size_t n) {
  return bt::record_view(tape, static_cast<bt::Index>(n), [&](bt::Index i) noexcept {
    L<T> x;
    for (std::size_t l = 0U; l < kN; ++l) {
      x.lane[l] = static_cast<T>(lane_input(v, n, i, l));
    }
    return tape.leaf(x);
  });
}
template <class T>
bt::View leaves(bt::Tape<T>& tape, const double* v, std::size_t n) {
  return bt::record_view(tape, static_cast<bt::Index>(n), [&](bt::Index i) noexcept { return tape.leaf(static_cast<T>(v[i])); });
}
template <class T>
void overwrite(bt::Tape<T>& tape, bt::Index first, const double* v, std::size_t n) {
  for (std::size_t i = 0U; i < n; ++i) {
    tape.values()[first + i] = static_cast<T>(v[i]);
  }
}
bt::Index idx(int v) { return static_cast<bt::Index>(v); }

// Lane `lane` of n lane nodes from `first`, as doubles.
template <class T>
void lane_of(const L<T>* v, bt::Index first, std::size_t n, std::size_t lane, double* out) {
  for (std::size_t i = 0U; i < n; ++i) {
    out[i] = static_cast<double>(v[first + i].lane[lane]);
  }
}
double g_lane0[kLayerNodes];

// --- against PyTorch: the golden layer cases ---------------------------------
struct Case {
  const char* name;
  const int* geometry;
  const double* w;
  std::size_t w_n;
  const double* b;
  std::size_t b_n;
  const double* x;
  std::size_t x_n;
  const double* c;
  const double* y;
  std::size_t y_n;
  const double* gw;
  const double* gb;
  const double* gx;
};
#define BT_LAYER_CASE(tag)                                                                                      \
  Case {                                                                                                        \
    #tag, golden::tag##_geometry, golden::tag##_w, golden::tag##_w_n, golden::tag##_b, golden::tag##_b_n,      \
        golden::tag##_x, golden::tag##_x_n, golden::tag##_c, golden::tag##_y, golden::tag##_y_n,                 \
        golden::tag##_gw, golden::tag##_gb, golden::tag##_gx                                                   \
  }
#define BT_POOL_CASE(tag)                                                                                   \
  Case {                                                                                                    \
    #tag, golden::tag##_geometry, nullptr, 0U, nullptr, 0U, golden::tag##_x, golden::tag##_x_n,            \
        golden::tag##_c, golden::tag##_y, golden::tag##_y_n, nullptr, nullptr, golden::tag##_gx            \
  }

nn::Conv1dOptions conv1d_options(const int* g) {
  nn::Conv1dOptions o;
  o.in_channels = idx(g[0]);
  o.out_channels = idx(g[1]);
  o.kernel = idx(g[2]);
  o.stride = idx(g[3]);
  o.padding = idx(g[4]);
  o.dilation = idx(g[5]);
  o.bias = g[7] != 0;
  return o;
}
nn::Conv2dOptions conv2d_options(const int* g) {
  nn::Conv2dOptions o;
  o.in_channels = idx(g[0]);
  o.out_channels = idx(g[1]);
  o.kernel_h = idx(g[2]);
  o.kernel_w = idx(g[3]);
  o.stride_h = idx(g[4]);
  o.stride_w = idx(g[5]);
  o.padding_h = idx(g[6]);
  o.padding_w = idx(g[7]);
  o.dilation_h = idx(g[8]);
  o.dilation_w = idx(g[9]);
  o.bias = g[12] != 0;
  return o;
}

// The mask of lane 0: the root's gradient reaches lane 0 only.
template <class T>
L<T> lane0_mask() {
  L<T> m(T(0));
  m.lane[0] = T(1);
  return m;
}

// A scalar tape's parameter region for a copy of the parameters of `from`
// (one where `from` has none: pooling), and the copy (the same indices),
// for one sample's reference forward.
template <class T>
std::size_t region(const bt::Tape<T>& from) {
  return (from.size() != 0U) ? from.size() : 1U;
}
template <class T>
void copy_into(bt::Tape<T>& from, bt::Tape<T>& one) {
  for (std::size_t i = 0U; i < from.size(); ++i) {
    static_cast<void>(one.param(from.values()[i]));
  }
  if (from.size() == 0U) {
    static_cast<void>(one.param(T(0)));
  }
}
#define BT_SCALAR_COPY(one, from)                                                        \
  bt::Tape<T> one(g_scalar, sizeof(g_scalar), kLayerNodes, kLayerSlots, region(from)); \
  copy_into(from, one)

// Records the lanes' input (lane 0 the golden one), runs `forward`, checks
// the nodes and slots against the lane plan, then (sum(y * c)) * mask and
// its gradients: lane 0's values and input gradients and the shared
// parameters' gradients against PyTorch. Then every other lane's values
// against a scalar tape's forward of that lane's input (`scalar`, the
// parameters copied), within the lanes' tolerance.
template <class T, class Forward, class Scalar>
void lane_case(bt_test::Context& t, bt::Tape<T>& params, const Case& k, bt::Index weight, bt::Index bias,
               std::size_t plan_nodes, std::size_t plan_slots, Forward forward, Scalar scalar) {
  bt::Tape<L<T>> lanes = lane_tape<T>();
  if (weight != bt::kNoIndex) {
    overwrite(params, weight, k.w, k.w_n);
  }
  if (bias != bt::kNoIndex) {
    overwrite(params, bias, k.b, k.b_n);
  }
  params.zero_grad(0U, static_cast<bt::Index>(params.size()));
  const bt::LaneParams<T> p = nn::lane_params(params);
  const bt::View x = lane_leaves(lanes, k.x, k.x_n);
  const std::size_t nodes_before = lanes.size();
  const std::size_t slots_before = lanes.usage().slots;
  const bt::View y = forward(lanes, p, x);
  BT_CHECK(t, lanes.status() == bt::Status::kOk);
  BT_CHECK(t, y.count == k.y_n);
  BT_CHECK(t, (lanes.size() - nodes_before) == plan_nodes);
  BT_CHECK(t, (lanes.usage().slots - slots_before) == plan_slots);
  if ((y.count != k.y_n) || (lanes.status() != bt::Status::kOk)) {
    bt_test::print("    in ");
    bt_test::print(k.name);
    bt_test::print("\n");
    return;
  }
  const bt::View c = leaves(lanes, k.c, k.y_n);
  const bt::Value<L<T>> root = bt::inner_product(lanes, y, c) * lane0_mask<T>();
  BT_CHECK(t, lanes.backward(root) == bt::Status::kOk);
  lane_of(lanes.values(), y.first, k.y_n, 0U, g_lane0);
  check_array(t, g_lane0, k.y, k.y_n, k.name, Tol<T>::rel, Tol<T>::abs_floor);
  if (weight != bt::kNoIndex) {
    check_array(t, params.grads() + weight, k.gw, k.w_n, k.name);
  }
  if (bias != bt::kNoIndex) {
    check_array(t, params.grads() + bias, k.gb, k.b_n, k.name);
  }
  lane_of(lanes.grads(), x.first, k.x_n, 0U, g_lane0);
  check_array(t, g_lane0, k.gx, k.x_n, k.name, Tol<T>::rel, Tol<T>::abs_floor);
  for (std::size_t l = 1U; l < kN; ++l) {
    BT_SCALAR_COPY(one, params);
    const bt::View xs = bt::record_view(one, static_cast<bt::Index>(k.x_n), [&](bt::Index i) noexcept {
      return one.leaf(static_cast<T>(lane_input(k.x, k.x_n, i, l)));
    });
    const bt::View ys = scalar(one, xs);
    BT_CHECK(t, (ys.count == k.y_n) && (one.status() == bt::Status::kOk));
    lane_of(lanes.values(), y.first, k.y_n, l, g_lane0);
    bool close = true;
    for (std::size_t i = 0U; (ys.count == k.y_n) && (i < k.y_n); ++i) {
      close = close && bt_test::near(g_lane0[i], static_cast<double>(one.values()[ys.first + i]), Tol<T>::rel,
                                     Tol<T>::abs_floor * bt_test::max_abs(k.y, k.y_n));
    }
    BT_CHECK(t, close);
  }
}

template <class T>
void conv1d_case(bt_test::Context& t, const Case& k) {
  bt::Tape<T> params = param_tape<T>();
  nn::Rng rng(1U);
  const nn::Conv1dOptions o = conv1d_options(k.geometry);
  const bt::Index length = idx(k.geometry[6]);
  nn::Conv1d<T> conv;
  BT_CHECK(t, conv.create(params, o, rng));
  lane_case(t, params, k, conv.weight, conv.bias, nn::Conv1d<T>::template nodes<bt::LaneParams<T>>(o, length),
            nn::Conv1d<T>::template slots<bt::LaneParams<T>>(o, length),
            [&](bt::Tape<L<T>>& tp, const bt::LaneParams<T>& p, bt::View x) { return conv.forward(tp, p, x, length); },
            [&](bt::Tape<T>& one, bt::View x) { return conv.forward(one, x, length); });
}
template <class T>
void conv2d_case(bt_test::Context& t, const Case& k) {
  bt::Tape<T> params = param_tape<T>();
  nn::Rng rng(1U);
  const nn::Conv2dOptions o = conv2d_options(k.geometry);
  const nn::Size2d in{idx(k.geometry[10]), idx(k.geometry[11])};
  nn::Conv2d<T> conv;
  BT_CHECK(t, conv.create(params, o, rng));
  lane_case(t, params, k, conv.weight, conv.bias, nn::Conv2d<T>::template nodes<bt::LaneParams<T>>(o, in),
            nn::Conv2d<T>::template slots<bt::LaneParams<T>>(o, in),
            [&](bt::Tape<L<T>>& tp, const bt::LaneParams<T>& p, bt::View x) { return conv.forward(tp, p, x, in); },
            [&](bt::Tape<T>& one, bt::View x) { return conv.forward(one, x, in); });
}
// Pooling: geometry [channels, kernel, stride, length] or [channels, kH,
// kW, sH, sW, height, width]; no parameters (the parameter tape is empty).
template <class T, template <class> class Pool>
void pool1d_case(bt_test::Context& t, const Case& k) {
  bt::Tape<T> params = param_tape<T>();
  const Pool<T> pool{nn::Pool1dOptions{idx(k.geometry[0]), idx(k.geometry[1]), idx(k.geometry[2])}};
  const bt::Index length = idx(k.geometry[3]);
  lane_case(t, params, k, bt::kNoIndex, bt::kNoIndex, Pool<T>::nodes(pool.options, length),
            Pool<T>::slots(pool.options, length),
            [&](bt::Tape<L<T>>& tp, const bt::LaneParams<T>& /*p*/, bt::View x) { return pool.forward(tp, x, length); },
            [&](bt::Tape<T>& one, bt::View x) { return pool.forward(one, x, length); });
}
template <class T, template <class> class Pool>
void pool2d_case(bt_test::Context& t, const Case& k) {
  bt::Tape<T> params = param_tape<T>();
  const int* g = k.geometry;
  const Pool<T> pool{nn::Pool2dOptions{idx(g[0]), idx(g[1]), idx(g[2]), idx(g[3]), idx(g[4])}};
  const nn::Size2d in{idx(g[5]), idx(g[6])};
  lane_case(t, params, k, bt::kNoIndex, bt::kNoIndex, Pool<T>::nodes(pool.options, in), Pool<T>::slots(pool.options, in),
            [&](bt::Tape<L<T>>& tp, const bt::LaneParams<T>& /*p*/, bt::View x) { return pool.forward(tp, x, in); },
            [&](bt::Tape<T>& one, bt::View x) { return pool.forward(one, x, in); });
}

template <class T>
void layers_golden(bt_test::Context& t) {
  const Case conv1[] = {BT_LAYER_CASE(conv1d_plain), BT_LAYER_CASE(conv1d_stride_pad), BT_LAYER_CASE(conv1d_dilation),
                        BT_LAYER_CASE(conv1d_wide_pad), BT_LAYER_CASE(conv1d_long_kernel),
                        BT_LAYER_CASE(conv1d_stride_gap)};
  for (const Case& k : conv1) {
    conv1d_case<T>(t, k);
  }
  const Case conv2[] = {BT_LAYER_CASE(conv2d_plain), BT_LAYER_CASE(conv2d_stride_pad), BT_LAYER_CASE(conv2d_dilation)};
  for (const Case& k : conv2) {
    conv2d_case<T>(t, k);
  }
  pool1d_case<T, nn::AvgPool1d>(t, BT_POOL_CASE(avgpool1d_plain));
  pool1d_case<T, nn::AvgPool1d>(t, BT_POOL_CASE(avgpool1d_overlap));
  pool1d_case<T, nn::AvgPool1d>(t, BT_POOL_CASE(avgpool1d_gap));
  pool1d_case<T, nn::AvgPool1d>(t, BT_POOL_CASE(avgpool1d_one_channel));
  pool1d_case<T, nn::MaxPool1d>(t, BT_POOL_CASE(maxpool1d_plain));
  pool1d_case<T, nn::MaxPool1d>(t, BT_POOL_CASE(maxpool1d_ties));
  pool1d_case<T, nn::MaxPool1d>(t, BT_POOL_CASE(maxpool1d_one_channel));
  pool2d_case<T, nn::AvgPool2d>(t, BT_POOL_CASE(avgpool2d_plain));
  pool2d_case<T, nn::AvgPool2d>(t, BT_POOL_CASE(avgpool2d_rect));
  pool2d_case<T, nn::MaxPool2d>(t, BT_POOL_CASE(maxpool2d_plain));
  pool2d_case<T, nn::MaxPool2d>(t, BT_POOL_CASE(maxpool2d_ties));
}
void layers_golden_fp64(bt_test::Context& t) { layers_golden<double>(t); }
void layers_golden_fp32(bt_test::Context& t) { layers_golden<float>(t); }

// --- bit for bit where the arithmetic is exact ----------------------------------
// Dyadic data with few bits: weights k/8 (|k| <= 8), inputs j/4 (|j| <= 8),
// the root's weights m/2 (|m| <= 3): every product and every sum of a
// layer's terms is exact in FP32 and FP64, so any order of the sums gives
// the same bits.
double dyadic(std::size_t i, std::size_t salt, int range, double scale) {
  const std::size_t h = (i * 2654435761U) ^ (salt * 40503U) ^ (i >> 3U);
  return static_cast<double>(static_cast<int>(h % static_cast<std::size_t>((2 * range) + 1)) - range) * scale;
}

// Conv2d(2 -> 3, 3x3, stride 2, padding 1) ReLU, MaxPool2d(2), then
// Conv1d(3 -> 4, k 2, dilation 2, padding 2) ReLU over the pooled map read
// as one row, AvgPool1d(2): each lane's values and input gradients against a
// scalar tape's for that lane's sample, and the shared gradients against
// the sum of the samples' (added in lane order, exact).
struct ExactNet {
  static constexpr nn::Size2d kIn{8U, 8U};
  static nn::Conv2dOptions conv2d() {
    nn::Conv2dOptions o;
    o.in_channels = 2U;
    o.out_channels = 3U;
    o.kernel_h = 3U;
    o.kernel_w = 3U;
    o.stride_h = 2U;
    o.stride_w = 2U;
    o.padding_h = 1U;
    o.padding_w = 1U;
    o.act = nn::Activation::kRelu;
    return o;
  }
  static nn::Conv1dOptions conv1d() {
    nn::Conv1dOptions o;
    o.in_channels = 3U;
    o.out_channels = 4U;
    o.kernel = 2U;
    o.padding = 2U;
    o.dilation = 2U;
    o.act = nn::Activation::kRelu;
    return o;
  }
};

template <class T>
struct ExactLayers {
  nn::Conv2d<T> conv2;
  nn::MaxPool2d<T> max2{nn::Pool2dOptions{3U, 2U, 2U, 0U, 0U}};
  nn::Conv1d<T> conv1;
  nn::AvgPool1d<T> avg1{nn::Pool1dOptions{4U, 2U, 0U}};
  bool create(bt::Tape<T>& tape) {
    nn::Rng rng(5U);
    const bool ok = conv2.create(tape, ExactNet::conv2d(), rng) && conv1.create(tape, ExactNet::conv1d(), rng);
    for (std::size_t i = 0U; ok && (i < tape.size()); ++i) {
      tape.values()[i] = static_cast<T>(dyadic(i, 1U, 8, 0.125));
    }
    return ok;
  }
  // Conv2d 8x8x2 -> 4x4x3, MaxPool -> 2x2x3, read as 1-D (4 positions), Conv1d -> 6x4, AvgPool -> 3x4.
  template <class Tp, class... P>
  bt::View forward(Tp& tape, bt::View x, const P&... p) const {
    const bt::View a = conv2.forward(tape, p..., x, ExactNet::kIn);
    const nn::Size2d s1 = nn::Conv2d<T>::output_size(ExactNet::conv2d(), ExactNet::kIn);
    const bt::View b = max2.forward(tape, a, s1);
    const nn::Size2d s2 = nn::MaxPool2d<T>::output_size(max2.options, s1);
    const bt::Index length = s2.height * s2.width;
    const bt::View c = conv1.forward(tape, p..., b, length);
    return avg1.forward(tape, c, nn::Conv1d<T>::output_length(ExactNet::conv1d(), length));
  }
};

constexpr std::size_t kExactInputs = 8U * 8U * 2U;

template <class T>
void exact_lanes(bt_test::Context& t) {
  bt::Tape<T> params = param_tape<T>();
  static ExactLayers<T> net;
  BT_CHECK(t, net.create(params));
  const std::size_t count = params.size();
  bt::Tape<L<T>> lanes = lane_tape<T>();
  const bt::View x = bt::record_view(lanes, static_cast<bt::Index>(kExactInputs), [&](bt::Index i) noexcept {
    L<T> v;
    for (std::size_t l = 0U; l < kN; ++l) {
      v.lane[l] = static_cast<T>(dyadic(i, 10U + l, 8, 0.25));
    }
    return lanes.leaf(v);
  });
  const bt::View y = net.forward(lanes, x, nn::lane_params(params));
  BT_CHECK(t, (y.count != 0U) && (lanes.status() == bt::Status::kOk));
  const bt::View c = bt::record_view(lanes, y.count, [&](bt::Index i) noexcept {
    return lanes.leaf(L<T>(static_cast<T>(dyadic(i, 3U, 3, 0.5))));
  });
  params.zero_grad(0U, static_cast<bt::Index>(count));
  BT_CHECK(t, lanes.backward(bt::inner_product(lanes, y, c)) == bt::Status::kOk);
  for (std::size_t i = 0U; i < count; ++i) {
    g_grads[i] = 0.0;
  }
  bool values = true;
  bool inputs = true;
  bool clipped = false;  // some ReLU output is 0: its backward is exercised
  for (std::size_t l = 0U; l < kN; ++l) {
    BT_SCALAR_COPY(one, params);
    const bt::View xs = bt::record_view(one, static_cast<bt::Index>(kExactInputs), [&](bt::Index i) noexcept {
      return one.leaf(static_cast<T>(dyadic(i, 10U + l, 8, 0.25)));
    });
    const bt::View ys = net.forward(one, xs);
    const bt::View cs = bt::record_view(one, ys.count, [&](bt::Index i) noexcept {
      return one.leaf(static_cast<T>(dyadic(i, 3U, 3, 0.5)));
    });
    BT_CHECK(t, (ys.count == y.count) && (one.backward(bt::inner_product(one, ys, cs)) == bt::Status::kOk));
    for (bt::Index i = 0U; i < y.count; ++i) {
      values = values && (lanes.values()[y.first + i].lane[l] == one.values()[ys.first + i]);  // bit for bit
      clipped = clipped || (one.values()[ys.first + i] == T(0));
    }
    for (bt::Index i = 0U; i < x.count; ++i) {
      inputs = inputs && (lanes.grads()[x.first + i].lane[l] == one.grads()[xs.first + i]);
    }
    for (std::size_t i = 0U; i < count; ++i) {
      g_grads[i] += static_cast<double>(one.grads()[i]);
    }
  }
  BT_CHECK(t, values);
  BT_CHECK(t, inputs);
  bool shared = true;
  bool nonzero = false;
  for (std::size_t i = 0U; i < count; ++i) {
    shared = shared && (static_cast<double>(params.grads()[i]) == g_grads[i]);
    nonzero = nonzero || (g_grads[i] != 0.0);
  }
  BT_CHECK(t, shared);
  BT_CHECK(t, nonzero);
  BT_CHECK(t, y.count == 12U);
  static_cast<void>(clipped);
}
void exact_fp64(bt_test::Context& t) { exact_lanes<double>(t); }
void exact_fp32(bt_test::Context& t) { exact_lanes<float>(t); }

// --- the GRU ----------------------------------------------------------------------
struct GruCase {
  bt::Index input;
  bt::Index hidden;
  bt::Index steps;
  bool bias;
  const double* params;
  const double* x;
  const double* h0;
  const double* c;
  const double* h;
  const double* gparams;
  const double* gx;
  const double* gh0;
};
constexpr std::size_t kMaxGruSteps = 8U;

// The steps from h0 over the inputs x (steps * input), on either tape;
// hs[s] receives the state after step s.
template <class Tp, class G, class... P>
void gru_steps(Tp& tape, const G& gru, const GruCase& k, bt::View x, bt::View h0, bt::View* hs, const P&... p) {
  bt::View h = h0;
  for (bt::Index s = 0U; s < k.steps; ++s) {
    h = gru.step(tape, p..., bt::View{x.first + (s * k.input), k.input}, h);
    hs[s] = h;
  }
}
// The root: sum_s h_s . c_s.
template <class U>
bt::Value<U> gru_root(bt::Tape<U>& tape, const GruCase& k, const bt::View* hs, bt::View c) {
  const bt::View parts = bt::record_view(tape, k.steps, [&](bt::Index s) noexcept {
    return bt::inner_product(tape, bt::View{hs[s].first, k.hidden}, bt::View{c.first + (s * k.hidden), k.hidden}, nullptr);
  });
  return bt::reduce(tape, bt::Op::kSumR, parts);
}

template <class T>
void gru_case(bt_test::Context& t, const GruCase& k) {
  nn::GruOptions o;
  o.input = k.input;
  o.hidden = k.hidden;
  o.bias = k.bias;
  bt::Tape<T> params = param_tape<T>();
  nn::Rng rng(1U);
  nn::Gru<T> gru;
  BT_CHECK(t, gru.create(params, o, rng));
  overwrite(params, 0U, k.params, gru.params().count);
  params.zero_grad(0U, static_cast<bt::Index>(params.size()));
  bt::Tape<L<T>> lanes = lane_tape<T>();
  const std::size_t nx = static_cast<std::size_t>(k.steps) * k.input;
  const std::size_t nc = static_cast<std::size_t>(k.steps) * k.hidden;
  const bt::View x = lane_leaves(lanes, k.x, nx);
  const bt::View h0 = lane_leaves(lanes, k.h0, k.hidden);
  const bt::View c = leaves(lanes, k.c, nc);
  bt::View hs[kMaxGruSteps];
  const bt::Mark start = lanes.mark();
  gru_steps(lanes, gru, k, x, h0, hs, nn::lane_params(params));
  BT_CHECK(t, lanes.status() == bt::Status::kOk);
  BT_CHECK(t, (lanes.size() - start.nodes) == nn::Gru<T>::template nodes<bt::LaneParams<T>>(o, k.steps));
  BT_CHECK(t, (lanes.usage().slots - start.slots) == nn::Gru<T>::template slots<bt::LaneParams<T>>(o, k.steps));
  BT_CHECK(t, lanes.backward(gru_root(lanes, k, hs, c) * lane0_mask<T>()) == bt::Status::kOk);
  for (bt::Index s = 0U; s < k.steps; ++s) {
    lane_of(lanes.values(), hs[s].first, k.hidden, 0U, g_lane0);
    check_array(t, g_lane0, k.h + (s * k.hidden), k.hidden, "lane 0's h", Tol<T>::rel, Tol<T>::abs_floor);
  }
  check_array(t, params.grads(), k.gparams, gru.params().count, "d params");
  lane_of(lanes.grads(), x.first, nx, 0U, g_lane0);
  check_array(t, g_lane0, k.gx, nx, "lane 0's d x", Tol<T>::rel, Tol<T>::abs_floor);
  lane_of(lanes.grads(), h0.first, k.hidden, 0U, g_lane0);
  check_array(t, g_lane0, k.gh0, k.hidden, "lane 0's d h0", Tol<T>::rel, Tol<T>::abs_floor);
  // The other lanes: a scalar tape's steps over their inputs.
  for (std::size_t l = 1U; l < kN; ++l) {
    BT_SCALAR_COPY(one, params);
    const bt::View xs = bt::record_view(one, static_cast<bt::Index>(nx), [&](bt::Index i) noexcept {
      return one.leaf(static_cast<T>(lane_input(k.x, nx, i, l)));
    });
    const bt::View h0s = bt::record_view(one, k.hidden, [&](bt::Index i) noexcept {
      return one.leaf(static_cast<T>(lane_input(k.h0, k.hidden, i, l)));
    });
    const bt::View cs = leaves(one, k.c, nc);
    bt::View hl[kMaxGruSteps];
    gru_steps(one, gru, k, xs, h0s, hl);
    BT_CHECK(t, one.backward(gru_root(one, k, hl, cs)) == bt::Status::kOk);
    bool close = true;
    for (bt::Index s = 0U; s < k.steps; ++s) {
      for (bt::Index i = 0U; i < k.hidden; ++i) {
        close = close && bt_test::near(static_cast<double>(lanes.values()[hs[s].first + i].lane[l]),
                                       static_cast<double>(one.values()[hl[s].first + i]), Tol<T>::rel,
                                       Tol<T>::abs_floor);
      }
    }
    for (std::size_t i = 0U; i < nx; ++i) {
      // Lane l's root is masked out: its inputs get no gradient.
      close = close && (lanes.grads()[x.first + i].lane[l] == T(0));
    }
    BT_CHECK(t, close);
  }
}

template <class T>
void gru_golden(bt_test::Context& t) {
  using namespace golden;
  const GruCase cases[] = {
      {static_cast<bt::Index>(gru_bias_input), static_cast<bt::Index>(gru_bias_hidden),
       static_cast<bt::Index>(gru_bias_steps), true, gru_bias_params, gru_bias_x, gru_bias_h0, gru_bias_c, gru_bias_h,
       gru_bias_gparams, gru_bias_gx, gru_bias_gh0},
      {static_cast<bt::Index>(gru_nobias_input), static_cast<bt::Index>(gru_nobias_hidden),
       static_cast<bt::Index>(gru_nobias_steps), false, gru_nobias_params, gru_nobias_x, gru_nobias_h0, gru_nobias_c,
       gru_nobias_h, gru_nobias_gparams, gru_nobias_gx, gru_nobias_gh0},
  };
  for (const GruCase& k : cases) {
    gru_case<T>(t, k);
  }
}
void gru_golden_fp64(bt_test::Context& t) { gru_golden<double>(t); }
void gru_golden_fp32(bt_test::Context& t) { gru_golden<float>(t); }

// One GRU step with dyadic weights, inputs and state (FP64): the matvecs are
// exact, the gates the same libm calls lane by lane: every lane's new state
// bit for bit a scalar tape's.
void gru_step_exact(bt_test::Context& t) {
  nn::GruOptions o;
  o.input = 5U;
  o.hidden = 6U;
  bt::Tape<double> params = param_tape<double>();
  nn::Rng rng(2U);
  nn::Gru<double> gru;
  BT_CHECK(t, gru.create(params, o, rng));
  for (std::size_t i = 0U; i < params.size(); ++i) {
    params.values()[i] = dyadic(i, 7U, 8, 0.125);
  }
  bt::Tape<L<double>> lanes = lane_tape<double>();
  const auto sample = [](std::size_t i, std::size_t l) { return dyadic(i, 20U + l, 8, 0.25); };
  const bt::View x = bt::record_view(lanes, o.input + o.hidden, [&](bt::Index i) noexcept {
    L<double> v;
    for (std::size_t l = 0U; l < kN; ++l) {
      v.lane[l] = sample(i, l);
    }
    return lanes.leaf(v);
  });
  const bt::View h = gru.step(lanes, nn::lane_params(params), bt::View{x.first, o.input},
                              bt::View{x.first + o.input, o.hidden});
  BT_CHECK(t, (h.count == o.hidden) && (lanes.status() == bt::Status::kOk));
  bool same = true;
  bool distinct = false;
  for (std::size_t l = 0U; l < kN; ++l) {
    using T = double;
    BT_SCALAR_COPY(one, params);
    const bt::View xs = bt::record_view(one, o.input + o.hidden, [&](bt::Index i) noexcept { return one.leaf(sample(i, l)); });
    const bt::View hs = gru.step(one, bt::View{xs.first, o.input}, bt::View{xs.first + o.input, o.hidden});
    for (bt::Index i = 0U; (hs.count == o.hidden) && (i < o.hidden); ++i) {
      same = same && (lanes.values()[h.first + i].lane[l] == one.values()[hs.first + i]);
      distinct = distinct || (lanes.values()[h.first + i].lane[l] != lanes.values()[h.first + i].lane[0]);
    }
  }
  BT_CHECK(t, same);
  BT_CHECK(t, distinct);
}

// --- the models: lane batches against serial batches ---------------------------
constexpr std::size_t kBatch = (2U * kN) + 3U;  // two full sweeps and a partial one
constexpr std::size_t kMaxPixels = static_cast<std::size_t>(kCnn.side) * kCnn.side * kCnn.channels;
float g_pixels[kBatch][kMaxPixels];
bt::Index g_labels[kBatch];
std::uint8_t g_tokens[kBatch][kGru.steps + 1U];

// |a - b| <= rel * the largest |gradient| (lanes add a layer's terms in
// another order than one sample's kernels: docs/floating-point.md).
template <class T>
constexpr double lane_tolerance() {
  return (sizeof(T) == 8U) ? 1e-12 : 2e-5;
}
template <class T>
void compare_with_serial(bt_test::Context& t, double loss_serial, T loss_lanes, const bt::Tape<T>& params,
                         std::size_t count) {
  BT_CHECK(t, std::isfinite(static_cast<double>(loss_lanes)));
  BT_CHECK_NEAR(t, static_cast<double>(loss_lanes), loss_serial, lane_tolerance<T>());
  double scale = 0.0;
  for (std::size_t i = 0U; i < count; ++i) {
    scale = (std::fabs(g_grads[i]) > scale) ? std::fabs(g_grads[i]) : scale;
  }
  BT_CHECK(t, scale > 0.0);
  std::size_t bad = 0U;
  for (std::size_t i = 0U; i < count; ++i) {
    bad += (std::fabs(static_cast<double>(params.grads()[i]) - g_grads[i]) <= (lane_tolerance<T>() * scale)) ? 0U : 1U;
  }
  BT_CHECK(t, bad == 0U);
}

// Runs a lane batch of `batch` samples on a lane tape of the plan's size
// (variant 0), one node less (1) or one slot less (2); the rest of g_lanes
// filled with guard bytes, which must stay intact. Returns the mean loss.
template <class T, class Model, class LaneLoss>
T run_lanes(bt_test::Context& t, const nn::LanePlan& plan, bt::Tape<T>& params, const Model& model, std::size_t batch,
            int variant, LaneLoss lane_loss, bt::Status* status) {
  const std::size_t nodes = plan.sample_nodes - ((variant == 1) ? 1U : 0U);
  const std::size_t slots = plan.slots - ((variant == 2) ? 1U : 0U);
  const std::size_t bytes = bt::Tape<L<T>>::bytes_required(nodes, slots);
  BT_CHECK(t, (bytes + kGuard) <= sizeof(g_lanes));
  std::memset(g_lanes, 0xA5, sizeof(g_lanes));
  bt::Tape<L<T>> lanes(g_lanes, bytes, nodes, slots);
  const T loss = nn::lane_batch(params, model.params(), lanes, batch, lane_loss);
  *status = lanes.status();
  bool intact = true;
  for (std::size_t i = bytes; i < (bytes + kGuard); ++i) {
    intact = intact && (g_lanes[i] == 0xA5U);
  }
  BT_CHECK(t, intact);
  return loss;
}

template <class T>
void cnn_matches_serial(bt_test::Context& t, std::size_t batch) {
  using Model = nn::SmallCnn<T>;
  constexpr nn::LanePlan kPlan = Model::template lane_plan<kN>(kCnn, nn::OptimizerKind::kSgd);
  constexpr nn::MemoryPlan kSerial = Model::plan(kCnn, nn::OptimizerKind::kSgd);
  const std::size_t pixels = Model::inputs(kCnn);
  for (std::size_t i = 0U; i < kBatch; ++i) {
    for (std::size_t k = 0U; k < pixels; ++k) {
      g_pixels[i][k] = static_cast<float>(std::sin((0.37 * static_cast<double>(k)) + (1.3 * static_cast<double>(i))));
    }
    g_labels[i] = static_cast<bt::Index>((i * 5U) % kCnn.classes);
  }
  bt::Tape<T> serial(g_scalar, sizeof(g_scalar), kSerial.nodes, kSerial.slots, kSerial.parameters);
  static Model model;
  nn::Rng rng(3U);
  BT_CHECK(t, model.create(serial, kCnn, rng));
  const double loss_serial = static_cast<double>(nn::serial_batch(serial, model.params(), batch, [&](bt::Tape<T>& tp, std::size_t i) {
    return model.loss(tp, g_pixels[i], g_labels[i]);
  }));
  for (std::size_t i = 0U; i < kPlan.params.parameters; ++i) {
    g_grads[i] = static_cast<double>(serial.grads()[i]);
  }
  bt::Tape<T> params(g_params, sizeof(g_params), kPlan.params.nodes, 0U, kPlan.params.parameters);
  static Model lane_model;
  nn::Rng rng2(3U);
  BT_CHECK(t, lane_model.create(params, kCnn, rng2));
  const auto lane_loss = [&](bt::Tape<L<T>>& tp, const bt::LaneParams<T>& p, std::size_t first, std::size_t active) {
    const float* px[kN];
    bt::Index labels[kN];
    for (std::size_t l = 0U; l < kN; ++l) {
      const std::size_t i = first + ((l < active) ? l : 0U);
      px[l] = g_pixels[i];
      labels[l] = g_labels[i];
    }
    return lane_model.loss(tp, p, px, labels);
  };
  bt::Status status = bt::Status::kOk;
  const T loss_lanes = run_lanes<T>(t, kPlan, params, lane_model, batch, 0, lane_loss, &status);
  BT_CHECK(t, status == bt::Status::kOk);
  compare_with_serial(t, loss_serial, loss_lanes, params, kPlan.params.parameters);
  // The plan is exact: one node or one slot less is refused.
  for (int variant = 1; variant <= 2; ++variant) {
    const T refused = run_lanes<T>(t, kPlan, params, lane_model, batch, variant, lane_loss, &status);
    BT_CHECK(t, std::isnan(static_cast<double>(refused)) && (status == bt::Status::kCapacityExceeded));
  }
}
void cnn_fp64(bt_test::Context& t) {
  cnn_matches_serial<double>(t, kBatch);
  cnn_matches_serial<double>(t, 1U);
}
void cnn_fp32(bt_test::Context& t) {
  cnn_matches_serial<float>(t, kBatch);
  cnn_matches_serial<float>(t, kN);
}

template <class T>
void gru_model_matches_serial(bt_test::Context& t, std::size_t batch) {
  using Model = nn::CharGru<T>;
  constexpr nn::LanePlan kPlan = Model::template lane_plan<kN>(kGru, nn::OptimizerKind::kSgd);
  constexpr nn::MemoryPlan kSerial = Model::plan(kGru, nn::OptimizerKind::kSgd);
  for (std::size_t i = 0U; i < kBatch; ++i) {
    for (std::size_t k = 0U; k <= kGru.steps; ++k) {
      g_tokens[i][k] = static_cast<std::uint8_t>(((i * 7U) + (k * 3U) + ((i * k) % 5U)) % kGru.vocab);
    }
  }
  bt::Tape<T> serial(g_scalar, sizeof(g_scalar), kSerial.nodes, kSerial.slots, kSerial.parameters);
  static Model model;
  nn::Rng rng(4U);
  BT_CHECK(t, model.create(serial, kGru, rng));
  // The serial plan is exact: one sequence records sample_nodes and sample_slots.
  const bt::Mark m = serial.mark();
  static_cast<void>(model.loss(serial, &g_tokens[0][0], &g_tokens[0][1]));
  BT_CHECK(t, (serial.size() - m.nodes) == kSerial.sample_nodes);
  BT_CHECK(t, (serial.usage().slots - m.slots) == kSerial.slots);
  BT_CHECK(t, serial.rewind(m) == bt::Status::kOk);
  const double loss_serial = static_cast<double>(nn::serial_batch(serial, model.params(), batch, [&](bt::Tape<T>& tp, std::size_t i) {
    return model.loss(tp, &g_tokens[i][0], &g_tokens[i][1]);
  }));
  for (std::size_t i = 0U; i < kPlan.params.parameters; ++i) {
    g_grads[i] = static_cast<double>(serial.grads()[i]);
  }
  bt::Tape<T> params(g_params, sizeof(g_params), kPlan.params.nodes, 0U, kPlan.params.parameters);
  static Model lane_model;
  nn::Rng rng2(4U);
  BT_CHECK(t, lane_model.create(params, kGru, rng2));
  const auto lane_loss = [&](bt::Tape<L<T>>& tp, const bt::LaneParams<T>& p, std::size_t first, std::size_t active) {
    const std::uint8_t* in[kN];
    const std::uint8_t* out[kN];
    for (std::size_t l = 0U; l < kN; ++l) {
      const std::size_t i = first + ((l < active) ? l : 0U);
      in[l] = &g_tokens[i][0];
      out[l] = &g_tokens[i][1];
    }
    return lane_model.loss(tp, p, in, out);
  };
  bt::Status status = bt::Status::kOk;
  const T loss_lanes = run_lanes<T>(t, kPlan, params, lane_model, batch, 0, lane_loss, &status);
  BT_CHECK(t, status == bt::Status::kOk);
  compare_with_serial(t, loss_serial, loss_lanes, params, kPlan.params.parameters);
  for (int variant = 1; variant <= 2; ++variant) {
    const T refused = run_lanes<T>(t, kPlan, params, lane_model, batch, variant, lane_loss, &status);
    BT_CHECK(t, std::isnan(static_cast<double>(refused)) && (status == bt::Status::kCapacityExceeded));
  }
}
void char_gru_fp64(bt_test::Context& t) {
  gru_model_matches_serial<double>(t, kBatch);
  gru_model_matches_serial<double>(t, 1U);
}
void char_gru_fp32(bt_test::Context& t) {
  gru_model_matches_serial<float>(t, kBatch);
}

// --- misuse ----------------------------------------------------------------------
// lane_conv refuses, recording nothing: weights or biases outside the
// shared arrays, padding that is not zero, lists that do not follow one
// another, no windows.
void lane_conv_refuses(bt_test::Context& t) {
  bt::Tape<double> params = param_tape<double>();
  for (int i = 0; i < 12; ++i) {
    static_cast<void>(params.param(0.5));
  }
  const bt::LaneParams<double> p = nn::lane_params(params);
  const auto fresh = [&](bt::Tape<L<double>>& tape, bt::View* x, bt::View* zeros, bt::ViewList* first) {
    *x = bt::record_view(tape, 4U, [&](bt::Index i) noexcept { return tape.leaf(L<double>(static_cast<double>(i))); });
    *zeros = bt::record_view(tape, 2U, [&](bt::Index) noexcept { return tape.input(L<double>(0.0)); });
    const bt::View w0[2] = {bt::View{zeros->first, 2U}, bt::View{x->first, 2U}};
    const bt::View w1[1] = {bt::View{x->first, 4U}};
    *first = bt::view_list(tape, w0, 2U);
    static_cast<void>(bt::view_list(tape, w1, 1U));
  };
  struct Attempt {
    bt::Index w_first;
    bt::Index rows;
    bt::Index windows;
    bt::Index bias;
    bool bad_zero;
  };
  const Attempt attempts[] = {
      {0U, 3U, 2U, 9U, false},            // good
      {1U, 3U, 2U, 9U, false},            // weights past the end (1 + 12 > 12)
      {0U, 3U, 2U, 10U, false},           // biases past the end
      {0U, 0U, 2U, bt::kNoIndex, false},  // no rows
      {0U, 3U, 0U, bt::kNoIndex, false},  // no windows
      {0U, 3U, 3U, bt::kNoIndex, false},  // a third list that is not there
      {0U, 3U, 2U, bt::kNoIndex, true},   // padding that is not zero
  };
  for (std::size_t a = 0U; a < (sizeof(attempts) / sizeof(attempts[0])); ++a) {
    bt::Tape<L<double>> tape = lane_tape<double>();
    bt::View x;
    bt::View zeros;
    bt::ViewList first;
    fresh(tape, &x, &zeros, &first);
    if (attempts[a].bad_zero) {
      tape.values()[zeros.first + 1U].lane[kN - 1U] = 1.0;
    }
    const std::size_t nodes = tape.size();
    const std::size_t slots = tape.usage().slots;
    const bt::View y = bt::lane_conv(tape, p, attempts[a].w_first, attempts[a].rows, first, attempts[a].windows,
                                       zeros.first, attempts[a].bias);
    if (a == 0U) {
      BT_CHECK(t, (y.count == 6U) && (tape.status() == bt::Status::kOk));
      // Window 0 skips its padding: row o = 0.5 * (x0 + x1) + 0.5; window 1 = 0.5 * sum + 0.5.
      BT_CHECK(t, tape.values()[y.first].lane[0] == 1.0);
      BT_CHECK(t, tape.values()[y.first + 3U].lane[0] == 3.5);
    } else {
      BT_CHECK(t, (y.count == 0U) && (tape.status() == bt::Status::kInvalidArgument));
      BT_CHECK(t, (tape.size() == nodes) && (tape.usage().slots == slots));
    }
  }
}

const bt_test::TestCase kCases[] = {
    {"layers_golden_fp64", layers_golden_fp64},
    {"layers_golden_fp32", layers_golden_fp32},
    {"exact_fp64", exact_fp64},
    {"exact_fp32", exact_fp32},
    {"gru_golden_fp64", gru_golden_fp64},
    {"gru_golden_fp32", gru_golden_fp32},
    {"gru_step_exact", gru_step_exact},
    {"cnn_fp64", cnn_fp64},
    {"cnn_fp32", cnn_fp32},
    {"char_gru_fp64", char_gru_fp64},
    {"char_gru_fp32", char_gru_fp32},
    {"lane_conv_refuses", lane_conv_refuses},
};

}  // namespace

BT_TEST_MAIN("nn_lanes", kCases)

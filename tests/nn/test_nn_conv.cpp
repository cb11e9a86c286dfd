// SPDX-License-Identifier: Apache-2.0
// Convolutions, pooling and a small CNN against PyTorch
// (tests/golden/test_nn_conv_golden.hpp, made by tools/golden/nn/make_conv.py):
//  - Conv1d (stride, padding, dilation, padding wider than the kernel, a
//    kernel longer than the input, a stride longer than the kernel), Conv2d
//    (stride, padding, dilation), AvgPool and MaxPool 1-D and 2-D (ties):
//    values and the gradients of weights, biases and inputs, FP64 to 1e-10
//    relative, FP32 to 1e-4; every forward records exactly the nodes and
//    slots its constexpr plan states; the convolutions both with the
//    activation chosen at run time and at compile time (forward<A>).
//  - The memory plan: hand-counted geometries (an oracle independent of the
//    window walker), and a tape of exactly the plan works while one node or
//    one slot less is refused with nothing recorded.
//  - Misuse: wrong widths and shapes, a kernel longer than an unpadded
//    input, a layer never created, an input not on the tape, windows wider
//    than the local limits, zero strides: refused, nothing recorded.
//  - A small CNN (Conv1d ReLU MaxPool Conv1d ReLU AvgPool flatten Linear):
//    create() draws PyTorch-independent initial weights equal to the
//    generator's reimplementation of our PRNG; one sample's loss and
//    gradients (FP64, FP32); 100 SGD and 100 Adam steps from the same
//    weights on the same data: every step's loss and all parameters after
//    steps 1, 10 and 100, FP64. Small targets (16 KB RAM) train a smaller
//    CNN of the same structure.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstdint>

#include "golden.hpp"
#include "harness.hpp"

#ifndef BURTORCH_TEST_SMALL_TARGET
#define BURTORCH_TEST_SMALL_TARGET 0
#endif
#include "golden/test_nn_conv_golden.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

// --- the CNN -----------------------------------------------------------------
struct CnnShape {
  bt::Index length;   // input positions
  bt::Index in;       // input channels
  bt::Index c1;       // first convolution's channels
  bt::Index c2;       // second convolution's channels
  bt::Index classes;  // logits
};

// Conv1d(in -> c1, k 3, padding 1) ReLU, MaxPool1d(2), Conv1d(c1 -> c2, k 3,
// padding 1) ReLU, AvgPool1d(2), flatten, Linear(c2 * length / 4 -> classes),
// cross-entropy: the model of tools/golden/nn/make_conv.py, composed from the
// layers as a user would, with its memory plan.
template <class T>
struct Cnn {
  static constexpr nn::Conv1dOptions conv1_options(const CnnShape& s) noexcept {
    nn::Conv1dOptions o{};
    o.in_channels = s.in;
    o.out_channels = s.c1;
    o.kernel = 3U;
    o.padding = 1U;
    o.act = nn::Activation::kRelu;
    return o;
  }
  static constexpr nn::Pool1dOptions pool1_options(const CnnShape& s) noexcept {
    return nn::Pool1dOptions{s.c1, 2U, 0U};
  }
  static constexpr nn::Conv1dOptions conv2_options(const CnnShape& s) noexcept {
    nn::Conv1dOptions o = conv1_options(s);
    o.in_channels = s.c1;
    o.out_channels = s.c2;
    return o;
  }
  static constexpr nn::Pool1dOptions pool2_options(const CnnShape& s) noexcept {
    return nn::Pool1dOptions{s.c2, 2U, 0U};
  }
  static constexpr nn::LinearOptions head_options(const CnnShape& s) noexcept {
    nn::LinearOptions o{};
    o.in = s.c2 * (s.length / 4U);
    o.out = s.classes;
    return o;
  }
  // Positions after each stage.
  static constexpr bt::Index l1(const CnnShape& s) noexcept {
    return nn::Conv1d<T>::output_length(conv1_options(s), s.length);
  }
  static constexpr bt::Index l2(const CnnShape& s) noexcept {
    return nn::MaxPool1d<T>::output_length(pool1_options(s), l1(s));
  }
  static constexpr bt::Index l3(const CnnShape& s) noexcept {
    return nn::Conv1d<T>::output_length(conv2_options(s), l2(s));
  }

  static constexpr std::size_t parameters(const CnnShape& s) noexcept {
    return nn::Conv1d<T>::parameters(conv1_options(s)) + nn::Conv1d<T>::parameters(conv2_options(s)) +
           nn::Linear<T>::parameters(head_options(s));
  }
  // One sample: its input leaves, the layers, the loss.
  static constexpr std::size_t sample_nodes(const CnnShape& s) noexcept {
    return (static_cast<std::size_t>(s.length) * s.in) + nn::Conv1d<T>::nodes(conv1_options(s), s.length) +
           nn::MaxPool1d<T>::nodes(pool1_options(s), l1(s)) + nn::Conv1d<T>::nodes(conv2_options(s), l2(s)) +
           nn::AvgPool1d<T>::nodes(pool2_options(s), l3(s)) + nn::Linear<T>::nodes(head_options(s)) +
           nn::kCrossEntropyNodes;
  }
  static constexpr std::size_t sample_slots(const CnnShape& s) noexcept {
    return nn::Conv1d<T>::slots(conv1_options(s), s.length) + nn::MaxPool1d<T>::slots(pool1_options(s), l1(s)) +
           nn::Conv1d<T>::slots(conv2_options(s), l2(s)) + nn::AvgPool1d<T>::slots(pool2_options(s), l3(s)) +
           nn::Linear<T>::view_slots(head_options(s));
  }
  static constexpr nn::MemoryPlan plan(const CnnShape& s, nn::OptimizerKind kind) noexcept {
    return nn::make_plan<T>(parameters(s), sample_nodes(s), sample_slots(s), kind);
  }

  bool create(bt::Tape<T>& tape, const CnnShape& s, nn::Rng& rng) noexcept {
    shape = s;
    pool1.options = pool1_options(s);
    pool2.options = pool2_options(s);
    return conv1.create(tape, conv1_options(s), rng) && conv2.create(tape, conv2_options(s), rng) &&
           head.create(tape, head_options(s), rng);
  }
  bt::View params() const noexcept { return bt::View{conv1.weight, static_cast<bt::Index>(parameters(shape))}; }

  // The loss of one sample x ([length][in], channels-last) of class y.
  bt::Value<T> loss(bt::Tape<T>& tape, const double* x, bt::Index y) const noexcept {
    const bt::View in = bt::record_view(tape, shape.length * shape.in, [&](bt::Index i) noexcept {
      return tape.leaf(static_cast<T>(x[i]));
    });
    const bt::View h1 = pool1.forward(tape, conv1.forward(tape, in, shape.length), l1(shape));
    const bt::View h2 = pool2.forward(tape, conv2.forward(tape, h1, l2(shape)), l3(shape));
    return nn::cross_entropy(tape, head.forward(tape, nn::flatten(h2)), y);
  }

  CnnShape shape{};
  nn::Conv1d<T> conv1;
  nn::MaxPool1d<T> pool1;
  nn::Conv1d<T> conv2;
  nn::AvgPool1d<T> pool2;
  nn::Linear<T> head;
};

constexpr CnnShape shape_of(const int* s) noexcept {
  return CnnShape{static_cast<bt::Index>(s[0]), static_cast<bt::Index>(s[1]), static_cast<bt::Index>(s[2]),
                  static_cast<bt::Index>(s[3]), static_cast<bt::Index>(s[4])};
}
constexpr CnnShape kCnn = shape_of(golden::cnn_shape);
constexpr CnnShape kCnnSmall = shape_of(golden::cnn_small_shape);
constexpr nn::MemoryPlan kCnnPlan = Cnn<double>::plan(kCnn, nn::OptimizerKind::kAdam);
constexpr nn::MemoryPlan kCnnSmallPlan = Cnn<double>::plan(kCnnSmall, nn::OptimizerKind::kAdam);
// The plans a firmware would static_assert: the CNN's 293 parameters, and
// what one sample records (docs/training.md quotes these numbers).
static_assert(kCnnPlan.parameters == 293U, "Conv1d 2->6 (42), Conv1d 6->8 (152), Linear 32->3 (99)");
static_assert(kCnnPlan.sample_nodes == 32U + (2U + 96U + 96U) + 48U + (6U + 64U + 64U) + 32U + 3U + 2U,
              "input, conv1 (zeros, outputs, relu), maxpool, conv2, avgpool, head, loss");
static_assert(kCnnPlan.slots == 116U + 96U + 60U + 64U + 7U,
              "conv1 (16 lists, 2 of them with zeros, and descriptors), maxpool (lists of 2), conv2, avgpool, head");
static_assert(kCnnSmallPlan.parameters == 107U, "Conv1d 1->4 (16), Conv1d 4->4 (52), Linear 12->3 (39)");

// --- one arena for every tape --------------------------------------------------
// Layer cases: parameters, input, outputs and the root's weights.
constexpr std::size_t kLayerNodes = 256U;
constexpr std::size_t kLayerSlots = 256U;
constexpr std::size_t kLayerBytes = bt::Tape<double>::bytes_required(kLayerNodes, kLayerSlots);
#if BURTORCH_TEST_SMALL_TARGET
constexpr nn::MemoryPlan kTrainPlan = kCnnSmallPlan;
#else
constexpr nn::MemoryPlan kTrainPlan = kCnnPlan;
#endif
constexpr std::size_t kArenaBytes = (kTrainPlan.tape_bytes > kLayerBytes) ? kTrainPlan.tape_bytes : kLayerBytes;
alignas(64) unsigned char g_arena[kArenaBytes];
double g_moments[2U * kTrainPlan.parameters];

using bt_test::check_array;
using bt_test::max_abs;
using bt_test::Tol;

template <class T>
bt::View leaves(bt::Tape<T>& tape, const double* v, std::size_t n) {
  return bt::record_view(tape, static_cast<bt::Index>(n),
                          [&](bt::Index i) noexcept { return tape.leaf(static_cast<T>(v[i])); });
}

template <class T>
void overwrite(bt::Tape<T>& tape, bt::Index first, const double* v, std::size_t n) {
  for (std::size_t i = 0U; i < n; ++i) {
    tape.values()[first + i] = static_cast<T>(v[i]);
  }
}

bt::Index idx(int v) { return static_cast<bt::Index>(v); }

// What one layer case of the golden header holds (null: the layer has no
// such array: pooling has no weights).
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

// Records the input, runs `forward` (which records the layer), checks the
// nodes and slots it recorded against the plan, then sum(y * c) and its
// gradients against the golden case. Parameters are [weight, weight + w_n)
// and [bias, bias + b_n) (bias kNoIndex: none).
template <class T, class Forward>
void check_case(bt_test::Context& t, bt::Tape<T>& tape, const Case& k, bt::Index weight, bt::Index bias,
                std::size_t plan_nodes, std::size_t plan_slots, Forward forward) {
  if (weight != bt::kNoIndex) {
    overwrite(tape, weight, k.w, k.w_n);
  }
  if (bias != bt::kNoIndex) {
    overwrite(tape, bias, k.b, k.b_n);
  }
  const bt::View x = leaves(tape, k.x, k.x_n);
  const std::size_t nodes_before = tape.size();
  const std::size_t slots_before = tape.usage().slots;
  const bt::View y = forward(tape, x);
  BT_CHECK(t, tape.status() == bt::Status::kOk);
  BT_CHECK(t, y.count == k.y_n);
  BT_CHECK(t, (tape.size() - nodes_before) == plan_nodes);
  BT_CHECK(t, (tape.usage().slots - slots_before) == plan_slots);
  if ((y.count != k.y_n) || (tape.status() != bt::Status::kOk)) {
    bt_test::print("    in ");
    bt_test::print(k.name);
    bt_test::print("\n");
    return;
  }
  const bt::View c = leaves(tape, k.c, k.y_n);
  BT_CHECK(t, tape.backward(bt::inner_product(tape, bt::View{y.first, y.count}, bt::View{c.first, y.count}, nullptr)) == bt::Status::kOk);
  check_array(t, tape.values() + y.first, k.y, k.y_n, k.name);
  if (weight != bt::kNoIndex) {
    check_array(t, tape.grads() + weight, k.gw, k.w_n, k.name);
  }
  if (bias != bt::kNoIndex) {
    check_array(t, tape.grads() + bias, k.gb, k.b_n, k.name);
  }
  check_array(t, tape.grads() + x.first, k.gx, k.x_n, k.name);
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

// compile_time: the layer's forward<kIdentity> (the golden layers have no
// activation) instead of its run-time forward.
template <class T>
void conv1d_case(bt_test::Context& t, const Case& k, bool compile_time) {
  bt::Tape<T> tape(g_arena, sizeof(g_arena), kLayerNodes, kLayerSlots);
  nn::Rng rng(1U);
  const nn::Conv1dOptions o = conv1d_options(k.geometry);
  const bt::Index length = idx(k.geometry[6]);
  nn::Conv1d<T> conv;
  BT_CHECK(t, conv.create(tape, o, rng));
  BT_CHECK(t, conv.params().count == (k.w_n + (o.bias ? k.b_n : 0U)));
  BT_CHECK(t, (nn::Conv1d<T>::output_length(o, length) * o.out_channels) == k.y_n);
  check_case(t, tape, k, conv.weight, conv.bias, nn::Conv1d<T>::nodes(o, length), nn::Conv1d<T>::slots(o, length),
             [&](bt::Tape<T>& tp, bt::View x) {
               return compile_time ? conv.template forward<nn::Activation::kIdentity>(tp, x, length)
                                   : conv.forward(tp, x, length);
             });
}

template <class T>
void conv2d_case(bt_test::Context& t, const Case& k, bool compile_time) {
  bt::Tape<T> tape(g_arena, sizeof(g_arena), kLayerNodes, kLayerSlots);
  nn::Rng rng(1U);
  const nn::Conv2dOptions o = conv2d_options(k.geometry);
  const nn::Size2d in{idx(k.geometry[10]), idx(k.geometry[11])};
  nn::Conv2d<T> conv;
  BT_CHECK(t, conv.create(tape, o, rng));
  const nn::Size2d out = nn::Conv2d<T>::output_size(o, in);
  BT_CHECK(t, (out.height * out.width * o.out_channels) == k.y_n);
  check_case(t, tape, k, conv.weight, conv.bias, nn::Conv2d<T>::nodes(o, in), nn::Conv2d<T>::slots(o, in),
             [&](bt::Tape<T>& tp, bt::View x) {
               return compile_time ? conv.template forward<nn::Activation::kIdentity>(tp, x, in)
                                   : conv.forward(tp, x, in);
             });
}

template <class T>
void conv1d_all(bt_test::Context& t) {
  const Case cases[] = {BT_LAYER_CASE(conv1d_plain),   BT_LAYER_CASE(conv1d_stride_pad),
                        BT_LAYER_CASE(conv1d_dilation), BT_LAYER_CASE(conv1d_wide_pad),
                        BT_LAYER_CASE(conv1d_long_kernel), BT_LAYER_CASE(conv1d_stride_gap)};
  for (const Case& k : cases) {
    conv1d_case<T>(t, k, false);
    conv1d_case<T>(t, k, true);
  }
}
template <class T>
void conv2d_all(bt_test::Context& t) {
  const Case cases[] = {BT_LAYER_CASE(conv2d_plain), BT_LAYER_CASE(conv2d_stride_pad),
                        BT_LAYER_CASE(conv2d_dilation)};
  for (const Case& k : cases) {
    conv2d_case<T>(t, k, false);
    conv2d_case<T>(t, k, true);
  }
}

// Pooling: geometry [channels, kernel, stride, length] or [channels, kH,
// kW, sH, sW, height, width].
template <class T, class Pool>
void pool1d_case(bt_test::Context& t, const Case& k) {
  bt::Tape<T> tape(g_arena, sizeof(g_arena), kLayerNodes, kLayerSlots);
  const Pool pool{nn::Pool1dOptions{idx(k.geometry[0]), idx(k.geometry[1]), idx(k.geometry[2])}};
  const bt::Index length = idx(k.geometry[3]);
  BT_CHECK(t, (Pool::output_length(pool.options, length) * pool.options.channels) == k.y_n);
  check_case(t, tape, k, bt::kNoIndex, bt::kNoIndex, Pool::nodes(pool.options, length),
             Pool::slots(pool.options, length),
             [&](bt::Tape<T>& tp, bt::View x) { return pool.forward(tp, x, length); });
}
template <class T, class Pool>
void pool2d_case(bt_test::Context& t, const Case& k) {
  bt::Tape<T> tape(g_arena, sizeof(g_arena), kLayerNodes, kLayerSlots);
  const int* g = k.geometry;
  const Pool pool{nn::Pool2dOptions{idx(g[0]), idx(g[1]), idx(g[2]), idx(g[3]), idx(g[4])}};
  const nn::Size2d in{idx(g[5]), idx(g[6])};
  const nn::Size2d out = Pool::output_size(pool.options, in);
  BT_CHECK(t, (out.height * out.width * pool.options.channels) == k.y_n);
  check_case(t, tape, k, bt::kNoIndex, bt::kNoIndex, Pool::nodes(pool.options, in), Pool::slots(pool.options, in),
             [&](bt::Tape<T>& tp, bt::View x) { return pool.forward(tp, x, in); });
}

template <class T>
void pool_all(bt_test::Context& t) {
  pool1d_case<T, nn::AvgPool1d<T>>(t, BT_POOL_CASE(avgpool1d_plain));
  pool1d_case<T, nn::AvgPool1d<T>>(t, BT_POOL_CASE(avgpool1d_overlap));
  pool1d_case<T, nn::AvgPool1d<T>>(t, BT_POOL_CASE(avgpool1d_gap));
  pool1d_case<T, nn::AvgPool1d<T>>(t, BT_POOL_CASE(avgpool1d_one_channel));
  pool1d_case<T, nn::MaxPool1d<T>>(t, BT_POOL_CASE(maxpool1d_plain));
  pool1d_case<T, nn::MaxPool1d<T>>(t, BT_POOL_CASE(maxpool1d_ties));
  pool1d_case<T, nn::MaxPool1d<T>>(t, BT_POOL_CASE(maxpool1d_one_channel));
  pool2d_case<T, nn::AvgPool2d<T>>(t, BT_POOL_CASE(avgpool2d_plain));
  pool2d_case<T, nn::AvgPool2d<T>>(t, BT_POOL_CASE(avgpool2d_rect));
  pool2d_case<T, nn::MaxPool2d<T>>(t, BT_POOL_CASE(maxpool2d_plain));
  pool2d_case<T, nn::MaxPool2d<T>>(t, BT_POOL_CASE(maxpool2d_ties));
}

void conv1d_fp64(bt_test::Context& t) { conv1d_all<double>(t); }
void conv1d_fp32(bt_test::Context& t) { conv1d_all<float>(t); }
void conv2d_fp64(bt_test::Context& t) { conv2d_all<double>(t); }
void conv2d_fp32(bt_test::Context& t) { conv2d_all<float>(t); }
void pool_fp64(bt_test::Context& t) { pool_all<double>(t); }
void pool_fp32(bt_test::Context& t) { pool_all<float>(t); }

// --- plans counted by hand ------------------------------------------------------
constexpr nn::Conv1dOptions conv1d(bt::Index in, bt::Index out, bt::Index kernel, bt::Index stride, bt::Index padding,
                                   bt::Index dilation) {
  nn::Conv1dOptions o{};
  o.in_channels = in;
  o.out_channels = out;
  o.kernel = kernel;
  o.stride = stride;
  o.padding = padding;
  o.dilation = dilation;
  return o;
}
// 2 -> 3 channels, k 3, padding 1, 8 positions: windows 0 and 7 read one
// zero position (2 zeros, then the input: 2 runs, 5 slots), the six others
// one run of 6 input nodes (3 slots); a 4-slot matvec each.
static_assert(nn::Conv1d<double>::output_length(conv1d(2U, 3U, 3U, 1U, 1U, 1U), 8U) == 8U, "same padding");
static_assert(nn::Conv1d<double>::nodes(conv1d(2U, 3U, 3U, 1U, 1U, 1U), 8U) == 2U + 24U, "zeros + outputs");
static_assert(nn::Conv1d<double>::slots(conv1d(2U, 3U, 3U, 1U, 1U, 1U), 8U) == (2U * 5U) + (6U * 3U) + (8U * 4U),
              "lists + descriptors");
// Dilation 2, k 3, no padding, 7 positions, 1 channel: 3 windows of 3 taps
// 2 apart: 3 runs each (7 slots).
static_assert(nn::Conv1d<double>::nodes(conv1d(1U, 2U, 3U, 1U, 0U, 2U), 7U) == 6U, "no zeros");
static_assert(nn::Conv1d<double>::slots(conv1d(1U, 2U, 3U, 1U, 0U, 2U), 7U) == (3U * 7U) + (3U * 4U), "3 runs");
static_assert(nn::Conv1d<double>::max_window_runs(conv1d(1U, 2U, 3U, 1U, 0U, 2U), 7U) == 3U, "one per tap");
// Padding 3 around 4 positions with k 2, stride 3: windows at -3, 0 and 3:
// the first reads only padding (one run of 2 zeros), the second one input
// run, the last an input node and a zero (2 runs).
static_assert(nn::Conv1d<double>::output_length(conv1d(1U, 1U, 2U, 3U, 3U, 1U), 4U) == 3U, "torch's formula");
static_assert(nn::Conv1d<double>::nodes(conv1d(1U, 1U, 2U, 3U, 3U, 1U), 4U) == 2U + 3U, "zeros + outputs");
static_assert(nn::Conv1d<double>::slots(conv1d(1U, 1U, 2U, 3U, 3U, 1U), 4U) == (3U + 3U + 5U) + (3U * 4U),
              "lists + descriptors");
// A kernel longer than an unpadded input has no window.
static_assert(nn::Conv1d<double>::output_length(conv1d(1U, 1U, 5U, 1U, 0U, 1U), 4U) == 0U, "no window");
static_assert(nn::Conv1d<double>::nodes(conv1d(1U, 1U, 5U, 1U, 0U, 1U), 4U) == 0U, "no window");
// Conv2d 2x2 over 2x2 positions: the window's two rows follow each other
// on the tape: one run (3 slots) and a descriptor.
constexpr nn::Conv2dOptions kSquare{3U, 5U, 2U, 2U};
static_assert(nn::Conv2d<double>::slots(kSquare, nn::Size2d{2U, 2U}) == 3U + 4U, "rows merged");
static_assert(nn::Conv2d<double>::nodes(kSquare, nn::Size2d{2U, 2U}) == 5U, "one position");
// The same kernel over 2x3: rows are 3 positions apart, 2 runs per window.
static_assert(nn::Conv2d<double>::slots(kSquare, nn::Size2d{2U, 3U}) == (2U * 5U) + (2U * 4U), "rows apart");
// Pooling: 3 channels, kernel 2 over 8 positions: 4 x 3 outputs, each a
// list of 2 (channels-last: taps 3 apart); one channel: runs, no slots.
static_assert(nn::AvgPool1d<double>::nodes(nn::Pool1dOptions{3U, 2U, 0U}, 8U) == 12U, "outputs");
static_assert(nn::AvgPool1d<double>::slots(nn::Pool1dOptions{3U, 2U, 0U}, 8U) == 24U, "lists");
static_assert(nn::AvgPool1d<double>::slots(nn::Pool1dOptions{1U, 2U, 0U}, 8U) == 0U, "runs");
static_assert(nn::MaxPool2d<double>::output_size(nn::Pool2dOptions{1U, 2U, 2U, 0U, 0U}, nn::Size2d{5U, 4U}).height ==
                  2U,
              "floor");
// One channel whose window spans whole rows: a run again.
static_assert(nn::AvgPool2d<double>::slots(nn::Pool2dOptions{1U, 2U, 4U, 0U, 0U}, nn::Size2d{4U, 4U}) == 0U, "rows");
static_assert(nn::AvgPool2d<double>::slots(nn::Pool2dOptions{1U, 2U, 2U, 0U, 0U}, nn::Size2d{4U, 4U}) == 16U, "2 x 2");

// --- exact capacity -------------------------------------------------------------
// A tape with room for exactly the layer's plan (after its parameters and
// input) records the forward; one node or one slot less is refused with
// kCapacityExceeded before anything is recorded.
template <class Forward>
void exact_capacity(bt_test::Context& t, std::size_t before, std::size_t plan_nodes, std::size_t plan_slots,
                    Forward forward) {
  for (int shortfall = 0; shortfall < 3; ++shortfall) {
    const std::size_t nodes = before + plan_nodes - ((shortfall == 1) ? 1U : 0U);
    const std::size_t slots = plan_slots - ((shortfall == 2) ? 1U : 0U);
    bt::Tape<double> tape(g_arena, sizeof(g_arena), nodes, slots);
    const bt::View y = forward(tape);
    if (shortfall == 0) {
      BT_CHECK(t, tape.status() == bt::Status::kOk);
      BT_CHECK(t, y.count != 0U);
      BT_CHECK(t, tape.size() == nodes);
      BT_CHECK(t, tape.usage().slots == slots);
    } else {
      BT_CHECK(t, tape.status() == bt::Status::kCapacityExceeded);
      BT_CHECK(t, y.count == 0U);
      BT_CHECK(t, tape.size() == before);
      BT_CHECK(t, tape.usage().slots == 0U);
    }
  }
}

void plans_are_exact(bt_test::Context& t) {
  // Conv1d with padding, dilation and an activation (zeros and ReLU nodes).
  nn::Conv1dOptions o = conv1d(2U, 3U, 3U, 2U, 3U, 2U);
  o.act = nn::Activation::kRelu;
  constexpr bt::Index kLength = 9U;
  const std::size_t params = nn::Conv1d<double>::parameters(o);
  exact_capacity(t, params + (kLength * 2U), nn::Conv1d<double>::nodes(o, kLength),
                                     nn::Conv1d<double>::slots(o, kLength), [&](bt::Tape<double>& tape) {
                                       nn::Rng rng(3U);
                                       nn::Conv1d<double> conv;
                                       static_cast<void>(conv.create(tape, o, rng));
                                       const bt::View x = leaves(tape, golden::conv1d_dilation_x, kLength * 2U);
                                       return conv.forward(tape, x, kLength);
                                     });
  // Conv2d with padding on both axes.
  nn::Conv2dOptions o2{};
  o2.in_channels = 2U;
  o2.out_channels = 2U;
  o2.kernel_h = 3U;
  o2.kernel_w = 2U;
  o2.padding_h = 1U;
  o2.padding_w = 1U;
  const nn::Size2d in{4U, 3U};
  exact_capacity(t, nn::Conv2d<double>::parameters(o2) + 24U, nn::Conv2d<double>::nodes(o2, in),
                                     nn::Conv2d<double>::slots(o2, in), [&](bt::Tape<double>& tape) {
                                       nn::Rng rng(3U);
                                       nn::Conv2d<double> conv;
                                       static_cast<void>(conv.create(tape, o2, rng));
                                       const bt::View x = leaves(tape, golden::conv2d_plain_x, 24U);
                                       return conv.forward(tape, x, in);
                                     });
  // Pooling with lists.
  const nn::AvgPool2d<double> pool{nn::Pool2dOptions{2U, 2U, 2U, 1U, 1U}};
  exact_capacity(t, 24U, nn::AvgPool2d<double>::nodes(pool.options, in),
                                        nn::AvgPool2d<double>::slots(pool.options, in), [&](bt::Tape<double>& tape) {
                                          const bt::View x = leaves(tape, golden::conv2d_plain_x, 24U);
                                          return pool.forward(tape, x, in);
                                        });
}

// --- misuse -----------------------------------------------------------------------
// Calls forward() and checks that it returned kNoView, recorded no node and
// no slot, and left `status` on the tape.
template <class Forward>
void expect_refused(bt_test::Context& t, bt::Tape<double>& tape, bt::Status status, const char* what,
                    Forward forward) {
  const std::size_t nodes = tape.size();
  const std::size_t slots = tape.usage().slots;
  const bt::View y = forward();
  const bool ok = (tape.status() == status) && (y.first == bt::kNoIndex) && (y.count == 0U) &&
                  (tape.size() == nodes) && (tape.usage().slots == slots);
  if (!ok) {
    bt_test::print("    not refused as expected: ");
    bt_test::print(what);
    bt_test::print("\n");
  }
  BT_CHECK(t, ok);
}

// A tape holding 120 leaves: x, the first 60 (conv2d_plain_x: 5 x 6
// positions of 2 channels), then the same values again.
struct Fixture {
  bt::Tape<double> tape{g_arena, sizeof(g_arena), kLayerNodes, kLayerSlots};
  bt::View x = leaves(tape, golden::conv2d_plain_x, 60U);
  bt::View more = leaves(tape, golden::conv2d_plain_x, 60U);
};

void conv_refuses(bt_test::Context& t) {
  const nn::Conv1dOptions o = conv1d(2U, 3U, 3U, 1U, 1U, 1U);
  nn::Rng rng(1U);
  {
    Fixture f;
    nn::Conv1d<double> conv;
    BT_CHECK(t, conv.create(f.tape, o, rng));
    expect_refused(t, f.tape, bt::Status::kInvalidArgument, "width != length * channels",
                   [&] { return conv.forward(f.tape, bt::View{f.x.first, 9U}, 5U); });
  }
  {
    Fixture f;
    nn::Conv1d<double> conv;
    BT_CHECK(t, conv.create(f.tape, o, rng));
    expect_refused(t, f.tape, bt::Status::kInvalidArgument, "length 0",
                   [&] { return conv.forward(f.tape, bt::View{f.x.first, 0U}, 0U); });
  }
  {
    Fixture f;  // a kernel longer than the unpadded input
    nn::Conv1d<double> conv;
    BT_CHECK(t, conv.create(f.tape, conv1d(2U, 1U, 5U, 1U, 0U, 1U), rng));
    expect_refused(t, f.tape, bt::Status::kInvalidArgument, "kernel > input",
                   [&] { return conv.forward(f.tape, bt::View{f.x.first, 8U}, 4U); });
  }
  {
    Fixture f;  // never created (or create() failed)
    const nn::Conv1d<double> conv;
    expect_refused(t, f.tape, bt::Status::kInvalidArgument, "not created",
                   [&] { return conv.forward(f.tape, bt::View{f.x.first, 10U}, 5U); });
  }
  {
    Fixture f;  // an input that is not (or no longer) on the tape
    nn::Conv1d<double> conv;
    BT_CHECK(t, conv.create(f.tape, o, rng));
    const bt::View past{static_cast<bt::Index>(f.tape.size()) - 4U, 10U};
    expect_refused(t, f.tape, bt::Status::kInvalidHandle, "input past the tape",
                   [&] { return conv.forward(f.tape, past, 5U); });
  }
  {
    Fixture f;  // parameters discarded by a rewind since create()
    const bt::Mark before = f.tape.mark();
    nn::Conv1d<double> conv;
    BT_CHECK(t, conv.create(f.tape, o, rng));
    BT_CHECK(t, f.tape.rewind(before) == bt::Status::kOk);
    expect_refused(t, f.tape, bt::Status::kInvalidHandle, "parameters rewound",
                   [&] { return conv.forward(f.tape, bt::View{f.x.first, 10U}, 5U); });
  }
  {
    Fixture f;  // windows of more runs than forward's local array (dilation: a run per tap)
    // Taps 2 apart over one channel: 32 runs fit, 33 do not.
    const nn::Conv1dOptions fits = conv1d(1U, 1U, 32U, 1U, 0U, 2U);
    const nn::Conv1dOptions dilated = conv1d(1U, 1U, 33U, 1U, 0U, 2U);
    BT_CHECK(t, nn::Conv1d<double>::max_window_runs(fits, 63U) == 32U);
    BT_CHECK(t, nn::Conv1d<double>::max_window_runs(dilated, 65U) == 33U);
    BT_CHECK(t, nn::Conv1d<double>::max_window_runs(conv1d(1U, 1U, 33U, 1U, 0U, 1U), 65U) == 1U);
    nn::Conv1d<double> ok;
    BT_CHECK(t, ok.create(f.tape, fits, rng));
    BT_CHECK(t, ok.forward(f.tape, bt::View{f.x.first, 63U}, 63U).count == 1U);
    nn::Conv1d<double> conv;
    BT_CHECK(t, conv.create(f.tape, dilated, rng));
    expect_refused(t, f.tape, bt::Status::kInvalidArgument, "window of 33 runs",
                   [&] { return conv.forward(f.tape, bt::View{f.x.first, 65U}, 65U); });
  }
  {
    Fixture f;  // Conv2d given another shape
    nn::Conv2d<double> conv;
    BT_CHECK(t, conv.create(f.tape, conv2d_options(golden::conv2d_plain_geometry), rng));
    expect_refused(t, f.tape, bt::Status::kInvalidArgument, "2-D shape",
                   [&] { return conv.forward(f.tape, f.x, nn::Size2d{6U, 6U}); });  // 72 nodes, not 60
    expect_refused(t, f.tape, bt::Status::kInvalidArgument, "2-D shape",
                   [&] { return conv.forward(f.tape, f.x, nn::Size2d{2U, 2U}); });  // kernel 3 x 3
  }
  {
    Fixture f;  // a tape that holds an error records nothing more
    nn::Conv1d<double> conv;
    BT_CHECK(t, conv.create(f.tape, o, rng));
    static_cast<void>(f.tape.report(bt::Status::kForeignValue));
    expect_refused(t, f.tape, bt::Status::kForeignValue, "failed tape",
                   [&] { return conv.forward(f.tape, bt::View{f.x.first, 10U}, 5U); });
  }
}

// Interior nodes cannot go into a tape's parameter region (leaves can):
// conv1d_stride_pad's 21 parameters and 16 inputs, then 2 zero leaves and 12
// outputs on a tape of 51 nodes; with a parameter region of 39 nodes the
// outputs fit after it, with 40 they do not and nothing is recorded.
// forward<kRelu> of a ReLU layer: the golden layer's outputs through
// max(0, y), on exactly the plan's nodes and slots. Another activation
// than the layer's is refused: kInvalidArgument, nothing recorded.
void conv_compile_time_relu(bt_test::Context& t) {
  const Case k = BT_LAYER_CASE(conv1d_plain);
  nn::Conv1dOptions o = conv1d_options(k.geometry);
  o.act = nn::Activation::kRelu;
  const bt::Index length = idx(k.geometry[6]);
  bt::Tape<double> tape(g_arena, sizeof(g_arena), kLayerNodes, kLayerSlots);
  nn::Rng rng(1U);
  nn::Conv1d<double> conv;
  BT_CHECK(t, conv.create(tape, o, rng));
  overwrite(tape, conv.weight, k.w, k.w_n);
  if (conv.bias != bt::kNoIndex) {
    overwrite(tape, conv.bias, k.b, k.b_n);
  }
  const bt::View x = leaves(tape, k.x, k.x_n);
  const std::size_t nodes_before = tape.size();
  const std::size_t slots_before = tape.usage().slots;
  BT_CHECK(t, conv.forward<nn::Activation::kTanh>(tape, x, length).count == 0U);
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, (tape.size() == nodes_before) && (tape.usage().slots == slots_before));
  tape.clear_status();
  const bt::View y = conv.forward<nn::Activation::kRelu>(tape, x, length);
  BT_CHECK(t, (tape.status() == bt::Status::kOk) && (y.count == k.y_n));
  BT_CHECK(t, (tape.size() - nodes_before) == nn::Conv1d<double>::nodes(o, length));
  BT_CHECK(t, (tape.usage().slots - slots_before) == nn::Conv1d<double>::slots(o, length));
  bool values = y.count == k.y_n;
  std::size_t positive = 0U;
  for (std::size_t i = 0U; values && (i < k.y_n); ++i) {
    const double want = (k.y[i] > 0.0) ? k.y[i] : 0.0;
    values = bt_test::near(tape.value(y.first + static_cast<bt::Index>(i)), want, 1e-10, 1e-12);
    positive += (k.y[i] > 0.0) ? 1U : 0U;
  }
  BT_CHECK(t, values);
  BT_CHECK(t, (positive > 0U) && (positive < k.y_n));  // the case exercises both sides of the ReLU
}

void conv_parameter_region(bt_test::Context& t) {
  const nn::Conv1dOptions o = conv1d_options(golden::conv1d_stride_pad_geometry);
  static_assert(nn::Conv1d<double>::nodes(conv1d(2U, 3U, 3U, 2U, 1U, 1U), 8U) == 2U + 12U, "zeros + outputs");
  for (std::size_t region = 39U; region <= 40U; ++region) {
    bt::Tape<double> tape(g_arena, sizeof(g_arena), 51U, 64U, region);
    nn::Rng rng(1U);
    nn::Conv1d<double> conv;
    BT_CHECK(t, conv.create(tape, o, rng));
    const bt::View x = leaves(tape, golden::conv1d_stride_pad_x, 16U);
    if (region == 39U) {
      BT_CHECK(t, conv.forward(tape, x, 8U).count == 12U);
      BT_CHECK(t, (tape.status() == bt::Status::kOk) && (tape.size() == 51U));
    } else {
      expect_refused(t, tape, bt::Status::kCapacityExceeded, "outputs in the parameter region",
                     [&] { return conv.forward(tape, x, 8U); });
    }
  }
}

void conv_create_refuses(bt_test::Context& t) {
  bt::Tape<double> tape(g_arena, sizeof(g_arena), kLayerNodes, kLayerSlots);
  nn::Rng rng(1U);
  nn::Conv1d<double> conv;
  BT_CHECK(t, !conv.create(tape, conv1d(2U, 3U, 3U, 0U, 0U, 1U), rng));  // stride 0
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, tape.size() == 0U);
  BT_CHECK(t, conv.params().count == 0U);
  tape.reset();
  BT_CHECK(t, !conv.create(tape, conv1d(2U, 3U, 3U, 1U, 0U, 0U), rng));  // dilation 0
  BT_CHECK(t, !conv.create(tape, conv1d(0U, 3U, 3U, 1U, 0U, 1U), rng));  // no input channel
  BT_CHECK(t, tape.size() == 0U);
  tape.reset();
  nn::Conv2d<double> conv2;
  nn::Conv2dOptions o{};
  o.in_channels = 1U;
  o.out_channels = 1U;
  o.kernel_h = 0x10000U;
  o.kernel_w = 0x10000U;  // 2^32 weights: more than an Index counts
  BT_CHECK(t, !conv2.create(tape, o, rng));
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, tape.size() == 0U);
  BT_CHECK(t, conv2.params().count == 0U);
  // Defaults are torch.nn.Conv1d's: stride 1, no padding, dilation 1, bias,
  // U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and biases.
  const nn::Conv1dOptions d{};
  BT_CHECK(t, (d.stride == 1U) && (d.padding == 0U) && (d.dilation == 1U) && d.bias);
  BT_CHECK(t, d.act == nn::Activation::kIdentity);
  BT_CHECK(t, (d.weight_init.kind == nn::InitKind::kFanInUniform) && (d.weight_init.a == nn::kGainLinearDefault));
  BT_CHECK(t, (d.bias_init.kind == nn::InitKind::kFanInUniform) && (d.bias_init.a == nn::kGainLinearDefault));
}

void pool_refuses(bt_test::Context& t) {
  const nn::AvgPool1d<double> avg{nn::Pool1dOptions{2U, 3U, 0U}};
  const nn::MaxPool1d<double> top{nn::Pool1dOptions{2U, 3U, 0U}};
  {
    Fixture f;
    expect_refused(t, f.tape, bt::Status::kInvalidArgument, "avg pool width",
                   [&] { return avg.forward(f.tape, bt::View{f.x.first, 9U}, 5U); });
  }
  {
    Fixture f;
    expect_refused(t, f.tape, bt::Status::kInvalidArgument, "max pool width",
                   [&] { return top.forward(f.tape, bt::View{f.x.first, 11U}, 5U); });
  }
  {
    Fixture f;
    expect_refused(t, f.tape, bt::Status::kInvalidArgument, "kernel > length",
                   [&] { return avg.forward(f.tape, bt::View{f.x.first, 4U}, 2U); });
  }
  {
    Fixture f;
    const nn::AvgPool1d<double> none{nn::Pool1dOptions{0U, 3U, 0U}};
    expect_refused(t, f.tape, bt::Status::kInvalidArgument, "no channels",
                   [&] { return none.forward(f.tape, bt::View{f.x.first, 0U}, 6U); });
  }
  {
    Fixture f;
    const nn::MaxPool2d<double> big{nn::Pool2dOptions{1U, 3U, 11U, 0U, 0U}};
    expect_refused(t, f.tape, bt::Status::kInvalidArgument, "33 taps",
                   [&] { return big.forward(f.tape, f.x, nn::Size2d{5U, 12U}); });
  }
  {
    Fixture f;
    expect_refused(t, f.tape, bt::Status::kInvalidHandle, "pool input past the tape",
                   [&] { return avg.forward(f.tape, bt::View{f.more.first + 55U, 10U}, 5U); });
  }
}

// flatten() is the view itself: no node, no slot.
void flatten_is_a_view(bt_test::Context& t) {
  constexpr bt::View v{7U, 12U};
  static_assert((nn::flatten(v).first == 7U) && (nn::flatten(v).count == 12U), "the same view");
  bt::Tape<double> tape(g_arena, sizeof(g_arena), 16U, 16U);
  const bt::View x = leaves(tape, golden::conv1d_plain_x, 6U);
  const bt::View f = nn::flatten(x);
  BT_CHECK(t, (f.first == x.first) && (f.count == x.count) && (tape.size() == 6U) && (tape.usage().slots == 0U));
}

// --- the CNN ------------------------------------------------------------------------
// One sample's loss and gradients, and the initial weights create() draws.
template <class T>
void cnn_sample(bt_test::Context& t, const CnnShape& s, const double* init, double loss0, const double* grads0,
                const double* inputs, const int* labels) {
  const nn::MemoryPlan plan = Cnn<T>::plan(s, nn::OptimizerKind::kSgd);
  bt::Tape<T> tape(g_arena, sizeof(g_arena), plan.nodes, plan.slots, plan.parameters);
  nn::Rng rng(static_cast<std::uint64_t>(golden::cnn_seed));
  static Cnn<T> model;
  BT_CHECK(t, model.create(tape, s, rng));
  const bt::View p = model.params();
  BT_CHECK(t, (p.first == 0U) && (p.count == plan.parameters) && (tape.size() == plan.parameters));
  // The library's draws equal the generator's reimplementation of them
  // (to rounding: a target may fuse lo + (hi - lo) * u into one FMA, which
  // moves a weight near 0 by ~1e-17). A float model draws in float
  // (nn::draw_float: u truncated to 24 bits, the bound and the affine map
  // rounded to float), within 4.2e-7 of the bound of the double draws.
  const bool fp64 = sizeof(T) == 8U;
  check_array(t, tape.values(), init, p.count, "initial weights", fp64 ? 1e-15 : 1e-7, fp64 ? 1e-15 : 5e-7);
  overwrite(tape, p.first, init, p.count);
  const bt::Value<T> loss = model.loss(tape, inputs, idx(labels[0]));
  BT_CHECK(t, tape.size() == plan.nodes);
  BT_CHECK(t, tape.usage().slots == plan.slots);
  BT_CHECK(t, tape.backward(loss) == bt::Status::kOk);
  BT_CHECK_CLOSE(t, static_cast<double>(loss.value()), loss0, Tol<T>::rel, Tol<T>::abs_floor);
  check_array(t, tape.grads(), grads0, p.count, "cnn gradients");
}
void cnn_sample_fp64(bt_test::Context& t) {
#if !BURTORCH_TEST_SMALL_TARGET
  cnn_sample<double>(t, kCnn, golden::cnn_init, golden::cnn_loss0, golden::cnn_grads0, golden::cnn_inputs,
                     golden::cnn_labels);
#endif
  cnn_sample<double>(t, kCnnSmall, golden::cnn_small_init, golden::cnn_small_loss0, golden::cnn_small_grads0,
                     golden::cnn_small_inputs, golden::cnn_small_labels);
}
void cnn_sample_fp32(bt_test::Context& t) {
#if !BURTORCH_TEST_SMALL_TARGET
  cnn_sample<float>(t, kCnn, golden::cnn_init, golden::cnn_loss0, golden::cnn_grads0, golden::cnn_inputs,
                    golden::cnn_labels);
#endif
  cnn_sample<float>(t, kCnnSmall, golden::cnn_small_init, golden::cnn_small_loss0, golden::cnn_small_grads0,
                    golden::cnn_small_inputs, golden::cnn_small_labels);
}

// The trajectory: per step a serial batch of cnn_batch samples (sample
// (step * batch + i) mod cnn_samples), then an optimizer step.
constexpr double kTrajectoryTol = 1e-8;

void cnn_train(bt_test::Context& t, const CnnShape& s, bool adam, const double* init, const double* inputs,
               const int* labels, const double* losses_golden, const double* params_golden) {
  const nn::MemoryPlan plan = Cnn<double>::plan(s, nn::OptimizerKind::kAdam);
  bt::Tape<double> tape(g_arena, sizeof(g_arena), plan.nodes, plan.slots, plan.parameters);
  nn::Rng rng(static_cast<std::uint64_t>(golden::cnn_seed));
  static Cnn<double> model;
  BT_CHECK(t, model.create(tape, s, rng));
  const bt::View p = model.params();
  overwrite(tape, p.first, init, p.count);
  nn::OptimizerOptions<double> config;
  config.kind = adam ? nn::OptimizerKind::kAdam : nn::OptimizerKind::kSgd;
  config.lr = adam ? golden::cnn_adam_lr : golden::cnn_sgd_lr;
  nn::Optimizer<double> opt(config, g_moments);
  const std::size_t width = static_cast<std::size_t>(s.length) * s.in;
  double losses[golden::cnn_steps];
  double worst_loss = 0.0;
  std::size_t snapshot = 0U;
  for (long step = 0; step < golden::cnn_steps; ++step) {
    losses[step] = nn::serial_batch(tape, p, static_cast<std::size_t>(golden::cnn_batch),
                                    [&](bt::Tape<double>& tp, std::size_t i) {
                                      const long k = ((step * golden::cnn_batch) + static_cast<long>(i)) %
                                                     golden::cnn_samples;
                                      return model.loss(tp, inputs + (static_cast<std::size_t>(k) * width),
                                                        idx(labels[k]));
                                    });
    BT_CHECK(t, opt.step(tape, p) == bt::Status::kOk);
    const double rel = std::fabs(losses[step] - losses_golden[step]) / std::fabs(losses_golden[step]);
    worst_loss = (rel > worst_loss) ? rel : worst_loss;
    if ((snapshot < golden::cnn_snapshots_n) && ((step + 1) == golden::cnn_snapshots[snapshot])) {
      check_array(t, tape.values() + p.first, params_golden + (snapshot * p.count), p.count, "cnn parameters",
                  kTrajectoryTol, 1e-10);
      ++snapshot;
    }
  }
  BT_CHECK(t, snapshot == golden::cnn_snapshots_n);
  BT_CHECK(t, tape.status() == bt::Status::kOk);
  check_array(t, losses, losses_golden, static_cast<std::size_t>(golden::cnn_steps), "cnn losses", kTrajectoryTol,
              0.0);
  // Training did something.
  BT_CHECK(t, losses[golden::cnn_steps - 1] < (0.6 * losses[0]));
  bt_test::print("  ");
  bt_test::print(t.test_name);
  bt_test::print(": worst relative loss difference from PyTorch ");
  bt_test::print_double(worst_loss);
  bt_test::print("\n");
}
#if !BURTORCH_TEST_SMALL_TARGET
void cnn_sgd(bt_test::Context& t) {
  cnn_train(t, kCnn, false, golden::cnn_init, golden::cnn_inputs, golden::cnn_labels, golden::cnn_sgd_losses,
            golden::cnn_sgd_params);
}
void cnn_adam(bt_test::Context& t) {
  cnn_train(t, kCnn, true, golden::cnn_init, golden::cnn_inputs, golden::cnn_labels, golden::cnn_adam_losses,
            golden::cnn_adam_params);
}
#endif
void cnn_small_sgd(bt_test::Context& t) {
  cnn_train(t, kCnnSmall, false, golden::cnn_small_init, golden::cnn_small_inputs, golden::cnn_small_labels,
            golden::cnn_small_sgd_losses, golden::cnn_small_sgd_params);
}
void cnn_small_adam(bt_test::Context& t) {
  cnn_train(t, kCnnSmall, true, golden::cnn_small_init, golden::cnn_small_inputs, golden::cnn_small_labels,
            golden::cnn_small_adam_losses, golden::cnn_small_adam_params);
}

// A tape of exactly the CNN's plan trains a serial batch; one node or one
// slot less fails cleanly.
void cnn_plan_exact(bt_test::Context& t) {
  const CnnShape s = kCnnSmall;
  const nn::MemoryPlan plan = Cnn<double>::plan(s, nn::OptimizerKind::kSgd);
  for (int shortfall = 0; shortfall < 3; ++shortfall) {
    bt::Tape<double> tape(g_arena, sizeof(g_arena), plan.nodes - ((shortfall == 1) ? 1U : 0U),
                          plan.slots - ((shortfall == 2) ? 1U : 0U), plan.parameters);
    nn::Rng rng(1U);
    static Cnn<double> model;
    BT_CHECK(t, model.create(tape, s, rng));
    const double loss = nn::serial_batch(tape, model.params(), 2U, [&](bt::Tape<double>& tp, std::size_t i) {
      return model.loss(tp, golden::cnn_small_inputs + (i * s.length), idx(golden::cnn_small_labels[i]));
    });
    if (shortfall == 0) {
      BT_CHECK(t, tape.status() == bt::Status::kOk);
      BT_CHECK(t, std::isfinite(loss));
    } else {
      BT_CHECK(t, tape.status() == bt::Status::kCapacityExceeded);
      BT_CHECK(t, std::isnan(loss));
    }
    BT_CHECK(t, tape.size() == plan.parameters);  // rewound after the batch
  }
}


// nn::SmallCnn (burtorch-cnn's model): its plan is exact. One sample
// records exactly sample_nodes() nodes and sample_slots() slots; a tape of
// exactly the plan trains a serial batch, one node or one slot less fails
// cleanly. The default 8x8 model (a 4x4 one of 2 channels on 16 KB boards).
#if BURTORCH_TEST_SMALL_TARGET
constexpr nn::CnnOptions kSmallCnnConfig{4U, 1U, 2U, 2U, 3U};
#else
constexpr nn::CnnOptions kSmallCnnConfig{};
#endif
static_assert(nn::SmallCnn<double>::plan(kSmallCnnConfig, nn::OptimizerKind::kSgd).tape_bytes <= kArenaBytes,
              "the arena holds the SmallCnn's tape");
static_assert(nn::SmallCnn<double>::parameters(nn::CnnOptions{}) == 372U, "conv1 36 + 4, conv2 288 + 8, head 32 + 4");
static_assert(nn::SmallCnn<double>::sample_nodes(nn::CnnOptions{}) ==
                  64U + (4U + 64U + 64U) + (16U + 32U + 32U) + 8U + 4U + 2U,
              "input, conv1 (zeros, outputs, ReLU), conv2 (zeros, outputs, ReLU), pool, logits, loss");

void small_cnn_plan_exact(bt_test::Context& t) {
  using Model = nn::SmallCnn<double>;
  const nn::CnnOptions c = kSmallCnnConfig;
  const nn::MemoryPlan plan = Model::plan(c, nn::OptimizerKind::kSgd);
  float pixels[2][64];
  for (std::size_t i = 0U; i < 128U; ++i) {
    pixels[i / 64U][i % 64U] = static_cast<float>((i * 7U) % 11U) * 0.1F;
  }
  for (int shortfall = 0; shortfall < 3; ++shortfall) {
    bt::Tape<double> tape(g_arena, sizeof(g_arena), plan.nodes - ((shortfall == 1) ? 1U : 0U),
                          plan.slots - ((shortfall == 2) ? 1U : 0U), plan.parameters);
    nn::Rng rng(3U);
    static Model model;
    BT_CHECK(t, model.create(tape, c, rng));
    BT_CHECK(t, (model.params().count == plan.parameters) && (tape.size() == plan.parameters));
    if (shortfall == 0) {
      const bt::Mark start = tape.mark();
      static_cast<void>(model.loss(tape, pixels[0], 1U));
      BT_CHECK(t, (tape.size() - plan.parameters) == Model::sample_nodes(c));
      BT_CHECK(t, tape.usage().slots == Model::sample_slots(c));
      static_cast<void>(tape.rewind(start));
    }
    const double loss = nn::serial_batch(tape, model.params(), 2U, [&](bt::Tape<double>& tp, std::size_t i) {
      return model.loss(tp, pixels[i], static_cast<bt::Index>(i));
    });
    if (shortfall == 0) {
      BT_CHECK(t, tape.status() == bt::Status::kOk);
      BT_CHECK(t, std::isfinite(loss));
    } else {
      BT_CHECK(t, tape.status() == bt::Status::kCapacityExceeded);
      BT_CHECK(t, std::isnan(loss));
    }
    BT_CHECK(t, tape.size() == plan.parameters);
  }
  // Sizes create() refuses: nothing created, the tape says why.
  bt::Tape<double> tape(g_arena, sizeof(g_arena), plan.nodes, plan.slots, plan.parameters);
  nn::Rng rng(3U);
  static Model model;
  nn::CnnOptions too_big = c;
  too_big.side = Model::kMaxSide + 1U;
  BT_CHECK(t, !model.create(tape, too_big, rng) && (model.params().count == 0U));
  BT_CHECK(t, (tape.status() == bt::Status::kInvalidArgument) && (tape.size() == 0U));
}

const bt_test::TestCase kCases[] = {
    {"conv1d_fp64", conv1d_fp64},
    {"conv1d_fp32", conv1d_fp32},
    {"conv2d_fp64", conv2d_fp64},
    {"conv2d_fp32", conv2d_fp32},
    {"pool_fp64", pool_fp64},
    {"pool_fp32", pool_fp32},
    {"plans_are_exact", plans_are_exact},
    {"conv_refuses", conv_refuses},
    {"conv_compile_time_relu", conv_compile_time_relu},
    {"conv_parameter_region", conv_parameter_region},
    {"conv_create_refuses", conv_create_refuses},
    {"pool_refuses", pool_refuses},
    {"flatten_is_a_view", flatten_is_a_view},
    {"cnn_sample_fp64", cnn_sample_fp64},
    {"cnn_sample_fp32", cnn_sample_fp32},
    {"cnn_plan_exact", cnn_plan_exact},
    {"small_cnn_plan_exact", small_cnn_plan_exact},
#if !BURTORCH_TEST_SMALL_TARGET
    {"cnn_sgd", cnn_sgd},
    {"cnn_adam", cnn_adam},
#endif
    {"cnn_small_sgd", cnn_small_sgd},
    {"cnn_small_adam", cnn_small_adam},
};

}  // namespace

BT_TEST_MAIN("nn_conv", kCases)

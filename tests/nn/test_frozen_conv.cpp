// SPDX-License-Identifier: Apache-2.0
// Frozen convolutions (nn::FrozenConv1d, nn::FrozenConv2d: weights in
// caller memory as FP32, FP16 or int8) against a direct convolution written
// out here: for every output position, channel and tap the dequantized
// weight (from the formats' definitions: the float, f16_to_float of the
// bits, scale * q) times the input, zero outside it, plus the bias, then
// the activation; the input gradients of sum(y * c) are the same loops
// transposed; with the activation at run time and at compile time
// (forward<A>, evaluate<A>), on the tape and without one. On an FP64 tape only the order of the sums differs (1e-12).
// Also: each forward records exactly the nodes and slots its constexpr
// plan states; arrays that do not describe the layer, inputs of another
// width or not on the tape, and too small a tape are refused with the
// documented status and nothing recorded.
#include <burtorch/burtorch.hpp>
#include <burtorch/frozen/ops.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstdint>

#include "harness.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

struct ConvCase {
  bt::Index height, width, cin, cout, kh, kw, stride, pad, dilation;
  nn::Activation act;
};
constexpr std::size_t kConvMaxIn = 64U;
constexpr std::size_t kConvMaxOut = 48U;
constexpr std::size_t kConvMaxW = 96U;
constexpr std::size_t kConvNodes = 160U;
constexpr std::size_t kConvSlots = 320U;
alignas(64) unsigned char g_conv_arena[bt::Tape<double>::bytes_required(kConvNodes, kConvSlots)];

double conv_value(std::size_t i, double scale) {  // deterministic inputs, weights and root coefficients
  const double u = static_cast<double>((i * 37U + 11U) % 29U) / 29.0;
  return scale * (u - 0.45);
}

struct FrozenWeights {
  float f32[kConvMaxW];
  std::uint16_t f16[kConvMaxW];
  std::int8_t i8[kConvMaxW];
  float scale = 0.0F;
  float bias[8];
  double w[kConvMaxW];  // what the layer must use, per format
};

// What conv_check leaves for evaluate_check: the layers of the last case
// and their direct outputs (file statics: the micro:bit's 3 KiB thread
// stack holds conv_check's frame or the tape-free evaluation's window
// list, not both).
struct LastCase {
  nn::FrozenConv2d<double> c2;
  nn::FrozenConv1d<double> c1;
  nn::Size2d in;
  std::size_t n_in = 0U;
  std::size_t n_out = 0U;
  double want_y[kConvMaxOut];
};
LastCase g_last;

// The layer's forward, with its activation at run time or (compile_time)
// as forward<A> for the case's activation.
template <class Layer, class Extent>
bt::View forward_of(const Layer& layer, bt::Tape<double>& tape, bt::View x, Extent extent, nn::Activation act,
                    bool compile_time) {
  if (!compile_time) {
    return layer.forward(tape, x, extent);
  }
  return (act == nn::Activation::kRelu) ? layer.template forward<nn::Activation::kRelu>(tape, x, extent)
                                        : layer.template forward<nn::Activation::kIdentity>(tape, x, extent);
}

// The layer's tape-free outputs, as forward_of. Not inlined: its window
// list (768 B) is on the stack only while it runs.
template <class Layer, class Extent>
[[gnu::noinline]] bool evaluate_of(const Layer& layer, const double* x, Extent extent, double* y, nn::Activation act,
                 bool compile_time) {
  if (!compile_time) {
    return layer.evaluate(x, extent, y);
  }
  return (act == nn::Activation::kRelu) ? layer.template evaluate<nn::Activation::kRelu>(x, extent, y)
                                        : layer.template evaluate<nn::Activation::kIdentity>(x, extent, y);
}

// layer.evaluate<A>, not inlined (as evaluate_of).
template <nn::Activation A, class Layer, class Extent>
[[gnu::noinline]] bool evaluate_as(const Layer& layer, const double* x, Extent extent, double* y) {
  return layer.template evaluate<A>(x, extent, y);
}

void conv_check(bt_test::Context& t, const ConvCase& k, bt::WeightFormat format, bool two_d, bool compile_time) {
  const bt::Index cols = k.kh * k.kw * k.cin;
  const std::size_t n_w = static_cast<std::size_t>(k.cout) * cols;
  static FrozenWeights fw;
  for (std::size_t i = 0U; i < n_w; ++i) {
    fw.f32[i] = static_cast<float>(conv_value(i + 5U, 1.3));
  }
  BT_CHECK(t, bt::quantize_f16(fw.f32, n_w, fw.f16) == bt::Status::kOk);
  BT_CHECK(t, bt::quantize_i8(fw.f32, n_w, fw.i8, &fw.scale) == bt::Status::kOk);
  for (std::size_t i = 0U; i < n_w; ++i) {
    fw.w[i] = (format == bt::WeightFormat::kF32) ? static_cast<double>(fw.f32[i])
              : (format == bt::WeightFormat::kF16)
                  ? static_cast<double>(bt::f16_to_float(fw.f16[i]))
                  : static_cast<double>(fw.scale * static_cast<float>(fw.i8[i]));
  }
  for (bt::Index o = 0U; o < k.cout; ++o) {
    fw.bias[o] = static_cast<float>(conv_value(o + 40U, 0.8));
  }
  const bt::FrozenArray weights = (format == bt::WeightFormat::kF32)   ? bt::frozen_f32(fw.f32)
                                  : (format == bt::WeightFormat::kF16) ? bt::frozen_f16(fw.f16)
                                                                       : bt::frozen_i8(fw.i8, fw.scale);
  const bt::FrozenMatrix matrix{weights, k.cout, cols};
  const bt::FrozenVector bias{bt::frozen_f32(fw.bias), k.cout};
  // static: the micro:bit's 3 KiB thread stack (the frame calls both
  // forward and evaluate).
  static nn::Conv2dOptions o2;
  o2 = nn::Conv2dOptions{};
  o2.in_channels = k.cin;
  o2.out_channels = k.cout;
  o2.kernel_h = k.kh;
  o2.kernel_w = k.kw;
  o2.stride_h = k.stride;
  o2.stride_w = k.stride;
  o2.padding_h = k.pad;
  o2.padding_w = k.pad;
  o2.dilation_h = k.dilation;
  o2.dilation_w = k.dilation;
  o2.act = k.act;
  static nn::Conv1dOptions o1;
  o1 = nn::Conv1dOptions{};
  o1.in_channels = k.cin;
  o1.out_channels = k.cout;
  o1.kernel = k.kw;
  o1.stride = k.stride;
  o1.padding = k.pad;
  o1.dilation = k.dilation;
  o1.act = k.act;
  g_last.c2 = nn::FrozenConv2d<double>{matrix, bias, o2};
  g_last.c1 = nn::FrozenConv1d<double>{matrix, bias, o1};
  const nn::FrozenConv2d<double>& c2 = g_last.c2;
  const nn::FrozenConv1d<double>& c1 = g_last.c1;
  const nn::Size2d in{k.height, k.width};
  const nn::Size2d out = two_d ? nn::FrozenConv2d<double>::output_size(o2, in)
                               : nn::Size2d{1U, nn::FrozenConv1d<double>::output_length(o1, k.width)};
  const std::size_t n_in = static_cast<std::size_t>(k.height) * k.width * k.cin;
  const std::size_t n_out = static_cast<std::size_t>(out.height) * out.width * k.cout;
  BT_CHECK(t, (n_in <= kConvMaxIn) && (n_out <= kConvMaxOut) && (n_w <= kConvMaxW) && (n_out > 0U));

  bt::Tape<double> tape(g_conv_arena, sizeof(g_conv_arena), kConvNodes, kConvSlots);
  const bt::View x = bt::record_view(tape, static_cast<bt::Index>(n_in),
                                      [&](bt::Index i) noexcept { return tape.leaf(conv_value(i, 2.0)); });
  const std::size_t nodes0 = tape.size();
  const std::size_t slots0 = tape.usage().slots;
  const bt::View y = two_d ? forward_of(c2, tape, x, in, k.act, compile_time)
                            : forward_of(c1, tape, x, k.width, k.act, compile_time);
  BT_CHECK(t, (tape.status() == bt::Status::kOk) && (y.count == n_out));
  const std::size_t plan_nodes = two_d ? nn::FrozenConv2d<double>::nodes(o2, in)
                                       : nn::FrozenConv1d<double>::nodes(o1, k.width);
  const std::size_t plan_slots = two_d ? nn::FrozenConv2d<double>::slots(o2, in)
                                       : nn::FrozenConv1d<double>::slots(o1, k.width);
  BT_CHECK(t, (tape.size() - nodes0) == plan_nodes);
  BT_CHECK(t, (tape.usage().slots - slots0) == plan_slots);
  bt::Value<double> root(&tape, y.first);
  root = root * conv_value(0U, 1.0);
  for (bt::Index i = 1U; i < y.count; ++i) {
    root = root + (bt::Value<double>(&tape, y.first + i) * conv_value(i, 1.0));
  }
  BT_CHECK(t, tape.backward(root) == bt::Status::kOk);

  // The direct convolution and its transpose.
  double* const want_y = g_last.want_y;  // static: a 3 KiB stack on the Cortex-M0
  static double want_gx[kConvMaxIn];
  for (double& v : g_last.want_y) {
    v = 0.0;
  }
  for (double& v : want_gx) {
    v = 0.0;
  }
  // Each tap of output (r, c, oc) inside the input: tap(input index, weight).
  const auto taps = [&](bt::Index r, bt::Index c, bt::Index oc, auto tap) {
    for (bt::Index i = 0U; i < (two_d ? k.kh : 1U); ++i) {
      for (bt::Index j = 0U; j < k.kw; ++j) {
        const long yy = two_d ? (static_cast<long>(r * k.stride) - static_cast<long>(k.pad) +
                                 static_cast<long>(i * k.dilation))
                              : 0L;
        const long xx =
            static_cast<long>(c * k.stride) - static_cast<long>(k.pad) + static_cast<long>(j * k.dilation);
        if ((yy < 0) || (yy >= static_cast<long>(k.height)) || (xx < 0) || (xx >= static_cast<long>(k.width))) {
          continue;
        }
        for (bt::Index ch = 0U; ch < k.cin; ++ch) {
          const std::size_t xi = ((static_cast<std::size_t>(yy) * k.width) + static_cast<std::size_t>(xx)) * k.cin + ch;
          tap(xi, fw.w[(static_cast<std::size_t>(oc) * cols) + ((i * k.kw + j) * k.cin) + ch]);
        }
      }
    }
  };
  for (bt::Index r = 0U; r < out.height; ++r) {
    for (bt::Index c = 0U; c < out.width; ++c) {
      for (bt::Index oc = 0U; oc < k.cout; ++oc) {
        const std::size_t at = ((static_cast<std::size_t>(r) * out.width) + c) * k.cout + oc;
        double sum = static_cast<double>(fw.bias[oc]);
        taps(r, c, oc, [&](std::size_t xi, double w) { sum += w * conv_value(xi, 2.0); });
        const bool on = (k.act != nn::Activation::kRelu) || (sum > 0.0);
        want_y[at] = on ? sum : 0.0;
        const double g = on ? conv_value(at, 1.0) : 0.0;
        taps(r, c, oc, [&](std::size_t xi, double w) { want_gx[xi] += g * w; });
      }
    }
  }
  bool values = true;
  for (std::size_t i = 0U; i < n_out; ++i) {
    values = values && bt_test::near(tape.value(y.first + static_cast<bt::Index>(i)), want_y[i], 1e-12, 1e-12);
  }
  bool grads = true;
  for (std::size_t i = 0U; i < n_in; ++i) {
    grads = grads && bt_test::near(tape.grads()[x.first + i], want_gx[i], 1e-12, 1e-12);
  }
  BT_CHECK(t, values);
  BT_CHECK(t, grads);
  g_last.in = in;
  g_last.n_in = n_in;
  g_last.n_out = n_out;
}

// The last conv_check case without a tape (evaluate): the same outputs.
void evaluate_check(bt_test::Context& t, const ConvCase& k, bool two_d, bool compile_time) {
  static double xs[kConvMaxIn];
  static double ys[kConvMaxOut];
  for (std::size_t i = 0U; i < g_last.n_in; ++i) {
    xs[i] = conv_value(i, 2.0);
  }
  const bool evaluated = two_d ? evaluate_of(g_last.c2, xs, g_last.in, ys, k.act, compile_time)
                               : evaluate_of(g_last.c1, xs, k.width, ys, k.act, compile_time);
  bool direct = evaluated && (g_last.n_out > 0U);
  for (std::size_t i = 0U; i < g_last.n_out; ++i) {
    direct = direct && bt_test::near(ys[i], g_last.want_y[i], 1e-12, 1e-12);
  }
  BT_CHECK(t, direct);
}

constexpr bt::WeightFormat kFormats[3] = {bt::WeightFormat::kF32, bt::WeightFormat::kF16, bt::WeightFormat::kI8};

void frozen_conv2d_matches_direct(bt_test::Context& t) {
  const ConvCase cases[3] = {
      {5U, 4U, 2U, 3U, 3U, 3U, 2U, 1U, 1U, nn::Activation::kRelu},      // SmallCnn's geometry
      {3U, 3U, 1U, 2U, 2U, 2U, 2U, 2U, 1U, nn::Activation::kIdentity},  // padding wider than the kernel
      {5U, 5U, 1U, 2U, 2U, 2U, 1U, 0U, 2U, nn::Activation::kRelu},      // dilation
  };
  for (const ConvCase& k : cases) {
    for (bt::WeightFormat f : kFormats) {
      conv_check(t, k, f, true, false);
      evaluate_check(t, k, true, false);
      conv_check(t, k, f, true, true);
      evaluate_check(t, k, true, true);
    }
  }
}

void frozen_conv1d_matches_direct(bt_test::Context& t) {
  const ConvCase cases[2] = {
      {1U, 9U, 2U, 3U, 1U, 3U, 2U, 1U, 1U, nn::Activation::kRelu},
      {1U, 7U, 3U, 2U, 1U, 3U, 1U, 2U, 2U, nn::Activation::kIdentity},
  };
  for (const ConvCase& k : cases) {
    for (bt::WeightFormat f : kFormats) {
      conv_check(t, k, f, false, false);
      evaluate_check(t, k, false, false);
      conv_check(t, k, f, false, true);
      evaluate_check(t, k, false, true);
    }
  }
}

// Every refusal records nothing and leaves the documented status.
void frozen_conv_refuses(bt_test::Context& t) {
  static const float w[2U * 9U] = {};
  static const float b[3] = {};
  static nn::Conv2dOptions o{};
  o.in_channels = 1U;
  o.out_channels = 2U;
  o.kernel_h = 3U;
  o.kernel_w = 3U;
  o.padding_h = 1U;
  o.padding_w = 1U;
  const nn::FrozenConv2d<double> good{{bt::frozen_f32(w), 2U, 9U}, {bt::frozen_f32(b), 2U}, o};
  struct Bad {
    nn::FrozenConv2d<double> layer;
    bt::Index count;     // input nodes given
    bool recorded;       // input on the tape
    std::size_t nodes;   // tape capacity
    bt::Status want;
  };
  static nn::Conv2dOptions o3 = o;
  o3.out_channels = 3U;
  static const Bad bad[] = {  // static: a 3 KiB stack on the Cortex-M0
      {{{bt::frozen_f32(w), 2U, 8U}, {bt::frozen_f32(b), 2U}, o}, 16U, true, 96U, bt::Status::kInvalidArgument},
      {{{bt::frozen_f32(w), 2U, 9U}, {bt::frozen_f32(b), 2U}, o3}, 16U, true, 96U, bt::Status::kInvalidArgument},
      {{{bt::frozen_f32(nullptr), 2U, 9U}, {bt::frozen_f32(b), 2U}, o}, 16U, true, 96U, bt::Status::kInvalidArgument},
      {{{bt::frozen_i8(nullptr, 1.0F), 2U, 9U}, {}, o}, 16U, true, 96U, bt::Status::kInvalidArgument},
      {{{bt::frozen_f32(w), 2U, 9U}, {bt::frozen_f32(b), 3U}, o}, 16U, true, 96U, bt::Status::kInvalidArgument},
      {{{bt::frozen_f32(w), 2U, 9U}, {bt::frozen_f32(nullptr), 2U}, o}, 16U, true, 96U, bt::Status::kInvalidArgument},
      {good, 15U, true, 96U, bt::Status::kInvalidArgument},
      {good, 16U, false, 96U, bt::Status::kInvalidHandle},
      {good, 16U, true, 40U, bt::Status::kCapacityExceeded},
  };
  for (const Bad& k : bad) {
    bt::Tape<double> tape(g_conv_arena, sizeof(g_conv_arena), k.nodes, kConvSlots);
    const bt::View x = bt::record_view(tape, 16U, [&](bt::Index i) noexcept { return tape.leaf(conv_value(i, 1.0)); });
    const bt::View in = k.recorded ? bt::View{x.first, k.count} : bt::View{x.first + 8U, k.count};
    const bt::View y = k.layer.forward(tape, in, nn::Size2d{4U, 4U});
    BT_CHECK(t, (y.count == 0U) && (tape.status() == k.want));
    BT_CHECK(t, (tape.size() == 16U) && (tape.usage().slots == 0U));
  }
  // The good layer works on the same tape size (the refusals are the layer's).
  bt::Tape<double> tape(g_conv_arena, sizeof(g_conv_arena), 96U, kConvSlots);
  const bt::View x = bt::record_view(tape, 16U, [&](bt::Index i) noexcept { return tape.leaf(conv_value(i, 1.0)); });
  BT_CHECK(t, good.forward(tape, x, nn::Size2d{4U, 4U}).count == 32U);
  BT_CHECK(t, tape.status() == bt::Status::kOk);
}

// forward<A> and evaluate<A> of another activation than the layer's are
// refused: kInvalidArgument and nothing recorded, false and nothing written.
void frozen_conv_refuses_other_activation(bt_test::Context& t) {
  static const float w[2U * 9U] = {0.5F, -0.25F, 0.125F};
  static nn::Conv2dOptions o2{};
  o2.in_channels = 1U;
  o2.out_channels = 2U;
  o2.kernel_h = 3U;
  o2.kernel_w = 3U;
  o2.act = nn::Activation::kRelu;
  static nn::Conv1dOptions o1{};
  o1.in_channels = 1U;
  o1.out_channels = 2U;
  o1.kernel = 9U;
  o1.act = nn::Activation::kTanh;
  const nn::FrozenConv2d<double> c2{{bt::frozen_f32(w), 2U, 9U}, {}, o2};
  const nn::FrozenConv1d<double> c1{{bt::frozen_f32(w), 2U, 9U}, {}, o1};
  bt::Tape<double> tape(g_conv_arena, sizeof(g_conv_arena), 96U, kConvSlots);
  const bt::View x = bt::record_view(tape, 16U, [&](bt::Index i) noexcept { return tape.leaf(conv_value(i, 1.0)); });
  BT_CHECK(t, c2.forward<nn::Activation::kTanh>(tape, x, nn::Size2d{4U, 4U}).count == 0U);
  BT_CHECK(t, (tape.status() == bt::Status::kInvalidArgument) && (tape.size() == 16U) && (tape.usage().slots == 0U));
  bt::Tape<double> tape1(g_conv_arena, sizeof(g_conv_arena), 96U, kConvSlots);
  const bt::View x1 = bt::record_view(tape1, 16U, [&](bt::Index i) noexcept { return tape1.leaf(conv_value(i, 1.0)); });
  BT_CHECK(t, c1.forward<nn::Activation::kRelu>(tape1, x1, 16U).count == 0U);
  BT_CHECK(t, (tape1.status() == bt::Status::kInvalidArgument) && (tape1.size() == 16U) && (tape1.usage().slots == 0U));
  static double xs[16];  // static: the micro:bit's 3 KiB thread stack
  for (std::size_t i = 0U; i < 16U; ++i) {
    xs[i] = conv_value(i, 1.0);
  }
  static double ys[16];
  for (double& v : ys) {
    v = 7.0;
  }
  BT_CHECK(t, !evaluate_as<nn::Activation::kSigmoid>(c2, xs, nn::Size2d{4U, 4U}, ys));
  BT_CHECK(t, !evaluate_as<nn::Activation::kIdentity>(c1, xs, 16U, ys));
  bool untouched = true;
  for (const double v : ys) {
    untouched = untouched && (v == 7.0);
  }
  BT_CHECK(t, untouched);
  // The layer's own activation works: tanh of the 8 sums of the 1-D layer.
  BT_CHECK(t, evaluate_as<nn::Activation::kTanh>(c1, xs, 16U, ys));
  bool tanh_ok = true;
  for (std::size_t p = 0U; p < 8U; ++p) {
    for (std::size_t o = 0U; o < 2U; ++o) {
      double sum = 0.0;
      for (std::size_t j = 0U; j < 9U; ++j) {
        sum += static_cast<double>(w[(o * 9U) + j]) * xs[p + j];
      }
      tanh_ok = tanh_ok && bt_test::near(ys[(p * 2U) + o], std::tanh(sum), 1e-12, 1e-12);
    }
  }
  BT_CHECK(t, tanh_ok);
}

const bt_test::TestCase kCases[] = {
    {"frozen_conv2d_matches_direct", frozen_conv2d_matches_direct},
    {"frozen_conv1d_matches_direct", frozen_conv1d_matches_direct},
    {"frozen_conv_refuses", frozen_conv_refuses},
    {"frozen_conv_refuses_other_activation", frozen_conv_refuses_other_activation},
};

}  // namespace

BT_TEST_MAIN("frozen_conv", kCases)

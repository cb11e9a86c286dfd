// SPDX-License-Identifier: Apache-2.0
// The on-device trainers' lane batches against their serial batches
// (targets/firmware: burtorch-train-kws[-lanes], burtorch-finetune[-lanes]),
// on every target, through the firmware's own model code (kws_model.hpp,
// finetune_net.hpp) with four float lanes as the firmware uses them: on the
// Cortex-M55 the Helium backend (lanes/helium.hpp), elsewhere the generic
// loops.
//  - the keyword-spotting model from the firmware's seed over 11 generated
//    spectrograms (two full sweeps and a partial one): the lane batch's mean
//    loss and every parameter's gradient against the serial batch's, within
//    the lane tape's tolerance (docs/floating-point.md: 2e-5, relative for
//    the loss, of the largest gradient for the gradients);
//  - its two convolutions with dyadic weights and inputs (every product and
//    sum exact): each lane's outputs and input gradients bit for bit a
//    scalar tape's for that lane's input, the shared gradients bit for bit
//    the sum of the samples';
//  - a Linear(13 -> 7) the same way: a block of rows and the rows after it,
//    blocks of inputs and the inputs after them, the weights' gradient in
//    tiles and in single columns;
//  - the fine-tuning head over each frozen backbone (int8, FP16) from the
//    pretrained weights over 11 shifted pictures: loss and the head's
//    gradients, lanes (backbone evaluated in lanes without a tape) against
//    serial (backbone recorded on the tape), within the tolerance, and the
//    backbone's features evaluated in lanes against those evaluated per
//    picture;
//  - which backend runs: Helium exactly where the kernels select it.
#include <burtorch/burtorch.hpp>
#include <burtorch/frozen/ops.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "finetune_net.hpp"
#include "firmware.hpp"
#include "golden.hpp"
#include "harness.hpp"
#include "kws_model.hpp"
#include "plans.hpp"
#include "shapes_data.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;
namespace kws = firmware::kws;
namespace ft = firmware::finetune;
namespace fm = finetune_model;

namespace {

constexpr std::size_t kLanes = kws::kLanes;
static_assert(kLanes == ft::kLanes, "both trainers sweep the same lanes");
using L4 = bt::Lanes<float, kLanes>;
// The lane tape's tolerance (docs/floating-point.md, "Lane batches").
constexpr double kTolerance = 2e-5;
constexpr std::size_t kBatch = (2U * kLanes) + 3U;  // two full sweeps and a partial one

// --- buffers -------------------------------------------------------------------
nn::PlanTape<float, kws::kPlan> g_kws_serial;
nn::LaneMemory<float, kws::kLanePlan> g_kws_lanes;
nn::PlanTape<float, ft::kPlan> g_ft_serial;
nn::LaneMemory<float, ft::kLanePlan> g_ft_lanes;
ft::LaneActivations<kLanes> g_act;
float g_x[kBatch][kws::kInputs];
bt::Index g_y[kBatch];
float g_pictures[kBatch][ft::kInputs];
bt::Index g_labels[kBatch];
double g_grads[kws::kParameters];  // the serial batch's gradients

// Scratch tapes of the exact cases: parameters, a lane tape, a scalar tape
// (parameters copied, one sample).
constexpr std::size_t kExactNodes = 1200U;
constexpr std::size_t kExactSlots = 800U;
constexpr std::size_t kExactParams = kws::kParameters;
alignas(64) unsigned char g_params_buffer[bt::Tape<float>::bytes_required(kExactParams, 0U, kExactParams)];
alignas(64) unsigned char g_lane_buffer[bt::Tape<L4>::bytes_required(kExactNodes, kExactSlots)];
alignas(64) unsigned char g_scalar_buffer[bt::Tape<float>::bytes_required(kExactNodes, kExactSlots)];  // any region

// Dyadic data with few bits (as tests/nn/test_nn_lanes.cpp's): value
// (h % (2 range + 1) - range) * scale for a hash h of i and salt.
float dyadic(std::size_t i, std::size_t salt, int range, float scale) {
  const std::size_t h = (i * 2654435761U) ^ (salt * 40503U) ^ (i >> 3U);
  return static_cast<float>(static_cast<int>(h % static_cast<std::size_t>((2 * range) + 1)) - range) * scale;
}

// |lanes - serial| within the tolerance: the loss relative to itself, each
// gradient relative to the largest.
void compare(bt_test::Context& t, float loss_lanes, float loss_serial, const float* grads, std::size_t count) {
  BT_CHECK(t, std::isfinite(loss_lanes) && std::isfinite(loss_serial));
  BT_CHECK_NEAR(t, static_cast<double>(loss_lanes), static_cast<double>(loss_serial), kTolerance);
  bt_test::check_of_largest(t, grads, g_grads, count, kTolerance);
}

// --- which backend ---------------------------------------------------------------
void backend(bt_test::Context& t) {
#if BURTORCH_CONFIG_SIMD && defined(__OPTIMIZE__) && defined(__ARM_FEATURE_MVE) && ((__ARM_FEATURE_MVE & 2) != 0)
  constexpr bool kExpected = true;  // a core with MVE-F, an optimised build with the kernels on
#else
  constexpr bool kExpected = false;
#endif
  BT_CHECK(t, L4::Ops::helium() == kExpected);
  using D4 = bt::Lanes<double, kLanes>;
  using F8 = bt::Lanes<float, 2U * kLanes>;
  BT_CHECK(t, !D4::Ops::helium());
  BT_CHECK(t, !F8::Ops::helium());
  bt_test::print(L4::Ops::helium() ? "  four float lanes: the Helium backend (lanes/helium.hpp)\n"
                                   : "  four float lanes: the generic loops\n");
}

// --- the keyword-spotting model ------------------------------------------------------
void kws_batch(bt_test::Context& t) {
  nn::Rng data(9U);
  for (std::size_t i = 0U; i < kBatch; ++i) {
    g_y[i] = static_cast<bt::Index>(i % kws::kClasses);
    kws::generate(data, g_y[i], g_x[i]);
  }
  static kws::Model serial_model;
  static kws::Model lane_model;
  nn::Rng rng(42U);
  nn::Rng rng2(42U);
  BT_CHECK(t, serial_model.create(g_kws_serial, rng) && lane_model.create(g_kws_lanes.params, rng2));
  const float loss_serial = nn::serial_batch(g_kws_serial, serial_model.params, kBatch, [&](bt::Tape<float>& tp, std::size_t i) {
    return nn::cross_entropy(tp, serial_model.logits(tp, g_x[i]), g_y[i]);
  });
  BT_CHECK(t, g_kws_serial.status() == bt::Status::kOk);
  for (std::size_t i = 0U; i < kws::kParameters; ++i) {
    g_grads[i] = static_cast<double>(g_kws_serial.grads()[i]);
    BT_CHECK(t, g_kws_lanes.params.values()[i] == g_kws_serial.values()[i]);
  }
  const float loss_lanes = nn::lane_batch(
      g_kws_lanes.params, lane_model.params, g_kws_lanes.lanes, kBatch,
      [&](bt::Tape<L4>& lt, const bt::LaneParams<float>& p, std::size_t first, std::size_t active) {
        const float* xs[kLanes];
        bt::Index ys[kLanes];
        firmware::sweep_samples(g_x, g_y, first, active, xs, ys);
        return nn::cross_entropy(lt, lane_model.logits(lt, p, xs), ys);
      });
  BT_CHECK(t, (g_kws_lanes.lanes.status() == bt::Status::kOk) && (g_kws_lanes.params.status() == bt::Status::kOk));
  compare(t, loss_lanes, loss_serial, g_kws_lanes.params.grads(), kws::kParameters);
}

// A copy of the parameters of `params` onto `one` (the same indices).
void copy_params(const bt::Tape<float>& params, bt::Tape<float>& one) {
  for (std::size_t i = 0U; i < params.size(); ++i) {
    static_cast<void>(one.param(params.values()[i]));
  }
}

// Records n leaves of dyadic values (lane l: salt 10 + l; on a scalar tape
// the values of lane `lane`).
bt::View lane_leaves(bt::Tape<L4>& tape, bt::Index n) {
  return bt::record_view(tape, n, [&](bt::Index i) noexcept {
    L4 v;
    for (std::size_t l = 0U; l < kLanes; ++l) {
      v.lane[l] = dyadic(i, 10U + l, 8, 0.25F);
    }
    return tape.leaf(v);
  });
}
bt::View scalar_leaves(bt::Tape<float>& tape, bt::Index n, std::size_t lane) {
  return bt::record_view(tape, n, [&](bt::Index i) noexcept { return tape.leaf(dyadic(i, 10U + lane, 8, 0.25F)); });
}

// y = forward(x) on a lane tape and, per lane, on a scalar tape; the root
// sum(y * c) with dyadic c. Checks each lane's outputs and input gradients
// against the scalar tape's bit for bit, and the shared gradients against
// the sum of the samples' (exact, so in any order) bit for bit.
template <class LaneForward, class ScalarForward>
void exact_case(bt_test::Context& t, bt::Tape<float>& params, bt::Index inputs, LaneForward lane_forward,
                ScalarForward scalar_forward) {
  const std::size_t count = params.size();
  for (std::size_t i = 0U; i < count; ++i) {
    params.values()[i] = dyadic(i, 1U, 8, 0.125F);
  }
  params.zero_grad(0U, static_cast<bt::Index>(count));
  bt::Tape<L4> lanes(g_lane_buffer, sizeof(g_lane_buffer), kExactNodes, kExactSlots);
  const bt::View x = lane_leaves(lanes, inputs);
  const bt::View y = lane_forward(lanes, nn::lane_params(params), x);
  const bt::View c = bt::record_view(lanes, y.count, [&](bt::Index i) noexcept { return lanes.leaf(L4(dyadic(i, 3U, 3, 0.5F))); });
  BT_CHECK(t, (y.count != 0U) && (lanes.backward(bt::inner_product(lanes, y, c)) == bt::Status::kOk));
  for (std::size_t i = 0U; i < count; ++i) {
    g_grads[i] = 0.0;
  }
  bool values = true;
  bool input_grads = true;
  bool distinct = false;
  bool clipped = false;
  for (std::size_t l = 0U; l < kLanes; ++l) {
    bt::Tape<float> one(g_scalar_buffer, sizeof(g_scalar_buffer), kExactNodes, kExactSlots, count);
    copy_params(params, one);
    const bt::View xs = scalar_leaves(one, inputs, l);
    const bt::View ys = scalar_forward(one, xs);
    const bt::View cs = bt::record_view(one, ys.count, [&](bt::Index i) noexcept { return one.leaf(dyadic(i, 3U, 3, 0.5F)); });
    BT_CHECK(t, (ys.count == y.count) && (one.backward(bt::inner_product(one, ys, cs)) == bt::Status::kOk));
    for (bt::Index i = 0U; i < y.count; ++i) {
      values = values && (lanes.values()[y.first + i].lane[l] == one.values()[ys.first + i]);  // BT-DEV-004: bit for bit
      distinct = distinct || (lanes.values()[y.first + i].lane[l] != lanes.values()[y.first + i].lane[0]);
      clipped = clipped || (one.values()[ys.first + i] == 0.0F);
    }
    for (bt::Index i = 0U; i < inputs; ++i) {
      input_grads = input_grads && (lanes.grads()[x.first + i].lane[l] == one.grads()[xs.first + i]);
    }
    for (std::size_t i = 0U; i < count; ++i) {
      g_grads[i] += static_cast<double>(one.grads()[i]);
    }
  }
  BT_CHECK(t, values && input_grads && distinct);
  BT_CHECK(t, clipped);  // some ReLU is 0: its backward is exercised
  std::size_t bad = 0U;
  double largest = 0.0;
  for (std::size_t i = 0U; i < count; ++i) {
    bad += (static_cast<double>(params.grads()[i]) == g_grads[i]) ? 0U : 1U;
    largest = (std::fabs(g_grads[i]) > largest) ? std::fabs(g_grads[i]) : largest;
  }
  BT_CHECK(t, (bad == 0U) && (largest > 0.0));
}

// The model's two convolutions (ReLU) with dyadic weights and inputs.
void kws_convs_exact(bt_test::Context& t) {
  bt::Tape<float> params(g_params_buffer, sizeof(g_params_buffer), kExactParams, 0U, kExactParams);
  static kws::Model m;
  nn::Rng rng(42U);
  BT_CHECK(t, m.create(params, rng));
  exact_case(
      t, params, kws::kInputs,
      [&](bt::Tape<L4>& tape, const bt::LaneParams<float>& p, bt::View x) {
        return m.conv2.forward(tape, p, m.conv1.forward(tape, p, x, kws::kTime), kws::kLength1);
      },
      [&](bt::Tape<float>& tape, bt::View x) { return m.conv2.forward(tape, m.conv1.forward(tape, x, kws::kTime), kws::kLength1); });
}

// A Linear(13 -> 7) with ReLU: rows in a block of four and three after it,
// inputs in blocks of four and one after them, the weights' gradient in
// tiles of four columns and one column.
void linear_exact(bt_test::Context& t) {
  bt::Tape<float> params(g_params_buffer, sizeof(g_params_buffer), kExactParams, 0U, kExactParams);
  nn::LinearOptions o{};
  o.in = 13U;
  o.out = 7U;
  o.act = nn::Activation::kRelu;
  static nn::Linear<float> layer;
  nn::Rng rng(3U);
  BT_CHECK(t, layer.create(params, o, rng));
  exact_case(
      t, params, o.in,
      [&](bt::Tape<L4>& tape, const bt::LaneParams<float>& p, bt::View x) { return layer.forward(tape, p, x); },
      [&](bt::Tape<float>& tape, bt::View x) { return layer.forward(tape, x); });
}

// --- the fine-tuning head ------------------------------------------------------------
// The head's pretrained weights and biases onto `tape`'s parameters.
void load_head(bt::Tape<float>& tape, const nn::Linear<float>& head) {
  for (std::size_t i = 0U; i < (sizeof(fm::kHeadWeight) / sizeof(float)); ++i) {
    tape.values()[head.weight + i] = fm::kHeadWeight[i];
  }
  for (std::size_t i = 0U; i < fm::kClasses; ++i) {
    tape.values()[head.bias + i] = fm::kHeadBias[i];
  }
}

void finetune_batch(bt_test::Context& t) {
  constexpr std::uint64_t kStream = shapes_data::kSeed + 10U;  // the firmware's training stream
  for (std::size_t i = 0U; i < kBatch; ++i) {
    g_labels[i] = shapes_data::image(kStream, i, fm::kShifted, g_pictures[i]);
  }
  static nn::Linear<float> serial_head;
  static nn::Linear<float> lane_head;
  const nn::AvgPool2d<float> pool{ft::kPool};
  nn::Rng rng(1U);
  nn::Rng rng2(1U);
  BT_CHECK(t, serial_head.create(g_ft_serial, ft::kHead, rng) && lane_head.create(g_ft_lanes.params, ft::kHead, rng2));
  for (const ft::Backbone& bb : ft::kBackbones) {
    load_head(g_ft_serial, serial_head);
    load_head(g_ft_lanes.params, lane_head);
    const float loss_serial =
        nn::serial_batch(g_ft_serial, serial_head.params(), kBatch, [&](bt::Tape<float>& tp, std::size_t i) {
          return nn::cross_entropy(tp, ft::logits(tp, bb, pool, serial_head, g_pictures[i]), g_labels[i]);
        });
    BT_CHECK(t, g_ft_serial.status() == bt::Status::kOk);
    for (std::size_t i = 0U; i < ft::kParameters; ++i) {
      g_grads[i] = static_cast<double>(g_ft_serial.grads()[i]);
    }
    const float loss_lanes = nn::lane_batch(
        g_ft_lanes.params, lane_head.params(), g_ft_lanes.lanes, kBatch,
        [&](bt::Tape<L4>& lt, const bt::LaneParams<float>& p, std::size_t first, std::size_t active) {
          const float* xs[kLanes];
          bt::Index ys[kLanes];
          firmware::sweep_samples(g_pictures, g_labels, first, active, xs, ys);
          return nn::cross_entropy(lt, ft::logits(lt, p, bb, pool, lane_head, xs, g_act), ys);
        });
    BT_CHECK(t, (g_ft_lanes.lanes.status() == bt::Status::kOk) && (g_ft_lanes.params.status() == bt::Status::kOk));
    compare(t, loss_lanes, loss_serial, g_ft_lanes.params.grads(), ft::kParameters);
  }
}

// The backbone evaluated in lanes: lane l the backbone evaluated for
// picture l alone, within the tolerance (the same operations in the same
// order, but C++ lets the compiler fuse a multiply and an add of the
// program's own code, and GCC does so for one picture's floats on the
// Cortex-M55 and not for the lanes').
void finetune_backbone_lanes(bt_test::Context& t) {
  constexpr std::uint64_t kStream = shapes_data::kSeed + 11U;
  const nn::AvgPool2d<float> pool{ft::kPool};
  for (std::size_t l = 0U; l < kLanes; ++l) {
    static_cast<void>(shapes_data::image(kStream, l, fm::kShifted, g_pictures[l]));
  }
  for (const ft::Backbone& bb : ft::kBackbones) {
    for (bt::Index i = 0U; i < ft::kInputs; ++i) {
      for (std::size_t l = 0U; l < kLanes; ++l) {
        g_act.in[i].lane[l] = g_pictures[l][i];
      }
    }
    BT_CHECK(t, bb.conv1->evaluate(g_act.in, ft::kIn, g_act.h1) && bb.conv2->evaluate(g_act.h1, ft::kSize1, g_act.h2) &&
                    pool.evaluate(g_act.h2, ft::kSize2, g_act.features));
    double largest = 0.0;
    double worst = 0.0;
    bool distinct = false;
    for (std::size_t l = 0U; l < kLanes; ++l) {
      float h1[ft::kActivations1];
      float h2[ft::kActivations2];
      float features[ft::kHead.in];
      BT_CHECK(t, bb.conv1->evaluate(g_pictures[l], ft::kIn, h1) && bb.conv2->evaluate(h1, ft::kSize1, h2) &&
                      pool.evaluate(h2, ft::kSize2, features));
      for (bt::Index i = 0U; i < ft::kHead.in; ++i) {
        const double d = std::fabs(static_cast<double>(g_act.features[i].lane[l]) - static_cast<double>(features[i]));
        worst = (d > worst) ? d : worst;
        largest = (std::fabs(static_cast<double>(features[i])) > largest) ? std::fabs(static_cast<double>(features[i])) : largest;
        distinct = distinct || (g_act.features[i].lane[l] != g_act.features[i].lane[0]);
      }
    }
    BT_CHECK(t, (largest > 0.0) && (worst <= (kTolerance * largest)) && distinct);
  }
}

const bt_test::TestCase kCases[] = {
    {"backend", backend},
    {"kws_batch", kws_batch},
    {"kws_convs_exact", kws_convs_exact},
    {"linear_exact", linear_exact},
    {"finetune_batch", finetune_batch},
    {"finetune_backbone_lanes", finetune_backbone_lanes},
};

}  // namespace

BT_TEST_MAIN("nn_firmware_lanes", kCases)

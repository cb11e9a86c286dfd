// SPDX-License-Identifier: Apache-2.0
// Host only: the library's float tanh (burtorch::tanh_float, what a
// Tape<float> records for tanh) against the C library's tanh in double
// precision (glibc's, well under 1 ulp of double), over every float of
// [0.25, 10] (both branches and the switch between them, the exp branch's
// reduction at every n), every 61st bit pattern of all 2^32 (every binade,
// subnormals, NaN and infinities) and the special values: within 2.5 ulp of
// float everywhere (2.1 when measured), odd bit for bit, +-1 from 9.5 on. Then the tape: its
// tanh node's value is tanh_float's bits and its gradient is 1 - tanh^2
// of that value, which agrees with the derivative of double tanh.
#include <burtorch/burtorch.hpp>
#include <burtorch/scalar.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>

#include "harness.hpp"

namespace bt = burtorch;

namespace {

#ifdef BT_TEST_THIN_SWEEP
constexpr std::uint32_t kThin = 7U;
#else
constexpr std::uint32_t kThin = 1U;
#endif

float from_bits(std::uint32_t bits) {
  float v = 0.0F;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

std::uint32_t to_bits(float v) {
  std::uint32_t bits = 0U;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
}

// |got - tanh(x)| in units of the last place of float at tanh(x) (the
// float spacing of the binade the exact value lies in; below FLT_MIN the
// subnormal spacing).
double ulps_off(float x, float got) {
  const double exact = std::tanh(static_cast<double>(x));
  int e = 0;
  static_cast<void>(std::frexp(exact, &e));  // |exact| in [2^(e-1), 2^e)
  const int lowest = -125;                   // float's subnormal spacing is 2^-149 = 2^(-125 - 24)
  const double ulp = std::ldexp(1.0, ((e < lowest) ? lowest : e) - 24);
  return std::fabs(static_cast<double>(got) - exact) / ulp;
}

struct Worst {
  double ulps = 0.0;
  float at = 0.0F;
  unsigned long long odd_failures = 0U;
  void check(float x) {
    const float t = bt::tanh_float(x);
    if (!std::isnan(x)) {
      const double u = ulps_off(x, t);
      if (!(u <= ulps)) {
        ulps = std::isnan(u) ? 1e9 : u;
        at = x;
      }
    }
    const float m = bt::tanh_float(-x);
    if (std::isnan(x) ? !(std::isnan(t) && std::isnan(m)) : (to_bits(m) != (to_bits(t) ^ 0x80000000U))) {
      ++odd_failures;
    }
  }
};

constexpr double kBound = 2.5;  // the bound burtorch/scalar.hpp states

void within_2_5_ulp_on_every_float_of_a_quarter_to_ten(bt_test::Context& t) {
  Worst w;
  for (std::uint32_t b = to_bits(0.25F); b <= to_bits(10.0F); b += kThin) {
    w.check(from_bits(b));
  }
  std::printf("  [0.25, 10]: worst %.3f ulp at %.9g\n", w.ulps, static_cast<double>(w.at));
  BT_CHECK(t, w.ulps <= kBound);
  BT_CHECK(t, w.odd_failures == 0U);
}

void within_2_5_ulp_on_every_61st_bit_pattern(bt_test::Context& t) {
  Worst w;
  std::uint64_t count = 0U;
  for (std::uint64_t b = 0U; b <= 0xFFFFFFFFULL; b += 61U * kThin) {
    w.check(from_bits(static_cast<std::uint32_t>(b)));
    ++count;
  }
  std::printf("  %llu bit patterns: worst %.3f ulp at %.9g\n", static_cast<unsigned long long>(count), w.ulps,
              static_cast<double>(w.at));
  BT_CHECK(t, count > 70000000U / kThin);
  BT_CHECK(t, w.ulps <= kBound);
  BT_CHECK(t, w.odd_failures == 0U);
}

void special_values(bt_test::Context& t) {
  const float inf = std::numeric_limits<float>::infinity();
  BT_CHECK(t, to_bits(bt::tanh_float(0.0F)) == to_bits(0.0F));
  BT_CHECK(t, to_bits(bt::tanh_float(-0.0F)) == to_bits(-0.0F));
  BT_CHECK(t, bt::tanh_float(inf) == 1.0F);
  BT_CHECK(t, bt::tanh_float(-inf) == -1.0F);
  BT_CHECK(t, std::isnan(bt::tanh_float(std::numeric_limits<float>::quiet_NaN())));
  // tanh(x) = x - x^3/3...: x itself for tiny x, subnormals included.
  for (const float x : {1e-30F, -3e-20F, from_bits(1U), from_bits(0x807FFFFFU), 1e-4F}) {
    BT_CHECK(t, bt::tanh_float(x) == static_cast<float>(std::tanh(static_cast<double>(x))));
  }
  // 9.5 on: 1 (tanh(9.5) = 1 - 1.1e-8 rounds to 1); just below: the
  // formula's value, which rounds to 1 too, and the largest float below 1
  // where tanh is below 1 - 2^-24 - 2^-25.
  BT_CHECK(t, bt::tanh_float(9.5F) == 1.0F);
  BT_CHECK(t, bt::tanh_float(std::nextafter(9.5F, 0.0F)) == 1.0F);
  BT_CHECK(t, bt::tanh_float(8.5F) == std::nextafter(1.0F, 0.0F));
  BT_CHECK(t, bt::tanh_float(1e30F) == 1.0F);
}

void the_tape_records_it_and_its_gradient(bt_test::Context& t) {
  static bt::FixedTape<float, 16, 8> tape;
  bool values = true;
  bool grads = true;
  double worst = 0.0;
  const float xs[] = {-9.75F, -3.0F, -0.5F, -0.49999997F, -0.125F, 0.0F, 0.3F, 0.5F, 0.75F, 1.5F, 4.0F, 8.0F};
  for (const float x : xs) {
    tape.reset();
    const bt::Value<float> a = tape.param(x);
    const bt::Value<float> y = bt::tanh(a);
    values = values && (to_bits(y.value()) == to_bits(bt::tanh_float(x)));
    values = values && (to_bits(bt::ScalarOps<float>::tanh(x)) == to_bits(bt::tanh_float(x)));
    BT_CHECK(t, tape.backward(y) == bt::Status::kOk);
    const float th = bt::tanh_float(x);
    grads = grads && (to_bits(a.grad()) == to_bits(1.0F - (th * th)));
    const double exact = 1.0 / (std::cosh(static_cast<double>(x)) * std::cosh(static_cast<double>(x)));
    const double off = std::fabs(static_cast<double>(a.grad()) - exact);
    worst = (off > worst) ? off : worst;
  }
  BT_CHECK(t, values);
  BT_CHECK(t, grads);
  // 1 - t^2 keeps t's absolute error (2.5 ulp: below 1.5e-7 for t in
  // [0.5, 1)) doubled, not its relative one where t is near 1 (at 9.75 the
  // float gradient is 0 against 1.4e-8): absolute error within 4e-7.
  std::printf("  gradient: worst absolute error %.3g\n", worst);
  BT_CHECK(t, worst <= 4e-7);
  tape.reset();
  const bt::Value<float> a = tape.param(1.5F);
  static_cast<void>(tape.backward(bt::tanh(a)));
  BT_CHECK_CLOSE(t, static_cast<double>(a.grad()), 1.0 / (std::cosh(1.5) * std::cosh(1.5)), 1e-6, 1e-7);
}

const bt_test::TestCase kCases[] = {
    {"within_2_5_ulp_on_every_float_of_a_quarter_to_ten", within_2_5_ulp_on_every_float_of_a_quarter_to_ten},
    {"within_2_5_ulp_on_every_61st_bit_pattern", within_2_5_ulp_on_every_61st_bit_pattern},
    {"special_values", special_values},
    {"the_tape_records_it_and_its_gradient", the_tape_records_it_and_its_gradient},
};

}  // namespace

BT_TEST_MAIN("tanh_float", kCases)

// SPDX-License-Identifier: Apache-2.0
// A user's translation unit with violations planted in the user's own code:
// the compliance kit must report, at every line marked PLANTED, each rule ID
// listed after the marker, and fail; and it
// must suppress none of them, not even where a line carries one of
// libburtorch's deviation IDs or breaks a rule libburtorch holds a permit
// for (tools/check.d/40-compliance-kit.sh checks this in the SARIF output).
#include <cstdint>
#include <cstdlib>

#include "burtorch/core/ops.hpp"

namespace {

struct Sample {
  // BT-DEV-012: a deviation ID in the user's code must not suppress anything.
  Sample() noexcept {}  // PLANTED: cppcoreguidelines-pro-type-member-init hicpp-member-init uninitMemberVar
  float weight;
};

// Dynamic memory.
float* scratch_heap(std::size_t n) {
  return static_cast<float*>(std::malloc(n * sizeof(float)));  // PLANTED: cppcoreguidelines-no-malloc hicpp-no-malloc cppcoreguidelines-owning-memory
}

float* one_more() {
  return new float(1.0F);  // PLANTED: cppcoreguidelines-owning-memory
}

// Recursion.
unsigned depth(unsigned n) {  // PLANTED: misc-no-recursion
  return (n == 0U) ? 0U : (1U + depth(n - 1U));  // PLANTED: misra-c2012-17.2
}

// Unchecked casts.
std::uint32_t bits_of(const float* f) {
  return *reinterpret_cast<const std::uint32_t*>(f);  // PLANTED: cppcoreguidelines-pro-type-reinterpret-cast invalidPointerCast
}

// A C-style cast that reinterprets. (A C-style numeric conversion such as
// (int)x is not reported by this profile: see docs/compliance-in-your-ci.md.)
std::uint32_t first_bits(const float* f) {
  return *(const std::uint32_t*)f;  // PLANTED: cppcoreguidelines-pro-type-cstyle-cast
}

// A C array: libburtorch's headers hold a permit (BT-DEV-013), user code does not.
float table[4] = {1.0F, 2.0F, 3.0F, 4.0F};  // PLANTED: cppcoreguidelines-avoid-c-arrays hicpp-avoid-c-arrays

}  // namespace

int main() {
  static burtorch::FixedTape<float, 16U> tape;
  const burtorch::Value<float> x = tape.leaf(table[1]);
  const Sample s;
  float* p = scratch_heap(4U);
  float* q = one_more();
  const unsigned d = depth(3U);
  const std::uint32_t b = bits_of(q);
  const std::uint32_t t = first_bits(&s.weight);
  static_cast<void>(burtorch::exp(x));
  std::free(p);
  delete q;
  return static_cast<int>(d + b + t);
}

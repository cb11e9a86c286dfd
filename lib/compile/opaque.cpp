// SPDX-License-Identifier: Apache-2.0
// The fences of compiled steps (burtorch/compile/step.hpp,
// BURTORCH_COMPILE_FENCE): identities the compiler of the generated code
// cannot see, in a translation unit of their own.
#include "burtorch/compile/step.hpp"

namespace burtorch {
namespace compile {
namespace rt {

const void* opaque(const void* p) noexcept { return p; }

Index opaque_index(Index i) noexcept { return i; }

}  // namespace rt
}  // namespace compile
}  // namespace burtorch

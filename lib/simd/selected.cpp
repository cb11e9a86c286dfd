// SPDX-License-Identifier: Apache-2.0
// The float and double functions of burtorch/core/simd.hpp: the kernels of the
// implementation this build selects (isa::ForFloat, isa::ForDouble in
// lib/simd/isa.hpp), compiled into the public functions themselves, and the
// names of the selection.
//
// gnu::flatten (GCC, Clang) compiles every call in a function into it: the
// kernel templates are inline functions with external linkage, which GCC
// would otherwise leave out of line and reach by a jump wherever it inlines
// only by size (at -Os, and for inner products, which sum_squares also
// computes: it is dot(x, x, n)).
#include <cstddef>

#include "arm.hpp"
#include "isa.hpp"
#include "kernels.hpp"
#include "vfp.hpp"
#include "x86.hpp"

namespace burtorch {
namespace simd {

namespace {
using F = isa::Inline<isa::ForFloat>;
using D = isa::Inline<isa::ForDouble>;
}  // namespace

[[gnu::flatten]] float dot(const float* a, const float* b, std::size_t n) noexcept { return F::dot(a, b, n); }
[[gnu::flatten]] double dot(const double* a, const double* b, std::size_t n) noexcept { return D::dot(a, b, n); }
[[gnu::flatten]] float sum_squares(const float* x, std::size_t n) noexcept { return F::dot(x, x, n); }
[[gnu::flatten]] double sum_squares(const double* x, std::size_t n) noexcept { return D::dot(x, x, n); }
[[gnu::flatten]] void axpy(float* y, float alpha, const float* x, std::size_t n) noexcept {
  F::axpy(y, alpha, x, n);
}
[[gnu::flatten]] void axpy(double* y, double alpha, const double* x, std::size_t n) noexcept {
  D::axpy(y, alpha, x, n);
}
[[gnu::flatten]] void scale(float* x, float s, std::size_t n) noexcept { F::scale(x, s, n); }
[[gnu::flatten]] void scale(double* x, double s, std::size_t n) noexcept { D::scale(x, s, n); }
[[gnu::flatten]] void sgd_step(float* w, const float* g, float lr, std::size_t n) noexcept {
  F::sgd_step(w, g, lr, n);
}
[[gnu::flatten]] void sgd_step(double* w, const double* g, double lr, std::size_t n) noexcept {
  D::sgd_step(w, g, lr, n);
}
[[gnu::flatten]] void sgd_step(float* w, const float* g, float lr, float scale, std::size_t n) noexcept {
  F::sgd_step(w, g, lr, scale, n);
}
[[gnu::flatten]] void sgd_step(double* w, const double* g, double lr, double scale, std::size_t n) noexcept {
  D::sgd_step(w, g, lr, scale, n);
}
[[gnu::flatten]] void momentum_step(float* w, float* buf, const float* g, float lr, float momentum, bool first,
                                    float scale, std::size_t n) noexcept {
  F::momentum_step(w, buf, g, lr, momentum, first, scale, n);
}
[[gnu::flatten]] void momentum_step(double* w, double* buf, const double* g, double lr, double momentum, bool first,
                                    double scale, std::size_t n) noexcept {
  D::momentum_step(w, buf, g, lr, momentum, first, scale, n);
}
[[gnu::flatten]] void adam_step(float* w, float* m, float* v, const float* g, const AdamStep<float>& p, float scale,
                                std::size_t n) noexcept {
  F::adam_step(w, m, v, g, p, scale, n);
}
[[gnu::flatten]] void adam_step(double* w, double* m, double* v, const double* g, const AdamStep<double>& p,
                                double scale, std::size_t n) noexcept {
  D::adam_step(w, m, v, g, p, scale, n);
}
[[gnu::flatten]] void momentum_step(float* w, float* buf, const float* g, float lr, float momentum, bool first,
                                    std::size_t n) noexcept {
  F::momentum_step(w, buf, g, lr, momentum, first, n);
}
[[gnu::flatten]] void momentum_step(double* w, double* buf, const double* g, double lr, double momentum, bool first,
                                    std::size_t n) noexcept {
  D::momentum_step(w, buf, g, lr, momentum, first, n);
}
[[gnu::flatten]] void adam_step(float* w, float* m, float* v, const float* g, const AdamStep<float>& p,
                                std::size_t n) noexcept {
  F::adam_step(w, m, v, g, p, n);
}
[[gnu::flatten]] void adam_step(double* w, double* m, double* v, const double* g, const AdamStep<double>& p,
                                std::size_t n) noexcept {
  D::adam_step(w, m, v, g, p, n);
}

const char* isa_float() noexcept { return isa::ForFloat::kName; }
const char* isa_double() noexcept { return isa::ForDouble::kName; }

}  // namespace simd
}  // namespace burtorch

// SPDX-License-Identifier: Apache-2.0
// The paper's two benchmark graphs, shared by the demo, the benchmarks and
// the tests. Both record on `tape` and return the root.
#ifndef BURTORCH_EXAMPLES_GRAPHS_HPP
#define BURTORCH_EXAMPLES_GRAPHS_HPP

#include <burtorch/burtorch.hpp>

namespace examples {

template <class T>
struct TinyGraph {
  burtorch::Value<T> a, b, c, d, e, f, g;
};

// Paper Fig. 1: c = a + b, d = a*b + b^3, e = c - d, f = e^2, g = f / 2.
template <class T>
inline TinyGraph<T> tiny_graph(burtorch::Tape<T>& tape, T a_value, T b_value) noexcept {
  TinyGraph<T> n;
  n.a = tape.leaf(a_value);
  n.b = tape.leaf(b_value);
  n.c = n.a + n.b;
  n.d = n.a * n.b + burtorch::pow3(n.b);
  n.e = n.c - n.d;
  n.f = burtorch::sqr(n.e);
  n.g = n.f / T(2);
  return n;
}

template <class T>
struct SmallGraph {
  burtorch::Value<T> a, b, g;
};

// Paper Fig. 2 (micrograd's README graph).
template <class T>
inline SmallGraph<T> small_graph(burtorch::Tape<T>& tape, T a_value, T b_value) noexcept {
  SmallGraph<T> n;
  n.a = tape.leaf(a_value);
  n.b = tape.leaf(b_value);
  auto c = n.a + n.b;
  auto d = n.a * n.b + burtorch::pow3(n.b);
  c += c + T(1);
  c += T(1) + c + (-n.a);
  d += d * T(2) + burtorch::relu(n.b + n.a);
  d += T(3) * d + burtorch::relu(n.b - n.a);
  auto e = c - d;
  auto f = burtorch::sqr(e);
  n.g = f / T(2);
  n.g += T(10) / f;
  return n;
}

}  // namespace examples

#endif  // BURTORCH_EXAMPLES_GRAPHS_HPP

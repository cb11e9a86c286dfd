// SPDX-License-Identifier: Apache-2.0
// A reference trainer written the plain way, to compare the library's
// instructions per training step with: a ReLU MLP in -> hidden -> out, FP32,
// softmax cross-entropy, plain SGD, a batch of B samples run one at a time
// (gradients summed, divided by B, one update). Plain loops over arrays, no
// tape, no checks. The caller owns every array (no heap).
//
// Parameters are laid out as the library's nn::Linear lays them out on its
// tape (W1 row-major [hidden][in], b1, W2 [out][hidden], b2), so one copy
// of the initial values serves both trainers.
#ifndef BURTORCH_BENCH_MCU_HANDWRITTEN_MLP_HPP
#define BURTORCH_BENCH_MCU_HANDWRITTEN_MLP_HPP

#include <cmath>
#include <cstddef>

namespace handwritten {

struct Shape {
  std::size_t in;
  std::size_t hidden;
  std::size_t out;
};

constexpr std::size_t parameters(Shape s) { return (s.in * s.hidden) + s.hidden + (s.hidden * s.out) + s.out; }
// Scratch floats one sample needs: pre-activations, activations, their
// gradient, logits and their gradient.
constexpr std::size_t scratch(Shape s) { return (3U * s.hidden) + (2U * s.out); }

class Mlp {
 public:
  // w, g: parameters(shape) floats each; work: scratch(shape) floats.
  Mlp(Shape shape, float* w, float* g, float* work) : s_(shape), w_(w), g_(g), work_(work) {}

  // One SGD step on samples x[0..batch) (each `in` floats) with classes y;
  // returns the batch's mean loss (before the update).
  float step(const float* const* x, const unsigned* y, std::size_t batch, float lr) {
    const std::size_t n = parameters(s_);
    for (std::size_t i = 0; i < n; ++i) {
      g_[i] = 0.0F;
    }
    float total = 0.0F;
    for (std::size_t b = 0; b < batch; ++b) {
      total += sample(x[b], y[b]);
    }
    const float scale = 1.0F / static_cast<float>(batch);
    for (std::size_t i = 0; i < n; ++i) {
      w_[i] -= lr * (g_[i] * scale);
    }
    return total / static_cast<float>(batch);
  }

 private:
  // Forward and backward of one sample; adds its gradient to g_.
  float sample(const float* x, unsigned y) {
    const std::size_t in = s_.in;
    const std::size_t hid = s_.hidden;
    const std::size_t out = s_.out;
    const float* w1 = w_;
    const float* b1 = w1 + (in * hid);
    const float* w2 = b1 + hid;
    const float* b2 = w2 + (hid * out);
    float* gw1 = g_;
    float* gb1 = gw1 + (in * hid);
    float* gw2 = gb1 + hid;
    float* gb2 = gw2 + (hid * out);
    float* pre = work_;
    float* h = pre + hid;
    float* dh = h + hid;
    float* z = dh + hid;
    float* dz = z + out;

    for (std::size_t j = 0; j < hid; ++j) {
      float acc = 0.0F;
      for (std::size_t k = 0; k < in; ++k) {
        acc += w1[(j * in) + k] * x[k];
      }
      pre[j] = acc + b1[j];
      h[j] = (pre[j] > 0.0F) ? pre[j] : 0.0F;
    }
    float top = 0.0F;
    for (std::size_t c = 0; c < out; ++c) {
      float acc = 0.0F;
      for (std::size_t j = 0; j < hid; ++j) {
        acc += w2[(c * hid) + j] * h[j];
      }
      z[c] = acc + b2[c];
      top = ((c == 0) || (z[c] > top)) ? z[c] : top;
    }
    float sum = 0.0F;
    for (std::size_t c = 0; c < out; ++c) {
      dz[c] = std::exp(z[c] - top);
      sum += dz[c];
    }
    const float lse = top + std::log(sum);
    for (std::size_t c = 0; c < out; ++c) {
      dz[c] = (dz[c] / sum) - ((c == y) ? 1.0F : 0.0F);
    }
    for (std::size_t j = 0; j < hid; ++j) {
      dh[j] = 0.0F;
    }
    for (std::size_t c = 0; c < out; ++c) {
      const float d = dz[c];
      gb2[c] += d;
      for (std::size_t j = 0; j < hid; ++j) {
        gw2[(c * hid) + j] += d * h[j];
        dh[j] += d * w2[(c * hid) + j];
      }
    }
    for (std::size_t j = 0; j < hid; ++j) {
      const float d = (pre[j] > 0.0F) ? dh[j] : 0.0F;
      gb1[j] += d;
      for (std::size_t k = 0; k < in; ++k) {
        gw1[(j * in) + k] += d * x[k];
      }
    }
    return lse - z[y];
  }

  Shape s_;
  float* w_;
  float* g_;
  float* work_;
};

}  // namespace handwritten

#endif  // BURTORCH_BENCH_MCU_HANDWRITTEN_MLP_HPP

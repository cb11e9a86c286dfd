// SPDX-License-Identifier: Apache-2.0
// Generated images for the convolutional models (burtorch-cnn, the
// fine-tuning firmware, bench_cnn): 8 x 8 grayscale pictures of one stroke
// in noise, four classes by the stroke's direction. Header-only, heap-free,
// deterministic: integer arithmetic and IEEE +, -, *, / in double only, so
// the host and every board draw the same pictures.
//
//   class 0  horizontal   a row of 4 to 6 pixels
//   class 1  vertical     a column of 4 to 6 pixels
//   class 2  diagonal     down and to the right
//   class 3  antidiagonal up and to the right
//
// The stroke's length, place and brightness are random; every pixel gets
// noise. A Style says how the camera sees the picture: turned by quarter
// turns (clockwise), then v' = gain * v + offset. kPretrain is the data a
// model is trained on; kShifted is the fine-tuning firmware's "device": its
// camera is mounted a quarter turn off (a horizontal stroke looks vertical,
// a diagonal antidiagonal), 20 % dimmer and with a brighter background.
// The labels are the strokes' true directions, so a model trained on
// kPretrain is mostly wrong on kShifted.
#ifndef BURTORCH_DATA_SHAPES_DATA_HPP
#define BURTORCH_DATA_SHAPES_DATA_HPP

#include <cstddef>
#include <cstdint>

namespace shapes_data {

constexpr std::uint32_t kSide = 8U;                 // pixels per row and column
constexpr std::uint32_t kPixels = kSide * kSide;    // row-major, one channel
constexpr std::uint32_t kClasses = 4U;              // stroke directions
constexpr std::uint64_t kSeed = 1998U;              // the default data's stream

// How the camera sees a picture.
struct Style {
  std::uint32_t quarter_turns;  // clockwise rotation, 0..3
  double gain;                  // v' = gain * v + offset
  double offset;
  double noise;                 // standard deviation of the pixel noise
};
constexpr Style kPretrain{0U, 1.0, 0.0, 0.15};
constexpr Style kShifted{1U, 0.8, 0.1, 0.15};

// splitmix64: picture i of a stream is drawn from its own generator, so any
// picture can be made without the ones before it.
class Draws {
 public:
  explicit Draws(std::uint64_t seed) noexcept : s_(seed) {}
  std::uint64_t next() noexcept {
    s_ += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = s_;
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31U);
  }
  // Uniform in [0, 1), 53 bits.
  double uniform() noexcept { return static_cast<double>(next() >> 11U) * (1.0 / 9007199254740992.0); }
  // Uniform integer in [0, n) (n small: the bias of the modulo is < 2^-58).
  std::uint32_t below(std::uint32_t n) noexcept { return static_cast<std::uint32_t>(next() % n); }
  // Approximately standard normal: the sum of four uniforms, centred and
  // scaled to variance 1 (Irwin-Hall; no logarithm, no square root).
  double normal() noexcept {
    const double s = uniform() + uniform() + uniform() + uniform();
    return (s - 2.0) * 1.7320508075688772;
  }

 private:
  std::uint64_t s_;
};

// Picture i of the stream `seed` seen in `style`, into out[kPixels]
// (row-major); returns its class, i % kClasses (balanced classes).
inline std::uint32_t image(std::uint64_t seed, std::uint64_t i, const Style& style, float* out) noexcept {
  Draws d((seed * 0x100000001B3ULL) ^ (i * 0x9E3779B97F4A7C15ULL));
  const std::uint32_t label = static_cast<std::uint32_t>(i % kClasses);
  double v[kPixels] = {};
  const std::uint32_t length = 4U + d.below(3U);
  const std::uint32_t room = kSide - length + 1U;  // start positions of a stroke that fits
  const double brightness = 0.7 + (0.6 * d.uniform());
  std::uint32_t row = 0U;
  std::uint32_t col = 0U;
  std::int32_t step_row = 0;
  std::int32_t step_col = 0;
  if (label == 0U) {
    row = d.below(kSide);
    col = d.below(room);
    step_col = 1;
  } else if (label == 1U) {
    row = d.below(room);
    col = d.below(kSide);
    step_row = 1;
  } else if (label == 2U) {
    row = d.below(room);
    col = d.below(room);
    step_row = 1;
    step_col = 1;
  } else {
    row = d.below(room) + (length - 1U);
    col = d.below(room);
    step_row = -1;
    step_col = 1;
  }
  for (std::uint32_t k = 0U; k < length; ++k) {
    const std::int32_t r = static_cast<std::int32_t>(row) + (step_row * static_cast<std::int32_t>(k));
    const std::int32_t c = static_cast<std::int32_t>(col) + (step_col * static_cast<std::int32_t>(k));
    v[(static_cast<std::uint32_t>(r) * kSide) + static_cast<std::uint32_t>(c)] = brightness * (0.85 + (0.3 * d.uniform()));
  }
  for (std::uint32_t p = 0U; p < kPixels; ++p) {
    v[p] += style.noise * d.normal();
  }
  // Turned clockwise by quarter turns: out(r, c) = in(side - 1 - c, r) per turn.
  for (std::uint32_t r = 0U; r < kSide; ++r) {
    for (std::uint32_t c = 0U; c < kSide; ++c) {
      std::uint32_t sr = r;
      std::uint32_t sc = c;
      for (std::uint32_t t = 0U; t < (style.quarter_turns % 4U); ++t) {
        const std::uint32_t back = sr;
        sr = kSide - 1U - sc;
        sc = back;
      }
      out[(r * kSide) + c] = static_cast<float>((style.gain * v[(sr * kSide) + sc]) + style.offset);
    }
  }
  return label;
}

}  // namespace shapes_data

#endif  // BURTORCH_DATA_SHAPES_DATA_HPP

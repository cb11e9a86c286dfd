// SPDX-License-Identifier: Apache-2.0
// The project's own training data, generated (no file, no network, no
// download): pronounceable names from a seeded syllable grammar for the
// makemore MLP, and English-like prose from a small seeded sentence grammar
// for the GPT-like model. Header-only, heap-free and deterministic: the host
// trainers, the firmware and the tests all get the same words and text.
// Written for libburtorch; the word lists below are original.
#ifndef BURTORCH_DATA_DEFAULT_DATA_HPP
#define BURTORCH_DATA_DEFAULT_DATA_HPP

#include <cstddef>
#include <cstdint>

namespace default_data {

// A tiny PCG-style generator, independent of the library's Rng so that the
// data never changes when the library's generator does.
class Lcg {
 public:
  explicit Lcg(std::uint64_t seed) noexcept : s_((seed * 6364136223846793005ULL) + 1442695040888963407ULL) {}
  std::uint32_t next() noexcept {
    s_ = (s_ * 6364136223846793005ULL) + 1442695040888963407ULL;
    const auto x = static_cast<std::uint32_t>(((s_ >> 18U) ^ s_) >> 27U);
    const auto r = static_cast<unsigned>(s_ >> 59U);
    return (x >> r) | (x << ((32U - r) & 31U));
  }
  std::uint32_t below(std::uint32_t n) noexcept { return next() % n; }

 private:
  std::uint64_t s_;
};

constexpr std::uint64_t kNamesSeed = 2003U;  // Bengio et al.
constexpr std::size_t kMaxNameLength = 14U;

namespace detail {
constexpr const char* kOnsets[] = {"b",  "d",  "f",  "g",  "h",  "j",  "k",  "l",  "m",  "n",  "p",  "r",
                                   "s",  "t",  "v",  "w",  "z",  "br", "dr", "gr", "kr", "tr", "st", "sh",
                                   "ch", "th", "fl", "cl", "el", "m",  "n",  "l",  "r",  "s",  "t",  "k"};
constexpr const char* kVowels[] = {"a", "e", "i", "o", "u", "a", "e", "i", "o", "a",
                                   "e", "ai", "ea", "ie", "ou", "y", "a", "e", "i", "o"};
constexpr const char* kCodas[] = {"", "", "", "", "n", "r", "l", "s", "m", "th", "nd", "x", "rt", "ck"};
constexpr const char* kEndings[] = {"a", "a", "ia", "en", "on", "el", "ine", "ella", "an", "ie",
                                    "o", "us", "ah", "yn", "er", "is", "ette", "io", "ara", "ley"};

template <std::size_t N>
constexpr std::uint32_t count(const char* const (&)[N]) noexcept {
  return static_cast<std::uint32_t>(N);
}

inline std::size_t append(char* out, std::size_t at, std::size_t cap, const char* piece) noexcept {
  for (std::size_t i = 0U; (piece[i] != '\0') && (at < cap); ++i) {
    out[at++] = piece[i];
  }
  return at;
}
}  // namespace detail

// Writes name number `index` (lowercase a-z, 2..kMaxNameLength letters) to
// out (at least kMaxNameLength + 1 chars, NUL-terminated); returns its length.
inline std::size_t name(std::size_t index, char* out) noexcept {
  using namespace detail;
  Lcg g(kNamesSeed + (static_cast<std::uint64_t>(index) * 7919U));
  const std::uint32_t syllables = 1U + g.below(3U);
  std::size_t n = 0U;
  for (std::uint32_t s = 0U; s < syllables; ++s) {
    if ((s > 0U) || (g.below(5U) != 0U)) {
      n = append(out, n, kMaxNameLength, kOnsets[g.below(count(kOnsets))]);
    }
    n = append(out, n, kMaxNameLength, kVowels[g.below(count(kVowels))]);
    if ((s + 1U) < syllables) {
      n = append(out, n, kMaxNameLength, kCodas[g.below(count(kCodas))]);
    }
  }
  if (g.below(3U) != 0U) {
    n = append(out, n, kMaxNameLength, kEndings[g.below(count(kEndings))]);
  } else {
    n = append(out, n, kMaxNameLength, kCodas[g.below(count(kCodas))]);
  }
  if (n < 2U) {
    n = append(out, n, kMaxNameLength, "ra");
  }
  out[n] = '\0';
  return n;
}

// Prose: sentence `index` of the default text, ending in ". " or ".\n".
constexpr std::uint64_t kTextSeed = 2017U;  // Vaswani et al.
constexpr std::size_t kMaxSentenceLength = 160U;

namespace detail {
constexpr const char* kNouns[] = {"miller", "river",  "lantern", "garden", "sailor", "harbor", "orchard",
                                  "weaver", "bridge", "candle",  "meadow", "baker",  "tower",  "raven",
                                  "hill",   "wind",   "window",  "stone",  "child",  "keeper"};
constexpr const char* kAdjectives[] = {"old",   "quiet", "bright", "small", "cold",  "green",
                                       "tired", "proud", "gentle", "dark",  "early", "patient"};
constexpr const char* kVerbs[] = {"walks", "waits", "sings", "rests", "turns", "listens", "wanders", "sleeps"};
constexpr const char* kPrepositions[] = {"to", "by", "near", "under", "beyond", "across", "toward"};
constexpr const char* kOpenings[] = {"In the morning", "At dusk", "Every winter", "Long ago", "Now", "Still"};
constexpr const char* kClauses[] = {"and the bells answer", "while the fire burns low", "as the tide comes in",
                                    "but nobody speaks", "and the night grows long", "for the day is done"};
}  // namespace detail

inline std::size_t sentence(std::size_t index, char* out) noexcept {
  using namespace detail;
  Lcg g(kTextSeed + (static_cast<std::uint64_t>(index) * 104729U));
  constexpr std::size_t cap = kMaxSentenceLength - 2U;
  std::size_t n = 0U;
  const bool opening = g.below(3U) == 0U;
  if (opening) {
    n = append(out, n, cap, kOpenings[g.below(count(kOpenings))]);
    n = append(out, n, cap, " the ");
  } else {
    n = append(out, n, cap, "The ");
  }
  n = append(out, n, cap, kAdjectives[g.below(count(kAdjectives))]);
  n = append(out, n, cap, " ");
  n = append(out, n, cap, kNouns[g.below(count(kNouns))]);
  n = append(out, n, cap, " ");
  n = append(out, n, cap, kVerbs[g.below(count(kVerbs))]);
  n = append(out, n, cap, " ");
  n = append(out, n, cap, kPrepositions[g.below(count(kPrepositions))]);
  n = append(out, n, cap, " the ");
  if (g.below(2U) == 0U) {
    n = append(out, n, cap, kAdjectives[g.below(count(kAdjectives))]);
    n = append(out, n, cap, " ");
  }
  n = append(out, n, cap, kNouns[g.below(count(kNouns))]);
  if (g.below(3U) == 0U) {
    n = append(out, n, cap, ", ");
    n = append(out, n, cap, kClauses[g.below(count(kClauses))]);
  }
  out[n++] = (g.below(6U) == 0U) ? '!' : '.';
  out[n++] = (g.below(4U) == 0U) ? '\n' : ' ';
  out[n] = '\0';
  return n;
}

}  // namespace default_data

#endif  // BURTORCH_DATA_DEFAULT_DATA_HPP

// SPDX-License-Identifier: Apache-2.0
// The text of the sequence benchmarks (bench_gpt, bench_gru): its
// vocabulary (the distinct bytes in ascending order, as the PyTorch side
// builds it) and windows of tokens read on demand with pread, so the text
// costs the process no memory (the file stays in the kernel's page cache).
// Without a file: 20,000 generated characters of 65 symbols.
#ifndef BURTORCH_BENCH_CORPUS_HPP
#define BURTORCH_BENCH_CORPUS_HPP

#include <cstddef>
#include <cstdint>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include "bench_util.hpp"

namespace bench {

// Token windows of a text file (or of generated text), read on demand.
struct Corpus {
  int fd = -1;
  std::string generated;
  std::size_t size = 0U;
  std::uint8_t code[256] = {};
  unsigned vocab = 0U;

  Corpus() = default;
  Corpus(const Corpus&) = delete;
  Corpus& operator=(const Corpus&) = delete;
  ~Corpus() {
    if (fd >= 0) {
      ::close(fd);
    }
  }

  bool open(const char* path) {
    bool present[256] = {};
    if (path == nullptr) {
      bench::Sampler s(11U);
      for (int i = 0; i < 20000; ++i) {
        generated.push_back(static_cast<char>(' ' + s.below(65U)));
      }
      for (char c : generated) {
        present[static_cast<unsigned char>(c)] = true;
      }
      size = generated.size();
    } else {
      fd = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        return false;
      }
      unsigned char chunk[65536];
      ssize_t got = 0;
      while ((got = ::read(fd, chunk, sizeof(chunk))) > 0) {
        for (ssize_t i = 0; i < got; ++i) {
          present[chunk[i]] = true;
        }
        size += static_cast<std::size_t>(got);
      }
    }
    // Vocabulary: the distinct bytes in ascending order (as the PyTorch side).
    for (unsigned c = 0U; c < 256U; ++c) {
      if (present[c]) {
        code[c] = static_cast<std::uint8_t>(vocab++);
      }
    }
    return size >= 64U;
  }

  // The tokens of characters [at, at + count).
  bool read(std::size_t at, std::size_t count, std::uint8_t* out) const {
    if (fd < 0) {
      for (std::size_t i = 0U; i < count; ++i) {
        out[i] = code[static_cast<unsigned char>(generated[at + i])];
      }
      return true;
    }
    if (::pread(fd, out, count, static_cast<off_t>(at)) != static_cast<ssize_t>(count)) {
      return false;
    }
    for (std::size_t i = 0U; i < count; ++i) {
      out[i] = code[out[i]];
    }
    return true;
  }
};

}  // namespace bench

#endif  // BURTORCH_BENCH_CORPUS_HPP

// SPDX-License-Identifier: Apache-2.0
// The small image CNN of burtorch-cnn (nn::SmallCnn: Conv2d(1 -> C/2, 3x3,
// stride 2, padding 1) ReLU, Conv2d(C/2 -> C, same) ReLU, global average
// pool, Linear(C -> 4)) in FP32: time per SGD step. Batch 1: one picture
// at a time (forward, backward, rewind; then one update); larger batches by
// lane batches of L pictures per sweep (nn::lane_batch, --lanes L; 1: the
// per-picture serial batch; default the build's vector width). Data: 8x8
// pictures in burtorch-cnn's --data format; without --data the generated
// strokes of data/shapes_data.hpp (2,000 pictures).
//
// Usage: bench_cnn --hidden C --batch B [--steps N] [--warmup W]
//                  [--data FILE] [--lr X] [--seed S] [--lanes L]
//        bench_cnn --write-data FILE   (writes the generated pictures as
//                                       --data text and exits)
// Prints READY once data and model are initialised, then one JSON line.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_train.hpp"
#include "shapes_data.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

constexpr std::uint32_t kPixels = shapes_data::kPixels;
constexpr std::size_t kGenerated = 2000U;

struct Data {
  std::vector<float> pixels;
  std::vector<std::uint32_t> labels;
  std::uint32_t classes = 0U;
};

void generate(Data& d) {
  float x[kPixels];
  for (std::size_t i = 0U; i < kGenerated; ++i) {
    d.labels.push_back(shapes_data::image(shapes_data::kSeed, i, shapes_data::kPretrain, x));
    d.pixels.insert(d.pixels.end(), x, x + kPixels);
  }
}

// burtorch-cnn's --data text: per line the class, then 64 pixels, separated
// by commas or blanks (checked here only for the counts).
bool load(const char* path, Data& d) {
  std::string text;
  if (!bench::read_file(path, text)) {
    return false;
  }
  std::size_t at = 0U;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    end = (end == std::string::npos) ? text.size() : end;
    std::string line = text.substr(at, end - at);
    at = end + 1U;
    for (char& c : line) {
      c = (c == ',') ? ' ' : c;
    }
    const char* p = line.c_str();
    char* next = nullptr;
    std::vector<double> v;
    for (double x = std::strtod(p, &next); next != p; x = std::strtod(p, &next)) {
      v.push_back(x);
      p = next;
    }
    if (v.empty()) {
      continue;
    }
    if ((v.size() != kPixels + 1U) || !(v[0] >= 0.0) || (v[0] > 9.0)) {
      return false;
    }
    d.labels.push_back(static_cast<std::uint32_t>(v[0]));
    for (std::size_t k = 1U; k < v.size(); ++k) {
      d.pixels.push_back(static_cast<float>(v[k]));
    }
  }
  return !d.labels.empty();
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Flags flags(argc, argv);
  const char* write = flags.get("--write-data", nullptr);
  if (write != nullptr) {
    Data d;
    generate(d);
    std::FILE* f = std::fopen(write, "w");
    if (f == nullptr) {
      std::fprintf(stderr, "bench_cnn: cannot write %s\n", write);
      return 1;
    }
    for (std::size_t i = 0U; i < d.labels.size(); ++i) {
      std::fprintf(f, "%u", d.labels[i]);
      for (std::uint32_t k = 0U; k < kPixels; ++k) {
        std::fprintf(f, ",%.9g", static_cast<double>(d.pixels[(i * kPixels) + k]));
      }
      std::fprintf(f, "\n");
    }
    return (std::fclose(f) == 0) ? 0 : 1;
  }
  bench::StepOptions o;
  if (!bench::parse_step_options(flags, "bench_cnn",
                                 "bench_cnn --hidden C --batch B [--steps N] [--warmup W] [--data FILE] [--lr X] "
                                 "[--lanes L]",
                                 {"--hidden"}, 0.1, o)) {
    return 2;
  }
  const double t_start = bench::now_seconds();
  const long hidden = flags.get_long("--hidden", 8);
  if ((hidden < 2) || (hidden > 128) || ((hidden % 2) != 0)) {
    std::fprintf(stderr, "bench_cnn: --hidden must be even, 2 to 128\n");
    return 2;
  }
  Data data;
  if (o.data == nullptr) {
    generate(data);
  } else if (!load(o.data, data)) {
    std::fprintf(stderr, "bench_cnn: cannot read %s\n", o.data);
    return 1;
  }
  for (std::uint32_t y : data.labels) {
    data.classes = (y + 1U > data.classes) ? (y + 1U) : data.classes;
  }
  const std::uint32_t n_samples = static_cast<std::uint32_t>(data.labels.size());

  nn::CnnOptions config;
  config.conv1 = static_cast<bt::Index>(hidden / 2);
  config.conv2 = static_cast<bt::Index>(hidden);
  config.classes = data.classes;
  static nn::SmallCnn<float> model;
  bench::Sampler sampler(o.seed + 1U);
  std::vector<std::uint32_t> picked(static_cast<std::size_t>(o.batch));
  bench::StepRun run;
  const int failed = bench::time_steps(
      "bench_cnn", model, config, o, t_start,
      [&](std::size_t i) {
        picked[i] = sampler.below(n_samples);
        return true;
      },
      [&](bt::Tape<float>& tp, std::size_t i) {
        const std::uint32_t k = picked[i];
        return model.loss(tp, &data.pixels[static_cast<std::size_t>(k) * kPixels], data.labels[k]);
      },
      // Lane l: picture first + l; the lanes past the batch's end repeat its first picture.
      [&](auto& lanes, const bt::LaneParams<float>& p, std::size_t first, std::size_t active) {
        const float* pixels[bench::kMaxLanes];
        bt::Index labels[bench::kMaxLanes];
        for (std::size_t l = 0U; l < bench::kMaxLanes; ++l) {
          const std::uint32_t k = picked[first + ((l < active) ? l : 0U)];
          pixels[l] = &data.pixels[static_cast<std::size_t>(k) * kPixels];
          labels[l] = data.labels[k];
        }
        return model.loss(lanes, p, pixels, labels);
      },
      run);
  if (failed != 0) {
    return failed;
  }
  std::printf("{\"bench\":\"cnn\",\"impl\":\"burtorch\",\"hidden\":%ld,\"batch\":%ld,\"lanes\":%ld,\"params\":%zu,"
              "\"steps\":%ld,",
              hidden, o.batch, o.lanes, run.params, o.steps);
  bench::print_step_fields(run);
  std::printf(",\"first_loss\":%.5f,\"last_loss\":%.5f,\"data_samples\":%u", run.first_loss, run.last_loss,
              n_samples);
  bench::end_json(run.times_ms);
  return 0;
}

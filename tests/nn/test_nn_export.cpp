// SPDX-License-Identifier: Apache-2.0
// Host tool for tools/golden/nn/make_trajectory.py: writes, for each
// trajectory setup of test_nn_trajectory.hpp, the initial parameters (our
// PRNG's, as little-endian doubles) and the samples of every step (bytes),
// so PyTorch starts from the same weights and sees the same data.
//   test_nn_export DIR   ->  DIR/<case>.params.f64, DIR/<case>.samples.u8
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "test_nn_trajectory.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

bool write(const std::string& path, const void* data, std::size_t bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return false;
  }
  const bool ok = std::fwrite(data, 1U, bytes, f) == bytes;
  return (std::fclose(f) == 0) && ok;
}

template <class Model, class Config>
bool export_params(const std::string& path, const Config& c) {
  const nn::MemoryPlan plan = Model::plan(c, nn::OptimizerKind::kSgd);
  std::vector<unsigned char> buffer(plan.tape_bytes + 64U);
  void* at = buffer.data();
  std::size_t space = buffer.size();
  at = std::align(32U, plan.tape_bytes, at, space);
  bt::Tape<double> tape(at, plan.tape_bytes, plan.nodes, plan.slots, plan.parameters);
  static Model model;
  nn::Rng rng(trajectory::kInitSeed);
  if (!model.create(tape, c, rng)) {
    return false;
  }
  const bt::View params = model.params();
  return write(path, tape.values() + params.first, params.count * sizeof(double));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: test_nn_export DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  bool ok = export_params<nn::MakemoreMlp<double>>(dir + "/mlp4.params.f64", trajectory::mlp_config(4U)) &&
            export_params<nn::MakemoreMlp<double>>(dir + "/mlp64.params.f64", trajectory::mlp_config(64U)) &&
            export_params<nn::Gpt<double>>(dir + "/gpt.params.f64", trajectory::kGpt);
  // One sample stream per model family (the same for SGD and Adam runs).
  std::vector<std::uint8_t> mlp;
  nn::Rng r(trajectory::kDataSeed);
  for (int s = 0; s < trajectory::kSteps; ++s) {
    for (std::size_t b = 0U; b < trajectory::kMlpBatch; ++b) {
      std::uint8_t row[trajectory::kContext + 1U];
      trajectory::mlp_sample(r, row, &row[trajectory::kContext]);
      mlp.insert(mlp.end(), row, row + sizeof(row));
    }
  }
  std::vector<std::uint8_t> gpt;
  nn::Rng g(trajectory::kDataSeed);
  for (int s = 0; s < trajectory::kSteps; ++s) {
    for (std::size_t b = 0U; b < trajectory::kGptBatch; ++b) {
      std::uint8_t row[9];
      trajectory::gpt_sample(g, row);
      gpt.insert(gpt.end(), row, row + sizeof(row));
    }
  }
  ok = ok && write(dir + "/mlp.samples.u8", mlp.data(), mlp.size()) &&
       write(dir + "/gpt.samples.u8", gpt.data(), gpt.size());
  std::printf("%s\n", ok ? "exported" : "export failed");
  return ok ? 0 : 1;
}

// SPDX-License-Identifier: Apache-2.0
// A product that keeps its training set in C arrays (as many firmware
// teams do, under a deviation of their own) and trains a 2-4-1 regression
// on it with nn::serial_batch, one sample of the table at a time. Its loss
// is nn::mse of the model's one output against the sample's target, by
// value and by pointer with the count. A static analyser cannot know how
// many outputs a layer returns (its options are read when it runs): with a
// bare pointer into the table, clang-analyzer follows mse past the table's
// end and reports a garbage argument in nn/losses.hpp. The two forms here
// say how many targets there are, and tools/check.d/40-compliance-kit.sh
// requires no finding in libburtorch's files on this unit (its own C arrays
// are reported as the product's).
#include <cstddef>

#include "burtorch/burtorch.hpp"
#include "burtorch/nn/nn.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

constexpr nn::LinearOptions kHidden{2U, 4U, nn::Activation::kTanh};
constexpr nn::LinearOptions kOutput{4U, 1U, nn::Activation::kIdentity};
constexpr std::size_t kParameters = nn::Linear<float>::parameters(kHidden) + nn::Linear<float>::parameters(kOutput);
constexpr std::size_t kSampleNodes =
    2U + nn::Linear<float>::nodes(kHidden) + nn::Linear<float>::nodes(kOutput) + (kOutput.out + 1U);
constexpr std::size_t kSampleSlots = nn::Linear<float>::view_slots(kHidden) + nn::Linear<float>::view_slots(kOutput);
constexpr nn::MemoryPlan kPlan = nn::make_plan<float>(kParameters, kSampleNodes, kSampleSlots, nn::OptimizerKind::kSgd);
using Memory = nn::TrainingMemory<float, kPlan>;

Memory& training_memory() {
  static Memory memory;
  return memory;
}

// Ten epochs of SGD over the table, each sample's loss against its target
// through a pointer with the count.
float train_counted() {
  const float xs[4][2] = {{0.0F, 0.0F}, {0.0F, 1.0F}, {1.0F, 0.0F}, {1.0F, 1.0F}};
  const float ys[4] = {0.0F, 1.0F, 1.0F, 0.0F};
  Memory& memory = training_memory();
  memory.tape.reset();
  nn::Rng rng(1U);
  nn::Linear<float> h;
  nn::Linear<float> o;
  if (!h.create(memory.tape, kHidden, rng) || !o.create(memory.tape, kOutput, rng)) {
    return 1.0F;
  }
  nn::OptimizerOptions<float> sgd;
  sgd.kind = nn::OptimizerKind::kSgd;
  sgd.lr = 0.2F;
  nn::Optimizer<float> opt = memory.optimizer(sgd);
  const bt::View params{h.params().first, h.params().count + o.params().count};
  float loss = 0.0F;
  for (int epoch = 0; epoch < 10; ++epoch) {
    loss = nn::serial_batch<nn::OptimizerKind::kSgd>(
        memory.tape, params, 4U,
        [&](bt::Tape<float>& t, std::size_t i) {
          const bt::Value<float> x0 = t.input(xs[i][0]);
          static_cast<void>(t.input(xs[i][1]));
          const bt::View y = o.forward(t, h.forward(t, bt::View{x0.index(), 2U}));
          return nn::mse(t, y, &ys[i], 1U);
        },
        opt);
  }
  return loss;
}

}  // namespace

// The same, each sample's loss against its target by value.
int main() {
  const float xs[4][2] = {{0.0F, 0.0F}, {0.0F, 1.0F}, {1.0F, 0.0F}, {1.0F, 1.0F}};
  const float ys[4] = {0.0F, 1.0F, 1.0F, 0.0F};
  Memory& memory = training_memory();
  nn::Rng rng(1U);
  nn::Linear<float> h;
  nn::Linear<float> o;
  if (!h.create(memory.tape, kHidden, rng) || !o.create(memory.tape, kOutput, rng)) {
    return 1;
  }
  nn::OptimizerOptions<float> sgd;
  sgd.kind = nn::OptimizerKind::kSgd;
  sgd.lr = 0.2F;
  nn::Optimizer<float> opt = memory.optimizer(sgd);
  const bt::View params{h.params().first, h.params().count + o.params().count};
  float loss = 0.0F;
  for (int epoch = 0; epoch < 10; ++epoch) {
    loss = nn::serial_batch<nn::OptimizerKind::kSgd>(
        memory.tape, params, 4U,
        [&](bt::Tape<float>& t, std::size_t i) {
          const bt::Value<float> x0 = t.input(xs[i][0]);
          static_cast<void>(t.input(xs[i][1]));
          const bt::View y = o.forward(t, h.forward(t, bt::View{x0.index(), 2U}));
          return nn::mse(t, y, ys[i]);
        },
        opt);
  }
  // Both runs start from the same initialisation: the same loss.
  const float counted = train_counted();
  return ((loss < 1.0F) && (counted == loss)) ? 0 : 1;
}

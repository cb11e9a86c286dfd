// SPDX-License-Identifier: Apache-2.0
// Uses the imported model as a user would: its plan sizes the memory, the
// head is fine-tuned by SGD on one sample until the sample is classified
// as its target; prints the model's sizes and the loss before and after.
#include <burtorch/port/file.hpp>
#include <burtorch/port/port.hpp>
#include <burtorch/tools/checkpoint.hpp>

#include <cstddef>

#include "model.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {
constexpr nn::MemoryPlan kPlan = user_model::Model::plan(nn::OptimizerKind::kSgd);
nn::TrainingMemory<user_model::Real, kPlan> g_memory;

void print(const char* label, double value) {
  char text[32];
  const std::size_t n = bt::format_double(value, text, sizeof(text), 6);
  bt::port::write(label);
  bt::port::write(text, n);
}
}  // namespace

int main() {
  bt::Tape<user_model::Real>& tape = g_memory.tape;
  user_model::Model model;
  if (!model.create(tape)) {
    bt::port::write("create failed\n");
    return 1;
  }
  user_model::Real x[user_model::kInputSize] = {};
  for (bt::Index k = 0U; k < user_model::kInputSize; ++k) {
    x[k] = static_cast<user_model::Real>((static_cast<int>(k % 7U) - 3)) / 3.0F;
  }
  nn::OptimizerOptions<user_model::Real> sgd;
  sgd.kind = nn::OptimizerKind::kSgd;
  sgd.lr = 0.1F;
  nn::Optimizer<user_model::Real> optimizer = g_memory.optimizer(sgd);
  user_model::Real first = 0.0F;
  user_model::Real last = 0.0F;
  for (int step = 0; step < 20; ++step) {
    const user_model::Real loss = nn::serial_batch(tape, model.params(), 1U, [&](bt::Tape<user_model::Real>& t, std::size_t) {
      return model.loss(t, x, 1U);
    });
    if ((optimizer.step(tape, model.params()) != bt::Status::kOk) || !(loss == loss)) {
      bt::port::write("training failed\n");
      return 1;
    }
    first = (step == 0) ? loss : first;
    last = loss;
  }
  print("imported: ", static_cast<double>(user_model::kInputSize));
  print(" inputs, ", static_cast<double>(user_model::kOutputSize));
  print(" outputs, trained ", static_cast<double>(user_model::Model::kParameters));
  print(" of ", static_cast<double>(user_model::Model::kModelParameters));
  bt::port::write(" parameters\n");
  print("loss ", static_cast<double>(first));
  print(" -> ", static_cast<double>(last));
  bt::port::write("\n");
  // The trained head as a checkpoint, for burtorch-import export.
  bt::port::FileWriter file;
  const bt::View p = model.params();
  const bool saved = (file.open("trained.btck", true) == bt::Status::kOk) &&
                     (bt::save_nodes(tape, p.first, p.count, false, file.sink()) == bt::Status::kOk) &&
                     (file.commit() == bt::Status::kOk);
  bt::port::write(saved ? "saved trained.btck\n" : "could not save trained.btck\n");
  return ((last < first) && saved) ? 0 : 1;
}

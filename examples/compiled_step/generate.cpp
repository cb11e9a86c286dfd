// SPDX-License-Identifier: Apache-2.0
// The build machine's half of the compiled XOR trainer: records the model
// (model.hpp) on a tape and writes its training step, xor_step.hpp and
// xor_step.cpp, into the directory given (burtorch_compile_step runs it).
#include "compile_step_main.hpp"
#include "model.hpp"

int main(int argc, char** argv) {
  const char* dir = burtorch_compile::output_dir(argc, argv);
  if (dir == nullptr) {
    return 2;
  }
  static burtorch::FixedTape<float, xor_model::kNodes, xor_model::kSlots, xor_model::kParams> tape;
  const bool ok = xor_model::record_and_write(
      tape, [dir](const burtorch::Tape<float>& t, burtorch::Mark m, burtorch::Value<float> loss,
                  const burtorch::compile::StepSpec& spec) { return burtorch_compile::write_step(dir, t, m, loss, spec); });
  return ok ? 0 : 1;
}

// SPDX-License-Identifier: Apache-2.0
// The host generator of the compiled steps test_compiled_step checks: records
// each model of models.hpp (one sample after a mark) and writes its step
// with burtorch::compile::emit_step into the directory given (run by the
// build: cmake/BurtorchCompileStep.cmake).
#include <burtorch/burtorch.hpp>

#include <cstdio>
#include <string>

#include "compile_step_main.hpp"
#include "models.hpp"

namespace bt = burtorch;
namespace cm = compile_models;

int main(int argc, char** argv) {
  const char* dir = burtorch_compile::output_dir(argc, argv);
  if (dir == nullptr) {
    return 2;
  }
  bool ok = true;
  {
    static bt::FixedTape<float, cm::Xor::kNodes, cm::Xor::kSlots, cm::Xor::kParams> tape;
    cm::Xor model;
    ok = ok && model.create(tape, 0U);
    const bt::Mark m = tape.mark();
    const float x[2] = {0.0F, 1.0F};
    const bt::Value<float> loss = model.loss(tape, x, 1.0F);
    ok = ok && burtorch_compile::write_step(dir, tape, m, loss, model.spec(m, loss));
  }
  {
    static bt::FixedTape<float, cm::Mlp::kNodes, cm::Mlp::kSlots, cm::Mlp::kParams> tape;
    cm::Mlp model;
    ok = ok && model.create(tape, 0U);
    const bt::Mark m = tape.mark();
    float x[16] = {};
    const bt::Value<float> loss = model.loss(tape, x, 0U);
    ok = ok && burtorch_compile::write_step(dir, tape, m, loss, model.spec(m, loss));
  }
  for (const std::uint32_t seed : cm::kRandomSeeds) {
    static bt::FixedTape<float, cm::Random::kNodes, cm::Random::kSlots, cm::Random::kParams> tape;
    tape.reset();
    cm::Random model;
    model.seed = seed;
    ok = ok && model.create(tape);
    const bt::Mark m = tape.mark();
    const float x[cm::Random::kInputs] = {0.25F, -0.5F, 0.75F};
    const bt::Value<float> loss = model.loss(tape, x);
    const std::string name = "random_step_" + std::to_string(seed);
    ok = ok && burtorch_compile::write_step(dir, tape, m, loss, model.spec(m, name.c_str()));
  }
  return ok ? 0 : 1;
}

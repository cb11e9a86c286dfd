// SPDX-License-Identifier: Apache-2.0
// Prints the memory-plan table of docs/training.md as this build computes
// it; tests/docs_tables.cmake checks that the document says the same.
// Lines: "<row prefix>\t<tape bytes cell>", where the prefix is the row
// from the model name to the slots and the cell is the FP64 tape (names on)
// or the FP32 tape (names off), whichever this build's configuration gives.
#include <burtorch/nn/nn.hpp>
#include <burtorch/port/port.hpp>

#include <cstddef>
#include <cstdint>

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

// 1663392 -> "1,663,392"
void write_grouped(std::uint64_t v) {
  char digits[24];
  const std::size_t n = bt::format_unsigned(v, digits, sizeof(digits));
  for (std::size_t i = 0U; i < n; ++i) {
    if ((i > 0U) && (((n - i) % 3U) == 0U)) {
      bt::port::write(",");
    }
    bt::port::write(&digits[i], 1U);
  }
}

void write_row(const char* model, const nn::MemoryPlan& p64, const nn::MemoryPlan& p32) {
  bt::port::write("| ");
  bt::port::write(model);
  bt::port::write(" | ");
  write_grouped(p64.parameters);
  bt::port::write(" | ");
  write_grouped(p64.sample_nodes);
  bt::port::write(" | ");
  write_grouped(p64.slots);
  if (p32.slots != p64.slots) {
    bt::port::write(" (FP64) / ");
    write_grouped(p32.slots);
    bt::port::write(" (FP32)");
  }
  bt::port::write(" |\t");
  write_grouped(BURTORCH_CONFIG_PARAM_NAMES ? p64.tape_bytes : p32.tape_bytes);
  bt::port::write(" B\n");
}

// docs/training.md's GRU example: GRU(4, 8) and a Linear(8, 1) head per step,
// trained by tbptt_window on windows of 6 steps; per window the carried
// state (8 leaves), 6 inputs of 4 leaves, the steps, 6 head outputs, the
// mean squared error (7 nodes).
template <class T>
nn::MemoryPlan gru_window_plan() {
  nn::GruOptions gru{};
  gru.input = 4U;
  gru.hidden = 8U;
  nn::LinearOptions head{};
  head.in = 8U;
  head.out = 1U;
  constexpr std::size_t kWindow = 6U;
  return nn::make_plan<T>(nn::GRU<T>::parameters(gru) + nn::Linear<T>::parameters(head),
                          nn::GRU<T>::window_nodes(gru, kWindow) + (kWindow * gru.input) +
                              (kWindow * nn::Linear<T>::nodes(head)) + kWindow + 1U,
                          nn::GRU<T>::window_slots(gru, kWindow) + (kWindow * nn::Linear<T>::view_slots(head)),
                          nn::OptimizerKind::kSgd);
}

}  // namespace

int main() {
  constexpr nn::OptimizerKind kSgd = nn::OptimizerKind::kSgd;
  const bt::Index widths[3] = {4U, 64U, 1024U};
  for (const bt::Index e : widths) {
    const nn::MlpConfig c{27U, 16U, 64U, e};
    const char* name = (e == 4U) ? "MLP e=4" : ((e == 64U) ? "MLP e=64" : "MLP e=1024");
    write_row(name, nn::MakemoreMlp<double>::plan(c, kSgd), nn::MakemoreMlp<float>::plan(c, kSgd));
  }
  const nn::GptConfig g{65U, 8U, 24U, 6U, 6U, 1e-5};
  write_row("GPT-like (V=65)", nn::Gpt<double>::plan(g, kSgd), nn::Gpt<float>::plan(g, kSgd));
  write_row("GRU(4, 8) + Linear(8, 1), window of 6 steps", gru_window_plan<double>(), gru_window_plan<float>());
  return 0;
}

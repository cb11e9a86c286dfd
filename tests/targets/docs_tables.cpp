// SPDX-License-Identifier: Apache-2.0
// Prints the memory-plan table of docs/training.md as this build computes
// it; tests/targets/docs_tables.cmake checks that the document says the same.
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
  return nn::make_plan<T>(nn::Gru<T>::parameters(gru) + nn::Linear<T>::parameters(head),
                          nn::Gru<T>::window_nodes(gru, kWindow) + (kWindow * gru.input) +
                              (kWindow * nn::Linear<T>::nodes(head)) + kWindow + 1U,
                          nn::Gru<T>::window_slots(gru, kWindow) + (kWindow * nn::Linear<T>::view_slots(head)),
                          nn::OptimizerKind::kSgd);
}

// docs/training.md's CNN: 16 positions of 2 channels, Conv1d(2 -> 6, k 3,
// padding 1) ReLU, MaxPool1d(2), Conv1d(6 -> 8, k 3, padding 1) ReLU,
// AvgPool1d(2), flatten, Linear(32 -> 3); per sample the 32 input leaves,
// the layers and the cross-entropy (tests/nn/test_nn_conv.cpp trains it).
template <class T>
nn::MemoryPlan cnn_plan() {
  nn::Conv1dOptions conv1{};
  conv1.in_channels = 2U;
  conv1.out_channels = 6U;
  conv1.kernel = 3U;
  conv1.padding = 1U;
  conv1.act = nn::Activation::kRelu;
  nn::Conv1dOptions conv2 = conv1;
  conv2.in_channels = 6U;
  conv2.out_channels = 8U;
  const nn::Pool1dOptions pool1{6U, 2U, 0U};
  const nn::Pool1dOptions pool2{8U, 2U, 0U};
  nn::LinearOptions head{};
  head.in = 32U;
  head.out = 3U;
  return nn::make_plan<T>(
      nn::Conv1d<T>::parameters(conv1) + nn::Conv1d<T>::parameters(conv2) + nn::Linear<T>::parameters(head),
      32U + nn::Conv1d<T>::nodes(conv1, 16U) + nn::MaxPool1d<T>::nodes(pool1, 16U) + nn::Conv1d<T>::nodes(conv2, 8U) +
          nn::AvgPool1d<T>::nodes(pool2, 8U) + nn::Linear<T>::nodes(head) + nn::kCrossEntropyNodes,
      nn::Conv1d<T>::slots(conv1, 16U) + nn::MaxPool1d<T>::slots(pool1, 16U) + nn::Conv1d<T>::slots(conv2, 8U) +
          nn::AvgPool1d<T>::slots(pool2, 8U) + nn::Linear<T>::view_slots(head),
      nn::OptimizerKind::kSgd);
}

}  // namespace

int main() {
  constexpr nn::OptimizerKind kSgd = nn::OptimizerKind::kSgd;
  const bt::Index widths[3] = {4U, 64U, 1024U};
  for (const bt::Index e : widths) {
    const nn::MlpOptions c{27U, 16U, 64U, e};
    const char* name = (e == 4U) ? "MLP e=4" : ((e == 64U) ? "MLP e=64" : "MLP e=1024");
    write_row(name, nn::MakemoreMlp<double>::plan(c, kSgd), nn::MakemoreMlp<float>::plan(c, kSgd));
  }
  const nn::GptOptions g{65U, 8U, 24U, 6U, 6U, 1e-5};
  write_row("GPT-like (V=65)", nn::Gpt<double>::plan(g, kSgd), nn::Gpt<float>::plan(g, kSgd));
  write_row("GRU(4, 8) + Linear(8, 1), window of 6 steps", gru_window_plan<double>(), gru_window_plan<float>());
  write_row("CNN: Conv1d(2, 6) MaxPool Conv1d(6, 8) AvgPool Linear(32, 3), 16 positions", cnn_plan<double>(),
            cnn_plan<float>());
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
// The numbers of docs/' blocks "checked by ctest docs_checked", as this
// build computes them: for each block a line "@ DOCUMENT NAME", then its
// numbers row by row. tests/targets/docs_checked.cmake hands the output to
// `tools/docs-numbers --verify "ctest docs_checked"`, which fails unless
// every block says exactly these numbers, in this order.
//
// Where a number describes bytes a function writes, the program writes them
// and checks the bytes first (exit 1 and a line on what differs), so the
// document, the constants and the bytes agree.
#include <burtorch/tools/checkpoint.hpp>
#include <burtorch/core/handles.hpp>
#include <burtorch/nn/nn.hpp>
#include <burtorch/port/port.hpp>
#include <burtorch/tools/stream.hpp>
#include <burtorch/core/tape.hpp>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

int failures = 0;

void fail(const char* what) {
  bt::port::write("docs_checked: ");
  bt::port::write(what);
  bt::port::write("\n");
  ++failures;
}

void expect(bool ok, const char* what) {
  if (!ok) {
    fail(what);
  }
}

// 1663392 -> "1,663,392", as the documents write numbers.
void number(std::uint64_t v) {
  char digits[24];
  const std::size_t n = bt::format_unsigned(v, digits, sizeof(digits));
  for (std::size_t i = 0U; i < n; ++i) {
    if ((i > 0U) && (((n - i) % 3U) == 0U)) {
      bt::port::write(",");
    }
    bt::port::write(&digits[i], 1U);
  }
  bt::port::write(" ");
}

void block(const char* doc, const char* name) {
  bt::port::write("@ ");
  bt::port::write(doc);
  bt::port::write(" ");
  bt::port::write(name);
  bt::port::write("\n");
}

void row() { bt::port::write("\n"); }

// --- docs/checkpoint-format.md -------------------------------------------

constexpr std::size_t kFileBytes = 512U;

struct File {
  std::uint8_t data[kFileBytes];
  std::size_t size;
};

File save(bt::ScalarKind kind, const bt::Section* sections, std::size_t count) {
  File f{};
  bt::MemoryStream m{f.data, sizeof(f.data), 0U, 0U};
  expect(bt::save_checkpoint(bt::memory_sink(&m), kind, sections, count) == bt::Status::kOk, "save_checkpoint failed");
  f.size = m.size;
  return f;
}

std::uint64_t little_endian(const std::uint8_t* p, std::size_t bytes) {
  std::uint64_t v = 0U;
  for (std::size_t i = bytes; i > 0U; --i) {
    v = (v << 8U) | p[i - 1U];
  }
  return v;
}

void checkpoint_format() {
  // The layout table, row by row, from a file of one float64 section.
  double value = 1.5;
  const bt::Section one{&value, sizeof(value), bt::kTagValues};
  const File f = save(bt::ScalarKind::kFloat64, &one, 1U);
  constexpr std::size_t kMagic = 0U;
  constexpr std::size_t kVersion = 4U;
  constexpr std::size_t kKind = 5U;
  constexpr std::size_t kSize = 6U;
  constexpr std::size_t kOrder = 7U;
  constexpr std::size_t kCount = 8U;
  constexpr std::size_t kCountBytes = bt::kCheckpointHeaderBytes - kCount;
  constexpr std::size_t kTable = bt::kCheckpointHeaderBytes;
  const std::size_t payload = kTable + bt::kCheckpointEntryBytes;
  expect(f.size == bt::checkpoint_overhead(1U) + sizeof(value), "file size");
  expect(std::memcmp(&f.data[kMagic], "BTCK", 4U) == 0, "magic at 0");
  expect(f.data[kVersion] == bt::kCheckpointVersion, "version byte");
  expect(f.data[kOrder] == 1U, "byte order 1 on this little-endian host");
  expect(little_endian(&f.data[kCount], kCountBytes) == 1U, "section count");
  expect(little_endian(&f.data[kTable], 4U) == bt::kTagValues, "tag");
  expect(little_endian(&f.data[kTable + 4U], 8U) == sizeof(value), "section size");
  expect(std::memcmp(&f.data[payload], &value, sizeof(value)) == 0, "payload");
  expect(little_endian(&f.data[f.size - bt::kCheckpointCrcBytes], bt::kCheckpointCrcBytes) ==
             bt::crc32(0U, f.data, f.size - bt::kCheckpointCrcBytes),
         "CRC at the end");
  // Kind and scalar size as each kind's file records them.
  const bt::ScalarKind kinds[3] = {bt::ScalarKind::kBytes, bt::ScalarKind::kFloat32, bt::ScalarKind::kFloat64};
  const std::size_t sizes[3] = {1U, sizeof(float), sizeof(double)};
  for (std::size_t k = 0U; k < 3U; ++k) {
    const File g = save(kinds[k], &one, 1U);
    expect(g.data[kKind] == static_cast<std::uint8_t>(kinds[k]), "scalar kind byte");
    expect(g.data[kSize] == sizes[k], "scalar size byte");
  }
  // The other byte order (2, written by a big-endian host) is refused here.
  File other = f;
  constexpr std::uint8_t kBigEndian = 2U;
  other.data[kOrder] = kBigEndian;
  const std::uint32_t crc = bt::crc32(0U, other.data, other.size - bt::kCheckpointCrcBytes);
  for (std::size_t i = 0U; i < bt::kCheckpointCrcBytes; ++i) {
    other.data[other.size - bt::kCheckpointCrcBytes + i] = static_cast<std::uint8_t>(crc >> (8U * i));
  }
  bt::MemoryStream in{other.data, sizeof(other.data), other.size, 0U};
  double target = 0.0;
  const bt::Section back{&target, sizeof(target), bt::kTagValues};
  expect(bt::load_checkpoint(bt::memory_source(&in), bt::ScalarKind::kFloat64, &back, 1U) == bt::Status::kBadFormat,
         "a file of the other byte order is refused");

  block("docs/checkpoint-format.md", "framing");
  const File empty = save(bt::ScalarKind::kFloat64, nullptr, 0U);
  expect(empty.size == bt::checkpoint_overhead(0U), "an empty checkpoint's size");
  number(bt::checkpoint_overhead(0U));
  number(bt::kCheckpointEntryBytes);
  row();

  block("docs/checkpoint-format.md", "layout");
  number(kMagic);
  number(4U);
  row();
  number(kVersion);
  number(1U);
  number(bt::kCheckpointVersion);
  row();
  number(kKind);
  number(1U);
  for (std::size_t k = 0U; k < 3U; ++k) {
    number(static_cast<std::uint64_t>(kinds[k]));
  }
  row();
  number(kSize);
  number(1U);
  for (std::size_t k = 0U; k < 3U; ++k) {
    number(sizes[k]);
  }
  row();
  number(kOrder);
  number(1U);
  number(1U);
  number(kBigEndian);
  row();
  number(kCount);
  number(kCountBytes);
  row();
  number(kTable);
  number(bt::kCheckpointEntryBytes);
  row();
  number(kTable);
  number(bt::kCheckpointEntryBytes);
  row();
  number(bt::kCheckpointCrcBytes);
  number(bt::kCheckpointCrcBytes);
  row();

  // The tiny graph's seven values, saved as the paper does, and the overhead table.
  bt::FixedTape<double, 16> tape;
  for (int i = 0; i < 7; ++i) {
    (void)tape.leaf(static_cast<double>(i) + 0.5);
  }
  constexpr bt::Index kSeven = 7U;
  std::uint8_t buffer[kFileBytes];
  bt::MemoryStream m{buffer, sizeof(buffer), 0U, 0U};
  expect(bt::save_nodes(tape, 0U, kSeven, false, bt::memory_sink(&m)) == bt::Status::kOk, "save_nodes");
  const std::size_t values64 = m.size;
  m = bt::MemoryStream{buffer, sizeof(buffer), 0U, 0U};
  expect(bt::save_nodes(tape, 0U, kSeven, true, bt::memory_sink(&m)) == bt::Status::kOk, "save_nodes with grads");
  const std::size_t grads64 = m.size;
  bt::FixedTape<float, 16> tape32;
  for (int i = 0; i < 7; ++i) {
    (void)tape32.leaf(static_cast<float>(i) + 0.5F);
  }
  m = bt::MemoryStream{buffer, sizeof(buffer), 0U, 0U};
  expect(bt::save_nodes(tape32, 0U, kSeven, false, bt::memory_sink(&m)) == bt::Status::kOk, "save_nodes float");
  const std::size_t values32 = m.size;
  double params[5] = {};
  double moments[10] = {};
  std::uint64_t counters[2] = {};
  const bt::Section three[3] = {{params, sizeof(params), bt::kTagValues},
                                {moments, sizeof(moments), bt::make_tag('O', 'P', 'T', 'M')},
                                {counters, sizeof(counters), bt::make_tag('T', 'R', 'N', 'R')}};
  const std::size_t three_payload = sizeof(params) + sizeof(moments) + sizeof(counters);
  const File f3 = save(bt::ScalarKind::kFloat64, three, 3U);
  expect(f3.size == bt::checkpoint_bytes(three, 3U), "checkpoint_bytes of three sections");

  block("docs/checkpoint-format.md", "example");
  number(kSeven);
  number(kSeven * sizeof(double));
  number(values64);
  row();

  block("docs/checkpoint-format.md", "overhead");
  number(kSeven);
  number(kSeven * sizeof(double));
  number(values64);
  number(values64 - (kSeven * sizeof(double)));
  row();
  number(kSeven);
  number(kSeven * sizeof(float));
  number(values32);
  number(values32 - (kSeven * sizeof(float)));
  row();
  number(kSeven);
  number(2U);
  number(2U * kSeven * sizeof(double));
  number(grads64);
  number(grads64 - (2U * kSeven * sizeof(double)));
  row();
  number(3U);
  number(f3.size - three_payload);
  number(f3.size - three_payload);
  row();
  number(0U);
  number(empty.size);
  number(empty.size);
  row();
}

// --- docs/design.md ---------------------------------------------------------

constexpr std::size_t kPointer32 = sizeof(std::uint32_t);  // a pointer on a 32-bit MCU

template <class T>
constexpr std::size_t per_node(bool names, std::size_t pointer) {
  return (2U * sizeof(T)) + sizeof(bt::Operands) + sizeof(bt::Op) + (names ? pointer : 0U);
}

template <class T>
constexpr std::size_t rounded(std::size_t bytes) {
  return ((bytes + bt::Tape<T>::kArrayAlign - 1U) / bt::Tape<T>::kArrayAlign) * bt::Tape<T>::kArrayAlign;
}

// bytes_required as a build without parameter names gives it.
template <class T>
std::size_t without_names(std::size_t nodes, std::size_t slots, std::size_t params) {
  const std::size_t built = bt::Tape<T>::bytes_required(nodes, slots, params);
  return BURTORCH_CONFIG_PARAM_NAMES ? built - rounded<T>(nodes * sizeof(const char*)) : built;
}

// bytes_required as a build with parameter names gives it.
template <class T>
std::size_t with_names(std::size_t nodes, std::size_t slots) {
  const std::size_t built = bt::Tape<T>::bytes_required(nodes, slots);
  return BURTORCH_CONFIG_PARAM_NAMES ? built : built + rounded<T>(nodes * sizeof(const char*));
}

template <class T>
void check_per_node() {
  constexpr std::size_t kNodes = 1024U;  // every array a multiple of kArrayAlign
  expect(bt::Tape<T>::bytes_required(kNodes, 0U) ==
             kNodes * per_node<T>(BURTORCH_CONFIG_PARAM_NAMES != 0, sizeof(const char*)),
         "bytes per node: bytes_required and the formula differ");
  expect(bt::Tape<T>::bytes_required(kNodes, kNodes) - bt::Tape<T>::bytes_required(kNodes, 0U) ==
             kNodes * sizeof(bt::Index),
         "bytes per slot");
  expect(bt::Tape<T>::bytes_required(kNodes, 0U) - bt::Tape<T>::bytes_required(kNodes, 0U, kNodes) ==
             kNodes * (sizeof(bt::Operands) + sizeof(bt::Op)),
         "bytes a parameter saves");
}

void design() {
  check_per_node<double>();
  check_per_node<float>();

  block("docs/design.md", "arrays");
  number(sizeof(bt::Operands) * CHAR_BIT);
  row();
  number(sizeof(bt::Op));
  row();

  block("docs/design.md", "memory-formula");
  number(2U);
  number(sizeof(bt::Operands));
  number(sizeof(bt::Op));
  number(sizeof(bt::Index));
  row();
  number(per_node<double>(true, sizeof(const char*)));
  number(per_node<double>(true, kPointer32));
  row();
  number(per_node<double>(false, sizeof(const char*)));
  number(per_node<double>(false, kPointer32));
  row();
  number(per_node<float>(true, sizeof(const char*)));
  number(per_node<float>(true, kPointer32));
  row();
  number(per_node<float>(false, sizeof(const char*)));
  number(per_node<float>(false, kPointer32));
  row();
  number(sizeof(bt::Index));
  row();

  block("docs/design.md", "parameter-region");
  number(sizeof(bt::Operands) + sizeof(bt::Op));
  row();
  const nn::MlpOptions c{27U, 16U, 64U, 4U};
  const nn::MemoryPlan p = nn::MakemoreMlp<float>::plan(c, nn::OptimizerKind::kSgd);
  expect(p.tape_bytes == bt::Tape<float>::bytes_required(p.nodes, p.slots, p.parameters), "the MLP's plan");
  number(c.hidden);
  number(without_names<float>(p.nodes, p.slots, 0U));
  number(without_names<float>(p.nodes, p.slots, p.parameters));
  row();

  block("docs/design.md", "names");
  constexpr std::size_t kNodes = 256U;
  number(kNodes * sizeof(const char*));
  number(with_names<double>(kNodes, kNodes));
  number(without_names<double>(kNodes, kNodes, 0U));
  number(kNodes * kPointer32);
  row();
}

}  // namespace

int main() {
  checkpoint_format();
  design();
  return (failures == 0) ? 0 : 1;
}

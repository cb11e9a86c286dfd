// SPDX-License-Identifier: Apache-2.0
// DOT export: the tiny graph's nodes, labels and edges against the graph's
// definition and hand-derived values; reductions and inner products; bad
// roots; a full sink; and a long chain through a counting sink (bounded,
// non-recursive). Heap-free: runs on the host and on Cortex-M under QEMU.
// Rendering with Graphviz is checked by the host-only test host_pictures.
#include <burtorch/burtorch.hpp>

#include <cstring>

#include "harness.hpp"

namespace bt = burtorch;

namespace {

std::uint8_t g_text[2048];  // the largest graph here writes about 1.2 KB

// Writes the graph of `root` into g_text as a NUL-terminated string.
template <class T>
bt::Status render(const bt::Tape<T>& tape, bt::Value<T> root, std::size_t* length) {
  bt::MemoryStream m{g_text, sizeof(g_text) - 1U, 0U, 0U};
  const bt::Status s = bt::write_graphviz(tape, root, bt::memory_sink(&m));
  g_text[m.size] = '\0';
  *length = m.size;
  return s;
}

const char* text() { return reinterpret_cast<const char*>(g_text); }

std::size_t count(const char* haystack, const char* needle) {
  std::size_t n = 0U;
  const std::size_t step = std::strlen(needle);
  for (const char* p = std::strstr(haystack, needle); p != nullptr; p = std::strstr(p + step, needle)) {
    ++n;
  }
  return n;
}

// The declaration line of node i ("  n<i> [...];"), copied into `line`.
bool node_line(std::size_t i, char* line, std::size_t capacity) {
  char key[24] = "\n  n";
  const std::size_t used = std::strlen(key);
  const std::size_t digits = bt::format_unsigned(i, &key[used], sizeof(key) - used - 2U);
  key[used + digits] = ' ';
  key[used + digits + 1U] = '[';
  key[used + digits + 2U] = '\0';
  const char* start = std::strstr(text(), key);
  if (start == nullptr) {
    return false;
  }
  ++start;  // skip the newline
  const char* end = std::strchr(start, '\n');
  const std::size_t n = (end != nullptr) ? static_cast<std::size_t>(end - start) : std::strlen(start);
  if (n + 1U > capacity) {
    return false;
  }
  std::memcpy(line, start, n);
  line[n] = '\0';
  return true;
}

bool node_has(std::size_t i, const char* what) {
  char line[256];
  return node_line(i, line, sizeof(line)) && (std::strstr(line, what) != nullptr);
}

// Node i's label shows `field` (e.g. "value ") followed by `v` as the
// library formats numbers (format_double, tested in test_api) and `after`.
bool node_shows(std::size_t i, const char* field, double v, const char* after) {
  char want[96];
  std::size_t n = std::strlen(field);
  std::memcpy(want, field, n);
  n += bt::format_double(v, &want[n], sizeof(want) - n - 8U, bt::kGraphvizDigits);
  std::memcpy(&want[n], after, std::strlen(after) + 1U);
  return node_has(i, want);
}

bool has_edge(std::size_t from, std::size_t to) {
  char edge[48] = "  n";
  std::size_t n = std::strlen(edge);
  n += bt::format_unsigned(from, &edge[n], sizeof(edge) - n);
  std::memcpy(&edge[n], " -> n", 6U);
  n += 5U;
  n += bt::format_unsigned(to, &edge[n], sizeof(edge) - n);
  std::memcpy(&edge[n], ";\n", 3U);
  return std::strstr(text(), edge) != nullptr;
}

void tiny_graph_nodes_and_edges(bt_test::Context& t) {
  static bt::FixedTape<double, 32> tape;
  tape.reset();
  auto a = tape.leaf(-41.0);                // n0
  auto b = tape.leaf(2.0);                  // n1
  auto c = a + b;                           // n2
  auto ab = a * b;                          // n3
  auto b3 = bt::pow3(b);                    // n4
  auto d = ab + b3;                         // n5
  auto e = c - d;                           // n6
  auto f = bt::sqr(e);                      // n7
  auto g = f / 2.0;                         // n8
  BT_CHECK(t, tape.backward(g) == bt::Status::kOk);
  std::size_t length = 0U;
  BT_CHECK(t, render(tape, g, &length) == bt::Status::kOk);
  BT_CHECK(t, std::strncmp(text(), "digraph", 7U) == 0);
  BT_CHECK(t, (length >= 2U) && (std::strcmp(&text()[length - 2U], "}\n") == 0));
  // Nine nodes, two leaves, one root.
  for (std::size_t i = 0U; i < 9U; ++i) {
    char line[256];
    BT_CHECK(t, node_line(i, line, sizeof(line)));
  }
  BT_CHECK(t, !node_has(9U, "["));
  BT_CHECK(t, count(text(), "shape=ellipse") == 2U);
  BT_CHECK(t, node_has(0U, "shape=ellipse") && node_has(1U, "shape=ellipse"));
  BT_CHECK(t, count(text(), "peripheries=2") == 1U);
  BT_CHECK(t, node_has(8U, "peripheries=2"));
  // Index, op, value and gradient in each label (values by hand: g = e^2/2,
  // dg/da = -35, dg/db = 1050, dg/de = e = 35, dg/df = 1/2).
  BT_CHECK(t, node_has(0U, "#0 leaf"));
  BT_CHECK(t, node_shows(0U, "value ", -41.0, "\\n"));
  BT_CHECK(t, node_shows(0U, "grad ", -35.0, "\""));
  BT_CHECK(t, node_has(1U, "#1 leaf") && node_shows(1U, "value ", 2.0, "\\n") && node_shows(1U, "grad ", 1050.0, "\""));
  BT_CHECK(t, node_has(2U, "#2 add") && node_shows(2U, "value ", -39.0, "\\n") && node_shows(2U, "grad ", 35.0, "\""));
  BT_CHECK(t, node_has(3U, "#3 mul") && node_shows(3U, "value ", -82.0, "\\n"));
  BT_CHECK(t, node_has(4U, "#4 pow3") && node_shows(4U, "value ", 8.0, "\\n"));
  BT_CHECK(t, node_shows(5U, "value ", -74.0, "\\n") && node_shows(5U, "grad ", -35.0, "\""));
  BT_CHECK(t, node_has(6U, "#6 sub") && node_shows(6U, "value ", 35.0, "\\n") && node_shows(6U, "grad ", 35.0, "\""));
  BT_CHECK(t, node_has(7U, "#7 sqr") && node_shows(7U, "value ", 1225.0, "\\n") && node_shows(7U, "grad ", 0.5, "\""));
  BT_CHECK(t, node_has(8U, "div_const 2"));
  BT_CHECK(t, node_shows(8U, "value ", 612.5, "\\n"));
  BT_CHECK(t, node_shows(8U, "grad ", 1.0, "\""));
  // Exactly the edges of the definition.
  BT_CHECK(t, count(text(), " -> ") == 11U);
  BT_CHECK(t, has_edge(0U, 2U) && has_edge(1U, 2U));
  BT_CHECK(t, has_edge(0U, 3U) && has_edge(1U, 3U));
  BT_CHECK(t, has_edge(1U, 4U));
  BT_CHECK(t, has_edge(3U, 5U) && has_edge(4U, 5U));
  BT_CHECK(t, has_edge(2U, 6U) && has_edge(5U, 6U));
  BT_CHECK(t, has_edge(6U, 7U) && has_edge(7U, 8U));
  // A root inside the graph: only nodes up to it.
  BT_CHECK(t, render(tape, c, &length) == bt::Status::kOk);
  BT_CHECK(t, count(text(), " -> ") == 2U);
  BT_CHECK(t, node_has(2U, "peripheries=2"));
  BT_CHECK(t, !node_has(3U, "["));
}

void reductions_and_inner_products(bt_test::Context& t) {
  static bt::FixedTape<float, 64> tape;
  tape.reset();
  bt::Value<float> w[3] = {tape.param(1.0F), tape.param(2.0F), tape.param(3.0F)};  // n0..n2
  auto bias = tape.param(0.5F);                                                    // n3
  bt::Value<float> x[3] = {tape.leaf(4.0F), tape.leaf(5.0F), tape.leaf(6.0F)};     // n4..n6
  auto y = bt::inner_product_with_bias(w, x, 3U, bias);                            // n7 = 32.5
  bt::Value<float> picked[2] = {x[2], w[0]};
  auto s = bt::reduce_sum(picked, 2U);  // n8 = 7, a list operand
  auto total = y * s;                   // n9 = 227.5
  BT_CHECK(t, tape.backward(total) == bt::Status::kOk);
  std::size_t length = 0U;
  BT_CHECK(t, render(tape, total, &length) == bt::Status::kOk);
  BT_CHECK(t, node_has(7U, "dot") && node_shows(7U, "value ", 32.5, "\\n") && node_shows(7U, "grad ", 7.0, "\""));
  BT_CHECK(t, node_has(8U, "sum") && node_shows(8U, "value ", 7.0, "\\n") && node_shows(8U, "grad ", 32.5, "\""));
  BT_CHECK(t, node_shows(9U, "value ", 227.5, "\\n"));
  // dot: 3 weights, 3 inputs, the bias; sum: its 2 list operands; mul: 2.
  BT_CHECK(t, count(text(), " -> ") == 11U);
  for (std::size_t i = 0U; i < 7U; ++i) {
    BT_CHECK(t, has_edge(i, 7U));
  }
  BT_CHECK(t, has_edge(6U, 8U) && has_edge(0U, 8U));
  BT_CHECK(t, has_edge(7U, 9U) && has_edge(8U, 9U));
  BT_CHECK(t, count(text(), "shape=ellipse") == 7U);
}

void bad_roots(bt_test::Context& t) {
  static bt::FixedTape<double, 8> tape;
  static bt::FixedTape<double, 8> other;
  tape.reset();
  other.reset();
  auto a = tape.leaf(1.0);
  auto foreign = other.leaf(2.0);
  static_cast<void>(a);
  std::uint8_t buffer[64];
  bt::MemoryStream m{buffer, sizeof(buffer), 0U, 0U};
  BT_CHECK(t, bt::write_graphviz(tape, foreign, bt::memory_sink(&m)) == bt::Status::kForeignValue);
  BT_CHECK(t, bt::write_graphviz(tape, bt::Value<double>(&tape, 5U), bt::memory_sink(&m)) ==
                  bt::Status::kInvalidHandle);
  BT_CHECK(t, m.size == 0U);
}

void full_sink_stops_cleanly(bt_test::Context& t) {
  static bt::FixedTape<double, 16> tape;
  tape.reset();
  auto a = tape.leaf(3.0);
  auto b = bt::tanh(a * a);
  std::uint8_t buffer[72];
  std::memset(buffer, 0xCC, sizeof(buffer));
  bt::MemoryStream m{buffer, 64U, 0U, 0U};
  BT_CHECK(t, bt::write_graphviz(tape, b, bt::memory_sink(&m)) == bt::Status::kIoError);
  BT_CHECK(t, m.size <= 64U);
  bool guard = true;
  for (std::size_t i = 64U; i < sizeof(buffer); ++i) {
    guard = guard && (buffer[i] == 0xCCU);
  }
  BT_CHECK(t, guard);
}

// Counts bytes, lines and arrows without storing them.
struct Counter {
  std::size_t bytes;
  std::size_t lines;
  std::size_t arrows;
  char previous;
};

bt::Status count_write(void* context, const std::uint8_t* data, std::size_t size) {
  Counter* c = static_cast<Counter*>(context);
  for (std::size_t i = 0U; i < size; ++i) {
    const char ch = static_cast<char>(data[i]);
    c->lines += (ch == '\n') ? 1U : 0U;
    c->arrows += ((c->previous == '-') && (ch == '>')) ? 1U : 0U;
    c->previous = ch;
  }
  c->bytes += size;
  return bt::Status::kOk;
}

void long_chain_is_bounded(bt_test::Context& t) {
  // 1000 nodes deep (150 on tiny MCUs): a recursive writer would need a deep stack; this one
  // is a loop. Each node is one line, each link one edge.
#if defined(BURTORCH_TEST_SMALL_TARGET) && BURTORCH_TEST_SMALL_TARGET
  constexpr bt::Index kNodes = 150U;  // 16 KB of RAM
#else
  constexpr bt::Index kNodes = 1000U;
#endif
  static bt::FixedTape<double, kNodes, 1> tape;  // x + 1.0 takes no argument slots
  tape.reset();
  auto x = tape.leaf(0.5);
  for (bt::Index i = 1U; i < kNodes; ++i) {
    x = x + 1.0;
  }
  BT_CHECK(t, tape.size() == kNodes);
  Counter c{0U, 0U, 0U, '\0'};
  BT_CHECK(t, bt::write_graphviz(tape, x, bt::ByteSink{&count_write, &c}) == bt::Status::kOk);
  BT_CHECK(t, c.arrows == (kNodes - 1U));
  // 3 header lines + nodes + edges + closing brace.
  BT_CHECK(t, c.lines == (3U + kNodes + (kNodes - 1U) + 1U));
}

const bt_test::TestCase kCases[] = {
    {"tiny_graph_nodes_and_edges", tiny_graph_nodes_and_edges},
    {"reductions_and_inner_products", reductions_and_inner_products},
    {"bad_roots", bad_roots},
    {"full_sink_stops_cleanly", full_sink_stops_cleanly},
    {"long_chain_is_bounded", long_chain_is_bounded},
};

}  // namespace

BT_TEST_MAIN("dot", kCases)

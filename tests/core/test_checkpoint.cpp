// SPDX-License-Identifier: Apache-2.0
// Checkpoints: the byte format against an independent encoder (Python's
// struct + zlib, fuzz/make_corpus.py), the CRC against its published check
// value, all-or-nothing loading under every truncation and every single-bit
// flip, stream failures, and resuming a training run bit for bit.
// Heap-free: runs on the host and on Cortex-M under QEMU.
#include <burtorch/burtorch.hpp>

#include <cstring>

#include "harness.hpp"

namespace bt = burtorch;

namespace {

// Made by `fuzz/make_corpus.py --cpp` (struct.pack + zlib.crc32; shares no
// code with lib/checkpoint.cpp): the paper's 7 tiny-graph values a..g.
const std::uint8_t kGoldenTinyF64[84] = {
    0x42, 0x54, 0x43, 0x4B, 0x01, 0x02, 0x08, 0x01, 0x01, 0x00, 0x00, 0x00,
    0x56, 0x41, 0x4C, 0x55, 0x38, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x44, 0xC0, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x43, 0xC0,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x52, 0xC0, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x80, 0x41, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x24, 0x93, 0x40,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x24, 0x83, 0x40, 0x12, 0x0A, 0xA0, 0x60,
};
const std::uint8_t kGoldenTinyF64Grads[152] = {
    0x42, 0x54, 0x43, 0x4B, 0x01, 0x02, 0x08, 0x01, 0x02, 0x00, 0x00, 0x00,
    0x56, 0x41, 0x4C, 0x55, 0x38, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x47, 0x52, 0x41, 0x44, 0x38, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x44, 0xC0, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x43, 0xC0,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x52, 0xC0, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x80, 0x41, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x24, 0x93, 0x40,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x24, 0x83, 0x40, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x80, 0x41, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x68, 0x90, 0x40,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x41, 0x40, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x80, 0x41, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x41, 0x40,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xE0, 0x3F, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0xF0, 0x3F, 0x10, 0x47, 0x30, 0x15,
};
const std::uint8_t kGoldenTinyF32[56] = {
    0x42, 0x54, 0x43, 0x4B, 0x01, 0x01, 0x04, 0x01, 0x01, 0x00, 0x00, 0x00,
    0x56, 0x41, 0x4C, 0x55, 0x1C, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x24, 0xC2, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x1C, 0xC2,
    0x00, 0x00, 0x94, 0xC2, 0x00, 0x00, 0x0C, 0x42, 0x00, 0x20, 0x99, 0x44,
    0x00, 0x20, 0x19, 0x44, 0x86, 0x22, 0xEB, 0xCA,
};

// The paper's tiny graph by hand: a=-41, b=2, c=a+b, d=ab+b^3, e=c-d,
// f=e^2, g=f/2; gradients of g with respect to each.
const double kTinyValues[7] = {-41.0, 2.0, -39.0, -74.0, 35.0, 1225.0, 612.5};
const double kTinyGrads[7] = {-35.0, 1050.0, 35.0, -35.0, 35.0, 0.5, 1.0};

bool same_bytes(const std::uint8_t* a, const std::uint8_t* b, std::size_t n) { return std::memcmp(a, b, n) == 0; }

// A source over constant bytes with knobs: at most `piece` bytes per read,
// an I/O error once `fail_at` bytes were delivered, optional rewind, and a
// byte flipped at `flip_on_rewind` when rewound (a file changed between the
// verify and apply passes).
struct TestSource {
  const std::uint8_t* data;
  std::size_t size;
  std::size_t position;
  std::size_t piece;
  std::size_t fail_at;
  std::size_t flip_on_rewind;
  bool flipped;
  std::size_t reads;
};

bt::Status test_read(void* context, std::uint8_t* out, std::size_t size, std::size_t* got) {
  TestSource* s = static_cast<TestSource*>(context);
  ++s->reads;
  *got = 0U;
  if (s->position >= s->fail_at) {
    return bt::Status::kIoError;
  }
  std::size_t n = s->size - s->position;
  n = (size < n) ? size : n;
  n = (s->piece < n) ? s->piece : n;
  n = ((s->fail_at - s->position) < n) ? (s->fail_at - s->position) : n;
  for (std::size_t i = 0U; i < n; ++i) {
    std::uint8_t byte = s->data[s->position + i];
    if (s->flipped && ((s->position + i) == s->flip_on_rewind)) {
      byte = static_cast<std::uint8_t>(byte ^ 0x01U);
    }
    out[i] = byte;
  }
  s->position += n;
  *got = n;
  return bt::Status::kOk;
}

bt::Status test_rewind(void* context) {
  TestSource* s = static_cast<TestSource*>(context);
  s->position = 0U;
  s->flipped = s->flip_on_rewind < s->size;
  return bt::Status::kOk;
}

constexpr std::size_t kNever = static_cast<std::size_t>(-1);

TestSource test_source(const std::uint8_t* data, std::size_t size) {
  return TestSource{data, size, 0U, kNever, kNever, kNever, false, 0U};
}
bt::ByteSource rewindable(TestSource* s) { return bt::ByteSource{&test_read, s, &test_rewind}; }
bt::ByteSource one_way(TestSource* s) { return bt::ByteSource{&test_read, s, nullptr}; }

// --- CRC and sizes --------------------------------------------------------

void crc32_check_value(bt_test::Context& t) {
  // The published CRC-32 check value: crc32("123456789") = 0xCBF43926.
  const char* digits = "123456789";
  BT_CHECK(t, bt::crc32(0U, digits, 9U) == 0xCBF43926U);
  // Chained pieces give the same checksum as one call.
  BT_CHECK(t, bt::crc32(bt::crc32(0U, digits, 4U), digits + 4, 5U) == 0xCBF43926U);
  BT_CHECK(t, bt::crc32(0U, digits, 0U) == 0U);
  // zlib.crc32(b"a") == 0xE8B7BE43.
  BT_CHECK(t, bt::crc32(0U, "a", 1U) == 0xE8B7BE43U);
}

void overhead_in_bytes(bt_test::Context& t) {
  // The paper's file of 7 FP64 values is 56 bytes; ours adds 28.
  BT_CHECK(t, bt::checkpoint_overhead(1U) == 28U);
  BT_CHECK(t, bt::checkpoint_overhead(2U) == 40U);
  BT_CHECK(t, bt::checkpoint_overhead(0U) == 16U);
  double values[7] = {};
  const bt::Section one[1] = {{values, sizeof(values), bt::kTagValues}};
  BT_CHECK(t, bt::checkpoint_bytes(one, 1U) == 84U);
  BT_CHECK(t, bt::checkpoint_bytes(one, 1U) == sizeof(kGoldenTinyF64));
  const bt::Section bad[1] = {{nullptr, 8U, bt::kTagValues}};
  BT_CHECK(t, bt::checkpoint_bytes(bad, 1U) == 0U);
  BT_CHECK(t, bt::make_tag('V', 'A', 'L', 'U') == 0x554C4156U);
}

// --- byte format against the independent encoder ---------------------------

template <class T>
bt::Tape<T>& tiny_leaves(bt::FixedTape<T, 16>& tape) {
  tape.reset();
  for (double v : kTinyValues) {
    static_cast<void>(tape.leaf(static_cast<T>(v)));
  }
  for (std::size_t i = 0U; i < 7U; ++i) {
    tape.grads()[i] = static_cast<T>(kTinyGrads[i]);
  }
  return tape;
}

void save_matches_reference_encoder(bt_test::Context& t) {
  static bt::FixedTape<double, 16> tape;
  static bt::FixedTape<float, 16> tape32;
  std::uint8_t buffer[256];
  bt::MemoryStream m{buffer, sizeof(buffer), 0U, 0U};

  BT_CHECK(t, bt::save_nodes(tiny_leaves(tape), 0U, 7U, false, bt::memory_sink(&m)) == bt::Status::kOk);
  BT_CHECK(t, m.size == sizeof(kGoldenTinyF64));
  BT_CHECK(t, same_bytes(buffer, kGoldenTinyF64, sizeof(kGoldenTinyF64)));

  m.size = 0U;
  BT_CHECK(t, bt::save_nodes(tiny_leaves(tape), 0U, 7U, true, bt::memory_sink(&m)) == bt::Status::kOk);
  BT_CHECK(t, m.size == sizeof(kGoldenTinyF64Grads));
  BT_CHECK(t, same_bytes(buffer, kGoldenTinyF64Grads, sizeof(kGoldenTinyF64Grads)));

  m.size = 0U;
  BT_CHECK(t, bt::save_nodes(tiny_leaves(tape32), 0U, 7U, false, bt::memory_sink(&m)) == bt::Status::kOk);
  BT_CHECK(t, m.size == sizeof(kGoldenTinyF32));
  BT_CHECK(t, same_bytes(buffer, kGoldenTinyF32, sizeof(kGoldenTinyF32)));

  // The generic API writes the same bytes for the same section.
  m.size = 0U;
  double values[7];
  std::memcpy(values, kTinyValues, sizeof(values));
  const bt::Section s[1] = {{values, sizeof(values), bt::kTagValues}};
  BT_CHECK(t, bt::save_checkpoint(bt::memory_sink(&m), bt::ScalarKind::kFloat64, s, 1U) == bt::Status::kOk);
  BT_CHECK(t, (m.size == 84U) && same_bytes(buffer, kGoldenTinyF64, 84U));
}

void saved_graph_values_match_hand_derivation(bt_test::Context& t) {
  // Record the real tiny graph, backward, and save its 9 nodes: the values
  // section holds a..g in recording order (with a*b and b^3 in between).
  static bt::FixedTape<double, 32> tape;
  tape.reset();
  auto a = tape.leaf(-41.0);
  auto b = tape.leaf(2.0);
  auto c = a + b;
  auto d = a * b + bt::pow3(b);
  auto e = c - d;
  auto f = bt::sqr(e);
  auto g = f / 2.0;
  BT_CHECK(t, tape.backward(g) == bt::Status::kOk);
  BT_CHECK(t, tape.size() == 9U);
  std::uint8_t buffer[256];
  bt::MemoryStream m{buffer, sizeof(buffer), 0U, 0U};
  BT_CHECK(t, bt::save_nodes(tape, 0U, 9U, true, bt::memory_sink(&m)) == bt::Status::kOk);
  BT_CHECK(t, m.size == (bt::checkpoint_overhead(2U) + (2U * 9U * sizeof(double))));
  // Payload starts after the header and two table entries.
  double saved[18];
  std::memcpy(saved, &buffer[12U + 24U], sizeof(saved));
  const std::size_t named[7] = {0U, 1U, 2U, 5U, 6U, 7U, 8U};  // a b c d e f g
  for (std::size_t i = 0U; i < 7U; ++i) {
    BT_CHECK(t, saved[named[i]] == kTinyValues[i]);
    BT_CHECK(t, saved[9U + named[i]] == kTinyGrads[i]);
  }
}

void load_reference_file(bt_test::Context& t) {
  static bt::FixedTape<double, 16> tape;
  tape.reset();
  for (int i = 0; i < 7; ++i) {
    static_cast<void>(tape.leaf(0.0));
  }
  TestSource src = test_source(kGoldenTinyF64Grads, sizeof(kGoldenTinyF64Grads));
  BT_CHECK(t, bt::load_nodes(tape, 0U, 7U, true, rewindable(&src)) == bt::Status::kOk);
  for (bt::Index i = 0U; i < 7U; ++i) {
    BT_CHECK(t, tape.value(i) == kTinyValues[i]);
    BT_CHECK(t, tape.grad(i) == kTinyGrads[i]);
  }
  // The fp32 file into a float tape, through the one-pass scratch variant.
  static bt::FixedTape<float, 16> tape32;
  tape32.reset();
  for (int i = 0; i < 7; ++i) {
    static_cast<void>(tape32.leaf(0.0F));
  }
  float scratch[7];
  TestSource src32 = test_source(kGoldenTinyF32, sizeof(kGoldenTinyF32));
  BT_CHECK(t, bt::load_nodes(tape32, 0U, 7U, false, one_way(&src32), scratch, sizeof(scratch)) ==
                  bt::Status::kOk);
  for (bt::Index i = 0U; i < 7U; ++i) {
    BT_CHECK(t, tape32.value(i) == static_cast<float>(kTinyValues[i]));
  }
}

// --- all-or-nothing --------------------------------------------------------

// Loads `bytes` into 7 doubles prefilled with a canary; returns the status
// and whether the canary survived.
struct LoadOutcome {
  bt::Status two_pass;
  bt::Status one_pass;
  bool untouched;
};

LoadOutcome load_7_doubles(const std::uint8_t* bytes, std::size_t size, std::size_t piece, std::size_t fail_at) {
  const double canary = 123.25;
  double target[7];
  double target2[7];
  double scratch[7];
  for (std::size_t i = 0U; i < 7U; ++i) {
    target[i] = canary;
    target2[i] = canary;
  }
  const bt::Section s[1] = {{target, sizeof(target), bt::kTagValues}};
  const bt::Section s2[1] = {{target2, sizeof(target2), bt::kTagValues}};
  TestSource a = test_source(bytes, size);
  a.piece = piece;
  a.fail_at = fail_at;
  TestSource b = a;
  LoadOutcome out{};
  out.two_pass = bt::load_checkpoint(rewindable(&a), bt::ScalarKind::kFloat64, s, 1U);
  out.one_pass = bt::load_checkpoint(one_way(&b), bt::ScalarKind::kFloat64, s2, 1U, scratch, sizeof(scratch));
  out.untouched = true;
  for (std::size_t i = 0U; i < 7U; ++i) {
    out.untouched = out.untouched && (target[i] == canary) && (target2[i] == canary);
  }
  return out;
}

void every_truncation_is_rejected(bt_test::Context& t) {
  int wrong = 0;
  for (std::size_t n = 0U; n < sizeof(kGoldenTinyF64); ++n) {
    const LoadOutcome r = load_7_doubles(kGoldenTinyF64, n, kNever, kNever);
    if ((r.two_pass != bt::Status::kTruncated) || (r.one_pass != bt::Status::kTruncated) || !r.untouched) {
      ++wrong;
    }
  }
  BT_CHECK(t, wrong == 0);
  const LoadOutcome whole = load_7_doubles(kGoldenTinyF64, sizeof(kGoldenTinyF64), kNever, kNever);
  BT_CHECK(t, whole.two_pass == bt::Status::kOk);
  BT_CHECK(t, whole.one_pass == bt::Status::kOk);
}

void every_bit_flip_is_rejected(bt_test::Context& t) {
  // Header and table (bytes 0..23): the loader compares them with the
  // layout it expects. Payload and CRC (24..83): the checksum catches them.
  std::uint8_t copy[sizeof(kGoldenTinyF64)];
  int wrong = 0;
  for (std::size_t byte = 0U; byte < sizeof(copy); ++byte) {
    for (unsigned bit = 0U; bit < 8U; ++bit) {
      std::memcpy(copy, kGoldenTinyF64, sizeof(copy));
      copy[byte] = static_cast<std::uint8_t>(copy[byte] ^ (1U << bit));
      const bt::Status expected = (byte < 24U) ? bt::Status::kBadFormat : bt::Status::kChecksumMismatch;
      const LoadOutcome r = load_7_doubles(copy, sizeof(copy), kNever, kNever);
      if ((r.two_pass != expected) || (r.one_pass != expected) || !r.untouched) {
        ++wrong;
      }
    }
  }
  BT_CHECK(t, wrong == 0);
}

void layout_mismatches_are_bad_format(bt_test::Context& t) {
  double v7[7] = {};
  double v8[8] = {};
  float f7[7] = {};
  const bt::Section wrong_size[1] = {{v8, sizeof(v8), bt::kTagValues}};
  const bt::Section wrong_tag[1] = {{v7, sizeof(v7), bt::kTagGrads}};
  const bt::Section two[2] = {{v7, sizeof(v7), bt::kTagValues}, {v8, sizeof(v8), bt::kTagGrads}};
  const bt::Section fp32[1] = {{f7, sizeof(f7), bt::kTagValues}};
  TestSource s = test_source(kGoldenTinyF64, sizeof(kGoldenTinyF64));
  BT_CHECK(t, bt::load_checkpoint(rewindable(&s), bt::ScalarKind::kFloat64, wrong_size, 1U) ==
                  bt::Status::kBadFormat);
  s.position = 0U;
  BT_CHECK(t, bt::load_checkpoint(rewindable(&s), bt::ScalarKind::kFloat64, wrong_tag, 1U) ==
                  bt::Status::kBadFormat);
  s.position = 0U;
  BT_CHECK(t, bt::load_checkpoint(rewindable(&s), bt::ScalarKind::kFloat64, two, 2U) == bt::Status::kBadFormat);
  s.position = 0U;
  BT_CHECK(t, bt::load_checkpoint(rewindable(&s), bt::ScalarKind::kFloat32, fp32, 1U) == bt::Status::kBadFormat);
  s.position = 0U;
  BT_CHECK(t, bt::load_checkpoint(rewindable(&s), bt::ScalarKind::kBytes, wrong_tag, 1U) == bt::Status::kBadFormat);
  // Values only into a load that also wants gradients.
  static bt::FixedTape<double, 16> tape;
  tape.reset();
  for (int i = 0; i < 7; ++i) {
    static_cast<void>(tape.leaf(5.0));
  }
  s.position = 0U;
  BT_CHECK(t, bt::load_nodes(tape, 0U, 7U, true, rewindable(&s)) == bt::Status::kBadFormat);
  BT_CHECK(t, tape.value(3U) == 5.0);
  for (double x : v7) {
    BT_CHECK(t, x == 0.0);
  }
}

void stream_failures(bt_test::Context& t) {
  // A read error at every position: kIoError, nothing written.
  int wrong = 0;
  for (std::size_t at = 0U; at < sizeof(kGoldenTinyF64); ++at) {
    const LoadOutcome r = load_7_doubles(kGoldenTinyF64, sizeof(kGoldenTinyF64), kNever, at);
    if ((r.two_pass != bt::Status::kIoError) || (r.one_pass != bt::Status::kIoError) || !r.untouched) {
      ++wrong;
    }
  }
  BT_CHECK(t, wrong == 0);
  // Reads that deliver one or three bytes at a time still load.
  const LoadOutcome ones = load_7_doubles(kGoldenTinyF64, sizeof(kGoldenTinyF64), 1U, kNever);
  BT_CHECK(t, (ones.two_pass == bt::Status::kOk) && (ones.one_pass == bt::Status::kOk));
  const LoadOutcome threes = load_7_doubles(kGoldenTinyF64, sizeof(kGoldenTinyF64), 3U, kNever);
  BT_CHECK(t, (threes.two_pass == bt::Status::kOk) && (threes.one_pass == bt::Status::kOk));
}

void source_rules(bt_test::Context& t) {
  double target[7] = {};
  const bt::Section s[1] = {{target, sizeof(target), bt::kTagValues}};
  // Two-pass loading needs a rewind.
  TestSource a = test_source(kGoldenTinyF64, sizeof(kGoldenTinyF64));
  BT_CHECK(t, bt::load_checkpoint(one_way(&a), bt::ScalarKind::kFloat64, s, 1U) == bt::Status::kInvalidArgument);
  BT_CHECK(t, a.reads == 0U);
  // Scratch too small for the payload.
  double small[6];
  BT_CHECK(t, bt::load_checkpoint(one_way(&a), bt::ScalarKind::kFloat64, s, 1U, small, sizeof(small)) ==
                  bt::Status::kInvalidArgument);
  BT_CHECK(t, a.reads == 0U);
  // verify_checkpoint reads but writes nothing.
  BT_CHECK(t, bt::verify_checkpoint(one_way(&a), bt::ScalarKind::kFloat64, s, 1U) == bt::Status::kOk);
  BT_CHECK(t, target[0] == 0.0);
  // Bytes after the checkpoint are not read (a checkpoint at the start of a
  // larger flash region).
  std::uint8_t region[100];
  std::memset(region, 0xFF, sizeof(region));
  std::memcpy(region, kGoldenTinyF64, sizeof(kGoldenTinyF64));
  TestSource r = test_source(region, sizeof(region));
  BT_CHECK(t, bt::load_checkpoint(rewindable(&r), bt::ScalarKind::kFloat64, s, 1U) == bt::Status::kOk);
  BT_CHECK(t, r.position == sizeof(kGoldenTinyF64));
  BT_CHECK(t, target[6] == 612.5);
  // A source whose payload changes between the passes: pass 2 notices.
  TestSource changing = test_source(kGoldenTinyF64, sizeof(kGoldenTinyF64));
  changing.flip_on_rewind = 40U;
  BT_CHECK(t, bt::load_checkpoint(rewindable(&changing), bt::ScalarKind::kFloat64, s, 1U) == bt::Status::kIoError);
}

void bad_arguments(bt_test::Context& t) {
  std::uint8_t buffer[128];
  bt::MemoryStream m{buffer, sizeof(buffer), 0U, 0U};
  const bt::Section null_data[1] = {{nullptr, 8U, 1U}};
  BT_CHECK(t, bt::save_checkpoint(bt::memory_sink(&m), bt::ScalarKind::kFloat64, null_data, 1U) ==
                  bt::Status::kInvalidArgument);
  BT_CHECK(t, bt::save_checkpoint(bt::memory_sink(&m), bt::ScalarKind::kFloat64, nullptr, 1U) ==
                  bt::Status::kInvalidArgument);
  double x = 1.0;
  const bt::Section one[1] = {{&x, sizeof(x), 1U}};
  BT_CHECK(t, bt::save_checkpoint(bt::memory_sink(&m), static_cast<bt::ScalarKind>(3), one, 1U) ==
                  bt::Status::kInvalidArgument);
  BT_CHECK(t, bt::save_checkpoint(bt::ByteSink{nullptr, nullptr}, bt::ScalarKind::kFloat64, one, 1U) ==
                  bt::Status::kInvalidArgument);
  BT_CHECK(t, m.size == 0U);
  // Node ranges off the tape.
  static bt::FixedTape<double, 8> tape;
  tape.reset();
  static_cast<void>(tape.leaf(1.0));
  static_cast<void>(tape.leaf(2.0));
  BT_CHECK(t, bt::save_nodes(tape, 1U, 2U, false, bt::memory_sink(&m)) == bt::Status::kInvalidArgument);
  BT_CHECK(t, bt::save_nodes(tape, 3U, 0U, false, bt::memory_sink(&m)) == bt::Status::kInvalidArgument);
  BT_CHECK(t, m.size == 0U);
  BT_CHECK(t, bt::load_nodes(tape, 0U, 3U, false, bt::memory_source(&m)) == bt::Status::kInvalidArgument);
  // An empty checkpoint (no sections) is legal: 16 bytes.
  BT_CHECK(t, bt::save_checkpoint(bt::memory_sink(&m), bt::ScalarKind::kBytes, nullptr, 0U) == bt::Status::kOk);
  BT_CHECK(t, m.size == 16U);
  BT_CHECK(t, bt::load_checkpoint(bt::memory_source(&m), bt::ScalarKind::kBytes, nullptr, 0U) == bt::Status::kOk);
}

void full_sink_is_reported(bt_test::Context& t) {
  // 8 bytes of guard after a 50-byte stream: the writer stops, never spills.
  std::uint8_t buffer[58];
  std::memset(buffer, 0xEE, sizeof(buffer));
  bt::MemoryStream m{buffer, 50U, 0U, 0U};
  double values[7];
  std::memcpy(values, kTinyValues, sizeof(values));
  const bt::Section s[1] = {{values, sizeof(values), bt::kTagValues}};
  BT_CHECK(t, bt::save_checkpoint(bt::memory_sink(&m), bt::ScalarKind::kFloat64, s, 1U) == bt::Status::kIoError);
  BT_CHECK(t, m.size <= 50U);
  bool guard = true;
  for (std::size_t i = 50U; i < sizeof(buffer); ++i) {
    guard = guard && (buffer[i] == 0xEEU);
  }
  BT_CHECK(t, guard);
  // Exactly 84 bytes of room is enough.
  std::uint8_t exact[84];
  bt::MemoryStream e{exact, sizeof(exact), 0U, 0U};
  BT_CHECK(t, bt::save_checkpoint(bt::memory_sink(&e), bt::ScalarKind::kFloat64, s, 1U) == bt::Status::kOk);
  BT_CHECK(t, same_bytes(exact, kGoldenTinyF64, sizeof(exact)));
}

// --- resume: a checkpointed run continues the identical loss curve --------

// A 2-3-1 tanh network fit to four points with SGD + momentum; the state is
// the 13 parameters, the 13 momentum terms and the step counter.
constexpr bt::Index kParams = 13U;
constexpr int kSteps = 100;
constexpr int kSaveAt = 37;

struct Trainer {
  bt::FixedTape<double, 64, 80> tape;  // 54 nodes and 64 slots at the peak
  double momentum[kParams];
  std::uint64_t step;
};

void init_params(Trainer& tr, double seed) {
  tr.tape.reset();
  for (bt::Index i = 0U; i < kParams; ++i) {
    const double k = static_cast<double>(i);
    static_cast<void>(tr.tape.param(seed * (0.3 - (0.07 * k) + (0.011 * k * k)) / (1.0 + (0.1 * k))));
    tr.momentum[i] = 0.0;
  }
  tr.step = 0U;
}

double train_step(Trainer& tr) {
  static const double kX[4][2] = {{0.0, 1.0}, {1.0, 0.0}, {1.0, 1.0}, {-1.0, 0.5}};
  static const double kY[4] = {1.0, 1.0, -0.5, 0.25};
  bt::Tape<double>& tape = tr.tape;
  const bt::Mark start = tape.mark();
  bt::Value<double> p[kParams];
  for (bt::Index i = 0U; i < kParams; ++i) {
    p[i] = bt::Value<double>(&tape, i);
  }
  bt::Value<double> errors[4];
  for (int n = 0; n < 4; ++n) {
    bt::Value<double> x[2] = {tape.leaf(kX[n][0]), tape.leaf(kX[n][1])};
    bt::Value<double> hidden[3];
    for (int h = 0; h < 3; ++h) {
      hidden[h] = bt::tanh(bt::inner_product_with_bias(&p[2 * h], x, 2U, p[6 + h]));
    }
    const bt::Value<double> out = bt::inner_product_with_bias(&p[9], hidden, 3U, p[12]);
    errors[n] = out - kY[n];
  }
  const bt::Value<double> loss = bt::reduce_mean_squares(errors, 4U);
  const double value = loss.value();
  static_cast<void>(tape.backward(loss));
  for (bt::Index i = 0U; i < kParams; ++i) {
    tr.momentum[i] = (0.9 * tr.momentum[i]) + tape.grad(i);
    tape.values()[i] -= 0.1 * tr.momentum[i];
  }
  tape.zero_grad(0U, kParams);
  static_cast<void>(tape.rewind(start));
  ++tr.step;
  return value;
}

void resume_continues_identical_loss_curve(bt_test::Context& t) {
  static Trainer reference;
  static Trainer resumed;
  static double losses[kSteps];
  static std::uint8_t file[512];
  bt::MemoryStream m{file, sizeof(file), 0U, 0U};
  // The reference run, checkpointed mid-way without stopping.
  init_params(reference, 1.0);
  const bt::Section save[3] = {bt::node_values(reference.tape, 0U, kParams),
                               {reference.momentum, sizeof(reference.momentum), bt::make_tag('M', 'O', 'M', 'T')},
                               {&reference.step, sizeof(reference.step), bt::make_tag('S', 'T', 'E', 'P')}};
  for (int s = 0; s < kSteps; ++s) {
    if (s == kSaveAt) {
      BT_CHECK(t, bt::save_checkpoint(bt::memory_sink(&m), bt::ScalarKind::kFloat64, save, 3U) == bt::Status::kOk);
    }
    losses[s] = train_step(reference);
  }
  BT_CHECK(t, losses[kSteps - 1] < (0.25 * losses[0]));  // it does learn
  BT_CHECK(t, m.size == (bt::checkpoint_overhead(3U) + (2U * kParams * 8U) + 8U));

  // A new process: a differently initialised model, then resume.
  init_params(resumed, -2.0);
  resumed.step = 999U;
  const bt::Section load[3] = {bt::node_values(resumed.tape, 0U, kParams),
                               {resumed.momentum, sizeof(resumed.momentum), bt::make_tag('M', 'O', 'M', 'T')},
                               {&resumed.step, sizeof(resumed.step), bt::make_tag('S', 'T', 'E', 'P')}};
  BT_CHECK(t, bt::load_checkpoint(bt::memory_source(&m), bt::ScalarKind::kFloat64, load, 3U) == bt::Status::kOk);
  BT_CHECK(t, resumed.step == static_cast<std::uint64_t>(kSaveAt));
  int differing = 0;
  for (int s = kSaveAt; s < kSteps; ++s) {
    const double l = train_step(resumed);
    if (std::memcmp(&l, &losses[s], sizeof(l)) != 0) {
      ++differing;
    }
  }
  BT_CHECK(t, differing == 0);
  BT_CHECK(t, resumed.step == static_cast<std::uint64_t>(kSteps));
  for (bt::Index i = 0U; i < kParams; ++i) {
    BT_CHECK(t, resumed.tape.value(i) == reference.tape.value(i));
  }

  // Without the momentum the next loss still matches (it depends on the
  // parameters only), the one after differs: the test can tell.
  init_params(resumed, 1.0);
  m.position = 0U;
  const bt::Section params_only[1] = {bt::node_values(resumed.tape, 0U, kParams)};
  double momentum[kParams];
  std::uint64_t step = 0U;
  const bt::Section rest[2] = {{momentum, sizeof(momentum), bt::make_tag('M', 'O', 'M', 'T')},
                               {&step, sizeof(step), bt::make_tag('S', 'T', 'E', 'P')}};
  static std::uint8_t file2[256];
  bt::MemoryStream m2{file2, sizeof(file2), 0U, 0U};
  // Re-save only the parameters from the full checkpoint.
  const bt::Section all[3] = {params_only[0], rest[0], rest[1]};
  BT_CHECK(t, bt::load_checkpoint(bt::memory_source(&m), bt::ScalarKind::kFloat64, all, 3U) == bt::Status::kOk);
  BT_CHECK(t, bt::save_checkpoint(bt::memory_sink(&m2), bt::ScalarKind::kFloat64, params_only, 1U) ==
                  bt::Status::kOk);
  init_params(resumed, 1.0);
  BT_CHECK(t, bt::load_checkpoint(bt::memory_source(&m2), bt::ScalarKind::kFloat64, params_only, 1U) ==
                  bt::Status::kOk);
  BT_CHECK(t, train_step(resumed) == losses[kSaveAt]);
  BT_CHECK(t, train_step(resumed) != losses[kSaveAt + 1]);
}

const bt_test::TestCase kCases[] = {
    {"crc32_check_value", crc32_check_value},
    {"overhead_in_bytes", overhead_in_bytes},
    {"save_matches_reference_encoder", save_matches_reference_encoder},
    {"saved_graph_values_match_hand_derivation", saved_graph_values_match_hand_derivation},
    {"load_reference_file", load_reference_file},
    {"every_truncation_is_rejected", every_truncation_is_rejected},
    {"every_bit_flip_is_rejected", every_bit_flip_is_rejected},
    {"layout_mismatches_are_bad_format", layout_mismatches_are_bad_format},
    {"stream_failures", stream_failures},
    {"source_rules", source_rules},
    {"bad_arguments", bad_arguments},
    {"full_sink_is_reported", full_sink_is_reported},
    {"resume_continues_identical_loss_curve", resume_continues_identical_loss_curve},
};

}  // namespace

BT_TEST_MAIN("checkpoint", kCases)

// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the checkpoint loader (clang -fsanitize=fuzzer,
// address,undefined; built and run by tools/check.d/46-fuzz-checkpoint.sh).
//
// Every input is loaded against several layouts (those of the seeds in
// fuzz/corpus/, made by fuzz/make_corpus.py), through the two-pass loader,
// the one-pass scratch loader and verify_checkpoint, with whole and
// piecemeal reads. Besides memory errors it traps (abort -> crash report)
// when an invariant breaks:
//  * all three agree on the status;
//  * on failure, no byte of any section changed (all-or-nothing);
//  * on success, the sections hold the input's payload bytes, and saving
//    them again reproduces the input's first checkpoint_bytes() bytes.
#include <burtorch/tools/checkpoint.hpp>

#include <cstdlib>
#include <cstring>

namespace bt = burtorch;

namespace {

struct Input {
  const std::uint8_t* data;
  std::size_t size;
  std::size_t position;
  std::size_t piece;  // most bytes one read returns
};

bt::Status input_read(void* context, std::uint8_t* out, std::size_t size, std::size_t* got) {
  Input* in = static_cast<Input*>(context);
  std::size_t n = in->size - in->position;
  n = (size < n) ? size : n;
  n = (in->piece < n) ? in->piece : n;
  if (n != 0U) {
    std::memcpy(out, &in->data[in->position], n);
  }
  in->position += n;
  *got = n;
  return bt::Status::kOk;
}

bt::Status input_rewind(void* context) {
  static_cast<Input*>(context)->position = 0U;
  return bt::Status::kOk;
}

struct Capture {
  std::uint8_t bytes[512];
  std::size_t size;
};

bt::Status capture_write(void* context, const std::uint8_t* data, std::size_t size) {
  Capture* c = static_cast<Capture*>(context);
  if (size > (sizeof(c->bytes) - c->size)) {
    return bt::Status::kIoError;
  }
  std::memcpy(&c->bytes[c->size], data, size);
  c->size += size;
  return bt::Status::kOk;
}

struct Layout {
  bt::ScalarKind kind;
  std::size_t count;
  std::uint32_t tags[3];
  std::size_t bytes[3];
};

constexpr std::uint32_t kParm = bt::make_tag('P', 'A', 'R', 'M');
constexpr std::uint32_t kAdam = bt::make_tag('A', 'D', 'A', 'M');
constexpr std::uint32_t kStep = bt::make_tag('S', 'T', 'E', 'P');

const Layout kLayouts[] = {
    {bt::ScalarKind::kFloat64, 1U, {bt::kTagValues, 0U, 0U}, {56U, 0U, 0U}},
    {bt::ScalarKind::kFloat64, 2U, {bt::kTagValues, bt::kTagGrads, 0U}, {56U, 56U, 0U}},
    {bt::ScalarKind::kFloat32, 1U, {bt::kTagValues, 0U, 0U}, {28U, 0U, 0U}},
    {bt::ScalarKind::kFloat64, 3U, {kParm, kAdam, kStep}, {64U, 64U, 8U}},
    {bt::ScalarKind::kBytes, 0U, {0U, 0U, 0U}, {0U, 0U, 0U}},
};

constexpr std::uint8_t kCanary = 0xA5U;
constexpr std::size_t kMaxPayload = 192U;

void require(bool condition) {
  if (!condition) {
    std::abort();
  }
}

// Loads `data` against one layout in one way; returns the status and fills
// `memory` (the sections, back to back, canary-filled before).
enum class Way { kTwoPass, kScratch, kVerify };

bt::Status load(const Layout& l, const std::uint8_t* data, std::size_t size, std::size_t piece, Way way,
                std::uint8_t* memory) {
  std::memset(memory, kCanary, kMaxPayload);
  bt::Section sections[3];
  std::size_t at = 0U;
  for (std::size_t i = 0U; i < l.count; ++i) {
    sections[i] = bt::Section{&memory[at], l.bytes[i], l.tags[i]};
    at += l.bytes[i];
  }
  Input in{data, size, 0U, piece};
  const bt::ByteSource source{&input_read, &in, &input_rewind};
  std::uint8_t scratch[kMaxPayload];
  switch (way) {
    case Way::kTwoPass:
      return bt::load_checkpoint(source, l.kind, sections, l.count);
    case Way::kScratch:
      return bt::load_checkpoint(bt::ByteSource{&input_read, &in, nullptr}, l.kind, sections, l.count, scratch,
                                 sizeof(scratch));
    case Way::kVerify:
    default:
      return bt::verify_checkpoint(source, l.kind, sections, l.count);
  }
}

void check_layout(const Layout& l, const std::uint8_t* data, std::size_t size) {
  std::size_t payload = 0U;
  for (std::size_t i = 0U; i < l.count; ++i) {
    payload += l.bytes[i];
  }
  const std::size_t total = bt::checkpoint_overhead(l.count) + payload;
  const std::size_t header = total - payload - bt::kCheckpointCrcBytes;
  // Piece size from the input's length: 1..7 bytes, or all at once.
  const std::size_t piece = ((size % 8U) == 0U) ? static_cast<std::size_t>(-1) : (size % 8U);

  std::uint8_t a[kMaxPayload];
  std::uint8_t b[kMaxPayload];
  std::uint8_t c[kMaxPayload];
  const bt::Status two = load(l, data, size, static_cast<std::size_t>(-1), Way::kTwoPass, a);
  const bt::Status one = load(l, data, size, piece, Way::kScratch, b);
  const bt::Status verified = load(l, data, size, piece, Way::kVerify, c);
  require((two == one) && (one == verified));

  // verify_checkpoint never writes.
  for (std::size_t i = 0U; i < kMaxPayload; ++i) {
    require(c[i] == kCanary);
  }
  if (two != bt::Status::kOk) {
    for (std::size_t i = 0U; i < kMaxPayload; ++i) {
      require((a[i] == kCanary) && (b[i] == kCanary));
    }
    require(two != bt::Status::kInvalidArgument);
    return;
  }
  require(size >= total);
  require(std::memcmp(a, &data[header], payload) == 0);
  require(std::memcmp(b, &data[header], payload) == 0);
  // Saving what was loaded gives back the same bytes.
  bt::Section sections[3];
  std::size_t at = 0U;
  for (std::size_t i = 0U; i < l.count; ++i) {
    sections[i] = bt::Section{&a[at], l.bytes[i], l.tags[i]};
    at += l.bytes[i];
  }
  Capture out{};
  require(bt::save_checkpoint(bt::ByteSink{&capture_write, &out}, l.kind, sections, l.count) == bt::Status::kOk);
  require((out.size == total) && (std::memcmp(out.bytes, data, total) == 0));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  for (const Layout& l : kLayouts) {
    check_layout(l, data, size);
  }
  return 0;
}

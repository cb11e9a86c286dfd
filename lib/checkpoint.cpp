// SPDX-License-Identifier: Apache-2.0
// Checkpoint writer and loader (docs/checkpoint-format.md).
//
// The loader never trusts a size from the stream: the caller states the
// layout it expects, and every header and table field is compared with it.
// So the number of bytes read is fixed before the first read, and a
// corrupted or hostile stream can only fail a comparison or the CRC.
#include "burtorch/tools/checkpoint.hpp"

#include <cstring>
#include <limits>

namespace burtorch {
namespace {

// --- CRC-32, four bits at a time (a 64-byte table: cheap in flash) ----------
constexpr std::uint32_t kCrcPolynomial = 0xEDB88320U;  // reflected 0x04C11DB7

struct CrcTable {
  std::uint32_t entry[16];
};

constexpr CrcTable make_crc_table() noexcept {
  CrcTable table{};
  for (std::uint32_t i = 0U; i < 16U; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 4; ++k) {
      c = ((c & 1U) != 0U) ? ((c >> 1U) ^ kCrcPolynomial) : (c >> 1U);
    }
    table.entry[i] = c;
  }
  return table;
}

constexpr CrcTable kCrcTable = make_crc_table();

// The running register (pre-inverted), so a stream is folded in pieces.
std::uint32_t crc_update(std::uint32_t reg, const std::uint8_t* data, std::size_t size) noexcept {
  for (std::size_t i = 0U; i < size; ++i) {
    reg ^= data[i];
    reg = (reg >> 4U) ^ kCrcTable.entry[reg & 0x0FU];
    reg = (reg >> 4U) ^ kCrcTable.entry[reg & 0x0FU];
  }
  return reg;
}

// --- little-endian fields ----------------------------------------------------
void put_u32(std::uint8_t* out, std::uint32_t v) noexcept {
  for (std::size_t i = 0U; i < 4U; ++i) {
    out[i] = static_cast<std::uint8_t>(v >> (8U * i));
  }
}
void put_u64(std::uint8_t* out, std::uint64_t v) noexcept {
  for (std::size_t i = 0U; i < 8U; ++i) {
    out[i] = static_cast<std::uint8_t>(v >> (8U * i));
  }
}
std::uint32_t get_u32(const std::uint8_t* in) noexcept {
  std::uint32_t v = 0U;
  for (std::size_t i = 4U; i-- > 0U;) {
    v = (v << 8U) | in[i];
  }
  return v;
}
std::uint64_t get_u64(const std::uint8_t* in) noexcept {
  std::uint64_t v = 0U;
  for (std::size_t i = 8U; i-- > 0U;) {
    v = (v << 8U) | in[i];
  }
  return v;
}

constexpr std::size_t kSizeMax = std::numeric_limits<std::size_t>::max();
constexpr std::uint8_t kMagic[4] = {'B', 'T', 'C', 'K'};
constexpr std::uint8_t kLittleEndian = 1U;
constexpr std::uint8_t kBigEndian = 2U;
// Payload is read through this stack buffer while verifying.
constexpr std::size_t kChunkBytes = 256U;

std::uint8_t host_byte_order() noexcept {
  const std::uint16_t probe = 1U;
  std::uint8_t first = 0U;
  std::memcpy(&first, &probe, 1U);  // BT-DEV-010
  return (first == 1U) ? kLittleEndian : kBigEndian;
}

bool valid_kind(ScalarKind kind) noexcept { return kind <= ScalarKind::kFloat64; }

std::uint8_t scalar_size(ScalarKind kind) noexcept {
  std::uint8_t size = 1U;
  if (kind == ScalarKind::kFloat32) {
    size = static_cast<std::uint8_t>(sizeof(float));
  } else if (kind == ScalarKind::kFloat64) {
    size = static_cast<std::uint8_t>(sizeof(double));
  } else {
    // kBytes: opaque bytes
  }
  return size;
}

void make_header(std::uint8_t* out, ScalarKind kind, std::size_t count) noexcept {
  std::memcpy(out, kMagic, sizeof(kMagic));  // BT-DEV-010
  out[4] = kCheckpointVersion;
  out[5] = static_cast<std::uint8_t>(kind);
  out[6] = scalar_size(kind);
  out[7] = host_byte_order();
  put_u32(&out[8], static_cast<std::uint32_t>(count));
}

void make_entry(std::uint8_t* out, std::uint32_t tag, std::size_t bytes) noexcept {
  put_u32(out, tag);
  put_u64(&out[4], static_cast<std::uint64_t>(bytes));
}

// A section as the writer sees it: read-only.
struct ConstSection {
  const void* data;
  std::size_t bytes;
  std::uint32_t tag;
};

// The first byte and the length of either kind of section, for the templates
// below (which read both kinds through these, not through the members).
const void* section_data(const Section& s) noexcept { return s.data; }
const void* section_data(const ConstSection& s) noexcept { return s.data; }
std::size_t section_bytes(const Section& s) noexcept { return s.bytes; }
std::size_t section_bytes(const ConstSection& s) noexcept { return s.bytes; }

// Arguments shared by save and load. Sets *payload to the sum of bytes.
template <class S>
Status check_layout(ScalarKind kind, const S* sections, std::size_t count, std::size_t* payload) noexcept {
  *payload = 0U;
  const std::uint32_t count32 = static_cast<std::uint32_t>(count);
  if (!valid_kind(kind) || ((sections == nullptr) && (count != 0U)) || (count32 != count)) {
    return Status::kInvalidArgument;
  }
  std::size_t total = 0U;
  for (std::size_t i = 0U; i < count; ++i) {
    const std::size_t bytes = section_bytes(sections[i]);
    if (((section_data(sections[i]) == nullptr) && (bytes != 0U)) || (bytes > (kSizeMax - total))) {
      return Status::kInvalidArgument;
    }
    total += bytes;
  }
  *payload = total;
  return Status::kOk;
}

// Writes through the sink and the CRC; remembers the first error.
class CrcWriter {
 public:
  explicit CrcWriter(ByteSink sink) noexcept : sink_(sink) {}
  void put(const void* data, std::size_t size) noexcept {
    if ((status_ == Status::kOk) && (size != 0U)) {
      const std::uint8_t* bytes = static_cast<const std::uint8_t*>(data);
      reg_ = crc_update(reg_, bytes, size);
      status_ = sink_.write(sink_.context, bytes, size);  // BT-DEV-003: caller's byte sink
    }
  }
  std::uint32_t crc() const noexcept { return ~reg_; }
  Status status() const noexcept { return status_; }

 private:
  ByteSink sink_;
  std::uint32_t reg_ = 0xFFFFFFFFU;
  Status status_ = Status::kOk;
};

template <class S>
Status write_checkpoint(ByteSink sink, ScalarKind kind, const S* sections, std::size_t count) noexcept {
  std::size_t payload = 0U;
  const Status layout = check_layout(kind, sections, count, &payload);
  if (layout != Status::kOk) {
    return layout;
  }
  if (sink.write == nullptr) {
    return Status::kInvalidArgument;
  }
  CrcWriter out(sink);
  std::uint8_t field[kCheckpointHeaderBytes];
  make_header(field, kind, count);
  out.put(field, kCheckpointHeaderBytes);
  for (std::size_t i = 0U; i < count; ++i) {
    make_entry(field, sections[i].tag, section_bytes(sections[i]));
    out.put(field, kCheckpointEntryBytes);
  }
  for (std::size_t i = 0U; i < count; ++i) {
    out.put(section_data(sections[i]), section_bytes(sections[i]));
  }
  if (out.status() != Status::kOk) {
    return out.status();
  }
  put_u32(field, out.crc());
  return sink.write(sink.context, field, kCheckpointCrcBytes);  // BT-DEV-003: caller's byte sink
}

// Reads exactly `size` bytes, calling the source until it has them. A source
// that ends early gives kTruncated; one that claims more than asked, kIoError.
class Reader {
 public:
  explicit Reader(ByteSource source) noexcept : source_(source) {}
  Status read(void* data, std::size_t size) noexcept {
    std::uint8_t* at = static_cast<std::uint8_t*>(data);
    std::size_t done = 0U;
    while (done < size) {
      std::size_t got = 0U;
      const Status s = source_.read(source_.context, &at[done], size - done, &got);  // BT-DEV-003
      if (s != Status::kOk) {
        return s;
      }
      if (got > (size - done)) {
        return Status::kIoError;
      }
      if (got == 0U) {
        return Status::kTruncated;
      }
      done += got;
    }
    reg_ = crc_update(reg_, at, size);
    return Status::kOk;
  }
  // Reads into a stack buffer, chunk by chunk: bytes that go nowhere.
  Status skip(std::size_t size) noexcept {
    std::uint8_t chunk[kChunkBytes];
    Status s = Status::kOk;
    while ((size != 0U) && (s == Status::kOk)) {
      const std::size_t n = (size < kChunkBytes) ? size : kChunkBytes;
      s = read(chunk, n);
      size -= n;
    }
    return s;
  }
  // Reads the stored CRC (not itself checksummed) and compares.
  Status check_crc() noexcept {
    const std::uint32_t expected = ~reg_;
    std::uint8_t field[kCheckpointCrcBytes];
    const Status s = read(field, kCheckpointCrcBytes);
    if (s != Status::kOk) {
      return s;
    }
    return (get_u32(field) == expected) ? Status::kOk : Status::kChecksumMismatch;
  }
  Status rewind() noexcept {
    reg_ = 0xFFFFFFFFU;
    return (source_.rewind != nullptr) ? source_.rewind(source_.context)  // BT-DEV-003
                                       : Status::kInvalidArgument;
  }

 private:
  ByteSource source_;
  std::uint32_t reg_ = 0xFFFFFFFFU;
};

// Header and table: every field must equal what the caller's layout implies.
Status read_frame(Reader& in, ScalarKind kind, const Section* sections, std::size_t count) noexcept {
  std::uint8_t field[kCheckpointHeaderBytes];
  std::uint8_t expected[kCheckpointHeaderBytes];
  Status s = in.read(field, kCheckpointHeaderBytes);
  if (s != Status::kOk) {
    return s;
  }
  make_header(expected, kind, count);
  if (std::memcmp(field, expected, kCheckpointHeaderBytes) != 0) {  // BT-DEV-010
    return Status::kBadFormat;
  }
  for (std::size_t i = 0U; i < count; ++i) {
    s = in.read(field, kCheckpointEntryBytes);
    if (s != Status::kOk) {
      return s;
    }
    if ((get_u32(field) != sections[i].tag) ||
        (get_u64(&field[4]) != static_cast<std::uint64_t>(sections[i].bytes))) {
      return Status::kBadFormat;
    }
  }
  return Status::kOk;
}

// Pass 1: frame, payload into the stack chunk, CRC. Writes nothing.
Status verify_pass(Reader& in, ScalarKind kind, const Section* sections, std::size_t count) noexcept {
  Status s = read_frame(in, kind, sections, count);
  for (std::size_t i = 0U; (i < count) && (s == Status::kOk); ++i) {
    s = in.skip(sections[i].bytes);
  }
  return (s == Status::kOk) ? in.check_crc() : s;
}

Status check_source(ByteSource source) noexcept {
  return (source.read == nullptr) ? Status::kInvalidArgument : Status::kOk;
}

}  // namespace

std::uint32_t crc32(std::uint32_t crc, const void* data, std::size_t size) noexcept {
  if ((data == nullptr) || (size == 0U)) {
    return crc;
  }
  return ~crc_update(~crc, static_cast<const std::uint8_t*>(data), size);
}

std::size_t checkpoint_bytes(const Section* sections, std::size_t count) noexcept {
  std::size_t payload = 0U;
  if (check_layout(ScalarKind::kBytes, sections, count, &payload) != Status::kOk) {
    return 0U;
  }
  const std::size_t overhead = checkpoint_overhead(count);
  return (payload <= (kSizeMax - overhead)) ? (payload + overhead) : 0U;
}

Status save_checkpoint(ByteSink sink, ScalarKind kind, const Section* sections, std::size_t count) noexcept {
  return write_checkpoint(sink, kind, sections, count);
}

Status verify_checkpoint(ByteSource source, ScalarKind kind, const Section* sections, std::size_t count) noexcept {
  std::size_t payload = 0U;
  Status s = check_layout(kind, sections, count, &payload);
  if (s == Status::kOk) {
    s = check_source(source);
  }
  if (s != Status::kOk) {
    return s;
  }
  Reader in(source);
  return verify_pass(in, kind, sections, count);
}

Status load_checkpoint(ByteSource source, ScalarKind kind, const Section* sections, std::size_t count) noexcept {
  std::size_t payload = 0U;
  Status s = check_layout(kind, sections, count, &payload);
  if (s == Status::kOk) {
    s = check_source(source);
  }
  if ((s == Status::kOk) && (source.rewind == nullptr)) {
    s = Status::kInvalidArgument;  // use the scratch overload
  }
  if (s != Status::kOk) {
    return s;
  }
  Reader in(source);
  s = verify_pass(in, kind, sections, count);
  if (s != Status::kOk) {
    return s;  // nothing written
  }
  // Pass 2: the same bytes again, now into the sections.
  s = in.rewind();
  if (s == Status::kOk) {
    s = read_frame(in, kind, sections, count);
  }
  for (std::size_t i = 0U; (i < count) && (s == Status::kOk); ++i) {
    s = in.read(sections[i].data, sections[i].bytes);
  }
  if (s == Status::kOk) {
    s = in.check_crc();
  }
  // The source changed between the passes: report it as an I/O failure.
  return (s == Status::kOk) ? Status::kOk : Status::kIoError;
}

Status load_checkpoint(ByteSource source, ScalarKind kind, const Section* sections, std::size_t count,
                       void* scratch, std::size_t scratch_bytes) noexcept {
  std::size_t payload = 0U;
  Status s = check_layout(kind, sections, count, &payload);
  if (s == Status::kOk) {
    s = check_source(source);
  }
  if ((s == Status::kOk) && (((scratch == nullptr) && (payload != 0U)) || (scratch_bytes < payload))) {
    s = Status::kInvalidArgument;
  }
  if (s != Status::kOk) {
    return s;
  }
  Reader in(source);
  s = read_frame(in, kind, sections, count);
  if (s == Status::kOk) {
    s = in.read(scratch, payload);
  }
  if (s == Status::kOk) {
    s = in.check_crc();
  }
  if (s != Status::kOk) {
    return s;  // nothing written outside the scratch
  }
  const std::uint8_t* from = static_cast<const std::uint8_t*>(scratch);
  for (std::size_t i = 0U; i < count; ++i) {
    // check_layout() and the scratch check above already rule out null here; restated for the analyzer.
    if ((sections[i].bytes != 0U) && (sections[i].data != nullptr) && (from != nullptr)) {
      std::memcpy(sections[i].data, from, sections[i].bytes);  // BT-DEV-010
      from += sections[i].bytes;
    }
  }
  return Status::kOk;
}

template <class T>
Status save_nodes(const Tape<T>& tape, Index first, Index count, bool with_grads, ByteSink sink) noexcept {
  if ((first > tape.size()) || (count > (tape.size() - first))) {
    return Status::kInvalidArgument;
  }
  const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(T);
  const ConstSection sections[2] = {{tape.values() + first, bytes, kTagValues},
                                    {tape.grads() + first, bytes, kTagGrads}};
  return write_checkpoint(sink, ScalarKindOf<T>::value, sections, with_grads ? 2U : 1U);
}

template <class T>
Status load_nodes(Tape<T>& tape, Index first, Index count, bool with_grads, ByteSource source) noexcept {
  const Section sections[2] = {node_values(tape, first, count), node_grads(tape, first, count)};
  return load_checkpoint(source, ScalarKindOf<T>::value, sections, with_grads ? 2U : 1U);
}

template <class T>
Status load_nodes(Tape<T>& tape, Index first, Index count, bool with_grads, ByteSource source, void* scratch,
                  std::size_t scratch_bytes) noexcept {
  const Section sections[2] = {node_values(tape, first, count), node_grads(tape, first, count)};
  return load_checkpoint(source, ScalarKindOf<T>::value, sections, with_grads ? 2U : 1U, scratch, scratch_bytes);
}

template Status save_nodes<float>(const Tape<float>&, Index, Index, bool, ByteSink) noexcept;
template Status save_nodes<double>(const Tape<double>&, Index, Index, bool, ByteSink) noexcept;
template Status load_nodes<float>(Tape<float>&, Index, Index, bool, ByteSource) noexcept;
template Status load_nodes<double>(Tape<double>&, Index, Index, bool, ByteSource) noexcept;
template Status load_nodes<float>(Tape<float>&, Index, Index, bool, ByteSource, void*, std::size_t) noexcept;
template Status load_nodes<double>(Tape<double>&, Index, Index, bool, ByteSource, void*, std::size_t) noexcept;

}  // namespace burtorch

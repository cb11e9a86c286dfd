// SPDX-License-Identifier: Apache-2.0
/// @file
/// Checkpoints: raw contiguous sections of bytes (parameters, gradients,
/// optimizer moments, trainer counters) framed by a header and a CRC-32.
/// Format and usage: docs/checkpoint-format.md. Loading is all-or-nothing.
///
///   header   12 bytes   "BTCK", version, scalar kind, scalar size, byte order,
///                       section count (u32 little-endian)
///   table    12 bytes   per section: tag (u32 LE), size in bytes (u64 LE)
///   payload             the sections' bytes, raw, in order, no padding
///   crc       4 bytes   CRC-32 (IEEE, as zlib) of everything before it
///
/// Overhead: 16 + 12 * sections bytes (28 bytes for one section).
///
/// How loading stays all-or-nothing without a heap (pick one):
///  * load_checkpoint(source, ...) reads the stream twice. Pass 1 checks the
///    header, the table and the CRC into a small stack buffer and writes
///    nothing. Only if all of it is right does it call source.rewind and copy
///    the payload into the sections in pass 2. The source must be rewindable
///    (FileReader and memory_source are) and must return the same bytes both
///    times; a file replaced by an atomic save keeps its old contents for an
///    open reader, so that holds for checkpoints written by this library.
///    Pass 2 checks the CRC again and reports kIoError if the bytes changed
///    in between; that is the only case in which sections may have been
///    written.
///  * load_checkpoint(source, ..., scratch, scratch_bytes) reads the payload
///    once into caller memory of at least the payload's size, checks it, then
///    copies it. Works with any source (a UART, a socket) and no precondition.
#ifndef BURTORCH_TOOLS_CHECKPOINT_HPP
#define BURTORCH_TOOLS_CHECKPOINT_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/status.hpp"
#include "burtorch/tools/stream.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {

/// What the payload's scalars are, recorded in the header and checked on load.
/// kBytes: the payload is opaque bytes (scalar size 1).
enum class ScalarKind : std::uint8_t { kBytes = 0, kFloat32 = 1, kFloat64 = 2 };

/// The kind of a tape's scalar type: ScalarKindOf<double>::value == kFloat64.
template <class T>
struct ScalarKindOf;
/// float: ScalarKind::kFloat32.
template <>
struct ScalarKindOf<float> {
  static constexpr ScalarKind value = ScalarKind::kFloat32;  ///< the kind
};
/// double: ScalarKind::kFloat64.
template <>
struct ScalarKindOf<double> {
  static constexpr ScalarKind value = ScalarKind::kFloat64;  ///< the kind
};

/// A section tag from four characters; they read in order in a hex dump.
constexpr std::uint32_t make_tag(char a, char b, char c, char d) noexcept {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(a)) |
         (static_cast<std::uint32_t>(static_cast<unsigned char>(b)) << 8U) |
         (static_cast<std::uint32_t>(static_cast<unsigned char>(c)) << 16U) |
         (static_cast<std::uint32_t>(static_cast<unsigned char>(d)) << 24U);
}
/// Tags used by save_nodes/load_nodes and node_values/node_grads.
/// @{
constexpr std::uint32_t kTagValues = make_tag('V', 'A', 'L', 'U');
constexpr std::uint32_t kTagGrads = make_tag('G', 'R', 'A', 'D');
/// @}

/// One block of memory saved or restored as is. `tag` names its role (the
/// loader checks that tags and sizes match, in order).
struct Section {
  void* data;          ///< first byte
  std::size_t bytes;   ///< length in bytes
  std::uint32_t tag;   ///< role of the section (make_tag)
};

constexpr std::uint8_t kCheckpointVersion = 1U;        ///< format version written
constexpr std::size_t kCheckpointHeaderBytes = 12U;  ///< fixed header
constexpr std::size_t kCheckpointEntryBytes = 12U;  ///< per section
constexpr std::size_t kCheckpointCrcBytes = 4U;  ///< the CRC-32 at the end

/// Bytes a checkpoint adds to its payload.
constexpr std::size_t checkpoint_overhead(std::size_t sections) noexcept {
  return kCheckpointHeaderBytes + (kCheckpointEntryBytes * sections) + kCheckpointCrcBytes;
}
/// Total size of the checkpoint of these sections (0 if a size overflows).
std::size_t checkpoint_bytes(const Section* sections, std::size_t count) noexcept;

/// CRC-32 (IEEE 802.3, reflected, as zlib.crc32): crc32(0, data, n) starts a
/// checksum, crc32(previous, more, m) continues it.
std::uint32_t crc32(std::uint32_t crc, const void* data, std::size_t size) noexcept;

/// Writes header, sections and CRC-32 to `sink`. kInvalidArgument for a bad
/// kind, a null section with bytes, or more than 2^32 - 1 sections; else the
/// sink's first error, or kOk. Use port::FileWriter (atomic) on POSIX.
Status save_checkpoint(ByteSink sink, ScalarKind kind, const Section* sections, std::size_t count) noexcept;

/// Reads a checkpoint written with the same kind and section layout. On any
/// error (short read: kTruncated; wrong magic/version/kind/size/byte
/// order/count/tags: kBadFormat; CRC mismatch: kChecksumMismatch; stream
/// failure: kIoError) it returns the error and leaves every section's memory
/// untouched. Needs source.rewind (kInvalidArgument without). Reads exactly
/// checkpoint_bytes() bytes: whatever follows in the stream is not read.
Status load_checkpoint(ByteSource source, ScalarKind kind, const Section* sections, std::size_t count) noexcept;

/// The same in one pass through caller scratch memory of at least the payload
/// size (sum of the sections' bytes), which must not overlap any section.
/// Any source works; kInvalidArgument if the scratch is too small.
Status load_checkpoint(ByteSource source, ScalarKind kind, const Section* sections, std::size_t count,
                       void* scratch, std::size_t scratch_bytes) noexcept;

/// Pass 1 alone: checks a checkpoint against the layout, writes nothing.
Status verify_checkpoint(ByteSource source, ScalarKind kind, const Section* sections, std::size_t count) noexcept;

/// Sections over nodes [first, first + count) of a tape: their values or
/// gradients. A range outside [0, size()) gives {nullptr, 1, tag}, which
/// save/load reject with kInvalidArgument.
template <class T>
Section node_values(Tape<T>& tape, Index first, Index count, std::uint32_t tag = kTagValues) noexcept {
  const bool ok = (first <= tape.size()) && (count <= (tape.size() - first));
  return ok ? Section{tape.values() + first, static_cast<std::size_t>(count) * sizeof(T), tag}
            : Section{nullptr, 1U, tag};
}
/// The gradients of nodes [first, first + count) as a section (see node_values).
template <class T>
Section node_grads(Tape<T>& tape, Index first, Index count, std::uint32_t tag = kTagGrads) noexcept {
  const bool ok = (first <= tape.size()) && (count <= (tape.size() - first));
  return ok ? Section{tape.grads() + first, static_cast<std::size_t>(count) * sizeof(T), tag}
            : Section{nullptr, 1U, tag};
}

/// The paper's save/load of created nodes: values (and optionally gradients)
/// of nodes [first, first + count) of a tape, as sections kTagValues (and
/// kTagGrads). The nodes must exist on the tape before loading (record the
/// model first); kInvalidArgument if the range is not on the tape.
template <class T>
Status save_nodes(const Tape<T>& tape, Index first, Index count, bool with_grads, ByteSink sink) noexcept;
/// Loads what save_nodes wrote into the same nodes (all or nothing:
/// verified in a first pass, applied in a second; the source must rewind).
template <class T>
Status load_nodes(Tape<T>& tape, Index first, Index count, bool with_grads, ByteSource source) noexcept;
/// One-pass variant: scratch of at least count * sizeof(T) * (with_grads ? 2 : 1) bytes.
template <class T>
Status load_nodes(Tape<T>& tape, Index first, Index count, bool with_grads, ByteSource source, void* scratch,
                  std::size_t scratch_bytes) noexcept;

/// @cond INTERNAL
extern template Status save_nodes<float>(const Tape<float>&, Index, Index, bool, ByteSink) noexcept;
extern template Status save_nodes<double>(const Tape<double>&, Index, Index, bool, ByteSink) noexcept;
extern template Status load_nodes<float>(Tape<float>&, Index, Index, bool, ByteSource) noexcept;
extern template Status load_nodes<double>(Tape<double>&, Index, Index, bool, ByteSource) noexcept;
extern template Status load_nodes<float>(Tape<float>&, Index, Index, bool, ByteSource, void*,
                                         std::size_t) noexcept;
extern template Status load_nodes<double>(Tape<double>&, Index, Index, bool, ByteSource, void*,
                                          std::size_t) noexcept;
/// @endcond

}  // namespace burtorch

#endif  // BURTORCH_TOOLS_CHECKPOINT_HPP

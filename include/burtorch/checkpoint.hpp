// Checkpoints: raw contiguous sections of bytes (parameters, gradients,
// optimizer moments, trainer counters) framed by a header and a CRC-32.
// Format: docs/checkpoint-format.md. Loading is all-or-nothing.
#ifndef BURTORCH_CHECKPOINT_HPP
#define BURTORCH_CHECKPOINT_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/status.hpp"
#include "burtorch/stream.hpp"
#include "burtorch/tape.hpp"

namespace burtorch {

// What the payload's scalars are, recorded in the header and checked on load.
enum class ScalarKind : std::uint8_t { kBytes = 0, kFloat32 = 1, kFloat64 = 2 };

// One block of memory saved or restored as is. `tag` names its role (the
// loader checks that tags and sizes match, in order).
struct Section {
  void* data;
  std::size_t bytes;
  std::uint32_t tag;
};

// Writes header, sections and CRC-32 to `sink`.
Status save_checkpoint(ByteSink sink, ScalarKind kind, const Section* sections, std::size_t count) noexcept;

// Reads a checkpoint written with the same kind and section layout. On any
// error (short read, wrong magic/version/kind/size/tags, CRC mismatch) it
// returns the error and leaves every section's memory untouched.
Status load_checkpoint(ByteSource source, ScalarKind kind, const Section* sections, std::size_t count) noexcept;

// The paper's save/load of created nodes: values (and optionally gradients)
// of nodes [first, first + count) of a tape.
template <class T>
Status save_nodes(const Tape<T>& tape, Index first, Index count, bool with_grads, ByteSink sink) noexcept;
template <class T>
Status load_nodes(Tape<T>& tape, Index first, Index count, bool with_grads, ByteSource source) noexcept;

}  // namespace burtorch

#endif  // BURTORCH_CHECKPOINT_HPP

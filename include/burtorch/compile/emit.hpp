// SPDX-License-Identifier: Apache-2.0
/// @file
/// Record once, compile the step: a tape holding one sample's graph,
/// recorded by the model's own code between a mark and the loss, written
/// out as C++ source through a byte sink. The generated step evaluates
/// the same nodes as replay (tools/replay.hpp) does, with the same rows, in
/// the same order, so it computes the same bits, without a tape:
///
///   - forward: one statement per node (a loop over a run of alike nodes:
///     a layer's rows, its activations), each the op's row inlined with its
///     node indices as constants; the wide ops (inner products, layer rows,
///     reductions) call the kernels replay calls;
///   - backward: the sweep's steps in the sweep's order, each skipped for a
///     zero gradient as the sweep skips it;
///   - SGD on the trainable parameters (the optimizer's kernel).
///
/// The generated header holds the sizes as constexpr (kNodes: the values
/// and gradients arrays the caller owns; kInputs, kTargets, kClasses,
/// kParams, ...) and declares
///
///   burtorch::Status step(Scalar* v, Scalar* g, const Scalar* x, const Scalar* y, burtorch::Index label);
///   void sgd(Scalar* v, Scalar* g, Scalar lr, Scalar scale);
///
/// v and g are indexed as the tape's nodes: v[0..kNodes) holds the
/// parameters where the tape held them (the caller loads and keeps them),
/// g accumulates their gradients over a batch until sgd() applies and
/// clears them. x: the sample's inputs (kInputs), y: its regression
/// targets (kTargets: the differences of nn::mse), label: its class
/// (cross-entropy's target, < kClasses). The source includes
/// <burtorch/compile/step.hpp> and links the library's kernels only.
///
/// Refused, nothing emitted past what the sink took (a Refusal says which
/// node and why): a tape holding an error; a mark or root that replay()
/// would refuse; an interior node before the mark (the step starts at the
/// mark); a node of an op family (ext/extension.hpp: fused rows, frozen
/// layers, lanes, a program's own ops: not in this first version); a
/// folded constant replay could not keep; a stop_gradient() after the mark;
/// parameters, inputs, targets or a class loss that are not what the
/// spec says they are. A graph is the path one sample took: a model whose
/// recording depends on its data (a branch on a value) records another
/// graph for another sample, which no compiled step can express; the
/// digest (structure_digest) tells the recordings apart, and a program that
/// checks it against the generated kDigest finds the difference.
/// An error of the sink (memory_sink full: kIoError) stops the emitter and
/// is returned.
#ifndef BURTORCH_COMPILE_EMIT_HPP
#define BURTORCH_COMPILE_EMIT_HPP

#include <cstdint>

#include "burtorch/core/handles.hpp"
#include "burtorch/core/tape.hpp"
#include "burtorch/index.hpp"
#include "burtorch/status.hpp"
#include "burtorch/tools/stream.hpp"

namespace burtorch {
namespace compile {

/// What the step reads and updates, and how the source is laid out.
struct StepSpec {
  /// The generated code's namespace (a C++ identifier; its header guard too).
  const char* name = "compiled_step";
  /// The header the source includes ("<name>.hpp" if null).
  const char* header = nullptr;
  /// The trainable parameters: leaves recorded before the mark (sgd()
  /// updates them). kNoView (count 0): no update.
  View params = kNoView;
  /// The sample's inputs: sources (leaves or inputs) recorded after the mark,
  /// set from x[0..count). Count 0: none.
  View inputs = kNoView;
  /// Regression targets: the differences pred - y[k] (x - c nodes, as
  /// nn::mse records them), consecutive; y[k] is an argument. Count 0: none.
  View targets = kNoView;
  /// A cross-entropy node (nn::cross_entropy: log-sum-exp minus the
  /// target's logit) whose target is the argument `label`; kNoIndex: none.
  Index class_loss = kNoIndex;
  /// A run of at least this many alike nodes (the same op, operands moving
  /// by 0 or 1 per node) becomes a loop; 0: straight-line code only.
  Index min_run = 4U;
};

/// Which file emit_step writes.
enum class Part : std::uint8_t {
  kHeader,  ///< the sizes and the declarations
  kSource,  ///< the definitions (includes the header)
};

/// What emit_step did: kOk, or why it refused (the node it could not
/// emit, or kNoIndex if the refusal is not about one node).
struct Refusal {
  Status status = Status::kOk;  ///< kOk, kInvalidArgument, or the sink's error
  Index node = kNoIndex;        ///< the node refused
  const char* reason = "";      ///< a sentence for a human
};

/// Writes one part of the compiled step of the graph recorded on `tape`
/// after `from` with loss `root` (see the file comment).
template <class T>
Refusal emit_step(const Tape<T>& tape, Mark from, Value<T> root, const StepSpec& spec, Part part,
                  ByteSink sink) noexcept;

/// A 32-bit digest of the recording's structure as `spec` reads it (op
/// codes, operand fields but the targets', argument slots, the recorded
/// constants, mark and root): equal for two recordings one compiled step
/// serves, different (with FNV-1a's odds) otherwise. The generated header
/// holds it as kDigest: a program that records the model on the device can
/// check that the step it links is the step of that recording.
template <class T>
std::uint32_t structure_digest(const Tape<T>& tape, Mark from, Value<T> root, const StepSpec& spec) noexcept;

/// @cond INTERNAL
extern template Refusal emit_step<float>(const Tape<float>&, Mark, Value<float>, const StepSpec&, Part,
                                         ByteSink) noexcept;
extern template Refusal emit_step<double>(const Tape<double>&, Mark, Value<double>, const StepSpec&, Part,
                                          ByteSink) noexcept;
extern template std::uint32_t structure_digest<float>(const Tape<float>&, Mark, Value<float>,
                                                      const StepSpec&) noexcept;
extern template std::uint32_t structure_digest<double>(const Tape<double>&, Mark, Value<double>,
                                                       const StepSpec&) noexcept;
/// @endcond

}  // namespace compile
}  // namespace burtorch

#endif  // BURTORCH_COMPILE_EMIT_HPP

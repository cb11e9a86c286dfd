// SPDX-License-Identifier: Apache-2.0
/// @file
/// The tape's state (members of Tape<T>, out of line; lib/tape.cpp compiles
/// them): laying the arrays out in the caller's buffer, the sticky status
/// and the fault hook, marks and rewind, reset, zeroing gradients.
#ifndef BURTORCH_CORE_DETAIL_STATE_HPP
#define BURTORCH_CORE_DETAIL_STATE_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/core/tape.hpp"

namespace burtorch {

template <class T>
Tape<T>::Tape(void* buffer, std::size_t bytes, std::size_t nodes, std::size_t slots, std::size_t params,
              detail::ThisConfig /*flags*/) noexcept {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): BT-DEV-001
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(buffer);  // BT-DEV-001
  // The arrays start at the buffer's first kArrayAlign boundary.
  const std::size_t pad = (kArrayAlign - (address % kArrayAlign)) % kArrayAlign;
  const std::size_t required = bytes_required(nodes, slots, params);  // checks counts and overflow
  if ((buffer == nullptr) || (required == kTooLarge) || (bytes < pad) || ((bytes - pad) < required)) {
    status_ = Status::kInvalidArgument;
    return;
  }
  // BT-DEV-001: the arrays are carved out of the caller's byte buffer.
  // NOLINTBEGIN(cppcoreguidelines-pro-type-reinterpret-cast): BT-DEV-001
  unsigned char* at = &static_cast<unsigned char*>(buffer)[pad];
  // cppcheck-suppress invalidPointerCast ; BT-DEV-001
  values_ = reinterpret_cast<T*>(at);
  at += round_up(nodes * sizeof(T));
  // cppcheck-suppress invalidPointerCast ; BT-DEV-001
  grads_ = reinterpret_cast<T*>(at);
  at += round_up(nodes * sizeof(T));
  links_ = reinterpret_cast<std::uint64_t*>(at);
  at += round_up(interior_nodes(nodes, params) * sizeof(Operands));
  args_ = reinterpret_cast<Index*>(at);
  at += round_up(slots * sizeof(Index));
#if BURTORCH_CONFIG_PARAM_NAMES
  names_ = reinterpret_cast<const char**>(at);
  at += round_up(nodes * kNameBytes);
#endif
  ops_ = reinterpret_cast<Op*>(at);
  // NOLINTEND(cppcoreguidelines-pro-type-reinterpret-cast)
  capacity_ = static_cast<Index>(nodes);
  param_region_ = static_cast<Index>(params);
  floor_ = param_region_;
  limit_ = capacity_;
  append_room_ = capacity_ - param_region_;
  slot_capacity_ = static_cast<Index>(slots);
}

template <class T>
Value<T> Tape<T>::fail(Status status) noexcept {
  if (status_ == Status::kOk) {
    status_ = status;
    limit_ = 0U;  // every later push fails on its one capacity compare
    append_room_ = 0U;
#if BURTORCH_CONFIG_FAULT_HOOK
    if (fault_hook_ != nullptr) {
      fault_hook_(status, fault_context_);  // BT-DEV-003: user fault hook
    }
#endif
  }
  return Value<T>(this, kNoIndex);
}

template <class T>
Value<T> Tape<T>::fail_capacity(Index nodes, Index slots) noexcept {
  if ((nodes != 0U) && (size_ < param_region_)) {
    // An interior node inside the parameter region (fewer leaves than the
    // region holds): a misuse, not a full tape; no node count to report.
    // Slots alone (a view list) fill up as they do past the region.
    return fail(Status::kInvalidArgument);
  }
  if (status_ == Status::kOk) {
    // 64-bit sums: what no Index can count reads as the largest one.
    const std::uint64_t n = static_cast<std::uint64_t>(size_) + nodes;
    const std::uint64_t s = static_cast<std::uint64_t>(slots_used_) + slots;
    needed_nodes_ = (n < kNoIndex) ? static_cast<Index>(n) : (kNoIndex - 1U);
    needed_slots_ = (s < kNoIndex) ? static_cast<Index>(s) : (kNoIndex - 1U);
  }
  return fail(Status::kCapacityExceeded);
}

template <class T>
void Tape<T>::reject(const Tape<T>* owner) noexcept {
  Status why = Status::kForeignValue;
  if (owner == nullptr) {
    why = Status::kEmptyHandle;
  } else if (owner == this) {
    why = Status::kInvalidHandle;
    // An op refused because an operand is the invalid result of an op that
    // did not fit: it would have recorded a node too.
    if ((status_ == Status::kCapacityExceeded) && (needed_nodes_ != 0U) && (needed_nodes_ < (kNoIndex - 1U))) {
      ++needed_nodes_;
    }
  } else {
    // another tape's handle
  }
  static_cast<void>(fail(why));
}

template <class T>
void Tape<T>::clear_interior_grads(Index first, Index end) noexcept {
  for (Index i = first; i < end; ++i) {
    if (op_at(i) != Op::kLeaf) {
      grads_[i] = T(0);
    }
  }
}

template <class T>
void Tape<T>::zero_grad() noexcept {
  for (Index i = 0U; i < size_; ++i) {
    grads_[i] = T(0);
  }
}

template <class T>
void Tape<T>::zero_grad(Index first, Index count) noexcept {
  const Index end = ((first < size_) && (count <= (size_ - first))) ? (first + count) : size_;
  for (Index i = first; i < end; ++i) {
    grads_[i] = T(0);
  }
}

template <class T>
std::uint64_t Tape<T>::generation_at(std::size_t key) const noexcept {
  std::uint64_t made = floor_generation_;
  for (Index k = 0U; k < cuts_; ++k) {
    if (cut_keys_[k] < key) {
      made = cut_generations_[k];
    }
  }
  return made;
}

template <class T>
Status Tape<T>::rewind_other(Mark m) noexcept {
  if ((m.tape != this) || (m.nodes > size_) || (m.slots > slots_used_) || (m.generation > generation_)) {
    return Status::kInvalidArgument;
  }
  const std::size_t key = static_cast<std::size_t>(m.nodes) + m.slots;
  if (generation_at(key) > m.generation) {
    return Status::kInvalidArgument;  // stale: an earlier rewind discarded this position
  }
  if ((m.nodes == size_) && (m.slots == slots_used_)) {
    return Status::kOk;  // nothing to discard
  }
  // What is recorded from here on belongs to a new generation: drop the
  // remembered targets at or above this one and remember this one.
  ++generation_;
  Index kept = 0U;
  while ((kept < cuts_) && (cut_keys_[kept] < key)) {
    ++kept;
  }
  if (kept == burtorch::kMarkLevels) {
    // Forget the oldest target: the positions below it and the step above
    // it merge into the floor, with the step's (newer) generation. Marks
    // there may be refused from now on, never wrongly accepted.
    floor_generation_ = cut_generations_[0];
    for (Index k = 1U; k < burtorch::kMarkLevels; ++k) {
      cut_keys_[k - 1U] = cut_keys_[k];
      cut_generations_[k - 1U] = cut_generations_[k];
    }
    kept = burtorch::kMarkLevels - 1U;
  }
  cut_keys_[kept] = key;
  cut_generations_[kept] = generation_;
  cuts_ = static_cast<std::uint8_t>(kept + 1U);  // at most burtorch::kMarkLevels
  truncate(m.nodes, m.slots);
  return Status::kOk;
}

template <class T>
void Tape<T>::reset() noexcept {
  if (values_ == nullptr) {
    return;  // unusable buffer: keep kInvalidArgument
  }
  // Every earlier mark is stale: all positions belong to a new generation.
  ++generation_;
  floor_generation_ = generation_;
  cuts_ = 0U;
  size_ = 0U;
  slots_used_ = 0U;
  swept_end_ = 0U;
  leading_leaves_ = 0U;
  checked_list_ = kNoIndex;
  floor_ = param_region_;
  needed_nodes_ = 0U;
  needed_slots_ = 0U;
  for (detail::FamilyBackward<T>& family : families_) {
    family = nullptr;  // no node of any family is recorded now
  }
  for (detail::FamilyBackward<T>& wide : wide_) {
    wide = nullptr;  // nor of any wide op
  }
  status_ = Status::kOk;
  limit_ = capacity_;
  append_room_ = capacity_ - param_region_;
}

template <class T>
Status Tape<T>::report(Status error) noexcept {
  if ((error != Status::kOk) && (values_ != nullptr)) {
    static_cast<void>(fail(error));
  }
  return status_;
}

template <class T>
void Tape<T>::clear_status() noexcept {
  if (values_ != nullptr) {
    needed_nodes_ = 0U;
    needed_slots_ = 0U;
    status_ = Status::kOk;
    limit_ = capacity_;
    append_room_ = capacity_ - param_region_;
  }
}

template <class T>
void Tape<T>::set_fault_hook(FaultHook hook, void* context) noexcept {
#if BURTORCH_CONFIG_FAULT_HOOK
  fault_hook_ = hook;
  fault_context_ = context;
#else
  static_cast<void>(hook);
  static_cast<void>(context);
#endif
}

}  // namespace burtorch

#endif  // BURTORCH_CORE_DETAIL_STATE_HPP

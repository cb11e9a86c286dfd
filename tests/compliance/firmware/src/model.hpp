// SPDX-License-Identifier: Apache-2.0
// The product's model, behind an interface without libburtorch types: a
// 2-4-1 network (tanh, sigmoid) trained by SGD on one sample at a time.
#ifndef FW_MODEL_HPP
#define FW_MODEL_HPP

#include <cstdint>

namespace fw {

/// Creates the model. False if it does not fit its tape.
bool model_init() noexcept;
/// One SGD step on (a, b) -> target; returns the sample's loss (negative if
/// the tape failed).
float model_train_step(float a, float b, float target) noexcept;
/// CRC-16 of the parameters' bytes (to tell two trained models apart).
std::uint16_t model_checksum() noexcept;

}  // namespace fw

#endif  // FW_MODEL_HPP

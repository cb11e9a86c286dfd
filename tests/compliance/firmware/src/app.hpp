// SPDX-License-Identifier: Apache-2.0
// The firmware's job: train the model, log the loss now and then.
#ifndef FW_APP_HPP
#define FW_APP_HPP

namespace fw {

/// Runs the training; returns the process exit code (0: the loss fell below
/// 0.05).
int run() noexcept;

}  // namespace fw

#endif  // FW_APP_HPP

// SPDX-License-Identifier: Apache-2.0
// Text out through libburtorch's port console (semihosting, a UART, stdout).
#ifndef FW_LOG_HPP
#define FW_LOG_HPP

namespace fw {

/// Writes label, then value with 6 significant digits.
void log_value(const char* label, double value) noexcept;
/// Writes text.
void log_text(const char* text) noexcept;

}  // namespace fw

#endif  // FW_LOG_HPP

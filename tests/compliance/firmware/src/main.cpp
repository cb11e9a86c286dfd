// SPDX-License-Identifier: Apache-2.0
// Entry point: the board's startup code (or the C library) calls main.
#include "app.hpp"

int main() {
  return fw::run();
}

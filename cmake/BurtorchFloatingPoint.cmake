# SPDX-License-Identifier: Apache-2.0
# Floating-point code generation switches (docs/floating-point.md).
#   BURTORCH_FP_CONTRACT  empty: the compiler's default (GCC contracts a*b+c
#                         into one fused multiply-add where the target has
#                         one: AArch64, ARMv7 VFPv4, Cortex-M4F/M7/M33/M55);
#                         "off": never (-ffp-contract=off), for results that
#                         are bit-identical across targets; "fast": always.
# Applied to the library and the test programs (burtorch_core_flags).
set(BURTORCH_FP_CONTRACT "" CACHE STRING "FMA contraction: empty (compiler default), off or fast")
set_property(CACHE BURTORCH_FP_CONTRACT PROPERTY STRINGS "" off fast)
if(NOT BURTORCH_FP_CONTRACT STREQUAL "")
  if(NOT BURTORCH_FP_CONTRACT MATCHES "^(off|fast)$")
    message(FATAL_ERROR "BURTORCH_FP_CONTRACT must be empty, off or fast (got '${BURTORCH_FP_CONTRACT}')")
  endif()
  target_compile_options(burtorch_core_flags INTERFACE -ffp-contract=${BURTORCH_FP_CONTRACT})
endif()

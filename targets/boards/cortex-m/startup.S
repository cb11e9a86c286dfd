/* SPDX-License-Identifier: Apache-2.0 */
/* Reset and exception vectors for libburtorch's Cortex-M boards.
 *
 * One file for ARMv6-M (M0), ARMv7E-M (M4, M7) and ARMv8-M (M33, M55): the
 * code uses only instructions all of them have. Reset_Handler
 *   1. turns on the FPU (and Helium on M55) if the build uses one,
 *   2. copies .data from flash and zeroes .bss,
 *   3. moves thread mode onto its own stack (PSP; on ARMv8-M with stack
 *      limits, so an overflow faults instead of corrupting memory),
 *   4. calls burtorch_board_init() (board.cpp: MPU stack guard on ARMv7-M),
 *   5. runs static constructors (.preinit_array, .init_array),
 *   6. calls main() and hands its return code to burtorch_board_exit(), which
 *      ends the program through the port (semihosting exit code under QEMU).
 * Exceptions nobody handles go to Default_Handler, which reports the
 * exception and the faulting PC (targets/boards/cortex-m/board.cpp) and exits.
 * BT-DEV-022: assembly language, confined to this file and the semihosting
 * trap in port/cortex-m.
 */
  .syntax unified
  .thumb

/* ------------------------------------------------------------------ */
  .section .vectors, "a", %progbits
  .align 2
  .global __burtorch_vectors
  .type __burtorch_vectors, %object
__burtorch_vectors:
  .word __burtorch_handler_stack_top   /* 0: initial MSP */
  .word Reset_Handler                  /* 1 */
  .word NMI_Handler                    /* 2 */
  .word HardFault_Handler              /* 3 */
  .word MemManage_Handler              /* 4 */
  .word BusFault_Handler               /* 5 */
  .word UsageFault_Handler             /* 6 */
  .word SecureFault_Handler            /* 7 */
  .word 0, 0, 0                        /* 8-10 reserved */
  .word SVC_Handler                    /* 11 */
  .word DebugMon_Handler               /* 12 */
  .word 0                              /* 13 reserved */
  .word PendSV_Handler                 /* 14 */
  .word SysTick_Handler                /* 15 (the Cortex-M port's clock) */
  .size __burtorch_vectors, . - __burtorch_vectors

/* ------------------------------------------------------------------ */
  .section .text.Reset_Handler, "ax", %progbits
  .global Reset_Handler
  .type Reset_Handler, %function
  .thumb_func
Reset_Handler:
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
  /* CPACR: full access to CP10 and CP11 (FPU, and MVE on ARMv8.1-M). */
  ldr r0, =0xE000ED88
  ldr r1, [r0]
  ldr r2, =0x00F00000
  orrs r1, r1, r2
  str r1, [r0]
  dsb
  isb
#endif

  /* .data: copy the initial values from flash. */
  ldr r0, =__burtorch_data_load
  ldr r1, =__burtorch_data_start
  ldr r2, =__burtorch_data_end
1:
  cmp r1, r2
  bhs 2f
  ldr r3, [r0]
  str r3, [r1]
  adds r0, r0, #4
  adds r1, r1, #4
  b 1b
2:
  /* .bss: zero. */
  ldr r1, =__burtorch_bss_start
  ldr r2, =__burtorch_bss_end
  movs r3, #0
3:
  cmp r1, r2
  bhs 4f
  str r3, [r1]
  adds r1, r1, #4
  b 3b
4:
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
  /* Stack limit registers: overflowing either stack raises a UsageFault. */
  ldr r0, =__burtorch_handler_stack_limit
  msr msplim, r0
  ldr r0, =__burtorch_stack_limit
  msr psplim, r0
#endif
  /* Thread mode on the process stack; exceptions keep the main stack. */
  ldr r0, =__burtorch_stack_top
  msr psp, r0
  movs r0, #2
  msr control, r0
  isb

  /* Board setup in C++ (stack guard); no static constructors have run. */
  bl burtorch_board_init

  /* Static constructors. */
  ldr r4, =__preinit_array_start
  ldr r5, =__preinit_array_end
5:
  cmp r4, r5
  bhs 6f
  ldr r0, [r4]
  blx r0
  adds r4, r4, #4
  b 5b
6:
  ldr r4, =__init_array_start
  ldr r5, =__init_array_end
7:
  cmp r4, r5
  bhs 8f
  ldr r0, [r4]
  blx r0
  adds r4, r4, #4
  b 7b
8:
  movs r0, #0
  movs r1, #0
  bl main
  bl burtorch_board_exit
9:
  b 9b
  .pool
  .size Reset_Handler, . - Reset_Handler

/* ------------------------------------------------------------------ */
/* Unhandled exceptions: r0 = the thread stack (holds the stacked frame of
 * the code that was interrupted), r1 = IPSR (the exception number). */
  .section .text.Default_Handler, "ax", %progbits
  .global Default_Handler
  .type Default_Handler, %function
  .thumb_func
Default_Handler:
  mrs r0, psp
  mrs r1, ipsr
  ldr r2, =burtorch_board_fault
  bx r2
  .pool
  .size Default_Handler, . - Default_Handler

  .macro weak_handler name
  .weak \name
  .thumb_set \name, Default_Handler
  .endm
  weak_handler NMI_Handler
  weak_handler HardFault_Handler
  weak_handler MemManage_Handler
  weak_handler BusFault_Handler
  weak_handler UsageFault_Handler
  weak_handler SecureFault_Handler
  weak_handler SVC_Handler
  weak_handler DebugMon_Handler
  weak_handler PendSV_Handler
  weak_handler SysTick_Handler

/* startup.c - reset handler and vector table for the Cortex-M4 test image
 * (QEMU's mps2-an386 board). Enables the FPU, copies .data from flash, then
 * enters newlib's crt0 (`_start`), which clears .bss, sets up semihosting for
 * stdio and calls main; main's return value becomes the semihosting exit code.
 */
#include <stdint.h>

extern uint32_t __stack_top, __etext, __data_start__, __data_end__;
extern void _start(void);

void reset_handler(void) {
  /* CPACR: full access to coprocessors 10 and 11 (the FPU). */
  *(volatile uint32_t *)0xE000ED88 |= 0xFu << 20;
  __asm volatile("dsb\n\tisb");
  uint32_t *src = &__etext, *dst = &__data_start__;
  while (dst < &__data_end__) *dst++ = *src++;
  _start();
  for (;;) {
  }
}

static void fault_handler(void) {
  for (;;) {
  }
}

__attribute__((section(".vectors"), used)) static void *const vectors[16] = {
    &__stack_top,  (void *)reset_handler, (void *)fault_handler, (void *)fault_handler,
    (void *)fault_handler, (void *)fault_handler, (void *)fault_handler,
};

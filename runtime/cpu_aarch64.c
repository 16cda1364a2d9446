/* cpu_aarch64.c - the features of the running AArch64 CPU, for multi-variant modules.
 *
 * Reads the ID registers with MRS, which Linux (4.11 and later) emulates
 * for user space with sanitized values; no C library needed. A field of 0xf
 * (the feature is absent) never counts as present.
 */
#include "cpu_aarch64.h"

unsigned long long nxc_aarch64_features(void) {
  unsigned long long regs[4];
  __asm__ volatile("mrs %0, S3_0_C0_C6_0" : "=r"(regs[0])); /* ID_AA64ISAR0_EL1 */
  __asm__ volatile("mrs %0, S3_0_C0_C6_1" : "=r"(regs[1])); /* ID_AA64ISAR1_EL1 */
  __asm__ volatile("mrs %0, S3_0_C0_C4_0" : "=r"(regs[2])); /* ID_AA64PFR0_EL1 */
  regs[3] = 0;
  if (((regs[2] >> 32) & 0xf) != 0) /* SVE implemented: ID_AA64ZFR0_EL1 is defined */
    __asm__ volatile("mrs %0, S3_0_C0_C4_4" : "=r"(regs[3]));
  unsigned long long mask = 0;
#define NXC_CHECK_FEATURE(name, index, reg, shift, min)                                                        \
  {                                                                                                           \
    unsigned field = (unsigned)(regs[(reg)] >> (shift)) & 0xfu;                                               \
    if (field != 0xfu && field >= (min)) mask |= 1ull << (index);                                             \
  }
  NXC_AARCH64_FEATURES(NXC_CHECK_FEATURE)
#undef NXC_CHECK_FEATURE
  if (!(mask & (1ull << 4))) mask &= ~(1ull << 5); /* sve2 needs sve */
  return mask;
}

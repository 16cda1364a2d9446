/* cpu_x86.c - the features of the running x86-64 CPU, for multi-variant modules.
 *
 * Compiled to bitcode when nxc is built and linked (internal) into every
 * module that carries several ISA variants; no C library needed. A feature
 * whose registers the OS does not save (AVX's ymm, AVX-512's zmm and mask
 * registers, AMX tiles: XCR0) counts as absent.
 */
#include "cpu_x86.h"

static void cpuid(unsigned leaf, unsigned subleaf, unsigned r[4]) {
  __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(subleaf));
}

unsigned long long nxc_x86_features(void) {
  unsigned r[4], max, maxExt;
  cpuid(0, 0, r);
  max = r[0];
  cpuid(0x80000000u, 0, r);
  maxExt = r[0];
  unsigned long long mask = 0;
#define NXC_CHECK_FEATURE(name, index, leaf, subleaf, reg, bit)                                                 \
  if (((unsigned)(leaf) < 0x80000000u ? (unsigned)(leaf) <= max : (unsigned)(leaf) <= maxExt)) {            \
    cpuid((leaf), (subleaf), r);                                                                              \
    if ((r[(reg)] >> (bit)) & 1u) mask |= 1ull << (index);                                                    \
  }
  NXC_X86_FEATURES(NXC_CHECK_FEATURE)
#undef NXC_CHECK_FEATURE
  /* Register state the OS saves: xmm|ymm (bits 1, 2) for AVX, opmask|zmm
     (5, 6, 7) for AVX-512, tiles (17, 18) for AMX. */
  unsigned long long xcr0 = 0;
  cpuid(1, 0, r);
  if ((r[2] >> 27) & 1u) { /* OSXSAVE */
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = ((unsigned long long)hi << 32) | lo;
  }
  const unsigned long long avx = (1ull << 11) | (1ull << 3) | (1ull << 12) | (1ull << 16) | (1ull << 33) |
                                 (1ull << 34) | (1ull << 47) | (1ull << 54) | (1ull << 53) | (1ull << 59) |
                                 (1ull << 60) | (1ull << 61);
  const unsigned long long avx512 = (1ull << 19) | (1ull << 20) | (1ull << 23) | (1ull << 26) | (1ull << 28) |
                                    (1ull << 29) | (1ull << 30) | (1ull << 31) | (1ull << 35) | (1ull << 36) |
                                    (1ull << 37) | (1ull << 41) | (1ull << 44) | (1ull << 48);
  const unsigned long long amx = (1ull << 43) | (1ull << 45) | (1ull << 46);
  if ((xcr0 & 0x6) != 0x6) mask &= ~(avx | avx512);
  if ((xcr0 & 0xe6) != 0xe6) mask &= ~avx512;
  if ((xcr0 & 0x60000) != 0x60000) mask &= ~amx;
  return mask;
}

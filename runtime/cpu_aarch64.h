/* cpu_aarch64.h - the AArch64 features nxc's multi-variant modules check.
 *
 * One row per LLVM feature name: the ID register that reports it (0
 * ID_AA64ISAR0_EL1, 1 ID_AA64ISAR1_EL1, 2 ID_AA64PFR0_EL1, 3 ID_AA64ZFR0_EL1),
 * the field's shift, the value the field must equal or exceed (4 bits), and
 * its bit in the mask nxc_aarch64_features() returns. NEON and FP are the
 * baseline and not listed.
 */
#ifndef NXC_CPU_AARCH64_H
#define NXC_CPU_AARCH64_H

#define NXC_AARCH64_FEATURES(X)                                                                               \
  X("fullfp16", 0, 2, 16, 1)                                                                                  \
  X("rdm", 1, 0, 28, 1)                                                                                       \
  X("dotprod", 2, 0, 44, 1)                                                                                   \
  X("fp16fml", 3, 0, 48, 1)                                                                                   \
  X("sve", 4, 2, 32, 1)                                                                                       \
  X("sve2", 5, 3, 0, 1)                                                                                       \
  X("bf16", 6, 1, 44, 1)                                                                                      \
  X("i8mm", 7, 1, 52, 1)                                                                                      \
  X("complxnum", 8, 1, 16, 1)                                                                                 \
  X("jsconv", 9, 1, 12, 1)                                                                                    \
  X("rcpc", 10, 1, 20, 1)

#endif /* NXC_CPU_AARCH64_H */

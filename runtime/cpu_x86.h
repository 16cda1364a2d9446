/* cpu_x86.h - the x86-64 features nxc's multi-variant modules check.
 *
 * One row per LLVM feature name: where CPUID reports it (leaf, subleaf,
 * register: 0 eax, 1 ebx, 2 ecx, 3 edx; bit) and its bit in the mask that
 * nxc_x86_features() returns. nxc (the compiler) reads the same table to
 * turn a variant's CPU into the mask it requires. Features every x86-64 CPU
 * has (sse, sse2, cmov, cx8, fxsr, mmx) are not listed.
 */
#ifndef NXC_CPU_X86_H
#define NXC_CPU_X86_H

#define NXC_X86_FEATURES(X)                                                                                   \
  X("sse3", 0, 1, 0, 2, 0)                                                                                    \
  X("pclmul", 1, 1, 0, 2, 1)                                                                                  \
  X("ssse3", 2, 1, 0, 2, 9)                                                                                   \
  X("fma", 3, 1, 0, 2, 12)                                                                                    \
  X("cx16", 4, 1, 0, 2, 13)                                                                                   \
  X("sse4.1", 5, 1, 0, 2, 19)                                                                                 \
  X("sse4.2", 6, 1, 0, 2, 20)                                                                                 \
  X("movbe", 7, 1, 0, 2, 22)                                                                                  \
  X("popcnt", 8, 1, 0, 2, 23)                                                                                 \
  X("aes", 9, 1, 0, 2, 25)                                                                                    \
  X("xsave", 10, 1, 0, 2, 26)                                                                                 \
  X("avx", 11, 1, 0, 2, 28)                                                                                   \
  X("f16c", 12, 1, 0, 2, 29)                                                                                  \
  X("rdrnd", 13, 1, 0, 2, 30)                                                                                 \
  X("fsgsbase", 14, 7, 0, 1, 0)                                                                               \
  X("bmi", 15, 7, 0, 1, 3)                                                                                    \
  X("avx2", 16, 7, 0, 1, 5)                                                                                   \
  X("bmi2", 17, 7, 0, 1, 8)                                                                                   \
  X("invpcid", 18, 7, 0, 1, 10)                                                                               \
  X("avx512f", 19, 7, 0, 1, 16)                                                                               \
  X("avx512dq", 20, 7, 0, 1, 17)                                                                              \
  X("rdseed", 21, 7, 0, 1, 18)                                                                                \
  X("adx", 22, 7, 0, 1, 19)                                                                                   \
  X("avx512ifma", 23, 7, 0, 1, 21)                                                                            \
  X("clflushopt", 24, 7, 0, 1, 23)                                                                            \
  X("clwb", 25, 7, 0, 1, 24)                                                                                  \
  X("avx512cd", 26, 7, 0, 1, 28)                                                                              \
  X("sha", 27, 7, 0, 1, 29)                                                                                   \
  X("avx512bw", 28, 7, 0, 1, 30)                                                                              \
  X("avx512vl", 29, 7, 0, 1, 31)                                                                              \
  X("avx512vbmi", 30, 7, 0, 2, 1)                                                                             \
  X("avx512vbmi2", 31, 7, 0, 2, 6)                                                                            \
  X("gfni", 32, 7, 0, 2, 8)                                                                                   \
  X("vaes", 33, 7, 0, 2, 9)                                                                                   \
  X("vpclmulqdq", 34, 7, 0, 2, 10)                                                                            \
  X("avx512vnni", 35, 7, 0, 2, 11)                                                                            \
  X("avx512bitalg", 36, 7, 0, 2, 12)                                                                          \
  X("avx512vpopcntdq", 37, 7, 0, 2, 14)                                                                       \
  X("rdpid", 38, 7, 0, 2, 22)                                                                                 \
  X("movdiri", 39, 7, 0, 2, 27)                                                                               \
  X("movdir64b", 40, 7, 0, 2, 28)                                                                             \
  X("avx512vp2intersect", 41, 7, 0, 3, 8)                                                                     \
  X("serialize", 42, 7, 0, 3, 14)                                                                             \
  X("amx-bf16", 43, 7, 0, 3, 22)                                                                              \
  X("avx512fp16", 44, 7, 0, 3, 23)                                                                            \
  X("amx-tile", 45, 7, 0, 3, 24)                                                                              \
  X("amx-int8", 46, 7, 0, 3, 25)                                                                              \
  X("avxvnni", 47, 7, 1, 0, 4)                                                                                \
  X("avx512bf16", 48, 7, 1, 0, 5)                                                                             \
  X("sahf", 49, 0x80000001, 0, 2, 0)                                                                          \
  X("lzcnt", 50, 0x80000001, 0, 2, 5)                                                                         \
  X("sse4a", 51, 0x80000001, 0, 2, 6)                                                                         \
  X("prfchw", 52, 0x80000001, 0, 2, 8)                                                                        \
  X("xop", 53, 0x80000001, 0, 2, 11)                                                                          \
  X("fma4", 54, 0x80000001, 0, 2, 16)                                                                         \
  X("tbm", 55, 0x80000001, 0, 2, 21)                                                                          \
  X("xsaveopt", 56, 0xd, 1, 0, 0)                                                                             \
  X("xsavec", 57, 0xd, 1, 0, 1)                                                                               \
  X("xsaves", 58, 0xd, 1, 0, 3)                                                                               \
  X("avxifma", 59, 7, 1, 0, 23)                                                                               \
  X("avxvnniint8", 60, 7, 1, 3, 4)                                                                            \
  X("avxneconvert", 61, 7, 1, 3, 5)                                                                           \
  X("cmpccxadd", 62, 7, 1, 0, 7)

#endif /* NXC_CPU_X86_H */

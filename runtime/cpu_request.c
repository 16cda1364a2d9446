/* cpu_request.c - the CPU variant asked for by $NXC_CPU_VARIANT.
 *
 * Linked (internal) into every module that carries several ISA variants
 * (lib/Pipeline/CpuVariants.cpp), beside the feature check. A module runs
 * the variant that $NXC_CPU_VARIANT names (as MODULE_cpu_variant() names
 * them: znver5, x86-64-v3, x86-64, ...) when the running CPU has its
 * features, and its usual choice otherwise: the tests force each variant the
 * machine can run through the same programs, and a user can compare them.
 * Those modules always run with an operating system and its C library; the
 * same bitcode serves x86-64 and aarch64 (only equality of bytes is used).
 */
char *getenv(const char *name);

/* 1 when $NXC_CPU_VARIANT is exactly `name`. */
int nxc_cpu_variant_requested(const char *name) {
  const char *want = getenv("NXC_CPU_VARIANT");
  if (!want) return 0;
  for (; *want != 0 && *want == *name; ++want, ++name) {
  }
  return *want == *name;
}

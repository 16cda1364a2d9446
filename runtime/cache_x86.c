/* cache_x86.c - the size of the running x86-64 CPU's largest cache, for
 * modules with streaming stores (nxc-stream-stores).
 *
 * Compiled to bitcode when nxc is built and linked (internal) into every
 * module whose code asks. The size is read once: $NXC_CACHE_BYTES (decimal)
 * when set, else cpuid's deterministic cache parameters (leaf 4 on Intel,
 * 0x8000001D on AMD), else AMD's L2/L3 descriptors (0x80000006); 0 when the
 * CPU says nothing, which streams every candidate output.
 */
extern char *getenv(const char *name);

static void cpuid(unsigned leaf, unsigned subleaf, unsigned r[4]) {
  __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(subleaf));
}

/* The largest data or unified cache listed by a leaf in the format of leaf 4. */
static long long largest_listed(unsigned leaf) {
  long long largest = 0;
  unsigned r[4];
  for (unsigned sub = 0; sub < 16; ++sub) {
    cpuid(leaf, sub, r);
    unsigned type = r[0] & 31u; /* 0: no more caches, 1: data, 2: instructions, 3: unified */
    if (type == 0) break;
    if (type == 2) continue;
    long long ways = (r[1] >> 22) + 1, partitions = ((r[1] >> 12) & 1023u) + 1, line = (r[1] & 4095u) + 1,
              sets = (long long)r[2] + 1;
    long long bytes = ways * partitions * line * sets;
    if (bytes > largest) largest = bytes;
  }
  return largest;
}

static long long query(void) {
  const char *set = getenv("NXC_CACHE_BYTES");
  if (set && *set >= '0' && *set <= '9') {
    long long bytes = 0;
    while (*set >= '0' && *set <= '9' && bytes < (1ll << 56)) bytes = bytes * 10 + (*set++ - '0');
    return bytes;
  }
  unsigned r[4], max, maxExt;
  cpuid(0, 0, r);
  max = r[0];
  int amd = r[1] == 0x68747541u; /* "Auth"enticAMD */
  cpuid(0x80000000u, 0, r);
  maxExt = r[0];
  long long bytes = 0;
  if (amd && maxExt >= 0x8000001Du) {
    cpuid(0x80000001u, 0, r);
    if ((r[2] >> 22) & 1u) bytes = largest_listed(0x8000001Du); /* TOPOEXT */
  } else if (!amd && max >= 4) {
    bytes = largest_listed(4);
  }
  if (bytes == 0 && maxExt >= 0x80000006u) {
    cpuid(0x80000006u, 0, r);
    long long l2 = (long long)(r[2] >> 16) << 10, l3 = (long long)(r[3] >> 18) << 19;
    bytes = l3 > l2 ? l3 : l2;
  }
  return bytes;
}

long long nxc_x86_cache_bytes(void) {
  static long long cached = -1;
  long long bytes = __atomic_load_n(&cached, __ATOMIC_RELAXED);
  if (bytes < 0) {
    bytes = query();
    __atomic_store_n(&cached, bytes, __ATOMIC_RELAXED);
  }
  return bytes;
}

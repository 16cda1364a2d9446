/* gpu_check - runs the calls of a GPU bundle on a CUDA GPU and checks them.
 *
 * A bundle (made by test/e2e/e2e_test.py --device cuda --bundle DIR on any
 * machine) holds CUDA modules built by nxc, the inputs of each call, and
 * float64 or int64 references computed by NumPy. This program needs only a C
 * compiler and the driver: no CUDA toolkit, no Python.
 *
 * calls.txt, one call per block:
 *   CALL <library.so> <symbol> <inputs> <outputs>
 *   IN <file> <bytes>                       (inputs times), or
 *   GEN <seed> <count> <lo> <hi>            an f32 input generated here (gen_uniform)
 *   OUT <type> <count> <reference> <rtol> <atol>   (outputs times; type: f32 f64 f16 bf16 s8..s64 u8..u64;
 *       the reference holds float64 values, int64 for integer types, or f32 values when <type> is "f32~")
 *
 * For each call: SYMBOL_host(...) with host pointers, every output compared
 * with its reference (|got - ref| <= atol + rtol * |ref|, NaN and infinities
 * exactly); then SYMBOL(...) with device pointers, timed. The first call
 * (the module's load included; the context already exists) in a fresh copy
 * of the library, then, after 0.3 s of warm-up, the median of repeated
 * calls, each synchronized. Prints one line per call and a
 * summary; exits 1 if any check fails.
 *
 * Usage: gpu_check BUNDLE_DIR [FILTER]
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*cu_fn)();
static cu_fn cuInit_, cuDeviceGet_, cuDevicePrimaryCtxRetain_, cuCtxSetCurrent_, cuMemAlloc_, cuMemFree_,
    cuMemcpyHtoD_, cuCtxSynchronize_;

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void *read_file(const char *dir, const char *name, size_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  void *p = malloc(bytes ? bytes : 1);
  if (!f || fread(p, 1, bytes, f) != bytes) {
    fprintf(stderr, "gpu_check: cannot read %zu bytes of %s\n", bytes, path);
    exit(2);
  }
  fclose(f);
  return p;
}

/* f32 values uniform in [lo, hi): element i of stream `seed` is splitmix64 of
 * (seed << 32) + i, its top 24 bits scaled. build.py generates the same. */
static float *gen_uniform(uint64_t seed, size_t count, double lo, double hi) {
  float *p = malloc(count * sizeof(float) + 1);
  for (size_t i = 0; i < count; ++i) {
    uint64_t z = (seed << 32) + i + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    p[i] = (float)(lo + (hi - lo) * ((double)(z >> 40) / 16777216.0));
  }
  return p;
}

static double half_to_double(uint16_t h, int bf16) {
  uint32_t bits;
  if (bf16) {
    bits = (uint32_t)h << 16;
  } else {
    uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 31, man = h & 1023;
    if (exp == 0) return (sign ? -1 : 1) * ldexp((double)man, -24);
    if (exp == 31) return man ? NAN : (sign ? -INFINITY : INFINITY);
    bits = (sign << 31) | ((exp + 112) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static size_t type_bytes(const char *t) {
  if (!strcmp(t, "f64") || !strcmp(t, "s64") || !strcmp(t, "u64")) return 8;
  if (!strcmp(t, "f32") || !strcmp(t, "s32") || !strcmp(t, "u32")) return 4;
  if (!strcmp(t, "f16") || !strcmp(t, "bf16") || !strcmp(t, "s16") || !strcmp(t, "u16")) return 2;
  return 1;
}

/* Element i of a buffer of type t, as a double (integers exactly up to 2^53). */
static double element(const void *p, const char *t, size_t i) {
  if (!strcmp(t, "f32")) return ((const float *)p)[i];
  if (!strcmp(t, "f64")) return ((const double *)p)[i];
  if (!strcmp(t, "f16")) return half_to_double(((const uint16_t *)p)[i], 0);
  if (!strcmp(t, "bf16")) return half_to_double(((const uint16_t *)p)[i], 1);
  if (!strcmp(t, "s8")) return ((const int8_t *)p)[i];
  if (!strcmp(t, "s16")) return ((const int16_t *)p)[i];
  if (!strcmp(t, "s32")) return ((const int32_t *)p)[i];
  if (!strcmp(t, "s64")) return (double)((const int64_t *)p)[i];
  if (!strcmp(t, "u8")) return ((const uint8_t *)p)[i];
  if (!strcmp(t, "u16")) return ((const uint16_t *)p)[i];
  if (!strcmp(t, "u32")) return ((const uint32_t *)p)[i];
  return (double)((const uint64_t *)p)[i];
}

static int call(void *f, void **a, int n) {
  switch (n) {
#define A(k) a[k]
  case 1: return ((int (*)(void *))f)(A(0));
  case 2: return ((int (*)(void *, void *))f)(A(0), A(1));
  case 3: return ((int (*)(void *, void *, void *))f)(A(0), A(1), A(2));
  case 4: return ((int (*)(void *, void *, void *, void *))f)(A(0), A(1), A(2), A(3));
  case 5: return ((int (*)(void *, void *, void *, void *, void *))f)(A(0), A(1), A(2), A(3), A(4));
  case 6: return ((int (*)(void *, void *, void *, void *, void *, void *))f)(A(0), A(1), A(2), A(3), A(4), A(5));
  case 7:
    return ((int (*)(void *, void *, void *, void *, void *, void *, void *))f)(A(0), A(1), A(2), A(3), A(4), A(5),
                                                                                A(6));
  case 8:
    return ((int (*)(void *, void *, void *, void *, void *, void *, void *, void *))f)(A(0), A(1), A(2), A(3), A(4),
                                                                                        A(5), A(6), A(7));
  case 9:
    return ((int (*)(void *, void *, void *, void *, void *, void *, void *, void *, void *))f)(
        A(0), A(1), A(2), A(3), A(4), A(5), A(6), A(7), A(8));
  case 10:
    return ((int (*)(void *, void *, void *, void *, void *, void *, void *, void *, void *, void *))f)(
        A(0), A(1), A(2), A(3), A(4), A(5), A(6), A(7), A(8), A(9));
  case 11:
    return ((int (*)(void *, void *, void *, void *, void *, void *, void *, void *, void *, void *, void *))f)(
        A(0), A(1), A(2), A(3), A(4), A(5), A(6), A(7), A(8), A(9), A(10));
  case 12:
    return ((int (*)(void *, void *, void *, void *, void *, void *, void *, void *, void *, void *, void *,
                     void *))f)(A(0), A(1), A(2), A(3), A(4), A(5), A(6), A(7), A(8), A(9), A(10), A(11));
#undef A
  default: fprintf(stderr, "gpu_check: %d arguments are more than this checker passes\n", n); exit(2);
  }
}

enum { kMaxTensors = 12 };

typedef const char *(*device_error_fn)(void);

/* MODULE_device_error of lib<MODULE>.so. */
static device_error_fn device_error_query(void *h, const char *lib) {
  const char *base = strrchr(lib, '/');
  base = base ? base + 1 : lib;
  size_t n = strlen(base);
  char symbol[600];
  if (n < 7) return NULL;
  snprintf(symbol, sizeof symbol, "%.*s_device_error", (int)(n - 6), base + 3);
  return (device_error_fn)dlsym(h, symbol);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s BUNDLE_DIR [FILTER]\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1], *filter = argc > 2 ? argv[2] : NULL;
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
  if (!cuda) {
    fprintf(stderr, "gpu_check: no CUDA driver (libcuda.so.1): %s\n", dlerror());
    return 3;
  }
#define LOAD(var, name) var = (cu_fn)dlsym(cuda, name)
  LOAD(cuInit_, "cuInit");
  LOAD(cuDeviceGet_, "cuDeviceGet");
  LOAD(cuDevicePrimaryCtxRetain_, "cuDevicePrimaryCtxRetain");
  LOAD(cuCtxSetCurrent_, "cuCtxSetCurrent");
  LOAD(cuMemAlloc_, "cuMemAlloc_v2");
  LOAD(cuMemFree_, "cuMemFree_v2");
  LOAD(cuMemcpyHtoD_, "cuMemcpyHtoD_v2");
  LOAD(cuCtxSynchronize_, "cuCtxSynchronize");
  int device = 0;
  void *ctx = NULL;
  if (cuInit_(0) || cuDeviceGet_(&device, 0) || cuDevicePrimaryCtxRetain_(&ctx, device) || cuCtxSetCurrent_(ctx)) {
    fprintf(stderr, "gpu_check: no usable CUDA GPU\n");
    return 3;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/calls.txt", dir);
  FILE *calls = fopen(path, "r");
  if (!calls) {
    fprintf(stderr, "gpu_check: cannot open %s\n", path);
    return 2;
  }
  int passed = 0, failed = 0;
  char lib[1024], symbol[512];
  int nin, nout;
  printf("%-44s %-6s %12s %12s %12s\n", "call", "result", "max error", "first (us)", "median (us)");
  while (fscanf(calls, " CALL %1023s %511s %d %d", lib, symbol, &nin, &nout) == 4) {
    int n = nin + nout;
    if (n > kMaxTensors) {
      fprintf(stderr, "gpu_check: %s has %d tensors\n", symbol, n);
      return 2;
    }
    char files[kMaxTensors][512], types[kMaxTensors][8];
    size_t bytes[kMaxTensors], counts[kMaxTensors];
    double rtol[kMaxTensors], atol[kMaxTensors], lo[kMaxTensors], hi[kMaxTensors];
    unsigned long long seeds[kMaxTensors];
    for (int i = 0; i < nin; ++i) {
      char kind[4];
      if (fscanf(calls, " %3s", kind) != 1) return 2;
      files[i][0] = 0;
      if (!strcmp(kind, "IN")) {
        if (fscanf(calls, " %511s %zu", files[i], &bytes[i]) != 2) return 2;
      } else if (fscanf(calls, " %llu %zu %lf %lf", &seeds[i], &counts[i], &lo[i], &hi[i]) == 4) {
        bytes[i] = counts[i] * sizeof(float);
      } else {
        return 2;
      }
    }
    for (int i = nin; i < n; ++i) {
      if (fscanf(calls, " OUT %7s %zu %511s %lf %lf", types[i], &counts[i], files[i], &rtol[i], &atol[i]) != 5)
        return 2;
      char plain[8];
      snprintf(plain, sizeof plain, "%.*s", (int)strcspn(types[i], "~"), types[i]);
      bytes[i] = counts[i] * type_bytes(plain);
    }
    if (filter && !strstr(symbol, filter)) continue;
    char libpath[4096], name[1100];
    snprintf(libpath, sizeof libpath, "%s/%s", dir, lib);
    void *h = dlopen(libpath, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      printf("%-44s FAIL   cannot load %s: %s\n", symbol, lib, dlerror());
      ++failed;
      continue;
    }
    snprintf(name, sizeof name, "%s_host", symbol);
    void *host = dlsym(h, name), *dev = dlsym(h, symbol);
    device_error_fn device_error = device_error_query(h, lib);
    void *args[kMaxTensors], *hostData[kMaxTensors];
    for (int i = 0; i < n; ++i) {
      hostData[i] = i >= nin     ? calloc(bytes[i] ? bytes[i] : 1, 1)
                    : files[i][0] ? read_file(dir, files[i], bytes[i])
                                  : gen_uniform(seeds[i], counts[i], lo[i], hi[i]);
      args[i] = hostData[i];
    }
    /* The module's first call: loads its GPU binary (the context exists). */
    double t0 = now_us();
    int status = host ? call(host, args, n) : -1;
    double first = now_us() - t0;
    double maxErr = 0;
    int ok = status == 0;
    const char *why = status == -1 ? "no _host entry" : "";
    for (int i = nin; i < n && ok; ++i) {
      char t[8];
      snprintf(t, sizeof t, "%s", types[i]);
      int refIsF32 = t[strlen(t) - 1] == '~';
      if (refIsF32) t[strlen(t) - 1] = 0;
      int isInt = t[0] == 's' || t[0] == 'u';
      void *ref = read_file(dir, files[i], counts[i] * (refIsF32 ? 4 : 8));
      for (size_t k = 0; k < counts[i]; ++k) {
        double got = element(hostData[i], t, k);
        double want = refIsF32 ? ((float *)ref)[k] : isInt ? (double)((int64_t *)ref)[k] : ((double *)ref)[k];
        if (isnan(want) || isinf(want)) {
          if (!(isnan(want) ? isnan(got) : got == want)) ok = 0;
          continue;
        }
        double err = fabs(got - want);
        if (!(err <= atol[i] + rtol[i] * fabs(want))) {
          if (ok) fprintf(stderr, "  %s output %d element %zu: got %.9g, want %.9g\n", symbol, i - nin, k, got, want);
          ok = 0;
        }
        if (err > maxErr) maxErr = err;
      }
      free(ref);
    }
    double median = 0;
    if (ok && dev) {
      void *d[kMaxTensors];
      for (int i = 0; i < n; ++i) {
        unsigned long long p = 0;
        cuMemAlloc_(&p, bytes[i] ? bytes[i] : 1);
        d[i] = (void *)p;
        if (i < nin && bytes[i]) cuMemcpyHtoD_(p, hostData[i], bytes[i]);
      }
      cuCtxSynchronize_();
      int s = 0;
      /* The module's first device-pointer call, in a fresh copy of the
       * library (its own state: the GPU binary is loaded in this call). */
      char copy[4200];
      snprintf(copy, sizeof copy, "%s.first-call.so", libpath);
      char cmd[9000];
      snprintf(cmd, sizeof cmd, "cp '%s' '%s'", libpath, copy);
      void *fresh = system(cmd) == 0 ? dlopen(copy, RTLD_NOW | RTLD_LOCAL) : NULL;
      void *freshDev = fresh ? dlsym(fresh, symbol) : NULL;
      if (freshDev) {
        double t1 = now_us();
        s |= call(freshDev, d, n);
        first = now_us() - t1;
      }
      remove(copy);
      enum { kRuns = 200 };
      double times[kRuns];
      int runs = 0;
      /* Warm-up: the GPU idles at low clocks and takes a while to speed up. */
      for (double w = now_us(); now_us() - w < 300e3 && s == 0;) s |= call(dev, d, n);
      double start = now_us();
      while (runs < kRuns && s == 0) {
        double a = now_us();
        s |= call(dev, d, n);
        times[runs++] = now_us() - a;
        if (now_us() - start > 2e6 && runs >= 10) break;
      }
      qsort(times, runs, sizeof times[0], cmp_double);
      median = runs ? times[runs / 2] : 0;
      if (s) {
        ok = 0;
        why = "device-pointer call failed";
      }
      for (int i = 0; i < n; ++i) cuMemFree_((unsigned long long)d[i]);
    }
    if (ok) ++passed;
    else ++failed;
    printf("%-44s %-6s %12.3g %12.1f %12.2f", symbol, ok ? "ok" : "FAIL", maxErr, first, median);
    if (!ok && status > 0) printf("  status %d: %s", status, device_error ? device_error() : "");
    if (!ok && *why) printf("  %s", why);
    printf("\n");
    for (int i = 0; i < n; ++i) free(hostData[i]);
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

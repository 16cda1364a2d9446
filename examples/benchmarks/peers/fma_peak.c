// The core's multiply-add peak, measured: independent chains of vector FMAs
// (enough of them to cover the FMA units' latency) in the widest ISA the CPU
// has, on 1 and on N threads. The peers benchmark quotes W8-W10's GFLOP/s as
// a share of it. Usage: fma_peak [threads]   (prints "ISA GFLOPS1 GFLOPSN")
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kChains = 12, kSteps = 20000000 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

// 12 accumulators in named registers (an array would live in memory): two
// FMA pipes of 4 cycles' latency need 8 independent chains.
#define CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

// One kernel per vector width, from GCC's vector extensions: `acc * a + b`
// contracts to one FMA where the target has it. Each returns the FLOP it
// did; the sum keeps the chains alive.
#define FMA_KERNEL(name, isa_target, lanes)                                                                  \
  typedef float name##_vector __attribute__((vector_size(4 * (lanes))));                                     \
  __attribute__((target(isa_target))) static double name(float *sink) {                                      \
    name##_vector zero = {0}, a = zero + 0.9999f, b = zero + 1e-7f, sum = zero;                                \
    CHAINS(INIT)                                                                                              \
    for (long s = 0; s < kSteps; ++s) {                                                                       \
      CHAINS(STEP)                                                                                            \
    }                                                                                                         \
    CHAINS(SUM)                                                                                               \
    *sink = sum[0];                                                                                           \
    return 2.0 * (lanes) * kChains * (double)kSteps;                                                          \
  }
#define INIT(i) __typeof__(zero) acc##i = zero + (float)(i);
#define STEP(i) acc##i = acc##i * a + b;
#define SUM(i) sum += acc##i;
FMA_KERNEL(fma512, "avx512f", 16)
FMA_KERNEL(fma256, "avx2,fma", 8)

static const char *isa;
static double (*kernel)(float *);

static void *run(void *arg) {
  float sink;
  double *gflops = arg, t0 = now(), flop = kernel(&sink);
  *gflops = flop / (now() - t0) / 1e9 + 0 * sink;
  return NULL;
}

// The best of three runs of `threads` threads at once, in GFLOP/s (all threads).
static double measure(int threads) {
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    pthread_t t[64];
    double g[64], total = 0;
    for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, run, &g[i]);
    for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL), total += g[i];
    if (total > best) best = total;
  }
  return best;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  if (threads < 1 || threads > 64) threads = 1;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) isa = "AVX-512", kernel = fma512;
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) isa = "AVX2+FMA", kernel = fma256;
  else {
    printf("none 0 0\n");
    return 0;
  }
  printf("%s %.1f %.1f\n", isa, measure(1), measure(threads));
  return 0;
}

/* softmax_bench.c - the generated softmax against plain C loops, in one run.
 *
 * Built by run.sh against a module compiled with
 *   nxc aot ../softmax/softmax.nx --fn 'MyDefn.softmax(f32[1000])' --fn 'MyDefn.softmax(f32[1000000])'
 * Prints the median time per call of each variant and its ratio to nxc.
 */
#define _POSIX_C_SOURCE 199309L
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "bench_time.h"

/* The textbook loop: max, sum of exp, divide (libm expf). */
static void softmax_c(const float *x, float *y, int n) {
  float m = x[0];
  for (int i = 1; i < n; i++) m = x[i] > m ? x[i] : m;
  float s = 0.0f;
  for (int i = 0; i < n; i++) s += expf(x[i] - m);
  for (int i = 0; i < n; i++) y[i] = expf(x[i] - m) / s;
}

/* The same loop, storing exp once and multiplying by 1/sum. */
static void softmax_c_stored(const float *x, float *y, int n) {
  float m = x[0];
  for (int i = 1; i < n; i++) m = x[i] > m ? x[i] : m;
  float s = 0.0f;
  for (int i = 0; i < n; i++) { y[i] = expf(x[i] - m); s += y[i]; }
  float r = 1.0f / s;
  for (int i = 0; i < n; i++) y[i] *= r;
}

typedef void (*variant_fn)(const float *, float *, int);

static int nxc_1k(const float *x, float *y, int n) { (void)n; return bench_softmax_f32_1000(x, y); }
static int nxc_1m(const float *x, float *y, int n) { (void)n; return bench_softmax_f32_1000000(x, y); }

/* Median seconds per call over `reps` batches of `inner` calls. */
static double time_variant(variant_fn c, int (*g)(const float *, float *, int), const float *x, float *y, int n,
                           int reps, int inner) {
  double t[64];
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    for (int i = 0; i < inner; i++) {
      if (c) c(x, y, n);
      else g(x, y, n);
    }
    t[r] = (now() - t0) / inner;
  }
  qsort(t, reps, sizeof t[0], cmp);
  return t[reps / 2];
}

static double max_rel_err(const float *x, const float *y, int n) {
  double m = x[0], s = 0, e = 0;
  for (int i = 1; i < n; i++) m = x[i] > m ? x[i] : m;
  for (int i = 0; i < n; i++) s += exp((double)x[i] - m);
  for (int i = 0; i < n; i++) {
    double r = exp((double)x[i] - m) / s;
    if (r == 0) { /* a masked entry: exactly 0 */
      e = y[i] != 0 ? INFINITY : e;
      continue;
    }
    double d = fabs(y[i] - r) / r;
    e = d > e ? d : e;
  }
  return e;
}

/* With `masked`, every other entry is -FLT_MAX, as attention masks write. */
static void run(int n, int (*gen)(const float *, float *, int), int reps, int inner, int masked) {
  float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
  srand(42);
  for (int i = 0; i < n; i++) x[i] = masked && i % 2 == 0 ? -FLT_MAX : (float)rand() / RAND_MAX * 10.0f - 5.0f;
  gen(x, y, n);
  double err = max_rel_err(x, y, n);
  double tn = time_variant(NULL, gen, x, y, n, reps, inner);
  double tc = time_variant(softmax_c, NULL, x, y, n, reps, inner);
  double ts = time_variant(softmax_c_stored, NULL, x, y, n, reps, inner);
  printf("softmax f32[%d]%s  (max rel err of nxc vs f64: %.2g)\n", n, masked ? ", every other entry masked" : "", err);
  printf("  %-34s %12.3f us   1.00x\n", "nxc (generated)", tn * 1e6);
  printf("  %-34s %12.3f us  %5.2fx slower\n", "C loop, libm expf (-O3 -march=native)", tc * 1e6, tc / tn);
  printf("  %-34s %12.3f us  %5.2fx slower\n", "C loop, exp stored once", ts * 1e6, ts / tn);
  free(x);
  free(y);
}

int main(void) {
  run(1000, nxc_1k, 31, 2000, 0);
  run(1000, nxc_1k, 31, 2000, 1);
  run(1000000, nxc_1m, 15, 5, 0);
  return 0;
}

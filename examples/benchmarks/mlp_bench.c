/* mlp_bench.c - the generated MNIST-size MLP predict against plain C, in one run.
 *
 * Built by run.sh against examples/board/mlp.nx compiled with
 *   --fn 'predict({f32[784,128], f32[128], f32[128,10], f32[10]}, f32[30,784])'
 * The C versions compute the same network (dot, bias, sigmoid, dot, bias,
 * row softmax) with libm, in the textbook loop order (ijk) and in the
 * cache-friendly one (ikj). Then the matrix product {10000, 784} x
 * {784, 10} (examples/benchmarks/matmul.nx) against the same two C loops.
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlpbench.h"
#include "mmbench.h"
#include "bench_time.h"

enum { B = 30, IN = 784, H = 128, OUT = 10 };

static float w1[IN * H], b1[H], w2[H * OUT], b2[OUT], x[B * IN], y[B * OUT], ref[B * OUT];
static float hidden[B * H];

static void layer_ijk(const float *a, const float *w, const float *bias, float *out, int n, int k, int m) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      float s = 0.0f;
      for (int p = 0; p < k; p++) s += a[i * k + p] * w[p * m + j];
      out[i * m + j] = s + bias[j];
    }
}

static void layer_ikj(const float *a, const float *w, const float *bias, float *out, int n, int k, int m) {
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < m; j++) out[i * m + j] = bias[j];
    for (int p = 0; p < k; p++)
      for (int j = 0; j < m; j++) out[i * m + j] += a[i * k + p] * w[p * m + j];
  }
}

typedef void (*layer_fn)(const float *, const float *, const float *, float *, int, int, int);

static void predict_c(layer_fn layer, float *out) {
  layer(x, w1, b1, hidden, B, IN, H);
  for (int i = 0; i < B * H; i++) hidden[i] = 1.0f / (1.0f + expf(-hidden[i]));
  layer(hidden, w2, b2, out, B, H, OUT);
  for (int i = 0; i < B; i++) {
    float s = 0.0f;
    for (int j = 0; j < OUT; j++) s += expf(out[i * OUT + j]);
    for (int j = 0; j < OUT; j++) out[i * OUT + j] = expf(out[i * OUT + j]) / s;
  }
}

/* Median seconds per call of `variant` (0: nxc, 1: C ijk, 2: C ikj). */
static double time_variant(int variant) {
  double t[21];
  for (int r = 0; r < 21; r++) {
    double t0 = now();
    for (int i = 0; i < 20; i++) {
      if (variant == 0) mlpbench_predict(w1, b1, w2, b2, x, y);
      else predict_c(variant == 1 ? layer_ijk : layer_ikj, y);
    }
    t[r] = (now() - t0) / 20;
  }
  qsort(t, 21, sizeof t[0], cmp);
  return t[10];
}

enum { MM = 10000, MK = 784, MN = 10 };
static float ma[MM * MK], mb[MK * MN], mc[MM * MN], mref[MM * MN];
static const float zero_bias[MN];

static double time_matmul(int variant) {
  double t[7];
  for (int r = 0; r < 7; r++) {
    double t0 = now();
    if (variant == 0) mmbench_matmul(ma, mb, mc);
    else (variant == 1 ? layer_ijk : layer_ikj)(ma, mb, zero_bias, mc, MM, MK, MN);
    t[r] = now() - t0;
  }
  qsort(t, 7, sizeof t[0], cmp);
  return t[3];
}

static void matmul_table(void) {
  for (int i = 0; i < MM * MK; i++) ma[i] = (float)rand() / RAND_MAX - 0.5f;
  for (int i = 0; i < MK * MN; i++) mb[i] = (float)rand() / RAND_MAX - 0.5f;
  mmbench_matmul(ma, mb, mc);
  layer_ikj(ma, mb, zero_bias, mref, MM, MK, MN);
  double err = 0;
  for (int i = 0; i < MM * MN; i++) err = fmax(err, fabs(mc[i] - mref[i]));
  double tn = time_matmul(0), t1 = time_matmul(1), t2 = time_matmul(2);
  double flop = 2.0 * MM * MK * MN;
  printf("\nmatmul f32[10000,784] x f32[784,10] (%.0f MFLOP; max abs diff nxc vs C: %.2g)\n", flop / 1e6, err);
  printf("  %-34s %10.1f us  %6.2f GFLOP/s   1.00x\n", "nxc (generated)", tn * 1e6, flop / tn / 1e9);
  printf("  %-34s %10.1f us  %6.2f GFLOP/s  %5.2fx slower\n", "C ijk (-O3 -march=native)", t1 * 1e6, flop / t1 / 1e9, t1 / tn);
  printf("  %-34s %10.1f us  %6.2f GFLOP/s  %5.2fx slower\n", "C ikj (-O3 -march=native)", t2 * 1e6, flop / t2 / 1e9, t2 / tn);
}

int main(void) {
  srand(7);
  float *all[] = {w1, b1, w2, b2, x};
  int sizes[] = {IN * H, H, H * OUT, OUT, B * IN};
  for (int a = 0; a < 5; a++)
    for (int i = 0; i < sizes[a]; i++) all[a][i] = ((float)rand() / RAND_MAX - 0.5f) * (a == 4 ? 2.0f : 0.2f);
  mlpbench_predict(w1, b1, w2, b2, x, y);
  predict_c(layer_ikj, ref);
  double err = 0;
  for (int i = 0; i < B * OUT; i++) err = fmax(err, fabs(y[i] - ref[i]));
  double tn = time_variant(0), t1 = time_variant(1), t2 = time_variant(2);
  double flop = 2.0 * B * (IN * H + H * OUT);
  printf("MLP predict f32[30,784] -> 128 -> 10 (%.1f MFLOP; max abs diff nxc vs C: %.2g; workspace %d bytes)\n",
         flop / 1e6, err, (int)MLPBENCH_PREDICT_WORKSPACE_SIZE);
  printf("  %-34s %10.1f us  %6.2f GFLOP/s   1.00x\n", "nxc (generated)", tn * 1e6, flop / tn / 1e9);
  printf("  %-34s %10.1f us  %6.2f GFLOP/s  %5.2fx slower\n", "C ijk (-O3 -march=native)", t1 * 1e6, flop / t1 / 1e9, t1 / tn);
  printf("  %-34s %10.1f us  %6.2f GFLOP/s  %5.2fx slower\n", "C ikj (-O3 -march=native)", t2 * 1e6, flop / t2 / 1e9, t2 / tn);
  matmul_table();
  return 0;
}

/* The MNIST training step and predict (examples/mnist/mnist.exs) through nxc,
 * side by side with a hand-written C backprop of the same network (-O3
 * -march=native, loops in cache-friendly order): one SGD step on a batch of
 * 30, and predict on batches of 30 and 1. Median of 21 rounds. */
#define _POSIX_C_SOURCE 200809L
#include "trainbench.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_time.h"

enum { B = 30, IN = 784, H = 128, OUT = 10 };

static float w1[IN * H], b1[H], w2[H * OUT], b2[OUT], x[B * IN];
static uint8_t labels[B * OUT];
static float nw1[IN * H], nb1[H], nw2[H * OUT], nb2[OUT];
static float cw1[IN * H], cb1[H], cw2[H * OUT], cb2[OUT];
static float hid[B * H], prob[B * OUT], dlog[B * OUT], dz[B * H], probs[B * OUT];

/* h = sigmoid(x w1 + b1); p = softmax(h w2 + b2), for n rows. */
static void forward_c(const float *in, int n, float *h, float *p) {
  for (int i = 0; i < n; i++) {
    float *hr = h + i * H;
    for (int j = 0; j < H; j++) hr[j] = b1[j];
    for (int k = 0; k < IN; k++) {
      float a = in[i * IN + k];
      const float *wr = w1 + k * H;
      for (int j = 0; j < H; j++) hr[j] += a * wr[j];
    }
    for (int j = 0; j < H; j++) hr[j] = 1.0f / (1.0f + expf(-hr[j]));
    float *pr = p + i * OUT, sum = 0;
    for (int j = 0; j < OUT; j++) pr[j] = b2[j];
    for (int k = 0; k < H; k++)
      for (int j = 0; j < OUT; j++) pr[j] += hr[k] * w2[k * OUT + j];
    for (int j = 0; j < OUT; j++) sum += pr[j] = expf(pr[j]);
    for (int j = 0; j < OUT; j++) pr[j] /= sum;
  }
}

/* One SGD step of Nx's loss, -sum(mean(log(p) * y, axes: [:output])): its
 * gradient at the logits is (p * sum(y) - y) / 10. */
static void step_c(float lr) {
  forward_c(x, B, hid, prob);
  for (int i = 0; i < B; i++) {
    float ys = 0;
    for (int j = 0; j < OUT; j++) ys += labels[i * OUT + j];
    for (int j = 0; j < OUT; j++) dlog[i * OUT + j] = (prob[i * OUT + j] * ys - labels[i * OUT + j]) / OUT;
  }
  for (int k = 0; k < H; k++)
    for (int j = 0; j < OUT; j++) {
      float g = 0;
      for (int i = 0; i < B; i++) g += hid[i * H + k] * dlog[i * OUT + j];
      cw2[k * OUT + j] = w2[k * OUT + j] - lr * g;
    }
  for (int j = 0; j < OUT; j++) {
    float g = 0;
    for (int i = 0; i < B; i++) g += dlog[i * OUT + j];
    cb2[j] = b2[j] - lr * g;
  }
  for (int i = 0; i < B; i++)
    for (int k = 0; k < H; k++) {
      float g = 0;
      for (int j = 0; j < OUT; j++) g += dlog[i * OUT + j] * w2[k * OUT + j];
      float h = hid[i * H + k];
      dz[i * H + k] = g * h * (1 - h);
    }
  for (int k = 0; k < IN * H; k++) cw1[k] = w1[k];
  for (int i = 0; i < B; i++)
    for (int k = 0; k < IN; k++) {
      float a = lr * x[i * IN + k];
      float *wr = cw1 + k * H;
      for (int j = 0; j < H; j++) wr[j] -= a * dz[i * H + j];
    }
  for (int j = 0; j < H; j++) {
    float g = 0;
    for (int i = 0; i < B; i++) g += dz[i * H + j];
    cb1[j] = b1[j] - lr * g;
  }
}

static void *ws_update, *ws_p30, *ws_p1;
static const float lr = 0.01f;

static void run(int which) {
  switch (which) {
  case 0: trainbench_update_with_workspace(w1, b1, w2, b2, x, labels, &lr, nw1, nb1, nw2, nb2, ws_update); break;
  case 1: step_c(lr); break;
  case 2: trainbench_predict30_with_workspace(w1, b1, w2, b2, x, probs, ws_p30); break;
  case 3: forward_c(x, B, hid, prob); break;
  case 4: trainbench_predict1_with_workspace(w1, b1, w2, b2, x, probs, ws_p1); break;
  case 5: forward_c(x, 1, hid, prob); break;
  }
}

static double median_us(int which, int reps) {
  double t[21];
  for (int r = 0; r < 21; r++) {
    double t0 = now();
    for (int i = 0; i < reps; i++) run(which);
    t[r] = (now() - t0) / reps;
  }
  qsort(t, 21, sizeof t[0], cmp);
  return t[10] * 1e6;
}

static float maxdiff(const float *a, const float *b, int n) {
  float m = 0;
  for (int i = 0; i < n; i++) m = fmaxf(m, fabsf(a[i] - b[i]));
  return m;
}

int main(void) {
  srand(7);
  for (int i = 0; i < IN * H; i++) w1[i] = (rand() / (float)RAND_MAX - 0.5f) * 0.2f;
  for (int i = 0; i < H * OUT; i++) w2[i] = (rand() / (float)RAND_MAX - 0.5f) * 0.2f;
  for (int i = 0; i < H; i++) b1[i] = (rand() / (float)RAND_MAX - 0.5f) * 0.2f;
  for (int i = 0; i < OUT; i++) b2[i] = (rand() / (float)RAND_MAX - 0.5f) * 0.2f;
  for (int i = 0; i < B * IN; i++) x[i] = rand() / (float)RAND_MAX;
  for (int i = 0; i < B; i++) labels[i * OUT + rand() % OUT] = 1;
  ws_update = aligned_alloc(64, (trainbench_update_workspace_size() + 64) / 64 * 64);
  ws_p30 = aligned_alloc(64, (trainbench_predict30_workspace_size() + 64) / 64 * 64);
  ws_p1 = aligned_alloc(64, (trainbench_predict1_workspace_size() + 64) / 64 * 64);
  run(0), run(1);
  float d = fmaxf(fmaxf(maxdiff(nw1, cw1, IN * H), maxdiff(nb1, cb1, H)), fmaxf(maxdiff(nw2, cw2, H * OUT), maxdiff(nb2, cb2, OUT)));
  run(2), run(3);
  float dp = maxdiff(probs, prob, B * OUT);
  double t[6];
  for (int k = 0; k < 6; k++) t[k] = median_us(k, k >= 4 ? 200 : 20);
  printf("MNIST training step (update: forward, grad, SGD), batch 30 (max abs diff nxc vs C: %.2g)\n", d);
  printf("  %-40s %10.1f us   1.00x\n", "nxc (grad of the defn loss)", t[0]);
  printf("  %-40s %10.1f us  %5.2fx %s\n", "C backprop by hand (-O3 -march=native)", t[1],
         t[1] > t[0] ? t[1] / t[0] : t[0] / t[1], t[1] > t[0] ? "slower" : "faster");
  printf("MNIST predict (max abs diff nxc vs C: %.2g)\n", dp);
  printf("  %-40s %10.1f us   1.00x\n", "nxc, batch 30", t[2]);
  printf("  %-40s %10.1f us  %5.2fx %s\n", "C, batch 30", t[3], t[3] > t[2] ? t[3] / t[2] : t[2] / t[3],
         t[3] > t[2] ? "slower" : "faster");
  printf("  %-40s %10.2f us   1.00x\n", "nxc, batch 1", t[4]);
  printf("  %-40s %10.2f us  %5.2fx %s\n", "C, batch 1", t[5], t[5] > t[4] ? t[5] / t[4] : t[4] / t[5],
         t[5] > t[4] ? "slower" : "faster");
  return 0;
}

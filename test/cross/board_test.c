/* board_test.c - runs the softmax and MLP modules on a board (or the host)
 * and prints every output, so the cross test can compare a board's results
 * with the host's. Inputs come from an integer generator, so they are the
 * same bits on every target. Uses each function's _with_workspace entry with
 * a static, aligned workspace (no heap), and the plain entry where it exists.
 *
 * Modules (see cross_test.py):
 *   sm:  MyDefn.softmax(f32[1000])
 *   mlp: predict({f32[64,32], f32[32], f32[32,10], f32[10]}, f32[4,64])
 *   ctl: power_iteration(f32[3,3], s32[]) (a while loop; the trip count is an input)
 *   cpx: spectrum(f32[12]) (a DFT: a complex result, nxc_c64, its power and inverse)
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mlp.h"
#include "cpx.h"
#include "ctl.h"
#include "nxrt.h"
#include "sm.h"

static uint32_t seed = 12345u;

/* A float in [-1, 1) from a 32-bit LCG: exact and identical everywhere. */
static float next_value(void) {
  seed = seed * 1664525u + 1013904223u;
  return (float)(int32_t)(seed >> 8 & 0xffff) / 32768.0f - 1.0f;
}

static void fill(float *x, int n, float scale) {
  for (int i = 0; i < n; i++) x[i] = next_value() * scale;
}

#define WS_BYTES(n) ((n) > 0 ? (n) : 1)
static _Alignas(64) unsigned char sm_ws[WS_BYTES(SM_SOFTMAX_WORKSPACE_SIZE)];
static _Alignas(64) unsigned char mlp_ws[WS_BYTES(MLP_PREDICT_WORKSPACE_SIZE)];
static _Alignas(64) unsigned char ctl_ws[WS_BYTES(CTL_POWER_ITERATION_WORKSPACE_SIZE)];
static _Alignas(64) unsigned char cpx_ws[WS_BYTES(CPX_SPECTRUM_WORKSPACE_SIZE)];

static float x[SM_SOFTMAX_X_SIZE], y[SM_SOFTMAX_RESULT_SIZE], y2[SM_SOFTMAX_RESULT_SIZE];
static float w1[MLP_PREDICT_W1_SIZE], b1[MLP_PREDICT_B1_SIZE], w2[MLP_PREDICT_W2_SIZE], b2[MLP_PREDICT_B2_SIZE];
static float batch[MLP_PREDICT_BATCH_SIZE], probs[MLP_PREDICT_RESULT_SIZE];

static int check(const char *what, int status) {
  if (status != NXRT_OK) printf("FAIL %s: %s\n", what, nxrt_status_string(status));
  return status != NXRT_OK;
}

int main(void) {
  int failures = 0;
  fill(x, SM_SOFTMAX_X_SIZE, 5.0f);
  failures += check("sm_softmax_with_workspace", sm_softmax_with_workspace(x, y, sm_ws));
  failures += check("sm_softmax", sm_softmax(x, y2));
  if (memcmp(y, y2, sizeof y) != 0) {
    printf("FAIL sm_softmax and sm_softmax_with_workspace differ\n");
    failures++;
  }
  for (int i = 0; i < SM_SOFTMAX_RESULT_SIZE; i++) printf("softmax %d %.9g\n", i, (double)y[i]);

  fill(w1, MLP_PREDICT_W1_SIZE, 0.3f);
  fill(b1, MLP_PREDICT_B1_SIZE, 0.1f);
  fill(w2, MLP_PREDICT_W2_SIZE, 0.3f);
  fill(b2, MLP_PREDICT_B2_SIZE, 0.1f);
  fill(batch, MLP_PREDICT_BATCH_SIZE, 1.0f);
  if (mlp_predict_workspace_size() != MLP_PREDICT_WORKSPACE_SIZE) {
    printf("FAIL mlp_predict_workspace_size() != MLP_PREDICT_WORKSPACE_SIZE\n");
    failures++;
  }
  failures += check("mlp_predict_with_workspace", mlp_predict_with_workspace(w1, b1, w2, b2, batch, probs, mlp_ws));
  if (MLP_PREDICT_WORKSPACE_SIZE > 0 &&
      mlp_predict_with_workspace(w1, b1, w2, b2, batch, probs, mlp_ws + 1) != NXRT_ERROR_BAD_WORKSPACE) {
    printf("FAIL a misaligned workspace was accepted\n");
    failures++;
  }
  for (int i = 0; i < MLP_PREDICT_RESULT_SIZE; i++) printf("mlp %d %.9g\n", i, (double)probs[i]);
  /* Control flow: a while loop whose trip count is an input (power iteration). */
  static float m[3 * 3] = {2, 1, 0, 1, 3, 1, 0, 1, 4};
  static float v[3];
  int32_t steps = 40;
  failures += check("ctl_power_iteration_with_workspace", ctl_power_iteration_with_workspace(m, &steps, v, ctl_ws));
  for (int i = 0; i < 3; i++) printf("ctl %d %.9g\n", i, (double)v[i]);

  /* Complex results: the spectrum's parts (a real part, then an imaginary
   * part per element), its power and the signal back. */
  static float signal[CPX_SPECTRUM_X_SIZE], power[CPX_SPECTRUM_RESULT_1_SIZE], back[CPX_SPECTRUM_RESULT_2_SIZE];
  static nxc_c64 spectrum[CPX_SPECTRUM_RESULT_0_SIZE];
  fill(signal, CPX_SPECTRUM_X_SIZE, 1.0f);
  failures += check("cpx_spectrum_with_workspace", cpx_spectrum_with_workspace(signal, spectrum, power, back, cpx_ws));
  const float *parts = (const float *)spectrum;
  for (int i = 0; i < 2 * CPX_SPECTRUM_RESULT_0_SIZE; i++) printf("spectrum %d %.9g\n", i, (double)parts[i]);
  for (int i = 0; i < CPX_SPECTRUM_RESULT_1_SIZE; i++)
    printf("spectrum %d %.9g\n", 2 * CPX_SPECTRUM_RESULT_0_SIZE + i, (double)power[i]);
  for (int i = 0; i < CPX_SPECTRUM_RESULT_2_SIZE; i++)
    printf("spectrum %d %.9g\n", 3 * CPX_SPECTRUM_RESULT_0_SIZE + i, (double)back[i]);

  printf("workspace sm=%d mlp=%d\n", (int)SM_SOFTMAX_WORKSPACE_SIZE, (int)MLP_PREDICT_WORKSPACE_SIZE);
  printf("%s\n", failures ? "FAILED" : "DONE");
  return failures != 0;
}

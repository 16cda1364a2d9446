/* app.c - an edge app: classifies a batch of 4 sensor vectors with the MLP
 * that nxc compiled for this board, using a caller-owned static workspace.
 */
#include <stdint.h>
#include <stdio.h>

#include "mlp.h"
#include "nxrt.h"

static float w1[MLP_PREDICT_W1_SIZE], b1[MLP_PREDICT_B1_SIZE];
static float w2[MLP_PREDICT_W2_SIZE], b2[MLP_PREDICT_B2_SIZE];
static float batch[MLP_PREDICT_BATCH_SIZE], probs[MLP_PREDICT_RESULT_SIZE];
static _Alignas(64) unsigned char workspace[MLP_PREDICT_WORKSPACE_SIZE];

/* Deterministic stand-in weights: a small integer hash scaled to [-0.5, 0.5). */
static void init(float *p, int n, uint32_t salt) {
  for (int i = 0; i < n; i++) {
    uint32_t h = (uint32_t)i * 2654435761u ^ salt;
    p[i] = (float)(h % 1000u) / 1000.0f - 0.5f;
  }
}

int main(void) {
  init(w1, MLP_PREDICT_W1_SIZE, 1);
  init(b1, MLP_PREDICT_B1_SIZE, 2);
  init(w2, MLP_PREDICT_W2_SIZE, 3);
  init(b2, MLP_PREDICT_B2_SIZE, 4);
  init(batch, MLP_PREDICT_BATCH_SIZE, 5);
  int status = mlp_predict_with_workspace(w1, b1, w2, b2, batch, probs, workspace);
  if (status != NXRT_OK) {
    printf("mlp_predict failed: %s\n", nxrt_status_string(status));
    return 1;
  }
  const int classes = MLP_PREDICT_RESULT_SIZE / 4;
  for (int row = 0; row < 4; row++) {
    int best = 0;
    for (int c = 1; c < classes; c++)
      if (probs[row * classes + c] > probs[row * classes + best]) best = c;
    printf("sample %d: class %d (p = %.4f)\n", row, best, (double)probs[row * classes + best]);
  }
  printf("workspace: %d bytes, nxc runtime %s\n", (int)sizeof workspace, nxrt_version());
  return 0;
}

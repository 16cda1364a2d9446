/* The predict library with the trained weights in flash, on a Cortex-M4
 * (QEMU's mps2-an386): classifies the test images of samples.h one at a time
 * and checks each class against the host's. */
#include "fashion_m4.h"
#include "samples.h"

#include <stdio.h>

/* Bare metal has no heap: the workspace is a static buffer. */
static unsigned char workspace[FASHION_M4_PREDICT_WORKSPACE_SIZE + 1]
    __attribute__((aligned(FASHION_M4_PREDICT_WORKSPACE_ALIGN)));

int main(void) {
  static float image[784], probs[10];
  int agree = 0;
  for (int i = 0; i < SAMPLES; ++i) {
    for (int p = 0; p < 784; ++p) image[p] = sample_pixels[i][p] / 255.0f;
    if (fashion_m4_predict_with_workspace(image, probs, workspace) != 0) return 1;
    int best = 0;
    for (int k = 1; k < 10; ++k)
      if (probs[k] > probs[best]) best = k;
    printf("sample %d: class %d (label %d, host %d)\n", i, best, sample_labels[i], host_classes[i]);
    agree += best == host_classes[i];
  }
  printf("cortex-m4 agrees with the host on %d of %d images\n", agree, SAMPLES);
  return agree == SAMPLES ? 0 : 1;
}

/* An edge program: it knows nothing but the generated header and library of
 * `predict` with the trained weights baked in (fashion.h / libfashion.a). It
 * classifies the 10,000 Fashion-MNIST test images in batches of 30 (the last
 * batch padded) and prints the accuracy. With --samples N FILE it also writes
 * the first N test images and their predicted classes as a C header, for the
 * Cortex-M4 build (classify_m4.c) to check itself against.
 *
 *   classify DATA_DIR [--samples N FILE.h]
 */
#include "fashion.h"
#include "mnist_data.h"

enum { BATCH = 30, IN = 784, OUT = 10 };

static int argmax(const float *v) {
  int best = 0;
  for (int k = 1; k < OUT; ++k)
    if (v[k] > v[best]) best = k;
  return best;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DATA_DIR [--samples N FILE.h]\n", argv[0]);
    return 2;
  }
  char ip[1024], lp[1024];
  snprintf(ip, sizeof ip, "%s/t10k-images-idx3-ubyte.gz", argv[1]);
  snprintf(lp, sizeof lp, "%s/t10k-labels-idx1-ubyte.gz", argv[1]);
  idx_file img, lab;
  if (idx_read(ip, 3, &img) || idx_read(lp, 1, &lab)) return 1;
  static float batch[BATCH * IN], probs[BATCH * OUT];
  int *predicted = malloc(sizeof(int) * (size_t)img.count);
  long correct = 0;
  for (long first = 0; first < img.count; first += BATCH) {
    batch_images(&img, first, BATCH, batch);
    if (fashion_predict(batch, probs) != 0) return 1;
    for (long i = 0; i < BATCH && first + i < img.count; ++i) {
      predicted[first + i] = argmax(probs + i * OUT);
      correct += predicted[first + i] == lab.data[first + i];
    }
  }
  printf("test accuracy: %.4f (%ld of %ld correct)\n", (double)correct / img.count, correct, img.count);
  if (argc >= 5 && !strcmp(argv[2], "--samples")) {
    int n = atoi(argv[3]);
    FILE *f = fopen(argv[4], "w");
    if (!f) return 1;
    fprintf(f, "/* The first %d Fashion-MNIST test images, their labels and the classes the host predicted. */\n", n);
    fprintf(f, "enum { SAMPLES = %d };\nstatic const unsigned char sample_pixels[%d][%d] = {\n", n, n, IN);
    for (int i = 0; i < n; ++i) {
      fprintf(f, "  {");
      for (int p = 0; p < IN; ++p) fprintf(f, "%d%s", img.data[i * IN + p], p + 1 < IN ? "," : "");
      fprintf(f, "},\n");
    }
    fprintf(f, "};\nstatic const int sample_labels[%d] = {", n);
    for (int i = 0; i < n; ++i) fprintf(f, "%d%s", lab.data[i], i + 1 < n ? ", " : "");
    fprintf(f, "};\nstatic const int host_classes[%d] = {", n);
    for (int i = 0; i < n; ++i) fprintf(f, "%d%s", predicted[i], i + 1 < n ? ", " : "");
    fprintf(f, "};\n");
    fclose(f);
  }
  return 0;
}

/* Trains the MNIST network of mnist.exs on Fashion-MNIST through the
 * ahead-of-time compiled defns: init_random_params, update_with_averages
 * (which runs update, and so grad) and accuracy. Prints the loss and the
 * accuracy per epoch, then the test accuracy, and writes the trained
 * parameters to an .npz file.
 *
 *   train DATA_DIR [--epochs N] [--limit IMAGES] [--out params.npz]
 */
#define _POSIX_C_SOURCE 200809L
#include "mnist.h"
#include "mnist_data.h"

#include <time.h>
#include <unistd.h>

enum { BATCH = 30, IN = 784, HIDDEN = 128, OUT = 10, TEST = 10000 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *checked_alloc(size_t bytes) {
  void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  return p;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DATA_DIR [--epochs N] [--limit IMAGES] [--out params.npz]\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1], *out = "params.npz";
  int epochs = 5;
  long limit = 0;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--epochs")) epochs = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--limit")) limit = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--out")) out = argv[i + 1];
  }
  char path[4][1024];
  const char *files[4] = {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                          "t10k-labels-idx1-ubyte.gz"};
  for (int k = 0; k < 4; ++k) snprintf(path[k], sizeof path[k], "%s/%s", dir, files[k]);
  idx_file train_img, train_lab, test_img, test_lab;
  if (idx_read(path[0], 3, &train_img) || idx_read(path[1], 1, &train_lab) || idx_read(path[2], 3, &test_img) ||
      idx_read(path[3], 1, &test_lab))
    return 1;
  if (limit > 0 && limit < train_img.count) train_img.count = train_lab.count = limit;
  long batches = train_img.count / BATCH;
  printf("%ld training images (%ld batches of %d), %ld test images\n", train_img.count, batches, BATCH, test_img.count);

  /* Two parameter sets, swapped after each step. */
  float *p[2][4];
  const long sizes[4] = {IN * HIDDEN, HIDDEN, HIDDEN * OUT, OUT};
  for (int s = 0; s < 2; ++s)
    for (int k = 0; k < 4; ++k) p[s][k] = checked_alloc(sizeof(float) * sizes[k]);
  void *iws = checked_alloc(mnist_init_random_params_workspace_size());
  if (mnist_init_random_params_with_workspace(p[0][0], p[0][1], p[0][2], p[0][3], iws) != 0) return 1;
  free(iws);

  void *ws = checked_alloc(mnist_update_with_averages_workspace_size());
  float *imgs = checked_alloc(sizeof(float) * BATCH * IN);
  uint8_t *labels = checked_alloc(BATCH * OUT);
  int cur = 0;
  int progress = isatty(2); /* a progress line on a terminal */
  double steps_time = 0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    float loss = 0, acc = 0, next_loss, next_acc;
    int32_t total = (int32_t)batches;
    double t0 = now();
    for (long b = 0; b < batches; ++b) {
      batch_images(&train_img, b * BATCH, BATCH, imgs);
      batch_labels(&train_lab, b * BATCH, BATCH, labels);
      int rc = mnist_update_with_averages_with_workspace(p[cur][0], p[cur][1], p[cur][2], p[cur][3], imgs, labels, &loss,
                                                         &acc, &total, p[1 - cur][0], p[1 - cur][1], p[1 - cur][2],
                                                         p[1 - cur][3], &next_loss, &next_acc, ws);
      if (rc != 0) {
        fprintf(stderr, "update failed: %d\n", rc);
        return 1;
      }
      loss = next_loss, acc = next_acc, cur = 1 - cur;
      if (progress && (b % 100 == 99 || b + 1 == batches)) {
        int done = (int)(40 * (b + 1) / batches);
        fprintf(stderr, "\repoch %d [%.*s%*s] %ld/%ld", epoch, done, "========================================",
                40 - done, "", b + 1, batches);
      }
    }
    double dt = now() - t0;
    steps_time += dt;
    if (progress) fprintf(stderr, "\n");
    printf("epoch %d: loss %.4f, training accuracy %.4f, %.2f s (%.1f us per step)\n", epoch, loss, acc, dt,
           dt / batches * 1e6);
  }

  /* Test accuracy: the defn `accuracy` over the whole test set at once. */
  float *test_x = checked_alloc(sizeof(float) * TEST * IN);
  uint8_t *test_y = checked_alloc(TEST * OUT);
  batch_images(&test_img, 0, TEST, test_x);
  batch_labels(&test_lab, 0, TEST, test_y);
  void *aws = checked_alloc(mnist_accuracy_workspace_size());
  float accuracy;
  if (mnist_accuracy_with_workspace(p[cur][0], p[cur][1], p[cur][2], p[cur][3], test_x, test_y, &accuracy, aws) != 0)
    return 1;
  printf("test accuracy: %.4f (%ld of %d correct)\n", accuracy, (long)(accuracy * TEST + 0.5), TEST);
  if (epochs > 0) printf("training time: %.2f s per epoch\n", steps_time / epochs);

  npz_array arrays[4] = {{"w1", p[cur][0], 2, {IN, HIDDEN}},
                         {"b1", p[cur][1], 1, {HIDDEN}},
                         {"w2", p[cur][2], 2, {HIDDEN, OUT}},
                         {"b2", p[cur][3], 1, {OUT}}};
  if (npz_write(out, arrays, 4) != 0) {
    fprintf(stderr, "cannot write %s\n", out);
    return 1;
  }
  printf("wrote %s\n", out);
  return 0;
}

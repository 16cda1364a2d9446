/* Calls each function of test/stream/stream.nx with its output at several
   offsets from a cache line (the streaming and the ordinary version) and
   writes each result to DIR/NAME_OFFSET.bin.
   stream_test DIR THREADS (built with -DTHREADED for a module with threads) */
#include "st.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *load(const char *dir, const char *name, size_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.bin", dir, name);
  FILE *f = fopen(path, "rb");
  void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!f || !p || fread(p, 1, bytes, f) != bytes) { fprintf(stderr, "cannot read %s\n", path); exit(2); }
  fclose(f);
  return p;
}

static void save(const char *dir, const char *name, int offset, const void *p, size_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s_%d.bin", dir, name, offset);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(p, 1, bytes, f) != bytes) { fprintf(stderr, "cannot write %s\n", path); exit(2); }
  fclose(f);
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  const char *dir = argv[1];
#ifdef THREADED
  if (st_set_threads(atoi(argv[2])) != atoi(argv[2])) { fprintf(stderr, "set_threads\n"); return 1; }
#endif
  const size_t n = 2048 * 1024;
  float *x = load(dir, "x", n * 4);
  double *xd = load(dir, "xd", 1024 * 1024 * 8), *cols = load(dir, "cols", 1024 * 8), *rows = load(dir, "rows", 1024 * 8);
  int *xi = load(dir, "xi", n * 4);
  /* Offsets in bytes from a 64-byte boundary: 0 and 64 stream, the others do not. */
  const int offsets[] = {0, 4, 8, 16, 32, 64};
  unsigned char *buf = aligned_alloc(64, n * 4 + 128);
  for (size_t k = 0; k < sizeof offsets / sizeof offsets[0]; ++k) {
    int off = offsets[k];
    void *out = buf + off;
    memset(buf, 0xA5, n * 4 + 128);
    if (st_layer_norm(x, out)) return 1;
    save(dir, "layer_norm", off, out, n * 4);
    memset(buf, 0xA5, n * 4 + 128);
    if (off % 8 == 0) { /* doubles at their natural alignment */
      if (st_affine(xd, cols, rows, out)) return 1;
      save(dir, "affine", off, out, 1024 * 1024 * 8);
      memset(buf, 0xA5, n * 4 + 128);
    }
    if (st_ints(xi, out)) return 1;
    save(dir, "ints", off, out, n * 4);
    /* Nothing written outside the output. */
    for (int i = 0; i < off; ++i)
      if (buf[i] != 0xA5) { fprintf(stderr, "byte %d before the output written\n", i); return 1; }
    for (size_t i = n * 4 + off; i < n * 4 + 128; ++i)
      if (buf[i] != 0xA5) { fprintf(stderr, "byte %zu after the output written\n", i); return 1; }
  }
  puts("ok");
  return 0;
}

/* Fashion-MNIST (or MNIST) IDX files and NumPy .npz output for the MNIST
 * example. Header-only; link with -lz. */
#ifndef MNIST_DATA_H
#define MNIST_DATA_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* An IDX file (optionally gzip-compressed): `count` items of `item` bytes. */
typedef struct {
  uint8_t *data;
  long count, item;
} idx_file;

static inline int idx_read(const char *path, int want_dims, idx_file *out) {
  gzFile f = gzopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    return -1;
  }
  unsigned char head[4];
  if (gzread(f, head, 4) != 4 || head[0] || head[1] || head[2] != 0x08 || head[3] != want_dims) {
    fprintf(stderr, "%s: not an IDX file of unsigned bytes with %d dimensions\n", path, want_dims);
    gzclose(f);
    return -1;
  }
  long dims[3] = {1, 1, 1};
  for (int d = 0; d < want_dims; ++d) {
    unsigned char b[4];
    if (gzread(f, b, 4) != 4) {
      gzclose(f);
      return -1;
    }
    dims[d] = ((long)b[0] << 24) | ((long)b[1] << 16) | ((long)b[2] << 8) | b[3];
  }
  out->count = dims[0];
  out->item = dims[1] * dims[2];
  out->data = malloc((size_t)(out->count * out->item));
  long want = out->count * out->item;
  long got = out->data ? gzread(f, out->data, (unsigned)want) : -1;
  gzclose(f);
  if (got != want) {
    fprintf(stderr, "%s: truncated (%ld of %ld bytes)\n", path, got, want);
    return -1;
  }
  return 0;
}

/* Images as f32 in [0, 1] (pixel / 255, as the Nx example divides), and
 * labels one-hot as u8, for items [first, first + n); items past the end of
 * the file are zero (a padded last batch). */
static inline void batch_images(const idx_file *img, long first, long n, float *out) {
  for (long i = 0; i < n; ++i)
    for (long p = 0; p < img->item; ++p)
      out[i * img->item + p] = first + i < img->count ? img->data[(first + i) * img->item + p] / 255.0f : 0.0f;
}
static inline void batch_labels(const idx_file *lab, long first, long n, uint8_t *out) {
  memset(out, 0, (size_t)(n * 10));
  for (long i = 0; i < n && first + i < lab->count; ++i) out[i * 10 + lab->data[first + i]] = 1;
}

/* --- .npz writing: a stored (uncompressed) zip of .npy files, as numpy.savez writes. --- */
typedef struct {
  const char *name;  /* "w1" is stored as "w1.npy" */
  const float *data;
  int rank;
  long shape[4];
} npz_array;

static inline void put16(FILE *f, unsigned v) { fputc(v & 255, f), fputc(v >> 8 & 255, f); }
static inline void put32(FILE *f, unsigned long v) { put16(f, v & 0xffff), put16(f, v >> 16 & 0xffff); }

static inline int npz_write(const char *path, const npz_array *arrays, int n) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  unsigned long offsets[16], crcs[16], sizes[16];
  char names[16][64];
  for (int a = 0; a < n; ++a) {
    char header[256], shape[96] = "";
    long count = 1;
    for (int d = 0; d < arrays[a].rank; ++d) {
      char dim[24];
      if (d + 1 < arrays[a].rank) snprintf(dim, sizeof dim, "%ld, ", arrays[a].shape[d]);
      else snprintf(dim, sizeof dim, arrays[a].rank == 1 ? "%ld," : "%ld", arrays[a].shape[d]);
      strcat(shape, dim);
      count *= arrays[a].shape[d];
    }
    int len = snprintf(header, sizeof header, "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", shape);
    int total = 10 + len + 1;
    int pad = (64 - total % 64) % 64;
    memset(header + len, ' ', (size_t)pad);
    header[len + pad] = '\n';
    int hlen = len + pad + 1;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 255), (unsigned char)(hlen >> 8)};
    unsigned long crc = crc32(0L, pre, 10);
    crc = crc32(crc, (const unsigned char *)header, (unsigned)hlen);
    crc = crc32(crc, (const unsigned char *)arrays[a].data, (unsigned)(count * 4));
    snprintf(names[a], sizeof names[a], "%s.npy", arrays[a].name);
    offsets[a] = (unsigned long)ftell(f);
    crcs[a] = crc;
    sizes[a] = 10 + (unsigned long)hlen + (unsigned long)count * 4;
    put32(f, 0x04034b50), put16(f, 20), put16(f, 0), put16(f, 0), put16(f, 0), put16(f, 0x21);
    put32(f, crc), put32(f, sizes[a]), put32(f, sizes[a]), put16(f, (unsigned)strlen(names[a])), put16(f, 0);
    fputs(names[a], f);
    fwrite(pre, 1, 10, f);
    fwrite(header, 1, (size_t)hlen, f);
    fwrite(arrays[a].data, 4, (size_t)count, f);
  }
  unsigned long dir = (unsigned long)ftell(f);
  for (int a = 0; a < n; ++a) {
    put32(f, 0x02014b50), put16(f, 20), put16(f, 20), put16(f, 0), put16(f, 0), put16(f, 0), put16(f, 0x21);
    put32(f, crcs[a]), put32(f, sizes[a]), put32(f, sizes[a]), put16(f, (unsigned)strlen(names[a]));
    put16(f, 0), put16(f, 0), put16(f, 0), put16(f, 0), put32(f, 0), put32(f, offsets[a]);
    fputs(names[a], f);
  }
  unsigned long end = (unsigned long)ftell(f);
  put32(f, 0x06054b50), put16(f, 0), put16(f, 0), put16(f, (unsigned)n), put16(f, (unsigned)n);
  put32(f, end - dir), put32(f, dir), put16(f, 0);
  return fclose(f);
}

#endif

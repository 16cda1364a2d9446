/* Timing helpers shared by the benchmark programs: a monotonic clock in
 * seconds and the comparison qsort needs to take medians. */
#ifndef BENCH_TIME_H
#define BENCH_TIME_H

#include <time.h>

static inline double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static inline int cmp(const void *a, const void *b) {
  double p = *(const double *)a, q = *(const double *)b;
  return p < q ? -1 : p > q;
}

#endif

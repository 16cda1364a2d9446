/* noheap_test.c - a call to a generated function makes no heap allocation.
 *
 * Interposes malloc, calloc, realloc, free (and aligned variants) for the
 * whole process, forwarding to glibc's own entry points, and counts the calls
 * made while a generated function runs: plain and _with_workspace entries of
 * the softmax (f32[1000000]) and of an MLP, against the .so or the .a, and
 * the softmax compiled with --threads 2 on two threads, once its workers are
 * started (pthread_create allocates their stacks, once).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "mlp.h"
#include "nxrt.h"
#include "sm.h"
#include "thr.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static int armed;
static long heap_calls;

void *malloc(size_t n) { heap_calls += armed; return __libc_malloc(n); }
void *calloc(size_t n, size_t m) { heap_calls += armed; return __libc_calloc(n, m); }
void *realloc(void *p, size_t n) { heap_calls += armed; return __libc_realloc(p, n); }
void free(void *p) { heap_calls += armed && p; __libc_free(p); }
void *aligned_alloc(size_t a, size_t n) { heap_calls += armed; return __libc_memalign(a, n); }
void *memalign(size_t a, size_t n) { heap_calls += armed; return __libc_memalign(a, n); }
int posix_memalign(void **p, size_t a, size_t n) {
  heap_calls += armed;
  *p = __libc_memalign(a, n);
  return *p ? 0 : 12;
}

static float x[SM_SOFTMAX_X_SIZE], y[SM_SOFTMAX_RESULT_SIZE];
static float w1[MLP_PREDICT_W1_SIZE], b1[MLP_PREDICT_B1_SIZE], w2[MLP_PREDICT_W2_SIZE], b2[MLP_PREDICT_B2_SIZE];
static float batch[MLP_PREDICT_BATCH_SIZE], probs[MLP_PREDICT_RESULT_SIZE];
static _Alignas(64) unsigned char ws[MLP_PREDICT_WORKSPACE_SIZE + 1];
/* The million-element sum keeps its block sums (1 KB) in the workspace. */
static _Alignas(64) unsigned char sm_ws[SM_SOFTMAX_WORKSPACE_SIZE + 1];
static _Alignas(64) unsigned char thr_ws[THR_SOFTMAX_WORKSPACE_SIZE + 1];

static int expect_no_heap(const char *what, int status, long calls) {
  printf("%-40s status %d, heap calls %ld\n", what, status, calls);
  return status != NXRT_OK || calls != 0;
}

int main(void) {
  for (int i = 0; i < SM_SOFTMAX_X_SIZE; i++) x[i] = (float)(i % 17) * 0.25f;
  for (int i = 0; i < MLP_PREDICT_W1_SIZE; i++) w1[i] = (float)(i % 7) * 0.01f;
  for (int i = 0; i < MLP_PREDICT_BATCH_SIZE; i++) batch[i] = (float)(i % 5) * 0.2f;
  /* Make sure the interposed functions are what the process uses. */
  armed = 1;
  void *volatile probe = malloc(16); /* volatile: the pair must not be optimized away */
  free(probe);
  armed = 0;
  if (heap_calls != 2) {
    printf("FAIL: the malloc interposition is not active (%ld calls)\n", heap_calls);
    return 1;
  }
  int failures = 0;
  long before;
  int status;
#define MEASURE(what, call)                                                                        \
  before = heap_calls;                                                                             \
  armed = 1;                                                                                       \
  status = (call);                                                                                 \
  armed = 0;                                                                                       \
  failures += expect_no_heap(what, status, heap_calls - before)
  MEASURE("sm_softmax", sm_softmax(x, y));
  MEASURE("sm_softmax_with_workspace", sm_softmax_with_workspace(x, y, sm_ws));
  MEASURE("mlp_predict", mlp_predict(w1, b1, w2, b2, batch, probs));
  MEASURE("mlp_predict_with_workspace", mlp_predict_with_workspace(w1, b1, w2, b2, batch, probs, ws));
  thr_set_threads(2);
  (void)thr_softmax_with_workspace(x, y, thr_ws); /* starts the workers */
  MEASURE("thr_softmax_with_workspace (2 threads)", thr_softmax_with_workspace(x, y, thr_ws));
  MEASURE("thr_softmax (2 threads)", thr_softmax(x, y));
  printf("workspace: sm %d bytes, mlp %d bytes\n", (int)SM_SOFTMAX_WORKSPACE_SIZE, (int)MLP_PREDICT_WORKSPACE_SIZE);
  printf("%s\n", failures ? "FAILED" : "PASS");
  return failures != 0;
}

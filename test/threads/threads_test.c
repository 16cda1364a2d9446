/* The thread pool of modules compiled with --threads (test/threads).
 *
 * thr.h is Thr compiled with --threads 4 --min-parallel-work 0, one.h the
 * same functions compiled without threads. Modes:
 *   threads_test check     every function, for thread counts 1..4 (and the
 *                          clamps), bit for bit equal to its results at one
 *                          thread, also from eight application threads calling
 *                          at once, and in a child of fork(); at one thread,
 *                          close to the module without threads
 *   threads_test check-without-fork   the same but fork() (qemu-user cannot
 *                          fork a process with threads)
 *   threads_test count     prints thr_threads() (the count chosen at start)
 *   threads_test variant   (x86-64 hosts) prints thr_cpu_variant() (the CPU variant in use;
 *                          $NXC_CPU_VARIANT picks one the CPU can run)
 *   threads_test dlopen SO loads SO, runs it on the pool, unloads it and
 *                          goes on (the workers must be gone with it)
 */
#define _GNU_SOURCE
#include "one.h"
#include "thr.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                     \
      printf(__VA_ARGS__);                                                                                             \
      printf("\n");                                                                                                    \
      ++failures;                                                                                                      \
    }                                                                                                                  \
  } while (0)

/* $THREADS_TEST_SEED (the Python driver picks one per run and prints it):
 * the inputs are random floats of [-1, 1) with all 24 bits of significand,
 * whose products and sums round, so any change of association shows. */
static uint32_t run_seed;

static void fill(float *p, size_t n, uint32_t seed) {
  seed ^= run_seed * 2654435761u;
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = (float)(seed >> 8) / 8388608.0f - 1.0f;
  }
}

static float *floats(size_t n, uint32_t seed) {
  float *p = malloc(n * sizeof(float));
  fill(p, n, seed);
  return p;
}

static void *workspace(size_t bytes) { return aligned_alloc(64, bytes < 64 ? 64 : (bytes + 63) / 64 * 64); }

/* Inputs. */
static float *nx, *sx, *dx, *dw, *db, *ka, *kb, *cx, *rx, *fa, *fb, *ta, *tb;

/* Every function's results. */
typedef struct {
  float norm[THR_NORM_RESULT_SIZE], softmax[THR_SOFTMAX_RESULT_SIZE], dense[THR_DENSE_RESULT_SIZE],
      skinny[THR_SKINNY_RESULT_SIZE], sums[THR_COLUMNS_RESULT_0_SIZE], scan[THR_COLUMNS_RESULT_1_SIZE],
      prod[THR_SHORT_ROWS_RESULT_0_SIZE], var[THR_SHORT_ROWS_RESULT_1_SIZE], first[THR_CONTRACT_FIRST_RESULT_SIZE],
      small[THR_SMALL_DOT_RESULT_SIZE];
} Results;

/* A module's entry points: thr and one have the same signatures. */
typedef struct {
  int (*norm)(const float *, float *, void *);
  int (*softmax)(const float *, float *, void *);
  int (*dense)(const float *, const float *, const float *, float *, void *);
  int (*skinny)(const float *, const float *, float *, void *);
  int (*columns)(const float *, float *, float *, void *);
  int (*short_rows)(const float *, float *, float *, void *);
  int (*contract_first)(const float *, const float *, float *, void *);
  int (*small_dot)(const float *, const float *, float *, void *);
  size_t workspace;
} Module;

static Module module(int threaded) {
  if (threaded)
    return (Module){thr_norm_with_workspace, thr_softmax_with_workspace, thr_dense_with_workspace,
                    thr_skinny_with_workspace, thr_columns_with_workspace, thr_short_rows_with_workspace,
                    thr_contract_first_with_workspace, thr_small_dot_with_workspace,
                    thr_norm_workspace_size() + thr_softmax_workspace_size() + thr_dense_workspace_size() +
                        thr_skinny_workspace_size() + thr_columns_workspace_size() + thr_short_rows_workspace_size() +
                        thr_contract_first_workspace_size() + thr_small_dot_workspace_size()};
  return (Module){one_norm_with_workspace, one_softmax_with_workspace, one_dense_with_workspace,
                  one_skinny_with_workspace, one_columns_with_workspace, one_short_rows_with_workspace,
                  one_contract_first_with_workspace, one_small_dot_with_workspace,
                  one_norm_workspace_size() + one_softmax_workspace_size() + one_dense_workspace_size() +
                      one_skinny_workspace_size() + one_columns_workspace_size() + one_short_rows_workspace_size() +
                      one_contract_first_workspace_size() + one_small_dot_workspace_size()};
}

/* Runs every function of `m` into `r`; returns how many failed. */
static int run_all(Module m, Results *r) {
  void *ws = workspace(m.workspace);
  int failed = (m.norm(nx, r->norm, ws) != 0) + (m.softmax(sx, r->softmax, ws) != 0) +
               (m.dense(dx, dw, db, r->dense, ws) != 0) + (m.skinny(ka, kb, r->skinny, ws) != 0) +
               (m.columns(cx, r->sums, r->scan, ws) != 0) + (m.short_rows(rx, r->prod, r->var, ws) != 0) +
               (m.contract_first(fa, fb, r->first, ws) != 0) + (m.small_dot(ta, tb, r->small, ws) != 0);
  free(ws);
  return failed;
}

/* The threaded module's results at one thread. */
static Results *reference;

/* Within 1e-5 of the largest magnitude. */
static void close_to(const char *name, const float *got, const float *want, size_t n) {
  float scale = 0, worst = 0;
  for (size_t i = 0; i < n; ++i) scale = fabsf(want[i]) > scale ? fabsf(want[i]) : scale;
  for (size_t i = 0; i < n; ++i) worst = fabsf(got[i] - want[i]) > worst ? fabsf(got[i] - want[i]) : worst;
  CHECK(worst <= 1e-5f * scale, "%s without threads differs by %g (largest magnitude %g)", name, worst, scale);
}

/* Runs every threaded function once and compares with the results at one
 * thread, bit for bit; returns the mismatches. */
static int compare_all(const char *when) {
  Results *r = malloc(sizeof(Results));
  int bad = run_all(module(1), r);
  bad += memcmp(r->norm, reference->norm, sizeof r->norm) != 0;
  bad += memcmp(r->softmax, reference->softmax, sizeof r->softmax) != 0;
  bad += memcmp(r->dense, reference->dense, sizeof r->dense) != 0;
  bad += memcmp(r->skinny, reference->skinny, sizeof r->skinny) != 0;
  bad += memcmp(r->sums, reference->sums, sizeof r->sums) != 0 || memcmp(r->scan, reference->scan, sizeof r->scan) != 0;
  bad += memcmp(r->prod, reference->prod, sizeof r->prod) != 0 || memcmp(r->var, reference->var, sizeof r->var) != 0;
  bad += memcmp(r->first, reference->first, sizeof r->first) != 0;
  bad += memcmp(r->small, reference->small, sizeof r->small) != 0;
  CHECK(bad == 0, "%s: %d functions differ from their results at one thread", when, bad);
  free(r);
  return bad;
}

static void *caller(void *arg) {
  (void)arg;
  for (int i = 0; i < 20; ++i)
    if (compare_all("concurrent callers")) break;
  return 0;
}

static void check(int with_fork) {
  nx = floats(THR_NORM_X_SIZE, 1), sx = floats(THR_SOFTMAX_X_SIZE, 2);
  dx = floats(THR_DENSE_X_SIZE, 3), dw = floats(THR_DENSE_W_SIZE, 4), db = floats(THR_DENSE_B_SIZE, 5);
  ka = floats(THR_SKINNY_A_SIZE, 6), kb = floats(THR_SKINNY_B_SIZE, 7), cx = floats(THR_COLUMNS_X_SIZE, 8);
  rx = floats(THR_SHORT_ROWS_X_SIZE, 9), fa = floats(THR_CONTRACT_FIRST_A_SIZE, 10);
  fb = floats(THR_CONTRACT_FIRST_B_SIZE, 11), ta = floats(THR_SMALL_DOT_A_SIZE, 12);
  tb = floats(THR_SMALL_DOT_B_SIZE, 13);
  /* The results at one thread... */
  CHECK(thr_set_threads(1) == 1, "thr_set_threads(1)");
  reference = malloc(sizeof(Results));
  CHECK(run_all(module(1), reference) == 0, "a thr function failed");
  /* ...agree with the module without threads (LLVM may reassociate the
   * reductions of a loop moved into a function of its own differently). */
  Results *unthreaded = malloc(sizeof(Results));
  CHECK(run_all(module(0), unthreaded) == 0, "a one function failed");
  close_to("norm", unthreaded->norm, reference->norm, THR_NORM_RESULT_SIZE);
  close_to("softmax", unthreaded->softmax, reference->softmax, THR_SOFTMAX_RESULT_SIZE);
  close_to("dense", unthreaded->dense, reference->dense, THR_DENSE_RESULT_SIZE);
  close_to("skinny", unthreaded->skinny, reference->skinny, THR_SKINNY_RESULT_SIZE);
  close_to("columns.0", unthreaded->sums, reference->sums, THR_COLUMNS_RESULT_0_SIZE);
  close_to("columns.1", unthreaded->scan, reference->scan, THR_COLUMNS_RESULT_1_SIZE);
  close_to("short_rows.0", unthreaded->prod, reference->prod, THR_SHORT_ROWS_RESULT_0_SIZE);
  close_to("short_rows.1", unthreaded->var, reference->var, THR_SHORT_ROWS_RESULT_1_SIZE);
  close_to("contract_first", unthreaded->first, reference->first, THR_CONTRACT_FIRST_RESULT_SIZE);
  close_to("small_dot", unthreaded->small, reference->small, THR_SMALL_DOT_RESULT_SIZE);
  free(unthreaded);
  /* The per-thread temporaries are part of the workspace. */
  CHECK(thr_norm_workspace_size() > one_norm_workspace_size(), "thr_norm's workspace (%zu) holds no per-thread rows",
        thr_norm_workspace_size());

  for (int t = 1; t <= 4; ++t) {
    CHECK(thr_set_threads(t) == t, "thr_set_threads(%d)", t);
    CHECK(thr_threads() == t, "thr_threads() after setting %d", t);
    char when[32];
    snprintf(when, sizeof when, "%d threads", t);
    compare_all(when);
  }
  CHECK(thr_set_threads(0) == 1, "thr_set_threads(0) clamps to 1");
  CHECK(thr_set_threads(-5) == 1, "thr_set_threads(-5) clamps to 1");
  CHECK(thr_set_threads(99) == 4, "thr_set_threads(99) clamps to --threads 4");
  compare_all("99 threads asked");

  /* Application threads calling at once: whoever finds the pool busy runs alone. */
  pthread_t callers[8];
  for (int i = 0; i < 8; ++i) pthread_create(&callers[i], 0, caller, 0);
  for (int i = 0; i < 8; ++i) pthread_join(callers[i], 0);

  /* A child of fork() has none of the parent's workers; it starts its own. */
  if (with_fork) {
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) _exit(compare_all("in a child of fork()") ? 1 : 0);
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child of fork() failed (status %d)", status);
  }

  /* Stopped workers start again with the next call. */
  thr_stop_threads();
  thr_stop_threads();
  compare_all("after thr_stop_threads()");

  /* Calls in a loop (the workers spin between them) stay correct. */
  for (int i = 0; i < 200; ++i)
    if (compare_all("calls in a loop")) break;
}

static int dlopen_mode(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) return printf("FAIL dlopen: %s\n", dlerror()), 1;
  int (*set)(int) = (int (*)(int))dlsym(h, "thr_set_threads");
  int (*norm)(const float *, float *, void *) = (int (*)(const float *, float *, void *))dlsym(h, "thr_norm_with_workspace");
  size_t (*size)(void) = (size_t(*)(void))dlsym(h, "thr_norm_workspace_size");
  if (!set || !norm || !size) return printf("FAIL dlsym\n"), 1;
  set(4);
  float *x = floats(THR_NORM_X_SIZE, 1), *y = malloc(THR_NORM_RESULT_SIZE * sizeof(float));
  void *ws = workspace(size());
  for (int i = 0; i < 10; ++i)
    if (norm(x, y, ws) != 0) return printf("FAIL thr_norm\n"), 1;
  if (dlclose(h) != 0) return printf("FAIL dlclose: %s\n", dlerror()), 1;
  /* Workers left running would now execute unmapped code. */
  struct timespec pause = {0, 50 * 1000 * 1000};
  nanosleep(&pause, 0);
  printf("unloaded\n");
  return 0;
}

int main(int argc, char **argv) {
  const char *seed = getenv("THREADS_TEST_SEED");
  run_seed = seed ? (uint32_t)strtoul(seed, 0, 10) : 0;
#ifdef THREADS_TEST_VARIANTS
  if (argc >= 2 && strcmp(argv[1], "variant") == 0) return printf("%s\n", thr_cpu_variant()), 0;
#endif
  if (argc >= 2 && strcmp(argv[1], "count") == 0) return printf("%d\n", thr_threads()), 0;
  if (argc >= 3 && strcmp(argv[1], "dlopen") == 0) return dlopen_mode(argv[2]);
  if (argc >= 2 && (strcmp(argv[1], "check") == 0 || strcmp(argv[1], "check-without-fork") == 0)) {
    check(strcmp(argv[1], "check") == 0);
    printf(failures ? "%d failures\n" : "ok\n", failures);
    return failures != 0;
  }
  fprintf(stderr, "usage: threads_test check | check-without-fork | count | dlopen SO\n");
  return 2;
}

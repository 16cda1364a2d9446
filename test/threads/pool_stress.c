/* The thread pool alone (runtime/thread_pool.c), built with ThreadSanitizer
 * by test/threads: application threads run jobs of every size on the pool at
 * once, change the thread count and stop the workers between jobs; every
 * element of every job must be written exactly once, by the job's own
 * task, no two chunks of a job may run at once with the same thread index
 * (it picks a thread's temporaries), and TSan must see no data race. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void nxc_pool_run(void (*task)(void *, int64_t, int64_t, int32_t), void *context, int64_t n, int most);
int nxc_pool_set_threads(int n, int most);
void nxc_pool_stop(void);

enum { MOST = 4, CALLERS = 4, JOBS = 300, MAXN = 1000 };

typedef struct {
  int values[MAXN];
  int tag;
  int running[MOST]; /* chunks running with thread index k */
} Job;

static void task(void *context, int64_t lo, int64_t hi, int32_t thread) {
  Job *job = context;
  if (thread < 0 || thread >= MOST) abort();
  if (__atomic_add_fetch(&job->running[thread], 1, __ATOMIC_SEQ_CST) != 1) {
    fprintf(stderr, "two chunks at once with thread index %d\n", thread);
    abort();
  }
  for (int64_t i = lo; i < hi; ++i) job->values[i] += job->tag + (int)i;
  __atomic_sub_fetch(&job->running[thread], 1, __ATOMIC_SEQ_CST);
}

static int failures;

static void *caller(void *arg) {
  int id = (int)(intptr_t)arg;
  Job *job = calloc(1, sizeof(Job));
  for (int k = 0; k < JOBS; ++k) {
    int n = (k * 37 + id * 11) % MAXN;
    job->tag = id * 100000 + k;
    for (int i = 0; i < n; ++i) job->values[i] = 0;
    if (k % 3 == 1) nxc_pool_set_threads(1 + (k + id) % MOST, MOST);
    if (id == 0 && k % 97 == 13) nxc_pool_stop();
    nxc_pool_run(task, job, n, MOST);
    for (int i = 0; i < n; ++i)
      if (job->values[i] != job->tag + i) {
        __atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);
        fprintf(stderr, "caller %d job %d element %d: %d, expected %d\n", id, k, i, job->values[i], job->tag + i);
        break;
      }
  }
  free(job);
  return 0;
}

int main(void) {
  nxc_pool_set_threads(MOST, MOST);
  pthread_t callers[CALLERS];
  for (int i = 0; i < CALLERS; ++i) pthread_create(&callers[i], 0, caller, (void *)(intptr_t)i);
  for (int i = 0; i < CALLERS; ++i) pthread_join(callers[i], 0);
  printf(failures ? "%d failures\n" : "ok\n", failures);
  return failures != 0;
}

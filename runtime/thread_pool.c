/* thread_pool.c - the thread pool of a module compiled with --threads N > 1.
 *
 * Linked into each such module as LLVM bitcode, with internal linkage
 * (lib/Pipeline/ParallelDispatch.cpp): every module has a pool of its own.
 * The generated code calls nxc_pool_run() for each large parallel loop; the
 * module exports MODULE_set_threads(), MODULE_threads() and
 * MODULE_stop_threads() around nxc_pool_set_threads(), nxc_pool_threads()
 * and nxc_pool_stop().
 *
 * The pool:
 *   - starts its worker threads (pthreads) on the first call that uses more
 *     than one thread, never before;
 *   - splits [0, n) into one contiguous chunk per thread; the calling thread
 *     runs chunk 0 and worker k chunk k, so every chunk is computed exactly
 *     as a single thread computes it and the results do not depend on the
 *     thread count;
 *   - lets the caller, once its chunk is done, take the chunks no worker has
 *     claimed yet (a worker the OS has not scheduled, on a machine whose
 *     other cores are busy, then costs nothing instead of a time slice);
 *     a chunk is claimed by one atomic exchange, and the caller waits only
 *     for chunks being run;
 *   - lets idle workers spin for a while (calls in a loop then start without
 *     a system call) and then sleep on a condition variable;
 *   - runs a call on the calling thread alone when another thread of the
 *     application is using the pool at that moment;
 *   - starts afresh in a child of fork(), which has none of the workers;
 *   - stops and joins its workers when the module is unloaded, the process
 *     exits (a destructor) or the application asks (they start again with
 *     the next call that needs them).
 *
 * The same bitcode serves every Linux target of a pointer size, so it
 * declares the few C library functions it calls itself and keeps pthread's
 * mutex and condition variable in zeroed storage larger than any C
 * library's (a zeroed pthread_mutex_t and pthread_cond_t are the static
 * initializers in glibc and musl).
 */
#include <stdint.h>

typedef unsigned long nxc_thread_t; /* pthread_t */
int pthread_create(nxc_thread_t *thread, const void *attr, void *(*start)(void *), void *arg);
int pthread_join(nxc_thread_t thread, void **result);
int pthread_mutex_lock(void *mutex);
int pthread_mutex_unlock(void *mutex);
int pthread_cond_wait(void *cond, void *mutex);
int pthread_cond_broadcast(void *cond);
int sched_getaffinity(int pid, unsigned long size, void *mask);
char *getenv(const char *name);
int getpid(void);

typedef void (*nxc_task)(void *context, int64_t lo, int64_t hi, int32_t thread);

#define NXC_POOL_CAPACITY 256
/* Spins before an idle worker sleeps, and before a caller waits on the
 * condition variable for the last chunks: long enough that calls in a loop
 * never sleep, short enough that an idle process stops burning a core. The
 * loops spin on plain loads, without x86's `pause`: on virtual machines a
 * loop of pauses triggers pause-loop exiting, and the hypervisor takes the
 * spinning virtual CPU away (with `pause`, a 2-thread 3x3 convolution on a
 * cloud VM ran at its 1-thread time, 1.21 ms instead of 0.61 ms). */
#define NXC_SPINS (1 << 18)

typedef struct {
  _Alignas(16) unsigned char bytes[64];
} nxc_sync_storage;

static struct {
  nxc_sync_storage mutex, wake, done;
  int threads;               /* in effect; 0: not chosen yet */
  int pid;                   /* the process that started the workers (atomic) */
  int started;               /* workers running (threads 1..started; atomic) */
  int stopping;
  unsigned generation;       /* bumped for each job */
  int sleepers;              /* workers or a caller waiting on a condition */
  int busy;                  /* a caller owns the pool */
  int pending;               /* chunks of the job not finished */
  int chunks;
  nxc_task task;
  void *context;
  int64_t n;
  nxc_thread_t handles[NXC_POOL_CAPACITY];
  unsigned first_seen[NXC_POOL_CAPACITY];
  /* 1 while chunk k of the current job is unclaimed; a job opens its chunks
   * only once its descriptor (task, context, n, chunks) is written, and
   * every chunk is claimed before the job ends, so a worker that wakes late
   * claims nothing, or a chunk of the job in progress. */
  int open[NXC_POOL_CAPACITY];
} pool;

static int load(int *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static unsigned load_u(unsigned *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }

/* The CPUs this process may run on. */
static int available_cpus(void) {
  unsigned long mask[16];
  for (int i = 0; i < 16; ++i) mask[i] = 0;
  if (sched_getaffinity(0, sizeof mask, mask) != 0) return 1;
  int count = 0;
  for (int i = 0; i < 16; ++i) count += __builtin_popcountl(mask[i]);
  return count > 0 ? count : 1;
}

static int parse_count(const char *s) {
  if (!s || !*s) return 0;
  int v = 0;
  for (; *s; ++s) {
    if (*s < '0' || *s > '9' || v > 100000) return 0;
    v = v * 10 + (*s - '0');
  }
  return v;
}

static int clamp(int n, int most) { return n < 1 ? 1 : n > most ? most : n; }

int nxc_pool_set_threads(int n, int most) {
  __atomic_store_n(&pool.threads, clamp(n, most), __ATOMIC_SEQ_CST);
  return load(&pool.threads);
}

/* $NXC_NUM_THREADS, else the available CPUs, at most `most`. */
int nxc_pool_threads(int most) {
  int t = load(&pool.threads);
  if (t > 0) return t;
  int wanted = parse_count(getenv("NXC_NUM_THREADS"));
  int chosen = clamp(wanted > 0 ? wanted : available_cpus(), most);
  int expected = 0;
  __atomic_compare_exchange_n(&pool.threads, &expected, chosen, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return load(&pool.threads);
}

/* Whether this thread gets chunk `chunk` of the current job. */
static int claim(int chunk) {
  int expected = 1;
  return __atomic_compare_exchange_n(&pool.open[chunk], &expected, 0, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* Runs a claimed chunk; the last one finished wakes a waiting caller. */
static void run_chunk(int chunk) {
  int64_t lo = pool.n * chunk / pool.chunks, hi = pool.n * (chunk + 1) / pool.chunks;
  if (lo < hi) pool.task(pool.context, lo, hi, chunk);
  if (__atomic_sub_fetch(&pool.pending, 1, __ATOMIC_SEQ_CST) == 0 && load(&pool.sleepers) > 0) {
    pthread_mutex_lock(&pool.mutex);
    pthread_cond_broadcast(&pool.done);
    pthread_mutex_unlock(&pool.mutex);
  }
}

static void *worker(void *arg) {
  int self = (int)(intptr_t)arg;
  unsigned seen = pool.first_seen[self];
  for (;;) {
    unsigned g = load_u(&pool.generation);
    for (int spin = 0; g == seen && spin < NXC_SPINS && !load(&pool.stopping); ++spin) g = load_u(&pool.generation);
    if (g == seen && !load(&pool.stopping)) {
      pthread_mutex_lock(&pool.mutex);
      __atomic_add_fetch(&pool.sleepers, 1, __ATOMIC_SEQ_CST);
      while ((g = load_u(&pool.generation)) == seen && !load(&pool.stopping))
        pthread_cond_wait(&pool.wake, &pool.mutex);
      __atomic_sub_fetch(&pool.sleepers, 1, __ATOMIC_SEQ_CST);
      pthread_mutex_unlock(&pool.mutex);
    }
    if (load(&pool.stopping)) return 0;
    seen = g;
    if (claim(self)) run_chunk(self);
  }
}

/* Starts workers 1..threads-1 that are not running yet; returns how many
 * threads (the caller included) can take chunks. */
static int start_workers(int threads) {
  /* A child of fork() has none of its parent's workers, and their mutex and
   * conditions may be in any state: start afresh. */
  if (pool.started > 0 && getpid() != pool.pid) {
    for (unsigned i = 0; i < sizeof pool.mutex; ++i) pool.mutex.bytes[i] = pool.wake.bytes[i] = pool.done.bytes[i] = 0;
    pool.sleepers = 0;
    __atomic_store_n(&pool.started, 0, __ATOMIC_SEQ_CST);
  }
  __atomic_store_n(&pool.pid, getpid(), __ATOMIC_SEQ_CST);
  while (pool.started + 1 < threads) {
    int index = pool.started + 1;
    /* The job a new worker must not take for a new one: the last. */
    pool.first_seen[index] = load_u(&pool.generation);
    if (pthread_create(&pool.handles[index], 0, worker, (void *)(intptr_t)index) != 0) break;
    __atomic_store_n(&pool.started, index, __ATOMIC_SEQ_CST);
  }
  return pool.started + 1;
}

/* Runs task over [0, n) on up to `most` threads. */
void nxc_pool_run(nxc_task task, void *context, int64_t n, int most) {
  int threads = nxc_pool_threads(most);
  if (threads > n) threads = (int)n;
  int expected = 0;
  if (threads <= 1 || !__atomic_compare_exchange_n(&pool.busy, &expected, 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    if (n > 0) task(context, 0, n, 0);
    return;
  }
  threads = start_workers(threads);
  pool.task = task;
  pool.context = context;
  pool.n = n;
  pool.chunks = threads;
  __atomic_store_n(&pool.pending, threads, __ATOMIC_SEQ_CST);
  for (int k = 1; k < threads; ++k) __atomic_store_n(&pool.open[k], 1, __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&pool.generation, 1, __ATOMIC_SEQ_CST);
  if (load(&pool.sleepers) > 0) {
    pthread_mutex_lock(&pool.mutex);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mutex);
  }
  run_chunk(0);
  for (int k = 1; k < threads; ++k)
    if (claim(k)) run_chunk(k);
  for (int spin = 0; load(&pool.pending) > 0 && spin < NXC_SPINS; ++spin) {
  }
  if (load(&pool.pending) > 0) {
    pthread_mutex_lock(&pool.mutex);
    __atomic_add_fetch(&pool.sleepers, 1, __ATOMIC_SEQ_CST);
    while (load(&pool.pending) > 0) pthread_cond_wait(&pool.done, &pool.mutex);
    __atomic_sub_fetch(&pool.sleepers, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&pool.mutex);
  }
  __atomic_store_n(&pool.busy, 0, __ATOMIC_SEQ_CST);
}

/* Stops and joins the workers, once no call is using them; a later call
 * starts them again. Runs when the module is unloaded or the process exits,
 * and as MODULE_stop_threads(). */
__attribute__((destructor)) void nxc_pool_stop(void) {
  /* Read before owning the pool (a caller may be starting workers), so
   * atomically; a child of fork() never waits for its parent's caller. */
  if (load(&pool.started) == 0 || getpid() != load(&pool.pid)) return;
  int expected = 0;
  while (!__atomic_compare_exchange_n(&pool.busy, &expected, 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) expected = 0;
  pthread_mutex_lock(&pool.mutex);
  __atomic_store_n(&pool.stopping, 1, __ATOMIC_SEQ_CST);
  pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.mutex);
  for (int i = 1; i <= pool.started; ++i) pthread_join(pool.handles[i], 0);
  __atomic_store_n(&pool.started, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&pool.stopping, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&pool.busy, 0, __ATOMIC_SEQ_CST);
}

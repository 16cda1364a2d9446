/* The C side of the Elixir overhead benchmark: calls FN_packed of a module
 * that Nxc.export_aot wrote, in a loop, and prints the time per call.
 * Usage: call_packed LIB.so SYMBOL CALLS */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s LIB.so SYMBOL CALLS\n", argv[0]);
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL) /* lazy: an exported module is also a NIF, whose enif_* calls only the BEAM resolves */;
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  char name[512];
  snprintf(name, sizeof name, "%s_packed", argv[2]);
  int (*fn)(void **) = (int (*)(void **))dlsym(lib, name);
  snprintf(name, sizeof name, "%s_packed_layout", argv[2]);
  const uint64_t *layout = (const uint64_t *)dlsym(lib, name);
  snprintf(name, sizeof name, "%s_workspace_size", argv[2]);
  size_t (*ws)(void) = (size_t (*)(void))dlsym(lib, name);
  if (!fn || !layout || !ws) {
    fprintf(stderr, "%s: missing %s_packed, _packed_layout or _workspace_size\n", argv[1], argv[2]);
    return 1;
  }
  size_t n = (size_t)(layout[0] + layout[1]);
  void **args = calloc(n + 1, sizeof(void *));
  for (size_t i = 0; i < n; ++i) {
    args[i] = aligned_alloc(64, (layout[2 + i] + 63) / 64 * 64 + 64);
    memset(args[i], 0, layout[2 + i]);
  }
  args[n] = ws() ? aligned_alloc(64, (ws() + 63) / 64 * 64) : NULL;
  long calls = atol(argv[3]);
  for (long i = 0; i < calls / 10 + 1; ++i) fn(args); /* warm-up */
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    double t0 = now();
    for (long i = 0; i < calls; ++i)
      if (fn(args) != 0) return 1;
    double per = (now() - t0) / calls;
    if (per < best) best = per;
  }
  printf("%.3f\n", best * 1e6);
  return 0;
}

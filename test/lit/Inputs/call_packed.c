/* Calls pk_f_packed of the shared object argv[1] through dlsym (lit packed-entries.nx). */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  void *h = dlopen(argv[1], RTLD_NOW);
  if (!h) return 3;
  int (*f)(void **) = (int (*)(void **))dlsym(h, "pk_f_packed");
  if (!f) return 4;
  float x[3] = {1, 2, 3}, y[3] = {0, 0, 0};
  int n[3] = {10, 20, 30};
  void *args[] = {x, n, y, 0};
  int status = f(args);
  printf("%d %g %g %g\n", status, y[0], y[1], y[2]);
  const unsigned long long *layout = (const unsigned long long *)dlsym(h, "pk_f_packed_layout");
  if (!layout) return 5;
  printf("layout %llu %llu %llu %llu %llu\n", layout[0], layout[1], layout[2], layout[3], layout[4]);
  return 0;
}

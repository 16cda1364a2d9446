/* Calls the map-taking and map-returning functions of test/lit/containers.nx
 * through its generated header: leaves in key order, named by key. */
#include "containers.h"

#include <stdio.h>

int main(void) {
  const float x[4] = {1, 2, 3, 4};
  float max, mean[2], sum;
  int32_t size;
  int st = containers_stats(x, &max, mean, &sum, &size);
  printf("stats %d: max %g mean %g %g sum %g size %d\n", st, max, mean[0], mean[1], sum, (int)size);
  const float b[1] = {0.25f}, w[2] = {1.0f, 0.5f};
  float out[2];
  st = containers_predict(b, w, x, out);
  printf("predict %d: %g %g\n", st, out[0], out[1]);
  return 0;
}

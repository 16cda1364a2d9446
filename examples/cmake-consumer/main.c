/* Calls the module nxc_add_module() compiled from softmax.nx. */
#include <stdio.h>
#include "sm.h"
#include "nxrt.h"

int main(void) {
  float x[4] = {1.0f, 2.0f, 3.0f, 4.0f}, y[4];
  int status = sm_softmax(x, y);
  if (status != NXRT_OK) {
    fprintf(stderr, "sm_softmax: %s\n", nxrt_status_string(status));
    return 1;
  }
  printf("%.7f %.7f %.7f %.7f (variant %s, nxrt %s)\n", y[0], y[1], y[2], y[3], sm_cpu_variant(), nxrt_version());
  return 0;
}

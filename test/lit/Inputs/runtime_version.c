/* Calls the runtime's functions, linked with -lMODULE alone (lit runtime-standalone.test). */
#include "nxrt.h"
#include <stdio.h>

int main(void) {
  printf("%s / %s\n", nxrt_version(), nxrt_status_string(NXRT_ERROR_UNSUPPORTED_CPU));
  return 0;
}

/* nxrt.c - the nxc runtime.
 *
 * Compiled by nxc for each module's target (from LLVM bitcode embedded in
 * nxc) and shipped as libnxrt.a. It must stay freestanding: no libc calls,
 * no allocation, no global mutable state.
 */
#include "nxrt.h"

/* nxc's build defines NXRT_VERSION; the copy nxc ships beside a module has
 * the version written in, so that this file compiles on its own. */
#ifndef NXRT_VERSION
#define NXRT_VERSION "@NXRT_VERSION@"
#endif

const char *nxrt_version(void) { return NXRT_VERSION; }

const char *nxrt_status_string(int status) {
  switch (status) {
  case NXRT_OK:
    return "ok";
  case NXRT_ERROR_NULL_ARGUMENT:
    return "an argument or output pointer was NULL";
  case NXRT_ERROR_BAD_WORKSPACE:
    return "the workspace was NULL or misaligned";
  case NXRT_ERROR_UNSUPPORTED_CPU:
    return "this CPU lacks an instruction-set feature that every variant of the module needs";
  case NXRT_ERROR_NO_DEVICE:
    return "no CUDA driver or no CUDA GPU (MODULE_device_error() says which)";
  case NXRT_ERROR_DEVICE:
    return "a CUDA driver call or a kernel failed (MODULE_device_error() says which)";
  default:
    return "unknown status";
  }
}

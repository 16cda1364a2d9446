/* nxrt.h - the nxc runtime: status codes and version of generated modules.
 *
 * Plain C11, no dependencies. Every function that nxc generates returns one
 * of the NXRT_* status codes below.
 */
#ifndef NXRT_H
#define NXRT_H

#ifdef __cplusplus
extern "C" {
#endif

#ifndef NXRT_STATUS_CODES
#define NXRT_STATUS_CODES
/** The call succeeded and every output was written. */
#define NXRT_OK 0
/** An argument or output pointer was NULL; nothing was written. */
#define NXRT_ERROR_NULL_ARGUMENT 1
/** The workspace was NULL or not aligned as the header requires; nothing was written. */
#define NXRT_ERROR_BAD_WORKSPACE 2
/** The running CPU lacks an instruction-set feature that every variant of the
 *  module needs (MODULE_cpu_variant() names them); nothing was written. */
#define NXRT_ERROR_UNSUPPORTED_CPU 3
/** A CUDA module found no CUDA driver (libcuda.so.1) or no GPU; nothing was
 *  written. MODULE_device_error() says which. */
#define NXRT_ERROR_NO_DEVICE 4
/** A CUDA driver call failed (loading the module, a launch, a copy, the
 *  kernels themselves); MODULE_device_error() names it and the driver's error. */
#define NXRT_ERROR_DEVICE 5
#endif

/** The nxc runtime version, "MAJOR.MINOR.PATCH". */
const char *nxrt_version(void);

/** A static, human-readable description of a status code. */
const char *nxrt_status_string(int status);

#ifdef __cplusplus
}
#endif

#endif /* NXRT_H */

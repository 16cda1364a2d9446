/* cuda_loader.c - the CUDA side of a module built with --device cuda.
 *
 * Compiled to LLVM bitcode when nxc is built and linked into every CUDA
 * module, where all of it becomes internal: each module has its own copy
 * and its own state (driver entry points, loaded GPU binary, stream,
 * workspace), so several modules in one process never collide.
 *
 * - libcuda.so.1 is opened with dlopen at the first call, not at load time:
 *   a process that never calls pays nothing, and a machine without a driver
 *   or a GPU gets NXRT_ERROR_NO_DEVICE from the call (never an abort, never
 *   output). Entry points are looked up by the exact versioned names that
 *   cuda.h binds (cuMemAlloc_v2, ...).
 * - The GPU binary (a fatbin, or PTX the driver compiles) is loaded once, in
 *   the calling thread's current context if it has one (the context CUDA's
 *   runtime API uses), else in device 0's primary context. Kernels are looked
 *   up once and kept; so is the module's stream.
 * - A spin lock (no pthread, no thread-local storage) makes calls thread-safe;
 *   calls through the module's stream are serialized.
 *
 * MLIR's lowering of gpu.launch_func calls mgpuModuleLoad/mgpuModuleLoadJIT
 * from a global constructor and mgpuModuleGetFunction/mgpuLaunchKernel per
 * launch; they are defined here. No system header is included, so the same
 * bitcode serves every 64-bit Linux host.
 */
#include "nxrt.h"

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;
typedef unsigned long size_t_;
typedef long intptr_t_;

void *dlopen(const char *file, int mode);
void *dlsym(void *handle, const char *name);
int sched_yield(void);
#define RTLD_NOW 2
#define CU_STREAM_NON_BLOCKING 1
#define CU_JIT_ERROR_LOG_BUFFER 5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6
#define CUDA_ERROR_NO_DEVICE 100

/* The driver's entry points, each under the name cuda.h 13 binds. */
#define NXRT_CUDA_FUNCTIONS(X)                                                                                     \
  X(cuInit, "cuInit", CUresult, (unsigned))                                                                          \
  X(cuDeviceGetCount, "cuDeviceGetCount", CUresult, (int *))                                                         \
  X(cuDeviceGet, "cuDeviceGet", CUresult, (CUdevice *, int))                                                         \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult, (CUcontext *, CUdevice))                         \
  X(cuCtxGetCurrent, "cuCtxGetCurrent", CUresult, (CUcontext *))                                                     \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext))                                                       \
  X(cuModuleLoadData, "cuModuleLoadData", CUresult, (CUmodule *, const void *))                                      \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", CUresult, (CUmodule *, const void *, unsigned, int *, void **))        \
  X(cuModuleGetFunction, "cuModuleGetFunction", CUresult, (CUfunction *, CUmodule, const char *))                    \
  X(cuLaunchKernel, "cuLaunchKernel", CUresult,                                                                      \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **))  \
  X(cuStreamCreate, "cuStreamCreate", CUresult, (CUstream *, unsigned))                                              \
  X(cuStreamSynchronize, "cuStreamSynchronize", CUresult, (CUstream))                                                \
  X(cuMemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr *, size_t_))                                                 \
  X(cuMemFree, "cuMemFree_v2", CUresult, (CUdeviceptr))                                                              \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", CUresult, (CUdeviceptr, const void *, size_t_, CUstream))             \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", CUresult, (void *, CUdeviceptr, size_t_, CUstream))                   \
  X(cuGetErrorName, "cuGetErrorName", CUresult, (CUresult, const char **))

#define NXRT_DECLARE(field, name, ret, params) ret(*field) params;
static struct {
  NXRT_CUDA_FUNCTIONS(NXRT_DECLARE)
} cu;

enum { kMaxKernels = 512, kErrorBytes = 256 };

static struct {
  volatile int lock;
  int tried; /* load() ran */
  int state; /* its status: NXRT_OK, or the status every call returns */
  const void *image;
  int imageIsPtx;
  CUcontext context;
  CUmodule module;
  CUstream stream;
  CUdeviceptr workspace;
  unsigned long long workspaceBytes;
  volatile int launchError;
  struct {
    const char *name;
    CUfunction function;
  } kernels[kMaxKernels];
  char error[kErrorBytes];
} g;

static void lock(void) {
  while (__atomic_exchange_n(&g.lock, 1, __ATOMIC_ACQUIRE)) sched_yield();
}
static void unlock(void) { __atomic_store_n(&g.lock, 0, __ATOMIC_RELEASE); }

/* g.error = what + " (" + the driver's error name + ")" */
static void recordError(const char *what, CUresult r) {
  unsigned n = 0;
  for (const char *s = what; *s && n + 1 < kErrorBytes; ++s) g.error[n++] = *s;
  if (r) {
    const char *name = 0;
    if (cu.cuGetErrorName) cu.cuGetErrorName(r, &name);
    const char *parts[] = {" (", name ? name : "unknown error", ")"};
    for (int p = 0; p < 3; ++p)
      for (const char *s = parts[p]; *s && n + 1 < kErrorBytes; ++s) g.error[n++] = *s;
  }
  g.error[n] = 0;
}

static int fail(int status, const char *what, CUresult r) {
  recordError(what, r);
  return status;
}

/* Opens the driver, picks the context, loads the binary, makes the stream. */
static int load(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) return fail(NXRT_ERROR_NO_DEVICE, "libcuda.so.1 (the CUDA driver) could not be loaded", 0);
#define NXRT_LOOKUP(field, name, ret, params)                                                                      \
  cu.field = (ret(*) params)dlsym(lib, name);                                                                        \
  if (!cu.field) return fail(NXRT_ERROR_NO_DEVICE, "the CUDA driver lacks " name " (too old)", 0);
  NXRT_CUDA_FUNCTIONS(NXRT_LOOKUP)
  CUresult r = cu.cuInit(0);
  if (r) return fail(NXRT_ERROR_NO_DEVICE, "cuInit failed: no usable CUDA GPU", r);
  int count = 0;
  r = cu.cuDeviceGetCount(&count);
  if (r || count == 0) return fail(NXRT_ERROR_NO_DEVICE, "the CUDA driver found no GPU", r);
  r = cu.cuCtxGetCurrent(&g.context);
  if (r || !g.context) {
    CUdevice device;
    if ((r = cu.cuDeviceGet(&device, 0)) || (r = cu.cuDevicePrimaryCtxRetain(&g.context, device)))
      return fail(NXRT_ERROR_NO_DEVICE, "cannot open device 0's primary context", r);
    if ((r = cu.cuCtxSetCurrent(g.context))) return fail(NXRT_ERROR_DEVICE, "cuCtxSetCurrent failed", r);
  }
  if (!g.image) {
    /* no kernels at all (every tensor empty): nothing to load */
  } else if (g.imageIsPtx) {
    static char log[4096];
    int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log, (void *)(intptr_t_)sizeof log};
    r = cu.cuModuleLoadDataEx(&g.module, g.image, 2, options, values);
    if (r) return fail(NXRT_ERROR_DEVICE, "the driver could not compile the module's PTX for this GPU", r);
  } else {
    r = cu.cuModuleLoadData(&g.module, g.image);
    if (r)
      return fail(NXRT_ERROR_DEVICE, "the module's GPU binary has no code for this GPU (rebuild with its --gpu sm_XX)",
                  r);
  }
  if ((r = cu.cuStreamCreate(&g.stream, CU_STREAM_NON_BLOCKING)))
    return fail(NXRT_ERROR_DEVICE, "cuStreamCreate failed", r);
  return NXRT_OK;
}

/* Called with the lock held: loads on first use and makes the module's
 * context current in this thread. Returns the context to restore. */
static int ready(CUcontext *previous) {
  if (!g.tried) {
    g.state = load();
    g.tried = 1;
  }
  if (g.state != NXRT_OK) return g.state;
  *previous = 0;
  cu.cuCtxGetCurrent(previous);
  if (*previous != g.context) {
    CUresult r = cu.cuCtxSetCurrent(g.context);
    if (r) return fail(NXRT_ERROR_DEVICE, "cuCtxSetCurrent failed", r);
  }
  return NXRT_OK;
}

static int grow(CUdeviceptr *buffer, unsigned long long *bytes, unsigned long long needed) {
  if (needed <= *bytes) return NXRT_OK;
  if (*buffer) cu.cuMemFree(*buffer);
  *buffer = 0;
  *bytes = 0;
  CUresult r = cu.cuMemAlloc(buffer, needed);
  if (r) return fail(NXRT_ERROR_DEVICE, "cuMemAlloc failed (device memory for the call)", r);
  *bytes = needed;
  return NXRT_OK;
}

/* --- what MLIR's lowering calls --------------------------------------- */

void *mgpuModuleLoad(void *data, size_t_ size) {
  (void)size;
  g.image = data;
  g.imageIsPtx = 0;
  return &g;
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  (void)optLevel;
  g.image = data;
  g.imageIsPtx = 1;
  return &g;
}

void mgpuModuleUnload(void *module) { (void)module; /* the process's exit releases the context */ }

void *mgpuModuleGetFunction(void *module, const char *name) {
  (void)module;
  unsigned slot = (unsigned)(((unsigned long)name >> 4) % kMaxKernels);
  for (unsigned probe = 0; probe < kMaxKernels; ++probe, slot = (slot + 1) % kMaxKernels) {
    if (g.kernels[slot].name == name) return g.kernels[slot].function;
    if (!g.kernels[slot].name) break;
  }
  CUfunction f = 0;
  CUresult r = cu.cuModuleGetFunction(&f, g.module, name);
  if (r) {
    recordError("cuModuleGetFunction failed", r);
    return 0;
  }
  if (!g.kernels[slot].name) {
    g.kernels[slot].name = name;
    g.kernels[slot].function = f;
  }
  return f;
}

void mgpuLaunchKernel(void *function, intptr_t_ gx, intptr_t_ gy, intptr_t_ gz, intptr_t_ bx, intptr_t_ by,
                      intptr_t_ bz, int smem, void *stream, void **params, void **extra, size_t_ nparams) {
  (void)nparams;
  if (!function) {
    g.launchError = 1;
    return;
  }
  CUresult r = cu.cuLaunchKernel(function, (unsigned)gx, (unsigned)gy, (unsigned)gz, (unsigned)bx, (unsigned)by,
                                 (unsigned)bz, (unsigned)smem, stream, params, extra);
  if (r) {
    recordError("cuLaunchKernel failed", r);
    g.launchError = 1;
  }
}

/* --- what the generated entries call ----------------------------------- */

typedef void (*nxrt_launch_fn)(void **argv, void *stream);

/* mode 0: device pointers, the module's stream and workspace, synchronized;
 * mode 1: device pointers, the caller's stream and workspace, asynchronous;
 * mode 2: host pointers, copied through device memory the module keeps. */
int nxrt_cuda_run(nxrt_launch_fn run, void **argv, unsigned tensors, unsigned inputs,
                  const unsigned long long *bytes, unsigned long long workspaceBytes, void *workspace, void *stream,
                  int mode) {
  for (unsigned i = 0; i < tensors; ++i)
    if (!argv[i]) return NXRT_ERROR_NULL_ARGUMENT;
  if (mode == 1 && workspaceBytes && (!workspace || ((unsigned long)workspace & 63)))
    return NXRT_ERROR_BAD_WORKSPACE;
  lock();
  CUcontext previous = 0;
  int status = ready(&previous);
  if (status != NXRT_OK) {
    unlock();
    return status;
  }
  g.launchError = 0;
  CUresult r = 0;
  void *hostPointers[64];
  if (mode == 1) {
    argv[tensors] = workspace;
    run(argv, stream);
  } else {
    unsigned long long total = (workspaceBytes + 255) & ~255ull;
    if (mode == 2) {
      for (unsigned i = 0; i < tensors; ++i) total += (bytes[i] + 255) & ~255ull;
      if (tensors > 64) status = fail(NXRT_ERROR_DEVICE, "too many tensors for a host-pointer call", 0);
    }
    if (status == NXRT_OK) status = grow(&g.workspace, &g.workspaceBytes, total ? total : 256);
    if (status == NXRT_OK) {
      unsigned long long offset = (workspaceBytes + 255) & ~255ull;
      if (mode == 2)
        for (unsigned i = 0; i < tensors && !r; ++i) {
          hostPointers[i] = argv[i];
          argv[i] = (void *)(g.workspace + offset);
          if (i < inputs && bytes[i])
            r = cu.cuMemcpyHtoDAsync(g.workspace + offset, hostPointers[i], bytes[i], g.stream);
          offset += (bytes[i] + 255) & ~255ull;
        }
      if (r) status = fail(NXRT_ERROR_DEVICE, "copying the inputs to the GPU failed", r);
    }
    if (status == NXRT_OK) {
      argv[tensors] = (void *)g.workspace;
      run(argv, g.stream);
      if (mode == 2)
        for (unsigned i = inputs; i < tensors && !r; ++i)
          if (bytes[i]) r = cu.cuMemcpyDtoHAsync(hostPointers[i], (CUdeviceptr)argv[i], bytes[i], g.stream);
      if (r) status = fail(NXRT_ERROR_DEVICE, "copying the outputs from the GPU failed", r);
      CUresult s = cu.cuStreamSynchronize(g.stream);
      if (status == NXRT_OK && s) status = fail(NXRT_ERROR_DEVICE, "the kernels failed (cuStreamSynchronize)", s);
    }
  }
  if (status == NXRT_OK && g.launchError) status = NXRT_ERROR_DEVICE;
  if (previous && previous != g.context) cu.cuCtxSetCurrent(previous);
  unlock();
  return status;
}

/* Why the last call returned NXRT_ERROR_NO_DEVICE or NXRT_ERROR_DEVICE. */
const char *nxrt_cuda_error(void) { return g.error; }

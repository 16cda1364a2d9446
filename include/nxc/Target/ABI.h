//===- ABI.h - the contract between a generated module and its callers -*- C++ -*-===//
//
// What every stage that builds, describes or calls an artifact must agree on,
// spelled once: the status codes (runtime/nxrt.h is their one source, C
// callers include it), the alignment of workspaces and buffers, and the names
// of the functions a module exports beside each entry point and for the
// module as a whole. docs/artifacts.md describes the contract for users; the
// generated header (Header.cpp) declares these functions.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_TARGET_ABI_H
#define NXC_TARGET_ABI_H

#include "nxrt.h"

#include <cstdint>
#include <string>

namespace nxc::abi {

/// The status an entry point returns (runtime/nxrt.h).
enum Status : int32_t {
  kOk = NXRT_OK,
  kNullArgument = NXRT_ERROR_NULL_ARGUMENT,
  kBadWorkspace = NXRT_ERROR_BAD_WORKSPACE,
  kUnsupportedCpu = NXRT_ERROR_UNSUPPORTED_CPU,
  kNoDevice = NXRT_ERROR_NO_DEVICE,
  kDeviceFailure = NXRT_ERROR_DEVICE,
};

/// Workspaces (and every temporary in them) start at multiples of this; so
/// do the buffers the JIT allocates, as the header asks of AOT callers.
constexpr int64_t kBufferAlignment = 64;

// Per entry point FN:
/// int FN_with_workspace(inputs..., outputs..., void *workspace)
inline std::string withWorkspaceSymbol(const std::string &fn) { return fn + "_with_workspace"; }
/// size_t FN_workspace_size(void)
inline std::string workspaceSizeSymbol(const std::string &fn) { return fn + "_workspace_size"; }
/// int FN_on_stream(device pointers..., void *workspace, void *stream) (CUDA)
inline std::string onStreamSymbol(const std::string &fn) { return fn + "_on_stream"; }

/// int FN_packed(void **args): FN_with_workspace's arguments in an array
/// (--packed-entries), and FN_packed_layout: {inputs, outputs, bytes of each}.
inline std::string packedSymbol(const std::string &fn) { return fn + "_packed"; }
inline std::string packedLayoutSymbol(const std::string &fn) { return fn + "_packed_layout"; }

// Per module MODULE:
/// int MODULE_set_threads(int), int MODULE_threads(void), void MODULE_stop_threads(void)
inline std::string setThreadsSymbol(const std::string &module) { return module + "_set_threads"; }
inline std::string threadsSymbol(const std::string &module) { return module + "_threads"; }
inline std::string stopThreadsSymbol(const std::string &module) { return module + "_stop_threads"; }
/// const char *MODULE_cpu_variant(void)
inline std::string cpuVariantSymbol(const std::string &module) { return module + "_cpu_variant"; }
/// const char *MODULE_device_error(void) (CUDA)
inline std::string deviceErrorSymbol(const std::string &module) { return module + "_device_error"; }

} // namespace nxc::abi

#endif // NXC_TARGET_ABI_H

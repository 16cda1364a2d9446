//===- Embedded.h - files compiled into nxc ---------------------*- C++ -*-===//
//
// The bytes that the build embeds into nxc (cmake/NxcEmbed.cmake): the
// runtime's bitcode for 64- and 32-bit targets and its C source, the CPU
// feature checks and the variant request, the cache size query and the CUDA loader as bitcode (runtime/CMakeLists.txt),
// and the header template (templates/).
//
//===----------------------------------------------------------------------===//
#ifndef NXC_TARGET_EMBEDDED_H
#define NXC_TARGET_EMBEDDED_H

#include <string_view>

namespace nxc::embedded {

#define NXC_EMBEDDED_BLOB(name)                                                                                        \
  extern const unsigned char name[];                                                                                   \
  extern const unsigned long name##_size;
NXC_EMBEDDED_BLOB(nxrt64_bc)
NXC_EMBEDDED_BLOB(nxrt32_bc)
NXC_EMBEDDED_BLOB(nxrt_c)
NXC_EMBEDDED_BLOB(nxrt_h)
NXC_EMBEDDED_BLOB(thread_pool64_bc)
NXC_EMBEDDED_BLOB(thread_pool32_bc)
NXC_EMBEDDED_BLOB(cpu_x86_bc)
NXC_EMBEDDED_BLOB(cpu_aarch64_bc)
NXC_EMBEDDED_BLOB(cpu_request_bc)
NXC_EMBEDDED_BLOB(cache_x86_bc)
NXC_EMBEDDED_BLOB(cuda_loader_bc)
NXC_EMBEDDED_BLOB(beam_nif64_bc) // empty when nxc was built without erl_nif.h
NXC_EMBEDDED_BLOB(module_h_in)
#undef NXC_EMBEDDED_BLOB

} // namespace nxc::embedded

/// The bytes of embedded file NAME (one of the above).
#define NXC_EMBEDDED(name) std::string_view((const char *)::nxc::embedded::name, ::nxc::embedded::name##_size)

#endif // NXC_TARGET_EMBEDDED_H

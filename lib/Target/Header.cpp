//===- Header.cpp - the generated C header and JSON manifest --------------===//
#include "nxc/Target/Artifacts.h"
#include "nxc/Target/TargetTriple.h"
#include "nxc/Target/ABI.h"
#include "nxc/Frontend/AST.h"
#include "nxc/Target/CText.h"
#include "nxc/Target/Embedded.h"

#include "llvm/TargetParser/Triple.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <functional>
#include <iterator>
#include <set>

namespace nxc {
namespace {

std::string replaceAll(std::string s, const std::string &from, const std::string &to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}


std::string upper(std::string s) {
  for (auto &c : s) c = std::isalnum((unsigned char)c) ? (char)std::toupper((unsigned char)c) : '_';
  return s;
}

/// C and C++ keywords, and the type names the header itself uses.
bool reservedInC(const std::string &n) {
  static const std::set<std::string> words = {
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
      "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
      "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "_Bool",
      "_Complex", "_Imaginary", "_Alignas", "_Alignof", "_Atomic", "_Generic", "_Noreturn", "_Static_assert",
      "_Thread_local", "alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor", "bool", "catch", "char8_t",
      "char16_t", "char32_t", "class", "compl", "concept", "consteval", "constexpr", "constinit", "const_cast",
      "co_await", "co_return", "co_yield", "decltype", "delete", "dynamic_cast", "explicit", "export", "false",
      "friend", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq",
      "private", "protected", "public", "reinterpret_cast", "requires", "static_assert", "static_cast", "template",
      "this", "thread_local", "throw", "true", "try", "typeid", "typename", "using", "virtual", "wchar_t", "xor",
      "xor_eq", "size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
      "NULL", "workspace"};
  if (words.count(n) || n == "result") return true;
  // result_0, result_1, ...: the outputs of a tuple.
  if (n.rfind("result_", 0) != 0 || n.size() == 7) return false;
  for (size_t i = 7; i < n.size(); ++i)
    if (!std::isdigit((unsigned char)n[i])) return false;
  return true;
}

/// The C name of each parameter: the source name, with "_" appended while it
/// is a C/C++ keyword, a name the header generates (result, workspace) or
/// equal to an earlier one once upper-cased for the size macros.
std::vector<std::string> cParamNames(const Graph &g) {
  std::vector<std::string> out;
  std::set<std::string> macros;
  for (size_t k = 0; k < g.paramNames.size(); ++k) {
    std::string c = cParameterName(g.paramNames[k], k);
    while (reservedInC(c) || macros.count(upper(c))) c += "_";
    macros.insert(upper(c));
    out.push_back(c);
  }
  return out;
}

bool hasKeys(const ResultTree &t) {
  if (!t.keys.empty()) return true;
  for (auto &e : t.elems)
    if (hasKeys(e)) return true;
  return false;
}

/// Output names: "result" for a single output, "result_0", ... for tuples;
/// with maps, each leaf's path: "result_w", "result_layer_0".
std::vector<std::string> outputNames(const Graph &g) {
  if (g.results.size() == 1 && !g.resultTree.isTuple) return {"result"};
  std::vector<std::string> names;
  if (!hasKeys(g.resultTree)) {
    for (size_t i = 0; i < g.results.size(); ++i) names.push_back(fmt::format(FMT_STRING("result_{}"), i));
    return names;
  }
  std::function<void(const ResultTree &, const std::string &)> walk = [&](const ResultTree &t,
                                                                          const std::string &path) {
    if (!t.term.empty()) return; // nil in a container field: no output
    if (!t.isTuple) {
      names.push_back(cParameterName(path, names.size()));
      return;
    }
    for (size_t i = 0; i < t.elems.size(); ++i)
      walk(t.elems[i], path + "_" + (t.keys.empty() ? std::to_string(i) : ast::keyText(t.keys[i])));
  };
  walk(g.resultTree, "result");
  // Distinct names (keys could collide once made C identifiers).
  std::set<std::string> seen;
  for (auto &n : names)
    while (!seen.insert(n).second) n += "_";
  return names;
}

std::string resultTreeString(const Graph &g, const ResultTree &t) {
  if (!t.term.empty()) return t.term;
  if (!t.isTuple && !t.vectorized.empty())
    return "vectorized[" + fmt::format(FMT_STRING("{}"), fmt::join(t.vectorized, ", ")) + "] " + g.typeOf(t.node).str();
  if (!t.isTuple) return g.typeOf(t.node).str();
  std::string s = t.keys.empty() ? "{" : "%" + t.structName + "{";
  bool allAtoms = std::none_of(t.keys.begin(), t.keys.end(), ast::isStringKey);
  for (size_t i = 0; i < t.elems.size(); ++i)
    s += (i ? ", " : "") + (t.keys.empty() ? "" : ast::mapKeyPrefix(t.keys[i], allAtoms)) +
         resultTreeString(g, t.elems[i]);
  return s + "}";
}

std::string elementsComment(const TensorType &t) {
  int64_t n = t.numElements();
  return fmt::format(FMT_STRING("{} element{}"), n, n == 1 ? "" : "s");
}

/// Axis names for the manifest: one per axis, null where unnamed.
nlohmann::json axisNames(const TensorType &t) {
  nlohmann::json names = nlohmann::json::array();
  for (auto &n : t.names) names.push_back(n.empty() ? nlohmann::json() : nlohmann::json(n));
  return names;
}

} // namespace

std::string writeHeader(const std::string &module, const std::vector<EntryDescription> &entries,
                        const std::string &triple, const std::string &sourceName,
                        const std::vector<std::string> &libraries, bool bareMetal,
                        const std::vector<VariantDescription> &variants, const CudaDescription *cuda, int threads) {
  std::string decls;
  auto to = std::back_inserter(decls);
  if (cuda) {
    fmt::format_to(to,
                   FMT_STRING("/* CUDA: the functions run on an NVIDIA GPU. The library embeds {}; the driver\n"
                              " * (libcuda.so.1, opened at the first call) is all it needs at run time. Tensor\n"
                              " * arguments are device pointers (cuMemAlloc, cudaMalloc), except for the _host\n"
                              " * entries. Calls are thread-safe; FUNCTION(...) and FUNCTION_host(...) use the\n"
                              " * module's stream and device workspace, one call at a time.\n"
                              " * NXRT_ERROR_NO_DEVICE (4): no driver or no GPU; NXRT_ERROR_DEVICE (5): a driver\n"
                              " * call or a kernel failed. Either way nothing was written, and this says why: */\n"
                              "const char *{}_device_error(void);\n\n"),
                   fmt::join(cuda->images, ", "), module);
  }
  if (!variants.empty()) {
    decls += "/* ISA variants, best first: every function is compiled once per variant and\n"
             " * runs the first one the CPU supports (chosen once, at load time). A CPU\n"
             " * below all of them gets NXRT_ERROR_UNSUPPORTED_CPU. $NXC_CPU_VARIANT set\n"
             " * to a variant's name runs that one instead, if the CPU supports it.\n";
    for (auto &v : variants)
      fmt::format_to(to, FMT_STRING(" *   {}: needs {}\n"), v.cpu,
                     v.features.empty() ? std::string("the baseline")
                                        : fmt::format(FMT_STRING("{}"), fmt::join(v.features, " ")));
    fmt::format_to(to,
                   FMT_STRING(" */\n/* The variant in use (its CPU name), or what the CPU lacks. */\n"
                              "const char *{}_cpu_variant(void);\n\n"),
                   module);
  }
  if (threads > 1) {
    fmt::format_to(to,
                   FMT_STRING("/* Threads: the large loops of a call run on a pool of up to {1} threads inside\n"
                              " * this module (pthreads, started by the first call that uses them). Each\n"
                              " * thread computes its share exactly as one thread would: results do not\n"
                              " * depend on the count. The count in effect is $NXC_NUM_THREADS, else the\n"
                              " * CPUs the process may use, at most {1}, until {0}_set_threads(n) sets it\n"
                              " * (clamped to 1..{1}; it returns the count in effect). A call that finds the\n"
                              " * pool busy with another application thread's call runs on its own thread.\n"
                              " * The workers spin a little after each call, then sleep. Starting them\n"
                              " * (pthread_create) is the only allocation, once; calls allocate nothing. */\n"
                              "int {0}_set_threads(int n);\n"
                              "int {0}_threads(void);\n"
                              "/* Joins the workers once no call is using them (unloading the library or\n"
                              " * exiting does it too); the next call that needs them starts them again. */\n"
                              "void {0}_stop_threads(void);\n\n"),
                   module, threads);
  }
  for (auto &e : entries) {
    const Graph &g = *e.graph;
    auto outs = outputNames(g);
    size_t width = 0;
    for (auto &n : g.paramNames) width = std::max(width, n.size());
    for (auto &n : outs) width = std::max(width, n.size());
    auto argument = [&](const std::string &name, const char *dir, const TensorType &t) {
      fmt::format_to(to, FMT_STRING(" *   {}:{:{}}{} {} ({})\n"), name, "", width + 1 - name.size(), dir,
                     commentText(t.str()),
                     elementsComment(t));
    };
    fmt::format_to(to, FMT_STRING("/* {} -> {}\n"), commentText(e.source),
                   commentText(resultTreeString(g, g.resultTree)));
    const std::vector<std::string> cnames = cParamNames(g);
    for (size_t i = 0; i < g.params.size(); ++i) argument(cnames[i], "in ", g.typeOf(g.params[i]));
    for (size_t i = 0; i < outs.size(); ++i) argument(outs[i], "out", g.typeOf(g.results[i]));
    if (threads > 1)
      decls += e.parallelLoops == 0
                   ? " * Runs on the calling thread only (no loop is large enough for the pool).\n"
                   : fmt::format(FMT_STRING(" * Runs {} loop{} on the thread pool, the rest on the calling thread.\n"),
                                 e.parallelLoops, e.parallelLoops == 1 ? "" : "s");
    decls += " */\n";
    std::string up = upper(e.symbol);
    for (size_t i = 0; i < g.params.size(); ++i)
      fmt::format_to(to, FMT_STRING("#define {}_{}_SIZE {}\n"), up, upper(cnames[i]),
                     g.typeOf(g.params[i]).numElements());
    for (size_t i = 0; i < outs.size(); ++i)
      fmt::format_to(to, FMT_STRING("#define {}_{}_SIZE {}\n"), up, upper(outs[i]),
                     g.typeOf(g.results[i]).numElements());
    fmt::format_to(to, FMT_STRING("#define {0}_WORKSPACE_SIZE {1}\n#define {0}_WORKSPACE_ALIGN {2}\n"), up,
                   e.workspaceSize, abi::kBufferAlignment);
    if (!g.bakedConstants.empty()) {
      int64_t bytes = 0;
      for (int c : g.bakedConstants) bytes += g.typeOf(c).numElements() * g.typeOf(c).elem.bytes();
      fmt::format_to(to,
                     FMT_STRING("/* {1} baked-in constants ({2} bytes) live in the library's read-only data. */\n"
                                "#define {0}_CONSTANT_BYTES {2}\n"),
                     up, g.bakedConstants.size(), bytes);
    }
    std::vector<std::string> params;
    for (size_t i = 0; i < g.params.size(); ++i)
      params.push_back(fmt::format(FMT_STRING("const {} *{}"), g.typeOf(g.params[i]).elem.cType(), cnames[i]));
    for (size_t i = 0; i < outs.size(); ++i)
      params.push_back(fmt::format(FMT_STRING("{} *{}"), g.typeOf(g.results[i]).elem.cType(), outs[i]));
    std::string args = fmt::format(FMT_STRING("{}"), fmt::join(params, ", "));
    if (cuda) {
      fmt::format_to(
          to,
          FMT_STRING("/* Device pointers; runs on the module's stream with its own device workspace and\n"
                     "   returns when the results are written. */\n"
                     "int {0}({2});\n"
                     "/* Device pointers; enqueues the work on `stream` (a CUstream or cudaStream_t; NULL: the\n"
                     "   legacy default stream) and returns: synchronize the stream before reading the results.\n"
                     "   `workspace`: {1}_WORKSPACE_SIZE bytes of device memory aligned to {1}_WORKSPACE_ALIGN,\n"
                     "   not shared with a call in flight (may be NULL when the size is 0). */\n"
                     "int {0}_on_stream({2}, void *workspace, void *stream);\n"
                     "/* Host pointers: copies the inputs to the GPU, runs, copies the results back. */\n"
                     "int {0}_host({2});\n"
                     "/* Bytes of device memory {0}_on_stream needs ({1}_WORKSPACE_SIZE). */\n"
                     "size_t {0}_workspace_size(void);\n\n"),
          e.symbol, up, args);
      continue;
    }
    fmt::format_to(to,
                   FMT_STRING("/* Bytes of scratch memory {0}_with_workspace needs ({1}_WORKSPACE_SIZE). */\n"
                              "size_t {0}_workspace_size(void);\n"
                              "/* `workspace`: {1}_WORKSPACE_SIZE bytes aligned to {1}_WORKSPACE_ALIGN, owned by the "
                              "caller\n   (may be NULL when the size is 0). */\n"
                              "int {0}_with_workspace({2}, void *workspace);\n"),
                   e.symbol, up, args);
    if (e.packedEntry)
      fmt::format_to(to,
                     FMT_STRING("/* {0}_with_workspace with its arguments in an array (for callers without a C\n"
                                "   prototype): args[0] to args[{1}] the inputs, then the outputs; args[{2}] the "
                                "workspace.\n   {0}_packed_layout: the input count, the output count, then the "
                                "bytes of each. */\n"
                                "int {0}_packed(void **args);\n"
                                "extern const uint64_t {0}_packed_layout[];\n"),
                     e.symbol, params.size() - 1, params.size());
    if (e.plainVariant) {
      if (e.workspaceSize > 0)
        fmt::format_to(to, FMT_STRING("/* Keeps its {}-byte workspace on the stack. */\n"), e.workspaceSize);
      fmt::format_to(to, FMT_STRING("int {}({});\n"), e.symbol, args);
    } else {
      fmt::format_to(to,
                     FMT_STRING("/* No {}(...) without a workspace: {} bytes is more than nxc puts on the stack\n"
                                "   for this target (see --stack-workspace-limit). */\n"),
                     e.symbol, e.workspaceSize);
    }
    decls += "\n";
  }
  std::string h(NXC_EMBEDDED(module_h_in));
  h = replaceAll(h, "@MODULE@", module);
  h = replaceAll(h, "@GUARD@", upper(module) + "_H");
  h = replaceAll(h, "@VERSION@", NXC_VERSION);
  h = replaceAll(h, "@TRIPLE@", commentText(triple));
  h = replaceAll(h, "@SOURCE@", commentText(sourceName));
  std::string link =
      bareMetal ? fmt::format(FMT_STRING("Link with lib{}.a and libnxrt.a (bare metal: no shared object;\n * the "
                                         "libraries need no C library, no libm and no other symbol)"),
                              module)
                : fmt::format(FMT_STRING("Link with lib{0}.so, or with lib{0}.a and libnxrt.a"), module);
  for (auto &l : libraries) fmt::format_to(std::back_inserter(link), FMT_STRING(" and -l{}"), l);
  if (cuda) link += ",\n * and -ldl where the C library is older than glibc 2.34 (dlopen of libcuda.so.1)";
  for (auto &l : libraries) {
    if (l == "m") link += "\n * (-lm: this module calls the C math library for f64 functions)";
    if (l == "pthread") link += "\n * (-lpthread: the thread pool; part of the C library since glibc 2.34)";
  }
  h = replaceAll(h, "@LINK@", link + ".");
  h = replaceAll(h, "@ENTRIES@", decls);
  static const char *cpuConvention =
      " *  - The return value is NXRT_OK (0) on success, NXRT_ERROR_NULL_ARGUMENT (1)\n"
      " *    if a tensor pointer is NULL, or NXRT_ERROR_BAD_WORKSPACE (2) if a needed\n"
      " *    workspace is NULL or misaligned, or NXRT_ERROR_UNSUPPORTED_CPU (3) if the\n"
      " *    running CPU lacks a feature every variant needs; nothing is written on\n"
      " *    an error.\n"
      " *  - No heap allocation: temporaries live in a workspace. FN_with_workspace\n"
      " *    takes one the caller owns (FN_WORKSPACE_SIZE bytes, aligned to\n"
      " *    FN_WORKSPACE_ALIGN); FN(...) keeps it on the stack and exists only when\n"
      " *    it is small enough for the target.\n";
  const char *globalState = threads > 1
                                ? " *  - The only global state is the thread pool: calls are re-entrant and may\n"
                                  " *    run on several threads.\n"
                                : " *  - No global state: calls are re-entrant and may run on several threads.\n";
  static const char *cudaConvention =
      " *  - The return value is NXRT_OK (0) on success, NXRT_ERROR_NULL_ARGUMENT (1)\n"
      " *    if a tensor pointer is NULL, NXRT_ERROR_BAD_WORKSPACE (2) if a needed\n"
      " *    workspace is NULL or misaligned, NXRT_ERROR_NO_DEVICE (4) without a CUDA\n"
      " *    driver or GPU, NXRT_ERROR_DEVICE (5) if a driver call or a kernel failed;\n"
      " *    nothing is written on an error.\n"
      " *  - Temporaries live in a device workspace: the caller's (FN_on_stream) or\n"
      " *    the module's own, allocated once and reused (FN, FN_host); kernels never\n"
      " *    allocate.\n";
  const char *streaming = streamsLargeOutputs(llvm::Triple(triple))
                              ? " *  - An output of 8 MiB or more computed element-wise is written with\n"
                                " *    streaming stores (not read into the cache first) when it starts a\n"
                                " *    64-byte boundary and the call's tensors exceed 3/4 of the CPU's\n"
                                " *    largest cache ($NXC_CACHE_BYTES, if set, is taken as its size).\n"
                              : "";
  h = replaceAll(h, "@CONVENTION@",
                 cuda ? std::string(cudaConvention) : std::string(cpuConvention) + globalState + streaming);
  return h;
}

std::string writeManifest(const std::string &module, const std::vector<EntryDescription> &entries,
                          const std::string &triple, const std::string &cpu,
                          const std::vector<std::string> &libraries,
                          const std::vector<VariantDescription> &variants, const std::string &inputsDigest,
                          const CudaDescription *cuda, int threads) {
  using nlohmann::json;
  json fns = json::array();
  for (auto &e : entries) {
    const Graph &g = *e.graph;
    json args = json::array(), results = json::array();
    for (size_t i = 0; i < g.params.size(); ++i) {
      const TensorType &t = g.typeOf(g.params[i]);
      args.push_back({{"name", g.paramNames[i]}, {"c_name", cParamNames(g)[i]}, {"type", t.elem.name()},
                      {"shape", t.shape}, {"c_type", t.elem.cType()}});
      if (!t.names.empty()) args.back()["axis_names"] = axisNames(t);
    }
    auto outs = outputNames(g);
    for (size_t i = 0; i < outs.size(); ++i) {
      const TensorType &t = g.typeOf(g.results[i]);
      results.push_back({{"name", outs[i]}, {"type", t.elem.name()}, {"shape", t.shape}, {"c_type", t.elem.cType()}});
      if (!t.names.empty()) results.back()["axis_names"] = axisNames(t);
    }
    json workspace = {{"size", e.workspaceSize},
                      {"alignment", abi::kBufferAlignment},
                      {"entry", abi::withWorkspaceSymbol(e.symbol)},
                      {"query", abi::workspaceSizeSymbol(e.symbol)}};
    json fn = {{"symbol", e.symbol},
               {"function", e.function},
               {"signature", e.source},
               {"returns", resultTreeString(g, g.resultTree)},
               {"arguments", args},
               {"results", results},
               {"workspace", workspace}};
    if (e.packedEntry) fn["packed"] = abi::packedSymbol(e.symbol);
    if (cuda) {
      fn["workspace"] = {{"size", e.workspaceSize}, {"alignment", abi::kBufferAlignment}, {"memory", "device"},
                         {"entry", abi::onStreamSymbol(e.symbol)}, {"query", abi::workspaceSizeSymbol(e.symbol)}};
      fn["device_entry"] = e.symbol;
      fn["stream_entry"] = abi::onStreamSymbol(e.symbol);
      fn["host_entry"] = e.symbol + "_host";
    } else {
      fn["stack_entry"] = e.plainVariant ? json(e.symbol) : json(nullptr);
      fn["parallel_loops"] = e.parallelLoops;
    }
    fns.push_back(fn);
  }
  json m = {{"module", module},
            {"nxc_version", NXC_VERSION},
            {"inputs_sha256", inputsDigest},
            {"target", {{"triple", triple}, {"cpu", cpu}}},
            {"calling_convention",
             "int SYMBOL_with_workspace(const T *inputs..., T *outputs..., void *workspace); "
             "int SYMBOL(const T *inputs..., T *outputs...); 0 = ok, 1 = NULL argument, 2 = bad workspace, "
             "3 = unsupported CPU"},
            {"link_libraries", libraries},
            {"functions", fns}};
  if (cuda) {
    m["device"] = {{"kind", "cuda"}, {"images", cuda->images}, {"error_query", abi::deviceErrorSymbol(module)}};
    m["calling_convention"] =
        "int SYMBOL(const T *inputs..., T *outputs...) (device pointers, synchronous); "
        "int SYMBOL_on_stream(const T *inputs..., T *outputs..., void *workspace, void *stream) (device pointers, "
        "asynchronous); int SYMBOL_host(const T *inputs..., T *outputs...) (host pointers); 0 = ok, 1 = NULL "
        "argument, 2 = bad workspace, 4 = no CUDA device, 5 = CUDA error";
  }
  if (!cuda)
    m["threads"] = threads > 1 ? json{{"most", threads},
                                      {"set", abi::setThreadsSymbol(module)},
                                      {"query", abi::threadsSymbol(module)},
                                      {"stop", abi::stopThreadsSymbol(module)},
                                      {"environment", "NXC_NUM_THREADS"}}
                               : json{{"most", 1}};
  if (!variants.empty()) {
    json vs = json::array();
    for (auto &v : variants) vs.push_back({{"cpu", v.cpu}, {"requires", v.features}});
    m["variants"] = vs;
    m["variant_query"] = abi::cpuVariantSymbol(module);
  }
  return m.dump(2) + "\n";
}

} // namespace nxc

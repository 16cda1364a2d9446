//===- ModuleBuild.cpp - building a module's artifacts --------------------===//
//
// planModule: the checks of nxc aot's options, the entry points traced and
// named, the target planned. writeModule: the compilation and every file of
// the module, written all or none (ModuleFiles.h).
//
//===----------------------------------------------------------------------===//
#include "nxc/Build/ModuleBuild.h"
#include "ModuleFiles.h"

#include "nxc/Sema/Sema.h"
#include "nxc/Target/ABI.h"
#include "nxc/Target/Artifacts.h"
#include "nxc/Target/CText.h"
#include "nxc/Tensor/Constants.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SHA256.h"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace nxc {
namespace {

std::string sanitizeIdentifier(std::string s) {
  for (auto &c : s)
    if (!std::isalnum((unsigned char)c) && c != '_') c = '_';
  if (s.empty() || std::isdigit((unsigned char)s[0])) s = "m_" + s;
  return s;
}

/// SHA-256 of everything the artifacts are made from: the source, the --fn
/// texts, the baked constants' values and the options that change code.
std::string inputsDigest(const std::string &source, const std::vector<ModuleEntry> &entries, const ModuleOptions &o,
                         const std::string &module) {
  llvm::SHA256 sha;
  auto add = [&](llvm::StringRef bytes) {
    sha.update(llvm::StringRef(fmt::format(FMT_STRING("{}:"), bytes.size())));
    sha.update(bytes);
  };
  add("nxc-inputs 1");
  add(source);
  add(module);
  for (auto &part : {o.triple, o.cpu, o.features, std::to_string(o.optLevel), std::to_string(o.stackWorkspaceLimit),
                     o.device, o.gpu, std::to_string(o.threads), std::to_string(o.minParallelWork),
                     std::string(o.packedEntries ? "packed" : ""), o.nifModule})
    add(part);
  std::function<void(const Template &)> constants = [&](const Template &t) {
    if (t.values) {
      add(llvm::StringRef((const char *)t.values->f.data(), t.values->f.size() * sizeof(double)));
      add(llvm::StringRef((const char *)t.values->i.data(), t.values->i.size() * sizeof(int64_t)));
    }
    for (auto &e : t.elems) constants(e);
  };
  for (auto &e : entries) {
    add(e.sigText);
    for (auto &a : e.sig.args) constants(a);
  }
  auto digest = sha.final();
  return fmt::format(FMT_STRING("{:02x}"), fmt::join(digest, ""));
}

/// Every --fn traced from defn source.
Result<std::vector<ModuleEntry>> traceEntries(const ast::File &file, const ModuleOptions &o) {
  std::vector<ModuleEntry> entries;
  for (size_t i = 0; i < o.fns.size(); ++i) {
    auto fnSrc = std::make_shared<const SourceFile>(SourceFile{fmt::format(FMT_STRING("--fn#{}"), i + 1), o.fns[i]});
    NXC_TRY(sig, parseSignature(fnSrc));
    NXC_CHECK(loadConstants(sig));
    NXC_TRY(graph, trace(file, sig));
    entries.push_back(ModuleEntry{sig, o.fns[i], std::move(graph), ""});
  }
  return entries;
}

/// Makes parameter `k` of `g` the constant `t` (an @file template).
void bakeParameter(Graph &g, size_t k, const Template &t) {
  Node &n = g.nodes[g.params[k]];
  n.op = Op::Constant;
  n.param = -1;
  n.fvalues = t.values->f;
  n.ivalues = t.values->i;
  g.bakedConstants.push_back(g.params[k]);
  g.params.erase(g.params.begin() + k);
  g.paramNames.erase(g.paramNames.begin() + k);
  for (size_t j = 0; j < g.params.size(); ++j) g.nodes[g.params[j]].param = (int)j;
}

/// The functions of a graph file: those --fn names (all without --fn). A
/// --fn may give templates: each must be the graph's own type for that
/// parameter, or an @file template that bakes the parameter in.
Result<std::vector<ModuleEntry>> graphEntries(const GraphFile &file, const ModuleOptions &o) {
  std::vector<ModuleEntry> entries;
  auto entryFor = [&](const Graph &g, Signature sig) {
    sig.function = g.function;
    std::string text = graphSignature(g);
    return ModuleEntry{std::move(sig), text, g, ""};
  };
  if (o.fns.empty()) {
    for (auto &g : file.functions) entries.push_back(entryFor(g, Signature{}));
    return entries;
  }
  for (size_t i = 0; i < o.fns.size(); ++i) {
    auto fnSrc = std::make_shared<const SourceFile>(SourceFile{fmt::format(FMT_STRING("--fn#{}"), i + 1), o.fns[i]});
    Signature sig;
    bool templates = o.fns[i].find('(') != std::string::npos;
    if (templates) {
      NXC_TRY(parsed, parseSignature(fnSrc));
      NXC_CHECK(loadConstants(parsed));
      sig = std::move(parsed);
    } else {
      sig.function = o.fns[i];
      sig.loc = Loc{fnSrc, 1, 1};
    }
    const Graph *found = nullptr;
    std::vector<std::string> names;
    for (auto &g : file.functions) {
      names.push_back(g.function);
      if (g.function == sig.function) found = &g;
    }
    if (!found)
      return error(sig.loc, fmt::format(FMT_STRING("the graph has no function '{}' (it has: {})"), sig.function,
                                        fmt::join(names, ", ")));
    Graph g = *found;
    if (templates) {
      std::vector<const Template *> leaves;
      std::function<void(const Template &)> collect = [&](const Template &t) {
        if (t.isTuple) {
          for (auto &e : t.elems) collect(e);
        } else {
          leaves.push_back(&t);
        }
      };
      for (auto &a : sig.args) collect(a);
      if (leaves.size() != g.params.size())
        return error(sig.loc, fmt::format(FMT_STRING("{} takes {} tensors ({}), the --fn gives {}"), g.function,
                                          g.params.size(), graphSignature(g), leaves.size()));
      for (size_t k = leaves.size(); k-- > 0;) {
        const Template &t = *leaves[k];
        const TensorType &want = g.typeOf(g.params[k]);
        if (!t.tensor.sameTypeAndShape(want))
          return error(t.loc, fmt::format(FMT_STRING("parameter {} ({}) of {} is {}, the template gives {}"), k,
                                          g.paramNames[k], g.function, want.str(), t.tensor.str()));
        if (t.values) bakeParameter(g, k, t);
      }
    }
    ModuleEntry e = entryFor(g, sig);
    e.sigText = templates ? o.fns[i] : graphSignature(*found);
    entries.push_back(std::move(e));
  }
  return entries;
}

/// The module's name: --name, or the input's stem made a C identifier;
/// names that would clash with the C library's files get a warning.
Result<std::string> moduleName(const ModuleInput &input, const ModuleOptions &o, std::vector<std::string> &warnings) {
  std::string module = o.name.empty() ? sanitizeIdentifier(fs::path(input.path).stem().string()) : o.name;
  if (!isCIdentifier(module))
    return error(Loc{}, fmt::format(FMT_STRING("--name '{}' is not a valid C identifier"), module));
  // Every file name (lib<module>.so the longest, and its temporary) within
  // the 255 bytes file systems allow.
  if (module.size() > 200)
    return error(Loc{}, fmt::format(FMT_STRING("--name is {} characters long; a module name may have at most "
                                               "200 (its files' names must fit the file system's 255 bytes)"),
                                    module.size()));
  if (module == "nxrt")
    return error(Loc{}, "--name nxrt would overwrite the runtime's files (nxrt.h, libnxrt.a); choose another "
                        "module name");
  // lib<module>.so beside the C library's own: `-lm` (which a module with f64
  // math must link) or `-lpthread` would pick the module's library instead
  // when linking with -L on the output directory. (--emit writes no library.)
  for (const char *system : {"c", "m", "dl", "rt", "pthread"})
    if (module == system && o.writesFiles)
      warnings.push_back(
          fmt::format(FMT_STRING("module name '{0}' writes lib{0}.so and lib{0}.a, which -l{0} "
                                 "would find instead of the C library's when linking with -L on the output "
                                 "directory; link them by path, or choose another name with --name"),
                      module));
  // <module>.h beside the program's includes: with -I on the output
  // directory, #include <math.h> would find the module's header instead.
  static const std::set<std::string> systemHeaders = {
      "assert", "complex", "ctype",  "errno",       "fenv",     "float",  "inttypes",  "iso646",    "limits",
      "locale", "math",    "setjmp", "signal",      "stdalign", "stdarg", "stdatomic", "stdbool",   "stddef",
      "stdint", "stdio",   "stdlib", "stdnoreturn", "string",   "tgmath", "threads",   "time",      "uchar",
      "wchar",  "wctype",  "unistd", "pthread",     "dlfcn",    "fcntl",  "sched",     "semaphore", "strings",
      "alloca", "malloc",  "memory", "elf",         "link",     "poll"};
  if (systemHeaders.count(module) && o.writesFiles)
    warnings.push_back(
        fmt::format(FMT_STRING("module name '{0}' writes {0}.h, which #include <{0}.h> would "
                               "find instead of the system's header when compiling with -I on the output "
                               "directory; choose another name with --name"),
                    module));
  return module;
}

} // namespace

std::vector<EntryPoint> ModulePlan::points() const {
  std::vector<EntryPoint> points;
  for (auto &e : entries) points.push_back(EntryPoint{e.symbol, &e.graph});
  return points;
}

Result<ModulePlan> planModule(const ModuleInput &input, const ModuleOptions &o) {
  ModulePlan plan;
  bool graphInput = input.graph != nullptr;
  std::optional<Device> device = deviceNamed(o.device);
  if (!device)
    return error(Loc{}, fmt::format(FMT_STRING("unknown --device '{}'; expected cpu or cuda (or "
                                               "cuda-emulated, for testing)"),
                                    o.device));
  bool cuda = plan.cuda = *device == Device::Cuda;
  bool emulated = plan.emulated = *device == Device::CudaEmulated;
  if (!cuda && (!o.gpu.empty() || !o.cudaPath.empty())) return error(Loc{}, "--gpu and --cuda-path need --device cuda");
  if (o.fns.empty() && !graphInput)
    return error(Loc{}, "no function to compile: give at least one --fn, as in --fn 'softmax(f32[100])'");

  NXC_TRY(module, moduleName(input, o, plan.warnings));
  plan.module = module;
  if (o.stackWorkspaceLimit < -1 || o.stackWorkspaceLimit > (int64_t(1) << 30))
    return error(Loc{}, fmt::format(FMT_STRING("--stack-workspace-limit {} is out of range: give 0 to {} bytes "
                                               "(or leave it out for the target's default)"),
                                    o.stackWorkspaceLimit, int64_t(1) << 30));

  auto traced = graphInput ? graphEntries(*input.graph, o) : traceEntries(*input.source, o);
  if (!traced) return traced.error();
  plan.entries = std::move(*traced);
  std::vector<ModuleEntry> &entries = plan.entries;
  // C names: MODULE_FUNCTION, or MODULE_FUNCTION_<signature> when a function
  // is compiled at several signatures, or MODULE_NAME for `NAME=fun(...)`.
  std::map<std::string, int> count;
  for (auto &e : entries)
    if (e.sig.cname.empty()) ++count[e.sig.function];
  std::map<std::string, size_t> taken;
  for (size_t i = 0; i < entries.size(); ++i) {
    auto &e = entries[i];
    std::string base = e.sig.cname.empty() ? sanitizeIdentifier(e.sig.function) : e.sig.cname;
    e.symbol = fmt::format(FMT_STRING("{}_{}"), module, base);
    if (e.sig.cname.empty() && count[e.sig.function] > 1) e.symbol += "_" + e.sig.mangledArgs();
    if (auto it = taken.find(e.symbol); it != taken.end())
      return error(e.sig.loc, fmt::format(FMT_STRING("two --fn produce the C function '{}' (--fn #{} and #{}); "
                                                     "name one explicitly, as in --fn 'other={}'"),
                                          e.symbol, it->second + 1, i + 1, e.sigText));
    taken[e.symbol] = i;
  }

  TargetOptions &target = plan.target;
  target = TargetOptions{o.triple, o.cpu, o.features, o.optLevel, o.stackWorkspaceLimit};
  target.threads = o.threads;
  target.packedEntries = o.packedEntries || !o.nifModule.empty();
  if (o.packedEntries && cuda)
    return error(Loc{}, "--packed-entries applies to CPU code (a CUDA module's functions take device pointers)");
  if (!o.nifModule.empty()) {
    if (cuda || emulated) return error(Loc{}, "--nif applies to CPU code (the NIF calls the module on the CPU)");
    if (!validErlangModuleName(o.nifModule))
      return error(Loc{}, fmt::format(FMT_STRING("--nif expects an Erlang module name of letters, digits, '_', "
                                                 "'.' and '@' (as 'Elixir.MNIST.Compiled'), got '{}'"),
                                      commentText(o.nifModule)));
    target.beamNifModule = o.nifModule;
  }
  if (o.minParallelWork >= 0) target.minParallelWork = o.minParallelWork;
  target.threadExportPrefix = module;
  if (o.minParallelWork >= 0 && o.threads <= 1)
    return error(Loc{}, "--min-parallel-work needs --threads N with N > 1 (without threads every loop runs on "
                        "the calling thread)");
  if (o.threads > 1 && (cuda || emulated))
    return error(Loc{}, "--threads applies to CPU code; a GPU module runs its kernels on the device");
  if (!cuda && !emulated) { // GPU modules have no CPU variants
    auto variants = planCpuVariants(o.triple, o.cpu);
    if (!variants) return variants.error();
    target.variants = *variants;
  }
  if (emulated) target.device = Device::CudaEmulated;
  if (cuda) {
    target.device = Device::Cuda;
    llvm::SmallVector<llvm::StringRef> archs;
    llvm::StringRef(o.gpu).split(archs, ',', -1, false);
    for (auto a : archs) target.gpuArchs.push_back(a.trim().str());
    target.cudaPath = o.cudaPath;
    target.deviceErrorQuery = abi::deviceErrorSymbol(module);
  }
  if (!target.variants.empty()) {
    target.cpu = target.variants.back(); // the module's baseline; each variant sets its own
    target.variantQuery = abi::cpuVariantSymbol(module);
  }

  return plan;
}

Status writeModule(const ModulePlan &plan, const ModuleInput &input, const ModuleOptions &o, const std::string &outDir,
                   std::vector<std::string> &warnings) {
  const std::string &module = plan.module;
  const TargetOptions &target = plan.target;
  const std::vector<ModuleEntry> &entries = plan.entries;
  std::vector<EntryDescription> descs;
  for (auto &e : entries) {
    descs.push_back(EntryDescription{e.symbol, e.sig.function, e.sigText, &e.graph});
    descs.back().packedEntry = target.packedEntries;
  }
  auto out = compile(plan.points(), target, Stage::Object);
  if (!out) return out.error();
  for (size_t i = 0; i < descs.size(); ++i) {
    descs[i].workspaceSize = out->entries[i].workspaceSize;
    descs[i].plainVariant = out->entries[i].plainVariant;
    descs[i].parallelLoops = out->entries[i].parallelLoops;
  }
  std::vector<VariantDescription> variants;
  for (auto &v : out->variants) variants.push_back(VariantDescription{v.cpu, v.features});
  CudaDescription cudaDesc{out->gpuImages};
  const CudaDescription *device = plan.cuda ? &cudaDesc : nullptr;
  for (auto &w : out->warnings) warnings.push_back(w);
  auto runtime = buildRuntimeObject(o.triple, target.cpu, o.features);
  if (!runtime) return runtime.error();

  fs::path dir(outDir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return error(Loc{}, fmt::format(FMT_STRING("cannot create output directory '{}': {}"), outDir, ec.message()));
  std::vector<NeededLibrary> needed = neededLibraries(undefinedSymbols(out->object), out->triple);
  std::vector<std::string> libraries; // for -l
  for (auto &lib : needed)
    if (lib.soname != "libc.so.6") libraries.push_back(lib.soname.substr(3, lib.soname.find('.') - 3));
  // Every file to a temporary first; all are renamed into place at the end.
  build::ModuleFiles files(dir);
  for (auto st :
       {files.write(module + ".h", writeHeader(module, descs, out->triple, fs::path(input.path).filename().string(),
                                               libraries, out->bareMetal, variants, device, o.threads)),
        files.write(module + ".json",
                    writeManifest(module, descs, out->triple, out->cpu, libraries, variants,
                                  inputsDigest(input.contents, entries, o, module), device, o.threads)),
        files.write("nxrt.h", runtimeHeader()), files.write("nxrt.c", runtimeSource())})
    if (!st) return st.error();
  for (auto st : {writeStaticArchive({{module + ".o", out->object}}, files.temporary("lib" + module + ".a")),
                  writeStaticArchive({{"nxrt.o", *runtime}}, files.temporary("libnxrt.a"))})
    if (!st) return st.error();
  // Bare-metal targets have no dynamic loader: static libraries only.
  if (!out->bareMetal) {
    // The runtime's functions (nxrt_version, nxrt_status_string) are in the
    // shared object too: -lMODULE alone links a program that calls them.
    auto obj = files.writeScratch(module + ".o", out->object);
    if (!obj) return obj.error();
    auto rt = files.writeScratch("nxrt.o", *runtime);
    if (!rt) return rt.error();
    std::string so = "lib" + module + ".so";
    std::string soTemporary = files.temporary(so);
    for (auto &path : linkScratchFiles(soTemporary, needed)) files.scratch(path);
    if (auto linked = linkSharedObject({*obj, *rt}, soTemporary, so, out->triple, needed); !linked)
      return linked.error();
  }
  return files.commit();
}

} // namespace nxc

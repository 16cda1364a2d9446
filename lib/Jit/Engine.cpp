//===- Engine.cpp - run a defn now, on host tensors -----------------------===//
#include "nxc/Jit/Engine.h"
#include "nxc/Target/TargetTriple.h"
#include "nxc/Target/ABI.h"
#include "nxc/Pipeline/Compiler.h"
#include "nxc/Sema/Sema.h"

#include "llvm/Support/FileSystem.h"

#include <fmt/format.h>

#include <algorithm>

#include <chrono>
#include <cstdlib>
#include <cstring>

#include <sys/mman.h>

namespace nxc {
namespace {

/// Identifies this build of nxc (its executable's size and time stamp), so
/// that a rebuilt compiler never reuses code cached by an older one.
std::string compilerIdentity() {
  static const std::string id = [] {
    static int anchor;
    std::string exe = llvm::sys::fs::getMainExecutable(nullptr, (void *)&anchor);
    llvm::sys::fs::file_status st;
    if (exe.empty() || llvm::sys::fs::status(exe, st)) return std::string("unknown-build");
    return fmt::format(FMT_STRING("{}:{}:{}"), exe, st.getSize(),
                       st.getLastModificationTime().time_since_epoch().count());
  }();
  return id;
}

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

/// Leaves a pattern binds (a variable binds a whole value: 0 means "any").
size_t patternLeaves(const ast::Expr &p) {
  if (p.kind == ast::ExprKind::Tuple) {
    size_t n = 0;
    for (auto &c : p.children) n += std::max<size_t>(1, patternLeaves(*c));
    return n;
  }
  if (p.kind == ast::ExprKind::Match) {
    size_t a = patternLeaves(*p.children[0]), b = patternLeaves(*p.children[1]);
    return a ? a : b;
  }
  return 0;
}

/// Builds the value a tuple pattern expects from consecutive leaves.
Result<HostValue> takeForPattern(const ast::Expr &p, std::vector<HostValue> &args, size_t &next, const Loc &where) {
  const ast::Expr *tuple = &p;
  if (p.kind == ast::ExprKind::Match)
    tuple = p.children[0]->kind == ast::ExprKind::Tuple || p.children[0]->kind == ast::ExprKind::Map
                ? p.children[0].get()
                : p.children[1].get();
  if (tuple->kind == ast::ExprKind::Map && tuple->name == "Nx.Tensor") {
    // `%Nx.Tensor{} = data`: a tensor.
    if (next >= args.size()) return error(where, "not enough arguments");
    return args[next++];
  }
  if (tuple->kind == ast::ExprKind::Map) {
    // A map comes whole from one .npz with a map template.
    if (next < args.size() && args[next].isTuple && !args[next].keys.empty()) return args[next++];
    return error(where, fmt::format(FMT_STRING("argument {} is a map: give it as an .npz archive with a map template, "
                                               "as in 'params.npz:%{{w: f32[784, 10], b: f32[10]}}'"),
                                    next + 1));
  }
  if (tuple->kind != ast::ExprKind::Tuple) {
    if (next >= args.size()) return error(where, "not enough arguments");
    return args[next++];
  }
  if (next < args.size() && args[next].isTuple) return args[next++];
  std::vector<HostValue> elems;
  for (auto &c : tuple->children) {
    NXC_TRY(v, takeForPattern(*c, args, next, where));
    elems.push_back(std::move(v));
  }
  return HostValue::tuple(std::move(elems));
}

} // namespace


Result<const ast::Function *> findFunction(const ast::File &file, const std::string &module,
                                           const std::string &function, const Loc &where,
                                           const std::function<bool(const ast::Function &)> &takes) {
  std::vector<const ast::Function *> found;
  std::vector<const std::string *> foundIn; // the module of each
  bool moduleSeen = module.empty();
  // Unqualified: the input's own modules first, then the library's.
  bool inputOnly = module.empty() && file.inputModules < file.modules.size();
  for (size_t mi = 0; mi < file.modules.size(); ++mi) {
    auto &m = file.modules[mi];
    if (inputOnly && mi >= file.inputModules && !found.empty()) break;
    if (!module.empty() && m.name != module) continue;
    moduleSeen = true;
    size_t before = found.size();
    for (auto &f : m.functions) {
      // Any defn, def or deftransform, public or private (the clauses of an
      // Elixir function count once: tracing picks the clause).
      bool clause = std::any_of(found.begin() + before, found.end(), [&](const ast::Function *g) {
        return g->kind == f.kind && g->params.size() == f.params.size();
      });
      if (f.name == function && !clause) {
        found.push_back(&f);
        foundIn.push_back(&m.name);
      }
    }
  }
  std::string qual = fmt::format(FMT_STRING("{}{}{}"), module, module.empty() ? "" : ".", function);
  if (!moduleSeen)
    return error(where, fmt::format(FMT_STRING("module {} is not defined in {}"), module, file.source->name));
  if (found.empty())
    return error(where, fmt::format(FMT_STRING("undefined function {} in {}"), qual, file.source->name));
  if (found.size() > 1 && takes) {
    size_t fits = 0, last = 0;
    for (size_t k = 0; k < found.size(); ++k)
      if (takes(*found[k])) ++fits, last = k;
    if (fits == 1) {
      found = {found[last]};
      foundIn = {foundIn[last]};
    }
  }
  if (found.size() > 1) {
    std::vector<std::string> arities;
    for (size_t k = 0; k < found.size(); ++k)
      arities.push_back(fmt::format(FMT_STRING("{}.{}/{}"), *foundIn[k], found[k]->name, found[k]->params.size()));
    return error(where, fmt::format(FMT_STRING("several functions named {} take these arguments ({}){}"), qual,
                                    fmt::join(arities, ", "),
                                    module.empty() ? fmt::format(FMT_STRING("; qualify the module (Mod.{})"), function)
                                                   : ""));
  }
  if (!found[0]->body && !found[0]->skipped.empty())
    return error(where, fmt::format(FMT_STRING("{} {}/{} runs Elixir that nxc cannot read (line {}:{}): {}"),
                                    found[0]->kind, qual, found[0]->params.size(), found[0]->skippedLoc.line,
                                    found[0]->skippedLoc.col, found[0]->skipped));
  if (!found[0]->body && !found[0]->head)
    return error(where, fmt::format(FMT_STRING("{}/{} is plain Elixir that nxc cannot compile (its body is not in the "
                                               "defn subset)"),
                                    qual, found[0]->params.size()));
  return found[0];
}

Result<std::vector<HostValue>> groupArguments(const ast::Function &fn, std::vector<HostValue> args, const Loc &where,
                                              size_t trailing) {
  std::vector<HostValue> grouped;
  for (auto &p : fn.params)
    if (!p)
      return error(where, fmt::format(FMT_STRING("{}/{} is Elixir that nxc cannot read"), fn.name, fn.params.size()));
  size_t next = 0;
  size_t tensorParams = fn.params.size() >= trailing ? fn.params.size() - trailing : 0;
  for (size_t i = 0; i < tensorParams && next < args.size(); ++i) {
    NXC_TRY(v, takeForPattern(*fn.params[i], args, next, where));
    grouped.push_back(std::move(v));
  }
  size_t required = 0;
  for (auto &d : fn.defaults) required += d ? 0 : 1;
  if (next < args.size() || grouped.size() + trailing < required || grouped.size() + trailing > fn.params.size()) {
    size_t leaves = 0;
    for (auto &p : fn.params) leaves += std::max<size_t>(1, patternLeaves(*p));
    return error(where, fmt::format(FMT_STRING("{}/{} takes {} tensor argument{}, got {}"), fn.name, fn.params.size(),
                                    leaves, leaves == 1 ? "" : "s", args.size()));
  }
  return grouped;
}

Result<std::unique_ptr<Engine>> Engine::create() {
  NXC_TRY(session, JitSession::create());
  std::unique_ptr<Engine> e(new Engine());
  e->session_ = std::move(session);
  return std::move(e);
}

Result<Prepared> Engine::prepare(const ast::File &file, const std::string &module, const std::string &function,
                                 const std::vector<HostValue> &args, bool useDiskCache, const Loc &where,
                                 const Signature *options, EagerEvaluator eager) {
  auto start = std::chrono::steady_clock::now();
  Signature sig;
  sig.module = module;
  sig.function = function;
  sig.loc = where;
  for (auto &a : args) sig.args.push_back(templateOf(a));
  std::vector<std::string> argTypes;
  for (auto &a : sig.args) argTypes.push_back(a.str());
  if (options && options->options) {
    sig.options = options->options;
    sig.optionsText = options->optionsText;
    argTypes.push_back(options->optionsText);
  }
  std::string signature =
      fmt::format(FMT_STRING("{}{}{}({})"), module, module.empty() ? "" : ".", function, fmt::join(argTypes, ", "));
  NXC_TRY(graph, trace(file, sig, std::move(eager)));
  double traced = seconds(start);
  NXC_TRY(p, prepareGraph(std::move(graph), signature, file.source->text, useDiskCache));
  p.traceSeconds = traced;
  return p;
}

Result<Prepared> Engine::prepareGraph(Graph graph, const std::string &signature, const std::string &source,
                                      bool useDiskCache) {
  Prepared p;
  p.signature = signature;
  p.graph = std::move(graph);
  p.graph.printing = true; // print_value prints when the code runs
  const std::string &function = p.graph.function;
  auto start = std::chrono::steady_clock::now();

  // Everything that determines the code.
  std::string symbol = "nxc_jit_" + function;
  for (auto &c : symbol)
    if (!std::isalnum((unsigned char)c)) c = '_';
  std::string key =
      ObjectCache::key({source, p.signature, hostTriple(), NXC_VERSION, compilerIdentity(), "jit-2",
                         emulateGpu_ ? "cuda-emulated" : "cpu", std::to_string(threads_)});

  std::string object;
  int64_t workspace = 0;
  if (useDiskCache)
    if (auto hit = ObjectCache::lookup(key)) {
      object = std::move(hit->object);
      workspace = hit->workspaceSize;
      p.diskCacheHit = true;
      p.cachePath = hit->path;
    }
  if (!p.diskCacheHit) {
    start = std::chrono::steady_clock::now();
    TargetOptions target;
    target.packedEntries = true;
    if (emulateGpu_) target.device = Device::CudaEmulated;
    target.threads = emulateGpu_ ? 1 : threads_;
    target.threadExportPrefix = symbol;
    NXC_TRY(out, compile({EntryPoint{symbol, &p.graph}}, target, Stage::Object));
    object = std::move(out.object);
    workspace = out.entries[0].workspaceSize;
    p.compileSeconds = seconds(start);
    if (useDiskCache && ObjectCache::store(key, object, workspace))
      p.cachePath = fmt::format(FMT_STRING("{}/{}.o"), ObjectCache::directory(), key);
  }
  start = std::chrono::steady_clock::now();
  NXC_TRY(fn, session_->load(key, object, symbol, workspace, threads_ > 1 && !emulateGpu_));
  p.function = fn;
  p.loadSeconds = seconds(start);
  return p;
}

namespace {

/// Page-aligned memory fresh from the OS, as a program's first large
/// allocations are (glibc maps them): the buffers `nxc jit --bench` times a
/// call on. Memory the compiler has used and freed lies elsewhere physically,
/// and a large output written with streaming stores (W7, 16 MB) ran up to
/// 1.5x slower in it than in a C program's buffers. The mapping's length is
/// kept in the page before the buffer.
void *freshPages(size_t bytes) {
  size_t page = 4096, length = page + (bytes + page - 1) / page * page;
  void *base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return nullptr;
  *(size_t *)base = length;
  return (char *)base + page;
}

void releaseFreshPages(void *p) {
  void *base = (char *)p - 4096;
  munmap(base, *(size_t *)base);
}

HostValue resultsAs(const Graph &g, const ResultTree &t, std::vector<HostTensor> &outs, size_t &next) {
  if (!t.term.empty()) {
    HostValue v = HostValue::leaf(HostTensor::zeros(TensorType{ElemType::u8(), {}, {}}));
    v.term = t.term;
    return v;
  }
  if (!t.isTuple) {
    HostValue v = HostValue::leaf(std::move(outs[next++]));
    v.vectorized = t.vectorized;
    return v;
  }
  std::vector<HostValue> elems;
  for (auto &e : t.elems) elems.push_back(resultsAs(g, e, outs, next));
  HostValue v = HostValue::tuple(std::move(elems));
  v.keys = t.keys;
  v.structName = t.structName;
  return v;
}

} // namespace

Result<BoundCall> Engine::bind(const Prepared &p, const std::vector<const HostTensor *> &inputs, bool aligned) {
  const Graph &g = p.graph;
  if (inputs.size() != g.params.size())
    return internalError(Loc{}, fmt::format(FMT_STRING("{} inputs for {} parameters"), inputs.size(),
                                    g.params.size()));
  BoundCall c;
  c.packed = p.function.packed;
  auto allocate = [&](int64_t bytes) -> void * {
    if (aligned) {
      void *b = freshPages((size_t)std::max<int64_t>(bytes, 1));
      if (b) c.owned.emplace_back(b, releaseFreshPages);
      return b;
    }
    void *b = std::aligned_alloc(abi::kBufferAlignment,
                                 (size_t)((std::max<int64_t>(bytes, 1) + abi::kBufferAlignment - 1) /
                                          abi::kBufferAlignment * abi::kBufferAlignment));
    if (b) c.owned.emplace_back(b, std::free);
    return b;
  };
  // Every pointer must be non-NULL, also for empty tensors.
  alignas(64) static uint8_t empty[64];
  for (auto *t : inputs) {
    // Inputs are read, never written: the kernel's signature takes them as
    // plain pointers.
    void *data = t->data.empty() ? empty : const_cast<uint8_t *>(t->data.data());
    if (aligned && !t->data.empty()) {
      if (!(data = allocate((int64_t)t->data.size())))
        return error(Loc{}, fmt::format(FMT_STRING("cannot allocate {} bytes"), t->data.size()));
      std::memcpy(data, t->data.data(), t->data.size());
    }
    c.argv.push_back(data);
  }
  for (int r : g.results) {
    TensorType t = g.typeOf(r);
    int64_t bytes = t.numElements() * t.elem.bytes();
    if (aligned) {
      void *data = allocate(bytes);
      if (!data) return error(Loc{}, fmt::format(FMT_STRING("cannot allocate {} bytes"), bytes));
      c.argv.push_back(data);
    } else {
      c.outputs.push_back(HostTensor::zeros(t));
      c.argv.push_back(c.outputs.back().data.empty() ? empty : (void *)c.outputs.back().data.data());
    }
  }
  void *workspace = nullptr;
  if (p.function.workspaceSize > 0 && !(workspace = allocate(p.function.workspaceSize)))
    return error(Loc{}, fmt::format(FMT_STRING("cannot allocate a workspace of {} bytes"), p.function.workspaceSize));
  c.argv.push_back(workspace);
  return c;
}

Result<HostValue> Engine::call(const Prepared &p, const std::vector<const HostTensor *> &inputs) {
  NXC_TRY(c, bind(p, inputs));
  int status = c.run();
  if (status != 0) return error(Loc{}, fmt::format(FMT_STRING("the compiled function returned status {}"), status));
  size_t next = 0;
  return resultsAs(p.graph, p.graph.resultTree, c.outputs, next);
}

} // namespace nxc

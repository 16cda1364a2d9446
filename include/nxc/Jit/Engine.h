//===- Engine.h - run a defn now, on host tensors ---------------*- C++ -*-===//
//
// What `nxc jit` and `nxc repl` share: turn host tensors into argument
// templates, trace the function for them, compile (or fetch the compiled
// object from the disk cache), load it into the JIT (or reuse the loaded
// function, as Nx caches per shape and type), and call it.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_JIT_ENGINE_H
#define NXC_JIT_ENGINE_H

#include "nxc/Frontend/AST.h"
#include "nxc/Jit/Jit.h"
#include "nxc/Sema/Graph.h"
#include "nxc/Sema/Sema.h" // EagerEvaluator
#include "nxc/Sema/Signature.h"
#include "nxc/Tensor/Constants.h" // templateOf, flattenLeaves
#include "nxc/Tensor/HostTensor.h"

#include <functional>

namespace nxc {

/// A traced and loaded function, ready to call.
struct Prepared {
  Graph graph;
  LoadedFunction function;
  std::string signature;     ///< "softmax(f32[1000000])"
  bool diskCacheHit = false;  ///< the object came from the disk cache
  bool memoryCacheHit = false; ///< already loaded in this process
  std::string cachePath;
  double traceSeconds = 0, compileSeconds = 0, loadSeconds = 0;
};

/// A prepared function bound to its inputs, its outputs and workspace
/// allocated once: run() is the compiled call alone, as an AOT caller makes
/// it (what `nxc jit --bench` times).
struct BoundCall {
  using Buffer = std::unique_ptr<void, void (*)(void *)>;
  int (*packed)(void **) = nullptr;
  std::vector<void *> argv; ///< inputs, outputs, workspace
  std::vector<HostTensor> outputs; ///< unless the outputs are aligned copies
  std::vector<Buffer> owned;       ///< the workspace, aligned copies
  int run() { return packed(argv.data()); }
};

class Engine {
public:
  static Result<std::unique_ptr<Engine>> create();

  /// Traces `module.function` (module may be empty) of `file` for `args`
  /// and loads the compiled code. `useDiskCache` false skips the disk cache.
  /// `options`, when given, is the call's trailing keyword list (the
  /// options of a parsed --fn, Signature::options).
  /// `eager`, when given, computes tensors that Elixir code reads while it
  /// is traced (EagerEvaluator, Sema.h: the repl's).
  Result<Prepared> prepare(const ast::File &file, const std::string &module, const std::string &function,
                           const std::vector<HostValue> &args, bool useDiskCache, const Loc &where,
                           const Signature *options = nullptr, EagerEvaluator eager = nullptr);

  /// Compiles (or fetches from the caches) and loads an already traced
  /// graph, such as one read from a graph file; `source` is the text the
  /// graph came from, part of the disk cache's key.
  Result<Prepared> prepareGraph(Graph graph, const std::string &signature, const std::string &source,
                                bool useDiskCache);
  /// Runs a prepared function. Inputs are the flattened leaves of the
  /// arguments; the result has the function's tuple structure.
  Result<HostValue> call(const Prepared &p, const std::vector<const HostTensor *> &inputs);
  /// Allocates the outputs and the workspace of a call on `inputs` (which
  /// must outlive the result). With `aligned`, the inputs are copied and the
  /// outputs allocated 64-byte aligned, as the header asks of AOT callers'
  /// buffers (benchmarks: a host tensor's bytes are only 16-byte aligned).
  Result<BoundCall> bind(const Prepared &p, const std::vector<const HostTensor *> &inputs, bool aligned = false);

  /// Compiles through the CUDA mapping, emulated on the CPU (Device::CudaEmulated).
  void setEmulateGpu(bool on) { emulateGpu_ = on; }
  /// Compiles with this many threads at most (TargetOptions::threads).
  void setThreads(int threads) { threads_ = threads; }

private:
  std::unique_ptr<JitSession> session_;
  bool emulateGpu_ = false;
  int threads_ = 1;
};

/// Groups command-line arguments (each a tensor, or a tuple from an .npz) into
/// the parameters of `fn`: a parameter written as a tuple pattern takes its
/// leaves from consecutive tensor arguments, depth-first, unless the next
/// argument is itself a tuple. `trailing` parameters after them take other
/// values (a keyword list of options).
Result<std::vector<HostValue>> groupArguments(const ast::Function &fn, std::vector<HostValue> args, const Loc &where,
                                              size_t trailing = 0);

/// Finds `module.function` (module may be empty) in `file`, by name; of
/// several arities, the one `takes` accepts (the arguments given fit its
/// parameters) when exactly one does.
Result<const ast::Function *> findFunction(const ast::File &file, const std::string &module,
                                           const std::string &function, const Loc &where,
                                           const std::function<bool(const ast::Function &)> &takes = nullptr);

} // namespace nxc

#endif // NXC_JIT_ENGINE_H

//===- JitCommand.cpp - nxc jit -------------------------------------------===//
//
// Reads the program and the arguments, compiles the function for their types
// and shapes (or takes it from the cache), runs it, and prints the result as
// Nx does or writes it as .npy/.npz (lib/Jit/Call.cpp). With --bench it runs
// the function repeatedly (JitBench.cpp).
//
//===----------------------------------------------------------------------===//
#include "BenchFormat.h"
#include "Commands.h"

#include "nxc/Jit/Call.h"
#include "nxc/Jit/Engine.h"
#include "nxc/Jit/Jit.h"
#include "nxc/Pipeline/Options.h"

#include <fmt/format.h>

#include <iostream>

namespace nxc::cli {
namespace {

void sayHowCompiled(const Prepared &p, bool noCache) {
  if (p.diskCacheHit) {
    std::cerr << fmt::format(FMT_STRING("nxc: {}: cache hit, {} (trace {}, load {})\n"), p.signature, p.cachePath,
                             benchDuration(p.traceSeconds), benchDuration(p.loadSeconds));
    return;
  }
  std::string where = noCache ? " (cache off)"
                      : p.cachePath.empty()
                          ? ", not cached (the cache directory cannot be written: " + ObjectCache::directory() + ")"
                          : ", cached in " + p.cachePath;
  std::cerr << fmt::format(FMT_STRING("nxc: {}: compiled in {}{}\n"), p.signature, benchDuration(p.compileSeconds),
                           where);
}

} // namespace

int runJit(const JitOptions &o) {
  auto input = readInput(o.input, o.with);
  if (!input) return report(input.error());
  auto call = resolveJitCall(input->source, input->graph, o.fn, o.args);
  if (!call) return report(call.error());
  if (!o.output.empty())
    if (auto st = checkJitResultPath(o.output); !st) return report(st.error());

  std::optional<Device> device = deviceNamed(o.device);
  if (!device || *device == Device::Cuda)
    return report(error(Loc{}, fmt::format(FMT_STRING("unknown jit --device '{}'; expected cpu or cuda-emulated "
                                                      "(nxc jit runs on this machine's CPU)"),
                                           o.device)));
  if (o.threads > 1 && *device != Device::Cpu)
    return report(error(Loc{}, "--threads applies to CPU code, not to --device cuda-emulated"));
  auto engine = Engine::create();
  if (!engine) return report(engine.error());
  (*engine)->setEmulateGpu(*device == Device::CudaEmulated);
  (*engine)->setThreads(o.threads);
  // The disk cache's key covers everything the program was read from.
  auto prepared = call->graph
                      ? (*engine)->prepareGraph(*call->graph, graphSignature(*call->graph), input->contents, !o.noCache)
                      : (*engine)->prepare(*input->source, call->module, call->name, call->arguments, !o.noCache,
                                           call->where, &call->signature);
  if (!prepared) return report(prepared.error());
  if (o.verbose) sayHowCompiled(*prepared, o.noCache);

  std::vector<const HostTensor *> inputs;
  for (auto &a : call->arguments) flattenLeaves(a, inputs);
  if (o.bench) {
    int rc = runJitBench(**engine, *prepared, inputs, o);
    if (rc != 0 || o.output.empty()) return rc;
  }
  auto result = (*engine)->call(*prepared, inputs);
  if (!result) return report(result.error());
  if (o.output.empty()) {
    std::cout << formatNx(*result) << "\n";
    return 0;
  }
  if (auto st = writeJitResult(o.output, *result); !st) return report(st.error());
  return 0;
}

} // namespace nxc::cli

//===- JitCommand.cpp - nxc jit -------------------------------------------===//
//
// Reads the arguments (.npy, .npz or literals), compiles the function for
// their types and shapes (or takes it from the cache), runs it, and prints the
// result as Nx does or writes it as .npy/.npz. With --bench it runs the
// function repeatedly and prints a Benchee-style table.
//
//===----------------------------------------------------------------------===//
#include "BenchFormat.h"
#include "Commands.h"

#include "nxc/Frontend/Parser.h"
#include "nxc/Graph/GraphJson.h"
#include "nxc/Jit/Arguments.h"
#include "nxc/Jit/Engine.h"
#include "nxc/Jit/Jit.h"
#include "nxc/Pipeline/Options.h"

#include "nxc/Sema/Signature.h"

#include "llvm/ADT/StringRef.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>

namespace fs = std::filesystem;

namespace nxc::cli {
namespace {

int bench(Engine &engine, const Prepared &p, const std::vector<const HostTensor *> &inputs, const JitOptions &o) {
  using clock = std::chrono::steady_clock;
  for (auto [what, seconds] :
       {std::pair<const char *, double>{"--time", o.benchSeconds}, {"--warmup", o.warmupSeconds}})
    if (!(seconds >= 0 && seconds <= 3600))
      return report(
          error(Loc{}, fmt::format(FMT_STRING("{} {} is out of range: give 0 to 3600 seconds"), what, seconds)));
  // Mean and deviation over every run (Welford); the median and the 99th
  // percentile from a uniform sample of at most kKept runs, so memory stays
  // bounded however fast the function and however long the measurement.
  constexpr size_t kKept = 100000;
  std::vector<double> kept;
  uint64_t runs = 0;
  double mean = 0, m2 = 0;
  std::mt19937_64 rng(12345);
  // The outputs and the workspace are allocated once: each run is the
  // compiled call alone, as an AOT caller makes it.
  auto bound = engine.bind(p, inputs, /*aligned=*/true);
  if (!bound) return report(bound.error());
  auto runFor = [&](double budget, bool record) -> Status {
    auto start = clock::now();
    do {
      auto t0 = clock::now();
      if (int status = bound->run(); status != 0)
        return error(Loc{}, fmt::format(FMT_STRING("the compiled function returned status {}"), status));
      double dt = std::chrono::duration<double>(clock::now() - t0).count();
      if (record) {
        ++runs;
        double delta = dt - mean;
        mean += delta / (double)runs;
        m2 += delta * (dt - mean);
        if (kept.size() < kKept) kept.push_back(dt);
        else if (uint64_t j = rng() % runs; j < kKept) kept[j] = dt;
      }
    } while (std::chrono::duration<double>(clock::now() - start).count() < budget);
    return okStatus();
  };
  if (auto st = runFor(o.warmupSeconds, false); !st) return report(st.error());
  if (auto st = runFor(o.benchSeconds, true); !st) return report(st.error());
  std::vector<double> sorted = kept;
  std::sort(sorted.begin(), sorted.end());
  double stddev = runs > 1 ? std::sqrt(m2 / (double)(runs - 1)) : 0;
  auto percentile = [&](double q) {
    size_t i = (size_t)std::ceil(q * sorted.size()) - 1;
    return sorted[std::min(i, sorted.size() - 1)];
  };
  double median = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                     : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  std::string name = p.signature;
  size_t width = std::max<size_t>(name.size(), 4) + 2;
  std::string out = benchRow(width, "Name", "ips", "average", "deviation", "median", "99th %");
  out += benchRow(width, name, benchRate(1 / mean), benchDuration(mean), benchDeviation(mean, stddev),
                  benchDuration(median), benchDuration(percentile(0.99)));
  out += fmt::format(FMT_STRING("\nRuns: {} in {:g} s after {:g} s of warm-up (inputs, outputs and workspace "
                                "in fresh pages from the OS and allocated once, as for an AOT call)\n"),
                     runs, o.benchSeconds, o.warmupSeconds);
  if (p.diskCacheHit)
    out += fmt::format(FMT_STRING("Compile: none (disk cache hit), trace {}, load {}\n"), benchDuration(p.traceSeconds),
                       benchDuration(p.loadSeconds));
  else
    out += fmt::format(FMT_STRING("Compile: {} (trace {}, load {})\n"), benchDuration(p.compileSeconds),
                       benchDuration(p.traceSeconds), benchDuration(p.loadSeconds));
  std::cout << out;
  return 0;
}

} // namespace

int runJit(const JitOptions &o) {
  auto input = readInput(o.input, o.with);
  if (!input) return report(input.error());
  bool graphInput = input->graph.has_value();
  std::optional<ast::File> &file = input->source;
  std::optional<GraphFile> &graphFile = input->graph;
  const std::string &cacheSource = input->contents; // what the disk cache's key covers

  auto fnSrc = std::make_shared<const SourceFile>(SourceFile{"--fn", o.fn});
  Loc where{fnSrc, 1, 1};
  std::string module, name = o.fn;
  // Mod.fun(alpha: 2.0): the function and its options (a keyword list, the
  // last argument after the tensors).
  Signature call;
  if (!graphInput && o.fn.find('(') != std::string::npos) {
    auto parsed = parseSignature(fnSrc);
    if (!parsed) return report(parsed.error());
    if (!parsed->args.empty() || !parsed->cname.empty())
      return report(error(parsed->args.empty() ? where : parsed->args[0].loc,
                          "nxc jit takes the arguments' values after the function; --fn gives the function and, in "
                          "parentheses, only its options, as in 'Mod.fun(alpha: 2.0)'"));
    call = std::move(*parsed);
    module = call.module;
    name = call.function;
  } else if (auto dot = o.fn.rfind('.'); !graphInput && dot != std::string::npos) {
    module = o.fn.substr(0, dot);
    name = o.fn.substr(dot + 1);
  }
  const ast::Function *fn = nullptr;
  const Graph *graph = nullptr;
  if (graphInput) {
    std::vector<std::string> names;
    for (auto &g : graphFile->functions) {
      names.push_back(g.function);
      if (g.function == name) graph = &g;
    }
    if (!graph)
      return report(error(where, fmt::format(FMT_STRING("the graph has no function '{}' (it has: {})"), name,
                                             fmt::join(names, ", "))));
  }

  std::vector<HostValue> args;
  for (size_t i = 0; i < o.args.size(); ++i) {
    auto a = readJitArgument(o.args[i], i + 1);
    if (!a) return report(a.error());
    args.push_back(std::move(*a));
  }
  if (!graphInput) {
    // Of several arities, the one the arguments fit.
    auto takes = [&](const ast::Function &f) {
      return (bool)groupArguments(f, args, where, call.options ? 1 : 0);
    };
    auto found = findFunction(*file, module, name, where, takes);
    if (!found) return report(found.error());
    fn = *found;
  }
  std::vector<HostValue> grouped;
  if (graph) {
    if (auto st = checkGraphArguments(*graph, args, where); !st) return report(st.error());
    grouped = std::move(args);
  } else {
    auto g = groupArguments(*fn, std::move(args), where, call.options ? 1 : 0);
    if (!g) return report(g.error());
    grouped = std::move(*g);
  }

  if (!o.output.empty() && !llvm::StringRef(o.output).ends_with(".npy") && !llvm::StringRef(o.output).ends_with(".npz"))
    return report(error(Loc{}, fmt::format(FMT_STRING("-o {}: the output must be a .npy (one tensor) or .npz (a tuple) "
                                                      "file"),
                                           o.output)));

  auto engine = Engine::create();
  if (!engine) return report(engine.error());
  std::optional<Device> device = deviceNamed(o.device);
  if (!device || *device == Device::Cuda)
    return report(error(Loc{}, fmt::format(FMT_STRING("unknown jit --device '{}'; expected cpu or cuda-emulated "
                                                      "(nxc jit runs on this machine's CPU)"),
                                           o.device)));
  (*engine)->setEmulateGpu(*device == Device::CudaEmulated);
  if (o.threads > 1 && *device != Device::Cpu)
    return report(error(Loc{}, "--threads applies to CPU code, not to --device cuda-emulated"));
  (*engine)->setThreads(o.threads);
  auto prepared = graph ? (*engine)->prepareGraph(*graph, graphSignature(*graph), cacheSource, !o.noCache)
                        : (*engine)->prepare(*file, module, name, grouped, !o.noCache, where, &call);
  if (!prepared) return report(prepared.error());
  if (o.verbose) {
    if (prepared->diskCacheHit)
      std::cerr << fmt::format(FMT_STRING("nxc: {}: cache hit, {} (trace {}, load {})\n"), prepared->signature,
                               prepared->cachePath, benchDuration(prepared->traceSeconds),
                               benchDuration(prepared->loadSeconds));
    else
      std::cerr << fmt::format(FMT_STRING("nxc: {}: compiled in {}{}{}\n"), prepared->signature,
                               benchDuration(prepared->compileSeconds),
                               o.noCache                         ? " (cache off)"
                               : prepared->cachePath.empty() ? ", not cached (the cache directory cannot be written: "
                                                             : ", cached in ",
                               o.noCache ? "" : prepared->cachePath.empty() ? ObjectCache::directory() + ")"
                                                                            : prepared->cachePath);
  }
  std::vector<const HostTensor *> inputs;
  for (auto &g : grouped) flattenLeaves(g, inputs);
  if (o.bench) {
    int rc = bench(**engine, *prepared, inputs, o);
    if (rc != 0 || o.output.empty()) return rc;
  }

  auto result = (*engine)->call(*prepared, inputs);
  if (!result) return report(result.error());
  if (o.output.empty()) {
    std::cout << formatNx(*result) << "\n";
    return 0;
  }
  Status written = okStatus();
  if (llvm::StringRef(o.output).ends_with(".npy")) {
    if (result->isTuple)
      return report(error(Loc{}, "the result is a tuple; write it with -o FILE.npz (arrays arr_0, arr_1, ...)"));
    written = writeNpy(o.output, result->tensor);
  } else if (!result->keys.empty()) {
    // A map: entries named by each leaf's path ("w", "layer.0").
    std::vector<NpzEntry> entries;
    std::function<void(const HostValue &, const std::string &)> walk = [&](const HostValue &v,
                                                                           const std::string &path) {
      if (!v.isTuple) {
        entries.push_back(NpzEntry{path, v.tensor});
        return;
      }
      for (size_t i = 0; i < v.elems.size(); ++i)
        walk(v.elems[i],
             (path.empty() ? "" : path + ".") + (v.keys.empty() ? std::to_string(i) : ast::keyText(v.keys[i])));
    };
    walk(*result, "");
    written = writeNpzEntries(o.output, entries);
  } else {
    std::vector<const HostTensor *> leaves;
    flattenLeaves(*result, leaves);
    std::vector<HostTensor> copies;
    for (auto *t : leaves) copies.push_back(*t);
    written = writeNpz(o.output, copies);
  }
  if (!written) return report(written.error());
  return 0;
}

} // namespace nxc::cli

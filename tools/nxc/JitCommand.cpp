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
#include "nxc/Jit/Engine.h"
#include "nxc/Jit/Jit.h"

#include "nxc/Sema/Signature.h"

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

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Gives the leaves of `v` the axis names of `declared` (a template written
/// after the file, as in `params.npz:{f32[input: 784, layer: 128], ...}`),
/// after checking that types and shapes match.
Status applyTemplate(HostValue &v, const Template &declared, const std::string &file) {
  if (v.isTuple != declared.isTuple || (v.isTuple && v.elems.size() != declared.elems.size()) ||
      v.keys != declared.keys)
    return error(declared.loc, fmt::format(FMT_STRING("{} does not have the structure of {}"), file, declared.str()));
  if (v.isTuple) {
    for (size_t i = 0; i < v.elems.size(); ++i) NXC_CHECK(applyTemplate(v.elems[i], declared.elems[i], file));
    return okStatus();
  }
  if (!(v.tensor.type.elem == declared.tensor.elem && v.tensor.type.shape == declared.tensor.shape))
    return error(declared.loc, fmt::format(FMT_STRING("{} holds {}, but the template declares {}"), file,
                                           v.tensor.type.str(), declared.tensor.str()));
  v.tensor.type.names = declared.tensor.names;
  return okStatus();
}

/// One command-line argument: a .npy file, an .npz file (a tuple), or a
/// literal; a file may be followed by `:TEMPLATE` to give its axes names.
Result<HostValue> readArgument(const std::string &text, size_t index) {
  std::string file = text, declared;
  for (const char *ext : {".npy:", ".npz:"})
    if (auto at = text.find(ext); at != std::string::npos) {
      file = text.substr(0, at + 4);
      declared = text.substr(at + 5);
    }
  HostValue v;
  if (endsWith(file, ".npy")) {
    NXC_TRY(t, readNpy(file));
    v = HostValue::leaf(std::move(t));
  } else if (endsWith(file, ".npz") && declared.rfind("%{", 0) == 0) {
    // A map: the archive's entries by path, as -o writes them (a nested
    // map's leaves as `mu.w`, a tuple's as `pair.0`), in the template's
    // (sorted) order.
    NXC_TRY(entries, readNpzEntries(file));
    auto argument = std::make_shared<const SourceFile>(SourceFile{fmt::format(FMT_STRING("argument {}"), index), text});
    auto src = std::make_shared<const SourceFile>(SourceFile{argument->name, "f(" + declared + ")"});
    auto sig = parseSignature(src);
    Loc at{argument, 1, (int)file.size() + 2};
    if (!sig || sig->args.size() != 1) return error(at, fmt::format(FMT_STRING("expected one map template after {}:"), file));
    std::vector<std::string> held;
    for (auto &e : entries) held.push_back(e.name);
    size_t used = 0;
    std::function<Result<HostValue>(const Template &, const std::string &)> build =
        [&](const Template &t, const std::string &path) -> Result<HostValue> {
      if (!t.isTuple) {
        auto it = std::find_if(entries.begin(), entries.end(), [&](const NpzEntry &e) { return e.name == path; });
        if (it == entries.end())
          return error(at, fmt::format(FMT_STRING("{} has no entry '{}' (it holds {})"), file, path, fmt::join(held, ", ")));
        ++used;
        return HostValue::leaf(std::move(it->tensor));
      }
      std::vector<HostValue> elems;
      for (size_t k = 0; k < t.elems.size(); ++k) {
        std::string name = t.keys.empty() ? std::to_string(k) : ast::keyText(t.keys[k]);
        NXC_TRY(e, build(t.elems[k], path.empty() ? name : path + "." + name));
        elems.push_back(std::move(e));
      }
      HostValue v = HostValue::tuple(std::move(elems));
      v.keys = t.keys;
      return v;
    };
    NXC_TRY(built, build(sig->args[0], ""));
    if (used != entries.size())
      return error(at, fmt::format(FMT_STRING("{} holds {} entries ({}); the template names {}"), file, entries.size(),
                                   fmt::join(held, ", "), used));
    v = std::move(built);
  } else if (endsWith(file, ".npz")) {
    NXC_TRY(ts, readNpz(file));
    std::vector<HostValue> elems;
    for (auto &t : ts) elems.push_back(HostValue::leaf(std::move(t)));
    v = HostValue::tuple(std::move(elems));
  } else if (std::error_code ec; declared.empty() && std::filesystem::is_regular_file(file, ec)) {
    // Any other file: what Nx.serialize/2 wrote (trained parameters), its
    // container as the file holds it, or a .safetensors file (a map of its
    // tensors by name); recognized by content, whatever the name.
    NXC_TRY(bytes, readFileBytes(file));
    if (isSafetensors(bytes) || endsWith(file, ".safetensors")) return parseSafetensors(bytes, file);
    if (!isNxSerialized(bytes))
      return error(Loc{}, fmt::format(FMT_STRING("{} is neither a .npy/.npz file nor one Nx.serialize/2 or safetensors "
                                                 "wrote"),
                                      file));
    NXC_TRY(serialized, parseNxSerialized(bytes, file));
    return serialized;
  } else {
    auto src = std::make_shared<const SourceFile>(SourceFile{fmt::format(FMT_STRING("argument {}"), index), text});
    NXC_TRY(t, parseLiteral(src));
    return HostValue::leaf(std::move(t));
  }
  if (!declared.empty()) {
    // Parsed as the one argument of a signature `f(TEMPLATE)`; errors are
    // reported in the argument as the user wrote it.
    auto argument = std::make_shared<const SourceFile>(SourceFile{fmt::format(FMT_STRING("argument {}"), index), text});
    auto src = std::make_shared<const SourceFile>(SourceFile{argument->name, "f(" + declared + ")"});
    int shift = (int)(file.size() + 1) - 2; // "FILE:" precedes the template, "f(" was added
    auto inArgument = [&](Diag d) {
      if (d.loc.file == src) d.loc = Loc{argument, 1, std::max(1, d.loc.col + shift)};
      return d;
    };
    auto sig = parseSignature(src);
    if (!sig) return inArgument(sig.error());
    if (sig->args.size() != 1 || !sig->args[0].constantPath.empty())
      return error(Loc{argument, 1, (int)file.size() + 2}, fmt::format(FMT_STRING("expected one template after {}:"), file));
    if (auto applied = applyTemplate(v, sig->args[0], file); !applied) return inArgument(applied.error());
  }
  return v;
}

int bench(Engine &engine, const Prepared &p, const std::vector<const HostTensor *> &inputs, const JitOptions &o) {
  using clock = std::chrono::steady_clock;
  for (auto [what, seconds] : {std::pair<const char *, double>{"--time", o.benchSeconds}, {"--warmup", o.warmupSeconds}})
    if (!(seconds >= 0 && seconds <= 3600))
      return report(error(Loc{}, fmt::format(FMT_STRING("{} {} is out of range: give 0 to 3600 seconds"), what, seconds)));
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

/// The arguments of a graph function: the leaves, in order, each of the
/// type of its parameter (a graph is traced at fixed types).
Status checkGraphArguments(const Graph &g, const std::vector<HostValue> &args, const Loc &where) {
  std::vector<const HostTensor *> leaves;
  for (auto &a : args) flattenLeaves(a, leaves);
  if (leaves.size() != g.params.size())
    return error(where, fmt::format(FMT_STRING("{} takes {} tensor argument{} ({}), got {}"), g.function,
                                    g.params.size(), g.params.size() == 1 ? "" : "s", graphSignature(g),
                                    leaves.size()));
  for (size_t k = 0; k < leaves.size(); ++k)
    if (!leaves[k]->type.sameTypeAndShape(g.typeOf(g.params[k])))
      return error(where, fmt::format(FMT_STRING("argument {} is {}, but parameter {} ({}) of the graph is {}"), k + 1,
                                      leaves[k]->type.str(), k, g.paramNames[k], g.typeOf(g.params[k]).str()));
  return okStatus();
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
    auto a = readArgument(o.args[i], i + 1);
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

  if (!o.output.empty() && !endsWith(o.output, ".npy") && !endsWith(o.output, ".npz"))
    return report(error(Loc{}, fmt::format(FMT_STRING("-o {}: the output must be a .npy (one tensor) or .npz (a tuple) "
                                                      "file"),
                                           o.output)));

  auto engine = Engine::create();
  if (!engine) return report(engine.error());
  if (o.device != "cpu" && o.device != "cuda-emulated")
    return report(error(Loc{}, fmt::format(FMT_STRING("unknown jit --device '{}'; expected cpu or cuda-emulated "
                                                      "(nxc jit runs on this machine's CPU)"),
                                           o.device)));
  (*engine)->setEmulateGpu(o.device == "cuda-emulated");
  if (o.threads > 1 && o.device != "cpu")
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
  if (endsWith(o.output, ".npy")) {
    if (result->isTuple)
      return report(error(Loc{}, "the result is a tuple; write it with -o FILE.npz (arrays arr_0, arr_1, ...)"));
    written = writeNpy(o.output, result->tensor);
  } else if (!result->keys.empty()) {
    // A map: entries named by each leaf's path ("w", "layer.0").
    std::vector<NpzEntry> entries;
    std::function<void(const HostValue &, const std::string &)> walk = [&](const HostValue &v, const std::string &path) {
      if (!v.isTuple) {
        entries.push_back(NpzEntry{path, v.tensor});
        return;
      }
      for (size_t i = 0; i < v.elems.size(); ++i)
        walk(v.elems[i], (path.empty() ? "" : path + ".") + (v.keys.empty() ? std::to_string(i) : ast::keyText(v.keys[i])));
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

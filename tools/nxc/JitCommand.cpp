//===- JitCommand.cpp - nxc jit -------------------------------------------===//
//
// Reads the arguments (.npy, .npz or literals), compiles the function for
// their types and shapes (or takes it from the cache), runs it, and prints the
// result as Nx does or writes it as .npy/.npz. With --bench it runs the
// function repeatedly and prints a Benchee-style table.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "nxc/Frontend/Parser.h"
#include "nxc/Jit/Engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace fs = std::filesystem;

namespace nxc::cli {
namespace {

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// One command-line argument: a .npy file, an .npz file (a tuple), or a literal.
Result<HostValue> readArgument(const std::string &text, size_t index) {
  if (endsWith(text, ".npy")) {
    NXC_TRY(t, readNpy(text));
    return HostValue::leaf(std::move(t));
  }
  if (endsWith(text, ".npz")) {
    NXC_TRY(ts, readNpz(text));
    std::vector<HostValue> elems;
    for (auto &t : ts) elems.push_back(HostValue::leaf(std::move(t)));
    return HostValue::tuple(std::move(elems));
  }
  auto src = std::make_shared<const SourceFile>(SourceFile{"argument " + std::to_string(index), text});
  NXC_TRY(t, parseLiteral(src));
  return HostValue::leaf(std::move(t));
}

/// Benchee's number formats: "56.16 K" for rates, "17.81 μs" for times.
std::string rate(double ips) {
  char buf[64];
  if (ips >= 1e9) std::snprintf(buf, sizeof buf, "%.2f G", ips / 1e9);
  else if (ips >= 1e6) std::snprintf(buf, sizeof buf, "%.2f M", ips / 1e6);
  else if (ips >= 1e3) std::snprintf(buf, sizeof buf, "%.2f K", ips / 1e3);
  else std::snprintf(buf, sizeof buf, "%.2f", ips);
  return buf;
}

std::string duration(double s) {
  char buf[64];
  if (s >= 1) std::snprintf(buf, sizeof buf, "%.2f s", s);
  else if (s >= 1e-3) std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
  else if (s >= 1e-6) std::snprintf(buf, sizeof buf, "%.2f \u03bcs", s * 1e6);
  else std::snprintf(buf, sizeof buf, "%.2f ns", s * 1e9);
  return buf;
}

/// Pads to `width` display columns (μ is one column but two bytes).
std::string pad(const std::string &s, size_t width, bool left) {
  size_t columns = 0;
  for (unsigned char c : s) columns += (c & 0xC0) != 0x80;
  std::string fill(width > columns ? width - columns : 0, ' ');
  return left ? s + fill : fill + s;
}

int bench(Engine &engine, const Prepared &p, const std::vector<const HostTensor *> &inputs, const JitOptions &o) {
  using clock = std::chrono::steady_clock;
  auto runFor = [&](double budget, std::vector<double> *samples) -> Status {
    auto start = clock::now();
    do {
      auto t0 = clock::now();
      NXC_TRY(r, engine.call(p, inputs));
      (void)r;
      double dt = std::chrono::duration<double>(clock::now() - t0).count();
      if (samples) samples->push_back(dt);
    } while (std::chrono::duration<double>(clock::now() - start).count() < budget);
    return okStatus();
  };
  if (auto st = runFor(o.warmupSeconds, nullptr); !st) return report(st.error());
  std::vector<double> samples;
  if (auto st = runFor(o.benchSeconds, &samples); !st) return report(st.error());
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0;
  for (double s : samples) sum += s;
  double mean = sum / samples.size(), var = 0;
  for (double s : samples) var += (s - mean) * (s - mean);
  double stddev = samples.size() > 1 ? std::sqrt(var / (samples.size() - 1)) : 0;
  auto percentile = [&](double q) {
    size_t i = (size_t)std::ceil(q * sorted.size()) - 1;
    return sorted[std::min(i, sorted.size() - 1)];
  };
  double median = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                     : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  char deviation[32];
  std::snprintf(deviation, sizeof deviation, "\u00b1%.2f%%", mean > 0 ? stddev / mean * 100 : 0.0);
  std::string name = p.signature;
  size_t width = std::max<size_t>(name.size(), 4) + 2;
  std::cout << pad("Name", width, true) << pad("ips", 11, false) << pad("average", 15, false)
            << pad("deviation", 11, false) << pad("median", 15, false) << pad("99th %", 15, false) << "\n";
  std::cout << pad(name, width, true) << pad(rate(1 / mean), 11, false) << pad(duration(mean), 15, false)
            << pad(deviation, 11, false) << pad(duration(median), 15, false) << pad(duration(percentile(0.99)), 15, false)
            << "\n\n";
  std::cout << "Runs: " << samples.size() << " in " << o.benchSeconds << " s after " << o.warmupSeconds
            << " s of warm-up (each run includes allocating the outputs)\n";
  if (p.diskCacheHit)
    std::cout << "Compile: none (disk cache hit), trace " << duration(p.traceSeconds) << ", load " << duration(p.loadSeconds) << "\n";
  else
    std::cout << "Compile: " << duration(p.compileSeconds) << " (trace " << duration(p.traceSeconds) << ", load "
              << duration(p.loadSeconds) << ")\n";
  return 0;
}

} // namespace

int runJit(const JitOptions &o) {
  if (endsWith(o.input, ".json"))
    return report(error(Loc{}, "JSON graph input ('" + o.input + "') is not supported yet; give a .nx defn source"));
  auto src = readSource(o.input);
  if (!src) return report(src.error());
  auto file = parseFile(*src);
  if (!file) return report(file.error());

  auto fnSrc = std::make_shared<const SourceFile>(SourceFile{"--fn", o.fn});
  Loc where{fnSrc, 1, 1};
  std::string module, name = o.fn;
  if (auto dot = o.fn.rfind('.'); dot != std::string::npos) {
    module = o.fn.substr(0, dot);
    name = o.fn.substr(dot + 1);
  }
  auto fn = findFunction(*file, module, name, where);
  if (!fn) return report(fn.error());

  std::vector<HostValue> args;
  for (size_t i = 0; i < o.args.size(); ++i) {
    auto a = readArgument(o.args[i], i + 1);
    if (!a) return report(a.error());
    args.push_back(std::move(*a));
  }
  auto grouped = groupArguments(**fn, std::move(args), where);
  if (!grouped) return report(grouped.error());

  if (!o.output.empty() && !endsWith(o.output, ".npy") && !endsWith(o.output, ".npz"))
    return report(error(Loc{}, "-o " + o.output + ": the output must be a .npy (one tensor) or .npz (a tuple) file"));

  auto engine = Engine::create();
  if (!engine) return report(engine.error());
  auto prepared = (*engine)->prepare(*file, module, name, *grouped, !o.noCache, where);
  if (!prepared) return report(prepared.error());
  if (o.verbose) {
    if (prepared->diskCacheHit)
      std::cerr << "nxc: " << prepared->signature << ": cache hit, " << prepared->cachePath << " (trace "
                << duration(prepared->traceSeconds) << ", load " << duration(prepared->loadSeconds) << ")\n";
    else
      std::cerr << "nxc: " << prepared->signature << ": compiled in " << duration(prepared->compileSeconds)
                << (o.noCache ? " (cache off)" : ", cached in " + prepared->cachePath) << "\n";
  }
  std::vector<const HostTensor *> inputs;
  for (auto &g : *grouped) flattenLeaves(g, inputs);
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

//===- JitBench.cpp - nxc jit --bench -------------------------------------===//
//
// Runs a compiled call repeatedly, its outputs and workspace allocated once
// as an AOT caller allocates them, and prints a Benchee-style table.
//
//===----------------------------------------------------------------------===//
#include "BenchFormat.h"
#include "Commands.h"

#include "nxc/Jit/Engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <random>

namespace nxc::cli {

int runJitBench(Engine &engine, const Prepared &p, const std::vector<const HostTensor *> &inputs, const JitOptions &o) {
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
        if (kept.size() < kKept)
          kept.push_back(dt);
        else if (uint64_t j = rng() % runs; j < kKept)
          kept[j] = dt;
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
  double median =
      sorted.size() % 2 ? sorted[sorted.size() / 2] : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
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

} // namespace nxc::cli

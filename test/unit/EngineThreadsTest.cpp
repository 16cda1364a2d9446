//===- EngineThreadsTest.cpp - one JIT engine used from several threads ---===//
//
// An embedding program may share one Engine between threads: eight threads
// trace, compile, load and call at once, two of them per signature (so the
// same object is compiled and loaded concurrently), with and without the disk
// cache; every result is checked against a double-precision reference. The
// JIT session alone is also made to link one object under many keys from
// eight threads at once.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "nxc/Jit/Engine.h"
#include "nxc/Pipeline/Compiler.h"

#include "llvm/Support/CommandLine.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>
#include <unistd.h>

using namespace nxc;

namespace {

const char *kProgram = "defmodule T do\n"
                       "  import Nx.Defn\n"
                       "  defn f(x), do: Nx.exp(x) * 2 + Nx.sum(x)\n"
                       "end\n";

/// Runs 8 threads x 10 calls; returns the failures, one line each.
std::vector<std::string> runThreads(Engine &engine, const ast::File &file, bool useDiskCache) {
  std::mutex mutex;
  std::vector<std::string> failures;
  auto fail = [&](std::string what) {
    std::lock_guard<std::mutex> lock(mutex);
    failures.push_back(std::move(what));
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      int64_t n = 3 + t % 4;
      HostTensor x = HostTensor::zeros(ElemType::f32(), {n});
      std::vector<float> values(n);
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        values[i] = 0.25f * (float)(i + t);
        sum += values[i];
      }
      std::memcpy(x.data.data(), values.data(), n * sizeof(float));
      std::vector<HostValue> args{HostValue::leaf(x)};
      for (int call = 0; call < 10; ++call) {
        auto prepared = engine.prepare(file, "T", "f", args, useDiskCache, Loc{});
        if (!prepared) return fail("prepare: " + prepared.error().render());
        auto result = engine.call(*prepared, {&x});
        if (!result) return fail("call: " + result.error().render());
        const float *y = reinterpret_cast<const float *>(result->tensor.data.data());
        for (int64_t i = 0; i < n; ++i) {
          double want = 2 * std::exp((double)values[i]) + sum;
          if (std::fabs(y[i] - want) > 1e-6 * std::fabs(want))
            return fail(fmt::format(FMT_STRING("thread {} call {}: y[{}] = {}, expected {}"), t, call, i, y[i], want));
        }
      }
    });
  for (auto &th : threads) th.join();
  return failures;
}

} // namespace

TEST_CASE("one engine traces, compiles, loads and calls from 8 threads at once") {
  auto file = nxc::test::parseString(kProgram);
  REQUIRE(file.ok());

  SUBCASE("in-memory cache only") {
    auto engine = Engine::create();
    REQUIRE(engine.ok());
    auto failures = runThreads(**engine, *file, false);
    CHECK_MESSAGE(failures.empty(), (failures.empty() ? "" : failures[0]));
  }

  SUBCASE("with the disk cache, in a fresh directory") {
    std::string dir = (std::filesystem::temp_directory_path() / ("nxc-unit-cache-" + std::to_string(getpid()))).string();
    std::filesystem::remove_all(dir);
    const char *old = std::getenv("XDG_CACHE_HOME");
    std::string saved = old ? old : "";
    setenv("XDG_CACHE_HOME", dir.c_str(), 1); // before any thread starts
    for (int round = 0; round < 2; ++round) { // the first round stores, the second reads
      auto engine = Engine::create();
      REQUIRE(engine.ok());
      auto failures = runThreads(**engine, *file, true);
      CHECK_MESSAGE(failures.empty(), (failures.empty() ? "" : failures[0]));
    }
    if (old) setenv("XDG_CACHE_HOME", saved.c_str(), 1);
    else unsetenv("XDG_CACHE_HOME");
    std::filesystem::remove_all(dir);
  }
}

TEST_CASE("one JIT session links objects from 8 threads at once") {
  auto graph = nxc::test::compile(kProgram, "T.f(f32[4])");
  REQUIRE(graph.ok());
  TargetOptions target;
  target.packedEntries = true;
  auto out = nxc::compile({EntryPoint{"nxc_unit_f", &*graph}}, target, Stage::Object);
  REQUIRE(out.ok());
  auto session = JitSession::create();
  REQUIRE(session.ok());
  std::mutex mutex;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 40; ++k) {
        // Half the keys are shared between two threads: loaded once, found by the other.
        std::string key = fmt::format(FMT_STRING("k{}-{}"), t / 2 * 2 + (k % 2 ? t % 2 : 0), k);
        auto fn = (*session)->load(key, out->object, "nxc_unit_f", 0);
        float x[4] = {0, 1, 2, 3}, y[4] = {};
        void *argv[] = {x, y, nullptr};
        if (!fn || fn->packed(argv) != 0 || std::fabs(y[3] - (2 * std::exp(3.0) + 6)) > 1e-4) {
          std::lock_guard<std::mutex> lock(mutex);
          failures.push_back(fn ? fmt::format(FMT_STRING("{}: y[3] = {}"), key, y[3]) : fn.error().render());
          return;
        }
      }
    });
  for (auto &th : threads) th.join();
  CHECK_MESSAGE(failures.empty(), (failures.empty() ? "" : failures[0]));
}

TEST_CASE("compiling bounds the SLP vectorizer's scheduling regions") {
  // LLVM's option by name: a rename in a new LLVM would otherwise leave the
  // bound (lib/Target/ObjectEmitter.cpp) silently unset.
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("slp-schedule-budget");
  REQUIRE(it != options.end());
  auto file = nxc::test::parseString(kProgram);
  REQUIRE(file.ok());
  auto engine = Engine::create();
  REQUIRE(engine.ok());
  HostTensor x = HostTensor::zeros(ElemType::f32(), {4});
  std::vector<HostValue> args{HostValue::leaf(x)};
  auto prepared = (*engine)->prepare(*file, "T", "f", args, false, Loc{});
  REQUIRE(prepared.ok());
  CHECK(static_cast<llvm::cl::opt<int> *>(it->second)->getValue() == 4096);
}

//===- AotCommand.cpp - nxc aot -------------------------------------------===//
//
// Reads the input, plans the module (planModule: the checks, the traced and
// named entry points, the target) and either prints one stage of it
// (--emit) or builds its files (writeModule). How a module is built lives in
// lib/Build (include/nxc/Build/ModuleBuild.h).
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "nxc/Build/ModuleBuild.h"
#include "nxc/Graph/GraphJson.h"
#include "nxc/Tensor/Constants.h"

#include <fmt/format.h>

#include <iostream>
#include <map>

namespace fs = std::filesystem;

namespace nxc::cli {
namespace {

/// --emit json: the graphs, named by their C names without the module
/// prefix, on stdout or in the -o file (large constants in an .npz beside it).
int emitGraphJson(const ModulePlan &plan, const AotOptions &o) {
  std::vector<Graph> renamed;
  for (auto &e : plan.entries) {
    renamed.push_back(e.graph);
    renamed.back().function = e.symbol.substr(plan.module.size() + 1);
  }
  std::vector<const Graph *> graphs;
  for (auto &g : renamed) graphs.push_back(&g);
  std::string constants;
  fs::path out(o.outDir);
  if (o.outGiven) {
    if (out.extension() != ".json")
      return report(
          error(Loc{}, fmt::format(FMT_STRING("with --emit json, -o names the graph file to write (FILE.json), "
                                              "got '{}'"),
                                   o.outDir)));
    constants = out.stem().string() + ".npz";
  }
  auto written = writeGraphJson(graphs, constants);
  if (!written) return report(written.error());
  if (!o.outGiven) {
    std::cout << written->json;
    return 0;
  }
  if (auto st = writeFile(out, written->json); !st) return report(st.error());
  if (!written->constants.empty())
    if (auto st = writeNpzEntries((out.parent_path() / constants).string(), written->constants); !st)
      return report(st.error());
  return 0;
}

/// --emit STAGE: the plan's module at one stage, on stdout.
int emitStage(const ModulePlan &plan, const AotOptions &o) {
  static const std::map<std::string, Stage> stages = {
      {"nx", Stage::Nx},       {"linalg", Stage::Linalg}, {"bufferized", Stage::Bufferized},
      {"gpu", Stage::Gpu},     {"ptx", Stage::Ptx},       {"llvm-dialect", Stage::LLVMDialect},
      {"llvm", Stage::LLVMIR}, {"asm", Stage::Asm}};
  if (o.emit == "expr") {
    for (auto &e : plan.entries) std::cout << e.graph.print();
    return 0;
  }
  if (o.emit == "json") return emitGraphJson(plan, o);
  auto it = stages.find(o.emit);
  if (it != stages.end() &&
      ((!plan.cuda && it->second == Stage::Ptx) || (!plan.cuda && !plan.emulated && it->second == Stage::Gpu)))
    return report(error(Loc{}, fmt::format(FMT_STRING("--emit {} needs --device cuda"), o.emit)));
  if (it == stages.end())
    return report(
        error(Loc{}, fmt::format(FMT_STRING("unknown --emit stage '{}'; expected ast, expr, json, nx, linalg, "
                                            "bufferized, gpu, ptx, llvm-dialect, llvm or asm"),
                                 o.emit)));
  auto out = compile(plan.points(), plan.target, it->second);
  if (!out) return report(out.error());
  std::cout << out->text;
  return 0;
}

} // namespace

int runAot(const AotOptions &o) {
  bool graphInput = fs::path(o.input).extension() == ".json";
  if (graphInput && o.emit == "ast")
    return report(error(Loc{}, "--emit ast needs defn source; a graph file has no syntax tree"));
  auto input = readInput(o.input, o.with);
  if (!input) return report(input.error());
  if (o.emit == "ast") {
    std::cout << ast::print(*input->source);
    return 0;
  }
  ModuleOptions options;
  options.fns = o.fns;
  options.name = o.name;
  options.triple = o.triple;
  options.cpu = o.cpu;
  options.features = o.features;
  options.optLevel = o.optLevel;
  options.stackWorkspaceLimit = o.stackWorkspaceLimit;
  options.device = o.device;
  options.gpu = o.gpu;
  options.cudaPath = o.cudaPath;
  options.threads = o.threads;
  options.minParallelWork = o.minParallelWork;
  options.packedEntries = o.packedEntries;
  options.nifModule = o.nifModule;
  options.writesFiles = o.emit.empty();
  ModuleInput in{o.input, input->source ? &*input->source : nullptr, input->graph ? &*input->graph : nullptr,
                 input->contents};
  auto plan = planModule(in, options);
  if (!plan) return report(plan.error());
  for (auto &w : plan->warnings) std::cerr << "nxc: warning: " << w << "\n";
  if (!o.emit.empty()) return emitStage(*plan, o);
  std::vector<std::string> warnings;
  Status written = writeModule(*plan, in, options, o.outDir, warnings);
  for (auto &w : warnings) std::cerr << "nxc: warning: " << w << "\n";
  return written ? 0 : report(written.error());
}

} // namespace nxc::cli

//===- ModuleBuild.h - building a module's artifacts -------------*- C++ -*-===//
//
// What `nxc aot` does, as a library: the entry points of a module are traced
// from defn source (or taken from a graph file) and named, its target is
// checked and planned (planModule), then compiled and written out as the
// header, the manifest, the static and shared libraries and the runtime,
// all or none (writeModule). The CLI parses options into ModuleOptions and
// prints stages of a plan for --emit; nothing else decides how a module is
// built.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_BUILD_MODULEBUILD_H
#define NXC_BUILD_MODULEBUILD_H

#include "nxc/Frontend/AST.h"
#include "nxc/Frontend/Diagnostics.h"
#include "nxc/Graph/GraphJson.h"
#include "nxc/Pipeline/Compiler.h"
#include "nxc/Sema/Signature.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nxc {

/// How to build a module: `nxc aot`'s options besides its input and output.
struct ModuleOptions {
  std::vector<std::string> fns; ///< --fn texts
  std::string name;             ///< --name; empty: the input's stem
  std::string triple, cpu, features;
  int optLevel = 3;
  int64_t stackWorkspaceLimit = -1; ///< -1: the target's default
  std::string device = "cpu";       ///< cpu, cuda, cuda-emulated
  std::string gpu, cudaPath;
  int threads = 1;
  int64_t minParallelWork = -1; ///< -1: the default
  bool packedEntries = false;
  std::string nifModule; ///< --nif: the Erlang module of a BEAM NIF
  /// Whether files will be written (not --emit): some module names are
  /// then worth a warning.
  bool writesFiles = true;
};

/// What a module is built from: defn source or a graph file.
struct ModuleInput {
  std::string path; ///< the input's path (its stem names the module)
  const ast::File *source = nullptr;
  const GraphFile *graph = nullptr;
  std::string contents; ///< every byte read, for the manifest's digest
};

/// One entry point: its --fn, the graph to compile and its C name.
struct ModuleEntry {
  Signature sig;
  std::string sigText;
  Graph graph;
  std::string symbol;
};

/// A module checked and planned, ready to compile.
struct ModulePlan {
  std::string module;
  std::vector<ModuleEntry> entries;
  TargetOptions target;
  bool cuda = false;
  bool emulated = false;
  std::vector<std::string> warnings; ///< for the user, once
  /// The entry points as compile() takes them (pointing into `entries`).
  std::vector<EntryPoint> points() const;
};

/// Checks the options, traces every --fn (or takes the graph file's
/// functions), names the C functions and plans the target.
Result<ModulePlan> planModule(const ModuleInput &input, const ModuleOptions &options);

/// Compiles the plan and writes its files into `outDir` (created if
/// needed): all of them, or none when anything fails. Compiler warnings are
/// appended to `warnings`.
Status writeModule(const ModulePlan &plan, const ModuleInput &input, const ModuleOptions &options,
                   const std::string &outDir, std::vector<std::string> &warnings);

} // namespace nxc

#endif // NXC_BUILD_MODULEBUILD_H

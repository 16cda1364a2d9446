//===- Commands.h - the nxc subcommands -------------------------*- C++ -*-===//
//
// Each subcommand lives in its own file; this header holds their options and
// the few helpers they share (reading sources, writing files, reporting).
//
//===----------------------------------------------------------------------===//
#ifndef NXC_TOOLS_COMMANDS_H
#define NXC_TOOLS_COMMANDS_H

#include "nxc/Frontend/AST.h"
#include "nxc/Frontend/Diagnostics.h"
#include "nxc/Graph/GraphJson.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace nxc {
class Engine;
struct Prepared;
struct HostTensor;
} // namespace nxc

namespace nxc::cli {

constexpr int kUserError = 1;
constexpr int kInternalError = 2;

/// Prints a diagnostic once and returns the exit status it calls for.
int report(const Diag &d);
Result<std::shared_ptr<const SourceFile>> readSource(const std::string &path);
Status writeFile(const std::filesystem::path &path, const std::string &bytes);

/// What aot and jit compile: defn source (FILE.nx, parsed) or a graph file
/// (FILE.json, read), and everything it was read from, for digests.
struct Input {
  std::optional<ast::File> source;
  std::optional<GraphFile> graph;
  std::string contents;
};
/// `path` (a file, or a directory of .ex/.exs/.nx files) and the source
/// files or directories `with` names, read as one program.
Result<Input> readInput(const std::string &path, const std::vector<std::string> &with = {});

struct AotOptions {
  std::string input;
  std::vector<std::string> with;
  std::vector<std::string> fns;
  std::string outDir = ".";
  bool outGiven = false; ///< -o was given (with --emit json it names the graph file)
  std::string name;
  std::string triple;
  std::string cpu;
  std::string features;
  std::string device = "cpu";
  std::string gpu;
  std::string cudaPath;
  std::string emit;
  int optLevel = 3;
  int64_t stackWorkspaceLimit = -1;
  int threads = 1;
  int64_t minParallelWork = -1;
  bool packedEntries = false;
  std::string nifModule;
};
int runAot(const AotOptions &o);

struct JitOptions {
  std::string input;
  std::vector<std::string> with;
  std::string fn;
  std::vector<std::string> args;
  std::string output;
  bool bench = false;
  double warmupSeconds = 0.5;
  double benchSeconds = 2.0;
  bool noCache = false;
  bool verbose = false;
  std::string device = "cpu";
  int threads = 1;
};
int runJit(const JitOptions &o);
/// --bench: runs the prepared call repeatedly and prints a Benchee-style table.
int runJitBench(Engine &engine, const Prepared &p, const std::vector<const HostTensor *> &inputs,
                const JitOptions &o);

struct ReplOptions {
  std::string input;
  bool noCache = false;
};
int runRepl(const ReplOptions &o);

/// Declare each subcommand, its options and its help (CommandLine.cpp).
CLI::App *addAotCommand(CLI::App &app, AotOptions &o);
CLI::App *addJitCommand(CLI::App &app, JitOptions &o);
CLI::App *addReplCommand(CLI::App &app, ReplOptions &o);

} // namespace nxc::cli

#endif // NXC_TOOLS_COMMANDS_H

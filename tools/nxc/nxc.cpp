//===- nxc.cpp - the nxc command line -------------------------------------===//
//
// A thin driver: parses options, reads files, and calls into the compiler
// library. Every user error is printed once, here, as FILE:LINE:COL: error:
// with the source line and a caret, and exits with status 1. Internal errors
// exit with status 2.
//
//===----------------------------------------------------------------------===//
#include "nxc/Frontend/Parser.h"
#include "nxc/Pipeline/Compiler.h"
#include "nxc/Sema/Sema.h"
#include "nxc/Target/Artifacts.h"

#include <CLI/CLI.hpp>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace fs = std::filesystem;
using namespace nxc;

namespace {

constexpr int kUserError = 1;
constexpr int kInternalError = 2;

int report(const Diag &d) {
  std::cerr << d.render();
  return d.message.rfind("internal compiler error", 0) == 0 ? kInternalError : kUserError;
}

Result<std::shared_ptr<const SourceFile>> readSource(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(Loc{}, "cannot read '" + path + "': " + std::strerror(errno));
  if (fs::is_directory(path)) return error(Loc{}, "cannot read '" + path + "': it is a directory");
  std::ostringstream ss;
  ss << in.rdbuf();
  return std::make_shared<const SourceFile>(SourceFile{path, ss.str()});
}

Status writeFile(const fs::path &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return error(Loc{}, "cannot write '" + path.string() + "': " + std::strerror(errno));
  out.write(bytes.data(), (std::streamsize)bytes.size());
  if (!out) return error(Loc{}, "cannot write '" + path.string() + "': " + std::strerror(errno));
  return okStatus();
}

bool validCIdentifier(const std::string &s) {
  if (s.empty() || std::isdigit((unsigned char)s[0])) return false;
  for (char c : s)
    if (!std::isalnum((unsigned char)c) && c != '_') return false;
  return true;
}

std::string sanitizeIdentifier(std::string s) {
  for (auto &c : s)
    if (!std::isalnum((unsigned char)c) && c != '_') c = '_';
  if (s.empty() || std::isdigit((unsigned char)s[0])) s = "m_" + s;
  return s;
}

struct AotOptions {
  std::string input;
  std::vector<std::string> fns;
  std::string outDir = ".";
  std::string name;
  std::string triple;
  std::string cpu;
  std::string features;
  std::string device = "cpu";
  std::string emit;
  int optLevel = 3;
  int64_t stackWorkspaceLimit = -1;
};

struct TracedEntry {
  Signature sig;
  std::string sigText;
  Graph graph;
  std::string symbol;
};

int runAot(const AotOptions &o) {
  fs::path inputPath(o.input);
  if (inputPath.extension() == ".json")
    return report(error(Loc{}, "JSON graph input ('" + o.input + "') is not supported yet; give a .nx defn source"));
  auto src = readSource(o.input);
  if (!src) return report(src.error());
  auto file = parseFile(*src);
  if (!file) return report(file.error());
  if (o.emit == "ast") {
    std::cout << ast::print(*file);
    return 0;
  }
  if (o.device != "cpu") return report(error(Loc{}, "--device " + o.device + " is not supported yet (only cpu)"));
  if (o.fns.empty())
    return report(error(Loc{}, "no function to compile: give at least one --fn, as in --fn 'softmax(f32[100])'"));

  std::string module = o.name.empty() ? sanitizeIdentifier(inputPath.stem().string()) : o.name;
  if (!validCIdentifier(module)) return report(error(Loc{}, "--name '" + module + "' is not a valid C identifier"));

  // Trace every signature.
  std::vector<TracedEntry> entries;
  for (size_t i = 0; i < o.fns.size(); ++i) {
    auto fnSrc = std::make_shared<const SourceFile>(SourceFile{"--fn#" + std::to_string(i + 1), o.fns[i]});
    auto sig = parseSignature(fnSrc);
    if (!sig) return report(sig.error());
    auto graph = trace(*file, *sig);
    if (!graph) return report(graph.error());
    entries.push_back(TracedEntry{*sig, o.fns[i], std::move(*graph), ""});
  }
  // C names: MODULE_FUNCTION, or MODULE_FUNCTION_<signature> when a function
  // is compiled at several signatures, or MODULE_NAME for `NAME=fun(...)`.
  std::map<std::string, int> count;
  for (auto &e : entries)
    if (e.sig.cname.empty()) ++count[e.sig.function];
  std::map<std::string, size_t> taken;
  for (size_t i = 0; i < entries.size(); ++i) {
    auto &e = entries[i];
    std::string base = e.sig.cname.empty() ? sanitizeIdentifier(e.sig.function) : e.sig.cname;
    e.symbol = module + "_" + base;
    if (e.sig.cname.empty() && count[e.sig.function] > 1) e.symbol += "_" + e.sig.mangledArgs();
    if (auto it = taken.find(e.symbol); it != taken.end())
      return report(error(e.sig.loc, "two --fn produce the C function '" + e.symbol + "' (--fn #" +
                                         std::to_string(it->second + 1) + " and #" + std::to_string(i + 1) +
                                         "); name one explicitly, as in --fn 'other=" + e.sigText + "'"));
    taken[e.symbol] = i;
  }

  std::vector<EntryPoint> points;
  std::vector<EntryDescription> descs;
  for (auto &e : entries) {
    points.push_back(EntryPoint{e.symbol, &e.graph});
    descs.push_back(EntryDescription{e.symbol, e.sig.function, e.sigText, &e.graph});
  }
  TargetOptions target{o.triple, o.cpu, o.features, o.optLevel, o.stackWorkspaceLimit};

  if (!o.emit.empty()) {
    static const std::map<std::string, Stage> stages = {{"nx", Stage::Nx},
                                                         {"linalg", Stage::Linalg},
                                                         {"llvm-dialect", Stage::LLVMDialect},
                                                         {"llvm", Stage::LLVMIR},
                                                         {"asm", Stage::Asm}};
    if (o.emit == "expr") {
      for (auto &e : entries) std::cout << e.graph.print();
      return 0;
    }
    auto it = stages.find(o.emit);
    if (it == stages.end())
      return report(error(Loc{}, "unknown --emit stage '" + o.emit + "'; expected ast, expr, nx, linalg, llvm-dialect, llvm or asm"));
    auto out = compile(points, target, it->second);
    if (!out) return report(out.error());
    std::cout << out->text;
    return 0;
  }

  auto out = compile(points, target, Stage::Object);
  if (!out) return report(out.error());
  for (size_t i = 0; i < descs.size(); ++i) {
    descs[i].workspaceSize = out->entries[i].workspaceSize;
    descs[i].plainVariant = out->entries[i].plainVariant;
  }
  auto runtime = buildRuntimeObject(o.triple, o.cpu, o.features);
  if (!runtime) return report(runtime.error());

  fs::path dir(o.outDir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return report(error(Loc{}, "cannot create output directory '" + o.outDir + "': " + ec.message()));
  std::vector<std::string> libmSymbols, libraries;
  for (auto &sym : undefinedSymbols(out->object))
    if (isLibmFunction(sym)) libmSymbols.push_back(sym);
  if (!libmSymbols.empty()) libraries.push_back("m");
  fs::path obj = dir / (module + ".o");
  for (auto st : {writeFile(obj, out->object),
                  writeStaticArchive({{module + ".o", out->object}}, (dir / ("lib" + module + ".a")).string()),
                  writeStaticArchive({{"nxrt.o", *runtime}}, (dir / "libnxrt.a").string()),
                  writeFile(dir / (module + ".h"), writeHeader(module, descs, out->triple, inputPath.filename().string(), libraries, out->bareMetal)),
                  writeFile(dir / (module + ".json"), writeManifest(module, descs, out->triple, out->cpu, libraries)),
                  writeFile(dir / "nxrt.h", runtimeHeader()), writeFile(dir / "nxrt.c", runtimeSource())})
    if (!st) return report(st.error());
  // Bare-metal targets have no dynamic loader: static libraries only.
  if (!out->bareMetal) {
    std::string so = "lib" + module + ".so";
    auto linked = linkSharedObject(obj.string(), (dir / so).string(), so, out->triple, libmSymbols);
    if (!linked) {
      fs::remove(obj, ec);
      return report(linked.error());
    }
  }
  fs::remove(obj, ec);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"nxc - an ahead-of-time compiler for Nx numerical definitions (defn)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("nxc ") + NXC_VERSION);
  app.footer("Run 'nxc aot --help' for the ahead-of-time compiler.");

  AotOptions aot;
  CLI::App *aotCmd = app.add_subcommand("aot", "Compile defn functions to a C header, a shared object and static libraries");
  aotCmd->add_option("input", aot.input, "A .nx file holding defmodule ... defn ... end")->required();
  aotCmd->add_option("--fn", aot.fns,
                     "A function and its argument templates: 'softmax(f32[100])', 'predict({f32[784,128], f32[128]}, "
                     "f32[30,784])', 'fast=softmax(f32[100])' to choose the C name. Repeatable.");
  aotCmd->add_option("-o,--output", aot.outDir, "Output directory (created if needed)")->default_str(".");
  aotCmd->add_option("--name", aot.name, "Module name: prefix of C names and file names (default: the input's stem)");
  aotCmd->add_option("--target", aot.triple, "LLVM target triple (default: the host)");
  aotCmd->add_option("--cpu", aot.cpu, "Target CPU (default: the host CPU for the host, generic otherwise; 'native' allowed)");
  aotCmd->add_option("--features", aot.features, "Extra target features, as in '+avx2,-avx512f'");
  aotCmd->add_option("--device", aot.device, "cpu (default)")->default_str("cpu");
  aotCmd->add_option("--emit", aot.emit,
                     "Print one stage to stdout instead of writing files: ast, expr, nx, linalg, llvm-dialect, llvm, asm");
  aotCmd->add_option("--stack-workspace-limit", aot.stackWorkspaceLimit,
                     "Largest workspace (bytes) FN(...) may keep on the stack; larger ones only get "
                     "FN_with_workspace (default: 65536 with an OS, 0 on bare metal)");
  aotCmd->add_option("-O", aot.optLevel, "Optimization level 0-3 (default 3)")->check(CLI::Range(0, 3));
  aotCmd->footer(
      "Writes OUTDIR/MODULE.h, OUTDIR/libMODULE.so, OUTDIR/libMODULE.a, OUTDIR/libnxrt.a, OUTDIR/MODULE.json\n"
      "(and the runtime's nxrt.h / nxrt.c).\n\n"
      "Templates: f32[100] (rank 1), f32[30,784] or f32[30][784] (rank 2), s32[] (scalar),\n"
      "{f32[2], f32[2]} (tuple), f32[batch: 30, 10] (named axes). Types: s8 s16 s32 s64 u8 u16 u32 u64\n"
      "f16 bf16 f32 f64 pred.\n\n"
      "C names: MODULE_FUNCTION; a function compiled at several signatures gets MODULE_FUNCTION_<sig>,\n"
      "e.g. mymod_softmax_f32_1000 and mymod_softmax_s32_5; 'fast=softmax(...)' gives MODULE_fast.\n\n"
      "Example:\n"
      "  nxc aot softmax.nx --fn 'softmax(f32[100])' --name mymod -o out/\n"
      "  cc app.c -Iout -Lout -lmymod -o app");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kUserError;
  }
  if (aotCmd->parsed()) return runAot(aot);
  return 0;
}

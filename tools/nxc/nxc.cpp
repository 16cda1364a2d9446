//===- nxc.cpp - the nxc command line -------------------------------------===//
//
// A thin driver: declares the subcommands and their options, then hands over
// to AotCommand.cpp, JitCommand.cpp or ReplCommand.cpp. Every user error is
// printed once, at that boundary, as FILE:LINE:COL: error: with the source
// line and a caret, and exits with status 1. Internal errors exit with 2.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "llvm/Support/thread.h"
#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <cctype>
#include <iostream>

using namespace nxc;
using namespace nxc::cli;

/// The stack of the thread nxc works on (reserved, touched only as used).
constexpr unsigned kCompilerStackBytes = 512u << 20;

int main(int argc, char **argv) {
  CLI::App app{"nxc - an ahead-of-time compiler for Nx numerical definitions (defn)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("nxc ") + NXC_VERSION);
  app.footer("Run 'nxc aot --help', 'nxc jit --help' or 'nxc repl --help' for each command.");
  // Command-line errors read as every other error of nxc does.
  app.failure_message([](const CLI::App *, const CLI::Error &e) {
    return fmt::format(FMT_STRING("nxc: error: {}\nRun 'nxc --help' or 'nxc COMMAND --help' for the options.\n"),
                       e.what());
  });

  AotOptions aot;
  JitOptions jit;
  ReplOptions repl;
  CLI::App *aotCmd = addAotCommand(app, aot);
  CLI::App *jitCmd = addJitCommand(app, jit);
  CLI::App *replCmd = addReplCommand(app, repl);

  // Everything after `--` is a jit argument, taken verbatim (e.g. -1).
  std::vector<std::string> verbatim;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--") {
      for (int j = i + 1; j < argc; ++j) verbatim.push_back(argv[j]);
      argc = i;
      break;
    }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kUserError;
  }
  auto dispatch = [&]() -> int {
    if (!verbatim.empty() && !jitCmd->parsed()) {
      std::cerr << "nxc: error: arguments after -- are only for nxc jit\n";
      return kUserError;
    }
    if (aotCmd->parsed()) {
      aot.outGiven = aotCmd->get_option("--output")->count() > 0;
      return runAot(aot);
    }
    if (jitCmd->parsed()) {
      jit.args = jitCmd->remaining();
      jit.args.insert(jit.args.end(), verbatim.begin(), verbatim.end());
      for (auto &a : jit.args)
        if (a.size() > 1 && a[0] == '-' && !std::isdigit((unsigned char)a[1]) && a[1] != '.' && a != "-Inf") {
          std::cerr << fmt::format(
              FMT_STRING("nxc: error: unknown option {} for nxc jit (put negative literals after --)\n"), a);
          return kUserError;
        }
      return runJit(jit);
    }
    if (!verbatim.empty()) {
      std::cerr << "nxc: error: arguments after -- are only for nxc jit\n";
      return kUserError;
    }
    if (replCmd->parsed()) return runRepl(repl);
    return 0;
  };
  // The compiler recurses over the program (parsing, tracing, printing):
  // it runs on a thread with a large stack, so that the explicit nesting
  // limits (a located error) are reached long before the stack's end. Out
  // of memory is an error, not an abort.
  int rc = 0;
  llvm::thread worker(std::optional<unsigned>(kCompilerStackBytes), [&] {
    try {
      rc = dispatch();
    } catch (const std::bad_alloc &) {
      std::cerr << "nxc: error: out of memory (the input or a tensor in it is too large for this machine)\n";
      rc = kUserError;
    }
  });
  worker.join();
  return rc;
}

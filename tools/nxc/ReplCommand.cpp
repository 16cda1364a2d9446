//===- ReplCommand.cpp - nxc repl -----------------------------------------===//
//
// Reads inputs (with line editing and history through libedit when stdin is
// a terminal, plain lines otherwise), gathers multi-line definitions, and
// prints each result or error; an error never ends the session. When stdin
// is not a terminal (a script), the exit status is 1 if any input failed.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "nxc/Jit/Repl.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <unistd.h>

#include <editline/readline.h>

namespace nxc::cli {
namespace {

const char *kHelp =
    "Each input is one of:\n"
    "  an expression     softmax(Nx.tensor([1.0, 2.0, 3.0]))   MyDefn.softmax(x)   Nx.iota({2, 3})\n"
    "  an assignment     x = Nx.tensor([[1, 2], [3, 4]])        {a, b} = f(x)\n"
    "  a definition      defn double(x), do: x * 2              (do ... end may span lines)\n"
    "  a command         :load FILE   :vars   :help   :quit\n"
    "Functions of loaded files are callable by name or as Module.name.\n";

/// One line from the terminal (libedit) or from a pipe; false at end of input.
bool readLine(bool interactive, const char *prompt, std::string &line) {
  if (interactive) {
    char *l = readline(prompt);
    if (!l) return false;
    line = l;
    if (!line.empty()) add_history(l);
    std::free(l);
    return true;
  }
  return static_cast<bool>(std::getline(std::cin, line));
}

} // namespace

int runRepl(const ReplOptions &o) {
  auto session = ReplSession::create(!o.noCache);
  if (!session) return report(session.error());
  if (!o.input.empty())
    if (auto st = (*session)->load(o.input); !st) return report(st.error());
  bool interactive = isatty(STDIN_FILENO);
  std::string history = std::getenv("HOME") ? std::string(std::getenv("HOME")) + "/.nxc_history" : "";
  if (interactive) {
    if (!history.empty()) read_history(history.c_str());
    std::cout << "nxc repl: Nx defn expressions, compiled and run. :help for help, :quit to leave.\n";
  }
  std::string line;
  bool failed = false;
  while (readLine(interactive, "nxc> ", line)) {
    std::string input = line;
    while (ReplSession::needsMoreInput(input) && readLine(interactive, "...> ", line)) input += "\n" + line;
    size_t first = input.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) continue;
    std::string command = input.substr(first);
    while (!command.empty() && std::isspace((unsigned char)command.back())) command.pop_back();
    if (command == ":quit" || command == ":q") break;
    if (command == ":help" || command == ":h") {
      std::cout << kHelp;
      continue;
    }
    if (command == ":vars") {
      std::cout << (*session)->describeBindings();
      continue;
    }
    if (command.rfind(":load ", 0) == 0) {
      std::string path = command.substr(6);
      path.erase(0, path.find_first_not_of(' '));
      if (auto st = (*session)->load(path); !st) {
        std::cerr << st.error().render();
        failed = true;
      } else std::cout << fmt::format(FMT_STRING("loaded {}\n"), path);
      continue;
    }
    if (command[0] == ':') {
      std::cerr << fmt::format(FMT_STRING("nxc: error: unknown repl command {}; :help lists the commands\n"), command);
      failed = true;
      continue;
    }
    auto out = (*session)->eval(input);
    if (!out) {
      std::cerr << out.error().render();
      failed = true;
    } else {
      std::cout << *out;
    }
    std::cout.flush();
  }
  if (interactive && !history.empty()) write_history(history.c_str());
  // A script learns from the exit status whether every input succeeded; an
  // interactive session has already shown each error.
  return failed && !interactive ? 1 : 0;
}

} // namespace nxc::cli

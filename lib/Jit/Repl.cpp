//===- Repl.cpp - the state of an nxc repl session ------------------------===//
#include "nxc/Jit/Repl.h"
#include "nxc/Frontend/ElixirFloat.h"
#include "nxc/Frontend/SourceFiles.h"
#include "nxc/Sema/Sema.h"
#include "nxc/Frontend/Lexer.h"
#include "nxc/Frontend/Parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include <cstring>
#include <fstream>
#include <functional>
#include <cerrno>
#include <filesystem>
#include <iterator>
#include <set>

namespace nxc {
namespace {

int countLines(const std::string &s) {
  int n = 1;
  for (char c : s) n += c == '\n';
  return n;
}

/// The session variables (of `bound`) an expression mentions.
template <typename Bound>
void collectVariables(const ast::Expr &e, const Bound &bound, std::set<std::string> &out) {
  if (e.kind == ast::ExprKind::Var && bound.count(e.name)) out.insert(e.name);
  for (auto &c : e.children) collectVariables(*c, bound, out);
}

/// The names the generated program gives function binding `k`: the helper
/// that makes it, and the variable that holds it.
std::string helperName(size_t k) { return fmt::format(FMT_STRING("__repl_fn_{}"), k); }
std::string valueName(size_t k) { return fmt::format(FMT_STRING("__repl_fv_{}"), k); }
std::string captureName(size_t k, size_t i) { return fmt::format(FMT_STRING("__repl_cap_{}_{}"), k, i); }

bool holdsTerm(const HostValue &v) {
  if (!v.term.empty()) return true;
  return std::any_of(v.elems.begin(), v.elems.end(), holdsTerm);
}

/// Elixir that rebuilds a binding holding terms (a transform's number, a
/// struct's keep fields) from `expr`, the parameter that passed it with u8
/// scalars in their place: the term itself, or a map updated with them.
/// (Terms inside tuples stay placeholders.)
std::string rebuilt(const HostValue &v, const std::string &expr) {
  if (!v.term.empty()) return v.term[0] == '#' ? expr : v.term;
  if (!v.isTuple || v.keys.empty() || !holdsTerm(v)) return expr;
  std::vector<std::string> updates;
  for (size_t k = 0; k < v.elems.size(); ++k) {
    if (!holdsTerm(v.elems[k])) continue;
    const std::string &key = v.keys[k];
    std::string literal = ast::isStringKey(key) ? "\"" + ast::keyText(key) + "\"" : ":" + key;
    updates.push_back(literal + " => " +
                      rebuilt(v.elems[k], fmt::format(FMT_STRING("Map.fetch!({}, {})"), expr, literal)));
  }
  return fmt::format(FMT_STRING("%{{{} | {}}}"), expr, fmt::join(updates, ", "));
}

/// A binding as :vars lists it: tensors by their type, terms as Elixir
/// prints them.
std::string describeValue(const HostValue &v) {
  if (!holdsTerm(v)) return templateOf(v).str();
  if (!v.term.empty()) return v.term;
  std::vector<std::string> items;
  for (size_t k = 0; k < v.elems.size(); ++k)
    items.push_back(v.keys.empty() ? describeValue(v.elems[k])
                                   : ast::mapKeyPrefix(v.keys[k], true) + describeValue(v.elems[k]));
  return v.keys.empty() ? fmt::format(FMT_STRING("{{{}}}"), fmt::join(items, ", "))
                        : fmt::format(FMT_STRING("%{}{{{}}}"), v.structName, fmt::join(items, ", "));
}

bool isDefinition(const std::string &input) {
  size_t i = input.find_first_not_of(" \t\r\n");
  if (i == std::string::npos) return false;
  for (const char *kw : {"defn ", "defnp ", "def ", "defp "})
    if (input.compare(i, std::strlen(kw), kw) == 0) return true;
  return false;
}

} // namespace

Result<std::unique_ptr<ReplSession>> ReplSession::create(bool useDiskCache) {
  NXC_TRY(engine, Engine::create());
  std::unique_ptr<ReplSession> s(new ReplSession());
  s->engine_ = std::move(engine);
  s->useDiskCache_ = useDiskCache;
  return std::move(s);
}

Status ReplSession::load(const std::string &path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    // A library's directory: every defn source file in it.
    NXC_TRY(files, defnSourceFiles(path));
    for (auto &f : files) NXC_CHECK(load(f));
    return okStatus();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(Loc{}, fmt::format(FMT_STRING("cannot read '{}': {}"), path, std::strerror(errno)));
  std::string text(std::istreambuf_iterator<char>(in), {});
  auto src = std::make_shared<const SourceFile>(SourceFile{path, std::move(text)});
  NXC_TRY(file, parseFile(src));
  for (auto &m : file.modules)
    if (m.name == "Repl") return error(m.loc, "the module name Repl is reserved for the repl's own definitions");
  // Replace an earlier load of the same file.
  for (size_t i = 0; i < files_.size(); ++i)
    if (files_[i] == path) {
      sources_[i] = src;
      return okStatus();
    }
  files_.push_back(path);
  sources_.push_back(src);
  return okStatus();
}

bool ReplSession::needsMoreInput(const std::string &text) {
  auto toks = lex(std::make_shared<const SourceFile>(SourceFile{"repl", text}));
  if (!toks) return false; // a lexical error: report it rather than wait
  int blocks = 0, brackets = 0;
  // A line that ends in `=` or a binary operator continues on the next
  // (`model =` and the call below it, as iex reads them).
  const Token *last = nullptr;
  for (auto &t : *toks)
    if (t.kind != Tok::Newline && t.kind != Tok::Eof) last = &t;
  if (last && last->kind == Tok::Punct &&
      (last->text == "=" || last->text == "|>" || last->text == "+" || last->text == "-" || last->text == "*" ||
       last->text == "/" || last->text == "," || last->text == "++" || last->text == "<>" || last->text == "->"))
    return true;
  for (auto &t : *toks) {
    if (t.kind == Tok::Ident && (t.text == "do" || t.text == "fn")) ++blocks;
    if (t.kind == Tok::Ident && t.text == "end") --blocks;
    if (t.kind == Tok::Punct && (t.text == "(" || t.text == "[" || t.text == "{")) ++brackets;
    if (t.kind == Tok::Punct && (t.text == ")" || t.text == "]" || t.text == "}")) --brackets;
  }
  return blocks > 0 || brackets > 0;
}

std::string ReplSession::describeBindings() const {
  std::string s;
  std::map<std::string, std::string> lines;
  for (auto &[name, v] : bindings_) lines[name] = describeValue(v);
  for (auto &[name, k] : functionNames_)
    lines[name] = fmt::format(FMT_STRING("#Function<{}/{}>"), functions_[k].source->name, functions_[k].arity);
  for (auto &[name, text] : lines) fmt::format_to(std::back_inserter(s), FMT_STRING("{}: {}\n"), name, text);
  return s.empty() ? "(no variables)\n" : s;
}

Result<ast::File> ReplSession::buildProgram(const std::string &body, const std::vector<std::string> &params,
                                            const std::shared_ptr<const SourceFile> &inputSource,
                                            std::vector<Segment> &segments, const std::string &prelude,
                                            const std::set<size_t> &helpers) {
  std::vector<ast::Module> modules;
  for (auto &src : sources_) {
    NXC_TRY(f, parseFile(src));
    for (auto &m : f.modules) modules.push_back(std::move(m));
  }
  std::string text = "defmodule Repl do\n  import Nx.Defn\n";
  for (auto &m : modules) fmt::format_to(std::back_inserter(text), FMT_STRING("  import {}\n"), m.name);
  int line = countLines(text);
  for (auto &d : definitions_) {
    segments.push_back(Segment{line, countLines(d.text), d.source});
    text += d.text + "\n";
    line += countLines(d.text);
  }
  // The helpers of the function bindings the entry uses (named in its
  // prelude), each as a defnp of what it captured.
  for (size_t k : helpers) {
    const FunctionBinding &f = functions_[k];
    std::vector<std::string> names = f.capturedTensors;
    for (auto &c : f.capturedFunctions) names.push_back(c.first);
    fmt::format_to(std::back_inserter(text), FMT_STRING("defnp {}({}) do\n"), helperName(k), fmt::join(names, ", "));
    ++line;
    segments.push_back(Segment{line, countLines(f.text), f.source});
    text += f.text + "\nend\n";
    line += countLines(f.text) + 1;
  }
  if (!body.empty()) {
    fmt::format_to(std::back_inserter(text), FMT_STRING("defn {}({}) do\n"), kReplEntryName, fmt::join(params, ", "));
    ++line;
    text += prelude;
    line += countLines(prelude) - 1;
    segments.push_back(Segment{line, countLines(body), inputSource});
    text += body + "\nend\n";
  }
  text += "end\n";
  auto replSource = std::make_shared<const SourceFile>(SourceFile{"repl", text});
  NXC_TRY(replFile, parseFile(replSource));
  ast::File file;
  file.source = replSource;
  for (auto &m : modules) file.modules.push_back(std::move(m));
  for (auto &m : replFile.modules) file.modules.push_back(std::move(m));
  return file;
}

Diag ReplSession::relocate(Diag d, const std::vector<Segment> &segments) const {
  if (!d.loc.valid() || d.loc.file->name != "repl") return d;
  for (auto &s : segments)
    if (d.loc.line >= s.firstLine && d.loc.line < s.firstLine + s.lines) {
      d.loc = Loc{s.source, d.loc.line - s.firstLine + 1, d.loc.col};
      return d;
    }
  return d;
}

Result<HostValue> ReplSession::evaluate(const ast::Expr &expr, const std::string &text,
                                        const std::shared_ptr<const SourceFile> &inputSource) {
  std::set<std::string> used, usedFunctions;
  collectVariables(expr, bindings_, used);
  collectVariables(expr, functionNames_, usedFunctions);
  std::vector<std::string> params(used.begin(), used.end());
  std::vector<HostValue> args;
  for (auto &p : params) args.push_back(bindings_.at(p));
  // The function bindings it mentions, and those they call, made first:
  //   __repl_fv_K = __repl_fn_K(captured values..., functions it calls...)
  //   f = __repl_fv_K
  std::set<size_t> needed;
  std::function<void(size_t)> need = [&](size_t k) {
    if (!needed.insert(k).second) return;
    for (auto &c : functions_[k].capturedFunctions) need(c.second);
  };
  for (auto &name : usedFunctions) need(functionNames_.at(name));
  std::string prelude;
  for (size_t k : needed) { // in the order they were bound
    const FunctionBinding &f = functions_[k];
    std::vector<std::string> callArgs;
    for (size_t i = 0; i < f.capturedValues.size(); ++i) {
      params.push_back(captureName(k, i));
      args.push_back(f.capturedValues[i]);
      callArgs.push_back(captureName(k, i));
    }
    for (auto &c : f.capturedFunctions) callArgs.push_back(valueName(c.second));
    fmt::format_to(std::back_inserter(prelude), FMT_STRING("{} = {}({})\n"), valueName(k), helperName(k),
                   fmt::join(callArgs, ", "));
  }
  for (auto &name : usedFunctions)
    fmt::format_to(std::back_inserter(prelude), FMT_STRING("{} = {}\n"), name, valueName(functionNames_.at(name)));
  // Bindings that hold terms get them back.
  for (auto &name : used)
    if (holdsTerm(bindings_.at(name)))
      fmt::format_to(std::back_inserter(prelude), FMT_STRING("{} = {}\n"), name, rebuilt(bindings_.at(name), name));
  std::vector<Segment> segments;
  auto program = buildProgram(text, params, inputSource, segments, prelude, needed);
  if (!program) return relocate(program.error(), segments);
  std::vector<const HostTensor *> inputs;
  for (auto &a : args) flattenLeaves(a, inputs);
  // Tensors that plain defs read while they run (Nx.to_number/1), computed
  // now from the session's values, as iex computes them.
  size_t evaluations = 0;
  EagerEvaluator eager = [&](const Graph &graph) -> Result<Template::Values> {
    std::string signature = fmt::format(FMT_STRING("Repl.__eager_{}__"), evaluations++);
    NXC_TRY(now, engine_->prepareGraph(graph, signature, program->source->text, false));
    NXC_TRY(result, engine_->call(now, inputs));
    return valuesOf(result.tensor);
  };
  auto prepared =
      engine_->prepare(*program, "Repl", kReplEntryName, args, useDiskCache_, Loc{inputSource, 1, 1}, nullptr, eager);
  if (!prepared) return relocate(prepared.error(), segments);
  return engine_->call(*prepared, inputs);
}

/// Matches `pattern` against `value` into `out` without touching the
/// session's bindings, so that a pattern that fails to match binds nothing.
static Status matchPattern(const ast::Expr &pattern, const HostValue &value,
                           std::vector<std::pair<std::string, const HostValue *>> &out) {
  if (pattern.kind == ast::ExprKind::Var) {
    if (pattern.name != "_" && pattern.name[0] != '_') out.emplace_back(pattern.name, &value);
    return okStatus();
  }
  if (pattern.kind == ast::ExprKind::Tuple) {
    if (!value.isTuple)
      return error(pattern.loc, fmt::format(FMT_STRING("cannot match a tuple of {} elements against a tensor"),
                                            pattern.children.size()));
    if (value.elems.size() != pattern.children.size())
      return error(pattern.loc, fmt::format(FMT_STRING("cannot match a tuple of {} elements against a tuple of {}"),
                                            pattern.children.size(), value.elems.size()));
    for (size_t i = 0; i < pattern.children.size(); ++i)
      NXC_CHECK(matchPattern(*pattern.children[i], value.elems[i], out));
    return okStatus();
  }
  return error(pattern.loc, "only variables and tuples can be assigned in the repl");
}

Status ReplSession::bind(const ast::Expr &pattern, const HostValue &value) {
  std::vector<std::pair<std::string, const HostValue *>> matched;
  NXC_CHECK(matchPattern(pattern, value, matched));
  for (auto &[name, v] : matched) {
    bindings_[name] = *v;
    functionNames_.erase(name);
  }
  return okStatus();
}

std::string ReplSession::bindFunction(const std::string &name, const ast::Expr &fn, const std::string &text,
                                      const std::shared_ptr<const SourceFile> &inputSource) {
  FunctionBinding f;
  f.name = name;
  f.text = text;
  f.source = inputSource;
  f.arity = fn.intValue;
  // What it mentions is captured as it is now, as Elixir's closures do.
  std::set<std::string> tensors, functions;
  collectVariables(fn, bindings_, tensors);
  collectVariables(fn, functionNames_, functions);
  for (auto &t : tensors) {
    f.capturedTensors.push_back(t);
    f.capturedValues.push_back(bindings_.at(t));
  }
  for (auto &g : functions) f.capturedFunctions.push_back({g, functionNames_.at(g)});
  functions_.push_back(std::move(f));
  functionNames_[name] = functions_.size() - 1;
  bindings_.erase(name);
  return fmt::format(FMT_STRING("#Function<{}/{}>\n"), inputSource->name, fn.intValue);
}

Result<std::string> ReplSession::define(const std::string &input,
                                        const std::shared_ptr<const SourceFile> &inputSource) {
  // Parse the definition alone first, for errors located in the user's text.
  auto alone = std::make_shared<const SourceFile>(
      SourceFile{inputSource->name, fmt::format(FMT_STRING("defmodule Repl do\n{}\nend\n"), input)});
  auto parsed = parseFile(alone);
  if (!parsed) {
    Diag d = parsed.error();
    if (d.loc.valid() && d.loc.line >= 2) d.loc = Loc{inputSource, d.loc.line - 1, d.loc.col};
    return d;
  }
  // Checked before anything is registered: a rejected input defines nothing.
  if (parsed->modules[0].functions.size() != 1) return error(Loc{inputSource, 1, 1}, "define one function at a time");
  std::string out;
  for (auto &f : parsed->modules[0].functions) {
    std::string key = fmt::format(FMT_STRING("{}/{}"), f.name, f.params.size());
    bool replaced = false;
    for (auto &d : definitions_)
      if (d.key == key) {
        d.text = input;
        d.source = inputSource;
        replaced = true;
      }
    if (!replaced) definitions_.push_back(Definition{key, input, inputSource});
    fmt::format_to(std::back_inserter(out), FMT_STRING("{} {}\n"), replaced ? "redefined" : "defined", key);
  }
  return out;
}

Result<std::string> ReplSession::eval(const std::string &input) {
  auto inputSource =
      std::make_shared<const SourceFile>(SourceFile{fmt::format(FMT_STRING("repl({})"), ++counter_), input});
  if (isDefinition(input)) return define(input, inputSource);
  NXC_TRY(expr, parseExpression(inputSource));
  // expr is a Block; `pattern = value` at the top binds the pattern.
  const ast::Expr *single = expr->children.size() == 1 ? expr->children[0].get() : nullptr;
  if (single && single->kind == ast::ExprKind::Match) {
    const ast::Expr &pattern = *single->children[0];
    if (pattern.kind == ast::ExprKind::Var || pattern.kind == ast::ExprKind::Tuple) {
      bool function = pattern.kind == ast::ExprKind::Var && single->children[1]->kind == ast::ExprKind::Fn;
      // Evaluate the right-hand side: the text after the top-level '='.
      int line = 1, col = 1;
      size_t pos = 0;
      for (; pos < input.size(); ++pos) {
        if (line == single->loc.line && col == single->loc.col) break;
        if (input[pos] == '\n') { ++line; col = 1; } else { ++col; }
      }
      // Keep the columns of the right-hand side: blank out the pattern and '='.
      std::string body = input;
      for (size_t i = 0; i <= pos && i < body.size(); ++i)
        if (body[i] != '\n') body[i] = ' ';
      if (function && pattern.name != "_") return bindFunction(pattern.name, *single->children[1], body, inputSource);
      NXC_TRY(value, evaluate(*single->children[1], body, inputSource));
      NXC_CHECK(bind(pattern, value));
      return formatNx(value) + "\n";
    }
  }
  // Nx.to_number(t) and Nx.to_flat_list(t) (or t |> ...) at the top level,
  // as at iex's: t is computed, and its elements print as Elixir numbers.
  if (single && single->kind == ast::ExprKind::Call && single->module == "Nx" && single->children.size() == 1 &&
      (single->name == "to_number" || single->name == "to_flat_list")) {
    std::string call = "Nx." + single->name + "(";
    std::string body = input;
    size_t first = body.find_first_not_of(" \t\n"), last = body.find_last_not_of(" \t\n");
    std::string piped = "|> " + call + ")";
    bool blanked = false;
    if (first != std::string::npos && body.compare(first, call.size(), call) == 0 && body[last] == ')') {
      for (size_t i = first; i < first + call.size(); ++i) body[i] = ' ';
      body[last] = ' ';
      blanked = true;
    } else if (size_t at = body.rfind(piped); at != std::string::npos && at + piped.size() == last + 1) {
      for (size_t i = at; i <= last; ++i) body[i] = ' ';
      blanked = true;
    }
    if (blanked) {
      NXC_TRY(value, evaluate(*single->children[0], body, inputSource));
      if (value.isTuple)
        return error(single->loc, fmt::format(FMT_STRING("Nx.{} expects a tensor, got a tuple"), single->name));
      const HostTensor &t = value.tensor;
      if (single->name == "to_number" && t.numElements() != 1)
        return error(single->loc, fmt::format(FMT_STRING("** (ArgumentError) cannot convert tensor of shape {{{}}} to "
                                                         "number"),
                                              fmt::join(t.shape(), ", ")));
      auto number = [&](int64_t i) -> std::string {
        if (!t.elem().isFloat()) return t.elem().isSigned() ? std::to_string(t.atInt(i)) : std::to_string(t.atUInt(i));
        double x = t.at(i);
        if (std::isnan(x)) return ":nan";
        if (std::isinf(x)) return x > 0 ? ":infinity" : ":neg_infinity";
        return erlangShortDouble(x); // the element widened to a double, as Nx returns it
      };
      if (single->name == "to_number") return number(0) + "\n";
      std::vector<std::string> items;
      for (int64_t i = 0; i < t.numElements(); ++i) items.push_back(number(i));
      return fmt::format(FMT_STRING("[{}]\n"), fmt::join(items, ", "));
    }
  }
  NXC_TRY(value, evaluate(*expr, input, inputSource));
  return formatNx(value) + "\n";
}

} // namespace nxc

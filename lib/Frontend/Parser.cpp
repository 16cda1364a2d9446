//===- Parser.cpp - defn source to AST ------------------------------------===//
//
// A recursive-descent parser for the Elixir subset that defn uses, with
// Elixir's operator precedence. `a |> f(b)` is rewritten into `f(a, b)` here,
// as Elixir's own macro expansion does.
//
//===----------------------------------------------------------------------===//
#include "ParserImpl.h"

#include <fmt/format.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>

namespace nxc {
namespace parser {

Result<File> Parser::file() {
  File f;
  f.source = src_;
  skipNewlines();
  Loc first = peek().loc;
  while (!at(Tok::Eof)) {
    if (isWord("defn") || isWord("defnp"))
      return error(peek().loc,
                   fmt::format(FMT_STRING("expected 'defmodule' at the top level, found {}"), describe(peek())));
    if (!isWord("defmodule")) {
      // Plain Elixir around the modules (Mix.install, script code): skipped.
      NXC_CHECK(skipExpression());
      skipNewlines();
      continue;
    }
    NXC_TRY(m, module());
    f.modules.push_back(std::move(m));
    skipNewlines();
  }
  if (f.modules.empty())
    return error(first, fmt::format(FMT_STRING("expected a 'defmodule', the file {}"),
                                    toks_.size() <= 2 ? "is empty" : "defines no module"));
  return f;
}

Result<ExprPtr> Parser::expressionFile() {
  skipNewlines();
  Loc loc = peek().loc;
  NXC_TRY(b, block({}));
  if (!at(Tok::Eof)) return error(peek().loc, fmt::format(FMT_STRING("unexpected {}"), describe(peek())));
  (void)loc;
  return std::move(b);
}

Result<ExprPtr> Parser::embeddedExpression(const Loc &at, size_t from, size_t len) {
  const std::string &text = src_->text;
  size_t offset = 0;
  for (int line = 1; line < at.line; ++line) offset = text.find('\n', offset) + 1;
  offset += (size_t)(at.col - 1) + from;
  auto blank = std::make_shared<SourceFile>(*src_);
  for (size_t k = 0; k < blank->text.size(); ++k)
    if ((k < offset || k >= offset + len) && blank->text[k] != '\n') blank->text[k] = ' ';
  // The closing '}' where the inner text ran out.
  Loc close{src_, 1, 1};
  for (size_t k = 0; k < offset + len && k < text.size(); ++k)
    if (text[k] == '\n') { ++close.line; close.col = 1; } else { ++close.col; }
  auto ours = [&](Diag d) {
    d.loc.file = src_;
    size_t eof = d.message.find("found end of file");
    if (eof != std::string::npos) {
      d.message.replace(eof, std::string("found end of file").size(), "found '}'");
      d.loc = close;
    }
    return d;
  };
  auto toks = lex(blank);
  if (!toks.ok()) return ours(toks.error());
  Parser inner(blank, std::move(toks.value()));
  inner.skipNewlines();
  if (inner.at(Tok::Eof)) return ours(error(at, "an empty #{} in a string"));
  auto e = inner.expressionFile();
  if (!e.ok()) return ours(e.error());
  std::function<void(Expr &)> relocate = [&](Expr &x) {
    x.loc.file = src_;
    for (auto &c : x.children) relocate(*c);
  };
  relocate(*e.value());
  ExprPtr parsed = std::move(e.value());
  if (parsed->kind == ExprKind::Block && parsed->children.size() == 1) return std::move(parsed->children[0]);
  return parsed;
}

std::string Parser::describe(const Token &t) {
  switch (t.kind) {
  case Tok::Eof: return "end of file";
  case Tok::Newline: return "end of line";
  case Tok::KwKey: return fmt::format(FMT_STRING("keyword '{}:'"), t.text);
  case Tok::Atom: return fmt::format(FMT_STRING("atom ':{}'"), t.text);
  case Tok::Attr: return fmt::format(FMT_STRING("'@{}'"), t.text);
  default: return fmt::format(FMT_STRING("'{}'"), t.text);
  }
}

Status Parser::expectPunct(const char *p, const std::string &context) {
  if (!isPunct(p))
    return error(peek().loc, fmt::format(FMT_STRING("expected '{}' {}, found {}"), p, context, describe(peek())));
  take();
  return okStatus();
}

Status Parser::expectWord(const char *w, const std::string &context) {
  if (!isWord(w))
    return error(peek().loc, fmt::format(FMT_STRING("expected '{}' {}, found {}"), w, context, describe(peek())));
  take();
  return okStatus();
}

Result<std::string> Parser::aliasPath(const std::string &context) {
  if (!at(Tok::Alias))
    return error(peek().loc,
                 fmt::format(FMT_STRING("expected a module name {}, found {}"), context, describe(peek())));
  std::string name = take().text;
  while (isPunct(".") && peek(1).kind == Tok::Alias) {
    take();
    name += "." + take().text;
  }
  return name;
}

std::string Parser::resolveAlias(const std::string &name) const {
  if (!current_) return name;
  std::string head = name.substr(0, name.find('.'));
  for (auto &[shortName, full] : current_->aliases)
    if (shortName == head) return full + name.substr(head.size());
  return name;
}

Status Parser::skipExpression() {
  std::vector<Token> stack;
  auto closerOf = [](const Token &open) -> std::string {
    return open.kind == Tok::Ident ? "end" : open.text == "(" ? ")" : open.text == "[" ? "]"
                                           : open.text == "{" ? "}" : ">>";
  };
  if (closes(peek())) return error(peek().loc, fmt::format(FMT_STRING("unexpected {}"), describe(peek())));
  while (!at(Tok::Eof)) {
    const Token &t = peek();
    if (stack.empty() && (at(Tok::Newline) || closes(t))) break;
    if (opens(t)) {
      stack.push_back(t);
    } else if (closes(t)) {
      if (t.text != closerOf(stack.back()))
        return error(t.loc, fmt::format(FMT_STRING("unexpected '{}': the '{}' at line {} is closed by '{}'"), t.text,
                                        stack.back().text, stack.back().loc.line, closerOf(stack.back())));
      stack.pop_back();
    }
    take();
  }
  if (!stack.empty())
    return error(stack.back().loc,
                 fmt::format(FMT_STRING("missing '{}' for this '{}'"), closerOf(stack.back()), stack.back().text));
  return okStatus();
}

} // namespace parser

Result<ast::File> parseFile(std::shared_ptr<const SourceFile> source, bool library) {
  NXC_TRY(toks, lex(source));
  parser::Parser p(source, std::move(toks));
  p.library = library;
  return p.file();
}

Result<ast::ExprPtr> parseExpression(std::shared_ptr<const SourceFile> source) {
  NXC_TRY(toks, lex(source));
  parser::Parser p(source, std::move(toks));
  return p.expressionFile();
}

} // namespace nxc

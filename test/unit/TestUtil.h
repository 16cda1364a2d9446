//===- TestUtil.h - shared helpers for the front-end unit tests -*- C++ -*-===//
//
// Small wrappers that run one stage of the front end (lexer, parser,
// signature parser, Sema) on a string and hand back the value or the Diag.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_TEST_UNIT_TESTUTIL_H
#define NXC_TEST_UNIT_TESTUTIL_H

#include "nxc/Frontend/AST.h"
#include "nxc/Frontend/Diagnostics.h"
#include "nxc/Frontend/Lexer.h"
#include "nxc/Frontend/Parser.h"
#include "nxc/Sema/Graph.h"
#include "nxc/Sema/Sema.h"
#include "nxc/Sema/Signature.h"
#include "nxc/Sema/Types.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

namespace nxc::test {

inline std::shared_ptr<const SourceFile> source(std::string text, std::string name = "test.nx") {
  return std::make_shared<const SourceFile>(SourceFile{std::move(name), std::move(text)});
}

inline Result<std::vector<Token>> lexString(const std::string &text) { return lex(source(text)); }

inline Result<ast::File> parseString(const std::string &text) { return parseFile(source(text)); }

inline Result<ast::ExprPtr> parseExpr(const std::string &text) { return parseExpression(source(text)); }

inline Result<Signature> sig(const std::string &text) { return parseSignature(source(text, "--fn")); }

/// Parses `code` and `signature` and traces; the first error of any stage wins.
inline Result<Graph> compile(const std::string &code, const std::string &signature) {
  auto file = parseString(code);
  if (!file) return file.error();
  auto s = sig(signature);
  if (!s) return s.error();
  return trace(*file, *s);
}

/// The element type and shape of the i-th (flattened) result, as Nx prints it.
inline std::string resultType(const Graph &g, size_t i = 0) {
  if (i >= g.results.size()) return "<no result " + std::to_string(i) + ">";
  return g.typeOf(g.results[i]).str();
}

/// The tensor type of a template parsed from `text` ("f32[2][3]").
inline ElemType ty(const char *name) {
  auto t = ElemType::parse(name);
  REQUIRE_MESSAGE(t.has_value(), "not an Nx type: " << name);
  return *t;
}

/// An error's message, or "<no error>" (for readable CHECK failures).
template <typename T> std::string errorOf(const Result<T> &r) { return r.ok() ? "<no error>" : r.error().message; }

} // namespace nxc::test

#endif // NXC_TEST_UNIT_TESTUTIL_H

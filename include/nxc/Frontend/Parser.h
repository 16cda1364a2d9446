//===- Parser.h - defn source to AST ----------------------------*- C++ -*-===//
#ifndef NXC_FRONTEND_PARSER_H
#define NXC_FRONTEND_PARSER_H

#include "nxc/Frontend/AST.h"

namespace nxc {

/// Parses a whole source file: `defmodule ... do ... end` blocks holding
/// `import`/`alias`/`require`, `@attr value`, and `defn`/`defnp`/`def`/`defp`.
/// With `library`, a defn whose body nxc cannot read is kept as a stub with
/// the reason (as a def's always is), reported when something calls it: the
/// other files of a library (`--with`) need not be in nxc's subset.
Result<ast::File> parseFile(std::shared_ptr<const SourceFile> source, bool library = false);

/// Parses a single expression (or a block of them), for tests and the REPL.
Result<ast::ExprPtr> parseExpression(std::shared_ptr<const SourceFile> source);

} // namespace nxc

#endif // NXC_FRONTEND_PARSER_H

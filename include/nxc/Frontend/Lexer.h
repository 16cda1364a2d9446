//===- Lexer.h - tokens of defn source --------------------------*- C++ -*-===//
#ifndef NXC_FRONTEND_LEXER_H
#define NXC_FRONTEND_LEXER_H

#include "nxc/Frontend/Diagnostics.h"

#include <string>
#include <vector>

namespace nxc {

enum class Tok {
  Eof,
  Newline,   ///< end of an expression (newline or `;`)
  Ident,     ///< x, softmax, defn, do, end, ...
  Alias,     ///< Nx, MyDefn (capitalized)
  KwKey,     ///< `axes:` (identifier immediately followed by a colon)
  Atom,      ///< :output
  Int,
  Float,
  Punct,     ///< operators and brackets; the text says which
  Attr,      ///< @name
  String,    ///< "...", '...', heredocs, sigils (~r/.../), <<...>> is punctuation;
             ///< text is the raw contents (plain Elixir that defn never uses)
};

struct Token {
  Tok kind;
  std::string text; ///< identifier/operator text, or the digits without `_`
  Loc loc;
};

/// Splits source into tokens. Newlines are kept as separators except where an
/// expression obviously continues (after an operator, comma or open bracket,
/// or before a line that starts with `|>` or another binary-only operator).
Result<std::vector<Token>> lex(std::shared_ptr<const SourceFile> source);

/// `#{ ... }` in a string, from s[i] == '#': one past the matching '}'
/// (brackets and strings inside may nest), or npos when it is not closed.
size_t interpolationEnd(const std::string &s, size_t i);

} // namespace nxc

#endif // NXC_FRONTEND_LEXER_H

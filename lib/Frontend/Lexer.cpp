//===- Lexer.cpp - tokens of defn source ----------------------------------===//
#include "nxc/Frontend/Lexer.h"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace nxc {
namespace {

/// Operators, longest first so that a prefix never wins over the whole.
const char *const kOperators[] = {
    "&&&", "|||", "<<<", ">>>", "===", "!==", "...", "\\\\", "|>", "**", "==", "!=", "<=", ">=",
    "&&", "||", "->", "<-", "..", "//", "<>", "++", "--", "::", "=>", "=~", "<<", ">>", "+", "-",
    "*", "/", "<", ">", "=", "(", ")", "[", "]", "{", "}", ",", ".", "&", "|", "!", "^", "%", "@"};

/// After these tokens a newline cannot end the expression.
bool continuesAfter(const Token &t) {
  if (t.kind == Tok::Ident) return t.text == "and" || t.text == "or" || t.text == "when";
  if (t.kind != Tok::Punct) return false;
  static const char *const ops[] = {"|>", "**", "==", "!=", "<=", ">=", "&&", "||", "&&&", "|||",
                                    "<<<", ">>>", "->", "<-", "..", "//", "<>", "+", "-", "*",
                                    "/", "<", ">", "=", "(", "[", "{", ",", ".", "&", "|", "\\\\",
                                    "++", "--", "=>", "===", "!==", "::"};
  for (const char *op : ops)
    if (t.text == op) return true;
  return false;
}

/// A line starting with one of these continues the previous expression.
bool continuesBefore(const std::string &text, size_t pos) {
  static const char *const ops[] = {"|>", ")", "]", "}", "**", "==", "!=", "<=", ">=", "&&&",
                                    "|||", "<<<", ">>>", "..", "//", "*", "/", "=", ">", "<", "."};
  for (const char *op : ops)
    if (text.compare(pos, std::strlen(op), op) == 0) {
      // `..` at line start is a range operator, `.` a call on the previous line.
      return true;
    }
  return false;
}

// Identifiers are ASCII letters, digits and _, or Unicode (UTF-8: a lead
// byte starts one, any non-ASCII byte continues it), as Elixir allows
// `α = x`. Generated C names never hold them (include/nxc/Target/CText.h).
bool identStart(char c) {
  unsigned char u = (unsigned char)c;
  return std::isalpha(u) || c == '_' || (u >= 0xC2 && u <= 0xF4);
}
bool identChar(char c) { return std::isalnum((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80; }

/// Scans a run of digits (per `isDigit`) in which `_` may only separate two
/// digits, from s[j]. Appends the digits to `out`; returns the end, or the
/// position of a misplaced `_` as an error.
Result<size_t> digitRun(const std::string &s, size_t j, bool (*isDigit)(char), std::string &out, const Loc &at) {
  size_t begin = j;
  while (j < s.size() && (isDigit(s[j]) || s[j] == '_')) {
    if (s[j] == '_' && (j == begin || j + 1 >= s.size() || !isDigit(s[j + 1]) || !isDigit(s[j - 1])))
      return error(Loc{at.file, at.line, at.col + (int)(j - begin)},
                   "malformed number: '_' must sit between two digits");
    if (s[j] != '_') out += s[j];
    ++j;
  }
  return j;
}

bool isDec(char c) { return std::isdigit((unsigned char)c); }
bool isHex(char c) { return std::isxdigit((unsigned char)c); }
bool isOct(char c) { return c >= '0' && c <= '7'; }
bool isBin(char c) { return c == '0' || c == '1'; }

/// A number token starting at s[i] (a digit), and its length.
Result<std::pair<Token, size_t>> number(const std::shared_ptr<const SourceFile> &src, const std::string &s, size_t i,
                                        int line, int col) {
  Loc loc{src, line, col};
  auto locAt = [&](size_t j) { return Loc{src, line, col + (int)(j - i)}; };
  auto tail = [&](size_t j) -> Status {
    // A number may not run into letters: 12abc, 0xffg.
    if (j < s.size() && identChar(s[j]))
      return error(locAt(j), fmt::format(FMT_STRING("malformed number '{}'"), s.substr(i, j - i + 1)));
    return okStatus();
  };
  std::string digits;
  if (s[i] == '0' && i + 1 < s.size() && (s[i + 1] == 'x' || s[i + 1] == 'b' || s[i + 1] == 'o')) {
    char kind = s[i + 1];
    int base = kind == 'x' ? 16 : kind == 'b' ? 2 : 8;
    bool (*pred)(char) = kind == 'x' ? isHex : kind == 'b' ? isBin : isOct;
    size_t j = i + 2;
    if (j >= s.size() || !pred(s[j])) {
      if (j < s.size() && (identChar(s[j])))
        return error(loc, fmt::format(FMT_STRING("malformed number '{}'"), s.substr(i, 3)));
      return error(loc, fmt::format(FMT_STRING("malformed number: expected digits after '{}'"), s.substr(i, 2)));
    }
    NXC_TRY(end, digitRun(s, j, pred, digits, locAt(j)));
    NXC_CHECK(tail(end));
    errno = 0;
    char *stop = nullptr;
    unsigned long long v = std::strtoull(digits.c_str(), &stop, base);
    if (errno || v > (unsigned long long)INT64_MAX)
      return error(loc, fmt::format(FMT_STRING("integer literal {} does not fit in 64 bits"), s.substr(i, end - i)));
    return std::make_pair(Token{Tok::Int, std::to_string(v), loc}, end - i);
  }
  NXC_TRY(j, digitRun(s, i, isDec, digits, loc));
  bool isFloat = false;
  if (j + 1 < s.size() && s[j] == '.' && isDec(s[j + 1])) {
    isFloat = true;
    digits += '.';
    NXC_TRY(k, digitRun(s, j + 1, isDec, digits, locAt(j + 1)));
    j = k;
    if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
      size_t k2 = j + 1;
      if (k2 < s.size() && (s[k2] == '+' || s[k2] == '-')) ++k2;
      if (k2 >= s.size() || !isDec(s[k2])) return error(locAt(j), "malformed float: expected digits in the exponent");
      digits += 'e';
      digits.append(s, j + 1, k2 - j - 1);
      NXC_TRY(k3, digitRun(s, k2, isDec, digits, locAt(k2)));
      j = k3;
    }
  } else if (j < s.size() && (s[j] == 'e' || s[j] == 'E') && j + 1 < s.size() &&
             (isDec(s[j + 1]) || s[j + 1] == '-' || s[j + 1] == '+')) {
    size_t k = j + 1;
    if (s[k] == '-' || s[k] == '+') ++k;
    while (k < s.size() && isDec(s[k])) ++k;
    return error(locAt(j), fmt::format(FMT_STRING("malformed float: Elixir floats need digits on both sides of the dot "
                                                  "(write {}.0{})"),
                                       s.substr(i, j - i), s.substr(j, k - j)));
  }
  NXC_CHECK(tail(j));
  return std::make_pair(Token{isFloat ? Tok::Float : Tok::Int, digits, loc}, j - i);
}

/// The end (one past the closing delimiter) of a quoted text starting at
/// s[i] == open: escapes are skipped, and with `interpolate`, `#{...}` may
/// nest brackets and further strings. Returns npos when it is not closed.
size_t quotedEnd(const std::string &s, size_t i, char close, bool interpolate);

} // namespace

size_t interpolationEnd(const std::string &s, size_t i) {
  int depth = 0;
  for (size_t j = i + 1; j < s.size(); ++j) {
    char c = s[j];
    if (c == '{') ++depth;
    else if (c == '}') {
      if (--depth == 0) return j + 1;
    } else if (c == '"' || c == '\'') {
      size_t e = quotedEnd(s, j, c, true);
      if (e == std::string::npos) return e;
      j = e - 1;
    }
  }
  return std::string::npos;
}

namespace {

size_t quotedEnd(const std::string &s, size_t i, char close, bool interpolate) {
  for (size_t j = i + 1; j < s.size(); ++j) {
    if (s[j] == '\\') { ++j; continue; }
    if (interpolate && s[j] == '#' && j + 1 < s.size() && s[j + 1] == '{') {
      size_t e = interpolationEnd(s, j);
      if (e == std::string::npos) return e;
      j = e - 1;
      continue;
    }
    if (s[j] == close) return j + 1;
  }
  return std::string::npos;
}

/// A heredoc from s[i] (three quote characters): the end after the closing
/// three quotes, which start a line (after indentation).
size_t heredocEnd(const std::string &s, size_t i) {
  std::string q = s.substr(i, 3);
  size_t j = s.find('\n', i);
  while (j != std::string::npos) {
    size_t k = j + 1;
    while (k < s.size() && (s[k] == ' ' || s[k] == '\t')) ++k;
    if (s.compare(k, 3, q) == 0) return k + 3;
    j = s.find('\n', k);
  }
  return std::string::npos;
}

char closerOf(char open) {
  switch (open) {
  case '(': return ')';
  case '[': return ']';
  case '{': return '}';
  case '<': return '>';
  default: return open;
  }
}

} // namespace

Result<std::vector<Token>> lex(std::shared_ptr<const SourceFile> source) {
  const std::string &s = source->text;
  std::vector<Token> out;
  size_t i = 0;
  int line = 1, col = 1;
  auto here = [&]() { return Loc{source, line, col}; };
  auto advance = [&](size_t n) {
    for (size_t k = 0; k < n && i < s.size(); ++k, ++i) {
      if (s[i] == '\n') { ++line; col = 1; } else { ++col; }
    }
  };
  auto pushNewline = [&](Loc loc) {
    if (out.empty() || out.back().kind == Tok::Newline || continuesAfter(out.back())) return;
    out.push_back(Token{Tok::Newline, "\\n", loc});
  };

  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\r') { advance(1); continue; }
    if (c == '#') { while (i < s.size() && s[i] != '\n') advance(1); continue; }
    if (c == '\n' || c == ';') {
      Loc loc = here();
      advance(1);
      // Look ahead past blank lines and comments for a continuation.
      size_t j = i;
      while (j < s.size()) {
        if (s[j] == ' ' || s[j] == '\t' || s[j] == '\r' || s[j] == '\n') { ++j; continue; }
        if (s[j] == '#') { while (j < s.size() && s[j] != '\n') ++j; continue; }
        break;
      }
      if (c == ';' || j >= s.size() || !continuesBefore(s, j)) pushNewline(loc);
      continue;
    }
    Loc loc = here();
    if (std::isdigit((unsigned char)c)) {
      NXC_TRY(tok, number(source, s, i, line, col));
      advance(tok.second);
      out.push_back(tok.first);
      continue;
    }
    if (identStart(c)) {
      size_t j = i;
      while (j < s.size() && identChar(s[j])) ++j;
      if (j < s.size() && (s[j] == '?' || s[j] == '!')) ++j; // Elixir names like all? / keyword!
      std::string word = s.substr(i, j - i);
      bool isAlias = std::isupper((unsigned char)c);
      // `key:` (followed by space, not `::`) is a keyword key.
      if (!isAlias && j < s.size() && s[j] == ':' && (j + 1 >= s.size() || s[j + 1] != ':')) {
        advance(j - i + 1);
        out.push_back(Token{Tok::KwKey, word, loc});
        continue;
      }
      advance(j - i);
      out.push_back(Token{isAlias ? Tok::Alias : Tok::Ident, word, loc});
      continue;
    }
    if (c == ':' && i + 1 < s.size() && identStart(s[i + 1])) {
      size_t j = i + 1;
      while (j < s.size() && identChar(s[j])) ++j;
      if (j < s.size() && (s[j] == '?' || s[j] == '!')) ++j;
      std::string word = s.substr(i + 1, j - i - 1);
      advance(j - i);
      out.push_back(Token{Tok::Atom, word, loc});
      continue;
    }
    if (c == '@' && i + 1 < s.size() && identStart(s[i + 1])) {
      size_t j = i + 1;
      while (j < s.size() && identChar(s[j])) ++j;
      std::string word = s.substr(i + 1, j - i - 1);
      advance(j - i);
      out.push_back(Token{Tok::Attr, word, loc});
      continue;
    }
    if (c == '"' || c == '\'') {
      // Strings, charlists and their heredocs: tokens of plain Elixir.
      size_t end = s.compare(i, 3, std::string(3, c)) == 0 ? heredocEnd(s, i) : quotedEnd(s, i, c, true);
      if (end == std::string::npos)
        return error(loc, fmt::format(FMT_STRING("missing terminator for this {}"), c == '"' ? "string" : "charlist"));
      std::string text = s.substr(i, end - i);
      advance(end - i);
      // "key": value is a keyword key.
      if (i + 1 < s.size() && s[i] == ':' && (s[i + 1] == ' ' || s[i + 1] == '\n')) {
        advance(1);
        out.push_back(Token{Tok::KwKey, text, loc});
        continue;
      }
      out.push_back(Token{Tok::String, text, loc});
      continue;
    }
    if (c == '~' && i + 2 < s.size() && std::isalpha((unsigned char)s[i + 1])) {
      // Sigils: ~r/.../flags, ~w(a b c), ~s"""...""".
      size_t j = i + 1;
      while (j < s.size() && std::isalpha((unsigned char)s[j])) ++j;
      if (j >= s.size()) return error(loc, "malformed sigil");
      char open = s[j];
      bool lower = std::islower((unsigned char)s[i + 1]);
      size_t end;
      if ((open == '"' || open == '\'') && s.compare(j, 3, std::string(3, open)) == 0) end = heredocEnd(s, j);
      else if (std::string("([{</|\"'").find(open) != std::string::npos) end = quotedEnd(s, j, closerOf(open), lower);
      else return error(Loc{source, line, col + (int)(j - i)}, "malformed sigil: unexpected delimiter");
      if (end == std::string::npos) return error(loc, "missing terminator for this sigil");
      while (end < s.size() && std::isalpha((unsigned char)s[end])) ++end;
      std::string text = s.substr(i, end - i);
      advance(end - i);
      out.push_back(Token{Tok::String, text, loc});
      continue;
    }
    if (c == '?' && i + 1 < s.size() && s[i + 1] != ' ' && s[i + 1] != '\n') {
      // Character literals: ?a, ?\n.
      size_t n = s[i + 1] == '\\' && i + 2 < s.size() ? 3 : 2;
      unsigned char ch = (unsigned char)s[i + n - 1];
      if (n == 3) ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : ch == 's' ? ' ' : ch == '0' ? 0 : ch;
      advance(n);
      out.push_back(Token{Tok::Int, std::to_string(ch), loc});
      continue;
    }
    if (c == ':' && i + 1 < s.size() && s[i + 1] == '"') {
      size_t end = quotedEnd(s, i + 1, '"', true);
      if (end == std::string::npos) return error(loc, "missing terminator for this atom");
      std::string text = s.substr(i + 2, end - i - 3);
      if (text.find("#{") != std::string::npos)
        return error(loc, "atoms built by interpolation (:\"k#{x}\") are not supported by nxc; use a literal atom");
      advance(end - i);
      out.push_back(Token{Tok::Atom, text, loc});
      continue;
    }
    bool matched = false;
    for (const char *op : kOperators) {
      size_t n = std::strlen(op);
      if (s.compare(i, n, op) == 0) {
        advance(n);
        out.push_back(Token{Tok::Punct, op, loc});
        matched = true;
        break;
      }
    }
    if (!matched) {
      std::string shown = (unsigned char)c < 0x20 || (unsigned char)c >= 0x7f
                              ? fmt::format(FMT_STRING("byte 0x{:02x}"), (unsigned char)c)
                              : fmt::format(FMT_STRING("'{}'"), c);
      return error(loc, fmt::format(FMT_STRING("unexpected character {}"), shown));
    }
  }
  pushNewline(here());
  out.push_back(Token{Tok::Eof, "end of file", here()});
  return out;
}

} // namespace nxc

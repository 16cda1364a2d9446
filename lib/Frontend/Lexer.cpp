//===- Lexer.cpp - tokens of defn source ----------------------------------===//
#include "nxc/Frontend/Lexer.h"

#include <cctype>
#include <cstring>

namespace nxc {
namespace {

/// Operators, longest first so that a prefix never wins over the whole.
const char *const kOperators[] = {
    "&&&", "|||", "<<<", ">>>", "===", "!==", "\\\\", "|>", "**", "==", "!=", "<=", ">=",
    "&&", "||", "->", "<-", "..", "//", "<>", "++", "--", "::", "+", "-", "*", "/", "<",
    ">", "=", "(", ")", "[", "]", "{", "}", ",", ".", "&", "|", "!", "^", "%"};

/// After these tokens a newline cannot end the expression.
bool continuesAfter(const Token &t) {
  if (t.kind != Tok::Punct) return false;
  static const char *const ops[] = {"|>", "**", "==", "!=", "<=", ">=", "&&", "||", "&&&", "|||",
                                    "<<<", ">>>", "->", "<-", "..", "//", "<>", "+", "-", "*",
                                    "/", "<", ">", "=", "(", "[", "{", ",", ".", "&", "|", "\\\\"};
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

bool identStart(char c) { return std::isalpha((unsigned char)c) || c == '_'; }
bool identChar(char c) { return std::isalnum((unsigned char)c) || c == '_'; }

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
      size_t j = i;
      std::string digits;
      bool isFloat = false;
      if (c == '0' && j + 1 < s.size() && (s[j + 1] == 'x' || s[j + 1] == 'b' || s[j + 1] == 'o')) {
        int base = s[j + 1] == 'x' ? 16 : s[j + 1] == 'b' ? 2 : 8;
        j += 2;
        while (j < s.size() && (std::isxdigit((unsigned char)s[j]) || s[j] == '_')) {
          if (s[j] != '_') digits += s[j];
          ++j;
        }
        if (digits.empty()) return error(loc, "malformed number: expected digits after '" + s.substr(i, 2) + "'");
        errno = 0;
        char *end = nullptr;
        unsigned long long v = std::strtoull(digits.c_str(), &end, base);
        if (*end != 0 || errno) return error(loc, "malformed number '" + s.substr(i, j - i) + "'");
        advance(j - i);
        out.push_back(Token{Tok::Int, std::to_string(v), loc});
        continue;
      }
      while (j < s.size() && (std::isdigit((unsigned char)s[j]) || s[j] == '_')) {
        if (s[j] == '_' && (j + 1 >= s.size() || !std::isdigit((unsigned char)s[j + 1])))
          return error(Loc{source, line, col + (int)(j - i)}, "malformed number: '_' must be followed by a digit");
        if (s[j] != '_') digits += s[j];
        ++j;
      }
      if (j + 1 < s.size() && s[j] == '.' && std::isdigit((unsigned char)s[j + 1])) {
        isFloat = true;
        digits += '.';
        ++j;
        while (j < s.size() && (std::isdigit((unsigned char)s[j]) || s[j] == '_')) {
          if (s[j] != '_') digits += s[j];
          ++j;
        }
        if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
          size_t k = j + 1;
          if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
          if (k >= s.size() || !std::isdigit((unsigned char)s[k]))
            return error(Loc{source, line, col + (int)(j - i)}, "malformed float: expected digits in the exponent");
          digits += 'e';
          digits.append(s, j + 1, k - j - 1);
          j = k;
          while (j < s.size() && std::isdigit((unsigned char)s[j])) digits += s[j++];
        }
      } else if (j < s.size() && (s[j] == 'e' || s[j] == 'E') && j + 1 < s.size() &&
                 (std::isdigit((unsigned char)s[j + 1]) || s[j + 1] == '-' || s[j + 1] == '+')) {
        return error(Loc{source, line, col + (int)(j - i)},
                     "malformed float: Elixir floats need digits on both sides of the dot (write 1.0e" +
                         std::string(1, s[j + 1]) + "...)");
      }
      if (j < s.size() && identStart(s[j]))
        return error(Loc{source, line, col + (int)(j - i)}, "malformed number '" + s.substr(i, j - i + 1) + "'");
      advance(j - i);
      out.push_back(Token{isFloat ? Tok::Float : Tok::Int, digits, loc});
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
    if (c == '"' || c == '\'')
      return error(loc, "strings and charlists are not supported in defn");
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
                              ? "byte 0x" + std::string(1, "0123456789abcdef"[((unsigned char)c) >> 4]) +
                                    std::string(1, "0123456789abcdef"[c & 15])
                              : "'" + std::string(1, c) + "'";
      return error(loc, "unexpected character " + shown);
    }
  }
  pushNewline(here());
  out.push_back(Token{Tok::Eof, "end of file", here()});
  return out;
}

} // namespace nxc

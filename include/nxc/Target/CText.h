//===- CText.h - what nxc writes into generated C text ----------*- C++ -*-===//
//
// The one place that decides what user-given text may appear in generated C
// (the header, the runtime sources, programs that include them): names must
// be C identifiers, and everything else (signatures, types with axis names,
// graph text) goes through commentText before it lands in a comment.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_TARGET_CTEXT_H
#define NXC_TARGET_CTEXT_H

#include <string>
#include <string_view>

namespace nxc {

/// An ASCII C identifier: a letter or _, then letters, digits and _.
inline bool isCIdentifier(std::string_view s) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (s.empty() || !letter(s[0])) return false;
  for (char c : s)
    if (!letter(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

/// The C name of parameter `index` named `name` in the source: the name
/// itself when it is a C identifier, else argINDEX (a Unicode name).
inline std::string cParameterName(std::string_view name, size_t index) {
  return isCIdentifier(name) ? std::string(name) : "arg" + std::to_string(index);
}

/// `s` made safe inside a C block comment: "*/" cannot end it, "/*" cannot
/// nest (-Wcomment), and control characters (a newline, a NUL, ...) are
/// written as \xHH, so a comment line stays one line.
inline std::string commentText(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x20 || c == 0x7f) {
      const char *hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else if ((c == '*' && i + 1 < s.size() && s[i + 1] == '/') || (c == '/' && i + 1 < s.size() && s[i + 1] == '*')) {
      out += (char)c;
      out += ' ';
    } else {
      out += (char)c;
    }
  }
  return out;
}

} // namespace nxc

#endif // NXC_TARGET_CTEXT_H

//===- Diagnostics.cpp - rendering user errors ----------------------------===//
#include "nxc/Frontend/Diagnostics.h"

#include <fmt/format.h>

namespace nxc {

std::string SourceFile::lineText(int line) const {
  size_t pos = 0;
  for (int l = 1; l < line; ++l) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) return "";
    ++pos;
  }
  size_t end = text.find('\n', pos);
  std::string s = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
  if (!s.empty() && s.back() == '\r') s.pop_back();
  return s;
}

std::string Diag::render() const {
  if (!loc.valid()) return fmt::format(FMT_STRING("nxc: error: {}\n"), message);
  std::string line = loc.file->lineText(loc.line);
  // Keep tabs so that the caret lines up under the offending character.
  std::string pad;
  for (int i = 0; i + 1 < loc.col && i < (int)line.size(); ++i) pad += line[i] == '\t' ? '\t' : ' ';
  return fmt::format(FMT_STRING("{}:{}:{}: error: {}\n{}\n{}^\n"), loc.file->name, loc.line, loc.col, message, line, pad);
}

} // namespace nxc

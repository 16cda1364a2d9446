//===- Diagnostics.cpp - rendering user errors ----------------------------===//
#include "nxc/Frontend/Diagnostics.h"

#include <fmt/format.h>

#include <algorithm>

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
  if (!loc.pointer.empty()) return fmt::format(FMT_STRING("{}:{}: error: {}\n"), loc.file->name, loc.pointer, message);
  std::string line = loc.file->lineText(loc.line);
  // A long line is shown around the column only, marked with "...".
  constexpr int kWindow = 120;
  // A column past the end of the line (an error at the end of the input)
  // points just after its last character.
  int col = std::max(1, std::min(loc.col, (int)line.size() + 1));
  if ((int)line.size() > 2 * kWindow) {
    // The window's ends on UTF-8 character boundaries: never half a character.
    auto continuation = [&](int i) { return i < (int)line.size() && ((unsigned char)line[i] & 0xC0) == 0x80; };
    int start = std::max(0, col - 1 - kWindow / 2);
    while (start > 0 && continuation(start)) --start;
    int end = std::min((int)line.size(), start + kWindow);
    while (end > start && continuation(end)) --end;
    std::string shown = line.substr(start, end - start);
    if (start > 0) {
      shown = "..." + shown;
      col = col - start + 3;
    }
    if (end < (int)line.size()) shown += "...";
    line = shown;
  }
  // Keep tabs so that the caret lines up under the offending character.
  std::string pad;
  // One space per character (not per byte of a UTF-8 sequence).
  for (int i = 0; i + 1 < col && i < (int)line.size(); ++i)
    if (((unsigned char)line[i] & 0xC0) != 0x80) pad += line[i] == '\t' ? '\t' : ' ';
  return fmt::format(FMT_STRING("{}:{}:{}: error: {}\n{}\n{}^\n"), loc.file->name, loc.line, loc.col, message, line,
                     pad);
}

} // namespace nxc

//===- Common.cpp - helpers the nxc subcommands share ---------------------===//
#include "Commands.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

namespace fs = std::filesystem;

namespace nxc::cli {

int report(const Diag &d) {
  std::cerr << d.render();
  return d.message.rfind("internal compiler error", 0) == 0 ? kInternalError : kUserError;
}

Result<std::shared_ptr<const SourceFile>> readSource(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(Loc{}, "cannot read '" + path + "': " + std::strerror(errno));
  if (fs::is_directory(path)) return error(Loc{}, "cannot read '" + path + "': it is a directory");
  std::ostringstream ss;
  ss << in.rdbuf();
  return std::make_shared<const SourceFile>(SourceFile{path, ss.str()});
}

Status writeFile(const fs::path &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return error(Loc{}, "cannot write '" + path.string() + "': " + std::strerror(errno));
  out.write(bytes.data(), (std::streamsize)bytes.size());
  if (!out) return error(Loc{}, "cannot write '" + path.string() + "': " + std::strerror(errno));
  return okStatus();
}

} // namespace nxc::cli

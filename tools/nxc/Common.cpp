//===- Common.cpp - helpers the nxc subcommands share ---------------------===//
#include "Commands.h"

#include "nxc/Frontend/Parser.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>

namespace fs = std::filesystem;

namespace nxc::cli {

int report(const Diag &d) {
  std::cerr << d.render();
  return d.message.rfind("internal compiler error", 0) == 0 ? kInternalError : kUserError;
}

Result<std::shared_ptr<const SourceFile>> readSource(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(Loc{}, fmt::format(FMT_STRING("cannot read '{}': {}"), path, std::strerror(errno)));
  if (fs::is_directory(path)) return error(Loc{}, fmt::format(FMT_STRING("cannot read '{}': it is a directory"), path));
  std::string text(std::istreambuf_iterator<char>(in), {});
  return std::make_shared<const SourceFile>(SourceFile{path, std::move(text)});
}

Result<Input> readInput(const std::string &path) {
  Input in;
  if (fs::path(path).extension() == ".json") {
    NXC_TRY(graph, loadGraphFile(path));
    in.contents = graph.contents;
    in.graph = std::move(graph);
    return in;
  }
  NXC_TRY(src, readSource(path));
  NXC_TRY(file, parseFile(src));
  in.contents = src->text;
  in.source = std::move(file);
  return in;
}

Status writeFile(const fs::path &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return error(Loc{}, fmt::format(FMT_STRING("cannot write '{}': {}"), path.string(), std::strerror(errno)));
  out.write(bytes.data(), (std::streamsize)bytes.size());
  if (!out) return error(Loc{}, fmt::format(FMT_STRING("cannot write '{}': {}"), path.string(), std::strerror(errno)));
  return okStatus();
}

} // namespace nxc::cli

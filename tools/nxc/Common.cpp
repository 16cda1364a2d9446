//===- Common.cpp - helpers the nxc subcommands share ---------------------===//
#include "Commands.h"

#include "nxc/Frontend/Parser.h"
#include "nxc/Frontend/SourceFiles.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>

namespace fs = std::filesystem;

#include <algorithm>
#include <map>
#include <set>

namespace nxc::cli {

int report(const Diag &d) {
  std::cerr << d.render();
  return d.kind == DiagKind::Internal ? kInternalError : kUserError;
}

Result<std::shared_ptr<const SourceFile>> readSource(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(Loc{}, fmt::format(FMT_STRING("cannot read '{}': {}"), path, std::strerror(errno)));
  if (fs::is_directory(path)) return error(Loc{}, fmt::format(FMT_STRING("cannot read '{}': it is a directory"), path));
  std::string text(std::istreambuf_iterator<char>(in), {});
  return std::make_shared<const SourceFile>(SourceFile{path, std::move(text)});
}


Result<Input> readInput(const std::string &path, const std::vector<std::string> &with) {
  Input in;
  if (fs::path(path).extension() == ".json") {
    if (!with.empty()) return error(Loc{}, "--with adds defn source files; a .json graph calls no other files");
    NXC_TRY(graph, loadGraphFile(path));
    in.contents = graph.contents;
    in.graph = std::move(graph);
    return in;
  }
  std::vector<std::string> paths;
  for (const std::string &p : std::vector<std::string>{path}) {
    NXC_TRY(files, defnSourceFiles(p));
    paths.insert(paths.end(), files.begin(), files.end());
  }
  // A file given twice (the input inside a --with directory) is read once.
  std::set<std::string> seen;
  auto identity = [](const std::string &p) {
    std::error_code ec;
    fs::path c = fs::weakly_canonical(p, ec);
    return ec ? p : c.string();
  };
  for (auto &p : paths) seen.insert(identity(p));
  for (const std::string &p : with) {
    if (fs::path(p).extension() == ".json")
      return error(Loc{}, fmt::format(FMT_STRING("--with {}: only defn source files can be added"), p));
    NXC_TRY(files, defnSourceFiles(p));
    for (auto &f : files)
      if (seen.insert(identity(f)).second) paths.push_back(f);
  }
  // One program from every file: modules of one file call those of another.
  std::map<std::string, std::string> definedIn;
  size_t mainFiles = 0;
  for (const std::string &p : std::vector<std::string>{path}) {
    NXC_TRY(files, defnSourceFiles(p));
    mainFiles += files.size();
  }
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string &p = paths[i];
    NXC_TRY(src, readSource(p));
    // The input is read strictly; the files it calls into as a library.
    NXC_TRY(file, parseFile(src, /*library=*/i >= mainFiles));
    for (auto &m : file.modules) {
      auto [it, fresh] = definedIn.emplace(m.name, p);
      if (!fresh)
        return error(Loc{}, fmt::format(FMT_STRING("module {} is defined in both {} and {}"), m.name, it->second, p));
    }
    in.contents += paths.size() == 1 ? src->text : fmt::format(FMT_STRING("{}\n{}\n"), p, src->text);
    if (!in.source) {
      in.source = std::move(file);
    } else {
      for (auto &m : file.modules) in.source->modules.push_back(std::move(m));
    }
    if (i + 1 == mainFiles) in.source->inputModules = in.source->modules.size();
  }
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

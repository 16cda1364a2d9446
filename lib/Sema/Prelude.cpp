//===- Prelude.cpp - nxc's built-in defn modules --------------------------===//
//
// Parts of Nx's library are written in defn (lib/Sema/prelude/*.exs) and
// compiled into nxc as text. They are parsed once, on first use, and their
// functions are traced like the user's own defns.
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include "nxc/Frontend/Parser.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace nxc::sema {
namespace {

const char kLinAlg[] =
#include "PreludeLinAlg.inc"
    ;
const char kNx[] =
#include "PreludeNx.inc"
    ;
const char kSpectral[] =
#include "PreludeSpectral.inc"
    ;

/// Every prelude module, parsed once.
const std::vector<ast::File> &preludeFiles() {
  static const std::vector<ast::File> files = [] {
    std::vector<ast::File> out;
    for (auto [name, text] : {std::pair<const char *, const char *>{"<nxc>/LinAlg.exs", kLinAlg},
                              {"<nxc>/Nx.exs", kNx},
                              {"<nxc>/Spectral.exs", kSpectral}}) {
      auto source = std::make_shared<SourceFile>();
      source->name = name;
      source->text = text;
      auto parsed = parseFile(source);
      if (!parsed.ok()) {
        fmt::print(stderr, FMT_STRING("nxc: internal error: a prelude does not parse:\n{}\n"), parsed.error().render());
        std::abort();
      }
      out.push_back(std::move(*parsed));
    }
    return out;
  }();
  return files;
}

} // namespace

Result<Value> Tracer::prelude(const std::string &name, std::vector<Value> args, const Loc &loc) {
  for (auto &file : preludeFiles())
    for (auto &m : file.modules)
      if (const ast::Function *f = findFunction(m, name, args.size())) {
        auto result = inlineCall(*f, m, std::move(args), loc);
        // An error found inside the prelude (a function argument of the wrong
        // arity, say) is the user's call's: it is reported there, not at a
        // line of nxc's own source the user has never seen.
        if (!result && result.error().loc.valid() && result.error().loc.file->name.rfind("<nxc>/", 0) == 0) {
          Diag d = result.error();
          d.loc = loc;
          return d;
        }
        return result;
      }
  return internalError(loc, fmt::format(FMT_STRING("no prelude function {}/{}"), name, args.size()));
}

} // namespace nxc::sema

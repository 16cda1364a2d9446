//===- Signature.h - templates and --fn signatures --------------*- C++ -*-===//
//
// `f32[100]`, `{f32[784,128], f32[128]}`, `f32[batch: 30][784]`, and whole
// signatures `name=Mod.fun(f32[100], s32[])` as given to `nxc aot --fn`.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_SEMA_SIGNATURE_H
#define NXC_SEMA_SIGNATURE_H

#include "nxc/Frontend/Diagnostics.h"
#include "nxc/Sema/Types.h"

#include <memory>
#include <string>
#include <vector>

namespace nxc {

/// An argument template: a tensor, or a tuple of templates.
struct Template {
  bool isTuple = false;
  TensorType tensor;
  std::vector<Template> elems;
  /// `%{b: f32[2], a: f32}`: a map, with isTuple set, its elements sorted by
  /// key (the order Nx flattens a map in).
  std::vector<std::string> keys;
  /// A struct's module (a map template with keys; from a value, as the
  /// repl's bindings and Nx.serialize files hold structs).
  std::string structName;
  /// A field that holds an Elixir term, not a tensor (a struct's keep field:
  /// `%Mod{w: f32[3], whiten?: false}`): the literal as written (`false`,
  /// `nil`, `:nan`, `3`, `0.5`). No leaf of the flattened arguments.
  std::string term;
  Loc loc;
  /// A constant template: `@weights.npy` (a tensor), `@params.npz` (a tuple
  /// of the archive's arrays in order), optionally followed by `:TEMPLATE`
  /// that declares the type, shape and axis names the file must have.
  std::string constantPath;
  bool declared = false; ///< `:TEMPLATE` was given
  /// Each leaf's values once loadConstants (nxc/Tensor/Constants.h) has read
  /// the file: floats in `f`, integers in `i`, row-major.
  struct Values {
    std::vector<double> f;
    std::vector<int64_t> i;
  };
  std::shared_ptr<const Values> values;
  /// Canonical spelling ("f32[100]", "{f32[2], s32}").
  std::string str() const;
  /// Leaves depth-first.
  void flatten(std::vector<TensorType> &out) const;
};

struct Signature {
  std::string cname;     ///< explicit `name=` prefix, or empty
  std::string module;    ///< `Mod.` qualifier, or empty
  std::string function;
  std::vector<Template> args;
  /// The trailing keyword list of compile-time options, as in
  /// `celu(f32[4], alpha: 2.0)` or, for `nxc jit`, `Mod.celu(alpha: 2.0)`:
  /// the last argument, evaluated as an Elixir literal when tracing. Its
  /// source is the --fn text blanked but for the list, which stands in
  /// brackets at its own columns (so that errors point into the --fn).
  std::shared_ptr<const SourceFile> options;
  std::string optionsText; ///< the list as written, without brackets
  Loc loc;
  /// Arguments the function is called with: the templates, and the options.
  size_t arity() const { return args.size() + (options ? 1 : 0); }
  /// The identifier-safe suffix for this signature: "f32_100", "s32_2x3__f32".
  std::string mangledArgs() const;
};

/// Parses one --fn value. `source` names the option for error messages.
Result<Signature> parseSignature(std::shared_ptr<const SourceFile> source);

} // namespace nxc

#endif // NXC_SEMA_SIGNATURE_H

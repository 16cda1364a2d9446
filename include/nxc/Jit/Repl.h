//===- Repl.h - the state of an nxc repl session ----------------*- C++ -*-===//
//
// Each input is a defn expression, an assignment, or a definition. An
// expression is compiled as the body of a fresh defn in a `Repl` module that
// imports every loaded module, with the session's variables it mentions as
// parameters; it runs through the same Engine as `nxc jit` (so repeated calls
// at one shape reuse the compiled code). Definitions accumulate in the Repl
// module; defining a name/arity again replaces it.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_JIT_REPL_H
#define NXC_JIT_REPL_H

#include "nxc/Jit/Engine.h"

#include <map>
#include <set>

namespace nxc {

class ReplSession {
public:
  static Result<std::unique_ptr<ReplSession>> create(bool useDiskCache);

  /// Makes the modules of a .nx file callable (by name, or Module.name).
  Status load(const std::string &path);
  /// Evaluates one complete input and returns what to print.
  Result<std::string> eval(const std::string &input);
  /// Whether `text` is unfinished (an open `do`, `fn` or bracket).
  static bool needsMoreInput(const std::string &text);
  /// The names bound so far, with their types ("x: f32[3]").
  std::string describeBindings() const;

private:
  struct Definition {
    std::string key;  ///< "name/arity"
    std::string text;
    std::shared_ptr<const SourceFile> source; ///< "repl:N", for error locations
  };
  /// `name = fn ... end` (or a capture): a function value, kept as the
  /// source of a helper defnp that makes it from what it captured (the
  /// values of the session's tensors it mentions when it was bound, and the
  /// function bindings it calls); a later input that mentions `name` binds
  /// it first by calling the helper.
  struct FunctionBinding {
    std::string name;                            ///< the variable it was bound to
    std::string text;                            ///< the input, `name =` blanked
    std::shared_ptr<const SourceFile> source;    ///< "repl(N)"
    std::vector<std::string> capturedTensors;    ///< session tensors it mentions
    std::vector<HostValue> capturedValues;       ///< their values when bound
    /// Function bindings it mentions: the variable, and the binding it held
    /// then (an index into functions_).
    std::vector<std::pair<std::string, size_t>> capturedFunctions;
    int64_t arity = 0;
  };
  /// Where a piece of the generated Repl module came from.
  struct Segment {
    int firstLine, lines;
    std::shared_ptr<const SourceFile> source;
  };

  Result<ast::File> buildProgram(const std::string &body, const std::vector<std::string> &params,
                                 const std::shared_ptr<const SourceFile> &inputSource, std::vector<Segment> &segments,
                                 const std::string &prelude = "", const std::set<size_t> &helpers = {});
  Diag relocate(Diag d, const std::vector<Segment> &segments) const;
  Result<HostValue> evaluate(const ast::Expr &expr, const std::string &text,
                             const std::shared_ptr<const SourceFile> &inputSource);
  Result<std::string> define(const std::string &input, const std::shared_ptr<const SourceFile> &inputSource);
  Status bind(const ast::Expr &pattern, const HostValue &value);
  std::string bindFunction(const std::string &name, const ast::Expr &fn, const std::string &text,
                           const std::shared_ptr<const SourceFile> &inputSource);

  std::unique_ptr<Engine> engine_;
  bool useDiskCache_ = true;
  std::vector<std::string> files_;                   ///< loaded .nx paths
  std::vector<std::shared_ptr<const SourceFile>> sources_; ///< their contents
  std::vector<Definition> definitions_;
  std::map<std::string, HostValue> bindings_;
  std::vector<FunctionBinding> functions_; ///< in the order they were bound
  std::map<std::string, size_t> functionNames_; ///< a variable's function binding now
  int counter_ = 0;
};

} // namespace nxc

#endif // NXC_JIT_REPL_H

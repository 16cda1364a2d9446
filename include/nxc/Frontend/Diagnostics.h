//===- Diagnostics.h - source locations and user errors ---------*- C++ -*-===//
//
// Errors are values: a `Diag` carries a location and a message, and travels up
// in a `Result<T>` to the boundary that prints it once, as
// `FILE:LINE:COL: error: message`, followed by the source line and a caret.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_FRONTEND_DIAGNOSTICS_H
#define NXC_FRONTEND_DIAGNOSTICS_H

#include <cassert>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <variant>

namespace nxc {

/// A named piece of source text: a .nx file, or a command-line template.
struct SourceFile {
  std::string name;
  std::string text;
  /// The text of 1-based line `line`, without its newline.
  std::string lineText(int line) const;
};

/// A position in a SourceFile: a 1-based line and column, or in a serialized
/// graph (a JSON file) the JSON pointer of the node or field (`/functions/0/
/// nodes/12/options/axes`), with line and col 0.
struct Loc {
  std::shared_ptr<const SourceFile> file;
  int line = 0;
  int col = 0;
  std::string pointer;
  bool valid() const { return file && (line > 0 || !pointer.empty()); }
};

/// Whose mistake an error is: the user's input (exit status 1), or nxc's own
/// (an internal compiler error, exit status 2; a bug to report).
enum class DiagKind { User, Internal };

/// An error with its location.
struct Diag {
  Loc loc;
  std::string message;
  DiagKind kind = DiagKind::User;
  /// `FILE:LINE:COL: error: message` + source line + caret, `FILE:POINTER:
  /// error: message` in a graph file, or `nxc: error: message` without a location.
  std::string render() const;
};

/// Either a value or a located error.
template <typename T> class Result {
public:
  Result(T value) : v_(std::move(value)) {}
  Result(Diag d) : v_(std::move(d)) {}
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T &value() { assert(ok()); return std::get<0>(v_); }
  const T &value() const { assert(ok()); return std::get<0>(v_); }
  T &operator*() { return value(); }
  T *operator->() { return &value(); }
  const Diag &error() const { assert(!ok()); return std::get<1>(v_); }

private:
  std::variant<T, Diag> v_;
};

/// A Result for operations that yield nothing.
struct Unit {};
using Status = Result<Unit>;
inline Status okStatus() { return Unit{}; }

inline Diag error(Loc loc, std::string message) { return Diag{std::move(loc), std::move(message)}; }

/// nxc's own error: something it built is not what it meant to build. The
/// message says so (`internal compiler error: ...`).
inline Diag internalError(Loc loc, const std::string &message) {
  return Diag{std::move(loc), "internal compiler error: " + message, DiagKind::Internal};
}

} // namespace nxc

/// Propagates the error of a Result-valued expression; otherwise binds its value.
#define NXC_TRY(var, expr)                                                      \
  auto var##_result = (expr);                                                  \
  if (!var##_result.ok()) return var##_result.error();                         \
  auto var = std::move(var##_result.value())

#define NXC_CHECK(expr)                                                         \
  do {                                                                         \
    auto nxc_check_result_ = (expr);                                           \
    if (!nxc_check_result_.ok()) return nxc_check_result_.error();             \
  } while (0)

#endif // NXC_FRONTEND_DIAGNOSTICS_H

//===- ElixirCall.h - a call into Elixir's library at trace time -*- C++ -*-===//
//
// What the compile-time Elixir's functions share (CompileTimeElixir.cpp,
// ElixirKernel.cpp, ElixirCollections.cpp): the call's arguments with the
// checks and views of them its functions need, and Elixir's terms.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_SEMA_ELIXIRCALL_H
#define NXC_SEMA_ELIXIRCALL_H

#include "Tracer.h"

#include <functional>
#include <string>
#include <vector>

namespace nxc::sema {

/// A call Module.name(args...) of Elixir's standard library.
struct ElixirCall {
  const std::string &module;
  const std::string &name;
  std::vector<Value> &args;
  const Loc &loc;
  size_t n; ///< args.size()

  /// Argument k's location, or the call's.
  Loc argLoc(size_t k) const;
  Status needList(size_t k, const char *fn) const;
  Status needKeywords(size_t k) const;
  Status needAtom(size_t k) const;
  /// The elements of a list or a range, in order.
  Result<std::vector<Value>> elements(size_t k) const;
  /// A keyword list's pair (key, value) as Enum sees it: a tuple.
  Value pairOf(const Value &list, size_t k) const;
  /// The elements of argument k as Enum sees them (keyword pairs as tuples).
  Result<std::vector<Value>> enumerated(size_t k) const;
  Value listOf(std::vector<Value> elems) const;
};

/// A map key as nxc stores it (an atom's name; a string's text after
/// ast::kStringKeyMark), or nullopt for a term nxc does not take as a key.
std::optional<std::string> storedMapKey(const Value &key);
/// The term of a stored key (an atom or a string).
Value mapKeyTerm(const std::string &stored, const Loc &loc);
/// A map's {key, value} tuples in Elixir's order (atoms, then strings).
std::vector<Value> mapPairs(const Value &map, const Loc &loc);
/// A map of {key, value} tuples (later keys win), as Map.new and
/// `for ... into: %{}` build it; `into` is the map they add to.
Result<Value> mapOfPairs(Value into, const std::vector<Value> &pairs, const Loc &loc);

/// Elixir's true or false.
Value boolean(bool b, const Loc &loc);
/// Anything but nil and false.
bool truthy(const Value &v);
/// An atom as Elixir writes it (:ok, :"with space").
std::string atomText(const std::string &a);
/// Elixir's === on terms.
bool sameTerm(const Value &x, const Value &y);
/// The container `v` with each leaf replaced by `leaf(it)`, in the order
/// Nx.Defn.Composite walks containers (CompileTimeElixir.cpp).
Result<Value> mapLeaves(const Value &v, const std::function<Result<Value>(const Value &)> &leaf, const Loc &loc,
                        bool inStruct = false);

} // namespace nxc::sema

#endif // NXC_SEMA_ELIXIRCALL_H

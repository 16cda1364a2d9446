//===- NxLibrary.cpp - Nx's library as a table -----------------------------===//
//
// `Nx.name(args)` inside defn: the forbidden functions are rejected with Nx's
// message, every other name is looked up in one table built from the op
// family files (NxElementwise, NxReductions, NxShape, NxIndex, NxCreation,
// NxLinAlg), and its handler checks arity, options, types and shapes.
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include <fmt/format.h>

#include <unordered_map>

namespace nxc::sema {
namespace {

const std::unordered_map<std::string, NxHandler> &table() {
  static const std::unordered_map<std::string, NxHandler> t = [] {
    std::unordered_map<std::string, NxHandler> m;
    for (auto family : {nxElementwiseFunctions, nxReductionFunctions, nxShapeFunctions, nxIndexFunctions,
                        nxCreationFunctions, nxLinAlgFunctions, nxSpectralFunctions, nxComplexFunctions,
                        nxVectorizeFunctions, nxRandomFunctions, nxConvenienceFunctions, nxGenericReductionFunctions})
      for (const NxEntry &e : family()) m.emplace(e.name, e.handler);
    return m;
  }();
  return t;
}

} // namespace

Result<std::optional<Value>> Tracer::eagerValues(const std::string &fn, const Value &v, const Loc &loc) {
  using Opt = std::optional<Value>;
  if (!eager_) return Opt();
  // Only where Nx would have the tensor's data: no defn on the way here
  // (the repl's own entry aside).
  for (const ast::Function *f : stack_)
    if (f && (f->kind == "defn" || f->kind == "defnp") && f->name != kReplEntryName) return Opt();
  if (v.kind == Value::Int || v.kind == Value::Float) {
    if (fn == "to_number") return Opt(v);
    return Opt(Value::list({v}, loc));
  }
  if (v.kind != Value::Tensor) return Opt();
  const TensorType &type = g_.typeOf(v.node);
  if (type.elem.isComplex())
    return error(loc, fmt::format(FMT_STRING("Nx.{} of a complex tensor ({}) has no value nxc's compile-time "
                                             "Elixir can hold (Elixir's Complex numbers)"),
                                  fn, type.str()));
  Graph now = g_;
  now.results = {v.node};
  now.resultTree = ResultTree{};
  now.resultTree.node = v.node;
  NXC_TRY(values, eager_(now));
  std::vector<Value> flat;
  for (double x : values.f) flat.push_back(Value::real(x, loc));
  for (int64_t x : values.i) flat.push_back(Value::number(x, loc));
  if (fn == "to_number") {
    if (flat.size() != 1 || !type.shape.empty())
      return error(loc, fmt::format(FMT_STRING("Nx.to_number/1 expects a scalar tensor, got one of shape {}"),
                                    shapeString(type.shape)));
    return Opt(flat[0]);
  }
  if (fn == "to_flat_list" || type.shape.empty())
    return Opt(fn == "to_list" && type.shape.empty() ? flat[0] : Value::list(flat, loc));
  // to_list: nested by the shape.
  std::function<Value(size_t, size_t &)> nest = [&](size_t axis, size_t &next) -> Value {
    std::vector<Value> items;
    for (int64_t k = 0; k < type.shape[axis]; ++k)
      items.push_back(axis + 1 == type.shape.size() ? flat[next++] : nest(axis + 1, next));
    return Value::list(items, loc);
  };
  size_t next = 0;
  return Opt(nest(0, next));
}

Result<Value> Tracer::callNx(const std::string &fn, std::vector<Value> args, const Loc &loc) {
  static const std::set<std::string> forbidden = {
      "backend_copy", "backend_deallocate", "backend_transfer", "to_list", "to_binary", "to_number",
      "to_flat_list", "to_heatmap", "to_batched", "load_numpy", "load_numpy_archive!", "compatible?",
      "default_backend", "serialize", "deserialize", "from_pointer", "to_pointer"};
  if (forbidden.count(fn)) {
    if (!args.empty() && (fn == "to_number" || fn == "to_flat_list" || fn == "to_list")) {
      NXC_TRY(now, eagerValues(fn, args[0], loc));
      if (now) return *now;
    }
    return error(loc, fmt::format(FMT_STRING("Nx.{}/{} is not allowed inside defn"), fn, args.size()));
  }
  if (fn == "runtime_call")
    return error(loc, fmt::format(FMT_STRING("Nx.runtime_call/{} runs an Elixir function on the BEAM while the "
                                             "computation runs, and code nxc compiles has no BEAM to call: compute "
                                             "it in defn, or call the function before or after the compiled one"),
                                  args.size()));
  NXC_TRY(vectorized, vectorizedCall(fn, args, loc));
  if (vectorized) return *vectorized;
  // nxc's linear algebra (and covariance) is written for real matrices:
  // Nx's conjugations for complex ones are not, so refuse them by name.
  if (fn.rfind("LinAlg.", 0) == 0 || fn == "covariance")
    for (const Value &a : args)
      if (a.kind == Value::Tensor && g_.typeOf(a.node).elem.isComplex())
        return error(a.loc.valid() ? a.loc : loc,
                     fmt::format(FMT_STRING("nxc does not compute Nx.{} of complex tensors yet ({})"), fn,
                                 g_.typeOf(a.node).str()));
  auto it = table().find(fn);
  if (it == table().end())
    return error(loc, fmt::format(FMT_STRING("Nx.{}/{} is unknown or not supported yet by nxc"), fn, args.size()));
  return (this->*(it->second))(fn, args, loc);
}

} // namespace nxc::sema

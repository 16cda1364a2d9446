//===- ControlFlow.cpp - if, cond and case -------------------------------===//
//
// As Nx traces them (Nx.Defn.Expr's cond/while): a predicate known at
// compile time selects its branch (branch elimination); otherwise every
// branch is traced into a region of a `cond` node, and the branches' leaves
// are merged to one type and shape per leaf; on a vectorized predicate each
// entry selects its side. `case` is compile-time only. `while` is in
// While.cpp.
//
//===----------------------------------------------------------------------===//
#include "ElixirCall.h"
#include "Tracer.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace nxc::sema {

namespace {

const char *kIncompatible = "cond/if expects all branches to return compatible tensor types";

bool isContainer(const Value &v) { return v.kind == Value::Tuple || v.kind == Value::Map; }

} // namespace

/// The positions of a container's elements in the order its leaves are
/// taken: a tuple's in order, a map's (or struct's) by key, so that two maps
/// with the same keys built in different orders line up.
std::vector<size_t> elementOrder(const Value &v) {
  std::vector<size_t> order(v.elems.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  if (v.kind == Value::Map)
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ast::mapKeyLess(v.keys[a], v.keys[b]); });
  return order;
}

bool sameStructure(const Value &a, const Value &b) {
  if (isContainer(a) != isContainer(b)) return false;
  if (!isContainer(a)) return true;
  if (a.kind != b.kind || a.elems.size() != b.elems.size() || a.atom != b.atom) return false;
  std::vector<size_t> oa = elementOrder(a), ob = elementOrder(b);
  for (size_t k = 0; k < oa.size(); ++k) {
    if (a.kind == Value::Map && a.keys[oa[k]] != b.keys[ob[k]]) return false;
    if (!sameStructure(a.elems[oa[k]], b.elems[ob[k]])) return false;
  }
  return true;
}

void flattenLeaves(const Value &v, std::vector<Value> &out) {
  if (isContainer(v))
    for (size_t k : elementOrder(v)) flattenLeaves(v.elems[k], out);
  else out.push_back(v);
}

Value rebuildLeaves(const Value &shape, const std::vector<Value> &leaves, size_t &next) {
  if (!isContainer(shape)) return leaves[next++];
  Value t = shape;
  for (size_t k : elementOrder(shape)) t.elems[k] = rebuildLeaves(shape.elems[k], leaves, next);
  return t;
}

std::optional<bool> Tracer::staticTruth(const Value &v) {
  if (std::optional<bool> t = elixirTruth(v)) return t;
  if (v.kind == Value::Int) return v.i != 0;
  if (v.kind == Value::Float) return v.f != 0;
  if (v.kind == Value::Atom && (v.atom == "true" || v.atom == "false")) return v.atom == "true";
  if (v.kind == Value::Tensor)
    if (const Node *c = constantNode(v.node); c && g_.typeOf(v.node).rank() == 0)
      return c->fvalues.empty() ? c->ivalues[0] != 0 : c->fvalues[0] != 0;
  return std::nullopt;
}

Result<Value> Tracer::ifExpr(const Expr &e, Env &env) {
  bool unless = e.name == "unless";
  const Expr *then = e.children[1].get();
  const Expr *otherwise = e.children.size() > 2 ? e.children[2].get() : nullptr;
  if (unless) std::swap(then, otherwise);
  NXC_TRY(pred, eval(*e.children[0], env));
  Value always = Value::atomValue("true", e.loc);
  std::vector<Clause> clauses = {{nullptr, pred, then}, {nullptr, always, otherwise}};
  return traceClauses(clauses, 0, env, e.loc);
}

Result<Value> Tracer::condExpr(const Expr &e, Env &env) {
  std::vector<Clause> clauses;
  for (size_t k = 0; k + 1 < e.children.size(); k += 2)
    clauses.push_back({e.children[k].get(), Value(), e.children[k + 1].get()});
  return traceClauses(clauses, 0, env, e.loc);
}

Result<Value> Tracer::branch(const Expr *body, Env &env) {
  if (!body) return Value::number(0, Loc{});
  return eval(*body, env);
}

/// Clause k, where the clauses before it were false: a static predicate picks
/// a branch, a runtime one becomes a `cond` node whose else region holds the
/// remaining clauses.
Result<Value> Tracer::traceClauses(const std::vector<Clause> &clauses, size_t k, Env &scope, const Loc &loc) {
  const Clause &clause = clauses[k];
  Env local(&scope);
  Value pred;
  if (clause.pred) {
    NXC_TRY(p, eval(*clause.pred, local));
    pred = p;
  } else {
    pred = clause.predValue;
  }
  Loc predLoc = clause.pred ? clause.pred->loc : (pred.loc.valid() ? pred.loc : loc);
  bool lastClause = k + 1 >= clauses.size();
  std::optional<bool> truth = staticTruth(pred);
  if (lastClause && truth != std::optional<bool>(true))
    return error(predLoc, "cond/if expects at least one branch to always evaluate to true");
  if (truth == std::optional<bool>(true)) return branch(clause.body, local);
  if (truth == std::optional<bool>(false)) return traceClauses(clauses, k + 1, scope, loc);
  if (pred.kind == Value::Vectorized) return vectorizedClause(clauses, k, pred, local, scope, loc);
  if (pred.kind != Value::Tensor)
    return error(predLoc,
                 fmt::format(FMT_STRING("cond/if expects a scalar tensor, a number or a boolean as condition, got {}"),
                             describeValue(pred)));
  if (g_.typeOf(pred.node).rank() != 0)
    return error(predLoc, fmt::format(FMT_STRING("condition must be a scalar tensor, got: {}, consider using "
                                                 "Nx.all/1 or Nx.any/1 to obtain a scalar predicate from tensor"),
                                      g_.typeOf(pred.node).str()));
  // Runtime: then = this body, else = the remaining clauses.
  return runtimeCond(
      pred.node, predLoc, [&]() { return branch(clause.body, local); },
      [&]() { return traceClauses(clauses, k + 1, scope, loc); }, loc);
}

/// Zeros shaped as `v`'s tensors (Nx.broadcast(0, shape): s32), vectorized
/// axes kept: what a vectorized cond yields where a branch does not run.
Result<Value> Tracer::zerosShapedAs(const Value &v, const Loc &loc) {
  std::vector<Value> leaves, zeros;
  flattenLeaves(v, leaves);
  for (const Value &leaf : leaves) {
    if (leaf.kind != Value::Tensor && leaf.kind != Value::Vectorized) {
      zeros.push_back(Value::number(0, loc));
      continue;
    }
    int z = broadcastTo(constant(ElemType::s32(), {}, {}, {0}, loc), g_.typeOf(leaf.node).shape, loc);
    zeros.push_back(leaf.kind == Value::Vectorized ? Value::vectorized(z, leaf.keys, loc) : Value::tensor(z, loc));
  }
  size_t next = 0;
  return rebuildLeaves(v, zeros, next);
}

/// Nx's cond on a vectorized predicate (Nx.Defn.Expr.cond/2): the body runs
/// if any entry holds (else zeros), the remaining clauses unless all entries
/// hold (else zeros), and each entry selects from the two.
Result<Value> Tracer::vectorizedClause(const std::vector<Clause> &clauses, size_t k, const Value &pred, Env &local,
                                       Env &scope, const Loc &loc) {
  const Loc &predLoc = pred.loc.valid() ? pred.loc : loc;
  NXC_TRY(flat, devectorized(pred, false, predLoc));
  NXC_TRY(anyTrue, callNx("any", {flat}, predLoc));
  NXC_TRY(allTrue, callNx("all", {flat}, predLoc));
  Value body;
  NXC_TRY(onAny, runtimeCond(
                     anyTrue.node, predLoc,
                     [&]() -> Result<Value> {
                       NXC_TRY(r, branch(clauses[k].body, local));
                       body = r;
                       return r;
                     },
                     [&]() { return zerosShapedAs(body, loc); }, loc));
  NXC_TRY(unlessAll, runtimeCond(
                         allTrue.node, predLoc, nullptr, [&]() { return traceClauses(clauses, k + 1, scope, loc); },
                         loc, /*zerosForThen=*/true));
  if (!sameStructure(onAny, unlessAll)) return error(loc, kIncompatible);
  std::vector<Value> a, b, picked;
  flattenLeaves(onAny, a);
  flattenLeaves(unlessAll, b);
  for (size_t i = 0; i < a.size(); ++i) {
    NXC_TRY(r, callNx("select", {pred, a[i], b[i]}, loc));
    picked.push_back(r);
  }
  size_t next = 0;
  return rebuildLeaves(onAny, picked, next);
}

/// A cond node on the scalar predicate `predNode`: `thenBranch` traced in its
/// then region, `elseBranch` in its else region; the results' leaves merged
/// per leaf as Nx merges branches. With `zerosForThen`, the then region is
/// traced after the else region and yields zeros shaped as its results (Nx's
/// placeholder for a vectorized cond's skipped clauses); `thenBranch` is
/// then unused.
Result<Value> Tracer::runtimeCond(int predNode, const Loc &predLoc, const std::function<Result<Value>()> &thenBranch,
                                  const std::function<Result<Value>()> &elseBranch, const Loc &loc, bool zerosForThen) {
  Node n;
  n.op = Op::Cond;
  n.operands = {predNode};
  n.loc = predLoc;
  n.regions.resize(2);
  std::vector<Value> branches(2);
  if (zerosForThen) {
    {
      RegionScope scope2(*this, n.regions[1].nodes);
      NXC_TRY(b, elseBranch());
      branches[1] = b;
    }
    RegionScope scope1(*this, n.regions[0].nodes);
    NXC_TRY(z, zerosShapedAs(branches[1], loc));
    branches[0] = z;
  } else {
    {
      RegionScope scope1(*this, n.regions[0].nodes);
      NXC_TRY(a, thenBranch());
      branches[0] = a;
    }
    RegionScope scope2(*this, n.regions[1].nodes);
    NXC_TRY(b, elseBranch());
    branches[1] = b;
  }
  if (!sameStructure(branches[0], branches[1])) return error(loc, kIncompatible);
  std::vector<Value> la, lb;
  flattenLeaves(branches[0], la);
  flattenLeaves(branches[1], lb);
  // A vectorized leaf is its whole tensor in the regions, its vectorized
  // axes the same in both branches; the result is vectorized again.
  std::vector<std::vector<std::string>> vectorizedKeys(la.size());
  for (size_t i = 0; i < la.size(); ++i) {
    Value *pair[2] = {&la[i], &lb[i]};
    const Value *vec = la[i].kind == Value::Vectorized ? &la[i] : lb[i].kind == Value::Vectorized ? &lb[i] : nullptr;
    if (!vec) continue;
    for (Value *v : pair)
      if (v->kind != Value::Vectorized || v->keys != vec->keys || g_.typeOf(v->node).shape.size() < vec->keys.size() ||
          !std::equal(g_.typeOf(v->node).shape.begin(), g_.typeOf(v->node).shape.begin() + (long)vec->keys.size(),
                      g_.typeOf(vec->node).shape.begin()))
        return error(v->loc.valid() ? v->loc : loc,
                     "the branches of a cond return tensors with different vectorized axes; nxc needs the same "
                     "(vectorize both alike)");
    vectorizedKeys[i] = vec->keys;
    for (Value *v : pair) v->kind = Value::Tensor;
  }
  // Per leaf: the merged type and the broadcast shape. As Nx merges the
  // branches (Nx.Shared.binary_type/2), a number takes the other branch's
  // type where it fits (`cond do p -> 1; true -> u8_flag end` is u8, 300
  // with a u8 makes it u16, a float literal takes a float type as it is).
  std::vector<TensorType> types;
  for (size_t i = 0; i < la.size(); ++i) {
    const Value *leaves[2] = {&la[i], &lb[i]};
    std::optional<ElemType> t;
    Shape shape;
    std::vector<const Value *> numbers;
    for (const Value *v : leaves) {
      if (v->kind == Value::Tensor) {
        t = t ? mergeTypes(*t, g_.typeOf(v->node).elem) : g_.typeOf(v->node).elem;
        NXC_TRY(s, broadcastShapes(shape, g_.typeOf(v->node).shape, "cond", loc));
        shape = s;
      } else if (v->kind == Value::Atom && v->isNumber()) {
        t = t ? mergeTypes(*t, ElemType::u8()) : ElemType::u8();
      } else if (v->kind == Value::Int || v->kind == Value::Float) {
        numbers.push_back(v);
      } else {
        return error(v->loc.valid() ? v->loc : loc, kIncompatible);
      }
    }
    if (!t && numbers.size() == 2)
      t = binaryType(*numbers[0], *numbers[1]);
    else
      for (const Value *v : numbers) t = t ? mergeNumber(*t, *v) : typeOfValue(*v);
    std::vector<std::string> names;
    for (const Value *v : leaves)
      if (v->kind == Value::Tensor) {
        NXC_TRY(m, mergeNames(names, namesOf(v->node), shape.size(), loc));
        names = m;
      }
    bool anyName = false;
    for (auto &nm : names) anyName |= !nm.empty();
    types.push_back(TensorType{*t, shape, anyName ? names : std::vector<std::string>{}});
  }
  for (int r = 0; r < 2; ++r) {
    RegionScope scope3(*this, n.regions[r].nodes);
    std::vector<Value> &leaves = r == 0 ? la : lb;
    for (size_t i = 0; i < leaves.size(); ++i) {
      NXC_TRY(leaf, operand(leaves[i], types[i].elem, types[i].shape, n.loc));
      n.regions[r].results.push_back(leaf);
    }
  }
  n.type = types.empty() ? TensorType{ElemType::u8(), {}, {}} : types[0];
  n.resultTypes = types;
  int id = addWithRegions(n);
  std::vector<Value> results;
  for (size_t i = 0; i < types.size(); ++i) {
    int e = elemNode(id, i, n.loc);
    results.push_back(vectorizedKeys[i].empty() ? Value::tensor(e, n.loc)
                                                : Value::vectorized(e, vectorizedKeys[i], n.loc));
  }
  size_t next = 0;
  return rebuildLeaves(branches[0], results, next);
}

Result<bool> Tracer::matchCase(const Expr &p, const Value &v, Env &env) {
  switch (p.kind) {
  case ExprKind::Var:
    if (p.name != "_") env.bind(p.name, v);
    return true;
  case ExprKind::Int:
  case ExprKind::Float:
    if (v.kind == Value::Tensor && matchingHeads_) return false;
    if (v.kind == Value::Tensor)
      return error(p.loc, "case in defn matches compile-time values (shapes, ranks, atoms, numbers), not tensors");
    // Patterns match strictly, as in Elixir: 1.0 does not match 1.
    return p.kind == ExprKind::Int ? v.kind == Value::Int && v.i == p.intValue
                                   : v.kind == Value::Float && v.f == p.floatValue;
  case ExprKind::Atom:
    if (v.kind == Value::Tensor && matchingHeads_) return false;
    if (v.kind == Value::Tensor)
      return error(p.loc, "case in defn matches compile-time values (shapes, ranks, atoms, numbers), not tensors");
    return v.kind == Value::Atom && v.atom == p.name;
  case ExprKind::Tuple: {
    if (v.kind != Value::Tuple || v.elems.size() != p.children.size()) return false;
    for (size_t k = 0; k < p.children.size(); ++k) {
      NXC_TRY(m, matchCase(*p.children[k], v.elems[k], env));
      if (!m) return false;
    }
    return true;
  }
  case ExprKind::Match: {
    NXC_TRY(a, matchCase(*p.children[0], v, env));
    if (!a) return false;
    return matchCase(*p.children[1], v, env);
  }
  case ExprKind::String: return v.kind == Value::String && v.atom == p.name;
  case ExprKind::Unary: {
    // ^x: the value bound to x, matched strictly (1 does not match 1.0).
    // A tensor matches only itself, the same traced expression, as Nx's
    // case compares the expressions' structs at trace time (two equal
    // inputs do not match: Scholar's KNN imputer pins a row this way).
    if (p.name != "^" || p.children.size() != 1 || p.children[0]->kind != ExprKind::Var)
      return error(p.loc, "unsupported pattern in case: only variables, numbers, atoms and tuples can be matched");
    const Value *pinned = env.find(p.children[0]->name);
    if (!pinned) return error(p.loc, fmt::format(FMT_STRING("undefined variable ^{}"), p.children[0]->name));
    return pinned->kind == v.kind && sameTerm(*pinned, v);
  }
  case ExprKind::List: {
    // [a, b] and [h | t]; keyword pairs match as {key, value} tuples.
    if (v.kind != Value::List) return false;
    bool cons = p.name == "|";
    size_t heads = cons ? p.children.size() - 1 : p.children.size();
    if (cons ? v.elems.size() < heads : v.elems.size() != heads) return false;
    for (size_t k = 0; k < heads; ++k) {
      if (p.children[k]->kind == ExprKind::Pair) {
        // [key: pattern] matches a keyword pair with that key.
        if (v.keys[k] != p.children[k]->name) return false;
        NXC_TRY(m, matchCase(*p.children[k]->children[0], v.elems[k], env));
        if (!m) return false;
        continue;
      }
      Value item = v.keys[k].empty() ? v.elems[k]
                                     : Value::tuple({Value::atomValue(v.keys[k], v.loc), v.elems[k]}, v.loc);
      NXC_TRY(m, matchCase(*p.children[k], item, env));
      if (!m) return false;
    }
    if (!cons) return true;
    Value rest = v;
    rest.elems.erase(rest.elems.begin(), rest.elems.begin() + heads);
    rest.keys.erase(rest.keys.begin(), rest.keys.begin() + heads);
    rest.keyLocs.erase(rest.keyLocs.begin(), rest.keyLocs.begin() + heads);
    return matchCase(*p.children.back(), rest, env);
  }
  case ExprKind::Map: {
    // %Nx.Tensor{} matches a tensor; %{k: p} a map with key k whose value matches p.
    if (v.kind == Value::Tensor) {
      // %Nx.Tensor{shape: s, type: t, names: n} matches a tensor's fields.
      if (p.name != "Nx.Tensor") return false;
      for (auto &pair : p.children) {
        if (pair->name == "data") {
          // data: the expression that computes the tensor, as Nx traces it:
          // %Nx.Defn.Expr{op: :metadata, args: [tensor, map]} where
          // Nx.Defn.Expr.metadata/2 attached a map, else the node's op.
          Value data;
          data.kind = Value::Map;
          data.atom = "Nx.Defn.Expr";
          data.loc = v.loc;
          Value args = Value::list({}, v.loc);
          std::string op = v.node >= 0 ? std::string(opName(g_.nodes[v.node].op)) : "tensor";
          if (v.metadata) {
            op = "metadata";
            Value plain = v;
            plain.metadata = nullptr;
            args.elems = {plain, *v.metadata};
            args.keys = {"", ""};
            args.keyLocs = {v.loc, v.loc};
          }
          data.keys = {"args", "op"};
          data.elems = {args, Value::atomValue(op, v.loc)};
          NXC_TRY(m, matchCase(*pair->children[0], data, env));
          if (!m) return false;
          continue;
        }
        if (pair->name != "shape" && pair->name != "type" && pair->name != "names")
          return error(pair->loc, fmt::format(FMT_STRING("nxc matches a tensor's fields shape, type, names and data, "
                                                         "not :{}"),
                                              pair->name));
        std::vector<Value> one = {v};
        NXC_TRY(field, callNx(pair->name, one, pair->loc));
        NXC_TRY(m, matchCase(*pair->children[0], field, env));
        if (!m) return false;
      }
      return true;
    }
    if (v.kind != Value::Map) return false;
    if (!p.name.empty() && p.name != "_" && v.atom != (p.name == "__MODULE__" ? module_->name : p.name)) return false;
    if (p.name == "_" && v.atom.empty()) return false;
    for (auto &pair : p.children) {
      auto it = std::find(v.keys.begin(), v.keys.end(), pair->name);
      if (it == v.keys.end()) return false;
      NXC_TRY(m, matchCase(*pair->children[0], v.elems[it - v.keys.begin()], env));
      if (!m) return false;
    }
    return true;
  }
  default:
    return error(p.loc, "unsupported pattern in case: only variables, numbers, atoms and tuples can be matched");
  }
}

Result<Value> Tracer::caseExpr(const Expr &e, Env &env) {
  // A `with` (read as cases by the parser) is Elixir's, not defn's: Nx
  // compiles it as a call to a function `with`.
  if (e.name == "with" && !inElixir())
    return error(e.loc, "undefined function with/2 (there is no such import): 'with' runs in deftransforms and "
                        "Elixir functions, not in defn");
  NXC_TRY(subject, eval(*e.children[0], env));
  for (size_t k = 1; k + 1 < e.children.size(); k += 2) {
    const Expr *pattern = e.children[k].get();
    const Expr *guard = nullptr;
    if (pattern->kind == ExprKind::Binary && pattern->name == "when") {
      guard = pattern->children[1].get();
      pattern = pattern->children[0].get();
    }
    Env local(&env);
    NXC_TRY(m, matchCase(*pattern, subject, local));
    if (!m) continue;
    if (guard) {
      NXC_TRY(g, eval(*guard, local));
      std::optional<bool> truth = staticTruth(g);
      if (!truth) return error(guard->loc, "guards in case must be known at compile time");
      if (!*truth) continue;
    }
    return eval(*e.children[k + 1], local);
  }
  return error(e.loc, fmt::format(FMT_STRING("no case clause matching {}"), describeValue(subject)));
}

} // namespace nxc::sema

//===- While.cpp - while loops ---------------------------------------------===//
//
// As Nx traces it (Nx.Defn.Expr.while): the condition and body traced once
// each into the regions of a `while` node over the flattened loop state;
// generators (`i <- 0..n`, `x <- tensor`) add a hidden counter, `unroll:`
// traces the body inline instead, and a loop over vectorized state runs once
// per entry.
//
//===----------------------------------------------------------------------===//
#include "ElixirCall.h"
#include "Tracer.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace nxc::sema {

namespace {

const char *kWhileMismatch =
    "the do-block in while must return tensors with the same shape, type, and names as the initial arguments";

} // namespace

namespace {

/// The initial state: variables, `var = value` and tuples of them.
Status checkWhileInit(const Expr &p) {
  switch (p.kind) {
  case ExprKind::Var: return okStatus();
  case ExprKind::Match:
    if (p.children[0]->kind != ExprKind::Var) return error(p.loc, "invalid initial argument for while");
    return okStatus();
  case ExprKind::Tuple:
    for (auto &c : p.children) NXC_CHECK(checkWhileInit(*c));
    return okStatus();
  default: return error(p.loc, "invalid initial argument for while");
  }
}

} // namespace

Result<Value> Tracer::whileExpr(const Expr &e, Env &env, const Value *givenState) {
  const Expr &init = *e.children[0];
  const Expr &condOrGen = *e.children[1];
  const Expr &body = *e.children[2];
  const Expr *optsExpr = e.children.size() > 3 ? e.children[3].get() : nullptr;
  NXC_CHECK(checkWhileInit(init));
  bool generator = condOrGen.kind == ExprKind::Binary && condOrGen.name == "<-";
  if (optsExpr && !generator)
    return error(optsExpr->loc, "options are not supported on while with conditions, only with generators");

  // The state's leaves: tensors and numbers, a struct's container fields
  // only (its keep fields stay as they are, as Nx.Container keeps them).
  std::function<void(const Value &, std::vector<Value> &)> stateLeaves = [&](const Value &v, std::vector<Value> &out) {
    if (v.kind != Value::Tuple && v.kind != Value::Map) {
      out.push_back(v);
      return;
    }
    const std::vector<std::string> *containers = containerFieldsOf(v);
    for (size_t k : elementOrder(v))
      if (v.kind != Value::Map || !isKeepField(containers, v.keys[k])) stateLeaves(v.elems[k], out);
  };
  std::function<Value(const Value &, const std::vector<Value> &, size_t &)> rebuildState =
      [&](const Value &shape, const std::vector<Value> &leaves, size_t &next) -> Value {
    if (shape.kind != Value::Tuple && shape.kind != Value::Map) return leaves[next++];
    const std::vector<std::string> *containers = containerFieldsOf(shape);
    Value t = shape;
    for (size_t k : elementOrder(shape))
      if (shape.kind != Value::Map || !isKeepField(containers, shape.keys[k]))
        t.elems[k] = rebuildState(shape.elems[k], leaves, next);
    return t;
  };

  // The initial value of the state, evaluated in the enclosing scope.
  std::function<Result<Value>(const Expr &)> initValue = [&](const Expr &p) -> Result<Value> {
    if (p.kind == ExprKind::Var) {
      NXC_TRY(v, eval(p, env));
      return v;
    }
    if (p.kind == ExprKind::Match) return eval(*p.children[1], env);
    std::vector<Value> elems;
    for (auto &c : p.children) {
      NXC_TRY(v, initValue(*c));
      elems.push_back(std::move(v));
    }
    return Value::tuple(std::move(elems), p.loc);
  };
  std::function<void(const Expr &, const Value &, Env &)> bindState = [&](const Expr &p, const Value &v, Env &scope) {
    if (p.kind == ExprKind::Var) {
      if (p.name != "_") scope.bind(p.name, v);
    } else if (p.kind == ExprKind::Match) {
      scope.bind(p.children[0]->name, v);
    } else {
      for (size_t k = 0; k < p.children.size(); ++k) bindState(*p.children[k], v.elems[k], scope);
    }
  };
  Value state0;
  if (givenState) {
    state0 = *givenState;
  } else {
    NXC_TRY(s0, initValue(init));
    state0 = s0;
  }
  // Vectorized state with a vectorized condition (or a generator): a loop
  // per entry of its vectorized axes, as Nx runs a loop whose condition is
  // vectorized. With a plain condition, one loop over the state with its
  // vectorized leaves whole, as Nx's single loop (below).
  bool perEntryCondition = false;
  if (holdsVectorized(state0) && !generator) {
    Env probe(&env);
    bindState(init, state0, probe);
    NXC_TRY(c, eval(condOrGen, probe));
    perEntryCondition = holdsVectorized(c);
  }
  if (holdsVectorized(state0) && (perEntryCondition || generator)) {
    NXC_TRY(r, mapVectorized(
                   {state0},
                   [&](std::vector<Value> &entry) -> Result<Value> {
                     ++entryLoopDepth_;
                     auto one = whileExpr(e, env, &entry[0]);
                     --entryLoopDepth_;
                     return one;
                   },
                   e.loc));
    if (perEntryCondition) return r;
    std::function<Result<Value>(const Value &, const Value &)> plainAgain = [&](const Value &was,
                                                                                const Value &now) -> Result<Value> {
      if (was.kind == Value::Tuple && now.kind == Value::Tuple && was.elems.size() == now.elems.size()) {
        Value out = now;
        for (size_t k = 0; k < now.elems.size(); ++k) {
          NXC_TRY(x, plainAgain(was.elems[k], now.elems[k]));
          out.elems[k] = x;
        }
        return out;
      }
      if (was.kind == Value::Vectorized || now.kind != Value::Vectorized) return now;
      // The first entry's value (all entries computed the same).
      const Shape &full = g_.typeOf(now.node).shape;
      size_t k = now.keys.size();
      std::vector<Value> starts(full.size(), Value::number(0, e.loc));
      Shape lengths = full;
      for (size_t a = 0; a < k; ++a) lengths[a] = 1;
      NXC_TRY(first, slice(now.node, starts, lengths, std::vector<int64_t>(full.size(), 1), e.loc));
      return Value::tensor(reshape(first, Shape(full.begin() + k, full.end()), e.loc), e.loc);
    };
    return plainAgain(state0, r);
  }
  std::vector<Value> leaves;
  stateLeaves(state0, leaves);
  std::vector<int> initNodes;
  // Each leaf's vectorized axes (none for a plain one): the loop carries the
  // whole tensor, and the condition and body see it vectorized again.
  std::vector<std::vector<std::string>> leafKeys;
  for (auto &l : leaves) {
    leafKeys.push_back(l.kind == Value::Vectorized ? l.keys : std::vector<std::string>{});
    if (l.kind == Value::Vectorized) {
      initNodes.push_back(l.node);
      continue;
    }
    if (l.kind != Value::Tensor && !l.isNumber())
      return error(
          l.loc.valid() ? l.loc : init.loc,
          fmt::format(FMT_STRING("the initial state of while must hold tensors or numbers, got {}"), describeValue(l)));
    NXC_TRY(t, toTensor(l, init.loc));
    initNodes.push_back(t);
  }

  auto vectorizedAgain = [&](std::vector<Value> vs) {
    for (size_t i = 0; i < vs.size() && i < leafKeys.size(); ++i)
      if (!leafKeys[i].empty()) vs[i] = Value::vectorized(vs[i].node, leafKeys[i], vs[i].loc);
    return vs;
  };

  // Generators iterate a hidden s32 counter k over 0..count-1.
  int64_t count = 0;
  Value genRange, genTensor;
  std::string genVar;
  const Expr *genPattern = nullptr;
  if (generator) {
    genPattern = condOrGen.children[0].get();
    NXC_TRY(g, eval(*condOrGen.children[1], env));
    if (g.kind == Value::Range) {
      if (g.full) return error(condOrGen.loc, "while expects a range with bounds as generator");
      __int128 span = (__int128)g.last - g.i, step = g.step;
      __int128 n = step > 0 ? (span >= 0 ? span / step + 1 : 0) : (span <= 0 ? -span / -step + 1 : 0);
      // The hidden counter is an s32.
      if (n > INT32_MAX)
        return error(condOrGen.loc,
                     fmt::format(FMT_STRING("while: the generator's range has more than {} elements"), INT32_MAX));
      count = (int64_t)n;
      genRange = g;
    } else if (g.kind == Value::Tensor) {
      if (g_.typeOf(g.node).rank() == 0)
        return error(condOrGen.loc, "while expects a tensor of rank 1 or more as generator, got a scalar");
      count = g_.typeOf(g.node).shape[0];
      genTensor = g;
    } else {
      return error(condOrGen.loc,
                   fmt::format(FMT_STRING("while expects a range or a tensor as generator, got {}"), describeValue(g)));
    }
  }
  int64_t unroll = 0;
  if (optsExpr) {
    NXC_TRY(ov, eval(*optsExpr, env));
    NXC_TRY(o, options(ov, {"unroll"}, "while"));
    if (o.count("unroll")) {
      const Value &u = o["unroll"];
      if (u.kind == Value::Atom && (u.atom == "true" || u.atom == "false"))
        unroll = u.atom == "true" ? std::max<int64_t>(count, 1) : 0;
      else if (u.kind == Value::Int && u.i > 0)
        unroll = u.i;
      else
        return error(u.loc, fmt::format(FMT_STRING("while: :unroll must be a boolean or a positive integer, got {}"),
                                        describeValue(u)));
      // Each unrolled iteration is traced: a bound keeps the graph and the time in reason.
      constexpr int64_t kMaxUnrolled = 10000;
      int64_t traced = generator ? std::min(unroll, count) : unroll;
      if (traced > kMaxUnrolled)
        return error(u.loc.valid() ? u.loc : condOrGen.loc,
                     fmt::format(FMT_STRING("while: unrolling would trace {} iterations, more than nxc unrolls ({}); "
                                            "unroll by a smaller number, or leave it out"),
                                 traced, kMaxUnrolled));
    }
  }
  // The generated value for iteration `k` (a scalar s32 tensor).
  auto generated = [&](int k, const Loc &loc) -> Result<Value> {
    if (genRange.kind == Value::Range) {
      NXC_TRY(m,
              binary(Op::Multiply, Value::tensor(k, loc), Value::number(genRange.step, loc), BinaryRule::Arith, loc));
      return binary(Op::Add, m, Value::number(genRange.i, loc), BinaryRule::Arith, loc);
    }
    // An empty generator runs no iteration, but the body is still traced:
    // its row, never read, is zeros of the row's type and shape.
    if (count == 0) {
      const TensorType &t = g_.typeOf(genTensor.node);
      Shape row(t.shape.begin() + 1, t.shape.end());
      int zero = t.elem.isFloat() ? constant(t.elem, {}, {0.0}, {}, loc) : constant(t.elem, {}, {}, {0}, loc);
      return Value::tensor(broadcastTo(zero, row, loc), loc);
    }
    return access(genTensor, Value::tensor(k, loc), loc);
  };
  auto bodyOnce = [&](const Value &state, const Value &kValue, Env &scope) -> Result<Value> {
    bindState(init, state, scope);
    if (generator) {
      NXC_TRY(gv, generated(kValue.node, body.loc));
      if (genPattern->kind != ExprKind::Var) return error(genPattern->loc, "while expects a variable before '<-'");
      scope.bind(genPattern->name, gv);
    }
    return eval(body, scope);
  };
  // A struct's keep fields are not loop state: the body must return them as
  // they came in.
  std::function<std::optional<std::string>(const Value &, const Value &)> changedKeepField =
      [&](const Value &was, const Value &now) -> std::optional<std::string> {
    if ((was.kind != Value::Tuple && was.kind != Value::Map) || was.kind != now.kind) return std::nullopt;
    const std::vector<std::string> *containers = containerFieldsOf(was);
    for (size_t k = 0; k < was.elems.size(); ++k) {
      size_t j = k;
      if (was.kind == Value::Map) {
        auto it = std::find(now.keys.begin(), now.keys.end(), was.keys[k]);
        if (it == now.keys.end()) continue;
        j = it - now.keys.begin();
        if (isKeepField(containers, was.keys[k])) {
          const Value &a = was.elems[k], &b = now.elems[j];
          bool same = a.kind == Value::Function && b.kind == Value::Function
                          ? a.fn == b.fn && a.captured == b.captured && a.fnModule == b.fnModule
                          : sameTerm(a, b);
          if (!same) return was.keys[k];
          continue;
        }
      }
      if (j < now.elems.size())
        if (auto c = changedKeepField(was.elems[k], now.elems[j])) return c;
    }
    return std::nullopt;
  };
  auto checkBody = [&](const Value &result, std::vector<int> &out) -> Status {
    if (!sameStructure(state0, result)) return error(body.loc, kWhileMismatch);
    if (auto field = changedKeepField(state0, result))
      return error(body.loc, fmt::format(FMT_STRING("{} (the struct's keep field :{} changes in the body; keep fields "
                                                    "are not loop state)"),
                                         kWhileMismatch, *field));
    std::vector<Value> rl;
    stateLeaves(result, rl);
    for (size_t i = 0; i < rl.size(); ++i) {
      // As Nx compares them: devectorized (the next state takes the initial
      // value's vectorized axes).
      if (rl[i].kind == Value::Vectorized) {
        const TensorType &want = g_.typeOf(initNodes[i]), &got = g_.typeOf(rl[i].node);
        if (!want.sameTypeAndShape(got))
          return error(body.loc, fmt::format(FMT_STRING("{} (state element {}: the initial value is {}, the body "
                                                        "returns {}, vectorized axes first)"),
                                             kWhileMismatch, i, want.str(), got.str()));
        out.push_back(rl[i].node);
        continue;
      }
      NXC_TRY(t, toTensor(rl[i], body.loc));
      const TensorType &want = g_.typeOf(initNodes[i]), &got = g_.typeOf(t);
      if (!want.sameTypeAndShape(got))
        return error(body.loc,
                     fmt::format(FMT_STRING("{} (state element {}: the initial value is {}, the body returns {})"),
                                 kWhileMismatch, i, want.str(), got.str()));
      out.push_back(t);
    }
    return okStatus();
  };

  // One traced iteration: the next state from `state` for counter `kValue`.
  auto step = [&](const Value &state, const Value &kValue) -> Result<Value> {
    Env scope(&env);
    NXC_TRY(r, bodyOnce(state, kValue, scope));
    std::vector<int> out;
    NXC_CHECK(checkBody(r, out));
    std::vector<Value> vs;
    for (int o : out) vs.push_back(Value::tensor(o, body.loc));
    size_t pos = 0;
    return rebuildState(state0, vectorizedAgain(vs), pos);
  };
  auto constantCounter = [&](int64_t k) {
    return Value::tensor(constant(ElemType::s32(), {}, {}, {k}, body.loc), body.loc);
  };

  // unroll covering every iteration: the body traced inline.
  if (unroll > 0 && unroll >= count) {
    std::vector<Value> cur;
    for (int n : initNodes) cur.push_back(Value::tensor(n, init.loc));
    size_t pos = 0;
    Value state = rebuildState(state0, vectorizedAgain(cur), pos);
    for (int64_t k = 0; k < count; ++k) {
      NXC_TRY(next, step(state, constantCounter(k)));
      state = next;
    }
    return state;
  }

  if (whileDepth_ >= kMaxWhileDepth)
    return error(e.loc, fmt::format(FMT_STRING("while loops nested more than {} deep: nxc compiles loop nests up to {} "
                                               "levels (compile time grows faster than the depth beyond that)"),
                                    kMaxWhileDepth, kMaxWhileDepth));
  struct WhileDepth {
    int &d;
    explicit WhileDepth(int &x) : d(x) { ++d; }
    ~WhileDepth() { --d; }
  } nested(whileDepth_);
  Node n;
  n.op = Op::While;
  n.loc = e.loc;
  n.regions.resize(2);
  if (initNodes.empty() && !generator)
    return error(init.loc, "the state of while must hold at least one tensor (the loop would have no effect)");
  std::vector<int> operands = initNodes;
  int counterInit = -1;
  if (generator) {
    counterInit = constant(ElemType::s32(), {}, {}, {0}, e.loc);
    operands.push_back(counterInit);
  }
  n.operands = operands;
  auto regionArgs = [&](Region &r) {
    std::vector<Value> vs;
    for (size_t i = 0; i < operands.size(); ++i) {
      Node a;
      a.op = Op::RegionArg;
      a.param = (int)i;
      a.type = g_.typeOf(operands[i]);
      a.loc = e.loc;
      int id = add(a);
      r.args.push_back(id);
      vs.push_back(Value::tensor(id, e.loc));
    }
    return vs;
  };
  {
    RegionScope scope(*this, n.regions[0].nodes);
    std::vector<Value> args = regionArgs(n.regions[0]);
    Env local(&env);
    Value pred;
    if (generator) {
      int64_t bound = unroll > 0 ? count / unroll : count;
      NXC_TRY(p, binary(Op::Less, args.back(), Value::number(bound, e.loc), BinaryRule::Compare, e.loc));
      pred = p;
    } else {
      size_t pos = 0;
      bindState(init, rebuildState(state0, vectorizedAgain(args), pos), local);
      NXC_TRY(p, eval(condOrGen, local));
      pred = p;
    }
    if (pred.kind != Value::Tensor && !pred.isNumber())
      return error(condOrGen.loc,
                   fmt::format(FMT_STRING("the condition of while must be a scalar tensor or a number, got {}"),
                               describeValue(pred)));
    NXC_TRY(pt, toTensor(pred, condOrGen.loc));
    if (g_.typeOf(pt).rank() != 0)
      return error(condOrGen.loc, fmt::format(FMT_STRING("condition must be a scalar tensor, got: {}, consider using "
                                                         "Nx.all/1 or Nx.any/1 to obtain a scalar predicate from "
                                                         "tensor"),
                                              g_.typeOf(pt).str()));
    n.regions[0].results = {pt};
  }
  {
    RegionScope scope(*this, n.regions[1].nodes);
    std::vector<Value> args = regionArgs(n.regions[1]);
    Value k = generator ? args.back() : Value();
    std::vector<Value> stateArgs(args.begin(), args.begin() + initNodes.size());
    size_t pos = 0;
    Value state = rebuildState(state0, vectorizedAgain(stateArgs), pos);
    int64_t perIter = unroll > 0 ? unroll : 1;
    for (int64_t u = 0; u < perIter; ++u) {
      Value kk = k;
      if (generator && unroll > 0) {
        NXC_TRY(scaled, binary(Op::Multiply, k, Value::number(unroll, e.loc), BinaryRule::Arith, e.loc));
        NXC_TRY(off, binary(Op::Add, scaled, Value::number(u, e.loc), BinaryRule::Arith, e.loc));
        kk = off;
      }
      NXC_TRY(next, step(state, kk));
      state = next;
    }
    std::vector<Value> fl;
    stateLeaves(state, fl);
    for (auto &v : fl) n.regions[1].results.push_back(v.node);
    if (generator) {
      NXC_TRY(next, binary(Op::Add, k, Value::number(1, e.loc), BinaryRule::Arith, e.loc));
      n.regions[1].results.push_back(next.node);
    }
  }
  for (int o : operands) n.resultTypes.push_back(g_.typeOf(o));
  n.type = n.resultTypes[0];
  // A chunked unroll runs count / unroll chunks; the rest is traced after it.
  int64_t chunks = generator && unroll > 0 ? count / unroll : count;
  int id = addWithRegions(n);
  std::vector<Value> results;
  for (size_t i = 0; i < initNodes.size(); ++i) results.push_back(Value::tensor(elemNode(id, i, e.loc), e.loc));
  size_t pos = 0;
  Value state = rebuildState(state0, vectorizedAgain(results), pos);
  // Leftover iterations of a chunked unroll, traced after the loop.
  for (int64_t k = chunks * (unroll > 0 ? unroll : 1); generator && unroll > 0 && k < count; ++k) {
    NXC_TRY(next, step(state, constantCounter(k)));
    state = next;
  }
  return state;
}

} // namespace nxc::sema

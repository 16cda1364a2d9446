//===- Grad.cpp - reverse-mode automatic differentiation on the graph -----===//
//
// `grad(x, fun)` as Nx's Nx.Defn.Grad computes it: `fun` is traced on aliases
// of the leaves of `x` (metadata nodes, so that what the caller computed from
// `x` before stays constant), and the backward pass walks the traced nodes
// from the output back to those aliases, seeded with an f32 1.0 of the
// output's shape. Each op's rule adds nodes to the same graph, so the
// backward pass reuses the forward values instead of recomputing them, and
// the gradient types follow Nx's promotion rules (an s32 input gets an f32
// gradient). `cond` is differentiated branch by branch inside a new `cond`;
// `while` by running the body's vector-Jacobian product from the last
// iteration to the first, each state rematerialized from the initial one (as
// Nx does: O(n^2) time, constant memory).
//
//===----------------------------------------------------------------------===//
#include "Backprop.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

namespace nxc::sema {

int Backprop::unbroadcast(const Shape &xs, const Shape &s, const std::vector<int64_t> &axes, int g) {
  std::vector<int64_t> sum, kept;
  std::vector<bool> implicit(xs.size(), false);
  for (size_t i = 0; i < axes.size(); ++i)
    if (s[axes[i]] != 1 && xs[i] == 1) {
      sum.push_back(axes[i]);
      implicit[i] = true;
    }
  for (int64_t a = 0; a < (int64_t)s.size(); ++a)
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) sum.push_back(a);
  std::sort(sum.begin(), sum.end());
  int r = sum.empty() ? g : sumAxes(g, sum);
  if (!ok(r)) return r;
  // The remaining axes come in output order; put them in operand order.
  std::vector<int64_t> keptOut;
  for (size_t i = 0; i < xs.size(); ++i)
    if (!implicit[i]) keptOut.push_back(axes[i]);
  std::vector<int64_t> order = argsortPerm(keptOut);
  bool identity = true;
  for (size_t i = 0; i < order.size(); ++i) identity &= order[i] == (int64_t)i;
  if (!identity) {
    // Sum result axis j holds operand axis keptOut-sorted j; invert.
    std::vector<int64_t> perm(order.size());
    for (size_t j = 0; j < order.size(); ++j) perm[order[j]] = (int64_t)j;
    r = t_.transpose(r, perm, loc_);
  }
  return t_.reshape(r, xs, loc_);
}

void Backprop::collectInside(int id, std::set<int> &inside) {
  for (auto &region : g_.nodes[id].regions)
    for (int m : region.nodes) {
      inside.insert(m);
      if (!g_.nodes[m].regions.empty()) collectInside(m, inside);
    }
}

std::vector<int> Backprop::captures(int id) {
  std::set<int> inside, outer;
  collectInside(id, inside);
  auto visit = [&](int o) {
    if (!inside.count(o) && dep(o)) outer.insert(o);
  };
  std::function<void(int)> walk = [&](int n) {
    for (auto &region : g_.nodes[n].regions) {
      for (int m : region.nodes) {
        for (int o : g_.nodes[m].operands) visit(o);
        if (!g_.nodes[m].regions.empty()) walk(m);
      }
      for (int r : region.results) visit(r);
    }
  };
  walk(id);
  return std::vector<int>(outer.begin(), outer.end());
}

std::vector<int> Backprop::cloneNodes(const std::vector<int> &ids, std::map<int, int> &remap) {
  std::vector<int> out;
  for (int id : ids) {
    Node c = g_.nodes[id];
    for (int &o : c.operands) o = mapped(remap, o);
    c.parent = -1;
    for (auto &region : c.regions) {
      std::vector<int> inner = region.nodes;
      region.nodes.clear();
      RegionScope scope(t_, region.nodes);
      cloneNodes(inner, remap); // into region.nodes, through the scope
      for (int &a : region.args) a = mapped(remap, a);
      for (int &r : region.results) r = mapped(remap, r);
    }
    int nid = t_.addWithRegions(c);
    remap[id] = nid;
    setDep(nid, dep(id));
    if (auto it = t_.customGrads_.find(id); it != t_.customGrads_.end()) {
      Tracer::CustomGrad cg = it->second;
      for (int &in : cg.inputs) in = mapped(remap, in);
      for (int &leaf : cg.leaves) leaf = leaf == id ? nid : mapped(remap, leaf);
      t_.customGrads_[nid] = cg;
    }
    out.push_back(nid);
  }
  return out;
}

Status Backprop::sweep(const std::vector<int> &scope, Adjoints &a) {
  for (auto it = scope.rbegin(); it != scope.rend(); ++it) {
    int id = *it;
    if (stops_.count(id) || !dep(id)) continue;
    Op op = g_.nodes[id].op;
    if (op == Op::Cond || op == Op::While) {
      if (a.results.count(id)) op == Op::Cond ? condRule(id, a) : whileRule(id, a);
    } else if (auto f = a.node.find(id); f != a.node.end() && !f->second.empty()) {
      rule(id, sumList(f->second), a);
    }
    if (!err_.ok()) return err_;
  }
  return err_;
}

void Backprop::condRule(int id, Adjoints &a) {
  std::vector<int> caps = captures(id);
  if (caps.empty()) return;
  const Node c = g_.nodes[id];
  std::vector<int> gs(c.resultTypes.size(), -1);
  for (auto &[k, list] : a.results[id]) gs[k] = sumList(list);
  Node nn;
  nn.op = Op::Cond;
  nn.operands = {c.operands[0]};
  nn.loc = loc_;
  nn.regions.resize(2);
  std::vector<std::vector<int>> leaves(2);
  for (int r = 0; r < 2; ++r) {
    RegionScope scope(t_, nn.regions[r].nodes);
    std::map<int, int> remap;
    std::vector<int> cloned = cloneNodes(c.regions[r].nodes, remap);
    Adjoints b;
    for (size_t k = 0; k < gs.size(); ++k) {
      int res = mapped(remap, c.regions[r].results[k]);
      if (gs[k] >= 0 && dep(res)) b.node[res].push_back(gs[k]);
    }
    if (!sweep(cloned, b).ok()) return;
    for (int cap : caps) leaves[r].push_back(b.node.count(cap) ? sumList(b.node[cap]) : -1);
  }
  for (size_t i = 0; i < caps.size(); ++i) {
    std::optional<ElemType> t;
    for (int r = 0; r < 2; ++r)
      if (leaves[r][i] >= 0) t = t ? mergeTypes(*t, type(leaves[r][i]).elem) : type(leaves[r][i]).elem;
    nn.resultTypes.push_back(TensorType{t ? *t : ElemType::f32(), shape(caps[i]), {}});
  }
  for (int r = 0; r < 2; ++r) {
    RegionScope scope(t_, nn.regions[r].nodes);
    for (size_t i = 0; i < caps.size(); ++i) {
      const TensorType &want = nn.resultTypes[i];
      int v = leaves[r][i] >= 0 ? t_.cast(leaves[r][i], want.elem, loc_) : zeros(want.elem, want.shape);
      nn.regions[r].results.push_back(v);
    }
  }
  nn.type = nn.resultTypes[0];
  int nid = t_.addWithRegions(nn);
  for (size_t i = 0; i < caps.size(); ++i) contribute(a, caps[i], t_.elemNode(nid, i, loc_));
}

void Backprop::whileRule(int id, Adjoints &a) {
  const Node w = g_.nodes[id];
  for (int cap : captures(id))
    if (dep(cap))
      return fail(error(w.loc, "cannot differentiate through this while loop: its body uses a value computed from "
                               "the differentiated input that is not part of the loop state (pass it in the state)"));
  size_t n = w.operands.size();
  // The gradient of each state element, in a float type fixed for the loop.
  std::vector<ElemType> gt;
  std::vector<int> g0;
  for (size_t i = 0; i < n; ++i) {
    const TensorType &st = type(w.operands[i]);
    gt.push_back(st.elem.isFloat() ? mergeTypes(ElemType::f32(), st.elem) : ElemType::f32());
    auto it = a.results[id].find((int)i);
    int g = it != a.results[id].end() ? t_.cast(sumList(it->second), gt[i], loc_) : zeros(gt[i], st.shape);
    g0.push_back(g);
  }
  ElemType s32 = ElemType::s32();
  auto regionArg = [&](Region &r, const TensorType &t) {
    Node arg;
    arg.op = Op::RegionArg;
    arg.param = (int)r.args.size();
    arg.type = t;
    arg.loc = loc_;
    int aid = t_.add(arg);
    setDep(aid, true);
    r.args.push_back(aid);
    return aid;
  };
  auto finish = [&](Node &loop) {
    loop.type = loop.resultTypes[0];
    return t_.addWithRegions(loop);
  };
  // Clones region r of the original loop onto `args`; returns its results
  // and the cloned nodes.
  auto cloneRegion = [&](int r, const std::vector<int> &args, std::vector<int> &cloned) {
    std::map<int, int> remap;
    for (size_t i = 0; i < n; ++i) remap[w.regions[r].args[i]] = args[i];
    std::vector<int> inner;
    for (int m : w.regions[r].nodes)
      if (g_.nodes[m].op != Op::RegionArg) inner.push_back(m);
    cloned = cloneNodes(inner, remap);
    std::vector<int> results;
    for (int res : w.regions[r].results) results.push_back(mapped(remap, res));
    return results;
  };

  // 1. The trip count: the loop again with a counter.
  Node count;
  count.op = Op::While;
  count.loc = loc_;
  count.regions.resize(2);
  int zero = t_.constant(s32, {}, {}, {0}, loc_);
  count.operands = w.operands;
  count.operands.push_back(zero);
  for (int o : count.operands) count.resultTypes.push_back(type(o));
  for (int r = 0; r < 2; ++r) {
    RegionScope scope(t_, count.regions[r].nodes);
    std::vector<int> args, cloned;
    for (size_t i = 0; i <= n; ++i) args.push_back(regionArg(count.regions[r], count.resultTypes[i]));
    std::vector<int> res = cloneRegion(r, args, cloned);
    if (r == 1) res.push_back(add(tv(args[n]), Value::number(1, loc_)));
    count.regions[r].results = res;
  }
  int counted = finish(count);
  int trips = t_.elemNode(counted, n, loc_);

  // 2. Backwards: state {s, g, k, j, s0}.
  Node back;
  back.op = Op::While;
  back.loc = loc_;
  back.regions.resize(2);
  back.operands = w.operands;
  back.operands.insert(back.operands.end(), g0.begin(), g0.end());
  back.operands.push_back(trips);
  back.operands.push_back(zero);
  back.operands.insert(back.operands.end(), w.operands.begin(), w.operands.end());
  for (int o : back.operands) back.resultTypes.push_back(TensorType{type(o).elem, type(o).shape, {}});
  for (int r = 0; r < 2; ++r) {
    RegionScope scope(t_, back.regions[r].nodes);
    std::vector<int> args;
    for (auto &t : back.resultTypes) args.push_back(regionArg(back.regions[r], t));
    int k = args[2 * n], j = args[2 * n + 1];
    if (r == 0) {
      back.regions[0].results = {nx("greater", tv(k), Value::number(0, loc_))};
      continue;
    }
    std::vector<int> s(args.begin(), args.begin() + n), gs(args.begin() + n, args.begin() + 2 * n),
        s0(args.begin() + 2 * n + 2, args.end());
    int remat = nx("less", tv(j), tv(sub(tv(k), Value::number(1, loc_))));
    std::vector<int> cloned;
    std::vector<int> next = cloneRegion(1, s, cloned);
    Adjoints b;
    for (size_t i = 0; i < n; ++i)
      if (dep(next[i])) b.node[next[i]].push_back(gs[i]);
    if (!sweep(cloned, b).ok()) return;
    std::vector<int> out;
    for (size_t i = 0; i < n; ++i) out.push_back(select(remat, next[i], s0[i]));
    for (size_t i = 0; i < n; ++i) {
      int vjp = b.node.count(s[i]) ? t_.cast(sumList(b.node[s[i]]), gt[i], loc_) : zeros(gt[i], type(s[i]).shape);
      out.push_back(select(remat, gs[i], vjp));
    }
    out.push_back(select(remat, k, sub(tv(k), Value::number(1, loc_))));
    out.push_back(select(remat, add(tv(j), Value::number(1, loc_)), zero));
    out.insert(out.end(), s0.begin(), s0.end());
    back.regions[1].results = out;
  }
  if (!err_.ok()) return;
  int backId = finish(back);
  for (size_t i = 0; i < n; ++i) contribute(a, w.operands[i], t_.elemNode(backId, n + i, loc_));
}

Result<std::vector<int>> Backprop::run(int y, const std::vector<int> &targets) {
  stops_.insert(targets.begin(), targets.end());
  int lo = *std::min_element(targets.begin(), targets.end());
  int end = (int)g_.nodes.size();
  dep_.assign(end, 0);
  for (int id = lo; id < end; ++id) {
    const Node &n = g_.nodes[id];
    bool d = false;
    if (stops_.count(id)) d = true;
    else if (zeroGradient(n.op) || (n.op == Op::Metadata && n.param == Tracer::kStopGrad)) d = false;
    else if (n.op == Op::Metadata && n.param == Tracer::kCustomGrad) {
      for (int in : t_.customGrads_[id].inputs) d |= dep(in);
    } else if (n.op == Op::Metadata && n.param == Tracer::kClip) {
      for (size_t k = 1; k < n.operands.size(); ++k) d |= dep(n.operands[k]);
    } else if (n.op == Op::RegionArg) {
      if (n.parent >= 0)
        for (int o : g_.nodes[n.parent].operands) d |= dep(o);
    } else {
      for (int o : n.operands) d |= dep(o);
      for (auto &region : n.regions) {
        for (int m : region.nodes) d |= dep(m);
        for (int r : region.results) d |= dep(r);
      }
    }
    dep_[id] = d;
  }
  // The scope: the region being traced, or the top level.
  std::vector<int> scope;
  if (!t_.regions_.empty()) {
    for (int id : *t_.regions_.back())
      if (id >= lo && id <= y) scope.push_back(id);
  } else {
    for (int id = lo; id <= y; ++id)
      if (g_.nodes[id].parent < 0) scope.push_back(id);
  }
  Adjoints a;
  if (dep(y)) {
    int seed = t_.broadcastTo(scalarF32(1.0), shape(y), loc_);
    a.node[y].push_back(seed);
    NXC_CHECK(sweep(scope, a));
  }
  std::vector<int> out;
  for (int t : targets) {
    int r = a.node.count(t) ? sumList(a.node[t]) : zeros(ElemType::f32(), shape(t));
    out.push_back(r);
  }
  NXC_CHECK(err_);
  return out;
}

int Tracer::metadata(int x, int kind, const Loc &loc) {
  Node n;
  n.op = Op::Metadata;
  n.operands = {x};
  n.param = kind;
  n.type = g_.typeOf(x);
  n.loc = loc;
  return add(n);
}

Result<Value> Tracer::stopGrad(const Value &v, const Loc &loc) {
  std::vector<Value> leaves;
  flattenLeaves(v, leaves);
  for (auto &l : leaves)
    if (l.kind == Value::Tensor) l = Value::tensor(metadata(l.node, kStopGrad, loc), l.loc);
  size_t next = 0;
  return rebuildLeaves(v, leaves, next);
}

Result<Value> Tracer::customGrad(std::vector<Value> &args, const Loc &loc) {
  if (args[1].kind != Value::List)
    return error(args[1].loc.valid() ? args[1].loc : loc,
                 "custom_grad/3 expects a list of inputs as its second argument");
  if (args[2].kind != Value::Function)
    return error(args[2].loc.valid() ? args[2].loc : loc, "custom_grad/3 expects a function as its third argument");
  CustomGrad cg;
  for (auto &in : args[1].elems) {
    NXC_TRY(t, toTensor(in, in.loc.valid() ? in.loc : loc));
    cg.inputs.push_back(t);
  }
  cg.fn = args[2];
  cg.structure = args[0];
  std::vector<Value> leaves;
  flattenLeaves(args[0], leaves);
  for (auto &l : leaves) {
    NXC_TRY(t, toTensor(l, l.loc.valid() ? l.loc : loc));
    int id = metadata(t, kCustomGrad, loc);
    cg.leaves.push_back(id);
    l = Value::tensor(id, loc);
  }
  for (int id : cg.leaves) customGrads_[id] = cg;
  size_t next = 0;
  return rebuildLeaves(args[0], leaves, next);
}

Result<Value> Tracer::gradCall(const std::string &name, std::vector<Value> &args, const Loc &loc) {
  bool withValue = name == "value_and_grad";
  const Value &fn = args[1];
  if (fn.kind != Value::Function)
    return error(
        fn.loc.valid() ? fn.loc : loc,
        fmt::format(FMT_STRING("{} expects a function as its second argument, got {}"), name, describeValue(fn)));
  if (withValue && args.size() > 2 && args[2].kind != Value::Function)
    return error(args[2].loc.valid() ? args[2].loc : loc,
                 fmt::format(FMT_STRING("value_and_grad expects a function as its third argument, got {}"),
                             describeValue(args[2])));
  std::vector<Value> leaves;
  flattenLeaves(args[0], leaves);
  std::vector<int> targets;
  for (auto &l : leaves) {
    NXC_TRY(t, toTensor(l, l.loc.valid() ? l.loc : loc));
    targets.push_back(metadata(t, kToGrad, loc));
    l = Value::tensor(targets.back(), l.loc.valid() ? l.loc : loc);
  }
  if (targets.empty())
    return error(loc, fmt::format(FMT_STRING("{} expects a tensor or a tuple of tensors to differentiate"), name));
  size_t next = 0;
  Value aliases = rebuildLeaves(args[0], leaves, next);
  NXC_TRY(value, applyFunction(fn, {aliases}, loc));
  Value out = value;
  if (withValue && args.size() > 2) {
    NXC_TRY(t, applyFunction(args[2], {value}, loc));
    out = t;
  }
  if (out.kind != Value::Tensor && !out.isNumber())
    return error(loc, fmt::format(FMT_STRING("{} expects the function to return a tensor or a number, got {}"), name,
                                  describeValue(out)));
  NXC_TRY(y, toTensor(out, loc));
  Backprop bp(*this, loc);
  NXC_TRY(grads, bp.run(y, targets));
  std::vector<Value> gl;
  for (int gnode : grads) gl.push_back(Value::tensor(gnode, loc));
  next = 0;
  Value graded = rebuildLeaves(args[0], gl, next);
  if (!withValue) return graded;
  return Value::tuple({value, graded}, loc);
}

} // namespace nxc::sema

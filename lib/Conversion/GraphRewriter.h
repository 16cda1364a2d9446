//===- GraphRewriter.h - rewriting a graph node by node ----------*- C++ -*-===//
//
// What the graph-to-graph steps before the nx dialect share (ComplexToReal,
// SubByteIntegers): each node of the input becomes zero or more nodes of the
// output (`expand`, which returns the node standing for it), in order, with
// its location; parents, regions, parameters, results and baked constants
// follow the mapping. Helpers build the ops the rewrites compose.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_CONVERSION_GRAPHREWRITER_H
#define NXC_CONVERSION_GRAPHREWRITER_H

#include "nxc/Sema/Graph.h"

namespace nxc {

class GraphRewriter {
public:
  explicit GraphRewriter(const Graph &in) : in_(in), map_(in.nodes.size(), -1), made_(in.nodes.size()) {}
  virtual ~GraphRewriter() = default;

  Graph run() {
    out_.function = in_.function;
    out_.paramNames = in_.paramNames;
    out_.printing = in_.printing;
    for (size_t i = 0; i < in_.nodes.size(); ++i) {
      cur_ = (int)i;
      map_[i] = expand(in_.nodes[i]);
    }
    // Parents and regions, now that every node has its new id.
    for (size_t i = 0; i < in_.nodes.size(); ++i) {
      for (int m : made_[i]) out_.nodes[m].parent = in_.nodes[i].parent < 0 ? -1 : map_[in_.nodes[i].parent];
      const Node &n = in_.nodes[i];
      if (n.regions.empty()) continue;
      Node &o = out_.nodes[map_[i]];
      o.regions.clear();
      for (const Region &r : n.regions) {
        Region nr;
        for (int a : r.args) nr.args.push_back(map_[a]);
        for (int m : r.nodes) nr.nodes.insert(nr.nodes.end(), made_[m].begin(), made_[m].end());
        for (int y : r.results) nr.results.push_back(map_[y]);
        o.regions.push_back(std::move(nr));
      }
    }
    for (int p : in_.params) out_.params.push_back(map_[p]);
    for (int r : in_.results) out_.results.push_back(map_[r]);
    for (int c : in_.bakedConstants) out_.bakedConstants.push_back(map_[c]);
    out_.resultTree = in_.resultTree;
    remapTree(out_.resultTree);
    return std::move(out_);
  }

protected:
  /// The nodes standing for `n`; returns the one its users read.
  virtual int expand(const Node &n) = 0;
  /// The type a value of type `t` has after the rewrite.
  virtual TensorType mapType(const TensorType &t) const = 0;

  /// n with its operands mapped and its types rewritten.
  Node copyOf(const Node &n) {
    Node c = n;
    for (int &o : c.operands) o = map_[o];
    c.type = mapType(n.type);
    for (auto &t : c.resultTypes) t = mapType(t);
    return c;
  }
  int copy(const Node &n) { return emit(copyOf(n)); }
  /// The new node of operand k of n.
  int operandOf(const Node &n, size_t k) const { return map_[n.operands[k]]; }

  int emit(Node n) {
    n.loc = in_.nodes[cur_].loc;
    int id = out_.add(std::move(n));
    made_[cur_].push_back(id);
    return id;
  }
  int make(Op op, std::vector<int> operands, TensorType type) {
    Node n;
    n.op = op;
    n.operands = std::move(operands);
    n.type = std::move(type);
    return emit(std::move(n));
  }
  const TensorType &type(int id) const { return out_.nodes[id].type; }
  TensorType typed(int like, ElemType e) const { return TensorType{e, type(like).shape, {}}; }

  int cast(int x, ElemType t) { return type(x).elem == t ? x : make(Op::AsType, {x}, typed(x, t)); }
  int unary(Op op, int x) { return make(op, {x}, typed(x, type(x).elem)); }
  int binary(Op op, int a, int b) { return make(op, {a, b}, typed(a, type(a).elem)); }
  int predicate(Op op, int a, int b) { return make(op, {a, b}, typed(a, ElemType::u8())); }
  int select(int p, int a, int b) { return make(Op::Select, {p, a, b}, typed(a, type(a).elem)); }
  /// A scalar constant broadcast to `shape`.
  int filled(ElemType t, double v, const Shape &shape) {
    Node c;
    c.op = Op::Constant;
    c.type = TensorType{t, {}, {}};
    if (t.isInteger())
      c.ivalues = {(int64_t)v};
    else
      c.fvalues = {v};
    int k = emit(std::move(c));
    if (shape.empty()) return k;
    Node b;
    b.op = Op::Broadcast;
    b.operands = {k};
    b.type = TensorType{t, shape, {}};
    return emit(std::move(b));
  }
  int like(int x, double v) { return filled(type(x).elem, v, type(x).shape); }
  /// Elements [start, start + length) of x along `axis`.
  int sliceAlong(int x, int64_t axis, int64_t start, int64_t length) {
    Shape s = type(x).shape;
    std::vector<int64_t> starts(s.size(), 0);
    starts[(size_t)axis] = start;
    s[(size_t)axis] = length;
    Node n;
    n.op = Op::Slice;
    n.operands = {x};
    n.attrs = {{"start_indices", starts},
               {"lengths", std::vector<int64_t>(s.begin(), s.end())},
               {"strides", std::vector<int64_t>(s.size(), 1)}};
    n.type = TensorType{type(x).elem, s, {}};
    return emit(std::move(n));
  }
  /// The tensors (of one type and rank) joined along `axis`.
  int concatAlong(std::vector<int> xs, int64_t axis) {
    if (xs.size() == 1) return xs[0];
    Shape s = type(xs[0]).shape;
    s[(size_t)axis] = 0;
    for (int x : xs) s[(size_t)axis] += type(x).shape[(size_t)axis];
    Node n;
    n.op = Op::Concatenate;
    n.type = TensorType{type(xs[0]).elem, s, {}};
    n.operands = std::move(xs);
    n.axes = {axis};
    return emit(std::move(n));
  }

  const Graph &in_;
  Graph out_;

private:
  void remapTree(ResultTree &t) {
    if (t.node >= 0) t.node = map_[t.node];
    for (auto &e : t.elems) remapTree(e);
  }

  std::vector<int> map_;
  std::vector<std::vector<int>> made_;
  int cur_ = 0;
};

} // namespace nxc

#endif // NXC_CONVERSION_GRAPHREWRITER_H

//===- Graph.h - the typed expression graph Sema produces -------*- C++ -*-===//
//
// What tracing a defn yields, like Nx's Nx.Defn.Expr: a DAG of Nx operations
// on tensors of known type and shape, in dependency order. All implicit
// broadcasting and promotion are explicit here (`broadcast`, `as_type` nodes),
// and every local call is inlined. IR generation turns it into the nx dialect.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_SEMA_GRAPH_H
#define NXC_SEMA_GRAPH_H

#include "nxc/Frontend/Diagnostics.h"
#include "nxc/Sema/Op.h"
#include "nxc/Sema/Types.h"

#include <deque>
#include <string>
#include <vector>

namespace nxc {

struct Node;

/// The body of a control-flow node: `cond` has a then and an else region,
/// `while` a condition and a body region. `args` are the region's
/// `region_arg` nodes (while: the loop state), `nodes` every node traced in
/// the region in order (args included), `results` what it yields.
struct Region {
  std::vector<int> args;
  std::vector<int> nodes;
  std::vector<int> results;
};

/// One operation: `op` is its kind (Ops.def); opName(op) is Nx's name
/// ("subtract", "reduce_max", ...), and the nx dialect op is "nx." + it.
struct Node {
  Op op = Op::Constant;
  std::vector<int> operands;
  TensorType type;
  /// broadcast/transpose/reductions: the axes attribute.
  std::vector<int64_t> axes;
  /// Other integer-list attributes by name (dot: lhs_contract, lhs_batch,
  /// rhs_contract, rhs_batch; slice: start_indices, strides; pad: ...).
  std::vector<std::pair<std::string, std::vector<int64_t>>> attrs;
  /// constant: row-major values (floats in fvalues, integers in ivalues).
  std::vector<double> fvalues;
  std::vector<int64_t> ivalues;
  /// parameter: its position among the flattened parameters; region_arg:
  /// its position among the region's arguments; elem: the result index.
  int param = -1;
  /// cond/while: the regions, and the types of the (flattened) results,
  /// which `elem` nodes pick.
  std::vector<Region> regions;
  std::vector<TensorType> resultTypes;
  /// The cond/while node whose region holds this node; -1 at the top level.
  int parent = -1;
  /// print_value: what the runtime printer needs (see PrintValue.h).
  std::string text;
  Loc loc;

  const std::vector<int64_t> &attr(const std::string &name) const {
    static const std::vector<int64_t> none;
    for (auto &a : attrs)
      if (a.first == name) return a.second;
    return none;
  }
};

/// A tree of output leaves, to remember tuple structure.
struct ResultTree {
  int node = -1;                  ///< leaf: node id
  std::vector<ResultTree> elems;  ///< tuple: elements
  bool isTuple = false;
  /// A map (or struct) of results: one key per element, in Nx's flattening
  /// order (sorted), with isTuple set.
  std::vector<std::string> keys;
  std::string structName;         ///< the struct's module, for a struct
  /// A value that is not a tensor, as Elixir prints it (`0`, `:nan`): the
  /// repl's results keep what iex would show (a transform's number, a
  /// struct's keep fields); not a result of the compiled function.
  std::string term;
  /// A leaf with Nx's vectorized axes: their names (the node's leading axes).
  std::vector<std::string> vectorized;
};

struct Graph {
  std::string function;                 ///< the defn's name
  /// A deque, so that references to a node (its type, its shape) stay valid
  /// while tracing appends more nodes.
  std::deque<Node> nodes;
  std::vector<int> params;              ///< parameter nodes, flattened depth-first
  std::vector<std::string> paramNames;  ///< source names ("x", "w1", or "arg0")
  std::vector<int> results;             ///< output nodes, flattened depth-first
  std::vector<int> bakedConstants;      ///< constant nodes from `@file` templates
  ResultTree resultTree;

  int add(Node n) { nodes.push_back(std::move(n)); return (int)nodes.size() - 1; }
  const TensorType &typeOf(int id) const { return nodes[id].type; }
  /// Nx's Expr listing (`parameter a:0  f32[100]`, `b = reduce_max a, axes: nil ...`).
  std::string print() const;
  /// Node `id` as Nx's print_expr shows an expression: its type, then the
  /// listing of the nodes it depends on.
  std::string printExpr(int id) const;
  /// Whether print_value nodes print (the JIT) or are dropped (ahead of time).
  bool printing = false;
};

/// Whether node `n` of `g` takes or makes (as its type, a result type or an
/// operand's type) a value whose element type satisfies `pred`.
bool nodeHasType(const Graph &g, const Node &n, bool (*pred)(const ElemType &));
/// Whether any node of `g` makes such a value.
bool graphHasType(const Graph &g, bool (*pred)(const ElemType &));

/// The first node that takes or makes a complex value and cannot
/// (complexSupport), as an error at its location: Nx's own message where Nx
/// refuses complex inputs.
Status checkComplexOps(const Graph &g);

} // namespace nxc

#endif // NXC_SEMA_GRAPH_H

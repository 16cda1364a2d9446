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
#include "nxc/Sema/Types.h"

#include <string>
#include <vector>

namespace nxc {

/// One operation. `op` is Nx's name ("subtract", "reduce_max", ...), and the
/// nx dialect op is "nx." + op.
struct Node {
  std::string op;
  std::vector<int> operands;
  TensorType type;
  /// broadcast/transpose/reductions: `axes`; dot: lhs_contract, lhs_batch,
  /// rhs_contract, rhs_batch in axes, axes2, axes3, axes4.
  std::vector<int64_t> axes, axes2, axes3, axes4;
  /// constant: row-major values (floats in fvalues, integers in ivalues).
  std::vector<double> fvalues;
  std::vector<int64_t> ivalues;
  /// parameter: its position among the flattened parameters.
  int param = -1;
  Loc loc;
};

/// A tree of output leaves, to remember tuple structure.
struct ResultTree {
  int node = -1;                  ///< leaf: node id
  std::vector<ResultTree> elems;  ///< tuple: elements
  bool isTuple = false;
};

struct Graph {
  std::string function;                 ///< the defn's name
  std::vector<Node> nodes;
  std::vector<int> params;              ///< parameter nodes, flattened depth-first
  std::vector<std::string> paramNames;  ///< source names ("x", "w1", or "arg0")
  std::vector<int> results;             ///< output nodes, flattened depth-first
  ResultTree resultTree;

  int add(Node n) { nodes.push_back(std::move(n)); return (int)nodes.size() - 1; }
  const TensorType &typeOf(int id) const { return nodes[id].type; }
  /// Nx's Expr listing (`parameter a:0  f32[100]`, `b = reduce_max a, axes: nil ...`).
  std::string print() const;
};

} // namespace nxc

#endif // NXC_SEMA_GRAPH_H

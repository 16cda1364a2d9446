//===- NxLinAlg.cpp - Nx.dot and friends ------------------------------------===//
//
// dot/2,4,6 with Nx's axis rules, and outer.
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace nxc::sema {

std::vector<NxEntry> nxLinAlgFunctions() { return {{"dot", &Tracer::nxDot}, {"outer", &Tracer::nxOuter}}; }

Result<Value> Tracer::nxDot(const std::string &, std::vector<Value> &args, const Loc &loc) { return dot(args, loc); }

Result<Value> Tracer::nxOuter(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 2, 2, loc));
  // Nx.outer flattens both sides: (size a) x (size b).
  NXC_TRY(a, tensorArg(fn, args[0], loc));
  NXC_TRY(b, tensorArg(fn, args[1], loc));
  ElemType t = binaryType(args[0], args[1]);
  int64_t na = g_.typeOf(a).numElements(), nb = g_.typeOf(b).numElements();
  int x = reshape(cast(a, t, loc), {na, 1}, loc), y = reshape(cast(b, t, loc), {1, nb}, loc);
  return binary("multiply", Value::tensor(x, loc), Value::tensor(y, loc), BinaryRule::Arith, loc);
}

Result<std::vector<int64_t>> Tracer::axisList(const Value &v, int64_t rank, const Loc &loc, const std::string &what, int node) {
  if (v.kind != Value::List) return error(v.loc.valid() ? v.loc : loc, "Nx.dot expects a list of " + what + " axes, got " + describeValue(v));
  std::vector<int64_t> out;
  for (auto &e : v.elems) {
    NXC_TRY(a, normalizeAxis(e, rank, v.loc, node));
    if (std::find(out.begin(), out.end(), a) != out.end()) return error(v.loc, "Nx.dot: repeated axis " + std::to_string(a) + " in " + what + " axes");
    out.push_back(a);
  }
  return out;
}

Result<Value> Tracer::dot(std::vector<Value> args, const Loc &loc) {
  if (args.size() != 2 && args.size() != 4 && args.size() != 6)
    return error(loc, "wrong number of arguments to Nx.dot: expected 2, 4 or 6, got " + std::to_string(args.size()));
  size_t ia = 0, ib = args.size() / 2;
  NXC_TRY(a, tensorArg("dot", args[ia], loc));
  NXC_TRY(b, tensorArg("dot", args[ib], loc));
  Shape sa = g_.typeOf(a).shape, sb = g_.typeOf(b).shape;
  std::vector<int64_t> ca, cb, ba, bb;
  if (args.size() == 2) {
    if (sa.empty() || sb.empty()) return binary("multiply", args[0], args[1], BinaryRule::Arith, loc);
    ca = {(int64_t)sa.size() - 1};
    cb = {sb.size() == 1 ? 0 : (int64_t)sb.size() - 2};
  } else {
    NXC_TRY(x, axisList(args[1], (int64_t)sa.size(), loc, "contraction", a));
    NXC_TRY(y, axisList(args[ib + 1], (int64_t)sb.size(), loc, "contraction", b));
    ca = x;
    cb = y;
    if (args.size() == 6) {
      NXC_TRY(p, axisList(args[2], (int64_t)sa.size(), loc, "batch", a));
      NXC_TRY(q, axisList(args[5], (int64_t)sb.size(), loc, "batch", b));
      ba = p;
      bb = q;
      if (ba.size() != bb.size()) return error(loc, "right tensor must be batched if left tensor is batched");
      for (size_t i = 0; i < ba.size(); ++i) {
        if (ba[i] != (int64_t)i) return error(loc, "invalid dot batch axis for the left tensor, batch axes must be successive dimensions starting from 0, got " + shapeString(ba));
        if (bb[i] != (int64_t)i) return error(loc, "invalid dot batch axis for the right tensor, batch axes must be successive dimensions starting from 0, got " + shapeString(bb));
        if (sa[i] != sb[i]) return error(loc, "dot batch dimension " + std::to_string(i) + " does not match: " + std::to_string(sa[i]) + " on the left and " + std::to_string(sb[i]) + " on the right");
        if (std::find(ca.begin(), ca.end(), ba[i]) != ca.end())
          return error(loc, "dot batch axes for left tensor (" + shapeString(ba) + ") cannot be in contract axes (" + shapeString(ca) + ")");
        if (std::find(cb.begin(), cb.end(), bb[i]) != cb.end())
          return error(loc, "dot batch axes for right tensor (" + shapeString(bb) + ") cannot be in contract axes (" + shapeString(cb) + ")");
      }
    }
    if (ca.size() != cb.size())
      return error(loc, "Nx.dot: contraction axes must pair up, got " + std::to_string(ca.size()) + " on the left and " + std::to_string(cb.size()) + " on the right");
  }
  for (size_t i = 0; i < ca.size(); ++i)
    if (sa[ca[i]] != sb[cb[i]])
      return error(loc, "dot/zip expects shapes to be compatible, dimension " + std::to_string(ca[i]) + " of left-side (" +
                            std::to_string(sa[ca[i]]) + ") does not equal dimension " + std::to_string(cb[i]) +
                            " of right-side (" + std::to_string(sb[cb[i]]) + ")");
  Shape out;
  for (auto d : ba) out.push_back(sa[d]);
  for (size_t i = 0; i < sa.size(); ++i)
    if (std::find(ca.begin(), ca.end(), (int64_t)i) == ca.end() && std::find(ba.begin(), ba.end(), (int64_t)i) == ba.end()) out.push_back(sa[i]);
  for (size_t i = 0; i < sb.size(); ++i)
    if (std::find(cb.begin(), cb.end(), (int64_t)i) == cb.end() && std::find(bb.begin(), bb.end(), (int64_t)i) == bb.end()) out.push_back(sb[i]);
  ElemType t = mergeTypes(g_.typeOf(a).elem, g_.typeOf(b).elem);
  Node n;
  n.op = "dot";
  n.operands = {cast(a, t, loc), cast(b, t, loc)};
  n.type = TensorType{t, out, {}};
  n.attrs = {{"lhs_contract", ca}, {"lhs_batch", ba}, {"rhs_contract", cb}, {"rhs_batch", bb}};
  n.loc = loc;
  // Names: the batch axes, then the free axes of each side, as Nx keeps them.
  std::vector<std::string> na = namesOf(a), nb = namesOf(b), names;
  for (auto d : ba) names.push_back(na[d]);
  for (size_t i = 0; i < sa.size(); ++i)
    if (std::find(ca.begin(), ca.end(), (int64_t)i) == ca.end() && std::find(ba.begin(), ba.end(), (int64_t)i) == ba.end())
      names.push_back(na[i]);
  for (size_t i = 0; i < sb.size(); ++i)
    if (std::find(cb.begin(), cb.end(), (int64_t)i) == cb.end() && std::find(bb.begin(), bb.end(), (int64_t)i) == bb.end())
      names.push_back(nb[i]);
  return Value::tensor(named(add(n), names), loc);
}

} // namespace nxc::sema

//===- NxVectorize.cpp - Nx.vectorize and vectorized tensors ---------------===//
//
// A vectorized tensor (Value::Vectorized) is a tensor whose leading axes are
// Nx's vectorized axes: every Nx function maps over them, as if called once
// per entry. vectorize/devectorize/revectorize move axes in and out;
// shape queries see the inner shape; every other Nx function is applied to
// each entry of the arguments' vectorized axes (their union by name, in the
// order they first appear; an axis of size 1 broadcasts) and the results are
// stacked back over those axes. The entries are unrolled at compile time, so
// their count is limited (kMaxEntries). Code that does not know vectorized
// axes (control flow, indexing patterns, gradients) refuses a vectorized
// tensor with an error naming it, never mistaking it for a plain tensor.
//
//===----------------------------------------------------------------------===//
#include "ElixirCall.h"
#include "Tracer.h"

#include <fmt/format.h>

namespace nxc::sema {

std::vector<NxEntry> nxVectorizeFunctions() {
  return {{"vectorize", &Tracer::nxVectorize},
          {"devectorize", &Tracer::nxVectorize},
          {"revectorize", &Tracer::nxVectorize},
          {"broadcast_vectors", &Tracer::nxVectorize},
          {"reshape_vectors", &Tracer::nxVectorize}};
}

namespace {

/// The most entries (the product of the vectorized axes' sizes) a call may
/// be unrolled into.
constexpr int64_t kMaxEntries = 256;

using Axes = std::vector<std::pair<std::string, int64_t>>;

std::string axesText(const Axes &axes) {
  std::string s;
  for (auto &[name, size] : axes) s += fmt::format(FMT_STRING("[{}: {}]"), name, size);
  return s;
}

/// Adds v's vectorized axes (in lists and tuples too) to `axes`, the union
/// by name in order of appearance, sizes equal or 1.
Status uniteAxes(const Graph &g, const Value &v, Axes &axes, const Loc &loc) {
  if (v.kind == Value::List || v.kind == Value::Tuple) {
    for (auto &e : v.elems) NXC_CHECK(uniteAxes(g, e, axes, loc));
    return okStatus();
  }
  if (v.kind != Value::Vectorized) return okStatus();
  const Shape &s = g.typeOf(v.node).shape;
  for (size_t k = 0; k < v.keys.size(); ++k) {
    auto it = std::find_if(axes.begin(), axes.end(), [&](auto &a) { return a.first == v.keys[k]; });
    if (it == axes.end()) {
      axes.push_back({v.keys[k], s[k]});
    } else if (it->second != s[k] && it->second != 1 && s[k] != 1) {
      return error(v.loc.valid() ? v.loc : loc,
                   fmt::format(FMT_STRING("expected vectorized axis :{} to have the same size in both tensors or "
                                          "to one of them to have size 1, got {} and {}"),
                               v.keys[k], s[k], it->second));
    } else {
      it->second = std::max(it->second, s[k]);
    }
  }
  return okStatus();
}

} // namespace

bool holdsVectorized(const Value &v) {
  if (v.kind == Value::Vectorized) return true;
  if (v.kind == Value::List || v.kind == Value::Tuple)
    return std::any_of(v.elems.begin(), v.elems.end(), holdsVectorized);
  return false;
}

/// `v` as a plain tensor: its vectorized axes leading, named after them with
/// keepNames (Nx.devectorize's default).
Result<Value> Tracer::devectorized(const Value &v, bool keepNames, const Loc &loc) {
  if (v.kind != Value::Vectorized) {
    NXC_TRY(t, tensorArg("devectorize", v, loc));
    return Value::tensor(t, loc);
  }
  std::vector<std::string> names = namesOf(v.node);
  names.resize(g_.typeOf(v.node).rank());
  for (size_t k = 0; k < v.keys.size(); ++k) names[k] = keepNames ? v.keys[k] : "";
  return Value::tensor(named(v.node, names), loc);
}

Result<Value> Tracer::nxVectorize(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  if (entryLoopDepth_ > 0 && fn != "vectorize")
    return error(loc, fmt::format(FMT_STRING("Nx.{} inside a while loop over vectorized state: nxc runs such a loop "
                                             "once per entry, where it would see one entry alone; devectorize "
                                             "before the loop"),
                                  fn));
  if (fn == "reshape_vectors") return reshapeVectors(args, loc);
  if (fn == "broadcast_vectors") {
    // Every tensor (numbers too) over the union of the list's vectorized axes.
    NXC_TRY(list, vectorsArgs(fn, args, loc));
    auto &[items, align] = list;
    if (align) return error(*align, "Nx.broadcast_vectors: align_ranks: true is not supported by nxc yet");
    if (!std::any_of(items.begin(), items.end(), holdsVectorized)) return Value::list(items, loc);
    NXC_TRY(r, mapVectorized(
                   {Value::tuple(items, loc)}, [&](std::vector<Value> &e) -> Result<Value> { return e[0]; }, loc));
    return Value::list(r.elems, loc);
  }
  if (fn == "devectorize") {
    Value opts = takeOptions(args, 1);
    NXC_CHECK(arity(fn, args, 1, 1, loc));
    NXC_TRY(o, options(opts, {"keep_names"}, "Nx.devectorize"));
    bool keep = true;
    if (o.count("keep_names")) {
      NXC_TRY(k, boolOption(o["keep_names"], "keep_names"));
      keep = k;
    }
    return devectorized(args[0], keep, loc);
  }
  if (fn == "revectorize") {
    // devectorize, reshape to the target axes' sizes and the target shape,
    // vectorize the leading axes.
    Value opts = takeOptions(args, 2);
    NXC_CHECK(arity(fn, args, 2, 2, loc));
    NXC_TRY(o, options(opts, {"target_shape", "target_names"}, "Nx.revectorize"));
    const Value &target = args[1];
    if (target.kind != Value::List || !(target.isKeywordList() || target.elems.empty()))
      return error(target.loc.valid() ? target.loc : loc,
                   "Nx.revectorize expects the vectorized axes as a keyword list, as [x: 2, y: :auto], got " +
                       describeValue(target));
    NXC_TRY(flat, devectorized(args[0], false, loc));
    const TensorType tt = g_.typeOf(flat.node);
    size_t k0 = args[0].kind == Value::Vectorized ? args[0].keys.size() : 0;
    Shape inner(tt.shape.begin() + k0, tt.shape.end());
    std::vector<std::string> innerNames = namesOf(flat.node);
    innerNames.resize(tt.rank());
    innerNames.erase(innerNames.begin(), innerNames.begin() + k0);
    std::vector<Value> dims;
    std::vector<std::string> names;
    for (size_t i = 0; i < target.elems.size(); ++i) {
      dims.push_back(target.elems[i]);
      names.push_back(target.keys[i]);
    }
    std::vector<std::string> outNames(names.size(), "");
    if (o.count("target_shape")) {
      const Value &ts = o["target_shape"];
      if (ts.kind != Value::Tuple)
        return error(ts.loc.valid() ? ts.loc : loc, "Nx.revectorize: :target_shape must be a tuple");
      for (auto &d : ts.elems) dims.push_back(d);
      if (o.count("target_names")) {
        NXC_TRY(tn, namesOption(o["target_names"], ts.elems.size(), loc));
        outNames.insert(outNames.end(), tn.begin(), tn.end());
      } else {
        outNames.resize(dims.size(), "");
      }
    } else {
      for (auto d : inner) dims.push_back(Value::number(d, loc));
      outNames.insert(outNames.end(), innerNames.begin(), innerNames.end());
    }
    std::vector<Value> reshapeArgs = {flat, Value::tuple(dims, loc)};
    NXC_TRY(r, callNx("reshape", reshapeArgs, loc));
    int node = named(r.node, outNames);
    std::vector<Value> vecArgs = {Value::tensor(node, loc), Value::list({}, loc)};
    for (auto &n : names)
      vecArgs[1].elems.push_back(Value::atomValue(n, loc)), vecArgs[1].keys.push_back(""),
          vecArgs[1].keyLocs.push_back(loc);
    return nxVectorize("vectorize", vecArgs, loc);
  }
  // vectorize(t, name | [name | {name, size} | name: size, ...])
  NXC_CHECK(arity(fn, args, 2, 2, loc));
  const Value &spec = args[1];
  std::vector<std::pair<std::string, std::optional<int64_t>>> wanted;
  auto bad = [&](const Value &s) {
    return error(s.loc.valid() ? s.loc : loc,
                 "expected vectorized axis specification to be an atom or a tuple of {atom, pos_integer}, got: " +
                     inspectValue(s));
  };
  if (spec.kind == Value::Atom) {
    wanted.push_back({spec.atom, std::nullopt});
  } else if (spec.kind == Value::List) {
    for (size_t i = 0; i < spec.elems.size(); ++i) {
      const Value &e = spec.elems[i];
      if (!spec.keys[i].empty()) {
        if (e.kind != Value::Int) return bad(e);
        wanted.push_back({spec.keys[i], e.i});
      } else if (e.kind == Value::Atom) {
        wanted.push_back({e.atom, std::nullopt});
      } else if (e.kind == Value::Tuple && e.elems.size() == 2 && e.elems[0].kind == Value::Atom &&
                 e.elems[1].kind == Value::Int) {
        wanted.push_back({e.elems[0].atom, e.elems[1].i});
      } else {
        return bad(e);
      }
    }
  } else {
    return bad(spec);
  }
  Value base = args[0];
  if (base.kind == Value::Tuple || base.kind == Value::Map) {
    // A container: each of its tensors.
    return mapLeaves(
        base,
        [&](const Value &leaf) -> Result<Value> {
          std::vector<Value> one = {leaf, spec};
          return nxVectorize(fn, one, loc);
        },
        loc);
  }
  std::vector<std::string> have;
  int node;
  if (base.kind == Value::Vectorized) {
    have = base.keys;
    node = base.node;
  } else {
    NXC_TRY(t, tensorArg(fn, base, loc));
    node = t;
    if (wanted.empty()) return Value::tensor(node, loc);
  }
  const TensorType tt = g_.typeOf(node);
  size_t innerRank = tt.rank() - have.size();
  if (innerRank == 0) return error(loc, "cannot vectorize tensor of rank 0");
  if (wanted.size() > innerRank) return error(loc, "number of vectorized axes must not be greater than the shape size");
  std::vector<std::string> names = namesOf(node);
  names.resize(tt.rank());
  const size_t before = have.size();
  for (size_t i = 0; i < wanted.size(); ++i) {
    int64_t size = tt.shape[before + i];
    if (wanted[i].second && *wanted[i].second != size)
      return error(loc, fmt::format(FMT_STRING("expected vectorized axis :{} to have size {}, got {}"), wanted[i].first,
                                    *wanted[i].second, size));
    for (size_t j = before + wanted.size(); j < names.size(); ++j)
      if (names[j] == wanted[i].first)
        return error(loc, fmt::format(FMT_STRING("cannot use name :{} for new vectorized axes because there's "
                                                 "already an axis with the same name"),
                                      wanted[i].first));
    if (std::find(have.begin(), have.end(), wanted[i].first) != have.end())
      return error(loc, fmt::format(FMT_STRING("cannot use name :{} for new vectorized axes because there's already "
                                               "a vectorized axis with the same name"),
                                    wanted[i].first));
    have.push_back(wanted[i].first);
  }
  for (size_t k = 0; k < have.size(); ++k) names[k] = have[k];
  return Value::vectorized(named(node, names), have, loc);
}

/// The arguments of broadcast_vectors and reshape_vectors: the list's
/// tensors (numbers made tensors) and, with align_ranks: true, where the
/// option is written.
Result<std::pair<std::vector<Value>, std::optional<Loc>>>
Tracer::vectorsArgs(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"align_ranks"}, "Nx." + fn));
  std::optional<Loc> align;
  if (o.count("align_ranks")) {
    NXC_TRY(a, boolOption(o["align_ranks"], "align_ranks"));
    if (a) align = o["align_ranks"].loc.valid() ? o["align_ranks"].loc : loc;
  }
  if (args[0].kind != Value::List)
    return error(args[0].loc.valid() ? args[0].loc : loc,
                 fmt::format(FMT_STRING("Nx.{} expects a list of tensors, got {}"), fn, describeValue(args[0])));
  std::vector<Value> items = args[0].elems;
  for (auto &v : items)
    if (v.kind != Value::Vectorized) {
      NXC_TRY(t, tensorArg(fn, v, loc));
      v = Value::tensor(t, loc);
    }
  return std::make_pair(std::move(items), align);
}

/// Nx.reshape_vectors/2: every tensor over the union of the list's
/// vectorized axes (in order of appearance), size 1 where it has not an
/// axis, by a reshape of its devectorized data as Nx does it (so a tensor
/// whose vectorized axes come in another order is reshaped, not
/// transposed, as in Nx); :align_ranks adds leading 1s to the inner shapes.
Result<Value> Tracer::reshapeVectors(std::vector<Value> &args, const Loc &loc) {
  NXC_TRY(list, vectorsArgs("reshape_vectors", args, loc));
  auto &[items, align] = list;
  if (items.size() == 1) return Value::list(items, loc);
  Axes canonical;
  for (const Value &v : items) NXC_CHECK(uniteAxes(g_, v, canonical, loc));
  if (canonical.empty()) return Value::list(items, loc);
  auto innerRank = [&](const Value &v) { return g_.typeOf(v.node).rank() - (int64_t)v.keys.size(); };
  int64_t rank = 0;
  for (const Value &v : items) rank = std::max(rank, innerRank(v));
  std::vector<std::string> keys;
  for (auto &a : canonical) keys.push_back(a.first);
  std::vector<Value> out;
  for (const Value &v : items) {
    const TensorType &t = g_.typeOf(v.node);
    Shape target;
    for (auto &a : canonical) {
      auto k = std::find(v.keys.begin(), v.keys.end(), a.first);
      target.push_back(k == v.keys.end() ? 1 : t.shape[(size_t)(k - v.keys.begin())]);
    }
    int64_t inner = innerRank(v);
    if (align) target.insert(target.end(), (size_t)(rank - inner), 1);
    target.insert(target.end(), t.shape.end() - inner, t.shape.end());
    std::vector<std::string> names(target.size() - (size_t)inner);
    std::vector<std::string> own = namesOf(v.node);
    own.resize(t.shape.size());
    names.insert(names.end(), own.end() - inner, own.end());
    bool anyName = std::any_of(names.begin(), names.end(), [](auto &n) { return !n.empty(); });
    int r = reshape(v.node, target, loc);
    out.push_back(Value::vectorized(anyName ? named(r, names) : r, keys, loc));
  }
  return Value::list(out, loc);
}

Result<std::optional<Value>> Tracer::vectorizedCall(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  if (fn == "vectorize" || fn == "devectorize" || fn == "revectorize" || fn == "broadcast_vectors" ||
      fn == "reshape_vectors")
    return std::optional<Value>();
  if (!std::any_of(args.begin(), args.end(), holdsVectorized)) return std::optional<Value>();
  // The whole tensor's size (vectorized axes included), as Nx counts it.
  if ((fn == "flat_size" || fn == "byte_size") && args.size() == 1 && args[0].kind == Value::Vectorized) {
    std::vector<Value> whole = {Value::tensor(args[0].node, loc)};
    NXC_TRY(r, callNx(fn, whole, loc));
    return std::optional<Value>(r);
  }
  // Everything else entry by entry (queries of the shape and type give the
  // inner shape's, the same for every entry).
  NXC_TRY(r, mapVectorized(
                 args, [&](std::vector<Value> &entry) { return callNx(fn, entry, loc); }, loc));
  return std::optional<Value>(r);
}

Result<Value> Tracer::mapVectorized(const std::vector<Value> &args,
                                    const std::function<Result<Value>(std::vector<Value> &)> &each, const Loc &loc) {
  // The union of the arguments' vectorized axes, in order of appearance.
  Axes axes;
  for (auto &a : args) NXC_CHECK(uniteAxes(g_, a, axes, loc));
  int64_t count = 1;
  for (auto &a : axes) count *= a.second;
  if (count > kMaxEntries)
    return error(loc, fmt::format(FMT_STRING("vectorized axes {} have {} entries; nxc applies a function to each "
                                             "entry separately and takes at most {}"),
                                  axesText(axes), count, kMaxEntries));
  // Each entry: every vectorized argument sliced at its index.
  std::vector<Value> results;
  std::vector<int64_t> index(axes.size(), 0);
  std::function<Result<Value>(const Value &)> entryOf = [&](const Value &v) -> Result<Value> {
    if (v.kind == Value::List || v.kind == Value::Tuple) {
      Value out = v;
      for (auto &e : out.elems) {
        NXC_TRY(x, entryOf(e));
        e = x;
      }
      return out;
    }
    if (v.kind != Value::Vectorized) return v;
    const Shape &s = g_.typeOf(v.node).shape;
    std::vector<Value> starts(s.size(), Value::number(0, loc));
    Shape lengths = s;
    for (size_t k = 0; k < v.keys.size(); ++k) {
      size_t a = std::find_if(axes.begin(), axes.end(), [&](auto &x) { return x.first == v.keys[k]; }) - axes.begin();
      starts[k] = Value::number(s[k] == 1 ? 0 : index[a], loc);
      lengths[k] = 1;
    }
    NXC_TRY(one, slice(v.node, starts, lengths, std::vector<int64_t>(s.size(), 1), loc));
    Shape inner(s.begin() + v.keys.size(), s.end());
    std::vector<std::string> names = namesOf(v.node);
    names.resize(s.size());
    names.erase(names.begin(), names.begin() + v.keys.size());
    return Value::tensor(named(reshape(one, inner, loc), names), loc);
  };
  for (int64_t e = 0; e < count; ++e) {
    int64_t rest = e;
    for (size_t a = axes.size(); a-- > 0;) {
      index[a] = rest % axes[a].second;
      rest /= axes[a].second;
    }
    std::vector<Value> entry;
    for (auto &a : args) {
      NXC_TRY(x, entryOf(a));
      entry.push_back(x);
    }
    NXC_TRY(r, each(entry));
    results.push_back(r);
  }
  // Stacked back: tensors over the vectorized axes, tuples element by
  // element; anything else must be the same for every entry.
  Shape lead;
  std::vector<std::string> leadNames;
  for (auto &a : axes) lead.push_back(a.second), leadNames.push_back(a.first);
  std::function<Result<Value>(const std::vector<Value> &)> stack = [&](const std::vector<Value> &rs) -> Result<Value> {
    const Value &first = rs[0];
    if (first.kind == Value::Tuple) {
      Value out = first;
      for (size_t i = 0; i < first.elems.size(); ++i) {
        std::vector<Value> column;
        for (auto &r : rs) {
          if (r.kind != Value::Tuple || r.elems.size() != first.elems.size())
            return internalError(loc, "a vectorized call's entries returned different containers");
          column.push_back(r.elems[i]);
        }
        NXC_TRY(x, stack(column));
        out.elems[i] = x;
      }
      return out;
    }
    if (first.kind == Value::Tensor) {
      const TensorType t = g_.typeOf(first.node);
      Shape one = t.shape;
      one.insert(one.begin(), 1);
      std::vector<Value> pieces;
      for (auto &r : rs) {
        if (r.kind != Value::Tensor) return internalError(loc, "a vectorized call's entries returned different kinds");
        pieces.push_back(Value::tensor(reshape(r.node, one, loc), loc));
      }
      int all = pieces[0].node;
      if (pieces.size() > 1) {
        NXC_TRY(c, callNx("concatenate", {Value::list(pieces, loc)}, loc));
        all = c.node;
      }
      Shape full = lead;
      full.insert(full.end(), t.shape.begin(), t.shape.end());
      std::vector<std::string> names = leadNames, inner = namesOf(first.node);
      inner.resize(t.rank());
      names.insert(names.end(), inner.begin(), inner.end());
      return Value::vectorized(named(reshape(all, full, loc), names), leadNames, loc);
    }
    for (auto &r : rs)
      if (!sameTerm(r, first))
        return error(loc, "a function of vectorized tensors returned " + describeValue(first) + " for one entry and " +
                              describeValue(r) + " for another");
    return first;
  };
  return stack(results);
}

} // namespace nxc::sema

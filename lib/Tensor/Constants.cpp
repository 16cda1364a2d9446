//===- Constants.cpp - baking constant templates from .npy/.npz -----------===//
#include "nxc/Tensor/Constants.h"
#include "nxc/Tensor/HostTensor.h"

#include <fmt/format.h>

#include <functional>

namespace nxc {
namespace {

Status fill(Template &t, const HostTensor &stored, const std::string &what) {
  HostTensor h = stored;
  if (t.declared && h.type.shape == t.tensor.shape) {
    Status retyped = retypeStored(h, t.tensor.elem, what);
    if (!retyped) return error(t.loc, retyped.error().message);
  }
  if (t.declared && !(t.tensor.elem == h.type.elem && t.tensor.shape == h.type.shape))
    return error(t.loc, fmt::format(FMT_STRING("{} is {}, but the template declares {}"), what, h.type.str(),
                                    TensorType{t.tensor.elem, t.tensor.shape, {}}.str()));
  if (!t.declared) t.tensor = TensorType{h.type.elem, h.type.shape, {}};
  t.values = std::make_shared<Template::Values>(valuesOf(h));
  return okStatus();
}

void leaves(Template &t, std::vector<Template *> &out) {
  if (!t.isTuple) {
    out.push_back(&t);
    return;
  }
  for (auto &e : t.elems) leaves(e, out);
}

/// A file Nx.serialize/2 wrote: its container, which a declared template
/// must match (structure, keys, types and shapes).
Status loadSerialized(Template &t) {
  const std::string &path = t.constantPath;
  auto bytes = readFileBytes(path);
  if (!bytes) return error(t.loc, bytes.error().message);
  bool safetensors = readsAsSafetensors(*bytes, path);
  if (!safetensors && !isNxSerialized(*bytes))
    return error(t.loc,
                 fmt::format(FMT_STRING("constant '{}' must be a .npy file (a tensor), a .npz archive (a tuple), "
                                        "a file Nx.serialize/2 wrote or a .safetensors file (a map by name)"),
                             path));
  auto value = safetensors ? parseSafetensors(*bytes, path) : parseNxSerialized(*bytes, path);
  if (!value) return error(t.loc, value.error().message);
  Template found = templateOf(*value);
  if (t.declared) {
    std::function<bool(const Template &, const Template &)> same = [&](const Template &a, const Template &b) {
      if (a.isTuple != b.isTuple || a.keys != b.keys || a.elems.size() != b.elems.size()) return false;
      for (size_t i = 0; i < a.elems.size(); ++i)
        if (!same(a.elems[i], b.elems[i])) return false;
      return true;
    };
    if (!same(t, found))
      return error(t.loc, fmt::format(FMT_STRING("{} holds {}, which does not have the structure of the template"),
                                      path, found.str()));
  } else {
    std::string path = t.constantPath;
    Loc loc = t.loc;
    t = found;
    t.constantPath = path;
    t.loc = loc;
  }
  std::vector<Template *> ls;
  leaves(t, ls);
  std::vector<const HostTensor *> hs;
  flattenLeaves(*value, hs);
  for (size_t i = 0; i < ls.size(); ++i) {
    ls[i]->loc = t.loc;
    ls[i]->declared = t.declared;
    NXC_CHECK(fill(*ls[i], *hs[i], fmt::format(FMT_STRING("{}'s tensor {}"), path, i)));
  }
  return okStatus();
}

Status load(Template &t) {
  if (t.constantPath.empty()) {
    for (auto &e : t.elems) NXC_CHECK(load(e));
    return okStatus();
  }
  const std::string &path = t.constantPath;
  std::string ext = path.size() >= 4 ? path.substr(path.size() - 4) : "";
  if (ext != ".npy" && ext != ".npz") return loadSerialized(t);
  if (!t.isTuple) {
    auto h = readNpy(path);
    if (!h) return error(t.loc, h.error().message);
    return fill(t, *h, path);
  }
  auto arrays = readNpzEntries(path);
  if (!arrays) return error(t.loc, arrays.error().message);
  if (!t.declared) {
    t.elems.assign(arrays->size(), Template{});
    for (auto &e : t.elems) e.loc = t.loc;
  }
  std::vector<Template *> ls;
  leaves(t, ls);
  if (ls.size() != arrays->size())
    return error(t.loc, fmt::format(FMT_STRING("{} holds {} arrays, but the template declares {}"), path,
                                    arrays->size(), ls.size()));
  if (ls.empty()) return error(t.loc, fmt::format(FMT_STRING("{} holds no arrays"), path));
  for (size_t i = 0; i < ls.size(); ++i) {
    ls[i]->loc = t.loc;
    ls[i]->declared = t.declared;
    NXC_CHECK(
        fill(*ls[i], (*arrays)[i].tensor, fmt::format(FMT_STRING("{}'s array {} ({})"), path, i, (*arrays)[i].name)));
  }
  return okStatus();
}

} // namespace

Status loadConstants(Signature &sig) {
  for (auto &a : sig.args) NXC_CHECK(load(a));
  return okStatus();
}

Template::Values valuesOf(const HostTensor &h) {
  Template::Values v;
  int64_t n = h.numElements();
  if (h.type.elem.isFloat()) {
    v.f.reserve(n);
    for (int64_t i = 0; i < n; ++i) v.f.push_back(h.at(i));
  } else if (h.type.elem.isComplex()) { // the parts, interleaved
    v.f.reserve(2 * n);
    for (int64_t i = 0; i < n; ++i) v.f.push_back(h.partAt(i, 0)), v.f.push_back(h.partAt(i, 1));
  } else {
    v.i.reserve(n);
    for (int64_t i = 0; i < n; ++i) v.i.push_back(!h.type.elem.isSigned() ? (int64_t)h.atUInt(i) : h.atInt(i));
  }
  return v;
}

Template templateOf(const HostValue &v) {
  Template t;
  if (v.literal) {
    t.term = v.term;
  } else if (v.isTuple) {
    t.isTuple = true;
    t.keys = v.keys;
    t.structName = v.structName;
    for (auto &e : v.elems) t.elems.push_back(templateOf(e));
  } else {
    t.tensor = v.tensor.type;
  }
  return t;
}

void flattenLeaves(const HostValue &v, std::vector<const HostTensor *> &out) {
  if (v.literal) return;
  if (!v.isTuple) {
    out.push_back(&v.tensor);
    return;
  }
  for (auto &e : v.elems) flattenLeaves(e, out);
}

} // namespace nxc

//===- Constants.cpp - baking constant templates from .npy/.npz -----------===//
#include "nxc/Tensor/Constants.h"
#include "nxc/Tensor/HostTensor.h"

#include <fmt/format.h>

namespace nxc {
namespace {

Status fill(Template &t, const HostTensor &h, const std::string &what) {
  if (t.declared && !(t.tensor.elem == h.type.elem && t.tensor.shape == h.type.shape))
    return error(t.loc, fmt::format(FMT_STRING("{} is {}, but the template declares {}"), what, h.type.str(),
                                    TensorType{t.tensor.elem, t.tensor.shape, {}}.str()));
  if (!t.declared) t.tensor = TensorType{h.type.elem, h.type.shape, {}};
  auto v = std::make_shared<Template::Values>();
  int64_t n = h.numElements();
  if (h.type.elem.isFloat()) {
    v->f.reserve(n);
    for (int64_t i = 0; i < n; ++i) v->f.push_back(h.at(i));
  } else {
    v->i.reserve(n);
    for (int64_t i = 0; i < n; ++i) v->i.push_back(!h.type.elem.isSigned() ? (int64_t)h.atUInt(i) : h.atInt(i));
  }
  t.values = std::move(v);
  return okStatus();
}

void leaves(Template &t, std::vector<Template *> &out) {
  if (!t.isTuple) {
    out.push_back(&t);
    return;
  }
  for (auto &e : t.elems) leaves(e, out);
}

Status load(Template &t) {
  if (t.constantPath.empty()) {
    for (auto &e : t.elems) NXC_CHECK(load(e));
    return okStatus();
  }
  const std::string &path = t.constantPath;
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
    NXC_CHECK(fill(*ls[i], (*arrays)[i].tensor, fmt::format(FMT_STRING("{}'s array {} ({})"), path, i, (*arrays)[i].name)));
  }
  return okStatus();
}

} // namespace

Status loadConstants(Signature &sig) {
  for (auto &a : sig.args) NXC_CHECK(load(a));
  return okStatus();
}

} // namespace nxc

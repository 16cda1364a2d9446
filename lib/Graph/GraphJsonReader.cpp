//===- GraphJsonReader.cpp - JSON graph files read back ------------------===//
//
// The reader of the graph format (docs/graph-format.md). It is strict:
// unknown fields, references to nodes that are not in scope, constants whose
// data does not match their type: each is an error at its JSON pointer,
// never a crash and never a guess.
//
//===----------------------------------------------------------------------===//
#include "nxc/Graph/GraphJson.h"

#include "nxc/Target/CText.h"
#include "nxc/Tensor/Half.h"

#include "llvm/ADT/APFloat.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <functional>
#include <limits>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace nxc {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

/// Control-flow regions nest at most this deep (each level is a recursion
/// when the graph becomes IR).
constexpr int kMaxRegionDepth = 200;

} // namespace

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {

std::string escapePointerToken(const std::string &key) {
  std::string s;
  for (char c : key) {
    if (c == '~') s += "~0";
    else if (c == '/') s += "~1";
    else s += c;
  }
  return s;
}

std::string describe(const json &v) {
  switch (v.type()) {
  case json::value_t::null: return "null";
  case json::value_t::object: return "an object";
  case json::value_t::array: return "an array";
  case json::value_t::string: return "a string";
  case json::value_t::boolean: return "a boolean";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned: return "an integer";
  case json::value_t::number_float: return "a number";
  default: return "a value";
  }
}

class Reader {
public:
  explicit Reader(std::shared_ptr<const SourceFile> file) : file_(std::move(file)) {
    dir_ = fs::path(file_->name).parent_path();
  }

  Result<GraphFile> read();

private:
  std::shared_ptr<const SourceFile> file_;
  fs::path dir_;
  GraphFile out_;
  std::map<std::string, std::vector<NpzEntry>> archives_;

  Diag err(const std::string &ptr, std::string message) const {
    return error(Loc{file_, 0, 0, ptr.empty() ? "/" : ptr}, std::move(message));
  }

  Status keys(const json &obj, const std::string &ptr, std::initializer_list<const char *> allowed) const {
    if (!obj.is_object()) return err(ptr, fmt::format(FMT_STRING("expected an object, got {}"), describe(obj)));
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool known = false;
      for (const char *k : allowed) known |= it.key() == k;
      if (!known) {
        std::vector<std::string> names(allowed.begin(), allowed.end());
        return err(ptr + "/" + escapePointerToken(it.key()),
                   fmt::format(FMT_STRING("unknown field \"{}\" (expected {})"), it.key(), fmt::join(names, ", ")));
      }
    }
    return okStatus();
  }

  Result<const json *> member(const json &obj, const std::string &ptr, const char *key) const {
    auto it = obj.find(key);
    if (it == obj.end()) return err(ptr, fmt::format(FMT_STRING("missing field \"{}\""), key));
    return &*it;
  }

  Result<int64_t> integer(const json &v, const std::string &ptr) const {
    if (v.is_number_unsigned() && v.get<uint64_t>() > (uint64_t)std::numeric_limits<int64_t>::max())
      return err(ptr, "integer out of range");
    if (!v.is_number_integer()) return err(ptr, fmt::format(FMT_STRING("expected an integer, got {}"), describe(v)));
    return v.get<int64_t>();
  }

  Result<std::vector<int64_t>> integers(const json &v, const std::string &ptr) const {
    if (!v.is_array()) return err(ptr, fmt::format(FMT_STRING("expected an array of integers, got {}"), describe(v)));
    std::vector<int64_t> out;
    for (size_t i = 0; i < v.size(); ++i) {
      NXC_TRY(x, integer(v[i], fmt::format(FMT_STRING("{}/{}"), ptr, i)));
      out.push_back(x);
    }
    return out;
  }

  Result<std::string> string(const json &v, const std::string &ptr) const {
    if (!v.is_string()) return err(ptr, fmt::format(FMT_STRING("expected a string, got {}"), describe(v)));
    return v.get<std::string>();
  }

  Result<TensorType> tensorType(const json &obj, const std::string &ptr) const;
  Result<ResultTree> resultTree(const json &v, const std::string &ptr, Graph &g, int depth) const;
  Status constantData(const json &node, const std::string &ptr, Node &n);
  Result<const HostTensor *> dataFile(const json &data, const std::string &ptr);
  Result<Graph> function(const json &fn, const std::string &ptr);
  Status checkScopes(const Graph &g, const std::string &ptr) const;
};

Result<TensorType> Reader::tensorType(const json &obj, const std::string &ptr) const {
  TensorType t;
  NXC_TRY(typeField, member(obj, ptr, "type"));
  NXC_TRY(typeName, string(*typeField, ptr + "/type"));
  auto elem = ElemType::parse(typeName);
  if (!elem)
    return err(ptr + "/type", fmt::format(FMT_STRING("unknown type \"{}\" (expected s8, s16, s32, s64, u8, u16, u32, "
                                                     "u64, f16, bf16, f32 or f64)"),
                                          typeName));
  t.elem = *elem;
  NXC_TRY(shapeField, member(obj, ptr, "shape"));
  NXC_TRY(shape, integers(*shapeField, ptr + "/shape"));
  if (shape.size() > (size_t)kMaxRank)
    return err(ptr + "/shape", fmt::format(FMT_STRING("rank {}; nxc supports tensors up to rank {}"), shape.size(),
                                           kMaxRank));
  int64_t count = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0)
      return err(fmt::format(FMT_STRING("{}/shape/{}"), ptr, d),
                 fmt::format(FMT_STRING("dimension {} is negative"), shape[d]));
    if (shape[d] > 0 && count > kMaxElements / shape[d])
      return err(ptr + "/shape", "the tensor is too large (more than 2^40 elements)");
    count = shape[d] == 0 ? 0 : count * shape[d];
  }
  t.shape = shape;
  if (auto names = obj.find("names"); names != obj.end()) {
    std::string nptr = ptr + "/names";
    if (!names->is_array() || names->size() != shape.size())
      return err(nptr, fmt::format(FMT_STRING("expected an array of {} axis names (a string or null each)"),
                                   shape.size()));
    for (size_t d = 0; d < names->size(); ++d) {
      const json &n = (*names)[d];
      if (!n.is_null() && !n.is_string())
        return err(fmt::format(FMT_STRING("{}/{}"), nptr, d),
                   fmt::format(FMT_STRING("expected an axis name or null, got {}"), describe(n)));
      t.names.push_back(n.is_null() ? "" : n.get<std::string>());
    }
    bool any = false;
    for (auto &n : t.names) any |= !n.empty();
    if (!any) t.names.clear();
  }
  return t;
}

Result<ResultTree> Reader::resultTree(const json &v, const std::string &ptr, Graph &g, int depth) const {
  ResultTree t;
  if (v.is_object()) {
    if (depth > kMaxRegionDepth) return err(ptr, "the result's containers nest too deeply");
    const char *shape = "a map result is {\"keys\": [names], \"values\": [results]} (one value per key) with an "
                        "optional \"struct\" name";
    if (!v.contains("keys") || !v.contains("values") || !v["keys"].is_array() || !v["values"].is_array() ||
        v["keys"].size() != v["values"].size() || v.size() != (v.contains("struct") ? 3u : 2u))
      return err(ptr, shape);
    if (v.contains("struct")) {
      if (!v["struct"].is_string()) return err(ptr + "/struct", "the struct's name must be a string");
      t.structName = v["struct"].get<std::string>();
    }
    t.isTuple = true;
    for (size_t i = 0; i < v["keys"].size(); ++i) {
      std::string kp = fmt::format(FMT_STRING("{}/keys/{}"), ptr, i);
      if (!v["keys"][i].is_string() || v["keys"][i].get<std::string>().empty())
        return err(kp, "a map key must be a non-empty string");
      std::string key = v["keys"][i].get<std::string>();
      if (std::find(t.keys.begin(), t.keys.end(), key) != t.keys.end())
        return err(kp, fmt::format(FMT_STRING("the key {} appears twice"), key));
      NXC_TRY(e, resultTree(v["values"][i], fmt::format(FMT_STRING("{}/values/{}"), ptr, i), g, depth + 1));
      t.elems.push_back(std::move(e));
      t.keys.push_back(key);
    }
    return t;
  }
  if (v.is_null() && depth > 0) {
    t.term = "nil"; // a container field holding nil: no tensor
    return t;
  }
  if (v.is_array()) {
    if (depth > kMaxRegionDepth) return err(ptr, "the result's tuples nest too deeply");
    t.isTuple = true;
    for (size_t i = 0; i < v.size(); ++i) {
      NXC_TRY(e, resultTree(v[i], fmt::format(FMT_STRING("{}/{}"), ptr, i), g, depth + 1));
      t.elems.push_back(std::move(e));
    }
    return t;
  }
  NXC_TRY(id, integer(v, ptr));
  if (id < 0 || id >= (int64_t)g.nodes.size())
    return err(ptr, fmt::format(FMT_STRING("node {} does not exist (the function has {} nodes)"), id, g.nodes.size()));
  if (g.nodes[id].parent >= 0 || g.nodes[id].op == Op::Cond || g.nodes[id].op == Op::While ||
      g.nodes[id].op == Op::PrintValue)
    return err(ptr,
               fmt::format(FMT_STRING("node {} ({}) cannot be a result of the function"), id, opName(g.nodes[id].op)));
  t.node = (int)id;
  g.results.push_back((int)id);
  return t;
}

Result<const HostTensor *> Reader::dataFile(const json &data, const std::string &ptr) {
  NXC_CHECK(keys(data, ptr, {"file", "entry"}));
  NXC_TRY(fileField, member(data, ptr, "file"));
  NXC_TRY(name, string(*fileField, ptr + "/file"));
  if (name.empty() || fs::path(name).is_absolute())
    return err(ptr + "/file", "expected a file name relative to the graph file");
  std::string path = (dir_ / name).string();
  bool npz = name.size() > 4 && name.compare(name.size() - 4, 4, ".npz") == 0;
  bool npy = name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0;
  if (!npz && !npy) return err(ptr + "/file", fmt::format(FMT_STRING("'{}' is neither a .npy nor a .npz file"), name));
  auto it = archives_.find(path);
  if (it == archives_.end()) {
    // Read once: the bytes parsed are the bytes hashed into the manifest.
    auto raw = readFileBytes(path);
    if (!raw) return err(ptr + "/file", raw.error().message);
    std::vector<NpzEntry> entries;
    if (npz) {
      auto read = parseNpz(raw->data(), raw->size(), path);
      if (!read) return err(ptr + "/file", read.error().message);
      entries = std::move(*read);
    } else {
      auto read = parseNpy(raw->data(), raw->size(), path);
      if (!read) return err(ptr + "/file", read.error().message);
      entries.push_back(NpzEntry{"", std::move(*read)});
    }
    out_.contents.append(reinterpret_cast<const char *>(raw->data()), raw->size());
    it = archives_.emplace(path, std::move(entries)).first;
  }
  auto entryField = data.find("entry");
  if (npy) {
    if (entryField != data.end()) return err(ptr + "/entry", "a .npy file holds one array: give no entry");
    return &it->second[0].tensor;
  }
  if (entryField == data.end()) return err(ptr, "missing field \"entry\" (the array's name in the .npz)");
  NXC_TRY(entry, string(*entryField, ptr + "/entry"));
  for (auto &e : it->second)
    if (e.name == entry) return &e.tensor;
  return err(ptr + "/entry", fmt::format(FMT_STRING("'{}' has no array named '{}'"), name, entry));
}

Status Reader::constantData(const json &node, const std::string &ptr, Node &n) {
  int64_t count = n.type.numElements();
  ElemType t = n.type.elem;
  auto value = node.find("value");
  auto data = node.find("data");
  if ((value == node.end()) == (data == node.end()))
    return err(ptr, "a constant needs exactly one of \"value\" (inline) and \"data\" (a file)");
  if (data != node.end()) {
    NXC_TRY(h, dataFile(*data, ptr + "/data"));
    ElemType stored = t.kind == TypeKind::BF ? ElemType::f32() : t.isF8() ? ElemType::u8() : t;
    if (h->type.elem != stored || h->type.shape != n.type.shape)
      return err(ptr + "/data", fmt::format(FMT_STRING("the array is {}, but the constant is {}{}"), h->type.str(),
                                            TensorType{t, n.type.shape, {}}.str(),
                                            t.kind == TypeKind::BF ? " (stored as f32)"
                                            : t.isF8()             ? " (stored as its bytes, u8)"
                                                                   : ""));
    for (int64_t i = 0; i < count; ++i) {
      if (t.isF8())
        n.fvalues.push_back(f8ToFloat((uint8_t)h->bitsAt(i), t));
      else if (t.isComplex())
        n.fvalues.push_back(h->partAt(i, 0)), n.fvalues.push_back(h->partAt(i, 1));
      else if (t.isFloat())
        n.fvalues.push_back(h->at(i));
      else n.ivalues.push_back(t.isSigned() ? h->atInt(i) : (int64_t)h->atUInt(i));
    }
    return okStatus();
  }
  std::string vptr = ptr + "/value";
  if (!value->is_array())
    return err(vptr, fmt::format(FMT_STRING("expected an array of the {} values in row-major order"), count));
  if ((int64_t)value->size() != count)
    return err(vptr, fmt::format(FMT_STRING("expected {} values for {}, got {}"), count, n.type.str(), value->size()));
  auto floatValue = [&](const json &v, const std::string &eptr) -> Status {
    if (v.is_number()) {
      n.fvalues.push_back(v.get<double>());
      return okStatus();
    }
    static const std::map<std::string, double> special = {{"nan", std::numeric_limits<double>::quiet_NaN()},
                                                          {"-nan", -std::numeric_limits<double>::quiet_NaN()},
                                                          {"inf", std::numeric_limits<double>::infinity()},
                                                          {"-inf", -std::numeric_limits<double>::infinity()}};
    auto s = v.is_string() ? special.find(v.get<std::string>()) : special.end();
    if (s == special.end())
      return err(eptr, fmt::format(FMT_STRING("expected a number, \"nan\", \"-nan\", \"inf\" or \"-inf\", got {}"),
                                   describe(v)));
    n.fvalues.push_back(s->second);
    return okStatus();
  };
  for (int64_t i = 0; i < count; ++i) {
    const json &v = (*value)[i];
    std::string eptr = fmt::format(FMT_STRING("{}/{}"), vptr, i);
    if (t.isComplex()) { // [real, imaginary], or a real number
      if (!v.is_array()) {
        NXC_CHECK(floatValue(v, eptr));
        n.fvalues.push_back(0.0);
        continue;
      }
      if (v.size() != 2)
        return err(eptr, fmt::format(FMT_STRING("expected a complex value as [real, imaginary] or a number, got {}"),
                                     describe(v)));
      NXC_CHECK(floatValue(v[0], eptr + "/0"));
      NXC_CHECK(floatValue(v[1], eptr + "/1"));
      continue;
    }
    if (t.isFloat()) {
      NXC_CHECK(floatValue(v, eptr));
      continue;
    }
    bool fits;
    int64_t x = 0;
    if (t.isSigned()) {
      fits = v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > (uint64_t)INT64_MAX);
      if (fits) {
        x = v.get<int64_t>();
        fits = t.bits == 64 || (x >= -(int64_t(1) << (t.bits - 1)) && x < (int64_t(1) << (t.bits - 1)));
      }
    } else {
      fits = v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
      if (fits) {
        uint64_t u = v.get<uint64_t>();
        fits = t.bits == 64 || u < (uint64_t(1) << t.bits);
        x = (int64_t)u;
      }
    }
    if (!fits)
      return err(eptr, fmt::format(FMT_STRING("expected an integer that fits {}, got {}"), t.name(),
                                   v.is_number() ? v.dump() : describe(v)));
    n.ivalues.push_back(x);
  }
  return okStatus();
}

Result<Graph> Reader::function(const json &fn, const std::string &ptr) {
  NXC_CHECK(keys(fn, ptr, {"name", "parameters", "nodes", "result"}));
  Graph g;
  NXC_TRY(nameField, member(fn, ptr, "name"));
  NXC_TRY(name, string(*nameField, ptr + "/name"));
  if (name.empty()) return err(ptr + "/name", "the function needs a name");
  // Names become C names in the header: identifiers only, as in .nx files.
  if (!isCIdentifier(name))
    return err(ptr + "/name", fmt::format(FMT_STRING("the function name {} is not a C identifier (letters, digits and "
                                                     "_, not starting with a digit)"),
                                          json(name).dump(-1, ' ', false, json::error_handler_t::replace)));
  g.function = name;

  NXC_TRY(paramsField, member(fn, ptr, "parameters"));
  if (!paramsField->is_array()) return err(ptr + "/parameters", "expected an array of parameters");
  std::vector<TensorType> paramTypes;
  for (size_t k = 0; k < paramsField->size(); ++k) {
    std::string pptr = fmt::format(FMT_STRING("{}/parameters/{}"), ptr, k);
    const json &p = (*paramsField)[k];
    NXC_CHECK(keys(p, pptr, {"name", "type", "shape", "names"}));
    NXC_TRY(pnameField, member(p, pptr, "name"));
    NXC_TRY(pname, string(*pnameField, pptr + "/name"));
    if (!isCIdentifier(pname))
      return err(pptr + "/name", fmt::format(FMT_STRING("the parameter name {} is not a C identifier (letters, digits "
                                                        "and _, not starting with a digit)"),
                                             json(pname).dump(-1, ' ', false, json::error_handler_t::replace)));
    if (std::find(g.paramNames.begin(), g.paramNames.end(), pname) != g.paramNames.end())
      return err(pptr + "/name", fmt::format(FMT_STRING("two parameters are named \"{}\""), pname));
    g.paramNames.push_back(pname);
    NXC_TRY(t, tensorType(p, pptr));
    paramTypes.push_back(t);
  }
  g.params.assign(paramTypes.size(), -1);

  NXC_TRY(nodesField, member(fn, ptr, "nodes"));
  if (!nodesField->is_array()) return err(ptr + "/nodes", "expected an array of nodes");
  size_t count = nodesField->size();
  std::vector<int> owner(count, -1); // the node whose region lists node i
  for (size_t i = 0; i < count; ++i) {
    std::string nptr = fmt::format(FMT_STRING("{}/nodes/{}"), ptr, i);
    const json &o = (*nodesField)[i];
    NXC_CHECK(keys(o, nptr, {"op", "operands", "index", "type", "shape", "names", "options", "results", "regions",
                             "value", "data", "baked", "text"}));
    Node n;
    n.loc = Loc{file_, 0, 0, nptr};
    NXC_TRY(opField, member(o, nptr, "op"));
    NXC_TRY(opText, string(*opField, nptr + "/op"));
    std::optional<Op> known = opNamed(opText);
    if (!known) return err(nptr, "unknown op \"" + opText + "\"");
    Op op = n.op = *known;
    NXC_TRY(type, tensorType(o, nptr));
    n.type = type;
    if (auto ops = o.find("operands"); ops != o.end()) {
      NXC_TRY(operands, integers(*ops, nptr + "/operands"));
      for (size_t k = 0; k < operands.size(); ++k) {
        if (operands[k] < 0 || operands[k] >= (int64_t)count)
          return err(fmt::format(FMT_STRING("{}/operands/{}"), nptr, k),
                     fmt::format(FMT_STRING("node {} does not exist (the function has {} nodes)"), operands[k], count));
        n.operands.push_back((int)operands[k]);
      }
    }
    auto need = [&](const char *field, bool wanted) -> Status {
      bool has = o.contains(field);
      if (has && !wanted)
        return err(nptr + "/" + field, fmt::format(FMT_STRING("a {} node has no \"{}\""), opText, field));
      if (!has && wanted) return err(nptr, fmt::format(FMT_STRING("a {} node needs \"{}\""), opText, field));
      return okStatus();
    };
    bool indexed = op == Op::Parameter || op == Op::RegionArg || op == Op::Elem;
    bool control = op == Op::Cond || op == Op::While;
    NXC_CHECK(need("index", indexed));
    NXC_CHECK(need("results", control));
    NXC_CHECK(need("regions", control));
    NXC_CHECK(need("text", op == Op::PrintValue));
    if (op != Op::Constant) {
      NXC_CHECK(need("value", false));
      NXC_CHECK(need("data", false));
      NXC_CHECK(need("baked", false));
    }
    if (indexed) {
      NXC_TRY(index, integer(o.at("index"), nptr + "/index"));
      if (index < 0 || index > std::numeric_limits<int>::max()) return err(nptr + "/index", "index out of range");
      n.param = (int)index;
    }
    size_t operandCount = n.operands.size();
    if ((op == Op::Parameter || op == Op::RegionArg || op == Op::Constant || op == Op::Iota) && operandCount != 0)
      return err(nptr + "/operands", fmt::format(FMT_STRING("a {} node takes no operands"), opText));
    if (op == Op::Metadata && operandCount == 0)
      return err(nptr, "a metadata node takes its value (and what it depends on) as operands, got none");
    if ((op == Op::Elem || op == Op::Cond) && operandCount != 1)
      return err(nptr, fmt::format(FMT_STRING("a {} node takes one operand, got {}"), opText, operandCount));
    if (op == Op::Parameter) {
      if (n.param >= (int)paramTypes.size())
        return err(nptr + "/index", fmt::format(FMT_STRING("parameter {} does not exist (the function has {})"),
                                                n.param, paramTypes.size()));
      if (g.params[n.param] >= 0)
        return err(nptr + "/index",
                   fmt::format(FMT_STRING("parameter {} is also node {}"), n.param, g.params[n.param]));
      if (!n.type.sameTypeAndShape(paramTypes[n.param]) || n.type.names != paramTypes[n.param].names)
        return err(nptr, fmt::format(FMT_STRING("the node is {}, but parameter {} is {}"), n.type.str(), n.param,
                                     paramTypes[n.param].str()));
      g.params[n.param] = (int)i;
    }
    if (auto opts = o.find("options"); opts != o.end()) {
      std::string optr = nptr + "/options";
      if (!opts->is_object()) return err(optr, "expected an object of integer lists");
      for (auto it = opts->begin(); it != opts->end(); ++it) {
        NXC_TRY(values, integers(it.value(), optr + "/" + escapePointerToken(it.key())));
        if (it.key() == "axes") n.axes = values;
        else n.attrs.push_back({it.key(), values});
      }
    }
    if (op == Op::Elem) {
      if (n.operands[0] >= (int)i || (g.nodes[n.operands[0]].op != Op::Cond && g.nodes[n.operands[0]].op != Op::While))
        return err(nptr + "/operands/0", "an elem node picks a result of an earlier cond or while node");
      const Node &from = g.nodes[n.operands[0]];
      if (n.param >= (int)from.resultTypes.size())
        return err(nptr + "/index", fmt::format(FMT_STRING("node {} has {} results"), n.operands[0],
                                                from.resultTypes.size()));
      const TensorType &want = from.resultTypes[n.param];
      if (!n.type.sameTypeAndShape(want))
        return err(nptr, fmt::format(FMT_STRING("the node is {}, but result {} of node {} is {}"), n.type.str(),
                                     n.param, n.operands[0], want.str()));
    }
    if (op == Op::Metadata) {
      if (n.operands[0] >= (int)i || !n.type.sameTypeAndShape(g.nodes[n.operands[0]].type))
        return err(nptr, "a metadata node has the type of its first operand, an earlier node");
    }
    if (op == Op::Constant) {
      NXC_CHECK(constantData(o, nptr, n));
      if (auto baked = o.find("baked"); baked != o.end()) {
        if (!baked->is_boolean()) return err(nptr + "/baked", "expected true or false");
        if (baked->get<bool>()) g.bakedConstants.push_back((int)i);
      }
    }
    if (op == Op::PrintValue) {
      NXC_TRY(text, string(o.at("text"), nptr + "/text"));
      n.text = text;
    }
    if (control) {
      std::string rptr = nptr + "/results";
      const json &results = o.at("results");
      if (!results.is_array() || results.empty())
        return err(rptr, "expected an array of result types (at least one)");
      for (size_t k = 0; k < results.size(); ++k) {
        std::string kptr = fmt::format(FMT_STRING("{}/{}"), rptr, k);
        NXC_CHECK(keys(results[k], kptr, {"type", "shape", "names"}));
        NXC_TRY(t, tensorType(results[k], kptr));
        n.resultTypes.push_back(t);
      }
      if (!n.type.sameTypeAndShape(n.resultTypes[0]))
        return err(nptr, fmt::format(FMT_STRING("the node's type is its first result's, {}"), n.resultTypes[0].str()));
      if (op == Op::While && operandCount != n.resultTypes.size())
        return err(nptr, fmt::format(FMT_STRING("a while node takes its initial state ({} values), got {} operands"),
                                     n.resultTypes.size(), operandCount));
      const json &regions = o.at("regions");
      std::string gptr = nptr + "/regions";
      if (!regions.is_array() || regions.size() != 2)
        return err(gptr,
                   op == Op::Cond ? "expected two regions (then, else)" : "expected two regions (condition, body)");
      for (size_t r = 0; r < 2; ++r) {
        std::string xptr = fmt::format(FMT_STRING("{}/{}"), gptr, r);
        NXC_CHECK(keys(regions[r], xptr, {"args", "nodes", "results"}));
        Region region;
        for (const char *field : {"args", "nodes", "results"}) {
          NXC_TRY(f, member(regions[r], xptr, field));
          NXC_TRY(ids, integers(*f, xptr + "/" + field));
          for (size_t k = 0; k < ids.size(); ++k)
            if (ids[k] < 0 || ids[k] >= (int64_t)i)
              return err(fmt::format(FMT_STRING("{}/{}/{}"), xptr, field, k),
                         fmt::format(FMT_STRING("a region of node {} holds only earlier nodes, got {}"), i, ids[k]));
          std::vector<int> &to = field[0] == 'a' ? region.args : field[0] == 'n' ? region.nodes : region.results;
          to.assign(ids.begin(), ids.end());
        }
        size_t wantArgs = op == Op::Cond ? 0 : n.resultTypes.size();
        if (region.args.size() != wantArgs)
          return err(xptr + "/args", fmt::format(FMT_STRING("expected {} region arguments, got {}"), wantArgs,
                                                 region.args.size()));
        size_t wantResults = op == Op::While && r == 0 ? 1 : n.resultTypes.size();
        if (region.results.size() != wantResults)
          return err(xptr + "/results", fmt::format(FMT_STRING("expected {} region results, got {}"), wantResults,
                                                    region.results.size()));
        for (size_t k = 0; k < region.args.size(); ++k) {
          const Node &a = g.nodes[region.args[k]];
          if (a.op != Op::RegionArg || a.param != (int)k)
            return err(fmt::format(FMT_STRING("{}/args/{}"), xptr, k),
                       fmt::format(FMT_STRING("expected a region_arg node with index {}"), k));
        }
        for (const char *field : {"args", "nodes"})
          for (int m : field[0] == 'a' ? region.args : region.nodes) {
            if (owner[m] >= 0 && owner[m] != (int)i)
              return err(xptr + "/" + field, fmt::format(FMT_STRING("node {} is already in a region of node {}"), m,
                                                         owner[m]));
            owner[m] = (int)i;
          }
        n.regions.push_back(std::move(region));
      }
    }
    g.nodes.push_back(std::move(n));
  }
  for (size_t k = 0; k < g.params.size(); ++k)
    if (g.params[k] < 0) return err(ptr + "/nodes", fmt::format(FMT_STRING("no node is parameter {}"), k));
  for (size_t i = 0; i < count; ++i) {
    g.nodes[i].parent = owner[i];
    if (owner[i] >= 0 && g.nodes[i].op == Op::Parameter)
      return err(fmt::format(FMT_STRING("{}/nodes/{}"), ptr, i), "a parameter cannot be inside a region");
    if (owner[i] < 0 && g.nodes[i].op == Op::RegionArg)
      return err(fmt::format(FMT_STRING("{}/nodes/{}"), ptr, i), "a region_arg node must be one of a region's args");
  }
  NXC_TRY(resultField, member(fn, ptr, "result"));
  NXC_TRY(tree, resultTree(*resultField, ptr + "/result", g, 0));
  g.resultTree = std::move(tree);
  NXC_CHECK(checkScopes(g, ptr));
  NXC_CHECK(checkComplexOps(g));
  return g;
}

/// Walks the nodes in the order IR generation emits them (top-level nodes in
/// order, a control-flow node's regions when it is reached) and checks that
/// every node refers only to values already defined and still in scope.
Status Reader::checkScopes(const Graph &g, const std::string &ptr) const {
  size_t count = g.nodes.size();
  std::vector<char> visible(count, 0), done(count, 0);
  auto at = [&](int i) { return fmt::format(FMT_STRING("{}/nodes/{}"), ptr, i); };
  std::function<Status(int, int)> visit = [&](int i, int depth) -> Status {
    const Node &n = g.nodes[i];
    if (done[i]) return err(at(i), fmt::format(FMT_STRING("node {} is listed twice in its region"), i));
    done[i] = 1;
    if (n.op == Op::RegionArg) return okStatus(); // bound when its region opens
    for (size_t k = 0; k < n.operands.size(); ++k)
      if (!visible[n.operands[k]])
        return err(fmt::format(FMT_STRING("{}/operands/{}"), at(i), k),
                   fmt::format(FMT_STRING("node {} is not defined before node {} in its scope"), n.operands[k], i));
    if (!n.regions.empty()) {
      if (depth >= kMaxRegionDepth)
        return err(at(i), fmt::format(FMT_STRING("control flow nests more than {} levels deep"), kMaxRegionDepth));
      for (auto &r : n.regions) {
        for (int a : r.args) visible[a] = 1;
        for (int m : r.nodes)
          if (g.nodes[m].op != Op::RegionArg) NXC_CHECK(visit(m, depth + 1));
        for (size_t k = 0; k < r.results.size(); ++k)
          if (!visible[r.results[k]])
            return err(at(i) + "/regions",
                       fmt::format(FMT_STRING("region result node {} is not defined in the region's scope"),
                                   r.results[k]));
        for (int a : r.args) visible[a] = 0;
        for (int m : r.nodes) visible[m] = 0;
      }
    }
    visible[i] = 1;
    return okStatus();
  };
  for (size_t i = 0; i < count; ++i)
    if (g.nodes[i].parent < 0) NXC_CHECK(visit((int)i, 0));
  for (size_t i = 0; i < count; ++i)
    if (!done[i] && g.nodes[i].op != Op::RegionArg)
      return err(at((int)i), fmt::format(FMT_STRING("node {} is listed in no region of its owner"), i));
  return okStatus();
}

Result<GraphFile> Reader::read() {
  if ((int64_t)file_->text.size() > kGraphFileLimit)
    return error(Loc{}, fmt::format(FMT_STRING("{}: the graph file is larger than {} MiB; keep large constants in a "
                                               ".npz beside it"),
                                    file_->name, kGraphFileLimit >> 20));
  json root;
  // A key twice in one object is an error (JSON parsers disagree on which
  // one counts): found while parsing, with its JSON pointer.
  struct Frame {
    bool array = false;
    size_t index = 0;
    std::string key;
    std::set<std::string> keys;
  };
  std::vector<Frame> frames;
  std::string duplicate;
  auto pointer = [&] {
    std::string p;
    for (auto &f : frames) p += f.array ? fmt::format(FMT_STRING("/{}"), f.index) : "/" + f.key;
    return p;
  };
  auto next = [&] {
    if (!frames.empty() && frames.back().array) ++frames.back().index;
  };
  json::parser_callback_t check = [&](int, json::parse_event_t event, json &parsed) {
    switch (event) {
    case json::parse_event_t::object_start: frames.push_back(Frame{}); break;
    case json::parse_event_t::array_start: frames.push_back(Frame{true}); break;
    case json::parse_event_t::object_end:
    case json::parse_event_t::array_end:
      if (!frames.empty()) frames.pop_back();
      next();
      break;
    case json::parse_event_t::key:
      if (!frames.empty()) {
        std::string k = parsed.get<std::string>();
        frames.back().key = k;
        if (!frames.back().keys.insert(k).second && duplicate.empty()) duplicate = pointer();
      }
      break;
    case json::parse_event_t::value: next(); break;
    }
    return true;
  };
  try {
    root = json::parse(file_->text, check);
    if (!duplicate.empty()) {
      size_t slash = duplicate.rfind('/');
      return err(duplicate, fmt::format(FMT_STRING("the key \"{}\" appears twice in this object"),
                                        duplicate.substr(slash + 1)));
    }
  } catch (const json::parse_error &e) {
    // Point at the byte the parser stopped at, with its line and column.
    size_t byte = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, file_->text.size());
    int line = 1, col = 1;
    for (size_t k = 0; k < byte; ++k) {
      if (file_->text[k] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string what = e.what();
    auto colon = what.find(": ", what.find("parse error"));
    std::string message = colon == std::string::npos ? what : what.substr(colon + 2);
    return error(Loc{file_, line, col}, "invalid JSON: " + message);
  } catch (const json::exception &e) {
    // Not a syntax error: a number too large for a double, and the like.
    std::string what = e.what();
    auto end = what.find("] ");
    return error(Loc{}, fmt::format(FMT_STRING("{}: invalid JSON: {}"), file_->name,
                                    end == std::string::npos ? what : what.substr(end + 2)));
  }
  out_.contents = file_->text;
  NXC_CHECK(keys(root, "", {"format", "version", "functions"}));
  NXC_TRY(format, member(root, "", "format"));
  if (!format->is_string() || format->get<std::string>() != kGraphFormat)
    return err("/format", fmt::format(FMT_STRING("expected \"{}\" (this is not an nxc graph file)"), kGraphFormat));
  NXC_TRY(versionField, member(root, "", "version"));
  NXC_TRY(version, integer(*versionField, "/version"));
  if (version != kGraphFormatVersion)
    return err("/version", fmt::format(FMT_STRING("version {} is not supported; this nxc reads version {}"), version,
                                       kGraphFormatVersion));
  NXC_TRY(functions, member(root, "", "functions"));
  if (!functions->is_array() || functions->empty()) return err("/functions", "expected an array of functions");
  std::set<std::string> names;
  for (size_t f = 0; f < functions->size(); ++f) {
    std::string ptr = fmt::format(FMT_STRING("/functions/{}"), f);
    NXC_TRY(g, function((*functions)[f], ptr));
    if (!names.insert(g.function).second)
      return err(ptr + "/name", fmt::format(FMT_STRING("two functions are named \"{}\""), g.function));
    out_.functions.push_back(std::move(g));
  }
  return std::move(out_);
}

} // namespace

Result<GraphFile> loadGraphFile(const std::string &path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    return error(Loc{}, fmt::format(FMT_STRING("cannot read '{}': it is a directory"), path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(Loc{}, fmt::format(FMT_STRING("cannot read '{}': {}"), path, std::strerror(errno)));
  if (auto size = fs::file_size(path, ec); !ec && (int64_t)size > kGraphFileLimit)
    return error(Loc{}, fmt::format(FMT_STRING("{}: the graph file is larger than {} MiB; keep large constants in a "
                                               ".npz beside it"),
                                    path, kGraphFileLimit >> 20));
  std::string text(std::istreambuf_iterator<char>(in), {});
  return readGraphJson(std::make_shared<const SourceFile>(SourceFile{path, std::move(text)}));
}

Result<GraphFile> readGraphJson(std::shared_ptr<const SourceFile> file) {
  try {
    Reader reader(std::move(file));
    return reader.read();
  } catch (const std::bad_alloc &) {
    return error(Loc{}, "out of memory while reading the graph file");
  }
}

} // namespace nxc

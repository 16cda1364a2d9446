//===- GraphJsonWriter.cpp - traced graphs written as JSON ----------------===//
//
// The writer of the graph format (docs/graph-format.md): one node per line,
// large constants into an .npz beside the file.
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

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

void putType(ojson &o, const TensorType &t) {
  o["type"] = t.elem.name();
  o["shape"] = t.shape;
  bool named = false;
  for (auto &n : t.names) named |= !n.empty();
  if (!named) return;
  ojson names = ojson::array();
  for (auto &n : t.names) names.push_back(n.empty() ? ojson() : ojson(n));
  o["names"] = names;
}

ojson floatValue(double d) {
  if (std::isnan(d)) return std::signbit(d) ? "-nan" : "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  return d;
}

ojson constantValues(const Node &n) {
  ojson values = ojson::array();
  if (n.type.elem.isFloat()) {
    for (double d : n.fvalues) values.push_back(floatValue(d));
  } else if (n.type.elem.isComplex()) { // [real, imaginary] per element
    for (size_t i = 0; i + 1 < n.fvalues.size(); i += 2)
      values.push_back(ojson::array({floatValue(n.fvalues[i]), floatValue(n.fvalues[i + 1])}));
  } else if (n.type.elem.isSigned()) {
    for (int64_t v : n.ivalues) values.push_back(v);
  } else {
    uint64_t mask = n.type.elem.bits == 64 ? ~uint64_t(0) : (uint64_t(1) << n.type.elem.bits) - 1;
    for (int64_t v : n.ivalues) values.push_back((uint64_t)v & mask);
  }
  return values;
}

/// `d` rounded to the element type, as the nx dialect rounds constants.
double roundedTo(double d, ElemType t) {
  if (t.bits == 64) return d;
  llvm::APFloat f(d);
  bool lost;
  f.convert(t.kind == TypeKind::BF ? llvm::APFloat::BFloat() : t.bits == 16 ? llvm::APFloat::IEEEhalf()
                                                                             : llvm::APFloat::IEEEsingle(),
            llvm::APFloat::rmNearestTiesToEven, &lost);
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
  return f.convertToDouble();
}

/// A constant node's values as a host tensor: in its own type, bf16 as f32
/// (NumPy has no bf16; every bf16 value is exact in f32), the f8 types as
/// their bytes (written as u8).
HostTensor constantTensor(const Node &n) {
  ElemType stored = n.type.elem.kind == TypeKind::BF ? ElemType::f32() : n.type.elem;
  HostTensor h = HostTensor::zeros(TensorType{stored, n.type.shape, {}});
  for (int64_t i = 0; i < h.numElements(); ++i) {
    uint64_t bits;
    if (n.type.elem.isComplex()) {
      for (int k = 0; k < 2; ++k) {
        double d = n.fvalues[2 * i + k];
        h.setPartBits(i, k, stored.bits == 128 ? doubleBits(d) : floatBits((float)d));
      }
      continue;
    }
    if (n.type.elem.isF8()) {
      bits = doubleToF8(n.fvalues[i], n.type.elem);
    } else if (n.type.elem.isFloat()) {
      double d = roundedTo(n.fvalues[i], n.type.elem);
      bits = stored.bits == 64 ? doubleBits(d) : stored.bits == 32 ? floatBits((float)d) : doubleToF16(d);
    } else {
      bits = (uint64_t)n.ivalues[i];
    }
    h.setBits(i, bits);
  }
  return h;
}

ojson resultJson(const ResultTree &t) {
  if (!t.term.empty()) return nullptr; // nil in a container field
  if (!t.isTuple) return t.node;
  ojson a = ojson::array();
  for (auto &e : t.elems) a.push_back(resultJson(e));
  if (t.keys.empty()) return a;
  // A map: {"keys": [...], "values": [...]} in flattening order, with
  // "struct" for a struct.
  ojson o = ojson::object();
  if (!t.structName.empty()) o["struct"] = t.structName;
  o["keys"] = t.keys;
  o["values"] = a;
  return o;
}

/// `items` one per line, `indent` deep, as the body of a JSON array.
std::string lines(const std::vector<ojson> &items, const std::string &indent) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += indent + items[i].dump() + (i + 1 < items.size() ? ",\n" : "\n");
  return s;
}

} // namespace

std::string graphSignature(const Graph &g) {
  std::vector<std::string> types;
  for (int p : g.params) types.push_back(g.typeOf(p).str());
  return fmt::format(FMT_STRING("{}({})"), g.function, fmt::join(types, ", "));
}

Result<GraphJson> writeGraphJson(const std::vector<const Graph *> &graphs, const std::string &constantsFile) {
  // Laid out for reading and diffing: one parameter or node per line.
  GraphJson out;
  std::string &s = out.json;
  s = fmt::format(FMT_STRING("{{\n  \"format\": \"{}\",\n  \"version\": {},\n  \"functions\": [\n"), kGraphFormat,
                  kGraphFormatVersion);
  for (size_t f = 0; f < graphs.size(); ++f) {
    const Graph *g = graphs[f];
    std::vector<ojson> params;
    for (size_t k = 0; k < g->params.size(); ++k) {
      ojson p;
      p["name"] = cParameterName(g->paramNames[k], k); // graph names are C identifiers
      putType(p, g->typeOf(g->params[k]));
      params.push_back(p);
    }
    std::set<int> baked(g->bakedConstants.begin(), g->bakedConstants.end());
    std::vector<ojson> nodes;
    for (size_t i = 0; i < g->nodes.size(); ++i) {
      const Node &n = g->nodes[i];
      ojson o;
      o["op"] = std::string(opName(n.op));
      if (!n.operands.empty()) o["operands"] = n.operands;
      if (n.op == Op::Parameter || n.op == Op::RegionArg || n.op == Op::Elem) o["index"] = n.param;
      putType(o, n.type);
      // Options by name, so that reading and writing again is a fixed point.
      std::map<std::string, std::vector<int64_t>> sorted(n.attrs.begin(), n.attrs.end());
      if (!n.axes.empty()) sorted["axes"] = n.axes;
      ojson options = ojson::object();
      for (auto &[name, v] : sorted) options[name] = v;
      if (!options.empty()) o["options"] = options;
      if (n.op == Op::Cond || n.op == Op::While) {
        ojson results = ojson::array();
        for (auto &t : n.resultTypes) {
          ojson r;
          putType(r, t);
          results.push_back(r);
        }
        o["results"] = results;
        ojson regions = ojson::array();
        for (auto &r : n.regions)
          regions.push_back(ojson{{"args", r.args}, {"nodes", r.nodes}, {"results", r.results}});
        o["regions"] = regions;
      }
      if (n.op == Op::Constant) {
        if (!constantsFile.empty() && n.type.numElements() > kGraphInlineConstantLimit) {
          std::string entry = fmt::format(FMT_STRING("c{}_{}"), i, g->function);
          o["data"] = ojson{{"file", constantsFile}, {"entry", entry}};
          out.constants.push_back(NpzEntry{entry, constantTensor(n)});
        } else {
          o["value"] = constantValues(n);
        }
        if (baked.count((int)i)) o["baked"] = true;
      }
      if (n.op == Op::PrintValue) o["text"] = n.text;
      nodes.push_back(std::move(o));
    }
    s += fmt::format(FMT_STRING("    {{\n      \"name\": {},\n      \"parameters\": [\n{}      ],\n"
                                "      \"nodes\": [\n{}      ],\n      \"result\": {}\n    }}{}\n"),
                     ojson(g->function).dump(), lines(params, "        "), lines(nodes, "        "),
                     resultJson(g->resultTree).dump(), f + 1 < graphs.size() ? "," : "");
  }
  s += "  ]\n}\n";
  return out;
}

} // namespace nxc

//===- Safetensors.cpp - reading .safetensors weight files ----------------===//
//
// The format models ship their weights in (Hugging Face's safetensors): an
// unsigned little-endian u64 N, N bytes of a JSON object (padded with
// spaces), then the tensors' bytes. The object maps each tensor's name to
//   {"dtype": "F32", "shape": [2, 3], "data_offsets": [BEGIN, END]}
// (offsets into the bytes after the header, little-endian, row-major) and
// may hold "__metadata__", a map of strings. The tensors must cover those
// bytes exactly, without overlap or holes. A file is read as a map of its
// tensors by name (string keys, sorted as Elixir sorts them), as Elixir's
// safetensors readers return it; anything the format does not allow is an
// error naming the file and what is wrong, never a guess.
//
//===----------------------------------------------------------------------===//
#include "nxc/Frontend/AST.h"
#include "nxc/Tensor/HostTensor.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>

namespace nxc {
namespace {

using json = nlohmann::json;

/// The largest header the format's reference reader accepts (100 MB).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

uint64_t littleEndianU64(const uint8_t *p) {
  uint64_t v = 0;
  for (int k = 7; k >= 0; --k) v = v << 8 | p[k];
  return v;
}

/// Nx's type for a safetensors dtype; BOOL is u8 (0 or 1).
std::optional<ElemType> elemTypeOf(const std::string &dtype) {
  static const std::map<std::string, ElemType> types = {
      {"BOOL", {TypeKind::U, 8}},   {"U8", {TypeKind::U, 8}},      {"I8", {TypeKind::S, 8}},
      {"U16", {TypeKind::U, 16}},   {"I16", {TypeKind::S, 16}},    {"F16", {TypeKind::F, 16}},
      {"BF16", {TypeKind::BF, 16}}, {"U32", {TypeKind::U, 32}},    {"I32", {TypeKind::S, 32}},
      {"F32", {TypeKind::F, 32}},   {"U64", {TypeKind::U, 64}},    {"I64", {TypeKind::S, 64}},
      {"F64", {TypeKind::F, 64}},   {"F8_E5M2", {TypeKind::F, 8}}, {"F8_E4M3", {TypeKind::F8E4M3FN, 8}},
      {"C64", {TypeKind::C, 64}}};
  auto it = types.find(dtype);
  if (it == types.end()) return std::nullopt;
  return it->second;
}

/// The header's JSON with every object key checked for repeats (the format
/// forbids them; a JSON parser would keep the last silently).
Result<json> parseHeader(const std::string &text, const std::string &name) {
  std::vector<std::set<std::string>> keys;
  std::string repeated;
  json::parser_callback_t check = [&](int depth, json::parse_event_t event, json &parsed) {
    switch (event) {
    case json::parse_event_t::object_start: keys.emplace_back(); break;
    case json::parse_event_t::object_end:
      if (!keys.empty()) keys.pop_back();
      break;
    case json::parse_event_t::key:
      if (!keys.empty() && !keys.back().insert(parsed.get<std::string>()).second && repeated.empty())
        repeated = parsed.get<std::string>();
      break;
    default: break;
    }
    (void)depth;
    return true;
  };
  json header;
  try {
    header = json::parse(text, check);
  } catch (const json::exception &e) {
    std::string why = e.what(); // "[json.exception.parse_error.101] parse error at ..."
    if (size_t close = why.find("] "); why.rfind("[json.", 0) == 0 && close != std::string::npos)
      why = why.substr(close + 2);
    return error(Loc{}, fmt::format(FMT_STRING("{}: the safetensors header is not valid JSON ({})"), name, why));
  }
  if (!repeated.empty())
    return error(Loc{}, fmt::format(FMT_STRING("{}: the safetensors header names \"{}\" twice"), name, repeated));
  if (!header.is_object())
    return error(Loc{}, fmt::format(FMT_STRING("{}: the safetensors header is not a JSON object"), name));
  return header;
}

Result<uint64_t> nonNegative(const json &v, const std::string &what) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  return error(Loc{}, fmt::format(FMT_STRING("{} is not a non-negative integer"), what));
}

} // namespace

bool isSafetensors(const std::vector<uint8_t> &bytes) {
  if (bytes.size() < 10) return false;
  uint64_t n = littleEndianU64(bytes.data());
  return n >= 2 && n <= bytes.size() - 8 && n <= kMaxHeaderBytes && bytes[8] == '{';
}

bool readsAsSafetensors(const std::vector<uint8_t> &bytes, const std::string &name) {
  const std::string suffix = ".safetensors";
  return isSafetensors(bytes) ||
         (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0);
}

Result<HostValue> parseSafetensors(const std::vector<uint8_t> &bytes, const std::string &name) {
  if (!isSafetensors(bytes))
    return error(Loc{}, fmt::format(FMT_STRING("{} is not a safetensors file (its first 8 bytes must give the size of "
                                               "a JSON header that follows)"),
                                    name));
  uint64_t n = littleEndianU64(bytes.data());
  std::string text(bytes.begin() + 8, bytes.begin() + 8 + (size_t)n);
  NXC_TRY(header, parseHeader(text, name));
  const uint8_t *data = bytes.data() + 8 + n;
  uint64_t dataBytes = bytes.size() - 8 - n;
  struct Entry {
    std::string name;
    HostTensor tensor;
    uint64_t begin, end;
  };
  std::vector<Entry> entries;
  for (auto &[key, info] : header.items()) {
    if (key == "__metadata__") {
      if (!info.is_object())
        return error(Loc{}, fmt::format(FMT_STRING("{}: __metadata__ must map strings to strings"), name));
      for (auto &[k, v] : info.items())
        if (!v.is_string())
          return error(Loc{}, fmt::format(FMT_STRING("{}: __metadata__ must map strings to strings (\"{}\" does not)"),
                                          name, k));
      continue;
    }
    std::string what = fmt::format(FMT_STRING("{}: tensor \"{}\""), name, key);
    if (!info.is_object() || !info.contains("dtype") || !info.contains("shape") || !info.contains("data_offsets") ||
        info.size() != 3)
      return error(Loc{}, fmt::format(FMT_STRING("{} must be {{\"dtype\", \"shape\", \"data_offsets\"}}"), what));
    const json &dtype = info["dtype"], &shape = info["shape"], &offsets = info["data_offsets"];
    if (!dtype.is_string()) return error(Loc{}, fmt::format(FMT_STRING("{}: dtype is not a string"), what));
    std::optional<ElemType> elem = elemTypeOf(dtype.get<std::string>());
    if (!elem)
      return error(Loc{}, fmt::format(FMT_STRING("{} has dtype {}, which nxc does not support (it reads BOOL, U8..U64, "
                                                 "I8..I64, F8_E5M2, F8_E4M3, F16, BF16, F32, F64 and C64)"),
                                      what, dtype.get<std::string>()));
    if (!shape.is_array() || shape.size() > (size_t)kMaxRank)
      return error(Loc{}, fmt::format(FMT_STRING("{}: shape is not a list of at most {} sizes"), what, kMaxRank));
    TensorType type{*elem, {}, {}};
    for (size_t d = 0; d < shape.size(); ++d) {
      NXC_TRY(size, nonNegative(shape[d], fmt::format(FMT_STRING("{}: shape[{}]"), what, d)));
      if (size > (uint64_t)kMaxElements)
        return error(Loc{}, fmt::format(FMT_STRING("{}: shape[{}] is {}, too large"), what, d, size));
      type.shape.push_back((int64_t)size);
    }
    int64_t count = type.numElements();
    if (count > kMaxElements)
      return error(Loc{}, fmt::format(FMT_STRING("{} has {} elements, more than nxc's limit"), what, type.str()));
    if (!offsets.is_array() || offsets.size() != 2)
      return error(Loc{}, fmt::format(FMT_STRING("{}: data_offsets is not [BEGIN, END]"), what));
    NXC_TRY(begin, nonNegative(offsets[0], what + ": data_offsets[0]"));
    NXC_TRY(end, nonNegative(offsets[1], what + ": data_offsets[1]"));
    if (begin > end || end > dataBytes)
      return error(Loc{}, fmt::format(FMT_STRING("{}: data_offsets [{}, {}] lie outside the file's {} data bytes"),
                                      what, begin, end, dataBytes));
    uint64_t want = (uint64_t)count * (uint64_t)elem->bytes();
    if (end - begin != want)
      return error(Loc{}, fmt::format(FMT_STRING("{} is {} ({} bytes) but data_offsets [{}, {}] hold {} bytes"), what,
                                      type.str(), want, begin, end, end - begin));
    HostTensor t;
    t.type = type;
    t.data.assign(data + begin, data + end);
    if (dtype.get<std::string>() == "BOOL")
      for (uint8_t b : t.data)
        if (b > 1)
          return error(Loc{}, fmt::format(FMT_STRING("{} is BOOL but holds the byte {}"), what, (int)b));
    entries.push_back(Entry{key, std::move(t), begin, end});
  }
  // The tensors cover the data exactly: no overlap, no hole.
  std::vector<const Entry *> byOffset;
  for (auto &e : entries) byOffset.push_back(&e);
  std::sort(byOffset.begin(), byOffset.end(), [](const Entry *a, const Entry *b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t covered = 0;
  for (const Entry *e : byOffset) {
    if (e->begin != covered)
      return error(Loc{}, fmt::format(FMT_STRING("{}: tensor \"{}\" starts at data byte {}, where {} (the tensors must "
                                                 "cover the data without overlap or gaps)"),
                                      name, e->name, e->begin,
                                      e->begin < covered ? "the tensor before it still runs" : "nothing ends"));
    covered = e->end;
  }
  if (covered != dataBytes)
    return error(Loc{}, fmt::format(FMT_STRING("{}: the tensors end at data byte {}, but the file holds {}"), name,
                                    covered, dataBytes));
  // A map of string keys, in Elixir's order of binaries (byte-wise).
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) { return a.name < b.name; });
  std::vector<HostValue> elems;
  std::vector<std::string> keys;
  for (auto &e : entries) {
    elems.push_back(HostValue::leaf(std::move(e.tensor)));
    keys.push_back(std::string(1, ast::kStringKeyMark) + e.name);
  }
  HostValue map = HostValue::tuple(std::move(elems));
  map.keys = std::move(keys);
  return map;
}

} // namespace nxc

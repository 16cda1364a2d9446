//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// The format is numpy/lib/format.py: the magic "\x93NUMPY", a major and minor
// version, the header length (2 bytes little-endian in version 1.0, 4 bytes in
// 2.0 and 3.0), and a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces to a multiple of 64 bytes and ended by '\n'; the data
// follows in C order. The reader parses the dict with a small literal parser
// (no eval) and checks every length against the bytes it has.
//
//===----------------------------------------------------------------------===//
#include "nxc/Tensor/HostTensor.h"

#include "Bytes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace nxc {
namespace {

using bytes::fileError;

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kAlign = 64;          // numpy.lib.format.ARRAY_ALIGN
constexpr size_t kGrowthAxisDigits = 21; // numpy.lib.format.GROWTH_AXIS_MAX_DIGITS

/// A value of the header dict.
struct PyValue {
  enum Kind { Str, Bool, Int, Tuple, List, Other } kind = Other;
  std::string str;
  bool boolean = false;
  int64_t integer = 0;
  std::vector<int64_t> ints; ///< a tuple of non-negative integers
};

/// Parses the header dict literal; errors say what was expected where.
class HeaderParser {
public:
  HeaderParser(const std::string &text, const std::string &file) : s_(text), file_(file) {}

  Result<std::vector<std::pair<std::string, PyValue>>> parse() {
    std::vector<std::pair<std::string, PyValue>> items;
    skipSpace();
    if (!eat('{')) return fail("expected '{'");
    for (;;) {
      skipSpace();
      if (eat('}')) break;
      size_t keyPos = p_;
      std::string key;
      if (!string(key)) return fail("expected a quoted key");
      for (auto &kv : items)
        if (kv.first == key) return fail(fmt::format(FMT_STRING("duplicate key '{}'"), key), keyPos);
      skipSpace();
      if (!eat(':')) return fail(fmt::format(FMT_STRING("expected ':' after '{}'"), key));
      skipSpace();
      size_t valuePos = p_;
      PyValue v;
      if (!value(v)) return fail(fmt::format(FMT_STRING("cannot parse the value of '{}'"), key), valuePos);
      items.emplace_back(key, std::move(v));
      skipSpace();
      if (eat(',')) continue;
      skipSpace();
      if (eat('}')) break;
      return fail("expected ',' or '}'");
    }
    skipSpace();
    if (p_ != s_.size()) return fail("unexpected text after the header dict");
    return items;
  }

private:
  Diag fail(const std::string &what) { return fail(what, p_); }
  Diag fail(const std::string &what, size_t at) {
    return fileError(file_, fmt::format(FMT_STRING("malformed .npy header ({} at offset {})"), what, at));
  }
  void skipSpace() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\n' || s_[p_] == '\r')) ++p_;
  }
  bool eat(char c) {
    if (p_ < s_.size() && s_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool word(const char *w) {
    size_t n = std::strlen(w);
    if (s_.compare(p_, n, w) != 0) return false;
    if (p_ + n < s_.size() && (std::isalnum((unsigned char)s_[p_ + n]) || s_[p_ + n] == '_')) return false;
    p_ += n;
    return true;
  }
  bool string(std::string &out) {
    if (p_ >= s_.size() || (s_[p_] != '\'' && s_[p_] != '"')) return false;
    char q = s_[p_++];
    out.clear();
    while (p_ < s_.size() && s_[p_] != q) {
      if (s_[p_] == '\\' || s_[p_] == '\n') return false; // numpy never writes escapes
      out += s_[p_++];
    }
    return eat(q);
  }
  bool integer(int64_t &v) {
    size_t start = p_;
    v = 0;
    while (p_ < s_.size() && std::isdigit((unsigned char)s_[p_])) {
      int d = s_[p_++] - '0';
      if (v > (INT64_MAX - d) / 10) return false;
      v = v * 10 + d;
    }
    if (p_ == start) return false;
    if (p_ < s_.size() && (s_[p_] == 'L' || s_[p_] == 'l')) ++p_; // Python 2 longs
    return true;
  }
  bool value(PyValue &v) {
    if (p_ >= s_.size()) return false;
    char c = s_[p_];
    if (c == '\'' || c == '"') {
      v.kind = PyValue::Str;
      return string(v.str);
    }
    if (word("True")) {
      v.kind = PyValue::Bool;
      v.boolean = true;
      return true;
    }
    if (word("False")) {
      v.kind = PyValue::Bool;
      v.boolean = false;
      return true;
    }
    if (std::isdigit((unsigned char)c)) {
      v.kind = PyValue::Int;
      return integer(v.integer);
    }
    if (c == '(') {
      ++p_;
      v.kind = PyValue::Tuple;
      for (;;) {
        skipSpace();
        if (eat(')')) return true;
        int64_t d;
        if (!integer(d)) return false;
        v.ints.push_back(d);
        skipSpace();
        if (eat(',')) continue;
        skipSpace();
        return eat(')');
      }
    }
    if (c == '[') {
      // A structured dtype's descr: skip the (balanced, quoted) list.
      v.kind = PyValue::List;
      int depth = 0;
      while (p_ < s_.size()) {
        char d = s_[p_];
        if (d == '\'' || d == '"') {
          std::string ignored;
          if (!string(ignored)) return false;
          continue;
        }
        ++p_;
        if (d == '[' || d == '(') ++depth;
        if (d == ']' || d == ')') --depth;
        if (depth == 0) return true;
      }
      return false;
    }
    return false;
  }

  const std::string &s_;
  const std::string &file_;
  size_t p_ = 0;
};

/// The element type of a NumPy descr, and whether its data is big-endian.
Result<std::pair<ElemType, bool>> dtypeOf(const std::string &descr, const std::string &file) {
  if (descr.empty()) return fileError(file, "empty dtype descr");
  size_t p = 0;
  char order = '|';
  if (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=') order = descr[p++];
  if (p >= descr.size()) return fileError(file, fmt::format(FMT_STRING("malformed dtype '{}'"), descr));
  char kind = descr[p++];
  std::string sizeText = descr.substr(p);
  int size = 0;
  bool sized = !sizeText.empty() && sizeText.size() <= 3;
  for (char c : sizeText) {
    if (!std::isdigit((unsigned char)c)) sized = false;
    else if (sized) size = size * 10 + (c - '0'); // at most 3 digits
  }
  if (kind == 'O')
    return fileError(file, fmt::format(FMT_STRING("object arrays (dtype '{}') are not supported; save numbers only"),
                                       descr));
  if (!sized) return fileError(file, fmt::format(FMT_STRING("unsupported dtype '{}'"), descr));
  std::optional<ElemType> t;
  switch (kind) {
  case 'b':
  case '?':
    if (size == 1) t = ElemType::u8(); // NumPy bools read as u8
    break;
  case 'i':
    if (size == 1 || size == 2 || size == 4 || size == 8) t = ElemType{TypeKind::S, size * 8};
    break;
  case 'u':
    if (size == 1 || size == 2 || size == 4 || size == 8) t = ElemType{TypeKind::U, size * 8};
    break;
  case 'f':
    if (size == 2 || size == 4 || size == 8) t = ElemType{TypeKind::F, size * 8};
    break;
  case 'c': // complex64, complex128: a real and an imaginary part
    if (size == 8 || size == 16) t = ElemType{TypeKind::C, size * 8};
    break;
  default: break;
  }
  if (!t) {
    const char *what = kind == 'U' || kind == 'S'   ? "string"
                       : kind == 'V'                ? "void/structured"
                       : kind == 'M' || kind == 'm' ? "datetime"
                                                    : nullptr;
    return fileError(file, fmt::format(FMT_STRING("unsupported dtype '{}'{}{}{}; nxc reads bool, int8..int64, "
                                                  "uint8..uint64, float16, float32, float64, complex64 and complex128"),
                                       descr, what ? " (" : "", what ? what : "", what ? ")" : ""));
  }
  bool bigEndian = order == '>' && size > 1;
  return std::make_pair(*t, bigEndian);
}

/// NumPy's descr for an element type ("<f4", "|u1"). NumPy has no 8-bit
/// floats: f8 and f8_e4m3fn are written as their bytes, "|u1".
std::string descrOf(ElemType t) {
  char kind = t.kind == TypeKind::S ? 'i' : t.kind == TypeKind::U || t.isF8() ? 'u' : t.isComplex() ? 'c' : 'f';
  return fmt::format(FMT_STRING("{}{}{}"), t.bytes() == 1 ? '|' : '<', kind, t.bytes());
}

/// Python's repr of a shape tuple: "()", "(3,)", "(2, 3)".
std::string shapeRepr(const Shape &s) {
  return fmt::format(FMT_STRING("({}{})"), fmt::join(s, ", "), s.size() == 1 ? "," : "");
}

/// What the preamble and header say: the tensor type, the byte order, and
/// where the (already size-checked) data starts.
struct NpyLayout {
  TensorType type;
  bool bigEndian = false;
  size_t dataOffset = 0;
};

Result<NpyLayout> parseLayout(const uint8_t *data, size_t size, const std::string &name) {
  if (size == 0) return fileError(name, "empty file (not a .npy file)");
  if (size < kMagicLen + 2 || std::memcmp(data, kMagic, kMagicLen) != 0)
    return fileError(name, size < kMagicLen + 2 && std::memcmp(data, kMagic, std::min(size, kMagicLen)) == 0
                               ? "truncated .npy file (no complete header)"
                               : "not a .npy file (bad magic; expected \\x93NUMPY)");
  int major = data[6], minor = data[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return fileError(name, fmt::format(FMT_STRING("unsupported .npy format version {}.{} (nxc reads 1.0, 2.0 and 3.0)"),
                                       major, minor));
  bytes::Reader r(data, size, 8);
  uint64_t headerLen = 0;
  if (!(major == 1 ? r.u16(headerLen) : r.u32(headerLen)))
    return fileError(name, "truncated .npy file (no complete header length)");
  std::string header;
  if (!r.bytes(header, (size_t)headerLen))
    return fileError(name, fmt::format(FMT_STRING("truncated .npy file (the header says {} bytes, {} are left)"),
                                       headerLen, size - r.pos()));

  NXC_TRY(items, HeaderParser(header, name).parse());
  const PyValue *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (auto &kv : items) {
    if (kv.first == "descr") descr = &kv.second;
    else if (kv.first == "fortran_order") fortran = &kv.second;
    else if (kv.first == "shape") shape = &kv.second;
    else return fileError(name, fmt::format(FMT_STRING("malformed .npy header (unexpected key '{}')"), kv.first));
  }
  if (!descr || !fortran || !shape)
    return fileError(name, fmt::format(FMT_STRING("malformed .npy header (missing '{}')"),
                                       !descr ? "descr" : !fortran ? "fortran_order" : "shape"));
  if (descr->kind == PyValue::List)
    return fileError(name, "structured dtypes (record arrays) are not supported");
  if (descr->kind != PyValue::Str) return fileError(name, "malformed .npy header ('descr' is not a string)");
  if (fortran->kind != PyValue::Bool) return fileError(name, "malformed .npy header ('fortran_order' is not a bool)");
  if (shape->kind != PyValue::Tuple) return fileError(name, "malformed .npy header ('shape' is not a tuple)");
  if (fortran->boolean)
    return fileError(name, "Fortran-ordered arrays are not supported; save a C-ordered copy "
                           "(numpy.ascontiguousarray) instead");
  NXC_TRY(dtype, dtypeOf(descr->str, name));

  NpyLayout layout;
  layout.type.elem = dtype.first;
  layout.type.shape = shape->ints;
  layout.bigEndian = dtype.second;
  layout.dataOffset = r.pos();
  const std::string shapeText = shapeRepr(layout.type.shape);
  uint64_t count = 1, need = 0;
  auto tooLarge = [&] { return fileError(name, fmt::format(FMT_STRING("shape {} is too large"), shapeText)); };
  for (int64_t d : layout.type.shape)
    if (__builtin_mul_overflow(count, (uint64_t)d, &count)) return tooLarge();
  if (__builtin_mul_overflow(count, (uint64_t)dtype.first.bytes(), &need) || need > SIZE_MAX) return tooLarge();
  size_t have = size - r.pos();
  if (have < need)
    return fileError(name, fmt::format(FMT_STRING("truncated .npy file (shape {} of {} needs {} data bytes, {} are "
                                                  "left)"),
                                       shapeText, descr->str, need, have));
  if (have > need)
    return fileError(name,
                     fmt::format(FMT_STRING("{} unexpected bytes after the data of shape {}"), have - need, shapeText));
  return layout;
}

/// Converts big-endian elements of type `elem` to native order in place.
void swapBytes(std::vector<uint8_t> &data, ElemType elem) {
  size_t w = (size_t)elem.partType().bytes(); // each part of a complex on its own
  for (size_t i = 0; i + w <= data.size(); i += w)
    for (size_t a = i, b = i + w - 1; a < b; ++a, --b) std::swap(data[a], data[b]);
}

/// parseNpy on bytes it may reuse: the data moves into the tensor without a copy.
Result<HostTensor> parseOwnedNpy(std::vector<uint8_t> &&bytes, const std::string &name) {
  NXC_TRY(layout, parseLayout(bytes.data(), bytes.size(), name));
  bytes.erase(bytes.begin(), bytes.begin() + (std::ptrdiff_t)layout.dataOffset);
  HostTensor t;
  t.type = std::move(layout.type);
  t.data = std::move(bytes);
  if (layout.bigEndian) swapBytes(t.data, t.type.elem);
  return t;
}

} // namespace

Result<HostTensor> parseNpy(const uint8_t *data, size_t size, const std::string &name) {
  NXC_TRY(layout, parseLayout(data, size, name));
  HostTensor t;
  t.type = std::move(layout.type);
  t.data.assign(data + layout.dataOffset, data + size);
  if (layout.bigEndian) swapBytes(t.data, t.type.elem);
  return t;
}

Result<std::vector<uint8_t>> readFileBytes(const std::string &path) { return bytes::readFile(path); }

Result<HostTensor> readNpy(const std::string &path) {
  NXC_TRY(data, bytes::readFile(path));
  return parseOwnedNpy(std::move(data), path);
}

Result<HostTensor> parseNpy(std::vector<uint8_t> &&bytes, const std::string &name) {
  return parseOwnedNpy(std::move(bytes), name);
}

Result<std::vector<uint8_t>> serializeNpy(const HostTensor &t) {
  if (t.type.elem.kind == TypeKind::BF)
    return error(Loc{}, "bf16 has no NumPy dtype; convert the tensor to f32 (exact) before writing it");
  if (!t.consistent())
    return error(Loc{}, fmt::format(FMT_STRING("tensor of type {} has {} data bytes, expected {}"), t.type.str(),
                                    t.data.size(), t.numElements() * t.type.elem.bytes()));
  // numpy.lib.format._write_array_header: sorted keys, growth padding, then
  // _wrap_header pads to ARRAY_ALIGN with spaces and a final newline.
  std::string header = fmt::format(FMT_STRING("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}"),
                                   descrOf(t.type.elem), shapeRepr(t.type.shape));
  if (!t.type.shape.empty()) {
    size_t digits = fmt::formatted_size(FMT_STRING("{}"), t.type.shape[0]);
    if (digits < kGrowthAxisDigits) header += std::string(kGrowthAxisDigits - digits, ' ');
  }
  int major = 1;
  size_t prefix = kMagicLen + 2 + 2;
  size_t hlen = header.size() + 1;
  size_t pad = kAlign - (prefix + hlen) % kAlign;
  if (hlen + pad > 0xFFFF) {
    major = 2;
    prefix = kMagicLen + 2 + 4;
    pad = kAlign - (prefix + hlen) % kAlign;
  }
  std::vector<uint8_t> out(kMagic, kMagic + kMagicLen);
  out.push_back((uint8_t)major);
  out.push_back(0);
  bytes::appendLE(out, hlen + pad, major == 1 ? 2 : 4);
  bytes::append(out, header);
  out.insert(out.end(), pad, ' ');
  out.push_back('\n');
  out.insert(out.end(), t.data.begin(), t.data.end());
  return out;
}

Status writeNpy(const std::string &path, const HostTensor &t) {
  auto bytesOr = serializeNpy(t);
  if (!bytesOr) return bytes::fileError(path, bytesOr.error().message);
  return bytes::writeFile(path, *bytesOr);
}

} // namespace nxc

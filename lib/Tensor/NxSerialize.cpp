//===- NxSerialize.cpp - reading what Nx.serialize/2 writes ---------------===//
//
// Nx users save trained parameters with `Nx.serialize/2` (Axon recommends
// it). Its format (Nx 0.6 on): "nx", a format version (1), an endianness
// byte (0 little, 1 big), the byte size of what follows as a big-endian
// u64, an Erlang term in the external term format, then the tensors' bytes.
// The term describes the container: a tensor is
//   {:t, shape, {kind, bits}, names, vectorized_axes, offset, size}
// (its bytes at `offset` in the data after the term), a container is
//   {module, [{key, value}, ...], meta}
// with module the Nx.Container implementation: Nx.Container.Tuple (keys []),
// Nx.Container.Map (keys atoms or strings, in Erlang's term order), or
// Nx.Container.S for a struct S deriving it (its container fields in order).
// This reader takes exactly those terms; anything else is an error naming
// what it found, never a guess.
//
//===----------------------------------------------------------------------===//
#include "nxc/Frontend/AST.h"
#include "nxc/Tensor/HostTensor.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>

namespace nxc {
namespace {

/// An Erlang term, as far as Nx's serialized containers need.
struct Term {
  enum Kind { Int, Atom, Tuple, List, Binary, Map, Float } kind = Int;
  int64_t i = 0;
  double f = 0;
  std::string text;          ///< Atom: its name; Binary: its bytes
  std::vector<Term> elems;   ///< Tuple, List; Map: key, value, key, value...
};

class TermReader {
public:
  TermReader(const uint8_t *p, size_t n, std::string what) : p_(p), n_(n), what_(std::move(what)) {}

  Result<Term> term(int depth = 0) {
    if (depth > 64) return fail("nests too deeply");
    NXC_TRY(tag, u8());
    Term t;
    switch (tag) {
    case 97: { // SMALL_INTEGER_EXT
      NXC_TRY(v, u8());
      t.i = v;
      return t;
    }
    case 98: { // INTEGER_EXT
      NXC_TRY(v, u32());
      t.i = (int32_t)v;
      return t;
    }
    case 110: { // SMALL_BIG_EXT
      NXC_TRY(count, u8());
      NXC_TRY(sign, u8());
      if (count > 8) return fail("holds an integer of more than 64 bits");
      uint64_t v = 0;
      for (int k = 0; k < count; ++k) {
        NXC_TRY(b, u8());
        v |= (uint64_t)b << (8 * k);
      }
      if (v > (uint64_t)INT64_MAX) return fail("holds an integer of more than 63 bits");
      t.i = sign ? -(int64_t)v : (int64_t)v;
      return t;
    }
    case 70: { // NEW_FLOAT_EXT
      NXC_TRY(hi, u32());
      NXC_TRY(lo, u32());
      uint64_t bits = ((uint64_t)hi << 32) | lo;
      t.kind = Term::Float;
      std::memcpy(&t.f, &bits, 8);
      return t;
    }
    case 100:   // ATOM_EXT, ATOM_UTF8_EXT: a 16-bit length
    case 118:
    case 115:   // SMALL_ATOM_EXT, SMALL_ATOM_UTF8_EXT: an 8-bit one
    case 119: {
      uint32_t len;
      if (tag == 115 || tag == 119) { NXC_TRY(l, u8()); len = l; } else { NXC_TRY(l, u16()); len = l; }
      t.kind = Term::Atom;
      NXC_TRY(s, bytes(len));
      t.text = std::move(s);
      return t;
    }
    case 104:   // SMALL_TUPLE_EXT
    case 105: { // LARGE_TUPLE_EXT
      uint32_t arity;
      if (tag == 104) { NXC_TRY(a, u8()); arity = a; } else { NXC_TRY(a, u32()); arity = a; }
      t.kind = Term::Tuple;
      NXC_CHECK(items(t, arity, depth));
      return t;
    }
    case 106: // NIL_EXT
      t.kind = Term::List;
      return t;
    case 107: { // STRING_EXT: a list of small integers
      NXC_TRY(len, u16());
      t.kind = Term::List;
      for (uint32_t k = 0; k < len; ++k) {
        NXC_TRY(b, u8());
        Term e;
        e.i = b;
        t.elems.push_back(e);
      }
      return t;
    }
    case 108: { // LIST_EXT
      NXC_TRY(len, u32());
      t.kind = Term::List;
      NXC_CHECK(items(t, len, depth));
      NXC_TRY(tail, term(depth + 1));
      if (tail.kind != Term::List || !tail.elems.empty()) return fail("holds an improper list");
      return t;
    }
    case 109: { // BINARY_EXT
      NXC_TRY(len, u32());
      t.kind = Term::Binary;
      NXC_TRY(s, bytes(len));
      t.text = std::move(s);
      return t;
    }
    case 116: { // MAP_EXT
      NXC_TRY(arity, u32());
      t.kind = Term::Map;
      NXC_CHECK(items(t, 2 * (uint64_t)arity, depth));
      return t;
    }
    default:
      return fail(fmt::format(FMT_STRING("holds an Erlang term of tag {} that Nx.serialize does not write"), tag));
    }
  }

  bool atEnd() const { return i_ == n_; }

private:
  Status items(Term &t, uint64_t count, int depth) {
    if (count > n_ - i_) return fail("is truncated");
    for (uint64_t k = 0; k < count; ++k) {
      NXC_TRY(e, term(depth + 1));
      t.elems.push_back(std::move(e));
    }
    return okStatus();
  }
  Result<uint8_t> u8() {
    if (i_ >= n_) return fail("is truncated");
    return p_[i_++];
  }
  Result<uint16_t> u16() {
    if (n_ - i_ < 2) return fail("is truncated");
    uint16_t v = (uint16_t)(p_[i_] << 8 | p_[i_ + 1]);
    i_ += 2;
    return v;
  }
  Result<uint32_t> u32() {
    if (n_ - i_ < 4) return fail("is truncated");
    uint32_t v = (uint32_t)p_[i_] << 24 | (uint32_t)p_[i_ + 1] << 16 | (uint32_t)p_[i_ + 2] << 8 | p_[i_ + 3];
    i_ += 4;
    return v;
  }
  Result<std::string> bytes(uint64_t len) {
    if (len > n_ - i_) return fail("is truncated");
    std::string s((const char *)p_ + i_, len);
    i_ += len;
    return s;
  }
  Diag fail(const std::string &why) const { return error(Loc{}, fmt::format(FMT_STRING("{} {}"), what_, why)); }

  const uint8_t *p_;
  size_t n_, i_ = 0;
  std::string what_;
};

const char *const kTuple = "Elixir.Nx.Container.Tuple";
const char *const kMap = "Elixir.Nx.Container.Map";

/// The tensor or container a term describes, its bytes from `buffers`.
Result<HostValue> fromTerm(const Term &t, const uint8_t *buffers, uint64_t size, bool bigEndian,
                           const std::string &what) {
  auto bad = [&](const std::string &why) { return error(Loc{}, fmt::format(FMT_STRING("{}: {}"), what, why)); };
  if (t.kind != Term::Tuple) return bad("expected a tensor or a container term");
  if (t.elems.size() == 7 && t.elems[0].kind == Term::Atom && t.elems[0].text == "t") {
    const Term &shape = t.elems[1], &type = t.elems[2], &vectorized = t.elems[4], &offset = t.elems[5],
               &bytes = t.elems[6];
    if (shape.kind != Term::Tuple || type.kind != Term::Tuple || type.elems.size() != 2 ||
        type.elems[0].kind != Term::Atom || type.elems[1].kind != Term::Int || offset.kind != Term::Int ||
        bytes.kind != Term::Int)
      return bad("a tensor term is malformed");
    if (vectorized.kind != Term::List || !vectorized.elems.empty())
      return bad("holds a vectorized tensor; nxc reads plain tensors (devectorize it before Nx.serialize)");
    const std::string &kind = type.elems[0].text;
    int64_t bits = type.elems[1].i;
    std::optional<ElemType> known = ElemType::fromKindAtom(kind, bits);
    if (!known)
      return bad(fmt::format(FMT_STRING("holds a tensor of type {}{}, which nxc does not support yet"), kind, bits));
    ElemType e = *known;
    Shape dims;
    for (const Term &d : shape.elems) {
      if (d.kind != Term::Int || d.i < 0) return bad("a tensor's shape is malformed");
      dims.push_back(d.i);
    }
    HostTensor h = HostTensor::zeros(e, dims);
    // Sub-byte integers are packed, the first element in the high bits.
    uint64_t stored = e.isSubByte() ? ((uint64_t)h.numElements() * (uint64_t)e.bits + 7) / 8 : h.data.size();
    if (offset.i < 0 || bytes.i < 0 || (uint64_t)offset.i > size || (uint64_t)bytes.i > size - (uint64_t)offset.i ||
        (uint64_t)bytes.i != stored)
      return bad(fmt::format(FMT_STRING("a tensor of {} bytes ({}) lies outside the file's data or has the wrong size"),
                             bytes.i, h.type.str()));
    if (e.isSubByte()) {
      for (int64_t k = 0; k < h.numElements(); ++k) {
        uint64_t bit = (uint64_t)k * (uint64_t)e.bits;
        uint8_t byte = buffers[offset.i + (int64_t)(bit / 8)];
        h.setBits(k, (uint64_t)(byte >> (8 - e.bits - bit % 8)));
      }
    } else if (!h.data.empty()) {
      std::memcpy(h.data.data(), buffers + offset.i, h.data.size()); // (an empty tensor has no storage)
    }
    if (bigEndian && e.bytes() > 1)
      for (size_t k = 0; k < h.data.size(); k += e.bytes())
        std::reverse(h.data.begin() + k, h.data.begin() + k + e.bytes());
    return HostValue::leaf(std::move(h));
  }
  if (t.elems.size() != 3 || t.elems[0].kind != Term::Atom || t.elems[1].kind != Term::List)
    return bad("expected {:t, ...} (a tensor) or {module, pairs, meta} (a container)");
  const std::string &module = t.elems[0].text;
  std::vector<HostValue> elems;
  std::vector<std::string> keys;
  for (const Term &pair : t.elems[1].elems) {
    if (pair.kind != Term::Tuple || pair.elems.size() != 2) return bad("a container's pairs are malformed");
    const Term &k = pair.elems[0];
    if (module == kTuple) {
      if (k.kind != Term::List || !k.elems.empty()) return bad("a tuple's keys are malformed");
    } else if (k.kind == Term::Atom) {
      keys.push_back(k.text);
    } else if (k.kind == Term::Binary) {
      keys.push_back(std::string(1, ast::kStringKeyMark) + k.text);
    } else {
      return bad("holds a map key that is neither an atom nor a string");
    }
    NXC_TRY(v, fromTerm(pair.elems[1], buffers, size, bigEndian, what));
    elems.push_back(std::move(v));
  }
  HostValue out = HostValue::tuple(std::move(elems));
  if (module != kTuple) {
    out.keys = std::move(keys);
    const std::string prefix = "Elixir.Nx.Container.";
    if (module != kMap) out.structName = module.rfind(prefix, 0) == 0 ? module.substr(prefix.size()) : module;
  }
  return out;
}

} // namespace

bool isNxSerialized(const std::vector<uint8_t> &bytes) {
  return bytes.size() >= 3 && bytes[0] == 'n' && bytes[1] == 'x' && bytes[2] <= 9;
}

Result<HostValue> parseNxSerialized(const std::vector<uint8_t> &bytes, const std::string &name) {
  if (!isNxSerialized(bytes)) return error(Loc{}, fmt::format(FMT_STRING("{} is not a file Nx.serialize wrote"), name));
  if (bytes[2] != 1)
    return error(Loc{}, fmt::format(FMT_STRING("{} is in Nx's serialization format v{}; nxc reads v1 (Nx 0.6 on)"),
                                    name, bytes[2]));
  if (bytes.size() < 12) return error(Loc{}, fmt::format(FMT_STRING("{} is truncated"), name));
  bool bigEndian = bytes[3] == 1;
  uint64_t termSize = 0;
  for (int k = 0; k < 8; ++k) termSize = termSize << 8 | bytes[4 + k];
  if (termSize > bytes.size() - 12) return error(Loc{}, fmt::format(FMT_STRING("{} is truncated"), name));
  const uint8_t *term = bytes.data() + 12;
  std::vector<uint8_t> inflated;
  size_t termLen = termSize;
  if (termLen < 2 || term[0] != 131)
    return error(Loc{}, fmt::format(FMT_STRING("{}: the term is not in Erlang's external format"), name));
  if (term[1] == 80) { // COMPRESSED: the term zlib-compressed (Nx.serialize(x, compressed: N))
    if (termLen < 6) return error(Loc{}, fmt::format(FMT_STRING("{} is truncated"), name));
    uLongf size = (uLongf)term[2] << 24 | (uLongf)term[3] << 16 | (uLongf)term[4] << 8 | term[5];
    if (size > (uLongf)1 << 30) return error(Loc{}, fmt::format(FMT_STRING("{}: the term is too large"), name));
    inflated.resize(size + 1);
    inflated[0] = 131;
    uLongf got = size;
    if (uncompress(inflated.data() + 1, &got, term + 6, (uLong)(termLen - 6)) != Z_OK || got != size)
      return error(Loc{}, fmt::format(FMT_STRING("{}: the compressed term does not inflate"), name));
    term = inflated.data();
    termLen = inflated.size();
  }
  TermReader reader(term + 1, termLen - 1, name);
  NXC_TRY(root, reader.term());
  if (!reader.atEnd()) return error(Loc{}, fmt::format(FMT_STRING("{}: bytes follow the term"), name));
  const uint8_t *buffers = bytes.data() + 12 + termSize;
  return fromTerm(root, buffers, bytes.size() - 12 - termSize, bigEndian, name);
}

Result<HostValue> readNxSerialized(const std::string &path) {
  NXC_TRY(bytes, readFileBytes(path));
  return parseNxSerialized(bytes, path);
}

} // namespace nxc

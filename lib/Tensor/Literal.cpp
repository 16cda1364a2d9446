//===- Literal.cpp - tensor literals as Nx writes them --------------------===//
//
// Parses "f32:[[1, 2], [3.5, NaN]]" into a HostTensor. The value syntax is
// what Nx prints and Nx.tensor/2 takes: numbers, nested lists, booleans and
// the non-finite atoms. The type is inferred as Nx.tensor/2's infer_type/1
// does (nx/lib/nx.ex; Nx.Type.infer/1 merged with Nx.Type.merge/2) unless a
// "TYPE:" prefix gives it. Values are then stored as Nx stores them (f16
// rounded once, directly from the double, as Erlang's <<x::float-16>>),
// except that values out of the type's range are errors here, and that bf16
// is rounded to nearest even: Nx.Floating.dump_bf16/1 keeps the top half of
// the f32 (truncation), under which half of the values Nx prints for bf16
// would not parse back to the same bits.
//
//===----------------------------------------------------------------------===//
#include "nxc/Tensor/HostTensor.h"

#include "nxc/Tensor/Half.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace nxc {
namespace {

/// One number, list or special value of the literal.
struct Node {
  enum Kind { List, Int, Float, Bool, NaN, PosInf, NegInf } kind = Int;
  size_t pos = 0;             ///< offset of its first character
  size_t len = 0;             ///< number: its length as written (for messages)
  bool negative = false;      ///< Int: the sign
  uint64_t magnitude = 0;     ///< Int: the absolute value
  double value = 0;           ///< Float
  bool boolean = false;       ///< Bool
  std::vector<Node> children; ///< List
  /// A complex number as Nx prints one (`1.0-2.5i`): its imaginary part
  /// (the node itself is the real part).
  std::optional<double> imaginary;
};

class LiteralParser {
public:
  explicit LiteralParser(std::shared_ptr<const SourceFile> src) : src_(std::move(src)), s_(src_->text) {}

  Result<HostTensor> parse() {
    skipSpace();
    std::optional<ElemType> type;
    size_t typePos = p_;
    // A type prefix: letters, digits and '_' followed by ':' ("f32:", "u8:",
    // "f8_e4m3fn:").
    size_t q = p_;
    while (q < s_.size() && (std::isalnum((unsigned char)s_[q]) || s_[q] == '_')) ++q;
    if (q > p_ && q < s_.size() && s_[q] == ':' && std::isalpha((unsigned char)s_[p_])) {
      std::string name = s_.substr(p_, q - p_);
      type = ElemType::parse(name);
      inferred_ = false;
      // pred: as in templates, u8 (Nx's predicate type).
      if (!type)
        return err(typePos,
                   fmt::format(FMT_STRING("unknown type '{}'; expected one of {}"), name, ElemType::spellings()));
      p_ = q + 1;
      skipSpace();
    }
    if (p_ >= s_.size()) return err(p_, "expected a number or a list");
    Node root;
    NXC_CHECK(value(root, 0));
    skipSpace();
    if (p_ < s_.size()) return err(p_, fmt::format(FMT_STRING("unexpected '{}' after the literal"), s_[p_]));

    Shape shape;
    NXC_CHECK(shapeOf(root, shape));
    ElemType elem = type ? *type : inferType(root);
    HostTensor t = HostTensor::zeros(elem, shape);
    int64_t index = 0;
    NXC_CHECK(store(root, t, index));
    return t;
  }

private:
  Diag err(size_t pos, const std::string &message) const {
    // Columns count from 1 on the line holding `pos`.
    int line = 1;
    size_t lineStart = 0;
    for (size_t i = 0; i < pos && i < s_.size(); ++i)
      if (s_[i] == '\n') {
        ++line;
        lineStart = i + 1;
      }
    return error(Loc{src_, line, (int)(pos - lineStart) + 1}, message);
  }

  void skipSpace() {
    while (p_ < s_.size() && std::isspace((unsigned char)s_[p_])) ++p_;
  }

  bool startsWith(const char *w) const { return s_.compare(p_, std::strlen(w), w) == 0; }

  /// Matches the word `w` not followed by an identifier character.
  bool word(const char *w) {
    size_t n = std::strlen(w);
    if (!startsWith(w)) return false;
    if (p_ + n < s_.size() && (std::isalnum((unsigned char)s_[p_ + n]) || s_[p_ + n] == '_')) return false;
    p_ += n;
    return true;
  }

  static constexpr int kMaxDepth = 64;

  Status value(Node &n, int depth) {
    skipSpace();
    n.pos = p_;
    if (p_ >= s_.size()) return err(p_, "expected a number or a list");
    char c = s_[p_];
    if (c == '[') {
      if (depth >= kMaxDepth) return err(p_, fmt::format(FMT_STRING("lists nested more than {} deep"), kMaxDepth));
      n.kind = Node::List;
      ++p_;
      skipSpace();
      if (p_ < s_.size() && s_[p_] == ']') {
        ++p_;
        return okStatus();
      }
      for (;;) {
        Node child;
        NXC_CHECK(value(child, depth + 1));
        n.children.push_back(std::move(child));
        skipSpace();
        if (p_ < s_.size() && s_[p_] == ',') {
          ++p_;
          continue;
        }
        if (p_ < s_.size() && s_[p_] == ']') {
          ++p_;
          return okStatus();
        }
        if (p_ >= s_.size()) return err(n.pos, "unclosed '['");
        return err(p_, "expected ',' or ']'");
      }
    }
    if (word("NaN") || word(":nan")) {
      n.kind = Node::NaN;
      return okStatus();
    }
    if (word("Inf") || word("+Inf") || word(":infinity")) {
      n.kind = Node::PosInf;
      return okStatus();
    }
    if (word("-Inf") || word(":neg_infinity")) {
      n.kind = Node::NegInf;
      return okStatus();
    }
    if (word("true") || word("false")) {
      n.kind = Node::Bool;
      n.boolean = s_[n.pos] == 't';
      return okStatus();
    }
    if (c == '-' || c == '+' || std::isdigit((unsigned char)c)) return number(n);
    if (c == ']' || c == ',') return err(p_, "expected a number");
    size_t e = p_;
    while (e < s_.size() && (std::isalnum((unsigned char)s_[e]) || s_[e] == '_' || s_[e] == ':')) ++e;
    if (e > p_) return err(p_, fmt::format(FMT_STRING("unknown value '{}'"), s_.substr(p_, e - p_)));
    return err(p_, fmt::format(FMT_STRING("unexpected '{}'"), c));
  }

  /// [+-] digits [. digits] [e [+-] digits], with '_' between digits.
  Status number(Node &n) {
    size_t start = p_;
    std::string clean;
    if (s_[p_] == '-' || s_[p_] == '+') {
      n.negative = s_[p_] == '-';
      clean += s_[p_++];
    }
    auto digits = [&](const char *what) -> Status {
      if (p_ >= s_.size() || !std::isdigit((unsigned char)s_[p_]))
        return err(p_, fmt::format(FMT_STRING("expected digits{}"), what));
      while (p_ < s_.size()) {
        if (std::isdigit((unsigned char)s_[p_])) clean += s_[p_++];
        else if (s_[p_] == '_' && p_ + 1 < s_.size() && std::isdigit((unsigned char)s_[p_ + 1]) &&
                 std::isdigit((unsigned char)s_[p_ - 1]))
          ++p_;
        else break;
      }
      return okStatus();
    };
    NXC_CHECK(digits(""));
    bool isFloat = false;
    if (p_ < s_.size() && s_[p_] == '.') {
      isFloat = true;
      clean += s_[p_++];
      NXC_CHECK(digits(" after '.'"));
    }
    if (p_ < s_.size() && (s_[p_] == 'e' || s_[p_] == 'E')) {
      isFloat = true;
      clean += s_[p_++];
      if (p_ < s_.size() && (s_[p_] == '-' || s_[p_] == '+')) clean += s_[p_++];
      NXC_CHECK(digits(" in the exponent"));
    }
    // A complex number: the real part, then [+-] the imaginary part and 'i'.
    if (p_ + 1 < s_.size() && (s_[p_] == '+' || s_[p_] == '-') &&
        (std::isdigit((unsigned char)s_[p_ + 1]) || s_.compare(p_ + 1, 3, "Inf") == 0 ||
         s_.compare(p_ + 1, 3, "NaN") == 0)) {
      bool minus = s_[p_++] == '-';
      double im;
      if (s_.compare(p_, 3, "Inf") == 0 || s_.compare(p_, 3, "NaN") == 0) {
        im = s_[p_] == 'I' ? HUGE_VAL : std::nan("");
        p_ += 3;
      } else {
        size_t b = p_;
        while (p_ < s_.size() &&
               (std::isdigit((unsigned char)s_[p_]) || s_[p_] == '.' || s_[p_] == 'e' || s_[p_] == 'E' ||
                ((s_[p_] == '-' || s_[p_] == '+') && (s_[p_ - 1] == 'e' || s_[p_ - 1] == 'E'))))
          ++p_;
        char *end = nullptr;
        std::string text = s_.substr(b, p_ - b);
        im = std::strtod(text.c_str(), &end);
        if (end != text.c_str() + text.size()) return err(b, "malformed imaginary part");
      }
      if (p_ >= s_.size() || s_[p_] != 'i') return err(p_, "expected 'i' after the imaginary part");
      ++p_;
      n.imaginary = minus ? -im : im;
    }
    if (p_ < s_.size() && (std::isalnum((unsigned char)s_[p_]) || s_[p_] == '_' || s_[p_] == '.'))
      return err(p_, fmt::format(FMT_STRING("unexpected '{}' in a number"), s_[p_]));
    n.len = p_ - start;
    const std::string text = textOf(n);
    if (isFloat) {
      n.kind = Node::Float;
      n.value = std::strtod(clean.c_str(), nullptr);
      if (std::isinf(n.value)) return err(start, fmt::format(FMT_STRING("{} is too large for a float"), text));
      return okStatus();
    }
    n.kind = Node::Int;
    uint64_t m = 0;
    for (char c : clean) {
      if (!std::isdigit((unsigned char)c)) continue;
      uint64_t d = (uint64_t)(c - '0');
      if (m > (UINT64_MAX - d) / 10)
        return err(start, fmt::format(FMT_STRING("integer {} is too large (more than 64 bits)"), text));
      m = m * 10 + d;
    }
    if (n.negative && m > (1ull << 63))
      return err(start, fmt::format(FMT_STRING("integer {} is too small for s64"), text));
    if (n.negative && m == 0) n.negative = false;
    n.magnitude = m;
    return okStatus();
  }

  /// The shape of a (non-ragged) nested list.
  Status shapeOf(const Node &n, Shape &shape) {
    if (n.kind != Node::List) return okStatus();
    shape.push_back((int64_t)n.children.size());
    if (n.children.empty()) return okStatus();
    Shape inner;
    NXC_CHECK(shapeOf(n.children[0], inner));
    bool firstIsList = n.children[0].kind == Node::List;
    for (size_t i = 1; i < n.children.size(); ++i) {
      const Node &c = n.children[i];
      if ((c.kind == Node::List) != firstIsList)
        return err(c.pos, firstIsList ? "expected a list like the first element, found a number"
                                      : "expected a number like the first element, found a list");
      Shape s;
      NXC_CHECK(shapeOf(c, s));
      if (s != inner)
        return err(c.pos, fmt::format(FMT_STRING("ragged list: this element has shape {}, the first has {}"),
                                      shapeString(s), shapeString(inner)));
    }
    shape.insert(shape.end(), inner.begin(), inner.end());
    return okStatus();
  }

  /// Nx.Type.infer/1 merged over the leaves; f32 for no leaves at all.
  static std::optional<ElemType> leafType(const Node &n) {
    switch (n.kind) {
    case Node::List: {
      std::optional<ElemType> t;
      for (const Node &c : n.children) {
        auto ct = leafType(c);
        if (ct) t = t ? mergeTypes(*ct, *t) : *ct;
      }
      return t;
    }
    case Node::Int: return n.imaginary ? ElemType{TypeKind::C, 64} : ElemType::s32();
    case Node::Bool: return ElemType::u8();
    default: return n.imaginary ? ElemType{TypeKind::C, 64} : ElemType::f32();
    }
  }
  static ElemType inferType(const Node &n) { return leafType(n).value_or(ElemType::f32()); }

  Status store(const Node &n, HostTensor &t, int64_t &index) {
    if (n.kind == Node::List) {
      for (const Node &c : n.children) NXC_CHECK(store(c, t, index));
      return okStatus();
    }
    // A complex element takes a real number as its real part.
    if (n.imaginary && !t.type.elem.isComplex())
      return err(n.pos, fmt::format(FMT_STRING("the complex number {} cannot be stored in {}"), textOf(n),
                                    t.type.elem.name()));
    NXC_TRY(bits, encode(n, t.type.elem.partType()));
    t.setBits(index, bits);
    if (n.imaginary) {
      Node im;
      im.kind = std::isnan(*n.imaginary)   ? Node::NaN
                : std::isinf(*n.imaginary) ? (*n.imaginary < 0 ? Node::NegInf : Node::PosInf)
                                           : Node::Float;
      im.value = *n.imaginary;
      im.pos = n.pos;
      im.len = n.len;
      NXC_TRY(imBits, encode(im, t.type.elem.partType()));
      t.setPartBits(index, 1, imBits);
    }
    ++index;
    return okStatus();
  }

  std::string textOf(const Node &n) const { return s_.substr(n.pos, n.len); }

  /// The bit pattern of one value in type `e`.
  Result<uint64_t> encode(const Node &n, ElemType e) {
    if (e.isInteger()) {
      uint64_t mag = n.magnitude;
      bool neg = n.negative;
      switch (n.kind) {
      case Node::Bool:
        mag = n.boolean;
        neg = false;
        break;
      case Node::Int: break;
      case Node::Float:
        return err(n.pos, fmt::format(FMT_STRING("the float {} cannot be stored in {} (an integer type)"), textOf(n),
                                      e.name()));
      default:
        return err(n.pos,
                   fmt::format(FMT_STRING("a non-finite value cannot be stored in {} (an integer type)"), e.name()));
      }
      uint64_t mask = e.bits == 64 ? ~0ull : (1ull << e.bits) - 1;
      if (e.isSigned()) {
        uint64_t maxPos = (1ull << (e.bits - 1)) - 1;
        if ((!neg && mag > maxPos) || (neg && mag > maxPos + 1))
          return err(n.pos, fmt::format(FMT_STRING("{} is out of range for {} ({}..{}){}"), textOf(n), e.name(),
                                        -(int64_t)maxPos - 1, maxPos,
                                        inferred_ ? "; integers default to s32, prefix the literal with s64: or u64:"
                                                  : ""));
        return (neg ? (0 - mag) : mag) & mask;
      }
      if (neg || mag > mask)
        return err(n.pos, fmt::format(FMT_STRING("{} is out of range for {} (0..{})"), textOf(n), e.name(), mask));
      return mag;
    }

    double x = 0;
    switch (n.kind) {
    case Node::Int: x = n.negative ? -(double)n.magnitude : (double)n.magnitude; break;
    case Node::Float: x = n.value; break;
    case Node::Bool: x = n.boolean ? 1 : 0; break;
    case Node::NaN: x = std::nan(""); break;
    case Node::PosInf: x = HUGE_VAL; break;
    case Node::NegInf: x = -HUGE_VAL; break;
    case Node::List: break;
    }
    bool finite = std::isfinite(x);
    auto overflow = [&]() {
      return err(n.pos, fmt::format(FMT_STRING("{} is out of range for {}"), textOf(n), e.name()));
    };
    if (e.kind == TypeKind::BF) {
      if (x != x) return (uint64_t)0x7FC0; // Nx.Type.nan_binary({:bf, 16})
      uint16_t b = floatToBf16((float)x);   // f32 rounding first, as Nx does
      if (finite && (b & 0x7FFF) == 0x7F80) return overflow();
      return b;
    }
    // The f8 types saturate or round to infinity as Nx's dumps do.
    if (e.isF8()) return doubleToF8(x, e);
    switch (e.bits) {
    case 16: {
      uint16_t h = doubleToF16(x);
      if (finite && (h & 0x7FFF) == 0x7C00) return overflow();
      return h;
    }
    case 32: {
      float f = (float)x;
      if (finite && std::isinf(f)) return overflow();
      return floatBits(f);
    }
    default: return doubleBits(x);
    }
  }

  std::shared_ptr<const SourceFile> src_;
  const std::string &s_;
  size_t p_ = 0;
  bool inferred_ = true; ///< no "TYPE:" prefix was given
};

} // namespace

Result<HostTensor> parseLiteral(std::shared_ptr<const SourceFile> source) {
  return LiteralParser(std::move(source)).parse();
}

} // namespace nxc

//===- Signature.cpp - parsing templates and --fn signatures --------------===//
#include "nxc/Sema/Signature.h"
#include "nxc/Frontend/AST.h"
#include "nxc/Target/CText.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iterator>

namespace nxc {

std::string Template::str() const {
  if (!constantPath.empty() && !values) return "@" + constantPath;
  if (!term.empty()) return term;
  if (!isTuple) return tensor.str();
  std::string s = keys.empty() ? "{" : "%" + structName + "{";
  bool allAtoms = std::none_of(keys.begin(), keys.end(), [](const std::string &k) { return ast::isStringKey(k); });
  for (size_t i = 0; i < elems.size(); ++i)
    s += (i ? ", " : "") + (keys.empty() ? "" : ast::mapKeyPrefix(keys[i], allAtoms)) + elems[i].str();
  return s + "}";
}

void Template::flatten(std::vector<TensorType> &out) const {
  if (!term.empty()) return;
  if (!isTuple) { out.push_back(tensor); return; }
  for (auto &e : elems) e.flatten(out);
}

std::string Signature::mangledArgs() const {
  std::vector<TensorType> leaves;
  for (auto &a : args) a.flatten(leaves);
  std::string s;
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (i) s += "__";
    s += leaves[i].elem.name();
    if (!leaves[i].shape.empty())
      fmt::format_to(std::back_inserter(s), FMT_STRING("_{}"), fmt::join(leaves[i].shape, "x"));
  }
  return s;
}

namespace {

class SigParser {
public:
  explicit SigParser(std::shared_ptr<const SourceFile> src) : src_(std::move(src)), s_(src_->text) {}

  Result<Signature> signature() {
    Signature sig;
    skipSpace();
    sig.loc = loc();
    std::string first = ident();
    if (first.empty()) return err("expected a function name, as in 'softmax(f32[100])'");
    skipSpace();
    if (peek() == '=') {
      ++i_;
      skipSpace();
      sig.cname = first;
      if (!isCIdentifier(first))
        return error(sig.loc, fmt::format(FMT_STRING("'{}' is not a valid C identifier for the entry name"), first));
      first = ident();
      if (first.empty()) return err("expected a function name after '='");
    }
    // Mod.Sub.fun
    while (peek() == '.') {
      ++i_;
      if (!sig.module.empty()) sig.module += ".";
      sig.module += first;
      first = ident();
      if (first.empty()) return err("expected a function name after '.'");
    }
    sig.function = first;
    skipSpace();
    if (peek() != '(')
      return err(
          fmt::format(FMT_STRING("expected '(' and the argument templates after '{0}', as in '{0}(f32[100])'"), first));
    ++i_;
    skipSpace();
    while (peek() != ')') {
      if (keywordAhead()) {
        NXC_CHECK(options(sig));
        break;
      }
      NXC_TRY(t, templ());
      sig.args.push_back(std::move(t));
      skipSpace();
      if (peek() == ',') {
        ++i_;
        skipSpace();
        if (peek() == ')') return err("expected a template after ','");
        continue;
      }
      if (peek() != ')') return err("expected ',' or ')' after an argument template");
    }
    ++i_;
    skipSpace();
    if (i_ < s_.size()) return err("unexpected text after the signature");
    return sig;
  }

private:
  std::shared_ptr<const SourceFile> src_;
  const std::string &s_;
  size_t i_ = 0;

  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skipSpace() { while (i_ < s_.size() && std::isspace((unsigned char)s_[i_])) ++i_; }
  /// The line and column of position i_ (a --fn text may span lines).
  Loc loc() const {
    size_t lineStart = s_.rfind('\n', i_ == 0 ? 0 : i_ - 1);
    lineStart = lineStart == std::string::npos || i_ == 0 ? 0 : lineStart + 1;
    int line = 1 + (int)std::count(s_.begin(), s_.begin() + (std::ptrdiff_t)std::min(i_, s_.size()), '\n');
    return Loc{src_, line, (int)(i_ - lineStart) + 1};
  }
  Diag err(const std::string &m) const { return error(loc(), m); }

  /// Whether a keyword (`alpha: `, an identifier, a colon and then no
  /// second colon) starts at i_.
  bool keywordAhead() const {
    size_t j = i_;
    while (j < s_.size() && (std::isalnum((unsigned char)s_[j]) || s_[j] == '_' || (unsigned char)s_[j] >= 0x80)) ++j;
    if (j == i_ || std::isdigit((unsigned char)s_[i_]) || j + 1 >= s_.size() || s_[j] != ':') return false;
    return s_[j + 1] != ':';
  }

  /// The trailing keyword list, up to the signature's closing ')': its text,
  /// and a source that holds it in brackets at its own columns.
  Status options(Signature &sig) {
    Loc at = loc();
    size_t b = i_;
    int depth = 0;
    char quote = 0;
    for (; i_ < s_.size(); ++i_) {
      char c = s_[i_];
      if (quote) {
        if (c == '\\') ++i_;
        else if (c == quote) quote = 0;
        continue;
      }
      if (c == '"' || c == '\'') quote = c;
      else if (c == '(' || c == '[' || c == '{') ++depth;
      else if (c == ']' || c == '}') --depth;
      else if (c == ')' && depth-- == 0) break;
    }
    if (i_ >= s_.size()) return error(at, "expected ')' after the options");
    size_t e = i_;
    while (e > b && std::isspace((unsigned char)s_[e - 1])) --e;
    sig.optionsText = s_.substr(b, e - b);
    // b > 0: a '(' or ',' stands before the options.
    std::string text = s_;
    for (char &c : text)
      if (c != '\n') c = ' ';
    text[b - 1] = '[';
    text.replace(b, e - b, sig.optionsText);
    text[i_] = ']';
    sig.options = std::make_shared<const SourceFile>(SourceFile{src_->name, text});
    return okStatus();
  }
  std::string ident() {
    size_t b = i_;
    while (i_ < s_.size() && (std::isalnum((unsigned char)s_[i_]) || s_[i_] == '_' || s_[i_] == '?' || s_[i_] == '!' ||
                              (unsigned char)s_[i_] >= 0x80)) // Unicode names, as the lexer takes them
      ++i_;
    return s_.substr(b, i_ - b);
  }

  Result<Template> templ() {
    Template t;
    t.loc = loc();
    if (peek() == '%' && i_ + 1 < s_.size() && std::isupper((unsigned char)s_[i_ + 1])) {
      // %Mod{key: template, ...}: a struct of tensors (its leaves by key,
      // as a map's).
      size_t b = ++i_;
      while (i_ < s_.size() && (std::isalnum((unsigned char)s_[i_]) || s_[i_] == '_' || s_[i_] == '.')) ++i_;
      t.structName = s_.substr(b, i_ - b);
      if (peek() != '{') return err(fmt::format(FMT_STRING("expected '{{' after %{}"), t.structName));
    }
    if (!t.structName.empty() || (peek() == '%' && i_ + 1 < s_.size() && s_[i_ + 1] == '{')) {
      // %{key: template, ...}: sorted by key, as Nx flattens maps.
      i_ += t.structName.empty() ? 2 : 1;
      t.isTuple = true;
      skipSpace();
      std::vector<std::pair<std::string, Template>> entries;
      while (peek() != '}') {
        Loc keyLoc = loc();
        std::string key;
        if (peek() == '"') {
          // "key" => template: a string key (Axon's weight maps).
          size_t b = ++i_;
          while (i_ < s_.size() && s_[i_] != '"' && s_[i_] != '\\') ++i_;
          if (i_ >= s_.size() || s_[i_] != '"')
            return error(keyLoc, "expected a closing '\"' (without escapes) in a string key of a map template");
          key = std::string(1, ast::kStringKeyMark) + s_.substr(b, i_ - b);
          ++i_;
          skipSpace();
          if (s_.compare(i_, 2, "=>") != 0)
            return error(loc(), "expected '=>' after a string key, as in %{\"w\" => f32[2]}");
          i_ += 2;
        } else {
          key = ident();
          if (key.empty() || peek() != ':')
            return error(keyLoc,
                         "expected key: template (or \"key\" => template) in a map template, as in %{w: f32[2]}");
          ++i_;
        }
        skipSpace();
        for (auto &e : entries)
          if (e.first == key)
            return error(keyLoc, fmt::format(FMT_STRING("the key {} appears twice in the map template"),
                                             ast::isStringKey(key) ? "\"" + ast::keyText(key) + "\"" : key));
        NXC_TRY(e, templ());
        entries.push_back({key, std::move(e)});
        skipSpace();
        if (peek() == ',') { ++i_; skipSpace(); continue; }
        if (peek() != '}') return err("expected ',' or '}' in a map template");
      }
      ++i_;
      std::sort(entries.begin(), entries.end(), [](auto &a, auto &b) { return ast::mapKeyLess(a.first, b.first); });
      for (auto &e : entries) {
        t.keys.push_back(e.first);
        t.elems.push_back(std::move(e.second));
      }
      return t;
    }
    if (peek() == '{') {
      ++i_;
      t.isTuple = true;
      skipSpace();
      while (peek() != '}') {
        NXC_TRY(e, templ());
        t.elems.push_back(std::move(e));
        skipSpace();
        if (peek() == ',') { ++i_; skipSpace(); continue; }
        if (peek() != '}') return err("expected ',' or '}' in a tuple template");
      }
      ++i_;
      return t;
    }
    if (peek() == '@') {
      ++i_;
      size_t b = i_;
      while (i_ < s_.size() && !std::strchr(",)}: \t", s_[i_])) ++i_;
      if (b == i_) return err("expected a file after '@', as in @weights.npy or @params.npz");
      std::string path = s_.substr(b, i_ - b);
      // .npy (a tensor), .npz (a tuple), or any other name: a file
      // Nx.serialize/2 wrote, its container read from the file.
      std::string ext = path.size() >= 4 ? path.substr(path.size() - 4) : "";
      Template c;
      if (peek() == ':') {
        ++i_;
        skipSpace();
        NXC_TRY(d, templ());
        if (!d.constantPath.empty()) return error(d.loc, "a constant's declared template cannot be another constant");
        if (ext == ".npz" && !d.isTuple)
          return error(
              d.loc,
              fmt::format(FMT_STRING("{} holds a tuple; declare it as one, as in @{}:{{f32[2], f32[3]}}"), path, path));
        if (ext == ".npy" && d.isTuple)
          return error(d.loc, fmt::format(FMT_STRING("{} holds one tensor; declare it as one, as in @{}:f32[2,3]"),
                                          path, path));
        c = std::move(d);
        c.declared = true;
      } else {
        c.isTuple = ext == ".npz";
      }
      c.loc = t.loc;
      c.constantPath = path;
      return c;
    }
    Loc typeLoc = loc();
    {
      // A term (a struct's keep field): true, false, nil, :atom or a number.
      size_t b = i_;
      if (peek() == ':' || peek() == '-' || std::isdigit((unsigned char)peek())) {
        ++i_;
        while (i_ < s_.size() && (std::isalnum((unsigned char)s_[i_]) || std::strchr("_?!.", s_[i_]) ||
                                  ((s_[i_] == '-' || s_[i_] == '+') && (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E'))))
          ++i_;
        t.term = s_.substr(b, i_ - b);
        if (t.term.size() < 2 && t.term[0] != ':' && !std::isdigit((unsigned char)t.term[0]))
          return error(typeLoc, "expected a template such as f32[100], or a term such as :nan or 1.0");
        return t;
      }
      std::string word = ident();
      if (word == "true" || word == "false" || word == "nil") {
        t.term = word;
        return t;
      }
      i_ = b;
    }
    std::string tn = ident();
    if (tn.empty()) return err("expected a template such as f32[100], s32[] or {f32[2], f32[2]}");
    auto et = ElemType::parse(tn);
    if (!et)
      return error(typeLoc,
                   fmt::format(FMT_STRING("unknown type '{}'; expected one of {}"), tn, ElemType::spellings()));
    t.tensor.elem = *et;
    skipSpace();
    if (peek() != '[')
      return err(fmt::format(FMT_STRING("expected '[' after the type, as in {0}[100] (or {0}[] for a scalar)"), tn));
    // Either f32[30,784] or Nx's own f32[30][784]; `[]` is a scalar.
    bool any = false;
    while (peek() == '[') {
      ++i_;
      skipSpace();
      if (peek() == ']') {
        if (any) return err("empty '[]' after dimensions");
        ++i_;
        return t;
      }
      while (true) {
        skipSpace();
        std::string name;
        size_t save = i_;
        std::string word = ident();
        skipSpace();
        if (!word.empty() && !std::isdigit((unsigned char)word[0]) && peek() == ':') {
          ++i_;
          skipSpace();
          name = word;
        } else {
          i_ = save;
        }
        Loc dimLoc = loc();
        size_t b = i_;
        while (std::isdigit((unsigned char)peek())) ++i_;
        if (b == i_) return error(dimLoc, "expected a dimension size (a non-negative integer)");
        std::string digits = s_.substr(b, i_ - b);
        size_t significant = digits.find_first_not_of('0');
        if (significant != std::string::npos && digits.size() - significant > 12)
          return error(dimLoc, fmt::format(FMT_STRING("dimension {} is too large"), digits));
        if (t.tensor.shape.size() == (size_t)kMaxRank)
          return error(dimLoc, fmt::format(FMT_STRING("a template of rank more than {}; nxc supports tensors up to "
                                                      "rank {}"),
                                           kMaxRank, kMaxRank));
        t.tensor.shape.push_back(std::stoll(digits));
        t.tensor.names.push_back(name);
        any = true;
        skipSpace();
        if (peek() == ',') { ++i_; continue; }
        if (peek() == ']') { ++i_; break; }
        return err("expected ',' or ']' in the dimensions");
      }
      skipSpace();
    }
    int64_t elements = 1;
    for (int64_t d : t.tensor.shape)
      if (__builtin_mul_overflow(elements, d, &elements) || elements > (int64_t(1) << 40))
        return error(typeLoc,
                     fmt::format(FMT_STRING("template {} is too large (more than 2^40 elements)"), t.tensor.str()));
    bool named = false;
    for (auto &n : t.tensor.names) named |= !n.empty();
    if (!named) t.tensor.names.clear();
    return t;
  }
};

} // namespace

Result<Signature> parseSignature(std::shared_ptr<const SourceFile> source) {
  SigParser p(std::move(source));
  return p.signature();
}

} // namespace nxc

//===- CompileTimeElixir.cpp - the Elixir that transforms run at trace time ===//
//
// Nx runs `deftransform`s, plain `def`s and the option handling of library
// code as Elixir while it traces: on numbers, atoms, strings, lists, keyword
// lists, tuples and functions, with tensors as opaque values. This file is
// nxc's subset of that Elixir: Kernel's guards and conversions, `raise`,
// string building, and the Keyword, List, Enum and Tuple functions defn
// libraries call. A function outside the subset is named in its error.
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include "nxc/Frontend/ElixirFloat.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <map>
#include <functional>
#include <set>

namespace nxc::sema {

bool Tracer::inElixir() const {
  if (moduleLevel_ > 0) return true;
  for (auto it = stack_.rbegin(); it != stack_.rend(); ++it)
    if (*it) return (*it)->kind != "defn" && (*it)->kind != "defnp";
  return false;
}

namespace {

Value boolean(bool b, const Loc &loc) { return Value::atomValue(b ? "true" : "false", loc); }

bool truthy(const Value &v) { return !(v.kind == Value::Atom && (v.atom == "nil" || v.atom == "false")); }

std::string atomText(const std::string &a) {
  bool plain = !a.empty() && (std::isalpha((unsigned char)a[0]) || a[0] == '_');
  for (char c : a)
    plain = plain && (std::isalnum((unsigned char)c) || c == '_' || c == '?' || c == '!' || c == '@');
  return plain ? a : fmt::format(FMT_STRING("\"{}\""), a);
}

bool sameTerm(const Value &x, const Value &y) {
  if ((x.kind == Value::Int || x.kind == Value::Float) && (y.kind == Value::Int || y.kind == Value::Float))
    return x.asDouble() == y.asDouble();
  if (x.kind != y.kind) return false;
  switch (x.kind) {
  case Value::Atom:
  case Value::String: return x.atom == y.atom;
  case Value::Tensor: return x.node == y.node;
  case Value::Tuple:
  case Value::List:
    if (x.elems.size() != y.elems.size() || (x.kind == Value::List && x.keys != y.keys)) return false;
    for (size_t k = 0; k < x.elems.size(); ++k)
      if (!sameTerm(x.elems[k], y.elems[k])) return false;
    return true;
  case Value::Range: return x.i == y.i && x.last == y.last && x.step == y.step && x.full == y.full;
  case Value::Map: {
    if (x.atom != y.atom || x.keys.size() != y.keys.size()) return false;
    for (size_t k = 0; k < x.keys.size(); ++k) {
      auto it = std::find(y.keys.begin(), y.keys.end(), x.keys[k]);
      if (it == y.keys.end() || !sameTerm(x.elems[k], y.elems[it - y.keys.begin()])) return false;
    }
    return true;
  }
  default: return false;
  }
}

/// The container `v` with each leaf replaced by `leaf(it)`, in the order
/// Nx.Defn.Composite walks containers: tuples by position, maps by key,
/// structs by field; tensors and numbers are the leaves. A struct's fields
/// that hold no container (atoms, strings, lists, functions: options Nx
/// keeps aside) are kept as they are. Anything else is not a container.
Result<Value> mapLeaves(const Value &v, const std::function<Result<Value>(const Value &)> &leaf, const Loc &loc,
                        bool inStruct = false) {
  switch (v.kind) {
  case Value::Tensor:
  case Value::Int:
  case Value::Float: return leaf(v);
  case Value::Tuple:
  case Value::Map: {
    Value out = v;
    bool isStruct = v.kind == Value::Map && !v.atom.empty();
    for (auto &e : out.elems) {
      if (isStruct && (e.kind == Value::Atom || e.kind == Value::String || e.kind == Value::List ||
                       e.kind == Value::Function || e.kind == Value::Range))
        continue;
      NXC_TRY(r, mapLeaves(e, leaf, loc, isStruct));
      e = std::move(r);
    }
    return out;
  }
  default:
    (void)inStruct;
    return error(v.loc.valid() ? v.loc : loc,
                 fmt::format(FMT_STRING("Nx.Defn.Composite expects a container (tensors, numbers, and tuples and maps "
                                        "of them), got {}"),
                             describeValue(v)));
  }
}

} // namespace

Value typeValue(ElemType t, const Loc &loc) {
  std::string kind = t.kind == TypeKind::F ? "f" : t.kind == TypeKind::BF ? "bf" : t.kind == TypeKind::S ? "s" : "u";
  return Value::tuple({Value::atomValue(kind, loc), Value::number(t.bits, loc)}, loc);
}

Result<Value> Tracer::nxTypeCall(const std::string &name, std::vector<Value> &args, const Loc &loc) {
  std::vector<ElemType> types;
  for (auto &a : args) {
    NXC_TRY(t, parseType(a));
    types.push_back(t);
  }
  if (name == "merge" && types.size() == 2) return typeValue(mergeTypes(types[0], types[1]), loc);
  if (name == "normalize!" && types.size() == 1) return typeValue(types[0], loc);
  if (name == "to_floating" && types.size() == 1)
    return typeValue(types[0].isFloat() ? types[0] : mergeTypes(types[0], ElemType::f32()), loc);
  if (name == "float?" && types.size() == 1) return boolean(types[0].isFloat(), loc);
  if (name == "integer?" && types.size() == 1) return boolean(types[0].isInteger(), loc);
  if (name == "to_string" && types.size() == 1) {
    Value s;
    s.kind = Value::String;
    s.atom = types[0].name();
    s.loc = loc;
    return s;
  }
  return error(loc, fmt::format(FMT_STRING("Nx.Type.{}/{} is not supported by nxc (it knows merge/2, "
                                           "normalize!/1, to_floating/1, float?/1, integer?/1 and to_string/1)"),
                                name, args.size()));
}

std::string Tracer::inspectValue(const Value &v) {
  switch (v.kind) {
  case Value::Int: return std::to_string(v.i);
  case Value::Float: return erlangShortDouble(v.f);
  case Value::Atom:
    if (v.atom == "nil" || v.atom == "true" || v.atom == "false") return v.atom;
    return ":" + atomText(v.atom);
  case Value::String: {
    std::string out = "\"";
    for (char c : v.atom) out += c == '"' ? std::string("\\\"") : c == '\n' ? std::string("\\n") : std::string(1, c);
    return out + "\"";
  }
  case Value::Tensor: {
    const TensorType &t = g_.typeOf(v.node);
    std::string dims;
    for (int64_t d : t.shape) dims += fmt::format(FMT_STRING("[{}]"), d);
    return fmt::format(FMT_STRING("#Nx.Tensor<{}{}>"), t.elem.name(), dims);
  }
  case Value::Tuple:
  case Value::List: {
    std::vector<std::string> items;
    for (size_t k = 0; k < v.elems.size(); ++k)
      items.push_back(v.kind == Value::List && !v.keys[k].empty()
                          ? fmt::format(FMT_STRING("{}: {}"), atomText(v.keys[k]), inspectValue(v.elems[k]))
                          : inspectValue(v.elems[k]));
    return fmt::format(FMT_STRING("{}{}{}"), v.kind == Value::Tuple ? "{" : "[", fmt::join(items, ", "),
                       v.kind == Value::Tuple ? "}" : "]");
  }
  case Value::Range:
    if (v.full) return "..";
    return v.step == 1 || (v.step == -1 && v.i > v.last) ? fmt::format(FMT_STRING("{}..{}"), v.i, v.last)
                                                           : fmt::format(FMT_STRING("{}..{}//{}"), v.i, v.last, v.step);
  case Value::Function: return "#Function<>";
  case Value::Map: {
    std::vector<std::string> items;
    bool allAtoms = std::none_of(v.keys.begin(), v.keys.end(), ast::isStringKey);
    for (size_t k = 0; k < v.elems.size(); ++k)
      items.push_back(ast::mapKeyPrefix(ast::isStringKey(v.keys[k]) ? v.keys[k] : atomText(v.keys[k]), allAtoms) +
                      inspectValue(v.elems[k]));
    return fmt::format(FMT_STRING("%{}{{{}}}"), v.atom, fmt::join(items, ", "));
  }
  }
  return "?";
}

Result<std::string> Tracer::elixirToString(const Value &v, const Loc &loc) {
  switch (v.kind) {
  case Value::String: return v.atom;
  case Value::Atom: return v.atom == "nil" ? std::string() : v.atom;
  case Value::Int:
  case Value::Float: return inspectValue(v);
  default:
    return error(v.loc.valid() ? v.loc : loc,
                 fmt::format(FMT_STRING("cannot turn {} into a string (String.Chars is not implemented for it; use "
                                        "inspect/1)"),
                             describeValue(v)));
  }
}

Result<Value> Tracer::interpolation(const Expr &e, Env &env) {
  std::string out;
  for (auto &part : e.children) {
    if (part->kind == ExprKind::String) {
      out += part->name;
      continue;
    }
    NXC_TRY(v, eval(*part, env));
    NXC_TRY(text, elixirToString(v, part->loc));
    out += text;
  }
  Value s;
  s.kind = Value::String;
  s.atom = std::move(out);
  s.loc = e.loc;
  return s;
}

Result<Value> Tracer::raiseCall(std::vector<Value> &args, const Loc &loc) {
  // raise "message" (RuntimeError), raise Module, raise Module, "message" or
  // raise Module, message: "..." : the trace stops here, as Nx's does.
  std::string kind = "RuntimeError", message;
  if (args.size() == 1 && args[0].kind == Value::String) {
    message = args[0].atom;
  } else if (!args.empty() && args[0].kind == Value::Atom && !args[0].isNil()) {
    kind = args[0].atom;
    if (args.size() == 2 && args[1].kind == Value::String) message = args[1].atom;
    else if (args.size() == 2 && args[1].kind == Value::List) {
      for (size_t k = 0; k < args[1].elems.size(); ++k)
        if (args[1].keys[k] == "message") {
          NXC_TRY(text, elixirToString(args[1].elems[k], loc));
          message = text;
        }
    }
  } else {
    return error(loc, fmt::format(FMT_STRING("raise/{} expects a message or an exception module, got {}"), args.size(),
                                  args.empty() ? std::string("nothing") : describeValue(args[0])));
  }
  return error(loc, fmt::format(FMT_STRING("** ({}) {}"), kind, message));
}

Result<std::optional<Value>> Tracer::elixirOperator(const std::string &op, const Value &a, const Value &b,
                                                    const Loc &loc) {
  bool tensors = a.kind == Value::Tensor || b.kind == Value::Tensor;
  if (op == "<>") {
    if (a.kind != Value::String || b.kind != Value::String)
      return error(loc, fmt::format(FMT_STRING("<> joins two strings, got {} and {}"), describeValue(a),
                                    describeValue(b)));
    Value s = a;
    s.atom += b.atom;
    s.loc = loc;
    return std::optional<Value>(s);
  }
  if (op == "++" || op == "--") {
    if (a.kind != Value::List || b.kind != Value::List)
      return error(loc, fmt::format(FMT_STRING("{} expects two lists, got {} and {}"), op, describeValue(a),
                                    describeValue(b)));
    Value out = a;
    out.loc = loc;
    if (op == "++") {
      out.elems.insert(out.elems.end(), b.elems.begin(), b.elems.end());
      out.keys.insert(out.keys.end(), b.keys.begin(), b.keys.end());
      out.keyLocs.insert(out.keyLocs.end(), b.keyLocs.begin(), b.keyLocs.end());
      return std::optional<Value>(out);
    }
    // Each element of b removes its first occurrence in a.
    for (size_t k = 0; k < b.elems.size(); ++k)
      for (size_t j = 0; j < out.elems.size(); ++j)
        if (out.keys[j] == b.keys[k] && sameTerm(out.elems[j], b.elems[k])) {
          out.elems.erase(out.elems.begin() + j);
          out.keys.erase(out.keys.begin() + j);
          out.keyLocs.erase(out.keyLocs.begin() + j);
          break;
        }
    return std::optional<Value>(out);
  }
  if (op == "in") {
    if (b.kind == Value::Range) {
      if (a.kind != Value::Int) return std::optional<Value>(boolean(false, loc));
      bool inside = b.step > 0 ? a.i >= b.i && a.i <= b.last && (a.i - b.i) % b.step == 0
                               : a.i <= b.i && a.i >= b.last && (b.i - a.i) % -b.step == 0;
      return std::optional<Value>(boolean(inside, loc));
    }
    if (b.kind != Value::List)
      return error(loc, fmt::format(FMT_STRING("`in` expects a list or a range on its right, got {}"),
                                    describeValue(b)));
    for (auto &x : b.elems)
      if (sameTerm(a, x)) return std::optional<Value>(boolean(true, loc));
    return std::optional<Value>(boolean(false, loc));
  }
  // Elixir's comparisons and boolean operators where a transform runs them
  // on terms (in defn they build tensors).
  if (!inElixir() || tensors) return std::optional<Value>();
  if (op == "==" || op == "!=" || op == "===" || op == "!==") {
    bool same = sameTerm(a, b) && (op.size() == 2 || a.kind == b.kind);
    return std::optional<Value>(boolean(same == (op[0] == '='), loc));
  }
  if ((op == "<" || op == ">" || op == "<=" || op == ">=") && (a.kind == Value::Int || a.kind == Value::Float) &&
      (b.kind == Value::Int || b.kind == Value::Float)) {
    double x = a.asDouble(), y = b.asDouble();
    bool r = op == "<" ? x < y : op == ">" ? x > y : op == "<=" ? x <= y : x >= y;
    return std::optional<Value>(boolean(r, loc));
  }
  return std::optional<Value>();
}

std::optional<bool> Tracer::elixirTruth(const Value &v) {
  if (!inElixir() || v.kind == Value::Tensor) return std::nullopt;
  return truthy(v);
}

Result<Value> Tracer::forExpr(const Expr &e, Env &env) {
  // As Nx: defn has no comprehensions; transforms run them as Elixir.
  if (!inElixir())
    return error(e.loc, "for comprehensions are not allowed in defn (Nx: undefined function for/3); run them in a "
                        "deftransform, or use while");
  size_t quals = e.children.size() - 1;
  const Expr &body = *e.children.back();
  std::optional<Value> into, acc;
  bool uniq = false;
  for (size_t q = 0; q < quals; ++q)
    if (e.children[q]->kind == ExprKind::Pair) {
      const Expr &opt = *e.children[q];
      NXC_TRY(v, eval(*opt.children[0], env));
      if (opt.name == "into") into = v;
      else if (opt.name == "reduce") acc = v;
      else if (opt.name == "uniq") uniq = truthy(v);
      else return error(opt.loc, fmt::format(FMT_STRING("unknown option :{} of for (into:, reduce: and uniq:)"),
                                             opt.name));
    }
  std::vector<Value> out;
  size_t steps = 0;
  std::function<Status(size_t, Env &)> run = [&](size_t q, Env &scope) -> Status {
    if (++steps > 1000000) return error(e.loc, "a for comprehension of more than 1,000,000 steps at compile time");
    if (q == quals) {
      if (!acc) {
        NXC_TRY(v, eval(body, scope));
        out.push_back(v);
        return okStatus();
      }
      // reduce: the first `acc -> expression` clause that matches.
      for (size_t k = 1; k + 1 < body.children.size(); k += 2) {
        const Expr *pattern = body.children[k].get();
        const Expr *guard = nullptr;
        if (pattern->kind == ExprKind::Binary && pattern->name == "when") {
          guard = pattern->children[1].get();
          pattern = pattern->children[0].get();
        }
        Env local(&scope);
        matchingHeads_ = true;
        auto m = matchCase(*pattern, *acc, local);
        matchingHeads_ = false;
        if (!m.ok()) return m.error();
        if (!m.value()) continue;
        if (guard) {
          NXC_TRY(g, eval(*guard, local));
          if (!truthy(g)) continue;
        }
        NXC_TRY(v, eval(*body.children[k + 1], local));
        acc = v;
        return okStatus();
      }
      return error(body.loc, "** (FunctionClauseError) no clause of the for's reduce matches " + inspectValue(*acc));
    }
    const Expr &x = *e.children[q];
    if (x.kind == ExprKind::Pair) return run(q + 1, scope);
    if (x.kind == ExprKind::Binary && x.name == "<-") {
      NXC_TRY(from, eval(*x.children[1], scope));
      std::vector<Value> items;
      if (from.kind == Value::List) {
        for (size_t k = 0; k < from.elems.size(); ++k)
          items.push_back(from.keys[k].empty() ? from.elems[k]
                                               : Value::tuple({Value::atomValue(from.keys[k], x.loc), from.elems[k]},
                                                              x.loc));
      } else if (from.kind == Value::Range && !from.full) {
        int64_t count = from.step > 0 ? (from.last - from.i) / from.step + 1 : (from.i - from.last) / -from.step + 1;
        if ((from.step > 0 && from.last < from.i) || (from.step < 0 && from.last > from.i)) count = 0;
        if (count > 1000000) return error(x.children[1]->loc, "a range of more than 1,000,000 elements at compile time");
        for (int64_t j = 0; j < count; ++j) items.push_back(Value::number(from.i + j * from.step, x.loc));
      } else if (from.kind == Value::Map) {
        for (size_t k = 0; k < from.elems.size(); ++k)
          items.push_back(Value::tuple({Value::atomValue(from.keys[k], x.loc), from.elems[k]}, x.loc));
      } else {
        return error(x.children[1]->loc, fmt::format(FMT_STRING("for takes its elements from a list, a range or a "
                                                                "map at compile time, got {}"),
                                                     describeValue(from)));
      }
      for (auto &item : items) {
        Env child(&scope);
        // Elements that do not match the generator's pattern are skipped.
        matchingHeads_ = true;
        auto m = matchCase(*x.children[0], item, child);
        matchingHeads_ = false;
        if (!m.ok()) return m.error();
        if (!m.value()) continue;
        NXC_CHECK(run(q + 1, child));
      }
      return okStatus();
    }
    NXC_TRY(keep, eval(x, scope));
    if (keep.kind == Value::Tensor)
      return error(x.loc, "a for filter must be a compile-time value, not a tensor");
    if (truthy(keep)) return run(q + 1, scope);
    return okStatus();
  };
  Env scope(&env);
  NXC_CHECK(run(0, scope));
  if (acc) return *acc;
  if (uniq) {
    std::vector<Value> distinct;
    for (auto &v : out)
      if (std::none_of(distinct.begin(), distinct.end(), [&](const Value &d) { return sameTerm(d, v); }))
        distinct.push_back(v);
    out = distinct;
  }
  if (!into) return Value::list(out, e.loc);
  if (into->kind == Value::List) {
    Value r = *into;
    for (auto &v : out) {
      r.elems.push_back(v);
      r.keys.push_back("");
      r.keyLocs.push_back(e.loc);
    }
    return r;
  }
  if (into->kind == Value::Map) {
    Value r = *into;
    for (auto &v : out) {
      if (v.kind != Value::Tuple || v.elems.size() != 2 || v.elems[0].kind != Value::Atom)
        return error(body.loc, "for ... into: %{} needs {atom_key, value} tuples, got " + inspectValue(v));
      auto it = std::find(r.keys.begin(), r.keys.end(), v.elems[0].atom);
      if (it != r.keys.end()) r.elems[it - r.keys.begin()] = v.elems[1];
      else {
        r.keys.push_back(v.elems[0].atom);
        r.elems.push_back(v.elems[1]);
        r.keyLocs.push_back(e.loc);
      }
    }
    return r;
  }
  if (into->kind == Value::String) {
    Value r = *into;
    for (auto &v : out) {
      NXC_TRY(text, elixirToString(v, body.loc));
      r.atom += text;
    }
    return r;
  }
  return error(e.loc, "for ... into: takes a list, a map or a string at compile time, got " + describeValue(*into));
}

Result<Value> Tracer::mapLiteral(const Expr &e, Env &env) {
  Value m;
  m.kind = Value::Map;
  m.atom = e.name == "__MODULE__" ? module_->name : e.name;
  m.loc = e.loc;
  size_t first = 0;
  if (e.intValue == 1) {
    NXC_TRY(base, eval(*e.children[0], env));
    if (base.kind != Value::Map)
      return error(e.children[0]->loc, fmt::format(FMT_STRING("%{{... | ...}} updates a map, got {}"),
                                                   describeValue(base)));
    m = base;
    m.loc = e.loc;
    first = 1;
  }
  for (size_t k = first; k < e.children.size(); ++k) {
    const Expr &pair = *e.children[k];
    NXC_TRY(v, eval(*pair.children[0], env));
    auto it = std::find(m.keys.begin(), m.keys.end(), pair.name);
    if (it != m.keys.end()) {
      m.elems[it - m.keys.begin()] = v;
    } else if (e.intValue == 1) {
      return error(pair.loc, fmt::format(FMT_STRING("** (KeyError) key :{} not found in: {}"), pair.name,
                                         inspectValue(m)));
    } else {
      m.keys.push_back(pair.name);
      m.elems.push_back(v);
      m.keyLocs.push_back(pair.loc);
    }
  }
  return m;
}

Result<Value> Tracer::callRemote(const std::string &module, const std::string &fn, std::vector<Value> args,
                                 const Loc &loc) {
  for (auto &m : file_.modules)
    if (m.name == module) {
      const ast::Function *f = findFunction(m, fn, args.size());
      if (!f)
        return error(loc, fmt::format(FMT_STRING("undefined function {}.{}/{}"), module, fn, args.size()));
      return inlineCall(*f, m, std::move(args), loc);
    }
  return error(loc, fmt::format(FMT_STRING("{}.{}/{}: module {} is not among the files given (add it with --with)"),
                                module, fn, args.size(), module));
}

Result<Value> Tracer::nimbleValidate(const Value &opts, const Value &schema, const Loc &loc) {
  auto fail = [&](const std::string &message) {
    return error(loc, "** (NimbleOptions.ValidationError) " + message);
  };
  if (opts.kind != Value::List || (!opts.elems.empty() && !opts.isKeywordList()))
    return fail("expected options to be a keyword list, got: " + inspectValue(opts));
  std::vector<std::string> valid, unknown;
  for (auto &k : schema.keys) valid.push_back(":" + k);
  for (auto &k : opts.keys)
    if (std::find(schema.keys.begin(), schema.keys.end(), k) == schema.keys.end()) unknown.push_back(":" + k);
  if (!unknown.empty())
    return fail(fmt::format(FMT_STRING("unknown options [{}], valid options are: [{}]"), fmt::join(unknown, ", "),
                            fmt::join(valid, ", ")));
  // One value against one type: nullopt when it fits (with the value to
  // keep, which a custom validator may change), else the reason.
  std::function<Result<std::pair<bool, Value>>(const Value &, const Value &, std::string &)> check =
      [&](const Value &type, const Value &v, std::string &why) -> Result<std::pair<bool, Value>> {
    auto expect = [&](bool ok, const char *what) -> Result<std::pair<bool, Value>> {
      if (!ok) why = fmt::format(FMT_STRING("expected {}, got: {}"), what, inspectValue(v));
      return std::make_pair(ok, v);
    };
    bool isInt = v.kind == Value::Int, isNum = isInt || v.kind == Value::Float;
    if (type.kind == Value::Atom) {
      const std::string &t = type.atom;
      if (t == "any" || t == "nil") return std::make_pair(true, v);
      if (t == "boolean") return expect(v.kind == Value::Atom && (v.atom == "true" || v.atom == "false"), "boolean");
      if (t == "integer") return expect(isInt, "integer");
      if (t == "pos_integer") return expect(isInt && v.i > 0, "positive integer");
      if (t == "non_neg_integer") return expect(isInt && v.i >= 0, "non negative integer");
      if (t == "float") return expect(v.kind == Value::Float, "float");
      if (t == "number") return expect(isNum, "number");
      if (t == "atom") return expect(v.kind == Value::Atom, "atom");
      if (t == "string") return expect(v.kind == Value::String, "string");
      if (t == "map") return expect(v.kind == Value::Map, "map");
      if (t == "timeout") return expect((isInt && v.i >= 0) || (v.kind == Value::Atom && v.atom == "infinity"),
                                        "non-negative integer or :infinity");
      if (t == "keyword_list" || t == "non_empty_keyword_list")
        return expect(v.kind == Value::List && (v.elems.empty() ? t == "keyword_list" : v.isKeywordList()),
                      t == "keyword_list" ? "keyword list" : "non-empty keyword list");
      return error(loc, fmt::format(FMT_STRING("NimbleOptions type :{} is not supported by nxc"), t));
    }
    if (type.kind == Value::Tuple && !type.elems.empty() && type.elems[0].kind == Value::Atom) {
      const std::string &t = type.elems[0].atom;
      if (t == "in" && type.elems.size() == 2) {
        const Value &choices = type.elems[1];
        bool in = false;
        if (choices.kind == Value::Range)
          in = isInt && (choices.step > 0 ? v.i >= choices.i && v.i <= choices.last
                                          : v.i <= choices.i && v.i >= choices.last);
        else
          for (auto &c : choices.elems) in |= sameTerm(c, v);
        if (!in) why = fmt::format(FMT_STRING("expected one of {}, got: {}"), inspectValue(choices), inspectValue(v));
        return std::make_pair(in, v);
      }
      if (t == "or" && type.elems.size() == 2 && type.elems[1].kind == Value::List) {
        std::vector<std::string> reasons;
        for (auto &alt : type.elems[1].elems) {
          std::string r;
          NXC_TRY(res, check(alt, v, r));
          if (res.first) return res;
          reasons.push_back(r);
        }
        why = fmt::format(FMT_STRING("expected one of the allowed types, got: {} ({})"), inspectValue(v),
                          fmt::join(reasons, "; "));
        return std::make_pair(false, v);
      }
      if (t == "list" && type.elems.size() == 2) {
        if (v.kind != Value::List) return expect(false, "list");
        Value out = v;
        for (size_t k = 0; k < v.elems.size(); ++k) {
          std::string r;
          NXC_TRY(res, check(type.elems[1], v.elems[k], r));
          if (!res.first) {
            why = fmt::format(FMT_STRING("invalid list element at position {}: {}"), k, r);
            return std::make_pair(false, v);
          }
          out.elems[k] = res.second;
        }
        return std::make_pair(true, out);
      }
      if (t == "tuple" && type.elems.size() == 2 && type.elems[1].kind == Value::List) {
        if (v.kind != Value::Tuple || v.elems.size() != type.elems[1].elems.size()) return expect(false, "tuple");
        for (size_t k = 0; k < v.elems.size(); ++k) {
          std::string r;
          NXC_TRY(res, check(type.elems[1].elems[k], v.elems[k], r));
          if (!res.first) {
            why = fmt::format(FMT_STRING("invalid tuple element at position {}: {}"), k, r);
            return std::make_pair(false, v);
          }
        }
        return std::make_pair(true, v);
      }
      if (t == "fun" && type.elems.size() == 2) return expect(v.kind == Value::Function, "function");
      if (t == "custom" && type.elems.size() == 4 && type.elems[1].kind == Value::Atom &&
          type.elems[2].kind == Value::Atom && type.elems[3].kind == Value::List) {
        std::vector<Value> callArgs = {v};
        for (auto &x : type.elems[3].elems) callArgs.push_back(x);
        NXC_TRY(r, callRemote(type.elems[1].atom, type.elems[2].atom, callArgs, loc));
        if (r.kind == Value::Tuple && r.elems.size() == 2 && r.elems[0].kind == Value::Atom) {
          if (r.elems[0].atom == "ok") return std::make_pair(true, r.elems[1]);
          if (r.elems[0].atom == "error") {
            NXC_TRY(text, elixirToString(r.elems[1], loc));
            why = text;
            return std::make_pair(false, v);
          }
        }
        return error(loc, fmt::format(FMT_STRING("{}.{} returned {}; a NimbleOptions custom validator returns {{:ok, "
                                                 "value}} or {{:error, message}}"),
                                      type.elems[1].atom, type.elems[2].atom, inspectValue(r)));
      }
    }
    return error(loc, "NimbleOptions type " + inspectValue(type) + " is not supported by nxc");
  };
  Value out = Value::list({}, loc);
  for (size_t k = 0; k < schema.keys.size(); ++k) {
    const std::string &key = schema.keys[k];
    const Value &spec = schema.elems[k];
    if (spec.kind != Value::List || (!spec.elems.empty() && !spec.isKeywordList()))
      return error(loc, fmt::format(FMT_STRING("the NimbleOptions schema of :{} is not a keyword list"), key));
    auto specOf = [&](const char *field) -> const Value * {
      for (size_t j = 0; j < spec.keys.size(); ++j)
        if (spec.keys[j] == field) return &spec.elems[j];
      return nullptr;
    };
    auto given = std::find(opts.keys.begin(), opts.keys.end(), key);
    Value v;
    if (given != opts.keys.end()) {
      v = opts.elems[given - opts.keys.begin()];
    } else if (const Value *d = specOf("default")) {
      v = *d;
    } else {
      const Value *required = specOf("required");
      if (required && required->kind == Value::Atom && required->atom == "true") {
        std::vector<std::string> got;
        for (auto &g : opts.keys) got.push_back(":" + g);
        return fail(fmt::format(FMT_STRING("required :{} option not found, received options: [{}]"), key,
                                fmt::join(got, ", ")));
      }
      continue;
    }
    if (const Value *type = specOf("type")) {
      std::string why;
      NXC_TRY(res, check(*type, v, why));
      if (!res.first) return fail(fmt::format(FMT_STRING("invalid value for :{} option: {}"), key, why));
      v = res.second;
      // Nested options of a keyword list.
      if (const Value *keys = specOf("keys"); keys && v.kind == Value::List) {
        NXC_TRY(nested, nimbleValidate(v, *keys, loc));
        v = nested;
      }
    }
    out.elems.push_back(v);
    out.keys.push_back(key);
    out.keyLocs.push_back(loc);
  }
  return out;
}

Result<std::optional<Value>> Tracer::elixirCall(const std::string &module, const std::string &name,
                                                std::vector<Value> &args, const Loc &loc) {
  using Opt = std::optional<Value>;
  auto argLoc = [&](size_t k) { return args[k].loc.valid() ? args[k].loc : loc; };
  auto needList = [&](size_t k, const char *fn) -> Status {
    if (args[k].kind != Value::List)
      return error(argLoc(k), fmt::format(FMT_STRING("{}.{} expects a list, got {}"), module, fn,
                                          describeValue(args[k])));
    return okStatus();
  };
  auto needKeywords = [&](size_t k) -> Status {
    if (args[k].kind != Value::List || (!args[k].elems.empty() && !args[k].isKeywordList()))
      return error(argLoc(k), fmt::format(FMT_STRING("Keyword.{} expects a keyword list, got {}"), name,
                                          describeValue(args[k])));
    return okStatus();
  };
  auto needAtom = [&](size_t k) -> Status {
    if (args[k].kind != Value::Atom)
      return error(argLoc(k), fmt::format(FMT_STRING("{}.{} expects an atom key, got {}"), module, name,
                                          describeValue(args[k])));
    return okStatus();
  };
  // The elements of a list or a range, in order.
  auto elements = [&](size_t k) -> Result<std::vector<Value>> {
    if (args[k].kind == Value::List) return args[k].elems;
    if (args[k].kind == Value::Range && !args[k].full) {
      std::vector<Value> out;
      int64_t count = args[k].step > 0 ? (args[k].last - args[k].i) / args[k].step + 1
                                       : (args[k].i - args[k].last) / -args[k].step + 1;
      if (count > 1000000) return error(argLoc(k), "a range of more than 1,000,000 elements at compile time");
      for (int64_t j = 0; j < count; ++j) out.push_back(Value::number(args[k].i + j * args[k].step, loc));
      return out;
    }
    if (args[k].kind == Value::List || args[k].kind == Value::Range) return std::vector<Value>{};
    return error(argLoc(k), fmt::format(FMT_STRING("{}.{} expects a list or a range, got {}"), module, name,
                                        describeValue(args[k])));
  };
  // A keyword list's pair (key, value) as Enum sees it: a tuple.
  auto pairOf = [&](const Value &list, size_t k) {
    if (list.keys[k].empty()) return list.elems[k];
    return Value::tuple({Value::atomValue(list.keys[k], loc), list.elems[k]}, loc);
  };
  // The elements of argument k as Enum sees them (keyword pairs as tuples).
  auto enumerated = [&](size_t k) -> Result<std::vector<Value>> {
    NXC_TRY(items, elements(k));
    if (args[k].kind == Value::List)
      for (size_t j = 0; j < items.size(); ++j) items[j] = pairOf(args[k], j);
    return items;
  };
  auto listOf = [&](std::vector<Value> elems) { return Value::list(std::move(elems), loc); };
  size_t n = args.size();

  if (module == "Kernel") {
    if (n == 2 && name == "is_function") {
      if (args[1].kind != Value::Int || args[1].i < 0)
        return error(argLoc(1), fmt::format(FMT_STRING("is_function/2 expects an arity, got {}"), describeValue(args[1])));
      bool fits = args[0].kind == Value::Function && args[0].fn && args[0].fn->intValue == args[1].i;
      return Opt(boolean(fits, loc));
    }
    if (n == 1) {
      const Value &x = args[0];
      if (name == "is_nil") return Opt(boolean(x.isNil(), loc));
      if (name == "is_list") return Opt(boolean(x.kind == Value::List, loc));
      if (name == "is_tuple") return Opt(boolean(x.kind == Value::Tuple, loc));
      if (name == "is_atom") return Opt(boolean(x.kind == Value::Atom, loc));
      if (name == "is_boolean") return Opt(boolean(x.kind == Value::Atom && (x.atom == "true" || x.atom == "false"), loc));
      if (name == "is_number") return Opt(boolean(x.kind == Value::Int || x.kind == Value::Float, loc));
      if (name == "is_integer") return Opt(boolean(x.kind == Value::Int, loc));
      if (name == "is_float") return Opt(boolean(x.kind == Value::Float, loc));
      if (name == "is_binary") return Opt(boolean(x.kind == Value::String, loc));
      if (name == "is_function") return Opt(boolean(x.kind == Value::Function, loc));
      if (name == "is_map") return Opt(boolean(x.kind == Value::Tensor || x.kind == Value::Map, loc));
      if (name == "is_struct") return Opt(boolean(x.kind == Value::Tensor || (x.kind == Value::Map && !x.atom.empty()), loc));
      if (name == "to_string") {
        NXC_TRY(text, elixirToString(x, loc));
        Value s;
        s.kind = Value::String;
        s.atom = text;
        s.loc = loc;
        return Opt(s);
      }
      if (name == "inspect") {
        Value s;
        s.kind = Value::String;
        s.atom = inspectValue(x);
        s.loc = loc;
        return Opt(s);
      }
      if (name == "length") {
        NXC_CHECK(needList(0, "length"));
        return Opt(Value::number((int64_t)x.elems.size(), loc));
      }
      if (name == "tuple_size") {
        if (x.kind != Value::Tuple) return error(argLoc(0), "tuple_size/1 expects a tuple, got " + describeValue(x));
        return Opt(Value::number((int64_t)x.elems.size(), loc));
      }
      if (name == "hd" || name == "tl") {
        if (x.kind != Value::List || x.elems.empty())
          return error(argLoc(0), fmt::format(FMT_STRING("{}/1 expects a non-empty list, got {}"), name,
                                              describeValue(x)));
        if (name == "hd") return Opt(pairOf(x, 0));
        Value rest = x;
        rest.elems.erase(rest.elems.begin());
        rest.keys.erase(rest.keys.begin());
        rest.keyLocs.erase(rest.keyLocs.begin());
        return Opt(rest);
      }
      if (name == "not") {
        if (x.kind != Value::Atom || (x.atom != "true" && x.atom != "false"))
          return error(argLoc(0), "not/1 expects a boolean, got " + describeValue(x));
        return Opt(boolean(x.atom == "false", loc));
      }
    }
    if (name == "put_elem" && n == 3) {
      if (args[0].kind != Value::Tuple) return error(argLoc(0), "put_elem/3 expects a tuple, got " + describeValue(args[0]));
      if (args[1].kind != Value::Int || args[1].i < 0 || args[1].i >= (int64_t)args[0].elems.size())
        return error(argLoc(1), fmt::format(FMT_STRING("put_elem/3: index {} is out of range for a tuple of {} "
                                                       "elements"),
                                            inspectValue(args[1]), args[0].elems.size()));
      Value t = args[0];
      t.elems[args[1].i] = args[2];
      t.loc = loc;
      return Opt(t);
    }
    return Opt();
  }

  if (module == "Nx.Shape") {
    // Shape arithmetic library code calls: axes against a shape (and names).
    auto shapeRank = [&](size_t k) -> Result<int64_t> {
      if (args[k].kind != Value::Tuple)
        return error(argLoc(k), fmt::format(FMT_STRING("Nx.Shape.{} expects a shape tuple, got {}"), name,
                                            describeValue(args[k])));
      return (int64_t)args[k].elems.size();
    };
    auto axisOf = [&](const Value &a, int64_t rank, const Value *names) -> Result<int64_t> {
      if (a.kind == Value::Atom && names && names->kind == Value::List) {
        for (size_t i = 0; i < names->elems.size(); ++i)
          if (names->elems[i].kind == Value::Atom && names->elems[i].atom == a.atom) return (int64_t)i;
        return error(a.loc.valid() ? a.loc : loc, fmt::format(FMT_STRING("key :{} not found in tensor with names {}"),
                                                              a.atom, inspectValue(*names)));
      }
      if (a.kind != Value::Int)
        return error(a.loc.valid() ? a.loc : loc, "expected an integer axis, got " + describeValue(a));
      int64_t x = a.i < 0 ? a.i + rank : a.i;
      if (x < 0 || x >= rank)
        return error(a.loc.valid() ? a.loc : loc,
                     fmt::format(FMT_STRING("given axis ({}) invalid for shape with rank {}"), a.i, rank));
      return x;
    };
    if (name == "normalize_axis" && (n == 2 || n == 3)) {
      NXC_TRY(rank, shapeRank(0));
      NXC_TRY(a, axisOf(args[1], rank, n == 3 ? &args[2] : nullptr));
      return Opt(Value::number(a, loc));
    }
    if (name == "normalize_axes" && (n == 2 || n == 3)) {
      NXC_TRY(rank, shapeRank(0));
      NXC_CHECK(needList(1, "normalize_axes"));
      std::vector<Value> out;
      for (auto &a : args[1].elems) {
        NXC_TRY(x, axisOf(a, rank, n == 3 ? &args[2] : nullptr));
        out.push_back(Value::number(x, loc));
      }
      return Opt(listOf(out));
    }
    return Opt();
  }

  if (module == "Map") {
    auto needMap = [&](size_t k) -> Status {
      if (args[k].kind != Value::Map)
        return error(argLoc(k), fmt::format(FMT_STRING("Map.{} expects a map, got {}"), name, describeValue(args[k])));
      return okStatus();
    };
    if (name == "new" && n == 0) {
      Value m;
      m.kind = Value::Map;
      m.loc = loc;
      return Opt(m);
    }
    if (n < 1) return Opt();
    // A tensor's struct fields, as Nx.Tensor's: shape, type, names.
    if (args[0].kind == Value::Tensor && name == "fetch!" && n == 2 && args[1].kind == Value::Atom) {
      const std::string &field = args[1].atom;
      if (field == "shape" || field == "type" || field == "names") {
        std::vector<Value> one = {args[0]};
        NXC_TRY(v, callNx(field, one, loc));
        return Opt(v);
      }
      return error(loc, fmt::format(FMT_STRING("nxc knows a tensor's fields shape, type and names, not :{}"), field));
    }
    NXC_CHECK(needMap(0));
    const Value &map = args[0];
    auto find = [&](const Value &key) -> const Value * {
      if (key.kind != Value::Atom && key.kind != Value::String) return nullptr;
      std::string k = key.kind == Value::String ? ast::kStringKeyMark + key.atom : key.atom;
      auto it = std::find(map.keys.begin(), map.keys.end(), k);
      return it == map.keys.end() ? nullptr : &map.elems[it - map.keys.begin()];
    };
    if (name == "get" && (n == 2 || n == 3)) {
      const Value *v = find(args[1]);
      return Opt(v ? *v : n == 3 ? args[2] : Value::atomValue("nil", loc));
    }
    if (name == "fetch!" && n == 2) {
      const Value *v = find(args[1]);
      if (!v)
        return error(loc, fmt::format(FMT_STRING("** (KeyError) key {} not found in: {}"), inspectValue(args[1]),
                                      inspectValue(map)));
      return Opt(*v);
    }
    if (name == "has_key?" && n == 2) return Opt(boolean(find(args[1]) != nullptr, loc));
    if (name == "keys" && n == 1) {
      std::vector<Value> keys;
      for (auto &k : map.keys) {
        Value key = Value::atomValue(ast::keyText(k), loc);
        if (ast::isStringKey(k)) key.kind = Value::String;
        keys.push_back(key);
      }
      return Opt(listOf(keys));
    }
    if (name == "values" && n == 1) return Opt(listOf(map.elems));
    if ((name == "put" && n == 3) || (name == "delete" && n == 2)) {
      if (args[1].kind != Value::Atom && args[1].kind != Value::String)
        return error(argLoc(1), fmt::format(FMT_STRING("Map.{}: nxc's map keys are atoms or strings, got {}"), name,
                                            describeValue(args[1])));
      std::string key = args[1].kind == Value::String ? ast::kStringKeyMark + args[1].atom : args[1].atom;
      Value out = map;
      out.loc = loc;
      auto it = std::find(out.keys.begin(), out.keys.end(), key);
      if (name == "delete") {
        if (it != out.keys.end()) {
          size_t k = it - out.keys.begin();
          out.keys.erase(out.keys.begin() + k);
          out.elems.erase(out.elems.begin() + k);
          out.keyLocs.erase(out.keyLocs.begin() + k);
        }
        return Opt(out);
      }
      if (it != out.keys.end()) out.elems[it - out.keys.begin()] = args[2];
      else {
        out.keys.push_back(key);
        out.elems.push_back(args[2]);
        out.keyLocs.push_back(loc);
      }
      return Opt(out);
    }
    if (name == "merge" && n == 2) {
      NXC_CHECK(needMap(1));
      Value out = map;
      out.loc = loc;
      for (size_t k = 0; k < args[1].keys.size(); ++k) {
        auto it = std::find(out.keys.begin(), out.keys.end(), args[1].keys[k]);
        if (it != out.keys.end()) out.elems[it - out.keys.begin()] = args[1].elems[k];
        else {
          out.keys.push_back(args[1].keys[k]);
          out.elems.push_back(args[1].elems[k]);
          out.keyLocs.push_back(loc);
        }
      }
      return Opt(out);
    }
    if (name == "to_list" && n == 1) {
      Value out = listOf({});
      for (size_t k = 0; k < map.keys.size(); ++k) {
        if (ast::isStringKey(map.keys[k])) {
          Value key = Value::atomValue(ast::keyText(map.keys[k]), loc);
          key.kind = Value::String;
          out.elems.push_back(Value::tuple({key, map.elems[k]}, loc));
          out.keys.push_back("");
        } else {
          out.elems.push_back(map.elems[k]);
          out.keys.push_back(map.keys[k]);
        }
        out.keyLocs.push_back(loc);
      }
      return Opt(out);
    }
    return Opt();
  }

  if (module == "NimbleOptions") {
    if (name == "new!" && n == 1) {
      NXC_CHECK(needKeywords(0));
      return Opt(args[0]);
    }
    if (name == "docs" && n >= 1) {
      Value s;
      s.kind = Value::String;
      s.loc = loc;
      return Opt(s);
    }
    if (name == "validate!" && n == 2) {
      NXC_CHECK(needKeywords(1));
      NXC_TRY(v, nimbleValidate(args[0], args[1], loc));
      return Opt(v);
    }
    return Opt();
  }

  if (module == "Keyword") {
    if (name == "keyword?" && n == 1) return Opt(boolean(args[0].kind == Value::List &&
                                                         (args[0].elems.empty() || args[0].isKeywordList()), loc));
    if (n < 1) return Opt();
    if (name == "validate!" && n == 2) {
      NXC_CHECK(needKeywords(0));
      // Elixir's message for keys the list of allowed ones lacks.
      if (args[1].kind == Value::List) {
        std::vector<std::string> allowed, unknown;
        for (size_t k = 0; k < args[1].elems.size(); ++k)
          allowed.push_back(":" + (args[1].keys[k].empty() && args[1].elems[k].kind == Value::Atom
                                       ? args[1].elems[k].atom
                                       : args[1].keys[k]));
        for (auto &key : args[0].keys)
          if (std::find(allowed.begin(), allowed.end(), ":" + key) == allowed.end()) unknown.push_back(":" + key);
        if (!unknown.empty())
          return error(loc, fmt::format(FMT_STRING("** (ArgumentError) unknown keys [{}] in {}, the allowed keys are: "
                                                   "[{}]"),
                                        fmt::join(unknown, ", "), inspectValue(args[0]), fmt::join(allowed, ", ")));
      }
      NXC_TRY(v, keywordValidate(args[0], args[1], loc));
      return Opt(v);
    }
    const std::set<std::string> keyed = {"get",    "fetch!", "pop",      "pop!",     "put",
                                         "put_new", "delete", "has_key?", "fetch",   "get_lazy"};
    if (keyed.count(name) && n >= 2) {
      NXC_CHECK(needKeywords(0));
      NXC_CHECK(needAtom(1));
      const Value &list = args[0];
      const std::string &key = args[1].atom;
      auto first = std::find(list.keys.begin(), list.keys.end(), key);
      bool found = first != list.keys.end();
      const Value *value = found ? &list.elems[first - list.keys.begin()] : nullptr;
      Value without = list;
      without.loc = loc;
      for (size_t k = without.keys.size(); k-- > 0;)
        if (without.keys[k] == key) {
          without.elems.erase(without.elems.begin() + k);
          without.keys.erase(without.keys.begin() + k);
          without.keyLocs.erase(without.keyLocs.begin() + k);
        }
      Value dflt = n >= 3 ? args[2] : Value::atomValue("nil", loc);
      if (name == "get" && n <= 3) return Opt(found ? *value : dflt);
      if (name == "get_lazy" && n == 3) {
        // The function runs only when the key is missing.
        if (found) return Opt(*value);
        NXC_TRY(computed, applyFunction(args[2], {}, loc));
        return Opt(computed);
      }
      if (name == "has_key?" && n == 2) return Opt(boolean(found, loc));
      if (name == "fetch" && n == 2)
        return Opt(found ? Value::tuple({Value::atomValue("ok", loc), *value}, loc) : Value::atomValue("error", loc));
      if (name == "fetch!" && n == 2) {
        if (!found)
          return error(loc, fmt::format(FMT_STRING("** (KeyError) key :{} not found in: {}"), key, inspectValue(list)));
        return Opt(*value);
      }
      if (name == "pop" && n <= 3) return Opt(Value::tuple({found ? *value : dflt, without}, loc));
      if (name == "pop!" && n == 2) {
        if (!found)
          return error(loc, fmt::format(FMT_STRING("** (KeyError) key :{} not found in: {}"), key, inspectValue(list)));
        return Opt(Value::tuple({*value, without}, loc));
      }
      if (name == "delete" && n == 2) return Opt(without);
      if ((name == "put" || name == "put_new") && n == 3) {
        if (name == "put_new" && found) return Opt(list);
        without.elems.insert(without.elems.begin(), args[2]);
        without.keys.insert(without.keys.begin(), key);
        without.keyLocs.insert(without.keyLocs.begin(), loc);
        return Opt(without);
      }
    }
    if (name == "merge" && n == 2) {
      NXC_CHECK(needKeywords(0));
      NXC_CHECK(needKeywords(1));
      Value out = listOf({});
      for (size_t k = 0; k < args[0].elems.size(); ++k)
        if (std::find(args[1].keys.begin(), args[1].keys.end(), args[0].keys[k]) == args[1].keys.end()) {
          out.elems.push_back(args[0].elems[k]);
          out.keys.push_back(args[0].keys[k]);
          out.keyLocs.push_back(args[0].keyLocs[k]);
        }
      out.elems.insert(out.elems.end(), args[1].elems.begin(), args[1].elems.end());
      out.keys.insert(out.keys.end(), args[1].keys.begin(), args[1].keys.end());
      out.keyLocs.insert(out.keyLocs.end(), args[1].keyLocs.begin(), args[1].keyLocs.end());
      return Opt(out);
    }
    if ((name == "take" || name == "drop") && n == 2) {
      NXC_CHECK(needKeywords(0));
      NXC_CHECK(needList(1, name.c_str()));
      Value out = listOf({});
      for (size_t k = 0; k < args[0].elems.size(); ++k) {
        bool listed = false;
        for (auto &key : args[1].elems) listed |= key.kind == Value::Atom && key.atom == args[0].keys[k];
        if (listed == (name == "take")) {
          out.elems.push_back(args[0].elems[k]);
          out.keys.push_back(args[0].keys[k]);
          out.keyLocs.push_back(args[0].keyLocs[k]);
        }
      }
      return Opt(out);
    }
    if (name == "keys" && n == 1) {
      NXC_CHECK(needKeywords(0));
      std::vector<Value> keys;
      for (auto &k : args[0].keys) keys.push_back(Value::atomValue(k, loc));
      return Opt(listOf(keys));
    }
    if (name == "values" && n == 1) {
      NXC_CHECK(needKeywords(0));
      return Opt(listOf(args[0].elems));
    }
    return Opt();
  }

  if (module == "List") {
    if (name == "wrap" && n == 1) {
      if (args[0].isNil()) return Opt(listOf({}));
      if (args[0].kind == Value::List) return Opt(args[0]);
      return Opt(listOf({args[0]}));
    }
    if ((name == "first" || name == "last") && n >= 1 && n <= 2) {
      NXC_CHECK(needList(0, name.c_str()));
      if (args[0].elems.empty()) return Opt(n == 2 ? args[1] : Value::atomValue("nil", loc));
      return Opt(pairOf(args[0], name == "first" ? 0 : args[0].elems.size() - 1));
    }
    if (name == "duplicate" && n == 2) {
      if (args[1].kind != Value::Int || args[1].i < 0 || args[1].i > 1000000)
        return error(argLoc(1), "List.duplicate/2 expects a count from 0 to 1,000,000");
      return Opt(listOf(std::vector<Value>((size_t)args[1].i, args[0])));
    }
    if (((name == "replace_at" || name == "update_at" || name == "insert_at") && n == 3) ||
        (name == "delete_at" && n == 2)) {
      // Elixir's: a negative index counts from the end; out of range leaves
      // the list as it is (insert_at appends, or prepends below the start).
      NXC_CHECK(needList(0, name.c_str()));
      if (args[1].kind != Value::Int)
        return error(argLoc(1), fmt::format(FMT_STRING("List.{} expects an integer index, got {}"), name,
                                            describeValue(args[1])));
      std::vector<Value> e;
      for (size_t k = 0; k < args[0].elems.size(); ++k) e.push_back(pairOf(args[0], k));
      int64_t size = (int64_t)e.size(), at = args[1].i;
      if (name == "insert_at") {
        if (at < 0) at = std::max<int64_t>(0, size + at + 1);
        e.insert(e.begin() + std::min(at, size), args[2]);
        return Opt(listOf(e));
      }
      if (at < 0) at += size;
      if (at < 0 || at >= size) return Opt(listOf(e));
      if (name == "delete_at") e.erase(e.begin() + at);
      else if (name == "replace_at") e[(size_t)at] = args[2];
      else {
        NXC_TRY(updated, applyFunction(args[2], {e[(size_t)at]}, loc));
        e[(size_t)at] = updated;
      }
      return Opt(listOf(e));
    }
    if (name == "to_tuple" && n == 1) {
      NXC_CHECK(needList(0, "to_tuple"));
      std::vector<Value> e;
      for (size_t k = 0; k < args[0].elems.size(); ++k) e.push_back(pairOf(args[0], k));
      return Opt(Value::tuple(e, loc));
    }
    if (name == "flatten" && n == 1) {
      NXC_CHECK(needList(0, "flatten"));
      std::vector<Value> out;
      std::function<void(const Value &)> walk = [&](const Value &l) {
        for (size_t k = 0; k < l.elems.size(); ++k)
          if (l.keys[k].empty() && l.elems[k].kind == Value::List) walk(l.elems[k]);
          else out.push_back(pairOf(l, k));
      };
      walk(args[0]);
      return Opt(listOf(out));
    }
    return Opt();
  }

  if (module == "Tuple") {
    if (n >= 1 && args[0].kind != Value::Tuple && name != "duplicate")
      return error(argLoc(0), fmt::format(FMT_STRING("Tuple.{} expects a tuple, got {}"), name, describeValue(args[0])));
    if (name == "to_list" && n == 1) return Opt(listOf(args[0].elems));
    if ((name == "delete_at" && n == 2) || (name == "insert_at" && n == 3) || (name == "append" && n == 2)) {
      std::vector<Value> e = args[0].elems;
      if (name == "append") {
        e.push_back(args[1]);
        return Opt(Value::tuple(e, loc));
      }
      int64_t limit = (int64_t)e.size() + (name == "insert_at" ? 1 : 0);
      if (args[1].kind != Value::Int || args[1].i < 0 || args[1].i >= limit)
        return error(argLoc(1), fmt::format(FMT_STRING("Tuple.{}: index {} is out of range for a tuple of {} "
                                                       "elements"),
                                            name, inspectValue(args[1]), e.size()));
      if (name == "delete_at") e.erase(e.begin() + args[1].i);
      else e.insert(e.begin() + args[1].i, args[2]);
      return Opt(Value::tuple(e, loc));
    }
    if (name == "duplicate" && n == 2) {
      if (args[1].kind != Value::Int || args[1].i < 0 || args[1].i > 1000000)
        return error(argLoc(1), "Tuple.duplicate/2 expects a count from 0 to 1,000,000");
      return Opt(Value::tuple(std::vector<Value>((size_t)args[1].i, args[0]), loc));
    }
    if (name == "product" && n == 1) {
      int64_t p = 1;
      for (auto &x : args[0].elems) {
        if (x.kind != Value::Int) return error(argLoc(0), "Tuple.product/1 expects integers");
        if (__builtin_mul_overflow(p, x.i, &p)) return error(loc, "integer overflow in a compile-time computation");
      }
      return Opt(Value::number(p, loc));
    }
    return Opt();
  }

  if (module == "Logger") {
    // Library code logs at trace time (Axon.Losses warns); nxc prints the
    // message on stderr where the call is, as Elixir's console logger would
    // while Nx traces, and goes on.
    static const std::set<std::string> levels = {"debug", "info", "notice", "warning", "warn", "error", "critical"};
    if (levels.count(name) && (n == 1 || n == 2)) {
      Value message = args[0];
      if (message.kind == Value::Function) {
        NXC_TRY(m, applyFunction(message, {}, loc));
        message = m;
      }
      NXC_TRY(text, elixirToString(message, loc));
      std::string where = loc.valid() && loc.file ? fmt::format(FMT_STRING("{}:{}:{}: "), loc.file->name, loc.line, loc.col)
                                                  : std::string();
      fmt::print(stderr, FMT_STRING("{}[{}] {}\n"), where, name == "warn" ? "warning" : name, text);
      return Opt(Value::atomValue("ok", loc));
    }
    return Opt();
  }

  if (module == ":math") {
    // Erlang's floats: every result is a float, as :math returns.
    auto num = [&](size_t k) -> Result<double> {
      if (args[k].kind != Value::Int && args[k].kind != Value::Float)
        return error(argLoc(k), fmt::format(FMT_STRING(":math.{} expects a number, got {}"), name,
                                            describeValue(args[k])));
      return args[k].asDouble();
    };
    if (name == "pi" && n == 0) return Opt(Value::real(3.141592653589793, loc));
    static const std::map<std::string, double (*)(double)> unary = {
        {"sqrt", [](double x) { return std::sqrt(x); }},   {"exp", [](double x) { return std::exp(x); }},
        {"log", [](double x) { return std::log(x); }},     {"log2", [](double x) { return std::log2(x); }},
        {"log10", [](double x) { return std::log10(x); }}, {"sin", [](double x) { return std::sin(x); }},
        {"cos", [](double x) { return std::cos(x); }},     {"tan", [](double x) { return std::tan(x); }},
        {"atan", [](double x) { return std::atan(x); }},   {"tanh", [](double x) { return std::tanh(x); }},
        {"floor", [](double x) { return std::floor(x); }}, {"ceil", [](double x) { return std::ceil(x); }},
        {"erf", [](double x) { return std::erf(x); }}};
    if (auto it = unary.find(name); it != unary.end() && n == 1) {
      NXC_TRY(x, num(0));
      double r = it->second(x);
      if (std::isnan(r) || std::isinf(r))
        return error(loc, fmt::format(FMT_STRING("** (ArithmeticError) bad argument in arithmetic expression: "
                                                 ":math.{}({})"),
                                      name, inspectValue(args[0])));
      return Opt(Value::real(r, loc));
    }
    if ((name == "pow" || name == "atan2" || name == "fmod") && n == 2) {
      NXC_TRY(a, num(0));
      NXC_TRY(b, num(1));
      double r = name == "pow" ? std::pow(a, b) : name == "atan2" ? std::atan2(a, b) : std::fmod(a, b);
      if (std::isnan(r) || std::isinf(r))
        return error(loc, fmt::format(FMT_STRING("** (ArithmeticError) bad argument in arithmetic expression: "
                                                 ":math.{}/2"),
                                      name));
      return Opt(Value::real(r, loc));
    }
    return Opt();
  }

  if (module == ":erlang") {
    // The tuple functions Elixir's Kernel and Tuple are made of (1-based).
    auto needTuple = [&](size_t k) -> Status {
      if (args[k].kind != Value::Tuple)
        return error(argLoc(k), fmt::format(FMT_STRING("** (ArgumentError) :erlang.{} expects a tuple, got {}"), name,
                                            describeValue(args[k])));
      return okStatus();
    };
    auto index = [&](size_t k, size_t size) -> Result<size_t> {
      if (args[k].kind != Value::Int || args[k].i < 1 || args[k].i > (int64_t)size)
        return error(argLoc(k), fmt::format(FMT_STRING("** (ArgumentError) :erlang.{}: index {} is out of range "
                                                       "for a tuple of {}"),
                                            name, inspectValue(args[k]), size));
      return (size_t)(args[k].i - 1);
    };
    if (name == "setelement" && n == 3) {
      NXC_CHECK(needTuple(1));
      NXC_TRY(i, index(0, args[1].elems.size()));
      Value t = args[1];
      t.elems[i] = args[2];
      return Opt(t);
    }
    if (name == "element" && n == 2) {
      NXC_CHECK(needTuple(1));
      NXC_TRY(i, index(0, args[1].elems.size()));
      return Opt(args[1].elems[i]);
    }
    if (name == "tuple_size" && n == 1) {
      NXC_CHECK(needTuple(0));
      return Opt(Value::number((int64_t)args[0].elems.size(), loc));
    }
    if (name == "append_element" && n == 2) {
      NXC_CHECK(needTuple(0));
      Value t = args[0];
      t.elems.push_back(args[1]);
      return Opt(t);
    }
    if (name == "tuple_to_list" && n == 1) {
      NXC_CHECK(needTuple(0));
      return Opt(listOf(args[0].elems));
    }
    if (name == "list_to_tuple" && n == 1) {
      NXC_CHECK(needList(0, "list_to_tuple"));
      return Opt(Value::tuple(args[0].elems, loc));
    }
    return Opt();
  }

  if (module == "Nx.Defn.Composite" && n >= 1) {
    // Containers of tensors, as library code walks its parameter maps
    // (Polaris's deep_merge, zeros_like).
    if (name == "flatten_list" && (n == 1 || n == 2)) {
      NXC_CHECK(needList(0, "flatten_list"));
      std::vector<Value> leaves;
      for (auto &c : args[0].elems)
        NXC_CHECK(mapLeaves(c, [&](const Value &x) -> Result<Value> { leaves.push_back(x); return x; }, loc));
      if (n == 2) {
        NXC_CHECK(needList(1, "flatten_list"));
        leaves.insert(leaves.end(), args[1].elems.begin(), args[1].elems.end());
      }
      return Opt(listOf(leaves));
    }
    if (name == "count" && n == 1) {
      int64_t count = 0;
      NXC_CHECK(mapLeaves(args[0], [&](const Value &x) -> Result<Value> { ++count; return x; }, loc));
      return Opt(Value::number(count, loc));
    }
    if (name == "traverse" && n == 2) {
      NXC_TRY(r, mapLeaves(args[0], [&](const Value &x) { return applyFunction(args[1], {x}, loc); }, loc));
      return Opt(r);
    }
    // traverse/3 (fun returns {leaf, acc}) and reduce/3 (fun returns acc).
    if ((name == "traverse" || name == "reduce") && n == 3) {
      Value acc = args[1];
      bool reduce = name == "reduce";
      NXC_TRY(r, mapLeaves(args[0], [&](const Value &x) -> Result<Value> {
        NXC_TRY(step, applyFunction(args[2], {x, acc}, loc));
        if (reduce) {
          acc = step;
          return x;
        }
        if (step.kind != Value::Tuple || step.elems.size() != 2)
          return error(loc, fmt::format(FMT_STRING("the function given to Nx.Defn.Composite.traverse/3 must return "
                                                   "{{leaf, acc}}, got {}"),
                                        describeValue(step)));
        acc = step.elems[1];
        return step.elems[0];
      }, loc));
      return Opt(reduce ? acc : Value::tuple({r, acc}, loc));
    }
    return Opt();
  }

  if (module == "Enum") {
    if (n < 1) return Opt();
    NXC_TRY(items, enumerated(0));
    auto call1 = [&](const Value &f, const Value &x) { return applyFunction(f, {x}, loc); };
    if (name == "to_list" && n == 1) return Opt(listOf(items));
    if (name == "count" && n == 1) return Opt(Value::number((int64_t)items.size(), loc));
    if (name == "reverse" && n == 1) return Opt(listOf(std::vector<Value>(items.rbegin(), items.rend())));
    if (name == "member?" && n == 2) {
      for (auto &x : items)
        if (sameTerm(x, args[1])) return Opt(boolean(true, loc));
      return Opt(boolean(false, loc));
    }
    if (name == "at" && (n == 2 || n == 3)) {
      if (args[1].kind != Value::Int) return error(argLoc(1), "Enum.at/2 expects an integer index");
      int64_t i = args[1].i < 0 ? args[1].i + (int64_t)items.size() : args[1].i;
      if (i < 0 || i >= (int64_t)items.size()) return Opt(n == 3 ? args[2] : Value::atomValue("nil", loc));
      return Opt(items[i]);
    }
    if ((name == "take" || name == "drop") && n == 2) {
      if (args[1].kind != Value::Int) return error(argLoc(1), fmt::format(FMT_STRING("Enum.{} expects a count"), name));
      int64_t size = (int64_t)items.size(), c = args[1].i;
      int64_t from = 0, to = size;
      if (name == "take") {
        if (c >= 0) to = std::min(c, size);
        else from = std::max<int64_t>(0, size + c);
      } else {
        if (c >= 0) from = std::min(c, size);
        else to = std::max<int64_t>(0, size + c);
      }
      return Opt(listOf(std::vector<Value>(items.begin() + from, items.begin() + to)));
    }
    if (name == "slice" && n == 2 && args[1].kind == Value::Range && !args[1].full && args[1].step > 0) {
      // Enum.slice(list, first..last//step): negative indices count from the
      // end; an empty range of indices gives [].
      int64_t size = (int64_t)items.size();
      int64_t first = args[1].i < 0 ? size + args[1].i : args[1].i;
      int64_t last = args[1].last < 0 ? size + args[1].last : args[1].last;
      std::vector<Value> out;
      first = std::max<int64_t>(first, 0);
      last = std::min(last, size - 1);
      for (int64_t k = first; k <= last; k += args[1].step) out.push_back(items[(size_t)k]);
      return Opt(listOf(out));
    }
    if (name == "slice" && n == 3 && args[1].kind == Value::Int && args[2].kind == Value::Int) {
      int64_t size = (int64_t)items.size();
      int64_t from = args[1].i < 0 ? std::max<int64_t>(0, size + args[1].i) : std::min(args[1].i, size);
      int64_t to = std::min(size, from + std::max<int64_t>(0, args[2].i));
      return Opt(listOf(std::vector<Value>(items.begin() + from, items.begin() + to)));
    }
    if (name == "concat" && n == 2) {
      NXC_TRY(other, elements(1));
      std::vector<Value> out = items;
      out.insert(out.end(), other.begin(), other.end());
      return Opt(listOf(out));
    }
    if ((name == "uniq" || name == "sort") && n == 1) {
      std::vector<Value> out;
      for (auto &x : items) {
        bool seen = false;
        for (auto &y : out) seen |= name == "uniq" && sameTerm(x, y);
        if (!seen) out.push_back(x);
      }
      if (name == "sort") {
        for (auto &x : out)
          if (x.kind != Value::Int && x.kind != Value::Float && x.kind != Value::Atom)
            return error(argLoc(0), "Enum.sort/1 at compile time sorts numbers or atoms");
        std::stable_sort(out.begin(), out.end(), [](const Value &a, const Value &b) {
          bool an = a.kind != Value::Atom, bn = b.kind != Value::Atom;
          if (an != bn) return an; // numbers before atoms, as Elixir orders terms
          return an ? a.asDouble() < b.asDouble() : a.atom < b.atom;
        });
      }
      return Opt(listOf(out));
    }
    if (name == "with_index" && n == 2 && args[1].kind == Value::Int) {
      std::vector<Value> out;
      for (size_t k = 0; k < items.size(); ++k)
        out.push_back(Value::tuple({items[k], Value::number((int64_t)k + args[1].i, loc)}, loc));
      return Opt(listOf(out));
    }
    if (name == "with_index" && n == 1) {
      std::vector<Value> out;
      for (size_t k = 0; k < items.size(); ++k) out.push_back(Value::tuple({items[k], Value::number((int64_t)k, loc)}, loc));
      return Opt(listOf(out));
    }
    if (name == "zip" && n == 1) {
      // A list of lists (or tuples) zipped into tuples, as long as the shortest.
      std::vector<std::vector<Value>> lists;
      for (auto &l : items) {
        if (l.kind != Value::List && l.kind != Value::Tuple)
          return error(argLoc(0), "Enum.zip/1 expects a list of lists, got an element " + describeValue(l));
        lists.push_back(l.elems);
      }
      size_t shortest = lists.empty() ? 0 : SIZE_MAX;
      for (auto &l : lists) shortest = std::min(shortest, l.size());
      std::vector<Value> out;
      for (size_t k = 0; k < shortest; ++k) {
        std::vector<Value> t;
        for (auto &l : lists) t.push_back(l[k]);
        out.push_back(Value::tuple(t, loc));
      }
      return Opt(listOf(out));
    }
    if (name == "zip" && n == 2) {
      NXC_TRY(other, enumerated(1));
      std::vector<Value> out;
      for (size_t k = 0; k < std::min(items.size(), other.size()); ++k) out.push_back(Value::tuple({items[k], other[k]}, loc));
      return Opt(listOf(out));
    }
    if ((name == "sum" || name == "product") && n == 1) {
      bool fl = false;
      double d = name == "sum" ? 0 : 1;
      int64_t i = name == "sum" ? 0 : 1;
      for (auto &x : items) {
        if (x.kind != Value::Int && x.kind != Value::Float)
          return error(argLoc(0), fmt::format(FMT_STRING("Enum.{} expects numbers, got {}"), name, describeValue(x)));
        fl |= x.kind == Value::Float;
        d = name == "sum" ? d + x.asDouble() : d * x.asDouble();
        if (!fl && (name == "sum" ? __builtin_add_overflow(i, x.i, &i) : __builtin_mul_overflow(i, x.i, &i)))
          return error(loc, "integer overflow in a compile-time computation");
      }
      return Opt(fl ? Value::real(d, loc) : Value::number(i, loc));
    }
    if ((name == "max" || name == "min") && n == 1) {
      if (items.empty()) return error(loc, fmt::format(FMT_STRING("** (Enum.EmptyError) empty error in Enum.{}"), name));
      Value best = items[0];
      for (auto &x : items) {
        if ((x.kind != Value::Int && x.kind != Value::Float) || (best.kind != Value::Int && best.kind != Value::Float))
          return error(argLoc(0), fmt::format(FMT_STRING("Enum.{} at compile time compares numbers only"), name));
        if (name == "max" ? x.asDouble() > best.asDouble() : x.asDouble() < best.asDouble()) best = x;
      }
      return Opt(best);
    }
    if (name == "join" && (n == 1 || n == 2)) {
      std::string sep = n == 2 && args[1].kind == Value::String ? args[1].atom : "";
      std::string out;
      for (size_t k = 0; k < items.size(); ++k) {
        NXC_TRY(text, elixirToString(items[k], loc));
        out += (k ? sep : "") + text;
      }
      Value s;
      s.kind = Value::String;
      s.atom = out;
      s.loc = loc;
      return Opt(s);
    }
    if (n >= 2 && args[n - 1].kind != Value::Function) return Opt();
    if (name == "flat_map" && n == 2) {
      std::vector<Value> out;
      for (auto &x : items) {
        NXC_TRY(y, call1(args[1], x));
        if (y.kind != Value::List) return error(loc, "Enum.flat_map/2's function must return a list");
        out.insert(out.end(), y.elems.begin(), y.elems.end());
      }
      return Opt(listOf(out));
    }
    if (name == "each" && n == 2) {
      for (auto &x : items) NXC_CHECK(call1(args[1], x));
      return Opt(Value::atomValue("ok", loc));
    }
    if (name == "map" && n == 2) {
      std::vector<Value> out;
      for (auto &x : items) {
        NXC_TRY(y, call1(args[1], x));
        out.push_back(y);
      }
      return Opt(listOf(out));
    }
    if ((name == "filter" || name == "reject" || name == "all?" || name == "any?" || name == "find") && n == 2) {
      std::vector<Value> out;
      for (auto &x : items) {
        NXC_TRY(keep, call1(args[1], x));
        if (keep.kind == Value::Tensor)
          return error(loc, fmt::format(FMT_STRING("Enum.{}'s function returned a tensor; at compile time it must "
                                                   "return a boolean"),
                                        name));
        bool t = truthy(keep);
        if (name == "all?" && !t) return Opt(boolean(false, loc));
        if (name == "any?" && t) return Opt(boolean(true, loc));
        if (name == "find" && t) return Opt(x);
        if (t == (name == "filter")) out.push_back(x);
      }
      if (name == "all?") return Opt(boolean(true, loc));
      if (name == "any?") return Opt(boolean(false, loc));
      if (name == "find") return Opt(Value::atomValue("nil", loc));
      return Opt(listOf(out));
    }
    if (name == "zip_with" && n == 3) {
      NXC_TRY(other, enumerated(1));
      std::vector<Value> out;
      for (size_t k = 0; k < std::min(items.size(), other.size()); ++k) {
        NXC_TRY(y, applyFunction(args[2], {items[k], other[k]}, loc));
        out.push_back(y);
      }
      return Opt(listOf(out));
    }
    if (name == "reduce" && n == 3) {
      Value acc = args[1];
      for (auto &x : items) {
        NXC_TRY(next, applyFunction(args[2], {x, acc}, loc));
        acc = next;
      }
      return Opt(acc);
    }
    if (name == "scan" && (n == 2 || n == 3)) {
      // Enum.scan/2 starts from the first element, scan/3 from the accumulator.
      std::vector<Value> out;
      size_t start = 0;
      Value acc;
      if (n == 3) {
        acc = args[1];
      } else {
        if (items.empty()) return Opt(listOf({}));
        acc = items[0];
        out.push_back(acc);
        start = 1;
      }
      const Value &fn = args[n - 1];
      for (size_t k = start; k < items.size(); ++k) {
        NXC_TRY(next, applyFunction(fn, {items[k], acc}, loc));
        acc = next;
        out.push_back(acc);
      }
      return Opt(listOf(out));
    }
    if (name == "map_reduce" && n == 3) {
      Value acc = args[1];
      std::vector<Value> out;
      for (auto &x : items) {
        NXC_TRY(r, applyFunction(args[2], {x, acc}, loc));
        if (r.kind != Value::Tuple || r.elems.size() != 2)
          return error(loc, "Enum.map_reduce/3's function must return a {mapped, accumulator} tuple");
        out.push_back(r.elems[0]);
        acc = r.elems[1];
      }
      return Opt(Value::tuple({listOf(out), acc}, loc));
    }
    return Opt();
  }
  return Opt();
}

} // namespace nxc::sema

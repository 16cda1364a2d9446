//===- CompileTimeElixir.cpp - the Elixir that transforms run at trace time ===//
//
// Nx runs `deftransform`s, plain `def`s and the option handling of library
// code as Elixir while it traces: on numbers, atoms, strings, lists, keyword
// lists, tuples and functions, with tensors as opaque values. This file is
// nxc's subset of that Elixir: operators, `raise`, string building,
// comprehensions, NimbleOptions' validation, and the dispatch of a call to
// its module's functions (ElixirKernel.cpp: Kernel, Tuple, :math, :erlang...;
// ElixirCollections.cpp: Map, Keyword, List, Enum). A function outside the
// subset is named in its error.
//
//===----------------------------------------------------------------------===//
#include "ElixirCall.h"

#include "nxc/Frontend/ElixirFloat.h"

#include <fmt/format.h>

#include <chrono>

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

// Shared with ElixirKernel.cpp and ElixirCollections.cpp (ElixirCall.h).

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
                        bool inStruct) {
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



Value typeValue(ElemType t, const Loc &loc) {
  return Value::tuple({Value::atomValue(t.kindAtom(), loc), Value::number(t.bits, loc)}, loc);
}

Result<Value> Tracer::nxTypeCall(const std::string &name, std::vector<Value> &args, const Loc &loc) {
  std::vector<ElemType> types;
  for (auto &a : args) {
    NXC_TRY(t, parseType(a));
    types.push_back(t);
  }
  if (name == "merge" && types.size() == 2) return typeValue(mergeTypes(types[0], types[1]), loc);
  if (name == "normalize!" && types.size() == 1) return typeValue(types[0], loc);
  if (name == "to_floating" && types.size() == 1) return typeValue(toFloating(types[0]), loc);
  if (name == "to_complex" && types.size() == 1) return typeValue(toComplex(types[0]), loc);
  if (name == "to_real" && types.size() == 1) return typeValue(toReal(types[0]), loc);
  if (name == "float?" && types.size() == 1) return boolean(types[0].isFloat(), loc);
  if (name == "integer?" && types.size() == 1) return boolean(types[0].isInteger(), loc);
  if (name == "complex?" && types.size() == 1) return boolean(types[0].isComplex(), loc);
  if (name == "to_string" && types.size() == 1) {
    Value s;
    s.kind = Value::String;
    s.atom = types[0].name();
    s.loc = loc;
    return s;
  }
  return error(loc,
               fmt::format(FMT_STRING("Nx.Type.{}/{} is not supported by nxc (it knows merge/2, "
                                      "normalize!/1, to_floating/1, float?/1, integer?/1, complex?/1 and to_string/1)"),
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
  case Value::Vectorized: {
    const TensorType &t = g_.typeOf(v.node);
    std::string dims;
    for (size_t k = 0; k < t.shape.size(); ++k)
      dims += k < v.keys.size() ? fmt::format(FMT_STRING("[{}: {}]"), v.keys[k], t.shape[k])
                                : fmt::format(FMT_STRING("[{}]"), t.shape[k]);
    return fmt::format(FMT_STRING("#Nx.Tensor<vectorized {}{}>"), t.elem.name(), dims);
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
  case Value::Function: {
    // A capture of a named function prints as Elixir prints it.
    auto source = functionSource(v);
    return source && source->find('(') == std::string::npos ? *source : "#Function<>";
  }
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
  bool tensors =
      a.kind == Value::Tensor || b.kind == Value::Tensor || a.kind == Value::Vectorized || b.kind == Value::Vectorized;
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
  if (!inElixir() || v.kind == Value::Tensor || v.kind == Value::Vectorized) return std::nullopt;
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
        if (count > 1000000)
          return error(x.children[1]->loc, "a range of more than 1,000,000 elements at compile time");
        for (int64_t j = 0; j < count; ++j) items.push_back(Value::number(from.i + j * from.step, x.loc));
      } else if (from.kind == Value::Map) {
        items = mapPairs(from, x.loc);
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
  if (into->kind == Value::Map) return mapOfPairs(*into, out, body.loc);
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


Loc ElixirCall::argLoc(size_t k) const { return args[k].loc.valid() ? args[k].loc : loc; }

Status ElixirCall::needList(size_t k, const char *fn) const {
  if (args[k].kind != Value::List)
    return error(argLoc(k),
                 fmt::format(FMT_STRING("{}.{} expects a list, got {}"), module, fn, describeValue(args[k])));
  return okStatus();
}

Status ElixirCall::needKeywords(size_t k) const {
  if (args[k].kind != Value::List || (!args[k].elems.empty() && !args[k].isKeywordList()))
    return error(argLoc(k),
                 fmt::format(FMT_STRING("Keyword.{} expects a keyword list, got {}"), name, describeValue(args[k])));
  return okStatus();
}

Status ElixirCall::needAtom(size_t k) const {
  if (args[k].kind != Value::Atom)
    return error(argLoc(k), fmt::format(FMT_STRING("{}.{} expects an atom key, got {}"), module, name,
                                        describeValue(args[k])));
  return okStatus();
}

Result<std::vector<Value>> ElixirCall::elements(size_t k) const {
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
  // A map (not a struct: Elixir's structs are not enumerable): its pairs.
  if (args[k].kind == Value::Map && args[k].atom.empty()) return mapPairs(args[k], loc);
  return error(argLoc(k), fmt::format(FMT_STRING("{}.{} expects a list, a range or a map, got {}"), module, name,
                                      describeValue(args[k])));
}

Value ElixirCall::pairOf(const Value &list, size_t k) const {
  if (list.keys[k].empty()) return list.elems[k];
  return Value::tuple({Value::atomValue(list.keys[k], loc), list.elems[k]}, loc);
}

Result<std::vector<Value>> ElixirCall::enumerated(size_t k) const {
  NXC_TRY(items, elements(k));
  if (args[k].kind == Value::List)
    for (size_t j = 0; j < items.size(); ++j) items[j] = pairOf(args[k], j);
  return items;
}

Value ElixirCall::listOf(std::vector<Value> elems) const { return Value::list(std::move(elems), loc); }

Result<std::optional<Value>> Tracer::elixirCall(const std::string &module, const std::string &name,
                                                std::vector<Value> &args, const Loc &loc) {
  ElixirCall call{module, name, args, loc, args.size()};
  size_t n = call.n;
  if (module == "Kernel") return elixirKernelCall(call);
  if (module == "Nx.Shape") return elixirNxShapeCall(call);
  if (module == "Map") return elixirMapCall(call);
  if (module == "NimbleOptions") return elixirNimbleOptionsCall(call);
  if (module == "Keyword") return elixirKeywordCall(call);
  if (module == "List") return elixirListCall(call);
  if (module == "Tuple") return elixirTupleCall(call);
  if (module == "Logger") return elixirLoggerCall(call);
  if (module == "Function") return elixirFunctionCall(call);
  if (module == "Code") return elixirCodeCall(call);
  if (module == ":math") return elixirMathCall(call);
  if (module == ":erlang") return elixirErlangCall(call);
  if (module == "Nx.Defn.Composite" && n >= 1) return elixirCompositeCall(call);
  if (module == "Enum") return elixirEnumCall(call);
  if ((module == "String" && name == "length" && n == 1 && args[0].kind == Value::String) ||
      (module == "Atom" && name == "to_string" && n == 1 && args[0].kind == Value::Atom)) {
    if (module == "Atom") {
      Value s = args[0];
      s.kind = Value::String;
      s.loc = loc;
      return std::optional<Value>(s);
    }
    // Characters (code points; a string of combining marks counts each, where Elixir counts graphemes).
    int64_t count = 0;
    for (unsigned char c : args[0].atom) count += (c & 0xC0) != 0x80;
    return std::optional<Value>(Value::number(count, loc));
  }
  if (module == "System" && (name == "system_time" || name == "os_time" || name == "monotonic_time") && n == 0) {
    // The clock when the code is compiled (library code seeds a default PRNG key with it).
    auto now = std::chrono::system_clock::now().time_since_epoch();
    return std::optional<Value>(
        Value::number((int64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(now).count(), loc));
  }
  return std::optional<Value>();
}

} // namespace nxc::sema

//===- Tracer.cpp - evaluating defn source ----------------------------------===//
//
// The evaluator: expressions, attributes, operators, ranges, functions and
// keyword lists (TracerEntry.cpp: entry points, parameters, patterns;
// TracerCalls.cpp: calls).
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include "nxc/Frontend/Parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>

namespace nxc::sema {

bool isNonFiniteAtom(const Value &v) {
  return v.kind == Value::Atom && (v.atom == "infinity" || v.atom == "neg_infinity" || v.atom == "nan");
}

Result<Value> Tracer::eval(const Expr &e, Env &env) {
  struct DepthGuard {
    int &d;
    explicit DepthGuard(int &x) : d(x) { ++d; }
    ~DepthGuard() { --d; }
  } guard(depth_);
  if (depth_ > kMaxEvalDepth)
    return error(e.loc, fmt::format(FMT_STRING("expression nested too deeply (more than {} levels)"), kMaxEvalDepth));
  switch (e.kind) {
  case ExprKind::Int: return Value::number(e.intValue, e.loc);
  case ExprKind::Float: return Value::real(e.floatValue, e.loc);
  case ExprKind::Atom: {
    Value v;
    v.kind = Value::Atom;
    v.atom = e.name;
    v.loc = e.loc;
    return v;
  }
  case ExprKind::String: {
    Value v;
    v.kind = Value::String;
    v.atom = e.name;
    v.loc = e.loc;
    return v;
  }
  case ExprKind::Interpolation: return interpolation(e, env);
  case ExprKind::Map: return mapLiteral(e, env);
  case ExprKind::For: return forExpr(e, env);
  case ExprKind::Var: {
    if (!e.name.empty() && e.name[0] == '@') return attribute(e);
    if (e.name == "__MODULE__") return Value::atomValue(module_->name, e.loc);
    const Value *bound = env.find(e.name);
    if (!bound) {
      if (e.name == "_") return error(e.loc, "invalid use of _: it can only be used in patterns");
      if (e.name[0] == '&')
        return error(e.loc,
                     fmt::format(FMT_STRING("capture argument {} must be used within a capture (&(...))"), e.name));
      return error(e.loc, fmt::format(FMT_STRING("undefined variable \"{}\""), e.name));
    }
    Value v = *bound;
    v.loc = e.loc;
    return v;
  }
  case ExprKind::Tuple:
  case ExprKind::List: {
    Value v;
    v.kind = e.kind == ExprKind::Tuple ? Value::Tuple : Value::List;
    v.loc = e.loc;
    bool cons = e.kind == ExprKind::List && e.name == "|"; // [a, b | tail]
    for (size_t k = 0; k < e.children.size(); ++k) {
      auto &c = e.children[k];
      if (cons && k + 1 == e.children.size()) {
        NXC_TRY(tail, eval(*c, env));
        if (tail.kind != Value::List)
          return error(c->loc, fmt::format(FMT_STRING("the tail of [... | tail] must be a list, got {}"),
                                           describeValue(tail)));
        v.elems.insert(v.elems.end(), tail.elems.begin(), tail.elems.end());
        v.keys.insert(v.keys.end(), tail.keys.begin(), tail.keys.end());
        v.keyLocs.insert(v.keyLocs.end(), tail.keyLocs.begin(), tail.keyLocs.end());
        break;
      }
      if (c->kind == ExprKind::Pair) {
        NXC_TRY(x, eval(*c->children[0], env));
        v.elems.push_back(std::move(x));
        v.keys.push_back(c->name);
        v.keyLocs.push_back(c->loc);
      } else {
        NXC_TRY(x, eval(*c, env));
        v.elems.push_back(std::move(x));
        v.keys.push_back("");
        v.keyLocs.push_back(c->loc);
      }
    }
    v.keywordPairsAsKeys();
    return v;
  }
  case ExprKind::Pair: return error(e.loc, "unexpected keyword pair");
  case ExprKind::Match: {
    NXC_TRY(rhs, eval(*e.children[1], env));
    NXC_CHECK(bindPattern(*e.children[0], rhs, env, nullptr));
    return rhs;
  }
  case ExprKind::Block: {
    Value last;
    for (auto &c : e.children) {
      NXC_TRY(v, eval(*c, env));
      last = v;
    }
    return last;
  }
  case ExprKind::Unary: return unary(e, env);
  case ExprKind::Binary: return binaryExpr(e, env);
  case ExprKind::Call: return call(e, env);
  case ExprKind::Fn: return makeFunction(e, env);
  case ExprKind::Apply: {
    NXC_TRY(f, eval(*e.children[0], env));
    std::vector<Value> args;
    for (size_t k = 1; k < e.children.size(); ++k) {
      NXC_TRY(v, eval(*e.children[k], env));
      args.push_back(v);
    }
    return applyFunction(f, std::move(args), e.loc);
  }
  case ExprKind::If: return ifExpr(e, env);
  case ExprKind::Cond: return condExpr(e, env);
  case ExprKind::Case: return caseExpr(e, env);
  case ExprKind::While: return whileExpr(e, env);
  }
  return error(e.loc, "unsupported expression");
}

Result<Value> Tracer::attribute(const Expr &e) {
  std::string name = e.name.substr(1);
  // The last definition of @name (Elixir reads the one above the use; nxc
  // reads one value per module).
  const ast::Attribute *found = nullptr;
  for (auto &a : module_->attributes)
    if (a.name == name) found = &a;
  if (!found)
    return error(e.loc, fmt::format(FMT_STRING("undefined module attribute @{} in {}"), name, module_->name));
  const ast::Attribute &a = *found;
  if (!a.value)
    return error(e.loc, fmt::format(FMT_STRING("module attribute @{} (line {}) is Elixir that nxc cannot read: {}"),
                                    name, a.loc.line, a.skipped));
  if (auto cached = attributeValues_.find(&a); cached != attributeValues_.end()) {
    Value v = cached->second;
    v.loc = e.loc;
    return v;
  }
  if (evaluatingAttributes_.count(name))
    return error(e.loc, fmt::format(FMT_STRING("module attribute @{} refers to itself"), name));
  evaluatingAttributes_.insert(name);
  // Module-level code runs as Elixir, with the bindings written above.
  ++moduleLevel_;
  Env env;
  Status bound = okStatus();
  for (size_t k = 0; k < a.bindingsBefore && bound.ok(); ++k) {
    const ast::Binding &b = module_->bindings[k];
    if (!b.value) {
      bound = error(b.loc, fmt::format(FMT_STRING("{} = ... is Elixir that nxc cannot read: {}"), b.name, b.skipped));
      break;
    }
    auto v = eval(*b.value, env);
    if (!v.ok()) bound = v.error();
    else env.bind(b.name, v.value());
  }
  Result<Value> value = bound.ok() ? eval(*a.value, env) : Result<Value>(bound.error());
  --moduleLevel_;
  evaluatingAttributes_.erase(name);
  NXC_TRY(v, std::move(value));
  // Terms are kept; a tensor belongs to the region it was traced in.
  std::function<bool(const Value &)> hasTensor = [&](const Value &x) {
    if (x.kind == Value::Tensor || x.kind == Value::Function) return true;
    return std::any_of(x.elems.begin(), x.elems.end(), hasTensor);
  };
  if (!hasTensor(v)) attributeValues_.emplace(&a, v);
  v.loc = e.loc;
  return v;
}

Result<Value> Tracer::unary(const Expr &e, Env &env) {
  NXC_TRY(x, eval(*e.children[0], env));
  if (e.name == "+") return x;
  if (e.name == "-") {
    if (x.kind == Value::Int) {
      if (x.i == INT64_MIN) return error(e.loc, "integer overflow in a compile-time computation");
      return Value::number(-x.i, e.loc);
    }
    if (x.kind == Value::Float) return Value::real(-x.f, e.loc);
    if (inElixir() && x.kind == Value::Tensor)
      return error(e.loc,
                   fmt::format(FMT_STRING("** (ArithmeticError) bad argument in arithmetic expression: -{} "
                                          "(Elixir's - takes numbers; in a def or deftransform use Nx.negate/1)"),
                               describeValue(x)));
    return callNx("negate", {x}, e.loc);
  }
  if (e.name == "not" || e.name == "!") {
    if (std::optional<bool> t = elixirTruth(x)) {
      if (e.name == "not" && !(x.kind == Value::Atom && (x.atom == "true" || x.atom == "false")))
        return error(e.loc, "not/1 expects a boolean, got " + describeValue(x));
      return Value::atomValue(*t ? "false" : "true", e.loc);
    }
    return callNx("logical_not", {x}, e.loc);
  }
  return error(e.loc, fmt::format(FMT_STRING("the operator '{}' is not allowed in defn"), e.name));
}

Result<Value> Tracer::binaryExpr(const Expr &e, Env &env) {
  static const std::map<std::string, std::string> ops = {
      {"+", "add"},         {"-", "subtract"},      {"*", "multiply"},    {"/", "divide"},
      {"**", "pow"},        {"==", "equal"},        {"!=", "not_equal"},  {"<", "less"},
      {">", "greater"},     {"<=", "less_equal"},   {">=", "greater_equal"}, {"and", "logical_and"},
      {"or", "logical_or"}, {"&&", "logical_and"},  {"||", "logical_or"}, {"&&&", "bitwise_and"},
      {"|||", "bitwise_or"}, {"<<<", "left_shift"}, {">>>", "right_shift"}};
  auto it = ops.find(e.name);
  bool terms = e.name == "<>" || e.name == "++" || e.name == "--" || e.name == "in" || e.name == "===" ||
               e.name == "!==";
  if (it == ops.end() && !terms) {
    if (e.name == ".." || e.name == "..//") return range(e, env);
    return error(e.loc, fmt::format(FMT_STRING("the operator '{}' is not allowed in defn"), e.name));
  }
  NXC_TRY(a, eval(*e.children[0], env));
  // Elixir's boolean operators short-circuit on terms.
  if (e.name == "and" || e.name == "or" || e.name == "&&" || e.name == "||")
    if (std::optional<bool> t = elixirTruth(a)) {
      bool strict = e.name == "and" || e.name == "or";
      if (strict && !(a.kind == Value::Atom && (a.atom == "true" || a.atom == "false")))
        return error(e.children[0]->loc, fmt::format(FMT_STRING("{} expects a boolean on its left, got {}"), e.name,
                                                     describeValue(a)));
      bool conj = e.name == "and" || e.name == "&&";
      if (*t != conj) return a;
      return eval(*e.children[1], env);
    }
  // In Elixir code (a def, a deftransform) a tensor is a struct, and so true
  // to && and || (`opts[:eps] || Nx.Constants.epsilon(type)`).
  if ((e.name == "&&" || e.name == "||") && inElixir() && (a.kind == Value::Tensor || a.kind == Value::Vectorized))
    return e.name == "||" ? a : eval(*e.children[1], env);
  NXC_TRY(b, eval(*e.children[1], env));
  NXC_TRY(term, elixirOperator(e.name, a, b, e.loc));
  if (term) return *term;
  // Elixir code's arithmetic operators are Kernel's: numbers only.
  if (inElixir() &&
      (a.kind == Value::Tensor || b.kind == Value::Tensor || a.kind == Value::Vectorized ||
       b.kind == Value::Vectorized) &&
      (e.name == "+" || e.name == "-" || e.name == "*" || e.name == "/" || e.name == "**"))
    return error(e.loc, fmt::format(FMT_STRING("** (ArithmeticError) bad argument in arithmetic expression: {} {} {} "
                                               "(Elixir's {} takes numbers; in a def or deftransform use {})"),
                                    describeValue(a), e.name, describeValue(b), e.name,
                                    e.name == "+"   ? "Nx.add/2"
                                    : e.name == "-" ? "Nx.subtract/2"
                                    : e.name == "*" ? "Nx.multiply/2"
                                    : e.name == "/" ? "Nx.divide/2"
                                                    : "Nx.pow/2"));
  if (terms)
    return error(e.loc, fmt::format(FMT_STRING("the operator '{}' expects compile-time terms, got {} and {}"), e.name,
                                    describeValue(a), describeValue(b)));
  // Two numbers: Elixir computes arithmetic itself.
  if ((a.kind == Value::Int || a.kind == Value::Float) && (b.kind == Value::Int || b.kind == Value::Float)) {
    bool fl = a.kind == Value::Float || b.kind == Value::Float;
    const std::string &op = e.name;
    if (op == "+" || op == "-" || op == "*") {
      if (fl) {
        double x = a.asDouble(), y = b.asDouble();
        return Value::real(op == "+" ? x + y : op == "-" ? x - y : x * y, e.loc);
      }
      int64_t r;
      bool overflow = op == "+" ? __builtin_add_overflow(a.i, b.i, &r)
                      : op == "-" ? __builtin_sub_overflow(a.i, b.i, &r)
                                  : __builtin_mul_overflow(a.i, b.i, &r);
      if (overflow) return error(e.loc, "integer overflow in a compile-time computation");
      return Value::number(r, e.loc);
    }
    if (op == "/") {
      if (b.asDouble() == 0) return error(e.loc, "bad argument in arithmetic expression: division by zero");
      return Value::real(a.asDouble() / b.asDouble(), e.loc);
    }
    if (op == "**") {
      if (!fl && b.i >= 0) {
        // Exponentiation by squaring, with overflow checks.
        int64_t acc = 1, base = a.i, n = b.i;
        while (n > 0) {
          if ((n & 1) && __builtin_mul_overflow(acc, base, &acc))
            return error(e.loc, "integer overflow in a compile-time computation");
          n >>= 1;
          if (n > 0 && __builtin_mul_overflow(base, base, &base))
            return error(e.loc, "integer overflow in a compile-time computation");
        }
        return Value::number(acc, e.loc);
      }
      // As Erlang's math: zero to a negative power is no number.
      if (a.asDouble() == 0 && b.asDouble() < 0)
        return error(e.loc, "bad argument in arithmetic expression: zero to a negative power");
      return Value::real(std::pow(a.asDouble(), b.asDouble()), e.loc);
    }
  }
  // == and != on compile-time terms (tuples, atoms: Nx.type(t) == {:f, 32}).
  if ((e.name == "==" || e.name == "!=") && a.kind != Value::Tensor && b.kind != Value::Tensor &&
      a.kind != Value::Vectorized && b.kind != Value::Vectorized && !(a.isNumber() && b.isNumber())) {
    // In defn, == is Nx.equal/2 (!= Nx.not_equal/2): tensors, numbers and
    // booleans only, as Nx raises on the rest.
    // (:infinity, :neg_infinity and :nan are numbers to Nx.)
    auto numberLike = [](const Value &v) { return v.isNumber() || isNonFiniteAtom(v); };
    if (!inElixir() && !(numberLike(a) && numberLike(b))) {
      const Value &term = numberLike(a) ? b : a;
      return error(e.loc,
                   fmt::format(FMT_STRING("{} in defn is Nx.{}/2, which takes tensors and numbers, not {} "
                                          "(Nx raises Protocol.UndefinedError); compare terms in a deftransform"),
                               e.name, e.name == "==" ? "equal" : "not_equal", describeValue(term)));
    }
    auto asNumber = [](const Value &v) {
      if (v.kind == Value::Atom && v.atom == "infinity") return HUGE_VAL;
      if (v.kind == Value::Atom && v.atom == "neg_infinity") return -HUGE_VAL;
      if (v.kind == Value::Atom && v.atom == "nan") return std::nan("");
      return v.asDouble();
    };
    std::function<bool(const Value &, const Value &)> same = [&](const Value &x, const Value &y) {
      // In defn they are Nx.equal of numbers, where NaN equals nothing.
      if (!inElixir() && numberLike(x) && numberLike(y)) return asNumber(x) == asNumber(y);
      if (x.isNumber() && y.isNumber()) return x.asDouble() == y.asDouble();
      if (x.kind != y.kind) return false;
      if (x.kind == Value::Atom) return x.atom == y.atom;
      if (x.kind == Value::Tuple || x.kind == Value::List) {
        if (x.elems.size() != y.elems.size() || (x.kind == Value::List && x.keys != y.keys)) return false;
        for (size_t k = 0; k < x.elems.size(); ++k)
          if (!same(x.elems[k], y.elems[k])) return false;
        return true;
      }
      return false;
    };
    bool r = same(a, b) == (e.name == "==");
    return Value::tensor(constant(ElemType::u8(), {}, {}, {r ? 1 : 0}, e.loc), e.loc);
  }
  // Comparisons and logical operators on two numbers: u8 constants. So too
  // on integer scalar constants (what comparisons of numbers give), as Nx
  // folds constants: `if s < 0 or s > 1` with a number s picks its branch
  // when traced, and a `raise` in the other is never reached.
  static const std::map<std::string, int> compare = {{"==", 0}, {"!=", 1}, {"<", 2}, {">", 3}, {"<=", 4},
                                                     {">=", 5}, {"and", 6}, {"or", 7}, {"&&", 6}, {"||", 7}};
  auto staticInteger = [&](const Value &v) -> std::optional<double> {
    if (v.isNumber()) return v.asDouble();
    if (v.kind != Value::Tensor) return std::nullopt;
    const Node *c = constantNode(v.node);
    const TensorType &t = g_.typeOf(v.node);
    if (!c || t.rank() != 0 || !t.elem.isInteger() || c->ivalues.size() != 1) return std::nullopt;
    return (double)c->ivalues[0];
  };
  std::optional<double> sa = staticInteger(a), sb = staticInteger(b);
  if (sa && sb && compare.count(e.name)) {
    double x = *sa, y = *sb;
    bool r = false;
    switch (compare.at(e.name)) {
    case 0: r = x == y; break;
    case 1: r = x != y; break;
    case 2: r = x < y; break;
    case 3: r = x > y; break;
    case 4: r = x <= y; break;
    case 5: r = x >= y; break;
    case 6: r = x != 0 && y != 0; break;
    default: r = x != 0 || y != 0; break;
    }
    return Value::tensor(constant(ElemType::u8(), {}, {}, {r ? 1 : 0}, e.loc), e.loc);
  }
  // Bitwise operators on two integers: Elixir's Bitwise computes them.
  if (a.kind == Value::Int && b.kind == Value::Int &&
      (e.name == "&&&" || e.name == "|||" || e.name == "<<<" || e.name == ">>>")) {
    if (e.name == "&&&") return Value::number(a.i & b.i, e.loc);
    if (e.name == "|||") return Value::number(a.i | b.i, e.loc);
    if (b.i < 0 || b.i > 63) return error(e.loc, fmt::format(FMT_STRING("shift amount {} is out of range"), b.i));
    if (e.name == ">>>") return Value::number(a.i >> b.i, e.loc);
    if (a.i != 0 && (b.i >= 63 || (a.i > (INT64_MAX >> b.i)) || (a.i < (INT64_MIN >> b.i))))
      return error(e.loc, "integer overflow in a compile-time computation");
    return Value::number((int64_t)((uint64_t)a.i << b.i), e.loc);
  }
  return callNx(it->second, {a, b}, e.loc);
}

Result<Value> Tracer::range(const Expr &e, Env &env) {
  Value r;
  r.kind = Value::Range;
  r.loc = e.loc;
  if (e.children.empty()) {
    r.full = true;
    r.i = 0;
    r.last = -1;
    return r;
  }
  NXC_TRY(first, eval(*e.children[0], env));
  NXC_TRY(last, eval(*e.children[1], env));
  if (first.kind != Value::Int || last.kind != Value::Int)
    return error(e.loc,
                 fmt::format(FMT_STRING("ranges in defn must have integer bounds known at compile time, got {} and {}"),
                             describeValue(first), describeValue(last)));
  r.i = first.i;
  r.last = last.i;
  r.step = first.i <= last.i ? 1 : -1;
  if (e.children.size() == 3) {
    NXC_TRY(step, eval(*e.children[2], env));
    if (step.kind != Value::Int || step.i == 0)
      return error(e.children[2]->loc, fmt::format(FMT_STRING("the step of a range must be a non-zero integer, got {}"),
                                                   describeValue(step)));
    r.step = step.i;
  }
  return r;
}

Result<Value> Tracer::makeFunction(const Expr &e, Env &env) {
  if (e.name == ast::kFnClauses && !inElixir()) {
    // The Case the clauses became: [subject, head1, body1, head2, ...].
    const Expr &clauses = *e.children.back();
    if (clauses.children.size() > 3)
      return error(clauses.children[3]->loc, "anonymous functions with several clauses are not supported in defn");
    return error(clauses.children[1]->loc, "guards are not allowed in defn");
  }
  Value f;
  f.kind = Value::Function;
  f.fn = &e;
  f.captured = env.flattened();
  f.fnModule = module_;
  f.fnInElixir = inElixir();
  f.loc = e.loc;
  return f;
}

Result<Value> Tracer::applyFunction(const Value &f, std::vector<Value> args, const Loc &loc) {
  if (f.kind != Value::Function)
    return error(loc, fmt::format(FMT_STRING("expected a function to call, got {}"), describeValue(f)));
  size_t arity = (size_t)f.fn->intValue;
  if (args.size() != arity)
    return error(loc,
                 fmt::format(FMT_STRING("the function of arity {} (defined at line {}) was called with {} argument{}"),
                             arity, f.fn->loc.line, args.size(), args.size() == 1 ? "" : "s"));
  if (stack_.size() > 200) return error(loc, "calls nested too deeply");
  Env env(f.captured.get());
  std::set<std::string> bound;
  for (size_t k = 0; k < arity; ++k) NXC_CHECK(bindPattern(*f.fn->children[k], args[k], env, &bound));
  const ast::Module *saved = module_;
  module_ = f.fnModule;
  // The body is Elixir or defn where it is written, not where it is called.
  static const ast::Function elixirClosure = [] {
    ast::Function c;
    c.kind = "fn in Elixir";
    return c;
  }();
  static const ast::Function defnClosure = [] {
    ast::Function c;
    c.kind = "defn";
    return c;
  }();
  stack_.push_back(f.fnInElixir ? &elixirClosure : &defnClosure);
  auto r = eval(*f.fn->children[arity], env);
  stack_.pop_back();
  module_ = saved;
  return r;
}

Result<Value> Tracer::keywordGet(const Value &list, const Value &key, const Loc &loc) {
  if (key.kind != Value::Atom)
    return error(key.loc.valid() ? key.loc : loc,
                 fmt::format(FMT_STRING("keyword lists are indexed by atoms, got {}"), describeValue(key)));
  for (size_t k = 0; k < list.elems.size(); ++k)
    if (list.keys[k] == key.atom) return list.elems[k];
  return Value::atomValue("nil", loc);
}

Result<Value> Tracer::keywordValidate(const Value &list, const Value &spec, const Loc &loc) {
  if (list.kind != Value::List || (!list.elems.empty() && !list.isKeywordList()))
    return error(list.loc.valid() ? list.loc : loc,
                 fmt::format(FMT_STRING("keyword!/2 expects a keyword list, got {}"), describeValue(list)));
  if (spec.kind != Value::List) return error(spec.loc.valid() ? spec.loc : loc, "keyword!/2 expects a list of keys");
  // spec: [:key, key: default, ...]
  std::vector<std::string> known;
  Value out;
  out.kind = Value::List;
  out.loc = loc;
  for (size_t k = 0; k < spec.elems.size(); ++k) {
    std::string key =
        spec.keys[k].empty() ? (spec.elems[k].kind == Value::Atom ? spec.elems[k].atom : "") : spec.keys[k];
    if (key.empty()) return error(spec.loc, "keyword!/2 expects atoms or key: default pairs in its list of keys");
    known.push_back(key);
  }
  std::string expected = known.empty() ? "" : fmt::format(FMT_STRING(":{}"), fmt::join(known, ", :"));
  for (size_t k = 0; k < list.elems.size(); ++k)
    if (std::find(known.begin(), known.end(), list.keys[k]) == known.end())
      return error(list.keyLocs[k].valid() ? list.keyLocs[k] : loc,
                   fmt::format(FMT_STRING("unknown key :{} in the keyword list, expected one of [{}]"), list.keys[k],
                               expected));
  for (size_t k = 0; k < spec.elems.size(); ++k) {
    const std::string &key = known[k];
    bool found = false;
    for (size_t j = list.elems.size(); j-- > 0;)
      if (list.keys[j] == key) {
        out.elems.push_back(list.elems[j]);
        found = true;
        break;
      }
    if (!found && !spec.keys[k].empty()) out.elems.push_back(spec.elems[k]);
    else if (!found) continue;
    out.keys.push_back(key);
    out.keyLocs.push_back(loc);
  }
  return out;
}

} // namespace nxc::sema

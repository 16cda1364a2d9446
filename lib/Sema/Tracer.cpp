//===- Tracer.cpp - evaluating defn source ----------------------------------===//
//
// The evaluator: entry points and parameters, patterns, expressions, calls
// (local, imported, remote, Nx.Defn.Kernel), functions and keyword lists.
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

namespace {

/// :infinity, :neg_infinity and :nan: numbers to Nx (its is_tensor guard,
/// and Nx.equal in defn).
bool isNonFiniteAtom(const Value &v) {
  return v.kind == Value::Atom && (v.atom == "infinity" || v.atom == "neg_infinity" || v.atom == "nan");
}

} // namespace

Result<Graph> Tracer::run(const Signature &sig) {
  NXC_TRY(target, findEntry(sig));
  const ast::Module *mod = target.first;
  const ast::Function *fn = target.second;
  module_ = mod;
  g_.function = fn->name;
  Env env;
  std::set<std::string> bound;
  // Constant templates are read by loadConstants (nxc/Tensor/Constants.h)
  // before tracing; one that was not has no type to trace with.
  std::function<Status(const Template &)> loaded = [&](const Template &t) -> Status {
    if (!t.constantPath.empty() && !t.isTuple && !t.values)
      return error(t.loc, fmt::format(FMT_STRING("the constant @{} has not been read (constant templates are "
                                                 "compiled by `nxc aot`)"),
                                      t.constantPath));
    if (!t.constantPath.empty() && t.isTuple && t.elems.empty())
      return error(t.loc, fmt::format(FMT_STRING("the constant @{} has not been read (constant templates are "
                                                 "compiled by `nxc aot`)"),
                                      t.constantPath));
    for (auto &e : t.elems) NXC_CHECK(loaded(e));
    return okStatus();
  };
  for (auto &a : sig.args) NXC_CHECK(loaded(a));
  // An Elixir function of several clauses (or a bodiless head and its
  // clauses) is called with the arguments; its clause is chosen as any call's.
  bool dispatch = false;
  if (fn->kind != "defn" && fn->kind != "defnp") {
    size_t sameArity = 0;
    for (auto &c : mod->functions) sameArity += c.name == fn->name && c.params.size() == fn->params.size();
    dispatch = fn->head || fn->guard || sameArity > 1;
  }
  std::vector<Value> callArgs;
  for (size_t a = 0; a < fn->params.size(); ++a) {
    Value v;
    if (a < sig.args.size()) {
      std::vector<std::string> names;
      collectNames(*fn->params[a], names);
      size_t nameIdx = 0;
      v = makeParams(sig.args[a], names, nameIdx);
      const Expr *pat = fn->params[a].get();
      if (pat->kind == ExprKind::Match)
        pat = pat->children[0]->kind == ExprKind::Map ? pat->children[0].get() : pat->children[1].get();
      if (pat->kind == ExprKind::Map && v.kind != Value::Map) {
        std::vector<std::string> keys;
        for (auto &pair : pat->children) keys.push_back(pair->name + ": f32[...]");
        return error(sig.args[a].loc.valid() ? sig.args[a].loc : sig.loc,
                     fmt::format(FMT_STRING("{}/{} takes a map as argument {}; give a map template, as in %{{{}}}"),
                                 fn->name, fn->params.size(), a + 1, fmt::join(keys, ", ")));
      }
    } else if (a == sig.args.size() && sig.options) {
      // The --fn's keyword list: a literal, evaluated as Elixir would.
      NXC_TRY(parsed, parseExpression(sig.options));
      options_ = std::move(parsed);
      // Its lines and columns are the --fn's own: errors show the --fn.
      std::function<void(ast::Expr &)> relocate = [&](ast::Expr &e) {
        if (e.loc.file) e.loc.file = sig.loc.file;
        for (auto &c : e.children)
          if (c) relocate(*c);
      };
      relocate(*options_);
      Env none;
      NXC_TRY(o, eval(*options_, none));
      v = o;
    } else if (dispatch) {
      break; // the call takes the defaults
    } else {
      NXC_TRY(d, eval(*fn->defaults[a], env));
      v = d;
    }
    if (dispatch) callArgs.push_back(v);
    else NXC_CHECK(bindPattern(*fn->params[a], v, env, &bound));
  }
  Value result;
  if (dispatch) {
    NXC_TRY(r, inlineCall(*fn, *mod, callArgs, fn->loc));
    result = r;
  } else {
    stack_.push_back(fn);
    NXC_TRY(r, eval(*fn->body, env));
    stack_.pop_back();
    result = r;
  }
  NXC_TRY(tree, flattenResult(result, fn->loc));
  g_.resultTree = tree;
  // Every value the program computes is a tensor nxc can hold (shapes built
  // in code are checked where they are written; this catches the products).
  // (A cond/while node's type is its first result; elem nodes carry the others.)
  for (auto &n : g_.nodes)
    if (n.type.numElements() > kMaxElements)
      return error(n.loc.valid() ? n.loc : fn->loc,
                   fmt::format(FMT_STRING("this computes a tensor {} of more than 2^40 elements"), n.type.str()));
  return std::move(g_);
}

size_t Tracer::requiredArity(const ast::Function &f) {
  size_t n = 0;
  for (auto &d : f.defaults) if (!d) ++n;
  return n;
}

const ast::Function *Tracer::findFunction(const ast::Module &m, const std::string &name, size_t arity) {
  for (auto &f : m.functions)
    if (f.name == name && arity >= requiredArity(f) && arity <= f.params.size()) return &f;
  return nullptr;
}

Result<std::pair<const ast::Module *, const ast::Function *>> Tracer::findEntry(const Signature &sig) {
  std::vector<std::pair<const ast::Module *, const ast::Function *>> found;
  std::vector<std::string> known;
  bool inputOnly = sig.module.empty() && file_.inputModules < file_.modules.size();
  for (size_t mi = 0; mi < file_.modules.size(); ++mi) {
    auto &m = file_.modules[mi];
    // Unqualified: the input's own modules first, then the library's.
    if (inputOnly && mi >= file_.inputModules && !found.empty()) break;
    if (!sig.module.empty() && m.name != sig.module) continue;
    bool inThisModule = false; // the clauses of one function count once
    for (auto &f : m.functions) {
      if (f.name == sig.function && sig.arity() >= requiredArity(f) && sig.arity() <= f.params.size() &&
          !inThisModule) {
        found.push_back({&m, &f});
        inThisModule = true;
      }
      std::string arity = fmt::format(FMT_STRING("{}/{}"), f.name, f.params.size());
      if (f.body && std::find(known.begin(), known.end(), arity) == known.end()) known.push_back(arity);
    }
  }
  std::string qual =
      fmt::format(FMT_STRING("{}{}{}/{}"), sig.module, sig.module.empty() ? "" : ".", sig.function, sig.arity());
  if (found.empty())
    for (auto &m : file_.modules)
      for (auto &f : m.functions)
        if (f.name == sig.function && !f.body && !f.skipped.empty() && (sig.module.empty() || m.name == sig.module))
          return error(sig.loc, fmt::format(FMT_STRING("{} {}/{} runs Elixir that nxc cannot read (line {}:{}): {}"),
                                            f.kind, f.name, f.params.size(), f.skippedLoc.line, f.skippedLoc.col,
                                            f.skipped));
  if (found.empty()) {
    if (!sig.module.empty()) {
      bool exists = false;
      for (auto &m : file_.modules) exists |= m.name == sig.module;
      if (!exists)
        return error(sig.loc,
                     fmt::format(FMT_STRING("module {} is not defined in {}"), sig.module, file_.source->name));
    }
    std::string defines = known.empty() ? "" : fmt::format(FMT_STRING(" (it defines {})"), fmt::join(known, ", "));
    return error(sig.loc, fmt::format(FMT_STRING("undefined function {} in {}{}"), qual, file_.source->name, defines));
  }
  if (found.size() > 1)
    return error(sig.loc,
                 fmt::format(FMT_STRING("function {} is defined in several modules; qualify it, as in {}.{}(...)"),
                             qual, found[0].first->name, sig.function));
  if (!found[0].second->body && !found[0].second->head)
    return error(sig.loc, fmt::format(FMT_STRING("{} is plain Elixir that nxc cannot compile (its body is not in the "
                                                 "defn subset)"),
                                      qual));
  return found[0];
}

void Tracer::collectNames(const Expr &p, std::vector<std::string> &out) {
  if (p.kind == ExprKind::Var) out.push_back(p.name);
  else if (p.kind == ExprKind::Tuple) for (auto &c : p.children) collectNames(*c, out);
  else if (p.kind == ExprKind::Match) {
    // `{a, b} = params`: prefer the tuple side's leaf names.
    const Expr &l = *p.children[0], &r = *p.children[1];
    collectNames(l.kind == ExprKind::Tuple ? l : r, out);
  }
}

Value Tracer::makeParams(const Template &t, const std::vector<std::string> &names, size_t &nameIdx) {
  if (t.isTuple && !t.keys.empty()) {
    // A map: each leaf named after its key (VAR_KEY when one variable takes it).
    Value v;
    v.kind = Value::Map;
    v.atom = t.structName;
    v.loc = t.loc;
    bool single = names.size() == 1 && nameIdx == 0;
    for (size_t i = 0; i < t.elems.size(); ++i) {
      std::string key = ast::keyText(t.keys[i]);
      std::vector<std::string> sub = {single ? names[0] + "_" + key : key};
      size_t k = 0;
      v.elems.push_back(makeParams(t.elems[i], sub, k));
      v.keys.push_back(t.keys[i]);
      v.keyLocs.push_back(t.loc);
    }
    if (single) nameIdx = 1;
    return v;
  }
  if (t.isTuple) {
    Value v;
    v.kind = Value::Tuple;
    v.loc = t.loc;
    // A tuple template bound to a single variable: name leaves var_0, var_1, ...
    bool single = names.size() == 1 && nameIdx == 0;
    std::string base = single ? names[0] : "";
    for (size_t i = 0; i < t.elems.size(); ++i) {
      if (single) {
        std::vector<std::string> sub = {base + "_" + std::to_string(i)};
        size_t k = 0;
        v.elems.push_back(makeParams(t.elems[i], sub, k));
      } else {
        v.elems.push_back(makeParams(t.elems[i], names, nameIdx));
      }
    }
    if (single) nameIdx = 1;
    return v;
  }
  if (t.values) {
    // A baked constant (`@weights.npy`): read-only data, not a parameter.
    ++nameIdx;
    Node c;
    c.op = Op::Constant;
    c.type = t.tensor;
    c.fvalues = t.values->f;
    c.ivalues = t.values->i;
    c.loc = t.loc;
    int id = g_.add(c);
    g_.bakedConstants.push_back(id);
    return Value::tensor(id, t.loc);
  }
  Node n;
  n.op = Op::Parameter;
  n.type = t.tensor;
  n.param = (int)g_.params.size();
  n.loc = t.loc;
  int id = g_.add(n);
  g_.params.push_back(id);
  std::string name = nameIdx < names.size() ? names[nameIdx] : "";
  ++nameIdx;
  if (name.empty() || name[0] == '_') name = "arg" + std::to_string(n.param);
  for (auto &other : g_.paramNames)
    if (other == name) name += "_" + std::to_string(n.param);
  g_.paramNames.push_back(name);
  return Value::tensor(id, t.loc);
}

Result<ResultTree> Tracer::flattenResult(const Value &v, const Loc &loc) {
  ResultTree t;
  if (v.kind == Value::Tuple) {
    t.isTuple = true;
    for (auto &e : v.elems) {
      NXC_TRY(sub, flattenResult(e, loc));
      t.elems.push_back(std::move(sub));
    }
    return t;
  }
  if (v.kind == Value::Map) {
    // Leaves in Nx's order: a map's sorted by key; a struct's as its
    // @derive {Nx.Container, containers: [...]} lists them (only those), or
    // in defstruct order.
    std::vector<size_t> order(v.keys.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ast::mapKeyLess(v.keys[a], v.keys[b]); });
    for (auto &m : file_.modules)
      if (!v.atom.empty() && m.name == v.atom) {
        const std::vector<std::string> &fields = !m.containerFields.empty() ? m.containerFields : m.structFields;
        if (fields.empty()) break;
        order.clear();
        for (auto &f : fields) {
          auto it = std::find(v.keys.begin(), v.keys.end(), f);
          if (it != v.keys.end()) order.push_back(it - v.keys.begin());
        }
      }
    t.isTuple = true;
    t.structName = v.atom;
    for (size_t k : order) {
      NXC_TRY(sub, flattenResult(v.elems[k], loc));
      t.elems.push_back(std::move(sub));
      t.keys.push_back(v.keys[k]);
    }
    return t;
  }
  NXC_TRY(node, toTensor(v, v.loc.valid() ? v.loc : loc));
  t.node = node;
  g_.results.push_back(node);
  return t;
}

Status Tracer::bindPattern(const Expr &p, const Value &v, Env &env, std::set<std::string> *params) {
  switch (p.kind) {
  case ExprKind::Var:
    if (p.name == "_") return okStatus();
    if (params) {
      if (params->count(p.name))
        return error(p.loc, fmt::format(FMT_STRING("the variable \"{}\" is bound multiple times in the same pattern"),
                                        p.name));
      params->insert(p.name);
    }
    env.bind(p.name, v);
    return okStatus();
  case ExprKind::Tuple:
    if (v.kind != Value::Tuple)
      return error(p.loc, fmt::format(FMT_STRING("cannot match a tuple pattern against {}"), describeValue(v)));
    if (v.elems.size() != p.children.size())
      return error(p.loc, fmt::format(FMT_STRING("cannot match a tuple of {} elements against a tuple of {} elements"),
                                      p.children.size(), v.elems.size()));
    for (size_t i = 0; i < p.children.size(); ++i) NXC_CHECK(bindPattern(*p.children[i], v.elems[i], env, params));
    return okStatus();
  case ExprKind::Match:
    NXC_CHECK(bindPattern(*p.children[0], v, env, params));
    return bindPattern(*p.children[1], v, env, params);
  default: {
    // Literals, lists and maps: as Elixir matches them.
    NXC_TRY(m, matchCase(p, v, env));
    if (!m) return error(p.loc, "** (MatchError) no match of right hand side value: " + inspectValue(v));
    return okStatus();
  }
  }
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
      return error(e.loc, fmt::format(FMT_STRING("** (ArithmeticError) bad argument in arithmetic expression: -{} "
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
  NXC_TRY(b, eval(*e.children[1], env));
  NXC_TRY(term, elixirOperator(e.name, a, b, e.loc));
  if (term) return *term;
  // Elixir code's arithmetic operators are Kernel's: numbers only.
  if (inElixir() && (a.kind == Value::Tensor || b.kind == Value::Tensor) &&
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
      !(a.isNumber() && b.isNumber())) {
    // In defn, == is Nx.equal/2 (!= Nx.not_equal/2): tensors, numbers and
    // booleans only, as Nx raises on the rest.
    // (:infinity, :neg_infinity and :nan are numbers to Nx.)
    auto numberLike = [](const Value &v) { return v.isNumber() || isNonFiniteAtom(v); };
    if (!inElixir() && !(numberLike(a) && numberLike(b))) {
      const Value &term = numberLike(a) ? b : a;
      return error(e.loc, fmt::format(FMT_STRING("{} in defn is Nx.{}/2, which takes tensors and numbers, not {} "
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
    if (!c || t.rank() != 0 || t.elem.isFloat() || c->ivalues.size() != 1) return std::nullopt;
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

Result<Value> Tracer::call(const Expr &e, Env &env) {
  std::vector<Value> args;
  for (auto &c : e.children) {
    NXC_TRY(v, eval(*c, env));
    args.push_back(v);
  }
  std::string qual = fmt::format(FMT_STRING("{}{}{}/{}"), e.module, e.module.empty() ? "" : ".", e.name, args.size());
  if (e.module.empty()) {
    // A plain def is traced like Nx.Defn.jit traces any function.
    if (const ast::Function *f = findFunction(*module_, e.name, args.size()))
      return inlineCall(*f, *module_, args, e.loc);
    // Then the public functions of imported modules defined in this file.
    const ast::Module *from = nullptr;
    const ast::Function *imported = nullptr;
    for (auto &name : module_->imports)
      for (auto &m : file_.modules)
        if (m.name == name)
          if (const ast::Function *f = findFunction(m, e.name, args.size()))
            if (f->kind == "defn" || f->kind == "def" || f->kind == "deftransform") {
              if (imported && from != &m)
                return error(e.loc, fmt::format(FMT_STRING("function {} is imported from both {} and {}; call it as "
                                                           "{}.{}(...) or {}.{}(...)"),
                                                qual, from->name, m.name, from->name, e.name, m.name, e.name));
              from = &m;
              imported = f;
            }
    if (imported) return inlineCall(*imported, *from, args, e.loc);
    return kernel(e.name, args, e.loc, qual);
  }
  if (e.module == "Nx" && e.name == "is_tensor" && args.size() == 1) {
    // Nx's guard: a tensor, a number, or :infinity, :neg_infinity, :nan.
    const Value &v = args[0];
    bool tensorLike = v.kind == Value::Tensor || v.kind == Value::Int || v.kind == Value::Float || isNonFiniteAtom(v);
    return Value::atomValue(tensorLike ? "true" : "false", e.loc);
  }
  if (e.module == "Nx" && args.size() == 1 && e.name != "pred" && ElemType::parse(e.name)) {
    // Nx.u32(x) and the other short-hands: Nx.tensor(x, type: :u32).
    std::vector<Value> withType = {args[0], Value::keywords({{"type", Value::atomValue(e.name, e.loc)}}, e.loc)};
    return callNx("tensor", withType, e.loc);
  }
  if (e.module == "Nx") return callNx(e.name, args, e.loc);
  if (e.module == "Nx.Random") return callNx("Random." + e.name, args, e.loc);
  if (e.module == "Nx.LinAlg") return callNx("LinAlg." + e.name, args, e.loc);
  if (e.module == "Nx.Defn.Kernel") return kernel(e.name, args, e.loc, qual);
  if (e.module == "Nx.Constants") return constants(e.name, args, e.loc, qual);
  if (e.module == "Access") {
    if (e.name != "get" || args.size() != 2)
      return error(e.loc, fmt::format(FMT_STRING("undefined function {} (nxc knows Access.get/2, which t[i] calls)"),
                                      qual));
    if (args[0].kind == Value::List) return keywordGet(args[0], args[1], e.loc);
    if (args[0].kind == Value::Map) {
      std::vector<Value> getArgs = {args[0], args[1]};
      NXC_TRY(got, elixirCall("Map", "get", getArgs, e.loc));
      if (got) return *got;
    }
    return access(args[0], args[1], e.loc);
  }
  for (auto &m : file_.modules)
    if (m.name == e.module) {
      const ast::Function *f = findFunction(m, e.name, args.size());
      if (!f)
        return error(e.loc,
                     fmt::format(FMT_STRING("undefined function {} (module {} has no such defn)"), qual, e.module));
      if (f->kind == "defnp" || f->kind == "defp" || f->kind == "deftransformp")
        return error(e.loc, fmt::format(FMT_STRING("function {} is private to {}"), qual, e.module));
      const ast::Module *saved = module_;
      auto r = inlineCall(*f, m, args, e.loc);
      module_ = saved;
      return r;
    }
  if (e.module == "Nx.Defn.Expr" && e.name == "metadata" && args.size() == 2 && !inElixir())
    return error(e.loc, "cannot invoke Nx.Defn.Expr.metadata/2 inside defn because it was not defined with defn (call "
                        "it from a deftransform, as Axon does)");
  if (e.module == "Nx.Defn.Expr" && e.name == "metadata" && args.size() == 2) {
    // Axon's logits cache: the tensor, with the map for patterns on its data.
    NXC_TRY(t, toTensor(args[0], e.loc));
    Value tagged = Value::tensor(t, e.loc);
    if (args[1].kind == Value::Map) tagged.metadata = std::make_shared<const Value>(args[1]);
    return tagged;
  }
  if (e.module == "Nx.Type") return nxTypeCall(e.name, args, e.loc);
  if (inElixir() || e.module == "Kernel" || (e.module == "Map" && e.name == "fetch!")) {
    NXC_TRY(done, elixirCall(e.module, e.name, args, e.loc));
    if (done) return *done;
    if (e.module == "Kernel") return kernel(e.name, args, e.loc, qual); // Kernel.div/2 and the like
    static const std::set<std::string> stdlib = {"Kernel", "Nx.Shape", "Keyword", "List", "Tuple", "Enum", "Map", "Integer",
                                                 "Float", "String", "Atom", "IO", "Logger", "Access", "Range",
                                                 ":math", ":erlang"};
    if (inElixir() && stdlib.count(e.module))
      return error(e.loc, fmt::format(FMT_STRING("{} is not in the part of Elixir that nxc runs at compile time "
                                                 "(docs/language.md lists it)"),
                                      qual));
  }
  if (e.module == "IO" || e.module == "Enum" || e.module == "Kernel" || e.module == "String" || e.module == "List" ||
      e.module == "Keyword" || e.module == "Map" || e.module == "Tuple" || e.module[0] == ':')
    return error(e.loc, fmt::format(FMT_STRING("cannot invoke {} inside defn because it was not defined with defn{}"),
                                    qual, e.module == "IO" ? "; use print_value/print_expr instead" : ""));
  if (e.module.rfind("Nx.", 0) == 0)
    return error(e.loc, fmt::format(FMT_STRING("{} is not supported yet by nxc"), qual));
  return error(e.loc, fmt::format(FMT_STRING("undefined function {} (module {} is not defined in this file)"), qual,
                                  e.module));
}

Result<Value> Tracer::inlineCall(const ast::Function &f, const ast::Module &m, std::vector<Value> args, const Loc &loc) {
  // As Nx: a defn may only call defns; a plain def runs as Elixir. (A def
  // compiled as an entry point is traced, as Nx.Defn.jit traces it, and may
  // call other defs whose bodies are in the defn subset.)
  const ast::Function *caller = nullptr;
  for (auto it = stack_.rbegin(); it != stack_.rend() && !caller; ++it) caller = *it;
  bool fromDefn = caller && (caller->kind == "defn" || caller->kind == "defnp") && caller->name != kReplEntryName;
  std::string qual = fmt::format(FMT_STRING("{}/{}"), f.name, f.params.size());
  if ((f.kind == "def" || f.kind == "defp") && fromDefn)
    return error(loc, fmt::format(FMT_STRING("cannot use function {} inside defn because it was not defined with defn"),
                                  qual));
  if (!f.body && f.skipped.empty() && !f.head)
    return error(loc, fmt::format(FMT_STRING("{} {} is Elixir that nxc cannot read"), f.kind, qual));
  if (!f.body && !f.head) {
    std::string where = f.skippedLoc.valid() ? fmt::format(FMT_STRING(" (line {}:{})"), f.skippedLoc.line,
                                                           f.skippedLoc.col)
                                             : "";
    return error(loc, fmt::format(FMT_STRING("{} {} runs Elixir that nxc cannot read{}: {}"), f.kind, qual, where,
                                  f.skipped));
  }
  // Elixir functions may recurse (to a depth); defn may not.
  if (f.kind == "defn" || f.kind == "defnp")
    for (auto *active : stack_)
      if (active == &f)
        return error(loc, fmt::format(FMT_STRING("recursive call to {}/{}: defn does not support recursion"), f.name,
                                      f.params.size()));
  if (stack_.size() > 200) return error(loc, "calls nested too deeply (more than 200)");
  const ast::Module *saved = module_;
  module_ = &m;
  // An Elixir function of several clauses (or a guarded one) runs the first
  // clause whose patterns match and whose guard holds.
  if (!(f.kind == "defn" || f.kind == "defnp")) {
    std::vector<const ast::Function *> clauses;
    for (auto &c : m.functions)
      if (c.name == f.name && c.params.size() == f.params.size() && c.kind == f.kind) clauses.push_back(&c);
    // Missing arguments take the defaults of a bodiless head (or of the
    // clause that declares them), before a clause is chosen.
    for (size_t i = args.size(); i < f.params.size(); ++i) {
      const ast::Function *declaring = nullptr;
      for (const ast::Function *c : clauses)
        if (c->defaults.size() > i && c->defaults[i]) { declaring = c; break; }
      if (!declaring) break;
      Env none;
      auto d = eval(*declaring->defaults[i], none);
      if (!d.ok()) {
        module_ = saved;
        return d.error();
      }
      args.push_back(d.value());
    }
    if ((clauses.size() > 1 || f.guard || f.head) && args.size() == f.params.size()) {
      for (const ast::Function *c : clauses) {
        if (!c->body) continue;
        Env env;
        bool matched = true;
        matchingHeads_ = true;
        for (size_t i = 0; i < c->params.size() && matched; ++i) {
          auto m = matchCase(*c->params[i], args[i], env);
          if (!m.ok()) {
            matchingHeads_ = false;
            module_ = saved;
            return m.error();
          }
          matched = m.value();
        }
        matchingHeads_ = false;
        if (matched && c->guard) {
          stack_.push_back(c);
          auto g = eval(*c->guard, env);
          stack_.pop_back();
          if (!g.ok()) {
            module_ = saved;
            return g.error();
          }
          matched = !(g.value().kind == Value::Atom && (g.value().atom == "false" || g.value().atom == "nil"));
        }
        if (!matched) continue;
        stack_.push_back(c);
        auto r = eval(*c->body, env);
        stack_.pop_back();
        module_ = saved;
        return r;
      }
      module_ = saved;
      std::vector<std::string> shown;
      for (auto &a : args) shown.push_back(inspectValue(a));
      return error(loc, fmt::format(FMT_STRING("** (FunctionClauseError) no function clause matching in {}.{}/{} "
                                               "(called with {})"),
                                    m.name, f.name, f.params.size(), fmt::join(shown, ", ")));
    }
  }
  Env env;
  std::set<std::string> bound;
  for (size_t i = 0; i < f.params.size(); ++i) {
    if (i >= args.size()) {
      NXC_TRY(d, eval(*f.defaults[i], env));
      args.push_back(d);
    }
    NXC_CHECK(bindPattern(*f.params[i], args[i], env, &bound));
  }
  stack_.push_back(&f);
  auto r = eval(*f.body, env);
  stack_.pop_back();
  module_ = saved;
  return r;
}

Result<Value> Tracer::kernel(const std::string &name, std::vector<Value> &args, const Loc &loc, const std::string &qual) {
  if (name == "raise" && (args.size() == 1 || args.size() == 2)) return raiseCall(args, loc);
  {
    // Kernel's guards and conversions on compile-time terms.
    bool terms = std::none_of(args.begin(), args.end(), [](const Value &v) { return v.kind == Value::Tensor; });
    if (terms || name == "inspect" || name.rfind("is_", 0) == 0) {
      NXC_TRY(done, elixirCall("Kernel", name, args, loc));
      if (done) return *done;
    }
  }
  bool numbers = args.size() == 2 && (args[0].kind == Value::Int || args[0].kind == Value::Float) &&
                 (args[1].kind == Value::Int || args[1].kind == Value::Float);
  if (numbers && (name == "max" || name == "min")) {
    // Elixir's own max/min on two numbers.
    bool first = name == "max" ? args[0].asDouble() >= args[1].asDouble() : args[0].asDouble() <= args[1].asDouble();
    Value r = first ? args[0] : args[1];
    r.loc = loc;
    return r;
  }
  if (numbers && (name == "div" || name == "rem")) {
    if (args[0].kind != Value::Int || args[1].kind != Value::Int)
      return error(loc, fmt::format(FMT_STRING("bad argument in arithmetic expression: {}/2 expects integers"), name));
    if (args[1].i == 0) return error(loc, "bad argument in arithmetic expression: division by zero");
    if (args[0].i == INT64_MIN && args[1].i == -1) return error(loc, "integer overflow in a compile-time computation");
    return Value::number(name == "div" ? args[0].i / args[1].i : args[0].i % args[1].i, loc);
  }
  if (args.size() == 2) {
    if (name == "max") return callNx("max", args, loc);
    if (name == "min") return callNx("min", args, loc);
    if (name == "div") return callNx("quotient", args, loc);
    if (name == "rem") return callNx("remainder", args, loc);
    if (name == "elem") {
      if (args[0].kind != Value::Tuple)
        return error(loc, fmt::format(FMT_STRING("elem/2 expects a tuple, got {}"), describeValue(args[0])));
      if (args[1].kind != Value::Int) return error(args[1].loc, "elem/2 expects an integer index");
      if (args[1].i < 0 || args[1].i >= (int64_t)args[0].elems.size())
        return error(args[1].loc, fmt::format(FMT_STRING("index {} is out of range for a tuple of {} elements"),
                                              args[1].i, args[0].elems.size()));
      return args[0].elems[args[1].i];
    }
  }
  if (args.size() == 1 && name == "stop_grad") return stopGrad(args[0], loc);
  if (args.size() == 3 && name == "custom_grad") return customGrad(args, loc);
  if ((args.size() == 2 && name == "grad") || ((args.size() == 2 || args.size() == 3) && name == "value_and_grad"))
    return gradCall(name, args, loc);
  if (args.size() >= 1 && args.size() <= 3 && name == "print_value") return printValue(args, loc);
  if (args.size() >= 1 && args.size() <= 2 && name == "print_expr") return printExpr(args, loc);
  if (args.size() >= 1 && args.size() <= 3 && (name == "hook" || name == "io_call")) return args[0];
  if (args.size() == 2 && name == "then") return applyFunction(args[1], {args[0]}, loc);
  if (args.size() == 2 && name == "tap") {
    NXC_TRY(ignored, applyFunction(args[1], {args[0]}, loc));
    (void)ignored;
    return args[0];
  }
  if (args.size() == 2 && name == "keyword!") return keywordValidate(args[0], args[1], loc);
  if (args.size() == 2 && name == "assert_shape") {
    NXC_TRY(want, shapeArg(args[1], "assert_shape"));
    if (shapeOfValue(args[0]) != want)
      return error(loc, fmt::format(FMT_STRING("expected tensor to have shape {}, got tensor with shape {}"),
                                    shapeString(want), shapeString(shapeOfValue(args[0]))));
    return args[0];
  }
  if (args.size() == 1 && (name == "abs" || name == "floor" || name == "ceil" || name == "round") &&
      (args[0].kind == Value::Int || args[0].kind == Value::Float)) {
    if (args[0].kind == Value::Int) {
      if (name == "abs" && args[0].i == INT64_MIN) return error(loc, "integer overflow in a compile-time computation");
      return Value::number(name == "abs" ? std::llabs(args[0].i) : args[0].i, loc);
    }
    double v = args[0].f;
    double r = name == "abs" ? std::fabs(v) : name == "floor" ? std::floor(v) : name == "ceil" ? std::ceil(v) : std::round(v);
    if (name == "abs") return Value::real(r, loc);
    // Elixir's result is an integer of any size; nxc's compile-time integers are 64-bit.
    if (!(r >= -9223372036854775808.0 && r < 9223372036854775808.0))
      return error(loc, fmt::format(FMT_STRING("{}({}) does not fit a 64-bit integer"), name, v));
    return Value::number((int64_t)r, loc);
  }
  return error(loc, fmt::format(FMT_STRING("undefined function {} (there is no such import)"), qual));
}

Result<Value> Tracer::constants(const std::string &name, std::vector<Value> &args, const Loc &loc, const std::string &qual) {
  // Nx.Constants.NAME() and NAME(type, opts \\ []); opts only choose a backend.
  static const std::set<std::string> floatOnly = {"nan", "infinity", "neg_infinity", "pi", "e", "euler_gamma",
                                                  "smallest_positive_normal", "epsilon"};
  static const std::set<std::string> typed = {"max_finite", "min_finite", "max", "min"};
  if (!floatOnly.count(name) && !typed.count(name)) {
    if (name == "i") return error(loc, "Nx.Constants.i: complex types are not supported by nxc");
    return error(loc, fmt::format(FMT_STRING("undefined function {}"), qual));
  }
  if (args.size() > 2 || (args.empty() && typed.count(name)))
    return error(loc, fmt::format(FMT_STRING("undefined function {}"), qual));
  const double pi = M_PI, e = M_E, gamma = 0.57721566490153286;
  // pi/0 and e/0 are plain numbers: they take the surrounding precision.
  if (args.empty() && (name == "pi" || name == "e")) return Value::real(name == "pi" ? pi : e, loc);
  ElemType t = ElemType::f32();
  if (!args.empty()) { NXC_TRY(tt, parseType(args[0])); t = tt; }
  if (floatOnly.count(name) && !t.isFloat())
    return error(args[0].loc.valid() ? args[0].loc : loc,
                 fmt::format(FMT_STRING("Nx.Constants.{} expects a floating-point type, got {}"), name, t.name()));
  if (t.isInteger()) {
    bool uns = t.kind == TypeKind::U, hi = name == "max" || name == "max_finite";
    int64_t v;
    if (t.bits == 64) v = hi ? (uns ? -1 : INT64_MAX) : (uns ? 0 : INT64_MIN);
    else v = hi ? (uns ? (int64_t(1) << t.bits) - 1 : (int64_t(1) << (t.bits - 1)) - 1)
                : (uns ? 0 : -(int64_t(1) << (t.bits - 1)));
    return Value::tensor(constant(t, {}, {}, {v}, loc), loc);
  }
  bool bf = t.kind == TypeKind::BF;
  double maxFinite = t.bits == 64 ? 1.7976931348623157e308 : t.bits == 16 && !bf ? 65504.0
                     : bf ? 3.3895313892515355e38 : 3.4028234663852886e38;
  double smallest = t.bits == 64 ? 2.2250738585072014e-308 : t.bits == 16 && !bf ? 6.103515625e-05 : 1.1754943508222875e-38;
  double eps = t.bits == 64 ? 2.220446049250313e-16 : t.bits == 16 && !bf ? 0.0009765625 : bf ? 0.0078125
                                                                                       : 1.1920928955078125e-07;
  double v = name == "nan" ? NAN : name == "infinity" || name == "max" ? INFINITY
             : name == "neg_infinity" || name == "min" ? -INFINITY : name == "max_finite" ? maxFinite
             : name == "min_finite" ? -maxFinite : name == "smallest_positive_normal" ? smallest
             : name == "epsilon" ? eps : name == "pi" ? pi : name == "e" ? e : gamma;
  return Value::tensor(constant(t, {}, {v}, {}, loc), loc);
}

} // namespace nxc::sema

namespace nxc::sema {

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
    std::string key = spec.keys[k].empty() ? (spec.elems[k].kind == Value::Atom ? spec.elems[k].atom : "") : spec.keys[k];
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

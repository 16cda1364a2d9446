//===- Sema.cpp - tracing a defn into a typed graph -----------------------===//
//
// An evaluator over the AST. Values are compile-time numbers, atoms, tuples
// and keyword lists, or tensors (graph nodes). Nx functions are implemented by
// `Tracer::callNx`: each checks its arguments and options like Nx does, infers
// the output type and shape, and appends explicit nodes to the graph.
//
//===----------------------------------------------------------------------===//
#include "nxc/Sema/Sema.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <map>
#include <set>

namespace nxc {
namespace {

using ast::Expr;
using ast::ExprKind;

/// A value during tracing.
struct Value {
  enum Kind { Int, Float, Atom, Tensor, Tuple, List } kind = Int;
  int64_t i = 0;
  double f = 0;
  std::string atom;
  int node = -1;
  std::vector<Value> elems;
  std::vector<std::string> keys; ///< List: key of each element ("" if not a keyword pair)
  std::vector<Loc> keyLocs;      ///< List: where each key is written
  Loc loc;

  bool isNumber() const { return kind == Int || kind == Float || (kind == Atom && (atom == "true" || atom == "false")); }
  double asDouble() const { return kind == Float ? f : (double)asInt(); }
  int64_t asInt() const { return kind == Atom ? (atom == "true" ? 1 : 0) : kind == Float ? (int64_t)f : i; }
  bool isKeywordList() const {
    if (kind != List || elems.empty()) return false;
    for (auto &k : keys) if (k.empty()) return false;
    return true;
  }
  static Value number(int64_t v, Loc l) { Value x; x.kind = Int; x.i = v; x.loc = std::move(l); return x; }
  static Value real(double v, Loc l) { Value x; x.kind = Float; x.f = v; x.loc = std::move(l); return x; }
  static Value tensor(int n, Loc l) { Value x; x.kind = Tensor; x.node = n; x.loc = std::move(l); return x; }
};

std::string describeValue(const Value &v) {
  switch (v.kind) {
  case Value::Int: return "the number " + std::to_string(v.i);
  case Value::Float: return "a float number";
  case Value::Atom: return "the atom :" + v.atom;
  case Value::Tensor: return "a tensor";
  case Value::Tuple: return "a tuple of " + std::to_string(v.elems.size()) + " elements";
  case Value::List: return "a list";
  }
  return "a value";
}

using Env = std::map<std::string, Value>;

enum class BinaryRule { Arith, Float, IntOnly, Compare };

struct NxFn;

class Tracer {
public:
  explicit Tracer(const ast::File &file) : file_(file) {}

  Result<Graph> run(const Signature &sig) {
    NXC_TRY(target, findEntry(sig));
    const ast::Module *mod = target.first;
    const ast::Function *fn = target.second;
    module_ = mod;
    g_.function = fn->name;
    Env env;
    std::set<std::string> bound;
    for (size_t a = 0; a < fn->params.size(); ++a) {
      Value v;
      if (a < sig.args.size()) {
        std::vector<std::string> names;
        collectNames(*fn->params[a], names);
        size_t nameIdx = 0;
        v = makeParams(sig.args[a], names, nameIdx);
      } else {
        NXC_TRY(d, eval(*fn->defaults[a], env));
        v = d;
      }
      NXC_CHECK(bindPattern(*fn->params[a], v, env, &bound));
    }
    stack_.push_back(fn);
    NXC_TRY(result, eval(*fn->body, env));
    stack_.pop_back();
    NXC_TRY(tree, flattenResult(result, fn->loc));
    g_.resultTree = tree;
    return std::move(g_);
  }

private:
  const ast::File &file_;
  const ast::Module *module_ = nullptr;
  Graph g_;
  std::vector<const ast::Function *> stack_;
  std::set<std::string> evaluatingAttributes_;

  //===--------------------------------------------------------------------===//
  // Entry, parameters and results
  //===--------------------------------------------------------------------===//

  static size_t requiredArity(const ast::Function &f) {
    size_t n = 0;
    for (auto &d : f.defaults) if (!d) ++n;
    return n;
  }

  static const ast::Function *findFunction(const ast::Module &m, const std::string &name, size_t arity) {
    for (auto &f : m.functions)
      if (f.name == name && arity >= requiredArity(f) && arity <= f.params.size()) return &f;
    return nullptr;
  }

  Result<std::pair<const ast::Module *, const ast::Function *>> findEntry(const Signature &sig) {
    std::vector<std::pair<const ast::Module *, const ast::Function *>> found;
    std::string known;
    for (auto &m : file_.modules) {
      if (!sig.module.empty() && m.name != sig.module) continue;
      for (auto &f : m.functions) {
        if (f.name == sig.function && sig.args.size() >= requiredArity(f) && sig.args.size() <= f.params.size())
          found.push_back({&m, &f});
        if (f.kind == "defn" || f.kind == "def")
          known += (known.empty() ? "" : ", ") + f.name + "/" + std::to_string(f.params.size());
      }
    }
    std::string qual = (sig.module.empty() ? "" : sig.module + ".") + sig.function + "/" + std::to_string(sig.args.size());
    if (found.empty()) {
      if (!sig.module.empty()) {
        bool exists = false;
        for (auto &m : file_.modules) exists |= m.name == sig.module;
        if (!exists) return error(sig.loc, "module " + sig.module + " is not defined in " + file_.source->name);
      }
      return error(sig.loc, "undefined function " + qual + " in " + file_.source->name +
                                (known.empty() ? "" : " (it defines " + known + ")"));
    }
    if (found.size() > 1)
      return error(sig.loc, "function " + qual + " is defined in several modules; qualify it, as in " +
                                found[0].first->name + "." + sig.function + "(...)");
    if (found[0].second->kind == "defnp" || found[0].second->kind == "defp")
      return error(sig.loc, qual + " is private (" + found[0].second->kind + "); only defn and def can be compiled as entry points");
    return found[0];
  }

  static void collectNames(const Expr &p, std::vector<std::string> &out) {
    if (p.kind == ExprKind::Var) out.push_back(p.name);
    else if (p.kind == ExprKind::Tuple) for (auto &c : p.children) collectNames(*c, out);
    else if (p.kind == ExprKind::Match) {
      // `{a, b} = params`: prefer the tuple side's leaf names.
      const Expr &l = *p.children[0], &r = *p.children[1];
      collectNames(l.kind == ExprKind::Tuple ? l : r, out);
    }
  }

  Value makeParams(const Template &t, const std::vector<std::string> &names, size_t &nameIdx) {
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
    Node n;
    n.op = "parameter";
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

  Result<ResultTree> flattenResult(const Value &v, const Loc &loc) {
    ResultTree t;
    if (v.kind == Value::Tuple) {
      t.isTuple = true;
      for (auto &e : v.elems) {
        NXC_TRY(sub, flattenResult(e, loc));
        t.elems.push_back(sub);
      }
      return t;
    }
    NXC_TRY(node, toTensor(v, v.loc.valid() ? v.loc : loc));
    t.node = node;
    g_.results.push_back(node);
    return t;
  }

  //===--------------------------------------------------------------------===//
  // Patterns and environment
  //===--------------------------------------------------------------------===//

  Status bindPattern(const Expr &p, const Value &v, Env &env, std::set<std::string> *params) {
    switch (p.kind) {
    case ExprKind::Var:
      if (p.name == "_") return okStatus();
      if (params) {
        if (params->count(p.name))
          return error(p.loc, "the variable \"" + p.name + "\" is bound multiple times in the same pattern");
        params->insert(p.name);
      }
      env[p.name] = v;
      return okStatus();
    case ExprKind::Tuple:
      if (v.kind != Value::Tuple)
        return error(p.loc, "cannot match a tuple pattern against " + describeValue(v));
      if (v.elems.size() != p.children.size())
        return error(p.loc, "cannot match a tuple of " + std::to_string(p.children.size()) +
                                " elements against a tuple of " + std::to_string(v.elems.size()) + " elements");
      for (size_t i = 0; i < p.children.size(); ++i) NXC_CHECK(bindPattern(*p.children[i], v.elems[i], env, params));
      return okStatus();
    case ExprKind::Match:
      NXC_CHECK(bindPattern(*p.children[0], v, env, params));
      return bindPattern(*p.children[1], v, env, params);
    default:
      return error(p.loc, "only variables and tuples are allowed as patterns in defn");
    }
  }


  //===--------------------------------------------------------------------===//
  // Expressions
  //===--------------------------------------------------------------------===//

  Result<Value> eval(const Expr &e, Env &env) {
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
    case ExprKind::Var: {
      if (!e.name.empty() && e.name[0] == '@') return attribute(e);
      if (!e.name.empty() && e.name[0] == '&') return error(e.loc, "captures (&1) are only allowed inside '&(...)', which nxc does not support yet");
      auto it = env.find(e.name);
      if (it == env.end()) {
        if (e.name == "_") return error(e.loc, "invalid use of _: it can only be used in patterns");
        return error(e.loc, "undefined variable \"" + e.name + "\"");
      }
      Value v = it->second;
      v.loc = e.loc;
      return v;
    }
    case ExprKind::Tuple:
    case ExprKind::List: {
      Value v;
      v.kind = e.kind == ExprKind::Tuple ? Value::Tuple : Value::List;
      v.loc = e.loc;
      for (auto &c : e.children) {
        if (c->kind == ExprKind::Pair) {
          NXC_TRY(x, eval(*c->children[0], env));
          v.elems.push_back(x);
          v.keys.push_back(c->name);
          v.keyLocs.push_back(c->loc);
        } else {
          NXC_TRY(x, eval(*c, env));
          v.elems.push_back(x);
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
    }
    return error(e.loc, "unsupported expression");
  }

  Result<Value> attribute(const Expr &e) {
    std::string name = e.name.substr(1);
    for (auto &a : module_->attributes)
      if (a.name == name) {
        if (evaluatingAttributes_.count(name)) return error(e.loc, "module attribute @" + name + " refers to itself");
        evaluatingAttributes_.insert(name);
        Env empty;
        auto value = eval(*a.value, empty);
        evaluatingAttributes_.erase(name);
        NXC_TRY(v, std::move(value));
        if (v.kind == Value::Atom && !v.isNumber())
          return error(e.loc, "module attribute @" + name + " is not a number or tensor");
        v.loc = e.loc;
        return v;
      }
    return error(e.loc, "undefined module attribute @" + name + " in " + module_->name);
  }

  Result<Value> unary(const Expr &e, Env &env) {
    NXC_TRY(x, eval(*e.children[0], env));
    if (e.name == "+") return x;
    if (e.name == "-") {
      if (x.kind == Value::Int) {
        if (x.i == INT64_MIN) return error(e.loc, "integer overflow in a compile-time computation");
        return Value::number(-x.i, e.loc);
      }
      if (x.kind == Value::Float) return Value::real(-x.f, e.loc);
      return callNx("negate", {x}, e.loc);
    }
    if (e.name == "not" || e.name == "!") return callNx("logical_not", {x}, e.loc);
    if (e.name == "&") return error(e.loc, "function captures (&) are not supported yet by nxc");
    return error(e.loc, "the operator '" + e.name + "' is not allowed in defn");
  }

  Result<Value> binaryExpr(const Expr &e, Env &env) {
    static const std::map<std::string, std::string> ops = {
        {"+", "add"},         {"-", "subtract"},      {"*", "multiply"},    {"/", "divide"},
        {"**", "pow"},        {"==", "equal"},        {"!=", "not_equal"},  {"<", "less"},
        {">", "greater"},     {"<=", "less_equal"},   {">=", "greater_equal"}, {"and", "logical_and"},
        {"or", "logical_or"}, {"&&", "logical_and"},  {"||", "logical_or"}, {"&&&", "bitwise_and"},
        {"|||", "bitwise_or"}, {"<<<", "left_shift"}, {">>>", "right_shift"}};
    auto it = ops.find(e.name);
    if (it == ops.end()) {
      if (e.name == ".." || e.name == "..//") return error(e.loc, "ranges are not supported yet by nxc");
      return error(e.loc, "the operator '" + e.name + "' is not allowed in defn");
    }
    NXC_TRY(a, eval(*e.children[0], env));
    NXC_TRY(b, eval(*e.children[1], env));
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
        return Value::real(std::pow(a.asDouble(), b.asDouble()), e.loc);
      }
    }
    // Bitwise operators on two integers: Elixir's Bitwise computes them.
    if (a.kind == Value::Int && b.kind == Value::Int &&
        (e.name == "&&&" || e.name == "|||" || e.name == "<<<" || e.name == ">>>")) {
      if (e.name == "&&&") return Value::number(a.i & b.i, e.loc);
      if (e.name == "|||") return Value::number(a.i | b.i, e.loc);
      if (b.i < 0 || b.i > 63) return error(e.loc, "shift amount " + std::to_string(b.i) + " is out of range");
      if (e.name == ">>>") return Value::number(a.i >> b.i, e.loc);
      if (a.i != 0 && (b.i >= 63 || (a.i > (INT64_MAX >> b.i)) || (a.i < (INT64_MIN >> b.i))))
        return error(e.loc, "integer overflow in a compile-time computation");
      return Value::number((int64_t)((uint64_t)a.i << b.i), e.loc);
    }
    return callNx(it->second, {a, b}, e.loc);
  }

  //===--------------------------------------------------------------------===//
  // Calls
  //===--------------------------------------------------------------------===//

  Result<Value> call(const Expr &e, Env &env) {
    std::vector<Value> args;
    for (auto &c : e.children) {
      NXC_TRY(v, eval(*c, env));
      args.push_back(v);
    }
    std::string qual = (e.module.empty() ? "" : e.module + ".") + e.name + "/" + std::to_string(args.size());
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
              if (f->kind == "defn" || f->kind == "def") {
                if (imported && from != &m)
                  return error(e.loc, "function " + qual + " is imported from both " + from->name + " and " + m.name +
                                          "; call it as " + from->name + "." + e.name + "(...) or " + m.name + "." +
                                          e.name + "(...)");
                from = &m;
                imported = f;
              }
      if (imported) return inlineCall(*imported, *from, args, e.loc);
      return kernel(e.name, args, e.loc, qual);
    }
    if (e.module == "Nx") return callNx(e.name, args, e.loc);
    if (e.module == "Nx.Defn.Kernel") return kernel(e.name, args, e.loc, qual);
    if (e.module == "Nx.Constants") return constants(e.name, args, e.loc, qual);
    if (e.module == "Access") return error(e.loc, "access syntax (t[...]) is not supported yet by nxc");
    for (auto &m : file_.modules)
      if (m.name == e.module) {
        const ast::Function *f = findFunction(m, e.name, args.size());
        if (!f) return error(e.loc, "undefined function " + qual + " (module " + e.module + " has no such defn)");
        if (f->kind == "defnp" || f->kind == "defp")
          return error(e.loc, "function " + qual + " is private to " + e.module);
        const ast::Module *saved = module_;
        auto r = inlineCall(*f, m, args, e.loc);
        module_ = saved;
        return r;
      }
    if (e.module == "IO" || e.module == "Enum" || e.module == "Kernel" || e.module == "String" || e.module == "List")
      return error(e.loc, "cannot invoke " + qual + " inside defn because it was not defined with defn" +
                              (e.module == "IO" ? "; use print_value/print_expr instead" : ""));
    if (e.module.rfind("Nx.", 0) == 0) return error(e.loc, qual + " is not supported yet by nxc");
    return error(e.loc, "undefined function " + qual + " (module " + e.module + " is not defined in this file)");
  }

  Result<Value> inlineCall(const ast::Function &f, const ast::Module &m, std::vector<Value> args, const Loc &loc) {
    for (auto *active : stack_)
      if (active == &f) return error(loc, "recursive call to " + f.name + "/" + std::to_string(f.params.size()) + ": defn does not support recursion");
    if (stack_.size() > 200) return error(loc, "calls nested too deeply");
    const ast::Module *saved = module_;
    module_ = &m;
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

  Result<Value> kernel(const std::string &name, std::vector<Value> &args, const Loc &loc, const std::string &qual) {
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
        return error(loc, "bad argument in arithmetic expression: " + name + "/2 expects integers");
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
        if (args[0].kind != Value::Tuple) return error(loc, "elem/2 expects a tuple, got " + describeValue(args[0]));
        if (args[1].kind != Value::Int) return error(args[1].loc, "elem/2 expects an integer index");
        if (args[1].i < 0 || args[1].i >= (int64_t)args[0].elems.size())
          return error(args[1].loc, "index " + std::to_string(args[1].i) + " is out of range for a tuple of " +
                                        std::to_string(args[0].elems.size()) + " elements");
        return args[0].elems[args[1].i];
      }
    }
    if (args.size() == 1 && (name == "stop_grad" || name == "print_expr" || name == "print_value")) return args[0];
    return error(loc, "undefined function " + qual + " (there is no such import)");
  }

  Result<Value> constants(const std::string &name, std::vector<Value> &args, const Loc &loc, const std::string &qual) {
    if (!args.empty() && !(args.size() == 1 && args[0].isKeywordList()))
      return error(loc, "undefined function " + qual);
    double v;
    if (name == "pi" || name == "e") {
      // Plain floats (they take the precision of the surrounding operation),
      // unless a type is asked for.
      v = name == "pi" ? M_PI : M_E;
      if (args.empty()) return Value::real(v, loc);
    } else if (name == "nan") v = NAN;
    else if (name == "infinity") v = INFINITY;
    else if (name == "neg_infinity") v = -INFINITY;
    else return error(loc, qual + " is not supported yet by nxc");
    ElemType t = ElemType::f32();
    if (!args.empty()) {
      NXC_TRY(opts, options(args[0], {"type"}, "Nx.Constants." + name));
      if (opts.count("type")) { NXC_TRY(tt, parseType(opts["type"])); t = tt; }
    }
    if (!t.isFloat()) return error(loc, "Nx.Constants." + name + " needs a float type");
    return Value::tensor(constant(t, {}, {v}, {}, loc), loc);
  }

  //===--------------------------------------------------------------------===//
  // Graph construction helpers
  //===--------------------------------------------------------------------===//

  int constant(ElemType t, Shape shape, std::vector<double> fv, std::vector<int64_t> iv, const Loc &loc) {
    Node n;
    n.op = "constant";
    n.type = TensorType{t, std::move(shape), {}};
    n.fvalues = std::move(fv);
    n.ivalues = std::move(iv);
    n.loc = loc;
    return g_.add(n);
  }

  /// A number as a scalar constant of type t.
  int numberConstant(const Value &v, ElemType t) {
    if (t.isFloat()) return constant(t, {}, {v.asDouble()}, {}, v.loc);
    return constant(t, {}, {}, {v.asInt()}, v.loc);
  }

  Result<int> toTensor(const Value &v, const Loc &loc) {
    if (v.kind == Value::Tensor) return v.node;
    if (v.kind == Value::Int) return numberConstant(v, ElemType::s32());
    if (v.kind == Value::Float) return numberConstant(v, ElemType::f32());
    if (v.isNumber()) return numberConstant(v, ElemType::u8());
    return error(loc, "expected a tensor or a number, got " + describeValue(v));
  }

  int unaryNode(const std::string &op, int x, ElemType out, const Loc &loc) {
    Node n;
    n.op = op;
    n.operands = {x};
    n.type = TensorType{out, g_.typeOf(x).shape, {}};
    n.loc = loc;
    return g_.add(n);
  }

  int cast(int x, ElemType t, const Loc &loc) {
    if (g_.typeOf(x).elem == t) return x;
    return unaryNode("as_type", x, t, loc);
  }

  int broadcastTo(int x, const Shape &shape, const Loc &loc) {
    const Shape &s = g_.typeOf(x).shape;
    if (s == shape) return x;
    Node n;
    n.op = "broadcast";
    n.operands = {x};
    n.type = TensorType{g_.typeOf(x).elem, shape, {}};
    for (size_t i = 0; i < s.size(); ++i) n.axes.push_back((int64_t)(shape.size() - s.size() + i));
    n.loc = loc;
    return g_.add(n);
  }

  int reshape(int x, const Shape &shape, const Loc &loc) {
    if (g_.typeOf(x).shape == shape) return x;
    Node n;
    n.op = "reshape";
    n.operands = {x};
    n.type = TensorType{g_.typeOf(x).elem, shape, {}};
    n.loc = loc;
    return g_.add(n);
  }

  Result<Shape> broadcastShapes(const Shape &a, const Shape &b, const std::string &fn, const Loc &loc) {
    size_t r = std::max(a.size(), b.size());
    Shape out(r);
    for (size_t i = 0; i < r; ++i) {
      int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
      int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
      if (da != db && da != 1 && db != 1) {
        return error(loc, "cannot broadcast tensors of shapes " + shapeString(a) + " and " + shapeString(b) +
                              " in Nx." + fn + ": dimension " + std::to_string(i) + " is " + std::to_string(da) +
                              " on the left and " + std::to_string(db) + " on the right");
      }
      out[i] = da == 1 ? db : da;
    }
    return out;
  }

  ElemType typeOfValue(const Value &v) {
    if (v.kind == Value::Tensor) return g_.typeOf(v.node).elem;
    if (v.kind == Value::Float) return ElemType::f32();
    if (v.kind == Value::Atom) return ElemType::u8();
    return ElemType::s32();
  }

  /// Nx.Shared.binary_type/2.
  ElemType binaryType(const Value &a, const Value &b) {
    bool an = a.kind != Value::Tensor, bn = b.kind != Value::Tensor;
    if (an && bn) return (a.kind == Value::Float || b.kind == Value::Float) ? ElemType::f32() : typeOfValue(a.kind == Value::Atom ? b : a);
    if (an) return mergeNumber(typeOfValue(b), a);
    if (bn) return mergeNumber(typeOfValue(a), b);
    return mergeTypes(typeOfValue(a), typeOfValue(b));
  }
  static ElemType mergeNumber(ElemType t, const Value &n) {
    return n.kind == Value::Float ? mergeFloat(t) : mergeInteger(t, n.asInt());
  }

  /// Converts an operand to type t and broadcasts it to shape.
  int operand(const Value &v, ElemType t, const Shape &shape, const Loc &loc) {
    int x = v.kind == Value::Tensor ? cast(v.node, t, loc) : numberConstant(v, t);
    return broadcastTo(x, shape, loc);
  }

  Shape shapeOfValue(const Value &v) { return v.kind == Value::Tensor ? g_.typeOf(v.node).shape : Shape{}; }

  Result<Value> binary(const std::string &op, const Value &a, const Value &b, BinaryRule rule, const Loc &loc) {
    for (const Value *v : {&a, &b})
      if (v->kind != Value::Tensor && !v->isNumber())
        return error(v->loc.valid() ? v->loc : loc, "Nx." + op + " expects tensors or numbers, got " + describeValue(*v));
    ElemType t = binaryType(a, b);
    if (rule == BinaryRule::IntOnly && t.isFloat()) {
      if (op == "quotient") return error(loc, "quotient expects integer tensors, got: " + t.name());
      return error(loc, "bitwise operators expect integer tensors as inputs and outputs an integer tensor, got: " + t.name());
    }
    if (rule == BinaryRule::Float) t = toFloating(t);
    NXC_TRY(shape, broadcastShapes(shapeOfValue(a), shapeOfValue(b), op, loc));
    Node n;
    n.op = op;
    n.operands = {operand(a, t, shape, loc), operand(b, t, shape, loc)};
    n.type = TensorType{rule == BinaryRule::Compare ? ElemType::u8() : t, shape, {}};
    n.loc = loc;
    return Value::tensor(g_.add(n), loc);
  }

  //===--------------------------------------------------------------------===//
  // Options, axes, types
  //===--------------------------------------------------------------------===//

  Result<std::map<std::string, Value>> options(const Value &v, const std::vector<std::string> &allowed,
                                               const std::string &fn) {
    std::map<std::string, Value> out;
    if (v.kind == Value::List && v.elems.empty()) return out;
    if (!v.isKeywordList()) return error(v.loc, fn + " expects a keyword list of options, got " + describeValue(v));
    std::string allowedStr;
    for (auto &a : allowed) allowedStr += (allowedStr.empty() ? ":" : ", :") + a;
    for (size_t i = 0; i < v.elems.size(); ++i) {
      Loc at = i < v.keyLocs.size() && v.keyLocs[i].valid() ? v.keyLocs[i] : v.loc;
      if (std::find(allowed.begin(), allowed.end(), v.keys[i]) == allowed.end())
        return error(at, "unknown key :" + v.keys[i] + " in the options of " + fn + ", expected one of [" + allowedStr + "]");
      if (out.count(v.keys[i])) return error(at, "duplicate key :" + v.keys[i] + " in the options of " + fn);
      out[v.keys[i]] = v.elems[i];
    }
    return out;
  }

  Result<bool> boolOption(const Value &v, const std::string &key) {
    if (v.kind == Value::Atom && (v.atom == "true" || v.atom == "false")) return v.atom == "true";
    return error(v.loc, "option " + key + ": expects true or false, got " + describeValue(v));
  }

  Result<int64_t> normalizeAxis(const Value &v, int64_t rank, const Loc &loc) {
    if (v.kind == Value::Atom) return error(v.loc.valid() ? v.loc : loc, "named axes (:" + v.atom + ") are not supported yet by nxc; use the axis index");
    if (v.kind != Value::Int) return error(v.loc.valid() ? v.loc : loc, "expected an integer axis, got " + describeValue(v));
    int64_t a = v.i < 0 ? v.i + rank : v.i;
    if (a < 0 || a >= rank)
      return error(v.loc.valid() ? v.loc : loc, "given axis (" + std::to_string(v.i) + ") invalid for shape with rank " + std::to_string(rank));
    return a;
  }

  Result<std::vector<int64_t>> axesOption(const Value &v, int64_t rank, const Loc &loc) {
    if (v.kind != Value::List) return error(v.loc.valid() ? v.loc : loc, "axes: expects a list of integers, got " + describeValue(v));
    std::vector<int64_t> axes;
    for (auto &e : v.elems) {
      NXC_TRY(a, normalizeAxis(e, rank, v.loc));
      if (std::find(axes.begin(), axes.end(), a) != axes.end())
        return error(e.loc.valid() ? e.loc : v.loc, "axes must be unique, axis " + std::to_string(a) + " is repeated");
      axes.push_back(a);
    }
    return axes;
  }

  Result<ElemType> parseType(const Value &v) {
    if (v.kind == Value::Atom) {
      if (auto t = ElemType::parse(v.atom)) return *t;
    } else if (v.kind == Value::Tuple && v.elems.size() == 2 && v.elems[0].kind == Value::Atom && v.elems[1].kind == Value::Int) {
      if (auto t = ElemType::parse(v.elems[0].atom + std::to_string(v.elems[1].i))) return *t;
    }
    return error(v.loc, "invalid type, expected one of :s8, :s16, :s32, :s64, :u8, :u16, :u32, :u64, :f16, :bf16, :f32, :f64 (or {:f, 32})");
  }

  Result<Shape> shapeArg(const Value &v, const std::string &fn) {
    if (v.kind == Value::Tensor) return g_.typeOf(v.node).shape;
    if (v.kind == Value::Tuple) {
      Shape s;
      for (auto &e : v.elems) {
        if (e.kind != Value::Int || e.i < 0) return error(e.loc.valid() ? e.loc : v.loc, fn + " expects a shape of non-negative integers");
        s.push_back(e.i);
      }
      return s;
    }
    return error(v.loc, fn + " expects a shape (a tuple such as {2, 3}) or a tensor, got " + describeValue(v));
  }

  //===--------------------------------------------------------------------===//
  // Nx functions
  //===--------------------------------------------------------------------===//

  /// Splits trailing keyword options off the positional arguments.
  static Value takeOptions(std::vector<Value> &args, size_t minPositional) {
    Value opts;
    opts.kind = Value::List;
    if (args.size() > minPositional && (args.back().isKeywordList() || (args.back().kind == Value::List && args.back().elems.empty()))) {
      opts = args.back();
      args.pop_back();
    }
    return opts;
  }

  Status arity(const std::string &fn, const std::vector<Value> &args, size_t lo, size_t hi, const Loc &loc) {
    if (args.size() < lo || args.size() > hi)
      return error(loc, "wrong number of arguments to Nx." + fn + ": expected " +
                            (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
                            ", got " + std::to_string(args.size()));
    return okStatus();
  }

  Result<int> tensorArg(const std::string &fn, const Value &v, const Loc &loc) {
    if (v.kind == Value::Tensor || v.isNumber()) return toTensor(v, loc);
    return error(v.loc.valid() ? v.loc : loc, "Nx." + fn + " expects a tensor, got " + describeValue(v));
  }

  Result<Value> callNx(const std::string &fn, std::vector<Value> args, const Loc &loc) {
    static const std::set<std::string> forbidden = {
        "backend_copy", "backend_deallocate", "backend_transfer", "to_list", "to_binary", "to_number",
        "to_flat_list", "to_heatmap", "to_batched", "load_numpy", "load_numpy_archive!", "compatible?",
        "default_backend", "serialize", "deserialize", "from_pointer", "to_pointer"};
    if (forbidden.count(fn))
      return error(loc, "Nx." + fn + "/" + std::to_string(args.size()) + " is not allowed inside defn");

    static const std::set<std::string> floatUnary = {
        "exp", "expm1", "log", "log1p", "sigmoid", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos",
        "atan", "asinh", "acosh", "atanh", "sqrt", "rsqrt", "cbrt", "erf", "erfc"};
    static const std::set<std::string> sameUnary = {"negate", "abs", "sign", "floor", "ceil", "round", "bitwise_not"};
    static const std::set<std::string> predUnary = {"is_nan", "is_infinity", "logical_not"};
    static const std::map<std::string, BinaryRule> binaries = {
        {"add", BinaryRule::Arith},        {"subtract", BinaryRule::Arith},     {"multiply", BinaryRule::Arith},
        {"pow", BinaryRule::Arith},        {"remainder", BinaryRule::Arith},    {"max", BinaryRule::Arith},
        {"min", BinaryRule::Arith},        {"divide", BinaryRule::Float},       {"atan2", BinaryRule::Float},
        {"quotient", BinaryRule::IntOnly}, {"bitwise_and", BinaryRule::IntOnly}, {"bitwise_or", BinaryRule::IntOnly},
        {"bitwise_xor", BinaryRule::IntOnly}, {"left_shift", BinaryRule::IntOnly}, {"right_shift", BinaryRule::IntOnly},
        {"equal", BinaryRule::Compare},    {"not_equal", BinaryRule::Compare},  {"less", BinaryRule::Compare},
        {"less_equal", BinaryRule::Compare}, {"greater", BinaryRule::Compare},  {"greater_equal", BinaryRule::Compare},
        {"logical_and", BinaryRule::Compare}, {"logical_or", BinaryRule::Compare}, {"logical_xor", BinaryRule::Compare}};

    if (floatUnary.count(fn) || sameUnary.count(fn) || predUnary.count(fn)) {
      NXC_CHECK(arity(fn, args, 1, 1, loc));
      NXC_TRY(x, tensorArg(fn, args[0], loc));
      ElemType in = g_.typeOf(x).elem;
      if (floatUnary.count(fn)) {
        ElemType out = toFloating(in);
        return Value::tensor(unaryNode(fn, cast(x, out, loc), out, loc), loc);
      }
      if (predUnary.count(fn)) return Value::tensor(unaryNode(fn, x, ElemType::u8(), loc), loc);
      if (fn == "bitwise_not" && in.isFloat())
        return error(loc, "bitwise operators expect integer tensors as inputs and outputs an integer tensor, got: " + in.name());
      if ((fn == "floor" || fn == "ceil" || fn == "round") && in.isInteger()) return Value::tensor(x, loc);
      return Value::tensor(unaryNode(fn, x, in, loc), loc);
    }
    if (auto it = binaries.find(fn); it != binaries.end()) {
      NXC_CHECK(arity(fn, args, 2, 2, loc));
      return binary(fn, args[0], args[1], it->second, loc);
    }
    if (fn == "sum" || fn == "product" || fn == "reduce_max" || fn == "reduce_min" || fn == "all" || fn == "any" || fn == "mean")
      return reduce(fn, args, loc);
    if (fn == "dot") return dot(args, loc);
    if (fn == "as_type") {
      NXC_CHECK(arity(fn, args, 2, 2, loc));
      NXC_TRY(x, tensorArg(fn, args[0], loc));
      NXC_TRY(t, parseType(args[1]));
      return Value::tensor(cast(x, t, loc), loc);
    }
    if (fn == "tensor") return tensorLiteral(args, loc);
    if (fn == "broadcast") {
      Value opts = takeOptions(args, 2);
      NXC_CHECK(arity(fn, args, 2, 2, loc));
      NXC_TRY(o, options(opts, {"axes", "names"}, "Nx.broadcast"));
      NXC_TRY(x, tensorArg(fn, args[0], loc));
      NXC_TRY(shape, shapeArg(args[1], "Nx.broadcast"));
      const Shape &in = g_.typeOf(x).shape;
      std::vector<int64_t> axes;
      if (o.count("axes")) {
        NXC_TRY(ax, axesOption(o["axes"], (int64_t)shape.size(), loc));
        axes = ax;
        if (axes.size() != in.size())
          return error(loc, "Nx.broadcast: axes " + std::to_string(axes.size()) + " must have the same rank as the tensor " + shapeString(in));
        for (size_t i = 1; i < axes.size(); ++i)
          if (axes[i] <= axes[i - 1]) return error(loc, "Nx.broadcast: axes must be in increasing order");
      } else {
        if (in.size() > shape.size())
          return error(loc, "cannot broadcast tensor of dimensions " + shapeString(in) + " to " + shapeString(shape));
        for (size_t i = 0; i < in.size(); ++i) axes.push_back((int64_t)(shape.size() - in.size() + i));
      }
      for (size_t i = 0; i < in.size(); ++i)
        if (in[i] != 1 && in[i] != shape[axes[i]])
          return error(loc, "cannot broadcast tensor of dimensions " + shapeString(in) + " to " + shapeString(shape) +
                                " with axes " + shapeString(axes));
      if (in == shape) return Value::tensor(x, loc);
      Node n;
      n.op = "broadcast";
      n.operands = {x};
      n.type = TensorType{g_.typeOf(x).elem, shape, {}};
      n.axes = axes;
      n.loc = loc;
      return Value::tensor(g_.add(n), loc);
    }
    if (fn == "reshape") {
      Value opts = takeOptions(args, 2);
      NXC_CHECK(arity(fn, args, 2, 2, loc));
      NXC_TRY(o, options(opts, {"names"}, "Nx.reshape"));
      (void)o;
      NXC_TRY(x, tensorArg(fn, args[0], loc));
      Shape shape;
      int autoAt = -1;
      if (args[1].kind == Value::Tuple) {
        for (auto &e : args[1].elems) {
          if (e.kind == Value::Atom && e.atom == "auto") {
            if (autoAt >= 0) return error(e.loc, "Nx.reshape: only one :auto dimension is allowed");
            autoAt = (int)shape.size();
            shape.push_back(1);
          } else if (e.kind == Value::Int && e.i >= 0) {
            shape.push_back(e.i);
          } else {
            return error(e.loc.valid() ? e.loc : loc, "Nx.reshape expects non-negative integer dimensions or :auto");
          }
        }
      } else {
        NXC_TRY(s, shapeArg(args[1], "Nx.reshape"));
        shape = s;
      }
      int64_t have = g_.typeOf(x).numElements(), want = 1;
      for (auto d : shape) want *= d;
      if (autoAt >= 0) {
        if (want == 0 || have % want) return error(loc, "cannot reshape, current shape " + shapeString(g_.typeOf(x).shape) + " is not compatible with new shape " + shapeString(shape));
        shape[autoAt] = have / want;
        want = have;
      }
      if (want != have)
        return error(loc, "cannot reshape, current shape " + shapeString(g_.typeOf(x).shape) +
                              " is not compatible with new shape " + shapeString(shape));
      return Value::tensor(reshape(x, shape, loc), loc);
    }
    if (fn == "new_axis") {
      NXC_CHECK(arity(fn, args, 2, 3, loc));
      NXC_TRY(x, tensorArg(fn, args[0], loc));
      Shape s = g_.typeOf(x).shape;
      if (args[1].kind != Value::Int) return error(args[1].loc, "Nx.new_axis expects an integer axis");
      int64_t a = args[1].i < 0 ? args[1].i + (int64_t)s.size() + 1 : args[1].i;
      if (a < 0 || a > (int64_t)s.size())
        return error(args[1].loc, "given axis (" + std::to_string(args[1].i) + ") invalid for shape with rank " + std::to_string(s.size() + 1));
      s.insert(s.begin() + a, 1);
      return Value::tensor(reshape(x, s, loc), loc);
    }
    if (fn == "squeeze") {
      Value opts = takeOptions(args, 1);
      NXC_CHECK(arity(fn, args, 1, 1, loc));
      NXC_TRY(o, options(opts, {"axes"}, "Nx.squeeze"));
      NXC_TRY(x, tensorArg(fn, args[0], loc));
      Shape s = g_.typeOf(x).shape, out;
      std::vector<int64_t> axes;
      if (o.count("axes")) {
        NXC_TRY(ax, axesOption(o["axes"], (int64_t)s.size(), loc));
        axes = ax;
        for (auto a : axes)
          if (s[a] != 1) return error(loc, "cannot squeeze dimensions whose sizes are not 1, got " + std::to_string(s[a]) + " for dimension " + std::to_string(a));
      } else {
        for (size_t i = 0; i < s.size(); ++i) if (s[i] == 1) axes.push_back((int64_t)i);
      }
      for (size_t i = 0; i < s.size(); ++i)
        if (std::find(axes.begin(), axes.end(), (int64_t)i) == axes.end()) out.push_back(s[i]);
      return Value::tensor(reshape(x, out, loc), loc);
    }
    if (fn == "transpose") {
      Value opts = takeOptions(args, 1);
      NXC_CHECK(arity(fn, args, 1, 1, loc));
      NXC_TRY(o, options(opts, {"axes"}, "Nx.transpose"));
      NXC_TRY(x, tensorArg(fn, args[0], loc));
      const Shape &s = g_.typeOf(x).shape;
      std::vector<int64_t> perm;
      if (o.count("axes")) {
        NXC_TRY(ax, axesOption(o["axes"], (int64_t)s.size(), loc));
        perm = ax;
        if (perm.size() != s.size())
          return error(loc, "Nx.transpose: axes must be a permutation of all " + std::to_string(s.size()) + " axes, got " + shapeString(perm));
      } else {
        for (size_t i = 0; i < s.size(); ++i) perm.push_back((int64_t)(s.size() - 1 - i));
      }
      bool identity = true;
      Shape out;
      for (size_t i = 0; i < perm.size(); ++i) { out.push_back(s[perm[i]]); identity &= perm[i] == (int64_t)i; }
      if (identity) return Value::tensor(x, loc);
      Node n;
      n.op = "transpose";
      n.operands = {x};
      n.type = TensorType{g_.typeOf(x).elem, out, {}};
      n.axes = perm;
      n.loc = loc;
      return Value::tensor(g_.add(n), loc);
    }
    if (fn == "select") {
      NXC_CHECK(arity(fn, args, 3, 3, loc));
      NXC_TRY(pred, tensorArg(fn, args[0], loc));
      ElemType t = binaryType(args[1], args[2]);
      Shape ps = g_.typeOf(pred).shape;
      Shape shape;
      if (ps.empty()) {
        NXC_TRY(s, broadcastShapes(shapeOfValue(args[1]), shapeOfValue(args[2]), fn, loc));
        shape = s;
      } else {
        shape = ps;
        for (int k = 1; k <= 2; ++k) {
          NXC_TRY(s, broadcastShapes(shapeOfValue(args[k]), ps, fn, loc));
          if (s != ps) return error(loc, "Nx.select: cannot broadcast " + shapeString(shapeOfValue(args[k])) + " to the predicate's shape " + shapeString(ps));
        }
      }
      Node n;
      n.op = "select";
      n.operands = {broadcastTo(pred, shape, loc), operand(args[1], t, shape, loc), operand(args[2], t, shape, loc)};
      n.type = TensorType{t, shape, {}};
      n.loc = loc;
      return Value::tensor(g_.add(n), loc);
    }
    if (fn == "clip") {
      NXC_CHECK(arity(fn, args, 3, 3, loc));
      for (int k = 1; k <= 2; ++k)
        if (args[k].kind == Value::Tensor && !g_.typeOf(args[k].node).shape.empty())
          return error(args[k].loc, "Nx.clip expects min and max to be scalars");
      // Nx.clip turns number bounds into tensors first (s32/f32), then merges types.
      NXC_TRY(minT, toTensor(args[1], loc));
      NXC_TRY(maxT, toTensor(args[2], loc));
      NXC_TRY(lo, binary("max", args[0], Value::tensor(minT, loc), BinaryRule::Arith, loc));
      return binary("min", lo, Value::tensor(maxT, loc), BinaryRule::Arith, loc);
    }
    if (fn == "square") {
      NXC_CHECK(arity(fn, args, 1, 1, loc));
      return binary("multiply", args[0], args[0], BinaryRule::Arith, loc);
    }
    if (fn == "iota") {
      Value opts = takeOptions(args, 1);
      NXC_CHECK(arity(fn, args, 1, 1, loc));
      NXC_TRY(o, options(opts, {"type", "axis", "names"}, "Nx.iota"));
      NXC_TRY(shape, shapeArg(args[0], "Nx.iota"));
      ElemType t = ElemType::s32();
      if (o.count("type")) { NXC_TRY(tt, parseType(o["type"])); t = tt; }
      int64_t n = 1;
      for (auto d : shape)
        if (__builtin_mul_overflow(n, d, &n) || n > (1 << 24))
          return error(loc, "Nx.iota: tensor too large to materialize as a constant (more than 2^24 elements)");
      std::vector<int64_t> idx(n);
      if (o.count("axis")) {
        NXC_TRY(a, normalizeAxis(o["axis"], (int64_t)shape.size(), loc));
        int64_t inner = 1;
        for (size_t d = a + 1; d < shape.size(); ++d) inner *= shape[d];
        for (int64_t k = 0; k < n; ++k) idx[k] = (k / inner) % shape[a];
      } else {
        for (int64_t k = 0; k < n; ++k) idx[k] = k;
      }
      if (t.isFloat()) return Value::tensor(constant(t, shape, std::vector<double>(idx.begin(), idx.end()), {}, loc), loc);
      return Value::tensor(constant(t, shape, {}, idx, loc), loc);
    }
    if (fn == "size" || fn == "rank" || fn == "shape" || fn == "axis_size") {
      NXC_CHECK(arity(fn, args, fn == "axis_size" ? 2 : 1, fn == "axis_size" ? 2 : 1, loc));
      Shape s = shapeOfValue(args[0]);
      if (fn == "rank") return Value::number((int64_t)s.size(), loc);
      if (fn == "size") { int64_t n = 1; for (auto d : s) n *= d; return Value::number(n, loc); }
      if (fn == "axis_size") { NXC_TRY(a, normalizeAxis(args[1], (int64_t)s.size(), loc)); return Value::number(s[a], loc); }
      Value t;
      t.kind = Value::Tuple;
      t.loc = loc;
      for (auto d : s) t.elems.push_back(Value::number(d, loc));
      return t;
    }
    return error(loc, "Nx." + fn + "/" + std::to_string(args.size()) + " is unknown or not supported yet by nxc");
  }

  Result<Value> reduce(const std::string &fn, std::vector<Value> args, const Loc &loc) {
    Value opts = takeOptions(args, 1);
    NXC_CHECK(arity(fn, args, 1, 1, loc));
    NXC_TRY(o, options(opts, {"axes", "keep_axes"}, "Nx." + fn));
    NXC_TRY(x, tensorArg(fn, args[0], loc));
    TensorType in = g_.typeOf(x);
    std::vector<int64_t> axes;
    if (o.count("axes") && !(o["axes"].kind == Value::Atom && o["axes"].atom == "nil")) {
      NXC_TRY(ax, axesOption(o["axes"], in.rank(), loc));
      axes = ax;
    } else {
      for (int64_t i = 0; i < in.rank(); ++i) axes.push_back(i);
    }
    std::sort(axes.begin(), axes.end());
    bool keep = false;
    if (o.count("keep_axes")) { NXC_TRY(k, boolOption(o["keep_axes"], "keep_axes")); keep = k; }
    Shape reduced, kept;
    int64_t count = 1;
    for (int64_t i = 0; i < in.rank(); ++i) {
      bool r = std::find(axes.begin(), axes.end(), i) != axes.end();
      if (r) count *= in.shape[i];
      else reduced.push_back(in.shape[i]);
      kept.push_back(r ? 1 : in.shape[i]);
    }
    std::string op = fn == "mean" ? "sum" : fn;
    ElemType out = (op == "sum" || op == "product") ? toAggregate(in.elem) : (op == "all" || op == "any") ? ElemType::u8() : in.elem;
    int src = (op == "all" || op == "any") ? x : cast(x, out, loc);
    int r;
    if (axes.empty() && (op == "all" || op == "any")) {
      // As Nx: `axes: []` is as_type(t, u8); a scalar is tested against 0.
      if (o.count("axes")) r = cast(x, ElemType::u8(), loc);
      else {
        NXC_TRY(nz, binary("not_equal", Value::tensor(x, loc), Value::number(0, loc), BinaryRule::Compare, loc));
        r = nz.node;
      }
    } else if (axes.empty()) {
      r = src;
    } else {
      Node n;
      n.op = op;
      n.operands = {src};
      n.type = TensorType{out, reduced, {}};
      n.axes = axes;
      n.loc = loc;
      r = g_.add(n);
    }
    if (keep) r = reshape(r, kept, loc);
    if (fn == "mean") return binary("divide", Value::tensor(r, loc), Value::number(count, loc), BinaryRule::Float, loc);
    return Value::tensor(r, loc);
  }

  Result<std::vector<int64_t>> axisList(const Value &v, int64_t rank, const Loc &loc, const std::string &what) {
    if (v.kind != Value::List) return error(v.loc.valid() ? v.loc : loc, "Nx.dot expects a list of " + what + " axes, got " + describeValue(v));
    std::vector<int64_t> out;
    for (auto &e : v.elems) {
      NXC_TRY(a, normalizeAxis(e, rank, v.loc));
      if (std::find(out.begin(), out.end(), a) != out.end()) return error(v.loc, "Nx.dot: repeated axis " + std::to_string(a) + " in " + what + " axes");
      out.push_back(a);
    }
    return out;
  }

  Result<Value> dot(std::vector<Value> args, const Loc &loc) {
    if (args.size() != 2 && args.size() != 4 && args.size() != 6)
      return error(loc, "wrong number of arguments to Nx.dot: expected 2, 4 or 6, got " + std::to_string(args.size()));
    size_t ia = 0, ib = args.size() / 2;
    NXC_TRY(a, tensorArg("dot", args[ia], loc));
    NXC_TRY(b, tensorArg("dot", args[ib], loc));
    Shape sa = g_.typeOf(a).shape, sb = g_.typeOf(b).shape;
    std::vector<int64_t> ca, cb, ba, bb;
    if (args.size() == 2) {
      if (sa.empty() || sb.empty()) return binary("multiply", args[0], args[1], BinaryRule::Arith, loc);
      ca = {(int64_t)sa.size() - 1};
      cb = {sb.size() == 1 ? 0 : (int64_t)sb.size() - 2};
    } else {
      NXC_TRY(x, axisList(args[1], (int64_t)sa.size(), loc, "contraction"));
      NXC_TRY(y, axisList(args[ib + 1], (int64_t)sb.size(), loc, "contraction"));
      ca = x;
      cb = y;
      if (args.size() == 6) {
        NXC_TRY(p, axisList(args[2], (int64_t)sa.size(), loc, "batch"));
        NXC_TRY(q, axisList(args[5], (int64_t)sb.size(), loc, "batch"));
        ba = p;
        bb = q;
        if (ba.size() != bb.size()) return error(loc, "right tensor must be batched if left tensor is batched");
        for (size_t i = 0; i < ba.size(); ++i) {
          if (ba[i] != (int64_t)i) return error(loc, "invalid dot batch axis for the left tensor, batch axes must be successive dimensions starting from 0, got " + shapeString(ba));
          if (bb[i] != (int64_t)i) return error(loc, "invalid dot batch axis for the right tensor, batch axes must be successive dimensions starting from 0, got " + shapeString(bb));
          if (sa[i] != sb[i]) return error(loc, "dot batch dimension " + std::to_string(i) + " does not match: " + std::to_string(sa[i]) + " on the left and " + std::to_string(sb[i]) + " on the right");
          if (std::find(ca.begin(), ca.end(), ba[i]) != ca.end())
            return error(loc, "dot batch axes for left tensor (" + shapeString(ba) + ") cannot be in contract axes (" + shapeString(ca) + ")");
          if (std::find(cb.begin(), cb.end(), bb[i]) != cb.end())
            return error(loc, "dot batch axes for right tensor (" + shapeString(bb) + ") cannot be in contract axes (" + shapeString(cb) + ")");
        }
      }
      if (ca.size() != cb.size())
        return error(loc, "Nx.dot: contraction axes must pair up, got " + std::to_string(ca.size()) + " on the left and " + std::to_string(cb.size()) + " on the right");
    }
    for (size_t i = 0; i < ca.size(); ++i)
      if (sa[ca[i]] != sb[cb[i]])
        return error(loc, "dot/zip expects shapes to be compatible, dimension " + std::to_string(ca[i]) + " of left-side (" +
                              std::to_string(sa[ca[i]]) + ") does not equal dimension " + std::to_string(cb[i]) +
                              " of right-side (" + std::to_string(sb[cb[i]]) + ")");
    Shape out;
    for (auto d : ba) out.push_back(sa[d]);
    for (size_t i = 0; i < sa.size(); ++i)
      if (std::find(ca.begin(), ca.end(), (int64_t)i) == ca.end() && std::find(ba.begin(), ba.end(), (int64_t)i) == ba.end()) out.push_back(sa[i]);
    for (size_t i = 0; i < sb.size(); ++i)
      if (std::find(cb.begin(), cb.end(), (int64_t)i) == cb.end() && std::find(bb.begin(), bb.end(), (int64_t)i) == bb.end()) out.push_back(sb[i]);
    ElemType t = mergeTypes(g_.typeOf(a).elem, g_.typeOf(b).elem);
    Node n;
    n.op = "dot";
    n.operands = {cast(a, t, loc), cast(b, t, loc)};
    n.type = TensorType{t, out, {}};
    n.axes = ca;
    n.axes2 = ba;
    n.axes3 = cb;
    n.axes4 = bb;
    n.loc = loc;
    return Value::tensor(g_.add(n), loc);
  }

  Status flattenLiteral(const Value &v, size_t depth, Shape &shape, std::vector<const Value *> &leaves, const Loc &loc) {
    if (v.kind == Value::List) {
      if (!leaves.empty() && depth >= shape.size())
        return error(v.loc.valid() ? v.loc : loc, "Nx.tensor: lists must be rectangular; found a list where a number was expected");
      if (depth == shape.size()) shape.push_back((int64_t)v.elems.size());
      else if (shape[depth] != (int64_t)v.elems.size())
        return error(v.loc.valid() ? v.loc : loc, "Nx.tensor: lists must be rectangular; expected " + std::to_string(shape[depth]) + " elements at depth " + std::to_string(depth));
      for (auto &e : v.elems) NXC_CHECK(flattenLiteral(e, depth + 1, shape, leaves, loc));
      return okStatus();
    }
    if (depth != shape.size()) return error(v.loc.valid() ? v.loc : loc, "Nx.tensor: lists must be rectangular");
    if (!(v.isNumber() || (v.kind == Value::Atom && (v.atom == "nan" || v.atom == "infinity" || v.atom == "neg_infinity"))))
      return error(v.loc.valid() ? v.loc : loc, "Nx.tensor expects numbers, got " + describeValue(v));
    leaves.push_back(&v);
    return okStatus();
  }

  Result<Value> tensorLiteral(std::vector<Value> args, const Loc &loc) {
    Value opts = takeOptions(args, 1);
    NXC_CHECK(arity("tensor", args, 1, 1, loc));
    NXC_TRY(o, options(opts, {"type", "names", "backend"}, "Nx.tensor"));
    if (args[0].kind == Value::Tensor) return args[0];
    Shape shape;
    std::vector<const Value *> leaves;
    NXC_CHECK(flattenLiteral(args[0], 0, shape, leaves, loc));
    ElemType t = ElemType::s32();
    bool anyFloat = false;
    for (auto *l : leaves) anyFloat |= l->kind == Value::Float || l->kind == Value::Atom && l->atom != "true" && l->atom != "false";
    if (anyFloat) t = ElemType::f32();
    if (o.count("type")) { NXC_TRY(tt, parseType(o["type"])); t = tt; }
    std::vector<double> fv;
    std::vector<int64_t> iv;
    for (auto *l : leaves) {
      double d = l->kind == Value::Atom && l->atom == "nan" ? NAN
                 : l->kind == Value::Atom && l->atom == "infinity" ? INFINITY
                 : l->kind == Value::Atom && l->atom == "neg_infinity" ? -INFINITY
                                                                        : l->asDouble();
      if (t.isFloat()) fv.push_back(d);
      else {
        if (l->kind != Value::Int && !l->isNumber()) return error(l->loc, "Nx.tensor: cannot store a non-finite value in an integer tensor");
        if (l->kind == Value::Float) return error(l->loc, "Nx.tensor: a float cannot be stored in an integer tensor of type " + t.name());
        iv.push_back(l->asInt());
      }
    }
    return Value::tensor(constant(t, shape, fv, iv, loc), loc);
  }
};

} // namespace

Result<Graph> trace(const ast::File &file, const Signature &sig) {
  Tracer t(file);
  return t.run(sig);
}

} // namespace nxc

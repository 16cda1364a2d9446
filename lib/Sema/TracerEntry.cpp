//===- TracerEntry.cpp - a defn's entry point, parameters and results ----===//
//
// Tracing starts here: the entry function found for a --fn (its arity, its
// default arguments), its parameters made from the templates, patterns bound
// to values, and the result flattened into the graph's outputs.
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
      // (`%Nx.Tensor{} = data` takes a tensor.)
      if (pat->kind == ExprKind::Map && pat->name != "Nx.Tensor" && v.kind != Value::Map) {
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
  NXC_TRY(tree, flattenResult(result, fn->loc, fn->name == kReplEntryName));
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
    // A struct's fields the template does not give (its keep fields, which
    // hold no tensor) are nil, as struct/2 leaves them.
    if (const ast::Module *m = t.structName.empty() ? nullptr : programModule(t.structName))
      for (auto &field : m->structFields)
        if (std::find(v.keys.begin(), v.keys.end(), field) == v.keys.end()) {
          v.keys.push_back(field);
          v.elems.push_back(Value::atomValue("nil", t.loc));
          v.keyLocs.push_back(t.loc);
        }
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
  if (!t.term.empty()) {
    // A term (a struct's keep field): its value, not a parameter.
    ++nameIdx;
    const std::string &x = t.term;
    if (x[0] == ':') return Value::atomValue(x.substr(1), t.loc);
    if (x == "true" || x == "false" || x == "nil") return Value::atomValue(x, t.loc);
    if (x.find_first_of(".eE") != std::string::npos) return Value::real(std::strtod(x.c_str(), nullptr), t.loc);
    return Value::number(std::strtoll(x.c_str(), nullptr, 10), t.loc);
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

namespace {

/// Whether `v` is or contains a tensor: a result, never a term (a list of
/// tensors is refused as a result).
bool holdsTensor(const Value &v) {
  return v.kind == Value::Tensor || std::any_of(v.elems.begin(), v.elems.end(), holdsTensor);
}

} // namespace

Result<ResultTree> Tracer::flattenResult(const Value &v, const Loc &loc, bool terms) {
  ResultTree t;
  if (v.kind == Value::Tuple) {
    t.isTuple = true;
    for (auto &e : v.elems) {
      NXC_TRY(sub, flattenResult(e, loc, terms));
      t.elems.push_back(std::move(sub));
    }
    return t;
  }
  if (v.kind == Value::Map) {
    // Leaves in Nx's order: a map's sorted by key; a struct's as its
    // @derive {Nx.Container, containers: [...]} lists them (only those), or
    // in defstruct order. With terms, a struct's every field in defstruct
    // order, the keep fields as terms.
    std::vector<size_t> order(v.keys.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ast::mapKeyLess(v.keys[a], v.keys[b]); });
    const ast::Module *m = v.atom.empty() ? nullptr : programModule(v.atom);
    const std::vector<std::string> *containers = containerFieldsOf(v);
    if (m) {
      const std::vector<std::string> &fields = terms || !containers ? m->structFields : *containers;
      if (!fields.empty()) {
        order.clear();
        for (auto &f : fields) {
          auto it = std::find(v.keys.begin(), v.keys.end(), f);
          if (it != v.keys.end()) order.push_back(it - v.keys.begin());
        }
      }
    }
    t.isTuple = true;
    t.structName = v.atom;
    for (size_t k : order) {
      // (nil in a container field, as a plain function may return it, is kept too)
      bool kept = (isKeepField(containers, v.keys[k]) && !holdsTensor(v.elems[k])) || v.elems[k].isNil();
      ResultTree sub;
      if (kept) {
        // A captured function is kept as the source that makes it again.
        sub.term = functionSource(v.elems[k]).value_or(inspectValue(v.elems[k]));
      } else {
        NXC_TRY(leaf, flattenResult(v.elems[k], loc, terms));
        sub = std::move(leaf);
      }
      t.elems.push_back(std::move(sub));
      t.keys.push_back(v.keys[k]);
    }
    return t;
  }
  if (terms && !holdsTensor(v) &&
      (v.kind == Value::Int || v.kind == Value::Float || v.kind == Value::Atom || v.kind == Value::String ||
       v.kind == Value::List || v.kind == Value::Range)) {
    t.term = inspectValue(v);
    return t;
  }
  if (v.kind == Value::Vectorized) {
    t.node = v.node;
    t.vectorized = v.keys;
    g_.results.push_back(v.node);
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

} // namespace nxc::sema

//===- TracerCalls.cpp - calls: local, imported, remote, Nx.Defn.Kernel ---===//
//
// A call in defn source: a local or imported function inlined (with its
// defaults and guards), a remote call into Nx's library or another module,
// Nx.Defn.Kernel's functions and Nx.Constants.
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

Result<Value> Tracer::call(const Expr &e, Env &env) {
  std::vector<Value> args;
  for (auto &c : e.children) {
    NXC_TRY(v, eval(*c, env));
    args.push_back(v);
  }
  return callNamed(e.module, e.name, std::move(args), e.loc);
}

Result<Value> Tracer::callNamed(const std::string &module, const std::string &name, std::vector<Value> args,
                                const Loc &loc) {
  std::string qual = fmt::format(FMT_STRING("{}{}{}/{}"), module, module.empty() ? "" : ".", name, args.size());
  if (module.empty() && name == "apply" && (args.size() == 2 || args.size() == 3)) {
    // apply(fun, args) and apply(module, :fun, args): Kernel's, on a list
    // of arguments known at compile time.
    const Value &list = args.back();
    if (list.kind != Value::List)
      return error(loc, fmt::format(FMT_STRING("{} takes its arguments as a list, got {}"), qual, describeValue(list)));
    std::vector<Value> applied(list.elems.begin(), list.elems.end());
    if (args.size() == 2) {
      if (args[0].kind != Value::Function)
        return error(loc, fmt::format(FMT_STRING("apply/2 takes a function, got {}"), describeValue(args[0])));
      return applyFunction(args[0], applied, loc);
    }
    if (args[0].kind != Value::Atom || args[1].kind != Value::Atom)
      return error(loc, fmt::format(FMT_STRING("apply/3 takes a module and a function name (atoms), got {} and {}"),
                                    describeValue(args[0]), describeValue(args[1])));
    std::string target = args[0].atom.rfind("Elixir.", 0) == 0 ? args[0].atom.substr(7) : args[0].atom;
    return callNamed(target, args[1].atom, std::move(applied), loc);
  }
  if (module.empty()) {
    // A plain def is traced like Nx.Defn.jit traces any function.
    if (const ast::Function *f = findFunction(*module_, name, args.size())) return inlineCall(*f, *module_, args, loc);
    // Then the public functions of imported modules defined in this file.
    const ast::Module *from = nullptr;
    const ast::Function *imported = nullptr;
    for (auto &importedName : module_->imports)
      for (auto &m : file_.modules)
        if (m.name == importedName)
          if (const ast::Function *f = findFunction(m, name, args.size()))
            if (f->kind == "defn" || f->kind == "def" || f->kind == "deftransform") {
              if (imported && from != &m)
                return error(loc, fmt::format(FMT_STRING("function {} is imported from both {} and {}; call it as "
                                                         "{}.{}(...) or {}.{}(...)"),
                                              qual, from->name, m.name, from->name, name, m.name, name));
              from = &m;
              imported = f;
            }
    if (imported) return inlineCall(*imported, *from, args, loc);
    return kernel(name, args, loc, qual);
  }
  if (module == "Nx" && name == "is_tensor" && args.size() == 1) {
    // Nx's guard: a tensor, a number, or :infinity, :neg_infinity, :nan.
    const Value &v = args[0];
    bool tensorLike = v.kind == Value::Tensor || v.kind == Value::Vectorized || v.kind == Value::Int ||
                      v.kind == Value::Float || isNonFiniteAtom(v);
    return Value::atomValue(tensorLike ? "true" : "false", loc);
  }
  if (module == "Nx" && args.size() == 1 && name != "pred" && ElemType::parse(name)) {
    // Nx.u32(x) and the other short-hands: Nx.tensor(x, type: :u32).
    std::vector<Value> withType = {args[0], Value::keywords({{"type", Value::atomValue(name, loc)}}, loc)};
    return callNx("tensor", withType, loc);
  }
  if (module == "Nx") return callNx(name, args, loc);
  if (module == "Nx.Random") return callNx("Random." + name, args, loc);
  if (module == "Nx.LinAlg") return callNx("LinAlg." + name, args, loc);
  if (module == "Nx.Defn.Kernel") return kernel(name, args, loc, qual);
  if (module == "Nx.Constants") return constants(name, args, loc, qual);
  if (module == "Access") {
    if (name != "get" || args.size() != 2)
      return error(loc,
                   fmt::format(FMT_STRING("undefined function {} (nxc knows Access.get/2, which t[i] calls)"), qual));
    if (args[0].kind == Value::List) return keywordGet(args[0], args[1], loc);
    if (args[0].kind == Value::Map) {
      std::vector<Value> getArgs = {args[0], args[1]};
      NXC_TRY(got, elixirCall("Map", "get", getArgs, loc));
      if (got) return *got;
    }
    return access(args[0], args[1], loc);
  }
  for (auto &m : file_.modules)
    if (m.name == module) {
      const ast::Function *f = findFunction(m, name, args.size());
      if (!f)
        return error(loc, fmt::format(FMT_STRING("undefined function {} (module {} has no such defn)"), qual, module));
      if (f->kind == "defnp" || f->kind == "defp" || f->kind == "deftransformp")
        return error(loc, fmt::format(FMT_STRING("function {} is private to {}"), qual, module));
      const ast::Module *saved = module_;
      auto r = inlineCall(*f, m, args, loc);
      module_ = saved;
      return r;
    }
  if (module == "Nx.Defn.Expr" && name == "metadata" && args.size() == 2 && !inElixir())
    return error(loc, "cannot invoke Nx.Defn.Expr.metadata/2 inside defn because it was not defined with defn (call "
                      "it from a deftransform, as Axon does)");
  if (module == "Nx.Defn.Expr" && name == "metadata" && args.size() == 2) {
    // Axon's logits cache: the tensor, with the map for patterns on its data.
    NXC_TRY(t, toTensor(args[0], loc));
    Value tagged = Value::tensor(t, loc);
    if (args[1].kind == Value::Map) tagged.metadata = std::make_shared<const Value>(args[1]);
    return tagged;
  }
  if (module == "Nx.Type") return nxTypeCall(name, args, loc);
  // A hook's callback: IO.inspect prints the value when the code runs.
  if (hookCallbackDepth_ > 0 && module == "IO" && name == "inspect" && (args.size() == 1 || args.size() == 2)) {
    std::vector<Value> printed = args;
    return printValue(printed, loc);
  }
  if (inElixir() || module == "Kernel" || (module == "Map" && name == "fetch!")) {
    NXC_TRY(done, elixirCall(module, name, args, loc));
    if (done) return *done;
    if (module == "Kernel") return kernel(name, args, loc, qual); // Kernel.div/2 and the like
    static const std::set<std::string> stdlib = {
        "Kernel", "Nx.Shape", "Keyword", "List",  "Tuple", "Enum",    "Map",      "Integer", "Float",  "String", "Atom",
        "IO",     "Logger",   "Access",  "Range", ":math", ":erlang", "Function", "Code",    "System", "Stream"};
    if (inElixir() && stdlib.count(module))
      return error(loc, fmt::format(FMT_STRING("{} is not in the part of Elixir that nxc runs at compile time "
                                               "(docs/language.md lists it)"),
                                    qual));
  }
  if (module == "IO" || module == "Enum" || module == "Kernel" || module == "String" || module == "List" ||
      module == "Keyword" || module == "Map" || module == "Tuple" || module[0] == ':')
    return error(loc, fmt::format(FMT_STRING("cannot invoke {} inside defn because it was not defined with defn{}"),
                                  qual, module == "IO" ? "; use print_value/print_expr instead" : ""));
  if (module.rfind("Nx.", 0) == 0) return error(loc, fmt::format(FMT_STRING("{} is not supported yet by nxc"), qual));
  return error(loc,
               fmt::format(FMT_STRING("undefined function {} (module {} is not defined in this file)"), qual, module));
}

Result<Value> Tracer::inlineCall(const ast::Function &f, const ast::Module &m, std::vector<Value> args,
                                 const Loc &loc) {
  // The repl's input runs as iex does: a defn called where no defn is being
  // traced (from the input, or from a transform or def it calls) is
  // compiled by Nx and returns its numbers as tensors; inside a trace, and
  // from transforms, numbers stay Elixir terms.
  auto isDefn = [](const ast::Function *g) { return g && (g->kind == "defn" || g->kind == "defnp"); };
  bool fromRepl = isDefn(&f) && !stack_.empty() && stack_.front() && stack_.front()->name == kReplEntryName &&
                  std::none_of(stack_.begin() + 1, stack_.end(), isDefn);
  NXC_TRY(r, inlineCallBody(f, m, std::move(args), loc));
  if (fromRepl) return numbersAsTensors(r, loc);
  return r;
}

Result<Value> Tracer::numbersAsTensors(const Value &v, const Loc &loc) {
  if (v.kind == Value::Int || v.kind == Value::Float) {
    NXC_TRY(t, toTensor(v, v.loc.valid() ? v.loc : loc));
    return Value::tensor(t, v.loc.valid() ? v.loc : loc);
  }
  if (v.kind != Value::Tuple && v.kind != Value::Map) return v;
  // A struct's keep fields are not traversed (Nx.Container's keep:).
  const std::vector<std::string> *containers = containerFieldsOf(v);
  Value out = v;
  for (size_t k = 0; k < out.elems.size(); ++k) {
    if (isKeepField(containers, out.keys[k])) continue;
    NXC_TRY(converted, numbersAsTensors(out.elems[k], loc));
    out.elems[k] = converted;
  }
  return out;
}

Result<std::vector<Value>> Tracer::withDefaults(std::vector<Value> args, size_t arity,
                                                const std::function<bool(size_t)> &hasDefault,
                                                const std::function<Result<Value>(size_t)> &defaultValue) {
  // As Elixir: given n of the arity's arguments, the required parameters
  // and the first n - required parameters with defaults (left to right)
  // take the arguments in order; the others their defaults
  // (`def stateless(parent \\ identity(), apply_fn)` called with one).
  if (args.size() >= arity) return args;
  size_t required = 0;
  for (size_t i = 0; i < arity; ++i) required += !hasDefault(i);
  if (args.size() < required) return args; // the caller reports the arity
  size_t given = args.size() - required, next = 0;
  std::vector<Value> out;
  for (size_t i = 0; i < arity; ++i) {
    if (!hasDefault(i) || given > 0) {
      if (hasDefault(i)) --given;
      out.push_back(std::move(args[next++]));
    } else {
      NXC_TRY(d, defaultValue(i));
      out.push_back(std::move(d));
    }
  }
  return out;
}

Result<Value> Tracer::inlineCallBody(const ast::Function &f, const ast::Module &m, std::vector<Value> args,
                                     const Loc &loc) {
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
    auto declaring = [&](size_t i) -> const ast::Function * {
      for (const ast::Function *c : clauses)
        if (c->defaults.size() > i && c->defaults[i]) return c;
      return nullptr;
    };
    auto filled = withDefaults(
        std::move(args), f.params.size(), [&](size_t i) { return declaring(i) != nullptr; },
        [&](size_t i) {
          Env none;
          return eval(*declaring(i)->defaults[i], none);
        });
    if (!filled.ok()) {
      module_ = saved;
      return filled.error();
    }
    args = std::move(filled.value());
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
  if (args.size() < f.params.size()) {
    auto filled = withDefaults(
        std::move(args), f.params.size(), [&](size_t i) { return f.defaults.size() > i && f.defaults[i] != nullptr; },
        [&](size_t i) {
          Env none;
          return eval(*f.defaults[i], none);
        });
    if (!filled.ok()) {
      module_ = saved;
      return filled.error();
    }
    args = std::move(filled.value());
  }
  if (args.size() != f.params.size()) {
    module_ = saved;
    return error(loc, fmt::format(FMT_STRING("{} takes {} arguments, given {}"), qual, f.params.size(), args.size()));
  }
  for (size_t i = 0; i < f.params.size(); ++i) NXC_CHECK(bindPattern(*f.params[i], args[i], env, &bound));
  stack_.push_back(&f);
  auto r = eval(*f.body, env);
  stack_.pop_back();
  module_ = saved;
  return r;
}

Result<Value> Tracer::kernel(const std::string &name, std::vector<Value> &args, const Loc &loc,
                             const std::string &qual) {
  if (name == "raise" && (args.size() == 1 || args.size() == 2)) return raiseCall(args, loc);
  if (name == "struct" && (args.size() == 1 || args.size() == 2) && args[0].kind == Value::Atom) {
    // struct(Module, fields): the module's defstruct fields in order, each
    // nil unless `fields` (a keyword list or map) gives it; keys the struct
    // does not have are ignored, as Elixir's struct/2 ignores them.
    const ast::Module *target = programModule(args[0].atom);
    if (!target || target->structFields.empty())
      return error(loc, fmt::format(FMT_STRING("struct({}, ...): {} is not a struct among the files given (a "
                                               "module with defstruct; add its file with --with)"),
                                    args[0].atom, args[0].atom));
    Value s;
    s.kind = Value::Map;
    s.atom = target->name;
    s.loc = loc;
    for (auto &field : target->structFields) {
      s.keys.push_back(field);
      s.elems.push_back(Value::atomValue("nil", loc));
      s.keyLocs.push_back(loc);
    }
    if (args.size() == 2) {
      const Value &given = args[1];
      if (!(given.kind == Value::Map || (given.kind == Value::List && given.isKeywordList())))
        return error(loc, fmt::format(FMT_STRING("struct/2 expects a keyword list or a map of fields, got {}"),
                                      describeValue(given)));
      for (size_t k = 0; k < given.keys.size(); ++k) {
        auto it = std::find(s.keys.begin(), s.keys.end(), given.keys[k]);
        if (it != s.keys.end()) s.elems[it - s.keys.begin()] = given.elems[k];
      }
    }
    return s;
  }
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
  if (args.size() >= 1 && args.size() <= 3 && name == "hook") return hook(args, loc);
  if (args.size() >= 1 && args.size() <= 3 && name == "io_call") return args[0];
  if (args.empty() && name == "create_token") return token(loc);
  if (args.size() >= 2 && args.size() <= 4 && name == "hook_token") {
    NXC_CHECK(checkToken(args[0], name, loc));
    std::vector<Value> rest(args.begin() + 1, args.end());
    NXC_TRY(v, hook(rest, loc));
    return Value::tuple({args[0], v}, loc);
  }
  if (args.size() == 2 && name == "attach_token") {
    NXC_CHECK(checkToken(args[0], name, loc));
    return args[1];
  }
  if (args.size() == 2 && name == "then") return applyFunction(args[1], {args[0]}, loc);
  if (args.size() == 2 && name == "tap") {
    NXC_TRY(ignored, applyFunction(args[1], {args[0]}, loc));
    (void)ignored;
    return args[0];
  }
  if (args.size() == 2 && name == "keyword!") return keywordValidate(args[0], args[1], loc);
  if (args.size() == 2 && name == "assert_keys") {
    // Nx.Defn.Kernel.assert_keys/2: the keyword list when it has every key.
    const Value &list = args[0], &keys = args[1];
    if (list.kind != Value::List || (!list.elems.empty() && !list.isKeywordList()) || keys.kind != Value::List)
      return error(loc,
                   fmt::format(FMT_STRING("assert_keys/2 expects a keyword list and a list of keys, got {} and {}"),
                               describeValue(list), describeValue(keys)));
    for (const Value &key : keys.elems) {
      if (key.kind != Value::Atom)
        return error(key.loc.valid() ? key.loc : loc,
                     fmt::format(FMT_STRING("assert_keys/2 expects atom keys, got {}"), describeValue(key)));
      if (std::find(list.keys.begin(), list.keys.end(), key.atom) == list.keys.end())
        return error(loc, fmt::format(FMT_STRING("** (ArgumentError) expected key {} in keyword list, got: {}"),
                                      inspectValue(key), inspectValue(list)));
    }
    return list;
  }
  if (args.size() == 2 && name == "assert_shape") {
    NXC_TRY(want, shapeArg(args[1], "assert_shape"));
    if (shapeOfValue(args[0]) != want)
      return error(loc, fmt::format(FMT_STRING("expected tensor to have shape {}, got tensor with shape {}"),
                                    shapeString(want), shapeString(shapeOfValue(args[0]))));
    return args[0];
  }
  if (args.size() == 1 && (name == "abs" || name == "floor" || name == "ceil" || name == "round" || name == "trunc") &&
      (args[0].kind == Value::Int || args[0].kind == Value::Float)) {
    if (args[0].kind == Value::Int) {
      if (name == "abs" && args[0].i == INT64_MIN) return error(loc, "integer overflow in a compile-time computation");
      return Value::number(name == "abs" ? std::llabs(args[0].i) : args[0].i, loc);
    }
    double v = args[0].f;
    double r = name == "abs"     ? std::fabs(v)
               : name == "floor" ? std::floor(v)
               : name == "ceil"  ? std::ceil(v)
               : name == "trunc" ? std::trunc(v)
                                 : std::round(v);
    if (name == "abs") return Value::real(r, loc);
    // Elixir's result is an integer of any size; nxc's compile-time integers are 64-bit.
    if (!(r >= -9223372036854775808.0 && r < 9223372036854775808.0))
      return error(loc, fmt::format(FMT_STRING("{}({}) does not fit a 64-bit integer"), name, v));
    return Value::number((int64_t)r, loc);
  }
  return error(loc, fmt::format(FMT_STRING("undefined function {} (there is no such import)"), qual));
}

Result<Value> Tracer::constants(const std::string &name, std::vector<Value> &args, const Loc &loc,
                                const std::string &qual) {
  // Nx.Constants.NAME() and NAME(type, opts \\ []); opts only choose a backend.
  static const std::set<std::string> floatOnly = {"nan", "infinity", "neg_infinity", "pi", "e", "euler_gamma",
                                                  "smallest_positive_normal", "epsilon"};
  static const std::set<std::string> typed = {"max_finite", "min_finite", "max", "min"};
  if (!floatOnly.count(name) && !typed.count(name)) {
    if (name == "i" && args.size() <= 2) { // i(type \\ :c64, opts \\ [])
      ElemType t{TypeKind::C, 64};
      if (!args.empty()) {
        NXC_TRY(tt, parseType(args[0]));
        t = tt;
      }
      if (!t.isComplex())
        return error(args[0].loc.valid() ? args[0].loc : loc,
                     fmt::format(FMT_STRING("Nx.Constants.i expects a complex type, got {}"), t.name()));
      return Value::tensor(constant(t, {}, {0.0, 1.0}, {}, loc), loc);
    }
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
  if (t.isF8()) {
    // Nx.Type's binaries for the f8 types (nan_binary, max_finite_binary,
    // epsilon_binary, pi_binary...), as the values they hold: f8_e4m3fn has
    // no infinity (Nx gives its largest finite value), and Nx's pi, e and
    // euler_gamma for it are 2.5, 2.25 and 1.0.
    bool e5 = t.kind == TypeKind::F;
    double top = e5 ? 57344.0 : 448.0, inf = e5 ? INFINITY : top;
    double v = name == "nan"                             ? NAN
               : name == "infinity" || name == "max"     ? inf
               : name == "neg_infinity" || name == "min" ? -inf
               : name == "max_finite"                    ? top
               : name == "min_finite"                    ? -top
               : name == "smallest_positive_normal"      ? (e5 ? 0x1p-14 : 0x1p-6)
               : name == "epsilon"                       ? (e5 ? 0.25 : 0.625)
               : name == "pi"                            ? (e5 ? 3.0 : 2.5)
               : name == "e"                             ? (e5 ? 2.5 : 2.25)
                                                         : (e5 ? 0.5 : 1.0);
    return Value::tensor(constant(t, {}, {v}, {}, loc), loc);
  }
  bool bf = t.kind == TypeKind::BF;
  double maxFinite = t.bits == 64 ? 1.7976931348623157e308 : t.bits == 16 && !bf ? 65504.0
                     : bf ? 3.3895313892515355e38 : 3.4028234663852886e38;
  double smallest = t.bits == 64          ? 2.2250738585072014e-308
                    : t.bits == 16 && !bf ? 6.103515625e-05
                                          : 1.1754943508222875e-38;
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

} // namespace nxc::sema

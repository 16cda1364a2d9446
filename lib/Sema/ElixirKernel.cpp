//===- ElixirKernel.cpp - Kernel, Tuple, :math, :erlang at trace time -----===//
//
// The compile-time Elixir (CompileTimeElixir.cpp) of Kernel's guards and
// conversions, Tuple, Logger, :math and :erlang, Nx.Shape, NimbleOptions
// and Nx.Defn.Composite: what defn libraries call on numbers, atoms and
// containers while they trace.
//
//===----------------------------------------------------------------------===//
#include "ElixirCall.h"

#include "nxc/Frontend/ElixirFloat.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

namespace nxc::sema {

/// Kernel's functions.
Result<std::optional<Value>> Tracer::elixirKernelCall(ElixirCall &call) {
  using Opt = std::optional<Value>;
  const std::string &name = call.name;
  std::vector<Value> &args = call.args;
  const Loc &loc = call.loc;
  size_t n = call.n;
  if (n == 2 && name == "is_function") {
    if (args[1].kind != Value::Int || args[1].i < 0)
      return error(call.argLoc(1),
                   fmt::format(FMT_STRING("is_function/2 expects an arity, got {}"), describeValue(args[1])));
    bool fits = args[0].kind == Value::Function && args[0].fn && args[0].fn->intValue == args[1].i;
    return Opt(boolean(fits, loc));
  }
  if (n == 3 && name == "function_exported?") {
    // A module of the program exports its def, defn and deftransform
    // functions (Elixir's own modules are not the program's: false).
    if (args[0].kind != Value::Atom || args[1].kind != Value::Atom || args[2].kind != Value::Int)
      return Opt(boolean(false, loc));
    const ast::Module *m = programModule(args[0].atom);
    bool exported = false;
    // A function with defaults exports each arity from the required
    // parameters' count up (`def sgd(opts \\ [])` exports sgd/0 and sgd/1).
    if (m)
      for (auto &f : m->functions) {
        int64_t defaults = std::count_if(f.defaults.begin(), f.defaults.end(), [](auto &d) { return d != nullptr; });
        int64_t arity = (int64_t)f.params.size();
        exported |= f.name == args[1].atom && args[2].i <= arity && args[2].i >= arity - defaults &&
                    (f.kind == "def" || f.kind == "defn" || f.kind == "deftransform");
      }
    return Opt(boolean(exported, loc));
  }
  if (n == 1) {
    const Value &x = args[0];
    if (name == "is_nil") return Opt(boolean(x.isNil(), loc));
    if (name == "is_list") return Opt(boolean(x.kind == Value::List, loc));
    if (name == "is_tuple") return Opt(boolean(x.kind == Value::Tuple, loc));
    if (name == "is_atom") return Opt(boolean(x.kind == Value::Atom, loc));
    if (name == "is_boolean")
      return Opt(boolean(x.kind == Value::Atom && (x.atom == "true" || x.atom == "false"), loc));
    if (name == "is_number") return Opt(boolean(x.kind == Value::Int || x.kind == Value::Float, loc));
    if (name == "is_integer") return Opt(boolean(x.kind == Value::Int, loc));
    if (name == "is_float") return Opt(boolean(x.kind == Value::Float, loc));
    if (name == "is_binary") return Opt(boolean(x.kind == Value::String, loc));
    if (name == "is_function") return Opt(boolean(x.kind == Value::Function, loc));
    if (name == "is_map")
      return Opt(boolean(x.kind == Value::Tensor || x.kind == Value::Vectorized || x.kind == Value::Map, loc));
    if (name == "is_struct")
      return Opt(boolean(
          x.kind == Value::Tensor || x.kind == Value::Vectorized || (x.kind == Value::Map && !x.atom.empty()), loc));
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
      NXC_CHECK(call.needList(0, "length"));
      return Opt(Value::number((int64_t)x.elems.size(), loc));
    }
    if (name == "tuple_size") {
      if (x.kind != Value::Tuple) return error(call.argLoc(0), "tuple_size/1 expects a tuple, got " + describeValue(x));
      return Opt(Value::number((int64_t)x.elems.size(), loc));
    }
    if (name == "hd" || name == "tl") {
      if (x.kind != Value::List || x.elems.empty())
        return error(call.argLoc(0), fmt::format(FMT_STRING("{}/1 expects a non-empty list, got {}"), name,
                                            describeValue(x)));
      if (name == "hd") return Opt(call.pairOf(x, 0));
      Value rest = x;
      rest.elems.erase(rest.elems.begin());
      rest.keys.erase(rest.keys.begin());
      rest.keyLocs.erase(rest.keyLocs.begin());
      return Opt(rest);
    }
    if (name == "not") {
      if (x.kind != Value::Atom || (x.atom != "true" && x.atom != "false"))
        return error(call.argLoc(0), "not/1 expects a boolean, got " + describeValue(x));
      return Opt(boolean(x.atom == "false", loc));
    }
  }
  if (name == "put_elem" && n == 3) {
    if (args[0].kind != Value::Tuple)
      return error(call.argLoc(0), "put_elem/3 expects a tuple, got " + describeValue(args[0]));
    if (args[1].kind != Value::Int || args[1].i < 0 || args[1].i >= (int64_t)args[0].elems.size())
      return error(call.argLoc(1), fmt::format(FMT_STRING("put_elem/3: index {} is out of range for a tuple of {} "
                                                     "elements"),
                                          inspectValue(args[1]), args[0].elems.size()));
    Value t = args[0];
    t.elems[args[1].i] = args[2];
    t.loc = loc;
    return Opt(t);
  }
  return Opt();
  return Opt();
}

/// Nx.Shape's functions.
Result<std::optional<Value>> Tracer::elixirNxShapeCall(ElixirCall &call) {
  using Opt = std::optional<Value>;
  const std::string &name = call.name;
  std::vector<Value> &args = call.args;
  const Loc &loc = call.loc;
  size_t n = call.n;
  // Shape arithmetic library code calls: axes against a shape (and names).
  auto shapeRank = [&](size_t k) -> Result<int64_t> {
    if (args[k].kind != Value::Tuple)
      return error(call.argLoc(k), fmt::format(FMT_STRING("Nx.Shape.{} expects a shape tuple, got {}"), name,
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
    NXC_CHECK(call.needList(1, "normalize_axes"));
    std::vector<Value> out;
    for (auto &a : args[1].elems) {
      NXC_TRY(x, axisOf(a, rank, n == 3 ? &args[2] : nullptr));
      out.push_back(Value::number(x, loc));
    }
    return Opt(call.listOf(out));
  }
  return Opt();
  return Opt();
}

/// NimbleOptions's functions.
Result<std::optional<Value>> Tracer::elixirNimbleOptionsCall(ElixirCall &call) {
  using Opt = std::optional<Value>;
  const std::string &name = call.name;
  std::vector<Value> &args = call.args;
  const Loc &loc = call.loc;
  size_t n = call.n;
  if (name == "new!" && n == 1) {
    NXC_CHECK(call.needKeywords(0));
    return Opt(args[0]);
  }
  if (name == "docs" && n >= 1) {
    Value s;
    s.kind = Value::String;
    s.loc = loc;
    return Opt(s);
  }
  if (name == "validate!" && n == 2) {
    NXC_CHECK(call.needKeywords(1));
    NXC_TRY(v, nimbleValidate(args[0], args[1], loc));
    return Opt(v);
  }
  return Opt();
  return Opt();
}

/// Tuple's functions.
Result<std::optional<Value>> Tracer::elixirTupleCall(ElixirCall &call) {
  using Opt = std::optional<Value>;
  const std::string &name = call.name;
  std::vector<Value> &args = call.args;
  const Loc &loc = call.loc;
  size_t n = call.n;
  if (n >= 1 && args[0].kind != Value::Tuple && name != "duplicate")
    return error(call.argLoc(0),
                 fmt::format(FMT_STRING("Tuple.{} expects a tuple, got {}"), name, describeValue(args[0])));
  if (name == "to_list" && n == 1) return Opt(call.listOf(args[0].elems));
  if ((name == "delete_at" && n == 2) || (name == "insert_at" && n == 3) || (name == "append" && n == 2)) {
    std::vector<Value> e = args[0].elems;
    if (name == "append") {
      e.push_back(args[1]);
      return Opt(Value::tuple(e, loc));
    }
    int64_t limit = (int64_t)e.size() + (name == "insert_at" ? 1 : 0);
    if (args[1].kind != Value::Int || args[1].i < 0 || args[1].i >= limit)
      return error(call.argLoc(1), fmt::format(FMT_STRING("Tuple.{}: index {} is out of range for a tuple of {} "
                                                     "elements"),
                                          name, inspectValue(args[1]), e.size()));
    if (name == "delete_at") e.erase(e.begin() + args[1].i);
    else e.insert(e.begin() + args[1].i, args[2]);
    return Opt(Value::tuple(e, loc));
  }
  if (name == "duplicate" && n == 2) {
    if (args[1].kind != Value::Int || args[1].i < 0 || args[1].i > 1000000)
      return error(call.argLoc(1), "Tuple.duplicate/2 expects a count from 0 to 1,000,000");
    return Opt(Value::tuple(std::vector<Value>((size_t)args[1].i, args[0]), loc));
  }
  if (name == "product" && n == 1) {
    int64_t p = 1;
    for (auto &x : args[0].elems) {
      if (x.kind != Value::Int) return error(call.argLoc(0), "Tuple.product/1 expects integers");
      if (__builtin_mul_overflow(p, x.i, &p)) return error(loc, "integer overflow in a compile-time computation");
    }
    return Opt(Value::number(p, loc));
  }
  return Opt();
  return Opt();
}

/// Logger's functions.
Result<std::optional<Value>> Tracer::elixirFunctionCall(ElixirCall &call) {
  if (call.name == "identity" && call.n == 1) return std::optional<Value>(call.args[0]);
  return std::optional<Value>();
}

Result<std::optional<Value>> Tracer::elixirCodeCall(ElixirCall &call) {
  // Code.ensure_loaded/1 and ensure_loaded?/1: the modules of the program
  // are loaded; any other (a dependency not given with --with) is not.
  const std::string &name = call.name;
  if (call.n != 1 || (name != "ensure_loaded" && name != "ensure_loaded?")) return std::optional<Value>();
  const Value &mod = call.args[0];
  bool loaded = mod.kind == Value::Atom && programModule(mod.atom);
  if (name == "ensure_loaded?") return std::optional<Value>(boolean(loaded, call.loc));
  return std::optional<Value>(
      loaded ? Value::tuple({Value::atomValue("module", call.loc), mod}, call.loc)
             : Value::tuple({Value::atomValue("error", call.loc), Value::atomValue("nofile", call.loc)}, call.loc));
}

const ast::Module *Tracer::programModule(const std::string &atom) const {
  std::string name = atom.rfind("Elixir.", 0) == 0 ? atom.substr(7) : atom;
  for (auto &m : file_.modules)
    if (m.name == name) return &m;
  return nullptr;
}

const std::vector<std::string> *Tracer::containerFieldsOf(const Value &v) const {
  if (v.kind != Value::Map || v.atom.empty()) return nullptr;
  const ast::Module *m = programModule(v.atom);
  return m && !m->containerFields.empty() ? &m->containerFields : nullptr;
}

bool isKeepField(const std::vector<std::string> *containers, const std::string &key) {
  return containers && std::find(containers->begin(), containers->end(), key) == containers->end();
}

Result<std::optional<Value>> Tracer::elixirLoggerCall(ElixirCall &call) {
  using Opt = std::optional<Value>;
  const std::string &name = call.name;
  std::vector<Value> &args = call.args;
  const Loc &loc = call.loc;
  size_t n = call.n;
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
    std::string where = loc.valid() && loc.file
                            ? fmt::format(FMT_STRING("{}:{}:{}: "), loc.file->name, loc.line, loc.col)
                            : std::string();
    fmt::print(stderr, FMT_STRING("{}[{}] {}\n"), where, name == "warn" ? "warning" : name, text);
    return Opt(Value::atomValue("ok", loc));
  }
  return Opt();
  return Opt();
}

/// :math's functions.
Result<std::optional<Value>> Tracer::elixirMathCall(ElixirCall &call) {
  using Opt = std::optional<Value>;
  const std::string &name = call.name;
  std::vector<Value> &args = call.args;
  const Loc &loc = call.loc;
  size_t n = call.n;
  // Erlang's floats: every result is a float, as :math returns.
  auto num = [&](size_t k) -> Result<double> {
    if (args[k].kind != Value::Int && args[k].kind != Value::Float)
      return error(call.argLoc(k), fmt::format(FMT_STRING(":math.{} expects a number, got {}"), name,
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
  return Opt();
}

/// :erlang's functions.
Result<std::optional<Value>> Tracer::elixirErlangCall(ElixirCall &call) {
  using Opt = std::optional<Value>;
  const std::string &name = call.name;
  std::vector<Value> &args = call.args;
  const Loc &loc = call.loc;
  size_t n = call.n;
  // The tuple functions Elixir's Kernel and Tuple are made of (1-based).
  auto needTuple = [&](size_t k) -> Status {
    if (args[k].kind != Value::Tuple)
      return error(call.argLoc(k), fmt::format(FMT_STRING("** (ArgumentError) :erlang.{} expects a tuple, got {}"),
                                               name, describeValue(args[k])));
    return okStatus();
  };
  auto index = [&](size_t k, size_t size) -> Result<size_t> {
    if (args[k].kind != Value::Int || args[k].i < 1 || args[k].i > (int64_t)size)
      return error(call.argLoc(k), fmt::format(FMT_STRING("** (ArgumentError) :erlang.{}: index {} is out of range "
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
    return Opt(call.listOf(args[0].elems));
  }
  if (name == "list_to_tuple" && n == 1) {
    NXC_CHECK(call.needList(0, "list_to_tuple"));
    return Opt(Value::tuple(args[0].elems, loc));
  }
  return Opt();
  return Opt();
}

/// Nx.Defn.Composite's functions.
Result<std::optional<Value>> Tracer::elixirCompositeCall(ElixirCall &call) {
  using Opt = std::optional<Value>;
  const std::string &name = call.name;
  std::vector<Value> &args = call.args;
  const Loc &loc = call.loc;
  size_t n = call.n;
  // Containers of tensors, as library code walks its parameter maps
  // (Polaris's deep_merge, zeros_like).
  if (name == "flatten_list" && (n == 1 || n == 2)) {
    NXC_CHECK(call.needList(0, "flatten_list"));
    std::vector<Value> leaves;
    for (auto &c : args[0].elems)
      NXC_CHECK(mapLeaves(c, [&](const Value &x) -> Result<Value> { leaves.push_back(x); return x; }, loc));
    if (n == 2) {
      NXC_CHECK(call.needList(1, "flatten_list"));
      leaves.insert(leaves.end(), args[1].elems.begin(), args[1].elems.end());
    }
    return Opt(call.listOf(leaves));
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
  return Opt();
}

} // namespace nxc::sema

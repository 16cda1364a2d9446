//===- Tracer.h - the defn evaluator, shared by Sema's files ----*- C++ -*-===//
//
// Sema traces a defn as Nx does: an evaluator over the AST whose values are
// compile-time numbers, atoms, ranges, tuples, keyword lists and functions,
// or tensors (nodes of the typed Graph). The evaluator (Tracer.cpp), control
// flow (ControlFlow.cpp), the graph builders and option helpers
// (Builders.cpp) and Nx's library, one file per op family (Nx*.cpp, found
// through the table in NxLibrary.cpp), are members of one class.
//
//===----------------------------------------------------------------------===//
#ifndef NXC_LIB_SEMA_TRACER_H
#define NXC_LIB_SEMA_TRACER_H

#include "nxc/Sema/Sema.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace nxc::sema {

/// Shape arithmetic on option values (padding, strides, dilations, window
/// dimensions), which may be anything up to 2^63 - 1: nullopt where the
/// exact result does not fit an int64_t, instead of a wrapped size.
inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
/// (size - 1) * dilation + 1: the span of `size` points `dilation` apart.
inline std::optional<int64_t> dilatedExtent(int64_t size, int64_t dilation) {
  int64_t r;
  if (size <= 0) return 0;
  if (__builtin_mul_overflow(size - 1, dilation, &r) || __builtin_add_overflow(r, 1, &r)) return std::nullopt;
  return r;
}
/// ceil(size / stride) for size >= 0 and stride >= 1, without overflow.
inline int64_t ceilDiv(int64_t size, int64_t stride) { return size == 0 ? 0 : (size - 1) / stride + 1; }

using ast::Expr;
using ast::ExprKind;

struct Value;
class Env;

/// A value during tracing.
struct Value {
  /// Vectorized: a tensor with Nx's vectorized axes (Nx.vectorize): `node` is
  /// the whole tensor, those axes leading, and `keys` their names. It is not
  /// a Tensor: code that does not know vectorized axes refuses it.
  enum Kind { Int, Float, Atom, Tensor, Tuple, List, Function, Range, String, Map, Vectorized } kind = Int;
  int64_t i = 0;                 ///< Int; Range: first
  double f = 0;
  std::string atom;              ///< Atom: the name; String: the text; Map: the struct's module ("" for a map)
  int node = -1;
  std::vector<Value> elems;
  std::vector<std::string> keys; ///< List: key of each element ("" if not a keyword pair); Map: its (atom) keys
  std::vector<Loc> keyLocs;      ///< List: where each key is written
  /// Function: the `fn` (or capture) and what it closes over.
  const Expr *fn = nullptr;
  std::shared_ptr<const Env> captured;
  const ast::Module *fnModule = nullptr;
  /// Function: written in Elixir code (a def or deftransform, module level):
  /// its body's operators are Kernel's, not Nx.Defn.Kernel's, wherever it is
  /// called.
  bool fnInElixir = false;
  /// Range: last and step (first is `i`); `full` for a bare `..`.
  int64_t last = 0, step = 1;
  bool full = false;
  /// Tensor: the map Nx.Defn.Expr.metadata/2 attached to it (Axon caches a
  /// softmax's or sigmoid's logits so: %{logits: x}), seen by patterns on
  /// the tensor's data.
  std::shared_ptr<const Value> metadata;
  Loc loc;

  bool isNumber() const {
    return kind == Int || kind == Float || (kind == Atom && (atom == "true" || atom == "false"));
  }
  bool isNil() const { return kind == Atom && atom == "nil"; }
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
  static Value vectorized(int n, std::vector<std::string> names, Loc l) {
    Value x;
    x.kind = Vectorized;
    x.node = n;
    x.keys = std::move(names);
    x.loc = std::move(l);
    return x;
  }
  static Value atomValue(std::string a, Loc l) {
    Value x;
    x.kind = Atom;
    x.atom = std::move(a);
    x.loc = std::move(l);
    return x;
  }
  static Value tuple(std::vector<Value> e, Loc l) {
    Value x;
    x.kind = Tuple;
    x.elems = std::move(e);
    x.loc = std::move(l);
    return x;
  }
  /// A keyword list, as `[axis: 0, type: :s64]` evaluates.
  static Value keywords(std::vector<std::pair<std::string, Value>> kv, const Loc &l) {
    Value x;
    x.kind = List;
    x.loc = l;
    for (auto &[k, v] : kv) {
      x.elems.push_back(std::move(v));
      x.keys.push_back(k);
      x.keyLocs.push_back(l);
    }
    return x;
  }
  /// A list, as `[a, b]` evaluates: a keyword list when every element is a
  /// {atom, value} pair.
  static Value list(std::vector<Value> e, const Loc &l) {
    Value x;
    x.kind = List;
    x.keys.assign(e.size(), "");
    x.keyLocs.assign(e.size(), l);
    x.elems = std::move(e);
    x.loc = l;
    x.keywordPairsAsKeys();
    return x;
  }
  /// A List whose every element is a keyword (`a: 1`) or a {atom, value}
  /// tuple is a keyword list (`[{:init_value, v} | opts]`): the tuples become
  /// keys, as literal keywords are held.
  void keywordPairsAsKeys() {
    if (kind != List || elems.empty()) return;
    for (size_t k = 0; k < elems.size(); ++k)
      if (keys[k].empty() && !(elems[k].kind == Tuple && elems[k].elems.size() == 2 && elems[k].elems[0].kind == Atom))
        return;
    for (size_t k = 0; k < elems.size(); ++k)
      if (keys[k].empty()) {
        keys[k] = elems[k].elems[0].atom;
        Value v = std::move(elems[k].elems[1]);
        elems[k] = std::move(v);
      }
  }
};

/// The variables in scope. A nested scope (a branch, a while body, a case
/// clause, a call of a closure) is a child that sees its parent's bindings
/// and keeps its own, which end with it as Elixir's do: a child costs what it
/// binds, not a copy of everything above it, so nesting stays linear. A
/// parent must outlive its children; a closure captures a flattened copy.
class Env {
public:
  Env() = default;
  explicit Env(const Env *parent) : parent_(parent) {}
  Env(const Env &) = delete;
  Env &operator=(const Env &) = delete;

  /// The innermost binding of `name`, or null.
  const Value *find(const std::string &name) const {
    for (const Env *e = this; e; e = e->parent_) {
      auto it = e->own_.find(name);
      if (it != e->own_.end()) return &it->second;
    }
    return nullptr;
  }
  /// Binds `name` in this scope (shadowing any outer binding).
  void bind(const std::string &name, Value v) { own_.insert_or_assign(name, std::move(v)); }
  /// Every visible binding in one scope with no parent (what a closure keeps).
  std::shared_ptr<const Env> flattened() const {
    auto flat = std::make_shared<Env>();
    for (const Env *e = this; e; e = e->parent_)
      for (auto &[name, v] : e->own_) flat->own_.emplace(name, v); // inner scopes come first and win
    return flat;
  }

private:
  const Env *parent_ = nullptr;
  std::map<std::string, Value> own_;
};

/// The leaves of a container value (tuples nest), depth-first.
void flattenLeaves(const Value &v, std::vector<Value> &out);
/// The positions of a container's elements in the order its leaves are
/// taken (a map's by key).
std::vector<size_t> elementOrder(const Value &v);
/// Whether two values are containers of the same structure (or both leaves).
bool sameStructure(const Value &a, const Value &b);
/// A container shaped like `shape` from `leaves`, consumed from `next` on.
Value rebuildLeaves(const Value &shape, const std::vector<Value> &leaves, size_t &next);

std::string describeValue(const Value &v);
/// A type as Nx spells it at trace time: {:f, 32}.
Value typeValue(ElemType t, const Loc &loc);

enum class BinaryRule { Arith, Float, IntOnly, Compare };

/// A window op's window and options, padding resolved to explicit amounts.
struct WindowSpec {
  Shape window;
  std::vector<int64_t> strides, dilations, lo, hi;
};

struct ElixirCall;

class Tracer;
/// An Nx function: `Nx.name(args)` is `(tracer.*handler)(name, args, loc)`.
using NxHandler = Result<Value> (Tracer::*)(const std::string &fn, std::vector<Value> &args, const Loc &loc);
/// :infinity, :neg_infinity and :nan: numbers to Nx (its is_tensor guard,
/// and Nx.equal in defn).
bool isNonFiniteAtom(const Value &v);
/// Whether `key` is a keep field (not among `containers`, when there is
/// such a list): Nx does not traverse it.
bool isKeepField(const std::vector<std::string> *containers, const std::string &key);

struct NxEntry {
  const char *name;
  NxHandler handler;
};
/// The op families of Nx's library, one file each.
std::vector<NxEntry> nxElementwiseFunctions();
std::vector<NxEntry> nxReductionFunctions();
std::vector<NxEntry> nxShapeFunctions();
std::vector<NxEntry> nxIndexFunctions();
std::vector<NxEntry> nxCreationFunctions();
std::vector<NxEntry> nxLinAlgFunctions();
std::vector<NxEntry> nxSpectralFunctions();
std::vector<NxEntry> nxComplexFunctions();
std::vector<NxEntry> nxVectorizeFunctions();
/// Whether `v` (or a list or tuple in it) holds a vectorized tensor.
bool holdsVectorized(const Value &v);
std::vector<NxEntry> nxRandomFunctions();
std::vector<NxEntry> nxConvenienceFunctions();
std::vector<NxEntry> nxGenericReductionFunctions();

class Tracer {
public:
  explicit Tracer(const ast::File &file) : file_(file) {}
  Result<Graph> run(const Signature &sig);
  /// See EagerEvaluator (Sema.h).
  void setEagerEvaluator(EagerEvaluator eager) { eager_ = std::move(eager); }

  //===--------------------------------------------------------------------===//
  // Evaluation (Tracer.cpp)
  //===--------------------------------------------------------------------===//
  static size_t requiredArity(const ast::Function &f);
  static const ast::Function *findFunction(const ast::Module &m, const std::string &name, size_t arity);
  Result<std::pair<const ast::Module *, const ast::Function *>> findEntry(const Signature &sig);
  static void collectNames(const Expr &p, std::vector<std::string> &out);
  Value makeParams(const Template &t, const std::vector<std::string> &names, size_t &nameIdx);
  /// The entry's result as a tree of result tensors; with `terms` (the
  /// repl), values that are not tensors and a struct's keep fields stay
  /// Elixir terms, as iex shows them.
  Result<ResultTree> flattenResult(const Value &v, const Loc &loc, bool terms = false);
  Status bindPattern(const Expr &p, const Value &v, Env &env, std::set<std::string> *params);
  Result<Value> eval(const Expr &e, Env &env);
  Result<Value> attribute(const Expr &e);
  Result<Value> unary(const Expr &e, Env &env);
  Result<Value> binaryExpr(const Expr &e, Env &env);
  Result<Value> range(const Expr &e, Env &env);
  Result<Value> call(const Expr &e, Env &env);
  /// A call of `module.name` (`module` empty: a local or imported function,
  /// or Kernel's) with its arguments' values; `apply/2,3` calls through it.
  Result<Value> callNamed(const std::string &module, const std::string &name, std::vector<Value> args,
                          const Loc &loc);
  Result<Value> inlineCall(const ast::Function &f, const ast::Module &m, std::vector<Value> args, const Loc &loc);
  /// `args` (fewer than `arity`) with the defaults filled in as Elixir
  /// fills them; unchanged when fewer than the required parameters are given.
  Result<std::vector<Value>> withDefaults(std::vector<Value> args, size_t arity,
                                          const std::function<bool(size_t)> &hasDefault,
                                          const std::function<Result<Value>(size_t)> &defaultValue);
  Result<Value> inlineCallBody(const ast::Function &f, const ast::Module &m, std::vector<Value> args, const Loc &loc);
  /// A container's numbers as tensors (what a defn called from outside
  /// defn returns: Nx.Defn.jit makes them tensors).
  Result<Value> numbersAsTensors(const Value &v, const Loc &loc);
  Result<Value> kernel(const std::string &name, std::vector<Value> &args, const Loc &loc, const std::string &qual);
  Result<Value> constants(const std::string &name, std::vector<Value> &args, const Loc &loc, const std::string &qual);
  Result<Value> makeFunction(const Expr &e, Env &env);
  Result<Value> applyFunction(const Value &f, std::vector<Value> args, const Loc &loc);
  Result<Value> keywordGet(const Value &list, const Value &key, const Loc &loc);
  Result<Value> keywordValidate(const Value &list, const Value &spec, const Loc &loc);

  //===--------------------------------------------------------------------===//
  // Compile-time Elixir: transforms, plain defs, raise (CompileTimeElixir.cpp)
  //===--------------------------------------------------------------------===//
  /// Whether the innermost function being traced runs as Elixir (a def,
  /// defp or deftransform) rather than as defn.
  bool inElixir() const;
  std::string inspectValue(const Value &v);
  /// Elixir source that makes the function `v` again, for the captures a
  /// struct keeps (`&Scholar.Metrics.Distance.pairwise_euclidean/2`,
  /// `&Mod.fun(&1, &2, p: 1)` with the captured terms written in), or
  /// nullopt for any other function.
  std::optional<std::string> functionSource(const Value &v);
  Result<std::string> elixirToString(const Value &v, const Loc &loc);
  Result<Value> interpolation(const Expr &e, Env &env);
  Result<Value> mapLiteral(const Expr &e, Env &env);
  /// A `for` comprehension over compile-time lists and ranges.
  Result<Value> forExpr(const Expr &e, Env &env);
  Result<Value> raiseCall(std::vector<Value> &args, const Loc &loc);
  /// <>, ++, --, `in`, and in Elixir code comparisons of terms; nullopt
  /// where defn's meaning applies.
  Result<std::optional<Value>> elixirOperator(const std::string &op, const Value &a, const Value &b, const Loc &loc);
  /// Elixir's truth (anything but nil and false) in Elixir code.
  std::optional<bool> elixirTruth(const Value &v);
  /// Kernel, Keyword, List, Tuple and Enum functions; nullopt when the
  /// function is not in the subset.
  /// NimbleOptions.validate!/2 with the schema features defn libraries use.
  Result<Value> nimbleValidate(const Value &opts, const Value &schema, const Loc &loc);
  /// Module.fun(args) of a module in the program (a custom validator).
  Result<Value> callRemote(const std::string &module, const std::string &fn, std::vector<Value> args, const Loc &loc);
  /// Nx.Type's functions on types ({:f, 32}).
  Result<Value> nxTypeCall(const std::string &name, std::vector<Value> &args, const Loc &loc);
  Result<std::optional<Value>> elixirCall(const std::string &module, const std::string &name, std::vector<Value> &args,
                                          const Loc &loc);
  /// One module's functions (ElixirKernel.cpp, ElixirCollections.cpp); an
  /// empty result when the module has no such function.
  Result<std::optional<Value>> elixirKernelCall(ElixirCall &call);
  Result<std::optional<Value>> elixirNxShapeCall(ElixirCall &call);
  Result<std::optional<Value>> elixirMapCall(ElixirCall &call);
  Result<std::optional<Value>> elixirNimbleOptionsCall(ElixirCall &call);
  Result<std::optional<Value>> elixirKeywordCall(ElixirCall &call);
  Result<std::optional<Value>> elixirListCall(ElixirCall &call);
  Result<std::optional<Value>> elixirTupleCall(ElixirCall &call);
  Result<std::optional<Value>> elixirLoggerCall(ElixirCall &call);
  Result<std::optional<Value>> elixirFunctionCall(ElixirCall &call);
  Result<std::optional<Value>> elixirCodeCall(ElixirCall &call);
  /// The program's module named by a module atom (`Foo` or `Elixir.Foo`).
  const ast::Module *programModule(const std::string &atom) const;
  /// A struct's @derive {Nx.Container, containers: [...]} fields, or null
  /// (not a struct of the program, or no such list).
  const std::vector<std::string> *containerFieldsOf(const Value &v) const;
  Result<std::optional<Value>> elixirMathCall(ElixirCall &call);
  Result<std::optional<Value>> elixirErlangCall(ElixirCall &call);
  Result<std::optional<Value>> elixirCompositeCall(ElixirCall &call);
  Result<std::optional<Value>> elixirEnumCall(ElixirCall &call);

  //===--------------------------------------------------------------------===//
  // Control flow (ControlFlow.cpp)
  //===--------------------------------------------------------------------===//
  Result<Value> ifExpr(const Expr &e, Env &env);
  Result<Value> condExpr(const Expr &e, Env &env);
  Result<Value> caseExpr(const Expr &e, Env &env);
  Result<Value> whileExpr(const Expr &e, Env &env, const Value *givenState = nullptr);
  /// A constant predicate (number, boolean, constant scalar tensor): its truth.
  std::optional<bool> staticTruth(const Value &v);
  /// One `pred -> body` clause; a null `pred` uses `predValue`, a null body is 0.
  struct Clause {
    const Expr *pred;
    Value predValue;
    const Expr *body;
  };
  Result<Value> traceClauses(const std::vector<Clause> &clauses, size_t k, Env &scope, const Loc &loc);
  Result<Value> vectorizedClause(const std::vector<Clause> &clauses, size_t k, const Value &pred, Env &local,
                                 Env &scope, const Loc &loc);
  Result<Value> zerosShapedAs(const Value &v, const Loc &loc);
  Result<Value> runtimeCond(int predNode, const Loc &predLoc, const std::function<Result<Value>()> &thenBranch,
                            const std::function<Result<Value>()> &elseBranch, const Loc &loc,
                            bool zerosForThen = false);
  Result<Value> branch(const Expr *body, Env &env);
  Result<bool> matchCase(const Expr &pattern, const Value &v, Env &env);

  //===--------------------------------------------------------------------===//
  // Graph construction, options, axes, types (Builders.cpp)
  //===--------------------------------------------------------------------===//
  /// Appends a node to the graph and to the region being traced.
  int add(Node n);
  /// add() for a cond/while node: its region nodes get it as their parent.
  int addWithRegions(Node n);
  /// The `elem` node reading result k of cond/while node `owner`.
  int elemNode(int owner, size_t k, const Loc &loc);
  int node(Op op, std::vector<int> operands, TensorType type, const Loc &loc);
  int constant(ElemType t, Shape shape, std::vector<double> fv, std::vector<int64_t> iv, const Loc &loc);
  /// A number as a constant of type t. An integer must fit s32, the type Nx
  /// gives integer literals (Nx wraps larger ones; nxc rejects them).
  Result<int> numberConstant(const Value &v, ElemType t);
  Status checkLiteralInteger(const Value &v);
  Result<int> toTensor(const Value &v, const Loc &loc);
  int unaryNode(Op op, int x, ElemType out, const Loc &loc);
  /// Axis names (one per axis, "" for none) of node x.
  std::vector<std::string> namesOf(int x) const;
  /// Gives node `id` the axis names (a renamed copy for parameters).
  int named(int id, std::vector<std::string> names);
  /// Nx's name merge for broadcasting (right-aligned; a name wins over none).
  Result<std::vector<std::string>> mergeNames(const std::vector<std::string> &a, const std::vector<std::string> &b,
                                              size_t rank, const Loc &loc);
  /// `names:` option: a list of atoms or nil, one per axis.
  Result<std::vector<std::string>> namesOption(const Value &v, size_t rank, const Loc &loc);
  int cast(int x, ElemType t, const Loc &loc);
  int broadcastTo(int x, const Shape &shape, const Loc &loc);
  int reshape(int x, const Shape &shape, const Loc &loc);
  Result<Shape> broadcastShapes(const Shape &a, const Shape &b, const std::string &fn, const Loc &loc);
  ElemType typeOfValue(const Value &v);
  ElemType binaryType(const Value &a, const Value &b);
  static ElemType mergeNumber(ElemType t, const Value &n);
  Result<int> operand(const Value &v, ElemType t, const Shape &shape, const Loc &loc);
  /// A tensor or number's truth as Nx's logical ops read it: u8 `v != 0` in v's own type.
  Result<int> truthOf(const Value &v, const Loc &loc);
  Result<Value> binary(Op op, const Value &a, const Value &b, BinaryRule rule, const Loc &loc);
  /// Nx.Defn.Expr's rewrites of +, -, *, / and ** with scalar constants (see
  /// Builders.cpp); nullopt where none applies.
  Result<std::optional<Value>> constantAlgebra(Op op, const Value &a, const Value &b, ElemType t,
                                               const Shape &shape, const std::vector<std::string> &names,
                                               const Loc &loc);
  std::optional<Value> scalarConstant(const Value &v);
  std::optional<int> foldedPredicate(Op op, const Value &a, const Value &b);
  Result<std::map<std::string, Value>> options(const Value &v, const std::vector<std::string> &allowed,
                                               const std::string &fn);
  Result<bool> boolOption(const Value &v, const std::string &key);
  Result<int64_t> normalizeAxis(const Value &v, int64_t rank, const Loc &loc, int node = -1);
  Result<std::vector<int64_t>> axesOption(const Value &v, int64_t rank, const Loc &loc, int node = -1);
  Result<ElemType> parseType(const Value &v);
  Result<Shape> shapeArg(const Value &v, const std::string &fn);
  static Value takeOptions(std::vector<Value> &args, size_t minPositional);
  Status arity(const std::string &fn, const std::vector<Value> &args, size_t lo, size_t hi, const Loc &loc);
  Result<int> tensorArg(const std::string &fn, const Value &v, const Loc &loc);
  Result<int64_t> intArg(const std::string &fn, const Value &v, const std::string &what, const Loc &loc);
  Shape shapeOfValue(const Value &v) { return v.kind == Value::Tensor ? g_.typeOf(v.node).shape : Shape{}; }
  /// A constant tensor's values (as doubles), if `node` is a constant.
  const Node *constantNode(int node) const;

  //===--------------------------------------------------------------------===//
  // Nx's library (NxLibrary.cpp dispatches; one file per family)
  //===--------------------------------------------------------------------===//
  Result<Value> callNx(const std::string &fn, std::vector<Value> args, const Loc &loc);
  // Element-wise (NxElementwise.cpp)
  Result<Value> nxFloatUnary(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxSameUnary(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxIntUnary(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxPredUnary(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxBinary(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxLog(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxAsType(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxSelect(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxClip(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxSquare(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  // Reductions (NxReductions.cpp)
  Result<Value> nxReduce(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxArgReduce(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxCumulative(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxLogsumexp(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxWindow(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<WindowSpec> windowSpec(const std::string &fn, int x, const Value &windowArg, const Value &opts,
                                const Loc &loc);
  Result<Value> nxVariance(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxWeightedMean(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxMedian(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxTriangle(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxDiagonal(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> reduce(const std::string &fn, std::vector<Value> args, const Loc &loc);
  // Shapes (NxShape.cpp)
  Result<Value> nxBroadcast(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxReshape(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxFlatten(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxNewAxis(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxSqueeze(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxTranspose(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxShapeQuery(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxReverse(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxConcatenate(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxPad(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxPadOuter(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxMode(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxRandomChoice(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxTile(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  int transpose(int x, const std::vector<int64_t> &perm, const Loc &loc);
  int reverse(int x, const std::vector<int64_t> &axes, const Loc &loc);
  Result<int> concatenate(const std::vector<int> &xs, int64_t axis, const Loc &loc);
  // Indexing (NxIndex.cpp)
  Result<Value> nxSlice(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxSliceAlongAxis(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxPutSlice(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxTake(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxIndexed(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxSort(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  /// Nx.slice with per-axis starts (numbers or scalar tensors), lengths, strides.
  Result<int> slice(int x, const std::vector<Value> &starts, const Shape &lengths, const std::vector<int64_t> &strides,
                    const Loc &loc);
  Result<Value> access(const Value &t, const Value &index, const Loc &loc);
  // Creation (NxCreation.cpp)
  Result<Value> nxTensor(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxIota(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxEye(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxFullLike(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Status flattenLiteral(const Value &v, size_t depth, Shape &shape, std::vector<const Value *> &leaves, const Loc &loc);
  Result<Value> tensorLiteral(std::vector<Value> args, const Loc &loc);
  // Linear algebra (NxLinAlg.cpp)
  Result<Value> nxDot(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxOuter(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxConv(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxNorm(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxTriangularSolve(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxSolve(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxInvert(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxDecomposition(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxQr(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  // Nx.vectorize and vectorized tensors through Nx's functions (NxVectorize.cpp)
  Result<Value> nxVectorize(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<std::optional<Value>> vectorizedCall(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> mapVectorized(const std::vector<Value> &args,
                              const std::function<Result<Value>(std::vector<Value> &)> &each, const Loc &loc);
  Result<Value> devectorized(const Value &v, bool keepNames, const Loc &loc);
  Result<Value> reshapeVectors(std::vector<Value> &args, const Loc &loc);
  Result<std::pair<std::vector<Value>, std::optional<Loc>>> vectorsArgs(const std::string &fn, std::vector<Value> &args,
                                                                        const Loc &loc);
  // complex numbers and the Fourier transforms (NxComplex.cpp)
  Result<Value> nxComplexPart(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxComplex(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  struct TransformArgs {
    int x = -1;
    int64_t axis = 0;
    double eps = 1.0e-10;
    std::map<std::string, Value> options;
  };
  Result<TransformArgs> transformArgs(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxFft(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxFft2(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxRfft(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> dft(int x, int64_t axis, int64_t length, bool inverse, double eps, const Loc &loc);
  Result<int64_t> dftLength(const Value *v, int64_t n, const Loc &loc);
  Result<std::pair<int, int>> fftParts(int re, int im, int64_t n, bool inverse, const Loc &loc);
  Result<double> dftEps(std::map<std::string, Value> &o, const Loc &loc);
  // eigh, svd and what is built on svd (NxSpectral.cpp)
  Result<Value> nxEigh(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxSvd(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxPinv(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxMatrixRank(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> hook(std::vector<Value> &args, const Loc &loc);
  Value token(const Loc &loc);
  Status checkToken(const Value &v, const std::string &fn, const Loc &loc);
  Result<Value> nxLeastSquares(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxMultivariateNormal(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<int64_t> iterationsOption(std::map<std::string, Value> &o, int64_t fallback, const std::string &fn,
                                   const Loc &loc);
  Result<double> toleranceOption(std::map<std::string, Value> &o, double fallback, const std::string &fn,
                                 const Loc &loc);
  Result<int> matrixArg(const std::string &fn, const Value &v, bool square, const Loc &loc);
  Result<std::vector<int>> singularValues(int a, bool full, int64_t maxIter, ElemType out, const Loc &loc);
  Result<int> pseudoInverse(int a, double eps, const Loc &loc);
  Result<Value> singularValueNorm(int x, bool nuclear, const Value &keepOptions, const Loc &loc);
  // Nx functions composed of others (NxConveniences.cpp)
  Result<Value> nxQuery(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxComposite(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  // reduce, window_reduce, window_scatter_max/min (NxGenericReductions.cpp)
  Result<Value> nxGenericReduce(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxWindowScatter(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  /// x behind a metadata node that grad rejects with Nx's message for `fn`.
  int noGradient(int x, const std::string &fn, const std::string &what, const std::string &name, const Loc &loc);
  /// For each window position, the coordinates (one tensor per axis, minus
  /// the spec's low padding) of the element the window selects: the last
  /// maximum (`max`) or minimum, as Nx's window_scatter_max/min choose.
  Result<std::vector<int>> windowChoices(int padded, const WindowSpec &w, const Shape &out, bool max,
                                         const Loc &loc);
  /// Windows of `padded` as [window elements, output positions...].
  Result<int> windowPatches(int padded, const WindowSpec &w, const Shape &out, const Loc &loc);
  /// Calls defn `name` of the built-in LinAlg prelude (lib/Sema/prelude).
  Result<Value> prelude(const std::string &name, std::vector<Value> args, const Loc &loc);
  /// Applies `each` to the matrices of `xs` that share the leading
  /// `batchRank` axes, one batch entry at a time (unrolled at trace time),
  /// and stacks each of its results back over those axes.
  Result<std::vector<int>> perMatrix(const std::vector<int> &xs, size_t batchRank,
                                     const std::function<Result<std::vector<int>>(const std::vector<int> &)> &each,
                                     const Loc &loc);
  int triangularSolve(int a, int b, bool lower, bool leftSide, bool transposeA, ElemType out, const Loc &loc);
  /// lu's {p, l, u} of a floating matrix, with Nx's gradient.
  Result<std::vector<int>> luFactors(int a, const Loc &loc);
  Result<std::vector<int64_t>> axisList(const Value &v, int64_t rank, const Loc &loc, const std::string &what,
                                        int node);
  Result<Value> dot(std::vector<Value> args, const Loc &loc);
  // Nx.Random (NxRandom.cpp)
  Result<Value> nxRandomKey(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxRandomSplit(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxRandomFoldIn(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxRandomSample(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<Value> nxRandomShuffle(const std::string &fn, std::vector<Value> &args, const Loc &loc);
  Result<int> checkKey(const Value &key, const std::string &fn, const Loc &loc);
  Result<std::pair<Value, Value>> threefryPair(Value x0, Value x1, int key, const Loc &loc);
  Result<int> threefryBits(int key, int64_t count, const Loc &loc);
  Result<int> randomBits(int key, const Shape &shape, int bits, const Loc &loc);

  //===--------------------------------------------------------------------===//
  // Automatic differentiation (Grad.cpp)
  //===--------------------------------------------------------------------===//
  /// `metadata` node kinds (the node's `param`): an alias that grad
  /// differentiates against, stop_grad, custom_grad, and clip (operands:
  /// the clipped value, then operand, min and max for the gradient).
  /// kNoGrad: an op Nx cannot differentiate; node.text holds Nx's message.
  static constexpr int kToGrad = 0, kStopGrad = 1, kCustomGrad = 2, kClip = 3, kNoGrad = 4;
  struct CustomGrad {
    std::vector<int> inputs;
    Value fn;
    Value structure;          ///< the output container
    std::vector<int> leaves;  ///< its metadata nodes, one per leaf
  };
  int metadata(int x, int kind, const Loc &loc);
  Result<Value> stopGrad(const Value &v, const Loc &loc);
  Result<Value> customGrad(std::vector<Value> &args, const Loc &loc);
  /// grad/2, value_and_grad/2,3.
  Result<Value> printValue(std::vector<Value> &args, const Loc &loc);
  Result<Value> printExpr(std::vector<Value> &args, const Loc &loc);
  Result<Value> gradCall(const std::string &name, std::vector<Value> &args, const Loc &loc);

private:
  const ast::File &file_;
  const ast::Module *module_ = nullptr;
  Graph g_;
  EagerEvaluator eager_;
  /// Nx.to_number/to_flat_list/to_list of `v` computed now (eager_), where
  /// no defn is being traced.
  Result<std::optional<Value>> eagerValues(const std::string &fn, const Value &v, const Loc &loc);
  /// Nonzero while a hook's function runs (its IO.inspect calls print).
  int hookCallbackDepth_ = 0;
  /// Nonzero while a while loop over vectorized state is traced for one of
  /// its entries (where devectorizing would see that entry alone).
  int entryLoopDepth_ = 0;
  /// The --fn's options, parsed (values may point into them).
  ast::ExprPtr options_;
  std::vector<const ast::Function *> stack_;
  /// Matching the heads of an Elixir function's clauses: a tensor fails to
  /// match a literal instead of being an error.
  bool matchingHeads_ = false;
  std::set<std::string> evaluatingAttributes_;
  /// Attribute values without tensors, evaluated once per trace.
  std::map<const ast::Attribute *, Value> attributeValues_;
  /// > 0 while module-level code (an attribute, a binding) runs: Elixir.
  int moduleLevel_ = 0;
  /// The node lists of the regions being traced (innermost last); empty at
  /// the top level.
  std::vector<std::vector<int> *> regions_;
  int depth_ = 0;
  /// Runtime while loops around the node being traced, and the most nxc
  /// nests: MLIR's and LLVM's loop passes take time that grows faster than
  /// the depth (300 levels: a minute), so deeper nests are refused with a
  /// located error instead of compiling for hours.
  int whileDepth_ = 0;
  static constexpr int kMaxWhileDepth = 128;
  /// Nesting eval() follows before it stops with a located error (nxc runs
  /// on a 512 MiB stack; a level takes a few hundred bytes).
  static constexpr int kMaxEvalDepth = 100000;
  /// The largest rank nxc accepts (Nx has no limit; generated loops nest
  /// once per axis).
  /// custom_grad metadata nodes: their inputs and gradient function.
  std::map<int, CustomGrad> customGrads_;

  friend class RegionScope;
  friend class Backprop;
};

/// Routes the nodes the tracer adds into `nodes` while alive.
class RegionScope {
public:
  RegionScope(Tracer &t, std::vector<int> &nodes) : t_(t) { t_.regions_.push_back(&nodes); }
  ~RegionScope() { t_.regions_.pop_back(); }
  RegionScope(const RegionScope &) = delete;
  RegionScope &operator=(const RegionScope &) = delete;

private:
  Tracer &t_;
};

} // namespace nxc::sema

#endif // NXC_LIB_SEMA_TRACER_H

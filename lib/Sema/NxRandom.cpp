//===- NxRandom.cpp - Nx.Random, bit for bit ------------------------------===//
//
// Nx.Random is itself written in defn; this traces the same computation:
// keys are u32[2], bits come from Threefry-2x32 with 20 rounds (the counter
// layout of Nx's threefry2x32: for N outputs, counts (j, N/2 + j) and the two
// result words concatenated; odd N pads with a 0 and drops the last), and
// samplers split the key, sample with keys[1] and return keys[0]. Floats
// come from the mantissa bits, normal from erf_inv of a uniform sample, with
// the constant folding Nx's expression builder applies (so that literal
// arguments give the numbers Nx gives).
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace nxc::sema {

std::vector<NxEntry> nxRandomFunctions() {
  return {{"Random.key", &Tracer::nxRandomKey},
          {"Random.split", &Tracer::nxRandomSplit},
          {"Random.fold_in", &Tracer::nxRandomFoldIn},
          {"Random.uniform", &Tracer::nxRandomSample},
          {"Random.uniform_split", &Tracer::nxRandomSample},
          {"Random.normal", &Tracer::nxRandomSample},
          {"Random.normal_split", &Tracer::nxRandomSample},
          {"Random.randint", &Tracer::nxRandomSample},
          {"Random.randint_split", &Tracer::nxRandomSample},
          {"Random.shuffle", &Tracer::nxRandomShuffle},
          {"Random.choice", &Tracer::nxRandomChoice},
          {"Random.gumbel", &Tracer::nxRandomSample},
          {"Random.gumbel_split", &Tracer::nxRandomSample}};
}

namespace {

const ElemType kU32{TypeKind::U, 32};
const ElemType kU64{TypeKind::U, 64};
const ElemType kS64{TypeKind::S, 64};

} // namespace

Result<int> Tracer::checkKey(const Value &key, const std::string &fn, const Loc &loc) {
  NXC_TRY(k, tensorArg(fn, key, loc));
  const TensorType &t = g_.typeOf(k);
  if (t.shape != Shape{2})
    return error(key.loc.valid() ? key.loc : loc,
                 fmt::format(FMT_STRING("expected key to have shape {{2}}, got tensor with shape {}"),
                             shapeString(t.shape)));
  if (t.elem != kU32)
    return error(key.loc.valid() ? key.loc : loc,
                 fmt::format(FMT_STRING("expected key with 32-bit unsigned integer type, got key with type {}"),
                             t.elem.name()));
  return k;
}

/// Threefry-2x32 (20 rounds) of the u32 counts (x0, x1) under key k (u32[2]).
Result<std::pair<Value, Value>> Tracer::threefryPair(Value x0, Value x1, int key, const Loc &loc) {
  std::vector<Value> i0 = {Value::number(0, loc)}, i1 = {Value::number(1, loc)};
  NXC_TRY(k0s, slice(key, i0, {1}, {1}, loc));
  NXC_TRY(k1s, slice(key, i1, {1}, {1}, loc));
  Value k0 = Value::tensor(reshape(k0s, {}, loc), loc), k1 = Value::tensor(reshape(k1s, {}, loc), loc);
  // u32 arithmetic wraps; bitwise ops and shifts are integer-only.
  auto op = [&](Op kind, const Value &a, const Value &b) {
    return binary(kind, a, b, kind == Op::Add ? BinaryRule::Arith : BinaryRule::IntOnly, loc);
  };
  NXC_TRY(k01, op(Op::BitwiseXor, k0, k1));
  NXC_TRY(k2, op(Op::BitwiseXor, k01, Value::number(0x1BD11BDA, loc)));
  Value ks[3] = {k0, k1, k2};
  static const int rotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  NXC_TRY(a0, op(Op::Add, x0, ks[0]));
  NXC_TRY(a1, op(Op::Add, x1, ks[1]));
  x0 = a0;
  x1 = a1;
  for (int i = 1; i <= 5; ++i) {
    for (int r : rotations[(i - 1) % 2]) {
      NXC_TRY(s0, op(Op::Add, x0, x1));
      NXC_TRY(left, op(Op::LeftShift, x1, Value::number(r, loc)));
      NXC_TRY(right, op(Op::RightShift, x1, Value::number(32 - r, loc)));
      NXC_TRY(rot, op(Op::BitwiseOr, left, right));
      NXC_TRY(s1, op(Op::BitwiseXor, rot, s0));
      x0 = s0;
      x1 = s1;
    }
    NXC_TRY(n0, op(Op::Add, x0, ks[i % 3]));
    NXC_TRY(k1i, op(Op::Add, ks[(i + 1) % 3], Value::number(i, loc)));
    NXC_TRY(n1, op(Op::Add, x1, k1i));
    x0 = n0;
    x1 = n1;
  }
  return std::make_pair(x0, x1);
}

/// threefry2x32(key, shape): `count` u32 values, flat.
Result<int> Tracer::threefryBits(int key, int64_t count, const Loc &loc) {
  int64_t padded = count + (count % 2), half = padded / 2;
  Value x0, x1;
  if (half <= 256) {
    std::vector<int64_t> c0(half), c1(half);
    for (int64_t j = 0; j < half; ++j) {
      c0[j] = j;
      c1[j] = half + j < count ? half + j : 0;
    }
    x0 = Value::tensor(constant(kU32, {half}, {}, c0, loc), loc);
    x1 = Value::tensor(constant(kU32, {half}, {}, c1, loc), loc);
  } else {
    // The counts computed at run time: j and half + j (0 for the padding).
    Node iota;
    iota.op = Op::Iota;
    iota.type = TensorType{kU32, {half}, {}};
    iota.loc = loc;
    x0 = Value::tensor(add(iota), loc);
    NXC_TRY(upper, binary(Op::Add, x0, Value::number(half, loc), BinaryRule::Arith, loc));
    x1 = upper;
    if (padded != count) {
      NXC_TRY(last, binary(Op::Equal, x0, Value::number(half - 1, loc), BinaryRule::Compare, loc));
      std::vector<Value> sel = {last, Value::tensor(constant(kU32, {}, {}, {0}, loc), loc), upper};
      NXC_TRY(s, nxSelect("select", sel, loc));
      x1 = s;
    }
  }
  NXC_TRY(ys, threefryPair(x0, x1, key, loc));
  NXC_TRY(all, concatenate({ys.first.node, ys.second.node}, 0, loc));
  if (padded == count) return all;
  return slice(all, {Value::number(0, loc)}, {count}, {1}, loc);
}

/// random_bits: `shape` values of `bits` width (u8/u16/u32/u64).
Result<int> Tracer::randomBits(int key, const Shape &shapeRef, int bits, const Loc &loc) {
  const Shape shape = shapeRef; // callers may pass a node's shape; adding nodes moves it
  int64_t n = 1;
  for (auto d : shape) n *= d;
  if (n > (int64_t(1) << 30)) return error(loc, "Nx.Random: the sample shape is too large");
  int r;
  if (bits == 64) {
    NXC_TRY(b, threefryBits(key, 2 * n, loc));
    int wide = cast(b, kU64, loc);
    NXC_TRY(hi, slice(wide, {Value::number(0, loc)}, {n}, {1}, loc));
    NXC_TRY(lo, slice(wide, {Value::number(n, loc)}, {n}, {1}, loc));
    NXC_TRY(sh, binary(Op::LeftShift, Value::tensor(hi, loc), Value::number(32, loc), BinaryRule::IntOnly, loc));
    NXC_TRY(o, binary(Op::BitwiseOr, sh, Value::tensor(lo, loc), BinaryRule::IntOnly, loc));
    r = o.node;
  } else {
    NXC_TRY(b, threefryBits(key, n, loc));
    r = bits == 32 ? b : cast(b, ElemType{TypeKind::U, bits}, loc);
  }
  return reshape(r, shape, loc);
}

Result<Value> Tracer::nxRandomKey(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity("Random.key", args, 1, 1, loc));
  const Value &seed = args[0];
  if (seed.kind == Value::Int) {
    uint64_t s = (uint64_t)seed.i;
    return Value::tensor(constant(kU32, {2}, {}, {(int64_t)(s >> 32), (int64_t)(s & 0xFFFFFFFFu)}, loc), loc);
  }
  if (seed.kind != Value::Tensor || g_.typeOf(seed.node).rank() != 0 ||
      (g_.typeOf(seed.node).elem != kU64 && g_.typeOf(seed.node).elem != kS64))
    return error(seed.loc.valid() ? seed.loc : loc,
                 fmt::format(FMT_STRING("expected seed to be an integer, u64 tensor or s64 tensor, got: {}"),
                             describeValue(seed)));
  int s = g_.typeOf(seed.node).elem == kS64 ? unaryNode(Op::Bitcast, seed.node, kU64, loc) : seed.node;
  NXC_TRY(hi, binary(Op::RightShift, Value::tensor(s, loc), Value::number(32, loc), BinaryRule::IntOnly, loc));
  NXC_TRY(lo, binary(Op::BitwiseAnd, Value::tensor(s, loc),
                     Value::tensor(constant(kU64, {}, {}, {0xFFFFFFFFll}, loc), loc), BinaryRule::IntOnly, loc));
  int h = reshape(cast(hi.node, kU32, loc), {1}, loc), l = reshape(cast(lo.node, kU32, loc), {1}, loc);
  NXC_TRY(k, concatenate({h, l}, 0, loc));
  return Value::tensor(k, loc);
}

Result<Value> Tracer::nxRandomSplit(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity("Random.split", args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"parts"}, "Nx.Random.split"));
  NXC_TRY(key, checkKey(args[0], "Random.split", loc));
  int64_t parts = 2;
  if (o.count("parts")) {
    NXC_TRY(p, intArg("Nx.Random.split", o["parts"], ":parts", loc));
    if (p < 1) return error(o["parts"].loc, "Nx.Random.split: :parts must be positive");
    parts = p;
  }
  NXC_TRY(bits, threefryBits(key, 2 * parts, loc));
  return Value::tensor(reshape(bits, {parts, 2}, loc), loc);
}

Result<Value> Tracer::nxRandomFoldIn(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity("Random.fold_in", args, 2, 2, loc));
  NXC_TRY(key, checkKey(args[0], "Random.fold_in", loc));
  NXC_TRY(data, tensorArg("Random.fold_in", args[1], loc));
  Shape shape = g_.typeOf(data).shape;
  int64_t n = g_.typeOf(data).numElements();
  int d = reshape(cast(data, kU64, loc), {n}, loc);
  NXC_TRY(hi, binary(Op::RightShift, Value::tensor(d, loc), Value::number(32, loc), BinaryRule::IntOnly, loc));
  NXC_TRY(lo, binary(Op::BitwiseAnd, Value::tensor(d, loc),
                     Value::tensor(constant(kU64, {}, {}, {0xFFFFFFFFll}, loc), loc), BinaryRule::IntOnly, loc));
  NXC_TRY(ys, threefryPair(Value::tensor(cast(hi.node, kU32, loc), loc), Value::tensor(cast(lo.node, kU32, loc), loc),
                           key, loc));
  int a = reshape(ys.first.node, {n, 1}, loc), b = reshape(ys.second.node, {n, 1}, loc);
  NXC_TRY(both, concatenate({a, b}, 1, loc));
  shape.push_back(2);
  return Value::tensor(reshape(both, shape, loc), loc);
}

/// choice(key, t, opts) or choice(key, t, p, opts): `samples` (1) draws
/// from `t` along `axis` (the whole tensor, flattened, when none), with
/// replacement (`replace: true`) or not; the draws themselves are the
/// prelude's (lib/Sema/prelude/Nx.exs), Nx's algorithms.
Result<Value> Tracer::nxRandomChoice(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = Value::keywords({}, loc);
  if (!args.empty() && args.back().kind == Value::List) {
    opts = args.back();
    args.pop_back();
  }
  NXC_CHECK(arity(fn, args, 2, 3, loc));
  NXC_TRY(o, options(opts, {"axis", "samples", "replace"}, "Nx.Random.choice"));
  NXC_TRY(key, checkKey(args[0], fn, loc));
  NXC_TRY(x, tensorArg(fn, args[1], loc));
  const TensorType t = g_.typeOf(x);
  if (t.rank() < 1) return error(loc, "tensor must have rank 1 or greater");
  bool hasAxis = o.count("axis") && !o["axis"].isNil();
  int64_t axis = 0, inputs = t.numElements();
  int tensor = x;
  if (hasAxis) {
    NXC_TRY(a, normalizeAxis(o["axis"], t.rank(), loc, x));
    axis = a;
    inputs = t.shape[axis];
  } else {
    tensor = reshape(x, {t.numElements()}, loc);
  }
  int64_t samples = 1;
  if (o.count("samples")) {
    if (o["samples"].kind != Value::Int) return error(loc, "Nx.Random.choice expects an integer :samples");
    samples = o["samples"].i;
  }
  if (samples < 1) return error(loc, fmt::format(FMT_STRING("must take at least one sample, got samples={}"), samples));
  bool replace = true;
  if (o.count("replace")) { NXC_TRY(r, boolOption(o["replace"], "replace")); replace = r; }
  if (!replace && samples > inputs)
    return error(loc, "cannot take more samples than the input size when replace: false");
  Value k = Value::tensor(key, loc), tv = Value::tensor(tensor, loc);
  Value n = Value::number(samples, loc), ax = Value::number(axis, loc);
  if (args.size() == 2) {
    if (replace) return prelude("choice_replace", {k, tv, Value::number(inputs, loc), n, ax}, loc);
    return prelude("choice_shuffle", {k, tv, n, ax}, loc);
  }
  NXC_TRY(p, tensorArg(fn, args[2], loc));
  const TensorType pt = g_.typeOf(p);
  if (pt.rank() != 1)
    return error(loc, fmt::format(FMT_STRING("probability tensor must have rank 1, got: {}"), pt.rank()));
  if (pt.shape[0] != inputs)
    return error(loc, fmt::format(FMT_STRING("probability tensor of size {} is expected to have size {}"), pt.shape[0],
                                  inputs));
  Value pv = Value::tensor(p, loc);
  if (replace) return prelude("choice_p_replace", {k, tv, pv, n, ax}, loc);
  return prelude("choice_p_gumbel", {k, tv, pv, n, ax}, loc);
}

/// shuffle: ceil(3 ln(size) / ln(2^32 - 1)) rounds, each a stable sort by
/// random u32 keys from split(key)[1], continuing with split(key)[0].
Result<Value> Tracer::nxRandomShuffle(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 2);
  NXC_CHECK(arity(fn, args, 2, 2, loc));
  NXC_TRY(o, options(opts, {"axis", "independent"}, "Nx.Random.shuffle"));
  NXC_TRY(key, checkKey(args[0], fn, loc));
  NXC_TRY(x, tensorArg(fn, args[1], loc));
  const TensorType t = g_.typeOf(x);
  if (t.rank() == 0) return error(loc, "Nx.Random.shuffle expects a tensor of rank 1 or more");
  int64_t axis = 0;
  if (o.count("axis")) {
    NXC_TRY(a, normalizeAxis(o["axis"], t.rank(), loc, x));
    axis = a;
  }
  bool independent = false;
  if (o.count("independent")) {
    NXC_TRY(ind, boolOption(o["independent"], "independent"));
    independent = ind;
  }
  // What gets sorted: the tensor itself, or a permutation of its axis.
  int subject = x;
  int64_t sortAxis = axis;
  if (!independent) {
    Node iota;
    iota.op = Op::Iota;
    iota.type = TensorType{ElemType::s32(), {t.shape[axis]}, {}};
    iota.loc = loc;
    subject = add(iota);
    sortAxis = 0;
  }
  int64_t size = g_.typeOf(subject).numElements();
  float roundsF = size <= 1 ? 0.0f : std::ceil(3.0f * std::log((float)size) / std::log(4294967295.0f));
  int64_t rounds = (int64_t)roundsF;
  for (int64_t r = 0; r < rounds; ++r) {
    NXC_TRY(bits, threefryBits(key, 4, loc));
    int keys = reshape(bits, {2, 2}, loc);
    NXC_TRY(k0, slice(keys, {Value::number(0, loc), Value::number(0, loc)}, {1, 2}, {1, 1}, loc));
    NXC_TRY(k1, slice(keys, {Value::number(1, loc), Value::number(0, loc)}, {1, 2}, {1, 1}, loc));
    Shape shape = g_.typeOf(subject).shape; // a copy: tracing adds nodes
    NXC_TRY(sortKeys, randomBits(reshape(k1, {2}, loc), shape, 32, loc));
    Node order;
    order.op = Op::Argsort;
    order.operands = {sortKeys};
    order.type = TensorType{ElemType::s32(), g_.typeOf(subject).shape, {}};
    order.axes = {sortAxis};
    order.attrs = {{"direction", {0}}};
    order.loc = loc;
    int idx = add(order);
    Node take;
    take.op = Op::TakeAlongAxis;
    take.operands = {subject, idx};
    take.type = g_.typeOf(subject);
    take.axes = {sortAxis};
    take.loc = loc;
    subject = add(take);
    key = reshape(k0, {2}, loc);
  }
  int result = subject;
  if (!independent) {
    Node take;
    take.op = Op::Take;
    take.operands = {x, subject};
    take.type = t;
    take.axes = {axis};
    take.loc = loc;
    result = add(take);
  }
  return Value::tuple({Value::tensor(named(result, namesOf(x)), loc), Value::tensor(key, loc)}, loc);
}

/// uniform/normal/randint and their _split forms.
Result<Value> Tracer::nxRandomSample(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  std::string name = fn.substr(7); // after "Random."
  bool split = name.size() > 6 && name.compare(name.size() - 6, 6, "_split") == 0;
  std::string kind = split ? name.substr(0, name.size() - 6) : name;
  std::string qual = "Nx.Random." + name;
  Value opts = takeOptions(args, 1);
  bool isRandint = kind == "randint";
  if (isRandint) NXC_CHECK(arity(fn, args, 3, 3, loc));
  else if (kind == "gumbel") NXC_CHECK(arity(fn, args, 1, 1, loc));
  else NXC_CHECK(arity(fn, args, args.size() <= 1 ? 1 : 3, 3, loc));
  NXC_TRY(o, options(opts, {"names", "type", "shape"}, qual));
  NXC_TRY(key0, checkKey(args[0], fn, loc));
  Value lo = args.size() == 3 ? args[1] : Value::real(0.0, loc);
  Value hi = args.size() == 3 ? args[2] : Value::real(1.0, loc);
  Shape shape;
  if (o.count("shape")) {
    NXC_TRY(s, shapeArg(o["shape"], qual));
    shape = s;
  }
  std::vector<std::string> names;
  if (o.count("names")) {
    NXC_TRY(nn, namesOption(o["names"], shape.size(), loc));
    names = nn;
  }
  // The sampling key, and the key returned beside the sample.
  int sampleKey = key0, nextKey = -1;
  if (!split) {
    NXC_TRY(bits, threefryBits(key0, 4, loc));
    int keys = reshape(bits, {2, 2}, loc);
    NXC_TRY(k0, slice(keys, {Value::number(0, loc), Value::number(0, loc)}, {1, 2}, {1, 1}, loc));
    NXC_TRY(k1, slice(keys, {Value::number(1, loc), Value::number(0, loc)}, {1, 2}, {1, 1}, loc));
    nextKey = reshape(k0, {2}, loc);
    sampleKey = reshape(k1, {2}, loc);
  }
  ElemType type;
  if (o.count("type")) {
    NXC_TRY(t, parseType(o["type"]));
    type = t;
  } else {
    type = mergeTypes(typeOfValue(lo), typeOfValue(hi));
    if (!isRandint) type = toFloating(type);
  }
  Value sample;
  if (isRandint) {
    if (!type.isInteger())
      return error(loc, fmt::format(FMT_STRING("expected integer type, got type {}"), type.name()));
    int bitsN = type.bits;
    Shape twice = shape;
    twice.insert(twice.begin(), 2);
    NXC_TRY(rb, randomBits(sampleKey, twice, bitsN, loc));
    int64_t n = 1;
    for (auto d : shape) n *= d;
    int flat = reshape(rb, {2 * n}, loc);
    NXC_TRY(hiBits, slice(flat, {Value::number(0, loc)}, {n}, {1}, loc));
    NXC_TRY(loBits, slice(flat, {Value::number(n, loc)}, {n}, {1}, loc));
    ElemType ut{TypeKind::U, bitsN};
    // span = (max - min) as u{nb}; everything after it in s64, as Nx computes it.
    NXC_TRY(minB, tensorArg(fn, lo, loc));
    NXC_TRY(maxB, tensorArg(fn, hi, loc));
    NXC_TRY(diff, binary(Op::Subtract, Value::tensor(maxB, loc), Value::tensor(minB, loc), BinaryRule::Arith, loc));
    Value span = Value::tensor(cast(cast(diff.node, ut, loc), kS64, loc), loc);
    int64_t m = (int64_t)1 << (bitsN / 2);
    NXC_TRY(mm, binary(Op::Remainder, Value::number(m, loc), span, BinaryRule::Arith, loc));
    NXC_TRY(mm2, binary(Op::Multiply, mm, mm, BinaryRule::Arith, loc));
    NXC_TRY(mult, binary(Op::Remainder, mm2, span, BinaryRule::Arith, loc));
    Value h = Value::tensor(cast(hiBits, kS64, loc), loc), l = Value::tensor(cast(loBits, kS64, loc), loc);
    NXC_TRY(hm, binary(Op::Remainder, h, span, BinaryRule::Arith, loc));
    NXC_TRY(hmm, binary(Op::Multiply, hm, mult, BinaryRule::Arith, loc));
    NXC_TRY(lm, binary(Op::Remainder, l, span, BinaryRule::Arith, loc));
    NXC_TRY(sum, binary(Op::Add, hmm, lm, BinaryRule::Arith, loc));
    NXC_TRY(off, binary(Op::Remainder, sum, span, BinaryRule::Arith, loc));
    NXC_TRY(res, binary(Op::Add, Value::tensor(cast(minB, kS64, loc), loc),
                        Value::tensor(reshape(off.node, shape, loc), loc), BinaryRule::Arith, loc));
    sample = Value::tensor(cast(res.node, type, loc), loc);
  } else {
    if (!type.isFloat())
      return error(loc, fmt::format(FMT_STRING("expected float or complex type, got type {}"), type.name()));
    // uniform_split(key, min, max) in `type`.
    auto uniform = [&](int key, Value minV, Value maxV) -> Result<Value> {
      int nb = type.bits;
      int mantissa = type.kind == TypeKind::BF ? 7 : nb == 16 ? 10 : nb == 32 ? 23 : 52;
      uint64_t oneBits = type.kind == TypeKind::BF ? 0x3F80 : nb == 16 ? 0x3C00 : nb == 32 ? 0x3F800000
                                                                                          : 0x3FF0000000000000ull;
      ElemType ut{TypeKind::U, nb};
      NXC_TRY(bits, randomBits(key, shape, nb, loc));
      NXC_TRY(sh, binary(Op::RightShift, Value::tensor(bits, loc), Value::number(nb - mantissa, loc),
                         BinaryRule::IntOnly, loc));
      int one = constant(ut, {}, {}, {(int64_t)oneBits}, loc);
      NXC_TRY(ored, binary(Op::BitwiseOr, sh, Value::tensor(one, loc), BinaryRule::IntOnly, loc));
      Value f = Value::tensor(unaryNode(Op::Bitcast, ored.node, type, loc), loc);
      NXC_TRY(f0, binary(Op::Subtract, f, Value::real(1.0, loc), BinaryRule::Arith, loc));
      f = f0;
      // Literal bounds fold as Nx folds constants: x * 1 and x + 0 vanish,
      // max - min is computed on the numbers.
      bool numbers = minV.isNumber() && maxV.isNumber();
      Value span;
      if (numbers) span = Value::real(maxV.asDouble() - minV.asDouble(), loc);
      else {
        NXC_TRY(a, tensorArg(qual, maxV, loc));
        NXC_TRY(b, tensorArg(qual, minV, loc));
        NXC_TRY(s, binary(Op::Subtract, Value::tensor(cast(a, type, loc), loc), Value::tensor(cast(b, type, loc), loc),
                          BinaryRule::Arith, loc));
        span = s;
      }
      if (!(span.isNumber() && span.asDouble() == 1.0)) {
        NXC_TRY(m, binary(Op::Multiply, f, span, BinaryRule::Arith, loc));
        f = m;
      }
      Value minT = minV.isNumber() ? Value::real(minV.asDouble(), loc) : Value::tensor(cast(minV.node, type, loc), loc);
      if (!(minV.isNumber() && minV.asDouble() == 0.0)) {
        NXC_TRY(s, binary(Op::Add, f, minT, BinaryRule::Arith, loc));
        f = s;
      }
      return binary(Op::Max, f, minT, BinaryRule::Arith, loc);
    };
    if (kind == "gumbel") {
      // -log(-log(u)), u from [smallest positive normal, 1): the minimum is
      // a tensor (not a folded constant), so 1 - min is computed in `type`.
      double tiny = type.bits == 64 ? 2.2250738585072014e-308 : type.bits == 32 ? 1.1754943508222875e-38
                    : type.kind == TypeKind::BF ? 1.1754943508222875e-38 : 6.103515625e-05;
      Value minT = Value::tensor(constant(type, {}, {tiny}, {}, loc), loc);
      NXC_TRY(u, uniform(sampleKey, minT, Value::tensor(constant(type, {}, {1.0}, {}, loc), loc)));
      // Each log in f64, rounded once to `type`, as Nx's reference backend
      // computes it (so the samples are Nx's bit for bit).
      ElemType f64{TypeKind::F, 64};
      auto log = [&](const Value &v) {
        int wide = unaryNode(Op::Log, cast(v.node, f64, loc), f64, loc);
        return Value::tensor(cast(wide, type, loc), loc);
      };
      std::vector<Value> n1 = {log(u)};
      NXC_TRY(neg, nxSameUnary("negate", n1, loc));
      std::vector<Value> n2 = {log(neg)};
      NXC_TRY(g, nxSameUnary("negate", n2, loc));
      sample = g;
    } else if (kind == "uniform") {
      for (const Value *v : {&lo, &hi})
        if (v->kind != Value::Tensor && !v->isNumber())
          return error(loc, fmt::format(FMT_STRING("{} expects numbers or tensors as bounds"), qual));
      NXC_TRY(u, uniform(sampleKey, lo, hi));
      sample = u;
    } else {
      // normal: u in (nextafter(-1), 1), then sqrt(2) * erf_inv(u) * std + mean.
      double minusOne;
      if (type.bits == 64) {
        uint64_t bitsV = 0xBFEFFFFFFFFFFFFFull;
        std::memcpy(&minusOne, &bitsV, 8);
      } else if (type.bits == 32) {
        uint32_t bitsV = 0xBF7FFFFFu;
        float fv;
        std::memcpy(&fv, &bitsV, 4);
        minusOne = fv;
      } else {
        minusOne = -0.99951171875; // the 16-bit IEEE half, also for bf16 (as Nx)
      }
      NXC_TRY(u, uniform(sampleKey, Value::real(minusOne, loc), Value::number(1, loc)));
      std::vector<Value> ea = {u};
      NXC_TRY(e, nxFloatUnary("erf_inv", ea, loc));
      // sqrt(2) folded in the sample type, as Nx folds Nx.sqrt of a constant.
      double sqrt2 = type.bits == 64 ? std::sqrt(2.0) : type.bits == 32 ? (double)std::sqrt(2.0f) : 1.4140625;
      const Value &mean = lo, &sd = hi;
      Value z;
      if (sd.isNumber()) {
        // sqrt2 * erf_inv(u), or constant(sd * sqrt2) * erf_inv(u).
        NXC_TRY(m, binary(Op::Multiply, Value::real(sd.asDouble() == 1.0 ? sqrt2 : sd.asDouble() * sqrt2, loc), e,
                          BinaryRule::Arith, loc));
        z = m;
      } else {
        NXC_TRY(sdT, tensorArg(qual, sd, loc));
        NXC_TRY(se, binary(Op::Multiply, Value::tensor(cast(sdT, type, loc), loc), e, BinaryRule::Arith, loc));
        NXC_TRY(m, binary(Op::Multiply, Value::real(sqrt2, loc), se, BinaryRule::Arith, loc));
        z = m;
      }
      if (!(mean.isNumber() && mean.asDouble() == 0.0)) {
        NXC_TRY(meanT, tensorArg(qual, mean, loc));
        NXC_TRY(a, binary(Op::Add, z, Value::tensor(cast(meanT, type, loc), loc), BinaryRule::Arith, loc));
        z = a;
      }
      sample = z;
    }
  }
  int s = reshape(sample.node, shape, loc);
  if (!names.empty()) s = named(s == sample.node ? reshape(sample.node, shape, loc) : s, names);
  Value out = Value::tensor(s, loc);
  if (split) return out;
  return Value::tuple({out, Value::tensor(nextKey, loc)}, loc);
}

} // namespace nxc::sema

//===- NxComplex.cpp - complex numbers and the discrete Fourier transform -===//
//
// Nx.real, imag, conjugate, phase and complex/2 with Nx's types (to_real,
// to_complex), and Nx.fft/ifft/fft2/ifft2/rfft/irfft with :length(s),
// :axis/:axes and :eps. The transforms are computed as Nx.BinaryBackend
// computes them (fftParts: its radix-2 recursion over DFTs of the odd factor,
// in f64), parts whose magnitude is at most :eps set to zero, then rounded to
// the result's part type: c64 results are Nx's; c128 ones may differ in the
// last bits where the odd factor's sums round in another order.
//
//===----------------------------------------------------------------------===//
#include "Tracer.h"

#include <fmt/format.h>

#include <cmath>

namespace nxc::sema {

std::vector<NxEntry> nxComplexFunctions() {
  return {{"real", &Tracer::nxComplexPart},  {"imag", &Tracer::nxComplexPart}, {"conjugate", &Tracer::nxComplexPart},
          {"phase", &Tracer::nxComplexPart}, {"complex", &Tracer::nxComplex},  {"fft", &Tracer::nxFft},
          {"ifft", &Tracer::nxFft},          {"fft2", &Tracer::nxFft2},        {"ifft2", &Tracer::nxFft2},
          {"rfft", &Tracer::nxRfft},         {"irfft", &Tracer::nxRfft}};
}

Result<Value> Tracer::nxComplexPart(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  TensorType in = g_.typeOf(x);
  if (fn == "conjugate") // of a real tensor too: Nx makes it complex
    return Value::tensor(unaryNode(Op::Conjugate, cast(x, toComplex(in.elem), loc), toComplex(in.elem), loc), loc);
  if (fn == "phase") { // atan2(imag, real), in to_real's type
    NXC_TRY(im, callNx("imag", {Value::tensor(x, loc)}, loc));
    NXC_TRY(re, callNx("real", {Value::tensor(x, loc)}, loc));
    return callNx("atan2", {im, re}, loc);
  }
  if (in.elem.isComplex())
    return Value::tensor(unaryNode(fn == "real" ? Op::Real : Op::Imag, x, toReal(in.elem), loc), loc);
  if (fn == "real") return Value::tensor(cast(x, toReal(in.elem), loc), loc);
  // imag of a real tensor: zeros of its floating type.
  ElemType t = toFloating(in.elem);
  return Value::tensor(named(broadcastTo(constant(t, {}, {0.0}, {}, loc), in.shape, loc), in.names), loc);
}

Result<Value> Tracer::nxComplex(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_CHECK(arity(fn, args, 2, 2, loc));
  NXC_TRY(re, toTensor(args[0], loc));
  NXC_TRY(im, toTensor(args[1], loc));
  if (g_.typeOf(re).elem.isComplex() || g_.typeOf(im).elem.isComplex())
    return error(loc, "Nx.complex/2 does not support complex inputs");
  ElemType t = toComplex(mergeTypes(g_.typeOf(re).elem, g_.typeOf(im).elem));
  // imag * i + real, as Nx computes it.
  Value i = Value::tensor(constant(t, {}, {0.0, 1.0}, {}, loc), loc);
  NXC_TRY(scaled, callNx("multiply", {Value::tensor(im, loc), i}, loc));
  return callNx("add", {scaled, Value::tensor(re, loc)}, loc);
}

/// The DFT of re + im i (f64, shape [..., n]) along the last axis, as
/// Nx.BinaryBackend computes it: n = 2^p * m with m odd, a DFT of m points
/// on each subsequence x[r::2^p] (by the m x m matrix of Nx's twiddles), then
/// p radix-2 stages pairing the subsequences as Nx's recursion does (the
/// even half's transform plus or minus the odd half's times exp(-2 pi i k /
/// size)). The inverse conjugates before and after and divides by n.
Result<std::pair<int, int>> Tracer::fftParts(int re, int im, int64_t n, bool inverse, const Loc &loc) {
  ElemType wide{TypeKind::F, 64};
  auto num = [&](int64_t v) { return Value::number(v, loc); };
  auto tensor = [&](int id) { return Value::tensor(id, loc); };
  auto call = [&](const char *fn, std::vector<Value> args) -> Result<int> {
    NXC_TRY(r, callNx(fn, std::move(args), loc));
    return r.node;
  };
  // Conjugation as 0 - x: a zero imaginary part comes out +0.0, as in Nx's results.
  auto negated = [&](int x) { return call("subtract", {Value::real(0.0, loc), tensor(x)}); };
  int64_t p = 0;
  while (((n >> p) & 1) == 0) ++p;
  int64_t m = n >> p, rows = int64_t(1) << p;
  constexpr int64_t kMaxOddFactor = 4096;
  if (m > kMaxOddFactor)
    return error(loc, fmt::format(FMT_STRING("nxc computes a transform of {} points as 2^{} transforms of {} points: "
                                             "that odd factor may be at most {}; pad with length: :power_of_two"),
                                  n, p, m, kMaxOddFactor));
  if (inverse) {
    NXC_TRY(c, negated(im));
    im = c;
  }
  Shape lead = g_.typeOf(re).shape;
  lead.pop_back();
  int64_t rank = (int64_t)lead.size() + 2;
  std::vector<Value> swap;
  for (int64_t d = 0; d < rank; ++d) swap.push_back(num(d == rank - 2 ? rank - 1 : d == rank - 1 ? rank - 2 : d));
  // Row r holds x[r::2^p]: [..., m, 2^p] transposed to [..., 2^p, m].
  for (int *x : {&re, &im}) {
    Shape s = lead;
    s.push_back(m);
    s.push_back(rows);
    NXC_TRY(t,
            call("transpose", {tensor(reshape(*x, s, loc)), Value::keywords({{"axes", Value::list(swap, loc)}}, loc)}));
    *x = t;
  }
  // The odd factor: sum over j of x_j (cos phi + i sin phi), phi = (-2 pi / m * k) * j
  // as Nx computes the angle (k = 0: the plain sum).
  if (m > 1) {
    std::vector<double> c((size_t)(m * m)), sn(c.size());
    for (int64_t j = 0; j < m; ++j)
      for (int64_t k = 0; k < m; ++k) {
        double phi = (-2 * M_PI / (double)m * (double)k) * (double)j;
        c[(size_t)(j * m + k)] = k == 0 ? 1.0 : std::cos(phi);
        sn[(size_t)(j * m + k)] = k == 0 ? 0.0 : std::sin(phi);
      }
    Value cm = tensor(constant(wide, {m, m}, c, {}, loc)), sm = tensor(constant(wide, {m, m}, sn, {}, loc));
    NXC_TRY(ac, call("dot", {tensor(re), cm}));
    NXC_TRY(as, call("dot", {tensor(re), sm}));
    NXC_TRY(bc, call("dot", {tensor(im), cm}));
    NXC_TRY(bs, call("dot", {tensor(im), sm}));
    NXC_TRY(r2, call("subtract", {tensor(ac), tensor(bs)}));
    NXC_TRY(i2, call("add", {tensor(as), tensor(bc)}));
    re = r2, im = i2;
  }
  // Radix-2 stages: rows r and r + half make row r of twice the length.
  for (int64_t count = rows, len = m; count > 1; count /= 2, len *= 2) {
    int64_t half = count / 2;
    std::vector<double> wr((size_t)len), wi((size_t)len);
    for (int64_t k = 0; k < len; ++k) {
      double theta = -2 * M_PI * (double)k / (double)(2 * len); // Complex.exp(Complex.new(0, theta))
      wr[(size_t)k] = std::cos(theta);
      wi[(size_t)k] = std::sin(theta);
    }
    Value twr = tensor(constant(wide, {len}, wr, {}, loc)), twi = tensor(constant(wide, {len}, wi, {}, loc));
    auto rowsOf = [&](int x, int64_t from) -> Result<int> {
      NXC_TRY(r, call("slice_along_axis",
                      {tensor(x), num(from), num(half), Value::keywords({{"axis", num(rank - 2)}}, loc)}));
      return r;
    };
    NXC_TRY(er, rowsOf(re, 0));
    NXC_TRY(ei, rowsOf(im, 0));
    NXC_TRY(orr, rowsOf(re, half));
    NXC_TRY(oi, rowsOf(im, half));
    // twiddle * odd, as Complex.multiply orders it.
    NXC_TRY(p1, call("multiply", {twr, tensor(orr)}));
    NXC_TRY(p2, call("multiply", {twi, tensor(oi)}));
    NXC_TRY(p3, call("multiply", {twi, tensor(orr)}));
    NXC_TRY(p4, call("multiply", {twr, tensor(oi)}));
    NXC_TRY(tr, call("subtract", {tensor(p1), tensor(p2)}));
    NXC_TRY(ti, call("add", {tensor(p3), tensor(p4)}));
    NXC_TRY(sr, call("add", {tensor(er), tensor(tr)}));
    NXC_TRY(si, call("add", {tensor(ei), tensor(ti)}));
    NXC_TRY(dr, call("subtract", {tensor(er), tensor(tr)}));
    NXC_TRY(di, call("subtract", {tensor(ei), tensor(ti)}));
    Value lastAxis = Value::keywords({{"axis", num(rank - 1)}}, loc);
    NXC_TRY(nr, call("concatenate", {Value::list({tensor(sr), tensor(dr)}, loc), lastAxis}));
    NXC_TRY(ni, call("concatenate", {Value::list({tensor(si), tensor(di)}, loc), lastAxis}));
    re = nr, im = ni;
  }
  Shape flat = lead;
  flat.push_back(n);
  re = reshape(re, flat, loc);
  im = reshape(im, flat, loc);
  if (inverse) {
    NXC_TRY(c, negated(im));
    NXC_TRY(r, call("divide", {tensor(re), Value::real((double)n, loc)}));
    NXC_TRY(i, call("divide", {tensor(c), Value::real((double)n, loc)}));
    re = r, im = i;
  }
  return std::make_pair(re, im);
}

/// The transform of `x` along `axis` to `length` points (x is padded with
/// zeros or cut), inverse or not; parts at most `eps` in magnitude are 0.
Result<Value> Tracer::dft(int x, int64_t axis, int64_t length, bool inverse, double eps, const Loc &loc) {
  TensorType in = g_.typeOf(x);
  ElemType out = toComplex(in.elem);
  ElemType wide{TypeKind::F, 64};
  auto num = [&](int64_t v) { return Value::number(v, loc); };
  auto tensor = [&](int id) { return Value::tensor(id, loc); };
  int64_t rank = in.rank(), last = rank - 1;
  // The transformed axis last.
  std::vector<Value> perm;
  for (int64_t a = 0; a < rank; ++a)
    if (a != axis) perm.push_back(num(a));
  perm.push_back(num(axis));
  Value v = tensor(x);
  if (axis != last) {
    NXC_TRY(t, callNx("transpose", {v, Value::keywords({{"axes", Value::list(perm, loc)}}, loc)}, loc));
    v = t;
  }
  int complexIn = cast(v.node, out, loc);
  int a = cast(unaryNode(Op::Real, complexIn, out.partType(), loc), wide, loc);
  int b = cast(unaryNode(Op::Imag, complexIn, out.partType(), loc), wide, loc);
  int64_t n = in.shape[axis];
  for (int *part : {&a, &b}) {
    if (length < n) {
      NXC_TRY(cut, callNx("slice_along_axis",
                          {tensor(*part), num(0), num(length), Value::keywords({{"axis", num(last)}}, loc)}, loc));
      *part = cut.node;
    } else if (length > n) {
      std::vector<Value> config;
      for (int64_t d = 0; d < rank; ++d)
        config.push_back(Value::tuple({num(0), num(d == last ? length - n : 0), num(0)}, loc));
      NXC_TRY(padded, callNx("pad", {tensor(*part), Value::real(0.0, loc), Value::list(config, loc)}, loc));
      *part = padded.node;
    }
  }
  NXC_TRY(spectrum, fftParts(a, b, length, inverse, loc));
  Value re = tensor(spectrum.first), im = tensor(spectrum.second);
  int parts[2];
  int k = 0;
  for (Value *p : {&re, &im}) {
    NXC_TRY(mag, callNx("abs", {*p}, loc));
    NXC_TRY(small, callNx("less_equal", {mag, Value::real(eps, loc)}, loc));
    NXC_TRY(cleaned, callNx("select", {small, Value::real(0.0, loc), *p}, loc));
    parts[k++] = cast(cleaned.node, out.partType(), loc);
  }
  Shape shape = g_.typeOf(parts[0]).shape;
  Value z = tensor(node(Op::Complex, {parts[0], parts[1]}, TensorType{out, shape, {}}, loc));
  if (axis == last) return z;
  // Back to the axes' order (the inverse of perm).
  std::vector<Value> back((size_t)rank);
  for (int64_t p = 0; p < rank; ++p) back[(size_t)perm[(size_t)p].i] = num(p);
  return callNx("transpose", {z, Value::keywords({{"axes", Value::list(back, loc)}}, loc)}, loc);
}

/// Nx's :length option of a transform along an axis of size `n`.
Result<int64_t> Tracer::dftLength(const Value *v, int64_t n, const Loc &loc) {
  if (!v || v->isNil()) return n;
  if (v->kind == Value::Atom && v->atom == "power_of_two") {
    int64_t p = 1;
    while (p < n) p *= 2;
    return p;
  }
  if (v->kind == Value::Int && v->i > 0) return v->i;
  return error(v->loc.valid() ? v->loc : loc,
               fmt::format(FMT_STRING("expected an integer or :power_of_two as length, got: {}"), describeValue(*v)));
}

Result<double> Tracer::dftEps(std::map<std::string, Value> &o, const Loc &loc) {
  if (!o.count("eps")) return 1.0e-10;
  if (!o["eps"].isNumber()) return error(o["eps"].loc.valid() ? o["eps"].loc : loc, "expected :eps to be a number");
  return o["eps"].asDouble();
}

/// The tensor, axis, :eps and options of a transform along one axis
/// (fft, ifft, rfft, irfft).
Result<Tracer::TransformArgs> Tracer::transformArgs(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  TransformArgs ta;
  NXC_TRY(o, options(opts, {"length", "axis", "eps"}, "Nx." + fn));
  ta.options = std::move(o);
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  ta.x = x;
  int64_t rank = g_.typeOf(x).rank();
  if (rank == 0) return error(loc, fmt::format(FMT_STRING("Nx.{} expects a tensor of rank 1 or more"), fn));
  NXC_TRY(axis, normalizeAxis(ta.options.count("axis") ? ta.options["axis"] : Value::number(-1, loc), rank, loc, x));
  ta.axis = axis;
  NXC_TRY(eps, dftEps(ta.options, loc));
  ta.eps = eps;
  return ta;
}

Result<Value> Tracer::nxFft(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_TRY(ta, transformArgs(fn, args, loc));
  Value *lengthOpt = ta.options.count("length") ? &ta.options["length"] : nullptr;
  NXC_TRY(length, dftLength(lengthOpt, g_.typeOf(ta.x).shape[ta.axis], loc));
  return dft(ta.x, ta.axis, length, fn == "ifft", ta.eps, loc);
}

Result<Value> Tracer::nxFft2(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  Value opts = takeOptions(args, 1);
  NXC_CHECK(arity(fn, args, 1, 1, loc));
  NXC_TRY(o, options(opts, {"lengths", "axes", "eps"}, "Nx." + fn));
  NXC_TRY(x, tensorArg(fn, args[0], loc));
  TensorType t = g_.typeOf(x);
  if (t.rank() < 2) return error(loc, fmt::format(FMT_STRING("Nx.{} expects a tensor of rank 2 or more"), fn));
  std::vector<int64_t> axes = {t.rank() - 2, t.rank() - 1};
  if (o.count("axes")) {
    const Value &a = o["axes"];
    if (a.kind != Value::List || a.elems.size() != 2)
      return error(a.loc.valid() ? a.loc : loc,
                   fmt::format(FMT_STRING("Nx.{} expects :axes to be a list of 2 axes"), fn));
    for (int k = 0; k < 2; ++k) {
      NXC_TRY(ax, normalizeAxis(a.elems[k], t.rank(), loc, x));
      axes[k] = ax;
    }
  }
  const Value *lengths = o.count("lengths") ? &o["lengths"] : nullptr;
  if (lengths && (lengths->kind != Value::List || lengths->elems.size() != 2))
    return error(lengths->loc.valid() ? lengths->loc : loc,
                 fmt::format(FMT_STRING("Nx.{} expects :lengths to be a list of 2 lengths"), fn));
  NXC_TRY(eps, dftEps(o, loc));
  // Along the second axis, then the first (each rounded, as Nx rounds).
  Value v = Value::tensor(x, loc);
  for (int k : {1, 0}) {
    NXC_TRY(len, dftLength(lengths ? &lengths->elems[(size_t)k] : nullptr, g_.typeOf(v.node).shape[axes[k]], loc));
    NXC_TRY(r, dft(v.node, axes[k], len, fn == "ifft2", eps, loc));
    v = r;
  }
  return v;
}

/// Nx.rfft and Nx.irfft as Nx defines them: the first half of fft's result,
/// and ifft's real part of the spectrum completed by its mirrored conjugate.
Result<Value> Tracer::nxRfft(const std::string &fn, std::vector<Value> &args, const Loc &loc) {
  NXC_TRY(ta, transformArgs(fn, args, loc));
  int x = ta.x;
  int64_t axis = ta.axis;
  double eps = ta.eps;
  auto &o = ta.options;
  TensorType t = g_.typeOf(x);
  auto num = [&](int64_t v) { return Value::number(v, loc); };
  Value axisOpt = Value::keywords({{"axis", num(axis)}}, loc);
  if (fn == "rfft") {
    if (t.elem.isComplex())
      return error(loc, fmt::format(FMT_STRING("Nx.rfft/2 expects a real tensor, got type: {{:c, {}}}"), t.elem.bits));
    NXC_TRY(length, dftLength(o.count("length") ? &o["length"] : nullptr, t.shape[axis], loc));
    NXC_TRY(spectrum, dft(x, axis, length, false, eps, loc));
    return callNx("slice_along_axis", {spectrum, num(0), num(length / 2 + 1), axisOpt}, loc);
  }
  int64_t have = t.shape[axis];
  int64_t n = 2 * (have - 1);
  if (o.count("length")) {
    const Value &l = o["length"];
    if (l.kind != Value::Int || l.i <= 0)
      return error(l.loc.valid() ? l.loc : loc,
                   fmt::format(FMT_STRING("expected a positive integer as length, got: {}"), describeValue(l)));
    n = l.i;
  }
  if (n <= 0) return error(loc, fmt::format(FMT_STRING("Nx.irfft: an axis of {} gives no length; pass :length"), have));
  int64_t m = n / 2 + 1;
  Value v = Value::tensor(x, loc);
  if (have > m) {
    NXC_TRY(cut, callNx("slice_along_axis", {v, num(0), num(m), axisOpt}, loc));
    v = cut;
  } else if (have < m) {
    std::vector<Value> config;
    for (int64_t d = 0; d < t.rank(); ++d)
      config.push_back(Value::tuple({num(0), num(d == axis ? m - have : 0), num(0)}, loc));
    NXC_TRY(padded, callNx("pad", {v, num(0), Value::list(config, loc)}, loc));
    v = padded;
  }
  if (n - m < 1) // Nx slices an empty mirror, which Nx.slice refuses
    return error(loc,
                 fmt::format(FMT_STRING("length at axis {} must be greater than or equal to 1, got: {}"), axis, n - m));
  NXC_TRY(mirrored, callNx("slice_along_axis", {v, num(1), num(n - m), axisOpt}, loc));
  NXC_TRY(conj, callNx("conjugate", {mirrored}, loc));
  NXC_TRY(rev, callNx("reverse", {conj, Value::keywords({{"axes", Value::list({num(axis)}, loc)}}, loc)}, loc));
  NXC_TRY(whole, callNx("concatenate", {Value::list({v, rev}, loc), axisOpt}, loc));
  NXC_TRY(back, dft(whole.node, axis, g_.typeOf(whole.node).shape[axis], true, eps, loc));
  return callNx("real", {back}, loc);
}

} // namespace nxc::sema

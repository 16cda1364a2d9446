#!/usr/bin/python3
"""Differential testing of `nxc jit` against real Nx.

Random well-typed defn programs over every Nx type (s8..s64, u8..u64, f16, bf16, f32, f64) are
evaluated by Nx itself (Nx.Defn.Evaluator on Nx.BinaryBackend, through oracle.exs) and by
`nxc jit`; results must agree in type, shape and value.

  generate --seed S --count N --out CASES.jsonl     random programs and inputs
  (Nx)     elixir -pa ... oracle.exs CASES.jsonl NX.jsonl
  corpus   --cases CASES.jsonl --nx NX.jsonl --nx-commit SHA --out CORPUS.jsonl
           joins both; cases where Nx raised are left out
  check    --nxc PATH --corpus CORPUS.jsonl [--jobs 2] [--keep DIR] [--limit N]
           runs every case through nxc and compares; exit 1 on any mismatch

A corpus line holds the program, its inputs and Nx's outputs (little-endian bytes in base64);
the first line names the Nx commit the outputs came from.

Programs use + - * / **, unary minus, Nx.max/min/atan2/remainder/quotient/pow, bitwise and/or/xor,
comparisons inside Nx.select, abs/sign/floor/ceil/round/bitwise_not/population_count/
count_leading_zeros, exp/log/sin/cos/tan/tanh/sigmoid/sqrt/rsqrt/atan/expm1/log1p/erf/erfc/
erf_inv/cbrt/sinh/cosh/asin/acos/asinh/acosh/atanh, as_type between all types (float -> integer
through Nx.clip into the target's range), sum/product/reduce_max/reduce_min/mean with axes and
keep_axes, Nx.dot/2 and Nx.dot/6 (batch and contraction axes), Nx.clip, transpose, reverse, slice
with strides, concatenate, pad (negative and interior), reshape, broadcast with axes, new_axis,
sort, argmax/argmin with tie_break and keep_axis, take, cumulative sum/product/max/min,
window sum/max/min/mean with strides, is_nan/is_infinity/logical ops, if/else on a scalar
predicate, number literals on either side, and tuple results. Inputs mix ordinary values with edge
values: 0, the extremes of each type, subnormals, NaN and, in some programs, +-Inf (then without
the operations BinaryBackend gets wrong on them: sign(-Inf) = 1.0, tanh(Inf) = NaN,
atan2(-1, -Inf) = +pi).

Comparison: integers exactly; floats exactly (NaN equals NaN) where every operation is exact in
IEEE arithmetic, otherwise within a tolerance that adds up the rounding error of each inexact
operation (transcendental functions, sums in another order, pow, dot), e, in units of eps of the
type it computes in:
    |nxc - nx| <= 4 e (|nx| + max |nx| over the tensor)
Operations that would amplify an inexact operand without bound (comparisons, floor/ceil/round/
sign, remainder, float -> integer) are only generated on exact operands.
The documented differences between nxc and Nx's BinaryBackend are applied:
  - bf16 rounds to nearest even in nxc (as EXLA); BinaryBackend truncates: each operation that
    produces bf16 counts as inexact;
  - float -> integer conversions out of range saturate in nxc (as EXLA); BinaryBackend wraps:
    the generator clips such operands into range;
  - signed zeros are not compared, and inputs hold no -0.0 (OTP 25 loses the sign of -0.0 in
    places, and BinaryBackend's round/floor/ceil return +0.0 for small negative values);
  - Nx.clip(NaN, lo, hi) is NaN in nxc (as EXLA), lo in BinaryBackend: programs with NaN inputs
    use no clip;
  - mixed signed/unsigned integers: nxc converts both to the merged type first (as EXLA),
    BinaryBackend compares mathematical values: u64 inputs stay below 2^63.
f32 sin/cos/tan are accurate for |x| < 2^30; the generator takes them of float parameters only.
"""

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np

np.seterr(all="ignore")

INTS = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]
FLOATS = ["f16", "bf16", "f32", "f64"]
TYPES = INTS + FLOATS
NP = {"s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64, "u8": np.uint8,
      "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "f16": np.float16, "bf16": np.uint16,
      "f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}
# A complex type's part type, whose precision its parts are compared at.
PART = {"c64": "f32", "c128": "f64"}
EPS = {"f16": 2.0 ** -10, "bf16": 2.0 ** -7, "f32": 2.0 ** -23, "f64": 2.0 ** -52}
# The spacing of subnormal numbers: below the normal range an inexact result's error is absolute.
TINY = {"f16": 2.0 ** -24, "bf16": 2.0 ** -133, "f32": 2.0 ** -149, "f64": 2.0 ** -1074}


def kind(t):
    return "bf" if t == "bf16" else t[0]


def bits(t):
    return int(t[-2:]) if t[-2:].isdigit() else int(t[1:])


def is_int(t):
    return t in INTS


# Nx.Type.merge / merge_number / to_floating, for choosing operations only (Nx decides).
ORDER = {"u": 0, "s": 1, "bf": 2, "f": 3}


def merge(a, b):
    ka, kb = kind(a), kind(b)
    if ka == kb:
        return a if bits(a) >= bits(b) else b
    if ORDER[ka] > ORDER[kb]:
        a, b, ka, kb = b, a, kb, ka
    if ka == "u" and kb == "s":
        return f"s{max(min(bits(a) * 2, 64), bits(b))}"
    return b


def usize(v):
    return 8 if v <= 255 else 16 if v <= 65535 else 32 if v <= 2**32 - 1 else 64


def ssize(v):
    m = -v - 1 if v < 0 else v
    return 8 if m <= 127 else 16 if m <= 32767 else 32 if m <= 2**31 - 1 else 64


def merge_number(t, n):
    if isinstance(n, float):
        return t if not is_int(t) else "f32"
    if kind(t) == "u":
        return f"u{max(usize(n), bits(t))}" if n >= 0 else merge_number(f"s{min(bits(t) * 2, 64)}", n)
    if kind(t) == "s":
        return f"s{max(ssize(n), bits(t))}"
    return t


def exactly_held(v, t):
    if t == "bf16":
        f = np.float32(v)
        return float(f) == v and int(np.array([f]).view(np.uint32)[0]) & 0xFFFF == 0
    return float(NP[t](v)) == v


def inward(v, t):
    """v moved toward zero until the type t holds it exactly (integers: v itself)."""
    if is_int(t):
        return v
    while not exactly_held(v, t):
        v = v - 1 if v > 0 else v + 1
    return v


NAN_SOURCES = ("Nx.log(", "Nx.sqrt(", "Nx.rsqrt(", "Nx.asin(", "Nx.acos(", "Nx.acosh(", "Nx.atanh(",
               "Nx.erf_inv(", "Nx.log1p(", "Nx.pow(", "**", "Nx.remainder(", " / ", "Nx.window_mean(",
               "Nx.mean(")


def may_be_nan(e):
    """Whether a float expression without NaN inputs can hold NaN: an operation that makes one."""
    return not is_int(e.type) and any(k in e.text for k in NAN_SOURCES)


def f16_overflow(ty, operands, edges):
    """An f16 result of operands whose values may lie beyond f16's range (65504): nxc (as EXLA)
    converts them to f16 first, to +-Inf, BinaryBackend computes with their own values (a
    documented difference)."""
    if ty != "f16":
        return False
    for e in operands:
        if e.number is not None or e.type in ("f16", "s8", "u8", "s16"):
            continue
        if is_int(e.type) or edges:
            return True
    return False


def to_float(t):
    return t if not is_int(t) else "f32"


def tmin(t):
    return int(np.iinfo(NP[t]).min)


def tmax(t):
    return int(np.iinfo(NP[t]).max)


# ----------------------------------------------------------------------------------------------
# Programs


class Expr:
    def __init__(self, text, type_, shape, inexact=0, atomic=False, number=None, param=False):
        self.text = text
        self.type = type_
        self.shape = tuple(shape)
        self.err = inexact              # relative error allowed: the sum of eps of every inexact
                                        # operation below (and including) this one
        self.atomic = atomic            # needs no parentheses as an operand
        self.number = number            # the Python value of a number literal
        self.param = param              # a parameter of the function
        self.cancel = False             # a sum or difference of inexact values: the error is
                                        # relative to the operands, not to the result

    def paren(self):
        return self.text if self.atomic else f"({self.text})"


def fmt_float(v):
    s = repr(float(v))
    if "e" in s and "." not in s.split("e")[0]:
        a, b = s.split("e")
        s = f"{a}.0e{b}"
    return s


def broadcastable(a, b):
    for x, y in zip(reversed(a), reversed(b)):
        if x != y and x != 1 and y != 1:
            return False
    return True


def bshape(a, b):
    r = max(len(a), len(b))
    a = (1,) * (r - len(a)) + tuple(a)
    b = (1,) * (r - len(b)) + tuple(b)
    return tuple(x if y == 1 else y for x, y in zip(a, b))


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.params = []      # (name, type, shape)
        self.index_range = {}  # name -> n: an index parameter, its values in [0, n)
        self.edges = rng.random() < 0.35
        self.budget = int(rng.integers(2, 9))
        self.infs = self.edges and rng.random() < 0.4   # +-Inf among the edge values

    def chance(self, p):
        return self.rng.random() < p

    def pick(self, seq, p=None):
        return seq[int(self.rng.choice(len(seq), p=p))]

    def rand_type(self):
        return self.pick(TYPES)

    def rand_shape(self):
        r = int(self.rng.integers(0, 4))
        return tuple(int(self.rng.integers(1, 5)) for _ in range(r))

    def param(self, shape, t=None):
        t = t or self.rand_type()
        for name, pt, ps in self.params:
            if ps == tuple(shape) and pt == t and name not in self.index_range and self.chance(0.5):
                return Expr(name, t, shape, atomic=True, param=True)
        name = self.fresh_name()
        self.params.append((name, t, tuple(shape)))
        return Expr(name, t, shape, atomic=True, param=True)

    def fresh_name(self):
        n = len(self.params)
        return "abcdeghjkmnpqrstuvwyz"[n] if n < 21 else f"p{n}"

    def index_param(self, shape, n):
        """A fresh integer parameter of indices in [0, n)."""
        name = self.fresh_name()
        t = self.pick(["s32", "s64", "u8", "u32", "s16"])
        self.params.append((name, t, tuple(shape)))
        self.index_range[name] = n
        return Expr(name, t, shape, atomic=True, param=True)

    def number(self, for_type):
        if is_int(for_type) or self.chance(0.3):
            v = int(self.pick([0, 1, 2, 3, -1, -2, 5, 7, 100, 255, 1000, 70000, -129]))
            if kind(for_type) == "u" and v < 0 and self.chance(0.7):
                v = -v
            return Expr(str(v), merge_number(for_type, v), (), atomic=v >= 0, number=v)
        v = float(self.pick([0.5, -0.5, 1.5, 2.0, -2.25, 0.1, 1.0e-3, 3.0, 1.0e5, 0.0]))
        return Expr(fmt_float(v), merge_number(for_type, v), (), atomic=not fmt_float(v).startswith("-"), number=v)

    def leaf(self, shape, t=None):
        if shape == () and self.chance(0.15):
            return self.number(t or self.rand_type())
        return self.param(shape, t)

    def operand_shapes(self, shape):
        """Two shapes that broadcast to `shape`."""
        def shrink(s):
            s = list(s)
            if s and self.chance(0.3):
                s = s[int(self.rng.integers(0, len(s) + 1)):]
            return tuple(1 if (d != 1 and self.chance(0.15)) else d for d in s)
        sa = shape if self.chance(0.6) else shrink(shape)
        sb = shape if self.chance(0.6) else shrink(shape)
        if bshape(sa, sb) != tuple(shape):
            sa = tuple(shape)  # together they must give the whole shape
        return sa, sb

    def gen(self, shape, depth, t=None):
        if depth <= 0 or self.budget <= 0:
            return self.leaf(shape, t)
        self.budget -= 1
        for _ in range(20):
            e = self.gen1(shape, depth, t)
            if e is not None:
                return e
        return self.leaf(shape, t)

    def gen1(self, shape, depth, t):
        op = self.pick(["binary", "unary", "math", "select", "as_type", "reduce", "dot", "clip", "number_op",
                        "shape", "dot_general", "scan", "window", "predicate"],
                       p=[0.2, 0.09, 0.13, 0.06, 0.08, 0.08, 0.04, 0.03, 0.06, 0.12, 0.03, 0.03, 0.03, 0.02])
        if op == "shape":
            return self.shape_op(shape, depth, t)
        if op == "dot_general":
            return self.dot_general(shape, depth, t)
        if op == "scan":
            return self.scan(shape, depth, t)
        if op == "window":
            return self.window(shape, depth, t)
        if op == "predicate":
            return self.predicate(shape, depth)
        if op == "binary":
            sa, sb = self.operand_shapes(shape)
            a, b = self.gen(sa, depth - 1, t), self.gen(sb, depth - 1)
            return self.binary(a, b, shape)
        if op == "number_op":
            a = self.gen(shape, depth - 1, t)
            n = self.number(a.type)
            return self.binary(n, a, shape) if self.chance(0.4) else self.binary(a, n, shape)
        if op == "unary":
            x = self.gen(shape, depth - 1, t)
            choices = ["negate", "abs", "sign"] + (["bitwise_not"] if is_int(x.type) else
                                                             ["floor", "ceil", "round"] if not x.err else [])
            u = self.pick(choices)
            if u in ("negate", "bitwise_not") and kind(x.type) == "u":
                return None  # wraps to values at or above 2^63 (see the mixed signed/unsigned difference)
            if u == "sign" and self.edges:
                return None  # BinaryBackend: sign(-Inf) = sign(NaN) = 1.0
            if u == "negate":
                return Expr(f"-{x.paren()}", x.type, x.shape, x.err)
            if u == "sign" and (x.err or may_be_nan(x)):
                return None  # BinaryBackend: sign(NaN) = 1.0
            if u == "bitwise_not" and self.chance(0.4):
                u = self.pick(["population_count", "count_leading_zeros"])
            return Expr(f"Nx.{u}({x.text})", x.type, x.shape, x.err, atomic=True)
        if op == "math":
            x = self.gen(shape, depth - 1, t)
            f = self.pick(["exp", "log", "sin", "cos", "tanh", "sigmoid", "sqrt", "rsqrt", "atan", "expm1",
                           "log1p", "erf", "cbrt", "tan", "sinh", "cosh", "asin", "acos", "asinh", "acosh",
                           "atanh", "erfc", "erf_inv"])
            if f in ("sinh", "cosh", "asin", "acos", "asinh", "acosh", "atanh", "erfc", "erf_inv") and \
                    (x.err or self.infs):
                # steep near their poles and ends: of exact operands only
                return None
            if f in ("sin", "cos", "tan", "tanh") and not (x.param and not is_int(x.type)):
                # of float parameters only: large arguments amplify any difference (and
                # BinaryBackend's tanh(Inf) is NaN)
                return None
            if f == "tanh" and self.infs:
                return None  # BinaryBackend: tanh(Inf) = NaN
            if f in ("log1p", "expm1") and self.edges:
                return None  # BinaryBackend computes them as log(1 + x) and exp(x) - 1
            ty = to_float(x.type)
            if f == "cbrt" and ty == "f64":
                # BinaryBackend's cbrt is pow(x, 1/3), some ulp off for large x
                return Expr(f"Nx.{f}({x.text})", ty, x.shape, x.err + 64 * EPS[ty], atomic=True)
            if f in ("exp", "expm1") and x.err:
                # relative error of the result = absolute error of the argument
                return Expr(f"Nx.{f}({x.text})", ty, x.shape, 100 * x.err + EPS[ty], atomic=True)
            exact = f == "sqrt" and ty in ("f32", "f64")
            e = Expr(f"Nx.{f}({x.text})", ty, x.shape, x.err + (0 if exact else EPS[ty]), atomic=True)
            # log(1 + d) = d: near 1 the argument's relative error becomes the result's absolute one
            # BinaryBackend's erfc is 1 - erf(x) here (complex 0.6 on OTP 25): right to an
            # absolute, not a relative, error
            e.cancel = x.cancel or (f == "log" and x.err > 0) or f == "erfc"
            return e
        if op == "select":
            sp = tuple(shape) if self.chance(0.7) else ()
            p1 = self.gen(sp, depth - 2)
            if p1.err:
                return None
            p2 = self.number(p1.type) if self.chance(0.5) else self.gen(sp, 0)
            if p1.type == "f16" and p2.number is not None and abs(p2.number) > 65504:
                return None  # the literal is Inf in f16 (nxc, EXLA) but exact in BinaryBackend
            if p2.number is None and f16_overflow(merge(p1.type, p2.type), (p1, p2), self.edges):
                return None
            cmp_ = self.pick(["<", ">", "<=", ">=", "==", "!="])
            sa, sb = self.operand_shapes(shape)
            a = self.gen(sa, depth - 1, t) if self.chance(0.8) else self.number(t or "f32")
            b = self.gen(sb, depth - 1) if self.chance(0.7) else self.number(a.type)
            if a.number is not None and b.number is not None:
                return None
            kinds = {a.type if a.number is None else "s32", b.type if b.number is None else "s32"}
            if "u64" in kinds and any(k[0] == "s" for k in kinds):
                return None  # mixed signed/unsigned
            ty = merge(a.type if a.number is None else ("s32" if isinstance(a.number, int) else "f32"),
                       b.type if b.number is None else ("s32" if isinstance(b.number, int) else "f32"))
            if f16_overflow(ty, (a, b), self.edges):
                return None
            return Expr(f"Nx.select({p1.paren()} {cmp_} {p2.paren()}, {a.text}, {b.text})", ty, shape,
                        a.err + b.err + (EPS["bf16"] if ty == "bf16" else 0), atomic=True)
        if op == "as_type":
            to = t or self.rand_type()
            x = self.gen(shape, depth - 1)
            if to == "u64" and kind(x.type) == "s":
                return None  # negative values wrap to 2^63 and above (mixed signed/unsigned)
            if to == "bf16" and (self.edges or (is_int(x.type) and bits(x.type) > 8)):
                return None  # rounding to bf16 differs (documented); near the top of a narrower
                             # type the two roundings overflow differently
            if not is_int(to) and not is_int(x.type) or is_int(x.type):
                ine = x.err + (EPS["bf16"] if to == "bf16" else 0)
                return Expr(f"Nx.as_type({x.text}, :{to})", to, shape, ine, atomic=True)
            # float -> integer: clipped into range first (Nx wraps, nxc saturates)
            if x.err or self.edges:
                return None
            # bounds the operand's type holds exactly: 32767 is 32768 in f16 and bf16, out of s16
            lo, hi = inward(max(tmin(to), -60000), x.type), inward(min(tmax(to), 60000), x.type)
            return Expr(f"Nx.as_type(Nx.clip({x.text}, {lo}, {hi}), :{to})", to, shape, 0, atomic=True)
        if op == "reduce":
            extra = tuple(int(self.rng.integers(1, 5)) for _ in range(int(self.rng.integers(1, 3))))
            pos = int(self.rng.integers(0, len(shape) + 1))
            full = shape[:pos] + extra + shape[pos:]
            if len(full) > 4:
                return None
            x = self.gen(full, depth - 1, None)
            axes = list(range(pos, pos + len(extra)))
            keep = self.chance(0.3)
            r = self.pick(["sum", "product", "reduce_max", "reduce_min", "mean"])
            if r == "mean" and is_int(x.type) and bits(x.type) >= 32:
                return None  # (see window_mean)
            if r in ("sum", "mean") and self.edges and x.type in ("f32", "bf16"):
                return None  # f32 and bf16 sums run in f32 (documented), BinaryBackend's in f64: near the top of
                             # the range partial sums overflow in one and not the other
            if r == "product" and (self.edges or x.err):
                return None  # nxc multiplies in the type (as EXLA), BinaryBackend in f64: they
                             # overflow and underflow at different points
            out = shape
            if r in ("sum", "product"):
                ty = x.type if not is_int(x.type) else ("s64" if x.type in ("s64", "u64") and kind(x.type) == "s"
                                                         else "u64" if x.type == "u64" else
                                                         "s32" if kind(x.type) == "s" else "u32")
            else:
                ty = to_float(x.type) if r == "mean" else x.type
            n = int(np.prod(extra))
            ine = x.err * (n if r == "product" else 1) + (n * EPS[ty] if r in ("sum", "product", "mean") and not is_int(ty) else 0)
            ax = ", ".join(map(str, axes))
            cancel = x.cancel or (r in ("sum", "mean") and x.err > 0)
            if keep:
                # keep_axes leaves ones where the axes were; squeeze gives the caller's shape
                e = Expr(f"Nx.squeeze(Nx.{r}({x.text}, axes: [{ax}], keep_axes: true), axes: [{ax}])",
                         ty, out, ine, atomic=True)
            else:
                e = Expr(f"Nx.{r}({x.text}, axes: [{ax}])", ty, out, ine, atomic=True)
            e.cancel = cancel
            return e
        if op == "dot":
            if len(shape) not in (0, 1, 2):
                return None
            k = int(self.rng.integers(1, 5))
            if len(shape) == 0:
                sa, sb = (k,), (k,)
            elif len(shape) == 1:
                sa, sb = ((shape[0], k), (k,)) if self.chance(0.5) else ((k,), (k, shape[0]))
            else:
                sa, sb = (shape[0], k), (k, shape[1])
            a, b = self.gen(sa, depth - 1, t), self.gen(sb, depth - 1)
            ty = merge(a.type, b.type)
            if "u64" in (a.type, b.type) and "s" in (kind(a.type), kind(b.type)):
                return None  # mixed signed/unsigned
            if self.edges or may_be_nan(a) or may_be_nan(b):
                return None  # BinaryBackend's dot turns NaN * 0 into 0
            if f16_overflow(ty, (a, b), self.edges):
                return None
            if not is_int(ty) and max(a.err, b.err) >= EPS["bf16"]:
                return None  # a bf16 rounding difference (documented) amplified by cancellation
            e = Expr(f"Nx.dot({a.text}, {b.text})", ty, shape,
                     a.err + b.err + (0 if is_int(ty) else k * EPS[ty]), atomic=True)
            e.cancel = a.cancel or b.cancel or a.err > 0 or b.err > 0
            return e
        if op == "clip":
            if self.edges:
                return None  # clip(NaN) is NaN in nxc (as EXLA), the lower bound in BinaryBackend
            x = self.gen(shape, depth - 1, t)
            if x.err or x.type == "u64":
                return None  # inexact operands may be NaN (log1p(-5)) or sit at a bound; u64
                             # merges with the s32 bounds (mixed signed/unsigned)
            lo, hi = sorted([self.number(x.type), self.number(x.type)], key=lambda e: e.number)
            if isinstance(lo.number, float) != isinstance(hi.number, float):
                return None
            ty = merge(merge(x.type, "f32" if isinstance(lo.number, float) else "s32"), "f32" if isinstance(hi.number, float) else "s32")
            return Expr(f"Nx.clip({x.text}, {lo.text}, {hi.text})", ty, shape, x.err, atomic=True)
        return None

    def shape_op(self, shape, depth, t):
        """Data movement: the values are kept, so is the error."""
        r = len(shape)
        which = self.pick(["transpose", "reverse", "slice", "concatenate", "pad", "reshape", "broadcast",
                           "new_axis", "sort", "argmax", "take", "cond"])
        if which == "take":
            # Nx.take(x, idx, axis: k): x's axis k replaced by idx's axes
            pos = int(self.rng.integers(0, r + 1))
            m = int(self.rng.integers(0, min(2, r - pos) + 1))
            n = int(self.rng.integers(1, 6))
            x = self.gen(shape[:pos] + (n,) + shape[pos + m:], depth - 1, t)
            idx = self.index_param(shape[pos:pos + m], n)
            return Expr(f"Nx.take({x.text}, {idx.text}, axis: {pos})", x.type, shape, x.err, atomic=True)
        if which == "cond":
            # if/else on a scalar predicate of exact values: both branches have the same type
            p = self.gen(shape, 0)
            a = self.gen(shape, depth - 1, t)
            b = self.gen(shape, depth - 1, a.type)
            if p.err or p.number is not None or a.type != b.type or a.number is not None or b.number is not None:
                return None
            q = self.number(p.type)
            f = self.pick(["any", "all"])
            e = Expr(f"if(Nx.{f}({p.paren()} > {q.paren()}), do: {a.text}, else: {b.text})", a.type, shape,
                     max(a.err, b.err), atomic=True)
            e.cancel = a.cancel or b.cancel
            return e
        if which == "transpose":
            if r < 2:
                return None
            perm = [int(i) for i in self.rng.permutation(r)]
            src = [0] * r
            for i, p in enumerate(perm):
                src[p] = shape[i]
            x = self.gen(tuple(src), depth - 1, t)
            return Expr(f"Nx.transpose({x.text}, axes: {perm})", x.type, shape, x.err, atomic=True)
        if which == "reverse":
            if r == 0:
                return None
            x = self.gen(shape, depth - 1, t)
            axes = sorted(int(a) for a in self.rng.choice(r, int(self.rng.integers(1, r + 1)), replace=False))
            return Expr(f"Nx.reverse({x.text}, axes: {axes})", x.type, shape, x.err, atomic=True)
        if which == "slice":
            if r == 0:
                return None
            strides = [int(self.pick([1, 1, 2, 3])) for _ in shape]
            starts = [int(self.rng.integers(0, 3)) for _ in shape]
            # Nx's lengths are extents in the operand; the result has ceil(length / stride) elements
            lengths = [(d - 1) * k + 1 + int(self.rng.integers(0, k)) for d, k in zip(shape, strides)]
            src = tuple(st + n + int(self.rng.integers(0, 2)) for st, n in zip(starts, lengths))
            x = self.gen(src, depth - 1, t)
            opt = f", strides: {strides}" if any(k != 1 for k in strides) else ""
            return Expr(f"Nx.slice({x.text}, {starts}, {lengths}{opt})", x.type, shape, x.err, atomic=True)
        if which == "concatenate":
            cands = [i for i, d in enumerate(shape) if d >= 2]
            if not cands:
                return None
            ax = self.pick(cands)
            cut = int(self.rng.integers(1, shape[ax]))
            a = self.gen(shape[:ax] + (cut,) + shape[ax + 1:], depth - 1, t)
            b = self.gen(shape[:ax] + (shape[ax] - cut,) + shape[ax + 1:], depth - 1, t or a.type)
            if "u64" in (a.type, b.type) and "s" in (kind(a.type), kind(b.type)):
                return None  # mixed signed/unsigned
            if f16_overflow(merge(a.type, b.type), (a, b), self.edges):
                return None
            return Expr(f"Nx.concatenate([{a.text}, {b.text}], axis: {ax})", merge(a.type, b.type), shape,
                        a.err + b.err + (EPS["bf16"] if "bf16" in (a.type, b.type) and a.type != b.type else 0),
                        atomic=True)
        if which == "pad":
            if r == 0:
                return None
            cfg, src = [], []
            for d in shape:
                for _ in range(20):
                    lo, hi, inner = int(self.rng.integers(-1, 3)), int(self.rng.integers(-1, 3)), int(self.pick([0, 0, 1, 2]))
                    # d = lo + hi + n + (n - 1) * inner for some n >= 1
                    rest = d - lo - hi + inner
                    if rest > 0 and rest % (inner + 1) == 0:
                        cfg.append((lo, hi, inner))
                        src.append(rest // (inner + 1))
                        break
                else:
                    cfg.append((0, 0, 0))
                    src.append(d)
            x = self.gen(tuple(src), depth - 1, t)
            v = self.number(x.type)
            if merge_number(x.type, v.number) != x.type:
                return None
            text = ", ".join(f"{{{lo}, {hi}, {i}}}" for lo, hi, i in cfg)
            # a float padding value rounds to bf16 differently (documented)
            ine = x.err + (EPS["bf16"] if x.type == "bf16" else 0)
            return Expr(f"Nx.pad({x.text}, {v.text}, [{text}])", x.type, shape, ine, atomic=True)
        if which == "reshape":
            n = int(np.prod(shape, dtype=np.int64))
            dims = [d for d in range(1, n + 1) if n % d == 0]
            first = self.pick(dims)
            src = (first, n // first) if self.chance(0.6) else (n,)
            x = self.gen(src, depth - 1, t)
            return Expr(f"Nx.reshape({x.text}, {{{', '.join(map(str, shape))}}})",
                        x.type, shape, x.err, atomic=True)
        if which == "broadcast":
            if r == 0:
                return None
            # an operand of rank k placed on chosen axes of the result
            k = int(self.rng.integers(0, r + 1))
            axes = sorted(int(a) for a in self.rng.choice(r, k, replace=False))
            src = tuple(shape[a] if self.chance(0.7) else 1 for a in axes)
            x = self.gen(src, depth - 1, t)
            dims = ", ".join(map(str, shape))
            return Expr(f"Nx.broadcast({x.text}, {{{dims}}}, axes: {axes})", x.type, shape, x.err, atomic=True)
        if which == "new_axis":
            if r == 0 or shape[0] != 1:
                return None
            x = self.gen(shape[1:], depth - 1, t)
            return Expr(f"Nx.new_axis({x.text}, 0)", x.type, shape, x.err, atomic=True)
        if which == "sort":
            if r == 0 or self.edges:
                return None  # where NaN sorts differs between backends
            x = self.gen(shape, depth - 1, t)
            if x.err or may_be_nan(x):
                return None  # near ties swap places; where NaN sorts differs
            ax = int(self.rng.integers(0, r))
            d = self.pick([":asc", ":desc"])
            return Expr(f"Nx.sort({x.text}, axis: {ax}, direction: {d})", x.type, shape, 0, atomic=True)
        if which == "argmax":
            if t is not None and t != "s32":
                return None
            pos = int(self.rng.integers(0, r + 1))
            full = shape[:pos] + (int(self.rng.integers(1, 6)),) + shape[pos:]
            x = self.gen(full, depth - 1)
            if x.err or self.edges or may_be_nan(x):
                return None  # near ties, and NaN (Nx returns the index of any NaN)
            f = self.pick(["argmax", "argmin"])
            tie = self.pick(["", ", tie_break: :high", ", tie_break: :low"])
            keep = self.chance(0.3)
            inner = f"Nx.{f}({x.text}, axis: {pos}{tie}{', keep_axis: true' if keep else ''})"
            if keep:
                inner = f"Nx.squeeze({inner}, axes: [{pos}])"
            return Expr(inner, "s32", shape, 0, atomic=True)
        return None

    def dot_general(self, shape, depth, t):
        """Nx.dot/6: leading batch axes, contraction over any other axes of either operand."""
        r = len(shape)
        nb = int(self.rng.integers(0, min(r, 2) + 1))
        batch, rest = shape[:nb], shape[nb:]
        cut = int(self.rng.integers(0, len(rest) + 1))
        afree, bfree = rest[:cut], rest[cut:]
        nc = int(self.rng.integers(1, 3))
        csize = [int(self.rng.integers(1, 5)) for _ in range(nc)]

        def layout(free):
            # the non-batch axes: free axes in order, contracted ones inserted anywhere
            slots = [("f", i) for i in range(len(free))]
            for c in range(nc):
                slots.insert(int(self.rng.integers(0, len(slots) + 1)), ("c", c))
            dims = batch + tuple(free[i] if k == "f" else csize[i] for k, i in slots)
            caxes = {i: nb + j for j, (k, i) in enumerate(slots) if k == "c"}
            return dims, caxes
        da, ca = layout(afree)
        db, cb = layout(bfree)
        if len(da) > 4 or len(db) > 4:
            return None
        order = [int(c) for c in self.rng.permutation(nc)]
        a = self.gen(da, depth - 1, t)
        b = self.gen(db, depth - 1)
        if "u64" in (a.type, b.type) and "s" in (kind(a.type), kind(b.type)):
            return None  # mixed signed/unsigned
        if self.edges or may_be_nan(a) or may_be_nan(b):
            return None  # BinaryBackend's dot turns NaN * 0 into 0
        ty = merge(a.type, b.type)
        if f16_overflow(ty, (a, b), self.edges):
            return None
        k = int(np.prod(csize))
        bl = list(range(nb))
        if not is_int(ty) and max(a.err, b.err) >= EPS["bf16"]:
            return None  # a bf16 rounding difference (documented) amplified by cancellation
        text = f"Nx.dot({a.text}, {[ca[c] for c in order]}, {bl}, {b.text}, {[cb[c] for c in order]}, {bl})"
        e = Expr(text, ty, shape, a.err + b.err + (0 if is_int(ty) else k * EPS[ty]), atomic=True)
        e.cancel = a.cancel or b.cancel or a.err > 0 or b.err > 0
        return e

    def scan(self, shape, depth, t):
        """Cumulative sums, products, maxima and minima along an axis."""
        if not shape:
            return None
        x = self.gen(shape, depth - 1, t)
        ax = int(self.rng.integers(0, len(shape)))
        f = self.pick(["cumulative_sum", "cumulative_product", "cumulative_max", "cumulative_min"])
        rev = ", reverse: true" if self.chance(0.3) else ""
        n = shape[ax]
        if f == "cumulative_sum" and self.edges and x.type in ("f32", "bf16"):
            return None  # partial sums near the top of the range (see reduce)
        if f == "cumulative_product" and (self.edges or x.err):
            return None  # overflows at different points (see product)
        if f in ("cumulative_max", "cumulative_min") and (self.edges or may_be_nan(x)):
            return None  # NaN: BinaryBackend compares it as a term
        ine = x.err
        if f in ("cumulative_sum", "cumulative_product") and not is_int(x.type):
            ine = x.err * (n if f == "cumulative_product" else 1) + n * EPS[x.type]
        e = Expr(f"Nx.{f}({x.text}, axis: {ax}{rev})", x.type, shape, ine, atomic=True)
        e.cancel = x.cancel or (f == "cumulative_sum" and ine > 0)
        return e

    def window(self, shape, depth, t):
        """window_sum/max/min/mean with strides and :valid or :same padding."""
        if not shape:
            return None
        win = tuple(int(self.rng.integers(1, 4)) for _ in shape)
        strides = tuple(int(self.pick([1, 1, 2])) for _ in shape)
        # :valid: out = (in - win) // stride + 1
        src = tuple((d - 1) * s + w + int(self.rng.integers(0, s)) for d, w, s in zip(shape, win, strides))
        f = self.pick(["window_sum", "window_max", "window_min", "window_mean"])
        x = self.gen(src, depth - 1, t)
        if f == "window_mean" and is_int(x.type) and bits(x.type) >= 32:
            return None  # sums of values near 2^31 wrap to huge means whose later f32 sums cancel
        if f in ("window_max", "window_min") and (self.edges or may_be_nan(x)):
            return None  # NaN: BinaryBackend compares it as a term
        if f in ("window_sum", "window_mean") and self.edges and x.type in ("f32", "bf16"):
            return None  # partial sums near the top of the range (see reduce)
        ty = to_float(x.type) if f == "window_mean" else x.type
        n = int(np.prod(win))
        ine = x.err + (n * EPS[ty] if f in ("window_sum", "window_mean") and not is_int(ty) else 0)
        opt = f", strides: {list(strides)}" if any(s != 1 for s in strides) else ""
        e = Expr(f"Nx.{f}({x.text}, {{{', '.join(map(str, win))}}}{opt})", ty,
                 shape, ine, atomic=True)
        e.cancel = x.cancel or (f in ("window_sum", "window_mean") and ine > 0)
        return e

    def predicate(self, shape, depth):
        """u8 results: is_nan, is_infinity, logical_and/or/xor/not of exact operands."""
        x = self.gen(shape, depth - 1)
        if x.err:
            return None
        f = self.pick(["is_nan", "is_infinity", "logical_not", "logical_and", "logical_or", "logical_xor"])
        if f in ("is_nan", "is_infinity", "logical_not"):
            return Expr(f"Nx.{f}({x.text})", "u8", shape, 0, atomic=True)
        y = self.gen(shape, depth - 1)
        if y.err:
            return None
        return Expr(f"Nx.{f}({x.text}, {y.text})", "u8", shape, 0, atomic=True)

    def binary(self, a, b, shape):
        if a.number is not None and b.number is not None:
            return None
        ta = a.type if a.number is None else None
        tb = b.type if b.number is None else None
        if ta and tb:
            ty = merge(ta, tb)
        else:
            ty = merge_number(ta or tb, (a if ta is None else b).number)
        ops = ["+", "-", "*", "/", "max", "min", "atan2", "remainder", "pow"]
        if is_int(ty):
            ops += ["quotient", "bitwise_and", "bitwise_or", "bitwise_xor"] * 2
        op = self.pick(ops)
        for e in (a, b):
            if isinstance(e.number, (int, float)) and ty == "f16" and abs(e.number) > 65504:
                return None  # the literal is Inf in f16 (nxc, EXLA) but exact in BinaryBackend
        if op == "pow" and (may_be_nan(a) or may_be_nan(b)):
            return None  # pow(NaN, 0) and pow(1, NaN) are 1 in nxc (IEEE), NaN in BinaryBackend
        if f16_overflow(ty, (a, b), self.edges):
            return None
        if self.edges and op in ("atan2", "pow"):
            return None  # BinaryBackend: atan2(-y, -Inf) = +pi, pow(1, NaN) = pow(NaN, 0) = NaN
        if op == "atan2" and (a.err or b.err or any(f"Nx.{r}(" in e.text for e in (a, b) for r in ("round", "floor", "ceil"))):
            return None  # the sign of a zero from rounding differs (documented), and inexact
                         # operands may be +-Inf (log(0)), which BinaryBackend gets wrong
        if op == "remainder" and not is_int(ty) and len({a.type, b.type}) > 1:
            return None  # an operand converted to the result type may overflow (bf16 -> f16)
        signed = [e for e in (a, b) if (e.number is None and kind(e.type) == "s") or
                  (isinstance(e.number, int) and e.number < 0)]
        if any(e.number is None and e.type == "u64" for e in (a, b)) and signed:
            return None  # mixed signed/unsigned: see the documented difference
        ine = a.err + b.err
        if ty == "bf16" and any(isinstance(e.number, float) and not exactly_held(e.number, "bf16") for e in (a, b)):
            ine += EPS["bf16"]  # the literal rounds to bf16 differently (documented)
        # BinaryBackend applies an op to its operands' own values and rounds the result only; nxc
        # (as EXLA) converts both to the result type first, which rounds integers too wide for it.
        mant = {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}
        if op == "/":
            ty = to_float(ty)
        if not is_int(ty) and any(e.number is None and is_int(e.type) and bits(e.type) - (kind(e.type) == "s") > mant[ty]
                                  for e in (a, b)):
            ine += EPS[ty]
            if op in ("remainder", "atan2", "pow", "max", "min"):
                return None
        if op == "/":
            ty = to_float(ty)
        if op == "atan2":
            ty = to_float(ty)
            ine += EPS[ty]
        if op in ("remainder", "quotient") and ine:
            return None  # amplifies the operands' errors by the quotient
        if op == "pow":
            if is_int(ty):
                if b.number is None:
                    return None
                if not isinstance(b.number, int) or not (0 <= b.number <= 3):
                    return None
            else:
                ine += 4 * EPS[ty] + (a.err + b.err) * 8
        if ty == "bf16":
            ine += EPS["bf16"]
        if op in ("+", "-", "*", "/"):
            e = Expr(f"{a.paren()} {op} {b.paren()}", ty, shape, ine)
            e.cancel = a.cancel or b.cancel or (op in ("+", "-") and (a.err > 0 or b.err > 0))
            return e
        if op == "pow" and self.chance(0.5):
            return Expr(f"{a.paren()} ** {b.paren()}", ty, shape, ine)
        return Expr(f"Nx.{op}({a.text}, {b.text})", ty, shape, ine, atomic=True)

    def data(self, t, shape):
        n = int(np.prod(shape, dtype=np.int64)) if shape else 1
        rng = self.rng
        if is_int(t):
            # u64 values stay below 2^63: BinaryBackend compares and clips mixed signed/unsigned
            # integers as mathematical integers, nxc (as EXLA) in the merged type.
            lo, hi = tmin(t), min(tmax(t), 2**63 - 1)
            small = rng.integers(max(lo, -6), min(hi, 7) + 1, size=n)
            vals = [int(v) for v in small]
            if self.edges or self.chance(0.3):
                for i in range(n):
                    if rng.random() < 0.3:
                        vals[i] = int(self.pick([lo, hi, 0, 1, lo + 1, hi - 1, 100, 127, 128, 255, 256]))
                        vals[i] = min(max(vals[i], lo), hi)
            return np.array(vals, dtype=NP[t]).reshape(shape)
        scale = 10.0 ** rng.integers(-2, 3)
        v = np.round(rng.standard_normal(n) * scale, int(rng.integers(0, 4)))
        if rng.random() < 0.3:
            v = rng.standard_normal(n) * scale
        if self.edges:
            info = {"f16": (65504.0, 6.1e-5, 6e-8), "bf16": (3.38e38, 1.18e-38, 9.2e-41),
                    "f32": (3.4e38, 1.18e-38, 1.4e-45), "f64": (1.79e308, 2.2e-308, 5e-324)}[t]
            for i in range(n):
                if rng.random() < 0.3:
                    v[i] = float(self.pick([0.0, info[0], -info[0], info[1], -info[1], info[2], 3 * info[2],
                                            np.nan, 0.5, -0.5, 1e-30, min(1e30, info[0])] +
                                           ([np.inf, -np.inf] if self.infs else [])))
        if t == "bf16":
            f = v.astype(np.float32).view(np.uint32)
            rounded = ((f + 0x7FFF + ((f >> 16) & 1)) >> 16).astype(np.uint16)
            rounded[np.isnan(v)] = 0x7FC0
            return rounded.reshape(shape)
        return v.astype(NP[t]).reshape(shape)


def generate_case(seed):
    rng = np.random.default_rng(seed)
    for _ in range(100):
        g = Gen(rng)
        shape = g.rand_shape()
        t = g.rand_type() if g.chance(0.5) else None
        e = g.gen(shape, int(rng.integers(1, 5)), t)
        results = [e]
        if g.chance(0.15):
            g.budget = int(rng.integers(1, 5))
            results.append(g.gen(g.rand_shape(), int(rng.integers(1, 3))))
        if not g.params or all(r.number is not None for r in results):
            continue
        if any(r.number is not None for r in results):
            continue
        body = results[0].text if len(results) == 1 else "{" + ", ".join(r.text for r in results) + "}"
        args = ", ".join(p[0] for p in g.params)
        source = f"defmodule F do\n  import Nx.Defn\n\n  defn f({args}) do\n    {body}\n  end\nend\n"
        inputs = []
        for name, pt, ps in g.params:
            if name in g.index_range:
                d = rng.integers(0, g.index_range[name], size=ps).astype(NP[pt])
            else:
                d = g.data(pt, ps)
            inputs.append({"type": pt, "shape": list(ps), "data": base64.b64encode(d.tobytes()).decode()})
        return {"id": int(seed), "source": source, "inputs": inputs,
                "tolerance": [r.err for r in results], "cancel": [r.cancel for r in results]}
    raise RuntimeError("could not generate a program")


def generate_complex_case(seed):
    """A random program over complex values (c64 or c128 parameters, or complex values built
    from real ones with Nx.complex): Complex's arithmetic and functions, conjugate, real, imag,
    abs, phase, sum, product, dot and fft, with complex and real results."""
    rng = np.random.default_rng(seed)
    ctype = "c64" if rng.random() < 0.75 else "c128"
    ptype = PART[ctype]
    shape = [int(rng.integers(1, 5))] + ([int(rng.integers(1, 4))] if rng.random() < 0.4 else [])
    params = []

    def param(t):
        name = f"p{len(params)}"
        params.append((name, t))
        return name

    unary = ["Nx.exp({})", "Nx.log({})", "Nx.sqrt({})", "Nx.sin({})", "Nx.cos({})", "Nx.tanh({})",
             "Nx.conjugate({})", "Nx.negate({})", "Nx.sigmoid({})", "Nx.expm1({})", "Nx.log1p({})",
             "Nx.rsqrt({})", "Nx.tan({})", "Nx.sinh({})", "Nx.cosh({})", "Nx.cbrt({})"]
    binary = ["({} + {})", "({} - {})", "({} * {})", "({} / {})", "Nx.pow({}, {})"]

    def leaf():
        r = rng.random()
        if r < 0.5 or not params:
            return param(ctype)
        if r < 0.8:
            return f"Nx.complex({param(ptype)}, {param(ptype)})"
        return params[int(rng.integers(0, len(params)))][0] if params[-1][1] == ctype else param(ctype)

    def expr(depth):
        if depth == 0:
            return leaf()
        r = rng.random()
        if r < 0.45:
            return unary[int(rng.integers(0, len(unary)))].format(expr(depth - 1))
        if r < 0.9:
            return binary[int(rng.integers(0, len(binary)))].format(expr(depth - 1), expr(depth - 1))
        return f"({expr(depth - 1)} * {float(np.round(rng.normal(), 3))})"

    z = expr(int(rng.integers(1, 4)))
    finals = [z, f"Nx.abs({z})", f"Nx.real({z})", f"Nx.imag({z})", f"Nx.phase({z})", f"Nx.sum({z}, axes: [0])",
              f"Nx.product({z}, axes: [0])", f"Nx.fft({z})", f"Nx.ifft({z})"]
    if len(shape) == 2:
        finals.append(f"Nx.dot({z}, [1], Nx.conjugate({z}), [1])")
    picks = sorted(set(int(i) for i in rng.integers(0, len(finals), size=int(rng.integers(1, 3)))))
    results = [finals[i] for i in picks]
    body = results[0] if len(results) == 1 else "{" + ", ".join(results) + "}"
    args = ", ".join(p[0] for p in params)
    source = f"defmodule F do\n  import Nx.Defn\n\n  defn f({args}) do\n    {body}\n  end\nend\n"
    inputs = []
    for _, t in params:
        d = rng.normal(0, 1.2, size=shape)
        if t in PART:
            d = d + 1j * rng.normal(0, 1.2, size=shape)
        inputs.append({"type": t, "shape": shape, "data": base64.b64encode(d.astype(NP[t]).tobytes()).decode()})
    # Functions of functions amplify rounding: a relative tolerance for every result.
    return {"id": int(seed), "source": source, "inputs": inputs, "tolerance": [1e-6] * len(results),
            "cancel": [True] * len(results)}


# ----------------------------------------------------------------------------------------------
# Running nxc and comparing


def decode(leaf):
    t = leaf["type"]
    raw = base64.b64decode(leaf["data"])
    a = np.frombuffer(raw, dtype=NP[t]).reshape(leaf["shape"])
    return t, a


def as_float(t, a):
    if t == "bf16":
        a = np.asarray(a)
        return (a.astype(np.uint32).reshape(-1) << 16).view(np.float32).astype(np.float64).reshape(a.shape)
    return a.astype(np.float64)


def wrapped_source(case, nx_leaves):
    """The program plus `nxdiff`, which takes bf16 parameters as u16 bits and returns bf16 results
    as u16 bits (.npy has no bf16)."""
    params = [f"x{i}" for i in range(len(case["inputs"]))]
    args = [f"Nx.bitcast({p}, :bf16)" if i["type"] == "bf16" else p for p, i in zip(params, case["inputs"])]
    n = len(nx_leaves)
    outs = [f"r{i}" for i in range(n)]
    conv = [f"Nx.bitcast({o}, :u16)" if leaf["type"] == "bf16" else o for o, leaf in zip(outs, nx_leaves)]
    call = f"f({', '.join(args)})"
    if n == 1:
        body = f"    r0 = {call}\n    {conv[0]}\n"
    else:
        body = f"    {{{', '.join(outs)}}} = {call}\n    {{{', '.join(conv)}}}\n"
    wrapper = f"\n  defn nxdiff({', '.join(params)}) do\n{body}  end\nend\n"
    src = case["source"].rstrip()
    assert src.endswith("end")
    return src[: -len("end")] + wrapper.lstrip("\n")


def compare_leaf(t, got, exp, tolerance, cancel=False):
    if got.shape != exp.shape:
        return f"shape {list(got.shape)}, Nx {list(exp.shape)}"
    shape = exp.shape
    got, exp = got.reshape(-1), exp.reshape(-1)

    def where(i):
        return list(map(int, np.unravel_index(i, shape))) if shape else []
    if t in PART:  # each part as a float of the part type, against the result's scale
        for name, part in (("real part", np.real), ("imaginary part", np.imag)):
            g, e = part(got), part(exp)
            scale = np.max(np.abs(np.concatenate([np.real(exp)[np.isfinite(np.real(exp))],
                                                  np.imag(exp)[np.isfinite(np.imag(exp))], [0.0]])))
            with np.errstate(invalid="ignore", over="ignore"):
                close = np.abs(g - e) <= np.maximum(4 * tolerance * (np.abs(e) + max(scale, 1.0)), 4 * TINY[PART[t]])
            same = close | (g == e) | (np.isnan(g) & np.isnan(e))
            bad = np.nonzero(~same)[0]
            if bad.size:
                i = bad[0]
                return f"{name} at {where(i)}: {g[i]!r}, Nx {e[i]!r} ({bad.size} of {g.size} differ)"
        return None
    if is_int(t):
        bad = np.nonzero(got != exp)[0]
        if bad.size:
            i = bad[0]
            return f"value at {where(i)}: {got[i]}, Nx {exp[i]}"
        return None
    g, e = as_float(t, got), as_float(t, exp)
    nan_ok = np.isnan(g) == np.isnan(e)
    if tolerance == 0:
        same = (g == e) | (np.isnan(g) & np.isnan(e))
    else:
        finite = np.isfinite(e)
        scale = np.max(np.abs(e[finite])) if finite.any() else 0.0
        if cancel:
            scale = max(scale, 1.0)
        with np.errstate(invalid="ignore", over="ignore"):
            tol = np.maximum(4 * tolerance * (np.abs(e) + scale), 4 * TINY[t])
            close = np.abs(g - e) <= tol
        same = close | (g == e) | (np.isnan(g) & np.isnan(e))
    same &= nan_ok
    bad = np.nonzero(~same)[0]
    if bad.size:
        i = bad[0]
        return f"value at {where(i)}: {g[i]!r}, Nx {e[i]!r} ({bad.size} of {g.size} differ)"
    return None


def check_case(nxc, case, workdir):
    d = tempfile.mkdtemp(dir=workdir)
    leaves = case["expected"]
    src = os.path.join(d, "p.nx")
    with open(src, "w") as fh:
        fh.write(wrapped_source(case, leaves))
    args = []
    for k, inp in enumerate(case["inputs"]):
        t = inp["type"]
        a = np.frombuffer(base64.b64decode(inp["data"]), dtype=NP[t]).reshape(inp["shape"])
        p = os.path.join(d, f"a{k}.npy")
        np.save(p, a)
        args.append(p)
    out = os.path.join(d, "out.npy" if len(leaves) == 1 else "out.npz")
    cmd = [nxc, "jit", src, "--fn", "nxdiff", *args, "-o", out, "--no-cache"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return "timed out"
    if proc.returncode != 0:
        return f"nxc exit {proc.returncode}: {proc.stderr.strip()[:400]}"
    if len(leaves) == 1:
        got = [np.load(out)]
    else:
        z = np.load(out)
        got = [z[f"arr_{i}"] for i in range(len(z.files))]
    if len(got) != len(leaves):
        return f"{len(got)} results, Nx {len(leaves)}"
    problems = []
    for i, (g, leaf) in enumerate(zip(got, leaves)):
        t, e = decode(leaf)
        want = np.uint16 if t == "bf16" else NP[t]
        if g.dtype != np.dtype(want):
            problems.append(f"result {i}: type {g.dtype}, Nx {t}")
            continue
        g = g.reshape(g.shape)
        msg = compare_leaf(t, g, e, case["tolerance"][i], case.get("cancel", [False] * len(leaves))[i])
        if msg:
            problems.append(f"result {i} ({t}): {msg}")
    return "; ".join(problems) or None


def load_jsonl(path):
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def cmd_generate(args):
    make = generate_complex_case if args.complex else generate_case
    with open(args.out, "w") as fh:
        for i in range(args.count):
            fh.write(json.dumps(make(args.seed * 1_000_000 + i)) + "\n")


def cmd_corpus(args):
    cases = {c["id"]: c for c in load_jsonl(args.cases)}
    kept = raised = 0
    with open(args.out, "w") as fh:
        fh.write(json.dumps({"nx_commit": args.nx_commit, "oracle": "Nx.Defn.Evaluator on Nx.BinaryBackend"}) + "\n")
        for r in load_jsonl(args.nx):
            if "error" in r:
                raised += 1
                continue
            c = cases[r["id"]]
            c["expected"] = r["leaves"]
            fh.write(json.dumps(c, separators=(",", ":")) + "\n")
            kept += 1
    print(f"{kept} cases kept, {raised} where Nx raised")


def cmd_check(args):
    lines = load_jsonl(args.corpus)
    header, cases = lines[0], lines[1:]
    if args.limit:
        cases = cases[: args.limit]
    work = tempfile.mkdtemp(prefix="nxdiff-")
    failures = []
    with ThreadPoolExecutor(args.jobs) as ex:
        for case, msg in zip(cases, ex.map(lambda c: check_case(args.nxc, c, work), cases)):
            if msg:
                failures.append((case, msg))
                if args.verbose:
                    print(f"MISMATCH {case['id']}: {msg}\n{case['source']}", flush=True)
    if args.keep and failures:
        os.makedirs(args.keep, exist_ok=True)
        with open(os.path.join(args.keep, "mismatches.jsonl"), "w") as fh:
            for case, msg in failures:
                fh.write(json.dumps(dict(case, mismatch=msg)) + "\n")
    print(f"{len(cases) - len(failures)} of {len(cases)} cases agree with Nx (commit {header.get('nx_commit', '?')[:12]})")
    if failures and not args.verbose:
        for case, msg in failures[:20]:
            print(f"MISMATCH {case['id']}: {msg}\n{case['source']}")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--count", type=int, default=100)
    g.add_argument("--out", required=True)
    g.add_argument("--complex", action="store_true", help="programs over complex values")
    c = sub.add_parser("corpus")
    c.add_argument("--cases", required=True)
    c.add_argument("--nx", required=True)
    c.add_argument("--nx-commit", required=True)
    c.add_argument("--out", required=True)
    k = sub.add_parser("check")
    k.add_argument("--nxc", required=True)
    k.add_argument("--corpus", required=True)
    k.add_argument("--jobs", type=int, default=2)
    k.add_argument("--limit", type=int, default=0)
    k.add_argument("--keep")
    k.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if args.cmd == "generate":
        return cmd_generate(args)
    if args.cmd == "corpus":
        return cmd_corpus(args)
    return cmd_check(args)


if __name__ == "__main__":
    sys.exit(main() or 0)

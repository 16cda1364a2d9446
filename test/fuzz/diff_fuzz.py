#!/usr/bin/python3
"""Differential fuzzing of `nxc jit` against a NumPy model of Nx's defn semantics.

Each run generates a random, well-typed defn program (random parameter types s8..u64/f32/f64,
small random shapes with ranks 0-3, dims 0-5 and the odd large dim), random inputs written as
.npy, runs `nxc jit FILE --fn f A.npy ... -o OUT.npy|OUT.npz`, and compares the result (values,
dtype and shape) with a reference computed in NumPy following Nx's defn semantics
(Nx.Type.merge / merge_number promotion, to_floating / to_aggregate, wrapping integer
arithmetic, truncating quotient/remainder, NaN-propagating max/min, right-aligned broadcasting).

The generator is data driven: inputs are drawn first and every sub-expression is evaluated while
the program is built, so an operation whose operands would leave the defined domain (log of a
non-positive value, integer division by zero, float->int casts out of range, non-finite
intermediate values...) is simply not emitted there.

Floating-point results are compared with a tolerance that grows with the conditioning of the
computation: the reference is evaluated twice, once in the program's own precision ("native",
f32 as f32) and once in long double ("hi"), and the tolerance is
    atol + rtol*|hi| + 16*|native - hi|.
Elements that depend on a discontinuous operation (floor, round, comparison, float->int cast,
sign, select...) applied to an inexact float value close to its discontinuity are marked
uncertain and skipped.

Findings:
  crash     nxc exits with a status other than 0/1, prints "internal compiler error", or hangs
  rejected  nxc exits with 1 on a valid program
  wrong     values, dtype or shape differ from the reference

Each finding is minimized automatically (the smallest failing sub-expression is taken as the
result, then its operands are replaced by parameters holding their values) and saved in the
--keep directory as NAME.nx, the inputs NAME.argK.npy, NAME.expected.npy/.npz and NAME.txt
(the command, observed and expected values).

Programs use: + - * / ** (numbers and tensors, folded number expressions, 0xff / 1_000 literals,
Nx.Constants.pi/e), unary -, not, comparisons, and/or, &&& ||| <<< >>>, div/rem/max/min, |> pipes,
exp/log/sqrt/tanh/sigmoid/sin/cos/... (every float unary nxc lists), abs/negate/sign/floor/ceil/
round/square, is_nan/is_infinity/logical_not/bitwise_not, max/min/atan2/quotient/remainder/
bitwise/logical ops, sum/product/reduce_max/reduce_min/mean/all/any with axes:/keep_axes:,
Nx.dot/2,4,6, broadcast (shape, axes:, or a tensor), reshape (:auto), transpose, squeeze,
new_axis, as_type, select, clip, iota, Nx.tensor literals, module attributes, defnp helpers,
variables (shared sub-expressions, dead statements), tuple results; half the programs are
written with only the parentheses Elixir's precedence needs. Float inputs sometimes hold NaN,
-0.0 and edge values (0.49999997, 1e20, ...).

Usage: /usr/bin/python3 test/fuzz/diff_fuzz.py --nxc PATH [--runs N] [--seed S] [--keep DIR]
                                               [--jobs 2] [--no-minimize] [--big] [--avoid LIST]
                                               [--print] [-v]
  --avoid all (or a comma-separated list, see --help) keeps the known nxc bugs out of the
  programs so that a run looks for new ones; --big draws larger shapes; --print shows the
  program and reference of --seed without running nxc. Exit status 1 when anything was found.
"""

import argparse
import errno
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from concurrent.futures import ProcessPoolExecutor

import numpy as np

np.seterr(all="ignore")

# ----------------------------------------------------------------------------------------------
# Types (Nx.Type)

INT_TYPES = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]
FLOAT_TYPES = ["f32", "f64"]
ALL_TYPES = INT_TYPES + FLOAT_TYPES
NP = {"s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
      "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
      "f32": np.float32, "f64": np.float64}
HI = np.longdouble
KIND_ORDER = {"u": 0, "s": 1, "f": 3}


def kind(t):
    return t[0]


def bits(t):
    return int(t[1:])


def is_int(t):
    return t[0] in "su"


def is_float(t):
    return t[0] == "f"


def tmin(t):
    return -(1 << (bits(t) - 1)) if kind(t) == "s" else 0


def tmax(t):
    return (1 << (bits(t) - 1)) - 1 if kind(t) == "s" else (1 << bits(t)) - 1


def merge(a, b):
    """Nx.Type.merge/2."""
    if kind(a) == kind(b):
        return kind(a) + str(max(bits(a), bits(b)))
    lo, hi = sorted([a, b], key=lambda t: KIND_ORDER[kind(t)])
    if kind(lo) == "u" and kind(hi) == "s":
        return "s" + str(max(min(bits(lo) * 2, 64), bits(hi)))
    return hi


def unsigned_size(x):
    if x <= 1:
        return 1
    if x <= 255:
        return 8
    if x <= 65535:
        return 16
    if x <= 4294967295:
        return 32
    return 64


def signed_size(x):
    if x < 0:
        return signed_size(-x - 1)
    if x <= 1:
        return 1
    if x <= 127:
        return 8
    if x <= 32767:
        return 16
    if x <= 2147483647:
        return 32
    return 64


def merge_number(t, n):
    """Nx.Type.merge_number/2."""
    if isinstance(n, float):
        return t if is_float(t) else "f32"
    if kind(t) == "u":
        if n >= 0:
            return "u" + str(max(unsigned_size(n), bits(t)))
        return merge_number("s" + str(min(bits(t) * 2, 64)), n)
    if kind(t) == "s":
        return "s" + str(max(signed_size(n), bits(t)))
    return t


def infer(n):
    return "f32" if isinstance(n, float) else "s32"


def to_floating(t):
    return t if is_float(t) else merge(t, "f32")


def to_aggregate(t):
    if t == "u64":
        return "s64"
    if kind(t) == "u":
        return "u32"
    if kind(t) == "s":
        return "s32" if bits(t) < 64 else "s64"
    return t


def binary_type(a, b):
    """Nx.Shared.binary_type/2: a and b are Nodes (number nodes have type None)."""
    if a.type is None and b.type is None:
        return infer(a.value + b.value) if not (isinstance(a.value, float) or isinstance(b.value, float)) else "f32"
    if a.type is None:
        return merge_number(b.type, a.value)
    if b.type is None:
        return merge_number(a.type, b.value)
    return merge(a.type, b.type)


def dt(t, mode):
    """NumPy dtype of Nx type t when evaluating in mode 'lo' (native) or 'hi'."""
    if mode == "hi" and is_float(t):
        return HI
    return NP[t]


# ----------------------------------------------------------------------------------------------
# Shapes


def broadcast_shapes(a, b):
    ra, rb = len(a), len(b)
    r = max(ra, rb)
    a1 = (1,) * (r - ra) + tuple(a)
    b1 = (1,) * (r - rb) + tuple(b)
    out = []
    for x, y in zip(a1, b1):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


def size_of(shape):
    return int(np.prod(shape, dtype=np.int64)) if shape else 1


def bcast(arr, shape):
    return np.broadcast_to(arr, shape)


def elixir_shape(shape):
    return "{" + ", ".join(str(d) for d in shape) + "}"


# ----------------------------------------------------------------------------------------------
# Numeric helpers


def wrap_int(v, t):
    """Python int v wrapped into integer type t."""
    m = 1 << bits(t)
    v %= m
    if kind(t) == "s" and v >= m // 2:
        v -= m
    return v


def trunc_div(a, b):
    """Integer division truncating toward zero (Erlang div)."""
    a = np.asarray(a)
    b = np.asarray(b, dtype=a.dtype)
    q = np.asarray(a // b, dtype=a.dtype)
    if a.dtype.kind == "u":
        return q
    r = a - q * b
    fix = (r != 0) & ((a < 0) != (b < 0))
    return np.where(fix, q + np.ones_like(q), q).astype(a.dtype)


def round_half_away(x):
    r = np.trunc(x)
    d = x - r
    return np.where(np.abs(d) >= 0.5, r + np.sign(x), r).astype(x.dtype)


def seq_reduce(x, axes, dtype, kind_):
    """Float sum/product accumulated sequentially (like a plain loop), in dtype."""
    x = np.asarray(x, dtype=dtype)
    nd = x.ndim
    axes = sorted(a % nd for a in axes) if nd else []
    keep = [i for i in range(nd) if i not in axes]
    xt = np.transpose(x, keep + axes) if nd else x
    out_shape = tuple(x.shape[i] for i in keep)
    n = size_of(tuple(x.shape[i] for i in axes))
    xt = xt.reshape(out_shape + (n,))
    if n == 0:
        return np.full(out_shape, 0 if kind_ == "sum" else 1, dtype=dtype)
    acc = np.cumsum(xt, axis=-1, dtype=dtype) if kind_ == "sum" else np.cumprod(xt, axis=-1, dtype=dtype)
    return np.asarray(acc[..., -1], dtype=dtype)


def erf_np(x):
    f = np.vectorize(lambda v: math.erf(float(v)), otypes=[np.float64])
    return f(x) if np.size(x) else np.zeros(np.shape(x))


def cbrt(x):
    return np.cbrt(x) if x.dtype != HI else np.sign(x) * np.abs(x) ** (HI(1) / 3)


# Unary float functions: name -> (numpy function, domain check on the native operand values)
UNARY_FLOAT = {
    "exp": (np.exp, lambda v: np.all(v < 60)),
    "expm1": (np.expm1, lambda v: np.all(v < 60)),
    "log": (np.log, lambda v: np.all(v > 1e-4)),
    "log1p": (np.log1p, lambda v: np.all(v > -1 + 1e-3)),
    "sqrt": (np.sqrt, lambda v: np.all(v >= 0)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), lambda v: np.all(v > 1e-3)),
    "cbrt": (cbrt, lambda v: True),
    "tanh": (np.tanh, lambda v: True),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), lambda v: True),
    "sin": (np.sin, lambda v: np.all(np.abs(v) < 1e4)),
    "cos": (np.cos, lambda v: np.all(np.abs(v) < 1e4)),
    "tan": (np.tan, lambda v: np.all(np.abs(np.cos(v.astype(np.float64))) > 0.05) and np.all(np.abs(v) < 1e3)),
    "atan": (np.arctan, lambda v: True),
    "sinh": (np.sinh, lambda v: np.all(np.abs(v) < 50)),
    "cosh": (np.cosh, lambda v: np.all(np.abs(v) < 50)),
    "asin": (np.arcsin, lambda v: np.all(np.abs(v) <= 0.99)),
    "acos": (np.arccos, lambda v: np.all(np.abs(v) <= 0.99)),
    "asinh": (np.arcsinh, lambda v: True),
    "acosh": (np.arccosh, lambda v: np.all(v >= 1.01)),
    "atanh": (np.arctanh, lambda v: np.all(np.abs(v) <= 0.99)),
    "erf": (lambda x: erf_np(x).astype(x.dtype), lambda v: True),
    "erfc": (lambda x: (1 - erf_np(x)).astype(x.dtype), lambda v: np.all(v < 3)),
}
# The most common ones get more weight.
UNARY_FLOAT_COMMON = ["exp", "log", "sqrt", "tanh", "sigmoid", "sin", "cos"]
UNARY_SAME = ["negate", "abs", "sign", "floor", "ceil", "round", "square"]
UNARY_PRED = ["logical_not", "is_nan", "is_infinity", "bitwise_not"]

ARITH = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "pow": "**"}
CMP = {"equal": "==", "not_equal": "!=", "less": "<", "greater": ">", "less_equal": "<=",
       "greater_equal": ">="}
CMP_NP = {"equal": np.equal, "not_equal": np.not_equal, "less": np.less, "greater": np.greater,
          "less_equal": np.less_equal, "greater_equal": np.greater_equal}
BITWISE = {"bitwise_and": "&&&", "bitwise_or": "|||", "left_shift": "<<<", "right_shift": ">>>", "bitwise_xor": None}
LOGICAL = {"logical_and": "and", "logical_or": "or", "logical_xor": None}
KERNEL_FUN = {"quotient": "div", "remainder": "rem", "max": "max", "min": "min"}

NICE_FLOATS = ["0.5", "1.5", "2.0", "0.25", "3.0", "0.1", "-0.5", "-2.0", "1.0e-3", "10.0", "2.5",
               "-1.5", "0.75", "100.0", "1.0"]


# Known nxc bugs can be kept out of the programs (--avoid) so that a run finds new ones.
AVOID_CHOICES = {
    "clip-type": "Nx.clip whose type differs between merge (Nx) and merge_number",
    "noaxes": "Nx.all/any over no axes (axes: [] or a scalar)",
    "f64-erf": "f64 cbrt/erf/erfc",
    "pow-base": "float ** with a zero or negative base",
    "trig-large": "sin/cos/tan of |x| > 100",
    "asinh-neg": "asinh of x < -5",
    "outer": "Nx.dot without contraction axes",
    "attr-tensor": "module attributes holding Nx.tensor(...)",
    "atan2-zero": "Nx.atan2 with a zero first operand",
    "hyp-large": "asinh/acosh of |x| > 1e18",
    "s2u64": "Nx.as_type(s8/s16/s32 tensor, :u64)",
    "intmin-div": "quotient/remainder of the type's minimum by -1",
    "wide-shift": "shifts by the bit width or more",
    "nonfinite-int": "Nx.as_type of NaN to an integer type",
    "round-half": "f32 Nx.round of values just below one half",
    "fmod": "float Nx.remainder",
}
SPECIAL_FLOATS = [0.49999997, -0.49999997, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 1e10, -1e10, 3e9, 1e20, -1e20,
                  0.1, 0.7, 1e-7, -0.0, 0.0, 8388609.0, 16777217.0, 123456.789, 65504.0, 1e-20, 2147483520.0,
                  -2147483648.0, 4294967040.0, 1.0, -1.0, 255.5, 127.9]
PROFILE = {"big": False}


def big_limit():
    return 200000 if PROFILE["big"] else 20000
AVOID = set()


def neq(a, b):
    """Elementwise a != b where NaN equals NaN."""
    d = a != b
    if np.asarray(a).dtype.kind == "f" or np.asarray(b).dtype.kind == "f":
        d = d & ~(np.isnan(np.asarray(a, dtype=np.float64)) & np.isnan(np.asarray(b, dtype=np.float64)))
    return d


class Reject(Exception):
    """The generator chose an op whose operands are out of its domain: try something else."""


# ----------------------------------------------------------------------------------------------
# Expression nodes


class Node:
    _ids = 0

    def __init__(self, op, children=(), type=None, shape=(), **attrs):
        Node._ids += 1
        self.id = Node._ids
        self.op = op
        self.children = list(children)
        self.type = type
        self.shape = tuple(shape)
        self.attrs = attrs
        self.name = None      # set when bound to a variable
        self.value = None     # for numbers
        self.val = None       # native reference values
        self.hi = None        # long-double reference values
        self.unc = None       # bool mask: elements the reference cannot predict
        self.inexact = False  # float values that may carry rounding/approximation error
        self.lowp = False     # the values carry f32 error
        self.mag = 0.0        # largest float magnitude in the computation of this node

    def is_num(self):
        return self.op == "num"

    def size(self):
        return 1 + sum(c.size() for c in self.children)

    def walk(self, seen=None):
        if seen is None:
            seen = set()
        if self.id in seen:
            return
        seen.add(self.id)
        for c in self.children:
            yield from c.walk(seen)
        yield self


def num_node(value, text=None):
    n = Node("num")
    n.value = value
    n.attrs["text"] = text if text is not None else repr(value)
    return n


def num_array(n, t, mode):
    """A number operand converted to type t (its Nx constant)."""
    if is_float(t):
        v = np.asarray(n.value, dtype=NP[t])  # the constant has the op's precision
        return v.astype(dt(t, mode))
    return np.asarray(int(n.value), dtype=np.int64 if int(n.value) < 0 or t[0] == "s" else np.uint64).astype(NP[t])


def operand(n, t, mode):
    """Values of operand n (node or number) converted to type t."""
    if n.is_num():
        return num_array(n, t, mode)
    v = n.val if mode == "lo" else n.hi
    return convert(v, n.type, t, mode)


def convert(v, src, t, mode):
    v = np.asarray(v)
    if is_float(t) and mode == "hi":
        if is_int(src):
            return v.astype(HI)
        return v.astype(HI)
    if is_float(src) and is_int(t):
        return np.trunc(v).astype(np.float64).astype(NP[t]) if v.size else v.astype(NP[t])
    return v.astype(NP[t])


def margin(n):
    """Per-element distance under which a float operand's value may differ from the reference."""
    if n.is_num() or not n.inexact:
        return np.zeros(n.shape if not n.is_num() else ())
    v = n.val.astype(np.float64)
    d = np.abs(v - n.hi.astype(np.float64))
    return 1e-4 * np.maximum(1.0, np.abs(v)) + 32 * d


def unc_of(n):
    return np.zeros((), dtype=bool) if n.is_num() else n.unc


def fits(v, t):
    """All values representable in type t (exactly for ints; for floats within range)."""
    v = np.asarray(v)
    if v.size == 0:
        return True
    if is_int(t):
        if v.dtype.kind == "f":
            return bool(np.all(np.isfinite(v)) and np.all(np.trunc(v) >= tmin(t)) and np.all(np.trunc(v) <= tmax(t)))
        lo, hi = int(v.min()), int(v.max())
        return tmin(t) <= lo and hi <= tmax(t)
    if v.dtype.kind in "iu":
        lim = 1 << (24 if t == "f32" else 53)
        return float(np.max(np.abs(v.astype(np.float64)))) <= lim
    return True


def operand_fits(n, t):
    if n.is_num():
        if isinstance(n.value, float):
            return True
        return (tmin(t) <= n.value <= tmax(t)) if is_int(t) else abs(n.value) <= (1 << 24)
    return fits(n.val, t)


def finite_ok(n):
    if not is_float(n.type) or n.val.size == 0:
        return True
    lim = 1e30 if n.type == "f32" else 1e250
    nan_lo = np.isnan(n.val.astype(np.float64))
    if np.any(nan_lo != np.isnan(n.hi.astype(np.float64))):
        return False
    for v in (n.val, n.hi):
        a = np.abs(v.astype(np.float64))[~nan_lo]
        if not np.all(np.isfinite(a)) or (a.size and a.max() > lim):
            return False
        nz = a[a != 0]
        if nz.size and nz.min() < (1e-30 if n.type == "f32" else 1e-250):
            return False
    return True


def finish(n, lo, hi, unc, inexact):
    n.val = np.asarray(lo).astype(NP[n.type]).reshape(n.shape)
    n.hi = np.asarray(hi).astype(dt(n.type, "hi")).reshape(n.shape) if is_float(n.type) else n.val
    n.unc = np.broadcast_to(np.asarray(unc, dtype=bool), n.shape).copy()
    n.inexact = bool(inexact) and is_float(n.type)
    # lowp: the values carry f32 rounding/approximation error (compare with f32 tolerances)
    n.lowp = (n.type == "f32" and n.inexact) or any(getattr(c, "lowp", False) for c in n.children)
    if not finite_ok(n):
        raise Reject("non-finite")
    # mag: the largest float magnitude among the values this node is computed from. nxc contracts
    # a*b+c into FMAs (and recomputes fused values per user), so a result that cancels can be off
    # by a few ulps of its intermediates rather than of itself.
    own = 0.0
    if is_float(n.type) and n.val.size:
        a = np.abs(n.val.astype(np.float64))
        a = a[np.isfinite(a)]
        own = float(a.max()) if a.size else 0.0
    n.mag = max([own] + [getattr(c, "mag", 0.0) for c in n.children if not c.is_num() and is_float(c.type)])
    return n


def children_unc(children, shape):
    u = np.zeros(shape, dtype=bool)
    for c in children:
        if not c.is_num():
            u = u | np.broadcast_to(c.unc, shape)
    return u


def has_nan(n):
    if n.is_num():
        return False
    return n.val.dtype.kind == "f" and bool(np.any(np.isnan(n.val)))


def any_unc(n):
    return (not n.is_num()) and bool(np.any(n.unc))


# ----------------------------------------------------------------------------------------------
# Node constructors: each evaluates the reference, raises Reject out of the domain.


def mk_param(idx, type, data):
    n = Node("param", type=type, shape=data.shape, index=idx)
    return finish(n, data, data.astype(dt(type, "hi")), False, False)


def mk_literal(type, values, shape, explicit_type, float_lit):
    n = Node("literal", type=type, shape=shape, values=values, explicit=explicit_type, float_lit=float_lit)
    if is_float(type):
        arr = np.array([float(v) for v in values], dtype=NP[type]).reshape(shape)
    else:
        arr = np.array([int(v) for v in values], dtype=object).reshape(shape).astype(NP[type])
    return finish(n, arr, arr.astype(dt(type, "hi")), False, False)


def mk_unary(op, x):
    if op in UNARY_FLOAT:
        t = to_floating(x.type)
        fn, dom = UNARY_FLOAT[op]
        a = operand(x, t, "lo")
        a64 = a.astype(np.float64)
        if not dom(a64[~np.isnan(a64)]) or any_unc(x) and op in ("log", "sqrt", "rsqrt", "acosh"):
            raise Reject(op)
        if "f64-erf" in AVOID and t == "f64" and op in ("cbrt", "erf", "erfc"):
            raise Reject("avoid")
        if "trig-large" in AVOID and op in ("sin", "cos", "tan") and np.any(np.abs(a64) > 100):
            raise Reject("avoid")
        if "asinh-neg" in AVOID and op == "asinh" and np.any(a64 < -5):
            raise Reject("avoid")
        if "hyp-large" in AVOID and op in ("asinh", "acosh") and np.any(np.abs(a64) > 1e18):
            raise Reject("avoid")
        if op in ("log", "sqrt", "rsqrt", "acosh", "log1p", "asin", "acos", "atanh") and x.inexact:
            # keep away from the edge of the domain with inexact operands
            m = margin(x)
            edge = {"log": 0, "sqrt": 0, "rsqrt": 0, "acosh": 1, "log1p": -1}.get(op)
            if edge is not None and np.any(a64 - edge <= m):
                raise Reject(op)
        n = Node(op, [x], type=t, shape=x.shape)
        lo = fn(a)
        hi = fn(operand(x, t, "hi"))
        return finish(n, lo, hi, x.unc, True)
    if op in UNARY_PRED:
        if op == "bitwise_not":
            if not is_int(x.type):
                raise Reject("int only")
            n = Node(op, [x], type=x.type, shape=x.shape)
            lo = np.invert(x.val)
            return finish(n, lo, lo, x.unc, False)
        n = Node(op, [x], type="u8", shape=x.shape)
        unc = x.unc.copy()
        v = x.val
        if op == "logical_not":
            lo = (v == 0)
            if x.inexact:
                unc |= np.abs(v.astype(np.float64)) <= margin(x)
        elif op == "is_nan":
            lo = np.isnan(v) if is_float(x.type) else np.zeros(v.shape, bool)
        else:
            lo = np.isinf(v) if is_float(x.type) else np.zeros(v.shape, bool)
        lo = lo.astype(np.uint8)
        return finish(n, lo, lo, unc, False)
    t = x.type
    n = Node(op, [x], type=t, shape=x.shape)
    unc = x.unc.copy()
    a_lo, a_hi = x.val, x.hi
    if op == "negate":
        f = np.negative
    elif op == "abs":
        f = np.abs
    elif op == "square":
        f = lambda v: v * v
    elif op == "sign":
        f = np.sign
        if is_float(t):
            unc |= np.abs(a_lo.astype(np.float64)) <= margin(x)
    elif op in ("floor", "ceil", "round"):
        if is_int(t):
            f = lambda v: v
        else:
            f = {"floor": np.floor, "ceil": np.ceil, "round": round_half_away}[op]
            v = a_lo.astype(np.float64)
            if op == "round" and t == "f32" and "round-half" in AVOID and np.any((np.abs(v) > 0.49) & (np.abs(v) < 0.5)):
                raise Reject("avoid")
            if op == "round":
                dist = np.abs(v - (np.floor(v) + 0.5))
            else:
                dist = np.abs(v - np.round(v))
            unc |= dist <= margin(x)
    else:
        raise AssertionError(op)
    lo = f(a_lo)
    hi = f(a_hi) if is_float(t) else lo
    if is_float(t) and op in ("sign", "floor", "ceil", "round"):
        unc |= neq(lo.astype(np.float64), hi.astype(np.float64))
    inexact = x.inexact and op in ("negate", "abs", "square") or (op == "square" and is_float(t))
    return finish(n, lo, hi, unc, inexact)


def mk_binary(op, a, b, style):
    t = binary_type(a, b)
    shape = broadcast_shapes(a.shape if not a.is_num() else (), b.shape if not b.is_num() else ())
    if shape is None:
        raise Reject("shape")
    n = Node(op, [a, b], type=None, shape=shape, style=style)
    unc = children_unc([a, b], shape)
    if op in CMP:
        ct = t
        n.type = "u8"
        if not (operand_fits(a, ct) and operand_fits(b, ct)):
            raise Reject("cmp range")
        x, y = operand(a, ct, "lo"), operand(b, ct, "lo")
        lo = CMP_NP[op](x, y).astype(np.uint8)
        if is_float(ct):
            xh, yh = operand(a, ct, "hi"), operand(b, ct, "hi")
            hi = CMP_NP[op](xh, yh).astype(np.uint8)
            dist = np.abs(x.astype(np.float64) - y.astype(np.float64))
            unc = unc | (dist <= margin(a) + margin(b)) | (lo != hi)
        return finish(n, lo, lo, unc, False)
    if op in LOGICAL:
        n.type = "u8"
        x = operand(a, a.type or infer(a.value), "lo") != 0 if not a.is_num() else np.asarray(a.value != 0)
        y = operand(b, b.type or infer(b.value), "lo") != 0 if not b.is_num() else np.asarray(b.value != 0)
        for c in (a, b):
            if not c.is_num() and c.inexact:
                unc = unc | np.broadcast_to(np.abs(c.val.astype(np.float64)) <= margin(c), shape)
        f = {"logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor}[op]
        lo = f(x, y).astype(np.uint8)
        return finish(n, lo, lo, unc, False)
    if op == "divide" or op == "atan2":
        t = to_floating(t)
    n.type = t
    if op in ("quotient", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift") and not is_int(t):
        raise Reject("int only")
    if op == "remainder" and is_float(t) and "fmod" in AVOID:
        raise Reject("avoid")
    if op == "remainder" and is_float(t):
        # fmod is discontinuous where x/y is an integer: only exact operands
        if any((not c.is_num()) and (c.inexact or any_unc(c)) for c in (a, b)):
            raise Reject("fmod inexact")
    if op in ("quotient", "remainder", "max", "min", "divide", "atan2", "pow", "left_shift", "right_shift"):
        # Non-ring ops: operands must be representable in the result type (backends differ otherwise).
        if not (operand_fits(a, t) and operand_fits(b, t)):
            raise Reject("range")
    modes = ["lo", "hi"] if is_float(t) else ["lo"]
    res = {}
    for mode in modes:
        x, y = operand(a, t, mode), operand(b, t, mode)
        if op == "add":
            r = x + y
        elif op == "subtract":
            r = x - y
        elif op == "multiply":
            r = x * y
        elif op == "divide":
            yl = operand(b, t, "lo").astype(np.float64)
            if np.any(np.abs(yl) < 1e-3) or any_unc(b):
                raise Reject("div0")
            r = x / y
        elif op == "atan2":
            if "atan2-zero" in AVOID and np.any(np.asarray(x) == 0):
                raise Reject("avoid")
            r = np.arctan2(x, y)
        elif op == "max":
            r = np.maximum(x, y)
        elif op == "min":
            r = np.minimum(x, y)
        elif op == "pow":
            if has_nan(a) or has_nan(b):
                raise Reject("pow nan")
            if is_int(t):
                yl = np.asarray(y)
                if np.any(yl < 0) or np.any(yl > 12) or any_unc(b):
                    raise Reject("pow")
                r = np.power(x, y)
            else:
                xl = operand(a, t, "lo").astype(np.float64)
                yl = operand(b, t, "lo").astype(np.float64)
                integral = b.is_num() and float(b.value) == int(b.value) or (not b.is_num() and not b.inexact and np.all(yl == np.round(yl)))
                if integral and not any_unc(b):
                    if np.any(np.abs(yl) > 6) or np.any((xl == 0) & (yl < 0)):
                        raise Reject("pow")
                    if np.any((np.abs(np.broadcast_to(xl, shape)) < 1e-2) & np.broadcast_to(yl < 0, shape)):
                        raise Reject("pow")
                elif np.any(xl <= 1e-3) or np.any(np.abs(yl) > 8) or any_unc(a):
                    raise Reject("pow")
                if "pow-base" in AVOID and np.any(xl <= 0):
                    raise Reject("avoid")
                r = np.power(x, y)
        elif op in ("quotient", "remainder"):
            yl = np.broadcast_to(np.asarray(y), shape)
            if np.any(yl == 0) or any_unc(b):
                raise Reject("div0")
            ovf = (np.broadcast_to(x, shape) == tmin(t)) & (yl == -1) if kind(t) == "s" else np.zeros(shape, bool)
            if np.any(ovf) and "intmin-div" in AVOID:
                raise Reject("overflow")
            xb, yb = np.broadcast_to(x, shape), np.where(ovf, 1, yl).astype(yl.dtype)
            if is_float(t):
                if np.any(np.abs(yl.astype(np.float64)) < 1e-3):
                    raise Reject("div0")
                r = np.fmod(xb, yb)
            else:
                # MIN / -1 wraps to MIN (Erlang div then a wrapping write; XLA defines it too), rem is 0
                r = trunc_div(xb, yb) if op == "quotient" else np.fmod(xb, yb)
                r = np.where(ovf, xb if op == "quotient" else 0, r).astype(NP[t])
        elif op == "bitwise_and":
            r = x & y
        elif op == "bitwise_or":
            r = x | y
        elif op == "bitwise_xor":
            r = x ^ y
        elif op in ("left_shift", "right_shift"):
            yl = np.asarray(y).astype(np.int64) if kind(t) == "s" else np.asarray(y).astype(np.uint64)
            # Nx (Erlang bsl/bsr, XLA) defines shifts by >= the bit width: << gives 0, >> the sign
            if np.any(yl < 0) or any_unc(b) or ("wide-shift" in AVOID and np.any(yl >= bits(t))):
                raise Reject("shift")
            xb, yb = np.broadcast_to(x, shape), np.broadcast_to(y, shape)
            if op == "left_shift":
                f = np.frompyfunc(lambda u, k: wrap_int(int(u) << min(int(k), 128), t), 2, 1)
            else:
                f = np.frompyfunc(lambda u, k: int(u) >> min(int(k), 128), 2, 1)
            r = np.asarray(f(xb, yb), dtype=object).astype(NP[t]) if xb.size else np.zeros(shape, NP[t])
        else:
            raise AssertionError(op)
        res[mode] = np.asarray(r).astype(dt(t, mode))
    lo = res["lo"]
    hi = res.get("hi", lo)
    inexact = is_float(t) and (op not in ("max", "min") or a.inexact or b.inexact)
    if op in ("max", "min") and is_float(t):
        inexact = (not a.is_num() and a.inexact) or (not b.is_num() and b.inexact)
    if op in ("max", "min") and is_int(t) is False:
        pass
    return finish(n, np.broadcast_to(lo, shape), np.broadcast_to(hi, shape), unc, inexact)


def norm_axes(axes, rank):
    return sorted(a % rank for a in axes)


def mk_reduce(op, x, axes, keep):
    """axes None: all axes."""
    rank = len(x.shape)
    ax = list(range(rank)) if axes is None else norm_axes(axes, rank)
    out_shape = tuple((1 if i in ax else d) for i, d in enumerate(x.shape) if keep or i not in ax)
    red_n = size_of(tuple(x.shape[i] for i in ax))
    if op in ("reduce_max", "reduce_min", "mean") and red_n == 0 and size_of(out_shape) > 0:
        raise Reject("empty")
    if op in ("sum", "product"):
        t = to_aggregate(x.type)
    elif op == "mean":
        t = to_floating(to_aggregate(x.type))
    elif op in ("all", "any"):
        t = "u8"
    else:
        t = x.type
    n = Node(op, [x], type=t, shape=out_shape, axes=axes, keep=keep)
    tax = tuple(ax)
    unc = np.any(x.unc, axis=tax, keepdims=keep) if rank else x.unc
    if "noaxes" in AVOID and op in ("all", "any") and (rank == 0 or (axes is not None and len(axes) == 0)):
        raise Reject("avoid")
    if op in ("all", "any") and ((axes is not None and len(axes) == 0) or (axes is None and keep and rank == 0)):
        # Nx's aggregate_axes_op turns a reduction over no axes into Nx.as_type(tensor, type)
        m = mk_as_type(x, "u8")
        n.val, n.hi, n.unc, n.inexact = m.val, m.hi, m.unc, False
        return n
    if op in ("all", "any"):
        v = x.val != 0
        if x.inexact:
            unc = unc | np.any(np.abs(x.val.astype(np.float64)) <= margin(x), axis=tax, keepdims=keep)
        lo = (np.all(v, axis=tax, keepdims=keep) if op == "all" else np.any(v, axis=tax, keepdims=keep)).astype(np.uint8)
        return finish(n, lo, lo, unc, False)
    res = {}
    for mode in (["lo", "hi"] if is_float(t) else ["lo"]):
        if op in ("reduce_max", "reduce_min"):
            v = x.val if mode == "lo" else x.hi
            if size_of(out_shape) == 0 or v.size == 0:
                r = np.zeros(out_shape, dtype=v.dtype)
            else:
                r = (np.max if op == "reduce_max" else np.min)(v, axis=tax, keepdims=keep)
            res[mode] = np.asarray(r)
            continue
        at = to_aggregate(x.type)
        v = convert(x.val if mode == "lo" else x.hi, x.type, at, mode)
        if is_float(at):
            kind_ = "sum" if op in ("sum", "mean") else "product"
            if mode == "lo":
                r = seq_reduce(v, ax, NP[at], kind_)
            else:
                r = (np.sum if kind_ == "sum" else np.prod)(v, axis=tax, dtype=HI)
            r = np.asarray(r).reshape(tuple(d for i, d in enumerate(x.shape) if i not in ax))
        else:
            r = (np.sum if op in ("sum", "mean") else np.prod)(v, axis=tax, dtype=NP[at])
        r = np.asarray(r)
        if op == "mean":
            den = red_n if axes is not None else size_of(x.shape)
            r = convert(r, at, t, mode) / np.asarray(den).astype(dt(t, mode))
        res[mode] = np.asarray(r).reshape(out_shape)
    lo = res["lo"]
    hi = res.get("hi", lo)
    inexact = is_float(t) and (op not in ("reduce_max", "reduce_min") or x.inexact)
    return finish(n, lo.reshape(out_shape), hi.reshape(out_shape), unc.reshape(out_shape), inexact)


def einsum_dot(a, b, ca, cb, ba, bb, t, mode, av=None, bv=None):
    ra, rb = len(a.shape), len(b.shape)
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    sa = [None] * ra
    sb = [None] * rb
    for i, j in zip(ba, bb):
        l = next(letters)
        sa[i] = sb[j] = l
    for i, j in zip(ca, cb):
        l = next(letters)
        sa[i] = sb[j] = l
    fa = []
    for i in range(ra):
        if sa[i] is None:
            sa[i] = next(letters)
            fa.append(sa[i])
    fb = []
    for i in range(rb):
        if sb[i] is None:
            sb[i] = next(letters)
            fb.append(sb[i])
    out = "".join(sa[i] for i in ba) + "".join(fa) + "".join(fb)
    spec = "".join(sa) + "," + "".join(sb) + "->" + out
    x = av if av is not None else operand(a, t, mode)
    y = bv if bv is not None else operand(b, t, mode)
    return np.einsum(spec, x, y)


def dot_shape(sa, sb, ca, cb, ba, bb):
    return tuple([sa[i] for i in ba] + [d for i, d in enumerate(sa) if i not in ca and i not in ba]
                 + [d for i, d in enumerate(sb) if i not in cb and i not in bb])


def mk_dot(a, b, form, ca=None, cb=None, ba=(), bb=()):
    """form 2: Nx.dot(a, b); 4: Nx.dot(a, ca, b, cb); 6: with batch axes."""
    ra, rb = len(a.shape), len(b.shape)
    if form == 2:
        assert ra > 0 and rb > 0
        ca, cb = [ra - 1], [0 if rb == 1 else rb - 2]
        ba, bb = [], []
    t = merge(a.type, b.type)
    if "outer" in AVOID and not ca:
        raise Reject("avoid")
    shape = dot_shape(a.shape, b.shape, ca, cb, ba, bb)
    n = Node("dot", [a, b], type=t, shape=shape, form=form, ca=list(ca), cb=list(cb), ba=list(ba), bb=list(bb))
    res = {}
    for mode in (["lo", "hi"] if is_float(t) else ["lo"]):
        r = einsum_dot(a, b, ca, cb, ba, bb, t, mode)
        res[mode] = np.asarray(r).astype(dt(t, mode))
    ua = einsum_dot(a, b, ca, cb, ba, bb, t, "lo", a.unc.astype(np.float64), np.ones(b.shape))
    ub = einsum_dot(a, b, ca, cb, ba, bb, t, "lo", np.ones(a.shape), b.unc.astype(np.float64))
    unc = (np.asarray(ua) + np.asarray(ub)) > 0
    lo = res["lo"]
    return finish(n, lo, res.get("hi", lo), unc, is_float(t))


def mk_shape_op(op, x, shape, like_node=None, **attrs):
    n = Node(op, [x] + ([like_node] if like_node is not None else []), type=x.type, shape=shape, **attrs)
    if like_node is not None:
        n.attrs["like"] = True
    if op == "transpose":
        perm = attrs["perm"]
        f = lambda v: np.transpose(v, perm)
    elif op in ("reshape", "squeeze", "new_axis"):
        f = lambda v: np.reshape(v, shape)
    elif op == "broadcast":
        axes = attrs.get("axes")
        if axes is None:
            f = lambda v: np.broadcast_to(v, shape)
        else:
            def f(v):
                sh = [1] * len(shape)
                for i, a_ in enumerate(axes):
                    sh[a_] = v.shape[i]
                return np.broadcast_to(v.reshape(sh), shape)
    else:
        raise AssertionError(op)
    lo = f(x.val)
    hi = f(x.hi)
    lowp = x.lowp
    n = finish(n, lo, hi, f(x.unc), x.inexact)
    n.lowp = lowp  # the shape operand of Nx.broadcast(x, like) does not contribute values
    return n


def mk_as_type(x, t):
    if "s2u64" in AVOID and t == "u64" and x.type in ("s8", "s16", "s32"):
        raise Reject("avoid")
    n = Node("as_type", [x], type=t, shape=x.shape)
    unc = x.unc.copy()
    if is_float(x.type) and is_int(t):
        v = x.val.astype(np.float64)
        nan = np.isnan(v)
        if np.any(nan) and "nonfinite-int" in AVOID:
            raise Reject("avoid")
        v = np.where(nan, 0.0, v)  # Nx: NaN -> 0 (as_type doctest)
        if x.val.size and not (np.all(np.isfinite(v)) and np.trunc(v).min() >= tmin(t) and np.trunc(v).max() <= tmax(t)):
            raise Reject("as_type range")
        if x.inexact:
            tr = np.trunc(v)
            d1 = np.abs(v - tr)
            d2 = np.abs(np.abs(v) - (np.abs(tr) + 1))
            unc |= np.minimum(d1, d2) <= margin(x)
            if np.any(np.abs(v) + margin(x) >= min(float(tmax(t)), 2.0 ** 62)):
                raise Reject("as_type range")
        lo = convert(np.where(nan, 0, x.val), x.type, t, "lo")
        hi = convert(np.where(nan, 0, x.hi), x.type, t, "lo")
        unc |= neq(lo, hi)
        return finish(n, lo, lo, unc, False)
    if is_float(t):
        lo = convert(x.val, x.type, t, "lo")
        # the conversion rounds to t: do it in hi mode too, from the hi operand
        hi = np.asarray(x.hi).astype(NP[t]).astype(HI) if is_float(x.type) else lo.astype(HI)
        if is_int(x.type):
            hi = lo.astype(HI)
        return finish(n, lo, hi, unc, x.inexact or (is_float(x.type) and bits(t) < bits(x.type)))
    lo = convert(x.val, x.type, t, "lo")
    return finish(n, lo, lo, unc, False)


def mk_select(p, a, b):
    # Nx.select makes tensors of number branches (s32/f32) before merging their types.
    t = merge(a.type if not a.is_num() else infer(a.value), b.type if not b.is_num() else infer(b.value))
    sa = a.shape if not a.is_num() else ()
    sb = b.shape if not b.is_num() else ()
    if p.shape == ():
        shape = broadcast_shapes(sa, sb)
    else:
        shape = p.shape
        if broadcast_shapes(sa, shape) != shape or broadcast_shapes(sb, shape) != shape:
            raise Reject("select shape")
    n = Node("select", [p, a, b], type=t, shape=shape)
    pred = np.broadcast_to(p.val != 0, shape)
    unc = children_unc([a, b], shape) | np.broadcast_to(p.unc, shape)
    if p.inexact:
        unc = unc | np.broadcast_to(np.abs(p.val.astype(np.float64)) <= margin(p), shape)
    res = {}
    for mode in (["lo", "hi"] if is_float(t) else ["lo"]):
        res[mode] = np.where(pred, np.broadcast_to(operand(a, t, mode), shape), np.broadcast_to(operand(b, t, mode), shape))
    lo = res["lo"]
    inexact = is_float(t) and any((not c.is_num()) and c.inexact for c in (a, b))
    return finish(n, lo, res.get("hi", lo), unc, inexact)


def mk_clip(x, lo_n, hi_n):
    lt = lo_n.type if not lo_n.is_num() else infer(lo_n.value)
    ht = hi_n.type if not hi_n.is_num() else infer(hi_n.value)
    t = merge(x.type, merge(lt, ht))
    for c in (x, lo_n, hi_n):
        if not operand_fits(c, t) or has_nan(c):
            raise Reject("clip range")
    if "clip-type" in AVOID:
        alt = x.type
        for c in (lo_n, hi_n):
            alt = merge_number(alt, c.value) if c.is_num() else merge(alt, c.type)
        if alt != t:
            raise Reject("avoid")
    n = Node("clip", [x, lo_n, hi_n], type=t, shape=x.shape)
    res = {}
    for mode in (["lo", "hi"] if is_float(t) else ["lo"]):
        l_, h_ = operand(lo_n, t, mode), operand(hi_n, t, mode)
        if mode == "lo" and not (l_ <= h_):
            raise Reject("clip order")
        res[mode] = np.minimum(np.maximum(operand(x, t, mode), l_), h_)
    unc = x.unc | np.any(unc_of(lo_n)) | np.any(unc_of(hi_n))
    lo = res["lo"]
    inexact = is_float(t) and any((not c.is_num()) and c.inexact for c in (x, lo_n, hi_n))
    return finish(n, lo, res.get("hi", lo), unc, inexact)


# ----------------------------------------------------------------------------------------------
# Rendering to Elixir


class RenderCtx:
    def __init__(self, names, minparens=False):
        self.names = names
        self.helpers = []     # defnp texts
        self.attrs = []       # module attribute texts
        self.memo = {}        # node id -> helper/attribute name
        self.minparens = minparens  # only the parentheses Elixir's precedence needs

    def sub(self, names):
        c = RenderCtx(names, self.minparens)
        c.helpers, c.attrs, c.memo = self.helpers, self.attrs, self.memo
        return c


# Elixir's binary operator precedence (higher binds tighter); all of these are left-associative.
PREC = {"**": 9, "*": 8, "/": 8, "+": 7, "-": 7, "|>": 5, "<<<": 5, ">>>": 5, "<": 4, ">": 4, "<=": 4,
        ">=": 4, "==": 3, "!=": 3, "&&&": 2, "and": 2, "|||": 1, "or": 1}


def rprec(n, ctx):
    """The precedence of n as render() writes it in minimal-parentheses mode (11: an atom or call)."""
    if n.id in ctx.names or n.attrs.get("modattr"):
        return 11
    if n.attrs.get("helper") and n.op not in ("num", "param", "literal", "iota"):
        return 11
    if n.is_num():
        return 10 if n.attrs["text"].startswith("-") else 11
    style = n.attrs.get("style", 0)
    if n.op in UNARY_FLOAT or n.op in UNARY_SAME or n.op in UNARY_PRED:
        if style == 1 and n.op in ("negate", "logical_not"):
            return 10
        return 5 if style == 2 else 11
    sym = ARITH.get(n.op) or CMP.get(n.op) or BITWISE.get(n.op) or LOGICAL.get(n.op)
    if style == 0 and sym:
        return PREC[sym]
    if style == 3 and n.children and not n.children[0].is_num():
        return 5
    return 11


def render(n, ctx, top=False):
    names = ctx.names
    if not top and n.id in names:
        return names[n.id]
    op = n.op
    ch = n.children
    r = lambda c: render(c, ctx)
    if n.attrs.get("modattr") and not top:
        if n.id not in ctx.memo:
            name = f"@c{len(ctx.attrs) + 1}"
            ctx.memo[n.id] = name
            ctx.attrs.append(f"  {name} {render(n, ctx, top=True)}")
        return ctx.memo[n.id]
    if n.attrs.get("helper") and not top and op not in ("num", "param", "literal", "iota"):
        args = []
        for c in ch:
            if not c.is_num() and c.id not in [a.id for a in args]:
                args.append(c)
        if n.id not in ctx.memo:
            hname = f"h{len(ctx.helpers) + 1}"
            ctx.memo[n.id] = hname
            sub = ctx.sub({c.id: f"v{i}" for i, c in enumerate(args)})
            body = render(n, sub, top=True)
            params = ", ".join(f"v{i}" for i in range(len(args)))
            ctx.helpers.append(f"  defnp {hname}({params}), do: {body}")
        return f"{ctx.memo[n.id]}(" + ", ".join(r(c) for c in args) + ")"
    if op == "num":
        return n.attrs["text"]
    if op == "param":
        return names[n.id]
    if op == "iota":
        opts = "".join(f", {k}: {v}" for k, v in n.attrs["opts"])
        return f"Nx.iota({elixir_shape(n.shape)}{opts})"
    if op == "literal":
        vals = n.attrs["values"]
        txt = nested(vals, n.shape)
        if n.attrs["explicit"]:
            return f"Nx.tensor({txt}, type: :{n.type})"
        return f"Nx.tensor({txt})"
    mp = ctx.minparens

    def wrap(c, need):
        t_ = r(c)
        return f"({t_})" if need else t_
    if op in UNARY_FLOAT or op in UNARY_SAME or op in UNARY_PRED:
        if op == "negate" and n.attrs.get("style", 0) == 1:
            if mp:
                t_ = r(ch[0])
                return "-" + (f"({t_})" if rprec(ch[0], ctx) < 10 or t_.startswith("-") else t_)
            return f"-{r(ch[0])}"
        if op == "logical_not" and n.attrs.get("style", 0) == 1:
            if mp:
                return "not " + wrap(ch[0], rprec(ch[0], ctx) < 10)
            return f"(not {r(ch[0])})"
        if n.attrs.get("style", 0) == 2:
            if mp:
                return wrap(ch[0], rprec(ch[0], ctx) < 5) + f" |> Nx.{op}()"
            return f"({r(ch[0])} |> Nx.{op}())"
        return f"Nx.{op}({r(ch[0])})"
    if op in ARITH or op in CMP or op in BITWISE or op in LOGICAL or op in KERNEL_FUN or op == "atan2":
        style = n.attrs.get("style", 0)
        sym = ARITH.get(op) or CMP.get(op) or BITWISE.get(op) or LOGICAL.get(op)
        if mp and style == 0 and sym:
            p_ = PREC[sym]
            pa, pb = rprec(ch[0], ctx), rprec(ch[1], ctx)
            a = wrap(ch[0], pa < p_ or (sym == "**" and pa == p_))
            b = wrap(ch[1], pb <= p_)
            return f"{a} {sym} {b}"
        if mp and style == 3 and not ch[0].is_num():
            return wrap(ch[0], rprec(ch[0], ctx) < 5) + f" |> Nx.{op}({r(ch[1])})"
        a, b = r(ch[0]), r(ch[1])
        if style == 0 and sym:
            return f"({a} {sym} {b})"
        if style == 1 and op in KERNEL_FUN:
            return f"{KERNEL_FUN[op]}({a}, {b})"
        if style == 3 and not ch[0].is_num():
            return f"({a} |> Nx.{op}({b}))"
        return f"Nx.{op}({a}, {b})"
    if op in ("sum", "product", "reduce_max", "reduce_min", "mean", "all", "any"):
        opts = []
        if n.attrs["axes"] is not None:
            opts.append("axes: [" + ", ".join(str(a) for a in n.attrs["axes"]) + "]")
        if n.attrs["keep"]:
            opts.append("keep_axes: true")
        return f"Nx.{op}({r(ch[0])}" + "".join(", " + o for o in opts) + ")"
    if op == "dot":
        f = n.attrs["form"]
        lst = lambda l: "[" + ", ".join(str(v) for v in l) + "]"
        if f == 2:
            return f"Nx.dot({r(ch[0])}, {r(ch[1])})"
        if f == 4:
            return f"Nx.dot({r(ch[0])}, {lst(n.attrs['ca'])}, {r(ch[1])}, {lst(n.attrs['cb'])})"
        return (f"Nx.dot({r(ch[0])}, {lst(n.attrs['ca'])}, {lst(n.attrs['ba'])}, {r(ch[1])}, "
                f"{lst(n.attrs['cb'])}, {lst(n.attrs['bb'])})")
    if op == "transpose":
        if n.attrs.get("default"):
            return f"Nx.transpose({r(ch[0])})"
        return f"Nx.transpose({r(ch[0])}, axes: [" + ", ".join(str(a) for a in n.attrs["perm"]) + "])"
    if op == "reshape":
        dims = [str(d) for d in n.shape]
        if n.attrs.get("auto") is not None:
            dims[n.attrs["auto"]] = ":auto"
        return f"Nx.reshape({r(ch[0])}, {{{', '.join(dims)}}})"
    if op == "broadcast":
        if n.attrs.get("like"):
            return f"Nx.broadcast({r(ch[0])}, {r(ch[1])})"
        if n.attrs.get("axes") is not None:
            return f"Nx.broadcast({r(ch[0])}, {elixir_shape(n.shape)}, axes: [" + ", ".join(str(a) for a in n.attrs["axes"]) + "])"
        return f"Nx.broadcast({r(ch[0])}, {elixir_shape(n.shape)})"
    if op == "squeeze":
        if n.attrs.get("axes") is None:
            return f"Nx.squeeze({r(ch[0])})"
        return f"Nx.squeeze({r(ch[0])}, axes: [" + ", ".join(str(a) for a in n.attrs["axes"]) + "])"
    if op == "new_axis":
        return f"Nx.new_axis({r(ch[0])}, {n.attrs['axis']})"
    if op == "as_type":
        return f"Nx.as_type({r(ch[0])}, :{n.type})"
    if op == "select":
        return f"Nx.select({r(ch[0])}, {r(ch[1])}, {r(ch[2])})"
    if op == "clip":
        return f"Nx.clip({r(ch[0])}, {r(ch[1])}, {r(ch[2])})"
    raise AssertionError(op)


def nested(vals, shape):
    if not shape:
        return vals[0]
    if len(shape) == 1:
        return "[" + ", ".join(vals) + "]"
    step = len(vals) // shape[0] if shape[0] else 0
    return "[" + ", ".join(nested(vals[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])) + "]"


class Program:
    def __init__(self, params, results, is_tuple, stmts=()):
        self.params = params          # list of param nodes
        self.results = results        # list of result leaves (nested tuples flattened)
        self.is_tuple = is_tuple      # result layout: None (single) or nested list structure
        self.stmts = list(stmts)      # bound nodes rendered even when unused (dead code)
        self.minparens = False        # write only the parentheses Elixir's precedence needs

    def nodes(self):
        seen = set()
        out = []
        for r_ in self.stmts + self.results:
            for n in r_.walk(seen):
                out.append(n)
        return out

    def source(self):
        nodes = self.nodes()
        used_params = [p for p in self.params]
        names = {}
        letters = "abcdeghjkmnpqrstuvwyz"
        for i, p in enumerate(used_params):
            names[p.id] = letters[i] if i < len(letters) else f"p{i}"
        ctx = RenderCtx(names, self.minparens)
        lines = []
        k = 0
        for n in nodes:
            if n.name is not None and n.op not in ("param", "num"):
                k += 1
                txt = render(n, ctx, top=not n.attrs.get("modattr"))
                names[n.id] = f"x{k}"
                lines.append(f"    x{k} = {txt}")
        res = [render(r_, ctx) for r_ in self.results]
        if self.is_tuple is None:
            body = res[0]
        else:
            it = iter(res)

            def build(struct):
                return "{" + ", ".join(build(s) if isinstance(s, list) else next(it) for s in struct) + "}"
            body = build(self.is_tuple)
        lines.append("    " + body)
        args = ", ".join(names[p.id] for p in used_params)
        head = "".join(a + "\n" for a in ctx.attrs) + ("\n" if ctx.attrs else "")
        tail = "".join("\n" + h + "\n" for h in ctx.helpers)
        return ("defmodule F do\n  import Nx.Defn\n\n" + head +
                f"  defn f({args}) do\n" + "\n".join(lines) + "\n  end\n" + tail + "end\n")


# ----------------------------------------------------------------------------------------------
# Generator


class Gen:
    def __init__(self, rng, max_nodes):
        self.rng = rng
        self.params = []
        self.bound = []       # nodes bound to variables
        self.budget = max_nodes
        self.elems = 0        # total input elements so far
        self.float_bias = rng.random()

    def chance(self, p):
        return self.rng.random() < p

    def pick(self, seq, weights=None):
        if weights is not None:
            w = np.asarray(weights, dtype=float)
            return seq[int(self.rng.choice(len(seq), p=w / w.sum()))]
        return seq[int(self.rng.integers(len(seq)))]

    # -- leaves

    def rand_type(self):
        if self.chance(0.3 + 0.4 * self.float_bias):
            return self.pick(FLOAT_TYPES, [3, 1])
        return self.pick(INT_TYPES, [1, 1, 3, 1, 2, 1, 1, 1])

    def rand_data(self, t, shape):
        rng = self.rng
        n = size_of(shape)
        if is_float(t):
            mode = rng.random()
            if mode < 0.6:
                v = rng.uniform(-4, 4, n)
            elif mode < 0.8:
                v = rng.integers(-8, 9, n) * 0.5
            elif mode < 0.9:
                v = rng.uniform(0.1, 3, n)
            elif mode < 0.95:
                v = rng.normal(0, 20, n)
            else:
                v = rng.choice(np.array(SPECIAL_FLOATS), n)
            if n and rng.random() < 0.06:
                idx = rng.integers(0, n, max(1, n // 5))
                v[idx] = rng.choice([np.nan, -0.0, 0.0], len(idx))
            return v.astype(NP[t]).reshape(shape)
        lo, hi = tmin(t), tmax(t)
        mode = rng.random()
        if mode < 0.6:
            a, b = max(lo, -10), min(hi, 10)
        elif mode < 0.85:
            a, b = max(lo, -200), min(hi, 300)
        else:
            a, b = lo, hi
        if b - a < (1 << 62):
            v = rng.integers(a, b, n, endpoint=True, dtype=np.int64 if kind(t) == "s" or bits(t) < 64 else np.uint64)
        else:
            v = rng.integers(0, 1 << 64, n, dtype=np.uint64, endpoint=False)
            if kind(t) == "s":
                v = v.view(np.int64)
        if mode >= 0.85 and n:
            # sprinkle the extremes
            idx = rng.integers(0, n, max(1, n // 4))
            ext = np.array([lo, hi, 0, 1], dtype=object)
            vv = v.astype(object)
            vv[idx] = rng.choice(ext, len(idx))
            v = vv
        return np.array(v, dtype=object).astype(NP[t]).reshape(shape) if v.dtype == object else v.astype(NP[t]).reshape(shape)

    def new_param(self, shape, t=None):
        if len(self.params) >= 8 or self.elems + size_of(shape) > (400000 if PROFILE["big"] else 30000):
            raise Reject("params")
        t = t or self.rand_type()
        data = self.rand_data(t, shape)
        p = mk_param(len(self.params), t, data)
        self.params.append(p)
        self.elems += size_of(shape)
        return p

    def literal(self, shape):
        n = self.literal1(shape)
        if self.chance(0.25) and "attr-tensor" not in AVOID:
            n.attrs["modattr"] = True
        return n

    def literal1(self, shape):
        if size_of(shape) > 8 or 0 in shape:
            raise Reject("literal")
        n = size_of(shape)
        mode = self.rng.random()
        if mode < 0.4:
            vals = [str(int(v)) for v in self.rng.integers(-5, 10, n)]
            return mk_literal("s32", vals, shape, False, False)
        if mode < 0.7:
            vals = [self.pick(NICE_FLOATS) for _ in range(n)]
            if self.chance(0.3) and n > 1:
                vals[0] = str(int(self.rng.integers(-3, 4)))  # mixed list -> f32
            return mk_literal("f32", vals, shape, False, True)
        t = self.rand_type()
        if is_float(t):
            vals = [self.pick(NICE_FLOATS) for _ in range(n)]
        else:
            vals = [str(int(v)) for v in self.rng.integers(max(tmin(t), -5), min(tmax(t), 20), n, endpoint=True)]
        return mk_literal(t, vals, shape, True, is_float(t))

    def number(self, for_int=True):
        n = self.number1()
        if self.chance(0.1) and "Constants" not in n.attrs["text"]:
            n.attrs["modattr"] = True
        return n

    def number1(self):
        r = self.rng.random()
        if r < 0.04:
            return num_node(math.pi, "Nx.Constants.pi()")
        if r < 0.06:
            return num_node(math.e, "Nx.Constants.e()")
        if r < 0.55:
            v = int(self.pick([0, 1, 2, 3, 5, 7, 10, -1, -2, -3, 100, 255, 256, 1000, -129, 70000]))
            text = {255: self.pick(["255", "0xff", "0xFF"]), 1000: self.pick(["1000", "1_000"]),
                    70000: self.pick(["70000", "70_000"]), 256: self.pick(["256", "0x100"])}.get(v, str(v))
            return num_node(v, text)
        if r < 0.9:
            txt = self.pick(NICE_FLOATS)
            return num_node(float(txt), txt)
        # a number expression, folded at compile time as Elixir does
        a, b = int(self.rng.integers(1, 6)), int(self.rng.integers(1, 6))
        opn = self.pick(["+", "-", "*", "/"])
        v = {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[opn]
        return num_node(v, f"({a} {opn} {b})")

    def leaf(self, shape):
        cands = [b for b in self.bound if b.shape == shape]
        if cands and self.chance(0.5):
            return self.pick(cands)
        same = [p for p in self.params if p.shape == shape]
        if same and self.chance(0.3):
            return self.pick(same)
        if self.chance(0.08):
            try:
                return self.literal(shape)
            except Reject:
                pass
        if self.chance(0.04) and shape:
            return self.iota(shape)
        return self.new_param(shape)

    def iota(self, shape):
        opts = []
        axis = None
        if self.chance(0.5):
            axis = int(self.rng.integers(len(shape)))
            opts.append(("axis", axis if self.chance(0.7) else axis - len(shape)))
        t = "s32"
        if self.chance(0.4):
            t = self.rand_type()
            opts.append(("type", ":" + t))
        if axis is None:
            v = np.arange(size_of(shape)).reshape(shape)
        else:
            sh = [1] * len(shape)
            sh[axis] = shape[axis]
            v = np.broadcast_to(np.arange(shape[axis]).reshape(sh), shape)
        if is_int(t) and size_of(shape) and v.max() > tmax(t):
            raise Reject("iota")
        n = Node("iota", type=t, shape=shape, opts=opts)
        arr = v.astype(NP[t])
        return finish(n, arr, arr.astype(dt(t, "hi")), False, False)

    # -- shapes

    def rand_dim(self):
        r = self.rng.random()
        if PROFILE["big"] and r < 0.5 and self.elems < 150000:
            return int(self.pick([1, 2, 7, 16, 33, 64, 100, 128, 257, 1000]))
        if r < 0.04:
            return 0
        if r < 0.05 and self.elems < 5000:
            return self.pick([1000, 64, 17, 257])
        return int(self.rng.integers(1, 6))

    def rand_shape(self, max_rank=3):
        rank = int(self.pick([0, 1, 2, 3], [1, 3, 3, 2]))
        rank = min(rank, max_rank)
        shape = tuple(self.rand_dim() for _ in range(rank))
        if size_of(shape) > big_limit() // 5:
            shape = tuple(min(d, 5) for d in shape)
        return shape

    def operand_shapes(self, shape):
        """Two shapes that broadcast to `shape`."""
        ls, rs = [], []
        for d in shape:
            c = self.rng.random()
            if d == 1:
                ls.append(1)
                rs.append(1)
            elif c < 0.6:
                ls.append(d)
                rs.append(d)
            elif c < 0.8:
                ls.append(d)
                rs.append(1)
            else:
                ls.append(1)
                rs.append(d)
        # drop leading dims that are 1 on one side (rank difference)
        for side in (ls, rs):
            if self.chance(0.5):
                k = 0
                while k < len(side) and side[k] == 1 and self.chance(0.7):
                    k += 1
                del side[:k]
        return tuple(ls), tuple(rs)

    # -- expressions

    def gen(self, shape, depth, top=False):
        shape = tuple(shape)
        for _ in range(6):
            try:
                n = self.gen1(shape, depth, top)
                assert n.shape == shape, (n.op, n.shape, shape)
                if n.children and n.op not in ("num", "param", "literal") and self.chance(0.06):
                    n.attrs["helper"] = True
                return n
            except Reject:
                continue
        return self.leaf(shape)

    def gen1(self, shape, depth, top=False):
        if depth <= 0 or self.budget <= 0 or (not top and self.chance(0.15)):
            return self.leaf(shape)
        self.budget -= 1
        choices = ["unary", "binary", "binary", "binary", "reduce", "dot", "transpose", "reshape",
                   "broadcast", "squeeze", "as_type", "select", "clip", "cmp", "normalize"]
        weights = [4, 4, 4, 4, 3, 2, 1, 1, 1, 1, 1.5, 1, 1, 1.5, 1.5]
        kind_ = self.pick(choices, weights)
        rng = self.rng
        if kind_ == "unary":
            x = self.gen(shape, depth - 1)
            if self.chance(0.55):
                op = self.pick(UNARY_FLOAT_COMMON) if self.chance(0.6) else self.pick(list(UNARY_FLOAT))
            elif self.chance(0.8):
                op = self.pick(UNARY_SAME)
            else:
                op = self.pick(UNARY_PRED)
            n = self.try_unary(op, x)
            n.attrs["style"] = int(self.pick([0, 1, 2], [6, 2 if op in ("negate", "logical_not") else 0, 1]))
            return n
        if kind_ in ("binary", "cmp"):
            if kind_ == "cmp":
                op = self.pick(list(CMP))
            else:
                op = self.pick(["add", "subtract", "multiply", "divide", "pow", "max", "min", "quotient",
                                "remainder", "bitwise_and", "bitwise_or", "left_shift", "right_shift",
                                "logical_and", "logical_or", "atan2", "bitwise_xor", "logical_xor"],
                               [5, 5, 5, 4, 2, 2, 2, 1.5, 1.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.3, 0.3])
            ls, rs = self.operand_shapes(shape)
            r = rng.random()
            if r < 0.3:
                a = self.gen(shape, depth - 1)
                b = self.number()
                if op in ("pow",) and not isinstance(b.value, float):
                    b = num_node(int(self.pick([0, 1, 2, 3])), None)
                    b.attrs["text"] = str(b.value)
                if op == "pow" and self.chance(0.2):
                    a, b = num_node(self.pick([2, 3, 0.5, 2.0]), None), a
                    a.attrs["text"] = str(a.value)
                elif self.chance(0.25) and op not in ("pow", "left_shift", "right_shift"):
                    a, b = b, a
            else:
                a = self.gen(ls, depth - 1)
                if ls == rs and self.chance(0.15) and not a.is_num() and a.op not in ("param",):
                    b = a  # x1 * x1: a shared sub-expression
                    if a.name is None and a.op != "literal":
                        a.name = "bound"
                else:
                    b = self.gen(rs, depth - 1)
                if broadcast_shapes(ls, rs) != shape:
                    raise Reject("bshape")
            if op in ("quotient", "remainder", "bitwise_and", "bitwise_or", "left_shift", "right_shift", "bitwise_xor") and (
                    op != "remainder" or self.chance(0.7)):
                # make the operands integers and the divisor/shift count safe
                if not a.is_num() and is_float(a.type):
                    a = mk_as_type(a, self.pick(INT_TYPES))
                if not b.is_num() and is_float(b.type):
                    b = mk_as_type(b, self.pick(INT_TYPES))
                if b.is_num() and isinstance(b.value, float) or a.is_num() and isinstance(a.value, float):
                    raise Reject("int only")
                if op in ("left_shift", "right_shift") and self.chance(0.6):
                    b = num_node(int(self.rng.integers(0, 8)) if self.chance(0.8) else int(self.pick([8, 15, 16, 31, 32, 33, 63, 64, 70])))
                elif op in ("quotient", "remainder") and not b.is_num() and np.any(b.val == 0) and self.chance(0.7):
                    b = mk_binary("add", mk_unary("abs", b), num_node(1), 0)
            style = 0
            if op in KERNEL_FUN:
                style = int(self.pick([1, 2]))
            elif op == "atan2":
                style = 2
            elif self.chance(0.2):
                style = int(self.pick([2, 3]))
            n = mk_binary(op, a, b, style)
            if n.shape != shape:
                raise Reject("shape")
            return n
        if kind_ == "reduce":
            op = self.pick(["sum", "product", "reduce_max", "reduce_min", "mean", "all", "any"], [4, 1, 2, 2, 2, 0.5, 0.5])
            keep = self.chance(0.35)
            if keep:
                ones = [i for i, d in enumerate(shape) if d == 1]
                if not ones:
                    keep = False
            if not keep:
                if len(shape) >= 4:
                    raise Reject("rank")
                k = int(rng.integers(0, min(2, 4 - len(shape)) + 1))
                in_shape = list(shape)
                pos = []
                for _ in range(k):
                    p = int(rng.integers(0, len(in_shape) + 1))
                    in_shape.insert(p, self.rand_dim() if self.chance(0.8) else 1)
                    pos = [q + (1 if q >= p else 0) for q in pos] + [p]
                if size_of(tuple(in_shape)) > big_limit():
                    raise Reject("big")
                axes = sorted(pos)
            else:
                ones = [i for i, d in enumerate(shape) if d == 1]
                axes = sorted(rng.choice(ones, int(rng.integers(1, len(ones) + 1)), replace=False).tolist())
                in_shape = list(shape)
                for a_ in axes:
                    in_shape[a_] = self.rand_dim()
                if size_of(tuple(in_shape)) > big_limit():
                    raise Reject("big")
            in_shape = tuple(in_shape)
            full = len(axes) == len(in_shape) and self.chance(0.6)
            x = self.gen(in_shape, depth - 1)
            if full:
                ax_opt = None
            else:
                r_ = len(in_shape)
                ax_opt = [a_ - r_ if self.chance(0.25) else a_ for a_ in axes]
                if self.chance(0.15):
                    ax_opt = ax_opt[::-1]
            return mk_reduce(op, x, ax_opt, keep)
        if kind_ == "dot":
            return self.gen_dot(shape, depth)
        if kind_ == "normalize":
            # x OP reduce(x, axes, keep_axes: true) or with the reduced axes leading (broadcasts back)
            if not shape:
                raise Reject("rank")
            x = self.gen(shape, depth - 1)
            if x.op != "param" and x.name is None:
                x.name = "bound"
            rop = self.pick(["reduce_max", "reduce_min", "sum", "mean", "product"], [3, 1, 3, 2, 0.5])
            if self.chance(0.6):
                k = int(rng.integers(1, len(shape) + 1))
                axes = sorted(rng.choice(len(shape), k, replace=False).tolist())
                if len(axes) == len(shape) and self.chance(0.4):
                    red = mk_reduce(rop, x, None, True)
                else:
                    red = mk_reduce(rop, x, [a_ - len(shape) if self.chance(0.2) else a_ for a_ in axes], True)
            else:
                k = int(rng.integers(1, len(shape) + 1))
                red = mk_reduce(rop, x, list(range(k)), False)
            op = self.pick(["subtract", "divide", "add", "multiply", "max", "less", "equal"], [4, 3, 1, 1, 1, 1, 1])
            n = mk_binary(op, x, red, int(self.pick([0, 2], [4, 1])))
            if n.shape != shape:
                raise Reject("shape")
            return n
        if kind_ == "transpose":
            r_ = len(shape)
            if r_ < 2:
                raise Reject("rank")
            if self.chance(0.3):
                perm = list(range(r_))[::-1]
                default = True
            else:
                perm = rng.permutation(r_).tolist()
                default = False
            in_shape = [0] * r_
            for i, p in enumerate(perm):
                in_shape[p] = shape[i]
            x = self.gen(tuple(in_shape), depth - 1)
            return mk_shape_op("transpose", x, shape, perm=perm, default=default)
        if kind_ == "reshape":
            in_shape = self.reshape_source(shape)
            x = self.gen(in_shape, depth - 1)
            auto = None
            if shape and size_of(shape) > 0 and self.chance(0.3):
                auto = int(rng.integers(len(shape)))
            return mk_shape_op("reshape", x, shape, auto=auto)
        if kind_ == "broadcast":
            if self.chance(0.5) or not shape:
                ls, _ = self.operand_shapes(shape)
                x = self.gen(ls, depth - 1)
                if self.chance(0.25):
                    return mk_shape_op("broadcast", x, shape, like_node=self.leaf(shape))
                return mk_shape_op("broadcast", x, shape)
            k = int(rng.integers(0, len(shape) + 1))
            axes = sorted(rng.choice(len(shape), k, replace=False).tolist())
            in_shape = tuple(shape[a_] if self.chance(0.7) else 1 for a_ in axes)
            x = self.gen(in_shape, depth - 1)
            return mk_shape_op("broadcast", x, shape, axes=axes)
        if kind_ == "squeeze":
            if self.chance(0.5):
                if len(shape) >= 4:
                    raise Reject("rank")
                p = int(rng.integers(0, len(shape) + 1))
                in_shape = shape[:p] + (1,) + shape[p:]
                x = self.gen(in_shape, depth - 1)
                if 1 in shape or self.chance(0.5):
                    axis = p if self.chance(0.7) else p - len(in_shape)
                    return mk_shape_op("squeeze", x, shape, axes=[axis])
                return mk_shape_op("squeeze", x, shape, axes=None)
            ones = [i for i, d in enumerate(shape) if d == 1]
            if not ones:
                raise Reject("new_axis")
            p = self.pick(ones)
            in_shape = shape[:p] + shape[p + 1:]
            x = self.gen(in_shape, depth - 1)
            axis = p if self.chance(0.7) else p - len(shape)
            return mk_shape_op("new_axis", x, shape, axis=axis)
        if kind_ == "as_type":
            x = self.gen(shape, depth - 1)
            t = self.rand_type()
            return mk_as_type(x, t)
        if kind_ == "select":
            if self.chance(0.2):
                p = self.gen((), depth - 1)
                ls, rs = self.operand_shapes(shape)
            else:
                p = self.gen(shape, depth - 1)
                ls, rs = self.operand_shapes(shape)
            a = self.gen(ls, depth - 1) if self.chance(0.8) else self.number()
            b = self.gen(rs, depth - 1) if self.chance(0.8) else self.number()
            n = mk_select(p, a, b)
            if n.shape != shape:
                raise Reject("shape")
            return n
        if kind_ == "clip":
            x = self.gen(shape, depth - 1)

            def bound_(hi):
                if self.chance(0.6):
                    v = self.pick([0, 1, 2, 5, 10, 100] if hi else [-3, -1, 0, 1, 2])
                    if self.chance(0.4):
                        return num_node(float(v), f"{float(v)}")
                    return num_node(v, str(v))
                return self.gen((), depth - 2)
            return mk_clip(x, bound_(False), bound_(True))
        raise AssertionError(kind_)

    def try_unary(self, op, x):
        try:
            return mk_unary(op, x)
        except Reject:
            if op not in ("log", "sqrt", "rsqrt", "acosh", "log1p", "asin", "acos", "atanh") or not self.chance(0.7):
                raise
        # repair the operand into the domain: log(abs(x) + 1), asin(tanh(x)), acosh(abs(x) + 1.5)...
        ax = mk_unary("abs", x)
        if op in ("asin", "acos", "atanh"):
            y = mk_binary("multiply", mk_unary("tanh", x), num_node(0.9, "0.9"), 0)
        else:
            c = {"acosh": 1.5, "log1p": 0.5}.get(op, 1)
            y = mk_binary("add", ax, num_node(c, str(c) if isinstance(c, float) else "1"), 0)
        return mk_unary(op, y)

    def reshape_source(self, shape):
        n = size_of(shape)
        if n == 0:
            rank = int(self.rng.integers(1, 4))
            s = [int(self.rng.integers(0, 4)) for _ in range(rank)]
            s[int(self.rng.integers(rank))] = 0
            return tuple(s)
        # factorize n randomly
        factors = []
        m = n
        p = 2
        while p * p <= m:
            while m % p == 0:
                factors.append(p)
                m //= p
            p += 1
        if m > 1:
            factors.append(m)
        rank = int(self.rng.integers(0 if n == 1 else 1, 4))
        rank = max(rank, 1) if factors else rank
        dims = [1] * rank
        for f in factors:
            dims[int(self.rng.integers(rank))] *= f
        return tuple(dims)

    def gen_dot(self, shape, depth):
        rng = self.rng
        form = int(self.pick([2, 4, 6], [3, 1, 1]))
        r = len(shape)
        if form == 2:
            i = int(rng.integers(0, r + 1))
            fa, fb = list(shape[:i]), list(shape[i:])
            if len(fa) > 3 or len(fb) > 3:
                raise Reject("rank")
            k = self.rand_dim()
            sa = tuple(fa + [k])
            if not fb:
                sb = (k,)
            elif len(fb) == 1:
                sb = (k, fb[0])
            else:
                sb = tuple(fb[:-1] + [k] + fb[-1:])
            if size_of(sa) > big_limit() or size_of(sb) > big_limit():
                raise Reject("big")
            a = self.gen(sa, depth - 1)
            b = self.gen(sb, depth - 1)
            n = mk_dot(a, b, 2)
            assert n.shape == shape, (n.shape, shape, sa, sb)
            return n
        nb = int(rng.integers(0, min(r, 2) + 1)) if form == 6 else 0
        if form == 6 and nb == 0:
            form = 4
        batch = list(shape[:nb])
        rest = list(shape[nb:])
        i = int(rng.integers(0, len(rest) + 1))
        fa, fb = rest[:i], rest[i:]
        nc = int(self.pick([0, 1, 2], [1, 4, 2]))
        cdims = [int(rng.integers(1, 5)) for _ in range(nc)]
        if nb + len(fa) + nc > 4 or nb + len(fb) + nc > 4:
            raise Reject("rank")

        def layout(free):
            # free dims and contraction dims interleaved at random after the batch dims
            slots = ["f"] * len(free) + list(range(nc))
            slots = [slots[j] for j in rng.permutation(len(slots))] if slots else []
            dims = list(batch)
            caxes = [None] * nc
            fit = iter(free)
            for s in slots:
                if s == "f":
                    dims.append(next(fit))
                else:
                    caxes[s] = len(dims)
                    dims.append(cdims[s])
            # free dims must keep their order: slots interleave but next(fit) keeps order
            return tuple(dims), caxes
        sa, ca = layout(fa)
        sb, cb = layout(fb)
        if size_of(sa) > big_limit() or size_of(sb) > big_limit():
            raise Reject("big")
        a = self.gen(sa, depth - 1)
        b = self.gen(sb, depth - 1)
        ba = list(range(nb))
        n = mk_dot(a, b, form, ca, cb, ba, ba)
        assert n.shape == shape, (n.shape, shape)
        return n


def generate(seed):
    rng = np.random.default_rng(seed)
    for attempt in range(50):
        g = Gen(rng, max_nodes=int(rng.integers(2, 14)))
        try:
            nstmts = int(rng.integers(0, 3))
            for _ in range(nstmts):
                g.budget = int(rng.integers(1, 8))
                s = g.rand_shape()
                if g.bound and g.chance(0.5):
                    s = g.pick(g.bound).shape
                node = g.gen(s, int(rng.integers(1, 4)))
                if node.op not in ("param", "num") and node.name is None:
                    node.name = "bound"
                    g.bound.append(node)
            nres = 1 if g.chance(0.8) else int(rng.integers(2, 4))
            results = []
            for _ in range(nres):
                g.budget = int(rng.integers(2, 24))
                s = g.rand_shape()
                if g.bound and g.chance(0.6):
                    s = g.pick(g.bound).shape
                results.append(g.gen(s, int(rng.integers(2, 7)), top=True))
            if nres == 1:
                layout = None
            elif nres == 2 or g.chance(0.5):
                layout = [0] * nres
            else:
                layout = [0, [0, 0]]
            stmts = list(g.bound)
            seen = set()
            used = {n.id for r_ in stmts + results for n in r_.walk(seen)}
            params = [p for p in g.params if p.id in used]
            if g.chance(0.05) and len(params) < len(g.params):
                params = list(g.params)  # an unused parameter now and then
            prog = Program(params, results, layout, stmts)
            prog.minparens = g.chance(0.5)
            return prog
        except Reject:
            continue
    raise RuntimeError("could not generate a program")


# ----------------------------------------------------------------------------------------------
# Running nxc and checking


TOL = {"f32": (1e-4, 1e-5), "f64": (1e-9, 1e-9)}


class Outcome:
    def __init__(self, kind, detail, cmd=None, stderr="", got=None):
        self.kind = kind      # ok | crash | rejected | wrong
        self.detail = detail
        self.cmd = cmd
        self.stderr = stderr
        self.got = got


def run_nxc(nxc, prog, workdir, tag="p"):
    os.makedirs(workdir, exist_ok=True)
    src = os.path.join(workdir, f"{tag}.nx")
    with open(src, "w") as fh:
        fh.write(prog.source())
    args = []
    for i, p in enumerate(prog.params):
        path = os.path.join(workdir, f"{tag}.arg{i}.npy")
        np.save(path, p.val)
        args.append(path)
    out = os.path.join(workdir, f"{tag}.out." + ("npy" if prog.is_tuple is None else "npz"))
    if os.path.exists(out):
        os.remove(out)
    cmd = [nxc, "jit", src, "--fn", "f", *args, "-o", out, "--no-cache"]
    deadline = time.monotonic() + 300
    while True:
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=120,
                                  env=dict(os.environ, XDG_CACHE_HOME=workdir))
            break
        except subprocess.TimeoutExpired:
            return Outcome("crash", "timed out after 120 s", cmd)
        except OSError as e:
            if e.errno in (errno.ENOENT, errno.ETXTBSY, errno.EACCES) and time.monotonic() < deadline:
                time.sleep(2)
                continue
            raise
    if proc.returncode not in (0, 1) or "internal compiler error" in proc.stderr.lower():
        if proc.returncode == 127 or (proc.returncode < 0 and not os.path.exists(nxc)):
            time.sleep(3)
            return run_nxc(nxc, prog, workdir, tag)
        return Outcome("crash", f"exit status {proc.returncode}", cmd, proc.stderr)
    if proc.returncode == 1:
        if not os.path.exists(nxc):
            time.sleep(3)
            return run_nxc(nxc, prog, workdir, tag)
        return Outcome("rejected", proc.stderr.strip(), cmd, proc.stderr)
    try:
        if prog.is_tuple is None:
            got = [np.load(out)]
        else:
            d = np.load(out)
            got = [d[f"arr_{i}"] for i in range(len(d.files))]
    except Exception as e:  # noqa
        return Outcome("wrong", f"cannot read the result: {e}", cmd, proc.stderr)
    return compare(prog, got, cmd, proc.stderr)


def compare(prog, got, cmd, stderr):
    if len(got) != len(prog.results):
        return Outcome("wrong", f"{len(got)} results, expected {len(prog.results)}", cmd, stderr, got)
    problems = []
    for i, (g, n) in enumerate(zip(got, prog.results)):
        exp_dtype = np.dtype(NP[n.type])
        if g.dtype != exp_dtype:
            problems.append(f"result {i}: dtype {g.dtype}, expected {exp_dtype} ({n.type})")
            continue
        if tuple(g.shape) != n.shape:
            problems.append(f"result {i}: shape {g.shape}, expected {n.shape}")
            continue
        ok = ~n.unc
        if is_int(n.type):
            bad = (g != n.val) & ok
        else:
            rtol, atol = TOL["f32" if n.lowp else n.type]
            hi = n.hi.astype(np.float64)
            lo = n.val.astype(np.float64)
            gg = g.astype(np.float64)
            eps = 2.0 ** -23 if n.lowp or n.type == "f32" else 2.0 ** -52
            tol = atol + rtol * np.abs(hi) + 16 * np.abs(lo - hi) + (4 * eps * n.mag if n.inexact else 0.0)
            both_nan = np.isnan(gg) & np.isnan(lo)
            same_inf = np.isinf(gg) & (gg == lo)
            close = np.abs(gg - lo) <= tol
            bad = ~(close | both_nan | same_inf) & ok
        if np.any(bad):
            idx = np.argwhere(bad)
            k = tuple(idx[0])
            problems.append(f"result {i}: {int(bad.sum())} of {bad.size} elements differ, first at {list(k)}: "
                            f"got {g[k]!r}, expected {n.val[k]!r}")
    if problems:
        return Outcome("wrong", "; ".join(problems), cmd, stderr, got)
    return Outcome("ok", "", cmd, stderr, got)


# ----------------------------------------------------------------------------------------------
# Minimization


def clone_prog_single(node, params_order=None):
    """A program returning `node`, with the params it uses (in creation order)."""
    used = [n for n in node.walk() if n.op == "param"]
    used.sort(key=lambda p: p.attrs["index"])
    return Program(used, [node], None)


def rebuild(node, mapping):
    """Copy of the tree with nodes replaced per mapping {id: new_node}; re-evaluation not needed
    except for the replaced ones (values are unchanged since replacements hold the same values)."""
    if node.id in mapping:
        return mapping[node.id]
    if not node.children:
        return node
    new_children = [rebuild(c, mapping) for c in node.children]
    if all(a is b for a, b in zip(new_children, node.children)):
        return node
    n = Node(node.op, new_children, type=node.type, shape=node.shape, **node.attrs)
    n.name = node.name
    n.value = node.value
    n.val, n.hi, n.unc, n.inexact, n.lowp, n.mag = node.val, node.hi, node.unc, node.inexact, node.lowp, node.mag
    return n


def same_failure(a, b):
    if a.kind != b.kind:
        return False
    if a.kind == "rejected":
        # the same message, ignoring the location
        return msg_key(a.detail) == msg_key(b.detail)
    if a.kind == "crash":
        return True
    return True


def msg_key(text):
    line = text.splitlines()[0] if text else ""
    if "error:" in line:
        line = line.split("error:", 1)[1]
    return line.strip()[:60]


def minimize(nxc, prog, outcome, workdir, log):
    """Returns (program, outcome) of a smaller program failing the same way."""
    best, best_out = prog, outcome
    # 1. the smallest failing sub-expression as the sole result
    cands = []
    for r_ in prog.results:
        cands.extend(n for n in r_.walk() if n.op not in ("param", "num"))
    cands.sort(key=lambda n: n.size())
    if len(prog.results) == 1 and outcome.kind != "wrong":
        pass
    tried = 0
    for n in cands:
        if tried > 40:
            break
        p2 = clone_prog_single(n)
        p2.minparens = prog.minparens
        if p2.source() == best.source():
            continue
        tried += 1
        o = run_nxc(nxc, p2, workdir, "min")
        if o.kind != "ok" and same_failure(o, outcome):
            best, best_out = p2, o
            break
    # 2. replace operands by parameters holding their values
    changed = True
    rounds = 0
    while changed and rounds < 6:
        changed = False
        rounds += 1
        root = best.results[0] if len(best.results) == 1 else None
        if root is None:
            break
        inner = [n for n in root.walk() if n is not root and n.op not in ("param", "num")]
        inner.sort(key=lambda n: -n.size())
        for n in inner:
            p = Node("param", type=n.type, shape=n.shape, index=0)
            p.val, p.hi, p.unc, p.inexact = n.val, n.val.astype(dt(n.type, "hi")), n.unc, False
            p.lowp = False
            p.mag = n.mag
            newroot = rebuild(root, {n.id: p})
            params = [q for q in newroot.walk() if q.op == "param"]
            for i_, q in enumerate(params):
                if q is p:
                    pass
            p2 = Program(params, [newroot], None)
            p2.minparens = prog.minparens
            o = run_nxc(nxc, p2, workdir, "min")
            if o.kind != "ok" and same_failure(o, outcome):
                best, best_out = p2, o
                changed = True
                break
    # 3. replace parameters with literals of the same type is not attempted; shrink nothing else
    return best, best_out


# ----------------------------------------------------------------------------------------------
# Driver


def signature(prog, outcome):
    root = prog.results[0]
    ops = sorted({n.op for n in root.walk() if n.op not in ("param", "num")})
    types = sorted({n.type for n in root.walk() if n.type})
    if outcome.kind == "rejected":
        return ("rejected", msg_key(outcome.detail))
    if outcome.kind == "crash":
        return ("crash", root.op, tuple(ops))
    return ("wrong", root.op, tuple(c.type or "num" for c in root.children), root.type)


def save_finding(keep, name, prog, outcome):
    os.makedirs(keep, exist_ok=True)
    base = os.path.join(keep, name)
    with open(base + ".nx", "w") as fh:
        fh.write(prog.source())
    args = []
    for i, p in enumerate(prog.params):
        np.save(f"{base}.arg{i}.npy", p.val)
        args.append(f"{name}.arg{i}.npy")
    if prog.is_tuple is None:
        np.save(base + ".expected.npy", prog.results[0].val)
    else:
        np.savez(base + ".expected.npz", *[r_.val for r_ in prog.results])
    lines = [f"kind: {outcome.kind}", f"detail: {outcome.detail}", "",
             "command (from the --keep directory):",
             "  nxc jit " + shlex.join([f"{name}.nx", "--fn", "f", *args, "--no-cache"]), "", "program:",
             prog.source(), "inputs:"]
    for i, p in enumerate(prog.params):
        lines.append(f"  arg{i}: {p.type}{list(p.shape)} = {np.array2string(p.val, threshold=50)}")
    if outcome.kind == "wrong":
        for i, r_ in enumerate(prog.results):
            lines.append(f"expected result {i}: {r_.type}{list(r_.shape)} = {np.array2string(r_.val, threshold=50)}")
            if outcome.got is not None and i < len(outcome.got):
                g = outcome.got[i]
                lines.append(f"observed result {i}: {g.dtype}{list(g.shape)} = {np.array2string(g, threshold=50)}")
            if r_.unc.any():
                lines.append(f"  ({int(r_.unc.sum())} uncertain elements not compared)")
    if outcome.stderr:
        lines += ["stderr:", outcome.stderr[-3000:]]
    with open(base + ".txt", "w") as fh:
        fh.write("\n".join(lines) + "\n")


def one_run(job):
    nxc, seed, workroot, do_min, avoid, big = job
    AVOID.clear()
    AVOID.update(avoid)
    PROFILE["big"] = big
    workdir = os.path.join(workroot, f"w{os.getpid()}")
    try:
        prog = generate(seed)
    except Exception:
        return seed, "generror", traceback.format_exc(), None
    try:
        out = run_nxc(nxc, prog, workdir)
    except Exception:
        return seed, "harness", traceback.format_exc(), None
    if out.kind == "ok":
        return seed, "ok", "", None
    orig = (prog.source(), out.detail)
    if do_min:
        try:
            prog, out = minimize(nxc, prog, out, workdir, None)
        except Exception:
            pass
    return seed, out.kind, out.detail, (prog, out, orig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nxc", required=True)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", default=None, help="directory to save minimized findings in")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-minimize", action="store_true")
    ap.add_argument("--print", action="store_true", help="print the program of SEED and exit")
    ap.add_argument("--avoid", default="", help="comma-separated known bugs to keep out of the programs: "
                    + ", ".join(f"{k} ({v})" for k, v in AVOID_CHOICES.items()) + "; 'all' for every one")
    ap.add_argument("--big", action="store_true", help="larger shapes (dims up to 1000, tensors up to 200k elements)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    for a in filter(None, args.avoid.split(",")):
        if a == "all":
            AVOID.update(AVOID_CHOICES)
        elif a in AVOID_CHOICES:
            AVOID.add(a)
        else:
            ap.error(f"unknown --avoid {a}")
    nxc = os.path.abspath(args.nxc)
    if args.print:
        prog = generate(args.seed)
        print(prog.source())
        for i, p in enumerate(prog.params):
            print(f"# arg{i}: {p.type}{list(p.shape)}")
        for r_ in prog.results:
            print(f"# result: {r_.type}{list(r_.shape)} = {np.array2string(r_.val, threshold=20)}")
        return 0
    workroot = tempfile.mkdtemp(prefix="nxc-diff-fuzz-")
    counts = {}
    sigs = {}
    t0 = time.time()
    PROFILE["big"] = args.big
    jobs = [(nxc, args.seed * 1_000_003 + i, workroot, not args.no_minimize, set(AVOID), args.big)
            for i in range(args.runs)]
    try:
        with ProcessPoolExecutor(max_workers=max(1, min(args.jobs, 2))) as pool:
            for seed, kind_, detail, extra in pool.map(one_run, jobs, chunksize=4):
                counts[kind_] = counts.get(kind_, 0) + 1
                if kind_ in ("generror", "harness"):
                    print(f"[{kind_}] seed {seed}:\n{detail}", file=sys.stderr)
                    continue
                if kind_ == "ok":
                    continue
                prog, out, orig = extra
                sig = signature(prog, out)
                first = sig not in sigs
                sigs.setdefault(sig, []).append(seed)
                if first or args.verbose:
                    print(f"[{kind_}] seed {seed}: {detail.splitlines()[0] if detail else ''}")
                    print(textwrap_indent(prog.source()))
                if args.keep and len(sigs[sig]) <= 3:
                    save_finding(args.keep, f"{kind_}-{seed}", prog, out)
    finally:
        shutil.rmtree(workroot, ignore_errors=True)
    dt_ = time.time() - t0
    print(f"\n{args.runs} programs in {dt_:.0f} s: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(f"{len(sigs)} distinct finding signatures:")
    for sig, seeds in sorted(sigs.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(seeds):4d}  {sig}  e.g. seed {seeds[0]}")
    return 1 if sigs else 0


def textwrap_indent(text):
    return "\n".join("    " + l for l in text.splitlines())


if __name__ == "__main__":
    sys.exit(main())

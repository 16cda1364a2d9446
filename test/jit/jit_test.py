#!/usr/bin/python3
"""End-to-end tests for `nxc jit` and `nxc repl`.

Each case runs the nxc binary on a .nx source from cases/ and checks what it
prints or writes:

  * printed results are compared character for character with the text Nx's
    inspect gives for the same tensors (the expected texts are Nx's own doctest
    outputs where one exists: nx/lib/nx.ex, Nx.Backend.inspect, Nx.Ryu);
  * .npy/.npz results are read back with NumPy and compared with a NumPy
    reference (f32 to rtol 1e-5, f64 to 1e-12, f16 to 2e-3, integers exactly),
    dtypes and shapes included;
  * the on-disk cache ($XDG_CACHE_HOME/nxc, a fresh directory per case), --bench,
    every documented error (exit status 1, a message on stderr) and piped repl
    sessions (exact stdout).

Any exit status other than 0 or 1 is a crash and fails the case that saw it.

Usage: /usr/bin/python3 test/jit/jit_test.py --nxc PATH --work DIR [-k FILTER] [--list]
"""

import argparse
import difflib
import errno
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import textwrap
import time
import traceback
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

CASES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")

# (rtol, atol) per floating-point result type, against a float64 reference.
TOLERANCES = {"f16": (2e-3, 0.0), "f32": (1e-5, 0.0), "f64": (1e-12, 0.0)}

NX_TO_NUMPY = {
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
    "f16": np.float16, "f32": np.float32, "f64": np.float64,
}

# How long to wait for the binary when it is briefly missing (being rebuilt).
BINARY_WAIT_S = 180


class CaseFailure(Exception):
    """A check failed; the message says what, with the command and its output."""


def source(name):
    return os.path.join(CASES_DIR, name)


def doc(text):
    """An expected output written as an indented block: dedented, one trailing newline."""
    return textwrap.dedent(text).strip("\n") + "\n"


# --------------------------------------------------------------------------
# Running nxc


def describe_status(rc):
    if rc < 0:
        try:
            return f"was killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"was killed by signal {-rc}"
    return f"exited with status {rc}"


@dataclass
class Result:
    cmd: list
    rc: int
    stdout: str
    stderr: str
    stdin: str = None

    def describe(self):
        lines = [f"  $ {shlex.join(self.cmd)}" + (" < (stdin below)" if self.stdin is not None else ""),
                 f"  nxc {describe_status(self.rc)}"]
        if self.stdin is not None:
            lines.append("  stdin:\n" + textwrap.indent(self.stdin.rstrip("\n") or "(empty)", "  < "))
        for name, text in (("stdout", self.stdout), ("stderr", self.stderr)):
            lines.append(f"  {name}:\n" + (textwrap.indent(text.rstrip("\n"), "  | ") if text else "  | (empty)"))
        return "\n".join(lines)

    @property
    def crashed(self):
        return self.rc not in (0, 1)


class Context:
    def __init__(self, nxc, work):
        self.nxc = nxc
        self.work = work
        self.case_name = None
        self.dir = None
        self.cache = None
        self._caches = 0

    def start_case(self, name):
        self.case_name = name
        self.dir = os.path.join(self.work, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self._caches = 0
        self.cache = self.fresh_cache()

    def path(self, *names):
        return os.path.join(self.dir, *names)

    def fresh_cache(self):
        """A new, empty directory to use as XDG_CACHE_HOME."""
        self._caches += 1
        path = self.path(f"xdg-cache-{self._caches}")
        os.makedirs(path)
        return path

    def save(self, name, array, **kwargs):
        path = self.path(name)
        np.save(path, array, **kwargs)
        return path

    def run(self, args, *, stdin=None, cache=None, env=None, timeout=120):
        """Runs nxc ARGS with XDG_CACHE_HOME set to this case's cache (or `cache`)."""
        cmd = [self.nxc, *args]
        if env is None:
            env = dict(os.environ, XDG_CACHE_HOME=cache or self.cache)
        deadline = time.monotonic() + BINARY_WAIT_S
        while True:
            try:
                proc = subprocess.run(cmd, input=stdin if stdin is not None else "",
                                      env=env, cwd=self.dir, capture_output=True, text=True,
                                      errors="replace", timeout=timeout)
                break
            except subprocess.TimeoutExpired:
                raise CaseFailure(f"nxc timed out after {timeout}s:\n  $ {shlex.join(cmd)}")
            except OSError as e:
                # The binary is being rebuilt: missing or busy for a moment.
                if e.errno in (errno.ENOENT, errno.ETXTBSY, errno.EACCES) and time.monotonic() < deadline:
                    time.sleep(1)
                    continue
                raise CaseFailure(f"cannot run nxc: {e}\n  $ {shlex.join(cmd)}")
        return Result(cmd, proc.returncode, proc.stdout, proc.stderr, stdin)

    def jit(self, *args, **kwargs):
        return self.run(["jit", *args], **kwargs)

    def jit_many(self, arg_lists, **kwargs):
        """Runs several `nxc jit` commands in parallel; results in order."""
        with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
            return list(pool.map(lambda args: self.jit(*args, **kwargs), arg_lists))


# --------------------------------------------------------------------------
# Checks


class Failures:
    """Collects the failures of a table-driven case so that one does not hide the next."""

    def __init__(self):
        self.messages = []

    def add(self, message):
        self.messages.append(message)

    def attempt(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except CaseFailure as e:
            self.add(str(e))

    def raise_if_any(self):
        if self.messages:
            raise CaseFailure(f"{len(self.messages)} check(s) failed:\n\n" + "\n\n".join(self.messages))


def check(condition, message):
    if not condition:
        raise CaseFailure(message)


def expect_ok(res, what="nxc"):
    if res.rc != 0:
        kind = "crashed" if res.crashed else "failed"
        raise CaseFailure(f"{what} {kind} (expected exit status 0):\n{res.describe()}")


def text_diff(expected, got):
    diff = difflib.unified_diff(expected.splitlines(keepends=True), got.splitlines(keepends=True),
                                "expected", "got", lineterm="\n")
    return "".join(line if line.endswith("\n") else line + "\\ (no newline)\n" for line in diff)


def expect_stdout(res, expected, what="stdout", rc=0):
    if rc == 0:
        expect_ok(res)
    else:
        check(res.rc == rc, f"{what}: expected exit status {rc}:\n{res.describe()}")
    if res.stdout != expected:
        raise CaseFailure(f"{what} differs from the expected text:\n"
                          f"  expected:\n{textwrap.indent(expected, '  > ')}"
                          f"  diff:\n{textwrap.indent(text_diff(expected, res.stdout), '    ')}"
                          f"{res.describe()}")


def expect_error(res, *substrings, what="nxc"):
    """Exit status 1, nothing on stdout, and every substring in stderr."""
    if res.rc != 1:
        kind = ("crashed" if res.crashed else "succeeded") + f" ({describe_status(res.rc)})"
        raise CaseFailure(f"{what} {kind}; expected exit status 1 with "
                          f"{' and '.join(map(repr, substrings))} on stderr:\n{res.describe()}")
    missing = [s for s in substrings if s not in res.stderr]
    check(not missing, f"{what}: stderr lacks {', '.join(map(repr, missing))}:\n{res.describe()}")
    check(res.stdout == "", f"{what}: an error printed something on stdout:\n{res.describe()}")


def expect_located(res, where, source_line=None):
    """stderr starts with WHERE:LINE:COL: error:, then the source line and a caret under COL.
    Returns (line, col)."""
    lines = res.stderr.splitlines()
    m = re.match(re.escape(where) + r":(\d+):(\d+): error: \S", lines[0] if lines else "")
    check(m, f"stderr does not start with '{where}:LINE:COL: error: ...':\n{res.describe()}")
    line, col = int(m.group(1)), int(m.group(2))
    check(len(lines) >= 3, f"a located error needs the source line and a caret after it:\n{res.describe()}")
    if source_line is not None:
        check(lines[1] == source_line,
              f"the quoted source line is {lines[1]!r}, expected {source_line!r}:\n{res.describe()}")
    check(lines[2].rstrip() == " " * (col - 1) + "^",
          f"the caret line {lines[2]!r} does not point at column {col}:\n{res.describe()}")
    return line, col


def file_line(path, line):
    with open(path) as f:
        return f.read().splitlines()[line - 1]


def compare_arrays(label, got, ref, nx_type):
    """got (read from nxc's output) against a reference: dtype, shape, values."""
    want_dtype = np.dtype(NX_TO_NUMPY[nx_type])
    check(got.dtype == want_dtype,
          f"{label}: dtype {got.dtype.str} ({got.dtype}), expected {want_dtype.str} ({nx_type})")
    ref = np.asarray(ref)
    check(got.shape == ref.shape, f"{label}: shape {got.shape}, expected {ref.shape}")
    if nx_type in TOLERANCES:
        rtol, atol = TOLERANCES[nx_type]
        g, r = got.astype(np.float64), ref.astype(np.float64)
        same_nan = np.isnan(g) & np.isnan(r)
        same_inf = np.isinf(r) & (g == r)
        with np.errstate(invalid="ignore"):
            bad = ~(same_nan | same_inf | (np.abs(g - r) <= atol + rtol * np.abs(r)))
        rule = f"|got - expected| <= {atol:g} + {rtol:g} * |expected|"
    else:
        r = ref.astype(got.dtype)
        bad = got != r
        rule = "exact"
    if np.any(bad):
        shown = []
        for k in np.flatnonzero(bad)[:5]:
            i = np.unravel_index(k, got.shape) if got.shape else ()
            shown.append(f"    at {list(map(int, i))}: got {got[i]!r}, expected {ref[i]!r}")
        raise CaseFailure(f"{label}: {int(np.sum(bad))} of {got.size} elements differ ({rule}):\n"
                          + "\n".join(shown))


def wrap(values, nx_type):
    """Integer results wrap around in their type, as Nx's do: exact integers reduced modulo 2^bits."""
    dtype = np.dtype(NX_TO_NUMPY[nx_type])
    bits = 8 * dtype.itemsize
    v = np.asarray(values, dtype=object) % (1 << bits)
    if dtype.kind == "i":
        v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
    return np.asarray(v, dtype=object).astype(dtype)


def exact(x):
    """An integer (or bool) array as Python integers, for reference math without overflow."""
    return np.array(np.asarray(x).tolist(), dtype=object)


def load_npy(path, res):
    check(os.path.exists(path), f"nxc did not write {path}:\n{res.describe()}")
    try:
        return np.load(path, allow_pickle=False)
    except Exception as e:
        raise CaseFailure(f"NumPy cannot read {path}: {e}\n{res.describe()}")


def files_under(path):
    """Every regular file under path (relative names), empty if path does not exist."""
    found = []
    for root, _, names in os.walk(path):
        found += [os.path.relpath(os.path.join(root, n), path) for n in names]
    return sorted(found)


# --------------------------------------------------------------------------
# 1. Printing: literals in, Nx's inspect text out


def check_prints(ctx, nx_file, table):
    """table: (--fn, [args], expected text, where the expected text comes from)."""
    results = ctx.jit_many([[source(nx_file), "--fn", fn, *args] for fn, args, _, _ in table])
    failures = Failures()
    for (fn, args, expected, origin), res in zip(table, results):
        failures.attempt(expect_stdout, res, expected, what=f"{fn} {shlex.join(args)} (expected: {origin})")
        if res.rc == 0 and res.stderr:
            failures.add(f"{fn}: a successful run wrote to stderr:\n{res.describe()}")
    failures.raise_if_any()


def case_print_doctests(ctx):
    """Results of Nx's own doctests for add/divide (nx/lib/nx.ex), with literal arguments."""
    check_prints(ctx, "printing.nx", [
        ("add", ["1", "2"], doc("""
            #Nx.Tensor<
              s32
              3
            >"""), "Nx.add(1, 2) doctest"),
        ("Printing.add", ["1", "2.2"], doc("""
            #Nx.Tensor<
              f32
              3.2
            >"""), "Nx.add(1, 2.2) doctest"),
        ("add", ["[1, 2, 3]", "1"], doc("""
            #Nx.Tensor<
              s32[3]
              [2, 3, 4]
            >"""), "Nx.add(Nx.tensor([1, 2, 3]), 1) doctest, without names"),
        ("add", ["[1, 2, 3]", "1.0"], doc("""
            #Nx.Tensor<
              f32[3]
              [2.0, 3.0, 4.0]
            >"""), "Nx.add(Nx.tensor([1, 2, 3]), 1.0) doctest"),
        ("add", ["[[1, 2], [3, 4]]", "[[10, 20], [30, 40]]"], doc("""
            #Nx.Tensor<
              s32[2][2]
              [
                [11, 22],
                [33, 44]
              ]
            >"""), "Nx.add doctest 'Adding tensors of the same shape'"),
        ("add", ["[[1], [2]]", "[[10, 20]]"], doc("""
            #Nx.Tensor<
              s32[2][2]
              [
                [11, 21],
                [12, 22]
              ]
            >"""), "Nx.add doctest 'Adding tensors with broadcasting'"),
        ("divide", ["1", "[1.0, 2.0, 3.0]"], doc("""
            #Nx.Tensor<
              f32[3]
              [1.0, 0.5, 0.33333334]
            >"""), "Nx.divide(1, Nx.tensor([1.0, 2.0, 3.0])) doctest"),
        ("divide", ["[[1], [2]]", "[[10, 20]]"], doc("""
            #Nx.Tensor<
              f32[2][2]
              [
                [0.1, 0.05],
                [0.2, 0.1]
              ]
            >"""), "Nx.divide doctest 'Dividing tensors'"),
        ("divide", ["s8:[[1], [2]]", "s8:[[10, 20]]"], doc("""
            #Nx.Tensor<
              f32[2][2]
              [
                [0.1, 0.05],
                [0.2, 0.1]
              ]
            >"""), "Nx.divide doctest with type: :s8"),
        ("bitwise_and", ["--", "[0, -1, -2]", "-1"], doc("""
            #Nx.Tensor<
              s32[3]
              [0, -1, -2]
            >"""), "Nx.bitwise_and(Nx.tensor([0, -1, -2]), -1) doctest; negatives after --"),
        ("softmax", ["[1.0, 2.0, 3.0]"], doc("""
            #Nx.Tensor<
              f32[3]
              [0.09003057, 0.24472848, 0.66524094]
            >"""), "the CLI contract's softmax example"),
    ])


def case_print_comparisons(ctx):
    """u8 results of comparisons: Nx.greater doctests."""
    check_prints(ctx, "printing.nx", [
        ("greater", ["1", "2"], doc("""
            #Nx.Tensor<
              u8
              0
            >"""), "Nx.greater(1, 2) doctest"),
        ("greater", ["[1, 2, 3]", "[1, 2, 2]"], doc("""
            #Nx.Tensor<
              u8[3]
              [0, 0, 1]
            >"""), "Nx.greater doctest 'Comparison of tensors'"),
        ("greater", ["[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]", "[1, 2, 3]"], doc("""
            #Nx.Tensor<
              u8[2][3]
              [
                [0, 0, 0],
                [1, 1, 1]
              ]
            >"""), "Nx.greater doctest with a float matrix and an integer vector"),
    ])


def case_print_literals(ctx):
    """Typed literals, nesting and scalars through the identity function (Nx.tensor doctests)."""
    check_prints(ctx, "printing.nx", [
        ("identity", ["[[[1, 2], [3, 4], [5, 6]], [[-1, -2], [-3, -4], [-5, -6]]]"], doc("""
            #Nx.Tensor<
              s32[2][3][2]
              [
                [
                  [1, 2],
                  [3, 4],
                  [5, 6]
                ],
                [
                  [-1, -2],
                  [-3, -4],
                  [-5, -6]
                ]
              ]
            >"""), "Nx.tensor doctest, rank 3"),
        ("identity", ["[1, 2, 3.0]"], doc("""
            #Nx.Tensor<
              f32[3]
              [1.0, 2.0, 3.0]
            >"""), "Nx.tensor([1, 2, 3.0]) doctest: mixed types give floats"),
        ("identity", ["f64:[1, 2, 3]"], doc("""
            #Nx.Tensor<
              f64[3]
              [1.0, 2.0, 3.0]
            >"""), "Nx.tensor([1, 2, 3], type: :f64) doctest"),
        ("identity", ["f16:[1, 2, 3]"], doc("""
            #Nx.Tensor<
              f16[3]
              [1.0, 2.0, 3.0]
            >"""), "Nx.tensor([1, 2, 3], type: :f16) doctest"),
        ("identity", ["s64:[9223372036854775807, -9223372036854775808]"], doc("""
            #Nx.Tensor<
              s64[2]
              [9223372036854775807, -9223372036854775808]
            >"""), "integers print with Integer.to_string/1 (Nx.Backend.inspect)"),
        ("identity", ["u8:7"], doc("""
            #Nx.Tensor<
              u8
              7
            >"""), "a u8 scalar prints without brackets"),
        ("identity", ["f32:[]"], doc("""
            #Nx.Tensor<
              f32[0]
              []
            >"""), "Nx.Backend.inspect: an empty dimension prints []"),
    ])


def case_print_floats(ctx):
    """Shortest round-trip float text: Nx.Ryu for f32/f16, Float.to_string for f64."""
    check_prints(ctx, "printing.nx", [
        ("identity", ["--", "[0.1, -0.0, 1.0, 2.0]"], doc("""
            #Nx.Tensor<
              f32[4]
              [0.1, -0.0, 1.0, 2.0]
            >"""), "nx/test/nx/ryu_test.exs: f32 0x3DCCCCCD is \"0.1\", 0x80000000 \"-0.0\""),
        ("identity", ["f16:[1.0e-7, 65400.0, 21250.0]"], doc("""
            #Nx.Tensor<
              f16[3]
              [1e-7, 6.54e4, 21250.0]
            >"""), "nx/test/fixtures/f16_table.txt: 0002:1E-7, 7BFC:6.54E4, 7530:21250.0"),
        ("identity", ["f64:[0.1, 1.0e-7, 1.0e20]"], doc("""
            #Nx.Tensor<
              f64[3]
              [0.1, 1.0e-7, 1.0e20]
            >"""), "Nx.Backend.inspect uses Float.to_string/1 for f64"),
        ("identity", ["f16:[1000.0, 1024.0, 100.0]"], doc("""
            #Nx.Tensor<
              f16[3]
              [1e3, 1024.0, 100.0]
            >"""), "nx/test/fixtures/f16_table.txt: 63D0:1E3, 6400:1024.0, 5640:100.0"),
        ("identity", ["[-Inf, NaN, Inf]"], doc("""
            #Nx.Tensor<
              f32[3]
              [-Inf, NaN, Inf]
            >"""), "Nx.tensor([:neg_infinity, :nan, :infinity]) doctest"),
        ("add", ["NaN", "1.0"], doc("""
            #Nx.Tensor<
              f32
              NaN
            >"""), "NaN + 1 is NaN"),
        ("add", ["Inf", "--", "-Inf"], doc("""
            #Nx.Tensor<
              f32
              NaN
            >"""), "Inf + -Inf is NaN"),
        ("add", ["f64:Inf", "1"], doc("""
            #Nx.Tensor<
              f64
              Inf
            >"""), "f64 Inf prints Inf (Nx.Backend.inspect float_to_string/3)"),
    ])


def ryu_text(value):
    """How Nx prints an f32/f16 value: Nx.Ryu.bits_to_decimal (nx/lib/nx/ryu.ex), i.e. the
    shortest round-trip digits (taken here from NumPy's unique Dragon4) laid out by its
    insert_decimal/insert_exp."""
    if np.isnan(value):
        return "NaN"
    if np.isinf(value):
        return "-Inf" if value < 0 else "Inf"
    sign = "-" if np.signbit(value) else ""
    if value == 0:
        return sign + "0.0"
    mantissa, exponent = np.format_float_scientific(abs(value), unique=True, trim="-").split("e")
    digits = mantissa.replace(".", "").rstrip("0")
    place = int(exponent) - (len(digits) - 1)  # value = digits * 10^place
    length = len(digits)
    exp = place + length - 1
    exp_cost = len(str(exp)) + 2

    def insert_exp():
        return digits + "e" + str(exp) if length == 1 else f"{digits[0]}.{digits[1:]}e{exp}"

    if place < 0:
        if exp >= 0:
            return sign + digits[:length + place] + "." + digits[length + place:]
        if 2 - place - length <= exp_cost:
            return sign + "0." + "0" * (-place - length) + digits
        return sign + insert_exp()
    dot = 1 if length == 1 else 0
    if exp_cost + dot >= place + 2:
        return sign + digits + "0" * place + ".0"
    return sign + insert_exp()


def case_print_float_text(ctx):
    """Random finite f32 and f16 values (all exponents, subnormals included) print as Nx.Ryu does."""
    rng = np.random.default_rng(7)
    f32 = rng.integers(0, 2 ** 32, size=200, dtype=np.uint64).astype(np.uint32).view(np.float32)
    f32 = f32[np.isfinite(f32)]
    specials32 = np.array([1.0e-45, 1.17549435e-38, 3.4028235e38, 16777216.0, 1.0e7, 123456.7, 0.3,
                           2.0 / 3.0, 1.0e-4, 0.001, 5.0e-324], dtype=np.float32)
    f16 = rng.integers(0, 2 ** 16, size=100, dtype=np.uint32).astype(np.uint16).view(np.float16)
    f16 = f16[np.isfinite(f16)]
    batches = [("f32", f32[i:i + 50]) for i in range(0, len(f32), 50)] + [("f32", specials32)]
    batches += [("f16", f16[i:i + 50]) for i in range(0, len(f16), 50)]
    paths = [ctx.save(f"values{k}.npy", values) for k, (_, values) in enumerate(batches)]
    results = ctx.jit_many([[source("printing.nx"), "--fn", "identity", p] for p in paths])
    failures = Failures()
    for (nx_type, values), res in zip(batches, results):
        expected = (f"#Nx.Tensor<\n  {nx_type}[{len(values)}]\n  "
                    f"[{', '.join(ryu_text(v) for v in values)}]\n>\n")
        if res.rc == 0 and res.stdout != expected:
            got = res.stdout.splitlines()[2].strip()[1:-1].split(", ") if res.stdout.count("\n") >= 3 else []
            wrong = [f"    bits 0x{v.view(np.uint32 if nx_type == 'f32' else np.uint16):x}: got {g}, "
                     f"expected {ryu_text(v)}" for v, g in zip(values, got) if g != ryu_text(v)]
            failures.add(f"{nx_type} values print differently from Nx.Ryu:\n" + "\n".join(wrong[:10])
                         + f"\n{res.describe()}")
        else:
            failures.attempt(expect_stdout, res, expected)
    failures.raise_if_any()


def case_print_limit(ctx):
    """Inspect's default limit of 50 elements: the rest is '...' (Nx.Backend.inspect chunk_each)."""
    vector = "[" + ", ".join(map(str, range(100))) + "]"
    matrix = "[" + ", ".join("[" + ", ".join(str(10 * i + j) for j in range(10)) + "]"
                             for i in range(10)) + "]"
    first50 = ", ".join(map(str, range(50)))
    rows = "".join(f"    [{', '.join(str(10 * i + j) for j in range(10))}],\n" for i in range(5))
    check_prints(ctx, "printing.nx", [
        ("identity", [vector], f"#Nx.Tensor<\n  s32[100]\n  [{first50}, ...]\n>\n",
         "Inspect.Opts limit 50; chunk_each appends \"...\" when the limit reaches 0"),
        ("identity", [matrix], f"#Nx.Tensor<\n  s32[10][10]\n  [\n{rows}    ...\n  ]\n>\n",
         "the limit counts elements across rows; the outer list ends with ..."),
    ])


def case_print_value(ctx):
    """print_value prints at run time as IO.inspect does (label first, each loop iteration), before
    the result; print_expr prints the traced expression. Ahead of time, print_value compiles to
    nothing (the library has no print calls)."""
    res = ctx.jit(source("printing.nx"), "--fn", "Printing.traced", "[0.0, 1.0]")
    expect_stdout(res, "#Nx.Tensor<\n  f32[2]\n  \n" + doc("""
          Nx.Defn.Expr
          parameter a:0   f32[2]
          b = negate a    f32[2]
        >
        exp: #Nx.Tensor<
          f32[2]
          [1.0, 2.7182817]
        >
        acc: #Nx.Tensor<
          f32[2]
          [1.0, 2.0]
        >
        acc: #Nx.Tensor<
          f32[2]
          [2.0, 3.0]
        >
        pair: {#Nx.Tensor<
           f32[2]
           [2.0, 3.0]
         >,
         #Nx.Tensor<
           f32
           3.7182817
         >}
        #Nx.Tensor<
          f32[2]
          [0.0, 10.0]
        >
        #Nx.Tensor<
          f32[2]
          [2.0, 3.0]
        >
        """))
    out = ctx.path("aot")
    res = ctx.run(["aot", source("printing.nx"), "--fn", "Printing.traced(f32[2])", "-o", out])
    expect_ok(res, "nxc aot of a function with print_value")
    syms = subprocess.run(["nm", "-D", os.path.join(out, "libprinting.so")],
                          capture_output=True, text=True).stdout
    check("nxc_print" not in syms, f"the AOT library refers to the printer:\n{syms}")


def case_hostile_names_and_options(ctx):
    """Parameter names that are C/C++ keywords or generated names (int, new, result, workspace), or
    equal once upper-cased for the size macros (ab, aB), get a trailing "_" in the header, which
    compiles as C and as C++; --name nxrt, an out-of-range --stack-workspace-limit and --time inf
    are errors that say why."""
    src = ctx.path("names.nx")
    with open(src, "w") as f:
        f.write("defmodule M do\n  import Nx.Defn\n"
                "  defn f(int, new, result, workspace), do: int + new + result + workspace\n"
                "  defn g(ab, aB), do: ab - aB\nend\n")
    out = ctx.path("names_out")
    res = ctx.run(["aot", src, "--fn", "M.f(f32[2], f32[2], f32[2], f32[2])", "--fn", "M.g(f32[2], f32[2])",
                   "--name", "m", "-o", out])
    expect_ok(res, "nxc aot with hostile parameter names")
    header = open(os.path.join(out, "m.h")).read()
    check("int m_f(const float *int_, const float *new_, const float *result_, const float *workspace_, "
          "float *result);" in header, "keywords and generated names are not escaped:\n" + header)
    check("#define M_G_AB_SIZE 2" in header and "#define M_G_AB__SIZE 2" in header,
          "two parameters share a size macro")
    with open(ctx.path("t.c"), "w") as f:
        f.write('#include "m.h"\nint main(void) { return 0; }\n')
    for compiler, lang in (("cc", "c"), ("c++", "c++")):
        p = subprocess.run([compiler, "-Wall", "-Werror", "-x", lang, "-c", "-I" + out, ctx.path("t.c"), "-o",
                            ctx.path("t.o")], capture_output=True, text=True)
        check(p.returncode == 0, f"the header does not compile as {lang}:\n{p.stderr}")
    g = ctx.path("g.nx")
    with open(g, "w") as f:
        f.write("defmodule M do\n  import Nx.Defn\n  defn g(x), do: x\nend\n")
    expect_error(ctx.run(["aot", g, "--fn", "M.g(f32[2])", "--name", "nxrt", "-o", out]),
                 "--name nxrt would overwrite the runtime's files")
    expect_error(ctx.run(["aot", g, "--fn", "M.g(f32[2])", "--stack-workspace-limit", "-5", "-o", out]),
                 "--stack-workspace-limit -5 is out of range")
    expect_error(ctx.jit(g, "--fn", "M.g", "[1.0]", "--bench", "--time", "inf"), "--time inf is out of range")


def case_print_tuples(ctx):
    """Tuples print as Elixir inspects them: '{', elements nested by one more space, ',' breaks
    (the tuple outputs in nx/guides/cheatsheets/numpy_nx.cheatmd and nx/lib/nx/serving.ex)."""
    check_prints(ctx, "printing.nx", [
        ("pair", ["[1, 2]"], doc("""
            {#Nx.Tensor<
               s32[2]
               [2, 3]
             >,
             #Nx.Tensor<
               s32[2]
               [2, 4]
             >}"""), "Elixir tuple inspect with force_unfit tensor docs"),
        ("nested", ["[1.5, 2.0]"], doc("""
            {#Nx.Tensor<
               f32[2]
               [2.5, 3.0]
             >,
             {#Nx.Tensor<
                f32[2]
                [3.0, 4.0]
              >,
              #Nx.Tensor<
                f32
                3.5
              >}}"""), "a nested tuple nests once more"),
    ])


# --------------------------------------------------------------------------
# 2. .npy in, .npy out, against NumPy


def rng_array(rng, dtype, shape):
    """Deterministic test data: integers over their whole range (to exercise wrap-around),
    floats in [0.5, 4) (no cancellation, so that a relative tolerance suits every result)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    return rng.uniform(0.5, 4, size=shape).astype(dtype)


def ref_affine(x, out):
    if out in TOLERANCES:
        return x.astype(np.float64) * 3 + 1
    return wrap(exact(x) * 3 + 1, out)


def ref_mix(a, b, out):
    if out in TOLERANCES:
        a, b = a.astype(np.float64), b.astype(np.float64)
        return a * b + a
    return wrap(exact(a) * exact(b) + exact(a), out)


def ref_row_sum(x, out):
    if out in TOLERANCES:
        return x.astype(np.float64).sum(axis=-1)
    return wrap(exact(x).sum(axis=-1), out)


def ref_softmax(x, out):
    x = x.astype(np.float64)
    e = np.exp(x - x.max())
    return e / e.sum()


def ref_mm(a, b, out):
    if out in TOLERANCES:
        return np.dot(a.astype(np.float64), b.astype(np.float64))
    return wrap(np.dot(exact(a), exact(b)), out)


def run_npy_table(ctx, table, seed):
    """table: (fn, [(dtype, shape) or array per argument], result Nx type, reference).
    Writes the inputs, runs `nxc jit numeric.nx --fn FN IN.npy... -o OUT.npy` and compares."""
    rng = np.random.default_rng(seed)
    jobs = []
    for k, (fn, specs, out_type, ref) in enumerate(table):
        inputs, paths = [], []
        for j, spec in enumerate(specs):
            x = spec if isinstance(spec, np.ndarray) else rng_array(rng, *spec)
            inputs.append(x)
            paths.append(ctx.save(f"in{k}_{j}.npy", x))
        out = ctx.path(f"out{k}.npy")
        jobs.append((fn, inputs, out_type, ref, out, [source("numeric.nx"), "--fn", fn, *paths, "-o", out]))
    results = ctx.jit_many([job[-1] for job in jobs])
    failures = Failures()
    for (fn, inputs, out_type, ref, out, _), res in zip(jobs, results):
        sig = ", ".join(f"{x.dtype.str}{list(x.shape)}" for x in inputs)
        label = f"{fn}({sig}) -> {out_type}"
        try:
            expect_ok(res, label)
            check(res.stdout == "", f"{label}: -o given, yet something was printed:\n{res.describe()}")
            compare_arrays(label, load_npy(out, res), ref(*inputs, out_type), out_type)
        except CaseFailure as e:
            msg = str(e)
            failures.add(msg if "$ " in msg else f"{msg}\n{res.describe()}")
    failures.raise_if_any()


def case_npy_dtypes_shapes(ctx):
    """x * 3 + 1 over the dtypes and shapes of the contract; integers wrap in their type."""
    table = []
    for dtype, nx, shapes in [
            (np.float32, "f32", [(), (0,), (3,), (2, 3), (2, 3, 4)]),
            (np.float64, "f64", [(), (2, 3, 4)]),
            (np.int32, "s32", [(), (3,), (2, 3)]),
            (np.int64, "s64", [(2, 3), (0,)]),
            (np.uint8, "u8", [(), (2, 3, 4)]),
            (np.int8, "s8", [(3,), (2, 3)]),
            (np.uint16, "u16", [(2, 3)]),
            (np.int16, "s16", [(3,)]),
            (np.uint32, "u32", [(2, 2)]),
            (np.uint64, "u64", [(3,)]),
            (np.float16, "f16", [(3,), (2, 3)])]:
        table += [("affine", [(dtype, shape)], nx, ref_affine) for shape in shapes]
    run_npy_table(ctx, table, seed=1)


def case_npy_byte_order_and_bool(ctx):
    """Big-endian inputs are read by value; bool is read as u8; results are native order."""
    rng = np.random.default_rng(2)
    be_f4 = rng.uniform(0.5, 4, size=(2, 3)).astype(">f4")
    be_f8 = rng.uniform(0.5, 4, size=(2, 2)).astype(">f8")
    be_i4 = np.array([1, -70000, 2 ** 30, -5], dtype=">i4")
    be_u2 = np.array([[1, 65535], [300, 7]], dtype=">u2")
    flags = np.array([[True, False, True], [False, False, True]])
    run_npy_table(ctx, [
        ("affine", [be_f4], "f32", ref_affine),
        ("affine", [be_f8], "f64", ref_affine),
        ("affine", [be_i4], "s32", ref_affine),
        ("affine", [be_u2], "u16", ref_affine),
        ("affine", [flags], "u8", ref_affine),
        ("row_sum", [flags], "u32", ref_row_sum),
        ("mix", [be_f4, be_f4.astype("<f4")], "f32", ref_mix),
    ], seed=2)


def case_npy_promotion_broadcast(ctx):
    """Two arguments: Nx.Type.merge promotion and broadcasting, as NumPy computes them."""
    run_npy_table(ctx, [
        ("mix", [(np.int32, (2, 3, 4)), (np.int32, (4,))], "s32", ref_mix),
        ("mix", [(np.int8, (2, 3)), (np.uint8, (2, 3))], "s16", ref_mix),
        ("mix", [(np.uint16, (3,)), (np.int8, ())], "s32", ref_mix),
        ("mix", [(np.uint8, (2, 3)), (np.uint8, (3,))], "u8", ref_mix),
        ("mix", [(np.float32, (2, 3)), (np.float64, ())], "f64", ref_mix),
        ("mix", [(np.int32, (3,)), (np.float32, (3,))], "f32", ref_mix),
        ("mix", [(np.float16, (3,)), (np.float32, (2, 3))], "f32", ref_mix),
        ("mix", [(np.int64, (2, 1)), (np.int32, (1, 3))], "s64", ref_mix),
    ], seed=3)


def case_npy_reductions_dot(ctx):
    """Sums (Nx.Type.to_aggregate: small ints sum as s32/u32), softmax and dot."""
    run_npy_table(ctx, [
        ("row_sum", [(np.float32, (2, 3, 4))], "f32", ref_row_sum),
        ("row_sum", [(np.float64, (3,))], "f64", ref_row_sum),
        ("row_sum", [(np.int32, (2, 3))], "s32", ref_row_sum),
        ("row_sum", [(np.uint8, (2, 3))], "u32", ref_row_sum),
        ("row_sum", [(np.int8, (5,))], "s32", ref_row_sum),
        ("row_sum", [(np.uint16, (2, 3))], "u32", ref_row_sum),
        ("row_sum", [(np.int64, (2, 3))], "s64", ref_row_sum),
        ("row_sum", [(np.float32, (0,))], "f32", ref_row_sum),
        ("softmax", [(np.float32, (3,))], "f32", ref_softmax),
        ("softmax", [(np.float32, (2, 3))], "f32", ref_softmax),
        ("softmax", [(np.float64, (2, 3, 4))], "f64", ref_softmax),
        ("mm", [(np.float32, (2, 3)), (np.float32, (3, 4))], "f32", ref_mm),
        ("mm", [(np.int32, (3,)), (np.int32, (3,))], "s32", ref_mm),
        ("mm", [(np.float64, (4, 2)), (np.float64, (2,))], "f64", ref_mm),
    ], seed=4)


def case_npy_zero_size(ctx):
    """Zero-size tensors with a zero in any dimension: an empty result (or a sum of 0)."""
    run_npy_table(ctx, [
        ("affine", [(np.float32, (0, 2))], "f32", ref_affine),
        ("affine", [(np.float32, (2, 0, 3))], "f32", ref_affine),
        ("affine", [(np.int16, (2, 0))], "s16", ref_affine),
        ("row_sum", [(np.float32, (2, 0))], "f32", ref_row_sum),
    ], seed=5)


# --------------------------------------------------------------------------
# 3. .npz in (tuple parameters), .npz out (tuple results)


def lin_inputs(ctx):
    rng = np.random.default_rng(6)
    w = rng.uniform(-1, 1, size=(3, 2)).astype(np.float32)
    b = rng.uniform(-1, 1, size=(2,)).astype(np.float32)
    x = rng.uniform(-1, 1, size=(4, 3)).astype(np.float32)
    return w, b, x


def case_npz_tuple_parameter(ctx):
    """lin({w, b}, x): {w, b} from savez, from savez_compressed, and from two .npy files."""
    w, b, x = lin_inputs(ctx)
    ref = x.astype(np.float64) @ w.astype(np.float64) + b
    np.savez(ctx.path("wb.npz"), w, b)
    np.savez_compressed(ctx.path("wb_compressed.npz"), w, b)
    xp, wp, bp = ctx.save("x.npy", x), ctx.save("w.npy", w), ctx.save("b.npy", b)
    runs = [("savez", [ctx.path("wb.npz"), xp]),
            ("savez_compressed", [ctx.path("wb_compressed.npz"), xp]),
            ("consecutive .npy arguments", [wp, bp, xp])]
    results = ctx.jit_many([[source("tuples.nx"), "--fn", "Tuples.lin", *args, "-o", ctx.path(f"y{k}.npy")]
                            for k, (_, args) in enumerate(runs)])
    failures = Failures()
    outputs = []
    for k, ((how, _), res) in enumerate(zip(runs, results)):
        try:
            expect_ok(res, f"lin with {how}")
            got = load_npy(ctx.path(f"y{k}.npy"), res)
            compare_arrays(f"lin({{w, b}} from {how}, x)", got, ref, "f32")
            outputs.append(got.tobytes())
        except CaseFailure as e:
            failures.add(str(e))
    failures.raise_if_any()
    check(len(set(outputs)) == 1, "lin gave different bytes for the same {w, b} given three ways")


def case_npz_named_by_template(ctx):
    """lin_named({w, b}, x) reduces over the axis named :out: the names come from a template written after
    the .npz; without it the name is unknown, and a template that does not match the file is an error."""
    w, b, x = lin_inputs(ctx)
    ref = (x.astype(np.float64) @ w.astype(np.float64) + b).sum(axis=1)
    np.savez(ctx.path("wbn.npz"), w, b)
    xp = ctx.save("xn.npy", x)
    fn = [source("tuples.nx"), "--fn", "Tuples.lin_named"]
    named, unnamed, wrong = ctx.jit_many([
        [*fn, ctx.path("wbn.npz") + ":{f32[3, out: 2], f32[out: 2]}", xp, "-o", ctx.path("yn.npy")],
        [*fn, ctx.path("wbn.npz"), xp],
        [*fn, ctx.path("wbn.npz") + ":{f32[2, out: 3], f32[out: 2]}", xp]])
    expect_ok(named, "lin_named with names from the template")
    compare_arrays("lin_named", load_npy(ctx.path("yn.npy"), named), ref, "f32")
    expect_error(unnamed, "key :out not found")
    # The error points at the first leaf of the template, in the argument as written.
    expect_error(wrong, f"argument 1:1:{len(ctx.path('wbn.npz')) + 3}: error:",
                 "holds f32[3][2], but the template declares f32[2][out: 3]")


def check_npz_result(ctx, res, path, refs, types):
    expect_ok(res, "a tuple result written to .npz")
    check(os.path.exists(path), f"nxc did not write {path}:\n{res.describe()}")
    check(zipfile.is_zipfile(path), f"{path} is not a zip archive")
    with np.load(path, allow_pickle=False) as z:
        names = list(z.files)
        want = [f"arr_{i}" for i in range(len(refs))]
        check(names == want, f"{path} holds {names}, expected {want} (depth-first)")
        for name, ref, nx_type in zip(names, refs, types):
            compare_arrays(f"{os.path.basename(path)}:{name}", z[name], ref, nx_type)


def case_npz_tuple_result(ctx):
    """Tuple results with -o OUT.npz: arr_0, arr_1 (and depth-first for nested tuples)."""
    w, b, x = lin_inputs(ctx)
    np.savez(ctx.path("wb.npz"), w, b)
    xp = ctx.save("x.npy", x)
    v = np.array([1, 5, -2, 7], dtype=np.int32)
    vp = ctx.save("v.npy", v)
    out1, out2 = ctx.path("stats.npz"), ctx.path("nested.npz")
    res1, res2 = ctx.jit_many([
        [source("tuples.nx"), "--fn", "stats", ctx.path("wb.npz"), xp, "-o", out1],
        [source("tuples.nx"), "--fn", "nested", vp, "-o", out2]])
    failures = Failures()
    failures.attempt(check_npz_result, ctx, res1, out1,
                     [x.astype(np.float64) @ w.astype(np.float64) + b, w.astype(np.float64).sum(axis=0)],
                     ["f32", "f32"])
    failures.attempt(check_npz_result, ctx, res2, out2, [v + 1, v * 2, np.int32(v.sum())],
                     ["s32", "s32", "s32"])
    failures.raise_if_any()


# --------------------------------------------------------------------------
# 4. The on-disk cache

COMPILED_RE = re.compile(r"^nxc: (?P<sig>.+): compiled in .+, cached in (?P<path>.+)$", re.M)
HIT_RE = re.compile(r"^nxc: (?P<sig>.+): cache hit, (?P<path>\S+)", re.M)


def expect_verbose(res, kind, cache_dir, sig_parts):
    """-v said `compiled ... cached in PATH` or `cache hit, PATH`; PATH is in CACHE/nxc and exists."""
    expect_ok(res)
    pattern = COMPILED_RE if kind == "compiled" else HIT_RE
    m = pattern.search(res.stderr)
    other = HIT_RE if kind == "compiled" else COMPILED_RE
    check(m and not other.search(res.stderr),
          f"-v should say {'compiled ..., cached in PATH' if kind == 'compiled' else 'cache hit, PATH'}:\n"
          f"{res.describe()}")
    for part in sig_parts:
        check(part in m.group("sig"), f"-v names {m.group('sig')!r}, which lacks {part!r}:\n{res.describe()}")
    path = m.group("path")
    nxc_dir = os.path.join(cache_dir, "nxc")
    check(os.path.dirname(os.path.abspath(path)) == nxc_dir,
          f"the cached code {path} is not in $XDG_CACHE_HOME/nxc ({nxc_dir})")
    check(os.path.isfile(path), f"-v names {path}, which does not exist")
    return path


def softmax_input(ctx, n, name):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    return x, ctx.save(name, x)


def case_cache_hit_and_miss(ctx):
    """softmax(f32[1000000]): compiled, then a cache hit in a new process with the same bytes;
    another shape is a miss; the cache directory holds the code."""
    x, xp = softmax_input(ctx, 1_000_000, "x.npy")
    src = source("cache.nx")
    args = [src, "--fn", "MyDefn.softmax", xp, "-v"]
    check(files_under(ctx.cache) == [], "the fresh cache directory is not empty")

    first = ctx.jit(*args, "-o", ctx.path("y1.npy"))
    path1 = expect_verbose(first, "compiled", ctx.cache, ["softmax", "f32[1000000]"])
    after_first = files_under(os.path.join(ctx.cache, "nxc"))
    check(os.path.basename(path1) in after_first, f"{path1} is not listed in the cache directory")
    y1 = load_npy(ctx.path("y1.npy"), first)
    compare_arrays("softmax(f32[1000000])", y1, ref_softmax(x, "f32"), "f32")

    second = ctx.jit(*args, "-o", ctx.path("y2.npy"))
    path2 = expect_verbose(second, "hit", ctx.cache, ["softmax", "f32[1000000]"])
    check(path2 == path1, f"the cache hit names {path2}, the first run cached {path1}")
    with open(ctx.path("y1.npy"), "rb") as f1, open(ctx.path("y2.npy"), "rb") as f2:
        check(f1.read() == f2.read(), "the cache hit wrote different bytes than the compiled run")
    check(files_under(os.path.join(ctx.cache, "nxc")) == after_first, "a cache hit changed the cache directory")

    _, small = softmax_input(ctx, 1000, "small.npy")
    third = ctx.jit(src, "--fn", "MyDefn.softmax", small, "-v", "-o", ctx.path("y3.npy"))
    path3 = expect_verbose(third, "compiled", ctx.cache, ["softmax", "f32[1000]"])
    check(path3 != path1, "another shape reused the cached code of f32[1000000]")
    objects = [f for f in files_under(os.path.join(ctx.cache, "nxc")) if f in
               (os.path.basename(path1), os.path.basename(path3))]
    check(len(objects) == 2, f"the cache should hold both compiled functions, holds {objects}")


def cached_softmax(ctx):
    """softmax(f32[1000]) compiled into the case's cache: its input, the -v command's arguments,
    the cache source, and the entry's object and metadata paths."""
    x, xp = softmax_input(ctx, 1000, "x.npy")
    src = source("cache.nx")
    args = [src, "--fn", "MyDefn.softmax", xp, "-v"]
    first = ctx.jit(*args, "-o", ctx.path("y0.npy"))
    obj = expect_verbose(first, "compiled", ctx.cache, ["softmax", "f32[1000]"])
    return x, xp, src, args, obj, obj[:-2] + ".meta"


def case_cache_corrupted(ctx):
    """A damaged cache entry is never loaded: an object with flipped bytes (same size), a changed
    workspace size in the metadata, or a truncated metadata file each mean a recompile, the right
    result and a repaired entry. A size cap evicts the least recently used entries."""
    x, xp, src, args, obj, meta = cached_softmax(ctx)
    good_obj, good_meta = open(obj, "rb").read(), open(meta, "rb").read()

    def damaged(name, obj_bytes, meta_bytes):
        with open(obj, "wb") as f:
            f.write(obj_bytes)
        with open(meta, "wb") as f:
            f.write(meta_bytes)
        res = ctx.jit(*args, "-o", ctx.path(name + ".npy"))
        expect_verbose(res, "compiled", ctx.cache, ["softmax", "f32[1000]"])
        compare_arrays(name, load_npy(ctx.path(name + ".npy"), res), ref_softmax(x, "f32"), "f32")
        check(open(obj, "rb").read() == good_obj, f"{name}: the entry was not rewritten")

    flipped = bytearray(good_obj)
    for i in range(len(flipped) // 3, len(flipped) // 3 + 64):
        flipped[i] ^= 0xFF
    damaged("flipped", bytes(flipped), good_meta)
    fields = good_meta.decode().split()
    fields[2] = str(int(fields[2]) + 4096)
    damaged("workspace", good_obj, (" ".join(fields) + "\n").encode())
    damaged("truncated", good_obj, good_meta[: len(good_meta) // 2])

    # A cap of one entry: compiling a second shape evicts the first. (The
    # second entry's size is measured in a scratch cache first.)
    _, other = softmax_input(ctx, 500, "other.npy")
    scratch = ctx.path("scratch-cache")
    res = ctx.run(["jit", src, "--fn", "MyDefn.softmax", other], env=dict(os.environ, XDG_CACHE_HOME=scratch))
    expect_ok(res, "a compile into a scratch cache")
    other_bytes = sum(os.path.getsize(os.path.join(scratch, "nxc", f)) for f in files_under(os.path.join(scratch, "nxc")))
    cap = max(other_bytes, len(good_obj) + len(good_meta)) + 100
    capped = dict(os.environ, XDG_CACHE_HOME=ctx.cache, NXC_CACHE_MAX_BYTES=str(cap))
    res = ctx.run(["jit", src, "--fn", "MyDefn.softmax", other, "-v"], env=capped)
    expect_ok(res, "a compile with a capped cache")
    left = [f for f in files_under(os.path.join(ctx.cache, "nxc")) if f.endswith(".o")]
    check(len(left) == 1 and os.path.basename(obj) not in left,
          f"the least recently used entry was not evicted: {left}")


def case_cache_special_files(ctx):
    """A cache entry that is not a regular file is a miss, never a hang, a crash or an endless
    read: a directory, a FIFO or a symlink to /dev/zero in place of the object or its metadata.
    Each run compiles, gives the right result and leaves a regular entry behind."""
    x, xp, src, args, obj, meta = cached_softmax(ctx)
    for target in (obj, meta):
        for kind in ("directory", "fifo", "dev-zero"):
            for path in (obj, meta):  # a valid entry first, then the special file
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                elif os.path.lexists(path):
                    os.remove(path)
            warm = ctx.jit(*args, "-o", ctx.path("warm.npy"))
            expect_ok(warm, "rebuilding the entry")
            os.remove(target)
            if kind == "directory":
                os.makedirs(os.path.join(target, "inner"))
            elif kind == "fifo":
                os.mkfifo(target)
            else:
                os.symlink("/dev/zero", target)
            name = f"{os.path.basename(target)}-{kind}"
            res = ctx.jit(*args, "-o", ctx.path(name + ".npy"), timeout=60)
            expect_verbose(res, "compiled", ctx.cache, ["softmax", "f32[1000]"])
            compare_arrays(name, load_npy(ctx.path(name + ".npy"), res), ref_softmax(x, "f32"), "f32")
            check(os.path.isfile(target) and not os.path.islink(target),
                  f"{name}: the entry was not replaced by a regular file")
    # A cache directory that cannot be made: -v says nothing was cached.
    res = ctx.jit(*args, "-o", ctx.path("nocache.npy"), cache=os.path.join(xp, "below-a-file"))
    expect_ok(res, "a run with a cache that cannot be written")
    check("not cached (the cache directory cannot be written" in res.stderr and "cached in" not in res.stderr,
          f"-v should say the result was not cached:\n{res.describe()}")


def case_cache_no_cache(ctx):
    """--no-cache writes nothing to a fresh cache and does not read a populated one."""
    src = source("cache.nx")
    res = ctx.jit(src, "--fn", "softmax", "[1.0, 2.0, 3.0]", "--no-cache", "-v")
    expect_ok(res)
    check("cache hit" not in res.stderr, f"--no-cache reported a cache hit:\n{res.describe()}")
    check(files_under(ctx.cache) == [],
          f"--no-cache wrote {files_under(ctx.cache)} to the cache directory:\n{res.describe()}")

    warm = ctx.jit(src, "--fn", "softmax", "[1.0, 2.0, 3.0]", "-v")
    expect_verbose(warm, "compiled", ctx.cache, ["softmax", "f32[3]"])
    before = {f: os.stat(os.path.join(ctx.cache, f)).st_mtime_ns for f in files_under(ctx.cache)}
    again = ctx.jit(src, "--fn", "softmax", "[1.0, 2.0, 3.0]", "--no-cache", "-v")
    expect_ok(again)
    check("cache hit" not in again.stderr and "compiled" in again.stderr,
          f"--no-cache -v should compile, not read the cache:\n{again.describe()}")
    after = {f: os.stat(os.path.join(ctx.cache, f)).st_mtime_ns for f in files_under(ctx.cache)}
    check(after == before, f"--no-cache changed the cache directory: {before} -> {after}")
    check(again.stdout == warm.stdout, "--no-cache printed a different result")


def case_cache_source_change(ctx):
    """Editing the .nx file must not reuse code compiled from the old text."""
    src = ctx.path("edited.nx")
    with open(source("cache.nx")) as f:
        text = f.read()
    check("x * 2" in text, "cache.nx no longer has scale(x) = x * 2")
    with open(src, "w") as f:
        f.write(text)
    first = ctx.jit(src, "--fn", "scale", "[1, 2]", "-v")
    expect_verbose(first, "compiled", ctx.cache, ["scale", "s32[2]"])
    expect_stdout(first, "#Nx.Tensor<\n  s32[2]\n  [2, 4]\n>\n")
    with open(src, "w") as f:
        f.write(text.replace("x * 2", "x * 3"))
    second = ctx.jit(src, "--fn", "scale", "[1, 2]", "-v")
    expect_stdout(second, "#Nx.Tensor<\n  s32[2]\n  [3, 6]\n>\n", what="the result after editing the source")
    expect_verbose(second, "compiled", ctx.cache, ["scale"])


def case_cache_concurrent(ctx):
    """Processes compiling the same function at once share one cache: all succeed, all agree,
    and a later run is a hit."""
    _, xp = softmax_input(ctx, 4096, "x.npy")
    args = [source("cache.nx"), "--fn", "softmax", xp, "-v"]
    results = ctx.jit_many([[*args, "-o", ctx.path(f"y{k}.npy")] for k in range(4)])
    failures = Failures()
    for res in results:
        failures.attempt(expect_ok, res)
    failures.raise_if_any()
    outputs = set()
    for k, res in enumerate(results):
        with open(ctx.path(f"y{k}.npy"), "rb") as f:
            outputs.add(f.read())
    check(len(outputs) == 1, "concurrent runs of the same function wrote different bytes")
    expect_verbose(ctx.jit(*args), "hit", ctx.cache, ["softmax", "f32[4096]"])


def case_cache_concurrent_corruption(ctx):
    """Processes sharing one cache while its entries are being damaged (bytes flipped in the
    object, the metadata rewritten, both truncated, in place, over and over): every process
    gets the right result, whether it loads the entry, finds it damaged or races the damage."""
    x, xp = softmax_input(ctx, 1000, "x.npy")
    args = [source("cache.nx"), "--fn", "MyDefn.softmax", xp, "-v"]
    obj = expect_verbose(ctx.jit(*args), "compiled", ctx.cache, ["softmax", "f32[1000]"])
    meta = obj[:-2] + ".meta"
    good_obj, good_meta = open(obj, "rb").read(), open(meta, "rb").read()
    stop = threading.Event()
    rounds = [0]

    def damage():
        rng = np.random.default_rng(7)
        while not stop.is_set():
            kind = rounds[0] % 4
            data = bytearray(good_obj)
            if kind == 0:
                for i in rng.integers(0, len(data), 32):
                    data[i] ^= 0xFF
                target, payload = obj, bytes(data)
            elif kind == 1:
                fields = good_meta.decode().split()
                fields[2] = str(int(fields[2]) + 64 * int(rng.integers(1, 100)))
                target, payload = meta, (" ".join(fields) + "\n").encode()
            elif kind == 2:
                target, payload = obj, good_obj[: int(rng.integers(0, len(good_obj)))]
            else:
                target, payload = meta, good_meta[: int(rng.integers(0, len(good_meta)))]
            try:
                with open(target, "r+b" if os.path.exists(target) else "wb") as f:
                    f.write(payload)
                    f.truncate()
            except OSError:
                pass
            rounds[0] += 1
            time.sleep(0.002)

    corrupter = threading.Thread(target=damage)
    corrupter.start()
    try:
        results = ctx.jit_many([[*args, "-o", ctx.path(f"y{k}.npy")] for k in range(12)])
    finally:
        stop.set()
        corrupter.join()
    failures = Failures()
    for k, res in enumerate(results):
        failures.attempt(expect_ok, res)
        if res.rc == 0:
            failures.attempt(compare_arrays, f"run {k}", load_npy(ctx.path(f"y{k}.npy"), res),
                             ref_softmax(x, "f32"), "f32")
    failures.raise_if_any()
    check(rounds[0] > 10, f"the entry was damaged only {rounds[0]} times while the runs went on")


def case_cache_default_location(ctx):
    """Without XDG_CACHE_HOME the cache is ~/.cache/nxc."""
    home = ctx.path("home")
    os.makedirs(home)
    env = {k: v for k, v in os.environ.items() if k != "XDG_CACHE_HOME"}
    env["HOME"] = home
    res = ctx.run(["jit", source("cache.nx"), "--fn", "scale", "[1.5]", "-v"], env=env)
    expect_verbose(res, "compiled", os.path.join(home, ".cache"), ["scale"])


# --------------------------------------------------------------------------
# 5. --bench

BENCH_ROW_RE = re.compile(
    r"^(?P<name>\S.*?)\s+(?P<ips>\d+(?:\.\d+)?)(?:\s?(?P<unit>[KMBT]))?\s+"
    r"(?P<average>\d+(?:\.\d+)?\s*\S+)\s+(?P<deviation>±\d+(?:\.\d+)?%)\s+"
    r"(?P<median>\d+(?:\.\d+)?\s*\S+)\s+(?P<p99>\d+(?:\.\d+)?\s*\S+)$")


def case_bench(ctx):
    """--bench prints a Benchee-style table: header, one row with ips > 0, Runs: and Compile:."""
    x, xp = softmax_input(ctx, 10_000, "x.npy")
    res = ctx.jit(source("cache.nx"), "--fn", "MyDefn.softmax", xp, "--bench", "--time", "0.2", "--warmup", "0.05")
    expect_ok(res)
    lines = [line for line in res.stdout.splitlines()]
    header = next((i for i, line in enumerate(lines) if line.startswith("Name")), None)
    check(header is not None, f"no table header line starting with 'Name':\n{res.describe()}")
    columns = re.split(r"\s{2,}", lines[header].strip())
    check(columns == ["Name", "ips", "average", "deviation", "median", "99th %"],
          f"the header's columns are {columns}:\n{res.describe()}")
    check(header + 1 < len(lines), f"no row after the header:\n{res.describe()}")
    m = BENCH_ROW_RE.match(lines[header + 1])
    check(m, f"the row {lines[header + 1]!r} is not 'NAME IPS AVERAGE ±DEV% MEDIAN 99TH':\n{res.describe()}")
    check("softmax" in m.group("name"), f"the row is named {m.group('name')!r}, expected softmax")
    ips = float(m.group("ips")) * {None: 1, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}[m.group("unit")]
    check(ips > 0, f"ips is {ips}")
    rows = [line for line in lines[header + 1:] if line.strip() and BENCH_ROW_RE.match(line)]
    check(len(rows) == 1, f"expected one row, found {len(rows)}:\n{res.describe()}")
    runs = [line for line in lines if line.startswith("Runs:")]
    check(runs and re.match(r"Runs: [1-9]\d* ", runs[0]), f"no 'Runs: N ...' line with N > 0:\n{res.describe()}")
    check(any(line.startswith("Compile:") for line in lines), f"no 'Compile: ...' line:\n{res.describe()}")


def case_threads(ctx):
    """--threads 2: softmax(f32[200000]) runs its loops on the module's thread pool; the result
    is the same at 1 and 2 threads ($NXC_NUM_THREADS), close to the code without threads, and
    a threaded object is a separate cache entry; --threads refuses cuda-emulated."""
    x, xp = softmax_input(ctx, 200_000, "x.npy")
    outs = {}
    for name, threads, count in (("one", "1", "2"), ("t1", "2", "1"), ("t2", "2", "2")):
        env = dict(os.environ, XDG_CACHE_HOME=ctx.cache, NXC_NUM_THREADS=count)
        res = ctx.jit(source("cache.nx"), "--fn", "MyDefn.softmax", xp, "--threads", threads,
                      "-o", f"{name}.npy", "-v", env=env)
        expect_ok(res)
        outs[name] = np.load(ctx.path(f"{name}.npy"))
        if name == "t1":
            check("compiled" in res.stderr + res.stdout,
                  f"--threads 2 after --threads 1 should compile anew:\n{res.describe()}")
    check(np.array_equal(outs["t1"].view(np.uint32), outs["t2"].view(np.uint32)),
          "softmax with --threads 2 differs between 1 and 2 threads")
    ref = np.exp(x.astype(np.float64) - x.max())
    ref /= ref.sum()
    for name in ("one", "t2"):
        err = np.max(np.abs(outs[name] - ref) / ref)
        check(err < 1e-5, f"{name}: relative error {err:.3g} against float64")
    res = ctx.jit(source("cache.nx"), "--fn", "MyDefn.softmax", xp, "--threads", "2", "--device", "cuda-emulated")
    expect_error(res, "--threads applies to CPU code")


# --------------------------------------------------------------------------
# 6. Errors


def write_bad_npy_files(ctx):
    good = ctx.save("good.npy", np.arange(10, dtype=np.float32))
    with open(good, "rb") as f:
        data = f.read()
    files = {}

    def put(name, content):
        files[name] = ctx.path(name)
        with open(files[name], "wb") as f:
            f.write(content)

    put("bad_magic.npy", b"NOTNUMPY" + data[8:])
    put("truncated_data.npy", data[:-7])
    put("truncated_header.npy", data[:20])
    put("empty.npy", b"")
    files["fortran.npy"] = ctx.save("fortran.npy", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
    files["object.npy"] = ctx.save("object.npy", np.array([1, "a", None], dtype=object), allow_pickle=True)
    files["clongdouble.npy"] = ctx.save("clongdouble.npy", np.array([1 + 2j], dtype=np.clongdouble))
    with open(files["fortran.npy"], "rb") as f:
        check(b"'fortran_order': True" in f.read(200), "numpy did not write a Fortran-ordered .npy")
    return files


def case_errors_files(ctx):
    """Missing and malformed input files: exit 1 with `nxc: error: ...`."""
    bad = write_bad_npy_files(ctx)
    err = source("errors.nx")
    table = [  # (arguments, substrings of stderr)
        ([ctx.path("missing.nx"), "--fn", "add", "1", "2"], ["error", "missing.nx"]),
        ([err, "--fn", "add", ctx.path("missing.npy"), "1"], ["error", "missing.npy"]),
        ([err, "--fn", "add", ctx.path("missing.npz"), "1"], ["error", "missing.npz"]),
        ([err, "--fn", "add", bad["bad_magic.npy"], "1"], ["error", "bad_magic.npy", "magic"]),
        ([err, "--fn", "add", bad["truncated_data.npy"], "1"], ["error", "truncated_data.npy", "truncated"]),
        ([err, "--fn", "add", bad["truncated_header.npy"], "1"], ["error", "truncated_header.npy"]),
        ([err, "--fn", "add", bad["empty.npy"], "1"], ["error", "empty.npy"]),
        ([err, "--fn", "add", bad["fortran.npy"], "1"], ["error", "fortran.npy", "Fortran"]),
        ([err, "--fn", "add", bad["object.npy"], "1"], ["error", "object.npy", "object"]),
        ([err, "--fn", "add", bad["clongdouble.npy"], "1"], ["error", "clongdouble.npy", "<c32"]),
    ]
    results = ctx.jit_many([args for args, _ in table])
    failures = Failures()
    for (args, subs), res in zip(table, results):
        failures.attempt(expect_error, res, *subs)
        if res.rc == 1:
            failures.attempt(check, res.stderr.startswith("nxc: error: "),
                             f"a file error without a location starts 'nxc: error: ':\n{res.describe()}")
    failures.raise_if_any()


def case_errors_literals(ctx):
    """Literals that do not parse: `argument N:1:COL: error: ...`, the literal and a caret."""
    table = [  # (arguments after --fn add, argument number, literal, column)
        (["[1, 2", "1"], 1, "[1, 2", None),
        (["1", "[1,"], 2, "[1,", None),
        (["q32:[1]", "1"], 1, "q32:[1]", None),
        (["[[1, 2], [3]]", "1"], 1, "[[1, 2], [3]]", None),
        (["1", "u8:abc"], 2, "u8:abc", 4),
        (["1", "1 2"], 2, "1 2", 3),
        (["1", "[1, 2]]"], 2, "[1, 2]]", None),
    ]
    results = ctx.jit_many([[source("errors.nx"), "--fn", "add", *args] for args, *_ in table])
    failures = Failures()
    for (args, n, literal, col), res in zip(table, results):
        def check_one():
            expect_error(res, f"argument {n}:1:")
            _, got_col = expect_located(res, f"argument {n}", source_line=literal)
            check(col is None or got_col == col,
                  f"the error points at column {got_col}, expected {col}:\n{res.describe()}")
        failures.attempt(check_one)
    failures.raise_if_any()


def case_errors_functions(ctx):
    """Argument count, types and shapes that do not fit (a .npz with the wrong number of leaves
    included), unknown functions and modules: located in the source or in the --fn text."""
    err, tup = source("errors.nx"), source("tuples.nx")
    three = ctx.path("three.npz")
    np.savez(three, np.ones((3, 2), np.float32), np.ones(2, np.float32), np.ones(2, np.float32))
    table = [  # (arguments, expected substrings, location prefix)
        ([err, "--fn", "add", "1"], ["--fn:1:1: error: add/2 takes 2 tensor arguments, got 1"], "--fn"),
        ([err, "--fn", "add", "1", "2", "3"], ["add/2 takes 2 tensor arguments, got 3"], "--fn"),
        ([err, "--fn", "Errors.add"], ["add/2 takes 2 tensor arguments, got 0"], "--fn"),
        ([err, "--fn", "band", "[1.0, 2.0]", "1"], ["bitwise operators expect integer tensors"], err),
        ([err, "--fn", "band", "1", "f32:3"], ["bitwise operators expect integer tensors"], err),
        ([err, "--fn", "add", "[1, 2]", "[1, 2, 3]"], ["broadcast"], err),
        ([err, "--fn", "nope", "1"], ["nope"], "--fn"),
        ([err, "--fn", "Nope.add", "1", "2"], ["Nope"], "--fn"),
        ([err, "--fn", "Errors.nope", "1"], ["nope"], "--fn"),
        ([tup, "--fn", "lin", three, "[[1.0, 2.0, 3.0]]"], ["tuple"], tup),
        ([tup, "--fn", "lin", "[[1.0, 2.0], [3.0, 4.0]]", "[1.0, 2.0]", "[[1.0, 2.0, 3.0]]"], ["dot"], tup),
    ]
    results = ctx.jit_many([args for args, *_ in table])
    failures = Failures()
    for (args, subs, where), res in zip(table, results):
        def check_one():
            expect_error(res, *subs)
            line, _ = expect_located(res, where)
            if where != "--fn":
                check(res.stderr.splitlines()[1] == file_line(where, line),
                      f"the quoted line is not line {line} of {where}:\n{res.describe()}")
        failures.attempt(check_one)
    failures.raise_if_any()


def case_errors_output(ctx):
    """A tuple result cannot go to a .npy; -o needs .npy or .npz; nothing is left behind."""
    err = source("errors.nx")
    out = ctx.path("pair.npy")
    res = ctx.jit(err, "--fn", "pair", "[1, 2]", "-o", out)
    expect_error(res, "npz")
    check(not os.path.exists(out), f"a failed run left {out} behind")
    txt = ctx.path("out.txt")
    res = ctx.jit(err, "--fn", "add", "1", "2", "-o", txt)
    expect_error(res, "out.txt")
    check(not os.path.exists(txt), f"a failed run left {txt} behind")
    res = ctx.jit(err, "--fn", "add", "1", "2", "-o", ctx.path("no", "such", "dir", "y.npy"))
    expect_error(res, "y.npy")


# --------------------------------------------------------------------------
# 7. The repl


def repl(ctx, file_args, lines):
    stdin = "".join(line + "\n" for line in lines)
    return ctx.run(["repl", *file_args], stdin=stdin)


def tensor_text(header, body, indent=0):
    """#Nx.Tensor< HEADER BODY > with body lines given at depth 0; indent for tuple elements."""
    pad = " " * indent
    inner = [f"  {header}"] + [f"  {line}" for line in body.splitlines()]
    return "\n".join([f"#Nx.Tensor<"] + [pad + line for line in inner] + [pad + ">"])


def case_repl_session(ctx):
    """Every input kind, an error in the middle; exact stdout, the error on stderr, status 0."""
    lines = [
        "x = Nx.tensor([1.0, 2.0, 3.0])",       # 1 assignment, prints the value
        "MyDefn.softmax(x)",                    # 2 qualified call of FILE's function
        "softmax(x)",                           # 3 unqualified
        "Nx.iota({2, 3})",                      # 4 an Nx expression
        "{a, b} = pair(x)",                     # 5 tuple pattern
        "defn double(t), do: t * 2",            # 6 one-line definition
        "double(b)",                            # 7
        "defn inc(t) do",                       # 8 multi-line definition
        "  t + 1",
        "end",
        "y = inc(undefined_var)",               # 9 an error: the session goes on
        "inc(a)",                               # 10
        "defn double(t), do: t * 3",            # 11 redefinition
        "double(Nx.tensor([1, 2]))",            # 12 uses the new body
        ":vars",
        ":help",
        f":load {source('repl_other.nx')}",
        "Other.triple(2)",
        "triple(Nx.tensor([1.5]))",
        ":quit",
        "Nx.iota({3})",                         # never read
    ]
    res = repl(ctx, [source("repl_lib.nx")], lines)
    # One input failed: a piped session says so with exit status 1.
    check(res.rc == 1, f"a piped repl session with an error should end with status 1:\n{res.describe()}")

    softmax = tensor_text("f32[3]", "[0.09003057, 0.24472848, 0.66524094]")
    exact_before = "\n".join([
        tensor_text("f32[3]", "[1.0, 2.0, 3.0]"),
        softmax,
        softmax,
        tensor_text("s32[2][3]", "[\n  [0, 1, 2],\n  [3, 4, 5]\n]"),
        "{" + tensor_text("f32[3]", "[2.0, 3.0, 4.0]", 1) + ",\n "
        + tensor_text("f32[3]", "[2.0, 4.0, 6.0]", 1) + "}",
        "defined double/1",
        tensor_text("f32[3]", "[4.0, 8.0, 12.0]"),
        "defined inc/1",
        tensor_text("f32[3]", "[3.0, 4.0, 5.0]"),
        "redefined double/1",
        tensor_text("s32[2]", "[3, 6]"),
    ]) + "\n"
    exact_after = "\n".join([
        tensor_text("s32", "6"),
        tensor_text("f32[1]", "[4.5]"),
    ]) + "\n"
    # :vars, :help and :load print text of nxc's own: checked loosely below.
    check(res.stdout.startswith(exact_before),
          "repl stdout before :vars differs:\n"
          + textwrap.indent(text_diff(exact_before, res.stdout[:len(exact_before) + 200]), "    ")
          + res.describe())
    check(res.stdout.endswith(exact_after),
          "repl stdout after :load differs (or the input after :quit was evaluated):\n"
          + textwrap.indent(text_diff(exact_after, res.stdout[-len(exact_after) - 200:]), "    ")
          + res.describe())
    middle = res.stdout[len(exact_before):len(res.stdout) - len(exact_after)]
    check("#Nx.Tensor" not in middle,
          f"unexpected output from :vars/:help/:load:\n{res.describe()}")
    var_lines = {line.split(":")[0].strip(): line for line in middle.splitlines()
                 if re.match(r"^\s*[a-z_]\w*\s*[:=]", line)}
    for name in ("a", "b", "x"):
        check(name in var_lines and "f32[3]" in var_lines[name],
              f":vars should list {name} as f32[3]:\n{res.describe()}")
    check("y" not in var_lines, f":vars lists y, whose assignment failed:\n{res.describe()}")
    for command in (":load", ":vars", ":quit"):
        check(command in middle, f":help does not mention {command}:\n{res.describe()}")

    err_lines = res.stderr.splitlines()
    check(len(err_lines) >= 1 and err_lines[0].startswith("repl(9):1:9: error: ")
          and "undefined_var" in err_lines[0],
          f"stderr should start with 'repl(9):1:9: error: ... undefined_var':\n{res.describe()}")
    expect_located(res, "repl(9)", source_line="y = inc(undefined_var)")
    check(res.stderr.count("error") == 1, f"stderr should hold the one error only:\n{res.describe()}")


def case_repl_errors(ctx):
    """Errors are located in their input (N counts inputs, LINE within a multi-line input), the
    session goes on, ambiguous unqualified calls are errors, :load reports a missing file and a
    syntax error in the loaded file; results follow; status 1 (stdin is not a terminal)."""
    lines = [
        "x = Nx.tensor([1, 2])",                # 1
        "scale(x)",                             # 2 ambiguous: A.scale and B.scale
        "B.scale(x)",                           # 3
        "defn g(t) do",                         # 4 a syntax error on its second line
        "  t +* 1",
        "end",
        "A.scale(x) + g(x)",                    # 5 g was not defined
        "{p, q} = x",                           # 6 a tuple pattern against a tensor
        "A.scale(x)",                           # 7
        f":load {ctx.path('missing.nx')}",      # a command's errors: no repl(N) location needed
        f":load {source('repl_bad.nx')}",
        "B.scale(Nx.tensor(0.5))",
    ]
    res = repl(ctx, [source("repl_two.nx")], lines)
    expected = "\n".join([
        tensor_text("s32[2]", "[1, 2]"),
        tensor_text("s32[2]", "[10, 20]"),
        tensor_text("s32[2]", "[2, 4]"),
        tensor_text("f32", "5.0"),
    ]) + "\n"
    expect_stdout(res, expected, what="repl stdout", rc=1)
    check("missing.nx" in res.stderr, f":load of a missing file should say so on stderr:\n{res.describe()}")
    check(f"{source('repl_bad.nx')}:4:21: error:" in res.stderr,
          f":load of a file with a syntax error should report it as FILE:4:21: error:\n{res.describe()}")
    located = [line for line in res.stderr.splitlines() if re.match(r"repl\(\d+\):\d+:\d+: error: ", line)]
    prefixes = [re.match(r"(repl\(\d+\):\d+):\d+", line).group(1) for line in located]
    check(prefixes == ["repl(2):1", "repl(4):2", "repl(5):1", "repl(6):1"],
          f"errors located at {prefixes}, expected repl(2):1, repl(4):2, repl(5):1, repl(6):1:\n{res.describe()}")
    check("scale" in located[0] and "A" in located[0] and "B" in located[0],
          f"the ambiguity error should name scale, A and B:\n{res.describe()}")


def case_repl_library_directory(ctx):
    """`:load DIR` loads a library's every defn file (subdirectories too); a struct the session
    binds keeps its module, so a function whose head matches %Mod{} takes it back; a plain def
    may be called at the top level, as at iex's (values: Nx 0.13.1)."""
    res = repl(ctx, [], [
        f":load {os.path.join(CASES_DIR, 'repl_library')}",
        "t = Nx.tensor([1.0, 2.0, 3.0, 4.0])",
        "s = ReplLib.Scaler.fit(t)",
        "ReplLib.Scaler.transform(s, t)",
        "ReplLib.Scaler.describe(t)",
    ])
    check(res.rc == 0, f"the session should succeed:\n{res.describe()}")
    check(tensor_text("f32[4]", "[-1.3416407, -0.4472136, 0.4472136, 1.3416407]") in res.stdout,
          f"transform of the bound struct differs:\n{res.describe()}")
    check(tensor_text("f32[4]", "[2.0, 4.0, 6.0, 8.0]") in res.stdout,
          f"the def called at the top level differs:\n{res.describe()}")
    check("%ReplLib.Scaler{" in res.stdout, f"the struct should print with its module:\n{res.describe()}")


def case_repl_to_number(ctx):
    """Nx.to_number/1 and Nx.to_flat_list/1 at the repl's top level, as at iex's: the elements
    print as Elixir numbers (an f32 widened to a double, as Nx returns it; :nan and :infinity),
    and a tensor of several elements is no number (values and message: Nx 0.13.1)."""
    res = repl(ctx, [], [
        "x = Nx.tensor([0.9486081600189209, 2.0])",
        "Nx.to_number(x[0])",
        "x[1] |> Nx.to_number()",
        "Nx.to_flat_list(Nx.tensor([1, -2]))",
        "Nx.to_flat_list(Nx.tensor([:nan, :infinity]))",
        "Nx.to_number(x)",
    ])
    lines = res.stdout.splitlines()[-4:]
    check(lines == ["0.9486081600189209", "2.0", "[1, -2]", "[:nan, :infinity]"],
          f"the numbers printed differ: {lines}\n{res.describe()}")
    check("cannot convert tensor of shape {2} to number" in res.stderr,
          f"to_number of two elements should be an error:\n{res.describe()}")


def case_repl_functions(ctx):
    """Functions bound at the repl, as at iex's: `fn` and captures are values that later inputs
    call (`f.(x)`), pass to Nx (`Nx.reduce`-style callbacks through other functions) and capture
    in other functions; a closure keeps the values it saw when it was bound (Elixir's closures
    capture values), and rebinding the name replaces it for later inputs only."""
    res = repl(ctx, [], [
        "a = Nx.tensor([1.0, 2.0])",
        "f = fn x -> x * 2 + a end",
        "f.(Nx.tensor([10.0, 20.0]))",
        "a = Nx.tensor([100.0, 200.0])",
        "f.(Nx.tensor([10.0, 20.0]))",
        "sq = &Nx.multiply(&1, &1)",
        "g = fn x -> sq.(f.(x)) end",
        "g.(Nx.tensor([0.0, 1.0]))",
        "f = fn x -> x - 1 end",
        "f.(Nx.tensor([0.0, 1.0]))",
        "g.(Nx.tensor([0.0, 1.0]))",
        ":vars",
    ])
    expected = "\n".join([
        tensor_text("f32[2]", "[1.0, 2.0]"),
        "#Function<repl(2)/1>",
        tensor_text("f32[2]", "[21.0, 42.0]"),
        tensor_text("f32[2]", "[100.0, 200.0]"),
        tensor_text("f32[2]", "[21.0, 42.0]"),
        "#Function<repl(6)/1>",
        "#Function<repl(7)/1>",
        tensor_text("f32[2]", "[1.0, 16.0]"),
        "#Function<repl(9)/1>",
        tensor_text("f32[2]", "[-1.0, 0.0]"),
        tensor_text("f32[2]", "[1.0, 16.0]"),
        "a: f32[2]",
        "f: #Function<repl(9)/1>",
        "g: #Function<repl(7)/1>",
        "sq: #Function<repl(6)/1>",
    ]) + "\n"
    expect_stdout(res, expected, what="repl stdout")
    check(res.stderr == "", f"stderr should be empty:\n{res.describe()}")
    # An error inside a bound function is reported where the function was written.
    res = repl(ctx, [], ["h = fn x -> Nx.dot(x, x, x) end", "h.(Nx.tensor([1.0]))"])
    check(res.rc == 1 and res.stderr.startswith("repl(1):1:"),
          f"the error should be located in repl(1), where h was written:\n{res.describe()}")


def case_repl_terms(ctx):
    """What is not a tensor stays an Elixir term at the repl, as iex shows it: a transform's number
    or atom (a defn's numbers are tensors, as Nx.Defn.jit makes them), a struct's keep fields
    (Scholar's imputer keeps :missing_values so); later inputs get them back."""
    res = repl(ctx, [source("repl_terms.nx")], [
        "Imp.root()",
        "Imp.name()",
        "r = Imp.root()",
        "r + 1",
        "m = Imp.fit(Nx.tensor([[1.0, 2.0], [3.0, 4.0]]))",
        "Imp.transform(m, Nx.tensor([[:nan, 5.0]]))",
        "m2 = Imp.fit(Nx.tensor([[1.0, 2.0], [3.0, 4.0]]), missing_values: 5.0)",
        "Imp.transform(m2, Nx.tensor([[:nan, 5.0]]))",
        "Imp.twice(3)",
        "Scaler.fit(Nx.tensor([3, 1]))",
        "Scaler.inner(Nx.tensor(1))",
        "Imp.made(Nx.tensor([1.0]))",
        "Imp.loaded?()",
        ":vars",
    ])
    statistics = "\n".join(["%Imp{", "  statistics: " + tensor_text("f32[2]", "[2.0, 3.0]", indent=2) + ","])
    expected = "\n".join([
        "0",
        ":tree",
        "0",
        "1",
        statistics,
        "  missing_values: :nan",
        "}",
        tensor_text("f32[1][2]", "[\n  [2.0, 5.0]\n]"),
        statistics,
        "  missing_values: 5.0",
        "}",
        tensor_text("f32[1][2]", "[\n  [NaN, 3.0]\n]"),
        tensor_text("s32", "6"),
        # A defn a transform calls from the repl is compiled, as Nx does from iex: its numbers
        # are tensors; a transform's number inside a trace stays a number (Nx 0.13.1's output).
        "%Scaler{",
        "  lo: " + tensor_text("s32", "1", indent=2) + ",",
        "  bound: " + tensor_text("s32", "0", indent=2),
        "}",
        "{" + tensor_text("s32", "1", indent=1) + ",",
        " " + tensor_text("s32", "5", indent=1) + "}",
        # A defn's struct keeps its keep field's number (Nx does not traverse it); only the
        # program's modules are loaded.
        "%Imp{",
        "  statistics: " + tensor_text("f32[1]", "[1.0]", indent=2) + ",",
        "  missing_values: 0",
        "}",
        "true",
        "m: %Imp{statistics: f32[2], missing_values: :nan}",
        "m2: %Imp{statistics: f32[2], missing_values: 5.0}",
        "r: 0",
    ]) + "\n"
    expect_stdout(res, expected, what="repl stdout")
    check(res.stderr == "", f"stderr should be empty:\n{res.describe()}")


def case_repl_eager(ctx):
    """A plain def called at the repl reads a tensor's values eagerly, as at iex (Nx.to_number/1,
    Nx.to_flat_list/1, Nx.to_list/1); a defn may not. A struct's keep field holding a captured
    function (a KNN model's metric) serves later inputs, with the terms the capture took; an
    input whose line ends in `=` continues on the next."""
    res = repl(ctx, [source("repl_eager.nx")], [
        "Eager.max_id(Nx.tensor([3, -1, 7]))",
        "Eager.nonneg(Nx.tensor([3, -1, 7]))",
        "Eager.rows(Nx.iota({2, 3}))",
        "m =",
        "  Knn.fit(Nx.tensor([1.0, 2.0]))",
        "Knn.distances(m, Nx.tensor([2.0, 4.0]))",
        "m3 = Knn.fit(Nx.tensor([1.0, 2.0]), p: 3)",
        "Knn.distances(m3, Nx.tensor([2.0, 4.0]))",
        "Eager.in_defn(Nx.tensor(1))",
    ])
    data = "  data: " + tensor_text("f32[2]", "[1.0, 2.0]", indent=2) + ","
    expected = "\n".join([
        "7",
        tensor_text("s32[2]", "[3, 7]"),
        "2",
        "%Knn{", data, "  metric: &Knn.dist/2", "}",
        tensor_text("f32", "3.0"),
        # Elixir shows a closure as #Function<...>; nxc keeps its source to make it again.
        "%Knn{", data, "  metric: &Knn.dist(&1, &2, [p: 3])", "}",
        tensor_text("f32", "9.0"),
    ]) + "\n"
    expect_stdout(res, expected, what="repl stdout", rc=1)
    check("repl_eager.nx:12:24: error: Nx.to_number/1 is not allowed inside defn" in res.stderr,
          f"a defn's Nx.to_number should be refused:\n{res.describe()}")


def case_repl_no_file(ctx):
    """`nxc repl` without FILE evaluates Nx expressions and definitions; EOF ends it with 0."""
    res = repl(ctx, [], ["Nx.iota({2, 3})", "defn sq(t), do: t * t", "sq(Nx.tensor([1.5, -2.0]))"])
    expected = "\n".join([
        tensor_text("s32[2][3]", "[\n  [0, 1, 2],\n  [3, 4, 5]\n]"),
        "defined sq/1",
        tensor_text("f32[2]", "[2.25, 4.0]"),
    ]) + "\n"
    expect_stdout(res, expected, what="repl stdout")
    check(res.stderr == "", f"stderr should be empty:\n{res.describe()}")



def case_repl_rejected_inputs_change_nothing(ctx):
    """An input that fails leaves the session as it was: two definitions on one line define
    neither, and a tuple pattern that does not match binds none of its variables."""
    res = repl(ctx, [], [
        "x = Nx.tensor(1)",
        "defn a(t), do: t + 1; defn b(t), do: t + 2",   # 2: rejected
        "{x, {y, z}} = {Nx.tensor(5), Nx.tensor(3)}",  # 3: {y, z} against a tensor
        "x",
        "a(x)",                                        # 5: a was not defined
        "y",                                           # 6: y was not bound
    ])
    expect_stdout(res, tensor_text("s32", "1") + "\n" + tensor_text("s32", "1") + "\n", what="repl stdout", rc=1)
    located = [line for line in res.stderr.splitlines() if re.match(r"repl\(\d+\):\d+:\d+: error: ", line)]
    check(len(located) == 4 and "define one function at a time" in located[0]
          and located[1].startswith("repl(3):1:5: error: cannot match a tuple of 2 elements against a tensor")
          and "a/1" in located[2] and '"y"' in located[3],
          f"expected errors at repl(2), repl(3):1:5, repl(5) and repl(6):\n{res.describe()}")


# --------------------------------------------------------------------------

CASES = [(name[len("case_"):], fn) for name, fn in globals().items() if name.startswith("case_")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--nxc", required=True, help="the nxc binary")
    parser.add_argument("--work", required=True, help="scratch directory (case subdirs are recreated)")
    parser.add_argument("-k", "--filter", action="append", default=[],
                        help="run only the cases whose name contains this (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args()

    cases = [(name, fn) for name, fn in CASES if not args.filter or any(f in name for f in args.filter)]
    if args.list:
        print("\n".join(name for name, _ in cases))
        return 0
    ctx = Context(os.path.abspath(args.nxc), os.path.abspath(args.work))
    os.makedirs(ctx.work, exist_ok=True)
    deadline = time.monotonic() + BINARY_WAIT_S
    while not os.access(ctx.nxc, os.X_OK):  # it may be being rebuilt
        if time.monotonic() > deadline:
            print(f"FAIL: {ctx.nxc} is not an executable (waited {BINARY_WAIT_S}s)")
            return 1
        time.sleep(1)

    width = max(len(name) for name, _ in cases)
    failed = []
    start = time.monotonic()
    for name, fn in cases:
        case_start = time.monotonic()
        try:
            ctx.start_case(name)
            fn(ctx)
            status, detail = "PASS", None
        except CaseFailure as e:
            status, detail = "FAIL", str(e)
        except Exception:  # a bug in the runner itself
            status, detail = "FAIL", traceback.format_exc()
        print(f"{status} {name:<{width}}  ({time.monotonic() - case_start:.2f}s)", flush=True)
        if detail:
            failed.append(name)
            print(textwrap.indent(detail.rstrip(), "    "), flush=True)
    print(f"\n{len(cases) - len(failed)} passed, {len(failed)} failed, {len(cases)} cases "
          f"in {time.monotonic() - start:.1f}s")
    if failed:
        print("failed: " + " ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

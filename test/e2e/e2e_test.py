#!/usr/bin/python3
"""End-to-end tests for nxc.

Each case compiles a .nx source from cases/ with `nxc aot`, builds a C program
(generated here) against the artifacts twice - once against the shared object
and once against the static archives - runs both, and compares every output
with a reference computed independently in NumPy (float64 math).  The manifest
(MODULE.json) must list the expected types and shapes, and the C compiler
checks the header's prototypes against the expected C types (-Werror).
The artifact cases check the libraries and the header themselves.

With --device cuda-emulated every check runs as for CPUs on modules whose
CUDA kernels (mapped exactly as for the GPU) run on the CPU one block and one
thread at a time, with the GPU's tolerances. With --device cuda every module is compiled for CUDA instead (every case
but the CPU artifact checks): nxc must build it (ptxas checks the PTX of every
--gpu architecture when a CUDA toolkit is found); a C program built against
the header and the libraries checks, on this machine, that each call without
a GPU returns NXRT_ERROR_NO_DEVICE, writes nothing, says why in
MODULE_device_error() and prints nothing; with --bundle DIR the inputs and
references go to a bundle that test/gpu/run.sh checks on a GPU machine.

With --via-graph every module goes through the JSON graph format: the source is
traced to a graph file (`--emit json -o`), the artifacts are compiled from
that file, and every check runs on them; besides, the graph must be a fixed
point of `--emit json`, and the libraries must be byte for byte those compiled
straight from the source (so every output is bit for bit the same).

With --threads N every module is compiled with nxc's --threads N and, unless
--min-parallel-work says otherwise, every parallel loop runs on the thread pool
(the programs run with as many threads as the machine has, at most N).

Usage: /usr/bin/python3 test/e2e/e2e_test.py --nxc PATH --work DIR [-k FILTER]
           [--device cuda [--gpu sm_90] [--bundle DIR]] [--via-graph] [--threads N]
"""

import argparse
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import traceback
import zlib
from dataclasses import dataclass, field

import numpy as np

# NaN and infinities are compared deliberately (see compare()).
np.seterr(invalid="ignore")

CASES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")

# Nx type -> (NumPy dtype, C type).
TYPES = {
    "s8": (np.int8, "int8_t"),
    "s16": (np.int16, "int16_t"),
    "s32": (np.int32, "int32_t"),
    "s64": (np.int64, "int64_t"),
    "u8": (np.uint8, "uint8_t"),
    "u16": (np.uint16, "uint16_t"),
    "u32": (np.uint32, "uint32_t"),
    "u64": (np.uint64, "uint64_t"),
    "f32": (np.float32, "float"),
    "f64": (np.float64, "double"),
    "c64": (np.complex64, "nxc_c64"),
    "c128": (np.complex128, "nxc_c128"),
}
NX_TYPE_OF = {np.dtype(dtype): nx for nx, (dtype, _) in TYPES.items()}

# (rtol, atol) per floating-point result type; integer results must be exact.
TOLERANCES = {"f32": (1e-5, 1e-6), "f64": (1e-12, 1e-14), "c64": (1e-5, 1e-6), "c128": (1e-12, 1e-14)}

# What a generated shared object may import: libc's memory functions only,
# and the C math library's functions when the manifest declares "m" (f64 math).
# getenv: $NXC_CPU_VARIANT, in modules with several CPU variants.
ALLOWED_IMPORTS = {"malloc", "free", "memcpy", "memset", "memmove", "getenv"}
LIBM_FUNCTIONS = {f + suffix for suffix in ("", "f") for f in (
    "exp", "expm1", "exp2", "log", "log1p", "log2", "log10", "pow", "sin", "cos", "tan", "asin", "acos",
    "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sqrt", "cbrt", "erf", "erfc",
    "fmod")} | {"sincos", "sincosf"}  # sin and cos of one argument, combined by LLVM (glibc, musl and newlib have it)

SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "graph-format.schema.json")
_schema = None


def graph_schema():
    global _schema
    if _schema is None:
        with open(SCHEMA_PATH) as f:
            _schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(_schema)
    return _schema


ARGS = None  # the parsed command line
WORK = None  # the scratch directory


def ctx_work():
    return WORK

C_FLAGS = ["-std=c99", "-D_DEFAULT_SOURCE", "-O1", "-Wall", "-Wextra", "-Werror", "-pthread"]
# Threads that call each function at once, and how many calls each makes.
THREADS, THREAD_CALLS = 8, 20


class CaseSkipped(Exception):
    """The case cannot run on this machine; the message says why."""


def cuda_toolkit_present():
    return any(os.access(os.path.join(d, "bin", "ptxas"), os.X_OK)
               for d in filter(None, [os.environ.get("CUDA_PATH"), "/usr/local/cuda"]))


class CaseFailure(Exception):
    """A check failed; the message says what, with the command and its output."""


# --------------------------------------------------------------------------
# Running commands


def describe_status(rc):
    if rc < 0:
        try:
            return f"was killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"was killed by signal {-rc}"
    return f"exited with status {rc}"


def run(cmd, *, cwd=None, env=None, timeout=60):
    """Runs cmd; raises CaseFailure (with the command and its output) unless it exits 0."""
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                              errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CaseFailure(f"command timed out after {timeout}s:\n  $ {shlex.join(cmd)}")
    except OSError as e:
        raise CaseFailure(f"cannot run command: {e}\n  $ {shlex.join(cmd)}")
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr).strip() or "(no output)"
        raise CaseFailure(f"command {describe_status(proc.returncode)}:\n"
                          f"  $ {shlex.join(cmd)}\n{textwrap.indent(output, '  | ')}")
    return proc.stdout


def check(condition, message):
    if not condition:
        raise CaseFailure(message)


# --------------------------------------------------------------------------
# Modules, calls and the C driver program


@dataclass
class Out:
    """An expected result: its Nx type and a reference value (float64 for floats).
    With `ulps`, a float result on the CPU must be within that many units in the
    last place of the reference rounded to its type (subnormals included)
    instead of the type's tolerances; `ulps_without_fma` replaces it in CPU
    variants without fused multiply-adds (x86-64's baseline), where a
    polynomial rounds each product."""
    type: str
    ref: np.ndarray
    ulps: float = None
    ulps_without_fma: float = None

    def __post_init__(self):
        self.ref = np.asarray(self.ref)


@dataclass
class Call:
    """One call of a generated C function: typed input arrays and expected results."""
    symbol: str
    inputs: list
    outputs: list


@dataclass
class Module:
    name: str
    dir: str
    source: str
    command: list = field(default_factory=list)  # the nxc command that built it
    manifest: dict = field(default_factory=dict)
    straight_dir: str = ""  # --via-graph: the same module compiled straight from the source

    def path(self, filename):
        return os.path.join(self.dir, filename)

    @property
    def header(self):
        return self.path(f"{self.name}.h")

    @property
    def shared_lib(self):
        return self.path(f"lib{self.name}.so")

    @property
    def static_libs(self):
        return [self.path(f"lib{self.name}.a"), self.path("libnxrt.a")]

    @property
    def extra_libraries(self):
        """What the manifest says the static library needs besides libnxrt.a ("m")."""
        return self.manifest.get("link_libraries", [])

    @property
    def static_link_args(self):
        return self.static_libs + [f"-l{lib}" for lib in self.extra_libraries]


def nx_type(array):
    return NX_TYPE_OF[array.dtype]


def c_type(nx):
    return TYPES[nx][1]


def signature_suffix(inputs):
    """The C-name suffix of a function compiled at several signatures: f32_2x3__s32_5."""
    return "__".join(f"{nx_type(x)}_{'x'.join(map(str, x.shape))}" for x in inputs)


def c_driver(module, calls):
    """A C program: for each call, reads the inputs from IN_DIR, calls the function
    (checking status 0), writes the outputs to OUT_DIR; then checks that a second
    call gives the same bytes, that a NULL output or input gives status 1
    without writing anything, and that THREADS threads calling the function at
    once, THREAD_CALLS times each, all get the first call's bytes. Every buffer
    lies against a PROT_NONE guard page (its end against the next page with
    `high`, its start against the previous one with `low`, the third argument)
    and inputs are read-only, so any access outside them faults."""
    blocks = [c_call_block(i, call) for i, call in enumerate(calls)]
    threads = [c_thread_function(i, call) for i, call in enumerate(calls)]
    query = module.manifest.get("variant_query")
    # The CPU variant that ran ($NXC_CPU_VARIANT asks for one), to OUT_DIR/variant.txt.
    variant = f'  write_output("variant.txt", {query}(), strlen({query}()));' if query else ""
    return C_DRIVER_TEMPLATE.replace("@HELPERS@", C_HELPERS) \
                            .replace("@VARIANT@", variant) \
                            .replace("@HEADER@", os.path.basename(module.header)) \
                            .replace("@THREADS@", "\n".join(threads)) \
                            .replace("@NTHREADS@", str(THREADS)) \
                            .replace("@CALLS@", "\n".join(blocks))


# Buffers between guard pages, filled with a sentinel, and the check that one
# was not written.
C_HELPERS = r"""static int guard_low; /* buffers start right after a guard page (else end right before one) */

/* nbytes bytes with PROT_NONE pages on both sides, one of them adjacent. */
static void *guarded(size_t nbytes) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE), span = (nbytes + page - 1) / page * page;
  char *base;
  if (span == 0) span = page;
  base = mmap(NULL, span + 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED || mprotect(base, page, PROT_NONE) || mprotect(base + page + span, page, PROT_NONE)) {
    fprintf(stderr, "cannot map guarded memory\n");
    exit(2);
  }
  return guard_low ? base + page : base + page + span - nbytes;
}

/* The pages holding buf become read-only. */
__attribute__((unused)) static void read_only(const void *buf, size_t nbytes) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  uintptr_t start = (uintptr_t)buf / page * page, end = ((uintptr_t)buf + nbytes + page - 1) / page * page;
  if (nbytes && mprotect((void *)start, end - start, PROT_READ)) {
    fprintf(stderr, "cannot protect an input\n");
    exit(2);
  }
}

__attribute__((unused)) static void release(const void *buf, size_t nbytes) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE), span = (nbytes + page - 1) / page * page;
  if (span == 0) span = page;
  munmap((char *)((uintptr_t)buf / page * page) - page, span + 2 * page);
}

/* Output buffers start filled with 0xA5 so that untouched ones can be told. */
static void *sentinel_buffer(size_t nbytes) {
  void *buf = guarded(nbytes);
  memset(buf, 0xA5, nbytes);
  return buf;
}

static int untouched(const void *buf, size_t nbytes) {
  const unsigned char *p = buf;
  size_t i;
  for (i = 0; i < nbytes; i++)
    if (p[i] != 0xA5) return 0;
  return 1;
}
"""

C_DRIVER_TEMPLATE = r"""
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "@HEADER@"

static const char *in_dir, *out_dir;
static int failures;

static void *guarded(size_t nbytes);
static void read_only(const void *buf, size_t nbytes);

static void *read_input(const char *name, size_t nbytes) {
  char path[4096];
  void *buf = guarded(nbytes);
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", in_dir, name);
  f = fopen(path, "rb");
  if (!f || fread(buf, 1, nbytes, f) != nbytes || fgetc(f) != EOF) {
    fprintf(stderr, "cannot read exactly %zu bytes from %s\n", nbytes, path);
    exit(2);
  }
  fclose(f);
  read_only(buf, nbytes);
  return buf;
}

static void write_output(const char *name, const void *buf, size_t nbytes) {
  char path[4096];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", out_dir, name);
  f = fopen(path, "wb");
  if (!f || fwrite(buf, 1, nbytes, f) != nbytes || fclose(f) != 0) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(2);
  }
}

@HELPERS@
static void expect_status(const char *what, int got, int want) {
  if (got != want) {
    fprintf(stderr, "FAILED: %s returned %d, expected %d\n", what, got, want);
    failures++;
  }
}

static void expect(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "FAILED: %s\n", what);
    failures++;
  }
}

/* Runs fn on THREADS threads at once; each reports its mismatches. */
static void run_threads(void *(*fn)(void *), const char *what) {
  pthread_t threads[@NTHREADS@];
  int i, bad = 0;
  for (i = 0; i < @NTHREADS@; i++)
    if (pthread_create(&threads[i], NULL, fn, NULL) != 0) {
      fprintf(stderr, "cannot start a thread\n");
      exit(2);
    }
  for (i = 0; i < @NTHREADS@; i++) {
    void *r;
    pthread_join(threads[i], &r);
    bad += r != NULL;
  }
  if (bad) {
    fprintf(stderr, "FAILED: %s: %d of @NTHREADS@ threads got a different status or different bytes\n", what, bad);
    failures++;
  }
}

@THREADS@
int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s IN_DIR OUT_DIR low|high\n", argv[0]);
    return 2;
  }
  in_dir = argv[1];
  out_dir = argv[2];
  guard_low = strcmp(argv[3], "low") == 0;
@VARIANT@
@CALLS@
  return failures ? 1 : 0;
}
"""


def c_thread_function(index, call):
    """The per-call globals (inputs, expected outputs) and the function each
    thread runs: THREAD_CALLS calls into its own guarded outputs, compared
    with the first call's bytes."""
    ins = [(f"c{index}_in{j}", c_type(nx_type(x))) for j, x in enumerate(call.inputs)]
    outs = [(f"c{index}_want{j}", c_type(o.type), o.ref.size * np.dtype(TYPES[o.type][0]).itemsize)
            for j, o in enumerate(call.outputs)]
    lines = [f"static const {ct} *{var};" for var, ct in ins]
    lines += [f"static const {ct} *{var};" for var, ct, _ in outs]
    lines.append(f"static void *c{index}_thread(void *unused) {{")
    lines.append("  int k, bad = 0;")
    lines += [f"  {ct} *got{j} = guarded({n});" for j, (_, ct, n) in enumerate(outs)]
    lines.append("  (void)unused;")
    lines.append(f"  for (k = 0; k < {THREAD_CALLS}; k++) {{")
    args = [var for var, _ in ins] + [f"got{j}" for j in range(len(outs))]
    lines.append(f"    if ({call.symbol}({', '.join(args)}) != NXRT_OK) bad = 1;")
    lines += [f"    if (memcmp(got{j}, {var}, {n}) != 0) bad = 1;" for j, (var, _, n) in enumerate(outs)]
    lines.append("  }")
    lines += [f"  release(got{j}, {n});" for j, (_, _, n) in enumerate(outs)]
    lines.append("  return bad ? (void *)1 : NULL;")
    lines.append("}")
    return "\n".join(lines) + "\n"


def c_call_block(index, call):
    ins = [(f"in{j}", c_type(nx_type(x)), x.nbytes, f"c{index}_in{j}.bin")
           for j, x in enumerate(call.inputs)]
    outs = [(f"out{j}", c_type(o.type), o.ref.size * np.dtype(TYPES[o.type][0]).itemsize,
             f"c{index}_out{j}.bin") for j, o in enumerate(call.outputs)]
    again = [(f"again{j}", ctype, nbytes) for j, (_, ctype, nbytes, _) in enumerate(outs)]
    fn = call.symbol

    def invoke(null_in=None, null_out=None, out_names=None):
        args = ["NULL" if var == null_in else var for var, *_ in ins]
        names = out_names or [var for var, *_ in outs]
        args += ["NULL" if var == null_out else var for var in names]
        return f"{fn}({', '.join(args)})"

    def all_untouched(skip=None):
        checks = [f"untouched({var}, {nbytes})" for var, _, nbytes, _ in outs if var != skip]
        return " && ".join(checks) or "1"

    lines = [f"/* call {index}: {fn} */"]
    lines += [f'const {ct} *{var} = read_input("{file}", {nbytes});'
              for var, ct, nbytes, file in ins]
    lines += [f"{ct} *{var} = sentinel_buffer({nbytes});" for var, ct, nbytes, _ in outs]
    lines += [f"{ct} *{var} = sentinel_buffer({nbytes});" for var, ct, nbytes in again]
    lines.append(f'expect_status("{fn}", {invoke()}, NXRT_OK);')
    lines += [f'write_output("{file}", {var}, {nbytes});' for var, _, nbytes, file in outs]
    lines.append(f'expect_status("{fn} (second call)", '
                 f'{invoke(out_names=[v for v, *_ in again])}, NXRT_OK);')
    lines += [f'expect(memcmp({var}, again{j}, {nbytes}) == 0, '
              f'"{fn}: a second call gave different {var} bytes");'
              for j, (var, _, nbytes, _) in enumerate(outs)]
    lines += [f"c{index}_in{j} = {var};" for j, (var, *_) in enumerate(ins)]
    lines += [f"c{index}_want{j} = {var};" for j, (var, *_) in enumerate(outs)]
    lines.append(f'run_threads(c{index}_thread, "{fn} from {THREADS} threads at once");')
    lines += [f"memset({var}, 0xA5, {nbytes});" for var, _, nbytes, _ in outs]
    null_out = outs[-1][0]
    lines.append(f'expect_status("{fn} with a NULL output", {invoke(null_out=null_out)}, '
                 f"NXRT_ERROR_NULL_ARGUMENT);")
    lines.append(f'expect({all_untouched(skip=null_out)}, '
                 f'"{fn} wrote an output although another output was NULL");')
    if ins:
        lines.append(f'expect_status("{fn} with a NULL input", {invoke(null_in=ins[0][0])}, '
                     f"NXRT_ERROR_NULL_ARGUMENT);")
        lines.append(f'expect({all_untouched()}, "{fn} wrote an output although an input was NULL");')
    lines += [f"release({var}, {nbytes});" for var, _, nbytes, *_ in ins + outs + again]
    return "  {\n" + textwrap.indent("\n".join(lines), "    ") + "\n  }"


# --------------------------------------------------------------------------
# Checks


def check_manifest(module, calls):
    """MODULE.json lists exactly the called functions, with the expected types and shapes."""
    manifest = module.manifest
    check(manifest.get("module") == module.name,
          f"{module.name}.json: module is {manifest.get('module')!r}, expected {module.name!r}")
    functions = {f.get("symbol"): f for f in manifest.get("functions", [])}
    expected_symbols = sorted(call.symbol for call in calls)
    check(sorted(functions) == expected_symbols,
          f"{module.name}.json: symbols {sorted(functions)}, expected {expected_symbols}")
    for call in calls:
        entry = functions[call.symbol]
        for kind, got, want in (
                ("arguments", entry.get("arguments", []),
                 [(nx_type(x), list(x.shape)) for x in call.inputs]),
                ("results", entry.get("results", []),
                 [(o.type, list(o.ref.shape)) for o in call.outputs])):
            got_sigs = [(a.get("type"), a.get("shape")) for a in got]
            check(got_sigs == want,
                  f"{module.name}.json: {call.symbol} {kind} are {got_sigs}, expected {want}")
            for a in got:
                check(a.get("c_type") == c_type(a["type"]),
                      f"{module.name}.json: {call.symbol} {a.get('name')} has c_type "
                      f"{a.get('c_type')!r}, expected {c_type(a['type'])!r}")


def compare(label, got, out, fma=True):
    """Compares one output with its reference; returns the max abs error.
    `fma`: whether the code that computed it had fused multiply-adds."""
    ref = out.ref
    ulps = out.ulps if fma or out.ulps_without_fma is None else out.ulps_without_fma
    if out.type in TOLERANCES and ulps is not None and ARGS.device == "cpu":
        ref = ref.astype(np.float64)
        g64 = got.astype(np.float64)
        err = np.abs(g64 - ref)
        with np.errstate(over="ignore"):
            rounded = ref.astype(got.dtype)
        unit = np.abs(np.spacing(rounded)).astype(np.float64)
        special = (np.isnan(g64) & np.isnan(ref)) | (np.isinf(rounded) & (got == rounded))
        with np.errstate(invalid="ignore"):
            bad = ~(err <= ulps * unit) & ~special
        rule = f"within {ulps:g} ulp"
    elif out.type in TOLERANCES:
        rtol, atol = (GPU_TOLERANCES if ARGS.device != "cpu" else TOLERANCES)[out.type]
        wide = np.complex128 if out.type.startswith("c") else np.float64  # complex: |difference| of the pair
        ref = ref.astype(wide)
        err = np.abs(got.astype(wide) - ref)
        g64 = got.astype(wide)
        # NaN where NaN is expected and equal infinities match; any other NaN is bad.
        special = (np.isnan(g64) & np.isnan(ref)) | (np.isinf(ref) & (g64 == ref))
        bad = ~(err <= atol + rtol * np.abs(ref)) & ~special
        rule = f"|got - expected| <= {atol:g} + {rtol:g} * |expected|"
    else:
        ref = ref.astype(got.dtype)
        bad = got != ref
        err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
        rule = "exact"
    max_err = float(np.max(err)) if err.size else 0.0
    if np.any(bad):
        shown = []
        for k in np.flatnonzero(bad)[:5]:
            i = np.unravel_index(k, got.shape) if got.shape else ()
            shown.append(f"    at {list(map(int, i))}: got {got[i]!r}, expected {ref[i]!r}")
        failure = CaseFailure(f"{label}: {int(np.sum(bad))} of {got.size} elements differ "
                              f"({rule}; max abs err {max_err:.3g}):\n" + "\n".join(shown))
        failure.max_err = max_err
        raise failure
    return max_err


CUDA_DRIVER_TEMPLATE = r"""
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "@HEADER@"

static int failures;

static void expect(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "FAILED: %s\n", what);
    failures++;
  }
}

@HELPERS@
int main(void) {
  const char *why;
@CALLS@
  why = @MODULE@_device_error();
  expect(why && strlen(why) > 0, "@MODULE@_device_error() is empty after NXRT_ERROR_NO_DEVICE");
  return failures ? 1 : 0;
}
"""


def cuda_driver(module, calls):
    """A C program for a machine without a GPU: every _host and device-pointer
    call returns NXRT_ERROR_NO_DEVICE and writes nothing; a NULL input still
    gives NXRT_ERROR_NULL_ARGUMENT, and the stream entry refuses a missing or
    misaligned workspace (NXRT_ERROR_BAD_WORKSPACE) before it looks for a device."""
    blocks = []
    for i, call in enumerate(calls):
        ins = [(f"in{j}", c_type(nx_type(x)), x.nbytes) for j, x in enumerate(call.inputs)]
        outs = [(f"out{j}", c_type(o.type), o.ref.size * np.dtype(TYPES[o.type][0]).itemsize)
                for j, o in enumerate(call.outputs)]
        lines = [f"{ct} *{var} = sentinel_buffer({n});" for var, ct, n in ins + outs]
        args = ", ".join(var for var, *_ in ins + outs)
        fn = call.symbol
        lines.append(f'expect({fn}_host({args}) == NXRT_ERROR_NO_DEVICE, '
                     f'"{fn}_host without a GPU: not NXRT_ERROR_NO_DEVICE");')
        lines.append(f'expect({fn}({args}) == NXRT_ERROR_NO_DEVICE, '
                     f'"{fn} without a GPU: not NXRT_ERROR_NO_DEVICE");')
        # The stream entry checks its workspace before it looks for a device.
        up = fn.upper()
        lines.append(f'expect({fn}_workspace_size() == {up}_WORKSPACE_SIZE, '
                     f'"{fn}_workspace_size() differs from {up}_WORKSPACE_SIZE");')
        lines.append(f'expect({fn}_on_stream({args}, NULL, NULL) == ({up}_WORKSPACE_SIZE ? '
                     f'NXRT_ERROR_BAD_WORKSPACE : NXRT_ERROR_NO_DEVICE), '
                     f'"{fn}_on_stream without a workspace: wrong status");')
        lines.append(f'expect({fn}_on_stream({args}, (void *)(size_t)8, NULL) == ({up}_WORKSPACE_SIZE ? '
                     f'NXRT_ERROR_BAD_WORKSPACE : NXRT_ERROR_NO_DEVICE), '
                     f'"{fn}_on_stream with a misaligned workspace: wrong status");')
        lines += [f'expect(untouched({var}, {n}), "{fn} wrote {var} without a GPU");' for var, _, n in outs]
        if ins:
            null_args = ", ".join(["NULL"] + [var for var, *_ in ins[1:] + outs])
            lines.append(f'expect({fn}_host({null_args}) == NXRT_ERROR_NULL_ARGUMENT, '
                         f'"{fn}_host with a NULL input: not NXRT_ERROR_NULL_ARGUMENT");')
        lines += [f"release({var}, {n});" for var, _, n in ins + outs]
        blocks.append("  {\n" + textwrap.indent("\n".join(lines), "    ") + "\n  }")
    return CUDA_DRIVER_TEMPLATE.replace("@HELPERS@", C_HELPERS) \
                               .replace("@HEADER@", os.path.basename(module.header)) \
                               .replace("@MODULE@", module.name).replace("@CALLS@", "\n".join(blocks))


# (rtol, atol) on the GPU: reductions combine in another order, math is approximated differently.
GPU_TOLERANCES = {"f32": (2e-5, 1e-6), "f64": (1e-11, 1e-13), "f16": (2e-3, 1e-4), "bf16": (1e-2, 1e-3),
                  "c64": (2e-5, 1e-6), "c128": (1e-11, 1e-13)}


def check_cuda(case_dir, module, calls):
    """The checks of a CUDA module on this machine, and its calls in the GPU bundle."""
    driver = os.path.join(case_dir, "no_device.c")
    with open(driver, "w") as f:
        f.write(cuda_driver(module, calls))
    for variant, link_args, env in (
            ("shared", ["-L", module.dir, f"-l{module.name}"], dict(os.environ, LD_LIBRARY_PATH=module.dir)),
            ("static", module.static_link_args + ["-ldl"], None)):
        exe = os.path.join(case_dir, f"no_device_{variant}")
        run([ARGS.cc, *C_FLAGS, "-I", module.dir, driver, *link_args, "-o", exe])
        if not os.environ.get("NXC_TEST_GPU_PRESENT"):
            out = run([exe], env=env)
            check(out == "", f"{exe} printed something without a GPU:\n{out}")
    if not ARGS.bundle:
        return None
    bundle = os.path.abspath(ARGS.bundle)
    rel = os.path.relpath(case_dir, ctx_work())
    dest = os.path.join(bundle, rel)
    os.makedirs(dest, exist_ok=True)
    shutil.copy(module.shared_lib, dest)
    lines = []
    for i, call in enumerate(calls):
        lines.append(f"CALL {rel}/{os.path.basename(module.shared_lib)} {call.symbol} "
                     f"{len(call.inputs)} {len(call.outputs)}")
        for j, x in enumerate(call.inputs):
            name = f"{rel}/c{i}_in{j}.bin"
            np.ascontiguousarray(x).tofile(os.path.join(bundle, name))
            lines.append(f"IN {name} {x.nbytes}")
        for j, o in enumerate(call.outputs):
            name = f"{rel}/c{i}_ref{j}.bin"
            floating = o.type in GPU_TOLERANCES
            otype = o.type
            if otype.startswith("c"):  # complex: its parts, each checked as a float
                ref = np.asarray(o.ref, dtype=np.complex128).view(np.float64)
                otype = "f32" if otype == "c64" else "f64"
            else:
                ref = np.asarray(o.ref, dtype=np.float64 if floating else np.int64)
            ref.tofile(os.path.join(bundle, name))
            rtol, atol = GPU_TOLERANCES.get(o.type, (0, 0))
            lines.append(f"OUT {otype} {ref.size} {name} {rtol:g} {atol:g}")
    with open(os.path.join(bundle, "calls.txt"), "a") as f:
        f.write("\n".join(lines) + "\n")
    return None


def build_and_run(case_dir, module, calls):
    """Builds the driver against the .so and against the archives, runs both and
    compares their outputs with the references.  Returns the max abs error."""
    if ARGS.device == "cuda":
        return check_cuda(case_dir, module, calls)
    in_dir = os.path.join(case_dir, "inputs")
    os.makedirs(in_dir)
    for i, call in enumerate(calls):
        for j, x in enumerate(call.inputs):
            np.ascontiguousarray(x).tofile(os.path.join(in_dir, f"c{i}_in{j}.bin"))
    driver = os.path.join(case_dir, "driver.c")
    with open(driver, "w") as f:
        f.write(c_driver(module, calls))

    variants = [  # (name, how to link, environment to run with)
        ("shared", ["-L", module.dir, f"-l{module.name}"],
         dict(os.environ, LD_LIBRARY_PATH=module.dir)),
        ("static", module.static_link_args, None),
    ]
    # Every CPU variant of the module that this machine can run, each forced
    # in turn through $NXC_CPU_VARIANT (the driver writes the one that ran).
    cpu_variants = [None] + [v["cpu"] for v in module.manifest.get("variants", [])]
    max_err = 0.0
    for variant, link_args, env in variants:
        exe = os.path.join(case_dir, f"driver_{variant}")
        run([ARGS.cc, *C_FLAGS, "-I", module.dir, driver, *link_args, "-o", exe])
        default_cpu = None
        for cpu in cpu_variants:
            out_dir = os.path.join(case_dir, f"outputs_{variant}" + (f"_{cpu}" if cpu else ""))
            os.makedirs(out_dir)
            cpu_env = dict(env if env is not None else os.environ)
            cpu_env.pop("NXC_CPU_VARIANT", None)
            if cpu:
                if cpu == default_cpu or cpu in UNRUNNABLE_CPUS:
                    continue
                cpu_env["NXC_CPU_VARIANT"] = cpu
            # Buffers against the guard page after them (shared) or before them (static).
            run([exe, in_dir, out_dir, "high" if variant == "shared" else "low"], env=cpu_env)
            ran = None
            if os.path.exists(os.path.join(out_dir, "variant.txt")):
                ran = open(os.path.join(out_dir, "variant.txt")).read()
            if cpu is None:
                default_cpu = ran
            elif ran != cpu:
                UNRUNNABLE_CPUS.add(cpu)  # this CPU lacks its features
                continue
            if ran:
                RAN_CPUS.add(ran)
            requires = {v["cpu"]: v["requires"] for v in module.manifest.get("variants", [])}.get(ran)
            fma = requires is None or "fma" in requires
            where = variant + (f", {ran}" if ran else "")
            for i, call in enumerate(calls):
                for j, out in enumerate(call.outputs):
                    dtype = TYPES[out.type][0]
                    got = np.fromfile(os.path.join(out_dir, f"c{i}_out{j}.bin"), dtype=dtype)
                    got = got.reshape(out.ref.shape)
                    label = f"{call.symbol} result {j} ({out.type}{list(out.ref.shape)}, {where})"
                    max_err = max(max_err, compare(label, got, out, fma))
    return max_err


# The CPU variants run, and those this machine lacks the features of (found
# by asking for them).
RAN_CPUS = set()
UNRUNNABLE_CPUS = set()


# --------------------------------------------------------------------------
# Test context


class Context:
    def __init__(self, nxc, work):
        self.nxc = nxc
        self.work = work
        self.modules = []  # every module built so far, for the artifact checks
        self._artifacts = None
        self.case_name = None
        self.nxc_commands = []  # those of the current case, to reproduce a failure

    def case_dir(self, suffix=""):
        path = os.path.join(self.work, self.case_name + suffix)
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        return path

    def rng(self):
        """A generator seeded from the case name: fixed, and independent per case."""
        return np.random.default_rng(zlib.crc32(self.case_name.encode()))

    def compile(self, case_dir, source, fns, name):
        """nxc aot CASES_DIR/source --fn ... --name name -o case_dir/out."""
        module = Module(name, os.path.join(case_dir, "out"), os.path.join(CASES_DIR, source))
        cmd = [self.nxc, "aot", module.source]
        for fn in fns:
            cmd += ["--fn", fn]
        cmd += ["--name", name, "-o", module.dir]
        if ARGS.device == "cuda":
            cmd += ["--device", "cuda"] + (["--gpu", ARGS.gpu] if ARGS.gpu else [])
        elif ARGS.device == "cuda-emulated":
            cmd += ["--device", "cuda-emulated"]
        if ARGS.threads > 1:
            cmd += ["--threads", str(ARGS.threads), "--min-parallel-work", str(ARGS.min_parallel_work)]
        if ARGS.via_graph:
            cmd = self.compile_via_graph(case_dir, cmd, name, module)
        module.command = cmd
        self.nxc_commands.append(cmd)
        try:
            run(cmd)
        except CaseFailure as e:
            if ARGS.device == "cuda" and "from libdevice" in str(e) and not cuda_toolkit_present():
                raise CaseSkipped("f64 math on the GPU needs a CUDA toolkit's libdevice, and none is installed")
            raise
        for filename in (f"{name}.h", f"lib{name}.so", f"lib{name}.a", "libnxrt.a", f"{name}.json"):
            check(os.path.isfile(module.path(filename)),
                  f"nxc did not write {filename}:\n  $ {shlex.join(cmd)}")
        with open(module.path(f"{name}.json")) as f:
            module.manifest = json.load(f)
        self.modules.append(module)
        return module

    def compile_via_graph(self, case_dir, cmd, name, module):
        """Traces the source to a graph file, checks it is a fixed point of
        --emit json, and compiles the source straight (to compare the
        libraries afterwards). Returns the command that compiles the graph."""
        graph = os.path.join(case_dir, "graph", f"{name}.json")
        os.makedirs(os.path.dirname(graph), exist_ok=True)
        device = cmd[cmd.index("-o") + 2:]
        options = cmd[3:cmd.index("--name")]  # the --fn options
        emit = [self.nxc, "aot", module.source] + options + ["--name", name, "--emit", "json", "-o", graph] + device
        self.nxc_commands.append(emit)
        run(emit)
        with open(graph) as f:
            document = json.load(f)
        try:
            jsonschema.validate(document, graph_schema())
        except jsonschema.ValidationError as e:
            raise CaseFailure(f"{graph} does not follow docs/graph-format.schema.json: {e.message} at "
                              f"/{'/'.join(str(p) for p in e.absolute_path)}")
        # Written again from the graph, to a file of the same name elsewhere
        # (large constants go to NAME.npz beside it): the same JSON text, the
        # same arrays.
        again_graph = os.path.join(case_dir, "graph", "again", f"{name}.json")
        os.makedirs(os.path.dirname(again_graph), exist_ok=True)
        again = [self.nxc, "aot", graph, "--name", name, "--emit", "json", "-o", again_graph] + device
        self.nxc_commands.append(again)
        run(again)
        with open(graph) as f, open(again_graph) as g:
            check(f.read() == g.read(), f"the graph is not a fixed point of --emit json:\n  $ {shlex.join(again)}")
        arrays = os.path.splitext(graph)[0] + ".npz"
        if os.path.exists(arrays):
            with np.load(arrays) as first, np.load(os.path.splitext(again_graph)[0] + ".npz") as second:
                check(sorted(first.files) == sorted(second.files) and
                      all(np.array_equal(first[k], second[k]) for k in first.files),
                      f"the graph's constants are not a fixed point of --emit json:\n  $ {shlex.join(again)}")
        straight = cmd[:cmd.index("-o") + 1] + [os.path.join(case_dir, "straight")] + device
        self.nxc_commands.append(straight)
        run(straight)
        module.straight_dir = straight[straight.index("-o") + 1]
        return [self.nxc, "aot", graph, "--name", name, "-o", module.dir] + device

    def check_same_libraries(self, module):
        """--via-graph: the graph's libraries are the source's, byte for byte."""
        for filename in (f"lib{module.name}.so", f"lib{module.name}.a"):
            straight = os.path.join(module.straight_dir, filename)
            if not os.path.exists(straight):
                continue
            with open(module.path(filename), "rb") as a, open(straight, "rb") as b:
                check(a.read() == b.read(), f"{filename} compiled from the graph differs from the one compiled from "
                      f"the source")

    def check_calls(self, source, fns, name, calls):
        """The whole numeric check of one module: compile, manifest, both builds."""
        case_dir = self.case_dir()
        module = self.compile(case_dir, source, fns, name)
        check_manifest(module, calls)
        if ARGS.via_graph:
            self.check_same_libraries(module)
        return build_and_run(case_dir, module, calls)

    def artifacts(self):
        """The module that the artifact cases inspect, built once."""
        if self._artifacts is None:
            saved, self.case_name = self.case_name, "artifacts"
            try:
                self._artifacts = self.compile(self.case_dir(), "artifacts.nx", ARTIFACT_FNS,
                                               "artifacts")
            except CaseFailure as e:
                self._artifacts = e
            finally:
                self.case_name = saved
        if isinstance(self._artifacts, CaseFailure):
            raise CaseFailure(f"building the artifacts module failed:\n{self._artifacts}")
        return self._artifacts


# --------------------------------------------------------------------------
# References


def f64(x):
    return np.asarray(x, dtype=np.float64)


def softmax_ref(x):
    e = np.exp(f64(x) - np.max(f64(x)))
    return e / np.sum(e)


def sigmoid_ref(x):
    return 1.0 / (1.0 + np.exp(-f64(x)))


def normal(rng, shape, scale=1.0, dtype=np.float32):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def uniform(rng, shape, low, high, dtype=np.float32):
    return rng.uniform(low, high, shape).astype(dtype)


def integers(rng, shape, low, high, dtype):
    return rng.integers(low, high, shape, endpoint=True).astype(dtype)


# --------------------------------------------------------------------------
# Cases.  Each returns the max abs error over its outputs (None if not numeric).

CASES = []


def case(name):
    def register(fn):
        CASES.append((name, fn))
        return fn
    return register


def check_functions(ctx, source, name, specs):
    """One module holding several single-result functions, each at one signature:
    specs are (function, input or tuple of inputs, result type, reference)."""
    fns, calls = [], []
    for fn, inputs, result_type, ref in specs:
        inputs = list(inputs) if isinstance(inputs, tuple) else [inputs]
        templates = ", ".join(f"{nx_type(x)}[{','.join(map(str, x.shape))}]" for x in inputs)
        fns.append(f"{fn}({templates})")
        calls.append(Call(f"{name}_{fn}", inputs, [Out(result_type, ref)]))
    return ctx.check_calls(source, fns, name, calls)


def softmax_case(n):
    def run_case(ctx):
        x = normal(ctx.rng(), n, scale=5.0)
        name = f"softmax{n}"
        return ctx.check_calls("softmax.nx", [f"MyDefn.softmax(f32[{n}])"], name,
                               [Call(f"{name}_softmax", [x], [Out("f32", softmax_ref(x))])])
    return run_case


for _n in (100, 1000, 1000000):
    case(f"softmax_f32_{_n}")(softmax_case(_n))


@case("softmax_s32_100")
def _(ctx):
    x = integers(ctx.rng(), 100, -20, 20, np.int32)
    return ctx.check_calls("softmax.nx", ["MyDefn.softmax(s32[100])"], "softmax_int",
                           [Call("softmax_int_softmax", [x], [Out("f32", softmax_ref(x))])])


@case("softmax_seed_variants")
def _(ctx):
    """The other softmax forms of the seed file: unstable, `, do:`, @defn_compiler."""
    x = normal(ctx.rng(), 100)
    fns = ["plain=MyModule.softmax(f32[100])", "short=Softmax.softmax_defn(f32[100])",
           "CompilerOrBackend.softmax_compiler(f32[100])"]
    symbols = ["seeds_plain", "seeds_short", "seeds_softmax_compiler"]
    return ctx.check_calls("softmax.nx", fns, "seeds",
                           [Call(s, [x], [Out("f32", softmax_ref(x))]) for s in symbols])


@case("same_function_two_signatures")
def _(ctx):
    rng = ctx.rng()
    x = normal(rng, 1000, scale=5.0)
    k = integers(rng, 5, -10, 10, np.int32)
    case_dir = ctx.case_dir()
    fns = ["MyDefn.softmax(f32[1000])", "MyDefn.softmax(s32[5])"]
    calls = [Call("sig_softmax_f32_1000", [x], [Out("f32", softmax_ref(x))]),
             Call("sig_softmax_s32_5", [k], [Out("f32", softmax_ref(k))])]
    module = ctx.compile(case_dir, "softmax.nx", fns, "sig")
    exported = run(["nm", "-D", "--defined-only", module.shared_lib]).split()
    with open(module.header) as f:
        header = f.read()
    for call in calls:
        check(re.search(rf"\bint {call.symbol}\(", header),
              f"{module.header} does not declare {call.symbol}")
        check(call.symbol in exported, f"{module.shared_lib} does not export {call.symbol}")
    check_manifest(module, calls)
    return build_and_run(case_dir, module, calls)


@case("rows")
def _(ctx):
    """Row-wise chains long enough to run one row at a time (nxc-tile-rows)."""
    rng = ctx.rng()
    x = normal(rng, (7, 300))
    s = normal(rng, (5, 1000)) * 4
    x3 = normal(rng, (3, 16, 20))
    w = normal(rng, (16, 20))
    xd = f64(x)
    centered = xd - xd.mean(axis=1, keepdims=True)
    ln = centered / np.sqrt((centered * centered).mean(axis=1, keepdims=True) + 1e-5)
    sd = f64(s)
    e = np.exp(sd - sd.max(axis=1, keepdims=True))
    scaled = f64(x3) * f64(w) / np.abs(f64(x3)).sum(axis=(1, 2), keepdims=True)
    fns = ["Rows.layer_norm(f32[7,300])", "Rows.row_softmax(f32[5,1000])", "Rows.scaled_rows(f32[3,16,20], f32[16,20])"]
    calls = [Call("rows_layer_norm", [x], [Out("f32", ln)]),
             Call("rows_row_softmax", [s], [Out("f32", e / e.sum(axis=1, keepdims=True))]),
             Call("rows_scaled_rows", [x3, w], [Out("f32", scaled)])]
    return ctx.check_calls("rows.nx", fns, "rows", calls)


@case("reductions")
def _(ctx):
    rng = ctx.rng()
    xf = normal(rng, (4, 5))
    xi = integers(rng, (4, 5), -1000, 1000, np.int32)
    xp = uniform(rng, (4, 5), 0.5, 1.5)
    x3 = normal(rng, (2, 3, 4))
    xl = normal(rng, 1000000, scale=5.0)
    xld = f64(xl)
    xr = normal(rng, (100, 8))
    xb = normal(rng, 8000)
    specs = [  # (function, input, result type, reference)
        ("row_sum", xf, "f32", np.sum(f64(xf), axis=1)),
        ("col_max", xf, "f32", np.max(xf, axis=0, keepdims=True)),
        ("row_min", xi, "s32", np.min(xi, axis=1)),
        ("total", xi, "s32", np.sum(xi, dtype=np.int32)),
        ("mean_all", xi, "f32", np.mean(f64(xi))),
        ("mean_cols", xi, "f32", np.mean(f64(xi), axis=0)),
        ("prod_rows", xp, "f32", np.prod(f64(xp), axis=1)),
        ("sum_outer", x3, "f32", np.sum(f64(x3), axis=(0, 2), keepdims=True)),
        ("logsumexp", xl, "f32", np.log(np.sum(np.exp(xld - xld.max()))) + xld.max()),
        ("row_sum_and_max_of_exp", xr, "f32", np.exp(f64(xr)).sum(axis=1) + np.exp(f64(xr)).max(axis=1)),
        ("sum_and_max_of_exp", xb, "f32", np.exp(f64(xb)).sum() + np.exp(f64(xb)).max()),
    ]
    return check_functions(ctx, "reductions.nx", "red", specs)


def mlp_inputs(rng):
    x = uniform(rng, (30, 784), 0.0, 1.0)
    w = normal(rng, (784, 10), scale=0.05)
    b = normal(rng, 10, scale=0.1)
    return x, w, b, sigmoid_ref(f64(x) @ f64(w) + f64(b))


@case("mlp_dense_layer")
def _(ctx):
    x, w, b, ref = mlp_inputs(ctx.rng())
    return ctx.check_calls("mlp.nx", ["dense(f32[30,784], f32[784,10], f32[10])"], "mlp",
                           [Call("mlp_dense", [x, w, b], [Out("f32", ref)])])


@case("mlp_tuple_params")
def _(ctx):
    x, w, b, ref = mlp_inputs(ctx.rng())
    return ctx.check_calls("mlp.nx", ["predict({f32[784,10], f32[10]}, f32[30,784])"], "mlpt",
                           [Call("mlpt_predict", [w, b, x], [Out("f32", ref)])])


@case("two_functions_one_module")
def _(ctx):
    rng = ctx.rng()
    x = normal(rng, 10)
    a, b = np.float32(1.75), np.float32(-0.25)
    fns = ["norm(f32[10])", "scale_shift(f32[10], f32[], f32[])"]
    calls = [Call("two_norm", [x], [Out("f32", np.sqrt(np.sum(f64(x) ** 2)))]),
             Call("two_scale_shift", [x, np.array(a), np.array(b)],
                  [Out("f32", f64(x) * a + b)])]
    return ctx.check_calls("two_functions.nx", fns, "two", calls)


@case("qualified_and_renamed")
def _(ctx):
    x = normal(ctx.rng(), 4)
    return ctx.check_calls("qualified.nx", ["a=Alpha.f(f32[4])", "b=Beta.f(f32[4])"], "qual",
                           [Call("qual_a", [x], [Out("f32", f64(x) + 1.0)]),
                            Call("qual_b", [x], [Out("f32", f64(x) * 2.0)])])


@case("tuple_result")
def _(ctx):
    rng = ctx.rng()
    x = normal(rng, (3, 4))
    a = normal(rng, 2)
    b = integers(rng, 3, -100, 100, np.int32)
    calls = [Call("tup_split", [x], [Out("f32", f64(x) + 1.0),
                                     Out("f32", np.sum(f64(x), axis=1)),
                                     Out("u8", (x > 0).astype(np.uint8))]),
             Call("tup_swap", [a, b], [Out("s32", b), Out("f32", a)])]
    return ctx.check_calls("tuples.nx", ["split(f32[3,4])", "swap(f32[2], s32[3])"], "tup", calls)


@case("tuple_duplicate_results")
def _(ctx):
    x = normal(ctx.rng(), 4)
    ref = f64(x) + 1.0
    return ctx.check_calls("tuples.nx", ["twice(f32[4])"], "dup",
                           [Call("dup_twice", [x], [Out("f32", ref), Out("f32", ref)])])


@case("broadcasting")
def _(ctx):
    rng = ctx.rng()
    x = normal(rng, (2, 3))
    s = np.array(2.5, dtype=np.float32)
    col, row = normal(rng, (3, 1)), normal(rng, (1, 4))
    v, m = normal(rng, 4), normal(rng, (2, 3, 4))
    x3 = normal(rng, 3)
    specs = [
        ("add_row", x, "f32", f64(x) + [1.0, 2.0, 3.0]),
        ("affine_scalars", x, "f32", f64(x) * 2 + 0.5),
        ("add_scalar_arg", (x, s), "f32", f64(x) + f64(s)),
        ("outer", (col, row), "f32", f64(col) * f64(row)),
        ("rank_expand", (v, m), "f32", f64(m) - f64(v)),
        ("explicit", x3, "f32", np.broadcast_to(x3, (2, 3))),
    ]
    return check_functions(ctx, "broadcast.nx", "bc", specs)


# (function, input types, result type): Nx's type promotion rules.
PROMOTIONS = [
    ("add", ("u8", "s8"), "s16"),
    ("add", ("u8", "u8"), "u8"),      # wraps around, as in Nx
    ("add", ("u32", "s32"), "s64"),
    ("add", ("u64", "s8"), "s64"),
    ("add", ("s64", "f32"), "f32"),
    ("add", ("f32", "f64"), "f64"),
    ("mul", ("s16", "u8"), "s16"),
    ("div", ("s32", "s32"), "f32"),   # `/` always gives a float
    ("greater", ("s32", "f32"), "u8"),
    ("plus_int", ("u8",), "u8"),      # an integer literal keeps the type (255 + 1 wraps)
    ("plus_float", ("s32",), "f32"),  # a float literal makes it float
    ("exp", ("s32",), "f32"),
]

PROMOTION_OPS = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "plus_int": lambda x: x + 1,
    "plus_float": lambda x: x + 1.5,
    "exp": np.exp,
}


def promotion_inputs(rng, fn, in_types, n=16):
    inputs = []
    for nx in in_types:
        dtype = TYPES[nx][0]
        if nx.startswith("f"):
            inputs.append(normal(rng, n, scale=10.0, dtype=dtype))
        elif nx == "u8":  # include the wrap-around of u8 + u8 and 255 + 1
            inputs.append(integers(rng, n, 0, 255, dtype))
        else:
            limit = 20 if fn == "exp" else 100  # exp(100) would overflow f32
            inputs.append(integers(rng, n, max(-limit, int(np.iinfo(dtype).min)), limit, dtype))
    if fn == "div":
        inputs[1][inputs[1] == 0] = 7
    if fn == "greater":
        inputs[1][:4] = inputs[0][:4]  # some ties
    return inputs


def promotion_ref(fn, inputs, result_type):
    if fn == "greater":
        return (f64(inputs[0]) > f64(inputs[1])).astype(np.uint8)
    op = PROMOTION_OPS[fn]
    if result_type in TOLERANCES:
        return op(*[f64(x) for x in inputs])
    dtype = TYPES[result_type][0]  # integer math in the result type, wrapping like Nx
    return np.asarray(op(*[x.astype(dtype) for x in inputs])).astype(dtype)


@case("type_promotion")
def _(ctx):
    rng = ctx.rng()
    overloaded = {fn for fn, *_ in PROMOTIONS if sum(p[0] == fn for p in PROMOTIONS) > 1}
    fns, calls = [], []
    for fn, in_types, result_type in PROMOTIONS:
        inputs = promotion_inputs(rng, fn, in_types)
        ref = promotion_ref(fn, inputs, result_type)
        templates = ", ".join(f"{t}[16]" for t in in_types)
        fns.append(f"{fn}({templates})")
        symbol = f"prom_{fn}" + (f"_{signature_suffix(inputs)}" if fn in overloaded else "")
        calls.append(Call(symbol, inputs, [Out(result_type, ref)]))
    return ctx.check_calls("promotion.nx", fns, "prom", calls)


def unary_math_case(nx):
    def run_case(ctx):
        x = uniform(ctx.rng(), 64, 0.1, 5.0, dtype=TYPES[nx][0])
        x64 = f64(x)
        refs = [np.exp(x64), np.log(x64), np.sqrt(x64), np.tanh(x64), sigmoid_ref(x64),
                np.sin(x64), np.cos(x64), np.abs(x64 - 1.0), -x64]
        name = f"math_{nx}"
        return ctx.check_calls("math.nx", [f"unary({nx}[64])"], name,
                               [Call(f"{name}_unary", [x], [Out(nx, r) for r in refs])])
    return run_case


for _nx in ("f32", "f64"):
    case(f"math_unary_{_nx}")(unary_math_case(_nx))


@case("math_pow_select_clip")
def _(ctx):
    rng = ctx.rng()
    x = normal(rng, 8, scale=2.0)
    base, expo = uniform(rng, 8, 0.5, 3.0), uniform(rng, 8, -2.0, 2.0)
    k = integers(rng, 8, -10, 10, np.int32)
    calls = [
        Call("ops_minus", [x], [Out("f32", -f64(x))]),
        Call("ops_power", [base, expo], [Out("f32", f64(base) ** 2),
                                         Out("f32", f64(base) ** f64(expo))]),
        Call("ops_relu", [x], [Out("f32", np.where(x > 0, x, 0.0))]),
        Call("ops_clamp", [x], [Out("f32", np.clip(f64(x), -1.0, 1.0))]),
        Call("ops_clamp_int", [k], [Out("s32", np.clip(k, -5, 5))]),
    ]
    fns = ["minus(f32[8])", "power(f32[8], f32[8])", "relu(f32[8])", "clamp(f32[8])",
           "clamp_int(s32[8])"]
    return ctx.check_calls("math.nx", fns, "ops", calls)


@case("complex")
def _(ctx):
    """c64 and c128 arguments and results as C's complex types, the DFT, and
    complex arithmetic, against NumPy's complex128."""
    rng = ctx.rng()
    x = normal(rng, 12)
    z = (normal(rng, 6) + 1j * normal(rng, 6)).astype(np.complex64)
    w = (normal(rng, 6) + 1j * normal(rng, 6)).astype(np.complex64)
    y = (normal(rng, 5, dtype=np.float64) + 1j * normal(rng, 5, dtype=np.float64)).astype(np.complex128)
    s = np.fft.fft(f64(x))
    z64, w64 = z.astype(np.complex128), w.astype(np.complex128)
    calls = [
        Call("cplx_spectrum", [x], [Out("c64", s), Out("f32", np.abs(s) ** 2), Out("f32", f64(x))]),
        Call("cplx_arith", [z, w], [Out("c64", z64 * w64), Out("c64", z64 / w64), Out("c64", np.exp(z64)),
                                    Out("c64", np.conj(z64) + 1.0), Out("c64", np.dot(z64, w64))]),
        Call("cplx_wide", [y], [Out("c128", np.sqrt(y)), Out("c128", np.log(y)), Out("c128", np.sum(y))]),
    ]
    fns = ["spectrum(f32[12])", "arith(c64[6], c64[6])", "wide(c128[5])"]
    return ctx.check_calls("complex.nx", fns, "cplx", calls)


@case("rounding_special_values")
def _(ctx):
    """floor/ceil/round/remainder/sign on halves, signed zeros, large values,
    NaN and infinities: expanded without libm, they must still match C's."""
    x = np.array([-1.5, -0.5, 0.5, 1.5, 2.7, -2.7, -0.0, 1e10, np.nan, np.inf, -np.inf, 8388609.0,
                  -3.0, 7.25, 1e-3, 123456.78], dtype=np.float32)
    y = np.array([1, 1, 1, 1, 1.5, 1.5, 1, 3, 1, 1, 1, 2, 2, -2, 1e-4, 10], dtype=np.float32)
    x64, y64 = f64(x), f64(y)
    refs = [np.floor(x64), np.ceil(x64), np.sign(x64) * np.floor(np.abs(x64) + 0.5),
            np.fmod(x64, y64), np.sign(x64)]
    return ctx.check_calls("math.nx", ["rounding(f32[16], f32[16])"], "rounding",
                           [Call("rounding_rounding", [x, y], [Out("f32", r) for r in refs])])


@case("shape_ops")
def _(ctx):
    rng = ctx.rng()
    x = normal(rng, (2, 3))
    x3 = normal(rng, (2, 3, 4))
    xf = np.array([-2.7, -0.5, 0.0, 0.5, 2.7, 100.9], dtype=np.float32)
    xi = integers(rng, 6, -1000, 1000, np.int32)
    specs = [
        ("reshape", x, "f32", x.reshape(3, 2)),
        ("transpose", x, "f32", x.T),
        ("permute", x3, "f32", np.transpose(x3, (1, 0, 2))),
        ("to_int", xf, "s32", np.trunc(xf).astype(np.int32)),  # truncates toward zero
        ("to_float", xi, "f32", f64(xi)),
    ]
    return check_functions(ctx, "shapes.nx", "shp", specs)


@case("control_flow_and_indexing")
def _(ctx):
    """while with a trip count from an input, state rotation (loop buffers must
    not alias), a runtime if, scans, slices, concatenation and argmax, and
    indices out of range (clamped by take and gather, skipped by indexed_add)."""
    rng = ctx.rng()
    m = np.array([[2, 1, 0], [1, 3, 1], [0, 1, 4]], dtype=np.float32)
    steps = np.array(60, dtype=np.int32)
    v = f64(m).sum(axis=0)
    for _ in range(60):
        w = f64(m) @ v
        v = w / np.sqrt((w * w).sum())
    a, b, c = (integers(rng, 5, -9, 9, np.int32) for _ in range(3))
    n = np.array(7, dtype=np.int32)
    rot = [a, b, c][7 % 3]
    xp, xn = normal(rng, (2, 3)), -np.abs(normal(rng, (2, 3)))
    def softmax_all(x):
        e = np.exp(f64(x))
        return e / e.sum()
    t = integers(rng, (3, 4), -20, 20, np.int32)
    i = np.array(5, dtype=np.int32)  # clamped to the last row
    running = np.cumsum(t, axis=1) + np.flip(np.maximum.accumulate(np.flip(t, 0), axis=0), 0)
    argmax_high = (t.shape[1] - 1 - np.argmax(t[:, ::-1], axis=1)).sum()
    windows = np.concatenate([t[2], t[:, 0:2].reshape(-1), t[-1][::-1]]) + argmax_high
    tf = normal(rng, (5, 4))
    idx = np.array([-3, 1, 7, 2], dtype=np.int32)
    taken = t[:, np.clip(idx, 0, 3)]
    gathered = t[np.clip(idx, 0, 2), np.clip(idx, 0, 3)]
    added = t.copy()
    for k, j in enumerate(idx):
        if 0 <= j < 3:
            added[j, j] += k
    calls = [
        Call("ctl_power_iteration", [m, steps], [Out("f32", v)]),
        Call("ctl_rotate", [a, b, c, n], [Out("s32", rot)]),
        Call("ctl_branch", [xp], [Out("f32", softmax_all(xp) if xp.sum() > 0 else -f64(xp))]),
        Call("ctl_branch_neg", [xn], [Out("f32", -f64(xn))]),
        Call("ctl_running", [t], [Out("s32", running)]),
        Call("ctl_windows", [t, i], [Out("s32", windows)]),
        Call("ctl_sum_rows", [tf], [Out("f32", f64(tf).sum(axis=0))]),
        Call("ctl_lookups", [t, idx], [Out("s32", taken), Out("s32", gathered), Out("s32", added)]),
    ]
    fns = ["power_iteration(f32[3,3], s32[])", "rotate(s32[5], s32[5], s32[5], s32[])",
           "branch(f32[2,3])", "branch_neg=branch(f32[2,3])", "running(s32[3,4])", "windows(s32[3,4], s32[])", "sum_rows(f32[5,4])",
           "lookups(s32[3,4], s32[4])"]
    return ctx.check_calls("control.nx", fns, "ctl", calls)


def conv_ref(x, k, strides, pads, kdil, groups):
    """A direct convolution in float64 (NCHW input, OIHW kernel)."""
    x = np.pad(f64(x), [(0, 0), (0, 0)] + list(pads))
    k = f64(k)
    sp = x.ndim - 2
    cout, cin_g = k.shape[0], k.shape[1]
    cout_g = cout // groups
    ks = k.shape[2:]
    out_sp = [(x.shape[2 + d] - ((ks[d] - 1) * kdil[d] + 1)) // strides[d] + 1 for d in range(sp)]
    out = np.zeros([x.shape[0], cout] + out_sp)
    for o in range(cout):
        g = o // cout_g
        for kp in np.ndindex(*ks):
            window = tuple(slice(kp[d] * kdil[d], kp[d] * kdil[d] + (out_sp[d] - 1) * strides[d] + 1, strides[d])
                           for d in range(sp))
            patch = x[(slice(None), slice(g * cin_g, (g + 1) * cin_g)) + window]
            out[:, o] += np.einsum("bi...,i->b...", patch, k[(o, slice(None)) + kp])
    return out


def same_padding(n, k, s):
    out = (n + s - 1) // s
    total = max((out - 1) * s + k - n, 0)
    return (total // 2, total - total // 2)


@case("conv")
def _(ctx):
    """Nx.conv: valid, strided with :same padding and kernel dilation,
    feature groups, and NHWC through input/output permutations."""
    rng = ctx.rng()
    x, k = normal(rng, (2, 3, 5, 6)), normal(rng, (4, 3, 2, 3))
    xg, kg = normal(rng, (1, 4, 7)), normal(rng, (6, 2, 3))
    xp = normal(rng, (2, 5, 6, 3))
    nhwc = conv_ref(xp.transpose(0, 3, 1, 2), k, [1, 1], [same_padding(5, 2, 1), same_padding(6, 3, 1)], [1, 1], 1)
    calls = [
        Call("cv_c1", [x, k], [Out("f32", conv_ref(x, k, [1, 1], [(0, 0), (0, 0)], [1, 1], 1))]),
        Call("cv_c2", [x, k], [Out("f32", conv_ref(x, k, [2, 1], [same_padding(5, 2, 2), same_padding(6, 5, 1)],
                                                   [1, 2], 1))]),
        Call("cv_cg", [xg, kg], [Out("f32", conv_ref(xg, kg, [1], [(1, 0)], [1], 2))]),
        Call("cv_cperm", [xp, k], [Out("f32", nhwc.transpose(0, 2, 3, 1))]),
    ]
    # 8 input channels or more: the CPU runs these as one dot of the input's
    # windows (im2col), for 1, 2 and 3 spatial axes, strides, dilations,
    # padding, batches, f64 and permuted layouts. Inputs of a third of the
    # scale keep sums of 64-72 products within f32's absolute tolerance
    # (any order of the sum is correct; a wrong window is off by O(1)).
    def small(shape):
        return (normal(rng, shape) * 0.3).astype(np.float32)
    xw, kw = small((2, 9, 5, 6)), small((4, 9, 2, 3))
    x1, k1 = small((1, 8, 7)), small((5, 8, 3))
    x3, k3 = small((1, 8, 3, 4, 5)), small((2, 8, 2, 2, 2))
    xpw = small((2, 5, 6, 9))
    nhwcw = conv_ref(xpw.transpose(0, 3, 1, 2), kw, [1, 1], [same_padding(5, 2, 1), same_padding(6, 3, 1)], [1, 1], 1)
    calls += [
        Call("cv_c1w", [xw, kw], [Out("f32", conv_ref(xw, kw, [1, 1], [(0, 0), (0, 0)], [1, 1], 1))]),
        Call("cv_c2w", [xw, kw], [Out("f32", conv_ref(xw, kw, [2, 1], [same_padding(5, 2, 2), same_padding(6, 5, 1)],
                                                     [1, 2], 1))]),
        Call("cv_c2w64", [f64(xw), f64(kw)], [Out("f64", conv_ref(xw, kw, [2, 1], [same_padding(5, 2, 2), same_padding(6, 5, 1)],
                                                       [1, 2], 1))]),
        Call("cv_c1d", [x1, k1], [Out("f32", conv_ref(x1, k1, [1], [(0, 0)], [1], 1))]),
        Call("cv_c3d", [x3, k3], [Out("f32", conv_ref(x3, k3, [1, 1, 1], [(0, 0)] * 3, [1, 1, 1], 1))]),
        Call("cv_cpermw", [xpw, kw], [Out("f32", nhwcw.transpose(0, 2, 3, 1))]),
    ]
    fns = ["c1(f32[2,3,5,6], f32[4,3,2,3])", "c2(f32[2,3,5,6], f32[4,3,2,3])", "cg(f32[1,4,7], f32[6,2,3])",
           "cperm(f32[2,5,6,3], f32[4,3,2,3])", "c1w=c1(f32[2,9,5,6], f32[4,9,2,3])",
           "c2w=c2(f32[2,9,5,6], f32[4,9,2,3])", "c2w64=c2(f64[2,9,5,6], f64[4,9,2,3])", "c1d=c1(f32[1,8,7], f32[5,8,3])",
           "c3d=c1(f32[1,8,3,4,5], f32[2,8,2,2,2])", "cpermw=cperm(f32[2,5,6,9], f32[4,9,2,3])"]
    return ctx.check_calls("conv.nx", fns, "cv", calls)


@case("dot_variants")
def _(ctx):
    rng = ctx.rng()
    u, v = normal(rng, 5), normal(rng, 5)
    m, mv = normal(rng, (3, 4)), normal(rng, 4)
    ia, ib = integers(rng, (2, 3), -50, 50, np.int32), integers(rng, (3, 4), -50, 50, np.int32)
    ca, cb = normal(rng, (3, 4)), normal(rng, (3, 5))
    ba, bb = normal(rng, (2, 3, 4)), normal(rng, (2, 4, 5))
    calls = [
        Call("dots_dot_f32_5__f32_5", [u, v], [Out("f32", f64(u) @ f64(v))]),
        Call("dots_dot_f32_3x4__f32_4", [m, mv], [Out("f32", f64(m) @ f64(mv))]),
        Call("dots_dot_s32_2x3__s32_3x4", [ia, ib], [Out("s32", ia @ ib)]),
        Call("dots_contract_first", [ca, cb], [Out("f32", f64(ca).T @ f64(cb))]),
        Call("dots_batched", [ba, bb], [Out("f32", np.einsum("bij,bjk->bik", f64(ba), f64(bb)))]),
    ]
    fns = ["dot(f32[5], f32[5])", "dot(f32[3,4], f32[4])", "dot(s32[2,3], s32[3,4])",
           "contract_first(f32[3,4], f32[3,5])", "batched(f32[2,3,4], f32[2,4,5])"]
    return ctx.check_calls("dots.nx", fns, "dots", calls)


@case("extrema_nan_and_zeros")
def _(ctx):
    rng = ctx.rng()
    with np.errstate(divide="ignore"):
        def max_out(x):
            m = np.float64(np.nan) if np.isnan(x).any() else np.max(f64(x))
            if m == 0:  # Nx orders -0.0 below +0.0
                m = 0.0 if np.any((x == 0) & ~np.signbit(x)) else -0.0
            return [Out("f32", np.array(m)), Out("f32", np.array(1.0 / np.float64(m)))]

        def min_out(x):
            rows = []
            for r in x:
                m = np.float64(np.nan) if np.isnan(r).any() else np.min(f64(r))
                if m == 0:
                    m = -0.0 if np.any((r == 0) & np.signbit(r)) else 0.0
                rows.append(m)
            m = np.array(rows)
            return [Out("f32", m), Out("f32", 1.0 / m)]

        plain = normal(rng, 1000)
        nan = plain.copy()
        nan[537] = np.nan
        zeros = -np.abs(normal(rng, 1000))
        zeros[[10, 500]] = [-0.0, 0.0]
        negative_zero = -np.abs(normal(rng, 1000))
        negative_zero[[3, 999]] = -0.0
        infinities = plain.copy()
        infinities[[1, 2]] = [np.inf, -np.inf]
        minus_infinity = np.full(1000, -np.inf, np.float32)
        rows = normal(rng, (6, 100))
        rows[1, 50] = np.nan
        rows[2, :] = np.abs(rows[2, :])
        rows[2, [7, 70]] = [0.0, -0.0]
        rows[3, :] = np.abs(rows[3, :])
        rows[3, 9] = 0.0
        rows[4, 0] = -np.inf
        rows[5, :] = np.inf
        inputs = {"plain": plain, "nan": nan, "zeros": zeros, "negative_zero": negative_zero,
                  "infinities": infinities, "minus_infinity": minus_infinity}
        calls = [Call(f"ex_{k}", [x], max_out(x)) for k, x in inputs.items()]
        calls.append(Call("ex_rows", [rows], min_out(rows)))
        # 100 rows: the rows' sums (400 bytes) live in the workspace, not on the stack.
        many = normal(rng, (100, 70))
        many[17, 3] = np.nan
        many[40, :] = -np.abs(many[40, :])
        many[40, [0, 69]] = [-0.0, 0.0]
        calls.append(Call("ex_many_rows", [many], [
            Out("f32", np.array([o[0].ref for o in map(max_out, many)])),
            Out("f32", np.array([o[1].ref for o in map(max_out, many)]))]))
    fns = [f"{k}=max_all(f32[1000])" for k in inputs] + ["rows=min_rows(f32[6,100])",
                                                          "many_rows=max_rows(f32[100,70])"]
    return ctx.check_calls("extrema.nx", fns, "ex", calls)


@case("exp_special_arguments")
def _(ctx):
    # exp within 1 ulp in loops long enough to be vectorized, at arguments
    # that need the clamp and the two-step scaling (huge, infinite, NaN,
    # subnormal and overflowing results), in element-wise loops, in a row's
    # sum and in a row softmax with rows spread over 200 and masked entries.
    rng = ctx.rng()
    plain = uniform(rng, 1000, -80.0, 80.0)
    special = plain.copy()
    special[[3, 100, 200, 300, 400, 500, 600, 700, 800, 900, 999]] = [
        np.nan, np.inf, -np.inf, -100.0, -87.5, 88.0, 88.7, 89.0, 1e10, -1e10, -103.5]
    rows = uniform(rng, (4, 300), -3.0, 3.0)
    rows[1, 17] = -100.0  # a subnormal term
    rows[2, :] = uniform(rng, 300, -150.0, 0.0)
    rows[3, 5] = 88.0  # near the largest float
    wide = uniform(rng, (4, 200), -3.0, 3.0)
    wide[1, :] = uniform(rng, 200, -200.0, 0.0)
    wide[2, 7] = np.nan
    wide[3, ::2] = np.finfo(np.float32).min  # masked, as attention masks do

    def exp_ref(x):  # infinite where the f32 result overflows
        with np.errstate(over="ignore"):
            r = np.exp(f64(x))
            return np.where(np.isinf(r.astype(np.float32)), np.inf, r)

    def softmax_ref(x):
        e = exp_ref(x - np.max(f64(x), axis=1, keepdims=True))
        return e / np.sum(e, axis=1, keepdims=True)

    # Without fused multiply-adds (x86-64's baseline variant) each step of
    # the polynomial rounds: within 1.2 ulp (lib/Conversion/ExpandMath.cpp).
    calls = [Call("er_plain", [plain], [Out("f32", exp_ref(plain), ulps=1, ulps_without_fma=1.2)]),
             Call("er_special", [special], [Out("f32", exp_ref(special), ulps=1, ulps_without_fma=1.2)]),
             Call("er_sum_exp", [rows], [Out("f32", np.sum(exp_ref(rows), axis=1))]),
             Call("er_softmax_rows", [wide], [Out("f32", softmax_ref(wide))])]
    fns = ["plain=exp(f32[1000])", "special=exp(f32[1000])", "sum_exp(f32[4,300])", "softmax_rows(f32[4,200])"]
    return ctx.check_calls("exp_special.nx", fns, "er", calls)


@case("f32_math_without_libm")
def _(ctx):
    """atan, asin, acos, atan2, pow, sinh, asinh, acosh, atanh, cbrt and erfc of f32 without
    libm: correctly rounded (to within the float64 reference's own error) on random bit
    patterns (every exponent, subnormals, NaN, infinities), uniform arguments and every pair
    of special values; pow's exact midpoints (29^5, 31^5, 66049^1.5) round to even."""
    rng = ctx.rng()
    n = 4096
    def bits(count):
        return rng.integers(0, 2 ** 32, count, dtype=np.uint64).astype(np.uint32).view(np.float32)
    special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0,
                        2.5, 1e-45, -1e-45, 3.4e38, 0.99999994, -1.0000001, 0.41421357, 2.4142137,
                        16777217.0, 8388609.0, -8388609.0, 29.0, 31.0, 5.0, 1.5, 66049.0, 0.33333334,
                        127.0, -150.0], dtype=np.float32)
    k = len(special)
    unary = np.concatenate([bits(n - 2048 - k), uniform(rng, 1024, -1.0, 1.0), uniform(rng, 1024, -12.0, 12.0),
                            special])
    y = np.concatenate([bits(n - 1024 - k * k), uniform(rng, 1024, -10.0, 10.0), np.repeat(special, k)])
    x = np.concatenate([bits(n - 1024 - k * k), uniform(rng, 1024, -10.0, 10.0), np.tile(special, k)])
    tight = 0.5 + 1e-6  # ulps: correctly rounded but for ties within the reference's error
    erfc = np.vectorize(math.erfc, otypes=[np.float64])
    unary_refs = {"atan": np.arctan, "asin": np.arcsin, "acos": np.arccos, "sinh": np.sinh,
                  "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "cbrt": np.cbrt,
                  "erfc": erfc}
    def in_f32(r):  # infinite where the f32 result overflows (tolerances need that off the CPU)
        return np.where(np.isinf(r.astype(np.float32)), np.copysign(np.inf, r), r)
    with np.errstate(all="ignore"):
        calls = [Call(f"lf_{fn}", [unary], [Out("f32", in_f32(ref(f64(unary))), ulps=tight)])
                 for fn, ref in unary_refs.items()]
        calls += [Call("lf_atan2", [y, x], [Out("f32", np.arctan2(f64(y), f64(x)), ulps=tight)]),
                  Call("lf_pow", [x, y], [Out("f32", in_f32(np.power(f64(x), f64(y))), ulps=tight)])]
    fns = [f"{fn}(f32[{n}])" for fn in unary_refs] + [f"atan2(f32[{n}], f32[{n}])", f"pow(f32[{n}], f32[{n}])"]
    return ctx.check_calls("libm_free.nx", fns, "lf", calls)


@case("dot_baked_weights")
def _(ctx):
    # Few output columns and a long contraction: the weights are used as
    # [columns, contraction], a layout that is made at compile time when they
    # are baked in, and in every call when they are an argument.
    rng = ctx.rng()
    a, w = uniform(rng, (64, 300), 0.0, 1.0), uniform(rng, (300, 10), 0.0, 1.0)
    weights = os.path.join(ctx.case_dir("-weights"), "w.npy")
    np.save(weights, w)
    ref = f64(a) @ f64(w)
    # One row: the copy would cost more than the dot, so the columns run
    # innermost unless the weights are baked in.
    calls = [Call("baked_baked", [a], [Out("f32", ref)]), Call("baked_passed", [a, w], [Out("f32", ref)]),
             Call("baked_row_baked", [a[0]], [Out("f32", ref[0])]),
             Call("baked_row_passed", [a[0], w], [Out("f32", ref[0])])]
    fns = [f"baked=dot(f32[64,300], @{weights})", "passed=dot(f32[64,300], f32[300,10])",
           f"row_baked=dot(f32[300], @{weights})", "row_passed=dot(f32[300], f32[300,10])"]
    return ctx.check_calls("dots.nx", fns, "baked", calls)


# --------------------------------------------------------------------------
# Artifact cases: the libraries and the header themselves.

ARTIFACT_FNS = ["softmax(f32[1000000])", "small=softmax(f32[8])", "math(f32[64])",
                "stats(f32[4,5])"]


def undefined_symbols(path, dynamic):
    cmd = ["nm", "--undefined-only"] + (["-D"] if dynamic else []) + [path]
    return {line.split()[-1].split("@")[0] for line in run(cmd).splitlines()
            if line.strip() and not line.endswith(":")}


@case("artifact_shared_object_dependencies")
def _(ctx):
    """No module's .so needs anything but libc (ideally nothing), nor imports anything
    but libc's memory functions; the archives need nothing beyond that either."""
    ctx.artifacts()
    problems = []
    for module in ctx.modules:
        start = len(problems)
        dynamic = run(["readelf", "-d", module.shared_lib])
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
        libm = "m" in module.extra_libraries
        allowed = ALLOWED_IMPORTS | (LIBM_FUNCTIONS if libm else set())
        extra = [lib for lib in needed if not re.fullmatch(r"libc\.so(\.\d+)*", lib)
                 and not (libm and re.fullmatch(r"libm\.so(\.\d+)*", lib))]
        if extra:
            problems.append(f"{module.shared_lib} NEEDs {extra} (readelf -d)")
        imports = undefined_symbols(module.shared_lib, dynamic=True) - allowed
        if imports:
            problems.append(f"{module.shared_lib} imports {sorted(imports)} "
                            f"(nm -D --undefined-only)")
        runtime = {line.split()[-1] for line in
                   run(["nm", "--defined-only", module.static_libs[1]]).splitlines()
                   if len(line.split()) == 3}
        for archive in module.static_libs:
            unresolved = undefined_symbols(archive, dynamic=False) - allowed - runtime
            if unresolved:
                problems.append(f"{archive} needs {sorted(unresolved)} (nm --undefined-only)")
        if len(problems) > start:
            problems.append(f"  built by: $ {shlex.join(module.command)}")
    check(not problems, "\n".join(problems))


HEADER_TU = r"""
#include "artifacts.h"
#include "artifacts.h" /* the include guard works */
#include "nxrt.h"      /* and the status codes agree with the runtime's header */

/* The size macros exist and are right. */
typedef char small_x_size_ok[ARTIFACTS_SMALL_X_SIZE == 8 ? 1 : -1];
typedef char small_result_size_ok[ARTIFACTS_SMALL_RESULT_SIZE == 8 ? 1 : -1];
"""

TU_CALL = r"""
int call_small(const float *x, float *result) { return artifacts_small(x, result); }
"""

TU_MAIN = r"""
#include <stdio.h>

int call_small(const float *x, float *result);

int main(void) {
  float x[ARTIFACTS_SMALL_X_SIZE] = {1, 2, 3, 4, 5, 6, 7, 8};
  float a[ARTIFACTS_SMALL_RESULT_SIZE], b[ARTIFACTS_SMALL_RESULT_SIZE];
  float sum = 0;
  int i;
  if (call_small(x, a) != NXRT_OK || artifacts_small(x, b) != NXRT_OK) return 1;
  for (i = 0; i < ARTIFACTS_SMALL_RESULT_SIZE; i++) {
    if (a[i] != b[i] || !(a[i] > 0)) return 1;
    sum += a[i];
  }
  if (sum - 1.0f > 1e-5f || 1.0f - sum > 1e-5f) return 1;
  printf("ok\n");
  return 0;
}
"""


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


@case("artifact_header_c99")
def _(ctx):
    module = ctx.artifacts()
    tu = write(os.path.join(ctx.case_dir(), "header.c"), HEADER_TU)
    run([ARGS.cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
         "-I", module.dir, "-c", tu, "-o", tu + ".o"])


@case("artifact_header_cxx")
def _(ctx):
    """The header compiles as C++, and a C++ program calling through it links and runs."""
    module = ctx.artifacts()
    case_dir = ctx.case_dir()
    src = write(os.path.join(case_dir, "main.cpp"),
                HEADER_TU + TU_CALL + TU_MAIN)
    exe = os.path.join(case_dir, "main_cxx")
    run([ARGS.cxx, "-Wall", "-Wextra", "-Werror", "-I", module.dir, "-c", src, "-o", exe + ".o"])
    run([ARGS.cxx, exe + ".o", *module.static_link_args, "-o", exe])
    run([exe])


@case("artifact_two_translation_units")
def _(ctx):
    """Two C files including the header link together, with either library."""
    module = ctx.artifacts()
    case_dir = ctx.case_dir()
    tu1 = write(os.path.join(case_dir, "tu1.c"), HEADER_TU + TU_CALL)
    tu2 = write(os.path.join(case_dir, "tu2.c"), HEADER_TU + TU_MAIN)
    objects = []
    for tu in (tu1, tu2):
        run([ARGS.cc, *C_FLAGS, "-I", module.dir, "-c", tu, "-o", tu + ".o"])
        objects.append(tu + ".o")
    exe = os.path.join(case_dir, "two_static")
    run([ARGS.cc, *objects, *module.static_link_args, "-o", exe])
    run([exe])
    exe = os.path.join(case_dir, "two_shared")
    run([ARGS.cc, *objects, "-L", module.dir, f"-l{module.name}", "-o", exe])
    run([exe], env=dict(os.environ, LD_LIBRARY_PATH=module.dir))


def elf_header_fields(path):
    """[(Class, Data, Machine)] of each ELF file (or archive member) at path."""
    text = run(["readelf", "-h", path])
    fields = {key: re.findall(rf"^\s*{key}:\s*(.+?)\s*$", text, re.M)
              for key in ("Class", "Data", "Machine")}
    return list(zip(fields["Class"], fields["Data"], fields["Machine"]))


@case("artifact_host_machine_type")
def _(ctx):
    """libnxrt.a's object (and the module's libraries) are built for this machine."""
    module = ctx.artifacts()
    probe = write(os.path.join(ctx.case_dir(), "probe.c"), "int probe;\n")
    run([ARGS.cc, "-c", probe, "-o", probe + ".o"])
    host = elf_header_fields(probe + ".o")[0]
    members = run(["ar", "t", module.static_libs[1]]).split()
    check(members, f"{module.static_libs[1]} has no members (ar t)")
    for path in (module.static_libs[1], module.static_libs[0], module.shared_lib):
        found = elf_header_fields(path)
        check(found, f"readelf -h {path} shows no ELF header")
        for fields in found:
            check(fields == host, f"readelf -h {path}: {fields}, expected the host's {host}")


# --------------------------------------------------------------------------
# Main


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--nxc", required=True, help="the nxc binary")
    parser.add_argument("--work", required=True, help="scratch directory (case subdirs are recreated)")
    parser.add_argument("--cc", default="cc")
    parser.add_argument("--cxx", default="c++")
    parser.add_argument("-k", "--filter", action="append", default=[],
                        help="run only the cases whose name contains this (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--device", choices=["cpu", "cuda", "cuda-emulated"], default="cpu",
                        help="compile every module for this device (cuda: see above)")
    parser.add_argument("--gpu", help="with --device cuda: nxc's --gpu architectures")
    parser.add_argument("--bundle", help="with --device cuda: write the GPU bundle here (appends to calls.txt)")
    parser.add_argument("--via-graph", action="store_true",
                        help="compile every module from its JSON graph (see above)")
    parser.add_argument("--threads", type=int, default=1,
                        help="compile every module with nxc's --threads (the artifact cases, which check a "
                             "module without threads, are left out)")
    parser.add_argument("--min-parallel-work", type=int, default=0,
                        help="with --threads: nxc's --min-parallel-work (default 0: every parallel loop)")
    global ARGS
    ARGS = parser.parse_args()
    if ARGS.via_graph:
        global jsonschema
        import jsonschema  # Debian's python3-jsonschema (scripts/setup.sh)

    cases = [(name, fn) for name, fn in CASES
             if (not ARGS.filter or any(f in name for f in ARGS.filter))
             and not ((ARGS.device != "cpu" or ARGS.via_graph or ARGS.threads > 1) and name.startswith("artifact"))]
    if ARGS.bundle:
        shutil.rmtree(ARGS.bundle, ignore_errors=True)
        os.makedirs(ARGS.bundle)
    if ARGS.list:
        print("\n".join(name for name, _ in cases))
        return 0
    if not cases:
        print(f"no case matches {' or '.join(ARGS.filter)} (--list shows them)", file=sys.stderr)
        return 2
    ctx = Context(os.path.abspath(ARGS.nxc), os.path.abspath(ARGS.work))
    global WORK
    WORK = ctx.work
    os.makedirs(ctx.work, exist_ok=True)

    width = max(len(name) for name, _ in cases)
    failed = []
    start = time.monotonic()
    for name, fn in cases:
        ctx.case_name, ctx.nxc_commands = name, []
        case_start = time.monotonic()
        try:
            max_err = fn(ctx)
            status, detail = "PASS", None
        except CaseSkipped as e:
            max_err, status, detail = None, "SKIP", None
            print(f"SKIP {name}: {e}")
            continue
        except CaseFailure as e:
            max_err, status, detail = getattr(e, "max_err", None), "FAIL", str(e)
        except Exception:  # a bug in the runner itself
            max_err, status, detail = None, "FAIL", traceback.format_exc()
        err = "-" if max_err is None else f"{max_err:.3g}"
        print(f"{status} {name:<{width}}  max err {err:<9} "
              f"({time.monotonic() - case_start:.2f}s)", flush=True)
        if detail:
            failed.append(name)
            print(textwrap.indent(detail.rstrip(), "    "))
            for cmd in ctx.nxc_commands:
                if shlex.join(cmd) not in detail:
                    print(f"    nxc command of this case: {shlex.join(cmd)}")
            sys.stdout.flush()
    if RAN_CPUS or UNRUNNABLE_CPUS:
        print(f"\nCPU variants run: {', '.join(sorted(RAN_CPUS)) or 'none'}"
              + (f"; not on this CPU: {', '.join(sorted(UNRUNNABLE_CPUS))}" if UNRUNNABLE_CPUS else ""))
    print(f"\n{len(cases) - len(failed)} passed, {len(failed)} failed, {len(cases)} cases "
          f"in {time.monotonic() - start:.1f}s")
    if failed:
        print("failed: " + " ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

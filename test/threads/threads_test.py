#!/usr/bin/python3
"""The thread pool of modules compiled with `nxc aot --threads`.

Compiles test/threads/threads.nx twice, with --threads 4 --min-parallel-work 0
(every parallel loop on the pool) and without threads, and builds
threads_test.c against both. On the host it checks:
  - every function gives bit for bit its results at one thread at 2 to 4
    threads, from eight application threads at once, in a child of fork() and
    in calls in a loop, also with 4 threads on one CPU (where the caller runs
    the chunks of workers that have not started), and at one thread it is close to the module without
    threads; MODULE_set_threads clamps to 1..4;
  - the count chosen at start: $NXC_NUM_THREADS, else the CPUs the process
    may use (taskset), at most 4;
  - all of the above on random inputs (a new seed each run, printed) and in
    every CPU variant of the module that this machine can run
    ($NXC_CPU_VARIANT picks it);
  - MODULE_stop_threads joins the workers and the next call starts them
    again; dlclose of the shared object stops its workers;
  - the header declares the thread functions and says which functions use the
    pool, the manifest records the threads, the .so NEEDs libpthread.so.0 and
    libc.so.6 and imports only what the pool uses;
  - --threads on bare metal or with --device cuda, and --min-parallel-work
    without --threads, are errors.
The pool's C source alone runs a stress test under ThreadSanitizer
(pool_stress.c). Then, for aarch64 and armv7 Linux (64- and 32-bit pool
bitcode), the same check under qemu-user, fork() aside.

Usage: test/threads/threads_test.py --nxc build/tools/nxc/nxc --work DIR
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LLVM_BIN = "/usr/lib/llvm-22/bin"
FNS = ["norm(f32[64,512])", "softmax(f32[100000])", "dense(f32[30,784], f32[784,128], f32[128])",
       "skinny(f32[300,784], f32[784,10])", "columns(f32[96,80])", "short_rows(f32[37,5])",
       "contract_first(f32[3,40], f32[3,5])", "small_dot(f32[45,3], f32[3,7])"]
POOL_IMPORTS = {"pthread_create", "pthread_join", "pthread_mutex_lock", "pthread_mutex_unlock", "pthread_cond_wait",
                "pthread_cond_broadcast", "sched_getaffinity", "getenv", "getpid", "memset", "memcpy", "memmove"}
# name: (nxc --target, clang target, clang flags, qemu)
CROSS = {
    "aarch64": ("aarch64-linux-gnu", "aarch64-linux-gnu", [], ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]),
    "armv7": ("armv7-linux-gnueabihf", "arm-linux-gnueabihf", ["-march=armv7-a", "-mfpu=neon", "-mfloat-abi=hard"],
              ["qemu-arm", "-L", "/usr/arm-linux-gnueabihf"]),
}


class Failure(Exception):
    pass


def run(cmd, env=None, timeout=300, expect=0):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if p.returncode != expect:
        raise Failure(f"$ {' '.join(cmd)}\nexit {p.returncode} (expected {expect})\n{p.stdout[-3000:]}{p.stderr[-3000:]}")
    return p.stdout + p.stderr


def build(nxc, out, target=None):
    for name, extra in (("thr", ["--threads", "4", "--min-parallel-work", "0"]), ("one", [])):
        cmd = [nxc, "aot", os.path.join(HERE, "threads.nx"), "--name", name, "-o", out] + extra
        for fn in FNS:
            cmd += ["--fn", fn]
        if target:
            cmd += ["--target", target]
        run(cmd)


def host(args):
    out = os.path.join(args.work, "host")
    build(args.nxc, out)
    exe = os.path.join(out, "threads_test")
    libs = [os.path.join(out, f) for f in ("libthr.a", "libone.a", "libnxrt.a")]
    run(["cc", "-std=c11", "-O2", "-Wall", "-Werror", "-DTHREADS_TEST_VARIANTS", "-I", out,
         os.path.join(HERE, "threads_test.c"), *libs, "-lpthread", "-ldl", "-lm", "-o", exe])
    seed = random.randrange(1, 2**31)
    env = dict(os.environ, THREADS_TEST_SEED=str(seed))
    print(f"inputs from seed {seed} (THREADS_TEST_SEED={seed} repeats them)")
    env.pop("NXC_NUM_THREADS", None)
    env.pop("NXC_CPU_VARIANT", None)
    variants = [v["cpu"] for v in json.load(open(os.path.join(out, "thr.json")))["variants"]]
    if len(variants) < 2:
        raise Failure(f"thr.json lists the variants {variants}; a host build has several")
    for variant in variants:
        venv = dict(env, NXC_CPU_VARIANT=variant)
        got = run([exe, "variant"], env=venv).strip()
        if got != variant:
            print(f"variant {variant}: not run (this CPU lacks its features; it runs {got})")
            continue
        print(f"variant {variant}:", run([exe, "check"], env=venv, timeout=120).strip())
        if shutil.which("taskset"):
            # Four threads on one CPU: a worker mostly cannot start its chunk
            # before the caller has finished its own, so the caller runs the
            # chunks no worker has claimed; the results must not change.
            print(f"variant {variant}, one CPU, 4 threads:",
                  run(["taskset", "-c", "0", exe, "check-without-fork"], env=dict(venv, NXC_NUM_THREADS="4"),
                      timeout=300).strip())
    if run([exe, "variant"], env=dict(env, NXC_CPU_VARIANT="no-such-cpu")).strip() not in variants:
        raise Failure("NXC_CPU_VARIANT=no-such-cpu: thr_cpu_variant() names no variant of the module")

    cpus = len(os.sched_getaffinity(0))
    got = run([exe, "count"], env=env).strip()
    if got != str(min(4, cpus)):
        raise Failure(f"thr_threads() at start is {got}, expected min(4, {cpus} CPUs)")
    if shutil.which("taskset"):
        got = run(["taskset", "-c", "0", exe, "count"], env=env).strip()
        if got != "1":
            raise Failure(f"thr_threads() on one CPU (taskset -c 0) is {got}, expected 1")
    for value, want in (("3", "3"), ("9", "4"), ("junk", str(min(4, cpus)))):
        got = run([exe, "count"], env=dict(env, NXC_NUM_THREADS=value)).strip()
        if got != want:
            raise Failure(f"thr_threads() with NXC_NUM_THREADS={value} is {got}, expected {want}")
    got = run([exe, "dlopen", os.path.join(out, "libthr.so")]).strip()
    if got != "unloaded":
        raise Failure(f"dlopen mode printed {got!r}")

    header = open(os.path.join(out, "thr.h")).read()
    for needle in ("int thr_set_threads(int n);", "int thr_threads(void);", "void thr_stop_threads(void);", "-lpthread",
                   "Runs 2 loops on the thread pool", "The only global state is the thread pool"):
        if needle not in header:
            raise Failure(f"thr.h lacks {needle!r}")
    if "thr_set_threads" in open(os.path.join(out, "one.h")).read():
        raise Failure("one.h (no --threads) declares thread functions")
    manifest = json.load(open(os.path.join(out, "thr.json")))
    if manifest["threads"] != {"most": 4, "set": "thr_set_threads", "query": "thr_threads",
                               "stop": "thr_stop_threads", "environment": "NXC_NUM_THREADS"}:
        raise Failure(f"thr.json threads: {manifest['threads']}")
    if json.load(open(os.path.join(out, "one.json")))["threads"] != {"most": 1}:
        raise Failure("one.json does not say one thread")
    if "pthread" not in manifest["link_libraries"]:
        raise Failure(f"thr.json link_libraries: {manifest['link_libraries']}")
    dynamic = run(["readelf", "-d", os.path.join(out, "libthr.so")])
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
    if needed != ["libpthread.so.0", "libc.so.6"]:
        raise Failure(f"libthr.so NEEDs {needed}")
    imports = {l.split()[-1].split("@")[0] for l in run(["nm", "-D", "--undefined-only",
                                                          os.path.join(out, "libthr.so")]).splitlines() if l.strip()}
    if imports - POOL_IMPORTS:
        raise Failure(f"libthr.so imports {sorted(imports - POOL_IMPORTS)} beyond the pool's")
    # Every exported function is one the header declares (the parallel bodies
    # and their tasks stay internal, one copy per CPU variant).
    exported = {l.split()[-1].split("@")[0] for l in run(["nm", "-D", "--defined-only",
                                                           os.path.join(out, "libthr.so")]).splitlines() if l.strip()}
    runtime_header = open(os.path.join(out, "nxrt.h")).read()  # nxrt_version, nxrt_status_string
    undeclared = sorted(name for name in exported
                        if not re.search(rf"\b{re.escape(name)}\(", header + runtime_header))
    if undeclared:
        raise Failure(f"libthr.so exports {undeclared}, which thr.h does not declare")
    tasks = [l for l in run(["nm", os.path.join(out, "libthr.a")]).splitlines() if l.endswith(".task")]
    if not any(".v0." in t for t in tasks):
        raise Failure(f"libthr.a has no task per CPU variant: {tasks}")
    if "libpthread" in run(["readelf", "-d", os.path.join(out, "libone.so")]):
        raise Failure("libone.so (no --threads) NEEDs libpthread")

    for cmd, message in (
            (["--target", "thumbv7em-none-eabihf", "--threads", "2"], "bare-metal targets"),
            (["--device", "cuda", "--threads", "2"], "--threads applies to CPU code"),
            (["--min-parallel-work", "0"], "--min-parallel-work needs --threads")):
        text = run([args.nxc, "aot", os.path.join(HERE, "threads.nx"), "--fn", FNS[0], "-o",
                    os.path.join(args.work, "refused")] + cmd, expect=1)
        if message not in text:
            raise Failure(f"nxc aot {' '.join(cmd)}: {text!r} does not say {message!r}")


def pool_under_tsan(args):
    """runtime/thread_pool.c alone under ThreadSanitizer (pool_stress.c): concurrent callers,
    changing counts, stops between jobs; every element written once, no data race."""
    root = os.path.dirname(os.path.dirname(HERE))
    exe = os.path.join(args.work, "pool_tsan")
    run([os.path.join(LLVM_BIN, "clang"), "-fsanitize=thread", "-O1", "-g", "-std=c11",
         os.path.join(root, "runtime", "thread_pool.c"), os.path.join(HERE, "pool_stress.c"), "-lpthread", "-o", exe])
    p = subprocess.run([exe], capture_output=True, text=True, timeout=300)
    if "unexpected memory mapping" in p.stderr and shutil.which("setarch"):
        # TSan's shadow memory needs a layout that high ASLR entropy can break.
        p = subprocess.run(["setarch", os.uname().machine, "-R", exe], capture_output=True, text=True, timeout=300)
    if "unexpected memory mapping" in p.stderr:
        print("skipped: ThreadSanitizer cannot lay out its shadow memory on this kernel")
        return
    if p.returncode != 0 or "WARNING: ThreadSanitizer" in p.stderr or p.stdout.strip() != "ok":
        raise Failure(f"the pool under ThreadSanitizer: exit {p.returncode}\n{p.stdout[-3000:]}{p.stderr[-5000:]}")
    print(p.stdout.strip())


def cross(args, name):
    target, clang_target, flags, qemu = CROSS[name]
    out = os.path.join(args.work, name)
    build(args.nxc, out, target)
    exe = os.path.join(out, "threads_test")
    libs = [os.path.join(out, f) for f in ("libthr.a", "libone.a", "libnxrt.a")]
    run([os.path.join(LLVM_BIN, "clang"), f"--target={clang_target}", *flags, "-fuse-ld=lld", "-std=c11", "-O2",
         "-Wall", "-Werror", "-I", out, os.path.join(HERE, "threads_test.c"), *libs, "-lpthread", "-ldl", "-lm", "-o", exe])
    # qemu-user cannot fork a process that has threads.
    seed = random.randrange(1, 2**31)
    print(f"inputs from seed {seed}:", run(qemu + [exe, "check-without-fork"],
                                           env=dict(os.environ, NXC_NUM_THREADS="4", THREADS_TEST_SEED=str(seed)),
                                           timeout=600).strip())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nxc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", help="run only this part (host, pool-tsan, aarch64, armv7)")
    args = ap.parse_args()
    args.nxc = os.path.abspath(args.nxc)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    failed = 0
    cases = [("host", lambda: host(args)), ("pool-tsan", lambda: pool_under_tsan(args))]
    for name, fn in cases + [(n, lambda n=n: cross(args, n)) for n in CROSS]:
        if args.only and name != args.only:
            continue
        try:
            fn()
            print(f"PASS {name}")
        except Failure as e:
            failed += 1
            print(f"FAIL {name}\n{e}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

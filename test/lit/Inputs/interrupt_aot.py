"""Interrupts nxc aot and checks that the output directory holds a module's
files all together or not at all (lit artifacts-all-or-nothing.test).

Usage: interrupt_aot.py NXC SOURCE DIR
"""
import os
import signal
import subprocess
import sys
import time

nxc, source, out = sys.argv[1:4]
fn = ["--fn", "big(f32[64,512], f32[512,512])"]
module = ["aot", source, "--name", "big", "-o", out] + fn
FILES = {"big.h", "big.json", "libbig.a", "libbig.so", "libnxrt.a", "nxrt.h", "nxrt.c"}


def listing():
    return set(os.listdir(out)) if os.path.isdir(out) else set()


def check(when, dead_temporaries_allowed=False):
    names = listing()
    if dead_temporaries_allowed:
        # SIGKILL cannot be caught: the killed run's temporaries stay until
        # the next run of the same module removes them.
        names = {n for n in names if not n.startswith(".nxc-tmp-")}
    if names and names != FILES:
        sys.exit(f"{when}: the directory holds {sorted(names)}, not all of {sorted(FILES)} or nothing")


# Signals at several moments of the compile: never a partial set, never a
# temporary left behind (SIGTERM and SIGINT remove them).
for sig in (signal.SIGTERM, signal.SIGINT):
    for delay in (0.05, 0.2, 0.4, 0.8):
        p = subprocess.Popen([nxc] + module, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        p.send_signal(sig)
        p.wait()
        check(f"signal {sig} after {delay} s")

# SIGKILL leaves temporaries; the next run removes them and writes the set.
for delay in (0.2, 0.5, 0.9):
    p = subprocess.Popen([nxc] + module, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    p.kill()
    p.wait()
    check(f"SIGKILL after {delay} s", dead_temporaries_allowed=True)
subprocess.run([nxc] + module, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if listing() != FILES:
    sys.exit(f"after a complete run: {sorted(listing())}")
print("all or nothing")

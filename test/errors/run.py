#!/usr/bin/python3
"""Every user-facing error of nxc, one must-fail input per file.

Each file under test/errors/<area>/ starts with comment lines that say how to
run nxc on it and what it must print:

    # nxc aot %s --fn 'bad_shapes(f32[2,3], f32[4])'
    # error: %s:10:32: error: cannot broadcast tensors of shapes {2, 3} and {4} in Nx.add

`%s` is the file's path. nxc must exit 1 (a user error: never 0, never an
internal error, never a crash) and the first line of its stderr must be the
`error:` line exactly (location and message). Files ending in .nx (or .exs)
are defn sources; files ending in .cli hold only the comment lines, for
errors of the command line itself (then `%s` is unused). A `# stdin: TEXT`
line feeds TEXT (with \\n escapes) to nxc (the repl).

Usage: test/errors/run.py --nxc build/tools/nxc/nxc [-k FILTER]
"""
import argparse
import glob
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def parse(path):
    command = expected = stdin = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("#"):
                break
            body = line[1:].strip()
            if body.startswith("nxc "):
                command = body[4:]
            elif body.startswith("error: "):
                expected = body[len("error: "):]
            elif body.startswith("stdin: "):
                stdin = body[len("stdin: "):].encode().decode("unicode_escape")
    return command, expected, stdin


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nxc", required=True)
    ap.add_argument("-k", "--filter", default="")
    args = ap.parse_args()
    args.nxc = os.path.abspath(args.nxc)
    files = sorted(p for ext in ("nx", "exs", "cli") for p in glob.glob(os.path.join(HERE, "*", f"*.{ext}")))
    files = [p for p in files if args.filter in p]
    failures = []
    for path in files:
        rel = os.path.relpath(path, HERE)
        command, expected, stdin = parse(path)
        if not command or not expected:
            failures.append(f"{rel}: needs a '# nxc ...' and a '# error: ...' line")
            continue
        # Run from the file's directory so that messages name it as written.
        name = os.path.basename(path)
        argv = [args.nxc] + shlex.split(command.replace("%s", name))
        want = expected.replace("%s", name)
        folder = os.path.dirname(path)
        before = set(os.listdir(folder))
        proc = subprocess.run(argv, cwd=folder, capture_output=True, text=True, errors="replace",
                              input=stdin, timeout=120, env=dict(os.environ, NO_COLOR="1"))
        # A case that wrongly succeeds writes its artifacts here: remove them,
        # so that the source tree stays clean (the case still fails below).
        for extra in set(os.listdir(folder)) - before:
            extra_path = os.path.join(folder, extra)
            if os.path.isfile(extra_path):
                os.remove(extra_path)
        first = proc.stderr.splitlines()[0] if proc.stderr else ""
        if proc.returncode != 1 or first != want:
            failures.append(f"{rel}: exit {proc.returncode}\n  expected: {want}\n  got:      {first}\n"
                            f"  $ {shlex.join(argv)}")
    for f in failures:
        print("FAIL", f)
    print(f"{len(files) - len(failures)} of {len(files)} error cases pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

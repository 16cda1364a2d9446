#!/usr/bin/python3
"""Mutation fuzzing of graph files: no graph may crash nxc or reach an internal error.

Traces a few functions of the e2e cases to graph files (`nxc aot --emit json`),
then mutates them: structurally (another op, operand, option, type, shape or
index; a field deleted or duplicated; nodes dropped or swapped; deep nesting)
and byte by byte (truncation, random bytes). Each mutant goes through the
whole pipeline (`nxc aot G.json --emit llvm`); nxc must exit 0 (a graph that
still makes sense) or 1 with an error located in the graph file
(`G.json:/pointer: error:` or `G.json:LINE:COL: error:`). Exit 2 (an internal
error: a graph the verifiers passed but the compiler could not lower) and
crashes are failures, printed with the mutant kept for reproduction.

Usage: test/fuzz/mutate_graph.py --nxc build/tools/nxc/nxc [--runs N] [--seed S] [--keep DIR]
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = os.path.join(ROOT, "test", "e2e", "cases")
SOURCES = [
    ("softmax.nx", ["MyDefn.softmax(f32[6])"]),
    ("control.nx", ["power_iteration(f32[3,3], s32[])", "rotate(s32[5], s32[5], s32[5], s32[])",
                    "running(s32[3,4])", "windows(s32[3,4], s32[])"]),
    ("shapes.nx", ["reshape(f32[2,3])", "permute(f32[2,3,4])", "to_int(f32[6])"]),
    ("reductions.nx", ["row_sum(f32[4,5])", "col_max(f32[4,5])", "total(s32[4,5])", "mean_cols(s32[4,5])",
                       "sum_outer(f32[2,3,4])"]),
    ("dots.nx", ["dot(f32[3,4], f32[4])", "batched(f32[2,3,4], f32[2,4,5])"]),
    ("conv.nx", ["c1(f32[2,3,5,6], f32[4,3,2,3])", "cg(f32[1,4,7], f32[6,2,3])"]),
    ("mlp.nx", ["dense(f32[30,784], f32[784,10], f32[10])"]),
]
OPS = ["add", "subtract", "divide", "exp", "negate", "sum", "reduce_max", "all", "dot", "broadcast", "reshape",
       "transpose", "slice", "put_slice", "pad", "concatenate", "select", "as_type", "bitcast", "iota", "argmax",
       "cumulative_sum", "window_sum", "conv", "take", "gather", "argsort", "indexed_add", "equal", "less",
       "bitwise_and", "quotient", "cond", "while", "elem", "metadata", "region_arg", "parameter", "constant",
       "yield", "print_value", "nope"]
TYPES = ["s8", "s32", "s64", "u8", "u64", "f16", "bf16", "f32", "f64", "x9"]
INTS = [-2**63, -1, 0, 1, 2, 3, 7, 2**31, 2**40, 2**62, 2**64 - 1]
OPTION_NAMES = ["axes", "lhs_contract", "rhs_contract", "lhs_batch", "rhs_batch", "start_indices", "lengths",
                "strides", "low", "high", "interior", "tie_break", "direction", "window_dims", "dilations",
                "kernel_dilation", "feature_groups"]
LOCATED = re.compile(r"^(?:[^\n]*\.json:(?:/[^\n]*|\d+:\d+): error: |nxc: error: )")


def corpus(nxc, tmp):
    graphs = []
    for source, fns in SOURCES:
        for fn in fns:
            cmd = [nxc, "aot", os.path.join(CASES, source), "--fn", fn, "--emit", "json"]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                sys.exit(f"cannot build the corpus: {' '.join(cmd)}\n{proc.stderr}")
            graphs.append(json.loads(proc.stdout))
    return graphs


def random_int(rng, n):
    return rng.choice(INTS + list(range(-1, n + 2)))


def mutate_structure(doc, rng):
    fn = rng.choice(doc["functions"])
    nodes = fn["nodes"]
    if not nodes:
        return
    i = rng.randrange(len(nodes))
    node = nodes[i]
    kind = rng.randrange(14)
    if kind == 0:
        node["op"] = rng.choice(OPS)
    elif kind == 1 and node.get("operands"):
        k = rng.randrange(len(node["operands"]))
        node["operands"][k] = random_int(rng, len(nodes))
    elif kind == 2:
        node.setdefault("operands", []).append(random_int(rng, len(nodes)))
    elif kind == 3:
        opts = node.setdefault("options", {})
        name = rng.choice(list(opts) or OPTION_NAMES) if rng.random() < 0.7 else rng.choice(OPTION_NAMES)
        opts[name] = [random_int(rng, 4) for _ in range(rng.randrange(4))]
    elif kind == 4:
        node["type"] = rng.choice(TYPES)
    elif kind == 5:
        shape = node.get("shape", [])
        if shape and rng.random() < 0.5:
            shape[rng.randrange(len(shape))] = random_int(rng, 8)
        else:
            node["shape"] = [rng.randrange(0, 5) for _ in range(rng.randrange(4))]
    elif kind == 6 and node:
        del node[rng.choice(list(node))]
    elif kind == 7:
        node["index"] = random_int(rng, 3)
    elif kind == 8:
        del nodes[i]
    elif kind == 9 and len(nodes) > 1:
        j = rng.randrange(len(nodes))
        nodes[i], nodes[j] = nodes[j], nodes[i]
    elif kind == 10 and "regions" in node:
        region = rng.choice(node["regions"])
        field = rng.choice(["args", "nodes", "results"])
        if region[field] and rng.random() < 0.5:
            del region[field][rng.randrange(len(region[field]))]
        else:
            region[field].append(random_int(rng, len(nodes)))
    elif kind == 11 and "value" in node:
        values = node["value"]
        if values and rng.random() < 0.5:
            values[rng.randrange(len(values))] = rng.choice([1e308, -0.0, "nan", "inf", 2**64 - 1, -2**63, 0.5])
        else:
            values.append(1)
    elif kind == 12:
        fn["result"] = rng.choice([random_int(rng, len(nodes)), [random_int(rng, len(nodes))], []])
    else:
        p = fn["parameters"]
        if p:
            p[rng.randrange(len(p))]["shape"] = [rng.randrange(0, 4)]


def mutate_text(text, rng):
    kind = rng.randrange(4)
    if kind == 0:
        return text[:rng.randrange(len(text))]
    if kind == 1:
        pos = rng.randrange(len(text))
        return text[:pos] + chr(rng.randrange(1, 128)) + text[pos + 1:]
    if kind == 2:
        depth = rng.choice([100, 10000, 200000])
        return text.replace('"result": ', '"result": ' + "[" * depth, 1) + "]" * (depth if rng.random() < 0.5 else 0)
    pos = rng.randrange(len(text))
    return text[:pos] + text[pos:pos + rng.randrange(1, 40)] * rng.randrange(2, 4) + text[pos:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nxc", required=True)
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", help="copy failing mutants here")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    failures = accepted = 0
    with tempfile.TemporaryDirectory() as tmp:
        graphs = corpus(args.nxc, tmp)
        path = os.path.join(tmp, "g.json")
        for run in range(args.runs):
            doc = json.loads(json.dumps(rng.choice(graphs)))
            if rng.random() < 0.75:
                for _ in range(rng.randint(1, 3)):
                    mutate_structure(doc, rng)
                text = json.dumps(doc)
            else:
                text = mutate_text(json.dumps(doc, indent=1), rng)
            with open(path, "w") as f:
                f.write(text)
            proc = subprocess.run([args.nxc, "aot", path, "--emit", "llvm"], capture_output=True, text=True,
                                  errors="replace", timeout=120)
            err = proc.stderr
            ok = proc.returncode == 0 or (proc.returncode == 1 and LOCATED.match(err))
            accepted += proc.returncode == 0
            if not ok:
                failures += 1
                print(f"FAIL run {run}: exit {proc.returncode}\n  {err.strip()[:600]}")
                if args.keep:
                    os.makedirs(args.keep, exist_ok=True)
                    shutil.copy(path, os.path.join(args.keep, f"graph-{args.seed}-{run}.json"))
    print(f"{args.runs} mutated graphs, {accepted} still valid, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

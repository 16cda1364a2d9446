#!/usr/bin/env python3
"""nxc against real Nx on the Elixir that library code runs while Nx traces.

Random deftransforms mixing options (Keyword.validate!/2 with defaults, a
random subset given in --fn), keyword lists, maps (put, new with a function,
merge with a function, access, enumeration), Enum and `for` over lists and
maps, `case`/`cond`/`if` on atoms, numbers and booleans, tuples and string
building, with tensor arithmetic in between; each returns a map of tensors.

  generate --seed S --count N --out cases.jsonl
      programs, their --fn text and inputs
  (Elixir) terms_oracle.exs cases.jsonl nx.jsonl
      real Nx's results
  corpus --cases cases.jsonl --nx nx.jsonl --out terms_corpus.jsonl
      the cases with Nx's results (those where Nx raised left out)
  check --nxc NXC --corpus terms_corpus.jsonl
      each program through `nxc jit`, its results compared with Nx's
      (structure, types and shapes exactly; values to rtol 1e-5, atol 1e-6)
"""
import argparse, concurrent.futures, json, os, random, subprocess, sys, tempfile

ATOMS = [":mean", ":sum", ":max", ":none"]


class Gen:
    def __init__(self, rng):
        self.r = rng
        self.keys = 0

    def opts(self):
        """The schema's defaults and the options a call gives."""
        schema = {
            "scale": self.r.choice(["1.0", "2", "0.5", "-1"]),
            "mode": self.r.choice(ATOMS),
            "steps": "[" + ", ".join(str(self.r.randint(-2, 3)) for _ in range(self.r.randint(0, 3))) + "]",
            "flag": self.r.choice(["true", "false"]),
            "name": self.r.choice(['"ab"', '"xyz"', '""']),
        }
        given = {}
        for k in schema:
            if self.r.random() < 0.4:
                given[k] = {
                    "scale": lambda: self.r.choice(["3", "0.25", "-2.0"]),
                    "mode": lambda: self.r.choice(ATOMS),
                    "steps": lambda: "[" + ", ".join(str(self.r.randint(-3, 3)) for _ in range(self.r.randint(0, 4))) + "]",
                    "flag": lambda: self.r.choice(["true", "false"]),
                    "name": lambda: self.r.choice(['"q"', '"four"']),
                }[k]()
        return schema, given

    def key(self):
        self.keys += 1
        return f"k{self.keys}"

    def step(self):
        """One statement over `t` (a tensor), `m` (a map of tensors) and `opts`."""
        r = self.r
        k = self.key()
        choices = [
            lambda: "t = Enum.reduce(opts[:steps], t, fn s, acc -> Nx.add(acc, s * opts[:scale]) end)",
            lambda: "t = if opts[:flag], do: Nx.negate(t), else: Nx.abs(t)",
            lambda: f"m = Map.put(m, :{k}, Nx.sum(t))",
            lambda: ("t =\n      case opts[:mode] do\n        :mean -> Nx.subtract(t, Nx.mean(t))\n"
                     "        :sum -> Nx.divide(t, Nx.add(Nx.sum(Nx.abs(t)), 1))\n"
                     "        :max -> Nx.subtract(t, Nx.reduce_max(t))\n        _ -> t\n      end"),
            lambda: f"t = for s <- {r.choice(['[1, 2, 3]', 'opts[:steps]', '1..3', '[0.5]'])}, reduce: t do\n        acc -> Nx.add(acc, s)\n      end",
            lambda: "m = Map.new(m, fn {key, v} -> {key, Nx.multiply(v, 2)} end)",
            lambda: f"m = Map.merge(m, %{{{k}: Nx.tensor({r.randint(-3, 3)}.0), base: Nx.tensor(1.0)}}, fn _k, a, b -> Nx.add(a, b) end)",
            lambda: "t = Nx.add(t, length(opts[:steps]) + String.length(opts[:name]))",
            lambda: "t = Nx.multiply(t, Enum.count(m))",
            lambda: ("t =\n      cond do\n        opts[:scale] > 1 -> Nx.multiply(t, opts[:scale])\n"
                     "        opts[:scale] < 0 -> Nx.exp(Nx.multiply(t, 0.1))\n        true -> Nx.sin(t)\n      end"),
            lambda: f"{{first, second}} = {{Nx.tanh(t), Nx.multiply(t, {r.choice(['0.5', '3'])})}}\n    t = if opts[:mode] in [:sum, :max], do: first, else: second",
            lambda: "t = Enum.reduce(m, t, fn {_key, v}, acc -> Nx.add(acc, v) end)",
            lambda: "t = Nx.add(t, Enum.sum(for {key, _} <- m, into: [], do: String.length(Atom.to_string(key))))",
            lambda: f"{{v, rest}} = Keyword.pop(opts, :scale)\n    t = Nx.add(t, Nx.multiply(v, length(rest)))",
            lambda: f"t = Nx.add(t, Map.get(m, :missing, Nx.tensor({r.randint(1, 4)})))",
            lambda: "t = Nx.multiply(t, if(opts[:name] <> \"!\" == \"ab!\", do: 2, else: 1))",
            lambda: ("t =\n      with [s | _] <- opts[:steps], true <- s > 0 do\n        Nx.add(t, s)\n"
                     "      else\n        _ -> Nx.subtract(t, 1)\n      end"),
            lambda: ("t = Enum.zip(opts[:steps], 1..10) |> Enum.map(fn {s, i} -> s * i end)"
                     " |> Enum.reduce(t, &Nx.add(&2, &1))"),
            lambda: f"m = Map.put(m, :{k}, %{{inner: Nx.multiply(t, {r.choice(['2', '-1'])})}}.inner)",
            lambda: "t = Nx.add(t, Keyword.get(opts, :absent, 7) + List.first(opts[:steps] ++ [9]))",
            lambda: "t = Enum.with_index(opts[:steps]) |> Enum.reduce(t, fn {s, i}, acc -> Nx.add(acc, s - i) end)",
            lambda: "t = Nx.add(t, m |> Map.keys() |> length())",
            lambda: f"t = Nx.add(t, elem({{{r.randint(0, 5)}, opts[:scale], {r.randint(-3, 3)}}}, {r.randint(0, 2)}))",
            lambda: "t = Nx.divide(t, Enum.max([1 | Enum.map(opts[:steps], &abs/1)]))",
        ]
        return r.choice(choices)()

    def program(self, index):
        schema, given = self.opts()
        module = f"T{index}"
        steps = [self.step() for _ in range(self.r.randint(2, 6))]
        body = "\n    ".join(steps)
        defaults = ", ".join(f"{k}: {v}" for k, v in schema.items())
        source = (f"defmodule {module} do\n  import Nx.Defn\n\n"
                  f"  deftransform f(x, opts \\\\ []) do\n"
                  f"    opts = Keyword.validate!(opts, [{defaults}])\n"
                  f"    t = Nx.multiply(x, 1.0)\n    m = %{{start: Nx.sum(x)}}\n"
                  f"    {body}\n    Map.put(m, :t, t)\n  end\nend\n")
        call = ", ".join(f"{k}: {v}" for k, v in given.items())
        fn = f"{module}.f({call})" if call else f"{module}.f"
        shape = self.r.choice([[3], [2, 3], [4]])
        n = 1
        for d in shape:
            n *= d
        data = [round(self.r.uniform(-2, 2), 3) for _ in range(n)]
        return {"id": index, "source": source, "fn": fn, "call": call, "shape": shape, "input": data}


def generate(args):
    gen = Gen(random.Random(args.seed))
    with open(args.out, "w") as out:
        for i in range(args.count):
            out.write(json.dumps(gen.program(i)) + "\n")


def corpus(args):
    nx = {}
    for line in open(args.nx):
        r = json.loads(line)
        nx[r["id"]] = r
    kept = 0
    with open(args.out, "w") as out:
        for line in open(args.cases):
            c = json.loads(line)
            r = nx.get(c["id"])
            if not r or "error" in r:
                continue
            c["want"] = r["result"]
            out.write(json.dumps(c) + "\n")
            kept += 1
    print(f"{kept} cases with Nx's results")


def check_case(nxc, case, work):
    import numpy as np
    d = os.path.join(work, str(case["id"]))
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "t.ex")
    with open(src, "w") as f:
        f.write(case["source"])
    x = np.array(case["input"], dtype=np.float32).reshape(case["shape"])
    np.save(os.path.join(d, "x.npy"), x)
    out = os.path.join(d, "got.npz")
    res = subprocess.run([nxc, "jit", src, "--fn", case["fn"], os.path.join(d, "x.npy"), "-o", out],
                         capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        return False, res.stderr.strip().splitlines()[0] if res.stderr.strip() else f"exit {res.returncode}"
    got = np.load(out)
    want = case["want"]
    if sorted(got.files) != sorted(want):
        return False, f"keys {sorted(got.files)} against Nx's {sorted(want)}"
    for k, w in want.items():
        g = got[k]
        if str(g.dtype) != w["dtype"] or list(g.shape) != w["shape"]:
            return False, f"{k}: {g.dtype}{list(g.shape)} against Nx's {w['dtype']}{w['shape']}"
        wv = np.array(w["data"], dtype=np.float64).reshape(w["shape"])
        if not np.allclose(g.astype(np.float64), wv, rtol=1e-5, atol=1e-6, equal_nan=True):
            return False, f"{k}: {g.ravel()[:6].tolist()} against Nx's {wv.ravel()[:6].tolist()}"
    return True, ""


def check(args):
    cases = [json.loads(line) for line in open(args.corpus)]
    failed = 0
    with tempfile.TemporaryDirectory() as work:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
            for case, (ok, why) in zip(cases, ex.map(lambda c: check_case(args.nxc, c, work), cases)):
                if not ok:
                    failed += 1
                    print(f"DIFFERS case {case['id']} ({case['fn']}): {why}")
    print(f"{len(cases) - failed} of {len(cases)} programs agree with Nx")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--count", type=int, default=200)
    g.add_argument("--out", required=True)
    c = sub.add_parser("corpus")
    c.add_argument("--cases", required=True)
    c.add_argument("--nx", required=True)
    c.add_argument("--out", required=True)
    k = sub.add_parser("check")
    k.add_argument("--nxc", required=True)
    k.add_argument("--corpus", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "terms_corpus.jsonl"))
    k.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    return {"generate": generate, "corpus": corpus, "check": check}[args.command](args) or 0


if __name__ == "__main__":
    sys.exit(main())

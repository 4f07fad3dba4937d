"""First-call latency in fresh processes: numjax (cold and warm disk cache) against JAX.

    python benchmarks/first_call.py                 # 5 samples per cell; table + benchmarks/first_call.json
    python benchmarks/first_call.py -n 9 --programs selu import

Run it where both numjax and jax are importable (`.venv-jax`) to get the JAX
column and the ratios in the same run; without jax the JAX cells are empty.

Every sample is a new Python process.  It times the import statement
(`import numjax` or `import jax`; each also imports its `.numpy`), builds the
inputs with numpy (not timed), then times from there until the result is ready
(`block_until_ready`): conversion of the inputs, tracing, compiling and the
call.  The selu process goes on to time a further small function, `sum(x*x)`,
on the same input.

- numjax, cold: a fresh, empty NUMJAX_CACHE_DIR for every sample.  Caches that
  belong to the installation (Numba's cache of numjax's own library modules)
  are left as they are: that is what a user's next new script meets.  If
  such a cache lives inside NUMJAX_CACHE_DIR, `--cold-template DIR` starts
  each cold sample from a copy of DIR (a cache holding only that) instead.
- numjax, warm: one cache directory per program, filled by an untimed run of
  the same process first.  These samples also record whether `numba` and
  `llvmlite.binding` were imported (issue 9: a warm run imports neither).
- Bytecode: before the samples, one untimed process per program writes the .pyc files of
  numjax's modules (even under PYTHONDONTWRITEBYTECODE), as pip writes an installed
  package's: an editable checkout has none until a first import, and without them every
  sample would time Python compiling numjax's sources.
- JAX: its first call in a fresh process, no persistent compilation cache,
  `JAX_PLATFORMS=cpu`.

This module is imported by the child processes and by `run.py`, so it imports
only the standard library at the top.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
JSON_PATH = os.path.join(HERE, "first_call.json")

# Targets of issue 9: ratios against JAX's first call, absolute seconds for the rest.
TARGETS = {
    ("selu", "cold"): ("ratio", 1.2),
    ("mlp_grad", "cold"): ("ratio", 1.0),
    ("selu", "warm"): ("abs", 0.020),
    ("mlp_grad", "warm"): ("abs", 0.030),
    ("import", "numjax"): ("abs", 0.150),
}


# ---------------------------------------------------------------- programs (np_: numpy, numjax.numpy or jax.numpy)

def selu(np_, x, alpha=1.67, lambda_=1.05):
    return lambda_ * np_.where(x > 0, x, alpha * np_.exp(x) - alpha)


def chain(np_, x):
    """The 8-op transcendental chain (benchmarks/run.py, benchmarks/gpu.py)."""
    return np_.cos(np_.log1p(np_.tanh(np_.exp(np_.sin(x) * 0.5 + 0.25)))) * 2.0 - 1.0


def softmax(np_, x):
    """Row softmax (benchmarks/run.py, benchmarks/gpu.py)."""
    m = np_.max(x, axis=1, keepdims=True)
    e = np_.exp(x - m)
    return e / np_.sum(e, axis=1, keepdims=True)


def square_sum(np_, x):
    return np_.sum(x * x)


def mlp_loss(np_, params, x, y):
    """Softmax cross-entropy of an MLP with ReLU; ``params`` is a list of (W, b)."""
    h = x
    for W, b in params[:-1]:
        h = np_.maximum(h @ W + b, 0.0)
    W, b = params[-1]
    logits = h @ W + b
    m = np_.max(logits, axis=1, keepdims=True)
    lse = np_.log(np_.sum(np_.exp(logits - m), axis=1, keepdims=True)) + m
    return -np_.mean(np_.sum((logits - lse) * y, axis=1))


def mlp_params(rng, sizes):
    import numpy as np
    return [(rng.standard_normal((m, n)).astype(np.float32) * np.float32(np.sqrt(2 / m)),
             np.zeros(n, np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]


def mlp_data(rng, sizes=(784, 512, 512, 10), batch=128):
    import numpy as np
    params = mlp_params(rng, list(sizes))
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)]
    return params, x, y


# ---------------------------------------------------------------- the child process

# Only `time` is imported before the timed import; the rest comes after it.
_CHILD = """\
import time
t0 = time.perf_counter()
import {lib}, {lib}.numpy
t1 = time.perf_counter()
import first_call
first_call._child({lib!r}, {program!r}, t1 - t0)
"""


def _child(lib_name, program, import_s):
    """Runs in the fresh process: time the program, print one JSON line."""
    import numpy as np
    lib = sys.modules[lib_name]
    xnp = sys.modules[lib_name + ".numpy"]
    rng = np.random.default_rng(0)
    out = {"import": import_s}
    checks = {}
    if program == "selu":
        x_host = rng.standard_normal(1_000_000).astype(np.float32)
        t = time.perf_counter()
        x = xnp.asarray(x_host)
        y = lib.block_until_ready(lib.jit(lambda v: selu(xnp, v))(x))
        out["selu"] = time.perf_counter() - t
        t = time.perf_counter()
        s = lib.block_until_ready(lib.jit(lambda v: square_sum(xnp, v))(x))
        out["square_sum"] = time.perf_counter() - t
        checks = {"selu": float(np.asarray(y, np.float64).sum()), "square_sum": float(np.asarray(s))}
    elif program == "mlp_grad":
        params, x_host, y_host = mlp_data(rng)
        t = time.perf_counter()
        p = lib.tree_util.tree_map(xnp.asarray, params)
        x, y = xnp.asarray(x_host), xnp.asarray(y_host)
        g = lib.block_until_ready(lib.jit(lib.grad(lambda p, a, b: mlp_loss(xnp, p, a, b)))(p, x, y))
        out["mlp_grad"] = time.perf_counter() - t
        checks = {"mlp_grad": float(sum(np.abs(np.asarray(leaf, np.float64)).sum()
                                        for leaf in lib.tree_util.tree_leaves(g)))}
    elif program != "import":
        raise ValueError(program)
    out["checks"] = checks
    out["modules"] = {m: m in sys.modules for m in ("numba", "llvmlite", "llvmlite.binding")}
    print("FIRST_CALL_RESULT " + json.dumps(out), flush=True)


# ---------------------------------------------------------------- the parent

def jax_available(python=None):
    code = "import importlib.util, sys; sys.exit(importlib.util.find_spec('jax') is None)"
    return subprocess.run([python or sys.executable, "-c", code]).returncode == 0


def run_sample(lib, program, cache_dir=None, python=None, write_bytecode=False):
    """One fresh process; returns the child's dict (seconds). ``write_bytecode``: let Python
    write the .pyc files of the modules it compiles, even under PYTHONDONTWRITEBYTECODE."""
    env = dict(os.environ)
    if write_bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    env["JAX_PLATFORMS"] = "cpu"
    if cache_dir is not None:
        env["NUMJAX_CACHE_DIR"] = cache_dir
    code = _CHILD.format(lib=lib, program=program)
    # cwd: `python -c` puts the working directory first on sys.path; here it finds first_call.py
    proc = subprocess.run([python or sys.executable, "-c", code], env=env, cwd=HERE, capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("FIRST_CALL_RESULT "):
            return json.loads(line[len("FIRST_CALL_RESULT "):])
    raise RuntimeError(f"{lib} {program}: child failed (rc {proc.returncode}):\n{proc.stderr[-3000:]}")


def measure(programs=("import", "selu", "mlp_grad"), samples=5, with_jax=None, log=None, cold_template=None):
    """Medians over ``samples`` fresh processes per cell.

    Returns {"cells": {(timer, mode): [seconds...]}, "modules": {...}, "checks": {...}} where mode is
    "numjax_cold", "numjax_warm" or "jax", and timer is "import", "selu", "square_sum" or "mlp_grad".
    Samples of the modes take turns, so load on the machine spreads over all of them.
    """
    if with_jax is None:
        with_jax = jax_available()
    cells, modules, checks = {}, {}, {}
    warm_dirs = {}
    try:
        # Untimed: an editable install has no bytecode until a first import writes it (pip
        # compiles an installed package's, JAX's included); with PYTHONDONTWRITEBYTECODE set
        # every sample would compile numjax's sources again (import 480 ms instead of 150).
        for program in programs:
            bytecode_dir = tempfile.mkdtemp(prefix="numjax-first-call-bytecode-")
            try:
                run_sample("numjax", program, bytecode_dir, write_bytecode=True)
            finally:
                shutil.rmtree(bytecode_dir, ignore_errors=True)
        for program in programs:
            if program != "import":
                warm_dirs[program] = tempfile.mkdtemp(prefix=f"numjax-first-call-warm-{program}-")
                run_sample("numjax", program, warm_dirs[program])  # the "previous run" that fills the cache
        for k in range(samples):
            for program in programs:
                modes = ["numjax_cold"] + (["numjax_warm"] if program != "import" else []) + (["jax"] * with_jax)
                for mode in modes:
                    if mode == "numjax_cold":
                        cold = tempfile.mkdtemp(prefix="numjax-first-call-cold-")
                        if cold_template:
                            shutil.copytree(cold_template, cold, dirs_exist_ok=True)
                        try:
                            res = run_sample("numjax", program, cold)
                        finally:
                            shutil.rmtree(cold, ignore_errors=True)
                    elif mode == "numjax_warm":
                        res = run_sample("numjax", program, warm_dirs[program])
                    else:
                        res = run_sample("jax", program)
                    for timer, value in res.items():
                        if timer in ("checks", "modules") or (timer == "import" and program != "import"):
                            continue
                        cells.setdefault((timer, mode), []).append(value)
                    for name, value in res["modules"].items():
                        modules.setdefault((program, mode), {}).setdefault(name, []).append(value)
                    for name, value in res["checks"].items():
                        checks.setdefault(name, {}).setdefault(mode, value)
                    if log:
                        log(f"sample {k + 1}/{samples} {program:9s} {mode:12s} "
                            + " ".join(f"{t}={v * 1e3:.0f}ms" for t, v in res.items()
                                       if t not in ("checks", "modules")))
    finally:
        for d in warm_dirs.values():
            shutil.rmtree(d, ignore_errors=True)
    return {"cells": cells, "modules": modules, "checks": checks, "samples": samples, "with_jax": with_jax}


def medians(result):
    return {key: statistics.median(v) for key, v in result["cells"].items()}


# ---------------------------------------------------------------- report

ROWS = [("import", "`import numjax` / `import jax` (with `.numpy`)"),
        ("selu", "`jit(selu)`, 1M float32"),
        ("square_sum", "then `jit(sum(x*x))`, same process"),
        ("mlp_grad", "`jit(grad(loss))`, MLP 784-512-512-10, batch 128")]


def _ms(t):
    return "–" if t is None else f"{t * 1e3:.0f} ms" if t >= 0.01 else f"{t * 1e3:.1f} ms"


def _ratio(a, b):
    return "–" if a is None or b is None else f"{a / b:.2f}×"


def _target(timer, med):
    cold, warm, jax = (med.get((timer, m)) for m in ("numjax_cold", "numjax_warm", "jax"))
    out = []
    for (name, mode), (kind, bound) in TARGETS.items():
        if name != timer:
            continue
        value = {"cold": cold, "warm": warm, "numjax": cold}[mode]
        if kind == "ratio":
            ok = None if value is None or jax is None else value / jax <= bound
            text = f"{mode} ≤ {bound}× JAX"
        else:
            ok = None if value is None else value <= bound
            text = f"{mode} ≤ {bound * 1e3:.0f} ms" if name != "import" else f"≤ {bound * 1e3:.0f} ms"
        out.append(text + (" ?" if ok is None else " ✓" if ok else " ✗"))
    return "; ".join(out) or "–"


def report(result):
    med = medians(result)
    n = result["samples"]
    lines = [f"First call in a fresh process, median of {n} processes per cell "
             f"({platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
             + ("" if result["with_jax"] else ", jax not importable: no JAX column") + ")",
             "",
             "| first call in a fresh process | numjax, cold cache | numjax, warm cache | JAX (no persistent cache) "
             "| cold / JAX | warm / JAX | target (issue 9) |",
             "|---|---|---|---|---|---|---|"]
    for timer, label in ROWS:
        cold, warm, jax = (med.get((timer, m)) for m in ("numjax_cold", "numjax_warm", "jax"))
        if cold is None and jax is None:
            continue
        if timer == "import":
            warm = None  # a disk cache does not change the import
        lines.append(f"| {label} | {_ms(cold)} | {_ms(warm)} | {_ms(jax)} | {_ratio(cold, jax)} | "
                     f"{_ratio(warm, jax)} | {_target(timer, med)} |")
    warm_mods = [(p, mods) for (p, mode), mods in result["modules"].items() if mode == "numjax_warm"]
    if warm_mods:
        lines.append("")
        parts = []
        for program, mods in warm_mods:
            parts.append(f"{program}: numba in {sum(mods['numba'])}/{len(mods['numba'])}, "
                         f"llvmlite.binding in {sum(mods['llvmlite.binding'])}/{len(mods['llvmlite.binding'])}")
        lines.append("Warm-cache processes that imported Numba / llvmlite.binding (target: none): "
                     + "; ".join(parts) + ".")
    mismatch = []
    for name, by_mode in result["checks"].items():
        values = list(by_mode.values())
        if any(abs(v - values[0]) > 1e-3 * max(1.0, abs(values[0])) for v in values):
            mismatch.append(f"{name}: " + ", ".join(f"{m}={v:.6g}" for m, v in by_mode.items()))
    if mismatch:
        lines.append("")
        lines.append("Output checksums differ: " + "; ".join(mismatch))
    return "\n".join(lines)


def to_json(result):
    cells = {}
    for (timer, mode), values in result["cells"].items():
        cells.setdefault(timer, {})[mode] = {"median_s": statistics.median(values), "samples_s": values}
    modules = {}
    for (program, mode), mods in result["modules"].items():
        modules.setdefault(program, {})[mode] = {name: sum(v) for name, v in mods.items()}
    return {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": platform.machine(),
            "cores": os.cpu_count(), "python": platform.python_version(), "samples": result["samples"],
            "with_jax": result["with_jax"], "cells": cells,
            "modules_imported_count": modules, "checks": result["checks"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--samples", type=int, default=5)
    parser.add_argument("--programs", nargs="+", default=["import", "selu", "mlp_grad"],
                        choices=["import", "selu", "mlp_grad"])
    parser.add_argument("--no-jax", action="store_true", help="skip the JAX samples")
    parser.add_argument("--cold-template", metavar="DIR",
                        help="start each cold sample's cache from a copy of DIR instead of empty")
    parser.add_argument("--json", default=JSON_PATH, help="where to write the JSON (default: %(default)s)")
    parser.add_argument("-q", "--quiet", action="store_true")
    args = parser.parse_args()
    log = None if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    result = measure(args.programs, args.samples, with_jax=False if args.no_jax else None, log=log,
                     cold_template=args.cold_template)
    print(report(result))
    with open(args.json, "w") as f:
        json.dump(to_json(result), f, indent=1)


if __name__ == "__main__":
    main()

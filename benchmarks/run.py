"""numjax benchmarks (issue 14): medians of repeated runs in one process, numjax interleaved with
numpy, a hand-written Numba baseline, real JAX (when importable) and a copy of the same bytes.

    python benchmarks/run.py                       # every row; prints a markdown table
    python benchmarks/run.py --quick               # fewer, shorter batches
    python benchmarks/run.py --only 'softmax|selu' # rows whose "group/name" matches the regex
    python benchmarks/run.py --list                # the rows' "group/name"
    python benchmarks/run.py --threads 1           # 1-thread figures (see below)
    python benchmarks/run.py --json out.json       # also write the medians (benchmarks/stability.py reads it)

Columns.  Every column of a row runs the same program; the columns take turns batch by batch
(REPEAT rounds of one batch per column), so load on the machine spreads over all of them.  Each
cell is the median seconds per call.  "copy" is `np.copyto` between two preallocated buffers of
(bytes the op reads + bytes it writes) / 2, i.e. a copy that moves as many bytes as the op must;
"numjax/copy" is how far numjax is from that memory bound.  Before timing, every column's result
is compared with the reference (numpy's, else the Numba baseline's, else JAX's) within the row's
tolerance; a column whose result differs is not timed ("wrong" in the table, details on stderr),
so a row never times a wrong program.

Threads.  `--threads N` sets NUMJAX_NUM_THREADS, NUMJAX_BLAS_THREADS and OMP/OPENBLAS/MKL_NUM_THREADS
to N before anything is imported, adds --xla_cpu_multi_thread_eigen=false to XLA_FLAGS when N is 1,
and (unless --no-pin) pins the process to N of its CPUs with sched_setaffinity: that is the
only setting that limits every XLA CPU thread pool in jax 0.10.2.  The numpy and Numba columns
and the copy are single-threaded anyway.

Rows with no numpy, Numba or JAX column (CNN without jax) are checked against numjax without jit.
The hand-written Numba and numpy baselines are in baselines.py.  The first-call rows (fresh
processes, cold and warm disk cache, against JAX's first call) come from first_call.py, which has
the details and more rows.  Five fresh processes of a few rows: benchmarks/stability.py.
"""
import argparse
import os
import sys


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds of short batches instead of 7")
    parser.add_argument("--only", metavar="REGEX", help="run the rows whose 'group/name' matches (case-insensitive)")
    parser.add_argument("--list", action="store_true", help="print the rows' 'group/name' and exit")
    parser.add_argument("--threads", type=int, metavar="N", help="limit numjax, BLAS and XLA to N threads")
    parser.add_argument("--no-pin", action="store_true", help="with --threads: do not pin the process to N CPUs")
    parser.add_argument("--no-jax", action="store_true", help="leave the JAX column out even if jax imports")
    parser.add_argument("--json", metavar="PATH", help="also write the rows' medians as JSON")
    return parser.parse_args(argv)


def limit_threads(n, pin):
    """Must run before numpy, numjax or jax is imported (their thread pools read these once)."""
    for var in ("NUMJAX_NUM_THREADS", "NUMJAX_BLAS_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                "MKL_NUM_THREADS"):
        os.environ[var] = str(n)
    if n == 1:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false").strip()
    if pin and hasattr(os, "sched_setaffinity"):
        cpus = sorted(os.sched_getaffinity(0))
        if n < len(cpus):
            os.sched_setaffinity(0, cpus[:n])


ARGS = parse_args() if __name__ == "__main__" else parse_args([])
if ARGS.threads:
    limit_threads(ARGS.threads, not ARGS.no_pin)
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import platform          # noqa: E402  (the thread settings above come first)
import re                # noqa: E402
import statistics        # noqa: E402
import subprocess        # noqa: E402
import textwrap          # noqa: E402
import time              # noqa: E402
import traceback         # noqa: E402
import json              # noqa: E402

import numpy as np       # noqa: E402

real_jax = real_jnp = None
if not ARGS.no_jax:
    try:
        import jax as real_jax
        import jax.numpy as real_jnp
    except ImportError:
        real_jax = real_jnp = None

import numba             # noqa: E402

import numjax            # noqa: E402
import numjax.numpy as jnp  # noqa: E402

import first_call        # noqa: E402
from first_call import chain, mlp_data, mlp_loss, selu, softmax  # noqa: E402
import baselines as hand  # noqa: E402  (the hand-written Numba and numpy baselines)

REPEAT = 7          # rounds; each round runs one batch of every column
BATCH_S = 0.05      # target seconds per batch


# ---------------------------------------------------------------- timing

def calls_per_batch(fn):
    t = time.perf_counter()
    fn()
    one = time.perf_counter() - t
    return max(1, min(10000, int(BATCH_S / max(one, 1e-7))))


def interleaved_medians(columns):
    """{column: fn} -> {column: median seconds per call}; the columns take turns batch by batch."""
    for fn in columns.values():
        fn()                                        # warm-up (compiles, faults pages in)
    numbers = {name: calls_per_batch(fn) for name, fn in columns.items()}
    times = {name: [] for name in columns}
    for _ in range(REPEAT):
        for name, fn in columns.items():
            n = numbers[name]
            t = time.perf_counter()
            for _ in range(n):
                fn()
            times[name].append((time.perf_counter() - t) / n)
    return {name: statistics.median(ts) for name, ts in times.items()}


def copy_bound(read_bytes, write_bytes):
    """A copy between preallocated buffers that moves as many bytes as the op reads and writes."""
    n = max(1, (read_bytes + write_bytes) // 8)     # float32 elements per buffer
    src = np.ones(n, np.float32)
    dst = np.zeros(n, np.float32)
    return lambda: np.copyto(dst, src)


# ---------------------------------------------------------------- checking

def leaves(tree):
    """Flatten lists/tuples/dicts (dict keys sorted, like tree_util) to a list of numpy arrays."""
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in leaves(item)]
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in leaves(tree[key])]
    return [np.asarray(tree)]


def mismatch(result, reference, rtol, atol):
    """None when ``result`` matches ``reference`` within tolerance, else a short description."""
    got, want = leaves(result), leaves(reference)
    if len(got) != len(want):
        return f"{len(got)} outputs, expected {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:
            return f"output {k}: shape {g.shape}, expected {w.shape}"
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        bad = ~np.isclose(g64, w64, rtol=rtol, atol=atol, equal_nan=True)
        if bad.any():
            i = np.unravel_index(np.argmax(bad), bad.shape) if bad.ndim else ()
            return (f"output {k}: {int(bad.sum())} of {bad.size} elements differ "
                    f"(at {tuple(int(j) for j in i)}: {g64[i]!r} vs {w64[i]!r}; rtol {rtol}, atol {atol})")
    return None


# ---------------------------------------------------------------- rows

COLUMNS = ("numjax", "numpy", "numba", "jax", "copy")
ROWS = []           # (group, name, builder); builder(rng) -> dict (see run_row)


def row(group, name):
    def register(builder):
        ROWS.append((group, name, builder))
        return builder
    return register


def same_program(program, host_args, numba_fn=None, rtol=1e-4, atol=1e-6, copy=True):
    """Columns of one program written against a numpy-like module: program(np_, *args)."""
    host_args = [np.asarray(a) for a in host_args]
    f = numjax.jit(lambda *a: program(jnp, *a))
    nj_args = [jnp.asarray(a) for a in host_args]
    cols = {"numjax": lambda: numjax.block_until_ready(f(*nj_args)),
            "numpy": lambda: program(np, *host_args),
            "numba": numba_fn and (lambda: numba_fn(*host_args))}
    if real_jax is not None:
        g = real_jax.jit(lambda *a: program(real_jnp, *a))
        jx_args = [real_jnp.asarray(a) for a in host_args]
        cols["jax"] = lambda: real_jax.block_until_ready(g(*jx_args))
    if copy:
        out_bytes = sum(leaf.nbytes for leaf in leaves(program(np, *host_args)))
        cols["copy"] = copy_bound(sum(a.nbytes for a in host_args), out_bytes)
    return {"columns": cols, "rtol": rtol, "atol": atol}


def check_against(group, name, spec, results, out):
    """Compare each column's result with the reference column's; mark those that differ "wrong"."""
    ref_col = next((k for k in ("numpy", "numba", "jax") if k in results), None)
    if ref_col is None and "reference" in spec:          # no other library: an untimed reference
        ref_col, results = spec["reference"][0], dict(results, **{spec["reference"][0]: spec["reference"][1]()})
    if ref_col is None or "numjax" not in results:
        return
    for k in results:
        bad = k != ref_col and mismatch(results[k], results[ref_col], spec["rtol"], spec["atol"])
        if bad:
            print(f"[{group}/{name}] {k} differs from {ref_col}: {bad}", file=sys.stderr)
            out[k] = "wrong"
            out["notes"].append(f"{k} ≠ {ref_col}")
    out["check"] = "✗" if out.get("numjax") == "wrong" else f"✓ vs {ref_col}"


def run_row(group, name, builder, rng):
    """Build, check and time one row; returns the row's dict for the report."""
    out = {"group": group, "name": name, "check": "–", "notes": []}
    try:
        spec = builder(rng)
    except Exception as exc:                     # a row that cannot be built must not stop the others
        traceback.print_exc()
        out["check"] = f"error: {type(exc).__name__}"
        return out
    if "times" in spec:                          # measured elsewhere (fresh processes)
        out.update(spec["times"])
        out["check"] = spec.get("check", "–")
        return out
    cols = {k: fn for k, fn in spec["columns"].items() if fn is not None}
    results = {}
    for k, fn in cols.items():
        if k == "copy":
            continue
        try:
            results[k] = fn()
        except Exception as exc:
            print(f"[{group}/{name}] {k} raised:", file=sys.stderr)
            traceback.print_exc()
            out["notes"].append(f"{k}: {type(exc).__name__}")
            out[k] = "error"
    check_against(group, name, spec, results, out)
    timed = {k: fn for k, fn in cols.items() if k == "copy" or (k in results and k not in out)}
    out.update(interleaved_medians(timed) if timed else {})
    return out


# ---------------------------------------------------------------- programs (np_: numpy, numjax.numpy or jax.numpy)

def log_softmax(np_, x, axis=-1):
    s = x - np_.max(x, axis=axis, keepdims=True)
    return s - np_.log(np_.sum(np_.exp(s), axis=axis, keepdims=True))


def logsumexp(np_, x, axis=-1):
    m = np_.max(x, axis=axis, keepdims=True)
    return np_.log(np_.sum(np_.exp(x - m), axis=axis)) + np_.squeeze(m, axis)


def layer_norm(np_, x, scale, shift, eps=1e-5):
    mean = np_.mean(x, axis=-1, keepdims=True)
    var = np_.var(x, axis=-1, keepdims=True)
    return (x - mean) / np_.sqrt(var + eps) * scale + shift


# ---------------------------------------------------------------- elementwise and reduction rows

def _elementwise(program, numba_fn, n):
    def build(rng):
        return same_program(program, [rng.standard_normal(n).astype(np.float32)], numba_fn, rtol=2e-6, atol=1e-6)
    return build


for _program, _numba_fn, _label in ((selu, hand.selu_numba, "selu"), (chain, hand.chain_numba, "8-op chain")):
    for _n in (1_000_000, 10_000_000):
        row("elementwise", f"{_label} {_n // 1_000_000}M f32")(_elementwise(_program, _numba_fn, _n))

ROW_SHAPE = (4096, 1024)


def _reduction(program, numba_fn, rtol=1e-4, atol=1e-5, extra=()):
    def build(rng):
        x = rng.standard_normal(ROW_SHAPE).astype(np.float32)
        args = [x] + [a(rng) for a in extra]
        return same_program(program, args, numba_fn, rtol=rtol, atol=atol)
    return build


def _vector(rng):
    return rng.standard_normal(ROW_SHAPE[1]).astype(np.float32)


def softmax_axis0(np_, x):
    e = np_.exp(x - np_.max(x, axis=0, keepdims=True))
    return e / np_.sum(e, axis=0, keepdims=True)


def along(reduction, axis):
    """program(np_, x) reducing over ``axis``: ``np_.var`` etc. by name, or a program taking ``axis=``."""
    if isinstance(reduction, str):
        return lambda np_, x: getattr(np_, reduction)(x, axis=axis)
    return lambda np_, x: reduction(np_, x, axis=axis)


SUM_TOL = {"rtol": 1e-3, "atol": 1e-2}     # float32 sums of 1024 or 4096 terms, in any order
_REDUCTIONS = [
    ("row softmax 4096x1024", softmax, hand.softmax_numba, {}),
    ("softmax 4096x1024 over axis 0", softmax_axis0, hand.softmax_first_numba, {}),
    ("log_softmax 4096x1024 over the last axis", log_softmax, hand.log_softmax_numba, {}),
    ("layer norm 4096x1024 over the last axis", layer_norm, hand.layer_norm_numba,
     {"extra": (_vector, _vector), "rtol": 1e-3, "atol": 1e-4}),
    ("logsumexp 4096x1024 over the last axis", logsumexp, hand.logsumexp_last_numba, {}),
    ("logsumexp 4096x1024 over axis 0", along(logsumexp, 0), hand.logsumexp_first_numba, {}),
    ("argmax 4096x1024 over the last axis", along("argmax", -1), hand.argmax_last_numba, {"atol": 0}),
    ("argmax 4096x1024 over axis 0", along("argmax", 0), hand.argmax_first_numba, {"atol": 0}),
    ("variance 4096x1024 over the last axis", along("var", -1), hand.var_last_numba, {"rtol": 1e-3}),
    ("variance 4096x1024 over axis 0", along("var", 0), hand.var_first_numba, {"rtol": 1e-3}),
    ("sum 4096x1024 over the last axis", along("sum", -1), hand.sum_last_numba, SUM_TOL),
    ("sum 4096x1024 over axis 0", along("sum", 0), hand.sum_first_numba, SUM_TOL),
]


for _name, _program, _numba_fn, _kw in _REDUCTIONS:
    row("reduction", _name)(_reduction(_program, _numba_fn, **_kw))


# ---------------------------------------------------------------- dispatch (per-call overhead)

@row("dispatch", "cached jit call, scalar x*2+1")
def _cached_scalar(rng):
    f = numjax.jit(lambda v: v * 2 + 1)
    x = jnp.float32(2.0)
    cols = {"numjax": lambda: f(x), "numpy": lambda: np.float32(2.0) * 2 + 1}
    if real_jax is not None:
        g, y = real_jax.jit(lambda v: v * 2 + 1), real_jnp.float32(2.0)
        cols["jax"] = lambda: g(y)
    return {"columns": cols, "rtol": 1e-6, "atol": 0}


@row("dispatch", "cached jit call, one f32[16] array, x*2+1")
def _cached_array(rng):
    host = rng.standard_normal(16).astype(np.float32)
    f, x = numjax.jit(lambda v: v * 2 + 1), jnp.asarray(host)
    cols = {"numjax": lambda: f(x), "numpy": lambda: host * 2 + 1}
    if real_jax is not None:
        g, y = real_jax.jit(lambda v: v * 2 + 1), real_jnp.asarray(host)
        cols["jax"] = lambda: g(y)
    return {"columns": cols, "rtol": 1e-6, "atol": 0}


@row("dispatch", "cached jit call, numpy f32[1000] and f64[1000] arguments, x*2+y")
def _cached_numpy_args(rng):
    # A training loop feeding numpy batches: each call converts (f64 -> f32 without x64)
    # and must not alias the caller's arrays.
    host, host64 = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000)
    f = numjax.jit(lambda v, w: v * 2 + w)
    cols = {"numjax": lambda: f(host, host64),
            "numpy": lambda: host * 2 + host64.astype(np.float32)}
    if real_jax is not None:
        g = real_jax.jit(lambda v, w: v * 2 + w)
        cols["jax"] = lambda: g(host, host64)
    return {"columns": cols, "rtol": 1e-6, "atol": 0}


def _eager(op, host):
    def build(rng):
        x = jnp.asarray(host)
        cols = {"numjax": lambda: op(jnp, x), "numpy": lambda: op(np, host)}
        if real_jax is not None:
            y = real_jnp.asarray(host)
            cols["jax"] = lambda: op(real_jnp, y)
        return {"columns": cols, "rtol": 2e-6, "atol": 0}
    return build


row("dispatch", "eager op, scalar x*2.0")(_eager(lambda np_, v: v * 2.0, np.float32(2.0)))
row("dispatch", "eager op, jnp.exp scalar")(_eager(lambda np_, v: np_.exp(v), np.float32(2.0)))
row("dispatch", "eager jnp.exp(v) * 2.0, v f32[1000]")(
    _eager(lambda np_, v: np_.exp(v) * 2.0, np.random.default_rng(1).standard_normal(1000).astype(np.float32)))
row("dispatch", "eager jnp.sum(v), v f32[1000]")(
    _eager(lambda np_, v: np_.sum(v), np.random.default_rng(1).standard_normal(1000).astype(np.float32)))


def _eager_where(rng):
    # jnp.where(c, v, w) with the three operands made beforehand: the select alone
    hosts = (rng.standard_normal(1000) > 0, *rng.standard_normal((2, 1000)).astype(np.float32))
    cols = {"numjax": (lambda c, v, w: lambda: jnp.where(c, v, w))(*map(jnp.asarray, hosts)),
            "numpy": lambda: np.where(*hosts)}
    if real_jax is not None:
        cols["jax"] = (lambda c, v, w: lambda: real_jnp.where(c, v, w))(*map(real_jnp.asarray, hosts))
    return {"columns": cols, "rtol": 0, "atol": 0}


row("dispatch", "eager jnp.where(c, v, w), v w f32[1000]")(_eager_where)


@row("dispatch", "first call at a new shape, same rank")
def _new_shape(rng):
    f = numjax.jit(lambda v: selu(jnp, v))
    f(jnp.ones(1000, jnp.float32)).block_until_ready()
    times = []
    for n in range(1001, 1001 + REPEAT):
        x = jnp.ones(n, jnp.float32)
        t = time.perf_counter()
        y = f(x).block_until_ready()
        times.append(time.perf_counter() - t)
    ok = mismatch(y, selu(np, np.ones(n, np.float32)), 2e-6, 0) is None
    return {"times": {"numjax": statistics.median(times)}, "check": "✓ vs numpy" if ok else "✗"}


# ---------------------------------------------------------------- loops (control flow compiled as one kernel)

def newton_sqrt(np_, lax_, a):
    """Newton's iteration for sqrt(a) until it stops changing (at most 50 steps)."""
    def cond(c):
        y, prev, i = c
        return (y != prev) & (i < 50)

    def body(c):
        y, _, i = c
        return 0.5 * (y + a / y), y, i + 1
    return lax_.while_loop(cond, body, (a, a + 1.0, 0))[0]


def contraction(np_, lax_, x):
    return lax_.fori_loop(0, 1000, lambda i, v: 0.5 * np_.cos(v) + 0.25 * v, x)


def rnn(np_, lax_, W, U, xs):
    def step(h, x):
        h = np_.tanh(W @ h + U @ x)
        return h, h.sum()
    return lax_.scan(step, np_.zeros(W.shape[0], np_.float32), xs)


def loop_program(program, host_args, python_fn, numba_fn, rtol):
    """Columns of a lax control-flow program: numpy/Numba run the same loop written out."""
    host_args = [np.asarray(a) for a in host_args]
    f = numjax.jit(lambda *a: program(jnp, numjax.lax, *a))
    nj_args = [jnp.asarray(a) for a in host_args]
    py_args = [a[()] if a.ndim == 0 else a for a in host_args]    # numpy scalars, like the loop's carry
    cols = {"numjax": lambda: numjax.block_until_ready(f(*nj_args)),
            "numpy": lambda: python_fn(*py_args), "numba": lambda: numba_fn(*py_args)}
    if real_jax is not None:
        g = real_jax.jit(lambda *a: program(real_jnp, real_jax.lax, *a))
        jx_args = [real_jnp.asarray(a) for a in host_args]
        cols["jax"] = lambda: real_jax.block_until_ready(g(*jx_args))
    return {"columns": cols, "rtol": rtol, "atol": 1e-6}


@row("loops", "scan RNN step, hidden 64, 1000 steps")
def _scan_rnn(rng):
    W = (rng.standard_normal((64, 64)) * 0.1).astype(np.float32)
    U = (rng.standard_normal((64, 32)) * 0.1).astype(np.float32)
    xs = rng.standard_normal((1000, 32)).astype(np.float32)
    return loop_program(rnn, [W, U, xs], hand.rnn_python, hand.rnn_numba, rtol=1e-3)


@row("loops", "while_loop Newton sqrt, f32 scalar")
def _newton(rng):
    return loop_program(newton_sqrt, [np.float32(1e6)], hand.newton_sqrt_python, hand.newton_sqrt_numba, rtol=1e-6)


@row("loops", "fori_loop 1000 steps, v = 0.5*cos(v) + 0.25*v, f32[64]")
def _fori(rng):
    return loop_program(contraction, [rng.standard_normal(64).astype(np.float32)], hand.contraction_python,
                        hand.contraction_numba, rtol=1e-5)


# ---------------------------------------------------------------- linear algebra

@row("linalg", "matmul 1024^2 f32")
def _matmul(rng):
    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    return same_program(lambda np_, p, q: p @ q, [a, a], rtol=1e-3, atol=1e-3, copy=False)


def _batch_spd(rng, shape=(64, 32, 32)):
    a = rng.standard_normal(shape).astype(np.float32)
    return (a @ np.swapaxes(a, -1, -2) / shape[-1] + np.eye(shape[-1], dtype=np.float32)).astype(np.float32)


@row("linalg", "batched matmul (64,32,32) f32")
def _bmm(rng):
    a, b = (rng.standard_normal((64, 32, 32)).astype(np.float32) for _ in range(2))
    return same_program(lambda np_, p, q: p @ q, [a, b], rtol=1e-4, atol=1e-4, copy=False)


@row("linalg", "batched solve (64,32,32) f32")
def _solve(rng):
    a, b = _batch_spd(rng), rng.standard_normal((64, 32, 32)).astype(np.float32)
    return same_program(lambda np_, p, q: np_.linalg.solve(p, q), [a, b], rtol=1e-3, atol=1e-3, copy=False)


@row("linalg", "batched cholesky (64,32,32) f32")
def _cholesky(rng):
    return same_program(lambda np_, p: np_.linalg.cholesky(p), [_batch_spd(rng)], rtol=1e-3, atol=1e-4, copy=False)


# ---------------------------------------------------------------- models: autodiff, vmap

def grad_columns(loss, host_args, numpy_fn, rtol, atol, lax_arg=False, vmapped=None):
    """jit(grad(loss)) (or jit(vmap(grad(loss), in_axes))) columns; numpy_fn is a hand-written gradient."""
    def make(lib, np_, jit=True):
        body = (lambda *a: loss(np_, lib.lax, *a)) if lax_arg else (lambda *a: loss(np_, *a))
        g = lib.grad(body)
        g = lib.vmap(g, in_axes=vmapped) if vmapped else g
        return lib.jit(g) if jit else g
    step = make(numjax, jnp)
    nj_args = numjax.tree_util.tree_map(jnp.asarray, host_args)
    cols = {"numjax": lambda: numjax.block_until_ready(step(*nj_args)),
            "numpy": numpy_fn and (lambda: numpy_fn(*host_args))}
    if real_jax is not None:
        jstep = make(real_jax, real_jnp)
        jx_args = real_jax.tree_util.tree_map(real_jnp.asarray, host_args)
        cols["jax"] = lambda: real_jax.block_until_ready(jstep(*jx_args))
    eager = make(numjax, jnp, jit=False)    # op by op: another path through numjax, for rows with no other
    return {"columns": cols, "rtol": rtol, "atol": atol, "reference": ("numjax without jit", lambda: eager(*nj_args))}


@row("model", "MLP 784-512-512-10 b128 jit(grad(loss))")
def _mlp(rng):
    params, x, y = mlp_data(rng)
    return grad_columns(mlp_loss, [params, x, y], hand.mlp_grad_numpy, rtol=1e-3, atol=1e-6)


def example_loss(np_, params, x, y):
    """Squared error of a 32-64-1 tanh MLP on ONE example (x: f32[32], y: scalar)."""
    (W1, b1), (W2, b2) = params
    out = np_.tanh(x @ W1 + b1) @ W2 + b2
    return (out[0] - y) ** 2


@row("model", "per-example grads jit(vmap(grad)) MLP 32-64-1, batch 128")
def _per_example(rng):
    params = first_call.mlp_params(rng, [32, 64, 1])
    params = [(W, (rng.standard_normal(b.shape) * 0.1).astype(np.float32)) for W, b in params]
    x = rng.standard_normal((128, 32)).astype(np.float32)
    y = rng.standard_normal(128).astype(np.float32)
    return grad_columns(example_loss, [params, x, y], hand.per_example_grads_numpy, rtol=1e-3, atol=1e-5,
                        vmapped=(None, 0, 0))


def cnn_data(rng, batch=32):
    params = {"w1": (rng.standard_normal((3, 3, 1, 32)) / 3).astype(np.float32),
              "w2": (rng.standard_normal((3, 3, 32, 64)) / 17).astype(np.float32),
              "w3": (rng.standard_normal((14 * 14 * 64, 10)) / 112).astype(np.float32)}
    x = rng.standard_normal((batch, 28, 28, 1)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
    return params, x, y


def cnn_loss(np_, lax_, p, x, y):
    """conv 3x3x32 -> relu -> avgpool 2x2 -> conv 3x3x64 -> relu -> dense 10, NHWC."""
    dn = ("NHWC", "HWIO", "NHWC")
    h = np_.maximum(lax_.conv_general_dilated(x, p["w1"], (1, 1), "SAME", dimension_numbers=dn), 0.0)
    h = lax_.reduce_window(h, 0.0, lax_.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") * 0.25
    h = np_.maximum(lax_.conv_general_dilated(h, p["w2"], (1, 1), "SAME", dimension_numbers=dn), 0.0)
    logits = h.reshape((h.shape[0], -1)) @ p["w3"]
    logp = logits - np_.log(np_.sum(np_.exp(logits - logits.max(1, keepdims=True)), 1, keepdims=True)) \
        - logits.max(1, keepdims=True)
    return -np_.mean(np_.sum(logp * y, 1))


@row("model", "CNN b32 28x28 conv32-pool-conv64-dense jit(grad(loss))")
def _cnn(rng):
    """im2col + BLAS convolutions, against JAX's (XLA's); checked against JAX when it imports."""
    params, x, y = cnn_data(rng)
    return grad_columns(cnn_loss, [params, x, y], None, rtol=1e-3, atol=1e-5, lax_arg=True)


@row("model", "jit(vmap(apply_matrix)) 150x100, batch 10")
def _vmap_matrix(rng):
    mat = rng.standard_normal((150, 100)).astype(np.float32)
    batch = rng.standard_normal((10, 100)).astype(np.float32)
    f = numjax.jit(numjax.vmap(lambda v: jnp.dot(jnp.asarray(mat), v)))
    nb = jnp.asarray(batch)
    cols = {"numjax": lambda: f(nb).block_until_ready(), "numpy": lambda: np.dot(batch, mat.T)}
    if real_jax is not None:
        jm = real_jnp.asarray(mat)
        g = real_jax.jit(real_jax.vmap(lambda v: real_jnp.dot(jm, v)))
        jb = real_jnp.asarray(batch)
        cols["jax"] = lambda: g(jb).block_until_ready()
    return {"columns": cols, "rtol": 1e-4, "atol": 1e-4}


# ---------------------------------------------------------------- fresh processes

_PMAP = textwrap.dedent("""
    import time, statistics, numpy as np, numjax, numjax.numpy as jnp
    def work(x):
        for _ in range(20):
            x = jnp.sin(x) * 1.0001 + jnp.cos(x) * 0.5
        return x.sum()
    n = numjax.local_device_count()
    xs = jnp.asarray(np.random.default_rng(0).standard_normal((2, 2_000_000)).astype(np.float32))
    if n == 2:
        f = numjax.pmap(work)
        call = lambda: numjax.block_until_ready(f(xs))
    else:
        f = numjax.jit(work)
        call = lambda: [numjax.block_until_ready(f(xs[i])) for i in range(2)]
    call()
    ts = []
    for _ in range(5):
        t = time.perf_counter(); call(); ts.append(time.perf_counter() - t)
    print(statistics.median(ts))
""")


@row("parallel", "2 shards of a compute-bound fn: jit on 1 device (numpy col) vs pmap on 2")
def _pmap(rng):
    times = {}
    for n in (1, 2):
        env = dict(os.environ, NUMJAX_NUM_CPU_DEVICES=str(n), NUMJAX_PARALLEL_THRESHOLD="0")
        out = subprocess.run([sys.executable, "-c", _PMAP], env=env, capture_output=True, text=True, check=True)
        times[n] = float(out.stdout.split()[-1])
    return {"times": {"numjax": times[2], "numpy": times[1]}}


_FIRST_CALL = {}


def _first_call_result():
    """first_call.measure's result, run once for all the first-call rows (1 or 3 processes per cell)."""
    if not _FIRST_CALL:
        samples = 1 if REPEAT < 7 else 3
        _FIRST_CALL.update(first_call.measure(samples=samples, with_jax=real_jax is not None))
    return _FIRST_CALL


def _first_call_check(result, timer, mode):
    """The child processes' output checksums: numjax's (this mode) against JAX's, else the other cache's."""
    by_mode = result["checks"].get(timer)
    if not by_mode or mode not in by_mode:
        return "–"
    ref = "jax" if "jax" in by_mode else next((m for m in by_mode if m != mode), None)
    if ref is None:
        return "–"
    a, b = by_mode[mode], by_mode[ref]
    ok = abs(a - b) <= 1e-3 * max(1.0, abs(b))
    return f"✓ checksum vs {ref}" if ok else f"✗ checksum {a:.6g} vs {ref} {b:.6g}"


def _first_call_row(timer, mode, name):
    def build(rng):
        result = _first_call_result()
        med = first_call.medians(result)
        return {"times": {"numjax": med[(timer, mode)], "jax": med.get((timer, "jax"))},
                "check": _first_call_check(result, timer, mode)}
    row("first-call", name)(build)


for _timer, _label in (("selu", "first jit(selu) 1M f32 call"), ("square_sum", "then first jit(sum(x*x))"),
                       ("mlp_grad", "first jit(grad(MLP)) call")):
    for _mode, _cache in (("numjax_cold", "cold"), ("numjax_warm", "warm")):
        _first_call_row(_timer, _mode, f"{_label}, fresh process, {_cache} cache (after import; JAX: its first call)")
_first_call_row("import", "numjax_cold", "import numjax (JAX: import jax)")


# ---------------------------------------------------------------- report

def fmt(t):
    if t is None:
        return "–"
    if isinstance(t, str):
        return t
    if t < 1e-3:
        return f"{t * 1e6:.2f} µs"
    return f"{t * 1e3:.2f} ms" if t < 1 else f"{t:.2f} s"


def ratio(a, b):
    ok = isinstance(a, float) and isinstance(b, float)
    return f"{a / b:.2f}" if ok else "–"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def header():
    threads = os.environ.get("NUMJAX_NUM_THREADS", "all")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (f"Machine: {cpu_model()}, {os.cpu_count()} cores "
            f"({cpus} usable by this process; numjax threads: {threads}), Python {platform.python_version()}, "
            f"numba {numba.__version__}, numpy {np.__version__}"
            + (f", jax {real_jax.__version__}" if real_jax else ", jax not imported")
            + f"; medians of {REPEAT} interleaved batches")


def report(rows):
    lines = [header(), "",
             "| benchmark | numjax | numpy | numba (hand-written) | JAX jit | copy bound | numjax/JAX "
             "| numjax/copy | numjax/numpy | check |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        nj = r.get("numjax")
        cells = [fmt(r.get(k)) for k in COLUMNS]
        check = r["check"] + (f" ({'; '.join(r['notes'])})" if r["notes"] else "")
        lines.append(f"| {r['name']} | " + " | ".join(cells) + f" | {ratio(nj, r.get('jax'))} | "
                     f"{ratio(nj, r.get('copy'))} | {ratio(nj, r.get('numpy'))} | {check} |")
    return "\n".join(lines)


def selected(pattern):
    rx = re.compile(pattern, re.I) if pattern else None
    return [(g, n, b) for g, n, b in ROWS if rx is None or rx.search(f"{g}/{n}")]


def main():
    global REPEAT, BATCH_S
    if ARGS.quick:
        REPEAT, BATCH_S = 3, 0.02
    todo = selected(ARGS.only)
    if ARGS.list:
        print("\n".join(f"{g}/{n}" for g, n, _ in todo))
        return
    if not todo:
        sys.exit(f"--only {ARGS.only!r} matches no row; see --list")
    rows = []
    for group, name, builder in todo:
        print(f"[{group}/{name}]", file=sys.stderr, flush=True)
        rows.append(run_row(group, name, builder, np.random.default_rng(0)))
    print(report(rows))
    if ARGS.json:
        with open(ARGS.json, "w") as f:
            json.dump({"header": header(), "threads": ARGS.threads, "repeat": REPEAT, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

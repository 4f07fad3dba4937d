"""numjax benchmarks: medians of repeated runs, in one process, against numpy,
hand-written Numba and (when importable) real JAX.

    python benchmarks/run.py            # prints a markdown table
    python benchmarks/run.py --quick    # fewer repeats

The first-call rows (fresh processes, cold and warm disk cache, against JAX's
first call) come from first_call.py, which has the details and more rows.
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import textwrap
import time

import numpy as np

try:
    import jax as real_jax
    import jax.numpy as real_jnp
except ImportError:
    real_jax = None

import numba

import numjax
import numjax.numpy as jnp

import first_call
from first_call import chain, mlp_data, mlp_loss, selu, softmax

REPEAT = 7


def median_time(fn, number=None):
    """Median seconds per call over REPEAT batches, after one warm-up call."""
    fn()
    if number is None:
        t = time.perf_counter()
        fn()
        one = time.perf_counter() - t
        number = max(1, min(10000, int(0.05 / max(one, 1e-7))))
    times = []
    for _ in range(REPEAT):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t) / number)
    return statistics.median(times)


# ---------------------------------------------------------------- programs

@numba.njit(cache=True)
def selu_numba(x):
    out = np.empty_like(x)
    for i in range(x.size):
        v = x[i]
        out[i] = np.float32(1.05) * (v if v > 0 else np.float32(1.67) * np.exp(v) - np.float32(1.67))
    return out


@numba.njit(cache=True)
def chain_numba(x):
    out = np.empty_like(x)
    for i in range(x.size):
        v = np.sin(x[i]) * np.float32(0.5) + np.float32(0.25)
        out[i] = np.cos(np.log1p(np.tanh(np.exp(v)))) * np.float32(2.0) - np.float32(1.0)
    return out


@numba.njit(cache=True)
def softmax_numba(x):
    out = np.empty_like(x)
    for r in range(x.shape[0]):
        m = x[r, 0]
        for c in range(x.shape[1]):
            m = max(m, x[r, c])
        s = np.float32(0)
        for c in range(x.shape[1]):
            e = np.exp(x[r, c] - m)
            out[r, c] = e
            s += e
        for c in range(x.shape[1]):
            out[r, c] /= s
    return out


# ---------------------------------------------------------------- rows

def compare(name, numjax_fn, numpy_fn, numba_fn, jax_fn, args, jax_args):
    row = {"name": name}
    row["numjax"] = median_time(lambda: numjax_fn(*args).block_until_ready())
    row["numpy"] = median_time(lambda: numpy_fn(*[np.asarray(a) for a in args])) if numpy_fn else None
    row["numba"] = median_time(lambda: numba_fn(*[np.asarray(a) for a in args])) if numba_fn else None
    if real_jax is not None and jax_fn is not None:
        row["jax"] = median_time(lambda: jax_fn(*jax_args).block_until_ready())
    else:
        row["jax"] = None
    return row


def elementwise_rows(rng):
    rows = []
    for n in (1_000_000, 10_000_000):
        x = rng.standard_normal(n).astype(np.float32)
        rows.append(compare(f"selu {n // 1_000_000}M f32", numjax.jit(lambda v: selu(jnp, v)),
                            lambda v: selu(np, v), selu_numba,
                            real_jax and real_jax.jit(lambda v: selu(real_jnp, v)),
                            [jnp.asarray(x)], [real_jax and real_jnp.asarray(x)]))
    x = rng.standard_normal(1_000_000).astype(np.float32)
    rows.append(compare("8-op chain 1M f32", numjax.jit(lambda v: chain(jnp, v)),
                        lambda v: chain(np, v), chain_numba,
                        real_jax and real_jax.jit(lambda v: chain(real_jnp, v)),
                        [jnp.asarray(x)], [real_jax and real_jnp.asarray(x)]))
    x = rng.standard_normal((4096, 1024)).astype(np.float32)
    rows.append(compare("row softmax 4096x1024", numjax.jit(lambda v: softmax(jnp, v)),
                        lambda v: softmax(np, v), softmax_numba,
                        real_jax and real_jax.jit(lambda v: softmax(real_jnp, v)),
                        [jnp.asarray(x)], [real_jax and real_jnp.asarray(x)]))
    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    rows.append(compare("matmul 1024^2 f32", numjax.jit(lambda p, q: p @ q), lambda p, q: p @ q, None,
                        real_jax and real_jax.jit(lambda p, q: p @ q),
                        [jnp.asarray(a), jnp.asarray(a)],
                        [real_jax and real_jnp.asarray(a), real_jax and real_jnp.asarray(a)]))
    return rows


def overhead_rows():
    rows = []
    x = jnp.float32(2.0)
    f = numjax.jit(lambda v: v * 2 + 1)
    row = {"name": "cached jit call, scalar x*2+1", "numjax": median_time(lambda: f(x))}
    row["numpy"] = median_time(lambda: np.float32(2.0) * 2 + 1)
    row["numba"] = None
    if real_jax is not None:
        g = real_jax.jit(lambda v: v * 2 + 1)
        y = real_jnp.float32(2.0)
        row["jax"] = median_time(lambda: g(y))
    else:
        row["jax"] = None
    rows.append(row)
    row = {"name": "eager op, scalar x*2.0", "numjax": median_time(lambda: x * 2.0),
           "numpy": median_time(lambda: np.float32(2.0) * 2.0), "numba": None,
           "jax": median_time(lambda: y * 2.0) if real_jax is not None else None}
    rows.append(row)
    row = {"name": "eager op, jnp.exp scalar", "numjax": median_time(lambda: jnp.exp(x)),
           "numpy": median_time(lambda: np.exp(np.float32(2.0))), "numba": None,
           "jax": median_time(lambda: real_jnp.exp(y)) if real_jax is not None else None}
    rows.append(row)
    return rows


# ---------------------------------------------------------------- autodiff, vmap, scan, pmap

def mlp_grad_numpy(params, x, y):
    """Hand-written forward and backward pass of mlp_loss."""
    acts, pre = [x], []
    h = x
    for W, b in params[:-1]:
        z = h @ W + b
        pre.append(z)
        h = np.maximum(z, 0.0)
        acts.append(h)
    W, b = params[-1]
    logits = h @ W + b
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    g = (p * y.sum(axis=1, keepdims=True) - y) / x.shape[0]
    grads = []
    for k in range(len(params) - 1, -1, -1):
        W, b = params[k]
        grads.append((acts[k].T @ g, g.sum(0)))
        if k:
            g = (g @ W.T) * (pre[k - 1] > 0)
    return grads[::-1]


def mlp_rows(rng):
    params, x, y = mlp_data(rng)
    nj_params = numjax.tree_util.tree_map(jnp.asarray, params)
    step = numjax.jit(numjax.grad(lambda p, a, b: mlp_loss(jnp, p, a, b)))
    row = {"name": "MLP 784-512-512-10 b128 jit(grad(loss))",
           "numjax": median_time(lambda: numjax.block_until_ready(step(nj_params, jnp.asarray(x), jnp.asarray(y)))),
           "numpy": median_time(lambda: mlp_grad_numpy(params, x, y)), "numba": None, "jax": None}
    if real_jax is not None:
        jstep = real_jax.jit(real_jax.grad(lambda p, a, b: mlp_loss(real_jnp, p, a, b)))
        jp = real_jax.tree_util.tree_map(real_jnp.asarray, params)
        jx, jy = real_jnp.asarray(x), real_jnp.asarray(y)
        row["jax"] = median_time(lambda: real_jax.block_until_ready(jstep(jp, jx, jy)))
    return [row]


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


def cnn_rows(rng):
    """A small CNN's jit(grad(loss)) (im2col + BLAS convolutions), against JAX's (XLA's)."""
    params, x, y = cnn_data(rng)
    step = numjax.jit(numjax.grad(lambda p, a, b: cnn_loss(jnp, numjax.lax, p, a, b)))
    nj_params = numjax.tree_util.tree_map(jnp.asarray, params)
    row = {"name": "CNN b32 28x28 conv32-pool-conv64-dense jit(grad(loss))",
           "numjax": median_time(lambda: numjax.block_until_ready(step(nj_params, jnp.asarray(x), jnp.asarray(y)))),
           "numpy": None, "numba": None, "jax": None}
    if real_jax is not None:
        jstep = real_jax.jit(real_jax.grad(lambda p, a, b: cnn_loss(real_jnp, real_jax.lax, p, a, b)))
        jp = real_jax.tree_util.tree_map(real_jnp.asarray, params)
        jx, jy = real_jnp.asarray(x), real_jnp.asarray(y)
        row["jax"] = median_time(lambda: real_jax.block_until_ready(jstep(jp, jx, jy)))
    return [row]


def vmap_scan_rows(rng):
    rows = []
    mat = rng.standard_normal((150, 100)).astype(np.float32)
    batch = rng.standard_normal((10, 100)).astype(np.float32)
    f = numjax.jit(numjax.vmap(lambda v: jnp.dot(jnp.asarray(mat), v)))
    row = {"name": "jit(vmap(apply_matrix)) 150x100, batch 10",
           "numjax": median_time(lambda: f(jnp.asarray(batch)).block_until_ready()),
           "numpy": median_time(lambda: np.dot(batch, mat.T)), "numba": None, "jax": None}
    if real_jax is not None:
        jm = real_jnp.asarray(mat)
        g = real_jax.jit(real_jax.vmap(lambda v: real_jnp.dot(jm, v)))
        jb = real_jnp.asarray(batch)
        row["jax"] = median_time(lambda: g(jb).block_until_ready())
    rows.append(row)
    W = (rng.standard_normal((64, 64)) * 0.1).astype(np.float32)
    U = (rng.standard_normal((64, 32)) * 0.1).astype(np.float32)
    xs = rng.standard_normal((1000, 32)).astype(np.float32)

    def rnn(np_, lax_, W, U, xs):
        def step(h, x):
            h = np_.tanh(W @ h + U @ x)
            return h, h.sum()
        return lax_.scan(step, np_.zeros(64, np_.float32), xs)

    def rnn_numpy(W, U, xs):
        h = np.zeros(64, np.float32)
        ys = np.empty(len(xs), np.float32)
        for t in range(len(xs)):
            h = np.tanh(W @ h + U @ xs[t])
            ys[t] = h.sum()
        return h, ys
    f = numjax.jit(lambda W, U, xs: rnn(jnp, numjax.lax, W, U, xs))
    args = [jnp.asarray(a) for a in (W, U, xs)]
    row = {"name": "scan RNN step, hidden 64, 1000 steps",
           "numjax": median_time(lambda: numjax.block_until_ready(f(*args))),
           "numpy": median_time(lambda: rnn_numpy(W, U, xs)), "numba": None, "jax": None}
    if real_jax is not None:
        g = real_jax.jit(lambda W, U, xs: rnn(real_jnp, real_jax.lax, W, U, xs))
        jargs = [real_jnp.asarray(a) for a in (W, U, xs)]
        row["jax"] = median_time(lambda: real_jax.block_until_ready(g(*jargs)))
    rows.append(row)
    return rows


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


def pmap_rows():
    times = {}
    for n in (1, 2):
        env = dict(os.environ, NUMJAX_NUM_CPU_DEVICES=str(n), NUMJAX_PARALLEL_THRESHOLD="0")
        out = subprocess.run([sys.executable, "-c", _PMAP], env=env, capture_output=True, text=True, check=True)
        times[n] = float(out.stdout.split()[-1])
    return [{"name": "2 shards of a compute-bound fn: jit on 1 device (numpy col) vs pmap on 2",
             "numjax": times[2], "numpy": times[1], "numba": None, "jax": None}]


def fresh_process_rows(samples):
    """First calls in fresh processes (medians of ``samples`` processes each); see first_call.py."""
    med = first_call.medians(first_call.measure(samples=samples, with_jax=real_jax is not None))
    rows = []
    for timer, label in (("selu", "first jit(selu) 1M f32 call"), ("square_sum", "then first jit(sum(x*x))"),
                         ("mlp_grad", "first jit(grad(MLP)) call")):
        for mode, cache in (("numjax_cold", "cold"), ("numjax_warm", "warm")):
            rows.append({"name": f"{label}, fresh process, {cache} cache (after import; JAX: its first call)",
                         "numjax": med[(timer, mode)], "numpy": None, "numba": None, "jax": med.get((timer, "jax"))})
    rows.append({"name": "import numjax (JAX: import jax)", "numjax": med[("import", "numjax_cold")],
                 "numpy": None, "numba": None, "jax": med.get(("import", "jax"))})
    return rows


def new_shape_row():
    f = numjax.jit(lambda v: selu(jnp, v))
    f(jnp.ones(1000, jnp.float32)).block_until_ready()
    times = []
    for n in range(1001, 1001 + REPEAT):
        x = jnp.ones(n, jnp.float32)
        t = time.perf_counter()
        f(x).block_until_ready()
        times.append(time.perf_counter() - t)
    return {"name": "first call at a new shape, same rank", "numjax": statistics.median(times),
            "numpy": None, "numba": None, "jax": None}


# ---------------------------------------------------------------- report

def fmt(t):
    if t is None:
        return "–"
    if t < 1e-3:
        return f"{t * 1e6:.2f} µs"
    return f"{t * 1e3:.2f} ms" if t < 1 else f"{t:.2f} s"


def ratio(a, b):
    return "–" if a is None or b is None else f"{a / b:.2f}"


def report(rows):
    lines = [f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
             f"Python {platform.python_version()}, numba {numba.__version__}, numpy {np.__version__}"
             + (f", jax {real_jax.__version__}" if real_jax else ", jax not installed"),
             "",
             "| benchmark | numjax | numpy | numba (hand-written) | JAX jit | numjax/JAX | numjax/numpy |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['name']} | {fmt(r['numjax'])} | {fmt(r['numpy'])} | {fmt(r['numba'])} | "
                     f"{fmt(r['jax'])} | {ratio(r['numjax'], r['jax'])} | {ratio(r['numjax'], r['numpy'])} |")
    return "\n".join(lines)


def main():
    global REPEAT
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", choices=["cnn"], help="run just this row")
    args = parser.parse_args()
    if args.quick:
        REPEAT = 3
    rng = np.random.default_rng(0)
    if args.only == "cnn":
        print(report(cnn_rows(rng)))
        return
    rows = (elementwise_rows(rng) + overhead_rows() + [new_shape_row()] + mlp_rows(rng)
            + cnn_rows(rng) + vmap_scan_rows(rng) + pmap_rows() + fresh_process_rows(1 if args.quick else 3))
    print(report(rows))


if __name__ == "__main__":
    main()

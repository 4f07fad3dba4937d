"""Memory is bounded (issues 9 and 11): compiled code that no live jitted function refers
to is released, repeated calls do not grow memory, and many shapes cost a bounded amount
each.

Each test runs a fresh process (with its own empty NUMJAX_CACHE_DIR), measures after a
warm-up and again at the end, with ``gc.collect()`` before each reading, and prints one
``MEMORY_RESULT`` line of JSON.  The long versions are marked slow; the default suite runs
shorter ones of the same scripts.

* Dropped functions: jitted lambdas differing only in the Python float they close over
  (so each traces to its own program, the constant baked in), each called once on a small
  float32 array and dropped.  Every 10 functions the script checks the bound and stops
  early once it is exceeded, so a failing run is quick.
* Repeated calls: 10^5 calls of jitted functions already compiled (the fast path, calls
  with keywords and pytrees, grad of a jitted function) and eager operations.
* Many shapes: one jitted function called on arrays of 1, 2, ... n elements (each a new
  trace), then dropped, and a second one the same way: each shape costs a bounded amount,
  and the first function's programs are freed when it is dropped.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

MAX_RSS_GROWTH_MB = 50
# An in-memory LRU of compiled programs may keep a few modules alive.
MAX_MODULE_GROWTH = 25
MAX_RSS_GROWTH_REPEATED_CALLS_MB = 4
MAX_KB_PER_SHAPE = 25
SHAPES_SLACK_MB = 10

_PRELUDE = """
    import gc, json, os, sys
    import numpy as np
    import numjax
    import numjax.numpy as jnp
    from numjax import dispatch

    PAGE = os.sysconf("SC_PAGE_SIZE")

    def rss_mb():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * PAGE / 2**20

    def generated_modules():
        return sum("numjax._generated" in name for name in list(sys.modules))

    def live_programs():
        return sum(type(o) is dispatch.Program for o in gc.get_objects())

    def result(**values):
        print("MEMORY_RESULT " + json.dumps(values))
"""

_DROPPED_FUNCTIONS = """
    N, WARM_UP, WHAT, LIMIT = {n}, {warm_up}, {what!r}, {limit}

    def reading():
        gc.collect()
        return rss_mb() if WHAT == "rss" else generated_modules()

    def make(c):
        return numjax.jit(lambda x: x * c + 1.0)   # c is closed over: a constant of the trace

    x = jnp.ones(8, jnp.float32)
    base = None
    for k in range(N):
        c = 1.0 + k / 1024                         # exact in float32: outputs are checked below
        f = make(c)
        y = numjax.block_until_ready(f(x))
        assert float(y[0]) == c + 1.0, (k, float(y[0]))
        del f, y
        if k + 1 == WARM_UP:
            base = reading()
        elif k + 1 > WARM_UP and (k + 1) % 10 == 0 and reading() - base > LIMIT:
            break                                  # the bound is exceeded: no need to go on
    result(done=k + 1, growth=reading() - base)
"""

_REPEATED_CALLS = """
    N = {n}
    f = numjax.jit(lambda x, y: x * y + 1.0)
    g = numjax.jit(lambda tree, scale=1.0: {{"s": tree["a"] * scale + tree["b"]}})
    loss = numjax.jit(lambda x: jnp.sum(jnp.sin(x) * x))
    grad = numjax.grad(loss)
    x = jnp.asarray(np.linspace(-1.0, 1.0, 16, dtype=np.float32))
    tree = {{"a": x, "b": x}}
    want = (np.asarray(f(x, x)), np.asarray(g(tree, scale=2.0)["s"]), np.asarray(grad(x)),
            np.asarray(x + x))

    def calls(n):
        # Per round of 100 calls: 90 on the fast path, 4 with keywords and a pytree, 2 of
        # grad of a jitted function, 4 eager operations.
        for _ in range(n // 100):
            for _ in range(90):
                out = f(x, x)
            for _ in range(4):
                tree_out = g(tree, scale=2.0)
            for _ in range(2):
                grad_out = grad(x)
            for _ in range(4):
                eager_out = x + x
        got = (np.asarray(out), np.asarray(tree_out["s"]), np.asarray(grad_out),
               np.asarray(eager_out))
        assert all(np.array_equal(a, b) for a, b in zip(got, want))

    calls(N // 10)                                 # warm-up: caches filled
    gc.collect()
    base = rss_mb()
    calls(N - N // 10)
    gc.collect()
    result(calls=N, growth=rss_mb() - base, traces=f.stats.trace_misses + g.stats.trace_misses)
"""

_MANY_SHAPES = """
    N = {n}

    def make(k):
        return numjax.jit(lambda x: jnp.sin(x) * 2.0 + k)

    def run(f):
        for n in range(1, N + 1):
            y = f(jnp.ones(n, jnp.float32))
            assert y.shape == (n,)
        return f._cache_size()

    for k in (0.0, 1.0):                           # warm-up: both programs compiled once
        run_small = make(k)
        for n in range(1, 20):
            run_small(jnp.ones(n, jnp.float32))
    del run_small
    gc.collect()
    base = rss_mb()
    f = make(0.0)
    cached = run(f)
    gc.collect()
    first, alive = rss_mb() - base, live_programs()
    del f
    gc.collect()
    after_drop = live_programs()
    cached_again = run(make(1.0))                  # dropped at once: only its memory remains
    gc.collect()
    result(cached=cached, cached_again=cached_again, first=first, alive=alive,
           after_drop=after_drop, after_both=rss_mb() - base, left=live_programs())
"""


def _run(body, tmp_path, **params):
    script = textwrap.dedent(_PRELUDE) + textwrap.dedent(body).format(**params)
    env = dict(os.environ, NUMJAX_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(l for l in proc.stdout.splitlines() if l.startswith("MEMORY_RESULT "))
    return json.loads(line.split(" ", 1)[1])


DROPPED = [100, pytest.param(500, marks=pytest.mark.slow)]


@pytest.mark.parametrize("n_functions", DROPPED)
def test_rss_bounded_after_dropping_jitted_lambdas(tmp_path, n_functions):
    res = _run(_DROPPED_FUNCTIONS, tmp_path, n=n_functions, warm_up=20, what="rss",
               limit=MAX_RSS_GROWTH_MB)
    assert res["growth"] <= MAX_RSS_GROWTH_MB, (
        f"RSS grew {res['growth']:.0f} MB after {res['done']} dropped jitted functions")
    assert res["done"] == n_functions


@pytest.mark.parametrize("n_functions", DROPPED)
def test_generated_modules_released_after_dropping_jitted_lambdas(tmp_path, n_functions):
    res = _run(_DROPPED_FUNCTIONS, tmp_path, n=n_functions, warm_up=20, what="modules",
               limit=MAX_MODULE_GROWTH)
    assert res["growth"] <= MAX_MODULE_GROWTH, (
        f"{res['growth']} more numjax._generated modules in sys.modules after "
        f"{res['done']} dropped jitted functions")
    assert res["done"] == n_functions


def test_rss_flat_over_100k_calls_of_compiled_functions(tmp_path):
    res = _run(_REPEATED_CALLS, tmp_path, n=100_000)
    assert res["traces"] == 2            # every call after the first of each reused its trace
    assert res["growth"] <= MAX_RSS_GROWTH_REPEATED_CALLS_MB, (
        f"RSS grew {res['growth']:.1f} MB over {res['calls']} calls of compiled functions")


@pytest.mark.parametrize("n_shapes", [400, pytest.param(2000, marks=pytest.mark.slow)])
def test_memory_per_shape_bounded_and_released_with_the_function(tmp_path, n_shapes):
    res = _run(_MANY_SHAPES, tmp_path, n=n_shapes)
    assert res["cached"] == res["cached_again"] == n_shapes
    assert res["alive"] == n_shapes      # one program per shape while the function lives
    assert res["after_drop"] == 0 and res["left"] == 0
    bound = n_shapes * MAX_KB_PER_SHAPE / 1024 + SHAPES_SLACK_MB
    assert res["first"] <= bound, f"{n_shapes} shapes grew RSS by {res['first']:.1f} MB"
    # A second function of as many shapes, made after the first was dropped, stays in bound too.
    assert res["after_both"] <= bound, f"two functions of {n_shapes} shapes: {res['after_both']:.1f} MB"

"""Memory is bounded (issue 9, point 5): compiled code that no live jitted
function refers to is released.

Each test runs a fresh process (with its own empty NUMJAX_CACHE_DIR) that
creates 500 jitted lambdas differing only in the Python float they close over
(so each traces to its own program, the constant baked in), calls each once on
a small float32 array and drops it.  The process measures after a warm-up of
20 functions and again at the end, with ``gc.collect()`` before each reading.
Every 10 functions it checks the bound and stops early once it is exceeded,
so a failing run is quick.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

N_FUNCTIONS = 500
WARM_UP = 20
MAX_RSS_GROWTH_MB = 50
# An in-memory LRU of compiled programs may keep a few modules alive.
MAX_MODULE_GROWTH = 25

_SCRIPT = textwrap.dedent("""
    import gc, json, os, sys
    import numjax
    import numjax.numpy as jnp

    N, WARM_UP, WHAT, LIMIT = {n}, {warm_up}, {what!r}, {limit}
    PAGE = os.sysconf("SC_PAGE_SIZE")

    def rss_mb():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * PAGE / 2**20

    def generated_modules():
        return sum("numjax._generated" in name for name in list(sys.modules))

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
    print("MEMORY_RESULT " + json.dumps({{"done": k + 1, "growth": reading() - base}}))
""")


def _run(what, limit, tmp_path):
    script = _SCRIPT.format(n=N_FUNCTIONS, warm_up=WARM_UP, what=what, limit=limit)
    env = dict(os.environ, NUMJAX_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(l for l in proc.stdout.splitlines() if l.startswith("MEMORY_RESULT "))
    return json.loads(line.split(" ", 1)[1])


def test_rss_bounded_after_dropping_500_jitted_lambdas(tmp_path):
    res = _run("rss", MAX_RSS_GROWTH_MB, tmp_path)
    assert res["growth"] <= MAX_RSS_GROWTH_MB, (
        f"RSS grew {res['growth']:.0f} MB after {res['done']} dropped jitted functions")
    assert res["done"] == N_FUNCTIONS


def test_generated_modules_released_after_dropping_jitted_lambdas(tmp_path):
    res = _run("modules", MAX_MODULE_GROWTH, tmp_path)
    assert res["growth"] <= MAX_MODULE_GROWTH, (
        f"{res['growth']} more numjax._generated modules in sys.modules after "
        f"{res['done']} dropped jitted functions")
    assert res["done"] == N_FUNCTIONS

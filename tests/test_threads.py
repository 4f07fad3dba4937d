"""Tracing and jit from several threads at once (issue 11): each thread's transformations
are its own, and a cache entry wanted by several threads at once is traced and compiled once.

Every test starts its threads on a ``Barrier`` so their work overlaps, and shortens the
interpreter's switch interval so that threads interleave inside one trace (a trace here
is a loop of ``LOOP`` operations). Results are compared exactly with the same work done
in one thread first.
"""
import collections
import sys
import threading

import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax import dispatch, lax
from numjax.lowering import compile as lowering_compile

N_THREADS = 8
LOOP = 400
EQNS = 2 * LOOP + 1   # a multiply and an add per iteration, then the sum


@pytest.fixture(autouse=True)
def _switch_often():
    saved = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    yield
    sys.setswitchinterval(saved)


@pytest.fixture
def compiles(monkeypatch):
    """Names of the programs the backend compiles while the test runs, in order."""
    names, lock, real = [], threading.Lock(), lowering_compile.compile_jaxpr

    def counting(closed, name="fn"):
        with lock:
            names.append(name)
        return real(closed, name)
    monkeypatch.setattr(lowering_compile, "compile_jaxpr", counting)
    return names


def run_in_threads(work, n=N_THREADS):
    """``[work(0, barrier), ..., work(n-1, barrier)]``, each call in its own thread;
    re-raises the first exception a thread raised."""
    barrier = threading.Barrier(n)
    results, errors = [None] * n, []

    def target(k):
        try:
            results[k] = work(k, barrier)
        except BaseException as err:   # noqa: BLE001  (re-raised below, in the test's thread)
            errors.append(err)
            barrier.abort()
    threads = [threading.Thread(target=target, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread did not finish (deadlock?)"
    if errors:
        raise errors[0]
    return results


def chain(c, name):
    """A function whose trace takes ``LOOP`` steps; ``c`` makes each one a different program."""
    def f(x):
        for _ in range(LOOP):
            x = x * 0.999 + c
        return jnp.sum(x)
    f.__name__ = f.__qualname__ = name
    return f


def named(fun, name):
    fun.__name__ = fun.__qualname__ = name
    return fun


X = jnp.asarray(np.linspace(-1.0, 1.0, 5, dtype=np.float32))
XS = jnp.asarray(np.linspace(-2.0, 2.0, 15, dtype=np.float32).reshape(3, 5))


VALUES = ("jit", "grad", "vmap", "jit_grad", "grad_jit")


def transformations(f, jitted, jitted_grad):
    """What each thread computes with ``f``: the printed jaxpr, its equation count and the
    values of jit, grad, vmap, jit of grad and grad of jit, as numpy arrays. (Grad of jit
    derives new jaxprs from the jitted one, and compiles them, once for all threads.)"""
    jaxpr = jax.make_jaxpr(f)(X)
    return {"jaxpr": str(jaxpr), "eqns": len(jaxpr.jaxpr.eqns),
            "jit": np.asarray(jitted(X)), "grad": np.asarray(jax.grad(f)(X)),
            "vmap": np.asarray(jax.vmap(f)(XS)), "jit_grad": np.asarray(jitted_grad(X)),
            "grad_jit": np.asarray(jax.grad(jitted)(X))}


def assert_same(got, want):
    assert got["jaxpr"] == want["jaxpr"]
    assert got["eqns"] == want["eqns"] == EQNS
    for k in VALUES:
        assert got[k].dtype == want[k].dtype and got[k].shape == want[k].shape, k
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)


def distinct_functions():
    """Per thread: its own function, its jit and the jit of its grad (fresh objects, so
    nothing is cached yet); the constants differ, so the programs do."""
    funcs = [chain(float(k + 1), f"chain_{k}") for k in range(N_THREADS)]
    return (funcs, [jax.jit(f) for f in funcs],
            [jax.jit(named(jax.grad(f), f"grad_chain_{k}")) for k, f in enumerate(funcs)])


@pytest.mark.slow     # ~30 s: compiles every function twice (threads, then one thread)
def test_distinct_functions_traced_in_threads_match_one_thread(compiles):
    funcs, jits, jit_grads = distinct_functions()
    want = [transformations(*fs) for fs in zip(funcs, jits, jit_grads)]
    want_compiles = collections.Counter(compiles)
    assert all(want_compiles[f"chain_{k}"] >= 1 and want_compiles[f"grad_chain_{k}"] == 1
               for k in range(N_THREADS)), want_compiles
    funcs, jits, jit_grads = distinct_functions()
    del compiles[:]

    def work(k, barrier):
        barrier.wait()
        return transformations(funcs[k], jits[k], jit_grads[k])
    got = run_in_threads(work)
    for k in range(N_THREADS):
        assert f"{float(k + 1)}" in want[k]["jaxpr"]
        assert_same(got[k], want[k])
        assert jits[k].stats.trace_misses == 1 and jit_grads[k].stats.trace_misses == 1
    assert collections.Counter(compiles) == want_compiles   # what one thread compiled, once


def shared_function():
    shared = chain(0.5, "shared_chain")
    return shared, jax.jit(shared), jax.jit(named(jax.grad(shared), "shared_grad"))


def test_shared_function_traced_and_compiled_once_for_all_threads(compiles):
    want = transformations(*shared_function())
    want_compiles = collections.Counter(compiles)
    assert want_compiles["shared_chain"] >= 1 and want_compiles["shared_grad"] == 1, want_compiles
    shared, shared_jit, shared_jit_grad = shared_function()
    del compiles[:]

    def work(k, barrier):
        barrier.wait()
        return transformations(shared, shared_jit, shared_jit_grad)
    got = run_in_threads(work)
    for g in got:
        assert_same(g, want)
    assert shared_jit.stats.trace_misses == 1 and shared_jit_grad.stats.trace_misses == 1
    assert shared_jit._cache_size() == 1
    assert collections.Counter(compiles) == want_compiles   # what one thread compiled, once


def test_same_new_key_from_all_threads_at_once_compiles_once(compiles):
    shared_jit = jax.jit(chain(2.0, "same_key"))
    want = np.asarray(jax.jit(chain(2.0, "same_key_reference"))(X))
    del compiles[:]

    def work(k, barrier):
        barrier.wait()
        return np.asarray(shared_jit(X))
    for out in run_in_threads(work):
        np.testing.assert_array_equal(out, want)
    assert compiles == ["same_key"]
    assert shared_jit.stats.trace_misses == 1
    assert shared_jit.stats.trace_hits == N_THREADS - 1   # the others waited, then reused it
    assert len(dispatch._tracing) == 0                     # no lock left behind


def test_eager_ops_in_threads_while_another_thread_traces():
    f = chain(3.0, "traced_meanwhile")
    want = jax.make_jaxpr(f)(X)
    a = np.linspace(0.5, 1.5, 7, dtype=np.float32)
    b = np.linspace(-1.0, 2.0, 7, dtype=np.float32)
    ja, jb = jnp.asarray(a), jnp.asarray(b)
    eager_want = [np.asarray(ja + jb), np.asarray(jnp.sin(ja) * jb), np.asarray(lax.exp(ja))]
    np.testing.assert_array_equal(eager_want[0], a + b)

    def work(k, barrier):
        barrier.wait()
        if k == 0:
            return [str(jax.make_jaxpr(f)(X)) for _ in range(3)]
        outs = []
        for _ in range(150):
            outs.append([ja + jb, jnp.sin(ja) * jb, lax.exp(ja)])
        return outs
    got = run_in_threads(work)
    assert got[0] == [str(want)] * 3
    for outs in got[1:]:
        for trio in outs:
            for out, w in zip(trio, eager_want):
                assert type(out) is type(ja)   # a value, not a tracer of the other thread
                np.testing.assert_array_equal(np.asarray(out), w)


def test_named_axis_is_seen_only_by_the_thread_that_binds_it():
    inside = threading.Event()

    def work(k, barrier):
        barrier.wait()
        if k == 0:
            def body(x):
                inside.set()
                barrier.wait()    # the other thread binds psum while this vmap is active
                barrier.wait()
                return lax.psum(x, "i")
            return np.asarray(jax.vmap(body, axis_name="i")(jnp.arange(4.0)))
        assert inside.wait(30)
        barrier.wait()
        try:
            with pytest.raises(NameError, match="unbound axis name: i"):
                lax.psum(jnp.float32(1.0), "i")
        finally:
            barrier.wait()
    got = run_in_threads(work, n=2)
    np.testing.assert_array_equal(got[0], np.full(4, 6.0, np.float32))


def test_config_context_managers_apply_to_their_own_thread():
    from numjax.config import config
    f = jax.jit(lambda x: x + 1.0)

    def work(k, barrier):
        if k == 0:
            with jax.disable_jit(), jax.log_compiles():
                barrier.wait()
                barrier.wait()
                return config.jax_disable_jit, config.jax_log_compiles
        barrier.wait()
        seen = (config.jax_disable_jit, config.jax_log_compiles)
        out = float(f(jnp.float32(1.0)))   # jitted: this thread's jit is not disabled
        barrier.wait()
        return seen, out
    got = run_in_threads(work, n=2)
    assert got[0] == (True, True)
    assert got[1] == ((False, False), 2.0)
    assert f.stats.trace_misses == 1
    assert (config.jax_disable_jit, config.jax_log_compiles) == (False, False)


# ---------------------------------------------------------------- numjax's own thread team
# (issue 14): ``numjax_num_threads`` (NUMJAX_NUM_THREADS) is the number of threads that run a
# parallel kernel's chunks, on the native runner and on the Python team alike, read again when
# ``config.update`` changes it; it also caps BLAS's threads while numjax calls BLAS.  The tests
# count the threads that do the work (threads that ran on a CPU while the kernels ran), in a
# fresh process so that no other test's threads are counted.

# What both thread-counting scripts start with: a jitted elementwise program on 1M elements
# and a count of the threads that ran 1 ms or more during 30 checked calls (each of n threads
# runs ~1/n of ~100 ms of chunks; an idle one runs nothing, a woken one with no chunk left spins
# a few µs per call).
_THREAD_PROBE = """
import os, sys, threading
import numpy as np
import numjax, numjax.numpy as jnp
f = numjax.jit(lambda v: jnp.cos(jnp.tanh(v) * 0.5))
x = np.linspace(-1, 1, 1 << 20, dtype=np.float32)
want = np.cos(np.tanh(x) * np.float32(0.5))

def cpu_ns():
    out = {}
    for t in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{t}/schedstat") as fh:
                out[t] = int(fh.read().split()[0])
        except OSError:
            pass          # a thread that has just exited
    return out

def threads_working(check):
    before = cpu_ns()
    for _ in range(30):
        check(np.asarray(f(x)))
    after = cpu_ns()
    return sum(after[t] - before.get(t, 0) > 1_000_000 for t in after)
"""

_TEAM_SCRIPT = _THREAD_PROBE + """
from numjax.config import config

def working_threads():
    f(x)
    return threads_working(lambda got: np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6))

def team_threads():
    return sum(t.name.startswith("numjax-") for t in threading.enumerate())

counts = [(config.numjax_num_threads, working_threads(), team_threads())]
for n in (1, 2, 4, 3):
    config.update("numjax_num_threads", n)
    counts.append((n, working_threads(), team_threads()))
print("COUNTS", counts)
"""


def _counts(script, **env):
    """The value a script printed after ``COUNTS`` (run in a fresh process with ``env``)."""
    import os
    import subprocess
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, **env))
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("COUNTS ")), None)
    assert line is not None, out.stdout + out.stderr
    return eval(line[len("COUNTS "):])     # noqa: S307  (ints printed by the script)


def _team_counts(**env):
    return _counts(_TEAM_SCRIPT, **env)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads in /proc/self/task")
def test_num_threads_sets_the_native_runners_team():
    counts = _team_counts(NUMJAX_NUM_THREADS="3", NUMJAX_NATIVE_PARALLEL="1")
    for n, working, python_team in counts:
        assert working == n, counts      # the caller and n - 1 of libgomp's workers
        assert python_team == 0, counts  # the Python team is not started beside the runner


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads in /proc/self/task")
def test_num_threads_sets_the_python_teams_size():
    counts = _team_counts(NUMJAX_NUM_THREADS="3", NUMJAX_NATIVE_PARALLEL="0")
    for n, working, python_team in counts:
        assert working == n, counts
        if n > 1:       # with one thread no chunk is handed out: an idle team may stay
            assert python_team == n - 1, counts


def test_num_threads_caps_blas_inside_numjax(monkeypatch):
    from numjax import blas_threads as blas_limit
    from numjax.config import config
    blas_limit.enter()
    blas_limit.leave()
    if not blas_limit._functions:
        pytest.skip("numpy's BLAS here is not an OpenBLAS exporting its thread setter")
    setter, getter = blas_limit._functions[0]
    own = getter()
    seen = []
    probe = jax.lax.linalg.dot_general_numpy
    monkeypatch.setattr(jax.lax.linalg, "dot_general_numpy", lambda *a: (seen.append(getter()), probe(*a))[1])
    monkeypatch.setattr(config, "numjax_blas_threads", 0)
    in_program = blas_limit.limited(getter)        # how compiled programs calling BLAS run
    x = np.ones((8, 8), np.float32)
    setter(3)
    try:
        for n, want in ((1, 1), (2, 2), (8, 3), (0, 3)):     # at most n; 0: BLAS's own
            monkeypatch.setattr(config, "numjax_num_threads", n)
            np.testing.assert_array_equal(np.asarray(jnp.dot(x, x)), np.full((8, 8), 8, np.float32))
            assert seen[-1] == want and in_program() == want and getter() == 3, (n, seen)
        monkeypatch.setattr(config, "numjax_blas_threads", 2)   # BLAS's own setting wins
        monkeypatch.setattr(config, "numjax_num_threads", 1)
        assert in_program() == 2 and getter() == 3
    finally:
        setter(own)


def test_native_calls_split_into_more_pieces_than_threads_give_the_same_bits():
    """``k(-(pieces << CHUNKS_SHIFT | threads), hi, ...)``: ``threads`` threads claim ``pieces``
    pieces of [0, hi) (run_chunked asks for several per thread); every split covers each row
    once, whatever the counts (more pieces than rows, fewer pieces than threads, none given)."""
    from numjax.lowering import cpu_llvm, cpu_runtime
    x = np.random.default_rng(3).standard_normal((301, 7)).astype(np.float32)
    exe = cpu_llvm.compile_program(jax.make_jaxpr(lambda m: jnp.tanh(m) * 2.0 - m)(x), "pieces")
    (k,) = exe._obj.funcs.values()
    want = np.empty_like(x)
    k(0, 301, 301, 7, x, want)
    if not cpu_runtime._install_runner():
        pytest.skip("no native runner (libgomp) in this process")
    shift = cpu_runtime.CHUNKS_SHIFT
    for threads, pieces in ((2, 8), (2, 301), (3, 1000), (4, 2), (2, 0), (1, 5), (0, 7), (300, 299)):
        out = np.zeros_like(x)
        k(-(pieces << shift | threads), 301, 301, 7, x, out)
        np.testing.assert_array_equal(out, want, err_msg=str((threads, pieces)))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads in /proc/self/task")
def test_a_call_finding_the_runner_busy_runs_in_its_own_thread():
    """One call at a time runs on the native runner (libgomp gives each calling thread a pool of
    its own, so concurrent callers would each add ``numjax_num_threads - 1`` running threads);
    a call made while another holds the runner runs its loop in the calling thread alone."""
    script = _THREAD_PROBE + """
from numjax.lowering import cpu_runtime
got = np.asarray(f(x))
np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
same = lambda r: np.testing.assert_array_equal(r, got)   # noqa: E731
free = threads_working(same)
holder = threading.Thread(target=cpu_runtime._runner_busy.acquire)
holder.start()
holder.join()                   # another thread's call "holds" the runner
busy = threads_working(same)
cpu_runtime._runner_busy.release()
print("COUNTS", (free, busy, threads_working(same)))
"""
    assert _counts(script, NUMJAX_NUM_THREADS="2", NUMJAX_NATIVE_PARALLEL="1") == (2, 1, 2)

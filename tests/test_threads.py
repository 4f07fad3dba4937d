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

"""BLAS's thread count while numjax computes (numjax/blas_threads.py, lowering/blas_threads.py).

Programs that call BLAS, and eager matmuls and convolutions, run with ``numjax_blas_threads`` BLAS threads and put BLAS's own
setting back afterwards; programs without matmuls are not wrapped at all.
"""
import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax import blas_threads as blas_limit
from numjax.config import config
from numjax.lowering import blas_threads, cpu_llvm


def _openblas():
    """The (setter, getter) pairs of the OpenBLAS libraries the module limits."""
    blas_limit.enter()             # finds them on first use
    blas_limit.leave()
    found = blas_limit._functions
    if not found:
        pytest.skip("numpy's BLAS here is not an OpenBLAS exporting its thread setter")
    return found


def _compiled(f, *args):
    return cpu_llvm.compile_program(jax.make_jaxpr(f)(*args), "t")


def test_programs_that_call_blas_are_found():
    x = np.ones((4, 4), np.float32)
    img, ker = np.ones((1, 5, 5, 2), np.float32), np.ones((3, 3, 2, 4), np.float32)
    conv = lambda a, k: jax.lax.conv_general_dilated(a, k, (1, 1), "SAME",           # noqa: E731
                                                       dimension_numbers=("NHWC", "HWIO", "NHWC"))
    in_scan = lambda a: jax.lax.scan(lambda c, _: (c @ a, None), a, None, length=3)[0]   # noqa: E731
    for f, args in ((lambda a: a @ a, (x,)), (conv, (img, ker)), (in_scan, (x,)),
                    (jnp.linalg.cholesky, (np.eye(4, dtype=np.float32),))):
        assert blas_threads.calls_blas(jax.make_jaxpr(f)(*args).jaxpr)
    assert not blas_threads.calls_blas(jax.make_jaxpr(lambda a: jnp.tanh(a) * 2 + a.sum())(x).jaxpr)


def test_only_blas_programs_are_wrapped():
    x = np.ones((4, 4), np.float32)
    assert hasattr(_compiled(lambda a: a @ a + 1, x)._fn, "__wrapped__")
    assert not hasattr(_compiled(lambda a: jnp.exp(a) + 1, x)._fn, "__wrapped__")


def test_limit_holds_inside_and_is_restored_after(monkeypatch):
    setter, getter = _openblas()[0]
    own = getter()
    monkeypatch.setattr(config, "numjax_blas_threads", 1)
    seen = []

    def probe(a):
        seen.append(getter())
        return a

    limited = blas_threads.limited(probe)
    setter(3)
    try:
        limited(0)
        assert seen == [1] and getter() == 3
        blas_threads.enter()           # nested (as concurrent pmap programs): restored by the last
        limited(0)
        assert seen == [1, 1] and getter() == 1
        blas_threads.leave()
        assert getter() == 3
        monkeypatch.setattr(config, "numjax_blas_threads", 0)   # 0: BLAS keeps its own setting
        limited(0)
        assert seen == [1, 1, 3]
    finally:
        setter(own)


def test_results_equal_with_and_without_the_limit(monkeypatch):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 96), np.float32), rng.standard_normal((96, 32), np.float32)
    f = jax.jit(lambda p, q: jnp.tanh(p @ q))
    limited = np.asarray(f(a, b))
    monkeypatch.setattr(config, "numjax_blas_threads", 0)
    unlimited = np.asarray(jax.jit(lambda p, q: jnp.tanh(p @ q))(a, b))
    np.testing.assert_allclose(limited, unlimited, rtol=1e-6, atol=1e-6)


def test_eager_matmuls_and_convolutions_run_under_the_limit(monkeypatch):
    # An eager matmul between compiled steps must not wake BLAS's own threads: they would spin
    # against numjax's thread team during the next step (see numjax/blas_threads.py).
    setter, getter = _openblas()[0]
    own = getter()
    monkeypatch.setattr(config, "numjax_blas_threads", 1)
    seen = []
    monkeypatch.setattr(jax.lax.linalg, "dot_general_numpy",
                        lambda *a, _f=jax.lax.linalg.dot_general_numpy: (seen.append(getter()), _f(*a))[1])
    conv = jax.lax.convolution
    monkeypatch.setattr(conv, "conv_numpy",
                        lambda *a, _f=conv.conv_numpy: (seen.append(getter()), _f(*a))[1])
    setter(2)
    try:
        x = np.ones((8, 8), np.float32)
        np.testing.assert_array_equal(np.asarray(jnp.dot(x, x)), np.full((8, 8), 8, np.float32))
        img, ker = np.ones((1, 5, 5, 2), np.float32), np.ones((3, 3, 2, 4), np.float32)
        out = jax.lax.conv_general_dilated(img, ker, (1, 1), "VALID",
                                           dimension_numbers=("NHWC", "HWIO", "NHWC"))
        np.testing.assert_array_equal(np.asarray(out), np.full((1, 3, 3, 4), 18, np.float32))
        assert seen == [1, 1] and getter() == 2
    finally:
        setter(own)

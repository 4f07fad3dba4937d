"""Assertions shared by the test files (importable as ``helpers``: tests/ is on sys.path)."""
import warnings

import numpy as np
import pytest

import numjax
from numjax.errors import EagerFallbackWarning


def jit_compiled(fn, *args):
    """``numjax.jit(fn)(*args)``, failing the test if jit fell back to eager evaluation.

    (The suite already makes the warning an error; this names the failure plainly, and
    holds outside pytest's configuration too.)"""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", EagerFallbackWarning)
        out = numjax.jit(fn)(*args)
    fallback = [str(w.message) for w in caught if issubclass(w.category, EagerFallbackWarning)]
    if fallback:
        pytest.fail(f"jit did not compile, it fell back to eager: {fallback[0]}")
    return out


def jit_falls_back(fn, *args, match=None):
    """``numjax.jit(fn)(*args)`` for a program with no lowering: it must warn, naming the primitive."""
    with pytest.warns(EagerFallbackWarning, match=match):
        return numjax.jit(fn)(*args)


def wide_range_data(shape, dtype, seed=0):
    """Values of a wide dynamic range, so that the order of additions shows in the last bits."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 10.0 ** rng.uniform(-4, 4, shape)).astype(dtype)


def assert_eager_equals_jit(cases, x):
    """Each of ``cases`` (name -> function) gives the same bits eagerly and jitted on ``x``."""
    import numjax.numpy as jnp
    for name, f in cases.items():
        eager = np.asarray(f(jnp.asarray(x)))
        jitted = np.asarray(jit_compiled(f, x))
        assert eager.dtype == jitted.dtype == x.dtype, name
        assert np.array_equal(eager, jitted), (name, eager.ravel()[:4], jitted.ravel()[:4])

"""Assertions shared by the test files (importable as ``helpers``: tests/ is on sys.path)."""
import warnings

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

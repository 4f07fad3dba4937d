"""Assertions shared by the test files (importable as ``helpers``: tests/ is on sys.path)."""
import warnings

import pytest

import numjax


def jit_compiled(fn, *args):
    """``numjax.jit(fn)(*args)``, failing the test if jit fell back to eager evaluation."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = numjax.jit(fn)(*args)
    fallback = [str(w.message) for w in caught if "runs eagerly" in str(w.message)]
    if fallback:
        pytest.fail(f"jit did not compile, it fell back to eager: {fallback[0]}")
    return out

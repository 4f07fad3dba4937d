"""Pytrees, ravel_pytree, jax.nn and its initializers: numjax next to real JAX.

Runs the shared cases of tests/tree_nn_cases.py under both libraries, and
checks that the data committed in tests/tree_nn_expected.json (which the
default tests compare numjax against) is still what JAX produces.
"""
import os
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.flatten_util  # noqa: E402,F401

import numjax  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tree_nn_cases as cases  # noqa: E402

jax.config.update("jax_enable_x64", False)
EXPECTED = cases.load_expected()


@pytest.mark.parametrize("section", ["tree_facts", "tree_calls", "ravel", "nn_dtypes", "nn_one_hot"])
def test_exact_sections(section):
    make = {"tree_facts": cases.tree_facts, "tree_calls": cases.tree_call_results, "ravel": cases.ravel_results,
            "nn_dtypes": cases.nn_dtypes, "nn_one_hot": cases.nn_one_hot}[section]
    live = make(jax)
    assert live == EXPECTED[section], "committed data is stale: rerun python tests/tree_nn_cases.py"
    ours = make(numjax)
    differing = sorted(k for k in live if ours.get(k) != live[k])
    known = {"nn_dtypes": {"standardize/pyfloat", "standardize/pyint"}}.get(section, set())
    assert set(differing) <= known, differing


def _assert_close_tree(a, b, rtol, atol):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _assert_close_tree(a[k], b[k], rtol, atol)
    elif isinstance(a, list) and a and all(isinstance(v, (int, float)) or v is None for v in a):
        fa = np.array([-np.inf if v is None else v for v in a], float)
        fb = np.array([-np.inf if v is None else v for v in b], float)
        np.testing.assert_allclose(fa, fb, rtol=rtol, atol=atol)
    else:
        assert a == b


@pytest.mark.parametrize("section", ["nn_elementwise", "nn_arrays", "init"])
def test_float_sections(section):
    make = {"nn_elementwise": cases.nn_elementwise_values, "nn_arrays": cases.nn_array_values,
            "init": cases.init_values}[section]
    live = make(jax)
    _assert_close_tree(EXPECTED[section], live, rtol=0, atol=0)
    _assert_close_tree(make(numjax), live, rtol=1e-5, atol=1e-6)


def test_pytree_mismatch_error_type_and_text():
    for lib in (jax, numjax):
        with pytest.raises(ValueError, match="different lengths of list at key path\n    tree_map tree\\[1\\]"):
            lib.tree.map(lambda a, b: a, (1, [2, 3]), (1, [2]))

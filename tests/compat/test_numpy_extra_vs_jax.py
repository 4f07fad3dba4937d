"""jax.numpy breadth records (tests/numpy_extra_table.py) under real JAX and numjax.

Runs under ``tox -e compat``. Checks that the committed expectations
(tests/numpy_extra_expected.json) are still what JAX computes, and compares numjax with
JAX directly, including gradients of the ``grad`` records.
"""
import os
import sys
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from numpy_extra_table import RECORDS, describe, evaluate, load_expected, make_args  # noqa: E402
from test_numpy_extra import _compare  # noqa: E402

jax.config.update("jax_enable_x64", False)
EXPECTED = load_expected()


def _run(rec, jnp_mod, asarray):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        args = [asarray(a) if isinstance(a, np.ndarray) else a for a in make_args(rec)]
        return describe(evaluate(rec, jnp_mod, args))


@pytest.mark.parametrize("rec", RECORDS, ids=lambda r: r.name)
def test_committed_expectations_are_jax(rec):
    _compare(_run(rec, jjnp, jjnp.asarray), EXPECTED[rec.name], 1e-6, rec.name)


@pytest.mark.parametrize("rec", RECORDS, ids=lambda r: r.name)
def test_numjax_matches_jax(rec):
    _compare(_run(rec, njnp, njnp.asarray), _run(rec, jjnp, jjnp.asarray), rec.rtol, rec.name)


def _scalar_loss(rec, jnp_mod, grad_fn, asarray):
    args = make_args(rec)
    pos = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    fn = eval(rec.fn, {"jnp": jnp_mod})  # noqa: S307
    fixed = [asarray(a) if isinstance(a, np.ndarray) else a for a in args]

    def loss(*floats):
        full = list(fixed)
        for p, v in zip(pos, floats):
            full[p] = v
        leaves = [v for v in (nj if jnp_mod is njnp else jax).tree_util.tree_leaves(fn(*full))
                  if hasattr(v, "dtype") and np.dtype(v.dtype).kind == "f"]
        return sum(jnp_mod.sum(jnp_mod.sin(v)) for v in leaves)
    return grad_fn(loss, argnums=tuple(range(len(pos))))(*[asarray(args[p]) for p in pos])


@pytest.mark.parametrize("rec", [r for r in RECORDS if r.grad], ids=lambda r: r.name)
def test_grads_match_jax(rec):
    got = _scalar_loss(rec, njnp, nj.grad, njnp.asarray)
    want = _scalar_loss(rec, jjnp, jax.grad, jjnp.asarray)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-5)

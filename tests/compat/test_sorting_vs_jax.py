"""Sorting, searching, order statistics and set operations: numjax against real JAX.

Runs under ``tox -e compat``. Values (float32 tolerance), dtypes, weak types and shapes of the
same calls, eager and under jit, plus gradients and vmap.
"""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402
from jax import lax as jlax  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402
from numjax import lax as nlax  # noqa: E402

jax.config.update("jax_enable_x64", False)

RNG = np.random.RandomState(1)
F = RNG.randn(5, 8).astype(np.float32)
DUP = RNG.randint(0, 4, (5, 8)).astype(np.float32)
NANS = np.array([[3., np.nan, 1., -0., 0., np.inf, 2., 2.],
                 [np.nan, -np.inf, 2., 2., 1., -1., -np.nan, 0.]], np.float32)
INTS = RNG.randint(-4, 4, (4, 6)).astype(np.int32)
SORTED = np.array([-1., 0., 0., 2., 3., 3., 7.], np.float32)
Q = np.array([[-2., 0., 2.5], [3., 7., 8.]], np.float32)

# (name, fn(module namespace: jnp, lax), args)
CASES = [
    ("sort", lambda jnp, lax: jnp.sort, (NANS,)),
    ("sort_axis0_desc", lambda jnp, lax: lambda a: jnp.sort(a, axis=0, descending=True), (DUP,)),
    ("argsort", lambda jnp, lax: jnp.argsort, (NANS,)),
    ("argsort_desc", lambda jnp, lax: lambda a: jnp.argsort(a, descending=True), (DUP,)),
    ("argsort_none", lambda jnp, lax: lambda a: jnp.argsort(a, axis=None), (INTS,)),
    ("lexsort", lambda jnp, lax: lambda a, b: jnp.lexsort([a, b]), (DUP[0], DUP[1])),
    ("lax_sort_keys", lambda jnp, lax: lambda a, b: lax.sort((a, b), num_keys=2, dimension=0),
     (DUP, F)),
    ("sort_key_val", lambda jnp, lax: lax.sort_key_val, (NANS, NANS * 2)),
    ("top_k", lambda jnp, lax: lambda a: lax.top_k(a, 3), (NANS,)),
    ("top_k_int", lambda jnp, lax: lambda a: lax.top_k(a, 4), (INTS,)),
    ("partition", lambda jnp, lax: lambda a: jnp.partition(a, 3), (F,)),
    ("argpartition", lambda jnp, lax: lambda a: jnp.argpartition(a, 2, axis=0), (F,)),
    ("searchsorted", lambda jnp, lax: jnp.searchsorted, (SORTED, Q)),
    ("searchsorted_right", lambda jnp, lax: lambda a, v: jnp.searchsorted(a, v, side="right"),
     (SORTED, Q)),
    ("searchsorted_int_float", lambda jnp, lax: jnp.searchsorted, (np.arange(5, dtype=np.int32), Q)),
    ("digitize", lambda jnp, lax: jnp.digitize, (Q, SORTED)),
    ("median", lambda jnp, lax: lambda a: jnp.median(a, axis=1), (NANS,)),
    ("median_int", lambda jnp, lax: jnp.median, (INTS,)),
    ("nanmedian", lambda jnp, lax: lambda a: jnp.nanmedian(a, axis=1, keepdims=True), (NANS,)),
    ("quantile", lambda jnp, lax: lambda a: jnp.quantile(a, np.array([.1, .5, .95], np.float32), axis=0),
     (F,)),
    ("quantile_methods", lambda jnp, lax: lambda a: [jnp.quantile(a, .37, axis=1, method=m)
                                                     for m in ("linear", "lower", "higher",
                                                               "midpoint", "nearest")], (F,)),
    ("quantile_axes", lambda jnp, lax: lambda a: jnp.quantile(a, .6, axis=(0, 2)), (F.reshape(5, 2, 4),)),
    ("nanquantile", lambda jnp, lax: lambda a: jnp.nanquantile(a, .8, axis=1), (NANS,)),
    ("percentile", lambda jnp, lax: lambda a: jnp.percentile(a, 25.), (F,)),
    ("nonzero_size", lambda jnp, lax: lambda a: jnp.nonzero(a, size=12, fill_value=-1), (INTS,)),
    ("argwhere_size", lambda jnp, lax: lambda a: jnp.argwhere(a, size=5), (INTS,)),
    ("flatnonzero_size", lambda jnp, lax: lambda a: jnp.flatnonzero(a, size=30), (INTS,)),
    ("count_nonzero", lambda jnp, lax: lambda a: jnp.count_nonzero(a, axis=0, keepdims=True), (INTS,)),
    ("compress_size", lambda jnp, lax: lambda c, a: jnp.compress(c, a, axis=1, size=4, fill_value=9.),
     (np.array([1, 0, 1, 1, 0, 0, 0, 1]), F)),
    ("extract_size", lambda jnp, lax: lambda c, a: jnp.extract(c, a, size=7), (INTS > 0, F[:4, :6])),
    ("bincount", lambda jnp, lax: lambda x: jnp.bincount(x, length=6), (np.array([0, 2, 2, 9, -1], np.int32),)),
    ("histogram", lambda jnp, lax: lambda a: jnp.histogram(a, bins=6), (F,)),
    ("histogram_density", lambda jnp, lax: lambda a, w: jnp.histogram(a, 4, (-1., 1.), w, True),
     (F[0], np.abs(F[1]))),
    ("histogram2d", lambda jnp, lax: lambda x, y: jnp.histogram2d(x, y, bins=3), (F[0], F[1])),
    ("unique_size", lambda jnp, lax: lambda a: jnp.unique(a, return_index=True, return_inverse=True,
                                                          return_counts=True, size=10), (DUP,)),
    ("unique_nan", lambda jnp, lax: lambda a: jnp.unique(a, size=8, fill_value=-3.), (NANS,)),
    ("isin", lambda jnp, lax: jnp.isin, (INTS, np.array([0, 3]))),
    ("setdiff1d", lambda jnp, lax: lambda a, b: jnp.setdiff1d(a, b, size=8), (INTS, np.array([0, 3]))),
    ("union1d", lambda jnp, lax: lambda a, b: jnp.union1d(a, b, size=12), (INTS[0], np.array([9, 3]))),
    ("intersect1d", lambda jnp, lax: lambda a, b: jnp.intersect1d(a, b, size=3), (INTS, np.array([0, 3]))),
    ("setxor1d", lambda jnp, lax: lambda a, b: jnp.setxor1d(a, b, size=9), (INTS[0], np.array([9, 3]))),
]
EAGER_ONLY = [   # no size=: the output shape comes from the data
    ("unique", lambda jnp, lax: lambda a: jnp.unique(a, return_index=True, return_inverse=True,
                                                     return_counts=True), (DUP,)),
    ("unique_axis", lambda jnp, lax: lambda a: jnp.unique(a, axis=0, return_inverse=True), (DUP[:, :2],)),
    ("nonzero", lambda jnp, lax: jnp.nonzero, (INTS,)),
    ("intersect_indices", lambda jnp, lax: lambda a, b: jnp.intersect1d(a, b, return_indices=True),
     (INTS[0], np.array([3, -4, 0, 0]))),
]


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [leaf for v in x for leaf in _leaves(v)]
    return [x]


def _compare(got, want, tol=2e-6):
    g, w = _leaves(got), _leaves(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
        assert getattr(a, "weak_type", False) == getattr(b, "weak_type", False)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol, equal_nan=True)


ALL = CASES + EAGER_ONLY


@pytest.mark.parametrize("case", ALL, ids=[c[0] for c in ALL])
def test_eager(case):
    _, make, args = case
    _compare(make(njnp, nlax)(*args), make(jjnp, jlax)(*args))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_jit(case):
    _, make, args = case
    _compare(nj.jit(make(njnp, nlax))(*args), jax.jit(make(jjnp, jlax))(*args))


GRADS = [
    ("sort", lambda jnp, lax: lambda x: jnp.sum(jnp.sort(x, axis=0) * np.arange(5.)[:, None] ** 2)),
    ("top_k", lambda jnp, lax: lambda x: jnp.sum(lax.top_k(x, 3)[0] ** 2)),
    ("median", lambda jnp, lax: lambda x: jnp.sum(jnp.median(x, axis=1))),
    ("quantile", lambda jnp, lax: lambda x: jnp.sum(jnp.quantile(x, np.array([.2, .9], np.float32)))),
    ("nanpercentile", lambda jnp, lax: lambda x: jnp.nanpercentile(x, 60.)),
]


@pytest.mark.parametrize("case", GRADS, ids=[c[0] for c in GRADS])
def test_grad(case):
    _, make = case
    # Interpolation weights differ from JAX's in the last bits (q * (n - 1) is rounded once).
    _compare(nj.grad(make(njnp, nlax))(F), jax.grad(make(jjnp, jlax))(F), tol=2e-5)


VMAPS = [
    ("sort", lambda jnp, lax: jnp.sort),
    ("argsort_desc", lambda jnp, lax: lambda x: jnp.argsort(x, descending=True)),
    ("top_k", lambda jnp, lax: lambda x: lax.top_k(x, 2)),
    ("searchsorted", lambda jnp, lax: lambda x: jnp.searchsorted(SORTED, x)),
    ("quantile", lambda jnp, lax: lambda x: jnp.quantile(x, .3)),
    ("unique", lambda jnp, lax: lambda x: jnp.unique(x, size=5, return_counts=True)),
    ("nonzero", lambda jnp, lax: lambda x: jnp.nonzero(x, size=4)),
]


@pytest.mark.parametrize("case", VMAPS, ids=[c[0] for c in VMAPS])
def test_vmap(case):
    _, make = case
    _compare(nj.vmap(make(njnp, nlax), in_axes=1)(DUP), jax.vmap(make(jjnp, jlax), in_axes=1)(DUP))


def test_jaxprs_match():
    x = np.ones(9, np.float32)
    # (argsort differs only by the printer: JAX shows its unused sorted keys as `_`.)
    for make in (lambda jnp, lax: jnp.sort, lambda jnp, lax: lambda x: lax.top_k(x, 2),
                 lambda jnp, lax: lambda x: lax.sort((x, x), num_keys=1)):
        assert str(nj.make_jaxpr(make(njnp, nlax))(x)) == str(jax.make_jaxpr(make(jjnp, jlax))(x))


def test_size_errors_match():
    for name in ("nonzero", "unique"):
        with pytest.raises(jax.errors.ConcretizationTypeError) as want:
            jax.jit(getattr(jjnp, name))(INTS)
        with pytest.raises(nj.errors.ConcretizationTypeError) as got:
            nj.jit(getattr(njnp, name))(INTS)
        assert str(got.value).splitlines()[:2] == str(want.value).splitlines()[:2]

"""Sorting, searching, order statistics and set operations: lax.sort/top_k and jnp on top.

A table of records drives (a) values vs numpy, (b) jit vs eager (compiled: no fallback),
(c) vmap vs a Python loop; then gradients, JAX-specific semantics (expected values below came
from JAX 0.10.2 and are committed as data), size=/ConcretizationTypeError behaviour, and
hypothesis properties.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import numjax as jax
import numjax.numpy as jnp
from numjax import lax
from numjax.errors import ConcretizationTypeError
from numjax.test_util import check_grads
from helpers import jit_compiled

RNG = np.random.RandomState(0)
F = RNG.randn(4, 6).astype(np.float32)
DUP = RNG.randint(0, 4, (4, 6)).astype(np.float32)
NANS = np.array([[3., np.nan, 1., -0., 0., np.inf], [np.nan, -np.inf, 2., 2., 1., -1.]], np.float32)
INTS = RNG.randint(-5, 5, (3, 7)).astype(np.int32)
SORTED = np.array([-1., 0., 0., 2., 3., 3., 7.], np.float32)
QUERIES = np.array([[-2., 0., 2.5], [3., 7., 8.]], np.float32)


def _np_argsort_desc(a, axis=-1):
    # Stable descending: equal keys keep ascending indices (JAX's descending argsort).
    n = a.shape[axis]
    rev = np.flip(a, axis)
    return n - 1 - np.flip(np.argsort(rev, axis=axis, kind="stable"), axis)


# (name, numjax fn, numpy fn, args): values must agree with numpy on these inputs.
RECORDS = [
    ("sort", lambda a: jnp.sort(a), lambda a: np.sort(a), (F,)),
    ("sort_axis0", lambda a: jnp.sort(a, axis=0), lambda a: np.sort(a, axis=0), (DUP,)),
    ("sort_none", lambda a: jnp.sort(a, axis=None), lambda a: np.sort(a, axis=None), (NANS,)),
    ("sort_nan", lambda a: jnp.sort(a), lambda a: np.sort(a), (NANS,)),
    ("sort_desc", lambda a: jnp.sort(a, descending=True), lambda a: np.flip(np.sort(a), -1), (DUP,)),
    ("sort_int", lambda a: jnp.sort(a, axis=0), lambda a: np.sort(a, axis=0), (INTS,)),
    ("argsort", lambda a: jnp.argsort(a), lambda a: np.argsort(a, kind="stable"), (DUP,)),
    ("argsort_nan", lambda a: jnp.argsort(a), lambda a: np.argsort(a, kind="stable"), (NANS,)),
    ("argsort_axis0", lambda a: jnp.argsort(a, axis=0), lambda a: np.argsort(a, 0, kind="stable"), (INTS,)),
    ("argsort_desc", lambda a: jnp.argsort(a, descending=True), _np_argsort_desc, (DUP,)),
    ("lexsort", lambda a, b: jnp.lexsort([a, b]), lambda a, b: np.lexsort([a, b]),
     (DUP[0], DUP[1])),
    ("searchsorted_left", lambda a, v: jnp.searchsorted(a, v), lambda a, v: np.searchsorted(a, v),
     (SORTED, QUERIES)),
    ("searchsorted_right", lambda a, v: jnp.searchsorted(a, v, side="right"),
     lambda a, v: np.searchsorted(a, v, side="right"), (SORTED, QUERIES)),
    ("digitize", lambda x, b: jnp.digitize(x, b), lambda x, b: np.digitize(x, b), (QUERIES, SORTED)),
    ("digitize_right", lambda x, b: jnp.digitize(x, b, right=True),
     lambda x, b: np.digitize(x, b, right=True), (QUERIES, SORTED[::-1].copy())),
    ("median", lambda a: jnp.median(a), lambda a: np.median(a), (F,)),
    ("median_axis", lambda a: jnp.median(a, axis=1), lambda a: np.median(a, axis=1), (DUP,)),
    ("median_nan", lambda a: jnp.median(a, axis=1), lambda a: np.median(a, axis=1), (NANS,)),
    ("nanmedian", lambda a: jnp.nanmedian(a, axis=1), lambda a: np.nanmedian(a, axis=1), (NANS,)),
    ("quantile_q", lambda a: jnp.quantile(a, np.array([0., .3, .5, 1.], np.float32), axis=0),
     lambda a: np.quantile(a, [0., .3, .5, 1.], axis=0), (F,)),
    ("quantile_tuple", lambda a: jnp.quantile(a, .25, axis=(0, 2), keepdims=True),
     lambda a: np.quantile(a, .25, axis=(0, 2), keepdims=True), (F.reshape(2, 3, 4),)),
    ("quantile_lower", lambda a: jnp.quantile(a, .3, axis=1, method="lower"),
     lambda a: np.quantile(a, .3, axis=1, method="lower"), (F,)),
    ("quantile_higher", lambda a: jnp.quantile(a, .3, axis=1, method="higher"),
     lambda a: np.quantile(a, .3, axis=1, method="higher"), (F,)),
    ("quantile_midpoint", lambda a: jnp.quantile(a, .3, axis=1, method="midpoint"),
     lambda a: np.quantile(a, .3, axis=1, method="midpoint"), (F,)),
    ("nanquantile", lambda a: jnp.nanquantile(a, .7, axis=1), lambda a: np.nanquantile(a, .7, axis=1),
     (NANS,)),
    ("percentile", lambda a: jnp.percentile(a, 40.), lambda a: np.percentile(a, 40.), (INTS,)),
    ("nanpercentile", lambda a: jnp.nanpercentile(a, 90., axis=0),
     lambda a: np.nanpercentile(a, 90., axis=0), (np.where(np.isinf(NANS), 5., NANS),)),
    ("count_nonzero", lambda a: jnp.count_nonzero(a, axis=1), lambda a: np.count_nonzero(a, axis=1),
     (INTS,)),
    ("nonzero_size", lambda a: jnp.nonzero(a, size=30, fill_value=-1),
     lambda a: tuple(np.concatenate([i, -np.ones(30 - len(i), int)]) for i in np.nonzero(a)), (INTS,)),
    ("flatnonzero_size", lambda a: jnp.flatnonzero(a, size=5),
     lambda a: np.flatnonzero(a)[:5], (INTS,)),
    ("argwhere_size", lambda a: jnp.argwhere(a, size=4), lambda a: np.argwhere(a)[:4], (INTS,)),
    ("extract_size", lambda c, a: jnp.extract(c, a, size=4), lambda c, a: np.extract(c, a)[:4],
     (INTS > 0, F[:3, :7] if F.shape[1] >= 7 else RNG.randn(3, 7).astype(np.float32))),
    ("compress_size", lambda c, a: jnp.compress(c, a, axis=1, size=2),
     lambda c, a: np.compress(c, a, axis=1)[:, :2], (np.array([0, 1, 0, 1, 1, 0]), F)),
    ("bincount", lambda x, w: jnp.bincount(x, w, length=8), lambda x, w: np.bincount(x, w, minlength=8),
     (np.array([0, 3, 3, 1, 7, 0], np.int32), np.arange(6, dtype=np.float32))),
    ("histogram", lambda a: jnp.histogram(a, bins=5), lambda a: np.histogram(a, bins=5), (F.ravel(),)),
    ("histogram_range", lambda a: jnp.histogram(a, bins=4, range=(-1., 1.), density=True),
     lambda a: np.histogram(a, bins=4, range=(-1., 1.), density=True), (F.ravel(),)),
    ("unique_size", lambda a: jnp.unique(a, size=8, return_index=True, return_inverse=True,
                                         return_counts=True),
     lambda a: _np_unique_padded(a, 8), (DUP.ravel(),)),
    ("isin", lambda a, b: jnp.isin(a, b), lambda a, b: np.isin(a, b), (INTS, np.array([0, 2, 4]))),
    ("isin_invert", lambda a, b: jnp.isin(a, b, invert=True), lambda a, b: np.isin(a, b, invert=True),
     (INTS, np.array([-5, 3]))),
]


def _np_unique_padded(a, size):
    u, idx, inv, cnt = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    k = size - len(u)
    return (np.concatenate([u, np.full(k, u[0])]), np.concatenate([idx, np.full(k, idx[0])]),
            inv, np.concatenate([cnt, np.zeros(k, int)]))


IDS = [r[0] for r in RECORDS]
# Records compiled in the default run (each costs a Numba compile); all of them with --runslow.
JIT_DEFAULT = {"sort_nan", "quantile_q"}


def _assert_tree_close(got, want, rtol=1e-5, atol=1e-6):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            _assert_tree_close(g, w, rtol, atol)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    if w.dtype.kind in "iub":
        np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("rec", RECORDS, ids=IDS)
def test_values_vs_numpy(rec):
    _, fn, np_fn, args = rec
    _assert_tree_close(fn(*args), np_fn(*args))


@pytest.mark.parametrize("rec", [pytest.param(r, marks=() if r[0] in JIT_DEFAULT else pytest.mark.slow)
                                 for r in RECORDS], ids=IDS)
def test_jit_vs_eager(rec):
    _, fn, _, args = rec
    _assert_tree_close(jit_compiled(fn, *args), fn(*args), rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------- lax.sort / top_k

def test_lax_sort_total_order_and_stability():
    keys = np.array([0., np.nan, -0., 1., -np.nan, -np.inf, np.inf, -0., 0.], np.float32)
    out, perm = lax.sort([keys, np.arange(9, dtype=np.int32)], num_keys=1)
    # JAX 0.10.2: -0.0 == 0.0 and all NaNs equal (stable among themselves), NaNs last.
    np.testing.assert_array_equal(perm, [5, 0, 2, 7, 8, 3, 6, 1, 4])
    np.testing.assert_array_equal(np.signbit(out), np.signbit(keys[[5, 0, 2, 7, 8, 3, 6, 1, 4]]))
    jit_out, jit_perm = jit_compiled(lambda k, i: lax.sort([k, i], num_keys=1), keys,
                                  np.arange(9, dtype=np.int32))
    np.testing.assert_array_equal(jit_perm, perm)
    np.testing.assert_array_equal(np.signbit(jit_out), np.signbit(out))


@pytest.mark.slow
def test_lax_sort_multiple_keys():
    a = np.array([[1, 0, 1, 0, 1], [2, 2, 1, 1, 0]], np.int32)
    b = np.array([[3., 1., 2., 1., 3.], [0., 1., 2., 3., 4.]], np.float32)
    c = np.arange(10, dtype=np.int32).reshape(2, 5)
    for fn in (lambda a, b, c: lax.sort((a, b, c), num_keys=2),
               jax.jit(lambda a, b, c: lax.sort((a, b, c), num_keys=2))):
        sa, sb, sc = fn(a, b, c)
        want = np.stack([np.lexsort((b[i], a[i])) for i in range(2)])
        np.testing.assert_array_equal(sc, np.take_along_axis(c, want, 1))
        np.testing.assert_array_equal(sa, np.take_along_axis(a, want, 1))


def test_sort_key_val_and_shapes():
    k, v = lax.sort_key_val(np.array([3, 1, 2], np.int32), np.array([10., 20., 30.], np.float32))
    np.testing.assert_array_equal(k, [1, 2, 3])
    np.testing.assert_array_equal(v, [20., 30., 10.])
    assert isinstance(lax.sort((k, v)), tuple) and not isinstance(lax.sort(k), tuple)
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 1"):
        lax.sort(np.ones(3), dimension=2)


def test_top_k_semantics():
    # JAX 0.10.2: the raw IEEE total order (-NaN smallest, NaN largest, 0.0 > -0.0); ties keep
    # the lower index first.
    x = np.array([0., np.nan, -0., 1., -np.nan, -np.inf, np.inf, -0., 0.], np.float32)
    vals, idx = lax.top_k(x, 4)
    np.testing.assert_array_equal(idx, [1, 6, 3, 0])
    assert idx.dtype == np.int32
    vals, idx = lax.top_k(np.array([1, 3, 3, 2, 3], np.int32), 3)
    np.testing.assert_array_equal(idx, [1, 2, 4])
    vals, idx = lax.top_k(np.array([-0., 0.], np.float32), 1)
    np.testing.assert_array_equal(idx, [1])
    with pytest.raises(ValueError, match="k argument to top_k must be no larger"):
        lax.top_k(np.ones(3), 4)


@pytest.mark.slow
def test_top_k_matches_argsort_on_distinct_values():
    x = np.array([0., np.nan, -0., 1., -np.nan, -np.inf, np.inf, -0., 0.], np.float32)
    np.testing.assert_array_equal(jit_compiled(lambda x: lax.top_k(x, 4), x)[1], [1, 6, 3, 0])
    x = RNG.randn(3, 5, 9).astype(np.float32)
    for axis in (-1, 1):
        vals, idx = jit_compiled(lambda x: lax.top_k(x, 3, axis=axis), x)
        want = np.take(np.flip(np.argsort(x, axis=axis), axis), np.arange(3), axis=axis)
        np.testing.assert_array_equal(idx, want)
        np.testing.assert_allclose(vals, np.take_along_axis(x, want, axis))


# ---------------------------------------------------------------- JAX-specific jnp semantics

def test_partition_matches_jax():
    # Expected values from JAX 0.10.2.
    a = np.array([5, 3, 1, 4, 2.], np.float32)
    np.testing.assert_array_equal(jnp.partition(a, 2), [1., 2., 3., 5., 4.])
    np.testing.assert_array_equal(jnp.argpartition(a, 2), [2, 4, 1, 0, 3])
    x = RNG.randn(3, 8).astype(np.float32)
    p = jnp.partition(x, 3, axis=1)
    np.testing.assert_allclose(p[:, 3], np.sort(x, 1)[:, 3])
    idx = np.asarray(jnp.argpartition(x, 3, axis=1))
    assert all(sorted(r) == list(range(8)) for r in idx.tolist())


@pytest.mark.parametrize("dt", [np.uint8, np.uint32])
def test_partition_of_unsigned(dt):
    # Unsigned values cannot be negated to flip the order (0 and 255 would swap places);
    # expected values from JAX 0.10.2.
    x = np.array([200, 3, 0, 7, 255, 1, 3], dt)
    np.testing.assert_array_equal(jnp.partition(x, 2), [0, 1, 3, 255, 200, 7, 3])
    np.testing.assert_array_equal(jnp.argpartition(x, 2), [2, 5, 1, 0, 3, 4, 6])
    np.testing.assert_array_equal(jnp.partition(x, 5), [0, 1, 3, 3, 7, 200, 255])


def test_quantile_nearest_rounds_ties_down_as_jax():
    # numpy rounds 1.5 to 2; JAX 0.10.2 picks the lower entry on ties.
    out = jnp.quantile(np.arange(4.), np.array([0.5, 1 / 6, 0.5 / 3]), method="nearest")
    np.testing.assert_array_equal(out, [1., 0., 0.])


def test_quantile_dtypes():
    assert jnp.median(np.array([1, 2, 3, 4], np.int32)).dtype == np.float32
    assert not jnp.quantile(jnp.arange(4.), 0.5).weak_type
    assert jnp.quantile(F, np.array([.1, .9]), axis=1, keepdims=True).shape == (2, 4, 1)


def test_unique_matches_jax():
    x = np.array([3, 1, 3, 2, 1, 7], np.int32)
    # Expected values from JAX 0.10.2.
    vals, idx, inv, cnt = jnp.unique(x, size=6, return_index=True, return_inverse=True,
                                     return_counts=True)
    np.testing.assert_array_equal(vals, [1, 2, 3, 7, 1, 1])
    np.testing.assert_array_equal(idx, [1, 3, 0, 5, 1, 1])
    np.testing.assert_array_equal(inv, [2, 0, 2, 1, 0, 3])
    np.testing.assert_array_equal(cnt, [2, 1, 2, 1, 0, 0])
    u = jnp.unique(np.array([np.nan, 1., np.nan, -0., 0.], np.float32))
    np.testing.assert_array_equal(np.signbit(u), [True, False, False])
    assert np.isnan(u[2]) and u.shape == (3,)
    assert jnp.unique(np.array([np.nan, 1., np.nan], np.float32), equal_nan=False).shape == (3,)
    rows, inv, cnt = jnp.unique(np.array([[1, 2], [1, 2], [0, 5]]), axis=0, return_inverse=True,
                                return_counts=True)
    np.testing.assert_array_equal(rows, [[0, 5], [1, 2]])
    np.testing.assert_array_equal(inv, [1, 1, 0])
    np.testing.assert_array_equal(cnt, [1, 2])
    assert jnp.unique_inverse(np.array([[1, 2], [1, 2]])).inverse_indices.shape == (2, 2)
    assert jnp.unique_all(x)._fields == ("values", "indices", "inverse_indices", "counts")


def test_set_operations_match_jax():
    x = np.array([3, 1, 3, 2, 1, 7], np.int32)
    # Expected values from JAX 0.10.2 (fill defaults: 0 for setdiff1d, else the smallest value).
    np.testing.assert_array_equal(jnp.setdiff1d(x, np.array([1, 2]), size=4), [3, 7, 0, 0])
    np.testing.assert_array_equal(jnp.union1d(x, np.array([9]), size=7), [1, 2, 3, 7, 9, 1, 1])
    np.testing.assert_array_equal(jnp.intersect1d(x, np.array([7, 1, 0]), size=3), [1, 7, 1])
    np.testing.assert_array_equal(jnp.setxor1d(x, np.array([7, 0]), size=5), [0, 1, 2, 3, 0])
    np.testing.assert_array_equal(jnp.setxor1d(np.array([3, 5]), np.array([5, 9]), size=3), [3, 9, 3])
    v, i1, i2 = jnp.intersect1d(x, np.array([7, 1, 0, 1]), return_indices=True)
    np.testing.assert_array_equal(v, [1, 7])
    np.testing.assert_array_equal(i1, [1, 5])
    np.testing.assert_array_equal(i2, [1, 0])
    np.testing.assert_array_equal(jnp.union1d(x, np.array([9, -1])), np.union1d(x, [9, -1]))
    np.testing.assert_array_equal(jnp.setdiff1d(x, np.array([3])), np.setdiff1d(x, [3]))
    np.testing.assert_array_equal(jnp.setxor1d(x, np.array([3, 8])), np.setxor1d(x, [3, 8]))


@pytest.mark.slow
def test_set_operations_compile():
    x = np.array([3, 1, 3, 2, 1, 7], np.int32)
    sets = jit_compiled(lambda x: (jnp.setdiff1d(x, np.array([1, 2]), size=4),
                                jnp.intersect1d(x, np.array([7, 1, 0]), size=3)), x)
    np.testing.assert_array_equal(sets[0], [3, 7, 0, 0])
    np.testing.assert_array_equal(sets[1], [1, 7, 1])


def test_histogramdd_and_2d():
    x = np.array([0.1, 0.5, 0.9, 0.3], np.float32)
    y = np.array([1., 2., 2., 3.], np.float32)
    h, ex, ey = jnp.histogram2d(x, y, bins=3)
    wh, wx, wy = np.histogram2d(x, y, bins=3)
    np.testing.assert_array_equal(h, wh)
    np.testing.assert_allclose(ex, wx, rtol=1e-6)
    h, edges = jnp.histogramdd(np.stack([x, y], 1), bins=[2, 3], density=True)
    wh, wedges = np.histogramdd(np.stack([x, y], 1), bins=[2, 3], density=True)
    np.testing.assert_allclose(h, wh, rtol=1e-5)
    assert jnp.histogram(np.arange(5))[0].dtype == np.float32   # JAX counts in a float dtype


def test_array_methods():
    for x in (jnp.asarray(DUP), ):
        np.testing.assert_array_equal(x.sort(axis=0), np.sort(DUP, axis=0))
        np.testing.assert_array_equal(x.argsort(), np.argsort(DUP, kind="stable"))
        np.testing.assert_array_equal(x.nonzero()[1], np.nonzero(DUP)[1])
    traced = jax.make_jaxpr(lambda x: (x.sort(), x.argsort(), x.nonzero(size=3)[0]))(DUP)
    assert "sort[" in str(traced)


# ---------------------------------------------------------------- size= and tracing errors

@pytest.mark.parametrize("fn, message", [
    (jnp.nonzero, "The size argument of jnp.nonzero must be statically specified"),
    (jnp.flatnonzero, "The size argument of jnp.nonzero must be statically specified"),
    (jnp.argwhere, "The size argument of jnp.nonzero must be statically specified"),
    (jnp.unique, "To make jnp.unique() compatible with JIT"),
    (lambda x: jnp.union1d(x, x), "To make jnp.union1d() compatible with JIT"),
    (lambda x: jnp.extract(x > 0, x), "The size argument of jnp.compress must be statically"),
    (jnp.bincount, "pass a static `length` argument"),
])
def test_size_dependent_functions_need_size_under_jit(fn, message):
    with pytest.raises(ConcretizationTypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        jax.jit(fn)(np.array([0, 1, 2, 0], np.int32))


def test_nonzero_error_names_the_count_as_jax():
    with pytest.raises(ConcretizationTypeError) as info:
        jax.jit(jnp.nonzero)(np.array([0, 1], np.int32))
    assert str(info.value).startswith("Abstract tracer value encountered where concrete value is "
                                      "expected: traced array with shape int32[]\n")


def test_nonzero_size_fill_and_vmap():
    x = np.array([[0, 3, 0, 1], [2, 0, 0, 0]], np.int32)
    rows = jax.vmap(lambda r: jnp.nonzero(r, size=3, fill_value=-1)[0])(x)
    np.testing.assert_array_equal(rows, [[1, 3, -1], [0, -1, -1]])
    r, c = jnp.nonzero(x, size=2, fill_value=(7, 8))
    np.testing.assert_array_equal(r, [0, 0])
    np.testing.assert_array_equal(c, [1, 3])
    r, c = jnp.nonzero(x, size=5, fill_value=(7, 8))
    np.testing.assert_array_equal(r, [0, 0, 1, 7, 7])
    np.testing.assert_array_equal(c, [1, 3, 0, 8, 8])
    with pytest.raises(ValueError, match="Calling nonzero on 0d arrays is not allowed"):
        jnp.nonzero(np.int32(1))


# ---------------------------------------------------------------- gradients

def test_grads_sort_and_top_k():
    x = RNG.randn(3, 5).astype(np.float32)
    check_grads(lambda x: lax.sort(x, dimension=0), (x,), order=2, modes=("fwd", "rev"))
    check_grads(lambda x: jnp.sort(x, axis=1, descending=True), (x,), order=1)
    check_grads(lambda x, y: lax.sort((x, y), num_keys=1)[1], (x, x * 2), order=1)
    check_grads(lambda x: lax.top_k(x, 2)[0], (x,), order=2)


def test_grads_quantile_and_median():
    x = RNG.randn(4, 7).astype(np.float32)
    check_grads(lambda x: jnp.median(x, axis=1), (x,), order=1)
    check_grads(lambda x: jnp.quantile(x, np.array([.2, .75], np.float32), axis=0), (x,), order=2)
    check_grads(lambda x: jnp.nanpercentile(x, 35.), (x,), order=1)
    # The derivative lands on the entries the interpolation reads: 0.5 each for an even median.
    g = jax.grad(lambda x: jnp.median(x))(np.array([4., 1., 3., 2.], np.float32))
    np.testing.assert_allclose(g, [0., 0., 0.5, 0.5])


def test_grad_under_jit_compiles():
    x = RNG.randn(6).astype(np.float32)
    g = jit_compiled(jax.grad(lambda x: jnp.sum(lax.top_k(x, 3)[0] * np.arange(3.)) + jnp.median(x)), x)
    np.testing.assert_allclose(g, jax.grad(lambda x: jnp.sum(lax.top_k(x, 3)[0] * np.arange(3.))
                                           + jnp.median(x))(x))


# ---------------------------------------------------------------- vmap

VMAP_CASES = [
    ("sort", lambda x: jnp.sort(x)),
    ("argsort_desc", lambda x: jnp.argsort(x, descending=True)),
    ("top_k", lambda x: lax.top_k(x, 2)),
    ("searchsorted", lambda x: jnp.searchsorted(jnp.sort(x), x[:3])),
    ("quantile", lambda x: jnp.quantile(x, np.array([.1, .5], np.float32))),
    ("unique", lambda x: jnp.unique(x, size=4, return_counts=True)),
    ("grad_sort", jax.grad(lambda x: jnp.sum(jnp.sort(x) * np.arange(6.)))),
]


@pytest.mark.parametrize("fn", [c[1] for c in VMAP_CASES], ids=[c[0] for c in VMAP_CASES])
@pytest.mark.parametrize("in_axis", [0, 1])
def test_vmap_vs_loop(fn, in_axis):
    x = DUP if in_axis == 0 else DUP.T.copy()
    got = jax.vmap(fn, in_axes=in_axis)(x)
    rows = [fn(np.take(x, i, axis=in_axis)) for i in range(x.shape[in_axis])]
    want = jax.tree_util.tree_map(lambda *r: np.stack([np.asarray(v) for v in r]), *rows)
    _assert_tree_close(got, want)


# ---------------------------------------------------------------- properties

_floats = hnp.arrays(np.float32, st.integers(1, 12),
                     elements=st.sampled_from([0., -0., 1., -1., 2.5, np.inf, -np.inf, np.nan]))


@settings(max_examples=40, deadline=None)
@given(_floats)
def test_property_sort_is_a_stable_total_order(x):
    out, perm = lax.sort([x, np.arange(x.size, dtype=np.int32)], num_keys=1)
    np.testing.assert_array_equal(np.sort(perm), np.arange(x.size))
    np.testing.assert_array_equal(out.view(np.int32), x[np.asarray(perm)].view(np.int32))
    # numpy's stable sort is the same order once -0.0 and 0.0 are made equal (NaNs are last).
    canon = np.where(x == 0, np.float32(0), x)
    np.testing.assert_array_equal(perm, np.argsort(canon, kind="stable"))


@settings(max_examples=40, deadline=None)
@given(_floats)
def test_property_argsort_descending_reverses_stably(x):
    canon = np.where(x == 0, np.float32(0), x)
    got = np.asarray(jnp.argsort(x, descending=True))
    np.testing.assert_array_equal(got, _np_argsort_desc(canon))


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.int32, st.integers(1, 15), elements=st.integers(-3, 3)),
       hnp.arrays(np.int32, st.integers(0, 6), elements=st.integers(-4, 4)),
       st.sampled_from(["left", "right"]))
def test_property_searchsorted(a, v, side):
    a = np.sort(a)
    np.testing.assert_array_equal(jnp.searchsorted(a, v, side=side), np.searchsorted(a, v, side=side))


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float32, st.integers(1, 12),
                  elements=st.sampled_from([0., 1., -1., 2.5, np.inf, np.nan])))
def test_property_unique(x):
    vals, idx, inv, cnt = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=True)
    for g, w in zip((vals, idx, inv, cnt), want):
        np.testing.assert_array_equal(np.asarray(g), w)

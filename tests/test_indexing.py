"""Indexing: x[idx] against NumPy, x.at[idx] updates, take/take_along_axis/put, lax.gather/scatter.

Expected values for JAX-specific behaviour (out-of-bounds clamping and filling, mode names,
dtype casts, printed jaxprs) were produced by real JAX 0.10.2 and are committed as literals.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import numjax
import numjax.numpy as jnp
from numjax import lax
from numjax.errors import NonConcreteBooleanIndexError
from numjax.test_util import check_grads
from helpers import jit_compiled

X = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)

# (id, index) pairs; every index is valid NumPy, and JAX gives NumPy's result for it.
INDEX_CASES = [
    ("int", (1,)),
    ("neg_int", (-1, 2)),
    ("slices", (slice(None), slice(1, 3), slice(None, None, 2))),
    ("neg_step", (slice(None, None, -1), slice(None), slice(3, 0, -2))),
    ("none_ellipsis", (None, Ellipsis, 1, None)),
    ("int_array", (np.array([1, 0, 1]),)),
    ("list_in_tuple", (slice(None), [0, 2])),
    ("two_arrays", ([0, 1], [1, 2])),
    ("broadcast_arrays", (np.array([[0], [1]]), slice(None), np.array([0, 3, 1]))),
    ("split_by_slice", (slice(None), [0, 1], slice(None), [1, 2])),
    ("int_split_by_slice", (slice(None), 0, slice(None), [1, 2])),
    ("none_splits", (Ellipsis, 0, None, [1, 2])),
    ("negative_array", (-1, np.array([-1, -3, 0]))),
    ("array_and_neg_slice", ([0, 1], slice(None, None, -1), [1, 2])),
    ("strided_and_array", (slice(1, None, 2), slice(None, None, -2), [[1], [3]])),
    ("mask", (X[..., 0, 0] > 20,)),
    ("mask_inner", (slice(None), X[0, :, :, 0] > 30)),
    ("bool_true", (True,)),
    ("bool_false", (False,)),
    ("int_and_bool", (0, True)),
    ("tuple_entry", ((1, 0),)),
    ("np_scalars", (np.int32(1), slice(None), np.array(2))),
    ("empty_array", (np.zeros((0,), np.int32),)),
]
JIT_DEFAULT = {"int_array", "split_by_slice", "strided_and_array", "none_splits"}


def _has_mask(idx):
    return any(isinstance(i, np.ndarray) and i.dtype == bool for i in idx)


@pytest.mark.parametrize("name,idx", INDEX_CASES, ids=[c[0] for c in INDEX_CASES])
def test_getitem_vs_numpy(name, idx):
    out = jnp.asarray(X)[idx]
    expected = X[idx]
    assert out.shape == expected.shape and out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), expected)


def _jit_cases(default_only):
    out = []
    for name, idx in INDEX_CASES:
        if _has_mask(idx):
            continue
        marks = () if name in JIT_DEFAULT else (pytest.mark.slow,)
        if default_only and marks:
            continue
        out.append(pytest.param(name, idx, id=name, marks=marks))
    return out


@pytest.mark.parametrize("name,idx", _jit_cases(False))
def test_getitem_jit_vs_numpy(name, idx):
    out = jit_compiled(lambda a: a[idx], jnp.asarray(X))
    np.testing.assert_array_equal(np.asarray(out), X[idx])


def test_traced_index_arrays_under_jit():
    i, j = np.array([2, -1, 0]), np.array([[1], [3]])
    out = jit_compiled(lambda a, i, j: a[:, i, j], jnp.asarray(X), jnp.asarray(i), jnp.asarray(j))
    np.testing.assert_array_equal(np.asarray(out), X[:, i, j])


def test_basic_indexing_stays_slicing():
    # Static ints and slices lower to slice/squeeze/rev, as in JAX; no gather.
    jaxpr = numjax.make_jaxpr(lambda a: a[1, ::-2, None, 1:3])(jnp.asarray(X))
    prims = {e.primitive.name for e in jaxpr.eqns}
    assert "gather" not in prims and "slice" in prims and "rev" in prims


def test_gather_jaxpr_prints_like_jax():
    # str(jax.make_jaxpr(lambda x: x[jnp.array([1, 2])])(jnp.arange(5.))) in JAX 0.10.2
    expected = """{ lambda a:i32[2]; b:f32[5]. let
    c:bool[2] = lt a 0:i32[]
    d:i32[2] = add a 5:i32[]
    e:i32[2] = select_n c a d
    f:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    g:f32[2] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1,)
      unique_indices=False
    ] b f
  in (g,) }"""
    assert str(numjax.make_jaxpr(lambda x: x[jnp.array([1, 2])])(jnp.arange(5.))) == expected


def test_scatter_add_jaxpr_prints_like_jax():
    expected = """{ lambda ; a:f32[5]. let
    b:i32[1] = broadcast_in_dim 1:i32[]
    c:f32[5] = scatter-add[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = add d e in (f,) }
    ] a b 1.0:f32[]
  in (c,) }"""
    assert str(numjax.make_jaxpr(lambda x: x.at[1].add(1.))(jnp.arange(5.))) == expected


# ---------------------------------------------------------------- out of bounds (values from JAX)

def test_out_of_bounds_getitem_clamps():
    a = jnp.arange(10)
    assert int(a[11]) == 9 and int(a[-11]) == 0
    np.testing.assert_array_equal(np.asarray(a[jnp.array([11, -11, -12, 100])]), [9, 0, 0, 9])


def test_at_get_modes():
    x = jnp.arange(10.)
    i = jnp.array([11, -1, -11])
    np.testing.assert_array_equal(np.asarray(x.at[i].get(mode="fill", fill_value=-5)), [-5, 9, -5])
    np.testing.assert_array_equal(np.asarray(x.at[i].get()), [9, 9, 0])
    np.testing.assert_array_equal(np.asarray(x.at[jnp.array([-1, 17, -17])].get(mode="clip")), [9, 9, 0])
    np.testing.assert_array_equal(np.asarray(jnp.arange(3).at[jnp.array([5])].get(mode="fill")),
                                  [np.iinfo(np.int32).min])
    assert np.isnan(np.asarray(x.at[jnp.array([12])].get(mode="fill"))).all()


def test_at_set_out_of_bounds_dropped_or_clipped():
    x = jnp.arange(10.)
    i = jnp.array([11, -1, -11])
    np.testing.assert_array_equal(np.asarray(x.at[i].set(100.)), [0, 1, 2, 3, 4, 5, 6, 7, 8, 100])
    np.testing.assert_array_equal(np.asarray(x.at[i].set(100., mode="clip")),
                                  [100, 1, 2, 3, 4, 5, 6, 7, 8, 100])


def test_at_update_methods():
    x = jnp.arange(5.)
    i = jnp.array([1, 1, 3])
    u = jnp.array([2., 3., 4.])
    xn = np.arange(5.)
    cases = {
        "add": (x.at[i].add(u), [0, 6, 2, 7, 4]),
        "subtract": (x.at[i].subtract(u), [0, -4, 2, -1, 4]),
        "multiply": (x.at[i].multiply(u), [0, 6, 2, 12, 4]),
        "mul": (x.at[i].mul(u), [0, 6, 2, 12, 4]),
        "min": (x.at[i].min(u), [0, 1, 2, 3, 4]),
        "max": (x.at[i].max(u), [0, 3, 2, 4, 4]),
        "divide": (x.at[i].divide(u), xn / np.array([1, 6, 1, 4, 1])),
        "power": (x.at[i].power(u), xn ** np.array([1, 6, 1, 4, 1])),
        "apply": (x.at[i].apply(lambda v: v * 2 + 1), [0, 7, 2, 7, 4]),
        "set_last_wins": (x.at[i].set(u), [0, 3, 2, 4, 4]),
        "get": (x.at[i].get(), [1, 1, 3]),
    }
    for name, (got, want) in cases.items():
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, err_msg=name)


def test_at_dtypes_follow_jax():
    # Updates are cast to the operand dtype (2.7 -> 2), int8 wraps; divide gives a float.
    assert jnp.arange(10).at[jnp.array([1])].add(2.7).tolist()[:3] == [0, 3, 2]
    assert jnp.arange(5, dtype=jnp.int8).at[1].add(200).tolist()[1] == -55
    d = jnp.arange(5).at[1].divide(2)
    assert d.dtype == np.float32 and d.tolist()[1] == 0.5
    assert jnp.arange(5.).at[1].set(2).weak_type is False
    assert jnp.full((), 1.5).at[()].set(2).weak_type is True   # a weak operand stays weak


def test_at_with_slices_and_newaxis():
    xn = np.zeros((4, 6), np.float32)
    x = jnp.asarray(xn)
    for idx in [(slice(None, None, -1), slice(1, 5, 2)), (None, 1, slice(None)), (Ellipsis, [0, 2]),
                (slice(1, 3), None, [5, -1]), (True, 0)]:
        expected = xn.copy()
        upd = np.arange(expected[idx].size, dtype=np.float32).reshape(expected[idx].shape) + 1
        expected[idx] = upd
        np.testing.assert_array_equal(np.asarray(x.at[idx].set(upd)), expected, err_msg=str(idx))


def test_take_modes():
    x = jnp.arange(5.)
    i = jnp.array([-1, 7, -7])
    np.testing.assert_array_equal(np.asarray(jnp.take(x, i, mode="clip")), [0, 4, 0])
    np.testing.assert_array_equal(np.asarray(jnp.take(x, i, mode="wrap")), [4, 2, 3])
    np.testing.assert_array_equal(np.asarray(jnp.take(x, i, mode="fill", fill_value=3)), [4, 3, 3])
    np.testing.assert_array_equal(np.asarray(jnp.take(jnp.arange(5), jnp.array([11, -1]))),
                                  [np.iinfo(np.int32).min, 4])
    a = np.arange(24.).reshape(2, 3, 4)
    idx = np.array([[0, 2], [1, 1]])
    np.testing.assert_array_equal(np.asarray(jnp.take(a, idx, axis=1)), np.take(a, idx, axis=1))
    np.testing.assert_array_equal(np.asarray(jnp.take(a, idx)), np.take(a, idx))
    with pytest.raises(NotImplementedError, match="'raise' mode"):
        jnp.take(x, i, mode="raise")


def test_take_along_axis():
    a = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    idx = np.argsort(a, axis=1)
    for axis in (0, 1, -1):
        i = np.argsort(a, axis=axis)
        np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(a, i, axis)),
                                      np.take_along_axis(a, i, axis))
    np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(a, idx[:, :2, :1], 1)),
                                  np.take_along_axis(a, idx[:, :2, :1], 1))
    b = jnp.arange(6.).reshape(2, 3)
    assert np.asarray(jnp.take_along_axis(b, jnp.array([[-1], [-4]]), axis=1)).tolist()[0] == [2.0]
    assert np.isnan(np.asarray(jnp.take_along_axis(b, jnp.array([[-1], [-4]]), axis=1))[1, 0])
    np.testing.assert_array_equal(
        np.asarray(jnp.take_along_axis(b, jnp.array([[-1], [-4]]), axis=1, mode="clip")), [[2], [3]])


def test_put():
    x = jnp.arange(5.)
    i, v = jnp.array([1, 7, -1, 3]), jnp.array([10., 20.])
    np.testing.assert_array_equal(np.asarray(jnp.put(x, i, v, inplace=False)), [0, 10, 2, 20, 10])
    np.testing.assert_array_equal(np.asarray(jnp.put(x, i, v, mode="clip", inplace=False)),
                                  [10, 10, 2, 20, 20])
    np.testing.assert_array_equal(np.asarray(jnp.put(x, i, v, mode="wrap", inplace=False)),
                                  [0, 10, 20, 20, 10])
    with pytest.raises(ValueError, match="cannot modify arrays in-place"):
        jnp.put(x, i, v)


# ---------------------------------------------------------------- errors

def test_boolean_mask_under_jit_raises():
    with pytest.raises(NonConcreteBooleanIndexError, match=r"Array boolean indices must be concrete; got bool\[5\]"):
        numjax.jit(lambda x: x[x > 2])(jnp.arange(5.))
    # A scalar boolean is fine, and so is a concrete mask under grad.
    assert numjax.jit(lambda x: x[True])(jnp.arange(5.)).shape == (1, 5)
    g = numjax.grad(lambda x: x[jnp.array([True, False, True])].sum())(jnp.arange(3.))
    np.testing.assert_array_equal(np.asarray(g), [1, 0, 1])


@pytest.mark.parametrize("fn,exc,msg", [
    (lambda x: x[[0, 1]], TypeError, "non-tuple sequence"),
    (lambda x: x[1.0], TypeError, "Indexer must have integer or boolean type, got indexer with type float64"),
    (lambda x: x[jnp.array([1.0])], TypeError, "got indexer with type float32"),
    (lambda x: x[0, 0], IndexError, "Too many indices: array is 1-dimensional, but 2 were indexed"),
    (lambda x: x[jnp.array([True, False])], IndexError, r"got \(2,\), expected \[5\]"),
    (lambda x: x["a"], TypeError, "string indexing"),
    (lambda x: x.at[0].get(mode="bad"), ValueError, 'Unknown gather mode "bad"'),
    (lambda x: x.at[0].set(jnp.ones(3)), ValueError, "Cannot broadcast"),
])
def test_index_errors(fn, exc, msg):
    with pytest.raises(exc, match=msg):
        fn(jnp.arange(5.))


def test_traced_slice_bounds_raise():
    with pytest.raises(IndexError, match="Slice entries must be static integers"):
        numjax.jit(lambda x, i: x[i:i + 2])(jnp.arange(5.), 1)


def test_lax_gather_shape_errors():
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    x, i = jnp.ones((4, 5)), jnp.zeros((3, 1), jnp.int32)
    with pytest.raises(TypeError, match="slice_sizes"):
        lax.gather(x, i, dn, (1, 6))
    with pytest.raises(TypeError, match="collapse"):
        lax.gather(x, i, dn, (2, 5))
    with pytest.raises(TypeError, match="integer type"):
        lax.gather(x, jnp.zeros((3, 1)), dn, (1, 5))
    sdn = lax.ScatterDimensionNumbers((1,), (0,), (0,))
    with pytest.raises(TypeError, match="updates shape"):
        lax.scatter_add(x, i, jnp.ones((2, 5)), sdn)
    with pytest.raises(TypeError, match="dtype"):
        lax.scatter(x, i, jnp.ones((3, 5), jnp.int32), sdn)


def test_gather_scatter_mode_from_any():
    M = lax.GatherScatterMode
    assert M.from_any("clip") is M.CLIP and M.from_any(None) is M.FILL_OR_DROP
    assert M.from_any("fill") is M.FILL_OR_DROP and M.from_any("drop") is M.FILL_OR_DROP
    assert M.from_any("promise_in_bounds") is M.PROMISE_IN_BOUNDS and M.from_any(M.CLIP) is M.CLIP
    assert str(M.CLIP) == "GatherScatterMode.CLIP"


# ---------------------------------------------------------------- lax.gather / scatter directly

def _np_gather_rows(x, rows, mode):
    n = x.shape[0]
    out = []
    for r in rows:
        if mode == "fill" and not 0 <= r < n:
            out.append(np.full(x.shape[1:], np.nan, x.dtype))
        else:
            out.append(x[min(max(r, 0), n - 1)])
    return np.stack(out)


@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_lax_gather_rows_jit_vs_numpy(mode):
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    rows = np.array([[2], [-1], [5], [0]], np.int32)
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    f = lambda x, i: lax.gather(x, i, dn, (1, 5), mode=mode)  # noqa: E731
    expected = _np_gather_rows(x, rows[:, 0], mode)
    np.testing.assert_array_equal(np.asarray(f(x, rows)), expected)
    np.testing.assert_array_equal(np.asarray(jit_compiled(f, x, rows)), expected)


def test_lax_gather_batching_dims_window():
    # out[b, j, :] = x[b, i[b, j] : i[b, j] + 2]
    x = np.arange(2 * 6, dtype=np.float32).reshape(2, 6)
    i = np.array([[[0], [4], [5]], [[1], [3], [-2]]], np.int32)
    dn = lax.GatherDimensionNumbers(offset_dims=(2,), collapsed_slice_dims=(), start_index_map=(1,),
                                    operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    f = lambda x, i: lax.gather(x, i, dn, (1, 2), mode="clip")  # noqa: E731
    expected = np.stack([np.stack([x[b, min(max(s, 0), 4):min(max(s, 0), 4) + 2] for s in i[b, :, 0]])
                         for b in range(2)])
    np.testing.assert_array_equal(np.asarray(f(x, i)), expected)
    np.testing.assert_array_equal(np.asarray(jit_compiled(f, x, i)), expected)


SCATTERS = {"scatter": (lax.scatter, None), "scatter_add": (lax.scatter_add, np.add),
            "scatter_sub": (lax.scatter_sub, np.subtract), "scatter_mul": (lax.scatter_mul, np.multiply),
            "scatter_min": (lax.scatter_min, np.minimum), "scatter_max": (lax.scatter_max, np.maximum)}


def _np_scatter_rows(x, rows, upd, combine, clip):
    out = x.copy()
    for r, u in zip(rows, upd):
        if clip:
            r = min(max(r, 0), x.shape[0] - 1)
        elif not 0 <= r < x.shape[0]:
            continue
        out[r] = u if combine is None else combine(out[r], u)
    return out


@pytest.mark.parametrize("name", list(SCATTERS))
def test_lax_scatters_vs_numpy(name):
    fn, combine = SCATTERS[name]
    x = np.arange(20, dtype=np.float32).reshape(4, 5) - 7
    rows = np.array([[2], [-1], [2], [7], [0]], np.int32)
    upd = np.arange(25, dtype=np.float32).reshape(5, 5) - 12
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    for mode, clip in (("fill", False), ("clip", True)):
        got = fn(x, rows, upd, dn, mode=mode)
        np.testing.assert_array_equal(np.asarray(got), _np_scatter_rows(x, rows[:, 0], upd, combine, clip))


@pytest.mark.parametrize("name", ["scatter", "scatter_add", "scatter_max"])
def test_lax_scatter_jit_vs_eager(name):
    fn = SCATTERS[name][0]
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    rows = np.array([[2], [-1], [2], [3]], np.int32)
    upd = np.arange(20, dtype=np.float32).reshape(4, 5) * 0.5
    dn = lax.ScatterDimensionNumbers((1,), (0,), (0,))
    f = lambda x, i, u: fn(x, i, u, dn)  # noqa: E731
    np.testing.assert_array_equal(np.asarray(jit_compiled(f, x, rows, upd)), np.asarray(f(x, rows, upd)))


def test_scatter_apply():
    dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    f = lambda x: lax.scatter_apply(x, jnp.array([[1], [1], [3]]), lambda v: v * 2 + 1, dn,  # noqa: E731
                                    update_shape=(3,))
    np.testing.assert_array_equal(np.asarray(f(jnp.arange(5.))), [0, 7, 2, 7, 4])
    np.testing.assert_array_equal(np.asarray(jit_compiled(f, jnp.arange(5.))), [0, 7, 2, 7, 4])


# ---------------------------------------------------------------- gradients (JAX's values)

def test_grad_repeated_indices_accumulate():
    g = numjax.grad(lambda x: x[jnp.array([11, 1, 1, -9])].sum())(jnp.arange(5.))
    np.testing.assert_array_equal(np.asarray(g), [0, 2, 0, 0, 0])   # JAX: OOB reads get no gradient
    g = numjax.grad(lambda x: x.at[jnp.array([11, 1, 1])].get(mode="clip").sum())(jnp.arange(5.))
    np.testing.assert_array_equal(np.asarray(g), [0, 2, 0, 0, 1])


def test_grad_through_at_updates():
    x = jnp.arange(5.)
    g = numjax.grad(lambda y: x.at[jnp.array([1, 1, 2])].set(y).sum())(jnp.array([2., 3., 4.]))
    np.testing.assert_array_equal(np.asarray(g), [0, 1, 1])
    g = numjax.grad(lambda y: x.at[jnp.array([1, 1, 2])].max(y).sum())(jnp.array([2., 2., 1.]))
    np.testing.assert_allclose(np.asarray(g), [0.5, 0.5, 0])
    g = numjax.grad(lambda x: x.at[jnp.array([1, 1, 2])].max(jnp.array([1., 1., 1.])).sum())(x)
    np.testing.assert_allclose(np.asarray(g), [1, 1 / 3, 1, 1, 1], rtol=1e-6)
    g = numjax.grad(lambda x: x.at[jnp.array([1, 1])].multiply(jnp.array([2., 3.])).sum())(x)
    np.testing.assert_array_equal(np.asarray(g), [1, 6, 1, 1, 1])
    g = numjax.grad(lambda y: x.at[jnp.array([1, 2])].multiply(y, unique_indices=True).sum())(
        jnp.array([2., 3.]))
    np.testing.assert_array_equal(np.asarray(g), [1, 2])
    with pytest.raises(NotImplementedError, match="unique_indices=True"):
        numjax.grad(lambda y: x.at[jnp.array([1, 1])].multiply(y).sum())(jnp.array([2., 3.]))


IDX = np.array([[2, 0], [1, 2], [2, 2]])
GRAD_CASES = {
    "gather": lambda x, y: x[IDX] * 1.5,
    "gather_slices": lambda x, y: x[::-1, jnp.array([0, 0, 3])],
    "gather_fill": lambda x, y: x.at[jnp.array([0, 5, 2])].get(mode="fill", fill_value=0.),
    "scatter_add": lambda x, y: x.at[IDX[:, 0]].add(y),
    "scatter_set": lambda x, y: x.at[jnp.array([2, 0, 5])].set(y * 2.),
    "scatter_mul": lambda x, y: x.at[jnp.array([2, 0, 1])].multiply(y, unique_indices=True),
    "scatter_min": lambda x, y: x.at[jnp.array([2, 0, 1])].min(y),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_check_grads(name):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    y = rng.standard_normal((3, 4)).astype(np.float32)
    fn = GRAD_CASES[name]
    check_grads(lambda x, y: fn(jnp.asarray(x), jnp.asarray(y)), (x, y), order=1, modes=("fwd", "rev"))


def test_grad_under_jit_compiles():
    f = numjax.grad(lambda x, i: (x.at[i].add(x[::-1][i]) ** 2).sum())
    x, i = jnp.arange(5.), jnp.array([1, 1, 7])
    np.testing.assert_allclose(np.asarray(jit_compiled(f, x, i)), np.asarray(f(x, i)))
    np.testing.assert_allclose(np.asarray(f(x, i)), [0, 14, 4, 34, 8])   # JAX's value


# ---------------------------------------------------------------- vmap

VMAP_CASES = {
    "batched_operand_and_index": (lambda x, i: x[i], (0, 0)),
    "batched_index_only": (lambda x, i: x[:, i], (None, 0)),
    "batched_operand_only": (lambda x, i: x[i, ::-1], (0, None)),
    "set_both": (lambda x, i: x.at[i].set(-1.), (0, 0)),
    "add_index_only": (lambda x, i: x.at[i, 1:].add(2.), (None, 0)),
    "max_operand_only": (lambda x, i: x.at[i].max(10.), (0, None)),
}


@pytest.mark.parametrize("name", list(VMAP_CASES))
def test_vmap_vs_loop(name):
    fn, in_axes = VMAP_CASES[name]
    rng = np.random.default_rng(3)
    xb = rng.standard_normal((3, 4, 5)).astype(np.float32)
    ib = rng.integers(-4, 4, size=(3, 2))
    x = xb if in_axes[0] == 0 else xb[0]
    i = ib if in_axes[1] == 0 else ib[0]
    got = numjax.vmap(fn, in_axes=in_axes)(jnp.asarray(x), jnp.asarray(i))
    expected = np.stack([np.asarray(fn(jnp.asarray(x[b] if in_axes[0] == 0 else x),
                                       jnp.asarray(i[b] if in_axes[1] == 0 else i))) for b in range(3)])
    np.testing.assert_array_equal(np.asarray(got), expected)


def test_vmap_jit_compiles():
    f = numjax.vmap(lambda x, i: x.at[i].add(1.) + x[i[::-1]].sum())
    x, i = jnp.arange(10.).reshape(2, 5), jnp.array([[1, 2], [3, 3]])
    np.testing.assert_allclose(np.asarray(jit_compiled(f, x, i)), np.asarray(f(x, i)))


# ---------------------------------------------------------------- properties

@st.composite
def _indexing_problem(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    idx = []
    for n in shape:
        kind = draw(st.sampled_from(["int", "slice", "array", "none", "full"]))
        if kind == "int":
            idx.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            idx.append(slice(draw(st.one_of(st.none(), st.integers(-n - 1, n + 1))),
                             draw(st.one_of(st.none(), st.integers(-n - 1, n + 1))),
                             draw(st.sampled_from([None, 1, 2, -1, -2, 3]))))
        elif kind == "array":
            m = draw(st.integers(0, 3))
            idx.append(np.array(draw(st.lists(st.integers(-n, n - 1), min_size=m, max_size=m)), np.int32))
        elif kind == "none":
            idx.extend([None, slice(None)])
        else:
            idx.append(slice(None))
    return shape, tuple(idx)


@settings(max_examples=120, deadline=None)
@given(_indexing_problem())
def test_getitem_property_vs_numpy(problem):
    shape, idx = problem
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    try:
        expected = x[idx]
    except IndexError:   # index arrays whose shapes do not broadcast
        with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
            jnp.asarray(x)[idx]
        return
    out = jnp.asarray(x)[idx]
    assert out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected)


@settings(max_examples=80, deadline=None)
@given(_indexing_problem(), st.sampled_from(["set", "add", "min"]))
def test_at_update_property_vs_numpy(problem, op):
    shape, idx = problem
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    try:
        sel = x[idx]
    except IndexError:
        return
    upd = (np.arange(sel.size, dtype=np.float32).reshape(sel.shape) - 3) * 0.5
    expected = x.copy()
    if op == "set":
        expected[idx] = upd
    elif op == "add":
        np.add.at(expected, idx, upd)
    else:
        np.minimum.at(expected, idx, upd)
    ref = jnp.asarray(x).at[idx]
    got = {"set": ref.set, "add": ref.add, "min": ref.min}[op](upd)
    if op == "set" and any(isinstance(i, np.ndarray) and len(np.unique(i)) != len(i) for i in idx):
        return   # repeated indices: which update wins is unspecified in JAX
    np.testing.assert_array_equal(np.asarray(got), expected)


# ---------------------------------------------------------------- indices outside int32's range
# JAX's rules (read from its jnp indexing and gather lowering, values checked with JAX 0.10.2):
# * x[idx] and x.at[idx]: a signed index array is normalized (negative + n) in its own type,
#   then converted, wrapping, to int32; the gather clamps, the scatter drops or clips.
# * a FILL_OR_DROP gather (jnp.take, .get(mode="fill")) converts its indices, wrapping, to
#   int32 before the range check; CLIP gathers and scatters compare in the index's own type.
# * a lone traced scalar index goes through dynamic_slice in its own type (clamped); several
#   start indices are all converted to int32 first (then a negative one counts from the end).

def _wrap_int32(idx):
    return np.asarray(idx).astype(np.int64).astype(np.int32).astype(np.int64)


def _fill_gather_rule(x, idx):
    """jnp.take(x, idx) by the rule: negatives normalized, wrapped into int32, then filled."""
    idx = np.asarray(idx)
    if idx.dtype.kind == "i":
        idx = np.where(idx < 0, idx + len(x), idx)
    k = _wrap_int32(idx)
    ok = (k >= 0) & (k < len(x))
    return np.where(ok, x[np.clip(k, 0, len(x) - 1)], np.nan)


def _getitem_rule(x, idx):
    """x[idx] by the rule: negatives normalized, wrapped into int32, then clamped."""
    idx = np.asarray(idx)
    if idx.dtype.kind == "i":
        idx = np.where(idx < 0, idx + len(x), idx)
    return x[np.clip(_wrap_int32(idx), 0, len(x) - 1)]


def _eager_and_jit(fn, *args):
    return np.asarray(fn(*args)), np.asarray(jit_compiled(fn, *args))


@pytest.mark.parametrize("dtype,values", [
    ("int32", [-1, 2**31 - 1]), ("int32", [2**31 - 1, -2**31, 3, -6]), ("uint32", [2**31, 2, 2**32 - 1]),
])
def test_take_fill_with_far_out_of_range_indices(dtype, values):
    # Used to crash the process under jit: the fill branch read x at the raw index.
    x = np.arange(5.0, dtype=np.float32)
    idx = np.array(values, dtype)
    eager, jitted = _eager_and_jit(lambda a, i: jnp.take(a, i), jnp.asarray(x), jnp.asarray(idx))
    np.testing.assert_array_equal(eager, _fill_gather_rule(x, idx))
    np.testing.assert_array_equal(jitted, eager)
    got = _eager_and_jit(lambda a, i: a.at[i].get(mode="fill"), jnp.asarray(x), jnp.asarray(idx))
    for g in got:
        np.testing.assert_array_equal(g, eager)


def test_take_fill_with_wide_indices_x64(x64):
    x = np.arange(5.0)
    for dtype, values in [("int64", [2**62, 2**32 + 1, -1, 2**33 - 1]),
                          ("uint64", [2**64 - 1, 2**63, 2**32 + 4, 1])]:
        idx = np.array(values, dtype)
        eager, jitted = _eager_and_jit(lambda a, i: jnp.take(a, i), jnp.asarray(x), jnp.asarray(idx))
        np.testing.assert_array_equal(eager, _fill_gather_rule(x, idx))
        np.testing.assert_array_equal(jitted, eager)
    # Literal JAX values, as a check on the rule itself.
    np.testing.assert_array_equal(np.asarray(jnp.take(jnp.asarray(x), jnp.array([2**62, 2**32 + 1]))), [0, 1])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_take_fill_low_precision_under_jit(dtype):
    # The NaN fill value is stored as the operand's bits in the low-precision rewrite.
    x = jnp.array([1.0, 2.0], dtype)
    eager, jitted = _eager_and_jit(lambda a, i: jnp.take(a, i), x, jnp.array([5, 0, -1, -3]))
    assert np.isnan(eager[0].astype(np.float32)) and np.isnan(eager[3].astype(np.float32))
    np.testing.assert_array_equal(eager[1:3].astype(np.float32), [1.0, 2.0])
    np.testing.assert_array_equal(jitted.astype(np.float32), eager.astype(np.float32))
    got = jit_compiled(lambda a, i: a.at[i].get(mode="fill", fill_value=7), x, jnp.array([9, 1]))
    np.testing.assert_array_equal(np.asarray(got).astype(np.float32), [7.0, 2.0])


def test_getitem_index_array_wraps_into_int32():
    x = np.arange(5.0, dtype=np.float32)
    idx = np.array([2**32 - 1, 2**31, 3, 2**32 + 2 - 2**32], np.uint32)
    eager, jitted = _eager_and_jit(lambda a, i: a[i], jnp.asarray(x), jnp.asarray(idx))
    np.testing.assert_array_equal(eager, _getitem_rule(x, idx))
    np.testing.assert_array_equal(eager[:2], [0, 0])        # JAX 0.10.2
    np.testing.assert_array_equal(jitted, eager)


def test_getitem_and_at_wide_indices_x64(x64):
    x = np.arange(5.0)
    idx = np.array([2**62, 2**32 + 1, -1, -2**40], np.int64)
    eager, jitted = _eager_and_jit(lambda a, i: a[i], jnp.asarray(x), jnp.asarray(idx))
    np.testing.assert_array_equal(eager, _getitem_rule(x, idx))
    np.testing.assert_array_equal(jitted, eager)
    # The scatter sees the wrapped index too: int64 2**32 + 1 updates element 1.
    upd = lambda a, i: a.at[i].add(100.0)
    eager, jitted = _eager_and_jit(upd, jnp.asarray(x), jnp.array([2**32 + 1], np.int64))
    np.testing.assert_array_equal(eager, [0, 101, 2, 3, 4])
    np.testing.assert_array_equal(jitted, eager)
    eager, jitted = _eager_and_jit(upd, jnp.asarray(x), jnp.array([2**31, 2**32 - 1], np.uint64))
    np.testing.assert_array_equal(eager, x)   # -2**31 and -1 after wrapping: dropped
    np.testing.assert_array_equal(jitted, eager)


def test_lax_gather_and_scatter_compare_in_index_type_x64(x64):
    x = jnp.arange(5.0)
    dn = lax.GatherDimensionNumbers((), (0,), (0,))
    idx = jnp.array([[2**64 - 1], [2**63], [1]], jnp.uint64)
    for mode, expected in [("clip", [4, 4, 1]), ("fill", [np.nan, 0, 1])]:
        eager, jitted = _eager_and_jit(lambda a, i: lax.gather(a, i, dn, (1,), mode=mode), x, idx)
        np.testing.assert_array_equal(eager, expected)   # fill wraps into int32 first
        np.testing.assert_array_equal(jitted, eager)
    sdn = lax.ScatterDimensionNumbers((), (0,), (0,))
    for mode, expected in [("clip", [0, 101, 2, 3, 204]), ("drop", [0, 101, 2, 3, 4])]:
        fn = lambda a, i: lax.scatter_add(a, i, jnp.full((3,), 100.0), sdn, mode=mode)
        eager, jitted = _eager_and_jit(fn, x, idx)
        np.testing.assert_array_equal(eager, expected)
        np.testing.assert_array_equal(jitted, eager)


def test_scalar_traced_index_paths():
    x1, x2 = jnp.arange(5.0), jnp.arange(10.0).reshape(5, 2)
    big, half = jnp.array(2**32 - 1, jnp.uint32), jnp.array(2**31, jnp.uint32)
    cases = [
        (lambda a, i: a[i], x1, big, 4.0),             # lone start index: clamped as uint32
        (lambda a, i: a[i], x2, big, [8, 9]),          # with another start: int32 -1, from the end
        (lambda a, i: a[i], x2, half, [0, 1]),         # int32 -2**31: clamped to 0
        (lambda a, i: a[i, ::2], x2, big, [0]),        # strided: a gather, -1 clamped to 0
        (lambda a, i: a[i, 1], x2, jnp.int8(-1), 9.0),
    ]
    for fn, a, i, expected in cases:
        eager, jitted = _eager_and_jit(fn, a, i)
        np.testing.assert_array_equal(eager, expected)
        np.testing.assert_array_equal(jitted, eager)


def test_vmap_of_scalar_index_clamps_in_index_type():
    x = jnp.array([[10, 11], [7, 8], [1, 2]], jnp.uint32)
    i = jnp.array([2**32 - 1, 2**31, 3], jnp.uint32)
    fn = numjax.vmap(lambda a, j: a[j])
    eager, jitted = _eager_and_jit(fn, x, i)
    np.testing.assert_array_equal(eager, [11, 8, 2])
    np.testing.assert_array_equal(jitted, eager)


def test_dynamic_slice_start_indices_must_share_a_type():
    x = jnp.zeros((3, 3))
    for starts, names in [((jnp.int8(1), 0), "int8, int32"), ((jnp.uint32(1), 0), "uint32, int32"),
                          ((jnp.int8(1), jnp.int16(0)), "int8, int16")]:
        with pytest.raises(TypeError, match=f"dynamic_slice must be integers of the same type, got: {names}"):
            lax.dynamic_slice(x, starts, (1, 1))
        with pytest.raises(TypeError, match=f"dynamic_update_slice must be integers of the same type, got {names}"):
            lax.dynamic_update_slice(x, jnp.ones((1, 1)), starts)
        with pytest.raises(TypeError, match="same type"):
            numjax.jit(lambda a: lax.dynamic_slice(a, starts, (1, 1)))(x)
    assert lax.dynamic_slice(x, (jnp.int8(1), jnp.int8(0)), (1, 1)).shape == (1, 1)
    assert lax.dynamic_slice(x, (1, 0), (1, 1)).shape == (1, 1)
    # The *_in_dim helpers start the other axes at a zero of the index's type, as JAX.
    got = jit_compiled(lambda a, i: lax.dynamic_slice_in_dim(a, i, 1, axis=1), x + jnp.arange(3.0), jnp.int8(2))
    np.testing.assert_array_equal(np.asarray(got), [[2], [2], [2]])
    got = lax.dynamic_update_slice_in_dim(x, jnp.ones((3, 1)), jnp.uint8(1), axis=1)
    np.testing.assert_array_equal(np.asarray(got)[:, 1], [1, 1, 1])


@pytest.mark.parametrize("op,name", [("add", "add"), ("subtract", "sub"), ("multiply", "mul"),
                                     ("divide", "mul"), ("power", "mul")])
def test_bool_at_arithmetic_raises(op, name):
    x, i = jnp.array([True, False]), jnp.array([1])
    with pytest.raises(TypeError, match=f"{name} does not accept dtype bool at position 0"):
        getattr(x.at[i], op)(True)
    with pytest.raises(TypeError, match=f"{name} does not accept dtype bool"):
        numjax.jit(lambda a: getattr(a.at[i], op)(True))(x)


def test_bool_at_set_min_max_work():
    x, i = jnp.array([True, False]), jnp.array([1])
    for op, expected in [("set", [True, True]), ("min", [True, False]), ("max", [True, True])]:
        eager, jitted = _eager_and_jit(lambda a: getattr(a.at[i], op)(True), x)
        np.testing.assert_array_equal(eager, expected)
        np.testing.assert_array_equal(jitted, eager)


def test_take_modes_and_put_with_wide_indices_x64(x64):
    # jnp.take keeps the index type (clip and wrap work in it; fill wraps into int32 in the
    # gather); take_along_axis converts to int32 before normalizing; put clamps like JAX's
    # unravel_index.  Literal values from JAX 0.10.2.
    x = jnp.arange(5.0)
    i = jnp.array([2**32 - 1, 2**31, 1], jnp.uint32)
    cases = [
        (lambda a, j: jnp.take(a, j, mode="clip"), i, [4, 4, 1]),
        (lambda a, j: jnp.take(a, j, mode="wrap"), i, [0, 3, 1]),
        (lambda a, j: jnp.take_along_axis(a, j, axis=0), i, [4, np.nan, 1]),
        (lambda a, j: jnp.take_along_axis(a, j, axis=0, mode="clip"), i, [4, 0, 1]),
        (lambda a, j: jnp.put(a, j, 100.0, inplace=False), i, [0, 100, 2, 3, 100]),
        (lambda a, j: jnp.put(a, j, 100.0, inplace=False, mode="clip"), i, [0, 100, 2, 3, 100]),
        (lambda a, j: jnp.take(a, j, mode="clip"), jnp.array([2**32 + 1, -2**40], jnp.int64), [4, 0]),
        (lambda a, j: jnp.put(a, j, 100.0, inplace=False), jnp.array([2**31 - 1, -2**31, -3], jnp.int32),
         [100, 1, 100, 3, 100]),
    ]
    for fn, j, expected in cases:
        eager, jitted = _eager_and_jit(fn, x, j)
        np.testing.assert_array_equal(eager, expected)
        np.testing.assert_array_equal(jitted, eager)


def test_at_update_with_nothing_to_update_returns_operand():
    # As JAX: an empty update skips the scatter, so even bool add (a TypeError otherwise) works.
    x = jnp.array([False, True])
    fn = lambda a, i, u: a.at[i].add(u)
    eager, jitted = _eager_and_jit(fn, x, jnp.zeros((0,), jnp.int8), jnp.zeros((0,), bool))
    np.testing.assert_array_equal(eager, [False, True])
    np.testing.assert_array_equal(jitted, eager)

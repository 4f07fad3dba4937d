"""Gather/scatter, dynamic slices, pad, window reductions and cumulative ops on the CUDA backend
(cuda/indexing.py, cuda/cumulative.py), through jnp/lax user code under jit, compared with the
CPU backend.  Every case must really run on CUDA (no CPU fallback)."""
import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax import lax
from numjax.cuda import backend as cuda_backend
from numjax.cuda.kernels import CudaUnsupported

from helpers_cuda import assert_same, cuda_executable, on_cpu

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")


def check(fn, *args, exact=False):
    exe, got = cuda_executable(fn, *args)
    assert exe.backend == "cuda", exe.source
    want = on_cpu(fn, *args)
    assert_same(got, want)
    if exact:
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    return got


X = (np.arange(20, dtype=np.float32).reshape(4, 5) - 7.5) / 3
XI = np.arange(20, dtype=np.int32).reshape(4, 5) * 7 - 60


# ---------------------------------------------------------------- gather

GATHERS = {
    "rows": (lambda x, i: x[i], np.array([3, 0, -1, 2], np.int32)),
    "cols_2d_idx": (lambda x, i: x[:, i], np.array([[1, 4], [0, 0]], np.int8)),
    "point": (lambda x, i: x[i[0], i[1]], np.array([2, -3], np.int64)),
    "take_clip": (lambda x, i: jnp.take(x, i, axis=1, mode="clip"), np.array([-9, 2, 11], np.int32)),
    "take_fill": (lambda x, i: jnp.take(x, i, axis=1, mode="fill"), np.array([-9, 2, 5, 4], np.int32)),
    "take_fill_value": (lambda x, i: jnp.take(x, i, axis=0, mode="fill", fill_value=-2.5),
                        np.array([7, 1], np.uint8)),
    "take_promise": (lambda x, i: jnp.take(x, i, axis=0, mode="promise_in_bounds"),
                     np.array([3, 1, 1], np.uint32)),
    "take_along_axis": (lambda x, i: jnp.take_along_axis(x, i, axis=1),
                        np.array([[0, 4], [1, 1], [3, 2], [4, 0]], np.int32)),
    "slice_window": (lambda x, i: x[i, 1:4], np.array([2, 0], np.int16)),
    "take_along_axis_clip": (lambda x, i: jnp.take_along_axis(x, i, axis=0, mode="clip"),
                             np.array([[5, -7, 0, 1, 3]], np.int32)),
    "take_along_axis_fill": (lambda x, i: jnp.take_along_axis(x, i, axis=0, mode="fill"),
                             np.array([[5, -7, 0, 1, 3]], np.int32)),
}


@pytest.mark.parametrize("name", sorted(GATHERS))
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_gather(name, dtype):
    fn, idx = GATHERS[name]
    x = X if dtype == np.float32 else XI
    check(fn, x, idx)


def test_gather_fill_default_for_ints_and_bools():
    idx = np.array([1, 6, -1], np.int32)
    check(lambda x, i: jnp.take(x, i, mode="fill"), np.array([5, 6, 7], np.uint8), idx)
    check(lambda x, i: jnp.take(x, i, mode="fill"), np.array([True, False, False]), idx)


def test_gather_under_vmap_with_batching_dims():
    idx = np.array([[0, 2], [1, 1], [2, 0], [0, 0]], np.int32)
    check(numjax.vmap(lambda row, i: row[i]), X[:, :3], idx)


@pytest.mark.parametrize("mode", ["fill", "clip", "promise_in_bounds"])
def test_lax_gather_partly_out_of_range_windows(mode):
    # Raw starts (no normalization of negative indices): a window is out of range when any of
    # its starts is, including one whose window would run past the end.
    dn = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1))
    idx = np.array([[-1, 0], [2, 2], [3, 2], [1, 3], [0, -7]], np.int32)
    check(lambda x, i: lax.gather(x, i, dn, (2, 3), mode=mode), X, idx)
    check(lambda x, i: lax.gather(x, i, dn, (2, 3), mode=mode), XI, idx)


@pytest.mark.parametrize("mode", ["drop", "clip", "promise_in_bounds"])
def test_lax_scatter_partly_out_of_range_windows(mode):
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(),
                                     scatter_dims_to_operand_dims=(0, 1))
    idx = np.array([[-1, 0], [2, 2], [3, 2], [1, 3], [0, 0]], np.int32)
    upd = np.arange(30, dtype=np.float32).reshape(5, 2, 3)
    check(lambda x, i, u: lax.scatter_add(x, i, u, dn, mode=mode), X, idx, upd)
    check(lambda x, i, u: lax.scatter(x, i, u, dn, mode=mode), X, idx, upd)


# ---------------------------------------------------------------- scatter

DUP = np.array([0, 3, 0, 2, 3, 0], np.int32)
SCATTERS = {
    "set": lambda x, i, u: x.at[i].set(u),
    "add": lambda x, i, u: x.at[i].add(u),
    "subtract": lambda x, i, u: x.at[i].subtract(u),
    "mul": lambda x, i, u: x.at[i].multiply(u),
    "min": lambda x, i, u: x.at[i].min(u),
    "max": lambda x, i, u: x.at[i].max(u),
}


@pytest.mark.parametrize("name", sorted(SCATTERS))
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
def test_scatter_repeated_indices(name, dtype):
    x = (np.arange(5, dtype=np.float32) - 2).astype(dtype)
    upd = (np.array([3, -1, 2, 5, -4, 1], np.float32) / (2 if dtype == np.float32 else 1)).astype(dtype)
    check(SCATTERS[name], x, DUP, upd)


@pytest.mark.parametrize("name", sorted(SCATTERS))
def test_scatter_rows_modes(name):
    fn = SCATTERS[name]
    idx = np.array([3, -1, 9, 1], np.int32)
    upd = np.arange(20, dtype=np.float32).reshape(4, 5) / 4
    check(lambda x, i, u: fn(x, i, u), X, idx, upd)
    check(lambda x, i, u: x.at[i].add(u, mode="clip"), X, idx, upd)
    check(lambda x, i, u: x.at[i].add(u, mode="drop"), X, idx, upd)


def test_scatter_nan_and_signed_zero():
    x = np.array([0.0, -0.0, 1.0, np.nan], np.float32)
    idx = np.array([0, 1, 2, 2, 3, 1], np.int32)
    upd = np.array([-0.0, 0.0, np.nan, 5.0, 2.0, -0.0], np.float32)
    for fn in (SCATTERS["max"], SCATTERS["min"]):
        got = check(fn, x, idx, upd)
        np.testing.assert_array_equal(np.signbit(got[0]), np.signbit(on_cpu(fn, x, idx, upd)[0]))


def test_scatter_unique_indices_small_dtype():
    fn = lambda x, i, u: x.at[i].add(u, unique_indices=True)   # noqa: E731
    check(fn, np.arange(6, dtype=np.int8), np.array([5, 1, 2], np.int32),
          np.array([100, -3, 7], np.int8))
    check(lambda x, i, u: x.at[i].set(u), np.zeros(4, np.bool_), np.array([1, 3, 1], np.int32),
          np.array([True, True, False]))


@pytest.mark.parametrize("name", sorted(SCATTERS))
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16])
def test_scatter_small_dtypes_with_repeats(name, dtype):
    # 1- and 2-byte elements combine by a compare-and-swap on their 32-bit word; neighbours
    # in the same word are updated by other threads at the same time.
    x = (np.arange(7) * 37 - 100).astype(dtype)
    idx = np.array([0, 1, 2, 3, 1, 0, 6, 5, 4, 2, 3], np.int32)
    upd = (np.arange(11) * 29 - 140).astype(dtype)
    check(SCATTERS[name], x, idx, upd)


@pytest.mark.parametrize("name", ["set", "min", "max"])
def test_scatter_bool_with_repeats(name):
    x = np.array([True, False, True, False, False])
    idx = np.array([0, 1, 1, 3, 0, 4, 3], np.int32)
    upd = np.array([False, True, False, True, True, False, False])
    check(SCATTERS[name], x, idx, upd)


def test_scatter_apply_is_not_lowered():
    closed = numjax.make_jaxpr(lambda x, i: x.at[i].apply(jnp.sin))(X[0], DUP)
    with pytest.raises(CudaUnsupported, match="custom combiner"):
        cuda_backend.plan_program(closed)


def test_segment_sum_and_2d_window():
    seg = np.array([0, 2, -1, 1, 3], np.int32)      # -1 and 3: out of range, dropped
    check(lambda x, s: numjax.ops.segment_sum(x, s, 3), X.T, seg)
    check(lambda x, s: numjax.ops.segment_max(x, s, 4), X.T, seg)
    upd = np.ones((2, 3), np.float32)
    check(lambda x, u: x.at[1:3, 1:4].add(u), X, upd)


# ---------------------------------------------------------------- dynamic slices

@pytest.mark.parametrize("starts", [(1, 2), (-3, 9), (7, -1), (0, 0)])
def test_dynamic_slice_and_update(starts):
    s = [np.int32(v) for v in starts]
    check(lambda x, a, b: lax.dynamic_slice(x, (a, b), (2, 3)), X, *s)
    check(lambda x, a, b: lax.dynamic_update_slice(x, jnp.full((3, 2), 9.0, jnp.float32), (a, b)), X, *s)


def test_dynamic_slice_unsigned_starts_and_int_operand():
    a, b = np.uint32(3), np.uint32(1)
    check(lambda x, a, b: lax.dynamic_slice(x, (a, b), (2, 2)), XI, a, b)
    check(lambda x, a, b: lax.dynamic_update_slice(x, x[:1, :2] * 3, (a, b)), XI, a, b)


# ---------------------------------------------------------------- pad

@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap", "symmetric"])
def test_jnp_pad_modes(mode):
    check(lambda x: jnp.pad(x, ((1, 2), (2, 1)), mode=mode), X)


@pytest.mark.parametrize("config", [((1, -1, 1), (-2, 2, 0)), ((0, 0, 2), (3, -3, 1)),
                                    ((-1, -2, 0), (0, 0, 0))])
def test_lax_pad_negative_and_interior(config):
    check(lambda x: lax.pad(x, np.float32(-1.5), config), X)
    check(lambda x: lax.pad(x, np.int32(4), config), XI)


# ---------------------------------------------------------------- cumulative ops

CUMULATIVE = {"cumsum": lax.cumsum, "cumprod": lax.cumprod, "cummax": lax.cummax, "cummin": lax.cummin}


@pytest.mark.parametrize("name", sorted(CUMULATIVE))
@pytest.mark.parametrize("axis,reverse", [(0, False), (1, True), (1, False)])
def test_cumulative(name, axis, reverse):
    op = CUMULATIVE[name]
    x = (X * 1.37).astype(np.float32)
    check(lambda x: op(x, axis=axis, reverse=reverse), x, exact=True)
    check(lambda x: op(x, axis=axis, reverse=reverse), XI // 5)


def test_jnp_cumsum_cumprod_and_nan_max():
    x = np.array([1.0, -0.0, 0.0, np.nan, 2.0, -3.0], np.float32)
    check(lambda x: (jnp.cumsum(x), jnp.cumprod(x[:3]), lax.cummax(x), lax.cummin(x, reverse=True)),
          x, exact=True)
    check(lambda x: jnp.cumsum(x, axis=0, dtype=jnp.int32), np.arange(6, dtype=np.int8).reshape(3, 2))


@pytest.mark.parametrize("shape,axis", [((1,), 0), ((5,), 0), ((3, 1), 1), ((3, 4), 0), ((2, 3, 4), 1)])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_of_negative_zeros_starts_from_plus_zero(shape, axis, reverse):
    # XLA's cumulative sum starts from +0 along an axis longer than one (assert_array_equal
    # does not tell -0.0 from 0.0: the sign bits are compared)
    got = check(lambda x: lax.cumsum(x, axis=axis, reverse=reverse), np.full(shape, -0.0, np.float32))
    assert (np.signbit(np.asarray(got[0])) == (shape[axis] == 1)).all()


# ---------------------------------------------------------------- window reductions

def test_pooling():
    x = X.reshape(1, 4, 5, 1)
    win, strides = (1, 2, 2, 1), (1, 1, 2, 1)
    check(lambda x: lax.reduce_window(x, 0.0, lax.add, win, strides, "SAME") / 4, x, exact=True)
    check(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, win, strides, "VALID"), x)
    check(lambda x: lax.reduce_window(x, jnp.inf, lax.min, win, strides, ((0, 0), (1, 2), (0, 1), (0, 0))), x)


def test_reduce_window_dilations_and_ints():
    def sum_dilated(x):
        return lax.reduce_window(x, 0, lax.add, (2, 2), (1, 2), ((1, 0), (0, 1)),
                                 base_dilation=(2, 1), window_dilation=(1, 2))
    check(sum_dilated, XI)
    check(lambda x: lax.reduce_window(x, jnp.iinfo(jnp.int32).min, lax.max, (3, 2), (1, 1),
                                      "SAME", window_dilation=(1, 2)), XI)
    check(sum_dilated, X, exact=True)


# ---------------------------------------------------------------- 64-bit values, edge cases

def test_64_bit_scatters_and_scans(x64):
    x = np.array([1.5, -2.0, 0.25, 3.0], np.float64)
    idx = np.array([2, 0, 2, 3, 2], np.int64)
    upd = np.array([2.0, -1.5, 0.5, 4.0, -3.0], np.float64)
    for name in ("set", "add", "mul", "min", "max"):
        check(SCATTERS[name], x, idx, upd)
        check(SCATTERS[name], (x * 4).astype(np.int64), idx, (upd * 2).astype(np.int64))
        check(SCATTERS[name], (x * 4 + 8).astype(np.uint64), idx, (upd * 2 + 6).astype(np.uint64))
    check(lambda x: (lax.cumsum(x, reverse=True), lax.cumprod(x)), x, exact=True)
    check(lambda x, i: lax.dynamic_slice(x, (i,), (2,)), x, np.int64(-5))
    # fill mode wraps indices to int32 first (2**32 + 1 reads element 1); uint64 past int64's
    # range is out of range (clamped to the end in clip mode).
    check(lambda x, i: jnp.take(x, i, mode="fill"), x, np.array([2**32 + 1, 2**31, 3], np.int64))
    check(lambda x, i: jnp.take(x, i, mode="clip"), x, np.array([2**63 + 5, 1], np.uint64))


EDGES = {
    "empty_indices": (lambda x: x[jnp.zeros((0,), jnp.int32)]),
    "empty_scatter": (lambda x: x.at[jnp.zeros((0,), jnp.int32)].add(1.0)),
    "scatter_into_scalar": (lambda x: lax.scatter_add(
        x[0], jnp.zeros((3, 0), jnp.int32), x[:3], lax.ScatterDimensionNumbers((), (), ()))),
    "cumsum_scalar_and_empty": (lambda x: (lax.cumsum(x[0]), jnp.cumsum(x[:0]))),
    "reduce_window_empty_window": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (0,), (1,), ((0, 0),))),
    "pad_empty": (lambda x: lax.pad(x[:0], np.float32(7), ((2, 1, 3),))),
}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_edge_cases(name):
    check(EDGES[name], np.arange(6, dtype=np.float32) - 2)


# ---------------------------------------------------------------- iota, select_n, programs

def test_iota_and_select_n_with_three_cases():
    check(lambda: jnp.arange(5.0))
    which = np.array([0, 2, 1, 2, 0], np.int32)
    check(lambda w, x: lax.select_n(w, x[0], x[1], x[2]), which, X)


def test_grad_through_gather_and_dynamic_slice():
    def loss(x, i, s):
        return jnp.sum(jnp.sin(x[i]) * 2.0) + jnp.sum(lax.dynamic_slice(x, (s, 1), (2, 3)) ** 2)
    idx = np.array([1, 3, 1], np.int32)
    check(numjax.grad(loss), X, idx, np.int32(3))


def test_vmap_program():
    def f(x, i, s):
        return jnp.cumsum(x.at[i].add(1.0)) + lax.dynamic_slice(x, (s,), (5,))[0]
    idx = np.array([[0, 1], [4, 4], [2, 0], [3, 3]], np.int32)
    starts = np.array([0, 2, 7, -1], np.int32)
    check(numjax.vmap(f), X, idx, starts)

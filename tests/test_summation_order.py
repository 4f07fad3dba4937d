"""numjax's summation order (numjax/lax/_summation.py): eager and jitted floating sums and
products agree bit for bit, whatever is fused into the jitted loop, and follow the documented
order (LANES interleaved partial results per row, the tail into lane 0, lanes folded left to
right, rows combined one at a time)."""
import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax import lax
from numjax.lax import _summation
from helpers import assert_eager_equals_jit, jit_compiled, wide_range_data


_data = wide_range_data


def _documented_row(row, dtype, product=False):
    """One row reduced in the documented order, one Python step at a time."""
    op = (lambda a, b: dtype.type(a * b)) if product else (lambda a, b: dtype.type(a + b))
    lanes_n = _summation.LANES
    full = len(row) - len(row) % lanes_n
    lanes = [dtype.type(1 if product else 0)] * lanes_n
    for j in range(full):
        lanes[j % lanes_n] = op(lanes[j % lanes_n], row[j])
    acc = lanes[0]
    for j in range(full, len(row)):
        acc = op(acc, row[j])
    for u in range(1, lanes_n):
        acc = op(acc, lanes[u])
    return acc


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 7, 8, 9, 100, 1003])
def test_eager_follows_the_documented_order(request, dtype, n):
    if dtype == np.float64:
        request.getfixturevalue("x64")
    x = _data((3, n), dtype)
    dt = np.dtype(dtype)
    want_rows = [_documented_row(r, dt) for r in x]
    assert np.asarray(lax.reduce_sum(jnp.asarray(x), (1,))).tolist() == [float(v) for v in want_rows]
    # Over both axes: the rows' results, combined one at a time from 0.
    total = dt.type(0)
    for v in want_rows:
        total = dt.type(total + v)
    assert float(np.asarray(lax.reduce_sum(jnp.asarray(x), (0, 1)))) == float(total)
    small = x * dt.type(1e-3) + dt.type(1)
    want_prod = [_documented_row(r, dt, product=True) for r in small]
    assert np.asarray(lax.reduce_prod(jnp.asarray(small), (1,))).tolist() == [float(v) for v in want_prod]


def test_the_order_is_not_numpy_pairwise_nor_sequential():
    # The documented order is visible: these sums differ from numpy's and a running sum.
    x = _data(1003, np.float32, seed=3)
    ours = float(np.asarray(jnp.sum(x)))
    running = np.float32(0)
    for v in x:
        running = np.float32(running + v)
    assert ours == float(_documented_row(x, np.dtype(np.float32)))
    assert ours != float(running) and ours != float(np.sum(x))


SHAPES_AXES = [((1003,), (0,)), ((5, 1003), (1,)), ((5, 1003), (0,)), ((5, 1003), (0, 1)),
               ((3, 4, 17), (2,)), ((3, 4, 17), (1, 2)), ((3, 4, 17), (0, 2)), ((3, 4, 17), (0,)),
               ((2, 3, 5, 9), (1, 2, 3)), ((64, 7), (1,)), ((4, 1), (0,)), ((1, 8), (1,))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axes", SHAPES_AXES)
def test_eager_and_jit_sums_agree_bit_for_bit(request, dtype, shape, axes):
    if dtype == np.float64:
        request.getfixturevalue("x64")
    x = _data(shape, dtype)
    cases = {
        "sum": lambda a: lax.reduce_sum(a, axes),
        "mean": lambda a: jnp.mean(a, axis=axes),
        "var": lambda a: jnp.var(a, axis=axes),
        # A long fused body: the jitted loop keeps the lanes without unrolling it.
        "long": lambda a: lax.reduce_sum(jnp.abs(a) * 2 + 1 - a / 3 + a * a - 4 * a, axes),
        "prod": lambda a: lax.reduce_prod(a * 1e-6 + 1, axes),
    }
    assert_eager_equals_jit(cases, x)


@pytest.mark.parametrize("shape,axes", [((3 * 10 ** 5,), (0,)), ((40, 5003), (1,)), ((40, 5003), (0, 1))])
def test_large_sums_take_the_kernel_in_the_same_order(shape, axes, monkeypatch):
    x = _data(shape, np.float32)
    kernel = np.asarray(lax.reduce_sum(jnp.asarray(x), axes))
    jitted = np.asarray(jit_compiled(lambda a: lax.reduce_sum(a, axes), x))
    monkeypatch.setattr(_summation, "_KERNEL_MIN", 1 << 62)     # numpy emulation only
    emulated = np.asarray(lax.reduce_sum(jnp.asarray(x), axes))
    assert np.array_equal(kernel, emulated) and np.array_equal(kernel, jitted)


def test_x64_sum_of_tenths_eager_equals_jit(x64):
    x = jnp.full(10 ** 5, 0.1)
    assert np.asarray(x).dtype == np.float64
    assert float(np.asarray(jnp.sum(x))) == float(np.asarray(numjax.jit(jnp.sum)(x)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_reductions_eager_equals_jit(dtype):
    x = jnp.asarray(_data((5, 1003), np.float32) % 100).astype(dtype)
    for f in (lambda a: lax.reduce_sum(a, (1,)), lambda a: jnp.sum(a), lambda a: jnp.mean(a, axis=0),
              lambda a: jnp.var(a, axis=1), lambda a: jnp.cumsum(a, axis=1)):
        eager = np.asarray(f(x)).astype(np.float32)
        jitted = np.asarray(jit_compiled(f, x)).astype(np.float32)
        assert np.array_equal(eager, jitted, equal_nan=True)


def test_float16_mean_of_large_values_does_not_overflow():
    x = jnp.full(4096, 60000.0, jnp.float16)
    for f in (jnp.mean, lambda a: jnp.mean(a.reshape(64, 64), axis=1)[0]):
        assert float(np.asarray(f(x))) == 60000.0
        assert float(np.asarray(numjax.jit(f)(x))) == 60000.0
    assert float(np.asarray(jnp.var(x))) == 0.0

"""Reductions over a leading axis in blocks of rows (numjax/lax/_summation.py's order,
lowering/leading_axis.py): eager and jitted results agree bit for bit, follow the documented
block order, do not depend on the thread count, and row-wise ops over axis 0 (softmax,
logsumexp) stay correct for odd row counts and non-finite values."""
import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax import lax
from numjax.config import config
from numjax.lax import _summation
from helpers import assert_eager_equals_jit, jit_compiled, wide_range_data


_data = wide_range_data


@pytest.fixture
def parallel_always():
    """Every chunked kernel runs on the thread team, however small its call."""
    old = config.numjax_parallel_threshold
    numjax.config.update("numjax_parallel_threshold", 1)
    yield
    numjax.config.update("numjax_parallel_threshold", old)


@pytest.fixture
def threads():
    old = config.numjax_num_threads

    def set_threads(n):
        numjax.config.update("numjax_num_threads", n)
    yield set_threads
    numjax.config.update("numjax_num_threads", old)


def _documented_leading_sum(x):
    """Sum over axis 0 of a 2-d ``x`` in the documented order, one Python step at a time:
    blocks of ``leading_block_rows`` rows, each summed row after row from 0, then the blocks'
    sums combined in order."""
    dt = x.dtype.type
    rows = _summation.leading_block_rows(x.shape[0])
    total = None
    for start in range(0, x.shape[0], rows):
        block = [dt(0)] * x.shape[1]
        for r in range(start, min(start + rows, x.shape[0])):
            block = [dt(a + v) for a, v in zip(block, x[r])]
        total = block if total is None else [dt(a + v) for a, v in zip(total, block)]
    return np.array(total, x.dtype)


@pytest.mark.parametrize("rows", [64, 65, 130, 1001, 4099])
def test_eager_follows_the_documented_block_order(rows):
    x = _data((rows, 5), np.float32, seed=rows)
    assert np.array_equal(np.asarray(lax.reduce_sum(jnp.asarray(x), (0,))), _documented_leading_sum(x))


def test_the_blocks_show_in_the_last_bits():
    # Not the sequential order: the block order is visible on this data.
    x = _data((4096, 64), np.float32, seed=5)
    running = np.add.reduce(x, axis=0)          # numpy adds rows one after another here
    assert not np.array_equal(np.asarray(jnp.sum(x, axis=0)), running)


SHAPES_AXES = [((65, 3), (0,)), ((1000, 7), (0,)), ((4097, 33), (0,)), ((130, 4, 5), (0,)),
               ((130, 4, 5), (0, 1)), ((200, 2, 9), (0,)), ((66, 2), (0,))]


def _cases(axes):
    return {
        "sum": lambda a: lax.reduce_sum(a, axes),
        "mean": lambda a: jnp.mean(a, axis=axes),
        "var": lambda a: jnp.var(a, axis=axes),
        "prod": lambda a: lax.reduce_prod(a * 1e-6 + 1, axes),
        "max": lambda a: lax.reduce_max(a, axes),
        "fused": lambda a: lax.reduce_sum(jnp.abs(a) * 2 + 1 - a / 3, axes),
    }


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axes", SHAPES_AXES)
def test_eager_and_jit_agree_bit_for_bit(request, dtype, shape, axes):
    if dtype == np.float64:
        request.getfixturevalue("x64")
    assert_eager_equals_jit(_cases(axes), _data(shape, dtype))


@pytest.mark.parametrize("shape,axes", [((4097, 33), (0,)), ((130, 4, 5), (0, 1)), ((65, 3), (0,))])
def test_the_thread_count_does_not_change_the_bits(shape, axes, parallel_always, threads):
    x = _data(shape, np.float32, seed=7)
    eager = {name: np.asarray(f(jnp.asarray(x))) for name, f in _cases(axes).items()}
    for n in (1, 2, 3):
        threads(n)
        for name, f in _cases(axes).items():
            assert np.array_equal(np.asarray(jit_compiled(f, x)), eager[name]), (n, name)


def test_integer_and_bool_leading_reductions(parallel_always):
    x = np.random.default_rng(1).integers(-1000, 1000, (300, 7)).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(jit_compiled(lambda a: jnp.sum(a, axis=0), x)), x.sum(0))
    np.testing.assert_array_equal(np.asarray(jit_compiled(lambda a: jnp.min(a, axis=0), x)), x.min(0))
    np.testing.assert_array_equal(np.asarray(jit_compiled(lambda a: jnp.any(a > 990, axis=0), x)),
                                  (x > 990).any(0))
    np.testing.assert_array_equal(np.asarray(jit_compiled(lambda a: jnp.all(a > -990, axis=0), x)),
                                  (x > -990).all(0))


def _softmax0(x):
    return numjax.nn.softmax(x, axis=0)


def _np_softmax0(x):
    e = np.exp(x - x.max(0, keepdims=True))
    return e / e.sum(0, keepdims=True)


def _np_logsumexp0(x):
    m = x.max(0)
    m = np.where(np.isfinite(m), m, 0)
    return np.log(np.exp(x - m).sum(0)) + m


@pytest.mark.parametrize("rows", [65, 67, 1001, 4099])
def test_softmax_and_logsumexp_over_axis0(rows, parallel_always):
    x = np.random.default_rng(rows).standard_normal((rows, 37)).astype(np.float32)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(np.asarray(jit_compiled(_softmax0, x)), _np_softmax0(x64), rtol=2e-5, atol=1e-7)
    np.testing.assert_allclose(np.asarray(jit_compiled(lambda a: numjax.nn.logsumexp(a, axis=0), x)),
                               _np_logsumexp0(x64), rtol=2e-5, atol=2e-5)


def test_float64_under_x64(x64, parallel_always):
    x = np.random.default_rng(3).standard_normal((300, 11))
    got = np.asarray(jit_compiled(_softmax0, x))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, _np_softmax0(x), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(jit_compiled(lambda a: jnp.var(a, axis=0), x)), x.var(0), rtol=1e-12)


def test_nan_and_inf_propagate(parallel_always):
    x = np.random.default_rng(4).standard_normal((200, 6)).astype(np.float32)
    x[150, 0] = np.nan          # a NaN in a late block
    x[3, 1] = np.inf            # +inf in the first block
    x[:, 2] = -np.inf           # a column of -inf
    x[199, 3] = np.inf          # +inf in the last row
    with np.errstate(all="ignore"):
        for ours, ref in ((lambda a: jnp.sum(a, axis=0), lambda a: a.sum(0)),
                          (lambda a: jnp.max(a, axis=0), lambda a: a.max(0)),
                          (lambda a: numjax.nn.logsumexp(a, axis=0), _np_logsumexp0),
                          (_softmax0, _np_softmax0)):
            got, want = np.asarray(jit_compiled(ours, x)), ref(x.astype(np.float64))
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
            finite = np.isfinite(want)
            np.testing.assert_allclose(got[finite], want[finite], rtol=2e-5, atol=1e-6)


def test_the_rows_are_split_between_threads():
    # The program's kernels: a parallel loop over the blocks, then the combine kernel.
    x = np.zeros((4096, 256), np.float32)
    text = numjax.jit(lambda a: jnp.sum(a, axis=0)).lower(x).compile().as_text()
    assert "numba.prange(nb)" in text and "for b in range(1, nb):" in text
    # Few rows: one block, the loop over the rows as before.
    small = numjax.jit(lambda a: jnp.sum(a, axis=0)).lower(np.zeros((64, 256), np.float32)).compile().as_text()
    assert "prange(nb)" not in small


def test_inside_a_compiled_loop_the_blocks_run_in_order():
    # A loop body's kernel (serial form): the same bits as eager.
    x = _data((300, 9), np.float32, seed=9)

    def body(i, acc):
        return acc + jnp.sum(x * (i + 1.0), axis=0)
    f = lambda a: lax.fori_loop(0, 3, body, a)                # noqa: E731
    start = np.zeros(9, np.float32)
    want = start
    for i in range(3):
        want = np.asarray(want + jnp.sum(jnp.asarray(x) * (i + 1.0), axis=0))
    assert np.array_equal(np.asarray(jit_compiled(f, start)), want)


@pytest.mark.parametrize("threshold", [1, 1 << 40])
def test_numba_backend_programs_use_the_same_order(threshold):
    # An FFT keeps the program on the Numba backend: its parallel program (the split form)
    # runs from the threshold on, its serial one (the blocks in one kernel) below it.
    # (The sum reads the input itself: FFTs may differ from eager ones in the last bits.)
    x = _data((300, 16), np.float32, seed=11)
    f = lambda a: (jnp.sum(a * 3 - 1, axis=0), jnp.fft.fft(a))       # noqa: E731
    text = numjax.jit(f).lower(x).compile().as_text()
    assert "prange(nb)" in text and "_par(arg0)" in text
    old = config.numjax_parallel_threshold
    numjax.config.update("numjax_parallel_threshold", threshold)
    try:
        assert np.array_equal(np.asarray(jit_compiled(f, x)[0]), np.asarray(f(jnp.asarray(x))[0]))
    finally:
        numjax.config.update("numjax_parallel_threshold", old)


def test_regions_with_several_results(parallel_always):
    # One region: a materialized value, a scalar argument, and reductions keeping different axes.
    x = _data((150, 3, 8), np.float32, seed=13)

    def f(a, s):
        y = jnp.abs(a) * s + 1
        return y, jnp.sum(y, axis=0), jnp.sum(y, axis=(0, 1)), jnp.max(y, axis=0)
    s = np.float32(1.5)
    got = jit_compiled(f, x, s)
    want = f(jnp.asarray(x), s)
    for g, w in zip(got, want):
        assert np.array_equal(np.asarray(g), np.asarray(w))


def test_complex_leading_sums_agree_with_eager(parallel_always):
    x = (_data((150, 6), np.float32, seed=17) + 1j * _data((150, 6), np.float32, seed=18)).astype(np.complex64)
    # (Complex products and quotients have a formula of their own under jit, so only sums.)
    for f in (lambda a: jnp.sum(a, axis=0), lambda a: jnp.sum(a + a - 1j, axis=0)):
        eager, jitted = np.asarray(f(jnp.asarray(x))), np.asarray(jit_compiled(f, x))
        assert jitted.dtype == np.complex64
        assert np.array_equal(eager, jitted)

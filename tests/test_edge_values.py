"""Edge values, eager and under jit, against the rules of tests/edge_values_table.py (signed
zeros and NaN in max/min everywhere, bitcasts between widths, bit counts), plus the other edge
behaviour of issue 11: exp2's formula, logaddexp at infinities and on complex numbers, the 64-bit
Gumbel sampler, lax.reduce, lax.full, mixed-type dot_general, and numpy's floating-point
RuntimeWarnings, which JAX never emits (numjax must not leak them, nor change numpy's state)."""
import threading
import warnings

import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax import lax
from edge_values_table import (BIT_COUNT_DTYPES, BITCASTS, FLOAT_DTYPES, ZEROS_2D, ZEROS_A, ZEROS_B,
                               bit_count_operands, bitcast_input, bitcast_rule, bits_of, clz_rule,
                               popcount_rule, signed_zero_cases, wrap)
from helpers import jit_compiled


def _same(got, want):
    """Equal values with equal signs of zero, NaN where NaN is expected."""
    got, want = np.asarray(got, np.float64).reshape(-1), np.asarray(want, np.float64).reshape(-1)
    assert got.shape == want.shape, (got, want)
    same = (got == want) & (np.signbit(got) == np.signbit(want)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), f"got {got.tolist()}, expected {want.tolist()}"


# ---------------------------------------------------------------- signed zeros and NaN

@pytest.mark.parametrize("dt", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(signed_zero_cases("float32")))
def test_signed_zeros_and_nan(name, dt):
    fn, rule = signed_zero_cases(dt)[name]
    a, b, m = (np.asarray(v).astype(getattr(jnp, dt)) for v in (ZEROS_A, ZEROS_B, ZEROS_2D))
    want = rule(a.astype(np.float64), b.astype(np.float64), m.astype(np.float64))
    _same(fn(numjax, jnp, lax, jnp.asarray(a), jnp.asarray(b), jnp.asarray(m)), want)
    _same(jit_compiled(lambda a, b, m: fn(numjax, jnp, lax, a, b, m), a, b, m), want)


def test_signed_zeros_in_float64(x64):
    a, b = ZEROS_A.astype(np.float64), ZEROS_B.astype(np.float64)
    for f in (lax.max, lax.min):
        _same(f(a, b), jit_compiled(f, a, b))
    _same(lax.max(a, b)[:4], [0.0, 0.0, 0.0, -0.0])
    _same(jit_compiled(lax.min, a, b)[:4], [-0.0, -0.0, 0.0, -0.0])


def test_numba_backend_signed_zeros():
    """The Numba backend (control flow, complex programs) shares the scalar helpers."""
    from numjax.lowering import compile as numba_backend
    closed = numjax.make_jaxpr(lambda a, b: (lax.max(a, b), lax.min(a, b), jnp.max(b), lax.cummin(a)))(ZEROS_A, ZEROS_B)
    outs = numba_backend.Executable(numba_backend.lower_jaxpr(closed)).call_arrays([ZEROS_A, ZEROS_B])
    for got, want in zip(outs, (lax.max(ZEROS_A, ZEROS_B), lax.min(ZEROS_A, ZEROS_B), jnp.max(ZEROS_B),
                                lax.cummin(ZEROS_A))):
        _same(got, want)


# ---------------------------------------------------------------- bitcasts between widths

@pytest.mark.parametrize("src,values,dst", BITCASTS, ids=[f"{s}->{d}" for s, _, d in BITCASTS])
def test_bitcast_between_widths(src, values, dst):
    x = bitcast_input(jnp, src, values, dst)
    dst_dt = np.dtype(getattr(jnp, dst))
    want = bitcast_rule(x, dst_dt)
    for got in (lax.bitcast_convert_type(x, dst_dt), jit_compiled(lambda v: lax.bitcast_convert_type(v, dst_dt), x)):
        got = np.asarray(got)
        assert got.dtype == dst_dt and got.shape == want.shape
        np.testing.assert_array_equal(bits_of(got), want)


def test_bitcast_batches_and_differentiates():
    x = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    per_row = numjax.vmap(lambda v: lax.bitcast_convert_type(v, jnp.float32))(x)
    np.testing.assert_array_equal(np.asarray(per_row), x.view(np.float32)[..., 0])
    # A batch axis last, where a widening bitcast consumes the operand's last axis: it is moved
    # out of the way first, so each example (2 bytes) becomes one uint16.
    pairs = np.arange(8, dtype=np.uint8).reshape(2, 4)
    out = numjax.vmap(lambda v: lax.bitcast_convert_type(v, jnp.uint16), in_axes=1)(pairs)
    np.testing.assert_array_equal(np.asarray(out), np.ascontiguousarray(pairs.T).view(np.uint16)[:, 0])
    g = numjax.grad(lambda v: lax.bitcast_convert_type(v, jnp.uint8).astype(jnp.float32).sum() + v.sum())(jnp.ones(2))
    np.testing.assert_array_equal(np.asarray(g), [1.0, 1.0])


@pytest.mark.parametrize("shape,src,dst", [((2, 3), "float32", "uint8"), ((2, 8), "uint8", "float32"),
                                            ((3,), "complex64", "float32"), ((4,), "float32", "complex64"),
                                            ((3,), "int8", "bool"), ((4,), "bool", "int16"), ((2, 4), "int4", "int8")])
def test_view_between_widths(shape, src, dst):
    x = (np.arange(int(np.prod(shape))).reshape(shape) % 2).astype(getattr(jnp, src))
    if src == "int4":     # numpy holds an int4 per byte: pack the nibble pairs by the rule
        want = bitcast_rule(x.reshape(2, 2, 2), np.dtype(np.int8)).astype(np.int8)
    else:
        want = x.view(getattr(jnp, dst))
    for got in (jnp.asarray(x).view(getattr(jnp, dst)), jit_compiled(lambda v: v.view(getattr(jnp, dst)), x)):
        np.testing.assert_array_equal(np.asarray(got), want)


# ---------------------------------------------------------------- population_count, clz

@pytest.mark.parametrize("dt", BIT_COUNT_DTYPES)
def test_bit_counts(dt):
    from numjax import dtypes as ndt
    d = np.dtype(getattr(jnp, dt))
    width = ndt.itemsize_bits(d)
    vals = bit_count_operands(dt)
    x = np.array(vals).astype(d)
    want_pop = [wrap(popcount_rule(v, dt, width), dt, width) for v in vals]
    want_clz = [wrap(clz_rule(v, dt, width), dt, width) for v in vals]
    for f, want in ((lax.population_count, want_pop), (lax.clz, want_clz)):
        for got in (f(x), jit_compiled(f, x)):
            assert np.asarray(got).dtype == d
            assert np.asarray(got).astype(np.int64).tolist() == want, (f.__name__, dt)


def test_bit_counts_numba_backend_and_batching():
    from numjax.lowering import compile as numba_backend
    x = np.array([0, 1, 5, -1, -128, 127], np.int8)
    closed = numjax.make_jaxpr(lambda v: (lax.population_count(v), lax.clz(v)))(x)
    pop, lz = numba_backend.Executable(numba_backend.lower_jaxpr(closed)).call_arrays([x])
    assert np.asarray(pop).tolist() == [0, 1, 2, 8, 1, 7] and np.asarray(lz).tolist() == [8, 7, 5, 0, 0, 1]
    assert numjax.vmap(lax.clz)(jnp.ones((2, 3), jnp.int16)).tolist() == [[15] * 3] * 2
    assert "clz" in str(numjax.make_jaxpr(lax.clz)(x))


# ---------------------------------------------------------------- exp2, logaddexp, rounding

@pytest.mark.parametrize("dt", ("float32", "float16", "bfloat16"))
def test_exp2_is_exp_of_ln2_times_x(dt):
    x = jnp.asarray(np.linspace(-30, 30, 1001).astype(getattr(jnp, dt)))
    ln2 = jnp.asarray(np.log(2)).astype(getattr(jnp, dt))
    want = np.asarray(lax.exp(lax.mul(ln2, x)))
    for got in (lax.exp2(x), jit_compiled(lax.exp2, x)):
        np.testing.assert_array_equal(np.asarray(got).view(np.uint16 if dt != "float32" else np.uint32),
                                      want.view(np.uint16 if dt != "float32" else np.uint32))


@pytest.mark.parametrize("fn", [jnp.logaddexp, jnp.logaddexp2])
def test_logaddexp_gradients_at_infinities(fn):
    g = numjax.grad(fn, argnums=(0, 1))
    assert [float(v) for v in g(-np.inf, 1.0)] == [0.0, 1.0]       # exp(-inf - out): no weight
    assert all(np.isnan(float(v)) for v in g(-np.inf, -np.inf))
    assert [float(v) for v in jit_compiled(g, -np.inf, 1.0)] == [0.0, 1.0]


@pytest.mark.parametrize("fn,base", [(jnp.logaddexp, np.e), (jnp.logaddexp2, 2.0)])
def test_logaddexp_of_complex(fn, base):
    a = np.array([1 + 2j, -3 - 0.5j, 5 + 7j, -40 + 0.1j], np.complex64)
    b = np.array([1 + 2j, 2 + 3j, -1 - 7j, 3 + 0j], np.complex64)
    period = np.pi / np.log(base)
    want = np.log(base ** a.astype(np.complex128) + base ** b.astype(np.complex128)) / np.log(base)
    for got in (fn(a, b), jit_compiled(fn, a, b)):
        got = np.asarray(got)
        assert got.dtype == np.complex64
        np.testing.assert_allclose(got.real, want.real, rtol=1e-5, atol=1e-5)
        # the imaginary part is defined up to whole periods, wrapped into [-period, period]
        assert np.all(np.abs(got.imag) <= period + 1e-5)
        for trig in (np.cos, np.sin):
            np.testing.assert_allclose(trig(got.imag / period * np.pi), trig(want.imag / period * np.pi), atol=1e-4)


def test_complex_round_keeps_signed_zero_parts():
    z = np.array([1.4, -0.0, -0.3, -0.0, -0.0, -0.2], np.float32).view(np.complex64)
    for got in (jnp.round(z), jnp.rint(z), jnp.round(z, 1), jit_compiled(jnp.round, z)):
        got = np.asarray(got)
        assert np.signbit(got.imag).tolist() == [True, True, True]
        assert np.signbit(got.real).tolist() == [False, True, True]


# ---------------------------------------------------------------- gumbel mode="highest"

def _fraction_rule(hi, lo):
    """hi:lo as a 64-bit binary fraction, truncated to float32's 24 significant bits."""
    import math
    n = (hi << 32) | lo
    length = n.bit_length()
    top = n >> (length - 24) if length > 24 else n << (24 - length)
    return np.float32(math.ldexp(top, length - 24 - 64))


def test_gumbel_highest_fraction_to_float():
    from numjax.random import _fraction_to_float32
    pairs = [(0xFFFFFFFF, 0xFFFFFFFF), (0x80000000, 0), (0x7FFFFFFF, 0xFFFFFFFF), (1, 0), (0, 1),
             (0, 0xFFFFFFFF), (0, 0x80000000), (0x00012345, 0x6789ABCD), (0x000000FF, 0x12345678)]
    hi, lo = (np.array(v, np.uint32) for v in zip(*pairs))
    want = [_fraction_rule(h, l) for h, l in pairs]
    for got in (_fraction_to_float32(hi, lo), jit_compiled(_fraction_to_float32, hi, lo)):
        np.testing.assert_array_equal(np.asarray(got), np.array(want, np.float32))


def test_gumbel_highest_samples():
    key = numjax.random.PRNGKey(0)
    n = 100_000
    v = numjax.random.gumbel(key, (n,), mode="highest")
    np.testing.assert_array_equal(np.asarray(v), np.asarray(jit_compiled(
        lambda k: numjax.random.gumbel(k, (n,), mode="highest"), key)))
    v = np.asarray(v, np.float64)
    assert np.isfinite(v).all()
    assert abs(v.mean() - np.euler_gamma) < 0.03 and abs(v.var() - np.pi ** 2 / 6) < 0.06
    assert numjax.random.gumbel(key, (3,), jnp.bfloat16, mode="highest").dtype == jnp.bfloat16


# ---------------------------------------------------------------- lax.reduce, lax.full

def test_reduce_recognises_monoids():
    x = jnp.arange(6.0).reshape(2, 3)
    for comp, init, prim in ((lax.add, 0.0, "reduce_sum"), (lax.max, -np.inf, "reduce_max"),
                             (lax.min, np.inf, "reduce_min"), (lax.mul, 1.0, "reduce_prod")):
        assert prim in str(numjax.make_jaxpr(lambda v: lax.reduce(v, init, comp, (1,)))(x))
    assert "reduce_or" in str(numjax.make_jaxpr(lambda v: lax.reduce(v, False, lax.bitwise_or, (0,)))(jnp.array([True])))
    assert not lax.reduce(jnp.ones(3), 0.0, lax.add, (0,)).weak_type


def test_reduce_folds_other_computations_in_order():
    x = jnp.arange(6.0).reshape(2, 3)

    def f(v):
        return lax.reduce(v, 1.0, lambda a, b: a + 2 * b, (1,))
    want = [1 + 2 * (0 + 1 + 2), 1 + 2 * (3 + 4 + 5)]
    for got in (f(x), jit_compiled(f, x), numjax.vmap(lambda r: lax.reduce(r, 1.0, lambda a, b: a + 2 * b, (0,)))(x)):
        assert np.asarray(got).tolist() == want
    pair = lax.reduce((x, jnp.arange(6).reshape(2, 3)), (0.0, 0), lambda a, b: (a[0] + b[0], lax.max(a[1], b[1])), (1,))
    assert np.asarray(pair[0]).tolist() == [3.0, 12.0] and np.asarray(pair[1]).tolist() == [2, 5]
    assert lax.reduce(jnp.zeros((0, 2)), 7.0, lambda a, b: a * b, (0,)).tolist() == [7.0, 7.0]


def test_full_and_full_like():
    assert lax.full((2,), 3.0).weak_type and lax.full((2,), 3.0).dtype == jnp.float32
    assert not lax.full((2,), 3, jnp.float32).weak_type
    assert lax.full_like(jnp.ones(2, jnp.int8), 3).dtype == jnp.int8
    assert lax.full_like(jnp.ones(2, jnp.int8), 3, shape=(3, 1)).shape == (3, 1)
    assert lax.full_like(3.0, 2.0).weak_type
    assert jit_compiled(lambda v: lax.full((2, 2), v), jnp.float32(2.5)).tolist() == [[2.5, 2.5]] * 2


# ---------------------------------------------------------------- mixed-type dot_general

@pytest.mark.parametrize("a,b,pref,result", [
    ("float32", "bfloat16", None, "float32"), ("int8", "float32", None, "float32"), ("float16", "float32", None, "float32"),
    ("int8", "int16", None, "int16"), ("float32", "complex64", None, "complex64"), ("int8", "uint8", "int32", "int32"),
    ("float32", "int32", None, "float32"), ("int8", "uint8", None, "int8")])
def test_dot_general_mixed_types(a, b, pref, result):
    rng = np.random.default_rng(0)
    for n in (3, 64):    # small, and large enough for the BLAS path
        x = rng.integers(-3, 4, (n, n + 1)).astype(getattr(jnp, a))
        y = rng.integers(-3, 4, (n + 1, n - 1)).astype(getattr(jnp, b))
        pet = None if pref is None else getattr(jnp, pref)
        rdt = np.dtype(getattr(jnp, result))
        exact = np.int64 if rdt.kind in "iu" else np.float64   # (integers wrap to the result type)
        exact = np.complex128 if rdt.kind == "c" else exact
        want = (np.asarray(x).astype(exact) @ np.asarray(y).astype(exact)).astype(rdt)
        for got in (lax.dot_general(x, y, (((1,), (0,)), ((), ())), preferred_element_type=pet),
                    jit_compiled(lambda u, v: lax.dot_general(u, v, (((1,), (0,)), ((), ())),
                                                              preferred_element_type=pet), x, y)):
            assert got.dtype == rdt
            np.testing.assert_array_equal(np.asarray(got), want)


# ---------------------------------------------------------------- numpy's RuntimeWarnings

_INF = np.array([np.inf, 1.0], np.float32)
_ZERO = np.array([0.0, 1.0], np.float32)
SILENT_CASES = {
    "fast path inf - inf": lambda: jnp.asarray(_INF) - jnp.asarray(_INF),
    "fast path overflow": lambda: jnp.asarray(np.float32([3e38])) * 10.0,
    "fast path float8 inf - inf": lambda: jnp.asarray(_INF).astype(jnp.float8_e5m2) - jnp.asarray(_INF).astype(jnp.float8_e5m2),
    "fast path bfloat16": lambda: jnp.asarray(_INF).astype(jnp.bfloat16) * 0.0,
    "lax.mul inf * 0": lambda: lax.mul(jnp.asarray(_INF), jnp.asarray(_ZERO)),
    "jnp.var of inf": lambda: jnp.var(jnp.asarray(_INF)),
    "power of an empty array": lambda: jnp.power(jnp.zeros((0,)), 2.5),
    "grad of norm at 0": lambda: numjax.grad(jnp.linalg.norm)(jnp.zeros(3)),
    "jit vector dot inf * 0": lambda: numjax.jit(jnp.dot)(_INF, _ZERO),
    "jit matmul inf * 0": lambda: numjax.jit(jnp.matmul)(np.full((3, 3), np.inf, np.float32), np.zeros((3, 3), np.float32)),
    "jit batched matmul": lambda: numjax.jit(jnp.matmul)(np.full((2, 3, 3), np.inf, np.float32),
                                                         np.zeros((2, 3, 3), np.float32)),
    "jit scalar dot": lambda: numjax.jit(lambda a, b: jnp.einsum("...,...->", a, b))(np.float32(np.inf), np.float32(0)),
    "fft of inf": lambda: jnp.fft.fft(jnp.asarray(_INF)),
    "jit fft of inf": lambda: numjax.jit(jnp.fft.fft)(_INF),
    "cumsum inf - inf": lambda: jnp.cumsum(jnp.asarray([np.inf, -np.inf])),
    "reduce_window inf - inf": lambda: lax.reduce_window(jnp.asarray([np.inf, -np.inf]), 0.0, lax.add, (2,), (1,), "VALID"),
    "conv of inf": lambda: lax.conv(jnp.full((1, 1, 3, 3), np.inf), jnp.zeros((1, 1, 2, 2)), (1, 1), "VALID"),
}


@pytest.mark.parametrize("name", sorted(SILENT_CASES))
def test_no_numpy_runtime_warnings(name):
    state = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        np.asarray(SILENT_CASES[name]())
    assert np.geterr() == state
    with pytest.warns(RuntimeWarning):       # the user's own numpy still warns
        np.array([np.inf]) - np.array([np.inf])


def test_quiet_fast_path_from_many_threads():
    # One thread at a time holds the quiet context; the others fall back, all silent and right.
    x = jnp.asarray(np.array([np.inf, 2.0], np.float32))
    errors = []

    def work():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                for _ in range(300):
                    out = np.asarray(x - x)
                    assert np.isnan(out[0]) and out[1] == 0.0
        except Exception as e:   # noqa: BLE001  (reported below)
            errors.append(e)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors

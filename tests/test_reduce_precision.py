"""lax.reduce_precision (XLA's ReducePrecision): float32 and float64 under jit bit for bit as
eagerly; against independent oracles (ml_dtypes' bfloat16 and numpy's float16 rounding); its
derivative (linear), batching, jaxpr and errors. (Against JAX: tests/compat.)"""
import ml_dtypes
import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax import lax

CONFIGS = [(8, 7), (5, 10), (4, 3), (5, 2), (8, 23), (11, 52), (8, 0), (1, 1), (2, 5), (6, 20), (3, 0)]


def _random_f32(n=200_000, seed=0):
    bits = np.random.default_rng(seed).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    special = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC00001, 1,
                        0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0x3F800000, 0x477FF000, 0x477FF001], np.uint32)
    return np.concatenate([bits, special]).view(np.float32)


def _bits(x):
    v = np.asarray(x)
    return v.view(np.dtype(f"uint{8 * v.dtype.itemsize}"))


@pytest.mark.parametrize("config", CONFIGS)
def test_jit_equals_eager_float32(config):
    x = _random_f32()
    eager = lax.reduce_precision(x, *config)
    jitted = numjax.jit(lambda v: lax.reduce_precision(v, *config))(x)
    np.testing.assert_array_equal(_bits(jitted), _bits(eager))
    nan = np.isnan(x)
    np.testing.assert_array_equal(_bits(np.asarray(eager)[nan]), _bits(x[nan]))   # NaN passes unchanged


@pytest.mark.parametrize("config", [(8, 7), (5, 10), (11, 52), (3, 40), (11, 0)])
def test_jit_equals_eager_float64(config):
    with numjax.enable_x64(True):      # (JAX's context manager; the x64 fixture does the same)
        bits = np.random.default_rng(1).integers(0, 2**63, 100_000, dtype=np.int64).view(np.float64)
        x = np.concatenate([bits, -bits, [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1.7976931348623157e308]])
        eager = lax.reduce_precision(x, *config)
        jitted = numjax.jit(lambda v: lax.reduce_precision(v, *config))(x)
        assert eager.dtype == np.float64
        np.testing.assert_array_equal(_bits(jitted), _bits(eager))


def test_bfloat16_format_is_ml_dtypes_rounding():
    x = _random_f32()
    x = x[~np.isnan(x)]
    want = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    for fn in (lambda v: lax.reduce_precision(v, 8, 7), numjax.jit(lambda v: lax.reduce_precision(v, 8, 7))):
        np.testing.assert_array_equal(_bits(fn(x)), _bits(want))


def test_float16_format_is_numpy_rounding_with_subnormals_flushed():
    x = _random_f32()
    x = x[~np.isnan(x)]
    with np.errstate(over="ignore"):
        half = x.astype(np.float16)
    want = np.where(np.abs(half) < np.float16(2.0**-14), np.copysign(np.float32(0), x), half.astype(np.float32))
    for fn in (lambda v: lax.reduce_precision(v, 5, 10), numjax.jit(lambda v: lax.reduce_precision(v, 5, 10))):
        np.testing.assert_array_equal(_bits(fn(x)), _bits(want.astype(np.float32)))


def test_derivatives_and_batching():
    f = lambda v: lax.reduce_precision(v * 2, exponent_bits=5, mantissa_bits=2)   # noqa: E731
    np.testing.assert_array_equal(np.asarray(numjax.grad(lambda v: f(v).sum())(jnp.array([1.3, 2.0]))), [2.0, 2.0])
    _, tangent = numjax.jvp(f, (jnp.array([1.3]),), (jnp.array([0.3]),))
    np.testing.assert_array_equal(np.asarray(tangent), [0.625])     # 0.6 at 2 mantissa bits
    x = jnp.arange(6.0).reshape(2, 3) * 1.1
    np.testing.assert_array_equal(np.asarray(numjax.vmap(f)(x)), np.asarray(f(x)))
    assert "reduce_precision[exponent_bits=5 mantissa_bits=2]" in str(numjax.make_jaxpr(f)(jnp.ones(3)))


def test_bad_arguments():
    with pytest.raises(ValueError, match="exponent_bits must be positive; got 0"):
        lax.reduce_precision(jnp.ones(2), 0, 3)
    with pytest.raises(ValueError, match="mantissa_bits must be non-negative; got -1"):
        lax.reduce_precision(jnp.ones(2), 3, -1)
    with pytest.raises(TypeError, match="reduce_precision does not accept dtype int32"):
        lax.reduce_precision(jnp.arange(2), 3, 1)
    with pytest.raises(TypeError):
        lax.reduce_precision(jnp.ones(2), 3.5, 1)
    with pytest.raises(numjax.errors.ConcretizationTypeError, match="exponent_bits"):
        numjax.jit(lambda e: lax.reduce_precision(jnp.ones(2), e, 1))(3)

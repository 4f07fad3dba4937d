"""float16 under jit: stored as its bits, computed in float32 and rounded per operation
(lowering/low_precision.py), as XLA's CPU backend does.  No eager fallback (the suite turns
the fallback warning into an error)."""
import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp

ALL_HALVES = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return bool(np.all((a.view(np.uint16 if a.itemsize == 2 else np.uint32)
                        == b.view(np.uint16 if b.itemsize == 2 else np.uint32))
                       | (np.isnan(a) & np.isnan(b))))


def test_widening_is_exact_for_every_half():
    got = jax.jit(lambda x: x.astype(jnp.float32))(ALL_HALVES)
    assert _same_bits(got, ALL_HALVES.astype(np.float32))


def test_rounding_matches_numpy_everywhere():
    rng = np.random.default_rng(0)
    scales = (1e-8, 6e-8, 1e-5, 1e-3, 1.0, 100.0, 7e4)
    xs = np.concatenate([rng.standard_normal(50_000).astype(np.float32) * s for s in scales]
                        + [ALL_HALVES.astype(np.float32),
                           np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 65504, 65519.99, 65520,
                                     1e10, 2.98e-8, 2.99e-8, 5.96e-8], np.float32)])
    got = jax.jit(lambda x: x.astype(jnp.float16))(xs)
    with np.errstate(all="ignore"):
        want = xs.astype(np.float16)
    assert got.dtype == jnp.float16
    assert _same_bits(got, want)


@pytest.mark.parametrize("fn", [
    lambda a, b: a * b + 1,
    lambda a, b: jnp.exp(a) - b,
    lambda a, b: jnp.where(a > b, a / b, jnp.tanh(b)),
    lambda a, b: jnp.maximum(a, b).reshape(4, 25).T,
])
def test_jit_rounds_each_operation(fn):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(100).astype(np.float16)
    b = rng.standard_normal(100).astype(np.float16)
    got = jax.jit(fn)(a, b)
    want = fn(jnp.asarray(a), jnp.asarray(b))     # eager: numpy's float16 loops round per op
    assert got.dtype == want.dtype == jnp.float16
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32),
                               rtol=2e-3, atol=2e-3)


def test_sum_and_grad_in_float16():
    x = jnp.asarray(np.linspace(-1, 1, 64), jnp.float16)
    s = jax.jit(jnp.sum)(x)
    assert s.dtype == jnp.float16
    g = jax.jit(jax.grad(lambda x: jnp.sum(x * x)))(x)
    assert g.dtype == jnp.float16
    np.testing.assert_allclose(np.asarray(g, np.float32), 2 * np.asarray(x, np.float32), rtol=1e-3)


def test_saturating_increment_as_optax():
    inc = jax.jit(lambda c: jnp.where(c < jnp.finfo(c.dtype).max, c + 1, c))
    assert float(inc(jnp.float16(3))) == 4.0
    big = jnp.asarray(jnp.finfo(jnp.float16).max, jnp.float16)
    assert float(inc(big)) == float(big)

"""float32 sin/cos under jit next to real JAX: the same bits (XLA's CPU backend calls glibc's
sinf/cosf, which lowering/vmath_sincos.py reproduces), on random bit patterns, every reduction
path's range, huge values, subnormals, inf and nan."""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402

import numjax  # noqa: E402
import numjax.numpy as njnp  # noqa: E402

jax.config.update("jax_enable_x64", False)


def _inputs(n=1 << 21):
    rng = np.random.default_rng(14)
    f = np.float32
    parts = [
        rng.integers(0, 1 << 32, n // 2, dtype=np.uint64).astype(np.uint32).view(f),
        rng.uniform(-130, 130, n // 4).astype(f),
        (rng.uniform(-1, 1, n // 4) * 10.0 ** rng.uniform(0, 38, n // 4)).astype(f),
        np.array([0, 0.75, 120, 2 ** -12, 2 ** -126, 1e-45, 3.4028235e38, np.inf, np.nan], f),
    ]
    x = np.concatenate(parts)
    return np.concatenate([x, -x])


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_same_bits_as_jax(name):
    x = _inputs()
    ours = np.asarray(numjax.jit(getattr(njnp, name))(x))
    theirs = np.asarray(jax.jit(getattr(jjnp, name))(x))
    nan = np.isnan(ours) & np.isnan(theirs)
    bad = (ours.view(np.uint32) != theirs.view(np.uint32)) & ~nan
    assert not bad.any(), (x[bad][:5], ours[bad][:5], theirs[bad][:5])
    assert np.array_equal(np.isnan(ours), np.isnan(theirs))

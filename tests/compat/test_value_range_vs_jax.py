"""Programs whose value ranges pick vmath's variants (lowering/value_range.py, ``fn.within``)
against real JAX, bit for bit (nan for nan): each variant through a clipped argument, over a
dense sample of its domain and its edges, and the chain whose stages all use one.

JAX's side takes the argument clipped by numpy: JAX's own ``fn(clip(x))`` is not JAX's ``fn``
of the clipped values in two ways (JAX 0.10.2, CPU): its fused clip flushes subnormals to zero
(``jnp.maximum(1e-39, -1.0)`` is 0.0 under jit), and log1p fused after a clip is another
formula (log1p(180.61937) = 5.201913 alone, 5.2019134 after a clip).  numjax gives JAX's unfused
bits in both; see the closing note of the fourteenth session."""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402

jax.config.update("jax_platform_name", "cpu")
F32_MAX = float(np.finfo(np.float32).max)

# variant -> (function name, clip bounds)
CLIPPED = {
    "exp_f32_mid": ("exp", -80.0, 80.0), "tanh_f32_rational": ("tanh", 4.0001e-4, 7.998),
    "tanh_f32_inner": ("tanh", -7.998, 7.998), "log1p_f32_big": ("log1p", 0.41422, F32_MAX),
    "log1p_f32_small": ("log1p", -0.4142, 0.4142), "log_f32_normal": ("log", 1.2e-38, F32_MAX),
    "sin_f32_small": ("sin", -0.7499, 0.7499), "cos_f32_small": ("cos", -0.7499, 0.7499),
    "sin_f32_fast": ("sin", -119.99, 119.99), "cos_f32_fast": ("cos", -119.99, 119.99),
}


def _sample(lo, hi, seed=0):
    rng = np.random.default_rng(seed)
    lo32, hi32 = np.float32(lo), np.float32(hi)
    bits = rng.integers(0, 2**32, 1 << 18, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = np.concatenate([rng.uniform(max(lo, -200.0), min(hi, 200.0), 1 << 18).astype(np.float32), bits,
                        np.float32([lo32, hi32, np.nan, np.inf, -np.inf, 0.0, -0.0])])
    return x


def _assert_same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), (np.flatnonzero(~same)[:5], got[~same][:5], want[~same][:5])


@pytest.mark.parametrize("variant", sorted(CLIPPED))
def test_clipped_variant_matches_jax(variant):
    name, lo, hi = CLIPPED[variant]
    x = _sample(lo, hi)
    program = nj.jit(lambda v: getattr(njnp, name)(njnp.clip(v, lo, hi)))
    assert f"vm.{variant}(" in program.lower(x).as_text()
    want = jax.jit(getattr(jjnp, name))(np.clip(x, np.float32(lo), np.float32(hi)))
    _assert_same(program(x), want)


def test_chain_with_variants_matches_jax():
    def chain(np_, v):
        return np_.cos(np_.log1p(np_.tanh(np_.exp(np_.sin(v) * 0.5 + 0.25)))) * 2.0 - 1.0
    x = _sample(-1e4, 1e4, seed=1)
    _assert_same(nj.jit(lambda v: chain(njnp, v))(x), jax.jit(lambda v: chain(jjnp, v))(x))

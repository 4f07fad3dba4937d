"""float16 under jit against real JAX 0.10.2: XLA's CPU backend computes half precision in
float32 and rounds every result, as numjax's storage rewrite does (lowering/low_precision.py).

    .venv-jax/bin/python -m pytest tests/compat/test_float16_vs_jax.py
"""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
jnp = jax.numpy

import numjax  # noqa: E402
import numjax.numpy as njnp  # noqa: E402

# Values where float32 arithmetic itself already differs (XLA flushes denormals) are left out:
# a grid of normal halves, signs, ties and the extremes.
_GRID = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, 3.0, 1e-3, -7.25, 100.0, 0.099975586,
                  65504.0, -65504.0, 6.1035156e-05, np.inf, -np.inf, np.nan], np.float16)
A, B = np.meshgrid(_GRID, _GRID)
A, B = A.ravel(), B.ravel()

CASES = {
    "mul_add": lambda m, a, b: a * b + 1,
    "div": lambda m, a, b: a / b,
    "exp_sub": lambda m, a, b: m.exp(a) - b,
    "tanh": lambda m, a, b: m.tanh(a) * b,
    "where": lambda m, a, b: m.where(a > b, a, b * 2),
    "sum": lambda m, a, b: m.sum(a * 0.001 + b * 0.001),
    "mean": lambda m, a, b: m.mean(a * 0.001),
    "astype_f32": lambda m, a, b: (a + b).astype(m.float32),
    "from_f32": lambda m, a, b: (a.astype(m.float32) * 1.0001).astype(m.float16),
}


# XLA lets LLVM contract a half-precision ``a * b + c`` into one float32 FMA before the
# single rounding (checked: 0.1 * -7.25 + 1 gives 0.2751 on JAX, 0.2754 rounding the product
# first, as numjax and JAX's own eager evaluation do); other chains round every step.
_ONE_ULP = {"mul_add"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_jit_float16_bits_match_jax(name):
    fn = CASES[name]
    want = np.asarray(jax.jit(lambda a, b: fn(jnp, a, b))(A, B))
    got = np.asarray(numjax.jit(lambda a, b: fn(njnp, a, b))(A, B))
    assert got.dtype == want.dtype and got.shape == want.shape
    bits = np.uint16 if want.dtype.itemsize == 2 else np.uint32
    same = (got.view(bits) == want.view(bits)) | (np.isnan(got) & np.isnan(want))
    if name in _ONE_ULP:
        ulps = np.abs(got.view(bits).astype(np.int64) - want.view(bits).astype(np.int64))
        same |= ulps <= 1
    assert same.all(), (A[~same][:5], B[~same][:5], got[~same][:5], want[~same][:5])

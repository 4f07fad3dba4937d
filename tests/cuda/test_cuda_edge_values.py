"""Issue 11's edge values on the CUDA backend: XLA's signed zeros and NaN in max/min (the
shared scalar helpers sh.fmax/sh.fmin), and population_count/clz (sh.popcount/sh.fill_below),
against the CPU backend, bit for bit."""
import numpy as np

import numjax.numpy as jnp
from numjax import lax
from numjax.config import config
from helpers_cuda import cuda_executable, on_cpu


def _on_cuda(fn, *args):
    previous = config.jax_platforms
    config.update("jax_platforms", "cuda")
    try:
        exe, outs = cuda_executable(fn, *args)
        return exe, outs
    finally:
        config.update("jax_platforms", previous)


def _bits_equal(got, want):
    """Equal bits, except that a NaN may have another payload (a GPU's NaN is all ones)."""
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        if g.dtype.kind == "f":
            nan = np.isnan(g)
            assert (nan == np.isnan(w)).all(), (g, w)
            g, w = g[~nan], w[~nan]
        assert np.ascontiguousarray(g).tobytes() == np.ascontiguousarray(w).tobytes(), (g, w)


def test_signed_zeros_and_nan_on_cuda():
    a = np.array([0.0, -0.0, 0.0, -0.0, np.nan, 1.0, -np.inf], np.float32)
    b = np.array([-0.0, 0.0, 0.0, -0.0, 1.0, np.nan, np.inf], np.float32)

    def f(a, b):
        return lax.max(a, b), lax.min(a, b), jnp.maximum(b, a), lax.clamp(np.float32(0), a, np.float32(1))
    exe, outs = _on_cuda(f, a, b)
    assert getattr(exe, "backend", "cpu") == "cuda", exe.source
    _bits_equal(outs, on_cpu(f, a, b))
    assert np.signbit(np.asarray(outs[0])[:4]).tolist() == [False, False, False, True]
    assert np.signbit(np.asarray(outs[1])[:4]).tolist() == [True, True, False, True]


def test_bit_counts_on_cuda():
    for dt in (np.int8, np.uint16, np.int32, np.uint32):
        info = np.iinfo(dt)
        x = np.array([0, 1, 2, 3, info.max, info.min, info.max - 1], dt)

        def f(v):
            return lax.population_count(v), lax.clz(v)
        exe, outs = _on_cuda(f, x)
        assert getattr(exe, "backend", "cpu") == "cuda", exe.source
        _bits_equal(outs, on_cpu(f, x))

"""Running one function on both backends, for the CUDA tests."""
import numpy as np

import numjax
from numjax import dispatch
from numjax.config import config


def on_cpu(fn, *args):
    previous = config.jax_platforms
    config.update("jax_platforms", "cpu")
    try:
        return numjax.tree_util.tree_leaves(numjax.jit(fn)(*args))
    finally:
        config.update("jax_platforms", previous)


def cuda_executable(fn, *args):
    """The executable the dispatcher builds for ``fn`` on these arguments now (the CUDA one,
    or the CPU one the program fell back to), and its flat outputs."""
    closed = numjax.make_jaxpr(fn)(*args)
    closed = getattr(closed, "closed_jaxpr", closed)
    exe = dispatch.compiled_executable(closed, "test")
    vals = [np.asarray(a) for a in numjax.tree_util.tree_leaves(args)]
    return exe, exe.call_arrays(vals)


def assert_same(cuda_outs, cpu_outs, rtol=2e-6, atol=2e-6):
    assert len(cuda_outs) == len(cpu_outs)
    for got, want in zip(cuda_outs, cpu_outs):
        got, want = np.asarray(got), np.asarray(want)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        assert got.shape == want.shape, (got.shape, want.shape)
        if got.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(got, want)

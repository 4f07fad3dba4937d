"""dot_general on a real GPU (``tox -e gpu``): float32/float64 products through cuBLAS
(nvmath-python's bindings, cuda/blas.py) and the tiled kernel for the rest, compared with the
CPU backend at sizes the simulator cannot run; also sort, top_k and a convolution at such
sizes.  Skipped with the reason where there is no GPU."""
import importlib.util

import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax import dispatch, lax
from numjax.config import config

_HAVE_NVMATH = importlib.util.find_spec("nvmath") is not None
rng = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def gpu_x64():
    """The CUDA backend and 64-bit types for each test, then the settings as they were."""
    platforms, x64 = config.jax_platforms, config.jax_enable_x64
    config.update("jax_platforms", "cuda")
    config.update("jax_enable_x64", True)
    yield
    config.update("jax_platforms", platforms)
    config.update("jax_enable_x64", x64)


def _on_cpu(fn, *args):
    previous = config.jax_platforms
    config.update("jax_platforms", "cpu")
    try:
        return [np.asarray(v) for v in numjax.tree_util.tree_leaves(numjax.jit(fn)(*args))]
    finally:
        config.update("jax_platforms", previous)


def _on_gpu(fn, *args):
    closed = numjax.make_jaxpr(fn)(*args)
    exe = dispatch.compiled_executable(closed, "test")
    assert exe.backend == "cuda"
    outs = exe.call_arrays([np.asarray(a) for a in numjax.tree_util.tree_leaves(args)])
    return exe, [np.asarray(v) for v in outs]


def _dot_steps(exe):
    from numjax.cuda.blas import DotStep
    return [s for s in exe.steps if isinstance(s, DotStep)]


LAYOUTS = {
    "matmul": (lambda a, b: a @ b, (257, 129), (129, 65)),
    "lhs_transposed": (lambda a, b: a.T @ b, (129, 200), (129, 70)),
    "rhs_transposed": (lambda a, b: a @ b.T, (200, 129), (70, 129)),
    "both_transposed": (lambda a, b: lax.dot_general(a, b, (((0,), (1,)), ((), ()))), (129, 200), (70, 129)),
    "batched": (jnp.matmul, (6, 65, 129), (6, 129, 33)),
    "batched_contract_last": (lambda a, b: jnp.einsum("bij,bkj->bik", a, b), (5, 70, 96), (5, 40, 96)),
    "batch_in_the_middle": (lambda a, b: jnp.einsum("ibj,jbk->bik", a, b), (50, 3, 40), (40, 3, 30)),
    "matrix_vector": (jnp.dot, (300, 257), (257,)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_float_dot_general_matches_cpu(name, dtype):
    fn, lshape, rshape = LAYOUTS[name]
    a, b = rng.standard_normal(lshape).astype(dtype), rng.standard_normal(rshape).astype(dtype)
    exe, got = _on_gpu(fn, a, b)
    want = _on_cpu(fn, a, b)
    assert got[0].dtype == want[0].dtype and got[0].shape == want[0].shape
    tol = 2e-4 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(got[0], want[0], rtol=tol, atol=tol)
    assert _dot_steps(exe)


def test_float_matmul_goes_through_cublas():
    if not _HAVE_NVMATH:
        pytest.skip("nvmath-python is not installed (pip install numjax[cuda])")
    a, b = rng.standard_normal((96, 64)).astype(np.float32), rng.standard_normal((64, 48)).astype(np.float32)
    exe, got = _on_gpu(lambda x, y: x @ y, a, b)
    (step,) = _dot_steps(exe)
    assert step.gemm is not None
    assert step.handle is not None, ("nvmath-python is installed but gave no cuBLAS handle (see the "
                                     "numjax log warning): is libcublas installed?")
    assert not step.sources
    np.testing.assert_allclose(got[0], _on_cpu(lambda x, y: x @ y, a, b)[0], rtol=2e-4, atol=2e-4)


def test_integer_and_mixed_dot_general_use_the_tiled_kernel_exactly():
    a = rng.integers(-100, 100, (70, 130)).astype(np.int8)
    b = rng.integers(-100, 100, (130, 45)).astype(np.int8)
    fn = lambda x, y: (lax.dot(x, y, preferred_element_type=np.int32), x.astype(np.int32) @ y.astype(np.int32))  # noqa: E731
    exe, got = _on_gpu(fn, a, b)
    for g, w in zip(got, _on_cpu(fn, a, b)):
        np.testing.assert_array_equal(g, w)
    assert all(s.handle is None and s.sources for s in _dot_steps(exe))


def test_sort_top_k_and_conv_at_gpu_sizes():
    x = rng.standard_normal((40, 1000)).astype(np.float32)
    x[3, ::7] = np.nan
    x[5, ::3] = 0.0
    exe, got = _on_gpu(lambda v: (jnp.sort(v, axis=1), jnp.argsort(v, axis=0), *lax.top_k(v, 17)), x)
    for g, w in zip(got, _on_cpu(lambda v: (jnp.sort(v, axis=1), jnp.argsort(v, axis=0), *lax.top_k(v, 17)), x)):
        assert g.tobytes() == w.tobytes()
    lhs, rhs = rng.standard_normal((4, 16, 32, 32)).astype(np.float32), rng.standard_normal((32, 16, 3, 3)).astype(np.float32)
    conv = lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "SAME")  # noqa: E731
    _, got = _on_gpu(conv, lhs, rhs)
    np.testing.assert_allclose(got[0], _on_cpu(conv, lhs, rhs)[0], rtol=1e-4, atol=1e-4)

"""Tests that need a real CUDA GPU (``tox -e gpu``); skipped with the reason elsewhere.

Unlike tests/cuda (which asks for the CUDA backend by name, so it also runs on the simulator),
these check what a user with a GPU gets with no configuration at all: the GPU is the default
backend, and sizes beyond what the simulator can run compile and agree with the CPU backend.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax.config import config

_SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def _gpus():
    if _SIMULATOR:
        return []
    from numjax.cuda import devices
    return devices.gpu_devices()


pytestmark = pytest.mark.skipif(not _gpus(), reason="no CUDA GPU (or NUMBA_ENABLE_CUDASIM=1 is set)")


def _on_cpu(fn, *args):
    previous = config.jax_platforms
    config.update("jax_platforms", "cpu")
    try:
        return numjax.jit(fn)(*args)
    finally:
        config.update("jax_platforms", previous)


def test_gpu_is_the_default_backend():
    if config.jax_platforms or os.environ.get("NUMJAX_PLATFORMS"):
        pytest.skip("a platform is configured in the environment; this test checks the default")
    assert numjax.default_backend() == "gpu"
    devs = numjax.devices()
    assert repr(devs[0]) == "CudaDevice(id=0)"
    assert devs[0].compute_capability is not None and devs[0].compute_capability[0] >= 3
    from numjax import dispatch
    assert dispatch.current_backend() == ("cuda", devs[0].compute_capability)


def test_jax_platforms_cpu_forces_the_cpu():
    code = "import numjax; print(numjax.default_backend(), numjax.devices())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, JAX_PLATFORMS="cpu"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "cpu"


@pytest.fixture
def gpu_backend():
    previous = config.jax_platforms
    config.update("jax_platforms", "cuda")
    yield
    config.update("jax_platforms", previous)


def selu(x):
    return 1.050701 * jnp.where(x > 0, x, 1.6732632 * (jnp.exp(x) - 1))


def test_large_elementwise_and_reductions(gpu_backend):
    x = np.random.default_rng(0).standard_normal(1 << 20).astype(np.float32)
    fn = lambda v: (selu(v), selu(v).sum(), v.max(), jnp.argmax(v))
    got = numjax.jit(fn)(x)
    want = _on_cpu(fn, x)
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(float(got[1]), float(want[1]), rtol=1e-4)
    assert float(got[2]) == float(want[2]) and int(got[3]) == int(want[3])


def test_row_softmax_many_rows(gpu_backend):
    x = np.random.default_rng(1).standard_normal((4096, 257)).astype(np.float32)

    def softmax(v):
        e = jnp.exp(v - v.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(np.asarray(numjax.jit(softmax)(x)), np.asarray(_on_cpu(softmax, x)),
                               rtol=1e-5, atol=1e-7)


def test_kernels_compile_for_the_device(gpu_backend):
    from numjax.cuda import compiler
    assert compiler.compute_capability() == numjax.devices()[0].compute_capability

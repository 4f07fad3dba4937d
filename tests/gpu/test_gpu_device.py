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


# A fresh process running one jitted program on the GPU; it counts every call into
# numba-cuda's compiler (kernels and device functions both go through compile_cuda).
_DISK_CACHE_CHILD = """
import json
import numpy as np
from numba.cuda import dispatcher as cuda_dispatcher
calls = []
real_compile = cuda_dispatcher.compile_cuda
def counting_compile(*args, **kwargs):
    calls.append(1)
    return real_compile(*args, **kwargs)
cuda_dispatcher.compile_cuda = counting_compile
import numjax, numjax.numpy as jnp
from numjax.cuda import diskcache
x = np.linspace(-3, 3, 6000, dtype=np.float32).reshape(60, 100)
def fn(v):
    e = jnp.exp(v - v.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True), jnp.argmax(v, axis=0), v.T @ v, jnp.sin(v[::2, 3:7])
outs = numjax.jit(fn)(x)
print(json.dumps({"backend": numjax.default_backend(), "compile_calls": len(calls),
                  "counts": diskcache.counts(), "outs": [np.asarray(o).tolist() for o in outs]}))
"""


def test_warm_disk_cache_compiles_no_kernel_in_a_fresh_process(tmp_path):
    import json
    env = dict(os.environ, NUMJAX_CACHE_DIR=str(tmp_path / "cache"), JAX_PLATFORMS="cuda")
    env.pop("NUMJAX_PERSISTENT_CACHE", None)
    env.pop("NUMJAX_PLATFORMS", None)

    def run_child():
        out = subprocess.run([sys.executable, "-c", _DISK_CACHE_CHILD], capture_output=True,
                             text=True, timeout=600, env=env)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])
    cold, warm = run_child(), run_child()
    assert cold["backend"] == warm["backend"] == "gpu"
    assert cold["compile_calls"] > 0 and cold["counts"]["compiled"] > 0
    assert cold["counts"]["loaded"] == 0
    assert warm["compile_calls"] == 0                   # nothing reached numba-cuda's compiler
    assert warm["counts"] == {"compiled": 0, "loaded": cold["counts"]["compiled"]}
    assert len(warm["outs"]) == len(cold["outs"]) == 4
    for got, want in zip(warm["outs"], cold["outs"]):  # (a reduction may use atomics)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-7)
    assert len(list((tmp_path / "cache" / "entries" / "cuda_kernel").glob("*.bin"))) \
        == cold["counts"]["compiled"]


def test_a_jitted_call_returns_before_its_kernels_finish(gpu_backend):
    import time
    from numjax.cuda.arrays import CudaArray
    # One fused kernel of 256 sines per element over 2**25 floats: milliseconds of GPU time
    # for one launch.
    def heavy(v):
        for _ in range(256):
            v = jnp.sin(v) * 1.0001 + 0.5
        return v
    f = numjax.jit(heavy)
    x = numjax.device_put(np.ones(1 << 25, np.float32), numjax.devices()[0]).block_until_ready()
    f(x).block_until_ready()                                 # compile, warm the pool
    start = time.perf_counter()
    y = f(x)
    launched = time.perf_counter() - start
    assert type(y) is CudaArray and y.block_until_ready() is y
    finished = time.perf_counter() - start
    assert launched < 0.5 * finished, (launched, finished)
    np.testing.assert_allclose(np.asarray(y)[:4], np.asarray(_on_cpu(heavy, np.ones(4, np.float32))),
                               rtol=1e-4)


def test_a_loop_of_cached_calls_on_device_data_copies_nothing(gpu_backend):
    from numjax.cuda import memory
    step = numjax.jit(lambda v: v * 0.999 + 0.001)
    x = numjax.device_put(np.ones((1024, 1024), np.float32), numjax.devices()[0])
    x = step(step(x)).block_until_ready()
    transfers = (memory.transfers.host_to_device, memory.transfers.device_to_host)
    allocs = memory.stats()["num_allocs"]
    for _ in range(100):
        x = step(x)
    x.block_until_ready()
    assert (memory.transfers.host_to_device, memory.transfers.device_to_host) == transfers
    assert memory.stats()["num_allocs"] == allocs
    want = np.float32(1.0)
    for _ in range(102):
        want = np.float32(want * np.float32(0.999) + np.float32(0.001))
    np.testing.assert_allclose(np.asarray(x)[::257, ::257], want, rtol=1e-5)

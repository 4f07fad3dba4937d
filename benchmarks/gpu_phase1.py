"""First GPU timings of the CUDA backend (issue 12, phase 1): selu and the 8-op chain on float32
vectors, and a row softmax, CUDA backend against the CPU backend in one process.

Phase 1 copies inputs to the device and results back on every call (arrays do not stay on the
GPU yet), so these times include both transfers; ``kernel`` times run the compiled executable's
steps on inputs already on the device, into its cached output buffers.  Run on a machine with a GPU:
``python benchmarks/gpu_phase1.py [n]``.
"""
import sys
import time

import numpy as np

import numjax
import numjax.numpy as jnp
from numjax import dispatch
from numjax.config import config


def selu(x):
    return 1.050701 * jnp.where(x > 0, x, 1.6732632 * (jnp.exp(x) - 1))


def chain8(x, y):
    return jnp.tanh(jnp.sin(x) * y + jnp.cos(y)) * 2.0 - jnp.abs(x) / (1.0 + y * y)


def softmax(x):
    e = jnp.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def best(fn, reps=5):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def kernel_time(fn, args):
    from numba import cuda
    closed = numjax.make_jaxpr(fn)(*args)
    exe = dispatch.compiled_executable(getattr(closed, "closed_jaxpr", closed), "bench")
    env = {v: cuda.to_device(np.asarray(a)) for v, a in zip(exe.jaxpr.invars, args)}

    def run():
        for step in exe.steps:
            step.run(env, exe._buffers)
        cuda.synchronize()
    return best(run)


def main(n):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    m = rng.standard_normal((n // 1024, 1024)).astype(np.float32)
    cases = [("selu", selu, (x,)), ("chain8", chain8, (x, y)), ("softmax rows", softmax, (m,))]
    print(f"device: {numjax.devices('gpu')[0].device_kind}, n = {n}")
    for name, fn, args in cases:
        config.update("jax_platforms", "cuda")
        f = numjax.jit(fn)
        t_gpu = best(lambda: np.asarray(f(*args)))
        t_kernel = kernel_time(fn, args)
        nbytes = sum(a.nbytes for a in args) * 2   # read the inputs, write as much
        config.update("jax_platforms", "cpu")
        g = numjax.jit(fn)
        t_cpu = best(lambda: np.asarray(g(*args)))
        print(f"{name:14} cuda call {t_gpu * 1e3:8.2f} ms (with transfers)  kernels {t_kernel * 1e3:7.3f} ms "
              f"({nbytes / t_kernel / 1e9:7.1f} GB/s)  cpu {t_cpu * 1e3:8.2f} ms")
    config.update("jax_platforms", "cuda")
    f = numjax.jit(lambda v: v + 1.0)
    small = np.ones(8, np.float32)
    f(small)
    t = best(lambda: f(small), reps=200)
    print(f"cached jit call, 8 elements, cuda backend: {t * 1e6:.1f} us")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 24)

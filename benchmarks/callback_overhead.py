"""Per-step cost of a trivial host callback inside a jitted ``lax.fori_loop`` of 10,000 steps:
a Python function against a Numba ``@njit`` one, with ``pure_callback``.

    .venv/bin/python benchmarks/callback_overhead.py numjax
    .venv-jax/bin/python benchmarks/callback_overhead.py jax

Best of 5 runs per case.  The ``@njit`` functions are written so that they also compile on
JAX, which hands them read-only buffers (no ``.shape``, no arithmetic on 0-d buffers).
"""
import sys
import time

import numba
import numpy as np

if sys.argv[1:] == ["jax"]:
    import jax
    import jax.numpy as jnp
    from jax import lax
else:
    import numjax as jax
    import numjax.numpy as jnp
    from numjax import lax

STEPS = 10_000


def python_step(x):
    return np.asarray(x) + np.float32(1.0)


@numba.njit
def njit_step_vector(x):
    out = np.empty(len(x), np.float32)
    for i in range(len(x)):
        out[i] = x[i] + np.float32(1.0)
    return out


@numba.njit
def njit_step_scalar(x):
    return np.float32(x[()] + np.float32(1.0))


def looped(callback, shape):
    sds = jax.ShapeDtypeStruct(shape, jnp.float32)
    return jax.jit(lambda x: lax.fori_loop(0, STEPS, lambda i, c: jax.pure_callback(callback, sds, c), x))


def main():
    name = "jax" if sys.argv[1:] == ["jax"] else "numjax"
    for shape, njit_step in (((), njit_step_scalar), ((4,), njit_step_vector)):
        x = jnp.zeros(shape, jnp.float32)
        for kind, callback in (("python", python_step), ("njit", njit_step)):
            f = looped(callback, shape)
            assert float(np.asarray(f(x)).ravel()[0]) == STEPS
            best = float("inf")
            for _ in range(5):
                t = time.perf_counter()
                np.asarray(f(x))
                best = min(best, time.perf_counter() - t)
            print(f"{name:6s} shape={str(shape):5s} {kind:6s}: {best / STEPS * 1e6:6.2f} us/step")


if __name__ == "__main__":
    main()

"""Data-parallel SGD of a small MLP: pmap over every device, gradients averaged with pmean.

Each step takes a global batch of PER_DEVICE examples per device; every device computes the
gradient of its slice, ``lax.pmean`` averages them over the ``batch`` axis, and every device
applies the same update, so the replicated parameters stay identical. Prints the loss curve.

Runs the same on one process with several CPU devices and on several processes:

    NUMJAX_NUM_CPU_DEVICES=2 python examples/data_parallel_sgd.py
    mpiexec -n 2 python examples/data_parallel_sgd.py      # one device per process

Under mpiexec each process feeds only its own devices' slices (``local_devices``) and
``pmean`` reaches across processes (MPI); the printed curves of the two runs are the same.
"""
import os

import numpy as np

import numjax as jax
import numjax.numpy as jnp
from numjax import lax

SIZES = (4, 32, 32, 1)
PER_DEVICE, STEPS, PRINT_EVERY, LEARNING_RATE = 32, 200, 20, 0.1

if any(v in os.environ for v in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE")):
    jax.distributed.initialize()     # launched by mpiexec: join the other processes


def dataset(n=2048, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, (n, SIZES[0])).astype(np.float32)
    y = (np.sin(3 * x[:, :1]) + x[:, 1:2] * x[:, 2:3] - 0.5 * x[:, 3:]).astype(np.float32)
    return x, y


def init_params(seed=1):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((m, n)).astype(np.float32) * np.float32(np.sqrt(2.0 / m)),
             np.zeros(n, np.float32)) for m, n in zip(SIZES[:-1], SIZES[1:])]


def predict(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss_fn(params, x, y):
    return jnp.mean((predict(params, x) - y) ** 2)


def train_step(params, x, y):
    """One device's part of a step: its gradient, averaged with every other device's."""
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    grads = lax.pmean(grads, "batch")
    new = jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads)
    return new, lax.pmean(loss, "batch")


step = jax.pmap(train_step, axis_name="batch", in_axes=(None, 0, 0))


def local_batch(x, y, k):
    """This process's devices' slices of global batch ``k``: (local devices, PER_DEVICE, ...)."""
    devices, local = jax.device_count(), jax.local_device_count()
    n = devices * PER_DEVICE
    idx = (np.arange(n) + k * n) % len(x)
    first = jax.process_index() * local * PER_DEVICE
    mine = idx[first:first + local * PER_DEVICE]
    return x[mine].reshape(local, PER_DEVICE, -1), y[mine].reshape(local, PER_DEVICE, -1)


def main():
    x, y = dataset()
    params = init_params()
    if jax.process_index() == 0:
        print(f"{jax.process_count()} process(es), {jax.device_count()} devices, global batch "
              f"{jax.device_count() * PER_DEVICE}")
    for k in range(STEPS + 1):
        replicated, loss = step(params, *local_batch(x, y, k))
        params = jax.tree.map(lambda a: a[0], replicated)    # identical on every device
        if k % PRINT_EVERY == 0 and jax.process_index() == 0:
            print(f"step {k:3d} loss {float(loss[0]):.6f}")


if __name__ == "__main__":
    main()

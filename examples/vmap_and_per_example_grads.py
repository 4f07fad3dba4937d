"""vmap: the tutorials' convolve examples, then per-example gradients of a logistic regression.

Run: python examples/vmap_and_per_example_grads.py
"""
import time

import numpy as np

import numjax as jax
import numjax.numpy as jnp

# ---------------------------------------------------------------- automatic vectorization
x = jnp.arange(5)
w = jnp.array([2., 3., 4.])


def convolve(x, w):
    output = []
    for i in range(1, len(x) - 1):
        output.append(jnp.dot(x[i - 1:i + 2], w))
    return jnp.array(output)


print("convolve(x, w)               =", convolve(x, w))          # [11. 20. 29.]

xs = jnp.stack([x, x])
ws = jnp.stack([w, w])


def manually_batched_convolve(xs, ws):
    return jnp.stack([convolve(xs[i], ws[i]) for i in range(xs.shape[0])])


def manually_vectorized_convolve(xs, ws):
    output = []
    for i in range(1, xs.shape[-1] - 1):
        output.append(jnp.sum(xs[:, i - 1:i + 2] * ws, axis=1))
    return jnp.stack(output, axis=1)


auto_batch_convolve = jax.vmap(convolve)
print("manually batched:\n", manually_batched_convolve(xs, ws))
print("manually vectorized:\n", manually_vectorized_convolve(xs, ws))
print("vmap(convolve)(xs, ws):\n", auto_batch_convolve(xs, ws))

# batch dimension last: in_axes=1, out_axes=1 on transposed inputs
auto_batch_convolve_v2 = jax.vmap(convolve, in_axes=1, out_axes=1)
print("vmap(convolve, in_axes=1, out_axes=1)(xs.T, ws.T):\n",
      auto_batch_convolve_v2(jnp.transpose(xs), jnp.transpose(ws)))

# only x batched: one set of weights for the whole batch
batch_convolve_v3 = jax.vmap(convolve, in_axes=[0, None])
print("vmap(convolve, in_axes=[0, None])(xs, w):\n", batch_convolve_v3(xs, w))

# jit and vmap compose; the batched program is one compiled function
jitted_batch_convolve = jax.jit(auto_batch_convolve)
t0 = time.perf_counter()
out = jitted_batch_convolve(xs, ws)
t1 = time.perf_counter()
jitted_batch_convolve(xs, ws).block_until_ready()
t2 = time.perf_counter()
print("jit(vmap(convolve))(xs, ws):\n", out)
print(f"  first call (trace + compile) {t1 - t0:.2f} s, next call {(t2 - t1) * 1e6:.0f} us")
print("  dot_generals in the batched jaxpr:",
      sum(e.primitive.name == "dot_general" for e in jax.make_jaxpr(auto_batch_convolve)(xs, ws).jaxpr.eqns),
      "(one per output position, each batched over the examples)")

# ---------------------------------------------------------------- per-example gradients
# The autodiff tutorial's toy logistic regression (fixed weights instead of random ones).
inputs = jnp.array([[0.52, 1.12, 0.77],
                    [0.88, -1.08, 0.15],
                    [0.52, 0.06, -1.30],
                    [0.74, -2.49, 1.39]])
targets = jnp.array([True, True, False, True])
W = jnp.array([0.5, -0.3, 0.8])
b = jnp.float32(0.1)


def sigmoid(z):
    return 0.5 * (jnp.tanh(z / 2) + 1)


def example_loss(W, b, x, y):
    """Negative log-likelihood of one example."""
    p = sigmoid(jnp.dot(x, W) + b)
    return -jnp.log(p * y + (1 - p) * (1 - y))


def loss(W, b):
    return jnp.sum(jax.vmap(example_loss, in_axes=(None, None, 0, 0))(W, b, inputs, targets))


per_example_grads = jax.vmap(jax.grad(example_loss, argnums=(0, 1)), in_axes=(None, None, 0, 0))
gW, gb = per_example_grads(W, b, inputs, targets)
print("\nloss(W, b) =", loss(W, b))
print("per-example dL/dW (one row per example):\n", gW)
print("per-example dL/db:", gb)

# the same with a Python loop over the examples
loop_W = np.stack([np.asarray(jax.grad(example_loss)(W, b, inputs[i], targets[i])) for i in range(4)])
print("matches a Python loop:", np.allclose(np.asarray(gW), loop_W, rtol=1e-5, atol=1e-6))

# summed per-example gradients = gradient of the summed loss
full_W, full_b = jax.grad(loss, argnums=(0, 1))(W, b)
print("sum of per-example grads == grad of total loss:",
      np.allclose(np.asarray(jnp.sum(gW, axis=0)), np.asarray(full_W), rtol=1e-5),
      np.allclose(float(jnp.sum(gb)), float(full_b), rtol=1e-5))

# per-example gradient norms (e.g. for clipping in DP-SGD)
norms = jnp.sqrt(jnp.sum(gW ** 2, axis=1) + gb ** 2)
print("per-example gradient norms:", norms)

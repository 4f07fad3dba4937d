"""A pmap across processes under jit, grad and vmap; each process saves its results (its
local shards, or for a gradient with respect to a broadcast value, its own)."""
import numpy as np

import _worker
import numjax as jax
from numjax import lax, numpy as jnp

p, local = _worker.init()
n = jax.device_count()
rng = np.random.default_rng(1)
x = rng.standard_normal((n, 3, 2 * n)).astype(np.float32)
w = rng.standard_normal((2 * n, 2)).astype(np.float32)
batch = rng.standard_normal((4, n, 3)).astype(np.float32)
xl, bl = _worker.local_part(x), batch[:, p * local:(p + 1) * local]


def layer(v, w):
    h = jnp.tanh(v @ w)
    received = lax.all_to_all(jnp.concatenate([h * (k + 1) for k in range(n)], axis=1), "i", 1, 0, tiled=True)
    return h - lax.pmean(h, "i") + 0.5 * received.reshape(n, 3, 2).sum(0)


pmapped = jax.pmap(layer, "i", in_axes=(0, None))


def loss(v, w):
    return jnp.sum(pmapped(v, w) ** 2)


closed = jax.jit(lambda v, w: jax.pmap(lambda u: jnp.sin(u) @ w, "i")(v))
try:
    jax.jvp(lambda v: pmapped(v, w), (xl,), (xl,))
    jvp_error = ""
except NotImplementedError as e:
    jvp_error = str(e)
_worker.save(
    jvp_error=jvp_error,
    eager=pmapped(xl, w),
    jit=jax.jit(pmapped)(xl, w),
    jit_closure=closed(xl, w),
    grad_x=jax.grad(loss)(xl, w),
    grad_w=jax.grad(loss, argnums=1)(xl, w),
    jit_grad_x=jax.jit(jax.grad(loss))(xl, w),
    grad_closure_w=jax.grad(lambda w: jnp.sum(closed(xl, w)))(w),
    # (shards first, as saved: the test concatenates the processes' results along axis 0)
    vmap=jax.vmap(jax.pmap(lambda u: lax.psum(u, "i") * u, "i"), out_axes=1)(bl),
    jit_vmap=jax.jit(jax.vmap(jax.pmap(lambda u: lax.psum(u, "i") * u, "i"), in_axes=1, out_axes=1))(
        bl.swapaxes(0, 1)))

"""Plain JAX + optax: fit a linear model with optax.adam.  Run it on numjax unchanged:

    python -m numjax examples/ecosystem/optax_regression.py

(with optax installed: `pip install --no-deps optax chex && pip install absl-py toolz`).
On real JAX (`python examples/ecosystem/optax_regression.py`) it prints the same losses.
"""
import jax
import jax.numpy as jnp
import optax

key_w, key_x = jax.random.split(jax.random.key(0))
true_w = jax.random.normal(key_w, (8,))
x = jax.random.normal(key_x, (256, 8))
y = x @ true_w + 0.5


def loss(params, x, y):
    pred = x @ params["w"] + params["b"]
    return jnp.mean((pred - y) ** 2)


params = {"w": jnp.zeros(8), "b": jnp.zeros(())}
optimizer = optax.adam(learning_rate=0.1)
opt_state = optimizer.init(params)


@jax.jit
def step(params, opt_state, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, value


for i in range(101):
    params, opt_state, value = step(params, opt_state, x, y)
    if i % 20 == 0:
        print(f"step {i:3d}  loss {float(value):.6f}")
print("bias", round(float(params["b"]), 4))

"""Train a small MLP regressor with plain SGD, with `import numjax as jax`.

The data are noisy samples of y = sin(2 x0) + x1^2 / 2 drawn from a PRNGKey;
the parameters are a list of (w, b) pytrees initialised with
jax.nn.initializers; one SGD step is jit(value_and_grad(loss)) followed by a
tree_map update, compiled once. Prints the loss every 50 steps.
"""
import sys
import time

import numjax as jax
import numjax.numpy as jnp

NUM_FEATURES, HIDDEN = 2, 32
LEARNING_RATE, STEPS, PRINT_EVERY = 0.02, 500, 50


def target(x):
    return jnp.sin(2 * x[:, 0]) + 0.5 * x[:, 1] ** 2


def make_data(key, n=256):
    x_key, noise_key = jax.random.split(key)
    x = jax.random.uniform(x_key, (n, NUM_FEATURES), minval=-1.5, maxval=1.5)
    y = target(x) + 0.05 * jax.random.normal(noise_key, (n,))
    return x, y[:, None]


def init_params(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    init_w = jax.nn.initializers.he_normal()
    return [(init_w(k, (m, n)), jnp.zeros(n)) for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def predict(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss(params, x, y):
    return jnp.mean((predict(params, x) - y) ** 2)


@jax.jit
def sgd_step(params, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads), value


def main():
    data_key, init_key = jax.random.split(jax.random.PRNGKey(0))
    x, y = make_data(data_key)
    params = init_params(init_key, [NUM_FEATURES, HIDDEN, HIDDEN, 1])
    print("parameters:", jax.tree.structure(params))
    print("shapes:", jax.tree.map(lambda p: p.shape, params))
    start = time.perf_counter()
    losses = []
    for step in range(STEPS + 1):
        params, value = sgd_step(params, x, y)
        losses.append(float(value))
        if step % PRINT_EVERY == 0:
            print(f"step {step:4d}  loss {losses[-1]:.4f}")
    print(f"first loss {losses[0]:.4f}, final loss {losses[-1]:.4f}, target variance {float(jnp.var(y)):.4f}")
    print(f"{STEPS + 1} steps in {time.perf_counter() - start:.1f} s (compile included)")
    return 0 if losses[-1] < 0.25 * losses[0] else 1


if __name__ == "__main__":
    sys.exit(main())

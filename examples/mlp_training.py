"""Train a small MLP classifier with plain SGD, with `import numjax as jax`.

The data are three Gaussian blobs drawn from a PRNGKey; the parameters are a
list of (w, b) pytrees initialised with jax.nn.initializers; one SGD step is
jit(value_and_grad(loss)) followed by a tree_map update, compiled once.
Prints the loss every 50 steps and the final training accuracy.
"""
import sys
import time

import numjax as jax
import numjax.numpy as jnp

NUM_CLASSES, NUM_FEATURES, HIDDEN = 3, 2, 32
LEARNING_RATE, STEPS, PRINT_EVERY = 0.5, 300, 50


def make_data(key, n_per_class=100):
    """Three blobs around fixed centres; labels 0, 1, 2."""
    centres = jnp.array([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
    noise = jax.random.normal(key, (NUM_CLASSES, n_per_class, NUM_FEATURES))
    x = (centres[:, None, :] + 0.8 * noise).reshape(-1, NUM_FEATURES)
    y = jnp.repeat(jnp.arange(NUM_CLASSES), n_per_class)
    return x, y


def init_params(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    init_w = jax.nn.initializers.glorot_normal()
    return [(init_w(k, (m, n)), jnp.zeros(n)) for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def predict(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss(params, x, y):
    log_probs = jax.nn.log_softmax(predict(params, x))
    return -jnp.mean(jnp.sum(log_probs * jax.nn.one_hot(y, NUM_CLASSES), axis=-1))


@jax.jit
def sgd_step(params, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads), value


def main():
    data_key, init_key = jax.random.split(jax.random.PRNGKey(0))
    x, y = make_data(data_key)
    params = init_params(init_key, [NUM_FEATURES, HIDDEN, HIDDEN, NUM_CLASSES])
    print("parameters:", jax.tree.structure(params))
    print("shapes:", jax.tree.map(lambda p: p.shape, params))
    start = time.perf_counter()
    losses = []
    for step in range(STEPS + 1):
        params, value = sgd_step(params, x, y)
        losses.append(float(value))
        if step % PRINT_EVERY == 0:
            print(f"step {step:4d}  loss {losses[-1]:.4f}")
    accuracy = float(jnp.mean(jnp.argmax(predict(params, x), axis=-1) == y))
    print(f"first loss {losses[0]:.4f}, final loss {losses[-1]:.4f}, train accuracy {accuracy:.3f}")
    print(f"{STEPS + 1} steps in {time.perf_counter() - start:.1f} s (compile included)")
    return 0 if losses[-1] < 0.5 * losses[0] else 1


if __name__ == "__main__":
    sys.exit(main())

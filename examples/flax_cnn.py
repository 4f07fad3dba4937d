"""A flax.linen CNN (conv, batch norm, dropout, average pooling) trained with optax: runs
unchanged on JAX and on numjax.

    python examples/flax_cnn.py              # real JAX
    python -m numjax examples/flax_cnn.py    # numjax

Batch norm keeps running statistics in the mutable ``batch_stats`` collection, and dropout
draws its masks from a "dropout" RNG stream folded with the step number, so every step sees a
new mask while the run stays deterministic.
"""
from typing import Any

import jax
import jax.numpy as jnp
import flax.linen as nn
import optax
from flax.training import train_state


class CNN(nn.Module):
    classes: int = 4

    @nn.compact
    def __call__(self, x, train: bool):
        x = nn.Conv(8, (3, 3))(x)
        x = nn.BatchNorm(use_running_average=not train, momentum=0.9)(x)
        x = nn.relu(x)
        x = nn.avg_pool(x, (2, 2), strides=(2, 2))
        x = nn.relu(nn.Conv(16, (3, 3), padding="VALID")(x))
        x = nn.avg_pool(x, (2, 2), strides=(2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.relu(nn.Dense(32)(x))
        x = nn.Dropout(rate=0.2, deterministic=not train)(x)
        return nn.Dense(self.classes)(x)


class TrainState(train_state.TrainState):
    batch_stats: Any


def make_data(key, n=32, size=12, classes=4):
    # Each class is a bright square in one quadrant of a noisy image.
    label_key, noise_key = jax.random.split(key)
    labels = jax.random.randint(label_key, (n,), 0, classes)
    rows = jnp.arange(size)[:, None]
    cols = jnp.arange(size)[None, :]
    half = size // 2
    quadrant = (rows >= half).astype(jnp.int32) * 2 + (cols >= half).astype(jnp.int32)
    images = (quadrant[None] == labels[:, None, None]).astype(jnp.float32)
    images = images + 0.3 * jax.random.normal(noise_key, (n, size, size))
    return images[..., None], labels


@jax.jit
def train_step(state, x, labels, dropout_key):
    step_key = jax.random.fold_in(dropout_key, state.step)

    def loss_fn(params):
        logits, updates = state.apply_fn({"params": params, "batch_stats": state.batch_stats}, x,
                                         train=True, rngs={"dropout": step_key}, mutable=["batch_stats"])
        loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
        return loss, updates

    (loss, updates), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
    state = state.apply_gradients(grads=grads)
    return state.replace(batch_stats=updates["batch_stats"]), loss


@jax.jit
def accuracy(state, x, labels):
    logits = state.apply_fn({"params": state.params, "batch_stats": state.batch_stats}, x, train=False)
    return jnp.mean(jnp.argmax(logits, -1) == labels)


def main(steps=20):
    data_key, init_key, dropout_key = jax.random.split(jax.random.PRNGKey(0), 3)
    x, labels = make_data(data_key)
    model = CNN()
    variables = model.init(init_key, x, train=False)
    state = TrainState.create(apply_fn=model.apply, params=variables["params"],
                              batch_stats=variables["batch_stats"], tx=optax.adam(3e-3))
    for step in range(steps):
        state, loss = train_step(state, x, labels, dropout_key)
        print(f"step {step:2d} loss {float(loss):.8f}")
    print(f"train accuracy {float(accuracy(state, x, labels)):.3f}")


if __name__ == "__main__":
    main()

"""A flax.linen MLP trained with optax: runs unchanged on JAX and on numjax.

    python examples/flax_mlp.py              # real JAX
    python -m numjax examples/flax_mlp.py    # numjax
"""
import jax
import jax.numpy as jnp
import flax.linen as nn
import optax
from flax.training import train_state


class MLP(nn.Module):
    features: tuple = (32, 32, 1)

    @nn.compact
    def __call__(self, x):
        for width in self.features[:-1]:
            x = nn.relu(nn.Dense(width)(x))
        return nn.Dense(self.features[-1])(x)


def make_data(key, n=64):
    # A smooth 1-d regression target on [-2, 2].
    x = jax.random.uniform(key, (n, 1), minval=-2.0, maxval=2.0)
    return x, jnp.sin(2.0 * x) + 0.5 * x


@jax.jit
def train_step(state, x, y):
    def loss_fn(params):
        pred = state.apply_fn({"params": params}, x)
        return jnp.mean((pred - y) ** 2)
    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss


def main(steps=20):
    data_key, init_key = jax.random.split(jax.random.PRNGKey(0))
    x, y = make_data(data_key)
    model = MLP()
    params = model.init(init_key, x)["params"]
    state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.adam(1e-2))
    for step in range(steps):
        state, loss = train_step(state, x, y)
        print(f"step {step:2d} loss {float(loss):.8f}")


if __name__ == "__main__":
    main()

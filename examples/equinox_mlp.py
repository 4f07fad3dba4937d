"""An equinox MLP trained with optax through eqx.filter_jit / eqx.filter_value_and_grad:
runs unchanged on JAX and on numjax.

    python examples/equinox_mlp.py              # real JAX
    python -m numjax examples/equinox_mlp.py    # numjax
"""
import equinox as eqx
import jax
import jax.numpy as jnp
import optax


def make_data(key, n=64):
    # A smooth 2-d -> 1-d regression target.
    x = jax.random.normal(key, (n, 2))
    return x, jnp.tanh(x[:, :1] * x[:, 1:]) + 0.3 * x[:, :1]


@eqx.filter_value_and_grad
def loss_fn(model, x, y):
    pred = jax.vmap(model)(x)
    return jnp.mean((pred - y) ** 2)


def main(steps=20):
    data_key, model_key = jax.random.split(jax.random.PRNGKey(0))
    x, y = make_data(data_key)
    model = eqx.nn.MLP(in_size=2, out_size=1, width_size=32, depth=2, activation=jax.nn.relu,
                       key=model_key)
    optim = optax.adam(1e-2)
    opt_state = optim.init(eqx.filter(model, eqx.is_inexact_array))

    @eqx.filter_jit
    def step(model, opt_state, x, y):
        loss, grads = loss_fn(model, x, y)
        updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_inexact_array))
        return eqx.apply_updates(model, updates), opt_state, loss

    for i in range(steps):
        model, opt_state, loss = step(model, opt_state, x, y)
        print(f"step {i:2d} loss {float(loss):.8f}")


if __name__ == "__main__":
    main()

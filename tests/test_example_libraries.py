"""numjax.example_libraries.optimizers on its own (tests/compat compares it with JAX's)."""
import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax.example_libraries import optimizers


@pytest.mark.parametrize("make", [lambda: optimizers.sgd(0.1), lambda: optimizers.momentum(0.1, 0.5),
                                  lambda: optimizers.nesterov(0.1, 0.5), lambda: optimizers.adagrad(0.5),
                                  lambda: optimizers.rmsprop(0.05), lambda: optimizers.rmsprop_momentum(0.01),
                                  lambda: optimizers.adam(0.1), lambda: optimizers.adamax(0.1),
                                  lambda: optimizers.sm3(0.5)])
def test_optimizers_minimize_a_quadratic(make):
    init, update, get_params = make()
    target = {"a": jnp.array([1.0, -2.0]), "b": jnp.array(3.0)}

    def loss(p):
        return sum(jnp.sum((p[k] - target[k]) ** 2) for k in p)
    state = init({"a": jnp.zeros(2), "b": jnp.array(0.0)})
    grad = jax.jit(jax.grad(loss))
    # The state stays outside jit: sm3 keeps each parameter's shape in it (as JAX's does).
    step = lambda i, s: update(i, grad(get_params(s)), s)  # noqa: E731
    first = float(loss(get_params(state)))
    for i in range(300):
        state = step(i, state)
    assert float(loss(get_params(state))) < 0.05 * first


def test_state_is_a_pytree_and_round_trips():
    init, update, get_params = optimizers.adam(0.1)
    state = init([jnp.ones(3), {"x": jnp.zeros((2, 2))}])
    assert len(jax.tree_util.tree_leaves(state)) == 6
    again = optimizers.pack_optimizer_state(optimizers.unpack_optimizer_state(state))
    assert again.tree_def == state.tree_def
    with pytest.raises(TypeError, match="did not match the parameter tree"):
        update(0, [jnp.ones(3)], state)


def test_clip_grads():
    g = {"a": jnp.array([3.0, 4.0])}
    np.testing.assert_allclose(np.asarray(optimizers.l2_norm(g)), 5.0)
    np.testing.assert_allclose(np.asarray(optimizers.clip_grads(g, 1.0)["a"]), [0.6, 0.8], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(optimizers.clip_grads(g, 10.0)["a"]), [3.0, 4.0])

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


# ---------------------------------------------------------------- stax

from numjax.example_libraries import stax  # noqa: E402


def test_stax_mlp_shapes_and_training():
    init, apply = stax.serial(stax.Dense(16), stax.Relu, stax.Dense(3), stax.LogSoftmax)
    out_shape, params = init(jax.random.key(0), (-1, 4))
    assert out_shape == (-1, 3)
    assert [tuple(p.shape) for layer in params for p in layer] == [(4, 16), (16,), (16, 3), (3,)]
    assert params[1] == () and params[3] == ()
    x = jnp.asarray(np.random.RandomState(0).randn(30, 4).astype(np.float32))
    labels = jnp.asarray(np.random.RandomState(1).randint(0, 3, 30))

    def loss(p):
        return -jnp.mean(jnp.take_along_axis(apply(p, x), labels[:, None], axis=1))
    opt_init, opt_update, get_params = optimizers.adam(0.05)
    state = opt_init(params)
    step = jax.jit(lambda i, s: opt_update(i, jax.grad(loss)(get_params(s)), s))
    first = float(loss(params))
    for i in range(60):
        state = step(i, state)
    assert float(loss(get_params(state))) < 0.5 * first
    np.testing.assert_allclose(np.asarray(jnp.exp(apply(params, x)).sum(1)), 1.0, rtol=1e-5)


def test_stax_conv_and_pooling_shapes_agree_with_outputs():
    init, apply = stax.serial(
        stax.Conv(4, (3, 3), strides=(2, 2), padding="SAME"), stax.Relu,
        stax.MaxPool((2, 2)), stax.AvgPool((3, 3), (1, 1), "SAME"), stax.SumPool((2, 2), (2, 2)),
        stax.Flatten, stax.Dense(2))
    out_shape, params = init(jax.random.key(1), (5, 16, 16, 3))
    conv_w, conv_b = params[0]
    assert conv_w.shape == (3, 3, 3, 4) and conv_b.shape == (1, 1, 1, 4)
    y = apply(params, jnp.ones((5, 16, 16, 3)))
    assert out_shape == (5, 2) and y.shape == (5, 2)


def test_stax_pooling_values():
    x = jnp.arange(16.0).reshape(1, 4, 4, 1)
    mx = stax.MaxPool((2, 2), (2, 2))[1]((), x)
    np.testing.assert_array_equal(np.asarray(mx)[0, :, :, 0], [[5, 7], [13, 15]])
    sm = stax.SumPool((2, 2), (2, 2))[1]((), x)
    np.testing.assert_array_equal(np.asarray(sm)[0, :, :, 0], [[10, 18], [42, 50]])
    # SAME padding: a corner window covers 4 elements, so the average excludes the padding.
    avg = stax.AvgPool((3, 3), (1, 1), "SAME")[1]((), x)
    np.testing.assert_allclose(np.asarray(avg)[0, 0, 0, 0], (0 + 1 + 4 + 5) / 4)
    # A spec puts the channel axis first.
    nchw = stax.MaxPool((2, 2), (2, 2), spec="NCHW")
    shape, _ = nchw[0](None, (1, 1, 4, 4))
    assert shape == (1, 1, 2, 2)
    np.testing.assert_array_equal(np.asarray(nchw[1]((), x.reshape(1, 1, 4, 4))).ravel(),
                                  [5, 7, 13, 15])


def test_stax_batchnorm_standardizes_and_respects_center_scale():
    x = jnp.asarray(np.random.RandomState(2).randn(8, 3, 3, 5).astype(np.float32) * 3 + 2)
    init, apply = stax.BatchNorm()
    shape, (beta, gamma) = init(jax.random.key(0), x.shape)
    assert shape == x.shape and beta.shape == (5,) and gamma.shape == (5,)
    z = np.asarray(apply((beta + 1.0, gamma * 2.0), x))
    np.testing.assert_allclose(z.mean((0, 1, 2)), 1.0, atol=1e-5)
    np.testing.assert_allclose(z.std((0, 1, 2)), 2.0, rtol=1e-3)
    _, params = stax.BatchNorm(axis=0, center=False)[0](jax.random.key(0), (4, 6))
    assert params[0] == () and params[1].shape == (6,)


def test_stax_dropout_needs_a_key_and_keeps_rate():
    init, apply = stax.Dropout(0.75)
    x = jnp.ones((200, 50))
    with pytest.raises(ValueError, match="PRNG key"):
        apply((), x)
    y = np.asarray(apply((), x, rng=jax.random.key(0)))
    kept = y != 0
    assert abs(kept.mean() - 0.75) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    in_test_mode = stax.Dropout(0.5, mode="test")[1]((), x, rng=jax.random.key(0))
    np.testing.assert_array_equal(np.asarray(in_test_mode), 1.0)


def test_stax_fan_combinators_and_shape_dependent():
    init, apply = stax.serial(stax.FanOut(3),
                              stax.parallel(stax.Identity, stax.Tanh, stax.Dense(2)),
                              stax.FanInConcat(axis=1))
    shape, params = init(jax.random.key(0), (4, 2))
    assert shape == (4, 6) and params[0] == () and len(params[1]) == 3
    x = jnp.asarray([[0.5, -1.0]] * 4)
    y = np.asarray(apply(params, x))
    np.testing.assert_allclose(y[:, :2], np.asarray(x))
    np.testing.assert_allclose(y[:, 2:4], np.tanh(np.asarray(x)), rtol=1e-6)
    summed = stax.serial(stax.FanOut(2), stax.parallel(stax.Identity, stax.Exp), stax.FanInSum)
    np.testing.assert_allclose(np.asarray(summed[1]([(), [(), ()], ()], x)),
                               np.asarray(x) + np.exp(np.asarray(x)), rtol=1e-6)
    layer = stax.shape_dependent(lambda shape: stax.Dense(shape[-1] * 2))
    shape, (w, b) = layer[0](jax.random.key(0), (3, 5))
    assert shape == (3, 10) and w.shape == (5, 10)
    assert layer[1]((w, b), jnp.ones((3, 5))).shape == (3, 10)


def test_stax_transposed_convolutions_grow_the_input():
    shape, params = stax.ConvTranspose(2, (3, 3), strides=(2, 2), padding="SAME")[0](
        jax.random.key(0), (1, 4, 4, 3))
    assert shape == (1, 8, 8, 2) and params[0].shape == (3, 3, 3, 2)
    init, apply = stax.Conv1DTranspose(3, (4,), strides=(2,))
    shape, params = init(jax.random.key(0), (2, 5, 1))
    assert shape == (2, 12, 3)
    assert apply(params, jnp.ones((2, 5, 1))).shape == (2, 12, 3)

"""jax.example_libraries.optimizers on numjax against real JAX's: the same parameters after the
same updates, for every optimizer and schedule, eagerly and under jit."""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402
from jax.example_libraries import optimizers as jopt  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402
from numjax.example_libraries import optimizers as nopt  # noqa: E402

jax.config.update("jax_platform_name", "cpu")

_rng = np.random.RandomState(0)
PARAMS = {"w": _rng.randn(3, 4).astype(np.float32), "b": _rng.randn(4).astype(np.float32),
          "s": np.float32(0.5), "layers": [_rng.randn(2, 2, 3).astype(np.float32)]}
GRADS = [{k: (np.float32(_rng.randn()) if k == "s" else
              [_rng.randn(2, 2, 3).astype(np.float32)] if k == "layers" else
              _rng.randn(*v.shape).astype(np.float32)) for k, v in PARAMS.items()} for _ in range(4)]

OPTIMIZERS = {
    "sgd": lambda o: o.sgd(0.1),
    "sgd_exponential_decay": lambda o: o.sgd(o.exponential_decay(0.1, 2, 0.5)),
    "sgd_inverse_time_decay": lambda o: o.sgd(o.inverse_time_decay(0.1, 2, 0.5)),
    "sgd_inverse_time_staircase": lambda o: o.sgd(o.inverse_time_decay(0.1, 2, 0.5, staircase=True)),
    "sgd_polynomial_decay": lambda o: o.sgd(o.polynomial_decay(0.1, 3, 0.01, power=2.0)),
    "sgd_piecewise_constant": lambda o: o.sgd(o.piecewise_constant([1, 2], [0.1, 0.05, 0.01])),
    "momentum": lambda o: o.momentum(0.1, 0.9),
    "nesterov": lambda o: o.nesterov(0.1, 0.9),
    "adagrad": lambda o: o.adagrad(0.1),
    "rmsprop": lambda o: o.rmsprop(0.01),
    "rmsprop_momentum": lambda o: o.rmsprop_momentum(0.01),
    "adam": lambda o: o.adam(1e-2),
    "adamax": lambda o: o.adamax(1e-2),
    "sm3": lambda o: o.sm3(0.1),
}


def _run(lib, jnp, opt_module, name, jit):
    init, update, get_params = OPTIMIZERS[name](opt_module)
    to_arrays = lambda tree: lib.tree_util.tree_map(jnp.asarray, tree)  # noqa: E731
    state = init(to_arrays(PARAMS))
    step = lib.jit(update) if jit else update
    for i, g in enumerate(GRADS):
        state = step(i, to_arrays(g), state)
    return get_params(state), state


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_matches_jax(name, jit):
    ours, our_state = _run(nj, njnp, nopt, name, jit)
    theirs, their_state = _run(jax, jjnp, jopt, name, jit)
    assert nj.tree_util.tree_structure(ours) == nj.tree_util.tree_structure(theirs)
    for a, b in zip(nj.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-6, atol=1e-6)
    assert len(nj.tree_util.tree_leaves(our_state)) == len(jax.tree_util.tree_leaves(their_state))


@pytest.mark.parametrize("name", ["exponential_decay", "inverse_time_decay", "polynomial_decay",
                                  "piecewise_constant"])
def test_schedules_match_jax(name):
    args = {"exponential_decay": (0.1, 3, 0.5), "inverse_time_decay": (0.1, 3, 0.5),
            "polynomial_decay": (0.1, 5, 0.01), "piecewise_constant": ([2, 4], [0.1, 0.05, 0.01])}[name]
    ours, theirs = getattr(nopt, name)(*args), getattr(jopt, name)(*args)
    for i in range(8):
        np.testing.assert_allclose(np.asarray(ours(i)), np.asarray(theirs(i)), rtol=1e-6)


def test_clip_grads_and_l2_norm_match_jax():
    g_ours = nj.tree_util.tree_map(njnp.asarray, GRADS[0])
    g_theirs = jax.tree_util.tree_map(jjnp.asarray, GRADS[0])
    np.testing.assert_allclose(np.asarray(nopt.l2_norm(g_ours)), np.asarray(jopt.l2_norm(g_theirs)), rtol=1e-6)
    for max_norm in (0.5, 100.0):
        for a, b in zip(nj.tree_util.tree_leaves(nopt.clip_grads(g_ours, max_norm)),
                        jax.tree_util.tree_leaves(jopt.clip_grads(g_theirs, max_norm))):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_pack_and_unpack_optimizer_state_round_trip_like_jax():
    _, ours = _run(nj, njnp, nopt, "adam", False)
    _, theirs = _run(jax, jjnp, jopt, "adam", False)
    marked_ours, marked_theirs = nopt.unpack_optimizer_state(ours), jopt.unpack_optimizer_state(theirs)
    assert sorted(marked_ours) == sorted(marked_theirs)
    assert isinstance(marked_ours["w"], nopt.JoinPoint)
    for a, b in zip(marked_ours["w"].subtree, marked_theirs["w"].subtree):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-6, atol=1e-6)
    repacked = nopt.pack_optimizer_state(marked_ours)
    assert repacked.tree_def == ours.tree_def
    for a, b in zip(nj.tree_util.tree_leaves(repacked), nj.tree_util.tree_leaves(ours)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


# ---------------------------------------------------------------- stax

from jax.example_libraries import stax as jstax  # noqa: E402

from numjax.example_libraries import stax as nstax  # noqa: E402


def _mlp(s):
    return s.serial(s.Dense(32), s.Relu, s.Dense(16), s.Gelu, s.Dense(10), s.LogSoftmax), (-1, 12)


def _cnn(s):
    return s.serial(
        s.Conv(8, (3, 3), padding="SAME", strides=(2, 2)), s.BatchNorm(), s.Relu,
        s.MaxPool((2, 2), (1, 1)), s.Conv(6, (2, 2)), s.Elu, s.AvgPool((2, 2), padding="SAME"),
        s.SumPool((2, 2), (2, 2)), s.Flatten, s.Dense(10), s.Softmax), (-1, 10, 10, 3)


def _branches(s):
    # A residual-style block: FanOut, parallel branches, then summed and concatenated.
    block = s.serial(s.FanOut(2), s.parallel(s.serial(s.Dense(7), s.Tanh), s.Identity),
                     s.FanInConcat())
    return s.serial(s.Dense(7), block, s.FanOut(3),
                    s.parallel(s.Sigmoid, s.LeakyRelu, s.serial(s.Dense(14), s.Selu)),
                    s.FanInSum, s.Softplus, s.Dropout(0.7)), (-1, 5)


def _transposed(s):
    # BatchNorm before Exp: its variance (mean of squares minus squared mean, as in JAX)
    # loses digits to cancellation on exp's outputs, all close to 1.
    layer = s.serial(s.ConvTranspose(3, (3, 3), strides=(2, 2), padding="SAME"),
                     s.BatchNorm(axis=(0, 3)), s.Exp,
                     s.GeneralConv(("NCHW", "OIHW", "NCHW"), 2, (2, 2), padding="VALID"))
    return layer, (-1, 6, 6, 2)


def _transposed_1d(s):
    return s.serial(s.Conv1DTranspose(4, (3,), strides=(2,), padding="VALID"),
                    s.shape_dependent(lambda shape: s.Dense(shape[-1] + 1))), (-1, 5, 3)


STAX_MODELS = {"mlp": _mlp, "cnn": _cnn, "branches": _branches, "transposed": _transposed,
               "transposed_1d": _transposed_1d}


def _stax_run(lib, jnp, stax_module, name, jit):
    (init, apply), input_shape = STAX_MODELS[name](stax_module)
    out_shape, params = init(lib.random.key(3), input_shape)
    batch = (2,) + input_shape[1:]
    x = jnp.asarray(np.random.RandomState(1).rand(*batch).astype(np.float32))
    run = lambda p, x: apply(p, x, rng=lib.random.key(4))  # noqa: E731
    y = (lib.jit(run) if jit else run)(params, x)
    loss = lambda p: jnp.sum(run(p, x) ** 2)  # noqa: E731
    return out_shape, params, y, lib.grad(loss)(params)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", sorted(STAX_MODELS))
def test_stax_model_matches_jax(name, jit):
    our_shape, our_params, ours, our_grads = _stax_run(nj, njnp, nstax, name, jit)
    their_shape, their_params, theirs, their_grads = _stax_run(jax, jjnp, jstax, name, jit)
    assert tuple(our_shape) == tuple(their_shape)
    assert (nj.tree_util.tree_structure(our_params).num_leaves
            == jax.tree_util.tree_structure(their_params).num_leaves)
    for a, b in zip(nj.tree_util.tree_leaves(our_params), jax.tree_util.tree_leaves(their_params)):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-7)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=2e-5, atol=1e-6)
    for a, b in zip(nj.tree_util.tree_leaves(our_grads), jax.tree_util.tree_leaves(their_grads)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)


def test_stax_dropout_modes_and_initializer_aliases_match_jax():
    x = np.random.RandomState(2).rand(4, 6).astype(np.float32)
    for mode in ("train", "test"):
        ours = nstax.Dropout(0.6, mode=mode)[1]((), njnp.asarray(x), rng=nj.random.key(9))
        theirs = jstax.Dropout(0.6, mode=mode)[1]((), jjnp.asarray(x), rng=jax.random.key(9))
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
    for name, args in [("randn", (0.5,)), ("glorot", ()), ("normal", ()), ("glorot_normal", ())]:
        ours = getattr(nstax, name)(*args)(nj.random.key(1), (3, 5))
        theirs = getattr(jstax, name)(*args)(jax.random.key(1), (3, 5))
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)

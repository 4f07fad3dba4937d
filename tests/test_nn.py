"""numjax.nn and numjax.nn.initializers against numpy formulas and JAX 0.10.2.

* values of every activation vs a float64 numpy reference (table ``_REFERENCE``);
* values and derivatives vs JAX's, committed in tests/tree_nn_expected.json
  (relu's derivative at 0 is 0, softmax's custom JVP, ...);
* result dtypes and weak types vs JAX for int/bool/float/Python-scalar inputs;
* check_grads, vmap vs a Python loop, jit vs eager (compiled, no fallback);
* initializers vs JAX's values for the same PRNG keys.
"""
import warnings

import numpy as np
import pytest
import scipy.special

import numjax as jax
import numjax.numpy as jnp
from numjax import nn
from numjax.test_util import check_grads
from tree_nn_cases import (INIT_SEEDS, NN_ELEMENTWISE, NN_M, NN_ONE_HOT, NN_T, NN_WHERE, init_cases, load_expected,
                           nn_array_fns, nn_cotangent, nn_dtypes, nn_elementwise_fn, nn_one_hot, run_init)

EXPECTED = load_expected()


# ---------------------------------------------------------------- numpy references (float64)

def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(x, 0)


def _elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def _relu6(x):
    return np.clip(x, 0, 6)


_SELU = (1.0507009873554804934193349852946, 1.6732632423543772848170429916717)

_REFERENCE = {
    "relu": lambda x: np.maximum(x, 0), "relu6": _relu6,
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2, "squareplus_b1": lambda x: (x + np.sqrt(x * x + 1)) / 2,
    "softplus": _softplus, "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "soft_sign": lambda x: x / (np.abs(x) + 1), "sigmoid": _sigmoid,
    "sparse_sigmoid": lambda x: 0.5 * np.clip(x + 1, 0, 2), "silu": lambda x: x * _sigmoid(x),
    "swish": lambda x: x * _sigmoid(x), "mish": lambda x: x * np.tanh(_softplus(x)),
    "log_sigmoid": lambda x: -_softplus(-x), "elu": _elu, "elu_a2": lambda x: _elu(x, 2.0),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x), "leaky_relu_02": lambda x: np.where(x >= 0, x, 0.2 * x),
    "hard_tanh": lambda x: np.clip(x, -1, 1), "celu": lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)),
    "celu_a05": lambda x: np.maximum(x, 0) + 0.5 * np.expm1(np.minimum(x, 0) / 0.5),
    "selu": lambda x: _SELU[0] * _elu(x, _SELU[1]),
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
    "gelu_exact": lambda x: 0.5 * x * (1 + scipy.special.erf(x / np.sqrt(2))),
    "hard_sigmoid": lambda x: _relu6(x + 3) / 6, "hard_silu": lambda x: x * _relu6(x + 3) / 6,
    "hard_swish": lambda x: x * _relu6(x + 3) / 6, "tanh": np.tanh, "identity": lambda x: x,
    "log1mexp": lambda x: np.log(-np.expm1(-x)),
}


def _np_softmax(x, axis=-1, where=None):
    x = np.where(where, x, -np.inf) if where is not None else x
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _np_standardize(x, axis=-1, mean=None, variance=None):
    mean = x.mean(axis, keepdims=True) if mean is None else mean
    variance = x.var(axis, keepdims=True) if variance is None else variance
    return (x - mean) / np.sqrt(variance + 1e-5)


def _np_glu(x, axis=-1):
    a, b = np.split(x, 2, axis)
    return a * _sigmoid(b)


_ARRAY_REFERENCE = {
    "softmax": lambda x: _np_softmax(x), "softmax0": lambda x: _np_softmax(x, 0),
    "softmax_where": lambda x: np.where(NN_WHERE, _np_softmax(x, where=NN_WHERE), 0),
    "log_softmax": lambda x: np.log(_np_softmax(x)), "log_softmax0": lambda x: np.log(_np_softmax(x, 0)),
    "log_softmax_where": lambda x: np.where(NN_WHERE, np.log(np.where(NN_WHERE, _np_softmax(x, where=NN_WHERE), 1)),
                                            -np.inf),
    "standardize": _np_standardize, "standardize0": lambda x: _np_standardize(x, 0),
    "standardize_stable": _np_standardize, "standardize_mv": lambda x: _np_standardize(x, mean=1.0, variance=4.0),
    "glu": lambda x: _np_glu(x[:, :4]), "glu0": lambda x: _np_glu(x[:2], 0),
    "logmeanexp": lambda x: np.log(np.mean(np.exp(x.astype(np.float64)), 1)),
    "logsumexp": lambda x: scipy.special.logsumexp(x, 1),
}


# ---------------------------------------------------------------- elementwise activations

@pytest.mark.parametrize("name", sorted(NN_ELEMENTWISE))
def test_activation_values_vs_numpy(name):
    f, x = nn_elementwise_fn(jax, name)
    out = f(x)
    assert out.dtype == np.float32 and out.shape == x.shape
    np.testing.assert_allclose(np.asarray(out), _REFERENCE[name](x.astype(np.float64)), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(NN_ELEMENTWISE))
def test_activation_values_and_derivatives_vs_jax(name):
    f, x = nn_elementwise_fn(jax, name)
    exp = EXPECTED["nn_elementwise"][name]
    np.testing.assert_allclose(np.asarray(f(x)), exp["value"], rtol=2e-6, atol=1e-6)
    # derivatives at kinks (relu at 0, relu6 at 0 and 6, ...) follow JAX's conventions
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(f))(x)), exp["grad"], rtol=2e-6, atol=1e-6)


_SMOOTH = ["softplus", "sigmoid", "silu", "mish", "log_sigmoid", "elu", "celu", "selu", "gelu", "gelu_exact",
           "squareplus", "soft_sign", "tanh", "log1mexp", "leaky_relu", "relu", "hard_silu"]


@pytest.mark.parametrize("name", _SMOOTH)
def test_activation_check_grads(name):
    f, _ = nn_elementwise_fn(jax, name)
    # away from kinks (0 for the piecewise ones, +-3 for hard_silu)
    x = np.array([0.3, 0.9, 2.1] if name == "log1mexp" else [-2.3, -0.7, 0.4, 1.9], np.float32)
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))


_DTYPES = nn_dtypes(jax)
# Names whose dtype/weak type (or exception class) knowingly differs from JAX's: none now
# (jnp.mean of a scalar with axis=-1 raises JAX's IndexError, naming the axis).
_DTYPE_DIFFERENCES = {}


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(reason=_DTYPE_DIFFERENCES[n], strict=True)) if n in _DTYPE_DIFFERENCES
    else n for n in sorted(EXPECTED["nn_dtypes"])])
def test_result_dtype_and_weak_type(name):
    assert _DTYPES[name] == EXPECTED["nn_dtypes"][name]


# ---------------------------------------------------------------- softmax, standardize, glu, ...

@pytest.mark.parametrize("name", sorted(_ARRAY_REFERENCE))
def test_array_functions_vs_numpy(name):
    out = np.asarray(nn_array_fns(jax)[name](NN_M))
    np.testing.assert_allclose(out, _ARRAY_REFERENCE[name](NN_M.astype(np.float64)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(_ARRAY_REFERENCE))
def test_array_functions_jvp_vjp_vs_jax(name):
    f = nn_array_fns(jax)[name]
    exp = EXPECTED["nn_arrays"][name]
    v = np.asarray(f(NN_M))
    assert list(v.shape) == exp["shape"]
    want = np.array([-np.inf if a is None else a for a in exp["value"]]).reshape(v.shape)
    np.testing.assert_allclose(v, want, rtol=1e-5, atol=1e-6)
    jvp = np.asarray(jax.jvp(f, (NN_M,), (NN_T,))[1])
    np.testing.assert_allclose(jvp.ravel(), exp["jvp"], rtol=1e-5, atol=1e-5)
    vjp = np.asarray(jax.vjp(f, NN_M)[1](nn_cotangent(v.shape))[0])
    np.testing.assert_allclose(vjp.ravel(), exp["vjp"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["softmax", "softmax_where", "log_softmax", "standardize", "glu0", "logsumexp"])
def test_array_functions_check_grads(name):
    check_grads(nn_array_fns(jax)[name], (NN_M,), order=1, modes=("fwd", "rev"))


def test_softmax_gradient_with_minus_inf_is_finite():
    # the custom JVP never forms inf - inf, so masked logits give zero, not NaN, gradients
    x = jnp.array([0.5, -np.inf, 1.0])
    g = jax.grad(lambda x: nn.softmax(x)[0])(x)
    assert np.all(np.isfinite(np.asarray(g)))
    np.testing.assert_allclose(g[1], 0.0)


@pytest.mark.parametrize("name", sorted(NN_ONE_HOT))
def test_one_hot(name):
    assert nn_one_hot(jax)[name] == EXPECTED["nn_one_hot"][name]


def test_one_hot_float_input_warns_and_errors():
    with pytest.warns(DeprecationWarning, match="one_hot input should be integer-typed"):
        out = nn.one_hot(jnp.array([1.0, 0.0]), 2)
    np.testing.assert_array_equal(out, [[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="Unknown algorithm 'slow'"):
        nn.standardize(NN_M, algorithm="slow")
    with pytest.raises(AssertionError, match="divisible by 2"):
        nn.glu(jnp.ones(3))


def test_logsumexp_is_scipy_special():
    from numjax.scipy.special import logsumexp
    assert nn.logsumexp is logsumexp


# ---------------------------------------------------------------- vmap and jit

_VMAP_CASES = {
    "softmax": lambda r: nn.softmax(r), "log_softmax": lambda r: nn.log_softmax(r),
    "standardize": lambda r: nn.standardize(r), "glu": lambda r: nn.glu(r[:4]),
    "one_hot": lambda r: nn.one_hot(jnp.argmax(r), 5), "gelu_exact": lambda r: nn.gelu(r, approximate=False),
}


@pytest.mark.parametrize("name", sorted(_VMAP_CASES))
def test_vmap_matches_loop(name):
    f = _VMAP_CASES[name]
    batched = np.asarray(jax.vmap(f)(NN_M))
    looped = np.stack([np.asarray(f(row)) for row in NN_M])
    np.testing.assert_allclose(batched, looped, rtol=1e-6, atol=1e-7)


def _jit_matches_eager(f, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jitted = jax.jit(f)(*args)
    fallback = [str(w.message) for w in caught if "runs eagerly" in str(w.message)]
    assert not fallback, fallback
    eager = f(*args)
    for a, b in zip(jax.tree_util.tree_leaves(jitted), jax.tree_util.tree_leaves(eager)):
        assert (a.dtype, a.weak_type) == (b.dtype, b.weak_type)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-6, atol=1e-6)


def _mixed_loss(x):
    h = nn.gelu(x) + nn.relu(x) * nn.sigmoid(x) + nn.softplus(x)
    return jnp.sum(nn.log_softmax(h) * nn.softmax(x)) + jnp.sum(nn.standardize(h))


def test_jit_vs_eager_softmax():
    _jit_matches_eager(lambda x: nn.softmax(x, axis=0), NN_M)


@pytest.mark.slow
def test_jit_vs_eager_value_and_grad_of_mixed_loss():
    _jit_matches_eager(jax.value_and_grad(_mixed_loss), NN_M)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(NN_ELEMENTWISE))
def test_jit_vs_eager_each_activation(name):
    f, x = nn_elementwise_fn(jax, name)
    _jit_matches_eager(lambda x: (f(x), jax.vmap(jax.grad(f))(x)), x)


# ---------------------------------------------------------------- initializers

_NORMAL_BASED = ("normal", "truncated", "glorot_normal", "he_normal", "kaiming_normal", "lecun_normal",
                 "vs_fan_out_normal", "vs_batch")


@pytest.mark.parametrize("seed", INIT_SEEDS)
@pytest.mark.parametrize("name", sorted(init_cases(jax)))
def test_initializer_vs_jax(name, seed):
    exp = EXPECTED["init"][f"{name}/{seed}"]
    out = run_init(jax, name, seed)
    assert [str(out.dtype), out.weak_type, list(out.shape)] == [exp["dtype"], exp["weak"], exp["shape"]]
    got = np.asarray(out).astype(np.float64).ravel()
    if name.startswith(("orthogonal", "delta_orthogonal")):
        # same random bits; LAPACK's QR rounds differently from XLA's
        np.testing.assert_allclose(got, exp["value"], rtol=1e-5, atol=1e-6)
    elif name.startswith(_NORMAL_BASED):
        # same random bits; the normal transform (erf_inv) may differ from XLA's in the last ulp
        np.testing.assert_allclose(got, exp["value"], rtol=2e-6, atol=1e-7)
    else:
        np.testing.assert_array_equal(got, exp["value"])


def test_initializer_errors():
    key = jax.random.PRNGKey(0)
    with pytest.raises(ValueError, match="Can't compute input and output sizes of a 1-dimensional"):
        nn.initializers.glorot_uniform()(key, (3,))
    with pytest.raises(ValueError, match="invalid mode for variance scaling initializer: fan_sum"):
        nn.initializers.variance_scaling(1.0, "fan_sum", "normal")(key, (2, 2))
    with pytest.raises(ValueError, match="invalid distribution for variance scaling initializer: cauchy"):
        nn.initializers.variance_scaling(1.0, "fan_in", "cauchy")(key, (2, 2))
    with pytest.raises(ValueError, match="orthogonal initializer requires at least a 2D shape"):
        nn.initializers.orthogonal()(key, (3,))
    with pytest.raises(ValueError, match="Delta orthogonal initializer requires a 3D, 4D or 5D shape"):
        nn.initializers.delta_orthogonal()(key, (3, 3))
    assert isinstance(nn.initializers.zeros, nn.initializers.Initializer)

"""Row-wise ops and reductions under jit (row-fused kernels, lowering/row_fusion.py) next to
real JAX: float32 results within float32 tolerance, positions exactly, NaN/inf rows alike."""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402

import numjax  # noqa: E402
import numjax.numpy as njnp  # noqa: E402

jax.config.update("jax_enable_x64", False)


def _layer_norm(m):
    def f(x):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / m.sqrt(var + 1e-5) * 1.5 + 0.25
    return f


def _ops(lib, np_mod):
    return {
        "softmax": lambda x, ax: lib.nn.softmax(x, axis=ax),
        "log_softmax": lambda x, ax: lib.nn.log_softmax(x, axis=ax),
        "logsumexp": lambda x, ax: lib.nn.logsumexp(x, axis=ax),
        "argmax": lambda x, ax: np_mod.argmax(x, axis=ax),
        "argmin": lambda x, ax: np_mod.argmin(x, axis=ax),
        "var": lambda x, ax: np_mod.var(x, axis=ax),
        "max": lambda x, ax: np_mod.max(x, axis=ax),
        "layer_norm": lambda x, ax: _layer_norm(np_mod)(x),
    }


OURS, THEIRS = _ops(numjax, njnp), _ops(jax, jjnp)


def _data(shape, special):
    x = np.random.RandomState(0).randn(*shape).astype(np.float32)
    if special:
        x[0, 3] = np.nan
        x[1, :] = -np.inf
        x[2, 5] = np.inf
        x[-1, :] = -0.0
    return x


# (layer norm is over the last axis only)
CASES = [(name, axis) for name in sorted(OURS) for axis in (-1, 0)
         if not (name == "layer_norm" and axis == 0)]


@pytest.mark.parametrize("name,axis", CASES)
@pytest.mark.parametrize("shape", [(37, 29), (64, 1024), (5, 1)])
@pytest.mark.parametrize("special", [False, True])
def test_row_ops_match_jax(name, axis, shape, special):
    x = _data(shape, special and shape[0] > 3 and shape[1] > 5)
    ours = np.asarray(numjax.jit(lambda v: OURS[name](v, axis))(x))
    theirs = np.asarray(jax.jit(lambda v: THEIRS[name](v, axis))(x))
    if name == "max":
        # JAX 0.10.2's jitted CPU max over long rows drops NaNs (its vectorized reduction;
        # eager jnp.max and shorter rows propagate them): numjax propagates, as XLA's max
        # is defined, so its NaN positions are numpy's.
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(np.max(x, axis=axis)))
        ok = ~np.isnan(np.max(x, axis=axis))
        np.testing.assert_array_equal(ours[ok], theirs[ok])
        return
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if ours.dtype.kind in "iu":
        np.testing.assert_array_equal(ours, theirs)
        return
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=2e-6)

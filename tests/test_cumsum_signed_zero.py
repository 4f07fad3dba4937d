"""XLA's cumulative sum starts from +0 along an axis longer than one: a prefix of -0.0 sums to
+0.0 (jnp.cumsum([-0.0, -0.0]) is [0.0, 0.0] in JAX 0.10.2), while a length-1 axis is copied as
it is (-0.0 stays). Eager, jitted (the CPU driver's kernels) and the Numba backend's kernel;
the CUDA backend's in tests/cuda/test_cuda_indexing.py. assert_array_equal does not tell -0.0
from 0.0, so the sign bits are compared."""
import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax import lax
from numjax.lowering import kernels

SHAPES = [((1,), 0), ((2,), 0), ((5,), 0), ((3, 1), 1), ((3, 1), 0), ((1, 3), 0), ((2, 3, 4), 1),
          ((2, 3, 4), 2)]


def _signs(x):
    return np.signbit(np.asarray(x)).astype(int)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape,axis", SHAPES)
def test_negative_zeros(shape, axis, reverse, dtype):
    x = jnp.asarray(np.full(shape, -0.0, dtype))
    want = np.full(shape, int(shape[axis] == 1))
    eager = lax.cumsum(x, axis=axis, reverse=reverse)
    jitted = numjax.jit(lambda v: lax.cumsum(v, axis=axis, reverse=reverse))(x)
    np.testing.assert_array_equal(_signs(eager), want)
    np.testing.assert_array_equal(_signs(jitted), want)


def test_values_other_than_negative_zero_are_unchanged():
    x = np.array([-0.0, -0.0, 2.5, -2.5, -0.0, np.nan, 1.0], np.float32)
    for out in (jnp.cumsum(x), numjax.jit(jnp.cumsum)(x)):
        np.testing.assert_array_equal(np.asarray(out)[:5], [0.0, 0.0, 2.5, 0.0, 0.0])
        np.testing.assert_array_equal(_signs(np.asarray(out)[:5]), [0, 0, 0, 0, 0])
        assert np.isnan(np.asarray(out)[5:]).all()
    ints = np.array([-3, 0, 5], np.int32)
    np.testing.assert_array_equal(np.asarray(numjax.jit(jnp.cumsum)(ints)), np.cumsum(ints))


def test_jacfwd_of_a_cumsum_has_plus_zeros():
    # the probe that found it: the upper triangle of this Jacobian is +0.0 in JAX
    jac = numjax.jacfwd(lambda v: jnp.cumsum(v ** 2))(jnp.linspace(-2, 2, 5))
    upper = np.asarray(jac)[np.triu_indices(5, 1)]
    assert (upper == 0).all() and not np.signbit(upper).any()


@pytest.mark.parametrize("n,reverse", [(1, False), (4, False), (4, True)])
def test_numba_backend_kernel(n, reverse):
    out = kernels.cumulative_last(np.full((2, n), -0.0, np.float32), 0, reverse)
    np.testing.assert_array_equal(_signs(out), np.full((2, n), int(n == 1)))
    ints = kernels.cumulative_last(np.arange(6, dtype=np.int64).reshape(2, 3) + 2**60, 0, reverse)
    np.testing.assert_array_equal(ints, np.cumsum((np.arange(6, dtype=np.int64).reshape(2, 3) + 2**60)[:, ::-1] if reverse
                                                  else np.arange(6, dtype=np.int64).reshape(2, 3) + 2**60, axis=1)[:, ::-1 if reverse else 1])

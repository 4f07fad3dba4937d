"""var/std with ddof at or above the number of elements: NaN, as in JAX (which selects NaN where
n - ddof <= 0; dividing by the negative n - ddof gave -0.0)."""
import numpy as np
import pytest

import numjax
import numjax.numpy as jnp

CASES = [
    (lambda x: jnp.std(x, ddof=3), np.ones(2, np.float32)),
    (lambda x: jnp.var(x, ddof=3), np.ones(3, np.float32)),
    (lambda x: jnp.var(x, axis=0, ddof=2), np.ones((2, 3), np.float32)),
    (lambda x: jnp.var(x, ddof=5), np.array([1 + 1j, 2j], np.complex64)),
    (lambda x: jnp.var(x, correction=4, axis=1), np.arange(6, dtype=np.int32).reshape(2, 3)),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_no_degrees_of_freedom_is_nan(case):
    fn, x = CASES[case]
    for out in (fn(x), numjax.jit(fn)(x)):
        assert np.isnan(np.asarray(out)).all()


def test_degrees_of_freedom_left_are_unchanged():
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_allclose(np.asarray(jnp.var(x, axis=1, ddof=3)), np.var(x, axis=1, ddof=3), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(numjax.vmap(lambda r: jnp.std(r, ddof=1))(x)),
                               np.std(x, axis=1, ddof=1), rtol=1e-6)

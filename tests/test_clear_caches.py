"""jax.clear_caches, jax.print_environment_info, jax.random.key_dtype and jax.random.clone."""
import numpy as np

import numjax
import numjax.numpy as jnp


def test_clear_caches_forgets_traces_and_fast_entries():
    traces = []

    def f(x):
        traces.append(1)
        return x * 2
    jitted = numjax.jit(f)
    jitted(jnp.ones(3))
    jitted(np.ones(4, np.float32))
    jitted(jnp.ones(3))
    assert jitted._cache_size() == 2 and len(traces) == 2
    numjax.clear_caches()
    assert jitted._cache_size() == 0
    np.testing.assert_array_equal(np.asarray(jitted(jnp.ones(3))), [2, 2, 2])
    assert jitted._cache_size() == 1 and len(traces) == 3       # traced again, fast path included


def test_environment_info():
    text = numjax.print_environment_info(return_string=True)
    assert "numjax:" in text and "numpy:" in text and "python:" in text
    assert numjax.print_environment_info() is None


def test_key_dtype_and_clone():
    key = numjax.random.key(3)
    assert key.dtype == numjax.random.key_dtype() and str(numjax.random.key_dtype()) == "key<fry>"
    same = numjax.random.clone(key)
    np.testing.assert_array_equal(np.asarray(numjax.random.key_data(same)), np.asarray(numjax.random.key_data(key)))
    np.testing.assert_array_equal(np.asarray(numjax.random.uniform(same, (3,))),
                                  np.asarray(numjax.random.uniform(key, (3,))))

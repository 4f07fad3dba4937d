"""jax.clear_caches and jax.random.key_dtype/clone against real JAX."""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402

jax.config.update("jax_platform_name", "cpu")


def test_clear_caches_cache_sizes():
    sizes = []
    for lib, jnp in ((nj, njnp), (jax, jjnp)):
        f = lib.jit(lambda x: x * 2)
        f(jnp.ones(3))
        f(jnp.ones(4))
        before = f._cache_size()
        lib.clear_caches()
        after = f._cache_size()
        f(jnp.ones(3))
        sizes.append((before, after, f._cache_size()))
    assert sizes[0] == sizes[1]


def test_key_dtype_and_clone():
    assert str(nj.random.key_dtype()) == str(jax.random.key_dtype())
    ours = nj.random.uniform(nj.random.clone(nj.random.key(5)), (4,))
    theirs = jax.random.uniform(jax.random.clone(jax.random.key(5)), (4,))
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))

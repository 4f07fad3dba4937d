"""JAX's configuration states at the package's top (``jax.enable_x64``,
``jax.numpy_dtype_promotion``, ``jax.default_matmul_precision``, ...): ``.value``, and a
context manager or decorator setting the option for a block; values checked as JAX does."""
import numpy as np
import pytest

import numjax
import numjax.numpy as jnp


def test_enable_x64_for_a_block_and_as_a_decorator():
    assert numjax.enable_x64.value is False
    f = numjax.jit(lambda v: v * 2)
    assert f(np.arange(3.0)).dtype == np.float32
    with numjax.enable_x64(True):
        assert numjax.enable_x64.value is True
        assert jnp.arange(3.0).dtype == np.float64
        assert f(np.arange(3.0)).dtype == np.float64          # traced again under x64
        assert numjax.random.uniform(numjax.random.key(0), (2,)).dtype == np.float64
    assert numjax.enable_x64.value is False
    assert jnp.arange(3.0).dtype == np.float32 and f(np.arange(3.0)).dtype == np.float32

    @numjax.enable_x64(True)
    def ones_dtype():
        return jnp.ones(1).dtype
    assert ones_dtype() == np.float64 and ones_dtype() == np.float64
    assert numjax.enable_x64.value is False


def test_restored_after_an_exception():
    with pytest.raises(RuntimeError):
        with numjax.enable_x64(True):
            raise RuntimeError
    assert numjax.enable_x64.value is False


@pytest.mark.parametrize("state,value", [("numpy_dtype_promotion", "strict"), ("numpy_rank_promotion", "raise"),
                                         ("default_matmul_precision", "float32"), ("debug_nans", True),
                                         ("debug_infs", True), ("check_tracer_leaks", True),
                                         ("threefry_partitionable", False)])
def test_values_for_a_block(state, value):
    st = getattr(numjax, state)
    before = st.value
    with st(value):
        assert st.value == value
        assert float(jnp.dot(jnp.ones((2, 2)), jnp.ones((2, 2))).sum()) == 8.0
    assert st.value == before


@pytest.mark.parametrize("state,value,message", [
    ("numpy_dtype_promotion", "bogus", "'bogus' is not a valid NumpyDtypePromotion"),
    ("numpy_rank_promotion", "bogus", r"new enum value must be in \['allow', 'warn', 'raise'\], got bogus"),
    ("default_matmul_precision", "bogus", "new enum value must be None or in"),
])
def test_bad_values(state, value, message):
    with pytest.raises(ValueError, match=message):
        with getattr(numjax, state)(value):
            pass

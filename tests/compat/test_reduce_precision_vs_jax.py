"""lax.reduce_precision against real JAX, bit for bit: float32 eagerly and under jit on random
bit patterns and every special class; float16 and bfloat16 eagerly (JAX's jit of those differs
from its own eager results in NaN payloads and float16 subnormals, which numjax does not copy:
README). Also the configuration states numjax exports at the top (``enable_x64`` & co)."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_reduce_precision import CONFIGS, _bits, _random_f32  # noqa: E402

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402

jax.config.update("jax_platform_name", "cpu")


@pytest.mark.parametrize("config", CONFIGS)
def test_float32(config):
    x = _random_f32()
    for ours, theirs in ((nj.lax.reduce_precision, jax.lax.reduce_precision),
                         (nj.jit(lambda v: nj.lax.reduce_precision(v, *config)),
                          jax.jit(lambda v: jax.lax.reduce_precision(v, *config)))):
        args = (x,) if ours.__class__.__name__ == "PjitFunction" else (x, *config)
        np.testing.assert_array_equal(_bits(ours(*args)), _bits(theirs(*args)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("config", [(5, 10), (8, 7), (4, 3), (5, 2), (3, 1)])
def test_narrow_floats_eagerly(dtype, config):
    codes = np.random.default_rng(1).integers(0, 2**16, 70_000, dtype=np.uint64).astype(np.uint16)
    x = codes.view(njnp.dtype(dtype))
    ours = nj.lax.reduce_precision(njnp.asarray(x), *config)
    theirs = jax.lax.reduce_precision(jjnp.asarray(x), *config)
    np.testing.assert_array_equal(_bits(ours), _bits(theirs))


def test_configuration_states():
    for name in ("enable_x64", "numpy_dtype_promotion", "numpy_rank_promotion", "default_matmul_precision",
                 "debug_nans", "debug_infs", "check_tracer_leaks", "threefry_partitionable", "default_prng_impl"):
        assert getattr(nj, name).value == getattr(jax, name).value, name
    for lib, jnp in ((nj, njnp), (jax, jjnp)):
        with lib.enable_x64(True):
            assert jnp.arange(3.0).dtype == np.float64
        assert jnp.arange(3.0).dtype == np.float32

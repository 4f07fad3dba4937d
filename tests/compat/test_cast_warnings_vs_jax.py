"""Warnings on lossy casts and scatter updates (categories, in order) and the results, against
real JAX: see tests/test_cast_warnings.py."""
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402

jax.config.update("jax_platform_name", "cpu")

CASES = {
    "lax.convert_element_type": lambda j, jnp, z: j.lax.convert_element_type(z, np.float32),
    "jnp.float32": lambda j, jnp, z: jnp.float32(z),
    "asarray dtype": lambda j, jnp, z: jnp.asarray(z, dtype=jnp.float32),
    "astype float": lambda j, jnp, z: z.astype(jnp.float32),
    "astype int": lambda j, jnp, z: z.astype(jnp.int32),
    "astype bool": lambda j, jnp, z: z.astype(bool),
    "jit astype bool": lambda j, jnp, z: j.jit(lambda v: v.astype(bool))(z),
    "jvp convert": lambda j, jnp, z: j.jvp(lambda v: j.lax.convert_element_type(v, np.float32), (z,), (z,))[1],
    "vmap convert": lambda j, jnp, z: j.vmap(lambda v: j.lax.convert_element_type(v, np.float32))(z),
    "at set float into int": lambda j, jnp, z: jnp.arange(4).at[1].set(2.7),
    "at add int32 into int8": lambda j, jnp, z: jnp.arange(4, dtype=jnp.int8).at[1].add(jnp.int32(5)),
    "at set 300 into int8": lambda j, jnp, z: jnp.arange(4, dtype=jnp.int8).at[1].set(300),
    "at set -1 into uint8": lambda j, jnp, z: jnp.zeros(3, jnp.uint8).at[0].set(-1),
    "at set complex into float": lambda j, jnp, z: jnp.zeros(3).at[0].set(z[0]),
    "at set f32 into f16": lambda j, jnp, z: jnp.zeros(3, jnp.float16).at[0].set(jnp.float32(2)),
    "at divide int": lambda j, jnp, z: jnp.arange(3).at[0].divide(2),
    "at set into bool": lambda j, jnp, z: jnp.zeros(3, bool).at[0].set(1),
}


def _run(case, j, jnp):
    z = jnp.array([1 + 2j, 0j, 2 + 0j], jnp.complex64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = np.asarray(CASES[case](j, jnp, z))
    return out, [w.category.__name__ for w in caught if w.category is not UserWarning]


@pytest.mark.parametrize("case", sorted(CASES))
def test_warnings_and_values(case):
    ours, ours_w = _run(case, nj, njnp)
    theirs, theirs_w = _run(case, jax, jjnp)
    assert ours_w == theirs_w
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


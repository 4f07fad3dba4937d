"""JAX's warnings on lossy casts, and the value of a complex array cast to bool:
- ``lax.convert_element_type`` (and jnp functions casting through it: ``jnp.float32(z)``,
  ``jnp.asarray(z, dtype=float)``) of a complex value to a real type: numpy's ComplexWarning;
- ``x.astype(real type)`` of a complex ``x``: a DeprecationWarning (a ValueError in future JAX);
  ``z.astype(bool)`` is ``z != 0`` (1j is True), not the real part's truth;
- ``x.at[i].set(v)`` (add, multiply, ...) where promotion would not cast ``v`` to ``x``'s dtype
  (a float into an int array): a FutureWarning; a Python int that fits, or a narrower type, not.
"""
import warnings

import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax import lax

Z = jnp.array([1 + 2j, 0j, 2 + 0j], jnp.complex64)


def _caught(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [w.category for w in caught]


WARNS = {
    "lax.convert_element_type": (lambda: lax.convert_element_type(Z, np.float32), [np.exceptions.ComplexWarning]),
    "jnp.float32": (lambda: jnp.float32(Z), [np.exceptions.ComplexWarning]),
    "asarray dtype": (lambda: jnp.asarray(Z, dtype=jnp.float32), [np.exceptions.ComplexWarning]),
    "astype float": (lambda: Z.astype(jnp.float32), [DeprecationWarning]),
    "astype int under jit": (lambda: numjax.jit(lambda z: z.astype(jnp.int32))(Z), [DeprecationWarning]),
    "astype complex": (lambda: Z.astype(jnp.complex64), []),
    "jnp.real": (lambda: jnp.real(Z), []),
    "at set float into int": (lambda: jnp.arange(4).at[1].set(2.7), [FutureWarning]),
    "at multiply float into int": (lambda: jnp.arange(3).at[0].multiply(0.5), [FutureWarning]),
    "at set complex into float": (lambda: jnp.zeros(3).at[0].set(1j),
                                  [FutureWarning, np.exceptions.ComplexWarning]),
    "at set f32 into bf16": (lambda: jnp.zeros(3, jnp.bfloat16).at[0].set(jnp.float32(1.5)), [FutureWarning]),
    "at set 300 into int8": (lambda: jnp.arange(4, dtype=jnp.int8).at[1].set(300), []),
    "at set bf16 into f32": (lambda: jnp.zeros(3).at[0].set(jnp.bfloat16(1.5)), []),
    "at set float64 into f32": (lambda: jnp.zeros(3).at[0].set(np.float64(1.5)), []),
}


@pytest.mark.parametrize("name", sorted(WARNS))
def test_warnings(name):
    fn, expected = WARNS[name]
    _, got = _caught(fn)
    assert got == expected


def test_complex_astype_bool_is_nonzero():
    out, _ = _caught(lambda: Z.astype(bool))
    np.testing.assert_array_equal(np.asarray(out), [True, False, True])
    jitted = numjax.jit(lambda z: z.astype(bool))(jnp.array([1j, 0j], jnp.complex64))
    np.testing.assert_array_equal(np.asarray(jitted), [True, False])


def test_the_scatter_warning_names_the_dtypes():
    with pytest.warns(FutureWarning, match="cannot safely cast value from dtype=float32 to dtype=int32 with "
                                           "jax_numpy_dtype_promotion=standard"):
        jnp.arange(4).at[1].set(2.7)

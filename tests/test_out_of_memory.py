"""An allocation that cannot succeed raises JAX's ``JaxRuntimeError`` (RESOURCE_EXHAUSTED, with
the bytes asked for), also a MemoryError, on every path: jnp functions, the eager operators,
transformations run eagerly, and jitted calls. The sizes (4e15 bytes) exceed any 48-bit
address space, so the allocation fails at once however the machine overcommits memory."""
import pytest

import numjax as jax
import numjax.numpy as jnp

ROWS, COLS = 10**8, 10**7


def _operands():
    return jnp.ones((ROWS, 1)), jnp.ones((1, COLS))


CASES = {
    "jnp.zeros": lambda a, b: jnp.zeros((ROWS, COLS)),
    "operator *": lambda a, b: a * b,
    "jnp.add": lambda a, b: jnp.add(a, b),
    "jnp.outer": lambda a, b: jnp.outer(a[:, 0], b[0]),
    "vmap": lambda a, b: jax.vmap(lambda x: x * b)(a),
    "grad": lambda a, b: jax.grad(lambda x: (x * b).sum())(a),
    "jit": lambda a, b: jax.jit(lambda x, y: x * y)(a, b),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_failed_allocation_is_jax_resource_exhausted(name):
    a, b = _operands()
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"RESOURCE_EXHAUSTED: Out of memory allocating \d+ bytes") as info:
        CASES[name](a, b)
    assert isinstance(info.value, MemoryError)
    assert int(str(info.value).split("allocating ")[1].split()[0]) >= 4 * ROWS * COLS


def test_jit_still_works_after_a_failed_allocation():
    a, b = _operands()
    f = jax.jit(lambda x, y: x * y)
    with pytest.raises(MemoryError):
        f(a, b)
    out = f(a[:3], b[:, :2])
    assert out.shape == (3, 2) and float(out.sum()) == 6.0

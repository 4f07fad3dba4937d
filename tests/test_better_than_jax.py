"""numjax's deliberate improvements over JAX (README): numjax gives the IEEE/exact result.
The twin in tests/compat checks that JAX still differs, so the README's list stays honest."""
import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from better_than_jax_cases import CASES


@pytest.mark.parametrize("name", sorted(CASES))
def test_numjax_gives_the_exact_result(name):
    case, ours, _ = CASES[name]
    got = case(jax, jnp)
    assert got is not None, f"{name}: numjax raised NotImplementedError"
    got = np.asarray(got)
    assert got.dtype == np.asarray(ours).dtype
    np.testing.assert_array_equal(got, ours)

"""Real JAX still behaves as README says numjax improves on (tests/better_than_jax_cases.py)."""
import os
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jnp  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from better_than_jax_cases import CASES  # noqa: E402


@pytest.mark.parametrize("name", sorted(CASES))
def test_jax_gives_what_readme_says(name):
    case, _, theirs = CASES[name]
    got = case(jax, jnp)
    if theirs is None:
        assert got is None, f"{name}: JAX no longer raises; update README and the case table"
    else:
        np.testing.assert_array_equal(np.asarray(got), theirs)

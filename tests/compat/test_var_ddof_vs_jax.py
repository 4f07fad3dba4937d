"""var and std with ddof up to and past the number of elements, against real JAX (NaN where no
degrees of freedom are left)."""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402

import numjax.numpy as njnp  # noqa: E402

jax.config.update("jax_platform_name", "cpu")


@pytest.mark.parametrize("ddof", [0, 1, 2, 3, 5])
def test_var_and_std_with_ddof(ddof):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for name in ("var", "std"):
        for axis in (None, 0, 1):
            ours = np.asarray(getattr(njnp, name)(x, axis=axis, ddof=ddof))
            theirs = np.asarray(getattr(jjnp, name)(x, axis=axis, ddof=ddof))
            np.testing.assert_allclose(ours, theirs, rtol=1e-6)
            assert ours.dtype == theirs.dtype

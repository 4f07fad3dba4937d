"""Signs of zero in cumulative sums and products against real JAX (eager and jitted): XLA's
cumulative sum starts from +0 along an axis longer than one."""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")

import numjax as nj  # noqa: E402

jax.config.update("jax_platform_name", "cpu")

SHAPES = [((1,), 0), ((2,), 0), ((5,), 0), ((3, 1), 1), ((3, 1), 0), ((1, 3), 0), ((2, 3, 4), 1)]
VALUES = [-0.0, 0.0, 1.5, -1.5]


def _signs(lib, op, x, axis, reverse):
    f = lambda v: getattr(lib.lax, op)(v, axis=axis, reverse=reverse)   # noqa: E731
    return [np.signbit(np.asarray(g(x))).astype(int).tolist() for g in (f, lib.jit(f))]


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax", "cummin"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape,axis", SHAPES)
def test_signs_of_zero(shape, axis, reverse, op):
    rng = np.random.default_rng(sum(shape) + axis)
    for x in (np.full(shape, -0.0, np.float32), rng.choice(VALUES, shape).astype(np.float32)):
        assert _signs(nj, op, x, axis, reverse) == _signs(jax, op, x, axis, reverse)

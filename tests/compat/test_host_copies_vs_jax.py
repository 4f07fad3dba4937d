"""Results made from a numpy array, then the array written: numjax and real JAX agree (both
copy host data in), value, dtype and type, eager and jitted; ``np.asarray`` of an Array is
read-only in both. Not compared, where JAX 0.10.2 hands back the caller's memory (numjax
returns an Array of its own there): ``lax.stop_gradient`` and ``jnp.reshape`` of a numpy array
return a numpy view of it (``jnp.reshape`` keeping float64), and ``device_put`` may alias an
aligned numpy array (writing it afterwards is undefined in JAX)."""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402

jax.config.update("jax_platform_name", "cpu")

CASES = {
    "asarray": lambda j, jnp, x: jnp.asarray(x),
    "array": lambda j, jnp, x: jnp.array(x),
    "ravel": lambda j, jnp, x: jnp.ravel(x),
    "transpose": lambda j, jnp, x: jnp.transpose(x),
    "lax.convert_element_type": lambda j, jnp, x: j.lax.convert_element_type(x, np.float32),
    "lax.broadcast_in_dim": lambda j, jnp, x: j.lax.broadcast_in_dim(x, (2, 3), (0, 1)),
    "lax.slice": lambda j, jnp, x: j.lax.slice(x, (0, 0), (1, 2)),
    "jit identity": lambda j, jnp, x: j.jit(lambda y: y)(x),
    "jit reshape": lambda j, jnp, x: j.jit(lambda y: y.reshape(3, 2))(x),
    "jit row": lambda j, jnp, x: j.jit(lambda y: y[1])(x),
    "jit tuple": lambda j, jnp, x: j.jit(lambda y: (y, y * 2))(x)[0],
}


def _run(case, j, jnp, dtype):
    outs = []
    for _ in range(3):               # jitted: the first call traces, later ones are cached
        x = np.arange(6, dtype=dtype).reshape(2, 3)
        out = CASES[case](j, jnp, x)
        x[...] = -7
        outs.append((np.array(out), np.asarray(out).dtype))
    return outs


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("case", sorted(CASES))
def test_results_after_writing_the_numpy_argument(case, dtype):
    ours, theirs = _run(case, nj, njnp, dtype), _run(case, jax, jjnp, dtype)
    for (a, adt), (b, bdt) in zip(ours, theirs):
        assert adt == bdt
        np.testing.assert_array_equal(a, b)


def test_asarray_of_an_array_is_read_only_in_both():
    for jnp in (njnp, jjnp):
        assert not np.asarray(jnp.arange(3.0)).flags.writeable
        assert np.array(jnp.arange(3.0)).flags.writeable

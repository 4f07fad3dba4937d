"""The eager short paths of reductions, jnp.where, vector jnp.dot, integer powers and
operators with scalars (numjax/numpy/_eager_paths.py, _operators.py) give real JAX 0.10.2's
dtypes, weak types and values (float sums within float32 tolerance: the orders differ).
Run under .venv-jax."""
import importlib.util

import numpy as np
import pytest

if importlib.util.find_spec("jax") is None:
    pytest.skip("real JAX not installed (tox -e compat)", allow_module_level=True)

import jax  # noqa: E402
import jax.numpy as rjnp  # noqa: E402

import numjax  # noqa: E402
import numjax.numpy as jnp  # noqa: E402

pytestmark = pytest.mark.compat


def _hosts():
    rng = np.random.default_rng(0)
    f = rng.standard_normal(1000).astype(np.float32)
    f[3], f[4] = -0.0, 0.0
    return {"f32": f, "i32": (f * 1e6).astype(np.int32), "i8": (f * 50).astype(np.int8),
            "u8": (np.abs(f) * 50).astype(np.uint8), "bool": f > 0, "f16": f.astype(np.float16),
            "nan": np.where(np.arange(1000) == 7, np.nan, f).astype(np.float32),
            "zeros": np.array([-0.0, 0.0, -0.0], np.float32), "0-d": np.asarray(-1.5, np.float32)}


CASES = {
    "sum": lambda m, x: m.sum(x), "prod": lambda m, x: m.prod(x[:20] if x.ndim else x),
    "max": lambda m, x: m.max(x), "min": lambda m, x: m.min(x), "argmax": lambda m, x: m.argmax(x),
    "argmin": lambda m, x: m.argmin(x), "all": lambda m, x: m.all(x), "any": lambda m, x: m.any(x),
    "mean": lambda m, x: m.mean(x), "var": lambda m, x: m.var(x), "std": lambda m, x: m.std(x),
    "method sum": lambda m, x: x.sum(), "method max": lambda m, x: x.max(),
    "where": lambda m, x: m.where(x > 0, x, 0.0), "where int": lambda m, x: m.where(x > 0, x, 3),
    "dot": lambda m, x: m.dot(x, x) if x.ndim == 1 else x, "pow2": lambda m, x: x ** 2,
    "pow3": lambda m, x: x ** 3, "square": lambda m, x: m.square(x), "isnan": lambda m, x: m.isnan(x),
    "eq": lambda m, x: x == x, "ne scalar": lambda m, x: x != 1, "add int": lambda m, x: x + 7,
    "mul -0.0": lambda m, x: x * -0.0,
}


@pytest.mark.parametrize("case", list(CASES))
def test_matches_jax(case):
    fn = CASES[case]
    for name, host in _hosts().items():
        for weak in (False, True):
            if weak and name not in ("f32", "0-d"):
                continue
            if case == "mul -0.0" and name == "bool":
                # XLA gives False * -0.0 as +0.0 (JAX's bool-to-float multiply, apparently folded
                # to a select); numjax's general and short paths alike give IEEE's -0.0.
                continue
            ours = numjax.numpy.asarray(host) * 1.0 if weak else jnp.asarray(host)
            theirs = rjnp.asarray(host) * 1.0 if weak else rjnp.asarray(host)
            if weak:     # (a weak array: a weak Python scalar broadcast)
                ours = numjax.lax.broadcast(jnp.asarray(float(host.ravel()[0])), host.shape)
                theirs = jax.lax.broadcast(rjnp.asarray(float(host.ravel()[0])), host.shape)
            try:
                want = fn(rjnp, theirs)
            except Exception as err:     # noqa: BLE001
                with pytest.raises(type(err)):
                    fn(jnp, ours)
                continue
            got = fn(jnp, ours)
            what = (case, name, weak)
            assert got.dtype == want.dtype and got.weak_type == want.weak_type, (what, got.dtype, want.dtype)
            g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
            np.testing.assert_allclose(g, w, rtol=2e-3 if name == "f16" else 2e-5, atol=1e-4, err_msg=str(what))
            np.testing.assert_array_equal(np.signbit(g[(g == 0)]), np.signbit(w[(g == 0)]), err_msg=str(what))

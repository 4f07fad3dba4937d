"""numjax.random against real JAX 0.10.2 in one process, and the generator of the committed
expected values (tests/random_vectors.json).

    tox -e compat                     # runs this file's tests (needs jax)
    cd /tmp && PYTHONPATH=/work/main/tests /tmp/jaxvenv/bin/python \
        /work/main/tests/compat/test_random_vs_jax.py    # rewrites the json from real JAX
"""
import json
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from test_random import CASES, MODES, SEEDS, VECTORS_PATH  # noqa: E402


def _record(value):
    arr = np.asarray(value)
    vals = arr.astype(np.float64) if arr.dtype.kind == "f" else arr.astype(np.int64)
    if arr.dtype == np.bool_:
        vals = arr.astype(np.int64)
    return {"dtype": arr.dtype.name, "shape": list(arr.shape),
            "weak_type": bool(getattr(value, "weak_type", False)),
            "value": np.ravel(vals).tolist()}


def generate():
    import jax
    import jax.numpy as jnp
    out = {}
    for mode in MODES:
        jax.config.update("jax_threefry_partitionable", mode)
        for seed in SEEDS:
            key = jax.random.PRNGKey(seed)
            for name, fn in CASES.items():
                out[f"{name}|{seed}|{int(mode)}"] = _record(fn(jax.random, jnp, key))
    jax.config.update("jax_threefry_partitionable", True)
    return out


def test_numjax_matches_jax_live():
    jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
    import jax.numpy as jjnp
    import numjax
    import numjax.numpy as njnp
    for mode in MODES:
        jax.config.update("jax_threefry_partitionable", mode)
        numjax.config.update("jax_threefry_partitionable", mode)
        try:
            for name, fn in CASES.items():
                want = fn(jax.random, jjnp, jax.random.PRNGKey(3))
                got = fn(numjax.random, njnp, numjax.random.PRNGKey(3))
                assert np.asarray(got).dtype == np.asarray(want).dtype, name
                np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                                           rtol=2e-5, atol=2e-6, err_msg=name)
        finally:
            jax.config.update("jax_threefry_partitionable", True)
            numjax.config.update("jax_threefry_partitionable", True)


if __name__ == "__main__":
    data = generate()
    with open(VECTORS_PATH, "w") as fh:
        json.dump(data, fh, separators=(",", ":"))
    print(f"wrote {len(data)} records to {VECTORS_PATH}")

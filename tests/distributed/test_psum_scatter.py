"""lax.psum_scatter in one process (pmap over 4 CPU devices, vmap, grad) against a numpy
reference; tests/compat/test_psum_scatter_vs_jax.py runs the same program on real JAX."""
import functools
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

PROGRAM = pathlib.Path(__file__).parent / "psum_scatter_program.py"


@functools.lru_cache(maxsize=None)
def results(python=sys.executable, runner=("-m", "numjax")):
    env = dict(os.environ, NUMJAX_NUM_CPU_DEVICES="4", XLA_FLAGS="--xla_force_host_platform_device_count=4")
    proc = subprocess.run([python, *runner, str(PROGRAM)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT-JSON ")][-1]
    return json.loads(line[len("RESULT-JSON "):])


def _scatter(x, dim, tiled):
    """Member i's block of the sum over the leading (member) axis."""
    total, n = x.sum(0), x.shape[0]
    blocks = np.split(total, n, axis=dim)
    return np.stack([b if tiled else np.squeeze(b, dim) for b in blocks])


X = np.arange(4 * 4 * 6, dtype=np.float32).reshape(4, 4, 6)
Y = np.arange(4 * 3 * 8, dtype=np.int32).reshape(4, 3, 8)


@pytest.mark.parametrize("mapper", ["pmap", "vmap"])
def test_values(mapper):
    r = results()
    np.testing.assert_array_equal(r[f"{mapper}_untiled"], _scatter(X, 0, False))
    np.testing.assert_array_equal(r[f"{mapper}_tiled"], _scatter(X, 0, True))
    np.testing.assert_array_equal(r[f"{mapper}_dim1_tiled"], _scatter(Y, 1, True))
    np.testing.assert_array_equal(r[f"{mapper}_dim_neg"], _scatter(Y, 1, True))
    assert r[f"{mapper}_bad_size"] == ("ValueError: reduce_scatter operand scatter dimension size 6 "
                                       "must match shard count 4")
    assert r[f"{mapper}_bad_tiled"] == ("ValueError: tiled reduce_scatter operand scatter dimension "
                                        "size 6 must be divisible by shard_count 4")


def test_gradients():
    r = results()
    # d/dx sum(scatter(x)^2): every member's cotangent is the all_gather of 2 * its block.
    blocks = _scatter(X, 0, True)
    np.testing.assert_array_equal(r["grad"], np.broadcast_to(2 * blocks.reshape(4, 6), X.shape))
    np.testing.assert_array_equal(r["grad_pmap"], np.full(X.shape, 3.0))
    inner = X[:, :, :4].transpose(2, 0, 1)
    np.testing.assert_array_equal(r["nested_vmap"], np.stack([_scatter(v, 0, True) for v in inner]))

"""lax.all_to_all in one process (pmap, jit(pmap), vmap, shard_map over 4 CPU devices; grads;
jaxprs) against a numpy reference; tests/compat/test_all_to_all_vs_jax.py runs the same program
on real JAX, and tests/distributed/test_distributed.py runs it across processes."""
import functools
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

PROGRAM = pathlib.Path(__file__).parent / "all_to_all_program.py"
CASES = {"tiled_1_0": ((4, 8, 3), 1, 0, True), "tiled_0_2": ((8, 2, 3), 0, 2, True),
         "tiled_same": ((2, 8, 3), 1, 1, True), "untiled_0_1": ((4, 3), 0, 1, False),
         "untiled_2_0": ((2, 3, 4), 2, 0, False), "untiled_same": ((3, 4), 1, 1, False),
         "negative": ((3, 4), -1, -2, False)}


@functools.lru_cache(maxsize=None)
def results():
    env = dict(os.environ, NUMJAX_NUM_CPU_DEVICES="4", XLA_FLAGS="--xla_force_host_platform_device_count=4")
    proc = subprocess.run([sys.executable, "-m", "numjax", str(PROGRAM)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT-JSON ")][-1]
    return json.loads(line[len("RESULT-JSON "):])


def all_to_all(xs, split, concat, tiled):
    """Member j's result: block j (along ``split``) of every member's operand, in member order."""
    n = len(xs)
    split, concat = split % (xs.ndim - 1), concat % (xs.ndim - 1)
    outs = []
    for j in range(n):
        blocks = [np.split(x, n, axis=split)[j] for x in xs]
        outs.append(np.concatenate(blocks, concat) if tiled else
                    np.stack([np.squeeze(b, split) for b in blocks], concat))
    return np.stack(outs)


def inputs():
    rng = np.random.default_rng(0)
    xs = {k: rng.standard_normal((4,) + shape).astype(np.float32) for k, (shape, *_) in CASES.items()}
    ws = {k: rng.standard_normal((4,) + shape).astype(np.float32) for k, (shape, *_) in CASES.items()}
    return xs, ws


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("mapper", ["pmap", "jit_pmap", "vmap", "shard_map"])
def test_values(mapper, case):
    shape, split, concat, tiled = CASES[case]
    x = inputs()[0][case]
    np.testing.assert_array_equal(results()[f"{mapper}_{case}"], all_to_all(x, split, concat, tiled))


@pytest.mark.parametrize("case", [c for c in sorted(CASES) if CASES[c][3]])
def test_gradients(case):
    """all_to_all is linear: its transpose sends each cotangent block back (split and concat
    swapped), so the gradient of sum(sin(y) * w) is that exchange of cos(y) * w."""
    shape, split, concat, tiled = CASES[case]
    xs, ws = inputs()
    x, w = xs[case], ws[case]
    y = all_to_all(x, split, concat, tiled)
    ct = np.cos(y) * w.reshape(y.shape)
    np.testing.assert_allclose(results()[f"grad_pmap_{case}"], all_to_all(ct, concat, split, tiled), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(results()[f"grad_vmap_{case}"],
                               all_to_all(2 * np.sin(y) * np.cos(y), concat, split, tiled), rtol=1e-5, atol=1e-6)


def test_untiled_gradient():
    x = inputs()[0]["untiled_0_1"]
    y = all_to_all(x, 0, 1, False)
    want = all_to_all(2 * np.sin(y) * np.cos(y), 1, 0, False)
    np.testing.assert_allclose(results()["untiled_grad_vmap"], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results()["untiled_grad_pmap"], want, rtol=1e-5, atol=1e-6)


def test_one_primitive_in_the_jaxpr():
    r = results()
    assert r["jaxpr_tiled_1_0"] == (
        "{ lambda ; a:f32[4,8,3]. let\n    b:f32[16,2,3] = all_to_all[\n      axis_index_groups=None\n"
        "      axis_name=i\n      concat_axis=0\n      split_axis=1\n      tiled=True\n    ] a\n  in (b,) }")
    assert "b:f32[1,2,3,4] = broadcast_in_dim" in r["jaxpr_untiled_2_0"]
    assert "squeeze[dimensions=(3,)]" in r["jaxpr_untiled_2_0"]
    assert r["jaxpr_untiled_2_0"].count("all_to_all[") == 1


def test_errors_and_nesting():
    r = results()
    assert r["bad_size_untiled"] == ("ValueError: all_to_all requires the size of the mapped axis axis_name "
                                     "to equal x.shape[split_axis], but they are 4 and 8 respectively.")
    assert r["bad_size_tiled"] == ("ValueError: The size of all_to_all split_axis (3) has to be divisible "
                                   "by the size of the named axis i (4)")
    x = inputs()[0]["tiled_0_2"].reshape(2, 4, 4, 6)
    np.testing.assert_array_equal(r["nested_vmap"], np.stack([all_to_all(v, 0, 1, True) for v in x]))
    u = inputs()[0]["untiled_2_0"].transpose(0, 3, 2, 1)       # (member, 4, 3, 2): vmapped over axis 1
    want = np.stack([all_to_all(u[:, :, k], 0, 1, False) for k in range(3)], axis=2)
    np.testing.assert_array_equal(r["vmap_inside_pmap"], want)

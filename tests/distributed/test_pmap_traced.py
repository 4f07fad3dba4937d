"""A pmap across processes under jit, grad and vmap (scripts/pmap_traced.py) against the
single-process run over the same number of CPU devices."""
import functools

import numpy as np
import pytest

from mpirun import needs_mpi, run

# Per-shard results: the processes' local shards, concatenated, equal the single-process run.
SHARDED = ["eager", "jit", "jit_closure", "grad_x", "jit_grad_x", "vmap", "jit_vmap"]
# Gradients with respect to a value every shard sees: each process's is the sum over its own
# shards, so the processes' sum is the single-process gradient.
SUMMED = ["grad_w", "grad_closure_w"]


@functools.lru_cache(maxsize=None)
def reference(total):
    return run("pmap_traced.py", None, total)


@needs_mpi
@pytest.mark.parametrize("processes,local", [pytest.param(2, 1, marks=pytest.mark.mpi_smoke, id="2x1"),
                                             pytest.param(2, 2, id="2x2")])
def test_pmap_under_jit_grad_vmap_matches_single_process(processes, local):
    r, ref = run("pmap_traced.py", processes, local), reference(processes * local)
    assert r.returncode == 0, r
    assert ref.returncode == 0, ref
    (single,) = ref.results
    for key in SHARDED:
        got = r.concat(key)
        assert got.shape == single[key].shape, key
        np.testing.assert_allclose(got, single[key], rtol=2e-5, atol=2e-6, err_msg=key)
    for key in SUMMED:
        got = sum(res[key] for res in r.results)
        np.testing.assert_allclose(got, single[key], rtol=2e-5, atol=2e-6, err_msg=key)
    assert not np.allclose(r.results[0]["grad_w"], r.results[1]["grad_w"])   # each process's own
    for res in r.results:    # forward mode across processes: a clear error (one process: it runs)
        assert str(res["jvp_error"]).startswith("numjax: forward-mode differentiation (jvp, jacfwd, "
                                                "linearize) of a pmap across processes is not supported")
    assert str(single["jvp_error"]) == ""

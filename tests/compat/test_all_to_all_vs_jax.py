"""lax.all_to_all (pmap, jit(pmap), vmap, shard_map over 4 CPU devices; gradients; jaxprs with
axis_env; errors) gives what real JAX 0.10.2 gives: tests/distributed/all_to_all_program.py on
both. Run under .venv-jax."""
import importlib.util
import os
import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import program_record  # noqa: E402

if importlib.util.find_spec("jax") is None:
    pytest.skip("real JAX not installed (tox -e compat)", allow_module_level=True)

pytestmark = pytest.mark.compat
PROGRAM = pathlib.Path(__file__).resolve().parents[1] / "distributed" / "all_to_all_program.py"
# Negative split/concat axes of the untiled form: JAX 0.10.2 fails (an AssertionError in its
# shape rule under pmap/shard_map/make_jaxpr, a reshape TypeError under vmap); numjax normalizes
# them (checked against numpy in tests/distributed/test_all_to_all.py).
# The gradient of the untiled form under pmap: JAX 0.10.2's transpose rule re-applies the
# untiled wrapper to the primitive's cotangent and fails ("Expected cotangent type"); numjax
# transposes the primitive itself (split and concat axes swapped).
NUMJAX_BETTER = {"pmap_negative", "jit_pmap_negative", "vmap_negative", "shard_map_negative", "jaxpr_negative",
                 "untiled_grad_pmap"}


def _record(on):
    return program_record.record(PROGRAM, on)


def test_all_to_all_matches_jax():
    ours, theirs = _record("numjax"), _record("jax")
    assert set(ours) == set(theirs)
    cases = sorted(set(ours) - NUMJAX_BETTER)
    assert len(cases) == 41
    for case in cases:
        if isinstance(theirs[case], str):       # a jaxpr's text or an error message
            assert ours[case] == theirs[case], case
        else:
            np.testing.assert_allclose(ours[case], theirs[case], rtol=1e-5, atol=1e-6, err_msg=case)
    assert all(isinstance(theirs[c], str) and "Error" in theirs[c] for c in NUMJAX_BETTER)

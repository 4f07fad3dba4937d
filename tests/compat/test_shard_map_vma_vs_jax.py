"""shard_map's check_vma semantics of reverse mode (grad inside the body with respect to
replicated and sharded inputs, psum/pmean/all_gather/axis_index inside, out_specs P() against
P('x'), jit, scan and cond, a 2x2 mesh, check_vma True and False) give what real JAX 0.10.2 gives:
tests/shard_map_vma_program.py on both. Run under .venv-jax."""
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
PROGRAM = pathlib.Path(__file__).resolve().parents[1] / "shard_map_vma_program.py"


def _record(on):
    return program_record.record(PROGRAM, on)


def test_shard_map_vma_matches_jax():
    ours, theirs = _record("numjax"), _record("jax")
    assert set(ours) == set(theirs)
    assert len(ours) == 118
    errors = [c for c in theirs if isinstance(theirs[c], str)]
    assert len(errors) == 4, errors        # the out_specs P() replication errors
    for case in sorted(theirs):
        if isinstance(theirs[case], str):
            assert ours[case] == theirs[case], case
        else:
            np.testing.assert_allclose(ours[case], theirs[case], rtol=1e-4, atol=1e-4, err_msg=case)

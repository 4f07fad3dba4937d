"""Sharding in types (typeof text, propagation through eager ops and jit, errors, out_sharding,
auto_axes/explicit_axes, use_abstract_mesh) prints what real JAX 0.10.2 prints:
tests/sharding_types_program.py run on both. Run under .venv-jax."""
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

if importlib.util.find_spec("jax") is None:
    pytest.skip("real JAX not installed (tox -e compat)", allow_module_level=True)

pytestmark = pytest.mark.compat
PROGRAM = pathlib.Path(__file__).resolve().parents[1] / "sharding_types_program.py"


def _run(*args):
    proc = subprocess.run([sys.executable, str(PROGRAM), *args], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, NUMJAX_NUM_CPU_DEVICES="1"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.splitlines()


def test_sharding_types_program_prints_what_jax_prints():
    ours, theirs = _run(), _run("jax")
    assert len(theirs) > 40
    assert ours == theirs

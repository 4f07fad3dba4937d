"""jax.debug.visualize_array_sharding draws the same tables on numjax as on real JAX 0.10.2
(8 CPU devices; plain and colour terminals). Run under .venv-jax (needs rich and matplotlib)."""
import importlib.util
import os
import subprocess
import sys

import pytest

if importlib.util.find_spec("jax") is None or importlib.util.find_spec("rich") is None:
    pytest.skip("real JAX and rich not installed (tox -e compat)", allow_module_level=True)

PROGRAM = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sharding_view_program.py")


def _output(on, color):
    env = dict(os.environ, NUMJAX_NUM_CPU_DEVICES="8", XLA_FLAGS="--xla_force_host_platform_device_count=8")
    env.pop("FORCE_COLOR", None)
    if color:
        env["FORCE_COLOR"] = "1"
    cmd = [sys.executable, "-m", "numjax", PROGRAM] if on == "numjax" else [sys.executable, PROGRAM]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.parametrize("color", [False, True])
def test_tables_match_jax(color):
    ours, theirs = _output("numjax", color), _output("jax", color)
    assert ours.count("CPU") > 20
    assert ours == theirs

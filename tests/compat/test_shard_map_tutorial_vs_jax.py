"""JAX's shard_map tutorial behaviours (eager per-device printing, one trace per call, in_specs
inferred from sharding types, in_specs=None, the tutorial's data-parallel and FSDP losses):
tests/shard_map_tutorial_program.py prints the same text under real JAX 0.10.2 and under numjax,
both with 8 CPU devices. Run under .venv-jax."""
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

if importlib.util.find_spec("jax") is None:
    pytest.skip("real JAX not installed (tox -e compat)", allow_module_level=True)

pytestmark = pytest.mark.compat
PROGRAM = pathlib.Path(__file__).resolve().parents[1] / "shard_map_tutorial_program.py"


def _run(on):
    env = dict(os.environ, NUMJAX_NUM_CPU_DEVICES="8", XLA_FLAGS="--xla_force_host_platform_device_count=8")
    runner = ["-m", "numjax"] if on == "numjax" else []
    proc = subprocess.run([sys.executable, *runner, str(PROGRAM)], capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def _cases(text):
    out, name = {}, None
    for line in text.splitlines():
        if line.startswith("== "):
            name = line[3:]
            out[name] = []
        else:
            out[name].append(line)
    return out


def test_shard_map_tutorial_prints_as_jax():
    ours, theirs = _cases(_run("numjax")), _cases(_run("jax"))
    assert list(ours) == list(theirs)
    assert len(ours) == 21
    for name in theirs:
        assert ours[name] == theirs[name], name

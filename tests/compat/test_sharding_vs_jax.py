"""numjax's sharding API and shard_map report what real JAX 0.10.2 reports on 2 CPU devices:
tests/sharding_program.py runs on both (each in its own subprocess: the device count is read
at start-up) and every recorded value, sharding repr and error (class and first line) must be
equal; JAX's examples/spmd_mnist_classifier_fromscratch.py prints the same on both.
Run under .venv-jax."""
import functools
import importlib.util
import json
import os
import re
import subprocess
import sys

import pytest

if importlib.util.find_spec("jax") is None:
    pytest.skip("real JAX not installed (tox -e compat)", allow_module_level=True)

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, TESTS)
import spmd_example  # noqa: E402

PROGRAM = os.path.join(TESTS, "sharding_program.py")


@functools.lru_cache(maxsize=None)
def record(on):
    env = dict(os.environ, NUMJAX_NUM_CPU_DEVICES="2", XLA_FLAGS="--xla_force_host_platform_device_count=2")
    cmd = [sys.executable, "-m", "numjax", PROGRAM] if on == "numjax" else [sys.executable, PROGRAM]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT-JSON ")][-1]
    return json.loads(line[len("RESULT-JSON "):])


def _names():
    with open(PROGRAM) as f:
        return re.findall(r'^rec\("(\w+)"', f.read(), flags=re.M)


@pytest.mark.parametrize("name", _names())
def test_same_result_as_jax(name):
    on_jax, on_numjax = record("jax"), record("numjax")
    assert name in on_jax and name in on_numjax
    assert on_numjax[name] == on_jax[name]


def _numbers_close(a, b, rtol=1e-4):
    pattern = r"-?\d+\.\d*(?:e[-+]?\d+)?"
    if re.sub(pattern, "#", a) != re.sub(pattern, "#", b):
        return False
    return all(abs(float(x) - float(y)) <= rtol * max(abs(float(x)), abs(float(y)), 1e-30)
               for x, y in zip(re.findall(pattern, a), re.findall(pattern, b)))


def test_spmd_example_prints_what_jax_prints(tmp_path):
    text = spmd_example.script_text()
    if text is None:
        pytest.skip(f"JAX's {spmd_example.SCRIPT} not found (set JAX_EXAMPLES_DIR or JAX_SOURCE_MIRROR)")
    outs = {}
    for on in ("jax", "numjax"):
        workdir = tmp_path / on
        workdir.mkdir()
        proc = spmd_example.run(text, str(workdir), on, 2)
        assert proc.returncode == 0, proc.stderr[-4000:]
        outs[on] = spmd_example.masked(proc.stdout)
    assert "EagerFallbackWarning" not in proc.stderr, proc.stderr[-4000:]
    assert len(outs["numjax"]) == len(outs["jax"]) and outs["jax"][0] == "Using 2 devices"
    for a, b in zip(outs["numjax"], outs["jax"]):
        assert _numbers_close(a, b), (a, b)

"""Every script in examples/ runs to completion as a subprocess.

Scripts that take more than ~15 s here (most of it Numba compiling on a cold
cache) are marked slow. Beyond the exit status, a few outputs are checked:
the MLP's loss falls, and the PRNG example prints JAX's key bits.
"""
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py"))
SLOW = {"quickstart.py", "ode_scan.py"}   # ~20-30 s warm, more on a cold Numba cache
# Plain JAX scripts using other libraries: run with `python -m numjax`, skipped where a
# library is not installed (tests/compat/test_ecosystem_vs_jax.py compares them with JAX).
LIBRARY_SCRIPTS = {"flax_mlp.py": ("flax", "optax"), "flax_cnn.py": ("flax", "optax"),
                   "equinox_mlp.py": ("equinox", "optax")}


def _run(script):
    env = dict(os.environ, PYTHONPATH=str(EXAMPLES.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    runner = ["-m", "numjax"] if script in LIBRARY_SCRIPTS else []
    proc = subprocess.run([sys.executable, *runner, str(EXAMPLES / script)], capture_output=True, text=True,
                          timeout=600, cwd=EXAMPLES.parent, env=env)
    assert proc.returncode == 0, \
        f"{script} exited with {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.mark.parametrize("script", [pytest.param(s, marks=pytest.mark.slow) if s in SLOW else s for s in SCRIPTS])
def test_example_runs(script):
    missing = [m for m in LIBRARY_SCRIPTS.get(script, ()) if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{script} needs {', '.join(missing)}, not installed here")
    proc = _run(script)
    assert proc.stdout.strip(), f"{script} printed nothing"
    CHECKS.get(script, lambda out, err: None)(proc.stdout, proc.stderr)


def _check_mlp(out, err):
    losses = [float(v) for v in re.findall(r"^step\s+\d+\s+loss\s+([0-9.]+)$", out, re.M)]
    assert len(losses) >= 5, out
    assert all(b < a for a, b in zip(losses, losses[1:])), f"loss did not fall at every report: {losses}"
    assert losses[-1] < 0.25 * losses[0], losses
    assert "runs eagerly" not in err, err


def _check_random_and_pytrees(out, err):
    # PRNGKey(0) split once: the bits JAX 0.10.2 prints
    assert "split -> [1797259609 2579123966] [ 928981903 3453687069]" in out, out
    assert "treedef: PyTreeDef({'params': [*, (*, None)], 'point': CustomNode(namedtuple[Point], [*, *])})" in out
    assert "  ['point'].x" in out and "unravel(flat) == layer: True" in out


CHECKS = {"mlp_training.py": _check_mlp, "random_and_pytrees.py": _check_random_and_pytrees}


def test_checked_examples_exist():
    assert set(CHECKS) <= set(SCRIPTS) and SLOW <= set(SCRIPTS)

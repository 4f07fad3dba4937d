"""flax.linen and equinox, unmodified, trained on numjax and on real JAX: same losses.

Each example (examples/flax_mlp.py, examples/flax_cnn.py, examples/equinox_mlp.py) is plain
JAX code. It runs twice in subprocesses of this interpreter: ``python example.py`` (real JAX) and
``python -m numjax example.py`` (every ``import jax``, the libraries' included, resolved to
numjax). The printed per-step losses must agree at rtol 1e-4. Run under .venv-jax, which
has JAX, numjax, optax, flax and equinox installed.
"""
import importlib.util
import os
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
_LOSS_LINE = re.compile(r"^step\s+(\d+) loss ([-+0-9.eE]+|nan|inf)$")


def _missing(*modules):
    return [m for m in modules if importlib.util.find_spec(m) is None]


def _losses(args):
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=600,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    # Every jitted step must be compiled: jit falling back to eager would hide a gap.
    assert "EagerFallbackWarning" not in proc.stderr, proc.stderr[-4000:]
    steps = [_LOSS_LINE.match(line) for line in proc.stdout.splitlines()]
    return [float(m.group(2)) for m in steps if m]


@pytest.mark.parametrize("example, libraries", [
    ("flax_mlp.py", ("flax", "optax")),
    ("flax_cnn.py", ("flax", "optax")),
    ("equinox_mlp.py", ("equinox", "optax")),
])
def test_training_losses_match_real_jax(example, libraries):
    missing = _missing("jax", *libraries)
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed in {sys.executable} (use .venv-jax)")
    script = os.path.join(EXAMPLES, example)
    on_jax = _losses([script])
    on_numjax = _losses(["-m", "numjax", script])
    assert len(on_jax) == 20 and len(on_numjax) == len(on_jax), (on_jax, on_numjax)
    np.testing.assert_allclose(on_numjax, on_jax, rtol=1e-4, atol=0)
    assert on_numjax[-1] < on_numjax[0]   # it trained

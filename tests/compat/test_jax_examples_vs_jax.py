"""JAX's own example scripts (jax repository, ``examples/``), unmodified, on numjax and on real
JAX: the same printed output (tests/ecosystem/run_examples.py runs and compares them).

The scripts are not part of numjax: they are read from ``$JAX_EXAMPLES_DIR`` (default
``/work/jax_examples``), and their MNIST downloader is replaced by the synthetic, offline
``tests/ecosystem/datasets.py``. Run under .venv-jax (JAX, numjax and matplotlib installed;
``differentially_private_sgd`` also needs absl-py and dp-accounting). About four minutes.
"""
import importlib.util
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "ecosystem"))
import run_examples  # noqa: E402

_NEEDS = {"differentially_private_sgd": ("absl", "dp_accounting"),
          "differentially_private_sgd_nonprivate": ("absl", "dp_accounting")}


@pytest.mark.parametrize("case", list(run_examples.CASES))
def test_example_prints_what_it_prints_on_real_jax(case):
    examples_dir = run_examples.DEFAULT_DIR
    script = run_examples.CASES[case][0]
    if not os.path.isfile(os.path.join(examples_dir, script)):
        pytest.skip(f"JAX's {script} not found in {examples_dir} (set JAX_EXAMPLES_DIR to the "
                    "examples/ directory of a jax checkout)")
    missing = [m for m in ("jax", "matplotlib", *_NEEDS.get(case, ()))
               if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed in {sys.executable} (use .venv-jax)")
    result = run_examples.run_and_compare(examples_dir, case)
    # Jitted steps must compile: an eager fallback would hide a gap in numjax.
    numjax_stderr = result["numjax"]["stderr"]
    assert "EagerFallbackWarning" not in numjax_stderr, numjax_stderr[-3000:]
    allowed = ("same", "drifts") if case in run_examples.DRIFTING else ("same",)
    assert result["outcome"] in allowed, (result["detail"], numjax_stderr[-3000:])
    assert result["jax"]["stdout"].strip(), "the script printed nothing"

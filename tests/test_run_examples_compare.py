"""The output comparison of tests/ecosystem/run_examples.py (JAX's example scripts on numjax
against real JAX), on made-up outputs: no JAX, no scripts run."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "ecosystem"))
import run_examples  # noqa: E402


def _ran(stdout, returncode=0, stderr=""):
    return {"returncode": returncode, "stdout": stdout, "stderr": stderr}


def test_numbers_compare_at_rtol_and_timings_are_masked():
    assert run_examples.lines_match("Epoch 3 in 0.52 sec", "Epoch 3 in 12.00 sec")
    assert run_examples.lines_match("loss 1.00001", "loss 1.0")
    assert not run_examples.lines_match("loss 1.001", "loss 1.0")
    assert not run_examples.lines_match("Epoch 3 in 0.52 sec", "Epoch 4 in 0.52 sec")
    assert not run_examples.lines_match("accuracy 0.5", "loss 0.5")
    assert run_examples.lines_match("bound nan", "bound nan")
    assert not run_examples.lines_match("bound inf", "bound nan")


def test_outcomes():
    same = run_examples.compare(_ran("a 1.0\nb 2.0\n"), _ran("a 1.0\nb 2.00001\n"))
    assert same["outcome"] == "same"
    differs = run_examples.compare(_ran("a 1.0\nb 2.0\n"), _ran("a 1.0\nb 2.1\n"))
    assert differs["outcome"] == "differs" and "line 2" in differs["detail"]
    assert run_examples.compare(_ran("a\n"), _ran("a\nb\n"))["outcome"] == "differs"
    errors = run_examples.compare(_ran("a\n"), _ran("", 1, "Traceback\nValueError: boom\n"))
    assert errors["outcome"] == "errors" and "ValueError: boom" in errors["detail"]


def test_drift_is_allowed_only_after_the_strict_lines_and_only_loosely():
    jax_out = _ran("x 1.0\nx 2.0\nx nan\n")
    drifting = _ran("x 1.0\nx 2.001\nx inf\n")
    assert run_examples.compare(jax_out, drifting, strict_lines=1)["outcome"] == "drifts"
    assert run_examples.compare(jax_out, drifting, strict_lines=2)["outcome"] == "differs"
    assert run_examples.compare(jax_out, _ran("x 1.0\nx 2.5\nx nan\n"),
                                strict_lines=1)["outcome"] == "differs"

"""JAX's examples/spmd_mnist_classifier_fromscratch.py (make_mesh, NamedSharding,
device_put with a sharding, a donating jit under ``set_mesh``, reshard) run unmodified on
numjax with 2 CPU devices. numjax computes a sharded program as one global program, so the
run must print exactly what the same script prints on 1 device (timings and the device
count aside); tests/compat/test_sharding_vs_jax.py compares it with real JAX's output.
The features themselves are tested in tests/test_sharding_api.py."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spmd_example  # noqa: E402


def test_spmd_example_on_two_devices_matches_one_device(tmp_path):
    text = spmd_example.script_text()
    if text is None:
        pytest.skip(f"JAX's {spmd_example.SCRIPT} not found (set JAX_EXAMPLES_DIR to a jax checkout's "
                    f"examples/ or JAX_SOURCE_MIRROR to a jax git repository)")
    runs = {}
    for n in (1, 2):
        workdir = tmp_path / f"n{n}"
        workdir.mkdir()
        proc = spmd_example.run(text, str(workdir), "numjax", n)
        assert proc.returncode == 0, proc.stderr[-4000:]
        assert "EagerFallbackWarning" not in proc.stderr, proc.stderr[-4000:]
        runs[n] = spmd_example.masked(proc.stdout)
    assert runs[2][0] == "Using 2 devices" and runs[1][0] == "Using 1 devices"
    assert runs[2][1:] == runs[1][1:]
    accuracies = [float(ln.rsplit(" ", 1)[1]) for ln in runs[2] if "accuracy" in ln]
    assert len(accuracies) == 20 and all(0.0 <= a <= 1.0 for a in accuracies)
    assert sum(ln.startswith("Epoch ") for ln in runs[2]) == 10
    assert accuracies[-2] > accuracies[0]   # training learns the synthetic classes


@pytest.mark.parametrize("processes", [2, 4])
def test_spmd_example_under_mpiexec_matches_one_process(tmp_path, processes):
    """N processes of one device each (numjax.distributed joined first; 4 oversubscribe 2
    cores): each process prints what one process with N CPU devices prints."""
    text = spmd_example.script_text()
    if text is None:
        pytest.skip(f"JAX's {spmd_example.SCRIPT} not found")
    if spmd_example.mpiexec() is None:
        pytest.skip("mpi4py/mpiexec not installed: tox -e mpi")
    (tmp_path / "one").mkdir()
    (tmp_path / "mpi").mkdir()
    alone = spmd_example.run(text, str(tmp_path / "one"), "numjax", processes)
    assert alone.returncode == 0, alone.stderr[-4000:]
    together = spmd_example.run(text, str(tmp_path / "mpi"), "numjax", 1, processes=processes, timeout=600)
    assert together.returncode == 0, together.stderr[-4000:]
    expected = spmd_example.masked(alone.stdout)
    assert expected[0] == f"Using {processes} devices"
    for rank_out in spmd_example.per_rank(str(tmp_path / "mpi"), processes):
        assert spmd_example.masked(rank_out) == expected

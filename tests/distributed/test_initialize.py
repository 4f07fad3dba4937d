"""numjax.distributed.initialize: arguments, errors, and that `import numjax` never loads mpi4py."""
import subprocess
import sys

import pytest

from mpirun import needs_mpi, run


def _alone(case):
    r = run("initialize.py", None, env={"INIT_CASE": case})
    assert r.returncode == 0, r
    return r.stdout


def test_import_does_not_load_mpi4py():
    code = "import sys, numjax; numjax.devices(); print(sys.modules.get('mpi4py') is not None)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_without_mpi_launch_initialize_explains_how_to_launch():
    out = _alone("no_args")
    assert out.startswith("RuntimeError: numjax.distributed.initialize(num_processes=None) found no MPI")
    assert "mpiexec -n N python script.py" in out
    out = _alone("two_processes")
    assert out.startswith("RuntimeError: numjax.distributed.initialize(num_processes=2)")
    assert "numjax's transport between processes is MPI" in out


def test_single_process_initialize_and_shutdown():
    out = _alone("single").splitlines()
    assert out == ["initialized True 1 [CpuDevice(id=0)]", "after shutdown False"]


def test_initialize_after_devices_is_an_error_as_in_jax():
    assert _alone("after_devices").startswith("RuntimeError: numjax.distributed.initialize() must be "
                                              "called before any numjax call that starts the backend")


@needs_mpi
@pytest.mark.parametrize("case,expected", [
    ("wrong_count", "ValueError: numjax.distributed.initialize(num_processes=3), but mpiexec started "
                    "2 processes"),
    ("twice", "RuntimeError: distributed.initialize should only be called once."),
    ("uninitialized", "numjax.distributed.initialize() was not called first"),
    ("after_shutdown", "RuntimeError: numjax: this needs the other processes, but numjax.distributed "
                       "is not running here"),
])
def test_under_mpiexec(case, expected):
    r = run("initialize.py", 2, env={"INIT_CASE": case})
    assert r.returncode == 0, r
    assert r.stdout.count(expected) == 2, r          # once per process
    if case == "uninitialized":
        assert r.stdout.count("count 1 1") == 2, r   # each process alone, as in JAX
    else:
        assert "UserWarning" not in r.stderr, r

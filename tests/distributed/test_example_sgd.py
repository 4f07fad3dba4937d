"""examples/data_parallel_sgd.py under `mpiexec -n 2` prints the single-process (2 CPU devices)
loss curve exactly: with one device per process a pmean adds the same two gradients."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

from mpirun import MPIEXEC, needs_mpi

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "data_parallel_sgd.py"


def _losses(cmd, devices):
    env = dict(os.environ, NUMJAX_NUM_CPU_DEVICES=str(devices), NUMJAX_MPI_TIMEOUT="60")
    proc = subprocess.run(cmd + [sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, re.findall(r"^step\s+\d+ loss [0-9.]+$", proc.stdout, re.M)


@needs_mpi
@pytest.mark.mpi_smoke
def test_two_processes_print_the_single_process_loss_curve():
    single_out, single = _losses([], 2)
    multi_out, multi = _losses([str(MPIEXEC), "-n", "2"], 1)
    assert "1 process(es), 2 devices, global batch 64" in single_out
    assert "2 process(es), 2 devices, global batch 64" in multi_out
    assert len(single) == 11
    assert multi == single
    first, last = (float(line.split()[-1]) for line in (single[0], single[-1]))
    assert last < 0.25 * first, single

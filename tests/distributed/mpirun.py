"""Run a script under ``mpiexec -n N`` (or alone, as a reference) from pytest, with a timeout."""
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

SCRIPTS = pathlib.Path(__file__).parent / "scripts"
MPIEXEC = pathlib.Path(sys.executable).parent / "mpiexec"


def mpi_missing():
    """Why the MPI tests cannot run here, or None."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py/mpiexec not installed: tox -e mpi"
    if not (MPIEXEC.exists() or shutil.which("mpiexec")):
        return "mpi4py/mpiexec not installed: tox -e mpi"
    return None


needs_mpi = pytest.mark.skipif(mpi_missing() is not None, reason=str(mpi_missing()))


class Run:
    def __init__(self, returncode, stdout, stderr, seconds, results):
        self.returncode, self.stdout, self.stderr, self.seconds = returncode, stdout, stderr, seconds
        self.results = results     # one dict of arrays per process, in process order

    def __repr__(self):
        return f"Run(rc={self.returncode}, {self.seconds:.1f}s)\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}"

    def concat(self, key):
        """``key`` over all processes' local shards, in global shard order."""
        return np.concatenate([r[key] for r in self.results])


def run(script, processes=None, local_devices=1, timeout=240, env=None, mpiexec_args=()):
    """Run ``scripts/<script>`` under ``mpiexec [mpiexec_args] -n processes`` (None: alone, with
    ``local_devices`` CPU devices) and collect what each process saved."""
    out = tempfile.mkdtemp(prefix="numjax-mpi-")
    full_env = dict(os.environ, NUMJAX_NUM_CPU_DEVICES=str(local_devices), NUMJAX_TEST_OUT=out,
                    NUMJAX_MPI_TIMEOUT="60", PYTHONPATH=str(SCRIPTS), PYTHONFAULTHANDLER="1")
    full_env.update(env or {})
    for var in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"):
        full_env.pop(var, None)
    cmd = [sys.executable, str(SCRIPTS / script)]
    if processes is not None:
        mpiexec = str(MPIEXEC) if MPIEXEC.exists() else shutil.which("mpiexec")
        cmd = [mpiexec, *mpiexec_args, "-n", str(processes)] + cmd
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        pytest.fail(f"{' '.join(cmd)} did not finish in {timeout} s (hang?)\nstdout:\n{stdout}\n"
                    f"stderr:\n{stderr}")
    seconds = time.monotonic() - start
    files = sorted(pathlib.Path(out).glob("process*.npz"), key=lambda f: int(f.stem[7:]))
    results = [dict(np.load(f)) for f in files]
    shutil.rmtree(out, ignore_errors=True)
    return Run(proc.returncode, stdout, stderr, seconds, results)

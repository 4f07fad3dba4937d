"""Shared by tests/test_spmd_example.py and tests/compat/test_sharding_vs_jax.py: find JAX's
examples/spmd_mnist_classifier_fromscratch.py (not part of numjax: read at test time from
``$JAX_EXAMPLES_DIR`` or the jax source mirror) and run it unmodified, next to the synthetic
``datasets`` stand-in of tests/ecosystem/datasets.py, on numjax or on real JAX."""
import os
import re
import shutil
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = "spmd_mnist_classifier_fromscratch.py"
MIRROR = os.environ.get("JAX_SOURCE_MIRROR", "/work/.mirror/jax-ml+jax/repo")


def script_text():
    """The script's text, or None when neither source is present."""
    examples = os.environ.get("JAX_EXAMPLES_DIR", "/work/jax_examples")
    path = os.path.join(examples, SCRIPT)
    if os.path.isfile(path):
        with open(path) as f:
            return f.read()
    if os.path.isdir(MIRROR) and shutil.which("git"):
        proc = subprocess.run(["git", "-C", MIRROR, "show", f"HEAD:examples/{SCRIPT}"], capture_output=True,
                              text=True)
        if proc.returncode == 0:
            return proc.stdout
    return None


# Under mpiexec the script (which does not call jax.distributed.initialize()) runs through this
# launcher, which joins the MPI job first and then runs it with ``import jax`` meaning numjax.
MPI_LAUNCHER = """import runpy, sys
import numjax
numjax.distributed.initialize()
sys.stdout = open(f"rank{numjax.process_index()}.out", "w")   # each rank's lines apart
numjax.install_as_jax()
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def mpiexec():
    """The mpiexec beside this Python (the mpich wheel's), or None; mpi4py must import too."""
    path = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return None
    return path if os.path.exists(path) else shutil.which("mpiexec")


def run(text, workdir, on, n_devices, python=sys.executable, timeout=900, processes=None):
    """Run the script in ``workdir`` on ``on`` ("numjax" or "jax") with ``n_devices`` CPU devices
    (per process: with ``processes``, numjax under ``mpiexec -n processes``, rank r printing
    to ``rank{r}.out`` in ``workdir``)."""
    with open(os.path.join(workdir, SCRIPT), "w") as f:
        f.write(text)
    shutil.copy(os.path.join(HERE, "ecosystem", "datasets.py"), os.path.join(workdir, "datasets.py"))
    env = dict(os.environ, NUMJAX_NUM_CPU_DEVICES=str(n_devices),
               XLA_FLAGS=f"--xla_force_host_platform_device_count={n_devices}", NUMJAX_MPI_TIMEOUT="120")
    cmd = [python, "-m", "numjax", SCRIPT] if on == "numjax" else [python, SCRIPT]
    if processes is not None:
        with open(os.path.join(workdir, "mpi_launcher.py"), "w") as f:
            f.write(MPI_LAUNCHER)
        cmd = [mpiexec(), "-n", str(processes), python, "mpi_launcher.py", SCRIPT]
    proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)   # mpiexec and the ranks it started
        stdout, stderr = proc.communicate()
        stderr += f"\n{' '.join(cmd)} did not finish in {timeout} s"
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def per_rank(workdir, processes):
    """What each rank printed (a run with ``processes``)."""
    out = []
    for r in range(processes):
        with open(os.path.join(workdir, f"rank{r}.out")) as f:
            out.append(f.read())
    return out


def masked(stdout):
    """The printed lines with timings masked."""
    return [re.sub(r"in [0-9.]+ sec", "in <t> sec", ln) for ln in stdout.strip().splitlines()]

"""Shared by the scripts run under mpiexec (and alone, as the single-process reference)."""
import os
import sys

import numpy as np

import numjax as jax


def init():
    """Join the MPI job when launched by mpiexec; alone otherwise (the single-process reference)."""
    from numjax._src import mpi
    if mpi.launched():
        jax.distributed.initialize()
    return jax.process_index(), jax.local_device_count()


def local_part(x):
    """This process's shards of the global pmap input ``x`` (all of it in one process)."""
    p, n = jax.process_index(), jax.local_device_count()
    return x[p * n:(p + 1) * n]


def save(**arrays):
    """Results of this process, for the test to compare (``NUMJAX_TEST_OUT`` dir)."""
    out = os.environ["NUMJAX_TEST_OUT"]
    np.savez(os.path.join(out, f"process{jax.process_index()}.npz"),
             **{k: np.asarray(v) for k, v in arrays.items()})
    sys.stdout.flush()

"""``jax.distributed``: several processes, one computation. numjax's transport is MPI.

Launch the processes with ``mpiexec -n N python script.py`` and call
``numjax.distributed.initialize()`` first thing (as with JAX: before any computation or
device query). Each process then has ``NUMJAX_NUM_CPU_DEVICES`` local CPU devices (default 1);
``numjax.devices()`` lists every process's devices, ``numjax.local_devices()`` this process's,
and ``pmap`` collectives combine the shards of all processes (numjax/interpreters/pmap.py).

Every exchange between processes waits at most ``NUMJAX_MPI_TIMEOUT`` seconds (default 300),
then raises naming what it waited in; an uncaught exception in any process prints
``numjax: process k failed: ...`` and ends the whole job (numjax/_src/mpi.py). Processes sharing
a machine split its cores between their compute threads (``_share_cores``).
"""
import os
import warnings

from ._src import mpi

# joined: initialize() ran (devices keep its layout after shutdown()).
_state = {"initialized": False, "joined": False, "num_processes": 1, "process_id": 0,
          "local_device_count": None}


def _launch_help():
    return ("launch the processes with `mpiexec -n N python script.py` (mpiexec and mpi4py come "
            "with `pip install 'numjax[mpi]'`) and call numjax.distributed.initialize() in each")


def initialize(coordinator_address=None, num_processes=None, process_id=None, local_device_ids=None,
               cluster_detection_method=None, initialization_timeout=300, heartbeat_timeout_seconds=100,
               shutdown_timeout_seconds=300, coordinator_bind_address=None, slice_index=None,
               partition_index=None):
    """Join the MPI job this process was launched in. Without arguments under ``mpiexec`` the
    process id and count are MPI's rank and size; given arguments must agree with them.
    ``coordinator_address`` and the timeouts are accepted for JAX compatibility (MPI does the
    rendezvous; ``NUMJAX_MPI_TIMEOUT`` bounds every collective)."""
    from . import api
    if api._DEVICES:
        raise RuntimeError("numjax.distributed.initialize() must be called before any numjax call "
                           "that starts the backend: any computation, and also numjax.devices(), "
                           "numjax.device_put() and others")
    if _state["initialized"]:
        raise RuntimeError("distributed.initialize should only be called once.")
    _check_ints(num_processes, process_id)
    if mpi.launched() and cluster_detection_method != "deactivate":
        num_processes, process_id = _join_mpi(num_processes, process_id)
    elif num_processes is None or num_processes > 1:
        raise RuntimeError(
            f"numjax.distributed.initialize(num_processes={num_processes}) found no MPI launch (none "
            "of PMI_SIZE, OMPI_COMM_WORLD_SIZE, PMIX_SIZE is set): numjax's transport between "
            f"processes is MPI, so {_launch_help()}. For a single process pass num_processes=1, "
            "process_id=0, or do not call initialize()")
    elif process_id not in (None, 0):
        raise ValueError(f"process_id={process_id} with num_processes=1: the only process id is 0")
    local = _local_device_count(local_device_ids)
    _state.update(initialized=True, joined=True, num_processes=num_processes,
                  process_id=process_id or 0, local_device_count=local)
    if num_processes > 1:
        _check_same_local_count(local)
        _share_cores(mpi.processes_on_this_machine())


def _share_cores(neighbours):
    """Give each of the ``neighbours`` processes on this machine its share of the cores for
    numjax's kernel threads and BLAS's (unless NUMJAX_NUM_THREADS / NUMJAX_BLAS_THREADS say
    otherwise): threads of several processes spinning on the same cores slow a data-parallel
    step tens of times (benchmarks/mpi_allreduce.py)."""
    from .config import config
    if neighbours < 2:
        return
    share = max(1, mpi._cores() // neighbours)
    for var, name in (("NUMJAX_NUM_THREADS", "numjax_num_threads"), ("NUMJAX_BLAS_THREADS", "numjax_blas_threads")):
        if var not in os.environ:
            config.update(name, share)


def _check_ints(num_processes, process_id):
    if process_id is not None and (not isinstance(process_id, int) or process_id < 0):
        raise TypeError(f"process_id must be a nonnegative int. Got process_id={process_id!r} "
                        f"of type {type(process_id)}.")
    if num_processes is not None and (not isinstance(num_processes, int) or num_processes < 1):
        raise TypeError(f"num_processes must be a positive int. Got num_processes={num_processes!r} "
                        f"of type {type(num_processes)}.")
    if None not in (process_id, num_processes) and process_id >= num_processes:
        raise ValueError("process_id and num_processes must be nonnegative, with process_id < "
                         f"num_processes. Got process_id={process_id}, num_processes={num_processes}.")


def _join_mpi(num_processes, process_id):
    comm = mpi.start()
    size, rank = comm.Get_size(), comm.Get_rank()
    if num_processes is not None and num_processes != size:
        raise ValueError(f"numjax.distributed.initialize(num_processes={num_processes}), but mpiexec "
                         f"started {size} processes: pass num_processes={size} or leave it out")
    if process_id is not None and process_id != rank:
        raise ValueError(f"numjax.distributed.initialize(process_id={process_id}), but this process "
                         f"is MPI rank {rank}: process ids are MPI ranks; leave process_id out")
    return size, rank


def _local_device_count(local_device_ids):
    from .api import _device_count_from_env
    available = _device_count_from_env()
    if local_device_ids is None and os.environ.get("JAX_LOCAL_DEVICE_IDS"):
        local_device_ids = [int(i) for i in os.environ["JAX_LOCAL_DEVICE_IDS"].split(",")]
    if local_device_ids is None:
        return available
    ids = [local_device_ids] if isinstance(local_device_ids, int) else list(local_device_ids)
    bad = [i for i in ids if not 0 <= i < available] or len(set(ids)) != len(ids)
    if bad or not ids:
        raise ValueError(f"local_device_ids={local_device_ids!r} must be distinct ids in "
                         f"range({available}) (NUMJAX_NUM_CPU_DEVICES={available} local CPU devices)")
    return len(ids)


def _check_same_local_count(local):
    import numpy as np
    counts = mpi.allgather(np.asarray(local, np.int64)).tolist()
    if len(set(counts)) > 1:
        shutdown()
        _state.update(num_processes=1, process_id=0)
        raise ValueError("every process must have the same number of local devices (set the same "
                         f"NUMJAX_NUM_CPU_DEVICES in each), but processes have {counts}")


def is_initialized():
    """True once ``initialize()`` ran (and ``shutdown()`` did not)."""
    return _state["initialized"]


def shutdown():
    """Leave the distributed system (waits for every process). Does nothing if not running.
    The devices keep their ids and processes; collectives across processes then raise."""
    if not _state["initialized"]:
        return
    if _state["num_processes"] > 1:
        mpi.stop()
    _state["initialized"] = False


def process_count():
    return _state["num_processes"]


def process_index():
    return _state["process_id"]


def local_device_count():
    """Devices per process: ``initialize(local_device_ids=...)``'s, else NUMJAX_NUM_CPU_DEVICES."""
    from .api import _device_count_from_env
    return _state["local_device_count"] or _device_count_from_env()


_warned = []


def warn_if_uninitialized_launch():
    """Under ``mpiexec -n N`` (N > 1) without initialize(), every process computes alone, as in
    JAX; say so once, since that is rarely what was meant."""
    size = mpi.launch_size()
    if _state["joined"] or not size or size < 2 or _warned:
        return
    _warned.append(True)
    warnings.warn(f"numjax: this process was launched by mpiexec with {size} processes, but "
                  "numjax.distributed.initialize() was not called first, so it runs alone "
                  "(process_count() == 1, pmap collectives stay within this process). Call "
                  "numjax.distributed.initialize() before any other numjax call.", stacklevel=3)

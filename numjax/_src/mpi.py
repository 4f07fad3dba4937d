"""numjax's transport between processes: MPI, through mpi4py, on numpy buffers.

mpi4py is imported only by ``start()`` (called by ``numjax.distributed.initialize``), never by
``import numjax``. Until then ``comm()`` is None and numjax runs as one process.

Every collective is posted non-blocking and then polled against a deadline
(``NUMJAX_MPI_TIMEOUT`` seconds, default 300): a process that died or took another code path
makes the others fail with a message naming the operation they waited in, instead of hanging.
Once started, an uncaught exception in any process prints ``numjax: process k failed: ...`` and
aborts the whole MPI job (``MPI_Abort``), so the other processes end at once too.
"""
import functools
import math
import os
import sys
import time

import numpy as np

# comm: COMM_WORLD, for data; checks: a duplicate, so a check between processes never matches
# a data collective of a process that skipped the check.
# yield: what to do between polls (see _wait).
_state = {"comm": None, "MPI": None, "checks": None, "yield": os.sched_yield}

# Environment variables set by MPI launchers (mpich's hydra, Open MPI, PMIx, Slurm's srun --mpi).
_SIZE_VARS = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS")
_RANK_VARS = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MPI_LOCALRANKID")


def launch_size():
    """The number of processes an MPI launcher started (from its environment), or None."""
    for var in _SIZE_VARS:
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return None


def launch_rank():
    for var in _RANK_VARS:
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return None


def launched():
    """True when this process was started by ``mpiexec``/``mpirun`` (or srun) with MPI."""
    return launch_size() is not None


def comm():
    """``MPI.COMM_WORLD`` once ``start()`` ran (numjax.distributed.initialize), else None."""
    return _state["comm"]


def _world():
    """COMM_WORLD for a collective; a clear error when MPI is not (or no longer) in use."""
    c = _state["comm"]
    if c is None:
        raise RuntimeError("numjax: this needs the other processes, but numjax.distributed is not "
                           "running here (never initialized, or shut down): call "
                           "numjax.distributed.initialize() under mpiexec first")
    return c


def rank():
    c = comm()
    return 0 if c is None else c.Get_rank()


def size():
    c = comm()
    return 1 if c is None else c.Get_size()


def timeout():
    return float(os.environ.get("NUMJAX_MPI_TIMEOUT", "300"))


def start():
    """Initialize MPI (importing mpi4py) and install the abort-on-failure hook; returns COMM_WORLD."""
    if _state["comm"] is not None:
        return _state["comm"]
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError("numjax.distributed uses MPI to talk between processes, but mpi4py is not "
                           "installed: pip install 'numjax[mpi]' (mpi4py and mpich), then launch with "
                           "`mpiexec -n N python script.py`") from e
    _state["MPI"], _state["comm"] = MPI, MPI.COMM_WORLD
    _state["checks"] = MPI.COMM_WORLD.Dup()
    if processes_on_this_machine() <= _cores():
        _state["yield"] = _no_op      # a core each: spin, as a blocking MPI call would
    _install_abort_hook()
    return _state["comm"]


def _no_op():
    pass


def _cores():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def processes_on_this_machine():
    """How many of the job's processes share this machine (MPI's shared-memory split)."""
    MPI = _state["MPI"]
    node = comm().Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return node.Get_size()
    finally:
        node.Free()


def stop():
    """Forget the communicator (``numjax.distributed.shutdown``); MPI itself finalizes at exit."""
    if _state["comm"] is not None:
        barrier("numjax.distributed.shutdown")
    _state["comm"] = None


def _install_abort_hook():
    previous = sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        c = _state["comm"]
        if c is None:
            return
        me = c.Get_rank()
        sys.stderr.write(f"numjax: process {me} failed: {kind.__name__}: {value}\n"
                         f"numjax: aborting all {c.Get_size()} processes (MPI_Abort from process {me})\n")
        sys.stderr.flush()
        c.Abort(1)
    sys.excepthook = hook


class CollectiveTimeoutError(RuntimeError):
    """A collective did not complete before ``NUMJAX_MPI_TIMEOUT``: another process died or
    skipped it."""


_SPIN_SECONDS = 0.5


def _wait(request, what):
    """Poll ``request`` until done. MPI makes progress only while polled, so it polls without
    pause at first (yielding the CPU between polls when more processes than cores share this
    machine, so that the ones waited for can run), reading the clock every _POLLS_PER_CLOCK
    polls; after _SPIN_SECONDS it sleeps between polls, so a process left waiting on a failed
    one costs no CPU until the deadline. ``what`` (a string, or a function making it: only
    needed on a timeout, so callers on a hot path pass a function) names the wait."""
    test = request.Test
    if test():             # often done at once (tiny messages, or the others arrived first)
        return
    yield_cpu = _state["yield"]
    start = time.monotonic()
    deadline, spin_until = start + timeout(), start + _SPIN_SECONDS
    while True:
        for _ in range(_POLLS_PER_CLOCK):
            if test():
                return
            yield_cpu()
        now = time.monotonic()
        if now > deadline:
            c, what = comm(), _text(what)
            raise CollectiveTimeoutError(
                f"numjax: process {c.Get_rank()} of {c.Get_size()} waited {timeout():g} s in {what} "
                "and not every process joined it: one failed, exited, or is running a different "
                "computation (set NUMJAX_MPI_TIMEOUT to wait longer)")
        if now > spin_until:
            time.sleep(1e-3)


_POLLS_PER_CLOCK = 32


def _contiguous(x):
    """``x`` as a C-contiguous array, keeping 0-d shapes (np.ascontiguousarray makes them 1-d)."""
    return np.asarray(x, order="C")


def _describe(op, x):
    return f"{op} of {x.dtype}{list(x.shape)}"


# MPI reductions have no float16/bfloat16 (ml_dtypes) type nor MAX/MIN on bool: those go
# through a wider numpy type and come back.
def _reduction_view(x):
    if x.dtype == np.bool_:
        return x.astype(np.uint8), np.bool_
    if x.dtype.kind == "V" or (x.dtype.kind == "f" and x.dtype.itemsize < 4):
        return x.astype(np.float32), x.dtype
    return x, None


_OPS = {"sum": "SUM", "max": "MAX", "min": "MIN", "prod": "PROD"}

# Result buffers of large collectives are reused once nothing refers to them any more: a fresh
# buffer's first write page-faults every page, which took longer than the exchange itself
# (16 MiB on this 2-core machine: 8.5 ms fresh against 4.3 ms reused; benchmarks/mpi_allreduce.py).
# A buffer is free when only the pool refers to it: every numpy view, memoryview or Array of it
# holds a reference (views refer to the array that owns the memory).
_POOL_MIN_BYTES, _POOL_KEYS, _POOL_PER_KEY = 1 << 18, 16, 2
_pool = {}          # (shape, dtype) -> [arrays], most recently used keys last


def _refs_when_free():
    free = [np.empty(1)]
    for arr in free:             # the same references as in _output's loop
        return sys.getrefcount(arr)


_FREE_REFS = _refs_when_free()


def _output(shape, dtype):
    """An uninitialized array for a collective's result: a pooled one nobody uses, if any."""
    dtype = np.dtype(dtype)
    if math.prod(shape) * dtype.itemsize < _POOL_MIN_BYTES:
        return np.empty(shape, dtype)
    key = (tuple(shape), dtype)
    free = _pool.pop(key, [])
    _pool[key] = free
    for arr in free:
        if sys.getrefcount(arr) == _FREE_REFS:
            return arr
    arr = np.empty(shape, dtype)
    if len(free) < _POOL_PER_KEY:
        free.append(arr)
    if len(_pool) > _POOL_KEYS:
        del _pool[next(iter(_pool))]
    return arr


def allreduce(x, op="sum", what=None, on=None):
    """Elementwise ``op`` ("sum", "max", "min", "prod") of ``x`` over all processes (``what``:
    the operation to name if it times out)."""
    x = _contiguous(x)
    send, back = _reduction_view(x)
    out = _output(send.shape, send.dtype)
    request = (on or _world()).Iallreduce(send, out, op=getattr(_state["MPI"], _OPS[op]))
    _wait(request, what or (lambda: "allreduce " + _describe(op, x)))
    return out.astype(back) if back is not None else out


def _bytes(x):
    x = _contiguous(x)
    return x.reshape(-1).view(np.uint8) if x.size else np.empty(0, np.uint8)


def allgather(x, what=None, on=None):
    """Every process's ``x`` stacked along a new leading axis (process order)."""
    x = _contiguous(x)
    out = _output((size(),) + x.shape, x.dtype)
    request = (on or _world()).Iallgather(_bytes(x), _bytes_of(out))
    _wait(request, what or (lambda: "allgather " + _describe("gather", x)))
    return out


def _bytes_of(out):
    """A writable byte view of the freshly made contiguous array ``out``."""
    return out.reshape(-1).view(np.uint8) if out.size else np.empty(0, np.uint8)


def bcast(x, root=0):
    """Process ``root``'s ``x`` on every process (all must pass the same shape and dtype)."""
    buf = np.array(x, copy=True, order="C")
    _wait(_world().Ibcast(_bytes_of(buf), root=root),
          lambda: f"bcast from process {root} " + _describe("bcast", buf))
    return buf


def barrier(what="barrier"):
    _wait(_world().Ibarrier(), what)


def sendrecv(x, dest, source, tag=0):
    """Send ``x`` to process ``dest`` (None: send nothing) and receive an array like ``x`` from
    ``source`` (None: receive nothing; returns None)."""
    x = _contiguous(x)
    received = exchange([(x, dest, tag)] if dest is not None else [],
                        [(x, source, tag)] if source is not None else [])
    return received[0] if received else None


def exchange(sends, recvs):
    """Point-to-point messages, all posted at once then awaited (no ordering deadlock):
    ``sends`` are (array, dest, tag); ``recvs`` are (like, source, tag), each receiving an
    array of ``like``'s shape and dtype. Returns the received arrays in ``recvs`` order."""
    c, reqs, outs = _world(), [], []
    for like, source, tag in recvs:
        out = np.empty(np.shape(like), np.asarray(like).dtype)
        reqs.append((c.Irecv(_bytes_of(out), source=source, tag=tag), f"receive from process {source}"))
        outs.append(out)
    kept = [_contiguous(x) for x, _, _ in sends]     # alive until the sends complete
    for x, (_, dest, tag) in zip(kept, sends):
        reqs.append((c.Isend(_bytes(x), dest=dest, tag=tag), f"send to process {dest}"))
    for r, what in reqs:
        _wait(r, "ppermute/sendrecv: " + what)
    return outs


def alltoall(x):
    """``x`` has leading axis ``size()``: block j goes to process j; returns the blocks received,
    stacked in sender order."""
    x = _contiguous(x)
    out = np.empty_like(x)
    _wait(_world().Ialltoall(_bytes(x), _bytes_of(out)), lambda: "alltoall " + _describe("alltoall", x))
    return out


def reduce_scatter(x, op="sum"):
    """``x`` has leading axis ``size()``: returns block ``rank()`` of the elementwise ``op`` over
    all processes."""
    x = _contiguous(x)
    send, back = _reduction_view(x)
    out = np.empty(send.shape[1:], send.dtype)
    MPI = _state["MPI"]
    _wait(_world().Ireduce_scatter_block(send, out, op=getattr(MPI, _OPS[op])),
          lambda: "reduce_scatter " + _describe(op, x))
    return out.astype(back) if back is not None else out


@functools.lru_cache(maxsize=256)
def _digest(description):
    import hashlib
    return np.frombuffer(hashlib.blake2b(description.encode(), digest_size=16).digest(), np.uint8)


class Agreement:
    """``check_agree`` started now (one 16-byte allgather of the description's hash, on the
    checks communicator) and finished by ``result()``, so that its latency overlaps whatever
    the caller does meanwhile. ``what`` and ``where`` may be functions making the strings:
    they are needed only on a mismatch or a timeout."""

    def __init__(self, description, what, where):
        _world()
        self.description, self.what, self.where = description, what, where
        self.digest = _digest(description)
        self.everyone = np.empty((size(), 16), np.uint8)
        self.request = _state["checks"].Iallgather(self.digest, self.everyone)
        self.finished = False

    def result(self):
        """Wait for the check; ValueError(``what`` and each process's description) on a mismatch."""
        if self.finished:
            return
        self.finished = True
        _wait(self.request, self.where)
        if self.everyone.tobytes() == self.digest.tobytes() * len(self.everyone):
            return
        checks, where = _state["checks"], _text(self.where)
        raw = np.frombuffer(self.description.encode(), np.uint8)
        longest = int(allreduce(np.asarray(len(raw), np.int64), "max", where, on=checks))
        texts = allgather(np.pad(raw, (0, longest - len(raw))), where, on=checks)
        each = "; ".join(f"process {k}: {bytes(t).rstrip(bytes(1)).decode()}" for k, t in enumerate(texts))
        raise ValueError(f"{_text(self.what)}, but they differ: {each}")


def _text(message):
    return message() if callable(message) else message


def check_agree(description, what, where="a check that the processes agree"):
    """Raise ValueError(``what`` + each process's ``description``) unless every process passed
    the same string (``where`` names the wait if it times out)."""
    Agreement(description, what, where).result()

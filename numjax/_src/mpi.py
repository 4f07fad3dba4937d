"""numjax's transport between processes: MPI, through mpi4py, on numpy buffers.

mpi4py is imported only by ``start()`` (called by ``numjax.distributed.initialize``), never by
``import numjax``. Until then ``comm()`` is None and numjax runs as one process.

Every collective is posted non-blocking and then polled against a deadline
(``NUMJAX_MPI_TIMEOUT`` seconds, default 300): a process that died or took another code path
makes the others fail with a message naming the operation they waited in, instead of hanging;
a process on this machine that is no longer running is named as soon as it is noticed (see
``ProcessFailedError`` below). Once started, an uncaught exception in any process prints
``numjax: process k failed: ...`` and aborts the whole MPI job (``MPI_Abort``), so the other
processes end at once too.
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
_state = {"comm": None, "MPI": None, "checks": None, "yield": os.sched_yield, "peers": None,
          "leaving": None}

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
    _install_failure_signal()     # first: a process may fail while this one still starts
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
    _state["peers"] = _peer_table()
    _install_abort_hook()
    return _state["comm"]


# ---------------------------------------------------------------- noticing a process that died
# MPI itself does not say which process of a job died. numjax keeps every process's (pid, host)
# and, while a wait is slow, checks whether the processes on this machine still run: one that
# exited, crashed or was killed is then named at once (in a message, as ProcessFailedError)
# instead of the wait running into its timeout. mpich's mpiexec (hydra) by default kills the
# whole job as soon as one process dies abnormally (it prints that process's pid and exit
# status; the others get SIGKILL and cannot print anything); with
# ``mpiexec -disable-auto-cleanup`` a process that exits with an error makes it signal the
# survivors with SIGUSR1 instead, and numjax names the dead process then (one killed by a signal
# still makes it SIGKILL the others at once).

class ProcessFailedError(RuntimeError):
    """Another process of the job is no longer running."""


def _host_id():
    import hashlib
    import socket
    digest = hashlib.blake2b(socket.gethostname().encode(), digest_size=8).digest()
    return int(np.frombuffer(digest, np.int64)[0])


def _peer_table():
    """(process, [pid, host id, index among this machine's processes]) for every process of the
    job (one allgather at start), and a byte per process of this machine in memory they share:
    set by a process whose Python program is ending (its MPI_Finalize may then wait on the
    others, so its pid still runs)."""
    MPI = _state["MPI"]
    node = _state["checks"].Split_type(MPI.COMM_TYPE_SHARED)
    mine = np.asarray([os.getpid(), _host_id(), node.Get_rank()], np.int64)
    everyone = np.empty((size(), 3), np.int64)
    _wait(_state["checks"].Iallgather(mine, everyone), "numjax.distributed.initialize (exchanging pids)")
    window = MPI.Win.Allocate_shared(node.Get_size() if node.Get_rank() == 0 else 0, 1, comm=node)
    memory, _ = window.Shared_query(0)
    _state["leaving"] = np.frombuffer(memory, np.uint8)
    _state["leaving"][node.Get_rank()] = 0
    _state["window"] = window         # kept alive with the memory
    import atexit
    atexit.register(_mark_leaving)    # runs before mpi4py's MPI_Finalize (registered earlier)
    return everyone


def _mark_leaving():
    if _state["leaving"] is not None and _state["peers"] is not None:
        _state["leaving"][_state["peers"][rank()][2]] = 1


def _running(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:     # an exited child of mpiexec's proxy not yet reaped is a zombie: not running
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return True


def dead_processes():
    """The processes on this machine that no longer run: [(process, pid)]."""
    peers = _state["peers"]
    if peers is None or comm() is None:
        return []
    me, host, leaving = rank(), _host_id(), _state["leaving"]
    return [(k, int(pid)) for k, (pid, h, local) in enumerate(peers)
            if k != me and h == host and (leaving[local] or not _running(int(pid)))]


def _describe_dead(dead):
    return ", ".join(f"process {k} (pid {pid})" for k, pid in dead)


def _failed_error(dead, what):
    c = comm()
    return ProcessFailedError(
        f"numjax: process {c.Get_rank()} of {c.Get_size()} stopped waiting in {_text(what)}: "
        f"{_describe_dead(dead)} left the job (its program ended, crashed or was killed) before "
        "joining it")


def _install_failure_signal():
    """Under ``mpiexec -disable-auto-cleanup`` mpich signals SIGUSR1 to the survivors of a
    failed process: name it (unless the program handles SIGUSR1 itself)."""
    import signal
    import threading
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGUSR1) is not signal.SIG_DFL:
        return

    def on_failure(signum, frame):
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)      # mpiexec may signal again
        dead = []
        for _ in range(100):          # the launcher may signal just before the process is gone
            dead = dead_processes()
            if dead:
                break
            time.sleep(0.01)
        me = f"process {rank()} of {size()}" if comm() is not None else f"process {launch_rank()}"
        who = (_describe_dead(dead) if dead else "a process on another machine" if _state["peers"] is not None
               else "another process")
        message = f"numjax: {me}: mpiexec reports a failed process of the job: {who} left the job " \
                  "(crashed or was killed)"
        os.write(2, (message + "\n").encode())     # at once: the job may be ended any moment
        raise ProcessFailedError(message)
    signal.signal(signal.SIGUSR1, on_failure)


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
        _let_launcher_read_output()
        c.Abort(1)
    sys.excepthook = hook


def _let_launcher_read_output(limit=2.0):
    """Wait (at most ``limit`` s) until the launcher has read what this process wrote to its
    stdout/stderr pipes: MPI_Abort makes mpich's proxy kill the job at once, dropping unread
    output, and with it the message saying why the job ended."""
    try:
        import fcntl
        import termios
    except ImportError:
        return
    import array
    import stat
    sys.stdout.flush()
    deadline, unread = time.monotonic() + limit, array.array("i", [0])
    for fd in (1, 2):
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                continue              # a terminal or a file keeps what was written
            fcntl.ioctl(fd, termios.FIONREAD, unread)     # bytes still in the pipe (Linux)
            while unread[0] and time.monotonic() < deadline:
                time.sleep(0.005)
                fcntl.ioctl(fd, termios.FIONREAD, unread)
        except OSError:
            continue
    time.sleep(0.05)                  # read, then forwarded by the proxy to mpiexec


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
    next_check, dead_since = spin_until, None
    while True:
        for _ in range(_POLLS_PER_CLOCK):
            if test():
                return
            yield_cpu()
        now = time.monotonic()
        if now > deadline:
            raise _timeout_error(what)
        if now > spin_until:
            time.sleep(1e-3)
        if now > next_check:
            # a process that sent its part and then exited still completes this wait: a grace
            # period passes before its absence is an error
            next_check = now + _CHECK_SECONDS
            if dead_since is None and dead_processes():
                dead_since = now
            elif dead_since is not None and now > dead_since + _GRACE_SECONDS:
                raise _failed_error(dead_processes(), what)


_CHECK_SECONDS, _GRACE_SECONDS = 0.25, 1.0


def _timeout_error(what):
    c, what, dead = comm(), _text(what), dead_processes()
    if dead:
        state = f"{_describe_dead(dead)} left the job"
    elif _state["peers"] is not None and len({int(row[1]) for row in _state["peers"]}) > 1:
        state = "the processes on this machine all still run; one on another machine may have failed"
    else:
        state = "every process still runs: one may be running a different computation, or be stuck"
    return CollectiveTimeoutError(
        f"numjax: process {c.Get_rank()} of {c.Get_size()} waited {timeout():g} s in {what} "
        "and not every process joined it: one failed, exited, or is running a different "
        f"computation (set NUMJAX_MPI_TIMEOUT to wait longer); {state}")


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


def alltoall(x, what=None):
    """``x`` has leading axis ``size()``: block j goes to process j; returns the blocks received,
    stacked in sender order (one MPI Alltoall of the raw bytes)."""
    x = _contiguous(x)
    if x.ndim == 0 or x.shape[0] != size():
        raise ValueError(f"mpi.alltoall needs a leading axis of one block per process ({size()}), "
                         f"got shape {x.shape}")
    out = _output(x.shape, x.dtype)
    _wait(_world().Ialltoall(_bytes(x), _bytes_of(out)), what or (lambda: "alltoall " + _describe("alltoall", x)))
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

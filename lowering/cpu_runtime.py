"""Run-time support of LLVM-backend drivers: chunked parallel kernel calls.

A kernel whose outer loop is ``prange`` takes the bounds [lo, hi) of that loop; large ones
run in chunks on several threads, two ways, neither compiling any kernel twice (the Numba
backend needed a ``prange`` twin of every program for this):

* natively: ``kernel(-(chunks << 16 | n), hi, ...)`` asks the kernel's entry point to run
  [0, hi) in ``chunks`` pieces on n threads of the *runner*, OpenMP's ``GOMP_parallel``
  (libgomp, loaded on first use).  Its worker threads run the chunks without the GIL and spin
  a while between calls, so a call costs a few µs.  Each thread claims the next piece when
  it is done with one (``_CHUNKS_PER_THREAD`` pieces per thread), so a thread that starts
  late -- woken from its sleep, or its core busy with another process -- leaves its share to
  the others instead of holding up the call.  Entry points find the runner in a cell
  (``runner_cell_address``) bound into every program object when it is loaded.  One call
  runs on the runner at a time: libgomp gives every calling thread a pool of its own, so
  Python threads calling at once (pmap's, a user's) would each add ``numjax_num_threads - 1``
  workers; a call that finds the runner busy runs its loop itself, as with the team below.
* otherwise (no libgomp, or ``NUMJAX_NATIVE_PARALLEL=0``; a forked child of a process that
  used libgomp; kernels run as Python in debug mode): a team of persistent Python threads,
  each waiting on a lock of its own.  A call hands each worker a chunk, runs the first chunk
  itself and joins on the workers' "done" locks.  Entry points release the GIL for large
  calls, so the chunks run at once, but every hand-over of the GIL wakes a sleeping thread:
  tens of µs per call.  The team serves one call at a time; a call that finds it busy
  (another Python thread is running a chunked kernel) runs all its chunks itself.
"""
import _thread
import ctypes
import os
import sys
import threading

from numjax.config import config

_lock = threading.Lock()          # guards the team, the thread count and the runner


# ---------------------------------------------------------------- threads

_thread_count = (object(), 1)     # (numjax_num_threads it was computed for, threads)


def _threads():
    """Threads for a parallel call; ``sched_getaffinity`` is asked once per setting."""
    global _thread_count
    key, count = _thread_count
    if key != config.numjax_num_threads:
        key = config.numjax_num_threads
        if key:
            count = key
        elif hasattr(os, "sched_getaffinity"):
            count = max(1, len(os.sched_getaffinity(0)))
        else:
            count = os.cpu_count() or 1
        _thread_count = key, count
    return count


# ---------------------------------------------------------------- the native runner

_runner_cell = ctypes.c_void_p(None)    # read by entry points; null: no native runner
_runner_state = None                    # None: not tried yet; True: installed; False: none
_runner_used = False
_runner_busy = _thread.allocate_lock()  # held while a call runs on the runner
_LIBGOMP = "libgomp.so.1" if sys.platform.startswith("linux") else "libgomp.dylib"


def runner_cell_address():
    return ctypes.addressof(_runner_cell)


def _install_runner():
    """Points the cell at libgomp's ``GOMP_parallel``; False where there is none."""
    global _runner_state
    with _lock:
        if _runner_state is None:
            address = None
            if os.environ.get("NUMJAX_NATIVE_PARALLEL", "1") != "0":
                # libgomp reads this when it loads.  Its default spin (about 300000 rounds after
                # each parallel call) keeps a worker busy for milliseconds, taking a core from the
                # driver's own numpy and BLAS work: on a shared 2-core machine a 1M-element
                # selu ran 12x slower than JAX with it and 1.07x with 1000 rounds.
                os.environ.setdefault("GOMP_SPINCOUNT", "1000")
                try:
                    address = ctypes.cast(ctypes.CDLL(_LIBGOMP).GOMP_parallel, ctypes.c_void_p).value
                except (OSError, AttributeError):
                    address = None
            _runner_cell.value = address
            _runner_state = bool(address)
    return _runner_state


# ---------------------------------------------------------------- the Python team

class _Worker:
    """One worker thread: waits on ``go``, runs ``task``, releases ``done``."""
    __slots__ = ("go", "done", "task", "error")

    def __init__(self, index):
        self.go, self.done = _thread.allocate_lock(), _thread.allocate_lock()
        self.go.acquire()
        self.done.acquire()
        self.task = self.error = None
        threading.Thread(target=self._run, name=f"numjax-{index}", daemon=True).start()

    def _run(self):
        go, done = self.go, self.done
        while True:
            go.acquire()
            task = self.task
            if task is None:           # the team was replaced
                return
            self.task = None
            kernel, lo, hi, args = task
            try:
                kernel(lo, hi, *args)
            except BaseException as err:   # noqa: BLE001  (re-raised in the calling thread)
                self.error = err
            done.release()

    def stop(self):
        self.task = None
        self.go.release()


class _Team:
    def __init__(self, size):
        self.size = size
        self.workers = [_Worker(i) for i in range(1, size)]
        self.busy = _thread.allocate_lock()

    def stop(self):
        for w in self.workers:
            w.stop()


_team = None


def _get_team(size):
    global _team
    old = None
    with _lock:
        if _team is None or _team.size != size:
            old, _team = _team, _Team(size)
        team = _team
    if old is not None:
        with old.busy:                   # let a call in flight finish with the old team
            old.stop()
    return team


def _run_on_team(team, kernel, n_outer, chunks, args):
    try:
        step = -(-n_outer // chunks)
        used = []
        for worker, lo in zip(team.workers, range(step, n_outer, step)):
            worker.task = (kernel, lo, min(lo + step, n_outer), args)
            worker.go.release()
            used.append(worker)
        try:
            kernel(0, step, *args)          # this thread takes the first chunk
        finally:
            error = _join(team, used)
        if error is not None:
            raise error
    finally:
        team.busy.release()


def _join(team, used):
    """Waits for the workers' chunks; the first worker exception, if any."""
    error = None
    try:
        for worker in used:
            worker.done.acquire()
            if worker.error is not None:
                error, worker.error = error or worker.error, None
    except BaseException:
        # Interrupted (KeyboardInterrupt) while chunks still run: this team's locks are out
        # of step now.  Its workers stop after their chunk; the next call makes a new team.
        global _team
        with _lock:
            if _team is team:
                _team = None
        team.stop()
        raise
    return error


def _after_fork_in_child():
    """In a forked child no worker thread exists: the next call makes a new team, and
    libgomp, which would wait for its parent's threads, is not called again."""
    global _team, _lock, _runner_state, _runner_busy
    _team, _lock, _runner_busy = None, threading.Lock(), _thread.allocate_lock()
    if _runner_used:
        _runner_cell.value, _runner_state = None, False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


# ---------------------------------------------------------------- the drivers' entry

_BUILTIN = type(len)
CHUNKS_SHIFT = 16       # kernel_entry's encoding of a parallel call's pieces and threads


# With one piece per thread a call took as long as its slowest thread: on a shared 2-core
# machine, run times of the same program swung by 2x between processes.
_CHUNKS_PER_THREAD = 4


def run_chunked(kernel, n_outer, size, args):
    """``kernel(lo, hi, *args)`` over [0, n_outer), split across threads when ``size`` (the
    elements the loop nest touches) passes ``numjax_parallel_threshold``."""
    global _runner_used
    threshold = config.numjax_parallel_threshold
    if threshold <= 0 or size < threshold or n_outer < 2:
        kernel(0, n_outer, *args)
        return
    chunks = min(_threads(), n_outer)
    if chunks == 1:
        kernel(0, n_outer, *args)
    elif type(kernel) is _BUILTIN and (_runner_state or _runner_state is None and _install_runner()):
        _runner_used = True
        busy = _runner_busy
        if not busy.acquire(False):
            kernel(0, n_outer, *args)         # another thread's call has numjax's threads
            return
        try:
            pieces = min(chunks * _CHUNKS_PER_THREAD, n_outer)
            kernel(-(pieces << CHUNKS_SHIFT | chunks), n_outer, *args)   # run natively
        finally:
            busy.release()
    else:
        team = _team if _team is not None and _team.size == _thread_count[1] else _get_team(_threads())
        if team.busy.acquire(False):
            _run_on_team(team, kernel, n_outer, min(chunks, team.size), args)
        else:
            kernel(0, n_outer, *args)

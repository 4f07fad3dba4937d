"""numjax's pool of large buffers: the outputs and intermediates of compiled programs.

A driver allocates every buffer of every call.  Through ``np.empty`` a large one comes from
glibc's ``mmap`` (above its threshold, which tops out at 32 MB) and is handed back to the
kernel when freed, so each call page-faults its buffers in again: a row softmax of 4096x1024
float32 took 5.5 ms that way against 2.7 ms with the memory kept, and a selu over 10M float32
(40 MB out) faulted ~570 times per call (2 MB pages, each zeroed) and took 33 to 46 ms on a
loaded 2-core machine against 11 to 17 ms from the pool, with no fault (interleaved in one
process).  Telling glibc to keep freed memory
(``mallopt``) would change the whole process's allocator, so numjax keeps its own blocks:

* ``empty(shape, dtype)`` hands out an array over a *block* (raw memory, 64-byte aligned, its
  size rounded up to a size class) when the array has ``THRESHOLD`` bytes or more; smaller
  ones are plain ``np.empty``.
* The array's ``base`` is a *lease*, a small object holding the block.  numpy's views, slices
  and reshapes of the array keep the lease alive (through their ``base`` chain), so the block
  returns to the pool only when the last array over it dies: a block never backs two live
  results.
* Idle blocks are capped at ``numjax_buffer_pool_bytes`` (``NUMJAX_BUFFER_POOL_BYTES``; 0
  turns the pool off); past the cap the oldest idle blocks are freed.

Thread safety: a lease's finalizer may run in any thread, at any allocation (the garbage
collector), even inside this module's own critical section; it never waits for the lock but
leaves its block on ``_returned`` (appends are atomic) when the lock is taken, and the next
take or give-back files it.  A forked child starts with an empty pool and a fresh lock.
"""
import collections
import os
import threading

import numpy as np

from numjax.config import config

THRESHOLD = 1 << 18          # bytes: smaller buffers are plain np.empty
_ALIGN = 64                  # a cache line: vector loads of a block never straddle two
_PAGE = 4096


class _Block:
    """Raw memory of ``size`` bytes at ``address`` (kept alive by ``raw``)."""
    __slots__ = ("raw", "address", "size")

    def __init__(self, size):
        self.raw = np.empty(size + _ALIGN, np.uint8)
        start = self.raw.ctypes.data
        self.address = start + (-start) % _ALIGN
        self.size = size


class _Lease:
    """The ``base`` of a pooled array: gives its block back when the last view of it dies."""
    __slots__ = ("block", "__array_interface__")

    def __del__(self):
        try:
            _give_back(self.block)
        except Exception:      # noqa: BLE001  (interpreter shutdown: the module is gone)
            pass


class _State:
    def __init__(self):
        self.lock = threading.Lock()
        self.free = {}                         # size class -> [idle blocks], newest last
        self.idle = collections.OrderedDict()  # id(block) -> block, oldest first
        self.idle_bytes = 0
        self.returned = collections.deque()    # given back while the lock was taken
        self.hits = self.misses = 0


_state = _State()


def size_class(nbytes):
    """``nbytes`` rounded up to a multiple of 1/8 of its power of two (and of a page), so
    nearby sizes share blocks at a cost of at most 12.5% more memory."""
    step = max(_PAGE, 1 << max(0, nbytes.bit_length() - 4))
    return -(-nbytes // step) * step


def empty(shape, dtype):
    """An uninitialized C-contiguous array, like ``np.empty(shape, dtype)``; from the pool when
    it holds ``THRESHOLD`` bytes or more and the pool is on."""
    dt = np.dtype(dtype)
    nbytes = dt.itemsize
    for d in shape:
        nbytes *= d
    if nbytes < THRESHOLD or config.numjax_buffer_pool_bytes <= 0:
        return np.empty(shape, dt)
    lease = _Lease()
    lease.block = block = _take(size_class(nbytes))
    lease.__array_interface__ = {"shape": tuple(shape), "typestr": dt.str,
                                 "data": (block.address, False), "version": 3}
    return np.asarray(lease)


def _take(size):
    state = _state
    with state.lock:
        _file_returned(state)
        blocks = state.free.get(size)
        if blocks:
            block = blocks.pop()
            del state.idle[id(block)]
            state.idle_bytes -= size
            state.hits += 1
            return block
        state.misses += 1
    return _Block(size)


def _give_back(block):
    state = _state
    if not state.lock.acquire(False):
        state.returned.append(block)   # filed by the lock's holder, or the next call
        return
    try:
        _file(state, block)
        _file_returned(state)
    finally:
        state.lock.release()


def _file_returned(state):
    while state.returned:
        _file(state, state.returned.popleft())


def _file(state, block):
    """An idle block into the pool (lock held); the oldest go once over the cap."""
    cap = config.numjax_buffer_pool_bytes
    if block.size > cap:
        _evict(state, cap)
        return
    state.free.setdefault(block.size, []).append(block)
    state.idle[id(block)] = block
    state.idle_bytes += block.size
    _evict(state, cap)


def _evict(state, cap):
    while state.idle_bytes > max(cap, 0):
        _, old = state.idle.popitem(last=False)
        state.free[old.size].remove(old)
        state.idle_bytes -= old.size


def trim():
    """Frees every idle block (blocks in use return to the pool later as usual)."""
    with _state.lock:
        _file_returned(_state)
        _evict(_state, 0)


def stats():
    """``{"idle_bytes", "idle_blocks", "hits", "misses"}`` of this process's pool."""
    with _state.lock:
        _file_returned(_state)
        return {"idle_bytes": _state.idle_bytes, "idle_blocks": len(_state.idle),
                "hits": _state.hits, "misses": _state.misses}


def _after_fork_in_child():
    """The parent's lock may have been held by another thread at the fork: start afresh.
    Leases alive in the child give their (copied) blocks to the child's new pool."""
    global _state
    _state = _State()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

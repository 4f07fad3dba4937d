"""Run-time support of LLVM-backend drivers: chunked parallel kernel calls.

A kernel whose outer loop is ``prange`` takes the bounds [lo, hi) of that loop; large ones
run in one chunk per thread on a shared pool. ctypes releases the GIL for the duration of
each call, so the chunks really run at once, and no kernel is compiled twice (the Numba
backend needed a ``prange`` twin of every program for this).
"""
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from numjax.config import config

_pool = None
_pool_lock = threading.Lock()


def _threads():
    if config.numjax_num_threads:
        return config.numjax_num_threads
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _get_pool(n):
    global _pool
    with _pool_lock:
        if _pool is None or _pool._max_workers != n:
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="numjax")
        return _pool


def run_chunked(kernel, n_outer, size, args):
    """``kernel(lo, hi, *args)`` over [0, n_outer), split across threads when ``size`` (the
    elements the loop nest touches) passes ``numjax_parallel_threshold``."""
    threshold = config.numjax_parallel_threshold
    threads = _threads() if threshold > 0 and size >= threshold and n_outer > 1 else 1
    if threads == 1:
        kernel(0, n_outer, *args)
        return
    chunks = min(threads, n_outer)
    step = -(-n_outer // chunks)
    pool = _get_pool(threads)
    futures = [pool.submit(kernel, lo, min(lo + step, n_outer), *args)
               for lo in range(step, n_outer, step)]
    kernel(0, min(step, n_outer), *args)     # this thread takes the first chunk
    for f in futures:
        f.result()

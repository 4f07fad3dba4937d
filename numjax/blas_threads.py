"""The thread count of numpy's BLAS while numjax computes with it.

numjax's matmuls and convolutions are BLAS calls (numpy's OpenBLAS): op by op in the eager
implementations of ``lax``, and inside compiled programs, which also run their own kernels in
chunks on numjax's thread team (``lowering/blas_threads.py`` says which programs call BLAS).
OpenBLAS's workers keep spinning for a while (OpenBLAS's default: about 0.1 s) after every
threaded call, and numjax's workers spin after every chunked kernel; each pool's spinning
steals the cores the other's next call needs.  Measured on a shared, loaded 2-core machine
(medians of the benchmarks/run.py programs, interleaved with JAX in one process): the CNN
gradient step took 117 ms (88 to 631) with OpenBLAS's threads and 22 to 24 ms without them
(JAX: 11 to 12 ms), the MLP step 220 ms against 4.8 ms (JAX: 4.8 ms), even a lone 1024^2 matmul
63 ms against 17 ms (JAX: 21 ms).  Eager matmuls between compiled steps wake the same
spinning workers: JAX's ``mnist_classifier.py`` (a jitted step, then an eager accuracy) took
50 ms per two steps and 120 ms per accuracy with them, 23 ms and 11 ms with BLAS held to one
thread (JAX: 22 ms and 12 ms).  So while numjax calls BLAS, BLAS can be given
``numjax_blas_threads`` threads (``NUMJAX_BLAS_THREADS``), its own setting put back
afterwards, so numpy code outside numjax is unaffected.

The default is 0, BLAS's own threads: on an idle machine the measurements above reverse once
numjax's workers stop spinning early (``GOMP_SPINCOUNT``, lowering/cpu_runtime.py): a 1024^2
matmul takes 6.5 ms with both cores against 12.7 ms on one (JAX 6.6 ms), the MLP step 2.2 ms
against 3.3 ms, a jitted step plus an eager matmul 5.2 ms against 8.5 ms (fourth session,
benchmarks/RESULTS.md).  ``NUMJAX_BLAS_THREADS=1`` is the setting for a loaded machine.

``NUMJAX_NUM_THREADS`` (``numjax_num_threads``), numjax's thread budget, caps BLAS too: with it
set and ``numjax_blas_threads`` at 0, BLAS runs on at most that many threads while numjax
calls it (fewer where BLAS's own setting is lower).

OpenBLAS's setter is process-wide, not per thread: programs running at once in several Python
threads (pmap) share one limit, set by the first to enter and restored by the last to leave.
Every OpenBLAS loaded when the first such call runs is limited (numpy's for matmuls; scipy's,
for LAPACK, when scipy was imported by then).  Where BLAS is not an OpenBLAS exporting the
setter (Accelerate, MKL), nothing changes.
"""
import ctypes
import glob
import os
import threading

from .config import config

# Setter and getter names: numpy wheels' scipy-openblas (64-bit ints, prefixed), then a system
# OpenBLAS.
_SYMBOLS = (("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
            ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
            ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
            ("openblas_set_num_threads", "openblas_get_num_threads"))

_functions = None          # [(set, get)], one pair per OpenBLAS loaded (numpy's, scipy's)
_lock = threading.Lock()
_depth = 0                 # programs inside a limit now
_saved = []                # [(set, own thread count)] to restore when the last one leaves


def _loaded_openblas_paths():
    """Paths of the OpenBLAS libraries this process has loaded (numpy loads its own privately,
    so its symbols are not in the global namespace); numpy's wheel directory as a fallback."""
    paths = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1] if "/" in line else ""
                if "openblas" in os.path.basename(path).lower() and path not in paths:
                    paths.append(path)
    except OSError:
        pass
    import numpy
    wheel_libs = os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs")
    seen, unique = set(), []
    for path in paths + sorted(glob.glob(os.path.join(wheel_libs, "*openblas*"))):
        if os.path.realpath(path) not in seen:
            seen.add(os.path.realpath(path))
            unique.append(path)
    return unique


def _find_functions():
    import numpy  # noqa: F401  (loads numpy's BLAS before we look for it)
    found = []
    for path in _loaded_openblas_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for set_name, get_name in _SYMBOLS:
            setter, getter = getattr(lib, set_name, None), getattr(lib, get_name, None)
            if setter is not None and getter is not None:
                setter.argtypes, setter.restype = [ctypes.c_int], None
                getter.argtypes, getter.restype = [], ctypes.c_int
                found.append((setter, getter))
                break
    return found


def _wanted(own):
    """BLAS's thread count while numjax calls it, given BLAS's own: ``numjax_blas_threads``,
    else at most ``numjax_num_threads``, else its own."""
    if config.numjax_blas_threads > 0:
        return config.numjax_blas_threads
    if config.numjax_num_threads > 0:
        return min(own, config.numjax_num_threads)
    return own


def _limits():
    return config.numjax_blas_threads > 0 or config.numjax_num_threads > 0


def enter():
    """Limits BLAS as ``_wanted`` says; pair every call with ``leave()``."""
    global _functions, _depth, _saved
    with _lock:
        if _depth == 0:
            if _functions is None:
                _functions = _find_functions()
            _saved = []
            for setter, getter in (_functions if _limits() else ()):
                own = getter()
                threads = _wanted(own)
                if own != threads:
                    setter(threads)
                    _saved.append((setter, own))
        _depth += 1


def leave():
    global _depth
    with _lock:
        _depth -= 1
        if _depth == 0:
            for setter, own in _saved:
                setter(own)


def call_limited(fn, *args):
    """``fn(*args)`` (an eager BLAS operation) with BLAS limited as ``enter`` says."""
    if not _limits():     # the default: BLAS keeps its threads, no lock taken
        return fn(*args)
    enter()
    try:
        return fn(*args)
    finally:
        leave()


def limited(fn):
    """``fn`` (a compiled program) running with BLAS limited as ``enter`` says."""
    def run_with_blas_limit(*args):
        return call_limited(fn, *args)
    run_with_blas_limit.__wrapped__ = fn
    return run_with_blas_limit

"""Compiling kernel source for the CUDA backend, and what a launch needs.

Every step of ``backend.py`` (and of the rule modules in ``step_rules.py``) writes its kernels
as Python source; ``compile_kernel(name, source)`` executes that source once per process in a
namespace holding numpy, math, numba, cuda and ``device_math``'s ``dm_*``/``sh_*`` device
functions, and returns the numba-cuda dispatcher.  On a GPU each kernel dispatcher also gets
the disk cache of ``diskcache.py``: a signature compiled by an earlier process (same source,
device compute capability and toolchain) is loaded, not compiled.  The simulator has no PTX
to store, so there the disk cache is off.  ``launch`` starts a 1-d grid-stride kernel on the
executable's stream.  Importing this module imports numba-cuda.
"""
import threading

import numpy as np

import numba
from numba import cuda

from . import device_math, diskcache

_compiled = {}       # (compute capability, kernel name: a hash of its source) -> dispatcher
_source_keys = {}    # id(dispatcher) -> its disk-cache source key (for kernels calling it)
_namespace = None
_lock = threading.RLock()


def is_simulator():
    return bool(numba.config.ENABLE_CUDASIM)


def block_size():
    """Threads per block: 256 on a GPU; 32 on the simulator (one Python thread each)."""
    return 32 if is_simulator() else 256


def max_blocks():
    return 64 if is_simulator() else 4096


def compute_capability():
    """The current device's (major, minor), None on the simulator: part of the cache key."""
    if is_simulator():
        return None
    return tuple(cuda.get_current_device().compute_capability)


def device_function(fn):
    """``fn`` as a device function, inlined into its callers on a GPU (the simulator takes
    no inlining option)."""
    if is_simulator():
        return cuda.jit(device=True)(fn)
    return cuda.jit(device=True, forceinline=True)(fn)


def _device_namespace():
    """What kernel source sees: numpy (its scalar types), math, numba, cuda, and the
    ``dm_*``/``sh_*`` device functions of ``device_math``."""
    global _namespace
    if _namespace is None:
        import math
        namespace = {"np": np, "math": math, "numba": numba, "cuda": cuda,
                     "device_function": device_function}
        namespace.update(device_math.namespace(device_function, is_simulator()))
        _namespace = namespace
    return _namespace


def compile_kernel(name, source, extra=None):
    """The dispatcher of kernel ``name`` defined by ``source`` (compiled once per process and
    compute capability, and on a GPU kept in the disk cache); ``extra`` adds names (other
    kernels or device functions made here) the source calls."""
    cc = compute_capability()
    with _lock:
        fn = _compiled.get((cc, name))
        if fn is None:
            namespace = dict(_device_namespace())
            namespace.update(extra or {})
            exec(compile(source, f"<numjax cuda kernel {name}>", "exec"), namespace)
            fn = namespace[name]
            if diskcache.enabled(is_simulator()):
                _use_disk_cache(fn, name, source, extra or {}, cc)
            _compiled[(cc, name)] = fn
    return fn


def _use_disk_cache(fn, name, source, extra, cc):
    """Key ``fn`` by its source and what it calls, and give it the disk cache if it is a
    kernel.  A callee not made by ``compile_kernel`` cannot be keyed: then no disk cache."""
    extra_keys = [(n, _source_keys.get(id(obj))) for n, obj in extra.items()]
    if any(key is None for _, key in extra_keys):
        return
    key = _source_keys[id(fn)] = diskcache.source_key(source, extra_keys)
    diskcache.install(fn, name, key, cc)


def grid_blocks(n, block):
    """Blocks for a grid-stride loop over ``n`` points: enough to cover them, at most
    ``max_blocks()`` (each thread then handles several points)."""
    return max(1, min(-(-n // block), max_blocks()))


def launch(kernel, n, stream, *args):
    """Launch the 1-d grid-stride ``kernel`` over ``n`` points on ``stream``; no launch when
    ``n`` is 0."""
    if n:
        block = block_size()
        kernel[grid_blocks(n, block), block, stream](*args)

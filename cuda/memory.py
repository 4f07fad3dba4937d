"""Device memory of the CUDA backend: a caching allocator, the stream, transfers, statistics.

Memory is taken from the device on demand (nothing is preallocated, so
``XLA_PYTHON_CLIENT_PREALLOCATE=false`` needs no action).  Each request is rounded up to a
*size class* (powers of two from 512 bytes to 1 MiB, then whole MiB) and served by a
``Segment``, one device allocation of that class.  A ``Block`` is a live hold on a segment:
arrays and executables keep Blocks, and when the last reference to a Block goes the segment
returns to the pool of its class, to serve the next request of that class without a
``cudaMalloc``.  Every launch and copy of a device goes on one stream (``stream()``), so a
segment freed while launches that read it are still queued is only written by launches
queued after them.

With ``XLA_PYTHON_CLIENT_ALLOCATOR=platform`` (as in JAX) nothing is cached: a segment is
freed as soon as its Block goes.

The *limit* on the bytes taken from the device (in use plus cached) is
``NUMJAX_CUDA_MEMORY_LIMIT`` (bytes) if set, else ``XLA_PYTHON_CLIENT_MEM_FRACTION`` (default
0.75, JAX's) of the device's total memory.  A request past it first returns the cached
segments to the device, releases the buffers of executables not running now and collects
garbage, then tries once more; if it still does not fit, or if ``cudaMalloc`` itself fails
after the same clean-up, it raises ``numjax.errors.JaxRuntimeError`` with JAX's
``RESOURCE_EXHAUSTED: Out of memory while trying to allocate N bytes`` message and the
numbers.  ``stats()`` reports what tests and users need (bytes in use, cached, peak, the
limit, allocation and transfer counts).

Nothing here imports numba-cuda until device memory is first used.
"""
import collections
import gc
import os
import threading
import weakref

import numpy as np

_MIN_CLASS = 512
_SMALL_LIMIT = 1 << 20
_DEFAULT_FRACTION = 0.75


def size_class(nbytes):
    """The size a request of ``nbytes`` is served with: a power of two up to 1 MiB (at least
    512 bytes), then a whole number of MiB."""
    if nbytes <= _MIN_CLASS:
        return _MIN_CLASS
    if nbytes <= _SMALL_LIMIT:
        return 1 << (nbytes - 1).bit_length()
    return -(-nbytes // _SMALL_LIMIT) * _SMALL_LIMIT


def simulator():
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def device_pointer(array):
    """The device address of a numba device array's first byte (on the simulator: the
    address of the host memory that stands in for it)."""
    if simulator():
        return array._ary.__array_interface__["data"][0]
    return array.device_ctypes_pointer.value or 0


class Segment:
    """One device allocation of ``size`` bytes at ``pointer``; its typed views are cached
    (an executable asks for the same shapes call after call)."""
    __slots__ = ("base", "size", "pointer", "views")

    def __init__(self, base, size):
        self.base, self.size = base, size
        self.pointer = device_pointer(base)
        self.views = {}

    def view(self, shape, dtype):
        key = (shape, dtype)
        array = self.views.get(key)
        if array is None:
            nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            array = self.base[:nbytes].view(dtype).reshape(shape)
            if len(self.views) >= 8:
                self.views.clear()
            self.views[key] = array
        return array

    def holds(self, pointer):
        return self.pointer <= pointer < self.pointer + self.size


class Block:
    """A hold on a Segment: the segment goes back to its allocator's pool when the Block is
    garbage (``__del__`` only queues it; the allocator takes queued segments back under its
    lock, so a collection that runs inside the allocator cannot deadlock it)."""
    __slots__ = ("segment", "_returned", "__weakref__")

    def __init__(self, segment, returned):
        self.segment, self._returned = segment, returned

    def view(self, shape, dtype):
        """The block's first bytes as a C-contiguous device array of ``shape`` and ``dtype``."""
        return self.segment.view(tuple(shape), np.dtype(dtype))

    def holds(self, pointer):
        return self.segment.holds(pointer)

    def __del__(self):
        self._returned.append(self.segment)


class Allocator:
    """The caching allocator of one device (numjax uses device 0, numba-cuda's current one)."""

    def __init__(self, device_id=0):
        self.device_id = device_id
        self._lock = threading.RLock()
        self._pool = collections.defaultdict(list)     # size class -> free Segments
        self._returned = collections.deque()           # Segments of garbage Blocks
        self.limit_override = None                     # bytes; tests set it (set_limit)
        self.bytes_in_use = self.bytes_cached = self.peak_bytes_in_use = 0
        self.num_allocs = self.num_reuses = self.num_frees = 0
        self.largest_alloc_size = 0

    # -- taking and giving back
    def allocate(self, nbytes):
        """A Block of at least ``nbytes`` bytes, from the pool when one of its class is free."""
        size = size_class(nbytes)
        with self._lock:
            self._take_back()
            free = self._pool.get(size)
            if free:
                segment = free.pop()
                self.bytes_cached -= size
                self.num_reuses += 1
            else:
                segment = self._new_segment(nbytes, size)
            self.bytes_in_use += size
            self.peak_bytes_in_use = max(self.peak_bytes_in_use, self.bytes_in_use)
            self.largest_alloc_size = max(self.largest_alloc_size, nbytes)
        return Block(segment, self._returned)

    def _take_back(self):
        returned = self._returned
        keep = os.environ.get("XLA_PYTHON_CLIENT_ALLOCATOR", "").lower() != "platform"
        while returned:
            segment = returned.popleft()
            self.bytes_in_use -= segment.size
            if keep:
                self._pool[segment.size].append(segment)
                self.bytes_cached += segment.size
            else:        # JAX's "platform" allocator: free at once, cache nothing
                self.num_frees += 1

    def empty_cache(self):
        """Give every cached segment back to the device."""
        with self._lock:
            self._take_back()
            freed = sum(len(v) for v in self._pool.values())
            self._pool.clear()
            self.bytes_cached = 0
            self.num_frees += freed
        _flush_numba_deallocations()

    # -- the limit
    def limit(self):
        """The most bytes this allocator takes from the device (in use plus cached)."""
        if self.limit_override is not None:
            return self.limit_override
        text = os.environ.get("NUMJAX_CUDA_MEMORY_LIMIT")
        if text:
            return int(text)
        return int(self.fraction() * _device_total()) if _device_total() != float("inf") else None

    @staticmethod
    def fraction():
        return float(os.environ.get("XLA_PYTHON_CLIENT_MEM_FRACTION", _DEFAULT_FRACTION))

    def _new_segment(self, nbytes, size):
        limit = self.limit()
        if limit is not None and self.bytes_in_use + self.bytes_cached + size > limit:
            self._relieve_pressure()
            if self.bytes_in_use + size > limit:
                raise out_of_memory(nbytes, self, limit)
        try:
            base = _device_alloc(size)
        except MemoryError:
            self._relieve_pressure()
            try:
                base = _device_alloc(size)
            except MemoryError:
                raise out_of_memory(nbytes, self, limit, device_full=True) from None
        self.num_allocs += 1
        return Segment(base, size)

    def _relieve_pressure(self):
        """Free what can be freed: garbage arrays, the buffers of idle executables, the cache."""
        gc.collect()
        for buffers in list(_all_buffers):
            buffers.release_if_idle()
        self._take_back()
        self.empty_cache()

    def set_limit(self, nbytes):
        """Override the limit (bytes; None: back to the environment's); for tests."""
        self.limit_override = nbytes

    def stats(self):
        with self._lock:
            self._take_back()
            return {"bytes_in_use": self.bytes_in_use, "bytes_cached": self.bytes_cached,
                    "bytes_reserved": self.bytes_in_use + self.bytes_cached,
                    "peak_bytes_in_use": self.peak_bytes_in_use, "bytes_limit": self.limit(),
                    "largest_alloc_size": self.largest_alloc_size, "num_allocs": self.num_allocs,
                    "num_reuses": self.num_reuses, "num_frees": self.num_frees,
                    "num_host_to_device": transfers.host_to_device,
                    "num_device_to_host": transfers.device_to_host}


def out_of_memory(nbytes, allocator, limit, device_full=False):
    from numjax.errors import JaxRuntimeError
    where = f"CudaDevice(id={allocator.device_id})"
    if device_full:
        free, total = _device_memory_info()
        cause = (f"the device itself is out of memory ({free} of {total} bytes free, other "
                 f"processes included)")
    else:
        how = ("NUMJAX_CUDA_MEMORY_LIMIT" if allocator.limit_override is None
               and os.environ.get("NUMJAX_CUDA_MEMORY_LIMIT") else
               "set for this process" if allocator.limit_override is not None else
               f"XLA_PYTHON_CLIENT_MEM_FRACTION={allocator.fraction()} of the device's "
               f"{_device_total()} bytes")
        cause = f"the limit is {limit} bytes ({how})"
    return JaxRuntimeError(
        f"RESOURCE_EXHAUSTED: Out of memory while trying to allocate {nbytes} bytes on {where}: "
        f"{allocator.bytes_in_use} bytes are in use by live arrays and compiled programs' "
        f"buffers, and {cause}. Delete arrays that are no longer needed, lower the batch size, "
        "or raise the limit (XLA_PYTHON_CLIENT_MEM_FRACTION, a fraction of the device's memory, "
        "or NUMJAX_CUDA_MEMORY_LIMIT in bytes).")


# ---------------------------------------------------------------- the device, through numba-cuda

def _device_alloc(size):
    """A 1-d uint8 device array of ``size`` bytes; MemoryError when the device is full."""
    from numba import cuda
    try:
        return cuda.device_array(size, np.uint8)
    except MemoryError:
        raise
    except Exception as err:    # numba-cuda's CudaAPIError
        if "OUT_OF_MEMORY" in str(err) or getattr(err, "code", None) == 2:
            raise MemoryError(str(err)) from err
        raise


def _device_memory_info():
    from numba import cuda
    free, total = cuda.current_context().get_memory_info()
    return free, total


_total = []


def _device_total():
    if not _total:
        _total.append(_device_memory_info()[1])
    return _total[0]


def _flush_numba_deallocations():
    """numba-cuda frees device memory in batches; free what it has queued now."""
    if simulator():
        return
    from numba import cuda
    cuda.current_context().deallocations.clear()


# ---------------------------------------------------------------- the stream, events, transfers

_streams = {}
_streams_lock = threading.Lock()


def stream(device_id=0):
    """The one stream every launch and copy of the device goes on (ordering call 2's kernels
    after call 1's, whose outputs they read)."""
    s = _streams.get(device_id)
    if s is None:
        with _streams_lock:
            s = _streams.get(device_id)
            if s is None:
                from numba import cuda
                s = _streams[device_id] = cuda.stream()
    return s


def record_event(on_stream):
    """An event marking everything queued on ``on_stream`` so far."""
    from numba import cuda
    event = cuda.event() if simulator() else cuda.event(timing=False)
    event.record(on_stream)
    return event


class _Transfers:
    """Counts of host<->device copies (tests check that device-resident loops make none)."""

    def __init__(self):
        self.host_to_device = self.device_to_host = 0


transfers = _Transfers()


def copy_to_device(dst, host, on_stream):
    """``host`` (a C-contiguous ndarray of ``dst``'s shape) into the device array ``dst``."""
    transfers.host_to_device += 1
    if host.size:
        dst.copy_to_device(host, stream=on_stream)


def copy_to_host(src, on_stream):
    """The device array ``src`` as a new ndarray, once everything queued before is done."""
    transfers.device_to_host += 1
    host = src.copy_to_host(stream=on_stream)
    on_stream.synchronize()
    return host


# ---------------------------------------------------------------- the device's allocators

_allocators = {}
_all_buffers = weakref.WeakSet()   # every executable's Buffers (released under pressure)


def allocator(device_id=0):
    a = _allocators.get(device_id)
    if a is None:
        a = _allocators.setdefault(device_id, Allocator(device_id))
    return a


def allocate(nbytes, device_id=0):
    return allocator(device_id).allocate(nbytes)


def register_buffers(buffers):
    _all_buffers.add(buffers)


def stats(device_id=0):
    """The allocator's numbers: bytes in use (live arrays and executables' buffers), cached
    (free segments kept for reuse), reserved (both), their peak, the limit, how many device
    allocations and pool reuses there were, and host<->device copy counts."""
    return allocator(device_id).stats()


def empty_cache(device_id=0):
    """Give the cached (free) segments back to the device."""
    allocator(device_id).empty_cache()

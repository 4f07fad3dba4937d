"""``CudaArray``: a ``numjax.Array`` whose value lives in device memory.

The outputs of a CUDA program stay on the device: each is a CudaArray holding its numba
device array (rank-0 values as shape ``(1,)``; ``shape`` still reports ``()``), the ``Block``
of device memory it lives in (``memory.py``; the memory returns to the allocator's pool when
the last array using it goes) and the event recorded after the launches that compute it.
A later program on the same device reads the device array directly; nothing is copied.

Everything else numjax does with an Array reads its ``_value``: here a property that waits
for the producing launches, copies the value to the host once and keeps that copy, so
printing, ``np.asarray``, ``float()``, eager operations and programs of the CPU backend take
CudaArrays unchanged.  A CudaArray can also start from a host value (``device_put`` of host
data, results computed on the host): it is copied to the device when a program first needs
it there.

This module imports numba-cuda only when device memory is first touched.
"""
import numpy as np

from numjax import core
from numjax.array import Array

from . import memory


class _DeviceFlags:
    """What ``numjax.dispatch``'s call signature reads as ``flags.c_contiguous``: device
    operands get their own signatures, apart from host arrays (whose specialized CPU entry
    points take only ndarrays)."""
    c_contiguous = "device"


class CudaArray(Array):
    """An Array on a CUDA device (see the module docstring)."""
    __slots__ = ("_dev", "_block", "_device", "_host", "_shape", "_dtype", "_ready")
    _on_device = True
    flags = _DeviceFlags()

    def __init__(self, value, weak_type=False, device=None):
        """A CudaArray of the host value ``value`` (copied to the device when first needed)."""
        value = np.asarray(value)
        self._host, self._dev, self._block, self._ready = value, None, None, None
        self._shape, self._dtype = value.shape, value.dtype
        self.weak_type = weak_type
        self._device = device if device is not None else _default_cuda_device()

    @classmethod
    def on_device(cls, dev, block, shape, dtype, weak_type, device, ready):
        """The CudaArray of the device array ``dev`` (in ``block``; ``ready``: the event after
        the launches that write it, or None)."""
        self = cls.__new__(cls)
        self._dev, self._block, self._ready, self._host = dev, block, ready, None
        self._shape, self._dtype = shape, dtype
        self.weak_type, self._device = weak_type, device
        return self

    # -- the value
    @property
    def _value(self):
        host = self._host
        if host is None:
            self._ready = None    # the copy waits for every launch before it on the stream
            host = memory.copy_to_host(self._dev, memory.stream(self._device.id))
            host = self._host = host.reshape(self._shape)
        return host

    @property
    def _jit_operand(self):
        """What a jitted call passes on for this argument: the array itself (its backend
        reads the device array, or ``_value`` on the CPU)."""
        return self

    def device_value(self):
        """The device array (rank 0 as shape ``(1,)``), copied from the host first if needed."""
        dev = self._dev
        if dev is None:
            dev = self._upload()
        return dev

    def _upload(self):
        host = np.ascontiguousarray(self._host).reshape(self._shape or (1,))
        stream = memory.stream(self._device.id)
        if host.size == 0:
            from numba import cuda
            self._dev = cuda.device_array(host.shape, host.dtype)
            return self._dev
        block = memory.allocate(host.nbytes, self._device.id)
        dev = block.view(host.shape, host.dtype)
        memory.copy_to_device(dev, host, stream)
        self._block, self._dev = block, dev
        return dev

    def block_until_ready(self):
        ready = self._ready
        if ready is not None:
            ready.synchronize()
            self._ready = None
        return self

    def is_ready(self):
        """Whether the launches computing the array are done (the simulator runs each launch
        to its end before returning)."""
        return self._ready is None or memory.simulator() or self._ready.query()

    def same_buffer(self, weak_type=None):
        """A new CudaArray on the same device memory (no copy)."""
        other = CudaArray.on_device(self._dev, self._block, self._shape, self._dtype,
                                    self.weak_type if weak_type is None else weak_type,
                                    self._device, self._ready)
        other._host = self._host
        return other

    def copy(self):
        if self._dev is None or self._dev.size == 0:
            return CudaArray(self._host.copy(), self.weak_type, self._device)
        stream = memory.stream(self._device.id)
        block = memory.allocate(self._dev.size * self._dtype.itemsize, self._device.id)
        dev = block.view(self._dev.shape, self._dtype)
        dev.copy_to_device(self._dev, stream=stream)
        return CudaArray.on_device(dev, block, self._shape, self._dtype, self.weak_type,
                                   self._device, memory.record_event(stream))

    # -- metadata, without touching the value
    @property
    def aval(self):
        return core.ShapedArray(self._shape, self._dtype, self.weak_type)

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    ndim = property(lambda self: len(self._shape))
    size = property(lambda self: int(np.prod(self._shape, dtype=np.int64)))
    itemsize = property(lambda self: self._dtype.itemsize)
    nbytes = property(lambda self: self.size * self._dtype.itemsize)

    def devices(self):
        return {self._device}

    @property
    def device(self):
        return self._device

    @property
    def sharding(self):
        from numjax.api import SingleDeviceSharding
        return SingleDeviceSharding(self._device)


def _default_cuda_device():
    from numjax import dispatch
    return dispatch.cuda_devices()[0]


def put(value, weak_type, device):
    """``value`` (a host value or an Array) as a CudaArray on ``device``, copied there now."""
    if isinstance(value, CudaArray) and value._device == device:
        return value.same_buffer()
    host = np.asarray(getattr(value, "_value", value))
    out = CudaArray(host, weak_type, device)
    out.device_value()
    return out

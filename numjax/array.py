"""``numjax.Array``: an immutable CPU array wrapping a numpy buffer, plus its weak-type bit."""
import abc

import numpy as np

from . import core, dtypes


class Array:
    # ``_sharding``: a NamedSharding recorded by device_put/jit (numjax/sharding.py); left
    # unset (not even initialised, to keep creation cheap) on every other Array.
    __slots__ = ("_value", "weak_type", "_sharding", "__weakref__")
    __array_priority__ = 100
    # A subclass whose value lives in device memory (numjax.cuda.arrays.CudaArray) sets this;
    # its ``_value`` is a property that copies the value to the host on first use.
    _on_device = False

    def __init__(self, value, weak_type=False):
        self._value = value
        self.weak_type = weak_type

    # -- metadata
    @property
    def aval(self):
        return core.ShapedArray(self._value.shape, self._value.dtype, self.weak_type)

    shape = property(lambda self: self._value.shape)
    dtype = property(lambda self: self._value.dtype)
    ndim = property(lambda self: self._value.ndim)
    size = property(lambda self: self._value.size)
    itemsize = property(lambda self: self._value.itemsize)
    nbytes = property(lambda self: self._value.nbytes)

    def devices(self):
        named = getattr(self, "_sharding", None)
        return named.device_set if named is not None else {self.device}

    @property
    def device(self):
        from .api import _host_array_device
        return _host_array_device(self)

    @property
    def sharding(self):
        named = getattr(self, "_sharding", None)
        if named is not None:
            return named
        from .api import SingleDeviceSharding
        return SingleDeviceSharding(self.device)

    is_fully_replicated = property(lambda self: self.sharding.is_fully_replicated)
    is_fully_addressable = property(lambda self: self.sharding.is_fully_addressable)

    @property
    def addressable_shards(self):
        from . import sharding
        return sharding.addressable_shards(self, self._named_or_single())

    @property
    def global_shards(self):
        from . import sharding
        return sharding.global_shards(self, self._named_or_single())

    def addressable_data(self, index):
        return self.addressable_shards[index].data

    def _named_or_single(self):
        from . import sharding
        named = getattr(self, "_sharding", None)
        if named is not None:
            return named
        mesh = sharding.Mesh(np.array([self.device], dtype=object), ("_",))
        return sharding.NamedSharding(mesh, sharding.PartitionSpec())

    # -- conversion
    def __array__(self, dtype=None, copy=None):
        if copy:
            return np.array(self._value, dtype=dtype)
        v = self._value
        if dtype is not None and np.dtype(dtype) != v.dtype:
            return v.astype(dtype)
        # A read-only view, as JAX gives: writing through it would change an immutable Array.
        view = v.view()
        view.flags.writeable = False
        return view

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        # Read-only to consumers that know DLPack's read-only flag (numpy >= 2 asks with
        # max_version); older ones get the buffer itself, as JAX exports it to them.
        new = max_version is not None and tuple(max_version) >= (1, 0)
        kwargs = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device), ("copy", copy))
                  if v is not None}
        v = self._value
        if new:
            v = self.__array__()
        elif not v.flags.writeable:     # (a shared constant): they cannot be told it is read-only
            v = v.copy()
        return v.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._value.__dlpack_device__()

    def item(self, *args):
        return self._value.item(*args)

    def tolist(self):
        return self._value.tolist()

    def block_until_ready(self):
        return self

    def copy(self):
        return Array(self._value.copy(), self.weak_type)

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError("len() of unsized object")
        return len(self._value)

    def __iter__(self):
        if self._value.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (Array(v, self.weak_type) if isinstance(v, np.ndarray) else
                Array(np.asarray(v), self.weak_type) for v in self._value)

    def __bool__(self):
        return bool(self._value)

    def __int__(self):
        return int(self._value)

    def __float__(self):
        return float(self._value)

    def __complex__(self):
        return complex(self._value)

    def __index__(self):
        if dtypes.kind(self._value.dtype) not in "iub":
            raise TypeError(f"only integer scalar arrays can be converted to a scalar index")
        return int(self._value)

    def __hash__(self):
        raise TypeError("unhashable type: 'numjax.Array'")

    def __setitem__(self, idx, val):
        raise TypeError(core.IMMUTABLE_MESSAGE)

    def __reduce__(self):
        return (_reconstruct, (self._value, self.weak_type))

    def __format__(self, spec):
        return format(self._value.item(), spec) if self._value.ndim == 0 else format(str(self), spec)

    # -- printing
    def __repr__(self):
        return _array_repr(self._value, self.weak_type)

    def __str__(self):
        return str(self._value)


def _reconstruct(value, weak_type):
    return Array(value, weak_type)


def _array_repr(value, weak_type):
    # Laid out as JAX lays it out: numpy wraps the body as if "Array(" preceded
    # it and "," followed it; the dtype then stays on the last line, after a
    # single space when the body's last line plus ", " and the dtype text fit
    # the print width (the "Array(" of a one-line body is not counted), else
    # after a run of spaces as wide as the prefix (not a line break).
    prefix = "Array("
    dtype_str = f"dtype={value.dtype.name}" + (", weak_type=True" if weak_type else "") + ")"
    width = np.get_printoptions()["linewidth"]
    if value.size == 0:
        body = f"[], shape={value.shape}"
    else:
        body = np.array2string(value, prefix=prefix, suffix=",", separator=", ", max_line_width=width)
    last_line = body.rsplit("\n", 1)[-1]
    sep = " " if len(last_line) + 3 + len(dtype_str) <= width else " " * len(prefix)
    return f"{prefix}{body},{sep}{dtype_str}"


def wrap(value, weak_type=False):
    """Array from a numpy value, narrowing 64-bit dtypes when x64 is off."""
    value = np.asarray(value)
    dt = dtypes.canonicalize_dtype(value.dtype)
    if dt != value.dtype:
        value = value.astype(dt)
    return Array(value, weak_type)


def to_numpy(x):
    """The numpy value of an eager operand (Array, numpy array or scalar)."""
    if type(x) is Array:
        return x._value
    v = np.asarray(x)
    return v if isinstance(x, Array) else host_value(v, x)


def host_value(v, source):
    """``v = np.asarray(source)`` as JAX makes an Array of it: the canonical dtype (float64 ->
    float32 without x64), in a buffer of its own (``private_value``)."""
    return private_value(v.astype(dtypes.canonicalize_dtype(v.dtype), copy=False), source)


def private_value(v, source):
    """``v``, made from the caller's ``source`` by np.asarray/astype, in memory only numjax
    holds: copied where it is ``source`` itself or a view of another buffer, which the caller
    may still write.  (JAX copies host data into its own buffers: ``jnp.asarray(a)`` does not
    change when ``a`` is written afterwards.)"""
    return v.copy() if v is source or v.base is not None else v


def c_contiguous(x):
    """A C-contiguous ndarray of ``x`` that keeps rank 0 (np.ascontiguousarray makes it 1-d)."""
    return np.asarray(x, order="C")


class ArrayType(abc.ABC):
    """``numjax.Array`` / ``jnp.ndarray`` as libraries test for it, like ``jax.Array``.

    An abstract base: concrete Arrays *and* tracers are instances, so
    ``isinstance(x, jax.Array)`` holds inside jit/grad/vmap as in JAX.  numjax's own
    code keeps testing the concrete ``Array`` class to tell values from tracers.
    """


ArrayType.__name__ = ArrayType.__qualname__ = "Array"
ArrayType.__module__ = "numjax"
ArrayType.register(Array)
ArrayType.register(core.Tracer)

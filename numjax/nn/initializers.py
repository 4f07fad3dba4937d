"""numjax.nn.initializers: weight initializers, as ``jax.nn.initializers``.

Every initializer is ``init(key, shape, dtype=float32)`` and draws exactly the
bits JAX draws for the same key (the sampling is numjax.random's, which matches
JAX bit for bit), then scales them with the same float32 operations.
"""
import math
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .. import dtypes as _dtypes
from .. import numpy as jnp
from .. import random

__all__ = [
    "Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal",
    "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal", "ones",
    "orthogonal", "truncated_normal", "uniform", "variance_scaling", "xavier_normal", "xavier_uniform", "zeros",
]


@runtime_checkable
class Initializer(Protocol):
    def __call__(self, key: Any, shape: Any, dtype: Any = None, out_sharding: Any = None) -> Any:
        raise NotImplementedError


def _dtype(dtype):
    return _dtypes.default_float_dtype() if dtype is None else dtype


def _no_sharding(out_sharding):
    if out_sharding is not None:
        raise NotImplementedError("numjax runs on one CPU device: out_sharding must be None.")


def zeros(key, shape, dtype=None, out_sharding=None):
    _no_sharding(out_sharding)
    return jnp.zeros(shape, _dtype(dtype))


def ones(key, shape, dtype=None, out_sharding=None):
    _no_sharding(out_sharding)
    return jnp.ones(shape, _dtype(dtype))


def constant(value, dtype=None):
    """An initializer filling every entry with ``value``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding(out_sharding)
        return jnp.full(shape, value, dtype=_dtype(dtype))
    return init


def uniform(scale=1e-2, dtype=None):
    """Uniform on [0, scale)."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding(out_sharding)
        dtype = _dtype(dtype)
        return random.uniform(key, shape, dtype) * jnp.array(scale, dtype)
    return init


def normal(stddev=1e-2, dtype=None):
    """Normal with mean 0 and standard deviation ``stddev``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding(out_sharding)
        dtype = _dtype(dtype)
        return random.normal(key, shape, dtype) * jnp.array(stddev, dtype)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """A standard normal truncated to [lower, upper], times ``stddev``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding(out_sharding)
        dtype = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, shape, dtype) * jnp.array(stddev, dtype)
    return init


def _axes_size(shape, axes):
    return shape[axes] if isinstance(axes, int) else math.prod([shape[i] for i in axes])


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out): the in/out axis sizes times the receptive field (the other, non-batch axes)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional weights "
                         "tensor with default in_axis. Must be at least 2D or specify in_axis explicitly.")
    in_size, out_size = _axes_size(shape, in_axis), _axes_size(shape, out_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / _axes_size(shape, batch_axis)
    return in_size * receptive_field_size, out_size * receptive_field_size


_TRUNCATED_NORMAL_STDDEV = .87962566103423978  # stddev of a standard normal truncated to [-2, 2]


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """Samples with variance ``scale / n``, n the fan given by ``mode``
    (fan_in, fan_out, fan_avg or fan_geo_avg), from ``distribution``
    (truncated_normal, normal or uniform)."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding(out_sharding)
        shape = tuple(int(d) for d in shape)
        dtype = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominators = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
                        "fan_geo_avg": (fan_in * fan_out) ** 0.5}
        if mode not in denominators:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = jnp.array(scale / denominators[mode], dtype=dtype)
        if not jnp.issubdtype(dtype, np.floating):
            raise NotImplementedError(f"variance_scaling: complex dtype {np.dtype(dtype).name} is not "
                                      "supported by numjax; use a real floating dtype.")
        if distribution == "truncated_normal":
            stddev = jnp.sqrt(variance) / jnp.array(_TRUNCATED_NORMAL_STDDEV, dtype)
            return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * jnp.sqrt(variance)
        if distribution == "uniform":
            return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")
    return init


def _scaled(scale, mode, distribution, doc):
    def make(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                                batch_axis=batch_axis, dtype=dtype)
    make.__doc__ = doc
    return make


glorot_uniform = _scaled(1.0, "fan_avg", "uniform", "variance_scaling(1.0, 'fan_avg', 'uniform').")
glorot_normal = _scaled(1.0, "fan_avg", "truncated_normal", "variance_scaling(1.0, 'fan_avg', 'truncated_normal').")
lecun_uniform = _scaled(1.0, "fan_in", "uniform", "variance_scaling(1.0, 'fan_in', 'uniform').")
lecun_normal = _scaled(1.0, "fan_in", "truncated_normal", "variance_scaling(1.0, 'fan_in', 'truncated_normal').")
he_uniform = _scaled(2.0, "fan_in", "uniform", "variance_scaling(2.0, 'fan_in', 'uniform').")
he_normal = _scaled(2.0, "fan_in", "truncated_normal", "variance_scaling(2.0, 'fan_in', 'truncated_normal').")
for _name in ("glorot_uniform", "glorot_normal", "lecun_uniform", "lecun_normal", "he_uniform", "he_normal"):
    globals()[_name].__name__ = globals()[_name].__qualname__ = _name
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Orthogonal columns along ``column_axis`` (rows when there are more columns), times ``scale``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding(out_sharding)
        dtype = _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(dim == 0 for dim in shape):
            return jnp.zeros(shape, dtype=dtype)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
        q = jnp.moveaxis(q, -1, column_axis)
        return jnp.array(scale, dtype) * q
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Convolution kernels (3D, 4D or 5D) that are zero except an orthogonal matrix at the center tap."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding(out_sharding)
        dtype = _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho_matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        center = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype=dtype).at[center + (Ellipsis,)].set(ortho_matrix)
    return init

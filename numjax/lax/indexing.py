"""Static and dynamic slicing (gather/scatter come with the indexing issue)."""
import builtins

import numpy as np

from ..array import Array, to_numpy
from ..core import ShapedArray, get_aval
from ._base import make_primitive


def _slice_impl(x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * len(start_indices)
    idx = tuple(builtins.slice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))
    return Array(to_numpy(x)[idx], getattr(x, "weak_type", False))


def _slice_abstract(x, *, start_indices, limit_indices, strides):
    if len(start_indices) != x.ndim or len(limit_indices) != x.ndim:
        raise TypeError(f"slice start_indices must have length equal to the number of dimensions "
                        f"of the operand, got indices {start_indices} for operand shape {x.shape}.")
    strides = strides or (1,) * x.ndim
    shape = []
    for n, s, l, st in zip(x.shape, start_indices, limit_indices, strides):
        if not 0 <= s <= l <= n:
            raise TypeError(f"slice indices must be within bounds: start_indices {start_indices}, "
                            f"limit_indices {limit_indices}, operand shape {x.shape}.")
        shape.append(max(0, -(-(l - s) // st)))
    return ShapedArray(shape, x.dtype, x.weak_type)


slice_p = make_primitive("slice", _slice_impl, _slice_abstract)


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001
    start, limit = tuple(map(int, start_indices)), tuple(map(int, limit_indices))
    strides = None if strides is None or all(s == 1 for s in strides) else tuple(map(int, strides))
    if start == (0,) * len(start) and limit == get_aval(operand).shape and strides is None:
        return operand
    return slice_p.bind(operand, start_indices=start, limit_indices=limit, strides=strides)


def _clamped_starts(starts, shape, sizes):
    # Out-of-range starts are clamped so the slice stays in bounds, as XLA does.
    return [int(min(max(int(s), 0), n - k)) for s, n, k in zip(starts, shape, sizes)]


def _dynamic_slice_impl(x, *starts, slice_sizes):
    v = to_numpy(x)
    cs = _clamped_starts([to_numpy(s) for s in starts], v.shape, slice_sizes)
    idx = tuple(np.s_[s:s + k] for s, k in zip(cs, slice_sizes))
    return Array(v[idx], getattr(x, "weak_type", False))


def _dynamic_slice_abstract(x, *starts, slice_sizes):
    if len(starts) != x.ndim:
        raise TypeError(f"dynamic_slice start_indices must have length equal to the number of "
                        f"dimensions of the operand, got {len(starts)} for operand shape {x.shape}.")
    for n, k in zip(x.shape, slice_sizes):
        if k > n:
            raise TypeError(f"slice slice_sizes must be less than or equal to operand shape, got "
                            f"slice_sizes {slice_sizes} for operand shape {x.shape}.")
    return ShapedArray(slice_sizes, x.dtype, x.weak_type)


dynamic_slice_p = make_primitive("dynamic_slice", _dynamic_slice_impl, _dynamic_slice_abstract)


def dynamic_slice(operand, start_indices, slice_sizes):
    return dynamic_slice_p.bind(operand, *start_indices, slice_sizes=tuple(map(int, slice_sizes)))


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    from .shape import squeeze
    aval = get_aval(operand)
    starts = [0] * aval.ndim
    starts[axis] = index
    sizes = list(aval.shape)
    sizes[axis] = 1
    out = dynamic_slice(operand, starts, sizes)
    return out if keepdims else squeeze(out, (axis,))


def _dus_impl(x, update, *starts):
    v, u = to_numpy(x).copy(), to_numpy(update)
    cs = _clamped_starts([to_numpy(s) for s in starts], v.shape, u.shape)
    v[tuple(np.s_[s:s + k] for s, k in zip(cs, u.shape))] = u
    return Array(v, getattr(x, "weak_type", False))


def _dus_abstract(x, update, *starts):
    if update.ndim != x.ndim or any(u > n for u, n in zip(update.shape, x.shape)):
        raise TypeError(f"dynamic_update_slice update shape must be smaller than operand shape, "
                        f"got update shape {update.shape} for operand shape {x.shape}.")
    if update.dtype != x.dtype:
        raise TypeError(f"dynamic_update_slice update dtype {update.dtype.name} must match operand "
                        f"dtype {x.dtype.name}.")
    return x


dynamic_update_slice_p = make_primitive("dynamic_update_slice", _dus_impl, _dus_abstract)


def dynamic_update_slice(operand, update, start_indices):
    return dynamic_update_slice_p.bind(operand, update, *start_indices)

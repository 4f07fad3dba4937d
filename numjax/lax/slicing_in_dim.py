"""lax's one-axis conveniences over slice, dynamic_slice and dynamic_update_slice.

No primitives of their own: each builds the full start/limit lists for its axis and calls the
general operation, so grad, vmap and jit come from those primitives' rules.  Static indices
count from the end when negative (as Python's); dynamic ones too unless
``allow_negative_indices=False``.
"""
import operator

import numpy as np

from ..array import Array, wrap
from ..core import Tracer, get_aval
from . import indexing
from .shape import expand_dims, squeeze


def _axis(operand, axis):
    nd = get_aval(operand).ndim
    return operator.index(axis) + nd if axis < 0 else operator.index(axis)


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """``operand[..., start:limit:stride, ...]`` along ``axis`` (static bounds)."""
    shape = get_aval(operand).shape
    axis = _axis(operand, axis)
    n = shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = n if limit_index is None else operator.index(limit_index)
    start = start + n if start < 0 else start
    limit = limit + n if limit < 0 else limit
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return indexing.slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """Element ``index`` (static) of ``axis``, the axis kept with size 1 when ``keepdims``."""
    n = get_aval(operand).shape[_axis(operand, axis)]
    index = operator.index(index)
    wrapped = index + n if index < 0 else index
    if not 0 <= wrapped < n:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {n}")
    out = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return out if keepdims else squeeze(out, (_axis(operand, axis),))


def _starts(operand, axis, start_index, allow_negative_indices):
    """Start indices of all axes (zeros but ``axis``), as dynamic_slice's operands."""
    zero = 0
    if isinstance(start_index, (Array, Tracer, np.integer)):
        # The other axes start at a zero of the index's own type: dynamic_slice needs one type.
        zero = Array(np.zeros((), get_aval(start_index).dtype), False)
    starts = [zero] * get_aval(operand).ndim
    starts[axis] = start_index
    if allow_negative_indices:
        return indexing._dynamic_slice_indices(operand, starts)
    # A negative start then means 0 (dynamic_slice clamps starts into bounds).
    if isinstance(start_index, (Array, Tracer)):
        from .elementwise import max as lax_max
        starts[axis] = lax_max(start_index, wrap(0).astype(get_aval(start_index).dtype))
    else:
        starts[axis] = max(operator.index(start_index), 0)
    return indexing._dynamic_slice_indices(operand, starts)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *, allow_negative_indices=True):
    """``slice_size`` elements of ``axis`` from a traced ``start_index`` (clamped in bounds)."""
    axis = _axis(operand, axis)
    shape = get_aval(operand).shape
    sizes = list(shape)
    sizes[axis] = operator.index(slice_size)
    if not 0 <= sizes[axis] <= shape[axis]:
        raise TypeError("slice slice_sizes must be less than or equal to operand shape, "
                        f"got slice_sizes {tuple(sizes)} for operand shape {shape}.")
    starts = _starts(operand, axis, start_index, allow_negative_indices)
    return indexing.dynamic_slice_p.bind(operand, *starts, slice_sizes=tuple(sizes))


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *, allow_negative_indices=True):
    """Element ``index`` (traced) of ``axis``."""
    out = dynamic_slice_in_dim(operand, index, 1, axis, allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (_axis(operand, axis),))


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *, allow_negative_indices=True):
    """``operand`` with ``update`` written along ``axis`` from a traced ``start_index``."""
    axis = _axis(operand, axis)
    starts = _starts(operand, axis, start_index, allow_negative_indices)
    return indexing.dynamic_update_slice_p.bind(operand, update, *starts)


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """``operand`` with element ``index`` of ``axis`` replaced by ``update`` (which may lack
    that axis)."""
    axis = _axis(operand, axis)
    if not isinstance(update, (Array, Tracer)):
        update = wrap(update).astype(get_aval(operand).dtype)
    if get_aval(update).ndim == get_aval(operand).ndim - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)

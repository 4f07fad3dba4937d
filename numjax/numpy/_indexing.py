"""Basic indexing (ints, slices, None, Ellipsis, traced ints) lowered to slice/squeeze/rev/dynamic_slice.

Advanced indexing (integer arrays, masks) and ``.at[]`` arrive with the indexing issue.
"""
import numpy as np

from .. import core, lax
from ..array import Array
from ..core import get_aval


def _expand_ellipsis(idx, ndim):
    # Identity checks only: `in` would compare traced indices with ==.
    n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    positions = [k for k, i in enumerate(idx) if i is Ellipsis]
    if len(positions) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_real > ndim:
        raise IndexError(f"Too many indices: array is {ndim}-dimensional, but {n_real} were indexed")
    fill = (slice(None),) * (ndim - n_real)
    if positions:
        pos = positions[0]
        return idx[:pos] + fill + idx[pos + 1:]
    return idx + fill


def getitem(arr, idx):
    if not isinstance(idx, tuple):
        idx = (idx,)
    aval = get_aval(arr)
    for i in idx:
        if not (i is None or i is Ellipsis or isinstance(i, (int, np.integer, slice))
                or _is_scalar_int(i)):
            raise NotImplementedError(
                f"Indexing with {type(i).__name__} is not implemented yet in numjax (advanced "
                "indexing arrives with gather); use basic indexing: ints, slices, None, '...'.")
    idx = _expand_ellipsis(idx, aval.ndim)
    starts, limits, strides, squeeze_dims, flip_dims, new_axes, dyn = [], [], [], [], [], [], []
    dim = 0
    out_dim = 0
    for i in idx:
        if i is None:
            new_axes.append(out_dim)
            out_dim += 1
            continue
        n = aval.shape[dim]
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step < 0:
                flip_dims.append(dim)
                start, stop, step = _flip_slice(start, stop, step, n)
            stop = max(stop, start)
            starts.append(start), limits.append(stop), strides.append(step)
            out_dim += 1
        elif isinstance(i, (int, np.integer)) and -n <= int(i) < n:
            k = int(i) % n
            starts.append(k), limits.append(k + 1), strides.append(1)
            squeeze_dims.append(dim)
        elif isinstance(i, (int, np.integer)):
            # Out of bounds: JAX clamps on retrieval, through a dynamic_slice of the index.
            dyn.append((dim, Array(np.asarray(int(i), np.int32), False)))
            starts.append(0), limits.append(1), strides.append(1)
            squeeze_dims.append(dim)
        else:
            # A weakly typed traced index is made strong first, as JAX's indexing does.
            dyn.append((dim, lax._convert_element_type(i, get_aval(i).dtype, False)))
            starts.append(0), limits.append(1), strides.append(1)   # size 1 after dynamic_slice
            squeeze_dims.append(dim)
        dim += 1
    out = arr
    if dyn:
        out = _dynamic_part(out, dyn, aval)
    out = lax.slice(out, starts, limits, strides)
    if flip_dims:
        out = lax.rev(out, flip_dims)
    out = lax.squeeze(out, squeeze_dims)
    if new_axes:
        out = lax.expand_dims(out, new_axes)
    return out


def _is_scalar_int(i):
    if isinstance(i, (core.Tracer, Array)):
        aval = get_aval(i)
        return aval.ndim == 0 and aval.dtype.kind in "iu"
    return False


def _flip_slice(start, stop, step, n):
    # A negative-step slice is the positive-step slice over the same elements
    # (from the last one selected up to `start`), then reversed (as JAX lowers it).
    count = max(0, -(-(start - stop) // -step))
    if count == 0:
        return 0, 0, 1
    last = start + (count - 1) * step
    return last, start + 1, -step


def _dynamic_part(arr, dyn, aval):
    starts = [0] * aval.ndim
    sizes = list(aval.shape)
    for dim, i in dyn:
        # lax.dynamic_slice maps a negative index to one counted from the end.
        starts[dim] = i
        sizes[dim] = 1
    starts = [s if not isinstance(s, int) else _const(s, dyn[0][1]) for s in starts]
    out = lax.dynamic_slice(arr, starts, sizes)
    # The sliced dims keep size 1 here; the caller's static slice/squeeze removes them.
    return out


def _zero(like):
    return Array(np.zeros((), get_aval(like).dtype), False)


def _const(v, like):
    return Array(np.asarray(v, get_aval(like).dtype), False)

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
        raise IndexError(f"Too many indices: {ndim}-dimensional array indexed with {n_real} regular indices.")
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
        elif isinstance(i, (int, np.integer)):
            k = int(i)
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {dim} with size {n}")
            k %= n
            starts.append(k), limits.append(k + 1), strides.append(1)
            squeeze_dims.append(dim)
        else:
            dyn.append((dim, i))
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
    # A negative-step slice is a positive-step slice of the reversed axis.
    count = max(0, -(-(start - stop) // -step))
    if count == 0:
        return 0, 0, 1
    last = start + (count - 1) * step
    return n - 1 - start, n - 1 - last + 1, -step


def _dynamic_part(arr, dyn, aval):
    starts = [0] * aval.ndim
    sizes = list(aval.shape)
    for dim, i in dyn:
        n = aval.shape[dim]
        i = lax.select(lax.lt(i, _zero(i)), lax.add(i, _const(n, i)), i)
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

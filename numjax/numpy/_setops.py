"""jnp set operations (unique, isin, setdiff1d, ...), built on one stable lax.sort.

Each operation marks, over fixed-length sorted arrays, which entries belong to the result;
only the final compaction depends on the data: it takes the concrete count, or ``size=``
under a transformation (the tail then holds ``fill_value``).
"""
from collections import namedtuple

import numpy as np

from .. import dtypes, lax
from ..core import ShapedArray, get_aval
from ..errors import ConcretizationTypeError
from ..lax.sorting import scatter_add_along_axis, take_along_axis
from ._sorting import (_Abstract, _concrete, _const, _first_true, _fill_tail, _full_like, _iota,
                       _moveaxis, _operator_size, _ravel, _slice_axis, searchsorted)
from ._util import asarray_leaf, canonicalize_axis

__all__ = ["unique", "unique_values", "unique_counts", "unique_inverse", "unique_all", "isin",
           "setdiff1d", "union1d", "intersect1d", "setxor1d"]

_INT = np.dtype(np.int32)

_UniqueAllResult = namedtuple("_UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
_UniqueCountsResult = namedtuple("_UniqueCountsResult", ["values", "counts"])
_UniqueInverseResult = namedtuple("_UniqueInverseResult", ["values", "inverse_indices"])


def _not_equal_next(s, equal_nan):
    """Per adjacent pair of the sorted rows of ``s`` (n, k): do they differ?"""
    n = get_aval(s).shape[0]
    a, b = _slice_axis(s, 0, n - 1), _slice_axis(s, 1, n)
    ne = lax.ne(a, b)
    if equal_nan and dtypes.kind(get_aval(s).dtype) in "fc":
        ne = lax.bitwise_and(ne, lax.bitwise_not(lax.bitwise_and(lax.ne(a, a), lax.ne(b, b))))
    return lax.reduce_or(ne, (1,))


def _run_starts(s, equal_nan=True):
    """Mask over the sorted rows of ``s`` (n, k): True at the first row of each run of equal rows."""
    n = get_aval(s).shape[0]
    first = lax.broadcast(_const(True, np.bool_), (1,))
    return lax.concatenate([first, _not_equal_next(s, equal_nan)], 0) if n > 1 else first


def _result_size(keep, size, x, name):
    if size is not None:
        return _operator_size(size, name)
    v = _concrete(keep)
    if v is None:
        raise ConcretizationTypeError(
            _Abstract(get_aval(x), x),
            f"The error arose for the first argument of jnp.{name}(). To make jnp.{name}() "
            f"compatible with JIT and other transforms, you can specify a concrete value for the "
            f"size argument, which will determine the output size.")
    return int(v.sum())


def _compact(keep, size, *arrays):
    """The entries of ``arrays`` (leading axis) where ``keep``, the first ``size`` of them in
    order, and how many are valid."""
    idx, count = _first_true(keep, size)
    out = []
    for a in arrays:
        rest = get_aval(a).shape[1:]
        out.append(take_along_axis(a, lax.broadcast_in_dim(idx, (size,) + rest, (0,)), 0))
    return out, count, idx


# ---------------------------------------------------------------- unique

def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None, sorted=True):  # noqa: A002
    ar = asarray_leaf(ar)
    aval = get_aval(ar)
    if axis is None:
        rows, axis_used = lax.reshape(ar, (aval.size, 1)), None
    else:
        axis_used = canonicalize_axis(axis, aval.ndim)
        moved = _moveaxis(ar, axis_used, 0)
        n = aval.shape[axis_used]
        rows = lax.reshape(moved, (n, int(np.prod(get_aval(moved).shape[1:], dtype=np.int64))))
    n, k = get_aval(rows).shape
    if n == 0:
        if size:
            if fill_value is None:
                raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                                 "fill_value must be specified")
        size = size or 0
    cols = [lax.reshape(_slice_axis(rows, j, j + 1, 1), (n,)) for j in range(k)]
    *sorted_cols, perm = lax.sort([*cols, _iota((n,), 0)], num_keys=k) if n else [*cols, _iota((0,), 0)]
    s = lax.concatenate([lax.expand_dims(c, (1,)) for c in sorted_cols], 1) if n else rows
    keep = _run_starts(s, equal_nan) if n else lax.broadcast(_const(True, np.bool_), (0,))
    size = _result_size(keep, size, ar, "unique")
    (values, first), count, starts = _compact(keep, size, s, perm) if n else \
        ((lax.broadcast(_fill_of(fill_value, aval.dtype), (size, k)), lax.broadcast(_const(0, _INT), (size,))),
         _const(0, _INT), lax.broadcast(_const(0, _INT), (size,)))
    # Unfilled slots repeat the smallest value (JAX's default fill) and its first index.
    fill = lax.reshape(_slice_axis(values, 0, 1), (k,)) if fill_value is None else \
        lax.broadcast(_fill_of(fill_value, aval.dtype), (k,))
    values = _fill_tail(values, count, fill) if n else values
    if n:
        first = _fill_tail(first, count, lax.reshape(_slice_axis(first, 0, 1), ()))
    if axis_used is None:
        values = lax.reshape(values, (size,))
    else:
        rest = tuple(d for i, d in enumerate(aval.shape) if i != axis_used)
        values = _moveaxis(lax.reshape(values, (size,) + rest), 0, axis_used)
    outs = [values]
    if return_index:
        outs.append(first)
    if return_inverse:
        if n:
            run = lax.sub(lax.cumsum(lax._convert_element_type(keep, _INT, False), 0), _const(1, _INT))
            inverse = scatter_add_along_axis(run, perm, 0, n)
        else:
            inverse = lax.broadcast(_const(0, _INT), (0,))
        outs.append(lax.reshape(inverse, aval.shape) if axis_used is None else inverse)
    if return_counts:
        outs.append(_run_lengths(starts, count, n, size) if n else lax.broadcast(_const(0, _INT), (size,)))
    return outs[0] if len(outs) == 1 else tuple(outs)


def _fill_of(fill_value, dtype):
    return lax._convert_element_type(asarray_leaf(fill_value), dtype, False)


def _run_lengths(starts, count, n, size):
    """Lengths of the runs starting at ``starts`` (the first ``count`` slots valid; 0 after)."""
    slot = _iota((size,), 0)
    valid = lax.lt(slot, lax.broadcast(count, (size,)))
    begin = lax.select(valid, starts, lax.broadcast(_const(n, _INT), (size,)))
    nxt = lax.concatenate([_slice_axis(begin, 1, size), lax.broadcast(_const(n, _INT), (1,))], 0) \
        if size else begin
    return lax.sub(nxt, begin)


def unique_values(x, /, *, size=None, fill_value=None):
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size=None, fill_value=None):
    return _UniqueCountsResult(*unique(x, return_counts=True, size=size, fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
    return _UniqueInverseResult(*unique(x, return_inverse=True, size=size, fill_value=fill_value))


def unique_all(x, /, *, size=None, fill_value=None):
    return _UniqueAllResult(*unique(x, return_index=True, return_inverse=True, return_counts=True,
                                    size=size, fill_value=fill_value))


# ---------------------------------------------------------------- membership

def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    from . import promote_dtypes
    element, test = promote_dtypes(asarray_leaf(element), asarray_leaf(test_elements))
    shape = get_aval(element).shape
    test = _ravel(test)
    m = get_aval(test).shape[0]
    e = _ravel(element)
    ne = get_aval(e).shape[0]
    if m == 0 or ne == 0:
        found = lax.broadcast(_const(False, np.bool_), (ne,))
    elif method == "compare_all" or (method == "auto" and ne * m <= 1 << 20):
        found = lax.reduce_or(lax.eq(lax.broadcast_in_dim(e, (ne, m), (0,)),
                                     lax.broadcast_in_dim(test, (ne, m), (1,))), (1,))
    else:
        st = lax.sort(test)
        pos = lax.min(searchsorted(st, e), _const(m - 1, _INT))
        found = lax.eq(take_along_axis(st, pos, 0), e)
    found = lax.reshape(found, shape)
    return lax.bitwise_not(found) if invert else found


def _sorted_unique_mask(x):
    """(sorted x, mask of its first entries of each run) for a 1-D x."""
    s = lax.sort(x)
    return s, _run_starts(lax.expand_dims(s, (1,)))


def _set_result(values, keep, size, fill_value, default_fill, name, origin):
    size = _result_size(keep, size, origin, name)
    (out,), count, _ = _compact(keep, size, values)
    if fill_value is None:
        fill_value = default_fill(out)
    return _fill_tail(out, count, fill_value)


def _smallest(out):
    return lax.reshape(_slice_axis(out, 0, 1), ()) if get_aval(out).shape[0] else _const(0, get_aval(out).dtype)


def _operands_1d(*arrays):
    from . import promote_dtypes
    return [_ravel(a) for a in promote_dtypes(*(asarray_leaf(a) for a in arrays))]


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    ar1, ar2 = _operands_1d(ar1, ar2)
    if get_aval(ar1).shape[0] == 0:
        return _empty_result(ar1, size, fill_value)
    s, first = _sorted_unique_mask(ar1)
    keep = lax.bitwise_and(first, isin(s, ar2, invert=True))
    return _set_result(s, keep, size, fill_value, lambda out: _const(0, get_aval(out).dtype),
                       "setdiff1d", ar1)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    ar1, ar2 = _operands_1d(ar1, ar2)
    both = lax.concatenate([ar1, ar2], 0)
    if get_aval(both).shape[0] == 0:
        return _empty_result(both, size, fill_value)
    s, first = _sorted_unique_mask(both)
    return _set_result(s, first, size, fill_value, _smallest, "union1d", both)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None, fill_value=None):
    ar1, ar2 = _operands_1d(ar1, ar2)
    n1, n2 = get_aval(ar1).shape[0], get_aval(ar2).shape[0]
    if n1 == 0 or n2 == 0:
        empty = _empty_result(ar1, size, fill_value)
        if return_indices:
            idx = lax.broadcast(_const(0, _INT), get_aval(empty).shape)
            return empty, idx, idx
        return empty
    s1, perm1 = lax.sort([ar1, _iota((n1,), 0)], num_keys=1)
    first = _run_starts(lax.expand_dims(s1, (1,)))
    keep = lax.bitwise_and(first, isin(s1, ar2))
    size = _result_size(keep, size, ar1, "intersect1d")
    (values, idx1), count, _ = _compact(keep, size, s1, perm1)
    fill = _smallest(values) if fill_value is None else fill_value
    values = _fill_tail(values, count, fill)
    if not return_indices:
        return values
    s2, perm2 = lax.sort([ar2, _iota((n2,), 0)], num_keys=1)
    pos = lax.min(searchsorted(s2, values), _const(n2 - 1, _INT))
    idx2 = take_along_axis(perm2, pos, 0)
    return (values, _fill_tail(idx1, count, lax.reshape(_slice_axis(idx1, 0, 1), ())),
            _fill_tail(idx2, count, lax.reshape(_slice_axis(idx2, 0, 1), ())))


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    ar1, ar2 = _operands_1d(ar1, ar2)
    both = lax.concatenate([ar1, ar2], 0)
    if get_aval(both).shape[0] == 0:
        return _empty_result(both, size, fill_value)
    parts, keeps = [], []
    for a, other in ((ar1, ar2), (ar2, ar1)):
        if get_aval(a).shape[0] == 0:
            continue
        s, first = _sorted_unique_mask(a)
        parts.append(s)
        keeps.append(lax.bitwise_and(first, isin(s, other, invert=True)))
    values, keep = lax.concatenate(parts, 0), lax.concatenate(keeps, 0)
    # The kept values of both sides, in ascending order, first.
    _, values = lax.sort([lax.bitwise_not(keep), values], num_keys=2)
    _, keep = lax.sort([lax.bitwise_not(keep), keep], num_keys=1)
    return _set_result(values, keep, size, fill_value, _smallest, "setxor1d", both)


def _empty_result(x, size, fill_value):
    size = 0 if size is None else _operator_size(size, "set operation")
    fill = _const(0, get_aval(x).dtype) if fill_value is None else _fill_of(fill_value, get_aval(x).dtype)
    return lax.broadcast(fill, (size,))


del ShapedArray

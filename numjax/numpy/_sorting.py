"""jnp sorting, searching, counting and order statistics, written over lax.sort.

Functions whose output size depends on the data (nonzero, argwhere, compress, ...) compute
it from concrete values; under a transformation they need ``size=`` and then keep the first
``size`` results (padded with ``fill_value``), built from a stable sort that moves the
selected entries to the front.
"""
import builtins
import operator

import numpy as np

from .. import core, dtypes, lax
from ..array import Array
from ..core import get_aval
from ..errors import ConcretizationTypeError
from ..lax.sorting import scatter_add_along_axis, take_along_axis
from ._util import asarray_leaf, canonicalize_axis, reduction_axes, to_inexact_dtype

__all__ = ["sort", "argsort", "lexsort", "partition", "argpartition", "sort_complex", "searchsorted",
           "nonzero", "flatnonzero", "argwhere", "count_nonzero", "bincount", "digitize",
           "histogram", "histogram_bin_edges", "histogram2d", "histogramdd", "median", "nanmedian",
           "quantile", "nanquantile", "percentile", "nanpercentile", "extract", "compress"]

_INT = np.dtype(np.int32)


def _jit(name, fun, *args):
    from ..dispatch import jit_call_named
    return jit_call_named(name, fun, *args)


def _const(value, dtype):
    return Array(np.asarray(value, dtype), False)


def _concrete(x):
    """The numpy value of ``x`` when it is known now, else None."""
    if isinstance(x, Array):
        return x._value
    if isinstance(x, core.Tracer):
        v = x._concrete_value()
        return None if v is None else np.asarray(v)
    return np.asarray(x)


class _Abstract:
    """Stands in for the traced value an error message talks about (JAX reports the count)."""

    def __init__(self, aval, origin):
        self.aval = aval
        self._origin = origin

    def _origin_msg(self):
        fn = getattr(self._origin, "_origin_msg", None)
        return fn() if fn is not None else ""


def _size_error(x, name, shape=()):
    msg = (f"The size argument of jnp.{name} must be statically specified to use jnp.{name} "
           f"within JAX transformations.")
    return ConcretizationTypeError(_Abstract(core.ShapedArray(shape, _INT), x), msg)


def _moveaxis(x, src, dst):
    nd = get_aval(x).ndim
    src, dst = src % nd, dst % nd
    if src == dst:
        return x
    perm = [d for d in range(nd) if d != src]
    perm.insert(dst, src)
    return lax.transpose(x, perm)


def _ravel(x):
    aval = get_aval(x)
    return x if aval.ndim == 1 else lax.reshape(x, (aval.size,))


def _slice_axis(x, start, stop, axis=0):
    shape = get_aval(x).shape
    lo, hi = [0] * len(shape), list(shape)
    lo[axis], hi[axis] = start, stop
    return lax.slice(x, lo, hi)


def _pad_axis(x, hi, value, axis=0):
    cfg = [(0, 0, 0)] * get_aval(x).ndim
    cfg[axis] = (0, hi, 0)
    return lax.pad(x, _const(value, get_aval(x).dtype), cfg)


def _resize_axis(x, size, axis=0):
    """The first ``size`` entries along ``axis``, zero-padded when there are fewer."""
    n = get_aval(x).shape[axis]
    return _slice_axis(x, 0, size, axis) if size <= n else _pad_axis(x, size - n, 0, axis)


def _iota(shape, axis, dtype=_INT):
    return lax.broadcasted_iota(dtype, shape, axis)


def _full_like(x, value, dtype=None):
    aval = get_aval(x)
    return lax.broadcast(_const(value, dtype or aval.dtype), aval.shape)


# ---------------------------------------------------------------- sorting

def _sort_axis(a, axis):
    a = asarray_leaf(a)
    if axis is None:
        return _ravel(a), 0
    return a, canonicalize_axis(axis, get_aval(a).ndim)


def _refuse_kind(kind, name):
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported (got kind={kind!r}). Use stable=True "
                        "or stable=False to specify sort stability.")


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    _refuse_kind(kind, "sort")
    if order is not None:
        raise ValueError("'order' argument to sort is not supported.")
    a, dim = _sort_axis(a, axis)

    def _sort(v):
        out = lax.sort(v, dimension=dim, is_stable=stable)
        return lax.rev(out, (dim,)) if descending else out
    return _jit("sort", _sort, a)


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    _refuse_kind(kind, "argsort")
    if order is not None:
        raise ValueError("'order' argument to argsort is not supported.")
    a, dim = _sort_axis(a, axis)
    # JAX's indices are its default int: int64 under x64.
    index_dtype = dtypes.default_int_dtype() if dtype is None else dtypes.check_user_dtype(dtype, "argsort")

    def _argsort(v):
        iota = _iota(get_aval(v).shape, dim, index_dtype)
        if descending:
            # Reversed input, sorted stably, then reversed: equal keys keep ascending indices.
            _, perm = lax.sort([lax.rev(v, (dim,)), lax.rev(iota, (dim,))], dimension=dim,
                               is_stable=stable, num_keys=1)
            return lax.rev(perm, (dim,))
        _, perm = lax.sort([v, iota], dimension=dim, is_stable=stable, num_keys=1)
        return perm
    return _jit("argsort", _argsort, a)


def lexsort(keys, axis=-1):
    keys = [asarray_leaf(k) for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shapes = {get_aval(k).shape for k in keys}
    if len(shapes) > 1:
        raise ValueError("all keys need to be the same shape")
    shape = shapes.pop()
    if not shape:
        return _const(0, dtypes.default_int_dtype())
    dim = canonicalize_axis(axis, len(shape))
    iota = _iota(shape, dim, dtypes.default_int_dtype())
    return lax.sort([*keys[::-1], iota], dimension=dim, num_keys=len(keys))[-1]


def _partition_operand(a, kth, axis):
    a = asarray_leaf(a)
    axis = canonicalize_axis(axis, get_aval(a).ndim)
    n = get_aval(a).shape[axis]
    kth = operator.index(kth)
    if not -n <= kth < n:
        raise ValueError(f"kth {kth} is out of bounds for axis {axis} of size {n}")
    return _moveaxis(a, axis, -1), kth % n, axis


def _order_reversed(x):
    # An order-reversing map that is its own inverse: negation, or for unsigned integers
    # (where negation wraps) the bitwise complement.
    return lax.bitwise_not(x) if dtypes.kind(get_aval(x).dtype) == "u" else lax.neg(x)


def partition(a, kth, axis=-1):
    # As JAX: the kth+1 smallest (ascending) then the rest (descending), from two top_k calls.
    arr, kth, axis = _partition_operand(a, kth, axis)
    n = get_aval(arr).shape[-1]
    bottom = _order_reversed(lax.top_k(_order_reversed(arr), kth + 1)[0])
    top = lax.top_k(arr, n - kth - 1)[0]
    return _moveaxis(lax.concatenate([bottom, top], get_aval(arr).ndim - 1), -1, axis)


def argpartition(a, kth, axis=-1):
    arr, kth, axis = _partition_operand(a, kth, axis)
    shape = get_aval(arr).shape
    n, last = shape[-1], len(shape) - 1
    bottom = lax.top_k(_order_reversed(arr), kth + 1)[1]
    # The other indices, ascending: a 1/0 proxy that marks what bottom took, so ties cannot
    # pick an index twice.
    taken = scatter_add_along_axis(_full_like(bottom, 1.0, np.float32), bottom, last, n)
    top = lax.top_k(lax.sub(_const(1.0, np.float32), taken), n - kth - 1)[1]
    return _moveaxis(lax.concatenate([bottom, top], last), -1, axis)


def sort_complex(a):
    a = asarray_leaf(a)
    dt = get_aval(a).dtype
    if dtypes.kind(dt) != "c":
        # JAX's complex for a real dtype: complex128 only for what is float64 as inexact.
        wide = to_inexact_dtype(dt) == np.float64
        a = lax._convert_element_type(a, dtypes.canonicalize_dtype(np.complex128 if wide else np.complex64), False)
    return sort(a, axis=0 if get_aval(a).ndim == 1 else -1)


# ---------------------------------------------------------------- searching

def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. Expected one of "
                         f"['left', 'right'].")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"method={method!r} not recognized; allowed methods are 'scan', "
                         f"'scan_unrolled', 'sort', 'compare_all'")
    from . import promote_dtypes
    a, v = promote_dtypes(asarray_leaf(a), asarray_leaf(v))
    if get_aval(a).ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if sorter is not None:
        a = take_along_axis(a, asarray_leaf(sorter), 0)
    return _jit("searchsorted", lambda a, v: _searchsorted(a, v, side), a, v)


def _searchsorted(a, v, side):
    """Insertion points from one stable sort of ``a`` and ``v`` together: the count of
    ``a`` entries placed before each ``v`` entry (``v`` before equal ``a`` for 'left')."""
    n, shape = get_aval(a).shape[0], get_aval(v).shape
    vf = _ravel(v)
    m = get_aval(vf).shape[0]
    if n == 0 or m == 0:
        return lax.broadcast(_const(0, _INT), shape)
    values = lax.concatenate([a, vf], 0)
    a_first = side == "right"
    order = lax.concatenate([_full_like(a, 0 if a_first else 1, np.int8),
                             _full_like(vf, 1 if a_first else 0, np.int8)], 0)
    _, _, origin = lax.sort([values, order, _iota((n + m,), 0)], num_keys=2)
    is_a = lax._convert_element_type(lax.lt(origin, _const(n, _INT)), _INT, False)
    before = lax.sub(lax.cumsum(is_a, 0), is_a)
    placed = scatter_add_along_axis(before, origin, 0, n + m)
    return lax.reshape(_slice_axis(placed, n, n + m), shape)


def digitize(x, bins, right=False, *, method=None):
    x, bins = asarray_leaf(x), asarray_leaf(bins)
    if get_aval(bins).ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    nb = get_aval(bins).shape[0]
    if nb == 0:
        return lax.broadcast(_const(0, _INT), get_aval(x).shape)
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    increasing = lax.ge(_slice_axis(bins, nb - 1, nb), _slice_axis(bins, 0, 1))
    up = searchsorted(bins, x, side=side, **kw)
    down = lax.sub(_const(nb, _INT), searchsorted(lax.rev(bins, (0,)), x, side=side, **kw))
    return lax.select(lax.broadcast_in_dim(lax.reshape(increasing, ()), get_aval(up).shape, ()), up, down)


# ---------------------------------------------------------------- nonzero and friends

def _first_true(mask, size):
    """Indices (int32) of the true entries of a 1-D mask in order, the first ``size`` of them,
    and how many are valid."""
    n = get_aval(mask).shape[0]
    _, idx = lax.sort([lax.bitwise_not(mask), _iota((n,), 0)], num_keys=1)
    count = lax.reduce_sum(lax._convert_element_type(mask, _INT, False), (0,))
    return _resize_axis(idx, size), count


def _fill_tail(x, count, fill):
    """``x`` (leading axis: result slots) with the slots at or after ``count`` set to ``fill``
    (a scalar, or an array matching the trailing dims of ``x``)."""
    aval = get_aval(x)
    valid = lax.lt(_iota(aval.shape, 0), lax.broadcast(count, aval.shape))
    fill = lax._convert_element_type(asarray_leaf(fill), aval.dtype, False)
    nd = get_aval(fill).ndim
    fill = lax.broadcast_in_dim(fill, aval.shape, tuple(builtins.range(aval.ndim - nd, aval.ndim)))
    return lax.select(valid, x, fill)


def _operator_size(size, name):
    try:
        size = operator.index(size)
    except TypeError:
        if not isinstance(size, core.Tracer):
            raise TypeError(f"The size argument of jnp.{name} must be an integer, got {size!r}.") from None
        raise ConcretizationTypeError(size, f"The size argument of jnp.{name} must be statically "
                                            f"specified to use jnp.{name} within JAX transformations.")
    if size < 0:
        raise TypeError(f"The size argument of jnp.{name} must be nonnegative, got {size}: the result's "
                        "shape must have every element be nonnegative.")
    return size


def nonzero(a, *, size=None, fill_value=None):
    a = asarray_leaf(a)
    aval = get_aval(a)
    if aval.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar) "
                         "instead. If this is an under-transformation, please use "
                         "jnp.atleast_1d(scalar).nonzero() instead.")
    if size is None:
        v = _concrete(a)
        if v is None:
            raise _size_error(a, "nonzero")
        return tuple(Array(i.astype(dtypes.default_int_dtype()), False) for i in np.nonzero(v))
    size = _operator_size(size, "nonzero")
    mask = _ravel(lax.ne(a, _const(0, aval.dtype)) if aval.dtype != np.bool_ else a)
    flat, count = _first_true(mask, size)
    fills = fill_value if isinstance(fill_value, (tuple, list)) else (fill_value,) * aval.ndim
    if len(fills) != aval.ndim:
        raise ValueError(f"fill_value must be a scalar or a tuple of length {aval.ndim}; "
                         f"got {fill_value}")
    out, stride = [], aval.size
    for n, fill in zip(aval.shape, fills):
        stride //= n
        idx = lax.rem(lax.div(flat, _const(stride, _INT)), _const(n, _INT)) if n else flat
        idx = lax._convert_element_type(idx, dtypes.default_int_dtype(), False)
        out.append(_fill_tail(idx, count, 0 if fill is None else fill))
    return tuple(out)


def flatnonzero(a, *, size=None, fill_value=None):
    a = asarray_leaf(a)
    return nonzero(_ravel(a) if get_aval(a).ndim != 1 else a, size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    a = asarray_leaf(a)
    nd = get_aval(a).ndim
    idx = nonzero(lax.reshape(a, (1,)) if nd == 0 else a, size=size, fill_value=fill_value)
    out = lax.concatenate([lax.expand_dims(i, (1,)) for i in idx], 1)
    return _slice_axis(out, 0, 0, 1) if nd == 0 else out


def count_nonzero(a, axis=None, keepdims=False):
    from . import sum as jnp_sum
    a = asarray_leaf(a)
    dt = get_aval(a).dtype
    mask = a if dt == np.bool_ else lax.ne(a, _const(0, dt))
    return jnp_sum(mask, axis=axis, keepdims=keepdims)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    condition, a = asarray_leaf(condition), asarray_leaf(a)
    if get_aval(condition).ndim != 1:
        raise ValueError("condition must be a 1D array")
    if get_aval(condition).dtype != np.bool_:
        condition = lax.ne(condition, _const(0, get_aval(condition).dtype))
    if axis is None:
        a, axis = _ravel(a), 0
    axis = canonicalize_axis(axis, get_aval(a).ndim)
    arr = _moveaxis(a, axis, 0)
    nc, n = get_aval(condition).shape[0], get_aval(arr).shape[0]
    if nc > n:
        raise ValueError("condition contains entries that are out of bounds")
    arr = _slice_axis(arr, 0, nc)
    if size is None:
        v = _concrete(condition)
        if v is None:
            raise _size_error(condition, "compress")
        size = int(v.sum())
    size = _operator_size(size, "compress")
    idx, count = _first_true(condition, size)
    rest = get_aval(arr).shape[1:]
    if nc == 0:
        picked = lax.broadcast(_const(0, get_aval(arr).dtype), (size,) + rest)
    else:
        picked = take_along_axis(arr, lax.broadcast_in_dim(idx, (size,) + rest, (0,)), 0)
    return _moveaxis(_fill_tail(picked, count, fill_value), 0, axis)


def extract(condition, arr, *, size=None, fill_value=0):
    return compress(_ravel(asarray_leaf(condition)), _ravel(asarray_leaf(arr)), size=size,
                    fill_value=fill_value)


# ---------------------------------------------------------------- counting

def _add_at(values, idx, length):
    """zeros(length).at[idx].add(values) for 1-D idx, dropping out-of-range indices."""
    inside = lax.bitwise_and(lax.ge(idx, _const(0, get_aval(idx).dtype)),
                             lax.lt(idx, _const(length, get_aval(idx).dtype)))
    values = lax.select(inside, values, _full_like(values, 0))
    idx = lax.clamp(_const(0, get_aval(idx).dtype), idx, _const(builtins.max(length - 1, 0), get_aval(idx).dtype))
    if length == 0 or get_aval(idx).shape[0] == 0:
        return lax.broadcast(_const(0, get_aval(values).dtype), (length,))
    return scatter_add_along_axis(values, idx, 0, length)


def bincount(x, weights=None, minlength=0, *, length=None, out_sharding=None):
    x = asarray_leaf(x)
    aval = get_aval(x)
    if dtypes.kind(aval.dtype) not in "iu":
        raise TypeError(f"x argument to bincount must have an integer type; got {aval.dtype}")
    if aval.ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError(f"minlength must not be negative, got {minlength}")
    if length is None:
        v = _concrete(x)
        if v is None:
            raise ConcretizationTypeError(x, "The error occurred because of argument 'x' of "
                                             "jnp.bincount. To avoid this error, pass a static "
                                             "`length` argument.")
        length = builtins.max(minlength, int(v.max()) + 1 if v.size else 0)
    length = operator.index(length)
    if weights is None:
        weights = lax.broadcast(_const(1, dtypes.default_int_dtype()), aval.shape)
    else:
        weights = asarray_leaf(weights)
        if get_aval(weights).shape != aval.shape:
            raise ValueError(f"shape of weights must match shape of x; got "
                             f"weights.shape={get_aval(weights).shape} x.shape={aval.shape}")
        if get_aval(weights).dtype == np.bool_:
            weights = lax._convert_element_type(weights, dtypes.default_int_dtype(), False)
    x = lax.max(x, _const(0, aval.dtype))   # negative values count in bin 0, as JAX
    return _add_at(weights, x, length)


# ---------------------------------------------------------------- histograms

def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    from . import linspace
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    a = asarray_leaf(a)
    dt = to_inexact_dtype(get_aval(a).dtype)
    if np.ndim(bins) == 1:
        return lax._convert_element_type(asarray_leaf(bins), dt, False)
    nbins = operator.index(bins)
    if range is None:
        lo, hi = lax.reduce_min(_ravel(a), (0,)), lax.reduce_max(_ravel(a), (0,))
    else:
        if np.shape(range) != (2,):
            raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
        lo, hi = (asarray_leaf(r) for r in range)
    lo, hi = (lax._convert_element_type(asarray_leaf(r), dt, False) for r in (lo, hi))
    flat = lax.eq(lo, hi)
    lo = lax.select(flat, lax.sub(lo, _const(0.5, dt)), lo)
    hi = lax.select(flat, lax.add(hi, _const(0.5, dt)), hi)
    return linspace(lo, hi, nbins + 1, dtype=dt)


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    a = _ravel(asarray_leaf(a))
    edges = histogram_bin_edges(a, bins, range, weights)
    ne = get_aval(edges).shape[0]
    if weights is None:
        weights = _full_like(a, 1, get_aval(edges).dtype)
    else:
        weights = _ravel(asarray_leaf(weights))
        if get_aval(weights).shape != get_aval(a).shape:
            raise ValueError("weights should have the same shape as a.")
        # Counts are inexact, as JAX promotes a and weights together to an inexact dtype.
        dt, _ = dtypes.promote(dtypes.dtype_and_weak(a), dtypes.dtype_and_weak(weights))
        dt = to_inexact_dtype(dt)
        weights = lax._convert_element_type(weights, dt, False)
    idx = searchsorted(edges, a, side="right")
    last = lax.broadcast(lax.reshape(_slice_axis(edges, ne - 1, ne), ()), get_aval(a).shape)
    idx = lax.select(lax.eq(lax._convert_element_type(a, get_aval(edges).dtype, False), last),
                     _full_like(idx, ne - 1), idx)
    counts = _slice_axis(_add_at(weights, idx, ne), 1, ne)
    if density:
        from . import diff, sum as jnp_sum
        counts = counts / diff(edges) / jnp_sum(counts)
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    sample = asarray_leaf(sample)
    n, d = get_aval(sample).shape
    if weights is not None:
        weights = asarray_leaf(weights)
        if get_aval(weights).shape != (n,):
            raise ValueError("should have one weight for each sample.")
    if isinstance(bins, int) or np.ndim(bins) == 0 and not isinstance(bins, (list, tuple)):
        bins = [bins] * d
    if len(bins) != d:
        raise ValueError("should be a bin for each dimension.")
    ranges = [None] * d if range is None else range
    flat, nbins, edges_by_dim = None, [], []
    for i in builtins.range(d):
        col = lax.reshape(_slice_axis(sample, i, i + 1, 1), (n,))
        edges = histogram_bin_edges(col, bins[i], ranges[i], weights)
        ne = get_aval(edges).shape[0]
        idx = searchsorted(edges, col, side="right")
        last = lax.broadcast(lax.reshape(_slice_axis(edges, ne - 1, ne), ()), (n,))
        idx = lax.select(lax.eq(lax._convert_element_type(col, get_aval(edges).dtype, False), last),
                         lax.sub(idx, _const(1, _INT)), idx)
        flat = idx if flat is None else lax.add(lax.mul(flat, _const(ne + 1, _INT)), idx)
        nbins.append(ne + 1)
        edges_by_dim.append(edges)
    total = int(np.prod(nbins))
    hist = bincount(flat, weights, length=total)
    hist = lax.reshape(hist, nbins)
    hist = lax.slice(hist, [1] * d, [m - 1 for m in nbins])
    if density:
        from . import diff, sum as jnp_sum
        hist = lax._convert_element_type(hist, dtypes.default_float_dtype(), False)
        hist = hist / jnp_sum(hist)
        for i, e in enumerate(edges_by_dim):
            shape = [1] * d
            shape[i] = get_aval(e).shape[0] - 1
            hist = hist / lax.reshape(diff(e), shape)
    return hist, edges_by_dim


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    x, y = asarray_leaf(x), asarray_leaf(y)
    from . import promote_dtypes
    x, y = promote_dtypes(x, y)
    sample = lax.concatenate([lax.expand_dims(x, (1,)), lax.expand_dims(y, (1,))], 1)
    try:
        nb = len(bins)
    except TypeError:
        nb = 1
    if nb != 1 and nb != 2:
        bins = [bins, bins]   # one array of edges for both
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]


# ---------------------------------------------------------------- order statistics

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_operands(a, q):
    # As in JAX, the result's dtype is a's inexact dtype; q is computed in it.
    a, q = asarray_leaf(a), asarray_leaf(q)
    dt = to_inexact_dtype(get_aval(a).dtype)
    return (lax._convert_element_type(a, dt, False), lax._convert_element_type(q, dt, False))


def _quantile(a, q, axis, method, keepdims, squash_nans, name):
    if method not in _METHODS:
        raise ValueError(f"method can only be 'linear', 'lower', 'higher', 'midpoint', or "
                         f"'nearest'; got {method!r}")
    a, q = _quantile_operands(a, q)
    aval, q_shape = get_aval(a), get_aval(q).shape
    if len(q_shape) > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q_shape}")
    axes = reduction_axes(axis, aval.ndim)
    kept = [d for d in builtins.range(aval.ndim) if d not in axes]
    keep_shape = tuple(1 if d in axes else s for d, s in enumerate(aval.shape)) if keepdims else \
        tuple(aval.shape[d] for d in kept)
    n = int(np.prod([aval.shape[d] for d in axes], dtype=np.int64))
    kept_shape = tuple(aval.shape[d] for d in kept)
    out_shape = q_shape + keep_shape

    def _compute(a, q):
        # The reduced axes become one leading axis, sorted; q picks entries along it.
        x = lax.reshape(lax.transpose(a, tuple(axes) + tuple(kept)), (n,) + kept_shape)
        m = int(np.prod(q_shape, dtype=np.int64))
        qf = lax.reshape(q, (m,))
        full = (m,) + kept_shape
        dt = aval.dtype
        if squash_nans:
            valid = lax.bitwise_not(lax.ne(x, x))
            counts = lax.reduce_sum(lax._convert_element_type(valid, dt, False), (0,))
            last = lax.broadcast_in_dim(lax.sub(counts, _const(1, dt)), full, tuple(builtins.range(1, len(full))))
        else:
            has_nan = lax.reduce_or(lax.ne(x, x), (0,))
            x = lax.select(lax.broadcast_in_dim(has_nan, get_aval(x).shape, tuple(builtins.range(1, len(full)))),
                           _full_like(x, np.nan), x)
            last = lax.broadcast(_const(n - 1, dt), full)
        xs = lax.sort(x, dimension=0)
        pos = lax.mul(lax.broadcast_in_dim(qf, full, (0,)), last)
        low, high = lax.floor(pos), lax.ceil(pos)
        high_weight = lax.sub(pos, low)
        top = lax.broadcast(_const(n - 1, dt), full)
        zero = lax.broadcast(_const(0, dt), full)
        low_i = lax._convert_element_type(lax.clamp(zero, low, top), _INT, False)
        high_i = lax._convert_element_type(lax.clamp(zero, high, top), _INT, False)
        low_v, high_v = take_along_axis(xs, low_i, 0), take_along_axis(xs, high_i, 0)
        if method == "linear":
            out = lax.add(lax.mul(low_v, lax.sub(_const(1, dt), high_weight)), lax.mul(high_v, high_weight))
        elif method == "lower":
            out = low_v
        elif method == "higher":
            out = high_v
        elif method == "midpoint":
            out = lax.mul(lax.add(low_v, high_v), _const(0.5, dt))
        else:
            out = lax.select(lax.le(high_weight, _const(0.5, dt)), low_v, high_v)
        return lax.reshape(out, out_shape)
    if n == 0:
        return lax.broadcast(_const(np.nan, aval.dtype), out_shape)
    return _jit(name, _compute, a, q)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             weights=None):
    _check_quantile_args(out, overwrite_input, weights, "quantile")
    return _quantile(a, q, axis, method, keepdims, False, "quantile")


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                weights=None):
    _check_quantile_args(out, overwrite_input, weights, "nanquantile")
    return _quantile(a, q, axis, method, keepdims, True, "nanquantile")


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               weights=None, out_sharding=None):
    _check_quantile_args(out, overwrite_input, weights, "percentile")
    a, q = _quantile_operands(a, q)
    return _quantile(a, lax.div(q, _const(100, get_aval(q).dtype)), axis, method, keepdims, False,
                     "percentile")


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  weights=None):
    _check_quantile_args(out, overwrite_input, weights, "nanpercentile")
    a, q = _quantile_operands(a, q)
    return _quantile(a, lax.div(q, _const(100, get_aval(q).dtype)), axis, method, keepdims, True,
                     "nanpercentile")


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _check_quantile_args(out, overwrite_input, None, "median")
    return _quantile(a, 0.5, axis, "midpoint", keepdims, False, "median")


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _check_quantile_args(out, overwrite_input, None, "nanmedian")
    return _quantile(a, 0.5, axis, "midpoint", keepdims, True, "nanmedian")


def _check_quantile_args(out, overwrite_input, weights, name):
    if out is not None:
        raise ValueError(f"jnp.{name}() does not support the 'out' argument")
    if overwrite_input:
        raise ValueError(f"jnp.{name}() does not support overwrite_input=True")
    if weights is not None:
        raise NotImplementedError(f"jnp.{name}(weights=...) is not implemented")


# ---------------------------------------------------------------- methods

def _install_methods():
    from ..array import Array as _Array

    def sort_method(self, axis=-1, *, kind=None, order=None, stable=True, descending=False):
        return sort(self, axis, kind=kind, order=order, stable=stable, descending=descending)

    def argsort_method(self, axis=-1, *, kind=None, order=None, stable=True, descending=False):
        return argsort(self, axis, kind=kind, order=order, stable=stable, descending=descending)

    def nonzero_method(self, *, size=None, fill_value=None):
        return nonzero(self, size=size, fill_value=fill_value)

    for cls in (_Array, core.Tracer):
        cls.sort = sort_method
        cls.argsort = argsort_method
        cls.nonzero = nonzero_method


_install_methods()

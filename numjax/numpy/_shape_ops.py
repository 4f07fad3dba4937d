"""Shape manipulation and array creation helpers of jax.numpy, over lax (no gathers)."""
import builtins
import operator

import numpy as np

from .. import core, dtypes, lax
from ..array import Array
from ..core import get_aval
from . import (_atleast_1d_one, _atleast_2d_one, _concrete_scalar, _shape, arange, array, asarray,
               broadcast_to, concatenate, expand_dims, full, linspace,
               power, ravel, reshape, stack, transpose, where, zeros, zeros_like, moveaxis, squeeze)
from ._util import asarray_leaf, canonicalize_axis, concrete_dim, promote_dtypes

__all__ = [
    "flip", "fliplr", "flipud", "roll", "rollaxis", "rot90", "tile", "repeat", "pad", "split",
    "array_split", "hsplit", "vsplit", "dsplit", "atleast_1d", "atleast_2d", "atleast_3d",
    "column_stack", "dstack", "block", "append", "insert", "delete", "resize", "trim_zeros",
    "concat", "permute_dims", "unstack", "select", "piecewise", "choose", "apply_along_axis",
    "apply_over_axes", "logspace", "geomspace", "meshgrid", "mgrid", "ogrid", "tri", "tril",
    "triu", "diag", "diagflat", "diagonal", "fill_diagonal", "indices", "ix_", "tril_indices",
    "triu_indices", "tril_indices_from", "triu_indices_from", "diag_indices",
    "diag_indices_from", "mask_indices", "fromfunction", "copy", "frombuffer", "fromstring",
    "fromiter", "unravel_index", "ravel_multi_index", "vander", "r_", "c_", "s_", "index_exp",
]


def _const(v, like):
    return Array(np.asarray(v, get_aval(like).dtype), False)


def _take_slice(a, start, stop, axis, step=1):
    """a[start:stop:step] along ``axis`` (static bounds)."""
    aval = get_aval(a)
    begin, end, stride = builtins.slice(start, stop, step).indices(aval.shape[axis])
    starts = [0] * aval.ndim
    limits = list(aval.shape)
    strides = [1] * aval.ndim
    if stride < 0:
        a = lax.rev(a, (axis,))
        n = aval.shape[axis]
        begin, end, stride = n - 1 - begin, n - 1 - end, -stride
    starts[axis], limits[axis], strides[axis] = begin, builtins.max(begin, end), stride
    return lax.slice(a, starts, limits, strides)


# ---------------------------------------------------------------- reordering

def flip(m, axis=None):
    m = asarray_leaf(m)
    nd = get_aval(m).ndim
    if axis is None:
        axes = tuple(range(nd))
    else:
        axes = tuple(canonicalize_axis(a, nd) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    return lax.rev(m, axes) if axes else m


def fliplr(m):
    m = asarray_leaf(m)
    if get_aval(m).ndim < 2:
        raise ValueError("fliplr requires an array of at least 2 dimensions")
    return flip(m, 1)


def flipud(m):
    m = asarray_leaf(m)
    if get_aval(m).ndim < 1:
        raise ValueError("flipud requires an array of at least 1 dimension")
    return flip(m, 0)


def _roll_axis(a, shift, axis):
    n = get_aval(a).shape[axis]
    if n == 0:
        return a
    if isinstance(shift, core.Tracer):
        shift = lax._convert_element_type(shift, np.int32, False)
        start = lax.rem(lax.sub(_const(n, shift), lax.rem(shift, _const(n, shift))), _const(n, shift))
        start = lax.rem(start, _const(n, shift))
        doubled = concatenate([a, a], axis)
        starts = [_const(0, shift)] * get_aval(a).ndim
        starts[axis] = start
        sizes = list(get_aval(a).shape)
        return lax.dynamic_slice(doubled, starts, sizes)
    s = operator.index(shift) % n
    if s == 0:
        return a
    return concatenate([_take_slice(a, n - s, None, axis), _take_slice(a, 0, n - s, axis)], axis)


def roll(a, shift, axis=None):
    a = asarray_leaf(a)
    if isinstance(shift, Array):
        shift = np.asarray(shift).tolist()
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), get_aval(a).shape)
    nd = get_aval(a).ndim
    shifts = shift if isinstance(shift, (tuple, list)) else None
    axes = axis if isinstance(axis, (tuple, list)) else None
    if shifts is None and axes is None:
        return _roll_axis(a, shift, canonicalize_axis(axis, nd))
    shifts = shifts if shifts is not None else [shift] * len(axes)
    axes = axes if axes is not None else [axis] * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError("len(shift) must match len(axis)")
    for s, ax in zip(shifts, axes):
        a = _roll_axis(a, s, canonicalize_axis(ax, nd))
    return a


def rollaxis(a, axis, start=0):
    a = asarray_leaf(a)
    nd = get_aval(a).ndim
    axis = canonicalize_axis(axis, nd)
    if not -nd <= start <= nd:
        raise ValueError(f"start={start} must satisfy {-nd}<=start<={nd}")
    start = start + nd if start < 0 else start
    if start > axis:
        start -= 1
    return moveaxis(a, axis, start)


def rot90(m, k=1, axes=(0, 1)):
    m = asarray_leaf(m)
    nd = get_aval(m).ndim
    if nd < 2:
        raise ValueError(f"rot90 requires its first argument to have ndim at least two, but got {nd}")
    ax1, ax2 = (canonicalize_axis(a, nd) for a in axes)
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, ax1), ax2)
    perm = list(range(nd))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return transpose(flip(m, ax2), perm)
    return flip(transpose(m, perm), ax2)


def permute_dims(a, /, axes):
    return transpose(a, axes)


def unstack(x, /, *, axis=0):
    x = asarray_leaf(x)
    nd = get_aval(x).ndim
    if nd == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was passed.")
    axis = canonicalize_axis(axis, nd)
    return tuple(lax.squeeze(_take_slice(x, i, i + 1, axis), (axis,)) for i in range(get_aval(x).shape[axis]))


# ---------------------------------------------------------------- repetition

def tile(A, reps):
    A = asarray_leaf(A)
    reps = (operator.index(reps),) if np.ndim(reps) == 0 else tuple(operator.index(r) for r in reps)
    shape = get_aval(A).shape
    nd = builtins.max(len(shape), len(reps))
    A = reshape(A, (1,) * (nd - len(shape)) + shape)
    reps = (1,) * (nd - len(reps)) + reps
    shape = get_aval(A).shape
    # Broadcast a new leading axis per dim, then fold it in.
    big = lax.broadcast_in_dim(A, tuple(x for r, s in zip(reps, shape) for x in (r, s)),
                               tuple(2 * i + 1 for i in range(nd)))
    return reshape(big, tuple(r * s for r, s in zip(reps, shape)))


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    a = asarray_leaf(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonicalize_axis(axis, get_aval(a).ndim)
    shape = get_aval(a).shape
    if isinstance(repeats, core.Tracer):
        return _repeat_traced(a, repeats, axis, total_repeat_length)
    reps = np.asarray(repeats)
    if reps.dtype.kind not in "iub":
        raise TypeError(f"jnp.repeat repeats must be integers, got {repeats!r} of dtype {reps.dtype}; "
                        "broadcast_in_dim shape must have every element be an integer type.")
    if reps.ndim == 0:
        r = int(reps)
        big = lax.broadcast_in_dim(a, shape[:axis + 1] + (r,) + shape[axis + 1:],
                                   tuple(range(axis + 1)) + tuple(range(axis + 2, len(shape) + 1)))
        out = reshape(big, shape[:axis] + (shape[axis] * r,) + shape[axis + 1:])
    else:
        reps = np.broadcast_to(reps, (shape[axis],))
        pieces = [repeat(_take_slice(a, i, i + 1, axis), int(r), axis) for i, r in enumerate(reps) if r]
        out = concatenate(pieces, axis) if pieces else _take_slice(a, 0, 0, axis)
    if total_repeat_length is not None:
        n = get_aval(out).shape[axis]
        if n >= total_repeat_length:
            out = _take_slice(out, 0, total_repeat_length, axis)
        else:
            last = _take_slice(out, n - 1, n, axis) if n else zeros_like(_take_slice(a, 0, 1, axis))
            out = concatenate([out, repeat(last, total_repeat_length - n, axis)], axis)
    return out


def _repeat_traced(a, repeats, axis, total):
    if total is None:
        from ..errors import ConcretizationTypeError
        raise ConcretizationTypeError(repeats, "jnp.repeat with a non-constant `repeats` needs "
                                      "`total_repeat_length` to be specified.")
    from . import cumsum, take
    n = get_aval(a).shape[axis]
    repeats = broadcast_to(asarray_leaf(repeats), (n,))
    ends = cumsum(repeats)
    pos = lax.iota(np.int32, total)
    # Source index of output slot i: how many cumulative ends are <= i (clamped to the last).
    idx = lax.reduce_sum(lax._convert_element_type(
        lax.le(lax.broadcast_in_dim(lax._convert_element_type(ends, np.int32, False), (total, n), (1,)),
               lax.broadcast_in_dim(pos, (total, n), (0,))), np.int32, False), (1,))
    idx = lax.min(idx, Array(np.asarray(n - 1, np.int32)))
    return take(a, idx, axis=axis)


def resize(a, new_shape):
    a = asarray_leaf(a)
    new_shape = _shape(new_shape)
    if builtins.any(d < 0 for d in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    flat = ravel(a)
    size = int(np.prod(new_shape))
    n = get_aval(flat).shape[0]
    if n == 0 or size == 0:
        return zeros(new_shape, get_aval(a).dtype)
    reps = -(-size // n)
    return reshape(_take_slice(tile(flat, reps), 0, size, 0), new_shape)


# ---------------------------------------------------------------- padding

def _pad_width(pad_width, nd):
    pw = np.asarray(pad_width)
    if dtypes.kind(pw.dtype) not in "iu":
        raise TypeError(f"`pad_width` must be of integral type, got {pad_width!r}")
    pw = np.broadcast_to(pw, (nd, 2)) if pw.ndim < 2 or pw.shape != (nd, 2) else pw
    if (pw < 0).any():
        raise ValueError("index can't contain negative values")
    return [(int(lo), int(hi)) for lo, hi in pw]


def _per_axis_pair(values, nd):
    v = np.asarray(values, dtype=object)
    v = np.broadcast_to(v, (nd, 2)) if v.ndim < 2 else v
    return [(v[i][0], v[i][1]) for i in range(nd)]


def pad(array, pad_width, mode="constant", **kwargs):
    a = asarray_leaf(array)
    nd = get_aval(a).ndim
    if callable(mode):
        raise NotImplementedError("jnp.pad with a callable mode is not supported by numjax")
    pw = _pad_width(pad_width, nd)
    if mode == "constant":
        values = kwargs.get("constant_values", 0)
        if isinstance(values, (core.Tracer, Array)) and get_aval(values).ndim == 0:
            values = [[values, values]] * nd
        pairs = _per_axis_pair(values, nd) if not isinstance(values, (core.Tracer, Array)) else \
            [(values[i % get_aval(values).shape[0]][0], values[i % get_aval(values).shape[0]][1])
             for i in range(nd)]
        for ax, ((lo, hi), (vlo, vhi)) in enumerate(zip(pw, pairs)):
            a = _pad_constant_axis(a, ax, lo, hi, vlo, vhi)
        return a
    if mode == "empty":
        return pad(a, pw, "constant")
    if mode == "edge":
        return _pad_by_axis(a, pw, _edge_pieces)
    if mode in ("reflect", "symmetric"):
        reflect_type = kwargs.get("reflect_type", "even")
        return _pad_by_axis(a, pw, lambda x, ax, lo, hi: _reflect_pieces(x, ax, lo, hi, mode, reflect_type))
    if mode == "wrap":
        return _pad_by_axis(a, pw, _wrap_pieces)
    if mode in ("maximum", "minimum", "mean", "median"):
        stat_length = kwargs.get("stat_length", None)
        lengths = _per_axis_pair(stat_length, nd) if stat_length is not None else [(None, None)] * nd
        return _pad_by_axis(a, pw, lambda x, ax, lo, hi: _stat_pieces(x, ax, lo, hi, mode, lengths[ax]))
    if mode == "linear_ramp":
        ends = _per_axis_pair(kwargs.get("end_values", 0), nd)
        return _pad_by_axis(a, pw, lambda x, ax, lo, hi: _ramp_pieces(x, ax, lo, hi, ends[ax]))
    raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad. Use one of 'constant', "
                              "'edge', 'reflect', 'symmetric', 'wrap', 'maximum', 'minimum', 'mean', "
                              "'median', 'linear_ramp' or 'empty'.")


def _pad_constant_axis(a, ax, lo, hi, vlo, vhi):
    nd = get_aval(a).ndim
    dt = get_aval(a).dtype
    if not (lo or hi):
        return a

    def cfg(l, h):
        c = [(0, 0, 0)] * nd
        c[ax] = (l, h, 0)
        return c
    vlo, vhi = (lax._convert_element_type(asarray_leaf(v), dt, False) for v in (vlo, vhi))
    if vlo is vhi or (isinstance(vlo, Array) and isinstance(vhi, Array) and np.array_equal(vlo._value, vhi._value)):
        return lax.pad(a, vlo, cfg(lo, hi))
    return lax.pad(lax.pad(a, vlo, cfg(lo, 0)), vhi, cfg(0, hi))


def _pad_by_axis(a, pw, pieces_fn):
    for ax, (lo, hi) in enumerate(pw):
        if lo or hi:
            if get_aval(a).shape[ax] == 0:
                raise ValueError("can't extend empty axis using modes other than 'constant' or 'empty'")
            before, after = pieces_fn(a, ax, lo, hi)
            a = concatenate([p for p in (before, a, after) if p is not None], ax)
    return a


def _repeat_slice(a, idx, count, ax):
    return repeat(_take_slice(a, idx, idx + 1, ax), count, ax) if count else None


def _edge_pieces(a, ax, lo, hi):
    n = get_aval(a).shape[ax]
    return _repeat_slice(a, 0, lo, ax), _repeat_slice(a, n - 1, hi, ax)


def _reflect_pieces(a, ax, lo, hi, mode, reflect_type):
    # Pad in rounds of at most one period, each reflecting what the last round produced.
    n = get_aval(a).shape[ax]
    if n == 1:
        return _edge_pieces(a, ax, lo, hi)
    x, added_lo, added_hi = a, 0, 0
    period = n - 1 if mode == "reflect" else n
    off = 1 if mode == "reflect" else 0
    while lo or hi:
        cur = get_aval(x).shape[ax]
        take_lo, take_hi = builtins.min(lo, period), builtins.min(hi, period)
        before = flip(_take_slice(x, off, off + take_lo, ax), ax) if take_lo else None
        after = flip(_take_slice(x, cur - off - take_hi, cur - off, ax), ax) if take_hi else None
        if reflect_type == "odd":
            if before is not None:
                edge = _take_slice(x, 0, 1, ax)
                before = lax.sub(lax.mul(_const(2, edge), edge), before)
            if after is not None:
                edge = _take_slice(x, cur - 1, cur, ax)
                after = lax.sub(lax.mul(_const(2, edge), edge), after)
        x = concatenate([p for p in (before, x, after) if p is not None], ax)
        lo, hi = lo - take_lo, hi - take_hi
        added_lo, added_hi = added_lo + take_lo, added_hi + take_hi
    total = get_aval(x).shape[ax]
    return (_take_slice(x, 0, added_lo, ax) if added_lo else None,
            _take_slice(x, total - added_hi, total, ax) if added_hi else None)


def _wrap_pieces(a, ax, lo, hi):
    n = get_aval(a).shape[ax]
    reps = -(-lo // n) + 1 + -(-hi // n)
    big = tile_axis(a, reps, ax)
    start = (-(-lo // n)) * n - lo
    before = _take_slice(big, start, start + lo, ax) if lo else None
    s2 = (-(-lo // n) + 1) * n
    after = _take_slice(big, s2, s2 + hi, ax) if hi else None
    return before, after


def tile_axis(a, reps, ax):
    r = [1] * get_aval(a).ndim
    r[ax] = reps
    return tile(a, r)


def _stat_pieces(a, ax, lo, hi, mode, lengths):
    from . import max as _max, min as _min, mean as _mean
    n = get_aval(a).shape[ax]
    reducers = {"maximum": _max, "minimum": _min, "mean": _mean}
    if mode == "median":
        from . import median as _median
        reducers["median"] = _median
    fn = reducers[mode]
    l_lo = n if lengths[0] is None else builtins.max(1, builtins.min(int(lengths[0]), n))
    l_hi = n if lengths[1] is None else builtins.max(1, builtins.min(int(lengths[1]), n))

    def stat(piece):
        v = fn(piece, axis=ax, keepdims=True)
        if mode in ("mean", "median") and dtypes.kind(get_aval(a).dtype) in "iub":
            v = lax._convert_element_type(lax.round(v, 1), get_aval(a).dtype, False)
        return v
    before = repeat(stat(_take_slice(a, 0, l_lo, ax)), lo, ax) if lo else None
    after = repeat(stat(_take_slice(a, n - l_hi, n, ax)), hi, ax) if hi else None
    return before, after


def _ramp_pieces(a, ax, lo, hi, ends):
    n = get_aval(a).shape[ax]
    dt = get_aval(a).dtype

    def ramp(edge, end, count, reverse):
        # count values going linearly from `end` towards `edge` (edge excluded).
        frac = np.arange(count, dtype=np.float64) / count
        if reverse:
            frac = frac[::-1]
        shape = [1] * get_aval(a).ndim
        shape[ax] = count
        f = Array(frac.reshape(shape).astype(dtypes.canonicalize_dtype(np.float64)), False)
        edge_f = lax._convert_element_type(edge, get_aval(f).dtype, False)
        end_f = lax._convert_element_type(asarray_leaf(end), get_aval(f).dtype, False)
        vals = lax.add(end_f, lax.mul(f, lax.sub(edge_f, end_f)))
        return lax._convert_element_type(vals, dt, False)
    before = ramp(_take_slice(a, 0, 1, ax), ends[0], lo, False) if lo else None
    after = ramp(_take_slice(a, n - 1, n, ax), ends[1], hi, True) if hi else None
    return before, after


# ---------------------------------------------------------------- splitting

def _split(name, ary, indices_or_sections, axis, even):
    ary = asarray_leaf(ary)
    axis = canonicalize_axis(axis, get_aval(ary).ndim, error=IndexError)   # JAX's class here
    n = get_aval(ary).shape[axis]
    if isinstance(indices_or_sections, (core.Tracer,)):
        from ..errors import ConcretizationTypeError
        raise ConcretizationTypeError(indices_or_sections, f"jnp.{name} needs static split points")
    if np.ndim(indices_or_sections) == 0:
        sections = _section_count(name, indices_or_sections)
        if sections <= 0:
            # JAX divides by the count here: its class, with the message NumPy gives.
            raise ZeroDivisionError(f"number sections must be larger than 0, got {sections} in jnp.{name}.")
        if even and n % sections:
            raise ValueError(f"array split does not result in an equal division: rest is {n % sections} "
                             f"(axis of size {n} into {sections} sections). Use jnp.array_split for "
                             "unequal parts.")
        size, extra = divmod(n, sections)
        points = np.cumsum([0] + [size + 1] * extra + [size] * (sections - extra))
    else:
        idx = [operator.index(i) for i in np.asarray(indices_or_sections).tolist()]
        points = [0] + idx + [n]
    out = []
    for lo, hi in zip(points[:-1], points[1:]):
        lo_c = builtins.min(builtins.max(int(lo) + (n if lo < 0 else 0), 0), n)
        hi_c = builtins.min(builtins.max(int(hi) + (n if hi < 0 else 0), 0), n)
        out.append(_take_slice(ary, lo_c, builtins.max(lo_c, hi_c), axis))
    return out


def _section_count(name, sections):
    """The number of sections: an int, or an integral float (JAX converts with int())."""
    try:
        return operator.index(sections)
    except TypeError:
        if isinstance(sections, (float, np.floating)) and float(sections).is_integer():
            return int(sections)
        raise TypeError(f"jnp.{name} indices_or_sections must be an integer or a sequence of split "
                        f"points, got {sections!r}.") from None


def split(ary, indices_or_sections, axis=0):
    return _split("split", ary, indices_or_sections, axis, True)


def array_split(ary, indices_or_sections, axis=0):
    return _split("array_split", ary, indices_or_sections, axis, False)


def hsplit(ary, indices_or_sections):
    ary = asarray_leaf(ary)
    if get_aval(ary).ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, 1 if get_aval(ary).ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    ary = asarray_leaf(ary)
    if get_aval(ary).ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    ary = asarray_leaf(ary)
    if get_aval(ary).ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


# ---------------------------------------------------------------- rank promotion and joining

def _many(fn, arys):
    out = [fn(a) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys):
    return _many(_atleast_1d_one, arys)


def atleast_2d(*arys):
    return _many(_atleast_2d_one, arys)


def _atleast_3d_one(x):
    x = asarray_leaf(x)
    nd = get_aval(x).ndim
    if nd == 0:
        return reshape(x, (1, 1, 1))
    if nd == 1:
        return lax.expand_dims(lax.expand_dims(x, (0,)), (2,))
    if nd == 2:
        return lax.expand_dims(x, (2,))
    return x


def atleast_3d(*arys):
    return _many(_atleast_3d_one, arys)


def column_stack(tup):
    arrs = []
    for a in tup:
        a = asarray_leaf(a)
        arrs.append(lax.expand_dims(a, (1,)) if get_aval(a).ndim < 2 else a)
    return concatenate(arrs, 1)


def dstack(tup, dtype=None):
    return concatenate([_atleast_3d_one(a) for a in tup], 2, dtype)


def concat(arrays, /, *, axis=0):
    return concatenate(arrays, axis)


def _list_depth(x):
    return 1 + _list_depth(x[0]) if isinstance(x, list) and x else (1 if isinstance(x, list) else 0)


def block(arrays):
    depth = _list_depth(arrays)

    def rec(x, level):
        if isinstance(x, tuple):
            raise TypeError("jnp.block does not allow tuples")
        if not isinstance(x, list):
            return asarray_leaf(x)
        if not x:
            raise ValueError("Lists cannot be empty")
        parts = [rec(v, level + 1) for v in x]
        nd = builtins.max([get_aval(p).ndim for p in parts] + [depth])
        parts = [reshape(p, (1,) * (nd - get_aval(p).ndim) + get_aval(p).shape) for p in parts]
        # The innermost lists join along the last axis, outer ones along earlier axes.
        return concatenate(parts, -(depth - level))
    return rec(arrays, 0)


def append(arr, values, axis=None):
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


def _static_indices(obj, n, name):
    if isinstance(obj, core.Tracer):
        from ..errors import ConcretizationTypeError
        raise ConcretizationTypeError(obj, f"jnp.{name} needs static indices with numjax")
    if isinstance(obj, builtins.slice):
        return np.arange(n)[obj]
    idx = np.asarray(obj)
    if idx.dtype == np.bool_:
        return np.nonzero(idx)[0]
    return idx


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    a = asarray_leaf(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonicalize_axis(axis, get_aval(a).ndim)
    n = get_aval(a).shape[axis]
    idx = _static_indices(obj, n, "delete")
    idx = np.where(idx < 0, idx + n, idx).ravel()
    if ((idx < 0) | (idx >= n)).any():
        raise IndexError(f"index out of bounds for axis {axis} with size {n}")
    keep = [i for i in range(n) if i not in set(idx.tolist())]
    return _gather_static(a, keep, axis)


def _gather_static(a, positions, axis):
    """a[positions] along axis for a static list, as runs of slices."""
    pieces = []
    start = prev = None
    for p in positions:
        if start is not None and p == prev + 1:
            prev = p
            continue
        if start is not None:
            pieces.append(_take_slice(a, start, prev + 1, axis))
        start = prev = p
    if start is not None:
        pieces.append(_take_slice(a, start, prev + 1, axis))
    return concatenate(pieces, axis) if pieces else _take_slice(a, 0, 0, axis)


def insert(arr, obj, values, axis=None):
    a = asarray_leaf(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonicalize_axis(axis, get_aval(a).ndim)
    n = get_aval(a).shape[axis]
    values = asarray_leaf(values)
    values = lax._convert_element_type(values, get_aval(a).dtype, False)
    scalar_obj = np.ndim(obj) == 0 and not isinstance(obj, builtins.slice)
    idx = np.atleast_1d(_static_indices(obj, n + 1, "insert"))
    idx = np.where(idx < 0, idx + n, idx)
    if ((idx < 0) | (idx > n)).any():
        raise IndexError(f"index {obj} is out of bounds for axis {axis} with size {n}")
    shape = list(get_aval(a).shape)
    vals = values
    if scalar_obj:
        # A scalar index inserts `values` as a block along axis (numpy moves axis 0 of values there).
        v_nd = get_aval(vals).ndim
        if v_nd == get_aval(a).ndim and v_nd:
            vals = moveaxis(vals, 0, axis)
        else:
            vals = expand_dims(vals, axis) if v_nd < get_aval(a).ndim else vals
        count = get_aval(vals).shape[axis] if get_aval(vals).ndim == len(shape) else 1
        shape[axis] = count
        vals = broadcast_to(vals, shape)
        blocks = [vals]
    else:
        shape[axis] = len(idx)
        vals = broadcast_to(vals, tuple(shape))
        blocks = [_take_slice(vals, j, j + 1, axis) for j in range(len(idx))]
    order = np.argsort(idx, kind="stable")
    pieces, prev = [], 0
    for j in order:
        pos = int(idx[j])
        if pos > prev:
            pieces.append(_take_slice(a, prev, pos, axis))
        pieces.append(blocks[j] if not scalar_obj else blocks[0])
        prev = pos
    if prev < n:
        pieces.append(_take_slice(a, prev, n, axis))
    return concatenate(pieces, axis)


def trim_zeros(filt, trim="fb"):
    f = asarray_leaf(filt)
    if isinstance(f, core.Tracer):
        from ..errors import ConcretizationTypeError
        raise ConcretizationTypeError(f, "jnp.trim_zeros needs a concrete array (its output "
                                      "shape depends on the values)")
    v = np.asarray(f)
    nz = np.nonzero(v)[0]
    if nz.size == 0:
        return _take_slice(f, 0, 0, 0)
    start = nz[0] if "f" in trim.lower() else 0
    stop = nz[-1] + 1 if "b" in trim.lower() else v.shape[0]
    return _take_slice(f, int(start), int(stop), 0)


# ---------------------------------------------------------------- selection

def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs {len(choicelist)})")
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    conds = [asarray_leaf(c) for c in condlist]
    for c in conds:
        if get_aval(c).dtype != np.bool_:
            raise ValueError(f"condlist must be a list of boolean arrays, got {get_aval(c).dtype}")
    out = default
    for c, v in zip(conds[::-1], list(choicelist)[::-1]):
        out = where(c, v, out)
    return asarray_leaf(out) if not isinstance(out, (core.Tracer, Array)) else out


def piecewise(x, condlist, funclist, *args, **kw):
    x = asarray_leaf(x)
    condlist = [asarray_leaf(c) for c in (condlist if isinstance(condlist, (list, tuple)) else [condlist])]
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        other = funclist[-1]
        funclist = funclist[:-1]
    elif nf == nc:
        other = 0
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}")
    dt = get_aval(x).dtype

    def value(f):
        v = f(x, *args, **kw) if callable(f) else f
        return broadcast_to(lax._convert_element_type(asarray_leaf(v), dt, False), get_aval(x).shape)
    out = value(other)
    for c, f in zip(condlist, funclist):
        out = where(c, value(f), out)
    return out


def choose(a, choices, out=None, mode="raise"):
    a = asarray_leaf(a)
    if dtypes.kind(get_aval(a).dtype) not in "iu":
        raise TypeError("choose requires integer indices")
    n = len(choices)
    if mode == "raise":
        if isinstance(a, core.Tracer):
            raise ValueError("The error occurred because jnp.choose was jit-compiled with mode='raise'. "
                             "Use mode='wrap' or mode='clip' instead.")
        v = np.asarray(a)
        if ((v < 0) | (v >= n)).any():
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = lax.rem(lax.add(lax.rem(a, _const(n, a)), _const(n, a)), _const(n, a))
    elif mode == "clip":
        a = lax.clamp(_const(0, a), a, _const(n - 1, a))
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    choices = promote_dtypes(*choices)
    from . import broadcast_arrays
    a, *choices = broadcast_arrays(a, *choices)
    out = choices[-1]
    for i in range(n - 2, -1, -1):
        out = where(lax.eq(a, _const(i, a)), choices[i], out)
    return out


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    from .. import vmap
    arr = asarray_leaf(arr)
    nd = get_aval(arr).ndim
    axis = canonicalize_axis(axis, nd)
    fn = lambda x: func1d(x, *args, **kwargs)  # noqa: E731
    for i in range(1, nd - axis):
        fn = vmap(fn, in_axes=i, out_axes=-1)
    for _ in range(axis):
        fn = vmap(fn, in_axes=0, out_axes=0)
    return fn(arr)


def apply_over_axes(func, a, axes):
    a = asarray_leaf(a)
    nd = get_aval(a).ndim
    for ax in axes:
        b = func(a, ax)
        if get_aval(b).ndim == nd - 1:
            b = expand_dims(b, canonicalize_axis(ax, nd))
        elif get_aval(b).ndim != nd:
            raise ValueError("function is not returning an array of the correct shape")
        a = b
    return a


# ---------------------------------------------------------------- creation

def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    dt = dtypes.check_user_dtype(dtype, "logspace") if dtype is not None else None
    computation = dt if dt is not None and dtypes.kind(dt) in "fc" else dtypes.default_float_dtype()
    lin = linspace(start, stop, num, endpoint=endpoint, dtype=computation, axis=axis)
    out = power(lax._convert_element_type(asarray_leaf(base), computation, False), lin)
    return lax._convert_element_type(out, dt, False) if dt is not None else out


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    from . import log10, sign
    dt = dtypes.check_user_dtype(dtype, "geomspace") if dtype is not None else None
    computation = dt if dt is not None and dtypes.kind(dt) in "fc" else dtypes.default_float_dtype()
    start = lax._convert_element_type(asarray_leaf(start), computation, False)
    stop = lax._convert_element_type(asarray_leaf(stop), computation, False)
    s = sign(start)
    res = lax.mul(s, logspace(log10(lax.div(start, s)), log10(lax.div(stop, s)), num, endpoint=endpoint,
                              base=10.0, dtype=computation))
    # numpy pins the endpoints exactly.
    parts = [lax.expand_dims(start, (0,)), _take_slice(res, 1, (num - 1) if endpoint else num, 0)]
    if endpoint and num > 1:
        parts.append(lax.expand_dims(stop, (0,)))
    res = concatenate(parts, 0) if num > 0 else res
    res = lax._convert_element_type(res, dt, False) if dt is not None else res
    return moveaxis(res, 0, axis) if axis else res


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    args = [asarray_leaf(x) for x in xi]
    for i, x in enumerate(args):
        if get_aval(x).ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.meshgrid must be 1D, got shape {get_aval(x).shape}")
    if not args:
        return []
    shape = [get_aval(x).shape[0] for x in args]
    if indexing == "xy" and len(args) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(args):
        dim = i
        if indexing == "xy" and len(args) >= 2 and i < 2:
            dim = 1 - i
        if sparse:
            s = [1] * len(args)
            s[dim] = shape[dim]
            out.append(reshape(x, s))
        else:
            out.append(lax.broadcast_in_dim(x, tuple(shape), (dim,)))
    return out


class _IndexGrid:
    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        single = isinstance(key, builtins.slice)
        keys = (key,) if single else tuple(key)
        grids = []
        for k in keys:
            start = 0 if k.start is None else k.start
            step = 1 if k.step is None else k.step
            stop = k.stop
            if isinstance(step, complex):
                grids.append(linspace(start, stop, int(abs(step)), endpoint=True))
            else:
                grids.append(arange(start, stop, step))
        if single:
            return grids[0]
        out = meshgrid(*grids, indexing="ij", sparse=self.sparse)
        if self.sparse:
            return tuple(out)
        from . import result_type
        dt = result_type(*out)
        return stack([lax._convert_element_type(o, dt, False) for o in out], 0)


mgrid = _IndexGrid(sparse=False)
ogrid = _IndexGrid(sparse=True)


def tri(N, M=None, k=0, dtype=None):
    N = concrete_dim(N, "N", "jnp.tri")
    M = N if M is None else concrete_dim(M, "M", "jnp.tri")
    k = operator.index(k)
    dt = dtypes.default_float_dtype() if dtype is None else dtypes.check_user_dtype(dtype, "tri")
    rows = lax.broadcasted_iota(np.int32, (N, M), 0)
    cols = lax.broadcasted_iota(np.int32, (N, M), 1)
    return lax._convert_element_type(lax.ge(lax.add(rows, Array(np.asarray(k, np.int32))), cols), dt, False)


def _tri_mask(a, k, lower):
    aval = get_aval(a)
    n, m = aval.shape[-2:]
    mask = lax.ge(lax.add(lax.broadcasted_iota(np.int32, (n, m), 0), Array(np.asarray(k, np.int32))),
                  lax.broadcasted_iota(np.int32, (n, m), 1))
    if not lower:
        mask = lax.bitwise_not(lax.ge(lax.add(lax.broadcasted_iota(np.int32, (n, m), 0),
                                              Array(np.asarray(k - 1, np.int32))),
                                      lax.broadcasted_iota(np.int32, (n, m), 1)))
    return lax.select(broadcast_to(mask, aval.shape), a, zeros_like(a))


def tril(m, k=0):
    m, k = asarray_leaf(m), operator.index(k)
    if get_aval(m).ndim < 2:
        raise ValueError("Argument to jax.numpy.tril must be at least 2D")
    return _tri_mask(m, k, True)


def triu(m, k=0):
    m, k = asarray_leaf(m), operator.index(k)
    if get_aval(m).ndim < 2:
        raise ValueError("Argument to jax.numpy.triu must be at least 2D")
    return _tri_mask(m, k, False)


def diagonal(a, offset=0, axis1=0, axis2=1):
    a = asarray_leaf(a)
    nd = get_aval(a).ndim
    if nd < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    ax1, ax2 = canonicalize_axis(axis1, nd), canonicalize_axis(axis2, nd)
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 must not be equal")
    a = moveaxis(a, (ax1, ax2), (-2, -1))
    shape = get_aval(a).shape
    n, m = shape[-2:]
    offset = operator.index(offset)
    length = builtins.max(0, builtins.min(n + builtins.min(offset, 0), m - builtins.max(offset, 0)))
    flat = reshape(a, shape[:-2] + (n * m,))
    if length == 0:
        return _take_slice(flat, 0, 0, nd - 2)
    start = offset if offset >= 0 else -offset * m
    return _take_slice(flat, start, start + (length - 1) * (m + 1) + 1, nd - 2, m + 1)


def diag(v, k=0):
    v = asarray_leaf(v)
    k = operator.index(k)
    nd = get_aval(v).ndim
    if nd == 2:
        return diagonal(v, k)
    if nd != 1:
        raise ValueError("diag input must be 1d or 2d")
    n = get_aval(v).shape[0]
    size = n + builtins.abs(k)
    # Place v on the rows (k >= 0) or columns (k < 0) it occupies, then mask the diagonal.
    padded = lax.pad(v, _const(0, v), [(0, builtins.abs(k), 0)] if k >= 0 else [(0, -k, 0)])
    if k >= 0:
        full_v = lax.broadcast_in_dim(padded, (size, size), (0,))
    else:
        full_v = lax.broadcast_in_dim(padded, (size, size), (1,))
    mask = lax.eq(lax.add(lax.broadcasted_iota(np.int32, (size, size), 0), Array(np.asarray(k, np.int32))),
                  lax.broadcasted_iota(np.int32, (size, size), 1))
    return lax.select(mask, full_v, zeros_like(full_v))


def diagflat(v, k=0):
    return diag(ravel(v), k)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    a = asarray_leaf(a)
    shape = get_aval(a).shape
    nd = len(shape)
    if nd < 2:
        raise ValueError("array must be at least 2-d")
    if nd > 2 and len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    size = int(np.prod(shape))
    if nd == 2:
        step = shape[1] + 1
        end = size if wrap else builtins.min(size, shape[1] * shape[1])
    else:
        step = int(np.sum(np.cumprod((1,) + shape[:-1])))
        end = size
    pos = lax.iota(np.int32, size)
    mask = lax.bitwise_and(lax.eq(lax.rem(pos, Array(np.asarray(step, np.int32))), Array(np.asarray(0, np.int32))),
                           lax.lt(pos, Array(np.asarray(end, np.int32))))
    val = ravel(lax._convert_element_type(asarray_leaf(val), get_aval(a).dtype, False))
    count = -(-size // step)
    nval = get_aval(val).shape[0]
    if nval == 0:
        return a
    vals = resize(val, (count,)) if nval != 1 else broadcast_to(val, (count,))
    spread = _take_slice(repeat(vals, step, 0), 0, size, 0)
    return reshape(lax.select(mask, spread, ravel(a)), shape)


def indices(dimensions, dtype=None, sparse=False):
    dt = dtypes.default_int_dtype() if dtype is None else dtypes.check_user_dtype(dtype, "indices")
    dimensions = tuple(dimensions)
    nd = len(dimensions)
    out = []
    for i, d in enumerate(dimensions):
        if sparse:
            s = [1] * nd
            s[i] = d
            out.append(lax.broadcasted_iota(dt, tuple(s), i))
        else:
            out.append(lax.broadcasted_iota(dt, dimensions, i))
    if sparse:
        return tuple(out)
    return stack(out, 0) if out else zeros((0,), dt)


def ix_(*args):
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = asarray_leaf(a)
        if get_aval(a).ndim != 1:
            raise ValueError(f"Cross index must be 1 dimensional, got {get_aval(a).ndim}")
        if get_aval(a).dtype == np.bool_:
            raise TypeError("Boolean arguments to jax.numpy.ix_ are not supported")
        shape = [1] * n
        shape[i] = get_aval(a).shape[0]
        out.append(reshape(a, shape))
    return tuple(out)


def _index_pair(rows, cols):
    dt = dtypes.default_int_dtype()
    return Array(np.asarray(rows, dt), False), Array(np.asarray(cols, dt), False)


def tril_indices(n, k=0, m=None):
    n = operator.index(_concrete_scalar(n, "tril_indices", "n"))
    return _index_pair(*np.tril_indices(n, operator.index(_concrete_scalar(k, "tril_indices", "k")), m))


def triu_indices(n, k=0, m=None):
    n = operator.index(_concrete_scalar(n, "triu_indices", "n"))
    return _index_pair(*np.triu_indices(n, operator.index(_concrete_scalar(k, "triu_indices", "k")), m))


def tril_indices_from(arr, k=0):
    shape = get_aval(asarray_leaf(arr)).shape
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return tril_indices(shape[0], k, shape[1])


def triu_indices_from(arr, k=0):
    shape = get_aval(asarray_leaf(arr)).shape
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return triu_indices(shape[0], k, shape[1])


def diag_indices(n, ndim=2):
    n, ndim = operator.index(n), operator.index(ndim)
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (lax.iota(dtypes.default_int_dtype(), n),) * ndim


def diag_indices_from(arr):
    shape = get_aval(asarray_leaf(arr)).shape
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


def mask_indices(n, mask_func, k=0, *, size=None):
    m = np.asarray(mask_func(np.ones((n, n)), k) if mask_func in (np.triu, np.tril)
                   else mask_func(array(np.ones((n, n), np.int32)), k))
    rows, cols = np.nonzero(m)
    return _index_pair(rows, cols)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    from .. import vmap
    shape = _shape(shape)
    dt = dtypes.check_user_dtype(dtype, "fromfunction")
    fn = function
    for i in range(len(shape) - 1, -1, -1):
        fn = vmap(fn, in_axes=tuple(None if j != i else 0 for j in range(len(shape))))
    return fn(*(lax.iota(dt, s) for s in shape), **kwargs) if not kwargs else \
        _fromfunction_kw(function, shape, dt, kwargs)


def _fromfunction_kw(function, shape, dt, kwargs):
    grids = indices(shape, dtype=dt)
    return function(*[grids[i] for i in range(len(shape))], **kwargs)


def copy(a, order=None):
    return array(a, copy=True)


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    return asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromiter(iterable, dtype, count=-1, *, like=None):
    return asarray(np.fromiter(iterable, dtype=dtype, count=count))


def unravel_index(indices, shape):
    idx = asarray_leaf(indices)
    if dtypes.kind(get_aval(idx).dtype) not in "iu":
        raise TypeError("Only integer indices are allowed in jnp.unravel_index")
    shape = _shape(shape)
    size = int(np.prod(shape))
    # JAX's convention: negative indices count from the end, and everything is clamped.
    idx = lax.select(lax.lt(idx, _const(0, idx)), lax.add(idx, _const(size, idx)), idx)
    idx = lax.clamp(_const(0, idx), idx, _const(builtins.max(size - 1, 0), idx))
    out = []
    for s in shape[::-1]:
        out.append(lax.rem(idx, _const(s, idx)))
        idx = lax.div(idx, _const(s, idx))
    return tuple(out[::-1])


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    dims = _shape(dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    idxs = [asarray_leaf(i) for i in multi_index]
    for i in idxs:
        if dtypes.kind(get_aval(i).dtype) not in "iu":
            raise TypeError("only int indices permitted")
    if mode == "raise":
        for i, d in zip(idxs, dims):
            if isinstance(i, core.Tracer):
                from ..errors import ConcretizationTypeError
                raise ConcretizationTypeError(i, "The error occurred because ravel_multi_index was "
                                              "jit-compiled with mode='raise'. Use mode='wrap' or "
                                              "mode='clip' instead.")
            v = np.asarray(i)
            if ((v < 0) | (v >= d)).any():
                raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        idxs = [lax.clamp(_const(0, i), i, _const(d - 1, i)) for i, d in zip(idxs, dims)]
    elif mode == "wrap":
        idxs = [lax.rem(lax.add(lax.rem(i, _const(d, i)), _const(d, i)), _const(d, i)) for i, d in zip(idxs, dims)]
    else:
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', or 'clip'")
    from . import broadcast_arrays
    idxs = promote_dtypes(*idxs)
    idxs = broadcast_arrays(*idxs)
    order_dims = range(len(dims)) if order == "C" else range(len(dims) - 1, -1, -1)
    out = None
    stride = 1
    for j in list(order_dims)[::-1]:
        term = lax.mul(idxs[j], _const(stride, idxs[j]))
        out = term if out is None else lax.add(out, term)
        stride *= dims[j]
    return out


def vander(x, N=None, increasing=False):
    x = asarray_leaf(x)
    if get_aval(x).ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = get_aval(x).shape[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError("N must be nonnegative")
    cols = [power(x, i) if i else lax._convert_element_type(
        lax.broadcast(Array(np.asarray(1)), get_aval(x).shape), get_aval(x).dtype, False) for i in range(n)]
    if not increasing:
        cols = cols[::-1]
    if not cols:
        return zeros((get_aval(x).shape[0], 0), get_aval(x).dtype)
    return stack(cols, axis=1)


class _IndexExpression:
    def __init__(self, maketuple):
        self.maketuple = maketuple

    def __getitem__(self, item):
        if self.maketuple and not isinstance(item, tuple):
            return (item,)
        return item


index_exp = _IndexExpression(True)
s_ = _IndexExpression(False)


class _AxisConcat:
    """jnp.r_ / jnp.c_: slices become aranges/linspaces, everything is concatenated."""

    def __init__(self, axis, ndmin, trans1d):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        items = []
        for k in key:
            if isinstance(k, str):
                parts = [int(p) for p in k.split(",")]
                axis = parts[0]
                if len(parts) > 1:
                    ndmin = parts[1]
                if len(parts) > 2:
                    trans1d = parts[2]
                continue
            if isinstance(k, builtins.slice):
                start = 0 if k.start is None else k.start
                step = 1 if k.step is None else k.step
                v = (linspace(start, k.stop, int(abs(step))) if isinstance(step, complex)
                     else arange(start, k.stop, step))
            else:
                v = asarray_leaf(k)
            v = asarray_leaf(v)
            if ndmin > get_aval(v).ndim:
                nd0 = get_aval(v).ndim
                v = reshape(v, get_aval(v).shape + (1,) * (ndmin - nd0))
                if trans1d != -1 and nd0 >= 1:
                    k0 = trans1d % ndmin
                    v = moveaxis(v, list(range(nd0)), list(range(k0, k0 + nd0)))
            items.append(atleast_1d(v))
        return concatenate(items, axis)


r_ = _AxisConcat(0, 1, -1)
c_ = _AxisConcat(-1, 2, 0)

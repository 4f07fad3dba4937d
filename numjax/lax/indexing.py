"""Static and dynamic slicing (gather/scatter come with the indexing issue)."""
import builtins

import numpy as np

from .. import dtypes
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


def _dynamic_slice_indices(operand, start_indices):
    """Negative start indices count from the end, as in JAX's lax.dynamic_slice wrapper."""
    shape = get_aval(operand).shape
    if len(start_indices) != len(shape):
        raise ValueError(f"Length of slice indices must match number of operand dimensions "
                         f"({len(start_indices)} vs {shape})")
    out = []
    for i, d in zip(start_indices, shape):
        if isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)):
            dt = dtypes.canonicalize_dtype(i.dtype if isinstance(i, np.integer) else dtypes.default_int_dtype())
            out.append(Array(np.asarray(i + d if i < 0 else i, dt), False))
            continue
        if isinstance(i, np.ndarray):
            i = Array(i.astype(dtypes.canonicalize_dtype(i.dtype)), False)
        dt = get_aval(i).dtype
        if dt.kind == "u":
            out.append(i)
            continue
        from .elementwise import select
        d_arr = Array(np.asarray(d, dt), False)
        out.append(select(i < 0, i + d_arr, i))
    return out


def dynamic_slice(operand, start_indices, slice_sizes):
    start_indices = _dynamic_slice_indices(operand, start_indices)
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
    start_indices = _dynamic_slice_indices(operand, start_indices)
    return dynamic_update_slice_p.bind(operand, update, *start_indices)


# ---------------------------------------------------------------- differentiation rules
from ..interpreters import ad  # noqa: E402


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    from .shape import pad
    shape = x.aval.shape
    strides = strides or (1,) * len(shape)
    out_shape = get_aval(ct).shape
    cfg = []
    for n, s, st, m in zip(shape, start_indices, strides, out_shape):
        last = s + (m - 1) * st + 1 if m else s
        cfg.append((s, n - last, st - 1 if m > 1 else 0))
    zero = Array(np.zeros((), get_aval(ct).dtype), False)
    return [pad(ct, zero, cfg)]


ad.deflinear(slice_p, _slice_transpose)


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    x, *starts = primals
    out = dynamic_slice_p.bind(x, *starts, slice_sizes=slice_sizes)
    t = tangents[0]
    if type(t) is ad.Zero:
        return out, ad.Zero(get_aval(out))
    return out, dynamic_slice_p.bind(t, *starts, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, x, *starts, slice_sizes):
    zeros = ad.zeros_like_aval(x.aval)
    return [dynamic_update_slice_p.bind(zeros, ct, *starts)] + [None] * len(starts)


def _dus_jvp(primals, tangents):
    x, upd, *starts = primals
    out = dynamic_update_slice_p.bind(x, upd, *starts)
    tx, tu = tangents[0], tangents[1]
    if type(tx) is ad.Zero and type(tu) is ad.Zero:
        return out, ad.Zero(get_aval(out))
    return out, dynamic_update_slice_p.bind(ad.instantiate(tx), ad.instantiate(tu), *starts)


def _dus_transpose(ct, x, upd, *starts):
    upd_aval = upd.aval if ad.is_undefined(upd) else get_aval(upd)
    outs = [None, None] + [None] * len(starts)
    if ad.is_undefined(x):
        outs[0] = dynamic_update_slice_p.bind(ct, ad.zeros_like_aval(upd_aval), *starts)
    if ad.is_undefined(upd):
        outs[1] = dynamic_slice_p.bind(ct, *starts, slice_sizes=upd_aval.shape)
    return outs


ad.jvp_rules[dynamic_slice_p] = _dynamic_slice_jvp
ad.transpose_rules[dynamic_slice_p] = _dynamic_slice_transpose
ad.jvp_rules[dynamic_update_slice_p] = _dus_jvp
ad.transpose_rules[dynamic_update_slice_p] = _dus_transpose


# ---------------------------------------------------------------- batching rules
from ..interpreters import batching  # noqa: E402


def _slice_batch(vals, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    size = get_aval(x).shape[0]
    strides = None if strides is None else (1,) + tuple(strides)
    return slice_p.bind(x, start_indices=(0,) + tuple(start_indices),
                        limit_indices=(size,) + tuple(limit_indices), strides=strides), 0


def _dynamic_slice_batch(vals, dims, *, slice_sizes):
    x, *starts = vals
    xd, *sds = dims
    if any(d is not batching.not_mapped for d in sds):
        # Per-example start indices (x[i] with a batched i): a loop over the batch (a scan,
        # one compiled loop under jit) until gather provides a vectorised rule.
        return _map_over_batch(lambda *a: dynamic_slice_p.bind(*a, slice_sizes=slice_sizes), vals, dims), 0
    x = batching.moveaxis(x, xd, 0)
    size = get_aval(x).shape[0]
    zero = Array(np.zeros((), get_aval(starts[0]).dtype if starts else np.int32), False)
    return dynamic_slice_p.bind(x, zero, *starts, slice_sizes=(size,) + tuple(slice_sizes)), 0


def _dus_batch(vals, dims):
    x, upd, *starts = vals
    xd, ud, *sds = dims
    if any(d is not batching.not_mapped for d in sds):
        return _map_over_batch(dynamic_update_slice_p.bind, vals, dims), 0
    size = batching.axis_size_of(vals, dims)
    x, upd = batching.bdim_at_front(x, xd, size), batching.bdim_at_front(upd, ud, size)
    zero = Array(np.zeros((), get_aval(starts[0]).dtype if starts else np.int32), False)
    return dynamic_update_slice_p.bind(x, upd, zero, *starts), 0


def _map_over_batch(f, vals, dims):
    """``f`` applied to each example (batched values sliced, unbatched ones shared), stacked on axis 0."""
    from .control_flow import scan
    mapped = [batching.moveaxis(v, d, 0) for v, d in zip(vals, dims) if d is not batching.not_mapped]

    def body(carry, xs):
        it = iter(xs)
        return carry, f(*[v if d is batching.not_mapped else next(it) for v, d in zip(vals, dims)])
    return scan(body, (), mapped)[1]


batching.batch_rules[slice_p] = _slice_batch
batching.batch_rules[dynamic_slice_p] = _dynamic_slice_batch
batching.batch_rules[dynamic_update_slice_p] = _dus_batch

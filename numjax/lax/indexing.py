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


def _check_start_dtypes(name, starts, sep=":"):
    """JAX requires the start indices of a dynamic slice (update) to share one integer type."""
    dts = [s.dtype for s in starts]
    if any(dt != dts[0] or dtypes.kind(dt) not in "iu" for dt in dts):
        raise TypeError(f"index arguments to {name} must be integers of the same type, got{sep} "
                        f"{', '.join(dt.name for dt in dts)}. Cast the start indices to one type, "
                        f"e.g. each with .astype(jnp.int32).")


def _dynamic_slice_abstract(x, *starts, slice_sizes):
    _check_start_dtypes("dynamic_slice", starts)
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
        if dtypes.kind(dt) not in "iu":
            raise TypeError(f"index arguments to dynamic_slice must be integers of the same type, got: "
                            f"{dt.name}. Cast start indices to an integer dtype, e.g. i.astype(jnp.int32).")
        if dtypes.kind(dt) == "u":
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
    _check_start_dtypes("dynamic_update_slice", starts, sep="")
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


ad.deflinear2(slice_p, _slice_transpose)


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
        # Per-example start indices (x[i] with a batched i): one clamping gather.
        size = batching.axis_size_of(vals, dims)
        nd = len(slice_sizes)
        indices = _batched_starts(starts, sds, size)
        window = tuple(range(1, nd + 1))
        if xd is batching.not_mapped:
            dn = GatherDimensionNumbers(window, (), tuple(range(nd)))
            return gather(x, indices, dn, slice_sizes, mode=GatherScatterMode.CLIP), 0
        dn = GatherDimensionNumbers(window, (), window, (0,), (0,))
        return gather(batching.moveaxis(x, xd, 0), indices, dn, (min(size, 1),) + tuple(slice_sizes),
                      mode=GatherScatterMode.CLIP), 0
    x = batching.moveaxis(x, xd, 0)
    size = get_aval(x).shape[0]
    zero = Array(np.zeros((), get_aval(starts[0]).dtype if starts else np.int32), False)
    return dynamic_slice_p.bind(x, zero, *starts, slice_sizes=(size,) + tuple(slice_sizes)), 0


def _dus_batch(vals, dims):
    x, upd, *starts = vals
    xd, ud, *sds = dims
    size = batching.axis_size_of(vals, dims)
    x, upd = batching.bdim_at_front(x, xd, size), batching.bdim_at_front(upd, ud, size)
    if any(d is not batching.not_mapped for d in sds):
        # Per-example start indices: one clamping scatter.
        window = tuple(range(1, len(starts) + 1))
        dn = ScatterDimensionNumbers(window, (), window, (0,), (0,))
        return scatter(x, _batched_starts(starts, sds, size), upd, dn,
                       mode=GatherScatterMode.CLIP), 0
    zero = Array(np.zeros((), get_aval(starts[0]).dtype if starts else np.int32), False)
    return dynamic_update_slice_p.bind(x, upd, zero, *starts), 0


def _batched_starts(starts, dims, size):
    """Scalar start indices (batched or not, all of one type) as one (size, n) index array of
    that type: the clamping gather then clamps in it, so a uint32 2**32 - 1 is past the end
    (as in JAX), not -1."""
    from .shape import broadcast_in_dim, concatenate
    cols = []
    for s, d in zip(starts, dims):
        cols.append(broadcast_in_dim(s, (size, 1), () if d is batching.not_mapped else (0,)))
    if not cols:
        return Array(np.zeros((size, 0), np.int32), False)
    return concatenate(cols, 1) if len(cols) > 1 else cols[0]


batching.batch_rules[slice_p] = _slice_batch
batching.batch_rules[dynamic_slice_p] = _dynamic_slice_batch
batching.batch_rules[dynamic_update_slice_p] = _dus_batch


# ================================================================ gather and scatter
# XLA's general indexing ops, with JAX's parameters.  The index vector is always the last
# dimension of the indices.  Eagerly they run as numpy fancy indexing; the lowering in
# lowering/nodes_indexing.py writes the same loops (same order, so duplicate indices resolve
# identically: the last update wins).
import enum  # noqa: E402
from typing import NamedTuple  # noqa: E402

from ..jaxpr import Jaxpr, JaxprEqn, Var  # noqa: E402


class GatherScatterMode(enum.Enum):
    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s):
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"')


class GatherDimensionNumbers(NamedTuple):
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


def _tuples(nt):
    return type(nt)(*(tuple(int(d) for d in f) for f in nt))


def _checked_mode(mode, what):
    mode = GatherScatterMode.from_any(mode)
    if mode is GatherScatterMode.ONE_HOT:
        raise NotImplementedError(f"{what} mode ONE_HOT is not supported by numjax.")
    return mode


def default_fill_value(dtype):
    """What a FILL_OR_DROP gather reads out of bounds: NaN, or the type's extreme, as JAX."""
    dtype = np.dtype(dtype)
    if dtypes.kind(dtype) in "fc":
        return np.nan
    if dtypes.kind(dtype) == "i":
        return int(np.iinfo(dtype).min)
    if dtypes.kind(dtype) == "u":
        return int(np.iinfo(dtype).max)
    return True


def _window_dims(ndim, *excluded):
    skip = set().union(*excluded)
    return [d for d in range(ndim) if d not in skip]


def _check_sorted_unique(name, field, dims, ndim):
    if tuple(sorted(set(dims))) != tuple(dims):
        raise TypeError(f"{name} {field} must be sorted and have no repeated entries; got {dims}.")
    if any(not 0 <= d < ndim for d in dims):
        raise TypeError(f"{name} {field} must be in the range [0, {ndim}); got {dims}.")


def _check_indices(name, indices, n_index, map_field):
    if dtypes.kind(indices.dtype) not in "iu":
        raise TypeError(f"{name} indices must have an integer type; got {indices.dtype.name}.")
    if indices.ndim < 1:
        raise TypeError(f"{name} indices must have rank >= 1 (the last dimension is the index "
                        f"vector); got shape {indices.shape}.")
    if indices.shape[-1] != n_index:
        raise TypeError(f"{name}: the last dimension of the indices ({indices.shape[-1]}, shape "
                        f"{indices.shape}) must equal len({map_field}) = {n_index}.")


def _check_batching(name, operand, indices, op_dims, idx_dims, idx_field):
    if len(op_dims) != len(idx_dims):
        raise TypeError(f"{name} operand_batching_dims {op_dims} and {idx_field} {idx_dims} must "
                        "have the same length.")
    for od, idim in zip(op_dims, idx_dims):
        if not 0 <= idim < indices.ndim - 1:
            raise TypeError(f"{name} {idx_field} {idx_dims} must be batch dimensions of the indices "
                            f"(shape {indices.shape}, the last one is the index vector).")
        if operand.shape[od] != indices.shape[idim]:
            raise TypeError(f"{name} operand batching dim {od} (size {operand.shape[od]}) and indices "
                            f"batching dim {idim} (size {indices.shape[idim]}) must have equal sizes.")


def _gather_abstract(operand, indices, *, dimension_numbers, slice_sizes, mode, fill_value,
                     indices_are_sorted, unique_indices):
    dn, nd = dimension_numbers, operand.ndim
    _check_indices("gather", indices, len(dn.start_index_map), "start_index_map")
    if len(slice_sizes) != nd:
        raise TypeError(f"gather slice_sizes must have one entry per operand dimension; got "
                        f"slice_sizes {slice_sizes} for operand shape {operand.shape}.")
    for d, (k, n) in enumerate(zip(slice_sizes, operand.shape)):
        if not 0 <= k <= n:
            raise TypeError(f"gather slice_sizes must satisfy 0 <= size <= operand dimension; got "
                            f"slice_sizes {slice_sizes} for operand shape {operand.shape}.")
    _check_sorted_unique("gather", "collapsed_slice_dims", dn.collapsed_slice_dims, nd)
    _check_sorted_unique("gather", "operand_batching_dims", dn.operand_batching_dims, nd)
    for d in dn.collapsed_slice_dims + dn.operand_batching_dims:
        # A batching dim of an empty batch has a slice of 0 (JAX's vmap makes those).
        if slice_sizes[d] != 1 and not (d in dn.operand_batching_dims and operand.shape[d] == 0
                                        and slice_sizes[d] == 0):
            raise TypeError(f"gather can only collapse (or batch) slice dims of size 1, but "
                            f"slice_sizes[{d}] is {slice_sizes[d]}.")
    if set(dn.collapsed_slice_dims) & set(dn.operand_batching_dims):
        raise TypeError("gather collapsed_slice_dims and operand_batching_dims must be disjoint; got "
                        f"{dn.collapsed_slice_dims} and {dn.operand_batching_dims}.")
    if any(not 0 <= d < nd for d in dn.start_index_map) or len(set(dn.start_index_map)) != len(dn.start_index_map):
        raise TypeError(f"gather start_index_map {dn.start_index_map} must hold distinct operand "
                        f"dimensions of an operand of rank {nd}.")
    if set(dn.start_index_map) & set(dn.operand_batching_dims):
        raise TypeError("gather start_index_map and operand_batching_dims must be disjoint.")
    _check_batching("gather", operand, indices, dn.operand_batching_dims,
                    dn.start_indices_batching_dims, "start_indices_batching_dims")
    window = _window_dims(nd, dn.collapsed_slice_dims, dn.operand_batching_dims)
    out_rank = indices.ndim - 1 + len(window)
    if len(dn.offset_dims) != len(window):
        raise TypeError(f"gather offset_dims {dn.offset_dims} must have one entry per operand dimension "
                        f"that is neither collapsed nor batched ({len(window)} here).")
    _check_sorted_unique("gather", "offset_dims", dn.offset_dims, out_rank)
    batch = iter(indices.shape[:-1])
    wsizes = iter(slice_sizes[d] for d in window)
    shape = [next(wsizes) if p in dn.offset_dims else next(batch) for p in range(out_rank)]
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def gather_index_wrap_dtype(mode, shape):
    """The type a FILL_OR_DROP gather converts its indices to before checking their range, as
    JAX lowers it (int32; int64 for an operand dim past int32's range), so an int64 index
    2**32 + 1 reads element 1; None for the other modes, which clamp in the index type."""
    if mode is not GatherScatterMode.FILL_OR_DROP:
        return None
    return np.dtype(np.int64 if any(n > np.iinfo(np.int32).max for n in shape) else np.int32)


def _index_as_int64(s, wrap):
    """Index values as int64 with the same in-range verdict: wrapped into ``wrap`` when given;
    a uint64 past int64's range saturates (it is out of range either way)."""
    if wrap is not None:
        return s.astype(wrap).astype(np.int64)
    if s.dtype == np.uint64:
        return np.minimum(s, np.uint64(np.iinfo(np.int64).max)).astype(np.int64)
    return s.astype(np.int64)


def _starts(shape, idx, index_map, sizes, op_batch, idx_batch, wrap=None):
    """Per operand dim, the window start for each index batch position (clamped into range),
    and which positions had every start in range."""
    batch_shape = idx.shape[:-1]
    starts = [np.zeros(batch_shape, np.int64) for _ in shape]
    ok = np.ones(batch_shape, bool)
    for k, d in enumerate(index_map):
        s = _index_as_int64(idx[..., k], wrap)
        hi = shape[d] - sizes[d]
        ok &= (s >= 0) & (s <= hi)
        starts[d] = np.clip(s, 0, max(hi, 0))
    for od, idim in zip(op_batch, idx_batch):
        view = [1] * len(batch_shape)
        view[idim] = batch_shape[idim]
        starts[od] = np.broadcast_to(np.arange(batch_shape[idim]).reshape(view), batch_shape)
    return starts, ok


def _window_index(shape, starts, batch_shape, window, sizes):
    """Index arrays (one per operand dim, with a leading dummy axis so rank-0 operands work)
    over batch_shape + window sizes, in that order."""
    nb, nw = len(batch_shape), len(window)
    full = tuple(batch_shape) + tuple(sizes[d] for d in window)
    ix = [np.zeros(full, np.int64)]
    for d in range(len(shape)):
        a = starts[d].reshape(tuple(batch_shape) + (1,) * nw)
        if d in window:
            view = [1] * (nb + nw)
            view[nb + window.index(d)] = sizes[d]
            a = a + np.arange(sizes[d]).reshape(view)
        ix.append(np.broadcast_to(a, full))
    return tuple(ix)


def _gather_impl(operand, indices, *, dimension_numbers, slice_sizes, mode, fill_value,
                 indices_are_sorted, unique_indices):
    x, idx, dn = to_numpy(operand), to_numpy(indices), dimension_numbers
    batch_shape = idx.shape[:-1]
    window = _window_dims(x.ndim, dn.collapsed_slice_dims, dn.operand_batching_dims)
    starts, ok = _starts(x.shape, idx, dn.start_index_map, slice_sizes, dn.operand_batching_dims,
                         dn.start_indices_batching_dims, gather_index_wrap_dtype(mode, x.shape))
    ix = _window_index(x.shape, starts, batch_shape, window, slice_sizes)
    out = x.reshape((1,) + x.shape)[ix] if all(k > 0 for k in slice_sizes) else \
        np.empty(ix[0].shape, x.dtype)
    if mode is GatherScatterMode.FILL_OR_DROP and not ok.all():
        fill = default_fill_value(x.dtype) if fill_value is None else fill_value
        out = np.where(ok.reshape(ok.shape + (1,) * len(window)), out, np.asarray(fill).astype(x.dtype))
    nb = len(batch_shape)
    batch_axes, win_axes = iter(range(nb)), iter(range(nb, nb + len(window)))
    perm = [next(win_axes) if p in dn.offset_dims else next(batch_axes) for p in range(out.ndim)]
    return Array(np.asarray(np.transpose(out, perm), order="C"), getattr(operand, "weak_type", False))


gather_p = make_primitive("gather", _gather_impl, _gather_abstract)


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """XLA's gather: slices of ``operand`` whose starts are read from ``start_indices``."""
    mode = _checked_mode(mode, "gather")
    if not isinstance(dimension_numbers, GatherDimensionNumbers):
        raise TypeError(f"gather dimension_numbers must be a lax.GatherDimensionNumbers; got "
                        f"{type(dimension_numbers).__name__}.")
    if mode is GatherScatterMode.FILL_OR_DROP:
        if fill_value is None:
            fill_value = default_fill_value(get_aval(operand).dtype)
    else:
        fill_value = None
    return gather_p.bind(operand, start_indices, dimension_numbers=_tuples(dimension_numbers),
                         slice_sizes=tuple(int(k) for k in slice_sizes), mode=mode,
                         fill_value=fill_value, indices_are_sorted=bool(indices_are_sorted),
                         unique_indices=bool(unique_indices))


# The scatters that combine with arithmetic, by the combining op JAX names in its error.
_ARITHMETIC_SCATTERS = {"scatter-add": "add", "scatter-sub": "sub", "scatter-mul": "mul"}


def _check_arithmetic_dtype(name, dtype):
    """As in JAX, adding, subtracting or multiplying into a bool array is a TypeError (bool has
    no arithmetic), while set, min and max work."""
    op = _ARITHMETIC_SCATTERS.get(name)
    if op is not None and dtype == np.bool_:
        raise TypeError(f"{op} does not accept dtype bool at position 0. Accepted dtypes at "
                        f"position 0 are subtypes of integer, floating, complexfloating. {name} "
                        f"needs a numeric operand: cast the bool array first, e.g. x.astype(jnp.int32), "
                        f"or use .at[...].max / .min / .set for logical or / and / assignment.")


def _scatter_abstract(name):
    def rule(operand, indices, updates, *, dimension_numbers, indices_are_sorted, unique_indices,
             mode, update_jaxpr, update_consts):
        dn, nd = dimension_numbers, operand.ndim
        _check_arithmetic_dtype(name, operand.dtype)
        _check_indices(name, indices, len(dn.scatter_dims_to_operand_dims), "scatter_dims_to_operand_dims")
        if updates.dtype != operand.dtype:
            raise TypeError(f"{name} requires updates of the operand's dtype; got operand "
                            f"{operand.dtype.name} and updates {updates.dtype.name}.")
        _check_sorted_unique(name, "update_window_dims", dn.update_window_dims, updates.ndim)
        _check_sorted_unique(name, "inserted_window_dims", dn.inserted_window_dims, nd)
        _check_sorted_unique(name, "operand_batching_dims", dn.operand_batching_dims, nd)
        _check_batching(name, operand, indices, dn.operand_batching_dims,
                        dn.scatter_indices_batching_dims, "scatter_indices_batching_dims")
        window = _window_dims(nd, dn.inserted_window_dims, dn.operand_batching_dims)
        if len(window) != len(dn.update_window_dims):
            raise TypeError(f"{name} update_window_dims {dn.update_window_dims} must have one entry "
                            f"per operand dimension that is neither inserted nor batched "
                            f"({len(window)} for operand shape {operand.shape}).")
        scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
        expected = indices.shape[:-1]
        if tuple(updates.shape[d] for d in scatter_dims) != expected:
            raise TypeError(f"{name} updates shape {updates.shape} does not match the indices: its "
                            f"non-window dims must be {expected} (indices shape {indices.shape}).")
        for d, u in zip(window, dn.update_window_dims):
            if updates.shape[u] > operand.shape[d]:
                raise TypeError(f"{name} update window dim {u} (size {updates.shape[u]}) is larger "
                                f"than operand dim {d} (size {operand.shape[d]}).")
        return operand
    return rule


def _scatter_layout(x, idx, upd, dn, mode):
    """Index arrays into ``x`` (with a leading dummy axis), and the updates, of the in-range
    update elements in (scatter dims, window dims) order."""
    window = _window_dims(x.ndim, dn.inserted_window_dims, dn.operand_batching_dims)
    sizes = [1] * x.ndim
    for d, u in zip(window, dn.update_window_dims):
        sizes[d] = upd.shape[u]
    scatter_dims = [d for d in range(upd.ndim) if d not in dn.update_window_dims]
    starts, ok = _starts(x.shape, idx, dn.scatter_dims_to_operand_dims, sizes,
                         dn.operand_batching_dims, dn.scatter_indices_batching_dims)
    batch_shape = idx.shape[:-1]
    ix = _window_index(x.shape, starts, batch_shape, window, sizes)
    u = upd.transpose(scatter_dims + list(dn.update_window_dims))
    if mode is not GatherScatterMode.CLIP:
        keep = np.broadcast_to(ok.reshape(ok.shape + (1,) * len(window)), u.shape)
        return tuple(a[keep] for a in ix), u[keep]
    return ix, u


def _scatter_impl(np_combine):
    def impl(operand, indices, updates, *, dimension_numbers, indices_are_sorted, unique_indices,
             mode, update_jaxpr, update_consts):
        x = to_numpy(operand)
        out = x.reshape((1,) + x.shape).copy()
        if out.size and to_numpy(updates).size:
            ix, u = _scatter_layout(x, to_numpy(indices), to_numpy(updates), dimension_numbers, mode)
            if np_combine is None and update_jaxpr is not None:   # scatter_apply
                _apply_sequentially(out, ix, u, update_jaxpr, update_consts)
            elif np_combine is None:
                out[ix] = u
            else:
                _combine_at(np_combine, out, ix, u)
        return Array(out.reshape(x.shape), getattr(operand, "weak_type", False))
    return impl


def _combine_at(ufunc, out, ix, u):
    """``ufunc.at``, with XLA's signed zeros for max (min): a zero result is +0 (-0) where the
    operand or any update there was +0 (-0), whichever numpy kept."""
    if ufunc not in (np.maximum, np.minimum) or out.dtype.kind != "f" and "float" not in out.dtype.name:
        ufunc.at(out, ix, u)
        return
    negative = ufunc is np.minimum
    wanted = (out == 0) & (np.signbit(out) == negative)
    u = np.broadcast_to(u, out[ix].shape) if np.ndim(u) == 0 else u
    np.logical_or.at(wanted, ix, (u == 0) & (np.signbit(u) == negative))
    ufunc.at(out, ix, u)
    zero = np.negative(np.zeros((), out.dtype)) if negative else np.zeros((), out.dtype)
    np.copyto(out, zero, where=(out == 0) & wanted)


def _apply_sequentially(out, ix, u, jaxpr, consts):
    """``out[i] = f(out[i], u)`` in update order, repeated indices applied repeatedly."""
    from ..vmap_api import vmap
    from ..jaxpr import eval_jaxpr
    f = vmap(lambda a, b: eval_jaxpr(jaxpr, list(consts), a, b)[0])
    flat = out.reshape(-1)
    lin = np.ravel_multi_index(ix, out.shape) if len(ix[0]) else np.zeros(0, np.int64)
    u = np.asarray(u).reshape(-1)
    pending = np.arange(lin.size)
    while pending.size:
        # The first pending occurrence of each position goes this round, keeping update order.
        _, first = np.unique(lin[pending], return_index=True)
        now = pending[np.sort(first)]
        flat[lin[now]] = to_numpy(f(Array(flat[lin[now]]), Array(u[now])))
        pending = np.setdiff1d(pending, now, assume_unique=True)


def _combiner_jaxpr(prim, dtype):
    key = (prim, np.dtype(dtype))
    jx = _COMBINERS.get(key)
    if jx is None:
        a, b = Var(ShapedArray((), dtype)), Var(ShapedArray((), dtype))
        c = Var(ShapedArray((), dtype))
        jx = _COMBINERS[key] = Jaxpr([], [a, b], [c], [JaxprEqn(prim, [a, b], [c], {})])
    return jx


_COMBINERS = {}


def _make_scatter(name, np_combine):
    return make_primitive(name, _scatter_impl(np_combine), _scatter_abstract(name))


scatter_p = _make_scatter("scatter", None)
scatter_add_p = _make_scatter("scatter-add", np.add)
scatter_sub_p = _make_scatter("scatter-sub", np.subtract)
scatter_mul_p = _make_scatter("scatter-mul", np.multiply)
scatter_min_p = _make_scatter("scatter-min", np.minimum)
scatter_max_p = _make_scatter("scatter-max", np.maximum)


class _Printed:
    # JAX prints dimension numbers as their NamedTuple repr, not as a plain tuple.
    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text


def _print_params(params):
    return {k: _Printed(repr(v)) if k == "dimension_numbers" else v for k, v in sorted(params.items())}


from ..jaxpr import param_printers  # noqa: E402
for _p in (gather_p, scatter_p, scatter_add_p, scatter_sub_p, scatter_mul_p, scatter_min_p, scatter_max_p):
    param_printers[_p] = _print_params


def _combiner_prim(prim):
    from . import elementwise as ew
    return {scatter_add_p: ew.add_p, scatter_sub_p: ew.sub_p, scatter_mul_p: ew.mul_p,
            scatter_min_p: ew.min_p, scatter_max_p: ew.max_p}.get(prim)


def _scatter_bind(prim, operand, indices, updates, dimension_numbers, indices_are_sorted,
                  unique_indices, mode, update_jaxpr=None, update_consts=()):
    if not isinstance(dimension_numbers, ScatterDimensionNumbers):
        raise TypeError(f"{prim.name} dimension_numbers must be a lax.ScatterDimensionNumbers; got "
                        f"{type(dimension_numbers).__name__}.")
    if update_jaxpr is None and _combiner_prim(prim) is not None:
        update_jaxpr = _combiner_jaxpr(_combiner_prim(prim), get_aval(operand).dtype)
    return prim.bind(operand, indices, updates, dimension_numbers=_tuples(dimension_numbers),
                     indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices),
                     mode=_checked_mode(mode, prim.name), update_jaxpr=update_jaxpr,
                     update_consts=tuple(update_consts))


def _scatter_fn(prim, doc):
    def fn(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
           unique_indices=False, mode=None):
        return _scatter_bind(prim, operand, scatter_indices, updates, dimension_numbers,
                             indices_are_sorted, unique_indices, mode)
    fn.__doc__ = doc
    return fn


scatter = _scatter_fn(scatter_p, "XLA's scatter: ``updates`` overwrite windows of ``operand``.")
scatter_add = _scatter_fn(scatter_add_p, "Scatter that adds ``updates`` into ``operand``.")
scatter_sub = _scatter_fn(scatter_sub_p, "Scatter that subtracts ``updates`` from ``operand``.")
scatter_mul = _scatter_fn(scatter_mul_p, "Scatter that multiplies ``operand`` by ``updates``.")
scatter_min = _scatter_fn(scatter_min_p, "Scatter that keeps the minimum of operand and updates.")
scatter_max = _scatter_fn(scatter_max_p, "Scatter that keeps the maximum of operand and updates.")


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """``func`` applied to the elements of ``operand`` that the scatter indices select."""
    from ..interpreters import partial_eval as pe
    aval = get_aval(operand)
    scalar = ShapedArray((), aval.dtype)
    closed = pe.trace_to_jaxpr(lambda x, _: [func(x)], [scalar, scalar])
    jaxpr, consts = pe.closure_convert(closed)
    if consts:
        raise NotImplementedError("scatter_apply with a func that closes over arrays")
    unused = Array(np.zeros(update_shape, aval.dtype), False)
    return _scatter_bind(scatter_p, operand, scatter_indices, unused, dimension_numbers,
                         indices_are_sorted, unique_indices, mode, jaxpr)


# ---------------------------------------------------------------- gather/scatter rules
_SCATTERS = (scatter_p, scatter_add_p, scatter_sub_p, scatter_mul_p, scatter_min_p, scatter_max_p)


def _gather_dnums_of_scatter(dn):
    return GatherDimensionNumbers(dn.update_window_dims, dn.inserted_window_dims,
                                  dn.scatter_dims_to_operand_dims, dn.operand_batching_dims,
                                  dn.scatter_indices_batching_dims)


def _scatter_dnums_of_gather(dn):
    return ScatterDimensionNumbers(dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map,
                                   dn.operand_batching_dims, dn.start_indices_batching_dims)


def _gather_of_scatter(ct, indices, updates_aval, dn, mode, fill_value=0):
    """The gather that reads, from an operand-shaped ``ct``, what each update element touched."""
    window = _window_dims(get_aval(ct).ndim, dn.inserted_window_dims, dn.operand_batching_dims)
    sizes = [1] * get_aval(ct).ndim
    for d, u in zip(window, dn.update_window_dims):
        sizes[d] = updates_aval.shape[u]
    return gather(ct, indices, _gather_dnums_of_scatter(dn), sizes, mode=mode,
                  fill_value=fill_value if mode is GatherScatterMode.FILL_OR_DROP else None)


def _gather_jvp(t, operand, indices, *, dimension_numbers, slice_sizes, mode, fill_value,
                indices_are_sorted, unique_indices):
    return gather_p.bind(t, indices, dimension_numbers=dimension_numbers, slice_sizes=slice_sizes,
                         mode=mode, fill_value=None if fill_value is None else 0,
                         indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)


def _gather_transpose(ct, operand, indices, *, dimension_numbers, slice_sizes, mode, fill_value,
                      indices_are_sorted, unique_indices):
    zeros = ad.zeros_like_aval(operand.aval)
    if type(ct) is ad.Zero:
        return [zeros, None]
    return [scatter_add(zeros, indices, ct, _scatter_dnums_of_gather(dimension_numbers),
                        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        mode=mode), None]


ad.defjvp(gather_p, _gather_jvp, None)
ad.transpose_rules[gather_p] = _gather_transpose


def _scatter_params(params, **changes):
    return {**params, **changes}


def _additive_scatter_jvp(prim):
    def rule(primals, tangents, **params):
        x, i, u = primals
        out = prim.bind(x, i, u, **params)
        tx, tu = tangents[0], tangents[2]
        if type(tx) is ad.Zero and type(tu) is ad.Zero:
            return out, ad.Zero(get_aval(out))
        return out, prim.bind(ad.instantiate(tx), i, ad.instantiate(tu), **params)
    return rule


def _additive_scatter_transpose(negate):
    def rule(ct, x, i, u, **params):
        if type(ct) is ad.Zero:
            return [None, None, None]
        ct_x = ct if ad.is_undefined(x) else None
        ct_u = None
        if ad.is_undefined(u):
            ct_u = _gather_of_scatter(ct, i, u.aval, params["dimension_numbers"], params["mode"])
            if negate:
                from .elementwise import neg
                ct_u = neg(ct_u)
        return [ct_x, None, ct_u]
    return rule


ad.jvp_rules[scatter_add_p] = _additive_scatter_jvp(scatter_add_p)
ad.jvp_rules[scatter_sub_p] = _additive_scatter_jvp(scatter_sub_p)
ad.transpose_rules[scatter_add_p] = _additive_scatter_transpose(False)
ad.transpose_rules[scatter_sub_p] = _additive_scatter_transpose(True)


def _scatter_set_jvp(primals, tangents, **params):
    if params["update_jaxpr"] is not None:
        raise NotImplementedError("Differentiation of scatter_apply (scatter with an update "
                                  "function) is not implemented.")
    return _additive_scatter_jvp(scatter_p)(primals, tangents, **params)


def _scatter_set_transpose(ct, x, i, u, **params):
    """The operand's cotangent is zero where it was overwritten; each update's is read back,
    but only for the update that won its position (the last one, among repeats)."""
    if type(ct) is ad.Zero:
        return [None, None, None]
    from .elementwise import eq, select
    dn, mode = params["dimension_numbers"], params["mode"]
    u_aval = u.aval if ad.is_undefined(u) else get_aval(u)
    ct_x = ct_u = None
    if ad.is_undefined(x):
        ct_x = scatter_p.bind(ct, i, ad.zeros_like_aval(u_aval), **params)
    if ad.is_undefined(u):
        ct_u = _gather_of_scatter(ct, i, u_aval, dn, mode)
        if not params["unique_indices"]:
            ids = Array(np.arange(1, u_aval.size + 1, dtype=np.int32).reshape(u_aval.shape), False)
            winners = scatter_p.bind(Array(np.zeros(get_aval(ct).shape, np.int32), False), i, ids,
                                     **params)
            won = eq(_gather_of_scatter(winners, i, u_aval, dn, mode), ids)
            ct_u = select(won, ct_u, ad.zeros_like_aval(get_aval(ct_u)))
    return [ct_x, None, ct_u]


ad.jvp_rules[scatter_p] = _scatter_set_jvp
ad.transpose_rules[scatter_p] = _scatter_set_transpose


def _scatter_mul_jvp(primals, tangents, **params):
    from .elementwise import mul
    x, i, u = primals
    out = scatter_mul_p.bind(x, i, u, **params)
    tx, tu = tangents[0], tangents[2]
    t_out = ad.Zero(get_aval(out))
    if type(tx) is not ad.Zero:
        t_out = scatter_mul_p.bind(tx, i, u, **params)
    if type(tu) is not ad.Zero:
        if not params["unique_indices"]:
            raise NotImplementedError("scatter_mul gradients are only implemented if "
                                      "`unique_indices=True`")
        placed = scatter_add_p.bind(ad.zeros_like_aval(get_aval(x)), i, tu,
                                    **_scatter_params(params, update_jaxpr=None))
        t_out = ad.add_tangents(t_out, mul(x, placed))
    return out, t_out


def _scatter_mul_transpose(ct, x, i, u, **params):
    if ad.is_undefined(u):
        raise NotImplementedError("scatter_mul transpose is only defined with respect to the operand.")
    if type(ct) is ad.Zero:
        return [None, None, None]
    return [scatter_mul_p.bind(ct, i, u, **params), None, None]


ad.jvp_rules[scatter_mul_p] = _scatter_mul_jvp
ad.transpose_rules[scatter_mul_p] = _scatter_mul_transpose


def _scatter_extremal_jvp(prim):
    """Ties share the tangent equally between the operand and every update that attained it."""
    def rule(primals, tangents, **params):
        from .elementwise import add, convert_element_type, div, eq, mul, select
        x, i, u = primals
        out = prim.bind(x, i, u, **params)
        tx, tu = tangents[0], tangents[2]
        if type(tx) is ad.Zero and type(tu) is ad.Zero:
            return out, ad.Zero(get_aval(out))
        dn, mode = params["dimension_numbers"], params["mode"]
        aval = get_aval(out)
        add_params = _scatter_params(params, update_jaxpr=_combiner_jaxpr(_combiner_prim(scatter_add_p),
                                                                          aval.dtype))
        won = eq(u, _gather_of_scatter(out, i, get_aval(u), dn, mode, fill_value=None))
        kept = convert_element_type(eq(x, out), aval.dtype)
        one, zero = Array(np.ones((), aval.dtype), False), Array(np.zeros((), aval.dtype), False)
        n_won = scatter_add_p.bind(ad.zeros_like_aval(aval), i, select(won, broadcast_like(one, u),
                                                                       broadcast_like(zero, u)), **add_params)
        share = div(one, add(n_won, kept))
        t = ad.Zero(aval)
        if type(tx) is not ad.Zero:
            t = mul(mul(tx, kept), share)
        if type(tu) is not ad.Zero:
            placed = scatter_add_p.bind(ad.zeros_like_aval(aval), i,
                                        select(won, tu, ad.zeros_like_aval(get_aval(tu))), **add_params)
            t = ad.add_tangents(t, mul(placed, share))
        return out, t
    return rule


def broadcast_like(v, x):
    from .elementwise import broadcast_like as _bl
    return _bl(v, x)


ad.jvp_rules[scatter_min_p] = _scatter_extremal_jvp(scatter_min_p)
ad.jvp_rules[scatter_max_p] = _scatter_extremal_jvp(scatter_max_p)


def _shift(dims, k=1):
    return tuple(d + k for d in dims)


def _gather_batch(vals, dims, *, dimension_numbers, slice_sizes, **params):
    x, i = vals
    xd, idim = dims
    dn = dimension_numbers
    if idim is batching.not_mapped:
        # Batch the operand only: its batch axis becomes a leading window dimension.
        x = batching.moveaxis(x, xd, 0)
        new = GatherDimensionNumbers((0,) + _shift(dn.offset_dims), _shift(dn.collapsed_slice_dims),
                                     _shift(dn.start_index_map), _shift(dn.operand_batching_dims),
                                     dn.start_indices_batching_dims)
        sizes = (get_aval(x).shape[0],) + tuple(slice_sizes)
        return gather_p.bind(x, i, dimension_numbers=new, slice_sizes=sizes, **params), 0
    i = batching.moveaxis(i, idim, 0)
    if xd is batching.not_mapped:
        # Batch the indices only: a leading batch dim of the indices lands first in the output.
        new = GatherDimensionNumbers(_shift(dn.offset_dims), dn.collapsed_slice_dims, dn.start_index_map,
                                     dn.operand_batching_dims, _shift(dn.start_indices_batching_dims))
        return gather_p.bind(x, i, dimension_numbers=new, slice_sizes=tuple(slice_sizes), **params), 0
    x = batching.moveaxis(x, xd, 0)
    new = GatherDimensionNumbers(_shift(dn.offset_dims), _shift(dn.collapsed_slice_dims),
                                 _shift(dn.start_index_map), (0,) + _shift(dn.operand_batching_dims),
                                 (0,) + _shift(dn.start_indices_batching_dims))
    # A batching dim's slice is one element, none when the batch is empty (as JAX).
    batch_slice = 1 if get_aval(x).shape[0] else 0
    return gather_p.bind(x, i, dimension_numbers=new, slice_sizes=(batch_slice,) + tuple(slice_sizes),
                         **params), 0


def _scatter_batch(prim):
    def rule(vals, dims, *, dimension_numbers, **params):
        size = batching.axis_size_of(vals, dims)
        x, i, u = (batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims))
        dn = dimension_numbers
        new = ScatterDimensionNumbers(_shift(dn.update_window_dims), _shift(dn.inserted_window_dims),
                                      _shift(dn.scatter_dims_to_operand_dims),
                                      (0,) + _shift(dn.operand_batching_dims),
                                      (0,) + _shift(dn.scatter_indices_batching_dims))
        return prim.bind(x, i, u, dimension_numbers=new, **params), 0
    return rule


batching.batch_rules[gather_p] = _gather_batch
for _p in _SCATTERS:
    batching.batch_rules[_p] = _scatter_batch(_p)

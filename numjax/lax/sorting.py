"""Sorting primitives: ``sort`` (several operands sorted by the first ``num_keys``) and ``top_k``,
with the gather/scatter along one axis that their derivatives need.

Keys compare in JAX's total order: -0.0 equals 0.0 and every NaN equals every other NaN and
sorts after +inf (the stable order of equal keys is kept); complex keys compare by real part,
then imaginary part.
"""
import numpy as np

from .. import dtypes
from ..array import Array, c_contiguous, to_numpy
from ..core import ShapedArray, get_aval
from ._base import make_primitive
from .indexing import (GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers, gather,
                       scatter_add)
from .shape import broadcast, reshape

__all__ = ["sort", "sort_key_val", "top_k", "sort_p", "top_k_p"]


# ---------------------------------------------------------------- total-order keys

def total_order_keys(v, canonical=True):
    """Integer arrays whose lexicographic order is JAX's sort order of ``v`` (one per
    component: two for complex values). ``canonical=False`` is the raw IEEE total order
    (-NaN < -inf < -0.0 < 0.0 < inf < NaN) that top_k uses."""
    if dtypes.kind(v.dtype) == "c":
        return total_order_keys(v.real, canonical) + total_order_keys(v.imag, canonical)
    if v.dtype == np.bool_:
        return [v.view(np.uint8)]
    if dtypes.kind(v.dtype) in "iu":
        return [v]
    # Floats: canonical zero and NaN, then the IEEE bits mapped to a monotone signed integer.
    if canonical:
        v = np.where(v == 0, np.zeros((), v.dtype), v)
        v = np.where(np.isnan(v), np.full((), np.nan, v.dtype), v)
    ity = np.dtype(f"i{v.dtype.itemsize}")
    bits = np.ascontiguousarray(v).view(ity)
    return [np.where(bits < 0, bits ^ np.array(np.iinfo(ity).max, ity), bits)]


def sort_permutation(keys, axis):
    """The stable permutation sorting ``keys`` (lexicographically, first key first) along axis."""
    ints = [k for v in keys for k in total_order_keys(np.asarray(v))]
    if len(ints) == 1:
        return np.argsort(ints[0], axis=axis, kind="stable")
    return np.lexsort(ints[::-1], axis=axis)


# ---------------------------------------------------------------- sort

def _sort_impl(*operands, dimension, is_stable, num_keys):
    vals = [to_numpy(o) for o in operands]
    perm = sort_permutation(vals[:num_keys], dimension)
    return [Array(c_contiguous(np.take_along_axis(v, perm, axis=dimension)), getattr(o, "weak_type", False))
            for v, o in zip(vals, operands)]


def _sort_abstract(*avals, dimension, is_stable, num_keys):
    shape = avals[0].shape
    if any(a.shape != shape for a in avals):
        raise TypeError(f"sort operands must have the same shape, got "
                        f"{', '.join(str(a.shape) for a in avals)}")
    if not 1 <= num_keys <= len(avals):
        raise ValueError(f"sort num_keys={num_keys} must be between 1 and the number of "
                         f"operands ({len(avals)})")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"sort dimension {dimension} is out of bounds for operands of shape {shape}")
    return list(avals)


sort_p = make_primitive("sort", _sort_impl, _sort_abstract, multiple_results=True)


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sorts ``operand`` (an array or a sequence of same-shape arrays) along ``dimension``;
    a sequence is sorted by its first ``num_keys`` arrays and returned as a tuple."""
    from ..numpy._util import asarray_leaf
    single = not isinstance(operand, (list, tuple))
    operands = [asarray_leaf(o) for o in ([operand] if single else operand)]
    if not operands:
        raise ValueError("lax.sort needs at least one operand")
    ndim = get_aval(operands[0]).ndim
    if not -ndim <= dimension < ndim:
        raise ValueError(f"axis {dimension} is out of bounds for array of dimension {ndim}")
    outs = sort_p.bind(*operands, dimension=int(dimension) % ndim, is_stable=bool(is_stable),
                       num_keys=int(num_keys))
    return outs[0] if single else tuple(outs)


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sorts ``keys`` along ``dimension`` and applies the same permutation to ``values``."""
    k, v = sort([keys, values], dimension, is_stable, num_keys=1)
    return k, v


# ---------------------------------------------------------------- top_k

def top_k_permutation(v, axis):
    """Stable descending order along ``axis``: ties keep the lower index first, NaN is largest."""
    keys = total_order_keys(v, canonical=False)
    descending = [~k if dtypes.kind(k.dtype) in "iu" else k for k in keys]
    if len(descending) == 1:
        return np.argsort(descending[0], axis=axis, kind="stable")
    return np.lexsort(descending[::-1], axis=axis)


def _top_k_impl(x, *, k, axis):
    v = to_numpy(x)
    perm = np.take(top_k_permutation(v, axis), np.arange(k), axis=axis)
    return [Array(c_contiguous(np.take_along_axis(v, perm, axis=axis)), getattr(x, "weak_type", False)),
            Array(c_contiguous(perm.astype(np.int32)), False)]


def _top_k_abstract(x, *, k, axis):
    if x.ndim == 0:
        raise TypeError("top_k operand must have >= 1 dimension, got ()")
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if x.shape[axis] < k:
        raise ValueError(f"k argument to top_k must be no larger than size along axis; "
                         f"got k={k} with shape={list(x.shape)} and axis={axis}")
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1:]
    return [ShapedArray(shape, x.dtype, x.weak_type), ShapedArray(shape, np.int32, False)]


top_k_p = make_primitive("top_k", _top_k_impl, _top_k_abstract, multiple_results=True)


def top_k(operand, k, *, axis=-1):
    """The ``k`` largest entries along ``axis`` (descending) and their int32 indices."""
    from ..numpy._util import asarray_leaf
    operand = asarray_leaf(operand)
    ndim = get_aval(operand).ndim
    if ndim == 0:
        raise TypeError("top_k operand must have >= 1 dimension, got ()")
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return top_k_p.bind(operand, k=int(k), axis=int(axis) % ndim)   # a list, as JAX returns


# ---------------------------------------------------------------- gather/scatter along an axis
# The derivatives of sort and top_k (and jnp's order statistics and set operations) pick
# entries along one axis, out[..., j, ...] = x[..., idx[..., j, ...], ...], and add them back
# into place: a gather (scatter-add) batched over every other axis, as JAX writes them.

def _along_axis_indices(idx, axis):
    """``idx`` with a trailing index-vector axis, and the other axes (batched, not indexed)."""
    aval = get_aval(idx)
    others = tuple(d for d in range(aval.ndim) if d != axis)
    return reshape(idx, aval.shape + (1,)), others


def take_along_axis(x, idx, axis):
    """x[..., idx[..., j, ...], ...] along ``axis``; the indices must be in range."""
    vec, others = _along_axis_indices(idx, axis)
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,), start_index_map=(axis,),
                                operand_batching_dims=others, start_indices_batching_dims=others)
    return gather(x, vec, dn, (1,) * get_aval(x).ndim, mode=GatherScatterMode.PROMISE_IN_BOUNDS)


def scatter_add_along_axis(upd, idx, axis, size):
    """Zeros of ``upd``'s shape with ``size`` along ``axis``, plus each update at its index."""
    vec, others = _along_axis_indices(idx, axis)
    aval = get_aval(upd)
    zero = Array(np.zeros((), aval.dtype), aval.weak_type)
    zeros = broadcast(zero, aval.shape[:axis] + (int(size),) + aval.shape[axis + 1:])
    dn = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(axis,),
                                 scatter_dims_to_operand_dims=(axis,), operand_batching_dims=others,
                                 scatter_indices_batching_dims=others)
    return scatter_add(zeros, vec, upd, dn, mode=GatherScatterMode.PROMISE_IN_BOUNDS)


# ---------------------------------------------------------------- differentiation rules
from ..interpreters import ad  # noqa: E402


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    # As JAX: sort an iota alongside, then gather every tangent by that permutation.
    from .shape import broadcasted_iota
    shape = get_aval(primals[0]).shape
    iota = broadcasted_iota(np.int32, shape, dimension)
    *sorted_primals, perm = sort_p.bind(*primals, iota, dimension=dimension,
                                        is_stable=is_stable, num_keys=num_keys)
    tangents_out = [t if type(t) is ad.Zero else take_along_axis(t, perm, dimension) for t in tangents]
    return sorted_primals, tangents_out


ad.jvp_rules[sort_p] = _sort_jvp


def _top_k_jvp(primals, tangents, *, k, axis):
    (x,), (t,) = primals, tangents
    values, indices = top_k_p.bind(x, k=k, axis=axis)
    t_out = ad.Zero(get_aval(values)) if type(t) is ad.Zero else take_along_axis(t, indices, axis)
    return [values, indices], [t_out, ad.Zero(ad._tangent_aval(get_aval(indices)))]


ad.jvp_rules[top_k_p] = _top_k_jvp


# ---------------------------------------------------------------- batching rules
from ..interpreters import batching  # noqa: E402


def _sort_batch(vals, dims, *, dimension, is_stable, num_keys):
    # Sorting along a dimension is independent across the others: the batch axis goes first.
    size = batching.axis_size_of(vals, dims)
    vals = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    outs = sort_p.bind(*vals, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return outs, [0] * len(outs)


def _top_k_batch(vals, dims, *, k, axis):
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    outs = top_k_p.bind(x, k=k, axis=axis + 1)
    return outs, [0, 0]


batching.batch_rules[sort_p] = _sort_batch
batching.batch_rules[top_k_p] = _top_k_batch

# Eager applications type-check first, as every other lax primitive does.
from ._base import check_eagerly  # noqa: E402

check_eagerly(sort_p, top_k_p)

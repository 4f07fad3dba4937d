"""Reductions with NumPy's full signature (axis tuples, keepdims, where=, initial=, dtype=)."""
import builtins

import numpy as np

from .. import dtypes, lax
from ..array import Array
from ..core import get_aval
from . import _eager_paths
from . import (_int_sum_promote, _to_bool, argmax, argmin, cumprod, cumsum, isnan, logical_not,
               maximum, minimum, add, multiply, sqrt, broadcast_to, where as _where3)
from ._util import (asarray_leaf, canonicalize_axis, promote_args_inexact, promote_dtypes, reduction_axes,
                    to_inexact_dtype)

__all__ = ["sum", "prod", "max", "min", "amax", "amin", "all", "any", "mean", "var", "std", "ptp",
           "average", "nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin",
           "nanargmax", "nanargmin", "nancumsum", "nancumprod", "cumulative_sum",
           "cumulative_prod"]


def _const(v, dtype):
    return Array(np.asarray(v, dtype), False)


def _identity(name, dt):
    if name in ("sum", "any"):
        return False if dt == np.bool_ else 0
    if name in ("prod", "all"):
        return True if dt == np.bool_ else 1
    return None


def _upcast_half(dt):
    """float32 for float16/bfloat16: JAX sums, multiplies and averages them in float32 and rounds
    the result once (the 8-bit floats it reduces in their own type)."""
    return dtypes.float32 if dt in (dtypes.float16, dtypes.bfloat16) else dt


def _reduce(name, prim_fn, a, axis, dtype, keepdims, initial, where, promote=None, upcast=False):
    a = asarray_leaf(a)
    if dtype is not None:
        a = lax._convert_element_type(a, dtypes.check_user_dtype(dtype, name), False)
    elif promote is not None:
        a = promote(a)
    result_dtype = get_aval(a).dtype
    if upcast and _upcast_half(result_dtype) != result_dtype:
        a = lax._convert_element_type(a, _upcast_half(result_dtype), False)
    aval = get_aval(a)
    axes = reduction_axes(axis, aval.ndim)
    if where is not None:
        fill = _identity(name, aval.dtype) if initial is None else initial
        if fill is None:
            raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                             "where mask one has to specify 'initial'")
        mask = broadcast_to(_to_bool(asarray_leaf(where)), aval.shape)
        a = lax.select(mask, a, lax.broadcast(_const(fill, aval.dtype), aval.shape))
    elif name in ("max", "min") and initial is None and builtins.any(aval.shape[i] == 0 for i in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    result = prim_fn(a, axes)
    if initial is not None:
        init = lax._convert_element_type(asarray_leaf(initial), aval.dtype, False)
        combine = {"max": lax.max, "min": lax.min, "sum": lax.add, "prod": lax.mul,
                   "all": lax.bitwise_and, "any": lax.bitwise_or}[name]
        if name == "sum" and aval.dtype == np.bool_:
            combine = lax.bitwise_or
        if name == "prod" and aval.dtype == np.bool_:
            combine = lax.bitwise_and
        result = combine(result, init)
    if keepdims:
        result = lax.expand_dims(result, axes)
    if aval.dtype != result_dtype or get_aval(result).weak_type:
        # As in JAX, jnp reductions return strong types (lax's keep the operand's weak type).
        result = lax._convert_element_type(result, result_dtype, False)
    return result


def _bool_safe(prim_or, prim):
    # lax's reduce_sum/prod reject bools only through lowering; do them as or/and as JAX does.
    def fn(a, axes):
        return (prim_or if get_aval(a).dtype == np.bool_ else prim)(a, axes)
    return fn


def _defaults(a, axis, out, keepdims, where, initial=None, dtype=None, promote_integers=True):
    """Whether a reduction may take the eager short path (numpy/_eager_paths.py): a plain Array
    reduced over every axis with no other argument."""
    return (type(a) is Array and axis is None and out is None and keepdims is False and where is None
            and initial is None and dtype is None and promote_integers is True)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,  # noqa: A001
        promote_integers=True):
    if _defaults(a, axis, out, keepdims, where, initial, dtype, promote_integers):
        res = _eager_paths.whole_reduction("sum", a)
        if res is not None:
            return res
    return _reduce("sum", _bool_safe(lax.reduce_or, lax.reduce_sum), a, axis, dtype, keepdims,
                   initial, where, _int_sum_promote if promote_integers else None, upcast=True)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
    if _defaults(a, axis, out, keepdims, where, initial, dtype, promote_integers):
        res = _eager_paths.whole_reduction("prod", a)
        if res is not None:
            return res
    return _reduce("prod", _bool_safe(lax.reduce_and, lax.reduce_prod), a, axis, dtype, keepdims,
                   initial, where, _int_sum_promote if promote_integers else None, upcast=True)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    if _defaults(a, axis, out, keepdims, where, initial):
        res = _eager_paths.whole_reduction("max", a)
        if res is not None:
            return res
    return _reduce("max", lax.reduce_max, a, axis, None, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    if _defaults(a, axis, out, keepdims, where, initial):
        res = _eager_paths.whole_reduction("min", a)
        if res is not None:
            return res
    return _reduce("min", lax.reduce_min, a, axis, None, keepdims, initial, where)


amax, amin = max, min


def all(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    if _defaults(a, axis, out, keepdims, where):
        res = _eager_paths.whole_reduction("all", a)
        if res is not None:
            return res
    return _reduce("all", lax.reduce_and, _to_bool(asarray_leaf(a)), axis, None, keepdims, None, where)


def any(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    if _defaults(a, axis, out, keepdims, where):
        res = _eager_paths.whole_reduction("any", a)
        if res is not None:
            return res
    return _reduce("any", lax.reduce_or, _to_bool(asarray_leaf(a)), axis, None, keepdims, None, where)


def _count(a, axis, keepdims, where, dtype):
    aval = get_aval(a)
    axes = reduction_axes(axis, aval.ndim)
    if where is None:
        n = 1
        for i in axes:
            n *= aval.shape[i]
        shape = tuple(1 if (i in axes) else s for i, s in enumerate(aval.shape)) if keepdims else ()
        return lax.broadcast(_const(n, dtype), shape) if shape else _const(n, dtype)
    mask = broadcast_to(_to_bool(asarray_leaf(where)), aval.shape)
    return sum(mask, axis, dtype=dtype, keepdims=keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    if _defaults(a, axis, out, keepdims, where, None, dtype):
        res = _eager_paths.whole_reduction("mean", a)
        if res is not None:
            return res
    a = asarray_leaf(a)
    aval = get_aval(a)
    reduction_axes(axis, aval.ndim, error=IndexError)   # JAX's mean reads the shape first
    dt = dtypes.check_user_dtype(dtype, "mean") if dtype is not None else to_inexact_dtype(aval.dtype)
    comp_dt = _upcast_half(dt)
    total = sum(lax._convert_element_type(a, comp_dt, aval.weak_type), axis, keepdims=keepdims, where=where)
    count = _count(a, axis, keepdims, where, comp_dt)
    out = lax.div(total, count)
    return out if comp_dt == dt else lax._convert_element_type(out, dt, False)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    if _defaults(a, axis, out, keepdims, where, None, dtype) and type(ddof) is int and not ddof \
            and correction is None:
        res = _eager_paths.whole_reduction("var", a)
        if res is not None:
            return res
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    a = asarray_leaf(a)
    aval = get_aval(a)
    reduction_axes(axis, aval.ndim, error=IndexError)   # as mean: JAX reads the shape first
    dt = dtypes.check_user_dtype(dtype, "var") if dtype is not None else to_inexact_dtype(aval.dtype)
    comp_dt = _upcast_half(to_inexact_dtype(dt))
    a = lax._convert_element_type(a, comp_dt, aval.weak_type)
    centered = lax.sub(a, mean(a, axis, keepdims=True, where=where))
    if dtypes.kind(comp_dt) == "c":
        from ._elementwise import real, conj
        centered = real(lax.mul(centered, conj(centered)))
    else:
        centered = lax.mul(centered, centered)
    count = _count(a, axis, keepdims, where, get_aval(centered).dtype)
    normalizer = lax.sub(count, _const(ddof, get_aval(centered).dtype))
    out = lax.div(sum(centered, axis, keepdims=keepdims, where=where), normalizer)
    narrowed = dtypes.kind(dt) not in "c" and (dtype is not None or comp_dt != dt)
    out = lax._convert_element_type(out, dt, False) if narrowed else out
    # as JAX: NaN where ddof leaves no degrees of freedom (ddof > n would divide by a negative)
    return _where3(lax.gt(normalizer, _const(0, get_aval(normalizer).dtype)), out, np.nan)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    return sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, correction=correction))


def ptp(a, axis=None, out=None, keepdims=False):
    return lax.sub(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    if weights is None:
        reduction_axes(axis, get_aval(asarray_leaf(a)).ndim)   # ValueError here, as JAX's average
        avg = mean(a, axis, keepdims=keepdims)
        if not returned:
            return avg
        a = asarray_leaf(a)
        count = _count(a, axis, keepdims, None, get_aval(avg).dtype)
        return avg, lax.broadcast(count, get_aval(avg).shape) if get_aval(count).shape != get_aval(avg).shape \
            else count
    (a,) = promote_args_inexact("average", a)
    a, weights = promote_dtypes(a, asarray_leaf(weights))
    a_shape, w_shape = get_aval(a).shape, get_aval(weights).shape
    if axis is None:
        if a_shape != w_shape:
            raise ValueError("Axis must be specified when shapes of a and weights differ.")
    elif a_shape != w_shape:
        if len(w_shape) != 1:
            raise ValueError("1D weights expected when shapes of a and weights differ.")
        ax = canonicalize_axis(axis, len(a_shape))
        if w_shape[0] != a_shape[ax]:
            raise ValueError("Length of weights not compatible with specified axis.")
        weights = lax.broadcast_in_dim(weights, a_shape, (ax,))
    elif isinstance(axis, tuple):
        pass
    weights_sum = sum(weights, axis, keepdims=keepdims)
    avg = lax.div(sum(lax.mul(a, weights), axis, keepdims=keepdims), weights_sum)
    if returned:
        if get_aval(avg).shape != get_aval(weights_sum).shape:
            weights_sum = broadcast_to(weights_sum, get_aval(avg).shape)
        return avg, weights_sum
    return avg


# ---------------------------------------------------------------- NaN-ignoring forms

def _nan_fill(a, value):
    a = asarray_leaf(a)
    if dtypes.kind(get_aval(a).dtype) not in "fc":
        return a
    return _where3(isnan(a), value, a)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    return sum(_nan_fill(a, 0), axis, dtype, keepdims=keepdims, initial=initial, where=where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    return prod(_nan_fill(a, 1), axis, dtype, keepdims=keepdims, initial=initial, where=where)


def _nan_extremum(reducer, fill):
    def fn(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        a = asarray_leaf(a)
        if dtypes.kind(get_aval(a).dtype) not in "fc":
            return reducer(a, axis, keepdims=keepdims, initial=initial, where=where)
        out = reducer(_nan_fill(a, fill), axis, keepdims=keepdims, initial=initial, where=where)
        all_nan = all(isnan(a), axis, keepdims=keepdims, where=where)
        return _where3(all_nan, np.nan, out)
    return fn


nanmax = _nan_extremum(max, -np.inf)
nanmin = _nan_extremum(min, np.inf)
nanmax.__name__, nanmin.__name__ = "nanmax", "nanmin"


def _nan_count(a, axis, keepdims, where):
    mask = logical_not(isnan(a))
    if where is not None:
        mask = lax.bitwise_and(mask, broadcast_to(_to_bool(asarray_leaf(where)), get_aval(a).shape))
    return mask


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    a = asarray_leaf(a)
    aval = get_aval(a)
    if dtypes.kind(aval.dtype) not in "fc":
        return mean(a, axis, dtype, keepdims=keepdims, where=where)
    dt = dtypes.canonicalize_dtype(dtype) if dtype is not None else aval.dtype
    mask = _nan_count(a, axis, keepdims, where)
    normalizer = sum(mask, axis, dtype=dt, keepdims=keepdims)
    total = nansum(a, axis, dtype=dt, keepdims=keepdims, where=where)
    return lax.div(total, normalizer)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, correction=None):
    if correction is not None:
        ddof = correction
    a = asarray_leaf(a)
    aval = get_aval(a)
    if dtypes.kind(aval.dtype) not in "fc":
        return var(a, axis, dtype, ddof=ddof, keepdims=keepdims, where=where)
    dt = dtypes.canonicalize_dtype(dtype) if dtype is not None else aval.dtype
    a = lax._convert_element_type(a, dt, aval.weak_type)
    centered = lax.sub(_nan_fill(a, 0), nanmean(a, axis, keepdims=True, where=where))
    if dtypes.kind(dt) == "c":
        from ._elementwise import real, conj
        centered = real(lax.mul(centered, conj(centered)))
    else:
        centered = lax.mul(centered, centered)
    mask = _nan_count(a, axis, keepdims, where)
    cdt = get_aval(centered).dtype
    normalizer = lax.sub(sum(mask, axis, dtype=cdt, keepdims=keepdims), _const(ddof, cdt))
    total = sum(_where3(mask, centered, 0), axis, keepdims=keepdims)
    return _where3(lax.le(normalizer, _const(0, cdt)), np.nan, lax.div(total, normalizer))


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, correction=None):
    return sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, correction=correction))


def _nan_arg(arg_fn, fill):
    def fn(a, axis=None, out=None, keepdims=None):
        a = asarray_leaf(a)
        keepdims = bool(keepdims)
        if dtypes.kind(get_aval(a).dtype) not in "fc":
            return arg_fn(a, axis, keepdims=keepdims)
        nan_mask = isnan(a)
        res = arg_fn(_where3(nan_mask, fill, a), axis, keepdims=keepdims)
        return _where3(all(nan_mask, axis, keepdims=keepdims), -1, res)
    return fn


nanargmax = _nan_arg(argmax, -np.inf)
nanargmin = _nan_arg(argmin, np.inf)
nanargmax.__name__, nanargmin.__name__ = "nanargmax", "nanargmin"


def nancumsum(a, axis=None, dtype=None, out=None):
    return cumsum(_nan_fill(a, 0), axis, dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    return cumprod(_nan_fill(a, 1), axis, dtype)


def _cumulative_api(name, cum_fn, fill, promote_integers=False):
    def fn(x, /, *, axis=None, dtype=None, include_initial=False):
        x = asarray_leaf(x)
        nd = get_aval(x).ndim
        if nd == 0:
            raise ValueError(f"The input to {name} must be an array of at least 1 dimension")
        if axis is None:
            if nd > 1:
                raise ValueError(f"The input array has rank {nd}, however axis was not set to an "
                                 "explicit value. The axis argument is only optional for "
                                 "one-dimensional arrays.")
            axis = 0
        axis = canonicalize_axis(axis, nd)
        if promote_integers and dtype is None:   # as sum: small ints count in the default int
            x = _int_sum_promote(x)
        out = cum_fn(x, axis, dtype)
        if include_initial:
            cfg = [(0, 0, 0)] * nd
            cfg[axis] = (1, 0, 0)
            out = lax.pad(out, _const(fill, get_aval(out).dtype), cfg)
        return out
    fn.__name__ = name
    return fn


cumulative_sum = _cumulative_api("cumulative_sum", cumsum, 0, promote_integers=True)
cumulative_prod = _cumulative_api("cumulative_prod", cumprod, 1)

"""Reductions over axes, argmin/argmax, and cumulative reductions."""
import numpy as np

from numjax.array import c_contiguous as _c_contiguous

from .. import dtypes
from ..array import Array, to_numpy
from ..core import ShapedArray, get_aval
from ..jaxpr import param_printers
from ._base import check_dtype_kind, make_primitive


def _reduce_abstract(name, kinds=None):
    def rule(x, *, axes, out_sharding=None):
        if kinds:
            check_dtype_kind(name, x, kinds, "bool")
        for a in axes:
            if not 0 <= a < x.ndim:
                raise ValueError(f"{name}: axis {a} is out of bounds for array of dimension {x.ndim}")
        shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, x.weak_type)
    return rule


def _reduce_impl(np_fn):
    def impl(x, *, axes, out_sharding=None):
        v = to_numpy(x)
        with np.errstate(all="ignore"):
            out = np.asarray(np_fn(v, axis=axes))
        return Array(out.astype(v.dtype, copy=False), getattr(x, "weak_type", False))
    return impl


def _np_max(v, axis):
    if v.size == 0:
        return np.full([s for i, s in enumerate(v.shape) if i not in axis], _identity_max(v.dtype), v.dtype)
    return np.max(v, axis=axis)


def _np_min(v, axis):
    if v.size == 0:
        return np.full([s for i, s in enumerate(v.shape) if i not in axis], _identity_min(v.dtype), v.dtype)
    return np.min(v, axis=axis)


def _identity_max(dt):
    return -np.inf if dt.kind == "f" else (False if dt == np.bool_ else np.iinfo(dt).min)


def _identity_min(dt):
    return np.inf if dt.kind == "f" else (True if dt == np.bool_ else np.iinfo(dt).max)


reduce_sum_p = make_primitive("reduce_sum", _reduce_impl(np.sum), _reduce_abstract("reduce_sum"))
reduce_prod_p = make_primitive("reduce_prod", _reduce_impl(np.prod), _reduce_abstract("reduce_prod"))
reduce_max_p = make_primitive("reduce_max", _reduce_impl(_np_max), _reduce_abstract("reduce_max"))
reduce_min_p = make_primitive("reduce_min", _reduce_impl(_np_min), _reduce_abstract("reduce_min"))
reduce_and_p = make_primitive("reduce_and", _reduce_impl(np.all), _reduce_abstract("reduce_and", "b"))
reduce_or_p = make_primitive("reduce_or", _reduce_impl(np.any), _reduce_abstract("reduce_or", "b"))
# JAX only prints out_sharding on the reductions that carry it.
for _p in (reduce_max_p, reduce_min_p, reduce_prod_p, reduce_and_p, reduce_or_p):
    param_printers[_p] = lambda p: {"axes": p["axes"]}


def _reducer(prim):
    def fn(operand, axes):
        return prim.bind(operand, axes=tuple(int(a) for a in axes), out_sharding=None)
    return fn


reduce_sum = _reducer(reduce_sum_p)
reduce_prod = _reducer(reduce_prod_p)
reduce_max = _reducer(reduce_max_p)
reduce_min = _reducer(reduce_min_p)
reduce_and = _reducer(reduce_and_p)
reduce_or = _reducer(reduce_or_p)


# ---------------------------------------------------------------- argmin / argmax

def _arg_abstract(name):
    def rule(x, *, axes, index_dtype):
        if len(axes) != 1:
            raise ValueError(f"{name} only supports a single axis, got {axes}")
        if x.shape[axes[0]] == 0:
            raise ValueError(f"{name} of an empty axis")
        shape = tuple(s for i, s in enumerate(x.shape) if i != axes[0])
        return ShapedArray(shape, index_dtype, False)
    return rule


def _arg_impl(np_fn):
    def impl(x, *, axes, index_dtype):
        # numpy already returns the first index of the extremum and treats NaN as extreme, like XLA.
        return Array(np.asarray(np_fn(to_numpy(x), axis=axes[0])).astype(index_dtype), False)
    return impl


argmax_p = make_primitive("argmax", _arg_impl(np.argmax), _arg_abstract("argmax"))
argmin_p = make_primitive("argmin", _arg_impl(np.argmin), _arg_abstract("argmin"))


def argmax(operand, axis, index_dtype):
    return argmax_p.bind(operand, axes=(int(axis),), index_dtype=dtypes.canonicalize_dtype(index_dtype))


def argmin(operand, axis, index_dtype):
    return argmin_p.bind(operand, axes=(int(axis),), index_dtype=dtypes.canonicalize_dtype(index_dtype))


# ---------------------------------------------------------------- cumulative

def _cum_impl(np_accumulate):
    def impl(x, *, axis, reverse):
        v = to_numpy(x)
        if reverse:
            v = np.flip(v, axis)
        out = np_accumulate(v, axis=axis).astype(v.dtype)
        if reverse:
            out = np.flip(out, axis)
        return Array(_c_contiguous(out), getattr(x, "weak_type", False))
    return impl


def _cum_abstract(x, *, axis, reverse):
    if not 0 <= axis < max(x.ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    return x


cumsum_p = make_primitive("cumsum", _cum_impl(np.cumsum), _cum_abstract)
cumprod_p = make_primitive("cumprod", _cum_impl(np.cumprod), _cum_abstract)
cummax_p = make_primitive("cummax", _cum_impl(np.maximum.accumulate), _cum_abstract)
cummin_p = make_primitive("cummin", _cum_impl(np.minimum.accumulate), _cum_abstract)


def _cumulative(prim):
    def fn(operand, axis=0, reverse=False):
        ndim = get_aval(operand).ndim
        return prim.bind(operand, axis=int(axis) % max(ndim, 1), reverse=bool(reverse))
    return fn


cumsum = _cumulative(cumsum_p)
cumprod = _cumulative(cumprod_p)
cummax = _cumulative(cummax_p)
cummin = _cumulative(cummin_p)

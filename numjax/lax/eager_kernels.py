"""Short eager paths of unary primitives on float32/float64 Arrays.

The transcendental ones' eager rules (``elementwise._xla_f32`` / ``_libm``) already compute
with the compiled code's own kernels (lowering/kernels.py), so eager results equal jitted
ones bit for bit; but on the way they convert, check and reshape for any operand. Here a
*runner* is made once per (primitive, dtype): ``run(x)`` takes an Array of that dtype, any
shape or layout, and calls the same kernel on its flat view. The type checks are then moot:
these primitives accept every float dtype, and the runner is chosen for one. Exactly rounded
ones (neg, abs, sqrt, floor, ceil) call numpy's ufunc, as their eager rules do; the other
primitives of ``jnp``'s unary functions run their eager rule without the per-call check.
Runners are found two ways: ``jnp``'s unary functions keep one per dtype, and ``lax`` calls
of the transcendental ones reach them through ``_base.eager_variants`` (once per eager
signature).
"""
import numpy as np

from .. import core
from ..array import Array
from . import _base
from . import elementwise as ew

# primitive -> the name of its function in the kernels' tables
_KERNEL_NAMES = {
    ew.exp_p: "exp", ew.log_p: "log", ew.log1p_p: "log1p", ew.expm1_p: "expm1",
    ew.tanh_p: "tanh", ew.logistic_p: "logistic", ew.sin_p: "sin", ew.cos_p: "cos",
    ew.tan_p: "tan", ew.atan_p: "atan", ew.asinh_p: "asinh", ew.erf_p: "erf",
    ew.erf_inv_p: "erf_inv", ew.cbrt_p: "cbrt",
}


def _kernel(name, dtype):
    """(kernel over a flat contiguous array, op code) that the primitive's eager rule uses for
    ``dtype``, or None: the same choice as ``elementwise._xla_f32`` and ``_libm``."""
    from .. import dispatch   # lazy: numjax imports without Numba
    k = dispatch.cpu_library("kernels")
    if dtype == np.float32:
        if name == "cbrt":                                   # _libm(..., f32=True)
            return k._libm_f32_flat, k.LIBM_F32_UNARY[name]
        return k._unary_f32_flat, k.XLA_F32_UNARY[name]
    if dtype == np.float64:
        if name in ew._COMPILED_F64:
            return k._unary_f64_flat, k.XLA_F64_UNARY[name]
        return k._libm_f64_flat, k.LIBM_F64_UNARY[name]       # tan, atan, asinh, cbrt
    return None


def unary_runner(prim, dtype):
    """``run(x) -> Array`` computing ``prim`` of an Array of ``dtype`` as its eager rule does,
    or None where the full rule must run. float32/float64 only: other dtypes may be computed
    wider (lax/low_precision.py) or promoted first. A primitive without a kernel runs its
    unchecked eager rule, once its type rule accepted ``dtype``."""
    dtype = np.dtype(dtype)
    if dtype != np.float32 and dtype != np.float64:
        return None
    name = _KERNEL_NAMES.get(prim)
    found = _kernel(name, dtype) if name is not None else None
    if found is None:
        return _unchecked_rule(prim, dtype)
    # (Numba's dispatcher itself: calling a compiled overload's entry point directly, ~0.08 us
    # less, corrupted memory now and then.)
    kernel, code = found

    def run(x):
        v = x._value
        if not v.size:     # (nothing to compute: the kernels are not called on empty arrays)
            return Array(np.empty(v.shape, dtype), x.weak_type)
        out = kernel(v.ravel(), code)     # (ravel: contiguous, a view when it can be)
        return Array(out if v.ndim == 1 else out.reshape(v.shape), x.weak_type)
    run.__name__ = f"eager_{name}_{np.dtype(dtype).name}"
    return run


# Exactly rounded primitives whose eager rule is numpy's ufunc on the value: on float32/float64
# the runner calls it directly (the same computation, without the general rule's conversions).
_UFUNCS = {ew.neg_p: np.negative, ew.abs_p: np.absolute, ew.sqrt_p: np.sqrt,
           ew.floor_p: np.floor, ew.ceil_p: np.ceil}


def _ufunc_runner(ufunc):
    from .._fp_quiet import call as quiet_call

    def run(x):
        out = quiet_call(ufunc, x._value)     # (sqrt(-1): NaN without numpy's warning)
        return Array(out if type(out) is np.ndarray else np.asarray(out), x.weak_type)
    run.__name__ = f"eager_{ufunc.__name__}"
    return run


def _unchecked_rule(prim, dtype):
    if prim in _UFUNCS:
        return _ufunc_runner(_UFUNCS[prim])
    rule = core.impl_rules.get(prim)
    unchecked = getattr(rule, "_unchecked", None)
    if unchecked is None or prim.multiple_results:
        return None
    try:
        out = core.abstract_eval_rules[prim](core.ShapedArray((), dtype, False))
    except TypeError:      # the type rule rejects dtype: the full path raises JAX's error
        return None
    if getattr(out, "dtype", None) != dtype:
        return None
    return unchecked


def _choose_runner(prim, impl, args, params):
    """For ``_base.check_eagerly``: the runner of a one-Array application, else None."""
    if params or len(args) != 1 or type(args[0]) is not Array or prim not in _KERNEL_NAMES:
        return None
    return unary_runner(prim, args[0]._value.dtype)


if _choose_runner not in _base.eager_variants:
    _base.eager_variants.append(_choose_runner)


def ordered_vector_reducer(dtype, product):
    """``reduce(v) -> 0-d ndarray``: the sum (``product``: the product) of a 1-d float32 or
    float64 ndarray in numjax's summation order (lax/_summation.py), by the kernel that
    reduce_sum/reduce_prod's eager rule runs on large rows (the same order as on small ones),
    without the rule's axis handling; None for other dtypes."""
    dtype = np.dtype(dtype)
    if dtype != np.float32 and dtype != np.float64:
        return None
    from .. import dispatch   # lazy: numjax imports without Numba
    kernel = dispatch.cpu_library("kernels")._ordered_rows
    start, product = dtype.type(1 if product else 0), bool(product)

    def reduce(v):
        row = v.reshape(1, -1)
        if not row.flags.c_contiguous:     # (a strided view: the kernel's one layout)
            row = np.ascontiguousarray(row)
        return kernel(row, start, product).reshape(())
    return reduce

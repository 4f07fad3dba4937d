"""Hand-written Numba kernels the generated code calls for non-fusible ops.

They live in a real module with ``cache=True`` so every program and process
reuses one compiled copy per type signature.
"""
import math

import numba
import numpy as np


_njit = numba.njit(cache=True, nogil=True, error_model="numpy")


@_njit
def as3(x, perm, b, m, k):
    """``x`` transposed by ``perm`` and viewed as (batch, rows, cols), contiguous."""
    return np.ascontiguousarray(x.transpose(perm)).reshape((b, m, k))


@_njit
def batched_matmul_blas(a, b, zero):
    # Float and complex matmuls go to BLAS through Numba's np.dot.
    nb, m, _ = a.shape
    n = b.shape[2]
    out = np.empty((nb, m, n), dtype=a.dtype)
    for i in range(nb):
        np.dot(a[i], b[i], out[i])
    return out


@_njit
def batched_matmul_loop(a, b, zero):
    # Integer and bool matmuls: BLAS has none; an i-p-j loop keeps the inner loop contiguous.
    nb, m, k = a.shape
    n = b.shape[2]
    out = np.zeros((nb, m, n), dtype=a.dtype)
    for bi in range(nb):
        for i in range(m):
            for p in range(k):
                aip = a[bi, i, p]
                for j in range(n):
                    out[bi, i, j] += aip * b[bi, p, j]
    return out


@_njit
def cumulative_last(x, kind, reverse):
    """Cumulative sum/prod/max/min (kind 0..3) along the last axis of a 2-D array."""
    rows, n = x.shape
    out = np.empty_like(x)
    for r in range(rows):
        for t in range(n):
            j = n - 1 - t if reverse else t
            v = x[r, j]
            if t == 0 and kind == 0 and n > 1:
                v += 0      # XLA's sum starts from +0: -0.0 becomes +0.0 (ints unchanged)
            if t > 0:
                prev = out[r, j + 1] if reverse else out[r, j - 1]
                if kind == 0:
                    v = prev + v
                elif kind == 1:
                    v = prev * v
                elif kind == 2:
                    v = prev if (prev > v or prev != prev or (prev == v and math.copysign(1.0, v) < 0)) else v
                else:
                    v = prev if (prev < v or prev != prev or (prev == v and math.copysign(1.0, prev) < 0)) else v
            out[r, j] = v
    return out


# Eager float32 math with the compiled path's kernels (XLA's formulas), so eager results
# equal jitted ones bitwise.  One compiled function per arity, the op chosen by its code
# outside the loop (each loop still vectorizes); numjax.lax looks ops up by name.
from . import vmath as _vm  # noqa: E402

_vm.ensure_jitted()   # the loops below call its Numba dispatchers

XLA_F32_UNARY = {name: code for code, name in enumerate(
    ("exp", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos", "tan", "erf", "erf_inv",
     "atan", "asinh"))}
XLA_F32_BINARY = {"pow": 0, "atan2": 1}
# float64: the functions the compiled code takes from vmath (the rest call libm, as numpy does).
XLA_F64_UNARY = {name: code for code, name in enumerate(
    ("exp", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos", "erf", "erf_inv"))}
XLA_F64_BINARY = {"pow": 0}


@_njit
def _unary_f32_flat(x, op):
    out = np.empty_like(x)
    n = x.size
    if op == 0:
        for i in range(n):
            out[i] = _vm.exp_f32(x[i])
    elif op == 1:
        for i in range(n):
            out[i] = _vm.log_f32(x[i])
    elif op == 2:
        for i in range(n):
            out[i] = _vm.log1p_f32(x[i])
    elif op == 3:
        for i in range(n):
            out[i] = _vm.expm1_f32(x[i])
    elif op == 4:
        for i in range(n):
            out[i] = _vm.tanh_f32(x[i])
    elif op == 5:
        for i in range(n):
            out[i] = _vm.logistic_f32(x[i])
    elif op == 6:
        for i in range(n):
            out[i] = _vm.sin_f32(x[i])
    elif op == 7:
        for i in range(n):
            out[i] = _vm.cos_f32(x[i])
    elif op == 8:
        for i in range(n):
            out[i] = _vm.tan_f32(x[i])
    elif op == 9:
        for i in range(n):
            out[i] = _vm.erf_f32(x[i])
    elif op == 10:
        for i in range(n):
            out[i] = _vm.erf_inv_f32(x[i])
    elif op == 11:
        for i in range(n):
            out[i] = _vm.atan_f32(x[i])
    else:   # libm's asinhf, which the compiled code calls (numpy has its own)
        for i in range(n):
            out[i] = np.arcsinh(x[i])
    return out


@_njit
def _unary_f64_flat(x, op):
    out = np.empty_like(x)
    n = x.size
    if op == 0:
        for i in range(n):
            out[i] = _vm.exp_f64(x[i])
    elif op == 1:
        for i in range(n):
            out[i] = _vm.log_f64(x[i])
    elif op == 2:
        for i in range(n):
            out[i] = _vm.log1p_f64(x[i])
    elif op == 3:
        for i in range(n):
            out[i] = _vm.expm1_f64(x[i])
    elif op == 4:
        for i in range(n):
            out[i] = _vm.tanh_f64(x[i])
    elif op == 5:
        for i in range(n):
            out[i] = _vm.logistic_f64(x[i])
    elif op == 6:
        for i in range(n):
            out[i] = _vm.sin_f64(x[i])
    elif op == 7:
        for i in range(n):
            out[i] = _vm.cos_f64(x[i])
    elif op == 8:
        for i in range(n):
            out[i] = _vm.erf_f64(x[i])
    else:
        for i in range(n):
            out[i] = _vm.erf_inv_f64(x[i])
    return out


@_njit
def _binary_f64_flat(x, y, op):
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = _vm.pow_f64(x[i], y[i])
    return out


@_njit
def _binary_f32_flat(x, y, op):
    out = np.empty_like(x)
    if op == 0:
        for i in range(x.size):
            out[i] = _vm.pow_f32(x[i], y[i])
    else:
        for i in range(x.size):
            out[i] = _vm.atan2_f32(x[i], y[i])
    return out


def xla_f32(name, *args):
    """float32 ``name`` of numpy arrays (broadcast together) as the compiled code computes it."""
    if len(args) == 1:
        x = np.asarray(args[0])
        flat = np.ascontiguousarray(x.reshape(-1))     # (ascontiguousarray makes 0-d 1-d)
        return _unary_f32_flat(flat, XLA_F32_UNARY[name]).reshape(x.shape)
    x, y = np.broadcast_arrays(*args)
    flat = [np.ascontiguousarray(a).reshape(-1) for a in (x, y)]
    return _binary_f32_flat(flat[0], flat[1], XLA_F32_BINARY[name]).reshape(x.shape)


def _libm_intrinsic(c_name, nb_type):
    """A call of libm's ``c_name`` (one argument of ``nb_type``): the symbol the compiled code
    calls, where numpy and Numba have implementations of their own."""
    from llvmlite import ir
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def call(typingctx, x):
        if x != nb_type:
            return None

        def codegen(context, builder, signature, args):
            ty = context.get_value_type(nb_type)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ty, [ty]), c_name)
            return builder.call(fn, args)
        return nb_type(nb_type), codegen
    return call


_cbrtf = _libm_intrinsic("cbrtf", numba.float32)
_cbrt, _tan, _atan, _asinh = (_libm_intrinsic(n, numba.float64) for n in ("cbrt", "tan", "atan", "asinh"))
LIBM_F32_UNARY = {"cbrt": 0}
LIBM_F64_UNARY = {"cbrt": 0, "tan": 1, "atan": 2, "asinh": 3}


@_njit
def _libm_f32_flat(x, op):
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = _cbrtf(x[i])
    return out


@_njit
def _libm_f64_flat(x, op):
    out = np.empty_like(x)
    n = x.size
    if op == 0:
        for i in range(n):
            out[i] = _cbrt(x[i])
    elif op == 1:
        for i in range(n):
            out[i] = _tan(x[i])
    elif op == 2:
        for i in range(n):
            out[i] = _atan(x[i])
    else:
        for i in range(n):
            out[i] = _asinh(x[i])
    return out


def libm(name, x):
    """libm's float32/float64 ``name`` of a numpy array, as the compiled code calls it."""
    x = np.asarray(x)
    flat = np.ascontiguousarray(x.reshape(-1))
    if x.dtype == np.float32:
        return _libm_f32_flat(flat, LIBM_F32_UNARY[name]).reshape(x.shape)
    return _libm_f64_flat(flat, LIBM_F64_UNARY[name]).reshape(x.shape)


def xla_f64(name, *args):
    """float64 ``name`` (one of XLA_F64_UNARY/BINARY) as the compiled code computes it."""
    if len(args) == 1:
        x = np.asarray(args[0])
        return _unary_f64_flat(np.ascontiguousarray(x.reshape(-1)), XLA_F64_UNARY[name]).reshape(x.shape)
    x, y = np.broadcast_arrays(*args)
    flat = [np.ascontiguousarray(a).reshape(-1) for a in (x, y)]
    return _binary_f64_flat(flat[0], flat[1], XLA_F64_BINARY[name]).reshape(x.shape)


@_njit
def transposed(x, perm):
    """``x`` permuted by ``perm``, contiguous. Typing ``transpose`` costs Numba several seconds
    per program; called from here it is compiled once and cached on disk."""
    return np.ascontiguousarray(x.transpose(perm))


# ---------------------------------------------------------------- ordered row reductions
# Eager sums and products of large floating arrays, in numjax's summation order
# (numjax/lax/_summation.py): the compiled loops' LANES partial results per row, computed at
# their speed.  (_summation.py's numpy emulation takes over for small arrays.)
from numjax.lax._summation import LANES as _LANES  # noqa: E402


@_njit
def _ordered_rows(w, start, product):
    rows, n = w.shape
    out = np.empty(rows, w.dtype)
    full = n - n % _LANES
    lanes = np.empty(_LANES, w.dtype)
    for r in range(rows):
        for u in range(_LANES):
            lanes[u] = start
        for j in range(0, full, _LANES):
            for u in range(_LANES):
                lanes[u] = lanes[u] * w[r, j + u] if product else lanes[u] + w[r, j + u]
        acc = lanes[0]
        for j in range(full, n):
            acc = acc * w[r, j] if product else acc + w[r, j]
        for u in range(1, _LANES):
            acc = acc * lanes[u] if product else acc + lanes[u]
        out[r] = acc
    return out


def ordered_rows(w, start, product):
    """Each row of the 2-d ``w`` reduced (a sum, or a product) in numjax's summation order."""
    return _ordered_rows(np.ascontiguousarray(w), w.dtype.type(start), bool(product))

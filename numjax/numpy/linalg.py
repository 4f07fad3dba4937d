"""numjax.numpy.linalg: NumPy's linalg API with JAX's semantics, over numjax.lax.linalg.

Solves and inverses go through an LU factorization and two triangular solves, so they are
linear in the right-hand side (reverse mode transposes the triangular solves); determinants
and pseudo-inverses carry JAX's custom JVP rules.
"""
import operator
from typing import NamedTuple

import numpy as _np

from .. import core, dtypes, lax
from .. import numpy as jnp
from ..array import Array
from ..core import get_aval
from ..custom_derivatives import custom_jvp
from ..lax import linalg as lax_linalg
from ._util import asarray_leaf, canonicalize_axis, promote_dtypes

__all__ = ["cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
           "inv", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
           "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve",
           "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot",
           "vector_norm", "EighResult", "QRResult", "SlogdetResult", "SVDResult", "EigResult"]


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


# ---------------------------------------------------------------- helpers

def _inexact(*args):
    """Operands promoted to their common inexact dtype (ints become the default float)."""
    args = [asarray_leaf(a) for a in args]
    out = promote_dtypes(*args)
    if dtypes.kind(get_aval(out[0]).dtype) not in "fc":
        out = [lax.convert_element_type(a, jnp.float32 if not _x64() else jnp.float64) for a in out]
    return out


def _x64():
    from .. import dtypes
    return dtypes.default_float_dtype() == _np.float64


def _one(a):
    return _inexact(a)[0]


def _check_square(name, a, min_ndim=2):
    shape = get_aval(a).shape
    if len(shape) < min_ndim or shape[-1] != shape[-2]:
        raise ValueError(f"Argument to {name} must have shape [..., n, n], got {shape}.")


def _check_matrix(name, a):
    shape = get_aval(a).shape
    if len(shape) < 2:
        raise ValueError(f"Argument to {name} must have shape [..., m, n], got {shape}.")


def _T(x):
    return lax_linalg._T(x)


def _H(x):
    return lax_linalg._H(x)


def _conj(x):
    return lax_linalg._conj(x)


def _real(x):
    return lax_linalg._real_part(x)


def _abs(x):
    return jnp.abs(x)


def _eye_like(a, n=None):
    aval = get_aval(a)
    n = aval.shape[-1] if n is None else n
    return lax_linalg._eye(aval.dtype, aval.shape[:-2] + (n, n))


def _broadcast_batch(a, b, b_core_ndim):
    """Broadcast the batch dims of ``a`` (core rank 2) and ``b`` (core rank ``b_core_ndim``)."""
    sa, sb = get_aval(a).shape, get_aval(b).shape
    batch = _np.broadcast_shapes(sa[:-2], sb[:len(sb) - b_core_ndim])
    return (jnp.broadcast_to(a, batch + sa[-2:]),
            jnp.broadcast_to(b, batch + sb[len(sb) - b_core_ndim:]))


# ---------------------------------------------------------------- solves and inverses

def _lu_solve(lu_, permutation, b):
    """x with (P^T L U) x = b, for b of shape (..., n, k) with the batch dims of lu_."""
    x = lax_linalg._matmul(lax_linalg._permutation_matrix(permutation, get_aval(b).dtype), b)
    x = lax_linalg.triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
    return lax_linalg.triangular_solve(lu_, x, left_side=True, lower=False)


def _solve_matrix(a, b):
    lu_, _, permutation = lax_linalg.lu(a)
    return _lu_solve(lu_, permutation, b)


@custom_jvp
def _solve(a, b):
    return _solve_matrix(a, b)


@_solve.defjvp
def _solve_jvp(primals, tangents):
    a, b = primals
    a_dot, b_dot = tangents
    x = _solve_matrix(a, b)
    # d(A^-1 b) = A^-1 (db - dA x), linear in the tangents through the triangular solves.
    return x, _solve_matrix(a, b_dot - lax_linalg._matmul(a_dot, x))


def solve(a, b):
    a, b = _inexact(a, b)
    _check_square("solve", a)
    sa, sb = get_aval(a).shape, get_aval(b).shape
    if len(sb) == 1:
        if sb[0] != sa[-1]:
            raise ValueError(f"Invalid shapes for solve: {sa}, {sb}.")
        a, b = _broadcast_batch(a, b, 1)
        return lax.squeeze(_solve(a, lax.expand_dims(b, (get_aval(b).ndim,))), (get_aval(b).ndim,))
    if sb[-2] != sa[-1]:
        msg = f"Invalid shapes for solve: {sa}, {sb}."
        if sb[-1] == sa[-1] and len(sb) == len(sa) - 1:
            msg += (" Prior to JAX v0.5.0, this would have been treated as a batched 1-dimensional "
                    "solve. To recover this behavior, use solve(a, b[..., None]).squeeze(-1).")
        raise ValueError(msg)
    return _solve(*_broadcast_batch(a, b, 2))


def inv(a):
    a = _one(a)
    _check_square("inv", a)
    return solve(a, lax.broadcast(jnp.eye(get_aval(a).shape[-1], dtype=get_aval(a).dtype),
                                  get_aval(a).shape[:-2]) if get_aval(a).ndim > 2 else
                 jnp.eye(get_aval(a).shape[-1], dtype=get_aval(a).dtype))


def _trace_last2(x):
    return jnp.sum(lax_linalg._diagonal(x), axis=-1)


# ---------------------------------------------------------------- determinants

def _lu_parts(a):
    lu_, pivots, _ = lax_linalg.lu(a)
    diag = lax_linalg._diagonal(lu_)
    p_aval = get_aval(pivots)
    swaps = jnp.sum(pivots != lax.broadcasted_iota(_np.int32, p_aval.shape, p_aval.ndim - 1), axis=-1)
    return diag, swaps % 2


@custom_jvp
def _slogdet(a):
    diag, parity = _lu_parts(a)
    dt = get_aval(a).dtype
    is_zero = jnp.any(diag == 0, axis=-1)
    if dtypes.kind(dt) == "c":
        abs_diag = _abs(diag)
        # A zero pivot's phase is 0/0, masked below; dividing by 1 there instead keeps complex
        # division by zero out of the compiled program.
        safe_abs = jnp.where(abs_diag == 0, jnp.ones_like(abs_diag), abs_diag)
        sign = jnp.prod(diag / safe_abs.astype(dt), axis=-1)
    else:
        abs_diag = _abs(diag)
        sign = jnp.prod(jnp.sign(diag), axis=-1)
    sign = sign * jnp.where(parity == 1, -1, 1).astype(dt)
    logdet = jnp.sum(jnp.log(abs_diag), axis=-1)
    sign = jnp.where(is_zero, jnp.zeros_like(sign), sign)
    logdet = jnp.where(is_zero, jnp.full_like(logdet, -_np.inf), logdet)
    return sign, logdet


@_slogdet.defjvp
def _slogdet_jvp(primals, tangents):
    a, = primals
    g, = tangents
    sign, logdet = _slogdet(a)
    z = _trace_last2(_solve_matrix(a, g))
    if dtypes.kind(get_aval(a).dtype) == "c":
        sign_dot = sign * lax_linalg._as_dtype(jnp.imag(z), get_aval(a).dtype) * 1j
        return (sign, logdet), (sign_dot, _real(z))
    return (sign, logdet), (jnp.zeros_like(sign), z)


def slogdet(a, *, method=None):
    a = _one(a)
    _check_square("slogdet", a)
    if method not in (None, "lu"):
        raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`).")
    sign, logdet = _slogdet(a)
    return SlogdetResult(sign, logdet)


def _det_2x2(a):
    return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


def _det_3x3(a):
    return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2] + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
            + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1] - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
            - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1] - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])


@custom_jvp
def _det(a):
    sign, logdet = _slogdet(a)
    return sign * jnp.exp(logdet).astype(get_aval(sign).dtype)


def _cofactor_solve(a, b):
    """(det(a), adj(a) @ b): det(a) * solve(a, b) that stays finite where a is singular, as in
    JAX.  From a = P^T L U: adj(a) b = det(a) U^-1 L^-1 P b.  Replacing U's last pivot by
    1 / (the product of the others, signed) makes the last row of the solve carry that
    product instead of dividing by a zero pivot, and every other row is scaled by det(a), 0
    for a rank n-1 matrix.  When the rank is lower (or the zero pivot is not the last) the
    modified U is still singular, and the result is 0: the adjugate of such a matrix."""
    n = get_aval(a).shape[-1]
    if n == 1:
        return a[..., 0, 0], b
    lu_, pivots, permutation = lax_linalg.lu(a)
    dt = get_aval(a).dtype
    diag = lax_linalg._diagonal(lu_)
    p_aval = get_aval(pivots)
    swaps = jnp.sum(pivots != lax.broadcasted_iota(_np.int32, p_aval.shape, p_aval.ndim - 1), axis=-1)
    sign = (1 - 2 * (swaps % 2)).astype(dt)
    det_but_last = jnp.prod(diag[..., :-1], axis=-1) * sign
    det_a = det_but_last * diag[..., -1]
    last_pivot = _np.zeros((n, n), bool)
    last_pivot[-1, -1] = True
    # 1/0 is inf (the low-rank test below then zeroes the result), written without dividing
    # by zero so complex programs on the Numba backend do not raise ZeroDivisionError.
    singular = det_but_last == 0
    recip = jnp.where(singular, jnp.full_like(det_but_last, _np.inf),
                      1 / jnp.where(singular, jnp.ones_like(det_but_last), det_but_last))
    lu_ = jnp.where(last_pivot, recip[..., None, None], lu_)
    ones = jnp.ones(get_aval(lu_).shape[:-1] + (1,), dt)
    probe = lax_linalg.triangular_solve(lu_, ones, left_side=True, lower=False)
    low_rank = jnp.any(jnp.isnan(probe) | jnp.isinf(probe), axis=(-2, -1))[..., None, None]
    x = jnp.where(low_rank, jnp.zeros_like(b), b)
    x = lax_linalg._matmul(lax_linalg._permutation_matrix(permutation, dt), x)
    x = lax_linalg.triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
    row_scale = jnp.where(jnp.arange(n) == n - 1, jnp.ones((), dt), det_a[..., None])
    x = lax_linalg.triangular_solve(lu_, x * row_scale[..., :, None], left_side=True, lower=False)
    return det_a, jnp.where(low_rank, jnp.zeros_like(x), x)


@_det.defjvp
def _det_jvp(primals, tangents):
    # d det(A) = tr(adj(A) dA), through the cofactor solve so a singular A has its finite
    # derivative (JAX's rule).  The primal is det(A) as det computes it (JAX returns the
    # product of U's diagonal here, which can differ from det(A) in the last bit).
    a, = primals
    g, = tangents
    _, z = _cofactor_solve(a, g)
    return _det(a), _trace_last2(z)


def det(a):
    a = _one(a)
    _check_square("det", a)
    n = get_aval(a).shape[-1]
    # 2x2 and 3x3 by their closed forms, differentiated as they are (as in JAX).
    if n == 2:
        return _det_2x2(a)
    if n == 3:
        return _det_3x3(a)
    return _det(a)


# ---------------------------------------------------------------- factorizations

def cholesky(a, *, upper=False, symmetrize_input=True):
    a = _one(a)
    _check_square("cholesky", a)
    L = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return _H(L) if upper else L


def qr(a, mode="reduced"):
    a = _one(a)
    _check_matrix("qr", a)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_linalg.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    a = _one(a)
    _check_matrix("svd", a)
    if hermitian:
        v, w = lax_linalg.eigh(a, subset_by_index=subset_by_index)
        s = _abs(w)
        order = jnp.flip(jnp.argsort(s, axis=-1), axis=-1)
        s_sorted = jnp.take_along_axis(s, order, axis=-1)
        if not compute_uv:
            return s_sorted
        sign = jnp.take_along_axis(jnp.sign(w), order, axis=-1).astype(get_aval(a).dtype)
        idx = lax.broadcast_in_dim(order, get_aval(v).shape, tuple(range(get_aval(v).ndim - 2)) +
                                   (get_aval(v).ndim - 1,))
        v = jnp.take_along_axis(v, idx, axis=-1)
        u = v * jnp.expand_dims(sign, -2)
        return SVDResult(u, s_sorted, _H(v))
    out = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv,
                         subset_by_index=subset_by_index)
    return SVDResult(*out) if compute_uv else out


def svdvals(x):
    return svd(x, compute_uv=False, hermitian=False)


def eigh(a, UPLO=None, symmetrize_input=True):
    a = _one(a)
    _check_square("eigh", a)
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
    v, w = lax_linalg.eigh(a, lower=UPLO != "U", symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def _eager_only(name, *args):
    if any(isinstance(a, core.Tracer) for a in args):
        raise NotImplementedError(f"jnp.linalg.{name} is only implemented eagerly in numjax "
                                  "(no Numba lowering or derivative); call it outside jit/grad/vmap.")


def _complex_dtype(dt):
    return _np.complex128 if _np.dtype(dt) in (_np.float64, _np.complex128) else _np.complex64


def eig(a):
    a = _one(a)
    _check_square("eig", a)
    _eager_only("eig", a)
    v = _np.asarray(a._value)
    w, vec = _np.linalg.eig(v)
    dt = _complex_dtype(v.dtype)
    return EigResult(Array(_np.ascontiguousarray(w.astype(dt)), False),
                     Array(_np.ascontiguousarray(vec.astype(dt)), False))


def eigvals(a):
    return eig(a).eigenvalues


# ---------------------------------------------------------------- norms

def _abs_sq_sum(x, axis, keepdims):
    if dtypes.kind(get_aval(x).dtype) == "c":
        return jnp.sum(_real(x * _conj(x)), axis=axis, keepdims=keepdims)
    return jnp.sum(x * x, axis=axis, keepdims=keepdims)


def _vector_norm(x, ord, axis, keepdims):
    if ord is None or ord == 2:
        return jnp.sqrt(_abs_sq_sum(x, axis, keepdims))
    if ord == _np.inf:   # JAX's max norms start from 0: an empty operand's norm is 0
        return jnp.max(_abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -_np.inf:
        return jnp.min(_abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        nz = (x != 0).astype(get_aval(_real(x)).dtype)
        return jnp.sum(nz, axis=axis, keepdims=keepdims)
    if ord == 1:
        return jnp.sum(_abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    ax = _abs(x)
    rdt = get_aval(ax).dtype
    p = jnp.asarray(ord, dtype=rdt)
    return jnp.power(jnp.sum(jnp.power(ax, p), axis=axis, keepdims=keepdims), jnp.reciprocal(p))


def _matrix_norm(x, ord, axes, keepdims):
    row, col = axes
    if ord in (None, "fro", "f"):
        return jnp.sqrt(_abs_sq_sum(x, axes, keepdims))
    if ord in (1, -1, _np.inf, -_np.inf):
        # 1: max column sum (sum over rows); inf: max row sum (sum over columns).
        sum_axis, red_axis = (row, col) if ord in (1, -1) else (col, row)
        sums = jnp.sum(_abs(x), axis=sum_axis, keepdims=keepdims)
        red_axis = red_axis if keepdims or red_axis < sum_axis else red_axis - 1
        if ord in (1, _np.inf):
            return jnp.max(sums, axis=red_axis, keepdims=keepdims, initial=0)
        return jnp.min(sums, axis=red_axis, keepdims=keepdims)
    if ord in (2, -2, "nuc"):
        y = jnp.moveaxis(x, (row, col), (-2, -1))
        s = svd(y, compute_uv=False)
        out = (jnp.max(s, axis=-1, initial=0) if ord == 2 else jnp.min(s, axis=-1) if ord == -2
               else jnp.sum(s, axis=-1))
        if keepdims:
            out = jnp.expand_dims(out, tuple(sorted((row, col))))
        return out
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def norm(x, ord=None, axis=None, keepdims=False):
    x = _one(x)
    nd = get_aval(x).ndim
    if axis is None:
        if ord is None:
            return jnp.sqrt(_abs_sq_sum(jnp.ravel(x), 0, False)).reshape((1,) * nd if keepdims else ())
        axis = tuple(range(nd))
    elif isinstance(axis, (int, _np.integer)):
        axis = (int(axis),)
    axis = tuple(canonicalize_axis(operator.index(a), nd) for a in axis)
    if len(axis) == 1:
        return _vector_norm(x, ord, axis, keepdims)
    if len(axis) == 2:
        return _matrix_norm(x, ord, axis, keepdims)
    raise ValueError(f"Improper number of axes for norm: axis={axis}. Pass one axis to compute a "
                     "vector-norm, or two axes to compute a matrix-norm.")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    x = _one(x)
    if axis is None:
        out = _vector_norm(jnp.ravel(x), ord, (0,), False)
        return out.reshape((1,) * get_aval(x).ndim) if keepdims else out
    return norm(x, ord=ord, axis=(axis,) if isinstance(axis, int) else axis, keepdims=keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


def cond(x, p=None):
    x = _one(x)
    shape = get_aval(x).shape
    if len(shape) < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got x.shape={shape}. "
                         "Pass a matrix or a stack of matrices.")
    if shape[-1] == 0 or shape[-2] == 0:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got x.shape={shape}; "
                         "a condition number needs at least one singular value.")
    if p in (None, 2):
        # As in JAX: the plain ratio, so the zero matrix gives 0/0 = NaN (no NaN-to-inf below).
        s = svd(x, compute_uv=False)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svd(x, compute_uv=False)
        r = s[..., -1] / s[..., 0]
    else:
        if shape[-1] != shape[-2]:
            raise ValueError(f"jnp.linalg.cond: for p={p!r}, array must be square; got x.shape={shape}. "
                             "Use p=None, 2 or -2 for a non-square matrix.")
        r = norm(x, p, axis=(-2, -1)) * norm(inv(x), p, axis=(-2, -1))
    # Singular matrices (NaN from 0/0 or inf*0) have infinite condition number.
    return jnp.where(jnp.isnan(r) & ~jnp.any(jnp.isnan(x), axis=(-2, -1)), jnp.inf, r)


# ---------------------------------------------------------------- least squares, pseudo-inverse, rank

def lstsq(a, b, rcond=None, *, numpy_resid=False):
    a, b = _inexact(a, b)
    sa, sb = get_aval(a).shape, get_aval(b).shape
    if len(sa) != 2:
        raise TypeError(f"{len(sa)}-dimensional array given. Array must be two-dimensional")
    if len(sb) not in (1, 2):
        raise TypeError(f"{len(sb)}-dimensional array given. Array must be one or two-dimensional")
    if sa[0] != sb[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    b_1d = len(sb) == 1
    if b_1d:
        b = b[:, None]
    m, n = sa
    dt = get_aval(a).dtype
    if m == 0 or n == 0:
        # No singular values: the minimum-norm solution is zero and the rank 0.
        s = jnp.zeros((0,), dt)
        rank = jnp.sum(jnp.zeros((0,), bool))
        x = jnp.zeros((n,) + get_aval(b).shape[1:], dt)
    else:
        eps = _np.finfo(dt).eps
        rcond = eps * max(n, m) if rcond is None else jnp.where(jnp.asarray(rcond) < 0, eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        # Zero singular values never count (the zero matrix has rank 0, not min(m, n)).
        mask = (s > 0) & (s >= jnp.asarray(rcond, dtype=get_aval(s).dtype) * s[0])
        rank = jnp.sum(mask)
        safe_s = jnp.where(mask, s, 1).astype(dt)
        s_inv = jnp.where(mask, 1 / safe_s, 0)[:, None]
        uTb = jnp.matmul(_H(u), b)
        x = jnp.matmul(_H(vt), s_inv * uTb)
    if numpy_resid and (rank < n or m <= n):     # a traced rank raises, as in JAX
        resid = jnp.asarray([])
    else:
        resid = norm(b - jnp.matmul(a, x), axis=0) ** 2
    if b_1d:
        x = jnp.ravel(x)
    return x, resid, rank, s


def _pinv_value(a, rtol, hermitian):
    arr = _conj(a)
    m, n = get_aval(arr).shape[-2:]
    if rtol is None:
        rtol = 10.0 * max(m, n) * _np.finfo(get_aval(arr).dtype).eps
    u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
    rtol = jnp.asarray(rtol, dtype=get_aval(s).dtype)
    rtol = jnp.expand_dims(rtol, tuple(range(get_aval(rtol).ndim, get_aval(s).ndim))) if get_aval(rtol).ndim \
        else rtol
    cutoff = rtol * s[..., 0:1]
    s = jnp.where(s > cutoff, s, jnp.inf).astype(get_aval(u).dtype)
    res = jnp.matmul(_T(vh), _T(u) / jnp.expand_dims(s, -1))
    return res.astype(get_aval(a).dtype)


def _pinv_jvp(rtol, hermitian, primals, tangents):
    # Golub & Pereyra (1973), as in JAX.
    a, = primals
    a_dot, = tangents
    p = _pinv(a, rtol, hermitian)
    m, n = get_aval(a).shape[-2:]
    mm = lax_linalg._matmul
    eye_m = lax_linalg._eye(get_aval(a).dtype, get_aval(a).shape[:-2] + (m, m))
    eye_n = lax_linalg._eye(get_aval(a).dtype, get_aval(a).shape[:-2] + (n, n))
    p_dot = -mm(mm(p, a_dot), p)
    p_dot = p_dot + mm(mm(mm(p, _H(p)), _H(a_dot)), eye_m - mm(a, p))
    p_dot = p_dot + mm(mm(mm(eye_n - mm(p, a), _H(a_dot)), _H(p)), p)
    return p, p_dot


_pinv = custom_jvp(_pinv_value, nondiff_argnums=(1, 2))
_pinv.defjvp(_pinv_jvp)


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    a = _one(a)
    _check_matrix("pinv", a)
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    m, n = get_aval(a).shape[-2:]
    if m == 0 or n == 0:
        return jnp.zeros(get_aval(a).shape[:-2] + (n, m), get_aval(a).dtype)
    if rtol is not None and not isinstance(rtol, (int, float)):
        return _pinv_value(a, rtol, hermitian)
    return _pinv(a, rtol, hermitian)


def matrix_rank(M, rtol=None, *, tol=None):
    M = _one(M)
    if tol is not None:
        rtol = tol
    if get_aval(M).ndim < 2:
        return jnp.any(M != 0).astype(_np.int32)
    S = svd(M, full_matrices=False, compute_uv=False)
    if rtol is None:
        rtol = S.max(-1) * max(get_aval(M).shape[-2:]) * _np.finfo(get_aval(S).dtype).eps
    else:
        rtol = jnp.expand_dims(jnp.asarray(rtol), -1) * S.max(-1, keepdims=True) \
            if get_aval(jnp.asarray(rtol)).ndim else rtol * S.max(-1)
    if get_aval(jnp.asarray(rtol)).ndim == get_aval(S).ndim - 1:
        rtol = jnp.expand_dims(rtol, -1)
    return jnp.sum(S > rtol, axis=-1).astype(_np.int32)


def matrix_power(a, n):
    a = asarray_leaf(a)
    _check_square("matrix_power", a)
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        return jnp.broadcast_to(jnp.eye(get_aval(a).shape[-1], dtype=get_aval(a).dtype), get_aval(a).shape)
    if n < 0:
        a, n = inv(a), -n
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else jnp.matmul(result, base)
        n >>= 1
        if n:
            base = jnp.matmul(base, base)
    return result


def multi_dot(arrays, *, precision=None):
    arrays = [asarray_leaf(a) for a in arrays]
    if len(arrays) < 2:
        raise ValueError(f"multi_dot requires at least two arrays, got {len(arrays)}")
    out = arrays[0]
    for x in arrays[1:]:
        out = jnp.matmul(out, x)
    return out


# ---------------------------------------------------------------- tensor solves

def tensorinv(a, ind=2):
    a = _one(a)
    shape = get_aval(a).shape
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer, got {ind}.")
    out_shape, in_shape = shape[:ind], shape[ind:]
    rows, cols = int(_np.prod(out_shape)), int(_np.prod(in_shape))
    if rows != cols:
        raise ValueError(f"tensorinv: product of first {ind} dimensions ({rows}) must equal the "
                         f"product of the remaining dimensions ({cols}).")
    return inv(a.reshape(rows, cols)).reshape(in_shape + out_shape)


def tensorsolve(a, b, axes=None):
    a, b = _inexact(a, b)
    nd = get_aval(a).ndim
    if axes is not None:
        axes = [canonicalize_axis(ax, nd) for ax in axes]
        rest = [k for k in range(nd) if k not in axes]
        a = jnp.transpose(a, rest + axes)
    b_nd = get_aval(b).ndim
    out_shape = get_aval(a).shape[b_nd:]
    size = int(_np.prod(out_shape))
    if int(_np.prod(get_aval(a).shape[:b_nd])) != size:
        raise ValueError(f"tensorsolve: a of shape {get_aval(a).shape} is not square with respect to b "
                         f"of shape {get_aval(b).shape}.")
    return solve(a.reshape(size, size), jnp.ravel(b)).reshape(out_shape)


# ---------------------------------------------------------------- array API helpers

def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    return jnp.matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def matrix_transpose(x, /):
    x = asarray_leaf(x)
    if get_aval(x).ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={get_aval(x).ndim}")
    return _T(x)


def outer(x1, x2, /):
    x1, x2 = promote_dtypes(asarray_leaf(x1), asarray_leaf(x2))
    if get_aval(x1).ndim != 1 or get_aval(x2).ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={get_aval(x1).ndim} "
                         f"and x2.ndim={get_aval(x2).ndim}")
    return x1[:, None] * x2[None, :]


def diagonal(x, /, *, offset=0):
    x = asarray_leaf(x)
    shape = get_aval(x).shape
    if len(shape) < 2:
        raise ValueError(f"diagonal requires an array of at least two dimensions, got {shape}")
    m, n = shape[-2:]
    offset = operator.index(offset)
    r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
    k = max(0, min(m - r0, n - c0))
    sub = lax.slice(x, (0,) * (len(shape) - 2) + (r0, c0), shape[:-2] + (r0 + k, c0 + k))
    return lax_linalg._diagonal(sub) if k else jnp.zeros(shape[:-2] + (0,), get_aval(x).dtype)


def trace(x, /, *, offset=0, dtype=None):
    d = diagonal(x, offset=offset)
    return jnp.sum(d, axis=-1, dtype=dtype)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    x1, x2 = promote_dtypes(asarray_leaf(x1), asarray_leaf(x2))
    s1, s2 = get_aval(x1).shape, get_aval(x2).shape
    if s1[axis] != s2[axis]:
        raise ValueError(f"x1 and x2 must have the same size along the given axis; got "
                         f"x1.shape={s1} and x2.shape={s2}, axis={axis}")
    return jnp.sum(_conj(x1) * x2, axis=axis)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    x1, x2 = promote_dtypes(asarray_leaf(x1), asarray_leaf(x2))
    n1, n2 = get_aval(x1).ndim, get_aval(x2).ndim
    if isinstance(axes, int):
        ax1, ax2 = tuple(range(n1 - axes, n1)), tuple(range(axes))
    else:
        ax1, ax2 = axes
        ax1 = (ax1,) if isinstance(ax1, int) else tuple(ax1)
        ax2 = (ax2,) if isinstance(ax2, int) else tuple(ax2)
    ax1 = tuple(canonicalize_axis(a, n1) for a in ax1)
    ax2 = tuple(canonicalize_axis(a, n2) for a in ax2)
    return lax.dot_general(x1, x2, ((ax1, ax2), ((), ())), precision, preferred_element_type)


def cross(x1, x2, /, *, axis=-1):
    x1, x2 = promote_dtypes(asarray_leaf(x1), asarray_leaf(x2))
    if get_aval(x1).shape[axis] != 3 or get_aval(x2).shape[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they have "
                         f"x1.shape={get_aval(x1).shape} and x2.shape={get_aval(x2).shape}")
    a, b = jnp.moveaxis(x1, axis, -1), jnp.moveaxis(x2, axis, -1)
    a, b = jnp.broadcast_arrays(a, b)
    c = jnp.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                   a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                   a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)
    return jnp.moveaxis(c, -1, axis)

"""Batched linear-algebra kernels called by generated programs (imported there as ``lk``).

Operands arrive as (batch, m, n) arrays. Numba's LAPACK-backed np.linalg does the
factorizations one matrix at a time; LU and triangular solves, which Numba's np.linalg
does not offer, are written out here. A failed factorization gives NaNs (in both parts of
a complex), and a zero pivot infinities and NaNs, as in JAX.
"""
import numba
import numpy as np
from numba.core import types
from numba.extending import overload
from numba.np.numpy_support import as_dtype

from .driver_lib import CHOLESKY_SOURCE

_jit = numba.njit(cache=True, nogil=True, error_model="numpy")


def reciprocal(d):
    """1 / d in d's own type: complex by Smith's ratio (0 gives NaN in both parts, as BLAS's
    trsm inverts a zero complex diagonal), real by one division (0 gives inf)."""
    return 1 / d


@overload(reciprocal)
def _reciprocal_impl(d):
    if isinstance(d, types.Complex):
        real, cplx = as_dtype(d.underlying_float).type, as_dtype(d).type

        def smith(d):
            ar, ai, one = d.real, d.imag, real(1.0)
            if abs(ar) >= abs(ai):
                ratio = ai / ar
                den = one / (ar * (one + ratio * ratio))
                return cplx(complex(den, -ratio * den))
            ratio = ar / ai
            den = one / (ai * (one + ratio * ratio))
            return cplx(complex(ratio * den, -den))
        return smith
    if isinstance(d, types.Float):
        real = as_dtype(d).type
        return lambda d: real(1.0) / d
    return None


@_jit
def cholesky(a):
    out = np.empty_like(a)
    for b in range(a.shape[0]):
        try:
            out[b] = np.linalg.cholesky(np.ascontiguousarray(a[b]))
        except Exception:   # not positive definite (or not finite): NaN in every part
            out[b] = a[b] * np.nan
    return out


# Cholesky of small real matrices: the LLVM backend's kernel source (driver_lib.py) compiled
# by Numba, so both backends give the same bits.
def _numba_cholesky_small():
    scope = {"np": np, "numba": numba}
    exec(CHOLESKY_SOURCE.format(n="a.shape[1]", dtype="a.dtype"), scope)   # noqa: S102 (our own text)
    kernel = numba.njit(nogil=True, error_model="numpy")(scope["KERNEL"])

    def cholesky_small(a):
        """Real (batch, n, n) stacks, n up to CHOLESKY_MAX_N."""
        return kernel(a.shape[0], a)[0]
    return numba.njit(nogil=True, error_model="numpy")(cholesky_small)


cholesky_small = _numba_cholesky_small()


@_jit
def lu(a):
    """Partial-pivoting LU in LAPACK getrf's convention: (lu, pivots, permutation)."""
    nb, m, n = a.shape
    k = min(m, n)
    x = a.copy()
    piv = np.empty((nb, k), np.int32)
    perm = np.empty((nb, m), np.int32)
    for b in range(nb):
        p = np.arange(m)
        for j in range(k):
            best, best_val = j, abs(x[b, j, j])
            for i in range(j + 1, m):
                v = abs(x[b, i, j])
                if v > best_val:
                    best, best_val = i, v
            piv[b, j] = best
            if best != j:
                for c in range(n):
                    t = x[b, j, c]
                    x[b, j, c] = x[b, best, c]
                    x[b, best, c] = t
                t2 = p[j]
                p[j] = p[best]
                p[best] = t2
            d = x[b, j, j]
            if d != 0:
                for i in range(j + 1, m):
                    x[b, i, j] = x[b, i, j] / d
            for i in range(j + 1, m):
                f = x[b, i, j]
                if f != 0:
                    for c in range(j + 1, n):
                        x[b, i, c] -= f * x[b, j, c]
        for i in range(m):
            perm[b, i] = p[i]
    return x, piv, perm


@_jit
def _solve_lower_left(m, rhs, unit):
    """Forward substitution m @ x = rhs for lower-triangular m (n, n) and rhs (n, k), as BLAS
    trsm computes it: every product is subtracted (0 * inf is NaN, no zero is skipped) and the
    diagonal is applied as its reciprocal, so a zero pivot gives JAX's infinities and NaNs."""
    n, k = rhs.shape
    x = rhs.copy()
    for i in range(n):
        for j in range(i):
            f = m[i, j]
            for c in range(k):
                x[i, c] -= f * x[j, c]
        if not unit:
            r = reciprocal(m[i, i])
            for c in range(k):
                x[i, c] = x[i, c] * r
    return x


@_jit
def triangular_solve(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    nb = a.shape[0]
    out = np.empty_like(b)
    for q in range(nb):
        m = np.ascontiguousarray(a[q].T) if transpose_a else np.ascontiguousarray(a[q])
        if conjugate_a:
            m = np.conj(m)
        eff_lower = lower != transpose_a
        rhs = np.ascontiguousarray(b[q])
        if not left_side:          # x @ m = rhs  <=>  m.T @ x.T = rhs.T
            m = np.ascontiguousarray(m.T)
            rhs = np.ascontiguousarray(rhs.T)
            eff_lower = not eff_lower
        if not eff_lower:          # reverse rows and columns: upper becomes lower
            m = np.ascontiguousarray(m[::-1, ::-1])
            rhs = np.ascontiguousarray(rhs[::-1])
        x = _solve_lower_left(m, rhs, unit_diagonal)
        if not eff_lower:
            x = x[::-1]
        out[q] = x if left_side else x.T
    return out


@_jit
def qr(a, full_matrices):
    nb, m, n = a.shape
    k = m if full_matrices else min(m, n)
    qs = np.empty((nb, m, k), a.dtype)
    rs = np.empty((nb, k, n), a.dtype)
    for b in range(nb):
        x = np.ascontiguousarray(a[b])
        if full_matrices and m > n:
            # Numba's qr is the reduced one: the complete Q comes from our own Householder
            # factorization in LAPACK's convention (geqr2 + org2r), so the trailing columns
            # are the ones numpy and JAX return.
            qs[b], rs[b] = _householder_qr_complete(x)
        else:
            q, r = np.linalg.qr(x)
            qs[b] = q
            rs[b] = r
    return qs, rs


@_jit
def svd(a, full_matrices, s_dtype):
    nb, m, n = a.shape
    k = min(m, n)
    um, vn = (m, n) if full_matrices else (k, k)
    ss = np.empty((nb, k), s_dtype)
    us = np.empty((nb, m, um), a.dtype)
    vts = np.empty((nb, vn, n), a.dtype)
    for b in range(nb):
        u, s, vt = np.linalg.svd(np.ascontiguousarray(a[b]), full_matrices)
        ss[b] = s
        us[b] = u
        vts[b] = vt
    return ss, us, vts


@_jit
def eigh(a, lower, w_dtype):
    nb, n, _ = a.shape
    ws = np.empty((nb, n), w_dtype)
    vs = np.empty_like(a)
    for b in range(nb):
        x = np.ascontiguousarray(a[b]) if lower else np.ascontiguousarray(np.conj(a[b].T))
        w, v = np.linalg.eigh(x)   # reads the lower triangle
        ws[b] = w
        vs[b] = v
    return vs, ws


@_jit
def _householder_qr_complete(a):
    """Complete QR of a real (m, n) matrix, m > n, with LAPACK's reflectors (dlarfg)."""
    m, n = a.shape
    r = a.astype(np.float64)
    vs = np.zeros((n, m))
    taus = np.zeros(n)
    for j in range(n):
        alpha = r[j, j]
        xnorm = 0.0
        for i in range(j + 1, m):
            xnorm += r[i, j] * r[i, j]
        xnorm = np.sqrt(xnorm)
        if xnorm == 0.0:
            vs[j, j] = 1.0
            continue
        beta = -np.copysign(np.sqrt(alpha * alpha + xnorm * xnorm), alpha)
        taus[j] = (beta - alpha) / beta
        vs[j, j] = 1.0
        for i in range(j + 1, m):
            vs[j, i] = r[i, j] / (alpha - beta)
        # apply H = I - tau v v^T to the trailing columns
        for c in range(j, n):
            d = 0.0
            for i in range(j, m):
                d += vs[j, i] * r[i, c]
            d *= taus[j]
            for i in range(j, m):
                r[i, c] -= d * vs[j, i]
    q = np.eye(m)
    for j in range(n - 1, -1, -1):     # Q = H_0 H_1 ... H_{n-1} applied to I
        for c in range(m):
            d = 0.0
            for i in range(j, m):
                d += vs[j, i] * q[i, c]
            d *= taus[j]
            for i in range(j, m):
                q[i, c] -= d * vs[j, i]
    for i in range(m):
        for c in range(n):
            if i > c:
                r[i, c] = 0.0
    return q.astype(a.dtype), r.astype(a.dtype)

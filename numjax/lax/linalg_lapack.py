"""LAPACK and BLAS through scipy's wrappers, one matrix at a time over (batch, m, n) stacks, in
the operand's own precision (numpy.linalg would compute float32 in float64).

These are the routines JAX's CPU kernels call (getrf, trsm, potrf, geqrf + orgqr/ungqr,
gesdd, syevd/heevd), with the layouts and workspace sizes of Numba's np.linalg.  Eager
evaluation runs all of them; the LLVM backend's driver calls cholesky, qr, svd and eigh from
here (the same bits), while jitted LU and triangular solves are kernels of the same algorithm
(lowering/linalg_kernels.py, driver_nodes.py).  Nothing checks for singularity: a zero pivot
gives infinities and NaNs downstream, and a failed or non-finite factorization NaNs, as in JAX.
"""
import numpy as np


_PREFIX = {np.float32: "s", np.float64: "d", np.complex64: "c", np.complex128: "z"}


def _lapack(name, dtype):
    from scipy.linalg import lapack      # on first use: importing scipy.linalg takes a while
    return getattr(lapack, _PREFIX[np.dtype(dtype).type] + name)


def _blas(name, dtype):
    from scipy.linalg import blas
    return getattr(blas, _PREFIX[np.dtype(dtype).type] + name)


def _hermitian_name(dtype, real_name, complex_name):
    return complex_name if np.dtype(dtype).kind == "c" else real_name


def _nan(dtype):
    """JAX's value for a failed factorization: NaN, in both parts of a complex."""
    return np.array(complex(np.nan, np.nan) if np.dtype(dtype).kind == "c" else np.nan).astype(dtype)


def _size(work):
    """LAPACK's workspace query (a float, or a complex for complex routines), truncated as C does."""
    return int(np.asarray(work).reshape(-1)[0].real)


def cholesky(a):
    """Lower factors; potrf on the transpose ('U' of the Fortran view, as Numba's np.linalg)."""
    potrf, out = _lapack("potrf", a.dtype), np.empty_like(a)
    for b in range(a.shape[0] if a.shape[1] else 0):
        c, info = potrf(a[b].T, lower=0, clean=1)
        out[b] = c.T if info == 0 else _nan(a.dtype)
    return out


def lu(a):
    """getrf: (lu, pivots, permutation), int32, zero-based; a zero pivot is left in place."""
    nb, m, n = a.shape
    k = min(m, n)
    out, piv = a.copy(), np.zeros((nb, k), np.int32)
    perm = np.broadcast_to(np.arange(m, dtype=np.int32), (nb, m)).copy()
    if k == 0:
        return out, piv, perm
    getrf = _lapack("getrf", a.dtype)
    for b in range(nb):
        out[b], p, _ = getrf(a[b])
        piv[b] = p
        perm[b] = pivots_to_permutation(p, m)
    return out, piv, perm


def pivots_to_permutation(piv, m):
    perm = np.arange(m, dtype=np.int32)
    for i, p in enumerate(piv):
        perm[i], perm[p] = perm[p], perm[i]
    return perm


def triangular_solve(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """trsm: op(a) x = b (left side) or x op(a) = b, with no singularity check (trtrs, which
    scipy.linalg.solve_triangular calls, refuses a zero diagonal)."""
    out = np.empty_like(b)
    if not out.size:
        return out
    if conjugate_a and not transpose_a:       # BLAS has no conjugate-only op
        a, conjugate_a = np.conj(a), False
    trans = 2 if conjugate_a else 1 if transpose_a else 0
    trsm = _blas("trsm", a.dtype)
    for q in range(a.shape[0]):
        out[q] = trsm(1.0, a[q], b[q], side=0 if left_side else 1, lower=int(lower), trans_a=trans,
                      diag=int(unit_diagonal))
    return out


def qr(a, full_matrices):
    """geqrf, then orgqr/ungqr on the reflectors (padded with zero columns for the complete Q
    of a tall matrix)."""
    nb, m, n = a.shape
    k = m if full_matrices else min(m, n)
    qs, rs = np.empty((nb, m, k), a.dtype), np.empty((nb, k, n), a.dtype)
    geqrf = _lapack("geqrf", a.dtype)
    orgqr = _lapack(_hermitian_name(a.dtype, "orgqr", "ungqr"), a.dtype)
    for b in range(nb):
        if m == 0 or n == 0:
            qs[b], rs[b] = np.eye(m, k, dtype=a.dtype), 0
        elif not np.isfinite(a[b]).all():
            qs[b], rs[b] = _nan(a.dtype), np.triu(np.full((k, n), _nan(a.dtype)))   # R stays triangular
        else:
            f, tau, work, _ = geqrf(a[b], lwork=-1)
            f, tau, _, _ = geqrf(a[b], lwork=_size(work))
            rs[b] = np.triu(f[:k])
            reflectors = f[:, :k] if k <= n else np.concatenate([f, np.zeros((m, k - n), a.dtype)], 1)
            _, work, _ = orgqr(reflectors, tau, lwork=-1)
            qs[b] = orgqr(reflectors, tau, lwork=_size(work))[0]
    return qs, rs


def svd(a, full_matrices, s_dtype):
    """gesdd with vectors ('A' or 'S'); the singular values alone are taken from the same call,
    so compute_uv=False gives the bits of compute_uv=True."""
    nb, m, n = a.shape
    k = min(m, n)
    um, vn = (m, n) if full_matrices else (k, k)
    ss, us, vts = np.empty((nb, k), s_dtype), np.empty((nb, m, um), a.dtype), np.empty((nb, vn, n), a.dtype)
    gesdd, query = _lapack("gesdd", a.dtype), _lapack("gesdd_lwork", a.dtype)
    fm = int(bool(full_matrices))
    for b in range(nb):
        if m == 0 or n == 0:
            us[b], vts[b] = np.eye(m, um, dtype=a.dtype), np.eye(vn, n, dtype=a.dtype)
            continue
        info = 1
        if np.isfinite(a[b]).all():
            lwork = _size(query(m, n, compute_uv=1, full_matrices=fm)[0])
            u, s, vt, info = gesdd(a[b], compute_uv=1, full_matrices=fm, lwork=lwork)
        if info != 0:
            u, s, vt = _nan(a.dtype), np.nan, _nan(a.dtype)
        ss[b], us[b], vts[b] = s, u, vt
    return ss, us, vts


def eigh(a, lower, w_dtype):
    """syevd/heevd on the lower triangle (of the conjugate transpose for lower=False)."""
    nb, n, _ = a.shape
    ws, vs = np.empty((nb, n), w_dtype), np.empty_like(a)
    complex_ = a.dtype.kind == "c"
    evd = _lapack(_hermitian_name(a.dtype, "syevd", "heevd"), a.dtype)
    query = _lapack(_hermitian_name(a.dtype, "syevd_lwork", "heevd_lwork"), a.dtype)
    for b in range(nb if n else 0):
        x = a[b] if lower else np.conj(a[b].T)
        info = 1
        if np.isfinite(x).all():
            sizes = query(n, compute_v=1, lower=1)
            if complex_:
                work, iwork, rwork, _ = sizes
                w, v, info = evd(x, compute_v=1, lower=1, lwork=_size(work), liwork=_size(iwork),
                                 lrwork=_size(rwork))
            else:
                work, iwork, _ = sizes
                w, v, info = evd(x, compute_v=1, lower=1, lwork=_size(work), liwork=_size(iwork))
        if info != 0:
            w, v = np.nan, _nan(a.dtype)
        ws[b], vs[b] = w, v
    return vs, ws

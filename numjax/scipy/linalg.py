"""numjax.scipy.linalg: scipy.linalg's API with JAX's semantics, over numjax.lax.linalg."""

import numpy as _np

from .. import dtypes, lax
from .. import numpy as jnp
from ..core import get_aval
from ..lax import linalg as lax_linalg
from ..numpy import linalg as jnp_linalg
from ..numpy._util import asarray_leaf

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "det", "eigh", "expm", "inv", "lu",
           "lu_factor", "lu_solve", "polar", "qr", "solve", "solve_triangular", "svd", "toeplitz"]

_inexact = jnp_linalg._inexact


def _as_matrix_rhs(a, b):
    """b as (..., n, k), and whether it was a vector (b.ndim == a.ndim - 1)."""
    vector = get_aval(b).ndim == get_aval(a).ndim - 1
    return (lax.expand_dims(b, (get_aval(b).ndim,)) if vector else b), vector


def _restore_rhs(x, vector):
    return lax.squeeze(x, (get_aval(x).ndim - 1,)) if vector else x


# ---------------------------------------------------------------- Cholesky

def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    return jnp_linalg.cholesky(a, upper=not lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    a = _inexact(a)[0]
    L = lax_linalg.cholesky(a if lower else lax_linalg._H(a), symmetrize_input=False)
    return (L if lower else lax_linalg._H(L)), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    c, lower = c_and_lower
    c, b = _inexact(c, b)
    b, vector = _as_matrix_rhs(c, b)
    # c c^H x = b (lower) or c^H c x = b (upper): two triangular solves.
    b = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower,
                                    conjugate_a=not lower)
    b = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=lower, conjugate_a=lower)
    return _restore_rhs(b, vector)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None,
                     check_finite=True):
    a, b = _inexact(a, b)
    if trans in (0, "N"):
        transpose_a, conjugate_a = False, False
    elif trans in (1, "T"):
        transpose_a, conjugate_a = True, False
    elif trans in (2, "C"):
        transpose_a, conjugate_a = True, True
    else:
        raise ValueError(f"Invalid 'trans' value {trans}")
    b, vector = _as_matrix_rhs(a, b)
    out = lax_linalg.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=transpose_a,
                                      conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    return _restore_rhs(out, vector)


# ---------------------------------------------------------------- LU

def _lu_parts(a):
    lu_, pivots, permutation = lax_linalg.lu(a)
    m, n = get_aval(a).shape[-2:]
    k = min(m, n)
    dt = get_aval(a).dtype
    batch = get_aval(a).shape[:-2]
    l = lax_linalg._tril(lax_linalg._slice_last2(lu_, m, k), -1) + lax_linalg._eye(dt, batch + (m, k))
    u = lax_linalg._triu(lax_linalg._slice_last2(lu_, k, n))
    return l, u, permutation


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    a = _inexact(a)[0]
    jnp_linalg._check_matrix("lu", a)
    l, u, permutation = _lu_parts(a)
    # p[i, j] = (permutation[j] == i), so that a = p @ l @ u
    p = lax_linalg._T(lax_linalg._permutation_matrix(permutation, get_aval(a).dtype))
    if permute_l:
        return jnp.matmul(p, l), u
    return p, l, u


def lu_factor(a, overwrite_a=False, check_finite=True):
    a = _inexact(a)[0]
    lu_, pivots, _ = lax_linalg.lu(a)
    return lu_, pivots


def _pivots_to_permutation(pivots, m):
    """The row permutation the swaps ``pivots`` apply, with lax ops (works on traced pivots)."""
    aval = get_aval(pivots)
    shape = aval.shape[:-1] + (m,)
    iota = lax.broadcasted_iota(_np.int32, shape, len(shape) - 1)
    perm = iota
    for i in range(aval.shape[-1]):
        p_i = lax.broadcast_in_dim(pivots[..., i], shape, tuple(range(len(shape) - 1)))
        at_i = jnp.sum(jnp.where(iota == i, perm, 0), axis=-1, keepdims=True)
        at_p = jnp.sum(jnp.where(iota == p_i, perm, 0), axis=-1, keepdims=True)
        perm = jnp.where(iota == i, at_p, jnp.where(iota == p_i, at_i, perm))
    return perm.astype(_np.int32)


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    lu_, pivots = lu_and_piv
    lu_, b = _inexact(lu_, b)
    m = get_aval(lu_).shape[-1]
    b, vector = _as_matrix_rhs(lu_, b)
    permutation = _pivots_to_permutation(jnp.asarray(pivots), m)
    dt = get_aval(b).dtype
    P = lax_linalg._permutation_matrix(permutation, dt)
    if trans == 0:
        x = lax_linalg._matmul(P, b)
        x = lax_linalg.triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
        x = lax_linalg.triangular_solve(lu_, x, left_side=True, lower=False)
    elif trans in (1, 2):
        conj = trans == 2
        x = lax_linalg.triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True, conjugate_a=conj)
        x = lax_linalg.triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True,
                                        transpose_a=True, conjugate_a=conj)
        x = lax_linalg._matmul(lax_linalg._T(P), x)
    else:
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    return _restore_rhs(x, vector)


# ---------------------------------------------------------------- dense solves and factorizations

def inv(a, overwrite_a=False, check_finite=True):
    return jnp_linalg.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    return jnp_linalg.det(a)


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False, check_finite=True,
          assume_a="gen"):
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"Expected assume_a to be one of 'gen', 'sym', 'her', or 'pos'; got {assume_a!r}")
    a, b = _inexact(a, b)
    if assume_a != "pos":
        b2, vector = _as_matrix_rhs(a, b)
        return _restore_rhs(jnp_linalg.solve(a, b2), vector)
    return cho_solve(cho_factor(a, lower=lower), b)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    if pivoting:
        raise NotImplementedError("The pivoting=True case of qr is not implemented.")
    if mode not in ("full", "r", "economic"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    a = _inexact(a)[0]
    q, r = lax_linalg.qr(a, full_matrices=mode == "full")
    return (r,) if mode == "r" else (q, r)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    out = jnp_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, turbo=True,
         eigvals=None, type=1, check_finite=True):  # noqa: A002
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    a = _inexact(a)[0]
    v, w = lax_linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    # Computed from the SVD (JAX's method="svd"); qdwh converges to the same factors.
    a = _inexact(a)[0]
    if side not in ("right", "left"):
        raise ValueError(f"side={side!r} is not a valid side; expected 'right' or 'left'")
    u, s, vh = jnp_linalg.svd(a, full_matrices=False)
    unitary = jnp.matmul(u, vh)
    if side == "right":
        p = jnp.matmul(lax_linalg._H(vh) * s[..., None, :], vh)
    else:
        p = jnp.matmul(u * s[..., None, :], lax_linalg._H(u))
    return unitary, p


# ---------------------------------------------------------------- constructions

def block_diag(*arrs):
    if not arrs:
        return jnp.zeros((1, 0))
    arrs = [jnp.atleast_2d(asarray_leaf(a)) for a in arrs]
    dt = jnp.result_type(*arrs)
    for a in arrs:
        if get_aval(a).ndim != 2:
            raise ValueError("Arguments to jax.scipy.linalg.block_diag must have at most 2 dimensions, "
                             f"got {get_aval(a).ndim}")
    width = sum(get_aval(a).shape[1] for a in arrs)
    rows, left = [], 0
    for a in arrs:
        r, c = get_aval(a).shape
        rows.append(lax.pad(a.astype(dt), jnp.zeros((), dt), [(0, 0, 0), (left, width - left - c, 0)]))
        left += c
    return lax.concatenate(rows, 0)


def toeplitz(c, r=None):
    c = jnp.ravel(asarray_leaf(c))
    if r is None:
        r = jnp.conj(c) if dtypes.kind(get_aval(c).dtype) == "c" else c
    else:
        r = jnp.ravel(asarray_leaf(r))
    c, r = jnp_linalg.promote_dtypes(c, r)
    nr, nc = get_aval(c).shape[0], get_aval(r).shape[0]
    # vals = c reversed, then r without its first element; row i is vals[nr-1-i : nr-1-i+nc].
    vals = lax.concatenate([lax.rev(c, (0,)), lax.slice(r, (1,), (nc,))], 0) if nc else lax.rev(c, (0,))
    if nr == 0 or nc == 0:
        return jnp.zeros((nr, nc), get_aval(c).dtype)
    return jnp.stack([lax.slice(vals, (nr - 1 - i,), (nr - 1 - i + nc,)) for i in range(nr)])


# ---------------------------------------------------------------- expm
# Scaling and squaring with a Pade approximant (Higham 2005, "The scaling and squaring method
# for the matrix exponential revisited"): degree chosen from ||A||_1 against Higham's theta_m
# for the dtype's precision, A scaled by 2^-s below the largest theta, then squared s times.

_PADE_COEFFS = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880., 3960.,
        90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920., 40840800.,
         960960., 16380., 182., 1.),
}
_THETAS = {  # (degree, theta_m): the largest degree's theta bounds the scaled norm
    "single": ((3, 4.258730016922831e-001), (5, 1.880152677804762e+000), (7, 3.925724783138660e+000)),
    "double": ((3, 1.495585217958292e-002), (5, 2.539398330063230e-001), (7, 9.504178996162932e-001),
               (9, 2.097847961257068e+000), (13, 5.371920351148152e+000)),
}


def _pade(m, A):
    """(U, V): the odd and even parts of the degree-m Pade numerator, p = V + U, q = V - U."""
    b = _PADE_COEFFS[m]
    n = get_aval(A).shape[-1]
    ident = jnp.eye(n, dtype=get_aval(A).dtype)
    A2 = jnp.matmul(A, A)
    if m != 13:
        powers = [ident, A2]
        while len(powers) <= m // 2:
            powers.append(jnp.matmul(powers[-1], A2))
        odd = sum(b[2 * k + 1] * powers[k] for k in range(m // 2 + 1))
        even = sum(b[2 * k] * powers[k] for k in range(m // 2 + 1))
        return jnp.matmul(A, odd), even
    A4 = jnp.matmul(A2, A2)
    A6 = jnp.matmul(A4, A2)
    U = jnp.matmul(A, jnp.matmul(A6, b[13] * A6 + b[11] * A4 + b[9] * A2)
                   + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident)
    V = jnp.matmul(A6, b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident
    return U, V


def _expm_2d(A, upper_triangular, max_squarings):
    dt = get_aval(A).dtype
    thetas = _THETAS["double" if dt in (_np.float64, _np.complex128) else "single"]
    norm1 = jnp_linalg.norm(A, 1)
    max_theta = thetas[-1][1]
    n_squarings = jnp.maximum(0, jnp.floor(jnp.log2(norm1 / max_theta)))
    A = A / (2 ** n_squarings).astype(dt)
    bounds = jnp.asarray(_np.asarray([t for _, t in thetas[:-1]], dtype=get_aval(norm1).dtype))
    which = jnp.sum(norm1 >= bounds).astype(_np.int32)
    branches = [lambda x, m=m: _pade(m, x) for m, _ in thetas]
    U, V = lax.switch(which, branches, A)
    P, Q = U + V, V - U
    R = solve_triangular(Q, P) if upper_triangular else jnp_linalg.solve(Q, P)

    def square(c, i):
        return lax.cond(i < n_squarings, lambda x: jnp.matmul(x, x), lambda x: x, c), None
    R, _ = lax.scan(square, R, jnp.arange(max_squarings, dtype=get_aval(n_squarings).dtype))
    return jnp.where(n_squarings > max_squarings, jnp.full_like(R, _np.nan), R)


def expm(A, *, upper_triangular=False, max_squarings=16):
    A = _inexact(A)[0]
    shape = get_aval(A).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={shape}.")
    if len(shape) > 2:
        from ..vmap_api import vmap
        flat = A.reshape((-1,) + shape[-2:])
        out = vmap(lambda x: _expm_2d(x, upper_triangular, max_squarings))(flat)
        return out.reshape(shape)
    return _expm_2d(A, upper_triangular, max_squarings)



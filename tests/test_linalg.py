"""jnp.linalg, jax.scipy.linalg and lax.linalg: values vs numpy/scipy, gradients, vmap, jit.

Decompositions are compared through what is unique about them (reconstructions, orthogonality,
sign-normalized factors, singular values/eigenvalues), since LAPACK drivers may pick
different signs. Inputs are well conditioned (random matrices shifted by a multiple of I).
"""
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest
import scipy.linalg as sp_linalg
from hypothesis import given, settings, strategies as st

import numjax as jax
import numjax.numpy as jnp
import numjax.scipy.linalg as jsp_linalg
from numjax.lax import linalg as lax_linalg
from numjax.test_util import check_grads

RNG = np.random.default_rng(1234)


def _gen(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _well(*shape):
    """Random square matrices with a dominant diagonal (well conditioned, non-symmetric)."""
    n = shape[-1]
    return (_gen(*shape) + 3 * np.sqrt(n) * np.eye(n, dtype=np.float32)).astype(np.float32)


def _spd(*shape):
    a = _gen(*shape)
    n = shape[-1]
    return (a @ np.swapaxes(a, -1, -2) / n + np.eye(n, dtype=np.float32)).astype(np.float32)


def _tri(*shape, lower=True):
    t = np.tril(_gen(*shape)) if lower else np.triu(_gen(*shape))
    n = shape[-1]
    return (t + 3 * np.eye(n, dtype=np.float32)).astype(np.float32)


def _np(x):
    return np.asarray(x)


# ---------------------------------------------------------------- comparisons for decompositions

def _reconstruct_qr(out, a):
    q, r = out
    return [q @ r, np.swapaxes(q, -1, -2) @ q, np.triu(r)]


def _expect_qr(a, mode):
    q, r = np.linalg.qr(a.astype(np.float64), mode=mode)
    return [a, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2), r * 0 + np.triu(r)]


def _sign_fix(u, v):
    """Columns of u with the sign that makes each one's largest entry positive (and v's rows to match)."""
    idx = np.argmax(np.abs(u), axis=-2)
    signs = np.sign(np.take_along_axis(u, idx[..., None, :], axis=-2))
    return u * signs, v * np.swapaxes(signs, -1, -2) if v is not None else None


@dataclass
class Rec:
    name: str
    fn: Callable                 # numjax function
    ref: Callable                # numpy/scipy reference on float64 numpy arrays
    args: Callable               # () -> tuple of float32 numpy arrays
    tol: float = 2e-4
    grad: bool = True            # check_grads (fwd and rev)
    post: Callable = None        # maps numjax's output to comparable arrays (given the args)
    grad_fn: Callable = None     # function to differentiate when fn's output is not smooth
    grad_tol: float = None
    marks: list = field(default_factory=list)

    def __str__(self):
        return self.name


def _svd_post(out, a):
    u, s, vh = (_np(o) for o in out)
    u2, vh2 = _sign_fix(u, vh)
    return [u2, s, vh2]


def _svd_ref(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    u2, vh2 = _sign_fix(u, vh)
    return [u2, s, vh2]


def _eigh_post(out, a):
    w, v = (_np(o) for o in out)
    return [w, _sign_fix(v, None)[0]]


def _eigh_ref(a):
    w, v = np.linalg.eigh(a)
    return [w, _sign_fix(v, None)[0]]


def _lu_ref(a):
    p, l, u = sp_linalg.lu(a)
    return [p, l, u]


RECORDS = [
    Rec("solve", jnp.linalg.solve, np.linalg.solve, lambda: (_well(2, 4, 4), _gen(2, 4, 3))),
    Rec("solve_vector", jnp.linalg.solve, np.linalg.solve, lambda: (_well(4, 4), _gen(4))),
    Rec("inv", jnp.linalg.inv, np.linalg.inv, lambda: (_well(3, 4, 4),)),
    Rec("det_2x2", jnp.linalg.det, np.linalg.det, lambda: (_well(3, 2, 2),)),
    Rec("det_3x3", jnp.linalg.det, np.linalg.det, lambda: (_well(3, 3, 3),)),
    Rec("det_5x5", jnp.linalg.det, np.linalg.det, lambda: (_well(2, 5, 5),), tol=1e-3),
    Rec("slogdet", lambda a: tuple(jnp.linalg.slogdet(a)), lambda a: list(np.linalg.slogdet(a)),
        lambda: (_well(2, 5, 5) * np.array([1, -1], np.float32)[:, None, None],),
        grad_fn=lambda a: jnp.linalg.slogdet(a)[1]),
    Rec("cholesky", jnp.linalg.cholesky, np.linalg.cholesky, lambda: (_spd(2, 4, 4),)),
    Rec("cholesky_upper", lambda a: jnp.linalg.cholesky(a, upper=True),
        lambda a: np.swapaxes(np.linalg.cholesky(a), -1, -2), lambda: (_spd(4, 4),)),
    Rec("qr_reduced", jnp.linalg.qr, lambda a: _expect_qr(a, "reduced"), lambda: (_gen(2, 5, 3),),
        post=_reconstruct_qr, grad_fn=lambda a: jnp.linalg.qr(a)),
    Rec("qr_complete", lambda a: jnp.linalg.qr(a, mode="complete"), lambda a: _expect_qr(a, "complete"),
        lambda: (_gen(5, 3),), post=_reconstruct_qr, grad=False),
    Rec("qr_wide", jnp.linalg.qr, lambda a: _expect_qr(a, "reduced"), lambda: (_gen(3, 5),),
        post=_reconstruct_qr, grad=False),
    Rec("svd", lambda a: jnp.linalg.svd(a, full_matrices=False), _svd_ref, lambda: (_gen(2, 5, 3),),
        post=_svd_post, tol=1e-3, grad_tol=5e-2),
    Rec("svd_wide", lambda a: jnp.linalg.svd(a, full_matrices=False), _svd_ref, lambda: (_gen(3, 5),),
        post=_svd_post, tol=1e-3, grad_tol=5e-2),
    Rec("svd_hermitian", lambda a: jnp.linalg.svd(a + a.T, hermitian=True, compute_uv=False),
        lambda a: np.linalg.svd(a + a.T, compute_uv=False), lambda: (_gen(4, 4),), grad=False),
    Rec("svdvals", jnp.linalg.svdvals, lambda a: np.linalg.svd(a, compute_uv=False), lambda: (_gen(4, 3),)),
    Rec("eigh", jnp.linalg.eigh, _eigh_ref, lambda: (_spd(2, 4, 4),), post=_eigh_post, tol=1e-3,
        grad_tol=5e-2),
    Rec("eigvalsh", jnp.linalg.eigvalsh, np.linalg.eigvalsh, lambda: (_spd(4, 4),), tol=1e-3),
    Rec("norm_fro", jnp.linalg.norm, np.linalg.norm, lambda: (_gen(3, 4),)),
    Rec("norm_vec_3", lambda x: jnp.linalg.norm(x, 3, axis=0), lambda x: np.linalg.norm(x, 3, axis=0),
        lambda: (_gen(3, 4),)),
    Rec("norm_vec_inf", lambda x: jnp.linalg.norm(x, np.inf, axis=1), lambda x: np.linalg.norm(x, np.inf, axis=1),
        lambda: (_gen(3, 4),)),
    Rec("norm_mat_1", lambda x: jnp.linalg.norm(x, 1, axis=(0, 2), keepdims=True),
        lambda x: np.linalg.norm(x, 1, axis=(0, 2), keepdims=True), lambda: (_gen(3, 2, 4),)),
    Rec("norm_mat_2", lambda x: jnp.linalg.norm(x, 2), lambda x: np.linalg.norm(x, 2), lambda: (_gen(4, 3),),
        tol=1e-3),
    Rec("norm_nuc", lambda x: jnp.linalg.matrix_norm(x, ord="nuc"), lambda x: np.linalg.norm(x, "nuc", axis=(-2, -1)),
        lambda: (_gen(2, 4, 3),), tol=1e-3),
    Rec("vector_norm", lambda x: jnp.linalg.vector_norm(x, ord=1), lambda x: np.sum(np.abs(x)),
        lambda: (_gen(2, 3) + 5,)),
    Rec("pinv", jnp.linalg.pinv, np.linalg.pinv, lambda: (_gen(5, 3),), tol=1e-3),
    Rec("lstsq", lambda a, b: jnp.linalg.lstsq(a, b)[0], lambda a, b: np.linalg.lstsq(a, b)[0],
        lambda: (_gen(6, 3), _gen(6, 2)), tol=1e-3),
    Rec("matrix_power_3", lambda a: jnp.linalg.matrix_power(a, 3), lambda a: np.linalg.matrix_power(a, 3),
        lambda: (_gen(3, 3),), tol=1e-3),
    Rec("matrix_power_neg", lambda a: jnp.linalg.matrix_power(a, -2), lambda a: np.linalg.matrix_power(a, -2),
        lambda: (_well(3, 3),), tol=1e-3),
    Rec("cond", jnp.linalg.cond, np.linalg.cond, lambda: (_well(2, 3, 3),), tol=1e-3, grad=False),
    Rec("cond_fro", lambda a: jnp.linalg.cond(a, "fro"), lambda a: np.linalg.cond(a, "fro"),
        lambda: (_well(3, 3),), tol=1e-3, grad=False),
    Rec("multi_dot", lambda a, b, c: jnp.linalg.multi_dot([a, b, c]), lambda a, b, c: np.linalg.multi_dot([a, b, c]),
        lambda: (_gen(2, 3), _gen(3, 4), _gen(4)), tol=1e-3),
    Rec("trace", lambda a: jnp.linalg.trace(a, offset=1), lambda a: np.trace(a, 1, -2, -1), lambda: (_gen(2, 3, 4),)),
    Rec("diagonal", lambda a: jnp.linalg.diagonal(a, offset=-1), lambda a: np.diagonal(a, -1, -2, -1),
        lambda: (_gen(2, 4, 3),)),
    Rec("cross", jnp.linalg.cross, np.cross, lambda: (_gen(2, 3), _gen(2, 3))),
    Rec("outer", jnp.linalg.outer, np.outer, lambda: (_gen(3), _gen(4))),
    Rec("vecdot", jnp.linalg.vecdot, lambda a, b: np.sum(a * b, -1), lambda: (_gen(2, 3), _gen(2, 3))),
    Rec("tensordot", lambda a, b: jnp.linalg.tensordot(a, b, axes=1), lambda a, b: np.tensordot(a, b, 1),
        lambda: (_gen(2, 3), _gen(3, 4))),
    Rec("tensorsolve", jnp.linalg.tensorsolve, np.linalg.tensorsolve,
        lambda: (_well(6, 6).reshape(2, 3, 6), _gen(2, 3)), tol=1e-3),
    Rec("tensorinv", lambda a: jnp.linalg.tensorinv(a, 1), lambda a: np.linalg.tensorinv(a, 1),
        lambda: (_well(6, 6).reshape(6, 2, 3),), tol=1e-3),
    Rec("matrix_transpose", jnp.linalg.matrix_transpose, lambda a: np.swapaxes(a, -1, -2), lambda: (_gen(2, 3, 4),)),
    # scipy.linalg
    Rec("sp.cho_solve", lambda a, b: jsp_linalg.cho_solve(jsp_linalg.cho_factor(a), b),
        lambda a, b: sp_linalg.cho_solve(sp_linalg.cho_factor(a), b), lambda: (_spd(4, 4), _gen(4, 2)), tol=1e-3,
        # cho_factor reads one triangle: differentiate along symmetric perturbations.
        grad_fn=lambda a, b: jsp_linalg.cho_solve(jsp_linalg.cho_factor((a + a.T) / 2), b)),
    Rec("sp.cho_solve_lower", lambda a, b: jsp_linalg.cho_solve(jsp_linalg.cho_factor(a, lower=True), b),
        lambda a, b: sp_linalg.cho_solve(sp_linalg.cho_factor(a, lower=True), b), lambda: (_spd(4, 4), _gen(4)),
        tol=1e-3, grad_fn=lambda a, b: jsp_linalg.cho_solve(jsp_linalg.cho_factor((a + a.T) / 2, lower=True), b)),
    Rec("sp.solve_triangular", lambda a, b: jsp_linalg.solve_triangular(a, b, lower=True),
        lambda a, b: sp_linalg.solve_triangular(a, b, lower=True), lambda: (_tri(4, 4), _gen(4, 2))),
    Rec("sp.solve_triangular_T", lambda a, b: jsp_linalg.solve_triangular(a, b, trans=1, unit_diagonal=True),
        lambda a, b: sp_linalg.solve_triangular(a, b, trans=1, unit_diagonal=True),
        lambda: (_tri(4, 4, lower=False), _gen(4))),
    Rec("sp.lu", jsp_linalg.lu, _lu_ref, lambda: (_gen(4, 4),), post=lambda out, a: [_np(o) for o in out],
        grad_fn=lambda a: jsp_linalg.lu(a)[1:]),
    Rec("sp.lu_rect", jsp_linalg.lu, _lu_ref, lambda: (_gen(5, 3),), post=lambda out, a: [_np(o) for o in out],
        grad_fn=lambda a: jsp_linalg.lu(a)[1:]),
    Rec("sp.lu_solve", lambda a, b: jsp_linalg.lu_solve(jsp_linalg.lu_factor(a), b, trans=1),
        lambda a, b: sp_linalg.lu_solve(sp_linalg.lu_factor(a), b, trans=1), lambda: (_well(4, 4), _gen(4, 2)),
        tol=1e-3),
    Rec("sp.solve_pos", lambda a, b: jsp_linalg.solve(a, b, assume_a="pos"),
        lambda a, b: sp_linalg.solve(a, b, assume_a="pos"), lambda: (_spd(4, 4), _gen(4, 2)), tol=1e-3,
        grad_fn=lambda a, b: jsp_linalg.solve((a + a.T) / 2, b, assume_a="pos")),
    Rec("sp.expm_small", jsp_linalg.expm, sp_linalg.expm, lambda: (_gen(4, 4) * 0.1,)),
    Rec("sp.expm", jsp_linalg.expm, sp_linalg.expm, lambda: (_gen(4, 4),), tol=1e-3),
    Rec("sp.expm_scaled", jsp_linalg.expm, sp_linalg.expm, lambda: (_gen(3, 3) * 4,), tol=1e-3, grad=False),
    Rec("sp.block_diag", lambda a, b: jsp_linalg.block_diag(a, b), sp_linalg.block_diag,
        lambda: (_gen(2, 3), _gen(1, 2))),
    Rec("sp.toeplitz", jsp_linalg.toeplitz, sp_linalg.toeplitz, lambda: (_gen(3), _gen(4))),
    Rec("sp.polar", jsp_linalg.polar, sp_linalg.polar, lambda: (_well(3, 3),), tol=1e-3, grad=False),
]
BY_NAME = {r.name: r for r in RECORDS}


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [leaf for item in x for leaf in _leaves(item)]
    return [np.asarray(x)]


@pytest.mark.parametrize("rec", RECORDS, ids=str)
def test_values_vs_reference(rec):
    args = rec.args()
    out = rec.fn(*args)
    got = rec.post(out, *args) if rec.post else out
    want = rec.ref(*[a.astype(np.float64) for a in args])
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape, (g.shape, w.shape)
        scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
        np.testing.assert_allclose(g, w, rtol=rec.tol, atol=rec.tol * scale)
    for leaf in _leaves(out):
        if leaf.dtype.kind == "f":
            assert leaf.dtype == np.float32


@pytest.mark.parametrize("rec", [r for r in RECORDS if r.grad], ids=str)
def test_grads(rec):
    fn = rec.grad_fn or rec.fn
    tol = rec.grad_tol
    check_grads(fn, rec.args(), 1, modes=("fwd", "rev"), atol=tol, rtol=tol)


_VMAP = ["solve", "inv", "det_5x5", "slogdet", "cholesky", "qr_reduced", "svdvals", "eigvalsh", "pinv",
         "sp.lu_solve", "sp.expm_small", "sp.solve_triangular"]


@pytest.mark.parametrize("name", _VMAP)
def test_vmap_vs_loop(name):
    rec = BY_NAME[name]
    batched = [np.stack(list(col)) for col in zip(*[rec.args() for _ in range(3)])]
    out = jax.vmap(rec.fn)(*batched)
    for i in range(3):
        want = rec.fn(*[b[i] for b in batched])
        for g, w in zip(_leaves(out), _leaves(want)):
            np.testing.assert_allclose(g[i], w, rtol=1e-5, atol=1e-5)


def _jit_no_fallback(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = jax.jit(fn)(*args)
    fallback = [str(w.message) for w in caught if "runs eagerly" in str(w.message)]
    assert not fallback, f"jit fell back to eager: {fallback[0]}"
    return out


def _check_jit(fn, args, tol=1e-4):
    eager = fn(*args)
    jitted = _jit_no_fallback(fn, *args)
    for e, j in zip(_leaves(eager), _leaves(jitted)):
        assert e.dtype == j.dtype and e.shape == j.shape
        np.testing.assert_allclose(j, e, rtol=tol, atol=tol)


# A few compiled programs by default (each compile costs seconds cold); the rest are slow.
_JIT_DEFAULT = ["solve", "eigh"]


@pytest.mark.parametrize("name", _JIT_DEFAULT)
def test_jit_vs_eager(name):
    rec = BY_NAME[name]
    _check_jit(rec.fn, rec.args())


def test_jit_grad_slogdet_and_solve():
    a, b = _well(4, 4), _gen(4, 2)

    def loss(a, b):
        return jnp.linalg.slogdet(a)[1] + jnp.sum(jnp.linalg.solve(a, b) ** 2)
    _check_jit(jax.grad(loss, argnums=(0, 1)), (a, b), tol=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("rec", [r for r in RECORDS if r.name not in _JIT_DEFAULT], ids=str)
def test_jit_vs_eager_slow(rec):
    _check_jit(rec.fn, rec.args(), tol=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("rec", [r for r in RECORDS if r.grad], ids=str)
def test_jit_grad_slow(rec):
    fn = rec.grad_fn or rec.fn

    def scalar_loss(*args):
        return sum(jnp.sum(jnp.sin(leaf)) for leaf in jax.tree_util.tree_leaves(fn(*args)))
    _check_jit(jax.grad(scalar_loss), rec.args(), tol=1e-3)


# ---------------------------------------------------------------- lax.linalg primitives

@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
def test_triangular_solve_flags(left_side, lower, transpose_a):
    a = _tri(2, 4, 4, lower=lower)
    b = _gen(2, 4, 3) if left_side else _gen(2, 3, 4)
    for unit in (False, True):
        x = _np(lax_linalg.triangular_solve(a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
                                            unit_diagonal=unit))
        m = np.tril(a) if lower else np.triu(a)
        if unit:
            m = m - np.eye(4) * np.diagonal(m, axis1=-2, axis2=-1)[..., None, :] + np.eye(4)
        m = np.swapaxes(m, -1, -2) if transpose_a else m
        recon = m @ x if left_side else x @ m
        np.testing.assert_allclose(recon, b, rtol=1e-4, atol=1e-4)
    check_grads(lambda a, b: lax_linalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                                         transpose_a=transpose_a), (a, b), 1, modes=("fwd", "rev"))


@pytest.mark.slow
def test_linalg_primitives_jit_all_flags():
    a, spd, tall = _gen(2, 4, 4), _spd(2, 4, 4), _gen(2, 5, 3)
    cases = [(lax_linalg.lu, (a,)), (lax_linalg.lu, (tall,)), (lambda x: lax_linalg.qr(x, full_matrices=True), (tall,)),
             (lambda x: lax_linalg.svd(x, full_matrices=True)[1], (tall,)),
             (lambda x: lax_linalg.eigh(x, lower=False)[1], (spd,))]
    for fn, args in cases:
        _check_jit(fn, args, tol=1e-3)
    tri = _tri(2, 4, 4)
    for left in (True, False):
        for lower in (True, False):
            for tr in (True, False):
                kw = dict(left_side=left, lower=lower, transpose_a=tr, unit_diagonal=tr)
                b = a[:, :, :3] if left else a[:, :3, :]
                _check_jit(lambda x, y: lax_linalg.triangular_solve(x, y, **kw), (tri, b), tol=1e-3)


def test_lu_primitive_outputs():
    a = _gen(2, 5, 3)
    lu, pivots, perm = lax_linalg.lu(a)
    assert (lu.dtype, pivots.dtype, perm.dtype) == (np.float32, np.int32, np.int32)
    assert (lu.shape, pivots.shape, perm.shape) == ((2, 5, 3), (2, 3), (2, 5))
    for k in range(2):
        ref_lu, ref_piv = sp_linalg.lu_factor(a[k].astype(np.float64))
        np.testing.assert_allclose(_np(lu)[k], ref_lu, rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(_np(pivots)[k], ref_piv)
        np.testing.assert_allclose(a[k][_np(perm)[k]], (np.tril(_np(lu)[k], -1) + np.eye(5, 3)) @ np.triu(_np(lu)[k][:3]),
                                   rtol=1e-5, atol=1e-5)


def test_cholesky_of_non_positive_definite_is_nan():
    # JAX returns NaNs in the lower triangle (no error) when the factorization fails.
    out = _np(jnp.linalg.cholesky(-np.eye(3, dtype=np.float32)))
    assert np.isnan(np.tril(out)[np.tril_indices(3)]).all() and (np.triu(out, 1) == 0).all()


def test_singular_matrix_determinants():
    s = np.ones((3, 3), np.float32)
    sign, logdet = jnp.linalg.slogdet(np.ones((4, 4), np.float32))
    assert float(sign) == 0.0 and float(logdet) == -np.inf
    assert float(jnp.linalg.det(s)) == 0.0


def test_result_types():
    assert jnp.linalg.det(np.eye(4, dtype=np.int32)).dtype == np.float32
    assert jnp.linalg.norm(np.arange(3)).dtype == np.float32
    assert jnp.linalg.matrix_rank(np.ones((3, 3), np.float32)).dtype == np.int32
    assert int(jnp.linalg.matrix_rank(np.ones((3, 3), np.float32))) == 1
    assert jnp.linalg.eig(np.eye(2, dtype=np.float32)).eigenvalues.dtype == np.complex64
    q = jnp.linalg.qr(np.eye(3, dtype=np.float32))
    assert type(q).__name__ == "QRResult" and q.Q.shape == (3, 3)
    assert isinstance(jsp_linalg.qr(np.eye(3, dtype=np.float32), mode="r"), tuple)


def test_errors():
    with pytest.raises(ValueError, match=r"Argument to inv must have shape \[..., n, n\], got \(2, 3\)"):
        jnp.linalg.inv(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="Invalid shapes for solve"):
        jnp.linalg.solve(np.eye(3, dtype=np.float32)[None].repeat(2, 0), np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="Improper number of axes for norm"):
        jnp.linalg.norm(np.ones((2, 3, 4), np.float32), ord=2)
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode"):
        jnp.linalg.qr(np.eye(2, dtype=np.float32), mode="bogus")


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 6), k=st.integers(1, 3), batch=st.integers(1, 3), seed=st.integers(0, 2 ** 16))
def test_solve_property(n, k, batch, seed):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((batch, n, n)) + 3 * np.sqrt(n) * np.eye(n)).astype(np.float32)
    b = rng.standard_normal((batch, n, k)).astype(np.float32)
    x = _np(jnp.linalg.solve(a, b))
    np.testing.assert_allclose(a.astype(np.float64) @ x, b, rtol=1e-4, atol=1e-4)
    sign, logdet = (_np(v) for v in jnp.linalg.slogdet(a))
    ref_sign, ref_logdet = np.linalg.slogdet(a.astype(np.float64))
    np.testing.assert_array_equal(sign, ref_sign)
    np.testing.assert_allclose(logdet, ref_logdet, rtol=1e-4, atol=1e-4)

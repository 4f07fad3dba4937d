"""Linear algebra on singular, empty and zero-size inputs against real JAX: the class of the
result (NaN/inf pattern, dtype, shape, finite values) eagerly and under jit, and the exception
class where JAX raises."""
import itertools

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402
import numjax.scipy.linalg as nsl  # noqa: E402

jax.config.update("jax_enable_x64", False)

F32, C64 = np.float32, np.complex64
Z = lambda *s: np.zeros(s, F32)  # noqa: E731
O = lambda *s: np.ones(s, F32)  # noqa: E731
RANK1 = np.array([[1, 2], [2, 4]], F32)
RANK2 = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], F32)
RANK3 = np.array([[1, 2, 3, 4], [2, 4, 6, 8], [0, 1, 0, 1], [1, 0, 0, 2]], F32)
INDEFINITE = np.array([[1, 2], [2, 1]], F32)

# name -> (function of (jax-like module, numpy-like module, scipy-linalg-like module, *args), args)
CASES = {
    "inv_zeros": (lambda j, m, s, a: m.linalg.inv(a), (Z(2, 2),)),
    "inv_zeros4": (lambda j, m, s, a: m.linalg.inv(a), (Z(4, 4),)),
    "inv_rank1": (lambda j, m, s, a: m.linalg.inv(a), (RANK1,)),
    "inv_rank2": (lambda j, m, s, a: m.linalg.inv(a), (RANK2,)),
    "inv_complex_zeros": (lambda j, m, s, a: m.linalg.inv(a), (Z(2, 2).astype(C64),)),
    "inv_0x0": (lambda j, m, s, a: m.linalg.inv(a), (Z(0, 0),)),
    "inv_empty_batch": (lambda j, m, s, a: m.linalg.inv(a), (Z(0, 3, 3),)),
    "solve_zeros": (lambda j, m, s, a, b: m.linalg.solve(a, b), (Z(2, 2), O(2))),
    "solve_rank1": (lambda j, m, s, a, b: m.linalg.solve(a, b), (RANK1, O(2))),
    "solve_empty_batch": (lambda j, m, s, a, b: m.linalg.solve(a, b), (Z(0, 3, 3), O(0, 3, 2))),
    "scipy_solve_pos_zeros": (lambda j, m, s, a, b: s.solve(a, b, assume_a="pos"), (Z(2, 2), O(2))),
    "lu_solve_zeros": (lambda j, m, s, a, b: s.lu_solve(s.lu_factor(a), b), (Z(3, 3), O(3))),
    "solve_triangular_zeros": (lambda j, m, s, a, b: s.solve_triangular(a, b, lower=True), (Z(3, 3), O(3))),
    "triangular_solve_right": (lambda j, m, s, a, b: j.lax.linalg.triangular_solve(a, b, lower=True),
                               (Z(2, 2), O(3, 2))),
    "matrix_power_inverse": (lambda j, m, s, a: m.linalg.matrix_power(a, -1), (RANK1,)),
    "lstsq_zeros": (lambda j, m, s, a, b: m.linalg.lstsq(a, b), (Z(3, 2), O(3))),
    "lstsq_rank1": (lambda j, m, s, a, b: m.linalg.lstsq(a, b), (RANK1, O(2))),
    "lstsq_3x0": (lambda j, m, s, a, b: m.linalg.lstsq(a, b), (Z(3, 0), O(3, 2))),
    "lstsq_0x2": (lambda j, m, s, a, b: m.linalg.lstsq(a, b), (Z(0, 2), O(0))),
    "det_zeros": (lambda j, m, s, a: m.linalg.det(a), (Z(4, 4),)),
    "det_0x0": (lambda j, m, s, a: m.linalg.det(a), (Z(0, 0),)),
    "det_empty_batch": (lambda j, m, s, a: m.linalg.det(a), (Z(0, 4, 4),)),
    "slogdet_rank2": (lambda j, m, s, a: m.linalg.slogdet(a), (RANK2,)),
    "slogdet_0x0": (lambda j, m, s, a: m.linalg.slogdet(a), (Z(0, 0),)),
    "slogdet_complex_zeros": (lambda j, m, s, a: m.linalg.slogdet(a), (Z(3, 3).astype(C64),)),
    "grad_det_zeros": (lambda j, m, s, a: j.grad(m.linalg.det)(a), (Z(5, 5),)),
    "grad_det_rank3": (lambda j, m, s, a: j.grad(m.linalg.det)(a), (RANK3,)),
    "grad_det_rank1": (lambda j, m, s, a: j.grad(m.linalg.det)(a), (RANK1,)),
    "grad_det_rank2": (lambda j, m, s, a: j.grad(m.linalg.det)(a), (RANK2,)),
    "cholesky_indefinite": (lambda j, m, s, a: m.linalg.cholesky(a), (INDEFINITE,)),
    "cholesky_indefinite_complex": (lambda j, m, s, a: m.linalg.cholesky(a), (INDEFINITE.astype(C64),)),
    "cholesky_empty_batch": (lambda j, m, s, a: m.linalg.cholesky(a), (Z(0, 3, 3),)),
    "eigh_zeros": (lambda j, m, s, a: m.linalg.eigh(a), (Z(2, 2),)),
    "eigh_empty_batch": (lambda j, m, s, a: m.linalg.eigh(a), (Z(0, 3, 3),)),
    "svd_zeros": (lambda j, m, s, a: m.linalg.svd(a), (Z(2, 3),)),
    "svd_0x3": (lambda j, m, s, a: m.linalg.svd(a), (Z(0, 3),)),
    "svd_empty_batch": (lambda j, m, s, a: m.linalg.svd(a), (Z(0, 3, 2),)),
    "qr_zeros": (lambda j, m, s, a: m.linalg.qr(a), (Z(3, 2),)),
    "qr_3x0_complete": (lambda j, m, s, a: m.linalg.qr(a, mode="complete"), (Z(3, 0),)),
    "qr_empty_batch": (lambda j, m, s, a: m.linalg.qr(a), (Z(0, 3, 3),)),
    "pinv_zeros": (lambda j, m, s, a: m.linalg.pinv(a), (Z(2, 3),)),
    "pinv_empty_batch": (lambda j, m, s, a: m.linalg.pinv(a), (Z(0, 3, 3),)),
    "matrix_rank_zeros": (lambda j, m, s, a: m.linalg.matrix_rank(a), (Z(3, 3),)),
    "matrix_rank_rank2": (lambda j, m, s, a: m.linalg.matrix_rank(a), (RANK2,)),
    "matrix_rank_empty_batch": (lambda j, m, s, a: m.linalg.matrix_rank(a), (Z(0, 3, 3),)),
    "norm_2_empty": (lambda j, m, s, a: m.linalg.norm(a, 2), (Z(0, 3),)),
    "norm_1_empty": (lambda j, m, s, a: m.linalg.norm(a, 1), (Z(3, 0),)),
    "norm_inf_empty": (lambda j, m, s, a: m.linalg.norm(a, np.inf), (Z(0, 3),)),
    "norm_vector_inf_empty": (lambda j, m, s, a: m.linalg.norm(a, np.inf), (Z(0),)),
    "norm_nuc_empty_batch": (lambda j, m, s, a: m.linalg.norm(a, "nuc", axis=(-2, -1)), (Z(0, 3, 3),)),
    "norm_vector_neg_inf_empty": (lambda j, m, s, a: m.linalg.norm(a, -np.inf), (Z(0),)),
    "cond_zeros": (lambda j, m, s, a: m.linalg.cond(a), (Z(2, 2),)),
    "cond_1_zeros": (lambda j, m, s, a: m.linalg.cond(a, 1), (Z(2, 2),)),
    "cond_fro_rank1": (lambda j, m, s, a: m.linalg.cond(a, "fro"), (RANK1,)),
    "cond_empty_batch": (lambda j, m, s, a: m.linalg.cond(a), (Z(0, 3, 3),)),
    "cond_0x0": (lambda j, m, s, a: m.linalg.cond(a), (Z(0, 0),)),
    "cond_1_non_square": (lambda j, m, s, a: m.linalg.cond(a, 1), (Z(2, 3),)),
}
for (_m, _k, _n) in itertools.product([0, 2], repeat=3):
    _a, _b = O(_m, _k), O(_k, _n)
    CASES[f"matmul_{_m}{_k}{_n}"] = (lambda j, m, s, a, b: a @ b, (_a, _b))
    CASES[f"einsum_{_m}{_k}{_n}"] = (lambda j, m, s, a, b: m.einsum("ij,jk->ik", a, b), (_a, _b))
    CASES[f"tensordot_{_m}{_k}{_n}"] = (lambda j, m, s, a, b: m.tensordot(a, b, 1), (_a, _b))
    CASES[f"dot_general_batch_{_m}{_k}{_n}"] = (
        lambda j, m, s, a, b: j.lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), (O(_m, 3, _k), O(_m, _k, _n)))
CASES["vdot_empty"] = (lambda j, m, s, a, b: m.vdot(a, b), (O(0), O(0)))
CASES["inner_empty"] = (lambda j, m, s, a, b: m.inner(a, b), (O(3, 0), O(2, 0)))
CASES["outer_empty"] = (lambda j, m, s, a, b: m.outer(a, b), (O(0), O(3)))


def _leaves(mod, out):
    return [np.asarray(x) for x in mod.tree_util.tree_leaves(out)]


def _run(name, which):
    """Leaves of the case for ``which`` in (jax, numjax eager, numjax jit), or the exception."""
    fn, args = CASES[name]
    if which == "jax":
        f = lambda *a: fn(jax, jjnp, jsl, *a)  # noqa: E731
        call, mod = jax.jit(f), jax
    else:
        f = lambda *a: fn(nj, njnp, nsl, *a)  # noqa: E731
        call, mod = (nj.jit(f) if which == "jit" else f), nj
    try:
        return _leaves(mod, call(*args))
    except Exception as e:  # noqa: BLE001  (the class is what is compared)
        return e


def _same_class(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    for part in ((np.real, np.imag) if want.dtype.kind == "c" else (lambda x: x,)):
        g, w = part(got), part(want)
        if w.dtype.kind != "f":
            np.testing.assert_array_equal(g, w)
            continue
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_array_equal(np.where(np.isinf(g), g, 0), np.where(np.isinf(w), w, 0))
        fin = np.isfinite(w)
        np.testing.assert_allclose(g[fin], w[fin], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name, mode):
    want = _run(name, "jax")
    got = _run(name, mode)
    if isinstance(want, Exception):
        assert isinstance(got, type(want)), (got, want)
        return
    assert not isinstance(got, Exception), got
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _same_class(g, w)

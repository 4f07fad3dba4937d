"""jnp.linalg, jnp.fft and jax.scipy.linalg against real JAX: values, dtypes and shapes.

Decompositions are compared through sign-free quantities (reconstructions, singular values,
eigenvalues) since LAPACK drivers may choose different signs.
"""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402
import numjax.scipy.linalg as nsl  # noqa: E402

jax.config.update("jax_enable_x64", False)

RNG = np.random.default_rng(3)
A = (RNG.standard_normal((2, 4, 4)) + 4 * np.eye(4)).astype(np.float32)
B = RNG.standard_normal((2, 4, 3)).astype(np.float32)
SPD = (A @ np.swapaxes(A, -1, -2) / 4 + np.eye(4)).astype(np.float32)
TALL = RNG.standard_normal((5, 3)).astype(np.float32)
Z = (RNG.standard_normal((3, 6)) + 1j * RNG.standard_normal((3, 6))).astype(np.complex64)

# name -> (function of a numpy-like module `m` and a scipy-linalg-like module `s`, args)
CASES = {
    "solve": (lambda m, s, a, b: m.linalg.solve(a, b), (A, B)),
    "inv": (lambda m, s, a: m.linalg.inv(a), (A,)),
    "det": (lambda m, s, a: m.linalg.det(a), (A,)),
    "det3": (lambda m, s, a: m.linalg.det(a[:, :3, :3]), (A,)),
    "slogdet": (lambda m, s, a: tuple(m.linalg.slogdet(a)), (A,)),
    "cholesky": (lambda m, s, a: m.linalg.cholesky(a), (SPD,)),
    "eigvalsh": (lambda m, s, a: m.linalg.eigvalsh(a), (SPD,)),
    "svdvals": (lambda m, s, a: m.linalg.svd(a, compute_uv=False), (TALL,)),
    "qr_recon": (lambda m, s, a: m.matmul(*m.linalg.qr(a)), (TALL,)),
    "norms": (lambda m, s, a: (m.linalg.norm(a), m.linalg.norm(a, 1, axis=(1, 2)),
                               m.linalg.norm(a, 2, axis=(1, 2)), m.linalg.norm(a[0, 0], 3)), (A,)),
    "pinv": (lambda m, s, a: m.linalg.pinv(a), (TALL,)),
    "lstsq": (lambda m, s, a, b: m.linalg.lstsq(a, b)[:3], (TALL, TALL[:, :2])),
    "matrix_rank": (lambda m, s, a: m.linalg.matrix_rank(a), (TALL,)),
    "fft": (lambda m, s, z: (m.fft.fft(z), m.fft.ifft2(z, norm="ortho"), m.fft.rfft(z.real, n=8),
                             m.fft.irfft(z), m.fft.hfft(z, n=5), m.fft.fftfreq(5), m.fft.fftshift(z.real)), (Z,)),
    "cho_solve": (lambda m, s, a, b: s.cho_solve(s.cho_factor(a), b), (SPD[0], B[0])),
    "solve_triangular": (lambda m, s, a, b: s.solve_triangular(a, b, lower=True, trans=1), (SPD[0], B[0])),
    "lu": (lambda m, s, a: s.lu(a), (A[0],)),
    "lu_solve": (lambda m, s, a, b: s.lu_solve(s.lu_factor(a), b), (A[0], B[0])),
    "expm": (lambda m, s, a: s.expm(a * 0.3), (A[0],)),
    "block_diag": (lambda m, s, a, b: s.block_diag(a, b), (A[0], B[0])),
}


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [leaf for item in x for leaf in _leaves(item)]
    return [x]


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name):
    fn, args = CASES[name]
    want = _leaves(fn(jjnp, jsl, *args))
    got = _leaves(fn(njnp, nsl, *args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, nj.Array)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        w = np.asarray(w)
        scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-4, atol=2e-4 * scale)


@pytest.mark.parametrize("name", ["solve", "det", "slogdet", "cholesky", "eigvalsh", "pinv", "expm"])
def test_grads_match_jax(name):
    fn, args = CASES[name]

    def loss(m, s):
        return lambda *xs: sum((o.astype(np.float32) ** 2).sum() for o in _leaves(fn(m, s, *xs)))
    want = jax.grad(loss(jjnp, jsl), argnums=tuple(range(len(args))))(*args)
    got = nj.grad(loss(njnp, nsl), argnums=tuple(range(len(args))))(*args)
    for g, w in zip(got, want):
        w = np.asarray(w)
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-3, atol=2e-3 * max(1.0, float(np.abs(w).max())))

"""Batched products of small matrices under jit: the compiled loop over the batch
(lowering/driver_nodes.py ``_batched_matmul_kernel``) against numpy in float64, and the
choice between it and BLAS (the program text names which one runs)."""
import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax.lowering import driver_nodes

RNG = np.random.default_rng(14)
TOL = {np.float32: 2e-5, np.float64: 1e-12}


def _rand(shape, dtype):
    return RNG.standard_normal(shape).astype(dtype)


def _source(f, *args):
    return jax.jit(f).lower(*args).compile().executable.source


def _check(got, want, dtype):
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    np.testing.assert_allclose(np.asarray(got), want, rtol=0, atol=TOL[dtype] * scale)
    assert np.asarray(got).dtype == dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("b, m, k, n", [
    (1, 3, 5, 9),        # batch 1, row form with a tail after the vector width
    (7, 8, 8, 8),        # 512 multiply-adds: below both limits
    (5, 13, 11, 17),     # odd sizes in the row form
    (6, 16, 16, 16),     # at the row form's limit
    (4, 9, 7, 3),        # narrow output: the dot form
    (3, 5, 1, 11),       # k == 1: the outer product
    (2, 1, 1, 1),
])
def test_batched_matmul_kernel_matches_numpy(request, dtype, b, m, k, n):
    if dtype == np.float64:
        request.getfixturevalue("x64")
    x, y = _rand((b, m, k), dtype), _rand((b, k, n), dtype)
    f = lambda x, y: x @ y                   # noqa: E731
    assert "batched_matmul_blas" not in _source(f, x, y)
    want = x.astype(np.float64) @ y.astype(np.float64)
    _check(jax.jit(f)(x, y), want, dtype)
    _check(f(jnp.asarray(x), jnp.asarray(y)), want, dtype)   # eager agrees


def test_larger_products_stay_with_blas():
    x, y = _rand((4, 24, 24), np.float32), _rand((4, 24, 24), np.float32)
    assert "batched_matmul_blas" in _source(lambda x, y: x @ y, x, y)
    narrow = _rand((4, 24, 4), np.float32)       # 2,304 multiply-adds, dot form: BLAS
    assert "batched_matmul_blas" in _source(lambda x, y: x @ y, x, narrow)


@pytest.mark.parametrize("copies", [1, 3])     # 4 columns: the dot form; 12: the row form
def test_outer_product_is_exact_with_signed_zeros_and_specials(copies):
    # k == 1: each entry is one product, so the result equals numpy's elementwise product
    # bit for bit (-0.0 included, as XLA's), infinities and NaNs in place.
    a = np.array([[[-0.0], [2.0], [np.inf]], [[1.5], [-3.0], [np.nan]]], np.float32)
    c = np.tile(np.array([[[1.0, -2.0, 0.0, 4.0]], [[0.0, np.inf, -1.0, 2.0]]], np.float32), copies)
    got = np.asarray(jax.jit(lambda a, c: a @ c)(a, c))
    with np.errstate(invalid="ignore"):
        want = a * c
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("spec, lhs, rhs", [
    ("bij,bjk->bik", (6, 5, 4), (6, 4, 10)),
    ("bji,bjk->bik", (6, 4, 5), (6, 4, 10)),      # lhs contracted on its rows: a transposed copy
    ("bij,bkj->bik", (6, 5, 4), (6, 10, 4)),      # rhs transposed: the dot form's operand order
    ("ib,bj->bij", (9, 6), (6, 12)),              # batch axis not leading, no contraction
    ("abij,abjk->abik", (2, 3, 5, 4), (2, 3, 4, 9)),   # two batch axes
])
def test_batched_einsum_layouts(spec, lhs, rhs):
    x, y = _rand(lhs, np.float32), _rand(rhs, np.float32)
    f = lambda x, y: jnp.einsum(spec, x, y)       # noqa: E731
    want = np.einsum(spec, x.astype(np.float64), y.astype(np.float64))
    _check(jax.jit(f)(x, y), want, np.float32)


def test_empty_batch_and_empty_contraction():
    x, y = np.zeros((0, 3, 4), np.float32), np.zeros((0, 4, 9), np.float32)
    assert np.asarray(jax.jit(lambda x, y: x @ y)(x, y)).shape == (0, 3, 9)
    x, y = np.ones((3, 2, 0), np.float32), np.ones((3, 0, 9), np.float32)
    got = np.asarray(jax.jit(lambda x, y: x @ y)(x, y))
    np.testing.assert_array_equal(got, np.zeros((3, 2, 9), np.float32))


def test_integer_and_mixed_products_keep_their_rule():
    # Only real floats of one dtype take the kernel: integers wrap as XLA's (numpy rule).
    x = RNG.integers(-5, 5, (4, 3, 2)).astype(np.int32)
    y = RNG.integers(-5, 5, (4, 2, 6)).astype(np.int32)
    src = _source(lambda x, y: x @ y, x, y)
    assert "batched_matmul_loop" in src
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda x, y: x @ y)(x, y)), x @ y)


def test_per_example_gradients_match_a_python_loop():
    w1, w2 = _rand((7, 12), np.float32) * 0.3, _rand((12, 1), np.float32) * 0.3
    xs, ys = _rand((10, 7), np.float32), _rand((10,), np.float32)

    def loss(w1, w2, x, y):
        return ((jnp.tanh(x @ w1) @ w2)[0] - y) ** 2

    per_example = jax.jit(jax.vmap(jax.grad(loss, argnums=(0, 1)), in_axes=(None, None, 0, 0)))
    g1, g2 = per_example(w1, w2, xs, ys)
    assert g1.shape == (10, 7, 12) and g2.shape == (10, 12, 1)
    assert "batched_matmul_blas" not in _source(
        jax.vmap(jax.grad(loss, argnums=(0, 1)), in_axes=(None, None, 0, 0)), w1, w2, xs, ys)
    for i in range(10):
        r1, r2 = jax.grad(loss, argnums=(0, 1))(w1, w2, xs[i], ys[i])
        np.testing.assert_allclose(np.asarray(g1[i]), np.asarray(r1), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(g2[i]), np.asarray(r2), rtol=1e-5, atol=1e-6)


def test_grad_through_a_small_batched_matmul(x64):
    a, b = _rand((3, 4, 5), np.float64), _rand((3, 5, 8), np.float64)
    ga, gb = jax.jit(jax.grad(lambda a, b: jnp.sum(jnp.sin(a @ b)), argnums=(0, 1)))(a, b)
    d = np.cos(a @ b)
    np.testing.assert_allclose(np.asarray(ga), d @ np.swapaxes(b, 1, 2), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(gb), np.swapaxes(a, 1, 2) @ d, rtol=1e-12, atol=1e-12)


def test_limits_are_what_the_rule_reads(monkeypatch):
    x, y = _rand((2, 16, 16), np.float32), _rand((2, 16, 16), np.float32)
    monkeypatch.setattr(driver_nodes, "SMALL_MATMUL_MACS", 0)
    assert "batched_matmul_blas" in _source(lambda x, y: x @ y, x, y)


# ---------------------------------------------------------------- Cholesky of small matrices

def _spd(batch, n, dtype):
    a = RNG.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) / max(n, 1) + np.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch, n", [((1,), 1), ((), 7), ((3,), 13), ((2, 3), 32), ((5,), 48)])
def test_small_cholesky_matches_numpy(request, dtype, batch, n):
    if dtype == np.float64:
        request.getfixturevalue("x64")
    a = _spd(batch, n, dtype)
    src = _source(jnp.linalg.cholesky, a)
    assert "np.sqrt" in src and "kn.cholesky" not in src
    got = np.asarray(jax.jit(jnp.linalg.cholesky)(a))
    want = np.linalg.cholesky(a.astype(np.float64))
    tol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * np.sqrt(n))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.tril(got))               # zeros above the diagonal
    eager = np.asarray(jnp.linalg.cholesky(jnp.asarray(a)))         # LAPACK: close, not equal bits
    np.testing.assert_allclose(got, eager, rtol=0, atol=tol * np.sqrt(n))


def test_larger_cholesky_stays_with_lapack():
    assert "kn.cholesky" in _source(jnp.linalg.cholesky, _spd((2,), 49, np.float32))


def test_small_cholesky_failures_are_nan_like_before():
    a = _spd((4,), 5, np.float32)
    a[1] = -np.eye(5, dtype=np.float32)        # not positive definite at the first pivot
    a[2, 3, 3] = -50.0                         # fails at a later pivot
    a[3, 0, 0] = np.nan
    got = np.asarray(jax.jit(lambda x: jax.lax.linalg.cholesky(x, symmetrize_input=False))(a))
    low = np.tril(np.ones((5, 5), bool))
    assert np.isfinite(got[0]).all()
    for b in (1, 2, 3):
        assert np.isnan(got[b][low]).all(), b
    eager = np.asarray(jax.lax.linalg.cholesky(jnp.asarray(a), symmetrize_input=False))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(eager))


def test_small_cholesky_empty_and_gradient(x64):
    assert np.asarray(jax.jit(jnp.linalg.cholesky)(np.zeros((3, 0, 0), np.float32))).shape == (3, 0, 0)
    assert np.asarray(jax.jit(jnp.linalg.cholesky)(np.zeros((0, 4, 4), np.float32))).shape == (0, 4, 4)
    a = _spd((), 6, np.float64)
    w = RNG.standard_normal((6, 6))
    f = lambda a: jnp.sum(jnp.linalg.cholesky(a) * w)            # noqa: E731
    g = np.asarray(jax.jit(jax.grad(f))(a))
    eps, num = 1e-6, np.zeros_like(a)
    ref = lambda a: np.sum(np.linalg.cholesky((a + a.T) / 2) * w)  # noqa: E731  (symmetrized input)
    for i in range(6):
        for j in range(6):
            d = np.zeros_like(a)
            d[i, j] = eps
            num[i, j] = (ref(a + d) - ref(a - d)) / (2 * eps)
    np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-7)

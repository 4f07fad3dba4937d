"""Linear algebra on singular, empty and zero-size inputs, eager and under jit.

JAX never checks for singularity: solves and inverses are an LU factorization with partial
pivoting (getrf: a zero pivot is left in place, its column not scaled) followed by triangular
solves (trsm: each row is multiplied by the reciprocal of its pivot, every product is
subtracted, so 0 * inf is NaN).  The expectations below come from that algorithm (a small
reference written here for exactly representable inputs) or from the mathematics of the
result (adjugates, norms of empty matrices), never from recorded outputs; eager evaluation
and jit must give the same values.
"""
import itertools

import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax import lax

F32 = np.float32


def _both(f, *args):
    """(eager, jit) results of ``f(*args)`` as lists of numpy leaves."""
    eager = [np.asarray(x) for x in jax.tree_util.tree_leaves(f(*args))]
    jitted = [np.asarray(x) for x in jax.tree_util.tree_leaves(jax.jit(f)(*args))]
    return eager, jitted


def _assert_same(got, want):
    """Equal values, NaNs in the same places, same dtype and shape."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def _check(f, args, expected):
    eager, jitted = _both(f, *args)
    expected = [np.asarray(e) for e in expected]
    assert len(eager) == len(jitted) == len(expected)
    for e, j, x in zip(eager, jitted, expected):
        _assert_same(e, x)
        _assert_same(j, x)


# ---------------------------------------------------------------- reference LU solve
# Scalar code in the operand's dtype, for inputs whose LU is exact (powers-of-two pivots).

def _getrf(a):
    a = a.copy()
    n = a.shape[0]
    perm = list(range(n))
    for j in range(n):
        p = j + int(np.argmax(np.abs(a[j:, j])))          # first largest magnitude
        a[[j, p]] = a[[p, j]]
        perm[j], perm[p] = perm[p], perm[j]
        if a[j, j] != 0:                                  # a zero pivot's column stays as it is
            a[j + 1:, j] = a[j + 1:, j] / a[j, j]
        for i in range(j + 1, n):
            a[i, j + 1:] = a[i, j + 1:] - a[i, j] * a[j, j + 1:]
    return a, perm


def _trsm(lu, b, lower):
    """op(lu) x = b by substitution, every product subtracted, pivots applied as reciprocals."""
    x = b.copy()
    n = lu.shape[0]
    rows = range(n) if lower else range(n - 1, -1, -1)
    one = lu.dtype.type(1)
    with np.errstate(all="ignore"):
        for i in rows:
            others = range(i) if lower else range(i + 1, n)
            for j in others:
                x[i] = x[i] - lu[i, j] * x[j]
            if not lower:
                x[i] = x[i] * (one / lu[i, i])
    return x


def _reference_solve(a, b):
    lu, perm = _getrf(a)
    x = _trsm(lu, b[perm], lower=True)
    return _trsm(lu, x, lower=False)


SINGULAR = {
    "zeros2": np.zeros((2, 2), F32),
    "zeros4": np.zeros((4, 4), F32),
    "rank1": np.array([[1, 2], [2, 4]], F32),
    "rank2": np.array([[2, 4, 8], [1, 2, 4], [4, 0, 2]], F32),
    "zero_column": np.array([[0, 1, 2], [0, 4, 2], [0, 2, 1]], F32),
}


@pytest.mark.parametrize("name", SINGULAR)
def test_inverse_of_singular_matrix_is_lu_then_triangular_solves(name):
    a = SINGULAR[name]
    want = _reference_solve(a, np.eye(len(a), dtype=F32))
    assert not np.isfinite(want).all()
    _check(jnp.linalg.inv, [a], [want])


@pytest.mark.parametrize("name", SINGULAR)
def test_solve_with_singular_matrix_is_lu_then_triangular_solves(name):
    a = SINGULAR[name]
    b = np.arange(1, len(a) + 1, dtype=F32)
    _check(jnp.linalg.solve, [a, b], [_reference_solve(a, b[:, None])[:, 0]])


def test_zero_matrix_inverse_pattern():
    # U = 0, L = P = I: the last row is e_n * (1/0) = [nan, ..., nan, inf]; every earlier row
    # subtracts 0 * (that row), NaN wherever it has an inf or NaN, so it is all NaN.
    for n in (1, 2, 3):
        want = np.full((n, n), np.nan, F32)
        want[-1, -1] = np.inf
        _check(jnp.linalg.inv, [np.zeros((n, n), F32)], [want])
    _check(jnp.linalg.solve, [np.zeros((3, 3), F32), np.ones(3, F32)], [np.array([np.nan, np.nan, np.inf], F32)])


def test_complex_zero_matrix_inverse_is_nan():
    # The reciprocal of a complex zero pivot is NaN in both parts (BLAS inverts it by Smith's
    # ratio, 0/0), so every entry is NaN + NaN j.
    a = np.zeros((2, 2), np.complex64)
    eager, jitted = _both(jnp.linalg.inv, a)
    for out in eager + jitted:
        assert out.dtype == np.complex64
        assert np.isnan(out.real).all() and np.isnan(out.imag).all()


@pytest.mark.parametrize("lower,transpose_a,left_side", list(itertools.product([False, True], repeat=3)))
def test_triangular_solve_zero_diagonal_never_raises(lower, transpose_a, left_side):
    a = np.zeros((3, 3), F32)
    b = np.ones((3, 2) if left_side else (2, 3), F32)
    f = lambda a, b: lax.linalg.triangular_solve(a, b, left_side=left_side, lower=lower,  # noqa: E731
                                                 transpose_a=transpose_a)
    eager, jitted = _both(f, a, b)
    _assert_same(jitted[0], eager[0])
    # The first row solved is 1 * (1/0) = inf; every later one subtracts 0 * inf: NaN.
    assert np.isinf(eager[0]).sum() == 2 and np.isnan(eager[0]).sum() == 4


def test_unit_diagonal_triangular_solve_ignores_zero_diagonal():
    a = np.array([[0, 0], [2, 0]], F32)
    b = np.array([[1], [3]], F32)
    f = lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True,  # noqa: E731
                                                 unit_diagonal=True)
    _check(f, [a, b], [np.array([[1], [1]], F32)])


def test_matrix_power_and_tensorinv_of_singular_matrix_are_inverses():
    want = _reference_solve(SINGULAR["rank1"], np.eye(2, dtype=F32))
    _check(lambda a: jnp.linalg.matrix_power(a, -1), [SINGULAR["rank1"]], [want])
    _check(lambda a: jnp.linalg.tensorinv(a, 1), [SINGULAR["rank1"]], [want])


# ---------------------------------------------------------------- determinants

def test_det_and_slogdet_of_singular_matrices():
    for a in SINGULAR.values():
        _check(jnp.linalg.det, [a], [F32(0)])
        _check(jnp.linalg.slogdet, [a], [F32(0), F32(-np.inf)])
    a = np.zeros((3, 3), np.complex64)
    _check(jnp.linalg.slogdet, [a], [np.complex64(0), F32(-np.inf)])


def test_det_of_empty_matrices():
    # The empty product: det of a 0x0 matrix is 1 (sign 1, log 0).
    _check(jnp.linalg.det, [np.zeros((0, 0), F32)], [F32(1)])
    _check(jnp.linalg.slogdet, [np.zeros((0, 0), F32)], [F32(1), F32(0)])
    for n in (2, 3, 4):
        _check(jnp.linalg.det, [np.zeros((0, n, n), F32)], [np.zeros((0,), F32)])
    _check(jnp.linalg.slogdet, [np.zeros((0, 4, 4), F32)], [np.zeros((0,), F32)] * 2)


def _adjugate(a):
    """adj(a)[j, i] = (-1)^(i+j) det(a without row i and column j), in float64."""
    n = len(a)
    adj = np.empty((n, n))
    for i, j in itertools.product(range(n), repeat=2):
        minor = np.delete(np.delete(a.astype(np.float64), i, 0), j, 1)
        adj[j, i] = (-1) ** (i + j) * np.linalg.det(minor)
    return adj


@pytest.mark.parametrize("a", [np.zeros((5, 5), F32),
                               np.array([[1, 2, 3, 4], [2, 4, 6, 8], [0, 1, 0, 1], [1, 0, 0, 2]], F32),
                               np.array([[2, 0, 0, 0], [0, 1, 0, 0], [0, 0, 4, 0], [0, 0, 0, 0]], F32)],
                         ids=["zeros5", "rank3", "zero_last_pivot"])
def test_det_gradient_of_singular_matrix_is_the_cofactor_matrix(a):
    # d det(A) / dA = adj(A)^T: finite (and zero below rank n-1) for singular A.
    want = _adjugate(a).T
    eager, jitted = _both(jax.grad(jnp.linalg.det), a)
    for got in (eager[0], jitted[0]):
        assert got.dtype == F32
        np.testing.assert_allclose(got, want, atol=1e-5)


def test_det_gradient_when_zero_pivot_is_not_last():
    # JAX's rule moves only the last pivot out of the way: a rank n-1 matrix whose zero pivot
    # comes earlier (here the first column is zero, so no row swap can help) is treated as
    # lower rank and its gradient is 0, although adj(A) is not.
    a = np.array([[0, 1, 2, 3], [0, 2, 0, 1], [0, 1, 1, 1], [0, 0, 0, 1]], F32)
    assert np.abs(_adjugate(a)).max() > 0
    _check(jax.grad(jnp.linalg.det), [a], [np.zeros((4, 4), F32)])


def test_det_gradient_small_matrices_use_closed_forms():
    for n in (2, 3):
        a = np.zeros((n, n), F32)
        a[0, 0] = 1
        eager, jitted = _both(jax.grad(jnp.linalg.det), a)
        for got in (eager[0], jitted[0]):
            np.testing.assert_array_equal(got, _adjugate(a).T.astype(F32))


# ---------------------------------------------------------------- failed factorizations

def test_cholesky_of_indefinite_matrix_is_nan_lower_triangle():
    a = np.array([[1, 2], [2, 1]], F32)
    want = np.array([[np.nan, 0], [np.nan, np.nan]], F32)
    _check(jnp.linalg.cholesky, [a], [want])
    _check(jnp.linalg.cholesky, [np.zeros((2, 2), F32)], [want])
    eager, jitted = _both(jnp.linalg.cholesky, a.astype(np.complex64))
    for out in eager + jitted:       # JAX's failure value is NaN in both parts
        low = np.tril(np.ones((2, 2), bool))
        assert np.isnan(out.real[low]).all() and np.isnan(out.imag[low]).all()
        assert (out[~low] == 0).all()


def test_factorizations_of_zero_matrix():
    z = np.zeros((3, 2), F32)
    _check(lambda a: jnp.linalg.svd(a, compute_uv=False), [z], [np.zeros(2, F32)])
    _check(lambda a: jnp.linalg.qr(a)[1], [z], [np.zeros((2, 2), F32)])
    _check(jnp.linalg.eigvalsh, [np.zeros((3, 3), F32)], [np.zeros(3, F32)])
    _check(jnp.linalg.matrix_rank, [np.zeros((3, 3), F32)], [np.int32(0)])
    _check(jnp.linalg.pinv, [z], [np.zeros((2, 3), F32)])


# ---------------------------------------------------------------- empty batches and 0x0 matrices

EMPTY_CASES = {
    "inv": (jnp.linalg.inv, (0, 3, 3), [((0, 3, 3), F32)]),
    "inv0x0": (jnp.linalg.inv, (0, 0), [((0, 0), F32)]),
    "inv_batch0x0": (jnp.linalg.inv, (2, 0, 0), [((2, 0, 0), F32)]),
    "cholesky": (jnp.linalg.cholesky, (0, 3, 3), [((0, 3, 3), F32)]),
    "eigh": (jnp.linalg.eigh, (0, 3, 3), [((0, 3), F32), ((0, 3, 3), F32)]),
    "svd": (jnp.linalg.svd, (0, 3, 2), [((0, 3, 3), F32), ((0, 2), F32), ((0, 2, 2), F32)]),
    "svdvals": (lambda a: jnp.linalg.svd(a, compute_uv=False), (0, 3, 2), [((0, 2), F32)]),
    "qr": (jnp.linalg.qr, (0, 3, 3), [((0, 3, 3), F32), ((0, 3, 3), F32)]),
    "lu": (lax.linalg.lu, (0, 3, 3), [((0, 3, 3), F32), ((0, 3), np.int32), ((0, 3), np.int32)]),
    "pinv": (jnp.linalg.pinv, (0, 3, 2), [((0, 2, 3), F32)]),
    "matrix_rank": (jnp.linalg.matrix_rank, (0, 3, 3), [((0,), np.int32)]),
    "cond": (jnp.linalg.cond, (0, 3, 3), [((0,), F32)]),
    "norm_nuc": (lambda a: jnp.linalg.norm(a, "nuc", axis=(-2, -1)), (0, 3, 3), [((0,), F32)]),
}


@pytest.mark.parametrize("name", EMPTY_CASES)
def test_empty_batches_and_empty_matrices(name):
    f, shape, outs = EMPTY_CASES[name]
    eager, jitted = _both(f, np.zeros(shape, F32))
    assert len(eager) == len(jitted) == len(outs)
    for e, j, (out_shape, dt) in zip(eager, jitted, outs):
        for got in (e, j):
            assert got.shape == out_shape and got.dtype == dt, (got.shape, got.dtype)
        _assert_same(e, j)


def test_solve_with_empty_operands():
    _check(jnp.linalg.solve, [np.zeros((0, 0), F32), np.zeros(0, F32)], [np.zeros(0, F32)])
    _check(jnp.linalg.solve, [np.zeros((0, 3, 3), F32), np.zeros((0, 3, 2), F32)], [np.zeros((0, 3, 2), F32)])
    _check(jnp.linalg.solve, [np.eye(3, dtype=F32), np.zeros((3, 0), F32)], [np.zeros((3, 0), F32)])


def test_lu_of_empty_matrices():
    for shape in [(2, 0), (0, 2), (0, 0)]:
        m, n = shape
        _check(lax.linalg.lu, [np.zeros(shape, F32)],
               [np.zeros(shape, F32), np.zeros(min(m, n), np.int32), np.arange(m, dtype=np.int32)])


# ---------------------------------------------------------------- least squares, norms, cond

def test_lstsq_of_zero_matrix_has_rank_zero():
    b = np.array([1, 2, 2], F32)
    # No singular value counts: the minimum-norm solution is 0, the residual |b|^2.
    _check(jnp.linalg.lstsq, [np.zeros((3, 2), F32), b],
           [np.zeros(2, F32), np.array([9], F32), np.int32(0), np.zeros(2, F32)])


@pytest.mark.parametrize("shape", [(3, 0), (0, 2)])
def test_lstsq_of_empty_matrix(shape):
    m, n = shape
    b = np.full((m, 2), 2, F32)
    _check(jnp.linalg.lstsq, [np.zeros(shape, F32), b],
           [np.zeros((n, 2), F32), np.full(2, 4 * m, F32), np.int32(0), np.zeros(0, F32)])


def test_lstsq_numpy_residuals_for_rank_deficient_matrix():
    x, resid, rank, s = jnp.linalg.lstsq(np.zeros((3, 2), F32), np.ones(3, F32), numpy_resid=True)
    assert np.asarray(resid).shape == (0,) and int(rank) == 0
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(lambda a, b: jnp.linalg.lstsq(a, b, numpy_resid=True))(np.zeros((3, 2), F32), np.ones(3, F32))


@pytest.mark.parametrize("ord,shape", [(2, (0, 3)), (1, (3, 0)), (np.inf, (0, 3)), (np.inf, (0,)),
                                       (3, (0,)), (None, (0, 0)), ("fro", (0, 4))])
def test_norms_of_empty_operands_are_zero(ord, shape):
    # Sums and maxima of nothing (JAX's max norms start from 0).
    _check(lambda a: jnp.linalg.norm(a, ord), [np.zeros(shape, F32)], [F32(0)])


@pytest.mark.parametrize("ord,shape", [(-np.inf, (0,)), (-2, (0, 3)), (-1, (3, 0))])
def test_min_norms_of_empty_operands_raise(ord, shape):
    for f in (lambda a: jnp.linalg.norm(a, ord), jax.jit(lambda a: jnp.linalg.norm(a, ord))):
        with pytest.raises(ValueError):
            f(np.zeros(shape, F32))


def test_cond_of_singular_matrices():
    z = np.zeros((2, 2), F32)
    # p=None/2 is the ratio of extreme singular values: 0/0 for the zero matrix.
    _check(jnp.linalg.cond, [z], [F32(np.nan)])
    # Other p go through the inverse; a NaN there (the input has none) means singular: inf.
    for p in (1, -1, np.inf, "fro"):
        _check(lambda a, p=p: jnp.linalg.cond(a, p), [SINGULAR["rank1"]], [F32(np.inf)])
    _check(lambda a: jnp.linalg.cond(a, 1), [z], [F32(np.inf)])


def test_cond_rejects_empty_and_non_square():
    with pytest.raises(ValueError, match="must not be empty"):
        jnp.linalg.cond(np.zeros((0, 0), F32))
    with pytest.raises(ValueError, match="must be square"):
        jnp.linalg.cond(np.zeros((2, 3), F32), 1)


# ---------------------------------------------------------------- zero-size contractions

def _ones(*shape, dtype=F32):
    return np.ones(shape, dtype)


CONTRACTIONS = {
    "matmul": lambda a, b: a @ b,
    "dot": jnp.dot,
    "einsum": lambda a, b: jnp.einsum("ij,jk->ik", a, b),
    "tensordot": lambda a, b: jnp.tensordot(a, b, 1),
    "dot_general": lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))),
}


@pytest.mark.parametrize("name", CONTRACTIONS)
@pytest.mark.parametrize("m,k,n", list(itertools.product([0, 2], repeat=3)))
@pytest.mark.parametrize("dtype", [F32, np.int32])
def test_matrix_products_with_zero_sizes(name, m, k, n, dtype):
    # An empty contraction sums nothing: zeros of shape (m, n).
    _check(CONTRACTIONS[name], [_ones(m, k, dtype=dtype), _ones(k, n, dtype=dtype)],
           [np.full((m, n), k, dtype)])


@pytest.mark.parametrize("b,k,n", list(itertools.product([0, 2], repeat=3)))
def test_batched_products_with_zero_sizes(b, k, n):
    a, c = _ones(b, 3, k), _ones(b, k, n)
    want = np.full((b, 3, n), k, F32)
    _check(lambda x, y: x @ y, [a, c], [want])
    _check(lambda x, y: jnp.einsum("bij,bjk->bik", x, y), [a, c], [want])
    _check(lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))), [a, c], [want])


def test_vector_products_with_zero_sizes():
    e = _ones(0)
    for f in (jnp.vdot, jnp.inner, jnp.dot, lambda x, y: x @ y, lambda x, y: jnp.einsum("i,i->", x, y)):
        _check(f, [e, e], [F32(0)])
    _check(jnp.outer, [e, _ones(3)], [np.zeros((0, 3), F32)])
    _check(jnp.inner, [_ones(3, 0), _ones(2, 0)], [np.zeros((3, 2), F32)])
    _check(lambda x, y: x @ y, [_ones(2, 0), e], [np.zeros(2, F32)])
    _check(lambda x, y: jnp.tensordot(x, y, 2), [_ones(3, 0, 2), _ones(0, 2, 4)], [np.zeros((3, 4), F32)])
    _check(lambda x, y, z: jnp.linalg.multi_dot([x, y, z]), [_ones(2, 0), _ones(0, 3), _ones(3, 2)],
           [np.zeros((2, 2), F32)])


def test_infinite_times_zero_contraction_is_nan_without_warning():
    a = np.array([[np.inf, 0]], F32)
    b = np.array([[0], [1]], F32)
    with np.errstate(all="raise"):
        out = np.asarray(jnp.matmul(a, b))
    assert np.isnan(out).all()


# ---------------------------------------------------------------- narrow floats

def test_float16_factorizations_compute_in_float32():
    a = np.array([[4, 2], [2, 3]], np.float16)
    want = np.linalg.cholesky(a.astype(F32)).astype(np.float16)
    _check(jnp.linalg.cholesky, [a], [want])

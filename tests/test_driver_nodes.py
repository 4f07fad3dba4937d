"""Node primitives run by the LLVM backend's driver (lowering/driver_nodes.py): sort, top_k,
the cumulative reductions, fft, the linalg factorizations and solves, and random bits.

Every program must go through the LLVM backend (its text is a driver) and give the Numba
backend's results bit for bit (fft: numpy's, as eager evaluation), and eager evaluation's
values (bit for bit where the algorithm is the same)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
import numjax.random as jr
from numjax import lax
from numjax.lowering import compile as numba_backend

# Every check compiles its reference on the Numba backend (seconds per program on a cold
# cache): this module runs in `tox -e slow`.  The default suite reaches the same driver rules
# through test_sorting, test_linalg, test_random and the op table's jit tests.
pytestmark = pytest.mark.slow

DRIVER = "numjax program driver (LLVM backend)"
RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _x64():
    """float64 operands stay float64 (the tests cover both float types)."""
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)


def _leaves(tree):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


def _llvm(f, *args):
    """``jit(f)(*args)`` as numpy leaves, checking the program ran in the LLVM backend."""
    text = jax.jit(f).lower(*args).as_text()
    assert DRIVER in text, text[-2000:]
    return _leaves(jax.jit(f)(*args))


def _numba(f, *args):
    lowered = numba_backend.lower_jaxpr(jax.make_jaxpr(f)(*args))
    assert DRIVER not in lowered.text
    flat = [np.asarray(a) for a in jax.tree_util.tree_leaves(args)]
    return [np.asarray(o) for o in numba_backend.Executable(lowered).call_arrays(flat)]


def _eager(f, *args):
    with jax.disable_jit(), np.errstate(all="ignore"):
        return _leaves(f(*args))


def _same_bits(got, want, nan_bits=True):
    """Bitwise equal; ``nan_bits=False``: NaNs anywhere both have one, whatever their sign and
    payload (which IEEE leaves open for arithmetic on NaNs, and LLVM may commute operands)."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        if not nan_bits and g.dtype.kind == "f":
            np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
            g, w = np.where(np.isnan(g), 0, g), np.where(np.isnan(w), 0, w)
        assert g.tobytes() == w.tobytes(), (g, w)


def _close(got, want, tol):
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def check(f, *args, eager="bits", tol=1e-5, nan_bits=True):
    """LLVM backend == Numba backend bitwise; == eager bitwise (``eager="bits"``), by value
    (``"values"``: -0.0 == 0.0, NaN == NaN), within ``tol`` (``"close"``) or not at all
    (``"none"``: factorizations whose signs/order LAPACK and numpy choose differently)."""
    got = _llvm(f, *args)
    _same_bits(got, _numba(f, *args), nan_bits)
    ref = _eager(f, *args)
    if eager == "bits":
        _same_bits(got, ref, nan_bits)
    elif eager == "values":
        for g, w in zip(got, ref):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)
    elif eager == "close":
        _close(got, ref, tol)
    return got


# ---------------------------------------------------------------- data

def _neg_nan(dtype):
    return np.copysign(np.array(np.nan, dtype), np.array(-1, dtype))


def _data(dtype, shape):
    """Values with ties, and for floats NaNs (of both signs), infinities and signed zeros."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype == np.bool_:
        return RNG.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -5
        return RNG.integers(lo, 5, n).astype(dtype).reshape(shape)
    specials = np.array([np.nan, _neg_nan(dtype), -0.0, 0.0, np.inf, -np.inf, 1.0, 1.0, -2.0], dtype)
    vals = np.round(RNG.standard_normal(n) * 3, 1).astype(dtype)   # rounding makes ties
    k = min(n, len(specials))
    vals[RNG.choice(n, k, replace=False)] = specials[:k]
    return vals.reshape(shape)


SORT_DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_]
SHAPES_AXES = [((1,), 0), ((12,), 0), ((5, 9), 0), ((5, 9), 1), ((3, 4, 6), 1), ((3, 4, 6), 2), ((4, 0), 1)]


# ---------------------------------------------------------------- sort, top_k

@pytest.mark.parametrize("dtype", SORT_DTYPES)
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
def test_sort(dtype, shape, axis):
    x = _data(dtype, shape)
    check(lambda v: jnp.sort(v, axis=axis), x)
    check(lambda v: jnp.argsort(v, axis=axis, stable=True), x)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_sort_several_operands(dtype):
    k1 = _data(dtype, (4, 10))
    k2 = _data(np.float32, (4, 10))
    vals = np.arange(40, dtype=np.int32).reshape(4, 10)
    for num_keys in (1, 2):
        check(lambda a, b, c: lax.sort((a, b, c), dimension=1, num_keys=num_keys), k1, k2, vals)
        check(lambda a, b, c: lax.sort((a, b, c), dimension=0, num_keys=num_keys), k1, k2, vals)
    check(lambda a, c: lax.sort_key_val(a, c), k1, vals)


def test_sort_large_and_signed_zeros():
    x = RNG.standard_normal(100_000).astype(np.float32)
    x[::7] = 0.0
    x[::11] = -0.0
    x[::13] = np.nan
    out, = check(jnp.sort, x)
    zeros = out[(out == 0)]
    # Stable: the zeros keep their input order of signs.
    np.testing.assert_array_equal(np.signbit(zeros), np.signbit(x[x == 0]))


@pytest.mark.parametrize("dtype", SORT_DTYPES)
@pytest.mark.parametrize("k", [0, 1, 4, 9])
def test_top_k(dtype, k):
    x = _data(dtype, (3, 9))
    check(lambda v: lax.top_k(v, k), x)


def test_top_k_axis_and_order():
    x = _data(np.float32, (7, 3, 4))
    check(lambda v: lax.top_k(v, 3, axis=0), x)
    # The raw IEEE order: NaN largest, -NaN smallest, -0.0 below 0.0, ties lowest index first.
    v = np.array([0.0, -0.0, 1.0, np.nan, _neg_nan(np.float32), 1.0, -np.inf], np.float32)
    vals, idx = check(lambda a: lax.top_k(a, 7), v)
    np.testing.assert_array_equal(idx, [3, 2, 5, 0, 1, 6, 4])


# ---------------------------------------------------------------- cumulative reductions

CUMULATIVE = {"cumsum": lax.cumsum, "cumprod": lax.cumprod, "cummax": lax.cummax, "cummin": lax.cummin}


@pytest.mark.parametrize("name", sorted(CUMULATIVE))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("shape,axis", [((13,), 0), ((4, 6), 0), ((2, 3, 5), 1), ((2, 3, 5), 2), ((3, 0), 0)])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative(name, dtype, shape, axis, reverse):
    x = _data(dtype, shape)
    prim = CUMULATIVE[name]
    # numpy's maximum keeps the older of two equal values (-0.0 vs 0.0): values, not bits.
    check(lambda v: prim(v, axis=axis, reverse=reverse), x, eager="values",
          nan_bits=name in ("cummax", "cummin"))


@pytest.mark.parametrize("name", sorted(CUMULATIVE))
def test_cumulative_bool(name):
    x = _data(np.bool_, (3, 7))
    check(lambda v: CUMULATIVE[name](v, axis=1), x)
    check(lambda v: CUMULATIVE[name](v, axis=0, reverse=True), x)


def test_cumulative_wraps_and_propagates_nan():
    x = np.full(40, 7, np.int32)
    check(lambda v: lax.cumprod(v), x)
    y = np.array([1.0, np.nan, 3.0, _neg_nan(np.float32), -1.0, 5.0], np.float32)
    for name, prim in CUMULATIVE.items():
        out, = check(lambda v: prim(v, axis=0), y, eager="values", nan_bits=name in ("cummax", "cummin"))
        assert np.isnan(out[1:]).all()


def test_cumulative_large_parallel_chunks():
    x = RNG.standard_normal((600, 700)).astype(np.float32)   # above the parallel threshold
    check(lambda v: jnp.cumsum(v, axis=1), x)
    check(lambda v: lax.cummax(v, axis=0, reverse=True), x, eager="values")


# ---------------------------------------------------------------- fft
# The backend does not take complex values yet (cpu_llvm._check_types): these check the rule
# by letting complex values through in programs whose complex values only meet driver nodes
# (numpy code), never region kernels.

@pytest.fixture
def allow_complex(monkeypatch):
    from numjax.lowering import cpu_llvm
    real_check = cpu_llvm._check_types

    def check_types(jaxpr):
        from numjax.jaxpr import Jaxpr
        is_complex = lambda v: np.dtype(v.aval.dtype).kind == "c"   # noqa: E731
        real = [e for e in jaxpr.eqns if not any(map(is_complex, list(e.invars) + list(e.outvars)))]
        from numjax.lowering.fusion import is_fusible
        assert not any(is_fusible(e) for e in jaxpr.eqns if e not in real)   # numpy-run nodes only
        real_check(Jaxpr([], [v for v in jaxpr.invars if not is_complex(v)], [], real))
    monkeypatch.setattr(cpu_llvm, "_check_types", check_types)


@pytest.mark.parametrize("shape", [(8,), (5,), (3, 16), (2, 4, 6)])
def test_fft(allow_complex, shape):
    z = (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)
    r = RNG.standard_normal(shape).astype(np.float32)
    n = shape[-1]
    for f, arg in [(jnp.fft.fft, z), (jnp.fft.ifft, z), (jnp.fft.fftn, z), (jnp.fft.rfft, r),
                   (lambda a: jnp.fft.irfft(a, n=n), z), (jnp.fft.rfft2 if len(shape) > 1 else jnp.fft.rfft, r),
                   (lambda a: jnp.fft.fft(a.astype(np.complex128)), z.astype(np.complex128))]:
        got = _llvm(f, arg)
        _same_bits(got, _eager(f, arg))
        _close(got, _numba(f, arg), 1e-4)      # rocket-fft: the same transforms, other roundings


# ---------------------------------------------------------------- linalg

def _spd(batch, n, dtype):
    a = RNG.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


LINALG_DTYPES = [np.float32, np.float64]


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
@pytest.mark.parametrize("batch,n", [((), 1), ((), 4), ((3,), 5), ((2, 2), 3), ((), 70)])
def test_cholesky(dtype, batch, n):
    check(jnp.linalg.cholesky, _spd(batch, n, dtype), eager="close", tol=1e-3)


def test_cholesky_failure_gives_nans():
    a = _spd((3,), 4, np.float32)
    a[1] = -np.eye(4)                  # not positive definite
    a[2, 0, 0] = np.nan
    out, = check(lax.linalg.cholesky, a, eager="close", tol=1e-4)
    low = np.tril(np.ones((4, 4), bool))              # lax.linalg.cholesky zeroes the rest
    assert np.isnan(out[1][low]).all() and np.isnan(out[2][low]).all() and np.isfinite(out[0]).all()


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (5, 3), (3, 5), (2, 3, 6, 6), (40, 40)])
def test_lu(dtype, shape):
    a = RNG.standard_normal(shape).astype(dtype)
    a[..., 1:, 0] = np.round(a[..., 1:, 0])    # pivot ties
    check(lax.linalg.lu, a, eager="close", tol=1e-3)
    if shape[-1] == shape[-2]:
        check(jnp.linalg.det, a, eager="close", tol=1e-3)
        check(lambda m: jnp.linalg.solve(m, jnp.ones(m.shape[:-1] + (2,))), a, eager="close", tol=1e-2)


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 2), (80, 80)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr(dtype, shape, mode):
    a = RNG.standard_normal(shape).astype(dtype)
    check(lambda m: jnp.linalg.qr(m, mode=mode), a, eager="close", tol=1e-3)


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 2), (60, 40)])
def test_svd(dtype, shape):
    a = RNG.standard_normal(shape).astype(dtype)
    check(lambda m: jnp.linalg.svd(m, compute_uv=False), a, eager="close", tol=1e-3)
    for full in (False, True):
        u, s, vt = check(lambda m: jnp.linalg.svd(m, full_matrices=full), a, eager="none")
        k = min(shape[-2:])
        rebuilt = (u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :]
        np.testing.assert_allclose(rebuilt, a, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5), (50, 50)])
@pytest.mark.parametrize("lower", [True, False])
def test_eigh(dtype, shape, lower):
    a = RNG.standard_normal(shape).astype(dtype)
    a = a + np.swapaxes(a, -1, -2)
    eig = lambda m: lax.linalg.eigh(m, lower=lower, symmetrize_input=False)   # noqa: E731
    check(lambda m: eig(m)[1], a, eager="close", tol=1e-3)
    v, w = check(eig, a, eager="none")
    np.testing.assert_allclose(a @ v, v * w[..., None, :], rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
@pytest.mark.parametrize("dtype", LINALG_DTYPES)
def test_triangular_solve(left_side, lower, transpose_a, unit_diagonal, dtype):
    a = RNG.standard_normal((2, 5, 5)).astype(dtype) + 4 * np.eye(5, dtype=dtype)
    b = RNG.standard_normal((2, 5, 3) if left_side else (2, 3, 5)).astype(dtype)
    b[0, 1] = 0.0                      # zero multipliers are skipped
    check(lambda m, y: lax.linalg.triangular_solve(m, y, left_side=left_side, lower=lower,
                                                   transpose_a=transpose_a, unit_diagonal=unit_diagonal),
          a, b, eager="close", tol=1e-3)


def test_linalg_vmapped_and_grads():
    a = RNG.standard_normal((3, 4, 4)).astype(np.float32)
    spd = _spd((3,), 4, np.float32)
    check(jax.vmap(jnp.linalg.cholesky), spd, eager="close", tol=1e-4)
    check(jax.vmap(lambda m: jnp.linalg.qr(m)[0]), a, eager="close", tol=1e-3)
    check(jax.vmap(jnp.linalg.inv), a + 4 * np.eye(4, dtype=np.float32), eager="close", tol=1e-3)
    chol = lambda m: jnp.sum(jnp.linalg.cholesky(m @ m.T + 4 * jnp.eye(4)) ** 2)  # noqa: E731
    check(jax.grad(chol), a[0], eager="close", tol=1e-3)
    check(jax.vmap(jax.grad(chol)), a, eager="close", tol=1e-3)
    check(jax.grad(lambda m: jnp.linalg.eigh(m + m.T)[0].sum()), a[0], eager="close", tol=1e-3)
    check(jax.grad(lambda m: jnp.linalg.svd(m, compute_uv=False).sum()), a[0], eager="close", tol=1e-3)
    check(jax.grad(lambda m: jnp.linalg.slogdet(m + 4 * jnp.eye(4))[1]), a[0], eager="close", tol=1e-3)


# ---------------------------------------------------------------- grads through sort/cumulative

def test_sort_and_cumulative_grads():
    x = _data(np.float32, (9,))
    x = np.where(np.isfinite(x), x, 0.5).astype(np.float32)
    w = np.arange(9, dtype=np.float32)
    check(jax.grad(lambda v: jnp.sum(jnp.sort(v) * w)), x)
    check(jax.grad(lambda v: jnp.sum(lax.top_k(v, 3)[0] * w[:3])), x)
    check(jax.grad(lambda v: jnp.sum(jnp.cumsum(v) ** 2)), x, eager="close", tol=1e-5)
    check(jax.grad(lambda v: jnp.sum(jnp.cumprod(v))), x, eager="close", tol=1e-4)
    check(jax.grad(lambda v: jnp.sum(lax.cummax(v, axis=0))), x, eager="close", tol=1e-5)
    check(jax.vmap(jax.grad(lambda v: jnp.sum(jnp.sort(v) * w))), np.stack([x, x[::-1]]))


# ---------------------------------------------------------------- random bits

@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 5), (600, 500)])
def test_random_bits(shape):
    key = jr.PRNGKey(42)
    check(lambda k: jr.bits(k, shape), key)
    check(lambda k: jr.uniform(k, shape), key, eager="close", tol=1e-6)
    check(lambda k: jr.split(k, 3), key)
    check(lambda k: jr.fold_in(k, 7), key)


def test_random_vmapped_keys():
    keys = jr.split(jr.PRNGKey(0), 4)
    check(jax.vmap(lambda k: jr.split(k)), keys)
    check(jax.vmap(lambda k: jr.normal(k, (5,))), keys, eager="close", tol=1e-5)
    check(lambda ks: jax.vmap(lambda k: jr.bits(k, (2, 3)))(ks), keys)


# ---------------------------------------------------------------- no Numba

def test_warm_programs_do_not_import_numba(tmp_path):
    """A process with a warm cache runs these programs without importing Numba (nor does a
    cold one: the driver's kernels are compiled by llvmlite alone)."""
    script = textwrap.dedent("""
        import sys
        import numpy as np
        import numjax as jax, numjax.numpy as jnp, numjax.random as jr
        from numjax import lax
        assert "numba" not in sys.modules
        x = jnp.asarray(np.random.rand(100).astype(np.float32))
        a = jnp.asarray(np.eye(4, dtype=np.float32) * 2)
        for f, args in [(jnp.sort, (x,)), (lambda v: lax.top_k(v, 3), (x,)), (jnp.cumsum, (x,)),
                        (lambda k: jr.split(k), (jr.PRNGKey(0),)), (lambda k: jr.normal(k, (3,)), (jr.PRNGKey(0),)),
                        (jnp.linalg.cholesky, (a,)), (lax.linalg.lu, (a,)), (jnp.linalg.qr, (a,))]:
            jax.block_until_ready(jax.jit(f)(*args))
        print("numba" in sys.modules)
        """)
    env = dict(os.environ, NUMJAX_CACHE_DIR=str(tmp_path))
    for _ in range(2):     # cold, then warm
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "False"

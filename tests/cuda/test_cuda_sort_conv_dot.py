"""sort / top_k (cuda/sorting.py), conv_general_dilated (cuda/conv.py) and dot_general's tiled
kernel (cuda/blas.py) on the CUDA backend, compared with the CPU backend.  Inputs are tiny (the
simulator runs each GPU thread as a Python thread); the simulator's tile is 8, so the odd
sizes here cross several tiles.  jax_enable_x64 is on throughout (the ``x64`` fixture), so
the float64 and 64-bit integer cases really are 64-bit."""
import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax import lax

from helpers_cuda import assert_same, cuda_executable, on_cpu

pytestmark = pytest.mark.usefixtures("x64")
rng = np.random.default_rng(12)


def _run(fn, *args):
    exe, got = cuda_executable(fn, *args)
    assert exe.backend == "cuda", exe.source
    return exe, got, on_cpu(fn, *args)


def _assert_bits(got, want):
    """Equal dtypes, shapes and bytes: -0.0 against 0.0 and NaN payloads count."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        assert g.tobytes() == w.tobytes(), (g, w)


_neg_nan = np.frombuffer(np.uint32(0xFFC00000).tobytes(), np.float32)[0]
SPECIALS = np.array([[3, np.nan, -0.0, 1, 0.0, _neg_nan, 2, -1, 0.0, np.inf, -np.inf, 1, -0.0],
                     [5, 4, 3, 2, 1, 0, -1, -2, np.nan, 0, -0.0, 1, 7]], np.float32)


# ---------------------------------------------------------------- sort and top_k

@pytest.mark.parametrize("axis", [0, 1])
def test_sort_floats_nan_and_signed_zero_order(axis):
    _, got, want = _run(lambda a: (jnp.sort(a, axis=axis), jnp.argsort(a, axis=axis)), SPECIALS)
    _assert_bits(got, want)
    if axis == 1:   # NaNs last, and equal keys (0.0 and -0.0) in their input order.
        assert np.isnan(np.asarray(got[0])[0, -2:]).all()
        assert np.signbit(np.asarray(got[0])[0, 2:6]).tolist() == [True, False, False, True]


def test_sort_float64_3d_and_descending_by_negation():
    x = np.round(rng.standard_normal((2, 9, 3)), 1)
    _, got, want = _run(lambda a: (jnp.sort(a, axis=1), jnp.argsort(-a, axis=1, stable=True)), x)
    _assert_bits(got, want)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8, np.uint32, np.int64, np.bool_])
def test_sort_integers_stable(dtype):
    info = np.iinfo(dtype) if dtype != np.bool_ else None
    x = (rng.integers(0, 2, (3, 11)) if info is None else rng.integers(info.min, info.max, (3, 11),
                                                                     endpoint=True)).astype(dtype)
    x[0, :4] = x[0, 4:8]           # ties
    _, got, want = _run(lambda a: (jnp.sort(a), jnp.argsort(a, stable=True)), x)
    _assert_bits(got, want)


def test_sort_uint64_keys_above_int64():
    x = rng.integers(0, 2 ** 64, (10,), dtype=np.uint64)
    x[3] = 2 ** 63
    _, got, want = _run(jnp.sort, x)
    _assert_bits(got, want)


def test_sort_multiple_operands_by_two_keys():
    k1 = rng.integers(0, 3, (2, 12)).astype(np.int32)
    k2 = np.where(rng.random((2, 12)) < 0.2, np.nan, np.round(rng.standard_normal((2, 12)), 0)).astype(np.float32)
    vals = rng.standard_normal((2, 12)).astype(np.float64)
    flags = rng.random((2, 12)) < 0.5
    _, got, want = _run(lambda a, b, c, d: lax.sort((a, b, c, d), dimension=1, num_keys=2), k1, k2, vals, flags)
    _assert_bits(got, want)
    _, got, want = _run(lambda a, b: lax.sort_key_val(a, b, dimension=0), k1.T, vals.T)
    _assert_bits(got, want)


def test_top_k_float_specials_and_ties():
    fn = lambda a: lax.top_k(a, 6)  # noqa: E731
    _, got, want = _run(fn, SPECIALS)
    _assert_bits(got, want)
    assert np.asarray(got[1]).dtype == np.int32
    # NaN is largest; -NaN smallest (never among the top here); 0.0 above -0.0.
    assert np.isnan(np.asarray(got[0])[0, 0]) and np.asarray(got[1])[0, 0] == 1


def test_top_k_integers_ties_lower_index_first_and_axis():
    x = rng.integers(-2, 3, (4, 10)).astype(np.int32)
    _, got, want = _run(lambda a: lax.top_k(a, 4), x)
    _assert_bits(got, want)
    _, got, want = _run(lambda a: lax.top_k(a, 3, axis=0), x)
    _assert_bits(got, want)


def test_sort_inside_a_fused_program_with_gradient():
    x = rng.standard_normal(9).astype(np.float32)
    fn = numjax.grad(lambda a: (jnp.sort(a * 2.0)[:4] ** 2).sum())
    _, got, want = _run(fn, x)
    assert_same(got, want)


# ---------------------------------------------------------------- convolutions

def _f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


CONVS = {
    "nchw_strides_padding_dilations": (
        lambda a, b: lax.conv_general_dilated(a, b, (1, 2), ((1, 0), (2, 1)), (1, 1), (2, 1)),
        (_f32(2, 2, 5, 6), _f32(3, 2, 2, 3))),
    "nhwc_same_lhs_dilation_feature_groups": (
        lambda a, b: lax.conv_general_dilated(a, b, (2, 1), "SAME", (2, 1), (1, 1),
                                              ("NHWC", "HWIO", "NHWC"), feature_group_count=2),
        (_f32(1, 4, 3, 4), _f32(2, 2, 2, 4))),
    "batch_groups_1d": (
        lambda a, b: lax.conv_general_dilated(a, b, (1,), ((0, 0),), batch_group_count=2),
        (_f32(4, 3, 5), _f32(4, 3, 2))),
    "mixed_layouts_negative_pad_int8_to_int32": (
        lambda a, b: lax.conv_general_dilated(a, b, (1,), ((-1, 2),), dimension_numbers=("NWC", "WIO", "NCW"),
                                              preferred_element_type=np.int32),
        (rng.integers(-100, 100, (2, 5, 3)).astype(np.int8), rng.integers(-100, 100, (2, 3, 2)).astype(np.int8))),
    "float64_depthwise": (
        lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "VALID", feature_group_count=3),
        (rng.standard_normal((1, 3, 4, 4)), rng.standard_normal((6, 1, 2, 2)))),
}


@pytest.mark.parametrize("name", sorted(CONVS))
def test_conv_matches_cpu(name):
    fn, args = CONVS[name]
    _, got, want = _run(fn, *args)
    assert_same(got, want, 2e-5, 2e-5)


def test_grad_of_a_tiny_conv_net():
    def loss(w, x):
        h = jnp.tanh(lax.conv_general_dilated(x, w[0], (1, 1), "SAME"))
        h = lax.conv_general_dilated(h, w[1], (2, 2), "VALID", rhs_dilation=(1, 1))
        return (h ** 2).sum()
    w, x = (_f32(3, 2, 3, 3), _f32(2, 3, 2, 2)), _f32(2, 2, 5, 5)
    fn = numjax.grad(loss, argnums=(0, 1))
    _, got, want = _run(fn, w, x)
    assert_same(got, want, 1e-4, 1e-5)


# ---------------------------------------------------------------- dot_general

DOTS = {
    "matmul_odd_sizes": (lambda a, b: a @ b, (_f32(13, 17), _f32(17, 9))),
    "batched_bmk_bkn": (jnp.matmul, (_f32(3, 9, 5), _f32(3, 5, 10))),
    "einsum_contract_last_both": (lambda a, b: jnp.einsum("bij,bkj->bik", a, b), (_f32(2, 3, 10), _f32(2, 4, 10))),
    "batch_dims_trailing": (lambda a, b: jnp.einsum("ijb,jkb->bik", a, b), (_f32(3, 4, 2), _f32(4, 9, 2))),
    "two_contractions_permuted": (
        lambda a, b: lax.dot_general(a, b, (((0, 2), (2, 0)), ((1,), (1,)))),
        (rng.standard_normal((3, 2, 4)), rng.standard_normal((4, 2, 3, 5)))),
    "matrix_vector": (jnp.dot, (_f32(11, 6), _f32(6))),
    "vector_vector": (jnp.dot, (_f32(19), _f32(19))),
    "outer": (lambda a, b: jnp.einsum("i,j->ij", a, b), (_f32(5), _f32(10))),
    "int32_exact": (jnp.matmul, (rng.integers(-1000, 1000, (10, 9)).astype(np.int32),
                                 rng.integers(-1000, 1000, (9, 3)).astype(np.int32))),
    "int8_preferred_int32": (
        lambda a, b: lax.dot(a, b, preferred_element_type=np.int32),
        (rng.integers(-128, 127, (5, 20)).astype(np.int8), rng.integers(-128, 127, (20, 3)).astype(np.int8))),
    "uint8_wraps": (jnp.matmul, (rng.integers(0, 255, (4, 9)).astype(np.uint8),
                                 rng.integers(0, 255, (9, 2)).astype(np.uint8))),
    "bool": (lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))),
             (rng.random((3, 4)) < 0.3, rng.random((4, 5)) < 0.3)),
    "float32_to_float64": (lambda a, b: lax.dot(a, b, preferred_element_type=np.float64), (_f32(3, 4), _f32(4, 2))),
    "empty_contraction": (jnp.matmul, (_f32(3, 0), _f32(0, 4))),
}


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("name", sorted(DOTS))
def test_dot_matches_cpu(name):
    fn, args = DOTS[name]
    exe, got, want = _run(fn, *args)
    assert_same(got, want, 1e-5, 1e-5)
    if np.prod(np.asarray(got[0]).shape):
        assert "cuda.shared.array" in exe.source      # the tiled kernel, not a naive loop


def test_grad_of_matmul_chain():
    x = _f32(7, 6)
    fn = numjax.grad(lambda w: (jnp.tanh(x @ w[0]) @ w[1]).sum())
    _, got, want = _run(fn, (_f32(6, 5), _f32(5)))
    assert_same(got, want, 1e-5, 1e-5)


# ---------------------------------------------------------------- cuBLAS argument layout

class _CublasOnTheHost:
    """The few nvmath.bindings.cublas calls cuda/blas.py makes, computed with numpy on host
    memory reached through the same raw pointers: column-major gemm (cuBLAS's semantics,
    leading dimensions and batch strides included), with its argument checks."""

    class Operation:
        N, T = 0, 1

    def __init__(self):
        self.calls = []

    def set_stream(self, handle, stream):
        self.calls.append(("set_stream", stream))

    @staticmethod
    def _matrix(ptr, dtype, rows, cols, ld, offset):
        import ctypes
        item = np.dtype(dtype).itemsize
        extent = offset + (cols - 1) * ld + rows
        raw = (ctypes.c_byte * (extent * item)).from_address(ptr)
        flat = np.frombuffer(raw, dtype)
        return np.lib.stride_tricks.as_strided(flat[offset:], (rows, cols), (item, ld * item))

    def _gemm(self, dtype, handle, transa, transb, m, n, k, alpha, a, lda, sa, b, ldb, sb,
              beta, c, ldc, sc, batch):
        assert lda >= max(1, k if transa else m) and ldb >= max(1, n if transb else k)
        assert ldc >= max(1, m)
        alpha_v = self._matrix(alpha, dtype, 1, 1, 1, 0)[0, 0]
        assert alpha_v == 1 and self._matrix(beta, dtype, 1, 1, 1, 0)[0, 0] == 0
        for i in range(batch):
            am = self._matrix(a, dtype, *((k, m) if transa else (m, k)), lda, i * sa)
            bm = self._matrix(b, dtype, *((n, k) if transb else (k, n)), ldb, i * sb)
            cm = self._matrix(c, dtype, m, n, ldc, i * sc)
            cm[...] = (am.T if transa else am) @ (bm.T if transb else bm)
        self.calls.append(("gemm", np.dtype(dtype).name, batch))

    def sgemm(self, h, ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc):
        self._gemm(np.float32, h, ta, tb, m, n, k, al, a, lda, 0, b, ldb, 0, be, c, ldc, 0, 1)

    def dgemm(self, h, ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc):
        self._gemm(np.float64, h, ta, tb, m, n, k, al, a, lda, 0, b, ldb, 0, be, c, ldc, 0, 1)

    def sgemm_strided_batched(self, *args):
        self._gemm(np.float32, *args)

    def dgemm_strided_batched(self, *args):
        self._gemm(np.float64, *args)


GEMM_LAYOUTS = [
    ((4, 6), (6, 5), (((1,), (0,)), ((), ()))),             # N, N
    ((6, 4), (6, 5), (((0,), (0,)), ((), ()))),             # lhs transposed
    ((4, 6), (5, 6), (((1,), (1,)), ((), ()))),             # rhs transposed
    ((6, 4), (5, 6), (((0,), (1,)), ((), ()))),             # both
    ((3, 4, 6), (3, 6, 5), (((2,), (1,)), ((0,), (0,)))),   # strided batched
    ((3, 6, 4), (3, 5, 6), (((1,), (2,)), ((0,), (0,)))),
    ((4, 3, 6), (6, 3, 5), (((2,), (0,)), ((1,), (1,)))),   # batch in the middle
    ((2, 3, 4, 6), (2, 3, 6, 5), (((3,), (2,)), ((0, 1), (0, 1)))),   # two batch dims merge
    ((1, 6), (6, 1), (((1,), (0,)), ((), ()))),
    ((4, 2, 3), (2, 3, 5), (((1, 2), (0, 1)), ((), ()))),   # two contracting dims merge
    ((5, 6), (6,), (((1,), (0,)), ((), ()))),               # matrix-vector
    ((6,), (6, 5), (((0,), (0,)), ((), ()))),               # vector-matrix
    ((6,), (6,), (((0,), (0,)), ((), ()))),                 # vector-vector
    ((5, 2), (3, 2), (((), ()), ((1,), (1,)))),             # batched outer products, K = 1
]


@pytest.mark.parametrize("case", GEMM_LAYOUTS, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cublas_call_computes_the_dot_general(case, dtype, monkeypatch):
    """The cuBLAS path's arguments (``gemm_layout``, ``_gemm_call``) on host memory: no GPU
    here, so cuBLAS is emulated from its documented column-major semantics."""
    from numjax.cuda import blas
    monkeypatch.setattr(blas, "_pointer", lambda array: array.__array_interface__["data"][0])
    lshape, rshape, dn = case
    lhs, rhs = rng.standard_normal(lshape).astype(dtype), rng.standard_normal(rshape).astype(dtype)
    closed = numjax.make_jaxpr(lambda a, b: lax.dot_general(a, b, dn))(lhs, rhs)
    (eqn,) = closed.jaxpr.eqns
    g = blas.gemm_layout(eqn)
    assert g is not None
    want = np.asarray(on_cpu(lambda a, b: lax.dot_general(a, b, dn), lhs, rhs)[0])
    out = np.full(want.size, np.nan, dtype)
    fake = _CublasOnTheHost()
    blas._gemm_call(fake, 1, g, dtype, 0, rhs.reshape(-1), lhs.reshape(-1), out)
    assert fake.calls == [("set_stream", 0), ("gemm", np.dtype(dtype).name, g.batch)]
    np.testing.assert_allclose(out.reshape(want.shape), want, rtol=1e-5, atol=1e-5)


def test_gemm_layout_declines_what_cublas_cannot_read_in_place():
    from numjax.cuda import blas

    def layout(lhs, rhs, dn):
        closed = numjax.make_jaxpr(lambda a, b: lax.dot_general(a, b, dn))(lhs, rhs)
        return blas.gemm_layout(closed.jaxpr.eqns[0])
    # free dims split around the contraction: no single stride
    assert layout(_f32(2, 3, 4), _f32(3, 5), (((1,), (0,)), ((), ()))) is None
    # integer operands
    assert layout(np.ones((2, 3), np.int32), np.ones((3, 2), np.int32), (((1,), (0,)), ((), ()))) is None
    # mixed precision
    assert layout(_f32(2, 3), np.ones((3, 2)), (((1,), (0,)), ((), ()))) is None

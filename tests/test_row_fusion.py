"""Row fusion (lowering/row_fusion.py, row_codegen.py): a row reduction and the elementwise
work that reads its result run as one kernel making several passes over each row."""
import numpy as np
import pytest

import numjax
import numjax.numpy as jnp


def _layer_norm(x):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5) * 1.5 + 0.25


def _np_softmax(x, axis):
    m = np.max(x, axis, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis, keepdims=True)


def _np_logsumexp(x, axis):
    m = np.max(x, axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    return (np.log(np.exp(x - m).sum(axis, keepdims=True)) + m).squeeze(axis)


def _np_layer_norm(x):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * 1.5 + 0.25


ROW_OPS = {
    "softmax": (lambda x: numjax.nn.softmax(x, axis=-1), lambda x: _np_softmax(x, -1)),
    "log_softmax": (lambda x: numjax.nn.log_softmax(x, axis=-1),
                    lambda x: x - np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True))
                    - x.max(-1, keepdims=True)),
    "layer_norm": (_layer_norm, _np_layer_norm),
    "logsumexp": (lambda x: numjax.nn.logsumexp(x, axis=-1), lambda x: _np_logsumexp(x, -1)),
    "argmax": (lambda x: jnp.argmax(x, axis=-1), lambda x: np.argmax(x, axis=-1)),
    "var": (lambda x: jnp.var(x, axis=-1), lambda x: np.var(x, axis=-1)),
    "max": (lambda x: jnp.max(x, axis=-1), lambda x: np.max(x, axis=-1)),
}
LEADING = {
    "softmax0": (lambda x: numjax.nn.softmax(x, axis=0), lambda x: _np_softmax(x, 0)),
    "logsumexp0": (lambda x: numjax.nn.logsumexp(x, axis=0), lambda x: _np_logsumexp(x, 0)),
    "argmax0": (lambda x: jnp.argmax(x, axis=0), lambda x: np.argmax(x, axis=0)),
    "var0": (lambda x: jnp.var(x, axis=0), lambda x: np.var(x, axis=0)),
    "max0": (lambda x: jnp.max(x, axis=0), lambda x: np.max(x, axis=0)),
}
SHAPES = [(37, 29), (1, 53), (23, 1), (5, 8), (3, 4, 67)]


def _check(ours, ref, dtype):
    ours = np.asarray(ours)
    if ref.dtype.kind in "iu":
        np.testing.assert_array_equal(ours, ref)
        return
    assert ours.dtype == dtype
    tol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(ours, ref, rtol=tol, atol=tol)


def _data(shape, dtype, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(dtype)


@pytest.mark.parametrize("name", sorted(ROW_OPS))
@pytest.mark.parametrize("shape", SHAPES)
def test_row_ops_float32(name, shape):
    ours, ref = ROW_OPS[name]
    x = _data(shape, np.float32)
    _check(numjax.jit(ours)(x), ref(x.astype(np.float64)).astype(ref(x).dtype), np.float32)


@pytest.mark.parametrize("name", sorted(ROW_OPS))
def test_row_ops_float64(name, x64):
    ours, ref = ROW_OPS[name]
    x = _data((19, 43), np.float64)
    _check(numjax.jit(ours)(x), ref(x), np.float64)


@pytest.mark.parametrize("name", sorted(LEADING))
@pytest.mark.parametrize("shape", [(37, 29), (1, 53), (23, 1)])
def test_leading_axis(name, shape):
    ours, ref = LEADING[name]
    x = _data(shape, np.float32, seed=1)
    _check(numjax.jit(ours)(x), ref(x.astype(np.float64)).astype(ref(x).dtype), np.float32)


@pytest.mark.parametrize("name", sorted(ROW_OPS))
def test_jit_matches_eager(name):
    ours, _ = ROW_OPS[name]
    x = _data((17, 45), np.float32, seed=2)
    np.testing.assert_allclose(np.asarray(numjax.jit(ours)(x)), np.asarray(ours(x)), rtol=1e-6, atol=1e-6)


def _special_rows(dtype):
    x = _data((6, 21), dtype, seed=3)
    x[0, 5] = np.nan
    x[1, :] = -np.inf
    x[2, 7] = np.inf
    x[3, 3] = np.nan
    x[3, 9] = np.inf
    x[4, :] = 0.0
    x[4, ::2] = -0.0
    x[5, :] = -0.0
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_inf_rows(dtype, x64):
    x = _special_rows(dtype)
    with np.errstate(all="ignore"):
        for name in ("softmax", "log_softmax", "logsumexp", "var", "max", "argmax"):
            ours, ref = ROW_OPS[name]
            got, want = np.asarray(numjax.jit(ours)(x)), ref(x)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
            finite = np.isfinite(want)
            np.testing.assert_allclose(got[finite], want[finite], rtol=2e-5, atol=2e-5, err_msg=name)
            np.testing.assert_array_equal(np.isinf(got), np.isinf(want), err_msg=name)


def test_max_of_signed_zeros():
    # XLA's max: of +0 and -0 the answer is +0 whichever comes first; -0 only when all are.
    x = np.zeros((3, 70), np.float32)
    x[0, ::3] = -0.0
    x[1, :] = -0.0
    x[2, :] = -0.0
    x[2, 69] = 0.0
    got = np.asarray(numjax.jit(lambda v: jnp.max(v, axis=-1))(x))
    assert list(np.signbit(got)) == [False, True, False]
    got = np.asarray(numjax.jit(lambda v: jnp.min(v, axis=-1))(-x))
    assert list(np.signbit(got)) == [True, False, True]


def _loop_kernels(fn, x):
    src = numjax.jit(fn).lower(x).compile().executable.source
    kernels = src.split("# ---- program")[0].split("# ---- kernel ")[1:]
    return [k for k in kernels if "for i" in k]


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "layer_norm", "logsumexp", "var"])
def test_one_kernel_over_the_rows(name):
    x = _data((64, 48), np.float32)
    kernels = _loop_kernels(ROW_OPS[name][0], x)
    assert len(kernels) == 1, kernels
    assert "numba.prange" in kernels[0]


def test_sum_keeps_summation_order():
    # A fused row sum gives the bits of the same sum computed alone (numjax's fixed order).
    x = _data((9, 1003), np.float32, seed=4) * 1e3
    e = np.asarray(numjax.jit(lambda v: jnp.exp(v / 1e3))(x))
    alone = np.asarray(numjax.jit(lambda v: jnp.sum(v, axis=-1))(e))
    fused = np.asarray(numjax.jit(lambda v: numjax.nn.softmax(v / 1e3, axis=-1) * 0
                                  + jnp.sum(jnp.exp(v / 1e3), axis=-1, keepdims=True))(x))
    np.testing.assert_array_equal(fused[:, 0], alone)


@pytest.mark.parametrize("shape", [(300, 77), (4096, 33)])
def test_numba_backend_runs_row_regions(shape):
    # The Numba lowering (programs the LLVM backend does not cover) writes the same row
    # kernels; its parallel twin runs the row loop as numba.prange with private row buffers.
    from numjax.lowering import compile as numba_backend
    x = _data(shape, np.float32, seed=5)
    for name in ("softmax", "log_softmax", "layer_norm"):
        fn = ROW_OPS[name][0]
        exe = numba_backend.Executable(numba_backend.lower_jaxpr(numjax.make_jaxpr(fn)(x), name))
        assert "rowbuf" in exe.source or name == "layer_norm"
        got = np.asarray(exe.call_arrays([x])[0])
        np.testing.assert_allclose(got, np.asarray(numjax.jit(fn)(x)), rtol=1e-6, atol=1e-6)


def test_row_region_in_scan_body():
    # Control-flow kernels (kernel_program) write region loops without prange.
    x = _data((7, 13), np.float32, seed=6)

    def f(x):
        def body(c, _):
            c = numjax.nn.softmax(c * 3.0, axis=-1) + c
            return c, jnp.var(c, axis=-1)
        return numjax.lax.scan(body, x, None, length=4)
    src = numjax.jit(f).lower(x).compile().executable.source
    assert "rowbuf" in src
    got, want = numjax.jit(f)(x), f(x)
    for u, v in zip(numjax.tree_util.tree_leaves(got), numjax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cols", [700, 256, 1000])
def test_leading_axis_large(cols):
    # Each column adds its rows in order (bit-equal to the eager sum, numjax's order).
    x = _data((2048, cols), np.float32, seed=7)
    x[5, 3] = np.nan
    np.testing.assert_array_equal(np.asarray(numjax.jit(lambda v: jnp.sum(v, axis=0))(x)),
                                  np.asarray(jnp.sum(x, axis=0)))
    np.testing.assert_array_equal(np.asarray(numjax.jit(lambda v: jnp.argmax(v, axis=0))(x)),
                                  np.argmax(x, axis=0))
    np.testing.assert_array_equal(np.asarray(numjax.jit(lambda v: jnp.max(v, axis=0))(x)), np.max(x, axis=0))
    got = np.asarray(numjax.jit(lambda v: jnp.var(v, axis=0))(x))
    np.testing.assert_allclose(got, np.var(x.astype(np.float64), axis=0), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_])
def test_argmax_argmin_rows(dtype, x64):
    # Two passes (row extremum, then the first position holding it): the first NaN wins, then
    # the first extremum, as XLA's argmax; ties of +0 and -0 go to the first.
    if dtype == np.bool_:
        x = np.random.RandomState(8).rand(9, 37) > 0.7
        x[0] = False
        x[1] = True
    elif np.dtype(dtype).kind == "i":
        x = np.random.RandomState(8).randint(-5, 5, (9, 37)).astype(dtype)
    else:
        x = _special_rows(dtype)
        x[4, 0] = -0.0
        x[4, 1:] = -1.0
        x[4, 6] = 0.0
    for jfn, nfn in ((jnp.argmax, np.argmax), (jnp.argmin, np.argmin)):
        got = np.asarray(numjax.jit(lambda v: jfn(v, axis=-1))(x))
        np.testing.assert_array_equal(got, nfn(x, axis=-1))
        got = np.asarray(numjax.jit(lambda v: jfn(v * 1 if dtype != np.bool_ else v, axis=-1))(x[:, :1]))
        np.testing.assert_array_equal(got, np.zeros(x.shape[0]))


def test_argmax_of_fused_values_with_other_reductions():
    x = _data((13, 45), np.float32, seed=9)
    f = numjax.jit(lambda v: (jnp.argmax(jnp.sin(v) * 2.0, axis=-1), jnp.max(v, axis=-1),
                              jnp.argmin(v - 1.0, axis=-1)))
    a, m, b = (np.asarray(r) for r in f(x))
    np.testing.assert_array_equal(a, np.argmax(np.sin(x) * np.float32(2.0), axis=-1))
    np.testing.assert_array_equal(m, x.max(-1))
    np.testing.assert_array_equal(b, np.argmin(x, axis=-1))


@pytest.mark.slow     # ~50 s of Numba compiling on a slow 2-core machine
def test_numba_backend_leading_axis_and_argmax():
    from numjax.lowering import compile as numba_backend
    x = _data((3000, 700), np.float32, seed=10)
    for fn in (lambda v: jnp.sum(v, axis=0), lambda v: jnp.argmax(v, axis=0),
               lambda v: jnp.argmax(v, axis=-1), lambda v: numjax.nn.softmax(v, axis=0)):
        exe = numba_backend.Executable(numba_backend.lower_jaxpr(numjax.make_jaxpr(fn)(x), "f"))
        np.testing.assert_array_equal(np.asarray(exe.call_arrays([x])[0]), np.asarray(numjax.jit(fn)(x)))


@pytest.mark.parametrize("cols", [7, 8, 16, 1000, 1003])
@pytest.mark.parametrize("axes", [-1, None])
def test_transcendental_sums_keep_summation_order(cols, axes):
    # Sums of transcendental values are computed by blocks of 16 (values, then adds into the
    # 8 lanes): bit-equal to summing the materialized values (numjax's summation order).
    x = _data((37, cols), np.float32, seed=11)
    fused = np.asarray(numjax.jit(lambda v: jnp.sum(jnp.exp(v), axis=axes))(x))
    values = np.asarray(numjax.jit(jnp.exp)(x))
    np.testing.assert_array_equal(fused, np.asarray(numjax.jit(lambda v: jnp.sum(v, axis=axes))(values)))
    lse = np.asarray(numjax.jit(lambda v: numjax.nn.logsumexp(v, axis=-1))(x))
    m = x.max(-1, keepdims=True)
    sums = np.asarray(numjax.jit(lambda v: jnp.sum(v, axis=-1))(np.asarray(numjax.jit(jnp.exp)(x - m))))
    np.testing.assert_allclose(lse, np.log(sums) + m[:, 0], rtol=1e-6)

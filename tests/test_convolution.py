"""Convolutions and windowed reductions: values against direct numpy loops, gradients
(check_grads, both operands), vmap against a Python loop, jit against eager."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import numjax
import numjax.numpy as jnp
from numjax import lax
from numjax.test_util import check_grads


# ---------------------------------------------------------------- references

def _dilate_pad(x, pads, dilation, fill, first_spatial):
    """x with dilation - 1 ``fill`` values between elements of each spatial axis, then padded
    (negative pads crop), element by element."""
    out = x
    for k, ((lo, hi), d) in enumerate(zip(pads, dilation)):
        ax = first_spatial + k
        n = out.shape[ax]
        size = (n - 1) * d + 1 if n else 0
        shape = list(out.shape)
        shape[ax] = size
        dil = np.full(shape, fill, out.dtype)
        idx = [slice(None)] * out.ndim
        idx[ax] = slice(0, size, d)
        dil[tuple(idx)] = out
        shape[ax] = max(lo, 0) + size + max(hi, 0)
        padded = np.full(shape, fill, out.dtype)
        idx[ax] = slice(max(lo, 0), max(lo, 0) + size)
        padded[tuple(idx)] = dil
        idx[ax] = slice(-min(lo, 0), shape[ax] + min(hi, 0))
        out = padded[tuple(idx)]
    return out


def conv_reference(lhs, rhs, strides, pads, lhs_dil, rhs_dil, dn, groups, batch_groups):
    """conv_general_dilated by its definition: one dot product per output element."""
    x = np.transpose(lhs, dn.lhs_spec).astype(np.float64)       # (N, C, spatial...)
    w = np.transpose(rhs, dn.rhs_spec).astype(np.float64)       # (O, I, spatial...)
    x = _dilate_pad(x, pads, lhs_dil, 0.0, 2)
    n, c = x.shape[:2]
    o, kshape = w.shape[0], w.shape[2:]
    spans = [(k - 1) * d + 1 for k, d in zip(kshape, rhs_dil)]
    out_sp = [max((s - sp) // st_ + 1, 0) if s >= sp else 0 for s, sp, st_ in zip(x.shape[2:], spans, strides)]
    n_out, per_group = n // batch_groups, o // (groups * batch_groups)
    c_in = c // groups
    out = np.zeros((n_out, o) + tuple(out_sp))
    for b_, oc in itertools.product(range(n_out), range(o)):
        grp = oc // per_group
        fg, bg = (grp, 0) if groups > 1 else (0, grp if batch_groups > 1 else 0)
        for pos in itertools.product(*[range(m) for m in out_sp]):
            acc = 0.0
            for tap in itertools.product(*[range(k) for k in kshape]):
                at = tuple(p * s + t * d for p, s, t, d in zip(pos, strides, tap, rhs_dil))
                acc += x[(bg * n_out + b_, slice(fg * c_in, (fg + 1) * c_in)) + at] @ w[(oc, slice(None)) + tap]
            out[(b_, oc) + pos] = acc
    return np.transpose(out, np.argsort(dn.out_spec))


def window_reference(x, kind, window, strides, pads, base_dil, win_dil):
    init = {"sum": 0.0, "max": -np.inf, "min": np.inf}[kind]
    reduce = {"sum": np.sum, "max": np.max, "min": np.min}[kind]
    xp = _dilate_pad(x.astype(np.float64), pads, base_dil, init, 0)
    spans = [(w - 1) * d + 1 for w, d in zip(window, win_dil)]
    out_sp = [max((s - sp) // st_ + 1, 0) if s >= sp else 0 for s, sp, st_ in zip(xp.shape, spans, strides)]
    out = np.zeros(out_sp)
    for pos in itertools.product(*[range(m) for m in out_sp]):
        out[pos] = reduce(xp[tuple(slice(p * s, p * s + sp, d) for p, s, sp, d in zip(pos, strides, spans, win_dil))])
    return out


def _explicit_pads(lhs_shape, rhs_shape, strides, padding, lhs_dil, rhs_dil, dn):
    if not isinstance(padding, str):
        return padding
    nd = len(lhs_shape) - 2
    sizes = [(lhs_shape[dn.lhs_spec[2 + k]] - 1) * lhs_dil[k] + 1 for k in range(nd)]
    windows = [(rhs_shape[dn.rhs_spec[2 + k]] - 1) * rhs_dil[k] + 1 for k in range(nd)]
    return lax.padtype_to_pads(sizes, windows, strides, padding)


# ---------------------------------------------------------------- convolution configurations
# (lhs shape, rhs shape, strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
#  feature_group_count, batch_group_count)
CONV_CASES = [
    ((2, 3, 7, 6), (4, 3, 3, 2), (1, 1), [(1, 1), (0, 2)], (1, 1), (1, 1), None, 1, 1),
    ((2, 3, 7, 6), (4, 3, 3, 3), (2, 2), "SAME", (1, 1), (1, 1), None, 1, 1),
    ((2, 3, 8, 5), (4, 3, 2, 3), (3, 1), "SAME_LOWER", (1, 1), (1, 1), None, 1, 1),
    ((2, 3, 6, 6), (2, 3, 3, 3), (1, 1), "VALID", (1, 1), (2, 2), None, 1, 1),
    ((2, 6, 7, 6), (6, 2, 3, 2), (2, 1), [(1, -1), (0, 2)], (2, 1), (1, 3), None, 3, 1),
    ((4, 7, 6, 3), (3, 2, 3, 6), (1, 2), [(2, 1), (1, 0)], (1, 2), (2, 1), ("NHWC", "HWIO", "NCHW"), 1, 2),
    ((2, 7, 6, 3), (3, 2, 3, 4), (3, 2), "SAME", (1, 1), (1, 1), ("NHWC", "HWIO", "NHWC"), 1, 1),
    ((2, 7, 6, 4), (3, 2, 1, 8), (1, 1), "SAME", (1, 1), (1, 1), ("NHWC", "HWIO", "NHWC"), 4, 1),
    ((2, 3, 9), (4, 3, 3), (2,), "SAME_LOWER", (1,), (1,), None, 1, 1),
    ((6, 4, 9), (6, 6, 3), (2,), "VALID", (1,), (2,), ("CNH", "OIH", "HCN"), 1, 2),
    ((1, 2, 4, 3, 5), (2, 2, 2, 1, 3), (1, 2, 1), [(0, 1), (1, 0), (1, 1)], (1, 1, 2), (1, 1, 1), None, 1, 1),
    ((2, 3), (4, 3), (), [], (), (), None, 1, 1),
    ((2, 3, 2, 2), (4, 3, 3, 3), (1, 1), "VALID", (1, 1), (1, 1), None, 1, 1),     # empty output
]


def _rand(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def _conv_fn(case):
    _, _, strides, padding, ld, rd, dn, g, b = case
    return lambda x, w: lax.conv_general_dilated(x, w, strides, padding, ld, rd, dn, g, b)


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_values_vs_loop(case):
    rng = np.random.default_rng(0)
    ls, rs, strides, padding, ld, rd, dn, g, b = case
    x, w = _rand(rng, ls), _rand(rng, rs)
    out = _conv_fn(case)(x, w)
    d = lax.conv_dimension_numbers(ls, rs, dn)
    ref = conv_reference(x, w, strides, _explicit_pads(ls, rs, strides, padding, ld, rd, d), ld, rd, d, g, b)
    assert out.shape == ref.shape and out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-5, atol=1e-5)
    assert out.shape == lax.conv_general_shape_tuple(ls, rs, strides, padding, dn) or ld != (1,) * len(ld) \
        or rd != (1,) * len(rd)


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_jit_matches_eager(case):
    rng = np.random.default_rng(1)
    x, w = _rand(rng, case[0]), _rand(rng, case[1])
    f = _conv_fn(case)
    jf = numjax.jit(f)
    assert "kn.conv_numpy" in jf.lower(x, w).as_text()
    np.testing.assert_allclose(np.asarray(jf(x, w)), np.asarray(f(x, w)), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", CONV_CASES[:11])
def test_conv_grads(case):
    rng = np.random.default_rng(2)
    x, w = _rand(rng, case[0]), _rand(rng, case[1])
    check_grads(_conv_fn(case), (x, w), order=2, modes=("fwd", "rev"), atol=3e-2, rtol=3e-2)


@pytest.mark.parametrize("case", CONV_CASES[:11])
@pytest.mark.parametrize("axes", [(0, None), (None, 1), (1, 0), (2, 3)])
def test_conv_vmap_vs_loop(case, axes):
    rng = np.random.default_rng(3)
    f = _conv_fn(case)
    xs, ws = _rand(rng, (3,) + case[0]), _rand(rng, (3,) + case[1])
    x0, w0 = xs[0], ws[0]
    xa = np.moveaxis(xs, 0, axes[0]) if axes[0] is not None else x0
    wa = np.moveaxis(ws, 0, axes[1]) if axes[1] is not None else w0
    got = numjax.vmap(f, axes)(xa, wa)
    want = np.stack([np.asarray(f(xs[i] if axes[0] is not None else x0, ws[i] if axes[1] is not None else w0))
                     for i in range(3)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)


def test_grad_under_jit_and_vmap_of_grad():
    rng = np.random.default_rng(4)
    x, w = _rand(rng, (4, 6, 8, 8)), _rand(rng, (6, 3, 3, 3))

    def loss(x, w):
        return jnp.sum(jnp.tanh(lax.conv_general_dilated(x, w, (2, 1), "SAME", feature_group_count=2)))
    g_eager = numjax.grad(loss, argnums=(0, 1))(x, w)
    g_jit = numjax.jit(numjax.grad(loss, argnums=(0, 1)))(x, w)
    for a, b in zip(g_eager, g_jit):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)
    per_example = numjax.vmap(numjax.grad(lambda xi, w: loss(xi[None], w), argnums=1), (0, None))(x, w)
    loop = np.stack([np.asarray(numjax.grad(lambda xi, w: loss(xi[None], w), argnums=1)(x[i], w)) for i in range(4)])
    np.testing.assert_allclose(np.asarray(per_example), loop, rtol=1e-5, atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_conv_property_small_shapes(data):
    nd = data.draw(st.integers(1, 2))
    g = data.draw(st.sampled_from([1, 2]))
    b = 1 if g > 1 else data.draw(st.sampled_from([1, 2]))
    n = b * data.draw(st.integers(1, 2))
    cin = g * data.draw(st.integers(1, 2))
    o = g * b * data.draw(st.integers(1, 2))
    spatial = [data.draw(st.integers(1, 5)) for _ in range(nd)]
    kern = [data.draw(st.integers(1, 3)) for _ in range(nd)]
    strides = tuple(data.draw(st.integers(1, 3)) for _ in range(nd))
    ld = tuple(data.draw(st.integers(1, 2)) for _ in range(nd))
    rd = tuple(data.draw(st.integers(1, 2)) for _ in range(nd))
    pads = [(data.draw(st.integers(-1, 2)), data.draw(st.integers(-1, 2))) for _ in range(nd)]
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    x, w = _rand(rng, [n, cin] + spatial), _rand(rng, [o, cin // g] + kern)
    d = lax.conv_dimension_numbers(x.shape, w.shape, None)
    out = lax.conv_general_dilated(x, w, strides, pads, ld, rd, None, g, b)
    ref = conv_reference(x, w, strides, pads, ld, rd, d, g, b)
    assert out.shape == ref.shape
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-5, atol=1e-5)


def test_conv_wrappers_and_shape_helpers():
    rng = np.random.default_rng(5)
    x, w = _rand(rng, (2, 3, 7, 7)), _rand(rng, (4, 3, 3, 3))
    np.testing.assert_allclose(np.asarray(lax.conv(x, w, (2, 2), "SAME")),
                               np.asarray(lax.conv_general_dilated(x, w, (2, 2), "SAME")))
    pads = [(1, 0), (0, 1)]
    np.testing.assert_allclose(np.asarray(lax.conv_with_general_padding(x, w, (1, 1), pads, (2, 1), (1, 2))),
                               np.asarray(lax.conv_general_dilated(x, w, (1, 1), pads, (2, 1), (1, 2))))
    assert lax.conv_shape_tuple((2, 3, 8, 8), (4, 3, 3, 3), (2, 2), "SAME") == (2, 4, 4, 4)
    assert lax.conv_general_shape_tuple((2, 8, 8, 3), (3, 3, 3, 4), (2, 1), "VALID",
                                        ("NHWC", "HWIO", "NCHW")) == (2, 4, 3, 6)
    assert lax.padtype_to_pads((8, 8), (3, 3), (2, 2), "SAME") == [(0, 1), (0, 1)]
    assert lax.padtype_to_pads((8,), (4,), (1,), "SAME_LOWER") == [(2, 1)]
    assert lax.conv_general_permutations(("NHWC", "HWIO", "NHWC")) == ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    dn = lax.conv_dimension_numbers((2, 3, 8, 8), (4, 3, 3, 3), ("NCHW", "OIHW", "NHWC"))
    assert isinstance(dn, lax.ConvDimensionNumbers) and dn.out_spec == (0, 3, 1, 2)


def test_conv_transpose_is_the_input_gradient():
    # With transpose_kernel, conv_transpose is the vjp of a strided convolution.
    rng = np.random.default_rng(6)
    x, w = _rand(rng, (2, 8, 8, 3)), _rand(rng, (3, 3, 3, 5))
    dn = ("NHWC", "HWIO", "NHWC")
    y, vjp = numjax.vjp(lambda x: lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=dn), x)
    ct = _rand(rng, y.shape)
    # SAME with stride 2 and a 3-wide kernel pads (0, 1); its transpose pads (2 - 0, 1 + 1 - 1).
    got = lax.conv_transpose(ct, w, (2, 2), [(2, 1), (2, 1)], dimension_numbers=dn, transpose_kernel=True)
    np.testing.assert_allclose(np.asarray(got), np.asarray(vjp(ct)[0]), rtol=1e-5, atol=1e-5)
    assert lax.conv_transpose(ct, w.transpose(0, 1, 3, 2), (2, 2), "SAME").shape == (2, 8, 8, 3)


@pytest.mark.parametrize("args, kwargs, exc, match", [
    (((2, 3, 8, 8), (4, 2, 3, 3)), {}, ValueError, "rhs input feature dimension"),
    (((2, 3, 8, 8), (4, 1, 3, 3)), {"feature_group_count": 2}, ValueError, "does not divide 3"),
    (((2, 3, 8, 8), (5, 1, 3, 3)), {"feature_group_count": 3}, ValueError, "multiple of feature_group_count"),
    (((3, 3, 8, 8), (4, 3, 3, 3)), {"batch_group_count": 2}, ValueError, "does not divide 3"),
    (((2, 3, 8, 8), (4, 3, 3, 3)), {"dimension_numbers": ("NCHW", "OIHW")}, TypeError, "length 3"),
    (((2, 3, 8, 8), (4, 3, 3, 3)), {"dimension_numbers": ("NCCW", "OIHW", "NCHW")}, TypeError, "exactly once"),
    (((2, 3, 8, 8), (4, 3, 3, 3)), {"dimension_numbers": ("NCHW", "OIHW", "NCHX")}, TypeError, "spatial"),
    (((2, 3, 8), (4, 3, 3, 3)), {}, TypeError, "ndim to be equal"),
    (((2, 3, 8, 8), (4, 3, 3, 3)), {"padding": [(1, 1)]}, TypeError, "expected 2, got 1"),
    (((2, 3, 8, 8), (4, 3, 3, 3)), {"padding": "FULL"}, RuntimeError, "Unrecognized padding"),
    (((2, 3, 8, 8), (4, 3, 3, 3)), {"window_strides": (0, 1)}, ValueError, "positive"),
])
def test_conv_errors(args, kwargs, exc, match):
    x, w = np.ones(args[0], np.float32), np.ones(args[1], np.float32)
    kw = {"window_strides": (1, 1), "padding": "SAME", **kwargs}
    with pytest.raises(exc, match=match):
        lax.conv_general_dilated(x, w, **kw)


def test_conv_dtypes():
    x, w = np.ones((1, 2, 4, 4), np.int32), np.ones((3, 2, 2, 2), np.int32)
    out = lax.conv(x, w, (1, 1), "VALID")
    assert out.dtype == np.int32 and int(out[0, 0, 0, 0]) == 8
    out = lax.conv_general_dilated(x.astype(np.int8), w.astype(np.int8), (1, 1), "VALID",
                                   preferred_element_type=np.int32)
    assert out.dtype == np.int32
    with pytest.raises(TypeError, match="same dtypes"):
        lax.conv(x, w.astype(np.float32), (1, 1), "VALID")
    with pytest.raises(TypeError, match="narrower"):
        lax.conv(x.astype(np.float32), w.astype(np.float32), (1, 1), "VALID", preferred_element_type=np.float16)


# ---------------------------------------------------------------- windowed reductions
# (shape, window, strides, padding, base_dilation, window_dilation)
WINDOW_CASES = [
    ((4, 6), (2, 2), (2, 2), [(0, 0), (0, 0)], (1, 1), (1, 1)),
    ((5, 7), (3, 2), (1, 2), [(1, 2), (0, 1)], (2, 1), (1, 2)),
    ((2, 5, 6, 3), (1, 3, 3, 1), (1, 2, 1, 1), "SAME", (1, 1, 1, 1), (1, 1, 1, 1)),
    ((3, 8), (2, 3), (2, 1), [(-1, 1), (2, -1)], (1, 2), (2, 1)),
    ((7,), (3,), (2,), "VALID", (1,), (1,)),
]
MONOIDS = [("sum", lax.add, 0.0), ("max", lax.max, -np.inf), ("min", lax.min, np.inf)]


def _window_fn(case, comp, init):
    _, window, strides, padding, bd, wd = case
    return lambda x: lax.reduce_window(x, init, comp, window, strides, padding, bd, wd)


@pytest.mark.parametrize("case", WINDOW_CASES)
@pytest.mark.parametrize("kind, comp, init", MONOIDS)
def test_reduce_window_values_jit_vmap(case, kind, comp, init):
    rng = np.random.default_rng(7)
    x = _rand(rng, case[0])
    f = _window_fn(case, comp, init)
    pads = case[3] if not isinstance(case[3], str) else lax.padtype_to_pads(case[0], case[1], case[2], case[3])
    ref = window_reference(x, kind, case[1], case[2], pads, case[4], case[5])
    out = np.asarray(f(x))
    assert out.shape == ref.shape == lax.reduce_window_shape_tuple(case[0], case[1], case[2], pads, case[4], case[5])
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    jf = numjax.jit(f)
    assert "kn.reduce_window_numpy" in jf.lower(x).as_text()
    np.testing.assert_array_equal(np.asarray(jf(x)), out)
    xs = _rand(rng, (3,) + case[0])
    got = numjax.vmap(f, 1, 1)(np.moveaxis(xs, 0, 1))
    np.testing.assert_array_equal(np.asarray(got), np.stack([np.asarray(f(xs[i])) for i in range(3)], 1))


@pytest.mark.parametrize("case", WINDOW_CASES)
@pytest.mark.parametrize("kind, comp, init", MONOIDS)
def test_reduce_window_grads(case, kind, comp, init):
    if kind != "sum" and any(b > 1 for b in case[4]):
        pytest.skip("windows holding only dilation holes have no finite-difference gradient")
    rng = np.random.default_rng(8)
    x = rng.permutation(np.prod(case[0])).reshape(case[0]).astype(np.float32) / 4   # no ties
    check_grads(_window_fn(case, comp, init), (x,), order=2, modes=("fwd", "rev"), atol=2e-2, rtol=2e-2)


def test_reduce_window_generic_computation_and_pytrees():
    rng = np.random.default_rng(9)
    x = _rand(rng, (4, 5))
    got = lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 2), "VALID")
    want = np.array([[np.prod(x[i:i + 2, j:j + 2]) for j in range(0, 4, 2)] for i in range(3)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
    # A non-identity init value is folded in and pads: max from 0.
    got = lax.reduce_window(x, 0.0, lax.max, (2, 2), (2, 2), "SAME")
    assert np.all(np.asarray(got) >= 0)
    s, m = lax.reduce_window((x, x), (0.0, -np.inf), lambda a, b: (a[0] + b[0], jnp.maximum(a[1], b[1])),
                             (2, 2), (1, 1), "VALID")
    for got, comp, init in ((s, lax.add, 0.0), (m, lax.max, -np.inf)):
        want_one = lax.reduce_window(x, init, comp, (2, 2), (1, 1), "VALID")
        np.testing.assert_allclose(np.asarray(got), np.asarray(want_one))
    check_grads(lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 2), "SAME"), (x,), order=1,
                modes=("fwd", "rev"), atol=2e-2, rtol=2e-2)
    jitted = numjax.jit(lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 2), "VALID"))
    np.testing.assert_allclose(np.asarray(jitted(x)), want, rtol=1e-5)


def test_reduce_window_int_and_errors():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = lax.reduce_window(x, 0, lax.add, (2, 2), (1, 1), "VALID")
    assert out.dtype == np.int32 and out.tolist() == [[10, 14, 18], [26, 30, 34]]
    out = lax.reduce_window(x, np.iinfo(np.int32).min, lax.max, (2, 2), (2, 2), "SAME")
    assert out.tolist() == [[5, 7], [9, 11]]
    with pytest.raises(TypeError, match="wrong number of window_dimensions"):
        lax.reduce_window(x, 0, lax.add, (2,), (1, 1), "VALID")
    with pytest.raises(RuntimeError, match="Unrecognized padding"):
        lax.reduce_window(x, 0, lax.add, (2, 2), (1, 1), "FULL")


def test_small_cnn_grad_jit_matches_eager():
    """flax's Conv / avg_pool / max_pool pattern: NHWC conv, relu, pooling, dense."""
    rng = np.random.default_rng(10)
    x, w1, w2 = _rand(rng, (4, 10, 10, 1)), _rand(rng, (3, 3, 1, 4)), _rand(rng, (3, 3, 4, 6))
    dn = ("NHWC", "HWIO", "NHWC")

    def loss(w1, w2, x):
        h = jnp.maximum(lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=dn), 0.0)
        h = lax.reduce_window(h, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
        h = lax.conv_general_dilated(h, w2, (1, 1), "SAME", dimension_numbers=dn)
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME")
        return jnp.sum(jnp.tanh(h))
    g = numjax.grad(loss, argnums=(0, 1))
    for a, b in zip(g(w1, w2, x), numjax.jit(g)(w1, w2, x)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)
    check_grads(lambda w1, w2: loss(w1, w2, x), (w1, w2), order=1, modes=("rev",), atol=5e-2, rtol=5e-2)

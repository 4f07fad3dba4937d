"""Convolutions and windowed reductions: numjax against real JAX (values, shapes, dtypes,
gradients, jaxpr text, error classes)."""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402
from jax import lax as jlax  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402
from numjax import lax as nlax  # noqa: E402

jax.config.update("jax_enable_x64", False)
RNG = np.random.RandomState(0)


def _r(*shape):
    return RNG.randn(*shape).astype(np.float32)


X4, W4 = _r(2, 6, 9, 8), _r(4, 3, 3, 2)
XH, WH = _r(2, 9, 8, 6), _r(3, 2, 6, 4)

# (name, fn(lax), args)
CASES = [
    ("conv_same", lambda lax: lambda x, w: lax.conv(x, w[:, :3].repeat(2, 1), (1, 1), "SAME"), (X4, W4)),
    ("conv_general", lambda lax: lambda x, w: lax.conv_general_dilated(
        x, w, (2, 1), [(1, 0), (2, -1)], (1, 2), (2, 1), ("NCHW", "OIHW", "NHWC"), feature_group_count=3),
     (X4, _r(6, 2, 3, 2))),
    ("conv_batch_groups", lambda lax: lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "SAME_LOWER", dimension_numbers=("NHWC", "HWIO", "NCHW"), batch_group_count=2),
     (XH, _r(3, 2, 6, 4))),
    ("conv_nhwc", lambda lax: lambda x, w: lax.conv_general_dilated(
        x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), (XH, WH)),
    ("conv_with_general_padding", lambda lax: lambda x, w: lax.conv_with_general_padding(
        x, w[:, :2].repeat(3, 1), (1, 2), [(0, 1), (1, 1)], (2, 1), (1, 2)), (X4, W4)),
    ("conv_transpose_same", lambda lax: lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME"), (XH, WH)),
    ("conv_transpose_valid_dil", lambda lax: lambda x, w: lax.conv_transpose(
        x, w, (2, 1), "VALID", rhs_dilation=(1, 2)), (XH, WH)),
    ("conv_transpose_kernel", lambda lax: lambda x, w: lax.conv_transpose(
        x, w, (2, 2), [(1, 2), (0, 1)], transpose_kernel=True), (XH[..., :4], WH)),
    ("reduce_window_avg", lambda lax: lambda x: lax.reduce_window(
        x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4, (XH,)),
    ("reduce_window_max_same", lambda lax: lambda x: lax.reduce_window(
        x, -np.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"), (XH,)),
    ("reduce_window_min_dil", lambda lax: lambda x: lax.reduce_window(
        x, np.inf, lax.min, (2, 2), (1, 1), [(1, 0), (0, 2)], (1, 2), (2, 1)), (XH[0, 0],)),
    ("reduce_window_sum_dil", lambda lax: lambda x: lax.reduce_window(
        x, 0.0, lax.add, (2, 2), (1, 1), "SAME", (2, 1), (1, 2)), (XH[0, 0],)),
    ("reduce_window_mul", lambda lax: lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 2), "SAME"),
     (XH[0, 0],)),
]


@pytest.mark.parametrize("name, make, args", CASES, ids=[c[0] for c in CASES])
def test_values_shapes_dtypes(name, make, args):
    want = make(jlax)(*args)
    got = make(nlax)(*args)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(np.asarray(nj.jit(make(nlax))(*args)), np.asarray(want), rtol=2e-5, atol=2e-5)


# JAX has no reverse mode for a dilated min/max window or a generic computation.
GRAD_CASES = [c for c in CASES if c[0] not in ("reduce_window_min_dil", "reduce_window_mul")]


@pytest.mark.parametrize("name, make, args", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients(name, make, args):
    def loss(lax, np_):
        return lambda *a: np_.sum(np_.sin(make(lax)(*a)))
    argnums = tuple(range(len(args)))
    want = jax.grad(loss(jlax, jjnp), argnums)(*args)
    got = nj.jit(nj.grad(loss(nlax, njnp), argnums))(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name, make, args", CASES[:4] + CASES[8:10], ids=[c[0] for c in CASES[:4] + CASES[8:10]])
def test_jaxpr_text(name, make, args):
    assert str(nj.make_jaxpr(make(nlax))(*args)) == str(jax.make_jaxpr(make(jlax))(*args))


def test_jaxpr_text_precision_and_preferred_type():
    f = lambda lax: lambda x, w: lax.conv_general_dilated(  # noqa: E731
        x, w[:, :3].repeat(2, 1), (1, 1), "VALID", precision="highest", preferred_element_type=np.float32)
    assert str(nj.make_jaxpr(f(nlax))(X4, W4)) == str(jax.make_jaxpr(f(jlax))(X4, W4))


@pytest.mark.parametrize("kwargs", [
    dict(dimension_numbers=("NCHW", "OIHW")),
    dict(dimension_numbers=("NCCW", "OIHW", "NCHW")),
    dict(dimension_numbers=("NCHW", "OIHW", "NCHX")),
    dict(dimension_numbers=("NCHWD", "OIHWD", "NCHWD")),
    dict(feature_group_count=4),
    dict(feature_group_count=2),
    dict(batch_group_count=3),
    dict(rhs=_r(4, 5, 3, 3)),
    dict(padding="FULL"),
    dict(padding=[(1, 1)]),
])
def test_error_classes(kwargs):
    kwargs = dict(kwargs)
    rhs = kwargs.pop("rhs", _r(4, 6, 3, 3))
    kw = {"window_strides": (1, 1), "padding": "SAME", **kwargs}
    with pytest.raises(Exception) as want:
        jlax.conv_general_dilated(X4, rhs, **kw)
    with pytest.raises(type(want.value)):
        nlax.conv_general_dilated(X4, rhs, **kw)


def test_shape_helpers():
    for args in [((2, 3, 8, 8), (4, 3, 3, 3), (2, 2), "SAME", ("NCHW", "OIHW", "NHWC")),
                 ((2, 8, 8, 3), (3, 3, 3, 4), (1, 2), [(1, 0), (0, 2)], ("NHWC", "HWIO", "NHWC"))]:
        assert tuple(map(int, nlax.conv_general_shape_tuple(*args))) == \
            tuple(map(int, jlax.conv_general_shape_tuple(*args)))
    dn = ("NHWC", "HWIO", "NHWC")
    assert nlax.conv_transpose_shape_tuple((2, 8, 8, 3), (3, 3, 3, 4), (2, 2), "SAME", dn) == \
        tuple(map(int, jlax.conv_transpose_shape_tuple((2, 8, 8, 3), (3, 3, 3, 4), (2, 2), "SAME", dn)))
    assert nlax.reduce_window_shape_tuple((2, 3, 8, 8), (1, 1, 3, 3), (1, 1, 2, 2), [(0, 0)] * 4) == \
        tuple(jlax.reduce_window_shape_tuple((2, 3, 8, 8), (1, 1, 3, 3), (1, 1, 2, 2), [(0, 0)] * 4))
    for pad in ("SAME", "SAME_LOWER", "VALID"):
        assert [tuple(map(int, p)) for p in nlax.padtype_to_pads((7, 8), (3, 4), (2, 3), pad)] == \
            [tuple(map(int, p)) for p in jlax.padtype_to_pads((7, 8), (3, 4), (2, 3), pad)]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n, m", [(6, 3), (3, 6), (4, 4), (5, 2)])
def test_jnp_convolve_correlate(mode, n, m):
    a, v = _r(n), _r(m)
    for name in ("convolve", "correlate"):
        want = getattr(jjnp, name)(a, v, mode)
        got = getattr(njnp, name)(a, v, mode)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)

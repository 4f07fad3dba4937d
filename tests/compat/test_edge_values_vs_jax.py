"""tests/test_edge_values.py's cases on numjax (eager and jit) against real JAX 0.10.2, bit for
bit: signed zeros and NaN in every max/min, bitcasts between widths, population_count and clz,
exp2, logaddexp's gradients at infinities, complex rounding, the 64-bit Gumbel sampler,
lax.reduce, lax.full, mixed-type dot_general and views -- and JAX's silence (no numpy
RuntimeWarning) on the inputs where numjax must be silent.

    .venv-jax/bin/python -m pytest tests/compat/test_edge_values_vs_jax.py
"""
import os
import sys
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402
from jax import lax as jlax  # noqa: E402

import numjax  # noqa: E402
import numjax.numpy as njnp  # noqa: E402
from numjax import lax as nlax  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from edge_values_table import (BIT_COUNT_DTYPES, BITCASTS, FLOAT_DTYPES, ZEROS_2D, ZEROS_A,  # noqa: E402
                               ZEROS_B, bit_count_operands, bitcast_input, signed_zero_cases)

jax.config.update("jax_platform_name", "cpu")
jax.config.update("jax_enable_x64", False)
LIBS = {"jax": (jax, jjnp, jlax), "numjax": (numjax, njnp, nlax)}


def _bits(x):
    x = np.asarray(x)
    return x.dtype, x.shape, np.ascontiguousarray(x).tobytes()


def _both(fn, *args):
    """fn(jax, jnp, lax, *args) on each library, eagerly and jitted: JAX's jit result, and
    numjax's eager and jit results."""
    want = jax.jit(lambda *a: fn(jax, jjnp, jlax, *a))(*args)
    got_eager = fn(numjax, njnp, nlax, *map(njnp.asarray, args))
    got_jit = numjax.jit(lambda *a: fn(numjax, njnp, nlax, *a))(*args)
    return want, got_eager, got_jit


def _assert_same(want, *gots):
    for got in gots:
        w, g = np.asarray(want), np.asarray(got)
        assert (w.dtype, w.shape) == (g.dtype, g.shape)
        if w.dtype.kind == "c":
            w, g = w.view(np.finfo(w.dtype).dtype), g.view(np.finfo(g.dtype).dtype)
        if w.dtype.kind == "f" or "float" in w.dtype.name:
            wf, gf = w.astype(np.float64).reshape(-1), g.astype(np.float64).reshape(-1)
            same = ((wf == gf) & (np.signbit(wf) == np.signbit(gf))) | (np.isnan(wf) & np.isnan(gf))
            assert same.all(), f"{(~same).sum()} differ: JAX {wf[~same][:6].tolist()}, numjax {gf[~same][:6].tolist()}"
        else:
            same = w.reshape(-1) == g.reshape(-1)
            assert same.all(), f"{(~same).sum()} differ: JAX {w.reshape(-1)[~same][:6].tolist()}, " \
                               f"numjax {g.reshape(-1)[~same][:6].tolist()}"


@pytest.mark.parametrize("dt", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(signed_zero_cases("float32")))
def test_signed_zeros_and_nan(name, dt):
    fn, _ = signed_zero_cases(dt)[name]
    a, b, m = (np.asarray(v).astype(getattr(jjnp, dt)) for v in (ZEROS_A, ZEROS_B, ZEROS_2D))
    _assert_same(*_both(fn, a, b, m))
    # JAX's eager result too (one op at a time, no fusion)
    _assert_same(fn(jax, jjnp, jlax, *map(jjnp.asarray, (a, b, m))), fn(numjax, njnp, nlax, *map(njnp.asarray, (a, b, m))))


@pytest.mark.parametrize("src,values,dst", BITCASTS, ids=[f"{s}->{d}" for s, _, d in BITCASTS])
def test_bitcast_between_widths(src, values, dst):
    x = bitcast_input(jjnp, src, values, dst)
    dst_dt = np.dtype(getattr(jjnp, dst))
    _assert_same(*_both(lambda j, jnp, lax, v: lax.bitcast_convert_type(v, dst_dt), x))


@pytest.mark.parametrize("dt", BIT_COUNT_DTYPES)
def test_bit_counts(dt):
    x = np.array(bit_count_operands(dt)).astype(getattr(jjnp, dt))
    _assert_same(*_both(lambda j, jnp, lax, v: (lax.population_count(v), lax.clz(v))[0], x))
    _assert_same(*_both(lambda j, jnp, lax, v: lax.clz(v), x))
    _assert_same(jlax.population_count(x), nlax.population_count(x))


@pytest.mark.parametrize("dt", ("float32", "float16", "bfloat16"))
def test_exp2(dt):
    x = np.linspace(-30, 30, 1001).astype(getattr(jjnp, dt))
    _assert_same(*_both(lambda j, jnp, lax, v: lax.exp2(v), x))
    _assert_same(jlax.exp2(x), nlax.exp2(x))


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_gradients(name):
    for a, b in ((-np.inf, 1.0), (np.inf, 1.0), (-np.inf, -np.inf), (2.0, 2.0)):
        want = jax.grad(getattr(jjnp, name), argnums=(0, 1))(a, b)
        got = numjax.grad(getattr(njnp, name), argnums=(0, 1))(a, b)
        for w, g in zip(want, got):
            _assert_same(w, g)


def test_complex_round_and_logaddexp():
    z = np.array([1.4, -0.0, -0.3, -0.0, -0.0, -0.2], np.float32).view(np.complex64)
    for name in ("round", "rint"):
        _assert_same(getattr(jjnp, name)(z).view(np.float32), getattr(njnp, name)(z).view(np.float32))
    a = np.array([1 + 2j, -3 - 0.5j, 5 + 7j, -40 + 0.1j], np.complex64)
    b = np.array([1 + 2j, 2 + 3j, -1 - 7j, 3 + 0j], np.complex64)
    for name in ("logaddexp", "logaddexp2"):
        want = np.asarray(jax.jit(getattr(jjnp, name))(a, b))
        got = np.asarray(numjax.jit(getattr(njnp, name))(a, b))
        np.testing.assert_allclose(got.view(np.float32), want.view(np.float32), rtol=2e-7, atol=0)


@pytest.mark.parametrize("mode", ["low", "high", "highest"])
def test_gumbel_modes(mode):
    for lib in (jax, numjax):
        assert lib.random.gumbel(lib.random.PRNGKey(0), (3,), mode=mode).dtype == np.float32
    want = jax.random.gumbel(jax.random.PRNGKey(3), (4000,), mode=mode)
    got = numjax.random.gumbel(numjax.random.PRNGKey(3), (4000,), mode=mode)
    _assert_same(want, got, numjax.jit(lambda k: numjax.random.gumbel(k, (4000,), mode=mode))(numjax.random.PRNGKey(3)))


def test_reduce():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for comp, init in (("add", 0.0), ("max", -np.inf), ("min", np.inf), ("mul", 1.0)):
        texts = [str(lib.make_jaxpr(lambda v: lax.reduce(v, init, getattr(lax, comp), (1,)))(x))
                 for lib, _, lax in LIBS.values()]
        names = [f"reduce_{'sum' if comp == 'add' else 'prod' if comp == 'mul' else comp}" in t for t in texts]
        assert names == [True, True]
    _assert_same(*_both(lambda j, jnp, lax, v: lax.reduce(v, 1.0, lambda a, b: a + 2 * b, (1,)), x))
    _assert_same(jlax.reduce(x, 0.0, jlax.add, (0,)), nlax.reduce(x, 0.0, nlax.add, (0,)))
    assert jlax.reduce(jjnp.ones(3), 0.0, jlax.add, (0,)).weak_type == nlax.reduce(njnp.ones(3), 0.0, nlax.add, (0,)).weak_type


def test_full():
    for args in (((2,), 3.0), ((2,), 3), ((2,), 3, jjnp.int8), ((3,), True), ((2,), np.float32(1.5))):
        w, g = jlax.full(*args), nlax.full(*args)
        assert (w.dtype, w.weak_type, w.shape) == (g.dtype, g.weak_type, g.shape)
    for x, kw in ((np.ones(2, np.int8), {}), (np.ones(2, np.float32), {"shape": (3, 1)}), (3.0, {}),
                  (np.ones(2, np.float32), {"dtype": np.int32})):
        w, g = jlax.full_like(x, 2, **kw), nlax.full_like(x, 2, **kw)
        assert (w.dtype, w.weak_type, w.shape) == (g.dtype, g.weak_type, g.shape)


@pytest.mark.parametrize("a,b,pref", [("float32", "bfloat16", None), ("int8", "float32", None),
                                      ("float16", "float32", None), ("int8", "int16", None),
                                      ("float32", "complex64", None), ("int8", "uint8", "int32"),
                                      ("float32", "int32", None), ("int8", "uint8", None),
                                      ("bool", "uint8", None)])
def test_dot_general_mixed_types(a, b, pref):
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, (64, 65)).astype(getattr(jjnp, a))
    y = rng.integers(-3, 4, (65, 63)).astype(getattr(jjnp, b))
    pet = None if pref is None else getattr(jjnp, pref)
    _assert_same(*_both(lambda j, jnp, lax, u, v: lax.dot_general(
        u, v, (((1,), (0,)), ((), ())), preferred_element_type=pet), x, y))


@pytest.mark.parametrize("shape,src,dst", [((2, 3), "float32", "uint8"), ((2, 8), "uint8", "float32"),
                                            ((3,), "complex64", "float32"), ((4,), "float32", "complex64"),
                                            ((3,), "int8", "bool"), ((4,), "bool", "int16"),
                                            ((2, 4), "int4", "int8"), ((2,), "float32", "bfloat16")])
def test_view(shape, src, dst):
    x = (np.arange(int(np.prod(shape))).reshape(shape) % 3 - 1).astype(getattr(jjnp, src))
    _assert_same(jjnp.asarray(x).view(getattr(jjnp, dst)), njnp.asarray(x).view(getattr(njnp, dst)))


SILENT = {
    "inf - inf": lambda j, jnp: jnp.asarray(np.float32([np.inf])) - jnp.asarray(np.float32([np.inf])),
    "float8 inf - inf": lambda j, jnp: (jnp.asarray(np.float32([np.inf])).astype(jnp.float8_e5m2)
                                        - jnp.asarray(np.float32([np.inf])).astype(jnp.float8_e5m2)),
    "overflow": lambda j, jnp: jnp.asarray(np.float32([3e38])) * 10.0,
    "power of empty": lambda j, jnp: jnp.power(jnp.zeros((0,)), 2.5),
    "grad of norm at 0": lambda j, jnp: j.grad(jnp.linalg.norm)(jnp.zeros(3)),
    "jit matmul inf * 0": lambda j, jnp: j.jit(jnp.matmul)(np.full((3, 3), np.inf, np.float32),
                                                           np.zeros((3, 3), np.float32)),
    "jit dot inf * 0": lambda j, jnp: j.jit(jnp.dot)(np.float32([np.inf, 1]), np.float32([0, 1])),
    "fft of inf": lambda j, jnp: jnp.fft.fft(jnp.asarray([np.inf, -np.inf, 1.0])),
    "cumsum of inf, -inf": lambda j, jnp: jnp.cumsum(jnp.asarray([np.inf, -np.inf])),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_silent_where_jax_is(name):
    for lib, jnp in ((jax, jjnp), (numjax, njnp)):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            np.asarray(SILENT[name](lib, jnp))

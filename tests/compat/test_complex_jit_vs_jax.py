"""Jitted complex programs: numjax's complex rewrite against real JAX (XLA's CPU backend),
special values (zeros, infinities, NaN, huge and tiny parts) included."""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.lax as jlax  # noqa: E402
import jax.numpy as jjnp  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.lax as nlax  # noqa: E402
import numjax.numpy as njnp  # noqa: E402

jax.config.update("jax_enable_x64", False)

_SPECIAL = [0., -0., 1., -1., 0.5, -2.5, 3e-3, np.inf, -np.inf, np.nan]
_EXTREME = _SPECIAL + [1e-30, 1e30, 3e38, -3e38]


def _grid(values):
    re, im = np.meshgrid(np.array(values, np.float32), np.array(values, np.float32))
    rng = np.random.default_rng(0)
    rnd = rng.standard_normal(200) * 3 + 1j * rng.standard_normal(200) * 3
    return np.concatenate([(re + 1j * im).ravel(), rnd]).astype(np.complex64)


def _pairs(values):
    g = _grid(values)
    a, b = np.meshgrid(g, g)
    return a.ravel(), b.ravel()


def _agree(got, want, rtol=3e-5, atol=1e-6):
    """Equal NaN pattern, and values within float32 tolerance of the result's modulus."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind == "b":
        np.testing.assert_array_equal(got, want)
        return
    with np.errstate(all="ignore"):
        same_nan = np.isnan(got) == np.isnan(want)
        if got.dtype.kind == "c":
            same_nan = (np.isnan(got.real) == np.isnan(want.real)) & (np.isnan(got.imag) == np.isnan(want.imag))
        err = np.abs(got - want)
        close = (got == want) | (err <= atol + rtol * np.abs(want)) | np.isnan(err)
        if got.dtype.kind == "c":   # infinities compare part by part
            close |= (got.real == want.real) & ((got.imag == want.imag) | np.isnan(got.imag) & np.isnan(want.imag))
            close |= (got.imag == want.imag) & np.isnan(got.real) & np.isnan(want.real)
    bad = ~(same_nan & close)
    assert not bad.any(), f"{bad.sum()} differ; numjax {got[bad][:4]} JAX {want[bad][:4]}"


def _both(make):
    return jax.jit(make(jjnp, jlax)), nj.jit(make(njnp, nlax))


# functions whose corner cases (infinite, NaN, zero, huge or tiny parts) agree with XLA's
UNARY = {
    "abs": lambda m, l: m.abs, "sign": lambda m, l: m.sign, "exp": lambda m, l: m.exp,
    "log": lambda m, l: m.log, "sqrt": lambda m, l: m.sqrt, "rsqrt": lambda m, l: l.rsqrt,
    "sin": lambda m, l: m.sin, "cos": lambda m, l: m.cos, "tanh": lambda m, l: m.tanh,
    "expm1": lambda m, l: m.expm1, "log1p": lambda m, l: m.log1p, "conj": lambda m, l: m.conj,
    "neg": lambda m, l: m.negative, "real": lambda m, l: m.real, "imag": lambda m, l: m.imag,
    "to_bool": lambda m, l: (lambda z: z.astype(bool)),
}
# products overflow in intermediate steps differently (XLA fuses multiply-adds and flushes
# denormals), so these are compared where no intermediate overflows
BINARY = {
    "mul": lambda m, l: m.multiply, "div": lambda m, l: m.divide, "pow": lambda m, l: m.power,
    "add": lambda m, l: m.add, "eq": lambda m, l: m.equal, "ne": lambda m, l: m.not_equal,
    "less": lambda m, l: m.less, "greater_equal": lambda m, l: m.greater_equal,
    "maximum": lambda m, l: m.maximum, "minimum": lambda m, l: m.minimum,
    "square": lambda m, l: (lambda a, b: a ** 2 + b ** 3), "inv": lambda m, l: (lambda a, b: l.integer_pow(a, -2) * b),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_special_values(name):
    z = _grid(_EXTREME)
    j, n = _both(UNARY[name])
    _agree(n(z), j(z))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_special_values(name):
    a, b = _pairs(_SPECIAL if name in ("add", "eq", "ne", "less", "greater_equal", "maximum", "minimum",
                                       "div") else [0., -0., 1., -1., 0.5, -2.5, 3e-3, 7.])
    j, n = _both(BINARY[name])
    _agree(n(a, b), j(a, b), rtol=1e-4)


def test_division_by_zero_and_infinity():
    inf, nan = np.inf, np.nan
    num = np.array([1 + 1j, -2 + 0j, inf + 1j, 1 - inf * 1j, 1 + 1j, 0j, nan + 0j, inf + inf * 1j], np.complex64)
    den = np.array([0j, 0j, 2 + 1j, 3 + 1j, inf + 0j, 0j, 0j, 1 + 1j], np.complex64)
    j, n = _both(lambda m, l: m.divide)
    _agree(n(num, den), j(num, den))


def test_complex_program_matches_jax():
    def make(m, l):
        def f(z, w, x):
            a = z * w + m.conj(z) * 0.5
            b = a / (w + 1j) - m.exp(0.1j * z)
            c = l.dot_general(b.reshape(4, 5), w.reshape(4, 5), (((1,), (1,)), ((), ())))
            return m.abs(c), m.sort(b), m.sum(b * x), m.prod(a[:6]), m.cumsum(m.sqrt(b)), (m.abs(b) > 1) | (b == a)
        return f
    rng = np.random.default_rng(1)
    z, w = (rng.standard_normal((2, 20)) + 1j * rng.standard_normal((2, 20))).astype(np.complex64)
    x = rng.standard_normal(20).astype(np.float32)
    j, n = _both(make)
    for got, want in zip(n(z, w, x), j(z, w, x)):
        _agree(got, want, rtol=1e-4)


def test_grad_and_scan_match_jax():
    def make(m, l):
        def loss(x):
            z = x + 0.5j * x[::-1]

            def body(c, t):
                c = c * t + m.tanh(t) * 0.1j
                return c, m.abs(c)
            c, ys = l.scan(body, z[0], z)
            return m.real(c * m.conj(c)) + m.sum(ys)
        return jax.grad(loss) if m is jjnp else nj.grad(loss)
    x = np.linspace(-0.9, 0.9, 6).astype(np.float32)
    j, n = _both(make)
    _agree(n(x), j(x), rtol=1e-4, atol=1e-5)

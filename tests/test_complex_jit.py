"""Complex programs under jit: the complex rewrite (lowering/complex_parts.py) against eager.

EagerFallbackWarning is an error in this suite, so every test here also checks that the
program compiled (no op-by-op fallback)."""
import numpy as np
import pytest

import numjax as jax
import numjax.lax as lax
import numjax.numpy as jnp
from numjax.lowering import complex_parts
from numjax.lowering import compile as backend


def _cplx(shape, seed=0, dtype=np.complex64, scale=1.5):
    rng = np.random.default_rng(seed)
    return (scale * rng.standard_normal(shape) + 1j * scale * rng.standard_normal(shape)).astype(dtype)


def _close(got, want, rtol=3e-5, atol=3e-6):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want)
        return
    both_nan = np.isnan(got) & np.isnan(want)
    with np.errstate(all="ignore"):
        err = np.abs(got - want)
        ok = both_nan | (got == want) | (err <= atol + rtol * np.abs(want))
    assert ok.all(), f"max error {np.nanmax(np.where(ok, 0, err))}\n{got[~ok][:5]}\n{want[~ok][:5]}"


UNARY = {
    "neg": jnp.negative, "conj": jnp.conj, "real": jnp.real, "imag": jnp.imag, "abs": jnp.abs,
    "sign": jnp.sign, "exp": jnp.exp, "log": jnp.log, "sqrt": jnp.sqrt, "rsqrt": lax.rsqrt,
    "sin": jnp.sin, "cos": jnp.cos, "tanh": jnp.tanh, "expm1": jnp.expm1, "log1p": jnp.log1p,
    "square": lambda z: z ** 2, "cube": lambda z: z ** 3, "inv_square": lambda z: lax.integer_pow(z, -2),
    "to_f32": lambda z: lax.convert_element_type(z, np.float32), "to_bool": lambda z: z.astype(bool),
    "sum": lambda z: jnp.sum(z, axis=0), "prod": lambda z: jnp.prod(z, axis=1), "cumsum": jnp.cumsum,
    "transpose": lambda z: z.T[::-1], "reshape_pad": lambda z: jnp.pad(z.reshape(-1), (1, 2)),
    "slice_concat": lambda z: jnp.concatenate([z[1:], z[:1] * 2j]), "gather": lambda z: z[jnp.array([2, 0, 1])],
    "scatter_add": lambda z: z.at[0].add(z[1]), "scatter": lambda z: z.at[1, 2].set(3 - 1j),
    "dynamic_slice": lambda z: lax.dynamic_slice(z, (1, 1), (2, 3)),
    "sort": lambda z: jnp.sort(z.reshape(-1)), "from_real": lambda z: jnp.abs(z).astype(np.complex64) + 1j,
    "where": lambda z: jnp.where(jnp.abs(z) > 1, z, 1j * z),
    "nan_to_num": lambda z: jnp.nan_to_num(z / jnp.real(z)),
}


def _rewritten(fn, *args):
    """Asserts the program goes through the complex rewrite (not the Numba backend's path)."""
    closed = jax.make_jaxpr(fn)(*args)
    assert not complex_parts.uses_complex(complex_parts.to_parts_form(closed).jaxpr)
BINARY = {
    "add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "div": jnp.divide, "pow": jnp.power,
    "eq": jnp.equal, "ne": jnp.not_equal, "less": jnp.less, "greater_equal": jnp.greater_equal,
    "maximum": jnp.maximum, "minimum": jnp.minimum, "matmul": lambda a, b: a @ b.T,
    "complex": lambda a, b: jnp.real(a) + 1j * jnp.imag(b),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_unary_jit_matches_eager(name, dtype):
    z = _cplx((3, 4), dtype=dtype)
    z[0, 0] = 0.0
    z = jnp.asarray(z)
    _rewritten(UNARY[name], z)
    _close(jax.jit(UNARY[name])(z), UNARY[name](z))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_jit_matches_eager(name):
    a, b = _cplx((3, 4), 1), _cplx((3, 4), 2)
    b[1, 1] = a[1, 1]
    _rewritten(BINARY[name], a, b)
    _close(jax.jit(BINARY[name])(a, b), BINARY[name](a, b))


def test_division_corner_cases_match_numpy():
    inf, nan = np.inf, np.nan
    num = np.array([1 + 1j, inf + 1j, 1 + 1j, 0j, 2 - 3j, nan + 1j, 1e30 + 1e30j], np.complex64)
    den = np.array([0j, 2 + 1j, inf + 0j, 0j, 1e-30 + 1e-30j, 1 + 1j, 1e30 - 1e30j], np.complex64)
    got = np.asarray(jax.jit(jnp.divide)(num, den))
    with np.errstate(all="ignore"):
        want = num / den
    # numpy and XLA agree on these: infinities for a zero or finite denominator, zero for an
    # infinite one, and Smith's scaling where the naive formula overflows.
    assert np.all(np.isinf(got[:2].real) | np.isinf(got[:2].imag))
    assert got[2] == 0 and np.isnan(got[3].real)
    _close(got[4:], want[4:])


def test_rewrite_leaves_no_complex_values():
    z = _cplx((5,))
    closed = jax.make_jaxpr(lambda z, w: (jnp.exp(z) / w, jnp.abs(z * w)))(z, z)
    split = complex_parts.to_parts_form(closed)
    assert not complex_parts.uses_complex(split.jaxpr)
    assert [a.dtype for a in split.in_avals] == [np.float32] * 4
    exe = backend.compile_jaxpr(closed, "f")
    assert isinstance(exe, complex_parts.PartsExecutable)
    assert type(exe.inner).__module__.endswith("cpu_llvm")     # the LLVM backend, not Numba


def test_grad_through_complex_program():
    x = np.linspace(-1, 1, 7).astype(np.float32)

    def loss(x):
        z = x + 0.5j * x[::-1]
        w = jnp.sin(z) * jnp.exp(1j * z) / (z + 2)
        return jnp.sum(jnp.abs(w) ** 2) + jnp.real(jnp.sum(w * jnp.conj(z)))
    _close(jax.jit(jax.grad(loss))(x), jax.grad(loss)(x), rtol=1e-4, atol=1e-5)


def test_grad_of_complex_argument():
    z = _cplx((6,))
    f = lambda z: jnp.sum(jnp.abs(jnp.log(z) * z) ** 2)     # noqa: E731
    _close(jax.jit(jax.grad(f))(z), jax.grad(f)(z), rtol=1e-4, atol=1e-5)


def test_optax_like_complex_adam_step():
    def adam(params, grads, mu, nu, count, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
        mu = b1 * mu + (1 - b1) * grads
        nu = b2 * nu + (1 - b2) * jnp.real(grads * jnp.conj(grads))
        count = count + 1
        mu_hat = mu / (1 - b1 ** count)
        nu_hat = nu / (1 - b2 ** count)
        return params - lr * mu_hat / (jnp.sqrt(nu_hat) + eps), mu, nu, count

    def loss(p):
        return jnp.sum(jnp.abs(p * (1 + 2j) - 3j) ** 2)

    def step(p, mu, nu, count):
        return adam(p, jnp.conj(jax.grad(loss)(p)), mu, nu, count)
    p = _cplx((4,))
    state = (p, np.zeros(4, np.complex64), np.zeros(4, np.float32), np.int32(0))
    jstep = jax.jit(step)
    want, got = state, state
    for _ in range(3):
        want, got = step(*want), jstep(*got)
    for g, w in zip(got, want):
        _close(g, w, rtol=1e-4, atol=1e-6)


def test_cond_with_complex_operands():
    def f(z, k):
        return lax.cond(k > 0, lambda z: z * (1 + 1j), lambda z: jnp.conj(z) / 2, z)
    z = _cplx((4,))
    for k in (1, -1):
        _close(jax.jit(f)(z, k), f(z, k))


def test_scan_with_complex_carry():
    def f(z0, xs):
        def body(c, x):
            c = c * x + 0.5j
            return c, jnp.abs(c) + jnp.real(x)
        return lax.scan(body, z0, xs)
    z0, xs = _cplx((3,)), _cplx((5, 3), 1, scale=0.5)
    got, want = jax.jit(f)(z0, xs), f(z0, xs)
    _close(got[0], want[0])
    _close(got[1], want[1])


def test_while_with_complex_carry():
    def f(z):
        return lax.while_loop(lambda c: jnp.abs(c[0]).max() < 10, lambda c: (c[0] * (1.1 + 0.3j), c[1] + 1),
                              (z, 0))
    z = _cplx((3,), scale=0.5)
    got, want = jax.jit(f)(z), f(z)
    _close(got[0], want[0])
    assert int(got[1]) == int(want[1])


def test_complex_constant_and_scalar_output():
    c = _cplx((4,), 3)
    f = lambda z: (jnp.sum(z * c), jnp.vdot(z, c))    # noqa: E731
    z = _cplx((4,))
    for g, w in zip(jax.jit(f)(z), f(z)):
        _close(g, w)


def test_fft_program_still_compiles():
    z = _cplx((8,))
    f = lambda z: jnp.fft.fft(z) * 2    # noqa: E731
    with pytest.raises(NotImplementedError):     # fft keeps the Numba backend's complex path
        complex_parts.to_parts_form(jax.make_jaxpr(f)(z))
    _close(jax.jit(f)(z), f(z), rtol=1e-4, atol=1e-5)

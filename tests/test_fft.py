"""jnp.fft and lax.fft: values vs numpy.fft, dtypes as JAX (float32 -> complex64), gradients of
every FFT type (through real/imaginary parts), vmap, and jit through rocket-fft."""
import warnings

import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax.test_util import check_grads

RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 6, 5)).astype(np.float32)
Y = RNG.standard_normal((4, 6, 5)).astype(np.float32)
Z = (X + 1j * Y).astype(np.complex64)

_1D = [("fft", Z), ("ifft", Z), ("rfft", X), ("irfft", Z), ("hfft", Z), ("ihfft", X)]
_1D_KW = [{}, {"n": 4}, {"n": 8, "axis": 1}, {"axis": 0}]
_ND = [("fft2", Z), ("ifft2", Z), ("rfft2", X), ("irfft2", Z), ("fftn", Z), ("ifftn", Z), ("rfftn", X),
       ("irfftn", Z)]
_ND_KW = [{}, {"axes": (0, 2)}, {"s": (3, 4), "axes": (2, 0)}]


def _close(got, want, tol=1e-4):
    got = np.asarray(got)
    assert got.shape == want.shape
    scale = max(1.0, float(np.max(np.abs(want))))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("name,arg", _1D, ids=[n for n, _ in _1D])
def test_1d_vs_numpy(name, arg, norm):
    for kw in _1D_KW:
        _close(getattr(jnp.fft, name)(arg, norm=norm, **kw), getattr(np.fft, name)(arg, norm=norm, **kw))


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("name,arg", _ND, ids=[n for n, _ in _ND])
def test_nd_vs_numpy(name, arg, norm):
    for kw in _ND_KW:
        _close(getattr(jnp.fft, name)(arg, norm=norm, **kw), getattr(np.fft, name)(arg, norm=norm, **kw))


def test_dtypes_as_jax():
    assert jnp.fft.fft(X).dtype == np.complex64
    assert jnp.fft.rfft(np.arange(4)).dtype == np.complex64
    assert jnp.fft.irfft(Z).dtype == np.float32
    assert jnp.fft.hfft(Z).dtype == np.float32
    assert jnp.fft.fftfreq(4).dtype == np.float32


def test_helpers_vs_numpy():
    for n, d in [(7, 0.5), (8, 1.0), (1, 2.0)]:
        _close(jnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d))
        _close(jnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d))
    for axes in [None, 1, (0, 2)]:
        _close(jnp.fft.fftshift(X, axes), np.fft.fftshift(X, axes))
        _close(jnp.fft.ifftshift(X, axes), np.fft.ifftshift(X, axes))


def test_errors():
    with pytest.raises(ValueError, match="Shape and axes have different lengths"):
        jnp.fft.fftn(Z, s=(2, 3), axes=(0,))
    with pytest.raises(ValueError, match="only supports 1D, 2D, and 3D FFTs"):
        jnp.fft.fftn(np.zeros((2, 2, 2, 2), np.complex64))
    with pytest.raises(ValueError, match='Invalid norm value'):
        jnp.fft.fft(Z, norm="bogus")
    with pytest.raises(ValueError, match="does not support multiple axes"):
        jnp.fft.fft(Z, axis=(0, 1))


def _real_fn(fn, complex_in):
    """fn as a map between real arrays: complex inputs from (re, im), complex outputs as (re, im)."""
    def g(re, im):
        v = re.astype(jnp.complex64) + 1j * im.astype(jnp.complex64) if complex_in else re + 0 * im
        out = fn(v)
        return (jnp.real(out), jnp.imag(out)) if out.dtype.kind == "c" else out
    return g


_GRAD_CASES = [("fft", lambda v: jnp.fft.fft(v, norm="ortho"), True),
               ("ifft2", lambda v: jnp.fft.ifft2(v), True),
               ("rfft", lambda v: jnp.fft.rfft(v, n=6, axis=1), False),
               ("rfftn", lambda v: jnp.fft.rfftn(v), False),
               ("irfft_even", lambda v: jnp.fft.irfft(v, n=8), True),
               ("irfft_odd", lambda v: jnp.fft.irfftn(v, s=(6, 7), axes=(0, 2)), True)]


@pytest.mark.parametrize("name,fn,complex_in", _GRAD_CASES, ids=[c[0] for c in _GRAD_CASES])
def test_grads(name, fn, complex_in):
    check_grads(_real_fn(fn, complex_in), (X, Y), 1, modes=("fwd", "rev"))


def test_vmap_vs_loop():
    fn = lambda v: jnp.fft.rfft2(v, axes=(0, 1))  # noqa: E731
    out = np.asarray(jax.vmap(fn, in_axes=1)(X))
    for i in range(X.shape[1]):
        _close(out[i], np.asarray(fn(X[:, i])), 1e-5)


def _jit_no_fallback(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = jax.jit(fn)(*args)
    fallback = [str(w.message) for w in caught if "runs eagerly" in str(w.message)]
    assert not fallback, f"jit fell back to eager: {fallback[0]}"
    return out


def test_jit_compiles_fft_programs():
    # One program with every FFT type (one compile), through rocket-fft.
    def fn(x, z):
        return (jnp.fft.fft(z), jnp.fft.ifftn(z, axes=(0, 2)), jnp.fft.rfft2(x) * 2,
                jnp.fft.irfft(z, n=7, norm="ortho"))
    eager, jitted = fn(X, Z), _jit_no_fallback(fn, X, Z)
    for e, j in zip(eager, jitted):
        assert e.dtype == j.dtype
        _close(j, np.asarray(e), 1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("name,fn,complex_in", _GRAD_CASES, ids=[c[0] for c in _GRAD_CASES])
def test_jit_grad(name, fn, complex_in):
    g = jax.grad(lambda re, im: sum(jnp.sum(jnp.sin(o)) for o in jax.tree_util.tree_leaves(
        _real_fn(fn, complex_in)(re, im))), argnums=(0, 1))
    eager, jitted = g(X, Y), _jit_no_fallback(g, X, Y)
    for e, j in zip(eager, jitted):
        _close(j, np.asarray(e), 1e-4)

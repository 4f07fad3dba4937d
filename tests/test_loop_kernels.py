"""Loops compiled as one kernel (lowering/kernel_program.py): matrix-vector products in
scan/fori/while bodies (rows reduced several at a time, or scaled rows) against numpy loops in
float64, and the program text showing the loop inside the kernel (no driver call per step)."""
import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax import lax

RNG = np.random.default_rng(1414)


def _rand(shape, dtype=np.float32, scale=1.0, rng=RNG):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def _source(f, *args):
    return jax.jit(f).lower(*args).compile().executable.source


def _driver(src):
    return src[src.index("# ---- program"):]


def _kernel_loop_only(src):
    """The scan/while loop runs inside a kernel: the driver has no loop and no step function."""
    driver = _driver(src)
    assert "for " not in driver and "while " not in driver and "_s0(" not in driver
    assert "for s" in src or "while p" in src


def _rnn_reference(step, h0, xs):
    h, ys = h0.astype(np.float64), []
    for x in xs.astype(np.float64):
        h = step(h, x)
        ys.append(h.sum())
    return h, np.array(ys)


# Each: (jnp step, numpy step, W shape, U shape); h has the hidden size, x the input size.
FORMS = {
    "W@h": (lambda W, U, h, x: jnp.tanh(W @ h + U @ x), lambda W, U, h, x: np.tanh(W @ h + U @ x)),
    "h@W": (lambda W, U, h, x: jnp.tanh(h @ W + x @ U), lambda W, U, h, x: np.tanh(h @ W + x @ U)),
    "W.T@h": (lambda W, U, h, x: jnp.tanh(W.T @ h + jnp.dot(x, U.T)),
              lambda W, U, h, x: np.tanh(W.T @ h + x @ U.T)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("hidden, inp", [(64, 64), (13, 7), (1, 3), (6, 1), (130, 5)])
def test_scan_rnn_matches_numpy(request, dtype, form, hidden, inp):
    if dtype == np.float64:
        request.getfixturevalue("x64")
    jstep, nstep = FORMS[form]
    # Scaled by 1/sqrt(fan-in): a gain below one, so rounding is not amplified step to step.
    # Data of its own per case (the same whatever ran before).
    rng = np.random.default_rng(hidden * 1000 + inp)
    W = _rand((hidden, hidden), dtype, 0.9 / np.sqrt(hidden), rng)
    U = _rand((inp, hidden) if form == "h@W" else (hidden, inp), dtype, 0.9 / np.sqrt(inp), rng)
    xs, h0 = _rand((9, inp), dtype, rng=rng), _rand((hidden,), dtype, rng=rng)

    def f(W, U, xs, h0):
        def step(h, x):
            h = jstep(W, U, h, x)
            return h, h.sum()
        return lax.scan(step, h0, xs)

    _kernel_loop_only(_source(f, W, U, xs, h0))
    h, ys = jax.jit(f)(W, U, xs, h0)
    rh, rys = _rnn_reference(lambda h, x: nstep(W.astype(np.float64), U.astype(np.float64), h, x), h0, xs)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(np.asarray(h), rh, rtol=tol, atol=tol)
    np.testing.assert_allclose(np.asarray(ys), rys, rtol=tol, atol=tol * hidden)
    assert np.asarray(h).dtype == dtype
    eager_h, _ = f(jnp.asarray(W), jnp.asarray(U), jnp.asarray(xs), jnp.asarray(h0))
    np.testing.assert_allclose(np.asarray(eager_h), rh, rtol=tol, atol=tol)


def test_reverse_scan_and_matrix_carry():
    # The matrix itself is a carry (updated each step) and the scan runs backwards.
    A0, v = _rand((5, 6), scale=0.5), _rand((6,))
    xs = _rand((4, 5))

    def f(A0, v, xs):
        def step(A, x):
            y = A @ v
            return A + 0.1 * jnp.outer(x, v), y
        return lax.scan(step, A0, xs, reverse=True)

    _kernel_loop_only(_source(f, A0, v, xs))
    A, ys = jax.jit(f)(A0, v, xs)
    rA, rys = A0.astype(np.float64), [None] * 4
    for t in reversed(range(4)):
        rys[t] = rA @ v
        rA = rA + 0.1 * np.outer(xs[t], v)
    np.testing.assert_allclose(np.asarray(A), rA, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(ys), np.array(rys), rtol=1e-5, atol=1e-5)


def test_fori_loop_power_iteration():
    M = _rand((11, 11))
    M = M @ M.T + 11 * np.eye(11, dtype=np.float32)
    v0 = np.ones(11, np.float32)

    def f(M, v):
        return lax.fori_loop(0, 30, lambda i, v: (M @ v) / jnp.linalg.norm(M @ v), v)

    _kernel_loop_only(_source(f, M, v0))
    got = np.asarray(jax.jit(f)(M, v0))
    ref = v0.astype(np.float64)
    for _ in range(30):
        ref = M @ ref / np.linalg.norm(M @ ref)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def _newton_sqrt(a):
    def cond(c):
        return jnp.abs(c[1]) > 1e-6 * a

    def body(c):
        x = c[0]
        nx = 0.5 * (x + a / x)
        return nx, nx - x
    return lax.while_loop(cond, body, (a, a))[0]


def _newton_reference(a):
    """The same iteration in numpy, in ``a``'s dtype."""
    x, dx = a, a
    while abs(dx) > a.dtype.type(1e-6) * a:
        nx = a.dtype.type(0.5) * (x + a / x)
        x, dx = nx, nx - x
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_while_newton_scalar_and_vmapped(request, dtype):
    if dtype == np.float64:
        request.getfixturevalue("x64")
    tol = 4e-7 if dtype == np.float32 else 1e-14
    a = np.asarray(2.5, dtype)
    _kernel_loop_only(_source(_newton_sqrt, a))
    got = jax.jit(_newton_sqrt)(a)
    assert np.asarray(got).dtype == dtype
    np.testing.assert_allclose(np.asarray(got), _newton_reference(a[()]), rtol=tol)
    vals = RNG.uniform(0.1, 100.0, 257).astype(dtype)
    vmapped = jax.vmap(_newton_sqrt)
    _kernel_loop_only(_source(vmapped, vals))
    np.testing.assert_allclose(np.asarray(jax.jit(vmapped)(vals)), [_newton_reference(v) for v in vals], rtol=tol)


def test_grad_through_scan_with_matvec():
    W, xs, h0 = _rand((8, 8), np.float32, 0.3), _rand((5, 8)), _rand((8,))

    def loss(W, h0):
        h, _ = lax.scan(lambda h, x: (jnp.tanh(W @ h + x), None), h0, xs)
        return jnp.sum(h)

    gW, gh = jax.jit(jax.grad(loss, argnums=(0, 1)))(W, h0)
    eps = 1e-3
    W64, h64 = W.astype(np.float64), h0.astype(np.float64)

    def ref(W, h):
        for x in xs:
            h = np.tanh(W @ h + x)
        return h.sum()

    num = np.zeros_like(W64)
    for i in range(8):
        for j in range(8):
            d = np.zeros_like(W64)
            d[i, j] = eps
            num[i, j] = (ref(W64 + d, h64) - ref(W64 - d, h64)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(gW), num, rtol=1e-3, atol=1e-4)
    assert np.asarray(gh).shape == (8,)


def test_matvec_forms_in_the_kernel_text():
    # W @ h: rows reduced four at a time (eight from 128 columns); h @ W: the rows of W scaled and added (no column
    # walk down W).  Both inside the one scan kernel.
    W, h0, xs = _rand((8, 8)), _rand((8,)), _rand((3, 8))
    rows = _source(lambda W, h0, xs: lax.scan(lambda h, x: (W @ h + x, None), h0, xs)[0], W, h0, xs)
    assert "acc" in rows and "_3 = sh.dot_step(" in rows
    _kernel_loop_only(rows)
    scaled = _source(lambda W, h0, xs: lax.scan(lambda h, x: (h @ W + x, None), h0, xs)[0], W, h0, xs)
    kernel = scaled[:scaled.index("# ---- program")]
    assert "_3 = sh.dot_step(" not in kernel and "] = sh.dot_step(" in kernel

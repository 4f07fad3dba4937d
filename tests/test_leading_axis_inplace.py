"""Elementwise regions writing over an input that dies with them (lowering/buffer_reuse.py),
as softmax over axis 0 divides its exponentials in place: the results stay right wherever
the input is still read afterwards (another region, a view, the program's results)."""
import re

import numpy as np

import numjax
import numjax.numpy as jnp
from helpers import jit_compiled


def _x(shape=(300, 40), seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _driver(f, *args):
    return numjax.jit(f).lower(*args).compile().as_text().split("# ---- program")[1]


# A result bound to an input's buffer (``v7 = v5``), not to a buffer of its own (``v7 = o6``).
_IN_PLACE = re.compile(r"^\s+v\d+ = v\d+$", re.M)


def test_softmax_over_axis0_divides_in_place():
    x = _x()
    f = lambda a: numjax.nn.softmax(a, axis=0)             # noqa: E731
    # The division's result is bound to the exponentials' buffer.
    assert _IN_PLACE.search(_driver(f, x))
    e = np.exp(x - x.max(0))
    np.testing.assert_allclose(np.asarray(jit_compiled(f, x)), e / e.sum(0), rtol=2e-6, atol=1e-7)


def test_an_input_read_by_a_later_region_is_not_overwritten():
    x = _x(seed=1)

    def f(a):
        e = jnp.exp(a)
        p = e / jnp.sum(e, axis=0)      # could divide in place, but for the last line
        return p.T.T + e                # (a node in between: a region of its own)
    lines = _driver(f, x).splitlines()
    in_place = [k for k, line in enumerate(lines) if _IN_PLACE.match(line)]
    # Only the last region, e's last reader, writes over e.
    assert in_place and min(in_place) > max(k for k, line in enumerate(lines) if ".T)" in line)
    e = np.exp(x)
    np.testing.assert_allclose(np.asarray(jit_compiled(f, x)), e / e.sum(0) + e, rtol=2e-6)


def test_a_view_read_later_is_not_overwritten():
    x = _x(seed=2)

    def f(a):
        e = jnp.exp(a - jnp.max(a, axis=0))
        view = e.reshape(-1)      # a view of e's buffer, read after the division
        q = e / jnp.sum(e, axis=0)
        return q, view[:7] + 1.0
    q, head = (np.asarray(r) for r in jit_compiled(f, x))
    e = np.exp(x - x.max(0))
    np.testing.assert_allclose(q, e / e.sum(0), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(head, e.reshape(-1)[:7] + 1, rtol=1e-6)


def test_arguments_are_never_written():
    x = _x(seed=3)
    before = x.copy()
    out = np.asarray(jit_compiled(lambda a: jnp.sin(a) * 2.0 + a, x))
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(out, np.sin(before) * 2 + before, rtol=1e-6, atol=1e-6)


def test_chains_and_repeated_calls():
    # Each step writes over the one before; results of earlier calls stay as they were.
    x = _x((200, 64), seed=4)

    def f(a):
        t = jnp.exp(a - jnp.max(a, axis=0))
        t = t / jnp.sum(t, axis=0)
        t = t * 3.0 + 1.0
        return jnp.sqrt(t)
    g = numjax.jit(f)
    first = np.asarray(g(x)).copy()
    keep = g(x)
    for _ in range(3):
        g(x + 1.0)
    np.testing.assert_array_equal(np.asarray(keep), first)
    e = np.exp(x - x.max(0))
    np.testing.assert_allclose(first, np.sqrt(e / e.sum(0) * 3 + 1), rtol=2e-6)


def test_results_stored_into_several_inputs():
    # The gradient's program has regions with two dying inputs and two results, one a copy of
    # the first input stored into the second's buffer: the loads must all come first (the
    # kernel stores through the inputs' own parameters, which are noalias).
    x, w = np.full((3, 3), 0.5, np.float32), (np.arange(9.0).reshape(3, 3) / 9).astype(np.float32)

    def f(a, b):
        y = jnp.sin(a @ b)
        z = jnp.tanh(y @ b.T)
        return (jnp.cos(z) * a).sum() + jnp.einsum("ij,ij->i", y, z).sum()
    grad = numjax.grad(f, argnums=(0, 1))
    for got, want in zip(jit_compiled(grad, x, w), grad(jnp.asarray(x), jnp.asarray(w))):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=1e-6)


def test_debug_python_kernels_write_in_place_too():
    # numjax_debug_python runs the kernels as Python: the result is stored into the input.
    x = _x((100, 8), seed=5)
    f = lambda a: numjax.nn.softmax(a, axis=0)             # noqa: E731
    numjax.config.update("numjax_debug_python", True)
    try:
        got = np.asarray(numjax.jit(f)(x))
    finally:
        numjax.config.update("numjax_debug_python", False)
    e = np.exp(x - x.max(0))
    np.testing.assert_allclose(got, e / e.sum(0), rtol=2e-6, atol=1e-7)

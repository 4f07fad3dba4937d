"""Differential tests: numjax against real JAX on vmap, control flow and pmap (1 device).

Each case is written once as ``build(jax, jnp, lax) -> function`` and built with
both libraries; results must agree in value, dtype and weak type. Run with
``tox -e compat`` (or real JAX importable plus numjax on the path).
"""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402
from jax import lax as jlax  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402
from numjax import lax as njlax  # noqa: E402

LIBS = {"jax": (jax, jjnp, jlax), "numjax": (nj, njnp, njlax)}

rng = np.random.default_rng(0)
X3 = rng.standard_normal(3).astype(np.float32)
M = rng.standard_normal((4, 3)).astype(np.float32)
XS = rng.standard_normal((6,)).astype(np.float32)
W33 = rng.standard_normal((3, 3)).astype(np.float32)
PREDS = np.array([True, False, True, False])
IDX = np.array([-1, 0, 1, 5], np.int32)
SQ = np.array([2.0, 9.0, 0.25, 1e4], np.float32)
N4 = np.array([0, 1, 3, 5], np.int32)


def convolve_builder(J, jnp, lax):
    def convolve(x, w):
        return jnp.array([jnp.dot(x[i - 1:i + 2], w) for i in range(1, len(x) - 1)])
    return convolve


def b_vmap_convolve(J, jnp, lax):
    c = convolve_builder(J, jnp, lax)
    return lambda xs, ws, w: (J.vmap(c)(xs, ws), J.vmap(c, in_axes=1, out_axes=1)(xs.T, ws.T),
                              J.vmap(c, in_axes=[0, None])(xs, w))


def b_vmap_axes(J, jnp, lax):
    f = lambda m, v: jnp.tanh(m @ v) + jnp.sum(m, axis=1)  # noqa: E731
    return lambda ms, v: (J.vmap(f, in_axes=(2, None), out_axes=1)(ms, v),
                          J.vmap(f, in_axes=(-1, None), out_axes=-1)(ms, v))


def b_nested_vmap(J, jnp, lax):
    d = lambda x, y: jnp.sqrt(jnp.sum((x - y) ** 2))  # noqa: E731
    return lambda a, b: J.vmap(J.vmap(d, in_axes=(None, 0)), in_axes=(0, None))(a, b)


def b_per_example_grads(J, jnp, lax):
    def loss(w, b, x, y):
        p = 1.0 / (1.0 + jnp.exp(-(jnp.dot(x, w) + b)))
        return -(y * jnp.log(p) + (1.0 - y) * jnp.log(1.0 - p))
    return lambda w, b, xs, ys: J.vmap(J.grad(loss, argnums=(0, 1)), in_axes=(None, None, 0, 0))(w, b, xs, ys)


def b_cond_vmap(J, jnp, lax):
    def f(p, x):
        return lax.cond(p, lambda o: {"a": o[0] * 2.0, "b": jnp.sin(o[1])},
                        lambda o: {"a": o[0] - 1.0, "b": jnp.cos(o[1]) * o[0][0]}, (x, x[1]))
    return lambda preds, m: (J.vmap(f)(preds, m), J.vmap(f, in_axes=(None, 0))(True, m),
                             J.vmap(J.grad(lambda p, x: jnp.sum(f(p, x)["a"] ** 2) + f(p, x)["b"], argnums=1))(preds, m))


def b_switch_vmap(J, jnp, lax):
    f = lambda i, x: lax.switch(i, [jnp.sin, lambda v: v * 3.0, jnp.exp], x)  # noqa: E731
    return lambda idx, m: (J.vmap(f)(idx, m), J.vmap(f, in_axes=(0, None))(idx, m[0]),
                           J.vmap(J.grad(lambda i, x: jnp.sum(f(i, x)), argnums=1), in_axes=(0, 0))(idx, m))


def b_scan_rnn(J, jnp, lax):
    def rnn(w, h0, xs):
        def step(h, x):
            h = jnp.tanh(w @ h + x)
            return h, jnp.sum(h)
        return lax.scan(step, h0, xs)

    def loss(w, h0, xs):
        h, ys = rnn(w, h0, xs)
        return jnp.sum(h ** 2) + jnp.sum(ys)
    return lambda w, h0, xs: (rnn(w, h0, xs), J.grad(loss, argnums=(0, 1, 2))(w, h0, xs),
                              J.vmap(rnn, in_axes=(None, 0, None))(w, xs[:2], xs))


def b_scan_reverse_tree(J, jnp, lax):
    def f(xs):
        return lax.scan(lambda c, x: ({"s": c["s"] + x, "k": c["k"] + 1}, (c["s"] * x, {"neg": -x})),
                        {"s": jnp.float32(0.0), "k": 0}, xs, reverse=True)
    return lambda xs, m: (f(xs), J.vmap(f)(m), J.jvp(lambda v: f(v)[1], (xs,), (jnp.ones_like(xs),)))


def b_while_vmap(J, jnp, lax):
    def newton(a):
        return lax.while_loop(lambda c: (jnp.abs(c[0] * c[0] - a) > 1e-6 * a) & (c[1] < 100),
                              lambda c: (0.5 * (c[0] + a / c[0]), c[1] + 1), (a, 0))

    def power(x, n):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * x), (0, jnp.ones_like(x)))[1]
    return lambda sq, m, n4: (J.vmap(newton)(sq), J.vmap(power)(m, n4),
                              J.jvp(lambda a: J.vmap(newton)(a)[0], (sq,), (jnp.ones_like(sq),)))


def b_fori(J, jnp, lax):
    f = lambda x: lax.fori_loop(0, 5, lambda i, c: c * x + i, jnp.ones_like(x))  # noqa: E731
    g = lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 0.5 + x, x)  # noqa: E731
    return lambda x, m: (f(x), J.grad(lambda v: jnp.sum(f(v)))(x), J.vmap(f)(m), g(x, 3),
                         J.vmap(g)(m, jnp.array([0, 1, 2, 3])), lax.fori_loop(0, 3, lambda i, c: c + 0.5, 0))


def b_map_select(J, jnp, lax):
    return lambda m: (lax.map(lambda v: (v ** 2, jnp.sum(v)), m), lax.select(m > 0, m, -m),
                      J.vmap(lambda v: lax.map(jnp.cumsum, v.reshape(3, 1)))(m))


def b_collectives(J, jnp, lax):
    sh = [(0, 1), (1, 2), (2, 3), (3, 0)]

    def f(v):
        return (lax.psum(v, "i"), lax.pmean(v, "i"), lax.pmax(v, "i"), lax.pmin(v, "i"),
                lax.all_gather(v, "i"), lax.all_gather(v, "i", tiled=True), lax.ppermute(v, "i", sh),
                lax.axis_index("i"))
    return lambda m: (J.vmap(f, axis_name="i")(m),
                      J.vmap(J.grad(lambda v: jnp.sum(v * lax.psum(v, "i"))), axis_name="i")(m))


def b_grad_of_vmap_cond(J, jnp, lax):
    f = lambda x: lax.cond(jnp.sum(x) > 0, lambda v: v * v, lambda v: -v, x)  # noqa: E731
    return lambda m: J.grad(lambda mm: jnp.sum(J.vmap(f)(mm) ** 2))(m)


def b_jit_vmap_control_flow(J, jnp, lax):
    def f(p, x):
        y = lax.cond(p, lambda v: v + 1.0, lambda v: v * 2.0, x)
        c, ys = lax.scan(lambda c, v: (c + v, c * v), 0.0, y)
        return c, ys, lax.fori_loop(0, 4, lambda i, a: a * 0.5 + c, 1.0)
    return lambda preds, m: J.jit(J.vmap(f))(preds, m)


def b_pmap_one_device(J, jnp, lax):
    c = convolve_builder(J, jnp, lax)
    return lambda xs, ws, m: (J.pmap(c)(xs[:1], ws[:1]),
                              J.pmap(lambda v: (lax.psum(v, "d"), lax.axis_index("d"), lax.all_gather(v, "d")),
                                     axis_name="d")(m[:1]),
                              J.pmap(lambda v, s: v * s, in_axes=(1, None), out_axes=1)(m[:, :1], 2.0),
                              J.pmap(lambda v: lax.scan(lambda c, x: (c + lax.psum(x, "d"), c), 0.0, v),
                                     axis_name="d")(m[:1]),
                              J.jit(J.pmap(lambda v: v / lax.psum(v, "d"), axis_name="d"))(m[:1] + 1.0))


CXS = np.stack([np.arange(5), np.arange(5) * 2])
CWS = np.stack([np.array([2., 3., 4.]), np.array([1., 0., -1.])])

CASES = {
    "vmap_convolve_seed": (b_vmap_convolve, (CXS, CWS, np.array([2., 3., 4.]))),
    "vmap_in_out_axes": (b_vmap_axes, (rng.standard_normal((2, 3, 5)).astype(np.float32), X3)),
    "nested_vmap": (b_nested_vmap, (M, M[:3] + 1.0)),
    "per_example_grads": (b_per_example_grads, (X3, np.float32(0.1), M, np.array([1., 0., 1., 1.], np.float32))),
    "cond_vmap": (b_cond_vmap, (PREDS, M)),
    "switch_vmap": (b_switch_vmap, (IDX, M)),
    "scan_rnn": (b_scan_rnn, (W33 * 0.5, X3, M)),
    "scan_reverse_tree": (b_scan_reverse_tree, (XS, M)),
    "while_vmap": (b_while_vmap, (SQ, M, N4)),
    "fori": (b_fori, (X3, M)),
    "map_select": (b_map_select, (M,)),
    "collectives": (b_collectives, (M,)),
    "grad_of_vmap_cond": (b_grad_of_vmap_cond, (M,)),
    "jit_vmap_control_flow": (b_jit_vmap_control_flow, (PREDS, M)),
    "pmap_one_device": (b_pmap_one_device, (CXS, CWS, M)),
}


def _leaves(lib, tree):
    return lib[0].tree_util.tree_leaves(tree)


@pytest.mark.parametrize("name", list(CASES))
def test_numjax_matches_jax(name):
    if name == "pmap_one_device" and (jax.local_device_count() != 1 or nj.local_device_count() != 1):
        pytest.skip("needs exactly one device in both libraries")
    build, args = CASES[name]
    want = build(*LIBS["jax"])(*args)
    got = build(*LIBS["numjax"])(*args)
    w, g = _leaves(LIBS["jax"], want), _leaves(LIBS["numjax"], got)
    assert len(g) == len(w), f"{name}: {len(g)} leaves vs JAX {len(w)}"
    for k, (gv, wv) in enumerate(zip(g, w)):
        ga, wa = np.asarray(gv), np.asarray(wv)
        assert ga.shape == wa.shape, f"{name} leaf {k}: shape {ga.shape} vs {wa.shape}"
        assert ga.dtype == wa.dtype, f"{name} leaf {k}: dtype {ga.dtype} vs {wa.dtype}"
        assert bool(getattr(gv, "weak_type", False)) == bool(getattr(wv, "weak_type", False)), \
            f"{name} leaf {k}: weak_type"
        np.testing.assert_allclose(ga, wa, rtol=2e-5, atol=2e-6, err_msg=f"{name} leaf {k}")

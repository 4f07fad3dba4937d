"""Control flow, gathers and scatters compiled as single LLVM kernels (lowering/kernel_program.py):
each program below must lower through the LLVM backend (no Numba per-program compile) and give
the values of op-by-op evaluation."""
import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax import lax

LLVM_MARK = "numjax program driver (LLVM backend)"

rng = np.random.default_rng(0)
M = rng.standard_normal((4, 5)).astype(np.float32)
V = rng.standard_normal(5).astype(np.float32)
XS = rng.standard_normal((6, 5)).astype(np.float32)
A3 = rng.standard_normal((2, 3, 4)).astype(np.float32)
IDX = np.array([3, 0, 9, -2, 4], np.int32)


def _swap_loop(a, b):
    return lax.fori_loop(0, 3, lambda i, c: (c[1], c[0] * 2.0), (a, b))


def _reshape_carry(x):
    # The body returns a view (reshape) of one carry as another carry.
    def body(i, c):
        a, b = c
        return b.reshape(5), (a * 2.0).reshape(5)
    return lax.fori_loop(0, 4, body, (x, x + 1.0))


def _nested(xs):
    def outer(h, x):
        h = lax.fori_loop(0, 3, lambda i, c: jnp.tanh(c + x * i.astype(jnp.float32)), h)
        return h, (h.sum(), h * 2.0)
    return lax.scan(outer, jnp.zeros(5, jnp.float32), xs)


def _while_dynamic(x, n):
    return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5 - 0.25), (jnp.int32(0), x))


def _switch(i, x):
    return lax.switch(i, [lambda y: y + 1.0, lambda y: jnp.sin(y), lambda y: y @ M.T @ M], x)


def _scan_dots(m, xs):
    def step(h, x):
        h = jnp.tanh(m @ h[:5] + jnp.concatenate([x[:2], x[3:]]).sum())
        hp = jnp.pad(h, (1, 0))
        return hp, (hp[::-1], jnp.einsum("i,j->ij", x, x)[1:3, ::2])
    return lax.scan(step, jnp.ones(5, jnp.float32), xs, reverse=True)


def _batched_dot_loop(a):
    def body(i, c):
        return jnp.einsum("bij,bkj->bik", c, a) * 0.1 + c
    return lax.fori_loop(0, 3, body, a[:, :, :3] @ jnp.ones((3, 4, 4))[0][:3, :4].T[:4, :3].T[:3, :4].T)


def _int_dot_loop(x):
    return lax.fori_loop(0, 2, lambda i, c: (c @ c) % 7, x)


def _dynamic_slices(x, i):
    def body(k, c):
        s = lax.dynamic_slice(c, (i + k, 1), (2, 3))
        return lax.dynamic_update_slice(c, s * -1.0, (k, 0))
    return lax.fori_loop(0, 3, body, x)


def _gather(x, i):
    return x[i], x[jnp.clip(i, 0, 4)], jnp.take(x, i, mode="fill", fill_value=-7.0), x.reshape(5, 1)[i, 0]


def _scatter(x, i):
    return (x.at[i].set(9.0), x.at[i].add(1.0), x.at[i].mul(2.0), x.at[i].min(-1.0), x.at[i].max(3.0),
            x.at[i].add(1.0, mode="drop"))


def _gather_rows(a, i):
    return a[:, jnp.clip(i, 0, 2)], a[1, i[:2] % 3, 2:], jnp.take_along_axis(a, jnp.zeros((2, 3, 1), jnp.int32), -1)


def _cond_scalar(x):
    return lax.cond(x.sum() > 0, lambda y: (y.max(), y * 2), lambda y: (y.min(), -y), x)


CASES = {
    "swap": (_swap_loop, (V, V * 3)),
    "reshape_carry": (_reshape_carry, (V,)),
    "nested": (_nested, (XS,)),
    "while_dynamic": (_while_dynamic, (V, np.int32(4))),
    "switch0": (_switch, (np.int32(0), V)),
    "switch1": (_switch, (np.int32(1), V)),
    "switch_clamped": (_switch, (np.int32(7), V)),
    "scan_dots": (_scan_dots, (M[:, :5], XS)),
    "int_dot_loop": (_int_dot_loop, (np.arange(9, dtype=np.int32).reshape(3, 3),)),
    "dynamic_slices": (_dynamic_slices, (M, np.int32(1))),
    "gather": (_gather, (V, IDX)),
    "scatter": (_scatter, (V, IDX)),
    "gather_rows": (_gather_rows, (A3, np.array([2, 0, 1], np.int32))),
    "cond_scalar": (_cond_scalar, (V,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_program_matches_eager(name):
    f, args = CASES[name]
    args = [jnp.asarray(a) for a in args]
    jf = jax.jit(f)
    assert LLVM_MARK in jf.lower(*args).as_text()
    got = jax.tree_util.tree_leaves(jf(*args))
    with jax.disable_jit():
        want = jax.tree_util.tree_leaves(f(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)


def test_grad_and_vmap_of_loops_lower_to_llvm():
    def loss(m, xs):
        h, ys = lax.scan(lambda h, x: (jnp.tanh(m @ h + x[:4]), h.sum()), jnp.zeros(4, jnp.float32), xs)
        return (h ** 2).sum() + ys.sum()
    xs = XS[:, :4]
    m = M[:, :4]
    g = jax.jit(jax.grad(loss))
    assert LLVM_MARK in g.lower(m, xs).as_text()
    with jax.disable_jit():
        want = jax.grad(loss)(m, xs)
    np.testing.assert_allclose(np.asarray(g(m, xs)), np.asarray(want), rtol=1e-4, atol=1e-6)
    vf = jax.jit(jax.vmap(lambda x: _while_dynamic(x, np.int32(3))))
    assert LLVM_MARK in vf.lower(M).as_text()
    got = jax.tree_util.tree_leaves(vf(M))
    with jax.disable_jit():
        want = jax.tree_util.tree_leaves(jax.vmap(lambda x: _while_dynamic(x, np.int32(3)))(M))
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5)


def test_loop_kernel_text_is_readable_kernel_language():
    src = jax.jit(_while_dynamic).lower(V, np.int32(4)).as_text()
    assert "while p" in src and "numba" not in src.split("# ---- program")[0].replace("numba.prange", "")


def test_random_keys_split_inside_a_loop():
    def f(key):
        def body(i, c):
            key, acc = c
            key, sub = jax.random.split(key)
            return key, acc + jax.random.normal(sub, (3,))
        return lax.fori_loop(0, 4, body, (key, jnp.zeros(3, jnp.float32)))
    key = jax.random.PRNGKey(42)
    jf = jax.jit(f)
    assert LLVM_MARK in jf.lower(key).as_text()
    got = jax.tree_util.tree_leaves(jf(key))
    with jax.disable_jit():
        want = jax.tree_util.tree_leaves(f(key))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))   # random bits exactly


def test_loop_with_large_matmul_runs_in_the_driver():
    # A body with a large matmul loops in the Python driver (its matmuls go to BLAS).
    w = jnp.asarray(rng.standard_normal((128, 128)).astype(np.float32) * 0.05)
    x = jnp.asarray(rng.standard_normal((128, 64)).astype(np.float32))

    def f(w, x):
        return lax.fori_loop(0, 3, lambda i, c: jnp.tanh(w @ c) + c[::-1] * 0.5, x)
    jf = jax.jit(f)
    src = jf.lower(w, x).as_text()
    assert LLVM_MARK in src and "def numjax_f_s0(" in src
    with jax.disable_jit():
        want = f(w, x)
    np.testing.assert_allclose(np.asarray(jf(w, x)), np.asarray(want), rtol=1e-5, atol=1e-5)

"""Typed PRNG keys, numjax against real JAX 0.10.2 in one process: pytree structure,
dtypes, printed reprs and key bits through jit, vmap, scan, cond and grad.

Each case is written once as ``case(jax, jnp, lax) -> value`` and run with both libraries;
results are compared through ``_describe``, which keeps keys' dtype, shape and data.
Run with ``tox -e compat`` (or real JAX importable plus numjax on the path).
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


def _describe(J, tree):
    """Structure string plus, per leaf, (dtype name, shape, values or key data)."""
    leaves, treedef = J.tree.flatten(tree)
    out = []
    for leaf in leaves:
        dtype = str(leaf.dtype)
        if dtype.startswith("key<"):
            out.append((dtype, tuple(leaf.shape), np.asarray(J.random.key_data(leaf)).tolist()))
        else:
            arr = np.asarray(leaf)
            out.append((dtype, arr.shape, np.round(arr.astype(np.float64), 5).tolist()))
    return str(treedef), out


def c_structure(J, jnp, lax):
    k = J.random.key(0)
    tree = {"key": k, "params": (jnp.ones(2), J.random.split(k, 3))}
    return J.tree.map(lambda x: x, tree)


def c_jit(J, jnp, lax):
    f = J.jit(lambda t: {"k": t["k"], "ks": J.random.split(t["k"], 3), "u": J.random.uniform(t["k"])})
    return f({"k": J.random.key(42)})


def c_jit_fold_in(J, jnp, lax):
    return J.jit(J.random.fold_in)(J.random.key(7), 11)


def c_vmap(J, jnp, lax):
    keys = J.random.split(J.random.key(1), 4)
    return (J.vmap(J.random.split)(keys), J.vmap(J.random.normal)(keys),
            J.vmap(lambda k: J.random.split(k), in_axes=-1, out_axes=-1)(keys))


def c_scan(J, jnp, lax):
    def step(key, x):
        key, sub = J.random.split(key)
        return key, (sub, J.random.normal(sub) * x)
    return lax.scan(step, J.random.key(3), jnp.arange(4.0))


def c_while_cond_fori(J, jnp, lax):
    k = J.random.key(5)
    w = lax.while_loop(lambda c: c[1] < 3, lambda c: (J.random.split(c[0])[0], c[1] + 1), (k, 0))
    c = lax.cond(False, lambda k: k, lambda k: J.random.split(k)[1], k)
    f = lax.fori_loop(0, 4, lambda i, c: J.random.fold_in(c, i), k)
    return w, c, f


def c_grad_with_key(J, jnp, lax):
    def loss(x, key):
        key, sub = J.random.split(key)
        return jnp.sum(x * J.random.normal(sub, x.shape)), key
    return J.grad(loss, has_aux=True)(jnp.ones(3), J.random.key(9))


def c_stack_index(J, jnp, lax):
    ks = J.random.split(J.random.key(2), 6).reshape(2, 3)
    return (jnp.stack([ks[0, 1], ks[1, 2]]), jnp.concatenate([ks[0], ks[1]]), ks.T[2],
            jnp.asarray(ks[1, 0] == ks[1, 0]), jnp.asarray(ks[0, 0] == ks[0, 1]))


CASES = [c_structure, c_jit, c_jit_fold_in, c_vmap, c_scan, c_while_cond_fori, c_grad_with_key,
         c_stack_index]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_keys_match_jax(case):
    got = _describe(nj, case(*LIBS["numjax"]))
    want = _describe(jax, case(*LIBS["jax"]))
    assert got == want


def test_reprs_and_dtypes_match_jax():
    for J in (jax, nj):
        assert J.dtypes.issubdtype(J.random.key(0).dtype, J.dtypes.prng_key)
    for build in (lambda J: J.random.key(0), lambda J: J.random.split(J.random.key(0))):
        assert repr(build(nj)) == repr(build(jax))
        assert str(build(nj).dtype) == str(build(jax).dtype)
    shapes = [J.eval_shape(lambda k: (J.random.split(k, 3), J.random.normal(k)), J.random.key(0))
              for J in (nj, jax)]
    assert repr(shapes[0]) == repr(shapes[1])
    trees = [J.tree.structure({"key": J.random.key(0)}) for J in (nj, jax)]
    assert str(trees[0]) == str(trees[1])


def test_vjp_key_cotangent_shape_matches_jax():
    shapes = []
    for J, jnp in ((nj, njnp), (jax, jjnp)):
        keys = J.random.split(J.random.key(0), 3)
        _, pullback = J.vjp(lambda k, x: x * J.vmap(J.random.normal)(k), keys, 2.0)
        shapes.append(np.shape(pullback(jnp.ones(3))[0]))
    assert shapes[0] == shapes[1]

"""Typed PRNG key arrays (``random.key``) are pytree leaves, as in JAX, and still pass
through every transformation: jit, vmap, grad/jvp/vjp, scan/while/cond/fori_loop,
custom_jvp/vjp, checkpoint, checkify, eval_shape, make_jaxpr, device_put.

Expected key bits are JAX 0.10.2's (also checked live by tests/compat/test_prng_keys_vs_jax.py).
"""
import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax import lax

KEY0 = jax.random.key(0)
# random.split(key(0)) and fold_in(key(0), 3) in JAX 0.10.2 (threefry, partitionable off).
SPLIT0 = np.array([[1797259609, 2579123966], [928981903, 3453687069]], np.uint32)


def _is_key(x, shape=()):
    return isinstance(x, jax.random.PRNGKeyArray) and x.shape == shape and str(x.dtype) == "key<fry>"


def _data(k):
    return np.asarray(jax.random.key_data(k))


# ---------------------------------------------------------------- pytree structure

def test_key_is_a_leaf():
    tree = {"k": KEY0, "x": jnp.ones(2)}
    leaves = jax.tree.leaves(tree)
    assert len(leaves) == 2 and leaves[0] is KEY0
    assert str(jax.tree.structure(tree)) == "PyTreeDef({'k': *, 'x': *})"
    assert jax.tree.map(lambda t: t.dtype, tree)["k"] == KEY0.dtype
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(tree)[0]]
    assert paths == ["['k']", "['x']"]
    assert jax.tree_util.treedef_is_leaf(jax.tree.structure(KEY0))


def test_key_dtype():
    assert str(KEY0.dtype) == "key<fry>" and repr(KEY0.dtype) == "key<fry>"
    assert jax.dtypes.issubdtype(KEY0.dtype, jax.dtypes.prng_key)
    assert not jax.dtypes.issubdtype(jnp.float32, jax.dtypes.prng_key)


def test_key_data_round_trip():
    keys = jax.random.split(KEY0)
    np.testing.assert_array_equal(_data(keys), SPLIT0)
    again = jax.random.wrap_key_data(jax.random.key_data(keys))
    assert _is_key(again, (2,))
    assert bool(jnp.all(again == keys))


def test_indexing_reshape_equality():
    ks = jax.random.split(KEY0, 6).reshape(2, 3)
    assert ks.shape == (2, 3) and ks[0].shape == (3,) and ks[:, 1].shape == (2,)
    assert ks.T.shape == (3, 2) and ks.ravel().shape == (6,)
    np.testing.assert_array_equal(_data(ks[1, 2]), _data(ks.ravel()[5]))
    k1, k2 = jax.random.split(KEY0)
    assert bool(k1 == k1) and not bool(k1 == k2) and bool(k1 != k2)


def test_jnp_array_stack_concatenate_of_keys():
    assert jnp.array(KEY0) is KEY0
    k1, k2 = jax.random.split(KEY0)
    stacked = jnp.stack([k1, k2])
    assert _is_key(stacked, (2,))
    np.testing.assert_array_equal(_data(stacked), SPLIT0)
    assert _is_key(jnp.stack([k1, k2], axis=-1), (2,))
    cat = jnp.concatenate([jax.random.split(k1, 3), jax.random.split(k2, 2)])
    assert _is_key(cat, (5,))
    np.testing.assert_array_equal(_data(cat)[:3], _data(jax.random.split(k1, 3)))
    assert _is_key(jnp.array([k1, k2]), (2,))


# ---------------------------------------------------------------- jit / eval_shape / make_jaxpr

def test_jit_keys_in_and_out():
    f = jax.jit(lambda tree: (tree["k"], jax.random.split(tree["k"]), jax.random.uniform(tree["k"])))
    k, ks, u = f({"k": KEY0})
    assert _is_key(k) and _is_key(ks, (2,))
    np.testing.assert_array_equal(_data(ks), SPLIT0)
    np.testing.assert_array_equal(np.asarray(u), np.asarray(jax.random.uniform(KEY0)))
    k, ks, u2 = f({"k": KEY0})            # cached call
    assert _is_key(ks, (2,)) and float(u2) == float(u)


def test_jit_fold_in_and_split_shapes():
    folded = jax.jit(jax.random.fold_in)(KEY0, 3)
    np.testing.assert_array_equal(_data(folded), _data(jax.random.fold_in(KEY0, 3)))
    ks = jax.jit(jax.random.split, static_argnums=1)(KEY0, 5)
    assert _is_key(ks, (5,))


def test_eval_shape_and_make_jaxpr():
    out = jax.eval_shape(lambda k: (jax.random.split(k, 3), jax.random.normal(k, (2,))), KEY0)
    assert out[0].shape == (3,) and str(out[0].dtype) == "key<fry>"
    assert out[1].shape == (2,) and out[1].dtype == np.float32
    # A key ShapeDtypeStruct (what eval_shape gives back) is accepted as an input.
    again = jax.eval_shape(jax.random.split, jax.ShapeDtypeStruct((), KEY0.dtype))
    assert again.shape == (2,) and str(again.dtype) == "key<fry>"
    closed = jax.make_jaxpr(lambda k: jax.random.uniform(k))(KEY0)
    assert len(closed.jaxpr.invars) == 1 and closed.out_avals[0].dtype == np.float32


def test_device_put_block_until_ready_device_get():
    assert _is_key(jax.device_put(KEY0))
    assert jax.block_until_ready({"k": KEY0})["k"] is KEY0
    assert _is_key(jax.device_get(KEY0))


# ---------------------------------------------------------------- vmap

def test_vmap_over_keys():
    keys = jax.random.split(KEY0, 3)
    samples = jax.vmap(jax.random.normal)(keys)
    expected = np.stack([np.asarray(jax.random.normal(k)) for k in keys])
    np.testing.assert_array_equal(np.asarray(samples), expected)
    split = jax.vmap(jax.random.split)(keys)
    assert _is_key(split, (3, 2))
    np.testing.assert_array_equal(_data(split[1]), _data(jax.random.split(keys[1])))


def test_vmap_negative_axes_count_key_dims():
    keys = jax.random.split(KEY0, 3)
    out = jax.vmap(lambda k: jax.random.split(k), in_axes=-1, out_axes=-1)(keys)
    assert _is_key(out, (2, 3))
    np.testing.assert_array_equal(_data(out[:, 0]), _data(jax.random.split(keys[0])))


def test_vmap_fold_in_under_jit():
    f = jax.jit(jax.vmap(jax.random.fold_in, in_axes=(None, 0)))
    out = f(KEY0, jnp.arange(4))
    assert _is_key(out, (4,))
    np.testing.assert_array_equal(_data(out[2]), _data(jax.random.fold_in(KEY0, 2)))


# ---------------------------------------------------------------- control flow

def test_scan_key_carry_and_outputs():
    def step(key, x):
        key, sub = jax.random.split(key)
        return key, (sub, jax.random.normal(sub) + x)
    final, (subs, vals) = lax.scan(step, KEY0, jnp.arange(3.0))
    assert _is_key(final) and _is_key(subs, (3,))
    key, expect = KEY0, []
    for i in range(3):
        key, sub = jax.random.split(key)
        expect.append(float(jax.random.normal(sub)) + i)
    np.testing.assert_allclose(np.asarray(vals), expect, rtol=1e-6)
    np.testing.assert_array_equal(_data(final), _data(key))


def test_scan_over_keys_as_xs():
    keys = jax.random.split(KEY0, 4)
    total, per = lax.scan(lambda c, k: (c + jax.random.uniform(k), k), 0.0, keys)
    assert _is_key(per, (4,))
    np.testing.assert_allclose(float(total), sum(float(jax.random.uniform(k)) for k in keys),
                               rtol=1e-6)


def test_while_cond_fori_with_keys():
    k, n = lax.while_loop(lambda c: c[1] < 3, lambda c: (jax.random.split(c[0])[0], c[1] + 1), (KEY0, 0))
    expect = KEY0
    for _ in range(3):
        expect = jax.random.split(expect)[0]
    assert _is_key(k) and int(n) == 3
    np.testing.assert_array_equal(_data(k), _data(expect))
    branch = lax.cond(True, lambda k: jax.random.split(k)[1], lambda k: k, KEY0)
    np.testing.assert_array_equal(_data(branch), SPLIT0[1])
    folded = lax.fori_loop(0, 3, lambda i, c: jax.random.fold_in(c, i), KEY0)
    expect = KEY0
    for i in range(3):
        expect = jax.random.fold_in(expect, i)
    np.testing.assert_array_equal(_data(folded), _data(expect))


# ---------------------------------------------------------------- autodiff

def _noisy(key, x):
    return x * jax.random.normal(key)


def test_grad_with_key_argument():
    g = jax.grad(_noisy, argnums=1)(KEY0, 2.0)
    np.testing.assert_allclose(float(g), float(jax.random.normal(KEY0)), rtol=1e-6)
    g = jax.jit(jax.grad(_noisy, argnums=1))(KEY0, 2.0)
    np.testing.assert_allclose(float(g), float(jax.random.normal(KEY0)), rtol=1e-6)
    with pytest.raises(TypeError, match="but got key<fry>"):
        jax.grad(_noisy)(KEY0, 2.0)


def test_grad_has_aux_returns_key():
    def loss(x, key):
        key, sub = jax.random.split(key)
        return x * jax.random.normal(sub), key
    g, key = jax.grad(loss, has_aux=True)(1.0, KEY0)
    assert _is_key(key)
    np.testing.assert_array_equal(_data(key), SPLIT0[0])


def test_vjp_jvp_linearize_key_tangents_have_key_shape():
    out, pullback = jax.vjp(_noisy, KEY0, 2.0)
    ct_key, ct_x = pullback(1.0)
    assert np.shape(ct_key) == () and float(ct_x) == float(jax.random.normal(KEY0))
    keys = jax.random.split(KEY0, 3)
    _, pullback = jax.vjp(lambda k, x: x * jax.vmap(jax.random.normal)(k), keys, 2.0)
    assert np.shape(pullback(jnp.ones(3))[0]) == (3,)
    primal, tangent = jax.jvp(_noisy, (KEY0, 2.0), (jnp.zeros(()), 1.0))
    np.testing.assert_allclose(float(tangent), float(jax.random.normal(KEY0)), rtol=1e-6)
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        jax.jvp(_noisy, (KEY0, 2.0), (jnp.zeros((2,)), 1.0))
    _, f_jvp = jax.linearize(_noisy, KEY0, 2.0)
    np.testing.assert_allclose(float(f_jvp(jnp.zeros(()), 1.0)), float(jax.random.normal(KEY0)),
                               rtol=1e-6)
    _, (key_out_tangent, _) = jax.jvp(lambda k, x: (k, x), (KEY0, 2.0), (jnp.zeros(()), 1.0))
    assert np.shape(key_out_tangent) == ()


def test_custom_jvp_and_vjp_with_key_argument():
    @jax.custom_jvp
    def scaled(x, key):
        return x * jax.random.uniform(key)

    @scaled.defjvp
    def scaled_jvp(primals, tangents):
        x, key = primals
        return scaled(x, key), tangents[0] * jax.random.uniform(key)

    np.testing.assert_allclose(float(jax.grad(scaled)(3.0, KEY0)),
                               float(jax.random.uniform(KEY0)), rtol=1e-6)

    @jax.custom_vjp
    def noisy(x, key):
        return x * jax.random.uniform(key)
    noisy.defvjp(lambda x, key: (noisy(x, key), key),
                 lambda key, g: (g * jax.random.uniform(key), None))
    np.testing.assert_allclose(float(jax.grad(noisy)(3.0, KEY0)),
                               float(jax.random.uniform(KEY0)), rtol=1e-6)


def test_checkpoint_and_checkify_with_keys():
    f = jax.checkpoint(lambda x, key: x * jax.random.normal(key))
    np.testing.assert_allclose(float(jax.grad(f)(1.0, KEY0)), float(jax.random.normal(KEY0)),
                               rtol=1e-6)
    from numjax.experimental import checkify

    def draws(key):
        checkify.check(jnp.all(jax.random.key_data(key) >= 0), "negative")
        return jax.random.split(key)
    err, out = checkify.checkify(draws)(KEY0)
    err.throw()
    assert _is_key(out, (2,))


def test_array_equal_of_keys_under_jit():
    k1, k2 = jax.random.split(KEY0)
    same = jax.jit(jnp.array_equal)
    assert bool(same(k1, k1)) and not bool(same(k1, k2))
    assert not bool(jnp.array_equal(jax.random.split(k1, 2), jax.random.split(k1, 3)))

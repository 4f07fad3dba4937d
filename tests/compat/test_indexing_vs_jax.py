"""Indexing differential tests: the same index expressions under real JAX and numjax.

Runs under ``tox -e compat``; skipped when JAX is not installed.  Compares values, dtypes,
weak types and shapes of getitem, ``.at[]`` updates, take/take_along_axis/put, their
gradients and vmaps, and the printed jaxprs of gather/scatter.
"""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402

jax.config.update("jax_enable_x64", False)

X = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5) - 50


def assert_same(nj_out, jax_out, what=""):
    j = jjnp.asarray(jax_out)
    assert nj_out.dtype == j.dtype, f"{what}: dtype {nj_out.dtype} != JAX {j.dtype}"
    assert bool(nj_out.weak_type) == bool(j.weak_type), f"{what}: weak_type differs from JAX"
    assert nj_out.shape == j.shape, f"{what}: shape {nj_out.shape} != JAX {j.shape}"
    np.testing.assert_allclose(np.asarray(nj_out), np.asarray(j), rtol=2e-6, atol=2e-6, err_msg=what)


# Each case is f(jnp, x) with jnp either numpy module; x is X as that library's array.
CASES = {
    "oob_int": lambda jnp, x: x[5, -7],
    "int_arrays_oob": lambda jnp, x: x[:, jnp.array([7, -1, -9])],
    "split_advanced": lambda jnp, x: x[:, jnp.array([0, 1]), :, jnp.array([[1], [4]])],
    "strided_neg": lambda jnp, x: x[1, ::-2, jnp.array([3, 0]), 1:4:2],
    "newaxis_mix": lambda jnp, x: x[None, ..., 0, None, jnp.array([1, 2])],
    "mask": lambda jnp, x: x[x[:, :, 0, 0] > -30],
    "bool_scalar": lambda jnp, x: x[0, True, False],
    "get_fill": lambda jnp, x: x.at[jnp.array([0, 2, -3]), 5].get(mode="fill", fill_value=7.),
    "get_fill_default": lambda jnp, x: x.at[jnp.array([0, 2, -3]), 5].get(mode="fill"),
    "get_clip": lambda jnp, x: x.at[jnp.array([0, 2, -3]), 5].get(mode="clip"),
    "set_scalar": lambda jnp, x: x.at[1, 2].set(3),
    "set_oob_dropped": lambda jnp, x: x.at[:, jnp.array([0, 3, -4])].set(9.),
    "set_clip": lambda jnp, x: x.at[:, jnp.array([0, 3, -4])].set(9., mode="clip"),
    "add_repeated": lambda jnp, x: x.at[jnp.array([1, 1, 0]), :, 2].add(jnp.ones((3, 3, 5))),
    "sub_slices": lambda jnp, x: x.at[..., ::-2].subtract(1.5),
    "mul_newaxis": lambda jnp, x: x.at[None, 0, 1:3].multiply(2),
    "min_max": lambda jnp, x: x.at[0, jnp.array([2, 2])].min(-45.).at[1, :, jnp.array([0, 0])].max(100.),
    "divide_int": lambda jnp, x: jnp.arange(6).at[jnp.array([1, 4])].divide(4),
    "power": lambda jnp, x: x.at[0, 0, 0].power(2.),
    "apply": lambda jnp, x: x.at[jnp.array([1, 1]), 0, 0].apply(jnp.cos),
    "int_update_cast": lambda jnp, x: jnp.arange(5, dtype=jnp.int8).at[1].add(200),
    "take_default": lambda jnp, x: jnp.take(x, jnp.array([[0, 200], [-1, 3]]), axis=2),
    "take_flat_wrap": lambda jnp, x: jnp.take(x, jnp.array([1000, -7]), mode="wrap"),
    "take_clip": lambda jnp, x: jnp.take(x, jnp.array([-1, 9]), axis=-1, mode="clip"),
    "take_along": lambda jnp, x: jnp.take_along_axis(x, jnp.argsort(x, axis=1)[:, :2], axis=1),
    "take_along_oob": lambda jnp, x: jnp.take_along_axis(x[0, 0, :3], jnp.array([[-1], [-6], [7]]), axis=-1),
    "put": lambda jnp, x: jnp.put(x[0, 0], jnp.array([1, 50, -1]), jnp.array([4., 5.]), inplace=False),
    "weak_operand": lambda jnp, x: jnp.asarray(2.).at[()].add(1.),
}


JIT_CASES = {"oob_int", "split_advanced", "strided_neg", "get_fill_default", "set_oob_dropped",
             "add_repeated", "apply", "take_default", "take_along", "put", "weak_operand"}


@pytest.mark.parametrize("name", list(CASES))
def test_indexing_matches_jax(name):
    fn = CASES[name]
    expected = fn(jjnp, jjnp.asarray(X))
    assert_same(fn(njnp, njnp.asarray(X)), expected, name)
    if name in JIT_CASES:
        assert_same(nj.jit(lambda x: fn(njnp, x))(njnp.asarray(X)), expected, name + " (jit)")


GRADS = {
    "gather_repeated": lambda jnp, x: (x[jnp.array([1, 1, 0]), :, jnp.array([3, 3, 9])] ** 2).sum(),
    "scatter_set": lambda jnp, x: (x.at[0, jnp.array([1, 1, 2])].set(x[1, :3] * 3) ** 2).sum(),
    "scatter_add": lambda jnp, x: jnp.sin(x.at[:, 0].add(x[:, 1] * x[:, 2])).sum(),
    "scatter_max": lambda jnp, x: (x.at[0, 0].max(x[1, 1] - 3.) ** 2).sum(),
    "take_along": lambda jnp, x: jnp.take_along_axis(x, jnp.argsort(x, axis=-1), axis=-1)[..., -1].sum(),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_grads_match_jax(name):
    fn = GRADS[name]
    x = X / 50
    expected = jax.grad(lambda a: fn(jjnp, a))(jjnp.asarray(x))
    assert_same(nj.grad(lambda a: fn(njnp, a))(njnp.asarray(x)), expected, name)


def test_vmap_matches_jax():
    def f(jnp, x, i):
        return x.at[i].add(1.)[i[::-1]] * x[jnp.array([0, 0])].sum()
    x, i = X.reshape(6, 4, 5)[:, 0], np.array([[1, 2], [3, 3], [4, 0], [-1, 9], [2, 2], [0, 1]])
    expected = jax.vmap(lambda a, b: f(jjnp, a, b))(jjnp.asarray(x), jjnp.asarray(i))
    assert_same(nj.vmap(lambda a, b: f(njnp, a, b))(njnp.asarray(x), njnp.asarray(i)), expected)


@pytest.mark.parametrize("fn", [
    lambda jnp: (lambda x: x[jnp.array([1, 2])]),
    lambda jnp: (lambda x: x.at[jnp.array([1, 2])].set(1.)),
    lambda jnp: (lambda x: x.at[2].mul(3.)),
    lambda jnp: (lambda x: x.at[jnp.array([2])].get(mode="fill")),
    lambda jnp: (lambda x: x[::-2]),
])
def test_jaxpr_text_matches_jax(fn):
    expected = str(jax.make_jaxpr(fn(jjnp))(jjnp.arange(5.)))
    assert str(nj.make_jaxpr(fn(njnp))(njnp.arange(5.))) == expected


def test_nonconcrete_mask_error_matches_jax():
    with pytest.raises(jax.errors.NonConcreteBooleanIndexError) as j:
        jax.jit(lambda x: x[x > 0])(jjnp.arange(3.))
    with pytest.raises(nj.errors.NonConcreteBooleanIndexError) as n:
        nj.jit(lambda x: x[x > 0])(njnp.arange(3.))
    assert str(n.value) == str(j.value)


# Indices outside int32's range (and the index-type rules around them), eager and under jit.
_U32 = [2**32 - 1, 2**31, 3]
WIDE_CASES = {
    "getitem_u32": (False, lambda jnp, x: x[jnp.array(_U32, jnp.uint32)]),
    "take_u32": (False, lambda jnp, x: jnp.take(x, jnp.array(_U32, jnp.uint32))),
    "take_i32_extremes": (False, lambda jnp, x: jnp.take(x, jnp.array([-1, 2**31 - 1, -2**31], jnp.int32))),
    "take_clip_u32": (False, lambda jnp, x: jnp.take(x, jnp.array(_U32, jnp.uint32), mode="clip")),
    "take_along_u32": (False, lambda jnp, x: jnp.take_along_axis(x, jnp.array(_U32, jnp.uint32), axis=0)),
    "get_fill_u32": (False, lambda jnp, x: x.at[jnp.array(_U32, jnp.uint32)].get(mode="fill")),
    "scalar_u32_2d": (False, lambda jnp, x: x.reshape(2, 2)[jnp.uint32(2**32 - 1)]),
    "scalar_u32_strided": (False, lambda jnp, x: x.reshape(2, 2)[jnp.uint32(2**32 - 1), ::2]),
    "put_i32": (False, lambda jnp, x: jnp.put(x, jnp.array([2**31 - 1, -2**31, -3], jnp.int32), 9.0, inplace=False)),
    "getitem_i64": (True, lambda jnp, x: x[jnp.array([2**62, 2**32 + 1, -1], jnp.int64)]),
    "take_i64": (True, lambda jnp, x: jnp.take(x, jnp.array([2**62, 2**32 + 1], jnp.int64))),
    "take_u64": (True, lambda jnp, x: jnp.take(x, jnp.array([2**64 - 1, 2**63, 1], jnp.uint64))),
    "at_add_i64": (True, lambda jnp, x: x.at[jnp.array([2**32 + 1], jnp.int64)].add(100.0)),
    "take_clip_i64": (True, lambda jnp, x: jnp.take(x, jnp.array([2**32 + 1, -2**40], jnp.int64), mode="clip")),
}


@pytest.mark.parametrize("name", sorted(WIDE_CASES))
def test_wide_indices_match_jax(name):
    x64, fn = WIDE_CASES[name]
    saved = (nj.config.jax_enable_x64, jax.config.jax_enable_x64)
    nj.config.update("jax_enable_x64", x64)
    jax.config.update("jax_enable_x64", x64)
    try:
        x_np = np.arange(4.0, dtype=np.float64 if x64 else np.float32)
        want = fn(jjnp, jjnp.asarray(x_np))
        assert_same(fn(njnp, njnp.asarray(x_np)), want, name)
        assert_same(nj.jit(lambda x: fn(njnp, x))(njnp.asarray(x_np)), want, name + " (jit)")
    finally:
        nj.config.update("jax_enable_x64", saved[0])
        jax.config.update("jax_enable_x64", saved[1])


def test_vmap_scalar_index_clamps_in_its_type_like_jax():
    x = np.array([[10, 11], [7, 8], [1, 2]], np.uint32)
    i = np.array([2**32 - 1, 2**31, 3], np.uint32)
    want = jax.vmap(lambda a, j: a[j])(x, i)
    assert_same(nj.vmap(lambda a, j: a[j])(x, i), want, "vmap")
    assert_same(nj.jit(nj.vmap(lambda a, j: a[j]))(x, i), want, "jit(vmap)")

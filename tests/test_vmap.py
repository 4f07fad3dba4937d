"""vmap: against a Python loop over the examples + stack, for many ops and axis specs.

Covers in_axes/out_axes (ints, negatives, None, tuple/list/dict pytree prefixes),
nested vmap, per-example gradients, jit(vmap), grad of vmap, named-axis
collectives (expected values computed once with real JAX 0.10.2 and committed
here as data), the seed tutorials' convolve examples, JAX's error messages,
and that batching yields batched primitives (one dot_general, no per-example
loop) rather than unrolled per-example work.
"""
import re

import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax import lax

B = 3   # batch size used by the op table


# ---------------------------------------------------------------- helpers

def _rand(spec, rng):
    """An input from a spec: a shape (float32), ("i", shape, high) or ("b", shape)."""
    if isinstance(spec, tuple) and spec and isinstance(spec[0], str):
        kind, shape = spec[0], spec[1]
        if kind == "i":
            return rng.integers(0, spec[2], size=shape).astype(np.int32)
        if kind == "b":
            return rng.random(shape) < 0.5
        raise ValueError(kind)
    return rng.standard_normal(spec).astype(np.float32)


def _batched(x, axis, size, rng, spec):
    """``size`` examples of ``spec`` stacked along ``axis``."""
    return np.stack([_rand(spec, rng) for _ in range(size)], axis=axis % (np.ndim(x) + 1))


def _stack(outs, axis):
    if axis is None:
        for o in outs[1:]:
            np.testing.assert_array_equal(np.asarray(o), np.asarray(outs[0]))
        return np.asarray(outs[0])
    return np.stack([np.asarray(o) for o in outs], axis=axis)


def loop_reference(f, args, in_axes, out_axes, size):
    """Run ``f`` on each example (numjax, eagerly) and stack: what vmap must equal."""
    in_axes = in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
    per_example = []
    for i in range(size):
        ex = [a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)]
        per_example.append(f(*ex))
    if isinstance(per_example[0], tuple):
        oas = out_axes if isinstance(out_axes, tuple) else (out_axes,) * len(per_example[0])
        return tuple(_stack([o[k] for o in per_example], oa) for k, oa in enumerate(oas))
    return _stack(per_example, out_axes)


def assert_tree_close(got, want, rtol=1e-5, atol=1e-5):
    got_l, want_l = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_l) == len(want_l)
    for g, w in zip(got_l, want_l):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


# ---------------------------------------------------------------- the op table
# (name, f, per-example input specs, in_axes, out_axes)

def _where_scalar_pred(p, x, y):
    return jnp.where(p, x, y)


CASES = [
    # elementwise unary
    ("sin", jnp.sin, [(4,)], 0, 0),
    ("exp_tanh_axis1", lambda x: jnp.exp(jnp.tanh(x)), [(2, 3)], 1, 0),
    ("neg_abs_axis_neg1", lambda x: -jnp.abs(x) + jnp.sqrt(jnp.abs(x)), [(2, 3)], -1, -1),
    ("log1p_square_out1", lambda x: jnp.log1p(x * x), [(2, 3)], 0, 1),
    ("int_floor_div_mod", lambda x: x // 3 + x % 4 - 2 * x, [("i", (5,), 20)], 0, 0),
    ("astype_int", lambda x: (x * 10).astype(jnp.int32), [(4,)], 0, 0),
    ("clip", lambda x: jnp.clip(x, -0.5, 0.5), [(2, 2)], 1, 1),
    # elementwise binary with broadcasting
    ("add_same", lambda x, y: x + y, [(2, 3), (2, 3)], 0, 0),
    ("add_row_bcast", lambda x, y: x + y, [(2, 3), (3,)], (0, 0), 0),
    ("mul_scalar_bcast", lambda x, y: x * y, [(2, 3), ()], (1, 0), 1),
    ("max_outer_bcast_unbatched", jnp.maximum, [(2, 1), (1, 3)], (0, None), 0),
    ("sub_unbatched_lhs", lambda x, y: x - y, [(3,), (2, 3)], (None, 2), -1),
    ("div_pow", lambda x, y: x / (1.0 + y ** 2), [(3,), (3,)], (0, -1), 0),
    ("python_scalar", lambda x: 2.0 * x - 1, [(3,)], 0, 0),
    ("arctan2_batched_scalar", jnp.arctan2, [(), (4,)], (0, 0), 0),
    ("compare", lambda x, y: (x > y) & (x > 0), [(2, 3), (3,)], (0, None), 0),
    # reductions
    ("sum_axis0", lambda x: jnp.sum(x, axis=0), [(2, 3)], 0, 0),
    ("sum_axis1_keepdims", lambda x: jnp.sum(x, axis=1, keepdims=True), [(2, 3)], 1, 2),
    ("sum_all_axis_neg1", jnp.sum, [(2, 3)], -1, 0),
    ("max_axis_neg1", lambda x: jnp.max(x, axis=-1), [(2, 3)], 1, 0),
    ("min_prod", lambda x: (jnp.min(x, axis=0), jnp.prod(x, axis=(0, 1))), [(2, 3)], 2, (0, 0)),
    ("mean_var", lambda x: (jnp.mean(x, axis=0), jnp.var(x)), [(4, 3)], 0, (1, 0)),
    ("argmax_argmin", lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x)), [(2, 5)], 0, 0),
    ("any_all", lambda x: (jnp.any(x > 1.0, axis=0), jnp.all(x < 2.0)), [(3, 2)], 1, 0),
    # shape ops
    ("reshape_flat", lambda x: x.reshape(6), [(2, 3)], 1, 0),
    ("reshape_neg1", lambda x: jnp.reshape(x, (3, -1)), [(2, 3)], 0, 1),
    ("ravel", jnp.ravel, [(2, 3)], -1, 0),
    ("transpose", lambda x: x.T, [(2, 3)], 0, 1),
    ("transpose_perm", lambda x: jnp.transpose(x, (2, 0, 1)), [(2, 3, 4)], 2, 0),
    ("swapaxes", lambda x: jnp.swapaxes(x, 0, 1), [(2, 3)], 1, -1),
    ("expand_squeeze", lambda x: jnp.squeeze(jnp.expand_dims(x, 0) * 2, 0), [(3,)], 0, 0),
    ("broadcast_to", lambda x: jnp.broadcast_to(x, (2, 3)), [(3,)], 0, 0),
    ("concatenate_axis0", lambda x, y: jnp.concatenate([x, y], axis=0), [(2, 3), (1, 3)], (0, 1), 0),
    ("concatenate_unbatched", lambda x, y: jnp.concatenate([x, y], axis=1), [(2, 3), (2, 2)], (0, None), 0),
    ("stack_neg", lambda x, y: jnp.stack([x, y], axis=-1), [(3,), (3,)], (0, 0), 1),
    # slicing and indexing
    ("slice_step", lambda x: x[1:3, ::2], [(4, 5)], 0, 0),
    ("int_index_axis1", lambda x: x[1], [(4, 5)], 1, 0),
    ("neg_step_index", lambda x: x[::-1, 2], [(4, 5)], 0, 0),
    ("ellipsis_none", lambda x: x[..., None, 0], [(2, 3)], 2, 0),
    ("dynamic_index_unbatched_i", lambda x, i: x[i], [(5, 2), ("i", (), 5)], (0, None), 0),
    ("dynamic_index_batched_i", lambda x, i: x[i], [(5, 2), ("i", (), 5)], (0, 0), 0),
    ("dynamic_index_only_i_batched", lambda x, i: x[i] * 2, [(5, 2), ("i", (), 5)], (None, 0), 0),
    ("dynamic_slice_batched", lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 2)),
     [(5, 3), ("i", (), 5)], (1, 0), 0),
    ("dynamic_update_slice_batched", lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)),
     [(6,), (2,), ("i", (), 6)], (0, None, 0), 0),
    # dot / matmul
    ("dot_vec_vec", jnp.dot, [(3,), (3,)], (0, 0), 0),
    ("matvec_lhs_batched", lambda m, v: m @ v, [(2, 3), (3,)], (0, None), 0),
    ("matvec_rhs_batched", lambda m, v: m @ v, [(2, 3), (3,)], (None, 0), 0),
    ("matmul_both_axes", jnp.matmul, [(2, 3), (3, 4)], (2, 0), 1),
    ("matmul_3d", jnp.matmul, [(2, 2, 3), (2, 3, 4)], (0, 1), 0),
    ("dot_rhs_batched_out_neg", jnp.dot, [(2, 3), (3, 2)], (None, 1), -1),
    ("outer", jnp.outer, [(2,), (3,)], (0, None), 0),
    ("vdot_inner", lambda a, b: (jnp.vdot(a, b), jnp.inner(a, b)), [(3,), (3,)], (0, 0), 0),
    # where / select
    ("where", lambda x, y: jnp.where(x > 0, x, y), [(2, 3), (2, 3)], (0, 1), 0),
    ("where_scalar_pred", _where_scalar_pred, [("b", ()), (3,), (3,)], (0, 0, None), 0),
    ("where_unbatched_pred", lambda p, x: jnp.where(p, x, -x), [("b", (3,)), (3,)], (None, 0), 0),
    ("select", lambda x, y: lax.select(x > y, x, y), [(2, 3), (2, 3)], (1, 0), 0),
    # cumulative
    ("cumsum_axis0", lambda x: jnp.cumsum(x, axis=0), [(3, 4)], 1, 0),
    ("cumsum_flat", jnp.cumsum, [(2, 3)], 0, 0),
    ("cumsum_axis_neg1_out1", lambda x: jnp.cumsum(x, axis=-1), [(2, 3)], 0, 1),
    ("cumprod_cummax", lambda x: (jnp.cumprod(x, axis=0), lax.cummax(x, axis=1)), [(3, 2)], 0, 0),
    # unbatched outputs (out_axes=None)
    ("out_axes_none_mixed", lambda x, y: (x * 2.0, jnp.sum(y)), [(3,), (2,)], (0, None), (0, None)),
    ("out_axes_none_constant", lambda x: (x + 1.0, jnp.ones(2)), [(3,)], 0, (0, None)),
]


@pytest.mark.parametrize("name,f,specs,in_axes,out_axes", CASES, ids=[c[0] for c in CASES])
def test_vmap_matches_loop(name, f, specs, in_axes, out_axes):
    rng = np.random.default_rng(abs(hash(name)) % 2 ** 32)
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(specs)
    args = []
    for spec, ax in zip(specs, axes):
        one = _rand(spec, rng)
        args.append(one if ax is None else _batched(one, ax, B, rng, spec))
    got = jax.vmap(f, in_axes=in_axes, out_axes=out_axes)(*args)
    want = loop_reference(f, args, axes, out_axes, B)
    assert_tree_close(got, want)


# ---------------------------------------------------------------- pytree prefixes for in_axes / out_axes

def test_in_axes_dict_prefix():
    rng = np.random.default_rng(0)
    params = {"w": rng.standard_normal((3, 2)).astype(np.float32), "b": np.float32(0.5)}
    xs = rng.standard_normal((4, 3)).astype(np.float32)

    def f(p, x):
        return jnp.dot(x, p["w"]) + p["b"]
    got = jax.vmap(f, in_axes=({"w": None, "b": None}, 0))(params, xs)
    np.testing.assert_allclose(np.asarray(got), xs @ params["w"] + 0.5, rtol=1e-5)
    # per-example weights batched along axis 2; bias shared
    ws = rng.standard_normal((3, 2, 4)).astype(np.float32)
    got = jax.vmap(f, in_axes=({"w": 2, "b": None}, 0))({"w": ws, "b": np.float32(0.5)}, xs)
    want = np.stack([xs[i] @ ws[:, :, i] + 0.5 for i in range(4)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


def test_in_axes_list_and_nested_tuple_prefix():
    rng = np.random.default_rng(1)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in [(4, 2), (2, 4), (2,)])

    def f(pair, z):
        x, y = pair
        return x * y + z
    got_list = jax.vmap(f, in_axes=[(0, 1), None])((a, b), c)
    got_tuple = jax.vmap(f, in_axes=((0, 1), None))((a, b), c)
    want = a * b.T + c
    np.testing.assert_allclose(np.asarray(got_list), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got_tuple), want, rtol=1e-6)
    # a tuple entry applies to the whole subtree
    got = jax.vmap(f, in_axes=(0, None))((a, b.T), c)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_out_axes_pytree_and_dict_outputs():
    x = np.arange(12.0, dtype=np.float32).reshape(4, 3)

    def f(v):
        return {"total": jnp.sum(v), "scaled": v * 2.0, "shared": jnp.arange(3.0)}
    out = jax.vmap(f, out_axes={"total": 0, "scaled": 1, "shared": None})(x)
    np.testing.assert_allclose(np.asarray(out["total"]), x.sum(1))
    np.testing.assert_allclose(np.asarray(out["scaled"]), (x * 2).T)
    np.testing.assert_allclose(np.asarray(out["shared"]), np.arange(3.0))
    # one int applies to every output leaf
    out = jax.vmap(lambda v: (v, v * v), out_axes=1)(x)
    np.testing.assert_allclose(np.asarray(out[1]), (x * x).T)


def test_unbatched_output_broadcast_to_out_axis():
    # an output that does not depend on the mapped input is broadcast along out_axes
    out = jax.vmap(lambda v: jnp.ones(2), in_axes=0, out_axes=1)(np.zeros((5, 3), np.float32))
    assert out.shape == (2, 5)
    np.testing.assert_array_equal(np.asarray(out), np.ones((2, 5)))


def test_kwargs_are_mapped_on_axis_0():
    xs = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    out = jax.vmap(lambda x, scale: x * scale)(xs, scale=np.array([1.0, 2.0, 3.0], np.float32))
    np.testing.assert_allclose(np.asarray(out), xs * np.array([[1.0], [2.0], [3.0]]))


def test_axis_size_with_all_unbatched_inputs():
    out = jax.vmap(lambda x: x + 1.0, in_axes=None, axis_size=3)(np.float32(2.0))
    np.testing.assert_allclose(np.asarray(out), [3.0, 3.0, 3.0])


# ---------------------------------------------------------------- nested vmap

def test_nested_vmap_pairwise_distances():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((5, 3)).astype(np.float32)
    dist = lambda x, y: jnp.sqrt(jnp.sum((x - y) ** 2))  # noqa: E731
    d = jax.vmap(jax.vmap(dist, in_axes=(None, 0)), in_axes=(0, None))(a, b)
    want = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(np.asarray(d), want, rtol=1e-5)
    # the same with the loops swapped and out_axes moving the outer axis last
    d2 = jax.vmap(jax.vmap(dist, in_axes=(0, None)), in_axes=(None, 0), out_axes=1)(a, b)
    np.testing.assert_allclose(np.asarray(d2), want, rtol=1e-5)


def test_nested_vmap_matmul_is_matrix_product():
    rng = np.random.default_rng(3)
    m = rng.standard_normal((4, 3)).astype(np.float32)
    n = rng.standard_normal((3, 5)).astype(np.float32)
    mm = jax.vmap(jax.vmap(jnp.dot, in_axes=(None, 1), out_axes=0), in_axes=(0, None))(m, n)
    np.testing.assert_allclose(np.asarray(mm), m @ n, rtol=1e-5)


def test_triple_nested_vmap_with_axis_1():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    f = jax.vmap(jax.vmap(jax.vmap(lambda v: v * 2.0 + 1.0), in_axes=1, out_axes=1), in_axes=2, out_axes=2)
    np.testing.assert_allclose(np.asarray(f(x)), x * 2 + 1)


# ---------------------------------------------------------------- autodiff compositions

def _logreg_loss(w, b, x, y):
    p = 1.0 / (1.0 + jnp.exp(-(jnp.dot(x, w) + b)))
    return -(y * jnp.log(p) + (1.0 - y) * jnp.log(1.0 - p))


_RNG = np.random.default_rng(4)
_X = _RNG.standard_normal((6, 3)).astype(np.float32)
_Y = (_RNG.random(6) < 0.5).astype(np.float32)
_W = _RNG.standard_normal(3).astype(np.float32)
_B = np.float32(0.1)


def test_per_example_gradients_match_loop():
    per_ex = jax.vmap(jax.grad(_logreg_loss, argnums=(0, 1)), in_axes=(None, None, 0, 0))(_W, _B, _X, _Y)
    gw, gb = per_ex
    assert gw.shape == (6, 3) and gb.shape == (6,)
    for i in range(6):
        lw, lb = jax.grad(_logreg_loss, argnums=(0, 1))(_W, _B, _X[i], _Y[i])
        np.testing.assert_allclose(np.asarray(gw[i]), np.asarray(lw), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(gb[i]), np.asarray(lb), rtol=1e-5, atol=1e-6)
    # closed form: (sigmoid(x.w + b) - y) * x
    p = 1 / (1 + np.exp(-(_X @ _W + _B)))
    np.testing.assert_allclose(np.asarray(gw), (p - _Y)[:, None] * _X, rtol=1e-4, atol=1e-6)


def test_grad_of_function_using_vmap():
    def batch_loss(w, b):
        return jnp.mean(jax.vmap(_logreg_loss, in_axes=(None, None, 0, 0))(w, b, _X, _Y))
    gw, gb = jax.grad(batch_loss, argnums=(0, 1))(_W, _B)
    p = 1 / (1 + np.exp(-(_X @ _W + _B)))
    np.testing.assert_allclose(np.asarray(gw), ((p - _Y)[:, None] * _X).mean(0), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gb), (p - _Y).mean(), rtol=1e-4, atol=1e-6)


def test_vmap_of_jvp_and_jacfwd_rows():
    xs = np.linspace(-1, 1, 5).astype(np.float32)
    tang = jax.vmap(lambda x: jax.jvp(jnp.sin, (x,), (np.float32(1.0),))[1])(xs)
    np.testing.assert_allclose(np.asarray(tang), np.cos(xs), rtol=1e-6)
    # vmap over the basis of tangents = the Jacobian (as jacfwd does)
    x = np.array([0.5, -1.0, 2.0], np.float32)
    f = lambda v: jnp.sin(v) * jnp.sum(v)  # noqa: E731
    jac = jax.vmap(lambda t: jax.jvp(f, (x,), (t,))[1], out_axes=1)(np.eye(3, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(jac), np.asarray(jax.jacfwd(f)(x)), rtol=1e-5)


def test_vmap_of_hessian_vector_products():
    xs = np.arange(6.0, dtype=np.float32).reshape(2, 3) / 3
    f = lambda v: jnp.sum(v ** 3)  # noqa: E731
    hvp = jax.vmap(lambda x: jax.grad(lambda y: jnp.vdot(jax.grad(f)(y), np.ones(3, np.float32)))(x))(xs)
    np.testing.assert_allclose(np.asarray(hvp), 6 * xs, rtol=1e-5)


def test_vmap_of_jaxpr_with_nested_jit_equation():
    # a nested jit equation met by a batch trace (as when a jaxpr is re-evaluated under vmap)
    from numjax.jaxpr import eval_jaxpr
    g = jax.jit(lambda v: jnp.cumsum(v) * 2.0)
    closed = jax.make_jaxpr(lambda v: g(v) + 1.0)(np.ones(3, np.float32))
    assert any(e.primitive.name == "jit" for e in closed.jaxpr.eqns)
    xs = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    out = jax.vmap(lambda v: eval_jaxpr(closed.jaxpr, closed.consts, v)[0])(xs)
    np.testing.assert_allclose(np.asarray(out), np.cumsum(xs, axis=1) * 2 + 1)
    out = jax.vmap(lambda v: eval_jaxpr(closed.jaxpr, closed.consts, v)[0], in_axes=1)(xs.T)
    np.testing.assert_allclose(np.asarray(out), np.cumsum(xs, axis=1) * 2 + 1)


# ---------------------------------------------------------------- jit compositions (Numba compiles)

def test_jit_of_vmap_matches_eager():
    rng = np.random.default_rng(5)
    m = rng.standard_normal((4, 2, 3)).astype(np.float32)
    v = rng.standard_normal(3).astype(np.float32)

    def f(a, b):
        h = jnp.tanh(a @ b)
        return jnp.sum(h * h) + jnp.max(a), h[::-1] * 2.0
    vf = jax.vmap(f, in_axes=(0, None))
    assert_tree_close(jax.jit(vf)(m, v), vf(m, v), rtol=1e-5)


def test_vmap_of_jit_and_jit_of_per_example_grads():
    g = jax.jit(jax.vmap(jax.grad(_logreg_loss), in_axes=(None, None, 0, 0)))
    got = g(_W, _B, _X, _Y)
    p = 1 / (1 + np.exp(-(_X @ _W + _B)))
    np.testing.assert_allclose(np.asarray(got), (p - _Y)[:, None] * _X, rtol=1e-4, atol=1e-6)
    jf = jax.jit(lambda x: jnp.sin(x) * 2.0)
    np.testing.assert_allclose(np.asarray(jax.vmap(jf)(_X)), np.sin(_X) * 2, rtol=1e-6)


# ---------------------------------------------------------------- named axes: collectives
# Expected values: real JAX 0.10.2 on the same inputs (x = arange(1., 5.), m = arange(12.).reshape(4, 3)).

VMAP_COLLECTIVES = {
    'psum_normalize': [0.10000000149011612, 0.20000000298023224, 0.30000001192092896, 0.4000000059604645],
    'pmean_center': [[-4.5, -4.5, -4.5], [-1.5, -1.5, -1.5], [1.5, 1.5, 1.5], [4.5, 4.5, 4.5]],
    'pmax': [[9.0, -1.0, 11.0], [9.0, -1.0, 11.0], [9.0, -1.0, 11.0], [9.0, -1.0, 11.0]],
    'pmin': [[0.0, -10.0, 2.0], [0.0, -10.0, 2.0], [0.0, -10.0, 2.0], [0.0, -10.0, 2.0]],
    'all_gather': [[[0.0, 1.0], [3.0, 4.0], [6.0, 7.0]], [[0.0, 1.0], [3.0, 4.0], [6.0, 7.0]],
                   [[0.0, 1.0], [3.0, 4.0], [6.0, 7.0]]],
    'all_gather_axis1': [[[[0.0], [3.0], [6.0]], [[1.0], [4.0], [7.0]]],
                         [[[0.0], [3.0], [6.0]], [[1.0], [4.0], [7.0]]],
                         [[[0.0], [3.0], [6.0]], [[1.0], [4.0], [7.0]]]],
    'all_gather_tiled': [[0.0, 1.0, 3.0, 4.0, 6.0, 7.0], [0.0, 1.0, 3.0, 4.0, 6.0, 7.0],
                         [0.0, 1.0, 3.0, 4.0, 6.0, 7.0]],
    'ppermute_shift': [[9.0, 10.0, 11.0], [0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]],
    'ppermute_swap': [3.0, 4.0, 1.0, 2.0],
    'axis_index': [0.0, 2.0, 6.0, 12.0],
    'psum_unbatched': [41.0, 42.0, 43.0, 44.0],
    'nested_inner_outer': ([[3.0, 3.0, 3.0], [12.0, 12.0, 12.0], [21.0, 21.0, 21.0], [30.0, 30.0, 30.0]],
                           [[18.0, 22.0, 26.0], [18.0, 22.0, 26.0], [18.0, 22.0, 26.0], [18.0, 22.0, 26.0]],
                           [[66.0, 66.0, 66.0], [66.0, 66.0, 66.0], [66.0, 66.0, 66.0], [66.0, 66.0, 66.0]]),
    'nested_axis_index': [[0, 1, 2], [10, 11, 12], [20, 21, 22], [30, 31, 32]],
    'softmax_psum': [0.03205860033631325, 0.08714431524276733, 0.2368827909231186, 0.6439142227172852],
    # reverse mode through collectives: psum's transpose is psum, all_gather's is a
    # psum_scatter, ppermute's is the inverse permutation (JAX's semantics)
    'grad_psum': [4.0, 4.0, 4.0, 4.0],
    'grad_psum_sq': [8.0, 16.0, 24.0, 32.0],
    'grad_pmean_sq': [2.0, 4.0, 6.0, 8.0],
    'grad_v_times_psum': [50.0, 70.0, 90.0, 110.0],
    'grad_psum_unbatched_operand': [8.0, 8.0, 8.0, 8.0],
    'grad_all_gather': [0.0, 4.0, 8.0, 12.0],
    'grad_ppermute': [6.0, 4.0, 6.0, 4.0],
    'grad_of_vmap_psum': [8.0, 16.0, 24.0, 32.0],
    'jvp_of_vmap_psum': ([30.0, 30.0, 30.0, 30.0], [20.0, 20.0, 20.0, 20.0]),
}

_x = np.arange(1.0, 5.0, dtype=np.float32)
_m = np.arange(12.0, dtype=np.float32).reshape(4, 3)
_sgn = np.array([1.0, -1.0, 1.0], np.float32)
_SHIFT = [(0, 1), (1, 2), (2, 3), (3, 0)]

COLLECTIVE_CASES = {
    'psum_normalize': lambda: jax.vmap(lambda v: v / lax.psum(v, 'i'), axis_name='i')(_x),
    'pmean_center': lambda: jax.vmap(lambda v: v - lax.pmean(v, 'i'), axis_name='i')(_m),
    'pmax': lambda: jax.vmap(lambda v: lax.pmax(v, 'i'), axis_name='i')(_m * _sgn),
    'pmin': lambda: jax.vmap(lambda v: lax.pmin(v, 'i'), axis_name='i')(_m * _sgn),
    'all_gather': lambda: jax.vmap(lambda v: lax.all_gather(v, 'i'), axis_name='i')(_m[:3, :2]),
    'all_gather_axis1': lambda: jax.vmap(lambda v: lax.all_gather(v, 'i', axis=1), axis_name='i')(
        _m[:3].reshape(3, 3, 1)[:, :2]),
    'all_gather_tiled': lambda: jax.vmap(lambda v: lax.all_gather(v, 'i', tiled=True), axis_name='i')(_m[:3, :2]),
    'ppermute_shift': lambda: jax.vmap(lambda v: lax.ppermute(v, 'i', _SHIFT), axis_name='i')(_m),
    'ppermute_swap': lambda: jax.vmap(lambda v: lax.ppermute(v, 'i', [(0, 2), (2, 0), (1, 3), (3, 1)]),
                                      axis_name='i')(_x),
    'axis_index': lambda: jax.vmap(lambda v: v * lax.axis_index('i'), axis_name='i')(_x),
    'psum_unbatched': lambda: jax.vmap(lambda v, w: lax.psum(w, 'i') + v, in_axes=(0, None),
                                       axis_name='i')(_x, 10.0),
    'nested_inner_outer': lambda: jax.vmap(jax.vmap(
        lambda v: (lax.psum(v, 'j'), lax.psum(v, 'i'), lax.psum(v, ('i', 'j'))), axis_name='j'),
        axis_name='i')(_m),
    'nested_axis_index': lambda: jax.vmap(jax.vmap(
        lambda v: lax.axis_index('i') * 10 + lax.axis_index('j'), axis_name='j'), axis_name='i')(_m),
    'softmax_psum': lambda: jax.vmap(lambda v: jnp.exp(v) / lax.psum(jnp.exp(v), 'i'), axis_name='i')(_x),
    'grad_psum': lambda: jax.vmap(jax.grad(lambda v: lax.psum(v, 'i')), axis_name='i')(_x),
    'grad_psum_sq': lambda: jax.vmap(jax.grad(lambda v: lax.psum(v * v, 'i')), axis_name='i')(_x),
    'grad_pmean_sq': lambda: jax.vmap(jax.grad(lambda v: lax.pmean(v * v, 'i')), axis_name='i')(_x),
    'grad_v_times_psum': lambda: jax.vmap(jax.grad(lambda v: v * lax.psum(v * v, 'i')), axis_name='i')(_x),
    'grad_psum_unbatched_operand': lambda: jax.vmap(jax.grad(lambda v, w: v * lax.psum(w, 'i')),
                                                    in_axes=(0, None), axis_name='i')(_x, 2.0),
    'grad_all_gather': lambda: jax.vmap(jax.grad(
        lambda v: jnp.sum(lax.all_gather(v, 'i') * jnp.arange(4.0))), axis_name='i')(_x),
    'grad_ppermute': lambda: jax.vmap(jax.grad(lambda v: lax.ppermute(v, 'i', _SHIFT) * v), axis_name='i')(_x),
    'grad_of_vmap_psum': lambda: jax.grad(
        lambda x: jax.vmap(lambda v: lax.psum(v * v, 'i'), axis_name='i')(x).sum())(_x),
    'jvp_of_vmap_psum': lambda: jax.jvp(jax.vmap(lambda v: lax.psum(v * v, 'i'), axis_name='i'),
                                        (_x,), (np.ones(4, np.float32),)),
}


@pytest.mark.parametrize("name", sorted(COLLECTIVE_CASES))
def test_collectives_under_vmap_match_jax(name):
    got = COLLECTIVE_CASES[name]()
    want = VMAP_COLLECTIVES[name]
    got_l = [np.asarray(g) for g in jax.tree_util.tree_leaves(got)]
    want_l = [np.asarray(w) for w in (want if isinstance(want, tuple) else (want,))]
    assert len(got_l) == len(want_l)
    for g, w in zip(got_l, want_l):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_collective_dtypes():
    out = jax.vmap(lambda v: lax.axis_index('i'), axis_name='i')(_x)
    assert out.dtype == np.int32
    out = jax.vmap(lambda v: lax.psum(v, 'i'), axis_name='i')(np.arange(4, dtype=np.int32))
    assert out.dtype == np.int32 and np.asarray(out).tolist() == [6, 6, 6, 6]


def test_collective_under_jit_of_vmap():
    f = jax.jit(jax.vmap(lambda v: (v - lax.pmean(v, 'i')) / lax.pmax(jnp.abs(v), 'i'), axis_name='i'))
    got = f(_m)
    want = (_m - _m.mean(0)) / np.abs(_m).max(0)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_unbound_axis_name_raises_nameerror():
    with pytest.raises(NameError, match="unbound axis name: j"):
        jax.vmap(lambda v: lax.psum(v, 'j'), axis_name='i')(_x)


# ---------------------------------------------------------------- the seed tutorials

def convolve(x, w):
    output = []
    for i in range(1, len(x) - 1):
        output.append(jnp.dot(x[i - 1:i + 2], w))
    return jnp.array(output)


_cx = jnp.arange(5)
_cw = jnp.array([2., 3., 4.])
_cxs = jnp.stack([_cx, _cx])
_cws = jnp.stack([_cw, _cw])
SEED_ROWS = [[11., 20., 29.], [11., 20., 29.]]   # what the tutorials print


def test_seed_convolve_single():
    out = convolve(_cx, _cw)
    assert out.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(out), [11., 20., 29.])


def test_seed_manual_batching_equals_vmap():
    def manually_batched_convolve(xs, ws):
        return jnp.stack([convolve(xs[i], ws[i]) for i in range(xs.shape[0])])

    def manually_vectorized_convolve(xs, ws):
        output = []
        for i in range(1, xs.shape[-1] - 1):
            output.append(jnp.sum(xs[:, i - 1:i + 2] * ws, axis=1))
        return jnp.stack(output, axis=1)
    auto = jax.vmap(convolve)(_cxs, _cws)
    assert auto.dtype == jnp.float32 and auto.shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(auto), SEED_ROWS)
    np.testing.assert_array_equal(np.asarray(manually_batched_convolve(_cxs, _cws)), SEED_ROWS)
    np.testing.assert_array_equal(np.asarray(manually_vectorized_convolve(_cxs, _cws)), SEED_ROWS)


def test_seed_in_axes_1_out_axes_1():
    out = jax.vmap(convolve, in_axes=1, out_axes=1)(jnp.transpose(_cxs), jnp.transpose(_cws))
    np.testing.assert_array_equal(np.asarray(out), [[11., 11.], [20., 20.], [29., 29.]])


def test_seed_in_axes_list_none():
    out = jax.vmap(convolve, in_axes=[0, None])(_cxs, _cw)
    np.testing.assert_array_equal(np.asarray(out), SEED_ROWS)


def test_seed_pmap_tutorial_numpy_inputs():
    # the pmap tutorial builds the batch with numpy: xs = arange(5 * n).reshape(-1, 5)
    x = np.arange(5)
    w = np.array([2., 3., 4.])
    np.testing.assert_array_equal(np.asarray(convolve(x, w)), [11., 20., 29.])
    xs = np.arange(5 * 1).reshape(-1, 5)
    ws = np.stack([w] * 1)
    out = jax.vmap(convolve)(xs, ws)
    assert out.shape == (1, 3) and out.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(out), [[11., 20., 29.]])


def _program_functions(src):
    """Top-level functions of lowered source, minus the shared elementwise kernels
    (``# ---- kernel k_...`` blocks that fusion may emit beside the program)."""
    return [n for n in re.findall(r"^def (\w+)\(", src, flags=re.M) if not re.match(r"k_[0-9a-f]+$", n)]


def test_seed_jit_of_vmap_convolve_single_function():
    jitted = jax.jit(jax.vmap(convolve))
    np.testing.assert_array_equal(np.asarray(jitted(_cxs, _cws)), SEED_ROWS)
    src = jitted.lower(_cxs, _cws).as_text()
    # one generated top-level function (the whole batched program), no sub-function per example
    assert _program_functions(src) == ["numjax_convolve"], src
    # and nothing is unrolled over the batch: a batch of 5 lowers to the same code size
    xs5, ws5 = jnp.stack([_cx] * 5), jnp.stack([_cw] * 5)
    src5 = jitted.lower(xs5, ws5).as_text()
    assert _program_functions(src5) == ["numjax_convolve"]
    assert len(src5.splitlines()) == len(src.splitlines())


# ---------------------------------------------------------------- batching produces batched primitives

def _count(jaxpr, name):
    return sum(1 for e in jaxpr.jaxpr.eqns if e.primitive.name == name)


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0), (1, 0)])
def test_batched_dot_general_is_one_dot_general(in_axes):
    shapes = {0: (7, 3, 4), None: (3, 4), 1: (3, 7, 4)}
    a = np.ones(shapes[in_axes[0]], np.float32)
    b = np.ones((7, 4, 2) if in_axes[1] == 0 else (4, 2), np.float32)
    jx = jax.make_jaxpr(jax.vmap(jnp.matmul, in_axes=in_axes))(a, b)
    assert _count(jx, "dot_general") == 1, jx
    # no per-example slicing/stacking around it
    assert _count(jx, "concatenate") == 0 and _count(jx, "slice") == 0, jx
    assert jx.out_avals[0].shape == (7, 3, 2)


def test_vmap_convolve_dot_general_count_independent_of_batch():
    for n in (2, 5):
        xs = jnp.stack([_cx] * n)
        ws = jnp.stack([_cw] * n)
        jx = jax.make_jaxpr(jax.vmap(convolve))(xs, ws)
        assert _count(jx, "dot_general") == 3, jx   # one per output position, batched over n
        assert jx.out_avals[0].shape == (n, 3)


def test_vmap_elementwise_jaxpr_has_no_per_example_ops():
    jx = jax.make_jaxpr(jax.vmap(lambda v: jnp.sin(v) * 2.0))(np.ones((100, 3), np.float32))
    assert _count(jx, "sin") == 1 and _count(jx, "mul") == 1


# ---------------------------------------------------------------- errors (JAX's wording)

def test_error_inconsistent_sizes():
    with pytest.raises(ValueError) as e:
        jax.vmap(lambda x, y: x + y)(jnp.ones(3), jnp.ones(4))
    assert str(e.value) == (
        "vmap got inconsistent sizes for array axes to be mapped:\n"
        "  * one axis had size 3: axis 0 of argument x of type float32[3];\n"
        "  * one axis had size 4: axis 0 of argument y of type float32[4]")
    with pytest.raises(ValueError) as e:
        jax.vmap(lambda x, y: x + y)(jnp.ones((3, 2)), jnp.ones((4, 2)))
    assert str(e.value) == (
        "vmap got inconsistent sizes for array axes to be mapped:\n"
        "  * one axis had size 3: axis 0 of argument x of type float32[3,2];\n"
        "  * one axis had size 4: axis 0 of argument y of type float32[4,2]")


@pytest.mark.parametrize("call,msg", [
    (lambda: jax.vmap(lambda d: d['a'] + d['b'])({'a': np.ones(3, np.float32), 'b': np.ones(4, np.int32)}),
     "  * one axis had size 3: axis 0 of argument d['a'] of type float32[3];\n"
     "  * one axis had size 4: axis 0 of argument d['b'] of type int32[4]"),
    (lambda: jax.vmap(lambda t, y: t[0])((np.ones(3, np.float32), np.ones((4, 2), bool)), np.ones(3, np.float32)),
     "  * most axes (2 of them) had size 3, e.g. axis 0 of argument t[0] of type float32[3];\n"
     "  * one axis had size 4: axis 0 of argument t[1] of type bool[4,2]"),
    (lambda: jax.vmap(lambda x, y: x + y)(np.ones(3, np.float32), y=np.ones(5, np.float32)),
     "  * one axis had size 3: axis 0 of argument x of type float32[3];\n"
     "  * one axis had size 5: axis 0 of kwargs['y'] of type float32[5]"),
    (lambda: jax.vmap(lambda *a: a[0])(np.ones(3, np.float32), np.ones(5, np.float32)),
     "  * one axis had size 3: axis 0 of argument a of type float32[3];\n"
     "  * one axis had size 5: axis 0 of args[1] of type float32[5]"),
    (lambda: jax.vmap(lambda x, y: x, in_axes=(-1, 0))(np.ones((2, 3), np.float32), np.ones(5, np.float32)),
     "  * one axis had size 3: axis -1 of argument x of type float32[2,3];\n"
     "  * one axis had size 5: axis 0 of argument y of type float32[5]"),
])
def test_error_inconsistent_sizes_paths(call, msg):
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value) == "vmap got inconsistent sizes for array axes to be mapped:\n" + msg


def test_error_no_arguments():
    with pytest.raises(ValueError) as e:
        jax.vmap(lambda: 1.0)()
    assert str(e.value) == ("vmap wrapped function must be passed at least one argument containing an array or "
                            "axis_size must be specified, got empty *args=() and **kwargs={}")
    out = jax.vmap(lambda: jnp.float32(1.0), axis_size=2)()
    np.testing.assert_array_equal(np.asarray(out), [1.0, 1.0])


def test_error_axis_size_disagrees():
    with pytest.raises(ValueError) as e:
        jax.vmap(lambda x: x, axis_size=4)(jnp.ones(3))
    assert str(e.value) == (
        "vmap got inconsistent sizes for array axes to be mapped:\n"
        "  * the `axis_size` argument was 4;\n"
        "  * one axis had size 3: axis 0 of argument x of type float32[3]")


@pytest.mark.parametrize("axis,shape,msg", [
    (0, (), "vmap was requested to map its argument along axis 0, which implies that its rank should be "
            "at least 1, but is only 0 (its shape is ())"),
    (2, (3, 2), "vmap was requested to map its argument along axis 2, which implies that its rank should "
                "be at least 3, but is only 2 (its shape is (3, 2))"),
    (-3, (3, 2), "vmap was requested to map its argument along axis -3, which implies that its rank should "
                 "be at least 3, but is only 2 (its shape is (3, 2))"),
])
def test_error_in_axis_out_of_range(axis, shape, msg):
    with pytest.raises(ValueError) as e:
        jax.vmap(lambda x: x, in_axes=axis)(jnp.ones(shape))
    assert str(e.value) == msg


@pytest.mark.parametrize("axis", [2, 3, -3])
def test_error_out_axis_out_of_range(axis):
    with pytest.raises(ValueError) as e:
        jax.vmap(lambda x: x, out_axes=axis)(jnp.ones((3, 2)))
    assert str(e.value) == f"axis {axis} is out of bounds for array of dimension 2"


def test_error_no_mapped_axis():
    with pytest.raises(ValueError) as e:
        jax.vmap(lambda x: x, in_axes=None)(jnp.ones((3, 2)))
    assert str(e.value) == "vmap must have at least one non-None value in in_axes or axis_size must be specified"


def test_error_in_axes_length():
    with pytest.raises(ValueError) as e:
        jax.vmap(lambda x, y: x + y, in_axes=(0,))(jnp.ones(3), jnp.ones(3))
    assert str(e.value) == ("vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                            "positional arguments passed to the function, but got len(in_axes)=1, len(args)=2")


def test_error_in_axes_type():
    with pytest.raises(TypeError) as e:
        jax.vmap(lambda x: x, in_axes=1.0)(jnp.ones((3, 2)))
    assert str(e.value) == ("vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                            "positional arguments passed to the function, but got 1.0.")


def test_error_out_axes_none_for_batched_output():
    with pytest.raises(ValueError) as e:
        jax.vmap(lambda x: x, in_axes=1, out_axes=None)(jnp.ones((2, 3)))
    assert str(e.value) == "at vmap out_axes, got axis spec None but output was batched on axis 1"
    with pytest.raises(ValueError) as e:
        jax.vmap(lambda x: jnp.sum(x), in_axes=1, out_axes=None)(jnp.ones((2, 3)))
    assert str(e.value) == "at vmap out_axes, got axis spec None but output was batched on axis 0"
    with pytest.raises(ValueError) as e:
        jax.vmap(lambda x: {"a": x}, in_axes=1, out_axes={"a": None})(jnp.ones((2, 3)))
    assert str(e.value) == "at vmap out_axes['a'], got axis spec None but output was batched on axis 1"


def test_error_in_axes_not_a_tree_prefix():
    with pytest.raises(ValueError, match="^vmap in_axes specification must be a tree prefix of the "
                                         "corresponding value"):
        jax.vmap(lambda x: x, in_axes=({"a": 0},))({"b": jnp.ones(3)})

"""JAX's sharding API exercised on 2 CPU devices; prints one JSON line of results.

Run on numjax as ``NUMJAX_NUM_CPU_DEVICES=2 python -m numjax tests/sharding_program.py`` and
on real JAX as ``XLA_FLAGS=--xla_force_host_platform_device_count=2 python
tests/sharding_program.py``: tests/test_sharding_api.py checks numjax's record, and
tests/compat/test_sharding_vs_jax.py checks that both records are equal.
Each result is a value (as nested lists), a sharding's repr, or an error's class and text.
"""
import json

import numpy as np

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

results = {}


def rec(name, thunk):
    try:
        results[name] = _plain(thunk())
    except Exception as err:  # noqa: BLE001 -- the error is the result
        results[name] = {"error": type(err).__name__, "message": str(err).split("\n")[0]}


def _plain(v):
    if isinstance(v, (jax.sharding.Sharding, jax.sharding.PartitionSpec, Mesh)):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, (str, bool, int)) or v is None:
        return v
    return np.asarray(v).tolist()


x_np = np.arange(8.0, dtype=np.float32).reshape(4, 2)
explicit = jax.make_mesh((2,), ("x",))
auto = Mesh(np.array(jax.devices()), ("x",))
grid = jax.make_mesh((2, 1), ("x", "y"))
auto_grid = jax.make_mesh((2, 1), ("x", "y"), axis_types=(AxisType.Auto, AxisType.Auto))
xs = jax.device_put(x_np, NamedSharding(explicit, P("x")))
xa = jax.device_put(x_np, NamedSharding(auto, P("x")))

rec("device_count", lambda: jax.device_count())
rec("mesh_str", lambda: str(explicit))
rec("mesh_repr", lambda: repr(auto))
rec("grid_str", lambda: str(grid))
rec("mesh_shape", lambda: dict(grid.shape))
rec("put_value", lambda: xs)
rec("put_sharding", lambda: xs.sharding)
rec("put_replicated", lambda: jax.device_put(x_np, NamedSharding(explicit, P())).sharding)
rec("shards", lambda: [(s.device.id, str(s.index), s.replica_id, _plain(s.data)) for s in xs.addressable_shards])
rec("replicated_shards", lambda: [(s.device.id, s.replica_id) for s in
                                  jax.device_put(x_np, NamedSharding(explicit, P())).addressable_shards])
rec("addressable_data_1", lambda: xs.addressable_data(1))
rec("is_fully_replicated", lambda: [xs.is_fully_replicated,
                                    jax.device_put(x_np, NamedSharding(explicit, P())).is_fully_replicated])
rec("is_fully_addressable", lambda: xs.is_fully_addressable)
rec("shard_shape", lambda: list(NamedSharding(explicit, P("x")).shard_shape((4, 2))))
rec("pytree_put", lambda: [a.sharding for a in jax.tree.leaves(
    jax.device_put({"a": x_np, "b": (x_np, x_np)}, NamedSharding(explicit, P())))])
rec("spec_eq", lambda: [P("x") == P("x"), NamedSharding(explicit, P("x")) == NamedSharding(explicit, P("x"))])

# jit: out_shardings, in_shardings and what outputs report
rec("jit_elementwise", lambda: jax.jit(lambda a: jnp.tanh(a) * 2 + 1)(xs).sharding)
rec("jit_elementwise_value", lambda: jax.jit(lambda a: jnp.tanh(a) * 2 + 1)(xs))
rec("jit_sum_sharded_axis", lambda: jax.jit(lambda a: a.sum(0))(xs).sharding)
rec("jit_sum_other_axis", lambda: jax.jit(lambda a: a.sum(1))(xs).sharding)
rec("jit_sum_all", lambda: jax.jit(lambda a: a.sum())(xs).sharding)
rec("jit_dot", lambda: jax.jit(lambda a: a @ jnp.ones((2, 3)))(xs).sharding)
rec("jit_transpose", lambda: jax.jit(lambda a: a.T)(xs).sharding)
rec("jit_argmax", lambda: jax.jit(lambda a: jnp.argmax(a, axis=1))(xs).sharding)
rec("jit_auto_elementwise", lambda: jax.jit(lambda a: a * 2)(xa).sharding)
rec("jit_auto_sum", lambda: jax.jit(lambda a: a.sum())(xa).sharding)
rec("jit_unsharded", lambda: jax.jit(lambda a: a * 2)(x_np).sharding)
rec("jit_out_shardings", lambda: jax.jit(lambda a: a * 2, out_shardings=NamedSharding(explicit, P()))(xs).sharding)
rec("jit_out_shardings_value", lambda: jax.jit(lambda a: a * 2, out_shardings=NamedSharding(explicit, P()))(xs))
rec("jit_out_shardings_indivisible", lambda: jax.jit(
    lambda a: a[:3], out_shardings=NamedSharding(auto, P("x")))(xa))
in_x = NamedSharding(explicit, P("x"))
rec("jit_in_shardings", lambda: [jax.jit(f, in_shardings=in_x)(a).sharding for a in (x_np, xs)
                                 for f in (lambda a: a * 2, lambda a: a.sum(0), lambda a: a.T)])
rec("jit_in_shardings_value", lambda: jax.jit(lambda a, b: a * b, in_shardings=(in_x, None))(x_np, 3.0))
rec("jit_in_shardings_mismatch", lambda: jax.jit(lambda a: a, in_shardings=NamedSharding(explicit, P(None, "x")))(xs))
rec("jit_in_shardings_indivisible", lambda: jax.jit(lambda a: a, in_shardings=in_x)(np.ones(3)))
rec("jit_grad_step", lambda: [a.sharding for a in jax.tree.leaves(jax.jit(
    lambda w, b: jax.tree.map(lambda p, g: p - 0.1 * g, w, jax.grad(
        lambda w: jnp.sum(jnp.tanh(b @ w[0] + w[1]) ** 2))(w)))(
    jax.device_put((np.ones((2, 3), np.float32), np.ones(3, np.float32)), NamedSharding(explicit, P())), xs))])

# errors
rec("err_indivisible_explicit", lambda: jax.device_put(np.ones((3, 2)), NamedSharding(explicit, P("x"))))
rec("err_indivisible_auto", lambda: jax.device_put(np.ones((3,)), NamedSharding(auto, P("x"))))
rec("err_rank", lambda: jax.device_put(np.ones((4,)), NamedSharding(explicit, P("x", None))))
rec("err_unknown_axis", lambda: NamedSharding(explicit, P("z")))
rec("err_duplicate_axis", lambda: NamedSharding(explicit, P("x", "x")))
rec("err_make_mesh_too_big", lambda: jax.make_mesh((3,), ("x",)))
rec("err_mesh_ndim", lambda: Mesh(np.array(jax.devices()), ("x", "y")))
rec("err_reshard_no_mesh", lambda: jax.sharding.reshard(x_np, P("x")))
rec("err_wsc_explicit", lambda: jax.jit(
    lambda a: jax.lax.with_sharding_constraint(a, NamedSharding(explicit, P("x"))))(x_np))

# with_sharding_constraint on Auto axes, reshard, set_mesh, get_abstract_mesh
rec("wsc_auto", lambda: jax.jit(lambda a: jax.lax.with_sharding_constraint(a * 2, NamedSharding(auto, P("x"))))(x_np))
rec("abstract_mesh_outside", lambda: repr(jax.sharding.get_abstract_mesh()))


def in_mesh():
    with jax.set_mesh(explicit):
        out = [repr(jax.sharding.get_abstract_mesh()), jax.sharding.reshard(x_np, P("x")).sharding]
    return out + [repr(jax.sharding.get_abstract_mesh())]


rec("set_mesh_context", in_mesh)
rec("reshard_sharding", lambda: jax.sharding.reshard(x_np, NamedSharding(explicit, P("x"))).sharding)
rec("reshard_value", lambda: jax.sharding.reshard(x_np, NamedSharding(explicit, P(None, "x"))))
rec("axis_types", lambda: [repr(t) for t in explicit.axis_types + auto.axis_types])


# shard_map
def smap(f, mesh, in_specs, out_specs, **kw):
    return jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, **kw)


v8 = np.arange(8.0, dtype=np.float32)
total = smap(lambda a: jax.lax.psum(a.sum(), "x"), auto, P("x"), P())
scaled = smap(lambda a: a * jax.lax.axis_index("x"), auto, P("x"), P("x"))
rec("smap_psum", lambda: total(v8))
rec("smap_psum_sharding", lambda: total(v8).sharding)
rec("smap_axis_index", lambda: scaled(v8))
rec("smap_axis_index_jit", lambda: jax.jit(scaled)(v8))
rec("smap_block_shape", lambda: smap(lambda a: jnp.zeros(a.shape[0]) + a.shape[0], auto, P("x"), P("x"))(x_np))
rec("smap_all_gather", lambda: smap(lambda a: jax.lax.all_gather(a, "x", tiled=True), auto, P("x"), P(),
                                    check_vma=False)(v8))
rec("smap_ppermute", lambda: smap(lambda a: jax.lax.ppermute(a, "x", [(0, 1), (1, 0)]), auto, P("x"), P("x"))(v8))
rec("smap_replicated_in", lambda: smap(lambda w, a: a * w, auto, (P(), P("x")), P("x"))(np.float32(3), v8))
rec("smap_second_dim", lambda: smap(lambda a: a + jax.lax.axis_index("x"), auto, P(None, "x"), P(None, "x"))(x_np))
rec("smap_2d", lambda: smap(lambda a: jax.lax.psum(a, "y") + jax.lax.axis_index("x"), grid, P("x", "y"),
                            P("x", "y"))(x_np))
rec("smap_tuple_axes", lambda: smap(lambda a: a * (1 + jax.lax.axis_index("x")), grid, P(("x", "y")),
                                    P(("x", "y")))(v8))
rec("smap_2d_auto", lambda: smap(lambda a: jax.lax.psum(a, "y") + jax.lax.axis_index("x"), auto_grid,
                                 P("x", "y"), P("x", "y"))(x_np))
rec("smap_2d_auto_jit", lambda: jax.jit(smap(lambda a: jax.lax.psum(a, "x"), auto_grid, P("x"), P()))(x_np))
rec("smap_tuple_axes_auto", lambda: smap(lambda a: a * (1 + jax.lax.axis_index("x")), auto_grid, P(("x", "y")),
                                         P(("x", "y")))(v8))
rec("smap_explicit_placed", lambda: smap(lambda a: a * 2, explicit, P("x"), P("x"))(xs))


def error_after_function_name(thunk):
    """An error's class and text after the function's name (JAX names an internal wrapper
    there for some eager calls)."""
    try:
        thunk()
    except Exception as err:  # noqa: BLE001 -- the error is the result
        return [type(err).__name__, str(err).split("' was given", 1)[-1].replace("\n", " ")]
    return "no error"


rec("smap_unreplicated_out", lambda: error_after_function_name(lambda: smap(lambda a: a, auto, P("x"), P())(v8)))
rec("smap_unreplicated_out_jit", lambda: error_after_function_name(
    lambda: jax.jit(smap(lambda a: a * jax.lax.axis_index("x"), auto, P(), P()))(v8)))
rec("smap_unreplicated_2d", lambda: error_after_function_name(
    lambda: smap(lambda a: jax.lax.psum(a, "y"), auto_grid, P("x", "y"), P(None, "y"))(x_np)))
rec("smap_replicated_outputs", lambda: smap(lambda a, b: (jax.lax.psum(a, "x"), b * 2, jax.lax.pmax(a, "x")),
                                            auto, (P("x"), P()), (P(), P(), P()))(v8, x_np))
rec("smap_all_gather_varies", lambda: error_after_function_name(   # all_gather's result varies (vma)
    lambda: smap(lambda a: jax.lax.all_gather(a, "x", tiled=True), auto, P("x"), P())(v8)))
rec("smap_indivisible", lambda: smap(lambda a: a, auto, P("x"), P("x"))(np.arange(3.0)))


# Eager ops on a value placed over an Auto mesh: JAX's compiler places each result over the
# mesh (numjax by the propagation rules); with_sharding_constraint under jit on Auto axes.
x44 = np.arange(16.0, dtype=np.float32).reshape(4, 4)
xg = jax.device_put(x44, NamedSharding(auto_grid, P(None, "x")))
xr = jax.device_put(np.arange(8.0, dtype=np.float32), NamedSharding(auto_grid, P("x")))
rec("auto_eager_elementwise", lambda: [v.sharding for v in (xg * 2, jnp.sin(xg), xg + 1, xg.astype(jnp.int32),
                                                              jnp.where(xg > 2, xg, 0.0))])
rec("auto_eager_reductions", lambda: [v.sharding for v in (xg.sum(0), xg.sum(1), xg.sum(), xg.max(0), xg.argmax(0),
                                                             jnp.cumsum(xr), jnp.sort(xr))])
rec("auto_eager_shapes", lambda: [v.sharding for v in (xg.T, xg[0], xg[:, :1], xr[:2], xg[None],
                                                         jnp.concatenate([xg, xg]), xg.reshape(2, 8))])
rec("auto_eager_dot", lambda: [jnp.dot(xg, x44).sharding, jnp.dot(xg.T, x44).sharding, (xg @ xg).sharding])
rec("auto_eager_values", lambda: [xg * 2, jnp.dot(xg, x44), jnp.sort(xr)])
rec("key_sharding", lambda: [type(jax.random.key(0).sharding).__name__,
                             type(jax.random.split(jax.random.key(0), 4).sharding).__name__])


def _in_mesh(mesh, thunk):
    with jax.set_mesh(mesh):
        return thunk()


def constrained(a):
    return jax.lax.with_sharding_constraint(a @ a.T, NamedSharding(auto_grid, P("x", None))) * 2


rec("constraint_jit", lambda: [jax.jit(constrained)(xg), jax.jit(constrained)(xg).sharding])
rec("constraint_jaxpr", lambda: str(jax.make_jaxpr(constrained)(xg)))
rec("constraint_vmap_jaxpr", lambda: str(jax.make_jaxpr(jax.vmap(constrained))(x44[None])))
rec("constraint_spec_jaxpr", lambda: _in_mesh(auto_grid, lambda: str(jax.make_jaxpr(
    lambda a: jax.lax.with_sharding_constraint(a, P(None, "x")))(x44))))
rec("constraint_grad", lambda: jax.grad(lambda a: constrained(a).sum())(x44))


def data_parallel_step(w, batch):
    grads = jax.grad(lambda w, b: jnp.sum((b * w) ** 2))(w, batch)
    return jax.lax.psum(grads, "x")


step = smap(data_parallel_step, auto, (P(), P("x")), P(), check_vma=False)
rec("smap_grad_inside", lambda: step(np.float32(2), v8))
rec("smap_grad_inside_jit", lambda: jax.jit(step)(np.float32(2), v8))
rec("grad_of_smap", lambda: jax.grad(lambda w: smap(lambda w, b: jax.lax.psum(jnp.sum((b * w) ** 2), "x"),
                                                    auto, (P(), P("x")), P())(w, v8))(np.float32(2)))
rec("smap_vmap", lambda: jax.vmap(smap(lambda a: jax.lax.psum(a, "x"), auto, P("x"), P()))(x_np.T))

print("RESULT-JSON " + json.dumps(results))

"""Prints jax.debug.visualize_array_sharding / visualize_sharding tables for several meshes and
specs; run on 8 CPU devices by numjax (`python -m numjax`) and by real JAX, the output must be
the same (tests/compat/test_sharding_view_vs_jax.py)."""
import jax
import jax.numpy as jnp

P = jax.sharding.PartitionSpec
NS = jax.sharding.NamedSharding
auto = jax.sharding.AxisType.Auto
mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(auto, auto))
mesh8 = jax.make_mesh((4, 2), ("a", "b"), axis_types=(auto, auto))
for shape, m, spec in [((8, 4), mesh, P("x", "y")), ((8,), mesh, P("x")), ((8, 4), mesh, P(None, "y")),
                       ((8, 4), mesh, P()), ((16, 16), mesh8, P("a", "b")), ((32, 8), mesh8, P(("a", "b"))),
                       ((8, 32), mesh8, P("b", "a")), ((3, 5), mesh8, P()), ((64, 2), mesh8, P("a"))]:
    jax.debug.visualize_array_sharding(jax.device_put(jnp.zeros(shape), NS(m, spec)))
jax.debug.visualize_array_sharding(jnp.ones((4, 4)))
jax.debug.visualize_array_sharding(jnp.ones((4,)), max_width=30)
jax.debug.visualize_sharding((16, 4), NS(mesh, P("x", "y")), scale=2.0, min_width=4)
jax.debug.visualize_sharding((4, 16), NS(mesh8, P("b", "a")), use_color=False)
try:
    jax.debug.visualize_sharding((2, 2, 2), NS(mesh, P()))
except ValueError as err:
    print("ValueError", str(err)[:58])

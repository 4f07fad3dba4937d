"""lax.all_to_all cases, run as `import jax` on numjax (python -m numjax) and on real JAX with
4 CPU devices; prints RESULT-JSON {case: value, jaxpr text or error}."""
import json
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
import numpy as np  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

out = {}


def rec(name, fn):
    try:
        v = fn()
        out[name] = str(v) if hasattr(v, "eqns") else np.asarray(v).tolist()
    except Exception as e:  # noqa: BLE001  (the error is the recorded value)
        out[name] = f"{type(e).__name__}: {str(e).splitlines()[0]}"


# (shape of one member's operand, split_axis, concat_axis, tiled)
CASES = {"tiled_1_0": ((4, 8, 3), 1, 0, True), "tiled_0_2": ((8, 2, 3), 0, 2, True),
         "tiled_same": ((2, 8, 3), 1, 1, True), "untiled_0_1": ((4, 3), 0, 1, False),
         "untiled_2_0": ((2, 3, 4), 2, 0, False), "untiled_same": ((3, 4), 1, 1, False),
         "negative": ((3, 4), -1, -2, False)}
rng = np.random.default_rng(0)
inputs = {k: rng.standard_normal((4,) + shape).astype(np.float32) for k, (shape, *_) in CASES.items()}
weights = {k: rng.standard_normal((4,) + shape).astype(np.float32) for k, (shape, *_) in CASES.items()}
mesh = jax.make_mesh((4,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))

for case, (shape, split, concat, tiled) in CASES.items():
    x = inputs[case]

    def a2a(v, name="i", split=split, concat=concat, tiled=tiled):
        return lax.all_to_all(v, name, split, concat, tiled=tiled)
    rec(f"pmap_{case}", lambda: jax.pmap(a2a, "i")(x))
    rec(f"vmap_{case}", lambda: jax.vmap(a2a, axis_name="i")(x))
    rec(f"jit_pmap_{case}", lambda: jax.jit(jax.pmap(a2a, "i"))(x))
    rec(f"shard_map_{case}", lambda: jax.shard_map(
        lambda v: a2a(v[0], "x")[None], mesh=mesh, in_specs=P("x"), out_specs=P("x"))(x))
    rec(f"jaxpr_{case}", lambda: jax.make_jaxpr(a2a, axis_env=[("i", 4)])(x[0]))
    if tiled:        # JAX 0.10.2's transpose of the untiled form fails (see the compat test)
        w = weights[case]
        def weighted(v, w):
            y = a2a(v)
            return jnp.sum(jnp.sin(y) * w.reshape(y.shape))
        rec(f"grad_pmap_{case}", lambda: jax.pmap(jax.grad(weighted), "i")(x, weights[case]))
        rec(f"grad_vmap_{case}", lambda: jax.grad(
            lambda v: jnp.sum(jnp.sin(jax.vmap(a2a, axis_name="i")(v)) ** 2))(x))
rec("untiled_grad_vmap", lambda: jax.grad(lambda v: jnp.sum(
    jnp.sin(jax.vmap(lambda u: lax.all_to_all(u, "i", 0, 1), axis_name="i")(v)) ** 2))(inputs["untiled_0_1"]))
rec("untiled_grad_pmap", lambda: jax.pmap(jax.grad(lambda u: jnp.sum(
    jnp.sin(lax.all_to_all(u, "i", 0, 1)) ** 2)), "i")(inputs["untiled_0_1"]))
rec("bad_size_untiled", lambda: jax.pmap(lambda v: lax.all_to_all(v, "i", 1, 0), "i")(inputs["tiled_1_0"]))
rec("bad_size_tiled", lambda: jax.pmap(lambda v: lax.all_to_all(v, "i", 2, 0, tiled=True), "i")(
    inputs["tiled_1_0"]))
rec("nested_vmap", lambda: jax.vmap(jax.vmap(lambda u: lax.all_to_all(u, "i", 0, 1, tiled=True), axis_name="i"),
                                    axis_name="j")(inputs["tiled_0_2"].reshape(2, 4, 4, 6)))
rec("vmap_inside_pmap", lambda: jax.pmap(jax.vmap(lambda u: lax.all_to_all(u, "i", 0, 1), in_axes=1,
                                                  out_axes=1), "i")(inputs["untiled_2_0"].transpose(0, 3, 2, 1)))
print("RESULT-JSON " + json.dumps(out))

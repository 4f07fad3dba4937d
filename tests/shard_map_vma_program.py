"""shard_map(check_vma=True/False) with grad, vjp, psum/pmean inside the body, run as
`import jax` on numjax (python -m numjax) and on real JAX with 4 CPU devices; prints
RESULT-JSON {case: value or error}. tests/compat/test_shard_map_vma_vs_jax.py compares them."""
import json
import os
import re

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
import numpy as np  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

AUTO = jax.sharding.AxisType.Auto
mesh1 = jax.make_mesh((4,), ("x",), axis_types=(AUTO,))
mesh2 = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AUTO, AUTO))
rng = np.random.default_rng(0)
W = rng.standard_normal((3, 2)).astype(np.float32)
X = rng.standard_normal((8, 3)).astype(np.float32)
B = rng.standard_normal((2,)).astype(np.float32)
out = {}


def rec(name, fn):
    try:
        out[name] = np.asarray(fn()).round(4).tolist()
    except Exception as e:  # noqa: BLE001  (the error is the recorded value)
        first = str(e).splitlines()[0]
        out[name] = f"{type(e).__name__}: " + re.sub(r"the function '[^']*'", "the function F", first)


def sm(f, in_specs, out_specs, vma, mesh=mesh1):
    return jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=vma)


def loss(w, x):
    return jnp.sum(jnp.sin(x @ w))


BODIES = {
    "grad_w": lambda w, x: jax.grad(loss)(w, x),
    "grad_w_psum": lambda w, x: jax.grad(lambda w: lax.psum(loss(w, x), "x"))(w),
    "grad_w_pmean": lambda w, x: jax.grad(lambda w: lax.pmean(loss(w, x), "x"))(w),
    "grad_w_invariant_path": lambda w, x: jax.grad(lambda w: loss(w, x) + jnp.sum(w ** 2))(w),
    "grad_w_only_invariant": lambda w, x: jax.grad(lambda w: jnp.sum(jnp.cos(w)))(w),
    "grad_w_axis_index": lambda w, x: jax.grad(lambda w: jnp.sum(w * lax.axis_index("x")))(w),
    "grad_w_psum_of_invariant": lambda w, x: jax.grad(lambda w: jnp.sum(lax.psum(w * 2.0, "x")))(w),
    "grad_w_after_psum_inside": lambda w, x: jax.grad(lambda w: jnp.sum(lax.psum(jnp.sin(x @ w), "x") ** 2))(w),
    "grad_w_all_gather": lambda w, x: jax.grad(lambda w: jnp.sum(lax.all_gather(x @ w, "x") ** 2))(w),
    "value_and_grad_w": lambda w, x: jax.value_and_grad(lambda w: lax.psum(loss(w, x), "x"))(w)[1],
    "grad_both_w": lambda w, x: jax.grad(loss, argnums=(0, 1))(w, x)[0],
}
# Gradients through control flow (eager and under jit, where cond stays a cond).
CONTROL_FLOW_BODIES = {
    # a psum inside a scan body: the carry stays invariant, the psum transposes to pvary
    "grad_w_scan_psum": lambda w, x: jax.grad(lambda w: lax.scan(
        lambda c, xi: (c + lax.psum(jnp.sum(jnp.sin(xi @ w)), "x"), None), 0.0, x)[0])(w),
    "grad_w_scan": lambda w, x: jax.grad(lambda w: jnp.sum(lax.scan(
        lambda c, xi: (c + jnp.sin(xi @ w), None), x[0] @ w * 0.0, x)[0]))(w),   # a varying carry
    "grad_w_cond": lambda w, x: jax.grad(lambda w: lax.cond(
        jnp.sum(w) > 0, lambda w: loss(w, x), lambda w: loss(w, x) * 2.0, w))(w),
}
VARYING_BODIES = {
    "grad_x": lambda w, x: jax.grad(loss, argnums=1)(w, x),
    "grad_x_psum": lambda w, x: jax.grad(lambda x: lax.psum(loss(w, x), "x"), argnums=0)(x),
    "grad_both_x": lambda w, x: jax.grad(loss, argnums=(0, 1))(w, x)[1],
    "grad_x_via_invariant_w": lambda w, x: jax.grad(lambda x: jnp.sum(jnp.sin(x @ (w * lax.psum(jnp.sum(x), "x")))))(x),
}

for vma in (True, False):
    for name, body in BODIES.items():
        for o, ospec in (("rep", P()), ("x", P("x"))):
            rec(f"{name}_{vma}_{o}", lambda: sm(body, (P(), P("x")), ospec, vma)(W, X))
        rec(f"{name}_{vma}_jit", lambda: jax.jit(sm(body, (P(), P("x")), P(), vma))(W, X))
    for name, body in CONTROL_FLOW_BODIES.items():
        rec(f"{name}_{vma}_x", lambda: sm(body, (P(), P("x")), P("x"), vma)(W, X))
        rec(f"{name}_{vma}_jit", lambda: jax.jit(sm(body, (P(), P("x")), P("x"), vma))(W, X))
        rec(f"{name}_{vma}_rep", lambda: sm(body, (P(), P("x")), P(), vma)(W, X))
        rec(f"{name}_{vma}_jit_rep", lambda: jax.jit(sm(body, (P(), P("x")), P(), vma))(W, X))
    for name, body in VARYING_BODIES.items():
        rec(f"{name}_{vma}", lambda: sm(body, (P(), P("x")), P("x"), vma)(W, X))
    rec(f"value_varying_{vma}_rep", lambda: sm(lambda w, x: x @ w, (P(), P("x")), P(), vma)(W, X))
    # still varying after the grad: replication errors with check_vma
    rec(f"grad_w_times_varying_{vma}_rep", lambda: sm(lambda w, x: jax.grad(loss)(w, x) * jnp.sum(x),
                                                      (P(), P("x")), P(), vma)(W, X))
    rec(f"grad_x_sum_{vma}_rep", lambda: sm(lambda w, x: jnp.sum(jax.grad(loss, argnums=1)(w, x), 0),
                                            (P(), P("x")), P(), vma)(W, X))
    rec(f"mesh2_grad_b_{vma}_rep", lambda: sm(
        lambda w, x, b: jax.grad(lambda b: jnp.sum(jnp.sin(x @ w + b)))(b), (P(), P("x"), P("y")), P(), vma,
        mesh2)(W, X, B))
    rec(f"mesh2_grad_b_{vma}_y", lambda: sm(
        lambda w, x, b: jax.grad(lambda b: jnp.sum(jnp.sin(x @ w + b)))(b), (P(), P("x"), P("y")), P("y"), vma,
        mesh2)(W, X, B))
    rec(f"outer_grad_{vma}", lambda: jax.grad(lambda w: jnp.sum(
        sm(lambda w, x: jnp.sin(x @ w), (P(), P("x")), P("x"), vma)(w, X)))(W))
    # a 2x2 mesh: x varies over 'x' only, b over 'y' only
    body2 = lambda w, x, b: jax.grad(lambda w: jnp.sum(jnp.sin(x @ w + b)))(w)  # noqa: E731
    for o, ospec in (("rep", P()), ("x", P("x")), ("xy", P(("x", "y")))):
        rec(f"mesh2_grad_w_{vma}_{o}", lambda: sm(body2, (P(), P("x"), P("y")), ospec, vma, mesh2)(W, X, B))
    rec(f"mesh2_grad_w_psum_y_{vma}", lambda: sm(
        lambda w, x, b: jax.grad(lambda w: lax.psum(jnp.sum(jnp.sin(x @ w + b)), "y"))(w),
        (P(), P("x"), P("y")), P("x"), vma, mesh2)(W, X, B))
print("RESULT-JSON " + json.dumps(out))

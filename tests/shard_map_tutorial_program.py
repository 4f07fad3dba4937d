"""Behaviours of ``jax.shard_map`` that JAX's shard_map tutorial shows, run as `import jax` on
numjax (python -m numjax) and on real JAX with 8 CPU devices; prints one `== case` line, then
what the case prints. tests/test_shard_map_tutorial.py checks numjax's text against what JAX
0.10.2 prints; tests/compat/test_shard_map_tutorial_vs_jax.py compares the whole output.

An error is printed as `ERR Class: first sentence of its message` (numjax adds a hint after it)."""
import os
from functools import partial

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
import numpy as np  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

AUTO, EXPLICIT = AxisType.Auto, AxisType.Explicit


def case(name):
    def run(fn):
        print(f"== {name}", flush=True)
        try:
            fn()
        except Exception as e:  # noqa: BLE001  (the error is what the case shows)
            first = str(e).splitlines()[0] if str(e) else ""
            print(f"ERR {type(e).__name__}: {first.split('. ')[0]}")
        return fn
    return run


mesh_i = jax.make_mesh((4,), ("i",), axis_types=(AUTO,))
mesh_ij = jax.make_mesh((2, 2), ("i", "j"), axis_types=(AUTO, AUTO))


@case("eager_print_1d")
def _():
    def f(x):
        print("block", x)
        y = lax.psum(x, "i")
        print("sum", y)
        return y
    out = jax.shard_map(f, mesh=mesh_i, in_specs=P("i"), out_specs=P())(jnp.array([3, 1, 4, 1, 5, 9, 2, 6]))
    print("out", out)


@case("eager_print_2d")
def _():
    def f(x, y):
        print("x", x)
        print("y", repr(y))
        print("sum_i", lax.psum(x, "i"))
        print("scalar", jnp.sum(x))
        print("compare", y > 0)
        return x
    jax.shard_map(f, mesh=mesh_ij, in_specs=(P("i", "j"), P()), out_specs=P("i", "j"))(
        jnp.arange(8.).reshape(2, 4), jnp.arange(2))


@case("eager_print_collectives")
def _():
    def f(x):
        print("index", lax.axis_index("i"))
        print("first_plus_index", x[0] + lax.axis_index("i"))
        print("gathered", lax.all_gather(x, "i", tiled=True))
        print("shifted", lax.ppermute(x, "i", [(k, (k + 1) % 4) for k in range(4)]))
        return x
    jax.shard_map(f, mesh=mesh_i, in_specs=P("i"), out_specs=P("i"))(jnp.arange(8))


@case("print_in_grad_body_value")
def _():
    def f(w, x):
        g = jax.grad(lambda w: jnp.sum(jnp.sin(x * w)))(w)
        print("grad", g.round(3))
        return g
    out = jax.shard_map(f, mesh=mesh_i, in_specs=(P(), P("i")), out_specs=P())(
        jnp.float32(0.5), jnp.arange(4.))
    print("out", out.round(3))


@case("traced_once")
def _():
    def f(x):
        print("trace", x.shape)
        return lax.psum(x, "i")
    g = jax.shard_map(f, mesh=mesh_i, in_specs=P("i"), out_specs=P())
    print("eager", g(jnp.arange(8.)))
    print("eager again", g(jnp.arange(8.)))
    print("jit", jax.jit(g)(jnp.arange(8.) * 2))


@case("python_control_flow")
def _():
    def f(x, y):
        if jnp.sum(y) > 0:          # y is the same on every device: its value is known
            print("invariant branch taken")
        try:
            bool(jnp.sum(x) > 0)    # x differs across devices
        except Exception as e:      # noqa: BLE001
            print("varying", type(e).__name__)
        return x
    jax.shard_map(f, mesh=mesh_i, in_specs=(P("i"), P()), out_specs=P("i"))(jnp.arange(8.), jnp.ones(3))


@case("infer_in_specs")
def _():
    mesh = jax.make_mesh((2, 4), ("i", "j"), axis_types=(EXPLICIT, EXPLICIT))
    x = jax.device_put(jnp.arange(16.).reshape(2, 8), NamedSharding(mesh, P("i", "j")))
    w = jax.device_put(jnp.arange(8.), NamedSharding(mesh, P("j")))

    def f(a, b, c):
        print("blocks", a.shape, b.shape, c.shape)
        return a * b + c[0]
    with jax.set_mesh(mesh):
        out = jax.shard_map(f, out_specs=P("i", "j"))(x, w, np.arange(3.))
    print(out.sharding.spec, out.tolist())


@case("infer_in_specs_partial_manual")
def _():
    mesh = jax.make_mesh((2, 4), ("i", "j"), axis_types=(EXPLICIT, EXPLICIT))
    x = jax.device_put(jnp.arange(16.).reshape(2, 8), NamedSharding(mesh, P("i", "j")))

    def f(a):
        print("block", a.shape)
        return a * 2
    with jax.set_mesh(mesh):
        out = jax.shard_map(f, out_specs=P("i"), axis_names={"i"})(x)
    print(out.tolist())


@case("infer_in_specs_auto_mesh")
def _():
    jax.shard_map(lambda x: x, mesh=mesh_i, out_specs=P())(jnp.arange(4.))


@case("in_specs_none_static")
def _():
    def f(a, n):
        print("static", a.shape, type(n).__name__, n.shape)
        return a + jnp.sum(n)
    out = jax.shard_map(f, mesh=mesh_i, in_specs=(P("i"), None), out_specs=P("i"))(
        jnp.arange(8.), np.arange(3.))
    print(out.tolist())


def predict(params, inputs):
    for W, b in params:
        outputs = jnp.dot(inputs, W) + b
        inputs = jax.nn.relu(outputs)
    return outputs


def loss(params, batch):
    inputs, targets = batch
    predictions = predict(params, inputs)
    return jnp.mean(jnp.sum((predictions - targets) ** 2, axis=-1))


def init(key, sizes, batch_size):
    keys = jax.random.split(key, len(sizes))
    params = [(jax.random.normal(k, (m, n)) / np.sqrt(m), jnp.zeros(n))
              for k, m, n in zip(keys[1:], sizes[:-1], sizes[1:])]
    inputs = jax.random.normal(keys[0], (batch_size, sizes[0]))
    return params, (inputs, jnp.ones((batch_size, sizes[-1])))


# The tutorial's data-parallel and fully-sharded losses: in_specs left out, read from the
# arguments' sharding types on an Explicit mesh.
params0, batch0 = init(jax.random.key(0), [16, 32, 32, 4], 32)
reference = float(loss(params0, batch0))


@case("loss_dp")
def _():
    mesh = jax.make_mesh((8,), ("batch",), axis_types=(EXPLICIT,))
    with jax.set_mesh(mesh):
        batch = jax.device_put(batch0, P("batch"))
        params = jax.device_put(params0, P())

        @jax.shard_map(out_specs=P())
        def loss_dp(params, local_batch):
            print("local batch", local_batch[0].shape)
            return lax.pmean(loss(params, local_batch), "batch")
        print(np.allclose(float(jax.jit(loss_dp)(params, batch)), reference, rtol=1e-5))
        print(np.allclose(float(loss_dp(params, batch)), reference, rtol=1e-5))


@case("loss_fsdp")
def _():
    mesh = jax.make_mesh((4,), ("batch",), axis_types=(EXPLICIT,))
    with jax.set_mesh(mesh):
        batch = jax.device_put(batch0, P("batch"))
        params = jax.device_put(params0, P("batch"))

        @partial(jax.remat, policy=lambda op, *_, **__: str(op) != "all_gather")
        def predict_fsdp(params_frag, inputs):
            for W_frag, b_frag in params_frag:
                W = lax.all_gather(W_frag, "batch", tiled=True)
                b = lax.all_gather(b_frag, "batch", tiled=True)
                outputs = jnp.dot(inputs, W) + b
                inputs = jax.nn.relu(outputs)
            return outputs

        @jax.shard_map(out_specs=P())
        def loss_fsdp(params, local_batch):
            print("first weight block", params[0][0].shape)
            inputs, targets = local_batch
            local = jnp.mean(jnp.sum((predict_fsdp(params, inputs) - targets) ** 2, -1))
            return lax.pmean(local, "batch")
        print(np.allclose(float(jax.jit(loss_fsdp)(params, batch)), reference, rtol=1e-5))
        grads = jax.jit(jax.grad(loss_fsdp))(params, batch)
        want = jax.grad(loss)(params0, batch0)
        print(all(np.allclose(np.asarray(a), np.asarray(b), atol=1e-4)
                  for a, b in zip(jax.tree.leaves(grads), jax.tree.leaves(want))))


@case("eager_equals_jit")
def _():
    # the eager run (op by op, every mesh axis a vmap axis) gives what the compiled run gives
    x = jnp.arange(32.).reshape(4, 8)
    bodies = {
        "psum": (lambda a: lax.psum(a, "i"), P("i"), P()),
        "pmean_2d": (lambda a: lax.pmean(a * 2, ("i", "j")), P("i", "j"), P()),
        "all_gather": (lambda a: lax.all_gather(a, "j", axis=1, tiled=True), P("i", "j"), P("i", "j")),
        "ppermute": (lambda a: lax.ppermute(a, "i", [(0, 1), (1, 0)]), P("i", "j"), P("i", "j")),
        "psum_scatter": (lambda a: lax.psum_scatter(a, "j", scatter_dimension=1, tiled=True), P("i"),
                         P("i", "j")),
        "all_to_all": (lambda a: lax.all_to_all(a, "j", 0, 0, tiled=True), P(None, "j"), P("j")),
        "axis_index": (lambda a: a * lax.axis_index("i") + lax.axis_index("j"), P("i", "j"), P("i", "j")),
        "replicated_in": (lambda a: jnp.sin(a) @ a.T, P(), P()),
    }
    for name, (body, in_spec, out_spec) in bodies.items():
        @case(f"eager_equals_jit {name}")
        def _():
            g = jax.shard_map(body, mesh=mesh_ij, in_specs=in_spec, out_specs=out_spec)
            eager, jitted = g(x), jax.jit(g)(x)
            print(eager.shape, bool(jnp.allclose(eager, jitted, rtol=1e-6)), round(float(jnp.sum(eager)), 3))

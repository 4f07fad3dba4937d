"""Probes of JAX's sharding in types, run in a fresh process with 8 CPU devices (the device
count is fixed at first use); prints one ``name: result`` line per probe.  Run with numjax
(tests/test_sharding_types.py) or real JAX (tests/compat/test_sharding_types_compat.py)."""
import sys

if sys.argv[1:] == ["jax"]:
    import jax
    import jax.numpy as jnp
else:
    import numjax as jax
    import numjax.numpy as jnp
import numpy as np

jax.config.update("jax_num_cpu_devices", 8)
P = jax.P
auto_axes, explicit_axes = jax.sharding.auto_axes, jax.sharding.explicit_axes


def probe(name, fn):
    try:
        out = fn()
    except Exception as e:   # noqa: BLE001 -- the error class and message are the result
        out = f"{type(e).__name__}: {e}"
    print(f"{name}: {out}", flush=True)


jax.set_mesh(jax.make_mesh((4, 2), ("X", "Y")))
x = jax.device_put(np.arange(32, dtype=np.float32).reshape(8, 4), P("X", "Y"))
probe("typeof", lambda: str(jax.typeof(x)))
probe("repr", lambda: repr(jax.typeof(x)))
probe("type_sharding", lambda: repr(jax.typeof(x).sharding))
probe("plain", lambda: repr(jax.typeof(jnp.ones(3)).sharding))
probe("sin_T", lambda: str(jax.typeof(jnp.sin(x).T)))
probe("mul_scalar", lambda: str(jax.typeof(x * 2)))
probe("add_numpy", lambda: str(jax.typeof(x + np.ones((8, 4), np.float32))))
probe("sum0", lambda: str(jax.typeof(x.sum(0))))
probe("sum_all", lambda: str(jax.typeof(jnp.sum(x))))
probe("argmax1", lambda: str(jax.typeof(jnp.argmax(x, axis=1))))
probe("reshape_merge", lambda: str(jax.typeof(x.reshape(32))))
probe("reshape_bad", lambda: str(jax.typeof(x.reshape(2, 4, 4))))
probe("expand", lambda: str(jax.typeof(jnp.expand_dims(x, 0))))
probe("broadcast", lambda: str(jax.typeof(jnp.broadcast_to(x[:, None, :], (8, 3, 4)))))
probe("concat1", lambda: str(jax.typeof(jnp.concatenate([x, x], axis=1))))
probe("concat0", lambda: str(jax.typeof(jnp.concatenate([x, x], axis=0))))
probe("astype", lambda: str(jax.typeof(x.astype(jnp.int32))))
probe("where", lambda: str(jax.typeof(jnp.where(x > 2, x, 0.0))))
probe("softmax", lambda: str(jax.typeof(jax.nn.softmax(x, axis=-1))))
probe("matmul_right", lambda: str(jax.typeof(x @ jnp.ones((4, 3)))))
probe("matmul_left", lambda: str(jax.typeof(jnp.ones((3, 8)) @ x)))
probe("cumsum", lambda: str(jax.typeof(jnp.cumsum(x, axis=1))))
probe("sort", lambda: str(jax.typeof(jnp.sort(x, axis=0))))
probe("jit", lambda: (str(jax.typeof(jax.jit(lambda v: v * 2)(x))), str(jax.jit(lambda v: v * 2)(x).sharding)))
probe("jaxpr", lambda: str(jax.make_jaxpr(lambda v: jnp.sin(v).sum(0) * 2)(x)))
probe("zeros_out_sharding", lambda: str(jax.typeof(jnp.zeros((8, 4), out_sharding=P("X")))))
probe("full_out_sharding", lambda: str(jax.typeof(jnp.full((8, 4), 2.0, out_sharding=P(None, "Y")))))
probe("reshape_out_sharding", lambda: str(jax.typeof(x.reshape(2, 4, 4, out_sharding=P(None, "X", "Y")))))
probe("reshape_out_sharding_jit", lambda: str(jax.typeof(jax.jit(
    lambda v: jnp.reshape(v, (2, 4, 4), out_sharding=P(None, "X", "Y")) + 1)(x))))
probe("random", lambda: str(jax.typeof(jax.random.normal(jax.random.key(0), (8, 4), out_sharding=P("X", "Y")))))
probe("random_bits_equal", lambda: bool(np.array_equal(
    np.asarray(jax.random.normal(jax.random.key(0), (8, 4), out_sharding=P("X", "Y"))),
    np.asarray(jax.random.normal(jax.random.key(0), (8, 4))))))
a0 = jax.device_put(np.arange(4).reshape(4, 1), P("X", None))
a1 = jax.device_put(np.arange(8).reshape(1, 8), P(None, "Y"))
probe("outer_add", lambda: str(jax.typeof(a0 + a1)))
u = jax.device_put(np.arange(16).reshape(4, 4), P("X", None))
v = jax.device_put(np.arange(16).reshape(4, 4), P(None, "X"))
probe("illegal", lambda: str(u + v))
probe("incompatible", lambda: str(u + jax.device_put(np.arange(16).reshape(4, 4), P("Y", None))))
l = jax.device_put(jnp.arange(8 * 4.).reshape(8, 4), P(None, "X"))
r = jax.device_put(jnp.arange(4 * 16.).reshape(4, 16), P("X", None))
probe("dot_ambiguous", lambda: str(jnp.dot(l, r)))
probe("dot_out_sharding", lambda: str(jax.typeof(jnp.dot(l, r, out_sharding=P("X", None)))))
probe("dot_value", lambda: bool(np.allclose(np.asarray(jnp.dot(l, r, out_sharding=P("X", None))),
                                             np.asarray(l) @ np.asarray(r))))


@auto_axes
def add2(a, b):
    print("auto mesh:", jax.sharding.get_abstract_mesh())
    return a + b


probe("auto_axes", lambda: str(jax.typeof(add2(u, v, out_sharding=P("X", None)))))


def in_jit(a):
    abstract = jax.sharding.AbstractMesh((8,), ("A",), (jax.sharding.AxisType.Explicit,))
    with jax.sharding.use_abstract_mesh(abstract):
        return jax.reshard(a, P("A", None)) * 2


probe("use_abstract_mesh", lambda: str(jax.typeof(jax.jit(in_jit)(x))))


def grad_step(w, batch):
    return jax.grad(lambda w: jnp.sum(jnp.tanh(batch @ w)))(w)


probe("grad_replicated_param", lambda: str(jax.typeof(jax.jit(grad_step)(
    jax.device_put(np.ones((4, 3), np.float32), P()), x))))

# einsum's out_sharding goes to its last contraction (in that contraction's dimension order)
a8 = jax.device_put(np.arange(32, dtype=np.float32).reshape(8, 4), P(None, "X"))
probe("einsum_out_sharding", lambda: str(jax.typeof(jnp.einsum("ij,kj->ik", a8, a8, out_sharding=P("X")))))
probe("einsum_out_sharding_transposed", lambda: str(jax.typeof(
    jnp.einsum("ij,kj->ki", a8, a8, out_sharding=P(None, "X")))))
probe("einsum_out_sharding_value", lambda: np.asarray(
    jnp.einsum("ij,kj->ki", a8, a8, out_sharding=P(None, "X"))).sum())
probe("einsum_no_contraction", lambda: str(jax.typeof(jnp.einsum("ij->ji", a8, out_sharding=P("X", None)))))
probe("einsum_ambiguous", lambda: str(jax.typeof(jnp.einsum("ij,kj->ik", a8, a8))))

auto_mesh = jax.make_mesh((4, 2), ("X", "Y"), (jax.sharding.AxisType.Auto,) * 2)
jax.set_mesh(auto_mesh)
xa = jax.device_put(np.arange(16.0, dtype=np.float32).reshape(4, 4), P("X", "Y"))


@explicit_axes
def explicit_g(y):
    print("explicit mesh:", jax.sharding.get_abstract_mesh())
    print("typeof inside:", repr(jax.typeof(y * 2)))
    return y * 2


probe("explicit_axes", lambda: np.asarray(jax.jit(lambda a: explicit_g(jnp.sin(a), in_sharding=P("X", "Y")) + 1)(xa)).shape)


# lax.axis_size and lax.pcast inside shard_map
probe("axis_size", lambda: np.asarray(jax.shard_map(lambda: jnp.float32(jax.lax.axis_size(("X", "Y"))), in_specs=(),
                                                    out_specs=P())()).tolist())


def swap_carry(v, w):
    w = jax.lax.pcast(w, "X", to="varying")     # a scan carry must vary as the other does
    (v, w), _ = jax.lax.scan(lambda c, _: ((c[1], c[0]), ()), (v, w), (), length=3)
    return v, w


probe("pcast_scan", lambda: [np.asarray(o).tolist() for o in jax.shard_map(
    swap_carry, in_specs=(P("X"), P()), out_specs=P("X"))(jnp.arange(8.0), jnp.arange(2.0))])
probe("pcast_grad", lambda: np.asarray(jax.grad(lambda w: jax.shard_map(
    lambda w: jax.lax.pcast(w, "X", to="varying") * (1 + jax.lax.axis_index("X")), in_specs=P(),
    out_specs=P("X"))(w).sum())(jnp.arange(3.0))).tolist())


def allowed_values(thunk):
    """The error's text with the allowed values sorted (a set's order varies by process)."""
    try:
        thunk()
    except ValueError as e:
        head, _, values = str(e).partition(": ")
        return f"ValueError: {head}: {sorted(values.strip('{}').replace(chr(39), '').split(', '))}"
    return "no error"


probe("pcast_bad_to", lambda: allowed_values(lambda: jax.lax.pcast(jnp.ones(2), "X", to="sideways")))
probe("pcast_set", lambda: jax.lax.pcast(jnp.ones(2), {"X"}, to="varying"))

"""lax.psum_scatter cases, run as `import jax` on numjax (python -m numjax) and on real JAX
with 4 CPU devices; prints RESULT-JSON {case: value or error}."""
import json
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
import numpy as np  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

out = {}


def rec(name, fn):
    try:
        out[name] = np.asarray(fn()).tolist()
    except Exception as e:  # noqa: BLE001  (the error is the recorded value)
        out[name] = f"{type(e).__name__}: {str(e).splitlines()[0]}"


x = np.arange(4 * 4 * 6, dtype=np.float32).reshape(4, 4, 6)
y = np.arange(4 * 3 * 8, dtype=np.int32).reshape(4, 3, 8)
for mapper in ("pmap", "vmap"):
    m = (lambda f: jax.pmap(f, "i")) if mapper == "pmap" else (lambda f: jax.vmap(f, axis_name="i"))
    rec(f"{mapper}_untiled", lambda: m(lambda v: lax.psum_scatter(v, "i"))(x))
    rec(f"{mapper}_tiled", lambda: m(lambda v: lax.psum_scatter(v, "i", tiled=True))(x))
    rec(f"{mapper}_dim1_tiled", lambda: m(lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True))(y))
    rec(f"{mapper}_dim_neg", lambda: m(lambda v: lax.psum_scatter(v, "i", scatter_dimension=-1, tiled=True))(y))
    rec(f"{mapper}_bad_size", lambda: m(lambda v: lax.psum_scatter(v, "i", scatter_dimension=1))(x))
    rec(f"{mapper}_bad_tiled", lambda: m(lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True))(x[:, :3]))
rec("grad", lambda: jax.grad(lambda v: jnp.sum(jax.vmap(
    lambda u: lax.psum_scatter(u, "i", tiled=True), axis_name="i")(v) ** 2))(x))
rec("grad_pmap", lambda: jax.pmap(jax.grad(lambda u: jnp.sum(lax.psum_scatter(u, "i") * 3.0)), "i")(x))
rec("nested_vmap", lambda: jax.vmap(jax.vmap(lambda u: lax.psum_scatter(u, "i", tiled=True),
                                             axis_name="i"), axis_name="j")(x[:, :, :4].transpose(2, 0, 1)))
print("RESULT-JSON " + json.dumps(out))

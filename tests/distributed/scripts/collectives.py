"""Every pmap collective on a global input; each process saves its local shards' results."""
import numpy as np

import _worker
import numjax as jax
from numjax import lax, numpy as jnp

p, local = _worker.init()
n = jax.device_count()
rng = np.random.default_rng(0)
xf = rng.standard_normal((n, 4, 2 * n)).astype(np.float32)
xi = rng.integers(-50, 50, (n, 3, n)).astype(np.int32)


def collectives(f, i):
    shift = [(k, (k + 1) % n) for k in range(n)]
    partial = [(0, n - 1)] + [(k, k - 1) for k in range(2, n)]     # some devices receive nothing
    return dict(
        psum_f=lax.psum(f, "i"), psum_i=lax.psum(i, "i"), pmean=lax.pmean(f, "i"),
        pmax=lax.pmax(f, "i"), pmin=lax.pmin(i, "i"), axis_index=lax.axis_index("i"),
        gather=lax.all_gather(i, "i"), gather_tiled=lax.all_gather(f, "i", axis=1, tiled=True),
        ppermute=lax.ppermute(f, "i", shift), ppermute_partial=lax.ppermute(i, "i", partial),
        scatter=lax.psum_scatter(i, "i", scatter_dimension=1),
        scatter_tiled=lax.psum_scatter(f, "i", scatter_dimension=1, tiled=True),
        all_to_all=lax.all_to_all(i, "i", 1, 0, tiled=True),
        all_to_all_untiled=lax.all_to_all(i, "i", 1, 0),
        all_to_all_same_axis=lax.all_to_all(f, "i", 1, 1, tiled=True),
        all_to_all_grad=jax.grad(lambda v: jnp.sum(jnp.sin(lax.all_to_all(v, "i", 1, 0, tiled=True))
                                                   * jnp.arange(8.0 * n).reshape(4 * n, 2)))(f),
        # a collective inside a loop: every process must run the same iterations
        loop=lax.fori_loop(0, 3, lambda k, c: c + lax.psum(c * 0 + k, "i"), f),
        while_loop=lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + lax.pmax(c[1], "i")),
                                  (0, i))[1],
        cond=lax.cond(lax.axis_index("i") >= 0, lambda v: lax.pmin(v, "i"), lambda v: v, f),
        grad=jax.grad(lambda v: jnp.sum(lax.psum(v * v, "i")))(f),
        # dtypes MPI has no reduction for go through a wider type; bool and int8 as they are
        psum_bf16=lax.psum(i.astype(jnp.bfloat16), "i").astype(jnp.float32),
        pmax_i8=lax.pmax(i.astype(jnp.int8), "i"), gather_bool=lax.all_gather(i > 0, "i"),
        pmin_bool=lax.pmin(i > -40, "i"), psum_c64=lax.psum(f * 1j, "i"))


out = jax.pmap(collectives, "i")(_worker.local_part(xf), _worker.local_part(xi))
_worker.save(process_index=p, process_count=jax.process_count(), local_device_count=local,
             process_indices=jax.process_indices(),
             local_of_last=[d.id for d in jax.local_devices(process_index=jax.process_count() - 1)],
             device_ids=[d.id for d in jax.devices()], device_processes=[d.process_index for d in jax.devices()],
             local_ids=[d.id for d in jax.local_devices()], **out)

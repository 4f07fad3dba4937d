"""``reshard``: the identity on values that gives its result another sharding in its type
(JAX's reshard / mesh_cast under jit, ``auto_axes`` and ``explicit_axes``; see
numjax/sharding_types.py).  numjax computes one global program, so it moves no data."""
from .. import core
from ..interpreters import ad, batching
from ._base import make_primitive


def _reshard_abstract_eval(x, *, dst_sharding):
    return core.ShapedArray(x.shape, x.dtype, x.weak_type, dst_sharding)


def _reshard_impl(x, *, dst_sharding):
    return x


reshard_p = make_primitive("reshard", _reshard_impl, _reshard_abstract_eval, elementwise=True)
# Its abstract evaluation sets the sharding itself: the sharding rules leave it alone.
reshard_p.sets_sharding = True


def reshard(x, dst_sharding):
    """``x`` whose type carries ``dst_sharding`` (a NamedSharding over an AbstractMesh naming
    Explicit axes, or None: no sharding in its type)."""
    return reshard_p.bind(x, dst_sharding=dst_sharding)


def _reshard_transpose(ct, x, *, dst_sharding):
    aval = x.aval if ad.is_undefined(x) else core.get_aval(x)
    return [reshard_p.bind(ct, dst_sharding=aval._sharding)]


ad.deflinear2(reshard_p, _reshard_transpose)


def _reshard_batch(vals, dims, *, dst_sharding):
    (x,), (d,) = vals, dims
    if dst_sharding is not None:   # the batch dimension is not sharded
        from ..sharding import NamedSharding, PartitionSpec
        spec = list(dst_sharding.spec) + [None] * (core.get_aval(x).ndim - 1 - len(dst_sharding.spec))
        spec.insert(d, None)
        dst_sharding = NamedSharding(dst_sharding.mesh, PartitionSpec(*spec))
    return reshard_p.bind(x, dst_sharding=dst_sharding), d


batching.batch_rules[reshard_p] = _reshard_batch

"""``reshard``: the identity on values that gives its result another sharding in its type
(JAX's reshard / mesh_cast under jit, ``auto_axes`` and ``explicit_axes``; see
numjax/sharding_types.py).  numjax computes one global program, so it moves no data."""
from .. import core
from ..interpreters import ad, batching
from ..jaxpr import param_printers
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


# ---------------------------------------------------------------- sharding_constraint
# ``lax.with_sharding_constraint`` under a trace (on Auto mesh axes): the identity on values
# that records the sharding asked for, so a jitted program's output reports it (JAX's
# compiler would lay the value out so). ``sharding`` is over the abstract mesh, its spec
# padded to the rank with UNCONSTRAINED at ``unconstrained_dims``.

def _constraint_abstract_eval(x, *, sharding, layout, context_mesh, unconstrained_dims):
    return x


def _constraint_impl(x, *, sharding, layout, context_mesh, unconstrained_dims):
    return x


sharding_constraint_p = make_primitive("sharding_constraint", _constraint_impl, _constraint_abstract_eval,
                                       elementwise=True)


def sharding_constraint(x, sharding, context_mesh):
    """``x`` constrained to ``sharding`` (a NamedSharding over an AbstractMesh)."""
    return sharding_constraint_p.bind(x, sharding=sharding, layout=None, context_mesh=context_mesh,
                                      unconstrained_dims=frozenset(_unconstrained(sharding.spec)))


def _unconstrained(spec):
    from ..sharding import UNCONSTRAINED
    return {d for d, e in enumerate(spec) if e is UNCONSTRAINED}


ad.deflinear2(sharding_constraint_p, lambda ct, x, **params: [sharding_constraint_p.bind(ct, **params)])


def _constraint_batch(vals, dims, *, sharding, layout, context_mesh, unconstrained_dims):
    (x,), (d,) = vals, dims
    from ..sharding import UNCONSTRAINED, NamedSharding, PartitionSpec
    spec = list(sharding.spec)
    spec.insert(d, UNCONSTRAINED)        # the batch dimension is left to the compiler
    sharding = NamedSharding(sharding.mesh, PartitionSpec(*spec, unreduced=sharding.spec.unreduced))
    return sharding_constraint_p.bind(x, sharding=sharding, layout=layout, context_mesh=context_mesh,
                                      unconstrained_dims=frozenset(_unconstrained(spec))), d


batching.batch_rules[sharding_constraint_p] = _constraint_batch


class _SetText(frozenset):
    """A frozenset printed as JAX prints the param (``frozenset({})`` when empty)."""
    def __str__(self):
        return "frozenset({" + ", ".join(map(repr, sorted(self))) + "})"


param_printers[sharding_constraint_p] = lambda p: {
    "context_mesh": p["context_mesh"], "layout": p["layout"], "sharding": p["sharding"],
    "unconstrained_dims": _SetText(p["unconstrained_dims"])}

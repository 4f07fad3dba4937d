"""vmap as an interpreter: values carry the position of their batch dimension.

batch rule: ``(vals_in, dims_in, **params) -> (vals_out, dims_out)`` where a
dim is an int (the batch axis of that value) or ``not_mapped`` (None).
Constructors: ``defvectorized`` (unary elementwise), ``defbroadcasting``
(n-ary elementwise with lax's implicit broadcasting).
"""
import numpy as np

from .. import core

batch_rules = {}
not_mapped = None


class BatchTracer(core.Tracer):
    __slots__ = ("val", "batch_dim")

    def __init__(self, trace, val, batch_dim):
        self._trace, self.val, self.batch_dim = trace, val, batch_dim

    @property
    def aval(self):
        aval = core.get_aval(self.val)
        if self.batch_dim is not_mapped:
            return aval
        shape = aval.shape[:self.batch_dim] + aval.shape[self.batch_dim + 1:]
        return core.ShapedArray(shape, aval.dtype, aval.weak_type)

    def full_lower(self):
        return core.full_lower(self.val) if self.batch_dim is not_mapped else self

    def _short_repr(self):
        return f"VmapTracer(aval={core.aval_str(self.aval)}, batched={core.aval_str(core.get_aval(self.val))})"


class AxisData:
    __slots__ = ("size", "name")
    spmd_name = explicit_mesh_axis = None   # JAX's AxisData has these; numjax has no meshes

    def __init__(self, size, name):
        self.size, self.name = size, name


class BatchTrace(core.Trace):
    @property
    def axis(self):
        return self.main.global_data

    def pure(self, val):
        return BatchTracer(self, val, not_mapped)

    lift = pure

    def process_primitive(self, primitive, tracers, params):
        vals = [t.val for t in tracers]
        dims = [t.batch_dim for t in tracers]
        rule = batch_rules.get(primitive)
        if all(d is not_mapped for d in dims) and not getattr(rule, "always", False):
            return primitive.bind(*vals, **params)
        if rule is None:
            raise NotImplementedError(f"Batching rule for '{primitive.name}' not implemented")
        if getattr(rule, "needs_axis", False):
            outs, out_dims = rule(vals, dims, axis_data=self.axis, **params)
        else:
            outs, out_dims = rule(vals, dims, **params)
        if primitive.multiple_results:
            return [BatchTracer(self, o, d) for o, d in zip(outs, out_dims)]
        return BatchTracer(self, outs, out_dims)


def batch_flat(fun, axis_size, axis_name, vals, dims):
    """Run ``fun`` on batched values; returns outputs with their batch dims."""
    with core.new_main(BatchTrace, AxisData(axis_size, axis_name)) as main:
        trace = BatchTrace(main)
        tracers = [BatchTracer(trace, v, d) if d is not not_mapped else v for v, d in zip(vals, dims)]
        outs = fun(*tracers)
        outs = [trace.full_raise(o) for o in outs]
        return [o.val for o in outs], [o.batch_dim for o in outs]


# ---------------------------------------------------------------- helpers

def moveaxis(x, src, dst):
    from .. import lax
    if src == dst:
        return x
    nd = core.get_aval(x).ndim
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return lax.transpose(x, perm)


def bdim_at_front(x, dim, size):
    """``x`` with its batch axis first; an unbatched value is broadcast to ``size``."""
    from .. import lax
    if dim is not_mapped:
        return lax.broadcast(x, (size,))
    return moveaxis(x, dim, 0)


def matchaxis(x, src, dst, size):
    """Move (or create by broadcasting) the batch axis of ``x`` to position ``dst``."""
    from .. import lax
    if dst is not_mapped:
        if src is not_mapped:
            return x
        raise ValueError("vmap has mapped output but out_axes is None")
    if src is not_mapped:
        aval = core.get_aval(x)
        shape = aval.shape[:dst] + (size,) + aval.shape[dst:]
        return lax.broadcast_in_dim(x, shape, [i for i in range(len(shape)) if i != dst])
    return moveaxis(x, src, dst)


def axis_size_of(vals, dims):
    for v, d in zip(vals, dims):
        if d is not not_mapped:
            return core.get_aval(v).shape[d]
    raise ValueError("no batched operand")


def defvectorized(prim):
    def rule(vals, dims, **params):
        (x,), (d,) = vals, dims
        return prim.bind(x, **params), d
    batch_rules[prim] = rule


def defbroadcasting(prim):
    def rule(vals, dims, **params):
        vals = _align_for_broadcast(vals, dims)
        out = prim.bind(*vals, **params)
        return out, 0
    batch_rules[prim] = rule


def _align_for_broadcast(vals, dims):
    """Batch axes to the front, and ranks equalised the way lax's implicit broadcasting needs."""
    from .. import lax
    ranks = [core.get_aval(v).ndim - (d is not not_mapped) for v, d in zip(vals, dims)]
    rank = max(ranks)
    out = []
    for v, d, r in zip(vals, dims, ranks):
        if d is not_mapped:
            out.append(v if r == 0 else lax.expand_dims(v, (0,)))
            continue
        v = moveaxis(v, d, 0)
        if r < rank:   # a batched scalar meeting arrays: (B,) -> (B, 1, ..., 1)
            aval = core.get_aval(v)
            v = lax.reshape(v, aval.shape + (1,) * (rank - r))
        out.append(v)
    return out


def batch_jaxpr(jaxpr, axis, in_dims):
    """A jaxpr computing ``jaxpr`` on inputs batched at ``in_dims``; every output batched at 0."""
    from ..jaxpr import eval_jaxpr
    from . import partial_eval as pe
    avals = _batched_avals([v.aval for v in jaxpr.invars], axis.size, in_dims)

    def fun(*args):
        outs, dims = batch_flat(lambda *xs: eval_jaxpr(jaxpr, [], *xs), axis.size, axis.name, args, in_dims)
        return [matchaxis(o, d, 0, axis.size) for o, d in zip(outs, dims)]
    closed = pe.trace_to_jaxpr(fun, avals)
    jx, consts = pe.closure_convert(closed)
    if consts:
        raise NotImplementedError("vmap of a control-flow body that creates array constants")
    return jx


def batch_closed_jaxpr(closed, axis, in_dims):
    """A ClosedJaxpr (constants kept) computing ``closed`` on inputs batched at ``in_dims``,
    and its output dims: batched outputs at 0, unbatched ones left unbatched (``not_mapped``)."""
    from ..jaxpr import eval_jaxpr
    from . import partial_eval as pe
    out_dims = []

    def fun(*args):
        outs, dims = batch_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                axis.size, axis.name, args, in_dims)
        out_dims[:] = [not_mapped if d is not_mapped else 0 for d in dims]
        return [o if d is not_mapped else moveaxis(o, d, 0) for o, d in zip(outs, dims)]
    jaxpr = pe.trace_to_jaxpr(fun, _batched_avals(closed.in_avals, axis.size, in_dims))
    return jaxpr, out_dims


def _batched_avals(avals, size, dims):
    return [a if d is not_mapped else a.update(shape=a.shape[:d] + (size,) + a.shape[d:])
            for a, d in zip(avals, dims)]


def needs_axis(rule):
    rule.needs_axis = True
    return rule


# ---------------------------------------------------------------- JAX's public tables
# ``jax.interpreters.batching`` is this module. JAX's ``primitive_batchers`` rules have this
# module's signature, so that table is ``batch_rules`` itself. The two other conventions JAX
# accepts are adapted as they are registered; like JAX's, those rules also see calls whose
# operands are all unbatched.

primitive_batchers = batch_rules


class _AdaptingTable:
    """A write-mostly view of ``batch_rules`` storing rules of another signature, adapted."""

    def __init__(self, adapt):
        self._adapt = adapt

    def __setitem__(self, prim, rule):
        wrapped = needs_axis(self._adapt(rule))
        wrapped.always = True
        batch_rules[prim] = wrapped

    def __delitem__(self, prim):
        del batch_rules[prim]

    def __contains__(self, prim):
        return prim in batch_rules


def _from_axis_rule(rule):
    # rule(axis_size, axis_name, trace_type, vals, dims, **params)
    return lambda vals, dims, *, axis_data, **params: rule(axis_data.size, axis_data.name, None,
                                                            vals, dims, **params)


def _from_fancy_rule(rule):
    # rule(axis_data, vals, dims, **params)
    return lambda vals, dims, *, axis_data, **params: rule(axis_data, vals, dims, **params)


axis_primitive_batchers = _AdaptingTable(_from_axis_rule)
fancy_primitive_batchers = _AdaptingTable(_from_fancy_rule)


def broadcast(x, size, axis, mesh_axis=None):
    """``x`` with a new axis of ``size`` at ``axis`` (JAX's ``batching.broadcast``)."""
    from .. import lax
    aval = core.get_aval(x)
    shape = aval.shape[:axis] + (size,) + aval.shape[axis:]
    return lax.broadcast_in_dim(x, shape, [i for i in range(len(shape)) if i != axis])

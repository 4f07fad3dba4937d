"""An eager ``shard_map`` (called outside jit): the body runs once, op by op, on every device's
block at the same time, and its values print per device as JAX's do.

How it runs: every manual mesh axis is a named ``vmap`` axis (the blocks are stacked with one
leading dimension per axis, numjax/shmap.py), and inside the innermost vmap one more trace,
``ShardMapTrace``, wraps each value. That trace only passes each operation through to the
vmaps below it (collectives are lifted into the vmap of their axis); what it adds is:

* ``print(x)`` / ``repr(x)``: JAX's text, ``On {device} at mesh coordinates (i, j,) = (0, 1):``
  then that device's block, for every device of the mesh in mesh order (a value invariant
  over an axis shows the same block on each device along it);
* the value's varying-manual-axes set (``vma``), inferred by JAX's rules as each operation
  runs, so the replication check of the outputs needs no second trace of the body (the
  check numjax/shmap.py makes on a traced body's jaxpr uses the same rule, ``vma_after``);
* ``bool(x)``/``int(x)`` of a value invariant over every axis (JAX allows Python control flow
  on those in an eager shard_map).
"""
import numpy as np

from . import core
from .interpreters import batching


_INVARIANT_AFTER = {"psum", "pmax", "pmin"}
_VARYING_AFTER = {"all_gather", "ppermute", "reduce_scatter", "all_to_all", "axis_index"}


def _collective_axes(params):
    names = params.get("axes", params.get("axis_name"))
    return frozenset(names if isinstance(names, (tuple, list)) else (names,))


def vma_after(name, params, ins, n_out):
    """JAX's varying-manual-axes rule: the mesh axes each of an operation's ``n_out`` outputs
    varies over, from its operands' (``ins``): psum/pmax/pmin make a value equal across their
    axes, all_gather/ppermute/psum_scatter/all_to_all/axis_index make it vary over theirs, an
    operation with an inner jaxpr follows that jaxpr, any other varies over its operands' union."""
    union = frozenset().union(*ins)
    if name in _INVARIANT_AFTER:
        return [a - _collective_axes(params) for a in ins]
    if name in _VARYING_AFTER:
        return [union | _collective_axes(params)] * n_out
    inner = params.get("jaxpr")
    inner = getattr(inner, "jaxpr", inner)
    if inner is not None and hasattr(inner, "eqns") and len(inner.invars) == len(ins):
        return jaxpr_vma(inner, ins)
    return [union] * n_out


def jaxpr_vma(jaxpr, in_vma):
    """The vma set of each output of ``jaxpr`` from those of its inputs (see vma_after)."""
    env = dict(zip(jaxpr.invars, in_vma))

    def read(v):
        return env.get(v, frozenset()) if hasattr(v, "count") else frozenset()
    for eqn in jaxpr.eqns:
        outs = vma_after(eqn.primitive.name, eqn.params, [read(v) for v in eqn.invars], len(eqn.outvars))
        env.update(zip(eqn.outvars, outs))
    return [read(v) for v in jaxpr.outvars]


class _Frame:
    """What the body's values need to show themselves: the mesh, its manual axes and the
    vmap trace of each (outermost first)."""
    __slots__ = ("mesh", "manual", "mains")

    def __init__(self, mesh, manual, mains):
        self.mesh, self.manual, self.mains = mesh, manual, mains


class ShardMapTracer(core.Tracer):
    __slots__ = ("val", "vma")

    def __init__(self, trace, val, vma):
        self._trace, self.val, self.vma = trace, val, frozenset(vma)

    @property
    def aval(self):
        return core.get_aval(self.val)

    def _per_device(self):
        """The value on every device, as a numpy array of shape (*manual axis sizes, *block),
        or None when it is not known now (a value traced by a transformation in the body)."""
        frame = self._trace.main.global_data
        axis_of = {main: name for name, main in frame.mains}
        dims, x = {}, self.val
        while isinstance(x, batching.BatchTracer) and x._trace.main in axis_of:
            dims[axis_of[x._trace.main]] = x.batch_dim
            x = x.val
        if isinstance(x, core.Tracer):
            return None
        value = np.asarray(x)
        for k, axis in enumerate(frame.manual):   # the enclosing (outer) axes' layers first
            d = dims.get(axis, batching.not_mapped)
            if d is batching.not_mapped:
                value = np.broadcast_to(np.expand_dims(value, k),
                                        value.shape[:k] + (frame.mesh.shape[axis],) + value.shape[k:])
            else:
                value = np.moveaxis(value, k + d, k)
        return value

    def _concrete_value(self):
        # JAX: known now only when invariant over every manual axis (by type)
        if self.vma:
            return None
        x = self.val
        while isinstance(x, batching.BatchTracer) and x.batch_dim is batching.not_mapped:
            x = x.val
        if isinstance(x, core.Tracer):
            return x._concrete_value()
        return x

    def __str__(self):
        value = self._per_device()
        if value is None:
            return self._short_repr()
        frame = self._trace.main.global_data
        mesh = frame.mesh
        where = [mesh.axis_names.index(a) for a in frame.manual]
        axis_names = f"({', '.join(map(str, mesh.axis_names))},)"
        return "\n".join(
            f"On {device} at mesh coordinates {axis_names} = {idx}:\n{value[tuple(idx[w] for w in where)]}\n"
            for idx, device in np.ndenumerate(mesh.devices))

    __repr__ = __str__   # as JAX's: for debuggers too


class ShardMapTrace(core.Trace):
    def pure(self, val):
        # a value from below (a constant, an axis_index): varying where it is batched
        from ._src import vma
        return ShardMapTracer(self, val, vma.value_vma(val, self.main.global_data.mains))

    lift = pure

    def process_primitive(self, primitive, tracers, params):
        from .lax import parallel
        vals = [t.val for t in tracers]
        if primitive in parallel.COLLECTIVES and vals:
            outs = parallel._bind_lifted(primitive, *vals, **params)
        else:
            outs = primitive.bind(*vals, **params)
        many = primitive.multiple_results
        outs = outs if many else [outs]
        vmas = vma_after(primitive.name, params, [t.vma for t in tracers], len(outs))
        wrapped = [ShardMapTracer(self, o, v) for o, v in zip(outs, vmas)]
        return wrapped if many else wrapped[0]


def run_body(body, blocks, block_vma, mesh, manual):
    """Run ``body`` (flat blocks -> flat outputs) inside the vmaps of the manual axes (called
    in the innermost one): its inputs are ShardMapTracers with the vma sets ``block_vma``.
    Returns the outputs' values and their vma sets."""
    from ._src import vma
    # Not the dynamic trace: code below it (axis_index's iota, the batching and vma rules)
    # builds values for the vmaps with operations of no traced operand.
    frame = _Frame(mesh, manual, vma._mains(manual))
    with core.new_main(ShardMapTrace, frame) as main:
        trace = ShardMapTrace(main)
        outs = body(*[ShardMapTracer(trace, b, v) for b, v in zip(blocks, block_vma)])
        outs = [trace.full_raise(o) for o in outs]
    return [o.val for o in outs], [o.vma for o in outs]


def unwrap(x):
    """``x`` without ShardMapTracer layers (for the vma rules of reverse mode, numjax/_src/vma.py)."""
    while isinstance(x, ShardMapTracer):
        x = x.val
    return x

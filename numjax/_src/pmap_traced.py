"""A pmap across processes met under jit, grad or vmap.

Each process runs its own shards and the collectives go through MPI, so the pmap cannot
become part of one process's compiled program as in a single process (there it is vmap with
the named axis). It is traced to a per-shard jaxpr once, and the enclosing program calls the
multi-process pmap runtime through an ``io_callback`` (never dropped as dead code; every
process runs the same program, so reaches its collectives in the same order; unordered, as
JAX cannot vmap an ordered one). ``grad`` goes through a ``custom_vjp`` whose backward pass is
another multi-process pmap, of the per-shard VJP (psum's transpose is a psum across processes,
...); ``vmap`` runs the callback once per example (``io_callback``'s batching), each one a
pmap across processes.

Forward mode (jvp) of such a pmap is not supported (NotImplementedError); jvp inside the
pmapped function is.

As in JAX, an argument a process maps (in_axes not None) holds only its local shards; the
gradient with respect to an argument every shard sees (in_axes=None, or a value the function
closes over) is the sum over this process's shards of theirs.
"""
import numpy as np

from .. import core, dtypes, tree_util
from ..lax import parallel


def pmap_across_processes_traced(fun, args, static, axes, dyn, n_dev, axis_name, out_axes):
    from .. import pmap_api
    from ..api import ShapeDtypeStruct, process_count
    from ..vmap_api import _broadcast_prefix
    leaves, in_tree = tree_util.flatten_traced(dyn)
    leaves = [x if isinstance(x, core.Tracer) else pmap_api._leaf(x) for x in leaves]
    specs = _broadcast_prefix(axes, dyn, "in_axes")
    avals = [core.get_aval(x) for x in leaves]
    size = pmap_api.mapped_size(avals, specs, n_dev)
    shard_avals = [a if d is None else a.update(shape=a.shape[:d % a.ndim] + a.shape[d % a.ndim + 1:])
                   for a, d in zip(avals, specs)]
    global_size = size * process_count()
    jaxpr, consts, out_tree = pmap_api._trace(fun, args, static, in_tree, shard_avals, axis_name, global_size)
    out_avals = [v.aval for v in jaxpr.outvars]
    out_specs = _broadcast_prefix(out_axes, tree_util.tree_unflatten(out_tree, out_avals), "out_axes")
    out_specs = [None if d is None else d % (a.ndim + 1) for a, d in zip(out_avals, out_specs)]
    stacked = [a if d is None else a.update(shape=a.shape[:d] + (size,) + a.shape[d:], weak_type=a.weak_type)
               for a, d in zip(out_avals, out_specs)]
    run = _Runner(jaxpr, specs, out_specs, axis_name, size, global_size, shard_avals,
                  [core.get_aval(c) for c in consts], [ShapeDtypeStruct(a.shape, a.dtype) for a in stacked])
    try:
        outs = run.differentiable(*leaves, *consts)
    except TypeError as err:
        if "forward-mode" not in str(err):
            raise
        raise NotImplementedError(
            "numjax: forward-mode differentiation (jvp, jacfwd, linearize) of a pmap across processes "
            "is not supported; reverse mode (grad, vjp, jacrev) is, and jvp inside the pmapped "
            "function is") from err
    outs = [o if not a.weak_type else _as_weak(o) for o, a in zip(outs, stacked)]
    return tree_util.tree_unflatten(out_tree, outs)


def _as_weak(x):
    from ..lax.elementwise import convert_element_type
    return convert_element_type(x, core.get_aval(x).dtype, weak_type=True)


def _inexact(aval):
    return dtypes.issubdtype(aval.dtype, np.inexact)


class _Runner:
    """The traced pmap's forward and backward passes, each a pmap across processes run by the
    host callbacks the enclosing program makes."""

    def __init__(self, jaxpr, specs, out_specs, axis_name, size, global_size, shard_avals, const_avals,
                 out_structs):
        from ..custom_derivatives import custom_vjp
        self.jaxpr, self.specs, self.out_specs = jaxpr, specs, out_specs
        self.axis_name, self.size, self.global_size = axis_name, size, global_size
        self.shard_avals, self.const_avals, self.out_structs = shard_avals, const_avals, out_structs
        self.n_in = len(specs)
        self.vjp_jaxpr = None
        call = custom_vjp(self._forward)
        call.defvjp(lambda *flat: (self._forward(*flat), flat), self._backward)
        self.differentiable = call

    def _axis(self, avals):
        """The axis of one run; the processes first check they pass the same shapes."""
        from .. import pmap_api
        from ..api import process_index
        from ..interpreters import pmap as pmap_interp
        agreement = pmap_api._processes_agreement(self.size, avals)
        return pmap_interp.MappedAxis(self.axis_name, self.size, process_index() * self.size,
                                      self.global_size, agreement)

    def _forward(self, *flat):
        from ..lax.callback import io_callback
        return tuple(io_callback(self._run_forward, self.out_structs, *flat, ordered=False))

    def _run_forward(self, *flat):
        from .. import pmap_api
        from ..array import Array
        from ..interpreters import pmap as pmap_interp
        xs, consts = [Array(np.asarray(x)) for x in flat[:self.n_in]], list(flat[self.n_in:])
        shard_args = [[pmap_api._take(x, d, i) for x, d in zip(xs, self.specs)] for i in range(self.size)]
        axis = self._axis(self.shard_avals)
        outs = pmap_interp.run(self.jaxpr, consts, shard_args, axis)
        axis.mpi()          # the shapes check, when no collective waited for it
        return [np.asarray(pmap_api._stack([o[k] for o in outs], d)._value) for k, d in enumerate(self.out_specs)]

    # ------------------------------------------------------------ reverse mode

    def _backward(self, flat, cts):
        from ..api import ShapeDtypeStruct
        from ..lax.callback import io_callback
        from ..interpreters.ad import zeros_like_aval
        avals = [core.get_aval(x) for x in flat]
        wanted = [k for k, a in enumerate(avals) if _inexact(a)]
        structs = [ShapeDtypeStruct(avals[k].shape, avals[k].dtype) for k in wanted]
        cts = [c if c is not None else zeros_like_aval(core.ShapedArray(o.shape, o.dtype))
               for c, o in zip(cts, self.out_structs)]
        got = io_callback(lambda *a: self._run_backward(wanted, *a), structs, *flat, *cts, ordered=False)
        result = [None] * len(flat)
        for k, g in zip(wanted, got):
            result[k] = g
        return tuple(result)        # None: an integer input's (zero) cotangent

    def _run_backward(self, wanted, *flat_and_cts):
        from .. import pmap_api
        from ..array import Array
        from ..interpreters import pmap as pmap_interp
        n = len(flat_and_cts) - len(self.out_structs)
        flat, cts = flat_and_cts[:n], flat_and_cts[n:]
        xs, consts = [Array(np.asarray(x)) for x in flat[:self.n_in]], [Array(np.asarray(c)) for c in flat[self.n_in:]]
        ct_shards = [[pmap_api._take(Array(np.asarray(c)), d, i) for c, d in zip(cts, self.out_specs)]
                     for i in range(self.size)]
        shard_args = [[pmap_api._take(x, d, i) for x, d in zip(xs, self.specs)] + consts + ct_shards[i]
                      for i in range(self.size)]
        jaxpr, vconsts = self._vjp_jaxpr()
        axis = self._axis(self.shard_avals + self.const_avals)
        outs = pmap_interp.run(jaxpr, vconsts, shard_args, axis)
        axis.mpi()
        results = []
        for k in wanted:
            per_shard = [np.asarray(o[k]._value if isinstance(o[k], Array) else o[k]) for o in outs]
            d = self.specs[k] if k < self.n_in else None
            results.append(np.stack(per_shard, axis=d % (per_shard[0].ndim + 1)) if d is not None
                           else np.sum(per_shard, axis=0, dtype=per_shard[0].dtype))
        return results

    def _vjp_jaxpr(self):
        """The per-shard VJP: (shard inputs, consts, output cotangents) -> their cotangents,
        traced once with the pmap axis bound."""
        if self.vjp_jaxpr is None:
            from ..ad_api import vjp
            from ..interpreters import partial_eval as pe
            from ..jaxpr import eval_jaxpr
            n_in, n_c, jaxpr = self.n_in, len(self.const_avals), self.jaxpr

            def per_shard(*a):
                xs, cs, ts = list(a[:n_in]), list(a[n_in:n_in + n_c]), list(a[n_in + n_c:])
                _, pullback = vjp(lambda xs, cs: eval_jaxpr(jaxpr, cs, *xs), xs, cs)
                gx, gc = pullback(ts)
                return [_zeros_if_float0(g, a) for g, a in zip(list(gx) + list(gc),
                                                                self.shard_avals + self.const_avals)]
            avals = self.shard_avals + self.const_avals + [v.aval for v in jaxpr.outvars]
            with parallel.bind_pmap_axis(self.axis_name, self.global_size):
                closed = pe.trace_to_jaxpr(per_shard, avals)
            self.vjp_jaxpr = (closed.jaxpr, closed.consts)
        return self.vjp_jaxpr


def _zeros_if_float0(g, aval):
    """The cotangent of an integer input (float0) as int zeros: the pmap runtime moves arrays."""
    if _inexact(aval):
        return g
    from .. import numpy as jnp
    return jnp.zeros(aval.shape, aval.dtype)

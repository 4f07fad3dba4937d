"""pmap: map a function over local devices (CPU threads here); see interpreters/pmap.py."""
import functools

import numpy as np

from . import core, tree_util
from .api_util import flatten_fun
from .array import Array
from .interpreters import partial_eval as pe
from .interpreters import pmap as pmap_interp
from .lax import parallel
from .vmap_api import _broadcast_prefix, _leaf


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(), devices=None,
         backend=None, axis_size=None, donate_argnums=()):
    from .api import local_devices, process_count, process_index
    static = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int) \
        else tuple(static_broadcasted_argnums)
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    cache, in_specs_cache, out_specs_cache = {}, {}, {}

    @functools.wraps(fun)
    def pmapped(*args, **kwargs):
        if kwargs:
            # Keyword arguments are mapped along axis 0 (as in JAX): pass them positionally.
            names = list(kwargs)
            n_pos = len(args)
            pos_axes = tuple(in_axes) if isinstance(in_axes, tuple) else (in_axes,) * n_pos
            k_axes = pos_axes + (0,) * len(names)
            return pmap(lambda *a: fun(*a[:n_pos], **dict(zip(names, a[n_pos:]))), axis_name,
                        in_axes=k_axes, out_axes=out_axes, static_broadcasted_argnums=static, devices=devices,
                        backend=backend, axis_size=axis_size)(*args, *kwargs.values())
        processes = process_count()
        here = local_devices()
        n_dev = len(here) if devices is None else len([d for d in devices if d in here or processes == 1])
        dyn = tuple(a for i, a in enumerate(args) if i not in static)
        axes = in_axes
        if isinstance(axes, tuple) and static:
            axes = tuple(a for i, a in enumerate(axes) if i not in static)
        if not isinstance(axes, tuple):
            axes = (axes,) * len(dyn)
        leaves, in_tree = tree_util.flatten_traced(dyn)
        if not core._no_trace_active():
            if processes > 1:
                raise NotImplementedError(
                    "numjax: a pmap across processes (numjax.distributed) cannot run under jit, grad "
                    "or vmap; call it at the top level (inside it, jit/grad/vmap are fine)")
            # Under jit/grad/vmap (arguments or closed-over values may be tracers): pmap means vmap
            # with the named axis (devices only change where the shards run), so the enclosing
            # transformation sees ordinary batched code.
            return _pmap_as_vmap(fun, args, static, axes, dyn, n_dev, axis_name, out_axes)
        leaves = [_leaf(x) for x in leaves]
        specs = _in_specs(in_specs_cache, axes, dyn, in_tree)
        for x, d in zip(leaves, specs):
            nd = core.get_aval(x).ndim
            if d is not None and not -nd <= d < nd:
                raise ValueError(f"pmap was requested to map its argument along axis {d}, which "
                                 f"implies that its rank should be at least {max(d, -d - 1) + 1}, "
                                 f"but is only {nd} (its shape is {core.get_aval(x).shape})")
        sizes = {core.get_aval(x).shape[d % core.get_aval(x).ndim] for x, d in zip(leaves, specs) if d is not None}
        if len(sizes) != 1:
            raise ValueError(f"pmap got inconsistent sizes for array axes to be mapped: {sorted(sizes)}")
        size = sizes.pop()
        if size > n_dev:
            raise ValueError(f"compiling computation that requires {size} logical devices, but only "
                             f"{n_dev} XLA devices are available (num_replicas={size})")
        shard_avals = []
        for x, d in zip(leaves, specs):
            a = core.get_aval(x)
            if d is not None:
                d %= a.ndim
                a = a.update(shape=a.shape[:d] + a.shape[d + 1:])
            shard_avals.append(a)
        # Across processes, a check that all pass the same shapes starts now and completes
        # before the first exchange of data (MappedAxis.mpi), overlapping the work until then.
        agreement = _processes_agreement(size, shard_avals) if processes > 1 else None
        axis = pmap_interp.MappedAxis(axis_name, size, process_index() * size, size * processes, agreement)
        statics = tuple((i, args[i]) for i in static)
        key = (in_tree, tuple(shard_avals), statics, axis.size)
        if key not in cache:
            cache[key] = _trace(fun, args, static, in_tree, shard_avals, axis_name, axis.size)
        jaxpr, consts, out_tree = cache[key]
        shard_args = [[_take(x, d, i) for x, d in zip(leaves, specs)] for i in range(size)]
        outs = pmap_interp.run(jaxpr, consts, shard_args, axis)
        if agreement is not None:
            agreement.result()        # when no collective needed it
        out_specs = out_specs_cache.get(key)
        if out_specs is None:     # the same for every call of this trace
            out_specs = out_specs_cache[key] = _broadcast_prefix(
                out_axes, tree_util.tree_unflatten(out_tree, outs[0]), "out_axes")
        stacked = [_stack([o[k] for o in outs], spec) for k, spec in enumerate(out_specs)]
        return tree_util.tree_unflatten(out_tree, stacked)
    return pmapped


def _in_specs(cache, axes, dyn, in_tree):
    """Each leaf's mapped axis; they depend only on the tree (typed keys included) and
    ``in_axes``, so they are computed once per pair when ``in_axes`` is hashable."""
    try:
        key = (in_tree, axes)
        specs = cache.get(key)
    except TypeError:       # in_axes holding a dict or list
        return _broadcast_prefix(axes, dyn, "in_axes")
    if specs is None:
        specs = cache[key] = _broadcast_prefix(axes, dyn, "in_axes")
    return specs


def _pmap_as_vmap(fun, args, static, axes, dyn, n_dev, axis_name, out_axes):
    from .vmap_api import vmap
    leaves = tree_util.leaves_traced(dyn)
    specs = _broadcast_prefix(axes, dyn, "in_axes")
    sizes = {core.get_aval(x).shape[d % core.get_aval(x).ndim] for x, d in zip(leaves, specs) if d is not None}
    if len(sizes) == 1 and next(iter(sizes)) > n_dev:
        size = sizes.pop()
        raise ValueError(f"compiling computation that requires {size} logical devices, but only "
                         f"{n_dev} XLA devices are available (num_replicas={size})")

    def per_shard(*dyn_args):
        it = iter(dyn_args)
        return fun(*[args[i] if i in static else next(it) for i in range(len(args))])
    return vmap(per_shard, in_axes=axes, out_axes=out_axes, axis_name=axis_name)(*dyn)


def _trace(fun, args, static, in_tree, shard_avals, axis_name, size):
    flat, out_tree = flatten_fun(fun, args, static, in_tree)
    from .interpreters.pmap import inline_nested_jits
    with parallel.bind_pmap_axis(axis_name, size):
        closed = pe.trace_to_jaxpr(flat, shard_avals)
        # Nested jits are spliced in (collectives inside them become segment boundaries), each
        # call re-traced with fresh variables: a helper jitted once and called twice has two
        # independent copies (lowering.compile.inline_jits reuses the cached jaxpr's variables).
        closed = inline_nested_jits(closed, shard_avals)
    return closed.jaxpr, closed.consts, out_tree[0]


def _processes_agreement(size, shard_avals):
    """Across processes every pmap call must see the same number of local shards and the same
    shard shapes and dtypes, else their collectives would not match."""
    from ._src import mpi
    desc = f"{size} local shards of " + ", ".join(f"{a.dtype}{list(a.shape)}" for a in shard_avals)
    return mpi.Agreement(desc, "pmap across processes: every process must pass arguments of the same "
                               "shapes and dtypes, with the same number of local shards (leading mapped "
                               "axis)", "pmap (comparing the processes' argument shapes: " + desc + ")")


def _take(x, d, i):
    if d is None:
        return x
    v = np.asarray(x._value if isinstance(x, Array) else x)
    shard = v[i] if d % v.ndim == 0 else np.moveaxis(v, d % v.ndim, 0)[i]
    # A contiguous shard is used in place (a view: Arrays are never written); else copied.
    return Array(shard if shard.flags.c_contiguous else np.array(shard), getattr(x, "weak_type", False))


def _stack(vals, spec):
    arrs = [np.asarray(v._value if isinstance(v, Array) else v) for v in vals]
    weak = getattr(vals[0], "weak_type", False)
    if spec is None:
        return Array(arrs[0], weak)
    if len(arrs) == 1 and spec == 0:
        return Array(arrs[0][None], weak)      # one shard: a view with the mapped axis added
    return Array(np.stack(arrs, axis=spec), weak)

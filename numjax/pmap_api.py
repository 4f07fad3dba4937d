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
    from .api import local_devices
    static = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int) \
        else tuple(static_broadcasted_argnums)
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    cache = {}

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
        n_dev = len(devices) if devices is not None else len(local_devices())
        dyn = tuple(a for i, a in enumerate(args) if i not in static)
        axes = in_axes
        if isinstance(axes, tuple) and static:
            axes = tuple(a for i, a in enumerate(axes) if i not in static)
        if not isinstance(axes, tuple):
            axes = (axes,) * len(dyn)
        leaves, in_tree = tree_util.flatten_traced(dyn)
        if not core._no_trace_active():
            # Under jit/grad/vmap (arguments or closed-over values may be tracers): pmap means vmap
            # with the named axis (devices only change where the shards run), so the enclosing
            # transformation sees ordinary batched code.
            return _pmap_as_vmap(fun, args, static, axes, dyn, n_dev, axis_name, out_axes)
        leaves = [_leaf(x) for x in leaves]
        specs = _broadcast_prefix(axes, dyn, "in_axes")
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
        statics = tuple((i, args[i]) for i in static)
        key = (in_tree, tuple(shard_avals), statics, size)
        if key not in cache:
            cache[key] = _trace(fun, args, static, in_tree, shard_avals, axis_name, size)
        jaxpr, consts, out_tree = cache[key]
        shard_args = [[_take(x, d, i) for x, d in zip(leaves, specs)] for i in range(size)]
        outs = pmap_interp.run(jaxpr, consts, shard_args, axis_name)
        out_specs = _broadcast_prefix(out_axes, tree_util.tree_unflatten(out_tree, outs[0]), "out_axes")
        stacked = [_stack([o[k] for o in outs], spec) for k, spec in enumerate(out_specs)]
        return tree_util.tree_unflatten(out_tree, stacked)
    return pmapped


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


def _take(x, d, i):
    if d is None:
        return x
    v = np.asarray(x._value if isinstance(x, Array) else x)
    return Array(np.array(np.take(v, i, axis=d % v.ndim)), getattr(x, "weak_type", False))


def _stack(vals, spec):
    arrs = [np.asarray(v._value if isinstance(v, Array) else v) for v in vals]
    weak = getattr(vals[0], "weak_type", False)
    if spec is None:
        return Array(arrs[0], weak)
    return Array(np.stack(arrs, axis=spec), weak)

"""pmap: map a function over local devices (CPU threads here); see interpreters/pmap.py."""
import functools

import numpy as np

from . import core, dtypes, tree_util
from ._src import mpi      # mpi4py itself is imported only by numjax.distributed.initialize
from .api_util import flatten_fun
from .array import Array
from .config import config as _config
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
    # Calls whose arguments are all arrays skip the argument analysis after the first call with
    # their signature (_CallPlan): across processes, per-call Python work adds directly to the
    # time of every collective (issue 13's target: psum within 1.2x of a raw MPI Allreduce).
    plans = {}

    def environment():
        """x64 mode, process count and local devices: a call plan holds only while they hold."""
        return (bool(_config.jax_enable_x64), process_count(), tuple(local_devices()) if devices is None
                else tuple(devices))

    @functools.wraps(fun)
    def pmapped(*args, **kwargs):
        if not kwargs and core._no_trace_active():
            signature = _signature(args, static, environment())
            plan = plans.get(signature) if signature is not None else None
            if plan is not None:
                return plan(args)
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
                from ._src.pmap_traced import pmap_across_processes_traced
                return pmap_across_processes_traced(fun, args, static, axes, dyn, n_dev, axis_name, out_axes)
            # Under jit/grad/vmap (arguments or closed-over values may be tracers): pmap means vmap
            # with the named axis (devices only change where the shards run), so the enclosing
            # transformation sees ordinary batched code.
            return _pmap_as_vmap(fun, args, static, axes, dyn, n_dev, axis_name, out_axes)
        leaves = [_leaf(x) for x in leaves]
        specs = _in_specs(in_specs_cache, axes, dyn, in_tree)
        size = mapped_size([core.get_aval(x) for x in leaves], specs, n_dev)
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
        key = (in_tree, tuple(shard_avals), statics, axis.size, bool(_config.jax_enable_x64))
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
        signature = _signature(args, static, environment())
        if signature is not None and len(leaves) == len(dyn) and len(plans) < _MAX_PLANS:
            plans[signature] = _CallPlan(jaxpr, consts, out_tree, out_specs, specs, axis, shard_avals,
                                         [i for i in range(len(args)) if i not in static])
        return tree_util.tree_unflatten(out_tree, stacked)
    return pmapped


_MAX_PLANS = 64      # signatures remembered per pmapped function (beyond that: the full path)


def _signature(args, static, environment):
    """A key for calls that a _CallPlan can run: every non-static argument a numjax Array or a
    numpy array whose dtype numjax keeps as is (each argument then is its one leaf), with the
    static values and ``environment`` (what else the plan depends on); None for other calls
    (pytrees, scalars, tracers, unhashable static values)."""
    key, kept = [environment], _KEPT_DTYPES[environment[0]]
    for i, a in enumerate(args):
        kind = type(a)
        if i in static:
            key.append(a)
        elif kind is Array:
            v = a._value
            key.append((v.shape, v.dtype, a.weak_type))
        elif kind is np.ndarray and a.dtype in kept:
            key.append((a.shape, a.dtype, None))
        else:
            return None
    key = tuple(key)
    try:
        hash(key)
    except TypeError:
        return None
    return key


class _CallPlan:
    """What a pmapped function does with arguments of one signature, worked out by its first
    call: the traced program, each argument's mapped axis, the shard count and, across
    processes, the shapes description the processes compare (its hash is made once)."""

    def __init__(self, jaxpr, consts, out_tree, out_specs, specs, axis, shard_avals, dynamic):
        self.jaxpr, self.consts, self.out_tree, self.out_specs = jaxpr, consts, out_tree, out_specs
        self.specs, self.dynamic, self.split = specs, dynamic, pmap_interp.plan_for(jaxpr)
        self.name, self.size, self.offset, self.global_size = axis.name, axis.local_size, axis.offset, axis.size
        self.agreement = _agreement_texts(self.size, shard_avals) if axis.multi_process else None

    def __call__(self, args):
        # As _leaf makes them (a numpy array of a kept dtype is wrapped as is).
        leaves = [a if type(a) is Array else Array(a, False) for a in [args[i] for i in self.dynamic]]
        agreement = None if self.agreement is None else mpi.Agreement(*self.agreement)
        axis = pmap_interp.MappedAxis(self.name, self.size, self.offset, self.global_size, agreement)
        shard_args = [[_take(x, d, i) for x, d in zip(leaves, self.specs)] for i in range(self.size)]
        outs = pmap_interp.run(self.jaxpr, self.consts, shard_args, axis, self.split)
        if agreement is not None:
            agreement.result()
        stacked = [_stack([o[k] for o in outs], spec) for k, spec in enumerate(self.out_specs)]
        return tree_util.tree_unflatten(self.out_tree, stacked)


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
    return mpi.Agreement(*_agreement_texts(size, shard_avals))


def _agreement_texts(size, shard_avals):
    """The description the processes compare, the error's text and the wait's name."""
    desc = f"{size} local shards of " + ", ".join(f"{a.dtype}{list(a.shape)}" for a in shard_avals)
    return (desc, "pmap across processes: every process must pass arguments of the same shapes and "
                  "dtypes, with the same number of local shards (leading mapped axis)",
            "pmap (comparing the processes' argument shapes: " + desc + ")")


def _kept_dtypes(x64):
    """The numpy dtypes an argument keeps as is (asarray_leaf converts the others)."""
    return frozenset(d for d in map(np.dtype, dtypes._JAX_DTYPES)
                     if (d if x64 else dtypes._X32_CANON.get(d, d)) == d)


_KEPT_DTYPES = {False: _kept_dtypes(False), True: _kept_dtypes(True)}


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


def mapped_size(avals, specs, n_dev):
    """The size of the mapped axis, with JAX's errors for a bad axis, disagreeing sizes or too few
    devices."""
    for a, d in zip(avals, specs):
        if d is not None and not -a.ndim <= d < a.ndim:
            raise ValueError(f"pmap was requested to map its argument along axis {d}, which implies that "
                             f"its rank should be at least {max(d, -d - 1) + 1}, but is only {a.ndim} "
                             f"(its shape is {a.shape})")
    sizes = {a.shape[d % a.ndim] for a, d in zip(avals, specs) if d is not None}
    if len(sizes) != 1:
        raise ValueError(f"pmap got inconsistent sizes for array axes to be mapped: {sorted(sizes)}")
    size = sizes.pop()
    if size > n_dev:
        raise ValueError(f"compiling computation that requires {size} logical devices, but only "
                         f"{n_dev} XLA devices are available (num_replicas={size})")
    return size

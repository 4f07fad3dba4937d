"""Collectives over named axes: psum, pmean, pmax, pmin, all_gather, ppermute, axis_index,
psum_scatter, all_to_all.

A named axis comes from ``vmap(axis_name=...)`` (the batching rules below turn a
collective into an ordinary reduction over the batch dimension) or from
``pmap(axis_name=...)`` (the pmap runtime performs it across device shards).
"""
import contextlib
import threading

import numpy as np

from .. import core
from ..array import Array
from ..core import ShapedArray
from ..interpreters import batching
from ..jaxpr import param_printers
from ._base import make_primitive


class _PmapAxes(threading.local):
    """Named axes of the pmaps this thread is tracing, innermost last: [(name, size)]."""

    def __init__(self):
        self.env = []


_pmap_axes = _PmapAxes()


@contextlib.contextmanager
def bind_pmap_axis(name, size):
    """Bind axis ``name`` (of ``size`` devices) for collectives traced in this thread."""
    _pmap_axes.env.append((name, size))
    try:
        yield
    finally:
        _pmap_axes.env.pop()


def _unbound(*args, **params):
    name = params.get("axes", params.get("axis_name"))
    raise NameError(f"unbound axis name: {name[0] if isinstance(name, tuple) else name}. The "
                    "following axis names (e.g. defined by pmap or vmap) are available to "
                    "collective operations: []")


def _find_axis(name):
    """The innermost vmap trace or pmap frame binding ``name``: ('vmap', main) or ('pmap', size)."""
    stack, pmap_env = core.current_trace_stack(), _pmap_axes.env
    for main in reversed(stack):
        if main.trace_type is batching.BatchTrace and main.global_data.name == name:
            return "vmap", main
    for n, size in reversed(pmap_env):
        if n == name:
            return "pmap", size
    bound = [m.global_data.name for m in stack if m.trace_type is batching.BatchTrace]
    bound += [n for n, _ in pmap_env]
    raise NameError(f"unbound axis name: {name}. The following axis names (e.g. defined by pmap or "
                    f"vmap) are available to collective operations: {bound}")


def axis_size(axis_name):
    """``lax.axis_size``: the size of a bound axis (a tuple of names: their product), a
    Python int."""
    if isinstance(axis_name, (tuple, list)):
        return int(np.prod([axis_size(n) for n in axis_name], dtype=np.int64))
    kind, where = _find_axis(axis_name)
    return where.global_data.size if kind == "vmap" else where


_PCAST_TO = ("unreduced", "reduced", "varying")


def pcast(x, axis_name, *, to):
    """``lax.pcast(x, axis_name, to='varying')``: ``x`` (the same values) as a value that may
    differ across the named axes (JAX's pvary). numjax's shard_map tracks variance by how a
    value is mapped over each axis, so this is a select on a per-device predicate that is
    always true: the result is mapped over the axes, and its transpose sums the cotangent over
    them (pvary's transpose, a psum)."""
    from .. import tree_util
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
    axes = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not axis_name:
        return x
    if to not in _PCAST_TO:
        raise ValueError(f"Got unexpected `to` value. Allowed `to` values are: {set(_PCAST_TO)}")
    if to != "varying":
        raise NotImplementedError(f"lax.pcast(..., to={to!r}): numjax has no unreduced/reduced values inside "
                                  "shard_map yet; only to='varying' is supported")

    def vary(leaf):
        from .elementwise import ge_p, select_n
        for name in axes:
            everywhere = ge_p.bind(axis_index(name), np.int32(0))
            leaf = select_n(everywhere, leaf, leaf)
        return leaf
    return tree_util.tree_map(vary, x)


def _lift(x, name):
    """Raise ``x`` into the vmap trace of ``name`` so that trace's batching rule sees it.

    A tracer of a transformation nested *inside* that vmap (grad, an inner vmap, ...)
    cannot be raised into it; it is returned as is, and that transformation's rule for
    the collective binds again on its underlying values, lifting those (see
    ``_collective_batch`` and the differentiation rules below)."""
    kind, main = _find_axis(name)
    if kind != "vmap":
        return x
    if isinstance(x, core.Tracer) and x._trace.main.level > main.level:
        return x
    trace = batching.BatchTrace(main)
    return trace.full_raise(x)


def _axis_param(params):
    names = params.get("axes")
    return names[0] if names is not None else _names(params.get("axis_name"))[0]


def _same(x, **params):
    return x


psum_p = make_primitive("psum", _unbound, lambda x, **p: x)
pmax_p = make_primitive("pmax", _unbound, lambda x, **p: x)
pmin_p = make_primitive("pmin", _unbound, lambda x, **p: x)
ppermute_p = make_primitive("ppermute", _unbound, lambda x, **p: x)
all_gather_p = make_primitive(
    "all_gather", _unbound,
    lambda x, *, axis_name, axis, tiled, axis_size: ShapedArray(
        x.shape[:axis] + ((axis_size * x.shape[axis],) if tiled else (axis_size,)) +
        x.shape[axis + (1 if tiled else 0):], x.dtype, x.weak_type))
axis_index_p = make_primitive("axis_index", _unbound,
                              lambda *, axis_name: ShapedArray((), np.int32, False))
for _p in (psum_p, pmax_p, pmin_p):
    param_printers[_p] = lambda p: {"axes": p["axes"], "axis_index_groups": None}


def _scatter_shape(x, *, axis_name, scatter_dimension, axis_size, tiled):
    shape, n = list(x.shape), x.shape[scatter_dimension]
    _check_scatter_size(n, axis_size, tiled)
    if tiled:
        shape[scatter_dimension] = n // axis_size
    else:
        del shape[scatter_dimension]
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _check_scatter_size(n, axis_size, tiled):
    if tiled and n % axis_size:
        raise ValueError(f"tiled reduce_scatter operand scatter dimension size {n} must be "
                         f"divisible by shard_count {axis_size}")
    if not tiled and n != axis_size:
        raise ValueError(f"reduce_scatter operand scatter dimension size {n} must match "
                         f"shard count {axis_size}")


# JAX's primitive behind lax.psum_scatter is named reduce_scatter.
reduce_scatter_p = make_primitive("reduce_scatter", _unbound, _scatter_shape)

COLLECTIVES = {psum_p, pmax_p, pmin_p, ppermute_p, all_gather_p, axis_index_p, reduce_scatter_p}


def _names(axis_name):
    return axis_name if isinstance(axis_name, tuple) else (axis_name,)


def _reducer(prim):
    def fn(x, axis_name, *, axis_index_groups=None):
        from ..tree_util import tree_map
        names = _names(axis_name)

        def one(v):
            from ..numpy._util import asarray_leaf
            v = v if isinstance(v, core.Tracer) else asarray_leaf(v)
            for n in names:
                v = prim.bind(_lift(v, n), axes=(n,), axis_index_groups=None)
            return v
        return tree_map(one, x)
    return fn


psum = _reducer(psum_p)
pmax = _reducer(pmax_p)
pmin = _reducer(pmin_p)


def pmean(x, axis_name, *, axis_index_groups=None):
    from ..tree_util import tree_map
    n = 1
    for name in _names(axis_name):
        n *= axis_size(name)
    return tree_map(lambda v: v / n, psum(x, axis_name))


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    from ..tree_util import tree_map
    from ..numpy._util import asarray_leaf

    def one(v):
        v = v if isinstance(v, core.Tracer) else asarray_leaf(v)
        ax = axis % (core.get_aval(v).ndim + (0 if tiled else 1))
        return all_gather_p.bind(_lift(v, axis_name), axis_name=axis_name, axis=ax, tiled=bool(tiled),
                                 axis_size=axis_size(axis_name))
    return tree_map(one, x)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """psum over ``axis_name``, each member keeping only its block of the sum along
    ``scatter_dimension`` (tiled: a block of size/n, rank kept; else that dimension, of size n,
    is dropped)."""
    from ..tree_util import tree_map
    from ..numpy._util import asarray_leaf
    if axis_index_groups is not None:
        raise NotImplementedError("numjax lax.psum_scatter does not support axis_index_groups")

    def one(v):
        v = v if isinstance(v, core.Tracer) else asarray_leaf(v)
        ndim = core.get_aval(v).ndim
        if not -ndim <= scatter_dimension < ndim:
            raise ValueError(f"psum_scatter: scatter_dimension={scatter_dimension} is out of range "
                             f"for an operand of rank {ndim} (shape {core.get_aval(v).shape})")
        size = axis_size(axis_name)
        # checked here too: under vmap the batching rule runs instead of the shape rule
        _check_scatter_size(core.get_aval(v).shape[scatter_dimension], size, tiled)
        return reduce_scatter_p.bind(_lift(v, axis_name), axis_name=axis_name,
                                     scatter_dimension=scatter_dimension % ndim,
                                     axis_size=size, tiled=bool(tiled))
    return tree_map(one, x)


def ppermute(x, axis_name, perm):
    from ..tree_util import tree_map
    perm = tuple((int(s), int(d)) for s, d in perm)
    size = axis_size(axis_name)
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts) or any(not 0 <= i < size for i in srcs + dsts):
        raise ValueError(f"ppermute sources and destinations must be unique and in range(0, {size}), got {perm}")
    return tree_map(lambda v: ppermute_p.bind(_lift(v, axis_name), axis_name=axis_name, perm=perm), x)


def axis_index(axis_name):
    kind, where = _find_axis(axis_name)
    if kind == "vmap":
        from .shape import iota
        trace = batching.BatchTrace(where)
        index = batching.BatchTracer(trace, iota(np.int32, where.global_data.size), 0)
        from ..shmap_eager import ShardMapTrace
        top = core.current_trace_stack()[-1]
        if top.trace_type is ShardMapTrace:     # an eager shard_map's body: its value (printed
            return ShardMapTrace(top).pure(index)   # per device, as JAX's)
        return index
    return axis_index_p.bind(axis_name=axis_name)


# ---------------------------------------------------------------- under vmap: reductions over the batch axis

def _collective_batch(prim, reduce):
    @batching.needs_axis
    def rule(vals, dims, *, axis_data, **params):
        (x,), (d,) = vals, dims
        name = _axis_param(params)
        if name != axis_data.name:
            return _outer_axis_collective(prim, x, d, name, params)
        return reduce(x, d, axis_data, params), batching.not_mapped
    rule.always = True
    return rule


def _outer_axis_collective(prim, x, d, name, params):
    """A collective over an enclosing axis, met inside this vmap: it acts on every example of
    this vmap's axis independently (elementwise along it), so it is re-bound on the
    underlying value for the enclosing transformation, keeping this batch dimension."""
    if prim in (all_gather_p, reduce_scatter_p) and d is not batching.not_mapped:
        x = batching.moveaxis(x, d, 0)
        key = "axis" if prim is all_gather_p else "scatter_dimension"
        return prim.bind(_lift(x, name), **dict(params, **{key: params[key] + 1})), 0
    return prim.bind(_lift(x, name), **params), d


def _sum_over(x, d, axis_data, params):
    from .reductions import reduce_sum
    from .elementwise import mul
    if d is batching.not_mapped:
        return mul(x, Array(np.asarray(axis_data.size, core.get_aval(x).dtype), True))
    return reduce_sum(x, (d,))


def _max_over(prim_fn):
    def reduce(x, d, axis_data, params):
        return x if d is batching.not_mapped else prim_fn(x, (d,))
    return reduce


def _gather_over(x, d, axis_data, params):
    from .shape import reshape
    x = batching.bdim_at_front(x, d, axis_data.size)
    x = batching.moveaxis(x, 0, params["axis"])
    if params["tiled"]:
        shape = list(core.get_aval(x).shape)
        ax = params["axis"]
        shape[ax:ax + 2] = [shape[ax] * shape[ax + 1]]
        x = reshape(x, shape)
    return x


def _scatter_batch_rule():
    """Under vmap: the sum over the batch axis, cut into blocks along ``scatter_dimension``;
    member i's block is batch entry i (batch dimension 0)."""
    @batching.needs_axis
    def rule(vals, dims, *, axis_data, **params):
        from .shape import reshape
        (x,), (d,) = vals, dims
        if params["axis_name"] != axis_data.name:
            return _outer_axis_collective(reduce_scatter_p, x, d, params["axis_name"], params)
        dim, n = params["scatter_dimension"], axis_data.size
        total = batching.moveaxis(_sum_over(x, d, axis_data, params), dim, 0)
        if not params["tiled"]:
            return total, 0                               # (member, rest...)
        shape = core.get_aval(total).shape
        blocks = reshape(total, (n, shape[0] // n) + shape[1:])   # (member, block, rest...)
        return batching.moveaxis(blocks, 1, dim + 1), 0
    rule.always = True
    return rule


def _ppermute_batch_rule():
    @batching.needs_axis
    def rule(vals, dims, *, axis_data, axis_name, perm):
        from .shape import concatenate
        (x,), (d,) = vals, dims
        if axis_name != axis_data.name:
            return _outer_axis_collective(ppermute_p, x, d, axis_name, dict(axis_name=axis_name, perm=perm))
        x = batching.bdim_at_front(x, d, axis_data.size)
        src_of = {dst: src for src, dst in perm}
        zero = None
        parts = []
        for i in range(axis_data.size):
            if i in src_of:
                from .indexing import slice as lax_slice
                aval = core.get_aval(x)
                part = lax_slice(x, (src_of[i],) + (0,) * (aval.ndim - 1),
                                 (src_of[i] + 1,) + aval.shape[1:])
            else:
                if zero is None:
                    from ..interpreters.ad import zeros_like_aval
                    aval = core.get_aval(x)
                    zero = zeros_like_aval(aval.update(shape=(1,) + aval.shape[1:]))
                part = zero
            parts.append(part)
        return concatenate(parts, 0), 0
    return rule


from .reductions import reduce_max as _rmax, reduce_min as _rmin  # noqa: E402

batching.batch_rules[psum_p] = _collective_batch(psum_p, _sum_over)
batching.batch_rules[pmax_p] = _collective_batch(pmax_p, _max_over(_rmax))
batching.batch_rules[pmin_p] = _collective_batch(pmin_p, _max_over(_rmin))
batching.batch_rules[all_gather_p] = _collective_batch(all_gather_p, _gather_over)
batching.batch_rules[reduce_scatter_p] = _scatter_batch_rule()
batching.batch_rules[ppermute_p] = _ppermute_batch_rule()
batching.batch_rules[ppermute_p].always = True


# ---------------------------------------------------------------- differentiation
# Every bind below goes through _lift: a tangent or cotangent may be a value the named
# vmap has not seen yet (a constant, or an unbatched zero), and must still be reduced.
# Reverse mode follows JAX: psum's transpose is psum, all_gather's is a psum_scatter (the
# summed cotangent's own slice), ppermute's is the inverse permutation.
from ..interpreters import ad  # noqa: E402


def _bind_lifted(prim, x, **params):
    return prim.bind(_lift(x, _axis_param(params)), **params)


def _linear_jvp(prim):
    def rule(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        return _bind_lifted(prim, x, **params), _bind_lifted(prim, ad.instantiate(t), **params)
    return rule


def _psum_transpose(ct, x, **params):
    return [_bind_lifted(psum_p, ad.instantiate(ct), **params)]


def _all_gather_transpose(ct, x, *, axis_name, axis, tiled, axis_size):
    from .indexing import dynamic_slice
    from .shape import squeeze
    total = _bind_lifted(psum_p, ad.instantiate(ct), axes=(axis_name,), axis_index_groups=None)
    aval = x.aval if ad.is_undefined(x) else core.get_aval(x)
    chunk = aval.shape[axis] if tiled else 1
    idx = axis_index(axis_name)
    starts = [np.int32(0)] * core.get_aval(total).ndim
    starts[axis] = idx * np.int32(chunk)
    sizes = list(core.get_aval(total).shape)
    sizes[axis] = chunk
    out = dynamic_slice(total, starts, sizes)
    return [out if tiled else squeeze(out, (axis,))]


def _ppermute_transpose(ct, x, *, axis_name, perm):
    inverse = tuple((d, s) for s, d in perm)
    return [_bind_lifted(ppermute_p, ad.instantiate(ct), axis_name=axis_name, perm=inverse)]


def _psum_scatter_transpose(ct, x, *, axis_name, scatter_dimension, axis_size, tiled):
    """Each member's block of the summed cotangent, gathered back: all_gather is the transpose."""
    return [_bind_lifted(all_gather_p, ad.instantiate(ct), axis_name=axis_name, axis=scatter_dimension,
                         tiled=tiled, axis_size=axis_size)]


for _p, _t in ((psum_p, _psum_transpose), (all_gather_p, _all_gather_transpose),
               (ppermute_p, _ppermute_transpose), (reduce_scatter_p, _psum_scatter_transpose)):
    ad.jvp_rules[_p] = _linear_jvp(_p)
    ad.transpose_rules[_p] = _t
ad.defjvp_zero(axis_index_p)


def _pmax_jvp(prim):
    def rule(primals, tangents, **params):
        from .elementwise import convert_element_type, eq, mul, div
        (x,), (t,) = primals, tangents
        ans = _bind_lifted(prim, x, **params)
        mask = convert_element_type(eq(x, ans), core.get_aval(x).dtype)
        num = _bind_lifted(psum_p, mul(ad.instantiate(t), mask), **params)
        return ans, div(num, _bind_lifted(psum_p, mask, **params))
    return rule


ad.jvp_rules[pmax_p] = _pmax_jvp(pmax_p)
ad.jvp_rules[pmin_p] = _pmax_jvp(pmin_p)


def _group_size(axis_name):
    n = 1
    for name in _names(axis_name):
        n *= axis_size(name)
    return n


def _all_to_all_shape(x, *, axis_name, split_axis, concat_axis, axis_index_groups, tiled):
    """The primitive always cuts ``split_axis`` into blocks and stacks them along
    ``concat_axis`` (the wrapper adds and removes the unit dimensions of the untiled form)."""
    n, shape = _group_size(axis_name), list(x.shape)
    if shape[split_axis] % n:
        raise ValueError(f"all_to_all: operand dimension split_axis={split_axis} of shape {x.shape} "
                         f"is not divisible by the size {n} of axis {axis_name!r}")
    shape[split_axis] //= n
    shape[concat_axis] *= n
    return ShapedArray(tuple(shape), x.dtype, False)


all_to_all_p = make_primitive("all_to_all", _unbound, _all_to_all_shape)
COLLECTIVES.add(all_to_all_p)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Member j of ``axis_name`` receives block j of every member's ``x`` (cut along
    ``split_axis``), stacked (untiled: along a new axis at ``concat_axis``; tiled: concatenated
    along ``concat_axis``) in member order. One ``all_to_all`` primitive, as in JAX: across
    processes it is one MPI Alltoall."""
    from ..tree_util import tree_map
    from ..numpy._util import asarray_leaf
    from .shape import expand_dims, squeeze
    if axis_index_groups is not None:
        raise NotImplementedError("numjax lax.all_to_all does not support axis_index_groups")

    def one(v):
        v = v if isinstance(v, core.Tracer) else asarray_leaf(v)
        aval = core.get_aval(v)
        ndim, n = aval.ndim, _group_size(axis_name)
        for name, ax in (("split_axis", split_axis), ("concat_axis", concat_axis)):
            if not -ndim <= ax < ndim:
                raise ValueError(f"all_to_all: {name}={ax} is out of range for an operand of rank "
                                 f"{ndim} (shape {aval.shape})")
        split, concat = split_axis % ndim, concat_axis % ndim
        size = aval.shape[split]
        if tiled and size % n:
            raise ValueError(f"The size of all_to_all split_axis ({size}) has to be divisible by the "
                             f"size of the named axis {axis_name} ({n})")
        if not tiled and size != n:
            raise ValueError("all_to_all requires the size of the mapped axis axis_name to equal "
                             f"x.shape[split_axis], but they are {n} and {size} respectively.")
        if not tiled and split != concat:
            # the received blocks stack along a new unit axis at concat; split's becomes unit
            if split < concat:
                concat += 1
            else:
                split += 1
            v = expand_dims(v, (concat,))
        out = all_to_all_p.bind(_lift(v, _names(axis_name)[0]), axis_name=axis_name,
                                split_axis=split, concat_axis=concat, axis_index_groups=None,
                                tiled=bool(tiled))
        return squeeze(out, (split,)) if not tiled and split != concat else out
    return tree_map(one, x)


def _all_to_all_batch_rule():
    @batching.needs_axis
    def rule(vals, dims, *, axis_data, axis_name, split_axis, concat_axis, axis_index_groups, tiled):
        from .shape import broadcast_in_dim, reshape
        (x,), (d,) = vals, dims
        params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups, tiled=tiled)
        if axis_data.name not in _names(axis_name):
            # over an enclosing axis: every example of this vmap's axis is exchanged independently
            if d is batching.not_mapped:
                return all_to_all_p.bind(_lift(x, _names(axis_name)[0]), split_axis=split_axis,
                                         concat_axis=concat_axis, **params), d
            x = batching.moveaxis(x, d, 0)
            return all_to_all_p.bind(_lift(x, _names(axis_name)[0]), split_axis=split_axis + 1,
                                     concat_axis=concat_axis + 1, **params), 0
        if len(_names(axis_name)) > 1:
            raise NotImplementedError("numjax: all_to_all over several axis names under vmap")
        n = axis_data.size
        if d is batching.not_mapped:
            shape = core.get_aval(x).shape
            x = broadcast_in_dim(x, (n,) + shape, tuple(range(1, len(shape) + 1)))
        d = 0 if d is batching.not_mapped else d
        if split_axis == concat_axis:
            # (sender, ..., block j, k, ...) -> (receiver j, ..., sender, k, ...), then fold
            x = batching.moveaxis(x, d, 0)
            shape = list(core.get_aval(x).shape)
            ax = split_axis + 1
            x = reshape(x, tuple(shape[:ax] + [n, shape[ax] // n] + shape[ax + 1:]))
            x = batching.moveaxis(batching.moveaxis(x, ax, 0), 1, ax)
            return reshape(x, (n,) + tuple(shape[1:])), 0
        x = batching.moveaxis(x, d, concat_axis)
        shape = list(core.get_aval(x).shape)      # (..., sender at concat, concat dim, ...)
        shape[concat_axis:concat_axis + 2] = [shape[concat_axis] * shape[concat_axis + 1]]
        x = reshape(x, tuple(shape))               # senders' blocks concatenated in order
        shape[split_axis:split_axis + 1] = [n, shape[split_axis] // n]
        return reshape(x, tuple(shape)), split_axis     # block j of split_axis: member j's
    rule.always = True
    return rule


batching.batch_rules[all_to_all_p] = _all_to_all_batch_rule()


def _all_to_all_transpose(ct, x, *, axis_name, split_axis, concat_axis, axis_index_groups, tiled):
    """Block i of the cotangent's concat_axis came from member i's block j: send it back."""
    return [_bind_lifted(all_to_all_p, ad.instantiate(ct), axis_name=axis_name, split_axis=concat_axis,
                         concat_axis=split_axis, axis_index_groups=axis_index_groups, tiled=tiled)]


ad.jvp_rules[all_to_all_p] = _linear_jvp(all_to_all_p)
ad.transpose_rules[all_to_all_p] = _all_to_all_transpose


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swap the mapped axis ``axis_name`` with positional ``axis`` (all_to_all on one axis)."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)

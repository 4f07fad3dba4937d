"""JAX's sharding in types: an array placed on a mesh with Explicit axes carries its sharding in
its type, ``jax.typeof(x)`` prints ``float32[8@X,4@Y]``, and every operation gives its result
a sharding by a rule (or raises ``ShardingTypeError`` asking for ``out_sharding=``).

numjax still computes one global program (numjax/sharding.py), so these shardings are types
and placement records, not a split of the work: they decide what ``jax.typeof``,
``x.sharding``, ``make_jaxpr`` and the errors say, exactly as JAX's rules would.

* The type: ``ShapedArray._sharding`` is a NamedSharding over the AbstractMesh whose spec has
  one entry per dimension naming Explicit mesh axes only (Auto axes are the compiler's and are
  left out, as in JAX); None on values that carry no sharding.
* Values: an Array placed with an Explicit-axes NamedSharding is a ``TypedShardingArray`` (a
  subclass, so every eager and jit fast path, which take exact ``Array``s only, leaves it to
  the general path that applies the rules).
* Rules, keyed by primitive name (``sharding_rules`` below), take the operands' specs and
  avals and return the outputs' specs; ``typed`` applies them in abstract evaluation (hence
  under jit, grad, vmap and eagerly alike) and ``eager`` places eager results.
"""
import numpy as np

from . import core
from .array import Array
from .errors import ShardingTypeError
from .sharding import (AbstractMesh, AxisType, NamedSharding, PartitionSpec, _as_sharding, _axes_of,
                       _normalized, _padded, _split_count, get_abstract_mesh)


class TypedShardingArray(Array):
    """An Array whose NamedSharding names Explicit mesh axes: its aval carries the sharding."""
    __slots__ = ()

    @property
    def aval(self):
        return core.ShapedArray(self._value.shape, self._value.dtype, self.weak_type,
                                type_sharding(self._sharding, self._value.ndim))


class PlacedArray(Array):
    """An Array placed on a mesh by a NamedSharding naming no Explicit axis: eager ops on it
    give results placed by numjax/sharding_rules.py's rules (its operators take the general
    path for that)."""
    __slots__ = ()


def type_sharding(named, ndim):
    """The sharding a value placed by ``named`` has in its type: the abstract mesh and the
    spec padded to the rank, keeping only the Explicit axes' names."""
    mesh = named.mesh.abstract_mesh
    explicit = {n for n, t in zip(mesh.axis_names, mesh.axis_types) if t is AxisType.Explicit}
    entries = [_entry([a for a in _axes_of(e) if a in explicit], isinstance(e, tuple))
               for e in _padded(named.spec, ndim)]
    return NamedSharding(mesh, PartitionSpec(*entries, unreduced=named.spec.unreduced))


def _entry(axes, as_tuple):
    """A spec entry naming ``axes``: None, one name, or a tuple (kept a tuple if it was one)."""
    if not axes:
        return None
    return axes[0] if len(axes) == 1 and not as_tuple else tuple(axes)


def has_explicit_axes(mesh):
    return any(t is AxisType.Explicit for t in mesh.axis_types)


def shape_text(shape, spec):
    """``8@X,4@(X,Y),2``: dimensions with the mesh axes that shard them."""
    out = []
    for n, e in zip(shape, _padded(spec, len(shape))):
        if e is None:
            out.append(str(n))
        elif isinstance(e, tuple):
            out.append(f"{n}@({','.join(e)})")
        else:
            out.append(f"{n}@{e}")
    return ",".join(out)


def _short(dtype):
    from . import dtypes
    return dtypes.short_name(np.dtype(dtype))


# ---------------------------------------------------------------- activation

def activate():
    """Install the hooks (once): from now on abstract evaluation and eager ops apply the rules."""
    if core.sharding_hooks.typed is None:
        core.sharding_hooks.typed = typed
        core.sharding_hooks.eager = eager
        # Array's operators have a short eager path that would drop the sharding: this class
        # takes the general ones (those tracers have).
        from .numpy import _operators
        for name in _operators._FAST_BINARY:
            setattr(TypedShardingArray, name, core.Tracer.__dict__[name])
            setattr(PlacedArray, name, core.Tracer.__dict__[name])


def typed_array(arr, named):
    """``arr``'s value as a TypedShardingArray placed by ``named``."""
    out = TypedShardingArray(arr._value, arr.weak_type)
    out._sharding = named
    activate()
    return out


# ---------------------------------------------------------------- applying the rules

def _mesh_of(avals):
    mesh = None
    for a in avals:
        s = getattr(a, "_sharding", None)
        if s is None or s.mesh.empty:
            continue
        if mesh is not None and s.mesh != mesh:
            raise ShardingTypeError(f"Mesh for all inputs should be equal. Got one mesh: {mesh} and "
                                    f"another mesh: {s.mesh}")
        mesh = s.mesh
    return mesh


def _spec(aval):
    s = getattr(aval, "_sharding", None)
    return (None,) * len(aval.shape) if s is None else _padded(s.spec, len(aval.shape))


def _requested(params):
    """A NamedSharding asked for by an ``out_sharding``/``sharding`` parameter, if any."""
    for key in ("out_sharding", "sharding"):
        s = params.get(key)
        if isinstance(s, NamedSharding):
            return s
    return None


def typed(prim, avals, out, params):
    """``out`` (abstract evaluation's result) with the shardings the rules give."""
    if getattr(prim, "sets_sharding", False):
        return out
    requested = _requested(params)
    mesh = _mesh_of(avals)
    if mesh is None:
        if requested is None:
            current = get_abstract_mesh()
            if current.empty or not has_explicit_axes(current) or not _any_typed(out):
                return out
        mesh = get_abstract_mesh() if requested is None else requested.mesh.abstract_mesh
    if not has_explicit_axes(mesh):
        return out
    outs = list(out) if prim.multiple_results else [out]
    specs = out_specs(prim, avals, outs, params, mesh, requested)
    if specs is None:
        return out
    placed = [o.update(sharding=NamedSharding(mesh, PartitionSpec(*s))) if isinstance(o, core.ShapedArray)
              and s is not None else o for o, s in zip(outs, specs)]
    return placed if prim.multiple_results else placed[0]


def _any_typed(out):
    outs = out if isinstance(out, (list, tuple)) else [out]
    return any(getattr(o, "_sharding", None) is not None for o in outs)


def out_specs(prim, avals, outs, params, mesh, requested):
    """Each output's spec (a tuple per output; None keeps abstract evaluation's), or raises."""
    if requested is not None:
        return [_padded(type_sharding(requested, len(o.shape)).spec, len(o.shape)) for o in outs]
    in_specs = [_spec(a) for a in avals]
    rule = sharding_rules.get(prim.name)
    if rule is None and getattr(prim, "elementwise", False):
        rule = _broadcasting
    if rule is None:
        if _is_higher_order(params):
            return [None if getattr(o, "_sharding", None) is not None else (None,) * len(o.shape)
                    for o in outs]
        if all(e is None for s in in_specs for e in s):
            return [(None,) * len(getattr(o, "shape", ())) for o in outs]
        raise ShardingTypeError(
            f"sharding rule for {prim.name} is not implemented. Please file an issue at "
            "https://github.com/jax-ml/jax/issues. You can work around this error by dropping that "
            "operation into full auto sharding mode via: `jax.sharding.auto_axes(fun, out_shardings=...)`")
    specs = rule(mesh, avals, in_specs, outs, params, prim.name)
    for o, s in zip(outs, specs):
        _check_no_duplicates(prim, avals, in_specs, o, s)
    return specs


def _is_higher_order(params):
    from .jaxpr import ClosedJaxpr, Jaxpr
    return any(isinstance(v, (Jaxpr, ClosedJaxpr)) or
               (isinstance(v, (tuple, list)) and v and isinstance(v[0], (Jaxpr, ClosedJaxpr)))
               for v in params.values())


def _check_no_duplicates(prim, avals, in_specs, out, spec):
    seen = set()
    for e in spec:
        for a in _axes_of(e):
            if a in seen:
                ins = ", ".join(f"{_short(a_.dtype)}[{shape_text(a_.shape, s)}]"
                                for a_, s in zip(avals, in_specs))
                raise ShardingTypeError(f"{prim.name} operation with inputs: {ins} produces an illegally "
                                        f"sharded result: {_short(out.dtype)}[{shape_text(out.shape, spec)}]")
            seen.add(a)


# ---------------------------------------------------------------- eager evaluation

def eager(prim, impl, args, params):
    """Evaluate ``prim`` now; when an operand carries an Explicit sharding (or one is asked
    for), the results are placed as their types say, on the operands' concrete mesh."""
    named = [a._sharding for a in args if type(a) is TypedShardingArray]
    requested = _requested(params)
    if not named and requested is None:
        if any(type(a) is PlacedArray for a in args):
            from .sharding_rules import eager_placed
            return eager_placed(prim, impl, args, params)
        return impl(*args, **params)
    out_avals = prim.abstract_eval(*[core.get_aval(a) for a in args], **params)
    result = impl(*args, **params)
    concrete = named[0].mesh if named else _concrete_mesh(requested)
    if prim.multiple_results:
        return [place(r, a, concrete) for r, a in zip(result, out_avals)]
    return place(result, out_avals, concrete)


def _concrete_mesh(requested):
    from .sharding import current_mesh
    mesh = requested.mesh
    if isinstance(mesh, AbstractMesh):
        mesh = current_mesh()
    return mesh


def place(value, aval, mesh, compiler_form=False):
    """``value`` (an eager result) as a TypedShardingArray when ``aval`` carries a sharding;
    ``compiler_form``: its spec without trailing Nones (as JAX reports a jitted program's
    outputs whose inputs in_shardings placed)."""
    s = getattr(aval, "_sharding", None)
    if s is None or mesh is None or not isinstance(value, Array) or value._on_device:
        return value
    spec = PartitionSpec(*_normalized(s.spec), unreduced=s.spec.unreduced) if compiler_form else s.spec
    return typed_array(value, NamedSharding(concrete_for(mesh, s.mesh), spec))


# ---------------------------------------------------------------- the rules

def _broadcasting(mesh, avals, in_specs, outs, params, name):
    ranked = [(a, s) for a, s in zip(avals, in_specs) if a.shape]
    rank = len(outs[0].shape)
    if not ranked or rank == 0:
        return [(None,) * len(o.shape) for o in outs]
    spec = []
    for d in range(rank):
        chosen = None
        for e in (s[d] for _, s in ranked):
            if e is None:
                continue
            if chosen is not None and e != chosen:
                raise ShardingTypeError(f"{name} got incompatible shardings for broadcasting: "
                                        f"{', '.join(str(tuple(s)) for _, s in ranked)}.")
            chosen = e
        spec.append(chosen)
    return [tuple(spec)] * len(outs)


def _reduce(mesh, avals, in_specs, outs, params, name):
    axes = set(params["axes"])
    return [tuple(e for d, e in enumerate(in_specs[0]) if d not in axes)] * len(outs)


def _cumulative(mesh, avals, in_specs, outs, params, name):
    axis = params["axis"]
    if in_specs[0][axis] is not None:
        raise ShardingTypeError("Input should be unsharded over the axis being reduced. Got input "
                                f"type={avals[0].str_short()} and axis={axis}")
    return [in_specs[0]]


def _sort(mesh, avals, in_specs, outs, params, name):
    dim = params["dimension"]
    for a, s in zip(avals, in_specs):
        if s[dim] is not None:
            raise ShardingTypeError("Arguments to sort must be unsharded over the sorting dimension. Got arg "
                                    f"sharding={a._sharding} and sorting dimension={dim}")
    return [in_specs[0]] * len(outs)


def _transpose(mesh, avals, in_specs, outs, params, name):
    return [tuple(in_specs[0][p] for p in params["permutation"])]


def _broadcast_in_dim(mesh, avals, in_specs, outs, params, name):
    spec = [None] * len(outs[0].shape)
    for src, dst in enumerate(params["broadcast_dimensions"]):
        spec[dst] = in_specs[0][src]
    return [tuple(spec)]


def _squeeze(mesh, avals, in_specs, outs, params, name):
    dims = {d % max(len(in_specs[0]), 1) for d in params["dimensions"]}
    return [tuple(e for d, e in enumerate(in_specs[0]) if d not in dims)]


def _reshape_error(aval, new_sizes):
    raise ShardingTypeError("This reshape is not supported. Please specify the sharding of the output via "
                            f"the `out_sharding` argument of jax.lax.reshape. Got operand type: "
                            f"{aval.str_short()}, new sizes: {tuple(new_sizes)}")


def _reshape(mesh, avals, in_specs, outs, params, name):
    aval, spec, new = avals[0], in_specs[0], tuple(outs[0].shape)
    if all(e is None for e in spec):
        return [(None,) * len(new)]
    return [_split_or_merge(mesh, aval, spec, new)]


def _split_or_merge(mesh, aval, spec, new):
    """Size-1 dimensions coming or going, one dimension split into several, or several merged
    into one (JAX's cases): the mesh axes of a split dimension go to the new dimensions
    outermost first, each taking as many as divide it; a merge concatenates the merged
    dimensions' axes."""
    old = [(n, e) for n, e in zip(aval.shape, spec) if n != 1]
    new_sizes = [n for n in new if n != 1]
    out, i, j = [], 0, 0
    while i < len(old) and j < len(new_sizes):
        n, e = old[i]
        if n == new_sizes[j]:
            out.append(e)
            i, j = i + 1, j + 1
            continue
        if n > new_sizes[j]:      # split old dim i into new dims j..k
            group, prod = [], 1
            while prod < n and j < len(new_sizes):
                group.append(new_sizes[j])
                prod *= new_sizes[j]
                j += 1
            if prod != n:
                _reshape_error(aval, new)
            out.extend(_split_axes(mesh, aval, new, e, group))
            i += 1
        else:                     # merge old dims i..k into new dim j
            group, prod = [], 1
            while prod < new_sizes[j] and i < len(old):
                group.append(old[i])
                prod *= old[i][0]
                i += 1
            if prod != new_sizes[j]:
                _reshape_error(aval, new)
            axes = [a for _, e2 in group for a in _axes_of(e2)]
            if None in _normalized([e2 for _, e2 in group]):   # an unsharded dim before a sharded one
                _reshape_error(aval, new)
            out.extend(_split_axes(mesh, aval, new, tuple(axes) if axes else None, [new_sizes[j]]))
            j += 1
    kept = iter(out)
    return tuple(None if n == 1 else next(kept) for n in new)


def _split_axes(mesh, aval, new, entry, sizes):
    axes = list(_axes_of(entry))
    parts = []
    for n in sizes:
        mine = []
        while n > 1 and axes:
            size = mesh.shape[axes[0]]
            if n % size:
                _reshape_error(aval, new)
            n //= size
            mine.append(axes.pop(0))
        parts.append(_entry(mine, isinstance(entry, tuple)))
    if axes:
        _reshape_error(aval, new)
    return parts


def _dot_general(mesh, avals, in_specs, outs, params, name):
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    lhs, rhs = in_specs
    lb_spec, rb_spec = tuple(lhs[i] for i in lb), tuple(rhs[i] for i in rb)
    if lb_spec != rb_spec:
        raise ShardingTypeError("dot_general requires lhs batch dimensions and rhs batch dimensions to have "
                                f"the same sharding, got {lb_spec} and {rb_spec}.")
    lc_spec, rc_spec = tuple(lhs[i] for i in lc), tuple(rhs[i] for i in rc)
    if any(a is not None and b is not None for a, b in zip(lc_spec, rc_spec)):
        raise ShardingTypeError("Contracting dimensions are sharded and it is ambiguous how the output should "
                                "be sharded. Please specify the output sharding via the `out_sharding` "
                                f"parameter. Got lhs_contracting_spec={lc_spec} and rhs_contracting_spec={rc_spec}")
    lhs_free = tuple(e for d, e in enumerate(lhs) if d not in lc and d not in lb)
    rhs_free = tuple(e for d, e in enumerate(rhs) if d not in rc and d not in rb)
    return [lb_spec + lhs_free + rhs_free]


def _varying_shape(mesh, aval, spec, out, what):
    """Slicing or padding: a sharded dimension keeps its axes when the mesh still divides it."""
    if not out.shape or all(n == 1 for n in out.shape):
        return (None,) * len(out.shape)
    for n_in, n_out, e in zip(aval.shape, out.shape, spec):
        size = _split_count(mesh, e)
        if n_in != n_out and e is not None and n_out % size:
            raise ShardingTypeError(f"{what} on sharded dims where out dim ({n_out}) is not divisible by mesh "
                                    f"axes ({size}) with spec ({e}) is not implemented. Got input "
                                    f"type={aval.str_short(True)} and output shape={tuple(out.shape)}")
    return tuple(spec)


def _slice(mesh, avals, in_specs, outs, params, name):
    return [_varying_shape(mesh, avals[0], in_specs[0], outs[0], "slicing")]


def _pad(mesh, avals, in_specs, outs, params, name):
    return [_varying_shape(mesh, avals[0], in_specs[0], outs[0], "padding")]


def _same_as_operand(mesh, avals, in_specs, outs, params, name):
    return [in_specs[0]] * len(outs)


def _concatenate(mesh, avals, in_specs, outs, params, name):
    distinct = {s for a, s in zip(avals, in_specs) if getattr(a, "_sharding", None) is not None}
    if len(distinct) > 1:
        shown = ", ".join(str(a.sharding) for a in avals)
        raise ShardingTypeError(f"All operands should have the same sharding. Got shardings {shown}")
    return [distinct.pop() if distinct else (None,) * len(outs[0].shape)]


def _created(mesh, avals, in_specs, outs, params, name):
    return [(None,) * len(o.shape) for o in outs]


sharding_rules = {
    "reduce_sum": _reduce, "reduce_max": _reduce, "reduce_min": _reduce, "reduce_prod": _reduce,
    "reduce_and": _reduce, "reduce_or": _reduce, "reduce_xor": _reduce, "argmax": _reduce, "argmin": _reduce,
    "cumsum": _cumulative, "cumprod": _cumulative, "cummax": _cumulative, "cummin": _cumulative,
    "cumlogsumexp": _cumulative, "sort": _sort, "transpose": _transpose,
    "broadcast_in_dim": _broadcast_in_dim, "squeeze": _squeeze, "reshape": _reshape,
    "dot_general": _dot_general, "slice": _slice, "pad": _pad, "rev": _same_as_operand,
    "concatenate": _concatenate, "select_n": _broadcasting, "iota": _created,
    "convert_element_type": _same_as_operand, "bitcast_convert_type": _same_as_operand,
    "reduce_precision": _same_as_operand, "copy": _same_as_operand, "copy_p": _same_as_operand,
    "stop_gradient": _same_as_operand, "optimization_barrier": _same_as_operand,
}


# ---------------------------------------------------------------- changing a value's type

def concrete_for(mesh, abstract):
    """A concrete mesh of ``mesh``'s devices shaped, named and typed as ``abstract``."""
    from .sharding import Mesh
    if mesh is None or mesh.abstract_mesh == abstract:
        return mesh
    devices = np.asarray(list(mesh.devices.flat), dtype=object).reshape(abstract.axis_sizes)
    return Mesh(devices, abstract.axis_names, abstract.axis_types)


def retype(leaf, sharding):
    """``leaf`` with ``sharding`` (a NamedSharding, concrete or abstract) as its placement: a
    traced value's type changes (reshard_p), an Array is placed anew."""
    from .lax.sharding_ops import reshard
    from .sharding import attach, current_mesh
    if isinstance(leaf, core.Tracer):
        mesh = sharding.mesh.abstract_mesh
        dst = type_sharding(sharding, core.get_aval(leaf).ndim) if has_explicit_axes(mesh) else None
        return reshard(leaf, dst)
    mesh = sharding.mesh
    if isinstance(mesh, AbstractMesh):
        mesh = concrete_for(current_mesh(), mesh)
    from .sharding_rules import as_partition_spec
    spec = as_partition_spec(mesh, _padded(sharding.spec, np.ndim(leaf)))
    from .api import _put
    return attach(_put(leaf, None), NamedSharding(mesh, spec), copy=True)


def untyped(x):
    """``x`` without a sharding in its type (what a shard_map body sees of it)."""
    if type(x) is TypedShardingArray:
        return Array(x._value, x.weak_type)
    if isinstance(x, core.Tracer) and core.get_aval(x)._sharding is not None:
        from .lax.sharding_ops import reshard
        return reshard(x, None)
    return x


def requested_sharding(out_sharding, what="out_sharding"):
    """An ``out_sharding=`` argument as the NamedSharding (over the abstract mesh) a primitive's
    parameter holds: a PartitionSpec names axes of the current mesh."""
    if out_sharding is None:
        return None
    named = _as_sharding(out_sharding, what, traced=True)
    if not isinstance(named, NamedSharding):
        raise TypeError(f"{what} must be a PartitionSpec or a NamedSharding, got {out_sharding!r}")
    return NamedSharding(named.mesh.abstract_mesh, named.spec)


def _switched(mesh, axes, to):
    """``mesh`` (abstract) with ``axes`` (all when None) of type ``to``."""
    names = mesh.axis_names if axes is None else ((axes,) if isinstance(axes, str) else tuple(axes))
    types = tuple(to if n in names else t for n, t in zip(mesh.axis_names, mesh.axis_types))
    return AbstractMesh(mesh.axis_sizes, mesh.axis_names, types)


def _cast_all(tree, mesh):
    """Every leaf of ``tree`` retyped for ``mesh``: its Explicit axes kept, the others dropped."""
    from . import tree_util

    def one(leaf):
        if isinstance(leaf, Array):
            named = getattr(leaf, "_sharding", None)   # (unset on most Arrays)
        elif isinstance(leaf, core.Tracer):
            named = core.get_aval(leaf)._sharding
        else:
            return leaf
        if named is None:
            return leaf
        return retype(leaf, NamedSharding(mesh, PartitionSpec(*_padded(named.spec, leaf.ndim))))
    return tree_util.map_traced(one, tree)


def auto_axes(fun=None, *, axes=None, out_sharding=None):
    """``jax.sharding.auto_axes``: ``fun`` runs with ``axes`` (all by default) of the current
    mesh switched to Auto (shardings leave the types), and its outputs are placed by
    ``out_sharding`` (given here or as a keyword of the call)."""
    if fun is None:
        return lambda f: auto_axes(f, axes=axes, out_sharding=out_sharding)
    import functools

    @functools.wraps(fun)
    def decorated(*args, out_sharding=out_sharding, **kwargs):
        from .sharding import reshard, use_abstract_mesh
        outer = get_abstract_mesh()
        if any(t is AxisType.Manual for t in outer.axis_types):
            raise ValueError(f"auto_axes cannot be used with Manual mesh axes. Got mesh {outer}")
        inner = _switched(outer, axes, AxisType.Auto)
        with use_abstract_mesh(inner):
            out = fun(*_cast_all(args, inner), **_cast_all(kwargs, inner))
        if out_sharding is None:
            raise ValueError("auto_axes: give `out_sharding` (to the decorator or as a keyword argument of the "
                             "call): the result's sharding is not decided inside an Auto-axes function")
        return reshard(out, out_sharding)
    return decorated


def explicit_axes(fun=None, *, axes=None, in_sharding=None):
    """``jax.sharding.explicit_axes``: ``fun`` runs with ``axes`` (all by default) of the
    current mesh switched to Explicit, its arguments placed by ``in_sharding``; its outputs
    come back with the outer mesh's axis types."""
    if fun is None:
        return lambda f: explicit_axes(f, axes=axes, in_sharding=in_sharding)
    import functools

    @functools.wraps(fun)
    def decorated(*args, in_sharding=in_sharding, **kwargs):
        from .sharding import reshard, use_abstract_mesh
        outer = get_abstract_mesh()
        inner = _switched(outer, axes, AxisType.Explicit)
        if in_sharding is None:
            raise ValueError("explicit_axes: give `in_sharding` (to the decorator or as a keyword argument of "
                             "the call): the arguments' shardings in the Explicit-axes function")
        with use_abstract_mesh(inner):
            out = fun(*reshard(args, in_sharding), **kwargs)
        return _cast_all(out, outer)
    return decorated

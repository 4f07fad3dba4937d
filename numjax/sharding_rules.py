"""The shardings of a jitted function's outputs (see numjax/sharding.py's docstring).

``jit(f)(x)`` with a sharded ``x`` reports, as JAX's sharding-in-types does, a NamedSharding
for each output: ``out_shardings`` when given, else the spec propagated through the jaxpr
by the rules below (a spec here is one entry per dimension: None, a mesh axis name or a
tuple of names).  A primitive without a rule keeps the spec of an operand of the same shape
(elementwise ops) or else gives a replicated result.
"""
from . import core, tree_util
from .array import Array
from .jaxpr import Literal
import numpy as np

from . import sharding_types
from .sharding import (AxisType, IndivisibleError, NamedSharding, PartitionSpec, _axes_of, _padded, _split_count,
                       attach, check_fits, current_mesh, _map_leaves, sharding_of)

_REDUCTIONS = {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or",
               "reduce_xor", "argmax", "argmin"}
_SUB_JAXPR_PARAMS = ("jaxpr", "call_jaxpr", "fun_jaxpr")


def _replicated(aval):
    return (None,) * len(aval.shape)


def _from_same_shape(eqn, in_specs, out_aval):
    for v, spec in zip(eqn.invars, in_specs):
        if tuple(v.aval.shape) == tuple(out_aval.shape) and any(e is not None for e in spec):
            return spec
    return _replicated(out_aval)


def _reduce(eqn, in_specs):
    axes = set(eqn.params["axes"])
    return [tuple(e for d, e in enumerate(in_specs[0]) if d not in axes)]


def _transpose(eqn, in_specs):
    return [tuple(in_specs[0][p] for p in eqn.params["permutation"])]


def _broadcast_in_dim(eqn, in_specs):
    x, out = eqn.invars[0].aval, eqn.outvars[0].aval
    spec = [None] * len(out.shape)
    for src, dst in enumerate(eqn.params["broadcast_dimensions"]):
        if x.shape[src] == out.shape[dst]:
            spec[dst] = in_specs[0][src]
    return [tuple(spec)]


def _squeeze(eqn, in_specs):
    dims = {d % len(in_specs[0]) for d in eqn.params["dimensions"]}
    return [tuple(e for d, e in enumerate(in_specs[0]) if d not in dims)]


def _reshape(eqn, in_specs):
    x, out = eqn.invars[0].aval.shape, eqn.outvars[0].aval.shape
    spec = [None] * len(out)
    for d, (a, b) in enumerate(zip(x, out)):   # the leading dimensions reshape leaves alone
        if a != b:
            break
        spec[d] = in_specs[0][d]
    return [tuple(spec)]


def _dot_general(eqn, in_specs):
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = in_specs
    lhs_free = [e for d, e in enumerate(lhs) if d not in lc and d not in lb]
    rhs_free = [e for d, e in enumerate(rhs) if d not in rc and d not in rb]
    batch = [lhs[a] if lhs[a] is not None else rhs[b] for a, b in zip(lb, rb)]
    spec = batch + lhs_free + rhs_free
    seen = set()
    for d, e in enumerate(spec):   # one mesh axis shards at most one dimension
        if e is not None and e in seen:
            spec[d] = None
        seen.add(e)
    return [tuple(spec)]


def _sharding_constraint(eqn, in_specs):
    """The constraint's spec; an UNCONSTRAINED dimension keeps its operand's entry."""
    from .sharding import UNCONSTRAINED
    asked = _padded(eqn.params["sharding"].spec, len(in_specs[0]))
    return [tuple(have if e is UNCONSTRAINED else e for e, have in zip(asked, in_specs[0]))]


def _slice(eqn, in_specs):
    """A dimension sliced shorter is no longer split (JAX's compiler replicates it)."""
    x, out = eqn.invars[0].aval.shape, eqn.outvars[0].aval.shape
    return [tuple(e if a == b else None for e, a, b in zip(in_specs[0], x, out))]


def _sort(eqn, in_specs):
    d = eqn.params["dimension"]
    return [tuple(None if i == d else e for i, e in enumerate(s)) for s in in_specs[:len(eqn.outvars)]]


def _concatenate(eqn, in_specs):
    """The joined dimension is not split; another keeps the entry the operands agree on."""
    d = eqn.params["dimension"]
    spec = []
    for i, entries in enumerate(zip(*in_specs)):
        spec.append(entries[0] if i != d and all(e == entries[0] for e in entries) else None)
    return [tuple(spec)]


_RULES = {"sharding_constraint": _sharding_constraint, "concatenate": _concatenate, "slice": _slice, "dynamic_slice": _slice, "sort": _sort, "transpose": _transpose, "broadcast_in_dim": _broadcast_in_dim, "squeeze": _squeeze,
          "reshape": _reshape, "dot_general": _dot_general}


def _eqn_specs(eqn, in_specs):
    name = eqn.primitive.name
    if name in _REDUCTIONS:
        outs = _reduce(eqn, in_specs)
    elif name in _RULES:
        outs = _RULES[name](eqn, in_specs)
    else:
        inner = _sub_jaxpr(eqn)
        if inner is not None:
            outs = propagate(inner, in_specs)
        else:
            outs = [_from_same_shape(eqn, in_specs, v.aval) for v in eqn.outvars]
    if len(outs) != len(eqn.outvars):
        return [_replicated(v.aval) for v in eqn.outvars]
    return outs


def _sub_jaxpr(eqn):
    for key in _SUB_JAXPR_PARAMS:
        inner = eqn.params.get(key)
        inner = getattr(inner, "jaxpr", inner)
        if inner is not None and hasattr(inner, "invars") and len(inner.invars) == len(eqn.invars):
            return inner
    return None


def propagate(jaxpr, in_specs):
    """The output specs of ``jaxpr`` (a Jaxpr) for these input specs."""
    env = {v: _replicated(v.aval) for v in jaxpr.constvars}
    env.update(zip(jaxpr.invars, in_specs))

    def read(v):
        return _replicated(v.aval) if type(v) is Literal else env.get(v, _replicated(v.aval))
    for eqn in jaxpr.eqns:
        outs = _eqn_specs(eqn, [read(v) for v in eqn.invars])
        env.update(zip(eqn.outvars, outs))
    return [read(v) for v in jaxpr.outvars]


def as_partition_spec(mesh, spec, compiler_form=False):
    """JAX's form: padded to the rank on an Explicit mesh, trailing Nones dropped on Auto."""
    entries = list(spec)
    if compiler_form or not mesh.are_all_axes_explicit or any(t is AxisType.Auto for t in mesh.axis_types):
        while entries and entries[-1] is None:
            entries.pop()
    return PartitionSpec(*entries)


# ---------------------------------------------------------------- jit's entry points

def apply_in_shardings(args, in_shardings):
    """``(args, placed)``: ``args`` placed by ``jit(in_shardings=...)`` (a sharding for every
    argument, or a tuple with one per positional argument, None: leave as is); ``placed``
    tells whether a value without a sharding of its own was placed (its outputs' specs are
    then reported as JAX's compiler reports them: trailing Nones dropped)."""
    if not isinstance(in_shardings, (tuple, list)):
        in_shardings = (in_shardings,) * len(args)
    if len(in_shardings) != len(args):
        raise ValueError(f"jit in_shardings has {len(in_shardings)} entries but the function was called "
                         f"with {len(args)} positional arguments; give one sharding (or None) per argument")
    placed = []

    def one(leaf, s):
        if s is None or isinstance(leaf, core.Tracer) or not isinstance(s, NamedSharding):
            return leaf
        have = sharding_of(leaf)
        if have is not None:
            if have != s:
                raise ValueError("Sharding passed to jit does not match the sharding on the respective arg. "
                                 f"Got jit sharding: {s},\narg sharding: {have} for arg type: "
                                 f"{_typed(leaf, have)}")
            return leaf
        shape = np.shape(leaf)
        if len(s.spec) <= len(shape) and any(n % _split_count(s.mesh, e) for n, e in
                                             zip(shape, _padded(s.spec, len(shape)))):
            _raise_indivisible(s, shape)
        placed.append(True)
        from .sharding import put
        return put(leaf, s)
    args = tuple(a if s is None else _map_leaves(one, a, s) for a, s in zip(args, in_shardings))
    return args, bool(placed)


def _typed(x, sharding):
    """``float32[4@x,2]``: an argument's type with its sharded dimensions' mesh axes."""
    dims = []
    for n, e in zip(x.shape, _padded(sharding.spec, len(x.shape))):
        axes = _axes_of(e)
        dims.append(f"{n}@{axes[0]}" if len(axes) == 1 else f"{n}@({','.join(axes)})" if axes else str(n))
    return f"{np.dtype(x.dtype).name}[{','.join(dims)}]"


def _raise_indivisible(s, shape):
    factors = [_split_count(s.mesh, e) for e in _padded(s.spec, len(shape))]
    dim = next(d for d, (n, f) in enumerate(zip(shape, factors)) if n % f)
    raise IndivisibleError(f"Sharding {s} implies that array axis {dim} is partitioned {factors[dim]} times, "
                           f"but the dimension size is {shape[dim]} (full shape: {tuple(shape)}, per-dimension "
                           f"tiling factors: {factors} should evenly divide the shape)")


_out_specs = {}   # (program id, input specs, mesh) -> (program, output PartitionSpecs)


def place_outputs(jitted, args, kwargs, out, out_shardings, compiler_form=False):
    """``out`` with the shardings JAX reports (see the module docstring); ``compiler_form``:
    specs without trailing Nones, as for arguments placed by in_shardings."""
    if not core._no_trace_active():
        return out
    if out_shardings is not None:
        def one(leaf, s):
            if s is None or not isinstance(leaf, Array):
                return leaf
            check_fits(s, leaf.shape, "jit")
            return attach(leaf, s, copy=True) if isinstance(s, NamedSharding) else leaf
        return _map_leaves(one, out, out_shardings)
    if not kwargs and all(type(a) is Array for a in args):   # the common case, without flattening
        arg_leaves = args
    else:
        arg_leaves = tree_util.leaves_traced((args, kwargs))
    named = [s for s in map(sharding_of, arg_leaves) if s is not None]
    # Without sharded arguments, outputs can carry types only on a mesh with Explicit axes.
    if not named and (current_mesh() is None or not sharding_types.has_explicit_axes(current_mesh())):
        return out
    program, leaves = jitted._program(args, kwargs)
    out_leaves, out_tree = tree_util.flatten_traced(out)
    jaxpr = program.closed.jaxpr
    if len(out_leaves) != len(jaxpr.outvars) or len(leaves) != len(jaxpr.invars):
        return out
    if any(v.aval._sharding is not None for v in jaxpr.outvars):   # sharding in types
        mesh = next((s.mesh for s in named if sharding_types.has_explicit_axes(s.mesh)), current_mesh())
        return out_tree.unflatten([sharding_types.place(o, v.aval, mesh, compiler_form)
                                  for o, v in zip(out_leaves, jaxpr.outvars)])
    if not named:
        return out
    mesh = named[0].mesh
    in_specs = [_spec_on(sharding_of(x), mesh, v.aval) for x, v in zip(leaves, jaxpr.invars)]
    key = (id(program), tuple(in_specs), mesh, compiler_form)
    hit = _out_specs.get(key)
    if hit is None or hit[0] is not program:
        if len(_out_specs) > 1024:
            _out_specs.clear()
        hit = _out_specs[key] = (program, [as_partition_spec(mesh, s, compiler_form)
                                           for s in propagate(jaxpr, in_specs)])
    placed = [attach(o, NamedSharding(mesh, s), copy=any(o is x for x in arg_leaves))
              if type(o) is Array else o for o, s in zip(out_leaves, hit[1])]
    return out_tree.unflatten(placed)


def _spec_on(sharding, mesh, aval):
    if sharding is None or sharding.mesh != mesh:
        return _replicated(aval)
    return _padded(sharding.spec, len(aval.shape))


# ---------------------------------------------------------------- eager ops on an Auto mesh
# JAX runs an eager op as a one-primitive jitted program; its compiler places the result over
# the operands' mesh. numjax places it by the same rules as a jitted program's outputs
# (operands that are sharding_types.PlacedArray).

class _Eqn:
    """What the rules read of an equation, for one eager op."""
    __slots__ = ("primitive", "params", "invars", "outvars")

    def __init__(self, prim, params, in_avals, out_avals):
        self.primitive, self.params = prim, params
        self.invars = [_Var(a) for a in in_avals]
        self.outvars = [_Var(a) for a in out_avals]


class _Var:
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval


def eager_placed(prim, impl, args, params):
    """Evaluate ``prim`` on operands some of which are PlacedArrays; place the results."""
    result = impl(*args, **params)
    mesh = next(a._sharding.mesh for a in args if type(a) is sharding_types.PlacedArray)
    outs = list(result) if prim.multiple_results else [result]
    if not any(type(o) is Array for o in outs):
        return result
    in_avals = [core.get_aval(a) for a in args]
    out_avals = [core.get_aval(o) for o in outs]
    in_specs = [_spec_on(sharding_of(a), mesh, v) for a, v in zip(args, in_avals)]
    try:
        specs = _eqn_specs(_Eqn(prim, params, in_avals, out_avals), in_specs)
    except (KeyError, IndexError, TypeError, AttributeError):   # a rule not meant for these params
        specs = [_replicated(v) for v in out_avals]
    placed = [attach(o, NamedSharding(mesh, as_partition_spec(mesh, s))) if type(o) is Array else o
              for o, s in zip(outs, specs)]
    return placed if prim.multiple_results else placed[0]

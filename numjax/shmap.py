"""``jax.shard_map``: run a function on each device's block of its inputs.

Each input is split into per-device blocks by its in_spec over the mesh (mesh axes the spec
does not name see the whole dimension); the function runs once per device, with the mesh
axis names bound, so ``lax.psum``/``all_gather``/``ppermute``/``axis_index``... work across
the mesh; the outputs are assembled by out_specs (a mesh axis an out_spec does not name
takes device 0's block along it, as JAX does).

How it runs: the blocks are stacked with one leading dimension per mesh axis and mapped.
Called outside any transformation, every mesh axis is a named ``vmap`` axis and the body runs
once, op by op (as JAX's eager shard_map): its values print per device and carry their
varying-manual-axes sets (numjax/shmap_eager.py). Under a transformation (jit, grad, vmap)
the body is traced once for the replication check and that trace runs under the maps: the
outermost mesh axis with ``pmap`` (there vmap with the named axis), the inner axes with
``vmap``; so a shard_map under jit is part of the one traced program and grad differentiates
through the collectives (psum's transpose, ...).

in_specs: left out (``Infer``), each argument's spec is its sharding type's (every manual axis
must be Explicit), as JAX 0.10 infers it; ``None`` (for all arguments or one) passes the
argument to the body as it is.

Across processes (``numjax.distributed``) every process holds the global values: an eager
shard_map (the traced path, with pmap's threads) runs only the rows of the outermost mesh
axis whose devices are local (pmap's collectives go across processes through MPI) and
all-gathers the outputs; under jit each process evaluates the whole program (the
one-global-program design of numjax/sharding.py).

With ``check_vma=True`` (the default) an output whose out_spec leaves out a mesh axis must
be inferred equal across it, as JAX checks (_check_replication); numjax then takes device
0's block. A body that differentiates (grad/vjp inside it) also gets the other half of JAX's
varying-manual-axes types: the gradient with respect to a value replicated over an axis is
summed over that axis where JAX's pvary transposes to psum, and a psum of a varying value
transposes to the identity (numjax/_src/vma.py); such a body runs with every mesh axis as a
named vmap axis (the replication check then reads the outputs' batching). With
``check_vma=False`` each device keeps its own gradient, as in JAX.
"""
import functools
import math

import numpy as np

from . import core, tree_util
from ._src import vma
from . import sharding_types
from .shmap_eager import jaxpr_vma
from .api import Infer
from .sharding import AxisType, NamedSharding, PartitionSpec, _axes_of, _padded, attach, current_mesh, _state


def shard_map(f=None, /, *, out_specs, in_specs=Infer, mesh=None, axis_names=frozenset(), check_vma=True,
              check_rep=None):
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                 axis_names=axis_names, check_vma=check_vma, check_rep=check_rep)
    if not callable(f):
        raise TypeError(f"shard_map requires a callable for its first argument, but got {f} of type {type(f)}.")

    checked = {}   # argument signature -> whether the body differentiates (see below)

    @functools.wraps(f)
    def mapped(*args):
        the_mesh = _resolve_mesh(mesh)
        manual = tuple(a for a in the_mesh.axis_names if not axis_names or a in axis_names)
        leaves, in_tree = tree_util.flatten_traced(args)
        specs = _in_specs_per_leaf(in_specs, args, leaves, the_mesh, manual)
        dynamic = [i for i, spec in enumerate(specs) if spec is not None]   # None: passed as is
        for i in dynamic:
            _check_block(f, the_mesh, manual, leaves[i], specs[i], i)
            _check_explicit_input(the_mesh, manual, leaves[i], specs[i])
        specs = [specs[i] for i in dynamic]
        blocks_of = [sharding_types.untyped(leaves[i]) for i in dynamic]   # the body's blocks are Manual
        stacked = [_stack_blocks(x, spec, the_mesh, manual) for x, spec in zip(blocks_of, specs)]
        used = [{a for e in spec for a in _axes_of(e)} for spec in specs]
        out_tree = []

        def body(*blocks):   # the dynamic blocks -> the flat outputs
            given = dict(zip(dynamic, blocks))
            out = f(*tree_util.tree_unflatten(in_tree, [given.get(i, x) for i, x in enumerate(leaves)]))
            out_leaves, tree = tree_util.flatten_traced(out)
            out_tree.append(tree)
            return list(out_leaves)
        check = check_vma and (check_rep is None or check_rep)
        if core._no_trace_active() and not _across_processes():
            outs = _run_eager(f, body, stacked, used, the_mesh, manual, out_specs, check, out_tree)
        else:
            outs = _run_traced(f, body, stacked, used, the_mesh, manual, out_specs, check, out_tree,
                               checked, in_tree)
        return _assembled_outputs(outs, out_tree[-1], out_specs, the_mesh, manual)
    return mapped


def _assembled_outputs(outs, tree, out_specs, mesh, manual):
    """The global outputs from the per-device ones (a leading dimension per manual axis)."""
    out_per_leaf = _specs_per_leaf(out_specs, tree_util.tree_unflatten(tree, list(outs)), "out_specs")
    assembled = [_assemble(o, spec, mesh, manual) for o, spec in zip(outs, out_per_leaf)]
    if core._no_trace_active():   # as JAX reports: placed over the mesh by out_specs
        assembled = [attach(o, NamedSharding(mesh, spec)) for o, spec in zip(assembled, out_per_leaf)]
    elif sharding_types.has_explicit_axes(mesh):   # typed by out_specs, as JAX's
        assembled = [sharding_types.retype(o, NamedSharding(mesh, spec)) for o, spec in zip(assembled, out_per_leaf)]
    return tree_util.tree_unflatten(tree, assembled)


def _run_eager(f, body, stacked, used, mesh, manual, out_specs, check, out_tree):
    """Outside any transformation: the body runs once, op by op, with every mesh axis a named
    vmap axis and its values ShardMapTracers (numjax/shmap_eager.py: they print per device and
    carry their vma sets, which the replication check then reads)."""
    from .shmap_eager import run_body
    from .vmap_api import vmap
    typed_vma, batched_vma = [], []

    def innermost(*blocks):
        outs, vmas = run_body(body, blocks, [frozenset(u) for u in used], mesh, manual)
        typed_vma[:] = vmas
        mains = vma._mains(manual)
        batched_vma[:] = [vma.value_vma(o, mains) for o in outs]
        return tuple(outs)
    run = innermost
    for axis in reversed(manual):
        run = vmap(run, in_axes=tuple(0 if axis in u else None for u in used), out_axes=0, axis_name=axis,
                   axis_size=mesh.shape[axis])
    if not check:
        return run(*stacked)
    with vma.checked_axes(manual), vma.probe() as backward:
        outs = run(*stacked)
    # A body that differentiates is checked on its outputs' batching, as the traced path does
    # (_check_vma_outputs); otherwise on the vma types inferred while it ran.
    _raise_if_varying_unnamed(f, mesh, manual, out_specs, out_tree[-1],
                              batched_vma if backward[0] else typed_vma)
    return outs


def _run_traced(f, body, stacked, used, mesh, manual, out_specs, check, out_tree, checked, in_tree):
    """Under a transformation (or across processes): the outermost mesh axis is mapped with
    pmap (vmap under a transformation), the others with vmap over the named axis. The body is
    traced once: the replication check's trace is what runs, unless the body differentiates."""
    differentiates, per_device = False, body
    if check:
        key = (in_tree, tuple(core.get_aval(x) for x in stacked), tuple(map(frozenset, used)), mesh)
        if key not in checked:
            checked[key], closed = _check_replication(f, body, stacked, used, mesh, manual, out_specs, out_tree)
            if not checked[key]:
                per_device = _replaying(closed, out_tree)
        differentiates = checked[key]
    out_vma = []

    def run(*blocks):
        outs = per_device(*blocks)
        if differentiates:
            mains = vma._mains(manual)
            out_vma[:] = [vma.value_vma(o, mains) for o in outs]
        return tuple(outs)
    # A body that differentiates gets JAX's vma semantics (numjax/_src/vma.py), which need
    # every mesh axis run as a named vmap axis: each process then evaluates every block.
    for level, axis in reversed(list(enumerate(manual))):
        in_axes = tuple(0 if axis in u else None for u in used)
        run = _map(run, in_axes, axis, mesh.shape[axis], outermost=level == 0 and not differentiates)
    outer_mapped = bool(manual) and any(manual[0] in u for u in used)
    if differentiates:
        with vma.checked_axes(manual):
            outs = run(*stacked)
        _check_vma_outputs(f, mesh, manual, out_specs, out_tree[-1], out_vma)
        return outs
    if outer_mapped and _across_processes():
        return _run_local_rows(run, stacked, used, mesh, manual[0])
    return run(*stacked)


def _replaying(closed, out_tree):
    """The body as its checked trace ``closed`` (its output tree is out_tree's last)."""
    tree = out_tree[-1]

    def per_device(*blocks):
        out_tree.append(tree)
        return _eval_body_jaxpr(closed, blocks)
    return per_device


def _eval_body_jaxpr(closed, blocks):
    """The body's checked trace run again on ``blocks``, with each collective bound again where
    its axis is (the trace saw the axes bound as pmap's; here they may be vmap axes, whose
    collectives must be lifted into that vmap)."""
    from .jaxpr import eval_jaxpr
    from .lax import parallel

    def bind_eqn(eqn, ins):
        if eqn.primitive is parallel.axis_index_p:
            return parallel.axis_index(eqn.params["axis_name"])
        if eqn.primitive in parallel.COLLECTIVES:
            return parallel._bind_lifted(eqn.primitive, *ins, **eqn.params)
        return eqn.primitive.bind(*ins, **eqn.params)
    return eval_jaxpr(closed.jaxpr, closed.consts, *blocks, bind_eqn=bind_eqn)


def _check_vma_outputs(f, mesh, manual, out_specs, tree, out_vma):
    """The replication check on the outputs' vma sets from the vmap run."""
    _raise_if_varying_unnamed(f, mesh, manual, out_specs, tree, out_vma)


def _raise_if_varying_unnamed(f, mesh, manual, out_specs, tree, varying):
    """JAX's replication error for an output that varies over a manual axis its spec omits."""
    specs = _specs_per_leaf(out_specs, tree_util.tree_unflatten(tree, list(range(len(varying)))), "out_specs")
    for spec, axes in zip(specs, varying):
        if spec is None:
            continue
        named = {a for e in spec for a in _axes_of(e)}
        missing = [a for a in manual if a in axes and a not in named]
        if missing:
            _raise_unreplicated(f, mesh, spec, missing, [a for a in manual if a not in named and a not in axes])


def _check_replication(f, body, stacked, used, mesh, manual, out_specs, out_tree):
    """JAX's check_vma error for an output whose out_spec leaves out a mesh axis it varies over.

    The per-device function is traced with every mesh axis bound (as pmap traces it); the mesh
    axes each value varies over are then inferred as JAX's varying-manual-axes types do: an
    input varies over the axes its in_spec names, psum/pmax/pmin give values equal across
    their axes, all_gather/ppermute/psum_scatter/all_to_all/axis_index give varying ones, and
    any other operation varies over the union of its operands' axes.

    Returns whether the body differentiates (runs a backward pass): such a body is checked on
    its vmap run instead (_check_vma_outputs), where JAX's vma semantics of reverse mode apply;
    and the traced body (a ClosedJaxpr), which the run evaluates when it does not.
    """
    import contextlib
    from .interpreters import partial_eval as pe
    from .lax import parallel
    avals = [core.get_aval(x) for x in stacked]
    block_avals = [a.update(shape=a.shape[len([m for m in manual if m in u]):]) for a, u in zip(avals, used)]
    with contextlib.ExitStack() as stack:
        for axis in manual:
            stack.enter_context(parallel.bind_pmap_axis(axis, mesh.shape[axis]))
        probe = stack.enter_context(vma.probe())
        closed = pe.trace_to_jaxpr(body, block_avals)
    tree = out_tree[-1]
    if probe[0]:
        out_tree.pop()
        return True, closed
    varying = jaxpr_vma(closed.jaxpr, [frozenset(u) for u in used])
    _raise_if_varying_unnamed(f, mesh, manual, out_specs, tree, varying)
    return False, closed


def _raise_unreplicated(f, mesh, spec, missing, replicated):
    inferred = (f"could only infer replication over {', '.join(repr(a) for a in replicated)}" if replicated
                else "could not infer replication over any axes")
    raise ValueError(
        f"shard_map applied to the function '{getattr(f, '__name__', f)}' was given out_specs which require "
        "replication which can't be statically inferred given the mesh:\n\n"
        f"The mesh given has shape {tuple(mesh.axis_sizes)} with corresponding axis names {mesh.axis_names}."
        f"\n\nout_specs is {spec!r} which implies that the corresponding output value is replicated across "
        f"mesh axis {', '.join(repr(a) for a in missing)}, but {inferred}\n\nCheck if these output values "
        "are meant to be replicated over those mesh axes. If not, consider revising the corresponding "
        "out_specs entries. If so, consider disabling the check by passing the check_vma=False argument "
        "to `jax.shard_map`.")


def _resolve_mesh(mesh):
    mesh = mesh if mesh is not None else current_mesh()
    if mesh is None and _state.legacy_meshes:
        mesh = _state.legacy_meshes[-1]
    if mesh is None:
        raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter into a "
                         "mesh context, or pass `mesh=` to shard_map")
    if not hasattr(mesh, "devices"):
        raise NotImplementedError(f"numjax's shard_map needs a concrete Mesh (with devices), got {mesh!r}")
    return mesh


def _across_processes():
    from .api import process_count
    return process_count() > 1 and core._no_trace_active()


def _local_rows(mesh, axis):
    """The indices along the outermost manual ``axis`` this process runs: every device of such a
    row must be one of its local devices, and the rows of process p must be the p-th block of
    equal size (the layout pmap across processes uses)."""
    from .api import process_count, process_index
    d = mesh.axis_names.index(axis)
    rows = np.moveaxis(mesh.devices, d, 0).reshape(mesh.shape[axis], -1)
    owners = [{dev.process_index for dev in row} for row in rows]
    n_proc, me = process_count(), process_index()
    per = mesh.shape[axis] // n_proc
    expected = [{i // per} for i in range(mesh.shape[axis])] if per * n_proc == mesh.shape[axis] else None
    if owners != expected:
        raise NotImplementedError(
            f"shard_map across {n_proc} processes runs the blocks of mesh axis '{axis}' (its first axis) "
            "on the processes that own them, which needs each process's devices to be one contiguous, "
            f"equal-sized block of that axis; this mesh's rows belong to processes {owners}. Build the "
            "mesh with jax.make_mesh (devices in process order) and put the axis that spans processes first.")
    return me * per, (me + 1) * per


def _run_local_rows(run, stacked, used, mesh, axis):
    """Across processes (each holding the global values): run this process's rows of the
    outermost axis (pmap's collectives go across processes) and all-gather the outputs."""
    from . import numpy as jnp
    from ._src import mpi
    lo, hi = _local_rows(mesh, axis)
    local = [x[lo:hi] if axis in u else x for x, u in zip(stacked, used)]
    outs = run(*local)
    gathered = []
    for o in outs:
        everyone = mpi.allgather(np.asarray(o), what=f"shard_map gathering its outputs over mesh axis '{axis}'")
        gathered.append(jnp.asarray(everyone.reshape((-1,) + everyone.shape[2:])))
    return tuple(gathered)


def _is_spec(s):
    return s is None or isinstance(s, PartitionSpec)


def _specs_per_leaf(specs, tree, what):
    if isinstance(specs, PartitionSpec):
        return [specs] * len(tree_util.leaves_traced(tree))
    out = []
    try:
        tree_util.tree_map(lambda s, sub: out.extend([s] * len(tree_util.leaves_traced(sub))), specs, tree,
                           is_leaf=_is_spec)
    except ValueError as err:
        raise ValueError(f"shard_map {what} must be a PartitionSpec or a pytree prefix of the "
                         f"{'arguments' if what == 'in_specs' else 'outputs'} with PartitionSpec leaves: "
                         f"{err}") from None
    return out


def _in_specs_per_leaf(in_specs, args, leaves, mesh, manual):
    """One spec per argument leaf; None marks a leaf passed to the body as it is (JAX: static)."""
    if in_specs is Infer:
        return [_inferred_spec(x, mesh, manual) for x in leaves] if _all_explicit(mesh, manual) else \
            _raise_not_inferable(mesh, manual)
    if in_specs is None:
        return [None] * len(leaves)
    if not isinstance(in_specs, (PartitionSpec, tuple, list)):
        raise TypeError(f"shard_map in_specs must be a PartitionSpec or a tuple of them, got {in_specs!r}")
    return _specs_per_leaf(in_specs if isinstance(in_specs, PartitionSpec) else tuple(in_specs), args, "in_specs")


def _all_explicit(mesh, manual):
    return all(mesh.axis_types[mesh.axis_names.index(a)] is AxisType.Explicit for a in manual)


def _raise_not_inferable(mesh, manual):
    types = ", ".join(str(mesh.axis_types[mesh.axis_names.index(a)]) for a in manual)
    raise TypeError("shard_map in_specs argument must be a pytree of `jax.sharding.PartitionSpec` instances, "
                    f"but it was `None` when axis_names={frozenset(manual)} are of type {types}. in_specs "
                    "can be left out only on a mesh whose manual axes are all Explicit (each argument's "
                    "spec is then read from its sharding type); give in_specs, e.g. "
                    "in_specs=(P('x'), P()), one PartitionSpec per argument.")


def _inferred_spec(x, mesh, manual):
    """JAX's in_spec for an argument left out of in_specs: its sharding type's spec, keeping
    only the manual axes (an argument without a sharding type is replicated)."""
    if isinstance(x, core.Tracer):
        sharding = getattr(core.get_aval(x), "_sharding", None)
    else:
        sharding = getattr(x, "_sharding", None)
    if sharding is None or not isinstance(sharding, NamedSharding):
        return PartitionSpec()
    kept = []
    for entry in sharding.spec:
        axes = [a if a in manual else None for a in _axes_of(entry)]
        while axes and axes[-1] is None:
            axes.pop()
        if None in axes:
            raise ValueError(f"Invalid spec: {sharding.spec!r}: its entry {entry!r} names mesh axes outside "
                             f"shard_map's axis_names {manual} before one inside them; give in_specs "
                             "explicitly.")
        kept.append(None if not axes else axes[0] if not isinstance(entry, tuple) else tuple(axes))
    return PartitionSpec(*kept)


def _check_block(f, mesh, manual, x, spec, i):
    shape = core.get_aval(x).shape
    if len(spec) > len(shape):
        raise ValueError(f"shard_map applied to {getattr(f, '__name__', f)} got in_specs {spec!r} of length "
                         f"{len(spec)} for args[{i}] of rank {len(shape)} (shape {shape}); the spec can "
                         "name at most one entry per dimension")
    for d, entry in enumerate(spec):
        for a in _axes_of(entry):
            if a not in mesh.axis_names:
                raise ValueError(f"Resource axis: {a} of {spec!r} is not found in mesh: {mesh.axis_names}.")
            if a not in manual:
                raise ValueError(f"shard_map in_specs {spec!r} names mesh axis '{a}', which is not one "
                                 f"of its axis_names {manual}")
        n = math.prod(mesh.shape[a] for a in _axes_of(entry))
        if shape[d] % n:
            names = _axes_of(entry)
            raise ValueError(
                f"shard_map applied to the function '{getattr(f, '__name__', f)}' was given argument arrays "
                "with axis sizes that are not evenly divisible by the corresponding mesh axis sizes:\n\n"
                f"The mesh given has shape {tuple(mesh.axis_sizes)} with corresponding axis names "
                f"{mesh.axis_names}.\n\nthe passed args[{i}] of shape {shape} corresponds to in_specs of "
                f"value {spec!r}, which maps array axis {d} (of size {shape[d]}) to mesh axis "
                f"{names[0] if len(names) == 1 else names} (of size {n}), but {n} does not evenly divide "
                f"{shape[d]}\n\nPad the input or change the mesh so each block has the same size.")


def _check_explicit_input(mesh, manual, x, spec):
    """As JAX: when every mesh axis is manual and Explicit, an input must already be placed as
    its in_spec says."""
    from .api import ShapeDtypeStruct
    if set(manual) != set(mesh.axis_names) or not _all_explicit(mesh, manual):
        return
    aval = core.get_aval(x)
    have = getattr(x, "_sharding", None)
    ndim = len(aval.shape)
    have_spec = _padded(have.spec, ndim) if have is not None and have.mesh == mesh else (None,) * ndim
    # A traced input's placement is not known here (numjax's avals carry no sharding).
    if have_spec != _padded(spec, ndim) and not isinstance(x, core.Tracer):
        shown = ShapeDtypeStruct(aval.shape, aval.dtype)
        raise ValueError(f"in_specs passed to shard_map: {spec!r} does not match the specs of the input: "
                         f"{PartitionSpec(*have_spec)!r} for arg: {shown.dtype.name}"
                         f"[{','.join(map(str, shown.shape))}]. "
                         "`in_specs` is an optional argument so you can omit specifying it and shard_map "
                         "will infer the in_specs from the arguments. If you want to reshard your inputs, "
                         "you can use `jax.reshard` on the arguments and then pass those args to shard_map.")


def _stack_blocks(x, spec, mesh, manual):
    """``x`` as (one dimension per mesh axis ``spec`` uses, in mesh order, *block shape)."""
    from . import numpy as jnp
    shape = core.get_aval(x).shape
    spec = _padded(spec, len(shape))
    new_shape, axis_pos, block_pos = [], {}, []
    for n, entry in zip(shape, spec):
        axes = _axes_of(entry)
        for a in axes:
            axis_pos[a] = len(new_shape)
            new_shape.append(mesh.shape[a])
        block_pos.append(len(new_shape))
        new_shape.append(n // math.prod(mesh.shape[a] for a in axes))
    order = [axis_pos[a] for a in manual if a in axis_pos] + block_pos
    x = jnp.asarray(x)
    if not axis_pos:
        return x
    return jnp.transpose(jnp.reshape(x, new_shape), order)


def _map(fun, in_axes, axis, size, outermost):
    # pmap needs a mapped input for its size; under a transformation pmap is vmap anyway (and
    # one across processes refuses to run there: each process then evaluates every row).
    if outermost and any(a is not None for a in in_axes) and core._no_trace_active():
        from .pmap_api import pmap
        return pmap(fun, axis_name=axis, in_axes=in_axes, out_axes=0)
    from .vmap_api import vmap
    return vmap(fun, in_axes=in_axes, out_axes=0, axis_name=axis, axis_size=size)


def _assemble(out, spec, mesh, manual):
    """The global output from ``out`` (one leading dimension per manual mesh axis, then the
    block) laid out by ``spec``."""
    from . import numpy as jnp
    if spec is None:
        raise ValueError("shard_map out_specs entries must be PartitionSpecs (P() for a replicated output)")
    named = [a for e in spec for a in _axes_of(e)]
    k = len(manual)
    block_rank = out.ndim - k
    if len(spec) > block_rank:
        raise ValueError(f"shard_map out_specs {spec!r} has {len(spec)} entries but the function's "
                         f"output has rank {block_rank}")
    for a in named:
        if a not in manual:
            raise ValueError(f"shard_map out_specs {spec!r} names '{a}', which is not a mesh axis of "
                             f"{manual}")
    index = tuple(slice(None) if a in named else 0 for a in manual)   # device 0's along the others
    out = out[index]
    kept = [a for a in manual if a in named]
    spec = _padded(spec, block_rank)
    order, final_shape = [], []
    for d, entry in enumerate(spec):
        axes = _axes_of(entry)
        order += [kept.index(a) for a in axes] + [len(kept) + d]
        final_shape.append(out.shape[len(kept) + d] * math.prod(mesh.shape[a] for a in axes))
    return jnp.reshape(jnp.transpose(out, order), final_shape)

"""vmap: argument handling (in_axes/out_axes pytree prefixes, sizes) around interpreters/batching."""
import functools

from . import core, tree_util
from .interpreters import batching
from .numpy._util import asarray_leaf


def _leaf(x):
    return x if isinstance(x, core.Tracer) else asarray_leaf(x)


def _broadcast_prefix(prefix, tree, what):
    """One axis spec per leaf of ``tree``, from a pytree-prefix spec (``None`` is a leaf here)."""
    p_leaves, p_tree = tree_util.tree_flatten(prefix, is_leaf=lambda x: x is None)
    try:
        subtrees = tree_util._flatten_up_to(p_tree, tree)
    except ValueError as err:
        raise ValueError(f"vmap {what} specification must be a tree prefix of the corresponding value, "
                         f"got specification {prefix} for value tree {tree_util.tree_structure(tree)}.") from err
    out = []
    for spec, sub in zip(p_leaves, subtrees):
        out.extend([spec] * len(tree_util.tree_leaves(sub)))
    return out


def _check_axis_spec(spec, what):
    for leaf in tree_util.tree_leaves(spec, is_leaf=lambda x: x is None):
        if leaf is not None and not isinstance(leaf, int):
            raise TypeError(f"vmap {what} must be an int, None, or a tuple of entries corresponding to the "
                            f"positional arguments passed to the function, but got {spec}.")


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    _check_axis_spec(in_axes, "in_axes")
    _check_axis_spec(out_axes, "out_axes")

    @functools.wraps(fun)
    def vmapped(*args, **kwargs):
        axes = in_axes
        if isinstance(axes, tuple) and len(axes) != len(args):
            raise ValueError(f"vmap in_axes must be an int, None, or a tuple of entries corresponding to "
                             f"the positional arguments passed to the function, but got len(in_axes)="
                             f"{len(axes)}, len(args)={len(args)}")
        if not isinstance(axes, tuple):
            axes = (axes,) * len(args)
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        specs = (_broadcast_prefix(axes, args, "in_axes")
                 + [0] * len(tree_util.tree_leaves(kwargs)))
        leaves = [_leaf(x) for x in leaves]
        dims = [_normalize_in_axis(d, x) for d, x in zip(specs, leaves)]
        size = _axis_size(fun, args, leaves, dims, axis_size)
        out_tree_box = []

        def flat_fun(*flat):
            a, kw = tree_util.tree_unflatten(in_tree, flat)
            out = fun(*a, **kw)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            out_tree_box.append((out, out_tree))
            return [_leaf(o) for o in out_leaves]

        outs, out_dims = batching.batch_flat(flat_fun, size, axis_name, leaves, dims)
        out_struct, out_tree = out_tree_box[0]
        out_specs = _broadcast_prefix(out_axes, out_struct, "out_axes")
        outs = [batching.matchaxis(o, d, _normalize_out_axis(s, o, d), size)
                for o, d, s in zip(outs, out_dims, out_specs)]
        return tree_util.tree_unflatten(out_tree, outs)
    return vmapped


def _normalize_in_axis(d, x):
    if d is None:
        return None
    nd = core.get_aval(x).ndim
    if not -nd <= d < nd:
        raise ValueError(f"vmap was requested to map its argument along axis {d}, which implies that its "
                         f"rank should be at least {d + 1 if d >= 0 else -d}, but is only {nd} "
                         f"(its shape is {core.get_aval(x).shape})")
    return d % nd


def _normalize_out_axis(spec, out, dim):
    if spec is None:
        return None
    nd = core.get_aval(out).ndim + (dim is None)
    if not -nd <= spec < nd:
        raise ValueError(f"axis {spec} is out of bounds for array of dimension {nd}")
    return spec % nd


def _axis_size(fun, args, leaves, dims, axis_size):
    sizes = {core.get_aval(x).shape[d] for x, d in zip(leaves, dims) if d is not None}
    if axis_size is not None:
        sizes.add(axis_size)
    if not sizes:
        raise ValueError("vmap must have at least one non-None value in in_axes")
    if len(sizes) > 1:
        from .interpreters.partial_eval import arg_names_of
        names = arg_names_of(fun, len(args))
        lines = []
        arg_of_leaf = []
        for i, a in enumerate(args):
            arg_of_leaf.extend([names[i] if i < len(names) else f"args[{i}]"] * len(tree_util.tree_leaves(a)))
        for k, (x, d) in enumerate(zip(leaves, dims)):
            if d is None:
                continue
            aval = core.get_aval(x)
            name = arg_of_leaf[k] if k < len(arg_of_leaf) else "kwargs"
            lines.append(f"  * one axis had size {aval.shape[d]}: axis {d} of argument {name} of type "
                         f"{aval.str_short(True).replace('f32', 'float32').replace('i32', 'int32')}")
        raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n" + ";\n".join(lines))
    return sizes.pop()

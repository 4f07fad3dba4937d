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
        _check_prefix(p_tree, tree)
        subtrees = tree_util._flatten_up_to(p_tree, tree)
    except ValueError as err:
        raise ValueError(f"vmap {what} specification must be a tree prefix of the corresponding value, "
                         f"got specification {prefix} for value tree {tree_util.tree_structure(tree)}.") from err
    out = []
    for spec, sub in zip(p_leaves, subtrees):
        for leaf in tree_util.tree_leaves(sub):
            out.extend([_data_axis(spec, leaf)] * len(tree_util.leaves_traced(leaf)))
    return out


def _data_axis(spec, leaf):
    """The axis spec for the traced data of ``leaf``: a typed key's data has one trailing
    axis (the key words) more than the key array, so negative axes count from before it."""
    from ._prng import PRNGKeyArray
    if isinstance(leaf, PRNGKeyArray) and isinstance(spec, int) and spec < 0:
        return spec - 1
    return spec


def _check_prefix(treedef, tree):
    """``treedef`` is a prefix of ``tree``: same node types *and* node metadata (dict keys)."""
    if treedef.node is None:
        return
    nt = tree_util._node_type(tree)
    if nt is None or nt.from_iter is not treedef.node.from_iter:
        raise ValueError(f"node type mismatch: expected {treedef}, got {tree!r}")
    children, aux = nt.to_iter(tree)
    if tree_util._hashable(aux) != tree_util._hashable(treedef.aux) or len(children) != len(treedef.children()):
        raise ValueError(f"node metadata mismatch: {treedef.aux!r} != {aux!r}")
    for c, sub in zip(children, treedef.children()):
        _check_prefix(sub, c)


def _leaf_paths(tree):
    """JAX-style key strings (``['a'][0]``) of the leaves of ``tree``, in flattening order."""
    nt = tree_util._node_type(tree)
    if nt is None:
        return [""]
    children, aux = nt.to_iter(tree)
    if isinstance(tree, dict):
        keys = [f"[{k!r}]" for k in aux]
    elif isinstance(tree, tuple) and hasattr(tree, "_fields"):
        keys = [f".{k}" for k in tree._fields]
    else:
        keys = [f"[{i}]" for i in range(len(children))]
    return [k + p for k, c in zip(keys, children) for p in _leaf_paths(c)]


def _check_axis_spec(spec, what):
    for leaf in tree_util.tree_leaves(spec, is_leaf=lambda x: x is None):
        if leaf is not None and not isinstance(leaf, int):
            raise TypeError(f"vmap {what} must be an int, None, or a tuple of entries corresponding to the "
                            f"positional arguments passed to the function, but got {spec}.")


def _check_args(leaves):
    from .api_util import is_jax_value
    for x in leaves:
        if not is_jax_value(x):
            raise TypeError(f"Argument {x!r} of type {type(x)} is not a valid JAX type: every argument of "
                            "a vmapped function is an array or a pytree of arrays. Close over other "
                            "values (e.g. with functools.partial) instead of passing them.")


def _check_output(leaf):
    from .api_util import is_jax_value
    if not is_jax_value(leaf):
        raise TypeError(f"Output from batched function {leaf!r} with type {type(leaf)} is not a valid "
                        "JAX type: a vmapped function must return arrays, numbers or pytrees of them.")


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
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
        leaves, in_tree = tree_util.flatten_traced((args, kwargs))
        specs = (_broadcast_prefix(axes, args, "in_axes")
                 + [0] * len(tree_util.leaves_traced(kwargs)))
        _check_args(leaves)
        leaves = [_leaf(x) for x in leaves]
        dims = [_normalize_in_axis(d, x) for d, x in zip(specs, leaves)]
        size = _axis_size(fun, args, kwargs, leaves, specs, dims, axis_size)
        out_tree_box = []

        def flat_fun(*flat):
            a, kw = tree_util.tree_unflatten(in_tree, flat)
            out = fun(*a, **kw)
            out_leaves, out_tree = tree_util.flatten_traced(out)
            out_tree_box.append((out, out_tree))
            for o in out_leaves:
                _check_output(o)
            return [_leaf(o) for o in out_leaves]

        outs, out_dims = batching.batch_flat(flat_fun, size, axis_name, leaves, dims)
        out_struct, out_tree = out_tree_box[0]
        out_specs = _broadcast_prefix(out_axes, out_struct, "out_axes")
        for k, (d, s) in enumerate(zip(out_dims, out_specs)):
            if s is None and d is not batching.not_mapped:
                path = _leaf_paths(tree_util.tree_unflatten(out_tree, range(len(outs))))[k]
                raise ValueError(f"at vmap out_axes{path}, got axis spec None but output was batched on "
                                 f"axis {d}")
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


def _axis_size(fun, args, kwargs, leaves, specs, dims, axis_size):
    """The mapped size, or JAX's errors when there is none or sizes disagree."""
    if not leaves:
        if axis_size is not None:
            return axis_size
        raise ValueError("vmap wrapped function must be passed at least one argument containing an array or "
                         f"axis_size must be specified, got empty *args={args} and **kwargs={kwargs}")
    mapped = [None if d is None else core.get_aval(x).shape[d] for x, d in zip(leaves, dims)]
    sizes = {m for m in mapped if m is not None}
    if axis_size is not None:
        sizes.add(axis_size)
    if len(sizes) == 1:
        return sizes.pop()
    if not sizes:
        raise ValueError("vmap must have at least one non-None value in in_axes or axis_size must be "
                         "specified")
    import collections
    import inspect
    try:
        params = list(inspect.signature(fun).bind(*args, **kwargs).signature.parameters)
    except (TypeError, ValueError):
        params = None

    def arg_name(i, path):
        if params is None or i >= len(params):
            return f"args[{i}]{path}"
        return f"argument {params[i]}{path}"
    where = [f"{arg_name(i, p)}" for i, a in enumerate(args) for p in _leaf_paths(a)]
    where += [f"kwargs{p}" for p in _leaf_paths(kwargs)]
    where = [f"{w} of type {core.get_aval(x).str_short()}" for w, x in zip(where, leaves)]
    counts = collections.Counter(m for m in mapped if m is not None).most_common()

    def first(sz):
        return mapped.index(sz)
    lines = [] if axis_size is None else [f"  * the `axis_size` argument was {axis_size};\n"]
    for k, (sz, ct) in enumerate(counts):
        i = first(sz)
        if ct == 1:
            lines.append(f"  * one axis had size {sz}: axis {specs[i]} of {where[i]};\n")
        else:
            lead = "most" if k == 0 else "some"
            lines.append(f"  * {lead} axes ({ct} of them) had size {sz}, e.g. axis {specs[i]} of {where[i]};\n")
    raise ValueError(("vmap got inconsistent sizes for array axes to be mapped:\n" + "".join(lines))[:-2])

"""Helpers shared by the transformation wrappers (jit, pmap, checkpoint, ...)."""
from . import core, tree_util


def as_leaf(x):
    """A pytree leaf as something primitives accept: tracers pass, the rest become Arrays."""
    if isinstance(x, core.Tracer):
        return x
    from .numpy._util import asarray_leaf
    return asarray_leaf(x)


def flatten_fun_nokwargs(fun, in_tree):
    """``fun`` (called on the pytrees ``in_tree`` describes) as a function of flat leaves.

    Returns the flat function and a one-element list whose item is set to the output tree
    each time it runs.
    """
    out_tree = [None]

    def flat(*leaves):
        out_leaves, out_tree[0] = tree_util.flatten_traced(fun(*tree_util.tree_unflatten(in_tree, leaves)))
        return [as_leaf(o) for o in out_leaves]
    return flat, out_tree


def flatten_fun(fun, args, static, in_tree):
    """Like :func:`flatten_fun_nokwargs`, where ``in_tree`` describes only the non-static
    arguments: positions in ``static`` are taken unchanged from ``args``."""
    def with_statics(*dyn_args):
        dyn = iter(dyn_args)
        return fun(*[args[i] if i in static else next(dyn) for i in range(len(args))])
    return flatten_fun_nokwargs(with_statics, in_tree)

"""Helpers shared by the transformation wrappers (jit, pmap, checkpoint, ...)."""
from . import core, tree_util


def as_leaf(x):
    """A pytree leaf as something primitives accept: tracers pass, the rest become Arrays."""
    if isinstance(x, core.Tracer):
        return x
    from .numpy._util import asarray_leaf
    return asarray_leaf(x)


def flatten_fun(fun, args, static, in_tree):
    """``fun`` as a function of the flat leaves of its non-static arguments.

    ``static`` holds the positions of ``args`` passed through unchanged. Returns the flat
    function and a list that receives the output tree when it runs.
    """
    out_tree = []

    def flat(*leaves):
        dyn = iter(tree_util.tree_unflatten(in_tree, leaves))
        full = [args[i] if i in static else next(dyn) for i in range(len(args))]
        out_leaves, tree = tree_util.tree_flatten(fun(*full))
        out_tree.append(tree)
        return [as_leaf(o) for o in out_leaves]
    return flat, out_tree

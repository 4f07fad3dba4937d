"""Helpers shared by the transformation wrappers (jit, pmap, checkpoint, ...)."""
import numpy as np

from . import core, dtypes, tree_util


def as_leaf(x):
    """A pytree leaf as something primitives accept: tracers pass, the rest become Arrays."""
    if isinstance(x, core.Tracer):
        return x
    from .numpy._util import asarray_leaf
    return asarray_leaf(x)


def is_jax_value(x):
    """Whether ``x`` can be a JAX array leaf: an array, tracer, Python or NumPy number of a
    dtype JAX has (not a string, an object, None, ...)."""
    if type(x) in (int, float, complex, bool) or isinstance(x, core.Tracer):
        return True
    if isinstance(x, (np.ndarray, np.generic)):
        return dtypes.is_jax_dtype(x.dtype)
    return getattr(x, "aval", None) is not None


def fun_description(fun):
    """``name at file:line``, as JAX names a traced function in its errors."""
    from .interpreters import partial_eval as pe
    info = pe.debug_info(fun, "")
    return f"{info['fun_name']} at {info['fun_src']}"


def check_output_leaf(x, fun, what):
    """JAX's TypeError for a traced function returning a non-JAX value (a string, ...)."""
    if not is_jax_value(x):
        raise TypeError(f"function {fun_description(fun)} traced for {what} returned a value of type "
                        f"{type(x)}, which is not a valid JAX type. Return only arrays, numbers and "
                        f"pytrees of them (return other values through closures or static outputs).")


def flatten_fun_nokwargs(fun, in_tree, traced_for=None):
    """``fun`` (called on the pytrees ``in_tree`` describes) as a function of flat leaves.

    Returns the flat function and a one-element list whose item is set to the output tree
    each time it runs. ``traced_for`` = (the user's function, transformation name) makes a
    non-JAX output (a string, ...) fail with JAX's message naming that function.
    """
    out_tree = [None]

    def flat(*leaves):
        out_leaves, out_tree[0] = tree_util.flatten_traced(fun(*tree_util.tree_unflatten(in_tree, leaves)))
        if traced_for is not None:
            for o in out_leaves:
                check_output_leaf(o, *traced_for)
        return [as_leaf(o) for o in out_leaves]
    return flat, out_tree


def flatten_fun(fun, args, static, in_tree):
    """Like :func:`flatten_fun_nokwargs`, where ``in_tree`` describes only the non-static
    arguments: positions in ``static`` are taken unchanged from ``args``."""
    def with_statics(*dyn_args):
        dyn = iter(dyn_args)
        return fun(*[args[i] if i in static else next(dyn) for i in range(len(args))])
    return flatten_fun_nokwargs(with_statics, in_tree)

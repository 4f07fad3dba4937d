"""jax.debug: printing and callbacks that work inside transformed and compiled functions.

``print`` and ``callback`` are primitives (numjax/lax/callback.py): under jit the compiled
program calls back into Python when it reaches them, with the values of that moment.

``breakpoint`` is a small pdb-based stand-in for JAX's debugger: when the program reaches it,
pdb opens on a namespace holding the calling function's local variables, the arrays among them
with their run-time values (``p x``, ``pp x.shape``; ``c`` continues).  JAX's ``jdb`` also lets
one move up and down the traced frames; this one shows only the calling frame.
"""
import inspect
import pdb
import sys

from . import core, tree_util
from .lax.callback import debug_callback as callback
from .lax.callback import debug_print as print  # noqa: A004
from ._src.sharding_view import visualize_array_sharding, visualize_sharding

__all__ = ["breakpoint", "callback", "print", "visualize_array_sharding", "visualize_sharding"]


def _is_array(x):
    try:
        core.get_aval(x)
    except TypeError:
        return False
    return not isinstance(x, (int, float, complex, bool))


def breakpoint(*, backend=None, filter_frames=True, num_frames=None, ordered=False,  # noqa: A001
               token=None, **kwargs):
    """Opens pdb (prompt ``(Pdb)``) when the program reaches this point, on the caller's local
    variables with their run-time values.  Returns ``token`` (JAX's signature)."""
    frame = inspect.currentframe().f_back
    names, values = [], []
    statics = {}
    for name, val in frame.f_locals.items():
        leaves = tree_util.tree_leaves(val)
        if leaves and all(_is_array(x) for x in leaves):
            names.append(name)
            values.append(val)
        else:
            statics[name] = val
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}"

    def enter(*runtime_values):
        namespace = dict(statics, **dict(zip(names, runtime_values)))
        sys.stdout.write(f"Entering numjax debugger at {where}\n")
        debugger = pdb.Pdb(stdin=kwargs.get("stdin"), stdout=kwargs.get("stdout"))
        debugger.prompt = "(Pdb) "
        if kwargs.get("stdin") is not None:     # numjax extra: scripted sessions (tests)
            debugger.use_rawinput = False
        debugger.run("pass", frame.f_globals, namespace)
    callback(enter, *values, ordered=ordered)
    return token

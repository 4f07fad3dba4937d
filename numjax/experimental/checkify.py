"""numjax.experimental.checkify: run-time checks that work under jit, vmap, grad and loops.

``check(pred, msg, *fmt_args, **fmt_kwargs)`` records a failure where ``pred`` is False.
Eagerly it raises ``JaxRuntimeError`` at once; inside a staged function it is an effect
(``check_p``) that a compiled program cannot perform, so ``checkify(f)`` *functionalizes*
it: ``checkify(f)(*args)`` returns ``(Error, out)``, the error being an ordinary pytree value
(``jit(checkify(f))`` returns it) whose ``get()`` is the first failure's message.
``errors=`` also enables automatic checks (NaNs, division by zero, out-of-bounds indices).
The interpreter is ``checkify_interpreter``; the error values are ``checkify_errors``.
"""
import numpy as np

from .. import core, tree_util
from ..array import Array
from ..interpreters import partial_eval as pe
from . import checkify_automatic  # noqa: F401  (registers the automatic checks)
from .checkify_errors import (BatchedError, DivisionByZeroError, Error, ErrorEffect, FailedCheckError,
                              JaxException, JaxRuntimeError, NaNError, OOBError, assert_func, init_error)
from .checkify_interpreter import check_error_value, check_p, checkify_jaxpr

__all__ = ["Error", "ErrorCategory", "FailedCheckError", "JaxRuntimeError", "all_checks",
           "automatic_checks", "check", "check_error", "checkify", "debug_check", "div_checks",
           "float_checks", "index_checks", "nan_checks", "user_checks", "NaNError", "OOBError",
           "DivisionByZeroError", "JaxException", "BatchedError", "ErrorEffect", "check_p",
           "init_error"]

ErrorCategory = type   # JAX's alias: an error category is one of the exception classes

user_checks = frozenset({FailedCheckError})
nan_checks = frozenset({NaNError})
index_checks = frozenset({OOBError})
div_checks = frozenset({DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks


def checkify(f, errors=user_checks):
    """``f`` returning ``(Error, out)``: its checks (and the enabled automatic checks) are
    recorded in the error instead of raised."""
    errors = frozenset(errors)

    def checked_fun(*args, **kwargs):
        # The arguments are closed over, as JAX does, so non-array arguments stay Python values.
        out_tree = []

        def flat_fun():
            leaves, treedef = tree_util.flatten_traced(f(*args, **kwargs))
            out_tree.append(treedef)
            return leaves
        closed = pe.trace_to_jaxpr(flat_fun, [])
        error, outs = checkify_jaxpr(closed.jaxpr, closed.consts, errors, init_error)
        return error, tree_util.tree_unflatten(out_tree[-1], outs)
    checked_fun.__name__ = f"checkify({getattr(f, '__name__', 'fun')})"
    checked_fun.__wrapped__ = f
    return checked_fun


def check(pred, msg, *fmt_args, debug=False, **fmt_kwargs):
    """Fail with ``msg.format(*fmt_args, **fmt_kwargs)`` where the scalar bool ``pred`` is False.
    The format arguments are arrays (traced ones too): the message shows their run-time values."""
    _check(pred, msg, debug, fmt_args, fmt_kwargs)


def debug_check(pred, msg, *fmt_args, **fmt_kwargs):
    """A ``check`` that only fails under ``checkify``; elsewhere it does nothing."""
    _check(pred, msg, True, fmt_args, fmt_kwargs)


def _check(pred, msg, debug, fmt_args, fmt_kwargs):
    from .. import numpy as jnp
    if not _is_scalar_pred(pred):
        raise TypeError(f"{'debug_check' if debug else 'check'} takes a scalar pred as argument, got {pred}")
    for arg in tree_util.leaves_traced((fmt_args, fmt_kwargs)):
        if not isinstance(arg, (Array, core.Tracer, np.ndarray)):
            raise TypeError("Formatting arguments to checkify.check need to be PyTrees of arrays, but "
                            f"got {arg!r} of type {type(arg)}.")
    new_error = FailedCheckError(None, msg, *fmt_args, **fmt_kwargs)
    error = assert_func(init_error, jnp.logical_not(pred), new_error)
    check_error_value(error, debug=debug)


def _is_scalar_pred(pred):
    if isinstance(pred, bool):
        return True
    return (isinstance(pred, (Array, core.Tracer)) and core.get_aval(pred).shape == ()
            and core.get_aval(pred).dtype == np.bool_)


def check_error(error):
    """Raise the failure ``error`` holds, if any; under ``checkify`` it is recorded again."""
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes an Error as argument, got type {type(error)} instead.")
    check_error_value(error)

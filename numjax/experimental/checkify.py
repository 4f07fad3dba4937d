"""numjax.experimental.checkify: user checks (``check``/``checkify``) on concrete values.

Only eager (concrete) predicates are supported: a ``check`` on a traced value raises
NotImplementedError instead of silently passing, because numjax does not yet thread an
error value through jit/vmap as JAX's checkify does.
"""
import contextlib

import numpy as np

from .. import core

__all__ = ["Error", "ErrorCategory", "FailedCheckError", "JaxRuntimeError", "all_checks",
           "automatic_checks", "check", "check_error", "checkify", "div_checks",
           "float_checks", "index_checks", "nan_checks", "user_checks"]


class JaxRuntimeError(ValueError):
    """A failed check (as in JAX, a ValueError, unlike ``jax.errors.JaxRuntimeError``)."""


class ErrorCategory:
    """Base of the error kinds ``checkify(errors=...)`` selects."""


class FailedCheckError(ErrorCategory):
    pass


class NaNError(ErrorCategory):
    pass


class OOBError(ErrorCategory):
    pass


class DivisionByZeroError(ErrorCategory):
    pass


user_checks = frozenset({FailedCheckError})
nan_checks = frozenset({NaNError})
index_checks = frozenset({OOBError})
div_checks = frozenset({DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks


class Error:
    """The outcome of a checkified call: ``get()`` is the first failure message or None."""

    def __init__(self, message=None):
        self._message = message

    def get(self):
        return self._message

    def throw(self):
        if self._message is not None:
            raise JaxRuntimeError(self._message)

    def __repr__(self):
        return f"Error({self._message!r})"


_collectors = []  # failure lists of the enclosing checkify calls, innermost last


def _format(msg, args, kwargs):
    values = [np.asarray(a) for a in args]
    named = {k: np.asarray(v) for k, v in kwargs.items()}
    return msg.format(*values, **named)


def check(pred, msg, *fmt_args, **fmt_kwargs):
    """Fail with ``msg`` (formatted with the args) where ``pred`` is False."""
    if isinstance(pred, core.Tracer):
        raise NotImplementedError(
            "numjax.experimental.checkify.check: the predicate is a traced value; numjax only "
            "supports checks on concrete values (call it outside jit/vmap)")
    if bool(np.all(np.asarray(pred))):
        return
    message = _format(msg, fmt_args, fmt_kwargs) + " (`check` failed)"
    if not _collectors:
        raise JaxRuntimeError(message)
    if not _collectors[-1]:
        _collectors[-1].append(message)


def check_error(error):
    """Raise the error ``error`` carries, if any."""
    error.throw()


@contextlib.contextmanager
def _collect():
    failures = []
    _collectors.append(failures)
    try:
        yield failures
    finally:
        _collectors.pop()


def checkify(fun, errors=user_checks):
    """Return ``fun`` as ``(Error, out)``: the first failed user check is returned, not raised."""
    def checked(*args, **kwargs):
        with _collect() as failures:
            out = fun(*args, **kwargs)
        return Error(failures[0] if failures else None), out
    return checked

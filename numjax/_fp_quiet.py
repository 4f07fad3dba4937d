"""numpy on user data without numpy's floating-point RuntimeWarnings.

JAX computes ``inf - inf``, ``inf * 0`` and overflows silently (NaN, inf), as XLA does; numpy
warns unless its error state says "ignore".  ``np.errstate(all="ignore")`` builds that state
on every entry (about 0.7 us, more than a small eager ``x + y`` costs).  Here the state is
built once, in a ``contextvars.Context`` of its own, and ``call(fn, *args)`` runs ``fn`` in
that context (``Context.run``: some 20 ns).  A context can be entered by one thread at a
time: a thread finding it busy swaps the prepared state into its own context instead.  Should
numpy's internals move, everything falls back to ``np.errstate``.

``call(fn, *args)`` for the hottest paths; ``quietly(fn)`` wraps a function; ``quiet()`` is a
context manager.
"""
import contextvars
import functools

import numpy as np

try:
    from numpy._core.umath import _extobj_contextvar, _make_extobj
    _IGNORE_ALL = _make_extobj(all="ignore")
except (ImportError, TypeError, AttributeError):   # another numpy layout
    _extobj_contextvar = _IGNORE_ALL = None


def _quiet_context():
    ctx = contextvars.Context()
    ctx.run(_extobj_contextvar.set, _IGNORE_ALL)
    return ctx


if _extobj_contextvar is not None:
    # run(fn, *args): fn in the quiet context, raising RuntimeError when another thread is in it
    # (the caller then uses ``call``); a bound C method, the cheapest way there is.
    run = _run = _quiet_context().run

    def enter():
        return _extobj_contextvar.set(_IGNORE_ALL)

    def leave(token):
        _extobj_contextvar.reset(token)

    def call(fn, *args):
        """``fn(*args)`` with numpy's floating-point warnings off."""
        try:
            return _run(fn, *args)
        except RuntimeError as err:
            if "cannot enter context" not in str(err):
                raise
        token = enter()     # another thread is in the shared context
        try:
            return fn(*args)
        finally:
            leave(token)
else:
    def enter():
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def leave(token):
        token.__exit__(None, None, None)

    def call(fn, *args):
        with np.errstate(all="ignore"):
            return fn(*args)

    run = call


class quiet:
    """``with quiet():`` -- numpy's floating-point warnings off inside (nests; per thread)."""
    __slots__ = ("_token",)

    def __enter__(self):
        self._token = enter()
        return self

    def __exit__(self, *exc):
        leave(self._token)


def quietly(fn):
    """``fn`` with numpy's floating-point warnings off while it runs."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        token = enter()
        try:
            return fn(*args, **kwargs)
        finally:
            leave(token)
    return wrapped

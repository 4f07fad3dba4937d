"""Where in the user's code a traced operation came from.

A staged equation records the innermost frame outside numjax (and outside the paths that
libraries register with ``jax.extend.source_info_util.register_exclusion``) at the moment
it is traced: the user's line that called ``jnp.sin``, also for the ``cos`` that sin's JVP
rule adds.  Re-evaluating a jaxpr (partial evaluation, transposition) runs each equation in
its recorded position (``running``), so the equations it stages inherit the original
position instead of numjax's own frames.  ``summarize`` prints a position as JAX does:
``file:line:column (function)``.
"""
import itertools
import os
import sys
import threading

_NUMJAX_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
excluded_paths = [_NUMJAX_DIR]


class _Running(threading.local):
    """The position every operation this thread traces now is credited to, when a jaxpr is
    re-evaluated (None otherwise)."""
    position = None


_running = _Running()


class Position:
    """One frame of user code: the function and the bytecode offset being run there."""
    __slots__ = ("code", "lasti", "line")

    def __init__(self, code, lasti, line):
        self.code, self.lasti, self.line = code, lasti, line

    file_name = property(lambda self: self.code.co_filename)
    function_name = property(lambda self: self.code.co_qualname)
    start_line = property(lambda self: self.line)

    @property
    def start_column(self):
        # Each instruction is two bytes; its recorded span starts at the call expression.
        positions = next(itertools.islice(self.code.co_positions(), self.lasti // 2, None),
                         (None, None, None, None))
        return positions[2] if positions[2] is not None else 0

    def __repr__(self):
        return f"{self.file_name}:{self.start_line}:{self.start_column} ({self.function_name})"


def _is_user_file(path):
    return not any(path.startswith(p) for p in excluded_paths)


def current():
    """The user position of the operation being traced now (None outside user code)."""
    running = _running.position
    if running is not None:
        return running
    frame = sys._getframe(1)
    while frame is not None and not _is_user_file(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    return Position(frame.f_code, frame.f_lasti, frame.f_lineno)


def set_running(position):
    """Credit operations traced from now on to ``position``; returns the previous one."""
    previous, _running.position = _running.position, position
    return previous


def summarize(position):
    return "unknown" if position is None else repr(position)

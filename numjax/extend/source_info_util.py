"""``jax.extend.source_info_util``: where in user code an operation came from.

A staged equation records the user's line that traced it (``numjax/source_info.py``);
``current()`` returns that position as its ``traceback`` and ``summarize`` prints it as JAX
does.  Name stacks are plain strings.  Files registered as "not user code" are skipped when
the position is looked up.
"""
import contextlib
import threading

from .. import source_info as _source_info

_excluded_paths = _source_info.excluded_paths


def register_exclusion(path):
    _excluded_paths.append(path)


class NameStack(str):
    def extend(self, name):
        return NameStack(f"{self}/{name}" if self else str(name))


class SourceInfo:
    __slots__ = ("traceback", "name_stack")

    def __init__(self, traceback=None, name_stack=NameStack()):
        self.traceback, self.name_stack = traceback, name_stack

    def replace(self, traceback=None, name_stack=None):
        return SourceInfo(self.traceback if traceback is None else traceback,
                          self.name_stack if name_stack is None else name_stack)


class _NameStacks(threading.local):
    """This thread's name stacks, innermost last."""

    def __init__(self):
        self.stack = [NameStack()]


_name_stacks = _NameStacks()


def new_source_info():
    return SourceInfo()


def current():
    return SourceInfo(_source_info.current(), _name_stacks.stack[-1])


def current_name_stack():
    return _name_stacks.stack[-1]


def new_name_stack(name=""):
    return NameStack(name)


def summarize(source_info, num_frames=1):
    return _source_info.summarize(getattr(source_info, "traceback", source_info))


@contextlib.contextmanager
def extend_name_stack(name):
    stack = _name_stacks.stack
    stack.append(stack[-1].extend(name))
    try:
        yield stack[-1]
    finally:
        stack.pop()


@contextlib.contextmanager
def set_name_stack(name_stack):
    stack = _name_stacks.stack
    stack.append(NameStack(name_stack))
    try:
        yield
    finally:
        stack.pop()


@contextlib.contextmanager
def reset_name_stack():
    with set_name_stack(""):
        yield


@contextlib.contextmanager
def transform_name_stack(name):
    with extend_name_stack(name):
        yield


@contextlib.contextmanager
def user_context(traceback, name_stack=None):
    yield


@contextlib.contextmanager
def named_scope(name):
    """``jax.named_scope``: names the operations traced inside (numjax keeps the name only on
    the name stack; its jaxprs carry no names)."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    with extend_name_stack(name):
        yield


def named_call(fun, *, name=None):
    """``jax.named_call``: ``fun`` run under the name ``name`` (its own name by default)."""
    import functools
    scope = name if name is not None else getattr(fun, "__name__", "fun")

    @functools.wraps(fun)
    def named(*args, **kwargs):
        with extend_name_stack(scope):
            return fun(*args, **kwargs)
    return named

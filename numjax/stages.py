"""``jax.stages``: the stages of a jitted function, ``jit(f).trace(...)`` -> ``Traced`` ->
``.lower()`` -> ``Lowered`` -> ``.compile()`` -> ``Compiled``."""
from typing import Any, Protocol

from .api import Compiled, Lowered, Traced  # noqa: F401

CompilerOptions = dict[str, Any]


class Wrapped(Protocol):
    """A function transformed by ``jit`` (what ``jax.jit`` returns)."""

    def __call__(self, *args, **kwargs): ...

    def trace(self, *args, **kwargs) -> Traced: ...

    def lower(self, *args, **kwargs) -> Lowered: ...

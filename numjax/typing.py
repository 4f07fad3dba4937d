"""numjax.typing: the annotation aliases of ``jax.typing`` (ArrayLike, DTypeLike)."""
from typing import Any, Protocol, Union

import numpy as np

from .array import ArrayType as Array

__all__ = ["ArrayLike", "DTypeLike"]


class SupportsDType(Protocol):
    @property
    def dtype(self) -> np.dtype: ...


# What jnp functions accept as an array argument: arrays and Python/NumPy scalars.
ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]

# What ``dtype=`` accepts: a name, a scalar type, a NumPy dtype, or anything with ``.dtype``.
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]

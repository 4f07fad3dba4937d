"""``jax._src.literals``: JAX 0.10 keeps Python-scalar and numpy constants of a jaxpr as
typed literal arrays. numjax's literals are plain values (``numjax.jaxpr.Literal``), so no
array of these types ever exists; the names exist for ``isinstance`` checks."""
import numpy as np


class TypedNdArray(np.ndarray):
    """A numpy array that remembers it was weakly typed (never created by numjax)."""


LiteralArray = TypedNdArray

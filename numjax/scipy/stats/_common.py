"""Helpers shared by the distribution modules."""
import numpy as np

from ... import core, lax
from ... import numpy as jnp
from ...array import Array
from ...numpy._util import promote_args_inexact
from .. import special

__all__ = ["core", "lax", "jnp", "np", "special", "promote", "const", "outside"]


def promote(name, *args):
    """Arguments promoted to one inexact dtype and a common rank, as jax.scipy.stats does."""
    return promote_args_inexact(name, *args)


def const(like, value):
    """``value`` in like's dtype, weak so it never changes a result's type."""
    return Array(np.asarray(value, dtype=core.get_aval(like).dtype), True)


def outside(x, lo, hi):
    """x < lo or x > hi."""
    return jnp.logical_or(lax.lt(x, lo), lax.gt(x, hi))

"""Helpers shared by the distribution modules."""
import numpy as np

from ... import core, lax
from ... import numpy as jnp
from ...array import Array
from ...numpy._util import promote_args_inexact
from .. import special

__all__ = ["core", "lax", "jnp", "np", "special", "promote", "const", "outside", "standardized",
           "mirrored", "not_probability"]


def promote(name, *args):
    """Arguments promoted to one inexact dtype and a common rank, as jax.scipy.stats does."""
    return promote_args_inexact(name, *args)


def const(like, value):
    """``value`` in like's dtype, weak so it never changes a result's type."""
    return Array(np.asarray(value, dtype=core.get_aval(like).dtype), True)


def outside(x, lo, hi):
    """x < lo or x > hi."""
    return jnp.logical_or(lax.lt(x, lo), lax.gt(x, hi))


def not_probability(q):
    """q is NaN or outside [0, 1]."""
    return jnp.isnan(q) | (q < 0) | (q > 1)


def standardized(name, x, loc, scale):
    """(x - loc) / scale, the arguments promoted first."""
    x, loc, scale = promote(name, x, loc, scale)
    return lax.div(lax.sub(x, loc), scale)


def mirrored(fn, name, x, loc, scale):
    """``fn`` at -x with loc mirrored too: for a distribution symmetric about loc, the survival
    function is the cdf there (and logsf the logcdf)."""
    x, loc, scale = promote(name, x, loc, scale)
    return fn(lax.neg(x), lax.neg(loc), scale)

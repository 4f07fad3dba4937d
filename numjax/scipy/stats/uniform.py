"""The uniform distribution on [loc, loc + scale] (jax.scipy.stats.uniform)."""
from ._common import core, jnp, lax, not_probability, np, outside, promote


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("uniform.logpdf", x, loc, scale)
    return jnp.where(outside(x, loc, lax.add(loc, scale)), -np.inf, lax.neg(lax.log(scale)))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote("uniform.cdf", x, loc, scale)
    hi = lax.add(loc, scale)
    dtype = core.get_aval(x).dtype
    zero, one = jnp.array(0, dtype), jnp.array(1, dtype)   # strong: the result is never weak
    inside = jnp.where(lax.gt(x, hi), one, lax.div(lax.sub(x, loc), scale))
    below = jnp.where(lax.lt(x, loc), zero, inside)
    # NaN anywhere gives 0, as a select over (below, above, inside) with no default match does.
    nan = jnp.logical_not(jnp.logical_or(jnp.logical_or(lax.lt(x, loc), lax.gt(x, hi)),
                                         jnp.logical_and(lax.ge(x, loc), lax.le(x, hi))))
    return jnp.where(nan, zero, below)


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote("uniform.ppf", q, loc, scale)
    return jnp.where(not_probability(q), np.nan, lax.add(loc, lax.mul(scale, q)))

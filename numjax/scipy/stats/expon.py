"""The exponential distribution (jax.scipy.stats.expon)."""
from ._common import jnp, lax, not_probability, np, promote


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("expon.logpdf", x, loc, scale)
    log_probs = lax.neg(lax.add(lax.div(lax.sub(x, loc), scale), lax.log(scale)))
    return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def _neg_z(name, x, loc, scale):
    x, loc, scale = promote(name, x, loc, scale)
    return x, loc, lax.div(lax.sub(loc, x), scale)


def cdf(x, loc=0, scale=1):
    x, loc, neg_z = _neg_z("expon.cdf", x, loc, scale)
    return jnp.where(lax.lt(x, loc), jnp.zeros_like(neg_z), lax.neg(lax.expm1(neg_z)))


def logsf(x, loc=0, scale=1):
    x, loc, neg_z = _neg_z("expon.sf", x, loc, scale)
    return jnp.where(lax.lt(x, loc), jnp.zeros_like(neg_z), neg_z)


def sf(x, loc=0, scale=1):
    return lax.exp(logsf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    return lax.log1p(lax.neg(sf(x, loc, scale)))


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote("expon.ppf", q, loc, scale)
    return jnp.where(not_probability(q), np.nan, lax.sub(loc, lax.mul(scale, lax.log1p(lax.neg(q)))))

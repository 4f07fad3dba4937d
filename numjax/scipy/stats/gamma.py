"""The gamma distribution (jax.scipy.stats.gamma)."""
from ._common import const, jnp, lax, np, promote, special


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote("gamma.logpdf", x, a, loc, scale)
    inside = lax.ge(x, loc)
    y = jnp.where(inside, lax.div(lax.sub(x, loc), scale), const(x, 1))
    log_kernel = lax.sub(special.xlogy(lax.sub(a, const(x, 1)), y), y)
    log_probs = lax.sub(log_kernel, lax.add(special.gammaln(a), lax.log(scale)))
    return jnp.where(inside, log_probs, -np.inf)


def pdf(x, a, loc=0, scale=1):
    return lax.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote("gamma.cdf", x, a, loc, scale)
    y = lax.clamp(const(x, 0), lax.div(lax.sub(x, loc), scale), const(x, np.inf))
    return special.gammainc(a, y)


def logcdf(x, a, loc=0, scale=1):
    return lax.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote("gamma.sf", x, a, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    return jnp.where(lax.lt(y, const(y, 0)), 1, special.gammaincc(a, y))


def logsf(x, a, loc=0, scale=1):
    return lax.log(sf(x, a, loc, scale))

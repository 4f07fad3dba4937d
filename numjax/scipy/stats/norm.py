"""The normal distribution (jax.scipy.stats.norm)."""
from ._common import const, jnp, lax, mirrored, np, promote, special, standardized


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("norm.logpdf", x, loc, scale)
    variance = lax.mul(scale, scale)
    log_normalizer = lax.log(lax.mul(const(x, 2 * np.pi), variance))
    z2 = lax.div(lax.integer_pow(lax.sub(x, loc), 2), variance)
    return lax.mul(const(x, -0.5), lax.add(log_normalizer, z2))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    return special.ndtr(standardized("norm.cdf", x, loc, scale))


def logcdf(x, loc=0, scale=1):
    return special.log_ndtr(standardized("norm.logcdf", x, loc, scale))


def sf(x, loc=0, scale=1):
    return mirrored(cdf, "norm.sf", x, loc, scale)


def logsf(x, loc=0, scale=1):
    return mirrored(logcdf, "norm.logsf", x, loc, scale)


def ppf(q, loc=0, scale=1):
    # JAX returns the default float dtype here, never a weak type.
    return jnp.asarray(special.ndtri(q) * scale + loc, float)


def isf(q, loc=0, scale=1):
    (q,) = promote("norm.isf", q)
    return ppf(lax.sub(const(q, 1), q), loc, scale)

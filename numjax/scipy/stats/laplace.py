"""The Laplace distribution (jax.scipy.stats.laplace)."""
from ._common import const, lax, promote, standardized


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("laplace.logpdf", x, loc, scale)
    return lax.neg(lax.add(lax.div(lax.abs(lax.sub(x, loc)), scale), lax.log(lax.mul(const(x, 2), scale))))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    z = standardized("laplace.cdf", x, loc, scale)
    half = const(z, 0.5)
    return lax.select(lax.le(z, const(z, 0)), lax.mul(half, lax.exp(z)),
                      lax.sub(const(z, 1), lax.mul(half, lax.exp(lax.neg(z)))))

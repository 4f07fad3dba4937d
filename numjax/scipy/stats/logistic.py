"""The logistic distribution (jax.scipy.stats.logistic)."""
from ._common import const, lax, promote, special, standardized


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("logistic.logpdf", x, loc, scale)
    z = lax.abs(lax.div(lax.sub(x, loc), scale))
    # log(e^-z / (1 + e^-z)^2), written with |z| so neither term overflows
    return lax.sub(lax.sub(lax.neg(z), lax.mul(const(x, 2), lax.log1p(lax.exp(lax.neg(z))))), lax.log(scale))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    return special.expit(standardized("logistic.cdf", x, loc, scale))


def sf(x, loc=0, scale=1):
    return special.expit(lax.neg(standardized("logistic.sf", x, loc, scale)))


def ppf(x, loc=0, scale=1):
    x, loc, scale = promote("logistic.ppf", x, loc, scale)
    return lax.add(lax.mul(special.logit(x), scale), loc)


def isf(x, loc=0, scale=1):
    x, loc, scale = promote("logistic.isf", x, loc, scale)
    return lax.add(lax.mul(lax.neg(special.logit(x)), scale), loc)

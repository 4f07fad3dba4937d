"""The Cauchy distribution (jax.scipy.stats.cauchy)."""
from ._common import const, lax, np, promote


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("cauchy.logpdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    return lax.neg(lax.add(lax.log(lax.mul(const(x, np.pi), scale)), lax.log1p(lax.mul(z, z))))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote("cauchy.cdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    return lax.add(const(x, 0.5), lax.mul(const(x, 1 / np.pi), lax.atan(z)))


def logcdf(x, loc=0, scale=1):
    return lax.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    x, loc, scale = promote("cauchy.sf", x, loc, scale)
    return cdf(lax.neg(x), lax.neg(loc), scale)


def logsf(x, loc=0, scale=1):
    x, loc, scale = promote("cauchy.logsf", x, loc, scale)
    return logcdf(lax.neg(x), lax.neg(loc), scale)


def _quantile(name, q, loc, scale, sign):
    q, loc, scale = promote(name, q, loc, scale)
    # tan(pi (q - 1/2)) for ppf, tan(pi (1/2 - q)) for isf
    angle = lax.mul(const(q, sign), lax.sub(lax.mul(const(q, np.pi), q), const(q, np.pi / 2)))
    return lax.add(lax.mul(lax.tan(angle), scale), loc)


def ppf(q, loc=0, scale=1):
    return _quantile("cauchy.ppf", q, loc, scale, 1)


def isf(q, loc=0, scale=1):
    return _quantile("cauchy.isf", q, loc, scale, -1)

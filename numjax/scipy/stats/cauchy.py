"""The Cauchy distribution (jax.scipy.stats.cauchy)."""
from ._common import const, lax, mirrored, np, promote, standardized


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("cauchy.logpdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    return lax.neg(lax.add(lax.log(lax.mul(const(x, np.pi), scale)), lax.log1p(lax.mul(z, z))))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    z = standardized("cauchy.cdf", x, loc, scale)
    return lax.add(const(z, 0.5), lax.mul(const(z, 1 / np.pi), lax.atan(z)))


def logcdf(x, loc=0, scale=1):
    return lax.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    return mirrored(cdf, "cauchy.sf", x, loc, scale)


def logsf(x, loc=0, scale=1):
    return mirrored(logcdf, "cauchy.logsf", x, loc, scale)


def _quantile(name, q, loc, scale, sign):
    q, loc, scale = promote(name, q, loc, scale)
    # tan(pi (q - 1/2)) for ppf, tan(pi (1/2 - q)) for isf
    angle = lax.mul(const(q, sign), lax.sub(lax.mul(const(q, np.pi), q), const(q, np.pi / 2)))
    return lax.add(lax.mul(lax.tan(angle), scale), loc)


def ppf(q, loc=0, scale=1):
    return _quantile("cauchy.ppf", q, loc, scale, 1)


def isf(q, loc=0, scale=1):
    return _quantile("cauchy.isf", q, loc, scale, -1)

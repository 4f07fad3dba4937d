"""The beta distribution (jax.scipy.stats.beta)."""
from ._common import const, jnp, lax, np, outside, promote, special


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote("beta.logpdf", x, a, b, loc, scale)
    one = const(x, 1)
    y = lax.div(lax.sub(x, loc), scale)
    log_kernel = lax.add(special.xlogy(lax.sub(a, one), y), special.xlog1py(lax.sub(b, one), lax.neg(y)))
    log_probs = lax.sub(lax.sub(log_kernel, special.betaln(a, b)), lax.log(scale))
    out = jnp.where(outside(x, loc, lax.add(loc, scale)), -np.inf, log_probs)
    zero = const(a, 0)
    bad_params = jnp.logical_or(jnp.logical_or(lax.le(a, zero), lax.le(b, zero)), lax.le(scale, zero))
    return jnp.where(bad_params, np.nan, out)


def pdf(x, a, b, loc=0, scale=1):
    return lax.exp(logpdf(x, a, b, loc, scale))


def _unit(x, loc, scale):
    return lax.clamp(const(x, 0), lax.div(lax.sub(x, loc), scale), const(x, 1))


def cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote("beta.cdf", x, a, b, loc, scale)
    return special.betainc(a, b, _unit(x, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    return lax.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote("beta.sf", x, a, b, loc, scale)
    return special.betainc(b, a, 1 - _unit(x, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    return lax.log(sf(x, a, b, loc, scale))

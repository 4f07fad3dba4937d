"""The chi-squared distribution (jax.scipy.stats.chi2)."""
from ._common import const, jnp, lax, np, promote, special


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote("chi2.logpdf", x, df, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    half_df = lax.div(df, const(x, 2))
    log_kernel = lax.sub(lax.mul(lax.sub(half_df, const(x, 1)), lax.log(y)), lax.div(y, const(x, 2)))
    log_norm = lax.neg(lax.add(lax.lgamma(half_df), lax.mul(half_df, const(x, np.log(2)))))
    log_probs = lax.add(lax.sub(log_norm, lax.log(scale)), log_kernel)
    return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x, df, loc=0, scale=1):
    return lax.exp(logpdf(x, df, loc, scale))


def _half_df_and_y(name, x, df, loc, scale):
    x, df, loc, scale = promote(name, x, df, loc, scale)
    y = lax.clamp(const(x, 0), lax.div(lax.sub(x, loc), lax.mul(scale, const(x, 2))), const(x, np.inf))
    return lax.div(df, const(x, 2)), y


def cdf(x, df, loc=0, scale=1):
    return special.gammainc(*_half_df_and_y("chi2.cdf", x, df, loc, scale))


def logcdf(x, df, loc=0, scale=1):
    return lax.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    return special.gammaincc(*_half_df_and_y("chi2.sf", x, df, loc, scale))


def logsf(x, df, loc=0, scale=1):
    return lax.log(sf(x, df, loc, scale))

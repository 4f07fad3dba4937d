"""Student's t distribution (jax.scipy.stats.t)."""
from ._common import const, lax, np, promote


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote("t.logpdf", x, df, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    half_df = lax.div(df, const(x, 2))
    half_df_plus_half = lax.add(half_df, const(x, 0.5))
    # log normalizer: lgamma(df/2) + log(pi df scale^2)/2 - lgamma((df+1)/2)
    log_norm = lax.sub(
        lax.add(lax.lgamma(half_df),
                lax.div(lax.log(lax.mul(lax.mul(lax.mul(scale, scale), const(x, np.pi)), df)), const(x, 2))),
        lax.lgamma(half_df_plus_half))
    return lax.neg(lax.add(log_norm, lax.mul(half_df_plus_half, lax.log1p(lax.div(lax.mul(z, z), df)))))


def pdf(x, df, loc=0, scale=1):
    return lax.exp(logpdf(x, df, loc, scale))

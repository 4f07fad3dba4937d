"""The Bernoulli distribution (jax.scipy.stats.bernoulli)."""
from ._common import const, core, jnp, lax, not_probability, np, outside, promote, special


def logpmf(k, p, loc=0):
    k, p, loc = promote("bernoulli.logpmf", k, p, loc)
    x = lax.sub(k, loc)
    log_probs = special.xlogy(x, p) + special.xlog1py(lax.sub(const(k, 1), x), -p)
    return jnp.where(outside(x, const(k, 0), const(k, 1)), -np.inf, log_probs)


def pmf(k, p, loc=0):
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    k, p = promote("bernoulli.cdf", k, p)
    zero, one = const(k, 0), const(k, 1)
    value = jnp.where(lax.lt(k, zero), zero, jnp.where(lax.lt(k, one), one - p, one))
    return jnp.where(jnp.isnan(k) | not_probability(p), np.nan, value)


def ppf(q, p):
    q, p = promote("bernoulli.ppf", q, p)
    dtype = core.get_aval(q).dtype
    zero, one = jnp.array(0, dtype), jnp.array(1, dtype)   # strong, so the result is (as JAX's)
    invalid = jnp.isnan(q) | not_probability(p) | (q < zero) | (q > one)
    return jnp.where(invalid, np.nan, jnp.where(lax.le(q, one - p), zero, one))

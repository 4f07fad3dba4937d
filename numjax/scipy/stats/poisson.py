"""The Poisson distribution (jax.scipy.stats.poisson)."""
from ._common import const, jnp, lax, np, promote, special


def logpmf(k, mu, loc=0):
    k, mu, loc = promote("poisson.logpmf", k, mu, loc)
    x = lax.sub(k, loc)
    log_probs = special.xlogy(x, mu) - special.gammaln(x + 1) - mu
    not_integer = lax.ne(jnp.round(k), k)
    return jnp.where(jnp.logical_or(lax.lt(x, const(k, 0)), not_integer), -np.inf, log_probs)


def pmf(k, mu, loc=0):
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    k, mu, loc = promote("poisson.cdf", k, mu, loc)
    x = lax.sub(k, loc)
    # P(K <= x) = Q(floor(x) + 1, mu)
    return jnp.where(lax.lt(x, const(k, 0)), const(k, 0), special.gammaincc(jnp.floor(1 + x), mu))

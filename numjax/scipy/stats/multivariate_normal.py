"""The multivariate normal distribution (jax.scipy.stats.multivariate_normal)."""
from ... import dtypes, numpy as jnp
from ...numpy._util import promote_dtypes
from ._common import core, lax, np


def _inexact(*args):
    dt = np.result_type(*(core.get_aval(jnp.asarray(a)).dtype for a in args))
    if dtypes.kind(dt) not in "fc":
        return promote_dtypes(*args, 1.0)[:-1]
    return promote_dtypes(*args)


def logpdf(x, mean, cov, allow_singular=None):
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = _inexact(x, mean, cov)
    log_2pi = np.log(2 * np.pi)
    mean_shape = core.get_aval(mean).shape
    if not mean_shape:   # univariate
        return -1 / 2 * jnp.square(x - mean) / cov - 1 / 2 * (log_2pi + jnp.log(cov))
    n = mean_shape[-1]
    cov_aval = core.get_aval(cov)
    if not cov_aval.shape:   # isotropic: cov * identity
        y = x - mean
        return -1 / 2 * jnp.sum(y * y, axis=-1) / cov - n / 2 * (log_2pi + jnp.log(cov))
    if cov_aval.ndim < 2 or cov_aval.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    chol = lax.linalg.cholesky(cov)
    y = _solve_lower(chol, x - mean)   # chol @ y = x - mean
    log_det_half = jnp.sum(jnp.log(_diagonal(chol)), axis=-1)
    return -1 / 2 * jnp.sum(y * y, axis=-1) - n / 2 * log_2pi - log_det_half


def _diagonal(m):
    n = core.get_aval(m).shape[-1]
    return jnp.sum(m * jnp.eye(n, dtype=core.get_aval(m).dtype), axis=-1)


def _solve_lower(chol, diff):
    """L^-1 diff for vectors diff (..., n) and factors chol (..., n, n)."""
    c_aval, d_aval = core.get_aval(chol), core.get_aval(diff)
    n = c_aval.shape[-1]
    if c_aval.ndim == 2:
        # One factor: all right-hand sides as the columns of one (n, k) system.
        batch = d_aval.shape[:-1]
        cols = jnp.transpose(jnp.reshape(diff, (-1, n)))
        y = lax.linalg.triangular_solve(chol, cols, left_side=True, lower=True)
        return jnp.reshape(jnp.transpose(y), batch + (n,))
    batch = np.broadcast_shapes(c_aval.shape[:-2], d_aval.shape[:-1])
    chol = jnp.broadcast_to(chol, batch + (n, n))
    diff = jnp.broadcast_to(diff, batch + (n,))
    y = lax.linalg.triangular_solve(chol, diff[..., None], left_side=True, lower=True)
    return y[..., 0]


def pdf(x, mean, cov):
    return lax.exp(logpdf(x, mean, cov))

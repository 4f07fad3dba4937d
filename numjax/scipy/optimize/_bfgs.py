"""BFGS with the strong-Wolfe line search, as one while_loop (jit-able)."""
from typing import NamedTuple

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...ad_api import value_and_grad
from ._line_search import _dot, line_search


class BFGSResults(NamedTuple):
    converged: object
    failed: object
    k: object
    nfev: object
    ngev: object
    nhev: object
    x_k: object
    f_k: object
    g_k: object
    H_k: object   # inverse Hessian estimate
    old_old_fval: object
    status: object
    line_search_status: object


def _norm(v, ord):
    if ord == np.inf:
        return jnp.max(jnp.abs(v))
    if ord == -np.inf:
        return jnp.min(jnp.abs(v))
    if ord == 2 or ord is None:
        return jnp.sqrt(jnp.sum(v * v))
    return jnp.sum(jnp.abs(v) ** ord) ** (1.0 / ord)


def minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    if maxiter is None:
        maxiter = np.size(x0) * 200
    x0 = jnp.asarray(x0)
    d = x0.shape[0]
    f_0, g_0 = value_and_grad(fun)(x0)
    state = BFGSResults(
        converged=_norm(g_0, norm) < gtol, failed=jnp.array(False), k=jnp.array(0),
        nfev=jnp.array(1), ngev=jnp.array(1), nhev=jnp.array(0), x_k=x0, f_k=f_0, g_k=g_0,
        H_k=jnp.eye(d, dtype=x0.dtype), old_old_fval=f_0 + _norm(g_0, 2) / 2,
        status=jnp.array(0), line_search_status=jnp.array(0))

    def keep_going(s):
        return jnp.logical_not(s.converged) & jnp.logical_not(s.failed) & (s.k < maxiter)

    def step(s):
        p_k = -_dot(s.H_k, s.g_k)
        ls = line_search(fun, s.x_k, p_k, old_fval=s.f_k, old_old_fval=s.old_old_fval,
                         gfk=s.g_k, maxiter=line_search_maxiter)
        s = s._replace(nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev, failed=ls.failed,
                       line_search_status=ls.status)
        s_k = ls.a_k.astype(p_k.dtype) * p_k
        y_k = ls.g_k - s.g_k
        rho = jnp.reciprocal(_dot(y_k, s_k))
        # H+ = (I - rho s y^T) H (I - rho y s^T) + rho s s^T
        w = jnp.eye(d, dtype=rho.dtype) - rho * (s_k[:, None] * y_k[None, :])
        h_next = _dot(_dot(w, s.H_k), w.T) + rho * (s_k[:, None] * s_k[None, :])
        h_next = jnp.where(jnp.isfinite(rho), h_next, s.H_k)
        return s._replace(converged=_norm(ls.g_k, norm) < gtol, k=s.k + 1, x_k=s.x_k + s_k,
                          f_k=ls.f_k, g_k=ls.g_k, H_k=h_next, old_old_fval=s.f_k)

    state = lax.while_loop(keep_going, step, state)
    status = jnp.where(state.converged, 0,
                       jnp.where(state.k == maxiter, 1,
                                 jnp.where(state.failed, 2 + state.line_search_status, -1)))
    return state._replace(status=status)

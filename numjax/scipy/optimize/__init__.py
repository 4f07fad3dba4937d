"""numjax.scipy.optimize: minimize (BFGS), as jax.scipy.optimize."""
from typing import NamedTuple

from ... import numpy as jnp
from ._bfgs import minimize_bfgs

__all__ = ["minimize", "OptimizeResults"]


class OptimizeResults(NamedTuple):
    """x: the solution; success: whether it converged without a line-search failure; status:
    0 converged, 1 maxiter reached, 2 + the line search's status when it failed, -1 other;
    fun, jac: f and its gradient at x; hess_inv: the inverse Hessian estimate; nfev, njev:
    evaluations of f and of its gradient; nit: iterations."""
    x: object
    success: object
    status: object
    fun: object
    jac: object
    hess_inv: object
    nfev: object
    njev: object
    nit: object


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimize ``fun(x, *args)`` over a 1-d ``x`` from ``x0``.  Only method='BFGS' exists;
    ``options`` go to it (maxiter, norm, gtol, line_search_maxiter).  ``tol`` is accepted and,
    as in JAX, unused."""
    options = {} if options is None else dict(options)
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")

    def fun_with_args(x):
        return fun(x, *args)

    if method.lower() == "bfgs":
        r = minimize_bfgs(fun_with_args, x0, **options)
        return OptimizeResults(x=r.x_k, success=r.converged & jnp.logical_not(r.failed),
                               status=r.status, fun=r.f_k, jac=r.g_k, hess_inv=r.H_k,
                               nfev=r.nfev, njev=r.ngev, nit=r.k)
    raise ValueError(f"Method {method} not recognized")

"""A line search satisfying the strong Wolfe conditions (Nocedal & Wright, Algorithms 3.5
and 3.6): bracket a step by doubling, then zoom in on it by safeguarded cubic or quadratic
interpolation, falling back to bisection.  Written with while_loop so it traces under jit,
and making JAX's choices step for step (start value, safeguards, failure thresholds) so the
iterates agree with jax.scipy.optimize."""
from typing import NamedTuple

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...ad_api import value_and_grad


def _dot(a, b):
    return jnp.dot(a, b)


def _cubic_minimizer(a, fa, fpa, b, fb, c, fc):
    """Minimizer of the cubic through (a, fa) with slope fpa at a, (b, fb) and (c, fc)."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
    cubic = (dc ** 2 * rb - db ** 2 * rc) / denom
    quad = (-dc ** 3 * rb + db ** 3 * rc) / denom
    radical = quad * quad - 3.0 * cubic * fpa
    return a + (-quad + jnp.sqrt(radical)) / (3.0 * cubic)


def _quadratic_minimizer(a, fa, fpa, b, fb):
    """Minimizer of the parabola through (a, fa) with slope fpa at a and (b, fb)."""
    db = b - a
    curvature = (fb - fa - fpa * db) / db ** 2
    return a - fpa / (2.0 * curvature)


def _pick(cond, new, old):
    """Fields of ``new`` replacing those of the state ``old`` where ``cond`` holds."""
    return {k: jnp.where(cond, v, getattr(old, k)) for k, v in new.items()}


class _ZoomState(NamedTuple):
    done: object
    failed: object
    j: object
    a_lo: object
    phi_lo: object
    dphi_lo: object
    a_hi: object
    phi_hi: object
    dphi_hi: object
    a_rec: object     # the previous a_hi or a_lo, the third point of the cubic
    phi_rec: object
    a_star: object
    phi_star: object
    dphi_star: object
    g_star: object
    nfev: object
    ngev: object


def _zoom(phi_and_grad, sufficient_decrease, curvature_ok, a_lo, phi_lo, dphi_lo, a_hi, phi_hi,
          dphi_hi, g_0, skip):
    """Shrink [a_lo, a_hi] (a_lo the better end) until a point meets both Wolfe conditions."""
    dtype = phi_lo.dtype
    state = _ZoomState(
        done=jnp.array(False), failed=jnp.array(False), j=jnp.array(0),
        a_lo=a_lo, phi_lo=phi_lo, dphi_lo=dphi_lo, a_hi=a_hi, phi_hi=phi_hi, dphi_hi=dphi_hi,
        a_rec=(a_lo + a_hi) / 2.0, phi_rec=(phi_lo + phi_hi) / 2.0,
        a_star=jnp.array(1.0, dtype), phi_star=phi_lo, dphi_star=dphi_lo, g_star=g_0,
        nfev=jnp.array(0), ngev=jnp.array(0))
    cubic_margin, quad_margin = 0.2, 0.1
    min_width = 1e-5 if np.finfo(dtype).bits < 64 else 1e-10

    def body(s):
        width = s.a_hi - s.a_lo   # signed, as JAX's: a reversed bracket fails at once
        left, right = jnp.minimum(s.a_hi, s.a_lo), jnp.maximum(s.a_hi, s.a_lo)
        s = s._replace(failed=s.failed | (width <= min_width))
        a_cubic = _cubic_minimizer(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi, s.a_rec, s.phi_rec)
        use_cubic = (s.j > 0) & (a_cubic > left + cubic_margin * width) & (a_cubic < right - cubic_margin * width)
        a_quad = _quadratic_minimizer(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi)
        use_quad = ~use_cubic & (a_quad > left + quad_margin * width) & (a_quad < right - quad_margin * width)
        a_j = jnp.where(use_cubic, a_cubic, s.a_rec)
        a_j = jnp.where(use_quad, a_quad, a_j)
        a_j = jnp.where(~use_cubic & ~use_quad, (s.a_lo + s.a_hi) / 2.0, a_j)
        phi_j, dphi_j, g_j = phi_and_grad(a_j)
        phi_j, dphi_j = phi_j.astype(s.phi_lo.dtype), dphi_j.astype(s.dphi_lo.dtype)
        g_j = g_j.astype(s.g_star.dtype)
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)

        new_hi = sufficient_decrease(a_j, phi_j) | (phi_j >= s.phi_lo)
        accept = curvature_ok(dphi_j) & ~new_hi
        flip = (dphi_j * (s.a_hi - s.a_lo) >= 0.0) & ~new_hi & ~accept
        new_lo = ~new_hi & ~accept
        s = s._replace(**_pick(new_hi, dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j,
                                            a_rec=s.a_hi, phi_rec=s.phi_hi), s))
        s = s._replace(done=accept | s.done,
                       **_pick(accept, dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j), s))
        s = s._replace(**_pick(flip, dict(a_hi=s.a_lo, phi_hi=s.phi_lo, dphi_hi=s.dphi_lo,
                                          a_rec=s.a_hi, phi_rec=s.phi_hi), s))
        s = s._replace(**_pick(new_lo & ~flip, dict(a_rec=s.a_lo, phi_rec=s.phi_lo), s))
        s = s._replace(**_pick(new_lo, dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j), s))
        s = s._replace(j=s.j + 1)
        return s._replace(failed=s.failed | (s.j >= 30))

    return lax.while_loop(lambda s: ~s.done & ~skip & ~s.failed, body, state)


class _SearchState(NamedTuple):
    done: object
    failed: object
    i: object
    a_prev: object
    phi_prev: object
    dphi_prev: object
    nfev: object
    ngev: object
    a_star: object
    phi_star: object
    dphi_star: object
    g_star: object


class LineSearchResults(NamedTuple):
    failed: object
    nit: object
    nfev: object
    ngev: object
    k: object
    a_k: object
    f_k: object
    g_k: object
    status: object


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9,
                maxiter=20):
    """A step a along pk from xk with f(xk + a pk) <= f(xk) + c1 a f'(xk; pk) and
    |f'(xk + a pk; pk)| <= c2 |f'(xk; pk)|."""
    xk, pk = jnp.asarray(xk), jnp.asarray(pk)
    dtype = jnp.result_type(xk, pk, 1.0)
    xk, pk = xk.astype(dtype), pk.astype(dtype)

    def phi_and_grad(t):
        t = jnp.array(t, dtype=pk.dtype)
        phi, g = value_and_grad(f)(xk + t * pk)
        return phi, _dot(g, pk), g

    given = old_fval is not None and gfk is not None
    if given:
        phi_0, dphi_0 = old_fval, _dot(gfk, pk)
    else:
        phi_0, dphi_0, gfk = phi_and_grad(0)
    if old_old_fval is not None:
        # Nocedal & Wright (3.60): the step that would repeat the last decrease, capped at 1.
        candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start = jnp.where(candidate > 1, 1.0, candidate)
    else:
        start = jnp.array(1.0, dtype)

    def sufficient_decrease(a, phi):   # violated, that is
        return phi > phi_0 + c1 * a * dphi_0

    def curvature_ok(dphi):
        return jnp.abs(dphi) <= -c2 * dphi_0

    phi_dtype = jnp.asarray(phi_0).dtype
    count0 = jnp.array(0 if given else 1)
    state = _SearchState(
        done=jnp.array(False), failed=jnp.array(False), i=jnp.array(1),
        a_prev=jnp.array(0.0, dtype), phi_prev=phi_0, dphi_prev=dphi_0, nfev=count0, ngev=count0,
        a_star=jnp.array(0.0, dtype), phi_star=phi_0, dphi_star=dphi_0, g_star=gfk)
    del phi_dtype

    def body(s):
        a_i = jnp.where(s.i == 1, start, s.a_prev * 2.0).astype(dtype)
        phi_i, dphi_i, g_i = phi_and_grad(a_i)
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)
        zoom_up = sufficient_decrease(a_i, phi_i) | (phi_i >= s.phi_prev) & (s.i > 1)
        accept = curvature_ok(dphi_i) & ~zoom_up
        zoom_down = (dphi_i >= 0.0) & ~zoom_up & ~accept
        up = _zoom(phi_and_grad, sufficient_decrease, curvature_ok, s.a_prev, s.phi_prev,
                   s.dphi_prev, a_i, phi_i, dphi_i, gfk, ~zoom_up)
        down = _zoom(phi_and_grad, sufficient_decrease, curvature_ok, a_i, phi_i, dphi_i,
                     s.a_prev, s.phi_prev, s.dphi_prev, gfk, ~zoom_down)
        s = s._replace(nfev=s.nfev + up.nfev + down.nfev, ngev=s.ngev + up.ngev + down.ngev)
        found = ("a_star", "phi_star", "dphi_star", "g_star")
        s = s._replace(done=zoom_up | s.done, failed=zoom_up & up.failed | s.failed,
                       **_pick(zoom_up, {k: getattr(up, k) for k in found}, s))
        s = s._replace(done=accept | s.done,
                       **_pick(accept, dict(a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i), s))
        s = s._replace(done=zoom_down | s.done, failed=zoom_down & down.failed | s.failed,
                       **_pick(zoom_down, {k: getattr(down, k) for k in found}, s))
        return s._replace(i=s.i + 1, a_prev=a_i, phi_prev=phi_i, dphi_prev=dphi_i)

    s = lax.while_loop(lambda s: ~s.done & (s.i <= maxiter) & ~s.failed, body, state)
    status = jnp.where(s.failed, 1, jnp.where(s.i > maxiter, 3, 0))
    alpha = s.a_star
    if np.finfo(alpha.dtype).bits != 64:
        # Steps below 1e-8 are rounded up in single precision.
        alpha = jnp.where(jnp.abs(alpha) < 1e-8, jnp.sign(alpha) * 1e-8, alpha)
    return LineSearchResults(failed=s.failed | ~s.done, nit=s.i - 1, nfev=s.nfev, ngev=s.ngev,
                             k=s.i, a_k=alpha, f_k=s.phi_star, g_k=s.g_star, status=status)

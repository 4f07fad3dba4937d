"""Special-function primitives: lgamma, digamma, polygamma, igamma, igammac, igamma_grad_a,
random_gamma_grad, regularized_incomplete_beta (lax.betainc), zeta, bessel_i0e, bessel_i1e,
erfc.

Eager evaluation uses scipy.special in float64 (or numjax's own Numba scalar code where scipy
has no counterpart), with JAX's values at poles and domain edges; jit lowers each primitive to
a scalar call into the CPU library's special_helpers.
"""
import math
import numpy as np

from .. import core, dtypes
from ._base import coerce_scalars, make_primitive
from .elementwise import _eager, _nary_abstract, _unary_abstract

__all__ = ["lgamma", "digamma", "polygamma", "igamma", "igammac", "igamma_grad_a",
           "random_gamma_grad", "betainc", "zeta", "bessel_i0e", "bessel_i1e", "erfc",
           "lgamma_p", "digamma_p", "polygamma_p", "igamma_p", "igammac_p", "igamma_grad_a_p",
           "random_gamma_grad_p", "regularized_incomplete_beta_p", "zeta_p", "bessel_i0e_p",
           "bessel_i1e_p", "erfc_p"]

_FLOAT, _FLOAT_DESC = "f", "floating"


def _in_float64(fn):
    """fn applied in float64 (scipy's float32 loops are less accurate), NaN/inf warnings off."""
    def wrapped(*vals):
        with np.errstate(all="ignore"):
            return fn(*(np.asarray(v, np.float64) for v in vals))
    return wrapped


def _vectorized_helper(name):
    """numjax's Numba scalar function ``name`` mapped over numpy arrays (compiled on first use)."""
    def fn(*vals):
        from .. import dispatch   # lazy: numjax imports without Numba
        scalar = getattr(dispatch.cpu_library("special_helpers"), name)
        vals = np.broadcast_arrays(*vals)
        out = np.empty(vals[0].shape, np.float64)
        for idx in np.ndindex(out.shape):
            out[idx] = scalar(*(float(v[idx]) for v in vals))
        return out
    return fn


def _unary_prim(name, np_fn):
    return make_primitive(name, _eager(_in_float64(np_fn)), _unary_abstract(name, _FLOAT, _FLOAT_DESC),
                          elementwise=True)


def _nary_prim(name, np_fn):
    return make_primitive(name, _eager(_in_float64(np_fn)), _nary_abstract(name, _FLOAT, _FLOAT_DESC),
                          elementwise=True)


def _scipy():
    import scipy.special
    return scipy.special


def _poles_to(value):
    """Mask for JAX's value at the poles (0, -1, -2, ...) of the gamma family."""
    def fix(x, out):
        return np.where((x <= 0) & (x == np.floor(x)), value, out)
    return fix


def _lgamma_np(x):
    return _poles_to(np.inf)(x, _scipy().gammaln(x))


def _digamma_np(x):
    return _poles_to(np.nan)(x, _scipy().psi(x))


def _polygamma_np(m, x):
    integral = (m >= 0) & (m == np.floor(m))
    out = _scipy().polygamma(np.where(integral, m, 0).astype(np.int64), x)
    out = np.where(m == 0, _digamma_np(x), out)
    return np.where(integral, out, np.nan)


def _igamma_edges(a, x, out, at_a_zero):
    out = np.where(a == 0, np.where(x > 0, at_a_zero, np.nan), out)
    return np.where((a < 0) | (x < 0) | np.isinf(a), np.nan, out)


def _igamma_np(a, x):
    return _igamma_edges(a, x, _scipy().gammainc(a, x), 1.0)


def _igammac_np(a, x):
    return _igamma_edges(a, x, _scipy().gammaincc(a, x), 0.0)


def _betainc_np(a, b, x):
    return _scipy().betainc(a, b, x)


def _zeta_np(s, q):
    out = _scipy().zeta(s, q)
    return np.where(s < 1, np.nan, out)


lgamma_p = _unary_prim("lgamma", _lgamma_np)
digamma_p = _unary_prim("digamma", _digamma_np)
polygamma_p = _nary_prim("polygamma", _polygamma_np)
igamma_p = _nary_prim("igamma", _igamma_np)
igammac_p = _nary_prim("igammac", _igammac_np)
igamma_grad_a_p = _nary_prim("igamma_grad_a", _vectorized_helper("igamma_grad_a"))
random_gamma_grad_p = _nary_prim("random_gamma_grad", _vectorized_helper("random_gamma_grad"))
regularized_incomplete_beta_p = _nary_prim("regularized_incomplete_beta", _betainc_np)
zeta_p = _nary_prim("zeta", _zeta_np)
bessel_i0e_p = _unary_prim("bessel_i0e", lambda x: _scipy().i0e(x))
bessel_i1e_p = _unary_prim("bessel_i1e", lambda x: _scipy().i1e(x))
erfc_p = _unary_prim("erfc", lambda x: _scipy().erfc(x))
# The normal quantile has no lax primitive in JAX (jax.scipy.special.ndtri is built from lax
# ops); numjax gives it one so it compiles to one accurate scalar call.  Not exported.
ndtri_p = _unary_prim("ndtri", lambda p: _scipy().ndtri(p))

_PRIMS = (lgamma_p, digamma_p, polygamma_p, igamma_p, igammac_p, igamma_grad_a_p,
          random_gamma_grad_p, regularized_incomplete_beta_p, zeta_p, bessel_i0e_p,
          bessel_i1e_p, erfc_p, ndtri_p)


# ---------------------------------------------------------------- lax-level functions

def lgamma(x):
    return lgamma_p.bind(*coerce_scalars([x]))


def digamma(x):
    return digamma_p.bind(*coerce_scalars([x]))


def polygamma(m, x):
    return polygamma_p.bind(*coerce_scalars([m, x]))


def igamma(a, x):
    return igamma_p.bind(*coerce_scalars([a, x]))


def igammac(a, x):
    return igammac_p.bind(*coerce_scalars([a, x]))


def igamma_grad_a(a, x):
    return igamma_grad_a_p.bind(*coerce_scalars([a, x]))


def random_gamma_grad(a, x):
    """d sample / d a for samples x of Gamma(a, 1); broadcasts its operands as JAX's does."""
    a, x = coerce_scalars([a, x])
    a, x = _broadcast_pair(a, x)
    if core.get_aval(x).dtype != core.get_aval(a).dtype:
        from .elementwise import convert_element_type
        x = convert_element_type(x, core.get_aval(a).dtype)
    return random_gamma_grad_p.bind(a, x)


def _broadcast_pair(a, x):
    from .shape import broadcast_in_dim
    shape = np.broadcast_shapes(core.get_aval(a).shape, core.get_aval(x).shape)
    out = []
    for v in (a, x):
        aval = core.get_aval(v)
        if aval.shape != shape:
            v = broadcast_in_dim(v, shape, tuple(range(len(shape) - aval.ndim, len(shape))))
        out.append(v)
    return out


def betainc(a, b, x):
    return regularized_incomplete_beta_p.bind(*coerce_scalars([a, b, x]))


def zeta(x, q):
    return zeta_p.bind(*coerce_scalars([x, q]))


def bessel_i0e(x):
    return bessel_i0e_p.bind(*coerce_scalars([x]))


def bessel_i1e(x):
    return bessel_i1e_p.bind(*coerce_scalars([x]))


def erfc(x):
    return erfc_p.bind(*coerce_scalars([x]))


def ndtri(p):
    return ndtri_p.bind(*coerce_scalars([p]))


# ---------------------------------------------------------------- differentiation rules
from ..interpreters import ad, batching  # noqa: E402
from .elementwise import (_c, add, div, exp, log, log1p, mul, neg, select, sign,  # noqa: E402
                          sub, abs as _abs, gt)


def full_like_aval(value, x):
    return ad.broadcast_to_aval(_c(value, x), core.get_aval(x))


def _betainc_gradx(t, a, b, x):
    log_beta = sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
    density = exp(sub(add(mul(sub(b, _c(1, b)), log1p(neg(x))), mul(sub(a, _c(1, a)), log(x))), log_beta))
    return mul(density, t)


def _betainc_grad_ab(t, a, b, x):
    raise ValueError("Betainc gradient with respect to a and b not supported.")


def _igamma_gradx(t, a, x):
    return mul(t, exp(sub(add(neg(x), mul(sub(a, _c(1, a)), log(x))), lgamma(a))))


def _polygamma_gradm(t, m, x):
    raise ValueError("polygamma gradient with respect to m is not supported")


def _bessel_i1e_jvp(t, ans, x):
    # d/dx i1e = i0e - i1e (sign(x) + 1/x), with the limit 1/2 at x = 0.
    eps = dtypes.finfo(core.get_aval(x).dtype).eps
    not_tiny = gt(_abs(x), _c(eps, x))
    safe_x = select(not_tiny, x, full_like_aval(eps, x))
    slope = sub(bessel_i0e(safe_x), mul(ans, add(sign(safe_x), div(_c(1, x), safe_x))))
    return mul(t, select(not_tiny, slope, full_like_aval(0.5, x)))


_SQRT_PI = np.sqrt(np.pi)
ad.defjvp(lgamma_p, lambda t, x: mul(t, digamma(x)))
ad.defjvp(digamma_p, lambda t, x: mul(t, polygamma(_c(1, x), x)))
ad.defjvp(polygamma_p, _polygamma_gradm, lambda t, m, x: mul(t, polygamma(add(m, _c(1, m)), x)))
ad.defjvp(igamma_p, lambda t, a, x: mul(t, igamma_grad_a(a, x)), _igamma_gradx)
ad.defjvp(igammac_p, lambda t, a, x: neg(mul(t, igamma_grad_a(a, x))),
          lambda t, a, x: neg(_igamma_gradx(t, a, x)))
ad.defjvp(regularized_incomplete_beta_p, _betainc_grad_ab, _betainc_grad_ab, _betainc_gradx)
ad.defjvp2(bessel_i0e_p, lambda t, ans, x: mul(t, sub(bessel_i1e(x), mul(sign(x), ans))))
ad.defjvp2(bessel_i1e_p, _bessel_i1e_jvp)
ad.defjvp(erfc_p, lambda t, x: mul(_c(-2 / _SQRT_PI, x), mul(t, exp(neg(mul(x, x))))))
# d ndtri(p)/dp = 1 / pdf(ndtri(p)) = sqrt(2 pi) exp(ndtri(p)^2 / 2)
ad.defjvp2(ndtri_p, lambda t, ans, p: mul(t, mul(_c(np.sqrt(2 * np.pi), p),
                                                 exp(mul(_c(0.5, ans), mul(ans, ans))))))
# zeta, igamma_grad_a and random_gamma_grad have no derivative rules in JAX either.

# ---------------------------------------------------------------- batching rules
for _p in (lgamma_p, digamma_p, bessel_i0e_p, bessel_i1e_p, erfc_p, ndtri_p):
    batching.defvectorized(_p)
for _p in (polygamma_p, igamma_p, igammac_p, igamma_grad_a_p, random_gamma_grad_p,
           regularized_incomplete_beta_p, zeta_p):
    batching.defbroadcasting(_p)


def _check_eager_applications():
    from ._base import check_eagerly
    check_eagerly(*_PRIMS)


_check_eager_applications()


def bernoulli_over_factorial(count):
    """B_2j / (2j)! for j = 1..count (the Euler-Maclaurin coefficients), from the exact
    Bernoulli numbers (Akiyama-Tanigawa algorithm in rationals)."""
    from fractions import Fraction
    n_max = 2 * count
    column = [Fraction(0)] * (n_max + 1)
    bernoulli = []
    for m in range(n_max + 1):
        column[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            column[j - 1] = j * (column[j - 1] - column[j])
        bernoulli.append(column[0])
    return tuple(float(bernoulli[2 * j] / math.factorial(2 * j)) for j in range(1, count + 1))

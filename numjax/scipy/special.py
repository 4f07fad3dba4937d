"""numjax.scipy.special: scipy.special's API over lax, as jax.scipy.special."""
import numpy as np

from .. import core, lax
from .. import numpy as jnp
from ..custom_derivatives import custom_jvp
from ..lax import special as _lax_special
from ..lax.special import bernoulli_over_factorial as _bernoulli_over_factorial
from ..numpy._util import asarray_leaf, promote_args_inexact, reduction_axes

__all__ = ["betainc", "betaln", "beta", "comb", "digamma", "entr", "erf", "erfc", "erfinv",
           "expit", "factorial", "gamma", "gammainc", "gammaincc", "gammaln", "gammasgn", "i0",
           "i0e", "i1", "i1e", "kl_div", "log_ndtr", "log_softmax", "logit", "logsumexp",
           "multigammaln", "ndtr", "ndtri", "polygamma", "rel_entr", "softmax", "xlog1py",
           "xlogy", "zeta"]


def _const(x, value):
    """``value`` in x's dtype, weak so it never changes a result's type."""
    from ..array import Array
    return Array(np.asarray(value, dtype=core.get_aval(x).dtype), True)


def _strong(x):
    """x without its weak type (what jnp.asarray gives in JAX)."""
    aval = core.get_aval(x)
    return lax._convert_element_type(x, aval.dtype, False) if aval.weak_type else x


def _full_like(x, value, weak=True):
    from ..array import Array
    c = Array(np.asarray(value, dtype=core.get_aval(x).dtype), weak)
    return lax.broadcast_in_dim(c, core.get_aval(x).shape, ())


def _unary(name, lax_fn):
    def fn(x):
        (x,) = promote_args_inexact(name, x)
        return lax_fn(x)
    fn.__name__ = name
    return fn


def _binary(name, lax_fn):
    def fn(a, b):
        a, b = promote_args_inexact(name, a, b)
        return lax_fn(a, b)
    fn.__name__ = name
    return fn


# ---------------------------------------------------------------- error function family
erf = _unary("erf", lax.erf)
erfc = _unary("erfc", lax.erfc)
erfinv = _unary("erfinv", lax.erf_inv)
expit = _unary("expit", lax.logistic)


@custom_jvp
def logit(x):
    (x,) = promote_args_inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(_const(x, 1), x)))


logit.defjvps(lambda t, ans, x: lax.div(t, lax.mul(x, lax.sub(_const(x, 1), x))))


# ---------------------------------------------------------------- gamma family
gammaln = _unary("gammaln", lax.lgamma)
digamma = _unary("digamma", lax.digamma)
gammainc = _binary("gammainc", lax.igamma)
gammaincc = _binary("gammaincc", lax.igammac)
i0e = _unary("i0e", lax.bessel_i0e)
i1e = _unary("i1e", lax.bessel_i1e)


def betainc(a, b, x):
    a, b, x = promote_args_inexact("betainc", a, b, x)
    return lax.betainc(a, b, x)


def i0(x):
    (x,) = promote_args_inexact("i0", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i0e(x))


def i1(x):
    (x,) = promote_args_inexact("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x))


def gammasgn(x):
    """The sign of the gamma function: NaN at its poles and for NaN, -1 where it is negative
    (between -2k-1 and -2k, and at -0.0)."""
    (x,) = promote_args_inexact("gammasgn", x)
    floor_x = lax.floor(x)
    negative = lax.lt(x, _const(x, 0))
    is_nan = lax.ne(x, x)
    pole = lax.bitwise_or(lax.bitwise_and(negative, lax.eq(x, floor_x)), is_nan)
    odd_floor = lax.ne(lax.rem(floor_x, _const(x, 2)), _const(x, 0))
    neg_zero = _negative_zero(x)
    minus = lax.bitwise_or(lax.bitwise_and(negative, odd_floor), neg_zero)
    # Strongly typed constants, as JAX's (its gammasgn result is never weak).
    out = lax.select(minus, _full_like(x, -1.0, False), _full_like(x, 1.0, False))
    return lax.select(pole, _full_like(x, np.nan, False), out)


def _negative_zero(x):
    return lax.bitwise_and(lax.eq(x, _const(x, 0)), lax.lt(lax.div(_const(x, 1), x), _const(x, 0)))


def gamma(x):
    (x,) = promote_args_inexact("gamma", x)
    return lax.mul(gammasgn(x), lax.exp(lax.lgamma(x)))


def betaln(a, b):
    a, b = promote_args_inexact("betaln", a, b)
    return lax.sub(lax.add(lax.lgamma(a), lax.lgamma(b)), lax.lgamma(lax.add(a, b)))


def beta(a, b):
    a, b = promote_args_inexact("beta", a, b)
    sign = lax.mul(lax.mul(gammasgn(a), gammasgn(b)), gammasgn(lax.add(a, b)))
    return lax.mul(sign, lax.exp(betaln(a, b)))


def factorial(n, exact=False):
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = promote_args_inexact("factorial", n)
    return jnp.where(lax.lt(n, _const(n, 0)), 0, lax.exp(lax.lgamma(lax.add(n, _const(n, 1)))))


def comb(N, k, *, exact=False, repetition=False):
    if exact:
        raise NotImplementedError("comb with exact=True")
    N, k = promote_args_inexact("comb", N, k)
    if repetition:
        trivial = lax.bitwise_and(lax.eq(k, _const(k, 0)), lax.ge(N, _const(N, 0)))
        return jnp.where(trivial, 1.0, comb(lax.sub(lax.add(N, k), _const(N, 1)), k))
    valid = lax.bitwise_and(lax.bitwise_and(lax.le(k, N), lax.ge(N, _const(N, 0))),
                            lax.ge(k, _const(k, 0)))
    safe_n, safe_k = jnp.where(valid, N, 0.0), jnp.where(valid, k, 0.0)
    one = _const(safe_n, 1)
    log_comb = lax.sub(lax.sub(gammaln(lax.add(safe_n, one)), gammaln(lax.add(safe_k, one))),
                       gammaln(lax.sub(lax.add(safe_n, one), safe_k)))
    return jnp.where(valid, lax.exp(log_comb), 0.0)


def multigammaln(a, d):
    """log of the multivariate gamma function of dimension ``d`` (a concrete int)."""
    if isinstance(d, core.Tracer):
        from ..errors import ConcretizationTypeError
        raise ConcretizationTypeError(d, "The d argument of multigammaln must be a concrete int.")
    d = int(d)
    a, d_arr = promote_args_inexact("multigammaln", a, d)
    constant = lax.mul(lax.mul(lax.mul(_const(a, 0.25), d_arr), lax.sub(d_arr, _const(a, 1))),
                       lax.log(_const(a, np.pi)))
    halves = lax.div(jnp.arange(d, dtype=core.get_aval(d_arr).dtype), _const(a, 2))
    rank = core.get_aval(a).ndim
    terms = gammaln(jnp.expand_dims(a, -1) - jnp.expand_dims(halves, tuple(range(rank))))
    return jnp.sum(terms, axis=-1) + constant


def polygamma(n, x):
    n_dtype = core.get_aval(asarray_leaf(n)).dtype
    if not np.issubdtype(n_dtype, np.integer):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype {n_dtype}.")
    n, x = promote_args_inexact("polygamma", n, x)
    return lax.polygamma(n, x)


# ---------------------------------------------------------------- Hurwitz zeta

@custom_jvp
def zeta(x, q=None):
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None to "
                                  "compute the Hurwitz Zeta function.")
    x, q = promote_args_inexact("zeta", x, q)
    return lax.zeta(x, q)


def _zeta_euler_maclaurin(s, q):
    """zeta(s, q) as differentiable lax ops: n direct terms, the integral of the rest and
    Euler-Maclaurin corrections with the Bernoulli numbers B_2j / (2j)!.  Used only for the
    derivative (the value comes from the primitive)."""
    f64 = core.get_aval(q).dtype == np.float64
    n_terms = 16 if f64 else 8
    total = None
    for k in range(n_terms):
        term = jnp.power(q + k, -s)
        total = term if total is None else total + term
    w = q + n_terms
    tail = jnp.power(w, 1 - s) / (s - 1) + 0.5 * jnp.power(w, -s)
    rising = s
    power = jnp.power(w, -s - 1)
    for j, coeff in enumerate(_EM_COEFFS[:n_terms]):
        tail = tail + coeff * rising * power
        rising = rising * (s + 2 * j + 1) * (s + 2 * j + 2)
        power = power / (w * w)
    return total + tail


# B_2j / (2j)! for j = 1, 2, ...
_EM_COEFFS = _bernoulli_over_factorial(16)


def _zeta_jvp(primals, tangents):
    from ..ad_api import jvp
    x, q = primals
    x, q = promote_args_inexact("zeta", x, q)
    tx, tq = (lax._convert_element_type(t, core.get_aval(x).dtype) for t in tangents)
    _, t_out = jvp(_zeta_euler_maclaurin, (x, q), (tx, tq))
    return zeta(x, q), t_out


zeta.defjvp(_zeta_jvp)


# ---------------------------------------------------------------- xlogy family and entropies

def _x_times_log(name, log, log_arg):
    """``x * log(y)`` that is 0 where x == 0 (unless y is NaN), with its jvp; ``log_arg(y)``
    is what ``log`` takes the logarithm of, whose reciprocal is the derivative in y."""
    @custom_jvp
    def fn(x, y):
        x, y = promote_args_inexact(name, x, y)
        keep = lax.bitwise_or(lax.ne(x, _const(x, 0)), lax.ne(y, y))
        return jnp.where(keep, lax.mul(x, log(y)), jnp.zeros_like(x))

    def jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        out = fn(x, y)
        return out, (tx * log(y) + ty * x / log_arg(y)).astype(out.dtype)

    fn.defjvp(jvp)
    fn.__name__ = fn.__qualname__ = name
    return fn


xlogy = _x_times_log("xlogy", lax.log, lambda y: y)
xlog1py = _x_times_log("xlog1py", lax.log1p, lambda y: 1 + y)


@custom_jvp
def _xlogx(x):
    return xlogy(x, x)


def _xlogx_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _xlogx(x), t * (lax.log(x) + 1)


_xlogx.defjvp(_xlogx_jvp)


def entr(x):
    (x,) = promote_args_inexact("entr", x)
    return lax.select(lax.lt(x, _const(x, 0)), _full_like(x, -np.inf), lax.neg(_xlogx(x)))


def rel_entr(p, q):
    p, q = promote_args_inexact("rel_entr", p, q)
    zero = _const(p, 0.0)
    both_positive = lax.bitwise_and(lax.gt(p, zero), lax.gt(q, zero))
    p_zero = lax.bitwise_and(lax.eq(p, zero), lax.ge(q, zero))
    safe_p = jnp.where(both_positive, p, 1)
    safe_q = jnp.where(both_positive, q, 1)
    value = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
    return jnp.where(both_positive, value, jnp.where(p_zero, zero, np.inf))


def kl_div(p, q):
    p, q = promote_args_inexact("kl_div", p, q)
    return rel_entr(p, q) - p + q


# ---------------------------------------------------------------- normal distribution

def _float_operand(x, name):
    x = _strong(jnp.asarray(x))   # Python scalars become strongly typed, as in JAX
    dtype = core.get_aval(x).dtype
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={dtype.name} is not supported, see docstring for supported types.")
    return x


def ndtr(x):
    """The standard normal CDF."""
    return _ndtr(_float_operand(x, "ndtr"))


def _ndtr(x):
    # 1 + erf near the median, erfc (accurate in relative terms) in the tails.
    half_sqrt_2 = _const(x, 0.5 * np.sqrt(2.0))
    w = lax.mul(x, half_sqrt_2)
    z = lax.abs(w)
    tails = lax.select(lax.gt(w, _const(x, 0)), lax.sub(_const(x, 2), lax.erfc(z)), lax.erfc(z))
    y = lax.select(lax.lt(z, half_sqrt_2), lax.add(_const(x, 1), lax.erf(w)), tails)
    return lax.mul(_const(x, 0.5), y)


def ndtri(p):
    """The standard normal quantile (inverse of ndtr)."""
    return _lax_special.ndtri(_float_operand(p, "ndtri"))


# Below the lower bound log_ndtr uses the asymptotic series, above the upper bound
# log(1 - q) ~ -q; between them log(ndtr(x)) (the bounds JAX uses per dtype).
_LOG_NDTR_BOUNDS = {np.dtype(np.float32): (-10.0, 5.0), np.dtype(np.float64): (-20.0, 8.0)}


def _double_factorial(n):
    return float(np.prod(np.arange(n, 1, -2))) if n > 1 else 1.0


def _log_ndtr_lower(x, series_order):
    x2 = lax.mul(x, x)
    log_scale = lax.sub(lax.sub(lax.mul(_const(x, -0.5), x2), lax.log(lax.neg(x))),
                        _const(x, 0.5 * np.log(2 * np.pi)))
    # 1 - 1/x^2 + 3/x^4 - 15/x^6 + ...
    series = _full_like(x, 1.0)
    x2n = x2
    for n in range(1, series_order + 1):
        term = lax.div(_const(x, _double_factorial(2 * n - 1)), x2n)
        series = lax.sub(series, term) if n % 2 else lax.add(series, term)
        x2n = lax.mul(x2n, x2)
    return lax.add(log_scale, lax.log(series))


def _check_series_order(series_order):
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")


def _log_ndtr_value(x, series_order):
    _check_series_order(series_order)
    x = _strong(jnp.asarray(x))
    dtype = core.get_aval(x).dtype
    if dtype not in _LOG_NDTR_BOUNDS:
        raise TypeError(f"x.dtype={dtype.name} is not supported.")
    lower, upper = (_const(x, b) for b in _LOG_NDTR_BOUNDS[dtype])
    above = lax.gt(x, upper)
    ndtr_value = _ndtr(jnp.where(above, lax.neg(x), lax.max(x, lower)))
    middle_or_lower = jnp.where(lax.gt(x, lower), lax.log(ndtr_value),
                                _log_ndtr_lower(lax.min(x, lower), series_order))
    return jnp.where(above, lax.neg(ndtr_value), middle_or_lower)


def log_ndtr(x, series_order=3):
    """log of the standard normal CDF, accurate far into both tails."""
    return _log_ndtr(x, series_order)


def _log_ndtr_fn(x, series_order):
    return _log_ndtr_value(x, series_order)


_log_ndtr = custom_jvp(_log_ndtr_fn, nondiff_argnums=(1,))


def _norm_logpdf(x):
    return lax.sub(lax.mul(_const(x, -0.5), lax.mul(x, x)), _const(x, np.log(np.sqrt(2 * np.pi))))


def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    ans = _log_ndtr(x, series_order)
    return ans, lax.mul(t, lax.exp(lax.sub(_norm_logpdf(x), ans)))


_log_ndtr.defjvp(_log_ndtr_jvp)


# ---------------------------------------------------------------- logsumexp and softmax

def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over ``axis``, computed around the maximum so it neither overflows
    nor underflows; the maximum is a constant to autodiff, so gradients are softmax weights."""
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a, b = promote_args_inexact("logsumexp", a, b)
        a = jnp.where(b != 0, a, -np.inf)
    else:
        (a,) = promote_args_inexact("logsumexp", a)
    ndim = core.get_aval(a).ndim
    dims = reduction_axes(axis, ndim)
    masked = a if where is None else jnp.where(where, a, -np.inf)
    # (A strongly typed maximum, so the result is never weak, as JAX's.)
    amax = lax.max(lax.reduce_max(masked, dims), _strong(_const(a, -np.inf)))
    amax = lax.stop_gradient(lax.select(lax.is_finite(amax), amax, _full_like(amax, 0)))
    exp_a = lax.exp(lax.sub(a, _expand_to(amax, a, dims)))
    if b is not None:
        exp_a = lax.mul(exp_a, b)
    if where is not None:
        exp_a = jnp.where(where, exp_a, 0)
    sumexp = lax.reduce_sum(exp_a, dims)
    sign = lax.sign(sumexp)
    out = lax.add(lax.log(lax.abs(sumexp)), amax)
    if keepdims:
        out, sign = lax.expand_dims(out, dims), lax.expand_dims(sign, dims)
    if return_sign:
        return out, sign
    if b is not None:
        out = jnp.where(lax.lt(sign, _const(sign, 0)), np.nan, out)
    return out


def _expand_to(reduced, full, dims):
    """``reduced`` (``full`` reduced over ``dims``) broadcast back to full's shape."""
    shape = core.get_aval(full).shape
    kept = tuple(i for i in range(len(shape)) if i not in dims)
    return lax.broadcast_in_dim(reduced, shape, kept)


def softmax(x, axis=-1):
    (x,) = promote_args_inexact("softmax", x)
    dims = reduction_axes(axis, core.get_aval(x).ndim)
    unnormalized = lax.exp(lax.sub(x, lax.stop_gradient(_expand_to(lax.reduce_max(x, dims), x, dims))))
    return lax.div(unnormalized, _expand_to(lax.reduce_sum(unnormalized, dims), x, dims))


def log_softmax(x, axis=-1):
    (x,) = promote_args_inexact("log_softmax", x)
    dims = reduction_axes(axis, core.get_aval(x).ndim)
    shifted = lax.sub(x, lax.stop_gradient(_expand_to(lax.reduce_max(x, dims), x, dims)))
    shifted_logsumexp = lax.log(lax.reduce_sum(lax.exp(shifted), dims))
    return lax.sub(shifted, _expand_to(shifted_logsumexp, x, dims))

"""Scalar special functions that generated code calls as ``sp.<name>`` (and that eager
evaluation uses where scipy has no counterpart).

Every function computes in float64 whatever its argument types, and the generated code casts
the result to the program's dtype, so float32 results are correctly rounded float64 values.
The algorithms are the textbook ones: power series and continued fractions (modified Lentz),
recurrences that move the argument into the range of an asymptotic expansion, and
Euler-Maclaurin summation for the Hurwitz zeta function.

How they are compiled (as ``vmath`` and ``scalar_helpers``): plain Python functions, read by
``pyir`` (the LLVM backend inlines them into region kernels), run as Python in debug mode
(``PLAIN``), and rebound by ``ensure_jitted()`` to ``numba.njit`` dispatchers for the Numba
backend -- not inlined there: each is compiled once, cached, and called.  Importing this
module imports no Numba.  The Numba backend's generated code and eager evaluation read the
public functions as ``special_helpers.<name>``: that attribute access jits the module first
(``_JitOnAccess``), so they always get dispatchers.

The bodies are written in the subset both compilers take with the same meaning: loops are
``while`` loops with a ``done`` flag (no ``break``/``continue``, and no ``for`` over a
constant range, which ``pyir`` may unroll), integrality tests use ``np.floor`` (a float;
``math.floor`` is an int64 in Numba, undefined beyond 2**63), tables are arrays, and arguments
are converted by ``np.float64`` (Numba's ``float()`` keeps a float32 a float32).
"""
import math
import sys
import types

import numpy as np

from .inline_registry import InlineRegistry

# Not inlined under Numba (large functions, called from many kernels): cached and called.
_jit = InlineRegistry(globals(), cache=True, nogil=True, error_model="numpy")
JIT_FUNCTIONS = _jit.functions


def ensure_jitted():
    """Rebind every function of this module to its Numba dispatcher (idempotent, thread-safe).
    Reading a public function as a module attribute does this first (see ``_JitOnAccess``)."""
    _jit.jit_all()


_EPS = 2.220446049250313e-16
_TINY = 1e-300
_MAXITER = 2000
_NAN = math.nan
_INF = math.inf
_LOG_MAX = 709.782712893384   # log of the largest float64


@_jit
def _is_pole(x):
    return x <= 0.0 and x == np.floor(x)


# ---------------------------------------------------------------- gamma family

@_jit
def lgamma(x):
    x = np.float64(x)
    if _is_pole(x):
        return _INF
    return math.lgamma(x)


@_jit
def digamma(x):
    x = np.float64(x)
    if x != x or _is_pole(x):
        return _NAN
    if x == _INF:
        return _INF
    acc = 0.0
    if x < 0.0:
        # Reflection: psi(x) = psi(1 - x) - pi / tan(pi x).
        acc = -math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 10.0:
        acc -= 1.0 / x
        x += 1.0
    # Asymptotic expansion: log x - 1/(2x) - sum B_2k / (2k x^2k).
    z = 1.0 / (x * x)
    tail = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (
        1.0 / 132 - z * (691.0 / 32760 - z / 12.0))))))
    return acc + math.log(x) - 0.5 / x - tail


from numjax.lax.special import bernoulli_over_factorial  # noqa: E402

_EM_COEFFS = np.array(bernoulli_over_factorial(13), np.float64)
_EM_TERMS = len(_EM_COEFFS)


@_jit
def zeta(s, q):
    """Hurwitz zeta: the sum over k >= 0 of (q + k) ** -s."""
    s, q = np.float64(s), np.float64(q)
    if s != s or q != q:
        return _NAN
    if s == 1.0:
        return _INF
    if s < 1.0:
        return _NAN
    if q <= 0.0:
        if q == np.floor(q):
            return _INF
        if s != np.floor(s) or s == _INF:
            return _NAN   # a negative base to a fractional (or infinite) power
    total = 0.0
    w = q
    # Sum directly until the Euler-Maclaurin tail converges fast (its terms shrink like
    # ((s + 2j) / (2 pi w))^2j).
    big = s > 200.0
    done = False
    while w < 10.0 + s and not done:
        term = w ** -s
        # For big s, once w > 0 the terms (positive, decreasing) soon stop changing the sum,
        # and the rest would not change it either: stopping there gives the same bits (and
        # ends the loop when s is too large to count up to).  A NaN sum stays NaN.
        done = big and w > 0.0 and (total + term == total or total != total)
        total += term
        w += 1.0
    if big:
        # The tail is below rounding of the last term (it underflows to zero once w >= 10 + s);
        # avoid the diverging correction series.
        return total + w ** -s
    tail = w ** (1.0 - s) / (s - 1.0) + 0.5 * w ** -s
    rising = s                # s (s+1) ... (s+2j-2)
    power = w ** (-s - 1.0)   # w ** (-s - 2j + 1)
    inv_w2 = 1.0 / (w * w)
    j = 0
    done = False
    while j < _EM_TERMS and not done:
        term = _EM_COEFFS[j] * rising * power
        tail += term
        done = abs(term) <= _EPS * abs(total + tail)
        rising *= (s + 2 * j + 1) * (s + 2 * j + 2)
        power *= inv_w2
        j += 1
    return total + tail


@_jit
def polygamma(m, x):
    m, x = np.float64(m), np.float64(x)
    if m != m or x != x or m < 0.0 or m != np.floor(m) or m == _INF:
        return _NAN
    if m == 0.0:
        return digamma(x)
    # psi^(m)(x) = (-1)^(m+1) m! zeta(m + 1, x)
    sign = 1.0 if int(m) % 2 == 1 else -1.0
    return sign * math.exp(math.lgamma(m + 1.0)) * zeta(m + 1.0, x)


# ---------------------------------------------------------------- incomplete gamma

@_jit
def _log_prefactor(a, x):
    # log(x^a e^-x / Gamma(a)): P(a, x) and Q(a, x) are this times a series or fraction.
    return a * math.log(x) - x - math.lgamma(a)


@_jit
def _use_fraction(a, x):
    return x > 1.0 and x > a


@_jit
def _igamma_series(a, x):
    """P(a, x) = prefactor * sum c_n, with c_0 = 1/a and c_n = c_{n-1} x / (a + n)."""
    log_ax = _log_prefactor(a, x)
    if log_ax < -_LOG_MAX:
        return 0.0
    c = 1.0 / a
    total = c
    r = a
    n = 0
    done = False
    while n < _MAXITER and not done:
        r += 1.0
        c *= x / r
        total += c
        done = c <= total * _EPS
        n += 1
    return total * math.exp(log_ax)


@_jit
def _igammac_fraction(a, x):
    """Q(a, x) = prefactor / (x + 1 - a - 1(1-a) / (x + 3 - a - 2(2-a) / ...)), by Lentz."""
    log_ax = _log_prefactor(a, x)
    if log_ax < -_LOG_MAX:
        return 0.0
    b = x + 1.0 - a
    c = 1.0 / _TINY
    d = 1.0 / b
    h = d
    i = 1
    done = False
    while i < _MAXITER and not done:
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        if abs(d) < _TINY:
            d = _TINY
        c = b + an / c
        if abs(c) < _TINY:
            c = _TINY
        d = 1.0 / d
        delta = d * c
        h *= delta
        done = abs(delta - 1.0) < _EPS
        i += 1
    return math.exp(log_ax) * h


@_jit
def _igamma_domain(a, x):
    """NaN for arguments outside the domain, -1.0 when the general case applies, else the
    value at the boundary (as XLA defines it)."""
    if a != a or x != x or x < 0.0 or a < 0.0 or a == _INF:
        return _NAN
    if a == 0.0:
        return 1.0 if x > 0.0 else _NAN
    if x == 0.0:
        return 0.0
    if x == _INF:
        return 1.0
    return -1.0


@_jit
def _igamma_pair(a, x):
    """(P(a, x), Q(a, x)): whichever of the series and the continued fraction converges fast
    here gives one of them, and the other is its complement."""
    edge = _igamma_domain(a, x)
    if edge != -1.0:
        return edge, 1.0 - edge
    if _use_fraction(a, x):
        q = _igammac_fraction(a, x)
        return 1.0 - q, q
    p = _igamma_series(a, x)
    return p, 1.0 - p


@_jit
def igamma(a, x):
    return _igamma_pair(np.float64(a), np.float64(x))[0]


@_jit
def igammac(a, x):
    return _igamma_pair(np.float64(a), np.float64(x))[1]


@_jit
def _series_and_derivative(a, x):
    """(S, dS/da) for P(a, x) = prefactor * S, S = sum c_n as in _igamma_series."""
    c = 1.0 / a
    dc = -c / a
    total, dtotal = c, dc
    r = a
    n = 0
    done = False
    while n < _MAXITER and not done:
        r += 1.0
        c_next = c * x / r
        dc = dc * x / r - c_next / r
        c = c_next
        total += c
        dtotal += dc
        done = abs(c) <= abs(total) * _EPS and abs(dc) <= abs(dtotal) * _EPS
        n += 1
    return total, dtotal


@_jit
def _fraction_and_derivative(a, x):
    """(h, dh/da) for Q(a, x) = prefactor * h, h = 1 / (b0 + a1 / (b1 + ...)) with
    b_n = x + 2n + 1 - a and a_n = -n (n - a), by the three-term recurrence for the
    convergents differentiated in a (the Lentz form has no simple derivative)."""
    a_prev, b_prev = 1.0, 0.0         # A_{n-2}, B_{n-2}
    da_prev, db_prev = 0.0, 0.0
    a_cur, b_cur = x + 1.0 - a, 1.0   # A_{n-1}, B_{n-1}
    da_cur, db_cur = -1.0, 0.0
    h = b_cur / a_cur
    dh = db_cur / a_cur - h * da_cur / a_cur
    n = 1
    done = False
    while n < _MAXITER and not done:
        an = -n * (n - a)
        bn = x + 2.0 * n + 1.0 - a
        a_new = bn * a_cur + an * a_prev
        b_new = bn * b_cur + an * b_prev
        da_new = -a_cur + bn * da_cur + n * a_prev + an * da_prev
        db_new = -b_cur + bn * db_cur + n * b_prev + an * db_prev
        a_prev, b_prev, da_prev, db_prev = a_cur, b_cur, da_cur, db_cur
        a_cur, b_cur, da_cur, db_cur = a_new, b_new, da_new, db_new
        if a_cur != 0.0:   # (true for NaN too) no convergent where A_n is zero
            h_new = b_cur / a_cur
            dh_new = db_cur / a_cur - h_new * da_cur / a_cur
            done = abs(h_new - h) <= _EPS * abs(h_new) and abs(dh_new - dh) <= _EPS * abs(dh_new)
            h, dh = h_new, dh_new
            scale = abs(a_cur)
            if not done and scale > 1e100:   # keep the convergents representable
                inv = 1.0 / scale
                a_prev *= inv
                b_prev *= inv
                da_prev *= inv
                db_prev *= inv
                a_cur *= inv
                b_cur *= inv
                da_cur *= inv
                db_cur *= inv
        n += 1
    return h, dh


@_jit
def _derivative_domain(a, x):
    if a != a or x != x or x < 0.0 or a <= 0.0:
        return _NAN
    if x == 0.0:
        return 0.0
    return -1.0


@_jit
def _dp_da_over_prefactor(a, x):
    """dP(a, x)/da divided by the prefactor: P = prefactor * S from the series, or
    1 - prefactor * h from the continued fraction, each differentiated in a."""
    dlog = math.log(x) - digamma(a)   # d(log prefactor)/da
    if _use_fraction(a, x):
        h, dh = _fraction_and_derivative(a, x)
        return -(dlog * h + dh)
    s, ds = _series_and_derivative(a, x)
    return dlog * s + ds


@_jit
def igamma_grad_a(a, x):
    """dP(a, x)/da."""
    a, x = np.float64(a), np.float64(x)
    edge = _derivative_domain(a, x)
    if edge != -1.0:
        return edge
    log_ax = _log_prefactor(a, x)
    if log_ax < -_LOG_MAX:
        return 0.0
    return math.exp(log_ax) * _dp_da_over_prefactor(a, x)


@_jit
def random_gamma_grad(a, x):
    """d sample / d a for a Gamma(a, 1) sample x: -(dP/da) / (dP/dx), where dP/dx is the
    prefactor over x (so the prefactor cancels and never underflows)."""
    a, x = np.float64(a), np.float64(x)
    edge = _derivative_domain(a, x)
    if edge != -1.0:
        return edge
    return -x * _dp_da_over_prefactor(a, x)


# ---------------------------------------------------------------- incomplete beta

@_jit
def _beta_fraction(a, b, x):
    """The continued fraction of I_x(a, b) (x below the mean), by modified Lentz."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    if abs(d) < _TINY:
        d = _TINY
    d = 1.0 / d
    h = d
    m = 1
    done = False
    while m < _MAXITER and not done:
        m2 = 2.0 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        if abs(d) < _TINY:
            d = _TINY
        c = 1.0 + aa / c
        if abs(c) < _TINY:
            c = _TINY
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        if abs(d) < _TINY:
            d = _TINY
        c = 1.0 + aa / c
        if abs(c) < _TINY:
            c = _TINY
        d = 1.0 / d
        delta = d * c
        h *= delta
        done = abs(delta - 1.0) < _EPS
        m += 1
    return h


@_jit
def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    a, b, x = np.float64(a), np.float64(b), np.float64(x)
    if a != a or b != b or x != x or a < 0.0 or b < 0.0 or x < 0.0 or x > 1.0:
        return _NAN
    if a == 0.0 or b == 0.0:
        if a == 0.0 and b == 0.0:
            return _NAN
        return 1.0 if a == 0.0 else 0.0
    if x == 0.0 or x == 1.0:
        return x
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    # Below the mean the fraction of I_x(a, b), above it that of I_{1-x}(b, a) = 1 - I_x(a, b)
    # (one call site: the fraction is expanded once where it is inlined).
    lower = x < (a + 1.0) / (a + b + 2.0)
    p, q, y = (a, b, x) if lower else (b, a, 1.0 - x)
    front = math.exp(log_front) * _beta_fraction(p, q, y) / p
    return front if lower else 1.0 - front


# ---------------------------------------------------------------- modified Bessel I0, I1

_BESSEL_SWITCH = 20.0   # power series below, asymptotic expansion above


@_jit
def _bessel_scaled(nu, x):
    """exp(-x) I_nu(x) for x >= 0 and nu in {0, 1}."""
    if x == _INF:
        return 0.0
    if x < _BESSEL_SWITCH:
        # sum (x/2)^(2k+nu) / (k! (k+nu)!), positive terms: no cancellation.
        half = 0.5 * x
        term = half if nu == 1 else 1.0
        total = term
        q = half * half
        k = 1
        done = False
        while k < 500 and not done:
            term *= q / (k * (k + nu))
            total += term
            done = term <= total * _EPS
            k += 1
        return total * math.exp(-x)
    # exp(-x) I_nu(x) ~ (2 pi x)^-1/2 sum_k (-1)^k prod_{j<=k} (4nu^2 - (2j-1)^2) / (k! (8x)^k)
    mu = 4.0 * nu * nu
    term = 1.0
    total = 1.0
    k = 1
    done = False
    while k < 60 and not done:
        odd = 2 * k - 1
        nxt = -term * (mu - odd * odd) / (k * 8.0 * x)
        if abs(nxt) >= abs(term):   # the asymptotic series starts to diverge
            done = True
        else:
            term = nxt
            total += term
            done = abs(term) <= _EPS * abs(total)
        k += 1
    return total / math.sqrt(2.0 * math.pi * x)


@_jit
def bessel_i0e(x):
    x = np.float64(x)
    if x != x:
        return _NAN
    return _bessel_scaled(0, abs(x))


@_jit
def bessel_i1e(x):
    x = np.float64(x)
    if x != x:
        return _NAN
    v = _bessel_scaled(1, abs(x))
    return -v if x < 0.0 else v


# ---------------------------------------------------------------- normal quantile

@_jit
def _ndtr(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


@_jit
def ndtri(p):
    """The standard normal quantile, by Newton's method on Phi(x) = p (Phi through erfc is
    accurate in relative terms far into the lower tail; the upper tail uses symmetry)."""
    p = np.float64(p)
    if p != p or p < 0.0 or p > 1.0:
        return _NAN
    if p == 0.0:
        return -_INF
    if p == 1.0:
        return _INF
    upper = p > 0.5
    if upper:   # by symmetry (no recursion: Numba's cache cannot link recursive functions)
        p = 1.0 - p
    # Starting point: the tail asymptote, or a linearisation near the median.
    if p < 0.02:
        t = -2.0 * math.log(p)
        x = -math.sqrt(t - math.log(t) - math.log(2.0 * math.pi))
    else:
        x = (p - 0.5) * math.sqrt(2.0 * math.pi)
    inv_sqrt_2pi = 1.0 / math.sqrt(2.0 * math.pi)
    it = 0
    done = False
    while it < 50 and not done:
        density = inv_sqrt_2pi * math.exp(-0.5 * x * x)
        if density == 0.0:
            done = True
        else:
            # Halley's step: f = Phi(x) - p, f' = density, f'' = -x density.
            step = (_ndtr(x) - p) / density
            step = step / (1.0 + 0.5 * x * step)
            x -= step
            done = abs(step) <= 1e-15 * max(1.0, abs(x))
        it += 1
    return -x if upper else x


# name -> plain Python function, whatever the binding state.
PLAIN = _jit.plain_by_name()
PUBLIC = ("lgamma", "digamma", "polygamma", "igamma", "igammac", "igamma_grad_a", "random_gamma_grad",
          "betainc", "zeta", "bessel_i0e", "bessel_i1e", "ndtri")


class _JitOnAccess(types.ModuleType):
    """This module's type: reading a public function as an attribute (what the Numba backend's
    generated code and eager evaluation do) jits the module first.  The module's globals, which
    its own functions and ``pyir`` read, are untouched."""

    def __getattribute__(self, name):
        if name in PUBLIC and not _jit._jitted:
            ensure_jitted()
        return super().__getattribute__(name)


sys.modules[__name__].__class__ = _JitOnAccess

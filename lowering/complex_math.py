"""Complex arithmetic written with real primitives: each function takes the real and imaginary
parts of its complex operands (real arrays, or rank-0 numpy constants) and returns the parts of
the result, ``(re, im)``.

The formulas are the ones a careful CPU compiler uses (XLA's CPU backend among them), so that
compiled results agree with JAX's to float32 tolerance, corner cases included: division is
Smith's algorithm with the C99 Annex G repairs for zero and infinite operands, ``abs`` is a
scaled hypotenuse (no overflow for large parts), ``sqrt`` takes the branch that avoids
cancellation.  Everything is ordinary elementwise equations, so the planner fuses a complex
chain into one loop over two real streams.
"""
import numpy as np

from numjax import core, lax
from numjax.lax import elementwise as ew
from numjax.lax import shape as lax_shape


# ---------------------------------------------------------------- small real helpers

def dtype_of(x):
    return core.get_aval(x).dtype


def shape_of(x):
    return core.get_aval(x).shape


def const(value, dtype):
    """A rank-0 constant of ``dtype`` (a literal in the traced program)."""
    return np.asarray(value, dtype)[()]


def full(x, shape):
    """``x`` broadcast to ``shape`` (select_n and the data movement rules want full shapes)."""
    if tuple(shape_of(x)) == tuple(shape):
        return x
    return lax_shape.broadcast_in_dim(x, tuple(shape), ())


def _shape(*xs):
    return max((tuple(shape_of(x)) for x in xs), key=len)


def where(pred, if_true, if_false):
    shape = _shape(pred, if_true, if_false)
    return ew.select_n_p.bind(full(pred, shape), full(if_false, shape), full(if_true, shape))


# The real operations, as lax spells them (short names keep the formulas readable).
add, sub, mul, div, neg, fabs = lax.add, lax.sub, lax.mul, lax.div, lax.neg, lax.abs
_and, _or, _not = lax.bitwise_and, lax.bitwise_or, lax.bitwise_not
exp, log, sqrt, sin, cos = lax.exp, lax.log, lax.sqrt, lax.sin, lax.cos
sinh, cosh, expm1, log1p = lax.sinh, lax.cosh, lax.expm1, lax.log1p
eq, ne, lt, le, gt, ge = lax.eq, lax.ne, lax.lt, lax.le, lax.gt, lax.ge


def isnan(a):
    return ne(a, a)


def copysign(magnitude, sign_of):
    """|magnitude| with the sign bit of ``sign_of`` (negative zero included)."""
    dt = dtype_of(sign_of)
    negative = _or(lt(sign_of, const(0, dt)),
                   _and(eq(sign_of, const(0, dt)), lt(div(const(1, dt), sign_of), const(0, dt))))
    m = np.abs(magnitude) if isinstance(magnitude, np.generic) else fabs(magnitude)
    return where(negative, neg(m), m)


# ---------------------------------------------------------------- arithmetic

def complex_mul(a, b, c, d):
    """(a + bi)(c + di)"""
    return sub(mul(a, c), mul(b, d)), add(mul(a, d), mul(b, c))


def complex_div(a, b, c, d):
    """(a + bi) / (c + di) by Smith's algorithm: divide through by the larger part of the
    denominator so that neither its square nor the products overflow.  When that gives NaN in
    both parts, the Annex G cases decide: a zero denominator gives infinities (signed like the
    numerator), an infinite numerator over a finite denominator infinities, a finite numerator
    over an infinite denominator zeros."""
    dt = dtype_of(a)
    zero, one, inf = const(0, dt), const(1, dt), const(np.inf, dt)
    abs_c, abs_d = fabs(c), fabs(d)
    # |c| >= |d|: divide by c (ratio d/c); else by d (ratio c/d).
    by_c = ge(abs_c, abs_d)
    ratio = where(by_c, div(d, c), div(c, d))
    denom = where(by_c, add(c, mul(d, ratio)), add(d, mul(c, ratio)))
    re = where(by_c, add(a, mul(b, ratio)), add(mul(a, ratio), b))
    im = where(by_c, sub(b, mul(a, ratio)), sub(mul(b, ratio), a))
    re, im = div(re, denom), div(im, denom)

    num_not_nan = _or(_not(isnan(a)), _not(isnan(b)))
    zero_denom = _and(_and(eq(abs_c, zero), eq(abs_d, zero)), num_not_nan)
    signed_inf = copysign(inf, c)
    zero_re, zero_im = mul(signed_inf, a), mul(signed_inf, b)

    abs_a, abs_b = fabs(a), fabs(b)
    a_inf, b_inf = eq(abs_a, inf), eq(abs_b, inf)
    c_fin, d_fin = _and(lt(abs_c, inf), _not(isnan(c))), _and(lt(abs_d, inf), _not(isnan(d)))
    inf_num = _and(_or(a_inf, b_inf), _and(c_fin, d_fin))
    a1 = copysign(where(a_inf, one, zero), a)
    b1 = copysign(where(b_inf, one, zero), b)
    inf_re = mul(inf, add(mul(a1, c), mul(b1, d)))
    inf_im = mul(inf, sub(mul(b1, c), mul(a1, d)))

    c_inf, d_inf = eq(abs_c, inf), eq(abs_d, inf)
    a_fin, b_fin = _and(lt(abs_a, inf), _not(isnan(a))), _and(lt(abs_b, inf), _not(isnan(b)))
    inf_den = _and(_or(c_inf, d_inf), _and(a_fin, b_fin))
    c1 = copysign(where(c_inf, one, zero), c)
    d1 = copysign(where(d_inf, one, zero), d)
    small_re = mul(zero, add(mul(a, c1), mul(b, d1)))
    small_im = mul(zero, sub(mul(b, c1), mul(a, d1)))

    both_nan = _and(isnan(re), isnan(im))
    fixed_re = where(zero_denom, zero_re, where(inf_num, inf_re, where(inf_den, small_re, re)))
    fixed_im = where(zero_denom, zero_im, where(inf_num, inf_im, where(inf_den, small_im, im)))
    return where(both_nan, fixed_re, re), where(both_nan, fixed_im, im)


def _modulus_terms(a, b):
    """(big, ratio) with |a + bi| = big * sqrt(1 + ratio^2): big = max(|a|, |b|)."""
    abs_a, abs_b = fabs(a), fabs(b)
    big = ew.max_p.bind(abs_a, abs_b)
    return big, div(ew.min_p.bind(abs_a, abs_b), big)


def _modulus_fixups(a, b, big, value, at_zero, at_inf):
    """``value`` with |z| = 0 and |z| = inf decided first, and NaN for any NaN part (an
    infinite part does not hide a NaN one, as on XLA's CPU backend)."""
    dt = dtype_of(a)
    shape = shape_of(value)
    value = where(eq(big, const(0, dt)), full(at_zero, shape), value)
    value = where(eq(big, const(np.inf, dt)), full(at_inf, shape), value)
    return where(_or(isnan(a), isnan(b)), full(const(np.nan, dt), shape), value)


def complex_abs(a, b):
    """|a + bi| as big * sqrt(1 + (small/big)^2): no overflow or underflow of the squares."""
    dt = dtype_of(a)
    big, ratio = _modulus_terms(a, b)
    scaled = mul(big, sqrt(add(const(1, dt), mul(ratio, ratio))))
    return _modulus_fixups(a, b, big, scaled, const(0, dt), const(np.inf, dt))


def log_abs(a, b):
    """log |a + bi| = log(big) + log1p(ratio^2) / 2: finite where |z| itself would overflow."""
    dt = dtype_of(a)
    big, ratio = _modulus_terms(a, b)
    value = add(log(big), mul(const(0.5, dt), log1p(mul(ratio, ratio))))
    return _modulus_fixups(a, b, big, value, const(-np.inf, dt), const(np.inf, dt))


def complex_sign(a, b):
    """z / |z|, and 0 at 0."""
    dt = dtype_of(a)
    r = complex_abs(a, b)
    is_zero = eq(r, const(0, dt))
    return where(is_zero, a, div(a, r)), where(is_zero, b, div(b, r))


# ---------------------------------------------------------------- transcendental functions

def complex_exp(a, b):
    """e^a (cos b + i sin b); a real argument (b == 0) keeps a zero imaginary part even when
    e^a is infinite."""
    e = exp(a)
    im = mul(e, sin(b))
    return mul(e, cos(b)), where(eq(b, const(0, dtype_of(b))), b, im)


def complex_log(a, b):
    return log_abs(a, b), ew.atan2_p.bind(b, a)


def complex_sqrt(a, b):
    """The principal square root without cancellation: with t = sqrt((|a| + |z|) / 2), the
    root is (t, b / 2t) for a >= 0 and (|b| / 2t, ±t) for a < 0 (+t for b = -0, as on XLA's
    CPU backend; so is 0 for a zero z).  An infinite imaginary part gives (inf, b)."""
    dt = dtype_of(a)
    zero, inf = const(0, dt), const(np.inf, dt)
    quarter = const(0.25, dt)
    quarter_modulus = complex_abs(mul(quarter, a), mul(quarter, b))     # |z| / 4: no overflow
    t = mul(sqrt(add(mul(quarter, fabs(a)), quarter_modulus)), const(np.sqrt(2), dt))
    two_t = add(t, t)
    nonneg = ge(a, zero)
    re = where(nonneg, t, div(fabs(b), two_t))
    im = where(nonneg, div(b, two_t), where(ge(b, zero), t, neg(t)))
    shape = shape_of(re)
    is_zero = eq(quarter_modulus, zero)
    re, im = where(is_zero, full(zero, shape), re), where(is_zero, full(zero, shape), im)
    b_inf = _and(eq(fabs(b), inf), _not(isnan(a)))
    return where(b_inf, full(inf, shape), re), where(b_inf, b, im)


def complex_rsqrt(a, b):
    """z ** -1/2 in polar form, |z| ** -1/2 (cos(-t/2) + i sin(-t/2)) with t = arg z, as
    XLA's CPU backend computes it: (inf, nan) at 0, and signed zeros where a part is infinite."""
    dt = dtype_of(a)
    zero, inf, nan = const(0, dt), const(np.inf, dt), const(np.nan, dt)
    scale = div(const(1, dt), sqrt(complex_abs(a, b)))
    angle = mul(const(-0.5, dt), ew.atan2_p.bind(b, a))
    re, im = mul(scale, cos(angle)), mul(scale, sin(angle))
    shape = shape_of(re)
    is_zero = _and(eq(a, zero), eq(b, zero))
    re, im = where(is_zero, full(inf, shape), re), where(is_zero, full(nan, shape), im)
    any_inf = _or(eq(fabs(a), inf), eq(fabs(b), inf))
    return (where(any_inf, copysign(full(zero, shape), a), re),
            where(any_inf, copysign(full(zero, shape), neg(b)), im))


def complex_pow(a, b, c, d):
    """(a + bi) ** (c + di) = exp((c + di) log(a + bi)); a zero exponent gives 1, and a zero
    base 0 for a positive real exponent, NaN for any other."""
    dt = dtype_of(a)
    zero, one, nan = const(0, dt), const(1, dt), const(np.nan, dt)
    l_re, l_im = complex_log(a, b)
    e_re, e_im = complex_exp(*complex_mul(c, d, l_re, l_im))
    base_zero = _and(eq(a, zero), eq(b, zero))
    exp_zero = _and(eq(c, zero), eq(d, zero))
    exp_pos_real = _and(gt(c, zero), eq(d, zero))
    shape = _shape(e_re, e_im)
    zero_re = where(exp_zero, full(one, shape), where(exp_pos_real, full(zero, shape), full(nan, shape)))
    zero_im = where(_or(exp_zero, exp_pos_real), full(zero, shape), full(nan, shape))
    re, im = where(base_zero, zero_re, e_re), where(base_zero, zero_im, e_im)
    # Any base to the power 0 is 1, infinite and NaN bases included.
    return where(exp_zero, full(one, shape), re), where(exp_zero, full(zero, shape), im)


def complex_integer_pow(a, b, n):
    """(a + bi) ** n by repeated squaring (what XLA emits for integer_pow); 1 / z**|n| for n < 0."""
    dt = dtype_of(a)
    if n == 0:
        shape = _shape(a, b)
        return full(const(1, dt), shape), full(const(0, dt), shape)
    acc, base, k = None, (a, b), abs(n)
    while k:
        if k & 1:
            acc = base if acc is None else complex_mul(*acc, *base)
        k >>= 1
        if k:
            base = complex_mul(*base, *base)
    if n < 0:
        shape = _shape(*acc)
        acc = complex_div(full(const(1, dt), shape), full(const(0, dt), shape), *acc)
    return acc


def complex_sin(a, b):
    """sin a cosh b + i cos a sinh b; a zero real part gives a zero real part (not 0 * inf)."""
    re = mul(sin(a), cosh(b))
    return where(eq(a, const(0, dtype_of(a))), a, re), mul(cos(a), sinh(b))


def complex_cos(a, b):
    im = neg(mul(sin(a), sinh(b)))
    return mul(cos(a), cosh(b)), where(eq(a, const(0, dtype_of(a))), full(a, shape_of(im)), im)


def complex_tanh(a, b):
    """Kahan's form: with t = tan b, beta = 1 + t^2, s = sinh a, rho = sqrt(1 + s^2),
    tanh z = (beta rho s + i t) / (1 + beta s^2).  For |a| > 20, where s^2 may overflow, it is
    (±1, 4 (t / beta) e^(-2|a|)); a real argument gives (tanh a, 0)."""
    dt = dtype_of(a)
    zero, one = const(0, dt), const(1, dt)
    t = ew.tan_p.bind(b)
    beta = add(one, mul(t, t))
    s = sinh(a)
    rho = sqrt(add(one, mul(s, s)))
    denom = add(one, mul(beta, mul(s, s)))
    re, im = div(mul(mul(beta, rho), s), denom), div(t, denom)
    shape = shape_of(re)
    abs_a = fabs(a)
    far = gt(abs_a, const(20, dt))
    far_im = mul(mul(const(4, dt), div(t, beta)), exp(neg(add(abs_a, abs_a))))
    far_im = where(isnan(t), full(zero, shape), far_im)
    re = where(far, copysign(full(one, shape), a), re)
    im = where(far, far_im, im)
    real_arg = eq(b, zero)
    return where(real_arg, ew.tanh_p.bind(a), re), where(real_arg, full(zero, shape), im)


def complex_expm1(a, b):
    """e^z - 1 without cancellation near 0: real part expm1(a) cos b - 2 sin^2(b/2)."""
    dt = dtype_of(a)
    s = sin(mul(b, const(0.5, dt)))
    re = sub(mul(expm1(a), cos(b)), mul(const(2, dt), mul(s, s)))
    return re, where(eq(b, const(0, dt)), b, mul(exp(a), sin(b)))


def complex_log1p(a, b):
    """log(1 + z); near 0 the real part is log1p(a (2 + a) + b^2) / 2, which keeps the digits
    log(|1 + z|) would lose."""
    dt = dtype_of(a)
    one, half = const(1, dt), const(0.5, dt)
    a1 = add(a, one)
    near = _and(lt(fabs(a), half), lt(fabs(b), half))
    small_re = mul(half, log1p(add(mul(a, add(a, const(2, dt))), mul(b, b))))
    re = where(near, small_re, log_abs(a1, b))
    return re, ew.atan2_p.bind(b, a1)


# ---------------------------------------------------------------- comparisons

def lexicographic_less(a, b, c, d, strict=True):
    """(a, b) < (c, d) ordered by real part, then imaginary part (numpy's and jnp's order)."""
    second = lt(b, d) if strict else le(b, d)
    return _or(lt(a, c), _and(eq(a, c), second))


def pick_first(a, b, c, d, greater):
    """Whether jnp.maximum (``greater``) / jnp.minimum picks (a + bi) over (c + di): JAX compares
    real parts, and imaginary parts when those are equal."""
    cmp = gt if greater else lt
    return where(eq(a, c), cmp(b, d), cmp(a, c))

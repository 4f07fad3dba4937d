"""The edge-case table of tests/test_int_semantics.py (numjax against rules) and of
tests/compat/test_int_semantics_vs_jax.py (numjax against real JAX).

Each operation is a function of ``(jnp, lax, a, b)`` so the same entry runs on numjax and on
JAX.  Each rule gives the expected value of one element from Python numbers, from XLA's and
JAX's definitions (XLA's operation semantics; jax.numpy's compositions of lax ops):

* integer ``lax.div`` truncates; ``x / 0`` is -1 (all ones) and ``INT_MIN / -1`` wraps to
  INT_MIN; ``lax.rem`` keeps the dividend's sign, ``x % 0`` is x and ``INT_MIN % -1`` is 0;
* shift amounts are read as unsigned; one of at least the bit width shifts every bit out;
* jnp.floor_divide, remainder, fmod and divmod are JAX's compositions of those, and float
  floor division is CPython's float_divmod (exact when its steps are);
* float -> integer conversion saturates, and NaN becomes 0;
* arithmetic on integers wraps around;
* population_count and clz count the bits of the element's own width;
* float max and min propagate NaN, and of +0 and -0 max is +0 and min -0 in either order.
"""
import math
from fractions import Fraction

import numpy as np

INT_DTYPES = ("int8", "int16", "int32", "uint8", "uint16", "uint32")
INT64_DTYPES = ("int64", "uint64")           # need jax_enable_x64
FLOAT_DTYPES = ("float16", "float32")
FLOAT64_DTYPES = ("float64",)


# ---------------------------------------------------------------- integer helpers

def bits(dt):
    return np.dtype(dt).itemsize * 8


def wrap(v, dt):
    """The Python int ``v`` reduced to ``dt``'s range, two's complement."""
    b = bits(dt)
    v &= (1 << b) - 1
    if np.dtype(dt).kind == "i" and v >= 1 << (b - 1):
        v -= 1 << b
    return v


def as_unsigned(v, dt):
    return v & ((1 << bits(dt)) - 1)


def as_signed(v, dt):
    v = as_unsigned(v, dt)
    return v - (1 << bits(dt)) if v >= 1 << (bits(dt) - 1) else v


def int_operands(dt):
    """Zero, small values, the shift widths around the bit width, and the extremes."""
    info, b = np.iinfo(dt), bits(dt)
    vals = {0, 1, 2, 3, 5, 7, b - 1, b, b + 1, 2 * b, 63, 64, 65, 100,
            info.max, info.max - 1, 1 << (b - 1), (1 << (b - 1)) + 1}
    if np.dtype(dt).kind == "i":
        vals |= {-1, -2, -5, -7, -b, info.min, info.min + 1}
    return sorted(v for v in vals if info.min <= v <= info.max)


def _trunc_div(x, y):
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def _sign(v):
    return (v > 0) - (v < 0)


def lax_div(x, y, dt):
    return wrap(-1, dt) if y == 0 else wrap(_trunc_div(x, y), dt)


def lax_rem(x, y, dt):
    return x if y == 0 else wrap(x - y * _trunc_div(x, y), dt)


def floor_divide(x, y, dt):
    # Python's floor division (wrapping: INT_MIN // -1 is INT_MIN).  For y == 0 JAX floors
    # lax.div's -1 once more wherever x's sign differs from 0's, i.e. x != 0: -2; unsigned
    # floor division is lax.div itself: all ones.
    if y != 0:
        return wrap(x // y, dt)
    if np.dtype(dt).kind == "u":
        return wrap(-1, dt)
    return -1 if x == 0 else -2


def remainder(x, y, dt):
    # jnp.remainder takes 1 for a zero integer divisor: x % 0 is 0.
    return 0 if y == 0 else x % y


def fmod(x, y, dt):
    return 0 if y == 0 else x - y * _trunc_div(x, y)


def shift_left(x, n, dt):
    n = as_unsigned(n, dt)
    return 0 if n >= bits(dt) else wrap(x << n, dt)


def shift_right_logical(x, n, dt):
    n = as_unsigned(n, dt)
    return 0 if n >= bits(dt) else wrap(as_unsigned(x, dt) >> n, dt)


def shift_right_arithmetic(x, n, dt):
    # The sign bit fills in, an unsigned operand read as signed; big amounts leave only it.
    return wrap(as_signed(x, dt) >> min(as_unsigned(n, dt), bits(dt) - 1), dt)


def right_shift(x, n, dt):
    # jnp.right_shift: logical for unsigned operands, arithmetic for signed ones.
    if np.dtype(dt).kind == "u":
        return shift_right_logical(x, n, dt)
    return shift_right_arithmetic(x, n, dt)


def int_power(x, y, dt):
    # jnp.power of integer arrays squares and multiplies over the exponent's low 6 bits (read
    # unsigned); 0 ** y is 0 for every y != 0.
    if y == 0:
        return 1
    if x == 0:
        return 0
    return wrap(x ** (as_unsigned(y, dt) & 63), dt)


INT_BINARY = {
    "lax.div": (lambda m, l, a, b: l.div(a, b), lax_div),
    "lax.rem": (lambda m, l, a, b: l.rem(a, b), lax_rem),
    "floor_divide": (lambda m, l, a, b: m.floor_divide(a, b), floor_divide),
    "//": (lambda m, l, a, b: a // b, floor_divide),
    "remainder": (lambda m, l, a, b: m.remainder(a, b), remainder),
    "%": (lambda m, l, a, b: a % b, remainder),
    "fmod": (lambda m, l, a, b: m.fmod(a, b), fmod),
    "divmod[0]": (lambda m, l, a, b: m.divmod(a, b)[0], floor_divide),
    "divmod[1]": (lambda m, l, a, b: m.divmod(a, b)[1], remainder),
    "divmod()[0]": (lambda m, l, a, b: divmod(a, b)[0], floor_divide),
    "divmod()[1]": (lambda m, l, a, b: divmod(a, b)[1], remainder),
    "shift_left": (lambda m, l, a, b: l.shift_left(a, b), shift_left),
    "shift_right_logical": (lambda m, l, a, b: l.shift_right_logical(a, b), shift_right_logical),
    "shift_right_arithmetic": (lambda m, l, a, b: l.shift_right_arithmetic(a, b), shift_right_arithmetic),
    "<<": (lambda m, l, a, b: a << b, shift_left),
    ">>": (lambda m, l, a, b: a >> b, right_shift),
    "left_shift": (lambda m, l, a, b: m.left_shift(a, b), shift_left),
    "right_shift": (lambda m, l, a, b: m.right_shift(a, b), right_shift),
    "power": (lambda m, l, a, b: m.power(a, b), int_power),
    "**": (lambda m, l, a, b: a ** b, int_power),
    "*": (lambda m, l, a, b: a * b, lambda x, y, dt: wrap(x * y, dt)),
    "+": (lambda m, l, a, b: a + b, lambda x, y, dt: wrap(x + y, dt)),
    "-": (lambda m, l, a, b: a - b, lambda x, y, dt: wrap(x - y, dt)),
}

INT_UNARY = {
    "abs": (lambda m, l, a: m.abs(a), lambda x, dt: wrap(abs(x), dt)),
    "neg": (lambda m, l, a: -a, lambda x, dt: wrap(-x, dt)),
    "~": (lambda m, l, a: ~a, lambda x, dt: wrap(~x, dt)),
    "sign": (lambda m, l, a: m.sign(a), lambda x, dt: _sign(x)),
    "integer_pow(3)": (lambda m, l, a: l.integer_pow(a, 3), lambda x, dt: wrap(x ** 3, dt)),
    "** 2": (lambda m, l, a: a ** 2, lambda x, dt: wrap(x * x, dt)),
    "power(7)": (lambda m, l, a: m.power(a, 7), lambda x, dt: wrap(x ** 7, dt)),
    # bits of the element's own width
    "population_count": (lambda m, l, a: l.population_count(a), lambda x, dt: bin(as_unsigned(x, dt)).count("1")),
    "clz": (lambda m, l, a: l.clz(a), lambda x, dt: bits(dt) - as_unsigned(x, dt).bit_length()),
}


def int_pairs(dt):
    """Every pair of ``int_operands(dt)``, as two flat arrays of Python ints."""
    vals = int_operands(dt)
    return [x for x in vals for _ in vals], [y for _ in vals for y in vals]


# ---------------------------------------------------------------- floats

def float_operands(dt):
    """Signed zeros, small exact values, powers of two, the extremes, integers and halves
    where adding 0.5 rounds (2**mantissa_bits + 1), infinities and NaN."""
    fi = np.finfo(dt)
    big = float(fi.max)
    vals = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 2.5, -2.5, 3.0, -3.0, 7.0, -7.0,
            big, -big, 2.0 ** (fi.nmant + 1) + 2, -(2.0 ** (fi.nmant + 1) + 2),
            2.0 ** fi.nmant + 1, -(2.0 ** fi.nmant + 1), 2.0 ** (fi.nmant - 1) + 0.5,
            math.inf, -math.inf, math.nan]
    if np.dtype(dt).itemsize >= 4:
        vals += [3e38, -3e38, 1e30]
    return [float(np.asarray(v, dt)) for v in vals]


def float_pairs(dt):
    vals = float_operands(dt)
    return [x for x in vals for _ in vals], [y for _ in vals for y in vals]


def _exact(x, y):
    """The floor-division rules below are exact for these pairs: every step of CPython's
    float_divmod is (small operands, or a power-of-two divisor)."""
    def pow2(v):
        m, _ = math.frexp(abs(v))
        return m == 0.5
    return abs(x) <= 8 or pow2(y)


def _to_float(value, dt):
    """The exact rational ``value`` rounded to ``dt`` (overflow to infinity)."""
    try:
        nearest = float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
    with np.errstate(over="ignore"):
        return float(np.asarray(nearest, dt))


def float_floor_divide(x, y, dt):
    """The expected x // y, or None where the rules leave it to the JAX comparison."""
    if math.isnan(x) or math.isnan(y):
        return math.nan
    if y == 0:     # x / y: the divisor 0 keeps x uncorrected (infinite x included)
        return math.nan if x == 0 else math.copysign(math.inf, x) * math.copysign(1.0, y)
    if math.isinf(x):
        return math.nan
    if math.isinf(y):
        return 0.0 * math.copysign(1.0, y) if x == 0 or (x > 0) == (y > 0) else -1.0
    if not _exact(x, y):
        return None
    q = math.floor(Fraction(x) / Fraction(y))
    # A zero quotient is (x - fmod(x, y)) / y = +0 / y: it has the divisor's sign.
    return math.copysign(0.0, y) if q == 0 else _to_float(q, dt)


def float_remainder(x, y, dt):
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or y == 0:
        return math.nan
    if math.isinf(y):
        return x if x == 0 or (x > 0) == (y > 0) else y
    if not _exact(x, y):
        return None
    r = Fraction(x) - Fraction(y) * math.floor(Fraction(x) / Fraction(y))
    # A zero remainder is C's fmod of x: it has the dividend's sign.
    return math.copysign(0.0, x) if r == 0 else _to_float(r, dt)


def float_fmod(x, y, dt):
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or y == 0:
        return math.nan
    return math.fmod(x, y)     # exact in every precision


def float_max(x, y, dt):
    # XLA's max: NaN propagates; of +0 and -0 (either order) it is +0
    if math.isnan(x) or math.isnan(y):
        return math.nan
    return x + y if x == y == 0 else max(x, y)


def float_min(x, y, dt):
    if math.isnan(x) or math.isnan(y):
        return math.nan
    return -((-x) + (-y)) if x == y == 0 else min(x, y)


def float_lax_div(x, y, dt):
    with np.errstate(all="ignore"):
        return float(np.divide(np.asarray(x, dt), np.asarray(y, dt)))   # IEEE division


FLOAT_BINARY = {
    "floor_divide": (lambda m, l, a, b: m.floor_divide(a, b), float_floor_divide),
    "//": (lambda m, l, a, b: a // b, float_floor_divide),
    "divmod[0]": (lambda m, l, a, b: m.divmod(a, b)[0], float_floor_divide),
    "divmod()[0]": (lambda m, l, a, b: divmod(a, b)[0], float_floor_divide),
    "remainder": (lambda m, l, a, b: m.remainder(a, b), float_remainder),
    "%": (lambda m, l, a, b: a % b, float_remainder),
    "divmod[1]": (lambda m, l, a, b: m.divmod(a, b)[1], float_remainder),
    "divmod()[1]": (lambda m, l, a, b: divmod(a, b)[1], float_remainder),
    "fmod": (lambda m, l, a, b: m.fmod(a, b), float_fmod),
    "lax.rem": (lambda m, l, a, b: l.rem(a, b), float_fmod),
    "lax.div": (lambda m, l, a, b: l.div(a, b), float_lax_div),
    "lax.max": (lambda m, l, a, b: l.max(a, b), float_max),
    "lax.min": (lambda m, l, a, b: l.min(a, b), float_min),
    "maximum": (lambda m, l, a, b: m.maximum(a, b), float_max),
    "minimum": (lambda m, l, a, b: m.minimum(a, b), float_min),
}


def round_half_away(x, dt):
    if math.isnan(x) or math.isinf(x):
        return x
    r = math.floor(abs(Fraction(x)) + Fraction(1, 2))
    return math.copysign(float(r), x)


def float_to_int(x, target):
    # XLA's conversion saturates at the target's bounds and sends NaN to 0.
    info = np.iinfo(target)
    if math.isnan(x):
        return 0
    if x >= info.max:
        return int(info.max)
    if x <= info.min:
        return int(info.min)
    return int(x)      # truncation toward zero


FLOAT_UNARY = {"round": (lambda m, l, a: l.round(a), round_half_away)}
FLOAT_UNARY.update({
    f"astype({t})": ((lambda t: lambda m, l, a: a.astype(t))(t), (lambda t: lambda x, dt: float_to_int(x, t))(t))
    for t in INT_DTYPES + INT64_DTYPES})

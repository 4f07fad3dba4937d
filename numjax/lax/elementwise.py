"""Elementwise primitives: arithmetic, transcendental, comparison, logical, select, casts.

Each primitive is defined from its numpy implementation and its dtype rule.
Differentiation and batching rules are registered by their interpreter
modules' helpers beside these definitions as those transformations land.
"""
import enum

import numpy as np

from .. import core, dtypes
from .._fp_quiet import enter as quiet_enter, leave as quiet_leave, quietly
from ..array import Array, to_numpy
from ..core import ShapedArray
from ..jaxpr import param_printers
from ._base import (all_weak, broadcast_shapes, check_dtype_kind, check_same_dtypes,
                    coerce_scalars, make_primitive)

_FLOAT, _FLOAT_DESC = "fc", "floating, complexfloating"
_NUM = "iufc"


def _unary_abstract(name, kinds, accepted):
    def rule(x):
        if kinds:
            check_dtype_kind(name, x, kinds, accepted)
        return x
    return rule


def _nary_abstract(name, kinds=None, accepted="", out_dtype=None):
    def rule(*avals):
        check_same_dtypes(name, avals)
        if kinds:
            for a in avals:
                check_dtype_kind(name, a, kinds, accepted)
        shape = broadcast_shapes(name, *(a.shape for a in avals))
        if out_dtype is not None:
            # Comparisons keep JAX's n-ary weak-type rule: weak if every operand is.
            return ShapedArray(shape, out_dtype, all_weak(avals))
        return ShapedArray(shape, avals[0].dtype, all_weak(avals))
    return rule


def _eager(np_fn, out_bool=False):
    def impl(*args):
        vals = [to_numpy(a) for a in args]
        token = quiet_enter()     # NaN/inf results without numpy's RuntimeWarnings, as JAX
        try:
            out = np.asarray(np_fn(*vals))
        finally:
            quiet_leave(token)
        weak = True
        for a in args:
            if not getattr(a, "weak_type", False):
                weak = False
                break
        if out_bool:
            return Array(out, weak)
        dt = vals[0].dtype
        if out.dtype != dt:
            out = out.astype(dt)
        return Array(out, weak)
    return impl


def _unary(name, np_fn, kinds=_FLOAT, accepted=_FLOAT_DESC):
    return make_primitive(name, _eager(np_fn), _unary_abstract(name, kinds, accepted), elementwise=True)


def _binary(name, np_fn, kinds=None, accepted="", compare=False):
    rule = _nary_abstract(name, kinds, accepted, out_dtype=dtypes.bool_ if compare else None)
    return make_primitive(name, _eager(np_fn, out_bool=compare), rule, elementwise=True)


def _errstate(fn):
    # (The _eager wrapper already silences numpy's floating-point warnings; this keeps them
    # off for functions called outside it too.)
    return quietly(fn)


# float64 functions the compiled code takes from its own vector math (lowering/kernels.py's
# XLA_F64_*); the others call libm there, as numpy does here.
_COMPILED_F64 = frozenset(["exp", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos",
                           "erf", "erf_inv", "pow"])


def _libm(name, np_fn, f32=False):
    """np_fn, except for float64 (and float32 with ``f32``): libm's function, which the
    compiled code calls, where numpy has its own implementation with other roundings."""
    def fn(x):
        if (x.dtype == np.float64 or (f32 and x.dtype == np.float32)) and np.size(x):
            from .. import dispatch   # lazy: numjax imports without Numba
            return dispatch.cpu_library("kernels").libm(name, x)
        return np_fn(x)
    return fn


def _xla_f32(name, np_fn):
    """np_fn, except that float32 (and float64 where the compiled code has its own formula)
    goes through the compiled code's kernel, so eager results equal jitted ones bit for bit."""
    f64 = name in _COMPILED_F64

    def fn(*xs):
        # (an empty operand has nothing to compute: numpy's shape rules give the empty result)
        dtype = xs[0].dtype
        if (dtype == np.float32 or (f64 and dtype == np.float64)) and all(np.size(x) for x in xs):
            from .. import dispatch   # lazy: numjax imports without Numba
            kernels = dispatch.cpu_library("kernels")
            return (kernels.xla_f32 if dtype == np.float32 else kernels.xla_f64)(name, *xs)
        return np_fn(*xs)
    return fn


def _int_div(x, y):
    """lax.div: floats divide; integers take C's truncating quotient, with XLA's values where C
    has none: ``x / 0`` is -1 (all ones for unsigned) and ``INT_MIN / -1`` wraps to INT_MIN.
    (The same definitions as the compiled code's ``sh.sdiv``/``sh.udiv``.)"""
    if dtypes.kind(x.dtype) not in "iu":
        return np.true_divide(x, y)
    by_zero = y == 0
    if dtypes.kind(x.dtype) == "u":
        return np.where(by_zero, x.dtype.type(np.iinfo(x.dtype).max), x // np.where(by_zero, 1, y))
    # Divisors 0 and -1 become 1: no numpy division overflows, and x / -1 is then -x (wrapping).
    safe = np.where(by_zero | (y == -1), 1, y)
    quotient = np.floor_divide(x, safe)
    # Floor and truncation differ when the division is inexact and the signs differ.
    quotient = quotient + ((np.remainder(x, safe) != 0) & ((x < 0) != (safe < 0)))
    quotient = np.where(y == -1, np.negative(x), quotient)
    return np.where(by_zero, x.dtype.type(-1), quotient)


def _int_rem(x, y):
    """lax.rem: C's remainder (the dividend's sign) for floats and integers; for integers
    XLA's ``x % 0`` is x and ``INT_MIN % -1`` is 0 (C leaves both undefined)."""
    if dtypes.kind(x.dtype) not in "iu":
        return np.fmod(x, y)
    by_zero = y == 0
    safe = np.where(by_zero | (y == -1), 1, y) if dtypes.kind(x.dtype) == "i" else np.where(by_zero, 1, y)
    return np.where(by_zero, x, np.fmod(x, safe))


# Shifts follow XLA: the amount is read as unsigned, and one of at least the operand's width
# shifts every bit out (0, or the sign for an arithmetic right shift) -- where numpy and C
# leave it undefined.  shift_right_arithmetic of an unsigned operand fills with its top bit.

def _shift_parts(x, y):
    width = 8 * x.dtype.itemsize
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    amount = np.asarray(y).view(unsigned)
    return width, unsigned, amount, np.minimum(amount, unsigned.type(width - 1))


def _shift_left(x, y):
    width, unsigned, amount, clipped = _shift_parts(x, y)
    out = np.left_shift(np.asarray(x).view(unsigned), clipped)
    return np.where(amount >= width, unsigned.type(0), out).view(x.dtype)


def _shift_right_logical(x, y):
    width, unsigned, amount, clipped = _shift_parts(x, y)
    out = np.right_shift(np.asarray(x).view(unsigned), clipped)
    return np.where(amount >= width, unsigned.type(0), out).view(x.dtype)


def _shift_right_arithmetic(x, y):
    width, unsigned, amount, clipped = _shift_parts(x, y)
    signed = np.dtype(f"i{x.dtype.itemsize}")
    return np.right_shift(np.asarray(x).view(signed), clipped.astype(signed)).view(x.dtype)


def _round_away(x, rounding_method=0):
    if rounding_method == 1:
        return np.round(x)
    # Halves away from zero.  Not floor(|x| + 0.5): that sum rounds (to even) once |x| nears
    # 2**mantissa_bits, turning 2**52 + 1 into 2**52 + 2.  x - trunc(x) is exact.
    whole = np.trunc(x)
    with np.errstate(invalid="ignore"):     # inf - inf: nan, and the comparison keeps inf
        return np.where(np.abs(x - whole) >= 0.5, whole + np.copysign(np.ones_like(x), x), whole)


def _exp2(x):
    # XLA's exp2 is exp(ln 2 * x), the constant and the product in x's own dtype.
    return _xla_f32("exp", np.exp)(np.multiply(np.asarray(np.log(2), x.dtype), x, dtype=x.dtype))


def _signed_zero_extremum(out, x, y, is_max):
    """numpy's maximum/minimum ``out`` of ``x`` and ``y`` with XLA's signed zeros: of +0 and
    -0 (in either order) max is +0 and min is -0, where numpy returns one operand."""
    if dtypes.kind(out.dtype) != "f":
        return out
    with np.errstate(all="ignore"):
        return signed_zero_fix(out, x, y, is_max)


def signed_zero_fix(out, x, y, is_max):
    """``_signed_zero_extremum`` for float operands, where numpy's warnings are already off."""
    tie = (x == 0) & (y == 0)
    if not tie.any():
        return out
    # +0 + -0 is +0 and -0 + -0 is -0: the sum of two zeros is their max; min mirrors it.
    zero = np.add(x, y) if is_max else np.negative(np.add(np.negative(x), np.negative(y)))
    return np.where(tie, zero, out)


def _logistic(x):
    return 1 / (1 + np.exp(-x))


def _sign(x):
    if x.dtype.kind == "f":
        return np.copysign(np.sign(x), x)   # JAX keeps the sign of zeros (and of NaNs)
    return np.sign(x)


# ---------------------------------------------------------------- arithmetic
add_p = _binary("add", np.add)
sub_p = _binary("sub", np.subtract)
mul_p = _binary("mul", np.multiply)
div_p = _binary("div", _errstate(_int_div))
rem_p = _binary("rem", _errstate(_int_rem), "iuf", "integer, floating")
max_p = _binary("max", lambda x, y: _signed_zero_extremum(np.maximum(x, y), x, y, True))
min_p = _binary("min", lambda x, y: _signed_zero_extremum(np.minimum(x, y), x, y, False))
pow_p = _binary("pow", _errstate(_xla_f32("pow", np.power)), _FLOAT, _FLOAT_DESC)
atan2_p = _binary("atan2", _xla_f32("atan2", np.arctan2), "f", "floating")
nextafter_p = _binary("nextafter", np.nextafter, "f", "floating")
neg_p = _unary("neg", np.negative, _NUM, "number")
sign_p = _unary("sign", _sign, _NUM, "number")


def _abs_impl(x):
    # The modulus of a complex number is real: complex64 -> float32, as the abstract rule says.
    out = np.abs(to_numpy(x))
    return Array(np.asarray(out, dtype=_abs_dtype(to_numpy(x).dtype)), getattr(x, "weak_type", False))


def _abs_dtype(dtype):
    return np.dtype(np.finfo(dtype).dtype) if dtypes.kind(dtype) == "c" else dtype


def _abs_abstract(x):
    check_dtype_kind("abs", x, "ifc", "floating, complexfloating, signedinteger")
    if x.dtype in (dtypes.int4, dtypes.int2):
        raise TypeError(f"abs does not accept dtype {x.dtype.name}. Support for narrow-width integers is "
                        "platform-dependent and limited to a few specific operations, e.g. basic arithmetic "
                        "and type casting. Convert to int8 first (x.astype(jnp.int8)).")
    return x.update(dtype=_abs_dtype(x.dtype))


abs_p = make_primitive("abs", _abs_impl, _abs_abstract, elementwise=True)

# ---------------------------------------------------------------- transcendental
exp_p = _unary("exp", _errstate(_xla_f32("exp", np.exp)))
exp2_p = _unary("exp2", _errstate(_exp2))
log_p = _unary("log", _errstate(_xla_f32("log", np.log)))
log1p_p = _unary("log1p", _errstate(_xla_f32("log1p", np.log1p)))
expm1_p = _unary("expm1", _errstate(_xla_f32("expm1", np.expm1)))
tanh_p = _unary("tanh", _xla_f32("tanh", np.tanh))
logistic_p = _unary("logistic", _errstate(_xla_f32("logistic", _logistic)))
sin_p = _unary("sin", _errstate(_xla_f32("sin", np.sin)))
cos_p = _unary("cos", _errstate(_xla_f32("cos", np.cos)))
tan_p = _unary("tan", _errstate(_xla_f32("tan", _libm("tan", np.tan))))
asin_p = _unary("asin", _errstate(np.arcsin))
acos_p = _unary("acos", _errstate(np.arccos))
atan_p = _unary("atan", _xla_f32("atan", _libm("atan", np.arctan)))
sinh_p = _unary("sinh", _errstate(np.sinh))
cosh_p = _unary("cosh", _errstate(np.cosh))
asinh_p = _unary("asinh", _xla_f32("asinh", _libm("asinh", np.arcsinh)))
acosh_p = _unary("acosh", _errstate(np.arccosh))
atanh_p = _unary("atanh", _errstate(np.arctanh))
sqrt_p = _unary("sqrt", _errstate(np.sqrt))
rsqrt_p = _unary("rsqrt", _errstate(lambda x: 1 / np.sqrt(x)))
cbrt_p = _unary("cbrt", _libm("cbrt", np.cbrt, f32=True), "f", "floating")
floor_p = _unary("floor", np.floor, "f", "floating")
ceil_p = _unary("ceil", np.ceil, "f", "floating")
is_finite_p = make_primitive(
    "is_finite", _eager(np.isfinite, out_bool=True),
    lambda x: (check_dtype_kind("is_finite", x, "f", "floating"), x.update(dtype=dtypes.bool_))[1],
    elementwise=True)


def _erf_np(x):
    from math import erf
    return np.vectorize(erf, otypes=[x.dtype])(x) if x.size else x.copy()


def _erf_inv_np(x):
    from scipy.special import erfinv
    return erfinv(x)


erf_p = _unary("erf", _xla_f32("erf", _erf_np), "f", "floating")
erf_inv_p = _unary("erf_inv", _errstate(_xla_f32("erf_inv", _erf_inv_np)), "f", "floating")

round_p = make_primitive(
    "round", lambda x, rounding_method=0: _eager(lambda v: _round_away(v, rounding_method))(x),
    lambda x, rounding_method=0: _unary_abstract("round", "f", "floating")(x), elementwise=True)


def _integer_pow_impl(x, *, y):
    # Square-and-multiply in XLA's order (as the compiled path does), then a reciprocal.
    v = to_numpy(x)
    with np.errstate(all="ignore"):
        acc, base, n = None, v, (-y if y < 0 else y)
        while n:
            if n & 1:
                acc = base if acc is None else np.multiply(acc, base, dtype=v.dtype)
            n >>= 1
            if n:
                base = np.multiply(base, base, dtype=v.dtype)
        if acc is None:
            acc = np.ones_like(v)
        out = np.divide(np.ones((), v.dtype), acc, dtype=v.dtype) if y < 0 else acc
    return Array(np.asarray(out, dtype=v.dtype), getattr(x, "weak_type", False))


def _integer_pow_abstract(x, *, y):
    if dtypes.kind(x.dtype) in "iu" and y < 0:
        raise TypeError(f"Integers cannot be raised to negative powers, got integer_pow({x.str_short()}, {y})")
    return x


integer_pow_p = make_primitive("integer_pow", _integer_pow_impl, _integer_pow_abstract, elementwise=True)

# ---------------------------------------------------------------- comparison
eq_p = _binary("eq", np.equal, compare=True)
ne_p = _binary("ne", np.not_equal, compare=True)
lt_p = _binary("lt", np.less, compare=True)
le_p = _binary("le", np.less_equal, compare=True)
gt_p = _binary("gt", np.greater, compare=True)
ge_p = _binary("ge", np.greater_equal, compare=True)

# ---------------------------------------------------------------- logical / bitwise
_BOOL_INT = "biu"
and_p = _binary("and", np.bitwise_and, _BOOL_INT, "bool, integer")
or_p = _binary("or", np.bitwise_or, _BOOL_INT, "bool, integer")
xor_p = _binary("xor", np.bitwise_xor, _BOOL_INT, "bool, integer")
not_p = _unary("not", np.invert, _BOOL_INT, "bool, integer")
shift_left_p = _binary("shift_left", _shift_left, "iu", "integer")
shift_right_logical_p = _binary("shift_right_logical", _shift_right_logical, "iu", "integer")
shift_right_arithmetic_p = _binary("shift_right_arithmetic", _shift_right_arithmetic, "iu", "integer")


# ---------------------------------------------------------------- select and casts

def _select_n_impl(which, *cases):
    w = to_numpy(which)
    vals = [to_numpy(c) for c in cases]
    if w.dtype == np.bool_:
        out = np.where(w, vals[1], vals[0]) if len(vals) == 2 else vals[0]
    else:
        out = np.choose(w, vals, mode="clip")
    weak = all(getattr(c, "weak_type", False) for c in cases)
    return Array(np.asarray(out, dtype=vals[0].dtype), weak)


def _select_n_abstract(which, *cases):
    if not cases:
        raise TypeError("select_n must have at least one case")
    check_same_dtypes("select_n", cases)
    if which.dtype != dtypes.bool_ and dtypes.kind(which.dtype) not in "iu":
        raise TypeError(f"select_n `which` must be boolean or integer type, got {which.dtype.name}.")
    if which.dtype == dtypes.bool_ and len(cases) > 2:
        raise TypeError("select_n with boolean `which` cannot have more than 2 cases")
    shapes = {c.shape for c in cases}
    if len(shapes) > 1:
        raise TypeError(f"select_n cases must have the same shapes, got {[c.shape for c in cases]}.")
    shape = cases[0].shape
    if which.shape and which.shape != shape:
        raise TypeError(f"select_n `which` must be scalar or have the same shape as cases, "
                        f"got `which` shape {which.shape} but case shape {shape}.")
    return ShapedArray(shape, cases[0].dtype, all_weak(cases))


select_n_p = make_primitive("select_n", _select_n_impl, _select_n_abstract, elementwise=True)


def _convert_impl(x, *, new_dtype, weak_type=False, sharding=None):
    v = to_numpy(x)
    with np.errstate(all="ignore"):
        if dtypes.kind(v.dtype) in "fc" and dtypes.kind(new_dtype) in "iu":
            out = _float_to_int(v, np.dtype(new_dtype))
        elif dtypes.kind(v.dtype) == "c" and dtypes.kind(new_dtype) != "c":
            out = v.real.astype(new_dtype)
        else:
            out = v.astype(new_dtype)
    return Array(np.asarray(out), weak_type)


def _float_to_int(v, dtype):
    # XLA saturates out-of-range floats and maps NaN to 0, where numpy's cast is undefined.
    info = np.iinfo(dtype)
    if dtypes.kind(v.dtype) == "c":
        v = v.real
    clipped = np.clip(np.nan_to_num(v, nan=0.0), info.min, info.max)
    out = np.trunc(clipped).astype(dtype)
    out = np.where(v >= float(info.max), info.max, out)
    return np.where(v <= float(info.min), info.min, out).astype(dtype)


def _convert_abstract(x, *, new_dtype, weak_type=False, sharding=None):
    return ShapedArray(x.shape, new_dtype, weak_type)


convert_element_type_p = make_primitive("convert_element_type", _convert_impl, _convert_abstract, elementwise=True)
param_printers[convert_element_type_p] = lambda p: {"new_dtype": p["new_dtype"], "weak_type": p["weak_type"]}


from .bits import bitcast_convert_type, bitcast_convert_type_p  # noqa: E402,F401  (lax's names)


def _clamp_impl(lo, x, hi):
    # min(max(x, lo), hi) with XLA's max and min (signed zeros included), as the compiled rule.
    weak = all(getattr(a, "weak_type", False) for a in (lo, x, hi))   # JAX's n-ary rule
    lo, v, hi = to_numpy(lo), to_numpy(x), to_numpy(hi)
    above = _signed_zero_extremum(np.maximum(v, lo), v, lo, True)
    v = _signed_zero_extremum(np.minimum(above, hi), above, hi, False)
    return Array(np.asarray(v, dtype=to_numpy(x).dtype), weak)


def _clamp_abstract(lo, x, hi):
    check_same_dtypes("clamp", (lo, x, hi))
    for b in (lo, hi):
        if b.shape and b.shape != x.shape:
            raise TypeError(f"clamp requires min and max to be scalars or have the same shape as "
                            f"operand, got {lo.shape}, {x.shape}, {hi.shape}.")
    return ShapedArray(x.shape, x.dtype, all_weak((lo, x, hi)))


clamp_p = make_primitive("clamp", _clamp_impl, _clamp_abstract, elementwise=True)

# ---------------------------------------------------------------- lax-level functions

_UNARY_PRIMS = {p.name: p for p in (
    neg_p, sign_p, abs_p, exp_p, exp2_p, log_p, log1p_p, expm1_p, tanh_p, logistic_p, sin_p,
    cos_p, tan_p, asin_p, acos_p, atan_p, sinh_p, cosh_p, asinh_p, acosh_p, atanh_p, sqrt_p,
    rsqrt_p, cbrt_p, floor_p, ceil_p, is_finite_p, not_p, erf_p, erf_inv_p)}
_BINARY_PRIMS = {p.name: p for p in (
    add_p, sub_p, mul_p, div_p, rem_p, max_p, min_p, pow_p, atan2_p, nextafter_p, eq_p, ne_p,
    lt_p, le_p, gt_p, ge_p, and_p, or_p, xor_p, shift_left_p, shift_right_logical_p,
    shift_right_arithmetic_p)}


def _make_unary_fn(prim):
    def fn(x):
        if type(x) in (int, float, complex, bool):
            x, = coerce_scalars([x])
        return prim.bind(x)
    fn.__name__ = prim.name
    return fn


def _make_binary_fn(prim):
    def fn(x, y):
        x, y = coerce_scalars([x, y])
        return prim.bind(x, y)
    fn.__name__ = prim.name
    return fn


for _name, _p in _UNARY_PRIMS.items():
    globals()[_name + ("_" if _name in ("not", "abs") else "")] = _make_unary_fn(_p)
for _name, _p in _BINARY_PRIMS.items():
    globals()[_name + ("_" if _name in ("and", "or", "pow", "max", "min") else "")] = _make_binary_fn(_p)

abs = abs_  # noqa: A001  (lax.abs shadows the builtin, as in JAX)
pow = pow_  # noqa: A001
max = max_  # noqa: A001
min = min_  # noqa: A001
bitwise_and, bitwise_or, bitwise_not, bitwise_xor = and_, or_, not_, xor
div = globals()["div"]


def logistic(x):
    return logistic_p.bind(x)


def integer_pow(x, y):
    return integer_pow_p.bind(x, y=_integer_exponent(y))


def _integer_exponent(y):
    """``y`` as a Python int: an int, a numpy integer or bool, or a float with an integral value
    (JAX takes ``2.0``); anything else is JAX's TypeError."""
    if isinstance(y, (int, np.integer, np.bool_)):
        return int(y)
    if isinstance(y, (float, np.floating)) and float(y).is_integer():
        return int(y)
    raise TypeError(f"integer_pow requires an integer exponent y, got {y!r} of type {type(y).__name__}: "
                    "pass a Python int, or use lax.pow (jnp.power) for a non-integer or array exponent.")


def square(x):
    return integer_pow_p.bind(x, y=2)


class RoundingMethod(enum.IntEnum):
    """How lax.round treats halfway values (the values are JAX's, so plain ints also work)."""
    AWAY_FROM_ZERO = 0    # 0.5 -> 1, -0.5 -> -1
    TO_NEAREST_EVEN = 1   # 0.5 -> 0, 1.5 -> 2


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001
    # An unknown method raises RoundingMethod's ValueError, as in JAX.
    return round_p.bind(x, rounding_method=int(RoundingMethod(rounding_method)))


def select_n(which, *cases):
    return select_n_p.bind(which, *cases)


def select(pred, on_true, on_false):
    return select_n_p.bind(pred, on_false, on_true)


def clamp(min, x, max):  # noqa: A002
    min, x, max = coerce_scalars([min, x, max])
    return clamp_p.bind(min, x, max)


def convert_element_type(operand, new_dtype):
    # A requested 64-bit type with x64 off warns as JAX does; object/str dtypes are refused.
    new_dtype = dtypes.check_user_dtype(new_dtype, "convert_element_type")
    aval = core.get_aval(operand)
    if aval.dtype == new_dtype and not aval.weak_type and isinstance(operand, (Array, core.Tracer)):
        return operand     # (a numpy operand becomes an Array of its own, as in JAX)
    _warn_complex_to_real(aval.dtype, new_dtype, stacklevel=3)
    return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=False, sharding=None)


def _warn_complex_to_real(old, new, stacklevel):
    if dtypes.kind(old) == "c" and dtypes.kind(new) != "c":
        import warnings
        warnings.warn("Casting complex values to real discards the imaginary part", np.exceptions.ComplexWarning,
                      stacklevel=stacklevel)


def _convert_element_type(operand, new_dtype, weak_type=False, warn_on_complex_to_real_cast=True):
    """Cast keeping track of weak types (what jnp's promotion emits); a complex value cast to
    a real type warns as in JAX unless ``warn_on_complex_to_real_cast`` is False."""
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    aval = core.get_aval(operand)
    if aval.dtype == new_dtype and aval.weak_type == weak_type and isinstance(operand, (Array, core.Tracer)):
        return operand
    if warn_on_complex_to_real_cast:
        _warn_complex_to_real(aval.dtype, new_dtype, stacklevel=3)
    return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=bool(weak_type),
                                       sharding=None)


# ---------------------------------------------------------------- differentiation rules
# Registered per family, beside the definitions above (see interpreters/ad.py for signatures).
from ..interpreters import ad  # noqa: E402
from ..interpreters.ad import defjvp, defjvp2, defjvp_zero, unbroadcast, is_undefined  # noqa: E402


def _c(v, like):
    """A constant of ``like``'s dtype (weak, so it never changes the result type)."""
    return Array(np.asarray(v, dtype=core.get_aval(like).dtype), True)


def _add_transpose(ct, x, y):
    return [unbroadcast(x.aval, ct) if is_undefined(x) else None,
            unbroadcast(y.aval, ct) if is_undefined(y) else None]


def _sub_transpose(ct, x, y):
    neg_ct = None if type(ct) is ad.Zero else neg(ct)
    return [unbroadcast(x.aval, ct) if is_undefined(x) else None,
            unbroadcast(y.aval, neg_ct) if is_undefined(y) and neg_ct is not None else None]


def _mul_transpose(ct, x, y):
    if is_undefined(x):
        return [unbroadcast(x.aval, mul(ct, y)), None]
    return [None, unbroadcast(y.aval, mul(x, ct))]


def _div_transpose(ct, x, y):
    return [unbroadcast(x.aval, div(ct, y)), None]


ad.deflinear2(add_p, _add_transpose)
ad.deflinear2(sub_p, _sub_transpose)
ad.deflinear2(neg_p, lambda ct, x: [neg(ct)])
defjvp(mul_p, lambda t, x, y: mul(t, y), lambda t, x, y: mul(x, t))
ad.transpose_rules[mul_p] = _mul_transpose
# (The same operation order as JAX's rules, so results agree to the last bit.)
defjvp(div_p, lambda t, x, y: div(t, y),
       lambda t, x, y: mul(mul(neg(t), x), integer_pow_p.bind(y, y=-2)))
ad.transpose_rules[div_p] = _div_transpose


def _minmax_jvp(pick):
    # Ties split the tangent evenly, as JAX's max/min rules do.
    def weight(t, a, b):
        dt = core.get_aval(t).dtype
        return add(convert_element_type(pick(a, b), dt), mul(_c(0.5, t), convert_element_type(eq(a, b), dt)))

    return (lambda t, x, y: mul(t, weight(t, x, y)),
            lambda t, x, y: mul(t, weight(t, y, x)))


defjvp(max_p, *_minmax_jvp(gt))
defjvp(min_p, *_minmax_jvp(lt))


def _pow_jvp_x(t, x, y):
    return mul(t, mul(y, pow_p.bind(x, sub(y, _c(1, y)))))


def _replace_zero(x):
    # x with its zeros replaced by ones (log(_replace_zero(x)) is 0 where x == 0), as JAX.
    aval = core.get_aval(x)
    return select(eq(x, _c(0, x)), ad.broadcast_to_aval(_c(1, x), aval), x)


def _pow_jvp_y(t, ans, x, y):
    return mul(t, mul(log(_replace_zero(x)), ans))


defjvp2(pow_p, lambda t, ans, x, y: _pow_jvp_x(t, x, y), _pow_jvp_y)


def _integer_pow_jvp(t, x, *, y):
    if y == 0:
        return ad.zeros_like_aval(core.get_aval(t))
    if y == 1:
        return t
    if y == 2:
        return mul(t, mul(_c(2, x), x))
    return mul(t, mul(_c(y, x), integer_pow_p.bind(x, y=y - 1)))


defjvp(integer_pow_p, _integer_pow_jvp)
defjvp2(exp_p, lambda t, ans, x: mul(t, ans))
defjvp2(exp2_p, lambda t, ans, x: mul(log(_c(2, x)), mul(t, ans)))
defjvp(log_p, lambda t, x: div(t, x))
defjvp(log1p_p, lambda t, x: div(t, add(x, _c(1, x))))
defjvp2(expm1_p, lambda t, ans, x: mul(t, add(ans, _c(1, ans))))
defjvp2(tanh_p, lambda t, ans, x: mul(add(t, mul(t, ans)), sub(_c(1, x), ans)))
defjvp2(logistic_p, lambda t, ans, x: mul(t, mul(ans, sub(_c(1, ans), ans))))
defjvp(sin_p, lambda t, x: mul(t, cos(x)))
defjvp(cos_p, lambda t, x: neg(mul(t, sin(x))))
defjvp2(tan_p, lambda t, ans, x: mul(t, add(_c(1, ans), mul(ans, ans))))
defjvp(asin_p, lambda t, x: mul(t, rsqrt(sub(_c(1, x), mul(x, x)))))
defjvp(acos_p, lambda t, x: neg(mul(t, rsqrt(sub(_c(1, x), mul(x, x))))))
defjvp(atan_p, lambda t, x: div(t, add(_c(1, x), mul(x, x))))
defjvp(sinh_p, lambda t, x: mul(t, cosh(x)))
defjvp(cosh_p, lambda t, x: mul(t, sinh(x)))
defjvp(asinh_p, lambda t, x: mul(t, rsqrt(add(mul(x, x), _c(1, x)))))
defjvp(acosh_p, lambda t, x: mul(t, rsqrt(sub(mul(x, x), _c(1, x)))))
defjvp(atanh_p, lambda t, x: mul(integer_pow_p.bind(add(_c(1, x), x), y=-1), div(t, sub(_c(1, x), x))))
defjvp2(sqrt_p, lambda t, ans, x: mul(t, div(_c(0.5, x), ans)))
defjvp2(rsqrt_p, lambda t, ans, x: mul(t, mul(_c(-0.5, ans), div(ans, x))))
defjvp2(cbrt_p, lambda t, ans, x: mul(t, mul(_c(1 / 3, x), integer_pow_p.bind(ans, y=-2))))


def _abs_jvp(t, ans, x):
    if dtypes.kind(core.get_aval(x).dtype) != "c":
        return select(ge(x, _c(0, x)), t, neg(t))
    # d|z| = Re(conj(z) t) / |z|; at z == 0 divide by 1 instead, so the tangent is 0, not nan.
    # real/conj live with jnp's complex helpers (imported late: numpy imports lax).
    from ..numpy._elementwise import conj_p, real_p
    x_dtype = core.get_aval(x).dtype
    safe = add(ans, convert_element_type(eq(ans, _c(0, ans)), core.get_aval(ans).dtype))
    unit = div(conj_p.bind(x), convert_element_type(safe, x_dtype))
    return real_p.bind(mul(t, unit))


defjvp2(abs_p, _abs_jvp)
defjvp(erf_p, lambda t, x: mul(_c(2 / np.sqrt(np.pi), x), mul(t, exp(neg(mul(x, x))))))
defjvp2(erf_inv_p, lambda t, ans, x: mul(_c(np.sqrt(np.pi) / 2, x), mul(t, exp(mul(ans, ans)))))
defjvp(atan2_p,
       lambda t, x, y: mul(t, div(y, add(mul(x, x), mul(y, y)))),
       lambda t, x, y: mul(t, neg(div(x, add(mul(x, x), mul(y, y))))))


def _trunc(v):
    return select(lt(v, _c(0, v)), ceil(v), floor(v))


defjvp(rem_p, lambda t, x, y: t, lambda t, x, y: neg(mul(t, _trunc(div(x, y)))))
for _p in (sign_p, floor_p, ceil_p, round_p, is_finite_p, eq_p, ne_p, lt_p, le_p, gt_p, ge_p,
           and_p, or_p, xor_p, not_p, shift_left_p, shift_right_logical_p,
           shift_right_arithmetic_p, nextafter_p):
    defjvp_zero(_p)


def _convert_jvp(primals, tangents, *, new_dtype, weak_type=False, sharding=None):
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type, sharding=sharding)
    if dtypes.kind(new_dtype) not in "fc" or dtypes.kind(core.get_aval(x).dtype) not in "fc":
        return out, ad.Zero(ad._tangent_aval(core.get_aval(out)))
    return out, convert_element_type_p.bind(ad.instantiate(t), new_dtype=new_dtype,
                                            weak_type=weak_type, sharding=sharding)


def _convert_transpose(ct, x, *, new_dtype, weak_type=False, sharding=None):
    return [convert_element_type_p.bind(ct, new_dtype=x.aval.dtype, weak_type=x.aval.weak_type,
                                        sharding=sharding)]


ad.jvp_rules[convert_element_type_p] = _convert_jvp
ad.transpose_rules[convert_element_type_p] = _convert_transpose


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    out = select_n_p.bind(which, *cases)
    if all(type(t) is ad.Zero for t in tangents[1:]):
        return out, ad.Zero(core.get_aval(out))
    return out, select_n_p.bind(which, *map(ad.instantiate, tangents[1:]))


def _select_n_transpose(ct, which, *cases):
    if type(ct) is ad.Zero:
        return [None] + [None] * len(cases)
    zeros = ad.zeros_like_aval(core.get_aval(ct))
    outs = [None]
    for i, c in enumerate(cases):
        if not is_undefined(c):
            outs.append(None)
            continue
        picked = [zeros] * len(cases)
        picked[i] = ct
        outs.append(select_n_p.bind(which, *picked))
    return outs


ad.jvp_rules[select_n_p] = _select_n_jvp
ad.transpose_rules[select_n_p] = _select_n_transpose


def _clamp_jvp(primals, tangents):
    # JAX's rule: each of min, operand, max gets the tangent where it is the (strict) answer.
    lo, x, hi = primals
    out = clamp_p.bind(lo, x, hi)
    out_aval = core.get_aval(out)
    if all(type(t) is ad.Zero for t in tangents):
        return out, ad.Zero(out_aval)
    lo_b, x_b, hi_b = (broadcast_like(v, out) for v in (lo, x, hi))
    picks = [and_p.bind(gt_p.bind(lo_b, x_b), lt_p.bind(lo_b, hi_b)),
             and_p.bind(gt_p.bind(x_b, lo_b), lt_p.bind(x_b, hi_b)),
             lt_p.bind(hi_b, x_b)]
    t_out = ad.Zero(out_aval)
    for pick, t in zip(picks, tangents):
        if type(t) is not ad.Zero:
            t = broadcast_like(t, out)
            t_out = ad.add_tangents(t_out, select_n_p.bind(pick, ad.zeros_like_aval(core.get_aval(t)), t))
    return out, t_out


def broadcast_like(v, x):
    return ad.broadcast_to_aval(v, core.get_aval(x))


ad.jvp_rules[clamp_p] = _clamp_jvp


# ---------------------------------------------------------------- add_any and stop_gradient
# add_any sums tangents/cotangents (JAX prints it so); stop_gradient is the identity with a
# zero derivative.
add_any_p = _binary("add_any", np.add)
ad.deflinear2(add_any_p, _add_transpose)
stop_gradient_p = make_primitive("stop_gradient", _eager(lambda v: v), lambda x: x, elementwise=True)
defjvp_zero(stop_gradient_p)


def stop_gradient(x):
    from ..tree_util import tree_map

    def stop(v):
        aval = core.get_aval(v)
        return v if dtypes.kind(aval.dtype) not in "fc" else stop_gradient_p.bind(v)
    return tree_map(stop, x)


# ---------------------------------------------------------------- batching rules
from ..interpreters import batching  # noqa: E402

for _p in list(_UNARY_PRIMS.values()) + [integer_pow_p, round_p, convert_element_type_p, stop_gradient_p]:
    batching.defvectorized(_p)
for _p in list(_BINARY_PRIMS.values()) + [add_any_p]:
    batching.defbroadcasting(_p)


def _select_n_batch(vals, dims):
    size = batching.axis_size_of(vals, dims)
    which, *cases = vals
    wd, *cds = dims
    case_shape = None
    for c, d in zip(cases, cds):
        case_shape = core.get_aval(c).shape if d is batching.not_mapped else \
            core.get_aval(batching.moveaxis(c, d, 0)).shape[1:]
        break
    cases = [batching.bdim_at_front(c, d, size) for c, d in zip(cases, cds)]
    w_aval = core.get_aval(which)
    w_rank = w_aval.ndim - (wd is not batching.not_mapped)
    if wd is batching.not_mapped and w_rank == 0:
        return select_n_p.bind(which, *cases), 0
    which = batching.bdim_at_front(which, wd, size)
    if w_rank == 0 and case_shape:   # per-example scalar predicate over array cases
        from .shape import broadcast_in_dim
        which = broadcast_in_dim(which, (size,) + tuple(case_shape), (0,))
    return select_n_p.bind(which, *cases), 0


batching.batch_rules[select_n_p] = _select_n_batch


def _clamp_batch(vals, dims):
    size = batching.axis_size_of(vals, dims)
    lo, x, hi = vals
    ld, xd, hd = dims
    x = batching.bdim_at_front(x, xd, size)
    shape = core.get_aval(x).shape

    def full(v, d):
        if d is batching.not_mapped and core.get_aval(v).ndim == 0:
            return v
        v = batching.bdim_at_front(v, d, size)
        from .shape import broadcast_in_dim
        aval = core.get_aval(v)
        return v if aval.shape == shape else broadcast_in_dim(v, shape, tuple(range(aval.ndim)))
    return clamp_p.bind(full(lo, ld), x, full(hi, hd)), 0


batching.batch_rules[clamp_p] = _clamp_batch

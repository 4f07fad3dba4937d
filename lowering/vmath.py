"""Branch-free scalar math kernels that LLVM can vectorize inside Numba loops.

Why this module exists: without Intel SVML, Numba lowers ``np.exp`` & co. to
one scalar libm call per element, which stops LLVM's loop vectorizer.  The
functions here use only arithmetic, comparisons whose results feed ternaries
(LLVM turns them into ``select``), bit casts and a few LLVM intrinsics
(``fma``, ``rint``), so a loop such as::

    @numba.njit(cache=True)
    def k(x, out):
        for i in range(x.shape[0]):
            out[i] = exp_f32(x[i])

compiles to packed AVX code.  Every public function exists as ``NAME_f32`` and
``NAME_f64`` for NAME in exp, log, log1p, expm1, tanh, logistic, sin, cos,
erf, pow (pow takes two arguments); float32 also has tan and atan2.

How they are compiled: ``ensure_jitted()`` (call it before compiling Numba
code that uses them; importing this module imports no Numba) rebinds each
function to ``numba.njit(inline='always')`` of it, and ``PLAIN`` keeps the
plain Python functions for numjax's own LLVM IR translator.  Each is
inlined into the caller's Numba IR whatever its size (LLVM's own inliner
gives up on the larger ones, and an out-of-line call blocks vectorization).
Inlined code is typed with the *caller's* flags, so the bodies avoid every
operation whose meaning depends on them: float division goes through
``_fdiv`` (a bare ``fdiv``; Numba's default Python error model would add a
ZeroDivisionError branch), and there is no float ``%``/``//``.  The kernels
rely on IEEE evaluation (two-sum, Cody-Waite, FMA error terms), so callers
must not be compiled with ``fastmath=True``.

With ``NUMBA_DISABLE_JIT=1`` the same functions run as plain Python on numpy
scalars (``np.float32``/``np.float64``); the intrinsics then fall back to
numpy equivalents (an exact rational FMA among them).

Accuracy target: the ``_f32`` versions give JAX's (XLA's CPU) float32
results bit for bit (see the section "float32: the same numbers as JAX");
the ``_f64`` versions are within 2 ulp of the correctly rounded result on
all inputs, with IEEE special values (inf/nan/signed zero, overflow to inf,
underflow to 0) as numpy gives them.

Polynomial coefficients (float64): all were derived for this module with
``mpmath.chebyfit`` (Chebyshev interpolation, which is within a small factor
of minimax) at 50 digits, applied to the normalised remainder function named
in each comment, then rounded to the working precision; the rounded
polynomial was then checked on a dense grid.  Degrees were chosen as the
smallest giving a relative error below ~2^-57 for the term they approximate.
"""

import math
from fractions import Fraction

import numpy as np

from .inline_registry import InlineRegistry

__all__ = [
    "exp_f32", "exp_f64", "log_f32", "log_f64", "log1p_f32", "log1p_f64",
    "expm1_f32", "expm1_f64", "tanh_f32", "tanh_f64",
    "logistic_f32", "logistic_f64", "sin_f32", "sin_f64", "cos_f32",
    "cos_f64", "erf_f32", "erf_f64", "pow_f32", "pow_f64", "erf_inv_f32", "erf_inv_f64",
    "tan_f32", "atan2_f32", "atan_f32",
]

# Marks the functions ensure_jitted() wraps with numba.njit(**these flags); until then they are the
# plain Python functions (importing this module imports neither Numba nor llvmlite).
_inline = InlineRegistry(globals(), inline="always", fastmath=False, cache=False)
JIT_FUNCTIONS = _inline.functions

F = np.float32
D = np.float64


# --------------------------------------------------------------------------
# Low-level helpers.  Each is a plain Python function (used when the JIT is
# disabled, and read by the LLVM IR translator) which ensure_jitted() gives a
# Numba overload lowering it to one LLVM instruction.  They stay plain module
# attributes in both binding states: Numba finds the overload by function.
# --------------------------------------------------------------------------

def _f32_bits(x):
    """float32 -> its IEEE bit pattern as int32."""
    return F(x).view(np.int32)


def _f32_from_bits(i):
    """int32 bit pattern -> float32."""
    return np.int32(i).view(F)


def _f64_bits(x):
    """float64 -> its IEEE bit pattern as int64."""
    return D(x).view(np.int64)


def _f64_from_bits(i):
    """int64 bit pattern -> float64."""
    return np.int64(i).view(D)


def _fdiv(a, b):
    """IEEE a / b: inf/nan on zero divisors instead of ZeroDivisionError."""
    with np.errstate(all="ignore"):
        return a / b


def _rint(x):
    """Round to nearest integer, ties to even (the FP default rounding)."""
    return np.rint(x)


def _fma(a, b, c):
    """a * b + c with a single rounding (float64)."""
    a, b, c = D(a), D(b), D(c)
    if not (np.isfinite(a) and np.isfinite(b) and np.isfinite(c)):
        with np.errstate(all="ignore"):
            return a * b + c
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    try:
        return D(float(exact))   # Fraction -> float rounds correctly
    except OverflowError:
        return D(math.copysign(math.inf, exact))


def _fma_f32(a, b, c):
    """float32 a * b + c with a single rounding (llvm.fma.f32)."""
    return F(_fma(D(a), D(b), D(c)))


def _floor(x):
    """Round toward -inf (llvm.floor)."""
    return np.floor(x)


def _libm_pow(x, y):
    """C pow (math.pow when compiled; numpy's, without domain errors, in Python mode)."""
    with np.errstate(all="ignore"):
        return np.power(x, y)


def _llvm_helper(pyfunc, restype, build):
    """Register ``build(builder, args, llvm_type)`` as the Numba lowering of
    pyfunc (arity 1 to 3).  ``restype(argtypes)`` gives the result type
    (None: not applicable).  The Python body stays the behaviour under
    NUMBA_DISABLE_JIT=1.
    """
    from numba.extending import intrinsic, overload

    def typer(args):
        result = restype(args)
        if result is None:
            return None

        def codegen(context, builder, sig, llargs):
            return build(builder, llargs, context.get_value_type(sig.return_type))
        return result(*args), codegen

    # @intrinsic needs a fixed arity, hence one variant per argument count.
    nargs = pyfunc.__code__.co_argcount
    if nargs == 1:
        impl = intrinsic(lambda typingctx, a: typer((a,)))
        overload(pyfunc, inline="always")(lambda a: lambda a: impl(a))
    elif nargs == 2:
        impl = intrinsic(lambda typingctx, a, b: typer((a, b)))
        overload(pyfunc, inline="always")(lambda a, b: lambda a, b: impl(a, b))
    else:
        impl = intrinsic(lambda typingctx, a, b, c: typer((a, b, c)))
        overload(pyfunc, inline="always")(
            lambda a, b, c: lambda a, b, c: impl(a, b, c))
    return pyfunc


def _register_llvm_lowerings():
    """The Numba lowerings of the low-level helpers (run once, by ensure_jitted)."""
    from llvmlite import ir
    from numba.core import types
    from numba.extending import overload

    def same_float(args):
        t = args[0]
        if isinstance(t, types.Float) and all(a == t for a in args):
            return t
        return None

    def bits_type(src, dst):
        return lambda args: dst if args[0] == src else None

    def float_only(ty):
        return lambda args: ty if same_float(args) == ty else None

    def bitcast(builder, args, ty):
        return builder.bitcast(args[0], ty)

    def call_intrinsic(name):
        def build(builder, args, ty):
            fnty = ir.FunctionType(ty, [ty] * len(args))
            fn = builder.module.declare_intrinsic(name, [ty], fnty)
            return builder.call(fn, args)
        return build

    _llvm_helper(_f32_bits, bits_type(types.float32, types.int32), bitcast)
    _llvm_helper(_f32_from_bits, bits_type(types.int32, types.float32), bitcast)
    _llvm_helper(_f64_bits, bits_type(types.float64, types.int64), bitcast)
    _llvm_helper(_f64_from_bits, bits_type(types.int64, types.float64), bitcast)
    _llvm_helper(_fdiv, same_float, lambda builder, args, ty: builder.fdiv(args[0], args[1]))
    _llvm_helper(_rint, same_float, call_intrinsic("llvm.rint"))
    _llvm_helper(_fma, float_only(types.float64), call_intrinsic("llvm.fma"))
    _llvm_helper(_fma_f32, float_only(types.float32), call_intrinsic("llvm.fma"))
    _llvm_helper(_floor, same_float, call_intrinsic("llvm.floor"))
    overload(_libm_pow, inline="always")(lambda x, y: lambda x, y: math.pow(x, y))


def ensure_jitted():
    """Register the helpers' Numba lowerings and rebind every marked function of this module to
    its ``numba.njit(inline="always")`` dispatcher (idempotent, thread-safe).  Call before
    compiling Numba code that uses this module; ``PLAIN`` keeps the plain functions."""
    _inline.jit_all(_register_llvm_lowerings)
    _sincos.ensure_jitted()


@_inline
def _pow2_f64(n):
    """2**n as float64 for integer n in [-1022, 1023]."""
    return _f64_from_bits(np.int64((n + 1023) << 52))


@_inline
def _scale_f64(p, n):
    """p * 2**n for n in [-2044, 2046], rounding once even into subnormals:
    p * 2**n1 is exact, only the second product rounds."""
    n1 = n >> 1
    return p * _pow2_f64(n1) * _pow2_f64(n - n1)


@_inline
def _two_sum(a, b):
    """(s, e) with s = fl(a + b) and s + e == a + b exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


# --------------------------------------------------------------------------
# float32: the same numbers as JAX on CPU.
# XLA's CPU backend evaluates float32 exp, log, log1p, expm1, tanh, logistic
# and erf with its own (Cephes/Eigen-derived) approximations, and LLVM fuses
# every multiply whose only use is an add into an FMA; sin, cos, tan and pow
# are calls to the C library's sinf/cosf/tanf/powf.  The kernels below follow
# that evaluation operation by operation (constants as float32 bit patterns,
# FMAs where the compiled XLA code has them), so results are bit-identical to
# JAX's jit on x86-64 with FMA.  XLA also runs with FTZ/DAZ: subnormal
# operands of arithmetic read as zero and subnormal results flush to zero,
# which _ftz reproduces where it changes a result.
# --------------------------------------------------------------------------

def _h32(bits):
    """float32 with the given IEEE bit pattern."""
    return np.uint32(bits).view(F)


_MIN_NORMAL_F = _h32(0x00800000)


@_inline
def _ftz(x):
    """Subnormal -> zero of the same sign (the FTZ/DAZ machine mode)."""
    return x if not (abs(x) < _MIN_NORMAL_F) else x * F(0.0)


@_inline
def _sign_one_f32(x):
    return F(-1.0) if _f32_bits(x) < 0 else F(1.0)


# exp: x = n*ln2 + r with n = floor(x*log2e + 1/2) (ln2 split in two), a
# degree-5 polynomial for (e^r - 1 - r)/r^2, then a multiply by 2^n.  The
# clamps make exp(>88.72) inf via 2^127 * p and exp(<-87.34) zero via FTZ.
_XEXP_LO, _XEXP_HI = F(-87.8), F(88.8)
_XEXP_LOG2E = _h32(0x3FB8AA3B)
_XEXP_C1, _XEXP_C2 = _h32(0x3F318000), _h32(0xB95E8083)       # ln2 = C1 - C2
_XEXP_SCALE = F(8388608.0 + 127.0)
_XEXP_P = (_h32(0x39506967), _h32(0x3AB743CE), _h32(0x3C088908), _h32(0x3D2AA9C1),
           _h32(0x3E2AAAAA), F(0.5))


@_inline
def _exp_f32_core(x, n):
    r = _fma_f32(-n, _XEXP_C2, _fma_f32(-n, _XEXP_C1, x))
    p = _XEXP_P
    y = p[0]
    for i in range(1, 6):                            # unrolled by LLVM
        y = _fma_f32(y, r, p[i])
    y = F(1.0) + _fma_f32(y, r * r, r)
    # 2^n: n + 127 in the low bits of n + 2^23 + 127 (exact for |n| <= 127), moved into the
    # exponent field: one add and a shift, and defined for nan (a float -> int conversion is not)
    return y * _f32_from_bits(np.int32((_f32_bits(n + _XEXP_SCALE) & 0x1FF) << 23))


@_inline
def exp_f32(x):
    x = _XEXP_LO if x < _XEXP_LO else x              # nan passes both clamps
    x = _XEXP_HI if x > _XEXP_HI else x
    n = _floor(_fma_f32(x, _XEXP_LOG2E, F(0.5)))
    n = n if n > F(-127.0) else F(-127.0)            # (nan -> -127: defined int cast)
    n = n if n < F(127.0) else F(127.0)
    return _ftz(_exp_f32_core(x, n))


# In a loop of several math calls (``pyir_strips``), exp runs speculatively without the clamps
# and the flush: for |x| <= 80 neither changes anything (e^-80 is a normal float32).
@_inline
def exp_f32_mid(x):
    return _exp_f32_core(x, _floor(_fma_f32(x, _XEXP_LOG2E, F(0.5))))


@_inline
def exp_needs_more_than_mid(x):
    return not (abs(x) <= F(80.0))                   # (nan too)


exp_f32.speculative = ((exp_f32_mid, exp_needs_more_than_mid),)
exp_f32.speculate_alone = False      # a loop of exp alone stays one loop (its compile time)

# Variants for arguments of a known range (``value_range``: what a fused region's operations
# leave possible): ``fn.within`` lists ``(variant, holds(range))``, most specific first; a
# variant equals ``fn`` wherever ``holds`` (nan included, but for its payload) and leaves out
# the clamps, checks and selects that such arguments make moot.
exp_f32.within = ((exp_f32_mid, lambda r: r.within(-80.0, 80.0)),)


# log: x = 2^e * m, m in [sqrt(1/2), sqrt(2)), f = m - 1, log(1+f) =
# f - f^2/2 + f^3*P(f) with P of degree 8 (three interleaved Horner chains).
_XLOG_SQRTHF = _h32(0x3F3504F3)
_XLOG_P = tuple(_h32(b) for b in (0x3D9021BB, 0xBDEBD1B8, 0x3DEF251A, 0xBDFE5D4F, 0x3E11E9BF,
                                  0xBE2AAE50, 0x3E4CCEAC, 0xBE7FFFFC, 0x3EAAAAAA))


@_inline
def _log_f32_normal(x):
    """log_f32 for x positive, normal and finite."""
    ix = _f32_bits(x)
    m = _f32_from_bits(np.int32((ix & np.int32(-2139095041)) | 0x3F000000))   # [1/2, 1)
    e = F(np.int32((ix >> 23) - 127)) + F(1.0)
    lo = m < _XLOG_SQRTHF
    f = (m - F(1.0)) + (m if lo else F(0.0))
    e = e - (F(1.0) if lo else F(0.0))
    z = f * f
    f3 = z * f
    p = _XLOG_P
    a = _fma_f32(_fma_f32(p[0], f, p[1]), f, p[2])
    b = _fma_f32(_fma_f32(p[3], f, p[4]), f, p[5])
    c = _fma_f32(_fma_f32(p[6], f, p[7]), f, p[8])
    y = _fma_f32(_fma_f32(_fma_f32(a, f3, b), f3, c), f3, e * _XEXP_C2)
    return _fma_f32(e, _XEXP_C1, _fma_f32(F(-0.5), z, f) + y)


@_inline
def log_f32(x):
    x = _ftz(x)                                      # DAZ: log(subnormal) = -inf
    y = _log_f32_normal(F(x if x > _MIN_NORMAL_F else _MIN_NORMAL_F))   # (F: a Python float in PLAIN)
    y = F(np.nan) if not (x > F(0.0)) else y
    y = F(-np.inf) if x == F(0.0) else y
    return F(np.inf) if x == F(np.inf) else y


# log1p: log(1 + x) for |x| >= sqrt(2) - 1, else x - x^2/2 + x^3*N(x)/D(x)
# (Cephes' rational, degree 6/6).
_XL1P_SMALL = _h32(0x3ED413CD)
_XL1P_N = (F(4.527e-05),) + tuple(_h32(b) for b in (
    0x3EFF40C5, 0x40D284FA, 0x41EF4B9C, 0x4273CC76, 0x426473AD, 0x41A05101))
_XL1P_D = (F(1.0),) + tuple(_h32(b) for b in (
    0x417101AD, 0x42A6185B, 0x435DC32D, 0x439A8CA3, 0x43586D8A, 0x42707982))


@_inline
def _log1p_small_f32(x):
    n, d = _XL1P_N, _XL1P_D
    num, den = n[0], d[0]
    for i in range(1, 7):
        num = _fma_f32(num, x, n[i])
        den = _fma_f32(den, x, d[i])
    x2 = x * x
    return x + _fma_f32(x2, F(-0.5), (x * x2) * _fdiv(num, den))


@_inline
def log1p_f32(x):
    x = _ftz(x)
    return _log1p_small_f32(x) if abs(x) < _XL1P_SMALL else log_f32(x + F(1.0))


# log1p computes both sides and selects, as XLA's does; a loop over it runs speculatively
# (``pyir_strips``), strip by strip on one side alone where it can: the big side for x in
# [sqrt(2) - 1, inf) (where neither flushing nor log's special cases apply), else the small
# side; both, where a strip has both or what neither variant covers (x <= -sqrt(2) + 1, nan).
@_inline
def log1p_f32_mid(x):
    return _log_f32_normal(x + F(1.0))


@_inline
def log1p_needs_more_than_mid(x):
    return not (x >= _XL1P_SMALL and x < F(np.inf))


@_inline
def log1p_f32_small(x):
    return _log1p_small_f32(_ftz(x))


@_inline
def log1p_needs_big(x):
    return not (abs(x) < _XL1P_SMALL)    # (nan is big: log(nan + 1))


log1p_f32.speculative = ((log1p_f32_mid, log1p_needs_more_than_mid), (log1p_f32_small, log1p_needs_big))


@_inline
def log_f32_normal(x):
    """log_f32 for x positive, normal and finite, or nan."""
    y = _log_f32_normal(x)
    return y if x == x else F(np.nan)


@_inline
def log1p_f32_big(x):
    """log1p_f32 for x in [sqrt(2) - 1, max] or nan."""
    return log_f32_normal(x + F(1.0))


_MAX_F = float(np.finfo(F).max)
log1p_f32.within = ((log1p_f32_big, lambda r: r.within(float(_XL1P_SMALL), _MAX_F)),
                    (log1p_f32_small, lambda r: r.magnitude < float(_XL1P_SMALL)))
log_f32.within = ((log_f32_normal, lambda r: r.within(float(_MIN_NORMAL_F), _MAX_F)),)


# tanh: x for |x| < 4e-4, +-1 for |x| >= 20, else Eigen's odd rational
# (degree 13/6) on x clamped to +-7.99881.
_XTANH_CLAMP = _h32(0x40FFF644)
_XTANH_TINY = F(4e-4)
_XTANH_A = tuple(_h32(b) for b in (0xA59F25C0, 0x2A61337E, 0xAEBD37FF, 0x335C0041,
                                   0x3779434A, 0x3A270DED, 0x3BA059DC))
_XTANH_B = tuple(_h32(b) for b in (0x35A0D3D8, 0x38F895D6, 0x3B14AA05, 0x3BA059DD))


@_inline
def tanh_f32_rational(c):
    """Eigen's rational; tanh_f32 for 4e-4 <= |c| <= the clamp, or nan."""
    z = c * c
    a, b = _XTANH_A, _XTANH_B
    p = a[0]
    for i in range(1, 7):
        p = _fma_f32(z, p, a[i])
    q = _fma_f32(z, _fma_f32(z, _fma_f32(z, b[0], b[1]), b[2]), b[3])
    return _fdiv(c * p, q)


@_inline
def tanh_f32(x):
    # tiny x is returned by a select, which passes subnormals unflushed
    c = -_XTANH_CLAMP if x < -_XTANH_CLAMP else x
    c = _XTANH_CLAMP if c > _XTANH_CLAMP else c
    y = tanh_f32_rational(c)
    y = x if abs(x) < _XTANH_TINY else y
    return _sign_one_f32(x) if abs(x) >= F(20.0) else y


@_inline
def tanh_f32_inner(x):
    """tanh_f32 for |x| <= the clamp (7.99881), or nan."""
    y = tanh_f32_rational(x)
    return x if abs(x) < _XTANH_TINY else y


tanh_f32.within = (
    (tanh_f32_rational, lambda r: r.magnitude <= float(_XTANH_CLAMP)
     and (r.lo >= float(_XTANH_TINY) or r.hi <= -float(_XTANH_TINY))),
    (tanh_f32_inner, lambda r: r.magnitude <= float(_XTANH_CLAMP)))


@_inline
def expm1_f32(x):
    # e^x - 1 for |x| > 1/2, else tanh(x/2) * (e^x + 1); x itself where x/2
    # flushes to zero.
    xf = _ftz(x)
    e = exp_f32(xf)
    h = _ftz(xf * F(0.5))
    y = tanh_f32(h) * (e + F(1.0))
    y = (e - F(1.0)) if abs(xf) > F(0.5) else y
    return x if h == F(0.0) else y


@_inline
def logistic_f32(x):
    return _ftz(_fdiv(F(1.0), exp_f32(-x) + F(1.0)))


# erf: +-1 for |x| >= 3.832, else x*P(x^2)/Q(x^2) (degrees 4/6, FMA Horner).
_XERF_ONE = _h32(0x407547CB)
_XERF_A = tuple(_h32(b) for b in (0x39702D51, 0x3B5F5DA2, 0x3D50B6EB, 0x3E3DA740, 0x3F906EBA))
_XERF_B = tuple(_h32(b) for b in (0xB3FD3906, 0x37C588DF, 0x3A856D28, 0x3C6687D4, 0x3DE34C21,
                                  0x3EFEB44A, 0x3F800000))


@_inline
def erf_f32(x):
    x = _ftz(x)
    z = x * x
    a, b = _XERF_A, _XERF_B
    p = a[0]
    for i in range(1, 5):
        p = _fma_f32(z, p, a[i])
    q = b[0]
    for i in range(1, 7):
        q = _fma_f32(z, q, b[i])
    return _sign_one_f32(x) if abs(x) >= _XERF_ONE else _fdiv(x * p, q)


# sin, cos: XLA calls glibc's sinf/cosf; vmath_sincos reproduces their bits branch-free (so the
# loops vectorize).  Imported here, once the helpers it uses exist; see its docstring.
from . import vmath_sincos as _sincos  # noqa: E402

sin_f32 = _inline(_sincos.sin_f32)
cos_f32 = _inline(_sincos.cos_f32)
sin_f32_small, cos_f32_small = _inline(_sincos.sin_f32_small), _inline(_sincos.cos_f32_small)
sin_f32_fast, cos_f32_fast = _inline(_sincos.sin_f32_fast), _inline(_sincos.cos_f32_fast)
sin_f32.within = ((sin_f32_small, lambda r: r.magnitude < 0.75), (sin_f32_fast, lambda r: r.magnitude < 120.0))
cos_f32.within = ((cos_f32_small, lambda r: r.magnitude < 0.75), (cos_f32_fast, lambda r: r.magnitude < 120.0))


# tan, pow: XLA calls the C library, so do we (scalar calls: these loops do not vectorize, as
# XLA's do not).
@_inline
def tan_f32(x):
    return F(math.tan(x)) if abs(x) < np.inf else F(np.nan)   # (math.tan(inf) raises in Python)


@_inline
def pow_f32(x, y):
    return _ftz(F(_libm_pow(x, y)))


@_inline
def atan2_f32(y, x):
    return _ftz(F(math.atan2(_ftz(y), _ftz(x))))


@_inline
def atan_f32(x):
    # JAX's atan is atan2(x, 1); glibc returns a subnormal x before any arithmetic
    return x if abs(x) < _MIN_NORMAL_F else atan2_f32(x, F(1.0))


# --------------------------------------------------------------------------
# exp / expm1
# Range reduction: x = n*ln2 + r, |r| <= ln2/2, with n = rint(x/ln2) and
# Cody-Waite: ln2 = LN2_HI + LN2_LO where LN2_HI has few enough bits that
# n*LN2_HI is exact for every n reachable after clamping.
# Polynomial: e^r = 1 + r + r^2 * P(r), P fitted to (e^r - 1 - r)/r^2 on
# [-ln2/2, ln2/2]; expm1 uses the same P without the leading 1.
# --------------------------------------------------------------------------

_LOG2E_D = D(1.4426950408889634)
_LN2_HI_D = D(0.6931471805598903)       # 42 significant bits
_LN2_LO_D = D(5.497923018708371e-14)
_EXP_P_D = (0.5, 0.16666666666666666, 0.04166666666666668,
            0.008333333333333333, 0.0013888888888879082,
            0.00019841269841263304, 2.480158733642132e-05,
            2.755731924720479e-06, 2.755726330147475e-07,
            2.5052071109214447e-08, 2.0918129454967065e-09,
            1.6086622436215554e-10)


@_inline
def _exp_tail_f64(r):
    c = _EXP_P_D
    q = c[7] + r * (c[8] + r * (c[9] + r * (c[10] + r * c[11])))
    q = c[3] + r * (c[4] + r * (c[5] + r * (c[6] + r * q)))
    return r * r * (c[0] + r * (c[1] + r * (c[2] + r * q)))


@_inline
def _expm1_poly_f64(r):
    return r + _exp_tail_f64(r)


@_inline
def _reduce_ln2_f64(t):
    k = _rint(t * _LOG2E_D)
    return k, t - k * _LN2_HI_D, -(k * _LN2_LO_D)


@_inline
def _clamp(x, lo, hi):
    """Clamp, mapping nan to hi (so a later float->int cast stays defined)."""
    t = x if x < hi else hi
    return t if t > lo else lo


@_inline
def exp_f64(x):
    k, rh, rl = _reduce_ln2_f64(_clamp(x, -746.0, 710.0))
    p = 1.0 + (rh + (rl + _exp_tail_f64(rh + rl)))
    y = _scale_f64(p, np.int64(k))
    return x if x != x else y


@_inline
def _expm1_dd_f64(x):
    """expm1 as (hi, lo), |lo| <= ulp(hi)/2-ish, relative error ~2^-57;
    x must be clamped to [-40, 710].

    e^x - 1 = 2*((h - 1/2) + h*rh + h*(rl + tail)), h = 2^(k-1): the halved
    form keeps h finite for k = 1024.  (h - 1/2) + h*rh is exact where it
    cancels (k = 1, rh < -1/4, Sterbenz), so the cancellation does not
    amplify the polynomial's rounding error."""
    k, rh, rl = _reduce_ln2_f64(x)
    h = _pow2_f64(np.int64(k) - 1)
    t = rl + _exp_tail_f64(rh + rl)
    a, ae = _two_sum(h - 0.5, h * rh)
    s, se = _two_sum(a, h * t)
    return s * 2.0, (se + ae) * 2.0


@_inline
def expm1_f64(x):
    yh, yl = _expm1_dd_f64(_clamp(x, -40.0, 710.0))
    y = yh + yl
    y = x if abs(x) < 2.0 ** -54 else y
    return x if x != x else y


# --------------------------------------------------------------------------
# log / log1p
# x = 2^e * m with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact).
# log(1+f) = f - hf + s*(hf + R), hf = f^2/2, s = f/(2+f), R = s^2*Q(s^2):
# this is 2*atanh(s) rearranged so that the division's rounding error only
# touches the small correction term.  Q fitted to (2*atanh(s)/s - 2)/s^2 on
# s^2 in [0, ((sqrt2-1)/(sqrt2+1))^2].
# --------------------------------------------------------------------------

_SQRT2_D = D(1.4142135623730951)
_LOG_Q_D = (0.6666666666666666, 0.4000000000000088, 0.28571428570803614,
            0.22222222391713917, 0.18181795640132906, 0.15386239702814658,
            0.13268773138656886, 0.13086626147840102)


@_inline
def _split_f64(x):
    sub = x < 2.2250738585072014e-308
    xs = x * 2.0 ** 54 if sub else x
    ix = _f64_bits(xs)
    m = _f64_from_bits((ix & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000)
    e = ((ix >> 52) & 0x7FF) - (1077 if sub else 1023)
    big = m > _SQRT2_D
    return (D(e + 1) if big else D(e)), (m * 0.5 if big else m)


@_inline
def _log_parts_f64(f):
    s = _fdiv(f, 2.0 + f)
    z = s * s
    c = _LOG_Q_D
    q = c[4] + z * (c[5] + z * (c[6] + z * c[7]))
    r = z * (c[0] + z * (c[1] + z * (c[2] + z * (c[3] + z * q))))
    hf = 0.5 * f * f
    return hf, s * (hf + r)


@_inline
def _log_special(x, y):
    """Apply log's IEEE cases: log(0) = -inf, log(<0) = nan, log(inf) = inf."""
    y = -np.inf if x == 0 else y
    y = np.nan if x < 0 else y
    return x if not (x < np.inf) else y            # +inf and nan pass through


@_inline
def _log_f64_pos(x):
    """log x for finite x > 0 (no special cases)."""
    e, m = _split_f64(x)
    hf, t = _log_parts_f64(m - 1.0)
    return e * _LN2_HI_D - ((hf - (t + e * _LN2_LO_D)) - (m - 1.0))


@_inline
def log_f64(x):
    return D(_log_special(x, _log_f64_pos(x)))


@_inline
def _log1p_special(x, y, tiny):
    y = x if abs(x) < tiny else y                  # log1p(x) ~ x, keeps -0
    y = -np.inf if x == -1 else y
    y = np.nan if x < -1 else y
    return x if not (x < np.inf) else y


@_inline
def log1p_f64(x):
    u = 1.0 + x
    c = (1.0 - (u - x)) if u >= 2.0 else (x - (u - 1.0))
    e, m = _split_f64(u)
    hf, t = _log_parts_f64(m - 1.0)
    t = t + (e * _LN2_LO_D + _fdiv(c, u))
    y = e * _LN2_HI_D - ((hf - t) - (m - 1.0))
    return D(_log1p_special(x, y, 2.0 ** -54))


# --------------------------------------------------------------------------
# tanh / logistic: rational expressions of exp/expm1 arranged so that the
# relative error of the exponential is never amplified.
# --------------------------------------------------------------------------

@_inline
def _div_dd(nh, nl, dh, dl):
    """(nh + nl) / (dh + dl) to ~2^-100 relative, rounded once: the
    quotient's residual is formed exactly with an FMA and added back."""
    q = _fdiv(nh, dh)
    return q + _fdiv((_fma(-q, dh, nh) + nl) - q * dl, dh)


@_inline
def tanh_f64(x):
    # tanh|x| = em/(em + 2), em = expm1(2|x|) >= 0 (so d(tanh)/tanh is at most
    # d(em)/em), with em as a double-double and a corrected division: the only
    # sizeable error is em's ~2^-57 plus the final rounding.
    a = _clamp(abs(x), 0.0, 20.0)
    eh, el = _expm1_dd_f64(a + a)
    dh, dl = _two_sum(eh, 2.0)
    y = _div_dd(eh, el, dh, dl + el)
    y = -y if x < 0 else y
    y = x if abs(x) < 2.0 ** -28 else y
    return x if x != x else y


@_inline
def _exp_dd_f64(x):
    """e^x = 2^k * (ph + pl) for x clamped to [-746, 710]; ~2^-60."""
    k, rh, rl = _reduce_ln2_f64(x)
    ph, pl = _two_sum(1.0, rh)
    ph, pl = _two_sum(ph, pl + (rl + _exp_tail_f64(rh + rl)))   # normalise
    return np.int64(k), ph, pl


@_inline
def logistic_f64(x):
    # 1/(1+e^-x) for x >= 0 and e^x/(1+e^x) for x < 0: one exp of -|x|, so
    # nothing overflows; e^-|x| as a double-double and a corrected division.  Scaling pl may lose bits only when e^-|x| < 2^-1000, where
    # 1 + e is exactly 1 and eh alone is the (rounded-once) answer.
    k, ph, pl = _exp_dd_f64(_clamp(-abs(x), -746.0, 0.0))
    eh = _scale_f64(ph, k)
    el = _scale_f64(pl, k)
    dh, dl = _two_sum(1.0, eh)
    pos = x >= 0
    y = _div_dd(1.0 if pos else eh, 0.0 if pos else el, dh, dl + el)
    return x if x != x else y


# --------------------------------------------------------------------------
# sin / cos
# Range reduction x*2/pi = n + F, |F| <= 1/2, is done for *every* input
# with a table-driven Payne-Hanek scheme: for an exponent e only a window of
# the bits of 2/pi matters (earlier bits give multiples of 4, i.e. whole
# turns; later ones fall below the precision needed).  The window starting
# at bit max(1, e - c) is stored per exponent as 4 chunks; products with
# the chunks are exact (FMA error terms), so the reduction is exact up to the final roundings for all
# finite x, with no size bound and no branch.  The table is looked up with
# a (vectorizable) gather.
# Why not Cody-Waite plus a libm fallback for large |x|: LLVM 22 if-converts
# the branch and, llvm.sin being speculatable, calls libm sin for *every*
# lane (slower than plain libm); a non-speculatable fallback call instead
# keeps the loop from vectorizing at all.  The exact reduction costs 4
# gathers and ~60 flops per element.
# Polynomials on |r| <= pi/4: sin r = r + r^3*S(r^2), cos r = 1 - r^2/2 +
# r^4*C(r^2), S and C fitted to (sin(t)/t - 1)/t^2 and
# (cos(t) - 1 + t^2/2)/t^4 as functions of t^2 on [0, (pi/4)^2].
# --------------------------------------------------------------------------

def _two_over_pi_bits(nbits):
    """floor(2/pi * 2**nbits) from Machin's formula in integer arithmetic."""
    prec = nbits + 64

    def arctan_inv(k):                     # atan(1/k) * 2**prec
        total, term, j, sign = 0, (1 << prec) // k, 1, 1
        while term:
            total += sign * (term // j)
            term //= k * k
            j += 2
            sign = -sign
        return total
    pi = 4 * (4 * arctan_inv(5) - arctan_inv(239))
    return (1 << (prec + nbits + 1)) // pi


def _pio2_table(rows, width, scaled, nbits=1300):
    """Row j: 4 chunks of `width` bits of 2/pi starting at bit weight
    2^-(1 + j), as doubles.  With `scaled` the row is multiplied by 2^j
    (the caller scales x by 2^-j) so that no chunk underflows."""
    bits = _two_over_pi_bits(nbits)
    tab = np.empty(4 * rows, dtype=np.float64)
    mask = (1 << width) - 1
    for j in range(rows):
        for i in range(4):
            last = 1 + j + width * (i + 1) - 1     # weight 2^-last of the lsb
            shift = last - j if scaled else last
            tab[4 * j + i] = math.ldexp((bits >> (nbits - last)) & mask, -shift)
    tab.setflags(write=False)
    return tab


# float64 x = M*2^(e-52): window starts at bit e-53; 4*53 = 212 bits.  Rows
# are stored scaled by 2^j (bit 1180 of 2/pi is far below DBL_MIN).
_PIO2_TAB_F64 = _pio2_table(970, 53, True)

_PIO2_HI = D(1.5707963267948966)
_PIO2_LO = D(6.123233995736766e-17)
_SIN_S_64 = (-0.16666666666666666, 0.008333333333330948,
             -0.00019841269836758574, 2.755731610255244e-06,
             -2.5051131845003624e-08, 1.5918129294866608e-10)
_COS_C_64 = (0.041666666666666664, -0.0013888888888887398,
             2.480158729876569e-05, -2.7557317271729793e-07,
             2.08761462684032e-09, -1.1382632425521717e-11)


@_inline
def _quadrant(n):
    """Integral float n (maybe nan) -> n mod 4 as an int in 0..3."""
    return np.int64(n if abs(n) < 64.0 else 0.0) & 3


@_inline
def _pick_quadrant(q, sn, cs):
    """sin(x) from sin/cos of the reduced argument and the quadrant q."""
    v = cs if (q & 1) != 0 else sn
    return -v if (q & 2) != 0 else v


@_inline
def _reduce_pio2_f64(x):
    """float64 x -> (q, rh, rl): x = (4k + q)*pi/2 + rh + rl.

    x*T_i = p_i + e_i exactly (FMA).  The pieces are summed into a
    non-overlapping triple (s0, s1, s2) with error-free two-sums so that
    cancellation (x close to a multiple of pi/2) loses nothing.
    """
    j = ((_f64_bits(x) >> 52) & 0x7FF) - 1077        # e - 54
    j = j if j < 969 else 969
    j = j if j > 0 else 0
    x = x * _pow2_f64(-j)                            # exact; see table
    j = 4 * j
    t = _PIO2_TAB_F64
    p0 = x * t[j]
    e0 = _fma(x, t[j], -p0)
    p0 = p0 - 4.0 * _rint(0.25 * p0)                 # drop whole turns
    p1 = x * t[j + 1]
    e1 = _fma(x, t[j + 1], -p1)
    p2 = x * t[j + 2]
    e2 = _fma(x, t[j + 2], -p2)
    s0, u = _two_sum(p0, e0)
    s0, v = _two_sum(s0, p1)
    s1, s2 = _two_sum(u, v)
    n = _rint(s0)
    s0 = s0 - n                                      # exact
    s0, u = _two_sum(s0, e1)
    s1, v = _two_sum(s1, u)
    s0, u = _two_sum(s0, p2)
    s1, w = _two_sum(s1, u)
    s2 = s2 + (v + w) + (e2 + x * t[j + 3])
    s1, s2 = _two_sum(s1, s2)
    h, hl = _two_sum(s0, s1)
    lo = hl + s2
    rh = h * _PIO2_HI
    rl = _fma(h, _PIO2_HI, -rh) + (h * _PIO2_LO + lo * _PIO2_HI)
    return _quadrant(n), rh, rl


@_inline
def _sin_dd(rh, rl, z):
    """sin(rh + rl), z = rh^2; |rl| << |rh| <= pi/4."""
    s = _SIN_S_64
    p = s[2] + z * (s[3] + z * (s[4] + z * s[5]))
    p = rh * z * (s[0] + z * (s[1] + z * p))
    return rh + (rl * (1.0 - 0.5 * z) + p)


@_inline
def _cos_dd(rh, rl, z):
    """cos(rh + rl): 1 - z/2 is formed with its rounding error recovered."""
    c = _COS_C_64
    hz = 0.5 * z
    hz_err = 0.5 * _fma(rh, rh, -z)                  # rh^2 = z + 2*hz_err
    w = 1.0 - hz
    p = c[2] + z * (c[3] + z * (c[4] + z * c[5]))
    p = z * z * (c[0] + z * (c[1] + z * p))
    return w + ((((1.0 - w) - hz) - hz_err) + (p - rh * rl))


@_inline
def sin_f64(x):
    q, rh, rl = _reduce_pio2_f64(x)
    z = rh * rh
    y = _pick_quadrant(q, _sin_dd(rh, rl, z), _cos_dd(rh, rl, z))
    y = x if abs(x) < 2.0 ** -27 else y
    return D(y if abs(x) < np.inf else np.nan)


@_inline
def cos_f64(x):
    q, rh, rl = _reduce_pio2_f64(x)
    z = rh * rh
    y = _pick_quadrant(q + 1, _sin_dd(rh, rl, z), _cos_dd(rh, rl, z))
    y = 1.0 if abs(x) < 2.0 ** -27 else y
    return D(y if abs(x) < np.inf else np.nan)


# --------------------------------------------------------------------------
# erf
# |x| < 0.75: erf x = x*(2/sqrt(pi) + x^2*E(x^2)), E fitted to
#   (erf(t)/t - 2/sqrt(pi))/t^2 on t^2 in [0, 0.5625].
# |x| >= 0.75: erf x = 1 - exp(-x^2)*G(x), G = erfcx = exp(x^2)*erfc(x),
#   fitted piecewise in u = x - centre; the piece's coefficients are chosen
#   per lane with selects (no branch, no gather).  Clamped where erf
#   rounds to 1 (5.93).
# --------------------------------------------------------------------------

_TWO_RSQRTPI_M1 = 0.1283791670955126     # 2/sqrt(pi) - 1
_ERF_E_D = (-0.37612638903183754, 0.11283791670955123, -0.026866170645129278,
            0.005223977625387411, -0.000854832701564095,
            0.00012055332331498608, -1.4925616549315293e-05,
            1.6460982712982636e-06, -1.634140690282251e-07,
            1.4476682517736882e-08, -9.710489912378796e-10)
# erfcx on [0.75, 1.25], [1.25, 2], [2, 3.25], [3.25, 6] (centres 1, 1.625,
# 2.625, 4.625), float64.
_ERFCX_D = np.array([
    [0.427583576155807, -0.27321201478389856, 0.15437156137190844,
     -0.07922696894132586, 0.03757229621529058, -0.01666186909056917,
     0.006970142375004008, -0.0027690647640567665, 0.0010502693963382655,
     -0.00038195498856687495, 0.0001336631087752607, -4.513429013951007e-05,
     1.4750365325070475e-05, -4.7778128370308965e-06, 1.469538557256937e-06],
    [0.30226120936348594, -0.14603023666418338, 0.06496207478418799,
     -0.026977910093244503, 0.010561485441324875, -0.003926198501006686,
     0.0013938042928538297, -0.0004746475592878391, 0.00015562548936587145,
     -4.927947801148261e-05, 1.5109464375195563e-05, -4.492615767583387e-06,
     1.2998298415437335e-06, -3.8105617874727317e-07, 1.0454957706441538e-07],
    [0.201887554546017, -0.06846950572892405, 0.022155102007593585,
     -0.0068749086392535675, 0.002054233414663634, -0.0005930183723456537,
     0.00016585339798383744, -4.504374726393774e-05, 1.1903368559778321e-05,
     -3.0662460781270224e-06, 7.710105968677079e-07, -1.8899321155400235e-07,
     4.5473579725414893e-08, -1.1606175119399214e-08, 2.6751662613927904e-09],
    [0.11931528862713332, -0.024712747294644406, 0.005018832389954393,
     -0.0010004316584488325, 0.00019591797917993024, -3.7724415033736606e-05,
     7.147542069433324e-06, -1.3334047658367938e-06, 2.4509295938077754e-07,
     -4.4454172247523446e-08, 7.944708198216813e-09, -1.3718739188224704e-09,
     2.3912471428801143e-10, -5.1488199775930934e-11, 8.708455359978677e-12],
])
_ERFCX_D.setflags(write=False)


@_inline
def _erfcx_f64(a):
    """exp(a^2)*erfc(a) for a in [0.75, 6]."""
    k1, k2, k3 = a >= 1.25, a >= 2.0, a >= 3.25
    u = a - (4.625 if k3 else (2.625 if k2 else (1.625 if k1 else 1.0)))
    c = _ERFCX_D
    p = 0.0
    for i in range(14, -1, -1):
        ci = c[3, i] if k3 else (c[2, i] if k2 else (c[1, i] if k1 else c[0, i]))
        p = p * u + ci
    return p


@_inline
def erf_f64(x):
    a = _clamp(abs(x), 0.0, 6.0)
    z = x * x
    c = _ERF_E_D
    p = c[5] + z * (c[6] + z * (c[7] + z * (c[8] + z * (c[9] + z * c[10]))))
    p = c[0] + z * (c[1] + z * (c[2] + z * (c[3] + z * (c[4] + z * p))))
    small = x + x * (_TWO_RSQRTPI_M1 + z * p)
    a2 = a * a
    ex = exp_f64(-a2) * (1.0 - _fma(a, a, -a2))      # exp(-a^2), a^2 exact
    big = 1.0 - ex * _erfcx_f64(a)
    big = -big if x < 0 else big
    y = small if abs(x) < 0.75 else big
    return x if x != x else y


# --------------------------------------------------------------------------
# pow(x, y) = 2^(y*log2|x|) plus the C99/numpy special cases.
# log2|x| as a double-double (relative error ~2^-66, needed since
#   |y*log2 x| reaches ~1075), y*log2|x| as a double-double, then exp2 of
#   it with the low part as a first-order correction.
# --------------------------------------------------------------------------

_INVLN2_HI = D(1.4426950408889634)
_INVLN2_LO = D(2.0355273740931033e-17)
_LN2_DD_HI = D(0.6931471805599453)
_LN2_DD_LO = D(2.3190468138462996e-17)
_TWO3_HI = D(0.6666666666666666)
_TWO3_LO = D(3.700743415417188e-17)


@_inline
def _is_int(y):
    return y == _rint(y)


@_inline
def _is_odd_int(y):
    h = y * 0.5          # exact; for |y| >= 2^53 (or 2^24) y is even
    return _is_int(y) and not _is_int(h)


@_inline
def _pow_special(x, y, g):
    """Combine g ~ |x|^y (valid for finite nonzero x, finite y; anything
    otherwise) with the C99 Annex F cases that np.power follows.  float64."""
    odd = _is_odd_int(y)
    ax = abs(x)
    neg = _f64_bits(x) < 0                          # sign bit, so -0 counts
    r = g if x > 0.0 else ((-g if odd else g) if _is_int(y) else np.nan)
    # x = +-0 or +-inf: |x|^y is 0 or inf, odd y keeps the sign of x.
    zi = (np.inf if y < 0.0 else 0.0) if ax == 0.0 else (0.0 if y < 0.0 else np.inf)
    zi = -zi if (neg and odd) else zi
    r = zi if (ax == 0.0 or ax == np.inf) else r
    # y = +-inf: 1 for |x| = 1, else 0 or inf.
    yi = np.inf if (ax > 1.0) == (y > 0.0) else 0.0
    yi = 1.0 if ax == 1.0 else yi
    r = yi if abs(y) == np.inf else r
    r = np.nan if (x != x or y != y) else r
    return 1.0 if (y == 0.0 or x == 1.0) else r


@_inline
def _exp2_f64(t):
    """2^t for float64 t (any value; nan -> garbage, caller masks)."""
    t = _clamp(t, -1100.0, 1100.0)
    n = _rint(t)
    r = (t - n) * _LN2_DD_HI
    return _scale_f64(1.0 + _expm1_poly_f64(r), np.int64(n))


@_inline
def _log2_dd(ax):
    """log2(ax) as (hi, lo) for finite ax > 0, relative error ~2^-66.

    log m = 2*atanh(s), s = (m-1)/(m+1) as a double-double; the 2s and
    2s^3/3 terms are carried as double-doubles, the rest (<2^-12 relative)
    in plain double with the log polynomial's Q.
    """
    e, m = _split_f64(ax)
    f = m - 1.0                                     # exact
    dh = m + 1.0
    dl = m - (dh - 1.0)                             # m + 1 = dh + dl exactly
    s = _fdiv(f, dh)
    sl = _fdiv(_fma(-s, dh, f) - s * dl, dh)
    z = s * s
    zl = _fma(s, s, -z) + 2.0 * s * sl
    s3 = s * z                                      # s^3 as a double-double
    s3l = _fma(s, z, -s3) + (s * zl + sl * z)
    c3 = s3 * _TWO3_HI                              # (2/3) s^3
    c3l = _fma(s3, _TWO3_HI, -c3) + (s3 * _TWO3_LO + s3l * _TWO3_HI)
    c = _LOG_Q_D
    q = c[4] + z * (c[5] + z * (c[6] + z * c[7]))
    rest = s3 * z * (c[1] + z * (c[2] + z * (c[3] + z * q)))
    h, l = _two_sum(2.0 * s, c3)
    l = l + (2.0 * sl + c3l + rest)
    # times 1/ln2 (double-double) plus the exponent
    ph = h * _INVLN2_HI
    pl = _fma(h, _INVLN2_HI, -ph) + (h * _INVLN2_LO + l * _INVLN2_HI)
    hi, lo = _two_sum(e, ph)
    return hi, lo + pl


@_inline
def pow_f64(x, y):
    ax = abs(x)
    lh, ll = _log2_dd(ax if ax > 0.0 else 1.0)
    th = y * lh
    tl = _fma(y, lh, -th) + y * ll
    tl = tl if abs(th) < 1100.0 else 0.0
    tc = _clamp(th, -1100.0, 1100.0)
    n = _rint(tc)
    f = (tc - n) + tl                               # |f| <= 1/2 + tiny
    rh = f * _LN2_DD_HI
    rl = _fma(f, _LN2_DD_HI, -rh) + f * _LN2_DD_LO
    em = _expm1_poly_f64(rh)
    g = _scale_f64(1.0 + (em + rl * (1.0 + em)), np.int64(n))
    return D(_pow_special(x, y, g))


# --------------------------------------------------------------------------
# erf_inv (float32): Giles' single-precision polynomials ("Approximating the
# erfinv function", GPU Gems 2012) in w = -log(1 - x^2), the form XLA uses for
# JAX's float32 erf_inv, evaluated as XLA's CPU backend does (its log1p, FMA
# Horner steps), so results, normal samples among them, are bit-equal to JAX's.
# --------------------------------------------------------------------------

_ERFINV_SMALL_W = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_LARGE_W = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                   0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
_EI_A = tuple(F(c) for c in _ERFINV_SMALL_W)
_EI_B = tuple(F(c) for c in _ERFINV_LARGE_W)


@_inline
def erf_inv_f32(x):
    x = _ftz(x)
    w = -log1p_f32(x * -x)
    lt = w < F(5.0)
    w = (w - F(2.5)) if lt else (np.sqrt(w) - F(3.0))
    a, b = _EI_A, _EI_B
    p = a[0] if lt else b[0]
    p = _fma_f32(p, w, a[1] if lt else b[1])
    p = _fma_f32(p, w, a[2] if lt else b[2])
    p = _fma_f32(p, w, a[3] if lt else b[3])
    p = _fma_f32(p, w, a[4] if lt else b[4])
    p = _fma_f32(p, w, a[5] if lt else b[5])
    p = _fma_f32(p, w, a[6] if lt else b[6])
    p = _fma_f32(p, w, a[7] if lt else b[7])
    p = _fma_f32(p, w, a[8] if lt else b[8])
    r = p * x
    return F(x * F(np.inf)) if abs(x) == F(1.0) else _ftz(r)


@_inline
def erf_inv_f64(x):
    # Two Newton steps on erf from the float32 estimate: float64 accuracy for |x| whose
    # float32 rounding is below 1 (x64 mode only; JAX's float64 path is not matched bitwise).
    y = D(erf_inv_f32(F(x)))
    y = y if abs(y) < 1e300 else 0.0
    for _ in range(3):   # Halley steps: f = erf(y) - x, f''/f' = -2y
        f = erf_f64(y) - x
        y = y - _fdiv(f, 1.1283791670955126 * exp_f64(-y * y) + y * f)
    ax = abs(x)
    y = x * np.inf if ax == 1.0 else y
    return np.nan if ax > 1.0 or x != x else y


# --------------------------------------------------------------------------
# threefry2x32 (Random123, 20 rounds) on uint32 scalars, returning the xor of
# its two output words: JAX's partitionable 32-bit random bits.  Only adds,
# shifts, ors and xors, so loops over it vectorize (vprold on AVX-512).
# --------------------------------------------------------------------------

_U = np.uint32


@_inline
def _tf_round(x0, x1, r):
    x0 = _U(x0 + x1)
    x1 = _U(_U(_U(x1 << _U(r)) | _U(x1 >> _U(32 - r))) ^ x0)
    return x0, x1


@_inline
def _tf_rounds(x0, x1, r0, r1, r2, r3):
    """Four rounds, rotating by r0..r3 (then a key injection follows)."""
    x0, x1 = _tf_round(x0, x1, r0)
    x0, x1 = _tf_round(x0, x1, r1)
    x0, x1 = _tf_round(x0, x1, r2)
    return _tf_round(x0, x1, r3)


@_inline
def threefry2x32_xor(k0, k1, x0, x1):
    x0, x1 = threefry2x32_pair(k0, k1, x0, x1)
    return _U(x0 ^ x1)


@_inline
def threefry2x32_pair(k0, k1, x0, x1):
    """Both output words of threefry2x32 (the hash of counter (x0, x1) under key (k0, k1))."""
    k0, k1 = _U(k0), _U(k1)
    k2 = _U(k0 ^ k1 ^ _U(0x1BD11BDA))
    x0 = _U(_U(x0) + k0)
    x1 = _U(_U(x1) + k1)
    x0, x1 = _tf_rounds(x0, x1, 13, 15, 26, 6)
    x0, x1 = _U(x0 + k1), _U(x1 + _U(k2 + _U(1)))
    x0, x1 = _tf_rounds(x0, x1, 17, 29, 16, 24)
    x0, x1 = _U(x0 + k2), _U(x1 + _U(k0 + _U(2)))
    x0, x1 = _tf_rounds(x0, x1, 13, 15, 26, 6)
    x0, x1 = _U(x0 + k0), _U(x1 + _U(k1 + _U(3)))
    x0, x1 = _tf_rounds(x0, x1, 17, 29, 16, 24)
    x0, x1 = _U(x0 + k1), _U(x1 + _U(k2 + _U(4)))
    x0, x1 = _tf_rounds(x0, x1, 13, 15, 26, 6)
    x0, x1 = _U(x0 + k2), _U(x1 + _U(k0 + _U(5)))
    return x0, x1


# name -> plain Python function, whatever the binding state (the translator's source of truth).
PLAIN = _inline.plain_by_name()

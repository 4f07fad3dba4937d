"""float32 sin and cos giving glibc's ``sinf``/``cosf`` bits, written branch-free so loops vectorize.

Why: XLA's CPU backend calls the C library for float32 sin and cos, so JAX's results are glibc's
(2.36, x86_64).  Calling libm per element keeps LLVM from vectorizing any loop that contains one,
so these functions reproduce glibc's algorithm (ARM optimized-routines' design) operation by
operation instead, for every float32 input:

* all arithmetic in double precision; the result is rounded to float32 once, at the end;
* the path is chosen from the top 12 bits of |x| (so the "small" cutoff is |x| < 0.75, the
  float32 with pi/4's top bits, not pi/4 itself): |x| < 2^-12 gives x (sin) or 1 (cos);
  |x| < 0.75 evaluates the polynomial at x; |x| < 120 subtracts n*pi/2 where n comes from a
  truncating conversion of x*(2/pi)*2^24; larger finite |x| reduce with 4/pi as a 192-bit
  fixed-point number (three 32-bit words picked by the exponent) in integer arithmetic;
  inf/nan give nan ((x - x)/(x - x), whose bits x/x has);
* glibc's x86_64 ifunc picks the variant built with FMA on CPUs that have it (every AVX2
  machine), where the compiler fuses each ``a + b*c`` of the reduction and the polynomials;
  ``_fma`` reproduces exactly those fusions (without them cosf(-108.41063) is already 1 ulp
  off; tests/test_sincos_f32.py checks all 2^32 inputs).

Every lane computes every path and selects (the large reduction is three integer multiplies
on words of 4/pi cut out with selects), so there is no branch and no call in the loop body.

The functions reference vmath's low-level helpers (``_fma``, the bit casts), which the
translator and Numba recognise by identity; they are imported at the bottom of this module
because vmath imports this module part-way through its own initialisation (the functions
look their globals up only when compiled or run, so either import order works).
"""
import math

import numpy as np

from .inline_registry import InlineRegistry

_inline = InlineRegistry(globals(), inline="always", fastmath=False, cache=False)
JIT_FUNCTIONS = _inline.functions

F = np.float32
D = np.float64

# Thresholds on (bits(|x|) >> 20), as glibc compares them.
_TOP_TINY = 0x398          # 2^-12
_TOP_SMALL = 0x3F4         # pi/4 as float32 (0x3F490FDB): |x| < 0.75
_TOP_FAST = 0x42F          # 120
_TOP_INF = 0x7F8

_HPI_INV = float.fromhex("0x1.45F306DC9C883p-1")        # 2/pi
_ROUND_MAGIC = 1.5 * 2.0 ** 52     # x + this rounds x (|x| < 2^51) to an integer in the low bits
_HPI = float.fromhex("0x1.921FB54442D18p0")              # pi/2
_PI63 = float.fromhex("0x1.921FB54442D18p-62")           # 2*pi / 2^64
_TWO61 = 1 << 61
# cos r ~ C0 + C1 r^2 + ... + C4 r^8; sin r ~ r + S1 r^3 + S2 r^5 + S3 r^7 (glibc's coefficients)
_C0, _C1, _C2, _C3, _C4 = (float.fromhex(h) for h in (
    "0x1p0", "-0x1.ffffffd0c621cp-2", "0x1.55553e1068f19p-5", "-0x1.6c087e89a359dp-10",
    "0x1.99343027bf8c3p-16"))
_S1, _S2, _S3 = (float.fromhex(h) for h in (
    "-0x1.555545995a603p-3", "0x1.1107605230bc4p-7", "-0x1.994eb3774cf24p-13"))
# 4/pi to 192 bits (bit 191 has weight 2^0), glibc's table as one number: its 32-bit word j is
# (4/pi >> (184 - 8*j)) mod 2^32 for j in 0..23.  A float32 exponent needs words k, k+4, k+8
# (k in 0..15).  They are cut here from six overlapping 64-bit chunks (chunk b = bits 32b ..
# 32b+63, as int64) picked with selects: a table gather would be simpler but costs more than
# the whole fast path on CPUs with the gather-data-sampling mitigation.
_FOUR_OVER_PI_192 = 0xA2F9836E4E441529FC2757D1F534DDC0DB6295993C439041


def _signed64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


_PIO4_CHUNKS = tuple(_signed64((_FOUR_OVER_PI_192 >> (32 * b)) & ((1 << 64) - 1)) for b in range(6))
_K0, _K1, _K2, _K3, _K4, _K5 = _PIO4_CHUNKS


@_inline
def _reduce_fast(xd):
    """xd = n*pi/2 + r for |xd| < 120; returns n mod 4 and r.

    n = rint(xd * 2/pi), from one FMA: adding 1.5 * 2^52 rounds the product to an integer, which
    lands in the low bits of j (no float -> int conversion, so also defined for nan and large
    xd).  glibc truncates xd * (2/pi) * 2^24 and rounds at bit 24 instead; that gives another n
    for five float32 inputs only (negative, at odd multiples of pi/4 to within 2^-24), where the
    other polynomial rounds to the same float32 (tests/test_sincos_f32.py checks every float32
    against the C library)."""
    j = _fma(xd, _HPI_INV, _ROUND_MAGIC)
    nd = j - _ROUND_MAGIC
    return _f64_bits(j) & 3, _fma(-nd, _HPI, xd)     # (-nd: -0 for n = 0, so r keeps x's -0)


@_inline
def _pio4_word(d, sh, c0, c1, c2, c3):
    """Bits sh .. sh+31 of chunk c_d (d in 0..3), by two levels of selects."""
    lo = c1 if (d & 1) != 0 else c0
    hi = c3 if (d & 1) != 0 else c2
    return ((hi if (d & 2) != 0 else lo) >> sh) & 0xFFFFFFFF


@_inline
def _reduce_large(abits):
    """|x| = n*pi/2 + r (n in 0..3) from the bits of |x| for any finite |x| >= 120.

    The 24-bit mantissa, shifted by the exponent's low 3 bits, times three words of 4/pi gives
    a 64-bit fixed-point product mod 8 (2^62 = one quadrant); the integer part rounded is n, the
    signed remainder times 2*pi/2^64 is r.  The 64-bit sum is formed from 32-bit halves so that
    nothing overflows int64."""
    k = (abits >> 26) & 15
    m = ((abits & 0xFFFFFF) | 0x800000) << ((abits >> 23) & 7)    # < 2^31
    pos = 184 - 8 * k                  # the lowest bit of word k; words k+4, k+8: 32, 64 lower
    d = (pos >> 5) - 2                 # word k lies in chunk d + 2 (d in 0..3)
    sh = pos & 31
    high = (m * _pio4_word(d, sh, _K2, _K3, _K4, _K5)) & 0xFFFFFFFF
    mid = m * _pio4_word(d, sh, _K1, _K2, _K3, _K4)
    low = ((m * _pio4_word(d, sh, _K0, _K1, _K2, _K3)) >> 32) + (mid & 0xFFFFFFFF)
    high = (high + (mid >> 32) + (low >> 32) + 0x20000000) & 0xFFFFFFFF   # + 2^61 overall
    frac = ((high & 0x3FFFFFFF) << 32) + (low & 0xFFFFFFFF) - _TWO61
    return high >> 30, D(frac) * _PI63


@_inline
def _sin_poly(xs, r2):
    """sin on the reduced argument xs (r2 = xs^2), glibc's evaluation order and fusions."""
    x3 = xs * r2
    s1 = _fma(r2, _S3, _S2)
    x7 = x3 * r2
    return _fma(x7, s1, _fma(x3, _S1, xs))


@_inline
def _cos_poly(r2):
    """cos on the reduced argument (r2 its square), glibc's evaluation order and fusions."""
    x4 = r2 * r2
    c2 = _fma(r2, _C4, _C3)
    c1 = _fma(r2, _C1, _C0)
    x6 = x4 * r2
    return _fma(x6, c2, _fma(x4, _C2, c1))


@_inline
def _sincos_f32(x, shift):
    """sin(x) (shift 0) or cos(x) (shift 1) of float32 x, as glibc's sinf/cosf round it."""
    sbits = np.int64(_f32_bits(x))
    abits = sbits & 0x7FFFFFFF
    top = abits >> 20
    xd = D(x)
    fast = top < _TOP_FAST
    n_fast, r_fast = _reduce_fast(xd)
    n_large, r_large = _reduce_large(abits)
    small = top < _TOP_SMALL
    n = 0 if small else (n_fast if fast else n_large)
    r = xd if small else (r_fast if fast else r_large)
    # the quadrant's sign: the large reduction worked on |x|, so x's sign joins it there
    q = n if fast else n + ((sbits >> 31) & 1)
    xs = -r if ((q + 1) & 2) != 0 else r                   # glibc's sign table: +, -, -, +
    r2 = r * r
    c = _cos_poly(r2)
    c = -c if (q & 2) != 0 else c
    y = F(c if ((n + shift) & 1) != 0 else _sin_poly(xs, r2))
    tiny = (F(1.0) if shift != 0 else x) if top < _TOP_TINY else y
    # inf/nan: glibc's (x - x)/(x - x); x/x has the same bits (the default nan for inf, nan x
    # quieted) and no warning in plain-Python mode
    return tiny if top < _TOP_INF else _fdiv(x, x)


@_inline
def _abs_bits(x):
    return np.int64(_f32_bits(x)) & 0x7FFFFFFF


@_inline
def _signed_zero(x, shift, y):
    """y rounded to float32, but for sin x itself where x is +-0.  (glibc returns x (sin) or 1
    (cos) for |x| < 2^-12; the polynomials round to those anyway (tests/test_sincos_f32.py checks
    every such input) except that sin's loses the sign of -0: its first FMA adds +0.)"""
    return x if shift == 0 and x == F(0.0) else F(y)


@_inline
def _quadrant_sign(y, m):
    """y negated where bit 1 of m is set: glibc's sign table (+, -, -, +) for both polynomials,
    as one xor of the sign bit."""
    return _f64_from_bits(_f64_bits(y) ^ ((m & 2) << 62))


@_inline
def _sincos_fast_f32(x, shift):
    """``_sincos_f32`` for |x| < 120 (``sincos_needs_full`` false): the fast reduction alone
    (it gives n = 0, r = x below 0.75, glibc's small path) and one polynomial per lane, sin's
    or cos's, through shared operations: the same roundings as ``_sin_poly``/``_cos_poly``.
    The sign glibc gives r (sin's polynomial is odd, its roundings symmetric) or the cosine
    (by n & 2) is applied to the result instead: bit 1 of n + shift in both cases."""
    xd = D(x)
    n, r = _reduce_fast(xd)
    r2 = r * r
    m = n + shift
    odd = (m & 1) != 0                               # cos's polynomial
    u = (r2 if odd else r) * r2                      # x4 or x3
    inner = _fma(u, _C2 if odd else _S1, _fma(r2, _C1, _C0) if odd else r)
    y = _fma(u * r2, _fma(r2, _C4 if odd else _S3, _C3 if odd else _S2), inner)
    return _signed_zero(x, shift, _quadrant_sign(y, m))


@_inline
def _sincos_small_f32(x, shift):
    """``_sincos_f32`` for |x| < 0.75 (``sincos_needs_fast`` false): glibc's small path, the
    polynomial at x itself (n = 0)."""
    xd = D(x)
    r2 = xd * xd
    return _signed_zero(x, shift, _cos_poly(r2) if shift != 0 else _sin_poly(xd, r2))


@_inline
def sincos_needs_fast(x):
    """Whether sin/cos of x need more than ``_sincos_small_f32``: |x| >= 0.75 (or inf, nan)."""
    return _abs_bits(x) >= _TOP_SMALL << 20


@_inline
def sincos_needs_full(x):
    """Whether sin/cos of x need more than ``_sincos_fast_f32``: |x| >= 120, inf or nan."""
    return _abs_bits(x) >= _TOP_FAST << 20


@_inline
def sin_f32_small(x):
    return _sincos_small_f32(x, 0)


@_inline
def cos_f32_small(x):
    return _sincos_small_f32(x, 1)


@_inline
def sin_f32_fast(x):
    return _sincos_fast_f32(x, 0)


@_inline
def cos_f32_fast(x):
    return _sincos_fast_f32(x, 1)


@_inline
def sin_f32(x):
    return _sincos_f32(x, 0)


@_inline
def cos_f32(x):
    return _sincos_f32(x, 1)


# The LLVM translator runs loops over sin/cos speculatively (``pyir_strips``): strip by strip
# with the small variants, the fast ones where an argument needed more, the full functions where
# one needed more still.
@_inline
def _never(x):
    return False


# (the last tier, the full function, holds everywhere: the vectorized large-argument path)
sin_f32.speculative = ((sin_f32_small, sincos_needs_fast), (sin_f32_fast, sincos_needs_full),
                       (sin_f32, _never))
cos_f32.speculative = ((cos_f32_small, sincos_needs_fast), (cos_f32_fast, sincos_needs_full),
                       (cos_f32, _never))


# A loop's last partial strip (all of a loop shorter than a strip) runs with the fast variants,
# and where they do not hold, with the C library's sinf/cosf themselves (the bits XLA gives, and
# the reference of these functions): a scalar loop, whose code is a tenth of the vectorized full
# path's.
@_inline
def sin_f32_libm(x):
    return F(math.sin(x))


@_inline
def cos_f32_libm(x):
    return F(math.cos(x))


sin_f32.tail, sin_f32.rare = (sin_f32_fast, sincos_needs_full), sin_f32_libm
cos_f32.tail, cos_f32.rare = (cos_f32_fast, sincos_needs_full), cos_f32_libm


def ensure_jitted():
    """Rebind this module's functions to Numba dispatchers (vmath.ensure_jitted calls this)."""
    _inline.jit_all()


# After the definitions: see the module docstring.
from .vmath import _f32_bits, _f64_bits, _f64_from_bits, _fdiv, _fma  # noqa: E402

"""Narrow values as bits, and the conversions between the bits and the wide value, as equations.

Every dtype the storage rewrite (``low_precision``) removes is *stored* as an unsigned integer
array holding the bytes numpy (ml_dtypes) holds: bfloat16 and float16 as uint16, the 8-bit
floats, float4_e2m1fn and the sub-byte ints as uint8 (a 4- or 2-bit value in its low bits).
``widen`` gives the value a backend computes with (float32; int32 or uint32 for the ints) and
``narrow`` rounds such a value back to the bits, exactly as ml_dtypes' and XLA's conversions
do: round to nearest even, each format's overflow (to infinity, to NaN, or saturating) and
NaN.  Both are written with integer and float32 primitives (bitcasts, shifts, masks, selects),
so they fuse into the loops around them like any other elementwise equation.

The minifloats (8- and 4-bit floats with a sign, ``exp_bits`` exponent bits of bias ``bias`` and
``man_bits`` mantissa bits) share one pair of conversions:

* widening moves the exponent and mantissa to float32's positions, which reads as the value
  times 2**(bias - 127) (a format's subnormals become float32 subnormals alike), so one exact
  multiplication rebiases every finite value;
* narrowing rebiases and rounds the float32 bits for values in the format's normal range, and
  for smaller ones lets a float32 addition of a power of two whose ulp is the format's
  smallest subnormal do the rounding.
"""
import collections

import numpy as np

from numjax import core, dtypes
from numjax.lax import elementwise as ew
from numjax.lax import low_precision as lp

_U8, _U16, _U32, _I32 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.int32))
_F16, _F32 = np.dtype(np.float16), dtypes.float32

# nan: "ieee" (all-ones exponent: infinity, or NaN), "fn" (only all-ones is NaN, no infinity),
# "fnuz" (NaN is the bits of -0, no infinity, no -0) or "none" (saturates; NaN becomes -0).
Minifloat = collections.namedtuple("Minifloat", "exp_bits man_bits bias nan")
MINIFLOATS = {
    dtypes.float8_e4m3fn: Minifloat(4, 3, 7, "fn"),
    dtypes.float8_e5m2: Minifloat(5, 2, 15, "ieee"),
    dtypes.float8_e4m3: Minifloat(4, 3, 7, "ieee"),
    dtypes.float8_e3m4: Minifloat(3, 4, 3, "ieee"),
    dtypes.float8_e4m3fnuz: Minifloat(4, 3, 8, "fnuz"),
    dtypes.float8_e5m2fnuz: Minifloat(5, 2, 16, "fnuz"),
    dtypes.float8_e4m3b11fnuz: Minifloat(4, 3, 11, "fnuz"),
    dtypes.float4_e2m1fn: Minifloat(2, 1, 1, "none"),
}
_E8M0 = dtypes.float8_e8m0fnu

# narrow dtype -> the unsigned integer type holding its bits.  float16 is here too although
# numpy has it: no backend computes in half precision either (XLA's CPU backend widens it the
# same way), and as bits it needs no type the kernel translator lacks.
STORAGE_DTYPES = {dtypes.bfloat16: _U16, _F16: _U16, _E8M0: _U8,
                  **{d: _U8 for d in MINIFLOATS}, **{d: _U8 for d in lp.NARROW_INTS}}

_QUIET_NAN = 0x7FC00000
_INF = 0x7F800000


def compute_dtype(dtype):
    """The type a narrow ``dtype`` computes in."""
    return _F32 if dtype == _F16 else lp.COMPUTE_DTYPES[dtype]


def widen(bits, dtype):
    """The value (float32, or int32/uint32 for the ints) of ``dtype`` values stored as ``bits``."""
    if dtype == dtypes.bfloat16:
        return _widen_bfloat16(bits)
    if dtype == _F16:
        return _widen_half(bits)
    if dtype in MINIFLOATS:
        return _widen_minifloat(bits, MINIFLOATS[dtype])
    if dtype == _E8M0:
        return _widen_e8m0(bits)
    return _widen_int(bits, dtype)


def narrow(x, dtype):
    """The bits of the wide value ``x`` rounded (ints: wrapped) to ``dtype``."""
    if dtype == dtypes.bfloat16:
        return _narrow_bfloat16(x)
    if dtype == _F16:
        return _narrow_half(x)
    if dtype in MINIFLOATS:
        return _narrow_minifloat(x, MINIFLOATS[dtype])
    if dtype == _E8M0:
        return _narrow_e8m0(x)
    return _narrow_int(x, dtype)


# ---------------------------------------------------------------- building blocks

def _u32(c):
    return np.uint32(c % (1 << 32))


def _f32(c):
    return np.float32(c)


def _convert(x, dtype):
    return ew.convert_element_type_p.bind(x, new_dtype=dtype, weak_type=False, sharding=None)


def _as(x, dtype):
    return ew.bitcast_convert_type_p.bind(x, new_dtype=dtype)


def _and(x, c):
    return ew.and_p.bind(x, _u32(c))


def _or(x, y):
    return ew.or_p.bind(x, y)


def _shl(x, n):
    return ew.shift_left_p.bind(x, _u32(n))


def _shr(x, n):
    return ew.shift_right_logical_p.bind(x, _u32(n))


def _add(x, c):
    return ew.add_p.bind(x, _u32(c))


def _full(like, c):
    """``c`` in the shape of ``like`` (uint32): select_n wants its cases full-shaped."""
    return _or(_and(like, 0), _u32(c))


def _where(pred, if_true, if_false, like):
    """select_n with uint32 cases that may be constants (made full-shaped like ``like``)."""
    cases = [_full(like, c) if isinstance(c, (int, np.integer)) else c for c in (if_false, if_true)]
    return ew.select_n_p.bind(pred, *cases)


def _cmp(prim, x, c):
    return prim.bind(x, _u32(c))


# ---------------------------------------------------------------- bfloat16 and float16

def _widen_bfloat16(bits):
    """bfloat16's 16 bits are the top of a float32."""
    return _as(_shl(_convert(bits, _U32), 16), _F32)


def _narrow_bfloat16(x):
    """Rounded to nearest even; NaN stays a (quiet) NaN."""
    bits = _as(x, _U32)
    top = _shr(bits, 16)
    odd = _and(top, 1)
    # Adding 0x7fff (plus one when the kept part is odd) carries into the kept bits exactly
    # when the dropped half is above one half, or equal to it with an odd kept part.
    rounded = _shr(ew.add_p.bind(bits, _add(odd, 0x7FFF)), 16)
    quiet_nan = _or(top, _u32(0x40))
    out = ew.select_n_p.bind(ew.ne_p.bind(x, x), rounded, quiet_nan)
    return _convert(out, _U16)


def _widen_half(bits):
    """IEEE half: the minifloat widening with half's 5 exponent and 10 mantissa bits."""
    b = _convert(bits, _U32)
    sign = _shl(_and(b, 0x8000), 16)
    moved = _shl(_and(b, 0x7FFF), 13)
    finite = ew.mul_p.bind(_as(moved, _F32), _f32(2.0 ** 112))
    special = _as(_or(moved, _u32(_INF)), _F32)
    is_special = _cmp(ew.ge_p, _and(b, 0x7C00), 0x7C00)
    mag = ew.select_n_p.bind(is_special, finite, special)
    return _as(_or(_as(mag, _U32), sign), _F32)


def _narrow_half(x):
    """IEEE half bits, rounded to nearest even (as a conversion instruction rounds): overflow
    to infinity, NaN to a quiet NaN, tiny values to denormal halves by letting a float32
    addition of a magic constant do the rounding."""
    bits = _as(x, _U32)
    sign = _shr(_and(bits, 0x80000000), 16)
    mag = _and(bits, 0x7FFFFFFF)
    # Normal halves: rebias the exponent, add 0xfff (+1 when the kept part is odd), shift.
    odd = _and(_shr(mag, 13), 1)
    normal = _shr(ew.add_p.bind(_add(mag, ((15 - 127) << 23) + 0xFFF), odd), 13)
    # Denormal halves (and zero): adding 0.5 (2**-1) aligns the half's last mantissa bit with
    # float32's, so the float addition rounds exactly as the conversion must.
    shifted = ew.add_p.bind(_as(mag, _F32), _f32(0.5))
    denormal = ew.sub_p.bind(_as(shifted, _U32), _u32(126 << 23))
    out = ew.select_n_p.bind(_cmp(ew.lt_p, mag, 113 << 23), normal, denormal)
    overflow = _where(_cmp(ew.gt_p, mag, _INF), 0x7E00, 0x7C00, mag)
    out = ew.select_n_p.bind(_cmp(ew.ge_p, mag, (127 + 16) << 23), out, overflow)
    return _convert(_or(out, sign), _U16)


# ---------------------------------------------------------------- the 8- and 4-bit floats

def _widen_minifloat(bits, fmt):
    top = fmt.exp_bits + fmt.man_bits            # the sign bit's position
    b = _and(_convert(bits, _U32), (2 << top) - 1)
    sign = _shl(_and(b, 1 << top), 31 - top)
    mag = _and(b, (1 << top) - 1)
    moved = _shl(mag, 23 - fmt.man_bits)
    out = _as(ew.mul_p.bind(_as(moved, _F32), _f32(2.0 ** (127 - fmt.bias))), _U32)
    inf_code = ((1 << fmt.exp_bits) - 1) << fmt.man_bits
    if fmt.nan == "ieee":
        special = _where(_cmp(ew.gt_p, mag, inf_code), _QUIET_NAN, _INF, mag)
        out = ew.select_n_p.bind(_cmp(ew.ge_p, mag, inf_code), out, special)
    elif fmt.nan == "fn":
        out = _where(_cmp(ew.eq_p, mag, (1 << top) - 1), _QUIET_NAN, out, mag)
    elif fmt.nan == "fnuz":                      # the bits of -0; with its sign: 0xffc00000
        out = _where(_cmp(ew.eq_p, b, 1 << top), _QUIET_NAN, out, mag)
    return _as(_or(out, sign), _F32)


def _narrow_minifloat(x, fmt):
    top = fmt.exp_bits + fmt.man_bits
    bits = _as(x, _U32)
    sign = _shr(_and(bits, 0x80000000), 31 - top)
    mag = _and(bits, 0x7FFFFFFF)
    drop = 23 - fmt.man_bits
    # In the normal range: rebias, add just under half of the dropped part (plus one when the
    # kept part is odd) so the carry rounds to nearest even, and shift. A carry out of the
    # largest finite value gives the code above it (infinity, NaN, or the saturation below).
    odd = _and(_shr(mag, drop), 1)
    normal = _shr(ew.add_p.bind(_add(mag, ((fmt.bias - 127) << 23) + (1 << (drop - 1)) - 1), odd), drop)
    # Below it: the float32 addition of 2**e, whose ulp is the smallest subnormal, rounds.
    e = 24 - fmt.bias - fmt.man_bits
    magic = ew.add_p.bind(_as(mag, _F32), _f32(2.0 ** e))
    subnormal = ew.sub_p.bind(_as(magic, _U32), _u32((127 + e) << 23))
    code = ew.select_n_p.bind(_cmp(ew.lt_p, mag, (128 - fmt.bias) << 23), normal, subnormal)
    is_nan = _cmp(ew.gt_p, mag, _INF)
    largest = (1 << top) - 1
    if fmt.nan == "ieee":
        inf_code = ((1 << fmt.exp_bits) - 1) << fmt.man_bits
        code = _where(_cmp(ew.ge_p, code, inf_code), inf_code, code, mag)
        out = _or(_where(is_nan, inf_code | (1 << (fmt.man_bits - 1)), code, mag), sign)
    elif fmt.nan == "fn":                        # overflow, infinity and NaN: the NaN code
        out = _or(ew.min_p.bind(code, _u32(largest)), sign)
    elif fmt.nan == "fnuz":
        out = _where(_cmp(ew.eq_p, code, 0), 0, _or(code, sign), mag)   # no -0
        out = _where(_cmp(ew.gt_p, code, largest), 1 << top, out, mag)
    else:
        out = _or(ew.min_p.bind(code, _u32(largest)), sign)
        out = _where(is_nan, 1 << top, out, mag)   # XLA's choice for a format without NaN: -0
    return _convert(out, _U8)


def _widen_e8m0(bits):
    """float8_e8m0fnu is a biased exponent alone: 2**(bits - 127), its bits are float32's
    exponent field, but for 2**-127 (a float32 subnormal) and NaN (all ones)."""
    b = _convert(bits, _U32)
    out = _where(_cmp(ew.eq_p, b, 0), 0x00400000, _shl(b, 23), b)
    return _as(_where(_cmp(ew.eq_p, b, 0xFF), _QUIET_NAN, out, b), _F32)


def _narrow_e8m0(x):
    """The nearest power of two, ties upward (ml_dtypes, XLA); float32 subnormals go to 2**-127
    up to it and to 2**-126 above it; zero, negatives, overflow and NaN to NaN."""
    bits = _as(x, _U32)
    normal = _shr(_add(bits, 0x00400000), 23)
    subnormal = _where(_cmp(ew.gt_p, bits, 0x00400000), 1, 0, bits)
    code = ew.min_p.bind(_where(_cmp(ew.lt_p, bits, 0x00800000), subnormal, normal, bits), _u32(0xFF))
    nan = ew.or_p.bind(_cmp(ew.eq_p, bits, 0), _cmp(ew.ge_p, bits, 0x80000000))
    return _convert(_where(nan, 0xFF, code, bits), _U8)


# ---------------------------------------------------------------- the sub-byte ints

def _widen_int(bits, dtype):
    n = lp.int_bits(dtype)
    if lp.NARROW_INTS[dtype] == _I32:            # sign-extend the low n bits
        pad = np.int32(32 - n)
        return ew.shift_right_arithmetic_p.bind(ew.shift_left_p.bind(_convert(bits, _I32), pad), pad)
    return _and(_convert(bits, _U32), (1 << n) - 1)


def _narrow_int(x, dtype):
    """The low bits, as ml_dtypes stores them: int4's -1 is the byte 0x0f."""
    mask = (1 << lp.int_bits(dtype)) - 1
    kept = ew.and_p.bind(x, np.asarray(mask, core.get_aval(x).dtype)[()])
    return _convert(kept, _U8)

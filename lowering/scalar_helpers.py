"""Small scalar functions the generated code calls (inlined by Numba, so loops still vectorize).

Plain Python until ``ensure_jitted()`` rebinds them to ``numba.njit(inline="always")`` dispatchers
(importing this module imports no Numba); ``PLAIN`` keeps the plain functions.
"""
import math

import numpy as np

from .inline_registry import InlineRegistry

_inline = InlineRegistry(globals(), inline="always")
JIT_FUNCTIONS = _inline.functions


def ensure_jitted():
    """Rebind every function of this module to its Numba dispatcher (idempotent, thread-safe).
    Call before compiling Numba code that uses this module."""
    _inline.jit_all()


@_inline
def fmax(a, b):
    # XLA's max: NaN propagates (Python's max does not), and of +0 and -0 the answer is +0
    # in either order.  (copysign reads the sign of a zero; on integers the tie is moot.)
    return a if (a > b or a != a or (a == b and math.copysign(1.0, b) < 0)) else b


@_inline
def fmin(a, b):
    # XLA's min: NaN propagates, and of +0 and -0 the answer is -0 in either order.
    return a if (a < b or a != a or (a == b and math.copysign(1.0, a) < 0)) else b


@_inline
def dot_step(acc, a, b):
    # One step of a contraction.  The LLVM backend lets the compiler reassociate the sum (and
    # fuse the multiply-add), so the loop vectorizes, as XLA's dot does on CPU.
    return acc + a * b


@_inline
def sign(x):
    # Zeros (with their sign) and NaNs are their own sign, as in JAX.
    return x if x == 0 else ((x > 0) - (x < 0) if x == x else x)


@_inline
def logistic(x):
    return 1 / (1 + np.exp(-x))


@_inline
def round_away(x):
    # Halves away from zero.  Not floor(|x| + 0.5): that sum rounds (to even) once |x| nears
    # 2**mantissa_bits (2**52 + 1 would become 2**52 + 2).  x - trunc(x) is exact.
    whole = np.trunc(x)
    return whole + math.copysign(1.0, x) if abs(x - whole) >= 0.5 else whole


# Integer division and shifts, with XLA's definitions where C's are undefined.  The scalar
# rules pass operands widened to 64 bits (sign- or zero-extended from their own width, as the
# operation needs) and cast the result back to the operand's width, so one helper serves every
# width; the guarded cases are the ones where LLVM's sdiv/srem would trap and its shifts would
# be poison.  numjax/lax/elementwise.py's eager rules define the same values.

@_inline
def sdiv(a, b):
    # Truncating quotient of int64s; x / 0 is -1 and INT_MIN / -1 wraps to INT_MIN.
    if b == 0:
        return np.int64(-1)
    if b == -1:
        return -a
    q = a // b
    if a % b != 0 and (a < 0) != (b < 0):    # floor and truncation differ
        return q + 1
    return q


@_inline
def udiv(a, b):
    # Quotient of uint64s; x / 0 is all ones.
    if b == np.uint64(0):
        return ~np.uint64(0)
    return a // b


@_inline
def srem(a, b):
    # Remainder of int64s with the dividend's sign; x % 0 is x and x % -1 is 0.
    if b == 0:
        return a
    if b == -1:
        return np.int64(0)
    r = a % b                                 # floor remainder, the divisor's sign
    if r != 0 and (a < 0) != (b < 0):
        return r - b
    return r


@_inline
def urem(a, b):
    if b == np.uint64(0):
        return a
    return a % b


@_inline
def shift_left(x, n):
    # x: int64 holding the operand's bits; n: the amount read as unsigned.  Amounts in
    # [width, 64) already shift a narrower operand's bits out; 64 and more give 0 here.
    return np.int64(0) if n >= np.uint64(64) else x << np.int64(n & np.uint64(63))


@_inline
def shift_right_logical(x, n):
    # x: the operand zero-extended to uint64.
    return np.uint64(0) if n >= np.uint64(64) else x >> (n & np.uint64(63))


@_inline
def shift_right_arithmetic(x, n):
    # x: the operand sign-extended to int64 (an unsigned one read as signed): every amount of
    # at least the width leaves copies of the sign bit.
    return x >> np.int64(n if n < np.uint64(63) else np.uint64(63))


@_inline
def popcount(x):
    # Set bits of a uint64 (an operand's bits, zero-extended): bit-slice sums of 2, 4 and 8
    # bits, then of the bytes; no branches (loops over it still vectorize) and no wrapping.
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    x = x + (x >> np.uint64(8))
    x = x + (x >> np.uint64(16))
    x = x + (x >> np.uint64(32))
    return x & np.uint64(0x7F)


@_inline
def fill_below(x):
    # x (uint64) with every bit below its highest set bit set too: its popcount is then x's
    # bit length, and a width less that is the count of leading zeros (the clz rule).
    x = x | (x >> np.uint64(1))
    x = x | (x >> np.uint64(2))
    x = x | (x >> np.uint64(4))
    x = x | (x >> np.uint64(8))
    x = x | (x >> np.uint64(16))
    return x | (x >> np.uint64(32))


@_inline
def ipow(x, n):
    acc = x * 0 + 1
    while n:
        if n & 1:
            acc = acc * x
        x = x * x
        n >>= 1
    return acc


def _make_f2i(dtype):
    info = np.iinfo(dtype)
    lo, hi = float(info.min), float(info.max)
    imin, imax = int(info.min), int(info.max)
    cast = getattr(np, np.dtype(dtype).name)

    @_inline
    def f2i(x):
        # Saturating float->int cast with NaN -> 0, as XLA converts.
        if x != x:
            return cast(0)
        if x >= hi:
            return cast(imax)
        if x <= lo:
            return cast(imin)
        return cast(x)
    return f2i


f2i_int8, f2i_int16, f2i_int32, f2i_int64 = (_make_f2i(t) for t in (np.int8, np.int16, np.int32, np.int64))
f2i_uint8, f2i_uint16, f2i_uint32, f2i_uint64 = (_make_f2i(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))


# XLA's ReducePrecision on the bits (numjax/lax/bits.py has the same steps for numpy): the
# magnitude's mantissa rounds to nearest even (a carry may raise the exponent), an exponent
# above the reduced range gives infinity, one at or below its minimum zero; the sign is kept
# and NaN passes through. The bit counts are constants of each call, so the branches fold.
@_inline
def reduce_precision_f32(x, exponent_bits, mantissa_bits):
    bits = np.int64(_f32_bits(x))
    mag = bits & 0x7FFFFFFF
    if mantissa_bits < 23:
        shift = 23 - mantissa_bits
        last = np.int64(1) << shift
        mag = (mag + ((mag >> shift) & 1) + ((last >> 1) - 1)) & ~(last - 1)
    if exponent_bits < 8:
        reduced = (1 << (exponent_bits - 1)) - 1
        e = mag & 0x7F800000
        mag = 0x7F800000 if e > ((127 + reduced) << 23) else (0 if e <= ((127 - reduced) << 23) else mag)
    out = _f32_from_bits(np.int32((mag & 0x7FFFFFFF) | (bits & -0x80000000)))
    return x if x != x else out


@_inline
def reduce_precision_f64(x, exponent_bits, mantissa_bits):
    bits = _f64_bits(x)
    mag = bits & 0x7FFFFFFFFFFFFFFF
    if mantissa_bits < 52:
        shift = 52 - mantissa_bits
        last = np.int64(1) << shift
        mag = (mag + ((mag >> shift) & 1) + ((last >> 1) - 1)) & ~(last - 1)
    if exponent_bits < 11:
        reduced = (1 << (exponent_bits - 1)) - 1
        e = mag & 0x7FF0000000000000
        mag = 0x7FF0000000000000 if e > ((1023 + reduced) << 52) else (0 if e <= ((1023 - reduced) << 52) else mag)
    out = _f64_from_bits((mag & 0x7FFFFFFFFFFFFFFF) | (bits & (np.int64(-1) << 63)))
    return x if x != x else out


# name -> plain Python function, whatever the binding state (the f2i_* closures all share __name__ "f2i").
PLAIN = _inline.plain_by_name()


from .vmath import _f32_bits, _f32_from_bits, _f64_bits, _f64_from_bits  # noqa: E402  (after: vmath is large)

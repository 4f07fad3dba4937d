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
    # NaN-propagating, like XLA's max (Python's max is not).
    return a if (a > b or a != a) else b


@_inline
def fmin(a, b):
    return a if (a < b or a != a) else b


@_inline
def dot_step(acc, a, b):
    # One step of a contraction.  The LLVM backend lets the compiler reassociate the sum (and
    # fuse the multiply-add), so the loop vectorizes, as XLA's dot does on CPU.
    return acc + a * b


@_inline
def sign(x):
    return (x > 0) - (x < 0) if x == x else x


@_inline
def logistic(x):
    return 1 / (1 + np.exp(-x))


@_inline
def round_away(x):
    return math.copysign(math.floor(abs(x) + 0.5), x)


@_inline
def idiv(a, b):
    # C-style truncating division; XLA defines x / 0 as -1 for integers.
    if b == 0:
        return -1
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


@_inline
def irem(a, b):
    if b == 0:
        return a
    r = abs(a) % abs(b)
    return -r if a < 0 else r


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


# name -> plain Python function, whatever the binding state (the f2i_* closures all share __name__ "f2i").
PLAIN = _inline.plain_by_name()

"""What a reference says about a node's value, and how a result is held to it.

A reference returns a numpy array (the result must match it bit for bit: NaN matches any
NaN, -0.0 does not match +0.0) or an :class:`Expect` with a tolerance:

* ``ulps``: for functions computed by approximation (transcendentals), the result may be
  that many units in the last place of the result dtype away;
* ``atol``: an absolute bound per element, for sums and products whose rounding depends on
  the evaluation order (``n * eps * sum|terms|``);
* ``unknown``: elements whose value is implementation-defined (a sum whose partial sums can
  overflow in one order and not in another);
* ``alt``: a second acceptable value (float subnormals flushed to zero, as XLA's CPU
  backend does, or kept, as IEEE does).
"""
import dataclasses

import numpy as np

from jax_types import np_dtype

_MANTISSA = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}
_MIN_EXP = {"float16": -14, "bfloat16": -126, "float32": -126, "float64": -1022}


@dataclasses.dataclass
class Expect:
    value: np.ndarray
    ulps: float = 0
    atol: object = 0.0
    unknown: np.ndarray = None
    alt: np.ndarray = None
    zero_sign: bool = True    # False: -0.0 matches +0.0


def tiny(dtype):
    return 2.0 ** _MIN_EXP[dtype]


def eps(dtype):
    return 2.0 ** (1 - _MANTISSA[dtype])


def ulp(x, dtype):
    """Spacing of ``dtype`` at each |x| (float64 array)."""
    a = np.abs(np.asarray(x, np.float64))
    with np.errstate(all="ignore"):
        _, e = np.frexp(np.where(np.isfinite(a), a, 1.0))
    return np.maximum(np.ldexp(1.0, e - _MANTISSA[dtype]),
                      np.ldexp(1.0, _MIN_EXP[dtype] - _MANTISSA[dtype] + 1))


def as_float64(x):
    x = np.asarray(x)
    return x.astype(np.float64)


def same_bits(got, want):
    """Elementwise: equal values, equal zero signs; any NaN equals any NaN."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype.kind in "biu" or want.dtype.kind in "biu":
        return got == want
    g, w = as_float64(got), as_float64(want)
    return ((g == w) & (np.signbit(g) == np.signbit(w))) | (np.isnan(g) & np.isnan(w))


def mismatches(got, expect, dtype):
    """Boolean mask of the elements of ``got`` that ``expect`` rejects."""
    if not isinstance(expect, Expect):
        expect = Expect(np.asarray(expect))
    want = np.asarray(expect.value)
    got = np.asarray(got)
    ok = same_bits(got, want)
    if not expect.zero_sign:
        ok |= (as_float64(got) == 0) & (as_float64(want) == 0)
    if dtype in _MANTISSA and (np.any(expect.ulps) or np.any(expect.atol)):
        g, w = as_float64(got), as_float64(want)
        with np.errstate(all="ignore"):
            close = np.abs(g - w) <= expect.ulps * ulp(w, dtype) + expect.atol
        ok |= close & np.isfinite(g) & np.isfinite(w)
    if expect.alt is not None:
        ok |= ~mismatches(got, dataclasses.replace(expect, alt=None, value=expect.alt), dtype)
    if expect.unknown is not None:
        ok |= np.broadcast_to(expect.unknown, ok.shape)
    return ~ok


def flush_subnormals(x, dtype):
    """``x`` with subnormal values replaced by zeros of the same sign."""
    if dtype not in _MANTISSA:
        return x
    w = as_float64(x)
    sub = (w != 0) & (np.abs(w) < tiny(dtype))
    if not sub.any():
        return x
    return np.where(sub, np.copysign(0.0, w), w).astype(np_dtype(dtype))

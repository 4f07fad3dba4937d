"""Random-bit primitives: the threefry2x32 block cipher and the 64-bit counter iota it hashes.

``threefry2x32`` is Random123's Threefry-2x32 with 20 rounds, applied elementwise to four
uint32 operands (key words and counter words, broadcast together) and giving two uint32
results.  ``iota_2x32_shape`` is the row-major position of every element of ``shape`` as a
64-bit count split into (high, low) uint32 words: the counters of partitionable random bits.
"""
import numpy as np

from ..core import ShapedArray
from ..interpreters import ad, batching
from ._base import Array, broadcast_shapes, make_primitive, to_numpy

__all__ = ["threefry2x32_p", "iota_2x32_shape_p", "threefry2x32_xor_p", "threefry2x32",
           "iota_2x32_shape", "threefry2x32_xor"]

# Rotation distances of the two alternating groups of four rounds, and the key-schedule parity.
ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
KS_PARITY = 0x1BD11BDA


def _rotl(x, d):
    return (x << np.uint32(d)) | (x >> np.uint32(32 - d))


def threefry2x32_numpy(k0, k1, x0, x1):
    """The cipher on numpy uint32 arrays (broadcast), uint32 wraparound arithmetic."""
    with np.errstate(over="ignore"):
        return _threefry_rounds(*np.broadcast_arrays(*(np.asarray(a, np.uint32)
                                                       for a in (k0, k1, x0, x1))))


def _threefry_rounds(k0, k1, x0, x1):
    ks = (k0, k1, k0 ^ k1 ^ np.uint32(KS_PARITY))
    x0 = x0 + ks[0]
    x1 = x1 + ks[1]
    for block in range(5):
        for r in ROTATIONS[block % 2]:
            x0 = x0 + x1
            x1 = _rotl(x1, r) ^ x0
        x0 = x0 + ks[(block + 1) % 3]
        x1 = x1 + ks[(block + 2) % 3] + np.uint32(block + 1)
    return x0, x1


def _threefry_impl(k0, k1, x0, x1):
    outs = threefry2x32_numpy(*(to_numpy(a) for a in (k0, k1, x0, x1)))
    return [Array(np.array(o)) for o in outs]


def _threefry_abstract(*avals):
    if any(a.dtype != np.uint32 for a in avals):
        raise TypeError(f"Arguments to threefry2x32 must have uint32 type, got {list(avals)}")
    shape = broadcast_shapes("threefry2x32", *(a.shape for a in avals))
    return [ShapedArray(shape, np.uint32)] * 2


threefry2x32_p = make_primitive("threefry2x32", _threefry_impl, _threefry_abstract,
                                multiple_results=True)


def threefry2x32(k0, k1, x0, x1):
    return threefry2x32_p.bind(k0, k1, x0, x1)


def _iota_2x32_impl(*, shape):
    count = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.uint64).reshape(shape)
    return [Array((count >> np.uint64(32)).astype(np.uint32)), Array(count.astype(np.uint32))]


def _iota_2x32_abstract(*, shape):
    return [ShapedArray(shape, np.uint32)] * 2


iota_2x32_shape_p = make_primitive("iota_2x32_shape", _iota_2x32_impl, _iota_2x32_abstract,
                                   multiple_results=True)


def iota_2x32_shape(shape):
    """(high, low) words of the row-major position of each element of ``shape``."""
    shape = tuple(int(d) for d in shape)
    if not shape:
        zero = Array(np.zeros((), np.uint32))
        return zero, zero
    return tuple(iota_2x32_shape_p.bind(shape=shape))


# ---------------------------------------------------------------- transformation rules

def _threefry_batch(vals, dims):
    vals = batching._align_for_broadcast(vals, dims)
    return threefry2x32_p.bind(*vals), [0, 0]


batching.batch_rules[threefry2x32_p] = _threefry_batch
ad.defjvp_zero(threefry2x32_p)
ad.defjvp_zero(iota_2x32_shape_p)


# ---------------------------------------------------------------- fused 32-bit random bits
# Partitionable 32-bit random bits are threefry2x32's two words xor-ed together.  As one
# single-output elementwise primitive the hash fuses into the loop that consumes the bits
# (uniform -> normal ...), so no intermediate arrays are written.

def _threefry_xor_impl(k0, k1, x0, x1):
    y0, y1 = threefry2x32_numpy(*(to_numpy(a) for a in (k0, k1, x0, x1)))
    return Array(np.array(y0 ^ y1))


def _threefry_xor_abstract(*avals):
    return _threefry_abstract(*avals)[0]


threefry2x32_xor_p = make_primitive("threefry2x32_xor", _threefry_xor_impl, _threefry_xor_abstract,
                                    elementwise=True)


def threefry2x32_xor(k0, k1, x0, x1):
    return threefry2x32_xor_p.bind(k0, k1, x0, x1)


batching.defbroadcasting(threefry2x32_xor_p)
ad.defjvp_zero(threefry2x32_xor_p)


# ---------------------------------------------------------------- a * b + c, rounded once
# XLA's CPU backend contracts uniform's ``floats * (maxval - minval) + minval`` into one fused
# multiply-add, so JAX's uniform values on a range are those of an FMA.

def _mul_add_numpy(a, b, c):
    a, b, c = (np.asarray(v) for v in (a, b, c))
    dtype = a.dtype
    if dtype == np.float32:   # the float64 product of float32 values is exact
        with np.errstate(all="ignore"):
            return (a.astype(np.float64) * b + c.astype(np.float64)).astype(np.float32)
    with np.errstate(all="ignore"):
        return a * b + c


def _mul_add_impl(a, b, c):
    return Array(np.array(_mul_add_numpy(to_numpy(a), to_numpy(b), to_numpy(c))))


def _mul_add_abstract(a, b, c):
    shape = broadcast_shapes("mul_add", a.shape, b.shape, c.shape)
    return ShapedArray(shape, a.dtype)


mul_add_p = make_primitive("mul_add", _mul_add_impl, _mul_add_abstract, elementwise=True)


def mul_add(a, b, c):
    return mul_add_p.bind(a, b, c)


batching.defbroadcasting(mul_add_p)
ad.defjvp(mul_add_p,
          lambda t, a, b, c: _lax().mul(t, b),
          lambda t, a, b, c: _lax().mul(a, t),
          lambda t, a, b, c: t)


def _lax():
    from .. import lax
    return lax

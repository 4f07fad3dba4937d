"""Primitives on the bits of values: bitcast_convert_type (a reinterpretation, also between
types of different widths), population_count, clz and reduce_precision (a float rounded to
fewer exponent and mantissa bits, kept in its own type).

A bitcast between widths works on the element's bits as one little-endian word, as XLA's
does: a float32 viewed as uint8 is its four bytes, lowest first, along a new trailing axis;
the reverse consumes a trailing axis of four.  Sub-byte types (int4, uint4, int2, uint2,
float4_e2m1fn) pack the same way, lowest bits first.
"""
import numpy as np

from .. import dtypes
from ..array import Array, to_numpy
from ..core import ShapedArray
from ._base import check_dtype_kind, make_primitive


# ---------------------------------------------------------------- bitcast_convert_type

def bitcast_shape(shape, old_dtype, new_dtype):
    """The shape of ``shape``'s values of ``old_dtype`` viewed as ``new_dtype`` (JAX's rule)."""
    old_bits, new_bits = dtypes.itemsize_bits(old_dtype), dtypes.itemsize_bits(new_dtype)
    if old_bits == new_bits:
        return tuple(shape)
    if old_bits > new_bits:
        return (*shape, old_bits // new_bits)
    last = shape[-1] if shape else 1
    if last * old_bits != new_bits:
        raise ValueError(f"Attempting to convert array of shape {tuple(shape)} from {np.dtype(old_dtype).name} "
                         f"of size {old_bits} bits to {np.dtype(new_dtype).name} of size {new_bits}, bits "
                         f"but {last} * {old_bits} != {new_bits}: bitcast_convert_type to a wider type "
                         f"consumes a trailing axis of {new_bits // old_bits} elements (reshape the operand "
                         "so its last axis has that size).")
    return tuple(shape[:-1])


def _bitcast_abstract(x, *, new_dtype):
    new = np.dtype(new_dtype)
    if x.dtype != new and (dtypes.kind(x.dtype) in "bc" or dtypes.kind(new) in "bc"):
        raise TypeError("lax.bitcast_convert_type does not support bool or complex values unless the "
                        f"operand and destination types match. Got operand dtype={x.dtype.name}, "
                        f"new_dtype={new.name}. Consider using the arr.view() method instead.")
    return ShapedArray(bitcast_shape(x.shape, x.dtype, new), new, False)


def _unsigned(bits):
    return np.dtype(f"uint{max(8, bits)}")


def _codes(v):
    """The bits of each element of ``v`` as an unsigned integer (a sub-byte type's low bits)."""
    bits = dtypes.itemsize_bits(v.dtype)
    codes = np.ascontiguousarray(v).view(_unsigned(8 * v.dtype.itemsize)).reshape(v.shape)
    return codes & np.uint8((1 << bits) - 1) if bits < 8 else codes


def _from_codes(codes, dtype):
    bits = dtypes.itemsize_bits(dtype)
    return np.ascontiguousarray(codes.astype(_unsigned(bits))).view(dtype).reshape(np.shape(codes))


def bitcast_numpy(v, new_dtype):
    """numpy array ``v`` reinterpreted as ``new_dtype`` (the shapes of ``bitcast_shape``)."""
    new = np.dtype(new_dtype)
    old_bits, new_bits = dtypes.itemsize_bits(v.dtype), dtypes.itemsize_bits(new)
    if old_bits == new_bits:
        return _from_codes(_codes(v), new) if old_bits < 8 else np.ascontiguousarray(v).view(new).reshape(v.shape)
    shape = bitcast_shape(v.shape, v.dtype, new)
    if old_bits % 8 == 0 and new_bits % 8 == 0:   # whole bytes: numpy's view (little-endian)
        return np.ascontiguousarray(v).reshape(-1).view(new).reshape(shape)
    wide = np.dtype(np.uint64)
    if old_bits > new_bits:
        ratio = old_bits // new_bits
        shifts = (np.arange(ratio, dtype=wide) * wide.type(new_bits))
        parts = (_codes(v).astype(wide)[..., None] >> shifts) & wide.type((1 << new_bits) - 1)
        return _from_codes(parts, new).reshape(shape)
    ratio = new_bits // old_bits
    shifts = np.arange(ratio, dtype=wide) * wide.type(old_bits)
    word = np.bitwise_or.reduce(_codes(v).astype(wide) << shifts, axis=-1)
    return _from_codes(word, new).reshape(shape)


def _bitcast_impl(x, *, new_dtype):
    return Array(bitcast_numpy(to_numpy(x), new_dtype), False)


bitcast_convert_type_p = make_primitive("bitcast_convert_type", _bitcast_impl, _bitcast_abstract, elementwise=True)


def bitcast_convert_type(operand, new_dtype):
    new_dtype = dtypes.check_user_dtype(new_dtype, "bitcast_convert_type")
    return bitcast_convert_type_p.bind(operand, new_dtype=np.dtype(new_dtype))


# ---------------------------------------------------------------- population_count, clz

def _int_unary_abstract(name):
    def rule(x):
        check_dtype_kind(name, x, "iu", "integer")
        return x
    return rule


_BYTE_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], np.uint8)


def _popcount_numpy(v):
    codes = _codes(v)
    per_byte = _BYTE_POPCOUNT[codes.reshape(-1).view(np.uint8)].reshape(v.shape + (codes.dtype.itemsize,))
    return per_byte.sum(axis=-1, dtype=np.int64).astype(v.dtype)


def _clz_numpy(v):
    # Leading zeros of the element's own width: the width less the bit length of its bits.
    bits = dtypes.itemsize_bits(v.dtype)
    codes = _codes(v).astype(np.uint64)
    length = np.zeros(codes.shape, np.int64)
    for shift in (32, 16, 8, 4, 2, 1):    # binary search for the highest set bit
        big = codes >= (np.uint64(1) << np.uint64(shift))
        codes = np.where(big, codes >> np.uint64(shift), codes)
        length += np.where(big, shift, 0)
    length += (codes != 0)
    return (bits - length).astype(v.dtype)


def _int_unary_impl(np_fn):
    def impl(x):
        return Array(np.asarray(np_fn(np.asarray(to_numpy(x)))), getattr(x, "weak_type", False))
    return impl


population_count_p = make_primitive("population_count", _int_unary_impl(_popcount_numpy),
                                    _int_unary_abstract("population_count"), elementwise=True)
clz_p = make_primitive("clz", _int_unary_impl(_clz_numpy), _int_unary_abstract("clz"), elementwise=True)


def population_count(x):
    """The number of set bits of each element (of its own width)."""
    from ._base import coerce_scalars
    x, = coerce_scalars([x])
    return population_count_p.bind(x)


def clz(x):
    """The number of leading zero bits of each element (of its own width)."""
    from ._base import coerce_scalars
    x, = coerce_scalars([x])
    return clz_p.bind(x)


# ---------------------------------------------------------------- reduce_precision
# XLA's ReducePrecision on the value's own bits: the mantissa rounds to nearest even at
# ``mantissa_bits`` (a carry may raise the exponent), then an exponent above the reduced
# range gives a signed infinity and one at or below its minimum a signed zero (subnormals of
# the reduced format flush); NaN passes through unchanged (checked against JAX 0.10.2 on
# every float32 class of input and 2M random bit patterns).

_FLOAT_LAYOUT = {np.dtype(np.float16): (5, 10), np.dtype(np.float32): (8, 23), np.dtype(np.float64): (11, 52)}


def float_layout(dtype):
    """(exponent bits, mantissa bits) of a binary float dtype (bfloat16 included)."""
    dtype = np.dtype(dtype)
    if dtype in _FLOAT_LAYOUT:
        return _FLOAT_LAYOUT[dtype]
    info = dtypes.finfo(dtype)
    return int(info.nexp), int(info.nmant)


def reduce_precision_bits(u, nbits, src_e, src_m, exponent_bits, mantissa_bits):
    """``u``: the values' bits as uint64 (numpy); the reduced values' bits."""
    one = np.uint64(1)
    if mantissa_bits < src_m:
        shift = np.uint64(src_m - mantissa_bits)
        last = one << shift
        bias = (last >> one) - one
        u = (u + ((u >> shift) & one) + bias) & ~(last - one)
    if exponent_bits < src_e:
        exp_mask = np.uint64(((1 << src_e) - 1) << src_m)
        src_bias, reduced_bias = (1 << (src_e - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        exponent = u & exp_mask
        sign = u & np.uint64(1 << (nbits - 1))
        u = np.where(exponent > np.uint64((src_bias + reduced_bias) << src_m), sign | exp_mask,
                     np.where(exponent <= np.uint64((src_bias - reduced_bias) << src_m), sign, u))
    return u & np.uint64((1 << nbits) - 1)


def _reduce_precision_impl(x, *, exponent_bits, mantissa_bits):
    v = to_numpy(x)
    nbits = 8 * v.dtype.itemsize
    src_e, src_m = float_layout(v.dtype)
    uint = np.dtype(f"uint{nbits}")
    u = np.ascontiguousarray(v).view(uint).astype(np.uint64)
    out = reduce_precision_bits(u, nbits, src_e, src_m, exponent_bits, mantissa_bits).astype(uint).view(v.dtype)
    out = np.where(np.isnan(v), v, out.reshape(v.shape))
    return Array(np.asarray(out, v.dtype), getattr(x, "weak_type", False))


def _reduce_precision_abstract(x, *, exponent_bits, mantissa_bits):
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(f"reduce_precision: mantissa_bits must be non-negative; got {mantissa_bits}")
    check_dtype_kind("reduce_precision", x, "f", "floating")
    return x


reduce_precision_p = make_primitive("reduce_precision", _reduce_precision_impl, _reduce_precision_abstract,
                                    elementwise=True)


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """``operand`` rounded to a float format of ``exponent_bits`` and ``mantissa_bits`` (XLA's
    ReducePrecision), in its own dtype: ``reduce_precision(x, 8, 7)`` gives bfloat16's values."""
    exponent_bits = _static_int(exponent_bits, "exponent_bits")
    mantissa_bits = _static_int(mantissa_bits, "mantissa_bits")
    return reduce_precision_p.bind(operand, exponent_bits=exponent_bits, mantissa_bits=mantissa_bits)


def _static_int(value, name):
    import operator
    from ..core import Tracer
    from ..errors import ConcretizationTypeError
    if isinstance(value, Tracer):
        raise ConcretizationTypeError(value, f"The problem arose with the `{name}` argument of "
                                             "lax.reduce_precision: pass a Python int (a static argument under jit).")
    return operator.index(value)


# ---------------------------------------------------------------- rules
from ..interpreters import batching  # noqa: E402
from ..interpreters.ad import deflinear, defjvp_zero  # noqa: E402


def _bitcast_batch(vals, dims, *, new_dtype):
    # The batch axis goes first: a widening bitcast consumes the last axis, which must not be it.
    (x,), (d,) = vals, dims
    return bitcast_convert_type_p.bind(batching.moveaxis(x, d, 0), new_dtype=new_dtype), 0


batching.batch_rules[bitcast_convert_type_p] = _bitcast_batch
for _p in (population_count_p, clz_p, reduce_precision_p):
    batching.defvectorized(_p)
deflinear(reduce_precision_p, lambda ct, **params: [reduce_precision_p.bind(ct, **params)])
for _p in (bitcast_convert_type_p, population_count_p, clz_p):
    defjvp_zero(_p)     # bits carry no derivative (as JAX)

"""The fft primitive: FFT, IFFT, RFFT and IRFFT over the trailing ``len(fft_lengths)`` axes."""
import enum

import numpy as np

from .. import dtypes
from .._fp_quiet import quietly
from ..array import Array, c_contiguous, to_numpy
from ..core import ShapedArray, get_aval
from ._base import make_primitive

__all__ = ["fft", "fft_p", "FftType"]


class FftType(enum.IntEnum):
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3

    def __repr__(self):     # jaxprs print the type as its number, as JAX does
        return str(int(self))

    __str__ = __repr__


def _complex_dtype(dt):
    return np.dtype(np.complex128) if np.dtype(dt) in (np.float64, np.complex128) else np.dtype(np.complex64)


def _real_dtype(dt):
    return np.finfo(dt).dtype


@quietly     # inf and NaN inputs: NaN outputs without numpy's RuntimeWarnings, as XLA
def _fft_impl(x, *, fft_type, fft_lengths):
    v = to_numpy(x)
    k = len(fft_lengths)
    axes = tuple(range(v.ndim - k, v.ndim))
    if fft_type == FftType.FFT:
        out = np.fft.fftn(v, axes=axes) if k else v
        dt = v.dtype
    elif fft_type == FftType.IFFT:
        out = np.fft.ifftn(v, axes=axes) if k else v
        dt = v.dtype
    elif fft_type == FftType.RFFT:
        out = np.fft.rfftn(v, s=fft_lengths, axes=axes)
        dt = _complex_dtype(v.dtype)
    else:
        out = np.fft.irfftn(v, s=fft_lengths, axes=axes)
        dt = _real_dtype(v.dtype)
    return Array(c_contiguous(np.asarray(out).astype(dt, copy=False)), False)


def _fft_abstract(x, *, fft_type, fft_lengths):
    k = len(fft_lengths)
    if x.ndim < k:
        raise ValueError(f"FFT of rank {k} requires an operand of at least rank {k}, got {x.shape}.")
    lead, trail = x.shape[:x.ndim - k], tuple(x.shape[x.ndim - k:])
    lengths = tuple(fft_lengths)
    if fft_type == FftType.RFFT:
        if dtypes.kind(x.dtype) != "f":
            raise TypeError(f"RFFT requires a real operand, got {x.dtype.name}.")
        if trail != lengths:
            raise ValueError(f"RFFT operand trailing dimensions {trail} must equal fft_lengths {lengths}.")
        return ShapedArray(lead + lengths[:-1] + (lengths[-1] // 2 + 1,), _complex_dtype(x.dtype))
    if dtypes.kind(x.dtype) != "c":
        raise TypeError(f"{FftType(fft_type).name} requires a complex operand, got {x.dtype.name}.")
    if fft_type == FftType.IRFFT:
        expected = lengths[:-1] + (lengths[-1] // 2 + 1,)
        if trail != expected:
            raise ValueError(f"IRFFT operand trailing dimensions {trail} must equal {expected} for "
                             f"fft_lengths {lengths}.")
        return ShapedArray(lead + lengths, _real_dtype(x.dtype))
    if trail != lengths:
        raise ValueError(f"FFT operand trailing dimensions {trail} must equal fft_lengths {lengths}.")
    return ShapedArray(x.shape, x.dtype)


fft_p = make_primitive("fft", _fft_impl, _fft_abstract)


def fft(x, fft_type, fft_lengths):
    """jax.lax.fft: ``fft_type`` a FftType (or its name); transforms the trailing axes."""
    if isinstance(fft_type, str):
        fft_type = FftType[fft_type.upper()]
    fft_type = FftType(fft_type)
    from .elementwise import _convert_element_type
    dt = get_aval(x).dtype
    if fft_type == FftType.RFFT:
        if dtypes.kind(dt) == "c":
            raise ValueError("only real valued inputs supported for rfft")
        x = _convert_element_type(x, dt if dtypes.kind(dt) == "f" else dtypes.default_float_dtype())
    else:
        x = _convert_element_type(x, _complex_dtype(dt if dtypes.kind(dt) in "fc" else dtypes.default_float_dtype()))
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=tuple(int(n) for n in fft_lengths))


# ---------------------------------------------------------------- differentiation rules
# The FFT matrix is symmetric, so FFT and IFFT are their own transposes; RFFT and IRFFT
# transpose to a full FFT with padding/masking (JAX's rules).
from ..interpreters import ad  # noqa: E402


def _rfft_transpose(ct, fft_lengths):
    # RFFT(x) = FFT(complex(x))[..., :n//2+1]; transpose each step: pad, FFT, real part.
    from ..numpy._elementwise import real_p
    from .shape import pad
    aval = get_aval(ct)
    n = fft_lengths[-1]
    cfg = [(0, 0, 0)] * (aval.ndim - 1) + [(0, n - aval.shape[-1], 0)]
    full = pad(ct, Array(np.zeros((), aval.dtype), False), cfg)
    return real_p.bind(fft_p.bind(full, fft_type=FftType.FFT, fft_lengths=tuple(fft_lengths)))


def _irfft_transpose(ct, fft_lengths):
    from ..numpy._elementwise import conj_p
    from .elementwise import mul
    from .shape import broadcast_in_dim
    x = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=tuple(fft_lengths))
    aval = get_aval(x)
    n = aval.shape[-1]
    is_odd = fft_lengths[-1] % 2
    mask = np.concatenate([np.ones(1), np.full(n - 2 + is_odd, 2.0), np.ones(1 - is_odd)])
    scale = mask / float(np.prod(fft_lengths))
    scale = broadcast_in_dim(Array(scale.astype(aval.dtype), False), aval.shape, (aval.ndim - 1,))
    # JAX's convention for complex cotangents (jax-ml/jax#6223).
    return conj_p.bind(mul(scale, x))


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    if type(ct) is ad.Zero:
        return [None]
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(ct, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(ct, fft_lengths)]
    return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]


ad.deflinear2(fft_p, _fft_transpose)


# ---------------------------------------------------------------- batching rule
from ..interpreters import batching  # noqa: E402


def _fft_batch(vals, dims, *, fft_type, fft_lengths):
    (x,), (d,) = vals, dims
    return fft_p.bind(batching.moveaxis(x, d, 0), fft_type=fft_type, fft_lengths=fft_lengths), 0


batching.batch_rules[fft_p] = _fft_batch

"""numjax.numpy.fft: NumPy's fft API with JAX's semantics (float32 -> complex64), over lax.fft."""
import operator

import numpy as _np

from .. import lax
from .. import numpy as jnp
from ..core import get_aval
from ..lax.fft import FftType
from ._util import asarray_leaf, canonicalize_axis

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _norm_factor(s, func_name, norm, dtype):
    n = float(_np.prod(s)) if len(s) else 1.0
    if norm is None or norm == "backward":
        return None
    inverse = func_name.startswith("i")
    if norm == "ortho":
        f = _np.sqrt(n) if inverse else 1 / _np.sqrt(n)
    elif norm == "forward":
        f = n if inverse else 1 / n
    else:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    return jnp.asarray(_np.asarray(f).astype(dtype))


def _resize(arr, shape):
    """Crop or zero-pad ``arr`` to ``shape`` at the high end of each axis."""
    aval = get_aval(arr)
    if tuple(aval.shape) == tuple(shape):
        return arr
    crop = tuple(min(a, b) for a, b in zip(aval.shape, shape))
    arr = lax.slice(arr, (0,) * aval.ndim, crop)
    cfg = [(0, t - c, 0) for c, t in zip(crop, shape)]
    return lax.pad(arr, jnp.zeros((), get_aval(arr).dtype), cfg)


def _fft_core(func_name, fft_type, a, s, axes, norm):
    full_name = f"jax.numpy.fft.{func_name}"
    arr = asarray_leaf(a)
    nd = get_aval(arr).ndim
    if s is not None:
        s = tuple(operator.index(n) for n in s)
        if any(n < 0 for n in s):
            raise ValueError("Shape should be non-negative.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    orig_axes = axes
    if axes is None:
        axes = tuple(range(nd)) if s is None else tuple(range(nd - len(s), nd))
    axes = tuple(canonicalize_axis(operator.index(ax), nd) for ax in axes)
    if len(axes) != len(set(axes)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {orig_axes}.")
    if len(axes) > 3:
        raise ValueError(f"{full_name} only supports 1D, 2D, and 3D FFTs. Got axes {orig_axes} with "
                         f"input rank {nd}.")
    # The primitive transforms the innermost axes.
    inner = tuple(range(nd - len(axes), nd))
    if orig_axes is not None:
        arr = jnp.moveaxis(arr, axes, inner)
    shape = get_aval(arr).shape
    if s is not None:
        in_s = list(shape)
        for ax, n in zip(inner, s):
            in_s[ax] = n
        if fft_type == FftType.IRFFT:
            in_s[-1] = in_s[-1] // 2 + 1
        arr = _resize(arr, in_s)
    elif fft_type == FftType.IRFFT:
        s = [shape[ax] for ax in inner[:-1]] + ([max(0, 2 * (shape[inner[-1]] - 1))] if inner else [])
    else:
        s = [shape[ax] for ax in inner]
    out = lax.fft(arr, fft_type, tuple(s))
    factor = _norm_factor(s, func_name, norm, get_aval(out).dtype)
    if factor is not None:
        out = out * factor
    if orig_axes is not None:
        out = jnp.moveaxis(out, inner, axes)
    return out


def _axis_check_1d(func_name, axis):
    if isinstance(axis, (list, tuple)):
        raise ValueError(f"jax.numpy.fft.{func_name} does not support multiple axes. Please use "
                         f"jax.numpy.fft.{func_name}n. Got axis = {list(axis)}.")


def _fft_core_1d(func_name, fft_type, a, n, axis, norm):
    _axis_check_1d(func_name, axis)
    return _fft_core(func_name, fft_type, a, None if n is None else [n], None if axis is None else [axis],
                     norm)


def _fft_core_2d(func_name, fft_type, a, s, axes, norm):
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. Got axes = {list(axes)}.")
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fftn(a, s=None, axes=None, norm=None):
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


def fft(a, n=None, axis=-1, norm=None):
    return _fft_core_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a, n=None, axis=-1, norm=None):
    return _fft_core_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a, n=None, axis=-1, norm=None):
    return _fft_core_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a, n=None, axis=-1, norm=None):
    return _fft_core_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    return _fft_core_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    return _fft_core_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    return _fft_core_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    return _fft_core_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def hfft(a, n=None, axis=-1, norm=None):
    conj_a = jnp.conj(asarray_leaf(a))
    _axis_check_1d("hfft", axis)
    nn = (get_aval(conj_a).shape[axis] - 1) * 2 if n is None else n
    return _fft_core_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm) * nn


def ihfft(a, n=None, axis=-1, norm=None):
    _axis_check_1d("ihfft", axis)
    arr = asarray_leaf(a)
    nn = get_aval(arr).shape[axis] if n is None else n
    out = _fft_core_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
    return jnp.conj(out) * (1 / nn)


def _freq_dtype(dtype):
    from .. import dtypes
    return dtypes.canonicalize_dtype(dtype) if dtype is not None else dtypes.default_float_dtype()


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.fftfreq only takes an int. Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.fftfreq only takes a single value. Got d = {list(d)}.")
    dt = _freq_dtype(dtype)
    k = _np.concatenate([_np.arange(0, (n - 1) // 2 + 1), _np.arange(-(n // 2), 0)]).astype(dt)
    return jnp.asarray(k) / jnp.asarray(d * n, dtype=dt)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.rfftfreq only takes an int. Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.rfftfreq only takes a single value. Got d = {list(d)}.")
    dt = _freq_dtype(dtype)
    return jnp.asarray(_np.arange(0, n // 2 + 1).astype(dt)) / jnp.asarray(d * n, dtype=dt)


def _roll(x, shifts, axes):
    for shift, ax in zip(shifts, axes):
        n = get_aval(x).shape[ax]
        if n == 0 or shift % n == 0:
            continue
        k = shift % n
        nd = get_aval(x).ndim
        lo = lax.slice_in_dim(x, n - k, n, axis=ax) if hasattr(lax, "slice_in_dim") else \
            lax.slice(x, tuple(n - k if d == ax else 0 for d in range(nd)), get_aval(x).shape)
        hi = lax.slice(x, (0,) * nd, tuple(n - k if d == ax else s for d, s in enumerate(get_aval(x).shape)))
        x = lax.concatenate([lo, hi], ax)
    return x


def _shift_axes(x, axes):
    nd = get_aval(x).ndim
    if axes is None:
        return tuple(range(nd))
    if isinstance(axes, (int, _np.integer)):
        axes = (axes,)
    return tuple(canonicalize_axis(operator.index(ax), nd) for ax in axes)


def fftshift(x, axes=None):
    x = asarray_leaf(x)
    axes = _shift_axes(x, axes)
    return _roll(x, [get_aval(x).shape[ax] // 2 for ax in axes], axes)


def ifftshift(x, axes=None):
    x = asarray_leaf(x)
    axes = _shift_axes(x, axes)
    return _roll(x, [-(get_aval(x).shape[ax] // 2) for ax in axes], axes)

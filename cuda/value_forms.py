"""float16, bfloat16 (and the other narrow types) and complex values on the CUDA backend.

The kernels compute only in the integer, bool, float32 and float64 types.  A program with
other values is first rewritten exactly as the CPU backend rewrites it
(``lowering/compile.py: compile_jaxpr``), so both backends run the same real equations:

* narrow values (``lowering/low_precision.py``): each is *stored* as its bits (bfloat16 and
  float16 as uint16), every computing equation widens its operands to float32 and rounds its
  results back to bits (round to nearest even, NaN kept), as XLA does; the widen/round
  equations are integer and float32 elementwise ones, fused into the region kernels around
  them, so a kernel parameter holding bfloat16 is a uint16 array;
* complex values (``lowering/complex_parts.py``): each is carried as two real arrays (its
  real and imaginary parts) and every complex operation becomes the CPU backend's real
  formulas (``complex_math``: overflow-safe division and abs, ...); a complex sum is two
  real sums.

So a float16/bfloat16 region gives the CPU backend's bits wherever the float32 operations
do (exactly for the arithmetic; transcendentals are libdevice's on a GPU, a few float32 ulps
from the CPU's, which rounding to 8 or 11 mantissa bits almost always hides), and a complex
program agrees to float32 tolerance.  ``rewrite(closed)`` returns the rewritten program and
the wrapper that converts an executable of it to one taking and returning the original
values; a program the rewrite cannot express raises ``CudaUnsupported`` (naming the
primitive and dtype), and ``numjax.dispatch`` runs it on the CPU backend.
"""
import numpy as np

from numjax.errors import NoLoweringError
from numjax.lowering import complex_parts, low_precision
from numjax.lowering.narrow_bits import STORAGE_DTYPES

from .kernels import CudaUnsupported


class _Wrapped:
    """An executable of the rewritten program (``inner``), called with the original values."""

    def __init__(self, closed, inner):
        self.inner, self.source = inner, getattr(inner, "source", "")
        self._in_dtypes = [np.dtype(a.dtype) for a in closed.in_avals]
        self._out_avals = list(closed.out_avals)

    @property
    def backend(self):
        """"cuda", or "cpu" once a kernel failed to compile and the CPU took over."""
        return getattr(self.inner, "backend", "cuda")

    def ensure_compiled(self):
        return self.inner.ensure_compiled()

    def specialize(self, vals):
        return None


def _with_weak_type(out, weak):
    # The rewrite's re-trace may lose weak types (its literals are strong numpy values).
    if out.weak_type == weak:
        return out
    if hasattr(out, "same_buffer"):          # a CudaArray: no copy
        return out.same_buffer(weak)
    return type(out)(out._value, weak)


class StorageExecutable(_Wrapped):
    """Narrow inputs go in as their bits (views); narrow outputs come back viewed as their
    type (on the host: the device memory holds the bits); other values pass through."""

    def call_arrays(self, vals):
        ins = [low_precision.storage_value(v) if dt in STORAGE_DTYPES else v
               for v, dt in zip(vals, self._in_dtypes)]
        outs = self.inner.call_arrays(ins)
        results = []
        for out, aval in zip(outs, self._out_avals):
            if aval.dtype in STORAGE_DTYPES:
                out = type(out)(np.asarray(out._value).view(aval.dtype), aval.weak_type)
            results.append(_with_weak_type(out, aval.weak_type))
        return results


class PartsExecutable(_Wrapped):
    """Complex inputs go in as their two parts; complex outputs are interleaved from the two
    parts that come back (on the host); real values pass through."""

    def call_arrays(self, vals):
        flat = []
        for v, dt in zip(vals, self._in_dtypes):
            if dt.kind == "c":
                z = np.asarray(getattr(v, "_value", v), dt)
                flat += [z.real, z.imag]
            else:
                flat.append(v)
        outs = iter(self.inner.call_arrays(flat))
        results = []
        for aval in self._out_avals:
            out = next(outs)
            if np.dtype(aval.dtype).kind == "c":
                joined = np.empty(aval.shape, aval.dtype)
                joined.real, joined.imag = np.asarray(out._value), np.asarray(next(outs)._value)
                out = type(out)(joined, aval.weak_type)
            results.append(out)
        return results


def rewrite(closed):
    """``(rewritten ClosedJaxpr, wrap)`` for a program with narrow or complex values (the
    executable of the rewritten program, ``inner``, is used as ``wrap(inner)``); None for a
    program without them."""
    if low_precision.uses_low_precision(closed.jaxpr):
        form = _rewritten(low_precision.to_storage_form, closed)
        return form, lambda inner: StorageExecutable(closed, inner)
    if complex_parts.uses_complex(closed.jaxpr):
        form = _rewritten(complex_parts.to_parts_form, closed)
        return form, lambda inner: PartsExecutable(closed, inner)
    return None


def _rewritten(to_form, closed):
    try:
        return to_form(closed)
    except NoLoweringError as err:
        dtype = "" if err.dtype is None else f" on {err.dtype} values"
        raise CudaUnsupported(f"primitive '{err.primitive}'{dtype} has no CUDA lowering yet "
                              f"({err.reason})") from None

"""jax.lax functions that are compositions of other lax operations (no primitives of their
own here): filled arrays, complex parts, reciprocal, reshapes and splits, batched matmul,
cumulative logsumexp.  The complex-part primitives live with jax.numpy's complex helpers
(numjax/numpy/_elementwise.py, imported on call: numjax.numpy imports lax)."""
import numpy as np

from .. import core, dtypes
from ..array import Array, private_value
from ..core import get_aval
from . import elementwise as ew
from .shape import broadcast, reshape


def _shape(shape):
    from ..numpy import _shape as canonical_shape   # JAX's TypeError for a bad or traced shape
    return canonical_shape(shape)


_PY_SCALARS = (int, float, complex, bool)


def _filled(fill_value, dtype, weak):
    """``fill_value`` as a scalar of ``dtype`` (a Python scalar is made in ``dtype`` directly)."""
    if type(fill_value) in _PY_SCALARS:
        return Array(np.asarray(fill_value, dtype), weak)
    x = fill_value if isinstance(fill_value, (Array, core.Tracer)) else Array(np.asarray(fill_value), False)
    return ew._convert_element_type(x, dtype, weak)


def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of ``shape`` holding ``fill_value`` (a scalar) in ``dtype`` (default: its own)."""
    shape = _shape(shape)
    if np.shape(fill_value):
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape "
                        f"{np.shape(fill_value)}: pass a scalar, or use jnp.broadcast_to for an array.")
    fill_dtype, fill_weak = dtypes.dtype_and_weak(fill_value)
    weak = dtype is None and fill_weak
    dtype = fill_dtype if dtype is None else np.dtype(dtypes.check_user_dtype(dtype, "full"))
    return broadcast(_filled(fill_value, dtype, weak), shape)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """``full`` with ``x``'s shape and dtype (and weak type) unless given."""
    x_dtype, x_weak = dtypes.dtype_and_weak(x)
    fill_shape = np.shape(x) if shape is None else _shape(shape)
    weak = dtype is None and x_weak
    dtype = x_dtype if dtype is None else np.dtype(dtypes.check_user_dtype(dtype, "full"))
    return full(fill_shape, _filled(fill_value, dtype, weak))


def dtype(x):
    """The (canonical) dtype of an array, scalar or dtype-like ``x``: what an array made of it
    would hold (a Python float gives float32 with x64 off)."""
    if isinstance(x, (str, np.dtype)) or (isinstance(x, type) and not issubclass(x, (Array, core.Tracer))):
        return np.dtype(dtypes.check_user_dtype(x, "dtype"))   # (a 64-bit one warns, as in JAX)
    return np.dtype(dtypes.dtype_and_weak(x)[0])


# ---------------------------------------------------------------- complex parts

def _require(name, x, ok, accepted):
    dt = get_aval(x).dtype
    if not ok(dt):
        raise TypeError(f"{name} does not accept dtype {dt.name}. Accepted dtypes are subtypes of {accepted}.")


def complex(x, y):  # noqa: A001  (lax.complex, as JAX names it)
    """``x + 1j * y`` from two float32 (float64) arrays of one dtype."""
    from ..numpy._elementwise import complex_p
    x, y = ew.coerce_scalars([x, y])
    for pos, v in enumerate((x, y)):
        dt = get_aval(v).dtype
        if dt not in (np.float32, np.float64):
            raise TypeError(f"complex does not accept dtype {dt.name} at position {pos}. Accepted dtypes at "
                            f"position {pos} are subtypes of float32, float64.")
    ew.check_same_dtypes("complex", [get_aval(x), get_aval(y)])
    return complex_p.bind(x, y)


def real(x):
    from ..numpy._elementwise import real_p
    x, = ew.coerce_scalars([x])
    _require("real", x, lambda dt: dtypes.kind(dt) == "c", "complexfloating")
    return real_p.bind(x)


def imag(x):
    from ..numpy._elementwise import imag_p
    x, = ew.coerce_scalars([x])
    _require("imag", x, lambda dt: dtypes.kind(dt) == "c", "complexfloating")
    return imag_p.bind(x)


def conj(x):
    """The complex conjugate; a real operand is first made complex, as JAX does."""
    from ..numpy._elementwise import conj_p
    x, = ew.coerce_scalars([x])
    dt = get_aval(x).dtype
    if dtypes.kind(dt) != "c":   # the conjugate of a real value is itself, made complex (+0j)
        _require("conj", x, lambda d: dtypes.kind(d) in "fiu", "floating, integer, complexfloating")
        return ew.convert_element_type(x, dtypes.canonicalize_dtype(np.result_type(dt, np.complex64)))
    return conj_p.bind(x)


# ---------------------------------------------------------------- arithmetic and shapes

def reciprocal(x):
    """``1 / x`` (as JAX: ``integer_pow(x, -1)``, so integers raise)."""
    return ew.integer_pow(x, -1)


def collapse(operand, start_dimension, stop_dimension=None):
    """``operand`` with dimensions ``[start_dimension, stop_dimension)`` merged into one."""
    shape = get_aval(operand).shape
    nd = len(shape)
    stop = nd if stop_dimension is None else stop_dimension
    start, stop = (start_dimension + nd if start_dimension < 0 else start_dimension), (stop + nd if stop < 0 else stop)
    if not 0 <= start <= stop <= nd:
        raise ValueError(f"lax.collapse: start_dimension {start_dimension} and stop_dimension {stop_dimension} "
                         f"must satisfy 0 <= start <= stop <= {nd} for an operand of shape {shape}.")
    size = int(np.prod(shape[start:stop], dtype=np.int64))
    return reshape(operand, shape[:start] + (size,) + shape[stop:])


def split(operand, sizes, axis=0):
    """``operand`` cut along ``axis`` into consecutive pieces of the given ``sizes``."""
    from .slicing_in_dim import slice_in_dim
    operand = operand if isinstance(operand, (Array, core.Tracer)) else Array(np.asarray(operand), False)
    shape = get_aval(operand).shape
    axis = axis + len(shape) if axis < 0 else axis
    sizes = [int(s) for s in sizes]
    if sum(sizes) != shape[axis] or any(s < 0 for s in sizes):
        raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of the operand shape "
                         f"{shape}: lax.split's sizes must be nonnegative and add up to that dimension.")
    starts = np.cumsum([0] + sizes)
    return [slice_in_dim(operand, int(a), int(b), axis=axis) for a, b in zip(starts[:-1], starts[1:])]


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over the leading (batch) dimensions of two arrays of equal rank >= 2."""
    from .linalg import dot_general
    la, ra = get_aval(lhs), get_aval(rhs)
    if min(la.ndim, ra.ndim) < 2 or la.ndim != ra.ndim:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D and of equal rank, got {la.ndim}, {ra.ndim}.")
    batch = tuple(range(la.ndim - 2))
    return dot_general(lhs, rhs, (((la.ndim - 1,), (ra.ndim - 2,)), (batch, batch)), precision=precision)


def cumlogsumexp(operand, axis=0, reverse=False):
    """``log(cumsum(exp(operand)))`` along ``axis``, computed stably (a prefix scan of
    logaddexp)."""
    from ..numpy import logaddexp
    from .reductions import associative_scan
    nd = get_aval(operand).ndim
    if not -max(nd, 1) <= axis < max(nd, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {nd}")
    return associative_scan(logaddexp, operand, reverse=reverse, axis=axis % max(nd, 1))


def optimization_barrier(operand, /):
    """The values unchanged, as arrays (XLA's barrier only orders computations, which numjax
    keeps as written)."""
    from ..tree_util import tree_map

    def as_array(v):
        if isinstance(v, (Array, core.Tracer)):
            return v
        dt, weak = dtypes.dtype_and_weak(v)
        return Array(private_value(np.asarray(v, dt), v), weak)
    return tree_map(as_array, operand)

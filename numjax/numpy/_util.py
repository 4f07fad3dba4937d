"""NumPy-semantics helpers over lax: argument promotion, rank promotion, axis handling."""
import numpy as np

from .. import core, dtypes, lax
from ..array import Array


def _as_const(x, dtype, weak):
    if type(x) is int and np.dtype(dtype).kind in "iu":
        # A Python int wraps into a narrower integer dtype (int8 * 300), as in JAX, but
        # must fit the default integer type.
        info = np.iinfo(dtypes.default_int_dtype())
        if not info.min <= x <= info.max and not np.iinfo(dtype).min <= x <= np.iinfo(dtype).max:
            raise OverflowError(f"Python int {x} too large to convert to {np.dtype(dtype).name}")
        return Array(np.asarray(x, dtype=np.int64).astype(dtype), weak)
    return Array(np.asarray(x, dtype=dtype), weak)


def asarray_leaf(x):
    """An operand as something lax accepts: Tracers and Arrays pass, the rest become Arrays."""
    if isinstance(x, (core.Tracer, Array)):
        return x
    if type(x) in (int, float, complex):
        return Array(np.asarray(x, dtype=dtypes.python_scalar_dtype(x)), True)
    if isinstance(x, (list, tuple)):
        from . import array
        return array(x)
    v = np.asarray(x)
    if v.dtype == object:
        raise TypeError(f"Value {x!r} with dtype object is not a valid JAX array type.")
    return Array(v.astype(dtypes.canonicalize_dtype(v.dtype), copy=False), False)


def promote_dtypes(*args):
    """Cast operands to their common JAX dtype, keeping Python scalars weak."""
    dt, weak = dtypes.promote(*(dtypes.dtype_and_weak(a) for a in args))
    out = []
    for a in args:
        if type(a) in (int, float, complex, bool):
            out.append(_as_const(a, dt, weak))
        else:
            out.append(lax._convert_element_type(asarray_leaf(a), dt, weak))
    return out


def promote_shapes(*args):
    """Rank promotion as numpy does it: prepend size-1 dims (scalars are left as they are)."""
    ranks = [core.get_aval(a).ndim for a in args]
    rank = max(ranks)
    return [a if r in (0, rank) else lax.broadcast_to_rank(a, rank) for a, r in zip(args, ranks)]


def promote_args(fn_name, *args):
    return promote_shapes(*promote_dtypes(*args))


def promote_args_inexact(fn_name, *args):
    dt, weak = dtypes.promote(*(dtypes.dtype_and_weak(a) for a in args))
    if dt.kind not in "fc":
        dt = dtypes.default_float_dtype()
        args = [lax._convert_element_type(asarray_leaf(a), dt, weak) if type(a) not in (int, float, bool)
                else _as_const(a, dt, weak) for a in args]
    return promote_args(fn_name, *args)


def canonicalize_axis(axis, ndim, name="axis"):
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % max(ndim, 1) if ndim else 0


def reduction_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(canonicalize_axis(int(a), ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"duplicate value in 'axis': {axis}")
        return axes
    return (canonicalize_axis(int(axis), ndim),)

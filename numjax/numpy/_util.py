"""NumPy-semantics helpers over lax: argument promotion, rank promotion, axis handling."""
import numpy as np

from .. import core, dtypes, lax
from ..array import Array, host_value


def _as_const(x, dtype, weak):
    if type(x) is int and dtypes.kind(dtype) in "iu":
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
    if isinstance(x, (list, tuple)) or x is None:
        # As JAX: jnp functions take arrays and scalars; only jnp.array/asarray read sequences.
        raise list_argument_error(x)
    if _is_typed_key(x):
        raise TypeError(f"Value {x!r} with dtype {x.dtype} is not a valid JAX array type here: "
                        "numeric functions do not take typed PRNG keys. Pass the key to "
                        "jax.random functions, or use jax.random.key_data(key) for its uint32 data.")
    v = np.asarray(x)
    if not dtypes.is_jax_dtype(v.dtype):
        raise invalid_value_error(x, v.dtype)
    return Array(host_value(v, x), False)


def _is_typed_key(x):
    from .._prng import PRNGKeyArray
    return isinstance(x, PRNGKeyArray)


def invalid_value_error(x, dtype):
    """JAX's TypeError for a value whose dtype JAX has no arrays of (str, object, ...)."""
    return TypeError(f"Value {x!r} with dtype {dtype} is not a valid JAX array type. Only arrays of "
                     "numeric types are supported by JAX: pass numbers, booleans or numeric arrays.")


def concrete_dim(x, arg, fun):
    """A size argument (``N`` of jnp.eye, ``num_classes`` of one_hot, ...) as a Python int,
    with JAX's TypeError for a float, a string or a traced value."""
    import operator
    try:
        return operator.index(x)
    except TypeError:
        traced = isinstance(x, core.Tracer)
        fix = ("it is traced: mark it static (static_argnums) under jit" if traced
               else "pass a Python int")
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got ({x!r},). "
                        f"argument '{arg}' of {fun}(): {fix}.") from None


def check_arraylike(fn_name, *args):
    for i, a in enumerate(args):
        if isinstance(a, (list, tuple)):
            raise TypeError(f"{fn_name} requires ndarray or scalar arguments, got {type(a)} at position {i}.")


def list_argument_error(x):
    """JAX's TypeError for a list or tuple passed where a jnp function wants an array.

    ``asarray_leaf`` does not know which public function it serves, so on this error path
    (only) the outermost numjax frame below the caller names it, and the position is that of
    the argument holding ``x`` (itself, an element of a sequence argument, or of ``*args``)."""
    import sys
    frame, public = sys._getframe(1), None
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module == "numjax.numpy._operators":
            pass   # x.dot(...) forwards to jnp.dot, which names the function and positions
        elif module == "numjax" or module.startswith("numjax."):
            public = frame
        elif public is not None:
            break
        frame = frame.f_back
    if public is None:
        return TypeError(f"jnp function requires ndarray or scalar arguments, got {type(x)} at position 0.")
    return TypeError(f"{_public_name(public)} requires ndarray or scalar arguments, got {type(x)} "
                     f"at position {_position_of(public, x)}.")


_MODULE_PREFIXES = {"numjax.numpy.linalg": "jnp.linalg.", "numjax.numpy.fft": "jax.numpy.fft."}


def _public_name(frame):
    code = frame.f_code
    name = code.co_name
    if code.co_freevars:
        # A function made by a factory (jnp.sin, jnp.cumsum, ...): its code is shared, so find
        # the function object whose closure holds this frame's free variables.
        import gc
        cells = [frame.f_locals.get(v) for v in code.co_freevars]
        for f in gc.get_referrers(code):
            closure = getattr(f, "__closure__", None)
            if getattr(f, "__code__", None) is code and closure and all(
                    c.cell_contents is v for c, v in zip(closure, cells)):
                name = f.__name__
                break
    return _MODULE_PREFIXES.get(frame.f_globals.get("__name__"), "") + name


def _position_of(frame, x):
    code = frame.f_code
    positional = [frame.f_locals.get(n) for n in code.co_varnames[:code.co_argcount]]
    if code.co_flags & 0x04:   # a *args function counts positions within *args (jnp.einsum)
        n_named = code.co_argcount + code.co_kwonlyargcount
        positional = list(frame.f_locals.get(code.co_varnames[n_named], ()))
    for i, v in enumerate(positional):
        if v is x:
            return i
        if isinstance(v, (list, tuple)):
            for j, e in enumerate(v):
                if e is x:
                    return j
    return 0


def promote_dtypes(*args):
    """Cast operands to their common JAX dtype, keeping Python scalars weak."""
    for a in args:
        if isinstance(a, (list, tuple)):
            raise list_argument_error(a)
    # Strings and other non-numbers are refused here, before numpy reads 'a' as a dtype code.
    args = [a if type(a) in (int, float, complex, bool) else asarray_leaf(a) for a in args]
    dt, weak = dtypes.promote(*(dtypes.dtype_and_weak(a) for a in args))
    out = []
    for a in args:
        if type(a) in (int, float, complex, bool):
            out.append(_as_const(a, dt, weak))
        else:
            out.append(lax._convert_element_type(asarray_leaf(a), dt, weak))
    return out


def broadcast_shapes_checked(*shapes):
    """numpy's broadcast shape, with JAX's ValueError (listing the shapes) when there is none."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        listed = [tuple(s) if isinstance(s, (list, tuple)) else (s,) for s in shapes]
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={listed}") from None


def promote_shapes(*args):
    """Rank promotion as numpy does it: prepend size-1 dims (scalars are left as they are)."""
    shapes = [core.get_aval(a).shape for a in args]
    # As in JAX, shapes are checked here only where ranks differ (a rank-0 operand is left
    # alone); equal ranks go on to lax, whose TypeError names the primitive.
    if len({len(s) for s in shapes if s}) > 1:
        broadcast_shapes_checked(*shapes)
    ranks = [len(s) for s in shapes]
    rank = max(ranks)
    return [a if r in (0, rank) else lax.broadcast_to_rank(a, rank) for a, r in zip(args, ranks)]


def promote_args(fn_name, *args):
    check_arraylike(fn_name, *args)
    return promote_shapes(*promote_dtypes(*args))


def promote_args_inexact(fn_name, *args):
    check_arraylike(fn_name, *args)
    return promote_shapes(*promote_dtypes_inexact(*args))


def promote_dtypes_inexact(*args):
    """Operands in their common inexact dtype (integers and bools go to the default float);
    shapes are left as they are (for operands that are not broadcast together)."""
    dt, weak = dtypes.promote(*(dtypes.dtype_and_weak(a) for a in args))
    if dtypes.kind(dt) not in "fc":
        dt = to_inexact_dtype(dt)
        args = [lax._convert_element_type(asarray_leaf(a), dt, weak) if type(a) not in (int, float, bool)
                else _as_const(a, dt, weak) for a in args]
    return promote_dtypes(*args)


def to_inexact_dtype(dtype):
    """JAX's float for a non-float dtype: bools and integers of up to 32 bits become float32
    even under x64 (only 64-bit integers need float64 to hold their values)."""
    dtype = np.dtype(dtype)
    if dtypes.kind(dtype) in "fc":
        return dtype
    return dtypes.canonicalize_dtype(np.float64 if dtype.itemsize == 8 else np.float32)


def to_numeric_dtype(dtype):
    """JAX's number for a dtype: bool becomes int32 (under x64 too); numbers stay as they are."""
    dtype = np.dtype(dtype)
    return np.dtype(np.int32) if dtype == np.bool_ else dtype


def canonicalize_axis(axis, ndim, name="axis", error=ValueError):
    """``axis`` as an index in [0, ndim). Out of range it raises ``error``: JAX's ValueError,
    or the IndexError the few functions that index the shape first (argmax, ...) raise."""
    axis = _axis_index(axis, name)
    if not -ndim <= axis < max(ndim, 1):
        raise error(f"{name} {axis} is out of bounds for array of dimension {ndim}")
    return axis % max(ndim, 1) if ndim else 0


def _axis_index(axis, name):
    import operator
    try:
        return operator.index(axis)
    except TypeError as err:
        if isinstance(axis, core.Tracer):
            raise
        raise TypeError(f"{name} must be an integer (or a tuple of integers where several are "
                        f"allowed), got {axis!r} of type {type(axis).__name__}.") from err


def reduction_axes(axis, ndim, error=ValueError):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(canonicalize_axis(a, ndim, error=error) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"duplicate value in 'axis': {axis}")
        return axes
    return (canonicalize_axis(axis, ndim, error=error),)

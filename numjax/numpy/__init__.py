"""numjax.numpy: NumPy's API with JAX's semantics, written over numjax.lax."""
import builtins
import math as _math
import operator

import numpy as _np

from .. import _prng, core, dtypes as _dtypes, lax
from ..array import Array, ArrayType
from ..core import get_aval
from ..lax.elementwise import _UNARY_PRIMS
from .._fp_quiet import call as _quiet_call

# (dtype objects for the eager short paths: comparing a dtype with np.float32 itself converts
# that on every call)
_BOOL, _F32, _F64 = _np.dtype(_np.bool_), _np.dtype(_np.float32), _np.dtype(_np.float64)
from ._util import (asarray_leaf, broadcast_shapes_checked, canonicalize_axis, promote_args,
                    promote_args_inexact, promote_dtypes, promote_shapes, reduction_axes)

ndarray = ArrayType  # like jax.Array: tracers are instances too
pi, e, inf, nan, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, _np.euler_gamma
newaxis = None


class _ScalarMeta(type):
    """jnp.float32 and friends: usable as dtypes, and callable to make Arrays as in JAX."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls.dtype.type)

    def __eq__(cls, other):
        return other is cls or other == cls.dtype.type or (isinstance(other, _np.dtype) and other == cls.dtype)

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __call__(cls, x=0):
        return _array(x, cls.dtype, 0, "asarray")   # JAX names asarray in its dtype warning

    def __repr__(cls):
        return f"<class 'numjax.numpy.{cls.__name__}'>"


def _scalar_type(np_type):
    return _ScalarMeta(_np.dtype(np_type).name if np_type is not _np.bool_ else "bool_", (object,),
                       {"dtype": _np.dtype(np_type)})


bool_, int8, int16, int32, int64 = map(_scalar_type, (_np.bool_, _np.int8, _np.int16, _np.int32, _np.int64))
uint8, uint16, uint32, uint64 = map(_scalar_type, (_np.uint8, _np.uint16, _np.uint32, _np.uint64))
float16, float32, float64 = map(_scalar_type, (_np.float16, _np.float32, _np.float64))
complex64, complex128 = map(_scalar_type, (_np.complex64, _np.complex128))
bfloat16 = _scalar_type(_dtypes.bfloat16)
(float8_e3m4, float8_e4m3, float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz,
 float8_e8m0fnu, float4_e2m1fn) = map(_scalar_type, (
    _dtypes.float8_e3m4, _dtypes.float8_e4m3, _dtypes.float8_e4m3b11fnuz, _dtypes.float8_e4m3fn,
    _dtypes.float8_e4m3fnuz, _dtypes.float8_e5m2, _dtypes.float8_e5m2fnuz, _dtypes.float8_e8m0fnu,
    _dtypes.float4_e2m1fn))
int2, int4, uint2, uint4 = map(_scalar_type, (_dtypes.int2, _dtypes.int4, _dtypes.uint2, _dtypes.uint4))
bool = bool_  # noqa: A001
dtype, finfo, iinfo = _np.dtype, _dtypes.finfo, _dtypes.iinfo   # finfo/iinfo know the ml_dtypes types
integer, floating, inexact, number, signedinteger, unsignedinteger, complexfloating = (
    _np.integer, _np.floating, _np.inexact, _np.number, _np.signedinteger, _np.unsignedinteger,
    _np.complexfloating)
issubdtype = _dtypes.issubdtype  # also knows the PRNG key dtype
result_type = _dtypes.result_type
promote_types = _dtypes.promote_types


def _shape(shape):
    if isinstance(shape, (int, _np.integer)):
        return (int(shape),)
    try:
        dims = (shape,) if getattr(shape, "ndim", None) == 0 else tuple(shape)
    except TypeError:   # a float, None, ...: reported below as JAX reports it
        dims = (shape,)
    bad = f"Shapes must be 1D sequences of concrete values of integer type, got {dims}."
    traced = [d for d in dims if isinstance(d, core.Tracer) and d._concrete_value() is None]
    if traced:
        from ..errors import _origin
        raise TypeError(f"{bad}\nIf using `jit`, try using `static_argnums` or applying `jit` to smaller "
                        f"subfunctions.\n{_origin(traced[0])}".rstrip("\n"))
    try:
        return tuple(operator.index(d) for d in dims)
    except TypeError:
        raise TypeError(bad) from None


# ---------------------------------------------------------------- creation

def array(object, dtype=None, copy=True, ndmin=0):  # noqa: A002
    return _array(object, dtype, ndmin, "array")


def _array(object, dtype, ndmin, fun_name):  # noqa: A002
    if object is None or (isinstance(object, (list, tuple)) and builtins.any(x is None for x in _flat(object))):
        raise ValueError("None is not a valid value for jnp.array")
    if _is_keys(object):
        return _prng.array_of_keys(object, dtype)
    dt = None if dtype is None else _dtypes.check_user_dtype(dtype, fun_name)
    if isinstance(object, core.Tracer):
        out = object
    elif isinstance(object, (list, tuple)) and builtins.any(isinstance(x, core.Tracer) for x in _flat(object)):
        lub, _ = _dtypes.promote(*(_dtypes.dtype_and_weak(x) for x in _flat(object)))
        out = _stack_strong(object, lub) if object else asarray_leaf(_np.array(object))
    elif isinstance(object, Array):
        out = object
    elif dt is not None and _dtypes.kind(dt) in "iu" and _all_python_ints(object):
        # Straight to the requested type: jnp.uint32(2**31 + 1) holds, though int32 would not,
        # and [2**64 - 1, 5] as uint64 never passes through float64 (numpy's guess for it).
        out = Array(_np.asarray(object, dt), False)
    else:
        out = _from_python(object)
        if not _dtypes.is_jax_dtype(_np.result_type(out)):
            raise _invalid_element(object)
        out = asarray_leaf(out)
    if dt is not None:
        out = lax._convert_element_type(out, dt, False)
    elif isinstance(out, Array) and out.weak_type and not _is_python_scalar(object) \
            and not isinstance(object, Array):
        # A weak Array stays weak, as in JAX; containers and numpy scalars do not.
        out = Array(out._value, False)
    if ndmin and get_aval(out).ndim < ndmin:
        out = lax.broadcast_to_rank(out, ndmin)
    return out


def _invalid_element(obj):
    """JAX's TypeError naming the first element of ``obj`` that is no number (a string, ...)."""
    from ._util import invalid_value_error
    for x in (_flat(obj) if isinstance(obj, (list, tuple)) else (obj,)):
        dt = _np.asarray(x).dtype
        if not _dtypes.is_jax_dtype(dt):
            return invalid_value_error(x, dt)
    return invalid_value_error(obj, _np.asarray(obj).dtype)


def _is_python_scalar(x):
    return type(x) in (int, float, complex, bool)


def _all_python_ints(obj):
    if isinstance(obj, (list, tuple)):
        return len(obj) > 0 and builtins.all(type(x) is int for x in _flat(obj))
    return type(obj) is int


def _stack_strong(obj, dt):
    """A nested list holding tracers as one ``dt`` array: as in JAX, each element is cast to
    the list's dtype without weak type (a weakly typed element shows a convert_element_type)."""
    if isinstance(obj, (list, tuple)):
        # Element by element (cast, then a leading axis), the order of JAX's equations.
        return concatenate([expand_dims(_stack_strong(x, dt), 0) for x in obj], axis=0)
    x = array(obj)
    return lax._convert_element_type(x, dt, False) if x.weak_type or x.dtype != dt else x


def _flat(obj):
    for x in obj:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def _from_python(obj):
    # Nested Python lists take JAX's dtypes: ints -> default int, floats -> default float.
    if isinstance(obj, (list, tuple)):
        leaves = list(_flat(obj))
        if leaves and builtins.all(isinstance(x, Array) for x in leaves):
            v = _np.array([_np.asarray(x) for x in leaves]).reshape(_np.shape(_np.array(obj, dtype=object)))
            return v
        v = _np.array([_np.asarray(x) if isinstance(x, Array) else x for x in obj] if obj else obj)
        if builtins.all(_is_python_scalar(x) for x in leaves) and leaves:
            dt, _ = _dtypes.promote(*(_dtypes.dtype_and_weak(x) for x in leaves))
            return v.astype(dt)
        return v
    if _is_python_scalar(obj):
        return obj
    return _np.asarray(obj)


def _is_keys(x):
    """A typed key array, or a non-empty list or tuple of them."""
    if isinstance(x, (list, tuple)):
        return len(x) > 0 and builtins.all(isinstance(k, _prng.PRNGKeyArray) for k in x)
    return isinstance(x, _prng.PRNGKeyArray)


def asarray(a, dtype=None, copy=None):
    return _array(a, dtype, 0, "asarray")


def _full(shape, fill_value, dtype, weak=False, fun_name="full"):
    shape = _shape(shape)
    dt = None if dtype is None else _dtypes.check_user_dtype(dtype, fun_name)
    if dt is not None and not isinstance(fill_value, (core.Tracer, Array)):
        # A concrete fill value becomes a typed constant, as JAX stages it (no convert op).
        fill_value = Array(_np.asarray(fill_value, dt), weak)
    if dt is None:
        # JAX's lax.full: without a dtype the result is weak exactly when the fill value is.
        fv = asarray_leaf(fill_value)
        fv = lax._convert_element_type(fv, get_aval(fv).dtype, _dtypes.dtype_and_weak(fill_value)[1])
    else:
        fv = lax._convert_element_type(asarray_leaf(fill_value), dt, weak)
    return lax.broadcast(fv, shape) if get_aval(fv).ndim == 0 else broadcast_to(fv, shape)


def zeros(shape, dtype=None, *, device=None, out_sharding=None):
    return _placed(_full(shape, 0, _dtypes.default_float_dtype() if dtype is None else dtype,
                         fun_name="zeros"), device, out_sharding)


def ones(shape, dtype=None, *, device=None, out_sharding=None):
    return _placed(_full(shape, 1, _dtypes.default_float_dtype() if dtype is None else dtype,
                         fun_name="ones"), device, out_sharding)


def full(shape, fill_value, dtype=None, *, device=None, out_sharding=None):
    return _placed(_full(shape, fill_value, dtype), device, out_sharding)


def empty(shape, dtype=None, *, device=None, out_sharding=None):
    return _placed(_full(shape, 0, _dtypes.default_float_dtype() if dtype is None else dtype,
                         fun_name="empty"), device, out_sharding)


def _placed(x, device, out_sharding):
    """A creation function's result placed as its ``device=`` / ``out_sharding=`` say."""
    if out_sharding is not None:
        from ..sharding import reshard
        return reshard(x, out_sharding)
    if device is not None:
        from ..api import device_put
        return device_put(x, device)
    return x


def _like_aval(a):
    # Besides arrays, JAX's *_like accept shape/dtype descriptions such as ShapeDtypeStruct.
    if not isinstance(a, (core.Tracer, Array, _np.ndarray, _np.generic)) and \
            hasattr(a, "shape") and hasattr(a, "dtype"):
        return core.ShapedArray(a.shape, _dtypes.canonicalize_dtype(a.dtype),
                                getattr(a, "weak_type", False))
    return get_aval(asarray_leaf(a))


def full_like(a, fill_value, dtype=None, shape=None):
    return _full_like(a, fill_value, dtype, shape, "full_like")


def _full_like(a, fill_value, dtype, shape, fun_name):
    # As JAX's lax.full_like: the result is weak when no dtype is given and `a` is weak.
    aval = _like_aval(a)
    return _full(aval.shape if shape is None else shape, fill_value, aval.dtype if dtype is None else dtype,
                 dtype is None and aval.weak_type, fun_name)


def zeros_like(a, dtype=None, shape=None):
    return _full_like(a, 0, dtype, shape, "zeros_like")


def ones_like(a, dtype=None, shape=None):
    return _full_like(a, 1, dtype, shape, "ones_like")


def empty_like(prototype, dtype=None, shape=None):
    return _full_like(prototype, 0, dtype, shape, "empty_like")


def _concrete_scalar(x, name, arg=None):
    if isinstance(x, core.Tracer):
        from ..errors import ConcretizationTypeError
        where = f"the jnp.{name} argument '{arg}'" if arg else f"the jnp.{name} argument"
        raise ConcretizationTypeError(x, f"It arose in {where}")
    return x.item() if isinstance(x, Array) else x


def arange(start, stop=None, step=None, dtype=None):
    # JAX's names: a lone argument is 'stop'.
    start = _concrete_scalar(start, "arange", "stop" if stop is None and step is None else "start")
    stop = _concrete_scalar(stop, "arange", "stop")
    step = _concrete_scalar(step, "arange", "step")
    requested = None if dtype is None else _dtypes.check_user_dtype(dtype, "arange")
    if stop is None and step is None:
        dt = requested or _dtypes.canonicalize_dtype(_dtypes.result_type(start))
        # As JAX: an iota of the result dtype itself (float iotas included).
        return lax.iota(dt, int(_np.ceil(start)))
    args = [a for a in (start, stop, step) if a is not None]
    dt = requested or _dtypes.canonicalize_dtype(_dtypes.result_type(*args))
    return Array(_np.arange(start, stop, step, dtype=dt), False)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    dt = _dtypes.default_float_dtype() if dtype is None else _dtypes.check_user_dtype(dtype, "linspace")
    start, stop = asarray(start), asarray(stop)
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    step_frac = lax._convert_element_type(lax.iota(_dtypes.default_int_dtype(), num), dt, False)
    s = lax._convert_element_type(start, dt, False)
    delta = lax._convert_element_type(stop, dt, False) - s
    if div > 0:
        out = s + step_frac * (delta / div)
        if endpoint and num > 1:
            out = concatenate([out[:-1], reshape(lax._convert_element_type(stop, dt, False), (1,))])
    else:
        out = s + step_frac * 0
    out = lax._convert_element_type(out, dt, False)
    return (out, delta / div if div else nan) if retstep else out


def eye(N, M=None, k=0, dtype=None):
    return _eye(N, M, k, dtype, "eye")


def _eye(N, M, k, dtype, fun_name):
    from ._util import concrete_dim
    N = concrete_dim(N, "N", "jnp.eye")
    M = N if M is None else concrete_dim(M, "M", "jnp.eye")
    if N < 0 or M < 0:
        raise ValueError(f"negative dimensions are not allowed, got N={N} and M={M}")
    k = _diagonal_offset(k)
    dt = _dtypes.default_float_dtype() if dtype is None else _dtypes.check_user_dtype(dtype, fun_name)
    rows = lax.broadcasted_iota(_dtypes.int32, (N, M), 0)
    cols = lax.broadcasted_iota(_dtypes.int32, (N, M), 1)
    return lax._convert_element_type(lax.eq(rows + k, cols), dt, False)


def _diagonal_offset(k):
    """jnp.eye's ``k``: an integer scalar (Python or array, traced or not)."""
    aval = None if type(k) is int else get_aval(asarray_leaf(k))
    if aval is not None and (aval.shape != () or _dtypes.kind(aval.dtype) not in "iu"):
        raise ValueError(f"k must be a scalar integer; got {k}")
    if aval is not None:
        return lax._convert_element_type(asarray_leaf(k), _dtypes.int32, False)
    return k


def identity(n, dtype=None):
    return _eye(n, None, 0, dtype, "identity")


# ---------------------------------------------------------------- elementwise

def _unary(prim_fn, inexact=False, name=None):
    prim = getattr(lax, (name or prim_fn.__name__) + "_p", None) or _UNARY_PRIMS.get(prim_fn.__name__)
    impl = core.impl_rules.get(prim)

    runners = {}     # dtype -> the eager short path (_unary_runner), or False
    trace_state = core.trace_state

    def fn(x, /):
        if type(x) is Array and trace_state.idle:
            run = runners.get(x._value.dtype)
            if run is None:
                run = runners[x._value.dtype] = _unary_runner(prim, impl, x._value.dtype)
            if run:
                return run(x)
        x = asarray_leaf(x)
        if inexact:
            (x,) = promote_args_inexact(name, x)
        return prim_fn(x)
    fn.__name__ = name or prim_fn.__name__
    return fn


def _unary_runner(prim, impl, dt):
    """The eager short path of a jnp unary function on a concrete Array of ``dt``, or False:
    lax/eager_kernels.py's runner, else for the other inexact dtypes (complex, float16,
    bfloat16: no promotion needed) the primitive's eager rule itself."""
    if prim is None:
        return False
    run = lax.eager_kernels.unary_runner(prim, dt)
    if run is not None:
        return run
    if impl is None or _dtypes.kind(dt) not in "fc":
        return False

    def run_rule(x):
        # (the rule is looked up on the call: the bfloat16 wrapper, lax/low_precision.py, is
        # installed after this module)
        return core.impl_rules[prim](x)
    return run_rule


def _binary(prim_fn, name, inexact=False):
    def fn(x, y, /):
        x, y = (promote_args_inexact if inexact else promote_args)(name, x, y)
        return prim_fn(x, y)
    fn.__name__ = name
    return fn


# On bools JAX's add is a logical or and multiply a logical and (lax.add/mul reject bool).
add = _binary(lambda x, y: lax.bitwise_or(x, y) if get_aval(x).dtype == _np.bool_ else lax.add(x, y), "add")
def _sub(x, y):
    if get_aval(x).dtype == _np.bool_:
        raise TypeError("sub does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, "
                        "complexfloating. Subtracting booleans is not defined: use jnp.logical_xor, or "
                        "cast to int first.")
    return lax.sub(x, y)


subtract = _binary(_sub, "subtract")
multiply = _binary(lambda x, y: lax.bitwise_and(x, y) if get_aval(x).dtype == _np.bool_ else lax.mul(x, y),
                   "multiply")
maximum = _binary(lax.max, "maximum")
minimum = _binary(lax.min, "minimum")
equal = _binary(lax.eq, "equal")
not_equal = _binary(lax.ne, "not_equal")
less = _binary(lax.lt, "less")
less_equal = _binary(lax.le, "less_equal")
greater = _binary(lax.gt, "greater")
greater_equal = _binary(lax.ge, "greater_equal")
arctan2 = _binary(lax.atan2, "arctan2", inexact=True)
bitwise_and = _binary(lax.bitwise_and, "bitwise_and")
bitwise_or = _binary(lax.bitwise_or, "bitwise_or")
bitwise_xor = _binary(lax.bitwise_xor, "bitwise_xor")
logical_and = _binary(lambda a, b: lax.bitwise_and(_to_bool(a), _to_bool(b)), "logical_and")
logical_or = _binary(lambda a, b: lax.bitwise_or(_to_bool(a), _to_bool(b)), "logical_or")
logical_xor = _binary(lambda a, b: lax.bitwise_xor(_to_bool(a), _to_bool(b)), "logical_xor")


def _to_bool(x):
    # JAX compares with a zero that is weak only for a weak 0-d x, so the bool is strong
    # unless x is a weak scalar.
    aval = get_aval(x)
    if aval.dtype == _np.bool_:
        return x
    return lax.ne(x, Array(_np.zeros((), aval.dtype), aval.weak_type and aval.ndim == 0))


def _zero_like(x):
    aval = get_aval(x)
    return Array(_np.zeros((), aval.dtype), aval.weak_type)


def logical_not(x, /):
    if type(x) is Array and x._value.dtype == _BOOL and core.trace_state.idle:
        out = _np.logical_not(x._value)      # (bitwise_not's eager rule on bools; weak as x)
        return Array(out if type(out) is _np.ndarray else _np.asarray(out), x.weak_type)
    return lax.bitwise_not(_to_bool(asarray_leaf(x)))


def true_divide(x, y, /):
    x, y = promote_args_inexact("true_divide", x, y)
    return lax.div(x, y)


divide = true_divide


# Like JAX, these jnp functions are jitted helpers: traced, they nest as jit[name=...]
# (with the promotion inside); eagerly they run directly.

def _promote_args_numeric(name, *args):
    # JAX's promote_args_numeric: as promote_args, but bools become int32 (under x64 too).
    dt, weak = _dtypes.promote(*(_dtypes.dtype_and_weak(a) for a in args))
    if dt == _np.bool_:
        args = [lax._convert_element_type(asarray_leaf(a), _np.dtype(_np.int32), weak) for a in args]
    return promote_args(name, *args)


def floor_divide(x, y, /):
    return _jit_named("floor_divide", _floor_divide, _jit_operand(x), _jit_operand(y))


def _floor_divide(x, y):
    x, y = _promote_args_numeric("floor_divide", x, y)
    kind = _dtypes.kind(get_aval(x).dtype)
    if kind == "u":
        return lax.div(x, y)
    if kind == "i":
        quotient = lax.div(x, y)
        select = logical_and(lax.sign(x) != lax.sign(y), lax.rem(x, y) != 0)
        return _where_jit(select, quotient - 1, quotient)
    if kind == "c":
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x, y)[0]


def _float_divmod(x1, x2):
    # JAX's (CPython's float_divmod): floor division that is exact for representable quotients.
    # Each select computes both branches; eagerly, numpy would warn of overflows in the one
    # not taken (and of 0/0), where JAX is silent.
    with _np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        mod = lax.rem(x1, x2)
        x1_corrected = _where_jit(x2 == 0, x1, lax.sub(x1, mod))
        div = lax.div(x1_corrected, x2)
        ind = lax.bitwise_and(mod != 0, lax.sign(x2) != lax.sign(mod))
        mod = lax.select(ind, mod + x2, mod)
        div = lax.select(ind, div - 1.0, div)
        return lax.round(div), mod


def remainder(x, y, /):
    return _jit_named("remainder", _remainder, _jit_operand(x), _jit_operand(y))


def _remainder(x, y):
    x, y = _promote_args_numeric("remainder", x, y)
    zero = _full_scalar(0, x)
    if _dtypes.kind(get_aval(y).dtype) in "iu":
        y = _where_jit(y == 0, _ones_of(y), y)
    trunc_mod = lax.rem(x, y)
    trunc_mod_not_zero = lax.ne(trunc_mod, zero)
    do_plus = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, zero), lax.lt(y, zero)), trunc_mod_not_zero)
    with _np.errstate(over="ignore"):    # the branch not taken may overflow (JAX is silent)
        return lax.select(do_plus, lax.add(trunc_mod, y), trunc_mod)


def _ones_of(x):
    # lax._ones: a literal for a scalar, a broadcast for an array; weak when x is.
    aval = get_aval(x)
    one = Array(_np.ones((), aval.dtype), aval.weak_type)
    return one if aval.ndim == 0 else lax.broadcast(one, aval.shape)


mod = remainder


def fmod(x, y, /):
    return _jit_named("fmod", _fmod, _jit_operand(x), _jit_operand(y))


def _fmod(x, y):
    # As JAX: an integer divisor of 0 becomes 1, so integer fmod(x, 0) is 0 (lax.rem gives x).
    if _dtypes.kind(_dtypes.promote(_dtypes.dtype_and_weak(x), _dtypes.dtype_and_weak(y))[0]) in "iu":
        y = asarray_leaf(y)
        y = _where_jit(y == 0, _ones_of(y), y)
    return lax.rem(*_promote_args_numeric("fmod", x, y))


def power(x, y, /):
    # A concrete integer scalar exponent (Python int, numpy or numjax 0-d integer) takes
    # lax.integer_pow, as in JAX; bool bases become int32 there.
    if type(x) is Array:
        if type(y) is int:
            out = _eager_paths.integer_pow(x, y)
            if out is not None:
                return out
        elif type(y) is float and not x.weak_type and core.trace_state.idle and (
                x._value.dtype == _F32 or x._value.dtype == _F64):
            # lax.pow's eager rule with the weak scalar in x's dtype (jnp's promotion, skipped)
            return core.impl_rules[lax.pow_p](x, Array(_quiet_call(_np.asarray, y, x._value.dtype), True))
    y_int = _concrete_index(y)
    if y_int is not None:
        x = asarray_leaf(x)
        dt, weak = _dtypes.dtype_and_weak(x)
        if dt == _np.bool_:
            x = lax._convert_element_type(x, _dtypes.int32, weak)
        return lax.integer_pow(x, y_int)
    x_int, y_int = _promote_args_numeric("power", x, y)   # bools count as integers here
    if _dtypes.kind(get_aval(x_int).dtype) in "iu":
        return _int_power(x_int, y_int)
    x, y = promote_args("power", x, y)
    return lax.pow(x, y)


def _concrete_index(y):
    if isinstance(y, core.Tracer) or _np.ndim(y) != 0:
        return None
    try:
        return operator.index(y)
    except TypeError:
        return None


def _int_power(x, y):
    # JAX's integer power: square-and-multiply over the exponent's low 6 bits only (past
    # that, any base but 0 and +-1 has overflowed), and 0 ** y is 0 for every y != 0.
    # Negative exponents thus give wrapped products, not errors, exactly as in JAX.
    zero, one = _zero_like(y), _one_like(y)
    acc = where(logical_and(x == zero, y != zero), zero, one)
    for _ in range(6):
        acc = where(lax.bitwise_and(y, one) != zero, lax.mul(acc, x), acc)
        x = lax.mul(x, x)
        y = lax.shift_right_logical(y, one)
    return acc


def _one_like(x):
    aval = get_aval(x)
    return Array(_np.ones((), aval.dtype), aval.weak_type)


pow = power  # noqa: A001


def _eager_fast(runners, prim, x):
    """The eager short path's result (lax/eager_kernels.py) for a concrete Array, else None
    (full path). ``runners``: dtype -> runner of ``prim``, or False where the full path runs,
    made on first use."""
    if type(x) is Array and core.trace_state.idle:
        run = runners.get(x._value.dtype)
        if run is None:
            dt = x._value.dtype
            run = runners[dt] = (prim is not None and lax.eager_kernels.unary_runner(prim, dt)) or False
        if run:
            return run(x)
    return None


_NEG_RUNNERS, _ABS_RUNNERS = {}, {}


def negative(x, /):
    out = _eager_fast(_NEG_RUNNERS, lax.neg_p, x)
    return lax.neg(asarray_leaf(x)) if out is None else out


def positive(x, /):
    return asarray_leaf(x)


def absolute(x, /):
    out = _eager_fast(_ABS_RUNNERS, lax.abs_p, x)
    if out is not None:
        return out
    x = asarray_leaf(x)
    return x if _dtypes.kind(get_aval(x).dtype) in "ub" else lax.abs(x)


abs = absolute  # noqa: A001


def sign(x, /):
    return lax.sign(asarray_leaf(x))


exp = _unary(lax.exp, True, "exp")
exp2 = _unary(lax.exp2, True, "exp2")
log = _unary(lax.log, True, "log")
log1p = _unary(lax.log1p, True, "log1p")
expm1 = _unary(lax.expm1, True, "expm1")
sin = _unary(lax.sin, True, "sin")
cos = _unary(lax.cos, True, "cos")
tan = _unary(lax.tan, True, "tan")
arcsin = _unary(lax.asin, True, "arcsin")
arccos = _unary(lax.acos, True, "arccos")
arctan = _unary(lax.atan, True, "arctan")
sinh = _unary(lax.sinh, True, "sinh")
cosh = _unary(lax.cosh, True, "cosh")
tanh = _unary(lax.tanh, True, "tanh")
arcsinh = _unary(lax.asinh, True, "arcsinh")
_arccosh = _unary(lax.acosh, True, "arccosh")


def arccosh(x, /):
    return _jit_named("arccosh", _arccosh, _jit_operand(x))

arctanh = _unary(lax.atanh, True, "arctanh")
sqrt = _unary(lax.sqrt, True, "sqrt")
cbrt = _unary(lax.cbrt, True, "cbrt")


def log2(x, /):
    (x,) = promote_args_inexact("log2", x)
    return lax.div(lax.log(x), lax.log(_full_scalar(2, x)))


def log10(x, /):
    (x,) = promote_args_inexact("log10", x)
    return lax.div(lax.log(x), lax.log(_full_scalar(10, x)))


def _full_scalar(v, like):
    return Array(_np.asarray(v, get_aval(like).dtype), False)


def square(x, /):
    if type(x) is Array:
        out = _eager_paths.integer_pow(x, 2)
        if out is not None:
            return out
    x, = _promote_args_numeric("square", x)
    return lax.integer_pow(x, 2)


def reciprocal(x, /):
    (x,) = promote_args_inexact("reciprocal", x)
    return lax.integer_pow(x, -1)


_FLOOR_RUNNERS, _CEIL_RUNNERS = {}, {}


def floor(x, /):
    out = _eager_fast(_FLOOR_RUNNERS, lax.floor_p, x)
    if out is not None:
        return out
    x = asarray_leaf(x)
    return x if _dtypes.kind(get_aval(x).dtype) in "iub" else lax.floor(x)


def ceil(x, /):
    out = _eager_fast(_CEIL_RUNNERS, lax.ceil_p, x)
    if out is not None:
        return out
    x = asarray_leaf(x)
    return x if _dtypes.kind(get_aval(x).dtype) in "iub" else lax.ceil(x)


def trunc(x, /):
    def _trunc(x):
        if _dtypes.kind(get_aval(x).dtype) in "iub":
            return x
        return _where_jit(lax.lt(x, _zero_like(x)), lax.ceil(x), lax.floor(x))
    return _jit_named("trunc", _trunc, asarray_leaf(x))


def round(a, decimals=0, out=None):  # noqa: A001
    decimals = operator.index(decimals)
    dt = get_aval(asarray_leaf(a)).dtype
    if dt == _np.bool_:
        raise ValueError("jnp.round does not accept dtype bool: booleans have no decimals to round "
                         "(as in JAX). Convert first, e.g. jnp.round(a.astype(int)).")
    if _dtypes.kind(dt) in "iu" and decimals < 0:
        raise NotImplementedError(f"jnp.round of integers (dtype {dt.name}) is not implemented for "
                                  f"decimals < 0 (got decimals={decimals}), as in JAX; round a float "
                                  "copy instead, e.g. jnp.round(a.astype(float), decimals).")

    def _round(a):
        if _dtypes.kind(get_aval(a).dtype) in "iu" or decimals > _np.log10(float(_dtypes.finfo(dt).max)):
            return a   # rounding integers, or past the type's precision, changes nothing
        if _dtypes.kind(get_aval(a).dtype) == "c":
            return _on_parts(_round, a)
        if decimals == 0:
            return lax.round(a, 1)
        factor = _full_scalar(10.0 ** decimals, a)
        return lax.div(lax.round(lax.mul(a, factor), 1), factor)
    return _jit_named("round", _round, asarray_leaf(a))


around = round


def rint(x, /):
    def _rint(x):
        dt = get_aval(x).dtype
        if _dtypes.kind(dt) in "iub":
            return lax.convert_element_type(x, _dtypes.default_float_dtype())
        if _dtypes.kind(dt) == "c":
            return _on_parts(_rint, x)
        return lax.round(x, 1)
    return _jit_named("rint", _rint, asarray_leaf(x))


def _on_parts(fn, z):
    """``fn`` applied to the real and imaginary parts of complex ``z`` (JAX rounds so)."""
    from ._elementwise import complex_p, imag, real
    return complex_p.bind(fn(real(z)), fn(imag(z)))


def isfinite(x, /):
    x = asarray_leaf(x)
    if _dtypes.kind(get_aval(x).dtype) not in "fc":
        return full(get_aval(x).shape, True, bool_)
    if _dtypes.kind(get_aval(x).dtype) == "c":
        from ._elementwise import imag, real
        return lax.bitwise_and(lax.is_finite(real(x)), lax.is_finite(imag(x)))
    return lax.is_finite(x)


def isnan(x, /):
    if type(x) is Array and x._value.dtype.kind == "f" and core.trace_state.idle:
        # ne(x, x) eagerly: numpy's isnan (the same bits, one pass); weak as the comparison
        out = _np.isnan(x._value)
        return Array(out if type(out) is _np.ndarray else _np.asarray(out), x.weak_type)
    x = asarray_leaf(x)
    return lax.ne(x, x)


def isinf(x, /):
    def _isinf(x):
        if _dtypes.kind(get_aval(x).dtype) not in "fc":
            return full(get_aval(x).shape, False, bool_)
        ax = lax.abs(x)   # real for complex x
        return lax.eq(ax, _full_scalar(_np.inf, ax))
    return _jit_named("isinf", _isinf, asarray_leaf(x))


def clip(arr=None, min=None, max=None, a=None, a_min=None, a_max=None):  # noqa: A002
    x = arr if arr is not None else a
    lo = min if min is not None else a_min
    hi = max if max is not None else a_max

    def _clip(x, *bounds):
        it = iter(bounds)
        if lo is not None:
            x = maximum(next(it), x)
        if hi is not None:
            x = minimum(next(it), x)
        return asarray_leaf(x)
    # JAX's jnp.clip is jitted: its jaxpr nests it as jit[name=clip] with the bounds as operands.
    args = [_jit_operand(v) for v in (x, lo, hi) if v is not None]
    return _jit_named("clip", _clip, *args)


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    if x is None and y is None:
        # The one-argument form is nonzero (from the sorting module), with its size/fill_value.
        from . import _sorting
        if not hasattr(_sorting, "nonzero"):
            raise NotImplementedError("jnp.where(condition) needs jnp.nonzero, which is not available")
        return _sorting.nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise TypeError(f"where requires ndarray or scalar arguments, got {type(None)} at position "
                        f"{1 if x is None else 2}.")
    if type(condition) is Array:
        res = _eager_paths.where(condition, x, y)
        if res is not None:
            return res
    from .._prng import PRNGKeyArray
    if isinstance(x, PRNGKeyArray) and isinstance(y, PRNGKeyArray):
        # Typed keys select their key data (the trailing axis of 2 words rides along).
        cond = expand_dims(asarray(condition), -1)
        return PRNGKeyArray(_where_jit(*(_jit_operand(v) for v in (cond, x._base, y._base))))
    return _where_jit(*(_jit_operand(v) for v in (condition, x, y)))


def _where(condition, x, y):
    # JAX's _where: promotion and broadcasting happen inside the jitted helper.
    condition = _to_bool(asarray_leaf(condition))
    x, y = promote_dtypes(x, y)
    if get_aval(condition).ndim == 0:
        x, y = _broadcast_all(x, y)
    else:
        condition, x, y = _broadcast_all(condition, x, y)
    return lax.select(condition, x, y)


def _where_jit(condition, x, y):
    return _jit_named("_where", _where, condition, x, y)


def _jit_named(name, fun, *args):
    from ..dispatch import jit_call_named
    return jit_call_named(name, fun, *args)


def _jit_operand(v):
    """Operands of jitted jnp helpers: Python scalars stay (weak) scalars, the rest become arrays."""
    return v if _is_python_scalar(v) or isinstance(v, (core.Tracer, Array)) else asarray_leaf(v)


def _broadcast_all(*args):
    shapes = [get_aval(a).shape for a in args]
    shape = broadcast_shapes_checked(*shapes)
    return [broadcast_to(a, shape) for a in args]


def _nary_shape(*xs):
    return broadcast_shapes_checked(*(get_aval(x).shape for x in xs))


# ---------------------------------------------------------------- reductions

def _int_sum_promote(a):
    # numpy sums bools and small ints in the default integer type.
    dt = get_aval(a).dtype
    if dt == _np.bool_ or (_dtypes.kind(dt) in "iu" and dt.itemsize < _dtypes.default_int_dtype().itemsize):
        target = _dtypes.default_int_dtype() if _dtypes.kind(dt) != "u" else _dtypes.canonicalize_dtype(_np.uint64)
        return lax._convert_element_type(a, target, False)
    return a


# sum, prod, max, min, all, any, mean, var, std: ``_reductions`` (star-imported below).


def _arg_reduction(name, lax_fn):
    def fn(a, axis=None, out=None, keepdims=False):
        if type(a) is Array and axis is None and out is None and keepdims is False:
            res = _eager_paths.whole_reduction(name, a)
            if res is not None:
                return res
        a = asarray_leaf(a)
        # With axis=None, keepdims keeps every dim of the input as size 1 (none for a 0-d input).
        kept_shape = (1,) * get_aval(a).ndim if axis is None else None
        if axis is None:
            a = ravel(a)
            axis = 0
        ax = canonicalize_axis(axis, get_aval(a).ndim, error=IndexError)   # JAX's class here
        if _dtypes.kind(get_aval(a).dtype) == "c":
            raise TypeError(f"{name} does not accept dtype {get_aval(a).dtype.name}: complex numbers have no "
                            "order. Accepted dtypes are subtypes of integer, floating, bool; reduce "
                            "jnp.abs(x) or x.real instead.")
        if get_aval(a).shape[ax] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        res = lax_fn(a, ax, _dtypes.default_int_dtype())
        if keepdims:
            return lax.reshape(res, kept_shape) if kept_shape is not None else lax.expand_dims(res, (ax,))
        return res
    fn.__name__ = name
    return fn


argmax = _arg_reduction("argmax", lax.argmax)
argmin = _arg_reduction("argmin", lax.argmin)


def _bool_to_int(a):
    # jnp.cumsum/cumprod keep integer dtypes (unlike sum/prod) but count bools in the default int.
    return lax._convert_element_type(a, _dtypes.default_int_dtype(), False) \
        if get_aval(a).dtype == _np.bool_ else a


def _cumulative(name, lax_fn):
    def fn(a, axis=None, dtype=None):
        a = asarray_leaf(a)
        if axis is None:
            a, axis = ravel(a), 0
        a = lax._convert_element_type(a, _dtypes.check_user_dtype(dtype, name), False) if dtype \
            else _bool_to_int(a)
        if get_aval(a).weak_type:   # jnp's cumulative reductions return strong types, as JAX's
            a = lax._convert_element_type(a, get_aval(a).dtype, False)
        ax = canonicalize_axis(axis, get_aval(a).ndim)
        from ..dispatch import jit_call_named
        return jit_call_named(name, lambda v: lax_fn(v, ax), a)
    fn.__name__ = name
    return fn


cumsum = _cumulative("cumsum", lax.cumsum)
cumprod = _cumulative("cumprod", lax.cumprod)


# ---------------------------------------------------------------- linear algebra

def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    if type(a) is Array and type(b) is Array and precision is None and preferred_element_type is None \
            and out_sharding is None:
        res = _eager_paths.dot_vectors(a, b)
        if res is not None:
            return res
    a, b = promote_dtypes(a, b)
    la, lb = get_aval(a), get_aval(b)
    if la.ndim == 0 or lb.ndim == 0:
        return multiply(a, b)
    contract = ((la.ndim - 1,), (builtins.max(lb.ndim - 2, 0),))
    return lax.dot_general(a, b, (contract, ((), ())), precision, preferred_element_type, out_sharding)


def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    if type(a) is Array and type(b) is Array and precision is None and preferred_element_type is None \
            and out_sharding is None:
        res = _eager_paths.dot_vectors(a, b)     # (two vectors: the same contraction as dot's)
        if res is not None:
            return res
    a, b = promote_dtypes(a, b)
    la, lb = get_aval(a), get_aval(b)
    if la.ndim == 0 or lb.ndim == 0:
        raise ValueError(f"matmul input operand {0 if la.ndim == 0 else 1} must have ndim at least 1, "
                         "but it has ndim 0")
    if la.ndim <= 2 and lb.ndim <= 2:
        if la.shape[-1] != lb.shape[0]:
            raise TypeError(f"dot_general requires contracting dimensions to have the same shape, "
                            f"got ({la.shape[-1]},) and ({lb.shape[0]},).")
        return lax.dot_general(a, b, (((la.ndim - 1,), (0,)), ((), ())), precision, preferred_element_type,
                               out_sharding)
    if out_sharding is not None:   # through the batched product, then placed as asked
        from ..sharding import reshard
        return reshard(matmul(a, b, precision=precision, preferred_element_type=preferred_element_type),
                       out_sharding)
    a2 = a if la.ndim > 1 else lax.expand_dims(a, (0,))
    b2 = b if lb.ndim > 1 else lax.expand_dims(b, (1,))
    try:
        batch = _np.broadcast_shapes(get_aval(a2).shape[:-2], get_aval(b2).shape[:-2])
    except ValueError:
        raise ValueError(f"Incompatible types for matmul arguments: {la.str_short()} and {lb.str_short()}: "
                         "the batch (leading) dimensions must broadcast together.") from None
    a2 = broadcast_to(a2, batch + get_aval(a2).shape[-2:])
    b2 = broadcast_to(b2, batch + get_aval(b2).shape[-2:])
    nb = len(batch)
    out = lax.dot_general(a2, b2, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
                          precision, preferred_element_type)
    if la.ndim == 1:
        out = lax.squeeze(out, (nb,))
    if lb.ndim == 1:
        out = lax.squeeze(out, (get_aval(out).ndim - 1,))
    return out


def vdot(a, b, *, precision=None, preferred_element_type=None):
    # As numpy.vdot: the first argument is conjugated.
    a = asarray_leaf(a)
    if _np.issubdtype(get_aval(a).dtype, _np.complexfloating):
        a = conjugate(a)
    return dot(ravel(a), ravel(b), precision=precision, preferred_element_type=preferred_element_type)


def inner(a, b):
    a, b = promote_dtypes(a, b)
    la, lb = get_aval(a), get_aval(b)
    if la.ndim == 0 or lb.ndim == 0:
        return multiply(a, b)
    return lax.dot_general(a, b, (((la.ndim - 1,), (lb.ndim - 1,)), ((), ())))


def outer(a, b):
    return ravel(a)[:, None] * ravel(b)[None, :]


# ---------------------------------------------------------------- shape

def shape(a):
    return get_aval(asarray_leaf(a)).shape


def ndim(a):
    return get_aval(asarray_leaf(a)).ndim


def size(a, axis=None):
    s = shape(a)
    return int(_np.prod(s)) if axis is None else s[axis]


def _check_order(order, k_message=None):
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    if order == "K" and k_message:
        raise NotImplementedError(k_message)
    if order not in ("C", "F"):
        raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def reshape(a, shape=None, order="C", *, newshape=None, out_sharding=None):
    _check_order(order)
    a = asarray_leaf(a)
    shape = newshape if shape is None else shape
    given = shape   # JAX's messages show the shape as the caller wrote it
    shape = _shape(shape)
    aval = get_aval(a)
    if builtins.sum(1 for s in shape if s == -1) > 1:
        raise TypeError(f"can only specify one unknown axis size with a `-1` value, got {given}")
    if -1 in shape:
        known = int(_np.prod([s for s in shape if s != -1]))
        if known == 0 or aval.size % known:
            raise TypeError(f"cannot reshape array of shape {aval.shape} (size {aval.size}) into shape "
                            f"{given} because the product of specified axis sizes ({known}) does "
                            f"not evenly divide {aval.size}")
        shape = tuple(aval.size // known if s == -1 else s for s in shape)
    if int(_np.prod(shape)) != aval.size:
        raise TypeError(f"cannot reshape array of shape {aval.shape} (size {aval.size}) into shape "
                        f"{given} (size {int(_np.prod(shape))})")
    if order == "F" and (aval.ndim > 1 or len(shape) > 1):
        # Column-major: reading and writing with the axes reversed is a row-major reshape.
        flipped = lax.reshape(transpose(a), shape[::-1])
        return transpose(flipped)
    return lax.reshape(a, shape, out_sharding=out_sharding)


def ravel(a, order="C"):
    _check_order(order, "Ravel not implemented for order='K'.")
    a = asarray_leaf(a)
    return reshape(a, (get_aval(a).size,), order=order)


def transpose(a, axes=None):
    a = asarray_leaf(a)
    nd = get_aval(a).ndim
    axes = tuple(range(nd))[::-1] if axes is None else tuple(canonicalize_axis(x, nd) for x in axes)
    return lax.transpose(a, axes)


def matrix_transpose(x, /):
    nd = ndim(x)
    return transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def swapaxes(a, axis1, axis2):
    nd = ndim(a)
    perm = list(range(nd))
    a1, a2 = canonicalize_axis(axis1, nd, error=IndexError), canonicalize_axis(axis2, nd, error=IndexError)
    perm[a1], perm[a2] = perm[a2], perm[a1]
    return transpose(a, perm)


def moveaxis(a, source, destination):
    nd = ndim(a)
    src = [canonicalize_axis(s, nd) for s in ([source] if isinstance(source, int) else source)]
    dst = [canonicalize_axis(d, nd) for d in ([destination] if isinstance(destination, int) else destination)]
    if len(src) != len(dst):
        raise ValueError(f"Inconsistent number of elements: {len(src)} vs {len(dst)} (moveaxis source "
                         f"{source} and destination {destination} must name as many axes).")
    perm = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return transpose(a, perm)


def squeeze(a, axis=None):
    a = asarray_leaf(a)
    aval = get_aval(a)
    if axis is None:
        axes = tuple(i for i, s in enumerate(aval.shape) if s == 1)
    else:
        axes = reduction_axes(axis, aval.ndim)
        for ax in axes:
            if aval.shape[ax] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not equal to one, "
                                 f"got shape={aval.shape} and dimensions={axes}")
    return lax.squeeze(a, axes)


def expand_dims(a, axis):
    a = asarray_leaf(a)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    nd = get_aval(a).ndim + len(axes)
    return lax.expand_dims(a, tuple(canonicalize_axis(x, nd) for x in axes))


def broadcast_to(array, shape):
    a = asarray_leaf(array)
    shape = _shape(shape)
    aval = get_aval(a)
    if aval.shape == shape:
        return a
    if len(shape) < aval.ndim:
        raise ValueError(f"Cannot broadcast to shape with fewer dimensions: arr_shape={aval.shape} "
                         f"shape={shape}")
    try:
        if _np.broadcast_shapes(aval.shape, shape) != shape:
            raise ValueError
    except ValueError:
        raise ValueError(f"Incompatible types for broadcasting: input type={aval.str_short()} and "
                         f"requested type={aval.update(shape=shape).str_short()}") from None
    lead = len(shape) - aval.ndim
    kept = [i for i in range(aval.ndim) if aval.shape[i] == shape[lead + i]]
    squeezed = lax.squeeze(a, [i for i in range(aval.ndim) if i not in kept]) if len(kept) < aval.ndim else a
    return lax.broadcast_in_dim(squeezed, shape, [lead + i for i in kept])


def broadcast_arrays(*args):
    return _broadcast_all(*(asarray_leaf(a) for a in args))


def broadcast_shapes(*shapes):
    return broadcast_shapes_checked(*shapes)


def concatenate(arrays, axis=0, dtype=None):
    if not len(arrays):
        raise ValueError("Need at least one array to concatenate.")
    if _is_keys(arrays):
        return _prng.concatenate_keys(arrays, axis)
    arrays = promote_dtypes(*arrays)
    if dtype is not None:
        dt = _dtypes.check_user_dtype(dtype, "concatenate")
        arrays = [lax._convert_element_type(a, dt, False) for a in arrays]
    nd = get_aval(arrays[0]).ndim
    if nd == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    return lax.concatenate(arrays, canonicalize_axis(axis, nd))


def stack(arrays, axis=0, dtype=None):
    if not len(arrays):
        raise ValueError("Need at least one array to stack.")
    if _is_keys(arrays):
        return _prng.stack_keys(arrays, axis)
    arrays = [asarray_leaf(a) for a in arrays]
    shapes = {get_aval(a).shape for a in arrays}
    if len(shapes) > 1:
        raise ValueError("All input arrays must have the same shape. Got "
                         f"{', '.join(str(get_aval(a).shape) for a in arrays)}.")
    nd = get_aval(arrays[0]).ndim + 1
    ax = canonicalize_axis(axis, nd)
    return concatenate([lax.expand_dims(a, (ax,)) for a in arrays], ax, dtype)


def hstack(tup):
    arrs = [_atleast_1d_one(a) for a in tup]
    return concatenate(arrs, 0 if get_aval(arrs[0]).ndim == 1 else 1)


def vstack(tup):
    return concatenate([_atleast_2d_one(a) for a in tup], 0)


def _atleast_1d_one(x):
    """One array as ``atleast_1d`` returns it (the public, variadic one is in ``_shape_ops``)."""
    x = asarray_leaf(x)
    return reshape(x, (1,)) if get_aval(x).ndim == 0 else x


def _atleast_2d_one(x):
    x = asarray_leaf(x)
    nd = get_aval(x).ndim
    return x if nd >= 2 else lax.broadcast_to_rank(x, 2)


def astype(x, dtype, copy=False):
    if type(x) is not Array:
        from .._prng import PRNGKeyArray
        if isinstance(x, PRNGKeyArray) and dtype == x.dtype:
            return x
    x, dtype = asarray_leaf(x), _dtypes.check_user_dtype(dtype, "astype")
    if _dtypes.kind(get_aval(x).dtype) == "c":
        if _dtypes.kind(dtype) in "iuf":
            import warnings
            warnings.warn("Casting from complex to real dtypes will soon raise a ValueError. Please first use "
                          "jnp.real or jnp.imag to take the real/imaginary component of your input.",
                          DeprecationWarning, stacklevel=2)
        elif dtype == _np.bool_:
            x = not_equal(x, 0)      # as JAX: nonzero, not the real part's truth
    return lax._convert_element_type(x, dtype, False, warn_on_complex_to_real_cast=False)


# allclose, isclose, array_equal: ``_extra`` (star-imported below).


from ._indexing import getitem as _getitem  # noqa: E402
from . import _eager_paths  # noqa: E402
from . import _operators  # noqa: E402,F401  (installs Array/Tracer operators)
# Eager max/min of an Array and an Array or scalar: the short path of the operators, computing
# what lax.max/min's eager rule computes (NaN propagates; +0 is the max of +0 and -0).
def _extremum(ufunc, is_max):
    fix = lax.elementwise.signed_zero_fix

    def compute(x, y):      # (run with numpy's warnings off)
        out = ufunc(x, y)
        if x.dtype.kind != "f" or (y.ndim == 0 and float(y) != 0.0) or (x.ndim == 0 and float(x) != 0.0):
            return out      # no two zeros to order (a nonzero or NaN scalar side: cheap to see)
        zero = y if _plus_zero(y) else x if _plus_zero(x) else None
        if is_max and zero is not None:
            # max with +0 (a ReLU): every zero result is +0, which adding +0 makes of a -0
            # numpy may have kept; nonzero results and NaNs add +0 unchanged
            return _np.add(out, zero, out=out) if type(out) is _np.ndarray else _np.add(out, zero)
        return fix(out, x, y, is_max)
    return compute


def _plus_zero(a):
    """Whether ``a`` is a 0-d +0.0 (its being zero checked already)."""
    return a.ndim == 0 and _math.copysign(1.0, float(a)) > 0


maximum = _operators.fast_binary_function(_extremum(_np.maximum, True), maximum)
minimum = _operators.fast_binary_function(_extremum(_np.minimum, False), minimum)
bitwise_and = _operators.fast_binary_function(_np.bitwise_and, bitwise_and, _operators.BITWISE_KINDS)
bitwise_or = _operators.fast_binary_function(_np.bitwise_or, bitwise_or, _operators.BITWISE_KINDS)
bitwise_xor = _operators.fast_binary_function(_np.bitwise_xor, bitwise_xor, _operators.BITWISE_KINDS)


logical_and = _eager_paths.logical_pair(bitwise_and, logical_and)
logical_or = _eager_paths.logical_pair(bitwise_or, logical_or)
logical_xor = _eager_paths.logical_pair(bitwise_xor, logical_xor)
from ._reductions import *  # noqa: E402,F401,F403
from ._elementwise import *  # noqa: E402,F401,F403
from ._shape_ops import *  # noqa: E402,F401,F403
from ._einsum import *  # noqa: E402,F401,F403
from ._polynomial import *  # noqa: E402,F401,F403
from ._extra import *  # noqa: E402,F401,F403
from ._sorting import *  # noqa: E402,F401,F403
from ._setops import *  # noqa: E402,F401,F403
from . import fft, linalg  # noqa: E402,F401
from ._indexing import put, take, take_along_axis  # noqa: E402,F401

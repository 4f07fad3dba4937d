"""Python operators and array methods on Arrays and Tracers, routed through numjax.numpy."""
import math

import numpy as np

from .. import dtypes
from .. import core
from ..array import Array



def _install():
    import numjax.numpy as jnp

    def swap(f):
        return lambda self, other: f(other, self)

    ops = {
        "__add__": jnp.add, "__radd__": swap(jnp.add),
        "__sub__": jnp.subtract, "__rsub__": swap(jnp.subtract),
        "__mul__": jnp.multiply, "__rmul__": swap(jnp.multiply),
        "__truediv__": jnp.true_divide, "__rtruediv__": swap(jnp.true_divide),
        "__floordiv__": jnp.floor_divide, "__rfloordiv__": swap(jnp.floor_divide),
        "__mod__": jnp.remainder, "__rmod__": swap(jnp.remainder),
        "__pow__": jnp.power, "__rpow__": swap(jnp.power),
        "__matmul__": jnp.matmul, "__rmatmul__": swap(jnp.matmul),
        "__and__": jnp.bitwise_and, "__rand__": swap(jnp.bitwise_and),
        "__or__": jnp.bitwise_or, "__ror__": swap(jnp.bitwise_or),
        "__xor__": jnp.bitwise_xor, "__rxor__": swap(jnp.bitwise_xor),
        # (jnp's shifts and divmod are defined after this module runs: looked up on call.)
        "__lshift__": _late_binary("left_shift"), "__rlshift__": _late_binary("left_shift", True),
        "__rshift__": _late_binary("right_shift"), "__rrshift__": _late_binary("right_shift", True),
        "__lt__": jnp.less, "__le__": jnp.less_equal, "__gt__": jnp.greater,
        "__ge__": jnp.greater_equal, "__eq__": jnp.equal, "__ne__": jnp.not_equal,
        "__neg__": jnp.negative, "__pos__": jnp.positive, "__abs__": jnp.absolute,
        "__invert__": _invert_operator,
        "__getitem__": jnp._getitem,
        "__divmod__": _late_binary("divmod"), "__rdivmod__": _late_binary("divmod", True),
        "__round__": _round_operator,
    }
    for cls in (Array, core.Tracer):
        for name, fn in ops.items():
            setattr(cls, name, fn)
        for name in _METHODS:
            setattr(cls, name, _late_method(name))
        cls.reshape = _reshape_method
        cls.transpose = _transpose_method
        cls.flatten = _late_method("ravel")
        cls.compress = _compress_method
        cls.conj = cls.conjugate = _late_method("conjugate")
        cls.T = property(lambda self: jnp.transpose(self))
        cls.mT = property(lambda self: jnp.matrix_transpose(self))
        cls.real = property(lambda self: jnp.real(self))
        cls.imag = property(lambda self: jnp.imag(self))
        cls.view = _view_method
        cls.__hash__ = None
    core.Tracer.item = _tracer_item
    core.Tracer.copy = lambda self: jnp.array(self, copy=True)
    # Static facts of the abstract value: plain ints under every transformation, as in JAX.
    core.Tracer.itemsize = property(lambda self: self.dtype.itemsize)
    core.Tracer.nbytes = property(lambda self: self.size * self.dtype.itemsize)
    core.Tracer.tolist = _tracer_tolist
    for name, (ufunc, reflected) in _FAST_BINARY.items():
        setattr(Array, name, _fast_binary(ufunc, ops[name], reflected))
    for name, (ufunc, reflected) in _FAST_BITWISE.items():
        setattr(Array, name, _fast_binary(ufunc, ops[name], reflected, BITWISE_KINDS))
    Array.__hash__ = _unhashable
    core.Tracer.__hash__ = _unhashable
    if not hasattr(core.Tracer, "block_until_ready"):
        core.Tracer.block_until_ready = lambda self: self


def _round_operator(x, ndigits=None):
    """``round(x)`` rounds half to even and gives an integer array (as round of a Python
    float gives an int); ``round(x, n)`` keeps the dtype."""
    import numjax.numpy as jnp
    out = jnp.round(x, decimals=ndigits or 0)
    return out.astype(int) if ndigits is None else out


# Eager arithmetic between Arrays and Python scalars skips the lax layer: the result dtype
# comes from the same promotion table, and numpy computes in that dtype directly (these ops
# are exactly rounded, so numpy's result is XLA's bit for bit).
_FAST_BINARY = {
    "__add__": (np.add, False), "__radd__": (np.add, True),
    "__sub__": (np.subtract, False), "__rsub__": (np.subtract, True),
    "__mul__": (np.multiply, False), "__rmul__": (np.multiply, True),
    "__truediv__": (np.true_divide, False), "__rtruediv__": (np.true_divide, True),
    "__lt__": (np.less, False), "__le__": (np.less_equal, False),
    "__gt__": (np.greater, False), "__ge__": (np.greater_equal, False),
    "__eq__": (np.equal, False), "__ne__": (np.not_equal, False),
}
_COMPARE = {np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal}

# How an Array combines with the other operand, made once per key and operator by
# ``dtypes.promote``: None where the full path runs (bools, complex, integer overflow checks,
# integer division), else the result's dtype and weak type and what to convert.
#   Array: (dtype, weak type of each operand) -> (dtype, weak, cast self, cast other).
#   Python scalar: (Array's dtype and weak type, the scalar, its type, x64) -> (dtype, weak,
#   the scalar as a read-only 0-d array of the result dtype, cast self). (numpy combines an
#   array with a 0-d array faster than with a numpy scalar.) Floats equal to zero are keyed
#   by their sign (0.0 and -0.0 are equal keys); NaN (never an equal key) is planned on every
#   call. An integer scalar joins an integer array when it fits both the default integer type
#   and the result's (where JAX raises OverflowError, or wraps, the full path runs).
_SCALAR_PLANS_MAX = 4096
_MISSING = object()


def _result(self_dt, self_weak, other_dt, other_weak, numpy_kinds):
    """(dtype, weak type) of the result, or (None, None) for the full path. ``numpy_kinds``:
    the kinds (by numpy's own letters) the operation may compute directly -- division and
    max/min leave ml_dtypes' narrow floats to the full path, which computes them in float32
    and rounds as XLA does."""
    dt, weak = dtypes.promote((self_dt, self_weak), (other_dt, other_weak))
    kind = dtypes.kind(dt)
    if kind not in "fiub" or dt.kind not in numpy_kinds:
        return None, None
    return dt, weak


def _int_fits(value, *dts):
    for dt in dts:
        if dt.kind in "iu":
            info = np.iinfo(dt)
            if not info.min <= value <= info.max:
                return False
    return True


def _array_plan(plans, key, numpy_kinds):
    self_dt, self_weak, other_dt, other_weak = key
    dt, weak = _result(self_dt, self_weak, other_dt, other_weak, numpy_kinds)
    plan = plans[key] = None if dt is None else (dt, weak, self_dt != dt, other_dt != dt)
    return plan


def _scalar_plan(plans, self_dt, self_weak, value, key_value, t, x64, numpy_kinds):
    other_dt = dtypes.default_float_dtype() if t is float else dtypes.default_int_dtype()
    dt, weak = _result(self_dt, self_weak, other_dt, True, numpy_kinds)
    if dt is None or (t is int and not _int_fits(value, other_dt, dt)):
        plan = None
    else:
        from .._fp_quiet import call as quiet_call
        scalar = quiet_call(np.asarray, value, dt)    # (1e300 as float32: inf, silently as in JAX)
        scalar.setflags(write=False)
        plan = (dt, weak, scalar, self_dt != dt)
    if value == value:
        if len(plans) >= _SCALAR_PLANS_MAX:
            plans.clear()
        plans[(self_dt, self_weak, key_value, t, x64)] = plan
    return plan


def _zero_key(value):
    """The plans' key of a float equal to zero: its sign as a string."""
    return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"


# numpy's own kinds: ml_dtypes' narrow floats ("V" to numpy) take the full path, which
# computes them in float32 and rounds as XLA does (and keeps their loops off this path).
# (Bools only for the bitwise operators: arithmetic rejects or redefines them.)
_NUMPY_KINDS = "fiu"
BITWISE_KINDS = "biu"
_FAST_BITWISE = {
    "__and__": (np.bitwise_and, False), "__rand__": (np.bitwise_and, True),
    "__or__": (np.bitwise_or, False), "__ror__": (np.bitwise_or, True),
    "__xor__": (np.bitwise_xor, False), "__rxor__": (np.bitwise_xor, True),
}


def _fast_binary(ufunc, slow, reflected, numpy_kinds=_NUMPY_KINDS):
    compare = ufunc in _COMPARE
    if ufunc is np.true_divide:
        numpy_kinds = "f"    # (jnp's integer division converts to float first)
    from .._fp_quiet import call as quiet_call, run as quiet_run
    from ..config import config
    from ..errors import out_of_memory
    trace_state = core.trace_state
    array_plans, scalar_plans = {}, {}

    def op(self, other):
        t = type(other)
        if not trace_state.idle:
            return slow(self, other)
        sv = self._value
        if t is float or t is int:
            kv = other if t is int or other != 0.0 else _zero_key(other)
            plan = scalar_plans.get((sv.dtype, self.weak_type, kv, t, config.jax_enable_x64), _MISSING)
            if plan is _MISSING:
                plan = _scalar_plan(scalar_plans, sv.dtype, self.weak_type, other, kv, t,
                                    config.jax_enable_x64, numpy_kinds)
            if plan is None:
                return slow(self, other)
            dt, weak, ov, cast = plan
        elif t is Array:
            ov = other._value
            key = (sv.dtype, self.weak_type, ov.dtype, other.weak_type)
            plan = array_plans.get(key, _MISSING)
            if plan is _MISSING:
                plan = _array_plan(array_plans, key, numpy_kinds)
            if plan is None:
                return slow(self, other)
            dt, weak, cast, cast_other = plan
            if cast_other:
                ov = quiet_call(ov.astype, dt)     # (int32 to float16: inf, silently as in JAX)
        else:
            return slow(self, other)
        if cast:
            sv = quiet_call(sv.astype, dt)
        # inf - inf, overflow, NaN compared (bfloat16's loops flag it): no numpy warnings, as JAX
        try:
            out = quiet_run(ufunc, ov, sv) if reflected else quiet_run(ufunc, sv, ov)
        except ValueError:
            return slow(self, other)   # incompatible shapes: raise JAX's TypeError from lax
        except RuntimeError:           # another thread holds the quiet context
            out = quiet_call(ufunc, ov, sv) if reflected else quiet_call(ufunc, sv, ov)
        except MemoryError as err:
            raise out_of_memory(err) from None
        if type(out) is not np.ndarray:   # (numpy gives a scalar for 0-d operands)
            out = np.asarray(out) if compare else np.asarray(out, dtype=dt)
        return Array(out, weak)           # (a comparison's: weak exactly when both operands are)
    return op


def fast_binary_function(compute, slow, numpy_kinds=_NUMPY_KINDS):
    """The jnp binary function ``slow`` with the operators' short eager path in front, for an
    Array with an Array or Python scalar (either side) of numpy's own dtypes (of
    ``numpy_kinds``): ``compute`` takes the two numpy values, converted to the result dtype,
    and is the primitive's eager rule's own computation."""
    op = _fast_binary(compute, slow, False, numpy_kinds)
    reflected = _fast_binary(compute, lambda a, b: slow(b, a), True, numpy_kinds)

    def fn(x, y, /):
        if type(x) is Array:
            return op(x, y)
        if type(y) is Array and (type(x) is float or type(x) is int):
            return reflected(y, x)
        return slow(x, y)
    fn.__name__, fn.__doc__ = slow.__name__, slow.__doc__
    return fn


# Array methods that are jnp functions of the array; looked up on call so later overrides of a
# jnp function (jnp.sum with where=, jnp.sort from another module) are what the method runs.
_METHODS = ("sum", "mean", "max", "min", "prod", "argmax", "argmin", "all", "any", "std", "var",
            "cumsum", "cumprod", "ravel", "squeeze", "dot", "clip", "round", "swapaxes", "astype",
            "trace", "diagonal", "ptp", "repeat", "choose", "nonzero", "sort", "argsort",
            "searchsorted", "take", "compress", "argpartition")


def _late_method(name):
    import numjax.numpy as jnp

    def method(self, *args, **kwargs):
        return getattr(jnp, name)(self, *args, **kwargs)
    method.__name__ = name
    if name in _WHOLE_REDUCTIONS:
        return _reduction_method(name, method)
    return method


# Methods whose argument-free eager call on an Array takes the whole-array reduction's short
# path (numpy/_eager_paths.py) without going through the jnp function.
_WHOLE_REDUCTIONS = ("sum", "mean", "max", "min", "prod", "argmax", "argmin", "all", "any")


def _reduction_method(name, general):
    from . import _eager_paths as paths

    def method(self, *args, **kwargs):
        if not args and not kwargs and type(self) is Array:
            res = paths.whole_reduction(name, self)
            if res is not None:
                return res
        return general(self, *args, **kwargs)
    method.__name__ = name
    return method


def _view_method(self, dtype=None, type=None):  # noqa: A002
    """The array's bits as ``dtype``, as numpy's view: between widths the last axis grows or
    shrinks by the ratio (a bitcast_convert_type plus a reshape)."""
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    if dtype is None:
        return self
    dt = np.dtype(dtypes.check_user_dtype(dtype, "view"))
    return _view(self, dt)


def _view(x, dt):
    import numjax.lax as lax
    import numjax.numpy as jnp
    src = np.dtype(x.dtype)
    bits_in, bits_out = dtypes.itemsize_bits(src), dtypes.itemsize_bits(dt)
    if x.ndim == 0:
        if bits_in != bits_out:
            raise ValueError(f"view() of a 0d array is only supported if the itemsize is unchanged; "
                             f"got {src.name} viewed as {dt.name}. Reshape it to 1d first.")
        return jnp.squeeze(_view(lax.expand_dims(x, (0,)), dt))
    if (x.shape[-1] * bits_in) % bits_out:
        raise ValueError("When changing to a larger dtype, its size must be a divisor of the total size "
                         f"in bytes of the last axis of the array: shape {x.shape} of {src.name} cannot "
                         f"be viewed as {dt.name}.")
    if src == dt:
        return x
    # bitcast_convert_type takes no bool or complex: go through uint8 / the real parts.
    if src == np.bool_:
        return _view(jnp.astype(x, np.uint8), dt)
    if dtypes.kind(src) == "c":
        parts = jnp.stack([jnp.real(x), jnp.imag(x)], axis=-1)
        return _view(jnp.reshape(parts, (*x.shape[:-1], 2 * x.shape[-1])), dt)
    if dt == np.bool_:
        return jnp.astype(_view(x, np.dtype(np.uint8)), dt)
    if dtypes.kind(dt) == "c":
        # (as JAX forms it: re + 1j * im, so an imaginary -0.0 reads as +0.0)
        parts = _view(x, np.dtype(np.finfo(dt).dtype))
        return jnp.astype(parts[..., 0::2], dt) + 1j * parts[..., 1::2]
    if bits_in < bits_out:
        ratio = bits_out // bits_in
        return lax.bitcast_convert_type(jnp.reshape(x, (*x.shape[:-1], x.shape[-1] // ratio, ratio)), dt)
    out = lax.bitcast_convert_type(x, dt)
    if bits_in > bits_out:
        out = jnp.reshape(out, (*out.shape[:-2], out.shape[-2] * out.shape[-1]))
    return out


def _tracer_concrete(self, method):
    v = self._concrete_value()
    if v is None:
        from ..errors import ConcretizationTypeError
        raise ConcretizationTypeError(self, f"The {method}() method needs a concrete value")
    return np.asarray(v)


def _tracer_item(self, *args):
    return _tracer_concrete(self, "item").item(*args)


def _tracer_tolist(self):
    return _tracer_concrete(self, "tolist").tolist()


def _unhashable(self):
    raise TypeError(f"unhashable type: '{type(self).__name__}'")


def _invert_operator(x):
    import numjax.numpy as jnp
    if type(x) is Array and core.trace_state.idle and x._value.dtype.kind in "biu":
        # lax.bitwise_not's eager rule (logical_not of bools), without the bind; weak as x
        out = np.invert(x._value)
        return Array(out if type(out) is np.ndarray else np.asarray(out), x.weak_type)
    return jnp.logical_not(x) if x.dtype == bool else _invert(x)


def _invert(x):
    import numjax.lax as lax
    return lax.bitwise_not(x)


def _late_binary(name, reflected=False):
    import numjax.numpy as jnp

    def op(self, other):
        fn = getattr(jnp, name)
        return fn(other, self) if reflected else fn(self, other)
    op.__name__ = name
    return op


def _reshape_method(self, *shape, order="C", out_sharding=None):
    import numjax.numpy as jnp
    if len(shape) == 1:
        shape = shape[0]
    return jnp.reshape(self, shape, order=order, out_sharding=out_sharding)


def _compress_method(self, condition, axis=None, *, size=None, fill_value=0, out=None):
    # The method's array is jnp.compress's second argument.
    import numjax.numpy as jnp
    return jnp.compress(condition, self, axis, size=size, fill_value=fill_value, out=out)


def _transpose_method(self, *axes):
    import numjax.numpy as jnp
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = axes[0]
    return jnp.transpose(self, axes or None)


_install()

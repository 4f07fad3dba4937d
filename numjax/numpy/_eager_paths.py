"""Short eager paths of jnp's whole-array reductions, ``jnp.where``, vector ``jnp.dot``,
integer powers and logical functions of bools.

Eagerly, ``jnp.sum(v)`` runs the general path: argument handling, dtype promotion, a bind of
``reduce_sum`` with its type rule, the eager rule's axis handling, and a conversion to the
strong result type -- some 14 us for a 1,000-element vector, where numpy takes 1-2 us. Here
each function and operand dtype gets a *plan*, made once (per x64 mode): the result's dtype,
and the numpy computation that the general path's eager rules end in, called directly.
Results are those of the general path bit for bit: floating sums and products take numjax's
summation order through the compiled loops' own kernel (lax/eager_kernels.py), the rest are
exactly rounded or order-free (max, min, argmax, integer sums, selects).

Only concrete operands of the exact type ``Array`` with no trace active take these paths, and
only the dtypes each plan names (numpy's own kinds; bfloat16 and the 8-bit floats, which the
general path computes in float32, are left to it); anything else, or any argument other than
the defaults (axis, keepdims, where=, initial=, dtype=, out=), returns None: the general path.
"""
import numpy as np

from .. import core, dtypes
from ..array import Array
from ..config import config
from ..lax import eager_kernels
from ..lax.elementwise import _integer_pow_impl
from ..lax.reductions import _signed_zeros
from .._fp_quiet import call as _quiet_call

_trace_state = core.trace_state
_MISSING = object()
_NUMPY_KINDS = "fiub"     # (ml_dtypes' narrow floats are "V" to numpy)
# (dtype objects: comparing a dtype with np.float32 itself converts that on every call)
_BOOL, _F32, _F64 = np.dtype(np.bool_), np.dtype(np.float32), np.dtype(np.float64)


def _strong(out, dtype):
    """A strong Array of ``out`` (a numpy scalar or 0-d array) as ``dtype``."""
    if type(out) is not np.ndarray or out.dtype != dtype:
        out = np.asarray(out, dtype)
    return Array(out, False)


# ---------------------------------------------------------------- whole-array reductions

def _sum_dtype(dt):
    """jnp.sum's result dtype (promote_integers): bools and narrow integers widen to the
    default integer (unsigned ones to the widest unsigned), as ``_int_sum_promote``."""
    if dt == np.bool_ or (dt.kind in "iu" and dt.itemsize < dtypes.default_int_dtype().itemsize):
        return dtypes.default_int_dtype() if dt.kind != "u" else dtypes.canonicalize_dtype(np.uint64)
    return dt


def _ordered_plan(dt, product):
    """sum/prod: float32/float64 in numjax's summation order; integers wrap in the result
    dtype (integer sums and products do not depend on their order)."""
    out_dt = _sum_dtype(dt)
    if dt.kind == "f":
        reduce = eager_kernels.ordered_vector_reducer(dt, product)
        if reduce is None:       # float16: the general path accumulates in float32
            return None
        # (several rows: the general path combines the rows' results in sequence)
        return lambda v: None if v.ndim > 1 else Array(reduce(v) if v.ndim else v.copy(), False)
    ufunc = np.multiply if product else np.add
    return lambda v: _strong(ufunc.reduce(v, axis=None, dtype=out_dt), out_dt)


def _extremum_plan(ufunc, is_max):
    def run(v):
        if not v.size:
            return None               # (the general path raises: no identity)
        out = ufunc.reduce(v, axis=None)
        if v.dtype.kind == "f" and out == 0:
            out = _signed_zeros(out, v, None, is_max)    # +0 / -0 as XLA orders them
        return _strong(out, v.dtype)
    return lambda dt: run


def _arg_plan(np_fn):
    def plan(dt):
        index_dt = dtypes.default_int_dtype()

        def run(v):
            if not v.size:
                return None           # (the general path raises)
            return Array(np.asarray(np_fn(v), index_dt), False)
        return run
    return plan


def _logical_plan(method):
    def run(v):
        return Array(np.asarray(method(v)), False)
    return lambda dt: run


def _mean_plan(dt):
    out_dt = dt if dt.kind == "f" else (
        dtypes.canonicalize_dtype(np.float64 if dt.itemsize == 8 else np.float32))
    reduce = eager_kernels.ordered_vector_reducer(out_dt, False)
    if reduce is None:
        return None
    count_type = out_dt.type

    def run(v):
        if v.ndim != 1 or not v.size:
            return None      # (a 0-d mean is the value itself; empty ones warn, then NaN)
        if v.dtype != out_dt:
            v = v.astype(out_dt)
        return Array(np.asarray(np.divide(reduce(v), count_type(v.size), dtype=out_dt)), False)
    return run


def _var_plan(dt):
    """var (ddof 0) of a float32/float64 vector as the general path's steps compute it: the
    ordered sum over the count, the centered squares' ordered sum over the count."""
    reduce = eager_kernels.ordered_vector_reducer(dt, False) if dt.kind == "f" else None
    if reduce is None:
        return None
    count_type = dt.type

    def run(v):
        if v.ndim != 1 or not v.size:
            return None
        n = count_type(v.size)
        centered = np.subtract(v, np.divide(reduce(v), n, dtype=dt), dtype=dt)
        return Array(np.asarray(np.divide(reduce(np.multiply(centered, centered)), n, dtype=dt)),
                     False)
    return lambda v: _quiet_call(run, v)    # (inf - inf: NaN, silently as in JAX)


_PLANNERS = {
    "sum": lambda dt: _ordered_plan(dt, False),
    "prod": lambda dt: _ordered_plan(dt, True),
    "max": _extremum_plan(np.maximum, True),
    "min": _extremum_plan(np.minimum, False),
    "argmax": _arg_plan(np.ndarray.argmax),    # (the methods: numpy's functions' cheaper core)
    "argmin": _arg_plan(np.ndarray.argmin),
    "all": _logical_plan(np.ndarray.all),
    "any": _logical_plan(np.ndarray.any),
    "mean": _mean_plan,
    "var": _var_plan,
}
_plans = {}     # (name, dtype, x64) -> run(value) -> Array or None, or False: the general path


def whole_reduction(name, a):
    """``jnp.<name>(a)`` over every axis with default arguments, or None (the general path).
    ``a`` must be checked to be an Array by the caller."""
    if not _trace_state.idle:
        return None
    v = a._value
    key = (name, v.dtype, config.jax_enable_x64)
    run = _plans.get(key, _MISSING)
    if run is _MISSING:
        run = _plans[key] = _plan(name, v.dtype)
    return run(v) if run else None


def _plan(name, dt):
    if dt.kind not in _NUMPY_KINDS:
        return False
    return _PLANNERS[name](dt) or False


# ---------------------------------------------------------------- where

_where_plans = {}   # (x's and y's (dtype, weak), x64) -> (dtype, weak) or False
_WHERE_PLANS_MAX = 1024


def _operand(o):
    """(dtype-and-weak key, value) of a select operand, or None: Arrays and Python floats and
    ints (the latter's overflow checks, and bools' promotion, are left to the general path)."""
    t = type(o)
    if t is Array:
        return (o._value.dtype, o.weak_type), o._value
    if t is float:
        return (dtypes.default_float_dtype(), True), o
    if t is int:
        return (dtypes.default_int_dtype(), True), o
    return None


def _where_plan(xk, yk):
    dt, weak = dtypes.promote(xk, yk)
    return (dt, weak) if dt.kind in _NUMPY_KINDS else False


def _as_operand(value, dt):
    if type(value) is np.ndarray:
        return value if value.dtype == dt else value.astype(dt)
    if type(value) is int and (not _fits(value, dtypes.default_int_dtype()) or (
            dt.kind in "iu" and not _fits(value, dt))):
        return None      # (JAX raises OverflowError, or wraps: the general path)
    return _quiet_call(np.asarray, value, dt)    # (1e300 as float32: inf, silently as in JAX)


def _fits(value, dt):
    info = np.iinfo(dt)
    return info.min <= value <= info.max


def where(condition, x, y):
    """``jnp.where(condition, x, y)`` for a bool Array condition and Array or Python float/int
    operands of one shape with it (or 0-d), or None (the general path)."""
    if not _trace_state.idle:
        return None
    cv = condition._value
    if cv.dtype != _BOOL:
        return None
    xo, yo = _operand(x), _operand(y)
    if xo is None or yo is None:
        return None
    key = (xo[0], yo[0], config.jax_enable_x64)
    plan = _where_plans.get(key)
    if plan is None:
        if len(_where_plans) >= _WHERE_PLANS_MAX:
            _where_plans.clear()
        plan = _where_plans[key] = _where_plan(xo[0], yo[0])
    if not plan:
        return None
    dt, weak = plan
    xv, yv = _as_operand(xo[1], dt), _as_operand(yo[1], dt)
    if xv is None or yv is None:
        return None
    shape = cv.shape
    # (no broadcasting but from 0-d: the general path checks rank promotion and raises JAX's
    # errors for shapes that do not broadcast)
    if (xv.shape != shape and xv.ndim) or (yv.shape != shape and yv.ndim) or (not cv.ndim and (xv.ndim or yv.ndim)):
        return None
    return Array(np.where(cv, xv, yv), weak)


# ---------------------------------------------------------------- dot of two vectors

def dot_vectors(a, b):
    """``jnp.dot(a, b)`` of two float32 (or two float64) Arrays of one length, as the eager
    rule of dot_general computes it, or None (the general path)."""
    if not _trace_state.idle:
        return None
    av, bv = a._value, b._value
    dt = av.dtype
    if av.ndim != 1 or bv.ndim != 1 or bv.dtype != dt or av.shape != bv.shape or not av.size or (
            dt != _F32 and dt != _F64):
        return None
    out = _quiet_call(_matmul_vectors, av, bv)
    return Array(out, a.weak_type and b.weak_type)


def _matmul_vectors(av, bv):
    # dot_general's eager rule (lax/linalg.py: dot_general_numpy) computes (1, 1, n) @ (1, n, 1),
    # which numpy's matmul hands to the same BLAS dot as np.dot of the vectors; XLA's sums
    # start from +0, so a zero result is +0.
    out = np.dot(av, bv)
    if not out:     # (-0 + +0 is +0: what the rule's ``out += 0`` does, cheaper on one value)
        return np.zeros((), av.dtype)
    return np.asarray(out)


# ---------------------------------------------------------------- integer powers, logical pairs

_INT_POW_DTYPES = frozenset(map(np.dtype, (np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
                                           np.uint8, np.uint16, np.uint32, np.uint64)))


def integer_pow(x, y):
    """``x ** y`` for an Array ``x`` and a Python int ``y``: integer_pow's eager rule, skipping
    jnp's promotion, the bind and the type rule, else None (bool and narrow-float bases,
    integers' negative powers: the general path). ``x ** 2`` is one multiplication: numpy's,
    exactly rounded, as the rule's."""
    v = x._value
    if not _trace_state.idle or v.dtype not in _INT_POW_DTYPES or (y < 0 and v.dtype.kind != "f"):
        return None
    if y == 2:
        out = _quiet_call(np.multiply, v, v)     # (overflow to inf: silently, as in JAX)
        return Array(out if type(out) is np.ndarray else np.asarray(out), x.weak_type)
    return _integer_pow_impl(x, y=y)


def logical_pair(bitwise, slow):
    """jnp.logical_and/or/xor: for two bool Arrays the bitwise function (its short path; no
    conversion to bool needed), anything else the general path ``slow``."""
    def fn(x, y, /):
        if type(x) is Array and type(y) is Array and x._value.dtype == _BOOL and y._value.dtype == _BOOL:
            return bitwise(x, y)
        return slow(x, y)
    fn.__name__, fn.__qualname__, fn.__doc__ = slow.__name__, slow.__qualname__, slow.__doc__
    return fn

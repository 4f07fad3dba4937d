"""Tracing core: abstract values, primitives, traces and tracers.

A *primitive* is only a name; what it means lives in tables keyed by it:
``impl_rules`` (eager evaluation on numpy), ``abstract_eval_rules`` (output
shape/dtype/weak type) here, and one table per transformation in
``numjax/interpreters/``. ``Primitive.bind`` routes an application to the
innermost active trace, as in JAX: a stack of traces (one per nested
transformation) plus an optional *dynamic* trace (``jit``/``make_jaxpr``)
that stages out every operation, even ones on constants. Each thread has its own
stack (``trace_state``), so threads trace and transform independently.
"""
import contextlib
import threading

import numpy as np

from . import dtypes
from .errors import (out_of_memory, ConcretizationTypeError, TracerArrayConversionError, TracerBoolConversionError,
                     TracerIntegerConversionError)


# ---------------------------------------------------------------- abstract values

class ShapedArray:
    __slots__ = ("shape", "dtype", "weak_type", "_sharding")
    array_abstraction_level = 1

    def __init__(self, shape, dtype, weak_type=False, sharding=None):
        self.shape = shape if type(shape) is tuple else tuple(int(d) for d in shape)
        self.dtype = dtype if type(dtype) is np.dtype else np.dtype(dtype)
        self.weak_type = bool(weak_type)
        # JAX's sharding in types: a NamedSharding over an AbstractMesh whose spec (one entry
        # per dimension) names Explicit mesh axes only (numjax/sharding_types.py); None for
        # every value that carries none, the common case, which then costs nothing.
        self._sharding = sharding

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __eq__(self, other):
        return (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and self._sharding == other._sharding)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type, self._sharding))

    def update(self, shape=None, dtype=None, weak_type=None, sharding=None):
        # A sharding stays with an unchanged shape, as JAX's update keeps it.
        if sharding is None and (shape is None or tuple(shape) == self.shape):
            sharding = self._sharding
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type, sharding)

    def to_tangent_aval(self):
        # Integer and bool values have float0 tangents in JAX; numjax's are float32 (as ad's).
        dtype = self.dtype if self.dtype.kind in "fc" else np.dtype(np.float32)
        return ShapedArray(self.shape, dtype, self.weak_type, self._sharding)

    @property
    def sharding(self):
        if self._sharding is not None:
            return self._sharding
        # As jax.typeof(x).sharding of an unsharded value: replicated over the current mesh.
        from .sharding import replicated_sharding
        return replicated_sharding(len(self.shape))

    def str_short(self, short_dtypes=False):
        dt = dtypes.short_name(self.dtype) if short_dtypes else self.dtype.name
        if self._sharding is None:
            return f"{dt}[{','.join(map(str, self.shape))}]"
        from .sharding_types import shape_text
        return f"{dt}[{shape_text(self.shape, self._sharding.spec)}]"

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"

    def __str__(self):
        return ("~" if self.weak_type else "") + self.str_short()


def get_aval(x):
    """Abstract value of a tracer, Array, numpy array or Python scalar."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    if type(x) in (int, float, complex):
        return ShapedArray((), dtypes.python_scalar_dtype(x), True)
    if type(x) is bool:
        return ShapedArray((), dtypes.bool_, False)
    if isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(np.shape(x), dtypes.canonicalize_dtype(x.dtype), False)
    raise TypeError(f"Value {x!r} of type {type(x)} is not a valid JAX type")


# ---------------------------------------------------------------- primitives

class sharding_hooks:
    """JAX's sharding in types, installed by numjax/sharding_types.py when the first value with
    an Explicit-axes sharding is made (until then both are None and cost one read):
    ``typed(prim, avals, out, params)`` gives abstract evaluation's outputs their shardings;
    ``eager(prim, impl, args, params)`` evaluates an op and places its results so."""
    typed = None
    eager = None


impl_rules = {}
abstract_eval_rules = {}


def evaluate(prim, impl, args, params):
    """``prim`` applied now by its eager rule ``impl`` (placed by the sharding hook when one is
    installed); a failed allocation raises JAX's RESOURCE_EXHAUSTED error."""
    try:
        if sharding_hooks.eager is None:
            return impl(*args, **params)
        return sharding_hooks.eager(prim, impl, args, params)
    except MemoryError as err:
        raise out_of_memory(err) from None


class Primitive:
    multiple_results = False
    # Planning properties (see lax._base.make_primitive); a primitive defined outside numjax
    # has none of them.
    elementwise, reduction, is_load = False, None, False
    # True for the primitives numjax defines (lax._base.make_primitive); a Primitive made
    # directly, as libraries do through jax.extend.core, is someone else's: when the backend
    # has no rule for it, jit calls its impl from the compiled program (interpreters/mlir.py).
    defined_by_numjax = False

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name

    def bind(self, *args, **params):
        if trace_state.idle:
            try:
                impl = impl_rules[self]
            except KeyError:
                raise NotImplementedError(f"Evaluation rule for '{self.name}' not implemented") from None
            return evaluate(self, impl, args, params)
        trace = find_top_trace(args)
        tracers = [trace.full_raise(a) for a in args]
        outs = trace.process_primitive(self, tracers, params)
        if self.multiple_results:
            return [full_lower(o) for o in outs]
        return full_lower(outs)

    def abstract_eval(self, *avals, **params):
        try:
            rule = abstract_eval_rules[self]
        except KeyError:
            raise NotImplementedError(f"Abstract evaluation for '{self.name}' not implemented") from None
        if sharding_hooks.typed is None:
            return rule(*avals, **params)
        return sharding_hooks.typed(self, avals, rule(*avals, **params), params)

    # JAX's way of defining a primitive from outside (jax.extend.core.Primitive): the rules
    # go to the same tables as numjax's own primitives'.
    def def_impl(self, impl):
        impl_rules[self] = impl
        return impl

    def def_abstract_eval(self, rule):
        abstract_eval_rules[self] = rule
        return rule

    def def_effectful_abstract_eval(self, rule):
        # The rule returns (avals, effects); numjax tracks no effects, so it keeps the avals.
        abstract_eval_rules[self] = lambda *avals, **params: rule(*avals, **params)[0]
        return rule

    impl = property(lambda self: impl_rules[self])


# ---------------------------------------------------------------- traces

class MainTrace:
    def __init__(self, level, trace_type, global_data=None):
        self.level, self.trace_type, self.global_data = level, trace_type, global_data

    def __repr__(self):
        return f"MainTrace({self.level}, {self.trace_type.__name__})"


class Trace:
    def __init__(self, main):
        self.main = main

    def full_raise(self, val):
        if not isinstance(val, Tracer):
            return self.pure(val)
        if val._trace.main is self.main:
            return val
        if val._trace.main.level < self.main.level:
            return self.lift(val)
        raise ValueError(f"Escaped tracer {val} reached a transformation that does not own it. "
                         "This is usually a side effect that stores a traced value outside the "
                         "transformed function (jax.errors.UnexpectedTracerError).")

    def pure(self, val):
        raise NotImplementedError

    lift = pure

    def process_primitive(self, primitive, tracers, params):
        raise NotImplementedError


class EvalTrace(Trace):
    pure = lift = lambda self, x: x

    def process_primitive(self, primitive, tracers, params):
        return evaluate(primitive, impl_rules[primitive], tracers, params)


_EVAL_MAIN = MainTrace(0, EvalTrace)   # the bottom of every thread's stack: evaluate now


class _TraceState(threading.local):
    """One thread's transformations: what it traces is invisible to every other thread.

    ``stack``: the active traces, innermost last. ``dynamic``: the bottom-most trace that
    must see every op (jit/make_jaxpr staging). ``idle``: neither is active, so an op runs
    eagerly; kept as a flag because eager dispatch reads it on every op."""

    def __init__(self):
        self.stack = [_EVAL_MAIN]
        self.dynamic = _EVAL_MAIN
        self.idle = True


trace_state = _TraceState()


def current_trace_stack():
    """This thread's active traces, innermost last (read-only for callers)."""
    return trace_state.stack


def _no_trace_active():
    return trace_state.idle


def _set_dynamic(state, dynamic):
    state.dynamic = dynamic
    state.idle = dynamic is _EVAL_MAIN and len(state.stack) == 1


@contextlib.contextmanager
def new_main(trace_type, global_data=None, dynamic=False):
    state = trace_state
    stack = state.stack
    main = MainTrace(len(stack), trace_type, global_data)
    stack.append(main)
    prev_dynamic = state.dynamic
    _set_dynamic(state, main if dynamic else prev_dynamic)
    try:
        yield main
    finally:
        stack.pop()
        _set_dynamic(state, prev_dynamic)


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Operations on known values run now, even while jit stages the function around them
    (JAX's ``jax.ensure_compile_time_eval``); operations on tracers are still staged."""
    state = trace_state
    prev_dynamic = state.dynamic
    _set_dynamic(state, _EVAL_MAIN)
    try:
        yield
    finally:
        _set_dynamic(state, prev_dynamic)


eval_context = ensure_compile_time_eval


def find_top_trace(xs):
    top = trace_state.dynamic
    for x in xs:
        if isinstance(x, Tracer) and x._trace.main.level > top.level:
            top = x._trace.main
    return top.trace_type(top)


def full_lower(val):
    return val.full_lower() if isinstance(val, Tracer) else val


# ---------------------------------------------------------------- tracers

class Tracer:
    """A stand-in for an array while a function is being transformed.

    Operators dispatch to ``numjax.numpy`` (installed by that module), so the
    same user code runs on Arrays and Tracers.
    """
    __array_priority__ = 1000
    __slots__ = ("_trace",)

    aval = property(lambda self: raise_not_implemented())
    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def full_lower(self):
        return self

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def _concrete_value(self):
        """The value behind this tracer when it is known now (differentiation outside jit)."""
        return None

    def __bool__(self):
        v = self._concrete_value()
        if v is None:
            raise TracerBoolConversionError(self)
        return bool(v)

    def __int__(self):
        v = self._concrete_value()
        if v is None:
            raise ConcretizationTypeError(self, _conversion_hint("int"))
        return int(v)

    def __float__(self):
        v = self._concrete_value()
        if v is None:
            raise ConcretizationTypeError(self, _conversion_hint("float"))
        return float(v)

    def __complex__(self):
        v = self._concrete_value()
        if v is None:
            raise ConcretizationTypeError(self, _conversion_hint("complex"))
        return complex(v)

    def __index__(self):
        v = self._concrete_value()
        if v is None:
            raise TracerIntegerConversionError(self)
        return v.__index__()

    def __array__(self, dtype=None, copy=None):
        v = self._concrete_value()
        if v is None:
            raise TracerArrayConversionError(self)
        return np.asarray(v, dtype=dtype)

    def __setitem__(self, idx, val):
        raise TypeError(IMMUTABLE_MESSAGE.format(type(self).__name__))

    def _short_repr(self):
        # JAX's tracers print as ``Kind(details)``; each tracer kind overrides the details.
        return f"{type(self).__name__}({aval_str(self.aval)})"

    def __repr__(self):
        return self._short_repr()

    __str__ = __repr__


def aval_str(aval):
    """An abstract value as JAX's tracers print it: ``~float32[3]`` (``~`` marks a weak type)."""
    return ("~" if aval.weak_type else "") + aval.str_short()


def value_str(x):
    """A tracer's payload as JAX's tracers print it: tracers by their short form, values by str()."""
    return x._short_repr() if isinstance(x, Tracer) else str(x)


def raise_not_implemented():
    raise NotImplementedError


def _conversion_hint(fn):
    return (f"The problem arose with the `{fn}` function. If trying to convert the data type of a "
            f"value, try using `x.astype({fn})` or `jnp.array(x, {fn})` instead.")


IMMUTABLE_MESSAGE = (
    "JAX arrays are immutable and do not support in-place item assignment. Instead of "
    "x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
    "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")


def __getattr__(name):
    # jax.core's jaxpr names; numjax keeps them in numjax.jaxpr, which imports this module.
    if name in ("eval_jaxpr", "Atom"):
        from . import jaxpr
        return jaxpr.eval_jaxpr if name == "eval_jaxpr" else jaxpr.Var | jaxpr.Literal
    if name == "AbstractValue":
        return ShapedArray
    raise AttributeError(f"module 'numjax.core' has no attribute {name!r}")

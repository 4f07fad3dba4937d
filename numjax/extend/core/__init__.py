"""``jax.extend.core``: primitives and jaxprs. Every name is numjax's own object: a
``Primitive`` made here is staged, differentiated, batched and compiled like numjax's."""
import weakref

import numpy as np

from ... import core as _core
from ...core import Primitive, ShapedArray, find_top_trace  # noqa: F401
from ...jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, eval_jaxpr  # noqa: F401


# ---------------------------------------------------------------- effects
# numjax tracks no effects: every primitive is pure and these are empty markers.

class Effect:
    pass


Effects = frozenset
no_effects = frozenset()


# ---------------------------------------------------------------- jaxprs

def jaxpr_as_fun(closed_jaxpr, *args):
    """``closed_jaxpr`` as a function of its inputs (a list of its outputs)."""
    fun = lambda *xs: eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *xs)   # noqa: E731
    return fun(*args) if args else fun


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=no_effects, source_info=None, ctx=None):
    return JaxprEqn(primitive, list(invars), list(outvars), dict(params))


def jaxprs_in_params(params):
    """The jaxprs (Jaxpr, not ClosedJaxpr) held in an equation's params."""
    from ...jaxpr import sub_jaxprs
    return list(sub_jaxprs(params))


def subjaxprs(jaxpr):
    """The jaxprs of ``jaxpr``'s equations' params, outermost first."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


# ---------------------------------------------------------------- abstract values

def mapped_aval(size, axis, aval):
    """``aval`` without its mapped axis ``axis`` (of size ``size``)."""
    if axis is None:
        return aval
    if aval.shape[axis] != size:
        raise ValueError(f"mapped axis {axis} of {aval.str_short()} is not of size {size}")
    return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1:])


def unmapped_aval(size, axis, aval, explicit_mesh_axis=None):
    """``aval`` with an axis of size ``size`` inserted at ``axis``."""
    if axis is None:
        return aval
    return aval.update(shape=aval.shape[:axis] + (size,) + aval.shape[axis:])


def primal_dtype_to_tangent_dtype(dtype):
    return ShapedArray((), dtype).to_tangent_aval().dtype


def valid_jaxtype(x):
    try:
        _core.get_aval(x)
    except TypeError:
        return False
    return True


array_types = frozenset([np.ndarray] + [type(np.dtype(c).type(0)) for c in "?bhilqBHILQefdFD"])


def concrete_or_error(force, val, context=""):
    """``force(val)`` when ``val``'s value is known now; JAX's ConcretizationTypeError otherwise."""
    from ...errors import ConcretizationTypeError
    force = force or (lambda x: x)
    if isinstance(val, _core.Tracer):
        known = val._concrete_value()
        if known is None:
            raise ConcretizationTypeError(val, context)
        return force(known)
    return force(val)


# ---------------------------------------------------------------- trace state

class OpaqueTraceState:
    """Which transformation is innermost now: equal for two calls under the same one."""

    def __init__(self, main):
        self._main_ref = weakref.ref(main)

    def __eq__(self, other):
        return isinstance(other, OpaqueTraceState) and self._main_ref() is other._main_ref()

    def __hash__(self):
        return id(self._main_ref())


def get_opaque_trace_state(convention=None):
    # The innermost transformation is the last one pushed (jit's staging included).
    return OpaqueTraceState(_core.current_trace_stack()[-1])


def __getattr__(name):
    # Imported on first use: it imports every lax family to list their primitives.
    if name == "primitives":
        import importlib
        return importlib.import_module(f"{__name__}.primitives")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

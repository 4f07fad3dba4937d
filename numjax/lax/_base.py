"""Helpers shared by the primitive family files: defining primitives and their standard rules."""
import numpy as np

from .. import core, dtypes
from ..array import Array, to_numpy, wrap


def make_primitive(name, impl, abstract_eval, multiple_results=False, *,
                   elementwise=False, reduction=None, is_load=False):
    """A primitive with its eager and abstract rules, and the properties a lowering plans by:

    ``elementwise``: each output element depends only on the same element of each operand
    (rank-0 operands broadcast), so it fuses into a loop over the output;
    ``reduction``: the monoid ("sum", "max", "min", "prod", "and", "or", "argmax",
    "argmin") of a reduction over ``params["axes"]``, or None;
    ``is_load``: its output is an index map of its operands (a broadcast, an iota), read
    inside the loop of its consumer rather than materialized.
    """
    prim = core.Primitive(name)
    prim.multiple_results = multiple_results
    prim.elementwise, prim.reduction, prim.is_load = elementwise, reduction, is_load
    prim.defined_by_numjax = True
    core.impl_rules[prim] = impl
    core.abstract_eval_rules[prim] = abstract_eval
    return prim


def check_eagerly(*prims):
    """Eager applications of these primitives run their abstract-eval rule before the numpy
    implementation, as JAX type-checks every op: eager errors are then JAX's (``add got
    incompatible shapes for broadcasting``) rather than numpy's.  Signatures that passed
    are remembered with the implementation they run (``eager_variants`` may pick another one
    for a signature, once), so a repeated eager op pays one dict lookup."""
    for prim in prims:
        impl, rule = core.impl_rules[prim], core.abstract_eval_rules[prim]
        if getattr(impl, "_checked", False):
            continue

        def checked(*args, _impl=impl, _rule=rule, _prim=prim, **params):
            try:
                key = (_prim, tuple([_sig(a) for a in args]), tuple(params.items()))
                fn = _CHECKED.get(key)
            except (TypeError, AttributeError):   # unhashable params, or an operand without a cheap key
                key, fn = None, None
            if fn is None:
                _rule(*[core.get_aval(a) for a in args], **params)
                fn = _eager_variant(_prim, _impl, args, params)
                if key is not None:
                    if len(_CHECKED) > 100_000:
                        _CHECKED.clear()
                    _CHECKED[key] = fn
            return fn(*args, **params)
        checked._checked = True
        checked._unchecked = impl     # (for eager paths that checked a dtype once: eager_kernels)
        core.impl_rules[prim] = checked


_CHECKED = {}         # (primitive, operand signatures, params) -> the implementation to run

# Hooks ``(prim, impl, args, params) -> another implementation or None``, asked once per eager
# signature (lax/low_precision.py computes bfloat16/float8 operands in float32 this way).
eager_variants = []


def _eager_variant(prim, impl, args, params):
    for choose in eager_variants:
        alt = choose(prim, impl, args, params)
        if alt is not None:
            return alt
    return impl

_SCALARS = (int, float, complex, bool)


def _sig(a):
    t = type(a)
    if t is Array:
        return a._value.shape, a._value.dtype
    if t in _SCALARS:
        return t
    raise TypeError   # anything else is checked every time


def broadcast_shapes(name, *shapes):
    """lax's implicit broadcasting: rank-0 operands broadcast; equal ranks broadcast size-1 dims."""
    ranked = [s for s in shapes if len(s)]
    if not ranked:
        return ()
    rank = len(ranked[0])
    if any(len(s) != rank for s in ranked):
        raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                        f"{', '.join(map(str, shapes))}.")
    out = []
    for dims in zip(*ranked):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(map(str, shapes))}.")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def check_same_dtypes(name, avals):
    dts = {a.dtype for a in avals}
    if len(dts) > 1:
        listed = ", ".join(a.dtype.name for a in avals)
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got {listed}. "
                        f"(Tip: jnp.{name} is a similar function that does automatic type promotion "
                        "on inputs).")


def check_dtype_kind(name, aval, kinds, accepted):
    if dtypes.kind(aval.dtype) not in kinds:
        raise TypeError(f"{name} does not accept dtype {aval.dtype.name}. Accepted dtypes are "
                        f"subtypes of {accepted}.")


def all_weak(avals):
    return all(a.weak_type for a in avals)


def eager_weak(args):
    """Weak type of an eager n-ary elementwise result: weak only if every operand is."""
    for a in args:
        if not getattr(a, "weak_type", type(a) in (int, float, complex)):
            return False
    return True


def eager_result(value, dtype, weak):
    value = np.asarray(value)
    if value.dtype != dtype:
        value = value.astype(dtype)
    return Array(value, weak)


def coerce_scalars(args):
    """Python scalars given to a lax function take the dtype of the array operands (lax rules)."""
    typed = [a for a in args if type(a) not in (int, float, complex, bool)]
    if len(typed) == len(args):
        return args
    dtype = core.get_aval(typed[0]).dtype if typed else None
    out = []
    for a in args:
        if type(a) in (int, float, complex, bool):
            dt = dtype if dtype is not None else dtypes.python_scalar_dtype(a)
            a = Array(np.asarray(a, dtype=dt), type(a) is not bool)
        out.append(a)
    return out


__all__ = ["make_primitive", "broadcast_shapes", "check_same_dtypes", "check_dtype_kind",
           "all_weak", "eager_weak", "eager_result", "coerce_scalars", "Array", "to_numpy", "wrap"]

"""bfloat16 and the 8-bit floats: computed in float32, every result rounded back.

XLA's CPU backend has no bfloat16 (or float8) arithmetic: it widens each operand to
float32, computes, and rounds the result to the narrow type (round to nearest even), one
operation at a time. numjax does the same, eagerly here (``install_eager_rules`` wraps the
numpy implementations) and under ``jit`` in the lowering's storage rewrite, both driven by
the classification below so that eager and compiled results agree bit for bit.

Primitives fall in three groups:

* *storage* primitives only move values (reshape, slice, gather, select, ...): they act on a
  narrow value as on its bits and need no float32 detour;
* *higher-order* primitives (jit, cond, while, scan, custom derivative calls) hold jaxprs
  whose own equations follow these rules;
* everything else *computes*: narrow operands are widened to float32, a narrow ``dtype``
  parameter (``iota``'s, ``dot_general``'s ``preferred_element_type``, the target of
  ``convert_element_type``) becomes float32, and each output the primitive gives in a narrow
  dtype is rounded to it.
"""
import numpy as np

from .. import core, dtypes
from ..array import Array, to_numpy

STORAGE_PRIMITIVE_NAMES = frozenset({
    "broadcast_in_dim", "reshape", "transpose", "squeeze", "rev", "concatenate", "pad", "slice",
    "dynamic_slice", "dynamic_update_slice", "gather", "scatter", "select_n", "stop_gradient",
    "all_gather", "ppermute", "copy", "copy_p", "bitcast_convert_type"})
HIGHER_ORDER_PRIMITIVE_NAMES = frozenset({
    "jit", "cond", "while", "scan", "custom_jvp_call", "custom_vjp_call", "custom_lin", "remat_lin"})

COMPUTE_DTYPE = dtypes.float32
_LOW = dtypes.low_precision_floats
_LOW_DTYPE_CLASSES = frozenset(type(d) for d in _LOW)


def computes(prim):
    """Whether ``prim`` computes (widen, compute, round) rather than moves or calls."""
    return prim.name not in STORAGE_PRIMITIVE_NAMES and prim.name not in HIGHER_ORDER_PRIMITIVE_NAMES


def is_low(dtype):
    return dtype in _LOW


def widen_params(params):
    """``params`` with every narrow float dtype replaced by float32 (None when there is none).
    On every eager op's path: a plain loop testing each value's class (each dtype has its own
    class), no dict built unless something changes."""
    changed = None
    for k, v in params.items():
        if type(v) in _LOW_DTYPE_CLASSES:
            if changed is None:
                changed = dict(params)
            changed[k] = COMPUTE_DTYPE
    return changed


def _logistic_expansion(x):
    from . import elementwise as ew
    one = Array(np.ones((), core.get_aval(x).dtype))
    return ew.div_p.bind(one, ew.add_p.bind(one, ew.exp_p.bind(ew.neg_p.bind(x))))


# Primitives XLA rewrites into simpler ones before it widens the narrow types, so that each
# step of the rewrite rounds: name -> the same rewrite written with primitives.
EXPANSIONS = {"logistic": _logistic_expansion}


def _eager_in_float32(prim, impl):
    expansion = EXPANSIONS.get(prim.name)

    def impl_low_precision(*args, **params):
        for a in args:   # Arrays, and the numpy scalars of literals run op by op
            if getattr(a, "dtype", None) in _LOW:
                break
        else:
            wide_params = widen_params(params) if params else None
            if wide_params is None:
                return impl(*args, **params)
        if expansion is not None:
            return expansion(*args, **params)
        return _widen_apply_round(prim, impl, args, params)
    impl_low_precision._low_precision = True
    impl_low_precision.__wrapped__ = impl
    return impl_low_precision


def _widen_apply_round(prim, impl, args, params):
    out_avals = core.abstract_eval_rules[prim](*[core.get_aval(a) for a in args], **params)
    wide_args = [Array(np.asarray(to_numpy(a)).astype(COMPUTE_DTYPE), getattr(a, "weak_type", False))
                 if getattr(a, "dtype", None) in _LOW else a for a in args]
    outs = impl(*wide_args, **(widen_params(params) or params))
    if not prim.multiple_results:
        return _round_to(outs, out_avals.dtype)
    return [_round_to(o, a.dtype) for o, a in zip(outs, out_avals)]


def _round_to(out, dtype):
    if dtype not in _LOW:
        return out
    with np.errstate(all="ignore"):   # float32 -> float8 overflows to inf/nan, as in XLA
        return Array(np.asarray(to_numpy(out)).astype(dtype), getattr(out, "weak_type", False))


_low_impls = {}      # primitive -> its float32-and-round eager implementation


def _choose_low_precision(prim, impl, args, params):
    """For ``_base.check_eagerly``'s primitives: asked once per eager signature, so an op on
    ordinary dtypes pays nothing for bfloat16's existence."""
    if not computes(prim):
        return None
    if all(getattr(a, "dtype", None) not in _LOW for a in args) and widen_params(params) is None:
        return None
    low = _low_impls.get(prim)
    if low is None:
        low = _low_impls[prim] = _eager_in_float32(prim, impl)
    return low


def install_eager_rules():
    """Narrow operands of eager computing primitives compute in float32 (idempotent): the
    type-checked primitives choose so once per signature (``_base.eager_variants``), the
    others' eager rules are wrapped."""
    from . import _base
    if _choose_low_precision not in _base.eager_variants:
        _base.eager_variants.append(_choose_low_precision)
    for prim, impl in list(core.impl_rules.items()):
        if (computes(prim) and not getattr(impl, "_low_precision", False)
                and not getattr(impl, "_checked", False)):
            core.impl_rules[prim] = _eager_in_float32(prim, impl)

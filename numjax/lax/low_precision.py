"""bfloat16, the 8- and 4-bit floats and the sub-byte ints: computed wide, every result narrowed.

XLA's CPU backend has no bfloat16 (or float8) arithmetic: it widens each operand to
float32, computes, and rounds the result to the narrow type (round to nearest even), one
operation at a time. The sub-byte ints (int4, uint4, int2, uint2) work the same way with
32-bit integers: arithmetic modulo 2**bits is arithmetic modulo 2**32 wrapped on store.
numjax does this eagerly here (``install_eager_rules`` wraps the numpy implementations) and
under ``jit`` in the lowering's storage rewrite, both driven by the classification below so
that eager and compiled results agree bit for bit.

Primitives fall in three groups:

* *storage* primitives only move values (reshape, slice, gather, select, ...): they act on a
  narrow value as on its bits and need no float32 detour;
* *higher-order* primitives (jit, cond, while, scan, custom derivative calls) hold jaxprs
  whose own equations follow these rules;
* everything else *computes*: narrow operands are widened to float32 (the ints to int32 or
  uint32), a narrow ``dtype`` parameter (``iota``'s, ``dot_general``'s
  ``preferred_element_type``, the target of ``convert_element_type``) becomes that type, and
  each output the primitive gives in a narrow dtype is rounded to it (an int4 result wraps to
  its 4 bits; a computed float8 rounds to half precision first, ``HALF_ROUTED``).

A few operations see more of an integer than its value modulo 2**bits (a logical right shift
of a negative int4, an arithmetic one of a uint4, a float converted to int4, which saturates
at int4's bounds): ``expansion_for`` gives them as other primitives, for both paths.
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
# narrow int dtype -> the 32-bit type it computes in (its signedness kept)
NARROW_INTS = {dtypes.int4: dtypes.int32, dtypes.int2: dtypes.int32,
               dtypes.uint4: dtypes.uint32, dtypes.uint2: dtypes.uint32}
COMPUTE_DTYPES = {**{d: COMPUTE_DTYPE for d in dtypes.low_precision_floats}, **NARROW_INTS}
_LOW = frozenset(COMPUTE_DTYPES)
# XLA's CPU backend computes the 8- and 4-bit floats (but e8m0, whose range half precision
# lacks) as float16, itself computed in float32 with each result rounded to half: a computed
# result rounds twice, to half and then to the format. A conversion rounds once.
HALF_ROUTED = dtypes.float8_dtypes - {dtypes.float8_e8m0fnu}
_LOW_DTYPE_CLASSES = frozenset(type(d) for d in _LOW)


def computes(prim):
    """Whether ``prim`` computes (widen, compute, round) rather than moves or calls."""
    return prim.name not in STORAGE_PRIMITIVE_NAMES and prim.name not in HIGHER_ORDER_PRIMITIVE_NAMES


def is_low(dtype):
    """Whether ``dtype`` is computed in a wider type (bfloat16, the float8s, float4, int4, ...)."""
    return dtype in _LOW


def int_bits(dtype):
    """Width in bits of a narrow int dtype."""
    return dtypes.itemsize_bits(dtype)


def widen_params(params):
    """``params`` with every narrow dtype replaced by the type it computes in (None when there
    is none). On every eager op's path: a plain loop testing each value's class (each dtype
    has its own class), no dict built unless something changes."""
    changed = None
    for k, v in params.items():
        if type(v) in _LOW_DTYPE_CLASSES:
            if changed is None:
                changed = dict(params)
            changed[k] = COMPUTE_DTYPES[v]
    return changed


# ---------------------------------------------------------------- expansions

def _const(value, dtype):
    return Array(np.asarray(value, dtype))   # a scalar: a literal when traced


def _convert(x, dtype, weak_type=False):
    from . import elementwise as ew
    return ew.convert_element_type_p.bind(x, new_dtype=np.dtype(dtype), weak_type=weak_type, sharding=None)


def _logistic_expansion(x):
    # XLA rewrites logistic into these steps before it widens, so each step rounds.
    from . import elementwise as ew
    one = _const(1, core.get_aval(x).dtype)
    return ew.div_p.bind(one, ew.add_p.bind(one, ew.exp_p.bind(ew.neg_p.bind(x))))


def _float_to_narrow_int(x, *, new_dtype, weak_type=False, sharding=None):
    """A float converted to int4 (uint4, ...) saturates at its bounds and NaN gives 0, as any
    float-to-int conversion in XLA; converting to 32 bits first and wrapping would not."""
    from . import elementwise as ew
    src = core.get_aval(x).dtype
    if src in _LOW:   # a narrow float is exact in float32, its bounds may not be in it
        x, src = _convert(x, COMPUTE_DTYPE), COMPUTE_DTYPE
    info = dtypes.iinfo(new_dtype)
    clamped = ew.clamp_p.bind(_const(info.min, src), x, _const(info.max, src))
    return _convert(_convert(clamped, COMPUTE_DTYPES[new_dtype]), new_dtype, weak_type)


def _exp2_expansion(x):
    # XLA's exp2, exp(ln 2 * x): the constant and the product round to the narrow type first.
    from . import elementwise as ew
    return ew.exp_p.bind(ew.mul_p.bind(_const(np.log(2), core.get_aval(x).dtype), x))


def _bit_count_narrow(prim):
    """population_count / clz of a narrow int, in 32 bits: clz of its own bits (less the 28 or 30
    leading zeros the wider word adds).  population_count counts its own bits too, except that
    XLA's CPU backend counts an int4 in its int8 sign extension (-1 has 8 set bits, which wrap
    to -8), and JAX 0.10.2 gives that."""
    def expansion(x):
        from . import elementwise as ew
        dt = core.get_aval(x).dtype
        width = 8 if (prim.name == "population_count" and dt == dtypes.int4) else int_bits(dt)
        bits = ew.and_p.bind(_convert(x, dtypes.int32), _const((1 << width) - 1, dtypes.int32))
        out = prim.bind(bits)
        if prim.name == "clz":
            out = ew.sub_p.bind(out, _const(32 - int_bits(dt), dtypes.int32))
        return _convert(out, dt)
    return expansion


def _srl_signed_narrow(x, y):
    """Logical right shift of a signed narrow int: of its own bits, not of the 32-bit sign
    extension (a negative int4 shifted right by one is positive)."""
    from . import elementwise as ew
    dt = core.get_aval(x).dtype
    bits = ew.and_p.bind(_convert(x, dtypes.int32), _const((1 << int_bits(dt)) - 1, dtypes.int32))
    return _convert(ew.shift_right_logical_p.bind(bits, _convert(y, dtypes.int32)), dt)


def _sra_unsigned_narrow(x, y):
    """Arithmetic right shift of an unsigned narrow int: XLA fills with its top bit (a uint4
    8 shifted right by 3 is 15), so the 32-bit operand is the sign extension of its bits."""
    from . import elementwise as ew
    dt = core.get_aval(x).dtype
    pad = _const(32 - int_bits(dt), dtypes.int32)
    wide = ew.shift_right_arithmetic_p.bind(ew.shift_left_p.bind(_convert(x, dtypes.int32), pad), pad)
    return _convert(ew.shift_right_arithmetic_p.bind(wide, _convert(y, dtypes.int32)), dt)


def expansion_for(prim, in_dtypes, params):
    """The primitives computing ``prim`` on these operand types where widening, computing and
    narrowing would not give XLA's result (a function of the original operands), or None."""
    name = prim.name
    if name == "logistic" and (in_dtypes[0] in _LOW or in_dtypes[0] == dtypes.float16):
        return _logistic_expansion  # (float16 too: XLA expands it before widening)
    if name == "exp2" and (in_dtypes[0] in _LOW or in_dtypes[0] == dtypes.float16):
        return _exp2_expansion     # (float16 too: the compiled code widens it as well)
    if name == "convert_element_type":
        if params["new_dtype"] in NARROW_INTS and dtypes.kind(in_dtypes[0]) == "f":
            return _float_to_narrow_int
        return None
    dt = in_dtypes[0] if in_dtypes else None
    if name in ("population_count", "clz") and dt in NARROW_INTS:
        return _bit_count_narrow(prim)
    if name == "shift_right_logical" and NARROW_INTS.get(dt) == dtypes.int32:
        return _srl_signed_narrow
    if name == "shift_right_arithmetic" and NARROW_INTS.get(dt) == dtypes.uint32:
        return _sra_unsigned_narrow
    return None


# ---------------------------------------------------------------- eager

def _eager_widened(prim, impl):
    def impl_low_precision(*args, **params):
        for a in args:   # Arrays, and the numpy scalars of literals run op by op
            if getattr(a, "dtype", None) in _LOW:
                break
        else:
            wide_params = widen_params(params) if params else None
            if wide_params is None:
                return impl(*args, **params)
        expansion = expansion_for(prim, [getattr(a, "dtype", None) for a in args], params)
        if expansion is not None:
            return expansion(*args, **params)
        return _widen_apply_round(prim, impl, args, params)
    impl_low_precision._low_precision = True
    impl_low_precision.__wrapped__ = impl
    return impl_low_precision


def _widen_apply_round(prim, impl, args, params):
    out_avals = core.abstract_eval_rules[prim](*[core.get_aval(a) for a in args], **params)
    wide_args = [Array(np.asarray(to_numpy(a)).astype(COMPUTE_DTYPES[a.dtype]), getattr(a, "weak_type", False))
                 if getattr(a, "dtype", None) in _LOW else a for a in args]
    outs = impl(*wide_args, **(widen_params(params) or params))
    computed = prim.name != "convert_element_type"
    if not prim.multiple_results:
        return _round_to(outs, out_avals.dtype, computed)
    return [_round_to(o, a.dtype, computed) for o, a in zip(outs, out_avals)]


_F4_NAN_BITS = np.uint8(0x8)


def _round_to(out, dtype, computed):
    if dtype not in _LOW:
        return out
    wide = np.asarray(to_numpy(out))
    with np.errstate(all="ignore"):   # float32 -> float8 overflows to inf/nan, as in XLA
        if computed and dtype in HALF_ROUTED:
            wide = wide.astype(dtypes.float16)
        narrow = wide.astype(dtype)   # ml_dtypes: round to nearest even; ints wrap
    if dtype == dtypes.float4_e2m1fn:
        # float4 has no NaN: XLA gives it -0 whatever the NaN's sign (ml_dtypes: the sign flipped)
        narrow = np.where(np.isnan(wide), _F4_NAN_BITS, narrow.view(np.uint8)).astype(np.uint8).view(dtype)
    return Array(narrow, getattr(out, "weak_type", False))


_low_impls = {}      # primitive -> its widen-and-round eager implementation


def _choose_low_precision(prim, impl, args, params):
    """For ``_base.check_eagerly``'s primitives: asked once per eager signature, so an op on
    ordinary dtypes pays nothing for bfloat16's existence."""
    if not computes(prim):
        return None
    if all(getattr(a, "dtype", None) not in _LOW for a in args) and widen_params(params) is None:
        return None
    low = _low_impls.get(prim)
    if low is None:
        low = _low_impls[prim] = _eager_widened(prim, impl)
    return low


def install_eager_rules():
    """Narrow operands of eager computing primitives compute wide (idempotent): the
    type-checked primitives choose so once per signature (``_base.eager_variants``), the
    others' eager rules are wrapped."""
    from . import _base
    if _choose_low_precision not in _base.eager_variants:
        _base.eager_variants.append(_choose_low_precision)
    for prim, impl in list(core.impl_rules.items()):
        if (computes(prim) and not getattr(impl, "_low_precision", False)
                and not getattr(impl, "_checked", False)):
            core.impl_rules[prim] = _eager_widened(prim, impl)

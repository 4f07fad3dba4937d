"""The storage rewrite: a jaxpr with bfloat16 values becomes one without them, before lowering.

No backend computes in bfloat16. XLA's CPU backend widens each bfloat16 operand to float32,
computes, and rounds each result back (round to nearest even); this pass makes that explicit
so that every backend sees only the types it already compiles:

* a bfloat16 value is *stored* as its 16 bits, a uint16 array (program inputs and outputs
  are viewed as such: no copy);
* an equation that moves values (``numjax.lax.low_precision.STORAGE_PRIMITIVE_NAMES``) moves
  the bits as they are;
* an equation that computes reads each bfloat16 operand as float32 (the bits shifted to the
  top of a uint32), runs in float32, and rounds each bfloat16 result to its bits;
* jaxpr-valued parameters (``while``, ``scan``, ``cond`` bodies) are rewritten the same way;
  nested ``jit`` and custom-derivative calls are inlined.

The rewrite re-traces the jaxpr (an interpreter over its equations running under
``trace_to_jaxpr``), so the conversions are ordinary integer equations the planner fuses into
the surrounding loops: a jitted bfloat16 chain is one loop with no per-element Python.
"""
import numpy as np

from numjax import core, dtypes
from numjax.errors import NoLoweringError
from numjax.interpreters import partial_eval as pe
from numjax.jaxpr import ClosedJaxpr, Jaxpr, Literal, sub_jaxprs
from numjax.lax import elementwise as ew
from numjax.lax import low_precision as lp

# narrow dtype -> the unsigned integer type holding its bits.  float16 is here too although
# numpy has it: no backend computes in half precision either (XLA's CPU backend widens it the
# same way), and as bits it needs no type the kernel translator lacks.
_F16 = np.dtype(np.float16)
STORAGE_DTYPES = {dtypes.bfloat16: np.dtype(np.uint16), _F16: np.dtype(np.uint16)}


def _narrow_dtype(dtype):
    return lp.is_low(dtype) or dtype == _F16


def _widen_params(params):
    """``params`` with every narrow float dtype (float16 included) replaced by float32."""
    changed = {k: lp.COMPUTE_DTYPE for k, v in params.items()
               if isinstance(v, np.dtype) and _narrow_dtype(v)}
    return {**params, **changed} if changed else None
_INLINED = frozenset({"jit", "custom_jvp_call", "custom_vjp_call", "remat_lin"})
_BODY_PARAM = {"jit": "jaxpr", "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr", "remat_lin": "jaxpr"}
_U32 = np.dtype(np.uint32)


# ---------------------------------------------------------------- finding narrow values

def uses_low_precision(jaxpr):
    """Whether any value of ``jaxpr`` (a Jaxpr, nested jaxprs included) is bfloat16/float8."""
    for v in list(jaxpr.invars) + list(jaxpr.constvars) + list(jaxpr.outvars):
        if _narrow_dtype(v.aval.dtype):
            return True
    for eqn in jaxpr.eqns:
        if any(_narrow_dtype(v.aval.dtype) for v in list(eqn.invars) + list(eqn.outvars)):
            return True
        if _widen_params(eqn.params) is not None:
            return True
        if any(uses_low_precision(j) for j in sub_jaxprs(eqn.params)):
            return True
    return False


def _check_supported(dtype, where):
    if lp.is_low(dtype) and dtype not in STORAGE_DTYPES:
        raise NoLoweringError(where, f"{dtype.name} values are not compiled yet (only bfloat16)", dtype)


def storage_aval(aval):
    _check_supported(aval.dtype, "(input)")
    st = STORAGE_DTYPES.get(aval.dtype)
    return aval if st is None else core.ShapedArray(aval.shape, st, aval.weak_type)


def storage_value(x):
    """A bfloat16 numpy value (or Array) as its bits; anything else unchanged."""
    v = getattr(x, "_value", x)
    st = STORAGE_DTYPES.get(getattr(v, "dtype", None))
    if st is None:
        return x
    v = np.asarray(v)
    return (v if v.flags.c_contiguous else v.copy()).view(st)


# ---------------------------------------------------------------- the conversions, as equations

def _u32(c):
    return np.uint32(c)


def widen(bits, dtype):
    """float32 value of bfloat16 ``bits`` (uint16): the 16 bits are the top of a float32."""
    if dtype == _F16:
        return _widen_half(bits)
    wide = ew.convert_element_type_p.bind(bits, new_dtype=_U32, weak_type=False, sharding=None)
    wide = ew.shift_left_p.bind(wide, _u32(16))
    return ew.bitcast_convert_type_p.bind(wide, new_dtype=dtypes.float32)


def narrow(x, dtype):
    """bfloat16 bits (uint16) of float32 ``x``, rounded to nearest even; NaN stays a (quiet) NaN."""
    if dtype == _F16:
        return _narrow_half(x)
    bits = ew.bitcast_convert_type_p.bind(x, new_dtype=_U32)
    top = ew.shift_right_logical_p.bind(bits, _u32(16))
    odd = ew.and_p.bind(top, _u32(1))
    # Adding 0x7fff (plus one when the kept part is odd) carries into the kept bits exactly
    # when the dropped half is above one half, or equal to it with an odd kept part.
    rounded = ew.shift_right_logical_p.bind(ew.add_p.bind(bits, ew.add_p.bind(odd, _u32(0x7FFF))), _u32(16))
    quiet_nan = ew.or_p.bind(top, _u32(0x40))
    out = ew.select_n_p.bind(ew.ne_p.bind(x, x), rounded, quiet_nan)
    return ew.convert_element_type_p.bind(out, new_dtype=STORAGE_DTYPES[dtype], weak_type=False, sharding=None)


def _f32(c):
    return np.float32(c)


def _widen_half(bits):
    """float32 value of IEEE half ``bits`` (uint16), exactly.  The exponent and mantissa
    moved to float32's positions read as a float32 2**112 too small (denormal halves become
    denormal float32s), so one exact multiplication rebiases every finite value; infinities
    and NaNs get float32's all-ones exponent instead."""
    b = ew.convert_element_type_p.bind(bits, new_dtype=_U32, weak_type=False, sharding=None)
    sign = ew.shift_left_p.bind(ew.and_p.bind(b, _u32(0x8000)), _u32(16))
    moved = ew.shift_left_p.bind(ew.and_p.bind(b, _u32(0x7FFF)), _u32(13))
    finite = ew.mul_p.bind(ew.bitcast_convert_type_p.bind(moved, new_dtype=dtypes.float32),
                           _f32(2.0 ** 112))
    special = ew.bitcast_convert_type_p.bind(ew.or_p.bind(moved, _u32(0x7F800000)),
                                             new_dtype=dtypes.float32)
    is_special = ew.ge_p.bind(ew.and_p.bind(b, _u32(0x7C00)), _u32(0x7C00))
    mag = ew.select_n_p.bind(is_special, finite, special)
    out = ew.or_p.bind(ew.bitcast_convert_type_p.bind(mag, new_dtype=_U32), sign)
    return ew.bitcast_convert_type_p.bind(out, new_dtype=dtypes.float32)


def _full(like, c):
    """``c`` in the shape of ``like`` (uint32): select_n wants its cases full-shaped."""
    return ew.or_p.bind(ew.and_p.bind(like, _u32(0)), _u32(c))


def _narrow_half(x):
    """IEEE half bits (uint16) of float32 ``x``, rounded to nearest even (as a conversion
    instruction rounds): overflow to infinity, NaN to a quiet NaN, tiny values to denormal
    halves by letting a float32 addition of a magic constant do the rounding."""
    bits = ew.bitcast_convert_type_p.bind(x, new_dtype=_U32)
    sign = ew.shift_right_logical_p.bind(ew.and_p.bind(bits, _u32(0x80000000)), _u32(16))
    mag = ew.and_p.bind(bits, _u32(0x7FFFFFFF))
    # Normal halves: rebias the exponent, add 0xfff (+1 when the kept part is odd), shift.
    odd = ew.and_p.bind(ew.shift_right_logical_p.bind(mag, _u32(13)), _u32(1))
    rebiased = ew.add_p.bind(mag, _u32(((15 - 127) << 23) % (1 << 32) + 0xFFF))
    normal = ew.shift_right_logical_p.bind(ew.add_p.bind(rebiased, odd), _u32(13))
    # Denormal halves (and zero): adding 0.5 (2**-1) aligns the half's last mantissa bit with
    # float32's, so the float addition rounds exactly as the conversion must.
    magic = _u32(126 << 23)
    shifted = ew.add_p.bind(ew.bitcast_convert_type_p.bind(mag, new_dtype=dtypes.float32),
                            _f32(0.5))
    denormal = ew.sub_p.bind(ew.bitcast_convert_type_p.bind(shifted, new_dtype=_U32), magic)
    out = ew.select_n_p.bind(ew.lt_p.bind(mag, _u32(113 << 23)), normal, denormal)
    overflow = ew.select_n_p.bind(ew.gt_p.bind(mag, _u32(0x7F800000)), _full(mag, 0x7C00),
                                  _full(mag, 0x7E00))
    out = ew.select_n_p.bind(ew.ge_p.bind(mag, _u32((127 + 16) << 23)), out, overflow)
    out = ew.or_p.bind(out, sign)
    return ew.convert_element_type_p.bind(out, new_dtype=np.dtype(np.uint16), weak_type=False,
                                          sharding=None)


# ---------------------------------------------------------------- the rewrite

def to_storage_form(closed):
    """``closed`` (a ClosedJaxpr) with every bfloat16 value stored as uint16 bits."""
    consts = [storage_value(c) for c in closed.consts]
    in_avals = [storage_aval(a) for a in closed.in_avals]
    return pe.trace_to_jaxpr(lambda *args: _interpret(closed.jaxpr, consts, args), in_avals)


def _interpret(jaxpr, consts, args):
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))

    def read(v):
        if type(v) is Literal:
            return _storage_literal(v)
        return env[v]

    for eqn in jaxpr.eqns:
        outs = _rewrite_eqn(eqn, [read(v) for v in eqn.invars], [v.aval for v in eqn.invars])
        env.update(zip(eqn.outvars, outs))
    return [read(v) for v in jaxpr.outvars]


def _storage_literal(lit):
    dt = lit.aval.dtype
    _check_supported(dt, "(literal)")
    if dt in STORAGE_DTYPES:
        return np.asarray(lit.val, dt).view(STORAGE_DTYPES[dt])[()]
    return lit.val if isinstance(lit.val, np.ndarray) else np.asarray(lit.val, dt)[()]


def _rewrite_eqn(eqn, ins, in_avals):
    prim, params = eqn.primitive, eqn.params
    out_avals = [v.aval for v in eqn.outvars]
    for a in in_avals + out_avals:
        _check_supported(a.dtype, prim.name)
    if prim.name in _INLINED:
        body = params[_BODY_PARAM[prim.name]]
        return _interpret(body.jaxpr, [storage_value(c) for c in body.consts], ins)
    if prim.name in lp.HIGHER_ORDER_PRIMITIVE_NAMES:
        new_params = {k: _rewrite_jaxpr_param(v) for k, v in params.items()}
        return prim.bind(*ins, **new_params)
    low_in = [_narrow_dtype(a.dtype) for a in in_avals]
    low_out = [_narrow_dtype(a.dtype) for a in out_avals]
    wide_params = _widen_params(params)
    if not any(low_in) and not any(low_out) and wide_params is None:
        return _bind(prim, ins, params)
    if prim is ew.bitcast_convert_type_p:
        return _bitcast(ins[0], in_avals[0], params)
    if not lp.computes(prim):
        return _bind(prim, ins, params)
    expansion = lp.EXPANSIONS.get(prim.name)
    if expansion is not None:
        # Traced with the original types, then rewritten like the rest: each step rounds.
        expanded = pe.trace_to_jaxpr(lambda *xs: [expansion(*xs, **params)], in_avals)
        return _interpret(expanded.jaxpr, [storage_value(c) for c in expanded.consts], ins)
    wide_ins = [widen(x, a.dtype) if low else x for x, a, low in zip(ins, in_avals, low_in)]
    outs = _bind(prim, wide_ins, wide_params or params)
    return [narrow(o, a.dtype) if low else o for o, a, low in zip(outs, out_avals, low_out)]


def _bind(prim, ins, params):
    out = prim.bind(*ins, **params)
    return out if prim.multiple_results else [out]


def _bitcast(x, aval, params):
    # bfloat16 <-> 16-bit types: its bits are already what a bitcast gives.
    new = np.dtype(params["new_dtype"])
    src = STORAGE_DTYPES.get(aval.dtype, aval.dtype)
    dst = STORAGE_DTYPES.get(new, new)
    if src == dst:
        return [x]
    return [ew.bitcast_convert_type_p.bind(x, **{**params, "new_dtype": dst})]


def _rewrite_jaxpr_param(v):
    if isinstance(v, ClosedJaxpr):
        return to_storage_form(v) if uses_low_precision(v.jaxpr) else v
    if isinstance(v, Jaxpr):   # an open body (scan's): its constants are operands
        if not uses_low_precision(v):
            return v
        stored = to_storage_form(ClosedJaxpr(v, []))
        if stored.jaxpr.constvars:
            raise NoLoweringError("(body)", "a bfloat16 loop body that makes array constants")
        return stored.jaxpr
    if isinstance(v, tuple) and any(isinstance(j, (ClosedJaxpr, Jaxpr)) for j in v):
        return tuple(_rewrite_jaxpr_param(j) for j in v)
    return v


# ---------------------------------------------------------------- running it

class StorageExecutable:
    """The backend's executable of the rewritten program, called with the original types:
    bfloat16 inputs are passed as their bits and bits come back as bfloat16 (views, no copy)."""

    def __init__(self, closed, inner):
        self.inner = inner
        self.source = getattr(inner, "source", "")
        self._out_dtypes = [a.dtype if a.dtype in STORAGE_DTYPES else None for a in closed.out_avals]

    def ensure_compiled(self):
        return self.inner.ensure_compiled()

    def specialize(self, vals):
        return None

    def call_arrays(self, vals):
        outs = self.inner.call_arrays([storage_value(v) for v in vals])
        return [o if dt is None else type(o)(o._value.view(dt), o.weak_type)
                for o, dt in zip(outs, self._out_dtypes)]

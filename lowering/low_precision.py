"""The storage rewrite: a jaxpr with narrow values becomes one without them, before lowering.

No backend computes in bfloat16, float16, the 8- and 4-bit floats or the sub-byte ints.
XLA's CPU backend widens each such operand (to float32; an int4 to a wider int), computes,
and rounds each result back (round to nearest even; ints wrap); this pass makes that
explicit so that every backend sees only the types it already compiles:

* a narrow value is *stored* as its bits, an unsigned integer array (``narrow_bits``;
  program inputs and outputs are viewed as such: no copy);
* an equation that moves values (``numjax.lax.low_precision.STORAGE_PRIMITIVE_NAMES``) moves
  the bits as they are;
* an equation that computes reads each narrow operand as its wide value (``widen``), runs in
  the wide type, and rounds each narrow result to its bits (``narrow``); the few operations
  where that differs from XLA run as ``numjax.lax.low_precision.expansion_for`` gives them;
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

from .narrow_bits import STORAGE_DTYPES, compute_dtype, narrow, widen

_F16 = np.dtype(np.float16)
_INLINED = frozenset({"jit", "custom_jvp_call", "custom_vjp_call", "remat_lin"})
_BODY_PARAM = {"jit": "jaxpr", "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr", "remat_lin": "jaxpr"}
# Operands of the value-moving primitives that are read as numbers: a narrow int there is
# widened (its storage bits are not its value).
_INDEX_OPERANDS = {"gather": slice(1, 2), "dynamic_slice": slice(1, None),
                   "dynamic_update_slice": slice(2, None), "scatter": slice(1, 2)}


def _narrow_dtype(dtype):
    return dtype in STORAGE_DTYPES


def _widen_params(params):
    """``params`` with every narrow dtype (float16 included) replaced by its compute type."""
    changed = {k: compute_dtype(v) for k, v in params.items()
               if isinstance(v, np.dtype) and _narrow_dtype(v)}
    return {**params, **changed} if changed else None


# ---------------------------------------------------------------- finding narrow values

def uses_low_precision(jaxpr):
    """Whether ``jaxpr`` (a Jaxpr, nested jaxprs included) needs this rewrite: a value of a
    narrow type, or a bitcast between types of different widths (which no backend compiles:
    the rewrite gives it as shifts and masks, ``_resizing_bitcast``)."""
    for v in list(jaxpr.invars) + list(jaxpr.constvars) + list(jaxpr.outvars):
        if _narrow_dtype(v.aval.dtype):
            return True
    for eqn in jaxpr.eqns:
        if any(_narrow_dtype(v.aval.dtype) for v in list(eqn.invars) + list(eqn.outvars)):
            return True
        if eqn.primitive is ew.bitcast_convert_type_p and _resizes(eqn.invars[0].aval.dtype, eqn.params):
            return True
        if _widen_params(eqn.params) is not None:
            return True
        if any(uses_low_precision(j) for j in sub_jaxprs(eqn.params)):
            return True
    return False


def storage_aval(aval):
    st = STORAGE_DTYPES.get(aval.dtype)
    return aval if st is None else core.ShapedArray(aval.shape, st, aval.weak_type)


def storage_value(x):
    """A narrow numpy value (or Array) as its bits; anything else unchanged."""
    v = getattr(x, "_value", x)
    st = STORAGE_DTYPES.get(getattr(v, "dtype", None))
    if st is None:
        return x
    v = np.asarray(v)
    return (v if v.flags.c_contiguous else v.copy()).view(st)


# ---------------------------------------------------------------- the rewrite

def to_storage_form(closed):
    """``closed`` (a ClosedJaxpr) with every narrow value stored as its bits."""
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
    if dt in STORAGE_DTYPES:
        return np.asarray(lit.val, dt).view(STORAGE_DTYPES[dt])[()]
    return lit.val if isinstance(lit.val, np.ndarray) else np.asarray(lit.val, dt)[()]


def _rewrite_eqn(eqn, ins, in_avals):
    prim, params = eqn.primitive, eqn.params
    out_avals = [v.aval for v in eqn.outvars]
    if prim.name in _INLINED:
        body = params[_BODY_PARAM[prim.name]]
        return _interpret(body.jaxpr, [storage_value(c) for c in body.consts], ins)
    if prim.name in lp.HIGHER_ORDER_PRIMITIVE_NAMES:
        new_params = {k: _rewrite_jaxpr_param(v) for k, v in params.items()}
        return prim.bind(*ins, **new_params)
    if prim is ew.bitcast_convert_type_p and _resizes(in_avals[0].dtype, params):
        return [_resizing_bitcast(ins[0], in_avals[0], np.dtype(params["new_dtype"]))]
    low_in = [_narrow_dtype(a.dtype) for a in in_avals]
    low_out = [_narrow_dtype(a.dtype) for a in out_avals]
    wide_params = _widen_params(params)
    if not any(low_in) and not any(low_out) and wide_params is None:
        return _bind(prim, ins, params)
    if prim is ew.bitcast_convert_type_p:
        return _bitcast(ins[0], in_avals[0], params)
    if not lp.computes(prim):
        return _bind(prim, _widen_indices(prim, ins, in_avals), _storage_fill(params, in_avals[0].dtype))
    expansion = lp.expansion_for(prim, [a.dtype for a in in_avals], params)
    if expansion is not None:
        # Traced with the original types, then rewritten like the rest: each step rounds.
        expanded = pe.trace_to_jaxpr(lambda *xs: [expansion(*xs, **params)], in_avals)
        return _interpret(expanded.jaxpr, [storage_value(c) for c in expanded.consts], ins)
    wide_ins = [widen(x, a.dtype) if low else x for x, a, low in zip(ins, in_avals, low_in)]
    outs = _bind(prim, wide_ins, _widen_combiner(wide_params or params))
    return [_store(prim, o, a.dtype) if low else o for o, a, low in zip(outs, out_avals, low_out)]


def _widen_combiner(params):
    """A scatter's combining jaxpr (max, add, ... of two narrow scalars) in the compute type,
    as its operands now are."""
    jx = params.get("update_jaxpr")
    if isinstance(jx, Jaxpr) and len(jx.eqns) == 1 and _narrow_dtype(jx.invars[0].aval.dtype):
        from numjax.lax.indexing import _combiner_jaxpr
        wide = compute_dtype(jx.invars[0].aval.dtype)
        return {**params, "update_jaxpr": _combiner_jaxpr(jx.eqns[0].primitive, wide)}
    return params


def _store(prim, x, dtype):
    """The bits of a result: a computed 8- or 4-bit float rounds to half precision first."""
    if dtype in lp.HALF_ROUTED and prim is not ew.convert_element_type_p:
        x = widen(narrow(x, _F16), _F16)
    return narrow(x, dtype)


def _storage_fill(params, dtype):
    """A gather's fill value (NaN for a float16 operand) as the bits the operand is stored as."""
    fill = params.get("fill_value")
    if fill is None or dtype not in STORAGE_DTYPES:
        return params
    return {**params, "fill_value": np.asarray(fill, dtype).view(STORAGE_DTYPES[dtype])[()]}


def _widen_indices(prim, ins, in_avals):
    where = _INDEX_OPERANDS.get(prim.name)
    if where is None:
        return ins
    ins = list(ins)
    for i in range(len(ins))[where]:
        if in_avals[i].dtype in lp.NARROW_INTS:
            ins[i] = widen(ins[i], in_avals[i].dtype)
    return ins


def _bind(prim, ins, params):
    out = prim.bind(*ins, **params)
    return out if prim.multiple_results else [out]


def _bitcast(x, aval, params):
    # A narrow type's storage is its bits, as numpy holds them: what a bitcast gives.
    new = np.dtype(params["new_dtype"])
    src = STORAGE_DTYPES.get(aval.dtype, aval.dtype)
    dst = STORAGE_DTYPES.get(new, new)
    if src == dst:
        return [x]
    return [ew.bitcast_convert_type_p.bind(x, **{**params, "new_dtype": dst})]


def _resizes(dtype, params):
    return dtypes.itemsize_bits(dtype) != dtypes.itemsize_bits(params["new_dtype"])


def _as_bits(x, dtype, word):
    """``x`` (a ``dtype`` value in storage form) as the unsigned integer of its bits, widened to
    ``word``, the unsigned type the shifts work in."""
    stored = STORAGE_DTYPES.get(dtype, dtype)
    unsigned = np.dtype(f"uint{8 * stored.itemsize}")
    if stored != unsigned:
        x = ew.bitcast_convert_type_p.bind(x, new_dtype=unsigned)
    return ew.convert_element_type_p.bind(x, new_dtype=word, weak_type=False, sharding=None)


def _from_bits(word, dtype):
    """Bits held in an unsigned word back to ``dtype``'s storage form."""
    stored = STORAGE_DTYPES.get(dtype, dtype)
    unsigned = np.dtype(f"uint{8 * stored.itemsize}")
    x = ew.convert_element_type_p.bind(word, new_dtype=unsigned, weak_type=False, sharding=None)
    return x if stored == unsigned else ew.bitcast_convert_type_p.bind(x, new_dtype=stored)


def _resizing_bitcast(x, aval, new):
    """A bitcast between widths, as XLA's: little-endian, lowest bits first.  Narrowing splits
    each word into a new trailing axis of parts (shift, mask); widening ORs a trailing axis of
    parts into words (as a sum: the shifted parts share no bits).  Sub-byte types, stored one
    per byte, pack the same way."""
    from numjax.lax.reductions import reduce_sum_p
    from numjax.lax.shape import broadcast_in_dim, broadcasted_iota
    old_bits, new_bits = dtypes.itemsize_bits(aval.dtype), dtypes.itemsize_bits(new)
    word = np.dtype(np.uint64 if max(old_bits, new_bits) > 32 else np.uint32)
    bits = _as_bits(x, aval.dtype, word)
    shape = aval.shape
    if old_bits > new_bits:
        out_shape = (*shape, old_bits // new_bits)
        bits = broadcast_in_dim(bits, out_shape, tuple(range(len(shape))))
        shifts = ew.mul_p.bind(broadcasted_iota(word, out_shape, len(shape)), word.type(new_bits))
        parts = ew.and_p.bind(ew.shift_right_logical_p.bind(bits, shifts), word.type((1 << new_bits) - 1))
        return _from_bits(parts, new)
    shifts = ew.mul_p.bind(broadcasted_iota(word, shape, len(shape) - 1), word.type(old_bits))
    words = reduce_sum_p.bind(ew.shift_left_p.bind(bits, shifts), axes=(len(shape) - 1,), out_sharding=None)
    return _from_bits(words, new)


def _rewrite_jaxpr_param(v):
    if isinstance(v, ClosedJaxpr):
        return to_storage_form(v) if uses_low_precision(v.jaxpr) else v
    if isinstance(v, Jaxpr):   # an open body (scan's): its constants are operands
        if not uses_low_precision(v):
            return v
        stored = to_storage_form(ClosedJaxpr(v, []))
        if stored.jaxpr.constvars:
            raise NoLoweringError("(body)", "a narrow-typed loop body that makes array constants")
        return stored.jaxpr
    if isinstance(v, tuple) and any(isinstance(j, (ClosedJaxpr, Jaxpr)) for j in v):
        return tuple(_rewrite_jaxpr_param(j) for j in v)
    return v


# ---------------------------------------------------------------- running it

class StorageExecutable:
    """The backend's executable of the rewritten program, called with the original types:
    narrow inputs are passed as their bits and bits come back as the narrow type (views, no copy)."""

    def __init__(self, closed, inner):
        self.inner = inner
        self.source = getattr(inner, "source", "")
        self._out_dtypes = [a.dtype if a.dtype in STORAGE_DTYPES else None for a in closed.out_avals]
        # Weak types come from the original program: the rewrite's retrace stores literals as
        # plain (strong) numpy values, so its own output avals may have lost them.
        self._out_weak = [a.weak_type for a in closed.out_avals]

    def ensure_compiled(self):
        return self.inner.ensure_compiled()

    def specialize(self, vals):
        return None

    def call_arrays(self, vals):
        outs = self.inner.call_arrays([storage_value(v) for v in vals])
        return [type(o)(o._value if dt is None else o._value.view(dt), weak)
                for o, dt, weak in zip(outs, self._out_dtypes, self._out_weak)]

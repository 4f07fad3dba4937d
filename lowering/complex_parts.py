"""The complex rewrite: a jaxpr with complex values becomes one on their real and imaginary parts,
before lowering.

No backend needs a complex type then.  A complex64 (complex128) value is carried as two
float32 (float64) arrays of its shape, its *parts*; each equation on complex values becomes
real equations on the parts (``complex_math`` holds the formulas):

* equations that move values (reshape, slice, gather, select_n, ...) and the linear ones
  (add, neg, reduce_sum, cumsum) act on each part alike;
* arithmetic and the elementary functions follow ``complex_math``; ``dot_general`` is four
  real matmuls; complex sort keys sort by real part, then imaginary part, as JAX sorts;
* ``cond``/``while``/``scan`` bodies are rewritten the same way, a complex operand or carry
  becoming two real ones; nested ``jit`` and custom-derivative calls are inlined.

A primitive with no rule here raises ``NoLoweringError``: the program is then compiled as it
was (the Numba backend's complex support, or op-by-op evaluation with the usual warning).

The program's complex inputs are passed as their two parts (views of numpy's interleaved
storage) and its complex outputs are interleaved again by ``PartsExecutable``.  The rewrite
re-traces the jaxpr, as ``low_precision`` does, so the new equations are ordinary real ones
the planner fuses: a complex elementwise chain is one loop over two real streams.
"""
from typing import NamedTuple

import numpy as np

from numjax import core
from numjax.array import Array
from numjax.errors import NoLoweringError
from numjax.interpreters import partial_eval as pe
from numjax.jaxpr import ClosedJaxpr, Literal, sub_jaxprs
from numjax.lax import elementwise as ew

from . import complex_math as cm

PART_DTYPES = {np.dtype(np.complex64): np.dtype(np.float32),
               np.dtype(np.complex128): np.dtype(np.float64)}


class Parts(NamedTuple):
    """A complex value during the rewrite: its real and imaginary parts."""
    re: object
    im: object


def is_complex(dtype):
    return np.dtype(dtype).kind == "c"


# ---------------------------------------------------------------- finding complex values

def _complex_param(params):
    return any(isinstance(v, np.dtype) and is_complex(v) for v in params.values())


def uses_complex(jaxpr):
    """Whether any value of ``jaxpr`` (a Jaxpr, nested jaxprs included) is complex."""
    if any(is_complex(v.aval.dtype) for v in list(jaxpr.invars) + list(jaxpr.constvars) + list(jaxpr.outvars)):
        return True
    return any(_eqn_uses_complex(e) for e in jaxpr.eqns)


def _eqn_uses_complex(eqn):
    return (any(is_complex(v.aval.dtype) for v in list(eqn.invars) + list(eqn.outvars))
            or _complex_param(eqn.params) or any(uses_complex(j) for j in sub_jaxprs(eqn.params)))


# ---------------------------------------------------------------- values and avals

def parts_avals(aval):
    """The avals carrying a value of ``aval``: two real ones for a complex value."""
    part = PART_DTYPES.get(np.dtype(aval.dtype))
    if part is None:
        return [aval]
    real = core.ShapedArray(aval.shape, part, aval.weak_type)
    return [real, real]


def split_value(x):
    """A constant as the rewrite carries it: complex values as ``Parts`` of numpy arrays."""
    v = getattr(x, "_value", x)
    if not is_complex(getattr(v, "dtype", np.dtype(type(v)))):
        return x
    v = np.asarray(v)
    return Parts(np.ascontiguousarray(v.real), np.ascontiguousarray(v.imag))


def flatten(values):
    flat = []
    for v in values:
        flat.extend(v if isinstance(v, Parts) else [v])
    return flat


def unflatten(flat, avals):
    it = iter(flat)
    return [Parts(next(it), next(it)) if is_complex(a.dtype) else next(it) for a in avals]


def _zeros_like(x):
    return cm.full(cm.const(0, cm.dtype_of(x)), cm.shape_of(x))


def as_parts(x):
    """A complex operand's parts; a real operand (promoted by the rule) with a zero imaginary part."""
    return x if isinstance(x, Parts) else Parts(x, _zeros_like(x))


# ---------------------------------------------------------------- the rewrite

def to_parts_form(closed):
    """``closed`` (a ClosedJaxpr) with every complex input, output and value split in parts."""
    consts = [split_value(c) for c in closed.consts]
    flat_avals = [p for a in closed.in_avals for p in parts_avals(a)]

    def run(*flat):
        outs = _interpret(closed.jaxpr, consts, unflatten(flat, closed.in_avals))
        return flatten(outs)
    return pe.trace_to_jaxpr(run, flat_avals)


def _interpret(jaxpr, consts, args):
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))

    def read(v):
        return _literal(v) if type(v) is Literal else env[v]

    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        if not _eqn_uses_complex(eqn):
            outs = _bind(eqn.primitive, ins, eqn.params)
        else:
            rule = RULES.get(eqn.primitive.name)
            if rule is None:
                raise NoLoweringError(eqn.primitive.name, "no complex rewrite rule", _complex_dtype(eqn))
            outs = [_checked(o, v.aval, eqn) for o, v in zip(rule(eqn, ins), eqn.outvars)]
        env.update(zip(eqn.outvars, outs))
    return [read(v) for v in jaxpr.outvars]


def _complex_dtype(eqn):
    return next((v.aval.dtype for v in list(eqn.invars) + list(eqn.outvars) if is_complex(v.aval.dtype)), None)


def _literal(lit):
    val = lit.val if isinstance(lit.val, np.ndarray) else np.asarray(lit.val, lit.aval.dtype)[()]
    if is_complex(lit.aval.dtype):
        part = PART_DTYPES[np.dtype(lit.aval.dtype)]
        return Parts(np.asarray(np.real(val), part)[()], np.asarray(np.imag(val), part)[()])
    return val


def _checked(value, aval, eqn):
    """A rule's result in ``aval``'s shape (rank-0 constants broadcast), type-checked."""
    parts = list(value) if isinstance(value, Parts) else [value]
    want = parts_avals(aval)
    if len(parts) != len(want):
        raise TypeError(f"complex rewrite of {eqn.primitive.name}: {len(parts)} parts for {aval}")
    fixed = []
    for p, a in zip(parts, want):
        if np.dtype(cm.dtype_of(p)) != np.dtype(a.dtype):
            raise TypeError(f"complex rewrite of {eqn.primitive.name}: {cm.dtype_of(p)} for {a}")
        fixed.append(cm.full(p, a.shape) if tuple(cm.shape_of(p)) != tuple(a.shape) else p)
    return Parts(*fixed) if isinstance(value, Parts) else fixed[0]


def _bind(prim, ins, params):
    out = prim.bind(*ins, **params)
    return list(out) if prim.multiple_results else [out]


def _part_params(params, which):
    """``params`` for one part: complex dtypes become their part dtype, a complex constant
    (gather's fill value) its ``which`` part."""
    new = {}
    for k, v in params.items():
        if isinstance(v, np.dtype) and is_complex(v):
            v = PART_DTYPES[v]
        elif isinstance(v, (complex, np.complexfloating)):
            v = v.real if which == 0 else v.imag
        new[k] = v
    return new


# ---------------------------------------------------------------- rules: eqn, operands -> results

RULES = {}


def _register(names, rule):
    for name in names.split():
        RULES[name] = rule


def _each_part(eqn, ins):
    """The primitive applied to the real parts and to the imaginary parts; real operands
    (indices, predicates, sizes) go to both."""
    re = _bind(eqn.primitive, [x.re if isinstance(x, Parts) else x for x in ins], _part_params(eqn.params, 0))
    im = _bind(eqn.primitive, [x.im if isinstance(x, Parts) else x for x in ins], _part_params(eqn.params, 1))
    return [Parts(r, i) if is_complex(v.aval.dtype) else r for r, i, v in zip(re, im, eqn.outvars)]


_register("add sub neg add_any stop_gradient copy copy_p reduce_sum cumsum broadcast_in_dim reshape "
          "transpose squeeze rev slice concatenate pad dynamic_slice dynamic_update_slice gather",
          _each_part)


def _full_parts(eqn, ins):
    shape = eqn.outvars[0].aval.shape
    return [Parts(cm.full(x.re, shape), cm.full(x.im, shape)) if isinstance(x, Parts) else x for x in ins]


def _select_n(eqn, ins):
    return _each_part(eqn, _full_parts(eqn, ins))


_register("select_n", _select_n)


def _scatter(eqn, ins):
    from numjax.lax.indexing import _combiner_jaxpr, _combiner_prim
    combine = _combiner_prim(eqn.primitive)
    if eqn.primitive.name not in ("scatter", "scatter-add", "scatter-sub") or (
            combine is None and eqn.params.get("update_jaxpr") is not None):
        raise NoLoweringError(eqn.primitive.name, "complex scatter with a nonlinear combiner", _complex_dtype(eqn))
    part = PART_DTYPES[np.dtype(eqn.outvars[0].aval.dtype)]
    update_jaxpr = None if combine is None else _combiner_jaxpr(combine, part)
    operand, indices, updates = as_parts(ins[0]), ins[1], as_parts(ins[2])
    params = {**eqn.params, "update_jaxpr": update_jaxpr}
    return [Parts(eqn.primitive.bind(operand.re, indices, updates.re, **params),
                  eqn.primitive.bind(operand.im, indices, updates.im, **params))]


_register("scatter scatter-add scatter-sub", _scatter)


def _elementwise(fn, arity):
    """A rule from a ``complex_math`` function of ``arity`` complex operands."""
    def rule(eqn, ins):
        return [Parts(*fn(*[p for x in ins[:arity] for p in as_parts(x)]))]
    return rule


for _name, _fn, _arity in (
        ("mul", cm.complex_mul, 2), ("div", cm.complex_div, 2), ("pow", cm.complex_pow, 2),
        ("exp", cm.complex_exp, 1), ("log", cm.complex_log, 1), ("sqrt", cm.complex_sqrt, 1),
        ("rsqrt", cm.complex_rsqrt, 1), ("sin", cm.complex_sin, 1), ("cos", cm.complex_cos, 1),
        ("tanh", cm.complex_tanh, 1), ("expm1", cm.complex_expm1, 1), ("log1p", cm.complex_log1p, 1),
        ("sign", cm.complex_sign, 1)):
    RULES[_name] = _elementwise(_fn, _arity)


def _integer_pow(eqn, ins):
    return [Parts(*cm.complex_integer_pow(*as_parts(ins[0]), eqn.params["y"]))]


def _abs(eqn, ins):
    return [cm.complex_abs(*ins[0])]


def _real(eqn, ins):
    return [ins[0].re if isinstance(ins[0], Parts) else ins[0]]


def _imag(eqn, ins):
    return [ins[0].im if isinstance(ins[0], Parts) else _zeros_like(ins[0])]


def _conj(eqn, ins):
    z = as_parts(ins[0])
    return [Parts(z.re, cm.neg(z.im))]


def _complex(eqn, ins):
    shape = eqn.outvars[0].aval.shape
    return [Parts(cm.full(ins[0], shape), cm.full(ins[1], shape))]


_register("integer_pow", _integer_pow)
_register("abs", _abs)
_register("real", _real)
_register("imag", _imag)
_register("conj", _conj)
_register("complex", _complex)


def _convert(eqn, ins):
    x, new = ins[0], np.dtype(eqn.params["new_dtype"])
    if is_complex(new):
        params = {**eqn.params, "new_dtype": PART_DTYPES[new]}
        if isinstance(x, Parts):
            return [Parts(ew.convert_element_type_p.bind(x.re, **params),
                          ew.convert_element_type_p.bind(x.im, **params))]
        re = ew.convert_element_type_p.bind(x, **params)
        return [Parts(re, _zeros_like(re))]
    params = eqn.params
    if new == np.bool_:   # nonzero, as for any other number
        return [ew.or_p.bind(cm.ne(x.re, cm.const(0, cm.dtype_of(x.re))), cm.ne(x.im, cm.const(0, cm.dtype_of(x.im))))]
    return [ew.convert_element_type_p.bind(x.re, **params)]    # complex -> real keeps the real part


_register("convert_element_type", _convert)


def _equal(negate):
    def rule(eqn, ins):
        x, y = as_parts(ins[0]), as_parts(ins[1])
        if negate:
            return [ew.or_p.bind(cm.ne(x.re, y.re), cm.ne(x.im, y.im))]
        return [ew.and_p.bind(cm.eq(x.re, y.re), cm.eq(x.im, y.im))]
    return rule


def _ordered(swap, strict):
    def rule(eqn, ins):
        x, y = as_parts(ins[0]), as_parts(ins[1])
        if swap:
            x, y = y, x
        return [cm.lexicographic_less(x.re, x.im, y.re, y.im, strict)]
    return rule


def _extremum(greater):
    def rule(eqn, ins):
        x, y = as_parts(ins[0]), as_parts(ins[1])
        pick = cm.pick_first(x.re, x.im, y.re, y.im, greater)
        return [Parts(cm.where(pick, x.re, y.re), cm.where(pick, x.im, y.im))]
    return rule


_register("eq", _equal(False))
_register("ne", _equal(True))
_register("lt", _ordered(False, True))
_register("le", _ordered(False, False))
_register("gt", _ordered(True, True))
_register("ge", _ordered(True, False))
_register("max", _extremum(True))
_register("min", _extremum(False))


def _dot_general(eqn, ins):
    params = _part_params(eqn.params, 0)

    def dot(a, b):
        return eqn.primitive.bind(a, b, **params)
    x, y = ins
    if not isinstance(y, Parts):
        return [Parts(dot(x.re, y), dot(x.im, y))]
    if not isinstance(x, Parts):
        return [Parts(dot(x, y.re), dot(x, y.im))]
    return [Parts(cm.sub(dot(x.re, y.re), dot(x.im, y.im)), cm.add(dot(x.re, y.im), dot(x.im, y.re)))]


_register("dot_general", _dot_general)


def _reduce_prod(eqn, ins):
    """The product over ``axes`` as a tree of complex multiplications: the reduced axes moved
    last and flattened, then halves multiplied until one element is left."""
    from numjax.lax import indexing, shape as lax_shape
    z, axes = as_parts(ins[0]), tuple(eqn.params["axes"])
    in_shape = tuple(cm.shape_of(z.re))
    kept = [d for d in range(len(in_shape)) if d not in axes]
    out_shape = tuple(in_shape[d] for d in kept)
    n = int(np.prod([in_shape[d] for d in axes], dtype=np.int64))
    dt = cm.dtype_of(z.re)
    if n == 0:
        return [Parts(cm.full(cm.const(1, dt), out_shape), cm.full(cm.const(0, dt), out_shape))]
    perm = tuple(kept) + axes
    parts = [lax_shape.reshape(lax_shape.transpose(p, perm) if perm != tuple(range(len(perm))) else p,
                               out_shape + (n,)) for p in z]
    while n > 1:
        if n % 2:
            pads = (cm.const(1, dt), cm.const(0, dt))
            cfg = [(0, 0, 0)] * len(out_shape) + [(0, 1, 0)]
            parts = [lax_shape.pad(p, pad, cfg) for p, pad in zip(parts, pads)]
            n += 1
        half = n // 2
        lo = [indexing.slice(p, (0,) * len(out_shape) + (0,), out_shape + (half,)) for p in parts]
        hi = [indexing.slice(p, (0,) * len(out_shape) + (half,), out_shape + (n,)) for p in parts]
        parts, n = list(cm.complex_mul(*lo, *hi)), half
    return [Parts(*(lax_shape.reshape(p, out_shape) for p in parts))]


_register("reduce_prod", _reduce_prod)


def _sort(eqn, ins):
    """Complex keys sort by real part, then imaginary part: each becomes two keys."""
    num_keys = eqn.params["num_keys"]
    new_keys = sum(2 if isinstance(x, Parts) else 1 for x in ins[:num_keys])
    outs = eqn.primitive.bind(*flatten(ins), **{**eqn.params, "num_keys": new_keys})
    return unflatten(list(outs), [v.aval for v in eqn.outvars])


_register("sort", _sort)


# ---------------------------------------------------------------- rules: calls and control flow

def _inlined(param):
    def rule(eqn, ins):
        body = eqn.params[param]
        consts = [split_value(c) for c in getattr(body, "consts", [])]
        return _interpret(getattr(body, "jaxpr", body), consts, ins)
    return rule


_register("jit", _inlined("jaxpr"))
_register("custom_jvp_call custom_vjp_call", _inlined("call_jaxpr"))


def _body_parts(body):
    """A cond/while body (ClosedJaxpr, or open Jaxpr whose constants are operands) rewritten."""
    if isinstance(body, ClosedJaxpr):
        return to_parts_form(body)
    split = to_parts_form(ClosedJaxpr(body, []))
    if split.jaxpr.constvars:
        raise NoLoweringError("(body)", "a complex loop body that makes array constants")
    return split.jaxpr


def _count(values, start, count):
    """How many flat operands ``values[start:start + count]`` become."""
    return len(flatten(values[start:start + count]))


def _outs(eqn, outs):
    return unflatten(list(outs), [v.aval for v in eqn.outvars])


def _cond(eqn, ins):
    branches = tuple(_body_parts(b) for b in eqn.params["branches"])
    return _outs(eqn, eqn.primitive.bind(ins[0], *flatten(ins[1:]), **{**eqn.params, "branches": branches}))


def _while(eqn, ins):
    p = eqn.params
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    params = {**p, "cond_jaxpr": _body_parts(p["cond_jaxpr"]), "body_jaxpr": _body_parts(p["body_jaxpr"]),
              "cond_nconsts": _count(ins, 0, nc), "body_nconsts": _count(ins, nc, nb)}
    return _outs(eqn, eqn.primitive.bind(*flatten(ins), **params))


def _scan(eqn, ins):
    p = eqn.params
    body, nconst, ncarry = p["jaxpr"], p["num_consts"], p["num_carry"]
    extra = []
    if isinstance(body, ClosedJaxpr):
        new_body = to_parts_form(body)
    else:   # an open body: constants it makes become leading operands
        new_body, extra = pe.closure_convert(to_parts_form(ClosedJaxpr(body, [])))
    params = {**p, "jaxpr": new_body, "num_consts": len(extra) + _count(ins, 0, nconst),
              "num_carry": _count(ins, nconst, ncarry)}
    if "linear" in p:
        params["linear"] = (False,) * len(extra) + tuple(
            lin for x, lin in zip(ins, p["linear"]) for _ in (x if isinstance(x, Parts) else [x]))
    return _outs(eqn, eqn.primitive.bind(*extra, *flatten(ins), **params))


_register("cond", _cond)
_register("while", _while)
_register("scan", _scan)


# ---------------------------------------------------------------- running it

class PartsExecutable:
    """The backend's executable of the rewritten program, called with complex values: each
    complex input is passed as its real and imaginary parts (strided views of the interleaved
    storage) and each complex result is interleaved from the two parts that come back."""

    def __init__(self, closed, inner):
        self.inner = inner
        self.source = getattr(inner, "source", "")
        self._in_dtypes = [np.dtype(a.dtype) if is_complex(a.dtype) else None for a in closed.in_avals]
        self._outs = [(np.dtype(a.dtype), a.weak_type) for a in closed.out_avals]

    def ensure_compiled(self):
        return self.inner.ensure_compiled()

    def specialize(self, vals):
        return None

    def call_arrays(self, vals):
        flat = []
        for v, dt in zip(vals, self._in_dtypes):
            if dt is None:
                flat.append(v)
            else:
                z = np.asarray(getattr(v, "_value", v), dt)
                flat += [z.real, z.imag]
        outs = iter(self.inner.call_arrays(flat))
        results = []
        for dt, weak in self._outs:
            if not is_complex(dt):
                results.append(next(outs))
                continue
            re, im = (np.asarray(getattr(o, "_value", o)) for o in (next(outs), next(outs)))
            joined = np.empty(re.shape, dt)
            joined.real, joined.imag = re, im
            results.append(Array(joined, weak))
        return results

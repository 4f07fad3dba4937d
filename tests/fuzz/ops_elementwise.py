"""Elementwise op families for the fuzzer: each is ``make(g: Gen) -> Node``.

A node's type comes from :mod:`jax_types` (JAX's promotion), its value from
:mod:`reference` (JAX's corner-case rules in numpy).  Operands promoted to the result dtype
are computed on as XLA does: integers wrap, float16/bfloat16 in float32 rounded per op.
"""
import math

import numpy as np

import jax_types as jt
import reference as R
from expect import Expect, flush_subnormals, tiny
from jax_types import Ty
from program import Node


class Raises(Exception):
    """A type rule's verdict that JAX raises ``cls`` for these operands."""

    def __init__(self, cls):
        super().__init__(cls.__name__)
        self.cls = cls


# ---------------------------------------------------------------- building nodes


def literal(g, kind):
    """A Python scalar operand: ('l', value, Ty)."""
    if kind == "b":
        return ("l", g.pick([True, False]), Ty((), "bool"))
    if kind == "f":
        v = g.pick([0.0, -0.0, 1.0, -1.5, 2.5, 0.5, math.inf, -math.inf, math.nan, 1e30, 3.0])
        return ("l", v, Ty((), jt.default_float(g.x64), weak=True))
    v = g.pick([0, 1, 2, -1, 3, 7, 8, 100])
    return ("l", v, Ty((), jt.default_int(g.x64), weak=True))


def lit_text(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "float('nan')"
        if math.isinf(v):
            return "float('inf')" if v > 0 else "-float('inf')"
    return repr(v)


def build(g, op, family, template, operands, rule, compute, tol="exact", shape=None):
    """A node from operands (('v', index) or ('l', value, Ty)) and a type rule.

    ``rule(tys) -> (dtype, weak)`` may raise :class:`Raises`; ``compute(vals, tys, ty)``
    gets the operand values (Python literals included) and returns the reference."""
    tys = [g.ty(o[1]) if o[0] == "v" else o[2] for o in operands]
    args, texts = [], []
    for o in operands:
        if o[0] == "v":
            texts.append("{%d}" % len(args))
            args.append(o[1])
        else:
            texts.append(lit_text(o[1]))
    expr = template.format(*texts)
    out_shape = shape if shape is not None else jt.broadcast_shapes(*[t.shape for t in tys])
    try:
        if out_shape is None:
            # jnp broadcasts operands of different ranks with lax.broadcast_shapes
            # (ValueError); equal ranks reach the lax op's shape check (TypeError).
            ranks = {t.ndim for t in tys if t.ndim}
            raise Raises(ValueError if len(ranks) > 1 else TypeError)
        dtype, weak = rule(tys)
    except Raises as r:
        return Node(op, family, expr, tuple(args), error=r.cls)
    ty = Ty(tuple(out_shape), dtype, weak)

    def ref(*vals):
        it = iter(vals)
        full = [next(it) if o[0] == "v" else o[1] for o in operands]
        return compute(full, tys, ty)
    return Node(op, family, expr, tuple(args), ty, None, ref, tol)


def promoted(vals, ty):
    """Operands converted to the result dtype and broadcast to its shape."""
    return [np.broadcast_to(R.cast(np.asarray(v), ty.dtype), ty.shape) for v in vals]


# ---------------------------------------------------------------- type rules


def rule_promote(g, allow=None):
    def rule(tys):
        dt, weak = jt.result_dtype(tys, g.x64)
        if allow is not None and jt.kind(dt) not in allow:
            raise Raises(TypeError)
        return dt, weak
    return rule


def rule_numeric(g, allow="iuf"):
    def rule(tys):
        dt, weak = jt.result_dtype(tys, g.x64)
        dt = jt.to_numeric(dt)
        if jt.kind(dt) not in allow:
            raise Raises(TypeError)
        return jt.canonical(dt, g.x64), weak
    return rule


def rule_inexact(g):
    def rule(tys):
        dt, weak = jt.result_dtype(tys, g.x64)
        return jt.to_inexact(dt, g.x64), weak
    return rule


def rule_compare(g):
    """Comparisons: the operands are promoted, and the bool result keeps their weak type
    (``jnp.equal(int8_array, 1.0)`` is a weak bool in JAX)."""
    def rule(tys):
        dt, weak = jt.result_dtype(tys, g.x64)
        return "bool", weak
    return rule


def rule_logical(g):
    """logical_and/or/xor: the operands are promoted; a non-bool one becomes ``x != 0``
    against a constant that is weak only when x is a weak 0-d value (``lax._const``), and
    the result is weak only if both sides are."""
    def rule(tys):
        dt, weak = jt.result_dtype(tys, g.x64)
        return "bool", dt != "bool" and weak and all(t.ndim == 0 for t in tys)
    return rule


def rule_lax_same(g, allow="buif", out=None):
    """lax binary ops: equal dtypes and shapes; weak only if every operand is weak."""
    def rule(tys):
        if len({t.dtype for t in tys}) != 1 or len({t.shape for t in tys}) != 1:
            raise Raises(TypeError)
        if jt.kind(tys[0].dtype) not in allow:
            raise Raises(TypeError)
        return out or tys[0].dtype, all(t.weak for t in tys)
    return rule


# ---------------------------------------------------------------- references


def exact(fn):
    """Reference of an IEEE-exact op on the promoted operands."""
    def compute(vals, tys, ty):
        args = promoted(vals, ty)
        if jt.kind(ty.dtype) in "iub":
            return R.wrap(fn, *args) if ty.dtype != "bool" else np.asarray(fn(*args)).astype(bool)
        return R._float_op(fn, *args)
    return compute


def transcendental(fn, ulps=4, in_dtype=None):
    """Reference of an approximated function: computed wide, ``ulps`` allowed.  A subnormal
    operand may count as zero (XLA's CPU backend reads subnormals as zero)."""
    def compute(vals, tys, ty):
        args = promoted(vals, ty.with_(dtype=in_dtype or ty.dtype))
        value = _wide(fn, args, ty.dtype)
        flushed = [flush_subnormals(a, ty.dtype) for a in args]
        alt = _wide(fn, flushed, ty.dtype)
        k = 1 if ty.dtype in ("float16", "bfloat16") else (2 if ty.dtype == "float64" else ulps)
        k = 4 if k == "xulps" else k
        if ulps == "xulps":   # the product x * ln 2 is rounded in the dtype (16-bit too)
            k = k + np.abs(np.nan_to_num(args[0].astype(np.float64), posinf=0, neginf=0))
        return Expect(value, ulps=k, atol=2 * tiny(ty.dtype), alt=alt)
    return compute


def _wide(fn, args, dtype):
    with R.quiet():
        wide = [a.astype(R.WIDE if dtype == "float64" else np.float64) for a in args]
        return np.asarray(fn(*wide)).astype(jt.np_dtype(dtype))


# ---------------------------------------------------------------- operand selection


def second_operand(g, a, dtypes, literal_kinds="bif", py_scalar_ok=True, weak_ok=True):
    """Another operand that broadcasts with value ``a`` (or a Python literal)."""
    if literal_kinds and g.flag(0.2):
        return literal(g, g.pick(literal_kinds))
    sa = g.ty(a).shape
    if g.flag(0.03):   # a shape that does not broadcast: JAX raises TypeError
        return ("v", g.operand(dtypes, min_rank=1, weak_ok=weak_ok))
    if g.flag(0.5):
        fits = [i for i in range(len(g.tys)) if i != a and g.tys[i].dtype in dtypes
                and jt.broadcast_shapes(g.tys[i].shape, sa) is not None
                and (weak_ok or not g.tys[i].weak)
                and (py_scalar_ok or not g.is_py_scalar(i))]
        if fits:
            return ("v", g.pick(reversed(fits)))
    return ("v", g.operand(dtypes, shape=g.partner_shape(sa), weak_ok=weak_ok))


def ordered(g, a, b):
    return [a, b] if g.flag(0.8) else [b, a]


def _shift_guard(g, idx):
    """With shift_out_of_range known broken: the amount masked into [0, bits of its dtype)."""
    t = g.ty(idx)
    node = build(g, "guard", "guard", "jnp.bitwise_and({0}, %d)" % (jt.bits(t.dtype) - 1),
                 [("v", idx)], lambda tys: (t.dtype, t.weak),
                 lambda vals, tys, ty: R.wrap(np.bitwise_and, np.asarray(vals[0]),
                                              np.asarray(jt.bits(t.dtype) - 1,
                                                         jt.np_dtype(t.dtype))))
    return g.add(node)


def _nonzero_guard(g, idx):
    """With int_divide_by_zero known broken: a divisor with its zeros replaced by ones."""
    t = g.ty(idx)

    def compute(vals, tys, ty):
        v = np.asarray(vals[0])
        return np.where(v == 0, np.ones((), v.dtype), v).astype(v.dtype)
    return g.add(build(g, "guard", "guard", "jnp.where({0} == 0, jnp.ones_like({0}), {0})",
                       [("v", idx)], lambda tys: (t.dtype, t.weak), compute))


# ---------------------------------------------------------------- families

_JNP_MATH = {
    # name: (numpy function, ulps for float32)
    "exp": (np.exp, 4), "log": (np.log, 4), "sin": (np.sin, 4), "cos": (np.cos, 4),
    "tan": (np.tan, 4), "tanh": (np.tanh, 4), "log1p": (np.log1p, 4), "expm1": (np.expm1, 4),
    "arctan": (np.arctan, 4), "arcsinh": (np.arcsinh, 4),
    "log2": (np.log2, 4), "cbrt": (np.cbrt, 4),
    # exp2 is XLA's exp(x * ln 2): the rounding of x * ln 2 costs |x| ulps (transcendental
    # reads the "xulps" marker as 4 + |x| ulps).
    "exp2": (np.exp2, "xulps"),
}
_LAX_MATH = {"exp": np.exp, "log": np.log, "sin": np.sin, "tanh": np.tanh, "logistic":
             lambda x: 1 / (1 + np.exp(-x)), "log1p": np.log1p, "atan": np.arctan}


def unary_math(g):
    if g.flag(0.25):
        name = g.pick(sorted(_LAX_MATH))
        a = g.operand(g.dtypes("f") if g.flag(0.95) else g.dtypes("iu"))
        return build(g, f"lax.{name}", "unary_math", f"lax.{name}({{0}})", [("v", a)],
                     rule_lax_same(g, "f"), transcendental(_LAX_MATH[name]), "ulps")
    name = g.pick(sorted(_JNP_MATH) + ["sqrt", "reciprocal"])
    a = g.operand(g.dtypes(), py_scalar_ok=True)
    if name in ("sqrt", "reciprocal"):
        fn = np.sqrt if name == "sqrt" else (lambda x: np.true_divide(np.ones((), x.dtype), x))
        return build(g, f"jnp.{name}", "unary_math", f"jnp.{name}({{0}})", [("v", a)],
                     rule_inexact(g), exact(fn))
    fn, ulps = _JNP_MATH[name]
    rule = rule_inexact(g)
    if name == "log2":   # log(x) / log(2), with a strongly typed constant: never weak
        rule = (lambda r: lambda tys: (r(tys)[0], False))(rule)
    return build(g, f"jnp.{name}", "unary_math", f"jnp.{name}({{0}})", [("v", a)],
                 rule, transcendental(fn, ulps), "ulps")


def _keep_ints(fn):
    def compute(vals, tys, ty):
        x = promoted(vals, ty)[0]
        return x.copy() if jt.kind(ty.dtype) in "biu" else R._float_op(fn, x)
    return compute


def _signbit(vals, tys, ty):
    x = np.broadcast_to(np.asarray(vals[0]), ty.shape)
    if x.dtype == bool:
        return np.zeros(ty.shape, bool)
    if not R.is_float(x.dtype):
        return x < 0
    w = x.astype(np.float64)
    # The sign of a NaN is not specified (x86 makes invalid operations' NaN negative).
    return Expect(np.signbit(w), unknown=np.isnan(w))


def _unary_bool(fn):
    def compute(vals, tys, ty):
        x = np.broadcast_to(np.asarray(vals[0]), ty.shape)
        with R.quiet():
            return np.asarray(fn(x.astype(np.float64) if R.is_float(x.dtype) else x)).astype(bool)
    return compute


def unary_numeric(g):
    name = g.pick(["negative", "abs", "sign", "square", "floor", "ceil", "trunc", "round",
                   "isnan", "isinf", "isfinite", "signbit", "logical_not", "invert", "op_neg",
                   "op_invert", "op_abs", "lax.neg", "lax.abs", "lax.sign", "lax.floor",
                   "lax.round", "lax.round_even", "lax.bitwise_not"])
    allowed = _UNARY_KINDS.get(name, "buif") if g.flag(0.95) else "buif"
    a = g.operand(g.dtypes(allowed), py_scalar_ok=not name.startswith(("op_", "lax.")))
    same = lambda tys: (tys[0].dtype, tys[0].weak)   # noqa: E731
    table = {
        "negative": ("jnp.negative({0})", rule_numeric_unary(g, "iuf"), exact(np.negative)),
        "op_neg": ("-{0}", rule_numeric_unary(g, "iuf"), exact(np.negative)),
        "lax.neg": ("lax.neg({0})", rule_numeric_unary(g, "iuf"), exact(np.negative)),
        "abs": ("jnp.abs({0})", same, _abs),
        "op_abs": ("abs({0})", same, _abs),
        "lax.abs": ("lax.abs({0})", rule_numeric_unary(g, "if"), _abs),
        "sign": ("jnp.sign({0})", rule_numeric_unary(g, "iuf"), lambda v, ts, ty: R.lax_sign(
            promoted(v, ty)[0])),
        "lax.sign": ("lax.sign({0})", rule_numeric_unary(g, "iuf"),
                     lambda v, ts, ty: R.lax_sign(promoted(v, ty)[0])),
        "square": ("jnp.square({0})", rule_numeric(g), exact(lambda x: x * x)),
        "floor": ("jnp.floor({0})", same, _keep_ints(np.floor)),
        "ceil": ("jnp.ceil({0})", same, _keep_ints(np.ceil)),
        "trunc": ("jnp.trunc({0})", same, _keep_ints(np.trunc)),
        "round": ("jnp.round({0})", rule_numeric_unary(g, "iuf", ValueError),
                  _keep_ints(np.rint)),   # (bool: JAX's "data type bool not inexact")
        "lax.floor": ("lax.floor({0})", rule_numeric_unary(g, "f"), _keep_ints(np.floor)),
        "lax.round": ("lax.round({0})", rule_numeric_unary(g, "f"),
                      lambda v, ts, ty: R.lax_round_even_away(promoted(v, ty)[0])),
        "lax.round_even": ("lax.round({0}, lax.RoundingMethod.TO_NEAREST_EVEN)",
                           rule_numeric_unary(g, "f"), _keep_ints(np.rint)),
        # JAX keeps a weak operand's weak type in isnan, isfinite (of floats) and
        # logical_not (lax comparisons / not) but not in isinf and signbit.
        "isnan": ("jnp.isnan({0})", weak_bool, _unary_bool(np.isnan)),
        "isinf": ("jnp.isinf({0})", lambda ts: ("bool", False), _unary_bool(np.isinf)),
        "isfinite": ("jnp.isfinite({0})",   # (non-floats: a strong full_like(x, True))
                     lambda ts: ("bool", ts[0].weak and ts[0].kind == "f"),
                     _unary_bool(np.isfinite)),
        "signbit": ("jnp.signbit({0})", lambda ts: ("bool", False), _signbit),
        "logical_not": ("jnp.logical_not({0})",
                        lambda ts: ("bool", ts[0].weak and (ts[0].dtype == "bool"
                                                            or ts[0].ndim == 0)),
                        _unary_bool(lambda x: x == 0)),
        "invert": ("jnp.invert({0})", rule_numeric_unary(g, "biu"), exact(np.invert)),
        "op_invert": ("~{0}", rule_numeric_unary(g, "biu"), exact(np.invert)),
        "lax.bitwise_not": ("lax.bitwise_not({0})", rule_numeric_unary(g, "biu"),
                            exact(np.invert)),
    }
    template, rule, compute = table[name]
    label = name if name.startswith(("lax.", "op_")) else f"jnp.{name}"
    return build(g, label, "unary_numeric", template, [("v", a)], rule, compute)


# Operand kinds each op accepts (5% of draws ignore this, to check JAX's TypeError).
_UNARY_KINDS = {
    "negative": "iuf", "op_neg": "iuf", "lax.neg": "iuf", "lax.abs": "if", "sign": "iuf",
    "lax.sign": "iuf", "lax.floor": "f", "lax.round": "f", "lax.round_even": "f",
    "invert": "biu", "op_invert": "biu", "lax.bitwise_not": "biu",
}


def weak_bool(tys):
    return "bool", tys[0].weak


def rule_numeric_unary(g, allow, error=TypeError):
    def rule(tys):
        if jt.kind(tys[0].dtype) not in allow:
            raise Raises(error)
        return tys[0].dtype, tys[0].weak
    return rule


def _abs(vals, tys, ty):
    x = promoted(vals, ty)[0]
    if jt.kind(ty.dtype) in "bu":
        return x.copy()
    if jt.kind(ty.dtype) == "i":
        return R.wrap(np.abs, x)
    return R._float_op(np.abs, x)


_BINARY = {
    # name: (template, rule maker, reference, family)
    "add": ("jnp.add({0}, {1})", "promote", "add"),
    "op_add": ("{0} + {1}", "promote", "add"),
    "subtract": ("jnp.subtract({0}, {1})", "promote_nobool", "sub"),
    "op_sub": ("{0} - {1}", "promote_nobool", "sub"),
    "multiply": ("jnp.multiply({0}, {1})", "promote", "mul"),
    "op_mul": ("{0} * {1}", "promote", "mul"),
    "true_divide": ("jnp.true_divide({0}, {1})", "inexact", "div"),
    "op_truediv": ("{0} / {1}", "inexact", "div"),
    "maximum": ("jnp.maximum({0}, {1})", "promote", "max"),
    "minimum": ("jnp.minimum({0}, {1})", "promote", "min"),
    "floor_divide": ("jnp.floor_divide({0}, {1})", "numeric", "floordiv"),
    "op_floordiv": ("{0} // {1}", "numeric", "floordiv"),
    "remainder": ("jnp.remainder({0}, {1})", "numeric", "remainder"),
    "op_mod": ("{0} % {1}", "numeric", "remainder"),
    "fmod": ("jnp.fmod({0}, {1})", "numeric", "fmod"),
    "arctan2": ("jnp.arctan2({0}, {1})", "inexact", "arctan2"),
    "copysign": ("jnp.copysign({0}, {1})", "inexact", "copysign"),
    "hypot": ("jnp.hypot({0}, {1})", "inexact", "hypot"),
}
_BINARY_REF = {
    "add": lambda ty: exact(np.logical_or if ty.dtype == "bool" else np.add),
    "sub": lambda ty: exact(np.subtract),
    "mul": lambda ty: exact(np.logical_and if ty.dtype == "bool" else np.multiply),
    "div": lambda ty: exact(np.true_divide),
    "max": lambda ty: lambda v, ts, t: R.lax_max(*promoted(v, t)),
    "min": lambda ty: lambda v, ts, t: R.lax_min(*promoted(v, t)),
    "floordiv": lambda ty: lambda v, ts, t: R.floor_divide(*promoted(v, t)),
    "remainder": lambda ty: lambda v, ts, t: R.remainder(*promoted(v, t)),
    # fmod guards a zero divisor only when the promoted type is an integer (not bool).
    "fmod": lambda ty: lambda v, ts, t: R.fmod(*promoted(v, t), guard=not all(
        s.dtype == "bool" for s in ts)),
    "arctan2": lambda ty: transcendental(np.arctan2),
    "copysign": lambda ty: exact(np.copysign),
    "hypot": lambda ty: transcendental(np.hypot),
}
_DIVISIONS = ("floordiv", "remainder", "fmod")


def binary_arith(g):
    name = g.pick(sorted(_BINARY))
    template, rule_name, ref_name = _BINARY[name]
    is_op = name.startswith("op_")
    kinds = "iuf" if rule_name == "promote_nobool" and g.flag(0.9) else "buif"
    a = g.operand(g.dtypes(kinds), py_scalar_ok=not is_op)
    b = second_operand(g, a, g.dtypes(kinds), py_scalar_ok=not is_op)
    rule = {"promote": rule_promote(g), "promote_nobool": rule_promote(g, "iuf"),
            "numeric": rule_numeric(g), "inexact": rule_inexact(g)}[rule_name]
    family = "binary_arith"
    if ref_name in _DIVISIONS:
        family = "division"
        if "int_divide_by_zero" in g.broken and b[0] == "v":
            tys = [g.ty(a), g.ty(b[1])]
            if jt.kind(jt.to_numeric(jt.result_dtype(tys, g.x64)[0])) in "iu" \
                    and not g.is_py_scalar(b[1]) and not g.ty(b[1]).weak:
                b = ("v", _nonzero_guard(g, b[1]))
        if b[0] == "l" and type(b[1]) is int and b[1] == 0 and "int_divide_by_zero" in g.broken:
            b = ("l", 3, b[2])
    operands = [("v", a), b] if is_op else ordered(g, ("v", a), b)
    if is_op and operands[0][0] == "v" and g.flag(0.3) and b[0] == "l":
        operands = [b, ("v", a)]   # reflected operator: 2 + x
    op_tys = [g.ty(o[1]) if o[0] == "v" else o[2] for o in operands]
    try:
        out_ty = Ty((), *rule(op_tys))
        compute = _BINARY_REF[ref_name](out_ty)
    except Raises:
        compute = None
    if compute is not None and ref_name in ("mul", "div") and out_ty.kind == "f" \
            and op_tys[0].dtype == "bool" or ref_name == "mul" and compute is not None \
            and out_ty.kind == "f" and op_tys[1].dtype == "bool":
        compute = _bool_select_alt(compute, [t.dtype == "bool" for t in op_tys])
    tol = "ulps" if ref_name in ("arctan2", "hypot") else "exact"
    label = name if is_op else f"jnp.{name}"
    node = build(g, label, family, template, operands, rule, compute, tol)
    if name == "copysign" and node.error is TypeError:
        node.error = ValueError   # copysign broadcasts through jnp.where: ValueError
    if name == "hypot" and node.ty is not None and node.ty.weak and node.ty.ndim:
        node.ty = node.ty.with_(weak=False)   # where(x, <strong constant inf>, ...)
    return node


def _bool_select_alt(compute, is_bool):
    """XLA rewrites ``float(b) * y`` (and ``float(b) / c``) as ``select(b, ..., 0)``: JAX
    then gives +0.0 where IEEE gives 0 * y (-0.0, or NaN for y = inf).  Both are accepted."""
    def with_alt(vals, tys, ty):
        value = compute(vals, tys, ty)
        mask = np.ones(ty.shape, bool)
        for v, b in zip(vals, is_bool):
            if b:
                mask &= np.broadcast_to(np.asarray(v), ty.shape)
        alt = np.where(mask, value, np.zeros((), value.dtype)).astype(value.dtype)
        return Expect(value, alt=alt)
    return with_alt


def power(g):
    a = g.operand(g.dtypes(), py_scalar_ok=False)
    form = g.pick(["literal", "array", "lax"])
    if form == "literal":
        n = g.pick([0, 1, 2, 3, -1, -2, 5])
        template = g.pick(["jnp.power({0}, %d)", "{0} ** %d"]) % n

        def rule(tys):
            dt = jt.to_numeric(tys[0].dtype)
            if n < 0 and jt.kind(dt) in "iu":
                raise Raises(TypeError)
            return jt.canonical(dt, g.x64), tys[0].weak

        def compute(vals, tys, ty):
            out = R.integer_pow(promoted(vals, ty)[0], n)
            return Expect(out, ulps=abs(n)) if jt.kind(ty.dtype) == "f" else out
        return build(g, "jnp.power(x, int)", "power", template, [("v", a)], rule, compute,
                     "ulps")
    if form == "lax":
        b = g.operand([g.ty(a).dtype] if jt.kind(g.ty(a).dtype) == "f" else g.dtypes("f"),
                      shape=g.ty(a).shape)
        return build(g, "lax.pow", "power", "lax.pow({0}, {1})", [("v", a), ("v", b)],
                     rule_lax_same(g, "f"), transcendental(np.power), "ulps")
    # A 0-d integer (or bool) exponent would be concrete in eager mode, where jnp.power
    # takes the integer_pow path, and traced under jit: a rank >= 1 exponent keeps the two
    # paths the same function.
    b = g.operand(g.dtypes(), shape=g.partner_shape(g.ty(a).shape) or (1,))
    ta, tb = g.ty(a), g.ty(b)

    def rule(tys):
        dt, weak = jt.result_dtype(tys, g.x64)
        dt = jt.canonical(jt.to_numeric(dt), g.x64)
        if jt.kind(dt) in "iu":
            return dt, weak
        if jt.kind(ta.dtype) == "f" and jt.kind(tb.dtype) in "iu":
            return ta.dtype, ta.weak and tb.weak      # lax.pow(x1, x2) without promotion
        return dt, weak

    def compute(vals, tys, ty):
        if jt.kind(ty.dtype) in "iu":
            return R.pow_int_int(*promoted(vals, ty))
        # A float base with an integer exponent: lax.pow converts the exponent to the
        # base's dtype (JAX's pow lowering), which the promotion below does too.
        return transcendental(np.power)(vals, tys, ty)
    return build(g, "jnp.power", "power", "jnp.power({0}, {1})", [("v", a), ("v", b)], rule,
                 compute, "ulps")


_COMPARE = {"equal": np.equal, "not_equal": np.not_equal, "less": np.less,
            "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal}
_COMPARE_OPS = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
                ">": np.greater, ">=": np.greater_equal}


def compare(g):
    use_op = g.flag(0.4)
    name = g.pick(sorted(_COMPARE_OPS) if use_op else sorted(_COMPARE))
    fn = _COMPARE_OPS[name] if use_op else _COMPARE[name]
    a = g.operand(g.dtypes(), py_scalar_ok=not use_op)
    b = second_operand(g, a, g.dtypes(), py_scalar_ok=not use_op)
    template = "{0} %s {1}" % name if use_op else f"jnp.{name}({{0}}, {{1}})"

    def compute(vals, tys, ty):
        dt, _ = jt.result_dtype(tys, g.x64)
        x, y = [np.broadcast_to(R.cast(np.asarray(v), dt), ty.shape) for v in vals]
        if R.is_float(x.dtype):
            x, y = x.astype(np.float64), y.astype(np.float64)
        with R.quiet():
            return fn(x, y)
    operands = [("v", a), b] if use_op else ordered(g, ("v", a), b)
    return build(g, name if use_op else f"jnp.{name}", "compare", template, operands,
                 rule_compare(g), compute)


_LOGICAL = {"logical_and": np.logical_and, "logical_or": np.logical_or,
            "logical_xor": np.logical_xor}


def logical(g):
    name = g.pick(sorted(_LOGICAL))
    a = g.operand(g.dtypes(), py_scalar_ok=True)
    b = second_operand(g, a, g.dtypes())

    def compute(vals, tys, ty):
        dt, _ = jt.result_dtype(tys, g.x64)
        x, y = [np.broadcast_to(R.cast(np.asarray(v), dt), ty.shape) for v in vals]
        return _LOGICAL[name](x != 0, y != 0)
    return build(g, f"jnp.{name}", "logical", f"jnp.{name}({{0}}, {{1}})",
                 ordered(g, ("v", a), b), rule_logical(g), compute)


_BITWISE = {"bitwise_and": ("jnp.bitwise_and({0}, {1})", np.bitwise_and),
            "bitwise_or": ("jnp.bitwise_or({0}, {1})", np.bitwise_or),
            "bitwise_xor": ("jnp.bitwise_xor({0}, {1})", np.bitwise_xor),
            "op_and": ("{0} & {1}", np.bitwise_and), "op_or": ("{0} | {1}", np.bitwise_or),
            "op_xor": ("{0} ^ {1}", np.bitwise_xor)}


def bitwise(g):
    name = g.pick(sorted(_BITWISE))
    template, fn = _BITWISE[name]
    kinds = "biu" if g.flag(0.95) else "f"
    a = g.operand(g.dtypes(kinds), py_scalar_ok=not name.startswith("op_"))
    b = second_operand(g, a, g.dtypes("biu"), literal_kinds="bi",
                       py_scalar_ok=not name.startswith("op_"))
    label = name if name.startswith("op_") else f"jnp.{name}"
    return build(g, label, "bitwise", template, [("v", a), b], rule_promote(g, "biu"),
                 exact(fn))


_SHIFTS = {
    "left_shift": ("jnp.left_shift({0}, {1})", "jnp"), "right_shift":
    ("jnp.right_shift({0}, {1})", "jnp"), "op_lshift": ("{0} << {1}", "jnp"),
    "op_rshift": ("{0} >> {1}", "jnp"), "lax.shift_left": ("lax.shift_left({0}, {1})", "lax"),
    "lax.shift_right_arithmetic": ("lax.shift_right_arithmetic({0}, {1})", "lax"),
    "lax.shift_right_logical": ("lax.shift_right_logical({0}, {1})", "lax"),
}


def shift(g):
    names = sorted(_SHIFTS)
    if "shift_operators" in g.broken:
        names = [n for n in names if not n.startswith("op_")]
    name = g.pick(names)
    template, kind = _SHIFTS[name]
    guard = "shift_out_of_range" in g.broken
    kinds = "iu" if guard or kind == "lax" else "biu"
    a = g.operand(g.dtypes(kinds), weak_ok=not guard, py_scalar_ok=False)
    if kind == "lax":
        b = ("v", g.operand([g.ty(a).dtype], shape=g.ty(a).shape, py_scalar_ok=False))
        rule = rule_lax_same(g, "iu")
    else:
        b = second_operand(g, a, g.dtypes(kinds), literal_kinds="" if guard else "i",
                           py_scalar_ok=False, weak_ok=not guard)
        rule = rule_numeric(g, "iu")
    if guard:
        b = ("v", _shift_guard(g, b[1]))
    op = {"left_shift": "shl", "op_lshift": "shl", "lax.shift_left": "shl",
          "lax.shift_right_arithmetic": "sra", "lax.shift_right_logical": "srl"}.get(name)

    def compute(vals, tys, ty):
        x, s = promoted(vals, ty)
        which = op or ("srl" if jt.kind(ty.dtype) == "u" else "sra")
        return {"shl": R.shift_left, "sra": R.shift_right_arithmetic,
                "srl": R.shift_right_logical}[which](x, s)
    label = name if name.startswith(("op_", "lax.")) else f"jnp.{name}"
    return build(g, label, "shift", template, [("v", a), b], rule, compute)


def where(g):
    form = g.pick(["jnp.where", "lax.select", "jnp.clip", "lax.clamp"])
    if form == "jnp.where":
        c = g.operand(g.dtypes(), py_scalar_ok=True)
        x = second_operand(g, c, g.dtypes())
        y = second_operand(g, x[1] if x[0] == "v" else c, g.dtypes())

        def compute(vals, tys, ty):
            cond = np.broadcast_to(np.asarray(vals[0]) != 0, ty.shape)
            xv, yv = promoted(vals[1:], ty)
            return np.where(cond, xv, yv)
        return build(g, "jnp.where", "where", "jnp.where({0}, {1}, {2})", [("v", c), x, y],
                     lambda tys: jt.result_dtype(tys[1:], g.x64), compute)
    if form == "lax.select":
        # (An int32 predicate is lax.select_n's case index, not an error: left out.)
        c = g.operand(["bool"] if g.flag(0.95) else g.dtypes("f"))
        x = g.operand(g.dtypes(), shape=g.ty(c).shape)
        y = g.operand([g.ty(x).dtype], shape=g.ty(c).shape)

        def rule(tys):
            if tys[0].dtype != "bool":
                raise Raises(TypeError)
            return rule_lax_same(g)(tys[1:])

        def compute(vals, tys, ty):
            return np.where(np.asarray(vals[0]), vals[1], vals[2]).astype(jt.np_dtype(ty.dtype))
        return build(g, "lax.select", "where", "lax.select({0}, {1}, {2})",
                     [("v", c), ("v", x), ("v", y)], rule, compute)
    if form == "lax.clamp":
        x = g.operand(g.dtypes("iuf"))
        t = g.ty(x)
        lo = g.operand([t.dtype], shape=() if g.flag(0.5) else t.shape)
        hi = g.operand([t.dtype], shape=g.ty(lo).shape)

        def compute(vals, tys, ty):
            lo_v, xv, hi_v = [np.broadcast_to(np.asarray(v), ty.shape) for v in vals]
            return R.lax_min(R.lax_max(xv, lo_v), hi_v)
        return build(g, "lax.clamp", "where", "lax.clamp({0}, {1}, {2})",
                     [("v", lo), ("v", x), ("v", hi)],
                     lambda tys: (t.dtype, all(s.weak for s in tys)), compute,
                     shape=t.shape)
    x = g.operand(g.dtypes("iuf"), py_scalar_ok=False)
    bounds = []
    for _ in range(2):
        bounds.append(None if g.flag(0.2) else second_operand(g, x, g.dtypes("iuf"), "if"))
    texts = ["{0}"] + [f"{k}={{{i + 1}}}" for i, k in enumerate(["min", "max"])]
    operands = [("v", x)] + [b for b in bounds if b is not None]
    parts = [texts[0]]
    j = 1
    for k, b in zip(["min", "max"], bounds):
        if b is not None:
            parts.append(f"{k}={{{j}}}")
            j += 1
    template = "jnp.clip(" + ", ".join(parts) + ")"
    has = [b is not None for b in bounds]

    def rule(tys):
        cur = tys[0]
        for i, present in enumerate(has):
            if present:
                other = tys[1 + sum(has[:i])]
                dt, weak = jt.result_dtype([other, cur], g.x64)
                cur = Ty(cur.shape, dt, weak)
        return cur.dtype, cur.weak

    def compute(vals, tys, ty):
        cur, k = np.asarray(vals[0]), 1
        cur_ty = tys[0]
        for present, fn in zip(has, (R.lax_max, R.lax_min)):
            if present:
                other_ty = tys[k]
                dt, weak = jt.result_dtype([other_ty, cur_ty], g.x64)
                step = Ty(jt.broadcast_shapes(cur.shape, np.shape(vals[k])), dt, weak)
                o, c = promoted([vals[k], cur], step)
                cur, cur_ty = fn(o, c), Ty(step.shape, dt, weak)
                k += 1
        return np.broadcast_to(R.cast(cur, ty.dtype), ty.shape)
    return build(g, "jnp.clip", "where", template, operands, rule, compute)


def cast(g):
    # No Python scalar operands: jnp.asarray(float('nan'), dtype=int) converts on the host
    # with numpy's rules, not XLA's.
    a = g.operand(g.dtypes())
    target = g.pick(jt.ALL)
    canon = jt.canonical(target, g.x64)
    form = g.pick(["astype", "asarray", "lax"])
    dt_text = f"jnp.{target}"
    template = {"astype": "{0}.astype(%s)", "asarray": "jnp.asarray({0}, dtype=%s)",
                "lax": "lax.convert_element_type({0}, %s)"}[form] % dt_text

    def compute(vals, tys, ty):
        return R.cast(np.asarray(vals[0]), ty.dtype)
    return build(g, f"cast:{form}", "cast", template, [("v", a)],
                 lambda tys: (canon, False), compute)


FAMILIES = [unary_math, unary_numeric, binary_arith, binary_arith, power, compare, logical,
            bitwise, shift, where, cast, cast]

__all__ = ["FAMILIES", "Raises", "build", "promoted", "literal", "second_operand",
           "transcendental"]

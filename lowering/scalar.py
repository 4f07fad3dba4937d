"""Scalar expression tables: primitive -> source of one scalar expression.

``RULES`` is the neutral table, in numpy/math spelling, that every backend starts from: a
fused region is these expressions chained in one loop body. A backend overrides only the
entries that differ; the CPU's ``CPU_OVERRIDES`` swap in vmath's vectorizable functions
(``vm.*``), which LLVM can vectorize where a libm call would stop it. Every result is wrapped
in its dtype's constructor so Numba's integer widening (int32+int32 -> int64) and float64
literals never leak into the result type.
"""
import numpy as np

from numjax.lax import bits as lb
from numjax.lax import elementwise as ew
from numjax.lax import random_bits as rb
from numjax.lax import sharding_ops
from numjax.numpy import _elementwise as jnp_ew

from . import vmath as _vmath


def np_type(dtype):
    dtype = np.dtype(dtype)
    return "np.bool_" if dtype == np.bool_ else f"np.{dtype.name}"


def literal(val, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return "True" if val else "False"
    if dtype.kind == "f":
        v = float(val)
        if np.isnan(v):
            return f"{np_type(dtype)}(np.nan)"
        if np.isinf(v):
            return f"{np_type(dtype)}({'-' if v < 0 else ''}np.inf)"
        return f"{np_type(dtype)}({v!r})"
    if dtype.kind == "c":
        z = complex(val)
        return f"{np_type(dtype)}(complex({literal(z.real, np.float64)}, {literal(z.imag, np.float64)}))"
    return f"{np_type(dtype)}({int(val)})"


def _unary_math(np_name):
    return lambda args, in_dtypes, out_dtype, params: f"np.{np_name}({args[0]})"


def _binop(op):
    return lambda args, in_dtypes, out_dtype, params: f"({args[0]} {op} {args[1]})"


def _call(helper):
    return lambda args, in_dtypes, out_dtype, params: f"{helper}({', '.join(args)})"


def _integer_pow(args, in_dtypes, out_dtype, params):
    # Square-and-multiply in XLA's order, so results round exactly as JAX's do.
    y, x = params["y"], args[0]
    if y == 0:
        return literal(1, out_dtype)
    cast = np_type(out_dtype)
    acc, base, n = None, x, abs(y)
    while n:
        if n & 1:
            acc = base if acc is None else f"{cast}({acc} * {base})"
        n >>= 1
        if n:
            base = f"{cast}({base} * {base})"
    return f"({literal(1, out_dtype)} / {acc})" if y < 0 else f"({acc})"


def _convert(args, in_dtypes, out_dtype, params):
    src, dst = np.dtype(in_dtypes[0]), np.dtype(out_dtype)
    if dst == np.bool_:
        return f"({args[0]} != 0)"
    if src.kind == "f" and dst.kind in "iu":
        return f"sh.f2i_{dst.name}({args[0]})"
    if src.kind == "c" and dst.kind != "c":   # XLA keeps the real part
        return _convert([f"{args[0]}.real"], [np.finfo(src).dtype], out_dtype, params)
    return args[0]


def _exp2(table, args, in_dtypes, out_dtype, params):
    # XLA's exp2: exp(ln 2 * x), the constant in x's dtype; exp as ``table`` computes it.
    scaled = f"{np_type(out_dtype)}({literal(np.log(2), out_dtype)} * {args[0]})"
    return (table.get(ew.exp_p) or RULES[ew.exp_p])([scaled], in_dtypes, out_dtype, params)


def bitcast_rule(bits_prefix, unsupported, backend):
    """bitcast_convert_type's rule for a backend whose float<->bits helpers are
    ``{bits_prefix}_f32_bits`` / ``{bits_prefix}_f32_from_bits`` (and f64)."""
    def rule(args, in_dtypes, out_dtype, params):
        # Same-width reinterpretation (the storage rewrite, lowering/low_precision.py, gives
        # bitcasts between widths as shifts); integer<->integer is the wrapping cast expression() adds.
        src, dst = np.dtype(in_dtypes[0]), np.dtype(out_dtype)
        if src == dst:
            return args[0]
        if src.itemsize != dst.itemsize or np.bool_ in (src, dst) or "f2" in (src.str[1:], dst.str[1:]):
            raise unsupported(f"bitcast_convert_type {src.name} -> {dst.name} has no {backend} lowering")
        width = 8 * src.itemsize
        if dst.kind == "f":
            return f"{bits_prefix}_f{width}_from_bits(np.int{width}({args[0]}))"
        if src.kind == "f":
            return f"{bits_prefix}_f{width}_bits({args[0]})"
        return args[0]
    return rule


_bitcast_convert = bitcast_rule("vm.", NotImplementedError, "CPU")


def _select_n(args, in_dtypes, out_dtype, params):
    which, cases = args[0], args[1:]
    if len(cases) == 1:
        return cases[0]
    if np.dtype(in_dtypes[0]) == np.bool_:
        return f"({cases[1]} if {which} else {cases[0]})"
    expr = cases[-1]
    for k in range(len(cases) - 2, -1, -1):
        expr = f"({cases[k]} if {which} <= {k} else {expr})"
    return expr


def _widened(arg, dtype, signed):
    """``arg`` (of integer ``dtype``) as a 64-bit integer: its bits read as signed or unsigned
    of its own width, then sign- or zero-extended.  The integer helpers take this form."""
    dtype = np.dtype(dtype)
    own = f"np.{'int' if signed else 'uint'}{8 * dtype.itemsize}"
    wide = "np.int64" if signed else "np.uint64"
    return f"{wide}({own}({arg}))"


def _div(args, in_dtypes, out_dtype, params):
    kind = np.dtype(out_dtype).kind
    if kind in "iu":
        helper = "sh.sdiv" if kind == "i" else "sh.udiv"
        return f"{helper}({_widened(args[0], out_dtype, kind == 'i')}, {_widened(args[1], out_dtype, kind == 'i')})"
    return f"({args[0]} / {args[1]})"


def _rem(args, in_dtypes, out_dtype, params):
    kind = np.dtype(out_dtype).kind
    if kind in "iu":
        helper = "sh.srem" if kind == "i" else "sh.urem"
        return f"{helper}({_widened(args[0], out_dtype, kind == 'i')}, {_widened(args[1], out_dtype, kind == 'i')})"
    return f"np.fmod({args[0]}, {args[1]})"


def _shift(helper, signed_operand):
    # The amount is read as unsigned of the operand's width (XLA's reading), the operand as the
    # helper needs it; the cast expression() adds keeps the low bits of the 64-bit result.
    def rule(args, in_dtypes, out_dtype, params):
        x = _widened(args[0], out_dtype, signed_operand)
        return f"sh.{helper}({x}, {_widened(args[1], out_dtype, False)})"
    return rule


RULES = {
    ew.add_p: _binop("+"), ew.add_any_p: _binop("+"),
    ew.stop_gradient_p: lambda a, i, o, p: a[0], sharding_ops.reshard_p: lambda a, i, o, p: a[0],
    sharding_ops.sharding_constraint_p: lambda a, i, o, p: a[0],
    ew.sub_p: _binop("-"), ew.mul_p: _binop("*"),
    ew.div_p: _div, ew.rem_p: _rem,
    ew.neg_p: lambda a, i, o, p: f"(-{a[0]})",
    ew.max_p: _call("sh.fmax"), ew.min_p: _call("sh.fmin"), ew.pow_p: _call("np.power"),
    ew.integer_pow_p: _integer_pow,
    ew.exp_p: _unary_math("exp"), ew.exp2_p: lambda a, i, o, p: _exp2(RULES, a, i, o, p),
    ew.log_p: _unary_math("log"),
    ew.log1p_p: _unary_math("log1p"), ew.expm1_p: _unary_math("expm1"), ew.tanh_p: _unary_math("tanh"),
    ew.logistic_p: _call("sh.logistic"),
    ew.sin_p: _unary_math("sin"), ew.cos_p: _unary_math("cos"), ew.tan_p: _unary_math("tan"),
    ew.asin_p: _unary_math("arcsin"), ew.acos_p: _unary_math("arccos"), ew.atan_p: _unary_math("arctan"),
    ew.sinh_p: _unary_math("sinh"), ew.cosh_p: _unary_math("cosh"), ew.asinh_p: _unary_math("arcsinh"),
    ew.acosh_p: _unary_math("arccosh"), ew.atanh_p: _unary_math("arctanh"),
    ew.atan2_p: _call("np.arctan2"),
    ew.nextafter_p: _call("np.nextafter"),
    ew.sqrt_p: _unary_math("sqrt"), ew.cbrt_p: _unary_math("cbrt"),
    ew.rsqrt_p: lambda a, i, o, p: f"({literal(1, o)} / np.sqrt({a[0]}))",
    ew.erf_p: _call("math.erf"),
    rb.threefry2x32_xor_p: _call("vm.threefry2x32_xor"),
    rb.mul_add_p: lambda a, i, o, p: (f"vm._fma_f32({a[0]}, {a[1]}, {a[2]})" if np.dtype(o) == np.float32
                                      else f"vm._fma({a[0]}, {a[1]}, {a[2]})"),
    ew.abs_p: lambda a, i, o, p: f"abs({a[0]})", ew.sign_p: _call("sh.sign"),
    ew.floor_p: _unary_math("floor"), ew.ceil_p: _unary_math("ceil"),
    ew.round_p: lambda a, i, o, p: (f"np.rint({a[0]})" if p.get("rounding_method") == 1
                                    else f"sh.round_away({a[0]})"),
    ew.is_finite_p: lambda a, i, o, p: f"np.isfinite({a[0]})",
    ew.eq_p: _binop("=="), ew.ne_p: _binop("!="), ew.lt_p: _binop("<"), ew.le_p: _binop("<="),
    ew.gt_p: _binop(">"), ew.ge_p: _binop(">="),
    ew.and_p: _binop("&"), ew.or_p: _binop("|"), ew.xor_p: _binop("^"),
    ew.not_p: lambda a, i, o, p: f"(not {a[0]})" if np.dtype(o) == np.bool_ else f"(~{a[0]})",
    ew.select_n_p: _select_n, ew.convert_element_type_p: _convert,
    ew.bitcast_convert_type_p: _bitcast_convert,
    ew.clamp_p: lambda a, i, o, p: f"sh.fmin(sh.fmax({a[1]}, {a[0]}), {a[2]})",
    ew.shift_left_p: _shift("shift_left", True),
    ew.shift_right_arithmetic_p: _shift("shift_right_arithmetic", True),
    ew.shift_right_logical_p: _shift("shift_right_logical", False),
    lb.population_count_p: lambda a, i, o, p: f"sh.popcount({_widened(a[0], o, False)})",
    lb.clz_p: lambda a, i, o, p: (f"(np.int64({8 * np.dtype(o).itemsize}) - "
                                  f"np.int64(sh.popcount(sh.fill_below({_widened(a[0], o, False)}))))"),
}


# Complex parts (the primitives jnp.real/imag/conj/complex bind).
RULES.update({
    jnp_ew.real_p: lambda a, i, o, p: f"{a[0]}.real", jnp_ew.imag_p: lambda a, i, o, p: f"{a[0]}.imag",
    jnp_ew.conj_p: _call("np.conj"),
    jnp_ew.complex_p: _call("complex"),
})


# ---------------------------------------------------------------- CPU overrides

_VM_SUFFIXES = {np.dtype(np.float32): "_f32", np.dtype(np.float64): "_f64"}


def _vectorized(vm_name, neutral):
    """vmath's ``vm.NAME_f32``/``_f64`` where it exists for the result dtype, else ``neutral``."""
    def rule(args, in_dtypes, out_dtype, params):
        suffix = _VM_SUFFIXES.get(np.dtype(out_dtype))
        if suffix and hasattr(_vmath, vm_name + suffix):
            return f"vm.{vm_name}{suffix}({', '.join(args)})"
        if neutral is None:
            raise NotImplementedError(f"{vm_name} of {np.dtype(out_dtype).name} has no CPU lowering")
        return neutral(args, in_dtypes, out_dtype, params)
    return rule


_VM_NAMES = {ew.exp_p: "exp", ew.log_p: "log", ew.log1p_p: "log1p", ew.expm1_p: "expm1",
             ew.tanh_p: "tanh", ew.logistic_p: "logistic", ew.sin_p: "sin", ew.cos_p: "cos",
             ew.tan_p: "tan", ew.atan_p: "atan", ew.atan2_p: "atan2", ew.erf_p: "erf",
             ew.erf_inv_p: "erf_inv", ew.pow_p: "pow"}
CPU_OVERRIDES = {prim: _vectorized(vm_name, RULES.get(prim)) for prim, vm_name in _VM_NAMES.items()}


def _within_variant(prim, out_dtype, arg_ranges):
    """The name of vmath's variant of ``prim``'s function for arguments in ``arg_ranges``
    (``value_range``), or None (see ``within`` in vmath)."""
    name, suffix = _VM_NAMES.get(prim), _VM_SUFFIXES.get(np.dtype(out_dtype))
    fn = _vmath.PLAIN.get(name + suffix) if name and suffix else None
    if fn is None or len(arg_ranges) != 1 or arg_ranges[0] is None:
        return None
    for variant, holds in getattr(fn, "within", ()):
        if holds(arg_ranges[0]):
            return variant.__name__
    return None


CPU_OVERRIDES[ew.exp2_p] = lambda a, i, o, p: _exp2(CPU_OVERRIDES, a, i, o, p)


def _reduce_precision(args, in_dtypes, out_dtype, params):
    suffix = _VM_SUFFIXES.get(np.dtype(out_dtype))
    if suffix is None:
        raise NotImplementedError(f"reduce_precision of {np.dtype(out_dtype).name} has no CPU lowering")
    return f"sh.reduce_precision{suffix}({args[0]}, {int(params['exponent_bits'])}, {int(params['mantissa_bits'])})"


CPU_OVERRIDES[lb.reduce_precision_p] = _reduce_precision


def rule_for(prim, overrides=CPU_OVERRIDES):
    """A backend's scalar rule for ``prim``: its override, else the neutral rule."""
    rule = overrides.get(prim) or RULES.get(prim)
    if rule is None:
        raise NotImplementedError(f"no scalar lowering for primitive {prim.name}")
    return rule


def expression(prim, args, in_dtypes, out_dtype, params, overrides=CPU_OVERRIDES, arg_ranges=None):
    """Source of ``prim`` applied to scalar sources ``args``, cast to ``out_dtype``; on the CPU,
    given the arguments' ``value_range.Range`` (None: unknown), a vmath variant for them."""
    variant = _within_variant(prim, out_dtype, arg_ranges) if arg_ranges and overrides is CPU_OVERRIDES else None
    if variant is not None:
        expr = f"vm.{variant}({', '.join(args)})"
    else:
        expr = rule_for(prim, overrides)(args, in_dtypes, out_dtype, params)
    if np.dtype(out_dtype) == np.bool_:
        return expr
    return f"{np_type(out_dtype)}({expr})"


from . import scalar_special  # noqa: E402,F401  (registers its RULES)

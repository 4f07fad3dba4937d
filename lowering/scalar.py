"""Scalar expression table: primitive name -> source of one scalar expression.

Shared by the CPU loop templates here and, later, the CUDA kernels: a fused
region is just these expressions chained in one loop body. Every result is
wrapped in its dtype's constructor so Numba's integer widening (int32+int32 ->
int64) and float64 literals never leak into the result type.
"""
import numpy as np

from . import vmath as _vmath

_VMATH_FUNCS = {"exp", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos", "erf", "pow",
                "erf_inv", "tan", "atan", "atan2"}


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


def _vm(name, dtype):
    """vmath's vectorizable version when it has one for this dtype, else numpy's libm call."""
    suffix = {np.dtype(np.float32): "_f32", np.dtype(np.float64): "_f64"}.get(np.dtype(dtype))
    if suffix and name in _VMATH_FUNCS and hasattr(_vmath, name + suffix):
        return f"vm.{name}{suffix}"
    return None


def _unary_math(np_name, vm_name=None):
    def rule(args, in_dtypes, out_dtype, params):
        fn = _vm(vm_name or np_name, out_dtype) or f"np.{np_name}"
        return f"{fn}({args[0]})"
    return rule


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


def _bitcast_convert(args, in_dtypes, out_dtype, params):
    # Same-width reinterpretation; integer<->integer is the wrapping cast expression() adds.
    src, dst = np.dtype(in_dtypes[0]), np.dtype(out_dtype)
    if src.itemsize != dst.itemsize or np.bool_ in (src, dst) or "f2" in (src.str[1:], dst.str[1:]):
        raise NotImplementedError(f"bitcast_convert_type {src.name} -> {dst.name} has no CPU lowering")
    width = 8 * src.itemsize
    if dst.kind == "f":
        return f"vm._f{width}_from_bits(np.int{width}({args[0]}))"
    if src.kind == "f":
        return f"vm._f{width}_bits({args[0]})"
    return args[0]


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


def _div(args, in_dtypes, out_dtype, params):
    if np.dtype(out_dtype).kind in "iu":
        return f"sh.idiv({args[0]}, {args[1]})"
    return f"({args[0]} / {args[1]})"


def _rem(args, in_dtypes, out_dtype, params):
    if np.dtype(out_dtype).kind in "iu":
        return f"sh.irem({args[0]}, {args[1]})"
    return f"np.fmod({args[0]}, {args[1]})"


def _pow(args, in_dtypes, out_dtype, params):
    fn = _vm("pow", out_dtype) or "np.power"
    return f"{fn}({args[0]}, {args[1]})"


RULES = {
    "add": _binop("+"), "add_any": _binop("+"),
    "stop_gradient": lambda a, i, o, p: a[0], "sub": _binop("-"), "mul": _binop("*"), "div": _div, "rem": _rem,
    "neg": lambda a, i, o, p: f"(-{a[0]})",
    "max": _call("sh.fmax"), "min": _call("sh.fmin"), "pow": _pow,
    "integer_pow": _integer_pow,
    "exp": _unary_math("exp"), "exp2": _unary_math("exp2"), "log": _unary_math("log"),
    "log1p": _unary_math("log1p"), "expm1": _unary_math("expm1"), "tanh": _unary_math("tanh"),
    "logistic": lambda a, i, o, p: f"{_vm('logistic', o) or 'sh.logistic'}({a[0]})",
    "sin": _unary_math("sin"), "cos": _unary_math("cos"), "tan": _unary_math("tan"),
    "asin": _unary_math("arcsin"), "acos": _unary_math("arccos"), "atan": _unary_math("arctan", "atan"),
    "sinh": _unary_math("sinh"), "cosh": _unary_math("cosh"), "asinh": _unary_math("arcsinh"),
    "acosh": _unary_math("arccosh"), "atanh": _unary_math("arctanh"),
    "atan2": lambda a, i, o, p: f"{_vm('atan2', o) or 'np.arctan2'}({a[0]}, {a[1]})",
    "nextafter": lambda a, i, o, p: f"np.nextafter({a[0]}, {a[1]})",
    "sqrt": _unary_math("sqrt"), "cbrt": _unary_math("cbrt"),
    "rsqrt": lambda a, i, o, p: f"({literal(1, o)} / np.sqrt({a[0]}))",
    "erf": lambda a, i, o, p: f"{_vm('erf', o) or 'math.erf'}({a[0]})",
    "erf_inv": lambda a, i, o, p: f"{_vm('erf_inv', o)}({a[0]})",
    "threefry2x32_xor": _call("vm.threefry2x32_xor"),
    "mul_add": lambda a, i, o, p: (f"vm._fma_f32({a[0]}, {a[1]}, {a[2]})" if np.dtype(o) == np.float32
                                   else f"vm._fma({a[0]}, {a[1]}, {a[2]})"),
    "abs": lambda a, i, o, p: f"abs({a[0]})", "sign": _call("sh.sign"),
    "floor": _unary_math("floor"), "ceil": _unary_math("ceil"),
    "round": lambda a, i, o, p: (f"np.rint({a[0]})" if p.get("rounding_method") == 1
                                 else f"sh.round_away({a[0]})"),
    "is_finite": lambda a, i, o, p: f"np.isfinite({a[0]})",
    "eq": _binop("=="), "ne": _binop("!="), "lt": _binop("<"), "le": _binop("<="),
    "gt": _binop(">"), "ge": _binop(">="),
    "and": _binop("&"), "or": _binop("|"), "xor": _binop("^"),
    "not": lambda a, i, o, p: f"(not {a[0]})" if np.dtype(o) == np.bool_ else f"(~{a[0]})",
    "select_n": _select_n, "convert_element_type": _convert,
    "bitcast_convert_type": _bitcast_convert,
    "clamp": lambda a, i, o, p: f"sh.fmin(sh.fmax({a[1]}, {a[0]}), {a[2]})",
    "shift_left": _binop("<<"), "shift_right_arithmetic": _binop(">>"),
    "shift_right_logical": lambda a, i, o, p: (
        f"{np_type(o)}({_unsigned(o)}({a[0]}) >> {_unsigned(o)}({a[1]}))"),
}


# Complex parts (the primitives jnp.real/imag/conj/complex bind).
RULES.update({
    "real": lambda a, i, o, p: f"{a[0]}.real", "imag": lambda a, i, o, p: f"{a[0]}.imag",
    "conj": lambda a, i, o, p: f"np.conj({a[0]})",
    "complex": lambda a, i, o, p: f"complex({a[0]}, {a[1]})",
})


def expression(name, args, in_dtypes, out_dtype, params):
    """Source of ``name`` applied to scalar sources ``args``, cast to ``out_dtype``."""
    expr = RULES[name](args, in_dtypes, out_dtype, params)
    if np.dtype(out_dtype) == np.bool_:
        return expr
    return f"{np_type(out_dtype)}({expr})"


def _unsigned(dtype):
    return np_type(np.dtype(f"u{np.dtype(dtype).itemsize}"))


def is_elementwise(name):
    return name in RULES


from . import scalar_special  # noqa: E402,F401  (registers its RULES)

"""The functions kernel source may call that ``pyir`` maps to LLVM directly: dtype
constructors, ``abs``, ``math``/``np`` functions (LLVM intrinsics or libm, as Numba maps
them), and the low-level helpers of ``vmath`` (bit casts, fma, rint, floor, division)."""
import math

import numpy as np
from llvmlite import ir

from .pyir import BOOL, F32, F64, I64, Const, Unsupported, Val, const_of, lltype, promote

_DTYPE_CTORS = {np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
                np.uint16, np.uint32, np.uint64, np.bool_}

# name -> (LLVM intrinsic or None, libm name, arity)
_FLOAT_FUNCS = {
    "sqrt": ("llvm.sqrt", None, 1), "floor": ("llvm.floor", None, 1), "ceil": ("llvm.ceil", None, 1),
    "rint": ("llvm.rint", None, 1), "fabs": ("llvm.fabs", None, 1), "trunc": ("llvm.trunc", None, 1),
    "exp": ("llvm.exp", None, 1), "log": ("llvm.log", None, 1), "sin": ("llvm.sin", None, 1),
    "cos": ("llvm.cos", None, 1), "pow": ("llvm.pow", None, 2), "power": ("llvm.pow", None, 2),
    "copysign": ("llvm.copysign", None, 2), "exp2": ("llvm.exp2", None, 1), "log2": ("llvm.log2", None, 1),
    "log10": ("llvm.log10", None, 1),
    "tan": (None, "tan", 1), "arcsin": (None, "asin", 1), "asin": (None, "asin", 1),
    "arccos": (None, "acos", 1), "acos": (None, "acos", 1), "arctan": (None, "atan", 1),
    "atan": (None, "atan", 1), "arctan2": (None, "atan2", 2), "atan2": (None, "atan2", 2),
    "sinh": (None, "sinh", 1), "cosh": (None, "cosh", 1), "tanh": (None, "tanh", 1),
    "arcsinh": (None, "asinh", 1), "asinh": (None, "asinh", 1), "arccosh": (None, "acosh", 1),
    "acosh": (None, "acosh", 1), "arctanh": (None, "atanh", 1), "atanh": (None, "atanh", 1),
    "expm1": (None, "expm1", 1), "log1p": (None, "log1p", 1), "cbrt": (None, "cbrt", 1),
    "erf": (None, "erf", 1), "erfc": (None, "erfc", 1), "fmod": (None, "fmod", 2),
    "nextafter": (None, "nextafter", 2), "lgamma": (None, "lgamma", 1), "gamma": (None, "tgamma", 1),
}

# vmath's low-level helpers (pure-Python bodies; one LLVM instruction each)
_BITCASTS = {"_f32_bits": np.int32, "_f32_from_bits": np.float32,
             "_f64_bits": np.int64, "_f64_from_bits": np.float64}


def call_builtin(tr, scope, f, args):
    """LLVM for a call of ``f`` when it is one of the functions above, else None."""
    if f in _DTYPE_CTORS:
        return _convert(tr, scope, np.dtype(f), args[0] if args else Const(0, np.dtype(f)))
    if f is abs:
        return _abs(tr, scope, args[0])
    if f in (min, max):
        return _minmax(tr, scope, f is max, args)
    if f is float:
        # As Numba types it: a float keeps its type (float(float32) is a float32).
        return _convert(tr, scope, args[0].dt if args[0].dt.kind == "f" else F64, args[0])
    if f is int:
        return _convert(tr, scope, I64, args[0])
    if f is bool:
        return tr.truth(scope, args[0])
    name = getattr(f, "__name__", None)
    module = getattr(f, "__module__", None) or ""
    if module.endswith("vmath") and name in _BITCASTS:
        v = tr.materialize(scope, args[0])
        dt = np.dtype(_BITCASTS[name])
        return Val(scope.func.b.bitcast(v.v, lltype(dt)), dt)
    if module.endswith("vmath") and name in ("_fdiv", "_rint", "_fma", "_fma_f32", "_floor", "_libm_pow"):
        return _vmath_helper(tr, scope, name, args)
    if f is np.isfinite or f is math.isfinite:
        return _classify(tr, scope, args[0], "finite")
    if f is np.isnan or f is math.isnan:
        return _classify(tr, scope, args[0], "nan")
    if f is np.isinf or f is math.isinf:
        return _classify(tr, scope, args[0], "inf")
    if (f is getattr(np, name, None) or f is getattr(math, name, None)) and name in _FLOAT_FUNCS:
        return _float_func(tr, scope, f, name, args)
    return None


def _convert(tr, scope, dt, v):
    if isinstance(v, Const):
        return tr.const_cast(v, dt)
    return tr.cast(scope, v, dt)


def _abs(tr, scope, v):
    if isinstance(v, Const):
        return Const(abs(v.py), v.dt if v.dt != BOOL else I64)
    b = scope.func.b
    if v.dt.kind == "f":
        return Val(b.call(tr.intrinsic("llvm.fabs", v.dt, 1), [v.v]), v.dt)
    v = tr.cast(scope, v, promote(v.dt, v.dt))
    if v.dt.kind == "u":
        return v
    neg = b.icmp_signed("<", v.v, ir.Constant(v.v.type, 0))
    return Val(b.select(neg, b.neg(v.v), v.v), v.dt)


def _minmax(tr, scope, is_max, args):
    acc = args[0]
    for v in args[1:]:
        better = tr.compare(scope, ">" if is_max else "<", v, acc)
        acc = tr.select(scope, better, v, acc)
    return acc


def _classify(tr, scope, v, what):
    v = tr.materialize(scope, v)
    b = scope.func.b
    if v.dt.kind != "f":
        return Const(what == "finite", BOOL)
    if what == "nan":
        return Val(b.fcmp_unordered("uno", v.v, v.v), BOOL)
    a = b.call(tr.intrinsic("llvm.fabs", v.dt, 1), [v.v])
    inf = ir.Constant(v.v.type, float("inf"))
    if what == "inf":
        return Val(b.fcmp_ordered("==", a, inf), BOOL)
    return Val(b.fcmp_ordered("<", a, inf), BOOL)


def _float_args(tr, scope, args, dt=None):
    if dt is None:
        dt = args[0].dt
        for a in args[1:]:
            dt = promote(dt, a.dt)
        if dt.kind != "f":
            dt = F64
    return dt, [tr.cast(scope, tr.materialize(scope, a), dt).v for a in args]


def _float_func(tr, scope, f, name, args):
    intrinsic, libm, n = _FLOAT_FUNCS[name]
    if len(args) != n:
        raise Unsupported(f"{name} with {len(args)} arguments")
    if all(isinstance(a, Const) for a in args) and f is not None:
        with np.errstate(all="ignore"):
            folded = const_of(f(*[np.array(a.py, a.dt)[()] for a in args]))
        if folded is not None and not isinstance(folded, tuple):
            return folded
    dt, vals = _float_args(tr, scope, args)
    b = scope.func.b
    if intrinsic is not None:
        return Val(b.call(tr.intrinsic(intrinsic, dt, n), vals), dt)
    return Val(b.call(tr.libm(libm, dt, n), vals), dt)


def _vmath_helper(tr, scope, name, args):
    b = scope.func.b
    if name == "_fdiv":
        dt, (x, y) = _float_args(tr, scope, args)
        return Val(b.fdiv(x, y), dt)
    if name in ("_rint", "_floor"):
        dt, (x,) = _float_args(tr, scope, args)
        return Val(b.call(tr.intrinsic("llvm.rint" if name == "_rint" else "llvm.floor", dt, 1), [x]), dt)
    if name == "_libm_pow":
        dt, vals = _float_args(tr, scope, args)
        return Val(b.call(tr.intrinsic("llvm.pow", dt, 2), vals), dt)
    dt, vals = _float_args(tr, scope, args, F32 if name == "_fma_f32" else None)
    return Val(b.call(tr.intrinsic("llvm.fma", dt, 3), vals), dt)

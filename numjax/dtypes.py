"""dtype rules of JAX: canonical dtypes under x32/x64, weak types and the promotion lattice.

Python scalars are *weakly typed*: they take the dtype of the array they meet
(``f32_array * 2.0`` stays float32). Promotion is the least upper bound in
JAX's lattice, where the weak categories sit below every concrete dtype of
their kind.
"""
import functools

import ml_dtypes
import numpy as np

from .config import config

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

# The machine-learning types numpy lacks, from ml_dtypes (as JAX). numpy gives them kind "V"
# (float8_e5m2 "f"), so code asks ``kind(dtype)`` rather than ``dtype.kind``.
bfloat16 = np.dtype(ml_dtypes.bfloat16)
_FLOAT8_NAMES = ("float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
                 "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn")
(float8_e3m4, float8_e4m3, float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2,
 float8_e5m2fnuz, float8_e8m0fnu, float4_e2m1fn) = (np.dtype(getattr(ml_dtypes, n)) for n in _FLOAT8_NAMES)
int2, int4, uint2, uint4 = (np.dtype(getattr(ml_dtypes, n)) for n in ("int2", "int4", "uint2", "uint4"))
float8_dtypes = frozenset(np.dtype(getattr(ml_dtypes, n)) for n in _FLOAT8_NAMES)
# Floats narrower than float32 that numjax computes in float32, rounding every result (XLA's CPU
# backend does the same): what ``lax.low_precision`` and the lowering's storage rewrite handle.
low_precision_floats = frozenset({bfloat16}) | float8_dtypes
_INTN_KINDS = {int2: "i", int4: "i", uint2: "u", uint4: "u"}

# Weak categories are strings so they never collide with numpy dtypes.
_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX = "i*", "f*", "c*"

_LATTICE = {
    bool_: [_WEAK_INT],
    _WEAK_INT: [uint8, int8, int4, uint4, int2, uint2],
    int4: [], uint4: [], int2: [], uint2: [],
    uint8: [int16, uint16], uint16: [int32, uint32], uint32: [int64, uint64], uint64: [_WEAK_FLOAT],
    int8: [int16], int16: [int32], int32: [int64], int64: [_WEAK_FLOAT],
    # bfloat16 and float16 meet at float32; the 8-bit floats (and the sub-byte ints above) sit
    # alone under the weak category: they combine with Python scalars only (JAX's rule).
    _WEAK_FLOAT: [_WEAK_COMPLEX, float16, bfloat16, *sorted(float8_dtypes, key=str)],
    **{d: [] for d in float8_dtypes},
    float16: [float32], bfloat16: [float32], float32: [float64, complex64], float64: [complex128],
    _WEAK_COMPLEX: [complex64], complex64: [complex128], complex128: [],
}


def _upper_sets():
    ups = {}

    def visit(node):
        if node not in ups:
            s = {node}
            for child in _LATTICE[node]:
                s |= visit(child)
            ups[node] = frozenset(s)
        return ups[node]

    for node in _LATTICE:
        visit(node)
    return ups


_UPPER = _upper_sets()


class TypePromotionError(ValueError):
    """Operand dtypes with no implicit promotion path (the 8-bit floats, the sub-byte ints)."""


def _least_upper_bound(nodes):
    common = frozenset.intersection(*(_UPPER[n] for n in nodes))
    for cand in common:
        if _UPPER[cand] == common:
            return cand
    named = tuple(n if isinstance(n, str) else n.name for n in nodes)
    raise TypePromotionError(
        f"Input dtypes {named} have no available implicit dtype promotion path. 8-bit floats and "
        "sub-byte integers only combine with their own dtype and Python scalars. Cast the inputs "
        "explicitly first, e.g. x.astype('float32').")


_X32_CANON = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


def canonicalize_dtype(dtype):
    """The dtype JAX actually stores: 64-bit types narrow when x64 is off."""
    dtype = np.dtype(dtype)
    if not config.jax_enable_x64:
        return _X32_CANON.get(dtype, dtype)
    return dtype


# Every dtype a JAX array may have (typed PRNG keys aside): numbers and bool. Strings,
# objects, datetimes and structured dtypes have no JAX counterpart.
_JAX_DTYPES = frozenset({bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                         float16, float32, float64, complex64, complex128, bfloat16,
                         int2, int4, uint2, uint4}) | float8_dtypes


def is_jax_dtype(dtype):
    """Whether arrays of ``dtype`` exist in JAX (numeric and bool dtypes, typed keys)."""
    if _is_key_dtype(dtype):
        return True
    try:
        return np.dtype(dtype) in _JAX_DTYPES
    except TypeError:
        return False


def check_user_dtype(dtype, fun_name=None):
    """The dtype an explicit ``dtype=`` request gets, as JAX decides it.

    Python's ``bool``/``int``/``float``/``complex`` mean the default dtypes (no warning);
    a 64-bit request with x64 off is narrowed with JAX's UserWarning; dtypes JAX has no
    arrays of (object, str, ...) and arrays passed as a dtype are refused."""
    if dtype is None:
        raise ValueError("dtype must be specified.")
    if hasattr(dtype, "aval") or isinstance(dtype, np.ndarray):
        raise ValueError("Passing an array as a dtype argument is no longer supported; instead of "
                         "dtype=arr use dtype=arr.dtype.")
    if _is_key_dtype(dtype):
        return dtype
    if isinstance(dtype, type) and dtype in _PYTHON_TYPE_DEFAULTS:
        return _PYTHON_TYPE_DEFAULTS[dtype]()
    np_dtype = np.dtype(dtype)
    where = f" in {fun_name}" if fun_name else ""
    if np_dtype not in _JAX_DTYPES:
        raise TypeError(f"JAX only supports number, bool, and string dtypes, got dtype {dtype}{where}: "
                        "JAX has no arrays of it. Pass a numeric or bool dtype such as jnp.float32, "
                        "jnp.int32 or jnp.bool_.")
    canonical = canonicalize_dtype(np_dtype)
    if canonical != np_dtype:
        import warnings
        requested = f" requested{where}" if fun_name else ""
        warnings.warn(f"Explicitly requested dtype {np_dtype.name}{requested} is not available, and "
                      f"will be truncated to dtype {canonical.name}. To enable more dtypes, set the "
                      "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment "
                      "variable. See https://github.com/jax-ml/jax#current-gotchas for more.",
                      UserWarning, stacklevel=_caller_stacklevel())
    return canonical


def _caller_stacklevel():
    """The stacklevel of the first frame outside numjax, so a warning names the user's line."""
    import sys
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == "numjax":
        frame, level = frame.f_back, level + 1
    return level


def default_int_dtype():
    return int64 if config.jax_enable_x64 else int32


def default_float_dtype():
    return float64 if config.jax_enable_x64 else float32


def default_complex_dtype():
    return complex128 if config.jax_enable_x64 else complex64


_PYTHON_TYPE_DEFAULTS = {bool: lambda: bool_, int: default_int_dtype, float: default_float_dtype,
                         complex: default_complex_dtype}


def _weak_default(cat):
    return {_WEAK_INT: default_int_dtype, _WEAK_FLOAT: default_float_dtype,
            _WEAK_COMPLEX: default_complex_dtype}[cat]()


def _node(dtype, weak):
    if not weak:
        return dtype
    kind = _kind(dtype)
    if kind in "iu":
        return _WEAK_INT
    if kind == "f":
        return _WEAK_FLOAT
    if kind == "c":
        return _WEAK_COMPLEX
    return dtype


@functools.lru_cache(maxsize=4096)
def _promote(pairs, x64):
    dts = {d for d, _ in pairs}
    weaks = [w for _, w in pairs]
    if len(dts) == 1 and not all(weaks):
        return canonicalize_dtype(pairs[0][0]), False
    if all(weaks):
        # As JAX's lattice_result_type: all-weak operands promote by their strong
        # counterparts and stay weak, so a (non-canonical) weak int8 stays int8.
        return canonicalize_dtype(_least_upper_bound(list(dts))), True
    node = _least_upper_bound([_node(d, w) for d, w in pairs])
    if isinstance(node, str):
        return canonicalize_dtype(_weak_default(node)), True
    return canonicalize_dtype(node), False


def promote(*dtype_weak_pairs):
    """(dtype, weak_type) of the result of combining operands given as (dtype, weak) pairs."""
    dt, weak = _promote(tuple(dtype_weak_pairs), config.jax_enable_x64)
    return dt, weak and dt != bool_   # as JAX's lattice: a promoted bool is never weak


def python_scalar_dtype(x):
    if isinstance(x, (bool, np.bool_)):
        return bool_
    if isinstance(x, int):
        return default_int_dtype()
    if isinstance(x, float):
        return default_float_dtype()
    if isinstance(x, complex):
        return default_complex_dtype()
    raise TypeError(f"{type(x)} is not a Python scalar")


def is_weak_scalar(x):
    return type(x) in (int, float, complex)


def dtype_and_weak(x):
    """(dtype, weak_type) of any array-like operand."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype, aval.weak_type
    if type(x) is bool:
        return bool_, False
    if type(x) in (int, float, complex):
        return python_scalar_dtype(x), True
    if isinstance(x, (str, bytes)):   # numpy would read 'a' as a dtype code
        raise TypeError(f"Value {x!r} with dtype {np.asarray(x).dtype} is not a valid JAX array type. "
                        "Only arrays of numeric types are supported by JAX.")
    return canonicalize_dtype(np.result_type(x)), False


def result_type(*args, return_weak_type_flag=False):
    dt, weak = promote(*(dtype_and_weak(a) if not _is_dtype_like(a) else (canonicalize_dtype(a), False)
                         for a in args))
    return (dt, weak) if return_weak_type_flag else dt


def _is_dtype_like(x):
    if isinstance(x, (np.dtype, type)) and not isinstance(x, (int, float)):
        return True
    return isinstance(x, str)


def promote_types(a, b):
    return promote((np.dtype(a), False), (np.dtype(b), False))[0]


class extended(np.generic):
    """Abstract base of JAX's non-numeric ("extended") dtypes, such as typed PRNG keys."""


class prng_key(extended):
    """Abstract dtype of typed PRNG key arrays (``jax.random.key``)."""


def _is_key_dtype(d):
    from ._prng import KeyDtype
    return isinstance(d, KeyDtype)


_KIND_CLASSES = {"f": (np.floating, np.inexact, np.number, np.generic),
                  "i": (np.signedinteger, np.integer, np.number, np.generic),
                  "u": (np.unsignedinteger, np.integer, np.number, np.generic)}


def _ml_dtype(x):
    """The ml_dtypes dtype ``x`` names (a dtype, scalar type, jnp scalar class or string), else None."""
    if _is_key_dtype(x):
        return None
    try:
        dt = np.dtype(getattr(x, "dtype", x)) if not isinstance(x, str) else np.dtype(x)
    except TypeError:
        return None
    return dt if dt in low_precision_floats or dt in _INTN_KINDS else None


def issubdtype(a, b):
    # Key dtypes (key<fry>) sit outside NumPy's hierarchy, under extended/prng_key.
    if _is_key_dtype(a):
        return _is_key_dtype(b) or (isinstance(b, type) and issubclass(prng_key, b))
    if _is_key_dtype(b):
        return False
    # The ml_dtypes types derive from np.generic only; JAX files them under floating/integer.
    ml_a = _ml_dtype(a)
    if ml_a is not None:
        if isinstance(b, type) and b in _KIND_CLASSES[_kind(ml_a)]:
            return True
        return ml_a == _ml_dtype(b)
    return np.issubdtype(a, b)


def _kind(dtype):
    return _INTN_KINDS.get(dtype, "f" if dtype in low_precision_floats else dtype.kind)


def kind(dtype):
    """numpy's kind letter ("b", "i", "u", "f", "c"), with the ml_dtypes floats as "f" and the
    sub-byte ints as "i"/"u" (numpy says "V" for them)."""
    return _kind(np.dtype(dtype))


def is_float(dtype):
    return kind(dtype) == "f"


def is_int(dtype):
    return kind(dtype) in "iu"


def is_inexact(dtype):
    return kind(dtype) in "fc"


def is_low_precision_float(dtype):
    return np.dtype(dtype) in low_precision_floats


def finfo(dtype):
    """numpy's finfo, also for bfloat16 and the 8-bit floats (ml_dtypes')."""
    return ml_dtypes.finfo(getattr(dtype, "dtype", dtype))


def iinfo(dtype):
    """numpy's iinfo, also for the sub-byte ints (ml_dtypes')."""
    return ml_dtypes.iinfo(getattr(dtype, "dtype", dtype))


def itemsize_bits(dtype):
    dt = np.dtype(getattr(dtype, "dtype", dtype))
    bits = {int2: 2, uint2: 2, int4: 4, uint4: 4, float4_e2m1fn: 4}.get(dt)
    return bits if bits is not None else 8 * dt.itemsize


_SHORT = {"bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
          "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
          "float16": "f16", "float32": "f32", "float64": "f64", "bfloat16": "bf16",
          "complex64": "c64", "complex128": "c128", "int2": "i2", "int4": "i4", "uint2": "u2",
          "uint4": "u4", **{n: n.replace("float", "f", 1) for n in _FLOAT8_NAMES}}


def short_name(dtype):
    """The abbreviation jaxprs print (``f32``, ``i32``, ``bool``)."""
    return _SHORT[np.dtype(dtype).name]

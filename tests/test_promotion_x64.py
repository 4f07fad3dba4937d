"""JAX's result dtypes and weak types, stated as rules and checked with x64 off and on
(differential-fuzzer findings 3-10 and 14, issue 11).

The rules (JAX 0.10.2):
- a float-producing function of bools or integers gives float32 when they have at most 32
  bits, under x64 too; only 64-bit integers need float64 (``to_inexact``);
- a numeric function of bools counts them as int32, under x64 too (``to_numeric``);
- index results (argsort, lexsort, nonzero, argwhere, argmax) are the default int: int64
  under x64;
- jnp reductions return strong types (lax's keep the operand's weak type);
- constants inside jnp's formulas are weak only beside a weak 0-d operand, so a weak scalar
  stays weak and a weak array's result is strong;
- jit keeps each output's weak type whatever else the program holds (float16 included).

Every row's ``call(jax, jnp, ...)`` takes the library, so tests/compat/test_promotion_x64_vs_jax.py
runs the same rows on real JAX and proves each rule is JAX's.
"""
from typing import Callable, NamedTuple, Optional

import numpy as np
import pytest

import numjax
import numjax.numpy as njnp

SMALL_INTS = ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32"]
WIDE_INTS = ["int64", "uint64"]          # exist only under x64
FLOATS = ["float16", "float32"]


def to_inexact(dtype, x64):
    """The float JAX computes a non-float dtype in."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return dtype
    return np.dtype(np.float64 if dtype.itemsize == 8 and x64 else np.float32)


def to_numeric(dtype, x64):
    """The number JAX counts a dtype as: bools are int32."""
    dtype = np.dtype(dtype)
    return np.dtype(np.int32) if dtype == np.bool_ else dtype


def default_int(dtype, x64):
    return np.dtype(np.int64 if x64 else np.int32)


def summed(dtype, x64):
    """The dtype sum counts in: bools and narrower integers widen to the default (u)int."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "biu":
        return dtype
    if dtype.kind == "u":
        return dtype if dtype.itemsize >= (8 if x64 else 4) else np.dtype(np.uint64 if x64 else np.uint32)
    return dtype if dtype.kind == "i" and dtype.itemsize >= (8 if x64 else 4) else default_int(dtype, x64)


def same(dtype, x64):
    return np.dtype(dtype)


class DtypeRow(NamedTuple):
    id: str
    call: Callable       # (jax, jnp, x) -> array, x of the parametrized dtype
    rule: Callable       # (input dtype, x64) -> result dtype
    dtypes: tuple = tuple(SMALL_INTS + WIDE_INTS + FLOATS)


def _two(x):
    return x, x


DTYPE_ROWS = [
    # float-producing functions (finding 3)
    DtypeRow("sin", lambda jax, jnp, x: jnp.sin(x), to_inexact),
    DtypeRow("exp", lambda jax, jnp, x: jnp.exp(x), to_inexact),
    DtypeRow("tanh", lambda jax, jnp, x: jnp.tanh(x), to_inexact),
    DtypeRow("arcsinh", lambda jax, jnp, x: jnp.arcsinh(x), to_inexact),
    DtypeRow("cbrt", lambda jax, jnp, x: jnp.cbrt(x), to_inexact),
    DtypeRow("reciprocal", lambda jax, jnp, x: jnp.reciprocal(x), to_inexact),
    DtypeRow("log2", lambda jax, jnp, x: jnp.log2(x), to_inexact),
    DtypeRow("sinc", lambda jax, jnp, x: jnp.sinc(x), to_inexact),
    DtypeRow("true_divide", lambda jax, jnp, x: x / x, to_inexact),
    DtypeRow("arctan2", lambda jax, jnp, x: jnp.arctan2(x, x), to_inexact),
    DtypeRow("hypot", lambda jax, jnp, x: jnp.hypot(x, x), to_inexact),
    DtypeRow("copysign", lambda jax, jnp, x: jnp.copysign(x, x), to_inexact),
    DtypeRow("logaddexp", lambda jax, jnp, x: jnp.logaddexp(x, x), to_inexact),
    DtypeRow("mean", lambda jax, jnp, x: jnp.mean(x), to_inexact),
    DtypeRow("var", lambda jax, jnp, x: jnp.var(x), to_inexact),
    DtypeRow("std", lambda jax, jnp, x: jnp.std(x), to_inexact),
    DtypeRow("average", lambda jax, jnp, x: jnp.average(x), to_inexact),
    DtypeRow("median", lambda jax, jnp, x: jnp.median(x), to_inexact),
    DtypeRow("quantile", lambda jax, jnp, x: jnp.quantile(x, 0.5), to_inexact),
    DtypeRow("histogram bin edges", lambda jax, jnp, x: jnp.histogram_bin_edges(x, 3), to_inexact),
    DtypeRow("sin under jit", lambda jax, jnp, x: jax.jit(jnp.sin)(x), to_inexact),
    # bools counted as numbers (finding 4)
    DtypeRow("square", lambda jax, jnp, x: jnp.square(x), to_numeric),
    DtypeRow("floor_divide", lambda jax, jnp, x: jnp.floor_divide(x, x), to_numeric),
    DtypeRow("remainder", lambda jax, jnp, x: jnp.remainder(x, x), to_numeric),
    DtypeRow("power", lambda jax, jnp, x: jnp.power(x, x), to_numeric, tuple(SMALL_INTS + WIDE_INTS)),
    # index results (finding 5)
    DtypeRow("argsort", lambda jax, jnp, x: jnp.argsort(x), default_int),
    DtypeRow("argsort descending", lambda jax, jnp, x: jnp.argsort(x, descending=True), default_int),
    DtypeRow("lexsort", lambda jax, jnp, x: jnp.lexsort((x, x)), default_int),
    DtypeRow("nonzero", lambda jax, jnp, x: jnp.nonzero(x)[0], default_int),
    DtypeRow("nonzero sized", lambda jax, jnp, x: jnp.nonzero(x, size=2)[0], default_int),
    DtypeRow("argwhere", lambda jax, jnp, x: jnp.argwhere(x), default_int),
    DtypeRow("argmax", lambda jax, jnp, x: jnp.argmax(x), default_int),
    DtypeRow("argpartition", lambda jax, jnp, x: jnp.argpartition(x, 1), lambda dt, x64: np.dtype(np.int32),
             tuple(SMALL_INTS[1:] + WIDE_INTS + FLOATS)),
    # sums widen small integers; cumulative_prod and partition keep the dtype
    DtypeRow("sum", lambda jax, jnp, x: jnp.sum(x), summed),
    DtypeRow("cumulative_sum", lambda jax, jnp, x: jnp.cumulative_sum(x), summed),
    DtypeRow("cumulative_prod", lambda jax, jnp, x: jnp.cumulative_prod(x), same, tuple(SMALL_INTS[1:] + FLOATS)),
    DtypeRow("partition", lambda jax, jnp, x: jnp.partition(x, 1), same, tuple(SMALL_INTS[1:] + WIDE_INTS + FLOATS)),
]


def dtype_cases():
    cases = []
    for row in DTYPE_ROWS:
        for x64 in (False, True):
            for dt in row.dtypes:
                if x64 or dt not in WIDE_INTS:
                    cases.append(pytest.param(row, dt, x64, id=f"{row.id}-{dt}-{'x64' if x64 else 'x32'}"))
    return cases


def operand(jnp, dtype):
    return jnp.asarray(np.array([1, 0, 1], dtype=dtype))


def check_dtype_row(row, dtype, x64, jax, jnp):
    out = row.call(jax, jnp, operand(jnp, dtype))
    assert np.dtype(out.dtype) == row.rule(dtype, x64), (row.id, dtype, x64, out.dtype)


class WeakRow(NamedTuple):
    id: str
    call: Callable       # (jax, jnp, lax) -> array
    dtype: str           # with x64 off; ``x64_dtype`` when it differs under x64
    weak: bool
    x64_dtype: Optional[str] = None
    shape: Optional[tuple] = None


def _weak_ints(jnp):
    # A weak int32 array: a bool array or-ed with a Python int.
    return jnp.bitwise_or(jnp.array([True, False]), 8)


def _clamp_strong_bounds(jnp, lax):
    w = _weak_ints(jnp)
    return lax.clamp(jnp.array(-9, w.dtype), w, jnp.array(36, w.dtype))


WEAK_ROWS = [
    # Python scalars under the promotion rules
    WeakRow("sin of a Python bool", lambda jax, jnp, lax: jnp.sin(False), "float32", False),
    WeakRow("sin of a Python int", lambda jax, jnp, lax: jnp.sin(1), "float32", True, "float64"),
    WeakRow("square of a Python bool", lambda jax, jnp, lax: jnp.square(False), "int32", False),
    WeakRow("floor_divide bools", lambda jax, jnp, lax: jnp.floor_divide(jnp.array([True]), True),
            "int32", False),
    # jit outputs keep their weak type beside float16 (finding 6)
    WeakRow("jit weak output beside float16",
            lambda jax, jnp, lax: jax.jit(lambda a, b: (a + 0, b + b))(jnp.array([True, False]),
                                                                      jnp.float16(1))[0], "int32", True,
            "int64"),
    WeakRow("jit Python scalar beside float16",
            lambda jax, jnp, lax: jax.jit(lambda a, b: (jnp.add(-a, True), lax.atan(b)))(0, jnp.float16(0))[0],
            "int32", True, "int64"),
    WeakRow("jit float16 output itself", lambda jax, jnp, lax: jax.jit(lambda b: b + 1)(jnp.float16(1)),
            "float16", False),
    # jnp reductions are strong; lax's keep the weak type (finding 7)
    WeakRow("sum of weak", lambda jax, jnp, lax: jnp.sum(_weak_ints(jnp)), "int32", False, "int64"),
    WeakRow("max of weak", lambda jax, jnp, lax: jnp.max(_weak_ints(jnp)), "int32", False, "int64"),
    WeakRow("prod of weak", lambda jax, jnp, lax: jnp.prod(_weak_ints(jnp)), "int32", False, "int64"),
    WeakRow("cumsum of weak", lambda jax, jnp, lax: jnp.cumsum(_weak_ints(jnp)), "int32", False, "int64"),
    WeakRow("any of weak", lambda jax, jnp, lax: jnp.any(_weak_ints(jnp)), "bool", False),
    WeakRow("sum keepdims of weak scalar", lambda jax, jnp, lax: jnp.sum(jnp.asarray(3), keepdims=True),
            "int32", False, "int64"),
    WeakRow("max of Python float", lambda jax, jnp, lax: jnp.max(3.0), "float32", False, "float64"),
    WeakRow("sum of weak under jit", lambda jax, jnp, lax: jax.jit(jnp.sum)(_weak_ints(jnp)), "int32", False,
            "int64"),
    WeakRow("lax reduce_sum of weak", lambda jax, jnp, lax: lax.reduce_sum(_weak_ints(jnp), (0,)),
            "int32", True, "int64"),
    WeakRow("lax cumsum of weak", lambda jax, jnp, lax: lax.cumsum(_weak_ints(jnp)), "int32", True, "int64"),
    # clamp is weak only when every operand is (finding 8)
    WeakRow("clamp strong bounds", lambda jax, jnp, lax: _clamp_strong_bounds(jnp, lax), "int32", False, "int64"),
    WeakRow("clamp Python bounds", lambda jax, jnp, lax: lax.clamp(-9, _weak_ints(jnp), 36), "int32", True,
            "int64"),
    # logical functions: strong unless the operands are weak scalars (finding 9)
    WeakRow("logical_and array and float", lambda jax, jnp, lax: jnp.logical_and(jnp.array([3, 0], jnp.int16), 1.0),
            "bool", False),
    WeakRow("logical_or bools and int", lambda jax, jnp, lax: jnp.logical_or(jnp.array([True]), 0), "bool", False),
    WeakRow("logical_not of weak array", lambda jax, jnp, lax: jnp.logical_not(_weak_ints(jnp)), "bool", False),
    WeakRow("logical_and scalar and float", lambda jax, jnp, lax: jnp.logical_and(jnp.int16(3), 1.0),
            "bool", True),
    # a promoted bool is never weak: weak bools (from weak scalars) promote as strong ones
    WeakRow("arctan of a weak bool", lambda jax, jnp, lax: jnp.arctan(jnp.logical_and(0, 0)), "float32", False),
    WeakRow("add of weak bools", lambda jax, jnp, lax: jnp.logical_and(0, 0) + jnp.isfinite(1.0), "bool", False),
    # formulas with constants keep a weak scalar weak (finding 10)
    WeakRow("hypot of Python floats", lambda jax, jnp, lax: jnp.hypot(3.0, 4.0), "float32", True, "float64"),
    WeakRow("hypot of weak array", lambda jax, jnp, lax: jnp.hypot(_weak_ints(jnp), 4.0), "float32", False,
            "float64"),
    WeakRow("sinc of Python float", lambda jax, jnp, lax: jnp.sinc(3.0), "float32", True, "float64"),
    WeakRow("deg2rad of Python float", lambda jax, jnp, lax: jnp.deg2rad(3.0), "float32", True, "float64"),
    WeakRow("heaviside of Python floats", lambda jax, jnp, lax: jnp.heaviside(3.0, 4.0), "float32", True,
            "float64"),
    WeakRow("i0 of Python float", lambda jax, jnp, lax: jnp.i0(3.0), "float32", True, "float64"),
    WeakRow("spacing of Python float", lambda jax, jnp, lax: jnp.spacing(3.0), "float32", False, "float64"),
    WeakRow("frexp of Python float", lambda jax, jnp, lax: jnp.frexp(3.0)[0], "float32", False, "float64"),
    # argmin/argmax keepdims with axis=None keep every dim as 1 (finding 14)
    WeakRow("argmin keepdims axis None", lambda jax, jnp, lax: jnp.argmin(jnp.zeros((2, 3)), axis=None, keepdims=True),
            "int32", False, "int64", (1, 1)),
    WeakRow("argmax keepdims axis None 0-d", lambda jax, jnp, lax: jnp.argmax(jnp.float32(1), axis=None,
                                                                           keepdims=True),
            "int32", False, "int64", ()),
    WeakRow("nanargmax keepdims axis None", lambda jax, jnp, lax: jnp.nanargmax(jnp.zeros((2, 1, 3)), keepdims=True),
            "int32", False, "int64", (1, 1, 1)),
]


def weak_cases():
    return [pytest.param(row, x64, id=f"{row.id}-{'x64' if x64 else 'x32'}")
            for row in WEAK_ROWS for x64 in (False, True)]


def check_weak_row(row, x64, jax, jnp, lax):
    out = row.call(jax, jnp, lax)
    want = row.x64_dtype if x64 and row.x64_dtype else row.dtype
    assert (str(out.dtype), bool(out.weak_type)) == (want, row.weak), row.id
    if row.shape is not None:
        assert tuple(out.shape) == row.shape, row.id


@pytest.fixture
def x64_mode():
    old = numjax.config.jax_enable_x64

    def set_mode(on):
        numjax.config.update("jax_enable_x64", on)
    yield set_mode
    numjax.config.update("jax_enable_x64", old)


@pytest.mark.parametrize("row,dtype,x64", dtype_cases())
def test_result_dtype(row, dtype, x64, x64_mode):
    x64_mode(x64)
    check_dtype_row(row, dtype, x64, numjax, njnp)


@pytest.mark.parametrize("row,x64", weak_cases())
def test_dtype_and_weak_type(row, x64, x64_mode):
    x64_mode(x64)
    check_weak_row(row, x64, numjax, njnp, numjax.lax)


def test_rules_are_not_trivial():
    # The rules tell 32- from 64-bit integers and bools from numbers.
    assert to_inexact("int32", True) == np.float32 and to_inexact("int64", True) == np.float64
    assert to_numeric("bool", True) == np.int32 and to_numeric("int16", True) == np.int16
    assert default_int("int8", True) == np.int64 and default_int("int8", False) == np.int32

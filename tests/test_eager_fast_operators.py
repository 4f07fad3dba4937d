"""Eager short paths of operators and jnp elementwise functions (numjax/numpy/_operators.py,
numjax/numpy/__init__.py) against the general path: ==/!=, integer scalars, signed-zero
scalars, integer powers and squares, isnan/floor/ceil, and the unary functions' one eager
layer for every inexact dtype; same dtype, weak type and bits, or the same exception."""
import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax import lax
from numjax.array import Array

from test_eager_fast_reductions import _assert_same, _outcome


def _arrays():
    rng = np.random.default_rng(1)
    f = (rng.standard_normal(9) * 4).astype(np.float32)
    f[1], f[2], f[3], f[4] = -0.0, 0.0, np.nan, np.inf
    i = np.array([0, 1, -1, 7, -8, 2 ** 31 - 1, -2 ** 31, 100, 3], np.int32)
    return {
        "f32": Array(f, False), "f32 weak": Array(f, True), "f16": Array(f.astype(np.float16), False),
        "bf16": Array(f.astype(jnp.bfloat16), False), "i32": Array(i, False),
        "i8": Array(i.astype(np.int8), False), "u8": Array(i.astype(np.uint8), False),
        "u32": Array(i.astype(np.uint32), False), "bool": Array(f > 0, False),
        "f32 0-d": Array(np.asarray(-0.0, np.float32), True),
    }


SCALARS = [0.0, -0.0, 2.5, -1.0, float("nan"), 1e300, 0, 1, -1, 5, 127, 128, 255, 256, 2 ** 31 - 1, 2 ** 31,
           2 ** 40, -2 ** 31 - 1]
BINARY = {"==": (lambda a, b: a == b, jnp.equal), "!=": (lambda a, b: a != b, jnp.not_equal),
          "<": (lambda a, b: a < b, jnp.less), "+": (lambda a, b: a + b, jnp.add),
          "-": (lambda a, b: a - b, jnp.subtract), "*": (lambda a, b: a * b, jnp.multiply),
          "r-": (lambda a, b: b - a, lambda a, b: jnp.subtract(b, a)),
          "max": (jnp.maximum, jnp.maximum), "/": (lambda a, b: a / b, jnp.true_divide)}


@pytest.mark.parametrize("op", list(BINARY))
def test_operators_with_scalars_match_general_path(op):
    fast, slow = BINARY[op]
    for name, a in _arrays().items():
        for s in SCALARS:
            ref = _outcome(lambda: numjax.jit(lambda x: slow(x, s))(a))   # (traced: the general path)
            got = _outcome(lambda: fast(a, s))
            _assert_same_or_close(got, ref, (name, s))
            got2 = _outcome(lambda: fast(a, s))      # (the second call takes the cached plan)
            _assert_same_or_close(got2, ref, (name, s))


def _assert_same_or_close(got, ref, what):
    """``ref`` is the jitted general path: the same dtype, weak type and values (division
    compiled may differ in the last bit from numpy's exactly rounded one: it does not here)."""
    if isinstance(ref, Exception):
        assert type(got) is type(ref), (what, got, ref)
        return
    assert not isinstance(got, Exception), (what, got)
    assert got.dtype == ref.dtype and got.weak_type == ref.weak_type, (what, got.dtype, ref.dtype)
    a, b = np.asarray(got), np.asarray(ref)
    if a.dtype.kind in "fV" or str(a.dtype) == "bfloat16":
        a, b = a.astype(np.float64), b.astype(np.float64)
        np.testing.assert_array_equal(np.signbit(a[a == a]), np.signbit(b[b == b]), err_msg=str(what))
    np.testing.assert_array_equal(a, b, err_msg=str(what))


@pytest.mark.parametrize("op", ["==", "!=", "+", "*", "<"])
def test_operators_between_arrays_match_general_path(op):
    fast, slow = BINARY[op]
    arrays = _arrays()
    for an, a in arrays.items():
        for bn, b in arrays.items():
            _assert_same(_outcome(lambda: fast(a, b)), _outcome(lambda: slow(a, b)))


def test_integer_scalars_x64(x64):
    a = Array(np.array([1, -2, 2 ** 40], np.int64), False)
    u = Array(np.array([1, 2, 3], np.uint32), False)
    for x, s in [(a, 2 ** 40), (a, 2 ** 63), (a, -3), (u, -1), (u, 2 ** 33), (u, 7)]:
        for op in ("+", "*", "==", "<"):
            fast, slow = BINARY[op]
            _assert_same_or_close(_outcome(lambda: fast(x, s)),
                                  _outcome(lambda: numjax.jit(lambda v: slow(v, s))(x)), (op, s))


def test_signed_zero_scalars_keep_their_sign():
    v = jnp.asarray(np.array([-1.0, 1.0], np.float32))
    for _ in range(2):      # (the second time from the plans)
        assert np.signbit(np.asarray(v * 0.0)).tolist() == [True, False]
        assert np.signbit(np.asarray(v * -0.0)).tolist() == [False, True]


@pytest.mark.parametrize("y", [-3, -1, 0, 1, 2, 3, 7, 2 ** 40])
def test_integer_powers_match_general_path(y):
    for name, a in _arrays().items():
        ref = _outcome(lambda: lax.integer_pow(a if a.dtype != np.bool_ else a.astype(jnp.int32), y))
        _assert_same(_outcome(lambda: a ** y), ref)
        _assert_same(_outcome(lambda: jnp.power(a, y)), ref)
        if y == 2:
            _assert_same(_outcome(lambda: jnp.square(a)), _outcome(lambda: numjax.jit(jnp.square)(a))
                         if a.dtype.kind != "f" else ref)


def test_integer_powers_x64(x64):
    for host in (np.array([1.5, -2.0, 1e200]), np.array([3, -4, 2 ** 40], np.int64)):
        a = Array(host, False)
        for y in (2, 3, -1):
            _assert_same(_outcome(lambda: a ** y), _outcome(lambda: lax.integer_pow(a, y)))


@pytest.mark.parametrize("fn", ["isnan", "floor", "ceil"])
def test_isnan_floor_ceil_match_general_path(fn):
    for name, a in _arrays().items():
        _assert_same(_outcome(lambda: getattr(jnp, fn)(a)),
                     _outcome(lambda: numjax.jit(getattr(jnp, fn))(a)))


@pytest.mark.parametrize("fn", ["exp", "log", "tanh", "sqrt", "sin", "arctan", "cbrt", "expm1"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "complex64", "int32", "bool"])
def test_unary_functions_one_eager_layer(fn, dtype):
    """Every dtype through jnp's one eager layer: what the lax primitive's eager rule gives
    (after jnp's promotion of integers and bools)."""
    if fn == "cbrt" and dtype == "complex64":
        return      # (no complex cbrt in JAX: the same TypeError both ways, checked below)
    host = (np.linspace(-3, 3, 11) + (0.5j if dtype == "complex64" else 0)).astype(dtype)
    a = Array(host, False)
    lax_fn = getattr(lax, {"arctan": "atan"}.get(fn, fn))
    promoted = a if host.dtype.kind in "fcV" else a.astype(jnp.float32)
    _assert_same(_outcome(lambda: getattr(jnp, fn)(a)), _outcome(lambda: lax_fn(promoted)))


def test_unary_cbrt_complex_raises_alike():
    a = Array(np.ones(3, np.complex64), False)
    assert type(_outcome(lambda: jnp.cbrt(a))) is type(_outcome(lambda: numjax.jit(jnp.cbrt)(a)))


@pytest.mark.parametrize("fn", [jnp.maximum, jnp.minimum])
def test_extrema_with_zero_scalars_match_general_path(fn):
    for name, a in _arrays().items():
        for s in (0.0, -0.0, 0, 1.5):
            for args in ((a, s), (s, a)):
                ref = _outcome(lambda: numjax.jit(lambda x: fn(*(x if o is a else o for o in args)))(a))
                _assert_same_or_close(_outcome(lambda: fn(*args)), ref, (name, args))


def _bool_and_int_arrays():
    rng = np.random.default_rng(12)
    b = rng.random(8) > 0.5
    return {"bool": Array(b, False), "bool weak": Array(~b, True), "bool 0-d": Array(np.asarray(True), False),
            "i32": Array(np.arange(-4, 4, dtype=np.int32), False), "u8": Array(np.arange(8, dtype=np.uint8), False),
            "f32": Array(np.ones(8, np.float32), False), "bool (3,)": Array(b[:3], False)}


@pytest.mark.parametrize("fn", ["bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or",
                                "logical_xor"])
def test_bitwise_and_logical_match_general_path(fn):
    fast = getattr(jnp, fn)
    arrays = _bool_and_int_arrays()
    others = {**arrays, "int": 3, "-1": -1, "big": 2 ** 40, "true": True, "float": 1.5}
    for an, a in arrays.items():
        for bn, b in others.items():
            for args in ((a, b), (b, a)):
                ref = _outcome(lambda: numjax.jit(lambda p: fast(*(p if o is a else o for o in args)))(a))
                _assert_same_or_close(_outcome(lambda: fast(*args)), ref, (fn, an, bn))
    ops = {"bitwise_and": lambda p, q: p & q, "bitwise_or": lambda p, q: p | q, "bitwise_xor": lambda p, q: p ^ q}
    if fn in ops:
        for an, a in arrays.items():
            for bn, b in others.items():
                ref = _outcome(lambda: numjax.jit(lambda p: ops[fn](p, b))(a))
                _assert_same_or_close(_outcome(lambda: ops[fn](a, b)), ref, (fn, an, bn))
                ref = _outcome(lambda: numjax.jit(lambda p: ops[fn](b, p))(a))
                _assert_same_or_close(_outcome(lambda: ops[fn](b, a)), ref, (fn, bn, an))


def test_invert_and_logical_not_match_general_path():
    for name, a in _bool_and_int_arrays().items():
        for fn in (lambda p: ~p, jnp.logical_not, jnp.invert):
            _assert_same_or_close(_outcome(lambda: fn(a)), _outcome(lambda: numjax.jit(fn)(a)), name)


@pytest.mark.parametrize("y", [2.0, 0.5, -1.5, 0.0, float("nan"), 1e300])
def test_power_with_float_scalar_matches_general_path(y):
    for name, a in _arrays().items():
        ref = _outcome(lambda: numjax.jit(lambda p: jnp.power(p, y))(a))
        _assert_same_or_close(_outcome(lambda: a ** y), ref, (name, y))
        # and the eager general path's own promotion, bit for bit
        if a.dtype.kind == "f" and not a.weak_type:
            _assert_same(_outcome(lambda: jnp.power(a, y)), _outcome(lambda: lax.pow(*_promoted(a, y))))


def _promoted(a, y):
    from numjax.numpy._util import promote_args
    return promote_args("power", a, y)


def test_power_with_float_scalar_x64(x64):
    for a in (Array(np.array([1.5, -2.0, 3.0]), False), Array(np.array([1.5, 2.0], np.float32), False),
              Array(np.array([1.5, 2.0], np.float32), True)):
        _assert_same(_outcome(lambda: a ** 2.5), _outcome(lambda: lax.pow(*_promoted(a, 2.5))))


def test_astype_matches_general_path():
    for name, a in {**_arrays(), **_bool_and_int_arrays()}.items():
        for dt in (jnp.int32, jnp.float32, jnp.uint8, jnp.bool_, jnp.float16, jnp.bfloat16):
            _assert_same_or_close(_outcome(lambda: a.astype(dt)),
                                  _outcome(lambda: numjax.jit(lambda p: p.astype(dt))(a)), (name, dt))

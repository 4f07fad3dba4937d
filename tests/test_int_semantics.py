"""Integer and float edge semantics, eager and under jit, against the rules of
tests/int_semantics_table.py (XLA's and jax.numpy's definitions: division by zero, INT_MIN,
shifts past the bit width, wrapping, float floor division and remainders at 0, inf, NaN and
huge values, saturating float -> int conversion).

Every operation runs eagerly and in one jitted program per dtype (the LLVM backend); a few
dtypes also go through the Numba backend, which shares the scalar rules.
"""
import math

import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax import lax
from helpers import jit_compiled
from int_semantics_table import (FLOAT64_DTYPES, FLOAT_BINARY, FLOAT_DTYPES, FLOAT_UNARY, INT64_DTYPES,
                                 INT_BINARY, INT_DTYPES, INT_UNARY, float_operands, float_pairs,
                                 int_operands, int_pairs)


def _mode(request, dt):
    if dt in INT64_DTYPES + FLOAT64_DTYPES:
        request.getfixturevalue("x64")


def _int_arrays(dt):
    xs, ys = int_pairs(dt)
    return np.array(xs, dt), np.array(ys, dt), xs, ys


def _check_ints(name, got, want, xs, ys, dt):
    got = np.asarray(got)
    assert got.dtype == np.dtype(dt), f"{name}: dtype {got.dtype}, expected {dt}"
    bad = [(x, y, int(g), w) for x, y, g, w in zip(xs, ys, got.tolist(), want) if int(g) != w]
    assert not bad, f"{name} [{dt}]: (x, y, got, expected) {bad[:6]} ({len(bad)} wrong)"


def _program(table, arity):
    def program(*args):
        return {name: fn(jnp, lax, *args) for name, (fn, _) in table.items()}
    return program


_JITTED = {}


def _jitted(kind, dt, table, args):
    """One compiled program computing every entry of ``table`` (compiled once per dtype)."""
    key = (kind, dt)
    if key not in _JITTED:
        out = jit_compiled(_program(table, len(args)), *args)
        _JITTED[key] = {k: np.asarray(v) for k, v in out.items()}
    return _JITTED[key]


# ---------------------------------------------------------------- integers

@pytest.mark.parametrize("dt", INT_DTYPES + INT64_DTYPES)
@pytest.mark.parametrize("name", sorted(INT_BINARY))
def test_int_binary(request, name, dt):
    _mode(request, dt)
    a, b, xs, ys = _int_arrays(dt)
    fn, rule = INT_BINARY[name]
    want = [rule(x, y, dt) for x, y in zip(xs, ys)]
    _check_ints(f"eager {name}", fn(jnp, lax, jnp.asarray(a), jnp.asarray(b)), want, xs, ys, dt)
    _check_ints(f"jit {name}", _jitted("int2", dt, INT_BINARY, (a, b))[name], want, xs, ys, dt)


@pytest.mark.parametrize("dt", INT_DTYPES + INT64_DTYPES)
@pytest.mark.parametrize("name", sorted(INT_UNARY))
def test_int_unary(request, name, dt):
    _mode(request, dt)
    xs = int_operands(dt)
    a = np.array(xs, dt)
    fn, rule = INT_UNARY[name]
    want = [rule(x, dt) for x in xs]
    _check_ints(f"eager {name}", fn(jnp, lax, jnp.asarray(a)), want, xs, xs, dt)
    _check_ints(f"jit {name}", _jitted("int1", dt, INT_UNARY, (a,))[name], want, xs, xs, dt)


@pytest.mark.parametrize("dt", ["int8", "uint32"])
def test_int_numba_backend(dt):
    """The Numba backend (control flow, complex, ...) shares the scalar rules and helpers."""
    from numjax.lowering import compile as numba_backend
    a, b, xs, ys = _int_arrays(dt)
    table = {k: INT_BINARY[k] for k in ("lax.div", "lax.rem", "//", "%", "fmod", "<<", ">>",
                                         "shift_right_logical", "shift_right_arithmetic")}
    closed = numjax.make_jaxpr(_program(table, 2))(a, b)
    outs = numba_backend.Executable(numba_backend.lower_jaxpr(closed)).call_arrays([a, b])
    for (name, (_, rule)), got in zip(sorted(table.items()), outs):
        _check_ints(f"numba {name}", got, [rule(x, y, dt) for x, y in zip(xs, ys)], xs, ys, dt)


def test_uint64_floor_division_stays_exact(x64):
    # Through float64 (numpy's guess for mixed big ints) the low bits would be lost.
    a = jnp.array([2 ** 64 - 1, 2 ** 53 + 1, 2 ** 63 + 7], dtype=jnp.uint64)
    for got in (a // 3, numjax.jit(lambda v: v // 3)(a), a % 3, numjax.jit(lambda v: v % 3)(a)):
        assert np.asarray(got).dtype == np.uint64
    want_q = [(2 ** 64 - 1) // 3, (2 ** 53 + 1) // 3, (2 ** 63 + 7) // 3]
    assert np.asarray(a // 3).tolist() == want_q
    assert np.asarray(numjax.jit(lambda v: v // 3)(a)).tolist() == want_q
    assert np.asarray(a % 3).tolist() == [(2 ** 64 - 1) % 3, (2 ** 53 + 1) % 3, (2 ** 63 + 7) % 3]


def test_array_from_big_python_ints(x64):
    assert np.asarray(jnp.array([2 ** 64 - 1, 5], dtype=jnp.uint64)).tolist() == [2 ** 64 - 1, 5]
    with pytest.raises(OverflowError):
        jnp.array([300], dtype=jnp.int8)


def test_shift_operators_with_python_ints():
    a = jnp.array([1, 2, -8], jnp.int8)
    assert np.asarray(a << 1).tolist() == [2, 4, -16]
    assert np.asarray(1 << a).tolist() == [2, 4, 0]          # a shift by -8 (248 unsigned)
    assert np.asarray(a >> 1).tolist() == [0, 1, -4]
    assert np.asarray(100 >> jnp.array([1, 2], jnp.int32)).tolist() == [50, 25]
    with pytest.raises(TypeError, match="shift"):
        jnp.array([1.0]) << 1


def test_integer_pow_rejects_negative_exponents():
    with pytest.raises(TypeError, match="negative powers"):
        lax.integer_pow(jnp.array([2], jnp.int32), -1)


# ---------------------------------------------------------------- floats

def _float_arrays(dt):
    xs, ys = float_pairs(dt)
    return np.array(xs, dt), np.array(ys, dt), xs, ys


def _same_float(g, w):
    if math.isnan(w):
        return math.isnan(g)
    return g == w and math.copysign(1.0, g) == math.copysign(1.0, w)


def _check_floats(name, got, want, xs, ys, dt):
    got = np.asarray(got)
    assert got.dtype == np.dtype(dt), f"{name}: dtype {got.dtype}, expected {dt}"
    bad = [(x, y, g, w) for x, y, g, w in zip(xs, ys, got.astype(np.float64).tolist(), want)
           if w is not None and not _same_float(g, w)]
    assert not bad, f"{name} [{dt}]: (x, y, got, expected) {bad[:6]} ({len(bad)} wrong)"


@pytest.mark.parametrize("dt", FLOAT_DTYPES + FLOAT64_DTYPES)
@pytest.mark.parametrize("name", sorted(FLOAT_BINARY))
def test_float_binary(request, name, dt):
    _mode(request, dt)
    a, b, xs, ys = _float_arrays(dt)
    fn, rule = FLOAT_BINARY[name]
    want = [rule(x, y, dt) for x, y in zip(xs, ys)]
    assert sum(w is not None for w in want) > len(want) // 2    # the rules cover most pairs
    _check_floats(f"eager {name}", fn(jnp, lax, jnp.asarray(a), jnp.asarray(b)), want, xs, ys, dt)
    _check_floats(f"jit {name}", _jitted("float2", dt, FLOAT_BINARY, (a, b))[name], want, xs, ys, dt)


def _float_unary_table():
    x64 = numjax.config.jax_enable_x64
    return {k: v for k, v in FLOAT_UNARY.items() if x64 or not k.endswith("64)")}


@pytest.mark.parametrize("dt", FLOAT_DTYPES + FLOAT64_DTYPES)
@pytest.mark.parametrize("name", sorted(FLOAT_UNARY))
def test_float_unary(request, name, dt):
    if name.endswith("64)") or dt in FLOAT64_DTYPES:
        request.getfixturevalue("x64")
    xs = float_operands(dt)
    a = np.array(xs, dt)
    fn, rule = FLOAT_UNARY[name]
    want = [rule(x, dt) for x in xs]
    got_eager = np.asarray(fn(jnp, lax, jnp.asarray(a)))
    got_jit = _jitted(("float1", numjax.config.jax_enable_x64), dt, _float_unary_table(), (a,))[name]
    for label, got in (("eager", got_eager), ("jit", got_jit)):
        if got.dtype.kind in "iu":
            _check_ints(f"{label} {name}", got, want, xs, xs, got.dtype)
        else:
            _check_floats(f"{label} {name}", got, want, xs, xs, dt)


def test_huge_float_floor_division_is_not_through_int64():
    x = jnp.array([3e38, -3e38], jnp.float32)
    for f in (lambda v: v // 1.0, lambda v: jnp.floor_divide(v, 1.0), lambda v: divmod(v, 1.0)[0]):
        assert np.asarray(f(x)).tolist() == [float(np.float32(3e38)), float(np.float32(-3e38))]
        assert np.asarray(numjax.jit(f)(x)).tolist() == [float(np.float32(3e38)), float(np.float32(-3e38))]
    assert np.asarray(numjax.jit(lambda v: v // 0.0)(x)).tolist() == [math.inf, -math.inf]

"""The eager short paths of whole-array reductions, jnp.where and vector jnp.dot
(numjax/numpy/_eager_paths.py) against the general path they skip: the same dtype, weak type
and bits (or the same exception), across dtypes, shapes, special values and x64 mode; and
under jit (the traced path, compiled) the same values."""
import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax.array import Array
from numjax.numpy import _eager_paths

REDUCTIONS = ["sum", "prod", "max", "min", "argmax", "argmin", "all", "any", "mean", "var", "std"]
DTYPES = ["float32", "int32", "int8", "uint8", "uint32", "bool", "float16", "bfloat16"]
DTYPES_X64 = ["float64", "float32", "int64", "int32", "uint32", "uint8", "bool", "float16"]


def _values(dtype, shape, rng):
    dt = jnp.dtype(dtype)
    size = int(np.prod(shape))
    if dt == np.bool_:
        return rng.random(size).reshape(shape) > 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        # extremes included: sums and products wrap
        return rng.integers(info.min, info.max, size, endpoint=True, dtype=dt).reshape(shape)
    v = (rng.standard_normal(size) * 3).astype(np.float32)
    if size > 8:
        v[3], v[5], v[7] = -0.0, 0.0, -0.0
    return v.astype(dt).reshape(shape)


def _special(dtype, kind, rng):
    """Vectors with NaN, infinities or only zeros of both signs."""
    v = _values(dtype, (64,), rng).astype(np.float32)
    if kind == "nan":
        v[10] = np.nan
    elif kind == "inf":
        v[4], v[20] = np.inf, -np.inf
    elif kind == "zeros":
        v[:] = 0.0
        v[::3] = -0.0
    elif kind == "negzeros":
        v[:] = -0.0
    return v.astype(jnp.dtype(dtype))


def _outcome(fn):
    try:
        return fn()
    except Exception as err:   # noqa: BLE001  (the paths must raise alike)
        return err


def _assert_same(fast, general):
    if isinstance(general, Exception):
        assert type(fast) is type(general), (fast, general)
        return
    assert not isinstance(fast, Exception), fast
    assert type(fast) is Array and type(general) is Array
    assert fast.dtype == general.dtype, (fast.dtype, general.dtype)
    assert fast.weak_type == general.weak_type
    a, b = np.asarray(fast), np.asarray(general)
    assert a.shape == b.shape
    if a.dtype.kind in "fV" or str(a.dtype) == "bfloat16":
        a32, b32 = a.astype(np.float64), b.astype(np.float64)
        np.testing.assert_array_equal(a32, b32)
        np.testing.assert_array_equal(np.signbit(a32[a32 == a32]), np.signbit(b32[b32 == b32]))   # zeros' signs
    else:
        np.testing.assert_array_equal(a, b)


@pytest.fixture
def general(monkeypatch):
    """``general(fn)``: fn's outcome with the short paths turned off."""
    def run(fn):
        with monkeypatch.context() as m:
            for name in ("whole_reduction", "where", "dot_vectors"):
                m.setattr(_eager_paths, name, lambda *args: None)
            return _outcome(fn)
    return run


def _check_reductions(general, host, weak=False):
    x = Array(np.asarray(host), weak)
    for name in REDUCTIONS:
        fast = _outcome(lambda: getattr(jnp, name)(x))
        _assert_same(fast, general(lambda: getattr(jnp, name)(x)))
        if name not in ("var", "std"):
            _assert_same(_outcome(lambda: getattr(x, name)()), general(lambda: getattr(x, name)()))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (1,), (7,), (1000,), (3, 5), (0,)])
def test_reductions_match_general_path(general, dtype, shape):
    host = _values(dtype, shape, np.random.default_rng(len(shape) + sum(shape)))
    _check_reductions(general, host)


@pytest.mark.parametrize("dtype", DTYPES_X64)
@pytest.mark.parametrize("shape", [(), (9,), (1000,), (2, 3)])
def test_reductions_match_general_path_x64(general, x64, dtype, shape):
    host = _values(dtype, shape, np.random.default_rng(7))
    _check_reductions(general, host)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("kind", ["nan", "inf", "zeros", "negzeros"])
def test_reductions_of_special_values(general, dtype, kind):
    _check_reductions(general, _special(dtype, kind, np.random.default_rng(3)))


def test_reductions_of_weak_arrays_are_strong(general):
    host = np.arange(6, dtype=np.float32) - 2.5
    _check_reductions(general, host, weak=True)
    assert jnp.sum(Array(host, True)).weak_type is False


def test_float32_sum_is_within_tolerance_of_float64():
    host = np.random.default_rng(5).standard_normal(100_000).astype(np.float32) + 1.0
    got = float(jnp.sum(jnp.asarray(host)))
    assert got == pytest.approx(float(np.sum(host, dtype=np.float64)), rel=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "float16"])
def test_reductions_under_jit_agree(dtype):
    host = _values(dtype, (1000,), np.random.default_rng(11))
    x = jnp.asarray(host)
    for name in REDUCTIONS:
        eager = getattr(jnp, name)(x)
        traced = numjax.jit(getattr(jnp, name))(x)
        assert eager.dtype == traced.dtype and eager.weak_type == traced.weak_type, name
        tol = 2e-3 if dtype == "float16" else 1e-5
        np.testing.assert_allclose(np.asarray(eager, np.float64), np.asarray(traced, np.float64),
                                   rtol=tol, atol=tol)


def test_non_default_arguments_take_the_general_path(monkeypatch):
    calls = []
    real = _eager_paths.whole_reduction

    def spy(name, a):
        calls.append(name)
        return real(name, a)
    monkeypatch.setattr(_eager_paths, "whole_reduction", spy)
    x = jnp.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    for call in (lambda: jnp.sum(x, axis=0), lambda: jnp.sum(x, keepdims=True), lambda: jnp.sum(x, initial=1.0),
                 lambda: jnp.sum(x, where=x > 2), lambda: jnp.sum(x, dtype=jnp.float16),
                 lambda: jnp.max(x, axis=1), lambda: jnp.argmax(x, axis=0), lambda: jnp.mean(x, axis=(0, 1)),
                 lambda: x.sum(0), lambda: x.max(keepdims=True)):
        call()
    assert calls == []
    # (var's general path sums through jnp.sum, whose own short path declines a 2-d float array)
    np.testing.assert_allclose(float(jnp.var(x, ddof=1)), np.var(np.arange(12), ddof=1), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(jnp.sum(x, axis=0)), np.arange(12).reshape(3, 4).sum(0))


def test_subclasses_and_traces_take_the_general_path(monkeypatch):
    calls = []
    real = _eager_paths.whole_reduction
    monkeypatch.setattr(_eager_paths, "whole_reduction", lambda name, a: calls.append(name) or real(name, a))

    class Sub(Array):
        __slots__ = ()
    s = Sub(np.arange(4, dtype=np.float32), False)
    assert float(jnp.sum(s)) == 6.0 and float(s.max()) == 3.0
    assert calls == []
    # Under a trace a concrete Array (a closed-over constant) reaches whole_reduction, which
    # declines while the trace is active: the result is the traced computation's.
    c = jnp.asarray(np.arange(4, dtype=np.float32))
    out = numjax.vmap(lambda t: t + jnp.sum(c))(jnp.ones(3))
    np.testing.assert_array_equal(np.asarray(out), np.full(3, 7.0, np.float32))
    assert numjax.make_jaxpr(lambda t: t + jnp.sum(c))(1.0).eqns   # traced, not folded eagerly


# ---------------------------------------------------------------- where

def _where_operands():
    rng = np.random.default_rng(2)
    f = rng.standard_normal(6).astype(np.float32)
    f[2] = -0.0
    return {
        "f32": Array(f, False), "f32 weak": Array(f * 2, True), "i32": Array(np.arange(6, dtype=np.int32), False),
        "u8": Array(np.arange(6, dtype=np.uint8), False), "bool": Array(f > 0, False),
        "f16": Array(f.astype(np.float16), False), "bf16": Array(f.astype(jnp.bfloat16), False),
        "f32 0-d": Array(np.asarray(1.5, np.float32), False), "i32 (3,)": Array(np.arange(3, dtype=np.int32), False),
        "float": 0.5, "-0.0": -0.0, "int": 3, "-1": -1, "big int": 2 ** 40, "true": True, "1e300": 1e300,
        "numpy": np.float32(2.0),
    }


@pytest.mark.parametrize("cond_kind", ["bool (6,)", "bool 0-d", "int (6,)", "bool (2,3)"])
def test_where_matches_general_path(general, cond_kind):
    rng = np.random.default_rng(4)
    cond = {"bool (6,)": Array(rng.random(6) > 0.5, False), "bool 0-d": Array(np.asarray(True), False),
            "int (6,)": Array(np.arange(6, dtype=np.int32) % 2, False),
            "bool (2,3)": Array(rng.random((2, 3)) > 0.5, False)}[cond_kind]
    ops = _where_operands()
    for xname, x in ops.items():
        for yname, y in ops.items():
            fast = _outcome(lambda: jnp.where(cond, x, y))
            _assert_same(fast, general(lambda: jnp.where(cond, x, y)))


def test_where_x64(general, x64):
    cond = Array(np.arange(5) % 2 == 0, False)
    for x, y in [(Array(np.arange(5.0), False), 0.0), (Array(np.arange(5, dtype=np.int64), False), 2 ** 40),
                 (Array(np.arange(5, dtype=np.int32), False), 7), (Array(np.ones(5, np.float32), False), 2)]:
        _assert_same(_outcome(lambda: jnp.where(cond, x, y)), general(lambda: jnp.where(cond, x, y)))


def test_where_under_jit_agrees():
    cond = jnp.asarray(np.arange(6) % 3 == 0)
    x = jnp.asarray(np.arange(6, dtype=np.float32))
    eager = jnp.where(cond, x, 0.0)
    traced = numjax.jit(lambda c, v: jnp.where(c, v, 0.0))(cond, x)
    assert eager.dtype == traced.dtype and eager.weak_type == traced.weak_type
    np.testing.assert_array_equal(np.asarray(eager), np.asarray(traced))


# ---------------------------------------------------------------- dot of vectors

@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "bool", "complex64"])
def test_vector_dot_matches_general_path(general, dtype):
    rng = np.random.default_rng(6)
    for n in (1, 7, 1000):
        a = Array(_values(dtype, (n,), rng) if dtype != "complex64" else
                  (rng.standard_normal(n) + 1j).astype(np.complex64), False)
        b = Array(_values(dtype, (n,), rng) if dtype != "complex64" else
                  (rng.standard_normal(n) - 1j).astype(np.complex64), n == 7)
        for fn in (jnp.dot, jnp.matmul, lambda p, q: p @ q, jnp.vdot):
            _assert_same(_outcome(lambda: fn(a, b)), general(lambda: fn(a, b)))
    z = Array(np.array([-0.0, 1.0, np.inf], np.float32), True)
    w = Array(np.array([1.0, -0.0, 0.0], np.float32), True)
    _assert_same(_outcome(lambda: jnp.dot(z, w)), general(lambda: jnp.dot(z, w)))   # inf * 0: NaN
    _assert_same(_outcome(lambda: jnp.dot(z[:2], w[:2])), general(lambda: jnp.dot(z[:2], w[:2])))
    mismatch = Array(np.ones(3, np.float32), False), Array(np.ones(4, np.float32), False)
    _assert_same(_outcome(lambda: jnp.dot(*mismatch)), general(lambda: jnp.dot(*mismatch)))


def test_vector_dot_bits_across_lengths(general):
    rng = np.random.default_rng(10)
    for n in [*range(1, 70), 127, 128, 1000, 4097, 100_000]:
        a = Array(rng.standard_normal(n).astype(np.float32) * 10, False)
        b = Array(rng.standard_normal(n).astype(np.float32), False)
        _assert_same(_outcome(lambda: jnp.dot(a, b)), general(lambda: jnp.dot(a, b)))


def test_vector_dot_x64(general, x64):
    rng = np.random.default_rng(8)
    a, b = Array(rng.standard_normal(50), False), Array(rng.standard_normal(50), False)
    _assert_same(_outcome(lambda: jnp.dot(a, b)), general(lambda: jnp.dot(a, b)))
    c = Array(rng.standard_normal(50).astype(np.float32), False)
    _assert_same(_outcome(lambda: jnp.dot(a, c)), general(lambda: jnp.dot(a, c)))


def test_vector_dot_under_jit_agrees():
    rng = np.random.default_rng(9)
    a, b = (jnp.asarray(rng.standard_normal(1000).astype(np.float32)) for _ in range(2))
    np.testing.assert_allclose(float(jnp.dot(a, b)), float(numjax.jit(jnp.dot)(a, b)), rtol=1e-5)


def test_the_short_paths_are_taken():
    v = Array(np.arange(1, 9, dtype=np.float32), False)
    c = Array(np.arange(8) % 2 == 0, False)
    for name in REDUCTIONS[:-1]:
        assert _eager_paths.whole_reduction(name, v) is not None, name
    assert _eager_paths.whole_reduction("sum", Array(np.ones(3, jnp.bfloat16), False)) is None
    assert _eager_paths.where(c, v, 0.0) is not None
    assert _eager_paths.where(c, v, 2 ** 40) is None        # JAX's OverflowError: general path
    assert _eager_paths.dot_vectors(v, v) is not None

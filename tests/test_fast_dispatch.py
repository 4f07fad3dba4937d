"""The short eager and cached-jit paths (issue 14): they must give exactly what the full
paths give -- values bit for bit, dtypes, weak types, errors -- and stay right under
threads, layout changes and configuration changes. (Their speed is measured in benchmarks/.)
"""
import threading

import ml_dtypes
import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax import lax
from numjax.array import Array


def bits(a):
    """The value's bytes with its dtype and shape: equal exactly when bitwise equal."""
    v = np.asarray(a)
    return v.dtype, v.shape, np.ascontiguousarray(v).tobytes()


def same(a, b):
    assert bits(a) == bits(b), (a, b)
    assert getattr(a, "weak_type", None) == getattr(b, "weak_type", None), (a, b)


SPECIAL_F = [0.0, -0.0, 1.0, -1.5, 0.5, 3.0, 20.0, -20.0, 1e-8, np.nan, np.inf, -np.inf, 88.5, -104.0]


def operands(dtype):
    """Arrays of several ranks and layouts (a transposed one is not contiguous), with NaN,
    infinities, -0.0 and values near the ends of the functions' ranges."""
    rng = np.random.default_rng(0)
    flat = np.concatenate([np.array(SPECIAL_F), rng.uniform(-3, 3, 10)]).astype(dtype)
    square = flat[:16].reshape(4, 4)
    return [Array(np.asarray(flat[3]), False), Array(np.asarray(flat[0]), True),
            Array(flat, False), Array(square, False),
            Array(square.T, False),                  # not contiguous
            Array(flat[::2], True),                  # strided, weak
            Array(np.zeros((0, 3), dtype), False)]   # empty


UNARY = ["exp", "log", "log1p", "expm1", "tanh", "sin", "cos", "tan", "arctan", "arcsinh", "cbrt",
         "negative", "absolute", "sqrt", "floor", "ceil"]
LAX_UNARY = ["exp", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos", "tan", "atan",
             "asinh", "erf", "erf_inv", "cbrt", "neg", "abs", "sqrt", "floor", "ceil"]


def _check_unary(fn, dtype):
    jitted = numjax.jit(fn)
    for x in operands(dtype):
        eager = fn(x)
        same(eager, jitted(x))
        assert eager.dtype == dtype and eager.shape == x.shape
        same(fn(x), eager)        # the remembered runner gives the same again


@pytest.mark.parametrize("name", UNARY)
def test_jnp_unary_eager_equals_jit_float32(name):
    _check_unary(getattr(jnp, name), np.dtype(np.float32))


@pytest.mark.parametrize("name", LAX_UNARY)
def test_lax_unary_eager_equals_jit_float32(name):
    _check_unary(getattr(lax, name), np.dtype(np.float32))


@pytest.mark.parametrize("name", LAX_UNARY)
def test_lax_unary_eager_equals_jit_float64(name, x64):
    _check_unary(getattr(lax, name), np.dtype(np.float64))


@pytest.mark.parametrize("name", UNARY)
def test_jnp_unary_eager_equals_jit_float64(name, x64):
    _check_unary(getattr(jnp, name), np.dtype(np.float64))


@pytest.mark.parametrize("name", ["negative", "absolute"])
@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_, np.float16, ml_dtypes.bfloat16, np.complex64])
def test_negative_absolute_other_dtypes_unchanged(name, dtype):
    x = Array(np.array([1, 0, 3, 1], dtype=dtype), False)
    fn = getattr(jnp, name)
    got, want = _outcome(fn, x), _outcome(numjax.jit(fn), x)
    _compare(got, want)


@pytest.mark.parametrize("name", ["exp", "tanh", "sin", "log1p"])
@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.complex64, np.int32, np.bool_])
def test_jnp_unary_other_dtypes_unchanged(name, dtype):
    """Dtypes without a kernel runner keep the full path: promotion of ints and bools to
    float32, float16/bfloat16 computed in float32 and rounded, complex by numpy -- the same
    as under jit (complex: within rounding, as numpy and the compiled code differ there)."""
    x = Array(np.array([0.5, -0.0, 2.0, 0.0], dtype=dtype), False)
    fn = getattr(jnp, name)
    eager, jitted = fn(x), numjax.jit(fn)(x)
    assert eager.dtype == jitted.dtype and eager.weak_type == jitted.weak_type
    if np.dtype(dtype).kind == "c":
        np.testing.assert_allclose(np.asarray(eager), np.asarray(jitted), rtol=1e-6)
    else:
        same(eager, jitted)


def test_unary_errors_unchanged():
    ints = jnp.arange(3)
    with pytest.raises(TypeError, match="exp does not accept dtype int32"):
        lax.exp(ints)
    with pytest.raises(TypeError, match="exp does not accept dtype int32"):
        numjax.jit(lax.exp)(ints)
    same(jnp.exp(ints), numjax.jit(jnp.exp)(ints))   # jnp promotes to float32


def test_unary_traces_as_before():
    jaxpr = numjax.make_jaxpr(lambda x: jnp.exp(x) * 2.0)(jnp.ones(3))
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["exp", "mul"]
    grad = numjax.grad(lambda x: jnp.sum(jnp.exp(x) * 2.0))(jnp.ones(3))
    np.testing.assert_allclose(np.asarray(grad), 2 * np.e * np.ones(3), rtol=1e-6)


# ---------------------------------------------------------------- binary operators

def _scalar_operands():
    f32 = np.float32
    return [
        Array(np.array(1.5, f32), False), Array(np.array(-0.0, f32), True),
        Array(np.array([0.0, -0.0, 1.0, np.nan, np.inf, -2.5], f32), False),
        Array(np.array([0.0, -0.0, 1.0, np.nan, np.inf, -2.5], f32), True),
        Array(np.array([1, -2, 3, 0, 7, 2**31 - 1], np.int32), False),
        Array(np.array([1, 2, 3, 0, 7, 250], np.uint8), False),
        Array(np.array([True, False, True, True, False, False]), False),
        Array(np.array([0.5, -0.0, 1.0, np.nan, 6e4, -2.5], np.float16), False),
        Array(np.array([0.5, -0.0, 1.0, np.nan, 3e38, -2.5], ml_dtypes.bfloat16), False),
        Array(np.array([0.5 + 1j, -0.0, 1.0, np.nan, 1j, -2.5], np.complex64), False),
        Array(np.array([0.5, -0.0, 1.0, np.nan, 448, -2.5], ml_dtypes.float8_e4m3fn), False),
    ]


PY_SCALARS = [2.0, -0.0, 0.0, 0, 3, -1, float("nan"), float("inf"), 1e300, 0.1, True, 2**40]
def _full_extremum(a, b, is_max):
    """jnp.maximum/minimum's full path: promotion, then lax.max/min."""
    from numjax.numpy._util import promote_args
    a, b = promote_args("maximum" if is_max else "minimum", a, b)
    return (lax.max if is_max else lax.min)(a, b)


OPS = {
    "add": (lambda a, b: a + b, jnp.add), "radd": (lambda a, b: b + a, lambda a, b: jnp.add(b, a)),
    "sub": (lambda a, b: a - b, jnp.subtract), "rsub": (lambda a, b: b - a, lambda a, b: jnp.subtract(b, a)),
    "mul": (lambda a, b: a * b, jnp.multiply), "rmul": (lambda a, b: b * a, lambda a, b: jnp.multiply(b, a)),
    "div": (lambda a, b: a / b, jnp.true_divide),
    "rdiv": (lambda a, b: b / a, lambda a, b: jnp.true_divide(b, a)),
    "max": (numjax.numpy.maximum, lambda a, b: _full_extremum(a, b, True)),
    "rmax": (lambda a, b: jnp.maximum(b, a), lambda a, b: _full_extremum(b, a, True)),
    "min": (jnp.minimum, lambda a, b: _full_extremum(a, b, False)),
    "lt": (lambda a, b: a < b, jnp.less), "le": (lambda a, b: a <= b, jnp.less_equal),
    "gt": (lambda a, b: a > b, jnp.greater), "ge": (lambda a, b: a >= b, jnp.greater_equal),
}


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as err:   # the same class and message either way
        return "error", (type(err), str(err))


def _compare(got, want, nan_sign=True):
    assert got[0] == want[0], (got, want)
    if got[0] == "error":
        assert got[1] == want[1]
    elif nan_sign:
        same(got[1], want[1])
    else:
        # JAX's own eager and jitted ``nan * -1`` differ in the NaN's sign bit (LLVM makes the
        # jitted product a negation); numjax's do too, so there NaNs match NaNs of any sign.
        a, b = np.asarray(got[1]), np.asarray(want[1])
        nan_a, nan_b = _isnan(a), _isnan(b)
        np.testing.assert_array_equal(nan_a, nan_b)
        same(Array(np.where(nan_a, 0, a).astype(a.dtype), got[1].weak_type),
             Array(np.where(nan_b, 0, b).astype(b.dtype), want[1].weak_type))


def _isnan(v):
    return np.isnan(v.astype(np.float32)) if v.dtype.kind in "fV" else np.zeros(v.shape, bool)


@pytest.mark.parametrize("op", sorted(OPS))
def test_operator_with_python_scalar_equals_full_path_and_jit(op):
    """The operator's short path against jnp's function (the full path: promotion, lax) and
    against jit with the scalar closed over; every Python scalar twice, so the second use
    reads the converted-constant cache (0.0 and -0.0 must stay apart)."""
    short, full = OPS[op]
    for x in _scalar_operands():
        for s in PY_SCALARS + PY_SCALARS:
            got = _outcome(short, x, s)
            _compare(got, _outcome(full, x, s))
            if got[0] == "ok" and x.dtype.kind != "c":
                _compare(got, _outcome(numjax.jit(lambda a, s=s: short(a, s)), x), nan_sign=False)


@pytest.mark.parametrize("op", sorted(OPS))
def test_operator_between_arrays_equals_full_path(op):
    short, full = OPS[op]
    arrays = _scalar_operands()
    for x in arrays:
        for y in arrays:
            _compare(_outcome(short, x, y), _outcome(full, x, y))


def test_operator_shape_error_unchanged():
    a, b = jnp.ones(3), jnp.ones(4)
    with pytest.raises(TypeError, match="incompatible shapes for broadcasting"):
        a * b
    with pytest.raises(TypeError, match="incompatible shapes for broadcasting"):
        a / b
    with pytest.raises(TypeError, match="incompatible shapes for broadcasting"):
        a < b


def test_operator_x64_changes_scalar_dtype(x64):
    x = Array(np.array([1, 2], np.int64), False)
    same(x * 2.5, jnp.multiply(x, 2.5))
    assert (x * 2.5).dtype == np.float64
    y = Array(np.array([1.0, 2.0], np.float32), False)
    same(y * 2.5, numjax.jit(lambda a: a * 2.5)(y))


def test_operator_result_is_new_and_writable_constant_not_shared():
    x = jnp.ones(3)
    a, b = x * 3.0, x * 3.0
    assert np.asarray(a) is not np.asarray(b)
    z = jnp.float32(2.0) * 3.0
    np.asarray(z)      # a 0-d result owns its value
    assert float(z) == 6.0 and float(jnp.float32(1.0) * 3.0) == 3.0


# ---------------------------------------------------------------- cached jit calls

def test_jit_fast_path_counts_hits_and_matches_full_path():
    f = numjax.jit(lambda v: v * 2 + 1)
    x = jnp.float32(1.5)
    outs = [f(x) for _ in range(4)]
    assert f.stats.trace_misses == 1 and f.stats.trace_hits == 3
    for o in outs:
        same(o, outs[0])
    assert float(outs[0]) == 4.0 and outs[0].weak_type is False
    w = Array(np.array(1.5, np.float32), True)       # another weak type: its own trace
    assert f(w).weak_type is True and f.stats.trace_misses == 2


def test_jit_fast_path_non_contiguous_and_multi_output():
    f = numjax.jit(lambda m: m + 1.0)
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    c, t = Array(np.ascontiguousarray(base.T), False), Array(base.T, False)
    for arg in (c, t, c, t, t):
        np.testing.assert_array_equal(np.asarray(f(arg)), base.T + 1)
    assert f.stats.trace_misses == 1
    g = numjax.jit(lambda a, b: (a * b, {"s": a - b}))
    for _ in range(3):
        p, d = g(c, t)
        np.testing.assert_array_equal(np.asarray(p), base.T * base.T)
        np.testing.assert_array_equal(np.asarray(d["s"]), np.zeros((4, 3), np.float32))
    assert g.stats.trace_misses == 1 and g.stats.trace_hits >= 1


def test_jit_fast_path_follows_config_changes():
    f = numjax.jit(lambda v: v * 2)
    x = jnp.ones(2, dtype=jnp.int32)
    f(x), f(x)
    misses = f.stats.trace_misses
    old = numjax.config.jax_enable_x64
    numjax.config.update("jax_enable_x64", not old)
    try:
        f(x)
        assert f.stats.trace_misses == misses + 1   # a new epoch: traced again, not the old entry
    finally:
        numjax.config.update("jax_enable_x64", old)
    with numjax.disable_jit():
        calls = []
        h = numjax.jit(lambda v: calls.append(1) or v + 1)
        h(x), h(x)
        assert len(calls) == 2                       # no cached program runs under disable_jit


def test_jit_fast_path_with_default_device_scope():
    f = numjax.jit(lambda v: v * 3.0)
    x = jnp.arange(4.0)
    want = bits(f(x))
    cpu = numjax.devices("cpu")[0]
    for _ in range(2):
        with numjax.default_device(cpu):
            assert bits(f(x)) == want and bits(f(x)) == want
        assert bits(f(x)) == want
    with numjax.default_device("cpu"):
        assert bits(f(x)) == want


def test_jit_fast_path_under_transformations_stages():
    f = numjax.jit(lambda v: jnp.sin(v) * 2.0)
    x = jnp.ones(3)
    f(x), f(x)
    jaxpr = numjax.make_jaxpr(f)(x)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["jit"]
    g = numjax.grad(lambda v: jnp.sum(f(v)))(x)
    np.testing.assert_allclose(np.asarray(g), 2 * np.cos(1.0) * np.ones(3), rtol=1e-6)


def test_jit_fast_path_one_shape_many_dtypes_and_weak_types():
    """The one-Array path finds its entry by shape alone: calls alternating dtypes and weak
    types of one shape must each get their own program's result, as a first call does."""
    f = numjax.jit(lambda v: v * 2 + 1)
    host = np.arange(6).reshape(2, 3)
    args = [Array(host.astype(np.float32), False), Array(host.astype(np.int32), False),
            Array(host.astype(np.float32), True), Array(host.astype(np.float32).T.copy().T, False),
            Array(np.asarray(2.5, np.float32), True), Array(np.asarray(2.5, np.float32), False)]
    want = [numjax.jit(lambda v: v * 2 + 1)(a) for a in args]   # each a first call: the full path
    for _ in range(3):
        for a, w in zip(args, want):
            same(f(a), w)
    assert f.stats.trace_misses == 5                   # the Fortran-order copy reuses float32[2,3]
    assert f.stats.trace_hits == 3 * len(args) - 5


def test_jit_scalar_arguments_feed_kernels_and_driver_nodes():
    """A rank-0 argument read by a kernel and by a driver node, a rank-0 result only
    returned, and one also read on: all as the unjitted function computes them."""
    def fun(x, i, v):
        y = x * 3.0                                    # rank-0 result, only returned
        z = x + 1.0                                    # rank-0 result read on
        return y, z * v, lax.dynamic_slice(v, (i,), (2,)) * z, i + 1
    args = (jnp.float32(1.5), jnp.int32(2), jnp.arange(5.0))
    f = numjax.jit(fun)
    for _ in range(2):
        got = f(*args)
        with numjax.disable_jit():
            ref = fun(*args)
        for g, r in zip(got, ref):
            same(g, r)


# ---------------------------------------------------------------- threads

def test_fast_paths_from_threads():
    """Threads calling one jitted function and eager ops on their own shapes and dtypes at
    once: every result is the one a single thread computes."""
    f = numjax.jit(lambda v: jnp.tanh(v) * 3.0 + 1)
    inputs = [Array(np.linspace(-2, 2, n, dtype=np.float32), n % 2 == 0) for n in range(1, 9)]
    inputs += [Array(np.asarray(np.float32(k) / 4), False) for k in range(4)]
    expected = [(bits(f(x)), bits(jnp.exp(x) * 2.0 - x), bits(lax.sin(x) < 0.5)) for x in inputs]
    errors = []

    def work(seed):
        try:
            order = np.random.default_rng(seed).permutation(len(inputs))
            for _ in range(30):
                for i in order:
                    x = inputs[i]
                    got = (bits(f(x)), bits(jnp.exp(x) * 2.0 - x), bits(lax.sin(x) < 0.5))
                    assert got == expected[i]
        except Exception as err:   # reported below, with the thread's failure
            errors.append(err)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]

"""The 8- and 4-bit floats and the sub-byte ints under jit: stored as their bits, computed in
float32 (int32/uint32 for the ints), each result rounded (wrapped) back, as XLA's CPU backend
does (lowering/low_precision.py, lowering/narrow_bits.py).  The suite turns EagerFallbackWarning
into an error, so every jit here really runs the compiled program.

References are numpy and ml_dtypes, one operation at a time: ml_dtypes' conversions are XLA's
(tests/compat/test_float8_vs_jax.py checks the bits against real JAX), and XLA computes these
floats (but e8m0) as float16, so a computed result rounds to half precision and then to the
format, while a conversion rounds once.
"""
import ml_dtypes
import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp

FLOATS = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
          "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu", "float4_e2m1fn"]
INTS = ["int4", "uint4", "int2", "uint2"]
E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)
F4 = np.dtype(ml_dtypes.float4_e2m1fn)


def _dt(name):
    return np.dtype(getattr(ml_dtypes, name))


def _all_values(dt):
    """Every bit pattern of ``dt``."""
    return np.arange(16 if dt == F4 else 256, dtype=np.uint8).view(dt)


def _ml_round(x32, dt):
    """ml_dtypes' (= XLA's) conversion of float32 values, but for float4's NaN: XLA gives it -0
    (the bits 0x8) whatever the NaN's sign, where ml_dtypes flips the sign."""
    with np.errstate(all="ignore"):
        out = x32.astype(dt)
    if dt == F4:
        out = np.where(np.isnan(x32), np.uint8(8), out.view(np.uint8)).astype(np.uint8).view(dt)
    return out


def _round_computed(x32, dt):
    """A computed result: via half precision, but for e8m0 (XLA computes it in float32)."""
    with np.errstate(all="ignore"):
        return _ml_round(x32 if dt == E8M0 else x32.astype(np.float16).astype(np.float32), dt)


def _bits(x):
    x = np.asarray(x)
    return x.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[x.dtype.itemsize])


def _assert_same_bits(got, want, nan_bits=True):
    """Bit for bit; with ``nan_bits=False`` any NaN matches any NaN (the sign and payload of a
    NaN an operation makes are the hardware's, even XLA's differ between float types)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    bad = _bits(got) != _bits(want)
    if not nan_bits:
        bad &= ~(np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32)))
    assert not bad.any(), (np.nonzero(bad)[0][:5], got[bad][:5], want[bad][:5])


def _edge_values(dt):
    """The format's values, the halfway points between neighbours and the float32 values just
    beside them, beyond its largest value, ±0, ±inf, NaN and float32 subnormals."""
    vals = _all_values(dt).astype(np.float32)
    fin = np.unique(vals[np.isfinite(vals)])
    mids = ((fin[1:].astype(np.float64) + fin[:-1]) / 2).astype(np.float32)
    big = np.float32(ml_dtypes.finfo(dt).max)
    with np.errstate(over="ignore"):
        beyond = np.array([big * 1.0625, big * 1.125, big * 1.5, big * 2], np.float32)
    return np.concatenate([
        fin, -fin, mids, -mids, np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf)),
        beyond, np.array([3e38, 1e-45, 1e-40, 2.0 ** -127, 2.0 ** -126, 0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan],
                         np.float32),
        np.array([0x7F800001, 0xFFC00123, 0x00400001, 0x00BFFFFF, 0x7F7FFFFF], np.uint32).view(np.float32)])


@pytest.mark.parametrize("name", FLOATS)
def test_widening_is_exact_for_every_bit_pattern(name):
    dt = _dt(name)
    values = _all_values(dt)
    got = jax.jit(lambda v: v.astype(jnp.float32))(values)
    _assert_same_bits(got, values.astype(np.float32))     # NaNs included: ml_dtypes' quiet NaN


@pytest.mark.parametrize("name", FLOATS)
def test_rounding_matches_ml_dtypes(name):
    dt = _dt(name)
    rng = np.random.default_rng(0)
    random_bits = rng.integers(0, 1 << 32, 200_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    scaled = (rng.standard_normal(50_000) * 2.0 ** rng.integers(-20, 20, 50_000)).astype(np.float32)
    xs = np.concatenate([random_bits, scaled, _edge_values(dt)])
    got = jax.jit(lambda v: v.astype(dt))(xs)
    assert got.dtype == dt
    _assert_same_bits(got, _ml_round(xs, dt))
    _assert_same_bits(jnp.asarray(xs).astype(dt), _ml_round(xs, dt))   # eager agrees


def test_format_specials():
    def to(name, values):
        return np.asarray(jax.jit(lambda v: v.astype(_dt(name)))(np.array(values, np.float32))).view(np.uint8)
    inf, nan = np.inf, np.nan
    # fn: no infinity, overflow is NaN (0x7f with the sign); 464, the tie above 448, rounds to it (even)
    np.testing.assert_array_equal(to("float8_e4m3fn", [448, 464, 465, inf, -inf, -nan]),
                                  [0x7E, 0x7E, 0x7F, 0x7F, 0xFF, 0xFF])
    # IEEE-like: overflow to infinity, NaN quiet with its sign
    np.testing.assert_array_equal(to("float8_e5m2", [57344, 61440, inf, nan, -nan]), [0x7B, 0x7C, 0x7C, 0x7E, 0xFE])
    # fnuz: NaN is the bits of -0, there is no -0
    np.testing.assert_array_equal(to("float8_e4m3fnuz", [-0.0, -1e-10, inf, nan, 240]), [0, 0, 0x80, 0x80, 0x7F])
    # e8m0: powers of two, ties up, nothing at or below zero
    np.testing.assert_array_equal(to("float8_e8m0fnu", [1, 1.5, 3, 0, -1, 2.0 ** -127]), [127, 128, 129, 255, 255, 0])
    # float4: saturates, NaN becomes -0
    np.testing.assert_array_equal(to("float4_e2m1fn", [7, -100, inf, nan, 2.5, 0.25]), [7, 15, 7, 8, 4, 0])


BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "mul": (lambda a, b: a * b, np.multiply),
    "div": (lambda a, b: a / b, np.divide),
    "exp": (lambda a, b: jnp.exp(a), lambda a, b: np.exp(a)),
    "max": (jnp.maximum, np.maximum),
}


def _grid(dt):
    vals = _all_values(dt)
    if dt == E8M0:   # products and quotients stay normal float32s (no flush-to-zero question)
        vals = vals[64:191]
    a, b = np.meshgrid(vals, vals[::3])
    return a.ravel(), b.ravel()


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("name", FLOATS)
def test_arithmetic_rounds_each_result(name, op):
    dt = _dt(name)
    fn, ref = BINARY[op]
    a, b = _grid(dt)
    if op == "max":   # the sign of max(0, -0) is another question (float32 alike)
        keep = (a.astype(np.float32) != 0) | (b.astype(np.float32) != 0)
        a, b = a[keep], b[keep]
    with np.errstate(all="ignore"):
        want = _round_computed(ref(a.astype(np.float32), b.astype(np.float32)).astype(np.float32), dt)
    _assert_same_bits(jax.jit(fn)(a, b), want, nan_bits=False)
    _assert_same_bits(fn(jnp.asarray(a), jnp.asarray(b)), want, nan_bits=False)


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float8_e3m4", "float4_e2m1fn"])
def test_each_step_of_a_chain_rounds(name):
    dt = _dt(name)
    a, b = _grid(dt)
    f32 = a.astype(np.float32), b.astype(np.float32)
    scalar = np.float32(np.float32(2.5).astype(dt))   # a weak 2.5 takes the format (float4: 2)
    with np.errstate(all="ignore"):
        prod = _round_computed(f32[0] * f32[1], dt).astype(np.float32)
        scaled = _round_computed(prod * scalar, dt).astype(np.float32)
        want = _round_computed(scaled + f32[1], dt)

    def f(x, y):
        return x * y * 2.5 + y
    _assert_same_bits(jax.jit(f)(a, b), want, nan_bits=False)
    _assert_same_bits(f(jnp.asarray(a), jnp.asarray(b)), want, nan_bits=False)


@pytest.mark.parametrize("name", FLOATS)
def test_sum_and_dot_accumulate_in_float32(name):
    dt = _dt(name)
    rng = np.random.default_rng(3)
    values = _all_values(dt)
    mag = np.abs(values.astype(np.float32))
    band = values[(mag >= 0.25) & (mag <= 4)]   # float32 sums and dots of these are exact
    x = rng.choice(band, (6, 40))
    y = rng.choice(band, (40, 5))
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    want_sum = _round_computed(x32.sum(axis=1, dtype=np.float32), dt)
    want_dot = _round_computed(x32 @ y32, dt)
    _assert_same_bits(jax.jit(lambda v: jnp.sum(v, axis=1))(x), want_sum)
    _assert_same_bits(jnp.sum(jnp.asarray(x), axis=1), want_sum)
    _assert_same_bits(jax.jit(jnp.matmul)(x, y), want_dot)
    _assert_same_bits(jnp.asarray(x) @ jnp.asarray(y), want_dot)


def test_conversions_between_narrow_types():
    e4 = _all_values(_dt("float8_e4m3fn"))
    for target in ("float8_e5m2", "float4_e2m1fn", "bfloat16", "float16", "float8_e8m0fnu"):
        tdt = np.dtype(getattr(ml_dtypes, target, None) or target)
        got = jax.jit(lambda v: v.astype(tdt))(e4)
        want = _ml_round(e4.astype(np.float32), tdt) if tdt.itemsize == 1 else e4.astype(np.float32).astype(tdt)
        _assert_same_bits(got, want)
    ints = jax.jit(lambda v: v.astype(jnp.int32))(e4)
    f = e4.astype(np.float32)
    np.testing.assert_array_equal(np.asarray(ints)[np.isfinite(f)], np.trunc(f[np.isfinite(f)]).astype(np.int32))


def test_grad_and_vmap_under_jit_match_eager():
    dt = _dt("float8_e4m3fn")
    x = np.array([0.5, 1.0, 1.5, 2.0, 3.0, -0.75], np.float32).astype(dt)

    def loss(v):
        return jnp.sum(jnp.sin(v) * v)
    g = jax.jit(jax.grad(loss))(x)
    assert g.dtype == dt
    _assert_same_bits(g, jax.grad(loss)(jnp.asarray(x)))
    f32 = x.astype(np.float32)
    np.testing.assert_allclose(np.asarray(g).astype(np.float32), np.cos(f32) * f32 + np.sin(f32), atol=0.2, rtol=0.1)
    m = np.arange(12, dtype=np.float32).reshape(3, 4).astype(dt)
    rows = jax.vmap(lambda r: jnp.dot(r, r) + r[0])(jnp.asarray(m))
    _assert_same_bits(jax.jit(jax.vmap(lambda r: jnp.dot(r, r) + r[0]))(m), rows)


def test_loops_carry_float8():
    dt = _dt("float8_e5m2")
    xs = np.linspace(-2, 2, 9, dtype=np.float32).astype(dt)

    def body(c, x):
        return c * jnp.asarray(0.5, dt) + x, c
    eager = jax.lax.scan(body, jnp.asarray(1.0, dt), jnp.asarray(xs))
    jitted = jax.jit(lambda v: jax.lax.scan(body, jnp.asarray(1.0, dt), v))(xs)
    for e, j in zip(eager, jitted):
        _assert_same_bits(j, e)
    # the weak 100 is 96 in e5m2 (as is 97), so doubling 3 stops at 96 both times
    for bound in (100, 97):
        count = jax.jit(lambda v: jax.lax.while_loop(lambda c: c < bound, lambda c: c * 2, v))
        assert float(count(jnp.asarray(3.0, dt))) == 96.0


def test_stored_as_bytes_in_one_fused_kernel():
    x = jnp.ones(8, jnp.float8_e4m3fn)
    text = jax.jit(lambda a, b: a * b + b).lower(x, x).as_text()
    assert text.count("# ---- kernel") == 1
    assert "np.uint8" in text and "float8" not in text


# ---------------------------------------------------------------- int4, uint4, int2, uint2

def _wrap(v, dt):
    """int64 values wrapped to ``dt``'s bits, as numbers."""
    bits = 4 if "4" in dt.name else 2
    v = np.asarray(v, np.int64) & ((1 << bits) - 1)
    if dt.name.startswith("int"):
        v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
    return v


def _int_grid(dt):
    n = 16 if "4" in dt.name else 4
    vals = np.arange(n, dtype=np.uint8).view(dt)
    a, b = np.meshgrid(vals, vals)
    return a.ravel(), b.ravel()


def _xla_div(a, b, dt):
    """XLA's integer division: truncating; by zero gives -1 (all ones)."""
    with np.errstate(all="ignore"):
        q = np.where(b == 0, -1, np.trunc(a / np.where(b == 0, 1, b)))
    return _wrap(q, dt)


INT_OPS = {
    "add": (lambda a, b: a + b, lambda a, b, dt: _wrap(a + b, dt)),
    "sub": (lambda a, b: a - b, lambda a, b, dt: _wrap(a - b, dt)),
    "mul": (lambda a, b: a * b, lambda a, b, dt: _wrap(a * b, dt)),
    "div": (jax.lax.div, _xla_div),
    "neg": (lambda a, b: -a, lambda a, b, dt: _wrap(-a, dt)),
    "xor": (lambda a, b: a ^ b, lambda a, b, dt: _wrap(a ^ b, dt)),
    "max": (jnp.maximum, lambda a, b, dt: np.maximum(a, b)),
    "lt": (lambda a, b: (a < b).astype(jnp.int32), lambda a, b, dt: (a < b).astype(np.int64)),
}


@pytest.mark.parametrize("op", sorted(INT_OPS))
@pytest.mark.parametrize("name", INTS)
def test_int_arithmetic_wraps(name, op):
    dt = _dt(name)
    fn, ref = INT_OPS[op]
    a, b = _int_grid(dt)
    want = ref(a.astype(np.int64), b.astype(np.int64), dt)
    got = jax.jit(fn)(a, b)
    np.testing.assert_array_equal(np.asarray(got).astype(np.int64), want)
    eager = fn(jnp.asarray(a), jnp.asarray(b))
    assert got.dtype == eager.dtype
    np.testing.assert_array_equal(_bits(got), _bits(eager))


@pytest.mark.parametrize("name", INTS)
def test_int_shifts_see_only_their_bits(name):
    dt = _dt(name)
    bits = 4 if "4" in name else 2
    a, b = _int_grid(dt)
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    amount = b64 & ((1 << bits) - 1)          # a negative amount is a large unsigned one
    pattern = a64 & ((1 << bits) - 1)
    big = amount >= bits
    left = np.where(big, 0, _wrap(pattern << np.minimum(amount, bits), dt))
    logical = np.where(big, 0, _wrap(pattern >> np.minimum(amount, bits), dt))
    signed = np.where(pattern >= 1 << (bits - 1), pattern - (1 << bits), pattern)   # the bits read as signed
    arith = _wrap(signed >> np.minimum(amount, bits - 1), dt)
    for fn, want in ((jax.lax.shift_left, left), (jax.lax.shift_right_logical, logical),
                     (jax.lax.shift_right_arithmetic, arith)):
        got = jax.jit(fn)(a, b)
        np.testing.assert_array_equal(np.asarray(got).astype(np.int64), want, err_msg=fn.__name__)
        np.testing.assert_array_equal(_bits(fn(jnp.asarray(a), jnp.asarray(b))), _bits(got))


@pytest.mark.parametrize("name", INTS)
def test_int_conversions(name):
    dt = _dt(name)
    info = ml_dtypes.iinfo(dt)
    every = np.arange(16 if "4" in name else 4, dtype=np.uint8).view(dt)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: v.astype(jnp.int32))(every)), every.astype(np.int32))
    ints = np.arange(-40, 40, dtype=np.int32)
    got = jax.jit(lambda v: v.astype(dt))(ints)
    np.testing.assert_array_equal(np.asarray(got).astype(np.int64), _wrap(ints, dt))     # wraps
    np.testing.assert_array_equal(np.asarray(got).view(np.uint8), ints.astype(dt).view(np.uint8))   # ml_dtypes' bytes
    floats = np.array([-100, -8.6, -2.5, -0.5, 0.7, 1.9, 7.9, 100, np.nan, np.inf, -np.inf], np.float32)
    with np.errstate(invalid="ignore"):
        saturated = np.clip(np.nan_to_num(np.trunc(floats), nan=0, posinf=info.max, neginf=info.min),
                            info.min, info.max)
    for out in (jax.jit(lambda v: v.astype(dt))(floats), jnp.asarray(floats).astype(dt)):
        np.testing.assert_array_equal(np.asarray(out).astype(np.int64), saturated)    # saturates
    e4 = np.array([-100, -3.5, 3.5, 100], np.float32).astype(ml_dtypes.float8_e4m3fn)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: v.astype(dt))(e4)).astype(np.int64),
                                  np.clip(np.trunc(e4.astype(np.float32)), info.min, info.max))


def test_int4_reductions_dot_and_slicing():
    dt = _dt("int4")
    rng = np.random.default_rng(4)
    x = rng.integers(-8, 8, (5, 9)).astype(dt)
    y = rng.integers(-8, 8, (9, 3)).astype(dt)
    x64, y64 = x.astype(np.int64), y.astype(np.int64)
    np.testing.assert_array_equal(np.asarray(jax.jit(jnp.matmul)(x, y)).astype(np.int64), _wrap(x64 @ y64, dt))
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: jnp.max(v, axis=1))(x)).astype(np.int64),
                                  x64.max(axis=1))
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: jnp.cumsum(v, axis=1, dtype=dt))(x)).astype(np.int64),
                                  _wrap(np.cumsum(x64, axis=1), dt))
    # An int4 start index is read as its value, not its stored byte (0x0e for -2). As in JAX,
    # a negative start has the dimension added in int4 (20 wraps to 4): -2 starts at 2.
    row = np.arange(20, dtype=np.float32)
    for start, first in ((-2, 2), (-1, 3), (5, 5)):
        i = np.array(start, np.int8).astype(dt)
        got = jax.jit(lambda r, i: jax.lax.dynamic_slice(r, (i,), (3,)))(row, i)
        np.testing.assert_array_equal(np.asarray(got), row[first:first + 3])
        np.testing.assert_array_equal(np.asarray(jax.lax.dynamic_slice(jnp.asarray(row), (jnp.asarray(i),), (3,))),
                                      row[first:first + 3])

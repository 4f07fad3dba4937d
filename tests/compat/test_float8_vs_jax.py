"""The 8- and 4-bit floats and the sub-byte ints under jit against real JAX 0.10.2: the bits of
conversions, arithmetic, reductions, dots, int4 wrap-around, grad and vmap.

    .venv-jax/bin/python -m pytest tests/compat/test_float8_vs_jax.py

Where XLA's CPU backend does something numjax deliberately does not, the inputs leave it out
and the comment says why:

* it flushes float32 subnormals to zero, and e8m0's smallest value 2**-127 is one;
* it accumulates a float8 sum in float8 in its own (vectorized) order, numjax in float32
  (as both do for bfloat16): sums are compared where every partial sum is exact;
* it converts float4's largest value 6 to the int type's maximum (its clamp bound, the int
  maximum, rounds to 6 in float4), numjax to 6.
"""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
jnp = jax.numpy

import ml_dtypes  # noqa: E402  (a dependency of numjax)

import numjax  # noqa: E402
import numjax.numpy as njnp  # noqa: E402

FLOATS = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
          "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu", "float4_e2m1fn"]
INTS = ["int4", "uint4", "int2", "uint2"]


def _dt(name):
    return np.dtype(getattr(ml_dtypes, name))


def _all_values(dt):
    return np.arange(16 if dt.name == "float4_e2m1fn" else 256, dtype=np.uint8).view(dt)


def _bits(x):
    x = np.asarray(x)
    return x.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])


def _both(fn, *args):
    """``fn(numpy_module, *args)`` jitted by real JAX and by numjax."""
    want = np.asarray(jax.jit(lambda *a: fn(jnp, *a))(*args))
    got = np.asarray(numjax.jit(lambda *a: fn(njnp, *a))(*args))
    assert got.dtype == want.dtype and got.shape == want.shape
    return got, want


def _assert_same(got, want, nan_bits=True):
    bad = _bits(got) != _bits(want)
    if not nan_bits:   # the sign and payload of a NaN an operation makes are the hardware's
        f32 = (got.astype(np.float32), want.astype(np.float32))
        bad &= ~(np.isnan(f32[0]) & np.isnan(f32[1]))
    assert not bad.any(), (np.nonzero(bad)[0][:5], got[bad][:5], want[bad][:5])


def _float32_probe(dt):
    rng = np.random.default_rng(0)
    vals = _all_values(dt).astype(np.float32)
    fin = np.unique(vals[np.isfinite(vals)])
    mids = ((fin[1:].astype(np.float64) + fin[:-1]) / 2).astype(np.float32)
    return np.concatenate([
        rng.integers(0, 1 << 32, 100_000, dtype=np.uint64).astype(np.uint32).view(np.float32),
        fin, -fin, mids, -mids, np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf)),
        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 3e38, 1e-45, 2.0 ** -127], np.float32)])


@pytest.mark.parametrize("name", FLOATS)
def test_conversion_bits_match_jax(name):
    dt = _dt(name)
    xs = _float32_probe(dt)
    got, want = _both(lambda m, x: x.astype(dt), xs)
    _assert_same(got, want)


@pytest.mark.parametrize("name", FLOATS)
def test_widening_matches_jax(name):
    got, want = _both(lambda m, x: x.astype(m.float32), _all_values(_dt(name)))
    _assert_same(got, want, nan_bits=False)


def _grid(dt, stride=3):
    vals = _all_values(dt)
    if dt.name == "float8_e8m0fnu":   # results stay normal float32s (XLA flushes subnormals)
        vals = vals[64:191]
    a, b = np.meshgrid(vals, vals[::stride])
    return a.ravel(), b.ravel()


ARITHMETIC = {
    "add": lambda m, a, b: a + b,
    "sub": lambda m, a, b: a - b,
    "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b,
    "exp": lambda m, a, b: m.exp(a),
    "log": lambda m, a, b: m.log(a),
    "sqrt": lambda m, a, b: m.sqrt(a),
    "tanh": lambda m, a, b: m.tanh(a),
    "chain": lambda m, a, b: (a * b + a) / 3,
    "weak_scalars": lambda m, a, b: a * 2.5 - 1,
    "to_float32": lambda m, a, b: (a * b).astype(m.float32),
    "compare": lambda m, a, b: m.where(a < b, a, -b),
}


@pytest.mark.parametrize("op", sorted(ARITHMETIC))
@pytest.mark.parametrize("name", FLOATS)
def test_arithmetic_matches_jax(name, op):
    dt = _dt(name)
    got, want = _both(ARITHMETIC[op], *_grid(dt))
    _assert_same(got, want, nan_bits=False)


@pytest.mark.parametrize("name", [n for n in FLOATS if n != "float8_e8m0fnu"])
def test_dot_matches_jax(name):
    dt = _dt(name)
    rng = np.random.default_rng(1)
    finite = _all_values(dt)[np.isfinite(_all_values(dt).astype(np.float32))]
    a, b = rng.choice(finite, (16, 24)), rng.choice(finite, (24, 8))
    got, want = _both(lambda m, x, y: x @ y, a, b)
    _assert_same(got, want, nan_bits=False)


@pytest.mark.parametrize("name", [n for n in FLOATS if n != "float8_e8m0fnu"])
def test_sum_matches_jax_where_partial_sums_are_exact(name):
    dt = _dt(name)
    # every partial sum of 6 of -1, 0, 1 is a value of each format (of 3 for float4: 0.5, 1,
    # 1.5, 2, 3, 4, 6 and their negatives)
    cols = 3 if name == "float4_e2m1fn" else 6
    x = np.random.default_rng(2).choice(np.array([-1, 0, 1], np.float32), (60, cols)).astype(dt)
    got, want = _both(lambda m, v: m.sum(v, axis=1), x)
    _assert_same(got, want)
    got, want = _both(lambda m, v: m.mean(v, axis=1), x)
    _assert_same(got, want, nan_bits=False)


@pytest.mark.parametrize("target", ["int32", "int8", "uint8", "int4", "uint4", "int2"])
@pytest.mark.parametrize("name", FLOATS)
def test_float_to_int_matches_jax(name, target):
    dt = _dt(name)
    vals = _all_values(dt)
    if name == "float4_e2m1fn":   # XLA: 6 converts to the int maximum (see the module docstring)
        vals = vals[np.abs(vals.astype(np.float32)) < 6]
    got, want = _both(lambda m, v: v.astype(getattr(m, target)), vals)
    _assert_same(got, want)


@pytest.mark.parametrize("name", [n for n in FLOATS if n != "float8_e8m0fnu"])
def test_grad_and_vmap_match_jax(name):
    # (e8m0 has no zero: a gradient there is NaN or meaningless)
    dt = _dt(name)
    x = np.array([0.5, 1.0, 1.5, 2.0, 3.0, -0.5], np.float32).astype(dt)
    got, want = _both(lambda m, v: (jax.grad if m is jnp else numjax.grad)(lambda u: m.sum(m.sin(u) * u))(v), x)
    _assert_same(got, want, nan_bits=False)
    rows = np.arange(12, dtype=np.float32).reshape(3, 4).astype(dt)
    got, want = _both(lambda m, r: (jax.vmap if m is jnp else numjax.vmap)(lambda v: m.dot(v, v) + v[0])(r), rows)
    _assert_same(got, want, nan_bits=False)


# ---------------------------------------------------------------- int4, uint4, int2, uint2

def _int_grid(dt):
    vals = np.arange(16 if "4" in dt.name else 4, dtype=np.uint8).view(dt)
    a, b = np.meshgrid(vals, vals)
    return a.ravel(), b.ravel()


INT_OPS = {
    "add": lambda m, a, b: a + b, "sub": lambda m, a, b: a - b, "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: (jax.lax if m is jnp else numjax.lax).div(a, b),
    "rem": lambda m, a, b: (jax.lax if m is jnp else numjax.lax).rem(a, b),
    "shift_left": lambda m, a, b: (jax.lax if m is jnp else numjax.lax).shift_left(a, b),
    "shift_right_logical": lambda m, a, b: (jax.lax if m is jnp else numjax.lax).shift_right_logical(a, b),
    "shift_right_arithmetic": lambda m, a, b: (jax.lax if m is jnp else numjax.lax).shift_right_arithmetic(a, b),
    "neg": lambda m, a, b: -a, "not": lambda m, a, b: ~a,
    "and_or_xor": lambda m, a, b: (a & b) ^ (a | b),
    "max": lambda m, a, b: m.maximum(a, b), "min": lambda m, a, b: m.minimum(a, b),
    "compare": lambda m, a, b: (a < b) | (a == b),
    "integer_pow": lambda m, a, b: a ** 3,
    "to_float32": lambda m, a, b: a.astype(m.float32) / 2,
    "to_float8": lambda m, a, b: (a.astype(m.float8_e4m3fn) * 3).astype(m.float32),
    "to_other_ints": lambda m, a, b: (a.astype(m.int8) + a.astype(m.uint4).astype(m.int32)
                                      + a.astype(m.int4).astype(m.int32) + a.astype(m.uint2).astype(m.int32)),
}


@pytest.mark.parametrize("op", sorted(INT_OPS))
@pytest.mark.parametrize("name", INTS)
def test_int_ops_match_jax(name, op):
    got, want = _both(INT_OPS[op], *_int_grid(_dt(name)))
    _assert_same(got, want)


@pytest.mark.parametrize("name", INTS)
def test_conversions_to_sub_byte_ints_match_jax(name):
    dt = _dt(name)
    floats = np.concatenate([np.linspace(-40, 40, 321, dtype=np.float32),
                             np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, -0.0], np.float32)])
    got, want = _both(lambda m, v: v.astype(dt), floats)
    _assert_same(got, want)
    ints = np.arange(-300, 300, dtype=np.int32)
    got, want = _both(lambda m, v: v.astype(dt), ints)
    _assert_same(got, want)


def test_int4_reductions_dot_iota_and_indexing_match_jax():
    dt = _dt("int4")
    rng = np.random.default_rng(3)
    x = rng.integers(-8, 8, (6, 10)).astype(dt)
    y = rng.integers(-8, 8, (10, 4)).astype(dt)
    cases = [(lambda m, a, b: a @ b, (x, y)),
             (lambda m, a: m.max(a, axis=1), (x,)),
             (lambda m, a: m.cumsum(a, axis=1, dtype=a.dtype), (x,)),
             (lambda m, a: (jax.lax if m is jnp else numjax.lax).iota(dt, 40) + a[0, 0], (x,)),
             # JAX adds the dimension to a negative int4 index in int4 (20 wraps to 4)
             (lambda m, r, i: r[i], (np.arange(20, dtype=np.float32), np.array([-1, 3, -8, 0, 7], np.int8).astype(dt))),
             (lambda m, r, i: (jax.lax if m is jnp else numjax.lax).dynamic_slice(r, (i,), (3,)),
              (np.arange(20, dtype=np.float32), np.array(-2, np.int8).astype(dt)))]
    for fn, args in cases:
        got, want = _both(fn, *args)
        _assert_same(got, want)

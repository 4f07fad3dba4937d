"""Value ranges of a region's values (lowering/value_range.py) and the vmath variants they pick
(``fn.within``, through lowering/scalar.py).

A rule that under-estimates a range would let a variant run where it does not hold, so the
rules are checked against computed float32 values for random argument intervals; each variant
is checked against its full function on its domain (a sample through Numba here, every float32
through jit in the slow test), and the chain's compiled code is checked to use them.
"""
import math

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numjax
import numjax.numpy as jnp
from numjax import lax
from numjax.lax import elementwise as ew
from numjax.lowering import vmath
from numjax.lowering.value_range import FULL, INF, Range, apply, region_ranges

vmath.ensure_jitted()
F32_MAX = float(np.finfo(np.float32).max)

UNARY = {
    "exp": (ew.exp_p, lax.exp), "expm1": (ew.expm1_p, lax.expm1), "log": (ew.log_p, lax.log),
    "log1p": (ew.log1p_p, lax.log1p), "sqrt": (ew.sqrt_p, lax.sqrt), "tanh": (ew.tanh_p, lax.tanh),
    "logistic": (ew.logistic_p, lax.logistic), "erf": (ew.erf_p, lax.erf), "sin": (ew.sin_p, lax.sin),
    "cos": (ew.cos_p, lax.cos), "neg": (ew.neg_p, lax.neg), "abs": (ew.abs_p, lax.abs),
}
BINARY = {
    "add": (ew.add_p, lax.add), "sub": (ew.sub_p, lax.sub), "mul": (ew.mul_p, lax.mul),
    "div": (ew.div_p, lax.div), "max": (ew.max_p, lax.max), "min": (ew.min_p, lax.min),
}

_bound = st.one_of(st.floats(width=32, allow_nan=False),
                   st.floats(-3.0, 3.0, width=32),
                   st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.75, 80.0, -80.0, 1e-40, INF, -INF, F32_MAX]))


def _interval(a, b, nan):
    lo, hi = sorted((float(a) + 0.0, float(b) + 0.0))      # (+ 0.0: no -0.0 bound)
    return Range(lo, hi, nan)


def _points(r, rng, n=64):
    """float32 values in ``r``: its ends, values near them, uniform and random-bit ones inside,
    and a nan when ``r`` allows one."""
    lo, hi = np.float32(r.lo), np.float32(r.hi)
    with np.errstate(over="ignore"):
        ends = [lo, hi, np.nextafter(lo, hi), np.nextafter(hi, lo)]
    inner = []
    if math.isfinite(r.hi - r.lo):
        inner.append(rng.uniform(r.lo, r.hi, n))
    bits = rng.integers(0, 2**32, 8 * n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    inner.append(bits[(bits >= lo) & (bits <= hi)])
    x = np.concatenate([np.float32(ends)] + [np.asarray(v, np.float32) for v in inner])
    x = x[(x >= lo) & (x <= hi)]
    return np.append(x, np.float32(np.nan)) if r.nan else x


def _assert_inside(y, r, what):
    y = np.asarray(y, np.float64).ravel()
    nan = np.isnan(y)
    assert r.nan or not nan.any(), (what, r, "nan not allowed")
    outside = ~nan & ((y < r.lo) | (y > r.hi))
    assert not outside.any(), (what, r, y[outside][:5])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(UNARY)), _bound, _bound, st.booleans(), st.integers(0, 2**32 - 1))
def test_unary_rules_bound_the_results(name, a, b, nan, seed):
    prim, fn = UNARY[name]
    arg = _interval(a, b, nan)
    got = apply(prim, [arg], np.float32, {})
    x = _points(arg, np.random.default_rng(seed))
    _assert_inside(fn(x), got, (name, arg))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(BINARY)), _bound, _bound, _bound, _bound, st.booleans(), st.booleans(),
       st.integers(0, 2**32 - 1))
def test_binary_rules_bound_the_results(name, a, b, c, d, nan1, nan2, seed):
    prim, fn = BINARY[name]
    r1, r2 = _interval(a, b, nan1), _interval(c, d, nan2)
    got = apply(prim, [r1, r2], np.float32, {})
    rng = np.random.default_rng(seed)
    x, y = _points(r1, rng), _points(r2, rng)
    _assert_inside(fn(x[:, None], y[None, :]), got, (name, r1, r2))


@settings(max_examples=100, deadline=None)
@given(_bound, _bound, st.sampled_from([2, 3, 4, -1]), st.integers(0, 2**32 - 1))
def test_integer_pow_rule_bounds_the_results(a, b, y, seed):
    arg = _interval(a, b, False)
    got = apply(ew.integer_pow_p, [arg], np.float32, {"y": y})
    _assert_inside(lax.integer_pow(_points(arg, np.random.default_rng(seed)), y), got, (y, arg))


@settings(max_examples=100, deadline=None)
@given(_bound, _bound, _bound, _bound, _bound, _bound, st.integers(0, 2**32 - 1))
def test_clamp_and_select_rules_bound_the_results(a, b, c, d, e, f, seed):
    rng = np.random.default_rng(seed)
    r1, r2, r3 = _interval(a, b, False), _interval(c, d, True), _interval(e, f, False)
    x1, x2, x3 = _points(r1, rng, 8), _points(r2, rng, 8), _points(r3, rng, 8)
    got = apply(ew.clamp_p, [r1, r2, r3], np.float32, {})
    lo, x, hi = (np.ascontiguousarray(v) for v in np.broadcast_arrays(
        x1[:, None, None], x2[None, :, None], x3[None, None, :]))
    ok = lo <= hi                                           # (clamp's bounds in order)
    _assert_inside(np.asarray(lax.clamp(lo, x, hi))[ok], got, ("clamp", r1, r2, r3))
    got = apply(ew.select_n_p, [FULL, r1, r2], np.float32, {})
    _assert_inside(np.concatenate([x1, x2]), got, ("select_n", r1, r2))


def test_ranges_widen_and_overflow_to_infinity():
    r = apply(ew.exp_p, [Range(0.0, 100.0, False)], np.float32, {})
    assert r.lo < 1.0 and r.hi == INF and not r.nan             # e^100 is past float32's range
    assert apply(ew.exp_p, [Range(0.0, 100.0, False)], np.float64, {}).hi < INF
    assert apply(ew.log_p, [Range(-1.0, 2.0, False)], np.float32, {}).nan       # log of a negative
    assert apply(ew.add_p, [Range(0.0, INF, False), Range(-INF, 0.0, False)], np.float32, {}).nan
    assert apply(ew.mul_p, [Range(0.0, 1.0, False), Range(1.0, INF, False)], np.float32, {}).nan
    assert not apply(ew.sin_p, [Range(-10.0, 10.0, False)], np.float32, {}).nan
    assert apply(ew.sin_p, [Range(-INF, 10.0, False)], np.float32, {}).nan     # sin(-inf)


def test_chain_ranges():
    """The benchmark chain: exp, tanh, log1p and cos each see a bounded argument."""
    x = np.zeros(8, np.float32)
    jaxpr = numjax.make_jaxpr(lambda v: jnp.cos(jnp.log1p(jnp.tanh(jnp.exp(jnp.sin(v) * 0.5 + 0.25)))))(x).jaxpr
    ranges = region_ranges(jaxpr.eqns)
    by_prim = {e.primitive.name: ranges[e.invars[0]] for e in jaxpr.eqns
               if e.primitive.name in ("exp", "tanh", "log1p", "cos")}
    assert by_prim["exp"].within(-0.2501, 0.7501) and by_prim["exp"].nan       # sin(nan or inf) is nan
    assert by_prim["tanh"].within(0.778, 2.118)          # e^-0.25, e^0.75
    assert by_prim["log1p"].within(0.651, 0.972)         # tanh of those
    assert by_prim["cos"].within(0.50, 0.68)


def test_compiled_chain_uses_the_variants():
    x = np.zeros(1000, np.float32)
    text = numjax.jit(lambda v: jnp.cos(jnp.log1p(jnp.tanh(jnp.exp(jnp.sin(v) * 0.5 + 0.25))))).lower(x).as_text()
    for name in ("vm.sin_f32(", "vm.exp_f32_mid(", "vm.tanh_f32_rational(", "vm.log1p_f32_big(", "vm.cos_f32_small("):
        assert name in text, name
    # an argument of unknown range keeps the full function
    assert "vm.exp_f32(" in numjax.jit(jnp.exp).lower(x).as_text()


# ---------------------------------------------------------------- the variants

def _variants():
    out = []
    for name, fn in sorted(vmath.PLAIN.items()):
        for variant, holds in getattr(fn, "within", ()):
            out.append((name, fn, variant, holds))
    return out


VARIANTS = _variants()


def test_variants_are_registered():
    names = {(n, v.__name__) for n, _, v, _ in VARIANTS}
    assert {("exp_f32", "exp_f32_mid"), ("tanh_f32", "tanh_f32_rational"), ("tanh_f32", "tanh_f32_inner"),
            ("log1p_f32", "log1p_f32_big"), ("log1p_f32", "log1p_f32_small"), ("log_f32", "log_f32_normal"),
            ("sin_f32", "sin_f32_small"), ("cos_f32", "cos_f32_small"), ("sin_f32", "sin_f32_fast"),
            ("cos_f32", "cos_f32_fast")} <= names
    for _, _, variant, _ in VARIANTS:
        assert vmath.PLAIN[variant.__name__] is variant           # kernels call it as vm.<name>


def _domain_sample(holds, rng):
    edges = np.float32([0.0, -0.0, 4e-4, -4e-4, 0.75, -0.75, 0.41421357, -0.41421357, 80.0, -80.0,
                        7.99881, -7.99881, 1.1754944e-38, 1e-40, -1e-40, 3.4028235e38, 1.0, -1.0])
    with np.errstate(over="ignore"):
        near = [np.nextafter(edges, np.float32(np.inf)), np.nextafter(edges, np.float32(-np.inf))]
    x = np.concatenate([rng.uniform(-100, 100, 1 << 16).astype(np.float32),
                        rng.uniform(-1, 1, 1 << 16).astype(np.float32),
                        rng.integers(0, 2**32, 1 << 17, dtype=np.uint64).astype(np.uint32).view(np.float32),
                        edges] + near)
    return x[[not np.isnan(v) and holds(Range(float(v), float(v), False)) for v in x]]


@pytest.mark.parametrize("name,fn,variant,holds", VARIANTS, ids=[f"{v[0]}-{v[2].__name__}" for v in VARIANTS])
def test_variant_equals_its_function_on_its_domain(name, fn, variant, holds):
    x = _domain_sample(holds, np.random.default_rng(7))
    assert x.size > 1000
    nan_ok = any(holds(Range(float(v), float(v), True)) for v in x[:10])
    if nan_ok:
        x = np.append(x, np.float32([np.nan, -np.nan]))
    full, fast = (numba.njit(inline="always")(f) for f in (fn, variant))

    @numba.njit(cache=False)
    def run(x):
        a, b = np.empty_like(x), np.empty_like(x)
        for i in range(x.size):
            a[i], b[i] = full(x[i]), fast(x[i])
        return a, b
    a, b = run(x)
    same = (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))
    assert same.all(), (x[~same][:5], a[~same][:5], b[~same][:5])


# Programs whose argument's range picks each variant (clip bounds it), for the exhaustive test.
CLIPPED = {
    "exp_f32_mid": (jnp.exp, -80.0, 80.0),
    "tanh_f32_rational": (jnp.tanh, 4.0001e-4, 7.998),
    "tanh_f32_inner": (jnp.tanh, -7.998, 7.998),
    "log1p_f32_big": (jnp.log1p, 0.41422, F32_MAX),
    "log1p_f32_small": (jnp.log1p, -0.4142, 0.4142),
    "log_f32_normal": (jnp.log, 1.2e-38, F32_MAX),
    "sin_f32_small": (jnp.sin, -0.7499, 0.7499),
    "cos_f32_small": (jnp.cos, -0.7499, 0.7499),
    "sin_f32_fast": (jnp.sin, -119.99, 119.99),
    "cos_f32_fast": (jnp.cos, -119.99, 119.99),
}


@pytest.mark.parametrize("variant", sorted(CLIPPED))
def test_clipped_program_picks_the_variant(variant):
    fn, lo, hi = CLIPPED[variant]
    x = np.linspace(-100, 100, 4097, dtype=np.float32)
    program = numjax.jit(lambda v: fn(jnp.clip(v, lo, hi)))
    assert f"vm.{variant}(" in program.lower(x).as_text()
    want = fn(np.clip(x, np.float32(lo), np.float32(hi)))         # eager: the full function
    got = np.asarray(program(x))
    assert np.array_equal(got.view(np.uint32), np.asarray(want).view(np.uint32))


@pytest.mark.slow
@pytest.mark.parametrize("variant", sorted(CLIPPED))
def test_exhaustive_variants(variant):
    """Every float32 in the variant's domain (and the rest, clipped to its ends) through the
    clipped program, against the full function (a jitted program of an unbounded argument)."""
    fn, lo, hi = CLIPPED[variant]
    program = numjax.jit(lambda v: fn(jnp.clip(v, lo, hi)))
    eager = numjax.jit(lambda v: fn(v))
    chunk = 1 << 24
    for start in range(0, 1 << 32, chunk):
        x = np.clip(np.arange(start, start + chunk, dtype=np.uint32).view(np.float32), np.float32(lo), np.float32(hi))
        got, want = np.asarray(program(x)), np.asarray(eager(x))
        bad = (got.view(np.uint32) != want.view(np.uint32)) & ~(np.isnan(got) & np.isnan(want))
        assert not bad.any(), (variant, hex(start), x[bad][:5])

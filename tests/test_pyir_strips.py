"""Loops in strips (lowering/pyir_strips.py): staged at math calls, and speculative.

The reference is a Numba loop calling the full math functions element by element (vmath's
functions, bit-equal to XLA's / glibc's: tests/test_sincos_f32.py, tests/test_xla_ulp.py), so a
fast variant used where it does not hold, a tier that stuck when it should not, or a strip run
twice over its own results would show as different bits.
"""
import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numjax
import numjax.numpy as jnp
from numjax.lowering import pyir_strips, vmath
from numjax.lowering import vmath_sincos

vmath.ensure_jitted()
STRIP = pyir_strips.STRIP


def chain(np_, x):
    return np_.cos(np_.log1p(np_.tanh(np_.exp(np_.sin(x) * 0.5 + 0.25)))) * 2.0 - 1.0


@numba.njit(cache=False)
def _reference(x, which):
    out = np.empty_like(x)
    vm = vmath
    for i in range(x.size):
        v = x.flat[i]
        if which == 0:
            r = vm.sin_f32(v)
        elif which == 1:
            r = vm.cos_f32(v)
        elif which == 2:
            r = vm.log1p_f32(v)
        elif which == 3:
            r = vm.cos_f32(vm.sin_f32(v))
        elif which == 5:
            r = vm.exp_f32(v)
        else:
            s = np.float32(np.float32(vm.sin_f32(v) * np.float32(0.5)) + np.float32(0.25))
            r = np.float32(vm.cos_f32(vm.log1p_f32(vm.tanh_f32(vm.exp_f32(s)))) * np.float32(2.0)) - np.float32(1.0)
        out.flat[i] = r
    return out


PROGRAMS = {0: jnp.sin, 1: jnp.cos, 2: jnp.log1p, 3: lambda x: jnp.cos(jnp.sin(x)),
            4: lambda x: chain(jnp, x), 5: lambda x: (jnp.exp(x), jnp.log1p(x))}
REFERENCES = {5: (5, 2)}      # a program's outputs (5: exp's and log1p's, one loop) -> _reference's


def _assert_bits(which, x):
    got = numjax.jit(PROGRAMS[which])(x)
    for ref, out in zip(REFERENCES.get(which, (which,)), got if isinstance(got, tuple) else (got,)):
        out = np.asarray(out)
        want = _reference(x, ref)
        bad = out.view(np.uint32) != want.view(np.uint32)
        assert not bad.any(), (ref, x[bad][:5], out[bad][:5], want[bad][:5])


def _strips(kinds, rng, tail=37):
    """One strip per entry of ``kinds``: 's' |x| < 0.75 (sin/cos tier 0, log1p's small side),
    'm' |x| < 120 (tier 1), 'l' one element >= 120 (the full functions), 'n' one nan and one
    inf, 'b' log1p's big side only (its tier 0 holds), 'w' its negative big side and 'x' the same
    with one -1 (log1p(-1) = -inf) (no tier holds: the full function); then a partial strip.
    'e' exp's edges (|x| in (80, 90], its tier 0 fails).  exp's tier 0 (|x| <= 80) holds on 's',
    'b', 'w' and 'x', fails on nearly every other."""
    out = []
    for k in kinds:
        if k == "s":
            v = rng.uniform(-0.4, 0.4, STRIP)
        elif k == "b":
            v = rng.uniform(0.5, 50, STRIP)
        elif k == "e":
            v = rng.uniform(-90, 90, STRIP)
        elif k in "wx":
            v = rng.uniform(-0.999, -0.42, STRIP)
            v[rng.integers(STRIP)] = -1.0 if k == "x" else -0.41422
        else:
            v = rng.uniform(-100, 100, STRIP)
            v[:4] = [0.1, -0.2, 0.0, -0.0]        # the tiny and small paths in a tier-1 strip
        if k == "l":
            v[rng.integers(STRIP)] = 1e6
        if k == "n":
            v[rng.integers(STRIP)], v[rng.integers(STRIP)] = np.nan, -np.inf
        out.append(v)
    out.append(rng.uniform(-200, 200, tail))
    return np.concatenate(out).astype(np.float32)


# Tiers fall and climb: a tier-0 run, tier 1 sticking, the full functions between, tier 0 again
# after the retry period, nan/inf, and log1p's two sides (each one's tier 0 fails on the other).
PATTERN = "sssmmsmlsmmmmmmmmmmmmmmmmmmmmsssnbbbsbslbmmssssesswwxwbxmnwswsesbew"


@pytest.mark.parametrize("which", sorted(PROGRAMS))
def test_tiers_switch_per_strip(which):
    _assert_bits(which, _strips(PATTERN, np.random.default_rng(which)))


@pytest.mark.parametrize("shape", [(7, 3 * STRIP + 100), (300, 5), (3, STRIP)])
def test_two_dimensional_regions(shape):
    """A 2-D region strips its inner loop, row by row; the tier a stage starts at carries over
    from row to row."""
    rng = np.random.default_rng(1)
    x = rng.uniform(-5, 5, shape).astype(np.float32)
    x[1, 2] = 1e5                                 # one row needs the full functions
    x[2] = rng.uniform(-0.3, 0.3, shape[1])
    for which in (3, 4):
        _assert_bits(which, x)


def test_in_place_results_are_not_speculated():
    """The last region's result takes the buffer of ``e``, which dies there (buffer_reuse): a
    strip run again after its tier failed would read its own results.  Such loops run in
    stages only."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((16, 4 * STRIP)).astype(np.float32)

    def program(v):
        e = jnp.exp(v - jnp.max(v, axis=0))
        return jnp.sin(e / jnp.sum(e, axis=0) * 300.0)
    got = np.asarray(numjax.jit(program)(x))
    e = np.asarray(numjax.jit(lambda v: jnp.exp(v - jnp.max(v, axis=0)))(x))
    q = np.asarray(numjax.jit(lambda e: e / jnp.sum(e, axis=0) * 300.0)(e))
    assert (np.abs(q) >= 120).any(axis=1).sum() > 4 and (np.abs(q) < 120).any()   # tiers fail, and hold
    want = _reference(q, 0)
    assert (got.view(np.uint32) == want.view(np.uint32)).all()


@settings(max_examples=25, deadline=None)
@given(st.text(alphabet="smlnbwxe", min_size=1, max_size=40), st.integers(0, STRIP - 1), st.integers(0, 2**32 - 1),
       st.sampled_from([4, 5]))
def test_chain_any_strip_mix(kinds, tail, seed, which):
    _assert_bits(which, _strips(kinds, np.random.default_rng(seed), tail))


def _plan_of(source):
    import ast

    from numjax.lowering import pyir
    from numjax.lowering.cpu_llvm_build import _kernel_globals
    from numjax.lowering import scalar_helpers
    tree = ast.parse(source).body[0]
    loop = next(n for n in ast.walk(tree) if isinstance(n, ast.For))
    scope = pyir.Scope(_kernel_globals(vmath, scalar_helpers), None)
    return pyir_strips.plan(pyir.Translator(None), scope, loop)


def test_plan():
    elementwise = """
def k(n0, x0, o0):
    for i in numba.prange(n0):
        t1 = x0[i]
        t2 = np.float32(vm.sin_f32(t1))
        t3 = np.float32(vm.exp_f32(t2))
        o0[i] = t3
"""
    plan = _plan_of(elementwise)
    assert [len(s) for s in plan.stages] == [2, 2] and plan.tiers == [3, 1]
    assert plan.exports == [["t2"], []] and plan.imports == [[], ["t2"]]
    # in place (o0 is x0): staged, not speculative
    plan = _plan_of(elementwise.replace("o0[i]", "x0[i]"))
    assert plan.tiers == [0, 0]
    # one math call, speculative only beside others (exp's speculate_alone): an ordinary loop
    assert _plan_of(elementwise.replace("vm.sin_f32(t1)", "t1 * 2")) is None
    # one math call speculative alone (sin): strips
    assert _plan_of(elementwise.replace("vm.exp_f32(t2)", "t2 * 2")).tiers == [3]
    # an array read and stored at another element (a reduction through memory): not staged
    assert _plan_of(elementwise.replace("o0[i]", "x0[0]")) is None
    # a stage's result for a later stage must be a scalar: an uncast function result may be a tuple
    assert _plan_of(elementwise.replace("np.float32(vm.sin_f32(t1))", "vm.sin_f32(t1)")) is None
    # a value carried from one iteration to the next (an accumulator): an ordinary loop
    carried = elementwise.replace("t3 = np.float32(vm.exp_f32(t2))", "t3 = np.float32(vm.exp_f32(t2)) + t3")
    assert _plan_of(carried) is None


def _speculative_functions():
    found = {}
    for module in (vmath, vmath_sincos):
        for value in vars(module).values():
            plain = getattr(value, "py_func", value)
            if callable(plain) and getattr(plain, "speculative", None):
                found[plain.__name__] = value
    return found


def test_fast_variants_agree_on_their_domain():
    """The variants equal the full functions wherever their ``needs_full`` is false (every
    float32 below 120 in magnitude is checked by tests/test_sincos_f32.py::test_exhaustive
    through jit; here a sample, through Numba)."""
    rng = np.random.default_rng(3)
    edges = np.float32([0.0, -0.0, 1e-30, -1e-40, 0.7499999, 119.99999, 80.0, -80.0, 88.7, -87.5, -1.0,
                        0.41421357, -0.41421357, 0.4142136, -0.4142136, -0.99999994, np.inf, -np.inf, np.nan])
    x = np.concatenate([rng.uniform(-120, 120, 1 << 18), rng.uniform(-0.75, 0.75, 1 << 16),
                        edges, np.nextafter(edges, np.float32(np.inf)),
                        np.nextafter(edges, np.float32(-np.inf))]).astype(np.float32)
    functions = _speculative_functions()
    assert {"sin_f32", "cos_f32", "log1p_f32", "exp_f32"} <= set(functions)
    for name, f in functions.items():
        for fast, needs_full in getattr(f, "py_func", f).speculative:
            bad = _agreement(f, fast, needs_full)(x)
            assert not bad.any(), (name, fast.__name__, x[bad][:5])


def _agreement(full, fast, needs_full):
    full, fast, needs_full = (numba.njit(inline="always")(getattr(g, "py_func", g)) for g in (full, fast, needs_full))

    @numba.njit(cache=False)
    def check(x):
        bad = np.zeros(x.size, np.bool_)
        for i in range(x.size):
            if not needs_full(x[i]):
                a, b = full(x[i]), fast(x[i])
                bad[i] = np.float32(a).view(np.uint32) != np.float32(b).view(np.uint32)
        return bad
    return check


@pytest.mark.slow
def test_exhaustive_exp_log1p_in_strips():
    """exp's and log1p's tiers in a loop of both (program 5), over every float32 in bit order:
    whole strips of one sign and binade hold their cheapest tier, the strips across the bounds
    climb."""
    chunk = 1 << 24
    for start in range(0, 1 << 32, chunk):
        x = np.arange(start, start + chunk, dtype=np.uint32).view(np.float32)
        got = numjax.jit(PROGRAMS[5])(x)
        for ref, out in zip(REFERENCES[5], got):
            want = _reference(x, ref)
            bad = np.asarray(out).view(np.uint32) != want.view(np.uint32)
            assert not bad.any(), (ref, hex(start), x[bad][:5])

"""Accuracy tests for lowering/vmath.py (vectorizable scalar math kernels).

Every function is compiled into the kind of loop the lowering generates and
compared, element by element, with a float64 reference (rounded to float32
for the ``_f32`` versions): at most 2 ulp apart, and *exactly* equal where
the reference is nan, +-inf or a (signed) zero.  Inputs sweep log-spaced
magnitudes of both signs over the whole float range (subnormals included),
a dense uniform grid over the interesting domain, and special values.
"""

import functools
import math
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

_ROOT = Path(__file__).resolve().parents[1]
try:
    from numjax.lowering import scalar_helpers, vmath
except ImportError:                      # package not installed: use the tree
    sys.path.insert(0, str(_ROOT))
    from lowering import scalar_helpers, vmath
vmath.ensure_jitted()   # the kernels below call the modules' functions from Numba
scalar_helpers.ensure_jitted()

MAX_ULP = 2


def _logistic_ref(x):
    # scipy.special.expit underflows to 0 below x = -709 although the answer
    # is a float64 subnormal there; long double (x87: 64-bit mantissa, when
    # available) gives a correctly-rounded-enough reference everywhere.
    x = x.astype(np.longdouble)
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(np.float64)


# math.erf (libm) rather than scipy.special.erf: the latter is off by up to
# ~2 ulp itself for small arguments.  Likewise math.sin/math.cos: numpy's own
# SIMD float64 sin/cos are 8 ulp off at the hard argument in _pio2_multiples.
_erf_ref = np.vectorize(math.erf, otypes=[np.float64])
_sin_ref = np.vectorize(math.sin, otypes=[np.float64])
_cos_ref = np.vectorize(math.cos, otypes=[np.float64])

def _nonfinite_nan(f, x):
    # math.sin raises on inf; the IEEE (and numpy) answer is nan.
    fin = np.isfinite(x)
    out = np.full(x.shape, np.nan)
    out[fin] = f(x[fin])
    return out


# (name, float64 reference, (lo, hi) of the dense uniform sweep)
CASES = [
    ("exp", np.exp, (-760.0, 720.0)),
    ("log", np.log, (0.0, 4.0)),
    ("log1p", np.log1p, (-1.0, 4.0)),
    ("expm1", np.expm1, (-50.0, 720.0)),
    ("tanh", np.tanh, (-25.0, 25.0)),
    ("logistic", _logistic_ref, (-760.0, 50.0)),
    ("sin", lambda x: _nonfinite_nan(_sin_ref, x), (-30.0, 30.0)),
    ("cos", lambda x: _nonfinite_nan(_cos_ref, x), (-30.0, 30.0)),
    ("erf", _erf_ref, (-7.0, 7.0)),
]
# The float32 kernels reproduce XLA's approximations (not within 2 ulp everywhere, FTZ):
# tests/test_xla_ulp.py checks them bit for bit against JAX's outputs instead.
DTYPES = [np.float64]


def _suffix(dt):
    return "f32" if dt == np.float32 else "f64"


@functools.lru_cache(maxsize=None)
def _kernel(name, nargs):
    f = getattr(vmath, name)
    if nargs == 1:
        @numba.njit
        def k1(x, out):
            for i in range(x.shape[0]):
                out[i] = f(x[i])
        return k1

    @numba.njit
    def k2(x, y, out):
        for i in range(x.shape[0]):
            out[i] = f(x[i], y[i])
    return k2


def _ordered(a):
    """Map floats to integers whose difference counts ulps (sign-magnitude
    bits folded into two's complement, so -0 and +0 coincide)."""
    it = np.int32 if a.dtype == np.float32 else np.int64
    i = a.view(it).astype(np.int64)
    mag = i & np.int64(np.iinfo(it).max)
    return np.where(i < 0, -mag, mag)


def _check(got, ref, *args):
    """Assert <= MAX_ULP everywhere and exact nan/inf/zero agreement."""
    assert got.dtype == ref.dtype
    where = lambda m: [tuple(a[m][:5]) for a in args] + [got[m][:5], ref[m][:5]]
    nan_ref = np.isnan(ref)
    bad = nan_ref != np.isnan(got)
    assert not bad.any(), ("nan mismatch", where(bad))
    exact = np.isinf(ref) | (ref == 0)
    bad = exact & ((got != ref) | (np.signbit(got) != np.signbit(ref)))
    assert not bad.any(), ("inf/zero mismatch", where(bad))
    bad = np.isinf(got) & ~np.isinf(ref)
    assert not bad.any(), ("spurious inf", where(bad))
    ok = ~nan_ref
    ulp = np.zeros(got.shape, np.float64)
    ulp[ok] = np.abs(_ordered(got[ok]) - _ordered(ref[ok]))
    worst = int(np.argmax(ulp))
    assert ulp.max() <= MAX_ULP, (
        f"{ulp.max():.0f} ulp at {[a[worst] for a in args]}: "
        f"got {got[worst]!r}, want {ref[worst]!r}")
    return ulp.max()


def _specials(dt):
    fi = np.finfo(dt)
    v = [0.0, 1.0, 2.0, 0.5, 3.0, 10.0, fi.tiny, fi.smallest_subnormal,
         fi.max, fi.eps, np.inf, np.nan, np.pi / 2, np.pi, 88.72283, 709.782712893384]
    v = np.array(v, dt)
    with np.errstate(over="ignore"):
        up, down = np.nextafter(v, dt(np.inf)), np.nextafter(v, dt(-np.inf))
    return np.concatenate([v, -v, up, down])


def _inputs(dt, lo, hi, n=12000, seed=0):
    rng = np.random.default_rng(seed)
    fi = np.finfo(dt)
    exps = rng.uniform(np.log10(float(fi.smallest_subnormal)), np.log10(float(fi.max)), n)
    logspaced = (10.0 ** exps * rng.choice([-1.0, 1.0], n)).astype(dt)
    dense = rng.uniform(lo, hi, n).astype(dt)
    small = (rng.uniform(-1.0, 1.0, n // 4) * 10.0 ** rng.uniform(-12, 0, n // 4)).astype(dt)
    return np.concatenate([logspaced, dense, small, _specials(dt)])


def _pio2_multiples(dt):
    """Floats next to k*pi/2, where range reduction loses most bits."""
    k = np.concatenate([np.arange(1, 2000), np.rint(10.0 ** np.linspace(3, 15, 400))])
    x = (k * (np.pi / 2)).astype(dt)
    return np.concatenate([x, np.nextafter(x, dt(0)), -x])


@pytest.mark.parametrize("dt", DTYPES, ids=_suffix)
@pytest.mark.parametrize("name,ref,domain", CASES, ids=[c[0] for c in CASES])
def test_unary_accuracy(name, ref, domain, dt):
    x = _inputs(dt, *domain)
    if name in ("sin", "cos"):
        x = np.concatenate([x, _pio2_multiples(dt)])
    out = np.empty_like(x)
    _kernel(f"{name}_{_suffix(dt)}", 1)(x, out)
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64)).astype(dt)
    _check(out, want, x)


def _pow_inputs(dt, n=12000, seed=1):
    rng = np.random.default_rng(seed)
    fi = np.finfo(dt)
    exps = rng.uniform(np.log10(float(fi.smallest_subnormal)), np.log10(float(fi.max)), n)
    x = 10.0 ** exps * rng.choice([-1.0, 1.0], n)
    y = rng.uniform(-1, 1, n) * 10.0 ** rng.uniform(-3, 3, n)
    y[::3] = np.rint(y[::3])                         # integers: negative bases
    x[1::5] = rng.uniform(0.25, 4.0, len(x[1::5]))   # large |y*log x| ...
    y[1::5] = rng.uniform(-1100, 1100, len(y[1::5]))  # ... up to over/underflow
    s = _specials(dt)
    s = np.concatenate([s, np.array([2.5, -2.5, 3.0, -3.0, 1e30, -1e30], dt)])
    sx, sy = np.meshgrid(s, s)
    return (np.concatenate([x, sx.ravel()]).astype(dt),
            np.concatenate([y, sy.ravel()]).astype(dt))


# The float64 closest to a multiple of pi/2 relative to its size (x mod pi/2
# ~ 2^-61 x 2^-849); exact values from mpmath at 1000 digits.  glibc 2.36's
# cos is 8 ulp off here, so it cannot serve as the reference.
_HARD = math.ldexp(6381956970095103, 797)


@pytest.mark.parametrize("name,want", [
    ("sin_f64", 1.0), ("cos_f64", -4.6871659242546276111e-19),
    ("sin_f32", 1.0), ("cos_f32", 1.0),
])
def test_sincos_hardest_reduction(name, want):
    dt = np.float32 if name.endswith("f32") else np.float64
    # float32: the same mantissa at a float32 exponent (x ~ 1.3e23).
    x = np.array([_HARD if dt == np.float64 else math.ldexp(6381956970095103, 23)], dt)
    out = np.empty_like(x)
    _kernel(name, 1)(x, out)
    if dt == np.float32:
        want = {"sin_f32": math.sin, "cos_f32": math.cos}[name](float(x[0]))
    assert out[0] == dt(want), (out[0], want)


@pytest.mark.parametrize("dt", DTYPES, ids=_suffix)
def test_pow_accuracy(dt):
    x, y = _pow_inputs(dt)
    out = np.empty_like(x)
    _kernel(f"pow_{_suffix(dt)}", 2)(x, y, out)
    with np.errstate(all="ignore"):
        want = np.power(x.astype(np.float64), y.astype(np.float64)).astype(dt)
    _check(out, want, x, y)


@pytest.mark.parametrize("x,y,want", [
    (0.0, -3.0, np.inf), (-0.0, -3.0, -np.inf), (-0.0, -2.0, np.inf),
    (-0.0, 3.0, -0.0), (-0.0, 0.5, 0.0), (-1.0, np.inf, 1.0),
    (-1.0, -np.inf, 1.0), (0.5, -np.inf, np.inf), (2.0, -np.inf, 0.0),
    (-8.0, 1.0 / 3.0, np.nan), (-np.inf, -3.0, -0.0), (-np.inf, 3.0, -np.inf),
    (-np.inf, 2.0, np.inf), (np.nan, 0.0, 1.0), (1.0, np.nan, 1.0),
    (-2.0, 3.0, -8.0), (-2.0, 1e300, np.inf),
])
def test_pow_special_cases(x, y, want):
    for dt in DTYPES:
        out = np.empty(1, dt)
        with np.errstate(over="ignore"):
            xa, ya = np.array([x], dt), np.array([y], dt)
        _kernel(f"pow_{_suffix(dt)}", 2)(xa, ya, out)
        got = out[0]
        if np.isnan(want):
            assert np.isnan(got)
        else:
            assert got == want and np.signbit(got) == np.signbit(want), (dt, got)


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="checks x86 packed instructions")
def test_exp_f32_loop_vectorizes():
    k = _kernel("exp_f32", 1)
    x = np.linspace(-5, 5, 64, dtype=np.float32)
    k(x, np.empty_like(x))
    asm = k.inspect_asm(k.signatures[0])
    assert re.search(r"\bv?mulps\b", asm), "no packed float32 multiply in the loop"
    assert "expf" not in asm


_PY_MODE_SNIPPET = r"""
import math, sys, warnings
import numpy as np
sys.path.insert(0, sys.argv[1])
try:
    from numjax.lowering import vmath
except ImportError:
    from lowering import vmath
import numba
assert numba.config.DISABLE_JIT
warnings.simplefilter("ignore")
refs = dict(exp=np.exp, log=np.log, log1p=np.log1p, expm1=np.expm1, tanh=np.tanh,
            logistic=lambda v: 1 / (1 + np.exp(-v)), sin=np.sin, cos=np.cos,
            erf=math.erf)
xs = [0.0, -0.0, 0.3, -0.7, 1.5, -3.0, 20.0, 1e-30, 1e5, np.inf, -np.inf, np.nan]
for dt in (np.float32, np.float64):
    sfx = "f32" if dt == np.float32 else "f64"
    for name, ref in refs.items():
        f = getattr(vmath, name + "_" + sfx)
        for x in xs:
            got = f(dt(x))
            want = dt(ref(np.float64(x)))
            assert type(got) is dt, (name, sfx, type(got))
            if np.isnan(want):
                assert np.isnan(got), (name, sfx, x, got)
            else:
                assert abs(int(np.array(got).view(np.int64 if dt == np.float64 else np.int32))
                           - int(np.array(want).view(np.int64 if dt == np.float64 else np.int32))) <= 2 \
                    or got == want, (name, sfx, x, got, want)
    for x, y in [(2.0, 10.0), (-2.0, 3.0), (-2.0, 0.5), (0.0, -1.0), (1.7, -2.3)]:
        got = getattr(vmath, "pow_" + sfx)(dt(x), dt(y))
        want = dt(np.power(np.float64(x), np.float64(y)))
        assert (got == want or (np.isnan(got) and np.isnan(want))
                or abs(got - want) <= 4 * abs(np.spacing(want))), (x, y, got, want)
print("ok")
"""


def test_pure_python_mode():
    """With NUMBA_DISABLE_JIT=1 the same functions run on numpy scalars."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    res = subprocess.run([sys.executable, "-c", _PY_MODE_SNIPPET, str(_ROOT)],
                         env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "ok" in res.stdout, res.stderr[-3000:]


_IMPORT_SNIPPET = r"""
import sys
sys.path.insert(0, sys.argv[1])
try:
    from numjax.lowering import vmath as vm, scalar_helpers as sh
except ImportError:
    from lowering import vmath as vm, scalar_helpers as sh
assert "numba" not in sys.modules and "llvmlite" not in sys.modules, "imported Numba"
assert vm.exp_f32 is vm.PLAIN["exp_f32"] and sh.fmax is sh.PLAIN["fmax"]
print("ok")
"""


def test_imports_without_numba():
    """The LLVM IR translator reads these modules without paying Numba's import."""
    res = subprocess.run([sys.executable, "-c", _IMPORT_SNIPPET, str(_ROOT)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "ok" in res.stdout, res.stderr[-3000:]


def test_ensure_jitted_rebinds_to_dispatchers():
    for module in (vmath, scalar_helpers):
        bound = {name: getattr(module, name) for name in module.PLAIN}
        module.ensure_jitted()                     # idempotent: the same dispatchers
        for name, plain in module.PLAIN.items():
            assert getattr(module, name) is bound[name]
            assert getattr(module, name) is not plain and getattr(module, name).py_func is plain
    assert len(vmath.PLAIN) == len(vmath.JIT_FUNCTIONS)


_FLOAT32_SAMPLES = [0.0, -0.0, 0.3, -7.5, 88.7, -104.0, 1e-40, 3e38, np.inf, -np.inf, np.nan]


def _bits(a):
    return np.asarray(a, np.float32).view(np.int32)


@numba.njit
def _exp_log_f32_loop(x, out):
    for i in range(x.shape[0]):
        out[0, i] = vmath.exp_f32(x[i])
        out[1, i] = vmath.log_f32(x[i])


def test_jitted_equals_plain_bitwise():
    x = np.array(_FLOAT32_SAMPLES, np.float32)
    out = np.empty((2, len(x)), np.float32)
    _exp_log_f32_loop(x, out)
    with np.errstate(all="ignore"):
        want = [[vmath.PLAIN[name](v) for v in x] for name in ("exp_f32", "log_f32")]
    np.testing.assert_array_equal(_bits(out), _bits(want))


@numba.njit
def _helpers_loop(x, out_f, out_i):
    for i in range(x.shape[0]):
        out_f[i] = scalar_helpers.fmax(x[i], np.float32(0.5))
        out_i[i] = scalar_helpers.f2i_int32(x[i])


def test_scalar_helpers_jitted_equal_plain():
    sh = scalar_helpers
    x = np.array(_FLOAT32_SAMPLES, np.float32)
    out_f, out_i = np.empty_like(x), np.empty(len(x), np.int32)
    _helpers_loop(x, out_f, out_i)
    np.testing.assert_array_equal(_bits(out_f), _bits([sh.PLAIN["fmax"](v, np.float32(0.5)) for v in x]))
    np.testing.assert_array_equal(out_i, [sh.PLAIN["f2i_int32"](v) for v in x])

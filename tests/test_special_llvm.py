"""Special functions in the LLVM backend: pyir's translation of ``special_helpers`` gives the
bits Numba's compilation of the same source gives (the other backend, and eager evaluation
where scipy has no counterpart), and programs using them compile through the LLVM backend."""
import itertools
import math
import sys
import textwrap

import numpy as np
import pytest

import numjax as jax
from numjax.lowering import special_helpers

ARITY = {"lgamma": 1, "digamma": 1, "polygamma": 2, "igamma": 2, "igammac": 2, "igamma_grad_a": 2,
         "random_gamma_grad": 2, "betainc": 3, "zeta": 2, "bessel_i0e": 1, "bessel_i1e": 1, "ndtri": 1}

# Zeros, poles, domain edges, the series/fraction and series/asymptotic switches, tiny and huge.
_EDGES = [0.0, -0.0, 5e-324, 1e-300, 1e-38, 1e-10, 1e-5, 0.02, 0.1, 0.5, 0.98, 0.999, 1.0 - 1e-12, 1.0,
          1.5, 2.0, 2.5, 3.0, 7.3, 10.0, 19.9, 20.0, 20.1, 30.0, 100.5, 171.0, 300.0, 1e5, 1e15, 1e30,
          1e300, -0.5, -1.0, -1.5, -2.0, -3.7, -10.0, -20.5, -100.25, -1e5, -1e300, math.inf, -math.inf,
          math.nan]


def _inputs(arity, dtype, seed=0):
    """Every combination of the edge values, then random values over many magnitudes."""
    rng = np.random.default_rng(seed)
    with np.errstate(over="ignore"):
        edges = np.array(_EDGES).astype(dtype)
    grid = np.array(list(itertools.product(edges, repeat=arity)), dtype).T
    n = 3000
    wide = rng.standard_normal((arity, n)) * np.exp(rng.uniform(-6, 6, (arity, n)))
    unit = rng.uniform(0, 1, (arity, n))        # probabilities (ndtri, betainc's x)
    mixed = np.where(rng.uniform(size=(arity, n)) < 0.5, np.abs(wide), unit)
    return [np.ascontiguousarray(r) for r in np.concatenate([grid, wide.astype(dtype), mixed.astype(dtype)], 1)]


def _llvm_kernel(fname, arity, dtype):
    """A one-kernel module mapping sp.<fname> over 1-d arrays, compiled by pyir: the float64
    result and its cast to the input dtype (as generated code casts it)."""
    dt = np.dtype(dtype).name
    xs = [f"x{k}" for k in range(arity)]
    src = textwrap.dedent(f"""
        def kern(d0, {', '.join(xs)}):
            o0 = np.empty((d0, ), np.float64)
            o1 = np.empty((d0, ), np.{dt})
            for i in range(d0):
                r = sp.{fname}({', '.join(x + '[i]' for x in xs)})
                o0[i] = r
                o1[i] = np.{dt}(r)
            return (o0, o1)
        """)
    params = [("dim",)] + [("array", dt, ("d0",))] * arity
    return _build(src, params, [("float64", ("d0",)), (dt, ("d0",))])


def _build(src, params, outputs):
    """The kernel ``kern`` in ``src`` as pyir translates it and the backend compiles it (O3,
    host CPU), called with raw pointers: ``f(lo, hi, dims..., arrays..., outputs...)``."""
    import ctypes
    from llvmlite import ir
    from numjax.lowering import cpu_llvm_build, objload, pyir, scalar_helpers, vmath
    mod = ir.Module(name="test_special")
    pyir.Translator(mod).kernel(src, "kern", params, outputs,
                                cpu_llvm_build._kernel_globals(vmath, scalar_helpers))
    obj = objload.load(cpu_llvm_build.compile_object(mod), {})
    _keep.append(obj)
    argtypes = [ctypes.c_int64] * 2 + [ctypes.c_int64 if p[0] == "dim" else ctypes.c_void_p for p in params]
    fn = ctypes.CFUNCTYPE(None, *argtypes, *[ctypes.c_void_p] * len(outputs))(obj.address("kern"))

    def call(*args):
        fn(*[a.ctypes.data if isinstance(a, np.ndarray) else a for a in args])
    return call


_keep = []
_numba_loops = {}


def _numba_reference(fname, xs):
    """The function as the Numba backend compiles it (a dispatcher called from a Numba loop)."""
    import numba
    special_helpers.ensure_jitted()
    fn = getattr(special_helpers, fname)
    arity = len(xs)
    key = (fname, arity)
    if key not in _numba_loops:
        if arity == 1:
            def loop(a, out):
                for i in range(a.size):
                    out[i] = fn(a[i])
        elif arity == 2:
            def loop(a, b, out):
                for i in range(a.size):
                    out[i] = fn(a[i], b[i])
        else:
            def loop(a, b, c, out):
                for i in range(a.size):
                    out[i] = fn(a[i], b[i], c[i])
        _numba_loops[key] = numba.njit(loop)
    out = np.empty(xs[0].shape, np.float64)
    _numba_loops[key](*xs, out)
    return out


def _same_bits(a, b):
    """Equal values (signed zeros told apart), or both NaN."""
    return ((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))


def test_import_needs_no_numba():
    import subprocess
    code = ("import sys; from numjax.lowering import special_helpers as sp, cpu_llvm_build as b; "
            "ns = b._kernel_globals(None, None); "
            "assert ns['sp'].lgamma is sp.PLAIN['lgamma'] and 'numba' not in sys.modules; "
            "assert 'numba' not in sys.modules; sp.lgamma; assert 'numba' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fname", sorted(ARITY))
def test_special_translates_bit_exactly(fname, dtype):
    arity = ARITY[fname]
    xs = _inputs(arity, dtype)
    if fname in ("zeta", "polygamma"):
        # The direct sum counts up from q (x) to 10 + s: not from -1e15.
        keep = ~(xs[1] < -1e4)
        xs = [np.ascontiguousarray(x[keep]) for x in xs]
    kern = _llvm_kernel(fname, arity, dtype)
    o64 = np.empty(xs[0].shape, np.float64)
    o_dt = np.empty(xs[0].shape, dtype)
    kern(0, 1, xs[0].size, *xs, o64, o_dt)
    want = _numba_reference(fname, xs)
    bad = ~_same_bits(o64, want)
    assert not bad.any(), (f"{fname}: args={[x[bad][:4] for x in xs]} got={o64[bad][:4]} "
                           f"want={want[bad][:4]} ({bad.sum()} of {bad.size})")
    with np.errstate(over="ignore"):
        bad = ~_same_bits(o_dt, want.astype(dtype))
    assert not bad.any(), f"{fname}: cast to {np.dtype(dtype).name} differs at {[x[bad][:4] for x in xs]}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erfc_translates_bit_exactly(dtype):
    """``math.erfc`` (lax.erfc's rule) is libm's erfc/erfcf in both compilers."""
    import numba
    dt = np.dtype(dtype).name
    src = textwrap.dedent(f"""
        def kern(d0, x0):
            o0 = np.empty((d0, ), np.{dt})
            for i in range(d0):
                o0[i] = np.{dt}(math.erfc(x0[i]))
            return (o0, )
        """)
    kern = _build(src, [("dim",), ("array", dt, ("d0",))], [(dt, ("d0",))])
    (x,) = _inputs(1, dtype)
    out = np.empty_like(x)
    kern(0, 1, x.size, x, out)

    @numba.njit
    def loop(a, o):
        for i in range(a.size):
            o[i] = math.erfc(a[i])
    want = np.empty_like(x)
    loop(x, want)
    assert _same_bits(out, want).all()


def test_edge_values():
    """A few values the rewrite for pyir settled (each once a hang or a 2**63 overflow)."""
    sp = special_helpers.PLAIN
    inf = math.inf
    assert sp["zeta"](inf, 2.0) == 0.0 and sp["zeta"](inf, 1.0) == 1.0 and sp["zeta"](inf, 0.5) == inf
    assert sp["zeta"](2.0, -inf) == inf and math.isnan(sp["zeta"](inf, -0.5))
    assert sp["zeta"](1e300, 3.0) == 0.0
    assert math.isnan(sp["polygamma"](inf, 2.0))
    assert math.isnan(sp["digamma"](-1e300)) and sp["lgamma"](-1e300) == inf


# ---------------------------------------------------------------- whole programs

def _tsp():
    return jax.scipy.special


PROGRAMS = {
    "gammaln": (lambda x: _tsp().gammaln(x), lambda r: r.uniform(-5, 30, 1000)),
    "digamma": (lambda x: _tsp().digamma(x), lambda r: r.uniform(-5, 30, 1000)),
    "betainc": (lambda x: _tsp().betainc(2.5, 0.7, x), lambda r: r.uniform(0, 1, 1000)),
    "igamma": (lambda x: jax.lax.igamma(3.0, x) + jax.lax.igammac(0.5, x), lambda r: r.uniform(0, 20, 1000)),
    "i0e": (lambda x: _tsp().i0e(x) * _tsp().i1e(x), lambda r: r.uniform(-40, 40, 1000)),
    "ndtri": (lambda x: _tsp().ndtri(x), lambda r: r.uniform(0, 1, 1000)),
    "erfc_zeta": (lambda x: jax.lax.erfc(x) + _tsp().zeta(x + 2.0, 1.5) + _tsp().polygamma(1, x + 1.0),
                  lambda r: r.uniform(0, 5, 1000)),
    "gamma_logpdf": (lambda x: jax.scipy.stats.gamma.logpdf(x, 2.0), lambda r: r.uniform(0.01, 10, 1000)),
}
# References other than eager evaluation (eager gamma.logpdf compiles Numba kernels: seconds).
def _scipy_gamma_logpdf(x):
    import scipy.stats
    return scipy.stats.gamma.logpdf(x.astype(np.float64), 2.0)


REFERENCES = {"gamma_logpdf": _scipy_gamma_logpdf}


@pytest.fixture(params=[np.float32, np.float64], ids=["float32", "float64"])
def prog_dtype(request):
    """The program's float type (float64 with jax_enable_x64 on for the test)."""
    x64 = request.param == np.float64
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", x64)
    try:
        yield request.param
    finally:
        jax.config.update("jax_enable_x64", old)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_compiles_through_llvm(name, prog_dtype):
    dtype = prog_dtype
    f, make = PROGRAMS[name]
    x = make(np.random.default_rng(1)).astype(dtype)
    jf = jax.jit(f)
    assert "numjax program driver (LLVM backend)" in jf.lower(x).as_text()
    got = np.asarray(jf(x))
    if name in REFERENCES:
        want = REFERENCES[name](x).astype(dtype)
    else:
        with jax.disable_jit():
            want = np.asarray(f(x))
    assert got.dtype == want.dtype == dtype
    # Eager evaluation is scipy's where it has the function (numjax's own algorithms agree with
    # it to float64 rounding, in absolute terms near a root).
    if dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-30)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)

"""float32 sin/cos (lowering/vmath_sincos.py) against the C library's sinf/cosf, bit for bit.

XLA's CPU backend calls glibc's sinf/cosf for float32, so numjax's compiled sin/cos must give
exactly their bits.  The reference is a Numba loop calling ``math.sin`` on float32, which Numba
lowers to the C library's ``sinf`` (checked against ``ctypes`` below, so the reference is what
it claims to be).  The default tests cover ~1M random bit patterns and the boundaries of every
path of the algorithm; ``test_exhaustive`` (slow) covers all 2^32 float32 bit patterns.
"""
import ctypes
import ctypes.util
import math
import platform
import re

import numba
import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax.lowering import vmath

_x86 = pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                          reason="the reference bits are x86_64 glibc's (its FMA variant)")


@numba.njit(parallel=True, cache=False)
def _libm_sincos(x, sin_out, cos_out):
    for i in numba.prange(x.shape[0]):
        sin_out[i] = math.sin(x[i])      # float32 -> sinf
        cos_out[i] = math.cos(x[i])


def _libm(x):
    s, c = np.empty_like(x), np.empty_like(x)
    _libm_sincos(x, s, c)
    return s, c


_sin_jit = numjax.jit(jnp.sin)
_cos_jit = numjax.jit(jnp.cos)


def _assert_same_bits(name, x, got, want):
    bad = np.asarray(got).view(np.uint32) != want.view(np.uint32)
    if bad.any():
        i = np.flatnonzero(bad)[:6]
        raise AssertionError(f"{name}: {bad.sum()} of {x.size} differ; x bits "
                             f"{[hex(v) for v in x.view(np.uint32)[i]]} got {np.asarray(got)[i]} "
                             f"want {want[i]}")


def _f32(*values):
    return np.array(values, np.float32)


def _boundaries():
    """Each path's edges, both signs, with their float32 neighbours."""
    f = np.float32
    edges = [0.0, 2.0 ** -126, 2.0 ** -12, 0.75, f(np.pi / 4), 120.0, 2.0 ** 23, 2.0 ** 24,
             2.0 ** 31, 2.0 ** 64, 2.0 ** 100, float(np.finfo(f).max)]
    ks = np.arange(-400, 401, dtype=np.float64)
    edges += list(ks * (np.pi / 2))                                    # multiples of pi/2
    edges += list(np.float64(2.0) ** np.arange(-149, 128))            # every binade
    e = np.array(edges, f)
    with np.errstate(over="ignore"):                                   # (max's neighbour: inf)
        around = np.concatenate([e, np.nextafter(e, f(np.inf)), np.nextafter(e, f(0))])
    subnormal = np.arange(1, 1 << 23, 4099, dtype=np.uint32).view(f)
    out = np.concatenate([around, subnormal, _f32(np.inf, np.nan), np.uint32([0x7F800001, 0x7FC00123,
                                                                               0x7FBFFFFF]).view(f)])
    return np.concatenate([out, -out])


def _sample(n=1 << 20, seed=0):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << 32, n // 2, dtype=np.uint64).astype(np.uint32).view(np.float32)
    near = rng.uniform(-130, 130, n // 4).astype(np.float32)          # the reduced paths
    small = rng.uniform(-1, 1, n // 4).astype(np.float32)
    return np.concatenate([bits, near, small, _boundaries()])


def test_reference_is_the_c_library():
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    for fn in (libm.sinf, libm.cosf):
        fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    x = _sample(1 << 12, seed=1)
    s, c = _libm(x)
    want_s = np.array([libm.sinf(float(v)) for v in x], np.float32)
    want_c = np.array([libm.cosf(float(v)) for v in x], np.float32)
    finite = np.isfinite(x)          # (ctypes round-trips nan through double: payload bits move)
    _assert_same_bits("reference sinf", x[finite], s[finite], want_s[finite])
    _assert_same_bits("reference cosf", x[finite], c[finite], want_c[finite])


@_x86
def test_jit_matches_libm_bits():
    x = _sample()
    want_s, want_c = _libm(x)
    _assert_same_bits("sin", x, _sin_jit(x), want_s)
    _assert_same_bits("cos", x, _cos_jit(x), want_c)


@_x86
def test_eager_and_numba_path_match_libm_bits():
    # eager float32 sin/cos run the Numba-compiled kernels of lowering/kernels.py
    x = _sample(1 << 16, seed=2)
    want_s, want_c = _libm(x)
    _assert_same_bits("eager sin", x, jnp.sin(x), want_s)
    _assert_same_bits("eager cos", x, jnp.cos(x), want_c)


@_x86
def test_plain_python_functions_match_libm():
    # the functions' own source run as Python on numpy scalars (the translator's and the debug
    # mode's meaning of them)
    x = np.concatenate([_boundaries()[::7], _sample(1 << 10, seed=3)])
    want_s, want_c = _libm(x)
    for name, want in (("sin_f32", want_s), ("cos_f32", want_c)):
        fn = vmath.PLAIN[name]
        with np.errstate(all="raise"):
            got = np.array([fn(v) for v in x], np.float32)
        _assert_same_bits(f"plain {name}", x, got, want)


@_x86
def test_sin_loops_vectorize():
    from numjax.lowering import cpu_llvm_build as build
    x = np.ones(64, np.float32)
    for f in (jnp.sin, jnp.cos):
        ir = numjax.jit(f).lower(x).compile().executable.lowered.llvm_ir()
        llvm, tm = build._target_machine()
        mod = llvm.parse_assembly(ir)
        mod.triple, mod.data_layout = tm.triple, str(tm.target_data)
        pto = llvm.create_pipeline_tuning_options(speed_level=build.OPT)
        pto.loop_vectorization = pto.slp_vectorization = True
        pb = llvm.create_pass_builder(tm, pto)
        pb.getModulePassManager().run(mod, pb)
        opt = str(mod)
        # The C library is called only where no fast variant held in a loop's last partial
        # strip (lowering/pyir_strips.py): sinf/cosf themselves, never the double functions.
        assert not re.search(r"@(sin|cos|llvm\.sin\.f64|llvm\.cos\.f64)\b", opt)
        assert re.search(r"fmul <\d+ x double>", opt), "the sin/cos loop was not vectorized"
        assert len(re.findall(r"fmul <\d+ x double>", opt)) >= 8, "a tier's loop was not vectorized"


@pytest.mark.slow
@_x86
def test_exhaustive():
    chunk = 1 << 24
    for start in range(0, 1 << 32, chunk):
        x = np.arange(start, start + chunk, dtype=np.uint32).view(np.float32)
        want_s, want_c = _libm(x)
        _assert_same_bits("sin", x, _sin_jit(x), want_s)
        _assert_same_bits("cos", x, _cos_jit(x), want_c)

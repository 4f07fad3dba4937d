"""float16, bfloat16 and complex programs on the CUDA backend (rewritten as the CPU backend
rewrites them: narrow values as bits computed in float32, complex values as real parts), and
block reductions spanning several warps and blocks (shared-memory steps, then warp shuffles).
Every program must really run on CUDA and match the CPU backend: narrow results bit for bit."""
import ml_dtypes
import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax import lax
from numjax.cuda import backend as cuda_backend
from numjax.cuda import compiler, kernels
from op_table import iter_cases
from helpers_cuda import assert_same, cuda_executable, on_cpu

BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)


def _on_cuda(fn, *args):
    exe, got = cuda_executable(fn, *args)
    assert exe.backend == "cuda", exe.source
    return got


def assert_bits_equal(got, want, ulps=0):
    """Same dtypes and shapes; 16-bit floats within ``ulps`` (ordered bit patterns), other
    values exactly."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        if g.dtype.itemsize == 2 and g.dtype.kind in "fV":
            gap = np.abs(_ordered(g) - _ordered(w))
            assert (gap <= ulps).all(), (g.dtype, g, w)
        else:
            assert_same([g], [w], 0, 0)


def _ordered(x):
    bits = x.view(np.uint16).astype(np.int32)
    return np.where(bits & 0x8000, -(bits & 0x7FFF), bits)


def _transcendental_ulps(name):
    """On a GPU, exp/log/tanh/pow are libdevice's float32 functions, a few float32 ulps from the
    CPU's: rounded to 16 bits they agree but for a rare value one 16-bit ulp apart.  On the
    simulator both compute in float32 with numpy-equal results: exact."""
    transcendental = any(f in name for f in ("exp", "log", "tanh", "logistic", "pow", "selu"))
    return 0 if compiler.is_simulator() or not transcendental else 1


# ---------------------------------------------------------------- float16: the op table

_F16_RECORDS = ["lax.exp", "lax.log", "lax.tanh", "lax.logistic", "lax.sqrt", "lax.rsqrt", "lax.abs",
                "lax.neg", "lax.floor", "lax.round", "lax.integer_pow3", "lax.add", "lax.sub",
                "lax.mul", "lax.div", "lax.rem", "lax.max", "lax.min", "lax.pow", "lax.lt", "lax.eq",
                "lax.select_n", "lax.convert_to_float32", "lax.convert_to_int32",
                "lax.convert_to_uint8", "lax.reduce_sum1", "lax.reduce_max0", "lax.reduce_min01",
                "lax.reduce_prod1", "lax.argmax1"]
F16_CASES = [c for c in iter_cases(family="lax", names=_F16_RECORDS, all_shapes=False)
             if "float16" in c.dtypes and c.record.jit]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # numpy scalars (the simulator) warn on wrap
@pytest.mark.parametrize("case", F16_CASES, ids=str)
def test_float16_op_is_bit_equal_to_cpu(case):
    args = case.make_args()
    assert_bits_equal(_on_cuda(case.fn, *args), on_cpu(case.fn, *args), _transcendental_ulps(case.record.name))


def test_float16_records_exist():
    assert {c.record.name for c in F16_CASES} == set(_F16_RECORDS)


# ---------------------------------------------------------------- bfloat16 and float16 programs

def selu(x):
    return 1.050701 * jnp.where(x > 0, x, 1.6732632 * (jnp.exp(x) - 1))


def _narrow_programs():
    return [
        ("selu", selu, 1),
        ("tanh_exp", lambda x, y: (jnp.tanh(x), jnp.exp(y)), 2),
        ("division", lambda x, y: (x / y, y / (x * x + 1)), 2),
        ("to_from_float32", lambda x, y: (x.astype(jnp.float32) * 3.0, (y.astype(jnp.float32) / 7).astype(x.dtype)), 2),
        ("to_from_int", lambda x, y: (x.astype(jnp.int32), (x.astype(jnp.int32) * 3).astype(y.dtype)), 2),
        ("sum_max", lambda x, y: (jnp.sum(x * y), jnp.max(x, axis=1), jnp.min(y), jnp.sum(y, axis=0)), 2),
        ("argmax_and_chain", lambda x, y: (jnp.argmax(x * y, axis=1), jnp.sqrt(jnp.abs(x)) + y), 2),
    ]


def _narrow_inputs(dtype, n):
    rng = np.random.default_rng(3)
    # halves of small ints: every product and sum of these is exact in float32, so the sums
    # do not depend on the order of the reduction tree
    xs = [(rng.integers(-12, 12, (5, 7)) * 0.5).astype(dtype) for _ in range(n)]
    xs[-1][xs[-1] == 0] = dtype.type(0.5)      # a divisor
    return xs


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", [BF16, F16], ids=["bfloat16", "float16"])
@pytest.mark.parametrize("name,fn,nargs", _narrow_programs(), ids=[p[0] for p in _narrow_programs()])
def test_narrow_program_is_bit_equal_to_cpu(dtype, name, fn, nargs):
    args = _narrow_inputs(dtype, nargs)
    assert_bits_equal(_on_cuda(fn, *args), on_cpu(fn, *args), _transcendental_ulps(name))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_bfloat16_rounds_to_nearest_even_and_keeps_nan():
    # float32 values halfway between two bfloat16 values, both ways, an overflow and a NaN
    bits = np.array([0x3F808000, 0x3F818000, 0x3F80C000, 0x7F7FFFFF, 0x7FC00001, 0xFF800000], np.uint32)
    x = bits.view(np.float32)
    fn = lambda v: (v.astype(jnp.bfloat16), (v * 1.0).astype(jnp.float16))   # noqa: E731
    got = _on_cuda(fn, x)
    assert_bits_equal(got, on_cpu(fn, x))
    np.testing.assert_array_equal(np.asarray(got[0]).view(np.uint16), x.astype(BF16).view(np.uint16))


# ---------------------------------------------------------------- complex

def _complex(shape, seed, dtype=np.complex64):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


COMPLEX_PROGRAMS = [
    ("mul_add_conj", lambda z, w: z * w + jnp.conj(z)),
    ("abs_exp", lambda z, w: (jnp.abs(z), jnp.exp(w), jnp.log(z), jnp.sqrt(w))),
    ("div_neg_sub", lambda z, w: (z / w, -z - w)),
    ("parts", lambda z, w: (jnp.real(z) * jnp.imag(w), lax.complex(jnp.real(w), jnp.imag(z)))),
    ("sum", lambda z, w: (jnp.sum(z * w), jnp.sum(z, axis=0))),
    ("compare_select", lambda z, w: (z == w, z != z, jnp.where(jnp.abs(z) > 1, z, w))),
    ("convert", lambda z, w: (jnp.real(z).astype(jnp.complex64) * w, z.astype(jnp.complex64))),
    ("sin_cos", lambda z, w: jnp.sin(z) + jnp.cos(w)),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name,fn", COMPLEX_PROGRAMS, ids=[p[0] for p in COMPLEX_PROGRAMS])
def test_complex_program_matches_cpu(name, fn):
    z, w = _complex((4, 5), 1), _complex((4, 5), 2)
    w[0, 0] = z[0, 0]                           # one equal pair for eq/ne
    got, want = _on_cuda(fn, z, w), on_cpu(fn, z, w)
    assert len(got) == len(want)
    for g, v in zip(got, want):
        g, v = np.asarray(g), np.asarray(v)
        assert (g.dtype, g.shape) == (v.dtype, v.shape)
        np.testing.assert_allclose(g, v, rtol=2e-6, atol=2e-6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_complex128_program_matches_cpu(x64):
    z, w = _complex((3, 4), 5, np.complex128), _complex((3, 4), 6, np.complex128)
    fn = lambda a, b: (a * b + jnp.conj(a), jnp.abs(a / b), jnp.sum(a * b, axis=1))   # noqa: E731
    got, want = _on_cuda(fn, z, w), on_cpu(fn, z, w)
    for g, v in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(v).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(v), rtol=1e-13)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_complex_division_and_abs_do_not_overflow_like_cpu():
    z = np.array([3e30 + 4e30j, 1e-30 + 1e-30j, 2 + 0j], np.complex64)
    w = np.array([1e30 - 2e30j, 3e-30 + 1e-30j, 0 + 1e38j], np.complex64)
    fn = lambda a, b: (a / b, jnp.abs(a), jnp.abs(b))    # noqa: E731
    got, want = _on_cuda(fn, z, w), on_cpu(fn, z, w)
    assert all(np.isfinite(np.asarray(g)).all() for g in got)
    for g, v in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(v), rtol=2e-6)


def test_complex_op_without_a_rewrite_runs_whole_program_on_cpu():
    z = _complex((8,), 3)
    fn = lambda v: jnp.fft.fft(v * 2)      # noqa: E731  (the parts rewrite has no fft rule)
    with pytest.raises(kernels.CudaUnsupported, match=r"'fft' on complex64"):
        cuda_backend.compile_program(numjax.make_jaxpr(fn)(z), "fft")
    exe, got = cuda_executable(fn, z)      # the dispatcher falls back to the CPU backend
    assert getattr(exe, "backend", "cpu") == "cpu"
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(on_cpu(fn, z)[0]), rtol=1e-6)


# ---------------------------------------------------------------- reductions over several warps

@pytest.fixture
def block_of_four_warps(monkeypatch):
    """Regions planned with 128-thread blocks (the simulator's default is one warp): each
    block reduces through two shared-memory steps, then five warp shuffles."""
    monkeypatch.setattr(cuda_backend, "block_size", lambda: 4 * kernels.WARP)


def _reductions(x):
    powers_of_two = jnp.where(x > 35, 2.0, jnp.where(x < -36, 0.5, 1.0))   # exact in any order
    return (x.sum(), x.max(), x.min(), jnp.argmax(x), jnp.argmin(x), powers_of_two.prod())


def _row_reductions(x):
    return (x.sum(axis=1), x.max(axis=1), x.min(), jnp.argmax(x, axis=1), jnp.argmin(x, axis=1),
            (x.astype(jnp.int32) % 7).sum(axis=1), (x > 0).any(axis=1))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("shape,fn", [((33 * 32 + 5,), _reductions), ((3, 300), _row_reductions)],
                         ids=["flat_split", "rows"])
def test_reductions_over_warps_and_blocks(block_of_four_warps, shape, fn):
    x = np.random.default_rng(4).integers(-40, 40, shape).astype(np.float32)   # ties for arg*
    exe, got = cuda_executable(fn, x)
    assert exe.backend == "cuda"
    if shape == (33 * 32 + 5,):
        split = [rk.split for step in exe.steps if isinstance(step, cuda_backend.RegionStep)
                 for rk, _, _ in step.reductions]
        assert max(split) > 1 and {s.block for s in exe.steps if hasattr(s, "block")} == {128}
        assert "cuda.syncthreads()" in exe.source and "dm_shfl_down(" in exe.source
        # the tree's order is fixed: a second run gives the same bits
        for g, h in zip(got, exe.call_arrays([x])):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(h))
    assert_same(got, on_cpu(fn, x), rtol=1e-5, atol=1e-5)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_integer_and_bool_reductions_over_warps_are_exact(block_of_four_warps):
    a = np.random.default_rng(5).integers(0, 250, (2, 33 * 32 + 5)).astype(np.uint8)
    fn = lambda v: (v.max(axis=1), v.astype(jnp.int16).min(), v.astype(jnp.uint32).sum(axis=1),  # noqa: E731
                    (v > 200).all(), jnp.argmin(v, axis=1), (v.astype(jnp.int32) - 100).prod(axis=1))
    assert_same(_on_cuda(fn, a), on_cpu(fn, a))


def test_shuffles_move_narrow_types_widened():
    assert "numba.int32(v)" in kernels.shuffle_down("v", 4, np.uint8)
    assert kernels.shuffle_down("v", 4, np.float32) == "dm_shfl_down(0xffffffff, v, 4)"
    assert "numba.int64(v)" in kernels.shuffle_down("v", 1, np.uint64)

"""Jitted programs that fuse several ops on the CUDA backend, against the CPU backend; the
device list and backend choice; what is not lowered yet."""
import logging

import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax import lax
from helpers_cuda import assert_same, cuda_executable, on_cpu


def selu(x):
    alpha, scale = 1.6732632, 1.050701
    return scale * jnp.where(x > 0, x, alpha * (jnp.exp(x) - 1))


def softmax(x):
    e = jnp.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def chain8(x, y):
    return jnp.tanh(jnp.sin(x) * y + jnp.cos(y)) * 2.0 - jnp.abs(x) / (1.0 + y * y)


def stats(x):
    z = jnp.exp(x) * 0.5 + 1.0
    return z, z.sum(axis=0), z.max(), jnp.argmax(z, axis=1), (z * z).mean(axis=(0, 1))


def logsumexp_rows(x):
    m = x.max(axis=-1)
    return m + jnp.log(jnp.exp(x - m[:, None]).sum(axis=-1))


def int_mix(a, b):
    return (a * 3 + b) // 2, jnp.maximum(a, b) % 5, (a > b).sum(), lax.shift_left(a, 2)


def _rand(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


PROGRAMS = [
    ("selu", selu, lambda: [_rand((5, 7))]),
    ("softmax", softmax, lambda: [_rand((4, 9), 1)]),
    ("chain8", chain8, lambda: [_rand((33,), 2), _rand((33,), 3)]),
    ("stats", stats, lambda: [_rand((3, 5), 4)]),
    ("logsumexp_rows", logsumexp_rows, lambda: [_rand((3, 6), 5)]),
    ("int_mix", int_mix, lambda: [np.arange(-6, 6, dtype=np.int32), np.arange(12, dtype=np.int32)[::-1].copy()]),
    ("scalar_chain", lambda a, b: jnp.sin(a) * b + 1.0, lambda: [np.float32(0.5), np.float32(2.0)]),
    ("rank0_in_region", lambda x, s: jnp.exp(x * s) + s, lambda: [_rand((2, 3), 6), np.float32(0.7)]),
    ("bool_reductions", lambda x: ((x > 0).all(axis=1), (x > 0).any(), (x > 0).sum(axis=0)),
     lambda: [_rand((4, 5), 7)]),
    ("iota_program", lambda x: x + jnp.arange(x.shape[0], dtype=jnp.float32)[:, None],
     lambda: [_rand((4, 3), 8)]),
]


@pytest.mark.parametrize("name,fn,make", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_program_matches_cpu(name, fn, make):
    args = make()
    exe, got = cuda_executable(fn, *args)
    assert exe.backend == "cuda", exe.source
    assert_same(got, on_cpu(fn, *args), rtol=1e-5, atol=1e-5)


def mlp_step(params, x, y):
    def loss(params):
        (w1, b1), (w2, b2) = params
        h = numjax.nn.relu(x @ w1 + b1)
        return -(numjax.nn.log_softmax(h @ w2 + b2) * y).sum(axis=1).mean()
    value, grads = numjax.value_and_grad(loss)(params)
    return numjax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), value


def test_mlp_training_step_runs_on_cuda():
    rng = np.random.default_rng(0)
    params = [(rng.standard_normal((6, 5)).astype(np.float32), np.zeros(5, np.float32)),
              (rng.standard_normal((5, 3)).astype(np.float32), np.zeros(3, np.float32))]
    x = rng.standard_normal((4, 6)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[[0, 1, 2, 0]]
    exe, got = cuda_executable(mlp_step, params, x, y)
    assert exe.backend == "cuda", exe.source
    assert "def dot_" in exe.source
    assert_same(got, on_cpu(mlp_step, params, x, y), rtol=1e-5, atol=1e-6)


def test_jit_call_runs_on_cuda_and_matches_cpu():
    x = _rand((6, 8), 9)
    got = numjax.jit(softmax)(x)
    assert_same([got], on_cpu(softmax, x), rtol=1e-5, atol=1e-5)


def test_two_pass_reduction():
    # More elements than one block's share: the reduction splits over blocks, then a second
    # kernel combines the partials.
    from numjax.cuda import compiler as backend
    x = np.arange(backend.block_size() * 8 * 3, dtype=np.float32) / 7
    exe, got = cuda_executable(lambda v: (v.sum(), v.max(), (v * 2).min()), x)
    assert "fin_" in exe.source
    assert_same(got, on_cpu(lambda v: (v.sum(), v.max(), (v * 2).min()), x), rtol=1e-5, atol=1e-2)


def test_nan_propagates_through_max_and_argmax():
    x = np.array([[1.0, np.nan, 3.0], [np.nan, 5.0, np.nan]], np.float32)
    fn = lambda v: (v.max(axis=1), jnp.argmax(v, axis=1), jnp.argmin(v, axis=0))
    exe, got = cuda_executable(fn, x)
    assert exe.backend == "cuda"
    assert_same(got, on_cpu(fn, x))


def test_devices_and_default_backend():
    devs = numjax.devices()
    assert [repr(d) for d in devs] == ["CudaDevice(id=0)"]
    assert devs[0].platform == "gpu"
    assert numjax.default_backend() == "gpu"
    assert numjax.devices("cpu")[0].platform == "cpu"


def test_kernel_source_is_grid_stride_and_tree_reduction():
    exe, _ = cuda_executable(softmax, _rand((2, 4)))
    src = exe.source
    # the block tree: shared-memory steps (blocks of more than one warp), then warp shuffles
    assert "cuda.gridsize(1)" in src and "dm_shfl_down(" in src
    assert "@device_function" in src


def _unlowered(v):
    # A scatter applying a custom combiner (.at[].apply) has no CUDA lowering.
    return jnp.tanh(v).at[0].apply(jnp.sin)


def test_unlowered_primitive_runs_whole_program_on_cpu(caplog):
    a = _rand((3, 4))
    with caplog.at_level(logging.WARNING, logger="numjax"):
        exe, got = cuda_executable(_unlowered, a)
    assert getattr(exe, "backend", "cpu") == "cpu"
    assert "runs on the CPU" in caplog.text and "custom combiner" in caplog.text
    assert_same(got, on_cpu(_unlowered, a), rtol=1e-5, atol=1e-5)


def test_unlowered_primitive_error_names_it():
    from numjax.cuda import backend
    closed = numjax.make_jaxpr(_unlowered)(_rand((2, 2)))
    closed = getattr(closed, "closed_jaxpr", closed)
    with pytest.raises(NotImplementedError, match="'scatter' with a custom combiner"):
        backend.compile_program(closed)


def test_cache_key_includes_backend():
    x = _rand((3,))
    closed = numjax.make_jaxpr(lambda v: v * 2.0)(x)
    closed = getattr(closed, "closed_jaxpr", closed)
    from numjax import dispatch
    from numjax.config import config
    gpu_exe = dispatch.compiled_executable(closed)
    config.update("jax_platforms", "cpu")
    cpu_exe = dispatch.compiled_executable(closed)
    assert gpu_exe is not cpu_exe
    assert gpu_exe.backend == "cuda" and getattr(cpu_exe, "backend", "cpu") == "cpu"
    np.testing.assert_array_equal(np.asarray(gpu_exe.call_arrays([x])[0]),
                                  np.asarray(cpu_exe.call_arrays([x])[0]))


def test_results_outlive_the_next_call():
    # The executable reuses its device buffers from call to call; results are host copies.
    f = numjax.jit(lambda v: (jnp.exp(v), v.sum()))
    a, b = _rand((5,), 1), _rand((5,), 2)
    first = f(a)
    kept = [np.array(first[0]), float(first[1])]
    second = f(b)
    np.testing.assert_array_equal(np.asarray(first[0]), kept[0])
    assert float(first[1]) == kept[1]
    assert_same(list(second), on_cpu(lambda v: (jnp.exp(v), v.sum()), b), rtol=1e-5, atol=1e-6)


# The simulator runs vmath's threefry on numpy uint32 scalars, which warn when they wrap (as
# threefry's additions are meant to).
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("sampler", ["bits", "uniform"])
def test_random_bits_are_bit_equal_to_cpu(sampler):
    key = numjax.random.PRNGKey(42)
    fn = {"bits": lambda k: numjax.random.bits(k, (3, 5)),
          "uniform": lambda k: numjax.random.uniform(k, (17,), minval=-2.0, maxval=3.0)}[sampler]
    exe, got = cuda_executable(fn, key)
    assert exe.backend == "cuda", exe.source
    assert "vm_threefry2x32_xor" in exe.source
    want = on_cpu(fn, key)
    np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want[0]))


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_random_normal_matches_cpu():
    # Same bits; erf_inv is libdevice's on the GPU and XLA's polynomial on the CPU (ulps apart).
    key = numjax.random.PRNGKey(7)
    fn = lambda k: numjax.random.normal(k, (4, 6))
    exe, got = cuda_executable(fn, key)
    assert exe.backend == "cuda"
    assert_same(got, on_cpu(fn, key), rtol=4e-6, atol=4e-6)


def test_a_kernel_numba_cuda_cannot_compile_sends_the_program_to_the_cpu(monkeypatch, caplog):
    # numba-cuda compiles at a kernel's first launch; a typing error there (which the simulator,
    # running plain Python, never raises) must not fail the user's call.
    import numba.core.errors
    from numjax.cuda import backend
    x = _rand((4,))
    closed = numjax.make_jaxpr(selu)(x)
    exe = backend.compile_program(getattr(closed, "closed_jaxpr", closed), "selu")

    def fail(vals):
        raise numba.core.errors.TypingError("cannot type this")
    monkeypatch.setattr(exe, "_run", fail)
    with caplog.at_level(logging.WARNING, logger="numjax"):
        got = exe.call_arrays([x])
    assert exe.backend == "cpu" and "could not compile" in caplog.text
    assert_same(got, on_cpu(selu, x), rtol=1e-6, atol=1e-6)

"""The CUDA backend's caching allocator (cuda/memory.py), on the simulator: size classes, pool
reuse, the limit (XLA_PYTHON_CLIENT_MEM_FRACTION, NUMJAX_CUDA_MEMORY_LIMIT) and JAX's
out-of-memory error."""
import gc

import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax.cuda import memory
from numjax.errors import JaxRuntimeError


@pytest.fixture
def allocator():
    """A fresh allocator (the process's own keeps its state for the other tests)."""
    return memory.Allocator(device_id=0)


@pytest.fixture
def limited():
    """The process's allocator with a limit the test sets; restored (and its cache emptied)
    afterwards."""
    alloc = memory.allocator()
    yield alloc
    alloc.set_limit(None)
    alloc.empty_cache()


def test_size_classes():
    assert [memory.size_class(n) for n in (0, 1, 512, 513, 1000, 4097, 1 << 20)] == \
        [512, 512, 512, 1024, 1024, 8192, 1 << 20]
    assert memory.size_class((1 << 20) + 1) == 2 << 20
    assert memory.size_class(5 * (1 << 20) - 7) == 5 << 20


def test_freed_blocks_are_reused_by_size_class(allocator):
    block = allocator.allocate(3000)
    assert allocator.stats()["bytes_in_use"] == 4096 and allocator.num_allocs == 1
    del block
    gc.collect()
    stats = allocator.stats()
    assert (stats["bytes_in_use"], stats["bytes_cached"]) == (0, 4096)
    again = allocator.allocate(2500)            # the same class: the cached segment
    assert (allocator.num_allocs, allocator.num_reuses) == (1, 1)
    other = allocator.allocate(100)             # another class: a new segment
    assert (allocator.num_allocs, allocator.num_reuses) == (2, 1)
    stats = allocator.stats()
    assert (stats["bytes_in_use"], stats["bytes_cached"], stats["peak_bytes_in_use"]) == (4608, 0, 4608)
    view = again.view((5, 100), np.float32)
    assert view.shape == (5, 100) and view.dtype == np.float32
    assert again.holds(memory.device_pointer(view)) and not other.holds(memory.device_pointer(view))


def test_the_limit_from_the_environment(allocator, monkeypatch):
    monkeypatch.setattr(memory, "_total", [10_000])      # the simulator reports no total
    monkeypatch.delenv("NUMJAX_CUDA_MEMORY_LIMIT", raising=False)
    monkeypatch.delenv("XLA_PYTHON_CLIENT_MEM_FRACTION", raising=False)
    assert allocator.limit() == 7500                       # JAX's default fraction, 0.75
    monkeypatch.setenv("XLA_PYTHON_CLIENT_MEM_FRACTION", ".5")
    assert allocator.limit() == 5000
    monkeypatch.setenv("NUMJAX_CUDA_MEMORY_LIMIT", "3000")
    assert allocator.limit() == 3000
    keep = allocator.allocate(2000)
    with pytest.raises(JaxRuntimeError, match="NUMJAX_CUDA_MEMORY_LIMIT"):
        allocator.allocate(1000)
    monkeypatch.delenv("NUMJAX_CUDA_MEMORY_LIMIT")
    with pytest.raises(JaxRuntimeError, match=r"XLA_PYTHON_CLIENT_MEM_FRACTION=0.5 of the device's 10000"):
        allocator.allocate(4000)
    del keep


def test_out_of_memory_names_the_request_the_use_and_the_limit(allocator):
    allocator.set_limit(8192)
    keep = allocator.allocate(4096)
    with pytest.raises(JaxRuntimeError) as info:
        allocator.allocate(5000)
    message = str(info.value)
    assert message.startswith("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 5000 bytes")
    assert "4096 bytes are in use" in message and "the limit is 8192 bytes" in message
    assert "lower the batch size" in message and "XLA_PYTHON_CLIENT_MEM_FRACTION" in message
    assert isinstance(info.value, RuntimeError)
    del keep


def test_cached_blocks_are_freed_before_giving_up(allocator):
    allocator.set_limit(8192)
    blocks = [allocator.allocate(2048) for _ in range(4)]      # 8192 bytes taken
    del blocks
    gc.collect()
    assert allocator.stats()["bytes_cached"] == 8192
    big = allocator.allocate(6000)                              # fits once the cache is emptied
    stats = allocator.stats()
    assert (stats["bytes_in_use"], stats["bytes_cached"], stats["num_frees"]) == (8192, 0, 4)
    del big


def test_a_program_past_the_limit_raises_and_the_device_recovers(limited):
    f = numjax.jit(lambda v: jnp.tanh(v) + 1)
    np.asarray(f(np.zeros(4, np.float32)))
    limited.empty_cache()
    limited.set_limit(limited.stats()["bytes_in_use"] + 2048)
    x = np.ones(4096, np.float32)                      # 16 KiB: past the limit
    with pytest.raises(JaxRuntimeError, match=r"^RESOURCE_EXHAUSTED: Out of memory while trying "
                                              r"to allocate 16384 bytes"):
        f(x)
    with pytest.raises(JaxRuntimeError, match="allocate 16384 bytes"):
        numjax.device_put(x, numjax.devices()[0])
    limited.set_limit(None)
    np.testing.assert_array_equal(np.asarray(f(np.zeros(3, np.float32))), np.ones(3, np.float32))


def test_idle_executables_give_their_buffers_back_under_pressure(limited):
    g = numjax.jit(lambda v: (jnp.exp(v) * 2).sum())      # intermediates kept between calls
    assert float(g(np.zeros(300, np.float32))) == 600.0
    in_use = limited.stats()["bytes_in_use"]
    (program,) = g._dispatch.programs.values()
    held = program.executable("g")._buffers
    assert held._arrays                                    # its input buffer at least
    limited.set_limit(in_use + 512)
    y = numjax.device_put(np.zeros(300, np.float32), numjax.devices()[0])   # 1200 B -> 2048
    assert not held._arrays and type(y).__name__ == "CudaArray"
    assert limited.stats()["bytes_in_use"] <= in_use + 512
    limited.set_limit(None)
    assert float(g(np.zeros(300, np.float32))) == 600.0     # the executable allocates again


def test_stats_are_reported():
    stats = memory.stats()
    assert set(stats) >= {"bytes_in_use", "bytes_cached", "peak_bytes_in_use", "bytes_limit",
                          "num_allocs", "num_reuses", "num_host_to_device", "num_device_to_host"}
    assert stats["peak_bytes_in_use"] >= stats["bytes_in_use"] >= 0
    assert stats["bytes_reserved"] == stats["bytes_in_use"] + stats["bytes_cached"]


def test_the_platform_allocator_caches_nothing(allocator, monkeypatch):
    monkeypatch.setenv("XLA_PYTHON_CLIENT_ALLOCATOR", "platform")
    block = allocator.allocate(700)
    del block
    gc.collect()
    stats = allocator.stats()
    assert (stats["bytes_in_use"], stats["bytes_cached"], stats["num_frees"]) == (0, 0, 1)
    allocator.allocate(700)
    assert (allocator.num_allocs, allocator.num_reuses) == (2, 0)

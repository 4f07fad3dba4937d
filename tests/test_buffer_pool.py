"""numjax's pool of large buffers (lowering/buffer_pool.py, issue 14): compiled programs take
their large outputs and intermediates from it and get them back when the last array over them
dies, so a block never backs two live values.

Programs here are jitted elementwise chains over ``N`` float32 (above the pool's threshold);
every test checks values against numpy as well as the memory the results occupy.
"""
import gc
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax.config import config
from numjax.lowering import buffer_pool

N = 200_000                      # float32: 800 KB, above buffer_pool.THRESHOLD


@pytest.fixture(autouse=True)
def pool_on(monkeypatch):
    monkeypatch.setattr(config, "numjax_buffer_pool_bytes", 1 << 28)
    buffer_pool.trim()
    yield
    gc.collect()
    buffer_pool.trim()


def step(x):
    return jnp.tanh(x) * 0.5 + 0.25


def step_np(x):
    return np.tanh(x) * np.float32(0.5) + np.float32(0.25)


def data(seed=0, n=N):
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def raw(a):
    return getattr(a, "_value", a)     # the buffer itself (np.asarray gives a read-only view)


def test_large_results_come_from_the_pool_small_ones_do_not():
    f = jax.jit(step)
    big, small = raw(f(data())), raw(f(data(n=100)))
    assert type(big.base) is buffer_pool._Lease
    assert big.flags.c_contiguous and big.flags.writeable and big.ctypes.data % 64 == 0
    assert small.base is None or type(small.base) is not buffer_pool._Lease
    np.testing.assert_allclose(big, step_np(data()), rtol=2e-6, atol=1e-6)


def test_live_results_of_consecutive_calls_never_share_memory():
    f, x = jax.jit(step), data()
    results = [f(x) for _ in range(6)]
    for i, a in enumerate(results):
        np.testing.assert_allclose(raw(a), step_np(x), rtol=2e-6, atol=1e-6)
        for b in results[i + 1:]:
            assert not np.shares_memory(raw(a), raw(b))


def test_a_loop_feeding_results_back_reuses_blocks_and_stays_correct():
    f = jax.jit(step)
    x, want = data(1), data(1)
    before = buffer_pool.stats()
    addresses = set()
    for _ in range(30):
        y = f(x)
        assert not np.shares_memory(raw(y), raw(x))      # the input is alive during the call
        addresses.add(raw(y).ctypes.data)
        x = y
        want = step_np(want)
    np.testing.assert_allclose(raw(x), want, rtol=1e-5, atol=1e-6)
    after = buffer_pool.stats()
    assert after["hits"] - before["hits"] >= 25
    assert len(addresses) <= 3       # the blocks of the live input and output, and one spare


def test_intermediates_return_to_the_pool_when_the_call_ends():
    f = jax.jit(lambda x: jnp.sum(jnp.exp(x), axis=1, keepdims=True) * jnp.sin(x))
    x = data(2, 512 * 512).reshape(512, 512)
    want = np.sum(np.exp(x), axis=1, keepdims=True) * np.sin(x)
    np.testing.assert_allclose(raw(f(x)), want, rtol=1e-5)
    before = buffer_pool.stats()
    for _ in range(5):
        np.testing.assert_allclose(raw(f(x)), want, rtol=1e-5)
    assert buffer_pool.stats()["misses"] == before["misses"]


def test_views_keep_their_block_alive():
    f, x = jax.jit(step), data(3)
    first = raw(f(x))
    want = first.copy()
    tail, reshaped, flipped = first[5:], first.reshape(400, 500), first[::-1]
    del first
    gc.collect()
    later = [raw(f(data(4))) for _ in range(8)]       # a freed block would be handed out here
    for a in later:
        for view in (tail, reshaped, flipped):
            assert not np.shares_memory(a, view)
    np.testing.assert_array_equal(tail, want[5:])
    np.testing.assert_array_equal(reshaped.ravel(), want)
    np.testing.assert_array_equal(flipped, want[::-1])


def test_array_wrappers_and_numpy_views_outlive_the_driver_value():
    f, x = jax.jit(step), data(5)
    kept = f(x)
    view = np.asarray(kept)[:10]
    del kept
    gc.collect()
    for _ in range(5):
        other = f(data(6))
        assert not np.shares_memory(raw(other), view)
    np.testing.assert_allclose(view, step_np(x)[:10], rtol=2e-6, atol=1e-6)


def test_threads_calling_at_once_get_their_own_buffers():
    f = jax.jit(step)
    inputs = [data(10 + k) for k in range(4)]
    wants = [step_np(x) for x in inputs]
    f(inputs[0])
    barrier, errors, kept = threading.Barrier(4), [], [[] for _ in range(4)]

    def work(k):
        try:
            barrier.wait()
            for i in range(40):
                y = raw(f(inputs[k]))
                np.testing.assert_allclose(y, wants[k], rtol=2e-6, atol=1e-6)
                if i % 10 == 0:
                    kept[k].append(y)
        except BaseException as err:   # noqa: BLE001  (re-raised in the test's thread)
            errors.append(err)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[0]
    live = [a for ys in kept for a in ys]
    for i, a in enumerate(live):
        for b in live[i + 1:]:
            assert not np.shares_memory(a, b)
    for k, ys in enumerate(kept):
        for y in ys:
            np.testing.assert_allclose(y, wants[k], rtol=2e-6, atol=1e-6)


def test_idle_bytes_stay_under_the_cap_oldest_freed_first(monkeypatch):
    sizes = [1 << 20, 2 << 20, 3 << 20]                 # distinct size classes
    arrays = [buffer_pool.empty((s,), np.uint8) for s in sizes]
    monkeypatch.setattr(config, "numjax_buffer_pool_bytes", (5 << 20) + 1)
    while arrays:
        del arrays[0]                                    # given back: 1 MB first, 3 MB last
    stats = buffer_pool.stats()
    assert stats["idle_bytes"] == 5 << 20 and stats["idle_blocks"] == 2
    assert {size for size, blocks in buffer_pool._state.free.items() if blocks} == {2 << 20, 3 << 20}
    monkeypatch.setattr(config, "numjax_buffer_pool_bytes", 0)
    buffer_pool.trim()
    assert buffer_pool.stats()["idle_bytes"] == 0


def test_pool_off_gives_plain_arrays(monkeypatch):
    monkeypatch.setattr(config, "numjax_buffer_pool_bytes", 0)
    y = raw(jax.jit(step)(data(7)))
    assert y.base is None or type(y.base) is not buffer_pool._Lease
    np.testing.assert_allclose(y, step_np(data(7)), rtol=2e-6, atol=1e-6)
    assert buffer_pool.stats()["idle_bytes"] == 0


def test_a_block_given_back_while_the_pool_is_locked_is_filed_later():
    a = buffer_pool.empty((N,), np.float32)
    with buffer_pool._state.lock:       # what a finalizer run by the collector inside may meet
        del a
        assert len(buffer_pool._state.returned) == 1
    assert buffer_pool.stats()["idle_blocks"] == 1
    again = buffer_pool.empty((N,), np.float32)
    assert buffer_pool.stats()["idle_blocks"] == 0 and again.shape == (N,)


def test_size_classes_round_up_by_at_most_an_eighth():
    for n in (1 << 18, (1 << 18) + 1, 1_000_000, 40_000_000, (1 << 30) - 3):
        c = buffer_pool.size_class(n)
        assert n <= c <= n + max(4096, n // 8) and c % 4096 == 0
    assert buffer_pool.size_class(1_000_000) == buffer_pool.size_class(999_000)


def test_environment_variable_sets_the_cap():
    code = "from numjax.config import config; print(config.numjax_buffer_pool_bytes)"
    env = dict(os.environ, NUMJAX_BUFFER_POOL_BYTES="12345")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "12345"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX-only")
def test_a_forked_child_has_its_own_working_pool():
    script = textwrap.dedent("""
        import os, threading
        import numpy as np
        import numjax as jax, numjax.numpy as jnp
        from numjax.lowering import buffer_pool
        f = jax.jit(lambda x: jnp.tanh(x) * 0.5 + 0.25)
        x = np.linspace(-2, 2, 200_000, dtype=np.float32)
        want = np.asarray(f(x)).copy()
        kept = f(x)
        del kept                          # an idle block in the parent's pool
        hold = threading.Thread(target=lambda: buffer_pool._state.lock.acquire())
        hold.start(); hold.join()         # another thread holds the lock at the fork
        pid = os.fork()
        if pid == 0:
            ok = buffer_pool.stats()["idle_blocks"] == 0
            ys = [np.asarray(f(x)) for _ in range(3)]
            ok = ok and all(np.array_equal(y, want) for y in ys)
            ok = ok and not np.shares_memory(ys[0], ys[1])
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        print("CHILD", os.waitstatus_to_exitcode(status))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert "CHILD 0" in out.stdout, out.stdout + out.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts page faults (getrusage)")
def test_repeated_calls_fault_no_fresh_pages_in():
    """A 64 MB result is above glibc's largest mmap threshold (32 MB): from ``np.empty`` it is
    fresh memory on every call, page-faulted in (at least 32 faults with 2 MB pages, thousands
    with 4 KB pages); from the pool the same block comes back, already in place."""
    import resource
    f = jax.jit(lambda v: v * 2.0 + 1.0)
    x = np.ones(16_000_000, np.float32)
    for _ in range(3):      # as below: the last result is alive while the next is made
        y = f(x)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        y = f(x)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    assert faults < 32, faults
    assert float(raw(y)[-1]) == 3.0 and type(raw(y).base) is buffer_pool._Lease

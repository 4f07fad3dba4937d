"""Arrays that stay on the device between CUDA programs (cuda/arrays.py), the devices API,
device_put/device_get, jax.default_device and block_until_ready, on the simulator.

Host transfers are counted by ``numjax.cuda.memory.transfers`` (every copy between host and
device memory that numjax makes goes through ``memory.copy_to_device``/``copy_to_host``).
"""
import pickle

import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax import dispatch
from numjax.array import Array
from numjax.config import config
from numjax.cuda import memory
from numjax.cuda.arrays import CudaArray

from helpers_cuda import assert_same, on_cpu


def _transfers():
    return memory.transfers.host_to_device, memory.transfers.device_to_host


def _cuda_device():
    (device,) = numjax.devices()
    return device


def _cpu_device():
    return numjax.devices("cpu")[0]


def test_outputs_stay_on_the_device_and_agree_with_the_cpu():
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    fn = lambda v: (jnp.tanh(v) * 3, v.sum(axis=1), v.max(), (v > 0).astype(jnp.int32))
    before = _transfers()
    outs = numjax.tree_util.tree_leaves(numjax.jit(fn)(x))
    assert all(type(o) is CudaArray for o in outs)
    assert _transfers() == (before[0] + 1, before[1])       # x in; nothing out yet
    assert [o.shape for o in outs] == [(3, 4), (3,), (), (3, 4)]
    assert [o.dtype for o in outs] == [np.float32, np.float32, np.float32, np.int32]
    assert _transfers()[1] == before[1]                     # metadata needs no copy
    assert_same(outs, on_cpu(fn, x))
    assert outs[2]._dev.shape == (1,)                       # rank 0 is (1,) on the device


def test_a_loop_of_jitted_calls_makes_no_host_transfer():
    step = numjax.jit(lambda v: v * 0.5 + jnp.sin(v))
    x = step(np.arange(16, dtype=np.float32))
    x = step(x)
    x.block_until_ready()
    counts, allocs = _transfers(), memory.stats()["num_allocs"]
    for _ in range(20):
        x = step(x)
    assert _transfers() == counts
    assert memory.stats()["num_allocs"] == allocs            # outputs reuse freed blocks
    want = np.arange(16, dtype=np.float32)
    for _ in range(22):
        want = np.asarray(on_cpu(lambda v: v * 0.5 + jnp.sin(v), want)[0])
    np.testing.assert_allclose(np.asarray(x), want, rtol=1e-5, atol=1e-6)


def test_an_output_is_not_overwritten_by_the_next_call():
    fn = numjax.jit(lambda v: (v * 2, (v + 1).sum()))
    first = fn(np.arange(6, dtype=np.float32))
    second = fn(np.full(6, 10, np.float32))
    np.testing.assert_array_equal(np.asarray(first[0]), np.arange(6) * 2)
    assert float(first[1]) == 21.0
    np.testing.assert_array_equal(np.asarray(second[0]), np.full(6, 20))
    assert float(second[1]) == 66.0


def test_outputs_that_are_inputs_views_constants_and_literals():
    y = numjax.jit(lambda v: v * 3)(np.arange(6, dtype=np.int32))
    const = np.arange(4, dtype=np.float32)
    fn = lambda v: (v, v.reshape(2, 3), jnp.asarray(const) + 0, 7, v[:0])
    outs = numjax.jit(fn)(y)
    assert all(type(o) is CudaArray for o in outs)
    assert outs[0]._block is y._block and outs[1]._block is y._block
    assert_same(outs, on_cpu(fn, np.asarray(y)))
    again = numjax.jit(fn)(y)            # the same executable: earlier outputs keep their values
    assert_same(outs, numjax.tree_util.tree_leaves(again))
    np.testing.assert_array_equal(np.asarray(outs[1]), np.arange(6).reshape(2, 3) * 3)


def test_host_inputs_are_copied_and_device_inputs_are_read_in_place():
    f = numjax.jit(lambda a, b: a * b)
    a = numjax.device_put(np.arange(5, dtype=np.float32), _cuda_device())
    before = _transfers()
    out = f(a, np.full(5, 2, np.float32))
    assert _transfers() == (before[0] + 1, before[1])
    np.testing.assert_array_equal(np.asarray(out), np.arange(5) * 2)


def test_metadata_devices_and_reprs():
    device = _cuda_device()
    assert repr(device) == "CudaDevice(id=0)" and isinstance(device, numjax.Device)
    y = numjax.jit(lambda v: v + 1)(np.float32(2.0))
    before = _transfers()
    assert y.shape == () and y.ndim == 0 and y.size == 1 and y.dtype == np.float32
    assert y.aval == numjax.core.ShapedArray((), np.float32) and y.nbytes == 4
    assert y.devices() == {device} and y.device == device
    assert y.sharding == numjax.sharding.SingleDeviceSharding(device)
    assert repr(y.sharding) == "SingleDeviceSharding(device=CudaDevice(id=0), memory_kind=device)"
    assert _transfers() == before
    assert repr(y) == "Array(3., dtype=float32)" and str(y) == "3.0"
    assert float(y) == 3.0 and int(y) == 3 and f"{y:.1f}" == "3.0"
    assert isinstance(y, numjax.Array) and isinstance(y, Array)
    w = numjax.jit(lambda v: v * 2)(2.0)
    assert repr(w) == "Array(4., dtype=float32, weak_type=True)"
    assert pickle.loads(pickle.dumps(y)).item() == 3.0


def test_eager_ops_and_numpy_read_device_arrays():
    y = numjax.jit(lambda v: v - 1)(np.arange(4, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(y + y), [-2, 0, 2, 4])
    host = Array(np.arange(4, dtype=np.float32) - 1)
    np.testing.assert_array_equal(np.asarray(jnp.exp(y)), np.asarray(jnp.exp(host)))
    np.testing.assert_array_equal(np.asarray(jnp.maximum(y, host * 0)), [0, 0, 1, 2])
    assert float(y[2]) == 1.0 and y.tolist() == [-1.0, 0.0, 1.0, 2.0] and len(y) == 4
    assert float(jnp.dot(y, y)) == 6.0
    np.testing.assert_array_equal(np.asarray(y) * 2, [-2, 0, 2, 4])
    copied = y.copy()
    assert type(copied) is CudaArray and copied._block is not y._block
    np.testing.assert_array_equal(np.asarray(copied), np.asarray(y))


def test_transformations_of_jit_take_device_arrays():
    y = numjax.jit(lambda v: v * 1.5)(np.arange(6, dtype=np.float32).reshape(2, 3))
    inner = numjax.jit(lambda v: (jnp.sin(v) * v).sum())
    g = numjax.grad(inner)(y)
    v = np.arange(6, dtype=np.float32).reshape(2, 3) * 1.5
    np.testing.assert_allclose(np.asarray(g), np.cos(v) * v + np.sin(v), rtol=1e-5, atol=1e-6)
    rows = numjax.vmap(numjax.jit(lambda r: r.sum()))(y)
    np.testing.assert_allclose(np.asarray(rows), v.sum(axis=1), rtol=1e-6)


def test_device_put_and_device_get_round_trip_pytrees():
    device = _cuda_device()
    tree = {"f": np.linspace(0, 1, 5, dtype=np.float32), "i": [np.arange(3, dtype=np.int32),
            np.array([True, False])], "u": np.arange(4, dtype=np.uint8).reshape(2, 2), "s": 2.5,
            "h": np.array([1.5, -2], np.float16), "b": np.int8(-3), "d": np.arange(3.0)}
    put = numjax.device_put(tree, device)
    leaves = numjax.tree_util.tree_leaves(put)
    assert all(type(leaf) is CudaArray and leaf.device == device for leaf in leaves)
    assert put["s"].weak_type and put["s"].dtype == np.float32
    back = numjax.device_get(put)
    assert numjax.tree_util.tree_structure(back) == numjax.tree_util.tree_structure(put)
    for got, want in zip(numjax.tree_util.tree_leaves(back), numjax.tree_util.tree_leaves(tree)):
        assert isinstance(got, np.ndarray)
        # Python floats and (x64 being off) float64 arrays become float32, as in JAX.
        want = np.asarray(want, np.float32 if isinstance(want, float) or want.dtype == np.float64 else None)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    sharded = numjax.device_put(np.arange(3.0, dtype=np.float32),
                                numjax.sharding.SingleDeviceSharding(device))
    assert type(sharded) is CudaArray
    on_host = numjax.device_put(put, _cpu_device())
    assert all(type(leaf) is Array and leaf.device == _cpu_device()
               for leaf in numjax.tree_util.tree_leaves(on_host))
    np.testing.assert_array_equal(np.asarray(on_host["u"]), tree["u"])
    assert numjax.device_put(put["f"]) is put["f"]
    assert type(numjax.device_put(np.ones(2, np.float32))) is CudaArray   # default: the GPU
    with pytest.raises(ValueError, match="only accepts `None`.*Received invalid value: 'cpu'"):
        numjax.device_put(np.ones(2), "cpu")


def test_default_device_switches_the_backend_of_jitted_programs():
    f = numjax.jit(lambda v: v * 2 + 1)
    x = np.arange(4, dtype=np.float32)
    assert type(f(x)) is CudaArray
    with numjax.default_device(_cpu_device()):
        y = f(x)
        assert type(y) is Array and y.device == _cpu_device()
        assert dispatch.current_backend() == ("cpu", None)
        assert numjax.devices() == [_cuda_device()] and numjax.default_backend() == "gpu"
        z = f(numjax.device_put(x, _cuda_device()))      # a device array into a CPU program
        assert type(z) is Array
    with numjax.default_device("cpu"):
        assert type(f(x)) is Array
    assert type(f(x)) is CudaArray
    np.testing.assert_array_equal(np.asarray(y), np.asarray(f(x)))
    np.testing.assert_array_equal(np.asarray(z), np.asarray(y))
    config.update("jax_default_device", _cpu_device())
    try:
        assert type(f(x)) is Array
    finally:
        config.update("jax_default_device", None)
    assert type(f(x)) is CudaArray
    with pytest.raises(ValueError, match="Device object.*or a platform name string.*got: 3"):
        numjax.default_device(3)


def test_block_until_ready_returns_its_argument_without_copying():
    y = numjax.jit(lambda v: (v * v, v.sum()))(np.arange(8, dtype=np.float32))
    before = _transfers()
    assert y[0].block_until_ready() is y[0]
    tree = {"a": y, "b": 1}
    assert numjax.block_until_ready(tree) is tree
    assert _transfers() == before
    assert y[0]._ready is None and y[0].is_ready()
    assert float(y[1]) == 28.0


def test_the_cpu_fallback_takes_device_arrays(monkeypatch):
    from numjax.cuda import backend
    from numjax.cuda.kernels import CudaUnsupported

    def unsupported(closed):
        raise CudaUnsupported("test: this program has no CUDA lowering")
    y = numjax.device_put(np.arange(6, dtype=np.float32), _cuda_device())
    monkeypatch.setattr(backend, "plan_program", unsupported)
    out = numjax.jit(lambda v: jnp.cumsum(v[::-1]) * 2)(y)
    assert type(out) is Array
    np.testing.assert_array_equal(np.asarray(out), np.cumsum(np.arange(6)[::-1]) * 2)

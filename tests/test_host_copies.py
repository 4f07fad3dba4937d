"""numpy arrays handed to numjax are copied, as JAX copies host data into its own buffers:
writing the caller's array afterwards changes no Array made from it (through jnp, lax,
device_put or a jitted function, whose identity, reshape or slice would otherwise be a view),
and ``np.asarray`` of an Array is read-only. Jitted calls with numpy arguments take the cached
fast path, and give what the full path gives."""
import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax import lax


def _fresh():
    return np.arange(6, dtype=np.float32).reshape(2, 3)


EAGER = {
    "jnp.asarray": jnp.asarray,
    "jnp.array": jnp.array,
    "jnp.copy": jnp.copy,
    "device_put": numjax.device_put,
    "jnp.reshape": lambda x: jnp.reshape(x, (3, 2)),
    "jnp.ravel": jnp.ravel,
    "jnp.transpose": jnp.transpose,
    "jnp.broadcast_to": lambda x: jnp.broadcast_to(x, (2, 3)),
    "jnp.atleast_2d": jnp.atleast_2d,
    "jnp.float32": jnp.float32,
    "astype": lambda x: jnp.asarray(x).astype(np.float32),
    "tree_map(asarray)": lambda x: numjax.tree_util.tree_map(jnp.asarray, [x])[0],
    "lax.convert_element_type": lambda x: lax.convert_element_type(x, np.float32),
    "lax.reshape": lambda x: lax.reshape(x, (3, 2)),
    "lax.transpose": lambda x: lax.transpose(x, (1, 0)),
    "lax.slice": lambda x: lax.slice(x, (0, 0), (1, 2)),
    "lax.broadcast_in_dim": lambda x: lax.broadcast_in_dim(x, (2, 3), (0, 1)),
    "lax.squeeze": lambda x: lax.squeeze(x.reshape(1, 2, 3), (0,)),
    "lax.optimization_barrier": lax.optimization_barrier,
}

JITTED = {
    "identity": lambda x: x,
    "reshape": lambda x: x.reshape(3, 2),
    "row": lambda x: x[1],
    "astype same": lambda x: x.astype(jnp.float32),
    "tuple": lambda x: (x, x.T, x * 2),
}


def _values(out):
    return [np.array(leaf) for leaf in numjax.tree_util.tree_leaves(out)]


@pytest.mark.parametrize("name", sorted(EAGER))
def test_eager_results_do_not_follow_the_callers_array(name):
    x = _fresh()
    out = EAGER[name](x)
    assert isinstance(out, numjax.Array)
    before = np.array(out)
    x[...] = -7.0
    np.testing.assert_array_equal(np.asarray(out), before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("name", sorted(JITTED))
def test_jit_results_do_not_follow_the_callers_array(name, dtype):
    f = numjax.jit(JITTED[name])
    for call in range(3):            # the first call traces; the later ones take the fast path
        x = _fresh().astype(dtype)
        out = f(x)
        expected = _values(JITTED[name](jnp.asarray(x.copy())))
        x[...] = -7
        for got, want in zip(_values(out), expected):
            np.testing.assert_array_equal(got, want)
            assert got.dtype == want.dtype


def test_jit_numpy_arguments_take_the_fast_path():
    f = numjax.jit(lambda x, y: x * 2 + y)
    x, y = _fresh(), np.ones(3, np.float64)   # float64 becomes float32 without x64, as in JAX
    first = f(x, y)
    hits = f.stats.trace_hits
    for _ in range(3):
        out = f(x, y)
        np.testing.assert_array_equal(np.asarray(out), np.asarray(first))
        assert out.dtype == np.float32 and out.weak_type is False
    assert f.stats.trace_hits == hits + 3
    assert f._cache_size() == 1
    # A numpy argument and an Array of its signature keep separate entries with one program.
    np.testing.assert_array_equal(np.asarray(f(jnp.asarray(x), jnp.asarray(y))), np.asarray(first))
    assert f._cache_size() == 1


def test_jit_numpy_non_contiguous_and_keywords():
    f = numjax.jit(lambda x: x + 1)
    x = _fresh()
    for arg in (x.T, x[:, ::2], x):
        for _ in range(2):
            np.testing.assert_array_equal(np.asarray(f(arg)), arg + 1)
    g = numjax.jit(lambda x: x)
    out = g(x=x)
    x[...] = 3
    np.testing.assert_array_equal(np.asarray(out), _fresh())


def test_asarray_of_an_array_is_read_only():
    a = jnp.arange(4.0)
    view = np.asarray(a)
    assert not view.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 1.0
    np.testing.assert_array_equal(np.asarray(a), [0, 1, 2, 3])
    copy = np.array(a)                # an explicit copy is the caller's to write
    copy[0] = 5.0
    assert copy.flags.writeable and float(a[0]) == 0.0
    assert np.asarray(a, dtype=np.float64).flags.writeable


def test_dlpack_export_is_read_only_for_numpy():
    a = jnp.arange(4.0) * 2
    view = np.from_dlpack(a)
    assert not view.flags.writeable and view.dtype == np.float32
    np.testing.assert_array_equal(view, [0, 2, 4, 6])
    assert a.__dlpack_device__() == (1, 0)            # kDLCPU, device 0
    assert type(a.__dlpack__()).__name__ == "PyCapsule"   # a consumer without max_version
    x = np.ones(3, np.float32)
    b = jnp.from_dlpack(x)
    x[0] = 5.0
    np.testing.assert_array_equal(np.asarray(b), [1, 1, 1])

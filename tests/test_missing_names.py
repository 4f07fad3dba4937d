"""Names real code calls: jax.ops.segment_*, lax.associative_scan, lax's *_in_dim helpers,
jax.log_compiles, Lowered.compiler_ir and round() of Arrays."""
import logging

import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax import lax

DATA = np.arange(6.0, dtype=np.float32)
IDS = np.array([0, 0, 2, 2, 5, 1], np.int32)


def _reference(kind, data, ids, n):
    ufunc = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[kind]
    init = {"sum": 0, "prod": 1, "max": -np.inf, "min": np.inf}[kind]
    out = np.full((n,) + data.shape[1:], init, data.dtype)
    keep = (ids >= 0) & (ids < n)
    ufunc.at(out, ids[keep], data[keep])
    return out


@pytest.mark.parametrize("kind", ["sum", "prod", "max", "min"])
def test_segment_reductions(kind):
    fn = getattr(jax.ops, f"segment_{kind}")
    expected = _reference(kind, DATA, IDS, 4)
    np.testing.assert_array_equal(fn(DATA, IDS, num_segments=4), expected)
    np.testing.assert_array_equal(jax.jit(lambda d, s: fn(d, s, 4))(DATA, IDS), expected)
    np.testing.assert_array_equal(fn(DATA, IDS, 4, bucket_size=4), expected)
    np.testing.assert_array_equal(fn(DATA, IDS), _reference(kind, DATA, IDS, 6))
    dropped = np.array([0, -1, 1, 1, 2, 7], np.int32)
    np.testing.assert_array_equal(fn(DATA, dropped, 3), _reference(kind, DATA, dropped, 3))
    np.testing.assert_array_equal(jax.vmap(lambda d: fn(d, IDS, 3))(np.stack([DATA, -DATA])),
                                  np.stack([_reference(kind, DATA, IDS, 3), _reference(kind, -DATA, IDS, 3)]))
    assert fn(np.ones((6, 2), np.float32), IDS, 3).shape == (3, 2)


def test_segment_sum_grad_and_errors():
    g = jax.grad(lambda d: (jax.ops.segment_sum(d, IDS, 3) * jnp.array([1.0, 2.0, 3.0])).sum())(DATA)
    np.testing.assert_array_equal(g, [1, 1, 3, 3, 0, 2])
    np.testing.assert_array_equal(jax.ops.segment_max(np.arange(6), IDS, 2), [1, 5])
    assert int(jax.ops.segment_min(np.arange(6), IDS, 4)[3]) == np.iinfo(np.int32).max
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda d, s: jax.ops.segment_sum(d, s))(DATA, IDS)


def test_associative_scan_matches_cumulative_ops():
    x = np.random.RandomState(0).rand(7, 3).astype(np.float32)
    np.testing.assert_allclose(lax.associative_scan(jnp.add, x), np.cumsum(x, 0), rtol=1e-6)
    np.testing.assert_allclose(lax.associative_scan(jnp.multiply, x, reverse=True, axis=1),
                               np.cumprod(x[:, ::-1], 1)[:, ::-1], rtol=1e-6)
    a, b = lax.associative_scan(lambda p, q: (p[0] + q[0], jnp.maximum(p[1], q[1])), (x, -x), axis=1)
    np.testing.assert_allclose(a, np.cumsum(x, 1), rtol=1e-6)
    np.testing.assert_array_equal(b, np.maximum.accumulate(-x, 1))
    np.testing.assert_allclose(jax.jit(lambda v: lax.associative_scan(jnp.add, v))(x), np.cumsum(x, 0), rtol=1e-6)
    np.testing.assert_allclose(jax.grad(lambda v: lax.associative_scan(jnp.add, v).sum())(x[:, 0]),
                               np.arange(7, 0, -1), rtol=1e-6)
    with pytest.raises(ValueError, match="must have the same first dimension"):
        lax.associative_scan(jnp.add, (x, x[:3]))


def test_in_dim_helpers():
    x = jnp.arange(10).reshape(2, 5)
    np.testing.assert_array_equal(lax.slice_in_dim(x, 1, -1, 2, axis=1), np.arange(10).reshape(2, 5)[:, 1:-1:2])
    np.testing.assert_array_equal(lax.index_in_dim(x, -1, axis=1, keepdims=False), [4, 9])
    assert lax.index_in_dim(x, 0).shape == (1, 5)
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 1 with size 5"):
        lax.index_in_dim(x, 7, axis=1)
    np.testing.assert_array_equal(lax.dynamic_slice_in_dim(x, -2, 2, axis=1), [[3, 4], [8, 9]])
    np.testing.assert_array_equal(lax.dynamic_slice_in_dim(x, -2, 2, 1, allow_negative_indices=False),
                                  [[0, 1], [5, 6]])
    f = jax.jit(lambda v, i: lax.dynamic_index_in_dim(v, i, 1, keepdims=False))
    np.testing.assert_array_equal(f(x, 3), [3, 8])
    np.testing.assert_array_equal(lax.dynamic_update_index_in_dim(x, jnp.array([-1, -2]), 0, 1)[:, 0], [-1, -2])
    np.testing.assert_array_equal(jax.jit(lambda v, i: lax.dynamic_update_slice_in_dim(v, jnp.zeros((2, 2), v.dtype),
                                                                                      i, 1))(x, -2)[:, 3:], 0)
    g = jax.grad(lambda v: lax.dynamic_slice_in_dim(v, 1, 2).sum())(jnp.arange(4.0))
    np.testing.assert_array_equal(g, [0, 1, 1, 0])


def test_log_compiles_context(caplog):
    assert not jax.config.jax_log_compiles
    with caplog.at_level(logging.WARNING, logger="numjax"):
        with jax.log_compiles():
            assert jax.config.jax_log_compiles
            jax.jit(lambda v: v * 3 + 1)(jnp.ones(5))
    assert not jax.config.jax_log_compiles
    assert any("Compiling" in r.getMessage() for r in caplog.records)


def test_compiler_ir_is_text_equal_for_equal_programs():
    a = jax.jit(lambda v: v * 2).lower(1.0).compiler_ir()
    b = jax.jit(lambda v: v * 2).lower(1.0).compiler_ir()
    c = jax.jit(lambda v: v * 3).lower(1.0).compiler_ir()
    assert str(a) == str(b) and str(a) != str(c) and a == b
    with pytest.raises(ValueError, match="unknown dialect: foo"):
        jax.jit(lambda v: v).lower(1.0).compiler_ir("foo")


def test_round_of_arrays():
    assert repr(round(jnp.float32(2.567))) == "Array(3, dtype=int32)"
    assert repr(round(jnp.array([1.5, 2.5]))) == "Array([2, 2], dtype=int32)"
    assert round(jnp.float32(2.567), 2).dtype == np.float32
    assert repr(round(jnp.int32(7))) == "Array(7, dtype=int32)"
    assert int(jax.jit(lambda v: round(v))(3.5)) == 4

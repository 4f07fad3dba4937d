"""pmap's call plans (pmap_api._CallPlan): a call whose arguments are all arrays reuses the
analysis of the first call with the same signature. Runs in one process (no MPI): a reused
plan must give what the full path gives, and a changed signature must not reuse one."""
import numpy as np
import pytest

import numjax as jax
from numjax import lax


def _fresh(fun, **kw):
    """The full path: a new pmapped function has no plans yet."""
    return lambda *args: jax.pmap(fun, **kw)(*args)


def _check_same(fun, calls, **kw):
    planned = jax.pmap(fun, **kw)
    for args in calls:
        for _ in range(2):          # the second call with a signature runs its plan
            got, want = planned(*args), _fresh(fun, **kw)(*args)
            assert type(got) is type(want)
            for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
                assert g.shape == w.shape and g.dtype == w.dtype and g.weak_type == w.weak_type
                np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_plan_reuse_matches_the_full_path_across_signatures():
    x3, x4 = np.arange(3, dtype=np.float32)[None], np.arange(4, dtype=np.float32)[None]
    weak = jax.numpy.broadcast_to(2.0, (1, 3))     # a weak-typed float32 Array
    assert weak.weak_type
    calls = [(x3,), (x4,), (x3.astype(np.int32),), (jax.numpy.asarray(x3),), (x3 * 2,),
             (jax.numpy.ones((1, 3)) * 2.0,), (weak,), (x3,)]
    _check_same(lambda v: lax.psum(v * 2, "i") + v, calls, axis_name="i")


def test_plan_reads_the_arguments_of_each_call():
    f = jax.pmap(lambda v: lax.psum(v, "i"), "i")
    x = np.ones((1, 3), np.float32)
    np.testing.assert_array_equal(np.asarray(f(x)), [[1.0, 1.0, 1.0]])
    np.testing.assert_array_equal(np.asarray(f(x)), [[1.0, 1.0, 1.0]])
    y = np.full((1, 3), 5.0, np.float32)     # same signature, new values: the plan holds no data
    np.testing.assert_array_equal(np.asarray(f(y)), [[5.0, 5.0, 5.0]])


def test_plan_with_statics_unmapped_arguments_and_out_axes():
    x = np.arange(6, dtype=np.float32).reshape(1, 6)
    s = np.float32(3.0) * np.ones(6, np.float32)
    _check_same(lambda v, k, w: (v ** k + w, lax.pmax(v, "i")), [(x, 2, s), (x, 3, s)],
                axis_name="i", in_axes=(0, None, None), static_broadcasted_argnums=1, out_axes=(0, None))


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype int64")   # JAX's, with x64 off
def test_plan_follows_x64_mode():
    f = jax.pmap(lambda v: v.astype(jax.numpy.int64), "i")
    x = np.ones((1, 2), np.int32)
    assert f(x).dtype == np.int32 and f(x).dtype == np.int32
    jax.config.update("jax_enable_x64", True)
    try:
        assert f(x).dtype == np.int64 and f(x).dtype == np.int64
    finally:
        jax.config.update("jax_enable_x64", False)
    assert f(x).dtype == np.int32

"""Edge values through the LLVM backend's loop kernels and driver nodes, against real JAX:
float sort order (NaNs, signed zeros), top_k, failed factorizations, clamped switch
indices, out-of-bounds gathers/scatters, loops with Python-int carries."""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402

jax.config.update("jax_platform_name", "cpu")

X = np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -1.0, np.inf], np.float32)
NAN_MATRIX = np.array([[np.nan, 2., 3.], [2., 1., 0.], [1., 1., 1.], [0., 1., 2.]], np.float32)

CASES = {
    "sort": lambda J, N: J.jit(lambda a: N.sort(a))(X),
    "argsort": lambda J, N: J.jit(lambda a: N.argsort(a))(X),
    "top_k": lambda J, N: J.jit(lambda a: J.lax.top_k(a, 4))(X),
    "cholesky_not_pd": lambda J, N: J.jit(N.linalg.cholesky)(np.array([[1., 2.], [2., 1.]], np.float32)),
    "qr_nan_reduced": lambda J, N: J.jit(N.linalg.qr)(NAN_MATRIX),
    "qr_nan_complete": lambda J, N: J.jit(lambda a: N.linalg.qr(a, mode="complete"))(NAN_MATRIX),
    "switch_clamped": lambda J, N: J.jit(lambda i, v: J.lax.switch(
        i, [lambda y: y + 1, lambda y: y * 10], v))(np.int32(-5), np.float32(2.0)),
    "cumsum_reverse": lambda J, N: J.jit(lambda a: J.lax.cumsum(a, reverse=True))(np.arange(5, dtype=np.float32)),
    "gather_out_of_bounds": lambda J, N: J.jit(lambda a, i: a[i])(np.arange(5.0, dtype=np.float32),
                                                                   np.array([7, -9, 2])),
    "scatter_out_of_bounds": lambda J, N: J.jit(lambda a, i: a.at[i].add(1.0))(np.arange(5.0, dtype=np.float32),
                                                                              np.array([7, -1, 2])),
    "while_python_int_carry": lambda J, N: J.jit(lambda n: J.lax.while_loop(
        lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2), (0, 1.0)))(np.int32(5)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name):
    want = jax.tree_util.tree_leaves(CASES[name](jax, jjnp))
    got = nj.tree_util.tree_leaves(CASES[name](nj, njnp))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_array_equal(g, w)

"""jax.numpy breadth: the records of tests/numpy_extra_table.py checked for

* values, dtypes, weak types and shapes against JAX 0.10.2's results, committed as data in
  tests/numpy_extra_expected.json (``test_matches_jax``),
* a numpy reference for a sample of records over several dtypes (``test_vs_numpy``),
* gradients by finite differences (``test_grads``, records flagged ``grad``),
* vmap against a Python loop (``test_vmap``, records flagged ``vmap``),
* jit against eager, compiled without fallback (``test_jit``, records flagged ``jit``;
  each is a Numba compile, so only a handful run by default and the rest with --runslow).
"""
import warnings

import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax.test_util import check_grads
from helpers import jit_compiled
from numpy_extra_table import RECORDS, describe, evaluate, load_expected, make_args

EXPECTED = load_expected()


def _to_numjax(args):
    return [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]


def _compare(got, want, rtol, path):
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{path}: structure {got!r:.200}"
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, rtol, f"{path}[{i}]")
        return
    if "python" in want:
        value = got.get("python", got.get("values"))
        assert value == want["python"], f"{path}: {value!r} != {want['python']!r}"
        return
    assert "dtype" in got, f"{path}: got a Python value {got}, JAX gives an array"
    assert (got["dtype"], got["weak"], got["shape"]) == (want["dtype"], want["weak"], want["shape"]), path
    a = np.asarray(got["values"], dtype=float)
    b = np.asarray(want["values"], dtype=float)
    if want["dtype"][0] in "iub":
        np.testing.assert_array_equal(a, b, err_msg=path)
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-5, equal_nan=True, err_msg=path)


@pytest.mark.parametrize("rec", RECORDS, ids=lambda r: r.name)
def test_matches_jax(rec):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = describe(evaluate(rec, jnp, _to_numjax(make_args(rec))))
    _compare(got, EXPECTED[rec.name], rec.rtol, rec.name)


# ---------------------------------------------------------------- numpy reference, several dtypes

_NP_CASES = [
    # (jnp expression, numpy expression, dtypes)
    ("jnp.logaddexp(x, y)", "np.logaddexp(x, y)", ("float32",)),
    ("jnp.hypot(x, y)", "np.hypot(x, y)", ("float32", "int32", "int8")),
    ("jnp.copysign(x, y)", "np.copysign(x, y)", ("float32", "int16")),
    ("jnp.fmax(x, y)", "np.fmax(x, y)", ("float32", "int32", "uint8")),
    ("jnp.heaviside(x, y)", "np.heaviside(x, y)", ("float32",)),
    ("jnp.gcd(x, y)", "np.gcd(x, y)", ("int32", "int8", "uint8")),
    ("jnp.lcm(x, y)", "np.lcm(x, y)", ("int32", "int16")),
    ("jnp.left_shift(x, 2)", "np.left_shift(x, 2)", ("int32", "uint8")),
    ("jnp.bitwise_count(x)", "np.bitwise_count(x)", ("int32", "uint8", "int16")),
    ("jnp.sum(x, axis=(0, 1), where=y > x)", "np.sum(x, axis=(0, 1), where=y > x)", ("float32", "int32")),
    ("jnp.max(x, axis=1, initial=3, keepdims=True)", "np.max(x, axis=1, initial=3, keepdims=True)",
     ("float32", "int32", "uint8")),
    ("jnp.var(x, axis=0, ddof=1)", "np.var(x, axis=0, ddof=1)", ("float32", "int32")),
    ("jnp.ptp(x, axis=1)", "np.ptp(x, axis=1)", ("float32", "int32")),
    ("jnp.roll(x, (1, -2), axis=(0, 2))", "np.roll(x, (1, -2), axis=(0, 2))", ("float32", "int8", "bool")),
    ("jnp.pad(x, ((1, 2), (3, 0), (0, 1)), mode='symmetric')", "np.pad(x, ((1, 2), (3, 0), (0, 1)), mode='symmetric')",
     ("float32", "int32", "bool")),
    ("jnp.pad(x, 4, mode='reflect')", "np.pad(x, 4, mode='reflect')", ("float32", "uint8")),
    ("jnp.tile(x, (2, 1, 3))", "np.tile(x, (2, 1, 3))", ("float32", "bool")),
    ("jnp.rot90(x, 3, axes=(2, 0))", "np.rot90(x, 3, axes=(2, 0))", ("int32",)),
    ("jnp.diagonal(x, -1, 2, 0)", "np.diagonal(x, -1, 2, 0)", ("float32", "int32")),
    ("jnp.triu(x, -1)", "np.triu(x, -1)", ("float32", "bool")),
    ("jnp.einsum('ijk,kj->ik', x, y[0].T)", "np.einsum('ijk,kj->ik', x, y[0].T)", ("float32", "int32")),
    ("jnp.tensordot(x, y, ((0, 2), (0, 2)))", "np.tensordot(x, y, ((0, 2), (0, 2)))", ("float32",)),
    ("jnp.kron(x[0], y[1])", "np.kron(x[0], y[1])", ("float32", "int32")),
    ("jnp.convolve(x.ravel(), y[0, 0])", "np.convolve(x.ravel(), y[0, 0])", ("float32",)),
    ("jnp.diff(x, n=2, axis=1)", "np.diff(x, n=2, axis=1)", ("float32", "int32", "bool")),
    ("jnp.cross(x, y)", "np.cross(x, y)", ("float32", "int32")),
    ("jnp.isclose(x, y, rtol=0.5)", "np.isclose(x, y, rtol=0.5)", ("float32",)),
]


def _np_input(dtype, rng, shape=(3, 4, 3)):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.uniform(size=shape) < 0.5
    if dt.kind == "u":
        return rng.integers(1, 12, size=shape).astype(dt)
    if dt.kind == "i":
        return rng.integers(-9, 10, size=shape).astype(dt)
    return rng.normal(size=shape).astype(dt)


@pytest.mark.parametrize("case", [(j, n, d) for j, n, ds in _NP_CASES for d in ds], ids=lambda c: f"{c[0]}-{c[2]}")
def test_vs_numpy(case):
    jexpr, nexpr, dtype = case
    rng = np.random.default_rng(len(jexpr))
    x, y = _np_input(dtype, rng), _np_input(dtype, rng)
    want = eval(nexpr, {"np": np, "x": x, "y": y})  # noqa: S307
    got = eval(jexpr, {"jnp": jnp, "x": jnp.asarray(x), "y": jnp.asarray(y)})  # noqa: S307
    want = np.asarray(want)
    got_np = np.asarray(got)
    assert got_np.shape == want.shape
    if want.dtype.kind in "iub":
        np.testing.assert_array_equal(got_np, want)
    else:
        tol = 2e-3 if want.dtype == np.float16 else 2e-5   # numpy computes small ints in float16
        np.testing.assert_allclose(got_np, want, rtol=tol, atol=tol)


# ---------------------------------------------------------------- transformations

def _float_positions(args):
    return [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]


def _closed_over(rec, args):
    """The record's function of its float array arguments only, the rest held fixed."""
    fn = eval(rec.fn, {"jnp": jnp})  # noqa: S307
    pos = _float_positions(args)
    fixed = _to_numjax(args)

    def f(*floats):
        full = list(fixed)
        for p, v in zip(pos, floats):
            full[p] = v
        out = fn(*full)
        return out
    return f, [jnp.asarray(args[p]) for p in pos]


@pytest.mark.parametrize("rec", [r for r in RECORDS if r.grad], ids=lambda r: r.name)
def test_grads(rec):
    f, floats = _closed_over(rec, make_args(rec))
    check_grads(f, floats, order=1, modes=("fwd", "rev"), atol=5e-2, rtol=5e-2)


def _vmap_inputs(rec):
    args = make_args(rec)
    rng = np.random.default_rng(7)
    first = args[0]
    batch = np.stack([first, first[::-1] if first.ndim else first * 2, rng.permutation(first.ravel()).reshape(first.shape)])
    return args, batch


@pytest.mark.parametrize("rec", [r for r in RECORDS if r.vmap], ids=lambda r: r.name)
def test_vmap(rec):
    fn = eval(rec.fn, {"jnp": jnp})  # noqa: S307
    args, batch = _vmap_inputs(rec)
    rest = _to_numjax(args[1:])
    got = jax.vmap(lambda x: fn(x, *rest))(jnp.asarray(batch))
    loop = [fn(jnp.asarray(b), *rest) for b in batch]
    got_leaves = jax.tree_util.tree_leaves(got)
    loop_leaves = [jax.tree_util.tree_leaves(o) for o in loop]
    assert len(got_leaves) == len(loop_leaves[0])
    for k, g in enumerate(got_leaves):
        want = np.stack([np.asarray(ls[k]) for ls in loop_leaves])
        assert g.dtype == loop_leaves[0][k].dtype
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5, atol=1e-6)


_JIT_DEFAULT = {"logaddexp", "sum_axes", "pad_constant", "einsum_matmul", "diagonal"}


def _jit_params():
    out = []
    for r in RECORDS:
        if not r.jit:
            continue
        marks = () if r.name in _JIT_DEFAULT else (pytest.mark.slow,)
        out.append(pytest.param(r, marks=marks, id=r.name))
    return out


@pytest.mark.jit
@pytest.mark.parametrize("rec", _jit_params())
def test_jit(rec):
    fn = eval(rec.fn, {"jnp": jnp})  # noqa: S307
    args = _to_numjax(make_args(rec))
    eager = fn(*args)
    jitted = jit_compiled(fn, *args)
    for j, e in zip(jax.tree_util.tree_leaves(jitted), jax.tree_util.tree_leaves(eager)):
        assert (j.dtype, j.weak_type, j.shape) == (e.dtype, e.weak_type, e.shape)
        np.testing.assert_allclose(np.asarray(j), np.asarray(e), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- specific behaviours

def test_where_one_argument_needs_size_under_jit():
    x = jnp.array([0, 3, 0, 5])
    (idx,) = jnp.where(x)
    np.testing.assert_array_equal(np.asarray(idx), [1, 3])
    (padded,) = jax.jit(lambda v: jnp.where(v, size=3, fill_value=-1))(x)
    np.testing.assert_array_equal(np.asarray(padded), [1, 3, -1])


def test_einsum_path_is_optimal_for_a_chain():
    a, b, c = np.ones((10, 100)), np.ones((100, 5)), np.ones((5, 50))
    path, _ = jnp.einsum_path("ij,jk,kl->il", a, b, c)
    # (a @ b) first costs 10*100*5, then 10*5*50; the other order costs 100*5*50 + 10*100*50.
    assert path == [(0, 1), (0, 1)]
    path, _ = jnp.einsum_path("ij,jk,kl->il", np.ones((100, 5)), np.ones((5, 100)), np.ones((100, 2)))
    assert path == [(1, 2), (0, 1)]


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="does not have an identity"):
        jnp.max(jnp.ones(3), where=jnp.ones(3) > 0)
    with pytest.raises(ValueError, match="equal division"):
        jnp.split(jnp.ones(5), 2)
    with pytest.raises(NotImplementedError, match="inplace=False"):
        jnp.fill_diagonal(jnp.ones((2, 2)), 1.0)
    with pytest.raises(NotImplementedError, match="Unimplemented padding mode"):   # JAX's class
        jnp.pad(jnp.ones(3), 1, mode="bogus")
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda i, j: jnp.ravel_multi_index((i, j), (3, 4)))(jnp.array([0]), jnp.array([1]))


def test_array_methods():
    x = jnp.arange(6.0).reshape(2, 3)
    assert float(x.sum(axis=(0, 1), where=x > 1)) == 14.0
    np.testing.assert_array_equal(np.asarray(x.T), np.arange(6.0).reshape(2, 3).T)
    assert float(x.trace()) == 4.0
    np.testing.assert_array_equal(np.asarray(x.diagonal()), [0.0, 4.0])
    np.testing.assert_array_equal(np.asarray(x.ptp(axis=1)), [2.0, 2.0])
    np.testing.assert_array_equal(np.asarray(x.repeat(2, axis=0)), np.repeat(np.arange(6.0).reshape(2, 3), 2, 0))
    np.testing.assert_array_equal(np.asarray(x.imag), np.zeros((2, 3)))
    assert x.view(jnp.int32).dtype == np.int32
    assert x.flatten().shape == (6,)
    assert x.std(ddof=1).dtype == np.float32
    assert jax.grad(lambda v: v.mean(where=v > 2.0))(x).shape == (2, 3)


def test_ufunc_and_vectorize():
    add = jnp.frompyfunc(lambda a, b: a + b, 2, 1)
    np.testing.assert_array_equal(np.asarray(add.outer(jnp.arange(3), jnp.arange(2))),
                                  np.add.outer(np.arange(3), np.arange(2)))
    assert int(add.reduce(jnp.arange(5))) == 10
    np.testing.assert_array_equal(np.asarray(add.accumulate(jnp.arange(4))), [0, 1, 3, 6])
    f = jnp.vectorize(lambda a, b, *, scale: a * scale + b, excluded={"scale"})
    np.testing.assert_allclose(np.asarray(f(jnp.ones((2, 3)), jnp.arange(3.0), scale=2.0)),
                               np.ones((2, 3)) * 2 + np.arange(3.0))

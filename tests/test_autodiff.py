"""Automatic differentiation: rules, identities, seeds, composition, custom rules, errors.

1. ``check_grads`` (forward and reverse, to second order) over every differentiable
   operation of the shared op table (``tests/op_table.py``) plus a compact table of
   compositions the op table does not hold (traced-int indexing, clamp, erf, ...).
2. Transpose identities ``<T(ct), x> == <ct, L(x)>`` for every linear primitive, with
   ``numjax.linear_transpose``.
3. The seed tutorials' values, as real JAX 0.10.2 prints them (committed as data here).
4. Composition: jit/grad in both orders, jacfwd(jacrev), hessian, reusable and jittable
   pullbacks, has_aux, pytrees, Jacobian structures.
5. custom_jvp / custom_vjp / checkpoint.
6. Error messages, as JAX's.
7. ``jit(grad(loss))`` of an MLP is one generated Numba function.

Expected values were obtained from real JAX 0.10.2 (CPU, x64 disabled) and are data here.
"""
import re

import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax import lax
from numjax.errors import TracerBoolConversionError
from numjax.lax.elementwise import add_any_p
from numjax.test_util import check_grads

from op_table import iter_cases as _iter_cases


def _f32(x):
    return jnp.asarray(np.asarray(x, np.float32))


def _np(x):
    return np.asarray(x)


# ================================================================ 1. check_grads sweep

# Records whose inputs sit on discontinuities (round-half inputs, floor_divide jumps) or
# whose outputs are float16 (central differences in float16 are meaningless at eps=1e-3).
_NOT_SMOOTH = ("round", "rint", "around", "floor_divide", "float16")


def _table_cases():
    out = []
    for case in _iter_cases():
        if case.record.nargs == 0 or "float32" not in case.dtypes:
            continue
        if not all(d in ("float32", "int32", "uint8", "bool") for d in case.dtypes):
            continue
        if any(s in case.record.name for s in _NOT_SMOOTH):
            continue
        expected = case.expected          # (result dtype, weak type) as JAX gives it
        if expected is not None and expected[0] != "float32":
            continue                      # integer/bool results: nothing to differentiate
        out.append(case)
    return out


_TABLE_CASES = _table_cases()


def _float_args_only(fn, args, dtypes):
    """``fn`` as a function of its float32 arguments; the others are closed over."""
    float_pos = [i for i, d in enumerate(dtypes) if d == "float32"]
    fixed = {i: jnp.asarray(a) for i, a in enumerate(args) if i not in float_pos}

    def f(*float_args):
        it = iter(float_args)
        return fn(*[fixed[i] if i in fixed else next(it) for i in range(len(dtypes))])
    return f, [jnp.asarray(args[i]) for i in float_pos]


def test_op_table_is_used():
    assert len(_TABLE_CASES) > 300


@pytest.mark.parametrize("case", _TABLE_CASES, ids=str)
def test_check_grads_op_table(case):
    f, args = _float_args_only(case.fn, case.make_args(), case.dtypes)
    out = f(*args)
    if any(np.asarray(o).dtype != np.float32 for o in jax.tree_util.tree_leaves(out)):
        pytest.skip("output is not float32 (not differentiable here)")
    check_grads(f, args, order=2)


_RNG = np.random.default_rng(0)


def _r(*shape, lo=-2.0, hi=2.0):
    return _f32(_RNG.uniform(lo, hi, shape))


def _pos(*shape):
    return _r(*shape, lo=0.5, hi=3.0)


_I2 = jnp.asarray(2, jnp.int32)

# name -> (function, args).  Inputs are in each function's smooth domain.
EXTRA_GRAD_CASES = {
    "pow_xy": (lambda x, y: x ** y, (_pos(3), _r(3))),
    "pow_const_exp": (lambda x: x ** 2.5, (_pos(3),)),
    "jnp.power_int": (lambda x: jnp.power(x, 3), (_r(3),)),
    "integer_pow_neg": (lambda x: lax.integer_pow(x, -3), (_pos(3),)),
    "maximum_scalar": (lambda x: jnp.maximum(x, 0.3), (_r(5),)),
    "minimum_bcast": (jnp.minimum, (_r(3, 1), _r(1, 4))),
    "where": (lambda x, y: jnp.where(x > 0, x, y), (_r(2, 3), _r(2, 3))),
    "where_scalar": (lambda x: jnp.where(x > 0, x, 0.0), (_r(2, 3),)),
    "where_bcast": (lambda x, y: jnp.where(x > 0, x, y), (_r(3, 1), _r(1, 4))),
    "select_n_bool": (lambda p, a, b: lax.select_n(p > 0, a, b), (_r(5), _r(5), _r(5))),
    "select_n_int": (lambda a, b, c: lax.select_n(jnp.asarray([0, 2, 1, 2], jnp.int32), a, b, c),
                     (_r(4), _r(4), _r(4))),
    "abs": (jnp.abs, (_r(5),)),
    "sqrt": (jnp.sqrt, (_pos(4),)),
    "rsqrt": (lax.rsqrt, (_pos(4),)),
    "cbrt": (jnp.cbrt, (_pos(4),)),
    "logistic": (lax.logistic, (_r(4),)),
    "tanh": (jnp.tanh, (_r(4),)),
    "erf": (lax.erf, (_r(4),)),
    "erf_inv": (lax.erf_inv, (_r(4, lo=-0.8, hi=0.8),)),
    "atan2": (jnp.arctan2, (_r(4), _pos(4))),
    "lax.atan2": (lax.atan2, (_pos(4), _r(4))),
    "rem": (lax.rem, (_f32([2.3, -3.7, 5.1, 0.4]), _f32([1.5, 1.1, -2.0, 3.0]))),
    "jnp.remainder": (jnp.remainder, (_f32([2.3, -3.7, 5.1, 0.4]), _f32([1.5, 1.1, -2.0, 3.0]))),
    "clamp": (lax.clamp, (_r(6, lo=-3, hi=-1), _r(6), _r(6, lo=1, hi=3))),
    "clamp_scalar_bounds": (lambda x: lax.clamp(-1.0, x, 1.0), (_r(6),)),
    "clip": (lambda x: jnp.clip(x, -1, 1), (_r(6),)),
    "exp2": (jnp.exp2, (_r(3),)),
    "log2": (jnp.log2, (_pos(3),)),
    "arcsinh": (jnp.arcsinh, (_r(3),)),
    "arccosh": (jnp.arccosh, (_r(3, lo=1.5, hi=3),)),
    "arctanh": (jnp.arctanh, (_r(3, lo=-0.8, hi=0.8),)),
    "arcsin": (jnp.arcsin, (_r(3, lo=-0.8, hi=0.8),)),
    "arccos": (jnp.arccos, (_r(3, lo=-0.8, hi=0.8),)),
    "reciprocal": (jnp.reciprocal, (_pos(3),)),
    "mean_axis": (lambda x: jnp.mean(x, axis=(0,)), (_r(3, 4),)),
    "var": (jnp.var, (_r(3, 4),)),
    "std": (jnp.std, (_r(3, 4),)),
    "min_keepdims": (lambda x: jnp.min(x, axis=1, keepdims=True), (_r(3, 4),)),
    "prod_axis": (lambda x: jnp.prod(x, axis=1), (_r(3, 4),)),
    "prod_with_zero": (jnp.prod, (_f32([0.0, 1.5, -2.0, 0.7]),)),
    "cumsum_rev": (lambda x: lax.cumsum(x, 0, reverse=True), (_r(3, 4),)),
    "cumprod_rev": (lambda x: lax.cumprod(x, 1, reverse=True), (_r(3, 4),)),
    "cumprod_odd": (lambda x: jnp.cumprod(x), (_r(7),)),
    "cummax": (lambda x: lax.cummax(x, 1), (_r(3, 5),)),
    "cummin_rev": (lambda x: lax.cummin(x, 0, reverse=True), (_r(5, 2),)),
    "broadcast_to": (lambda x: jnp.broadcast_to(x, (2, 3, 4)), (_r(1, 4),)),
    "stack": (lambda x, y: jnp.stack([x, y]), (_r(2, 3), _r(2, 3))),
    "concat_axis1": (lambda x, y: jnp.concatenate([x, y, x], axis=1), (_r(2, 3), _r(2, 2))),
    "slice_step": (lambda x: x[1:3, ::2], (_r(4, 5),)),
    "slice_reverse": (lambda x: x[::-1, :], (_r(4, 5),)),
    "index_int_none": (lambda x: x[None, :, None, 1], (_r(4, 5),)),
    "jit_traced_index": (jax.jit(lambda x, i: x[i]), (_r(5, 3), _I2)),
    "jit_traced_index_slice": (jax.jit(lambda x, i: x[i, 1:]), (_r(5, 3), _I2)),
    "jit_traced_negative_index": (jax.jit(lambda x, i: x[-i]), (_r(5, 3), _I2)),
    "dynamic_slice_traced": (jax.jit(lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 3))),
                             (_r(5, 6), _I2)),
    "dynamic_index_in_dim": (lambda x: lax.dynamic_index_in_dim(x, _I2, 1, keepdims=False),
                             (_r(3, 4),)),
    "dynamic_update_slice_traced": (
        jax.jit(lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 1))), (_r(4, 5), _r(2, 2), _I2)),
    "pad_interior_negative": (lambda x, v: lax.pad(x, v, ((1, -1, 2), (-1, 2, 1))), (_r(3, 4), _r())),
    "rev_multi": (lambda x: lax.rev(x, (0, 2)), (_r(2, 3, 2),)),
    "dot_mv": (jnp.dot, (_r(3, 4), _r(4))),
    "dot_vv": (jnp.dot, (_r(4), _r(4))),
    "matmul_batched": (jnp.matmul, (_r(2, 3, 4), _r(2, 4, 5))),
    "matmul_broadcast_batch": (jnp.matmul, (_r(2, 1, 2, 3), _r(5, 3, 4))),
    "matmul_vec_batch": (lambda a, b: a @ b, (_r(4), _r(2, 4, 3))),
    "dot_general_batch_middle": (
        lambda x, y: lax.dot_general(x, y, (((1,), (2,)), ((2,), (0,)))), (_r(3, 4, 2), _r(2, 5, 4))),
    "vdot": (jnp.vdot, (_r(3), _r(3))),
    "outer": (jnp.outer, (_r(3), _r(2))),
    "inner": (jnp.inner, (_r(2, 3), _r(4, 3))),
    "convert_f16_to_f32": (lambda x: lax.convert_element_type(x, jnp.float32) ** 2,
                           (jnp.asarray([0.5, 1.25, -2.0], jnp.float16),)),
    "convert_to_int_is_constant": (lambda x: x * lax.convert_element_type(x, jnp.int32),
                                   (_f32([0.3, 1.4, -2.6]),)),
    "logsumexp": (lambda x: jnp.log(jnp.sum(jnp.exp(x - jnp.max(x)))) + jnp.max(x), (_r(5),)),
    "mixed": (lambda x, y: jnp.sum(jnp.sin(x) * y[:, None] / (1 + x ** 2)), (_r(3, 4), _r(3))),
    "sum_logistic": (lambda x: jnp.sum(1.0 / (1.0 + jnp.exp(-x))), (_r(3),)),
    "mlp": (lambda W, b, x: jnp.sum(jnp.tanh(x @ W + b) ** 2), (_r(3, 4), _r(4), _r(5, 3))),
}


@pytest.mark.parametrize("name", sorted(EXTRA_GRAD_CASES))
def test_check_grads_extra(name):
    f, args = EXTRA_GRAD_CASES[name]
    float_args = [a for a in args if np.asarray(a).dtype.kind == "f"]
    ints = {i: a for i, a in enumerate(args) if np.asarray(a).dtype.kind != "f"}

    def g(*fa):
        it = iter(fa)
        return f(*[ints[i] if i in ints else next(it) for i in range(len(args))])
    check_grads(g, float_args, order=2)


def test_check_grads_accepts_integer_arguments():
    # Integer arguments are passed through unperturbed (their tangents are zero).
    f = jax.jit(lambda x, i: x[i] * 2.0)
    check_grads(f, (_r(5, 3), _I2), order=2)


def test_check_grads_detects_a_wrong_rule():
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    f.defjvp(lambda p, t: (jnp.sin(p[0]), 2.0 * jnp.cos(p[0]) * t[0]))
    with pytest.raises(AssertionError):
        check_grads(f, (_r(3),), order=1, modes=("fwd",))
    with pytest.raises(ValueError, match="Unrecognized mode"):
        check_grads(jnp.sin, (_r(3),), order=1, modes=("sideways",))


def test_negative_step_slices_values_and_grads():
    x = np.arange(8, dtype=np.float32)
    for idx in (slice(None, None, -1), slice(None, None, -2), slice(-2, None, -3), slice(5, 1, -2)):
        f = lambda v, idx=idx: v[idx]  # noqa: E731
        np.testing.assert_array_equal(_np(f(_f32(x))), x[idx], err_msg=str(idx))
        ct = np.arange(1, len(x[idx]) + 1, dtype=np.float32)
        expected = np.zeros_like(x)
        expected[idx] = ct
        _, pullback = jax.vjp(f, _f32(x))
        np.testing.assert_array_equal(_np(pullback(_f32(ct))[0]), expected, err_msg=str(idx))


# ================================================================ 2. transpose identities

_M = _r(2, 3, 4)
_A = _r(4, 3)
_MASK = jnp.asarray(_RNG.random((3, 4)) > 0.5)

# name -> (linear function, example arguments)
LINEAR_CASES = {
    "add": (lax.add, (_r(3), _r(3))),
    "sub": (lax.sub, (_r(3), _r(3))),
    "add_broadcasting": (lambda x, y: x + y, (_r(3, 1), _r(4))),
    "add_any": (lambda x, y: add_any_p.bind(x, y), (_r(2, 3), _r(2, 3))),
    "neg": (lax.neg, (_r(3),)),
    "mul_by_constant": (lambda x: x * _A, (_r(4, 3),)),
    "mul_by_python_scalar": (lambda x: 2.5 * x, (_r(4, 3),)),
    "div_by_constant": (lambda x: x / _A, (_r(4, 3),)),
    "reduce_sum": (lambda x: lax.reduce_sum(x, (0, 2)), (_r(2, 3, 4),)),
    "broadcast_in_dim": (lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)), (_r(3, 4),)),
    "broadcast_in_dim_size1": (lambda x: lax.broadcast_in_dim(x, (5, 3, 4), (1, 2)), (_r(1, 4),)),
    "reshape": (lambda x: lax.reshape(x, (4, 3)), (_r(3, 4),)),
    "reshape_dimensions": (lambda x: lax.reshape(x, (12,), (1, 0)), (_r(3, 4),)),
    "transpose": (lambda x: lax.transpose(x, (2, 0, 1)), (_r(2, 3, 4),)),
    "squeeze": (lambda x: lax.squeeze(x, (0, 2)), (_r(1, 3, 1, 2),)),
    "expand_dims": (lambda x: lax.expand_dims(x, (0, 2)), (_r(3, 4),)),
    "rev": (lambda x: lax.rev(x, (0, 1)), (_r(3, 4),)),
    "concatenate": (lambda x, y: lax.concatenate([x, y, x], 1), (_r(2, 3), _r(2, 2))),
    "pad": (lambda x: lax.pad(x, jnp.float32(0), ((1, 2, 1), (-1, 1, 0))), (_r(3, 4),)),
    "pad_with_padding_value": (lambda x, v: lax.pad(x, v, ((1, 2, 1), (-1, 1, 0))), (_r(3, 4), _r())),
    "slice": (lambda x: lax.slice(x, (1, 0), (4, 6), (2, 3)), (_r(5, 6),)),
    "dynamic_slice": (lambda x: lax.dynamic_slice(x, (_I2, 1), (2, 3)), (_r(5, 6),)),
    "dynamic_update_slice": (lambda x, u: lax.dynamic_update_slice(x, u, (_I2, 1)), (_r(5, 6), _r(2, 3))),
    "cumsum": (lambda x: lax.cumsum(x, 1), (_r(3, 4),)),
    "cumsum_reverse": (lambda x: lax.cumsum(x, 0, reverse=True), (_r(3, 4),)),
    "dot_general_lhs": (lambda x: lax.dot_general(x, _M, (((2,), (1,)), ((0,), (0,)))), (_r(2, 5, 3),)),
    "dot_general_rhs": (lambda y: lax.dot_general(_M, y, (((1,), (0,)), ((), ()))), (_r(3, 5),)),
    "dot_vector_vector": (lambda x: jnp.dot(x, _A[:, 0]), (_r(4),)),
    "matmul_lhs": (lambda x: x @ _A, (_r(2, 4),)),
    "convert_f16_to_f32": (lambda x: lax.convert_element_type(x, jnp.float32),
                           (jnp.asarray(_RNG.standard_normal(3).astype(np.float16)),)),
    "select_n": (lambda a, b: lax.select_n(_MASK, a, b), (_r(3, 4), _r(3, 4))),
    "where_zero": (lambda a: jnp.where(_MASK, a, 0.0), (_r(3, 4),)),
    "mean": (lambda x: jnp.mean(x, axis=0), (_r(3, 4),)),
    "basic_indexing": (lambda x: x[1:, ::2, None], (_r(3, 5),)),
    "composite": (lambda x, y: (jnp.sum(x, 0) * 3.0 - y)[::-1], (_r(2, 3), _r(3))),
    "pytree_in_out": (lambda d: {"s": d["a"] * 2.0, "t": (d["b"][0] + d["a"][:2],)},
                      ({"a": _r(3), "b": [_r(2)]},)),
}


def _vdot(a, b):
    return sum(float(np.vdot(np.asarray(u, np.float64), np.asarray(v, np.float64)))
               for u, v in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)))


@pytest.mark.parametrize("name", sorted(LINEAR_CASES))
def test_transpose_identity(name):
    f, xs = LINEAR_CASES[name]
    out = f(*xs)
    rng = np.random.default_rng(7)
    ct = jax.tree_util.tree_map(
        lambda o: jnp.asarray(rng.standard_normal(np.shape(o)).astype(np.asarray(o).dtype)), out)
    f_t = jax.linear_transpose(f, *xs)
    t_ct = f_t(ct)
    assert isinstance(t_ct, tuple) and len(t_ct) == len(xs)
    assert jax.tree_util.tree_structure(t_ct) == jax.tree_util.tree_structure(tuple(xs))
    for a, b in zip(jax.tree_util.tree_leaves(t_ct), jax.tree_util.tree_leaves(xs)):
        assert np.shape(a) == np.shape(b)
        assert np.asarray(a).dtype == np.asarray(b).dtype
    lhs, rhs = _vdot(t_ct, xs), _vdot(ct, out)
    np.testing.assert_allclose(lhs, rhs, rtol=1e-5, atol=1e-5)


def test_linear_transpose_matches_vjp():
    f = LINEAR_CASES["dot_general_lhs"][0]
    x = LINEAR_CASES["dot_general_lhs"][1][0]
    ct = _r(2, 5, 4)
    np.testing.assert_allclose(_np(jax.linear_transpose(f, x)(ct)[0]), _np(jax.vjp(f, x)[1](ct)[0]),
                               rtol=1e-6)


# ================================================================ 3. seeds (values from JAX 0.10.2)

def test_seed_grad_sum_of_squares():
    g = jax.grad(lambda x: jnp.sum(x ** 2))(jnp.array([1., 2., 3., 4.]))
    assert str(g) == "[2. 4. 6. 8.]"
    assert g.dtype == np.float32


def sum_squared_error(x, y):
    return jnp.sum((x - y) ** 2)


_X = jnp.asarray([1.0, 2.0, 3.0, 4.0])
_Y = jnp.asarray([1.1, 2.1, 3.1, 4.1])


def test_seed_sum_squared_error():
    assert str(jax.grad(sum_squared_error)(_X, _Y)) == "[-0.20000005 -0.19999981 -0.19999981 -0.19999981]"
    dx, dy = jax.grad(sum_squared_error, argnums=(0, 1))(_X, _Y)
    assert repr(dx) == "Array([-0.20000005, -0.19999981, -0.19999981, -0.19999981], dtype=float32)"
    assert repr(dy) == "Array([0.20000005, 0.19999981, 0.19999981, 0.19999981], dtype=float32)"
    val, g = jax.value_and_grad(sum_squared_error)(_X, _Y)
    assert val == sum_squared_error(_X, _Y)
    assert str(g) == str(dx)


def test_seed_sum_squared_error_with_aux():
    def squared_error_with_aux(x, y):
        return sum_squared_error(x, y), x - y

    with pytest.raises(TypeError, match="Gradient only defined for scalar-output functions"):
        jax.grad(squared_error_with_aux)(_X, _Y)
    g, aux = jax.grad(squared_error_with_aux, has_aux=True)(_X, _Y)
    assert str(g) == "[-0.20000005 -0.19999981 -0.19999981 -0.19999981]"
    np.testing.assert_array_equal(_np(aux), _np(_X - _Y))


def test_seed_tanh_derivatives():
    # JAX 0.10.2 prints 0.070650816, -0.13621868, 0.25265405.
    d1 = jax.grad(jnp.tanh)
    d2 = jax.grad(d1)
    d3 = jax.grad(d2)
    assert str(d1(2.0)) == "0.070650816"
    assert str(d2(2.0)) == "-0.13621868"
    assert str(d3(2.0)) == "0.25265405"
    assert float(d2(2.0)) == -0.13621868193149567
    assert float(d3(2.0)) == 0.2526540458202362
    assert str(jax.jit(d3)(2.0)) == "0.25265405"


def test_seed_polynomial_derivatives():
    f = lambda x: x ** 3 + 2 * x ** 2 - 3 * x + 1  # noqa: E731
    dfdx = jax.grad(f)
    d2fdx = jax.grad(dfdx)
    d3fdx = jax.grad(d2fdx)
    d4fdx = jax.grad(d3fdx)
    assert [str(d(1.0)) for d in (dfdx, d2fdx, d3fdx, d4fdx)] == ["4.0", "10.0", "6.0", "0.0"]


def test_seed_python_control_flow():
    def f(x):
        return 3 * x ** 2 if x < 3 else -4 * x

    assert jax.grad(f)(2.0) == 12.0
    assert jax.grad(f)(4.0) == -4.0
    with pytest.raises(TracerBoolConversionError):
        jax.jit(jax.grad(f))(2.0)


def test_seed_python_control_flow_grad_of_jit_raises():
    # jit traces its function abstractly under grad too (jit is a primitive with rules).
    def f(x):
        return 3 * x ** 2 if x < 3 else -4 * x

    with pytest.raises(TracerBoolConversionError):
        jax.grad(jax.jit(f))(2.0)


def sum_logistic(x):
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


def first_finite_differences(f, x):
    eps = 1e-3
    return jnp.array([(f(x + eps * v) - f(x - eps * v)) / (2 * eps) for v in jnp.eye(len(x))])


def test_seed_sum_logistic_jit():
    # JAX 0.10.2 prints [0.25       0.19661197 0.10499357] (the tutorial: [0.25 0.19661197 0.10499357]).
    x_small = jnp.arange(3.)
    assert str(jax.jit(jax.grad(sum_logistic))(x_small)) == "[0.25       0.19661197 0.10499357]"
    assert str(first_finite_differences(sum_logistic, x_small)) == "[0.24998187 0.1964569  0.10502338]"


def test_seed_sum_logistic_eager_close():
    g = jax.grad(sum_logistic)(jnp.arange(3.))
    np.testing.assert_allclose(_np(g), [0.25, 0.19661197066307068, 0.10499357432126999], rtol=3e-7)


def test_seed_sum_logistic_eager_exact():
    # Eager float32 exp uses XLA's formula, so the eager gradient prints as JAX's does.
    assert str(jax.grad(sum_logistic)(jnp.arange(3.))) == "[0.25       0.19661197 0.10499357]"


# ---- logistic regression (vmap_and_autodiff_tutorial): W, b as the tutorial's
# jax.random.key(0) splits give them (threefry, non-partitionable: the tutorial's values).
_W = jnp.array([-0.3683878481388092, -2.275688886642456, 0.011447565630078316], dtype=jnp.float32)
_B = jnp.array(0.8535516262054443, dtype=jnp.float32)
_VEC = jnp.array([0.9672462344169617, -0.5627836585044861, 0.3791317939758301], dtype=jnp.float32)
_W_GRAD = [-0.16965585947036743, -0.8774644732475281, -1.490134596824646]   # JAX 0.10.2
_B_GRAD = -0.29227250814437866                                               # JAX 0.10.2

_INPUTS = jnp.array([[0.52, 1.12, 0.77],
                     [0.88, -1.08, 0.15],
                     [0.52, 0.06, -1.30],
                     [0.74, -2.49, 1.39]])
_TARGETS = jnp.array([True, True, False, True])


def _sigmoid(x):
    return 0.5 * (jnp.tanh(x / 2) + 1)


def _predict(W, b, inputs):
    return _sigmoid(jnp.dot(inputs, W) + b)


def logreg_loss(W, b):
    preds = _predict(W, b, _INPUTS)
    label_probs = preds * _TARGETS + (1 - preds) * (1 - _TARGETS)
    return -jnp.sum(jnp.log(label_probs))


def test_seed_logistic_regression_grads():
    W_grad = jax.grad(logreg_loss, argnums=0)(_W, _B)
    np.testing.assert_allclose(_np(W_grad), _W_GRAD, atol=1e-6)
    np.testing.assert_array_equal(_np(jax.grad(logreg_loss)(_W, _B)), _np(W_grad))
    b_grad = jax.grad(logreg_loss, 1)(_W, _B)
    np.testing.assert_allclose(float(b_grad), _B_GRAD, atol=1e-6)
    W_grad2, b_grad2 = jax.grad(logreg_loss, (0, 1))(_W, _B)
    np.testing.assert_array_equal(_np(W_grad2), _np(W_grad))
    assert float(b_grad2) == float(b_grad)
    assert W_grad.shape == (3,) and b_grad.shape == () and b_grad.dtype == np.float32


def test_seed_logistic_regression_pytree_and_value():
    def loss2(params_dict):
        return logreg_loss(params_dict["W"], params_dict["b"])

    g = jax.grad(loss2)({"W": _W, "b": _B})
    assert sorted(g) == ["W", "b"]
    np.testing.assert_allclose(_np(g["W"]), _W_GRAD, atol=1e-6)
    np.testing.assert_allclose(float(g["b"]), _B_GRAD, atol=1e-6)
    loss_value, (gW, gb) = jax.value_and_grad(logreg_loss, (0, 1))(_W, _B)
    assert str(loss_value) == "3.0519385"       # the tutorial's and JAX's "loss value 3.0519385"
    assert float(loss_value) == float(logreg_loss(_W, _B))


def test_seed_logistic_regression_numerical_checks():
    eps = 1e-4
    b_num = (logreg_loss(_W, _B + eps / 2.) - logreg_loss(_W, _B - eps / 2.)) / eps
    np.testing.assert_allclose(float(b_num), _B_GRAD, atol=5e-3)     # JAX: -0.29325485
    unitvec = _VEC / jnp.sqrt(jnp.vdot(_VEC, _VEC))
    W_num = (logreg_loss(_W + eps / 2. * unitvec, _B) - logreg_loss(_W - eps / 2. * unitvec, _B)) / eps
    W_ad = jnp.vdot(jax.grad(logreg_loss)(_W, _B), unitvec)
    np.testing.assert_allclose(float(W_ad), -0.19909117, atol=1e-6)  # JAX's W_dirderiv_autodiff
    np.testing.assert_allclose(float(W_num), float(W_ad), atol=5e-3)  # JAX: -0.2002716
    check_grads(logreg_loss, (_W, _B), order=2)


# ---- TD learning with stop_gradient (jit_vmap_random_pytree_pmap_tutorial; JAX docs' data)
def _value_fn(theta, state):
    return jnp.dot(theta, state)


_THETA = jnp.array([0.1, -0.1, 0.])
_S_TM1 = jnp.array([1., 2., -1.])
_R_T = jnp.array(1.)
_S_T = jnp.array([2., 1., 0.])


def td_loss(theta, s_tm1, r_t, s_t):
    v_tm1 = _value_fn(theta, s_tm1)
    target = r_t + _value_fn(theta, s_t)
    return (target - v_tm1) ** 2


def td_loss_with_stop_gradient(theta, s_tm1, r_t, s_t):
    v_tm1 = _value_fn(theta, s_tm1)
    target = r_t + _value_fn(theta, s_t)
    return (lax.stop_gradient(target) - v_tm1) ** 2


def test_seed_td_learning_stop_gradient():
    full = jax.grad(td_loss)(_THETA, _S_TM1, _R_T, _S_T)
    stopped = jax.grad(td_loss_with_stop_gradient)(_THETA, _S_TM1, _R_T, _S_T)
    assert str(full) == "[ 2.4 -2.4  2.4]"
    assert str(stopped) == "[-2.4 -4.8  2.4]"
    np.testing.assert_array_equal(_np(full), np.float32([2.4000000953674316, -2.4000000953674316,
                                                         2.4000000953674316]))
    np.testing.assert_array_equal(_np(stopped), np.float32([-2.4000000953674316, -4.800000190734863,
                                                            2.4000000953674316]))


def test_stop_gradient_semantics():
    assert jax.grad(lambda x: x * lax.stop_gradient(x))(3.0) == 3.0
    assert jax.jvp(lambda x: lax.stop_gradient(x) ** 2, (3.0,), (1.0,))[1] == 0.0
    g = jax.grad(lambda d: jnp.sum(lax.stop_gradient(d)["a"] * d["a"]))({"a": jnp.ones(2) * 3})
    np.testing.assert_array_equal(_np(g["a"]), [3., 3.])
    ints = lax.stop_gradient(jnp.arange(3))            # integers pass through unchanged
    assert ints.dtype == jnp.arange(3).dtype
    assert jax.hessian(lambda x: lax.stop_gradient(x) * x ** 2)(2.0) == 4.0


# ================================================================ 4. composition

def _f(x):
    return jnp.sum(jnp.sin(x) * x ** 2)


def _f_grad(x):
    x = np.asarray(x, np.float64)
    return np.cos(x) * x ** 2 + 2 * x * np.sin(x)


_XC = jnp.asarray([0.5, 1.0, 1.5])


def test_jit_of_grad_and_grad_of_jit():
    expected = _f_grad(_XC)
    for g in (jax.jit(jax.grad(_f)), jax.grad(jax.jit(_f)), jax.grad(_f)):
        np.testing.assert_allclose(_np(g(_XC)), expected, rtol=1e-6)
    # JAX 0.10.2: [0.6988212 2.2232442 3.1516438]
    assert str(jax.jit(jax.grad(_f))(_XC)) == "[0.6988212 2.2232442 3.1516438]"


def test_jacfwd_of_jacrev_and_hessian():
    g = lambda x: jnp.sin(x) * jnp.sum(x ** 3)  # noqa: E731
    x = np.asarray(_XC, np.float64)
    J = jax.jacfwd(jax.jacrev(g))(_XC)
    assert J.shape == (3, 3, 3)
    # Analytic: d2/dxj dxk [sin(xi) S], S = sum x^3.
    S, dS, d2S = np.sum(x ** 3), 3 * x ** 2, np.diag(6 * x)
    exp = np.zeros((3, 3, 3))
    for i in range(3):
        for j in range(3):
            for k in range(3):
                exp[i, j, k] = ((i == j) * (i == k) * -np.sin(x[i]) * S
                                + (i == j) * np.cos(x[i]) * dS[k] + (i == k) * np.cos(x[i]) * dS[j]
                                + np.sin(x[i]) * d2S[j, k])
    np.testing.assert_allclose(_np(J), exp, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(jax.jacrev(jax.jacfwd(g))(_XC)), exp, rtol=1e-5, atol=1e-5)
    H = jax.hessian(_f)(_XC)
    h_exp = np.diag(-np.sin(x) * x ** 2 + 4 * x * np.cos(x) + 2 * np.sin(x))
    np.testing.assert_allclose(_np(H), h_exp, rtol=1e-5, atol=1e-6)


def test_vjp_pullback_is_reusable_and_jittable():
    g = lambda x: jnp.sin(x) * jnp.sum(x ** 3)  # noqa: E731
    y, pullback = jax.vjp(g, _XC)
    np.testing.assert_array_equal(_np(y), _np(g(_XC)))
    J = np.asarray(jax.jacrev(g)(_XC), np.float64)
    cts = [jnp.ones(3), jnp.asarray([1., 2., 3.]), jnp.asarray([0., 2., 0.])]
    jitted = jax.jit(pullback)
    for ct in cts:
        (a,) = pullback(ct)
        (b,) = jitted(ct)
        np.testing.assert_allclose(_np(a), np.asarray(ct) @ J, rtol=1e-5)
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-6)
    # JAX 0.10.2 (which evaluates op by op like numjax's jit): [7.815261, 20.327278, 35.750206]
    np.testing.assert_allclose(_np(jitted(cts[1])[0]), [7.815261, 20.327278, 35.750206], rtol=1e-6)
    # The pullback is a pytree (of its residuals): it can be passed into jit.
    apply = jax.jit(lambda pb, ct: pb(ct))
    np.testing.assert_allclose(_np(apply(pullback, cts[2])[0]), _np(pullback(cts[2])[0]), rtol=1e-6)


def test_vjp_pytree_outputs_and_has_aux():
    def f(x, y):
        return {"p": x * y, "q": (jnp.sum(x), y ** 2)}

    x, y = _f32([1., 2.]), _f32([3., 4.])
    out, pullback = jax.vjp(f, x, y)
    ct = {"p": _f32([1., 1.]), "q": (_f32(1.0), _f32([0., 1.]))}
    dx, dy = pullback(ct)
    np.testing.assert_allclose(_np(dx), [4., 5.])
    np.testing.assert_allclose(_np(dy), [1., 10.])
    y2, pb2, aux = jax.vjp(lambda x: (x ** 2, x * 3), 3., has_aux=True)
    assert float(y2) == 9.0 and float(aux) == 9.0 and pb2(1.)[0] == 6.0


def test_grad_through_custom_jvp_inside_jit():
    log1pexp = _make_log1pexp()
    assert float(jax.grad(jax.jit(log1pexp))(100.)) == 1.0
    assert float(jax.grad(jax.jit(lambda x: log1pexp(x) * 2.0))(100.)) == 2.0
    np.testing.assert_allclose(float(jax.grad(jax.jit(jax.grad(log1pexp)))(3.)), 0.04517666, rtol=1e-6)
    xs = _f32([-3., 0., 3.])
    np.testing.assert_allclose(_np(jax.jit(jax.grad(lambda x: jnp.sum(log1pexp(x))))(xs)),
                               1 / (1 + np.exp(-np.asarray(xs, np.float64))), rtol=1e-6)


def test_value_and_grad_has_aux():
    def aux_f(x):
        return jnp.sum(x ** 2) / 4, {"m": x * 2}

    x = _f32([1., 2., 3.])
    (val, aux), g = jax.value_and_grad(aux_f, has_aux=True)(x)
    assert float(val) == 3.5
    np.testing.assert_array_equal(_np(aux["m"]), [2., 4., 6.])
    np.testing.assert_array_equal(_np(g), [0.5, 1., 1.5])
    g2, aux2 = jax.grad(aux_f, has_aux=True)(x)
    np.testing.assert_array_equal(_np(g2), _np(g))
    assert not isinstance(aux2["m"], jax.core.Tracer)
    (v3, a3), g3 = jax.jit(jax.value_and_grad(aux_f, has_aux=True))(x)
    assert float(v3) == 3.5 and _np(a3["m"]).tolist() == [2., 4., 6.]
    (v4, (a4, [b4])), g4 = jax.value_and_grad(lambda x: (x ** 2, (x, [x * 2])), has_aux=True)(3.)
    assert (float(v4), float(a4), float(b4), float(g4)) == (9., 3., 6., 6.)


def test_pytree_params_give_same_structure():
    params = {"w": [jnp.ones((2, 3)), (jnp.zeros(3), 2.0)], "b": jnp.asarray(1.0)}

    def loss(p):
        return jnp.sum(p["w"][0] * p["b"]) + jnp.sum(p["w"][1][0] ** 2) + p["w"][1][1] * p["b"]

    g = jax.grad(loss)(params)
    assert jax.tree_util.tree_structure(g) == jax.tree_util.tree_structure(params)
    assert float(g["b"]) == 8.0
    np.testing.assert_array_equal(_np(g["w"][0]), np.ones((2, 3)))
    np.testing.assert_array_equal(_np(g["w"][1][0]), np.zeros(3))
    assert float(g["w"][1][1]) == 1.0
    # JAX: the gradient of a weakly typed (Python scalar) leaf is weakly typed.
    assert g["w"][1][1].weak_type and g["w"][1][1].dtype == np.float32
    assert not g["w"][0].weak_type
    gj = jax.jit(jax.grad(loss))(params)
    assert jax.tree_util.tree_structure(gj) == jax.tree_util.tree_structure(params)
    grads = jax.grad(lambda l: l[0] * l[1])([2., 3.])
    assert isinstance(grads, list) and [float(v) for v in grads] == [3., 2.]
    t = jax.grad(lambda t: t[0] ** 2 + jnp.sum(t[1]))((_f32(1.5), _f32([1., 2.])))
    assert isinstance(t, tuple) and float(t[0]) == 3.0 and _np(t[1]).tolist() == [1., 1.]


def _shapes(tree):
    return jax.tree_util.tree_map(lambda v: tuple(np.shape(v)), tree)


def test_jacobians_of_pytrees_have_out_tree_by_in_tree_structure():
    def f(inp):
        a, b = inp["a"], inp["b"]
        return {"s": jnp.sum(a) * b, "v": a * b}

    inp = {"a": _f32([1., 2.]), "b": _f32(3.)}
    # Shapes as JAX 0.10.2 gives them.
    expected = {"s": {"a": (2,), "b": ()}, "v": {"a": (2, 2), "b": (2,)}}
    jf, jr = jax.jacfwd(f)(inp), jax.jacrev(f)(inp)
    assert _shapes(jf) == expected and _shapes(jr) == expected
    for a, b in zip(jax.tree_util.tree_leaves(jf), jax.tree_util.tree_leaves(jr)):
        np.testing.assert_allclose(_np(a), _np(b))
    np.testing.assert_array_equal(_np(jf["v"]["a"]), 3 * np.eye(2))
    np.testing.assert_array_equal(_np(jf["s"]["b"]), 3.0)

    def g(a, b):
        return a * b, jnp.sum(a)

    expected_args = (((3, 2, 2), (3, 2, 3, 1)), ((2,), (3, 1)))
    a, b = jnp.ones(2), jnp.ones(3)[:, None]
    assert _shapes(jax.jacrev(g, argnums=(0, 1))(a, b)) == expected_args
    assert _shapes(jax.jacfwd(g, argnums=(0, 1))(a, b)) == expected_args
    assert _shapes(jax.hessian(lambda d: jnp.sum(d["a"] ** 2) * d["b"])(inp)) == \
        {"a": {"a": (2, 2), "b": (2,)}, "b": {"a": (2,), "b": ()}}
    assert jax.jacobian is jax.jacrev or _shapes(jax.jacobian(f)(inp)) == expected
    jac, aux = jax.jacrev(lambda x: (x ** 2, x * 3), has_aux=True)(jnp.ones(2))
    np.testing.assert_array_equal(_np(jac), 2 * np.eye(2))
    np.testing.assert_array_equal(_np(aux), [3., 3.])
    jac, aux = jax.jacfwd(lambda x: (x ** 2, x * 3), has_aux=True)(jnp.ones(2))
    np.testing.assert_array_equal(_np(jac), 2 * np.eye(2))


def test_jvp_linearize_and_integer_inputs():
    y, t = jax.jvp(jnp.sin, (1.0,), (2.0,))
    np.testing.assert_allclose(float(t), 2 * np.cos(1.0), rtol=1e-6)
    y, f_jvp = jax.linearize(jnp.sin, 1.0)
    out = f_jvp(2.0)
    assert out.dtype == np.float32
    assert str(out) == "1.0806046"          # JAX 0.10.2
    # Integer inputs have zero tangents, whatever the caller passes.
    _, t = jax.jvp(lambda x, n: x * n, (jnp.ones(3), jnp.arange(3)), (jnp.ones(3), jnp.ones(3)))
    np.testing.assert_array_equal(_np(t), [0., 1., 2.])
    (g,) = jax.vjp(lambda x: x * 2, jnp.arange(3))[1](jnp.arange(3))
    np.testing.assert_array_equal(_np(g), [0., 0., 0.])
    gx, gn = jax.grad(lambda x, n: jnp.sum(x * n), argnums=(0, 1), allow_int=True)(
        jnp.ones(3), jnp.arange(3))
    np.testing.assert_array_equal(_np(gx), [0., 1., 2.])
    np.testing.assert_array_equal(_np(gn), [0., 0., 0.])


def test_eval_shape_of_grad():
    s = jax.eval_shape(jax.grad(lambda x: jnp.sum(x ** 2)), jnp.ones((2, 3)))
    assert s.shape == (2, 3) and s.dtype == np.float32


def test_jit_grad_of_vector_dot():
    # The transpose of a full contraction has a rank-0 operand.
    x = _f32([3., 4., 0.])
    for f in (lambda x: jnp.dot(x, x), lambda x: jnp.vdot(x, x), lambda x: x @ x):
        np.testing.assert_array_equal(_np(jax.grad(f)(x)), [6., 8., 0.])
    np.testing.assert_array_equal(_np(jax.jit(jax.grad(lambda x: jnp.dot(x, x)))(x)), [6., 8., 0.])
    np.testing.assert_array_equal(_np(jax.jit(jax.hessian(lambda x: x @ x))(x)), 2 * np.eye(3))


def test_cumulative_derivatives_match_jax():
    # Values from JAX 0.10.2 (its rules differentiate a parallel prefix scan).
    x = _f32([[2., 0., 3., 1.5, -1.], [1., 2., 0., 0., 4.]])
    np.testing.assert_array_equal(_np(jax.grad(lambda x: jnp.sum(jnp.cumprod(x, axis=1)))(x)),
                                  [[1., 8., 0., 0., 0.], [3., 1., 2., 0., 0.]])
    h = jax.hessian(lambda x: jnp.sum(lax.cumprod(x, 0, reverse=True)))(x[0])
    np.testing.assert_array_equal(_np(h), [[0., -4.5, 0., 0., 0.], [-4.5, 0., -4.5, -9., 13.5],
                                           [0., -4.5, 0., -1., 1.5], [0., -9., -1., 0., 4.],
                                           [0., 13.5, 1.5, 4., 0.]])
    y = _f32([[1., 3., 2., 5.], [4., 1., 4., 0.]])            # with a tie in row 1
    np.testing.assert_array_equal(_np(jax.grad(lambda x: jnp.sum(lax.cummax(x, axis=1) ** 2))(y)),
                                  [[2., 12., 0., 10.], [24., 0., 8., 0.]])
    np.testing.assert_array_equal(
        _np(jax.grad(lambda x: jnp.sum(lax.cummin(x, axis=1, reverse=True) ** 2))(y)),
        [[2., 0., 8., 10.], [0., 0., 0., 0.]])
    np.testing.assert_array_equal(_np(jax.grad(lambda x: jnp.sum(jnp.cumsum(x, axis=1) ** 2))(y)),
                                  [[44., 42., 34., 22.], [54., 46., 36., 18.]])


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_nonsmooth_points_match_jax():
    # JAX 0.10.2's conventions at kinks and ties.
    assert float(jax.grad(jnp.abs)(0.)) == 1.0
    np.testing.assert_array_equal(_np(jax.grad(jnp.max)(_f32([1., 3., 3.]))), [0., 0.5, 0.5])
    np.testing.assert_array_equal(_np(jax.grad(lambda x: jnp.sum(jnp.maximum(x, 1.)))(_f32([1., 3., 0.]))),
                                  [0.5, 1., 0.])
    np.testing.assert_array_equal(
        _np(jax.grad(lambda x: jnp.sum(jnp.clip(x, -1., 1.)))(_f32([-2., -1., 0., 1., 2.]))),
        [0., 0.5, 1., 0.5, 0.])               # ties at the bounds split the tangent
    assert float(jax.grad(lambda y: 0. ** y)(2.)) == 0.0
    assert np.isnan(float(jax.grad(lambda x: x ** 0.)(0.)))       # JAX: nan (0 * 0**-1)
    assert np.isinf(float(jax.grad(jnp.sqrt)(0.)))
    g = jax.grad(lambda lo, x, hi: lax.clamp(lo, x, hi), argnums=(0, 1, 2))
    assert [float(v) for v in g(0., -1., 1.)] == [1., 0., 0.]
    assert [float(v) for v in g(0., 0.5, 1.)] == [0., 1., 0.]
    assert [float(v) for v in g(0., 2., 1.)] == [0., 0., 1.]
    np.testing.assert_array_equal(_np(jax.grad(lambda x: jnp.prod(x))(_f32([0., 2., 3.]))), [6., 0., 0.])


# ================================================================ 5. custom rules

def _make_log1pexp():
    @jax.custom_jvp
    def log1pexp(x):
        return jnp.log(1. + jnp.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        x, = primals
        x_dot, = tangents
        ans = log1pexp(x)
        ans_dot = (1 - 1 / (1 + jnp.exp(x))) * x_dot
        return ans, ans_dot
    return log1pexp


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_custom_jvp_log1pexp_is_stable():
    naive = lambda x: jnp.log(1. + jnp.exp(x))  # noqa: E731
    assert np.isnan(float(jax.grad(naive)(100.)))
    log1pexp = _make_log1pexp()
    assert float(jax.grad(log1pexp)(100.)) == 1.0
    assert float(jax.jit(jax.grad(log1pexp))(100.)) == 1.0
    assert float(jax.grad(jax.grad(log1pexp))(0.)) == 0.25
    y, t = jax.jvp(log1pexp, (3.,), (1.,))
    np.testing.assert_allclose(float(t), 1 / (1 + np.exp(-3.)), rtol=1e-6)
    check_grads(log1pexp, (_f32([-2., 0.5, 3.]),), order=2)


def test_custom_jvp_defjvps_and_nondiff_argnums():
    @jax.custom_jvp
    def f(x, y):
        return jnp.sin(x) * y

    f.defjvps(lambda x_dot, primal_out, x, y: jnp.cos(x) * x_dot * y,
              lambda y_dot, primal_out, x, y: jnp.sin(x) * y_dot)
    # JAX 0.10.2 values.
    np.testing.assert_allclose(float(jax.grad(f)(2., 3.)), -1.2484405, rtol=1e-6)
    np.testing.assert_allclose(float(jax.grad(f, 1)(2., 3.)), 0.9092974, rtol=1e-6)
    gx, gy = jax.jit(jax.grad(f, (0, 1)))(2., 3.)
    np.testing.assert_allclose([float(gx), float(gy)], [-1.2484405, 0.9092974], rtol=1e-6)
    np.testing.assert_allclose(float(jax.hessian(f)(2., 3.)), -2.7278922, rtol=1e-6)

    from functools import partial

    @partial(jax.custom_jvp, nondiff_argnums=(0,))
    def app(fn, x):
        return fn(x)

    @app.defjvp
    def app_jvp(fn, primals, tangents):
        x, = primals
        t, = tangents
        return app(fn, x), 7. * t

    assert float(jax.grad(lambda x: app(jnp.sin, x))(0.3)) == 7.0
    np.testing.assert_allclose(float(app(jnp.sin, 0.3)), np.sin(0.3), rtol=1e-6)


def test_custom_vjp_clip_gradient():
    @jax.custom_vjp
    def clip_gradient(lo, hi, x):
        return x  # identity function

    def clip_gradient_fwd(lo, hi, x):
        return x, (lo, hi)  # save bounds as residuals

    def clip_gradient_bwd(res, g):
        lo, hi = res
        return (None, None, jnp.clip(g, lo, hi))  # None: zero cotangents for lo and hi

    clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)

    def clip_sin(x):
        x = clip_gradient(-0.75, 0.75, x)
        return jnp.sin(x)

    t = jnp.linspace(0, 10, 50)
    np.testing.assert_allclose(_np(clip_sin(t)), np.sin(_np(t)), rtol=1e-6, atol=1e-6)
    g = jax.grad(lambda t: jnp.sum(clip_sin(t)))(t)
    np.testing.assert_allclose(_np(g), np.clip(np.cos(_np(t)), -0.75, 0.75), rtol=1e-6, atol=1e-6)
    gj = jax.jit(jax.grad(lambda t: jnp.sum(clip_sin(t))))(t)
    np.testing.assert_allclose(_np(gj), _np(g), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(float(jax.grad(lambda x: clip_gradient(-0.75, 0.75, jnp.sin(x) * 3.))(0.1)),
                               2.2387595, rtol=1e-6)          # JAX 0.10.2


def test_custom_vjp_nondiff_argnums_and_pytrees():
    from functools import partial

    @partial(jax.custom_vjp, nondiff_argnums=(0, 1))
    def clip_gradient(lo, hi, x):
        return x

    def fwd(lo, hi, x):
        return x, None

    def bwd(lo, hi, _, g):
        return (jnp.clip(g, lo, hi),)

    clip_gradient.defvjp(fwd, bwd)
    assert float(jax.grad(lambda x: 3. * clip_gradient(-0.5, 0.5, x))(1.)) == 0.5
    assert float(jax.grad(lambda x: 0.2 * clip_gradient(-0.5, 0.5, x))(1.)) == pytest.approx(0.2)

    @partial(jax.custom_vjp, nondiff_argnums=(0,))
    def app(fn, x):
        return fn(x)

    app.defvjp(lambda fn, x: (fn(x), x), lambda fn, x, g: (5 * g * jnp.cos(x),))
    np.testing.assert_allclose(float(jax.grad(lambda x: app(jnp.sin, x))(0.3)), 4.7766824, rtol=1e-6)

    @jax.custom_vjp
    def g(x, y):
        return x * y, jnp.sin(x)

    def g_fwd(x, y):
        return g(x, y), {"x": x, "y": y, "c": jnp.cos(x)}

    def g_bwd(res, cts):
        a, b = cts
        return (a * res["y"] + b * res["c"], a * res["x"])

    g.defvjp(g_fwd, g_bwd)
    x, y = jnp.ones(2), jnp.full(2, 2.)
    gx, gy = jax.grad(lambda x, y: jnp.sum(g(x, y)[0] + g(x, y)[1]), (0, 1))(x, y)
    np.testing.assert_allclose(_np(gx), [2.5403023, 2.5403023], rtol=1e-6)
    np.testing.assert_allclose(_np(gy), [1., 1.])
    gx, gy = jax.grad(lambda x, y: jnp.sum(g(x, y)[0] * 2), (0, 1))(x, y)
    np.testing.assert_allclose(_np(gx), [4., 4.])
    np.testing.assert_allclose(_np(gy), [2., 2.])
    np.testing.assert_allclose(_np(jax.grad(lambda y: jnp.sum(g(jnp.ones(2), y)[0]))(y)), [1., 1.])


def test_custom_vjp_under_jvp_raises():
    @jax.custom_vjp
    def f(x):
        return jnp.sin(x)

    f.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (c * g,))
    np.testing.assert_allclose(float(jax.grad(f)(0.5)), np.cos(0.5), rtol=1e-6)
    with pytest.raises(TypeError, match=re.escape(
            "can't apply forward-mode autodiff (jvp) to a custom_vjp function.")):
        jax.jvp(f, (1.,), (1.,))
    with pytest.raises(TypeError, match="custom_vjp"):
        jax.jacfwd(f)(jnp.ones(2))


def test_checkpoint_same_values_and_recomputes():
    def f(x):
        y = jnp.sin(x)
        z = jnp.sin(y)
        return jnp.sum(z * y)

    x = _f32([0.1, 0.2, 0.3])
    v1, g1 = jax.value_and_grad(f)(x)
    v2, g2 = jax.value_and_grad(jax.checkpoint(f))(x)
    assert float(v1) == float(v2)
    np.testing.assert_allclose(_np(g2), _np(g1), rtol=1e-6)
    np.testing.assert_allclose(_np(g1), [0.1980098, 0.38431013, 0.5483127], rtol=1e-6)  # JAX

    def n_sin(fn):
        text = str(jax.make_jaxpr(jax.value_and_grad(fn))(x))
        return len(re.findall(r"= sin ", text))

    assert n_sin(f) == 2                 # forward only; the backward pass reads saved values
    assert n_sin(jax.checkpoint(f)) == 4  # as JAX: the backward pass recomputes both sins
    assert jax.remat is jax.checkpoint
    W = jnp.ones((2, 3)) * 0.1

    def h(W, x):
        return jnp.sum(jnp.tanh(jax.checkpoint(lambda W, x: jnp.sin(W @ x))(W, x)))

    np.testing.assert_allclose(_np(jax.jit(jax.grad(h))(W, x)), _np(jax.grad(h)(W, x)), rtol=1e-6)
    np.testing.assert_allclose(_np(jax.grad(h)(W, x)), [[0.099462, 0.19892399, 0.29838598]] * 2,
                               rtol=1e-6)
    np.testing.assert_allclose(float(jax.hessian(jax.checkpoint(lambda x: jnp.sin(jnp.sin(x))))(2.)),
                               -0.6952318, rtol=1e-6)
    assert float(jax.grad(jax.checkpoint(lambda x, n: x ** n, static_argnums=(1,)))(2., 3)) == 12.0


# ================================================================ 6. errors (JAX's messages)

def test_error_non_scalar_output():
    with pytest.raises(TypeError, match=re.escape(
            "Gradient only defined for scalar-output functions. Output had shape: (3,).")):
        jax.grad(lambda x: x * 2)(jnp.ones(3))


def test_error_integer_input():
    with pytest.raises(TypeError, match=re.escape(
            "grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
            "np.inexact), but got int32. If you want to use Boolean- or integer-valued inputs, use "
            "vjp or set allow_int to True.")):
        jax.grad(lambda x: x * 2.)(3)
    with pytest.raises(TypeError, match=re.escape(
            "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), "
            "but got int32. For holomorphic differentiation, pass holomorphic=True. For "
            "differentiation of non-holomorphic functions involving complex inputs or integer "
            "inputs, use jax.jvp directly.")):
        jax.jacfwd(lambda x: x * 2.)(jnp.arange(3))


def test_error_integer_output():
    with pytest.raises(TypeError, match=re.escape(
            "grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
            "but got int32. For differentiation of functions with integer outputs, use jax.vjp "
            "directly.")):
        jax.grad(lambda x: jnp.int32(3))(3.)


def test_error_has_aux_not_a_pair():
    msg = "expected function with aux output to return a two-element tuple, but got type"
    with pytest.raises(TypeError, match=msg):
        jax.grad(lambda x: x * 2., has_aux=True)(3.)
    with pytest.raises(TypeError, match=msg + " <class 'tuple'>"):
        jax.grad(lambda x: (x, x, x), has_aux=True)(3.)


def test_error_argnums_out_of_range():
    with pytest.raises(TypeError, match=re.escape(
            "differentiating with respect to argnums=2 requires at least 3 positional arguments to "
            "be passed by the caller, but got only 2 positional arguments.")):
        jax.grad(lambda x, y: x * y, argnums=2)(3., 4.)
    with pytest.raises(TypeError, match=re.escape(
            "differentiating with respect to argnums=(0, 5) requires at least 6 positional arguments "
            "to be passed by the caller, but got only 2 positional arguments.")):
        jax.grad(lambda x, y: x * y, argnums=(0, 5))(3., 4.)


def test_error_jvp_arguments():
    with pytest.raises(ValueError, match=re.escape(
            "jvp called with different primal and tangent shapes;Got primal shape (3,) and tangent "
            "shape as (2,)")):
        jax.jvp(jnp.sin, (jnp.ones(3),), (jnp.ones(2),))
    with pytest.raises(TypeError, match="primal and tangent arguments to jax.jvp must be tuples or lists"):
        jax.jvp(jnp.sin, jnp.ones(3), jnp.ones(3))


def test_error_pullback_cotangent_shape():
    _, pullback = jax.vjp(jnp.sin, jnp.ones(3))
    with pytest.raises(ValueError, match=re.escape(
            "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got float32[2], "
            "but expected float32[3] because the corresponding output of the differentiated "
            "function had JAX type float32[3]")):
        pullback(jnp.ones(2))


# ================================================================ 7. one Numba function

def test_jit_grad_mlp_is_one_generated_function():
    rng = np.random.default_rng(0)
    params = [(_f32(rng.normal(size=(4, 8))), jnp.zeros(8)),
              (_f32(rng.normal(size=(8, 8))), jnp.zeros(8)),
              (_f32(rng.normal(size=(8, 3))), jnp.zeros(3))]

    def predict(params, x):
        for W, b in params[:-1]:
            x = jnp.tanh(x @ W + b)
        W, b = params[-1]
        return x @ W + b

    def loss(params, x, y):
        return jnp.mean((predict(params, x) - y) ** 2)

    x, y = _f32(rng.normal(size=(5, 4))), _f32(rng.normal(size=(5, 3)))
    text = jax.jit(jax.grad(loss)).lower(params, x, y).as_text()
    names = re.findall(r"^def (numjax_\w+)\(", text, flags=re.M)
    serial = [n for n in names if not n.endswith("_par")]
    assert len(serial) == 1, names
    assert set(names) <= {serial[0], serial[0] + "_par"}
    g_jit = jax.jit(jax.grad(loss))(params, x, y)
    g_eager = jax.grad(loss)(params, x, y)
    assert jax.tree_util.tree_structure(g_jit) == jax.tree_util.tree_structure(params)
    for a, b in zip(jax.tree_util.tree_leaves(g_jit), jax.tree_util.tree_leaves(g_eager)):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6)

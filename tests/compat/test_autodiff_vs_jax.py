"""Differential tests: numjax's autodiff against real JAX in the same process.

Every function below is written once over a ``(jnp, lax)`` pair of namespaces and
evaluated with both libraries; grad / value_and_grad / jvp / vjp / jacfwd / jacrev /
hessian (and jit(grad)) must agree in values (float32 tolerance), dtypes, weak types
and shapes.  Run with ``tox -e compat`` (or any environment where ``jax`` imports).
"""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402
from jax import lax as jlax  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402
from numjax import lax as nlax  # noqa: E402

jax.config.update("jax_platform_name", "cpu")

RTOL, ATOL = 2e-5, 2e-6

# JAX's side runs under jax.jit: one XLA compilation per test instead of one per primitive.
J = jax.jit

_rng = np.random.default_rng(1234)


def _u(*shape, lo=-2.0, hi=2.0):
    return _rng.uniform(lo, hi, shape).astype(np.float32)


# name -> (builder(jnp, lax) -> function, numpy arguments, scalar output?)
FUNCS = {
    "sum_sq": (lambda jnp, lax: lambda x: jnp.sum(x ** 2), (_u(4),), True),
    "sum_logistic": (lambda jnp, lax: lambda x: jnp.sum(1.0 / (1.0 + jnp.exp(-x))), (_u(3),), True),
    "tanh_poly": (lambda jnp, lax: lambda x: jnp.sum(jnp.tanh(x) * x ** 3 - 2 * x), (_u(3),), True),
    "sin_cos_mix": (lambda jnp, lax: lambda x, y: jnp.sum(jnp.sin(x) * jnp.cos(y) + x / (1 + y ** 2)),
                    (_u(3), _u(3)), True),
    "log_sqrt": (lambda jnp, lax: lambda x: jnp.sum(jnp.log(x) * jnp.sqrt(x) + lax.rsqrt(x)),
                 (_u(4, lo=0.5, hi=3.0),), True),
    "pow": (lambda jnp, lax: lambda x, y: jnp.sum(x ** y), (_u(3, lo=0.5, hi=2.0), _u(3)), True),
    "max_min": (lambda jnp, lax: lambda x: jnp.max(x) * jnp.min(x) + jnp.sum(jnp.maximum(x, 0.1)),
                (_u(5),), True),
    "where_abs": (lambda jnp, lax: lambda x: jnp.sum(jnp.where(x > 0, jnp.abs(x) ** 1.5, x ** 2)),
                  (_u(6),), True),
    "erf_atan2": (lambda jnp, lax: lambda x, y: jnp.sum(lax.erf(x) * jnp.arctan2(x, y)),
                  (_u(3), _u(3, lo=0.5, hi=2.0)), True),
    "logistic_expm1": (lambda jnp, lax: lambda x: jnp.sum(lax.logistic(x) * jnp.expm1(x) + jnp.log1p(x ** 2)),
                       (_u(4),), True),
    "reductions": (lambda jnp, lax: lambda x: jnp.mean(x ** 2, axis=0).sum() * jnp.prod(x[0])
                   + jnp.sum(jnp.cumsum(x, axis=1) ** 2), (_u(3, 4),), True),
    "cumprod_cummax": (lambda jnp, lax: lambda x: jnp.sum(jnp.cumprod(x, axis=1))
                       + jnp.sum(lax.cummax(x, axis=0) ** 2), (_u(3, 4),), True),
    "shapes": (lambda jnp, lax: lambda x: jnp.sum(jnp.transpose(jnp.reshape(x, (4, 3)))[::-1, 1:]
                                                  * jnp.concatenate([x[0], x[1, ::-1]])[:3, None]),
               (_u(2, 6),), True),
    "pad_slice_bcast": (lambda jnp, lax: lambda x: jnp.sum(
        lax.pad(x, jnp.float32(0.5), ((1, 0, 1), (0, -1, 0))) ** 2)
        + jnp.sum(jnp.broadcast_to(x[:, :1], (3, 3)) * x), (_u(3, 3),), True),
    "dynamic_slice": (lambda jnp, lax: lambda x: jnp.sum(
        lax.dynamic_slice(x, (1, 2), (2, 2)) ** 3 + lax.dynamic_update_slice(x, x[:1, :2] * 2, (2, 1)).sum()),
        (_u(4, 5),), True),
    "matmul_mlp": (lambda jnp, lax: lambda W, b, x: jnp.sum(jnp.tanh(x @ W + b) ** 2),
                   (_u(3, 4), _u(4), _u(5, 3)), True),
    "batched_dot_general": (lambda jnp, lax: lambda x, y: jnp.sum(
        lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))) ** 2), (_u(2, 3, 4), _u(2, 4, 5)), True),
    "logsumexp": (lambda jnp, lax: lambda x: jnp.log(jnp.sum(jnp.exp(x - jnp.max(x)))) + jnp.max(x),
                  (_u(6),), True),
    "clip_var": (lambda jnp, lax: lambda x: jnp.var(jnp.clip(x, -1.0, 1.0)) + jnp.std(x), (_u(7),), True),
    "vector_out": (lambda jnp, lax: lambda x: jnp.sin(x) * jnp.sum(x ** 3), (_u(3),), False),
    "matrix_out": (lambda jnp, lax: lambda x, y: jnp.outer(x, y) + jnp.tanh(x)[:, None], (_u(3), _u(2)),
                   False),
    "cumprod_zeros": (lambda jnp, lax: lambda x: jnp.sum(jnp.cumprod(x, axis=1) * x)
                      + jnp.sum(lax.cumprod(x, 0, reverse=True)),
                      (np.float32([[2., 0., 3., 1.5], [1., 2., 0., 0.]]),), True),
    "ties_and_kinks": (lambda jnp, lax: lambda x: jnp.max(x) + jnp.sum(jnp.maximum(x, 1.0))
                       + jnp.sum(jnp.abs(x)) + jnp.sum(jnp.clip(x, -1, 1)) + jnp.min(x ** 2),
                       (np.float32([1., 3., 3., 0., -1., 0.]),), True),
    "convert_stop_gradient": (lambda jnp, lax: lambda x: jnp.sum(
        x.astype(jnp.float16).astype(jnp.float32) * lax.stop_gradient(x) + x * 2), (_u(3),), True),
}


def _both(name):
    build, args, scalar = FUNCS[name]
    return (build(njnp, nlax), [njnp.asarray(a) for a in args],
            build(jjnp, jlax), [jjnp.asarray(a) for a in args], scalar)


def _assert_same(nj_tree, jax_tree, what, weak=True):
    nj_leaves, nj_def = nj.tree_util.tree_flatten(nj_tree)
    jx_leaves, jx_def = jax.tree_util.tree_flatten(jax_tree)
    assert len(nj_leaves) == len(jx_leaves), f"{what}: {nj_def} vs {jx_def}"
    for a, b in zip(nj_leaves, jx_leaves):
        a_np, b_np = np.asarray(a), np.asarray(b)
        assert a_np.shape == b_np.shape, f"{what}: shape {a_np.shape} vs {b_np.shape}"
        assert a_np.dtype == b_np.dtype, f"{what}: dtype {a_np.dtype} vs {b_np.dtype}"
        if weak and hasattr(b, "weak_type"):
            assert bool(getattr(a, "weak_type", False)) == bool(b.weak_type), f"{what}: weak type"
        np.testing.assert_allclose(a_np, b_np, rtol=RTOL, atol=ATOL, err_msg=what)


NAMES = sorted(FUNCS)
SCALAR_NAMES = [n for n in NAMES if FUNCS[n][2]]


@pytest.mark.parametrize("name", SCALAR_NAMES)
def test_grad_and_value_and_grad(name):
    f, a, g, b, _ = _both(name)
    nums = tuple(range(len(a)))
    _assert_same(nj.grad(f, argnums=nums)(*a), J(jax.grad(g, argnums=nums))(*b), "grad")
    _assert_same(nj.grad(f)(*a), J(jax.grad(g))(*b), "grad argnums=0")
    _assert_same(nj.value_and_grad(f, argnums=nums)(*a), J(jax.value_and_grad(g, argnums=nums))(*b),
                 "value_and_grad")


@pytest.mark.parametrize("name", NAMES)
def test_jvp(name):
    f, a, g, b, _ = _both(name)
    tangents = [np.linspace(-1, 1, x.size, dtype=np.float32).reshape(x.shape) for x in FUNCS[name][1]]
    out_nj = nj.jvp(f, tuple(a), tuple(njnp.asarray(t) for t in tangents))
    out_jx = J(lambda p, t: jax.jvp(g, p, t))(tuple(b), tuple(jjnp.asarray(t) for t in tangents))
    _assert_same(out_nj, out_jx, "jvp", weak=False)


@pytest.mark.parametrize("name", NAMES)
def test_vjp(name):
    f, a, g, b, _ = _both(name)
    y_nj, pb_nj = nj.vjp(f, *a)
    y_jx = J(g)(*b)
    _assert_same(y_nj, y_jx, "vjp primal out", weak=False)
    ct = np.cos(np.arange(np.size(y_jx), dtype=np.float32)).reshape(np.shape(y_jx))
    pulled_jx = J(lambda ct, *b: jax.vjp(g, *b)[1](ct))(jjnp.asarray(ct), *b)
    _assert_same(pb_nj(njnp.asarray(ct)), pulled_jx, "vjp pullback")


@pytest.mark.parametrize("name", NAMES)
def test_jacobians(name):
    f, a, g, b, _ = _both(name)
    nums = tuple(range(len(a)))
    _assert_same(nj.jacfwd(f, argnums=nums)(*a), J(jax.jacfwd(g, argnums=nums))(*b), "jacfwd", weak=False)
    _assert_same(nj.jacrev(f, argnums=nums)(*a), J(jax.jacrev(g, argnums=nums))(*b), "jacrev", weak=False)


@pytest.mark.parametrize("name", [n for n in SCALAR_NAMES if sum(x.size for x in FUNCS[n][1]) <= 16])
def test_hessian(name):
    f, a, g, b, _ = _both(name)
    _assert_same(nj.hessian(f)(*a), J(jax.hessian(g))(*b), "hessian", weak=False)


@pytest.mark.parametrize("name", ["sum_logistic", "matmul_mlp", "tanh_poly", "shapes"])
def test_jit_of_grad(name):
    f, a, g, b, _ = _both(name)
    nums = tuple(range(len(a)))
    _assert_same(nj.jit(nj.grad(f, argnums=nums))(*a), jax.jit(jax.grad(g, argnums=nums))(*b),
                 "jit(grad)")


def test_pytree_jacobian_structure():
    def build(jnp):
        def f(inp):
            return {"s": jnp.sum(inp["a"]) * inp["b"], "v": (inp["a"] * inp["b"], inp["a"][:1])}
        return f

    inp = {"a": np.float32([1., 2.]), "b": np.float32(3.)}
    for nj_jac, jx_jac in ((nj.jacfwd, jax.jacfwd), (nj.jacrev, jax.jacrev), (nj.hessian, jax.hessian)):
        if nj_jac is nj.hessian:
            out_nj = nj_jac(lambda d: build(njnp)(d)["s"])(nj.tree_util.tree_map(njnp.asarray, inp))
            out_jx = jx_jac(lambda d: build(jjnp)(d)["s"])(jax.tree_util.tree_map(jjnp.asarray, inp))
        else:
            out_nj = nj_jac(build(njnp))(nj.tree_util.tree_map(njnp.asarray, inp))
            out_jx = jx_jac(build(jjnp))(jax.tree_util.tree_map(jjnp.asarray, inp))
        # Same out-tree x in-tree structure, leaf by leaf the same shapes.
        assert nj.tree_util.tree_map(np.shape, out_nj) == jax.tree_util.tree_map(np.shape, out_jx)
        _assert_same(out_nj, out_jx, nj_jac.__name__, weak=False)


def test_custom_rules_agree():
    def build(api, jnp):
        @api.custom_jvp
        def log1pexp(x):
            return jnp.log(1. + jnp.exp(x))

        @log1pexp.defjvp
        def _jvp(primals, tangents):
            x, = primals
            t, = tangents
            return log1pexp(x), (1 - 1 / (1 + jnp.exp(x))) * t

        @api.custom_vjp
        def clip_gradient(lo, hi, x):
            return x

        clip_gradient.defvjp(lambda lo, hi, x: (x, (lo, hi)),
                             lambda res, g: (None, None, jnp.clip(g, res[0], res[1])))

        def f(x):
            return jnp.sum(log1pexp(clip_gradient(-0.5, 0.5, x) * 3.0))
        return f

    x = np.float32([-3., 0.1, 2., 50., 100.])
    _assert_same(nj.grad(build(nj, njnp))(njnp.asarray(x)), jax.grad(build(jax, jjnp))(jjnp.asarray(x)),
                 "custom rules")
    _assert_same(nj.grad(nj.checkpoint(build(nj, njnp)))(njnp.asarray(x)),
                 jax.grad(jax.checkpoint(build(jax, jjnp)))(jjnp.asarray(x)), "checkpoint")


def test_scalar_python_arguments_and_weak_types():
    for f_nj, f_jx, args in [
        (lambda x: x ** 3, lambda x: x ** 3, (2.0,)),
        (lambda x, y: x * y + njnp.sin(x), lambda x, y: x * y + jjnp.sin(x), (2.0, 3.0)),
        (lambda x: x * njnp.float32(2), lambda x: x * jjnp.float32(2), (3.0,)),
    ]:
        nums = tuple(range(len(args)))
        _assert_same(nj.grad(f_nj, argnums=nums)(*args), jax.grad(f_jx, argnums=nums)(*args), "weak grad")
        _assert_same(nj.jacrev(f_nj)(*args), jax.jacrev(f_jx)(*args), "weak jacrev")

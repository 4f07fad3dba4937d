"""check_grads: autodiff against central finite differences, to any order, as JAX's.

Forward mode compares ``jvp`` along a random direction with the numerical
directional derivative; reverse mode checks ``<ct, J v> == <J^T ct, v>``.
Higher orders apply the same checks to the derivative maps themselves.
"""
import numpy as np

from . import dtypes, tree_util
from .ad_api import jvp, vjp
from .dtypes import canonicalize_dtype

_GRAD_TOL = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 2e-2, np.dtype(np.float64): 1e-5}
_EPS = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-4}


def _leaves(tree):
    return [np.asarray(x) for x in tree_util.tree_leaves(tree)]


def _tol(trees, given):
    if given is not None:
        return given
    # a Python float argument computes in float32 unless x64 is on: its tolerance too
    dts = [canonicalize_dtype(x.dtype) for t in trees for x in _leaves(t) if dtypes.kind(x.dtype) == "f"]
    return max((_GRAD_TOL.get(d, 1e-5) for d in dts), default=1e-5)


def _random_like(tree, rng):
    return tree_util.tree_map(lambda x: _random_leaf(np.asarray(x), rng), tree)


def _random_leaf(x, rng):
    from .array import Array
    if dtypes.kind(x.dtype) not in "fc":
        return Array(np.zeros(x.shape, np.float32), False)
    return Array(rng.standard_normal(x.shape).astype(canonicalize_dtype(x.dtype)), False)


def _axpy(a, x, y):
    def leaf(u, v):
        v = np.asarray(v)
        if dtypes.kind(v.dtype) not in "fc":
            return v          # integer/bool inputs are not perturbed (their tangents are zero)
        return (v + a * np.asarray(u).astype(v.dtype)).astype(v.dtype)
    return tree_util.tree_map(leaf, x, y)


def _numerical_jvp(f, args, tangents, eps):
    plus = f(*_axpy(eps, tangents, args))
    minus = f(*_axpy(-eps, tangents, args))
    return tree_util.tree_map(lambda p, m: (np.asarray(p, np.float64) - np.asarray(m, np.float64)) / (2 * eps),
                              plus, minus)


def _inner(a, b):
    return sum(float(np.vdot(np.asarray(x, np.float64), np.asarray(y, np.float64)))
               for x, y in zip(_leaves(a), _leaves(b)))


def _assert_close(actual, expected, atol, rtol, what):
    for a, e in zip(_leaves(actual), _leaves(expected)):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(e, np.float64),
                                   atol=atol, rtol=rtol, err_msg=what)


def _eps_for(args, eps):
    if eps is not None:
        return eps
    dts = [canonicalize_dtype(x.dtype) for x in _leaves(args) if dtypes.kind(x.dtype) == "f"]
    return max((_EPS.get(d, 1e-4) for d in dts), default=1e-4)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=None, rng=None):
    rng = rng or np.random.default_rng(0)
    atol, rtol, eps = _tol([args], atol), _tol([args], rtol), _eps_for(args, eps)
    tangents = _random_like(args, rng)
    value, t_out = f_jvp(args, tangents)
    _assert_close(value, f(*args), atol, rtol, "JVP primal output")
    _assert_close(t_out, _numerical_jvp(f, args, tangents, eps), atol, rtol, "JVP tangent vs numerical")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=None, rng=None):
    rng = rng or np.random.default_rng(1)
    atol, rtol, eps = _tol([args], atol), _tol([args], rtol), _eps_for(args, eps)
    value, pullback = f_vjp(*args)
    _assert_close(value, f(*args), atol, rtol, "VJP primal output")
    tangents = _random_like(args, rng)
    ct = _random_like(value, rng)
    ip = _inner(tangents, pullback(ct))
    expected = _inner(_numerical_jvp(f, args, tangents, eps), ct)
    np.testing.assert_allclose(ip, expected, atol=atol * max(1.0, abs(expected)), rtol=rtol,
                               err_msg="VJP inner product <v, J^T ct> vs <J v, ct> (numerical)")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    args = tuple(args)
    for mode in modes:
        if mode not in ("fwd", "rev"):
            raise ValueError(f"Unrecognized mode: {mode}")
    if "fwd" in modes:
        check_jvp(f, lambda a, t: jvp(f, a, t), args, atol, rtol, eps)
        if order > 1:
            rng = np.random.default_rng(2)
            fixed_t = _random_like(args, rng)
            check_grads(lambda *a: jvp(f, a, fixed_t)[1], args, order - 1, ("fwd",), atol, rtol, eps)
    if "rev" in modes:
        check_vjp(f, lambda *a: vjp(f, *a), args, atol, rtol, eps)
        if order > 1:
            def vjp_of_out(*a):
                out, pullback = vjp(f, *a)
                return pullback(out)
            check_grads(vjp_of_out, args, order - 1, ("rev",), atol, rtol, eps)

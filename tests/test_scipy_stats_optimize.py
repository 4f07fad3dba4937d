"""numjax.scipy.stats against scipy.stats, and numjax.scipy.optimize.minimize against results
of jax.scipy.optimize.minimize (JAX 0.10.2, committed below as data)."""

import numpy as np
import pytest
import scipy.stats as sst

import numjax as jax
import numjax.numpy as jnp
import numjax.scipy.stats as st
from numjax.scipy.optimize import OptimizeResults, minimize
from numjax.test_util import check_grads
from helpers import jit_compiled

X01 = np.linspace(0.05, 0.95, 7).astype(np.float32)
XR = np.linspace(-3.0, 3.0, 7).astype(np.float32)
XP = np.linspace(0.2, 6.0, 7).astype(np.float32)

# (distribution, shape parameters, points)
CONTINUOUS = [
    ("norm", (0.3, 1.5), XR), ("beta", (2.0, 3.0), X01), ("gamma", (2.5,), XP), ("t", (3.0,), XR),
    ("uniform", (0.1, 0.75), X01), ("expon", (), XP), ("laplace", (0.2, 1.3), XR),
    ("logistic", (0.2, 1.3), XR), ("cauchy", (0.2, 1.3), XR), ("chi2", (3.0,), XP),
]
_FUNCS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf")
CASES = [(d, fn, params, x) for d, params, x in CONTINUOUS for fn in _FUNCS
         if hasattr(getattr(st, d), fn)]


def _points(fn, x):
    return X01 if fn in ("ppf", "isf") else x


@pytest.mark.parametrize("dist,fn,params,x", CASES, ids=[f"{c[0]}.{c[1]}" for c in CASES])
def test_continuous_vs_scipy(dist, fn, params, x):
    x = _points(fn, x)
    got = getattr(getattr(st, dist), fn)(x, *params)
    expected = getattr(getattr(sst, dist), fn)(x.astype(np.float64), *params)
    assert got.dtype == np.float32 and got.shape == x.shape
    rtol = 2e-5 if fn not in ("ppf", "isf") or dist != "cauchy" else 1e-4
    np.testing.assert_allclose(np.asarray(got), expected, rtol=rtol, atol=2e-6)


def test_support_edges():
    assert float(st.gamma.logpdf(-1.0, 2.0)) == -np.inf
    assert float(st.expon.logpdf(-1.0)) == -np.inf
    assert float(st.beta.logpdf(1.5, 2.0, 2.0)) == -np.inf
    assert np.isnan(float(st.beta.logpdf(0.5, -1.0, 2.0)))
    assert float(st.uniform.logpdf(2.0)) == -np.inf
    assert np.isnan(float(st.uniform.ppf(1.5)))
    assert float(st.norm.logcdf(-40.0)) == pytest.approx(sst.norm.logcdf(-40.0), rel=1e-6)


K = np.array([0.0, 1.0, 2.0, 3.0, 7.0], np.float32)


@pytest.mark.parametrize("fn", ["logpmf", "pmf", "cdf"])
def test_poisson_vs_scipy(fn):
    np.testing.assert_allclose(np.asarray(getattr(st.poisson, fn)(K, 2.5)),
                               getattr(sst.poisson, fn)(K, 2.5), rtol=2e-5, atol=1e-7)


@pytest.mark.parametrize("fn", ["logpmf", "pmf", "cdf"])
def test_bernoulli_vs_scipy(fn):
    np.testing.assert_allclose(np.asarray(getattr(st.bernoulli, fn)(K, 0.3)),
                               getattr(sst.bernoulli, fn)(K, 0.3), rtol=2e-5)
    np.testing.assert_array_equal(np.asarray(st.bernoulli.ppf(X01, 0.3)), sst.bernoulli.ppf(X01, 0.3))


COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.5]], np.float32)
MEAN = np.array([0.1, -0.2, 0.3], np.float32)
XS = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)


@pytest.mark.parametrize("x,cov", [(XS, COV), (XS[0], COV), (XS, np.float32(1.7))],
                         ids=["batch", "single", "isotropic"])
def test_multivariate_normal_vs_scipy(x, cov):
    got = st.multivariate_normal.logpdf(x, MEAN, cov)
    np.testing.assert_allclose(np.asarray(got), sst.multivariate_normal.logpdf(x, MEAN, cov),
                               rtol=2e-5)
    np.testing.assert_allclose(np.asarray(st.multivariate_normal.pdf(x, MEAN, cov)),
                               sst.multivariate_normal.pdf(x, MEAN, cov), rtol=5e-5)


def test_multivariate_normal_errors_and_univariate():
    with pytest.raises(ValueError, match="incompatible shapes"):
        st.multivariate_normal.logpdf(XS, MEAN, np.eye(2, dtype=np.float32))
    assert float(st.multivariate_normal.logpdf(0.5, 0.1, 2.0)) == pytest.approx(
        sst.norm.logpdf(0.5, 0.1, np.sqrt(2.0)), rel=1e-6)


def test_grads_and_vmap():
    check_grads(lambda m, s: st.norm.logpdf(0.7, m, s), (np.float32(0.2), np.float32(1.3)), order=2,
                atol=2e-2, rtol=2e-2)
    check_grads(lambda x: st.norm.logcdf(x), (np.float32(-3.0),), order=1, atol=2e-2, rtol=2e-2)
    check_grads(lambda a: st.gamma.logpdf(1.5, a), (np.float32(2.2),), order=1, atol=2e-2, rtol=2e-2)
    check_grads(lambda m: st.multivariate_normal.logpdf(XS[0], m, COV), (MEAN,), order=1,
                atol=2e-2, rtol=2e-2)
    batched = jax.vmap(lambda x, s: st.t.logpdf(x, 3.0, 0.0, s))(XR, XP)
    looped = [float(st.t.logpdf(a, 3.0, 0.0, b)) for a, b in zip(XR, XP)]
    np.testing.assert_allclose(np.asarray(batched), looped, rtol=1e-6)


def test_jit_of_norm_logpdf_compiles():
    out = jit_compiled(lambda x: st.norm.logpdf(x, 0.5, 2.0) + st.norm.cdf(x), XR)
    np.testing.assert_allclose(np.asarray(out), sst.norm.logpdf(XR, 0.5, 2.0) + sst.norm.cdf(XR),
                               rtol=2e-5, atol=1e-6)


# Dtypes and weak types of JAX 0.10.2's results.
STATS_DTYPES = {'norm.logpdf': ('float32', True, ()), 'norm.cdf': ('float32', False, ()), 'norm.ppf': ('float32', False, ()), 'norm.isf': ('float32', False, ()), 'gamma.logpdf': ('float32', True, ()), 'poisson.logpmf': ('float32', True, ()), 'bernoulli.logpmf': ('float32', True, ()), 'beta.cdf': ('float32', True, ()), 't.logpdf': ('float32', True, ()), 'uniform.cdf': ('float32', False, ()), 'multivariate_normal.logpdf': ('float32', False, ())}

_DTYPE_ARGS = {
    "norm.logpdf": (0.5,), "norm.cdf": (0.5,), "norm.ppf": (0.5,), "norm.isf": (0.5,),
    "gamma.logpdf": (0.5, 2.0), "poisson.logpmf": (np.int32(2), 2.0),
    "bernoulli.logpmf": (np.int32(1), 0.3), "beta.cdf": (0.5, 2.0, 3.0), "t.logpdf": (0.5, 3.0),
    "uniform.cdf": (0.5,),
    "multivariate_normal.logpdf": (np.zeros(2, np.float32), np.zeros(2, np.float32),
                                   np.eye(2, dtype=np.float32)),
}


@pytest.mark.parametrize("name", sorted(STATS_DTYPES))
def test_stats_dtypes_match_jax(name):
    dist, fn = name.split(".")
    out = getattr(getattr(st, dist), fn)(*_DTYPE_ARGS[name])
    assert (out.dtype.name, bool(out.weak_type), out.shape) == STATS_DTYPES[name]


# ---------------------------------------------------------------- minimize (BFGS)

def _rosen(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


_A = np.array([[3., 0.5, 0.], [0.5, 2., 0.3], [0., 0.3, 1.]], np.float32)
_B = np.array([1., -2., 0.5], np.float32)


def _quad(x):
    return 0.5 * jnp.dot(x, jnp.dot(_A, x)) - jnp.dot(_B, x)


def _quartic(x, a):
    return jnp.sum((x - a) ** 2) + jnp.sum(x ** 4)


# name: (function, x0, args, options).  JAX's BFGS gives up on Rosenbrock from (-1.2, 1) in
# float32 (its line search runs out of iterations: status 3), which numjax reproduces.
OPT_CASES = {
    "rosen2_fails": (_rosen, [-1.2, 1.0], (), None),
    "rosen2": (_rosen, [0.5, 0.5], (), None),
    "rosen4": (_rosen, [1.3, 0.7, 0.8, 1.9], (), None),
    "quad3": (_quad, [0., 0., 0.], (), None),
    "quartic_args": (_quartic, [0., 0., 0.], (np.float32(1.5),), {"gtol": 1e-3, "norm": 2}),
    "rosen2_maxiter": (_rosen, [2.0, 2.0], (), {"maxiter": 5}),
}

# jax.scipy.optimize.minimize(..., method="BFGS") under JAX 0.10.2, float32.
OPTIMIZER_EXPECTED = {'rosen2_fails': {'x': [-0.2778100073337555, 0.04334153234958649], 'success': False, 'status': 3, 'fun': 1.7472916841506958, 'jac': [-6.315708160400391, -6.767373561859131], 'hess_inv': [[0.06770072132349014, -0.050392720848321915], [-0.05039273574948311, 0.04021638259291649]], 'nfev': 17, 'njev': 17, 'nit': 8}, 'rosen2': {'x': [0.9999999403953552, 0.9999998807907104], 'success': True, 'status': 0, 'fun': 3.552713678800501e-15, 'jac': [-1.1920786846530973e-07, -7.105427357601002e-13], 'hess_inv': [[0.5015923380851746, 1.0027800798416138], [1.0027806758880615, 2.0095767974853516]], 'nfev': 23, 'njev': 23, 'nit': 14}, 'rosen4': {'x': [1.0262782573699951, 1.0694106817245483, 1.0724414587020874, 0.9779209494590759], 'success': False, 'status': 3, 'fun': 3.5094118118286133, 'jac': [-6.5827789306640625, 33.827392578125, 59.779258728027344, -34.44193649291992], 'hess_inv': [[0.0026366340462118387, 0.0018523568287491798, 0.0019491782877594233, 0.0036974404938519], [0.001852361368946731, 0.0031932839192450047, 0.003419865621253848, 0.006390142720192671], [0.0019491671118885279, 0.003419888438656926, 0.0057269795797765255, 0.010750584304332733], [0.003697415580973029, 0.006390259135514498, 0.010750421322882175, 0.02447669953107834]], 'nfev': 14, 'njev': 14, 'nit': 7}, 'quad3': {'x': [0.5447074174880981, -1.2682468891143799, 0.8804752230644226], 'success': True, 'status': 0, 'fun': -1.7607206106185913, 'jac': [-1.1920928955078125e-06, 2.4437904357910156e-06, 1.1324882507324219e-06], 'hess_inv': [[0.34983327984809875, -0.09397388249635696, 0.026257425546646118], [-0.09397388994693756, 0.5532318949699402, -0.16188588738441467], [0.02625742182135582, -0.16188588738441467, 1.050184965133667]], 'nfev': 7, 'njev': 7, 'nit': 5}, 'quartic_args': {'x': [0.7280630469322205, 0.7280630469322205, 0.7280668616294861], 'success': True, 'status': 0, 'fun': 2.630600929260254, 'jac': [-0.0001595020294189453, -0.0001595020294189453, -0.00012767314910888672], 'hess_inv': [[0.7059536576271057, -0.2940463125705719, -0.29328006505966187], [-0.2940463125705719, 0.7059537768363953, -0.2932800352573395], [-0.2932800352573395, -0.2932800352573395, 0.7074823379516602]], 'nfev': 6, 'njev': 6, 'nit': 4}, 'rosen2_maxiter': {'x': [0.37496668100357056, 0.14359329640865326], 'success': False, 'status': 1, 'fun': 0.3915626108646393, 'jac': [-1.699019432067871, 0.5986568927764893], 'hess_inv': [[0.007166500203311443, 0.010413391515612602], [0.010413391515612602, 0.016547635197639465]], 'nfev': 9, 'njev': 9, 'nit': 5}}


def _check_result(result, expected):
    assert isinstance(result, OptimizeResults)
    for field in ("success", "status", "nfev", "njev", "nit"):
        assert np.asarray(getattr(result, field)).tolist() == expected[field], field
    for field, tol in (("x", 1e-4), ("fun", 1e-4), ("jac", 2e-2), ("hess_inv", 2e-2)):
        np.testing.assert_allclose(np.asarray(getattr(result, field)), expected[field],
                                   rtol=tol, atol=tol, err_msg=field)


@pytest.mark.parametrize("name", sorted(OPT_CASES))
def test_minimize_bfgs_matches_jax(name):
    fun, x0, args, options = OPT_CASES[name]
    result = minimize(fun, np.array(x0, np.float32), args, method="BFGS", options=options)
    _check_result(result, OPTIMIZER_EXPECTED[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["quad3", "rosen2"])
def test_minimize_bfgs_under_jit(name):
    fun, x0, args, options = OPT_CASES[name]
    result = jit_compiled(lambda x: minimize(fun, x, args, method="BFGS", options=options),
                          np.array(x0, np.float32))
    _check_result(result, OPTIMIZER_EXPECTED[name])


def test_minimize_errors():
    with pytest.raises(ValueError, match="Method nelder-mead not recognized"):
        minimize(_quad, np.zeros(3, np.float32), method="nelder-mead")
    with pytest.raises(TypeError, match="must be a tuple"):
        minimize(_quartic, np.zeros(3, np.float32), 1.5, method="BFGS")

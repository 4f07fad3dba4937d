"""numjax.scipy (special, stats, optimize) and the lax special functions against real JAX,
in one process: values (float32 tolerances), dtypes, weak types and shapes."""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.lax as jlax  # noqa: E402
import jax.numpy as jjnp  # noqa: E402
import jax.scipy.optimize as jopt  # noqa: E402
import jax.scipy.special as jss  # noqa: E402
import jax.scipy.stats as jst  # noqa: E402

import numjax.lax as nlax  # noqa: E402
import numjax.numpy as njnp  # noqa: E402
import numjax.scipy.optimize as nopt  # noqa: E402
import numjax.scipy.special as nss  # noqa: E402
import numjax.scipy.stats as nst  # noqa: E402

jax.config.update("jax_enable_x64", False)

RNG = np.random.default_rng(0)
POS = RNG.uniform(0.2, 6.0, 8).astype(np.float32)
POS2 = RNG.uniform(0.2, 6.0, 8).astype(np.float32)
REAL = RNG.uniform(-4.0, 4.0, 8).astype(np.float32)
UNIT = RNG.uniform(0.02, 0.98, 8).astype(np.float32)


def _compare(got, expected, rtol=5e-5, atol=2e-6):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)


LAX_CASES = [
    ("lgamma", (REAL,)), ("digamma", (POS,)), ("polygamma", (np.ones(8, np.float32), POS)),
    ("igamma", (POS, POS2)), ("igammac", (POS, POS2)), ("igamma_grad_a", (POS, POS2)),
    ("random_gamma_grad", (POS, POS2)), ("betainc", (POS, POS2, UNIT)), ("zeta", (POS + 1, POS2)),
    ("bessel_i0e", (REAL,)), ("bessel_i1e", (REAL,)), ("erfc", (REAL,)),
]


@pytest.mark.parametrize("name,args", LAX_CASES, ids=[c[0] for c in LAX_CASES])
def test_lax_special(name, args):
    _compare(getattr(nlax, name)(*args), getattr(jlax, name)(*args), rtol=2e-4)


SPECIAL_CASES = [
    ("gammaln", (REAL,)), ("gamma", (POS,)), ("digamma", (POS,)), ("erf", (REAL,)),
    ("erfc", (REAL,)), ("erfinv", (UNIT * 2 - 1,)), ("expit", (REAL,)), ("logit", (UNIT,)),
    ("ndtr", (REAL,)), ("log_ndtr", (REAL * 8,)), ("ndtri", (UNIT,)), ("xlogy", (UNIT, POS)),
    ("xlog1py", (UNIT, POS)), ("betaln", (POS, POS2)), ("beta", (POS, POS2)),
    ("betainc", (POS, POS2, UNIT)), ("gammainc", (POS, POS2)), ("gammaincc", (POS, POS2)),
    ("zeta", (POS + 1, POS2)), ("i0e", (REAL,)), ("i1e", (REAL,)), ("i0", (REAL,)), ("i1", (REAL,)),
    ("entr", (UNIT,)), ("rel_entr", (UNIT, POS)), ("kl_div", (UNIT, POS)), ("factorial", (POS,)),
    ("softmax", (REAL,)), ("log_softmax", (REAL,)), ("logsumexp", (REAL,)),
    ("gammaln", (1.5,)), ("expit", (0.5,)), ("ndtr", (0.5,)), ("logsumexp", (1.0,)),
]


@pytest.mark.parametrize("name,args", SPECIAL_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(SPECIAL_CASES)])
def test_special(name, args):
    got, expected = getattr(nss, name)(*args), getattr(jss, name)(*args)
    assert bool(got.weak_type) == bool(expected.weak_type)
    _compare(got, expected, rtol=2e-4)


@pytest.mark.parametrize("kwargs", [{"axis": 0}, {"axis": 1, "keepdims": True},
                                    {"axis": 1, "b": np.float32([[1.0], [-2.0]]), "return_sign": True}])
def test_logsumexp_and_its_gradient(kwargs):
    a = REAL.reshape(2, 4)
    got, expected = nss.logsumexp(a, **kwargs), jss.logsumexp(a, **kwargs)
    if kwargs.get("return_sign"):
        _compare(got[0], expected[0])
        _compare(got[1], expected[1])
    else:
        _compare(got, expected)
    import numjax
    _compare(numjax.grad(lambda v: nss.logsumexp(v).sum())(a),
             jax.grad(lambda v: jss.logsumexp(v).sum())(a))


STATS_CASES = [
    ("norm", "logpdf", (REAL, 0.3, 1.5)), ("norm", "cdf", (REAL,)), ("norm", "logcdf", (REAL * 5,)),
    ("norm", "ppf", (UNIT,)), ("norm", "isf", (UNIT,)), ("norm", "logsf", (REAL,)),
    ("beta", "logpdf", (UNIT, 2.0, 3.0)), ("beta", "cdf", (UNIT, 2.0, 3.0)),
    ("gamma", "logpdf", (POS, 2.5)), ("gamma", "cdf", (POS, 2.5)), ("gamma", "sf", (POS, 2.5)),
    ("t", "logpdf", (REAL, 3.0)), ("uniform", "cdf", (UNIT, 0.1, 0.5)),
    ("uniform", "logpdf", (UNIT, 0.1, 0.5)), ("expon", "logcdf", (POS,)),
    ("laplace", "cdf", (REAL,)), ("logistic", "logpdf", (REAL,)), ("cauchy", "cdf", (REAL,)),
    ("chi2", "logpdf", (POS, 3.0)), ("chi2", "sf", (POS, 3.0)),
    ("poisson", "logpmf", (np.round(POS), 2.0)), ("poisson", "cdf", (np.round(POS), 2.0)),
    ("bernoulli", "logpmf", (np.float32([0, 1, 2]), 0.3)), ("bernoulli", "ppf", (UNIT, 0.3)),
]


@pytest.mark.parametrize("dist,fn,args", STATS_CASES, ids=[f"{c[0]}.{c[1]}" for c in STATS_CASES])
def test_stats(dist, fn, args):
    got = getattr(getattr(nst, dist), fn)(*args)
    expected = getattr(getattr(jst, dist), fn)(*args)
    assert bool(got.weak_type) == bool(expected.weak_type)
    _compare(got, expected, rtol=2e-4, atol=1e-5)


def test_multivariate_normal():
    cov = np.array([[2.0, 0.3], [0.3, 1.0]], np.float32)
    x = RNG.normal(size=(5, 2)).astype(np.float32)
    mean = np.float32([0.1, -0.3])
    _compare(nst.multivariate_normal.logpdf(x, mean, cov), jst.multivariate_normal.logpdf(x, mean, cov))


def _rosen(np_):
    return lambda x: np_.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


@pytest.mark.parametrize("x0", [[0.5, 0.5], [-1.2, 1.0], [1.2, 1.2]])
def test_minimize_bfgs(x0):
    x0 = np.float32(x0)
    got = nopt.minimize(_rosen(njnp), x0, method="BFGS")
    expected = jopt.minimize(_rosen(jjnp), x0, method="BFGS")
    for field in ("success", "status", "nfev", "njev", "nit"):
        assert int(getattr(got, field)) == int(getattr(expected, field)), field
    _compare(got.x, expected.x, rtol=1e-4, atol=1e-4)
    _compare(got.fun, expected.fun, rtol=1e-4, atol=1e-4)

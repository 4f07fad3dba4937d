"""numjax.scipy.stats: scipy.stats distributions over lax, as jax.scipy.stats."""
from . import (bernoulli, beta, cauchy, chi2, expon, gamma, laplace, logistic,  # noqa: F401
               multivariate_normal, norm, poisson, t, uniform)

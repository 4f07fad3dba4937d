"""Scalar expressions for special functions (see scalar.py): calls into special_helpers,
imported by generated code as ``sp``."""
from numjax.lax import special as sl

from .scalar import RULES


def _helper(name):
    return lambda args, in_dtypes, out_dtype, params: f"sp.{name}({', '.join(args)})"


RULES.update({
    sl.lgamma_p: _helper("lgamma"),
    sl.digamma_p: _helper("digamma"),
    sl.polygamma_p: _helper("polygamma"),
    sl.igamma_p: _helper("igamma"),
    sl.igammac_p: _helper("igammac"),
    sl.igamma_grad_a_p: _helper("igamma_grad_a"),
    sl.random_gamma_grad_p: _helper("random_gamma_grad"),
    sl.regularized_incomplete_beta_p: _helper("betainc"),
    sl.zeta_p: _helper("zeta"),
    sl.bessel_i0e_p: _helper("bessel_i0e"),
    sl.bessel_i1e_p: _helper("bessel_i1e"),
    sl.ndtri_p: _helper("ndtri"),
    sl.erfc_p: lambda args, in_dtypes, out_dtype, params: f"math.erfc({args[0]})",
})

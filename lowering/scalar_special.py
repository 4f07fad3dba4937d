"""Scalar expressions for special functions (see scalar.py): calls into special_helpers,
imported by generated code as ``sp``."""
from .scalar import RULES


def _helper(name):
    return lambda args, in_dtypes, out_dtype, params: f"sp.{name}({', '.join(args)})"


RULES.update({
    "lgamma": _helper("lgamma"),
    "digamma": _helper("digamma"),
    "polygamma": _helper("polygamma"),
    "igamma": _helper("igamma"),
    "igammac": _helper("igammac"),
    "igamma_grad_a": _helper("igamma_grad_a"),
    "random_gamma_grad": _helper("random_gamma_grad"),
    "regularized_incomplete_beta": _helper("betainc"),
    "zeta": _helper("zeta"),
    "bessel_i0e": _helper("bessel_i0e"),
    "bessel_i1e": _helper("bessel_i1e"),
    "ndtri": _helper("ndtri"),
    "erfc": lambda args, in_dtypes, out_dtype, params: f"math.erfc({args[0]})",
})

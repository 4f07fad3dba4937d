"""``jax._src.core``: numjax's core, with the jaxpr and primitive names JAX keeps there."""
from ..core import *  # noqa: F401,F403
from ..core import (ShapedArray, Trace, Tracer, Primitive, MainTrace, get_aval, find_top_trace,  # noqa: F401
                    full_lower, new_main, current_trace_stack, impl_rules, abstract_eval_rules)
from ..extend.core import *  # noqa: F401,F403
from ..extend.core import (OpaqueTraceState, get_opaque_trace_state, mapped_aval,  # noqa: F401
                           unmapped_aval, jaxpr_as_fun, jaxprs_in_params, subjaxprs,
                           concrete_or_error, new_jaxpr_eqn, primal_dtype_to_tangent_dtype,
                           valid_jaxtype, Effect, Effects, no_effects)
from ..jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, eval_jaxpr  # noqa: F401

AbstractValue = ShapedArray
Atom = Var | Literal

"""``jax.interpreters.mlir`` for numjax: lowering rules registered from outside numjax.

numjax emits no MLIR; its backends compile jaxprs. The one kind of lowering rule that means
something without MLIR is JAX's ``lower_fun(fun, multiple_results)``: "this primitive
computes what ``fun`` computes". Such a rule is kept here, keyed by primitive, and before a
program goes to a backend ``expand_lowerings`` replaces every equation of such a primitive by
the jaxpr of ``fun`` traced at the equation's input types (inside loop bodies and branches
too). The primitive stays in the jaxprs that transformations see, so its own jvp, transpose
and batching rules apply; only the compiled program sees its expansion.

A primitive defined outside numjax (``jax.extend.core.Primitive``, not numjax's own) that has
an impl but no ``lower_fun`` rule (none at all, or one that emits MLIR, which numjax cannot
use) becomes a host callback instead: its equation turns into a ``pure_callback`` calling
``impl(*args, **params)``, checked against the equation's output types, and the rest of the
program stays compiled.  JAX would fail to lower it.  Only a primitive with neither makes the
backend fall back to eager evaluation with a warning, as do numjax's own primitives without a
backend rule (that is numjax's bug to fix, not to paper over with a callback).
"""
from .. import core
from ..jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, sub_jaxprs

# primitive -> rule, for every platform / for one platform, as JAX keeps them.
_lowerings = {}
_platform_specific_lowerings = {"cpu": {}, "cuda": {}, "rocm": {}, "tpu": {}}


class LoweredFunction:
    """What ``lower_fun`` returns: ``fun`` as the meaning of a primitive."""

    def __init__(self, fun, multiple_results):
        self.fun, self.multiple_results = fun, multiple_results

    def __call__(self, ctx, *args, **params):
        raise NotImplementedError("numjax emits no MLIR: a lower_fun rule is expanded into the "
                                  "jaxpr of its function, not called")

    def trace(self, in_avals, params):
        """The ClosedJaxpr of ``fun(*args, **params)`` at ``in_avals``."""
        from . import partial_eval as pe

        def flat(*args):
            out = self.fun(*args, **params)
            return list(out) if self.multiple_results else [out]
        return pe.trace_to_jaxpr(flat, list(in_avals))


def lower_fun(fun, multiple_results=True):
    return LoweredFunction(fun, multiple_results)


def register_lowering(prim, rule, platform=None, **kwargs):
    if platform is None:
        _lowerings[prim] = rule
    else:
        _platform_specific_lowerings.setdefault(platform, {})[prim] = rule
    return rule


def expandable_rule(prim):
    """The ``lower_fun`` rule numjax's CPU programs use for ``prim``, or None."""
    rule = _platform_specific_lowerings["cpu"].get(prim, _lowerings.get(prim))
    return rule if isinstance(rule, LoweredFunction) else None


def calls_impl_on_host(prim):
    """Whether compiled programs run ``prim`` by calling its impl from the program: a library's
    primitive (not numjax's own) with an impl and no ``lower_fun`` rule."""
    return (not prim.defined_by_numjax and prim in core.impl_rules
            and expandable_rule(prim) is None)


class PrimitiveImplCall:
    """The host callback standing for one equation of ``prim``: its impl with the equation's
    params, results as a list (what ``pure_callback``'s runtime checks)."""

    def __init__(self, prim, params):
        self.prim, self.params = prim, params

    def __call__(self, *args):
        out = core.impl_rules[self.prim](*args, **self.params)
        return list(out) if self.prim.multiple_results else [out]

    def __repr__(self):
        return f"{self.prim.name}.impl"


def _impl_call_eqn(eqn, invars):
    from ..lax.callback import pure_callback_p
    return JaxprEqn(pure_callback_p, invars, eqn.outvars, dict(
        callback=PrimitiveImplCall(eqn.primitive, eqn.params),
        result_avals=tuple(v.aval for v in eqn.outvars), sharding=None, vmap_method=None))


# ---------------------------------------------------------------- expansion

def expand_lowerings(closed):
    """``closed`` with each equation of a ``lower_fun`` primitive replaced by its function's
    jaxpr, and each equation of a library's impl-only primitive by a host callback of its
    impl (the same object when there is neither). Array constants made by those functions
    become constants of the top-level program."""
    if not _mentions_expandable(closed.jaxpr):
        return closed
    new_consts = {}
    jaxpr = _expand(closed.jaxpr, new_consts)
    jaxpr = Jaxpr(list(jaxpr.constvars) + list(new_consts), jaxpr.invars, jaxpr.outvars, jaxpr.eqns)
    return ClosedJaxpr(jaxpr, list(closed.consts) + list(new_consts.values()))


def _mentions_expandable(jaxpr):
    for eqn in jaxpr.eqns:
        if expandable_rule(eqn.primitive) is not None or calls_impl_on_host(eqn.primitive):
            return True
        if any(_mentions_expandable(sub) for sub in sub_jaxprs(eqn.params)):
            return True
    return False


def _expand(jaxpr, new_consts):
    """``jaxpr`` expanded; constants of expansions go to ``new_consts`` (Var -> value), or,
    when ``new_consts`` is None (a nested jaxpr), are not allowed."""
    rename = {}

    def sub(v):
        return v if type(v) is Literal else rename.get(v, v)

    eqns = []
    for eqn in jaxpr.eqns:
        invars = [sub(v) for v in eqn.invars]
        if calls_impl_on_host(eqn.primitive):
            eqns.append(_impl_call_eqn(eqn, invars))
            continue
        rule = expandable_rule(eqn.primitive)
        if rule is None:
            eqns.append(JaxprEqn(eqn.primitive, invars, eqn.outvars, _expand_params(eqn.params)))
            continue
        traced = rule.trace([v.aval for v in eqn.invars], eqn.params)
        inner = _expand(traced.jaxpr, None)
        if traced.consts and new_consts is None:
            raise NotImplementedError(f"the lowering of '{eqn.primitive.name}' inside a loop body or "
                                      "branch creates array constants")
        local = dict(zip(inner.invars, invars))
        for cv, val in zip(traced.jaxpr.constvars, traced.consts):
            outer = Var(cv.aval)
            new_consts[outer] = val
            local[cv] = outer
        for ie in inner.eqns:
            outs = [Var(o.aval) for o in ie.outvars]   # fresh per expansion site
            eqns.append(JaxprEqn(ie.primitive, [v if type(v) is Literal else local.get(v, v)
                                                for v in ie.invars], outs, ie.params))
            local.update(zip(ie.outvars, outs))
        if len(inner.outvars) != len(eqn.outvars):
            raise ValueError(f"the lowering of '{eqn.primitive.name}' returned {len(inner.outvars)} "
                             f"values for {len(eqn.outvars)} results")
        for outer_v, inner_v in zip(eqn.outvars, inner.outvars):
            rename[outer_v] = inner_v if type(inner_v) is Literal else local.get(inner_v, inner_v)
    return Jaxpr(jaxpr.constvars, jaxpr.invars, [sub(v) for v in jaxpr.outvars], eqns)


def _expand_params(params):
    if not any(_mentions_expandable(sub) for sub in sub_jaxprs(params)):
        return params
    return {k: _expand_param(v) for k, v in params.items()}


def _expand_param(v):
    if isinstance(v, tuple):
        return tuple(_expand_param(x) for x in v)
    if isinstance(v, list):
        return [_expand_param(x) for x in v]
    if isinstance(v, ClosedJaxpr) and _mentions_expandable(v.jaxpr):
        return ClosedJaxpr(_expand(v.jaxpr, None), v.consts)
    if isinstance(v, Jaxpr) and _mentions_expandable(v):
        return _expand(v, None)
    return v


__all__ = ["lower_fun", "register_lowering", "expand_lowerings", "LoweredFunction",
           "calls_impl_on_host"]

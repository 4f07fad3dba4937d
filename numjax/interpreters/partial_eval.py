"""Staging a Python function out into a jaxpr (the trace behind jit and make_jaxpr).

Rule signature: there is no per-primitive table for plain staging; every
primitive is staged by ``abstract_eval_rules`` from ``numjax.core``. The
builder records one ``JaxprEqn`` per bound primitive; scalar constants become
``Literal``s and array constants become constvars, as JAX prints them.
"""
import inspect

import numpy as np

from .. import core, source_info
from ..jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var


class JitTracer(core.Tracer):
    # ``jaxpr_var``, not ``var``: a tracer must leave Array method names (x.var()) free.
    __slots__ = ("aval_", "jaxpr_var", "const")

    def __init__(self, trace, aval, var, const=None):
        self._trace, self.aval_, self.jaxpr_var, self.const = trace, aval, var, const

    aval = property(lambda self: self.aval_)

    def _origin_msg(self):
        builder = self._trace.main.global_data
        return builder.describe_origin(self.jaxpr_var)


class JaxprBuilder:
    def __init__(self, debug_info=None):
        self.eqns = []
        self.const_tracers = {}     # id(value) -> tracer, so a constant is staged once
        self.constvar_vals = {}     # Var -> array value
        self.debug_info = debug_info or {}
        self.producers = {}         # Var -> eqn, for error messages about provenance
        self.invars = []

    # -- building
    def new_arg(self, trace, aval):
        var = Var(aval)
        self.invars.append(var)
        return JitTracer(trace, aval, var)

    def const(self, trace, val):
        key = id(val)
        hit = self.const_tracers.get(key)
        if hit is not None and hit.const is val:
            return hit
        aval = core.get_aval(val)
        var = Var(aval)
        tracer = JitTracer(trace, aval, var, const=val)
        self.const_tracers[key] = tracer
        return tracer

    def atom(self, tracer):
        if tracer.const is not None and tracer.aval.shape == () and not isinstance(tracer.const, core.Tracer):
            return Literal(_scalar_value(tracer.const, tracer.aval), tracer.aval)
        if tracer.const is not None:
            self.constvar_vals[tracer.jaxpr_var] = tracer.const
        return tracer.jaxpr_var

    def add_eqn(self, primitive, in_tracers, out_avals, params):
        outvars = [Var(a) for a in out_avals]
        eqn = JaxprEqn(primitive, [self.atom(t) for t in in_tracers], outvars, params,
                       source_info.current())
        self.eqns.append(eqn)
        for v in outvars:
            self.producers[v] = eqn
        return outvars

    def build(self, out_tracers):
        outvars = [self.atom(t) for t in out_tracers]
        constvars = list(self.constvar_vals)
        # Dead equations stay, as in JAX's jaxprs (make_jaxpr prints them, binding `_`);
        # lowering drops them (dce_jaxpr).
        jaxpr = Jaxpr(constvars, list(self.invars), outvars, self.eqns)
        used = _used_vars(jaxpr)
        constvars = [v for v in constvars if v in used]
        jaxpr.constvars = constvars
        return ClosedJaxpr(jaxpr, [self.constvar_vals[v] for v in constvars])

    # -- error messages
    def describe_origin(self, var):
        info = self.debug_info
        if not info:
            return ""
        deps = self._input_dependencies(var)
        names = info.get("arg_names") or []
        msg = (f"The error occurred while tracing the function {info['fun_name']} at "
               f"{info['fun_src']} for {info['what']}.")
        dep_names = [names[i] for i in deps if i < len(names)]
        if len(dep_names) == 1:
            msg += (" This concrete value was not available in Python because it depends on the "
                    f"value of the argument {dep_names[0]}.")
        elif dep_names:
            msg += (" This concrete value was not available in Python because it depends on the "
                    f"values of the arguments {', '.join(dep_names[:-1])} and {dep_names[-1]}.")
        return msg + "\n"

    def _input_dependencies(self, var):
        positions = {v: i for i, v in enumerate(self.invars)}
        seen, stack, found = set(), [var], set()
        while stack:
            v = stack.pop()
            if v in seen or type(v) is Literal:
                continue
            seen.add(v)
            if v in positions:
                found.add(positions[v])
            eqn = self.producers.get(v)
            if eqn is not None:
                stack.extend(eqn.invars)
        return sorted(found)


def _scalar_value(val, aval):
    arr = np.asarray(getattr(val, "_value", val))
    return arr.astype(aval.dtype).item() if arr.dtype != aval.dtype else arr.item()


def _used_vars(jaxpr):
    used = {v for v in jaxpr.outvars if type(v) is Var}
    for eqn in jaxpr.eqns:
        used.update(v for v in eqn.invars if type(v) is Var)
    return used


def dce_jaxpr(jaxpr):
    """``jaxpr`` without the equations whose results are never read (a new Jaxpr when any
    is dropped); equations of ``effectful_primitives`` (host callbacks, prints) always stay."""
    live = {v for v in jaxpr.outvars if type(v) is Var}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.outvars) or eqn.primitive in effectful_primitives:
            kept.append(eqn)
            live.update(v for v in eqn.invars if type(v) is Var)
    if len(kept) == len(jaxpr.eqns):
        return jaxpr
    return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, kept[::-1])


# Primitives run for their side effect (io_callback, debug_print): never dead code.
effectful_primitives = set()


class DynamicJaxprTrace(core.Trace):
    @property
    def builder(self):
        return self.main.global_data

    def pure(self, val):
        return self.builder.const(self, val)

    lift = pure

    def process_primitive(self, primitive, tracers, params):
        avals_in = [t.aval for t in tracers]
        avals_out = primitive.abstract_eval(*avals_in, **params)
        multiple = primitive.multiple_results
        outvars = self.builder.add_eqn(primitive, tracers, avals_out if multiple else [avals_out], params)
        outs = [JitTracer(self, v.aval, v) for v in outvars]
        return outs if multiple else outs[0]


def trace_to_jaxpr(fun, in_avals, debug_info=None):
    """Trace ``fun(*tracers)`` (flat args, flat outputs) to a ClosedJaxpr."""
    builder = JaxprBuilder(debug_info)
    with core.new_main(DynamicJaxprTrace, builder, dynamic=True) as main:
        trace = DynamicJaxprTrace(main)
        tracers = [builder.new_arg(trace, aval) for aval in in_avals]
        outs = fun(*tracers)
        out_tracers = [trace.full_raise(o) for o in outs]
        return builder.build(out_tracers)


def debug_info(fun, what, arg_names=None):
    name = getattr(fun, "__name__", type(fun).__name__)
    try:
        target = inspect.unwrap(fun)
        code = getattr(target, "__code__", None) or getattr(getattr(target, "func", None), "__code__")
        src = f"{code.co_filename}:{code.co_firstlineno}"
    except (AttributeError, TypeError, ValueError):
        src = "<unknown>"
    return {"fun_name": name, "fun_src": src, "what": what, "arg_names": arg_names or []}


def arg_names_of(fun, n_args, static_argnums=()):
    """Names of the positional parameters, as JAX names them in error messages."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return []
    names = []
    for i in range(n_args):
        if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY, params[i].POSITIONAL_OR_KEYWORD):
            names.append(params[i].name)
        elif params and params[-1].kind == params[-1].VAR_POSITIONAL:
            names.append(f"{params[-1].name}[{i - len(params) + 1}]")
        else:
            names.append(f"args[{i}]")
    return names


# ---------------------------------------------------------------- partial evaluation
#
# Used by linearize/vjp: a function of known and unknown inputs is split into what
# can be computed now (known values, computed by the traces below) and a jaxpr of
# the rest (the unknowns), whose inputs are the unknown arguments and the known
# *residuals* it reads.

class PartialVal:
    __slots__ = ("aval", "const")

    def __init__(self, aval, const):
        self.aval, self.const = aval, const

    @classmethod
    def known(cls, val):
        return cls(core.get_aval(val), val)

    @classmethod
    def unknown(cls, aval):
        return cls(aval, None)

    is_known = property(lambda self: self.const is not None)

    # JAX's PartialVal is the pair (aval or None when known, const or None when unknown).
    def __iter__(self):
        return iter((None if self.is_known else self.aval, self.const))

    def get_known(self):
        return self.const

    def get_aval(self):
        return self.aval


class PETracer(core.Tracer):
    __slots__ = ("pval", "recipe", "__weakref__")

    def __init__(self, trace, pval, recipe):
        self._trace, self.pval, self.recipe = trace, pval, recipe

    aval = property(lambda self: self.pval.aval)

    def full_lower(self):
        return core.full_lower(self.pval.const) if self.pval.is_known else self

    def _concrete_value(self):
        return self.pval.const

    def _short_repr(self):
        # A known value prints as itself (JAX keeps known primals as plain values).
        if self.pval.is_known:
            return core.value_str(self.pval.const)
        return f"JaxprTracer({core.aval_str(self.aval)})"


class _LambdaBinding:
    pass


class _ConstRecipe:
    __slots__ = ("val",)

    def __init__(self, val):
        self.val = val


class _EqnRecipe:
    __slots__ = ("prim", "tracers_in", "params", "avals_out", "tracer_refs_out")

    def __init__(self, prim, tracers_in, params, avals_out, tracer_refs_out):
        self.prim, self.tracers_in, self.params = prim, tracers_in, params
        self.avals_out, self.tracer_refs_out = avals_out, tracer_refs_out


# Rules for primitives that must split into a known and an unknown part themselves
# (control flow): ``rule(trace, tracers, **params) -> tracers``.
partial_eval_rules = {}


class PartialEvalTrace(core.Trace):
    def new_arg(self, pval):
        return PETracer(self, pval, _LambdaBinding())

    def pure(self, val):
        return PETracer(self, PartialVal.known(val), None)

    lift = pure

    def instantiate_const(self, tracer):
        if tracer.pval.is_known:
            return PETracer(self, PartialVal.unknown(tracer.aval), _ConstRecipe(tracer.pval.const))
        return tracer

    def process_primitive(self, primitive, tracers, params):
        if all(t.pval.is_known for t in tracers):
            return primitive.bind(*[t.pval.const for t in tracers], **params)
        rule = partial_eval_rules.get(primitive)
        if rule is not None:
            return rule(self, tracers, **params)
        return self.stage(primitive, tracers, params)

    def stage(self, primitive, tracers, params):
        """Record the equation for later: all of its outputs are unknown."""
        tracers_in = [self.instantiate_const(t) for t in tracers]
        avals_out = primitive.abstract_eval(*[t.aval for t in tracers_in], **params)
        multiple = primitive.multiple_results
        avals_out = avals_out if multiple else [avals_out]
        outs = [PETracer(self, PartialVal.unknown(a), None) for a in avals_out]
        import weakref
        recipe = _EqnRecipe(primitive, tracers_in, params, avals_out, [weakref.ref(t) for t in outs])
        for t in outs:
            t.recipe = recipe
        return outs if multiple else outs[0]


def partial_eval_flat(fun, pvals_in):
    """Run ``fun`` on partially known inputs: (jaxpr of the unknown part, out pvals, residuals).

    The jaxpr's invars are the unknown inputs in order; its constvars are the residuals.
    """
    with core.new_main(PartialEvalTrace) as main:
        trace = PartialEvalTrace(main)
        tracers_in = [trace.new_arg(pval) for pval in pvals_in]
        outs = fun(*tracers_in)
        tracers_out = [trace.full_raise(o) for o in outs]
        pvals_out = [t.pval for t in tracers_out]
        unknown_in = [t for t in tracers_in if not t.pval.is_known]
        unknown_out = [t for t in tracers_out if not t.pval.is_known]
        jaxpr, consts = _tracers_to_jaxpr(unknown_in, unknown_out)
    return jaxpr, pvals_out, consts


def _tracers_to_jaxpr(tracers_in, tracers_out):
    tracer_to_var = {id(t): Var(t.aval) for t in tracers_in}
    constvar_to_val, constid_to_var = {}, {}
    processed, eqns = set(), []
    for t in _toposort(tracers_out):
        if isinstance(t.recipe, _LambdaBinding):
            if id(t) not in tracer_to_var:
                raise ValueError("an unknown input escaped linearization")
        elif isinstance(t.recipe, _ConstRecipe):
            val = t.recipe.val
            var = constid_to_var.get(id(val))
            if var is None:
                aval = core.get_aval(val)
                var = constid_to_var[id(val)] = Var(aval)
                constvar_to_val[var] = val
            tracer_to_var[id(t)] = var
        elif isinstance(t.recipe, _EqnRecipe):
            if id(t.recipe) not in processed:
                r = t.recipe
                outvars = [Var(a) for a in r.avals_out]
                for ref, v in zip(r.tracer_refs_out, outvars):
                    out_t = ref()
                    if out_t is not None:
                        tracer_to_var[id(out_t)] = v
                eqns.append(JaxprEqn(r.prim, [tracer_to_var[id(x)] for x in r.tracers_in], outvars,
                                     r.params))
                processed.add(id(r))
    constvars, constvals = list(constvar_to_val), list(constvar_to_val.values())
    invars = [tracer_to_var[id(t)] for t in tracers_in]
    outvars = [tracer_to_var[id(t)] for t in tracers_out]
    return Jaxpr(constvars, invars, outvars, eqns), constvals


def _toposort(out_nodes):
    """Tracers in dependency order (parents first), following eqn recipes."""
    def parents(t):
        return t.recipe.tracers_in if isinstance(t.recipe, _EqnRecipe) else []

    order, visited = [], set()
    stack = [(t, False) for t in reversed(out_nodes)]
    while stack:
        t, done = stack.pop()
        if done:
            order.append(t)
            continue
        if id(t) in visited:
            continue
        visited.add(id(t))
        stack.append((t, True))
        stack.extend((p, False) for p in reversed(parents(t)) if id(p) not in visited)
    return order


def closure_convert(closed):
    """A jaxpr whose constants are leading inputs instead, plus those constants.

    Control-flow primitives pass closed-over values as explicit operands, so every
    transformation sees them (they may be tracers of an enclosing trace)."""
    jx = closed.jaxpr
    return Jaxpr([], list(jx.constvars) + list(jx.invars), jx.outvars, jx.eqns), list(closed.consts)


def partial_eval_jaxpr(jaxpr, unknowns, instantiate, consts=()):
    """Split ``jaxpr`` (whose constvars hold ``consts``) by which inputs are unknown.

    Returns (known, unknown, out_unknowns, num_res): ``known`` (a ClosedJaxpr) maps the
    known inputs to the known outputs followed by residuals; ``unknown`` (a Jaxpr without
    constants) maps residuals followed by the unknown inputs to the unknown outputs.
    ``instantiate[i]`` forces output i unknown.
    """
    from ..jaxpr import eval_jaxpr
    known_avals = [v.aval for v, u in zip(jaxpr.invars, unknowns) if not u]
    box = {}

    def known_fun(*known_vals):
        it = iter(known_vals)
        pvals = [PartialVal.unknown(v.aval) if u else PartialVal.known(next(it))
                 for v, u in zip(jaxpr.invars, unknowns)]

        def run(*args):
            outs = eval_jaxpr(jaxpr, consts, *args)
            trace = PartialEvalTrace(core.current_trace_stack()[-1])
            outs = [trace.full_raise(o) for o in outs]
            return [trace.instantiate_const(o) if inst else o for o, inst in zip(outs, instantiate)]
        jaxpr_unk, pvals_out, residuals = partial_eval_flat(run, pvals)
        box["jaxpr_unk"], box["out_unknowns"] = jaxpr_unk, [not pv.is_known for pv in pvals_out]
        box["num_res"] = len(residuals)
        known_outs = [pv.const for pv in pvals_out if pv.is_known]
        return known_outs + list(residuals)

    known = trace_to_jaxpr(known_fun, known_avals)
    jaxpr_unk = box["jaxpr_unk"]
    unknown = Jaxpr([], list(jaxpr_unk.constvars) + list(jaxpr_unk.invars), jaxpr_unk.outvars, jaxpr_unk.eqns)
    return known, unknown, box["out_unknowns"], box["num_res"]


# ---------------------------------------------------------------- JAX's public names
# ``jax.interpreters.partial_eval`` is this module. ``fun`` may be a plain callable or a
# ``jax.extend.linear_util.WrappedFun``; either takes and returns flat lists of values.

def trace_to_jaxpr_dynamic(fun, in_avals, *, keep_inputs=None, lower=False, auto_dce=False):
    """(jaxpr, out avals, consts) of ``fun`` staged at ``in_avals``."""
    call = getattr(fun, "call_wrapped", fun)
    closed = trace_to_jaxpr(lambda *xs: list(call(*xs)), list(in_avals))
    return closed.jaxpr, closed.out_avals, closed.consts


def trace_to_jaxpr_nounits(fun, pvals, instantiate=False):
    """(jaxpr of the unknown part, out PartialVals, residuals) of ``fun`` on ``pvals``."""
    call = getattr(fun, "call_wrapped", fun)
    if instantiate is True or (instantiate and any(instantiate)):
        raise NotImplementedError("trace_to_jaxpr_nounits(instantiate=...) is not supported")
    return partial_eval_flat(lambda *xs: list(call(*xs)), list(pvals))

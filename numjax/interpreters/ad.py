"""Forward- and reverse-mode differentiation as interpreters.

jvp rule: ``(primals, tangents, **params) -> (primal_out, tangent_out)``; a
tangent may be ``Zero(aval)``, a symbolic zero that costs nothing.
transpose rule: ``(ct, *invals, **params) -> list of cotangents``, one per
input, ``None`` for inputs that are not linear; linear inputs arrive as
``UndefinedPrimal(aval)``.

Reverse mode is JAX's recipe: linearize = jvp + partial evaluation (the
primal computation runs now, the tangent computation is staged to a linear
jaxpr), then vjp = transposition of that jaxpr (``backward_pass``).
"""
import numpy as np

from .. import core, dtypes
from ..jaxpr import Jaxpr, Literal
from . import partial_eval as pe

jvp_rules = {}
transpose_rules = {}


class Zero:
    """A symbolic zero tangent or cotangent of the given abstract value."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"

    @staticmethod
    def from_primal_value(val):
        return Zero(core.get_aval(val).to_tangent_aval())

    def instantiate(self):
        return zeros_like_aval(self.aval)


class UndefinedPrimal:
    """A linear input of an equation being transposed."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval


def is_undefined(x):
    return type(x) is UndefinedPrimal


def zeros_like_aval(aval):
    from .. import lax
    from ..array import Array
    zero = Array(np.zeros((), _tangent_dtype(aval.dtype)), aval.weak_type and dtypes.kind(aval.dtype) in "fc")
    return lax.broadcast(zero, aval.shape) if aval.shape else zero


def _is_float(x):
    return dtypes.kind(core.get_aval(x).dtype) in "fc"


def _tangent_dtype(dtype):
    # Integer and bool values have float0 tangents in JAX; numjax uses float32 zeros.
    return dtype if dtypes.kind(dtype) in "fc" else np.dtype(np.float32)


def instantiate(t):
    return zeros_like_aval(t.aval) if type(t) is Zero else t


def add_tangents(a, b):
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    from ..lax.elementwise import add_any_p
    return add_any_p.bind(a, b)


# ---------------------------------------------------------------- the JVP trace

class JVPTracer(core.Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        self._trace, self.primal, self.tangent = trace, primal, tangent

    @property
    def aval(self):
        return core.get_aval(self.primal)

    def full_lower(self):
        return core.full_lower(self.primal) if type(self.tangent) is Zero else self

    def _concrete_value(self):
        p = self.primal
        return p._concrete_value() if isinstance(p, core.Tracer) else p

    def _short_repr(self):
        # Under grad/linearize/vjp the tangent is staged, so JAX shows only its type there.
        primal = core.value_str(self.primal)
        if self._trace.main.global_data == "linearize":
            tangent = core.get_aval(self.tangent) if type(self.tangent) is not Zero else self.tangent.aval
            return f"GradTracer(primal={primal}, typeof(tangent)={tangent.str_short(short_dtypes=True)})"
        return f"JVPTracer(primal={primal}, tangent={core.value_str(self.tangent)})"


class JVPTrace(core.Trace):
    def pure(self, val):
        return JVPTracer(self, val, Zero(core.get_aval(val)))

    lift = pure

    def process_primitive(self, primitive, tracers, params):
        primals = [t.primal for t in tracers]
        tangents = [t.tangent for t in tracers]
        if all(type(t) is Zero for t in tangents):
            out = primitive.bind(*primals, **params)
            if primitive.multiple_results:
                return [JVPTracer(self, o, Zero(core.get_aval(o))) for o in out]
            return JVPTracer(self, out, Zero(core.get_aval(out)))
        rule = jvp_rules.get(primitive)
        if rule is None:
            raise NotImplementedError(f"Differentiation rule for '{primitive.name}' not implemented")
        primal_out, tangent_out = rule(primals, tangents, **params)
        if primitive.multiple_results:
            return [JVPTracer(self, p, t) for p, t in zip(primal_out, tangent_out)]
        return JVPTracer(self, primal_out, tangent_out)


def jvp_flat(fun, primals, tangents, instantiate_zeros=True, linearize=False):
    with core.new_main(JVPTrace, "linearize" if linearize else None) as main:
        trace = JVPTrace(main)
        # Integer and bool inputs are not differentiable: their tangents are symbolic zeros
        # (JAX's float0), whatever value the caller passed.
        tracers_in = [JVPTracer(trace, p, t if _is_float(p) else Zero(_tangent_aval(core.get_aval(p))))
                      for p, t in zip(primals, tangents)]
        outs = fun(*tracers_in)
        tracers_out = [trace.full_raise(o) for o in outs]
        primals_out = [t.primal for t in tracers_out]
        tangents_out = [instantiate(t.tangent) if instantiate_zeros else t.tangent for t in tracers_out]
    return primals_out, tangents_out


# ---------------------------------------------------------------- linearize and vjp

def linearize_flat(fun, primals):
    """Primal outputs now, plus the linear jaxpr (and residuals) of the tangent map."""
    n = len(primals)
    pvals_in = ([pe.PartialVal.known(p) for p in primals]
                + [pe.PartialVal.unknown(_tangent_aval(core.get_aval(p))) for p in primals])
    out_count = []

    def fun_jvp(*args):
        primals_out, tangents_out = jvp_flat(fun, args[:n], args[n:], linearize=True)
        out_count.append(len(primals_out))
        trace = _current_pe_trace(args)
        return list(primals_out) + [trace.instantiate_const(trace.full_raise(t)) for t in tangents_out]

    jaxpr, pvals_out, residuals = pe.partial_eval_flat(fun_jvp, pvals_in)
    k = out_count[0]
    primal_pvals = pvals_out[:k]
    if not all(pv.is_known for pv in primal_pvals):
        raise ValueError("linearize: a primal output depends on the tangents")
    return [pv.const for pv in primal_pvals], jaxpr, residuals


def _tangent_aval(aval):
    # A float tangent keeps its primal's weak type (as JAX's do): transposing the cast that
    # promoted a weak input then hands back a weak cotangent.
    weak = aval.weak_type and dtypes.kind(aval.dtype) in "fc"
    return core.ShapedArray(aval.shape, _tangent_dtype(aval.dtype), weak)


def _current_pe_trace(args):
    stack = core.current_trace_stack()
    top = stack[-1]
    for main in reversed(stack):
        if main.trace_type is pe.PartialEvalTrace:
            return pe.PartialEvalTrace(main)
    raise RuntimeError(f"no partial-evaluation trace below {top}")


def backward_pass(jaxpr, residuals, cts_out, in_vma=None):
    """Transpose a linear jaxpr: cotangents of its outputs -> cotangents of its inputs.
    ``in_vma``: the inputs' varying manual axes inside a shard_map(check_vma=True) (vjp passes
    them), whose semantics numjax/_src/vma.py then applies."""
    from .._src import vma as _vma
    primal_env = dict(zip(jaxpr.constvars, residuals))
    ct_env = {}
    vma = _vma.vma_transpose(jaxpr, residuals, in_vma)

    def read_primal(v):
        if type(v) is Literal:
            return v.val
        return primal_env.get(v, UndefinedPrimal(v.aval))

    def write_ct(v, ct):
        if type(v) is Literal or ct is None or type(ct) is Zero:
            return
        ct_env[v] = add_tangents(ct_env[v], ct) if v in ct_env else ct

    for v, ct in zip(jaxpr.outvars, cts_out):
        write_ct(v, ct)
    for eqn in reversed(jaxpr.eqns):
        invals = [read_primal(v) for v in eqn.invars]
        cts = [ct_env.pop(v, Zero(v.aval)) for v in eqn.outvars]
        if all(type(c) is Zero for c in cts):
            continue
        rule = (vma is not None and vma.rule(eqn)) or transpose_rules.get(eqn.primitive)
        if rule is None:
            raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                      f"'{eqn.primitive.name}' not implemented")
        ct_in = rule(cts if eqn.primitive.multiple_results else cts[0], *invals, **eqn.params)
        for v, ct in zip(eqn.invars, ct_in):
            if is_undefined(read_primal(v)):
                write_ct(v, ct)
    return [ct_env.get(v, Zero(v.aval)) if type(v) is not Literal else Zero(v.aval)
            for v in jaxpr.invars]


# ---------------------------------------------------------------- rule constructors

def broadcast_to_aval(x, aval):
    """``x`` broadcast the way lax broadcasts operands (rank-0, or size-1 dims) to ``aval``."""
    from .. import lax
    shape = core.get_aval(x).shape
    if shape == aval.shape:
        return x
    if not shape:
        return lax.broadcast(x, aval.shape)
    keep = [i for i, (a, b) in enumerate(zip(shape, aval.shape)) if a == b]
    squeezed = lax.reshape(x, [shape[i] for i in keep])
    return lax.broadcast_in_dim(squeezed, aval.shape, keep)


def unbroadcast(aval, ct):
    """The cotangent of an operand that lax broadcast implicitly: sum the broadcast dims away."""
    from .. import lax
    if type(ct) is Zero:
        return ct
    ct_shape = core.get_aval(ct).shape
    if ct_shape == aval.shape:
        return ct
    if not aval.shape:
        return lax.reduce_sum(ct, tuple(range(len(ct_shape))))
    dims = tuple(i for i, (a, b) in enumerate(zip(aval.shape, ct_shape)) if a != b)
    return lax.reshape(lax.reduce_sum(ct, dims), aval.shape)


def defjvp(primitive, *jvp_fns):
    """JVP from one function per argument: ``fn(tangent, *primals, **params) -> tangent_out``."""
    def rule(primals, tangents, **params):
        primal_out = primitive.bind(*primals, **params)
        out_aval = core.get_aval(primal_out)
        out = Zero(out_aval)
        for fn, t in zip(jvp_fns, tangents):
            if fn is not None and type(t) is not Zero:
                out = add_tangents(out, broadcast_to_aval(fn(t, *primals, **params), out_aval))
        return primal_out, out
    jvp_rules[primitive] = rule


def defjvp2(primitive, *jvp_fns):
    """Like defjvp, with the primal output passed too: ``fn(tangent, ans, *primals, **params)``."""
    def rule(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        out_aval = core.get_aval(ans)
        out = Zero(out_aval)
        for fn, t in zip(jvp_fns, tangents):
            if fn is not None and type(t) is not Zero:
                out = add_tangents(out, broadcast_to_aval(fn(t, ans, *primals, **params), out_aval))
        return ans, out
    jvp_rules[primitive] = rule


def defjvp_zero(primitive):
    """Piecewise-constant primitives (comparisons, floor, sign): tangent is zero."""
    def rule(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        if primitive.multiple_results:
            return out, [Zero(_tangent_aval(core.get_aval(o))) for o in out]
        return out, Zero(_tangent_aval(core.get_aval(out)))
    jvp_rules[primitive] = rule


def deflinear2(primitive, transpose_rule):
    """A primitive linear in all its arguments: its JVP is itself applied to the tangents;
    ``transpose_rule(ct, *invals, **params)`` is its transpose rule (JAX's ``deflinear2``)."""
    def rule(primals, tangents, **params):
        primal_out = primitive.bind(*primals, **params)
        tangent_out = primitive.bind(*map(instantiate, tangents), **params)
        return primal_out, tangent_out
    jvp_rules[primitive] = rule
    transpose_rules[primitive] = transpose_rule


def defbilinear(primitive):
    """The JVP of a primitive linear in each of its two operands separately (``dot_general``,
    ``conv_general_dilated``): the product rule, skipping symbolic-zero tangents."""
    def rule(primals, tangents, **params):
        lhs, rhs = primals
        t_lhs, t_rhs = tangents
        out = primitive.bind(lhs, rhs, **params)
        t_out = Zero(_aval_of(out))
        if type(t_lhs) is not Zero:
            t_out = add_tangents(t_out, primitive.bind(t_lhs, rhs, **params))
        if type(t_rhs) is not Zero:
            t_out = add_tangents(t_out, primitive.bind(lhs, t_rhs, **params))
        return out, t_out
    jvp_rules[primitive] = rule


def deflinear(primitive, transpose_rule):
    """As ``deflinear2``, with JAX's ``deflinear`` convention: ``transpose_rule(ct, **params)``
    sees no operands (a linear map's transpose does not depend on them)."""
    def transpose(ct, *invals, **params):
        if type(ct) is Zero:
            return [Zero(_tangent_aval(_aval_of(x))) for x in invals]
        return transpose_rule(ct, **params)
    deflinear2(primitive, transpose)


def _aval_of(x):
    return x.aval if is_undefined(x) else core.get_aval(x)


# ---------------------------------------------------------------- jaxpr-level helpers
# Used by higher-order primitives (control flow) to differentiate their bodies.

def jvp_jaxpr(jaxpr, nonzero):
    """A jaxpr computing (outputs, output tangents) from (inputs, tangents of the
    ``nonzero`` inputs); every inexact output gets a tangent. No constants allowed."""
    from ..jaxpr import eval_jaxpr
    in_avals = [v.aval for v in jaxpr.invars]
    t_avals = [_tangent_aval(a) for a, nz in zip(in_avals, nonzero) if nz]
    n = len(in_avals)
    out_inexact = [dtypes.kind(v.aval.dtype) in "fc" for v in jaxpr.outvars]

    def fun(*args):
        primals, ts = args[:n], iter(args[n:])
        tangents = [next(ts) if nz else Zero(_tangent_aval(a)) for a, nz in zip(in_avals, nonzero)]
        outs, t_outs = jvp_flat(lambda *xs: eval_jaxpr(jaxpr, [], *xs), primals, tangents)
        return list(outs) + [t for t, inexact in zip(t_outs, out_inexact) if inexact]
    closed = pe.trace_to_jaxpr(fun, in_avals + t_avals)
    return _no_consts(closed), out_inexact


def _no_consts(closed):
    jx, consts = pe.closure_convert(closed)
    if consts:
        raise NotImplementedError("differentiating a control-flow body that creates array constants")
    return jx


def transpose_jaxpr(jaxpr, linear):
    """A jaxpr mapping (non-linear inputs, output cotangents) to cotangents of the linear inputs."""
    nonlin = [v for v, lin in zip(jaxpr.invars, linear) if not lin]
    lin = [v for v, l_ in zip(jaxpr.invars, linear) if l_]
    body = Jaxpr(nonlin, lin, jaxpr.outvars, jaxpr.eqns)

    def fun(*args):
        res, cts = args[:len(nonlin)], args[len(nonlin):]
        outs = backward_pass(body, list(res), list(cts))
        return [instantiate(o) for o in outs]
    closed = pe.trace_to_jaxpr(fun, [v.aval for v in nonlin] + [v.aval for v in jaxpr.outvars])
    return _no_consts(closed)


# ---------------------------------------------------------------- closed jaxprs (jit)
# A jit equation's jaxpr may hold constants; these helpers keep them (the result is a
# ClosedJaxpr), where the control-flow helpers above need closure-converted bodies.

def jvp_closed_jaxpr(closed, tangent_avals):
    """``closed`` extended to (primals, tangents) -> (outputs, output tangents), where
    ``tangent_avals[i]`` is None for an input whose tangent is a symbolic zero (it takes no
    tangent). Returns the jaxpr and, per output, whether it has a tangent (others are zero)."""
    from ..jaxpr import eval_jaxpr
    in_avals = closed.in_avals
    out_nonzero = []

    def fun(*args):
        primals, ts = args[:len(in_avals)], iter(args[len(in_avals):])
        tangents = [Zero(_tangent_aval(a)) if t is None else next(ts) for a, t in zip(in_avals, tangent_avals)]
        outs, t_outs = jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs), primals, tangents,
                                instantiate_zeros=False)
        out_nonzero[:] = [type(t) is not Zero and _is_float(o) for o, t in zip(outs, t_outs)]
        return list(outs) + [t for t, nz in zip(t_outs, out_nonzero) if nz]
    jaxpr = pe.trace_to_jaxpr(fun, list(in_avals) + [t for t in tangent_avals if t is not None])
    return jaxpr, out_nonzero


def transpose_closed_jaxpr(closed, linear, ct_avals):
    """A ClosedJaxpr mapping (non-linear inputs, output cotangents of ``ct_avals``) to the
    cotangents of the ``linear`` inputs."""
    jx = closed.jaxpr
    nonlinear = [v for v, lin in zip(jx.invars, linear) if not lin]
    body = Jaxpr(list(jx.constvars) + nonlinear, [v for v, lin in zip(jx.invars, linear) if lin],
                 jx.outvars, jx.eqns)

    def fun(*args):
        res, cts = args[:len(nonlinear)], args[len(nonlinear):]
        return [instantiate(ct) for ct in backward_pass(body, list(closed.consts) + list(res), list(cts))]
    return pe.trace_to_jaxpr(fun, [v.aval for v in nonlinear] + list(ct_avals))


# ---------------------------------------------------------------- JAX's public names
# ``jax.interpreters.ad`` is this module: JAX's tables are numjax's tables (same rule
# signatures), so a rule registered through either name is the one differentiation uses.

primitive_jvps = jvp_rules
primitive_transposes = transpose_rules
is_undefined_primal = is_undefined
instantiate_zeros = instantiate
add_jaxvals = add_tangents


def get_primitive_transpose(primitive):
    try:
        return transpose_rules[primitive]
    except KeyError:
        raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                  f"'{primitive.name}' not implemented") from None

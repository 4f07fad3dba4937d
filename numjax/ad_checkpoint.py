"""jax.ad_checkpoint: checkpoint (remat), its policies, checkpoint_name and residual reports.

A *policy* is a predicate ``policy(primitive, *avals, **params) -> bool``: may the value an
equation computes be saved for the backward pass (True) or must it be recomputed (False)?
``checkpoint_policies`` holds JAX's set of them.

Under reverse mode, a checkpointed function is split as JAX splits it.  Its JVP is partially
evaluated (known primals, unknown tangents): the known part computes the outputs and the
*residuals* the tangent part reads.  The policy then decides, residual by residual, going
back through the known equations: an input of the function is saved, the output of an
equation the policy accepts is saved, any other value is recomputed on the backward pass
from values that are saved.  The forward pass runs only what the outputs and the saved
values need; a ``remat_lin`` equation takes the saved values and the tangents, and its
transpose recomputes the residuals, then transposes the tangent part.  ``nothing_saveable``
(the default) saves only inputs; ``everything_saveable`` differentiates as without checkpoint.
Offloading policies save what they would offload (numjax has one memory space).

``print_saved_residuals(f, *args)`` lists what reverse mode saves: one line per residual,
``f32[3] from the argument x`` or ``f32[3] output of cos from file.py:6:9 (g)``, the user's
line that traced the operation (``source_info.py``).
"""
import functools
import inspect
import types
import weakref

from . import core, source_info, tree_util
from .api_util import flatten_fun
from .custom_derivatives import _jvp_trace_of, _leaf, _resolve_args, _unpack
from .interpreters import ad, batching
from .interpreters import partial_eval as pe
from .jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var, eval_jaxpr
from .lax._base import make_primitive

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "print_saved_residuals",
           "remat", "saved_residuals"]


# ---------------------------------------------------------------- checkpoint_name

name_p = make_primitive("name", lambda x, *, name: x, lambda aval, *, name: aval)
ad.jvp_rules[name_p] = lambda primals, tangents, *, name: (name_p.bind(primals[0], name=name), tangents[0])
ad.transpose_rules[name_p] = lambda ct, x, *, name: [ct]
batching.defvectorized(name_p)


def checkpoint_name(x, name):
    """``x`` unchanged, tagged ``name`` for the name-based policies (a pytree of arrays)."""
    return tree_util.map_traced(lambda leaf: name_p.bind(leaf, name=name), x)


# ---------------------------------------------------------------- policies

def _is_dot(prim):
    return prim.name == "dot_general"


def everything_saveable(prim, *avals, **params):
    return True


def nothing_saveable(prim, *avals, **params):
    return False


def dots_saveable(prim, *avals, **params):
    return _is_dot(prim)


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(prim, *avals, **params):
    if not _is_dot(prim):
        return False
    (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


def save_any_names_but_these(*names_not_to_save):
    """Named values are saved, except those named here."""
    names = set(names_not_to_save)
    return lambda prim, *avals, **params: prim is name_p and params["name"] not in names


def save_only_these_names(*names_which_can_be_saved):
    names = set(names_which_can_be_saved)
    return lambda prim, *avals, **params: prim is name_p and params["name"] in names


def save_anything_except_these_names(*names_not_to_save):
    """As in JAX 0.10.2: every value is saveable, the named ones included (the names given
    are not consulted)."""
    return everything_saveable


def save_from_both_policies(policy_1, policy_2):
    return lambda prim, *avals, **params: (policy_1(prim, *avals, **params)
                                           or policy_2(prim, *avals, **params))


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """Dots without batch dimensions are kept (numjax has one memory space: no offloading)."""
    return dots_with_no_batch_dims_saveable


def save_and_offload_only_these_names(*, names_which_can_be_saved, names_which_can_be_offloaded,
                                      offload_src, offload_dst):
    saved, offloaded = set(names_which_can_be_saved), set(names_which_can_be_offloaded)
    if saved & offloaded:
        raise ValueError("The names should be exclusive and should not intersect in `names_which_can_be_saved` "
                         "and `names_which_can_be_offloaded`. Got names_which_can_be_saved="
                         f"{saved}, names_which_can_be_offloaded={offloaded} and the intersection={saved & offloaded}")
    names = saved | offloaded
    return lambda prim, *avals, **params: prim is name_p and params["name"] in names


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable, nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable, checkpoint_dots=checkpoint_dots,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=checkpoint_dots_with_no_batch_dims,
    save_any_names_but_these=save_any_names_but_these, save_only_these_names=save_only_these_names,
    save_anything_except_these_names=save_anything_except_these_names,
    save_from_both_policies=save_from_both_policies,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_and_offload_only_these_names=save_and_offload_only_these_names)


# ---------------------------------------------------------------- checkpoint

def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=()):
    """``fun`` whose reverse-mode derivative saves only the values ``policy`` allows (and the
    inputs it needs) and recomputes the others on the backward pass."""
    if policy is everything_saveable:
        return fun
    saveable = nothing_saveable if policy is None else policy
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def remat_fun(*args, **kwargs):
        args = _resolve_args(fun, args, kwargs)
        static = {i: args[i] for i in static_argnums}
        dyn = tuple(a for i, a in enumerate(args) if i not in static)
        leaves, tree = tree_util.flatten_traced(dyn)
        _check_args(leaves)
        trace = _jvp_trace_of(leaves)
        if trace is None:
            return fun(*args)
        primals, tangents = _unpack(trace, leaves)
        primals = [_leaf(p) for p in primals]
        closed, out_tree = _trace_primal(fun, args, static, tree, [core.get_aval(p) for p in primals])
        outs, t_outs = _remat_jvp(closed, trace, primals, tangents, saveable)
        wrapped = [ad.JVPTracer(trace, p, t) for p, t in zip(outs, t_outs)]
        return tree_util.tree_unflatten(out_tree, wrapped)
    return remat_fun


remat = checkpoint


def _check_args(leaves):
    from .api_util import is_jax_value
    for x in leaves:
        if not is_jax_value(x):
            raise TypeError(f"Argument {x!r} of type {type(x)} is not a valid JAX type: pass non-array "
                            "arguments of a checkpointed function through static_argnums.")


# As JAX, a checkpointed function is traced once per function, argument structure, avals and
# static arguments: a later call reuses that jaxpr (and does not see a global it reads being
# redefined).  A trace that closed over values of a transformation now running is not kept.
_traced = weakref.WeakKeyDictionary()


def _trace_primal(fun, args, static, tree, avals):
    """(ClosedJaxpr of ``fun`` on flat inputs, output tree)."""
    try:
        key = (tree, tuple(avals), tuple(sorted(static.items())))
        hash(key)
        cache = _traced.setdefault(fun, {})
    except TypeError:      # a function without weak references, or unhashable static arguments
        cache = key = None
    if cache is not None and key in cache:
        return cache[key]
    flat_fun, out_tree_box = flatten_fun(fun, args, static, tree)
    closed = pe.trace_to_jaxpr(flat_fun, avals)
    entry = closed, out_tree_box[0]
    if cache is not None and not any(isinstance(c, core.Tracer) for c in closed.consts):
        cache[key] = entry
    return entry


def _remat_jvp(closed, trace, primals, tangents, saveable):
    """(outputs, output tangents) of ``closed`` at ``primals`` along ``tangents``, the
    tangents computed by a ``remat_lin`` equation from the values ``saveable`` lets us keep."""
    jaxpr, consts = pe.closure_convert(closed)
    # Values the function closes over are inputs too: their tangents (when this trace
    # differentiates them) flow through, and they may be saved.
    const_primals, const_tangents = _unpack(trace, consts)
    primals = [_leaf(c) for c in const_primals] + list(primals)
    tangents = list(const_tangents) + list(tangents)
    nonzero = [type(t) is not ad.Zero and ad._is_float(p) for p, t in zip(primals, tangents)]
    tangents = [t for t, nz in zip(tangents, nonzero) if nz]
    t_avals = [ad._tangent_aval(core.get_aval(p)) if nz else None for p, nz in zip(primals, nonzero)]
    jvp, out_nonzero = ad.jvp_closed_jaxpr(ClosedJaxpr(jaxpr, []), t_avals)
    num_outs = len(jaxpr.outvars)
    known, lin, out_unknowns, num_res = pe.partial_eval_jaxpr(
        jvp.jaxpr, [False] * len(primals) + [True] * len(tangents),
        [False] * num_outs + [True] * sum(out_nonzero), jvp.consts)
    if any(out_unknowns[:num_outs]):
        raise ValueError("checkpoint: a primal output depends on the tangents")
    forward, recompute = _split_by_policy(known, num_outs, num_res, saveable)
    vals = eval_jaxpr(forward, [], *known.consts, *primals)
    outs, saved = vals[:num_outs], vals[num_outs:]
    body = _then(recompute, lin, num_res)
    t_outs = iter(remat_lin_p.bind(*saved, *tangents, jaxpr=ClosedJaxpr(body, []), num_saved=len(saved)))
    return outs, [next(t_outs) if nz else ad.Zero(ad._tangent_aval(core.get_aval(o)))
                  for o, nz in zip(outs, out_nonzero)]


def _split_by_policy(known, num_outs, num_res, saveable):
    """Split ``known`` (inputs -> outputs, residuals) into the forward pass (its constants and
    inputs -> outputs, saved values) and the recomputation (saved values -> residuals).

    A residual is saved when it is an input (or constant) of ``known`` or the output of an
    equation ``saveable`` accepts; otherwise its equation is recomputed, and the same
    question is asked of that equation's inputs."""
    jx = pe.closure_convert(known)[0]
    producer = {v: i for i, eqn in enumerate(jx.eqns) for v in eqn.outvars}
    saved, recomputed = set(), set()
    pending = [v for v in jx.outvars[num_outs:num_outs + num_res] if type(v) is Var]
    while pending:
        v = pending.pop()
        if v in saved or producer.get(v) in recomputed:
            continue
        i = producer.get(v)
        if i is None or _saves(saveable, jx.eqns[i]):
            saved.add(v)
        else:
            recomputed.add(i)
            pending.extend(x for x in jx.eqns[i].invars if type(x) is Var)
    # Saved values in program order: inputs first, then as the equations compute them.
    position = {v: k for k, v in enumerate(jx.invars)}
    saved = sorted(saved, key=lambda v: (0, position[v]) if v in position else (1, producer[v]))
    forward = pe.dce_jaxpr(Jaxpr([], jx.invars, list(jx.outvars[:num_outs]) + saved, jx.eqns))
    recompute = Jaxpr([], saved, jx.outvars[num_outs:num_outs + num_res],
                      [eqn for i, eqn in enumerate(jx.eqns) if i in recomputed])
    return forward, recompute


def _saves(saveable, eqn):
    # A side effect (a host callback) must not run again on the backward pass.
    if eqn.primitive in pe.effectful_primitives:
        return True
    return bool(saveable(eqn.primitive, *[x.aval for x in eqn.invars], **eqn.params))


def _then(recompute, lin, num_res):
    """One jaxpr (saved values, tangents) -> output tangents: ``recompute``, whose outputs
    are the residuals, followed by ``lin`` (residuals, tangents) -> output tangents."""
    residual_of = dict(zip(lin.invars[:num_res], recompute.outvars))

    def sub(v):
        return residual_of.get(v, v) if type(v) is Var else v
    lin_eqns = [JaxprEqn(e.primitive, [sub(v) for v in e.invars], e.outvars, e.params, e.source_info)
                for e in lin.eqns]
    return Jaxpr([], list(recompute.invars) + list(lin.invars[num_res:]), [sub(v) for v in lin.outvars],
                 list(recompute.eqns) + lin_eqns)


# ``remat_lin(*saved, *tangents)``: the tangents of a checkpointed function, linear in the
# tangents.  Its body first recomputes, from the saved values, the residuals the forward pass
# did not keep; transposing it runs that part forward, then transposes the rest.  Lowering
# inlines the body (a jit of jvp(checkpoint(f)) compiles as one program).

def _remat_lin_impl(*args, jaxpr, num_saved):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


remat_lin_p = make_primitive("remat_lin", _remat_lin_impl,
                             lambda *avals, jaxpr, num_saved: list(jaxpr.out_avals), multiple_results=True)


def _remat_lin_transpose(cts, *args, jaxpr, num_saved):
    jx = jaxpr.jaxpr
    saved_vars, tangent_vars = jx.invars[:num_saved], jx.invars[num_saved:]
    linear, recompute, lin_eqns = set(tangent_vars), [], []
    for eqn in jx.eqns:
        if any(type(v) is Var and v in linear for v in eqn.invars):
            linear.update(eqn.outvars)
            lin_eqns.append(eqn)
        else:
            recompute.append(eqn)
    residual_vars = list(saved_vars) + [v for e in recompute for v in e.outvars]
    residuals = eval_jaxpr(Jaxpr([], saved_vars, residual_vars, recompute), [], *args[:num_saved])
    body = Jaxpr(residual_vars, tangent_vars, jx.outvars, lin_eqns)
    cts = [ad.instantiate(c) for c in cts]
    return [None] * num_saved + ad.backward_pass(body, residuals, cts)


def _remat_lin_jvp(primals, tangents, **params):
    return ad.jvp_flat(lambda *xs: _remat_lin_impl(*xs, **params), list(primals), list(tangents))


@batching.needs_axis
def _remat_lin_batch(vals, dims, *, axis_data, **params):
    return batching.batch_flat(lambda *xs: _remat_lin_impl(*xs, **params), axis_data.size, axis_data.name,
                               vals, dims)


ad.transpose_rules[remat_lin_p] = _remat_lin_transpose
ad.jvp_rules[remat_lin_p] = _remat_lin_jvp
batching.batch_rules[remat_lin_p] = _remat_lin_batch


# ---------------------------------------------------------------- residual reports

def saved_residuals(f, *args, **kwargs):
    """(aval, description) of each value reverse mode saves for ``f`` at ``args``."""
    leaves, in_tree = tree_util.flatten_traced((args, kwargs))
    avals = [core.get_aval(x) for x in leaves]
    out_tree_box = []

    def flat(*xs):
        a, kw = tree_util.tree_unflatten(in_tree, xs)
        outs, out_tree = tree_util.flatten_traced(f(*a, **kw))
        out_tree_box.append(out_tree)
        return outs
    floats = [ad._is_float(x) for x in leaves]
    tangent_avals = [ad._tangent_aval(a) for a, fl in zip(avals, floats) if fl]

    def jvp_fun(*xs):
        primals, ts = xs[:len(avals)], iter(xs[len(avals):])
        tangents = [next(ts) if fl else ad.Zero(ad._tangent_aval(a)) for a, fl in zip(avals, floats)]
        outs, t_outs = ad.jvp_flat(flat, list(primals), tangents)
        return list(outs) + list(t_outs)
    # Traced through the JVP directly (not from a jaxpr of f): checkpoint applies under JVP.
    jvp = pe.trace_to_jaxpr(jvp_fun, avals + tangent_avals)
    unknowns = [False] * len(avals) + [True] * len(tangent_avals)
    known, _, _, num_res = pe.partial_eval_jaxpr(jvp.jaxpr, unknowns, [False] * len(jvp.jaxpr.outvars),
                                                 jvp.consts)
    kj = known.jaxpr
    producers = {v: (i, e) for i, e in enumerate(kj.eqns) for v in e.outvars}
    names = _argument_names(f, args, kwargs, in_tree, len(leaves))
    # Listed as JAX lists them: literals, constants, arguments (in argument order), then
    # computed values in the order the program computes them.
    literals, args, consts, computed = [], [], [], []
    for v in kj.outvars[len(kj.outvars) - num_res:]:
        if type(v) is not Var:
            literals.append((v.aval, "from a literal"))
        elif v in kj.invars:
            k = kj.invars.index(v)
            args.append((k, v.aval, f"from the argument {names[k]}"))
        elif v in kj.constvars:
            consts.append((v.aval, "from a constant"))
        else:
            i, eqn = producers[v]
            what = (f"named {eqn.params['name']!r}" if eqn.primitive is name_p
                    else f"output of {eqn.primitive.name}")
            if eqn.source_info is not None:
                what += f" from {source_info.summarize(eqn.source_info)}"
            computed.append((i, v.aval, what))
    return (literals + consts + [(aval, what) for _, aval, what in sorted(args, key=lambda a: a[0])]
            + [(aval, what) for _, aval, what in sorted(computed, key=lambda c: c[0])])


def _argument_names(f, args, kwargs, in_tree, n):
    try:
        bound = inspect.signature(f).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return [f"args[{i}]" for i in range(n)]
    names = []
    for pname, val in bound.arguments.items():
        paths = tree_util.tree_flatten_with_path(val)[0]
        for path, _ in paths:
            names.append(pname + "".join(str(k) for k in path))
    return names if len(names) == n else [f"args[{i}]" for i in range(n)]


def print_saved_residuals(f, *args, **kwargs):
    """Prints ``saved_residuals``: one line per value reverse mode saves."""
    for aval, what in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short(short_dtypes=True)} {what}")


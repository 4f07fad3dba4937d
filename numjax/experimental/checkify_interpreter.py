"""checkify as an interpreter: run a jaxpr while threading an ``Error`` value through it.

``check`` binds ``check_p``, whose operands are the leaves of an ``Error`` (failure flags,
codes, payloads) and whose ``err_tree`` param is that Error's treedef. Outside ``checkify``
the primitive is an effect: eagerly it raises ``JaxRuntimeError``; staged into a compiled
program it cannot run, and lowering it raises JAX's "not functionalized" ValueError.

``checkify`` *functionalizes* it: ``checkify_jaxpr`` evaluates each equation with the rule
of ``error_checks`` for its primitive, a rule being
``(error, enabled_errors, *vals_in, **params) -> (error, vals_out)``. ``check_p``'s rule
merges its error into the threaded one instead of raising; the automatic checks (NaN,
division by zero, out-of-bounds indices) bind the primitive and add a failure flag; the
control-flow rules re-issue ``cond``/``scan``/``while_loop``/``jit`` through the public API
with Python bodies that interpret the original bodies with the error threaded (in the carry
for loops, as an operand and result for branches). A loop or branch must return an Error of
one fixed structure, so its possible error slots are found first (by tracing the body) and
the incoming error gets a never-failing placeholder for each slot it lacks.
"""
import numpy as np

from .. import core, tree_util
from ..interpreters import ad, batching, mlir
from ..interpreters import partial_eval as pe
from ..jaxpr import Literal, _literal_value, param_printers, sub_jaxprs
from ..lax._base import make_primitive
from .checkify_errors import JaxRuntimeError, init_error, update_error

__all__ = ["check_p", "check_error_value", "checkify_jaxpr", "error_checks"]


# ---------------------------------------------------------------- check_p, the effect

def _check_impl(*args, err_tree, debug):
    if debug:
        return []   # a debug_check only fails when checkified
    exc = tree_util.tree_unflatten(err_tree, args).get_exception()
    if exc is not None:
        raise JaxRuntimeError(str(exc)) from exc
    return []


check_p = make_primitive("check", _check_impl, lambda *avals, err_tree, debug: [],
                         multiple_results=True)
pe.effectful_primitives.add(check_p)      # no results, yet never dead code
param_printers[check_p] = lambda p: {"debug": p["debug"]}

FUNCTIONALIZATION_ERROR = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This probably "
    "means you tried to stage (jit/scan/pmap/...) a `check` without functionalizing it through "
    "`checkify.checkify`.")


def _check_lowering(*args, err_tree, debug):
    # A compiled program cannot raise a Python exception; a debug_check compiles to nothing.
    if debug:
        return []
    raise ValueError(FUNCTIONALIZATION_ERROR)


mlir.register_lowering(check_p, mlir.lower_fun(_check_lowering, multiple_results=True))


def _check_jvp(primals, tangents, *, err_tree, debug):
    # Check the primal values; tangents carry no failure.
    check_p.bind(*primals, err_tree=err_tree, debug=debug)
    return [], []


ad.jvp_rules[check_p] = _check_jvp


def _check_batch(vals, dims, *, err_tree, debug):
    # The vmapped error is reduced to one failure (see _reduce_any_error) and checked unbatched.
    size = batching.axis_size_of(vals, dims)
    vals = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    check_error_value(tree_util.tree_unflatten(err_tree, vals), debug=debug)
    return [], []


batching.batch_rules[check_p] = _check_batch


def check_error_value(error, debug=False):
    """Bind ``check_p`` on ``error``: raise now if it holds a failure and nothing is traced."""
    if any(np.shape(p) for p in error._pred.values()):
        error = _reduce_any_error(error)
    leaves, treedef = tree_util.flatten_traced(error)
    return check_p.bind(*leaves, err_tree=treedef, debug=debug)


def _reduce_any_error(error):
    """One unbatched slot per batched one. As JAX picks it (the last index of a stable
    argsort of the flags), this is the last failing element, or the last element if none."""
    from .. import numpy as jnp
    out = init_error
    for effect, pred in error._pred.items():
        i = jnp.argsort(jnp.ravel(pred))[-1]
        pick = lambda x: jnp.reshape(x, (-1,) + jnp.shape(x)[jnp.ndim(pred):])[i]  # noqa: E731
        out = out._update(effect, pick(pred), pick(error._code[effect]), {},
                          [pick(x) for x in error._payload[effect]])
    return out._replace(error._metadata)


# ---------------------------------------------------------------- the interpreter

error_checks = {}


def checkify_jaxpr(jaxpr, consts, enabled_errors, error, *args):
    """Evaluate ``jaxpr`` on ``args`` with ``error`` threaded through: (error, outputs)."""
    env = {}

    def read(v):
        return _literal_value(v) if type(v) is Literal else env[v]

    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        vals_in = [read(v) for v in eqn.invars]
        rule = error_checks.get(eqn.primitive)
        if rule is not None:
            error, outs = rule(error, enabled_errors, *vals_in, **eqn.params)
        else:
            _refuse_unhandled(eqn, enabled_errors)
            outs = eqn.primitive.bind(*vals_in, **eqn.params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        env.update(zip(eqn.outvars, outs))
    return error, [read(v) for v in jaxpr.outvars]


def _refuse_unhandled(eqn, enabled_errors):
    # A primitive holding jaxprs that this interpreter has no rule for would hide their checks.
    for sub in sub_jaxprs(eqn.params):
        if needs_checks(sub, enabled_errors):
            raise NotImplementedError(
                f"checkify of a '{eqn.primitive.name}' whose body has checks is not supported "
                "by numjax (supported: jit, cond/switch, scan/fori_loop, while_loop, custom_jvp, "
                "custom_vjp)")


def needs_checks(jaxpr, enabled_errors):
    """Whether interpreting ``jaxpr`` can add to the error: it binds ``check_p`` or a
    primitive with an enabled automatic check, here or in a nested jaxpr."""
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        if prim is check_p or automatic_checks_of.get(prim, frozenset()) & enabled_errors:
            return True
        if any(needs_checks(sub, enabled_errors) for sub in sub_jaxprs(eqn.params)):
            return True
    return False


def _discharge_check(error, enabled_errors, *args, err_tree, debug):
    """``check_p`` under checkify: its failures join the threaded error instead of raising.
    Kinds not enabled are dropped (as JAX does today)."""
    new_error = tree_util.tree_unflatten(err_tree, args)
    for effect, pred in new_error._pred.items():
        if effect.error_type in enabled_errors:
            error = update_error(error, pred, new_error._code[effect], {},
                                 new_error._payload[effect], effect)
    return error._replace({**new_error._metadata, **error._metadata}), []


error_checks[check_p] = _discharge_check


# ---------------------------------------------------------------- nested jaxprs

def _flatten_error(error):
    leaves, treedef = tree_util.flatten_traced(error)
    return list(leaves), treedef


def _avals(xs):
    return [core.get_aval(x) for x in xs]


def _effects_added(fun, error, avals):
    """The error slots ``fun(error, *vals) -> (error, outs)`` may fill, found by tracing it."""
    leaves, treedef = _flatten_error(error)
    found = []

    def traced(*flat):
        err, _ = fun(tree_util.tree_unflatten(treedef, flat[:len(leaves)]), *flat[len(leaves):])
        found.append(err.effects)
        return []
    pe.trace_to_jaxpr(traced, _avals(leaves) + list(avals))
    return found[-1]


def _interpret(jaxpr, enabled_errors):
    return lambda error, *args: checkify_jaxpr(jaxpr, (), enabled_errors, error, *args)


def _jit_rule(error, enabled_errors, *args, jaxpr, name):
    from ..dispatch import bind_jit, jit_p
    if not needs_checks(jaxpr.jaxpr, enabled_errors):
        return error, jit_p.bind(*args, jaxpr=jaxpr, name=name)
    leaves, treedef = _flatten_error(error)
    result = []

    def checked(*flat):
        err = tree_util.tree_unflatten(treedef, flat[:len(leaves)])
        err, outs = checkify_jaxpr(jaxpr.jaxpr, jaxpr.consts, enabled_errors, err, *flat[len(leaves):])
        err_leaves, out_treedef = _flatten_error(err)
        result.append(out_treedef)
        return err_leaves + list(outs)
    closed = pe.trace_to_jaxpr(checked, _avals(leaves) + _avals(args))
    outs = bind_jit(leaves + list(args), closed, name)
    n = result[-1].num_leaves
    return tree_util.tree_unflatten(result[-1], outs[:n]), outs[n:]


def _cond_rule(error, enabled_errors, index, *ops, branches):
    from ..lax import control_flow
    if not any(needs_checks(b, enabled_errors) for b in branches):
        return error, control_flow.cond_p.bind(index, *ops, branches=branches)
    effects = set(error.effects)
    for branch in branches:
        effects |= _effects_added(_interpret(branch, enabled_errors), error, _avals(ops))
    error = error._add_placeholder_effects(effects)
    leaves, treedef = _flatten_error(error)
    metadata = {}

    def branch_fun(branch):
        def run(err_leaves, vals):
            err, outs = checkify_jaxpr(branch, (), enabled_errors,
                                       tree_util.tree_unflatten(treedef, err_leaves), *vals)
            metadata.update(err._metadata)
            return _flatten_error(err)[0], outs
        return run
    out_leaves, outs = control_flow.switch(index, [branch_fun(b) for b in branches], leaves, list(ops))
    # Every branch returns the placeholder-completed slots, so the input treedef fits.
    return tree_util.tree_unflatten(treedef, out_leaves)._replace({**error._metadata, **metadata}), outs


def _scan_rule(error, enabled_errors, *args, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    from ..lax import control_flow
    if not needs_checks(jaxpr, enabled_errors):
        return error, control_flow.scan_p.bind(*args, jaxpr=jaxpr, length=length, reverse=reverse,
                                               num_consts=num_consts, num_carry=num_carry, unroll=unroll)
    consts, carry, xs = args[:num_consts], args[num_consts:num_consts + num_carry], args[num_consts + num_carry:]
    x_avals = [a.update(shape=a.shape[1:]) for a in _avals(xs)]
    body = _interpret(jaxpr, enabled_errors)
    error = error._add_placeholder_effects(
        error.effects | _effects_added(body, error, _avals(consts) + _avals(carry) + x_avals))
    leaves, treedef = _flatten_error(error)
    metadata = {}

    def step(c, x):
        err_leaves, vals = c
        err, outs = body(tree_util.tree_unflatten(treedef, err_leaves), *consts, *vals, *x)
        metadata.update(err._metadata)
        return (_flatten_error(err)[0], outs[:num_carry]), outs[num_carry:]
    (out_leaves, carry_out), ys = control_flow.scan(step, (leaves, list(carry)), list(xs), length=length,
                                                    reverse=reverse, unroll=unroll)
    out_error = tree_util.tree_unflatten(treedef, out_leaves)
    return out_error._replace({**error._metadata, **metadata}), list(carry_out) + list(ys)


def _while_rule(error, enabled_errors, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    from ..lax import control_flow
    if not (needs_checks(cond_jaxpr, enabled_errors) or needs_checks(body_jaxpr, enabled_errors)):
        return error, control_flow.while_p.bind(*args, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                                                cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
    cconsts, bconsts = args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = args[cond_nconsts + body_nconsts:]
    cond_fun, body_fun = _interpret(cond_jaxpr, enabled_errors), _interpret(body_jaxpr, enabled_errors)
    # The first test of the predicate runs before the loop; each later one ends a body step.
    error, _ = cond_fun(error, *cconsts, *carry)

    def step(err, *vals):
        err, vals = body_fun(err, *bconsts, *vals)
        err, _ = cond_fun(err, *cconsts, *vals)
        return err, vals
    error = error._add_placeholder_effects(error.effects | _effects_added(step, error, _avals(carry)))
    leaves, treedef = _flatten_error(error)
    metadata = {}

    def loop_cond(c):
        # The predicate's own failures were recorded by the step before; here only its value.
        _, (pred,) = cond_fun(tree_util.tree_unflatten(treedef, c[0]), *cconsts, *c[1])
        return pred

    def loop_body(c):
        err, vals = step(tree_util.tree_unflatten(treedef, c[0]), *c[1])
        metadata.update(err._metadata)
        return _flatten_error(err)[0], vals
    out_leaves, out = control_flow.while_loop(loop_cond, loop_body, (leaves, list(carry)))
    return tree_util.tree_unflatten(treedef, out_leaves)._replace({**error._metadata, **metadata}), out


def _custom_call_rule(prim):
    # The custom rule only matters to differentiation outside checkify; when the function
    # has checks it is interpreted inline, its checks threaded like any other.
    def rule(error, enabled_errors, *args, call_jaxpr, **params):
        if not needs_checks(call_jaxpr.jaxpr, enabled_errors):
            return error, prim.bind(*args, call_jaxpr=call_jaxpr, **params)
        return checkify_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, enabled_errors, error, *args)
    return rule


def _register_control_flow_rules():
    from ..custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
    from ..dispatch import jit_p
    from ..lax.control_flow import cond_p, scan_p, while_p
    error_checks.update({jit_p: _jit_rule, cond_p: _cond_rule, scan_p: _scan_rule, while_p: _while_rule,
                         custom_jvp_call_p: _custom_call_rule(custom_jvp_call_p),
                         custom_vjp_call_p: _custom_call_rule(custom_vjp_call_p)})


_register_control_flow_rules()

# primitive -> the automatic error kinds its rule may add (filled in by checkify_automatic).
automatic_checks_of = {}

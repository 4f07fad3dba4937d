"""jax.ad_checkpoint: checkpoint (remat), its policies, checkpoint_name and residual reports.

A *policy* is a predicate ``policy(primitive, *avals, **params) -> bool``: may the value an
equation computes be saved for the backward pass (True) or must it be recomputed (False)?
``checkpoint_policies`` holds JAX's set of them.  numjax's ``checkpoint`` honours the two ends
of the range: ``everything_saveable`` differentiates as without checkpoint (every residual
saved), and every other policy saves only the checkpointed function's inputs and recomputes
the rest (``nothing_saveable``).  Policies in between (dots, names) are accepted but not yet
finer-grained than that: they recompute the dots and named values too.

``print_saved_residuals(f, *args)`` lists what reverse mode saves: one line per residual,
``f32[3] from the argument x`` or ``f32[3] output of cos from file.py:6:9 (g)``, the user's
line that traced the operation (``source_info.py``).
"""
import inspect
import types

from . import core, source_info, tree_util
from .custom_derivatives import checkpoint as _remat_checkpoint
from .interpreters import ad, batching
from .interpreters import partial_eval as pe
from .jaxpr import Var
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
    names = set(names_not_to_save)
    return lambda prim, *avals, **params: not (prim is name_p and params["name"] in names)


def save_from_both_policies(policy_1, policy_2):
    return lambda prim, *avals, **params: (policy_1(prim, *avals, **params)
                                           or policy_2(prim, *avals, **params))


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """Dots without batch dimensions are kept (numjax has one memory space: no offloading)."""
    return dots_with_no_batch_dims_saveable


def save_and_offload_only_these_names(*, names_which_can_be_saved, names_which_can_be_offloaded,
                                      offload_src, offload_dst):
    names = set(names_which_can_be_saved) | set(names_which_can_be_offloaded)
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
    """``fun`` whose reverse-mode derivative recomputes its intermediates from its inputs
    instead of saving them (see the module docstring for which policies are honoured)."""
    if policy is everything_saveable:
        return fun
    return _remat_checkpoint(fun, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums)


remat = checkpoint


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


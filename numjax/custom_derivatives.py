"""custom_jvp and custom_vjp (checkpoint, which shares their helpers, is in ad_checkpoint.py).

A custom rule applies when the innermost transformation seeing the call is a
JVP: the call is then answered by the user's rule instead of differentiating
through ``fun``. Under jit alone the function is simply traced. Reverse mode
sees custom_vjp through ``custom_lin``, a linear primitive whose transpose is
the user's ``bwd``.
"""
import functools
import inspect

from . import core, dtypes, tree_util
from .interpreters import ad, batching
from .jaxpr import ClosedJaxpr, param_printers
from .lax._base import make_primitive
from .numpy._util import asarray_leaf


def _leaf(x):
    return x if isinstance(x, core.Tracer) else asarray_leaf(x)


def _resolve_args(fun, args, kwargs):
    if not kwargs:
        return args
    sig = inspect.signature(fun)
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.arguments.values())


def _split_nondiff(args, nondiff_argnums):
    nondiff = [args[i] for i in nondiff_argnums]
    diff = tuple(a for i, a in enumerate(args) if i not in nondiff_argnums)
    return nondiff, diff


def _jvp_trace_of(leaves):
    if core._no_trace_active():
        return None
    top = core.find_top_trace(leaves)
    return top if isinstance(top, ad.JVPTrace) else None


def _unpack(trace, leaves):
    primals, tangents = [], []
    for x in leaves:
        if isinstance(x, ad.JVPTracer) and x._trace.main is trace.main:
            primals.append(x.primal)
            tangents.append(x.tangent)
        else:
            primals.append(x)
            tangents.append(ad.Zero(core.get_aval(_leaf(x))))
    return primals, tangents


def _known_value(x):
    """A value that linearize already knows, as the value itself.  A rule that calls its own
    function on its primals (``ans = f(x)``) then sees them as JAX shows them under grad,
    concrete or traced by the transformation below, so Python control flow on them works
    and an outer JVP still answers the call by the rule."""
    from .interpreters.partial_eval import PETracer
    while isinstance(x, PETracer) and x.pval.is_known:
        x = x.pval.const
    return x


def _prepare_call(custom, args, kwargs):
    """Split a call of a custom-rule function into the JVP trace seeing it (None when no
    JVP applies) and that trace's primals and tangents of the differentiable arguments."""
    args = tree_util.map_traced(_known_value, _resolve_args(custom.fun, args, kwargs))
    nondiff, diff = _split_nondiff(args, custom.nondiff_argnums)
    leaves, tree = tree_util.flatten_traced(diff)
    trace = _jvp_trace_of(leaves)
    if trace is None:
        return args, nondiff, tree, None, None, None
    primals, tangents = _unpack(trace, leaves)
    return args, nondiff, tree, trace, primals, tangents


class custom_jvp:
    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp, symbolic_zeros=False):
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        def jvp(primals, tangents):
            ans = self(*primals)
            out = None
            for fn, t in zip(jvps, tangents):
                if fn is None:
                    continue
                contrib = fn(t, ans, *primals)
                out = contrib if out is None else tree_util.map_traced(lambda a, b: a + b, out, contrib)
            if out is None:
                out = tree_util.map_traced(lambda a: a * 0, ans)
            return ans, out
        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {self.__name__} using defjvp.")
        return _call_with_rule(self, custom_jvp_call_p, _custom_jvp_rule, args, kwargs)


def _custom_jvp_rule(custom, nondiff, tree):
    """The user's JVP rule on flat (primals, tangents) -> (outputs, output tangents)."""
    def rule(primals, tangents):
        p_args = tree_util.tree_unflatten(tree, primals)
        t_args = tree_util.tree_unflatten(tree, [ad.instantiate(t) for t in tangents])
        pair = custom.jvp(*nondiff, tuple(p_args), tuple(t_args))
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"Custom JVP rule {_name(custom.jvp)} for function {custom.__name__} must produce "
                            "a pair (list or tuple of length two) representing primal and tangent "
                            f"outputs, but got {pair!r}.")
        out_leaves, out_tree = tree_util.flatten_traced(pair[0])
        t_leaves, t_tree = tree_util.flatten_traced(pair[1])
        if out_tree != t_tree:
            raise TypeError("Custom JVP rule must produce primal and tangent outputs with equal container "
                            f"(pytree) structures, but got {out_tree} and {t_tree} respectively.")
        out_leaves, t_leaves = [_leaf(p) for p in out_leaves], [_leaf(t) for t in t_leaves]
        for p, t in zip(out_leaves, t_leaves):
            _check_jvp_tangent(core.get_aval(p), core.get_aval(t))
        return out_leaves, t_leaves, out_tree
    return _Rule(rule, getattr(custom.jvp, "__name__", "jvp"))


def _name(fn):
    return getattr(fn, "__name__", type(fn).__name__)


def _check_jvp_tangent(primal_aval, tangent_aval):
    """A custom JVP rule's tangent output has the tangent type of its primal output."""
    expected = ad._tangent_aval(primal_aval)
    float_primal = dtypes.kind(primal_aval.dtype) in "fc"
    if tangent_aval.shape != expected.shape or (float_primal and tangent_aval.dtype != expected.dtype):
        raise TypeError("Custom JVP rule must produce primal and tangent outputs with corresponding shapes "
                        f"and dtypes. Expected {expected.str_short()} (tangent type of "
                        f"{primal_aval.str_short()}) but got {tangent_aval.str_short()}.")


def _call_with_rule(custom, prim, make_rule, args, kwargs):
    """``custom.fun(*args)``, answered by its rule when a JVP sees the call, and staged as
    one ``prim`` equation (which keeps the rule) under any other trace."""
    args, nondiff, tree, trace, primals, tangents = _prepare_call(custom, args, kwargs)
    if trace is None and _only_evaluated(args):
        return custom.fun(*args)
    rule = make_rule(custom, nondiff, tree)
    if trace is None:
        return _stage(custom, prim, rule, args, nondiff, tree)
    out_leaves, t_leaves, out_tree = rule(primals, tangents)
    return tree_util.tree_unflatten(out_tree, [ad.JVPTracer(trace, p, t) for p, t in zip(out_leaves, t_leaves)])


def _only_evaluated(args):
    """Whether no transformation sees ``args`` (ops on them evaluate now): no trace is active,
    or the active ones (linearize's partial evaluation) have already known them away."""
    if core._no_trace_active():
        return True
    leaves = [x for x in tree_util.leaves_traced(args) if isinstance(x, core.Tracer)]
    return isinstance(core.find_top_trace(leaves), core.EvalTrace)


class _Rule:
    """A custom rule as an equation parameter: callable, printed by its name."""

    def __init__(self, fn, name):
        self.fn, self.name = fn, name

    def __call__(self, *args):
        return self.fn(*args)

    def __repr__(self):
        return self.name


# ---------------------------------------------------------------- custom_vjp

def _custom_lin_impl(*args, num_res, bwd, out_avals, in_tree, out_tree, nondiff):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


custom_lin_p = make_primitive("custom_lin", _custom_lin_impl,
                              lambda *avals, out_avals, **_: list(out_avals), multiple_results=True)


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals, in_tree, out_tree, nondiff):
    res = args[:num_res]
    cts = [ad.instantiate(c) if type(c) is ad.Zero else c for c in cts]
    res_tree_val = res[0] if len(res) == 1 and isinstance(res[0], _Opaque) else None
    residuals = res_tree_val.value if res_tree_val is not None else tree_util.tree_unflatten(in_tree[1], res)
    ct_out = tree_util.tree_unflatten(out_tree, cts)
    ct_in = bwd(*nondiff, residuals, ct_out)
    ct_leaves = _bwd_cotangents(ct_in, in_tree[0])
    flat = []
    for (where, c), aval in zip(ct_leaves, in_tree[2]):
        if c is not None:
            _check_bwd_shape(where, core.get_aval(_leaf(c)), aval)
        flat.append(ad.zeros_like_aval(aval) if c is None else c)
    return [None] * num_res + flat


def _bwd_cotangents(ct_in, args_tree):
    """(where, cotangent) per differentiable input leaf, from ``bwd``'s output (None: zeros),
    with JAX's TypeError when its structure is not the args tuple's."""
    arg_trees = args_tree.children()
    is_none = lambda x: x is None  # noqa: E731
    if not isinstance(ct_in, (tuple, list)) or len(ct_in) != len(arg_trees):
        raise _bwd_structure_error(tree_util.structure_traced(ct_in, is_leaf=is_none), args_tree)
    out = []
    for k, (arg_tree, ct) in enumerate(zip(arg_trees, ct_in)):
        if ct is None:
            out.extend((f"output[{k}]", None) for _ in range(arg_tree.num_leaves))
            continue
        leaves, ct_tree = tree_util.flatten_traced(ct, is_leaf=is_none)
        if ct_tree != arg_tree:
            raise _bwd_structure_error(tree_util.structure_traced(tuple(ct_in), is_leaf=is_none), args_tree)
        out.extend((f"output[{k}]" if len(leaves) == 1 else f"output[{k}] leaf {i}", c)
                   for i, c in enumerate(leaves))
    return out


def _bwd_structure_error(got, expected):
    return TypeError("Custom VJP bwd rule must produce an output with the same container (pytree) structure "
                     "as the args tuple of the primal function, and in particular must produce a tuple of "
                     "length equal to the number of arguments to the primal function, but got bwd output "
                     f"structure {got} for primal input structure {expected}. Return one cotangent (or "
                     "None) per differentiable argument, as a tuple.")


def _check_bwd_shape(where, ct_aval, aval):
    if ct_aval.shape != aval.shape:
        raise ValueError("Custom VJP bwd rule must produce an output with the same type as the args tuple "
                         f"of the primal function, but at {where} the bwd rule produced an output of type "
                         f"{ct_aval.str_short()} corresponding to an input of type {aval.str_short()}, so "
                         "the shapes do not match")


ad.transpose_rules[custom_lin_p] = _custom_lin_transpose


class _Opaque:
    """Residuals that are not arrays travel through the primitive as one opaque leaf."""

    def __init__(self, value):
        self.value = value


class custom_vjp:
    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {self.__name__} using defvjp.")
        return _call_with_rule(self, custom_vjp_call_p, _custom_vjp_rule, args, kwargs)


def _custom_vjp_rule(custom, nondiff, tree):
    """Forward mode of a custom_vjp function: ``fwd`` now, and a ``custom_lin`` equation
    (transposed by ``bwd``) for the tangents."""
    def rule(primals, tangents):
        pair = custom.fwd(*nondiff, *tree_util.tree_unflatten(tree, primals))
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            fwd = _name(custom.fwd)
            raise TypeError(f"Custom VJP fwd rule {fwd} for function {custom.__name__} must produce a pair "
                            "(list or tuple of length two) where the first element represents the primal "
                            "output and the second element represents residuals (values stored from the "
                            f"forward pass for use on the backward pass), but instead of a pair the fwd "
                            f"rule {fwd} produced {pair!r}.")
        out, res = pair
        out_leaves, out_tree = tree_util.flatten_traced(out)
        res_leaves, res_tree = tree_util.flatten_traced(res)
        in_avals = tuple(ad._tangent_aval(core.get_aval(_leaf(p))) for p in primals)
        out_avals = tuple(ad._tangent_aval(core.get_aval(_leaf(o))) for o in out_leaves)
        t_outs = custom_lin_p.bind(*[_leaf(r) for r in res_leaves], *map(ad.instantiate, tangents),
                                   num_res=len(res_leaves), bwd=custom.bwd, out_avals=out_avals,
                                   in_tree=(tree, res_tree, in_avals), out_tree=out_tree,
                                   nondiff=tuple(nondiff))
        return [_leaf(o) for o in out_leaves], t_outs, out_tree
    return _Rule(rule, getattr(custom.fwd, "__name__", "fwd"))


# ---------------------------------------------------------------- staged custom calls
# Under jit (or vmap) a custom-rule function is staged as one equation holding its
# traced body and its rule, as JAX's custom_jvp_call / custom_vjp_call: a transformation
# applied later to that jaxpr (grad of a jitted function) still answers it by the rule.
# The closed-over values of the body are its leading operands (``num_consts``).

def _stage(custom, prim, rule, args, nondiff, tree):
    from .interpreters import partial_eval as pe
    diff_leaves = [_leaf(x) for x in tree_util.leaves_traced(_split_nondiff(args, custom.nondiff_argnums)[1])]
    out_tree_box = []

    def flat(*leaves):
        full = list(args)
        diff = iter(tree_util.tree_unflatten(tree, leaves))
        full = [a if i in custom.nondiff_argnums else next(diff) for i, a in enumerate(full)]
        out_leaves, out_tree = tree_util.flatten_traced(custom.fun(*full))
        out_tree_box.append(out_tree)
        return [_leaf(o) for o in out_leaves]
    jaxpr, consts = pe.closure_convert(pe.trace_to_jaxpr(flat, [core.get_aval(x) for x in diff_leaves]))
    outs = prim.bind(*consts, *diff_leaves, call_jaxpr=ClosedJaxpr(jaxpr, []), num_consts=len(consts),
                     rule=rule, name=custom.__name__)
    return tree_util.tree_unflatten(out_tree_box[0], outs)


def _custom_call_impl(*args, call_jaxpr, **_):
    from .jaxpr import eval_jaxpr
    return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)


def _custom_call_abstract(*avals, call_jaxpr, **_):
    return list(call_jaxpr.out_avals)


custom_jvp_call_p = make_primitive("custom_jvp_call", _custom_call_impl, _custom_call_abstract,
                                   multiple_results=True)
custom_vjp_call_p = make_primitive("custom_vjp_call", _custom_call_impl, _custom_call_abstract,
                                   multiple_results=True)


def _custom_call_jvp(primals, tangents, *, call_jaxpr, num_consts, rule, name):
    outs, t_outs, _ = rule(primals[num_consts:], tangents[num_consts:])
    return outs, t_outs


def _custom_call_batch(prim):
    @batching.needs_axis
    def batch(vals, dims, *, axis_data, call_jaxpr, num_consts, rule, name):
        size = axis_data.size
        vals = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
        body = batching.batch_jaxpr(call_jaxpr.jaxpr, axis_data, [0] * len(vals))

        def batched_rule(primals, tangents):
            n, k = len(primals), len(call_jaxpr.out_avals)
            box = []

            def flat(*xs):
                outs, t_outs, out_tree = rule(xs[:n], xs[n:])
                box.append(out_tree)
                return list(outs) + list(t_outs)
            outs, out_dims = batching.batch_flat(flat, size, axis_data.name, list(primals) + list(tangents),
                                                 [0] * (2 * n))
            outs = [batching.matchaxis(o, d, 0, size) for o, d in zip(outs, out_dims)]
            return outs[:k], outs[k:], box[0]
        outs = prim.bind(*vals, call_jaxpr=ClosedJaxpr(body, []), num_consts=num_consts,
                         rule=_Rule(batched_rule, rule.name), name=name)
        return outs, [0] * len(outs)
    return batch


def _print_custom_call(params):
    # JAX shows num_consts only when the body closes over values.
    shown = {"name": params["name"], "call_jaxpr": params["call_jaxpr"], "jvp": params["rule"]}
    if params["num_consts"]:
        shown["num_consts"] = params["num_consts"]
    return dict(shown, symbolic_zeros=False)


for _prim in (custom_jvp_call_p, custom_vjp_call_p):
    ad.jvp_rules[_prim] = _custom_call_jvp
    batching.batch_rules[_prim] = _custom_call_batch(_prim)
    param_printers[_prim] = _print_custom_call

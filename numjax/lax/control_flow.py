"""Control flow: cond/switch, while_loop, fori_loop, scan, map.

Each is a higher-order primitive holding jaxprs whose closed-over values are
explicit leading operands (``closure_convert``). Eagerly they run the Python
loop over the evaluated jaxprs; under jit they lower to real loops and
branches in the generated Numba function.
"""
import numpy as np

from .. import core, dtypes, tree_util
from ..array import Array
from ..interpreters import ad, batching
from ..interpreters import partial_eval as pe
from ..jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr, param_printers
from ._base import make_primitive


def _leaf(x):
    if isinstance(x, core.Tracer):
        return x
    from ..numpy._util import asarray_leaf
    return asarray_leaf(x)


def _trace(fun, in_tree, avals):
    """Trace ``fun`` (pytree in/out) at ``avals``: (closure-converted jaxpr, consts, out tree)."""
    out_tree = []

    def flat(*xs):
        out = fun(*tree_util.tree_unflatten(in_tree, xs))
        leaves, tree = tree_util.tree_flatten(out)
        out_tree.append(tree)
        return [_leaf(o) for o in leaves]
    closed = pe.trace_to_jaxpr(flat, avals)
    jaxpr, consts = pe.closure_convert(closed)
    return jaxpr, consts, out_tree[0]


def _avals(xs):
    return [core.get_aval(_leaf(x)) for x in xs]


def _run(jaxpr, *args):
    return eval_jaxpr(jaxpr, [], *args)


def _type_str(avals):
    return ", ".join(a.str_short(True) for a in avals)


# ---------------------------------------------------------------- cond / switch

def _cond_impl(index, *ops, branches):
    i = int(np.clip(int(np.asarray(getattr(index, "_value", index))), 0, len(branches) - 1))
    return _run(branches[i], *ops)


def _cond_abstract(index, *ops, branches):
    return [v.aval for v in branches[0].outvars]


cond_p = make_primitive("cond", _cond_impl, _cond_abstract, multiple_results=True)
param_printers[cond_p] = lambda p: {"branches": p["branches"]}


def _check_branch_outputs(jaxprs, trees, what):
    first = [v.aval.update(weak_type=False) for v in jaxprs[0].outvars]
    for j, t in zip(jaxprs[1:], trees[1:]):
        other = [v.aval.update(weak_type=False) for v in j.outvars]
        if t != trees[0] or other != first:
            raise TypeError(f"{what} must have identical types, got\n{trees[0]} with types "
                            f"[{_type_str(first)}]\nand\n{t} with types [{_type_str(other)}].")


def _bind_cond(index, branches_funs, operands):
    leaves, in_tree = tree_util.tree_flatten(operands)
    leaves = [_leaf(x) for x in leaves]
    avals = _avals(leaves)
    traced = [_trace(f, in_tree, avals) for f in branches_funs]
    _check_branch_outputs([t[0] for t in traced], [t[2] for t in traced],
                          "true_fun and false_fun output" if len(traced) == 2 else "branch outputs")
    # Every branch receives every branch's constants, so all share one signature.
    all_consts = [c for t in traced for c in t[1]]
    jaxprs = []
    for k, (jx, consts, _) in enumerate(traced):
        before = sum(len(t[1]) for t in traced[:k])
        jaxprs.append(_pad_inputs(jx, [core.get_aval(c) for c in all_consts], before, len(consts)))
    outs = cond_p.bind(index, *all_consts, *leaves, branches=tuple(jaxprs))
    return tree_util.tree_unflatten(traced[0][2], outs)


def _pad_inputs(jaxpr, const_avals, start, count):
    """``jaxpr`` taking all branches' constants; it reads only its own slice of them."""
    from ..jaxpr import Var
    new_consts = [Var(a) for a in const_avals]
    own = jaxpr.invars[:count]
    rest = jaxpr.invars[count:]
    mapping = dict(zip(own, new_consts[start:start + count]))
    from ..jaxpr import JaxprEqn
    eqns = [JaxprEqn(e.primitive, [mapping.get(v, v) if type(v) is Var else v for v in e.invars],
                     e.outvars, e.params) for e in jaxpr.eqns]
    outvars = [mapping.get(v, v) if type(v) is Var else v for v in jaxpr.outvars]
    return Jaxpr([], new_consts + list(rest), outvars, eqns)


def cond(pred, true_fun, false_fun, *operands):
    pred_aval = core.get_aval(_leaf(pred))
    if pred_aval.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred} of type {pred_aval.str_short()}")
    if pred_aval.dtype != np.bool_ and pred_aval.dtype.kind not in "iu":
        raise TypeError(f"Pred type must be either boolean or number, got {pred_aval.dtype.name}.")
    if core._no_trace_active():
        return true_fun(*operands) if bool(pred) else false_fun(*operands)
    from .elementwise import convert_element_type, ne
    p = _leaf(pred)
    if pred_aval.dtype != np.bool_:
        p = ne(p, Array(np.zeros((), pred_aval.dtype), False))
    index = convert_element_type(p, np.int32)
    return _bind_cond(index, [false_fun, true_fun], operands)


def switch(index, branches, *operands):
    branches = list(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    from .elementwise import clamp, convert_element_type
    idx_aval = core.get_aval(_leaf(index))
    if idx_aval.shape != () or idx_aval.dtype.kind not in "iu":
        raise TypeError(f"Branch index must be scalar integer, got {index} of type {idx_aval.str_short()}")
    if core._no_trace_active():
        return branches[int(np.clip(int(index), 0, len(branches) - 1))](*operands)
    idx = convert_element_type(_leaf(index), np.int32)
    idx = clamp(np.int32(0), idx, np.int32(len(branches) - 1))
    if len(branches) == 1:
        return branches[0](*operands)
    return _bind_cond(idx, branches, operands)


# ---------------------------------------------------------------- while_loop

def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cconsts, bconsts = args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = list(args[cond_nconsts + body_nconsts:])
    while bool(_run(cond_jaxpr, *cconsts, *carry)[0]):
        carry = _run(body_jaxpr, *bconsts, *carry)
    return carry


def _while_abstract(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    return [v.aval for v in body_jaxpr.outvars]


while_p = make_primitive("while", _while_impl, _while_abstract, multiple_results=True)


def while_loop(cond_fun, body_fun, init_val):
    if core._no_trace_active():
        val = init_val
        while bool(cond_fun(val)):
            val = body_fun(val)
        return val
    leaves, in_tree = tree_util.tree_flatten(init_val)
    leaves = [_leaf(x) for x in leaves]
    avals = _avals(leaves)
    cond_jx, cond_consts, _ = _trace(
        lambda *x: cond_fun(tree_util.tree_unflatten(in_tree, x)), _flat_tree(len(avals)), avals)
    body_jx, body_consts, body_tree = _trace(
        lambda *x: body_fun(tree_util.tree_unflatten(in_tree, x)), _flat_tree(len(avals)), avals)
    out_avals = [v.aval for v in cond_jx.outvars]
    if len(out_avals) != 1 or out_avals[0].shape != () or out_avals[0].dtype != np.bool_:
        raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) [{_type_str(out_avals)}].")
    body_avals = [v.aval for v in body_jx.outvars]
    if body_tree != in_tree or [a.update(weak_type=False) for a in body_avals] != \
            [a.update(weak_type=False) for a in avals]:
        raise TypeError("body_fun output and input must have identical types, got\n"
                        f"{body_tree} with types [{_type_str(body_avals)}]\nand\n{in_tree} with types "
                        f"[{_type_str(avals)}].")
    outs = while_p.bind(*cond_consts, *body_consts, *leaves, cond_jaxpr=cond_jx, body_jaxpr=body_jx,
                        cond_nconsts=len(cond_consts), body_nconsts=len(body_consts))
    return tree_util.tree_unflatten(in_tree, outs)


def _flat_tree(n):
    return tree_util.tree_structure(tuple(range(n)))


# ---------------------------------------------------------------- scan

def _scan_impl(*args, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    consts = args[:num_consts]
    carry = list(args[num_consts:num_consts + num_carry])
    xs = args[num_consts + num_carry:]
    ys = []
    for t in (range(length - 1, -1, -1) if reverse else range(length)):
        x_t = [_index(x, t) for x in xs]
        outs = _run(jaxpr, *consts, *carry, *x_t)
        carry, y = list(outs[:num_carry]), outs[num_carry:]
        ys.append(y)
    if reverse:
        ys.reverse()
    y_avals = [v.aval for v in jaxpr.outvars[num_carry:]]
    stacked = [_stack([y[k] for y in ys], a, length) for k, a in enumerate(y_avals)]
    return carry + stacked


def _index(x, t):
    from .indexing import dynamic_index_in_dim
    return dynamic_index_in_dim(x, Array(np.asarray(t, np.int32), False), 0, keepdims=False)


def _stack(vals, aval, length):
    if length == 0:
        return Array(np.zeros((0,) + aval.shape, aval.dtype), aval.weak_type)
    from .shape import concatenate, expand_dims
    return concatenate([expand_dims(v, (0,)) for v in vals], 0)


def _scan_abstract(*avals, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    outs = [v.aval for v in jaxpr.outvars]
    carry, ys = outs[:num_carry], outs[num_carry:]
    return carry + [core.ShapedArray((length,) + a.shape, a.dtype, a.weak_type) for a in ys]


scan_p = make_primitive("scan", _scan_impl, _scan_abstract, multiple_results=True)


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    x_leaves, x_tree = tree_util.tree_flatten(xs)
    x_leaves = [_leaf(x) for x in x_leaves]
    lengths = {core.get_aval(x).shape[0] for x in x_leaves if core.get_aval(x).ndim}
    if any(core.get_aval(x).ndim == 0 for x in x_leaves):
        raise ValueError("scan got value with no leading axis to scan over: "
                         + ", ".join(core.get_aval(x).str_short() for x in x_leaves if core.get_aval(x).ndim == 0))
    if length is not None:
        lengths.add(int(length))
    if len(lengths) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         + ", ".join(str(core.get_aval(x).shape[0]) for x in x_leaves) + ".")
    if not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    n = lengths.pop()
    c_leaves, c_tree = tree_util.tree_flatten(init)
    c_leaves = [_leaf(c) for c in c_leaves]
    c_avals = _avals(c_leaves)
    x_avals = [core.get_aval(x).update(shape=core.get_aval(x).shape[1:]) for x in x_leaves]
    out_tree_box = []

    def body(*flat):
        carry = tree_util.tree_unflatten(c_tree, flat[:len(c_avals)])
        x = tree_util.tree_unflatten(x_tree, flat[len(c_avals):])
        out = f(carry, x)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"scan body output must be a pair, got {out!r}.")
        new_carry, y = out
        cl, ct = tree_util.tree_flatten(new_carry)
        yl, yt = tree_util.tree_flatten(y)
        out_tree_box.append((ct, yt))
        return [_leaf(v) for v in cl] + [_leaf(v) for v in yl]

    closed = pe.trace_to_jaxpr(body, c_avals + x_avals)
    jaxpr, consts = pe.closure_convert(closed)
    ct, yt = out_tree_box[0]
    carry_out = [v.aval for v in jaxpr.outvars[:len(c_avals)]]
    if ct != c_tree or [a.update(weak_type=False) for a in carry_out] != [a.update(weak_type=False) for a in c_avals]:
        raise TypeError("scan carry output and input must have identical types, got\n"
                        f"{ct} with types [{_type_str(carry_out)}]\nand\n{c_tree} with types "
                        f"[{_type_str(c_avals)}].")
    jaxpr = _match_carry_weak_types(jaxpr, c_avals)
    outs = scan_p.bind(*consts, *c_leaves, *x_leaves, jaxpr=jaxpr, length=n, reverse=bool(reverse),
                       num_consts=len(consts), num_carry=len(c_avals), unroll=unroll)
    return (tree_util.tree_unflatten(c_tree, outs[:len(c_avals)]),
            tree_util.tree_unflatten(yt, outs[len(c_avals):]))


def _match_carry_weak_types(jaxpr, c_avals):
    # A weakly typed init (a Python scalar) may come back strongly typed; the carry keeps
    # one type, so the output is cast to the input's weak type (as JAX does).
    from .elementwise import convert_element_type_p
    from ..jaxpr import JaxprEqn, Var
    eqns, outvars = list(jaxpr.eqns), list(jaxpr.outvars)
    for k, a in enumerate(c_avals):
        v = outvars[k]
        if v.aval.weak_type != a.weak_type:
            nv = Var(a)
            eqns.append(JaxprEqn(convert_element_type_p, [v], [nv],
                                 dict(new_dtype=a.dtype, weak_type=a.weak_type, sharding=None)))
            outvars[k] = nv
    return Jaxpr([], jaxpr.invars, outvars, eqns)


def fori_loop(lower, upper, body_fun, init_val, unroll=None):
    static = all(isinstance(v, (int, np.integer)) or (isinstance(v, Array) and v.ndim == 0)
                 for v in (lower, upper))
    if static:
        lo, hi = int(lower), int(upper)
        dt = dtypes.result_type(lower, upper) if not all(type(v) is int for v in (lower, upper)) \
            else dtypes.default_int_dtype()
        # A static trip count becomes a scan, so reverse-mode differentiation works.
        def step(carry, _):
            i, val = carry
            return (i + Array(np.ones((), dt), False), body_fun(i, val)), None
        (_, out), _ = scan(step, (Array(np.asarray(lo, dt), False), init_val), None,
                           length=max(hi - lo, 0))
        return out
    lo, hi = _leaf(lower), _leaf(upper)

    def cond_fun(c):
        return c[0] < c[2]

    def body(c):
        i, val, u = c
        return i + 1, body_fun(i, val), u
    return while_loop(cond_fun, body, (lo, init_val, hi))[1]


def map(f, xs, batch_size=None):  # noqa: A001
    _, ys = scan(lambda c, x: (c, f(x)), (), xs)
    return ys

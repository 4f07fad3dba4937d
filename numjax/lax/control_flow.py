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
from ..api_util import as_leaf as _leaf, flatten_fun_nokwargs
from ._base import make_primitive


def _trace(fun, in_tree, avals):
    """Trace ``fun`` (pytree in/out) at ``avals``: (closure-converted jaxpr, consts, out tree)."""
    flat, out_tree = flatten_fun_nokwargs(fun, in_tree)
    closed = pe.trace_to_jaxpr(flat, avals)
    jaxpr, consts = pe.closure_convert(closed)
    return jaxpr, consts, out_tree[0]


def _avals(xs):
    return [core.get_aval(_leaf(x)) for x in xs]


def _run(jaxpr, *args):
    return eval_jaxpr(jaxpr, [], *args)


# ---------------------------------------------------------------- cond / switch

def _cond_impl(index, *ops, branches):
    i = int(np.clip(int(np.asarray(getattr(index, "_value", index))), 0, len(branches) - 1))
    return _run(branches[i], *ops)


def _cond_abstract(index, *ops, branches):
    return [v.aval for v in branches[0].outvars]


cond_p = make_primitive("cond", _cond_impl, _cond_abstract, multiple_results=True)
param_printers[cond_p] = lambda p: {"branches": p["branches"]}


def _fun_info(f):
    name = getattr(f, "__name__", None) or type(f).__name__
    code = getattr(f, "__code__", None)
    return f"{name} at {code.co_filename}:{code.co_firstlineno}" if code is not None else name


def _node_desc(tree):
    return "a pytree leaf" if tree.node is None else f"a {_PY_TYPES.get(tree.node.name, tree.node.name)}"


_PY_TYPES = {"tuple": "<class 'tuple'>", "list": "<class 'list'>", "dict": "<class 'dict'>",
             "None": "<class 'NoneType'>"}


def _tree_difference(t1, t2):
    """(text1, text2, explanation) for the first difference between two tree structures."""
    if (t1.node is None) != (t2.node is None) or (t1.node is not None and t1.node.from_iter is not t2.node.from_iter):
        return _node_desc(t1), _node_desc(t2), "their Python types differ"
    if len(t1.children()) != len(t2.children()):
        return (f"{_node_desc(t1)} of length {len(t1.children())}", f"{_node_desc(t2)} of length {len(t2.children())}",
                "the lengths do not match")
    if t1.aux != t2.aux:
        return f"{_node_desc(t1)} with keys {t1.aux}", f"{_node_desc(t2)} with keys {t2.aux}", \
            "the pytree node metadata does not match"
    for c1, c2 in zip(t1.children(), t2.children()):
        if c1 != c2:
            return _tree_difference(c1, c2)
    return str(t1), str(t2), "their structures differ"


def _typematch(a, b):
    return a.shape == b.shape and a.dtype == b.dtype


def _mismatch_extra(a, b):
    why = []
    if a.dtype != b.dtype:
        why.append("the dtypes do not match")
    if a.shape != b.shape:
        why.append("the shapes do not match")
    return ", so " + ", and ".join(why) if why else ""


def _leaf_paths(tree):
    from ..vmap_api import _leaf_paths as paths
    return paths(tree_util.tree_unflatten(tree, range(tree.num_leaves)))


def _capitalize(s):
    return s[0].upper() + s[1:]


def _join_diffs(diffs):
    if len(diffs) == 1:
        return f"{_capitalize(diffs[0])}.\n"
    return "\n".join(f"  * {d};" for d in diffs[:-1]) + f"\n  * {diffs[-1]}.\n"


def _check_branch_outputs(api_name, names, funs, jaxprs, trees, ref=0):
    """JAX's errors for branches whose outputs differ: branch ``ref`` against each other."""
    first = [v.aval for v in jaxprs[ref].outvars]
    for k in range(len(jaxprs)):
        if k == ref:
            continue
        other = [v.aval for v in jaxprs[k].outvars]
        n1, n2 = names[ref], names[k]
        head = f"{n1} is {_fun_info(funs[ref])}\n{n2} is {_fun_info(funs[k])}\n\n"
        if trees[k] != trees[ref]:
            a, b, why = _tree_difference(trees[ref], trees[k])
            raise TypeError(f"{api_name} branch outputs must have the same pytree structure, but they differ:\n\n"
                            + head + f"{n1} output is {a} but {n2} output is {b}, so {why}.\n\n"
                            f"Revise {n1} and/or {n2} so that they have the same pytree structure.")
        if not all(_typematch(a, b) for a, b in zip(first, other)):
            paths = _leaf_paths(trees[ref])
            diffs = [f"the output of {n1}{f' at path {p}' if p else ''} has type {a.str_short()} but the "
                     f"corresponding output of {n2} has type {b.str_short()}{_mismatch_extra(a, b)}"
                     for p, a, b in zip(paths, first, other) if not _typematch(a, b)]
            raise TypeError(f"{api_name} branches must have equal output types but they differ.\n\n" + head
                            + _join_diffs(diffs) + f"\nRevise {n1} and/or {n2} so that all output types match.")


def _check_carry_type(name, body_fun, in_tree, in_avals, out_tree, out_avals):
    """JAX's errors for a loop body whose carry output differs from its carry input."""
    import inspect
    try:
        params = list(inspect.signature(body_fun).parameters)
    except (TypeError, ValueError):
        params = []
    carry = params[0] if params else None

    def component(p):
        if carry:
            return f"the input carry component {carry}{p}" if p else f"the input carry {carry}"
        return f"the input carry at path {p}" if p else "the input carry"
    if out_tree != in_tree:
        a, b, why = _tree_difference(in_tree, out_tree)
        raise TypeError(f"{name} function carry input and carry output must have the same pytree structure, "
                        f"but they differ:\n\n{_capitalize(component(''))} is {a} but the corresponding "
                        f"component of the carry output is {b}, so {why}.\n\nRevise the function so that the "
                        "carry output has the same pytree structure as the carry input.")
    if not all(_typematch(a, b) for a, b in zip(in_avals, out_avals)):
        paths = _leaf_paths(in_tree)
        diffs = [f"{component(p)} has type {a.str_short()} but the corresponding output carry component has "
                 f"type {b.str_short()}{_mismatch_extra(a, b)}"
                 for p, a, b in zip(paths, in_avals, out_avals) if not _typematch(a, b)]
        diffs_txt = _join_diffs(diffs) if len(diffs) == 1 else \
            "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"
        raise TypeError(f"{name} function carry input and carry output must have equal types, but they "
                        f"differ:\n\n{diffs_txt}\nRevise the function so that all output types match the "
                        "corresponding input types.")


def _promote_weak_inputs(leaves, in_avals, out_avals):
    """A weakly typed carry init (a Python scalar) takes the type the body gives it, as in JAX."""
    from .elementwise import convert_element_type
    changed = False
    out = list(leaves)
    for k, (a, o) in enumerate(zip(in_avals, out_avals)):
        if a.weak_type and not _typematch(a, o):
            dt = dtypes.promote((a.dtype, True), (o.dtype, o.weak_type))[0]
            if dt != a.dtype:
                out[k] = convert_element_type(leaves[k], dt)
                changed = True
    return out, changed


def _bind_cond(index, branches_funs, operands, api_name, names, ref=0):
    leaves, in_tree = tree_util.flatten_traced(operands)
    leaves = [_leaf(x) for x in leaves]
    avals = _avals(leaves)
    traced = [_trace(f, in_tree, avals) for f in branches_funs]
    _check_branch_outputs(api_name, names, branches_funs, [t[0] for t in traced], [t[2] for t in traced], ref)
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


def _eager_python():
    # Like JAX under disable_jit: concrete control flow runs the Python functions directly.
    # Otherwise the branches/bodies are traced (type checks and all), as JAX does eagerly too.
    from ..config import config
    return config.jax_disable_jit and core._no_trace_active()


_NO_OPERAND = object()


def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    if operand is not _NO_OPERAND:
        # JAX's older single-operand spelling, still accepted: cond(p, f, g, operand=x).
        if operands:
            raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                            f"passed, got operand={operand} and positional operands {operands}")
        operands = (operand,)
    if pred is None:
        raise TypeError("cond predicate is None")
    from ..api_util import is_jax_value
    if isinstance(pred, (list, tuple)) or not is_jax_value(pred):
        raise TypeError(f"Pred must be a scalar, got {pred} of type {type(pred)}")
    pred_aval = core.get_aval(_leaf(pred))
    if pred_aval.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {pred_aval.shape}.")
    if pred_aval.dtype != np.bool_ and dtypes.kind(pred_aval.dtype) not in "iuf":
        raise TypeError(f"Pred type must be either boolean or number, got {pred_aval.dtype.name}.")
    if _eager_python():
        return true_fun(*operands) if bool(pred) else false_fun(*operands)
    from .elementwise import convert_element_type, ne
    p = _leaf(pred)
    if pred_aval.dtype != np.bool_:
        p = ne(p, Array(np.zeros((), pred_aval.dtype), False))
    index = convert_element_type(p, np.int32)
    # Branch 0 is false_fun; JAX's messages compare true_fun (branch 1) against it.
    return _bind_cond(index, [false_fun, true_fun], operands, "cond", ["false_fun", "true_fun"], ref=1)


def switch(index, branches, *operands):
    if not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    branches = list(branches)
    from .elementwise import clamp, convert_element_type
    idx_aval = core.get_aval(_leaf(index))
    if idx_aval.shape != ():
        raise TypeError(f"Branch index must be scalar, got {index} of shape {idx_aval.shape}.")
    if dtypes.kind(idx_aval.dtype) not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {idx_aval.dtype.name}")
    if not branches:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:
        return branches[0](*operands)
    if _eager_python():
        return branches[int(np.clip(int(index), 0, len(branches) - 1))](*operands)
    idx = convert_element_type(_leaf(index), np.int32)
    idx = clamp(np.int32(0), idx, np.int32(len(branches) - 1))
    return _bind_cond(idx, branches, operands, "switch",
                      ["branch 0"] + [f"branch{i}" for i in range(1, len(branches))])


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
    if _eager_python():
        val = init_val
        while bool(cond_fun(val)):
            val = body_fun(val)
        return val
    leaves, in_tree = tree_util.flatten_traced(init_val)
    leaves = [_leaf(x) for x in leaves]

    def trace(avals):
        cond_jx, cond_consts, _ = _trace(
            lambda *x: cond_fun(tree_util.tree_unflatten(in_tree, x)), _flat_tree(len(avals)), avals)
        body_jx, body_consts, body_tree = _trace(
            lambda *x: body_fun(tree_util.tree_unflatten(in_tree, x)), _flat_tree(len(avals)), avals)
        return cond_jx, cond_consts, body_jx, body_consts, body_tree
    avals = _avals(leaves)
    cond_jx, cond_consts, body_jx, body_consts, body_tree = trace(avals)
    if body_tree == in_tree:
        leaves, changed = _promote_weak_inputs(leaves, avals, [v.aval for v in body_jx.outvars])
        if changed:
            avals = _avals(leaves)
            cond_jx, cond_consts, body_jx, body_consts, body_tree = trace(avals)
    out_avals = [v.aval for v in cond_jx.outvars]
    if len(out_avals) != 1 or out_avals[0].shape != () or out_avals[0].dtype != np.bool_:
        raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                        f"[{', '.join(repr(a) for a in out_avals)}].")
    _check_carry_type("while_loop body", body_fun, in_tree, avals, body_tree, [v.aval for v in body_jx.outvars])
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
    # slicing_in_dim's version starts the other axes at zeros of the index's type (int32):
    # under x64 a Python 0 would be int64, and dynamic_slice needs one index type.
    from .slicing_in_dim import dynamic_index_in_dim
    return dynamic_index_in_dim(x, Array(np.asarray(t, np.int32), False), 0, keepdims=False)


def _stack(vals, aval, length):
    if length == 0:
        return Array(np.zeros((0,) + aval.shape, aval.dtype), aval.weak_type)
    from .shape import concatenate, expand_dims
    out = concatenate([expand_dims(v, (0,)) for v in vals], 0)
    if isinstance(out, Array) and out.weak_type != aval.weak_type:
        out = Array(out._value, aval.weak_type)   # per-iteration weak types may vary eagerly
    return out


def _scan_abstract(*avals, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    outs = [v.aval for v in jaxpr.outvars]
    carry, ys = outs[:num_carry], outs[num_carry:]
    return carry + [core.ShapedArray((length,) + a.shape, a.dtype, a.weak_type) for a in ys]


scan_p = make_primitive("scan", _scan_impl, _scan_abstract, multiple_results=True)


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    x_leaves, x_tree = tree_util.flatten_traced(xs)
    x_leaves = [_leaf(x) for x in x_leaves]
    if any(core.get_aval(x).ndim == 0 for x in x_leaves):
        raise ValueError("scan got value with no leading axis to scan over: "
                         + ", ".join(str(x) for x in x_leaves if core.get_aval(x).ndim == 0) + ".")
    sizes = [core.get_aval(x).shape[0] for x in x_leaves]
    if length is not None:
        length = int(length)
        if not all(n == length for n in sizes):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with leading axis "
                             f"sizes {sizes}.")
        n = length
    elif len(set(sizes)) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         + ", ".join(str(k) for k in sizes) + ".")
    elif not sizes:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    else:
        n = sizes[0]
    c_leaves, c_tree = tree_util.flatten_traced(init)
    c_leaves = [_leaf(c) for c in c_leaves]
    x_avals = [core.get_aval(x).update(shape=core.get_aval(x).shape[1:]) for x in x_leaves]

    def trace(c_avals):
        out_tree_box = []

        def body(*flat):
            carry = tree_util.tree_unflatten(c_tree, flat[:len(c_avals)])
            x = tree_util.tree_unflatten(x_tree, flat[len(c_avals):])
            out = f(carry, x)
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise TypeError(f"scan body output must be a pair, got {out!r}.")
            new_carry, y = out
            cl, ct = tree_util.flatten_traced(new_carry)
            yl, yt = tree_util.flatten_traced(y)
            out_tree_box.append((ct, yt, len(cl)))
            return [_leaf(v) for v in cl] + [_leaf(v) for v in yl]

        closed = pe.trace_to_jaxpr(body, c_avals + x_avals)
        jaxpr, consts = pe.closure_convert(closed)
        ct, yt, nc = out_tree_box[0]
        return jaxpr, consts, ct, yt, [v.aval for v in jaxpr.outvars[:nc]]
    c_avals = _avals(c_leaves)
    jaxpr, consts, ct, yt, carry_out = trace(c_avals)
    if ct == c_tree:
        c_leaves, changed = _promote_weak_inputs(c_leaves, c_avals, carry_out)
        if changed:
            c_avals = _avals(c_leaves)
            jaxpr, consts, ct, yt, carry_out = trace(c_avals)
    _check_carry_type("scan body", f, c_tree, c_avals, ct, carry_out)
    # The final carry has the body output's type, weak type included (as JAX 0.10.2 returns it).
    outs = scan_p.bind(*consts, *c_leaves, *x_leaves, jaxpr=jaxpr, length=n, reverse=bool(reverse),
                       num_consts=len(consts), num_carry=len(c_avals), unroll=unroll)
    return (tree_util.tree_unflatten(c_tree, outs[:len(c_avals)]),
            tree_util.tree_unflatten(yt, outs[len(c_avals):]))


def fori_loop(lower, upper, body_fun, init_val, unroll=None):
    static = all(isinstance(v, (int, np.integer)) or (isinstance(v, Array) and v.ndim == 0)
                 for v in (lower, upper))
    if static:
        lo, hi = int(lower), int(upper)
        # As in JAX, static bounds become Python ints: the index is a weakly typed int.
        dt = dtypes.default_int_dtype()

        # A static trip count becomes a scan, so reverse-mode differentiation works.
        def step(carry, _):
            i, val = carry
            return (i + Array(np.ones((), dt), True), body_fun(i, val)), None
        (_, out), _ = scan(step, (Array(np.asarray(lo, dt), True), init_val), None,
                           length=max(hi - lo, 0))
        return out
    lo, hi = _leaf(lower), _leaf(upper)
    lo_dt, hi_dt = core.get_aval(lo).dtype, core.get_aval(hi).dtype
    if lo_dt != hi_dt:
        raise TypeError(f"lower and upper arguments to fori_loop must have equal types, got {lo_dt.name} "
                        f"and {hi_dt.name}. Pass both bounds as ints (or cast them to one dtype).")

    # The carry is (index, upper bound, value), the order JAX's jaxprs show.
    def cond_fun(c):
        return c[0] < c[1]

    def body(c):
        i, u, val = c
        return i + 1, u, body_fun(i, val)
    return while_loop(cond_fun, body, (lo, hi, init_val))[2]


def map(f, xs, batch_size=None):  # noqa: A001
    _, ys = scan(lambda c, x: (c, f(x)), (), xs)
    return ys


# ---------------------------------------------------------------- differentiation: jvp

def _inexact(aval):
    return dtypes.kind(aval.dtype) in "fc"


def _nonzero(t, aval):
    return type(t) is not ad.Zero and _inexact(aval)


def _split_tangents(outs, out_inexact, n):
    primals, ts = outs[:n], iter(outs[n:])
    tangents = [next(ts) if inexact else ad.Zero(ad._tangent_aval(core.get_aval(p)))
                for p, inexact in zip(primals, out_inexact)]
    return primals, tangents


def _cond_jvp(primals, tangents, *, branches):
    index, *ops = primals
    avals = [v.aval for v in branches[0].invars]
    nz = [_nonzero(t, a) for t, a in zip(tangents[1:], avals)]
    jvps = [ad.jvp_jaxpr(b, nz) for b in branches]
    new_branches = tuple(j for j, _ in jvps)
    t_in = [ad.instantiate(t) for t, n in zip(tangents[1:], nz) if n]
    outs = cond_p.bind(index, *ops, *t_in, branches=new_branches)
    return _split_tangents(outs, jvps[0][1], len(branches[0].outvars))


ad.jvp_rules[cond_p] = _cond_jvp


def _augment_cond(cond_jaxpr, nconsts, ncarry, t_avals):
    """cond_jaxpr reading (consts, carry, carry tangents): the tangents are ignored."""
    from ..jaxpr import Var
    extra = [Var(a) for a in t_avals]
    return Jaxpr([], list(cond_jaxpr.invars) + extra, cond_jaxpr.outvars, cond_jaxpr.eqns)


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    cconsts, bconsts, init = primals[:nc], primals[nc:nc + nb], primals[nc + nb:]
    bc_t, init_t = tangents[nc:nc + nb], tangents[nc + nb:]
    b_avals = [v.aval for v in body_jaxpr.invars]
    bc_nz = [_nonzero(t, a) for t, a in zip(bc_t, b_avals[:nb])]
    # Every inexact carry gets a tangent: simpler than a fixpoint over which ones become nonzero.
    carry_nz = [_inexact(a) for a in b_avals[nb:]]
    body_jvp, _ = ad.jvp_jaxpr(body_jaxpr, bc_nz + carry_nz)
    body_jvp = _reorder_body(body_jvp, nb, sum(bc_nz), len(init), sum(carry_nz))
    t_avals = [ad._tangent_aval(a) for a, n in zip(b_avals[nb:], carry_nz) if n]
    new_cond = _augment_cond(cond_jaxpr, nc, len(init), t_avals)
    bc_tangents = [ad.instantiate(t) for t, n in zip(bc_t, bc_nz) if n]
    init_tangents = [ad.instantiate(t) if type(t) is not ad.Zero else ad.zeros_like_aval(a)
                     for t, a, n in zip(init_t, t_avals_full(init), carry_nz) if n]
    outs = while_p.bind(*cconsts, *bconsts, *bc_tangents, *init, *init_tangents,
                        cond_jaxpr=new_cond, body_jaxpr=body_jvp, cond_nconsts=nc,
                        body_nconsts=nb + len(bc_tangents))
    return _split_tangents(outs, carry_nz, len(init))


def t_avals_full(vals):
    return [ad._tangent_aval(core.get_aval(v)) for v in vals]


def _reorder_body(jaxpr, nconsts, nconst_t, ncarry, ncarry_t):
    """jvp_jaxpr orders inputs (consts, carry, const tangents, carry tangents); loops need
    (consts, const tangents, carry, carry tangents)."""
    v = jaxpr.invars
    consts, carry = v[:nconsts], v[nconsts:nconsts + ncarry]
    ct = v[nconsts + ncarry:nconsts + ncarry + nconst_t]
    rest = v[nconsts + ncarry + nconst_t:]
    return Jaxpr([], list(consts) + list(ct) + list(carry) + list(rest), jaxpr.outvars, jaxpr.eqns)


ad.jvp_rules[while_p] = _while_jvp


def _scan_jvp(primals, tangents, *, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    avals = [v.aval for v in jaxpr.invars]
    nx = len(avals) - num_consts - num_carry
    const_nz = [_nonzero(t, a) for t, a in zip(tangents[:num_consts], avals[:num_consts])]
    carry_nz = [_inexact(a) for a in avals[num_consts:num_consts + num_carry]]
    xs_nz = [_nonzero(t, a) for t, a in zip(tangents[num_consts + num_carry:], avals[num_consts + num_carry:])]
    body, out_inexact = ad.jvp_jaxpr(jaxpr, const_nz + carry_nz + xs_nz)
    # jvp_jaxpr: inputs (consts, carry, xs, const_t, carry_t, xs_t), outputs (carry, ys, carry_t, ys_t);
    # scan needs inputs (consts, const_t, carry, carry_t, xs, xs_t), outputs (carry, carry_t, ys, ys_t).
    v = body.invars
    n1, n2, n3 = num_consts, num_carry, nx
    k1, k2, k3 = sum(const_nz), sum(carry_nz), sum(xs_nz)
    c, cr, x = v[:n1], v[n1:n1 + n2], v[n1 + n2:n1 + n2 + n3]
    ct, crt, xt = (v[n1 + n2 + n3:n1 + n2 + n3 + k1], v[n1 + n2 + n3 + k1:n1 + n2 + n3 + k1 + k2],
                   v[n1 + n2 + n3 + k1 + k2:])
    outs = body.outvars
    ny = len(jaxpr.outvars) - num_carry
    carry_out, ys_out = outs[:num_carry], outs[num_carry:num_carry + ny]
    t_out = outs[num_carry + ny:]
    carry_t_mask = out_inexact[:num_carry]
    n_ct = sum(carry_t_mask)
    carry_t_out, ys_t_out = t_out[:n_ct], t_out[n_ct:]
    if carry_t_mask != carry_nz:
        raise NotImplementedError("scan carry tangent structure changed across an iteration")
    body = Jaxpr([], list(c) + list(ct) + list(cr) + list(crt) + list(x) + list(xt),
                 list(carry_out) + list(carry_t_out) + list(ys_out) + list(ys_t_out), body.eqns)
    consts, init, xs = primals[:n1], primals[n1:n1 + n2], primals[n1 + n2:]
    const_t = [ad.instantiate(t) for t, n in zip(tangents[:n1], const_nz) if n]
    init_t = [ad.instantiate(t) if type(t) is not ad.Zero else ad.zeros_like_aval(ad._tangent_aval(core.get_aval(p)))
              for t, p, n in zip(tangents[n1:n1 + n2], init, carry_nz) if n]
    xs_t = [ad.instantiate(t) for t, n in zip(tangents[n1 + n2:], xs_nz) if n]
    res = scan_p.bind(*consts, *const_t, *init, *init_t, *xs, *xs_t, jaxpr=body, length=length,
                      reverse=reverse, num_consts=n1 + k1, num_carry=n2 + k2, unroll=unroll)
    carry_p, carry_t = res[:n2], res[n2:n2 + k2]
    ys_p, ys_t = res[n2 + k2:n2 + k2 + ny], res[n2 + k2 + ny:]
    primals_out = list(carry_p) + list(ys_p)
    _, carry_tangents = _split_tangents(list(carry_p) + list(carry_t), carry_nz, n2)
    _, ys_tangents = _split_tangents(list(ys_p) + list(ys_t), out_inexact[num_carry:], ny)
    return primals_out, carry_tangents + ys_tangents


ad.jvp_rules[scan_p] = _scan_jvp


# ---------------------------------------------------------------- differentiation: reverse mode
# Partial evaluation splits each body into a known part (run now, emitting residuals)
# and an unknown, linear part (staged); transposition runs the linear part backwards.

def _cond_partial_eval(trace, tracers, *, branches):
    index, *ops = tracers
    if not index.pval.is_known:
        return trace.stage(cond_p, tracers, {"branches": branches})
    idx = index.pval.const
    if not isinstance(idx, core.Tracer):
        # A concrete branch index (differentiating outside jit): only that branch runs.
        i = int(np.clip(int(np.asarray(getattr(idx, "_value", idx))), 0, len(branches) - 1))
        return eval_jaxpr(branches[i], [], *tracers[1:])
    unknowns = [not t.pval.is_known for t in ops]
    n_out = len(branches[0].outvars)
    out_unk = [False] * n_out
    for b in branches:
        _, _, unk, _ = pe.partial_eval_jaxpr(b, unknowns, [False] * n_out)
        out_unk = [a or b_ for a, b_ in zip(out_unk, unk)]
    splits = [pe.partial_eval_jaxpr(b, unknowns, out_unk) for b in branches]
    res_avals = [[v.aval for v in k.jaxpr.outvars[sum(not u for u in out_unk):]] for k, _, _, _ in splits]
    known_branches, unknown_branches = _unify_residuals(splits, res_avals, out_unk)
    known_ops = [t.pval.const for t in ops if t.pval.is_known]
    known_outs = cond_p.bind(idx, *known_ops, branches=tuple(known_branches))
    n_known = sum(not u for u in out_unk)
    res = known_outs[n_known:]
    res_tracers = [trace.instantiate_const(trace.pure(r)) for r in res]
    unknown_ops = [t for t in ops if not t.pval.is_known]
    staged = trace.stage(cond_p, [trace.instantiate_const(index)] + res_tracers + unknown_ops,
                         {"branches": tuple(unknown_branches)})
    k_it, u_it = iter(known_outs[:n_known]), iter(staged)
    return [next(u_it) if u else next(k_it) for u in out_unk]


def _unify_residuals(splits, res_avals, out_unk):
    """Each branch's known part emits every branch's residuals (zeros for the others'),
    and each unknown part reads its own slice of them, so all branches share a type."""
    from ..jaxpr import Var, JaxprEqn
    all_avals = [a for avals in res_avals for a in avals]
    known_out, unknown_out = [], []
    for k, (known, unknown, _, nres) in enumerate(splits):
        start = sum(len(r) for r in res_avals[:k])
        kj, kconsts = pe.closure_convert(known)
        if kconsts:
            raise NotImplementedError("reverse-mode cond with array constants in a branch")

        def emit_all(*args, kj=kj, start=start, nres=nres):
            outs = eval_jaxpr(kj, [], *args)
            n_known = len(outs) - nres
            own = outs[n_known:]
            full = [ad.zeros_like_aval(a) for a in all_avals]
            full[start:start + nres] = own
            return outs[:n_known] + full
        traced = pe.trace_to_jaxpr(emit_all, [v.aval for v in kj.invars])
        known_out.append(ad._no_consts(traced))
        unknown_out.append(_pad_inputs(unknown, all_avals, start, nres))
    return known_out, unknown_out


pe.partial_eval_rules[cond_p] = _cond_partial_eval


def _cond_transpose(cts, index, *ops, branches):
    linear = [ad.is_undefined(o) for o in ops]
    if not any(linear):
        return [None] * (1 + len(ops))
    cts = [ad.instantiate(c) if type(c) is ad.Zero else c for c in cts]
    t_branches = tuple(ad.transpose_jaxpr(b, linear) for b in branches)
    res = [o for o in ops if not ad.is_undefined(o)]
    outs = cond_p.bind(index, *res, *cts, branches=t_branches)
    it = iter(outs)
    return [None] + [next(it) if lin else None for lin in linear]


ad.transpose_rules[cond_p] = _cond_transpose


def _while_partial_eval(trace, tracers, **params):
    raise ValueError("Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
                     "with dynamic start/stop values. Try using lax.scan, or using fori_loop with "
                     "static start/stop.")


pe.partial_eval_rules[while_p] = _while_partial_eval


def _scan_partial_eval(trace, tracers, *, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    n1, n2 = num_consts, num_carry
    unknowns = [not t.pval.is_known for t in tracers]
    const_unk, carry_unk, xs_unk = unknowns[:n1], unknowns[n1:n1 + n2], unknowns[n1 + n2:]
    ny = len(jaxpr.outvars) - n2
    while True:   # carries that become unknown after one iteration stay unknown: fixpoint
        _, _, out_unk, _ = pe.partial_eval_jaxpr(jaxpr, const_unk + carry_unk + xs_unk,
                                                 carry_unk + [False] * ny)
        new = [a or b for a, b in zip(carry_unk, out_unk[:n2])]
        if new == carry_unk:
            break
        carry_unk = new
    ys_unk = out_unk[n2:]
    known, unknown, out_unk, nres = pe.partial_eval_jaxpr(jaxpr, const_unk + carry_unk + xs_unk,
                                                          carry_unk + ys_unk)
    kj, kconsts = pe.closure_convert(known)
    if kconsts:
        raise NotImplementedError("reverse-mode scan with array constants in the body")
    inst = [trace.instantiate_const(t) if u else t for t, u in zip(tracers, const_unk + carry_unk + xs_unk)]
    known_in = [t.pval.const for t, u in zip(tracers, const_unk + carry_unk + xs_unk) if not u]
    nk_consts = sum(not u for u in const_unk)
    nk_carry = sum(not u for u in carry_unk)
    # The known scan emits residuals as extra per-iteration outputs (stacked ys).
    known_outs = scan_p.bind(*known_in, jaxpr=kj, length=length, reverse=reverse,
                             num_consts=nk_consts, num_carry=nk_carry, unroll=unroll)
    nk_ys = sum(not u for u in ys_unk)
    k_carry, k_ys, res = (known_outs[:nk_carry], known_outs[nk_carry:nk_carry + nk_ys],
                          known_outs[nk_carry + nk_ys:])
    # Unknown body inputs: (residuals, unknown consts, unknown carry, unknown xs) -> reorder so
    # residuals come last among xs.
    u_consts = [t for t, u in zip(inst[:n1], const_unk) if u]
    u_carry = [t for t, u in zip(inst[n1:n1 + n2], carry_unk) if u]
    u_xs = [t for t, u in zip(inst[n1 + n2:], xs_unk) if u]
    uv = unknown.invars
    body = Jaxpr([], list(uv[nres:nres + len(u_consts)]) + list(uv[nres + len(u_consts):])
                 + list(uv[:nres]), unknown.outvars, unknown.eqns)
    res_tracers = [trace.instantiate_const(trace.pure(r)) for r in res]
    staged = trace.stage(scan_p, u_consts + u_carry + u_xs + res_tracers,
                         dict(jaxpr=body, length=length, reverse=reverse, num_consts=len(u_consts),
                              num_carry=len(u_carry), unroll=unroll))
    kc, ky, us = iter(k_carry), iter(k_ys), iter(staged)
    carry_out = [next(us) if u else next(kc) for u in carry_unk]
    ys_out = [next(us) if u else next(ky) for u in ys_unk]
    return carry_out + ys_out


pe.partial_eval_rules[scan_p] = _scan_partial_eval


def _scan_transpose(cts, *args, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    n1, n2 = num_consts, num_carry
    consts, init, xs = args[:n1], args[n1:n1 + n2], args[n1 + n2:]
    if not all(ad.is_undefined(c) for c in consts):
        raise NotImplementedError("scan transpose with non-linear consts")
    # A carry may start from a known value (a zero tangent); it is still linear in the body.
    lin_x = [ad.is_undefined(x) for x in xs]
    ct_carry = [ad.instantiate(c) for c in cts[:n2]]
    ct_ys = [ad.instantiate(c) for c in cts[n2:]]
    res = [x for x in xs if not ad.is_undefined(x)]
    linear = [True] * (n1 + n2) + lin_x
    body_t = ad.transpose_jaxpr(_xs_res_last(jaxpr, n1 + n2, lin_x), linear[:n1 + n2] + sorted(lin_x, reverse=True))
    const_avals = [c.aval for c in consts]
    init_avals = [c.aval if ad.is_undefined(c) else core.get_aval(c) for c in init]
    ct_consts0 = [ad.zeros_like_aval(a) for a in const_avals]
    nres = len(res)

    def step(carry, x):
        acc, ct_c = carry
        r, ct_y = x
        outs = eval_jaxpr(body_t, [], *r, *ct_c, *ct_y)
        d_consts, d_carry, d_xs = outs[:n1], outs[n1:n1 + n2], outs[n1 + n2:]
        from .elementwise import add_any_p
        acc = [add_any_p.bind(a, d) for a, d in zip(acc, d_consts)]
        return (acc, list(d_carry)), list(d_xs)
    (ct_consts, ct_init), ct_xs = scan(step, (ct_consts0, ct_carry), (res, ct_ys), length=length,
                                       reverse=not reverse)
    it = iter(ct_xs)
    ct_init = [c if ad.is_undefined(i) else None for c, i in zip(ct_init, init)]
    return list(ct_consts) + list(ct_init) + [next(it) if lin else None for lin in lin_x]


def _xs_res_last(jaxpr, n_front, lin_x):
    """Reorder the xs inputs so linear ones come before residuals (matching ``linear``)."""
    xs = jaxpr.invars[n_front:]
    lin = [v for v, l_ in zip(xs, lin_x) if l_]
    non = [v for v, l_ in zip(xs, lin_x) if not l_]
    return Jaxpr([], list(jaxpr.invars[:n_front]) + lin + non, jaxpr.outvars, jaxpr.eqns)


ad.transpose_rules[scan_p] = _scan_transpose


# ---------------------------------------------------------------- batching

@batching.needs_axis
def _cond_batch(vals, dims, *, axis_data, branches):
    index, *ops = vals
    idim, *odims = dims
    if idim is not batching.not_mapped:
        # A per-example predicate: every branch runs on the whole batch, then select (as JAX).
        from .elementwise import select_n_p
        from .shape import broadcast_in_dim
        ops = [batching.bdim_at_front(o, d, axis_data.size) for o, d in zip(ops, odims)]
        outs_per_branch = [eval_jaxpr(batching.batch_jaxpr(b, axis_data, [0] * len(ops)), [], *ops)
                           for b in branches]
        idx = batching.moveaxis(index, idim, 0)
        outs = []
        for k in range(len(branches[0].outvars)):
            shape = core.get_aval(outs_per_branch[0][k]).shape
            which = broadcast_in_dim(idx, shape, (0,)) if len(shape) > 1 else idx
            outs.append(select_n_p.bind(which, *[o[k] for o in outs_per_branch]))
        return outs, [0] * len(outs)
    new = tuple(batching.batch_jaxpr(b, axis_data, odims) for b in branches)
    outs = cond_p.bind(index, *ops, branches=new)
    return outs, [0] * len(outs)


batching.batch_rules[cond_p] = _cond_batch


@batching.needs_axis
def _scan_batch(vals, dims, *, axis_data, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    n1, n2 = num_consts, num_carry
    consts, init, xs = vals[:n1], vals[n1:n1 + n2], vals[n1 + n2:]
    cd, xd = dims[:n1], dims[n1 + n2:]
    init = [batching.bdim_at_front(c, d, axis_data.size) for c, d in zip(init, dims[n1:n1 + n2])]
    # xs keep the scanned axis first; their batch axis goes second (first inside the body).
    xs = [x if d is batching.not_mapped else batching.moveaxis(x, d, 1) for x, d in zip(xs, xd)]
    body_dims = list(cd) + [0] * n2 + [batching.not_mapped if d is batching.not_mapped else 0 for d in xd]
    body = batching.batch_jaxpr(jaxpr, axis_data, body_dims)
    outs = scan_p.bind(*consts, *init, *xs, jaxpr=body, length=length, reverse=reverse,
                       num_consts=n1, num_carry=n2, unroll=unroll)
    return outs, [0] * n2 + [1] * (len(outs) - n2)


batching.batch_rules[scan_p] = _scan_batch


@batching.needs_axis
def _while_batch(vals, dims, *, axis_data, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    cconsts, bconsts, init = vals[:nc], vals[nc:nc + nb], vals[nc + nb:]
    ccd, bcd = dims[:nc], dims[nc:nc + nb]
    init = [batching.bdim_at_front(c, d, axis_data.size) for c, d in zip(init, dims[nc + nb:])]
    cond_b = batching.batch_jaxpr(cond_jaxpr, axis_data, list(ccd) + [0] * len(init))
    body_b = batching.batch_jaxpr(body_jaxpr, axis_data, list(bcd) + [0] * len(init))
    # Run while any example is still going; finished examples keep their carry.
    from .elementwise import select_n_p
    from .reductions import reduce_or
    from .shape import broadcast_in_dim

    def any_cond(*args):
        pred = eval_jaxpr(cond_b, [], *args)[0]
        return [reduce_or(pred, (0,))]

    def guarded_body(*args):
        cc, bc, carry = args[:nc], args[nc:nc + nb], args[nc + nb:]
        pred = eval_jaxpr(cond_b, [], *cc, *carry)[0]
        new = eval_jaxpr(body_b, [], *bc, *carry)
        out = []
        for old, nv in zip(carry, new):
            shape = core.get_aval(nv).shape
            which = broadcast_in_dim(pred, shape, (0,)) if len(shape) > 1 else pred
            out.append(select_n_p.bind(which, old, nv))
        return out
    c_avals = [core.get_aval(c) for c in cconsts]
    b_avals = [core.get_aval(c) for c in bconsts]
    carry_avals = [core.get_aval(c) for c in init]
    cond_j = ad._no_consts(pe.trace_to_jaxpr(any_cond, c_avals + carry_avals))
    body_j = ad._no_consts(pe.trace_to_jaxpr(guarded_body, c_avals + b_avals + carry_avals))
    outs = while_p.bind(*cconsts, *cconsts, *bconsts, *init, cond_jaxpr=cond_j, body_jaxpr=body_j,
                        cond_nconsts=nc, body_nconsts=nc + nb)
    return outs, [0] * len(outs)


batching.batch_rules[while_p] = _while_batch

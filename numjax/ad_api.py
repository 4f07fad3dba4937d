"""Differentiation API: jvp, linearize, vjp, grad, value_and_grad, jacobians, hessian.

Like api.py, this layer only handles pytrees and argument checks; the work is
done by ``interpreters/ad.py``.
"""
import functools

import numpy as np

from . import core, dtypes, tree_util
from .interpreters import ad
from .api_util import as_leaf as _leaf, flatten_fun_nokwargs
from ._src.vma import primals_vma


# ---------------------------------------------------------------- forward mode

def jvp(fun, primals, tangents, has_aux=False):
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    p_leaves, p_tree = tree_util.flatten_traced(tuple(primals))
    t_leaves, t_tree = tree_util.flatten_traced(_key_tangents_in(tuple(primals), tuple(tangents)))
    if p_tree != t_tree:
        raise TypeError(f"primal and tangent arguments to jax.jvp must have the same tree structure; "
                        f"primals have tree structure {p_tree} whereas tangents have tree structure {t_tree}.")
    for p, t in zip(p_leaves, t_leaves):
        pa, ta = core.get_aval(_leaf(p)), core.get_aval(_leaf(t))
        _check_tangent_dtype(pa, ta)
        if pa.shape != ta.shape:
            raise ValueError("jvp called with different primal and tangent shapes;"
                             f"Got primal shape {pa.shape} and tangent shape as {ta.shape}")
    aux_box = []
    f = _with_aux(fun, has_aux, aux_box)
    flat, out_tree = flatten_fun_nokwargs(lambda *a: f(*a), p_tree)
    outs, t_outs = ad.jvp_flat(flat, [_leaf(p) for p in p_leaves], [_leaf(t) for t in t_leaves])
    po = tree_util.tree_unflatten(out_tree[0], outs)
    to = _key_tangents_out(tree_util.tree_unflatten(out_tree[0], t_outs))
    return (po, to, aux_box[0]) if has_aux else (po, to)


def _check_tangent_dtype(primal_aval, tangent_aval):
    """A float or complex primal's tangent has the primal's dtype (weak types aside). Integer
    and bool primals take float0 tangents in JAX; numjax has no float0 and takes any."""
    pd, td = primal_aval.dtype, tangent_aval.dtype
    if dtypes.kind(pd) in "fc" and td != pd:
        raise TypeError("primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or "
                        "in case of int/bool primal dtype the tangent dtype must be float0. Got primal "
                        f"dtype {pd.name} and so expected tangent dtype {pd.name}, but got tangent dtype "
                        f"{td.name} instead. Cast the tangent, e.g. t.astype(x.dtype).")


# Typed keys are not differentiable.  Their tangents and cotangents are zeros of the key
# array's shape (JAX's float0; numjax gives integers float32 zero tangents, and keys the
# same), while the traced view carries them over the key's uint32 data.

def _key_tangents_in(primals, tangents):
    """``tangents`` with each typed key's tangent as a key over data-shaped zeros."""
    from ._prng import PRNGKeyArray
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    if not any(isinstance(p, PRNGKeyArray) for p in p_leaves):
        return tangents
    t_leaves, t_tree = tree_util.tree_flatten(tangents)
    if t_tree != p_tree:
        return tangents          # the caller's structure check reports it
    return tree_util.tree_unflatten(p_tree, [_key_tangent(p, t) if isinstance(p, PRNGKeyArray) else t
                                             for p, t in zip(p_leaves, t_leaves)])


def _key_tangent(key, tangent):
    from ._prng import PRNGKeyArray
    data_shape = tuple(key._base.shape)   # key._base may be an aval (a pullback's template)
    key_shape = data_shape[:-1]
    t_shape = tuple(np.shape(tangent))
    if t_shape != key_shape:
        raise ValueError("jvp called with different primal and tangent shapes;"
                         f"Got primal shape {key_shape} and tangent shape as {t_shape}")
    return PRNGKeyArray(_zeros(core.ShapedArray(data_shape, np.dtype(np.float32))))


def _key_tangents_out(tree):
    """Traced (co)tangents unflattened to keys over their data, as zeros of the key shape."""
    from ._prng import PRNGKeyArray
    return tree_util.tree_map(
        lambda t: _zeros(core.ShapedArray(tuple(t._base.shape[:-1]), np.dtype(np.float32)))
        if isinstance(t, PRNGKeyArray) else t, tree)


def _with_aux(fun, has_aux, box):
    if not has_aux:
        return fun

    def f(*args):
        out = fun(*args)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError("expected function with aux output to return a two-element tuple, but got "
                            f"type {type(out)} with value {out!r}")
        box.append(tree_util.map_traced(_strip_tracers, out[1]))
        return out[0]
    return f


def _strip_tracers(x):
    # Auxiliary outputs are not differentiated: drop every JVP/partial-eval wrapper.
    while isinstance(x, core.Tracer) and hasattr(x, "primal") or hasattr(x, "pval"):
        x = x.primal if hasattr(x, "primal") else x.pval.const if x.pval.is_known else x
        if hasattr(x, "pval") and not x.pval.is_known:
            break
    return x


def linearize(fun, *primals, has_aux=False):
    p_leaves, p_tree = tree_util.flatten_traced(primals)
    aux_box = []
    flat, out_tree = flatten_fun_nokwargs(_with_aux(fun, has_aux, aux_box), p_tree)
    outs, jaxpr, residuals = ad.linearize_flat(flat, [_leaf(p) for p in p_leaves])
    from .jaxpr import eval_jaxpr

    def f_jvp(*tangents):
        t_leaves, t_tree = tree_util.flatten_traced(_key_tangents_in(primals, tangents))
        if t_tree != p_tree:
            raise TypeError(f"linearized function called on tangent values inconsistent with the "
                            f"original primal values: expected {p_tree}, got {t_tree}")
        t_leaves = [_checked_linear_tangent(_leaf(t), core.get_aval(_leaf(p)))
                    for t, p in zip(t_leaves, p_leaves)]
        t_outs = eval_jaxpr(jaxpr, residuals, *t_leaves)
        return _key_tangents_out(tree_util.tree_unflatten(out_tree[0], t_outs))
    po = tree_util.tree_unflatten(out_tree[0], outs)
    return (po, f_jvp, aux_box[0]) if has_aux else (po, f_jvp)


def _checked_linear_tangent(t, primal_aval):
    """A tangent for a linearized function: JAX's ValueError when its shape (or, for a float
    primal, its dtype) is not the primal's."""
    expected = ad._tangent_aval(primal_aval)
    ta = core.get_aval(t)
    float_primal = dtypes.kind(primal_aval.dtype) in "fc"
    if ta.shape != expected.shape or (float_primal and ta.dtype != expected.dtype):
        raise ValueError("linearized function called on tangent values inconsistent with the original "
                         f"primal values:\nGot tangent aval {ta.str_short()} for primal aval "
                         f"{primal_aval.str_short()} but expected {expected.str_short()}.")
    return _cast_ct(t, expected)


# ---------------------------------------------------------------- reverse mode

class VJPFunction:
    """The pullback returned by ``vjp``: reusable, jittable, a pytree of its residuals."""

    def __init__(self, jaxpr, residuals, in_tree, out_tree, in_avals, out_avals):
        self.jaxpr, self.residuals = jaxpr, residuals
        self.in_tree, self.out_tree = in_tree, out_tree
        self.in_avals, self.out_avals = in_avals, out_avals

    def __call__(self, *cts):
        if len(cts) != 1:
            raise TypeError(f"The function returned by `jax.vjp` was called with {len(cts)} arguments, but "
                            "it must be called with a single argument corresponding to the single value "
                            "returned by the function being differentiated (even if that value is a "
                            "tuple or other container): pass f_vjp((ct1, ct2)), not f_vjp(ct1, ct2).")
        ct = _key_tangents_in(tree_util.tree_unflatten(self.out_tree, self.out_avals), cts[0])
        ct_leaves, ct_tree = tree_util.flatten_traced(ct)
        if ct_tree != self.out_tree:
            raise ValueError(f"unexpected tree structure of the argument to the VJP function: got "
                             f"{ct_tree}, but the function being differentiated returned {self.out_tree}. "
                             "The cotangent must have the structure of the primal output.")
        vals = []
        for c, aval in zip(ct_leaves, self.out_avals):
            c = _leaf(c)
            ca = core.get_aval(c)
            wrong_dtype = dtypes.kind(aval.dtype) in "fc" and ca.dtype != aval.dtype
            if ca.shape != aval.shape or wrong_dtype:
                raise ValueError("unexpected JAX type (e.g. shape/dtype) for argument to VJP function: "
                                 f"got {ca.str_short()}, but expected {aval.str_short()} because the "
                                 "corresponding output of the differentiated function had JAX type "
                                 f"{aval.str_short()}")
            vals.append(c)
        cts_in = ad.backward_pass(self.jaxpr, self.residuals, vals, getattr(self, "in_vma", None))
        cts_in = [ad.instantiate(c) if type(c) is ad.Zero else c for c in cts_in]
        cts_in = [_cast_ct(c, a) for c, a in zip(cts_in, self.in_avals)]
        return _key_tangents_out(tree_util.tree_unflatten(self.in_tree, cts_in))


def _cast_ct(ct, aval):
    # A cotangent has its primal's dtype. Its weak type is what the backward pass made of it,
    # as in JAX: transposing the cast that promoted a weak input restores the weak type, and a
    # cotangent built from strong values (e.g. the complex one a real part sends back) stays strong.
    from . import lax
    if dtypes.kind(aval.dtype) not in "fc":
        return ct
    if core.get_aval(ct).dtype != aval.dtype:
        return lax._convert_element_type(ct, aval.dtype, aval.weak_type)
    return ct


tree_util.register_pytree_node(
    VJPFunction,
    lambda f: (f.residuals, (f.jaxpr, f.in_tree, f.out_tree, tuple(f.in_avals), tuple(f.out_avals))),
    lambda aux, res: VJPFunction(aux[0], list(res), aux[1], aux[2], list(aux[3]), list(aux[4])))


def vjp(fun, *primals, has_aux=False):
    p_leaves, p_tree = tree_util.flatten_traced(primals)
    p_leaves = [_leaf(p) for p in p_leaves]
    aux_box = []
    flat, out_tree = flatten_fun_nokwargs(_with_aux(fun, has_aux, aux_box), p_tree)
    outs, jaxpr, residuals = ad.linearize_flat(flat, p_leaves)
    pullback = VJPFunction(jaxpr, residuals, p_tree, out_tree[0],
                           [core.get_aval(p) for p in p_leaves], [core.get_aval(o) for o in outs])
    pullback.in_vma = primals_vma(p_leaves)     # inside shard_map(check_vma=True): see _src/vma.py
    po = tree_util.tree_unflatten(out_tree[0], outs)
    return (po, pullback, aux_box[0]) if has_aux else (po, pullback)


def _check_argnums(argnums, args, name="differentiating"):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    need = max((n if n >= 0 else -n - 1) for n in nums) + 1 if nums else 0
    if need > len(args):
        raise TypeError(f"differentiating with respect to argnums={argnums} requires at least {need} "
                        f"positional arguments to be passed by the caller, but got only {len(args)} "
                        "positional arguments.")
    return tuple(n % len(args) for n in nums)


def _check_input_dtype(x, allow_int, name, holomorphic=False):
    from ._prng import PRNGKeyArray
    from .api_util import is_jax_value
    if not isinstance(x, PRNGKeyArray) and not is_jax_value(x):
        raise TypeError(f"Argument {x!r} of type {type(x)} is not a valid JAX type. {name} differentiates "
                        "with respect to arrays and numbers only; pass other values through argnums "
                        "you do not differentiate, or close over them.")
    dt = x.dtype if isinstance(x, PRNGKeyArray) else core.get_aval(_leaf(x)).dtype
    if holomorphic and (isinstance(x, PRNGKeyArray) or dtypes.kind(dt) != "c"):
        raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype, but got "
                        f"{dt.name}. Pass complex inputs, e.g. x.astype(jnp.complex64).")
    if (isinstance(x, PRNGKeyArray) or dtypes.kind(dt) not in "fc") and not allow_int:
        raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype that is a sub-dtype "
                        f"of np.inexact), but got {dt.name}. If you want to use Boolean- or "
                        "integer-valued inputs, use vjp or set allow_int to True.")


def _check_callable(fun):
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=(), _name="value_and_grad"):
    _check_callable(fun)
    @functools.wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        nums = _check_argnums(argnums, args)
        dyn = tuple(args[i] for i in nums)
        for leaf in tree_util.tree_leaves(dyn):
            _check_input_dtype(leaf, allow_int, _name.replace("value_and_grad", "grad"), holomorphic)

        def f_partial(*dyn_args):
            full = list(args)
            for i, a in zip(nums, dyn_args):
                full[i] = a
            return fun(*full, **kwargs)

        if has_aux:
            ans, pullback, aux = vjp(f_partial, *dyn, has_aux=True)
        else:
            ans, pullback = vjp(f_partial, *dyn)
        _check_scalar(ans, holomorphic)
        g = pullback(_ones_like(ans))
        g = g[0] if isinstance(argnums, int) else g
        return ((ans, aux), g) if has_aux else (ans, g)
    return value_and_grad_f


def _ones_like(ans):
    # The seed keeps the output's weak type (as JAX's does), so a weakly typed
    # function's cotangents stay weak and need no cast back at the end.
    from .array import Array
    aval = core.get_aval(ans)
    return Array(np.ones((), aval.dtype), aval.weak_type)


def _check_scalar(x, holomorphic=False):
    if not isinstance(x, (core.Tracer,)) and not hasattr(x, "shape"):
        raise TypeError(f"Gradient only defined for scalar-output functions. Output was {x!r}.")
    aval = core.get_aval(x)
    if aval.shape != ():
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: {aval.shape}.")
    if holomorphic and dtypes.kind(aval.dtype) != "c":
        raise TypeError(f"grad with holomorphic=True requires outputs with complex dtype, but got "
                        f"{aval.dtype.name}.")
    if dtypes.kind(aval.dtype) == "c" and not holomorphic:
        raise TypeError(f"grad requires real-valued outputs (output dtype that is a sub-dtype of "
                        f"np.floating), but got {aval.dtype.name}. For holomorphic differentiation, pass "
                        "holomorphic=True. For differentiation of non-holomorphic functions involving "
                        "complex outputs, use jax.vjp directly.")
    if dtypes.kind(aval.dtype) not in "fc":
        raise TypeError(f"grad requires real-valued outputs (output dtype that is a sub-dtype of "
                        f"np.floating), but got {aval.dtype.name}. For differentiation of functions with "
                        "integer outputs, use jax.vjp directly.")


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    _check_callable(fun)
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, _name="grad")

    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        if has_aux:
            (_, aux), g = vg(*args, **kwargs)
            return g, aux
        _, g = vg(*args, **kwargs)
        return g
    return grad_f


# ---------------------------------------------------------------- jacobians

def _check_jacfwd_dtype(x, holomorphic):
    dt = core.get_aval(_leaf(x)).dtype
    if dtypes.kind(dt) != "f" and not (holomorphic and dtypes.kind(dt) == "c"):
        raise TypeError("jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
                        f"np.floating), but got {dt.name}. For holomorphic differentiation, pass "
                        "holomorphic=True. For differentiation of non-holomorphic functions "
                        "involving complex inputs or integer inputs, use jax.jvp directly.")


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """Forward-mode Jacobian: one jvp per input basis direction (batched by vmap once it exists)."""
    _check_callable(fun)
    def jacfun(*args, **kwargs):
        from . import numpy as jnp
        nums = _check_argnums(argnums, args)
        dyn = tuple(args[i] for i in nums)
        d_leaves, d_tree = tree_util.flatten_traced(dyn)
        d_leaves = [_leaf(x) for x in d_leaves]
        # Mapped over the tree, as in jacrev.
        tree_util.tree_map(lambda leaf: _check_jacfwd_dtype(leaf, holomorphic), dyn)

        def f_flat(*leaves):
            full = list(args)
            for i, a in zip(nums, tree_util.tree_unflatten(d_tree, leaves)):
                full[i] = a
            return fun(*full, **kwargs)

        columns, out, aux = [], None, None
        for k, leaf in enumerate(d_leaves):
            aval = core.get_aval(leaf)
            n = int(np.prod(aval.shape))
            cols = []
            for j in range(n):
                tangents = [jnp.zeros(core.get_aval(x).shape, core.get_aval(x).dtype) for x in d_leaves]
                tangents[k] = jnp.reshape(_unit(n, j, aval.dtype), aval.shape)
                res = jvp(f_flat, tuple(d_leaves), tuple(tangents), has_aux=has_aux)
                out, t_out = res[0], res[1]
                aux = res[2] if has_aux else None
                cols.append(t_out)
            columns.append((aval.shape, cols))
        jac = _assemble(out, columns, d_tree, isinstance(argnums, int), forward=True)
        return (jac, aux) if has_aux else jac
    return jacfun


def _unit(n, j, dtype):
    from .array import Array
    e = np.zeros(n, dtype)
    e[j] = 1
    return Array(e, False)


def _assemble(out, columns, in_tree, single_arg, forward):
    """Stack per-direction results into the out-tree x in-tree Jacobian structure."""
    from . import numpy as jnp
    out_leaves, out_tree = tree_util.flatten_traced(out)
    per_in = []
    for in_shape, cols in columns:
        per_out = []
        for o_idx, o in enumerate(out_leaves):
            o_shape = core.get_aval(o).shape
            stacked = jnp.stack([tree_util.leaves_traced(c)[o_idx] for c in cols], axis=-1) if cols else \
                jnp.zeros(o_shape + (0,))
            per_out.append(jnp.reshape(stacked, o_shape + in_shape))
        per_in.append(per_out)
    in_struct = tree_util.tree_unflatten(in_tree, list(range(len(columns))))
    result_leaves = []
    for o_idx in range(len(out_leaves)):
        tree = tree_util.tree_map(lambda i: per_in[i][o_idx], in_struct)
        result_leaves.append(tree[0] if single_arg else tree)
    return tree_util.tree_unflatten(out_tree, result_leaves)


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """Reverse-mode Jacobian: one pullback per output basis direction."""
    _check_callable(fun)
    def jacfun(*args, **kwargs):
        nums = _check_argnums(argnums, args)
        dyn = tuple(args[i] for i in nums)
        # Mapped over the tree, as JAX checks: custom nodes are rebuilt around the checks'
        # None results, so a node whose constructor rejects None fails here as on JAX.
        tree_util.tree_map(lambda leaf: _check_input_dtype(leaf, allow_int, "jacrev", holomorphic), dyn)

        def f_partial(*dyn_args):
            full = list(args)
            for i, a in zip(nums, dyn_args):
                full[i] = a
            return fun(*full, **kwargs)
        res = vjp(f_partial, *dyn, has_aux=has_aux)
        out, pullback = res[0], res[1]
        aux = res[2] if has_aux else None
        out_leaves, out_tree = tree_util.flatten_traced(out)
        rows_per_out = []
        for o_idx, o in enumerate(out_leaves):
            aval = core.get_aval(o)
            n = int(np.prod(aval.shape))
            rows = []
            for j in range(n):
                cts = [_zeros(core.get_aval(x)) for x in out_leaves]
                # The basis carries the output's weak type, as JAX's does, so the rows do too.
                from . import lax
                unit = _unit(n, j, aval.dtype).reshape(aval.shape)
                cts[o_idx] = unit if not aval.weak_type else lax._convert_element_type(unit, aval.dtype, True)
                g = pullback(tree_util.tree_unflatten(out_tree, cts))
                rows.append(g)
            rows_per_out.append((aval.shape, rows))
        jac = _assemble_rev(out_tree, rows_per_out, isinstance(argnums, int))
        return (jac, aux) if has_aux else jac
    return jacfun


def _zeros(aval):
    from .array import Array
    return Array(np.zeros(aval.shape, aval.dtype), False)


def _assemble_rev(out_tree, rows_per_out, single_arg):
    from . import numpy as jnp
    results = []
    for out_shape, rows in rows_per_out:
        grads = [r[0] if single_arg else r for r in rows]
        first = grads[0]

        def stack_leaf(*leaves):
            in_shape = core.get_aval(leaves[0]).shape
            return jnp.reshape(jnp.stack(leaves), out_shape + in_shape)
        results.append(tree_util.tree_map(stack_leaf, first, *grads[1:]))
    return tree_util.tree_unflatten(out_tree, results)


jacobian = jacrev


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of a linear function, traced at the given example primals."""
    p_leaves, p_tree = tree_util.flatten_traced(primals)
    avals = [core.get_aval(_leaf(p)) for p in p_leaves]
    flat, out_tree = flatten_fun_nokwargs(fun, p_tree)
    from .interpreters import partial_eval as pe
    pvals = [pe.PartialVal.unknown(a) for a in avals]

    def staged(*xs):
        outs = flat(*xs)
        trace = ad._current_pe_trace(xs)
        return [trace.instantiate_const(trace.full_raise(o)) for o in outs]
    jaxpr, _, consts = pe.partial_eval_flat(staged, pvals)

    def transposed(*cts):
        ct = cts[0] if len(cts) == 1 else cts
        ct_leaves, _ = tree_util.flatten_traced(ct)
        res = ad.backward_pass(jaxpr, consts, [_leaf(c) for c in ct_leaves])
        res = [ad.instantiate(r) for r in res]
        return tree_util.tree_unflatten(p_tree, res)
    return transposed

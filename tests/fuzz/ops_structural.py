"""Reductions, shape ops, dot, gather/scatter and sort for the fuzzer (``make(g) -> Node``).

Float sums, products and dots are checked against a long-double reference within the
rounding bound of any evaluation order (``n * eps * sum|terms|``); elements whose partial
sums may overflow in one order and not another are implementation-defined.
"""
import math

import numpy as np

import jax_types as jt
import reference as R
from expect import Expect, eps, tiny, ulp
from ops_elementwise import Raises, build

_FMAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38,
         "float64": 1.7976931348623157e308}


# ---------------------------------------------------------------- axes


def _axis_arg(g, ndim, allow_tuple=True, allow_none=True):
    """(source text, normalized tuple of axes or None, out of range?)."""
    # (No out-of-range axis for a 0-d operand: JAX raises IndexError or ValueError there
    # depending on the function.)
    choice = g.pick(["none", "int", "tuple", "bad"] if ndim else ["none"])
    if choice == "none" and allow_none or (choice == "tuple" and not allow_tuple):
        return "None", None, False
    if choice == "bad" and g.flag(0.3):
        ax = g.pick([ndim, -ndim - 1])
        return repr(ax), None, True
    if ndim == 0:
        return "None", None, False
    if choice == "tuple":
        axes = sorted(set(g.draw_list(ndim)))
        text = tuple(a - ndim if g.flag(0.3) else a for a in axes)
        return repr(text), tuple(axes), False
    ax = g.draw_int(0, ndim - 1)
    return repr(ax - ndim if g.flag(0.3) else ax), (ax,), False


def _reduced_shape(shape, axes, keepdims):
    axes = range(len(shape)) if axes is None else axes
    return tuple(1 if i in axes else d for i, d in enumerate(shape) if keepdims or i not in axes)


def _sum_expect(x, axes, keepdims, out_dtype, acc_dtype, mean=False):
    """Long-double sum with the order-independent bound (``mean``: divided by the count)."""
    wide = x.astype(R.WIDE)
    ax = None if axes is None else tuple(axes)
    n = x.size if axes is None else int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    with R.quiet():
        total = np.sum(wide, axis=ax, keepdims=keepdims)
        finite_abs = np.sum(np.where(np.isfinite(wide), np.abs(wide), 0), axis=ax,
                            keepdims=keepdims)
        if mean:
            total, finite_abs = total / n, finite_abs / n
        value = np.asarray(total).astype(jt.np_dtype(out_dtype))
        bound = (n + 2) * eps(acc_dtype) * finite_abs.astype(np.float64) \
            + ulp(value, out_dtype) + tiny(out_dtype)
    unknown = finite_abs * (n if mean else 1) > _FMAX[acc_dtype] * 0.99
    return Expect(value, atol=np.asarray(bound), unknown=np.asarray(unknown))


def _prod_expect(x, axes, keepdims, out_dtype, acc_dtype):
    wide = x.astype(R.WIDE)
    ax = None if axes is None else tuple(axes)
    n = x.size if axes is None else int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    with R.quiet():
        value_w = np.prod(wide, axis=ax, keepdims=keepdims)
        value = np.asarray(value_w).astype(jt.np_dtype(out_dtype))
        a = np.abs(wide)
        special = np.any((a == 0) | ~np.isfinite(a), axis=ax, keepdims=keepdims)
        lg = np.where((a > 0) & np.isfinite(a), np.log2(np.where(a > 0, a, 1)), 0)
        hi = np.sum(np.maximum(lg, 0), axis=ax, keepdims=keepdims)
        lo = np.sum(np.minimum(lg, 0), axis=ax, keepdims=keepdims)
        limit = math.log2(_FMAX[acc_dtype])
        has_nan = np.any(np.isnan(wide), axis=ax, keepdims=keepdims)
        # A partial product may overflow (or underflow) in one order and not another; then
        # a later 0 (or inf) gives NaN instead of 0 (or inf).
        unknown = ~has_nan & ((hi > limit - 1) | (lo < math.log2(tiny(acc_dtype)) + 1))
        del special
        bound = (n + 2) * eps(acc_dtype) * np.abs(value_w).astype(np.float64) \
            + ulp(value, out_dtype) + tiny(out_dtype)
    return Expect(value, atol=np.asarray(bound), unknown=np.asarray(unknown))


def _acc(dtype):
    """jnp.sum/prod/mean accumulate float16 and bfloat16 in float32."""
    return "float32" if dtype in ("float16", "bfloat16") else dtype


def reduce(g):
    name = g.pick(["sum", "prod", "max", "min", "mean", "argmax", "argmin", "any", "all"])
    a = g.operand(g.dtypes())
    t = g.ty(a)
    is_arg = name.startswith("arg")
    axis_text, axes, bad = _axis_arg(g, t.ndim, allow_tuple=not is_arg)
    keepdims = g.flag(0.3)
    method = not is_arg and name not in ("any", "all") and g.flag(0.2)
    template = (f"{{0}}.{name}(axis={axis_text}, keepdims={keepdims})" if method else
                f"jnp.{name}({{0}}, axis={axis_text}, keepdims={keepdims})")
    k = t.kind
    out = {"sum": _sum_dtype(g, t.dtype), "prod": _sum_dtype(g, t.dtype), "max": t.dtype,
           "min": t.dtype, "mean": jt.to_inexact(t.dtype, g.x64),
           "argmax": jt.default_int(g.x64), "argmin": jt.default_int(g.x64),
           "any": "bool", "all": "bool"}[name]
    reduced = range(t.ndim) if axes is None else axes
    empty = any(t.shape[i] == 0 for i in reduced) or (axes is None and t.size == 0)

    def rule(tys):
        if bad:   # (JAX's argmax/argmin/mean index the shape with the axis: IndexError)
            raise Raises(IndexError if is_arg or name == "mean" else ValueError)
        if empty and name in ("max", "min", "argmax", "argmin"):
            raise Raises(ValueError)
        return out, False

    def compute(vals, tys, ty):
        x = np.asarray(vals[0])
        ax = None if axes is None else tuple(axes)
        if name in ("any", "all"):
            return getattr(np, name)(x != 0, axis=ax, keepdims=keepdims)
        if is_arg:
            if axes is None:
                res = R.argmax(x.reshape(-1), 0, name == "argmax")
            else:
                res = R.argmax(x, axes[0], name == "argmax")
            return np.asarray(res).reshape(ty.shape).astype(jt.np_dtype(out))
        if name in ("max", "min"):
            return R.reduce_max(x, ax, keepdims, name == "max")
        xc = R.cast(x, out)
        if k != "f" and name in ("sum", "prod"):
            fn = np.sum if name == "sum" else np.prod
            with R.quiet():
                return np.asarray(fn(xc, axis=ax, keepdims=keepdims, dtype=xc.dtype))
        if name == "prod":
            return _prod_expect(xc, axes, keepdims, out, _acc(out))
        return _sum_expect(xc, axes, keepdims, out, _acc(out), mean=name == "mean")
    tol = "bound" if name in ("sum", "prod", "mean") else "exact"
    return build(g, f"jnp.{name}", "reduce", template, [("v", a)], rule, compute, tol,
                 shape=_reduced_shape(t.shape, axes, keepdims) if not bad else ())


def _sum_dtype(g, dtype):
    if jt.kind(dtype) in "bi":
        return jt.default_int(g.x64)
    if jt.kind(dtype) == "u":
        return jt.default_uint(g.x64)
    return dtype


def cumulative(g):
    name = g.pick(["jnp.cumsum", "jnp.cumprod", "lax.cummax", "lax.cummin"])
    is_lax = name.startswith("lax.")
    a = g.operand(g.dtypes("iuf") if is_lax else g.dtypes(), min_rank=1 if is_lax else 0)
    t = g.ty(a)
    if is_lax:
        ax = g.draw_int(0, t.ndim - 1)
        template = f"{name}({{0}}, axis={ax})"
        flat = False
    else:
        flat = t.ndim == 0 or g.flag(0.2)
        ax = None if flat else g.draw_int(0, t.ndim - 1)
        template = f"{name}({{0}}, axis={ax if flat else ax - t.ndim if g.flag(0.3) else ax})"
    out = jt.default_int(g.x64) if t.dtype == "bool" and not is_lax else t.dtype
    shape = (t.size,) if flat else t.shape

    def compute(vals, tys, ty):
        x = R.cast(np.asarray(vals[0]), out)
        if flat:
            x, axis = x.reshape(-1), 0
        else:
            axis = ax
        if name in ("lax.cummax", "lax.cummin"):
            fn = R.lax_max if name == "lax.cummax" else R.lax_min
            x = np.moveaxis(x, axis, 0).copy()
            for i in range(1, x.shape[0]):
                x[i] = fn(x[i - 1], x[i])
            return np.moveaxis(x, 0, axis)
        if jt.kind(out) != "f":
            with R.quiet():
                fn = np.cumsum if name == "jnp.cumsum" else np.cumprod
                return fn(x, axis=axis, dtype=x.dtype)
        return _cumulative_expect(x, axis, out, name == "jnp.cumsum")
    return build(g, name, "cumulative", template, [("v", a)],
                 lambda tys: (out, t.weak if is_lax else False), compute,
                 "bound" if name in ("jnp.cumsum", "jnp.cumprod") else "exact", shape=shape)


def _cumulative_expect(x, axis, dtype, is_sum):
    """Each prefix as a reduction of its own (cumsum/cumprod rounding depends on the order)."""
    xm = np.moveaxis(x, axis, -1)
    parts = []
    for i in range(xm.shape[-1]):
        prefix = xm[..., :i + 1]
        parts.append(_sum_expect(prefix, (prefix.ndim - 1,), False, dtype, dtype) if is_sum
                     else _prod_expect(prefix, (prefix.ndim - 1,), False, dtype, dtype))
    if not parts:
        return np.moveaxis(xm.copy(), -1, axis)

    def stack(field):
        arr = np.stack([np.broadcast_to(getattr(p, field), p.value.shape) for p in parts], -1)
        return np.moveaxis(arr, -1, axis)
    return Expect(stack("value"), atol=stack("atol"), unknown=stack("unknown"))


# ---------------------------------------------------------------- shape ops


def _factor_shape(g, size, max_rank=3):
    if size == 0:
        rank = g.draw_int(1, max_rank)
        dims = [g.draw_int(0, 3) for _ in range(rank)]
        dims[g.draw_int(0, rank - 1)] = 0
        return tuple(dims)
    factors = []
    n = size
    for p in (2, 3, 5, 7):
        while n % p == 0:
            factors.append(p)
            n //= p
    if n > 1:
        factors.append(n)
    rank = g.draw_int(max(1, min(len(factors), 1)), max_rank) if factors else g.draw_int(0, 2)
    dims = [1] * rank
    for f in factors:
        dims[g.draw_int(0, rank - 1)] *= f
    return tuple(dims)


def reshape(g):
    a = g.operand(g.dtypes(), max_rank=3)
    t = g.ty(a)
    new = _factor_shape(g, t.size)
    wrong = g.flag(0.03) and t.ndim > 0   # (JAX fails to check a 0-d operand's size)
    if wrong:
        new = new + (2,) if t.size else (1,)
    text = list(new)
    if t.size and not wrong and text and g.flag(0.3):
        text[g.draw_int(0, len(text) - 1)] = -1
    form = g.pick(["jnp.reshape({0}, %r)", "{0}.reshape(%r)"] if wrong else
                  ["jnp.reshape({0}, %r)", "{0}.reshape(%r)", "lax.reshape({0}, %r)"])
    # (lax.reshape is not given a wrong size: JAX only notices it when lowering.)
    if "lax" in form and -1 in text:
        text = list(new)
    template = form % (tuple(text),)

    def rule(tys):
        if wrong:
            raise Raises(TypeError)
        return t.dtype, t.weak
    return build(g, "reshape", "shape", template, [("v", a)], rule,
                 lambda vals, tys, ty: np.asarray(vals[0]).reshape(new), shape=new)


def transpose(g):
    a = g.operand(g.dtypes())
    t = g.ty(a)
    perm = tuple(g.draw_permutation(t.ndim))
    form = g.pick(["jnp.transpose({0}, %r)" % (perm,), "lax.transpose({0}, %r)" % (perm,),
                   "{0}.T", "jnp.swapaxes({0}, 0, -1)" if t.ndim else "{0}.T"])
    if form == "{0}.T":
        perm = tuple(reversed(range(t.ndim)))
    elif form.startswith("jnp.swapaxes"):
        perm = list(range(t.ndim))
        perm[0], perm[-1] = perm[-1], perm[0]
        perm = tuple(perm)
    new = tuple(t.shape[p] for p in perm)
    return build(g, form.split("(")[0], "shape", form, [("v", a)],
                 lambda tys: (t.dtype, t.weak),
                 lambda vals, tys, ty: np.transpose(np.asarray(vals[0]), perm), shape=new)


def broadcast(g):
    a = g.operand(g.dtypes())
    t = g.ty(a)
    form = g.pick(["broadcast_to", "expand_dims", "squeeze"])
    if form == "broadcast_to":
        target = [d if d != 1 or g.flag(0.5) else g.draw_int(0, 3) for d in t.shape]
        lead = [g.draw_int(0, 3) for _ in range(g.draw_int(0, max(0, 3 - t.ndim)))]
        new = tuple(lead + target)
        return build(g, "jnp.broadcast_to", "shape", "jnp.broadcast_to({0}, %r)" % (new,),
                     [("v", a)], lambda tys: (t.dtype, t.weak),
                     lambda vals, tys, ty: np.broadcast_to(np.asarray(vals[0]), new).copy(),
                     shape=new)
    if form == "expand_dims":
        ax = g.draw_int(-t.ndim - 1, t.ndim)
        new = np.expand_dims(np.zeros(t.shape), ax).shape
        return build(g, "jnp.expand_dims", "shape", "jnp.expand_dims({0}, %d)" % ax,
                     [("v", a)], lambda tys: (t.dtype, t.weak),
                     lambda vals, tys, ty: np.expand_dims(np.asarray(vals[0]), ax), shape=new)
    ones = tuple(i for i, d in enumerate(t.shape) if d == 1)
    axes = tuple(i for i in ones if g.flag(0.7))
    new = tuple(d for i, d in enumerate(t.shape) if i not in axes)
    return build(g, "jnp.squeeze", "shape", "jnp.squeeze({0}, %r)" % (axes,), [("v", a)],
                 lambda tys: (t.dtype, t.weak),
                 lambda vals, tys, ty: np.squeeze(np.asarray(vals[0]), axes), shape=new)


def concatenate(g):
    a = g.operand(g.dtypes(), min_rank=1)
    t = g.ty(a)
    ax = g.draw_int(0, t.ndim - 1)
    stack = g.flag(0.3)
    shape_b = t.shape if stack else t.shape[:ax] + (g.draw_int(0, 3),) + t.shape[ax + 1:]
    b = g.operand(g.dtypes(), shape=shape_b)
    tb = g.ty(b)
    fn = "stack" if stack else "concatenate"
    template = f"jnp.{fn}([{{0}}, {{1}}], axis={ax})"
    new = (t.shape[:ax] + (2,) + t.shape[ax:]) if stack else \
        t.shape[:ax] + (t.shape[ax] + tb.shape[ax],) + t.shape[ax + 1:]

    def compute(vals, tys, ty):
        x, y = [R.cast(np.asarray(v), ty.dtype) for v in vals]
        return (np.stack if stack else np.concatenate)([x, y], axis=ax)
    return build(g, f"jnp.{fn}", "shape", template, [("v", a), ("v", b)],
                 lambda tys: jt.result_dtype(tys, g.x64), compute, shape=new)


def flip(g):
    a = g.operand(g.dtypes(), min_rank=1)
    t = g.ty(a)
    axes = tuple(i for i in range(t.ndim) if g.flag(0.5)) or (0,)
    form = g.pick(["jnp.flip({0}, %r)", "lax.rev({0}, %r)"]) % (axes,)
    return build(g, form.split("(")[0], "shape", form, [("v", a)],
                 lambda tys: (t.dtype, t.weak),
                 lambda vals, tys, ty: np.flip(np.asarray(vals[0]), axes).copy(),
                 shape=t.shape)


def roll_tile(g):
    a = g.operand(g.dtypes(), min_rank=1)
    t = g.ty(a)
    form = g.pick(["roll", "tile", "repeat"])
    ax = g.draw_int(0, t.ndim - 1)
    if form == "roll":
        s = g.draw_int(-5, 5)
        return build(g, "jnp.roll", "shape", f"jnp.roll({{0}}, {s}, axis={ax})", [("v", a)],
                     lambda tys: (t.dtype, t.weak),
                     lambda vals, tys, ty: np.roll(np.asarray(vals[0]), s, axis=ax),
                     shape=t.shape)
    reps = g.draw_int(0, 3)
    if form == "tile":
        new = np.tile(np.zeros(t.shape), reps).shape
        return build(g, "jnp.tile", "shape", f"jnp.tile({{0}}, {reps})", [("v", a)],
                     lambda tys: (t.dtype, t.weak),
                     lambda vals, tys, ty: np.tile(np.asarray(vals[0]), reps), shape=new)
    new = np.repeat(np.zeros(t.shape), reps, axis=ax).shape
    return build(g, "jnp.repeat", "shape", f"jnp.repeat({{0}}, {reps}, axis={ax})", [("v", a)],
                 lambda tys: (t.dtype, t.weak),
                 lambda vals, tys, ty: np.repeat(np.asarray(vals[0]), reps, axis=ax),
                 shape=new)


def basic_index(g):
    a = g.operand(g.dtypes(), min_rank=1)
    t = g.ty(a)
    parts, key = [], []
    dim = 0
    n_parts = g.draw_int(1, t.ndim)
    ellipsis_at = g.draw_int(0, n_parts) if g.flag(0.2) else None
    for j in range(n_parts):
        if j == ellipsis_at:
            parts.append("...")
            key.append(Ellipsis)
            break
        if g.flag(0.15):
            parts.append("None")
            key.append(None)
            continue
        d = t.shape[dim]
        if d and g.flag(0.3):
            i = g.draw_int(-d, d - 1)
            if g.flag(0.05):   # out of bounds: JAX clamps a static index (gather semantics)
                i = g.pick([d, d + 2, -d - 1])
            parts.append(str(i))
            key.append(min(max(i + d if i < 0 else i, 0), d - 1))
        else:
            start = None if g.flag(0.3) else g.draw_int(-6, 6)
            stop = None if g.flag(0.3) else g.draw_int(-6, 6)
            step = g.pick([None, 1, 2, 3, -1, -2])
            parts.append(":".join("" if v is None else str(v) for v in (start, stop))
                         + ("" if step is None else f":{step}"))
            key.append(slice(start, stop, step))
        dim += 1
    template = "{0}[%s]" % ", ".join(parts) if parts else "{0}[...]"
    key = tuple(key)
    new = np.zeros(t.shape)[key].shape
    return build(g, "x[basic]", "slice", template, [("v", a)], lambda tys: (t.dtype, t.weak),
                 lambda vals, tys, ty: np.asarray(vals[0])[key].copy(), shape=new)


def lax_slice(g):
    a = g.operand(g.dtypes(), min_rank=1)
    t = g.ty(a)
    form = g.pick(["slice", "dynamic_slice", "dynamic_slice_traced", "dynamic_update_slice"])
    if form == "slice":
        start = [g.draw_int(0, d) for d in t.shape]
        limit = [g.draw_int(s, d) for s, d in zip(start, t.shape)]
        strides = [g.draw_int(1, 3) for _ in t.shape]
        key = tuple(slice(s, e, k) for s, e, k in zip(start, limit, strides))
        new = np.zeros(t.shape)[key].shape
        return build(g, "lax.slice", "slice",
                     f"lax.slice({{0}}, {tuple(start)}, {tuple(limit)}, {tuple(strides)})",
                     [("v", a)], lambda tys: (t.dtype, t.weak),
                     lambda vals, tys, ty: np.asarray(vals[0])[key].copy(), shape=new)
    starts = [g.draw_int(-6, 6) for _ in t.shape]
    weak = (lambda tys: all(s.weak for s in tys)) if form == "dynamic_update_slice" else \
        (lambda tys: tys[0].weak)
    if form == "dynamic_update_slice":
        upd_shape = tuple(g.draw_int(0, d) for d in t.shape)
        u = g.operand([t.dtype], shape=upd_shape)
        sizes = upd_shape
    else:
        sizes = tuple(g.draw_int(0, d) for d in t.shape)
    operands = [("v", a)]
    texts = [str(s) for s in starts]
    if form == "dynamic_slice_traced":
        i = g.operand([jt.default_int(g.x64)] if g.flag(0.9) else g.dtypes("iu"), shape=())
        operands.append(("v", i))
        texts[0] = "{1}"
    if form == "dynamic_update_slice":
        operands.append(("v", u))
        template = f"lax.dynamic_update_slice({{0}}, {{1}}, ({', '.join(texts)},))"
    else:
        template = f"lax.dynamic_slice({{0}}, ({', '.join(texts)},), {sizes})"

    def rule(tys):
        # The start indices must share one dtype; Python ints count as the default int.
        if form == "dynamic_slice_traced" and t.ndim > 1 \
                and tys[1].dtype != jt.default_int(g.x64):
            raise Raises(TypeError)
        return t.dtype, weak(tys)

    def clamped(vals):
        st = list(starts)
        if form == "dynamic_slice_traced":
            st[0] = int(np.asarray(vals[1]))
        out = []
        for s, d, n in zip(st, t.shape, sizes):
            s = s + d if s < 0 else s
            out.append(min(max(s, 0), d - n))
        return out

    def compute(vals, tys, ty):
        x = np.asarray(vals[0]).copy()
        key = tuple(slice(s, s + n) for s, n in zip(clamped(vals), sizes))
        if form == "dynamic_update_slice":
            x[key] = np.asarray(vals[1])
            return x
        return x[key].copy()
    return build(g, f"lax.{form}", "slice", template, operands, rule, compute,
                 shape=t.shape if form == "dynamic_update_slice" else sizes)


def pad(g):
    a = g.operand(g.dtypes(), min_rank=1)
    t = g.ty(a)
    if g.flag(0.5):
        cfg = tuple((g.draw_int(-2, 2), g.draw_int(-2, 2), g.draw_int(0, 2)) for _ in t.shape)
        sizes = [lo + hi + d + max(d - 1, 0) * it for (lo, hi, it), d in zip(cfg, t.shape)]
        bad = any(s < 0 for s in sizes)
        template = f"lax.pad({{0}}, jnp.zeros((), {{0}}.dtype), {cfg})"

        def rule(tys):
            if bad:
                raise Raises(ValueError)
            return t.dtype, False

        def compute(vals, tys, ty):
            return _lax_pad(np.asarray(vals[0]), cfg)
        return build(g, "lax.pad", "pad", template, [("v", a)], rule, compute,
                     shape=() if bad else tuple(sizes))
    widths = tuple((g.draw_int(0, 2), g.draw_int(0, 2)) for _ in t.shape)
    modes = ["constant", "edge", "wrap", "reflect", "symmetric"] if t.size else ["constant"]
    mode = g.pick(modes)
    cval = g.pick([0, 1, -1]) if mode == "constant" and t.kind != "b" else 0
    extra = f", constant_values={cval}" if mode == "constant" and cval else ""
    template = f"jnp.pad({{0}}, {widths}, mode={mode!r}{extra})"
    new = tuple(d + lo + hi for d, (lo, hi) in zip(t.shape, widths))

    def compute(vals, tys, ty):
        x = np.asarray(vals[0])
        kw = {"constant_values": np.asarray(cval).astype(x.dtype)} if mode == "constant" else {}
        return np.pad(x, widths, mode=mode, **kw)
    return build(g, f"jnp.pad[{mode}]", "pad", template, [("v", a)],
                 lambda tys: (t.dtype, t.weak), compute, shape=new)


def _lax_pad(x, cfg):
    for axis, (lo, hi, interior) in enumerate(cfg):
        d = x.shape[axis]
        n = d + max(d - 1, 0) * interior
        shape = list(x.shape)
        shape[axis] = n
        spread = np.zeros(shape, x.dtype)
        idx = [slice(None)] * x.ndim
        idx[axis] = slice(0, n, interior + 1)
        spread[tuple(idx)] = x
        before = [(0, 0)] * x.ndim
        before[axis] = (max(lo, 0), max(hi, 0))
        spread = np.pad(spread, before)
        idx = [slice(None)] * x.ndim
        idx[axis] = slice(max(-lo, 0), spread.shape[axis] - max(-hi, 0))
        x = spread[tuple(idx)]
    return x.copy()


# ---------------------------------------------------------------- dot


def dot(g):
    form = g.pick(["matmul", "op_matmul", "dot", "dot_general"])
    m, k, n = (g.draw_int(0, 4) for _ in range(3))
    batch = g.draw_int(1, 3)
    case = g.pick(["vv", "mm", "vm", "mv", "bmm"]) if form != "dot_general" else "bmm"
    sa, sb = {"vv": ((k,), (k,)), "mm": ((m, k), (k, n)), "vm": ((k,), (k, n)),
              "mv": ((m, k), (k,)), "bmm": ((batch, m, k), (batch, k, n))}[case]
    if case == "bmm" and form != "dot_general":
        if form == "dot":
            sa, sb = (m, k), (k, n)
        elif g.flag(0.5):
            sb = (1, k, n) if g.flag(0.5) else (k, n)
    a = g.operand(g.dtypes(), shape=sa)
    b = g.operand([g.ty(a).dtype] if form == "dot_general" else g.dtypes(), shape=sb)
    template = {"matmul": "jnp.matmul({0}, {1})", "op_matmul": "{0} @ {1}",
                "dot": "jnp.dot({0}, {1})",
                "dot_general": "lax.dot_general({0}, {1}, (((2,), (1,)), ((0,), (0,))))"}[form]
    out_shape = np.matmul(np.zeros(sa), np.zeros(sb)).shape
    terms = sa[-1]

    def rule(tys):
        if form == "dot_general":
            return tys[0].dtype, all(t.weak for t in tys)
        return jt.result_dtype(tys, g.x64)

    def compute(vals, tys, ty):
        x, y = [R.cast(np.asarray(v), ty.dtype) for v in vals]
        if ty.dtype == "bool":
            return np.matmul(x.astype(np.int64), y.astype(np.int64)) != 0
        if ty.kind in "iu":
            with R.quiet():
                wide = np.uint64 if ty.kind == "u" else np.int64
                return np.matmul(x.astype(wide), y.astype(wide)).astype(jt.np_dtype(ty.dtype))
        xw, yw = x.astype(R.WIDE), y.astype(R.WIDE)
        with R.quiet():
            value = np.matmul(xw, yw)
            fin = lambda z: np.where(np.isfinite(z), np.abs(z), 0)   # noqa: E731
            finite_abs = np.matmul(fin(xw), fin(yw)).astype(np.float64)
            out = value.astype(jt.np_dtype(ty.dtype))
            bound = (terms + 2) * eps(ty.dtype) * finite_abs + ulp(out, ty.dtype) \
                + tiny(ty.dtype)
        return Expect(out, atol=bound, unknown=finite_abs > _FMAX[ty.dtype] * 0.99)
    return build(g, form if form != "op_matmul" else "x @ y", "dot", template,
                 [("v", a), ("v", b)], rule, compute, "bound", shape=out_shape)


# ---------------------------------------------------------------- gather / scatter


def _index_values(g, n, shape):
    """An integer index operand for an axis of size n (values drawn by the input strategy)."""
    return g.operand(g.dtypes("iu"), shape=shape, weak_ok=False)


def gather(g):
    a = g.operand(g.dtypes(), min_rank=1, min_dim=1)
    t = g.ty(a)
    form = g.pick(["x[i]", "x[:, i]", "take", "take_clip", "take_wrap", "get_fill"])
    if form == "x[:, i]" and t.ndim < 2:
        form = "x[i]"
    ax = 1 if form == "x[:, i]" else (g.draw_int(0, t.ndim - 1) if form.startswith("take")
                                      else 0)
    n = t.shape[ax]
    idx_shape = g.shape(0, 2)
    i = _index_values(g, n, idx_shape)
    template = {"x[i]": "{0}[{1}]", "x[:, i]": "{0}[:, {1}]",
                "take": f"jnp.take({{0}}, {{1}}, axis={ax})",
                "take_clip": f"jnp.take({{0}}, {{1}}, axis={ax}, mode='clip')",
                "take_wrap": f"jnp.take({{0}}, {{1}}, axis={ax}, mode='wrap')",
                "get_fill": "{0}.at[{1}].get(mode='fill', fill_value=7)"}[form]
    new = t.shape[:ax] + idx_shape + t.shape[ax + 1:]

    def compute(vals, tys, ty):
        x = np.asarray(vals[0])
        mode = {"take_clip": "clip", "take_wrap": "wrap"}.get(form, "fill")
        pos, ok = jax_index(np.asarray(vals[1]), n, mode)
        out = np.take(x, pos, axis=ax)
        if form in ("take", "get_fill"):
            fill = _fill_value(x.dtype, 7 if form == "get_fill" else None)
            mask = ok.reshape((1,) * ax + ok.shape + (1,) * (x.ndim - ax - 1))
            out = np.where(mask, out, fill).astype(x.dtype)
        return out
    node = build(g, form, "gather", template, [("v", a), ("v", i)],
                 lambda tys: (t.dtype, t.weak), compute, shape=new)
    node.vmap_unspecified = _index_beyond_int32
    return node


def _index_beyond_int32(*operands):
    """JAX wraps an index outside the int32 range into it when indexing (see jax_index),
    but its batched gather/scatter (vmap) clamps such an index instead: vmap and a loop
    disagree in JAX itself, so the vmap check leaves these nodes out."""
    idx = np.asarray(operands[-1])   # the index operand comes last (gather and scatter)
    if idx.dtype.kind not in "iu" or idx.size == 0:
        return False
    big = idx.astype(object)
    return bool(np.any((big < -2 ** 31) | (big >= 2 ** 31)))


def jax_index(raw, n, mode):
    """Positions JAX's gather/scatter use for integer indices ``raw`` into an axis of size n,
    and which are in bounds.  ``clip`` clamps in the index's own dtype and ``wrap`` takes
    the index modulo n.  Otherwise negative indices of a signed dtype count from the end
    (the addition wrapping in that dtype), the index is converted to int32 with wrapping
    (the index type JAX picks for small operands: 2**32 + 1 becomes 1), and whatever
    is then outside [0, n) is clamped (x[i]), filled (take, get(mode='fill')) or dropped
    (scatter)."""
    big = raw.astype(object)
    if mode == "clip":
        pos = np.asarray(np.clip(big, 0, n - 1)).astype(np.int64)
        return pos, np.ones(raw.shape, bool)
    if mode == "wrap":
        return np.asarray(big % n).astype(np.int64), np.ones(raw.shape, bool)
    norm = raw
    if raw.dtype.kind == "i":
        with R.quiet():
            norm = np.where(raw < 0, raw + np.asarray(n, raw.dtype), raw).astype(raw.dtype)
    i32 = R.cast(norm, "int32").astype(np.int64)
    ok = (i32 >= 0) & (i32 < n)
    return np.clip(i32, 0, n - 1), ok


def _fill_value(dtype, given):
    if given is not None:
        return R.cast(np.asarray(given), np.dtype(dtype).name if np.dtype(dtype).name in jt.ALL
                      else "bfloat16")
    if R.is_float(dtype):
        return np.asarray(np.nan).astype(dtype)
    if dtype == np.bool_:
        return np.asarray(True)
    info = np.iinfo(dtype)
    return np.asarray(info.min if dtype.kind == "i" else info.max, dtype)


def scatter(g):
    a = g.operand(g.dtypes(), min_rank=1, min_dim=1, weak_ok=False)
    t = g.ty(a)
    n = t.shape[0]
    method = g.pick(["add", "set", "min", "max", "mul"])
    if method == "set":
        # Distinct positions: JAX leaves the winner among duplicate set-indices unspecified.
        count = g.draw_int(0, n)
        positions = g.draw_permutation(n)[:count]
        raw = [p - n if g.flag(0.4) else p for p in positions]
        idx_text = repr(raw)
        i = None
    else:
        i = _index_values(g, n, (g.draw_int(0, 4),))
        count = None
    upd_shape = ((count,) if i is None else g.ty(i).shape) + t.shape[1:]
    u = g.operand([t.dtype], shape=upd_shape, weak_ok=False)
    operands = [("v", a), ("v", u)] + ([("v", i)] if i is not None else [])
    idx_src = "jnp.array(%s, jnp.int32)" % idx_text if i is None else "{2}"
    template = f"{{0}}.at[{idx_src}].{method}({{1}})"

    def compute(vals, tys, ty):
        x = np.asarray(vals[0]).copy()
        upd = np.asarray(vals[1])
        idx = np.asarray(raw if i is None else vals[2])
        pos, ok = jax_index(idx, n, "drop")
        norm = np.where(ok, pos, -1)
        if method == "set":
            for j, p in enumerate(norm):
                x[p] = upd[j]
            return x
        if method in ("min", "max"):
            fn = R.lax_min if method == "min" else R.lax_max
            for j, p in enumerate(norm):
                if 0 <= p < n:
                    x[p] = fn(x[p], upd[j])
            return x
        if ty.kind != "f" and ty.kind != "b" or ty.dtype == "bool":
            op = {"add": np.logical_or if ty.dtype == "bool" else np.add,
                  "mul": np.logical_and if ty.dtype == "bool" else np.multiply}[method]
            with R.quiet():
                for j, p in enumerate(norm):
                    if 0 <= p < n:
                        x[p] = op(x[p], upd[j])
            return x
        return _scatter_float(x, upd, norm, n, method, ty.dtype)
    tol = "bound" if method in ("add", "mul") else "exact"

    def rule(tys):
        # lax.add/mul reject bool (an empty update is returned before any op runs)
        if t.dtype == "bool" and method in ("add", "mul") and int(np.prod(upd_shape)):
            raise Raises(TypeError)
        return t.dtype, False
    node = build(g, f"x.at[i].{method}", "scatter", template, operands, rule, compute, tol,
                 shape=t.shape)
    node.vmap_unspecified = _index_beyond_int32 if i is not None else None
    return node


def _scatter_float(x, upd, norm, n, method, dtype):
    """Scatter-add/mul of floats: each element a sum (product) of its updates, in any order."""
    value = x.astype(R.WIDE)
    mag = np.abs(np.where(np.isfinite(value), value, 0))
    count = np.ones(x.shape)
    with R.quiet():
        for j, p in enumerate(norm):
            if 0 <= p < n:
                u = upd[j].astype(R.WIDE)
                value[p] = value[p] + u if method == "add" else value[p] * u
                if method == "add":
                    mag[p] += np.abs(np.where(np.isfinite(u), u, 0))
                count[p] += 1
        out = value.astype(jt.np_dtype(dtype))
        scale = mag if method == "add" else np.abs(value).astype(np.float64)
        bound = (count + 1) * eps(dtype) * scale.astype(np.float64) + ulp(out, dtype) \
            + tiny(dtype)
        unknown = (count > 2) & (method == "mul") | (scale > _FMAX[dtype] * 0.99)
    return Expect(out, atol=bound, unknown=unknown)


# ---------------------------------------------------------------- sort


def sort(g):
    a = g.operand(g.dtypes(), min_rank=1 if g.flag(0.8) else 0)
    t = g.ty(a)
    name = g.pick(["jnp.sort", "jnp.argsort", "lax.sort"] if t.ndim else ["jnp.sort"])
    flat = name != "lax.sort" and (t.ndim == 0 or g.flag(0.15))
    ax = None if flat else g.draw_int(0, t.ndim - 1)
    if name == "lax.sort":
        template = f"lax.sort({{0}}, dimension={ax})"
    else:
        template = f"{name}({{0}}, axis={ax})"
    shape = (t.size,) if flat else t.shape

    def compute(vals, tys, ty):
        x = np.asarray(vals[0])
        x, axis = (x.reshape(-1), 0) if flat else (x, ax)
        if name == "jnp.argsort":
            return R.jnp_argsort(x, axis).astype(jt.np_dtype(ty.dtype))
        return R.jnp_sort(x, axis)
    out = jt.default_int(g.x64) if name == "jnp.argsort" else t.dtype
    return build(g, name, "sort", template, [("v", a)],
                 lambda tys: (out, t.weak and name != "jnp.argsort"), compute, shape=shape)


FAMILIES = [reduce, reduce, cumulative, reshape, transpose, broadcast, concatenate, flip,
            roll_tile, basic_index, lax_slice, pad, dot, gather, scatter, sort]

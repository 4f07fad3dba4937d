"""Lowering rules for non-fusible equations: each returns source lines defining its outputs.

Rule signature: ``rule(gen, eqn) -> list[str]``; ``gen.name(v)`` is a value's
variable (an array, or a scalar for rank-0 values) and ``gen.shape_src`` a
shape tuple whose sizes are read from the inputs where possible.
"""
import numpy as np

from numjax.lax import control_flow as cf
from numjax.lax import indexing as ix
from numjax.lax import linalg as la
from numjax.lax import reductions as rd
from numjax.lax import shape as shp

from . import scalar


def transposed_src(src, perm):
    """Source of contiguous ``src`` permuted by ``perm``: ``.T`` for a matrix (cheap to
    compile), else the cached ``kn.transposed`` kernel."""
    perm = tuple(int(d) for d in perm)
    if perm == (1, 0):
        return f"np.ascontiguousarray({src}.T)"
    return f"kn.transposed({src}, {perm})"


def _arr(gen, v):
    """An array view of ``v`` (rank-0 values live as scalars in generated code)."""
    if v.aval.shape == ():
        return f"np.full((1,), {gen.name(v)})"
    return gen.name(v)


def assign_reshaped(gen, out, src):
    """The line setting ``out`` from array source ``src`` holding its elements in C order
    (rank-0 values live as scalars in generated code)."""
    if out.aval.shape == ():
        return f"{gen.name(out)} = {src}.reshape(-1)[0]"
    return f"{gen.name(out)} = {src}.reshape({gen.shape_src(out.aval.shape)})"


def _out(gen, eqn, expr):
    out = eqn.outvars[0]
    if out.aval.shape == ():
        return [f"{gen.name(out)} = ({expr}).reshape(-1)[0]"] if "np." in expr or "[" in expr else \
               [f"{gen.name(out)} = {expr}"]
    return [f"{gen.name(out)} = np.ascontiguousarray({expr})"]


def _reshape(gen, eqn):
    x, out = eqn.invars[0], eqn.outvars[0]
    src = _arr(gen, x)
    if eqn.params.get("dimensions") is not None:
        src = transposed_src(src, eqn.params['dimensions'])
    return [assign_reshaped(gen, out, src)]


def _transpose(gen, eqn):
    perm = tuple(eqn.params["permutation"])
    return [f"{gen.name(eqn.outvars[0])} = {transposed_src(gen.name(eqn.invars[0]), perm)}"]


def _slice(gen, eqn):
    p = eqn.params
    strides = p["strides"] or (1,) * len(p["start_indices"])
    idx = ", ".join(f"{s}:{l}:{st}" if st != 1 else f"{s}:{l}"
                    for s, l, st in zip(p["start_indices"], p["limit_indices"], strides))
    return _out(gen, eqn, f"{gen.name(eqn.invars[0])}[{idx},]")


def _rev(gen, eqn):
    x = eqn.invars[0]
    idx = ", ".join("::-1" if d in eqn.params["dimensions"] else ":" for d in range(x.aval.ndim))
    return _out(gen, eqn, f"{gen.name(x)}[{idx},]")


def _concatenate(gen, eqn):
    parts = ", ".join(gen.name(v) if v.aval.shape != () else _arr(gen, v) for v in eqn.invars)
    return [f"{gen.name(eqn.outvars[0])} = np.concatenate(({parts},), axis={eqn.params['dimension']})"]


def _dot_general(gen, eqn):
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = eqn.invars
    out = eqn.outvars[0]
    if lhs.aval.shape == () or rhs.aval.shape == ():
        # No contraction with a scalar: a scaled copy of the other operand.
        cast = scalar.np_type(out.aval.dtype)
        if out.aval.shape == ():
            return [f"{gen.name(out)} = {cast}({gen.name(lhs)} * {gen.name(rhs)})"]
        return [f"{gen.name(out)} = ({gen.name(lhs)} * {gen.name(rhs)}).astype({cast})"]
    ln, rn = lhs.aval.ndim, rhs.aval.ndim
    lfree = [i for i in range(ln) if i not in lc and i not in lb]
    rfree = [i for i in range(rn) if i not in rc and i not in rb]
    sh = lambda v, dims: " * ".join([gen.dim(v.aval.shape[d]) for d in dims]) or "1"  # noqa: E731
    if lhs.aval.dtype != out.aval.dtype or rhs.aval.dtype != out.aval.dtype:
        # preferred_element_type, mixed operand types: accumulate in the result type, as XLA does.
        cast = scalar.np_type(out.aval.dtype)
        lines = [f"{gen.name(lhs)}_c = {gen.name(lhs)}.astype({cast})",
                 f"{gen.name(rhs)}_c = {gen.name(rhs)}.astype({cast})"]
        return lines + _dot_general_cast(gen, eqn)
    if not lb and lhs.aval.dtype.kind in "fc" and out.aval.shape != ():
        l2 = _as_matrix(gen, lhs, lfree, lc, sh)
        r2 = _as_matrix(gen, rhs, rc, rfree, sh)
        if l2 and r2:
            # Plain matmul: BLAS reads transposed operands in place (no copies).
            res = gen.tmp("mm")
            return [f"{res} = np.dot({l2}, {r2})",
                    f"{gen.name(out)} = {res}.reshape({gen.shape_src(out.aval.shape)})"]
    lperm, rperm = tuple(lb) + tuple(lfree) + tuple(lc), tuple(rb) + tuple(rc) + tuple(rfree)
    l3 = f"kn.as3({_arr(gen, lhs)}, {lperm}, {sh(lhs, lb)}, {sh(lhs, lfree)}, {sh(lhs, lc)})"
    r3 = f"kn.as3({_arr(gen, rhs)}, {rperm}, {sh(rhs, rb)}, {sh(rhs, rc)}, {sh(rhs, rfree)})"
    dt = scalar.np_type(out.aval.dtype)
    res = gen.tmp("mm")
    kernel = "batched_matmul_blas" if lhs.aval.dtype.kind in "fc" else "batched_matmul_loop"
    return [f"{res} = kn.{kernel}({l3}, {r3}, {dt}(0))", assign_reshaped(gen, out, res)]


def _dot_general_cast(gen, eqn):
    """The same dot_general on the operands already cast to the result dtype."""
    from numjax.jaxpr import JaxprEqn, Var
    lhs, rhs = eqn.invars
    out_dt = eqn.outvars[0].aval.dtype
    casted = []
    for v in (lhs, rhs):
        nv = Var(v.aval.update(dtype=out_dt))
        gen.names[nv] = f"{gen.name(v)}_c"
        casted.append(nv)
    return _dot_general(gen, JaxprEqn(eqn.primitive, casted, eqn.outvars, eqn.params))


def _as_matrix(gen, v, rows, cols, sh):
    """A 2-D view of ``v`` with ``rows`` then ``cols`` dims, when one exists without copying:
    the dims must each be consecutive, in order (C view) or swapped (transposed C view)."""
    if v.aval.shape == ():
        return None
    rows, cols = list(rows), list(cols)
    nd = v.aval.ndim
    name = gen.name(v)
    if rows + cols == list(range(nd)):
        return f"{name}.reshape(({sh(v, rows)}, {sh(v, cols)}))"
    if cols + rows == list(range(nd)):
        return f"{name}.reshape(({sh(v, cols)}, {sh(v, rows)})).T"
    return None


def _squeeze(gen, eqn):
    return [assign_reshaped(gen, eqn.outvars[0], gen.name(eqn.invars[0]))]


def _cumulative(kind):
    def rule(gen, eqn):
        x, out = eqn.invars[0], eqn.outvars[0]
        nd = x.aval.ndim
        axis, reverse = eqn.params["axis"], eqn.params["reverse"]
        perm = tuple(d for d in range(nd) if d != axis) + (axis,)
        inv = tuple(int(i) for i in np.argsort(perm))
        moved = transposed_src(gen.name(x), perm) if axis != nd - 1 else gen.name(x)
        res = gen.tmp("cum")
        lines = [f"{res} = kn.cumulative_last({moved}.reshape(-1, {gen.dim(x.aval.shape[axis])}), "
                 f"{kind}, {reverse})"]
        moved_shape = tuple(x.aval.shape[d] for d in perm)
        lines.append(f"{res} = {res}.reshape({gen.shape_src(moved_shape)})")
        if axis != nd - 1:
            lines.append(f"{res} = {transposed_src(res, inv)}")
        lines.append(f"{gen.name(out)} = {res}")
        return lines
    return rule


def _dynamic_slice(gen, eqn):
    x, *starts = eqn.invars
    sizes = eqn.params["slice_sizes"]
    lines, idx = [], []
    for d, (s, k) in enumerate(zip(starts, sizes)):
        t = gen.tmp("st")
        lines.append(f"{t} = min(max(int({gen.name(s)}), 0), {gen.name(x)}.shape[{d}] - {k})")
        idx.append(f"{t}:{t} + {k}")
    return lines + _out(gen, eqn, f"{gen.name(x)}[{', '.join(idx)},]")


def _dynamic_update_slice(gen, eqn):
    x, upd, *starts = eqn.invars
    out = gen.name(eqn.outvars[0])
    lines, idx = [f"{out} = {gen.name(x)}.copy()"], []
    for d, s in enumerate(starts):
        t = gen.tmp("st")
        k = f"{gen.name(upd)}.shape[{d}]"
        lines.append(f"{t} = min(max(int({gen.name(s)}), 0), {gen.name(x)}.shape[{d}] - {k})")
        idx.append(f"{t}:{t} + {k}")
    lines.append(f"{out}[{', '.join(idx)},] = {gen.name(upd)}")
    return lines


def _pad(gen, eqn):
    x, pv = eqn.invars
    out = eqn.outvars[0]
    cfg = eqn.params["padding_config"]
    # Negative padding crops: pad with the non-negative parts, then slice the crop away.
    full_shape = [lo_ + hi_ + n + max(n - 1, 0) * it for (lo_, hi_, it), n in
                  zip([(max(lo, 0), max(hi, 0), it) for lo, hi, it in cfg], x.aval.shape)]
    idx = ", ".join(f"{max(lo, 0)}:{max(lo, 0) + (n - 1) * (it + 1) + 1 if n else max(lo, 0)}:{it + 1}"
                    for (lo, hi, it), n in zip(cfg, x.aval.shape))
    tmp = gen.tmp("pad")
    crop = ", ".join(f"{-min(lo, 0)}:{m - (-min(hi, 0))}" for (lo, hi, _), m in zip(cfg, full_shape))
    return [f"{tmp} = np.full(({''.join(str(m) + ', ' for m in full_shape)}), {gen.name(pv)}, "
            f"{scalar.np_type(out.aval.dtype)})",
            f"{tmp}[{idx},] = {gen.name(x)}",
            f"{gen.name(out)} = np.ascontiguousarray({tmp}[{crop},])"]


NODE_RULES = {
    shp.reshape_p: _reshape, shp.transpose_p: _transpose, ix.slice_p: _slice, shp.rev_p: _rev,
    shp.concatenate_p: _concatenate, la.dot_general_p: _dot_general, shp.squeeze_p: _squeeze,
    rd.cumsum_p: _cumulative(0), rd.cumprod_p: _cumulative(1), rd.cummax_p: _cumulative(2),
    rd.cummin_p: _cumulative(3), ix.dynamic_slice_p: _dynamic_slice,
    ix.dynamic_update_slice_p: _dynamic_update_slice, shp.pad_p: _pad,
}


# ---------------------------------------------------------------- control flow
# Bodies and branches become generated sub-functions; the loops and branches themselves
# are real Python control flow that Numba compiles.

def _names(gen, vars_):
    return [gen.name(v) for v in vars_]


def _call(fn, args):
    return f"{fn}({', '.join(args)}{',' if len(args) == 1 else ''})"


def _carry_init(gen, v):
    # Loop-carried arrays are copied once so their Numba type is the fresh-array type
    # the body returns (inputs may be read-only).
    return f"{gen.name(v)}.copy()" if type(v).__name__ != "Literal" and v.aval.shape != () else gen.name(v)


def _cond(gen, eqn):
    index, *ops = eqn.invars
    outs = _names(gen, eqn.outvars)
    target = ", ".join(outs) + ("," if len(outs) == 1 else "")
    args = _names(gen, ops)
    fns = [gen.subfunction(b) for b in eqn.params["branches"]]
    idx = gen.name(index)
    lines = []
    for k, fn in enumerate(fns):
        if k == 0:
            lines.append(f"if {idx} <= 0:" if len(fns) > 1 else "if True:")
        elif k == len(fns) - 1:
            lines.append("else:")
        else:
            lines.append(f"elif {idx} == {k}:")
        lines.append(f"    {target} = {_call(fn, args)}")
    return lines


def _while(gen, eqn):
    p = eqn.params
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cconsts, bconsts = eqn.invars[:nc], eqn.invars[nc:nc + nb]
    init = eqn.invars[nc + nb:]
    cond_fn, body_fn = gen.subfunction(p["cond_jaxpr"]), gen.subfunction(p["body_jaxpr"])
    carry = [gen.tmp("c") for _ in init]
    target = ", ".join(carry) + ("," if len(carry) == 1 else "")
    lines = [f"{c} = {_carry_init(gen, v)}" for c, v in zip(carry, init)]
    lines += ["while True:",
              f"    if not {_call(cond_fn, _names(gen, cconsts) + carry)}[0]:",
              "        break",
              f"    {target} = {_call(body_fn, _names(gen, bconsts) + carry)}"]
    lines += [f"{gen.name(o)} = {c}" for o, c in zip(eqn.outvars, carry)]
    return lines


def _scan(gen, eqn):
    p = eqn.params
    nconst, ncarry, length = p["num_consts"], p["num_carry"], p["length"]
    consts = eqn.invars[:nconst]
    init = eqn.invars[nconst:nconst + ncarry]
    xs = eqn.invars[nconst + ncarry:]
    body = gen.subfunction(p["jaxpr"])
    carry = [gen.tmp("c") for _ in init]
    ys = eqn.outvars[ncarry:]
    y_tmps = [gen.tmp("y") for _ in ys]
    t, tt = gen.tmp("t"), gen.tmp("tt")
    lines = [f"{c} = {_carry_init(gen, v)}" for c, v in zip(carry, init)]
    for y in ys:
        lines.append(f"{gen.name(y)} = np.empty({gen.shape_src(y.aval.shape)}, {scalar.np_type(y.aval.dtype)})")
    lines.append(f"for {tt} in range({gen.dim(length)}):")
    lines.append(f"    {t} = {gen.dim(length)} - 1 - {tt}" if p["reverse"] else f"    {t} = {tt}")
    x_args = [f"{gen.name(x)}[{t}]" for x in xs]
    target = ", ".join(carry + y_tmps) + ("," if len(carry + y_tmps) == 1 else "")
    lines.append(f"    {target} = {_call(body, _names(gen, consts) + carry + x_args)}")
    for y, tmp in zip(ys, y_tmps):
        lines.append(f"    {gen.name(y)}[{t}] = {tmp}")
    lines += [f"{gen.name(o)} = {c}" for o, c in zip(eqn.outvars[:ncarry], carry)]
    return lines


NODE_RULES.update({cf.cond_p: _cond, cf.while_p: _while, cf.scan_p: _scan})

# Families with lowering rules of their own register them into NODE_RULES on import.
from . import nodes_fft, nodes_indexing, nodes_linalg, nodes_random, nodes_sorting  # noqa: E402,F401

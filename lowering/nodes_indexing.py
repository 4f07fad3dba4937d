"""CPU lowering of gather and the scatters (see nodes.py for the rule signature).

Each equation becomes explicit loops: over the batch positions of the indices (outer),
reading the window starts once per position, then over the window (inner).  The loop
order matches the eager implementation, so repeated scatter indices resolve the same way
(the last update wins).
"""
import numpy as np

from numjax.lax import indexing as ix
from numjax.lax.indexing import GatherScatterMode, default_fill_value, gather_index_wrap_dtype

from . import scalar
from .nodes import NODE_RULES, assign_reshaped

_COMBINE = {
    ix.scatter_p: "{u}",
    ix.scatter_add_p: "{a} + {u}",
    ix.scatter_sub_p: "{a} - {u}",
    ix.scatter_mul_p: "{a} * {u}",
    # XLA's min/max: NaN wins, and -0 (min) or +0 (max) wins over the other zero.
    ix.scatter_min_p: "sh.fmin({u}, {a})",
    ix.scatter_max_p: "sh.fmax({u}, {a})",
}


def _window_dims(ndim, *excluded):
    skip = set().union(*excluded)
    return [d for d in range(ndim) if d not in skip]


def _array_view(gen, v, lines):
    """A name indexable with one subscript per dim (rank-0 values become shape (1,))."""
    if v.aval.shape == ():
        t = gen.tmp("s")
        lines.append(f"{t} = np.full((1,), {gen.name(v)})")
        return t
    return gen.name(v)


def _subscript(parts):
    return ", ".join(parts) if parts else "0"


def _fill_literal(value, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return f"{scalar.np_type(dtype)}(complex({float(np.real(value))!r}, {float(np.imag(value))!r}))" \
            if not np.isnan(value) else f"{scalar.np_type(dtype)}(complex(np.nan, 0.0))"
    return scalar.literal(value, dtype)


def _loops(gen, lines, names, sizes, depth):
    for n, s in zip(names, sizes):
        lines.append("    " * depth + f"for {n} in range({s}):")
        depth += 1
    return depth


def _start_value(raw, idx_dtype, wrap):
    """``raw`` (an index element of ``idx_dtype``) as an int64 with the same range verdict: wrapped
    into ``wrap`` when given; a uint64 past int64's range saturates (out of range either way)."""
    if wrap is not None:
        return f"np.int64(np.{np.dtype(wrap).name}({raw}))"
    if np.dtype(idx_dtype) == np.uint64:
        return f"np.int64(min({raw}, np.uint64({2**63 - 1})))"
    return f"np.int64({raw})"


def _read_starts(gen, lines, depth, x, idx, bvars, index_map, sizes, clip, wrap=None):
    """Lines reading the window start of each indexed operand dim; returns the start names and
    the in-range condition (None when starts are clamped instead).  The starts are clamped into
    range either way: the kernel language may evaluate both arms of ``a if ok else fill``, so a
    read must stay in bounds even where ``ok`` is false."""
    pad = "    " * depth
    starts, conds = {}, []
    for k, d in enumerate(index_map):
        s = gen.tmp("st")
        hi = f"{gen.dim(x.aval.shape[d])} - {sizes[d]}"
        raw = f"{gen.name(idx)}[{_subscript(bvars + [str(k)])}]"
        lines.append(f"{pad}{s} = {_start_value(raw, idx.aval.dtype, wrap)}")
        if not clip:
            c = gen.tmp("in")
            lines.append(f"{pad}{c} = 0 <= {s} <= {hi}")
            conds.append(c)
        lines.append(f"{pad}{s} = min(max({s}, 0), max({hi}, 0))")
        starts[d] = s
    return starts, (" and ".join(conds) if conds else None)


def _operand_subscript(ndim, starts, batching, bvars, window, wvars):
    parts = []
    for d in range(ndim):
        terms = []
        if d in starts:
            terms.append(starts[d])
        if d in batching:
            terms.append(bvars[batching[d]])
        if d in window:
            terms.append(wvars[window.index(d)])
        parts.append(" + ".join(terms) or "0")
    return _subscript(parts)


def _gather(gen, eqn):
    x, idx = eqn.invars
    out = eqn.outvars[0]
    p = eqn.params
    dn, sizes, mode = p["dimension_numbers"], p["slice_sizes"], p["mode"]
    lines = []
    xs = _array_view(gen, x, lines)
    nb = idx.aval.ndim - 1
    window = _window_dims(x.aval.ndim, dn.collapsed_slice_dims, dn.operand_batching_dims)
    bvars = [gen.tmp("b") for _ in range(nb)]
    wvars = [gen.tmp("w") for _ in window]
    res = gen.tmp("g")
    out_shape = out.aval.shape or (1,)
    lines.append(f"{res} = np.empty({gen.shape_src(out_shape)}, {scalar.np_type(out.aval.dtype)})")
    depth = _loops(gen, lines, bvars, [gen.dim(n) for n in idx.aval.shape[:-1]], 0)
    fill = mode is GatherScatterMode.FILL_OR_DROP
    starts, ok = _read_starts(gen, lines, depth, x, idx, bvars, dn.start_index_map,
                              sizes, clip=not fill, wrap=gather_index_wrap_dtype(mode, x.aval.shape))
    batching = dict(zip(dn.operand_batching_dims, dn.start_indices_batching_dims))
    depth = _loops(gen, lines, wvars, [str(sizes[d]) for d in window], depth)
    b_it, w_it = iter(bvars), iter(wvars)
    o_sub = _subscript([next(w_it) if q in dn.offset_dims else next(b_it) for q in range(out.aval.ndim)])
    read = f"{xs}[{_operand_subscript(x.aval.ndim, starts, batching, bvars, window, wvars)}]"
    if ok is not None:
        value = p["fill_value"] if p["fill_value"] is not None else default_fill_value(x.aval.dtype)
        read = f"{read} if {ok} else {_fill_literal(value, x.aval.dtype)}"
    lines.append("    " * depth + f"{res}[{o_sub}] = {read}")
    lines.append(assign_reshaped(gen, out, res))
    return lines


def _scatter(gen, eqn):
    x, idx, upd = eqn.invars
    out = eqn.outvars[0]
    p = eqn.params
    dn, mode, prim = p["dimension_numbers"], p["mode"], eqn.primitive
    lines = []
    res = gen.tmp("sc")
    if x.aval.shape == ():
        lines.append(f"{res} = np.full((1,), {gen.name(x)})")
    elif hasattr(gen, "copy_array"):       # kernel code has no .copy()
        lines += gen.copy_array(res, x)
    else:
        lines.append(f"{res} = {gen.name(x)}.copy()")
    nb = idx.aval.ndim - 1
    window = _window_dims(x.aval.ndim, dn.inserted_window_dims, dn.operand_batching_dims)
    sizes = [1] * x.aval.ndim
    for d, u in zip(window, dn.update_window_dims):
        sizes[d] = upd.aval.shape[u]
    bvars = [gen.tmp("b") for _ in range(nb)]
    wvars = [gen.tmp("w") for _ in window]
    depth = _loops(gen, lines, bvars, [gen.dim(n) for n in idx.aval.shape[:-1]], 0)
    starts, ok = _read_starts(gen, lines, depth, x, idx, bvars, dn.scatter_dims_to_operand_dims,
                              sizes, clip=mode is GatherScatterMode.CLIP)
    if ok is not None:
        lines.append("    " * depth + f"if {ok}:")
        depth += 1
    depth = _loops(gen, lines, wvars, [gen.dim(upd.aval.shape[u]) for u in dn.update_window_dims], depth)
    batching = dict(zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims))
    target = f"{res}[{_operand_subscript(x.aval.ndim, starts, batching, bvars, window, wvars)}]"
    b_it, w_it = iter(bvars), iter(wvars)
    u_sub = [next(w_it) if q in dn.update_window_dims else next(b_it) for q in range(upd.aval.ndim)]
    u_read = f"{gen.name(upd)}[{_subscript(u_sub)}]" if u_sub else gen.name(upd)
    if prim is ix.scatter_p and p["update_jaxpr"] is not None:   # scatter_apply
        fn = gen.subfunction(p["update_jaxpr"])
        value = f"{fn}({target}, {u_read})[0]"
    else:
        value = _COMBINE[prim].format(a=target, u=u_read)   # no bool add/mul: lax rejects them
    lines.append("    " * depth + f"{target} = {value}")
    lines.append(assign_reshaped(gen, out, res))
    return lines


NODE_RULES[ix.gather_p] = _gather
for _prim in _COMBINE:
    NODE_RULES[_prim] = _scatter

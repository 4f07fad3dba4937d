"""Non-fusible equations written in the kernel language (``pyir``), for code that runs inside
one compiled kernel: loop bodies and branches of control flow, and gather/scatter kernels.

Same rule signature as ``nodes.py`` (``rule(gen, eqn) -> lines``), but the lines may only use
what ``pyir`` translates: explicit loops, element loads and stores, ``np.empty``/``np.full``
temporaries, ``.reshape`` views.  Rank-0 values are scalars.  ``VIEWS`` lists the rules whose
result shares its operand's buffer (the control-flow code must know, to copy carries safely).
"""
import numpy as np

from numjax.lax import indexing as ix
from numjax.lax import linalg as la
from numjax.lax import random_bits as rb
from numjax.lax import shape as shp

from . import scalar
from .unsupported import Unsupported

def _loops(gen, shape, lines, depth=0):
    """Nested ``for`` headers over ``shape``: (index names, depth of the body)."""
    idx = [gen.tmp("j") for _ in shape]
    for k, (i, n) in enumerate(zip(idx, shape)):
        lines.append("    " * (depth + k) + f"for {i} in range({n}):")
    return idx, depth + len(shape)


def _sub(parts):
    return ", ".join(str(p) for p in parts) if parts else "0"


def _alloc(gen, out, fill=None):
    shape = gen.shape_src(out.aval.shape)
    dt = scalar.np_type(out.aval.dtype)
    if fill is None:
        return f"{gen.name(out)} = np.empty({shape}, {dt})"
    return f"{gen.name(out)} = np.full({shape}, {fill}, {dt})"


def _elementwise_copy(gen, out, read):
    """``out[j] = read(j)`` over out's shape (``read`` maps index names to a source)."""
    if out.aval.shape == ():
        return [f"{gen.name(out)} = {read([])}"]
    lines = [_alloc(gen, out)]
    idx, depth = _loops(gen, out.aval.shape, lines)
    lines.append("    " * depth + f"{gen.name(out)}[{_sub(idx)}] = {read(idx)}")
    return lines


def _reshape(gen, eqn):
    x, out = eqn.invars[0], eqn.outvars[0]
    perm = eqn.params.get("dimensions") if eqn.primitive is shp.reshape_p else None   # squeeze: axes
    if perm is not None and tuple(perm) != tuple(range(x.aval.ndim)):
        # Transpose into a temporary first, then view it with the new shape.
        t = gen.tmp("tr")
        lines = [f"{t} = np.empty({gen.shape_src([x.aval.shape[p] for p in perm])}, "
                 f"{scalar.np_type(x.aval.dtype)})"]
        idx, depth = _loops(gen, [x.aval.shape[p] for p in perm], lines)
        src = [None] * len(perm)
        for d, p in enumerate(perm):
            src[p] = idx[d]
        lines.append("    " * depth + f"{t}[{_sub(idx)}] = {gen.name(x)}[{_sub(src)}]")
        return lines + [f"{gen.name(out)} = {t}.reshape({gen.shape_src(out.aval.shape)})"
                        if out.aval.shape != () else f"{gen.name(out)} = {t}.reshape(-1)[0]"]
    if x.aval.shape == ():
        return [f"{gen.name(out)} = np.full({gen.shape_src(out.aval.shape)}, {gen.name(x)}, "
                f"{scalar.np_type(out.aval.dtype)})"]
    if out.aval.shape == ():
        return [f"{gen.name(out)} = {gen.name(x)}.reshape(-1)[0]"]
    return [f"{gen.name(out)} = {gen.name(x)}.reshape({gen.shape_src(out.aval.shape)})"]


def _transpose(gen, eqn):
    x, out = eqn.invars[0], eqn.outvars[0]
    perm = eqn.params["permutation"]

    def read(idx):
        src = [None] * len(perm)
        for d, p in enumerate(perm):
            src[p] = idx[d]
        return f"{gen.name(x)}[{_sub(src)}]"
    return _elementwise_copy(gen, out, read)


def _slice(gen, eqn):
    x, out = eqn.invars[0], eqn.outvars[0]
    p = eqn.params
    strides = p["strides"] or (1,) * x.aval.ndim

    def read(idx):
        return f"{gen.name(x)}[{_sub(f'{s} + {i} * {st}' for s, i, st in zip(p['start_indices'], idx, strides))}]"
    return _elementwise_copy(gen, out, read)


def _rev(gen, eqn):
    x, out = eqn.invars[0], eqn.outvars[0]
    dims = eqn.params["dimensions"]

    def read(idx):
        parts = [f"{n - 1} - {i}" if d in dims else i for d, (i, n) in enumerate(zip(idx, x.aval.shape))]
        return f"{gen.name(x)}[{_sub(parts)}]"
    return _elementwise_copy(gen, out, read)


def _concatenate(gen, eqn):
    out, axis = eqn.outvars[0], eqn.params["dimension"]
    lines, offset = [_alloc(gen, out)], 0
    for x in eqn.invars:
        idx, depth = _loops(gen, x.aval.shape, lines)
        dst = [f"{offset} + {i}" if d == axis else i for d, i in enumerate(idx)]
        src = gen.name(x) if type(x).__name__ == "Literal" else f"{gen.name(x)}[{_sub(idx)}]"
        lines.append("    " * depth + f"{gen.name(out)}[{_sub(dst)}] = {src}")
        offset += x.aval.shape[axis]
    return lines


def _pad(gen, eqn):
    x, pv = eqn.invars
    out = eqn.outvars[0]
    cfg = eqn.params["padding_config"]
    if x.aval.shape == ():
        return [f"{gen.name(out)} = {gen.name(x)}"]
    lines = [_alloc(gen, out, gen.name(pv))]
    idx, depth = _loops(gen, x.aval.shape, lines)
    dst = [f"{lo} + {i} * {it + 1}" for (lo, _, it), i in zip(cfg, idx)]
    conds = [f"0 <= {t} < {n}" for t, (lo, hi, _), n in zip(dst, cfg, out.aval.shape) if lo < 0 or hi < 0]
    pad = "    " * depth
    if conds:
        lines.append(pad + f"if {' and '.join(conds)}:")
        pad += "    "
    lines.append(pad + f"{gen.name(out)}[{_sub(dst)}] = {gen.name(x)}[{_sub(idx)}]")
    return lines


def _clamped_starts(gen, x_shape, starts, sizes, lines):
    names = []
    for s, n, k in zip(starts, x_shape, sizes):
        t = gen.tmp("st")
        lines.append(f"{t} = min(max(np.int64({gen.name(s)}), 0), {n - k})")
        names.append(t)
    return names


def _dynamic_slice(gen, eqn):
    x, *starts = eqn.invars
    out = eqn.outvars[0]
    lines = []
    st = _clamped_starts(gen, x.aval.shape, starts, eqn.params["slice_sizes"], lines)
    if x.aval.shape == ():
        return lines + [f"{gen.name(out)} = {gen.name(x)}"]
    return lines + _elementwise_copy(
        gen, out, lambda idx: f"{gen.name(x)}[{_sub(f'{s} + {i}' for s, i in zip(st, idx))}]")


def _dynamic_update_slice(gen, eqn):
    x, upd, *starts = eqn.invars
    out = eqn.outvars[0]
    if x.aval.shape == ():
        return [f"{gen.name(out)} = {gen.name(upd)}"]
    lines = copy_array(gen, gen.name(out), x)
    st = _clamped_starts(gen, x.aval.shape, starts, upd.aval.shape, lines)
    idx, depth = _loops(gen, upd.aval.shape, lines)
    dst = _sub(f"{s} + {i}" for s, i in zip(st, idx))
    lines.append("    " * depth + f"{gen.name(out)}[{dst}] = {gen.name(upd)}[{_sub(idx)}]")
    return lines


def copy_array(gen, dst, v):
    """Lines allocating ``dst`` and copying array value ``v`` into it."""
    n = int(np.prod(v.aval.shape))
    lines = [f"{dst} = np.empty(({n},), {scalar.np_type(v.aval.dtype)})"]
    j = gen.tmp("j")
    lines += [f"for {j} in range({n}):",
              f"    {dst}[{j}] = {gen.name(v)}.reshape(-1)[{j}]",
              f"{dst} = {dst}.reshape({gen.shape_src(v.aval.shape)})"]
    return lines


# ---------------------------------------------------------------- dot_general

def _dot_general(gen, eqn):
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = eqn.invars
    out = eqn.outvars[0]
    odt = out.aval.dtype
    cast = scalar.np_type(odt)
    if lhs.aval.shape == () or rhs.aval.shape == ():
        # No contraction with a scalar: a scaled copy of the other operand.
        return _elementwise_copy(gen, out, lambda idx: _mul(
            odt, f"{cast}({gen.name(lhs)}{_at(lhs, idx)})", f"{cast}({gen.name(rhs)}{_at(rhs, idx)})"))
    lfree = [d for d in range(lhs.aval.ndim) if d not in lc and d not in lb]
    rfree = [d for d in range(rhs.aval.ndim) if d not in rc and d not in rb]
    bi, ii = [gen.tmp("b") for _ in lb], [gen.tmp("i") for _ in lfree]
    jj, kk = [gen.tmp("j") for _ in rfree], [gen.tmp("k") for _ in lc]
    outer = [(n, lhs.aval.shape[d]) for n, d in zip(bi + ii, list(lb) + lfree)] + \
            [(n, rhs.aval.shape[d]) for n, d in zip(jj, rfree)]
    contract = [(n, lhs.aval.shape[d]) for n, d in zip(kk, lc)]

    def product(last, both=False):
        """Source of one term (or of its two factors), the last contraction index being ``last``."""
        ks = kk[:-1] + [last] if kk else []
        lidx, ridx = [None] * lhs.aval.ndim, [None] * rhs.aval.ndim
        for names, ldims, rdims in ((bi, lb, rb), (ks, lc, rc)):
            for n, dl, dr in zip(names, ldims, rdims):
                lidx[dl], ridx[dr] = n, n
        for n, d in zip(ii, lfree):
            lidx[d] = n
        for n, d in zip(jj, rfree):
            ridx[d] = n
        a, b = f"{cast}({gen.name(lhs)}[{_sub(lidx)}])", f"{cast}({gen.name(rhs)}[{_sub(ridx)}])"
        return f"{a}, {b}" if both else _mul(odt, a, b)

    lines = [_alloc(gen, out)] if out.aval.shape != () else []
    for depth, (n, size) in enumerate(outer):
        lines.append("    " * depth + f"for {n} in range({size}):")
    depth = len(outer)
    acc = gen.tmp("acc")
    zero = "False" if odt == np.bool_ else f"{cast}(0)"
    lines.append("    " * depth + f"{acc} = {zero}")
    for k, (n, size) in enumerate(contract):
        lines.append("    " * (depth + k) + f"for {n} in range({size}):")
    last = kk[-1] if kk else None
    if odt.kind == "f":
        step = f"sh.dot_step({acc}, {product(last, both=True)})"
    else:
        step = _add(odt, acc, product(last))
    lines.append("    " * (depth + len(contract)) + f"{acc} = {step}")
    res = gen.name(out) + (f"[{_sub([n for n, _ in outer])}]" if out.aval.shape != () else "")
    lines.append("    " * depth + f"{res} = {acc}")
    return lines


def _at(v, idx):
    return "" if v.aval.shape == () else f"[{_sub(idx)}]"


def _mul(dt, a, b):
    return f"({a} and {b})" if dt == np.bool_ else f"{scalar.np_type(dt)}({a} * {b})"


def _add(dt, a, b):
    return f"({a} or {b})" if dt == np.bool_ else f"{scalar.np_type(dt)}({a} + {b})"


# ---------------------------------------------------------------- random bits

def _broadcast_read(gen, v, idx, out_shape):
    """Source of ``v`` read at out index ``idx`` (numpy broadcasting of trailing dims)."""
    if type(v).__name__ == "Literal" or v.aval.shape == ():
        return gen.name(v)
    lead = len(out_shape) - v.aval.ndim
    parts = ["0" if n == 1 and out_shape[lead + d] != 1 else idx[lead + d] for d, n in enumerate(v.aval.shape)]
    return f"{gen.name(v)}[{_sub(parts)}]"


def _threefry2x32(gen, eqn):
    out_shape = eqn.outvars[0].aval.shape
    o0, o1 = (gen.name(v) for v in eqn.outvars)
    u32 = "np.uint32"
    if out_shape == ():
        args = ", ".join(f"{u32}({gen.name(v)})" for v in eqn.invars)
        return [f"{o0}, {o1} = vm.threefry2x32_pair({args})"]
    lines = [_alloc(gen, v) for v in eqn.outvars]
    idx, depth = _loops(gen, out_shape, lines)
    args = ", ".join(f"{u32}({_broadcast_read(gen, v, idx, out_shape)})" for v in eqn.invars)
    h0, h1 = gen.tmp("h"), gen.tmp("h")
    pad = "    " * depth
    return lines + [pad + f"{h0}, {h1} = vm.threefry2x32_pair({args})",
                    pad + f"{o0}[{_sub(idx)}] = {h0}", pad + f"{o1}[{_sub(idx)}] = {h1}"]


def _iota_2x32_shape(gen, eqn):
    hi, lo = eqn.outvars
    shape = hi.aval.shape
    if shape == ():
        return [f"{gen.name(hi)} = np.uint32(0)", f"{gen.name(lo)} = np.uint32(0)"]
    lines = [_alloc(gen, hi), _alloc(gen, lo)]
    idx, depth = _loops(gen, shape, lines)
    strides = [int(np.prod(shape[d + 1:])) for d in range(len(shape))]
    n = gen.tmp("n")
    pad = "    " * depth
    return lines + [pad + f"{n} = np.int64({' + '.join(f'{i} * {s}' for i, s in zip(idx, strides))})",
                    pad + f"{gen.name(hi)}[{_sub(idx)}] = np.uint32(({n} >> 32) & 0xFFFFFFFF)",
                    pad + f"{gen.name(lo)}[{_sub(idx)}] = np.uint32({n} & 0xFFFFFFFF)"]


# ---------------------------------------------------------------- table

def _indexing_rules():
    """Gather and the scatters: nodes_indexing's loops are kernel-language code already."""
    from . import nodes_indexing  # noqa: F401  (registers its rules in NODE_RULES)
    from .nodes import NODE_RULES
    return {p: NODE_RULES[p] for p in INDEXING}


# Equations the driver runs as one kernel each (gathers and scatters).
INDEXING = frozenset([ix.gather_p, ix.scatter_p, ix.scatter_add_p, ix.scatter_sub_p, ix.scatter_mul_p,
                      ix.scatter_min_p, ix.scatter_max_p])

KNODE_RULES = {
    shp.reshape_p: _reshape, shp.squeeze_p: _reshape, shp.transpose_p: _transpose,
    ix.slice_p: _slice, shp.rev_p: _rev, shp.concatenate_p: _concatenate, shp.pad_p: _pad,
    ix.dynamic_slice_p: _dynamic_slice, ix.dynamic_update_slice_p: _dynamic_update_slice,
    la.dot_general_p: _dot_general, rb.threefry2x32_p: _threefry2x32,
    rb.iota_2x32_shape_p: _iota_2x32_shape, **_indexing_rules(),
}

# Rules whose result is a view of their first operand's buffer.
VIEWS = frozenset([shp.reshape_p, shp.squeeze_p])

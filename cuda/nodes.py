"""CUDA kernel source for the plan's non-fusible nodes that phase 1 covers: data movement
(transpose, slice, rev, concatenate) as grid-stride copies with an index map, and
``dot_general`` as one thread per output element looping over the contraction (correct for
every dimension-number layout; a tiled shared-memory kernel and cuBLAS come later).

Each rule returns ``(name, source, number of output points)``; the kernel takes the operand
arrays then the output array.  Sizes are constants in the source, as in ``kernels.py``.
"""
import hashlib
import math

import numpy as np

from numjax.lax import indexing as lax_indexing
from numjax.lax import linalg as lax_linalg
from numjax.lax import shape as lax_shape
from numjax.lowering import scalar

from .kernels import CudaUnsupported, unravel


def _kernel(prefix, n_inputs, out_shape, body_lines):
    """A grid-stride kernel over the output's points ``i0, i1, ...`` storing ``val``."""
    rank = len(out_shape)
    n = math.prod(out_shape)
    lines = ["    start = cuda.grid(1)", "    stride = cuda.gridsize(1)",
             f"    for i in range(start, {n}, stride):"]
    unravel("i", out_shape, list(range(rank)), lines, "        ")
    lines += ["        " + line for line in body_lines]
    at = ", ".join(f"i{d}" for d in range(rank)) or "0"
    lines.append(f"        out[{at}] = val")
    params = [f"x{k}" for k in range(n_inputs)] + ["out"]
    text = "@cuda.jit\ndef KERNEL(" + ", ".join(params) + "):\n" + "\n".join(lines) + "\n"
    name = f"{prefix}_" + hashlib.sha256(text.encode()).hexdigest()[:16]
    return name, text.replace("def KERNEL(", f"def {name}("), n


def _at(parts):
    return ", ".join(parts) if parts else "0"


def _transpose(eqn):
    perm = eqn.params["permutation"]
    src = [None] * len(perm)
    for k, p in enumerate(perm):
        src[p] = f"i{k}"
    return _kernel("transpose", 1, eqn.outvars[0].aval.shape, [f"val = x0[{_at(src)}]"])


def _slice(eqn):
    start = eqn.params["start_indices"]
    strides = eqn.params.get("strides") or (1,) * len(start)
    src = [f"{s} + i{d} * {st}" for d, (s, st) in enumerate(zip(start, strides))]
    return _kernel("slice", 1, eqn.outvars[0].aval.shape, [f"val = x0[{_at(src)}]"])


def _rev(eqn):
    shape = eqn.invars[0].aval.shape
    dims = set(eqn.params["dimensions"])
    src = [f"{shape[d] - 1} - i{d}" if d in dims else f"i{d}" for d in range(len(shape))]
    return _kernel("rev", 1, eqn.outvars[0].aval.shape, [f"val = x0[{_at(src)}]"])


def _concatenate(eqn):
    dim = eqn.params["dimension"]
    rank = len(eqn.outvars[0].aval.shape)
    body, offset = [], 0
    for k, v in enumerate(eqn.invars):
        size = v.aval.shape[dim]
        src = [f"i{d} - {offset}" if d == dim else f"i{d}" for d in range(rank)]
        keyword = "if" if k == 0 else "elif" if k < len(eqn.invars) - 1 else "else"
        cond = f" i{dim} < {offset + size}" if keyword != "else" else ""
        body += [f"{keyword}{cond}:", f"    val = x{k}[{_at(src)}]"]
        offset += size
    return _kernel("concat", len(eqn.invars), eqn.outvars[0].aval.shape, body)


def _dot_general(eqn):
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = (v.aval for v in eqn.invars)
    out = eqn.outvars[0].aval
    if np.dtype(out.dtype) == np.bool_:
        raise CudaUnsupported("primitive 'dot_general' on bool has no CUDA lowering yet")
    acc_t = scalar.np_type(np.result_type(lhs.dtype, rhs.dtype))
    lfree = [d for d in range(len(lhs.shape)) if d not in lc and d not in lb]
    rfree = [d for d in range(len(rhs.shape)) if d not in rc and d not in rb]
    nb = len(lb)

    def index(ndim, batch, contract, free, free_offset):
        parts = []
        for d in range(ndim):
            if d in batch:
                parts.append(f"i{list(batch).index(d)}")
            elif d in contract:
                parts.append(f"c{list(contract).index(d)}")
            else:
                parts.append(f"i{free_offset + free.index(d)}")
        return _at(parts)
    csizes = [lhs.shape[d] for d in lc]
    body = [f"acc = {scalar.literal(0, np.result_type(lhs.dtype, rhs.dtype))}",
            f"for c in range({math.prod(csizes)}):"]
    contract_lines = []
    unravel("c", csizes, list(range(len(csizes))), contract_lines, "    ")
    body += _rename_contract(contract_lines)
    body += [f"    a = {acc_t}(x0[{index(len(lhs.shape), lb, lc, lfree, nb)}])",
             f"    b = {acc_t}(x1[{index(len(rhs.shape), rb, rc, rfree, nb + len(lfree))}])",
             f"    acc = {acc_t}(acc + a * b)",
             f"val = {scalar.np_type(out.dtype)}(acc)"]
    return _kernel("dot", 2, out.shape, body)


def _rename_contract(lines):
    """``unravel`` writes ``i{d}``/``r{d}``; the contraction's indices are ``c{d}``/``s{d}``."""
    out = []
    for line in lines:
        stripped = line.lstrip()
        indent = line[:len(line) - len(stripped)]
        target, expr = stripped.split(" = ", 1)
        target = "c" + target[1:] if target[0] == "i" else "s" + target[1:]
        expr = expr.replace("r", "s") if expr != "c" else expr
        out.append(f"{indent}{target} = {expr}")
    return out


NODE_KERNELS = {
    lax_shape.transpose_p: _transpose,
    lax_indexing.slice_p: _slice,
    lax_shape.rev_p: _rev,
    lax_shape.concatenate_p: _concatenate,
    lax_linalg.dot_general_p: _dot_general,
}

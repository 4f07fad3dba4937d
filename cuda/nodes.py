"""CUDA kernel source for the plan's single-kernel data-movement nodes (transpose, slice,
rev, concatenate): grid-stride copies with an index map.  dot_general is a step rule of
``blas.py`` (a tiled shared-memory kernel, or cuBLAS on a GPU).

Each rule returns ``(name, source, number of output points)``; the kernel takes the operand
arrays then the output array.  Sizes are constants in the source, as in ``kernels.py``.
"""
import hashlib
import math

from numjax.lax import indexing as lax_indexing
from numjax.lax import shape as lax_shape

from .kernels import unravel


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


NODE_KERNELS = {
    lax_shape.transpose_p: _transpose,
    lax_indexing.slice_p: _slice,
    lax_shape.rev_p: _rev,
    lax_shape.concatenate_p: _concatenate,
}

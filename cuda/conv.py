"""CUDA step rule for ``conv_general_dilated``: a direct kernel, one thread per output element.

For an output element (batch n, out-feature o, spatial position y) the thread sums, over the
in-features c of o's feature group and the window offsets k,

    lhs[n', g * I + c, x] * rhs[o, c, k]      where x = (y * stride + k * rhs_dilation - pad_lo)
                                                          / lhs_dilation

skipping the offsets whose dilated-and-padded position falls in padding or between dilated
elements (``x`` not an integer in range).  Feature groups pick the in-features' block
``g = o // (O / G)``; batch groups pick the lhs batch ``n' = b * (N / B) + n`` with
``b = o // (O / B)``.  Every dimension-number layout is read in place: the operands' axes are
named through ``dimension_numbers`` in the load indices.  Accumulation is in the result dtype
(``preferred_element_type``), the operands converted first, as the CPU backend does; integers
accumulate in 64 bits and wrap to the result type at the end (the same bits), bool counts and
compares with 0.  The jvp and transposes of a convolution are convolutions with other
parameters, so gradients run through this same rule.
"""
import hashlib
import math

import numpy as np

from numjax.lax import convolution as lax_conv
from numjax.lowering import scalar

from . import compiler
from .kernels import CudaUnsupported, unravel


def _accumulator(out_dtype):
    """(accumulator dtype, source converting the accumulator ``acc`` to the result)."""
    out = np.dtype(out_dtype)
    if out == np.bool_:
        return np.dtype(np.int64), "acc != 0"
    if out.kind in "iu":
        return np.dtype(np.int64 if out.kind == "i" else np.uint64), f"{scalar.np_type(out)}(acc)"
    return out, f"{scalar.np_type(out)}(acc)"


def _window_loops(p, lhs_shape, rhs_shape, dn, indent):
    """Nested loops over the window offsets ``k{s}``, each setting the lhs position ``j{s}``
    and skipping offsets outside lhs; returns (lines, the innermost indent)."""
    lhs_spec, rhs_spec, out_spec = dn
    lines = []
    for s in range(len(lhs_spec) - 2):
        size, window = lhs_shape[lhs_spec[2 + s]], rhs_shape[rhs_spec[2 + s]]
        stride, rd, ld = p["window_strides"][s], p["rhs_dilation"][s], p["lhs_dilation"][s]
        lo = p["padding"][s][0]
        y = f"i{out_spec[2 + s]}"
        lines += [f"{indent}for k{s} in range({window}):",
                  f"{indent}    q{s} = {y} * {stride} + k{s} * {rd} - {lo}"]
        conds = [f"q{s} >= 0", f"q{s} < {(size - 1) * ld + 1}"]
        if ld != 1:
            conds.append(f"q{s} % {ld} == 0")
        lines += [f"{indent}    if {' and '.join(conds)}:",
                  f"{indent}        j{s} = q{s} // {ld}"]
        indent += "        "
    return lines, indent


def _conv_source(eqn):
    p = eqn.params
    lhs, rhs = (v.aval for v in eqn.invars)
    out = eqn.outvars[0].aval
    lhs_spec, rhs_spec, out_spec = dn = tuple(tuple(int(a) for a in spec) for spec in p["dimension_numbers"])
    groups, batch_groups = p["feature_group_count"], p["batch_group_count"]
    n_out = out.shape[out_spec[0]]
    o_size, i_size = rhs.shape[rhs_spec[0]], rhs.shape[rhs_spec[1]]
    acc_dt, store = _accumulator(out.dtype)
    acc_t, load = scalar.np_type(acc_dt), scalar.np_type(out.dtype)
    rank = len(out.shape)
    lines = ["    start = cuda.grid(1)", "    stride = cuda.gridsize(1)",
             f"    for p in range(start, {math.prod(out.shape)}, stride):"]
    unravel("p", out.shape, list(range(rank)), lines, "        ")
    o = f"i{out_spec[1]}"
    lines += [f"        cbase = ({o} // {max(1, o_size // groups)}) * {i_size}",
              f"        nb = ({o} // {max(1, o_size // batch_groups)}) * {n_out} + i{out_spec[0]}",
              f"        acc = {scalar.literal(0, acc_dt)}",
              f"        for c in range({i_size}):"]
    loops, inner = _window_loops(p, lhs.shape, rhs.shape, dn, "            ")
    lines += loops
    lhs_at, rhs_at = [None] * len(lhs.shape), [None] * len(rhs.shape)
    lhs_at[lhs_spec[0]], lhs_at[lhs_spec[1]] = "nb", "cbase + c"
    rhs_at[rhs_spec[0]], rhs_at[rhs_spec[1]] = o, "c"
    for s in range(len(lhs_spec) - 2):
        lhs_at[lhs_spec[2 + s]], rhs_at[rhs_spec[2 + s]] = f"j{s}", f"k{s}"
    lines += [f"{inner}a = {acc_t}({load}(lhs[{', '.join(lhs_at)}]))",
              f"{inner}b = {acc_t}({load}(rhs[{', '.join(rhs_at)}]))",
              f"{inner}acc = {acc_t}(acc + a * b)",
              f"        out[{', '.join(f'i{d}' for d in range(rank))}] = {store}"]
    text = "@cuda.jit\ndef KERNEL(lhs, rhs, out):\n" + "\n".join(lines) + "\n"
    name = "conv_" + hashlib.sha256(text.encode()).hexdigest()[:16]
    return name, text.replace("def KERNEL(", f"def {name}(")


class ConvStep:
    """One conv_general_dilated: the direct kernel over the output's elements."""

    def __init__(self, eqn):
        for v in list(eqn.invars) + list(eqn.outvars):
            if v.aval.ndim < 2 or np.dtype(v.aval.dtype).kind not in "biuf":
                raise CudaUnsupported(f"primitive 'conv_general_dilated' on {v.aval.dtype} values of "
                                      f"shape {v.aval.shape} has no CUDA lowering yet")
        self.eqn = eqn
        self.n = math.prod(eqn.outvars[0].aval.shape)
        name, source = _conv_source(eqn)
        self.sources = [source]
        self.kernel = compiler.compile_kernel(name, source)

    def run(self, env, buffers):
        from .backend import env_read
        out = self.eqn.outvars[0]
        result = buffers.get((self, "out"), out.aval.shape, out.aval.dtype)
        env[out] = result
        if self.n:
            lhs, rhs = (env_read(env, v) for v in self.eqn.invars)
            compiler.launch(self.kernel, self.n, buffers.stream, lhs, rhs, result)


STEP_RULES = {lax_conv.conv_general_dilated_p: ConvStep}

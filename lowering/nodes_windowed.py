"""Driver rules (LLVM backend) for convolutions and window reductions.

A convolution is an "im2col" matmul: the driver forms the patch matrix of the padded, dilated
input as a strided numpy view, copies it once (rows- or columns-major, whichever reads the input
in longer contiguous runs) and contracts it with the kernel in one BLAS matmul per feature/batch
group (``conv_numpy``, the same code as eager evaluation).  A window reduction combines one strided view per window tap
(``reduce_window_numpy``).  Rule signature as in ``driver_nodes``: ``rule(gen, eqn) -> lines``.
"""
import numpy as np

from numjax.lax import convolution as conv
from numjax.lax import windowed_reductions as wr


def _np_type(dt):
    return "np.bool_" if np.dtype(dt) == np.bool_ else f"np.{np.dtype(dt).name}"


def _conv_general_dilated(gen, eqn):
    lhs, rhs = eqn.invars
    out = eqn.outvars[0]
    p = eqn.params
    dn = tuple(tuple(int(a) for a in spec) for spec in p["dimension_numbers"])
    args = ", ".join(str(tuple(v)) for v in (p["window_strides"], p["padding"], p["lhs_dilation"],
                                              p["rhs_dilation"], dn))
    return [f"{gen.name(out)} = kn.conv_numpy({gen.name(lhs)}, {gen.name(rhs)}, {args}, "
            f"{p['feature_group_count']}, {p['batch_group_count']}, {_np_type(out.aval.dtype)})"]


def _reduce_window(gen, eqn):
    x, out = eqn.invars[0], eqn.outvars[0]
    if x.aval.shape == ():
        return [f"{gen.name(out)} = {gen.name(x)}"]
    p = eqn.params
    args = ", ".join(str(tuple(p[k])) for k in ("window_dimensions", "window_strides", "padding",
                                                 "base_dilation", "window_dilation"))
    kind = wr.WINDOW_REDUCTIONS[eqn.primitive]
    return [f"{gen.name(out)} = kn.reduce_window_numpy({gen.name(x)}, {kind!r}, {args})"]


DRIVER_RULES = {conv.conv_general_dilated_p: _conv_general_dilated,
                **{prim: _reduce_window for prim in wr.WINDOW_REDUCTIONS}}

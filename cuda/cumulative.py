"""CUDA step rules for cumulative ops (cumsum, cumprod, cummax, cummin) and window reductions
(reduce_window_sum / max / min), with the CPU backend's semantics and order.

* A cumulative op runs one thread per line along the scanned axis (the operand viewed as
  ``(outer, n, inner)``), scanning sequentially in the CPU backend's order
  (``lowering/driver_nodes.py``): the running value starts at the first element (the last with
  ``reverse``) and combines each next one, so float results equal the CPU's bit for bit.
* A window reduction runs one thread per output element, visiting the window's taps in
  row-major order as the CPU does (``reduce_window_numpy``): the first tap's value starts the
  running value, taps in the padding (or between base-dilated elements) read the monoid's
  identity.  Max/min are XLA's (NaN propagates, +0 beats -0 in max and -0 in min).
"""
import math

import numpy as np

from numjax.lax import reductions as rd
from numjax.lax import windowed_reductions as wr
from numjax.lax.windowed_reductions import _identity as window_identity
from numjax.lowering import scalar

from .backend import env_read
from .indexing import Launch, device_shape, subscript


def _combine(kind, dtype):
    """The running value ``a`` combined with the next element ``v``, in ``dtype``."""
    dtype = np.dtype(dtype)
    t = scalar.np_type(dtype)
    if dtype == np.bool_:
        return {"sum": "a or v", "prod": "a and v", "max": "a or v", "min": "a and v"}[kind]
    if kind == "sum":
        return f"{t}(a + v)"
    if kind == "prod":
        return f"{t}(a * v)"
    if dtype.kind == "f":
        return f"sh_f{kind}(a, v)"
    return f"{kind}(a, v)"


# ---------------------------------------------------------------- cumulative ops

_CUMULATIVE = {rd.cumsum_p: "sum", rd.cumprod_p: "prod", rd.cummax_p: "max", rd.cummin_p: "min"}


class CumulativeStep:
    def __init__(self, eqn):
        x = eqn.invars[0]
        self.eqn, self.sources = eqn, []
        shape, axis, reverse = x.aval.shape, eqn.params["axis"], eqn.params["reverse"]
        self.launch = None
        if shape == () or 0 in shape:
            return          # a scalar is its own scan; an empty one has nothing to scan
        self.view = (math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:]))
        n = self.view[1]
        first = n - 1 if reverse else 0
        # XLA's cumulative sum starts from +0 (-0.0 becomes +0.0) along an axis longer than one
        start = f" + {scalar.literal(0.0, x.aval.dtype)}" if eqn.primitive is rd.cumsum_p and n > 1 \
            and np.dtype(x.aval.dtype).kind == "f" else ""
        body = [f"a = x[o0, {first}, o1]{start}", f"out[o0, {first}, o1] = a",
                f"for t in range(1, {n}):",
                f"    j = {n - 1} - t" if reverse else "    j = t",
                "    v = x[o0, j, o1]",
                f"    a = {_combine(_CUMULATIVE[eqn.primitive], x.aval.dtype)}",
                "    out[o0, j, o1] = a"]
        self.launch = Launch("cumulative", ["x", "out"], (self.view[0], self.view[2]), body,
                             self.sources)

    def run(self, env, buffers):
        x = env_read(env, self.eqn.invars[0])
        out = self.eqn.outvars[0]
        if self.launch is None:
            env[out] = x
            return
        result = buffers.get((self, "out"), self.view, out.aval.dtype)
        self.launch(buffers, x.reshape(self.view), result)
        env[out] = result.reshape(device_shape(out.aval.shape))


# ---------------------------------------------------------------- window reductions

class ReduceWindowStep:
    def __init__(self, eqn):
        x = eqn.invars[0]
        out = eqn.outvars[0]
        p = eqn.params
        kind = wr.WINDOW_REDUCTIONS[eqn.primitive]
        dtype = np.dtype(x.aval.dtype)
        self.eqn, self.sources = eqn, []
        rank = x.aval.ndim
        identity = scalar.literal(window_identity(kind, dtype), dtype)
        body = [f"a = {identity}", "first = True"]
        indent = ""
        for d in range(rank):
            body.append(f"{indent}for w{d} in range({p['window_dimensions'][d]}):")
            indent += "    "
        conds, src = [], []
        for d, n in enumerate(x.aval.shape):
            lo = p["padding"][d][0]
            base = p["base_dilation"][d]
            body.append(f"{indent}t{d} = o{d} * {p['window_strides'][d]} + w{d} * "
                        f"{p['window_dilation'][d]} - ({lo})")
            conds.append(f"t{d} >= 0 and t{d} < {(n - 1) * base + 1 if n else 0}")
            if base > 1:
                conds.append(f"t{d} % {base} == 0")
            src.append(f"t{d} // {base}" if base > 1 else f"t{d}")
        body += [f"{indent}if {' and '.join(conds) or 'True'}:",
                 f"{indent}    v = x[{subscript(src)}]",
                 f"{indent}else:", f"{indent}    v = {identity}",
                 f"{indent}if first:", f"{indent}    a = v", f"{indent}    first = False",
                 f"{indent}else:", f"{indent}    a = {_combine(kind, dtype)}",
                 f"out[{subscript([f'o{d}' for d in range(rank)])}] = a"]
        self.launch = Launch("reduce_window", ["x", "out"], out.aval.shape, body, self.sources)

    def run(self, env, buffers):
        x = env_read(env, self.eqn.invars[0])
        out = self.eqn.outvars[0]
        result = buffers.get((self, "out"), device_shape(out.aval.shape), out.aval.dtype)
        self.launch(buffers, x, result)
        env[out] = result


STEP_RULES = {
    **{prim: CumulativeStep for prim in _CUMULATIVE},
    **{prim: ReduceWindowStep for prim in wr.WINDOW_REDUCTIONS},
}

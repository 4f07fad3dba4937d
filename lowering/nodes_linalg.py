"""CPU lowering rules for the linalg primitives (see nodes.py for the rule signature).

Each rule views its operands as (batch, m, n) stacks and calls a kernel of
``linalg_kernels`` (``lk`` in generated code); outputs are reshaped back.
"""
import numpy as np

from numjax.lax import linalg as la

from . import scalar
from .driver_lib import CHOLESKY_MAX_N
from .nodes import NODE_RULES


def _stack(gen, v):
    shape = v.aval.shape
    return (f"np.ascontiguousarray({gen.name(v)}).reshape((-1, {gen.dim(shape[-2])}, "
            f"{gen.dim(shape[-1])}))")


def _unstack(gen, out, src):
    return f"{gen.name(out)} = np.ascontiguousarray({src}).reshape({gen.shape_src(out.aval.shape)})"


def _cholesky(gen, eqn):
    x = eqn.invars[0]
    small = x.aval.dtype in (np.float32, np.float64) and x.aval.shape[-1] <= CHOLESKY_MAX_N
    kernel = "cholesky_small" if small else "cholesky"
    return [_unstack(gen, eqn.outvars[0], f"lk.{kernel}({_stack(gen, x)})")]


def _multi(gen, eqn, call):
    tmps = [gen.tmp("la") for _ in eqn.outvars]
    return [f"{', '.join(tmps)}, = {call}"] + [_unstack(gen, o, t) for o, t in zip(eqn.outvars, tmps)]


def _lu(gen, eqn):
    return _multi(gen, eqn, f"lk.lu({_stack(gen, eqn.invars[0])})")


def _qr(gen, eqn):
    return _multi(gen, eqn, f"lk.qr({_stack(gen, eqn.invars[0])}, {bool(eqn.params['full_matrices'])})")


def _svd(gen, eqn):
    x = eqn.invars[0]
    s_dt = scalar.np_type(eqn.outvars[0].aval.dtype)
    call = f"lk.svd({_stack(gen, x)}, {bool(eqn.params['full_matrices'])}, {s_dt})"
    if eqn.params["compute_uv"]:
        return _multi(gen, eqn, call)
    t = gen.tmp("la")
    return [f"{t} = {call}[0]", _unstack(gen, eqn.outvars[0], t)]


def _eigh(gen, eqn):
    w_dt = scalar.np_type(eqn.outvars[1].aval.dtype)
    return _multi(gen, eqn, f"lk.eigh({_stack(gen, eqn.invars[0])}, {bool(eqn.params['lower'])}, {w_dt})")


def _triangular_solve(gen, eqn):
    a, b = eqn.invars
    p = eqn.params
    flags = ", ".join(str(bool(p[k])) for k in ("left_side", "lower", "transpose_a", "conjugate_a",
                                                 "unit_diagonal"))
    return [_unstack(gen, eqn.outvars[0], f"lk.triangular_solve({_stack(gen, a)}, {_stack(gen, b)}, {flags})")]


NODE_RULES.update({
    la.cholesky_p: _cholesky, la.lu_p: _lu, la.qr_p: _qr, la.svd_p: _svd, la.eigh_p: _eigh,
    la.triangular_solve_p: _triangular_solve,
})

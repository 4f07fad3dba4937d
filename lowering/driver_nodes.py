"""Driver rules of the LLVM backend: node primitives the program's Python driver runs through
a library (numpy, scipy's LAPACK) or through kernels of its own written in the kernel language
(compiled by ``pyir`` with the program's region kernels, so no Numba is involved).

``DRIVER_RULES[primitive](gen, eqn)`` returns driver source lines, with the rule signature of
``nodes.py`` (``gen.name(v)``, ``gen.tmp()``, ``gen.dim(size)``, ``gen.shape_src(shape)``).
Every rule computes what the Numba backend's rule computes (``nodes.py``, ``nodes_*.py``),
bit for bit, except batched products of small matrices (their sums in another order: equal
within rounding, as XLA's dots are to BLAS's); ``kn`` is ``driver_lib``.
"""
import hashlib

import numpy as np

from numjax.lax import callback as host
from numjax.lax import linalg as la
from numjax.lax import random_bits as rb
from numjax.lax import reductions as rd
from numjax.lax import sorting
from numjax.lax.fft import fft_p

from . import host_calls, nodes_random, nodes_windowed
from .driver_lib import CHOLESKY_MAX_N, CHOLESKY_SOURCE


def _np_type(dt):
    return "np.bool_" if np.dtype(dt) == np.bool_ else f"np.{np.dtype(dt).name}"


def _prod(gen, sizes):
    return " * ".join(gen.dim(s) for s in sizes) or "1"


def _kernel(gen, text, params, outputs):
    """Registers kernel ``text`` (``def KERNEL(...)``, outer loop ``numba.prange``) under a
    content-addressed name; returns the name."""
    name = "k_" + hashlib.sha256(text.encode()).hexdigest()[:16]
    return gen.add_kernel(name, text.replace("def KERNEL(", f"def {name}("), params, outputs, True)


def _run(gen, text, dims, ins, outs, size):
    """Lines running kernel ``text`` over its first dim: ``dims`` are (parameter, source)
    pairs, ``ins`` (source, dtype, shape) arrays and ``outs`` (dtype, shape) buffers, shapes
    as dim parameter names (the entry point checks the arrays' ranks and sizes).  Returns the
    lines and the output buffers' names."""
    local = {p: gen.tmp("d") for p, _ in dims}
    shape = lambda names: "(" + "".join(f"{local.get(n, n)}, " for n in names) + ")"    # noqa: E731
    params = [("dim",)] * len(dims) + [("array", dt, sh) for _, dt, sh in ins]
    name = _kernel(gen, text, params, list(outs))
    bufs = [gen.tmp("kb") for _ in outs]
    lines = [f"{local[p]} = {src}" for p, src in dims]
    lines += [f"{b} = np.empty({shape(sh)}, {_np_type(dt)})" for b, (dt, sh) in zip(bufs, outs)]
    args = [local[p] for p, _ in dims] + [f"{src}.reshape({shape(sh)})" for src, _, sh in ins] + bufs
    lines.append(f"run_chunked({name}, {args[0]}, {size}, ({', '.join(args)},))")
    return lines, bufs


def _assign(gen, outvars, bufs):
    return [f"{gen.name(v)} = {b}.reshape({gen.shape_src(v.aval.shape)})" for v, b in zip(outvars, bufs)]


# ---------------------------------------------------------------- sort, top_k

def _sort(gen, eqn):
    """Stable, in JAX's total order (see driver_lib.sort, sort_permutation)."""
    axis, num_keys = eqn.params["dimension"], eqn.params["num_keys"]
    ins, outs = [gen.name(v) for v in eqn.invars], [gen.name(v) for v in eqn.outvars]
    if len(ins) == 1:
        return [f"{outs[0]} = kn.sort({ins[0]}, {axis})"]
    perm = gen.tmp("perm")
    lines = [f"{perm} = kn.sort_permutation(({', '.join(ins[:num_keys])},), {axis})"]
    return lines + [f"{o} = kn.take_along({x}, {perm}, {axis})" for o, x in zip(outs, ins)]


def _top_k(gen, eqn):
    values, indices = (gen.name(v) for v in eqn.outvars)
    return [f"{values}, {indices} = kn.top_k({gen.name(eqn.invars[0])}, {eqn.params['k']}, "
            f"{eqn.params['axis']})"]


# ---------------------------------------------------------------- cumulative reductions
# One kernel per (kind, direction, dtype) over the operand viewed as (outer, n, inner), the
# scanned axis in the middle: no transposes, and the inner loop is contiguous (scanning the
# last axis, the running value is carried in a register).  The combine steps are those of
# kernels.cumulative_last (NaN propagates through max/min, +0 beats -0 in max and -0 beats +0
# in min, as XLA's max and min: the scalar helpers sh.fmax/sh.fmin).

_COMBINE = {rd.cumsum_p: "a + v", rd.cumprod_p: "a * v",
            rd.cummax_p: "sh.fmax(a, v)", rd.cummin_p: "sh.fmin(a, v)"}

_CUM_SOURCE = """\
def KERNEL(d0, d1, d2, x):
    o = np.empty((d0, d1, d2), {dtype})
    for i0 in numba.prange(d0):
        if d1 > 0:
            for i2 in range(d2):
                o[i0, {first}, i2] = x[i0, {first}, i2]{start}
        for t in range(1, d1):
            j = {j}
            p = {p}
            for i2 in range(d2):
                a = o[i0, p, i2]
                v = x[i0, j, i2]
                o[i0, j, i2] = {combine}
    return (o, )
"""
_CUM_LAST_SOURCE = """\
def KERNEL(d0, d1, x):
    o = np.empty((d0, d1), {dtype})
    for i0 in numba.prange(d0):
        if d1 > 0:
            a = x[i0, {first}]{start}
            o[i0, {first}] = a
            for t in range(1, d1):
                j = {j}
                v = x[i0, j]
                a = {dtype}({combine})
                o[i0, j] = a
    return (o, )
"""


def _cumulative(gen, eqn):
    x, out = eqn.invars[0], eqn.outvars[0]
    shape, axis = x.aval.shape, eqn.params["axis"]
    if shape == ():
        return [f"{gen.name(out)} = {gen.name(x)}"]
    rev = eqn.params["reverse"]
    dt = x.aval.dtype.name
    last = axis == len(shape) - 1
    # XLA's cumulative sum starts from +0 along an axis longer than one: -0.0 + 0.0 is +0.0,
    # and + 0 changes no other value (a length-1 axis is copied, -0.0 included).
    start = f" + ({_np_type(dt)}(0.0) if d1 > 1 else -{_np_type(dt)}(0.0))" \
        if eqn.primitive is rd.cumsum_p and np.dtype(dt).kind == "f" else ""
    text = (_CUM_LAST_SOURCE if last else _CUM_SOURCE).format(
        dtype=_np_type(dt), combine=_COMBINE[eqn.primitive], first="d1 - 1" if rev else "0",
        j="d1 - 1 - t" if rev else "t", p="j + 1" if rev else "j - 1", start=start)
    dims = [("d0", _prod(gen, shape[:axis])), ("d1", gen.dim(shape[axis])), ("d2", _prod(gen, shape[axis + 1:]))]
    view = ("d0", "d1") if last else ("d0", "d1", "d2")
    lines, bufs = _run(gen, text, dims[:len(view)], [(gen.name(x), dt, view)], [(dt, view)], _prod(gen, shape))
    return lines + _assign(gen, eqn.outvars, bufs)


# ---------------------------------------------------------------- dot_general

def _dot_general(gen, eqn):
    """Small batched products in a kernel of their own (below); the rest is the Numba
    backend's rule (``nodes.py``: BLAS through numpy, the same code here), with numpy's
    floating-point warnings off: ``inf * 0`` in a product is NaN silently, as in XLA."""
    if _small_batched(eqn):
        return _batched_matmul_kernel(gen, eqn)
    from .nodes import _dot_general as numpy_rule
    return ["with kn.quiet():"] + ["    " + line for line in numpy_rule(gen, eqn)]


# numpy's matmul runs a product with one contracted element (k == 1, a per-example outer
# product of vmap(grad)) through a slow generic loop, microseconds per matrix; others it
# hands to BLAS one matrix at a time, a tenth of a microsecond or more per call.  A compiled
# loop over the batch beats it up to about this many multiply-adds per matrix (row form;
# the dot form only far below it); above that BLAS's blocking wins (measured at 16^3 vs 24^3).
SMALL_MATMUL_MACS = 4096
TINY_MATMUL_MACS = 512

# (batch, m, k) @ (batch, k, n), the outer loop over the batch.  Row form (n of 8 or more):
# each output row is a sum of rows of b scaled by a's entries, the inner loop contiguous in b
# and o (it vectorizes); the first term is a plain product (an outer product, k == 1, is
# exactly a * b, signed zeros included, as XLA's).  Dot form (narrow n): one reduction over
# k per output element, reassociated so it vectorizes (sh.dot_step), from the first term too.
_BMM_ROWS_SOURCE = """\
def KERNEL(nb, a, b):
    o = np.empty((nb, {m}, {n}), {dtype})
    for q in numba.prange(nb):
        for i in range({m}):
            if {k} == 0:
                for j in range({n}):
                    o[q, i, j] = {dtype}(0)
            else:
                f = a[q, i, 0]
                for j in range({n}):
                    o[q, i, j] = f * b[q, 0, j]
                for p in range(1, {k}):
                    f = a[q, i, p]
                    for j in range({n}):
                        o[q, i, j] = sh.dot_step(o[q, i, j], f, b[q, p, j])
    return (o, )
"""
_BMM_DOTS_SOURCE = """\
def KERNEL(nb, a, b):
    o = np.empty((nb, {m}, {n}), {dtype})
    for q in numba.prange(nb):
        for i in range({m}):
            for j in range({n}):
                acc = {dtype}(0)
                if {k} > 0:
                    acc = a[q, i, 0] * b[q, 0, j]
                for p in range(1, {k}):
                    acc = sh.dot_step(acc, a[q, i, p], b[q, p, j])
                o[q, i, j] = acc
    return (o, )
"""


def _small_batched(eqn):
    """A batched real float product (same dtypes throughout) of small matrices."""
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = eqn.invars
    dt = eqn.outvars[0].aval.dtype
    if not lb or dt not in (np.float32, np.float64) or lhs.aval.dtype != dt or rhs.aval.dtype != dt:
        return False
    shape = lambda v, dims: int(np.prod([v.aval.shape[d] for d in dims]))   # noqa: E731
    m = shape(lhs, [d for d in range(lhs.aval.ndim) if d not in lc and d not in lb])
    n = shape(rhs, [d for d in range(rhs.aval.ndim) if d not in rc and d not in rb])
    k = shape(lhs, lc)
    return k == 1 or m * k * n <= (SMALL_MATMUL_MACS if n >= 8 else TINY_MATMUL_MACS)


def _batched_matmul_kernel(gen, eqn):
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = eqn.invars
    lfree = [d for d in range(lhs.aval.ndim) if d not in lc and d not in lb]
    rfree = [d for d in range(rhs.aval.ndim) if d not in rc and d not in rb]
    dims = [("nb", _prod(gen, [lhs.aval.shape[d] for d in lb])),
            ("m", _prod(gen, [lhs.aval.shape[d] for d in lfree])),
            ("k", _prod(gen, [lhs.aval.shape[d] for d in lc])),
            ("n", _prod(gen, [rhs.aval.shape[d] for d in rfree]))]
    src = dict(dims)
    l3 = _as3(gen, lhs, tuple(lb) + tuple(lfree) + tuple(lc), (src["nb"], src["m"], src["k"]))
    r3 = _as3(gen, rhs, tuple(rb) + tuple(rc) + tuple(rfree), (src["nb"], src["k"], src["n"]))
    # The matrix sizes are constants of the kernel (a new size compiles a new one): fixed
    # trip counts let LLVM unroll and vectorize the short inner loops.
    m, k, n = (int(np.prod([v.aval.shape[d] for d in ds])) for v, ds in ((lhs, lfree), (lhs, lc), (rhs, rfree)))
    dt = eqn.outvars[0].aval.dtype.name
    text = (_BMM_ROWS_SOURCE if n >= 8 else _BMM_DOTS_SOURCE).format(dtype=_np_type(dt), m=m, k=k, n=n)
    lines, bufs = _run(gen, text, dims[:1], [(l3, dt, ("nb", m, k)), (r3, dt, ("nb", k, n))],
                       [(dt, ("nb", m, n))], _prod(gen, eqn.outvars[0].aval.shape))
    return lines + _assign(gen, eqn.outvars, bufs)


def _as3(gen, v, perm, sizes):
    """``v`` as a contiguous (batch, rows, cols) stack: itself (``_run`` reshapes it) when
    ``perm`` keeps its axes in order, else a transposed copy."""
    if perm == tuple(range(v.aval.ndim)):
        return gen.name(v)
    return f"kn.as3({gen.name(v)}, {perm}, {', '.join(sizes)})"


# ---------------------------------------------------------------- fft

_FFT_CALLS = {0: "np.fft.fftn", 1: "np.fft.ifftn", 2: "np.fft.rfftn", 3: "np.fft.irfftn"}


def _fft(gen, eqn):
    """numpy's pocketfft, as eager evaluation (the Numba backend's rocket-fft differs from it
    in the last bits)."""
    x, out = eqn.invars[0], eqn.outvars[0]
    lengths, kind = tuple(eqn.params["fft_lengths"]), int(eqn.params["fft_type"])
    nd, k = x.aval.ndim, len(lengths)
    if not k:
        return [f"{gen.name(out)} = {gen.name(x)}.copy()"]
    size = f", s={lengths}" if kind in (2, 3) else ""
    return ["with kn.quiet():",     # inf inputs: NaN outputs without numpy's warnings, as XLA
            f"    {gen.name(out)} = np.ascontiguousarray({_FFT_CALLS[kind]}({gen.name(x)}{size}, "
            f"axes={tuple(range(nd - k, nd))}), dtype={_np_type(out.aval.dtype)})"]


# ---------------------------------------------------------------- linalg
# Operands as (batch, m, n) stacks; LAPACK factorizations through kn (scipy's LAPACK, as
# Numba's np.linalg), the hand-written loops of linalg_kernels as kernels.

def _stack(gen, v):
    *batch, m, n = v.aval.shape
    return f"{gen.name(v)}.reshape(({_prod(gen, batch)}, {gen.dim(m)}, {gen.dim(n)}))"


def _unstack(gen, outs, call):
    tmps = [gen.tmp("la") for _ in outs]
    return [f"{', '.join(tmps)}, = {call}"] + [
        f"{gen.name(o)} = {t}.reshape({gen.shape_src(o.aval.shape)})" for o, t in zip(outs, tmps)]


def _cholesky(gen, eqn):
    """Small real matrices: driver_lib.CHOLESKY_SOURCE as a kernel, the size a constant;
    LAPACK's potrf (through scipy) for the rest."""
    x = eqn.invars[0]
    *batch, n = x.aval.shape[:-1]
    if x.aval.dtype not in (np.float32, np.float64) or n > CHOLESKY_MAX_N:
        return _unstack(gen, eqn.outvars, f"(kn.cholesky({_stack(gen, x)}),)")
    dt = x.aval.dtype.name
    text = CHOLESKY_SOURCE.format(n=n, dtype=_np_type(dt))
    lines, bufs = _run(gen, text, [("nb", _prod(gen, batch))], [(gen.name(x), dt, ("nb", n, n))],
                       [(dt, ("nb", n, n))], _prod(gen, x.aval.shape))
    return lines + _assign(gen, eqn.outvars, bufs)


def _svd(gen, eqn):
    s_dt = _np_type(eqn.outvars[0].aval.dtype)
    call = f"kn.svd({_stack(gen, eqn.invars[0])}, {bool(eqn.params['full_matrices'])}, {s_dt})"
    return _unstack(gen, eqn.outvars, call if eqn.params["compute_uv"] else f"{call}[:1]")


def _eigh(gen, eqn):
    w_dt = _np_type(eqn.outvars[1].aval.dtype)
    return _unstack(gen, eqn.outvars, f"kn.eigh({_stack(gen, eqn.invars[0])}, {bool(eqn.params['lower'])}, {w_dt})")


_LU_SOURCE = """\
def KERNEL(nb, m, n, k, a):
    x = np.empty((nb, m, n), {dtype})
    piv = np.empty((nb, k), np.int32)
    perm = np.empty((nb, m), np.int32)
    for b in numba.prange(nb):
        for i in range(m):
            perm[b, i] = i
            for c in range(n):
                x[b, i, c] = a[b, i, c]
        for j in range(k):
            best = j
            best_val = abs(x[b, j, j])
            for i in range(j + 1, m):
                v = abs(x[b, i, j])
                if v > best_val:
                    best = i
                    best_val = v
            piv[b, j] = best
            if best != j:
                for c in range(n):
                    t = x[b, j, c]
                    x[b, j, c] = x[b, best, c]
                    x[b, best, c] = t
                tp = perm[b, j]
                perm[b, j] = perm[b, best]
                perm[b, best] = tp
            d = x[b, j, j]
            if d != 0:
                for i in range(j + 1, m):
                    x[b, i, j] = x[b, i, j] / d
            for i in range(j + 1, m):
                f = x[b, i, j]
                if f != 0:
                    for c in range(j + 1, n):
                        x[b, i, c] -= f * x[b, j, c]
    return (x, piv, perm)
"""


def _lu(gen, eqn):
    """Partial-pivoting LU in LAPACK getrf's convention: (lu, pivots, permutation)."""
    x = eqn.invars[0]
    *batch, m, n = x.aval.shape
    dt = x.aval.dtype.name
    dims = [("nb", _prod(gen, batch)), ("m", gen.dim(m)), ("n", gen.dim(n)), ("k", f"min({gen.dim(m)}, {gen.dim(n)})")]
    outs = [(dt, ("nb", "m", "n")), ("int32", ("nb", "k")), ("int32", ("nb", "m"))]
    lines, bufs = _run(gen, _LU_SOURCE.format(dtype=_np_type(dt)), dims, [(gen.name(x), dt, ("nb", "m", "n"))],
                       outs, _prod(gen, x.aval.shape))
    return lines + _assign(gen, eqn.outvars, bufs)


_TRSM_SOURCE = """\
def KERNEL(nb, r, c, n, k, a, y):
    x = np.empty((nb, r, c), {dtype})
    for q in numba.prange(nb):
        for i in range(r):
            for j in range(c):
                x[q, i, j] = y[q, i, j]
        for i in range(n):
            ri = {ri}
            for j in range(i):
                rj = {rj}
                f = a[q, {a_ij}]
                for col in range(k):
                    x[q, {x_i}] -= f * x[q, {x_j}]
{divide}    return (x, )
"""
_TRSM_DIVIDE = """\
            r = {dtype}(1.0) / a[q, {a_ii}]
            for col in range(k):
                x[q, {x_i}] = x[q, {x_i}] * r
"""


def _triangular_solve(gen, eqn):
    """linalg_kernels.triangular_solve: forward substitution on op(a) turned lower (rows and
    columns reversed for an upper one), written straight into the result's layout; as BLAS
    trsm, no product is skipped and the diagonal is applied as its reciprocal (a zero pivot
    gives JAX's infinities and NaNs)."""
    a, b = eqn.invars
    p = eqn.params
    left = bool(p["left_side"])
    swap = bool(p["transpose_a"]) != (not left)            # op(a)[i, j] is a[j, i]
    flip = not ((bool(p["lower"]) != bool(p["transpose_a"])) != (not left))   # upper: reversed
    ri, rj = ("n - 1 - i", "n - 1 - j") if flip else ("i", "j")
    a_idx = lambda u, v: f"{v}, {u}" if swap else f"{u}, {v}"        # noqa: E731
    x_idx = lambda u: f"{u}, col" if left else f"col, {u}"           # noqa: E731
    dt = b.aval.dtype.name
    divide = "" if p["unit_diagonal"] else _TRSM_DIVIDE.format(dtype=_np_type(dt), a_ii=a_idx("ri", "ri"),
                                                                x_i=x_idx("ri"))
    text = _TRSM_SOURCE.format(dtype=_np_type(dt), ri=ri, rj=rj, a_ij=a_idx("ri", "rj"),
                               x_i=x_idx("ri"), x_j=x_idx("rj"), divide=divide)
    *batch, r, c = b.aval.shape
    n = a.aval.shape[-1]
    dims = [("nb", _prod(gen, batch)), ("r", gen.dim(r)), ("c", gen.dim(c)), ("n", gen.dim(n)),
            ("k", gen.dim(c if left else r))]
    ins = [(gen.name(a), dt, ("nb", "n", "n")), (gen.name(b), dt, ("nb", "r", "c"))]
    lines, bufs = _run(gen, text, dims, ins, [(dt, ("nb", "r", "c"))], _prod(gen, b.aval.shape))
    return lines + _assign(gen, eqn.outvars, bufs)


_QR_COMPLETE_SOURCE = """\
def KERNEL(nb, m, n, a):
    qo = np.empty((nb, m, m), {dtype})
    ro = np.empty((nb, m, n), {dtype})
    r = np.empty((m, n), np.float64)
    vs = np.empty((n, m), np.float64)
    taus = np.empty((n, ), np.float64)
    q = np.empty((m, m), np.float64)
    for b in numba.prange(nb):
        for i in range(m):
            for c in range(n):
                r[i, c] = np.float64(a[b, i, c])
            for c in range(m):
                q[i, c] = 1.0 if i == c else 0.0
        for j in range(n):
            taus[j] = 0.0
            for i in range(m):
                vs[j, i] = 0.0
        for j in range(n):
            alpha = r[j, j]
            xnorm = 0.0
            for i in range(j + 1, m):
                xnorm += r[i, j] * r[i, j]
            xnorm = np.sqrt(xnorm)
            vs[j, j] = 1.0
            if xnorm != 0.0:
                beta = -np.copysign(np.sqrt(alpha * alpha + xnorm * xnorm), alpha)
                taus[j] = (beta - alpha) / beta
                for i in range(j + 1, m):
                    vs[j, i] = r[i, j] / (alpha - beta)
                for c in range(j, n):
                    d = 0.0
                    for i in range(j, m):
                        d += vs[j, i] * r[i, c]
                    d *= taus[j]
                    for i in range(j, m):
                        r[i, c] -= d * vs[j, i]
        for jj in range(n):
            j = n - 1 - jj
            for c in range(m):
                d = 0.0
                for i in range(j, m):
                    d += vs[j, i] * q[i, c]
                d *= taus[j]
                for i in range(j, m):
                    q[i, c] -= d * vs[j, i]
        for i in range(m):
            for c in range(m):
                qo[b, i, c] = q[i, c]
            for c in range(n):
                ro[b, i, c] = r[i, c] if i <= c else 0.0
    return (qo, ro)
"""


def _qr(gen, eqn):
    x = eqn.invars[0]
    *batch, m, n = x.aval.shape
    if not (eqn.params["full_matrices"] and m > n):
        return _unstack(gen, eqn.outvars, f"kn.qr({_stack(gen, x)}, {bool(eqn.params['full_matrices'])})")
    # The complete Q of a tall matrix: linalg_kernels' Householder QR in LAPACK's convention.
    dt = x.aval.dtype.name
    dims = [("nb", _prod(gen, batch)), ("m", gen.dim(m)), ("n", gen.dim(n))]
    lines, bufs = _run(gen, _QR_COMPLETE_SOURCE.format(dtype=_np_type(dt)), dims,
                       [(gen.name(x), dt, ("nb", "m", "n"))], [(dt, ("nb", "m", "m")), (dt, ("nb", "m", "n"))],
                       _prod(gen, x.aval.shape))
    return lines + _assign(gen, eqn.outvars, bufs)


# ---------------------------------------------------------------- random bits
# nodes_random's threefry kernel (its source is in the kernel language): one prange pass
# hashing every element, counters from iota_2x32_shape computed from the loop index.

def _threefry2x32(gen, eqn):
    out_shape = eqn.outvars[0].aval.shape
    size = _prod(gen, out_shape)
    kinds, args, lines = nodes_random.threefry_operands(gen, eqn, out_shape, scalar="int({})",
                                                        dtype=", dtype=np.uint32")
    params = [("dim",)] + [("scalar", "uint32") if k == "s" else ("array", "uint32", ("n",))
                           for k in kinds if k in ("s", "a")]
    name, text = nodes_random._kernel_source(kinds, True)
    text = "".join(line + "\n" for line in text.splitlines() if not line.startswith("@"))
    gen.add_kernel(name, text, params, [("uint32", ("n",))] * 2, True)
    n, t0, t1 = gen.tmp("n"), gen.tmp("r"), gen.tmp("r")
    lines += [f"{n} = {size}", f"{t0} = np.empty({n}, np.uint32)", f"{t1} = np.empty({n}, np.uint32)",
              f"run_chunked({name}, {n}, {n}, ({', '.join([n] + args + [t0, t1])},))"]
    if out_shape == ():
        return lines + [f"{gen.name(o)} = {t}[0]" for o, t in zip(eqn.outvars, (t0, t1))]
    return lines + _assign(gen, eqn.outvars, (t0, t1))


def _iota_2x32_shape(gen, eqn):
    """The counters' high and low words; nothing when the threefry kernels compute them."""
    if nodes_random._iota_only_feeds_threefry(gen, eqn):
        return []
    hi, lo = (gen.name(v) for v in eqn.outvars)
    shape = eqn.outvars[0].aval.shape
    if shape == ():
        return [f"{hi} = np.uint32(0)", f"{lo} = np.uint32(0)"]
    n = gen.tmp("n")
    return [f"{n} = np.arange({_prod(gen, shape)}, dtype=np.uint64).reshape({gen.shape_src(shape)})",
            f"{hi} = ({n} >> np.uint64(32)).astype(np.uint32)", f"{lo} = {n}.astype(np.uint32)"]


# ---------------------------------------------------------------- host callbacks

def _host_callback(gen, eqn):
    """The driver calls back into Python here, in program order (lax/callback.py checks the
    results against the declared shapes and dtypes); Numba functions without the Python
    wrapping (host_calls.py)."""
    fn = gen.python_object(host_calls.host_function(eqn), "host_callback")
    args = "".join(f"{gen.name(v)}, " for v in eqn.invars)
    if not eqn.outvars:
        return [f"{fn}({args})"]
    results = gen.tmp("cb")
    return [f"{results} = {fn}({args})"] + [
        f"{gen.name(v)} = {results}[{i}]" + ("[()]" if v.aval.shape == () else "")
        for i, v in enumerate(eqn.outvars)]


DRIVER_RULES = {
    la.dot_general_p: _dot_general,
    sorting.sort_p: _sort, sorting.top_k_p: _top_k,
    rd.cumsum_p: _cumulative, rd.cumprod_p: _cumulative, rd.cummax_p: _cumulative,
    rd.cummin_p: _cumulative, fft_p: _fft,
    la.cholesky_p: _cholesky, la.lu_p: _lu, la.qr_p: _qr, la.svd_p: _svd, la.eigh_p: _eigh,
    la.triangular_solve_p: _triangular_solve,
    rb.threefry2x32_p: _threefry2x32, rb.iota_2x32_shape_p: _iota_2x32_shape,
    **{p: _host_callback for p in host.CALLBACK_PRIMITIVES},
    **nodes_windowed.DRIVER_RULES,
}

"""One equation as one kernel, with everything inside it in the kernel language: control flow
(``while``, ``scan``, ``cond``) with its bodies and branches emitted inline, and the indexing
nodes (gather, scatter) as explicit loops.

The LLVM backend's driver calls such a kernel like a region kernel; the loop runs in compiled
code, so a step of a ``scan`` costs what its arithmetic costs (no Python per iteration).
Sizes are constants in these kernels (a new shape compiles a new kernel, as in JAX).

Buffers: every ``np.empty`` is allocated once at kernel entry and reused by each iteration.
Loop carries live in their own buffers (arrays) or variables (rank-0 values); the values a
body returns are copied into them at the end of the iteration, through temporaries where a
returned value may share a carry's buffer (a reshape view, or another carry passed through).
"""
import hashlib
import itertools

import numpy as np

from numjax.jaxpr import Literal, sub_jaxprs
from numjax.lax import control_flow as cf

from . import fusion, scalar
from .compile import RegionCodegen, SourceNames, inline_jits
from .kernel_nodes import INDEXING, KNODE_RULES, VIEWS, copy_array
from .unsupported import Unsupported


def _prepare(jaxpr):
    from numjax.interpreters.partial_eval import dce_jaxpr
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    return dce_jaxpr(inline_jits(jaxpr))


class BodyGen(SourceNames):
    """Kernel-language statements for jaxprs, emitted inline into one function body."""
    parallel = False          # region loops are plain ``range`` loops inside kernels

    def __init__(self):
        self.lines = []
        self.names = {}
        self.counter = itertools.count()
        self.indent = 0
        self.root = {}        # var -> the var whose buffer it views (VIEWS rules)

    def dim(self, size):
        return str(int(size))

    def emit(self, line, depth=1):
        self.lines.append("    " * (depth + self.indent) + line)

    def copy_array(self, dst, v):
        return copy_array(self, dst, v)

    def subfunction(self, jaxpr):
        raise Unsupported("scatter with an update function in a kernel")

    # -- jaxprs
    def jaxpr(self, jaxpr, args):
        """Emits ``jaxpr`` with its inputs bound to the sources ``args``; returns its outputs'
        sources (and keeps ``root`` for views of inputs)."""
        for v, a in zip(jaxpr.invars, args):
            self.names[v] = a
        for item in fusion.Planner().plan(jaxpr):
            if isinstance(item, fusion.Node):
                self.node(item.eqn)
            elif isinstance(item, fusion.Scalar):
                eqn = item.eqn
                expr = scalar.expression(eqn.primitive, [self.name(v) for v in eqn.invars],
                                         [v.aval.dtype for v in eqn.invars], eqn.outvars[0].aval.dtype,
                                         eqn.params)
                self.emit(f"{self.name(eqn.outvars[0])} = {expr}")
            else:
                self.region(item)
        return [self.name(v) for v in jaxpr.outvars]

    def region(self, region):
        RegionCodegen(self, region).generate()

    def node(self, eqn):
        handler = _CONTROL.get(eqn.primitive)
        if handler is not None:
            handler(self, eqn)
            return
        if matvec_lines(self, eqn):
            return
        rule = KNODE_RULES.get(eqn.primitive)
        if rule is None:
            raise Unsupported(f"primitive {eqn.primitive.name} inside a compiled loop")
        for line in rule(self, eqn):
            self.emit(line)
        if eqn.primitive in VIEWS and type(eqn.invars[0]) is not Literal:
            self.root[eqn.outvars[0]] = self.root.get(eqn.invars[0], eqn.invars[0])

    # -- loop carries
    def new_carry(self, v):
        """A carry slot initialized from ``v``: a variable (rank 0) or a buffer."""
        c = self.tmp("c")
        if v.aval.shape == ():
            self.emit(f"{c} = {_cast(v.aval.dtype, self.name(v))}")
        else:
            for line in copy_array(self, c, v):
                self.emit(line)
        return c

    def update_carries(self, carries, carry_vars, outs, out_vars):
        """``carries[k] = outs[k]`` for all k at once (a returned value may view a carry)."""
        staged = []
        for c, o, ov in zip(carries, outs, out_vars):
            if ov.aval.shape == ():
                t = self.tmp("n")
                self.emit(f"{t} = {_cast(ov.aval.dtype, o)}")
                staged.append((c, t, True))
            elif type(ov) is not Literal and self.root.get(ov, ov) in carry_vars and o != c:
                t = self.tmp("n")
                for line in copy_array(self, t, ov):
                    self.emit(line)
                staged.append((c, t, False))
            else:
                staged.append((c, o, False))
        for (c, src, is_scalar), ov in zip(staged, out_vars):
            if is_scalar:
                self.emit(f"{c} = {src}")
            elif src != c:
                self.emit_copy(c, src, ov)

    def emit_copy(self, dst, src, v):
        """Copies array ``src`` (holding value ``v``) into the existing buffer ``dst``."""
        j = self.tmp("j")
        self.emit(f"for {j} in range({int(np.prod(v.aval.shape))}):")
        self.emit(f"    {dst}.reshape(-1)[{j}] = {src}.reshape(-1)[{j}]")


# ---------------------------------------------------------------- matrix-vector products
# The step of a recurrent scan is a matrix times a vector.  kernel_nodes' generic loop nest
# reduces one output at a time, so each multiply-add loads a matrix entry and a vector entry:
# the loads bound it.  Here a row-major matrix is reduced several rows at a time (each vector
# entry loaded once for all of them, their vectorized reductions in flight together), and a
# product reducing the matrix's leading axis runs as scaled row sums, contiguous in the
# matrix.  Rows of 128 or more go eight at a time, shorter ones four (measured: 64x64 is
# faster in fours, 128x128 and 256x256 in eights).


def _matvec_rows(k):
    return 8 if k >= 128 else 4


def matvec_lines(gen, eqn):
    """Emits ``eqn`` when it is a real float matrix-vector product; False otherwise."""
    from numjax.lax.linalg import dot_general_p
    if eqn.primitive is not dot_general_p:
        return False
    (lc, rc), (lb, _) = eqn.params["dimension_numbers"]
    lhs, rhs = eqn.invars
    dt = eqn.outvars[0].aval.dtype
    if lb or dt.kind != "f" or lhs.aval.dtype != dt or rhs.aval.dtype != dt or \
            sorted((lhs.aval.ndim, rhs.aval.ndim)) != [1, 2] or \
            any(type(v) is Literal for v in (lhs, rhs)):
        return False
    (mat, mc), (vec, _) = ((lhs, lc[0]), (rhs, rc[0])) if lhs.aval.ndim == 2 else ((rhs, rc[0]), (lhs, lc[0]))
    emit = _row_dots if mc == 1 else _scaled_rows
    for line in emit(gen, gen.name(mat), gen.name(vec), mat.aval.shape, gen.name(eqn.outvars[0]),
                     scalar.np_type(dt)):
        gen.emit(line)
    return True


def _row_dots(gen, a, x, shape, out, dt):
    """out[i] = sum_k a[i, k] x[k], rows in blocks of ``_matvec_rows(k)``."""
    m, k = shape
    r = _matvec_rows(k)
    i0, kk, xk, acc = gen.tmp("i"), gen.tmp("k"), gen.tmp("x"), gen.tmp("acc")
    accs = [f"{acc}_{q}" for q in range(r)]
    lines = [f"{out} = np.empty(({m},), {dt})", f"for {i0} in range(0, {m - m % r}, {r}):"]
    lines += [f"    {c} = {dt}(0)" for c in accs]
    lines += [f"    for {kk} in range({k}):", f"        {xk} = {x}[{kk}]"]
    lines += [f"        {c} = sh.dot_step({c}, {a}[{i0} + {q}, {kk}], {xk})" for q, c in enumerate(accs)]
    lines += [f"    {out}[{i0} + {q}] = {c}" for q, c in enumerate(accs)]
    lines += [f"for {i0} in range({m - m % r}, {m}):", f"    {acc} = {dt}(0)",
              f"    for {kk} in range({k}):", f"        {acc} = sh.dot_step({acc}, {a}[{i0}, {kk}], {x}[{kk}])",
              f"    {out}[{i0}] = {acc}"]
    return lines


def _scaled_rows(gen, a, x, shape, out, dt):
    """out[j] = sum_k x[k] a[k, j]: rows of ``a`` scaled and added, contiguous in j."""
    k, n = shape
    kk, j, xk = gen.tmp("k"), gen.tmp("j"), gen.tmp("x")
    return [f"{out} = np.empty(({n},), {dt})",
            f"for {j} in range({n}):", f"    {out}[{j}] = {dt}(0)",
            f"for {kk} in range({k}):", f"    {xk} = {x}[{kk}]",
            f"    for {j} in range({n}):", f"        {out}[{j}] = sh.dot_step({out}[{j}], {xk}, {a}[{kk}, {j}])"]


def _cast(dt, src):
    return f"bool({src})" if np.dtype(dt) == np.bool_ else f"{scalar.np_type(dt)}({src})"


# ---------------------------------------------------------------- control flow

def _while(gen, eqn):
    p = eqn.params
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cconsts = [gen.name(v) for v in eqn.invars[:nc]]
    bconsts = [gen.name(v) for v in eqn.invars[nc:nc + nb]]
    init = eqn.invars[nc + nb:]
    cond_jx, body_jx = _prepare(p["cond_jaxpr"]), _prepare(p["body_jaxpr"])
    carries = [gen.new_carry(v) for v in init]
    flag = gen.tmp("p")
    gen.emit(f"{flag} = bool({gen.jaxpr(cond_jx, cconsts + carries)[0]})")
    gen.emit(f"while {flag}:")
    gen.indent += 1
    outs = gen.jaxpr(body_jx, bconsts + carries)
    gen.update_carries(carries, set(body_jx.invars[nb:]), outs, body_jx.outvars)
    gen.emit(f"{flag} = bool({gen.jaxpr(cond_jx, cconsts + carries)[0]})")
    gen.indent -= 1
    for o, c in zip(eqn.outvars, carries):
        gen.names[o] = c


def _scan(gen, eqn):
    p = eqn.params
    nconst, ncarry, length = p["num_consts"], p["num_carry"], p["length"]
    consts = [gen.name(v) for v in eqn.invars[:nconst]]
    init = eqn.invars[nconst:nconst + ncarry]
    xs = eqn.invars[nconst + ncarry:]
    body = _prepare(p["jaxpr"])
    carries = [gen.new_carry(v) for v in init]
    ys = eqn.outvars[ncarry:]
    for y in ys:
        gen.emit(f"{gen.name(y)} = np.empty({gen.shape_src(y.aval.shape)}, {scalar.np_type(y.aval.dtype)})")
    step, t = gen.tmp("s"), gen.tmp("s")
    gen.emit(f"for {step} in range({length}):")
    gen.indent += 1
    gen.emit(f"{t} = {length - 1} - {step}" if p["reverse"] else f"{t} = {step}")
    x_args = []
    for x in xs:
        xa = gen.tmp("x")
        gen.emit(f"{xa} = {gen.name(x)}[{t}]" if x.aval.ndim == 1 else f"{xa} = {gen.name(x)}[{t}, ...]")
        x_args.append(xa)
    outs = gen.jaxpr(body, consts + carries + x_args)
    for y, o, ov in zip(ys, outs[ncarry:], body.outvars[ncarry:]):
        if ov.aval.shape == ():
            gen.emit(f"{gen.name(y)}[{t}] = {o}")
        else:
            gen.emit_copy(f"{gen.name(y)}[{t}, ...]", o, ov)
    gen.update_carries(carries, set(body.invars[nconst:nconst + ncarry]), outs[:ncarry],
                       body.outvars[:ncarry])
    gen.indent -= 1
    for o, c in zip(eqn.outvars[:ncarry], carries):
        gen.names[o] = c


def _cond(gen, eqn):
    index, *ops = eqn.invars
    args = [gen.name(v) for v in ops]
    results = []
    for o in eqn.outvars:
        r = gen.tmp("r")
        if o.aval.shape != ():
            gen.emit(f"{r} = np.empty({gen.shape_src(o.aval.shape)}, {scalar.np_type(o.aval.dtype)})")
        results.append(r)
    branches = eqn.params["branches"]
    idx = gen.name(index)
    for k, branch in enumerate(branches):
        if len(branches) == 1:
            gen.emit("if True:")
        elif k == 0:
            gen.emit(f"if {idx} <= 0:")
        elif k == len(branches) - 1:
            gen.emit("else:")
        else:
            gen.emit(f"elif {idx} == {k}:")
        gen.indent += 1
        jx = _prepare(branch)
        outs = gen.jaxpr(jx, args)
        for r, o, ov in zip(results, outs, jx.outvars):
            if ov.aval.shape == ():
                gen.emit(f"{r} = {_cast(ov.aval.dtype, o)}")
            else:
                gen.emit_copy(r, o, ov)
        gen.indent -= 1
    for o, r in zip(eqn.outvars, results):
        gen.names[o] = r


_CONTROL = {cf.while_p: _while, cf.scan_p: _scan, cf.cond_p: _cond}

# Equations the driver runs as one kernel of this module.
KERNEL_EQNS = frozenset(_CONTROL) | INDEXING


# ---------------------------------------------------------------- which loops run in Python

CONTROL = frozenset(_CONTROL)
# A body with a matmul of this many multiply-adds or more runs as a Python loop over driver
# code (BLAS at tens of GFLOP/s; the loop costs microseconds per iteration), not as a kernel.
HEAVY_MACS = 1 << 19


def heavy_body(eqn):
    """True when a body or branch of control-flow ``eqn`` holds a large matmul."""
    from numjax.lax.linalg import dot_general_p
    for jx in sub_jaxprs(eqn.params):
        for e in jx.eqns:
            if e.primitive is dot_general_p and _macs(e) >= HEAVY_MACS:
                return True
            if heavy_body(e):
                return True
    return False


def _macs(eqn):
    (lc, _), _ = eqn.params["dimension_numbers"]
    lhs = eqn.invars[0].aval.shape
    return int(np.prod(eqn.outvars[0].aval.shape)) * int(np.prod([lhs[d] for d in lc]))


# ---------------------------------------------------------------- the kernel

def eqn_kernel(eqn):
    """(name, source, params, outputs, inputs) of a kernel computing ``eqn``: ``inputs`` are the
    equation's non-literal operands in parameter order."""
    gen = BodyGen()
    inputs = []
    for v in eqn.invars:
        if type(v) is not Literal and v not in inputs:
            inputs.append(v)
    params = [("scalar", v.aval.dtype.name) if v.aval.shape == () else
              ("array", v.aval.dtype.name, tuple(int(s) for s in v.aval.shape)) for v in inputs]
    argnames = [f"arg{k}" for k in range(len(inputs))]   # no temporary has this prefix
    for v, a in zip(inputs, argnames):
        gen.names[v] = a
    gen.node(eqn)
    outs = [gen.name(v) for v in eqn.outvars]
    body = "\n".join(gen.lines)
    header = f"def KERNEL({', '.join(argnames)}):\n"
    text = header + body + f"\n    return ({''.join(o + ', ' for o in outs)})\n"
    name = "k_" + hashlib.sha256(text.encode()).hexdigest()[:16]
    outputs = [(v.aval.dtype.name, tuple(int(s) for s in v.aval.shape)) for v in eqn.outvars]
    return name, text.replace("def KERNEL(", f"def {name}("), params, outputs, inputs

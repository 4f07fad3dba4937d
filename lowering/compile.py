"""Jaxpr -> one generated Numba function, compiled once per distinct source.

``lower_jaxpr`` writes the source: the plan from ``fusion`` becomes straight-line
code where each region is one loop nest and each node a numpy-in-Numba call.
Sizes are read from the inputs' shapes at run time wherever a dimension equals
an input dimension, so a new size of the same rank reuses the same source and
hence the same compiled function (the compile cache is keyed by source).
Anything without a lowering rule makes the whole program fall back to eager
evaluation, with a warning (``FallbackExecutable``).
"""
import hashlib
import itertools
import warnings

import numpy as np

from numjax.ad_checkpoint import name_p, remat_lin_p
from numjax.array import Array, c_contiguous as _c_contiguous
from numjax.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from numjax.dispatch import jit_p
from numjax.errors import NoLoweringError
from numjax.jaxpr import Literal, eval_jaxpr
from numjax.lax import linalg as lax_linalg
from numjax.lax import shape as lax_shape

from . import fusion, scalar
from .loop_forms import MONOIDS, InnermostLoops, identity_source
from .nodes import NODE_RULES

_compile_cache = {}   # source sha -> numba dispatcher


class Lowered:
    def __init__(self, source, fn_name, consts, out_avals, in_avals):
        self.source, self.fn_name, self.consts = source, fn_name, consts
        self.out_avals, self.in_avals = out_avals, in_avals
        self.kernels = {}

    @property
    def text(self):
        """Everything that runs: the region kernels, then the program that calls them."""
        kernels = "".join(f"# ---- kernel {name}\n{src}\n" for name, src in sorted(self.kernels.items()))
        return kernels + "# ---- program\n" + self.source


def _is_empty_reduction(eqn):
    # A reduction over no axes (jnp.sum of a scalar) is the identity; lowered as a
    # reduction it would hand a 0-d array where the code expects a scalar.
    return (eqn.primitive.reduction not in (None, "argmax", "argmin") and eqn.params.get("axes") == ()
            and eqn.outvars[0].aval.dtype == eqn.invars[0].aval.dtype)


# Call-like equations whose body is spliced into the caller (their derivative rules only
# matter to transformations, which have run by now): parameter holding the body.
_INLINED_CALLS = {jit_p: "jaxpr", custom_jvp_call_p: "call_jaxpr", custom_vjp_call_p: "call_jaxpr",
                  remat_lin_p: "jaxpr"}


def inline_jits(jaxpr):
    """Nested jit (and custom_jvp/vjp call) equations are spliced into their parent so
    fusion sees through them; reductions over no axes and checkpoint names become renames."""
    from numjax.jaxpr import Jaxpr, JaxprEqn, Var
    if not any(e.primitive in _INLINED_CALLS or _is_empty_reduction(e) or e.primitive is name_p
               for e in jaxpr.eqns):
        return jaxpr
    eqns, rename = [], {}

    def sub(v):
        return rename.get(v, v) if type(v) is not Literal else v

    for eqn in jaxpr.eqns:
        if _is_empty_reduction(eqn) or eqn.primitive is name_p:   # identities: renames
            rename[eqn.outvars[0]] = sub(eqn.invars[0])
            continue
        body_param = _INLINED_CALLS.get(eqn.primitive)
        if body_param is None:
            eqns.append(JaxprEqn(eqn.primitive, [sub(v) for v in eqn.invars], eqn.outvars, eqn.params))
            continue
        inner = inline_jits(eqn.params[body_param].jaxpr)
        inner_consts = eqn.params[body_param].consts
        if inner_consts:
            raise NotImplementedError("nested jit with array constants")
        local = dict(zip(inner.invars, [sub(v) for v in eqn.invars]))
        for ie in inner.eqns:
            # Fresh variables per call site: the same jitted helper may be inlined twice.
            outs = [Var(o.aval) for o in ie.outvars]
            eqns.append(JaxprEqn(ie.primitive, [local.get(v, v) if type(v) is not Literal else v
                                                for v in ie.invars], outs, ie.params))
            local.update(zip(ie.outvars, outs))
        for outer_v, inner_v in zip(eqn.outvars, inner.outvars):
            rename[outer_v] = local.get(inner_v, inner_v) if type(inner_v) is not Literal else inner_v
    outvars = [sub(v) for v in jaxpr.outvars]
    return Jaxpr(jaxpr.constvars, jaxpr.invars, outvars, eqns)


class SourceNames:
    """Variable and temporary names of generated source, shared by every code generator:
    ``name(v)`` is a value's variable (a literal's source for literals), ``tmp`` a fresh name,
    ``shape_src`` a shape tuple of ``dim`` sources.  Uses ``self.names`` and ``self.counter``."""

    def name(self, v):
        if type(v) is Literal:
            return scalar.literal(v.val, v.aval.dtype)
        n = self.names.get(v)
        if n is None:
            n = self.names[v] = f"v{next(self.counter)}"
        return n

    def tmp(self, prefix="t"):
        return f"{prefix}{next(self.counter)}"

    def shape_src(self, shape):
        return "(" + "".join(f"{self.dim(s)}, " for s in shape) + ")"


class Codegen(SourceNames):
    planner_options = {}

    def __init__(self, jaxpr, fn_name, parallel=False, scalar_io=False, subfns=None, kernels=None):
        self.jaxpr = jaxpr
        self.fn_name = fn_name
        self.parallel = parallel
        # Sub-functions (loop bodies, branches) take and return rank-0 values as scalars.
        self.scalar_io = scalar_io
        self.subfns = subfns if subfns is not None else {}
        self.kernels = kernels if kernels is not None else {}
        self.names = {}
        self.counter = itertools.count()
        self.lines = []
        self.dim_sources = {}
        self._value_ranges = None

    @property
    def value_ranges(self):
        """The value ranges (``value_range``) of the program's values, computed once: a region
        reads values made outside it (a clip's bounds, made rank-0 before the region)."""
        if self._value_ranges is None:
            from .value_range import region_ranges
            self._value_ranges = region_ranges(self.jaxpr.eqns)
        return self._value_ranges

    def dim(self, size):
        return self.dim_sources.get(size, str(size))

    def emit(self, line, depth=1):
        self.lines.append("    " * depth + line)

    # -- program
    def generate(self):
        jx = self.jaxpr
        params = [f"arg{k}" for k in range(len(jx.constvars) + len(jx.invars))]
        self.emit(f"def {self.fn_name}({', '.join(params)}):", 0)
        for param, v in zip(params, jx.constvars + jx.invars):
            for j, s in enumerate(v.aval.shape):
                self.dim_sources.setdefault(s, f"{param}.shape[{j}]")
            # Rank-0 values live as scalars inside generated code.
            scalar_in = v.aval.shape == () and not self.scalar_io
            self.emit(f"{self.name(v)} = {param}[()]" if scalar_in else f"{self.name(v)} = {param}")
        for item in fusion.Planner(**self.planner_options).plan(jx):
            if isinstance(item, fusion.Node):
                self._node(item.eqn)
            elif isinstance(item, fusion.Scalar):
                self._scalar(item.eqn)
            else:
                self._region(item)
        outs = [self._output(v) for v in jx.outvars]
        self.emit(f"return ({''.join(o + ', ' for o in outs)})")
        return "\n".join(self.lines) + "\n"

    def _region(self, region):
        """A region becomes a call of a content-addressed kernel, shared across programs."""
        from . import leading_axis
        if self.parallel and leading_axis.blocked_region(region):
            return leading_axis.numba_region(self, region)
        kg = KernelGen(region, self.parallel, self.value_ranges)
        RegionCodegen(kg, region).generate()
        name, src = kg.source()
        self.kernels[name] = src
        outs = [self.name(v) for v in kg.outputs]
        args = [self.dim(d) for d in kg.dims] + [self.name(v) for v in kg.inputs]
        target = ", ".join(outs) + ("," if len(outs) == 1 else "")
        self.emit(f"{target} = {name}({', '.join(args)})")

    def subfunction(self, jaxpr):
        """Name of a generated function computing ``jaxpr`` (a loop body or a branch)."""
        key = id(jaxpr)
        if key not in self.subfns:
            name = f"{self.fn_name.removesuffix('_par')}_s{len(self.subfns)}"
            self.subfns[key] = (name, None, jaxpr)   # reserve the name before recursing
            src = Codegen(inline_jits(jaxpr), name, scalar_io=True, subfns=self.subfns,
                          kernels=self.kernels).generate()
            self.subfns[key] = (name, _DECORATOR + "\n" + src, jaxpr)
        return self.subfns[key][0]

    def _output(self, v):
        if self.scalar_io:
            return self.name(v)
        if type(v) is Literal:
            return f"np.full((), {scalar.literal(v.val, v.aval.dtype)})"
        if v.aval.shape == ():
            # Scalars travel as 0-d arrays so the caller sees one array per output.
            return f"np.full((), {self.name(v)})"
        return self.name(v)

    def _scalar(self, eqn):
        args = [self.name(v) for v in eqn.invars]
        expr = scalar.expression(eqn.primitive, args, [v.aval.dtype for v in eqn.invars],
                                 eqn.outvars[0].aval.dtype, eqn.params)
        self.emit(f"{self.name(eqn.outvars[0])} = {expr}")

    def _node(self, eqn):
        rule = NODE_RULES.get(eqn.primitive)
        if rule is None:
            raise NoLoweringError(eqn.primitive.name, "no lowering rule")
        for line in rule(self, eqn):
            self.emit(line)


class KernelGen:
    """The naming context of one region kernel: canonical names, so equal regions give equal
    source (and one compile) whatever program they come from; sizes arrive as arguments."""

    def __init__(self, region, parallel, value_ranges=None):
        self.region, self.parallel = region, parallel
        self.value_ranges = value_ranges      # the program's (``Codegen.value_ranges``), or None
        # The parameters and results are the region's signature, fixed by the planner.
        self.outputs, self.inputs = region.outputs, region.inputs
        self.dims = [d.size for d in region.dims]
        self.out_names = {v: f"o{k}" for k, v in enumerate(self.outputs)}
        self.in_names = {v: f"x{k}" for k, v in enumerate(self.inputs)}
        self.dim_names = {size: f"d{k}" for k, size in enumerate(self.dims)}
        self.counter = itertools.count()
        self.lines = []

    def name(self, v):
        if type(v) is Literal:
            return scalar.literal(v.val, v.aval.dtype)
        if v in self.out_names:
            return self.out_names[v]
        return self.in_names[v]

    def tmp(self, prefix="t"):
        return f"{prefix}{next(self.counter)}"

    def dim(self, size):
        return self.dim_names[size]

    def shape_src(self, shape):
        return "(" + "".join(f"{self.dim(s)}, " for s in shape) + ")"

    def emit(self, line, depth=1):
        self.lines.append("    " * depth + line)

    def source(self):
        params = [self.dim_names[d] for d in self.dims] + [self.in_names[v] for v in self.inputs]
        return named_kernel(params, self.lines, [self.out_names[v] for v in self.outputs])


def named_kernel(params, lines, outs):
    """(name, source) of a kernel taking ``params``, running ``lines`` and returning ``outs``;
    its name is its source's hash (one compiled kernel per distinct text)."""
    body = "\n".join(lines)
    deco = _DECORATOR[:-1] + (", parallel=True)" if "prange" in body else ")")
    text = (f"{deco}\ndef KERNEL({', '.join(params)}):\n{body}\n"
            f"    return ({''.join(o + ', ' for o in outs)})\n")
    name = "k_" + hashlib.sha256(text.encode()).hexdigest()[:16]
    return name, text.replace("def KERNEL(", f"def {name}(")


class RegionCodegen(InnermostLoops):
    """One loop nest: loads, fused scalar expressions, stores and reductions.  The innermost
    loops carrying reductions come from ``loop_forms``; multi-pass row regions are written by
    ``row_codegen``, reductions over a leading axis in blocks of rows by ``leading_axis``."""

    def __init__(self, gen, region):
        self.gen, self.region = gen, region
        self.shape = region.shape
        self.rank = len(self.shape)
        self.flat = self._can_flatten()
        self.local = {}           # var -> scalar source inside the loop body
        self.accs = []            # scalar accumulators: (name, init source, combine, dtype)
        self.acc_inputs = {}      # accumulator -> the scalar it accumulates
        self._acc_depth = {}      # accumulator -> loop depth it lives at
        self.unrollable = True    # False once a reduction needs more than scalar accumulators

    def _can_flatten(self):
        # Only rank 1: a reshape(-1) view of an N-d input stopped LLVM vectorizing loops
        # with table lookups (sin/cos), 3.5x slower measured; N-d regions use nested loops.
        if self.rank != 1:
            return False
        for eqn in self.region.eqns:
            if eqn.primitive.is_load:
                return False
            if eqn.primitive.reduction is not None and len(eqn.params["axes"]) != self.rank:
                return False
            for v in eqn.invars:
                if type(v) is not Literal and v.aval.shape not in ((), self.shape):
                    return False
        return True

    def idx(self, shape=None, bdims=None):
        """Index source for reading an array of ``shape`` broadcast into the iteration space."""
        if self.flat:
            return "i"
        shape = self.shape if shape is None else shape
        bdims = list(range(self.rank - len(shape), self.rank)) if bdims is None else bdims
        parts = ["0" if s == 1 and self.shape[d] != 1 else f"i{d}" for s, d in zip(shape, bdims)]
        return ", ".join(parts) if parts else "()"

    def read(self, v, body):
        if type(v) is Literal:
            return self.gen.name(v)
        if v in self.local:
            return self.local[v]
        if v.aval.shape == ():
            return self.gen.name(v)
        arr = self.gen.name(v) + ("_f" if self.flat else "")
        t = self.gen.tmp()
        body.append(f"{t} = {arr}[{self.idx(v.aval.shape)}]")
        self.local[v] = t
        return t

    def generate(self):
        gen, region = self.gen, self.region
        from .row_codegen import RowRegionCodegen, arg_reduction_region
        from .leading_axis import LeadingCodegen, blocked_region
        if type(self) is RegionCodegen and (region.multipass or arg_reduction_region(region)):
            return RowRegionCodegen(gen, region).generate()
        if type(self) is RegionCodegen and blocked_region(region):
            return LeadingCodegen(gen, region).generate()
        pre, body, inits, finals = [], [], {}, {}
        n = self.gen.tmp("n")
        if self.flat:
            pre.append(f"{n} = {' * '.join([gen.dim(s) for s in self.shape]) or '1'}")
        in_place = getattr(gen, "in_place", ())    # results stored into an input (``buffer_reuse``)
        for v in region.materialize:
            if v not in in_place:
                pre.append(f"{gen.name(v)} = np.empty({gen.shape_src(self.shape)}, {scalar.np_type(v.aval.dtype)})")
        arrays_read = self._flat_views(pre)
        for eqn in region.eqns:
            self._eqn(eqn, body, inits, finals)
        for v in region.materialize:
            target = gen.name(v) + ("_f" if self.flat else "")
            body.append(f"{target}[{self.idx()}] = {self.local[v]}")
        for line in pre:
            gen.emit(line)
        self._emit_loops(n, body, inits, finals, arrays_read)

    def _flat_views(self, pre):
        if not self.flat:
            return
        seen = set()
        for eqn in self.region.eqns:
            for v in eqn.invars:
                if type(v) is Literal or v.aval.shape == () or v in self.region.defined or v in seen:
                    continue
                seen.add(v)
                pre.append(f"{self.gen.name(v)}_f = {self.gen.name(v)}")
        for v in self.region.materialize:
            pre.append(f"{self.gen.name(v)}_f = {self.gen.name(v)}")

    def _eqn(self, eqn, body, inits, finals):
        prim = eqn.primitive
        out = eqn.outvars[0]
        if prim is fusion.identity_load_p:
            self.read(eqn.invars[0], body)
            return
        if prim is lax_shape.iota_p:
            t = self.gen.tmp()
            body.append(f"{t} = {scalar.np_type(out.aval.dtype)}(i{eqn.params['dimension']})")
            self.local[out] = t
            return
        if prim is lax_shape.broadcast_in_dim_p:
            x = eqn.invars[0]
            if type(x) is Literal or x.aval.shape == ():
                self.local[out] = self.read(x, body)
                return
            t = self.gen.tmp()
            body.append(f"{t} = {self.gen.name(x)}[{self.idx(x.aval.shape, eqn.params['broadcast_dimensions'])}]")
            self.local[out] = t
            return
        if prim.reduction is not None:
            self._reduction(eqn, body, inits, finals)
            return
        args = [self.read(v, body) for v in eqn.invars]
        t = self.gen.tmp()
        body.append(f"{t} = " + scalar.expression(prim, args, [v.aval.dtype for v in eqn.invars],
                                                  out.aval.dtype, eqn.params,
                                                  arg_ranges=[self._ranges.get(v) for v in eqn.invars]))
        self.local[out] = t

    @property
    def _ranges(self):
        """The region's value ranges (``value_range``), computed once."""
        if getattr(self, "_value_ranges", None) is None:
            from .value_range import region_ranges
            known = getattr(self.gen, "value_ranges", None)
            self._value_ranges = known if known is not None else region_ranges(self.region.eqns)
        return self._value_ranges

    def _reduction(self, eqn, body, inits, finals):
        monoid = eqn.primitive.reduction
        src, out = eqn.invars[0], eqn.outvars[0]
        axes = eqn.params["axes"]
        val = self.read(src, body)
        dt = src.aval.dtype
        if not axes:   # reducing over no axes is a copy
            res = self.gen.name(out)
            self.gen.emit(f"{res} = np.empty({self.gen.shape_src(out.aval.shape)}, {scalar.np_type(out.aval.dtype)})")
            body.append(f"{res}[{self.idx()}] = {val}" if not self.flat else f"{res}[i] = {val}")
            self.unrollable = False
            return
        trailing = tuple(sorted(axes)) == tuple(range(self.rank - len(axes), self.rank))
        depth = self.rank - len(axes) if not self.flat else 0
        kept = [d for d in range(self.rank) if d not in axes]
        if monoid in ("argmax", "argmin"):
            return self._arg_reduction(eqn, val, trailing, depth, kept, body, inits, finals)
        init_src = identity_source(monoid, dt)
        combine = MONOIDS[monoid].combine
        res = self.gen.name(out)
        if trailing:
            acc = self.gen.tmp("acc")
            inits.setdefault(depth, []).append(f"{acc} = {init_src}")
            self._acc_depth[acc] = depth
            body.append(f"{acc} = {combine(acc, val, dt)}")
            self.accs.append((acc, init_src, combine, dt))
            self.acc_inputs[acc] = val
            if out.aval.shape == ():
                finals.setdefault(depth, []).append(f"{res} = {acc}")
            else:
                finals.setdefault(depth, []).append(f"{res}[{', '.join(f'i{d}' for d in kept)}] = {acc}")
                self.gen.emit(f"{res} = np.empty({self.gen.shape_src(out.aval.shape)}, {scalar.np_type(dt)})")
            return
        self.unrollable = False
        self.gen.emit(f"{res} = np.full({self.gen.shape_src(out.aval.shape)}, {init_src}, {scalar.np_type(dt)})")
        k = ", ".join(f"i{d}" for d in kept)
        body.append(f"{res}[{k}] = {combine(f'{res}[{k}]', val, dt)}")

    def _arg_reduction(self, eqn, val, trailing, depth, kept, body, inits, finals):
        out = eqn.outvars[0]
        axis = eqn.params["axes"][0]
        monoid = eqn.primitive.reduction
        better = ">" if monoid == "argmax" else "<"
        best, bi = self.gen.tmp("best"), self.gen.tmp("bi")
        dt = eqn.invars[0].aval.dtype
        init = identity_source(monoid, dt)
        pos = "i" if self.flat else f"i{axis}"
        res = self.gen.name(out)
        idx_t = scalar.np_type(out.aval.dtype)
        self.unrollable = False
        if not trailing:
            # Per-output running best and index arrays, updated in the natural loop order.
            k = ", ".join(f"i{d}" for d in kept)
            shape = self.gen.shape_src(out.aval.shape)
            self.gen.emit(f"{best} = np.full({shape}, {init}, {scalar.np_type(dt)})")
            self.gen.emit(f"{res} = np.full({shape}, -1, {idx_t})")
            body.append(f"if {res}[{k}] < 0 or ({best}[{k}] == {best}[{k}] and "
                        f"({val} {better} {best}[{k}] or {val} != {val})):")
            body.append(f"    {best}[{k}] = {val}")
            body.append(f"    {res}[{k}] = {pos}")
            return
        inits.setdefault(depth, []).extend([f"{best} = {init}", f"{bi} = -1"])
        # The first NaN wins, then the first extremum, as XLA's argmax does.
        body.append(f"if {bi} < 0 or ({best} == {best} and ({val} {better} {best} or {val} != {val})):")
        body.append(f"    {best} = {val}")
        body.append(f"    {bi} = {pos}")
        if out.aval.shape == ():
            finals.setdefault(depth, []).append(f"{res} = {idx_t}({bi})")
        else:
            self.gen.emit(f"{res} = np.empty({self.gen.shape_src(out.aval.shape)}, {idx_t})")
            finals.setdefault(depth, []).append(f"{res}[{', '.join(f'i{d}' for d in kept)}] = {bi}")

    def _outer_loop_parallel(self):
        # prange is safe when no reduction accumulates across iterations of the outer loop
        # (``leading_axis`` splits those that keep the last axis into blocks of rows).
        for eqn in self.region.eqns:
            if eqn.primitive.reduction is not None and (self.flat or 0 in eqn.params["axes"]):
                return False
        return self.gen.parallel

    def _emit_loops(self, n, body, inits, finals, _):
        gen = self.gen
        loops = [("i", n)] if self.flat else [(f"i{d}", gen.dim(s)) for d, s in enumerate(self.shape)]
        depth = 1
        par = self._outer_loop_parallel()
        two_phase = bool(loops and self.accs and self._two_phase(body))
        bufs = {}   # (the blocked form keeps each block's values in registers)
        lane_loop = bool(loops and self.accs and not two_phase and not self._unroll_worth_it(body))
        for k, (var, bound) in enumerate(loops):
            for line in inits.get(k, []):
                gen.emit(line, depth)
            if k == len(loops) - 1 and self.accs:
                break   # the innermost loop is emitted with its lanes below
            rng = "numba.prange" if par and k == 0 else "range"
            gen.emit(f"for {var} in {rng}({bound}):", depth)
            depth += 1
        if not loops:
            pass   # a rank-0 region is emitted as straight-line code below
        elif two_phase:
            depth = self._emit_two_phase(loops[-1], body, depth, bufs)
        elif lane_loop:
            depth = self._emit_lane_loop(loops[-1], body, depth)
        elif self.accs:
            depth = self._emit_unrolled_innermost(loops[-1], body, depth)
        else:
            for line in body:
                gen.emit(line, depth)
        for k in range(len(loops) - 1, -1, -1):
            depth -= 1
            for line in finals.get(k, []):
                gen.emit(line, depth)
        if not loops:   # rank-0 region (a scalar reduction of a scalar)
            for line in inits.get(0, []) + body + finals.get(0, []):
                gen.emit(line, 1)


_HEADER = """\
# Generated by numjax from a jaxpr; run with NUMBA_DISABLE_JIT=1 to step through it as Python.
import math
import numba
import numpy as np
from numjax.lowering import vmath as vm
from numjax.lowering import scalar_helpers as sh
from numjax.lowering import special_helpers as sp
from numjax.lowering import kernels as kn
from numjax.lowering.compile import kernel_registry
vm.ensure_jitted()
sh.ensure_jitted()
"""


# error_model="numpy": x / 0 is inf or nan as in XLA, not Python's ZeroDivisionError (and
# division no longer blocks vectorization).
_DECORATOR = '@numba.njit(cache=True, nogil=True, error_model="numpy")'
_KERNEL_IMPORT_MARK = "from numjax.lowering.compile import kernel_registry\n"
_KERNEL_HEADER = """\
# A fused region kernel generated by numjax (content-addressed: shared by every program using it).
import math
import numba
import numpy as np
from numjax.lowering import vmath as vm
from numjax.lowering import scalar_helpers as sh
from numjax.lowering import special_helpers as sp
vm.ensure_jitted()
sh.ensure_jitted()

"""


_UNSUPPORTED_KINDS = {"V": "void"}


def _complex_primitives():
    """Primitives whose CPU lowering is known to compile for complex operands; a complex value
    produced or read by anything else keeps the program on the eager path."""
    from numjax.lax import elementwise as ew, indexing as ix, linalg as la, reductions as rd
    from numjax.lax.fft import fft_p
    from numjax.numpy import _elementwise as jnp_ew
    return frozenset([
        ew.add_p, ew.sub_p, ew.mul_p, ew.div_p, ew.neg_p, ew.add_any_p, ew.abs_p, ew.exp_p, ew.log_p,
        ew.sqrt_p, ew.sin_p, ew.cos_p, ew.integer_pow_p, ew.convert_element_type_p, ew.select_n_p,
        ew.eq_p, ew.ne_p, ew.stop_gradient_p, jnp_ew.real_p, jnp_ew.imag_p, jnp_ew.conj_p,
        jnp_ew.complex_p, lax_shape.broadcast_in_dim_p, lax_shape.reshape_p, lax_shape.transpose_p,
        lax_shape.concatenate_p, lax_shape.pad_p, lax_shape.squeeze_p, lax_shape.rev_p, ix.slice_p,
        ix.dynamic_slice_p, ix.dynamic_update_slice_p, rd.reduce_sum_p, rd.reduce_prod_p,
        la.dot_general_p, fft_p, la.cholesky_p, la.svd_p, la.eigh_p, la.triangular_solve_p, la.lu_p])


_COMPLEX_PRIMS = _complex_primitives()


def _check_dtypes(jaxpr):
    for e in jaxpr.eqns:
        for v in list(e.invars) + list(e.outvars):
            dt = v.aval.dtype
            if dt == np.float16 or dt.kind in _UNSUPPORTED_KINDS:
                raise NoLoweringError(e.primitive.name, f"{dt.name} arithmetic is not compiled", dt)
            if dt.kind == "c" and e.primitive not in _COMPLEX_PRIMS:
                raise NoLoweringError(e.primitive.name, "complex operands are not compiled", dt)
    for v in jaxpr.invars:
        if v.aval.dtype == np.float16:
            raise NoLoweringError("(input)", "float16 arithmetic is not compiled", v.aval.dtype)


# Imported only by programs that use them: rocket_fft registers np.fft for Numba (~0.15 s).
_OPTIONAL_IMPORTS = (("lk.", "from numjax.lowering import linalg_kernels as lk\n"),
                     ("sk.", "from numjax.lowering import sort_kernels as sk\n"),
                     ("np.fft.", "import rocket_fft  # noqa: F401\n"))


def _optional_imports(source):
    return "".join(line for marker, line in _OPTIONAL_IMPORTS if marker in source)


def lower_jaxpr(closed, name="fn"):
    """Source with a serial function and a parallel twin (prange outer loops) for large inputs."""
    from numjax.interpreters.partial_eval import dce_jaxpr
    jaxpr = dce_jaxpr(inline_jits(closed.jaxpr))
    _check_dtypes(jaxpr)
    fn_name = "numjax_" + "".join(c if c.isalnum() else "_" for c in name)
    subfns, kernels = {}, {}
    serial = Codegen(jaxpr, fn_name, subfns=subfns, kernels=kernels).generate()
    subs = "".join(src + "\n\n" for _, src, _ in subfns.values())
    source = _HEADER + subs + _DECORATOR + "\n" + serial
    # Programs with matmuls already run BLAS threads; a parallel twin would oversubscribe.
    has_blas = any(e.primitive is lax_linalg.dot_general_p for e in jaxpr.eqns)
    if not has_blas:
        par_kernels = {}
        parallel = Codegen(jaxpr, fn_name + "_par", parallel=True, subfns=subfns,
                           kernels=par_kernels).generate()
        if any("prange" in k for k in par_kernels.values()):
            kernels.update(par_kernels)
            # The twin only calls kernels; prange lives in them.
            source += "\n\n" + _DECORATOR + "\n" + parallel
    refs = "".join(f"{name} = kernel_registry[{name!r}]\n" for name in sorted(kernels))
    source = source.replace(_KERNEL_IMPORT_MARK, _KERNEL_IMPORT_MARK + _optional_imports(source) + refs)
    lowered = Lowered(source, fn_name, closed.consts, closed.out_avals, closed.in_avals)
    lowered.kernels = kernels
    return lowered


def load_kernels(kernels):
    """Compile (or load from the disk cache) each kernel once per process."""
    from . import diskcache
    for name, src in kernels.items():
        if name not in kernel_registry:
            module = diskcache.load_module(_KERNEL_HEADER + src, "kernel")
            kernel_registry[name] = getattr(module, name)


kernel_registry = {}


def compile_jaxpr(closed, name="fn"):
    """The LLVM backend's executable when it covers the program, else this module's Numba
    lowering (control flow, gathers, sorting, linalg, FFT, random bits, complex)."""
    from . import complex_parts, cpu_llvm, low_precision
    from .unsupported import Unsupported
    if low_precision.uses_low_precision(closed.jaxpr):
        # bfloat16 becomes uint16 storage and float32 arithmetic before any backend sees it.
        try:
            stored = low_precision.to_storage_form(closed)
        except NoLoweringError as err:
            warnings.warn(err.warning(name), stacklevel=3)
            return FallbackExecutable(closed)
        return low_precision.StorageExecutable(closed, compile_jaxpr(stored, name))
    if complex_parts.uses_complex(closed.jaxpr):
        # Complex values become pairs of real arrays; what the rewrite cannot express stays
        # on this module's complex lowering below.
        try:
            split = complex_parts.to_parts_form(closed)
        except NoLoweringError:
            split = None
        if split is not None:
            return complex_parts.PartsExecutable(closed, compile_jaxpr(split, name))
    try:
        return cpu_llvm.compile_program(closed, name)
    except Unsupported:
        pass
    try:
        lowered = lower_jaxpr(closed, name)
    except NotImplementedError as err:
        if not isinstance(err, NoLoweringError):
            err = NoLoweringError("(unknown)", str(err))
        warnings.warn(err.warning(name), stacklevel=3)
        return FallbackExecutable(closed)
    return Executable(lowered)


class Executable:
    def __init__(self, lowered):
        self.lowered = lowered
        self.source = lowered.text
        self._fn = None
        self._par = None
        self._has_par = f"def {lowered.fn_name}_par(" in lowered.source
        self._consts = [_c_contiguous(getattr(c, "_value", c)) for c in lowered.consts]
        self._out = [(a.weak_type, a.dtype) for a in lowered.out_avals]
        # Programs that make large results from small inputs (random samplers, iotas) are
        # worth the parallel twin too.
        self._out_size = max([a.size for a in lowered.out_avals], default=0)

    def _module(self):
        program = self.lowered.source
        key = hashlib.sha256(program.encode()).hexdigest()
        module = _compile_cache.get(key)
        if module is None:
            load_kernels(self.lowered.kernels)
            from . import diskcache
            module = _compile_cache[key] = diskcache.load_module(program, "prog")
        return module

    def ensure_compiled(self):
        if self._fn is None:
            self._fn = getattr(self._module(), self.lowered.fn_name)
        return self._fn

    def _parallel_fn(self):
        if self._par is None:
            from numjax.config import config
            if config.numjax_num_threads:
                import numba
                numba.set_num_threads(config.numjax_num_threads)
            self._par = getattr(self._module(), self.lowered.fn_name + "_par")
        return self._par

    def call_arrays(self, vals):
        fn = self._fn or self.ensure_compiled()
        for k, v in enumerate(vals):
            if type(v) is not np.ndarray or not v.flags.c_contiguous:
                vals = [_c_contiguous(getattr(v, "_value", v)) for v in vals]
                break
        if self._has_par and _parallel_worth_it(vals, self._out_size):
            fn = self._par or self._parallel_fn()
        outs = fn(*self._consts, *vals) if self._consts else fn(*vals)
        return [Array(o, w) for o, (w, _) in zip(outs, self._out)]


    def specialize(self, vals):
        """The compiled entry point for exactly these argument types, skipping Numba's
        per-call type dispatch; None when it cannot be used (e.g. array constants)."""
        if self._consts or any(type(v) is not np.ndarray or not v.flags.c_contiguous for v in vals):
            return None
        fn = (self._par or self._parallel_fn()) if self._has_par and _parallel_worth_it(vals, self._out_size) else self._fn
        if fn is None:
            return None
        import numba
        sig = tuple(numba.typeof(v) for v in vals)
        cres = fn.overloads.get(sig)
        return None if cres is None else cres.entry_point


def _parallel_worth_it(args, out_size=0):
    from numjax.config import config
    threshold = config.numjax_parallel_threshold
    return threshold > 0 and (out_size >= threshold or any(a.size >= threshold for a in args))


class FallbackExecutable:
    """Op-by-op evaluation for programs with a primitive that has no Numba lowering."""

    def __init__(self, closed):
        self.closed = closed
        self.source = "# no Numba lowering; evaluated op by op\n" + str(closed)

    def ensure_compiled(self):
        return None

    def specialize(self, vals):
        return None

    def call_arrays(self, vals):
        return eval_jaxpr(self.closed.jaxpr, self.closed.consts, *vals)

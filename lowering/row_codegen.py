"""Loops of a row-fused region (``row_fusion``): one loop over the rows, and inside it one
pass over the row per reduction level, with the row values computed between passes.

    for i0 in numba.prange(d0):          # rows (chunked across threads)
        pass 0: for i1 in range(d1): ...  # e.g. the row maximum
        row values                         # m = max(rowmax, -inf)
        pass 1: for i1 in range(d1): ...  # e = exp(x - m), row sum; e kept in a row buffer
        row values                         # s
        pass 2: for i1 in range(d1): ...  # out = e / s

Each pass is emitted by ``RegionCodegen``'s innermost-loop emitters, so reductions keep
numjax's summation order (``numjax/lax/_summation.py``) bit for bit. A full-size value
computed in one pass and read in a later one is kept in a row buffer (private to each chunk of
rows, and small enough to stay in cache); inputs are simply read again.
"""
from numjax.jaxpr import Literal

from . import scalar
from .compile import MONOIDS, RegionCodegen, identity_source

# argmax/argmin over a row: the row's maximum (minimum) in a vectorized pass, then a scan for
# the first position holding it; a NaN maximum means the first NaN, as XLA's argmax picks.
_ARG_EXTREMUM = {"argmax": "max", "argmin": "min"}


def arg_reduction_region(region):
    """Whether ``region`` has an argmax/argmin over its last axis that ``RowRegionCodegen``
    writes as two passes (every reduction of the region is over its last axis)."""
    reds = [e for e in region.eqns if e.primitive.reduction is not None]
    last = (len(region.shape) - 1,)
    return (len(region.shape) >= 2 and any(e.primitive.reduction in _ARG_EXTREMUM for e in reds)
            and all(tuple(e.params["axes"]) == last for e in reds))


class RowRegionCodegen(RegionCodegen):
    def __init__(self, gen, region):
        super().__init__(gen, region)
        self.last = self.rank - 1
        self.loads = {}          # broadcast outvar -> eqn, generated where it is read
        self.row_local = {}      # row value -> its scalar source in the row loop
        self.buffers = {}        # full-size value read in a later pass -> its row buffer
        self.searches = []       # per pass: (arg reduction, extremum accumulator, eqn pass)

    # -- passes
    def _passes(self):
        """Pass of each equation: reductions end a pass; their results are row values."""
        level, eqn_pass = {}, []
        for eqn in self.region.eqns:
            ins = [level.get(v, 0) for v in eqn.invars if type(v) is not Literal]
            p = max(ins, default=0)
            eqn_pass.append(p)
            for v in eqn.outvars:
                level[v] = p + 1 if eqn.primitive.reduction is not None else p
        return eqn_pass

    def _is_row(self, eqn):
        return eqn.outvars[0] in self.region.row_vars

    def _cross_pass_values(self, eqn_pass):
        defined_in = {}
        for eqn, p in zip(self.region.eqns, eqn_pass):
            if eqn.primitive.is_load or self._is_row(eqn):
                continue
            for v in eqn.outvars:
                if v in self.region.defined:
                    defined_in[v] = p
        later = set()
        for eqn, p in zip(self.region.eqns, eqn_pass):
            if self._is_row(eqn):
                continue
            srcs = list(eqn.invars)
            for v in srcs:
                if type(v) is not Literal and v in defined_in and defined_in[v] < p:
                    later.add(v)
        return [v for v in defined_in if v in later]

    # -- reads
    def read(self, v, body):
        if type(v) is Literal:
            return self.gen.name(v)
        if v in self.local:
            return self.local[v]
        if v in self.row_local:
            return self.row_local[v]
        load = self.loads.get(v)
        if load is not None:
            src = load.invars[0]
            if type(src) is Literal or src.aval.shape == () or src in self.row_local:
                self.local[v] = self.read(src, body)
                return self.local[v]
            self._eqn(load, body, {}, {})
            return self.local[v]
        buf = self.buffers.get(v)
        if buf is not None:
            t = self.gen.tmp()
            body.append(f"{t} = {buf}[i{self.last}]")
            self.local[v] = t
            return t
        return super().read(v, body)

    def _row_index(self, shape):
        parts = [f"i{d}" for d in range(self.last)]
        if len(shape) == self.rank:
            parts.append("0")
        return ", ".join(parts) if parts else "()"

    # -- code
    def generate(self):
        gen, region = self.gen, self.region
        eqn_pass = self._eqn_pass = self._passes()
        n_passes = 1 + max((p for e, p in zip(region.eqns, eqn_pass) if not self._is_row(e)), default=0)
        for v in region.materialize:
            shape, typ = gen.shape_src(v.aval.shape), scalar.np_type(v.aval.dtype)
            gen.emit(f"{gen.name(v)} = np.empty({shape}, {typ})")
        cross = self._cross_pass_values(eqn_pass)
        for v in cross:
            self.buffers[v] = gen.tmp("rowbuf")
        for eqn in region.eqns:
            if eqn.primitive.is_load and len(eqn.invars) > 0:
                self.loads[eqn.outvars[0]] = eqn
        plans = []   # per pass: (row lines before the loop, state for the loop)
        for p in range(n_passes + 1):
            row_lines = self._row_statements(p, eqn_pass)
            if p == n_passes:
                plans.append((row_lines, None))
                break
            plans.append((row_lines, self._pass_body(p, eqn_pass, cross)))
        self._emit(plans, cross)

    def _row_statements(self, p, eqn_pass):
        lines = []
        for eqn, q in zip(self.region.eqns, eqn_pass):
            if q != p or not self._is_row(eqn):
                continue
            out = eqn.outvars[0]
            args = [self.read(v, lines) for v in eqn.invars]
            t = self.gen.tmp("r")
            dtypes = [v.aval.dtype for v in eqn.invars]
            lines.append(f"{t} = " + scalar.expression(eqn.primitive, args, dtypes, out.aval.dtype, eqn.params))
            self.row_local[out] = t
            if out in self.region.materialize:
                lines.append(f"{self.gen.name(out)}[{self._row_index(out.aval.shape)}] = {t}")
        return lines

    def _pass_body(self, p, eqn_pass, cross):
        self.local, self.accs, self.acc_inputs, self._acc_depth = {}, [], {}, {}
        self.unrollable = True
        body, inits, finals = [], {}, {}
        for eqn, q in zip(self.region.eqns, eqn_pass):
            if q != p or self._is_row(eqn) or (eqn.primitive.is_load and len(eqn.invars) > 0):
                continue
            if eqn.primitive.reduction in _ARG_EXTREMUM:
                self._extremum(eqn, body, inits)
                continue
            self._eqn(eqn, body, inits, finals)
            if eqn.primitive.reduction is not None:
                acc = self.accs[-1][0]
                self.row_local[eqn.outvars[0]] = acc
                continue
            for v in eqn.outvars:
                if v in cross:
                    body.append(f"{self.buffers[v]}[i{self.last}] = {self.local[v]}")
                if v in self.region.materialize:
                    body.append(f"{self.gen.name(v)}[{self.idx()}] = {self.local[v]}")
        searches = [(e, acc, p) for e, acc in self.searches]
        self.searches = []
        return body, inits, finals, self.accs, self.acc_inputs, self._acc_depth, self.unrollable, searches

    def _extremum(self, eqn, body, inits):
        """The accumulator of the row maximum (minimum) an arg reduction searches for."""
        src = eqn.invars[0]
        dt = src.aval.dtype
        monoid = _ARG_EXTREMUM[eqn.primitive.reduction]
        val = self.read(src, body)
        acc = self.gen.tmp("acc")
        init = identity_source(monoid, dt)
        combine = MONOIDS[monoid].combine
        inits.setdefault(self.last, []).append(f"{acc} = {init}")
        self._acc_depth[acc] = self.last
        body.append(f"{acc} = {combine(acc, val, dt)}")
        self.accs.append((acc, init, combine, dt))
        self.acc_inputs[acc] = val
        self.searches.append((eqn, acc))
        out = eqn.outvars[0]
        shape, typ = self.gen.shape_src(out.aval.shape), scalar.np_type(out.aval.dtype)
        self.gen.emit(f"{self.gen.name(out)} = np.empty({shape}, {typ})")

    def _search(self, eqn, acc, p, eqn_pass, depth):
        """The first position of the row holding ``acc`` (or the first NaN when it is NaN)."""
        gen = self.gen
        src, var = eqn.invars[0], f"i{self.last}"
        lines = self._recompute(src, p, eqn_pass)
        val = self.read(src, lines)
        found, pos = gen.tmp("found"), gen.tmp("pos")
        gen.emit(f"{found} = False", depth)
        gen.emit(f"{pos} = 0", depth)
        gen.emit(f"{var} = 0", depth)
        gen.emit(f"while not {found} and {var} < {gen.dim(self.shape[-1])}:", depth)
        for line in lines:
            gen.emit(line, depth + 1)
        nan = f" or ({acc} != {acc} and {val} != {val})" if src.aval.dtype.kind == "f" else ""
        gen.emit(f"if {val} == {acc}{nan}:", depth + 1)
        gen.emit(f"{found} = True", depth + 2)
        gen.emit(f"{pos} = {var}", depth + 2)
        gen.emit(f"{var} = {var} + 1", depth + 1)
        out = eqn.outvars[0]
        gen.emit(f"{gen.name(out)}[{self._row_index(out.aval.shape)}] = "
                 f"{scalar.np_type(out.aval.dtype)}({pos})", depth)

    def _recompute(self, target, p, eqn_pass):
        """Lines computing ``target`` again (for a search loop) from the pass's equations."""
        self.local = {}
        needed, lines = {target}, []
        chain = []
        for eqn, q in reversed(list(zip(self.region.eqns, eqn_pass))):
            if q != p or self._is_row(eqn) or eqn.primitive.reduction is not None or eqn.primitive.is_load:
                continue
            if any(v in needed for v in eqn.outvars):
                chain.append(eqn)
                needed.update(v for v in eqn.invars if type(v) is not Literal)
        for eqn in reversed(chain):
            self._eqn(eqn, lines, {}, {})
        return lines

    def _emit(self, plans, cross):
        gen = self.gen
        bound = gen.dim(self.shape[-1])
        depth = 1
        for d in range(self.last):
            rng = "numba.prange" if d == 0 and gen.parallel else "range"
            gen.emit(f"for i{d} in {rng}({gen.dim(self.shape[d])}):", depth)
            depth += 1
        # Row buffers are allocated inside the row loop so each parallel iteration has its own
        # (the LLVM backend allocates temporaries once per call, at the kernel's entry).
        for v, buf in self.buffers.items():
            gen.emit(f"{buf} = np.empty({bound}, {scalar.np_type(v.aval.dtype)})", depth)
        for row_lines, state in plans:
            for line in row_lines:
                gen.emit(line, depth)
            if state is not None:
                self._emit_pass(state, bound, depth)

    def _emit_pass(self, state, bound, depth):
        gen = self.gen
        body, inits, finals, accs, acc_inputs, acc_depth, unrollable, searches = state
        self.accs, self.acc_inputs, self._acc_depth, self.unrollable = accs, acc_inputs, acc_depth, unrollable
        loop = (f"i{self.last}", bound)
        for line in inits.get(self.last, []):
            gen.emit(line, depth)
        if not self.accs:
            gen.emit(f"for {loop[0]} in range({bound}):", depth)
            for line in body:
                gen.emit(line, depth + 1)
        elif self._two_phase(body):
            kept = {acc: next((line for line in body if line.split("[")[0] in self.buffers.values()
                               and line.endswith(f"[{loop[0]}] = {self.acc_inputs[acc]}")), None)
                    for acc, *_ in self.accs}
            bufs = {}
            if all(kept.values()):
                # Values kept for a later pass and summed here: their row buffers are the
                # two-phase buffers (otherwise the blocked form, with no buffer).
                body = [line for line in body if line not in kept.values()]
                bufs = {acc: line.split("[")[0] for acc, line in kept.items()}
            self._emit_two_phase(loop, body, depth, bufs)
        elif self._unroll_worth_it(body):
            self._emit_unrolled_innermost(loop, body, depth)
        else:
            self._emit_lane_loop(loop, body, depth)
        for line in finals.get(self.last, []):
            gen.emit(line, depth)
        for eqn, acc, p in searches:
            self._search(eqn, acc, p, self._eqn_pass, depth)

"""Reductions over a leading axis (softmax, logsumexp, sums over axis 0) in blocks of rows.

Reducing the leading axis of a (rows, columns) array and keeping the last one, every output
element depends on every row, so the loop over the rows cannot be cut between threads without
changing the order of the additions.  numjax's summation order (``numjax/lax/_summation.py``)
therefore cuts the rows into blocks of ``leading_block_rows(rows)``: each block is reduced from
the identity, then the blocks' results are combined in order.  Here that order is written two
ways:

* split (the drivers of parallel programs): a *partials* kernel whose parallel loop runs over the
  blocks, each block reducing its rows into its own row of a partials array (the rows stream
  through memory in order, one contiguous stretch per thread), then a small *combine* kernel
  folding the partials, block by block, into the results::

      for b in numba.prange(nb):                 # blocks (chunked across threads)
          p[b, :] = identity
          for i0 in range(b * rb, min(b * rb + rb, d0)):
              for i1 in range(d1): p[b, i1] = combine(p[b, i1], value(i0, i1))

* serial (kernels inside compiled loops, serial programs): one kernel, the blocks in order, each
  block reduced into a temporary and then combined into the result.

On 2 cores, 4096x1024 float32 over axis 0: a sum 0.65 -> 0.5 ms, softmax 3.5 -> 1.9 ms (with
``buffer_reuse``), logsumexp 2.3 -> 1.4 ms.  Splitting the columns between threads instead
keeps the sequential order but measured slower than one thread (a Numba sketch of the sum:
1.5 ms on 2 threads, each reading half of every row, against 0.57 ms on one).
"""

from numjax.lax._summation import LEADING_BLOCKS, LEADING_MIN_ROWS

from . import scalar
from .compile import MONOIDS, KernelGen, RegionCodegen, identity_source, named_kernel


def blocked_region(region):
    """Whether ``region`` reduces its leading axis in blocks: every reduction is a monoid's (no
    argmax/argmin) over axes including 0 and not the last one, with more rows than one block."""
    shape = region.shape
    reds = [e for e in region.eqns if e.primitive.reduction is not None]
    if len(shape) < 2 or shape[-1] <= 1 or shape[0] <= LEADING_MIN_ROWS or not reds or region.multipass:
        return False
    last = len(shape) - 1
    return all(e.primitive.reduction in MONOIDS and e.primitive.reduction not in ("argmax", "argmin")
               and 0 in e.params["axes"] and last not in e.params["axes"] for e in reds)


def block_sources(rows):
    """Sources of the rows per block and the number of blocks for ``rows`` rows (a source)."""
    rb = f"max({LEADING_MIN_ROWS}, ({rows} + {LEADING_BLOCKS - 1}) // {LEADING_BLOCKS})"
    return rb, f"({rows} + {{rb}} - 1) // {{rb}}"


class LeadingCodegen(RegionCodegen):
    """The loops of a blocked region: with ``partials`` ({result var: output name}) the partials
    kernel of the split form (taking ``nb`` and ``rb`` as parameters), else the serial form."""

    def __init__(self, gen, region, partials=None):
        super().__init__(gen, region)
        self.partials = partials
        self.block = gen.tmp("blk")
        self.blocks = []      # (result, block accumulator, kept axes, identity, combine, dtype)

    def generate(self):
        gen, region = self.gen, self.region
        body = []
        for v in region.materialize:
            gen.emit(f"{gen.name(v)} = np.empty({gen.shape_src(self.shape)}, {scalar.np_type(v.aval.dtype)})")
        for eqn in region.eqns:
            self._eqn(eqn, body, {}, {})
        for v in region.materialize:
            body.append(f"{gen.name(v)}[{self.idx()}] = {self.local[v]}")
        self._emit_blocks(body)

    def _reduction(self, eqn, body, inits, finals):
        src, out = eqn.invars[0], eqn.outvars[0]
        dt, monoid = src.aval.dtype, eqn.primitive.reduction
        kept = [d for d in range(self.rank) if d not in eqn.params["axes"]]
        val = self.read(src, body)
        shape, typ = self.gen.shape_src(out.aval.shape), scalar.np_type(dt)
        init, combine = identity_source(monoid, dt), MONOIDS[monoid].combine
        k = ", ".join(f"i{d}" for d in kept)
        if self.partials is None:
            acc = self.gen.tmp("bacc")
            self.gen.emit(f"{acc} = np.empty({shape}, {typ})")
            self.gen.emit(f"{self.gen.name(out)} = np.full({shape}, {init}, {typ})")
        else:
            acc, k = self.partials[out], f"{self.block}, {k}"
            self.gen.emit(f"{acc} = np.empty({_blocks_shape(self.gen, 'nb', out)}, {typ})")
        body.append(f"{acc}[{k}] = {combine(f'{acc}[{k}]', val, dt)}")
        self.blocks.append((out, acc, kept, init, combine, dt))

    def _kept_loops(self, kept, depth):
        for d in kept:
            self.gen.emit(f"for i{d} in range({self.gen.dim(self.shape[d])}):", depth)
            depth += 1
        return depth

    def _emit_blocks(self, body):
        gen, b = self.gen, self.block
        if self.partials is None:
            nb, rb = gen.tmp("nb"), gen.tmp("rb")
            rb_src, nb_src = block_sources(gen.dim(self.shape[0]))
            gen.emit(f"{rb} = {rb_src}")
            gen.emit(f"{nb} = {nb_src.format(rb=rb)}")
        else:
            nb, rb = "nb", "rb"
        rng = "numba.prange" if self.partials is not None and gen.parallel else "range"
        gen.emit(f"for {b} in {rng}({nb}):")
        first, end = gen.tmp("r"), gen.tmp("r")
        gen.emit(f"{first} = {b} * {rb}", 2)
        gen.emit(f"{end} = min({first} + {rb}, {gen.dim(self.shape[0])})", 2)
        for _, acc, kept, init, _, _ in self.blocks:
            k = ", ".join([b] * (self.partials is not None) + [f"i{d}" for d in kept])
            gen.emit(f"{acc}[{k}] = {init}", self._kept_loops(kept, 2))
        depth = 2
        for d in range(self.rank):
            bounds = f"{first}, {end}" if d == 0 else gen.dim(self.shape[d])
            gen.emit(f"for i{d} in range({bounds}):", depth)
            depth += 1
        for line in body:
            gen.emit(line, depth)
        if self.partials is None:
            for out, acc, kept, _, combine, dt in self.blocks:
                res, k = gen.name(out), ", ".join(f"i{d}" for d in kept)
                gen.emit(f"{res}[{k}] = {combine(f'{res}[{k}]', f'{acc}[{k}]', dt)}", self._kept_loops(kept, 2))


class PartialsKernelGen(KernelGen):
    """Naming of the partials kernel: the region's dims, then ``nb`` and ``rb``, then its inputs;
    its outputs are the materialized values, then one partials array per reduction."""

    def __init__(self, region, parallel):
        super().__init__(region, parallel)
        self.outputs = list(region.materialize)
        self.partials = {r.result: f"o{len(self.outputs) + k}" for k, r in enumerate(region.reductions)}
        self.out_names.update(self.partials)

    def source(self):
        params = [self.dim_names[d] for d in self.dims] + ["nb", "rb"] + [self.in_names[v] for v in self.inputs]
        outs = [self.out_names[v] for v in self.outputs] + list(self.partials.values())
        return named_kernel(params, self.lines, outs)


def combine_kernel(region):
    """(name, source, dim sizes) of the kernel folding the partials into the results:
    ``k(nb, dims..., partials...) -> results``, block after block in order."""
    results = [r.result for r in region.reductions]
    sizes = []
    for v in results:
        sizes.extend(s for s in v.aval.shape if s not in sizes)
    names = {s: f"d{k}" for k, s in enumerate(sizes)}
    lines = []
    for k, r in enumerate(region.reductions):
        shape = r.result.aval.shape
        dt = r.operand.aval.dtype
        idx = ", ".join(f"j{d}" for d in range(len(shape)))
        lines.append(f"    o{k} = np.empty(({''.join(names[s] + ', ' for s in shape)}), {scalar.np_type(dt)})")
        depth = 1
        for d, s in enumerate(shape):
            lines.append("    " * depth + f"for j{d} in range({names[s]}):")
            depth += 1
        lines.append("    " * depth + f"o{k}[{idx}] = x{k}[0, {idx}]")
        lines.append("    for b in range(1, nb):")
        depth = 2
        for d, s in enumerate(shape):
            lines.append("    " * depth + f"for j{d} in range({names[s]}):")
            depth += 1
        step = MONOIDS[r.primitive.reduction].combine(f"o{k}[{idx}]", f"x{k}[b, {idx}]", dt)
        lines.append("    " * depth + f"o{k}[{idx}] = {step}")
    params = ["nb"] + [names[s] for s in sizes] + [f"x{k}" for k in range(len(results))]
    name, src = named_kernel(params, lines, [f"o{k}" for k in range(len(results))])
    return name, src, sizes, names


def partials_kernel(region, parallel):
    """(kernel naming, name, source) of the partials kernel of ``region``."""
    kg = PartialsKernelGen(region, parallel)
    LeadingCodegen(kg, region, kg.partials).generate()
    name, src = kg.source()
    return kg, name, src


def emit_blocks_count(gen, region):
    """Driver lines computing the rows per block and the blocks; returns their names."""
    nb, rb = gen.tmp("nb"), gen.tmp("rb")
    rb_src, nb_src = block_sources(gen.dim(region.shape[0]))
    gen.emit(f"{rb} = {rb_src}")
    gen.emit(f"{nb} = {nb_src.format(rb=rb)}")
    return nb, rb


def numba_region(gen, region):
    """The Numba backend's parallel program: the split form as two kernel calls."""
    kg, pname, psrc = partials_kernel(region, gen.parallel)
    cname, csrc, sizes, _ = combine_kernel(region)
    gen.kernels[pname], gen.kernels[cname] = psrc, csrc
    nb, rb = emit_blocks_count(gen, region)
    parts = [gen.tmp("part") for _ in region.reductions]
    outs = [gen.name(v) for v in kg.outputs] + parts
    args = [gen.dim(d) for d in kg.dims] + [nb, rb] + [gen.name(v) for v in kg.inputs]
    gen.emit(f"{', '.join(outs)}, = {pname}({', '.join(args)})")
    results = [gen.name(r.result) for r in region.reductions]
    gen.emit(f"{', '.join(results)}, = {cname}({', '.join([nb] + [gen.dim(s) for s in sizes] + parts)})")


def _array_param(v, dim_names):
    shape = tuple(dim_names.get(s, int(s)) for s in v.aval.shape)
    return ("array", v.aval.dtype.name, shape)


def llvm_region(driver, region):
    """The LLVM backend's driver: the partials kernel run in chunks of blocks, then the
    combine kernel, with the partials in driver-allocated buffers."""
    kg, pname, psrc = partials_kernel(region, True)
    cname, csrc, sizes, cnames = combine_kernel(region)
    dn = kg.dim_names
    params = [("dim",)] * (len(kg.dims) + 2)
    params += [("scalar", v.aval.dtype.name) if v.aval.shape == () else _array_param(v, dn) for v in kg.inputs]
    outputs = [_array_param(v, dn)[1:] for v in kg.outputs]
    outputs += [(r.operand.aval.dtype.name, ("nb",) + _array_param(r.result, dn)[2]) for r in region.reductions]
    pname = driver.register_kernel(pname, _strip_decorator(psrc), params, outputs, chunked=True)
    cparams = [("dim",)] * (1 + len(sizes))
    cparams += [(p[0], p[1], ("nb",) + p[2]) for p in (_array_param(r.result, cnames) for r in region.reductions)]
    couts = [(r.operand.aval.dtype.name, _array_param(r.result, cnames)[2]) for r in region.reductions]
    cname = driver.register_kernel(cname, _strip_decorator(csrc), cparams, couts, chunked=False)
    nb, rb = emit_blocks_count(driver, region)
    mats = driver._buffers(kg.outputs)
    parts = [driver.tmp("part") for _ in region.reductions]
    for p, r in zip(parts, region.reductions):
        driver.emit(f"{p} = np.empty({_blocks_shape(driver, nb, r.result)}, {scalar.np_type(r.operand.aval.dtype)})")
    args = [driver.dim(d) for d in kg.dims] + [nb, rb] + [driver._scalar_arg(v) for v in kg.inputs] + mats + parts
    size = " * ".join(driver.dim(s) for s in region.shape)
    driver.emit(f"run_chunked({pname}, {nb}, {size}, ({', '.join(args)},))")
    results = [r.result for r in region.reductions]
    outs = driver._buffers(results)
    driver.emit(f"{cname}(0, 1, {', '.join([nb] + [driver.dim(s) for s in sizes] + parts + outs)})")
    driver._bind_outputs(mats, kg.outputs)
    driver._bind_outputs(outs, results)


def _blocks_shape(gen, nb, result):
    """Source of the shape of ``result``'s partials: one row per block."""
    return f"({nb}, {''.join(gen.dim(s) + ', ' for s in result.aval.shape)})"


def _strip_decorator(src):
    return "\n".join(line for line in src.splitlines() if not line.startswith("@"))

"""Planning a jaxpr into regions: backend-neutral (it imports no compiler), so every backend
consumes the same plan.

A *region* is one loop nest over an iteration shape: a maximal group of
elementwise equations (with broadcasts and iotas as index-mapped loads) plus
the reductions they feed, computed with no intermediate arrays. Everything
else is a *node*: one non-fusible equation (dot_general, reshape, ...).
Rank-0 elementwise equations are plain scalar statements. What fuses is read
from the primitives' properties (``elementwise``, ``reduction``, ``is_load``).

Rules: an elementwise equation joins the region of its same-shape pending
inputs; a region is *sealed* as soon as anything outside it reads one of its
results, and a sealed region takes no new equations (it must run before
that reader). A pending value read from outside its region is materialized
as an array by that region. Regions are placed at their last join, which is
safe because nothing outside an unsealed region reads it yet.

A row reduction and the elementwise work reading its result over the same rows can share
one region that makes several passes over each row (``row_fusion``: softmax, layer norm).

Once planned, each region carries its *signature*: ``inputs`` (values read from
outside, in first-use order), ``outputs`` (materialized values, then reduction
results), ``dims`` (the distinct sizes of the output and iteration shapes, each
with where an input's shape holds it), ``reductions`` and ``shape``. A backend
generates the region's code from these alone.
"""
from typing import NamedTuple

from numjax.core import Primitive
from numjax.jaxpr import Literal

from . import row_fusion


class Dim(NamedTuple):
    """A size a region's loops or outputs use; ``source`` is ``(input index, axis)`` of the
    first input whose shape holds it, or None when no input does (a constant)."""
    size: int
    source: tuple


class Reduction(NamedTuple):
    """One reduction of a region: ``primitive.reduction`` names its monoid."""
    primitive: Primitive
    axes: tuple
    operand: object
    result: object


class Region:
    def __init__(self, shape):
        self.shape = shape
        self.eqns = []
        self.sealed = False
        self.materialize = []     # vars stored to arrays
        self.defined = set()      # vars computed inside (pending values)
        self.results = set()      # reduction outputs
        # Per-row values (see ``row_fusion``): elementwise results over the rows of a region
        # whose reductions all run over its last axis, computed between passes over each row.
        self.row_vars = set()
        self.multipass = False    # some equation reads a reduction result of this region
        self.inputs = self.outputs = self.dims = self.reductions = None   # the signature

    def __repr__(self):
        return f"Region({self.shape}, {[e.primitive.name for e in self.eqns]})"

    def compute_signature(self):
        self.reductions = [Reduction(e.primitive, tuple(e.params["axes"]), e.invars[0], e.outvars[0])
                           for e in self.eqns if e.primitive.reduction is not None]
        self.inputs = self._inputs()
        self.outputs = list(self.materialize) + [r.result for r in self.reductions]
        self.dims = self._dims()

    def _inputs(self):
        inputs, internal = [], set()
        for eqn in self.eqns:
            for v in eqn.invars:
                if type(v) is not Literal and v not in internal and v not in inputs:
                    inputs.append(v)
            internal.update(eqn.outvars)
        return inputs

    def _dims(self):
        sizes = []
        for shape in [v.aval.shape for v in self.outputs] + [self.shape]:
            sizes.extend(s for s in shape if s not in sizes)
        return [Dim(s, self._dim_source(s)) for s in sizes]

    def _dim_source(self, size):
        for k, v in enumerate(self.inputs):
            if size in v.aval.shape:
                return k, v.aval.shape.index(size)
        return None


class Scalar:
    def __init__(self, eqn):
        self.eqn = eqn


class Node:
    def __init__(self, eqn):
        self.eqn = eqn


def is_fusible(eqn):
    prim = eqn.primitive
    return prim.elementwise or prim.is_load or prim.reduction is not None


def _folds_into_readers(eqn):
    # A load of an operand (a broadcast) is read through an index map inside each reader's
    # loop; a load without operands (an iota) is computed in place like an elementwise op.
    return eqn.primitive.is_load and len(eqn.invars) > 0


class Planner:
    def __init__(self, scalar_regions=False, row_regions=True):
        # True: rank-0 elementwise chains fuse into rank-0 regions (one compiled kernel)
        # instead of scalar statements in the program (backends whose programs are not
        # compiled code).
        self.scalar_regions = scalar_regions
        # False: no multi-pass row regions (``row_fusion``), for backends whose code
        # generators do not write them (CUDA's one-thread-per-element kernels).
        self.row_regions = row_regions
        self.items = []
        self.region_of = {}       # var -> region defining it (pending or result)
        self.lazy = {}            # broadcast outvar -> eqn, folded into its readers' loads

    def plan(self, jaxpr):
        for eqn in jaxpr.eqns:
            prim = eqn.primitive
            if not is_fusible(eqn):
                self._use_outside(eqn.invars)
                self.items.append(Node(eqn))
            elif _folds_into_readers(eqn):
                self.lazy[eqn.outvars[0]] = eqn
            elif prim.reduction is not None:
                self._add_reduction(eqn)
            elif eqn.outvars[0].aval.shape == () and not prim.is_load and not self.scalar_regions:
                self._use_outside(eqn.invars)
                self.items.append(Scalar(eqn))
            elif self.row_regions and row_fusion.join_row_region(self, eqn):
                pass
            else:
                self._add_elementwise(eqn)
        self._use_outside(jaxpr.outvars)
        for item in self.items:
            if isinstance(item, Region):
                item.compute_signature()
        return self.items

    def _use_outside(self, vars_):
        for v in vars_:
            if type(v) is Literal:
                continue
            if v in self.lazy:
                self._materialize_lazy(v)
                continue
            region = self.region_of.get(v)
            if region is not None:
                region.sealed = True
                if v in region.defined and v not in region.materialize:
                    region.materialize.append(v)

    def _materialize_lazy(self, v):
        eqn = self.lazy.pop(v)
        self._use_outside(eqn.invars)
        region = Region(v.aval.shape)
        region.eqns.append(eqn)
        region.defined.add(v)
        self.region_of[v] = region
        self._place(region)
        self._use_outside([v])

    def _resolve(self, eqn):
        """This eqn's lazy broadcast inputs as loads, and the vars they really read."""
        loads, reads = [], []
        for v in eqn.invars:
            if type(v) is not Literal and v in self.lazy:
                load = self.lazy[v]
                for src in load.invars:
                    if type(src) is not Literal and src in self.lazy:
                        self._materialize_lazy(src)   # a broadcast of a broadcast reads an array
                loads.append(load)
                reads.extend(x for x in load.invars if type(x) is not Literal)
            elif type(v) is not Literal:
                reads.append(v)
        return loads, reads

    def _candidate(self, shape, reads):
        """The unsealed region of this shape the eqn can join: the one holding its pending
        inputs, else the latest one; never one whose reduction results it reads."""
        pending = {self.region_of[v] for v in reads
                   if v in self.region_of and v in self.region_of[v].defined
                   and not self.region_of[v].sealed and v.aval.shape == shape}
        if len(pending) == 1:
            region = pending.pop()
            return None if region.shape != shape or any(v in region.results for v in reads) else region
        if pending:
            return None
        for item in reversed(self.items):
            if isinstance(item, Region) and not item.sealed and item.shape == shape:
                return None if any(v in item.results for v in reads) else item
        return None

    def _add_elementwise(self, eqn):
        shape = eqn.outvars[0].aval.shape
        loads, reads = self._resolve(eqn)
        region = self._candidate(shape, reads)
        outside = [v for v in reads if v in self.region_of
                   and (self.region_of[v] is not region or v not in region.defined)]
        self._use_outside(outside)
        if region is None or region.sealed:
            region = Region(shape)
        self._place(region)
        region.eqns.extend(loads)
        region.eqns.append(eqn)
        for v in eqn.outvars:
            region.defined.add(v)
            self.region_of[v] = region

    def _add_reduction(self, eqn):
        src = eqn.invars[0]
        if src in self.lazy:
            self._materialize_lazy(src)
        region = self.region_of.get(src)
        if region is not None and self.row_regions and not row_fusion.reduction_may_join(region, eqn):
            region = None
        if region is None or region.sealed or src not in region.defined:
            self._use_outside([src])
            region = Region(src.aval.shape)
            region.eqns.append(IdentityLoad(src))
        self._place(region)
        region.eqns.append(eqn)
        for v in eqn.outvars:
            region.results.add(v)
            self.region_of[v] = region

    def _place(self, region):
        if region in self.items:
            self.items.remove(region)
        self.items.append(region)


# A region's plain read of an array computed elsewhere (the input of a lone reduction). Not a
# primitive of any jaxpr, so it has no rules; it is neither an index map nor elementwise.
identity_load_p = Primitive("identity_load")
identity_load_p.elementwise, identity_load_p.reduction, identity_load_p.is_load = False, None, False
identity_load_p.defined_by_numjax = True


class IdentityLoad:
    """The equation ``var = identity_load var`` opening a region that only reduces ``var``."""
    primitive = identity_load_p

    def __init__(self, var):
        self.invars, self.outvars, self.params = [var], [var], {}

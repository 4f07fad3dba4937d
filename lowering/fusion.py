"""Planning a jaxpr into regions (device-agnostic; the CUDA backend reuses it).

A *region* is one loop nest over an iteration shape: a maximal group of
elementwise equations (with broadcasts and iotas as index-mapped loads) plus
the reductions they feed, computed with no intermediate arrays. Everything
else is a *node*: one non-fusible equation (dot_general, reshape, ...).
Rank-0 elementwise equations are plain scalar statements.

Rules: an elementwise equation joins the region of its same-shape pending
inputs; a region is *sealed* as soon as anything outside it reads one of its
results, and a sealed region takes no new equations (it must run before
that reader). A pending value read from outside its region is materialized
as an array by that region. Regions are placed at their last join, which is
safe because nothing outside an unsealed region reads it yet.
"""
from numjax.jaxpr import Literal

from . import scalar

REDUCTIONS = {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or",
              "argmax", "argmin"}
LOADS = {"broadcast_in_dim", "iota"}


class Region:
    def __init__(self, shape):
        self.shape = shape
        self.eqns = []
        self.sealed = False
        self.materialize = []     # vars stored to arrays
        self.defined = set()      # vars computed inside (pending values)
        self.results = set()      # reduction outputs

    def __repr__(self):
        return f"Region({self.shape}, {[e.primitive.name for e in self.eqns]})"


class Scalar:
    def __init__(self, eqn):
        self.eqn = eqn


class Node:
    def __init__(self, eqn):
        self.eqn = eqn


def is_fusible(eqn):
    name = eqn.primitive.name
    return scalar.is_elementwise(name) or name in LOADS or name in REDUCTIONS


class Planner:
    def __init__(self):
        self.items = []
        self.region_of = {}       # var -> region defining it (pending or result)
        self.lazy = {}            # broadcast_in_dim outvar -> eqn, folded into its readers' loads

    def plan(self, jaxpr):
        for eqn in jaxpr.eqns:
            name = eqn.primitive.name
            if not is_fusible(eqn):
                self._use_outside(eqn.invars)
                self.items.append(Node(eqn))
            elif name == "broadcast_in_dim":
                self.lazy[eqn.outvars[0]] = eqn
            elif name in REDUCTIONS:
                self._add_reduction(eqn)
            elif eqn.outvars[0].aval.shape == () and name not in LOADS:
                self._use_outside(eqn.invars)
                self.items.append(Scalar(eqn))
            else:
                self._add_elementwise(eqn)
        self._use_outside(jaxpr.outvars)
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
        if region is None or region.sealed or src not in region.defined:
            self._use_outside([src])
            region = Region(src.aval.shape)
            region.eqns.append(_identity_load(src))
        self._place(region)
        region.eqns.append(eqn)
        for v in eqn.outvars:
            region.results.add(v)
            self.region_of[v] = region

    def _place(self, region):
        if region in self.items:
            self.items.remove(region)
        self.items.append(region)


class _IdentityLoad:
    """A region's plain read of an array computed elsewhere (the input of a lone reduction)."""

    class primitive:
        name = "_load"

    def __init__(self, var):
        self.invars, self.outvars, self.params = [var], [var], {}


def _identity_load(var):
    return _IdentityLoad(var)

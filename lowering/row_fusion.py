"""Row fusion in the planner (backend-neutral): row reductions and what consumes them, as one
region making several passes over each row.

Softmax over the last axis is a row maximum, then ``exp(x - max)`` and its row sum, then a
division by that sum. Planned as separate regions it reads and writes the whole array three
times and materializes the exponentials; planned as one region whose outer loop runs over the
rows, each row is read from memory once and the later passes find it in cache.

A region qualifies when its rank is at least 2 and every reduction in it runs over its last
axis alone. Then:

* an elementwise equation over the *row shape* (the region's shape without its last axis, or
  with the last axis of size 1) whose operands are literals, rank-0 values and the region's
  reduction results or row values joins the region as a *row value*, computed once per row
  between passes (``max(rowmax, -inf)``, ``log(rowsum)``, ``mean / n``);
* an elementwise equation over the region's shape reading a row value (through a broadcast
  along the last axis) joins it too, in a pass after the reductions it depends on.

The pass of each equation follows from its data dependencies; ``row_codegen`` writes the loops.
"""
from numjax.jaxpr import Literal


def _last_axis_only(shape, axes):
    return len(shape) >= 2 and tuple(axes) == (len(shape) - 1,)


def row_shapes(shape):
    """The shapes a row value of a region over ``shape`` has."""
    return (shape[:-1], shape[:-1] + (1,))


def _row_values(region):
    """Reduction results (not argmax/argmin positions) and row values of ``region``."""
    vals = set(region.row_vars)
    vals.update(r.outvars[0] for r in region.eqns
                if r.primitive.reduction is not None and r.primitive.reduction not in ("argmax", "argmin"))
    return vals


def _row_region(region):
    reds = [e for e in region.eqns if e.primitive.reduction is not None]
    return (not region.sealed and len(region.shape) >= 2 and reds
            and all(_last_axis_only(region.shape, e.params["axes"]) for e in reds))


def reduction_may_join(region, eqn):
    """Whether reduction ``eqn`` may join ``region`` (the region of its operand)."""
    if eqn.invars[0] in region.row_vars:
        return False
    return not region.multipass or _last_axis_only(region.shape, eqn.params["axes"])


def _owner(planner, v):
    region = planner.region_of.get(v)
    if region is not None and v in _row_values(region) and _row_region(region):
        return region
    return None


def _operands(planner, eqn):
    """``(loads, [(var, via_load)])`` of ``eqn`` without materializing anything, or None when
    a broadcast reads another broadcast (the ordinary path handles those)."""
    loads, reads = [], []
    for v in eqn.invars:
        if type(v) is Literal:
            continue
        load = planner.lazy.get(v)
        if load is None:
            reads.append((v, None))
            continue
        for src in load.invars:
            if type(src) is not Literal:
                if src in planner.lazy:
                    return None
                reads.append((src, load))
        loads.append(load)
    return loads, reads


def _row_broadcast(load, src, shape):
    """A broadcast of row value ``src`` along the last axis of ``shape``."""
    bdims = tuple(load.params.get("broadcast_dimensions", ()))
    return src.aval.shape in row_shapes(shape) and bdims == tuple(range(len(src.aval.shape)))


def join_row_region(planner, eqn):
    """Adds elementwise ``eqn`` to the row region whose row values it reads; False when it
    reads none (or cannot join), leaving it to the ordinary rules."""
    if not eqn.primitive.elementwise:
        return False
    ops = _operands(planner, eqn)
    if ops is None:
        return False
    loads, reads = ops
    owners = {_owner(planner, v) for v, _ in reads} - {None}
    if len(owners) != 1:
        return False
    region = owners.pop()
    shape = eqn.outvars[0].aval.shape
    rows = _row_values(region)
    if shape == region.shape:
        row_level = False
    elif shape in row_shapes(region.shape):
        row_level = True
    else:
        return False
    for v, load in reads:
        if v in rows:
            if load is not None and not row_level and not _row_broadcast(load, v, region.shape):
                return False
        elif v.aval.shape == ():
            continue
        elif row_level:
            return False    # row values read only literals, scalars and other row values
        elif v in region.defined and (load is not None or v.aval.shape != region.shape):
            return False
    outside = [v for v, _ in reads if v not in region.defined and v not in region.results]
    planner._use_outside(outside)
    planner._place(region)
    region.eqns.extend(loads)
    region.eqns.append(eqn)
    region.multipass = True
    for v in eqn.outvars:
        region.defined.add(v)
        planner.region_of[v] = region
        if row_level:
            region.row_vars.add(v)
    return True

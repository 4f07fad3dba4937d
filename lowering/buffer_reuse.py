"""Elementwise regions writing their result over an input that dies with them.

Softmax over axis 0 ends with ``e / s``: the exponentials ``e`` (an intermediate the driver
allocated) are read by that division alone.  Writing the quotient into ``e``'s own buffer
instead of a new one moves fewer bytes: each cache line of the result is already in cache
when it is written, where a fresh buffer's lines are first read from memory (write-allocate);
a softmax over axis 0 of 4096x1024 float32 took 0.25 ms less (of 2.3 ms) this way.

In place is safe when each element of the input is read only by the iteration that writes the
same element of the result, before it writes it: the region is elementwise (no reduction, no
broadcast of the input), the input has the region's shape and the result's dtype, the program
does not return it, and every other equation reading it has run already, in a region (a node
such as a reshape may have made a view of it that is still read).  The kernel stores such a
result through the input's own parameter (it does not return it): its arrays are declared
``noalias``, and a store through another parameter to the same memory could be ordered before
the input's load.
"""
from numjax.jaxpr import Literal


def readers(jaxpr):
    """{var: [equations reading it]} and the set of vars the program returns."""
    reads = {}
    for eqn in jaxpr.eqns:
        for v in eqn.invars:
            if type(v) is not Literal:
                reads.setdefault(v, []).append(eqn)
    returned = {v for v in jaxpr.outvars if type(v) is not Literal}
    return reads, returned


def reused_inputs(region, inputs, outputs, owned, done, reads, returned):
    """{output var: input var whose buffer it takes} for the region kernel of ``region``;
    ``owned``: vars in buffers the driver allocated (never an argument or a view); ``done``: ids
    of the equations of the regions emitted so far, this one's included."""
    if region.reductions or region.multipass or not region.shape:
        return {}
    mine = {id(e) for e in region.eqns}
    free = [u for u in inputs if _dies_here(u, region, mine, owned, done, reads, returned)]
    taken = {}
    for v in outputs:
        u = next((u for u in free if u.aval.dtype == v.aval.dtype and v.aval.shape == region.shape), None)
        if u is not None:
            taken[v] = u
            free.remove(u)
    return taken


def _dies_here(u, region, mine, owned, done, reads, returned):
    if u not in owned or u in returned or u.aval.shape != region.shape:
        return False
    users = reads.get(u, [])
    return any(id(e) in mine for e in users) and all(
        e.primitive.elementwise and not e.primitive.is_load if id(e) in mine else id(e) in done
        for e in users)


"""JAX's varying-manual-axes (vma) semantics of reverse mode inside ``shard_map(check_vma=True)``.

Inside such a shard_map, each value is invariant (equal on every device) or varying over each
manual mesh axis. JAX's types make an invariant value used with a varying one pass through
``pvary`` (transposed: a ``psum``), and a ``psum`` of a varying value transposes to ``pvary``
(no sum). So ``grad`` inside the body gives, for an invariant input, the sum over the devices of
their gradients, and the gradient of a psum is not multiplied by the axis size.

numjax runs such a shard_map with ``vmap`` over the axes (named axes): a value batched along
an axis is varying over it, an unbatched one invariant. The linear program a ``grad`` inside
the body transposes is typed with these vma sets (inputs from the primals, residuals from their
values, equations by JAX's rules), and the backward pass then psums the cotangent of every
equation input invariant over an axis its output varies over (where JAX's pvary sits), and
transposes a psum of a varying value as the
identity (``interpreters/ad.py`` asks ``vma_transpose`` for this per backward pass).
Under pmap (JAX: check_vma=False) and plain vmap nothing changes.
"""
import contextlib
import threading

from .. import core
from ..interpreters import batching
from ..jaxpr import Literal
from ..shmap_eager import ShardMapTracer


class _State(threading.local):
    def __init__(self):
        self.axes = ()        # manual axes of the enclosing check_vma shard_maps run with vmap
        self.probes = []      # counters: backward passes met while a shard_map looks at its body
        self.bodies = []      # {body variable: vma} of the scan/cond being transposed


_state = _State()


@contextlib.contextmanager
def checked_axes(names):
    """Within: vma semantics for backward passes over the vmap axes ``names``."""
    before = _state.axes
    _state.axes = before + tuple(n for n in names if n not in before)
    try:
        yield
    finally:
        _state.axes = before


@contextlib.contextmanager
def probe():
    """Counts the backward passes run within (a list holding the count)."""
    box = [0]
    _state.probes.append(box)
    try:
        yield box
    finally:
        _state.probes.pop()


def _mains(names):
    from ..lax.parallel import _find_axis
    out = []
    for name in names:
        try:
            kind, main = _find_axis(name)
        except NameError:
            continue
        if kind == "vmap":
            out.append((name, main))
    return out


def _batched_at(x, main):
    """Whether ``x`` is batched along ``main``'s axis (unknown: True, so no sum is added)."""
    while isinstance(x, core.Tracer):
        if isinstance(x, batching.BatchTracer) and x._trace.main is main:
            return x.batch_dim is not batching.not_mapped
        if x._trace.main.level < main.level:
            return False
        inner = getattr(x, "val", None) if isinstance(x, (batching.BatchTracer, ShardMapTracer)) \
            else getattr(x, "primal", None)
        if inner is None:
            return True
        x = inner
    return False


def value_vma(x, mains):
    return frozenset(name for name, main in mains if _batched_at(x, main))


def primals_vma(leaves):
    """The vma sets of a vjp's primals, when a check_vma shard_map is active (else None)."""
    if not _state.axes:
        return None
    mains = _mains(_state.axes)
    return [value_vma(x, mains) for x in leaves] if mains else None


_INVARIANT_AFTER = {"psum", "pmax", "pmin"}
_VARYING_AFTER = {"all_gather", "ppermute", "reduce_scatter", "all_to_all", "axis_index"}


def _axes_param(params):
    names = params.get("axes", params.get("axis_name"))
    return frozenset(names if isinstance(names, (tuple, list)) else (names,))


class VmaTranspose:
    """Per backward pass: each variable's vma set (forward, by JAX's rules) and the transpose
    rules that differ under vma semantics (``rule``)."""

    def __init__(self, jaxpr, residuals, in_vma, mains, known=None):
        self.mains = mains
        known = known or {}
        env = {v: known.get(v, value_vma(r, mains)) for v, r in zip(jaxpr.constvars, residuals)}
        env.update(zip(jaxpr.invars, in_vma))
        self.env = _typed(jaxpr.eqns, env)

    def rule(self, eqn):
        """``eqn``'s transpose rule under vma semantics, or None for the usual one: a psum of a
        value varying over its axes transposes to the identity (pvary), and the cotangent of an
        input invariant over an axis the equation's output varies over (JAX's implicit pvary
        there) is psummed over that axis."""
        from ..interpreters.ad import Zero, transpose_rules
        from ..lax.parallel import psum_p, _lift
        read = lambda v: frozenset() if type(v) is Literal else self.env.get(v, frozenset())  # noqa: E731
        out = frozenset().union(*[read(v) for v in eqn.outvars])
        if eqn.primitive.name in _INVARIANT_AFTER:
            out |= _axes_param(eqn.params)          # (an invariant operand of psum: pvary first)
        names = [name for name, _ in self.mains]
        missing = [[a for a in names if a in out and a not in read(v)] for v in eqn.invars]
        bodies = _body_typing(eqn, [read(v) for v in eqn.invars])
        if bodies:      # a typed scan/cond body holds its own pvary points: none at the equation
            missing = [[] for _ in eqn.invars]
        if eqn.primitive is psum_p and _axes_param(eqn.params) <= set(names):
            # psum of a varying value transposes to pvary: the identity
            base = lambda ct, x, **params: [ct]  # noqa: E731
        else:
            base = transpose_rules.get(eqn.primitive)
            if base is None or not (any(missing) or bodies):
                return None

        def rule(ct, *invals, **params):
            _state.bodies.append(bodies)      # the body's backward pass is typed from here
            try:
                cts = list(base(ct, *invals, **params))
            finally:
                _state.bodies.pop()
            if bodies:      # a loop's batching may leave an invariant cotangent batched: equal
                cts = [_unbatched(c, [m for a, m in self.mains if a not in read(v)])  # entries
                       for c, v in zip(cts, eqn.invars)]
            for i, axes in enumerate(missing):
                c = cts[i] if i < len(cts) else None
                if not axes or c is None or type(c) is Zero:
                    continue
                for a in axes:
                    c = psum_p.bind(_lift(c, a), axes=(a,), axis_index_groups=None)
                cts[i] = c
            return cts
        return rule


def _unbatched(x, mains):
    """``x`` (equal along the batch axes of ``mains``) without those batch dimensions."""
    if isinstance(x, ShardMapTracer):     # an eager shard_map's value: the batched one below
        return ShardMapTracer(x._trace, _unbatched(x.val, mains), x.vma)
    if not isinstance(x, batching.BatchTracer) or not mains or \
            x._trace.main.level < min(m.level for m in mains):
        return x
    inner, d = _unbatched(x.val, mains), x.batch_dim       # the enclosing axes' layers first
    if x._trace.main in mains and d is not batching.not_mapped:
        from ..lax.slicing_in_dim import index_in_dim
        inner, d = index_in_dim(inner, 0, d, keepdims=False), batching.not_mapped
    if inner is x.val and d is x.batch_dim:
        return x
    return batching.BatchTracer(x._trace, inner, d)


def _typed(eqns, env):
    """``env`` extended to the variables ``eqns`` define, by JAX's vma rules."""
    read = lambda v: frozenset() if type(v) is Literal else env.get(v, frozenset())  # noqa: E731
    for eqn in eqns:
        ins = [read(v) for v in eqn.invars]
        union = frozenset().union(*ins)
        name = eqn.primitive.name
        if name in _INVARIANT_AFTER:
            outs = [m - _axes_param(eqn.params) for m in ins]
        elif name in _VARYING_AFTER:
            outs = [union | _axes_param(eqn.params)] * len(eqn.outvars)
        elif name == "scan":
            outs = _scan_out_typing(eqn, ins)
        else:
            outs = [union] * len(eqn.outvars)
        env.update(zip(eqn.outvars, outs))
    return env


def _scan_carry(eqn, ins):
    """The scan body's input typing, its carry a fixpoint (what JAX's types require)."""
    body, nc, nk = eqn.params["jaxpr"], eqn.params["num_consts"], eqn.params["num_carry"]
    body = getattr(body, "jaxpr", body)
    ins = list(ins)
    for _ in range(len(ins) + 1):
        env = _typed(body.eqns, dict(zip(body.invars, ins)))
        outs = [frozenset() if type(v) is Literal else env.get(v, frozenset()) for v in body.outvars]
        carry = [a | b for a, b in zip(ins[nc:nc + nk], outs[:nk])]
        if carry == ins[nc:nc + nk]:
            return body, ins, outs
        ins[nc:nc + nk] = carry
    return body, ins, outs


def _scan_out_typing(eqn, ins):
    return _scan_carry(eqn, ins)[2]


def _body_typing(eqn, ins):
    """{body variable: vma} for the body a scan or cond transposes (from its operands)."""
    name = eqn.primitive.name
    if name == "scan":
        body, typed, _ = _scan_carry(eqn, ins)
        return dict(zip(body.invars, typed))
    if name == "cond":
        out = {}
        for b in eqn.params["branches"]:
            b = getattr(b, "jaxpr", b)
            out.update(zip(b.invars, ins[1:]))
        return out
    return {}


def vma_transpose(jaxpr, residuals, in_vma):
    """The backward pass's VmaTranspose, or None outside check_vma shard_maps."""
    for box in _state.probes:
        box[0] += 1
    if not _state.axes:
        return None
    mains = _mains(_state.axes)
    if not mains:
        return None
    known = _state.bodies[-1] if _state.bodies else {}
    if in_vma is None:
        # a scan's or cond's body (typed from the equation's operands), or another linear
        # program whose inputs are unknown: those are taken as varying (no psum added inside)
        everything = frozenset(name for name, _ in mains)
        in_vma = [known.get(v, everything) for v in jaxpr.invars]
    return VmaTranspose(jaxpr, residuals, in_vma, mains, known)

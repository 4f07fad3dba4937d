"""pmap on local CPU devices: one thread per shard, collectives between compiled segments.

The per-shard function is traced once to a jaxpr (with the named axis bound, so
collectives appear as equations). The jaxpr is cut at each collective into
segments; each segment is compiled like a jit program (Numba, ``nogil``), and
all shards run a segment concurrently on a thread pool, which is where the
parallel speed-up comes from. Between segments the collective is computed
across the shards' values. A control-flow equation whose body holds a
collective (``scan``/``while``/``cond``) is driven from Python instead, in
lockstep across the shards: each iteration (or the chosen branch) runs this
same segment/collective interpreter on the body. Loops must then run the
same number of iterations, and conds take the same branch, on every device
(JAX would deadlock otherwise; numjax raises).

Across processes (``numjax.distributed``), each process runs its own shards and a collective
first combines the local shards, then exchanges the result with the other processes through
MPI (``numjax._src.mpi``); the named axis then spans every process's shards, numbered
process by process (``MappedAxis``).
"""
import concurrent.futures
import threading
import weakref

import numpy as np

from .._src import mpi      # mpi4py itself is imported only by numjax.distributed.initialize
from ..array import Array
from ..jaxpr import ClosedJaxpr, Jaxpr, Literal, _literal_value
from ..lax import parallel

class MappedAxis:
    """The pmap axis as this process sees it: ``name``; its shards here are global indices
    ``offset .. offset + local_size - 1`` of ``size`` (all processes')."""

    def __init__(self, name, local_size, offset=0, size=None, agreement=None):
        self.name, self.local_size, self.offset = name, local_size, offset
        self.size = local_size if size is None else size
        self.agreement = agreement     # the processes' shapes check, finished before any exchange

    def mpi(self):
        """The MPI module, once every process is known to run this same computation."""
        if self.agreement is not None:
            self.agreement.result()
        return mpi

    @property
    def multi_process(self):
        return self.size != self.local_size


def _as_axis(axis, n):
    return axis if isinstance(axis, MappedAxis) else MappedAxis(axis, n)


_pools = {}
_lock = threading.Lock()   # pools and plans are made once, whichever thread pmaps first
_compile_lock = threading.Lock()


def _pool(n):
    with _lock:
        if n not in _pools:
            _pools[n] = concurrent.futures.ThreadPoolExecutor(max_workers=n, thread_name_prefix="numjax-pmap")
        return _pools[n]


class Segment:
    def __init__(self, jaxpr, invars, outvars):
        self.invars, self.outvars = invars, outvars
        self.closed = ClosedJaxpr(Jaxpr([], invars, outvars, jaxpr), [])
        self.exe = None

    def run(self, env):
        if self.exe is None:
            self._compile()
        return self.exe.call_arrays([_val(env[v]) for v in self.invars])

    def _compile(self):
        """Once, whichever shard's thread gets here first (the others wait: compiling one
        program from several threads at once is not safe)."""
        from ..dispatch import compiled_executable
        with _compile_lock:
            if self.exe is None:
                self.exe = compiled_executable(self.closed, "pmap_segment")


def _val(x):
    return x._value if isinstance(x, Array) else np.asarray(x)


def inline_nested_jits(closed, avals):
    """``closed`` without nested ``jit`` equations, each call re-traced in place with fresh
    variables: a collective inside a jitted helper must become a segment boundary, and a
    helper called twice gets two independent copies."""
    from . import partial_eval as pe
    if not any(e.primitive.name == "jit" for e in closed.jaxpr.eqns):
        return closed
    return pe.trace_to_jaxpr(lambda *xs: _eval_inlining(closed.jaxpr, closed.consts, *xs), avals)


def _eval_inlining(jaxpr, consts, *args):
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))

    def read(v):
        return _literal_value(v) if type(v) is Literal else env[v]
    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        if eqn.primitive.name == "jit":
            inner = eqn.params["jaxpr"]
            outs = _eval_inlining(inner.jaxpr, inner.consts, *ins)
        else:
            outs = eqn.primitive.bind(*ins, **eqn.params)
            if not eqn.primitive.multiple_results:
                outs = [outs]
        env.update(zip(eqn.outvars, outs))
    return [read(v) for v in jaxpr.outvars]


_CONTROL_FLOW = ("cond", "while", "scan")


def _sub_jaxprs(eqn):
    p, name = eqn.params, eqn.primitive.name
    if name == "cond":
        return list(p["branches"])
    if name == "while":
        return [p["cond_jaxpr"], p["body_jaxpr"]]
    if name == "scan":
        return [p["jaxpr"]]
    if name == "jit":
        return [p["jaxpr"].jaxpr]
    return []


def _has_collective(jaxpr):
    return any(e.primitive in parallel.COLLECTIVES or any(_has_collective(j) for j in _sub_jaxprs(e))
               for e in jaxpr.eqns)


def _is_boundary(eqn):
    """Equations the pmap runtime performs itself, between compiled segments."""
    return eqn.primitive in parallel.COLLECTIVES or (
        eqn.primitive.name in _CONTROL_FLOW and any(_has_collective(j) for j in _sub_jaxprs(eqn)))


_plans = weakref.WeakKeyDictionary()


def plan_for(jaxpr):
    """``split(jaxpr)``, computed once per jaxpr (its segments then compile once)."""
    with _lock:
        plan = _plans.get(jaxpr)
        if plan is None:
            plan = _plans[jaxpr] = split(jaxpr)
        return plan


def split(jaxpr):
    """Alternating list of Segment and collective (or collective-holding) equations, in program order."""
    plan, current = [], []
    for eqn in jaxpr.eqns:
        if _is_boundary(eqn):
            if current:
                plan.append(current)
            plan.append(eqn)
            current = []
        else:
            current.append(eqn)
    if current:
        plan.append(current)
    out = []
    for k, item in enumerate(plan):
        if isinstance(item, list):
            later = _reads(plan[k + 1:]) | {v for v in jaxpr.outvars if type(v) is not Literal}
            defined = {v for e in item for v in e.outvars}
            invars = sorted(_reads([item]) - defined, key=_order(jaxpr))
            outvars = [v for v in sorted(defined, key=_order(jaxpr)) if v in later]
            out.append(Segment(item, invars, outvars))
        else:
            out.append(item)
    return out


def _reads(items):
    vs = set()
    for it in items:
        eqns = [it] if not isinstance(it, list) else it
        for e in eqns:
            vs.update(v for v in e.invars if type(v) is not Literal)
    return vs


def _order(jaxpr):
    pos = {v: i for i, v in enumerate(jaxpr.invars)}
    for k, e in enumerate(jaxpr.eqns):
        for v in e.outvars:
            pos[v] = len(jaxpr.invars) + k
    return lambda v: (pos.get(v, -1), getattr(v, "count", 0))


def run(jaxpr, consts, shard_args, axis_name, plan=None):
    """Run ``jaxpr`` on every shard's flat arguments; returns each shard's flat outputs.
    ``axis_name`` is the axis's name, or a ``MappedAxis`` (across processes); ``plan``:
    ``plan_for(jaxpr)``, when the caller kept it."""
    n = len(shard_args)
    axis_name = _as_axis(axis_name, n)
    envs = [dict(zip(jaxpr.constvars, consts)) for _ in range(n)]
    for env, args in zip(envs, shard_args):
        env.update(zip(jaxpr.invars, args))
    for item in plan or plan_for(jaxpr):
        if isinstance(item, Segment):
            results = list(_pool(n).map(item.run, envs)) if n > 1 else [item.run(envs[0])]
            for env, outs in zip(envs, results):
                env.update(zip(item.outvars, outs))
        elif item.primitive in parallel.COLLECTIVES:
            _collective(item, envs, axis_name)
        else:
            _control_flow(item, envs, axis_name)
    return [[_literal_value(v) if type(v) is Literal else env[v] for v in jaxpr.outvars] for env in envs]


# ---------------------------------------------------------------- control flow holding collectives

def _read(env, v):
    return _literal_value(v) if type(v) is Literal else env[v]


def _control_flow(eqn, envs, axis_name):
    ins = [[_read(env, v) for v in eqn.invars] for env in envs]
    rule = {"scan": _scan, "while": _while, "cond": _cond}[eqn.primitive.name]
    outs = rule(eqn.params, ins, axis_name)
    for env, o in zip(envs, outs):
        env.update(zip(eqn.outvars, o))


def _scan(p, ins, axis_name):
    nc, nk, length, body = p["num_consts"], p["num_carry"], p["length"], p["jaxpr"]
    consts = [a[:nc] for a in ins]
    carry = [list(a[nc:nc + nk]) for a in ins]
    xs = [[_val(x) for x in a[nc + nk:]] for a in ins]
    ys = [[] for _ in ins]
    for t in (range(length - 1, -1, -1) if p["reverse"] else range(length)):
        args = [list(c) + cr + [Array(np.array(x[t]), False) for x in xx] for c, cr, xx in zip(consts, carry, xs)]
        outs = run(body, [], args, axis_name)
        for s, o in enumerate(outs):
            carry[s] = list(o[:nk])
            ys[s].append(o[nk:])
    y_avals = [v.aval for v in body.outvars[nk:]]
    out = []
    for s in range(len(ins)):
        steps = ys[s][::-1] if p["reverse"] else ys[s]
        stacked = [Array(np.stack([_val(y[k]) for y in steps]) if steps else np.zeros((0,) + a.shape, a.dtype),
                         a.weak_type) for k, a in enumerate(y_avals)]
        out.append(carry[s] + stacked)
    return out


def _while(p, ins, axis_name):
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cconsts, bconsts = [a[:nc] for a in ins], [a[nc:nc + nb] for a in ins]
    carry = [list(a[nc + nb:]) for a in ins]
    while True:
        preds = [bool(_val(o[0])) for o in run(p["cond_jaxpr"], [], [list(c) + cr for c, cr in zip(cconsts, carry)],
                                               axis_name)]
        anyone, everyone = _across_processes(axis_name, any(preds), all(preds))
        if not anyone:
            return carry
        if not everyone:
            raise NotImplementedError(
                "pmap: a while_loop (or fori_loop) holding a collective must run the same number of "
                "iterations on every device, but its predicate differs across devices")
        carry = [list(o) for o in run(p["body_jaxpr"], [], [list(b) + cr for b, cr in zip(bconsts, carry)],
                                      axis_name)]


def _cond(p, ins, axis_name):
    branches = p["branches"]
    idx = {int(np.clip(int(_val(a[0])), 0, len(branches) - 1)) for a in ins}
    lowest, highest = _across_processes(axis_name, min(idx), max(idx), ops=("min", "max"))
    if len(idx) > 1 or lowest != highest:
        raise NotImplementedError("pmap: a cond/switch whose branches hold a collective must take the same "
                                  "branch on every device")
    return run(branches[idx.pop()], [], [list(a[1:]) for a in ins], axis_name)


def _across_processes(axis, first, second, ops=("max", "min")):
    """(``first`` reduced by ops[0], ``second`` by ops[1]) over the processes (as is in one)."""
    if not axis.multi_process:
        return first, second
    mpi = axis.mpi()
    return (int(mpi.allreduce(np.asarray(int(first), np.int64), ops[0])),
            int(mpi.allreduce(np.asarray(int(second), np.int64), ops[1])))


def _collective(eqn, envs, axis):
    name = eqn.primitive.name
    p = eqn.params
    names = p.get("axes", (p.get("axis_name"),))
    if any(a != axis.name for a in names):
        raise NotImplementedError(f"pmap collective over axis {names}; only the pmap's own axis "
                                  f"{axis.name!r} is supported")
    if name == "axis_index":
        for i, env in enumerate(envs):
            env[eqn.outvars[0]] = Array(np.asarray(axis.offset + i, np.int32), False)
        return
    x = eqn.invars[0]
    vals = [_val(_literal_value(x) if type(x) is Literal else env[x]) for env in envs]
    weak = getattr(envs[0].get(x), "weak_type", False) if type(x) is not Literal else x.aval.weak_type
    if name not in _RULES:
        raise NotImplementedError(name)
    outs = _RULES[name](vals, p, axis)
    weak = weak and name != "all_to_all"
    for env, o in zip(envs, outs):     # shards may share one result: Arrays are never written
        env[eqn.outvars[0]] = Array(np.asarray(o), weak)


_REDUCERS = {"psum": ("sum", np.sum), "pmax": ("max", np.max), "pmin": ("min", np.min)}


def _reduce(vals, p, axis, kind):
    op, fn = _REDUCERS[kind]
    total = vals[0] if len(vals) == 1 else np.asarray(fn(np.stack(vals), axis=0), dtype=vals[0].dtype)
    if axis.multi_process:
        x = total            # the message is made only on a timeout (formatting it costs ~10 us)
        total = axis.mpi().allreduce(total, op, lambda: f"pmap {kind} over axis {axis.name!r} (MPI "
                                                        f"allreduce {op} of {x.dtype}{list(x.shape)})")
    return [total] * len(vals)


def _global_shards(vals, axis):
    """Every shard's value on the axis, in global order (this process's, or all processes')."""
    if not axis.multi_process:
        return vals
    gathered = axis.mpi().allgather(np.stack(vals))            # (processes, local shards, ...)
    return list(gathered.reshape((-1,) + gathered.shape[2:]))


def _all_gather(vals, p, axis):
    everyone = _global_shards(vals, axis)
    joined = np.concatenate(everyone, axis=p["axis"]) if p["tiled"] else np.stack(everyone, axis=p["axis"])
    return [joined] * len(vals)


def _ppermute(vals, p, axis):
    lo, n = axis.offset, axis.local_size
    outs = [np.zeros_like(v) for v in vals]
    sends, recvs, recv_into = [], [], []
    for src, dst in p["perm"]:
        src_here, dst_here = lo <= src < lo + n, lo <= dst < lo + n
        if src_here and dst_here:
            outs[dst - lo] = vals[src - lo]
        elif src_here:
            sends.append((vals[src - lo], dst // n, dst))     # tag: the destination shard
        elif dst_here:
            recvs.append((vals[0], src // n, dst))
            recv_into.append(dst - lo)
    if sends or recvs:
        for k, got in zip(recv_into, axis.mpi().exchange(sends, recvs)):
            outs[k] = got
    return outs


def _psum_scatter(vals, p, axis):
    """Shard i gets block i (along ``scatter_dimension``) of the sum over the axis."""
    dim, size = p["scatter_dimension"], axis.size
    total = np.sum(np.stack(vals), axis=0, dtype=vals[0].dtype)
    blocks = np.moveaxis(total, dim, 0)
    blocks = blocks.reshape((size, blocks.shape[0] // size) + blocks.shape[1:])
    if axis.multi_process:
        processes = size // axis.local_size
        mine = axis.mpi().reduce_scatter(blocks.reshape((processes, axis.local_size) + blocks.shape[1:]))
    else:
        mine = blocks
    outs = []
    for block in mine:          # (chunk, ...) with the scattered dimension first
        block = np.moveaxis(block, 0, dim)
        outs.append(block if p["tiled"] else np.squeeze(block, dim))
    return outs


def _all_to_all(vals, p, axis):
    """Shard j gets block j (of ``axis.size``, cut along ``split_axis``) of every shard's value,
    concatenated along ``concat_axis`` in shard order; across processes one MPI Alltoall moves
    every (sender, receiver) block between processes at once."""
    split, concat, size, local = p["split_axis"], p["concat_axis"], axis.size, axis.local_size
    first = vals[0]
    rest = first.shape[:split] + first.shape[split + 1:]
    k = first.shape[split] // size
    # (local sender, global receiver, block of split_axis, other dims)
    blocks = np.stack([np.moveaxis(v, split, 0).reshape((size, k) + rest) for v in vals])
    if axis.multi_process:
        processes = size // local
        by_process = blocks.reshape((local, processes, local, k) + rest).swapaxes(0, 1)
        # received: (sending process, local sender, local receiver, ...)
        got = axis.mpi().alltoall(by_process, lambda: f"pmap all_to_all over axis {axis.name!r} (MPI "
                                                      f"alltoall of {first.dtype}{list(by_process.shape)})")
        received = got.reshape((size, local, k) + rest)                # (global sender, receiver, ...)
    else:
        received = blocks
    outs = []
    for r in range(local):
        mine = np.moveaxis(received[:, r], 1, split + 1)       # (sender, block with dims in place)
        mine = np.moveaxis(mine, 0, concat)                     # sender just before concat's dim
        shape = mine.shape[:concat] + (size * mine.shape[concat + 1],) + mine.shape[concat + 2:]
        outs.append(mine.reshape(shape))
    return outs


_RULES = {"all_to_all": _all_to_all, "psum": lambda v, p, a: _reduce(v, p, a, "psum"),
          "pmax": lambda v, p, a: _reduce(v, p, a, "pmax"),
          "pmin": lambda v, p, a: _reduce(v, p, a, "pmin"),
          "all_gather": _all_gather, "ppermute": _ppermute, "reduce_scatter": _psum_scatter}

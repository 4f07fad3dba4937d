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
"""
import concurrent.futures
import threading
import weakref

import numpy as np

from ..array import Array
from ..jaxpr import ClosedJaxpr, Jaxpr, Literal, _literal_value
from ..lax import parallel

_pools = {}
_lock = threading.Lock()   # pools and plans are made once, whichever thread pmaps first


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
        from ..dispatch import compiled_executable
        if self.exe is None:
            self.exe = compiled_executable(self.closed, "pmap_segment")
        return self.exe.call_arrays([_val(env[v]) for v in self.invars])


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


def run(jaxpr, consts, shard_args, axis_name):
    """Run ``jaxpr`` on every shard's flat arguments; returns each shard's flat outputs."""
    n = len(shard_args)
    envs = [dict(zip(jaxpr.constvars, consts)) for _ in range(n)]
    for env, args in zip(envs, shard_args):
        env.update(zip(jaxpr.invars, args))
    pool = _pool(n)
    for item in plan_for(jaxpr):
        if isinstance(item, Segment):
            results = list(pool.map(item.run, envs)) if n > 1 else [item.run(envs[0])]
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
        if not any(preds):
            return carry
        if not all(preds):
            raise NotImplementedError(
                "pmap: a while_loop (or fori_loop) holding a collective must run the same number of "
                "iterations on every device, but its predicate differs across devices")
        carry = [list(o) for o in run(p["body_jaxpr"], [], [list(b) + cr for b, cr in zip(bconsts, carry)],
                                      axis_name)]


def _cond(p, ins, axis_name):
    branches = p["branches"]
    idx = {int(np.clip(int(_val(a[0])), 0, len(branches) - 1)) for a in ins}
    if len(idx) > 1:
        raise NotImplementedError("pmap: a cond/switch whose branches hold a collective must take the same "
                                  "branch on every device")
    return run(branches[idx.pop()], [], [list(a[1:]) for a in ins], axis_name)


def _collective(eqn, envs, axis_name):
    name = eqn.primitive.name
    p = eqn.params
    names = p.get("axes", (p.get("axis_name"),))
    if any(a != axis_name for a in names):
        raise NotImplementedError(f"pmap collective over axis {names}; only the pmap's own axis "
                                  f"{axis_name!r} is supported")
    if name == "axis_index":
        for i, env in enumerate(envs):
            env[eqn.outvars[0]] = Array(np.asarray(i, np.int32), False)
        return
    x = eqn.invars[0]
    vals = [_val(_literal_value(x) if type(x) is Literal else env[x]) for env in envs]
    weak = getattr(envs[0].get(x), "weak_type", False) if type(x) is not Literal else x.aval.weak_type
    if name in ("psum", "pmax", "pmin"):
        fn = {"psum": np.sum, "pmax": np.max, "pmin": np.min}[name]
        total = np.asarray(fn(np.stack(vals), axis=0), dtype=vals[0].dtype)
        outs = [total] * len(envs)
    elif name == "all_gather":
        stacked = np.stack(vals, axis=p["axis"])
        if p["tiled"]:
            stacked = np.concatenate(vals, axis=p["axis"])
        outs = [stacked] * len(envs)
    elif name == "ppermute":
        outs = [np.zeros_like(v) for v in vals]
        for src, dst in p["perm"]:
            outs[dst] = vals[src]
    else:
        raise NotImplementedError(name)
    for env, o in zip(envs, outs):
        env[eqn.outvars[0]] = Array(np.array(o), weak)

"""pmap on local CPU devices: one thread per shard, collectives between compiled segments.

The per-shard function is traced once to a jaxpr (with the named axis bound, so
collectives appear as equations). The jaxpr is cut at each collective into
segments; each segment is compiled like a jit program (Numba, ``nogil``), and
all shards run a segment concurrently on a thread pool, which is where the
parallel speed-up comes from. Between segments the collective is computed
across the shards' values. Collectives inside control-flow bodies are not
supported (they would need synchronisation inside compiled loops).
"""
import concurrent.futures

import numpy as np

from ..array import Array
from ..jaxpr import ClosedJaxpr, Jaxpr, Literal, _literal_value
from ..lax import parallel

_pools = {}


def _pool(n):
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


def split(jaxpr):
    """Alternating list of Segment and collective equations, in program order."""
    plan, current = [], []
    for eqn in jaxpr.eqns:
        if eqn.primitive in parallel.COLLECTIVES:
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
    for item in split(jaxpr):
        if isinstance(item, Segment):
            results = list(pool.map(item.run, envs)) if n > 1 else [item.run(envs[0])]
            for env, outs in zip(envs, results):
                env.update(zip(item.outvars, outs))
        else:
            _collective(item, envs, axis_name)
    return [[_literal_value(v) if type(v) is Literal else env[v] for v in jaxpr.outvars] for env in envs]


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

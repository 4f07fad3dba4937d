"""jit as a primitive: ``jit_p`` holds a closed jaxpr; its implementation is a cached compile.

Two caches: the *trace cache* (per function: input tree, leaf shapes/dtypes/weak
types, static args and config -> traced jaxpr and executable) and the *compile
cache* inside ``numjax.lowering`` (lowered source hash -> Numba function), so
two programs that lower to the same source share one Numba compile.
"""
import logging

import numpy as np

from . import core
from .array import Array
from .config import config
from .interpreters import partial_eval as pe
from .jaxpr import ClosedJaxpr, eval_jaxpr, param_printers
from .lax._base import make_primitive

logger = logging.getLogger("numjax")


def _jit_impl(*args, jaxpr, name):
    exe = compiled_executable(jaxpr, name)
    return exe.call_arrays(args)


def _jit_abstract(*avals, jaxpr, name):
    return list(jaxpr.out_avals)


jit_p = make_primitive("jit", _jit_impl, _jit_abstract, multiple_results=True)
param_printers[jit_p] = lambda p: {"name": p["name"], "jaxpr": p["jaxpr"]}


def compiled_executable(closed_jaxpr, name="fn"):
    cache = getattr(closed_jaxpr, "_executable", None)
    if cache is None:
        from .lowering import compile as lowering_compile
        cache = lowering_compile.compile_jaxpr(closed_jaxpr, name)
        closed_jaxpr._executable = cache
    return cache


def jit_call_named(name, fun, *args):
    """Run ``fun`` as a nested ``jit[name=...]`` when tracing, and directly when eager.

    jnp functions that JAX implements as jitted helpers (``_where``, ``cumsum``) go
    through here so their jaxprs print like JAX's, while eager calls stay cheap.
    """
    if core._no_trace_active() or not isinstance(core.find_top_trace(args), pe.DynamicJaxprTrace):
        return fun(*args)
    avals = [core.get_aval(a) for a in args]
    closed = pe.trace_to_jaxpr(lambda *xs: [fun(*xs)], avals)
    outs = jit_p.bind(*args, jaxpr=closed, name=name)
    return outs[0]


class Stats:
    """numjax's own counters, alongside JAX's ``_cache_size()``."""

    def __init__(self):
        self.trace_hits = self.trace_misses = 0

    def __repr__(self):
        return f"Stats(trace_hits={self.trace_hits}, trace_misses={self.trace_misses})"


def describe_miss(key, previous_keys, arg_names):
    """Why a jit cache missed: the first argument whose shape, dtype or static value differs."""
    if not previous_keys:
        return "first call"
    treedef, sigs, statics, epoch = key
    best = previous_keys[-1]
    if best[3] != epoch:
        return "a config option changed (e.g. jax_enable_x64)"
    if best[0] != treedef:
        return f"the input tree structure changed from {best[0]} to {treedef}"
    if best[2] != statics:
        return f"a static argument changed from {best[2]} to {statics}"
    for i, (old, new) in enumerate(zip(best[1], sigs)):
        if old != new:
            which = arg_names[i] if i < len(arg_names) else f"leaf {i}"
            return f"argument {which} changed from {_sig_str(old)} to {_sig_str(new)}"
    return "unknown"


def _sig_str(sig):
    shape, dtype, weak = sig
    return f"{'~' if weak else ''}{np.dtype(dtype).name}{list(shape)}"


def log_compile(fun_name, avals, reason):
    if config.jax_log_compiles:
        logger.warning("Compiling %s with global shapes and types %s (reason: %s)",
                       fun_name, avals, reason)


def wrap_outputs(values, out_avals):
    return [Array(v, a.weak_type) for v, a in zip(values, out_avals)]


def run_eagerly(closed, *args):
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


__all__ = ["jit_p", "compiled_executable", "jit_call_named", "ClosedJaxpr"]

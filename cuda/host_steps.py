"""CUDA step rules for the primitives that have no device kernel: they run on the host, inside
a GPU program, between its launches.

A host step copies its operands to the host (waiting for every launch before it on the
executable's stream), evaluates the equation there and copies the results into device
buffers of its own.  Steps run in program order, so ``io_callback``'s ordering and the order
of ``debug.print``/``debug.callback`` output are those of the program.

- Host callbacks (``pure_callback``, ``io_callback``, ``debug_callback``, ``debug_print``) call
  the same function the CPU backend's compiled program calls (``lowering/host_calls.py``):
  pytrees rebuilt, results checked against the declared shapes and dtypes.
- Linear algebra (``cholesky``, ``eigh``, ``lu``, ``qr``, ``svd``, ``triangular_solve``) runs
  its eager implementation (LAPACK through scipy; the CPU backend's jitted LU and triangular
  solve are kernels of the same algorithm, equal to rounding).  JAX on a GPU calls cuSOLVER
  and cuFFT; numjax has no binding to them yet, so each of these costs two transfers and a
  synchronization.  That one runs on the host is logged once per primitive (logger
  ``numjax``, INFO).

``fft`` has no rule here: every FFT has complex operands or results, and a complex program
reaches the planner only in parts form (``value_forms.py``, ``lowering/complex_parts.py``),
which has no rewrite for ``fft`` yet -- such a program runs on the CPU backend.
"""
import logging

import numpy as np

from numjax import core
from numjax.array import Array
from numjax.lax import callback as lax_callback
from numjax.lax import linalg as lax_linalg

logger = logging.getLogger("numjax")
_logged = set()


def _to_host(array, aval, buffers):
    from .control import read_to_host
    return read_to_host(array, buffers).reshape(aval.shape)


class HostStep:
    """One equation evaluated on the host by ``fn`` (numpy operands -> numpy results)."""

    def __init__(self, eqn, fn):
        self.eqn, self.fn = eqn, fn
        self.sources = []

    def run(self, env, buffers):
        from . import backend
        eqn = self.eqn
        args = [_to_host(backend.env_read(env, v), v.aval, buffers) for v in eqn.invars]
        results = self.fn(*args)
        for k, (v, value) in enumerate(zip(eqn.outvars, results)):
            shape = v.aval.shape if v.aval.shape != () else (1,)
            out = buffers.get((self, "out", k), shape, v.aval.dtype)
            if out.size:
                out.copy_to_device(np.ascontiguousarray(value, v.aval.dtype).reshape(shape),
                                   stream=buffers.stream)
                if buffers.stream:     # the host array may go before an asynchronous copy ends
                    buffers.stream.synchronize()
            env[v] = out


def _callback_step(eqn):
    from numjax.lowering import host_calls
    fn = host_calls.host_function(eqn)
    return HostStep(eqn, lambda *args: fn(*args) or [])


def _eager_step(eqn):
    """The primitive's eager implementation (what it computes outside jit), logged the first
    time one runs."""
    name = eqn.primitive.name
    impl, params = core.impl_rules[eqn.primitive], dict(eqn.params)

    def evaluate(*args):
        if name not in _logged:
            _logged.add(name)
            logger.info("numjax: %s runs on the host in a CUDA program (numjax has no cuSOLVER "
                        "binding yet): its operands and results cross to and from the host", name)
        outs = impl(*[Array(a, False) for a in args], **params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        return [np.asarray(getattr(o, "_value", o)) for o in outs]
    return HostStep(eqn, evaluate)


_EAGER = (lax_linalg.cholesky_p, lax_linalg.eigh_p, lax_linalg.lu_p, lax_linalg.qr_p,
          lax_linalg.svd_p, lax_linalg.triangular_solve_p)

STEP_RULES = {**{p: _callback_step for p in lax_callback.CALLBACK_PRIMITIVES},
              **{p: _eager_step for p in _EAGER}}

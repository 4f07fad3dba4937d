"""CUDA step rules for control flow: ``while``, ``cond`` and ``scan`` as host-driven loops
that launch device sub-programs.

Each body (``cond_jaxpr``/``body_jaxpr``, every branch, the scan body) is planned once, as
``backend.plan_program`` plans a program (nested jits inlined, dead code dropped, dtypes
checked, ``backend.plan_jaxpr``), into a ``SubProgram``; a body the backend cannot lower raises
``CudaUnsupported`` and the whole program runs on the CPU.  The loop itself runs on the host:

- ``while`` copies its predicate back to the host after each run of ``cond_jaxpr`` (a
  one-element device-to-host copy, which waits for every launch before it): one round trip
  per iteration is the price of host-driven control flow, a device-side loop is future work;
- ``cond`` copies the branch index back (a bool, or an int32 clamped to the branches, as JAX);
- ``scan`` runs its body ``length`` times on views of each ``xs`` row (no copy) and copies
  each iteration's ``ys`` into the row of a preallocated stacked output.

Buffers are reused between runs of the same steps, so iteration ``i + 1`` of a body writes
into the very buffers holding iteration ``i``'s results.  The carry is therefore
double-buffered: after each iteration the body's carry outputs (which may be body buffers,
the previous carry itself, a constant or a literal) are copied device-to-device into the
loop's own carry set of the other parity, which the next iteration reads.  The loop's results
are always its own buffers, never a body's, so nesting (a scan inside a while, a cond inside
a scan) needs nothing more: an inner loop is one more step of its parent's body.
"""
import numpy as np

from numjax.lax import control_flow as lax_cf

from .kernels import CudaUnsupported, check_types


def plan_body(jaxpr):
    """The ``SubProgram`` running the closure-converted ``jaxpr`` of a control-flow equation."""
    from numjax.interpreters.partial_eval import dce_jaxpr
    from numjax.lowering.compile import inline_jits
    from . import backend      # lazily: backend imports step_rules, which imports this module
    if jaxpr.constvars:
        raise CudaUnsupported("control flow bodies with constants have no CUDA lowering yet")
    jaxpr = dce_jaxpr(inline_jits(jaxpr))
    check_types(jaxpr)
    return SubProgram(jaxpr, backend.plan_jaxpr(jaxpr))


class SubProgram:
    """The steps of one body; ``run(args, buffers)`` binds its inputs to ``args`` (device
    arrays) and returns its outputs (device arrays: buffers of its steps, or ``args`` passed
    through) -- valid until the next run of the same steps."""

    def __init__(self, jaxpr, steps):
        self.jaxpr, self.steps = jaxpr, steps
        self.sources = [s for step in steps for s in step.sources]

    def run(self, args, buffers):
        from . import backend
        env = dict(zip(self.jaxpr.invars, args))
        backend.run_steps(self.steps, env, buffers)
        return [backend.env_read(env, v) for v in self.jaxpr.outvars]


def read_to_host(array, buffers, host=None):
    """``array`` on the host (in ``host`` when given), once every launch before it on the
    executable's stream is done."""
    stream = buffers.stream
    host = array.copy_to_host(host, stream=stream)
    if stream:
        stream.synchronize()
    return host


def copy_into(dst, src, buffers):
    """Device-to-device copy of ``src`` into ``dst`` (same elements, shapes equal up to unit
    dimensions), ordered on the executable's stream."""
    if dst.size:
        dst.copy_to_device(src, stream=buffers.stream)


def _device_shape(aval):
    return aval.shape if aval.shape != () else (1,)


def _own_copies(step, role, values, avals, buffers):
    """``values`` copied into the step's own buffers ``(step, role, k)``."""
    outs = []
    for k, (value, aval) in enumerate(zip(values, avals)):
        dst = buffers.get((step, role, k), _device_shape(aval), aval.dtype)
        copy_into(dst, value, buffers)
        outs.append(dst)
    return outs


def _operands(eqn, env):
    from . import backend
    return [backend.env_read(env, v) for v in eqn.invars]


class WhileStep:
    """``while``: run ``cond_jaxpr``, read its predicate, run ``body_jaxpr``; repeat."""

    def __init__(self, eqn):
        p = eqn.params
        self.eqn = eqn
        self.cond, self.body = plan_body(p["cond_jaxpr"]), plan_body(p["body_jaxpr"])
        self.n_cond, self.n_body = p["cond_nconsts"], p["body_nconsts"]
        self.avals = [v.aval for v in eqn.outvars]
        self.sources = self.cond.sources + self.body.sources
        self._predicate = None    # page-locked host memory for the per-iteration read-back

    def _holds(self, predicate, buffers):
        if self._predicate is None:
            from numba import cuda
            self._predicate = cuda.pinned_array((1,), np.bool_)
        return bool(read_to_host(predicate, buffers, self._predicate)[0])

    def run(self, env, buffers):
        ops = _operands(self.eqn, env)
        cconsts, bconsts = ops[:self.n_cond], ops[self.n_cond:self.n_cond + self.n_body]
        parity = 0
        carry = _own_copies(self, ("carry", parity), ops[self.n_cond + self.n_body:], self.avals, buffers)
        while self._holds(self.cond.run(cconsts + carry, buffers)[0], buffers):
            outs = self.body.run(bconsts + carry, buffers)
            parity ^= 1
            carry = _own_copies(self, ("carry", parity), outs, self.avals, buffers)
        env.update(zip(self.eqn.outvars, carry))


class CondStep:
    """``cond``: read the index, clamp it to the branches, run that branch."""

    def __init__(self, eqn):
        self.eqn = eqn
        self.branches = [plan_body(b) for b in eqn.params["branches"]]
        self.avals = [v.aval for v in eqn.outvars]
        self.sources = [s for b in self.branches for s in b.sources]

    def run(self, env, buffers):
        index, *ops = _operands(self.eqn, env)
        i = int(read_to_host(index, buffers)[0])
        branch = self.branches[min(max(i, 0), len(self.branches) - 1)]
        outs = branch.run(ops, buffers)
        env.update(zip(self.eqn.outvars, _own_copies(self, "out", outs, self.avals, buffers)))


class ScanStep:
    """``scan``: the body over the rows of ``xs`` (forwards, or backwards for ``reverse``),
    its ``ys`` copied into the rows of stacked outputs."""

    def __init__(self, eqn):
        p = eqn.params
        self.eqn = eqn
        self.body = plan_body(p["jaxpr"])
        self.length, self.reverse = int(p["length"]), bool(p["reverse"])
        self.n_consts, self.n_carry = p["num_consts"], p["num_carry"]
        body_in = [v.aval for v in self.body.jaxpr.invars]
        self.x_avals = body_in[self.n_consts + self.n_carry:]
        self.carry_avals = [v.aval for v in eqn.outvars[:self.n_carry]]
        self.ys_avals = [v.aval for v in eqn.outvars[self.n_carry:]]
        self.sources = self.body.sources

    def run(self, env, buffers):
        ops = _operands(self.eqn, env)
        nc = self.n_consts
        consts, xs = ops[:nc], ops[nc + self.n_carry:]
        carry = _own_copies(self, ("carry", 0), ops[nc:nc + self.n_carry], self.carry_avals, buffers)
        ys = [buffers.get((self, "ys", k), a.shape, a.dtype) for k, a in enumerate(self.ys_avals)]
        order = range(self.length - 1, -1, -1) if self.reverse else range(self.length)
        for i, t in enumerate(order):
            rows = [x[t:t + 1].reshape(_device_shape(a)) for x, a in zip(xs, self.x_avals)]
            outs = self.body.run(consts + carry + rows, buffers)
            for y, stacked in zip(outs[self.n_carry:], ys):
                copy_into(stacked[t:t + 1], y, buffers)
            carry = _own_copies(self, ("carry", (i + 1) % 2), outs[:self.n_carry], self.carry_avals, buffers)
        env.update(zip(self.eqn.outvars, carry + ys))


STEP_RULES = {lax_cf.while_p: WhileStep, lax_cf.cond_p: CondStep, lax_cf.scan_p: ScanStep}

"""The CUDA backend: a jaxpr's plan (``lowering/fusion.py``) as numba-cuda kernels.

``compile_program(closed, name)`` plans the program exactly as the CPU backend does
(``Planner(scalar_regions=True)``: rank-0 chains are regions too) and turns each region into
the kernels of ``kernels.py``; reshapes and squeezes of contiguous device arrays are views;
transpose, slice, rev, concatenate and dot_general are kernels of ``nodes.py``.  Any other node
(gathers/scatters, dynamic slices, pad, control flow, sorting, cumulative ops, ...)
and complex, float16 or bfloat16 values raise ``CudaUnsupported`` (a ``NotImplementedError``)
naming the primitive or dtype; ``numjax.dispatch`` then runs the whole program on the CPU.

A call copies its inputs to the device, launches the kernels in plan order on the default
stream (intermediates stay on the device, in buffers the executable keeps for its next call)
and copies the outputs back: arrays do not stay on the GPU between calls yet, and a call
returns once its results are on the host.  Importing this module imports numba-cuda.
"""
import logging
import threading
import warnings

import numpy as np

import numba
import numba.core.errors
from numba import cuda

from numjax.array import Array
from numjax.jaxpr import Literal
from numjax.lax import shape as lax_shape
from numjax.lowering import fusion

from . import step_rules
from .compiler import block_size, compile_kernel as _compile, launch, max_blocks
from .kernels import CudaUnsupported, RegionKernels, check_types
from .nodes import NODE_KERNELS

logger = logging.getLogger("numjax")
_lock = threading.Lock()


class RegionStep:
    """The launches of one region: its elementwise kernel, then each reduction."""

    def __init__(self, region):
        self.region = region
        kernels = RegionKernels(region, block_size())
        self.sources = [kernels.element_source]
        elem = _compile(kernels.element_name, kernels.element_source)
        ns = {kernels.element_name: elem}
        self.block = kernels.block
        self.elementwise = None
        ew = kernels.elementwise()
        if ew is not None:
            name, src, n = ew
            self.sources.append(src)
            self.elementwise = (_compile(name, src, ns), n)
        self.reductions = []
        for rk in kernels.reductions(max_blocks()):
            name, src = rk.first()
            self.sources.append(src)
            first = _compile(name, src, ns)
            second = None
            if rk.split > 1:
                name2, src2 = rk.second()
                self.sources.append(src2)
                second = _compile(name2, src2)
            self.reductions.append((rk, first, second))

    def run(self, env, buffers):
        region = self.region
        args = [env_read(env, v) for v in region.inputs]
        if self.elementwise is not None:
            kernel, n = self.elementwise
            outs = [buffers.get((self, "out", k), _device_shape(v), v.aval.dtype)
                    for k, v in enumerate(region.materialize)]
            launch(kernel, n, buffers.stream, *args, *outs)
            env.update(zip(region.materialize, outs))
        for k, (rk, first, second) in enumerate(self.reductions):
            result = rk.red.result
            if rk.n_out == 0:
                env[result] = buffers.get((self, "red", k), _device_shape(result), result.aval.dtype)
                continue
            dtype = rk.out_dtype if second is None else rk.dtype
            part = buffers.get((self, "part", k), (rk.n_out * rk.split,), dtype)
            first[rk.n_out * rk.split, self.block, buffers.stream](*args, part)
            if second is not None:
                out = buffers.get((self, "red", k), (rk.n_out,), rk.out_dtype)
                second[rk.n_out, self.block, buffers.stream](part, out)
                part = out
            env[result] = part.reshape(_device_shape(result))


class ViewStep:
    """reshape/squeeze/expand_dims of a contiguous device array: a view, no launch."""

    def __init__(self, eqn):
        self.src, self.out = eqn.invars[0], eqn.outvars[0]
        self.sources = []

    def run(self, env, buffers):
        env[self.out] = env_read(env, self.src).reshape(_device_shape(self.out))


class NodeStep:
    """A data-movement node or a dot_general: one kernel over the output's points."""

    def __init__(self, eqn):
        self.eqn = eqn
        name, source, self.n = NODE_KERNELS[eqn.primitive](eqn)
        self.sources = [source]
        self.kernel = _compile(name, source)

    def run(self, env, buffers):
        out = self.eqn.outvars[0]
        result = buffers.get((self, "out"), _device_shape(out), out.aval.dtype)
        launch(self.kernel, self.n, buffers.stream, *[env_read(env, v) for v in self.eqn.invars], result)
        env[out] = result


_VIEW_PRIMITIVES = (lax_shape.reshape_p, lax_shape.squeeze_p)


def _transposes(eqn):
    # reshape with ``dimensions`` transposes first: not a view of the contiguous operand.
    return eqn.primitive is lax_shape.reshape_p and eqn.params.get("dimensions") is not None


def _device_shape(v):
    return v.aval.shape if v.aval.shape != () else (1,)


def env_read(env, v):
    if type(v) is Literal:
        return cuda.to_device(np.full(1, v.val, v.aval.dtype))
    return env[v]


def plan_program(closed):
    """The inlined, dead-code-free jaxpr and its steps, or ``CudaUnsupported``."""
    from numjax.interpreters.partial_eval import dce_jaxpr
    from numjax.lowering.compile import inline_jits
    jaxpr = dce_jaxpr(inline_jits(closed.jaxpr))
    check_types(jaxpr)
    return jaxpr, plan_jaxpr(jaxpr)


def plan_jaxpr(jaxpr):
    """The steps running ``jaxpr`` (already inlined and type-checked) on the device, in
    order; ``CudaUnsupported`` names the first primitive without a CUDA lowering.  Rule
    modules (``step_rules.py``) call this for the bodies of control flow."""
    rules = step_rules.step_rules()
    steps = []
    for item in fusion.Planner(scalar_regions=True).plan(jaxpr):
        if isinstance(item, fusion.Region):
            steps.append(RegionStep(item))
        elif isinstance(item, fusion.Node) and item.eqn.primitive in _VIEW_PRIMITIVES \
                and not _transposes(item.eqn):
            steps.append(ViewStep(item.eqn))
        elif isinstance(item, fusion.Node) and item.eqn.primitive in NODE_KERNELS:
            steps.append(NodeStep(item.eqn))
        elif isinstance(item, fusion.Node) and item.eqn.primitive in rules:
            steps.append(rules[item.eqn.primitive](item.eqn))
        else:
            eqn = item.eqn
            raise CudaUnsupported(f"primitive '{eqn.primitive.name}' has no CUDA lowering yet")
    return steps


def run_steps(steps, env, buffers):
    """Run ``steps`` in order: ``env`` maps the jaxpr's variables to device arrays (rank 0 as
    shape ``(1,)``) and receives what the steps define."""
    for step in steps:
        step.run(env, buffers)


def compile_program(closed, name="fn"):
    with _lock:
        jaxpr, steps = plan_program(closed)
    return CudaExecutable(closed, jaxpr, steps, name)


class CudaExecutable:
    """A program of CUDA launches; ``call_arrays`` takes and returns host arrays."""
    backend = "cuda"

    def __init__(self, closed, jaxpr, steps, name):
        self.closed, self.jaxpr, self.steps, self.name = closed, jaxpr, steps, name
        self._out = [a.weak_type for a in closed.out_avals]
        self.source = "".join(f"# ---- {name}\n" + "".join(s + "\n" for s in step.sources)
                              for step in steps if step.sources) or "# no kernels\n"
        self._consts = [np.asarray(getattr(c, "_value", c)) for c in closed.consts]
        self._buffers = Buffers()
        self._lock = threading.Lock()
        self._launched = False
        self._cpu = None     # the CPU executable, if a kernel failed to compile

    def ensure_compiled(self):
        return None

    def specialize(self, vals):
        return None

    def call_arrays(self, vals):
        if self._cpu is not None:
            return self._cpu.call_arrays(vals)
        if self._launched:
            return self._run(vals)
        try:   # numba-cuda compiles each kernel at its first launch
            outs = self._run(vals)
        except numba.core.errors.NumbaError as err:
            logger.warning("numjax: %s runs on the CPU: numba-cuda could not compile one of its "
                           "kernels (%s)", self.name, str(err).splitlines()[0])
            from numjax.lowering.compile import compile_jaxpr
            self._cpu, self.backend = compile_jaxpr(self.closed, self.name), "cpu"
            return self._cpu.call_arrays(vals)
        self._launched = True
        return outs

    def _run(self, vals):
        jx = self.jaxpr
        host = list(self._consts) + [np.asarray(getattr(v, "_value", v)) for v in vals]
        # One call at a time per executable: its device buffers are reused by the next call
        # (every result is copied to the host before this returns).
        with self._lock, warnings.catch_warnings():
            # numba-cuda warns of low occupancy on every small launch; small arrays are normal.
            warnings.filterwarnings("ignore", message=r"(?s).*will likely result in GPU under-utilization")
            env = {}
            for k, (var, value) in enumerate(zip(list(jx.constvars) + list(jx.invars), host)):
                value = np.ascontiguousarray(value, var.aval.dtype).reshape(_device_shape(var))
                buffer = self._buffers.get(("in", k), value.shape, value.dtype)
                buffer.copy_to_device(value)
                env[var] = buffer
            run_steps(self.steps, env, self._buffers)
            outs = []
            for v, weak in zip(jx.outvars, self._out):
                if type(v) is Literal:
                    value = np.full((), v.val, v.aval.dtype)
                else:
                    value = env[v].copy_to_host().reshape(v.aval.shape)
                outs.append(Array(value, weak))
        return outs


class Buffers:
    """Device arrays kept between calls of one executable, by key (a step and its output):
    a program's intermediates and outputs are allocated once, not per call.  ``stream`` is
    the stream every launch of the executable goes on."""

    def __init__(self):
        self._arrays = {}
        self.stream = 0

    def get(self, key, shape, dtype):
        array = self._arrays.get(key)
        if array is None or array.shape != tuple(shape) or array.dtype != np.dtype(dtype):
            array = self._arrays[key] = cuda.device_array(tuple(shape), dtype)
        return array

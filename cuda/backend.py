"""The CUDA backend: a jaxpr's plan (``lowering/fusion.py``) as numba-cuda kernels.

``compile_program(closed, name)`` plans the program exactly as the CPU backend does
(``Planner(scalar_regions=True)``: rank-0 chains are regions too) and turns each region into
the kernels of ``kernels.py``; reshapes and squeezes of contiguous device arrays are views;
transpose, slice, rev and concatenate are kernels of ``nodes.py``; the other nodes (indexing,
cumulative ops, sorting, convolutions, dot_general, control flow, host steps) are steps of the
rule modules in ``step_rules.py``.  A node no rule lowers raises ``CudaUnsupported`` (a
``NotImplementedError``) naming the primitive or dtype; ``numjax.dispatch`` then runs the whole
program on the CPU.  float16, bfloat16 and complex programs are first rewritten into real
values as the CPU backend rewrites them (``value_forms.py``).

A call launches the kernels in plan order on the device's one stream (``memory.stream()``)
and returns without waiting for them: its outputs are ``CudaArray``s (``arrays.py``) that
stay on the device, each holding the event recorded after the launches.  Inputs that are
CudaArrays of the device are read where they are; host inputs are copied in (and the
program's constants once, when it first runs).  Intermediates live in buffers the
executable keeps for its next call (``Buffers``); a buffer that becomes an output is handed
to the output and the next call takes a new one from the caching allocator (``memory.py``).
Importing this module imports numba-cuda.
"""
import logging
import threading
import warnings

import numpy as np

import numba
import numba.core.errors
from numba import cuda

from numjax.jaxpr import Literal
from numjax.lax import shape as lax_shape
from numjax.lowering import fusion

from . import memory, step_rules
from .arrays import CudaArray
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
    """A data-movement node: one kernel over the output's points."""

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
        return _literal_array(v.val, v.aval.dtype)
    return env[v]


_literals = {}


def _literal_array(value, dtype):
    """A literal as a shape ``(1,)`` device array, copied to the device once per process (a
    copy per use would be a host transfer on every call).  Steps never write their operands."""
    host = np.full(1, value, dtype)
    key = (host.dtype.str, host.tobytes())
    array = _literals.get(key)
    if array is None:
        array = _literals[key] = cuda.to_device(host)
    return array


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
    for item in fusion.Planner(scalar_regions=True, row_regions=False).plan(jaxpr):
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
    from . import value_forms   # float16/bfloat16 as bits, complex as real parts, as the CPU does
    rewritten = value_forms.rewrite(closed)
    if rewritten is not None:
        form, wrap = rewritten
        return wrap(compile_program(form, name))
    with _lock:
        jaxpr, steps = plan_program(closed)
    return CudaExecutable(closed, jaxpr, steps, name)


class CudaExecutable:
    """A program of CUDA launches; ``call_arrays`` takes host arrays or CudaArrays and returns
    CudaArrays, once the launches are queued (see the module docstring)."""
    backend = "cuda"

    def __init__(self, closed, jaxpr, steps, name):
        from numjax import dispatch
        self.closed, self.jaxpr, self.steps, self.name = closed, jaxpr, steps, name
        self._out = [a.weak_type for a in closed.out_avals]
        self.source = "".join(f"# ---- {name}\n" + "".join(s + "\n" for s in step.sources)
                              for step in steps if step.sources) or "# no kernels\n"
        self._consts = [np.asarray(getattr(c, "_value", c)) for c in closed.consts]
        self.device = dispatch.cuda_devices()[0]
        self._buffers = Buffers(self.device.id)
        self._const_arrays = None   # [(device array, Block)], made by the first call
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
        buffers = self._buffers
        # One call at a time per executable: its buffers are reused by the next call.
        with buffers.lock, warnings.catch_warnings():
            # numba-cuda warns of low occupancy on every small launch; small arrays are normal.
            warnings.filterwarnings("ignore", message=r"(?s).*will likely result in GPU under-utilization")
            env, held = self._bind_inputs(vals, buffers)
            run_steps(self.steps, env, buffers)
            values = [self._output_value(v, env, held, buffers) for v in self.jaxpr.outvars]
            ready = memory.record_event(buffers.stream)
        return [CudaArray(value, weak, self.device) if block is None else
                CudaArray.on_device(value, block, v.aval.shape, v.aval.dtype, weak, self.device, ready)
                for v, weak, (value, block) in zip(self.jaxpr.outvars, self._out, values)]

    def _bind_inputs(self, vals, buffers):
        """``env`` with the constants and inputs as device arrays, and the Blocks of the
        device memory read in place (an output may be one of them, or a view of one)."""
        jx = self.jaxpr
        if self._const_arrays is None:
            self._const_arrays = [_upload(c, v, buffers.stream) for v, c in zip(jx.constvars, self._consts)]
        env = {}
        held = []
        for var, (array, block) in zip(jx.constvars, self._const_arrays):
            env[var] = array
            held.append(block)
        for k, (var, value) in enumerate(zip(jx.invars, vals)):
            if isinstance(value, CudaArray) and value._device == self.device \
                    and value._dtype == var.aval.dtype:
                env[var] = value.device_value()
                held.append(value._block)
                continue
            host = np.ascontiguousarray(getattr(value, "_value", value), var.aval.dtype)
            array = env[var] = buffers.get(("in", k), _device_shape(var), var.aval.dtype)
            memory.copy_to_device(array, host.reshape(array.shape), buffers.stream)
        return env, held

    def _output_value(self, v, env, held, buffers):
        """``(device array, Block)`` of output ``v`` (the Block it lives in: taken from the
        executable's buffers, or the input's or constant's it is), or ``(host value, None)``
        for a literal or an empty output."""
        if type(v) is Literal:
            return np.full((), v.val, v.aval.dtype), None
        array = env[v]
        if array.size == 0:
            return np.empty(v.aval.shape, v.aval.dtype), None
        pointer = memory.device_pointer(array)
        block = buffers.detach(pointer)
        if block is None:
            block = next((b for b in held if b is not None and b.holds(pointer)), None)
        if block is None:     # neither (a literal's array, memory a step made): copy it
            block = memory.allocate(array.size * array.dtype.itemsize, self.device.id)
            copy = block.view(array.shape, array.dtype)
            copy.copy_to_device(array, stream=buffers.stream)
            array = copy
        held.append(block)    # a second output may be (a view of) the same memory
        return array, block


def _upload(value, var, stream):
    host = np.ascontiguousarray(value, var.aval.dtype).reshape(_device_shape(var))
    if host.size == 0:
        return cuda.device_array(host.shape, host.dtype), None
    block = memory.allocate(host.nbytes)
    array = block.view(host.shape, host.dtype)
    memory.copy_to_device(array, host, stream)
    return array, block


class Buffers:
    """Device arrays kept between calls of one executable, by key (a step and its output):
    a program's intermediates are allocated once, not per call.  ``stream`` is the device's
    stream every launch goes on; ``lock`` is held while a call uses the buffers.  A buffer
    that becomes a program output is ``detach``ed: the output owns its Block from then on."""

    def __init__(self, device_id=0):
        self._arrays = {}      # key -> (device array, Block)
        self.device_id = device_id
        self.stream = memory.stream(device_id)
        self.lock = threading.Lock()
        memory.register_buffers(self)

    def get(self, key, shape, dtype):
        hit = self._arrays.get(key)
        shape, dtype = tuple(shape), np.dtype(dtype)
        if hit is not None and hit[0].shape == shape and hit[0].dtype == dtype:
            return hit[0]
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if nbytes == 0:
            array, block = cuda.device_array(shape, dtype), None
        else:
            block = memory.allocate(nbytes, self.device_id)
            array = block.view(shape, dtype)
        self._arrays[key] = (array, block)
        return array

    def detach(self, pointer):
        """The Block holding device address ``pointer``, no longer kept here; None if none."""
        for key, (array, block) in self._arrays.items():
            if block is not None and block.holds(pointer):
                del self._arrays[key]
                return block
        return None

    def release_if_idle(self):
        """Give every buffer back to the allocator, unless a call is using them now."""
        if self.lock.acquire(blocking=False):
            try:
                self._arrays.clear()
            finally:
                self.lock.release()

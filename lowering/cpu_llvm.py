"""The CPU backend: a jaxpr's fused regions as LLVM IR, one module per program, run by a driver.

A program is a short Python *driver* (generated source, readable and debuggable) that
allocates buffers and calls, in order, the program's region kernels and its library nodes
(BLAS matmuls and numpy data movement) -- a thunk sequence, as XLA's CPU runtime runs one.
The region kernels are the fused loop nests of ``RegionCodegen``, written in numjax's kernel
language and compiled by ``pyir`` to LLVM IR without Numba; all kernels of a program form one
module, compiled once by llvmlite and cached on disk as a relocatable object keyed by the
kernel sources.  A warm process loads that object with ``objload`` and never loads LLVM.

Kernel ABI: ``void k(i64 lo, i64 hi, dims..., inputs..., outputs...)`` behind an entry point
that is a builtin function (``kernel_entry``): it checks and converts its Python arguments,
releases the GIL for large calls, and runs chunked calls (``lo < 0``) on a native runner
(``cpu_runtime.run_chunked``).

Complex values reach it as pairs of real arrays (``complex_parts``); programs it does not
cover (complex ones the rewrite cannot express, e.g. FFTs) raise ``Unsupported`` and go to
the Numba backend (``compile.py``).
"""
import hashlib
import re

import numpy as np

from numjax.array import Array, c_contiguous as _c_contiguous

from . import blas_threads, buffer_pool, buffer_reuse, leading_axis
from . import compile as numba_backend
from .driver_nodes import DRIVER_RULES
from .kernel_program import CONTROL, KERNEL_EQNS, eqn_kernel, heavy_body
from .unsupported import Unsupported


def _driver_nodes():
    """Node primitives whose rules emit plain numpy (or driver_lib) code."""
    from numjax.lax import indexing, linalg, shape
    return frozenset([shape.reshape_p, shape.transpose_p, indexing.slice_p, shape.rev_p,
                      shape.concatenate_p, linalg.dot_general_p, shape.squeeze_p,
                      indexing.dynamic_slice_p, indexing.dynamic_update_slice_p, shape.pad_p])

DRIVER_NODES = _driver_nodes()

# The dtypes ``_check_types`` lets in, as the driver's ``dt_NAME`` globals: np.empty takes a
# dtype ~40 ns faster than a scalar type, and a global is read faster than ``np.empty``.
_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float32", "float64")
_DRIVER_HEADER = """\
# numjax program driver (LLVM backend): buffers and calls in order; k_* are compiled kernels.
import numpy as np
from numjax.lowering import driver_lib as kn
from numjax.lowering.cpu_runtime import run_chunked
from numjax.lowering.buffer_pool import empty as pooled_empty
from numjax.config import config
np_empty = np.empty
""" + "".join(f"dt_{t} = np.dtype('{t}')\n" for t in _DTYPES)


class KernelSpec:
    """One region kernel: its source and its parameter/output signature."""

    def __init__(self, name, source, params, outputs, chunked):
        self.name, self.source, self.params, self.outputs = name, source, params, outputs
        self.chunked = chunked

    def key_text(self):
        return f"{self.name}|{self.params}|{self.outputs}|{self.chunked}\n{self.source}"


class DriverCodegen(numba_backend.Codegen):
    """The program as Python calling kernels: ``Codegen`` with regions as kernel calls."""
    # Rank-0 chains become rank-0 kernels too: the driver runs no scalar math itself.
    planner_options = {"scalar_regions": True}

    def __init__(self, jaxpr, fn_name, specs, scalar_io=False, subfns=None, pyobjects=None):
        super().__init__(jaxpr, fn_name, parallel=True, scalar_io=scalar_io, subfns=subfns)
        self.specs = specs
        self.pyobjects = {} if pyobjects is None else pyobjects
        self._owned = set()          # vars in buffers this driver allocated (``buffer_reuse``)
        self._regions_done = set()   # ids of the equations of the regions emitted so far
        self._readers = None
        self.rank0_buffers = {}
        self._dim_vars = {}      # ``arg.shape[j]`` -> the driver's variable holding it
        self._rank0_params = {}  # a rank-0 argument -> its parameter (a 0-d array)

    def dim(self, size):
        # An argument's size is read once, at the top of the driver: each ``arg.shape[j]``
        # makes a tuple, and a small call's driver would otherwise read one several times.
        src = super().dim(size)
        if not src.startswith("arg"):
            return src
        name = self._dim_vars.get(src)
        if name is None:
            name = self._dim_vars[src] = "d_" + src.replace(".shape[", "_")[:-1]
        return name

    def generate(self):
        if not self.scalar_io:
            jx = self.jaxpr
            self._rank0_params = {v: f"arg{k}" for k, v in enumerate(jx.constvars + jx.invars)
                                  if v.aval.shape == ()}
        head, body = super().generate().split("\n", 1)
        sizes = "".join(f"    {name} = {_size_source(src)}\n" for src, name in self._dim_vars.items())
        return _drop_unread_rank0(f"{head}\n{sizes}{body}")

    def subfunction(self, jaxpr):
        """A loop body or branch as another driver function (for loops run by the driver)."""
        key = id(jaxpr)
        if key not in self.subfns:
            name = f"{self.fn_name}_s{len(self.subfns)}"
            self.subfns[key] = (name, None, jaxpr)     # reserve the name before recursing
            body = numba_backend.inline_jits(getattr(jaxpr, "jaxpr", jaxpr))
            src = DriverCodegen(body, name, self.specs, scalar_io=True, subfns=self.subfns,
                                pyobjects=self.pyobjects).generate()
            self.subfns[key] = (name, src, jaxpr)
        return self.subfns[key][0]

    def _node(self, eqn):
        if eqn.primitive in KERNEL_EQNS:
            control = eqn.primitive in CONTROL
            if not (control and heavy_body(eqn)):
                try:
                    self._eqn_kernel(eqn)
                    return
                except Unsupported:
                    if not control:
                        raise
            # Large matmuls in the body, or nodes kernels lack: the driver runs the loop.
            super()._node(eqn)
            return
        rule = DRIVER_RULES.get(eqn.primitive)
        if rule is not None:
            for line in rule(self, eqn):
                self.emit(line)
            return
        if eqn.primitive not in DRIVER_NODES:
            raise Unsupported(f"primitive {eqn.primitive.name} in the LLVM backend")
        super()._node(eqn)

    def _region(self, region):
        self._regions_done.update(id(e) for e in region.eqns)
        if leading_axis.blocked_region(region):
            return leading_axis.llvm_region(self, region)
        kg = numba_backend.KernelGen(region, True, self.value_ranges)
        in_place = self._in_place(region, kg)
        numba_backend.RegionCodegen(kg, region).generate()
        name, text = kg.source()
        src = "\n".join(line for line in text.splitlines() if not line.startswith("@"))
        spec = _kernel_spec(kg, name, src)
        name = self.register_kernel(name, src, spec.params, spec.outputs, spec.chunked)
        spec = self.specs[name]
        outs = self._buffers(kg.outputs)
        args = [self.dim(d) for d in kg.dims] + [self._scalar_arg(v) for v in kg.inputs] + outs
        if spec.chunked:
            size = " * ".join(self.dim(s) for s in region.shape)
            outer = self.dim(region.shape[0])
            # Below the parallel threshold the kernel runs here (run_chunked would run it
            # serially too): a small call saves run_chunked's frame.
            self.emit(f"if {size} < config.numjax_parallel_threshold:")
            self.emit(f"{name}(0, {outer}, {', '.join(args)})", 2)
            self.emit("else:")
            self.emit(f"run_chunked({name}, {outer}, {size}, "
                      f"({', '.join(args)}{',' if len(args) == 1 else ''}))", 2)
        else:
            self.emit(f"{name}(0, 1, {', '.join(args)})")
        self._bind_outputs(outs, kg.outputs)
        self._bind_outputs([self.name(u) for u in in_place.values()], list(in_place))

    def _in_place(self, region, kg):
        """{result: input}: the elementwise results the kernel stores into the buffer of an
        input that dies with the region (``buffer_reuse``), instead of returning them."""
        if self._readers is None:
            self._readers = buffer_reuse.readers(self.jaxpr)
        taken = buffer_reuse.reused_inputs(region, kg.inputs, kg.outputs, self._owned, self._regions_done,
                                           *self._readers)
        kg.in_place = set(taken)
        kg.outputs = [v for v in kg.outputs if v not in taken]
        for v, u in taken.items():
            kg.out_names[v] = kg.in_names[u]
        return taken

    def register_kernel(self, name, src, params, outputs, chunked):
        """Registers a region kernel; returns its name, suffixed when the same source was
        registered over other types (Numba's source names no types; these kernels are typed
        by their parameters): a kernel of its own."""
        known = self.specs.get(name)
        if known is not None and (known.params, known.outputs) != (params, outputs):
            typed = hashlib.sha256(repr((params, outputs)).encode()).hexdigest()[:8]
            src = src.replace(f"def {name}(", f"def {name}_{typed}(", 1)
            name = f"{name}_{typed}"
        self.specs.setdefault(name, KernelSpec(name, src, params, outputs, chunked))
        return name

    def _eqn_kernel(self, eqn):
        """Control flow, gathers and scatters: the whole equation is one kernel."""
        name, source, params, outputs, inputs = eqn_kernel(eqn)
        self.add_kernel(name, source, params, outputs)
        outs = self._buffers(eqn.outvars)
        args = [self._scalar_arg(v) for v in inputs] + outs
        self.emit(f"{name}(0, 1, {', '.join(args)})")
        self._bind_outputs(outs, eqn.outvars)

    def _buffers(self, outvars):
        """Names of new output buffers for ``outvars``, allocated by the driver: the large ones
        from numjax's pool (``buffer_pool``: no fresh pages to fault in on every call)."""
        outs = [self.tmp("o") for _ in outvars]
        for o, v in zip(outs, outvars):
            alloc = "pooled_empty" if _nbytes(v.aval) >= buffer_pool.THRESHOLD else "np_empty"
            dt = np.dtype(v.aval.dtype).name
            dt = f"dt_{dt}" if dt in _DTYPES else f"np.dtype('{dt}')"
            self.emit(f"{o} = {alloc}({self.shape_src(v.aval.shape)}, {dt})")
        return outs

    def _bind_outputs(self, outs, outvars):
        self._owned.update(v for v in outvars if v.aval.shape != ())
        for o, v in zip(outs, outvars):
            self.emit(f"{self.name(v)} = {o}[()]" if v.aval.shape == () else f"{self.name(v)} = {o}")
            if v.aval.shape == ():
                self.rank0_buffers[v] = o

    def add_kernel(self, name, source, params, outputs, chunked=False):
        """Registers a kernel written in the kernel language (``pyir``) for a driver rule to
        call as ``name(lo, hi, dims/scalars/arrays..., output buffers...)``; returns ``name``.
        ``params``/``outputs`` as ``KernelSpec`` (see ``pyir.Translator.kernel``)."""
        self.specs.setdefault(name, KernelSpec(name, source, params, outputs, chunked))
        return name

    def python_object(self, obj, prefix):
        """A name under which the driver reaches the Python object ``obj`` (a host callback):
        numbered in program order, so equal programs still give equal source."""
        name = f"{prefix}{len(self.pyobjects)}"
        self.pyobjects[name] = obj
        return name

    def _output(self, v):
        # A rank-0 result computed by a kernel is returned as the kernel's 0-d buffer.
        buffer = self.rank0_buffers.get(v)
        return buffer if buffer is not None else super()._output(v)

    def _scalar_arg(self, v):
        # A rank-0 argument converts straight from its 0-d array (no ``arg[()]`` on the way).
        name = self._rank0_params.get(v) or self.name(v)
        if v.aval.shape != ():
            return name
        kind = np.dtype(v.aval.dtype).kind
        return f"float({name})" if kind == "f" else f"bool({name})" if kind == "b" else f"int({name})"


def _size_source(src):
    """``argK.shape[0]`` as ``len(argK)``: no shape tuple made."""
    return f"len({src[:-len('.shape[0]')]})" if src.endswith(".shape[0]") else src


_RANK0_READ = re.compile(r"    (v\d+) = \w+\[\(\)\]")


def _drop_unread_rank0(text):
    """``text`` without reads of rank-0 values (``v = buffer[()]``) that nothing uses: a value
    only returned goes back as its 0-d buffer, and a kernel takes a rank-0 argument from the
    argument itself (each read costs a small call ~25 ns)."""
    lines = text.split("\n")
    unread = {m.group(1) for m in map(_RANK0_READ.fullmatch, lines)
              if m and len(re.findall(rf"\b{m.group(1)}\b", text)) == 1}
    if not unread:
        return text
    return "\n".join(line for line in lines
                     if not ((m := _RANK0_READ.fullmatch(line)) and m.group(1) in unread))


def _nbytes(aval):
    return int(np.prod(aval.shape, dtype=np.int64)) * np.dtype(aval.dtype).itemsize


def _kernel_spec(kg, name, src):
    def shape(v):
        return tuple(kg.dim_names.get(s, int(s)) for s in v.aval.shape)
    params = [("dim",) for _ in kg.dims]
    params += [("scalar", v.aval.dtype.name) if v.aval.shape == () else
               ("array", v.aval.dtype.name, shape(v)) for v in kg.inputs]
    outputs = [(v.aval.dtype.name, shape(v)) for v in kg.outputs]
    return KernelSpec(name, src, params, outputs, "numba.prange" in src)


def lower_program(closed, name="fn"):
    """The driver source and kernel specs of ``closed``, or ``Unsupported``."""
    from numjax.interpreters.partial_eval import dce_jaxpr
    jaxpr = dce_jaxpr(numba_backend.inline_jits(closed.jaxpr))
    _check_types(jaxpr)
    fn_name = "numjax_" + "".join(c if c.isalnum() else "_" for c in name)
    specs, subfns, pyobjects = {}, {}, {}
    body = DriverCodegen(jaxpr, fn_name, specs, subfns=subfns, pyobjects=pyobjects).generate()
    subs = "".join(src + "\n" for _, src, _ in subfns.values())
    return LoweredProgram(_DRIVER_HEADER + subs + body, fn_name, specs, closed, pyobjects)


def _check_types(jaxpr):
    for v in list(jaxpr.invars) + [o for e in jaxpr.eqns for o in e.outvars]:
        dt = np.dtype(v.aval.dtype)
        if dt.kind not in "biuf" or dt == np.float16:
            raise Unsupported(f"{dt.name} values in the LLVM backend")


class LoweredProgram:
    def __init__(self, driver, fn_name, specs, closed, pyobjects=None):
        self.driver, self.fn_name, self.specs, self.closed = driver, fn_name, specs, closed
        self.pyobjects = pyobjects or {}     # driver name -> Python object (host callbacks)
        # The compiler's own version goes in later (cpu_llvm_build.object_key).
        text = "\n".join(s.key_text() for _, s in sorted(specs.items()))
        self.key = hashlib.sha256(text.encode()).hexdigest()

    @property
    def text(self):
        kernels = "".join(f"# ---- kernel {n}\n{s.source}\n" for n, s in sorted(self.specs.items()))
        return kernels + "# ---- program\n" + self.driver

    def llvm_ir(self):
        from . import cpu_llvm_build
        return str(cpu_llvm_build.build_module(self.specs.values()))


def compile_program(closed, name="fn"):
    """An ``Executable`` for ``closed`` with its kernels compiled (or loaded from the cache);
    ``Unsupported`` when this backend does not cover the program."""
    exe = Executable(lower_program(closed, name))
    exe.ensure_compiled()
    return exe


class Executable:
    """A program ready to run: the driver function bound to its loaded kernels."""

    def __init__(self, lowered):
        self.lowered = lowered
        self.source = lowered.text
        self._consts = [_c_contiguous(getattr(c, "_value", c)) for c in lowered.closed.consts]
        self._out = [a.weak_type for a in lowered.closed.out_avals]
        self._fn = None
        self._obj = None

    def ensure_compiled(self):
        if self._fn is None:
            from numjax.config import config
            from . import cpu_llvm_build
            if config.numjax_debug_python:
                self._obj, kernels = None, python_kernels(self.lowered)
            else:
                self._obj = cpu_llvm_build.load_kernels(self.lowered)
                kernels = self._obj.funcs
            namespace = dict(kernels)
            namespace.update(self.lowered.pyobjects)
            exec(compile(self.lowered.driver, f"<numjax driver {self.lowered.fn_name}>", "exec"), namespace)
            fn = namespace[self.lowered.fn_name]
            if blas_threads.calls_blas(self.lowered.closed.jaxpr):
                fn = blas_threads.limited(fn)    # BLAS's threads and numjax's share the cores
            self._fn = fn
        return self._fn

    def call_arrays(self, vals):
        fn = self._fn or self.ensure_compiled()
        vals = [v if type(v) is np.ndarray and v.flags.c_contiguous else _c_contiguous(getattr(v, "_value", v))
                for v in vals]
        outs = fn(*self._consts, *vals) if self._consts else fn(*vals)
        return [Array(o, w) for o, w in zip(outs, self._out)]

    def specialize(self, vals):
        """The driver itself serves as the fast entry point (no per-call type dispatch)."""
        if self._consts or any(type(v) is not np.ndarray or not v.flags.c_contiguous for v in vals):
            return None
        return self._fn or self.ensure_compiled()


def python_kernels(lowered):
    """The kernels as plain Python functions with the compiled kernels' calling convention:
    ``numjax.config.update("numjax_debug_python", True)`` runs programs this way, so a
    debugger can step through every loop (slowly)."""
    from . import scalar_helpers, vmath
    from .cpu_llvm_build import python_namespace
    namespace = python_namespace(vmath, scalar_helpers)
    kernels = {}
    for name, spec in lowered.specs.items():
        exec(compile(spec.source, f"<numjax kernel {name}>", "exec"), namespace)
        kernels[name] = _python_kernel(namespace[name], spec)
    return kernels


def _python_kernel(fn, spec):
    n_in = len(spec.params)

    def call(lo, hi, *args):
        if lo != 0:          # chunk calls: the first computes everything
            return
        results = fn(*args[:n_in])
        for out, res in zip(args[n_in:], results):
            out[...] = res
    return call

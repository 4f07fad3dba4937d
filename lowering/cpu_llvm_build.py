"""Building, caching and loading the LLVM module of a program's kernels.

``build_module`` translates every kernel with ``pyir`` and adds its Python entry point;
``compile_object`` runs llvmlite (O3, host CPU) to a relocatable object; ``load_kernels``
returns the kernels as builtin functions, taking the object from the disk cache when a
verified entry exists (no LLVM in the process then) and writing it there after a compile.

Nothing process-specific is compiled in: the object's external symbols (malloc, free, libm,
the Python C API, numpy's array type) are resolved when it is loaded.
"""
import hashlib
import logging
import os
import platform
import sys
import threading
import time
import weakref

import numpy as np

from . import kernel_entry, objload

logger = logging.getLogger("numjax")

OPT = 3               # LLVM optimization level of every program module
# LLVM's loop unroller is off: our loops are vectorized (and interleaved, which reductions
# need: a row softmax runs 1.8x slower without it) and pyir already unrolls short loops;
# the unroller added ~20% to the compile time of a program (35 of 175 ms for the MLP
# gradient) and nothing measurable to run time (benchmarks/RESULTS.md, fourth session).
LOOP_UNROLLING = False
LOOP_INTERLEAVING = True
RUNTIME_CODEGEN_OPT = 0
_lock = threading.RLock()
_llvm_ready = False
_loaded = weakref.WeakValueDictionary()   # program key -> LoadedKernels alive in this process


class LoadedKernels:
    """A program's loaded object and its kernels' functions.  Held by the programs'
    executables (and the functions by their drivers): when the last one goes (its jitted
    function was dropped), the object code is unmapped."""
    __slots__ = ("obj", "funcs", "origin", "__weakref__")

    def __init__(self, obj, funcs, origin):
        self.obj, self.funcs = obj, funcs
        self.origin = origin      # "compiled" or "disk cache": what this process did


def build_module(specs):
    """The kernels' module; their entry points are in its ``entry_module`` (compile_object
    links them in after optimizing the kernels)."""
    from llvmlite import ir
    from . import pyir, scalar_helpers, vmath
    mod = ir.Module(name="numjax_program")
    mod.entry_module = ir.Module(name="numjax_entries")
    tr = pyir.Translator(mod)
    namespace = _kernel_globals(vmath, scalar_helpers)
    for spec in specs:
        body = tr.kernel(spec.source, spec.name, spec.params, spec.outputs, namespace)
        body.attributes.add("noinline")     # one copy of the loop nest, called by the entry point
        declared = ir.Function(mod.entry_module, body.function_type, body.name)
        kernel_entry.entry_point(mod.entry_module, spec, declared)
    return mod


class _NumbaShim:
    """``numba.prange`` in kernel source: the chunked loop (pyir reads the name)."""

    @staticmethod
    def prange(*args):
        return range(*args)


def _special_namespace():
    """``sp`` in kernel source: special_helpers' plain functions (reading them off the module
    would jit it for the Numba backend; pyir reads the functions' source)."""
    import types
    from . import special_helpers
    return types.SimpleNamespace(**special_helpers.PLAIN)


def _kernel_globals(vmath, scalar_helpers):
    import math
    return {"np": np, "math": math, "numba": _NumbaShim, "vm": vmath, "sh": scalar_helpers,
            "sp": _special_namespace()}


def python_namespace(vmath, scalar_helpers):
    """Globals for running kernel source as Python: the plain (un-jitted) math functions."""
    import types
    vm = types.SimpleNamespace(**{**vars(vmath), **vmath.PLAIN})
    sh = types.SimpleNamespace(**{**vars(scalar_helpers), **scalar_helpers.PLAIN})
    return {**_kernel_globals(vmath, scalar_helpers), "vm": vm, "sh": sh}


def _target_machine(codegen_opt=None):
    global _llvm_ready
    import llvmlite.binding as llvm
    if not _llvm_ready:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _llvm_ready = True
    target = llvm.Target.from_default_triple()
    return llvm, target.create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
        opt=OPT if codegen_opt is None else codegen_opt, reloc="pic", codemodel="default")


def compile_object(module, codegen_opt=None):
    """Object code of ``module`` (optimized at ``OPT``; ``codegen_opt`` overrides the
    instruction selection level)."""
    llvm, tm = _target_machine(codegen_opt)

    def parse(m):
        m.triple, m.data_layout = tm.triple, str(tm.target_data)
        parsed = llvm.parse_assembly(str(m))
        parsed.verify()
        return parsed
    mod = parse(module)
    pto = llvm.create_pipeline_tuning_options(speed_level=OPT)
    pto.loop_vectorization = pto.slp_vectorization = True
    pto.loop_unrolling, pto.loop_interleaving = LOOP_UNROLLING, LOOP_INTERLEAVING
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    entries = getattr(module, "entry_module", None)
    if entries is not None:
        called = entries.globals.get(kernel_entry.ENTRY_SYMBOL)
        if called is not None and called.is_declaration:
            load_runtime()          # what the entry points call must be bound when loaded
        # Entry points skip the optimization pipeline: they are straight-line checks and
        # calls that instruction selection alone makes as fast (measured), and llvmlite's
        # pipeline keeps memory per optimized function for good (~110 KB a one-kernel
        # program, ~50 KB of it the entry point's).
        mod.link_in(parse(entries))
    return tm.emit_object(mod)


def machine_key():
    """What besides the source decides the object code: CPU model and features, OS, llvmlite."""
    import llvmlite
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("model name", "flags", "Features", "CPU part")):
                    cpu += line
                if line.strip() == "":
                    break
    except OSError:
        cpu = platform.processor()
    return f"{platform.system()}|{platform.machine()}|{llvmlite.__version__}|{cpu}"


_machine_key = None


def _object_key(what):
    """The cache key of an object compiled from ``what`` on this machine, by this compiler,
    for this interpreter (entry points call its C API)."""
    global _machine_key
    if _machine_key is None:
        _machine_key = hashlib.sha256((machine_key() + _compiler_key()).encode()).hexdigest()
    abi = f"{kernel_entry.ENTRY_FORMAT}|{sys.implementation.cache_tag}|{getattr(sys, 'abiflags', '')}"
    return hashlib.sha256(f"{what}|{abi}|{_machine_key}".encode()).hexdigest()


def _compiler_key():
    """The translator and the math library are part of what an object was compiled from:
    an edit to them must not load objects built by the old code."""
    digest = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("pyir.py", "pyir_builtins.py", "pyir_strips.py", "cpu_llvm.py", "cpu_llvm_build.py", "kernel_entry.py",
                 "vmath.py", "vmath_sincos.py", "scalar_helpers.py", "special_helpers.py"):
        with open(os.path.join(here, name), "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def object_key(lowered):
    return _object_key(lowered.key)


_runtime = None     # the runtime object, loaded once per process and never released


def load_runtime():
    """The runtime object (``numjax_entry``, which every entry point calls), from the disk
    cache or compiled once per machine; binds ``numjax_entry`` for the objects loaded after
    it.  Loaded once per process and never released."""
    global _runtime
    with _lock:
        if _runtime is None:
            from . import diskcache
            kernel_entry.check_layout()
            key, symbol = _object_key("runtime"), kernel_entry.ENTRY_SYMBOL
            data, obj = diskcache.read_entry("obj", key), None
            if data is not None:
                try:
                    obj = objload.load(data, {})
                    obj.address(symbol)
                except Exception as err:   # noqa: BLE001  (a cache entry must never stop a program)
                    logger.warning("numjax: cached kernel runtime unusable (%s); recompiling", err)
                    obj = None
            if obj is None:
                data = compile_object(kernel_entry.runtime_module(), RUNTIME_CODEGEN_OPT)
                obj = objload.load(data, {})
                diskcache.write_entry("obj", key, data)
            objload.define_symbol(symbol, obj.address(symbol))
            _runtime = obj
        return _runtime


def load_kernels(lowered):
    """``LoadedKernels`` for ``lowered``, compiling if needed."""
    key = object_key(lowered)
    with _lock:
        hit = _loaded.get(key)
        if hit is not None:
            return hit
        from . import diskcache
        load_runtime()
        obj, origin, how = None, "disk cache", "loaded from the disk cache"
        data = diskcache.read_entry("obj", key)
        if data is not None:
            try:
                obj = objload.load(data, {})
                funcs = kernel_entry.kernel_functions(obj, lowered.specs)
            except Exception as err:   # noqa: BLE001  (a cache entry must never stop a program)
                # A verified entry that still does not load (another llvmlite wrote it?):
                # recompile and replace it.
                logger.warning("numjax: cached kernels of %s unusable (%s); recompiling",
                               lowered.fn_name, err)
                obj = None
        if obj is None:
            t0 = time.perf_counter()
            data = compile_object(build_module(lowered.specs.values()))
            origin, how = "compiled", f"compiled in {(time.perf_counter() - t0) * 1e3:.1f} ms"
            obj = objload.load(data, {})
            funcs = kernel_entry.kernel_functions(obj, lowered.specs)
            diskcache.write_entry("obj", key, data)
        _log_compile(lowered, how)
        hit = _loaded[key] = LoadedKernels(obj, funcs, origin)
        return hit


def _log_compile(lowered, how):
    from numjax.config import config
    if config.jax_log_compiles:
        logger.warning("Finished LLVM kernels of %s (%d kernels): %s", lowered.fn_name,
                       len(lowered.specs), how)


# The kernels' bodies through ctypes, past their entry points (tests, debugging).
_ctypes_function = kernel_entry.ctypes_function
_check_layout = kernel_entry.check_layout

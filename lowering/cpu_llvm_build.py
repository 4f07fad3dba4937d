"""Building, caching and loading the LLVM module of a program's kernels.

``build_module`` translates every kernel with ``pyir`` and adds its ctypes entry wrapper;
``compile_object`` runs llvmlite (O3, host CPU) to a relocatable object; ``load_kernels``
returns ctypes callables, taking the object from the disk cache when a verified entry exists
(no LLVM in the process then) and writing it there after a compile.

Nothing process-specific is compiled in: the object's external symbols (malloc, free, libm)
are resolved when it is loaded.
"""
import ctypes
import hashlib
import logging
import os
import platform
import threading
import time
import weakref

import numpy as np

from .unsupported import Unsupported

logger = logging.getLogger("numjax")

# Entry wrappers read an ndarray's data pointer straight from the object: in CPython's
# PyArrayObject it follows the object header (checked once per process, _check_layout).
_DATA_OFFSET = 16
OPT = 3               # LLVM optimization level of every program module
_lock = threading.RLock()
_llvm_ready = False
_loaded = weakref.WeakValueDictionary()   # program key -> LoadedKernels alive in this process


class LoadedKernels:
    """A program's loaded object and its kernels' ctypes functions.  Held by the programs'
    executables only: when the last one goes (its jitted function was dropped), the object
    code is unmapped."""
    __slots__ = ("obj", "funcs", "origin", "__weakref__")

    def __init__(self, obj, funcs, origin):
        self.obj, self.funcs = obj, funcs
        self.origin = origin      # "compiled" or "disk cache": what this process did


def build_module(specs):
    from llvmlite import ir
    from . import pyir, scalar_helpers, vmath
    mod = ir.Module(name="numjax_program")
    tr = pyir.Translator(mod)
    namespace = _kernel_globals(vmath, scalar_helpers)
    for spec in specs:
        inner = tr.kernel(spec.source, spec.name + "_body", spec.params, spec.outputs, namespace)
        inner.linkage = "internal"
        inner.attributes.add("alwaysinline")
        _entry_wrapper(mod, spec, inner)
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


def _entry_wrapper(mod, spec, inner):
    """``void NAME(i64 lo, i64 hi, params..., outs...)`` with arrays as ``PyObject*``."""
    from llvmlite import ir
    from . import pyir
    i8p = ir.IntType(8).as_pointer()
    args, is_array = [ir.IntType(64), ir.IntType(64)], [False, False]
    for p in spec.params:
        if p[0] == "dim":
            args.append(ir.IntType(64))
        elif p[0] == "scalar":
            t = pyir.lltype(p[1])
            args.append(ir.IntType(8) if t == ir.IntType(1) else t)   # ctypes passes bools as bytes
        else:
            args.append(i8p)
        is_array.append(p[0] == "array")
    args += [i8p] * len(spec.outputs)
    is_array += [True] * len(spec.outputs)
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), args), spec.name)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    call_args = []
    for a, t, array in zip(fn.args, inner.function_type.args, is_array):
        if array:
            slot = b.gep(a, [ir.Constant(ir.IntType(64), _DATA_OFFSET)])
            data = b.load(b.bitcast(slot, i8p.as_pointer()))
            call_args.append(b.bitcast(data, t))
        elif a.type != t:
            call_args.append(b.trunc(a, t))
        else:
            call_args.append(a)
    b.call(inner, call_args)
    b.ret_void()


def _target_machine():
    global _llvm_ready
    import llvmlite.binding as llvm
    if not _llvm_ready:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _llvm_ready = True
    target = llvm.Target.from_default_triple()
    return llvm, target.create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
        opt=OPT, reloc="pic", codemodel="default")


def compile_object(module):
    llvm, tm = _target_machine()
    module.triple = tm.triple
    module.data_layout = str(tm.target_data)
    mod = llvm.parse_assembly(str(module))
    mod.verify()
    pto = llvm.create_pipeline_tuning_options(speed_level=OPT)
    pto.loop_vectorization = pto.slp_vectorization = True
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
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


def _compiler_key():
    """The translator and the math library are part of what an object was compiled from:
    an edit to them must not load objects built by the old code."""
    digest = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("pyir.py", "pyir_builtins.py", "cpu_llvm.py", "cpu_llvm_build.py", "vmath.py",
                 "scalar_helpers.py", "special_helpers.py"):
        with open(os.path.join(here, name), "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def object_key(lowered):
    global _machine_key
    if _machine_key is None:
        _machine_key = hashlib.sha256((machine_key() + _compiler_key()).encode()).hexdigest()
    return hashlib.sha256(f"{lowered.key}|{_machine_key}".encode()).hexdigest()


def load_kernels(lowered):
    """``LoadedKernels`` for ``lowered``, compiling if needed."""
    key = object_key(lowered)
    with _lock:
        hit = _loaded.get(key)
        if hit is not None:
            return hit
        from . import diskcache, objload
        _check_layout()
        obj, origin, how = None, "disk cache", "loaded from the disk cache"
        data = diskcache.read_entry("obj", key)
        if data is not None:
            try:
                obj = objload.load(data, {})
            except Exception as err:   # noqa: BLE001  (a cache entry must never stop a program)
                # A verified entry that still does not load (another llvmlite wrote it?):
                # recompile and replace it.
                logger.warning("numjax: cached kernels of %s unusable (%s); recompiling", lowered.fn_name, err)
        if obj is None:
            t0 = time.perf_counter()
            data = compile_object(build_module(lowered.specs.values()))
            origin, how = "compiled", f"compiled in {(time.perf_counter() - t0) * 1e3:.1f} ms"
            obj = objload.load(data, {})
            diskcache.write_entry("obj", key, data)
        _log_compile(lowered, how)
        funcs = {name: _ctypes_function(obj.address(name), spec) for name, spec in lowered.specs.items()}
        hit = _loaded[key] = LoadedKernels(obj, funcs, origin)
        return hit


def _log_compile(lowered, how):
    from numjax.config import config
    if config.jax_log_compiles:
        logger.warning("Finished LLVM kernels of %s (%d kernels): %s", lowered.fn_name,
                       len(lowered.specs), how)


_CTYPES = {"bool": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32,
           "int64": ctypes.c_int64, "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16,
           "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64, "float32": ctypes.c_float,
           "float64": ctypes.c_double}


def _ctypes_function(addr, spec):
    argtypes = [ctypes.c_int64, ctypes.c_int64]
    for p in spec.params:
        argtypes.append(ctypes.c_int64 if p[0] == "dim" else _CTYPES[p[1]] if p[0] == "scalar"
                        else ctypes.py_object)
    argtypes += [ctypes.py_object] * len(spec.outputs)
    return ctypes.CFUNCTYPE(None, *argtypes)(addr)


_layout_ok = False


def _check_layout():
    global _layout_ok
    if not _layout_ok:
        a = np.empty(3)
        if ctypes.c_void_p.from_address(id(a) + _DATA_OFFSET).value != a.ctypes.data:
            raise Unsupported("numpy array layout differs from the one entry wrappers read")
        _layout_ok = True

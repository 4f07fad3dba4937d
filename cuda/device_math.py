"""The math that CUDA kernel source calls: ``dm_<name>_<f32|f64>`` and ``sh_<helper>``.

numba-cuda does not take numpy's math ufuncs on scalars in device code, so the CUDA backend's
scalar rules (``kernels.CUDA_OVERRIDES``) spell transcendental and rounding functions as
``dm_<libdevice name>_<f32|f64>``: on a GPU each is the libdevice function of that precision
(``expf``/``exp``, ...); on the simulator, the numpy function computed in that dtype.  The
small integer and comparison helpers of ``lowering/scalar_helpers.py`` are the very same
functions, compiled as device functions and reached as ``sh_<name>`` (a module attribute is
not a global numba-cuda can type).  ``dm_shfl_down`` is ``cuda.shfl_down_sync`` on a GPU and
an emulation of it on the simulator (which has none), for the reductions' warp steps.
"""
import threading
import weakref

import numpy as np
from numba import cuda

from numjax.lowering import scalar_helpers, vmath

# libdevice base name -> numpy function (the simulator's meaning), by arity.
UNARY = {"exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "sqrt": np.sqrt,
         "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
         "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
         "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "exp2": np.exp2,
         "cbrt": np.cbrt, "floor": np.floor, "ceil": np.ceil, "rint": np.rint, "trunc": np.trunc}
BINARY = {"atan2": np.arctan2, "pow": np.power, "fmod": np.fmod, "nextafter": np.nextafter,
          "copysign": np.copysign}
SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


def _erf_simulated(dtype, complement):
    import math
    cast = dtype.type
    if complement:
        return lambda x: cast(math.erfc(float(x)))
    return lambda x: cast(math.erf(float(x)))


def _simulated(fn, dtype, arity):
    cast = dtype.type
    if arity == 1:
        return lambda x: cast(fn(cast(x)))
    return lambda x, y: cast(fn(cast(x), cast(y)))


def namespace(device_function, simulator):
    """Globals for kernel source: every ``dm_*`` and ``sh_*`` name."""
    names = {}
    if not simulator:
        from numba.cuda import libdevice
    for dtype, suffix in SUFFIX.items():
        single = dtype == np.float32
        for table, arity in ((UNARY, 1), (BINARY, 2)):
            for base, fn in table.items():
                if simulator:
                    names[f"dm_{base}_{suffix}"] = device_function(_simulated(fn, dtype, arity))
                else:
                    names[f"dm_{base}_{suffix}"] = getattr(libdevice, base + ("f" if single else ""))
        for base, complement in (("erf", False), ("erfc", True)):
            names[f"dm_{base}_{suffix}"] = (device_function(_erf_simulated(dtype, complement)) if simulator
                                            else getattr(libdevice, base + ("f" if single else "")))
    for name, fn in scalar_helpers.PLAIN.items():
        names[f"sh_{name}"] = device_function(fn)
    names.update(_bits_and_fma(device_function, simulator))
    names["dm_shfl_down"] = device_function(_simulated_shfl_down) if simulator else cuda.shfl_down_sync
    names["vm_threefry2x32_xor"] = _rebound(vmath, device_function)["threefry2x32_xor"]
    return names


_warps_lock = threading.Lock()
_warps = weakref.WeakKeyDictionary()     # a launch's fake cuda module -> {warp: (barrier, values)}
_BARRIER_TIMEOUT_S = 120


def _simulated_shfl_down(mask, value, delta):
    """``cuda.shfl_down_sync`` for the simulator, which has none: the value of lane
    ``lane + delta`` of this thread's warp (its own past lane 31).  The warp's 32 threads
    (Python threads there) exchange values through a list, between two waits on a barrier
    of the warp; blocks are whole warps, and all 32 lanes call it, as the full ``mask``
    says.  While a launch runs, the simulator swaps this module's ``cuda`` for the launch's
    own module object, which keys the warps' state (its blocks run one after another)."""
    lane, warp = cuda.threadIdx.x % 32, cuda.threadIdx.x // 32
    with _warps_lock:
        warps = _warps.setdefault(cuda, {})
        if warp not in warps:
            warps[warp] = (threading.Barrier(32), [None] * 32)
        barrier, values = warps[warp]
    values[lane] = value
    barrier.wait(timeout=_BARRIER_TIMEOUT_S)     # a lane that failed breaks it: no hang
    got = values[lane + delta] if lane + delta < 32 else value
    barrier.wait(timeout=_BARRIER_TIMEOUT_S)
    return got


def _bits_and_fma(device_function, simulator):
    """Bit reinterpretation (bitcast_convert_type), fused multiply-add (random_bits' mul_add)
    and erf_inv: libdevice on a GPU, vmath's plain (exactly rounded) functions on the simulator."""
    if simulator:
        import scipy.special
        plain = vmath.PLAIN
        pick = {"f32_from_bits": plain.get("_f32_from_bits", vmath._f32_from_bits),
                "f32_bits": plain.get("_f32_bits", vmath._f32_bits),
                "f64_from_bits": plain.get("_f64_from_bits", vmath._f64_from_bits),
                "f64_bits": plain.get("_f64_bits", vmath._f64_bits),
                "fma_f32": plain.get("_fma_f32", vmath._fma_f32), "fma_f64": plain.get("_fma", vmath._fma),
                "erfinv_f32": lambda x: np.float32(scipy.special.erfinv(np.float32(x))),
                "erfinv_f64": lambda x: np.float64(scipy.special.erfinv(np.float64(x)))}
        return {f"dm_{k}": device_function(fn) for k, fn in pick.items()}
    from numba.cuda import libdevice
    return {"dm_f32_from_bits": libdevice.int_as_float, "dm_f32_bits": libdevice.float_as_int,
            "dm_f64_from_bits": libdevice.longlong_as_double, "dm_f64_bits": libdevice.double_as_longlong,
            "dm_fma_f32": libdevice.fmaf, "dm_fma_f64": libdevice.fma,
            "dm_erfinv_f32": libdevice.erfinvf, "dm_erfinv_f64": libdevice.erfinv}


def _rebound(module, device_function):
    """The module's plain (``PLAIN``) functions as device functions calling each other: copies
    of each function whose globals name the device versions (the module's own attributes may
    be CPU dispatchers by now)."""
    import types
    scope = dict(vars(module))
    for name, fn in module.PLAIN.items():
        copy = types.FunctionType(fn.__code__, scope, name, fn.__defaults__, fn.__closure__)
        scope[name] = device_function(copy)
    return scope

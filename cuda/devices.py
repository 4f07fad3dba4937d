"""Which CUDA GPUs this process can use, found without importing numba-cuda or cuda-python.

``import numjax`` must stay cheap and must not touch the CUDA packages, so the question "is
there a GPU?" is answered through the driver library itself (``libcuda``, loaded with ctypes,
standard library only) the first time a backend is chosen.  numba-cuda is imported only once
a program is compiled for the GPU (``numjax.cuda.backend``).

The CUDA *simulator* (``NUMBA_ENABLE_CUDASIM=1``) is never picked automatically (CI sets that
variable for every run); a program runs on it only when the CUDA backend is asked for by name
(``NUMJAX_PLATFORMS=cuda``, ``JAX_PLATFORMS=cuda`` or ``jax.config.update('jax_platforms',
'cuda')``).
"""
import ctypes
import importlib.util
import os
import threading

_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76


class CudaDevice:
    """One CUDA GPU, as JAX names it (``CudaDevice(id=0)``; its platform is ``"gpu"``)."""
    platform = "gpu"

    def __init__(self, id, device_kind="cuda", compute_capability=None):  # noqa: A002
        self.id = id
        self.device_kind = device_kind
        self.compute_capability = compute_capability   # (major, minor); None on the simulator

    def __repr__(self):
        return f"CudaDevice(id={self.id})"

    def __eq__(self, other):
        return isinstance(other, CudaDevice) and other.id == self.id

    def __hash__(self):
        return hash(("gpu", self.id))


_lock = threading.Lock()
_found = None      # list of CudaDevice on real hardware, once probed


def simulator_enabled():
    """Whether numba-cuda would run kernels on its simulator (``NUMBA_ENABLE_CUDASIM=1``)."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def numba_cuda_installed():
    """numba-cuda present (looked up, not imported)."""
    return importlib.util.find_spec("numba_cuda") is not None


def gpu_devices():
    """The real GPUs (an empty list without a CUDA driver or without numba-cuda), probed once."""
    global _found
    if _found is None:
        with _lock:
            if _found is None:
                # The driver first: without one (most machines) no package is looked up.
                found = _probe_driver()
                _found = found if found and numba_cuda_installed() else []
    return list(_found)


def _probe_driver():
    lib = _load_libcuda()
    if lib is None or lib.cuInit(0) != 0:
        return []
    count = ctypes.c_int(0)
    if lib.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return []
    devices = []
    for ordinal in range(count.value):
        handle = ctypes.c_int(0)
        if lib.cuDeviceGet(ctypes.byref(handle), ordinal) != 0:
            continue
        name = ctypes.create_string_buffer(256)
        lib.cuDeviceGetName(name, 256, handle)
        major, minor = ctypes.c_int(0), ctypes.c_int(0)
        lib.cuDeviceGetAttribute(ctypes.byref(major), _CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle)
        lib.cuDeviceGetAttribute(ctypes.byref(minor), _CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle)
        devices.append(CudaDevice(ordinal, name.value.decode(errors="replace"), (major.value, minor.value)))
    return devices


def _load_libcuda():
    # dlopen by soname only: ctypes.util.find_library would run ldconfig (tens of ms on every
    # first compile of a process).
    for candidate in ("libcuda.so.1", "libcuda.so"):
        try:
            return ctypes.CDLL(candidate)
        except OSError:
            continue
    return None


def simulated_devices():
    """The one device the simulator presents."""
    return [CudaDevice(0, "CUDA simulator", None)]


def available_devices(explicit):
    """The CUDA devices a program may use: the real GPUs; when none and ``explicit`` (the CUDA
    backend was asked for by name) with the simulator enabled, the simulator's device."""
    found = gpu_devices() if not simulator_enabled() else []
    if not found and explicit and simulator_enabled() and numba_cuda_installed():
        return simulated_devices()
    return found

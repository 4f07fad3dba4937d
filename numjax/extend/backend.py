"""``jax.extend.backend``: numjax has one backend, the CPU one compiled by Numba/LLVM."""
from ..api import devices as _devices


class CpuBackend:
    platform = "cpu"
    platform_version = "numjax"

    def devices(self):
        return _devices()

    def local_devices(self):
        return _devices()

    def device_count(self):
        return len(_devices())

    local_device_count = device_count


_cpu = CpuBackend()


def get_backend(platform=None):
    if platform not in (None, "cpu"):
        raise RuntimeError(f"Unknown backend {platform}: numjax has only 'cpu'")
    return _cpu


def backends():
    return {"cpu": _cpu}


def get_default_device():
    return _devices()[0]


def clear_backends():
    """numjax's backend keeps no state that clearing would reset."""


def clear_in_memory_compilation_cache():
    """numjax's compiled programs live on their jaxprs and are freed with them."""

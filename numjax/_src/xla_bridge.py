"""``jax._src.xla_bridge``: the backend registry libraries peek at.

chex's ``set_n_cpu_devices`` reads ``_backends`` to tell whether the CPU backend has started
(after which the device count is fixed, as in JAX); numjax starts it when devices are first
asked for (``numjax.api._devices``)."""
from ..extend.backend import backends as _all_backends, get_backend  # noqa: F401

_backends = {}      # filled with {"cpu": backend} when the devices are made


def _started():
    _backends.update(_all_backends())


def devices(backend=None):
    from ..api import devices as _devices
    return _devices(backend)


def device_count(backend=None):
    from ..api import device_count as _count
    return _count(backend)


def process_index(backend=None):
    from ..api import process_index as _index
    return _index(backend)

"""numjax.sharding: the names of ``jax.sharding`` that libraries annotate with.

numjax runs on host CPU "devices" only; these classes describe placements but do not
move data.  ``Sharding`` is the common base so ``isinstance(s, jax.sharding.Sharding)``
holds for every sharding numjax hands out.
"""
import abc
import enum

import numpy as np

from .api import SingleDeviceSharding

__all__ = ["AbstractMesh", "AxisType", "get_abstract_mesh", "Mesh", "NamedSharding", "PartitionSpec", "Sharding",
           "SingleDeviceSharding", "replicated_sharding"]


class Sharding(abc.ABC):
    """Base class of all shardings."""


# SingleDeviceSharding is defined in api.py (Array.sharding uses it); make it a Sharding.
Sharding.register(SingleDeviceSharding)


class AxisType(enum.Enum):
    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()


class PartitionSpec(tuple):
    """How each array axis is split over mesh axes (None: not split)."""

    def __new__(cls, *partitions):
        return super().__new__(cls, partitions)

    def __repr__(self):
        return f"PartitionSpec{tuple.__repr__(self)}"


class Mesh:
    """A named grid of devices."""

    def __init__(self, devices, axis_names, axis_types=None):
        self.devices = np.asarray(devices, dtype=object)
        self.axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if self.axis_names and self.devices.ndim != len(self.axis_names):
            raise ValueError(f"Mesh: devices has {self.devices.ndim} dimensions but "
                             f"{len(self.axis_names)} axis_names {self.axis_names} were given")
        self.axis_types = tuple(axis_types) if axis_types is not None else \
            (AxisType.Auto,) * len(self.axis_names)

    @property
    def shape(self):
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def are_all_axes_explicit(self):
        # As JAX: False for the empty mesh.
        return bool(self.axis_types) and all(t is AxisType.Explicit for t in self.axis_types)

    @property
    def empty(self):
        return self.devices.size == 0


class NamedSharding(Sharding):
    """A placement given by a mesh and a PartitionSpec."""

    def __init__(self, mesh, spec, memory_kind=None):
        self.mesh, self.spec, self.memory_kind = mesh, spec, memory_kind

    @property
    def device_set(self):
        return set(self.mesh.devices.flat)

    @property
    def is_fully_replicated(self):
        return all(p is None for p in self.spec)

    def __repr__(self):
        return f"NamedSharding(mesh={self.mesh.shape}, spec={self.spec!r})"


EMPTY_MESH = Mesh([], ())


class AbstractMesh:
    """A mesh's axis names and sizes, without devices."""

    def __init__(self, axis_sizes, axis_names, axis_types=None):
        self.axis_sizes, self.axis_names = tuple(axis_sizes), tuple(axis_names)
        self.axis_types = tuple(axis_types) if axis_types is not None else \
            (AxisType.Auto,) * len(self.axis_names)

    shape = property(lambda self: dict(zip(self.axis_names, self.axis_sizes)))
    empty = property(lambda self: not self.axis_names)
    size = property(lambda self: int(np.prod(self.axis_sizes, dtype=np.int64)))

    def __repr__(self):
        return f"AbstractMesh({self.shape})"


def get_abstract_mesh():
    """The mesh set by ``jax.set_mesh``; numjax sets none, so it is the empty mesh."""
    return AbstractMesh((), ())


def replicated_sharding(ndim):
    """``jax.typeof(x).sharding`` outside any mesh: replicated over the empty mesh."""
    return NamedSharding(EMPTY_MESH, PartitionSpec(*(None,) * ndim))

"""numjax.sharding: JAX's sharding API (meshes, NamedSharding, PartitionSpec, set_mesh, reshard).

Design.  numjax computes a jitted program as ONE global program on the host (its compiled CPU
programs are already multi-threaded), so a sharding is placement metadata plus the checks JAX
makes, not a split of the computation:

* ``device_put(x, NamedSharding(mesh, spec))`` (and ``reshard``, ``jit(in_shardings=...)``,
  ``jit(out_shardings=...)``) checks the spec against the value (rank, mesh axis names,
  divisibility: JAX's errors) and returns an Array holding the whole global value that
  records the sharding; ``x.sharding``, ``x.addressable_shards``, ``x.addressable_data(i)``,
  ``x.is_fully_replicated``/``x.is_fully_addressable`` answer from it as JAX's do.
* The sharding of a jitted function's outputs is ``out_shardings`` when given; otherwise,
  when an input carries a NamedSharding, it is propagated through the program's jaxpr by the
  rules of JAX's sharding-in-types (numjax/sharding_rules.py): elementwise ops keep their
  operand's spec, reductions drop the reduced dimensions (reducing the sharded dimension
  gives a replicated result), ``dot_general`` keeps the batch and free dimensions' entries,
  transposes permute, broadcasts map dimensions; a primitive without a rule gives a
  replicated result.  On an Explicit mesh JAX reports the spec padded to the output's rank
  (``P('x', None)``); on an Auto mesh with trailing ``None``s dropped (``P('x',)``), and so
  does numjax.  A host value placed by ``in_shardings`` (rather than carrying its sharding)
  gives specs with trailing ``None``s dropped, as JAX's compiler reports them; an argument
  whose own sharding differs from ``in_shardings`` is JAX's ValueError.  Outputs of jitted
  functions without sharded inputs keep the single-device sharding.  On a mesh with Explicit
  axes the sharding is part of the value's type (numjax/sharding_types.py): eager ops, jit,
  grad and make_jaxpr propagate it by JAX's per-primitive rules; on an Auto mesh eager results
  are single-device (JAX's compiler would pick a sharding).
* ``lax.with_sharding_constraint`` and ``reshard`` inside a traced function check their
  arguments and are the identity (there is no layout to change in one global program).
* ``shard_map`` (numjax/shmap.py) really runs per device: the function sees each
  device's block, collectives go across the mesh axes.
* Across processes (``numjax.distributed``) every process holds the full global value (as in
  JAX, each must pass the same one to ``device_put``; their shapes and dtypes are checked to
  agree); ``addressable_shards`` are the blocks of the process's local devices, and a jitted
  program is evaluated whole by every process.
"""
import abc
import collections
import enum
import math
import threading

import numpy as np

from .api import SingleDeviceSharding, _sharding_placed as placed

__all__ = ["AbstractMesh", "AxisType", "DuplicateSpecError", "auto_axes", "explicit_axes", "get_abstract_mesh",
           "get_mesh", "IndivisibleError", "Mesh", "NamedSharding", "PartitionSpec", "reshard", "set_mesh", "Shard",
           "Sharding", "SingleDeviceSharding", "replicated_sharding", "use_abstract_mesh", "use_mesh",
           "with_sharding_constraint"]


class Sharding(abc.ABC):
    """Base class of all shardings."""


# SingleDeviceSharding is defined in api.py (Array.sharding uses it); make it a Sharding.
Sharding.register(SingleDeviceSharding)


class IndivisibleError(ValueError):
    """A mesh axis (or axes) does not evenly divide the dimension it shards."""


class DuplicateSpecError(Exception):
    """A PartitionSpec names one mesh axis for two dimensions (JAX's class: not a ValueError)."""


class AxisType(enum.Enum):
    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self):
        return self.name


class _Unconstrained:
    """``P.UNCONSTRAINED``: a dimension whose sharding a constraint leaves to the compiler."""
    __slots__ = ()

    def __repr__(self):
        return "UNCONSTRAINED"

    def __reduce__(self):
        return "UNCONSTRAINED"


UNCONSTRAINED = _Unconstrained()


class PartitionSpec(tuple):
    """How each array axis is split over mesh axes: a mesh axis name, a tuple of names (split
    over their product, the first outermost) or None (not split).  ``unreduced``: mesh axes
    over which the value is the sum of the devices' blocks (JAX's unreduced arrays)."""

    def __new__(cls, *partitions, unreduced=frozenset(), reduced=frozenset()):
        spec = super().__new__(cls, partitions)
        spec.unreduced, spec.reduced = frozenset(unreduced), frozenset(reduced)
        return spec

    def __eq__(self, other):
        return tuple.__eq__(self, other) and getattr(other, "unreduced", frozenset()) == self.unreduced \
            and getattr(other, "reduced", frozenset()) == self.reduced

    def __ne__(self, other):
        return not self == other

    def __reduce__(self):
        return _spec_from, (tuple(self), self.unreduced, self.reduced)

    def __hash__(self):
        return hash((tuple(self), self.unreduced, self.reduced))

    def __repr__(self):
        text = tuple.__repr__(self)
        extra = "".join(f", {name}={{{', '.join(repr(a) for a in sorted(axes))}}}"
                        for name, axes in (("unreduced", self.unreduced), ("reduced", self.reduced)) if axes)
        if extra:
            text = text[:-1].rstrip(",") + extra + ")" if len(self) else "(" + extra[2:] + ")"
        return "P" + text

    __str__ = __repr__
    UNCONSTRAINED = UNCONSTRAINED


def _spec_from(partitions, unreduced, reduced):
    return PartitionSpec(*partitions, unreduced=unreduced, reduced=reduced)


def _axes_of(entry):
    """The mesh axis names one spec entry splits a dimension over."""
    if entry is None or entry is UNCONSTRAINED:
        return ()
    return tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)


def _types_tuple(axis_types, n, default):
    if axis_types is None:
        return (default,) * n
    if isinstance(axis_types, AxisType):
        return (axis_types,) * n
    return tuple(axis_types)


def _mesh_text(shape, axis_types):
    """``'x': 2, 'y': 1, axis_types=(Explicit, Explicit)`` as JAX prints a mesh."""
    sizes = ", ".join(f"'{k}': {v}" for k, v in shape.items())
    types = "(" + ", ".join(t.name for t in axis_types) + ("," if len(axis_types) == 1 else "") + ")"
    return f"{sizes}, axis_types={types}" if sizes else f"(), axis_types={types}"


class Mesh:
    """A named grid of devices; ``with mesh:`` makes it the mesh that ``shard_map`` without
    ``mesh=`` uses (as JAX's legacy mesh context)."""

    def __init__(self, devices, axis_names, axis_types=None):
        self.devices = np.asarray(devices, dtype=object)
        self.axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if self.axis_names and self.devices.ndim != len(self.axis_names):
            raise ValueError("Mesh requires the ndim of its first argument (`devices`) to equal the "
                             "length of its second argument (`axis_names`), but got devices.ndim == "
                             f"{self.devices.ndim} and len(axis_names) == {len(self.axis_names)}.")
        self.axis_types = _types_tuple(axis_types, len(self.axis_names), AxisType.Auto)
        if len(self.axis_types) != len(self.axis_names):
            raise ValueError(f"Mesh: {len(self.axis_types)} axis_types {self.axis_types} were given "
                             f"for {len(self.axis_names)} axis_names {self.axis_names}; give one per axis")

    shape = property(lambda self: collections.OrderedDict(zip(self.axis_names, self.devices.shape)))
    axis_sizes = property(lambda self: tuple(self.devices.shape))
    size = property(lambda self: int(self.devices.size))
    empty = property(lambda self: self.devices.size == 0)
    device_ids = property(lambda self: np.vectorize(lambda d: d.id, otypes=[int])(self.devices))
    shape_tuple = property(lambda self: tuple(self.shape.items()))

    @property
    def are_all_axes_explicit(self):
        # As JAX: False for the empty mesh.
        return bool(self.axis_types) and all(t is AxisType.Explicit for t in self.axis_types)

    @property
    def local_devices(self):
        from .api import local_devices
        local = {d.id for d in local_devices()}
        return [d for d in self.devices.flat if d.id in local]

    @property
    def abstract_mesh(self):
        return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types)

    def _key(self):
        return (tuple(d.id for d in self.devices.flat), self.devices.shape, self.axis_names, self.axis_types)

    def __eq__(self, other):
        return isinstance(other, Mesh) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __enter__(self):
        _state.legacy_meshes.append(self)
        return self

    def __exit__(self, *exc):
        _state.legacy_meshes.pop()
        return False

    def __str__(self):
        if not self.axis_names:
            return "Mesh()"
        return f"Mesh({_mesh_text(self.shape, self.axis_types)})"

    def __repr__(self):
        if not self.axis_names:
            return "Mesh(axis_sizes=(), axis_names=())"
        return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
                f"axis_types={_mesh_text({}, self.axis_types).split('=', 1)[1]})")


class AbstractMesh:
    """A mesh's axis names, sizes and types, without devices."""

    def __init__(self, axis_sizes, axis_names, axis_types=None):
        self.axis_sizes, self.axis_names = tuple(axis_sizes), tuple(axis_names)
        self.axis_types = _types_tuple(axis_types, len(self.axis_names), AxisType.Auto)

    shape = property(lambda self: collections.OrderedDict(zip(self.axis_names, self.axis_sizes)))
    empty = property(lambda self: not self.axis_names)
    size = property(lambda self: int(np.prod(self.axis_sizes, dtype=np.int64)))
    are_all_axes_explicit = Mesh.are_all_axes_explicit
    abstract_mesh = property(lambda self: self)

    def __eq__(self, other):
        return isinstance(other, AbstractMesh) and (self.axis_sizes, self.axis_names, self.axis_types) == \
            (other.axis_sizes, other.axis_names, other.axis_types)

    def __hash__(self):
        return hash((self.axis_sizes, self.axis_names, self.axis_types))

    def __repr__(self):
        if self.empty:
            return "AbstractMesh((), axis_types=())"
        return f"AbstractMesh({_mesh_text(self.shape, self.axis_types)}, device_kind=cpu, num_cores=None, platform=cpu)"


EMPTY_MESH = Mesh([], ())
EMPTY_ABSTRACT_MESH = AbstractMesh((), ())


class Shard:
    """One device's block of an Array (``x.addressable_shards``)."""

    def __init__(self, device, index, replica_id, data):
        self.device, self.index, self.replica_id, self.data = device, index, replica_id, data

    def __repr__(self):
        return (f"Shard(device={self.device!r}, index={self.index}, replica_id={self.replica_id}, "
                f"data={self.data})")


class NamedSharding(Sharding):
    """A placement given by a mesh and a PartitionSpec; checked against the mesh on creation."""

    def __init__(self, mesh, spec=PartitionSpec(), *, memory_kind=None):
        if not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec) if isinstance(spec, (tuple, list)) else spec
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f"NamedSharding: spec must be a PartitionSpec, got {spec!r} of type {type(spec)}")
        self.mesh, self.spec, self.memory_kind = mesh, spec, memory_kind or "device"
        _check_spec_names(mesh, spec)

    @property
    def device_set(self):
        return set(self.mesh.devices.flat)

    addressable_devices = property(lambda self: set(getattr(self.mesh, "local_devices", ())))
    num_devices = property(lambda self: self.mesh.size)

    @property
    def is_fully_replicated(self):
        return all(self.mesh.shape[a] == 1 for e in self.spec for a in _axes_of(e))

    @property
    def is_fully_addressable(self):
        from .api import process_count
        return process_count() == 1 or len(self.addressable_devices) == self.mesh.size

    def with_spec(self, spec):
        return NamedSharding(self.mesh, spec, memory_kind=self.memory_kind)

    def shard_shape(self, global_shape):
        spec = _padded(self.spec, len(global_shape))
        return tuple(n // _split_count(self.mesh, e) for n, e in zip(global_shape, spec))

    def devices_indices_map(self, global_shape):
        return {d: idx for d, idx, _ in _blocks(self, tuple(global_shape))}

    def _key(self):
        return (self.mesh, _normalized(self.spec), self.memory_kind)

    def __eq__(self, other):
        return isinstance(other, NamedSharding) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        if isinstance(self.mesh, AbstractMesh):   # a type's sharding: JAX prints no memory kind
            return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec!r}, memory_kind={self.memory_kind})"


# ---------------------------------------------------------------- checks

def _padded(spec, ndim):
    return tuple(spec) + (None,) * (ndim - len(spec))


def _normalized(spec):
    entries = list(spec)
    while entries and entries[-1] is None:
        entries.pop()
    return tuple(entries)


def _split_count(mesh, entry):
    return math.prod(mesh.shape[a] for a in _axes_of(entry))


def _check_spec_names(mesh, spec):
    seen = set()
    for entry in spec:
        for name in _axes_of(entry):
            if name not in mesh.axis_names:
                raise ValueError(f"Resource axis: {name} of {spec!r} is not found in mesh: {mesh.axis_names}.")
            if name in seen:
                raise DuplicateSpecError(
                    "A single NamedSharding spec specification can map every mesh axis to at most one "
                    f"positional dimension, but {spec!r} has duplicate entries for `{name}`")
            seen.add(name)


def check_fits(sharding, shape, what="device_put"):
    """JAX's errors when ``sharding`` cannot place a value of ``shape``: a spec longer than the
    rank, or a mesh axis (product) not dividing the dimension it shards."""
    if not isinstance(sharding, NamedSharding):
        return
    if len(sharding.spec) > len(shape):
        raise ValueError(f"One of {what} args is incompatible with its sharding annotation {sharding}: "
                         f"Sharding {sharding} is only valid for values of rank at least "
                         f"{len(sharding.spec)}, but was applied to a value of rank {len(shape)}.")
    spec = _padded(sharding.spec, len(shape))
    factors = [_split_count(sharding.mesh, e) for e in spec]
    for dim, (n, f) in enumerate(zip(shape, factors)):
        if n % f == 0:
            continue
        if sharding.mesh.are_all_axes_explicit:
            shown = NamedSharding.__new__(NamedSharding)
            shown.mesh, shown.spec = sharding.mesh.abstract_mesh, PartitionSpec(*spec)
            raise ValueError(f"Sharding spec {tuple(sharding.spec)} implies that array axis {dim} is "
                             f"partitioned {f} times, but does not evenly divide the dimension size {n}. "
                             f"Got shape: {tuple(shape)} and sharding NamedSharding(mesh={shown.mesh!r}, "
                             f"spec={shown.spec!r})")
        raise IndivisibleError(f"Sharding {sharding} implies that array axis {dim} is partitioned {f} "
                               f"times, but the dimension size is {n} (full shape: {tuple(shape)}, "
                               f"per-dimension tiling factors: {factors} should evenly divide the shape)")


# ---------------------------------------------------------------- blocks

def _blocks(sharding, shape):
    """(device, index, replica_id) for each device of the mesh, in mesh order."""
    mesh = sharding.mesh
    spec = _padded(sharding.spec, len(shape))
    used = {a for e in spec for a in _axes_of(e)}
    out = []
    for pos in np.ndindex(*mesh.axis_sizes):
        at = dict(zip(mesh.axis_names, pos))
        index = []
        for n, entry in zip(shape, spec):
            axes = _axes_of(entry)
            if not axes:
                index.append(slice(None))
                continue
            block = 0
            for a in axes:
                block = block * mesh.shape[a] + at[a]
            size = n // _split_count(mesh, entry)
            index.append(slice(block * size, (block + 1) * size))
        replica = 0
        for a in mesh.axis_names:
            if a not in used:
                replica = replica * mesh.shape[a] + at[a]
        out.append((mesh.devices[pos], tuple(index), replica))
    return out


def addressable_shards(x, sharding):
    from .array import Array
    local = {d.id for d in _local_devices()}
    value = np.asarray(x._value)
    return [Shard(d, idx, rep, Array(value[idx], x.weak_type))
            for d, idx, rep in _blocks(sharding, value.shape) if d.id in local]


def global_shards(x, sharding):
    from .array import Array
    value = np.asarray(x._value)
    return [Shard(d, idx, rep, Array(value[idx], x.weak_type)) for d, idx, rep in _blocks(sharding, value.shape)]


def _local_devices():
    from .api import local_devices
    return local_devices()


# ---------------------------------------------------------------- placing values

def put(x, sharding):
    """``x`` (an Array or host value) as an Array placed by ``sharding`` (a NamedSharding).
    Across processes each process holds the global value: as in JAX every process must pass
    the same one, so a sharding over other processes' devices checks that they agree on its
    shape and dtype (comparing values would cost a collective over the data)."""
    from .api import _put
    arr = _put(x, None)
    check_fits(sharding, arr.shape)
    if not sharding.is_fully_addressable:
        from ._src import mpi
        mpi.check_agree(f"{np.dtype(arr.dtype).name}{list(arr.shape)}",
                        f"device_put with {sharding} spanning processes: every process must pass the "
                        "global value (the same shape and dtype on every process)")
    return attach(arr, sharding, copy=True)


def attach(arr, sharding, copy=False):
    """``arr`` recording ``sharding``; a new Array when ``copy`` or ``arr`` already has one."""
    from .array import Array
    placed[0] = True
    if isinstance(sharding, NamedSharding) and any(t is AxisType.Explicit for t in sharding.mesh.axis_types) \
            and not getattr(arr, "_on_device", False):
        from .sharding_types import typed_array
        return typed_array(arr, sharding)
    if isinstance(sharding, NamedSharding) and not getattr(arr, "_on_device", False):
        from .sharding_types import PlacedArray, activate    # eager ops on it place their results
        activate()
        arr = PlacedArray(arr._value, arr.weak_type)
    elif copy or getattr(arr, "_sharding", None) is not None:
        arr = Array(arr._value, arr.weak_type)
    arr._sharding = sharding
    return arr


def sharding_of(x):
    return getattr(x, "_sharding", None)


# ---------------------------------------------------------------- the current mesh

class _State(threading.local):
    def __init__(self):
        self.meshes = []          # set_mesh's, innermost last
        self.legacy_meshes = []   # ``with mesh:``'s
        self.abstract_meshes = []  # use_abstract_mesh's (auto_axes/explicit_axes too)


_state = _State()
_global_mesh = [None]   # jax.set_mesh(mesh) used as a statement: for every thread


def current_mesh():
    """The concrete mesh of ``set_mesh`` (innermost context, else the one set globally)."""
    if _state.meshes:
        return _state.meshes[-1]
    return _global_mesh[0]


def get_abstract_mesh():
    """The abstract mesh of the mesh set by ``jax.set_mesh`` (the empty mesh without one)."""
    if _state.abstract_meshes:
        return _state.abstract_meshes[-1]
    mesh = current_mesh()
    return EMPTY_ABSTRACT_MESH if mesh is None else mesh.abstract_mesh


class use_abstract_mesh:  # noqa: N801 -- JAX's name
    """``with jax.sharding.use_abstract_mesh(m):`` the abstract mesh (axis names, sizes and
    types) seen by tracing in the block; its size must be the current mesh's."""

    def __init__(self, mesh):
        if not isinstance(mesh, AbstractMesh):
            raise ValueError(f"Expected an AbstractMesh. Got {type(mesh)}")
        current = get_abstract_mesh()
        if not current.empty and current.size != mesh.size:
            raise ValueError(f"Mesh size should be the same. Got current mesh size {current.size} and "
                             f"new mesh size {mesh.size}")
        self.mesh = mesh

    def __enter__(self):
        _state.abstract_meshes.append(self.mesh)
        return self.mesh

    def __exit__(self, *exc):
        _state.abstract_meshes.pop()
        return False


class set_mesh:  # noqa: N801 -- JAX's name; both a statement and a context manager
    """``jax.set_mesh(mesh)``: makes ``mesh`` the current mesh at once (for every thread);
    as a context manager, only until the block ends (then the previous mesh is back)."""

    def __init__(self, mesh):
        if not isinstance(mesh, Mesh):
            raise ValueError(f"Expected a Mesh instance. Got {type(mesh)}")
        self.mesh, self._previous = mesh, _global_mesh[0]
        _global_mesh[0] = mesh

    def __enter__(self):
        _state.meshes.append(self.mesh)
        return self.mesh

    def __exit__(self, *exc):
        _state.meshes.pop()
        _global_mesh[0] = self._previous
        return False


use_mesh = set_mesh


def _as_sharding(sharding_or_spec, what, traced=False):
    if isinstance(sharding_or_spec, PartitionSpec):
        # Under a trace a spec names axes of the abstract mesh (use_abstract_mesh may change it).
        mesh = _state.abstract_meshes[-1] if traced and _state.abstract_meshes else current_mesh()
        if mesh is None:
            raise ValueError(f"Using PartitionSpec when you are not under a mesh context is not allowed. "
                             "Please pass a NamedSharding instance or enter into a mesh context via "
                             f"`jax.set_mesh`. Got {sharding_or_spec!r}")
        return NamedSharding(mesh, sharding_or_spec)
    if not isinstance(sharding_or_spec, Sharding):
        raise TypeError(f"{what}: expected a Sharding or a PartitionSpec, got {sharding_or_spec!r} "
                        f"of type {type(sharding_or_spec)}")
    return sharding_or_spec


def _map_leaves(fn, x, shardings):
    from . import tree_util
    is_leaf = lambda s: s is None or isinstance(s, (Sharding, PartitionSpec))  # noqa: E731
    if isinstance(shardings, (Sharding, PartitionSpec)):
        return tree_util.tree_map(lambda leaf: fn(leaf, shardings), x)
    return tree_util.tree_map(lambda s, sub: tree_util.tree_map(lambda leaf: fn(leaf, s), sub),
                              shardings, x, is_leaf=is_leaf)


def reshard(xs, out_shardings):
    """``xs`` placed by ``out_shardings`` (a Sharding, a PartitionSpec under ``set_mesh``, or a
    pytree prefix of them).  On traced values: the checks, then (on a mesh with Explicit axes) a
    new type carrying the sharding, else the identity."""
    from . import core

    def one(leaf, s):
        traced = isinstance(leaf, core.Tracer)
        s = _as_sharding(s, "reshard", traced)
        if not isinstance(s, NamedSharding):
            return _constrain(leaf, s, "reshard")
        rank = len(core.get_aval(leaf).shape) if traced else np.ndim(leaf)
        # JAX reports reshard's spec padded to the rank.
        s = NamedSharding(s.mesh, PartitionSpec(*_padded(s.spec, max(rank, len(s.spec))), unreduced=s.spec.unreduced))
        from . import sharding_types
        if traced:
            check_fits(s, core.get_aval(leaf).shape, "reshard")
            if sharding_types.has_explicit_axes(s.mesh) or core.get_aval(leaf)._sharding is not None:
                return sharding_types.retype(leaf, s)
            return leaf
        if isinstance(s.mesh, AbstractMesh):
            return sharding_types.retype(leaf, s)
        return _constrain(leaf, s, "reshard")
    return _map_leaves(one, xs, out_shardings)


def with_sharding_constraint(x, shardings):
    """``jax.lax.with_sharding_constraint``: as ``reshard``, but, as in JAX, inside a traced
    function only Auto mesh axes may be named (Explicit ones need ``reshard``)."""
    def one(leaf, s):
        given_spec = isinstance(s, PartitionSpec)
        s = _as_sharding(s, "with_sharding_constraint")
        from . import core
        if isinstance(leaf, core.Tracer) and isinstance(s, NamedSharding):
            explicit = [a for e in s.spec for a in _axes_of(e)
                        if s.mesh.axis_types[s.mesh.axis_names.index(a)] is AxisType.Explicit]
            if explicit:
                raise ValueError("The spec of NamedSharding passed to with_sharding_constraint can only "
                                 f"refer to Auto axes of the mesh. Got spec={s.spec!r} and "
                                 f"mesh={s.mesh.abstract_mesh!r}. You probably meant to use `reshard` API?")
        if isinstance(leaf, core.Tracer) and isinstance(s, NamedSharding):
            return _constraint_under_trace(leaf, s, given_spec)
        return _constrain(leaf, s, "with_sharding_constraint")
    return _map_leaves(one, x, shardings)


def _constraint_under_trace(x, sharding, given_spec):
    """JAX's ``sharding_constraint`` equation: the sharding as given (over the abstract mesh
    when only a spec was), its spec padded to the rank; the context's abstract mesh (the
    empty concrete mesh outside ``set_mesh``)."""
    from . import core
    from .lax.sharding_ops import sharding_constraint
    shape = core.get_aval(x).shape
    check_fits(sharding, shape, "with_sharding_constraint")
    spec = PartitionSpec(*_padded(sharding.spec, len(shape)), unreduced=sharding.spec.unreduced)
    mesh = sharding.mesh.abstract_mesh if given_spec else sharding.mesh
    context = get_abstract_mesh()
    return sharding_constraint(x, NamedSharding(mesh, spec), EMPTY_MESH if context.empty else context)


def _constrain(leaf, sharding, what):
    from . import core
    if isinstance(leaf, core.Tracer):
        check_fits(sharding, core.get_aval(leaf).shape, what)
        return leaf
    if isinstance(sharding, NamedSharding):
        return put(leaf, sharding)
    from .api import device_put
    return device_put(leaf, sharding)


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """``jax.make_mesh``: the first prod(axis_shapes) devices as a mesh (Explicit axes unless
    ``axis_types`` says otherwise, as in JAX 0.10)."""
    from .api import devices as all_devices
    axis_shapes, axis_names = tuple(axis_shapes), tuple(axis_names)
    devs = list(all_devices() if devices is None else devices)
    if len(axis_shapes) != len(axis_names):
        raise ValueError("Mesh requires the ndim of its first argument (`devices`) to equal the length "
                         f"of its second argument (`axis_names`), but got devices.ndim == {len(axis_shapes)} "
                         f"and len(axis_names) == {len(axis_names)}.")
    need = math.prod(axis_shapes)
    if need > len(devs):
        raise ValueError(f"Number of devices {len(devs)} must be >= the product of mesh_shape {axis_shapes}")
    grid = np.empty(need, dtype=object)
    grid[:] = devs[:need]
    return Mesh(grid.reshape(axis_shapes), axis_names,
                _types_tuple(axis_types, len(axis_names), AxisType.Explicit))


def replicated_sharding(ndim):
    """``jax.typeof(x).sharding`` of a value without one: replicated over the current abstract
    mesh (the empty one outside ``set_mesh``)."""
    return NamedSharding(get_abstract_mesh(), PartitionSpec(*(None,) * ndim))


def get_mesh():
    """``jax.sharding.get_mesh()``: the concrete mesh of ``set_mesh`` (the empty mesh without one)."""
    mesh = current_mesh()
    return EMPTY_MESH if mesh is None else mesh


from .sharding_types import auto_axes, explicit_axes  # noqa: E402  (they use this module)

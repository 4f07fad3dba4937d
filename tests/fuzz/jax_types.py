"""JAX's types for the fuzzer, written independently of numjax so that it can judge numjax.

An abstract value is a :class:`Ty` (shape, dtype name, weak flag).  Dtype promotion follows
JAX 0.10.2's lattice (``jax._src.dtypes``, read for facts): a binary operation's result
is the least upper bound of its operands' lattice nodes, where a weakly typed operand
(a Python scalar, or an array derived only from Python scalars) stands for the node
``int``/``float`` of its kind.  Without x64 every 64-bit dtype is canonicalized to its
32-bit counterpart, and the lattice loses the edge u32 -> i64.
"""
import dataclasses

import ml_dtypes
import numpy as np

BOOL = ("bool",)
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTS = SIGNED + UNSIGNED
FLOATS = ("float16", "bfloat16", "float32", "float64")
ALL = BOOL + INTS + FLOATS

_NP = {name: np.dtype(name) for name in ALL if name != "bfloat16"}
_NP["bfloat16"] = np.dtype(ml_dtypes.bfloat16)

# Lattice nodes: dtype names plus the weak kinds "i*", "f*".
_EDGES = {
    "bool": ["i*"], "i*": ["uint8", "int8"],
    "uint8": ["int16", "uint16"], "uint16": ["int32", "uint32"], "uint32": ["int64", "uint64"],
    "uint64": ["f*"], "int8": ["int16"], "int16": ["int32"], "int32": ["int64"], "int64": ["f*"],
    "f*": ["bfloat16", "float16"], "bfloat16": ["float32"], "float16": ["float32"],
    "float32": ["float64"], "float64": [],
}


def _upper_bounds(x64):
    edges = dict(_EDGES)
    if not x64:
        edges["uint32"] = ["int32", "uint64"]
    ubs = {}
    for node in edges:
        seen, todo = {node}, [node]
        while todo:
            for nxt in edges[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        ubs[node] = frozenset(seen)
    return ubs


_UBS = {True: _upper_bounds(True), False: _upper_bounds(False)}
_CANON32 = {"int64": "int32", "uint64": "uint32", "float64": "float32"}


def np_dtype(name):
    return _NP[name]


def kind(name):
    """'b', 'i' (signed), 'u', or 'f'."""
    return "b" if name == "bool" else "f" if name in FLOATS else "u" if name in UNSIGNED else "i"


def bits(name):
    return 8 * _NP[name].itemsize


def canonical(name, x64):
    return name if x64 else _CANON32.get(name, name)


def default_int(x64):
    return "int64" if x64 else "int32"


def default_uint(x64):
    return "uint64" if x64 else "uint32"


def default_float(x64):
    return "float64" if x64 else "float32"


@dataclasses.dataclass(frozen=True)
class Ty:
    """Abstract value: shape, dtype name, weak type."""
    shape: tuple
    dtype: str
    weak: bool = False

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def kind(self):
        return kind(self.dtype)

    def with_(self, **kw):
        return dataclasses.replace(self, **kw)

    def __str__(self):
        return f"{'~' if self.weak else ''}{self.dtype}{list(self.shape)}"


def _node(dtype, weak):
    if weak and dtype != "bool":
        return "f*" if kind(dtype) == "f" else "i*"
    return dtype


def _lub(nodes, x64):
    ubs = _UBS[x64]
    common = frozenset.intersection(*(ubs[n] for n in nodes))
    least = [n for n in common if ubs[n] == common]
    assert len(least) == 1, (nodes, least)
    return least[0]


def result_dtype(tys, x64):
    """(dtype, weak) of JAX's ``result_type`` over operand types (``jnp`` promotion)."""
    dts = [t.dtype for t in tys]
    weaks = [t.weak for t in tys]
    if len(tys) == 1:
        dt, weak = dts[0], weaks[0]
    elif len(set(dts)) == 1 and not all(weaks):
        dt, weak = dts[0], False
    elif all(weaks):
        dt, weak = _lub({_node(d, False) for d in dts}, x64), True
    else:
        node = _lub({_node(d, w) for d, w in zip(dts, weaks)}, x64)
        weak = node in ("i*", "f*")
        dt = {"i*": default_int(x64), "f*": default_float(x64)}.get(node, node)
    weak = weak and dt != "bool"
    return canonical(dt, x64), weak


def to_inexact(dtype, x64):
    """JAX's ``to_inexact_dtype``: bool, ints of <= 32 bits -> float32; 64-bit ints -> float64."""
    if kind(dtype) == "f":
        return dtype
    return canonical("float64" if bits(dtype) == 64 else "float32", x64)


def to_numeric(dtype):
    return "int32" if dtype == "bool" else dtype


def broadcast_shapes(*shapes):
    """numpy broadcasting; None when the shapes do not broadcast."""
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(ndim):
        dims = {s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0} - {1}
        if len(dims) > 1:
            return None
        out.append(dims.pop() if dims else 1)
    return tuple(out)

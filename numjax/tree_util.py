"""Pytrees: nested containers whose leaves are arrays, as ``jax.tree_util``.

Built-in nodes: tuple, list, dict (sorted keys), None (no leaves), namedtuple,
OrderedDict (insertion order), defaultdict; more via ``register_pytree_node``,
``register_pytree_with_keys``, ``register_dataclass`` and ``register_static``.

Flattening runs on every jit/grad/vmap call, so the built-in nodes take the
shortest path: one dict lookup by exact type, no per-call closures.
"""
import collections
import dataclasses
import difflib
import functools
from typing import Any

__all__ = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial", "PyTreeDef",
    "SequenceKey", "all_leaves", "flatten_one_level", "flatten_one_level_with_keys", "is_tree_node",
    "keystr", "register_dataclass", "register_pytree_node", "register_pytree_node_class",
    "register_pytree_with_keys", "register_pytree_with_keys_class", "register_static", "tree_all",
    "tree_broadcast", "tree_flatten", "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path",
    "tree_map", "tree_map_with_path", "tree_reduce", "tree_reduce_associative", "tree_structure",
    "tree_transpose", "tree_unflatten", "treedef_children", "treedef_is_leaf", "treedef_tuple",
]

KeyEntry = Any
KeyPath = tuple


# -- key path entries

class _Key:
    __slots__ = ()
    _field = ""

    def _value(self):
        return getattr(self, self._field)

    def __eq__(self, other):
        return type(other) is type(self) and other._value() == self._value()

    def __hash__(self):
        return hash((type(self).__name__, self._value()))

    def __repr__(self):
        return f"{type(self).__name__}({self._field}={self._value()!r})"


class SequenceKey(_Key):
    """Index into a tuple or list: ``[0]``."""
    __slots__ = ("idx",)
    _field = "idx"
    __match_args__ = ("idx",)

    def __init__(self, idx):
        if not isinstance(idx, int):
            raise TypeError(f"SequenceKey index must be an int, got {type(idx).__name__}: {idx!r}.")
        self.idx = idx

    def __str__(self):
        return f"[{self.idx!r}]"


class DictKey(_Key):
    """Key of a dict-like node: ``['a']``."""
    __slots__ = ("key",)
    _field = "key"
    __match_args__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __str__(self):
        return f"[{self.key!r}]"


class GetAttrKey(_Key):
    """Attribute of a namedtuple or dataclass: ``.x``."""
    __slots__ = ("name",)
    _field = "name"
    __match_args__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f".{self.name}"


class FlattenedIndexKey(_Key):
    """Position among the children of a custom node registered without keys."""
    __slots__ = ("key",)
    _field = "key"
    __match_args__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __str__(self):
        return f"[<flat index {self.key}>]"


def keystr(keys, *, simple=False, separator=""):
    """``keystr((DictKey('a'), SequenceKey(0)))`` is ``"['a'][0]"``; simple=True gives ``"a0"``."""
    if simple:
        return separator.join(str(k._value()) for k in keys)
    return separator.join(str(k) for k in keys)


# -- node types

class _NodeType:
    """How to take one kind of node apart (``to_iter``) and put it back (``from_iter``)."""
    __slots__ = ("to_iter", "from_iter", "name", "type", "kind", "to_iter_with_keys")

    def __init__(self, to_iter, from_iter, name, type_, kind="custom", to_iter_with_keys=None):
        self.to_iter, self.from_iter, self.name, self.type, self.kind = to_iter, from_iter, name, type_, kind
        self.to_iter_with_keys = to_iter_with_keys or self._flat_index_keys

    def _flat_index_keys(self, x):
        children, aux = self.to_iter(x)
        return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], aux


_registry = {}
_namedtuple_nodes = {}


def _sorted_keys(d):
    try:
        return tuple(sorted(d))
    except TypeError:
        raise ValueError("Comparator raised exception while sorting pytree dictionary keys.") from None


def _dict_flatten(d):
    keys = _sorted_keys(d)
    return tuple([d[k] for k in keys]), keys


def _dict_keys_flatten(d):
    keys = _sorted_keys(d)
    return [(DictKey(k), d[k]) for k in keys], keys


def _seq_keys_flatten(s):
    return [(SequenceKey(i), c) for i, c in enumerate(s)], None


def _defaultdict_keys_flatten(d):
    keys = _sorted_keys(d)
    return [(DictKey(k), d[k]) for k in keys], (d.default_factory, keys)


def _builtin(type_, to_iter, from_iter, to_iter_with_keys, name=None):
    kind = name or type_.__name__
    _registry[type_] = _NodeType(to_iter, from_iter, kind, type_, kind, to_iter_with_keys)


_builtin(tuple, lambda t: (t, None), lambda _, c: tuple(c), _seq_keys_flatten)
_builtin(list, lambda t: (t, None), lambda _, c: list(c), _seq_keys_flatten)
_builtin(dict, _dict_flatten, lambda keys, c: dict(zip(keys, c)), _dict_keys_flatten)
_builtin(type(None), lambda _: ((), None), lambda _, c: None, lambda _: ((), None), name="None")
_builtin(collections.OrderedDict,
         lambda d: (list(d.values()), tuple(d)),
         lambda keys, c: collections.OrderedDict(zip(keys, c)),
         lambda d: ([(DictKey(k), v) for k, v in d.items()], tuple(d)))
_builtin(collections.defaultdict,
         lambda d: ([d[k] for k in _sorted_keys(d)], (d.default_factory, _sorted_keys(d))),
         lambda aux, c: collections.defaultdict(aux[0], zip(aux[1], c)),
         _defaultdict_keys_flatten)
_BUILTIN_TYPES = frozenset(_registry)


def _namedtuple_node(cls):
    nt = _namedtuple_nodes.get(cls)
    if nt is None:
        nt = _NodeType(lambda t: (tuple(t), None), lambda _, c: cls(*c), cls.__name__, cls, "namedtuple",
                       lambda t: ([(GetAttrKey(f), v) for f, v in zip(t._fields, t)], None))
        _namedtuple_nodes[cls] = nt
    return nt


def _node_type(x):
    """The node type of ``x``, or None when ``x`` is a leaf (ignoring ``is_leaf``)."""
    cls = type(x)
    nt = _registry.get(cls)
    if nt is None and isinstance(x, tuple) and hasattr(cls, "_fields"):
        return _namedtuple_node(cls)
    return nt


def _register(nodetype, nt):
    if nodetype in _registry:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _registry[nodetype] = nt


def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    """Make ``nodetype`` a pytree node: ``flatten_func(x) -> (children, aux)``,
    ``unflatten_func(aux, children) -> x``; aux must be hashable and comparable."""
    _register(nodetype, _NodeType(flatten_func, unflatten_func, nodetype.__name__, nodetype,
                                  to_iter_with_keys=flatten_with_keys_func))


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """As ``register_pytree_node`` with ``flatten_with_keys(x) -> ((key, child), ...), aux``."""
    if flatten_func is None:
        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)
    return nodetype


def register_pytree_node_class(cls):
    """Class decorator: ``cls.tree_flatten(self)`` and classmethod ``cls.tree_unflatten(aux, children)``."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls):
    """Class decorator: ``tree_flatten_with_keys``, ``tree_unflatten`` and optionally ``tree_flatten``."""
    flatten = (lambda x: x.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten, flatten)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Register a dataclass: ``data_fields`` are children, ``meta_fields`` are static aux data.

    Without field lists, fields whose metadata has ``static=True`` are meta, the rest data.
    Usable as a decorator, bare or through ``functools.partial``.
    """
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError("register_dataclass: data_fields and meta_fields must both be specified "
                            f"when either is specified. Got data_fields={data_fields} "
                            f"meta_fields={meta_fields}.")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required when nodetype "
                            f"is not a dataclass. Got nodetype={nodetype!r}.")
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        _check_dataclass_fields(nodetype, data_fields, meta_fields, drop_fields)

    def flatten(x):
        return [getattr(x, n) for n in data_fields], tuple(getattr(x, n) for n in meta_fields)

    def flatten_with_keys(x):
        return [(GetAttrKey(n), getattr(x, n)) for n in data_fields], tuple(getattr(x, n) for n in meta_fields)

    def unflatten(meta, data):
        return nodetype(**dict(zip(meta_fields, meta)), **dict(zip(data_fields, data)))

    register_pytree_node(nodetype, flatten, unflatten, flatten_with_keys)
    return nodetype


def _check_dataclass_fields(nodetype, data_fields, meta_fields, drop_fields):
    init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
    given = set(data_fields) | set(meta_fields)
    msg = "data_fields and meta_fields must include all dataclass fields with ``init=True`` and only them."
    if init_fields - given:
        raise ValueError(f"{msg} Missing fields: {init_fields - given}. "
                         "Add them to drop_fields to suppress this error.")
    if given - init_fields:
        raise ValueError(f"{msg} Unexpected fields: {given - init_fields}.")


def register_static(cls):
    """Instances of ``cls`` become childless nodes: they live in the treedef, not the leaves."""
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


# -- PyTreeDef

class PyTreeDef:
    """Structure of a pytree. Immutable; equal treedefs hash equal (jit caches key on them)."""
    __slots__ = ("node", "aux", "_children", "num_leaves", "_num_nodes", "_hash", "_k")

    def __init__(self, node, aux, children, num_leaves):
        self.node, self.aux, self._children, self.num_leaves = node, aux, children, num_leaves
        self._num_nodes = self._hash = self._k = None

    @property
    def num_nodes(self):
        if self._num_nodes is None:
            self._num_nodes = 1 + sum(c.num_nodes for c in self._children)
        return self._num_nodes

    def children(self):
        return list(self._children)

    def node_data(self):
        if self.node is None:
            return None
        return self.node.type, list(self.aux) if self.node.kind == "dict" else self.aux

    def _key(self):
        # Computed once per treedef: jit compares them on every call.
        if self._k is None:
            self._k = (None if self.node is None else
                       (self.node, _hashable(self.aux), tuple([c._key() for c in self._children])))
        return self._k

    def __eq__(self, other):
        return self is other or (isinstance(other, PyTreeDef) and self._key() == other._key())

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(self._key())
        return self._hash

    def unflatten(self, leaves):
        return tree_unflatten(self, leaves)

    def flatten_up_to(self, xs):
        out = []
        _flatten_up_to_into(self, xs, out)
        return out

    def compose(self, inner):
        """This structure with every leaf replaced by ``inner``."""
        if self.node is None:
            return inner
        kids = tuple(c.compose(inner) for c in self._children)
        return PyTreeDef(self.node, self.aux, kids, sum(k.num_leaves for k in kids))

    def __repr__(self):
        return f"PyTreeDef({self._str()})"

    def _str(self):
        if self.node is None:
            return "*"
        kind, kids = self.node.kind, [c._str() for c in self._children]
        if kind == "tuple":
            return "(" + ", ".join(kids) + ("," if len(kids) == 1 else "") + ")"
        if kind == "list":
            return "[" + ", ".join(kids) + "]"
        if kind == "dict":
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(self.aux, kids)) + "}"
        if kind == "None":
            return "None"
        data = f"namedtuple[{self.node.name}]" if kind == "namedtuple" else f"{self.node.name}[{self.aux}]"
        return f"CustomNode({data}, [{', '.join(kids)}])"


def _hashable(aux):
    try:
        hash(aux)
        return aux
    except TypeError:
        return repr(aux)


_LEAF = PyTreeDef(None, None, (), 1)
_LEAF._num_nodes = 1


# -- flatten / unflatten

def _flatten(x, leaves):
    cls = type(x)
    nt = _registry.get(cls)
    if nt is None:
        if not (isinstance(x, tuple) and hasattr(cls, "_fields")):
            leaves.append(x)
            return _LEAF
        nt = _namedtuple_node(cls)
    start = len(leaves)
    children, aux = nt.to_iter(x)
    kids = tuple([_flatten(c, leaves) for c in children])
    return PyTreeDef(nt, aux, kids, len(leaves) - start)


def _flatten_is_leaf(x, leaves, is_leaf):
    nt = None if is_leaf(x) else _node_type(x)
    if nt is None:
        leaves.append(x)
        return _LEAF
    start = len(leaves)
    children, aux = nt.to_iter(x)
    kids = tuple([_flatten_is_leaf(c, leaves, is_leaf) for c in children])
    return PyTreeDef(nt, aux, kids, len(leaves) - start)


def tree_flatten(tree, is_leaf=None):
    """``(leaves, treedef)``; ``is_leaf(x)`` True stops the descent at ``x``."""
    leaves = []
    treedef = _flatten(tree, leaves) if is_leaf is None else _flatten_is_leaf(tree, leaves, is_leaf)
    return leaves, treedef


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_unflatten(treedef, leaves):
    leaves = leaves if isinstance(leaves, (list, tuple)) else list(leaves)
    if len(leaves) != treedef.num_leaves:
        if len(leaves) < treedef.num_leaves:
            raise ValueError(f"Too few leaves for PyTreeDef; expected {treedef.num_leaves}, got {len(leaves)}")
        raise ValueError(f"Too many leaves for PyTreeDef; expected {treedef.num_leaves}.")
    if treedef.node is None:
        return leaves[0]
    return _unflatten(treedef, iter(leaves))


def _unflatten(treedef, it):
    if treedef.node is None:
        return next(it)
    return treedef.node.from_iter(treedef.aux, [_unflatten(c, it) for c in treedef._children])


def treedef_is_leaf(treedef):
    """True for a leaf and for a childless node such as None or ()."""
    return treedef.num_nodes == 1


def treedef_children(treedef):
    return treedef.children()


def treedef_tuple(treedefs):
    kids = tuple(treedefs)
    return PyTreeDef(_registry[tuple], None, kids, sum(k.num_leaves for k in kids))


def all_leaves(iterable, is_leaf=None):
    """True when no element of ``iterable`` is a pytree node (``None`` is one)."""
    if is_leaf is None:
        return all(_node_type(x) is None for x in iterable)
    return all(is_leaf(x) or _node_type(x) is None for x in iterable)


def is_tree_node(x, is_leaf=None):
    return not (is_leaf is not None and is_leaf(x)) and _node_type(x) is not None


def flatten_one_level(tree):
    """``(children, aux)`` of the top node; ValueError for a leaf."""
    nt = _node_type(tree)
    if nt is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return nt.to_iter(tree)


def flatten_one_level_with_keys(tree):
    nt = _node_type(tree)
    if nt is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    pairs, aux = nt.to_iter_with_keys(tree)
    return tuple(tuple(p) for p in pairs), aux


# -- the transformations' view

# Types that are leaves to users but that transformations look through: typed PRNG key
# arrays are pytree leaves in JAX, yet jit/vmap/grad/scan trace plain arrays, so they
# flatten a key into its uint32 data and unflattening the same treedef wraps it back.
_traced_nodes = {}


def register_traced_node(nodetype, flatten_func, unflatten_func):
    """``nodetype`` stays a leaf of ``tree_flatten``; ``flatten_traced`` flattens it as a node."""
    _traced_nodes[nodetype] = _NodeType(flatten_func, unflatten_func, nodetype.__name__, nodetype)


def _traced_node_type(x):
    return _node_type(x) or _traced_nodes.get(type(x))


def _flatten_traced(x, leaves, is_leaf):
    nt = None if is_leaf is not None and is_leaf(x) else _traced_node_type(x)
    if nt is None:
        leaves.append(x)
        return _LEAF
    start = len(leaves)
    children, aux = nt.to_iter(x)
    kids = tuple([_flatten_traced(c, leaves, is_leaf) for c in children])
    return PyTreeDef(nt, aux, kids, len(leaves) - start)


def flatten_traced(tree, is_leaf=None):
    """``tree_flatten`` with the traced-only nodes (typed keys) flattened down to their data."""
    leaves = []
    return leaves, _flatten_traced(tree, leaves, is_leaf)


def leaves_traced(tree, is_leaf=None):
    return flatten_traced(tree, is_leaf)[0]


def structure_traced(tree, is_leaf=None):
    return flatten_traced(tree, is_leaf)[1]


def map_traced(f, tree, *rest, is_leaf=None):
    """``tree_map`` over the leaves ``flatten_traced`` finds."""
    leaves, treedef = flatten_traced(tree, is_leaf)
    others = [_flatten_up_to_named(treedef, tree, r, is_leaf, "tree_map tree") for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


# -- flatten up to a prefix

_NONE_PREFIX_HINT = (
    "\n\nIn previous releases of JAX, flatten-up-to used to consider None to be a tree-prefix of "
    "non-None values. To obtain the previous behavior, you can usually write:\n"
    "  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, is_leaf=lambda x: x is None)")


def _flatten_up_to(treedef, tree):
    """The subtrees of ``tree`` at the leaves of ``treedef``; ValueError when it is no prefix."""
    out = []
    _flatten_up_to_into(treedef, tree, out)
    return out


def _flatten_up_to_into(treedef, tree, out):
    nt = treedef.node
    if nt is None:
        out.append(tree)
        return
    kids = treedef._children
    cls = type(tree)
    kind = nt.kind
    if kind in ("tuple", "list"):
        if cls is not nt.type:
            raise ValueError(f"Expected {kind}, got {tree!r}.")
        if len(tree) != len(kids):
            raise ValueError(f"{kind.capitalize()} arity mismatch: {len(tree)} != {len(kids)}; {kind}: {tree!r}.")
        children = tree
    elif kind == "dict":
        if cls is not dict:
            raise ValueError(f"Expected dict, got {tree!r}.")
        keys = _sorted_keys(tree)
        if keys != treedef.aux:
            raise ValueError(f"Dict key mismatch; expected keys: {list(treedef.aux)}; "
                             f"present keys: {list(keys)}.")
        children = [tree[k] for k in keys]
    elif kind == "None":
        if tree is not None:
            raise ValueError(f"Expected None, got {tree!r}.{_NONE_PREFIX_HINT}")
        return
    elif kind == "namedtuple":
        if not (isinstance(tree, tuple) and hasattr(cls, "_fields")):
            raise ValueError(f"Expected named tuple, got {tree!r}.")
        if cls is not nt.type:
            raise ValueError(f"Named tuple type mismatch: expected type: {nt.type!r}, tuple: {tree!r}.")
        children = tree
    else:
        if _traced_node_type(tree) is not nt:
            raise ValueError(f"Custom node type mismatch: expected type: {nt.type!r}, value: {tree!r}.")
        children, aux = nt.to_iter(tree)
        if _hashable(aux) != _hashable(treedef.aux):
            raise ValueError(f"Mismatch custom node data: {treedef.aux!r} != {aux!r}; value: {tree!r}.")
        if len(children) != len(kids):
            raise ValueError(f"Custom type arity mismatch: {len(children)} != {len(kids)}; value: {tree!r}.")
    for sub, child in zip(kids, children):
        _flatten_up_to_into(sub, child, out)


def _flatten_up_to_named(treedef, prefix, full, is_leaf, name):
    """``treedef.flatten_up_to(full)``, raising JAX's key-path error that names ``name``."""
    try:
        return treedef.flatten_up_to(full)
    except ValueError as err:
        detail = _prefix_error(prefix, full, is_leaf, name, ())
        if detail is None:
            raise
        raise ValueError(detail) from err


def _prefix_error(prefix, full, is_leaf, name, path):
    """Message for the first place where ``prefix`` is not a tree prefix of ``full``, else None."""
    if is_leaf is not None and is_leaf(prefix):
        return None
    nt = _node_type(prefix)
    if nt is None:
        return None
    where = f"{name}{keystr(path)}"
    head = "pytree structure error: different {} at key path\n    " + where + "\nAt that key path, the " \
           f"prefix pytree {name} has a subtree of type"
    if type(prefix) is not type(full):
        return (head.format("types") + f"\n    {type(prefix)}\nbut at the same key path the full pytree has a "
                f"subtree of different type\n    {type(full)}.")
    if nt.kind in ("tuple", "list") and len(prefix) != len(full):
        return (head.format(f"lengths of {nt.kind}") + f" {nt.kind} of length {len(prefix)}, but the full "
                f"pytree has a subtree of the same type but of length {len(full)}.")
    p_pairs, p_aux = nt.to_iter_with_keys(prefix)
    f_pairs, f_aux = nt.to_iter_with_keys(full)
    if len(p_pairs) != len(f_pairs):
        p_keys = [str(k._value()) for k, _ in p_pairs]
        f_keys = [str(k._value()) for k, _ in f_pairs]
        diff = set(p_keys) ^ set(f_keys)
        return (head.format("numbers of pytree children") + f"\n    {type(prefix)}\nwith {len(p_keys)} child "
                f"keys\n    {' '.join(p_keys)}\nbut at the same key path the full pytree has a subtree of the "
                f"same type but with {len(f_keys)} child keys\n    {' '.join(f_keys)}\nso the symmetric "
                f"difference on key sets is\n    {' '.join(diff)}")
    if _hashable(p_aux) != _hashable(f_aux):
        ndiff = "\n    ".join(difflib.ndiff([str(p_aux)], [str(f_aux)]))
        return (head.format("pytree metadata") + f"\n    {type(prefix)}\nwith metadata\n    {p_aux}\nbut at the "
                f"same key path the full pytree has a subtree of the same type but with metadata\n    {f_aux}\n"
                f"so the diff in the metadata at these pytree nodes is\n    {ndiff}")
    for (key, p_child), (_, f_child) in zip(p_pairs, f_pairs):
        err = _prefix_error(p_child, f_child, is_leaf, name, path + (key,))
        if err is not None:
            return err
    return None


# -- maps and reductions

def tree_map(f, tree, *rest, is_leaf=None):
    """``f`` applied leafwise; each of ``rest`` must have ``tree``'s structure (or extend it)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    others = [_flatten_up_to_named(treedef, tree, r, is_leaf, "tree_map tree") for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


class _Unspecified:
    def __repr__(self):
        return "<unspecified>"


_UNSPECIFIED = _Unspecified()


def tree_reduce(function, tree, initializer=_UNSPECIFIED, is_leaf=None):
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _UNSPECIFIED:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(operation, tree, *, identity=_UNSPECIFIED, is_leaf=None):
    """Reduce pairwise (a balanced tree of ``operation`` calls); ``operation`` must be associative."""
    items = tree_leaves(tree, is_leaf)
    if not items:
        if identity is _UNSPECIFIED:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    while len(items) > 1:
        paired = [operation(a, b) for a, b in zip(items[::2], items[1::2])]
        items = paired + items[len(paired) * 2:]
    return items[0]


def tree_all(tree, *, is_leaf=None):
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Turn an outer-of-inner pytree into an inner-of-outer one (``inner_treedef=None``: inferred)."""
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    expected = outer_treedef.compose(inner_treedef)
    if treedef != expected:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
    n_inner, n_outer = inner_treedef.num_leaves, outer_treedef.num_leaves
    rows = [flat[i * n_inner:(i + 1) * n_inner] for i in range(n_outer)]
    columns = zip(*rows) if n_outer else [[]] * n_inner
    return inner_treedef.unflatten([outer_treedef.unflatten(col) for col in columns])


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """``prefix_tree`` with each leaf repeated over the matching subtree of ``full_tree``."""
    leaves, treedef = tree_flatten(prefix_tree, is_leaf)
    subtrees = _flatten_up_to_named(treedef, prefix_tree, full_tree, is_leaf, "broadcast_prefix prefix_tree")
    return treedef.unflatten([tree_map(lambda _, x=x: x, sub) for x, sub in zip(leaves, subtrees)])


# -- key paths

def _flatten_with_path(x, path, pairs, is_leaf, takes_path):
    if is_leaf is not None and (is_leaf(path, x) if takes_path else is_leaf(x)):
        nt = None
    else:
        nt = _node_type(x)
    if nt is None:
        pairs.append((path, x))
        return _LEAF
    start = len(pairs)
    keyed, aux = nt.to_iter_with_keys(x)
    kids = tuple([_flatten_with_path(c, path + (k,), pairs, is_leaf, takes_path) for k, c in keyed])
    return PyTreeDef(nt, aux, kids, len(pairs) - start)


def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """``([(key_path, leaf), ...], treedef)``."""
    pairs = []
    treedef = _flatten_with_path(tree, (), pairs, is_leaf, is_leaf_takes_path)
    return pairs, treedef


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """``f(key_path, leaf, *rest_leaves)`` applied leafwise."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    plain_is_leaf = (lambda x: False) if is_leaf is None or is_leaf_takes_path else is_leaf
    others = [_flatten_up_to_named(treedef, tree, r, plain_is_leaf, "tree_map tree") for r in rest]
    return treedef.unflatten([f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


# -- Partial

class Partial(functools.partial):
    """A functools.partial that is a pytree whose leaves are the bound arguments.

    The function is aux data, so two Partials of the same function trace to one jit entry.
    """

    def __new__(klass, func, *args, **kw):
        if isinstance(func, functools.partial):
            original_func = func
            func = _HashableCallableShim(original_func)
            out = super().__new__(klass, func, *args, **kw)
            func.func = original_func.func
            func.args = original_func.args
            func.keywords = original_func.keywords
            return out
        return super().__new__(klass, func, *args, **kw)


class _HashableCallableShim:
    def __init__(self, fun):
        self.fun = fun

    def __call__(self, *args, **kw):
        return self.fun(*args, **kw)

    def __hash__(self):
        return hash(self.fun)

    def __eq__(self, other):
        return isinstance(other, _HashableCallableShim) and self.fun == other.fun

    def __repr__(self):
        return f"_HashableCallableShim({self.fun!r})"


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, xs: Partial(func, *xs[0], **xs[1]))

"""Pytrees: nested containers whose leaves are arrays.

Built-in nodes: tuple, list, dict (sorted keys), None, namedtuple,
OrderedDict, defaultdict; more via ``register_pytree_node``.
"""
import collections
import functools

_registry = {}


class _NodeType:
    __slots__ = ("to_iter", "from_iter", "name")

    def __init__(self, to_iter, from_iter, name):
        self.to_iter, self.from_iter, self.name = to_iter, from_iter, name


def register_pytree_node(nodetype, flatten_func, unflatten_func):
    _registry[nodetype] = _NodeType(flatten_func, unflatten_func, nodetype.__name__)
    _structure_cache.clear()
    return nodetype


def register_pytree_node_class(cls):
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def _dict_flatten(d):
    keys = sorted(d)
    return [d[k] for k in keys], tuple(keys)


_registry[tuple] = _NodeType(lambda t: (t, None), lambda _, c: tuple(c), "tuple")
_registry[list] = _NodeType(lambda t: (t, None), lambda _, c: list(c), "list")
_registry[dict] = _NodeType(_dict_flatten, lambda keys, c: dict(zip(keys, c)), "dict")
_registry[type(None)] = _NodeType(lambda _: ((), None), lambda _, c: None, "None")
_registry[collections.OrderedDict] = _NodeType(
    lambda d: (list(d.values()), tuple(d)), lambda keys, c: collections.OrderedDict(zip(keys, c)),
    "OrderedDict")
_registry[collections.defaultdict] = _NodeType(
    lambda d: ([d[k] for k in sorted(d)], (d.default_factory, tuple(sorted(d)))),
    lambda aux, c: collections.defaultdict(aux[0], zip(aux[1], c)), "defaultdict")


def _node_type(x):
    nt = _registry.get(type(x))
    if nt is None and isinstance(x, tuple) and hasattr(x, "_fields"):
        return _NodeType(lambda t: (tuple(t), None), lambda _, c, T=type(x): T(*c), type(x).__name__)
    return nt


class PyTreeDef:
    """Structure of a pytree: node kind, aux data and children; leaves are ``None``."""
    __slots__ = ("node", "aux", "children", "num_leaves", "_hash", "_k")

    def __init__(self, node, aux, children):
        self.node, self.aux, self.children = node, aux, children
        self.num_leaves = 1 if node is None else sum(c.num_leaves for c in children)
        self._hash = None
        self._k = None

    @property
    def num_nodes(self):
        return 1 + sum(c.num_nodes for c in (self.children or ()))

    def _key(self):
        # Computed once: treedefs are immutable and compared on every jit call.
        if self._k is None:
            kind = None if self.node is None else self.node.from_iter
            self._k = (kind, _hashable(self.aux), tuple(c._key() for c in self.children))
        return self._k

    def __eq__(self, other):
        return self is other or (isinstance(other, PyTreeDef) and self._key() == other._key())

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(self._key())
        return self._hash

    def unflatten(self, leaves):
        return tree_unflatten(self, leaves)

    def __repr__(self):
        return f"PyTreeDef({self._str()})"

    def _str(self):
        if self.node is None:
            return "*"
        name, kids = self.node.name, [c._str() for c in self.children]
        if name == "tuple":
            return "(" + ", ".join(kids) + ("," if len(kids) == 1 else "") + ")"
        if name == "list":
            return "[" + ", ".join(kids) + "]"
        if name == "dict":
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(self.aux, kids)) + "}"
        if name == "None":
            return "None"
        return f"CustomNode({name}[{self.aux!r}], [{', '.join(kids)}])"


def _hashable(aux):
    try:
        hash(aux)
        return aux
    except TypeError:
        return repr(aux)


_LEAF = PyTreeDef(None, None, ())
_structure_cache = {}


def _flatten(x, leaves, is_leaf):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    nt = _node_type(x)
    if nt is None:
        leaves.append(x)
        return _LEAF
    children, aux = nt.to_iter(x)
    return PyTreeDef(nt, aux, tuple(_flatten(c, leaves, is_leaf) for c in children))


def tree_flatten(tree, is_leaf=None):
    leaves = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def tree_unflatten(treedef, leaves):
    it = iter(leaves)
    out = _unflatten(treedef, it)
    if next(it, _SENTINEL) is not _SENTINEL:
        raise ValueError("Too many leaves for PyTreeDef; expected "
                         f"{treedef.num_leaves}, got {len(list(leaves))}.")
    return out


_SENTINEL = object()


def _unflatten(treedef, it):
    if treedef.node is None:
        val = next(it, _SENTINEL)
        if val is _SENTINEL:
            raise ValueError("Too few leaves for PyTreeDef.")
        return val
    return treedef.node.from_iter(treedef.aux, [_unflatten(c, it) for c in treedef.children])


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    leaves, treedef = tree_flatten(tree, is_leaf)
    all_leaves = [leaves] + [_flatten_up_to(treedef, r) for r in rest]
    return tree_unflatten(treedef, [f(*xs) for xs in zip(*all_leaves)])


def _flatten_up_to(treedef, tree):
    if treedef.node is None:
        return [tree]
    nt = _node_type(tree)
    if nt is None or nt.from_iter is not treedef.node.from_iter:
        raise ValueError(f"Custom node type mismatch; expected {treedef}, got {tree!r}.")
    children, aux = nt.to_iter(tree)
    if _hashable(aux) != _hashable(treedef.aux):
        raise ValueError(f"Mismatch custom node data: {aux!r} != {treedef.aux!r}; value: {tree!r}.")
    if len(children) != len(treedef.children):
        raise ValueError(f"Tuple arity mismatch: {len(children)} != {len(treedef.children)}; "
                         f"tuple: {tree!r}.")
    out = []
    for c, sub in zip(children, treedef.children):
        out.extend(_flatten_up_to(sub, c))
    return out


def tree_reduce(function, tree, initializer=_SENTINEL, is_leaf=None):
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _SENTINEL:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree):
    return all(tree_leaves(tree))


def treedef_is_leaf(treedef):
    return treedef.node is None


class Partial(functools.partial):
    """A functools.partial that is a pytree whose leaves are the bound arguments."""

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


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, xs: Partial(func, *xs[0], **xs[1]))

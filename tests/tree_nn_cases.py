"""Cases shared by tests/test_tree_util.py, tests/test_nn.py and tests/compat/test_tree_nn_vs_jax.py.

Every builder takes the library under test (``numjax`` or real ``jax``) and
returns plain Python results (strings, ints, nested lists), so the same code
produces JAX's expectations and numjax's answers.

``python tests/tree_nn_cases.py`` run with JAX 0.10.2 installed rewrites
tests/tree_nn_expected.json, the data the default tests compare against; the
compat test checks that data against live JAX.
"""
import collections
import dataclasses
import functools
import json
import os
import warnings

import numpy as np

EXPECTED_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tree_nn_expected.json")

Point = collections.namedtuple("Point", "x y")


def load_expected():
    with open(EXPECTED_PATH) as f:
        return json.load(f)


# -- pytrees

def _custom_types(tu):
    """Fresh classes registered with ``tu``, so each library has its own registrations."""

    class Box:
        def __init__(self, a, b, tag="meta"):
            self.a, self.b, self.tag = a, b, tag

        def __repr__(self):
            return f"Box({self.a!r}, {self.b!r})"

    tu.register_pytree_node(Box, lambda x: ((x.a, x.b), x.tag), lambda tag, c: Box(*c, tag))

    class Var:
        def __init__(self, *c):
            self.c = c

        def __repr__(self):
            return f"Var{self.c}"

    tu.register_pytree_node(Var, lambda v: (v.c, None), lambda _, c: Var(*c))

    @tu.register_pytree_node_class
    class Cell:
        def __init__(self, v):
            self.v = v

        def tree_flatten(self):
            return (self.v,), {"k": 1}

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    class Keyed:
        def __init__(self, a, b):
            self.a, self.b = a, b

    tu.register_pytree_with_keys(
        Keyed, lambda k: (((tu.GetAttrKey("a"), k.a), (tu.DictKey("bb"), k.b)), "aux"),
        lambda aux, c: Keyed(*c))

    @functools.partial(tu.register_dataclass, data_fields=["x", "z"], meta_fields=["m"])
    @dataclasses.dataclass
    class Data:
        x: object
        z: object
        m: int

    @tu.register_dataclass
    @dataclasses.dataclass
    class Auto:
        w: object
        n: int = dataclasses.field(default=3, metadata=dict(static=True))

    @tu.register_static
    class Static:
        def __init__(self, v):
            self.v = v

        def __repr__(self):
            return f"Static({self.v})"

        def __eq__(self, other):
            return isinstance(other, Static) and other.v == self.v

        def __hash__(self):
            return hash(self.v)

    return dict(Box=Box, Var=Var, Cell=Cell, Keyed=Keyed, Data=Data, Auto=Auto, Static=Static)


def trees(tu):
    """name -> pytree with int leaves, covering every built-in and registered node kind."""
    T = _custom_types(tu)
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    dd = collections.defaultdict(list, {"b": 1, "a": 2})
    return {
        "leaf": 1, "none": None, "empty_tuple": (), "empty_list": [], "empty_dict": {},
        "tuple1": (1,), "tuple2": (1, 2), "list_none": [1, None],
        "dict_sorted": {"b": 1, "a": [2, None]}, "nested": (1, {"a": 1, "b": [2, None]}),
        "int_keys": {3: 1, 1: 2}, "tuple_keys": {(1, 2): 3, (0, 5): 4}, "quote_key": {'a"b': 1},
        "namedtuple": Point(1, 2), "namedtuple_nested": Point(1, (2, 3)),
        "ordereddict": od, "defaultdict": dd,
        "custom": T["Box"](1, 2), "custom_in_list": [T["Box"](1, None)], "custom_var": T["Var"](1, 2, 3),
        "node_class": T["Cell"](3), "with_keys": T["Keyed"](1, [2]), "dataclass": T["Data"](1, 2, 0),
        "dataclass_auto": T["Auto"](5), "static": [T["Static"](1), 2],
        "partial": tu.Partial(print, 1, k=2),
        "everything": {"a": [1, (2, Point(3, 4))], "b": collections.OrderedDict(z=5), "c": T["Box"](6, 7),
                       "d": T["Data"](8, 9, 0), "e": collections.defaultdict(int, {"k": 10}), "f": None},
    }


def tree_facts(lib):
    """Printed treedefs, counts, leaves and key paths of every tree in ``trees``."""
    tu = lib.tree_util
    out = {}
    for name, tree in trees(tu).items():
        leaves, td = tu.tree_flatten(tree)
        pairs = tu.tree_leaves_with_path(tree)
        out[name] = {
            "repr": repr(td), "str": str(td), "num_leaves": td.num_leaves, "num_nodes": td.num_nodes,
            "leaves": repr(leaves), "is_leaf": tu.treedef_is_leaf(td),
            "children": [repr(c) for c in td.children()],
            "paths": [tu.keystr(p) for p, _ in pairs],
            "simple_paths": [tu.keystr(p, simple=True, separator="/") for p, _ in pairs],
            "key_reprs": [repr(p) for p, _ in pairs],
            "roundtrip": repr(tu.tree_leaves(tu.tree_unflatten(td, leaves))),
        }
    return out


def _call(thunk):
    try:
        return ["ok", repr(thunk())]
    except Exception as e:  # noqa: BLE001 - the exception type and text are the result
        return [type(e).__name__, str(e)]


def tree_calls(lib):
    """name -> thunk: results and errors of the pytree API whose exact text is JAX's."""
    tu, S = lib.tree_util, lib.tree_util.tree_structure
    T = _custom_types(tu)
    Box, Var, Data = T["Box"], T["Var"], T["Data"]
    add = lambda a, b: a + b  # noqa: E731
    first = lambda a, *_: a  # noqa: E731
    od = collections.OrderedDict
    return {
        # tree_map structure errors: JAX's key-path messages
        "map_tuple_len": lambda: tu.tree_map(add, (1, 2), (1, 2, 3)),
        "map_types": lambda: tu.tree_map(add, (1, 2), [1, 2]),
        "map_leaf_vs_node": lambda: tu.tree_map(add, (1, 2), 3),
        "map_dict_keys": lambda: tu.tree_map(add, {"a": 1}, {"b": 1}),
        "map_dict_count": lambda: tu.tree_map(add, {"a": 1}, {"a": 1, "b": 2}),
        "map_dict_count_less": lambda: tu.tree_map(first, {"a": 1, "b": 2, "c": 3}, {"a": 1, "c": 1}),
        "map_namedtuple_vs_tuple": lambda: tu.tree_map(add, Point(1, 2), (1, 2)),
        "map_none_vs_int": lambda: tu.tree_map(add, [1, None], [1, 2]),
        "map_leaf_takes_subtree": lambda: tu.tree_map(first, (1, 2), ((1, 2), [3])),
        "map_none_passed_as_leaf": lambda: tu.tree_map(lambda a, b: (a, b), [1, 2], [1, None]),
        "map_ordered_vs_dict": lambda: tu.tree_map(add, od(a=1), {"a": 1}),
        "map_ordered_order": lambda: tu.tree_map(first, od(a=1, b=2), od(b=1, a=2)),
        "map_defaultdict_factory": lambda: tu.tree_map(first, collections.defaultdict(int, a=1),
                                                       collections.defaultdict(list, a=1)),
        "map_nested_path": lambda: tu.tree_map(add, (1, {"x": [2, 3]}), (1, {"x": [2]})),
        "map_custom_meta": lambda: tu.tree_map(first, Box(1, 2), Box(1, 2, "other")),
        "map_custom_path": lambda: tu.tree_map(first, [Box(1, (2,))], [Box(1, (2, 3))]),
        "map_custom_count": lambda: tu.tree_map(first, Var(1, 2), Var(1, 2, 3)),
        "map_dataclass_path": lambda: tu.tree_map(first, Data([1], 2, 3), Data([1, 2], 2, 3)),
        "map_dataclass_meta": lambda: tu.tree_map(first, Data([1], 2, 3), Data([1], 2, 4)),
        "map_third_tree": lambda: tu.tree_map(lambda a, b, c: a, [1], [1], [1, 2]),
        "map_is_leaf": lambda: tu.tree_map(lambda a, b: (a, b), [1, (2,)], [(3,), 2],
                                           is_leaf=lambda x: isinstance(x, tuple)),
        "map_is_leaf_none": lambda: tu.tree_map(lambda x: x, [None, 1], is_leaf=lambda x: x is None),
        "map_none": lambda: tu.tree_map(lambda x: x, None),
        "map_partial": lambda: tu.tree_map(lambda x: x * 10, tu.Partial(add, 1))(2),
        # PyTreeDef methods
        "unflatten_few": lambda: tu.tree_unflatten(S((1, 2)), [1]),
        "unflatten_many": lambda: tu.tree_unflatten(S((1, 2)), [1, 2, 3]),
        "unflatten_none_extra": lambda: tu.tree_unflatten(S(None), [1]),
        "unflatten_iter": lambda: S((1, (2, 3))).unflatten(iter([4, 5, 6])),
        "up_to_ok": lambda: S((1, [2])).flatten_up_to(((1, 2), [3])),
        "up_to_tuple_arity": lambda: S((1, 2)).flatten_up_to((1, 2, 3)),
        "up_to_list_arity": lambda: S([1, 2]).flatten_up_to([1]),
        "up_to_expected_tuple": lambda: S((1, 2)).flatten_up_to(5),
        "up_to_expected_list": lambda: S([1, 2]).flatten_up_to((1, 2)),
        "up_to_dict_keys": lambda: S({"a": 1}).flatten_up_to({"a": 1, "b": 2}),
        "up_to_expected_dict": lambda: S({"a": 1}).flatten_up_to([1]),
        "up_to_none": lambda: S(None).flatten_up_to(1),
        "up_to_namedtuple_type": lambda: S(Point(1, 2)).flatten_up_to(
            collections.namedtuple("Other", "x y")(1, 2)),
        "up_to_expected_namedtuple": lambda: S(Point(1, 2)).flatten_up_to((1, 2)),
        "up_to_custom_data": lambda: S(od(a=1)).flatten_up_to(od(b=1)),
        "up_to_custom_type": lambda: S(Var(1, 2)).flatten_up_to((1, 2)),
        "up_to_custom_arity": lambda: S(Var(1, 2)).flatten_up_to(Var(1, 2, 3)),
        "node_data_dict": lambda: S({"b": 1, "a": 2}).node_data(),
        "node_data_leaf": lambda: S(1).node_data(),
        "node_data_custom": lambda: S(Box(1, 2)).node_data()[1],
        "compose": lambda: S((1, 2)).compose(S([1, None])),
        "eq_same": lambda: S((1, 2)) == S((3, 4)),
        "eq_keys": lambda: S({"a": 1}) == S({"b": 4}),
        "eq_list_tuple": lambda: S([1]) == S((1,)),
        "eq_custom_aux": lambda: S(Box(1, 2)) == S(Box(3, 4)),
        "eq_partial_func": lambda: S(tu.Partial(print, 1)) == S(tu.Partial(repr, 2)),
        "hash_equal": lambda: hash(S((1, [2]))) == hash(S((3, [4]))),
        "is_leaf_none": lambda: tu.treedef_is_leaf(S(None)),
        "is_leaf_tuple": lambda: tu.treedef_is_leaf(S((1,))),
        "treedef_tuple": lambda: tu.treedef_tuple([S(1), S([1])]),
        "treedef_children": lambda: tu.treedef_children(S((1, [2]))),
        # reductions, transpose, broadcast
        "reduce": lambda: tu.tree_reduce(add, [1, 2, (3,)]),
        "reduce_init": lambda: tu.tree_reduce(add, [], 0),
        "reduce_empty": lambda: tu.tree_reduce(add, []),
        "reduce_assoc": lambda: tu.tree_reduce_associative(add, [1, 2, 3, (4, 5)]),
        "reduce_assoc_empty": lambda: tu.tree_reduce_associative(add, []),
        "all_false": lambda: tu.tree_all([1, 0]),
        "all_none": lambda: tu.tree_all([1, None]),
        "all_is_leaf": lambda: tu.tree_all([1, None], is_leaf=lambda x: x is None),
        "all_leaves": lambda: (tu.all_leaves([1, 2]), tu.all_leaves([1, (2,)]), tu.all_leaves([None]),
                               tu.all_leaves([None], is_leaf=lambda x: x is None)),
        "transpose": lambda: tu.tree_transpose(S([0, 0]), S((0, 0, 0)), [(1, 2, 3), (4, 5, 6)]),
        "transpose_infer": lambda: tu.tree_transpose(S([0, 0]), None, [(1, 2, 3), (4, 5, 6)]),
        "transpose_mismatch": lambda: tu.tree_transpose(S([0, 0]), S((0, 0)), [(1, 2, 3), (4, 5, 6)]),
        "broadcast": lambda: tu.tree_broadcast([1, (2, 3)], [[4, 5], ((6, 7), 8)]),
        "broadcast_leaf": lambda: tu.tree_broadcast(1, [2, 3]),
        "broadcast_error": lambda: tu.tree_broadcast([1, 2], [2, 3, 4]),
        # flattening details
        "dict_unsortable": lambda: tu.tree_leaves({"b": 1, 1: 2}),
        "is_leaf_stops": lambda: tu.tree_leaves([1, None, (2, {"a": 3})], is_leaf=lambda x: isinstance(x, tuple)),
        "is_leaf_none": lambda: tu.tree_leaves([1, None, (2, {"a": 3})], is_leaf=lambda x: x is None),
        "flatten_one_level": lambda: tu.flatten_one_level([1, [2]]),
        "flatten_one_level_leaf": lambda: tu.flatten_one_level(1),
        "flatten_one_level_keys": lambda: tu.flatten_one_level_with_keys({"b": 1, "a": 2}),
        # key paths
        "map_with_path": lambda: tu.tree_map_with_path(lambda p, x: (tu.keystr(p), x), [1, {"q": 2}]),
        "map_with_path_rest": lambda: tu.tree_map_with_path(lambda p, x, y: (tu.keystr(p), x, y),
                                                            [1, {"q": 2}], [3, {"q": 4}]),
        "flatten_with_path_leaf": lambda: tu.tree_flatten_with_path(1),
        "flatten_with_path_none_leaf": lambda: tu.tree_flatten_with_path([None, 1], is_leaf=lambda x: x is None),
        "flatten_with_path_takes_path": lambda: tu.tree_leaves_with_path(
            {"a": [1, 2], "b": 3}, is_leaf=lambda p, x: len(p) == 1, is_leaf_takes_path=True),
        "keystr_mixed": lambda: tu.keystr((tu.DictKey((1, "a")), tu.SequenceKey(2), tu.GetAttrKey("q"),
                                           tu.FlattenedIndexKey(4))),
        "keystr_simple": lambda: tu.keystr((tu.DictKey("a"), tu.SequenceKey(0), tu.GetAttrKey("q")), simple=True),
        "keystr_empty": lambda: tu.keystr(()),
        "key_eq": lambda: (tu.SequenceKey(1) == tu.SequenceKey(1), tu.SequenceKey(1) == tu.FlattenedIndexKey(1),
                           tu.DictKey(1) == 1, hash(tu.GetAttrKey("a")) == hash(tu.GetAttrKey("a"))),
        "key_fields": lambda: (tu.SequenceKey(1).idx, tu.DictKey("a").key, tu.GetAttrKey("x").name,
                               tu.FlattenedIndexKey(2).key),
        # registration
        "register_duplicate": lambda: tu.register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c)),
        "register_dataclass_not_dc": lambda: tu.register_dataclass(type("NotDC", (), {})),
        "register_dataclass_missing": lambda: tu.register_dataclass(
            dataclasses.make_dataclass("DC", ["x", "y"]), data_fields=["x"], meta_fields=[]),
        "register_dataclass_unexpected": lambda: tu.register_dataclass(
            dataclasses.make_dataclass("DC", ["x", "y"]), data_fields=["x"], meta_fields=["q", "y"]),
        "dataclass_map": lambda: repr(tu.tree_map(lambda x: x + 1, T["Auto"](1))),
        "partial_call": lambda: tu.Partial(add, 1)(2),
        "partial_nested": lambda: tu.tree_leaves(tu.Partial(tu.Partial(add, 1), 3)),
    }


def tree_call_results(lib):
    return {name: _call(thunk) for name, thunk in tree_calls(lib).items()}


# -- flatten_util.ravel_pytree

RAVEL_TREES = {
    "dict_scalar": lambda: {"a": 1.0, "b": np.ones(2, np.float32)},
    "int_float": lambda: (1, 2.0),
    "ints": lambda: (1, 2),
    "int_array_float_array": lambda: [np.arange(3, dtype=np.int32), np.ones((2, 2), np.float32)],
    "int_array_pyfloat": lambda: [np.arange(3, dtype=np.int32), 1.5],
    "uint8_bool": lambda: [np.arange(3, dtype=np.uint8), np.array([True])],
    "float64_leaf": lambda: [np.float64(3.0)],
    "f16_int": lambda: [np.ones(2, np.float16), np.ones(1, np.int32)],
    "empty": lambda: [],
    "none_only": lambda: {"x": None},
    "nested": lambda: {"w": [np.arange(6, dtype=np.float32).reshape(2, 3), (np.float32(7), None)],
                       "b": Point(np.ones(2, np.float32), np.zeros((1, 1), np.float32))},
}


def _describe(x):
    return [np.asarray(x).astype(np.float64).ravel().tolist(), list(np.shape(x)), str(x.dtype), bool(x.weak_type)]


def ravel_results(lib):
    """name -> flat (values, shape, dtype, weak) and the unraveled leaves, described the same way."""
    out = {}
    for name, make in RAVEL_TREES.items():
        flat, unravel = lib.flatten_util.ravel_pytree(make())
        back = unravel(flat)
        out[name] = {"flat": _describe(flat), "tree": repr(lib.tree_util.tree_structure(back)),
                     "leaves": [_describe(x) for x in lib.tree_util.tree_leaves(back)]}
    return out


# -- jax.nn

NN_INPUTS = {
    "f32": lambda: np.array([1., 2.], np.float32), "i32": lambda: np.array([1, 2], np.int32),
    "bool": lambda: np.array([True, False]), "pyfloat": lambda: 1.5, "pyint": lambda: 2,
    "f16": lambda: np.array([1., 2.], np.float16), "u8": lambda: np.array([1, 2], np.uint8),
}
NN_FUNCTIONS = [
    "celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_tanh", "identity", "leaky_relu", "log1mexp",
    "log_sigmoid", "log_softmax", "logmeanexp", "mish", "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign",
    "softmax", "softplus", "sparse_plus", "sparse_sigmoid", "squareplus", "standardize", "tanh",
]


def nn_dtypes(lib):
    """'fn/input' -> [dtype, weak_type, shape] or ['error', exception type name]."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f in NN_FUNCTIONS:
            for k, make in NN_INPUTS.items():
                try:
                    r = getattr(lib.nn, f)(make())
                    out[f"{f}/{k}"] = [str(r.dtype), bool(r.weak_type), list(r.shape)]
                except Exception as e:  # noqa: BLE001 - the exception type is the result
                    out[f"{f}/{k}"] = ["error", type(e).__name__]
    return out


NN_X = np.array([-30, -6, -3, -1.5, -1, -0.5, -0.1, 0, 0.1, 0.5, 1, 1.5, 3, 6, 30], np.float32)
NN_X_POSITIVE = np.array([0.01, 0.1, 0.5, 0.69, 0.7, 1, 2, 5, 20], np.float32)
# name -> (jax.nn function, keyword arguments)
NN_ELEMENTWISE = {
    "relu": ("relu", {}), "relu6": ("relu6", {}), "squareplus": ("squareplus", {}),
    "squareplus_b1": ("squareplus", {"b": 1.0}), "softplus": ("softplus", {}), "sparse_plus": ("sparse_plus", {}),
    "soft_sign": ("soft_sign", {}), "sigmoid": ("sigmoid", {}), "sparse_sigmoid": ("sparse_sigmoid", {}),
    "silu": ("silu", {}), "swish": ("swish", {}), "mish": ("mish", {}), "log_sigmoid": ("log_sigmoid", {}),
    "elu": ("elu", {}), "elu_a2": ("elu", {"alpha": 2.0}), "leaky_relu": ("leaky_relu", {}),
    "leaky_relu_02": ("leaky_relu", {"negative_slope": 0.2}), "hard_tanh": ("hard_tanh", {}),
    "celu": ("celu", {}), "celu_a05": ("celu", {"alpha": 0.5}), "selu": ("selu", {}), "gelu": ("gelu", {}),
    "gelu_exact": ("gelu", {"approximate": False}), "hard_sigmoid": ("hard_sigmoid", {}),
    "hard_silu": ("hard_silu", {}), "hard_swish": ("hard_swish", {}), "tanh": ("tanh", {}),
    "identity": ("identity", {}), "log1mexp": ("log1mexp", {}),
}


def nn_elementwise_fn(lib, name):
    fname, kw = NN_ELEMENTWISE[name]
    f = getattr(lib.nn, fname)
    return (lambda x: f(x, **kw)), (NN_X_POSITIVE if fname == "log1mexp" else NN_X)


def nn_elementwise_values(lib):
    """name -> {'value': f(x), 'grad': f'(x)} at the points NN_X (NN_X_POSITIVE for log1mexp)."""
    out = {}
    for name in NN_ELEMENTWISE:
        f, x = nn_elementwise_fn(lib, name)
        out[name] = {"value": np.asarray(f(x)).tolist(),
                     "grad": np.asarray(lib.vmap(lib.grad(f))(x)).tolist()}
    return out


_rng = np.random.RandomState(0)
NN_M = (_rng.randn(3, 5) * 3).astype(np.float32)
NN_WHERE = _rng.rand(3, 5) > 0.3
NN_WHERE[:, 0] = True
NN_T = _rng.randn(3, 5).astype(np.float32)


def nn_array_fns(lib):
    nn = lib.nn
    return {
        "softmax": lambda x: nn.softmax(x), "softmax0": lambda x: nn.softmax(x, axis=0),
        "softmax_where": lambda x: nn.softmax(x, where=NN_WHERE), "log_softmax": lambda x: nn.log_softmax(x),
        "log_softmax0": lambda x: nn.log_softmax(x, axis=0),
        "log_softmax_where": lambda x: nn.log_softmax(x, where=NN_WHERE),
        "standardize": lambda x: nn.standardize(x), "standardize0": lambda x: nn.standardize(x, axis=0),
        "standardize_stable": lambda x: nn.standardize(x, algorithm="stable"),
        "standardize_mv": lambda x: nn.standardize(x, mean=1.0, variance=4.0),
        "glu": lambda x: nn.glu(x[:, :4]), "glu0": lambda x: nn.glu(x[:2], axis=0),
        "logmeanexp": lambda x: nn.logmeanexp(x, axis=1), "logsumexp": lambda x: nn.logsumexp(x, axis=1),
    }


def nn_cotangent(shape):
    return (0.5 + 0.1 * np.arange(int(np.prod(shape)))).reshape(shape).astype(np.float32)


def nn_array_values(lib):
    """name -> value, jvp along NN_T and vjp of nn_cotangent at NN_M (-inf written as None)."""
    out = {}
    for name, f in nn_array_fns(lib).items():
        v = np.asarray(f(NN_M))
        jvp = np.asarray(lib.jvp(f, (NN_M,), (NN_T,))[1])
        vjp = np.asarray(lib.vjp(f, NN_M)[1](nn_cotangent(v.shape))[0])
        out[name] = {"value": [None if np.isneginf(a) else float(a) for a in v.ravel()], "shape": list(v.shape),
                     "jvp": jvp.ravel().tolist(), "vjp": vjp.ravel().tolist()}
    return out


NN_ONE_HOT = {
    "basic": ([0, 2, 1, 5, -1], dict(num_classes=4)), "axis0": ([[0, 1], [2, 3]], dict(num_classes=3, axis=0)),
    "axis1": ([[0, 1], [2, 3]], dict(num_classes=4, axis=1)), "int8": ([1, 0], dict(num_classes=2, dtype="int8")),
    "bool": ([1, 2], dict(num_classes=3, dtype="bool")),
}


def nn_one_hot(lib):
    out = {}
    for name, (x, kw) in NN_ONE_HOT.items():
        kw = dict(kw)
        if "dtype" in kw:
            kw["dtype"] = np.dtype(kw["dtype"])
        r = lib.nn.one_hot(np.array(x, np.int32), **kw)
        out[name] = {"value": np.asarray(r).astype(float).ravel().tolist(), "dtype": str(r.dtype),
                     "shape": list(r.shape)}
    return out


# -- jax.nn.initializers

def init_cases(lib):
    """name -> (initializer, shape, dtype or None)."""
    I = lib.nn.initializers
    return {
        "zeros": (I.zeros, (2, 3), None), "ones": (I.ones, (3,), None), "ones_i32": (I.ones, (2,), "int32"),
        "constant": (I.constant(0.5), (2, 2), None), "constant_f16": (I.constant(-2, dtype=np.float16), (3,), None),
        "uniform": (I.uniform(), (4, 3), None), "uniform_s2": (I.uniform(2.0), (5,), None),
        "normal": (I.normal(), (4, 3), None), "normal_s1": (I.normal(1.0), (2, 5), None),
        "truncated_normal": (I.truncated_normal(), (4, 3), None),
        "truncated_normal_b": (I.truncated_normal(1.0, lower=-1.0, upper=0.5), (6,), None),
        "glorot_uniform": (I.glorot_uniform(), (4, 3), None), "glorot_normal": (I.glorot_normal(), (4, 3), None),
        "xavier_uniform": (I.xavier_uniform(), (2, 3), None),
        "he_uniform": (I.he_uniform(), (3, 3, 2, 4), None), "he_normal": (I.he_normal(), (5, 4), None),
        "kaiming_normal": (I.kaiming_normal(), (2, 2), None),
        "lecun_uniform": (I.lecun_uniform(), (4, 6), None), "lecun_normal": (I.lecun_normal(), (4, 6), None),
        "vs_fan_out_normal": (I.variance_scaling(0.5, "fan_out", "normal"), (3, 5), None),
        "vs_geo_uniform": (I.variance_scaling(2.0, "fan_geo_avg", "uniform", in_axis=0, out_axis=(1, 2)),
                           (2, 3, 4), None),
        "vs_batch": (I.variance_scaling(1.0, "fan_in", "truncated_normal", batch_axis=0), (2, 3, 4), None),
        "vs_f16": (I.variance_scaling(1.0, "fan_avg", "uniform"), (3, 3), "float16"),
        "orthogonal": (I.orthogonal(), (4, 3), None), "orthogonal_wide": (I.orthogonal(2.0), (2, 5), None),
        "orthogonal_axis0": (I.orthogonal(column_axis=0), (3, 2, 2), None),
        "delta_orthogonal": (I.delta_orthogonal(), (3, 2, 3), None),
    }


INIT_SEEDS = (0, 42)


def run_init(lib, name, seed):
    init, shape, dt = init_cases(lib)[name]
    key = lib.random.PRNGKey(seed)
    return init(key, shape) if dt is None else init(key, shape, np.dtype(dt))


def init_values(lib):
    out = {}
    for name in init_cases(lib):
        for seed in INIT_SEEDS:
            r = run_init(lib, name, seed)
            out[f"{name}/{seed}"] = {"dtype": str(r.dtype), "weak": bool(r.weak_type), "shape": list(r.shape),
                                     "value": np.asarray(r).astype(np.float64).ravel().tolist()}
    return out


def all_expected(lib):
    return {"tree_facts": tree_facts(lib), "tree_calls": tree_call_results(lib), "nn_dtypes": nn_dtypes(lib),
            "nn_elementwise": nn_elementwise_values(lib), "nn_arrays": nn_array_values(lib),
            "nn_one_hot": nn_one_hot(lib), "init": init_values(lib), "ravel": ravel_results(lib)}


if __name__ == "__main__":
    import jax  # the reference; only this generator imports it
    import jax.flatten_util  # noqa: F401

    assert jax.__version__ == "0.10.2", jax.__version__
    jax.config.update("jax_enable_x64", False)
    import tree_nn_cases  # as a module, so class reprs name tree_nn_cases, not __main__

    with open(EXPECTED_PATH, "w") as f:
        json.dump(tree_nn_cases.all_expected(jax), f, indent=0, sort_keys=True)
    print("wrote", EXPECTED_PATH)

"""Pytrees (numjax.tree_util, numjax.tree) and numjax.flatten_util.ravel_pytree.

The behaviour tables live in tests/tree_nn_cases.py; the expected answers
(printed PyTreeDefs, key paths, error types and messages, ravel dtypes) were
produced by JAX 0.10.2 and are committed in tests/tree_nn_expected.json.
Below them: hypothesis properties of flatten/unflatten/map/key paths, and
pytrees going through jit, grad and vmap.
"""
import collections
import dataclasses
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numjax as jax
import numjax.numpy as jnp
from numjax import tree_util as tu
from numjax.flatten_util import ravel_pytree
from tree_nn_cases import RAVEL_TREES, Point, load_expected, ravel_results, tree_call_results, tree_facts

EXPECTED = load_expected()
FACTS = tree_facts(jax)
CALLS = tree_call_results(jax)
RAVEL = ravel_results(jax)


# ---------------------------------------------------------------- tables vs JAX

@pytest.mark.parametrize("name", sorted(EXPECTED["tree_facts"]))
def test_treedef_printing_counts_and_paths(name):
    assert FACTS[name] == EXPECTED["tree_facts"][name]


@pytest.mark.parametrize("name", sorted(EXPECTED["tree_calls"]))
def test_api_results_and_errors(name):
    kind, text = CALLS[name]
    exp_kind, exp_text = EXPECTED["tree_calls"][name]
    assert kind == exp_kind, text
    assert text == exp_text


@pytest.mark.parametrize("name", sorted(RAVEL_TREES))
def test_ravel_pytree_dtypes_and_values(name):
    assert RAVEL[name] == EXPECTED["ravel"][name]


def test_tree_module_names():
    names = {"all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map",
             "map_with_path", "reduce", "reduce_associative", "static", "structure", "transpose", "unflatten"}
    assert names <= set(dir(jax.tree))
    assert jax.tree.map is tu.tree_map and jax.tree.flatten is tu.tree_flatten
    field = jax.tree.static(default=1, metadata={"doc": "x"})
    assert field.metadata == {"doc": "x", "static": True} and field.default == 1
    assert isinstance(field, dataclasses.Field)


def test_static_field_makes_meta_field():
    @tu.register_dataclass
    @dataclasses.dataclass
    class Layer:
        w: object
        act: str = jax.tree.static(default="relu")

    leaves, td = tu.tree_flatten(Layer(np.ones(2)))
    assert len(leaves) == 1 and repr(td) == "PyTreeDef(CustomNode(Layer[('relu',)], [*]))"


# ---------------------------------------------------------------- properties

_leaf = st.integers(-5, 5)
_trees = st.recursive(
    _leaf | st.none(),
    lambda kids: (st.lists(kids, max_size=3) | st.lists(kids, max_size=3).map(tuple)
                  | st.dictionaries(st.sampled_from("abcd"), kids, max_size=3)
                  | st.tuples(kids, kids).map(lambda t: Point(*t))
                  | st.dictionaries(st.sampled_from("xyz"), kids, max_size=2).map(collections.OrderedDict)),
    max_leaves=12)


def _get(tree, path):
    for k in path:
        if isinstance(k, tu.SequenceKey):
            tree = tree[k.idx]
        elif isinstance(k, tu.DictKey):
            tree = tree[k.key]
        else:
            tree = getattr(tree, k.name)
    return tree


@settings(max_examples=150, deadline=None)
@given(_trees)
def test_flatten_roundtrip_map_and_paths(tree):
    leaves, td = tu.tree_flatten(tree)
    assert tu.tree_unflatten(td, leaves) == tree
    assert td.num_leaves == len(leaves)
    assert tu.tree_map(lambda x: x, tree) == tree
    assert tu.tree_leaves(tu.tree_map(lambda x: x * 2, tree)) == [x * 2 for x in leaves]
    # rebuilding from a second flatten gives an equal, equally hashed treedef
    td2 = tu.tree_structure(tu.tree_unflatten(td, leaves))
    assert td2 == td and hash(td2) == hash(td)
    pairs, td3 = tu.tree_flatten_with_path(tree)
    assert td3 == td and [x for _, x in pairs] == leaves
    for path, x in pairs:
        assert _get(tree, path) == x
    # every tree is a prefix of itself
    assert td.flatten_up_to(tree) == leaves
    assert tu.tree_map(lambda a, b: a - b, tree, tree) == tu.tree_map(lambda a: 0, tree)


@settings(max_examples=60, deadline=None)
@given(_trees, _trees)
def test_structure_equality_matches_printing(a, b):
    ta, tb = tu.tree_structure(a), tu.tree_structure(b)
    assert (ta == tb) == (repr(ta) == repr(tb))
    if ta == tb:
        assert hash(ta) == hash(tb)


def test_transpose_roundtrip():
    outer, inner = tu.tree_structure([0, 0, 0]), tu.tree_structure({"a": 0, "b": 0})
    tree = [{"a": i, "b": -i} for i in range(3)]
    t = tu.tree_transpose(outer, inner, tree)
    assert t == {"a": [0, 1, 2], "b": [0, -1, -2]}
    assert tu.tree_transpose(inner, outer, t) == tree


def test_namedtuple_treedefs_are_equal():
    # one node type per namedtuple class, so equal structures hash and compare equal
    assert tu.tree_structure(Point(1, 2)) == tu.tree_structure(Point(3, 4))
    assert len({tu.tree_structure(Point(i, i)) for i in range(3)}) == 1


def test_registered_subclass_is_a_leaf():
    class MyDict(dict):
        pass

    assert tu.tree_leaves(MyDict(a=1)) == [MyDict(a=1)]


# ---------------------------------------------------------------- through transformations

@dataclasses.dataclass
class Params:
    w: object
    b: object
    name: str = "layer"


tu.register_dataclass(Params, data_fields=["w", "b"], meta_fields=["name"])


def _loss(p, x):
    return jnp.sum((x @ p.w + p.b) ** 2)


def test_grad_and_vmap_of_dataclass_and_namedtuple():
    p = Params(jnp.ones((3, 2)), jnp.zeros(2))
    x = jnp.arange(6.0).reshape(2, 3)
    g = jax.grad(_loss)(p, x)
    assert isinstance(g, Params) and g.name == "layer"
    pred = x @ np.ones((3, 2))
    np.testing.assert_allclose(g.w, 2 * np.asarray(x).T @ pred, rtol=1e-6)
    np.testing.assert_allclose(g.b, 2 * pred.sum(0), rtol=1e-6)
    out = jax.vmap(lambda pt: pt.x * pt.y)(Point(jnp.arange(3.0), jnp.ones(3)))
    np.testing.assert_allclose(out, [0.0, 1.0, 2.0])


def test_jit_reuses_trace_for_equal_structures():
    f = jax.jit(lambda pt, d: pt.x + pt.y * d["k"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = f(Point(jnp.ones(2), jnp.ones(2)), {"k": jnp.ones(2)})
        b = f(Point(jnp.zeros(2), jnp.ones(2)), {"k": 2 * jnp.ones(2)})
    assert not [w for w in caught if "runs eagerly" in str(w.message)]
    np.testing.assert_allclose(a, [2.0, 2.0])
    np.testing.assert_allclose(b, [2.0, 2.0])
    assert f.stats.trace_misses == 1


def test_ravel_pytree_under_grad_and_vmap():
    tree = {"a": jnp.float32(1.0), "b": jnp.array([2.0, 3.0])}
    g = jax.grad(lambda t: jnp.sum(ravel_pytree(t)[0] ** 2))(tree)
    np.testing.assert_allclose(g["a"], 2.0)
    np.testing.assert_allclose(g["b"], [4.0, 6.0])
    flat = jax.vmap(lambda t: ravel_pytree(t)[0])({"a": jnp.ones(3), "b": jnp.ones((3, 2))})
    assert flat.shape == (3, 3)
    flat, unravel = ravel_pytree(tree)
    back = unravel(flat * 2)
    np.testing.assert_allclose(back["b"], [4.0, 6.0])
    with pytest.raises(TypeError, match="unravel function given array of dtype int32"):
        ravel_pytree([np.arange(2, dtype=np.int32), np.ones(1, np.float32)])[1](jnp.arange(3))


def test_ravel_pytree_under_jit():
    tree = {"w": jnp.ones((2, 2)), "b": (jnp.zeros(3), None)}
    _, unravel = ravel_pytree(tree)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        flat = jax.jit(lambda t: ravel_pytree(t)[0] + 1.0)(tree)
    assert not [w for w in caught if "runs eagerly" in str(w.message)]
    np.testing.assert_allclose(flat, [1, 1, 1, 2, 2, 2, 2])  # sorted keys: 'b' before 'w'
    assert tu.tree_structure(unravel(flat)) == tu.tree_structure(tree)

"""PRNG keys and pytrees, with `import numjax as jax`.

Splits keys and samples from them (the same bits JAX draws), then takes
pytrees apart: tree_map, flatten/unflatten, key paths, a registered dataclass
going through grad, and ravel_pytree turning a pytree into one vector.
"""
import collections
import dataclasses

import numjax as jax
import numjax.numpy as jnp
from numjax.flatten_util import ravel_pytree


def random_keys():
    key = jax.random.PRNGKey(0)
    print("key:", key)
    key, sub = jax.random.split(key)
    print("split ->", key, sub)
    print("normal(sub, (3,)):", jax.random.normal(sub, (3,)))
    print("uniform(sub, (2,), minval=-1, maxval=1):", jax.random.uniform(sub, (2,), minval=-1, maxval=1))
    print("same key, same numbers:", bool(jnp.all(jax.random.normal(sub, (3,)) == jax.random.normal(sub, (3,)))))
    keys = jax.random.split(key, 4)
    print("four keys, one sample each:", jax.vmap(lambda k: jax.random.uniform(k))(keys))
    print("fold_in(key, 7):", jax.random.fold_in(key, 7))


Point = collections.namedtuple("Point", "x y")


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Linear:
    w: jax.Array
    b: jax.Array
    activation: str = jax.tree.static(default="tanh")

    def __call__(self, x):
        return jnp.tanh(x @ self.w + self.b)


def pytrees():
    tree = {"params": [jnp.ones(2), (jnp.zeros(3), None)], "point": Point(1.0, 2.0)}
    leaves, treedef = jax.tree.flatten(tree)
    print("treedef:", treedef)
    print("leaves:", len(leaves), [getattr(x, "shape", ()) for x in leaves])
    print("tree_map(x * 2):", jax.tree.map(lambda x: x * 2, tree["point"]))
    print("two trees at once:", jax.tree.map(lambda a, b: a + b, [1, (2, 3)], [10, (20, 30)]))
    for path, leaf in jax.tree_util.tree_leaves_with_path(tree):
        print(f"  {jax.tree_util.keystr(path):22s} {getattr(leaf, 'shape', leaf)}")
    print("unflatten with new leaves:", jax.tree.unflatten(treedef, range(len(leaves))))
    try:
        jax.tree.map(lambda a, b: a + b, (1, 2), (1, 2, 3))
    except ValueError as err:
        print("mismatched structures ->", str(err).splitlines()[0])


def dataclass_and_ravel():
    key_w, key_b = jax.random.split(jax.random.PRNGKey(1))
    layer = Linear(jax.nn.initializers.glorot_normal()(key_w, (3, 2)), jax.random.normal(key_b, (2,)) * 0.1)
    print("Linear treedef:", jax.tree.structure(layer))
    x = jnp.arange(6.0).reshape(2, 3) / 6
    grads = jax.grad(lambda layer: jnp.sum(layer(x) ** 2))(layer)
    print("grad is a Linear too:", type(grads).__name__, grads.w.shape, grads.b.shape, grads.activation)
    flat, unravel = ravel_pytree(layer)
    print("ravel_pytree:", flat.shape, flat.dtype)
    print("unravel(flat) == layer:", all(bool(jnp.all(a == b)) for a, b in
                                        zip(jax.tree.leaves(unravel(flat)), jax.tree.leaves(layer))))


if __name__ == "__main__":
    random_keys()
    print()
    pytrees()
    print()
    dataclass_and_ravel()

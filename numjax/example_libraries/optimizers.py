"""``jax.example_libraries.optimizers``: first-order optimizers as (init, update, get_params).

Each optimizer is written for one array; the :func:`optimizer` decorator lifts it to pytrees
of parameters. The state of a whole tree is an :class:`OptimizerState`: the flattened
per-leaf states plus the tree structures needed to rebuild them, itself a pytree so it can
pass through ``jit``.
"""
import functools
from collections import namedtuple

import numjax.numpy as jnp
from numjax import tree_util

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
tree_util.register_pytree_node(
    OptimizerState,
    lambda state: ((state.packed_state,), (state.tree_def, state.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]))

Optimizer = namedtuple("Optimizer", ["init_fn", "update_fn", "params_fn"])


def optimizer(opt_maker):
    """Lift ``opt_maker`` (returning per-array init/update/get_params) to pytrees of arrays."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_leaves, tree = tree_util.tree_flatten(x0_tree)
            states = [tree_util.tree_flatten(init(x0)) for x0 in x0_leaves]
            packed = [leaves for leaves, _ in states]
            return OptimizerState(packed, tree, [subtree for _, subtree in states])

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            packed, tree, subtrees = opt_state
            grad_leaves, grad_tree_def = tree_util.tree_flatten(grad_tree)
            if grad_tree_def != tree:
                raise TypeError("optimizer update function was passed a gradient tree that did not "
                                f"match the parameter tree structure with which it was initialized: "
                                f"parameter tree {tree} and grad tree {grad_tree_def}.")
            states = [tree_util.tree_unflatten(s, leaves) for s, leaves in zip(subtrees, packed)]
            new_states = [update(i, g, state) for g, state in zip(grad_leaves, states)]
            flat = [tree_util.tree_flatten(state) for state in new_states]
            return OptimizerState([leaves for leaves, _ in flat], tree, [s for _, s in flat])

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            packed, tree, subtrees = opt_state
            states = [tree_util.tree_unflatten(s, leaves) for s, leaves in zip(subtrees, packed)]
            return tree_util.tree_unflatten(tree, [get_params(state) for state in states])

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


# ---------------------------------------------------------------- optimizers

@optimizer
def sgd(step_size):
    step_size = make_schedule(step_size)

    def update(i, g, x):
        return x - step_size(i) * g
    return (lambda x0: x0), update, (lambda x: x)


@optimizer
def momentum(step_size, mass):
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity
    return init, update, lambda state: state[0]


@optimizer
def nesterov(step_size, mass):
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        # Step along the look-ahead direction: the new velocity once more, plus the gradient.
        return x - step_size(i) * (mass * velocity + g), velocity
    return init, update, lambda state: state[0]


@optimizer
def adagrad(step_size, momentum=0.9):
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        g_sq_inv_sqrt = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m
    return init, update, lambda state: state[0]


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad
    return init, update, lambda state: state[0]


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom
    return init, update, lambda state: state[0]


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m            # first moment
        v = (1 - b2) * jnp.square(g) + b2 * v  # second moment
        # Bias correction, with the decay rates in the moments' dtype (not float64).
        m_hat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v
    return init, update, lambda state: state[0]


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))   # exponentially weighted infinity norm
        rate = step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        return x - rate * m / (u + eps), m, u
    return init, update, lambda state: state[0]


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al. 2019): one accumulator per axis instead of one per entry."""
    step_size = make_schedule(step_size)

    def along_axis(ndim, v, axis):
        # v (one entry per index of ``axis``) shaped to broadcast against the full array.
        shape = [1] * ndim
        shape[axis] = v.shape[0]
        return v.reshape(shape)

    def init(x0):
        shape = x0.shape
        x0 = jnp.atleast_1d(x0)
        return x0, jnp.zeros_like(x0), [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape], shape

    def update(i, g, state):
        x, m, vs, shape = state
        # x is at least 1-d (init made it so); a scalar parameter's gradient broadcasts.
        vs = [along_axis(x.ndim, v, axis) for axis, v in enumerate(vs)]
        accum = functools.reduce(jnp.minimum, vs) + jnp.square(g)
        accum_inv_sqrt = jnp.where(accum > 0, 1.0 / jnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [accum.max(tuple(a for a in range(x.ndim) if a != axis)) for axis in range(x.ndim)]
        return x, m, vs, shape

    def get_params(state):
        x, _, _, shape = state
        return x.reshape(shape)
    return init, update, get_params


# ---------------------------------------------------------------- step-size schedules

def constant(step_size):
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    if staircase:
        def schedule(i):
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    else:
        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        fraction_left = 1 - step_num / decay_steps
        return (step_size - final_step_size) * fraction_left ** power + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i):
        return values[jnp.sum(i > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule):
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# ---------------------------------------------------------------- utilities

def l2_norm(tree):
    """The l2 norm of all the leaves of ``tree`` taken together, as one vector."""
    leaves = tree_util.tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scale ``grad_tree`` down so its l2 norm is at most ``max_norm``."""
    norm = l2_norm(grad_tree)

    def normalize(g):
        return jnp.where(norm < max_norm, g, g * (max_norm / norm))
    return tree_util.tree_map(normalize, grad_tree)


class JoinPoint:
    """A leaf of the outer (parameter) tree holding that leaf's optimizer-state subtree."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):   # looks like a container, as the pytrees it stands for
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An OptimizerState as one pytree (parameter tree with JoinPoint leaves), for saving."""
    packed, tree, subtrees = opt_state
    joins = [JoinPoint(tree_util.tree_unflatten(s, leaves)) for s, leaves in zip(subtrees, packed)]
    return tree_util.tree_unflatten(tree, joins)


def pack_optimizer_state(marked_pytree):
    """The inverse of :func:`unpack_optimizer_state`."""
    joins, tree = tree_util.tree_flatten(marked_pytree)
    if not all(isinstance(j, JoinPoint) for j in joins):
        raise TypeError("pack_optimizer_state expects a pytree whose leaves are JoinPoints")
    flat = [tree_util.tree_flatten(j.subtree) for j in joins]
    return OptimizerState([leaves for leaves, _ in flat], tree, [s for _, s in flat])

"""A fixed optax training program, run as a script under real JAX or under numjax.

``python optax_program.py numjax`` installs tests/compat/jax_shim.py first, so the
unmodified optax resolves ``jax`` to numjax; ``python optax_program.py jax`` uses real
JAX (how tests/compat/optax_expected.json was generated).  Prints the per-step losses of
each optimizer as JSON on the last line of stdout.
"""
import json
import os
import sys

if __name__ == "__main__" and sys.argv[1:] == ["numjax"]:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import jax_shim
    jax_shim.install()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

STEPS = 6
_data = np.random.RandomState(0)
X = _data.randn(16, 3).astype(np.float32)
LABELS = (_data.randn(16) > 0).astype(np.int32)


def init_params():
    r = np.random.RandomState(1)
    return {"w1": jnp.asarray(r.randn(3, 8).astype(np.float32) * 0.5), "b1": jnp.zeros(8),
            "w2": jnp.asarray(r.randn(8, 2).astype(np.float32) * 0.5), "b2": jnp.zeros(2)}


def loss_fn(params):
    hidden = jnp.tanh(X @ params["w1"] + params["b1"])
    logits = hidden @ params["w2"] + params["b2"]
    data = optax.softmax_cross_entropy(logits, jax.nn.one_hot(LABELS, 2)).mean()
    return data + 1e-3 * sum(optax.l2_loss(p).sum() for p in jax.tree.leaves(params))


def train(opt):
    params = init_params()
    state = opt.init(params)

    @jax.jit
    def step(params, state):
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    losses = []
    for _ in range(STEPS):
        params, state, loss = step(params, state)
        losses.append(float(loss))
    return losses


OPTIMIZERS = {
    "adam": lambda: optax.adam(1e-2),
    "sgd_momentum": lambda: optax.sgd(0.1, momentum=0.9),
    "clip_adamw_warmup_cosine": lambda: optax.chain(
        optax.clip_by_global_norm(1.0),
        optax.adamw(optax.warmup_cosine_decay_schedule(0.0, 1e-2, 2, 10), weight_decay=1e-2)),
}


if __name__ == "__main__":
    print(json.dumps({name: train(make()) for name, make in OPTIMIZERS.items()}))

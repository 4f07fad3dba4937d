"""jax.checkpoint's policies against real JAX 0.10.2 in the same process: which residuals
print_saved_residuals lists under each policy (the programs of JAX's gradient-checkpointing
and autodiff_remat notebooks, and a few more), how many dots, sines and cosines the
differentiated program computes (what the backward pass recomputes), and the derivatives.

One known difference is not compared: an offloading policy saves on the host in JAX, and
its residual prints as ``f32<host>[..] output of device_put``; numjax has one memory space
and saves the value itself (``named 'b' from ...``).
"""
import contextlib
import io
import re

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402
from jax import ad_checkpoint as j_ad_checkpoint  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402
from numjax import ad_checkpoint as n_ad_checkpoint  # noqa: E402

jax.config.update("jax_platform_name", "cpu")

LIBS = {"numjax": (nj, njnp, n_ad_checkpoint), "jax": (jax, jjnp, j_ad_checkpoint)}

# Policies by a name each library resolves in its own ``checkpoint_policies``.
POLICIES = {
    "default": lambda P: None,
    "nothing_saveable": lambda P: P.nothing_saveable,
    "everything_saveable": lambda P: P.everything_saveable,
    "dots_saveable": lambda P: P.dots_saveable,
    "dots_with_no_batch_dims_saveable": lambda P: P.dots_with_no_batch_dims_saveable,
    "save_only_these_names(a)": lambda P: P.save_only_these_names("a"),
    "save_only_these_names(a, layer1_output)": lambda P: P.save_only_these_names("a", "layer1_output"),
    "save_any_names_but_these(b, layer1_output)": lambda P: P.save_any_names_but_these("b", "layer1_output"),
    "save_anything_except_these_names(a)": lambda P: P.save_anything_except_these_names("a"),
    "save_from_both_policies(dots, b)": lambda P: P.save_from_both_policies(P.dots_saveable,
                                                                            P.save_only_these_names("b")),
}


def _programs(lib, jnp, ad_checkpoint):
    """Functions (and arguments) to checkpoint, written once for either library."""
    name = ad_checkpoint.checkpoint_name

    def g(W, x):
        return jnp.sin(jnp.dot(W, x))

    def three_layers(W1, W2, W3, x):
        return g(W3, g(W2, g(W1, x)))

    def named_layers(W1, W2, W3, x):
        x = name(g(W1, x), name="a")
        x = name(g(W2, x), name="b")
        return name(g(W3, x), name="c")

    def loss(params, x, y):
        *Ws, Wlast = params
        for i, W in enumerate(Ws):
            x = name(g(W, x), name=f"layer{i}_output")
        return jnp.sum((jnp.dot(Wlast, x) - y) ** 2)

    def mixed(x, w, a):
        y = name(jnp.sin(x @ w), "a")
        z = jnp.tanh(jnp.einsum("bij,bjk->bik", a, a)).sum() * y
        return (jnp.cos(z) * x).sum()

    layers = (jnp.ones((5, 4)), jnp.ones((6, 5)), jnp.ones((7, 6)), jnp.ones(4))
    params = [jnp.ones((4, 4)) * 0.5] * 3
    mixed_args = (jnp.ones((3, 3)) * 0.5, jnp.arange(9.0).reshape(3, 3) / 9, jnp.ones((2, 3, 3)) * 0.1)
    return {"three_layers": (three_layers, layers), "named_layers": (named_layers, layers),
            "loss": (loss, (params, jnp.ones(4), jnp.ones(4) * 0.3)), "mixed": (mixed, mixed_args)}


def _run(engine, program, policy):
    lib, jnp, ad_checkpoint = LIBS[engine]
    fun, args = _programs(lib, jnp, ad_checkpoint)[program]
    return lib, fun, args, POLICIES[policy](lib.checkpoint_policies)


def _residuals(engine, program, policy):
    lib, fun, args, pol = _run(engine, program, policy)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        LIBS[engine][2].print_saved_residuals(lib.checkpoint(fun, policy=pol), *args)
    # Both libraries trace the same lines of _programs: the printed positions must agree too.
    return buf.getvalue()


@pytest.mark.parametrize("program", ["three_layers", "named_layers", "loss", "mixed"])
@pytest.mark.parametrize("policy", list(POLICIES))
def test_saved_residuals_match_jax(program, policy):
    got, expected = _residuals("numjax", program, policy), _residuals("jax", program, policy)
    assert "from the argument" in expected
    assert got == expected


def _scalar(program, fun):
    return (lambda *a: fun(*a).sum()) if program in ("three_layers", "named_layers") else fun


def _op_counts(engine, program, policy):
    lib, fun, args, pol = _run(engine, program, policy)
    argnums = tuple(range(len(args)))
    text = str(lib.make_jaxpr(lib.grad(_scalar(program, lib.checkpoint(fun, policy=pol)), argnums=argnums))(*args))
    return {op: len(re.findall(rf"= {op}\[| = {op} ", text)) for op in ("dot_general", "sin", "cos", "tanh")}


@pytest.mark.parametrize("program", ["three_layers", "named_layers", "mixed"])
@pytest.mark.parametrize("policy", ["default", "dots_saveable", "dots_with_no_batch_dims_saveable",
                                    "save_only_these_names(a)", "save_from_both_policies(dots, b)",
                                    "everything_saveable"])
def test_backward_pass_recomputes_what_jax_recomputes(program, policy):
    assert _op_counts("numjax", program, policy) == _op_counts("jax", program, policy)


@pytest.mark.parametrize("program", ["three_layers", "named_layers", "loss", "mixed"])
@pytest.mark.parametrize("policy", list(POLICIES))
def test_gradients_match_jax(program, policy):
    results = []
    for engine in ("numjax", "jax"):
        lib, fun, args, pol = _run(engine, program, policy)
        scalar = _scalar(program, lib.checkpoint(fun, policy=pol))
        argnums = tuple(range(len(args)))
        results.append((lib.grad(scalar, argnums=argnums)(*args), lib.jit(lib.grad(scalar, argnums=argnums))(*args)))
    (n_eager, n_jit), (j_eager, _) = results
    for n, j in zip(jax.tree_util.tree_leaves(n_eager), jax.tree_util.tree_leaves(j_eager)):
        np.testing.assert_allclose(np.asarray(n), np.asarray(j), rtol=2e-5, atol=1e-6)
    for n, j in zip(jax.tree_util.tree_leaves(n_jit), jax.tree_util.tree_leaves(j_eager)):
        np.testing.assert_allclose(np.asarray(n), np.asarray(j), rtol=2e-5, atol=1e-6)

"""jax.checkpoint_policies, jax.ad_checkpoint.checkpoint_name and print_saved_residuals."""
import re
import warnings

import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax.lax.linalg import dot_general_p
from numjax.ad_checkpoint import checkpoint_name, name_p, print_saved_residuals, saved_residuals

P = jax.checkpoint_policies


def _f(x, w):
    y = checkpoint_name(jnp.sin(x @ w), "a")
    return (jnp.cos(y) * x).sum()


X, W = jnp.ones((3, 3)) * 0.5, jnp.arange(9.0).reshape(3, 3) / 9


def test_policy_names_exist():
    for name in ["everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots",
                 "dots_with_no_batch_dims_saveable", "checkpoint_dots_with_no_batch_dims",
                 "save_any_names_but_these", "save_only_these_names", "save_anything_except_these_names",
                 "save_from_both_policies", "offload_dot_with_no_batch_dims",
                 "save_and_offload_only_these_names"]:
        assert callable(getattr(P, name))


def test_policies_as_predicates():
    dot = dot_general_p
    plain = dict(dimension_numbers=(((1,), (0,)), ((), ())))
    batched = dict(dimension_numbers=(((2,), (1,)), ((0,), (0,))))
    assert P.dots_saveable(dot, **plain) and P.checkpoint_dots(dot, **batched)
    assert P.dots_with_no_batch_dims_saveable(dot, **plain)
    assert not P.dots_with_no_batch_dims_saveable(dot, **batched)
    assert not P.dots_saveable(name_p, name="a")
    assert P.save_only_these_names("a")(name_p, name="a") and not P.save_only_these_names("a")(name_p, name="b")
    assert P.save_any_names_but_these("a")(name_p, name="b") and not P.save_any_names_but_these("a")(name_p, name="a")
    assert not P.save_any_names_but_these("a")(dot, **plain)
    both = P.save_from_both_policies(P.dots_saveable, P.save_only_these_names("a"))
    assert both(dot, **plain) and both(name_p, name="a") and not both(name_p, name="b")
    assert P.everything_saveable(dot) and not P.nothing_saveable(dot)


def test_checkpoint_name_is_identity_everywhere():
    x = jnp.arange(3.0)
    np.testing.assert_array_equal(checkpoint_name(x, "n"), x)
    assert str(jax.make_jaxpr(lambda v: checkpoint_name(v, "a"))(1.0)) == \
        "{ lambda ; a:f32[]. let b:f32[] = name[name=a] a in (b,) }"
    g = jax.grad(lambda v: (checkpoint_name(jnp.sin(v), "s") ** 2).sum())
    np.testing.assert_allclose(g(x), 2 * np.sin(np.arange(3.0)) * np.cos(np.arange(3.0)), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(g)(x), g(x), rtol=1e-6)
    np.testing.assert_array_equal(jax.vmap(lambda v: checkpoint_name(v * 2, "b"))(x), x * 2)
    np.testing.assert_array_equal(jax.jit(lambda v: checkpoint_name(v, "c") + 1)(x), x + 1)


@pytest.mark.parametrize("policy", [None, P.everything_saveable, P.nothing_saveable, P.dots_saveable,
                                    P.save_only_these_names("a")])
def test_checkpoint_gradients_do_not_depend_on_policy(policy):
    expected = jax.grad(_f, argnums=(0, 1))(X, W)
    got = jax.grad(jax.checkpoint(_f, policy=policy), argnums=(0, 1))(X, W)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-6)


def test_saved_residuals_plain_and_remat(capsys):
    plain = saved_residuals(_f, X, W)
    assert plain[:2] == [(X.aval, "from the argument x"), (W.aval, "from the argument w")]
    # Each computed residual names the user's line that traced it: "output of cos from f.py:14:24 (_f)".
    whats = [w.split(" from ") for _, w in plain[2:]]
    assert sorted(w for w, _ in whats) == ["output of cos", "output of cos", "output of sin"]
    assert all(where.startswith(__file__ + ":") and where.endswith(" (_f)") for _, where in whats)
    assert saved_residuals(jax.checkpoint(_f, policy=P.everything_saveable), X, W) == plain
    for policy in (None, P.nothing_saveable):
        print_saved_residuals(jax.checkpoint(_f, policy=policy), X, W)
    assert capsys.readouterr().out == ("f32[3,3] from the argument x\nf32[3,3] from the argument w\n") * 2


# ---------------------------------------------------------------- what each policy saves

def _g(W, x):
    return jnp.sin(jnp.dot(W, x))


def _three_layers(W1, W2, W3, x):
    return _g(W3, _g(W2, _g(W1, x)))


def _named_layers(W1, W2, W3, x):
    for W, name in ((W1, "a"), (W2, "b"), (W3, "c")):
        x = checkpoint_name(_g(W, x), name)
    return x


LAYERS = (jnp.ones((5, 4)), jnp.ones((6, 5)), jnp.ones((7, 6)), jnp.ones(4))
ARGS = ["f32[5,4] from the argument W1", "f32[6,5] from the argument W2", "f32[7,6] from the argument W3",
        "f32[4] from the argument x"]


def _saved(f, policy, *args):
    return [f"{aval.str_short(short_dtypes=True)} {what.split(' from ' + __file__)[0]}"
            for aval, what in saved_residuals(jax.checkpoint(f, policy=policy), *args)]


@pytest.mark.parametrize("policy, extra", [
    (None, []),
    (P.nothing_saveable, []),
    (P.dots_saveable, ["f32[5] output of dot_general", "f32[6] output of dot_general",
                       "f32[7] output of dot_general"]),
    (P.dots_with_no_batch_dims_saveable, ["f32[5] output of dot_general", "f32[6] output of dot_general",
                                          "f32[7] output of dot_general"]),
    (P.save_only_these_names("a"), []),       # no names in this function
])
def test_dot_policies_save_the_dots(policy, extra):
    assert _saved(_three_layers, policy, *LAYERS) == ARGS + extra


@pytest.mark.parametrize("policy, extra", [
    (P.save_only_these_names("a"), ["f32[5] named 'a'"]),
    (P.save_only_these_names("a", "b"), ["f32[5] named 'a'", "f32[6] named 'b'"]),
    # 'c' is the output: the backward pass does not read it.
    (P.save_any_names_but_these("b"), ["f32[5] named 'a'"]),
    (P.save_from_both_policies(P.dots_saveable, P.save_only_these_names("b")),
     ["f32[5] output of dot_general", "f32[6] output of dot_general", "f32[6] named 'b'",
      "f32[7] output of dot_general"]),
    (P.save_and_offload_only_these_names(names_which_can_be_saved=["a"], names_which_can_be_offloaded=["b"],
                                         offload_src="device", offload_dst="pinned_host"),
     ["f32[5] named 'a'", "f32[6] named 'b'"]),
])
def test_name_policies_save_the_names(policy, extra):
    assert _saved(_named_layers, policy, *LAYERS) == ARGS + extra


def test_saved_residuals_name_the_line_that_computed_them():
    (_, first_dot), = [r for r in saved_residuals(jax.checkpoint(_three_layers, policy=P.dots_saveable), *LAYERS)
                       if "dot_general" in r[1]][:1]
    assert first_dot.startswith(f"output of dot_general from {__file__}:") and first_dot.endswith(" (_g)")


def test_only_the_inputs_the_backward_pass_reads_are_saved():
    assert saved_residuals(jax.checkpoint(lambda x, y: x + y), 1.0, 2.0) == []
    assert len(saved_residuals(jax.checkpoint(lambda x, y: x * y), 1.0, 2.0)) == 2


def test_dots_with_batch_dims_are_recomputed():
    def bmm(a, b):
        return jnp.sin(jnp.einsum("bij,bjk->bik", a, b)).sum()
    a = jnp.ones((2, 3, 3))
    assert _saved(bmm, P.dots_saveable, a, a)[2:] == ["f32[2,3,3] output of dot_general"]
    assert _saved(bmm, P.dots_with_no_batch_dims_saveable, a, a)[2:] == []


def _op_counts(f, *args):
    text = str(jax.make_jaxpr(jax.grad(f, argnums=(0, 1)))(*args))
    return {op: len(re.findall(rf"= {op}\[| = {op} ", text)) for op in ("dot_general", "sin", "cos")}


def test_backward_pass_recomputes_only_what_was_not_saved():
    def f(x, w):
        return jnp.sin(jnp.sin(x @ w) @ w).sum()
    x, w = jnp.ones((3, 3)), jnp.ones((3, 3)) * 0.1
    # Without checkpoint: 2 dots, 2 sins, 2 cos forward; 4 dots transpose the two.
    plain = _op_counts(f, x, w)
    assert plain == {"dot_general": 6, "sin": 2, "cos": 2}
    # Nothing saved: both dots and the inner sin are recomputed on the backward pass.
    assert _op_counts(jax.checkpoint(f), x, w) == {"dot_general": 8, "sin": 3, "cos": 2}
    # Dots saved: only the inner sin (the second dot's operand) is recomputed, from the first dot.
    assert _op_counts(jax.checkpoint(f, policy=P.dots_saveable), x, w) == {"dot_general": 6, "sin": 3, "cos": 2}
    assert _op_counts(jax.checkpoint(f, policy=P.everything_saveable), x, w) == plain


# ---------------------------------------------------------------- same derivatives under every policy

ALL_POLICIES = [None, P.nothing_saveable, P.everything_saveable, P.dots_saveable, P.checkpoint_dots,
                P.dots_with_no_batch_dims_saveable, P.checkpoint_dots_with_no_batch_dims,
                P.save_only_these_names("a"), P.save_any_names_but_these("a"),
                P.save_anything_except_these_names("a"),
                P.save_from_both_policies(P.dots_saveable, P.save_only_these_names("a")),
                P.offload_dot_with_no_batch_dims("device", "pinned_host"),
                P.save_and_offload_only_these_names(names_which_can_be_saved=[], names_which_can_be_offloaded=["a"],
                                                    offload_src="device", offload_dst="pinned_host")]


def _deep(x, w):
    y = checkpoint_name(jnp.sin(x @ w), "a")
    z = jnp.tanh(y @ w.T)
    return (jnp.cos(z) * x).sum() + jnp.einsum("ij,ij->i", y, z).sum()


@pytest.mark.parametrize("policy", ALL_POLICIES)
def test_every_policy_differentiates_as_without_checkpoint(policy):
    ck = jax.checkpoint(_deep, policy=policy)
    close = dict(rtol=2e-5, atol=1e-6)
    for e, g in zip(jax.grad(_deep, argnums=(0, 1))(X, W), jax.grad(ck, argnums=(0, 1))(X, W)):
        np.testing.assert_allclose(g, e, **close)
    for e, g in zip(jax.grad(_deep, argnums=(0, 1))(X, W), jax.jit(jax.grad(ck, argnums=(0, 1)))(X, W)):
        np.testing.assert_allclose(g, e, **close)
    xs = jnp.stack([X, 2 * X])
    np.testing.assert_allclose(jax.vmap(jax.grad(ck), (0, None))(xs, W), jax.vmap(jax.grad(_deep), (0, None))(xs, W),
                               **close)
    t = jnp.ones((3, 3))
    expected = jax.jvp(lambda x: _deep(x, W), (X,), (t,))
    for got in (jax.jvp(lambda x: ck(x, W), (X,), (t,)),
                jax.jit(lambda x, t: jax.jvp(lambda x: ck(x, W), (x,), (t,)))(X, t)):
        np.testing.assert_allclose(got, expected, **close)
    _, f_jvp = jax.linearize(lambda x: ck(x, W), X)
    np.testing.assert_allclose(f_jvp(t), expected[1], **close)
    np.testing.assert_allclose(jax.hessian(lambda x: ck(x, W))(X), jax.hessian(lambda x: _deep(x, W))(X),
                               rtol=1e-4, atol=1e-5)


def test_jit_of_forward_mode_compiles_the_checkpoint():
    ck = jax.checkpoint(_deep, policy=P.dots_saveable)
    with warnings.catch_warnings():
        warnings.simplefilter("error")     # no eager fallback: lowering inlines remat_lin
        jax.jit(lambda x, t: jax.jvp(lambda x: ck(x, W), (x,), (t,)))(X, jnp.ones((3, 3)))


def test_checkpoint_of_a_closure_over_a_differentiated_value():
    def outer(x, w):
        return jax.checkpoint(lambda v: jnp.sin(v @ w).sum(), policy=P.dots_saveable)(x) * 2

    def plain(x, w):
        return jnp.sin(x @ w).sum() * 2
    for e, g in zip(jax.grad(plain, argnums=(0, 1))(X, W), jax.grad(outer, argnums=(0, 1))(X, W)):
        np.testing.assert_allclose(g, e, rtol=1e-6)


def test_checkpoint_with_scan_static_and_integer_arguments():
    def f(x, n, k):
        def body(c, _):
            return jnp.sin(c @ W), c.sum()
        c, ys = jax.lax.scan(body, x, None, length=n)
        return {"c": c.sum() * k, "ys": ys.sum()}

    def loss(fn):
        return lambda x: (lambda o: o["c"] + o["ys"])(fn(x, 3, 2))
    expected = jax.grad(loss(f))(X)
    for policy in (None, P.dots_saveable):
        got = jax.grad(loss(jax.checkpoint(f, policy=policy, static_argnums=(1,))))(X)
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_checkpointed_function_is_traced_once_per_signature():
    calls = []

    def f(x):
        calls.append(x)
        return jnp.sin(x)
    g = jax.grad(jax.checkpoint(f, policy=P.dots_saveable))
    g(1.0)
    g(2.0)
    g(jnp.float32(3.0))       # not weakly typed: another signature
    assert len(calls) == 2
    assert all(isinstance(c, jax.core.Tracer) for c in calls)   # traced, not run on values


def test_policies_jax_defines_loosely():
    # JAX 0.10.2's save_anything_except_these_names saves everything, the names given included.
    keep_all = P.save_anything_except_these_names("a")
    assert keep_all(name_p, name="a") and keep_all(dot_general_p, dimension_numbers=(((1,), (0,)), ((), ())))
    assert _saved(_named_layers, keep_all, *LAYERS) == _saved(_named_layers, P.everything_saveable, *LAYERS)
    with pytest.raises(ValueError, match="should not intersect"):
        P.save_and_offload_only_these_names(names_which_can_be_saved=["a"], names_which_can_be_offloaded=["a"],
                                            offload_src="device", offload_dst="pinned_host")

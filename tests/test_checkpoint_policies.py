"""jax.checkpoint_policies, jax.ad_checkpoint.checkpoint_name and print_saved_residuals."""
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

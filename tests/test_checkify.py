"""jax.experimental.checkify on numjax: checks with traced predicates, functionalized by
``checkify`` through jit, cond/switch, scan/fori_loop, while_loop, vmap and grad; the
automatic NaN / division / index checks; and the errors of misuse. Expected messages are
JAX 0.10.2's (tests/compat/test_checkify_vs_jax.py compares them with real JAX)."""
import numpy as np
import pytest

import numjax
import numjax.numpy as jnp
from numjax import lax
from numjax.experimental import checkify


def positive(x):
    checkify.check(x > 0, "x must be positive, got {}", x)
    return x * 2


def message(f, *args, errors=checkify.user_checks):
    err, _ = checkify.checkify(f, errors=errors)(*args)
    return err.get()


# ---------------------------------------------------------------- check outside checkify

def test_eager_check_raises_with_formatted_message():
    with pytest.raises(checkify.JaxRuntimeError, match=r"^x must be positive, got -1.0 \(`check` failed\)$"):
        positive(jnp.float32(-1.0))
    assert float(positive(jnp.float32(1.0))) == 2.0


def test_jit_without_checkify_refuses_at_lowering():
    for x in (1.0, -1.0):   # whatever the predicate's value: the check cannot be compiled
        with pytest.raises(ValueError, match="^Cannot abstractly evaluate a checkify.check which was not "
                                             "functionalized"):
            numjax.jit(positive)(jnp.float32(x))


def test_make_jaxpr_shows_the_check():
    text = str(numjax.make_jaxpr(positive)(1.0))
    assert "check[debug=False]" in text


def test_debug_check_is_dropped_outside_checkify():
    f = lambda x: (checkify.debug_check(x > 0, "d {}", x), x)[1]   # noqa: E731
    assert float(f(jnp.float32(-1.0))) == -1.0
    assert float(numjax.jit(f)(jnp.float32(-1.0))) == -1.0
    assert message(f, jnp.float32(-1.0)) == "d -1.0 (`check` failed)"


def test_bad_arguments():
    with pytest.raises(TypeError, match=r"^check takes a scalar pred as argument, got \[ True False\]$"):
        checkify.check(jnp.array([True, False]), "m")
    with pytest.raises(TypeError, match="^check takes a scalar pred as argument, got 1$"):
        checkify.check(1, "m")
    with pytest.raises(TypeError, match="Formatting arguments to checkify.check need to be PyTrees of arrays, "
                                        "but got 1.0 of type <class 'float'>"):
        checkify.check(False, "m {}", 1.0)
    with pytest.raises(TypeError, match="check_error takes an Error as argument"):
        checkify.check_error("not an error")


# ---------------------------------------------------------------- checkify, jit

def test_checkify_returns_error_and_output():
    err, out = checkify.checkify(positive)(jnp.float32(-1.0))
    assert err.get() == "x must be positive, got -1.0 (`check` failed)" and float(out) == -2.0
    assert str(err) == "Error(x must be positive, got -1.0 (`check` failed))"
    with pytest.raises(checkify.JaxRuntimeError, match="x must be positive"):
        err.throw()
    with pytest.raises(checkify.JaxRuntimeError, match="x must be positive"):
        checkify.check_error(err)
    err, out = checkify.checkify(positive)(jnp.float32(3.0))
    assert err.get() is None and float(out) == 6.0
    err.throw()


@pytest.mark.parametrize("wrap", ["jit_of_checkify", "checkify_of_jit", "jit_of_checkify_of_jit"])
def test_checkify_and_jit_compose(wrap):
    f = {"jit_of_checkify": numjax.jit(checkify.checkify(positive)),
         "checkify_of_jit": checkify.checkify(numjax.jit(positive)),
         "jit_of_checkify_of_jit": numjax.jit(checkify.checkify(numjax.jit(positive)))}[wrap]
    err, out = f(jnp.float32(-4.0))
    assert err.get() == "x must be positive, got -4.0 (`check` failed)" and float(out) == -8.0
    err, out = f(jnp.float32(4.0))
    assert err.get() is None and float(out) == 8.0


def test_error_is_a_pytree():
    err, _ = checkify.checkify(positive)(jnp.float32(-1.0))
    leaves = numjax.tree_util.tree_leaves(err)
    assert [np.asarray(x).dtype for x in leaves] == [np.bool_, np.int32, np.float32]
    assert bool(leaves[0]) and float(leaves[2]) == -1.0
    assert numjax.jit(lambda e: e)(err).get() == err.get()
    # check_error is functionalized again by an enclosing checkify, even through jit.
    assert message(numjax.jit(checkify.check_error), err) == err.get()
    with pytest.raises(ValueError, match="not functionalized"):
        numjax.jit(checkify.check_error)(err)


def test_first_check_site_wins_and_messages_format():
    two = lambda x: (checkify.check(x > 5, "first"), checkify.check(x > 0, "second {}", x))[1]  # noqa: E731
    assert message(two, jnp.float32(-1.0)) == "first (`check` failed)"
    assert message(two, jnp.float32(1.0)) == "first (`check` failed)"
    assert message(two, jnp.float32(6.0)) is None
    fmt = lambda x: checkify.check(x > 0, "m {:.3f} {} {k}", x, jnp.arange(3), k=jnp.int32(7))  # noqa: E731
    assert message(fmt, jnp.float32(-1.0)) == "m -1.000 [0 1 2] 7 (`check` failed)"
    assert message(lambda x: checkify.check(False, "always"), 1.0) == "always (`check` failed)"
    assert message(lambda x: checkify.check(True, "never"), 1.0) is None


def test_nested_checkify_keeps_the_inner_error_to_itself():
    inner = checkify.checkify(positive)
    assert message(lambda x: inner(x)[1], jnp.float32(-1.0)) is None
    assert message(lambda x: checkify.check_error(inner(x)[0]), jnp.float32(-1.0)) == \
        "x must be positive, got -1.0 (`check` failed)"


# ---------------------------------------------------------------- control flow

def test_cond_and_switch_branches():
    def f(x):
        return lax.cond(x > 0, lambda x: (checkify.check(x < 10, "big {}", x), x)[1],
                        lambda x: (checkify.check(x > -5, "too small {}", x), x)[1], x)
    assert message(f, jnp.float32(-6.0)) == "too small -6.0 (`check` failed)"
    assert message(f, jnp.float32(11.0)) == "big 11.0 (`check` failed)"
    assert message(f, jnp.float32(1.0)) is None
    assert numjax.jit(checkify.checkify(f))(jnp.float32(-6.0))[0].get() == "too small -6.0 (`check` failed)"

    def g(i, x):
        return lax.switch(i, [lambda x: x, lambda x: (checkify.check(x > 0, "b1"), x)[1],
                              lambda x: (checkify.check(x > 0, "b2 {}", x), x)[1]], x)
    assert message(g, jnp.int32(2), jnp.float32(-1.0)) == "b2 -1.0 (`check` failed)"
    assert message(g, jnp.int32(1), jnp.float32(-1.0)) == "b1 (`check` failed)"
    assert message(g, jnp.int32(0), jnp.float32(-1.0)) is None


def scan_two_checks(xs):
    def body(c, x):
        checkify.check(x < 3, "bad x {}", x)
        checkify.check(x < 2, "bad2 x {}", x)
        return c + x, x
    return lax.scan(body, 0.0, xs)


def test_scan_keeps_the_first_failure():
    # Both checks have the same payload type, so they share one slot: the first iteration
    # that fails (x=2, the second check) is kept.
    assert message(scan_two_checks, jnp.arange(6.0)) == "bad2 x 2.0 (`check` failed)"
    assert numjax.jit(checkify.checkify(scan_two_checks))(jnp.arange(6.0))[0].get() == \
        "bad2 x 2.0 (`check` failed)"
    err, (total, ys) = checkify.checkify(scan_two_checks)(jnp.arange(2.0))
    assert err.get() is None and float(total) == 1.0 and ys.tolist() == [0.0, 1.0]
    rev = lambda xs: lax.scan(lambda c, x: ((checkify.check(x < 3, "bad x {}", x), c)[1], None),  # noqa: E731
                              0.0, xs, reverse=True)
    assert message(rev, jnp.arange(6.0)) == "bad x 5.0 (`check` failed)"


def test_scan_slots_of_different_types_report_the_first_site():
    def body(c, x):
        checkify.check(x < 3, "bad x {}", x)
        checkify.check(x < 2, "bad2 x {} {}", x, x)
        return c, None
    assert message(lambda xs: lax.scan(body, 0.0, xs), jnp.arange(6.0)) == "bad x 3.0 (`check` failed)"


def test_while_and_fori_loops():
    def w(x):
        def body(c):
            checkify.check(c < 3, "bad c {}", c)
            return c + 1
        return lax.while_loop(lambda c: c < 10, body, x)
    err, out = checkify.checkify(w)(jnp.int32(0))
    assert err.get() == "bad c 3 (`check` failed)" and int(out) == 10

    def in_cond(x):
        def cond(c):
            checkify.check(c < 3, "cond c {}", c)
            return c < 10
        return lax.while_loop(cond, lambda c: c + 1, x)
    assert message(in_cond, jnp.int32(0)) == "cond c 3 (`check` failed)"
    assert message(in_cond, jnp.int32(7)) == "cond c 7 (`check` failed)"   # the first test, before the loop
    fori = lambda n: lax.fori_loop(0, n, lambda i, c: (checkify.check(i < 2, "i={i}", i=i), c + i)[1], 0)  # noqa: E731
    assert message(fori, jnp.int32(5)) == "i=2 (`check` failed)"
    assert message(fori, 5) == "i=2 (`check` failed)"
    assert message(fori, jnp.int32(2)) is None


# ---------------------------------------------------------------- vmap and grad

def test_vmap_of_checkify_reports_every_failing_element():
    err, out = numjax.vmap(checkify.checkify(positive))(jnp.array([1.0, -2.0, -3.0]))
    assert err.get() == ("at mapped index 1: x must be positive, got -2.0 (`check` failed)\n"
                         "at mapped index 2: x must be positive, got -3.0 (`check` failed)")
    assert out.tolist() == [2.0, -4.0, -6.0]
    err, _ = numjax.vmap(checkify.checkify(scan_two_checks))(jnp.arange(12.0).reshape(3, 4) - 4)
    assert err.get() == ("at mapped index 1: bad2 x 2.0 (`check` failed)\n"
                         "at mapped index 2: bad x 4.0 (`check` failed)")
    assert numjax.vmap(checkify.checkify(positive))(jnp.array([1.0, 2.0]))[0].get() is None


def test_checkify_of_vmap_reports_the_last_failing_element():
    # As JAX reduces a batched check: the last failing element (a stable argsort's last).
    assert message(numjax.vmap(positive), jnp.array([1.0, -2.0, -3.0, 4.0])) == \
        "x must be positive, got -3.0 (`check` failed)"
    with pytest.raises(checkify.JaxRuntimeError, match="got -3.0"):
        numjax.vmap(positive)(jnp.array([1.0, -2.0, -3.0]))


def test_grad_and_checks():
    assert float(numjax.grad(lambda x: checkify.checkify(positive)(x)[1])(-1.0)) == 2.0
    assert message(numjax.grad(positive), jnp.float32(-1.0)) == "x must be positive, got -1.0 (`check` failed)"
    with pytest.raises(checkify.JaxRuntimeError, match="got -1.0"):
        numjax.grad(positive)(jnp.float32(-1.0))
    assert float(numjax.grad(positive)(jnp.float32(1.0))) == 2.0


# ---------------------------------------------------------------- automatic checks

def test_nan_checks():
    assert message(jnp.log, jnp.float32(-1.0), errors=checkify.nan_checks) == "nan generated by primitive: log."
    assert message(jnp.sin, jnp.float32(np.inf), errors=checkify.float_checks) == "nan generated by primitive: sin."
    assert message(lambda x: x + 1, jnp.float32(np.nan), errors=checkify.nan_checks) == \
        "nan generated by primitive: add."
    assert message(numjax.grad(jnp.sqrt), jnp.float32(-1.0), errors=checkify.nan_checks) == \
        "nan generated by primitive: sqrt."
    assert message(jnp.log, jnp.float32(1.0), errors=checkify.nan_checks) is None
    assert message(jnp.log, jnp.float32(-1.0)) is None    # user_checks only, by default


def test_div_checks():
    assert message(lambda x, y: x // y, jnp.int32(1), jnp.int32(0), errors=checkify.div_checks) == "division by zero"
    assert message(lambda x, y: x / y, jnp.float32(0.0), jnp.float32(0.0), errors=checkify.float_checks) == \
        "division by zero"
    assert message(lambda x, y: x // y, jnp.int32(1), jnp.int32(2), errors=checkify.div_checks) is None


def test_index_checks():
    oob = "out-of-bounds indexing for array of shape {}: index {} is out of bounds for axis {} with size {}. "
    idx = checkify.index_checks
    assert message(lambda x, i: x[i], jnp.arange(3), jnp.int32(5), errors=idx) == oob.format((3,), 5, 0, 3)
    assert message(lambda x, i: x[i], jnp.arange(3), jnp.int32(-5), errors=idx) == oob.format((3,), -2, 0, 3)
    assert message(lambda x, i: x[i], jnp.ones((3, 4)), jnp.array([1, 7]), errors=idx) == \
        oob.format((3, 4), 7, 0, 3)
    assert message(lambda x, i: lax.dynamic_slice(x, (i,), (2,)), jnp.arange(3), jnp.int32(2), errors=idx) == \
        oob.format((3,), 2, 0, 3)
    assert message(lambda x, i: x.at[i].set(1.0), jnp.ones(3), jnp.int32(5), errors=idx) == oob.format((3,), 5, 0, 3)
    assert message(lambda x, i: x[i], jnp.arange(3), jnp.int32(2), errors=idx) is None


def test_user_check_site_traced_first_wins_over_automatic():
    f = lambda x: (jnp.log(x), checkify.check(x > 0, "m"))[0]   # noqa: E731
    assert message(f, jnp.float32(-1.0), errors=checkify.all_checks) == "m (`check` failed)"
    assert message(f, jnp.float32(-1.0), errors=checkify.nan_checks) == "nan generated by primitive: log."
